//! The op graph: which op consumed which op's output, with each op's device duration and the
//! critical path across ops, written as Graphviz DOT (`ttprof_ops.dot`) and rendered to SVG
//! (`ttprof_ops.svg`, pure Rust through the `layout-rs` crate: no Graphviz binary needed).
//!
//! Ops are the op log's ops ([`crate::oplog`]), joined by (device, run id) with their device
//! times from the firmware wrapper zones ([`crate::ops`]); an op's weight is its
//! `DEVICE KERNEL DURATION` (first KERNEL start to last KERNEL end over its cores, 0 when the
//! device recorded none). Edges come from tensor ids ([`crate::oplog::TensorDesc::id`], as
//! ttnn's `tensor_id`): an op whose input has the id of another op's output depends on it.
//! The **critical path** is the longest chain of dependent ops by summed device duration:
//! the ops that bound the run's time however many cores the others are given.
//!
//! Bad input never hangs or panics the build, and is never silently dropped:
//!
//! * two ops writing the same tensor id: the first (in host order) is its producer, and an
//!   issue names both ops;
//! * an op reading its own output: the self edge is dropped, and an issue names the op;
//! * a cycle (op A reads what B writes and B what A writes): Kahn's topological sort leaves
//!   its ops unordered; an issue names the ops of one cycle and how many ops are caught, and
//!   the critical path is taken over the ops outside any cycle;
//! * ops without tensor ids (op logs written before ids existed) have no edges: the DOT says
//!   how many, in a comment and in the legend.
//!
//! Building is linear in ops, tensors and edges (hash maps by tensor id, one topological
//! pass), so a run of 100k ops builds in well under a second. Laying out the SVG is not
//! linear: beyond [`MAX_SVG_OPS`] ops, or `MAX_SVG_CELLS` boxes and arrow bends to place,
//! the SVG draws the critical path only and says so (the DOT always holds every op).

mod dot;
mod sink;
mod svg;
#[cfg(test)]
mod tests;

pub use dot::to_dot;
pub(crate) use sink::GraphSink;
pub use svg::render_svg;

use crate::issue::Issue;
use crate::profile::Profile;
use std::collections::{HashMap, HashSet};

/// The file name of the op graph as DOT.
pub(crate) const DOT_FILE_NAME: &str = "ttprof_ops.dot";

/// The file name of the op graph rendered as SVG.
pub(crate) const SVG_FILE_NAME: &str = "ttprof_ops.svg";

/// Most ops the SVG lays out in full; beyond it the SVG draws the critical path only.
pub const MAX_SVG_OPS: usize = 300;

/// Most boxes the SVG's layout may place, counting one hidden point per rank an arrow
/// crosses (the layout routes a long arrow through every rank between its ends, so one op
/// read by every other costs ops squared); beyond it the SVG draws the critical path only.
pub(crate) const MAX_SVG_CELLS: usize = 1000;

/// Most ops (or tensors) one issue names; the rest are counted.
const MAX_NAMED: usize = 5;

/// One op as the graph sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpNode {
    /// Chip (device) index the op ran on.
    pub device: u32,
    /// The op's run id (its `GLOBAL CALL COUNT` in the op report).
    pub run_id: u32,
    /// The op's name (`OP CODE`).
    pub op_code: String,
    /// `DEVICE KERNEL DURATION` in ns; `None` when the device recorded no KERNEL zone for it.
    pub duration_ns: Option<f64>,
    /// Tensor ids of its inputs (`None`: the op log gave none), in argument order.
    pub inputs: Vec<Option<u64>>,
    /// Tensor ids of its outputs, in order.
    pub outputs: Vec<Option<u64>>,
}

impl OpNode {
    /// Whether none of its tensors carries an id (so it can have no edge).
    pub fn without_ids(&self) -> bool {
        self.inputs.iter().chain(&self.outputs).all(Option::is_none)
    }

    /// Its weight on the critical path: the device duration, 0 without one.
    pub(crate) fn weight_ns(&self) -> f64 {
        self.duration_ns
            .filter(|d| d.is_finite() && *d > 0.0)
            .unwrap_or(0.0)
    }

    /// `Matmul (op 3, device 0)`: how issues name it.
    pub fn name(&self) -> String {
        format!(
            "{} (op {}, device {})",
            self.op_code, self.run_id, self.device
        )
    }
}

/// A dependency: `to` read tensors that `from` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The producer (index into [`OpGraph::nodes`]).
    pub from: usize,
    /// The consumer.
    pub to: usize,
    /// The tensor ids passed, in the consumer's argument order.
    pub tensors: Vec<u64>,
}

/// The op graph of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpGraph {
    /// Every op, in host launch order.
    pub nodes: Vec<OpNode>,
    /// Producer-to-consumer edges, one per (producer, consumer) pair, by consumer then producer.
    pub edges: Vec<Edge>,
    /// The critical path: node indices from first to last op.
    pub critical: Vec<usize>,
    /// Summed device duration of the critical path, ns.
    pub critical_ns: f64,
    /// Ops whose tensors carry no id (they have no edges).
    pub without_ids: usize,
    /// Ops caught in a dependency cycle (left out of the critical path).
    pub(crate) in_cycles: usize,
    /// Per op, the most edges on a chain ending at it (0 for an op nothing feeds, and for
    /// ops in a cycle): its rank in a top-to-bottom drawing.
    pub depth: Vec<u32>,
    /// Duplicate producers, self edges and cycles, each naming its ops.
    pub issues: Vec<Issue>,
}

impl OpGraph {
    /// The graph of `profile`'s op log, each op with its device kernel duration; empty
    /// without an op log.
    pub(crate) fn of_profile(profile: &Profile) -> OpGraph {
        let Some(log) = &profile.oplog else {
            return OpGraph::default();
        };
        let mut ops: Vec<&crate::oplog::OpRecord> = log.ops().collect();
        ops.sort_by_key(|o| o.host_start_ns);
        let nodes = ops
            .into_iter()
            .map(|o| OpNode {
                device: o.device,
                run_id: o.run_id,
                op_code: o.op_code.clone(),
                duration_ns: profile
                    .device_ops
                    .by_run
                    .get(&(o.device, o.run_id))
                    .and_then(|d| d.kernel)
                    .map(|k| k.duration_ns()),
                inputs: o.inputs.iter().map(|t| t.id).collect(),
                outputs: o.outputs.iter().map(|t| t.id).collect(),
            })
            .collect();
        OpGraph::build(nodes)
    }

    /// Builds edges and the critical path over `nodes` (in host launch order).
    pub fn build(nodes: Vec<OpNode>) -> OpGraph {
        let mut issues = Vec::new();
        // Producer of every tensor id on each device: the first op (in host order) that
        // writes it there (a run on several chips writes each chip's own tensor).
        let mut producer: HashMap<(u32, u64), usize> = HashMap::new();
        let mut duplicates: HashMap<(u32, u64), Vec<usize>> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            for id in n.outputs.iter().flatten() {
                let key = (n.device, *id);
                match producer.get(&key) {
                    None => {
                        producer.insert(key, i);
                    }
                    Some(&p) if p != i => duplicates.entry(key).or_default().push(i),
                    Some(_) => {}
                }
            }
        }
        let mut dup: Vec<((u32, u64), Vec<usize>)> = duplicates.into_iter().collect();
        dup.sort_by_key(|(key, _)| *key);
        for (key, others) in dup.iter().take(MAX_NAMED) {
            let first = &nodes[producer[key]];
            let id = tensor_name(*key);
            let names: Vec<String> = others
                .iter()
                .take(MAX_NAMED)
                .map(|&o| nodes[o].name())
                .collect();
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "op graph: tensor {id} is written by {} and again by {}{}: a tensor id names one tensor; \
                         its consumers are linked to the first",
                        first.name(),
                        names.join(", "),
                        more(others.len(), MAX_NAMED)
                    ),
                )
                .with_count(others.len() as u64),
            );
        }
        if dup.len() > MAX_NAMED {
            let rest = &dup[MAX_NAMED..];
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "op graph: {} more tensor ids are written by more than one op (first: tensor {}); their \
                         consumers are linked to the first writer",
                        rest.len(),
                        tensor_name(rest[0].0)
                    ),
                )
                .with_count(rest.iter().map(|(_, o)| o.len() as u64).sum()),
            );
        }
        // Edges, one per (producer, consumer).
        let mut edges: Vec<Edge> = Vec::new();
        let mut self_reads: Vec<usize> = Vec::new();
        // This op's edges by producer (index into `edges`), so many inputs stay linear.
        let mut from: HashMap<usize, usize> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let start = edges.len();
            from.clear();
            for id in n.inputs.iter().flatten() {
                let Some(&p) = producer.get(&(n.device, *id)) else {
                    continue;
                };
                if p == i {
                    if self_reads.last() != Some(&i) {
                        self_reads.push(i);
                    }
                    continue;
                }
                match from.get(&p) {
                    Some(&e) => edges[e].tensors.push(*id),
                    None => {
                        from.insert(p, edges.len());
                        edges.push(Edge {
                            from: p,
                            to: i,
                            tensors: vec![*id],
                        });
                    }
                }
            }
            edges[start..].sort_by_key(|e| e.from);
        }
        if !self_reads.is_empty() {
            let names: Vec<String> = self_reads
                .iter()
                .take(MAX_NAMED)
                .map(|&i| nodes[i].name())
                .collect();
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "op graph: {} read{} {} own output (the same tensor id in and out); that edge is left out{}",
                        names.join(", "),
                        if self_reads.len() == 1 { "s" } else { "" },
                        if self_reads.len() == 1 { "its" } else { "their" },
                        more(self_reads.len(), MAX_NAMED)
                    ),
                )
                .with_count(self_reads.len() as u64),
            );
        }
        let without_ids = nodes.iter().filter(|n| n.without_ids()).count();
        let mut g = OpGraph {
            nodes,
            edges,
            critical: Vec::new(),
            critical_ns: 0.0,
            without_ids,
            in_cycles: 0,
            depth: Vec::new(),
            issues,
        };
        g.critical_path();
        g
    }

    /// Kahn's topological order, the longest path over it, and an issue for any cycle.
    fn critical_path(&mut self) {
        let n = self.nodes.len();
        let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut indegree = vec![0usize; n];
        for e in &self.edges {
            out[e.from].push(e.to);
            indegree[e.to] += 1;
        }
        let mut order: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut next = 0;
        while next < order.len() {
            let u = order[next];
            next += 1;
            for &v in &out[u] {
                indegree[v] -= 1;
                if indegree[v] == 0 {
                    order.push(v);
                }
            }
        }
        if order.len() < n {
            self.report_cycle(&indegree);
        }
        // Longest path ending at each op, over the ordered ops (cycle members excluded): before
        // an op is reached, `reach` holds its best predecessor's; then its own weight is added.
        let mut reach = vec![0.0f64; n];
        let mut pred = vec![usize::MAX; n];
        let mut depth = vec![0u32; n];
        for &u in &order {
            reach[u] += self.nodes[u].weight_ns();
            for &v in &out[u] {
                depth[v] = depth[v].max(depth[u] + 1);
                if pred[v] == usize::MAX || reach[u] > reach[v] {
                    reach[v] = reach[u];
                    pred[v] = u;
                }
            }
        }
        self.depth = depth;
        // The longest; on a tie, the one ending at the latest op (so an op without device
        // time at the end of a chain stays on it).
        let Some(&end) = order
            .iter()
            .max_by(|&&a, &&b| reach[a].total_cmp(&reach[b]).then(a.cmp(&b)))
        else {
            return;
        };
        let mut path = vec![end];
        let mut at = end;
        while pred[at] != usize::MAX {
            at = pred[at];
            path.push(at);
        }
        path.reverse();
        self.critical_ns = reach[end];
        self.critical = path;
    }

    /// Names the ops of one cycle among the ops Kahn's sort could not order.
    fn report_cycle(&mut self, indegree: &[usize]) {
        let stuck: Vec<usize> = (0..self.nodes.len()).filter(|&i| indegree[i] > 0).collect();
        self.in_cycles = stuck.len();
        // Every stuck op has a stuck predecessor: walk predecessors until one repeats.
        let mut preds: HashMap<usize, usize> = HashMap::new();
        for e in &self.edges {
            if indegree[e.from] > 0 && indegree[e.to] > 0 {
                preds.entry(e.to).or_insert(e.from);
            }
        }
        let mut seen: HashSet<usize> = HashSet::new();
        let mut walk = Vec::new();
        let mut at = stuck[0];
        while seen.insert(at) {
            walk.push(at);
            match preds.get(&at) {
                Some(&p) => at = p,
                None => break,
            }
        }
        // `walk` went against the edges: the cycle is its tail from `at`, reversed.
        let start = walk.iter().position(|&w| w == at).unwrap_or(0);
        let mut cycle: Vec<usize> = walk[start..].iter().rev().copied().collect();
        cycle.push(cycle[0]);
        let names: Vec<String> = cycle
            .iter()
            .take(9)
            .map(|&i| self.nodes[i].name())
            .collect();
        self.issues.push(
            Issue::error(
                None,
                format!(
                    "op graph: a dependency cycle through {}{}: tensor ids cannot make a cycle in a real run; \
                     {} op{} caught in cycles are left out of the critical path",
                    names.join(" -> "),
                    more(cycle.len(), 9),
                    stuck.len(),
                    if stuck.len() == 1 { "" } else { "s" }
                ),
            )
            .with_count(stuck.len() as u64),
        );
    }

    /// The critical path's ops as a set.
    pub(crate) fn critical_set(&self) -> HashSet<usize> {
        self.critical.iter().copied().collect()
    }

    /// What laying the whole graph out costs: its ops plus, per edge, the ranks it crosses
    /// ([`OpGraph::depth`]); compared with `MAX_SVG_CELLS`.
    pub fn layout_cells(&self) -> usize {
        let rank = |i: usize| self.depth.get(i).copied().unwrap_or(0) as usize;
        self.nodes.len()
            + self
                .edges
                .iter()
                .map(|e| rank(e.to).abs_diff(rank(e.from)).saturating_sub(1))
                .sum::<usize>()
    }

    /// The critical path's edges as (from, to) pairs.
    pub(crate) fn critical_edges(&self) -> HashSet<(usize, usize)> {
        self.critical.windows(2).map(|w| (w[0], w[1])).collect()
    }
}

/// A tensor id as the graph's messages name it: its id, and its device when not the first.
fn tensor_name((device, id): (u32, u64)) -> String {
    match device {
        0 => id.to_string(),
        d => format!("{id} (device {d})"),
    }
}

/// `" and 3 more"` when `total` exceeds the `shown`.
fn more(total: usize, shown: usize) -> String {
    if total > shown {
        format!(" and {} more", total - shown)
    } else {
        String::new()
    }
}
