//! The flow model: transfers share bandwidth, event-driven.
//!
//! A flow is the data of one request (a read's response, a write's payload) crossing a set
//! of resources (NIU ports, links, optionally a DRAM channel) at a rate. Rates are
//! recomputed whenever a flow starts or ends; between those events every flow progresses
//! linearly. Flows from one initiator to one target on one NoC queue behind each other
//! (one virtual channel, first in, first out); flows to different targets interleave.
//!
//! Each flow carries its *path* as the routers' arbiters see it (a read's starts with its
//! request's route). [`Arbitration::MaxMinFair`] shares every resource max-min fairly;
//! [`Arbitration::RoundRobin`] (the default) uses that as a first pass to find where each
//! flow is held (its *bottleneck*), then shares each bottleneck by weights: the product of
//! `1 / inputs` over the flow's merge points on the way to it, as round-robin arbiters
//! split a router's output. Only the flows that share a resource with one that started or
//! ended are re-rated, in a fixed order on one thread, so the result does not depend on
//! the host threads. See docs/design/noc-model.md, "Arbitration", for the reasoning.

use crate::config::Arbitration;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Opaque id of a flow (the order flows were submitted in).
pub(crate) type FlowId = u64;

/// No hop: the start of a path.
pub(crate) const ROOT: u32 = u32::MAX;

/// One resource on a flow's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hop {
    pub res: u32,
    /// Index in the path of the hop before this one ([`ROOT`]: the path starts here).
    pub prev: u32,
    /// The flow's data uses this resource's bandwidth (false: only a read's request header
    /// crosses it, which matters for arbitration, not bandwidth).
    pub carries: bool,
}

/// A flow to simulate.
#[derive(Debug)]
pub(crate) struct FlowSpec {
    /// Cycle the first byte may move.
    pub start: f64,
    /// Bytes on the wire (payload plus one header flit a packet).
    pub bytes: f64,
    /// The resources crossed, in order (each used resource at most once).
    pub path: Vec<Hop>,
    /// Highest rate the flow can reach on its own, bytes/cycle.
    pub cap: f64,
    /// Flows with the same key are served one after the other.
    pub queue: u64,
}

#[derive(Debug)]
struct Active {
    id: FlowId,
    remaining: f64,
    rate: f64,
    path: Vec<Hop>,
    /// The carrying hops: (resource, hop index).
    carry: Vec<(u32, u32)>,
    cap: f64,
    queue: u64,
}

/// A flow being placed in its bottleneck's arbitration tree.
#[derive(Clone, Copy, Debug)]
struct Branch {
    group: u32,
    key: u32,
    /// Hop of the flow reached so far.
    at: u32,
    flow: u32,
}

/// No bottleneck: a flow held by its own cap.
const CAP: u32 = u32::MAX;

/// Scratch space of [`Flows::allocate`], kept between calls (it runs at every flow start
/// and end). Per resource arrays are dense and left zeroed.
#[derive(Debug, Default)]
struct Scratch {
    /// Per resource: capacity left, users' weight not yet frozen, users listed.
    left: Vec<f64>,
    weight_sum: Vec<f64>,
    count: Vec<u32>,
    start: Vec<u32>,
    touched: Vec<u32>,
    /// Resources of the flows started or ended since the last allocation.
    changed: Vec<u32>,
    /// Per resource and per flow: reached by the search for the flows to re-rate.
    seen_res: Vec<bool>,
    seen_flow: Vec<bool>,
    /// The flows to re-rate (indices into `active`), in order, and the resources they use.
    group: Vec<u32>,
    group_res: Vec<u32>,
    /// Each flow's uses: `use_res[span[i].0..span[i].1]` (empty if not listed).
    span: Vec<(u32, u32)>,
    use_res: Vec<u32>,
    use_flow: Vec<u32>,
    /// Per resource, the flows using it: `by_res[start[r]..start[r] + count[r]]`.
    by_res: Vec<u32>,
    /// Per flow: weight, frozen, bottleneck.
    weight: Vec<f64>,
    frozen: Vec<bool>,
    settled: Vec<bool>,
    bottleneck: Vec<u32>,
    /// (bottleneck, flow) pairs, and the tree walk's branches.
    by_bottleneck: Vec<(u32, u32)>,
    branches: Vec<Branch>,
    kept: Vec<Branch>,
}

/// The flows of one chip.
#[derive(Debug)]
pub(crate) struct Flows {
    capacity: Vec<f64>,
    arbitration: Arbitration,
    /// Simulated up to this cycle.
    pub now: f64,
    /// Not started yet: by (start, id).
    waiting: BTreeMap<(u64, FlowId), FlowSpec>,
    /// Started but queued behind an earlier flow of the same key.
    queued: HashMap<u64, VecDeque<(FlowId, FlowSpec)>>,
    active: Vec<Active>,
    /// The active flows using each resource's bandwidth (ids).
    holders: Vec<Vec<FlowId>>,
    scratch: Scratch,
}

const EPS: f64 = 1e-6;

impl Flows {
    pub fn new(capacity: Vec<f64>, arbitration: Arbitration) -> Flows {
        let n = capacity.len();
        Flows {
            capacity,
            arbitration,
            now: 0.0,
            waiting: BTreeMap::new(),
            queued: HashMap::new(),
            active: Vec::new(),
            holders: vec![Vec::new(); n],
            scratch: Scratch {
                left: vec![0.0; n],
                weight_sum: vec![0.0; n],
                count: vec![0; n],
                start: vec![0; n],
                seen_res: vec![false; n],
                ..Scratch::default()
            },
        }
    }

    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty()
            && self.active.is_empty()
            && self.queued.values().all(VecDeque::is_empty)
    }

    /// Adds a flow. Its start must not lie before `now` (it is moved up if it does).
    pub fn submit(&mut self, id: FlowId, mut spec: FlowSpec) {
        spec.start = spec.start.max(self.now);
        // Key by the start's bit pattern (non-negative floats order like their bits).
        self.waiting.insert((spec.start.to_bits(), id), spec);
    }

    /// Simulates up to cycle `until`; returns the flows that finished, with the cycle
    /// their last byte left the bottleneck, in completion order.
    pub fn advance(&mut self, until: f64, done: &mut Vec<(FlowId, f64)>) {
        loop {
            // Start every flow whose start has come.
            while let Some((&(bits, _), _)) = self.waiting.first_key_value() {
                if f64::from_bits(bits) > self.now + EPS {
                    break;
                }
                let ((_, id), spec) = self.waiting.pop_first().expect("non-empty");
                if self.active.iter().any(|a| a.queue == spec.queue) {
                    self.queued
                        .entry(spec.queue)
                        .or_default()
                        .push_back((id, spec));
                } else {
                    self.activate(id, spec, None);
                }
            }
            if !self.scratch.changed.is_empty() {
                self.allocate();
            }
            let next_start = self
                .waiting
                .first_key_value()
                .map_or(f64::INFINITY, |(&(b, _), _)| f64::from_bits(b));
            let next_end = self
                .active
                .iter()
                .map(|a| {
                    if a.rate > 0.0 {
                        self.now + a.remaining / a.rate
                    } else {
                        f64::INFINITY
                    }
                })
                .fold(f64::INFINITY, f64::min);
            let next = next_start.min(next_end);
            if next > until || next == f64::INFINITY {
                let to = until.max(self.now);
                if to.is_finite() {
                    self.progress(to);
                }
                return;
            }
            self.progress(next);
            // Finish flows (in id order for a stable output), then start queued successors.
            let mut finished: Vec<usize> = (0..self.active.len())
                .filter(|&i| self.active[i].remaining <= EPS * (1.0 + self.active[i].rate))
                .collect();
            if finished.is_empty() && next_end <= next_start {
                // Rounding left a sliver: finish the flow closest to done.
                if let Some(i) = (0..self.active.len()).min_by(|&a, &b| {
                    let ta = self.active[a].remaining / self.active[a].rate.max(EPS);
                    let tb = self.active[b].remaining / self.active[b].rate.max(EPS);
                    ta.total_cmp(&tb)
                }) {
                    finished.push(i);
                }
            }
            let mut removed: Vec<Active> = Vec::new();
            finished.sort_unstable_by(|a, b| b.cmp(a));
            for i in finished {
                removed.push(self.active.swap_remove(i));
            }
            self.active.sort_by_key(|a| a.id);
            removed.sort_by_key(|a| a.id);
            for a in removed {
                done.push((a.id, self.now));
                let k = a.queue;
                let next = self.queued.get_mut(&k).and_then(VecDeque::pop_front);
                if self.queued.get(&k).is_some_and(VecDeque::is_empty) {
                    self.queued.remove(&k);
                }
                match next {
                    // The same route and cap in place of the one that ended: every rate
                    // stays as it is (the common case of a stream of requests).
                    Some((id, spec)) if spec.path == a.path && spec.cap == a.cap => {
                        self.retire(&a, true);
                        self.activate(id, spec, Some(a.rate));
                    }
                    Some((id, spec)) => {
                        self.retire(&a, false);
                        self.activate(id, spec, None);
                    }
                    None => self.retire(&a, false),
                }
            }
        }
    }

    /// Makes a flow active. Its rate: `rate` if given (it replaces an identical flow);
    /// else, if it shares no resource with another flow, what its resources and cap allow
    /// (what [`Flows::allocate`] would give it); else the next allocation decides, for it
    /// and every flow it shares resources with.
    fn activate(&mut self, id: FlowId, spec: FlowSpec, rate: Option<f64>) {
        let mut shared = false;
        let mut alone = spec.cap;
        let mut carry = Vec::new();
        for (i, h) in spec.path.iter().enumerate().filter(|(_, h)| h.carries) {
            let holders = &mut self.holders[h.res as usize];
            holders.push(id);
            shared |= holders.len() > 1;
            alone = alone.min(self.capacity[h.res as usize].max(0.0));
            carry.push((h.res, i as u32));
        }
        let rate = match rate {
            Some(r) => r,
            None if !shared => alone.max(0.0),
            None => {
                self.scratch
                    .changed
                    .extend(spec.path.iter().filter(|h| h.carries).map(|h| h.res));
                0.0
            }
        };
        self.active.push(Active {
            id,
            remaining: spec.bytes.max(0.0),
            rate,
            path: spec.path,
            carry,
            cap: spec.cap,
            queue: spec.queue,
        });
        self.active.sort_by_key(|a| a.id);
    }

    /// Takes an ended flow off its resources; the flows that shared one with it are
    /// re-rated at the next allocation unless an identical flow takes its place.
    fn retire(&mut self, a: &Active, replaced: bool) {
        let mut shared = false;
        for &(r, _) in &a.carry {
            let holders = &mut self.holders[r as usize];
            if let Some(k) = holders.iter().position(|&h| h == a.id) {
                holders.swap_remove(k);
            }
            shared |= !holders.is_empty();
        }
        if shared && !replaced {
            self.scratch
                .changed
                .extend(a.path.iter().filter(|h| h.carries).map(|h| h.res));
        }
    }

    fn progress(&mut self, to: f64) {
        let dt = to - self.now;
        if dt > 0.0 {
            for a in &mut self.active {
                a.remaining = (a.remaining - a.rate * dt).max(0.0);
            }
        }
        self.now = to;
    }

    /// Rates (module docs) for the flows that share a resource, directly or through
    /// others, with a flow that started or ended since the last call; the others' rates
    /// cannot have changed.
    fn allocate(&mut self) {
        let n = self.active.len();
        let active = &mut self.active;
        let s = &mut self.scratch;
        // The flows to re-rate: those reachable from a changed resource through shared
        // resources.
        s.seen_flow.clear();
        s.seen_flow.resize(n, false);
        s.group.clear();
        s.group_res.clear();
        let mut k = 0;
        while k < s.changed.len() {
            let r = s.changed[k] as usize;
            k += 1;
            if s.seen_res[r] {
                continue;
            }
            s.seen_res[r] = true;
            s.group_res.push(r as u32);
            for &id in &self.holders[r] {
                let f = active
                    .binary_search_by_key(&id, |a| a.id)
                    .expect("a holder is active");
                if !s.seen_flow[f] {
                    s.seen_flow[f] = true;
                    s.group.push(f as u32);
                    for &(r2, _) in &active[f].carry {
                        if !s.seen_res[r2 as usize] {
                            s.changed.push(r2);
                        }
                    }
                }
            }
        }
        s.changed.clear();
        for &r in &s.group_res {
            s.seen_res[r as usize] = false;
        }
        let mut group = std::mem::take(&mut s.group);
        group.sort_unstable();
        list_uses(active, s, &group);
        s.weight.clear();
        s.weight.resize(n, 1.0);
        // Max-min fair shares, and where each flow is held.
        fill(active, s, &self.capacity, &group);
        if self.arbitration == Arbitration::RoundRobin {
            // The flows held at one resource share it as its round-robin arbiters would;
            // then fill again with those weights.
            if round_robin_weights(active, s, &group) {
                fill(active, s, &self.capacity, &group);
            }
        }
        unlist_uses(s);
        s.group = group;
    }
}

/// Lists the carrying uses of `flows` (indices into `active`): per resource in `by_res`
/// (the resources in `touched`), per flow as a span of `use_res`.
fn list_uses(active: &[Active], s: &mut Scratch, flows: &[u32]) {
    s.span.clear();
    s.span.resize(active.len(), (0, 0));
    s.use_res.clear();
    s.use_flow.clear();
    s.touched.clear();
    for &i in flows {
        let from = s.use_res.len() as u32;
        for &(res, _) in &active[i as usize].carry {
            if s.count[res as usize] == 0 {
                s.touched.push(res);
            }
            s.count[res as usize] += 1;
            s.use_res.push(res);
            s.use_flow.push(i);
        }
        s.span[i as usize] = (from, s.use_res.len() as u32);
    }
    let mut at = 0;
    for &r in &s.touched {
        s.start[r as usize] = at;
        at += s.count[r as usize];
        s.count[r as usize] = 0;
    }
    s.by_res.resize(s.use_res.len(), 0);
    for u in 0..s.use_res.len() {
        let r = s.use_res[u] as usize;
        s.by_res[(s.start[r] + s.count[r]) as usize] = s.use_flow[u];
        s.count[r] += 1;
    }
}

/// Leaves the per-resource scratch of [`list_uses`] zeroed.
fn unlist_uses(s: &mut Scratch) {
    for &r in &s.touched {
        s.count[r as usize] = 0;
    }
}

/// Weighted progressive filling of the listed `flows`: a level rises from 0, each unfrozen
/// flow's rate being its weight times the level, until a resource is full (its unfrozen
/// flows are frozen, held there) or a flow reaches its cap (held by it). Sets the rates and
/// `s.bottleneck`.
fn fill(active: &mut [Active], s: &mut Scratch, capacity: &[f64], flows: &[u32]) {
    let n = active.len();
    s.frozen.clear();
    s.frozen.resize(n, true);
    s.settled.clear();
    s.settled.resize(n, true);
    s.bottleneck.clear();
    s.bottleneck.resize(n, CAP);
    for &i in flows {
        s.frozen[i as usize] = false;
        s.settled[i as usize] = false;
    }
    for &r in &s.touched {
        let r = r as usize;
        s.left[r] = capacity[r];
        // Summed in a fixed order: the same on every run.
        let mut sum = 0.0;
        for j in s.start[r]..s.start[r] + s.count[r] {
            sum += s.weight[s.by_res[j as usize] as usize];
        }
        s.weight_sum[r] = sum;
    }
    let mut level = 0.0f64;
    let mut unfrozen = flows.len();
    while unfrozen > 0 {
        let mut delta = f64::INFINITY;
        for &r in &s.touched {
            let sum = s.weight_sum[r as usize];
            if sum > 0.0 {
                delta = delta.min(s.left[r as usize].max(0.0) / sum);
            }
        }
        for &i in flows {
            let i = i as usize;
            if !s.frozen[i] {
                delta = delta.min(active[i].cap / s.weight[i] - level);
            }
        }
        let delta = delta.max(0.0);
        level += delta;
        for &r in &s.touched {
            s.left[r as usize] -= delta * s.weight_sum[r as usize];
        }
        let mut progressed = false;
        for &i in flows {
            let i = i as usize;
            if s.frozen[i] {
                continue;
            }
            let (from, to) = s.span[i];
            let full = s.use_res[from as usize..to as usize]
                .iter()
                .find(|&&r| s.left[r as usize] <= EPS * capacity[r as usize].max(1.0))
                .copied();
            let capped = active[i].cap - s.weight[i] * level <= EPS;
            if full.is_some() || capped {
                s.frozen[i] = true;
                unfrozen -= 1;
                progressed = true;
                s.bottleneck[i] = if capped { CAP } else { full.unwrap_or(CAP) };
            }
        }
        if !progressed {
            // Numerically stuck: everyone keeps what they have.
            for &i in flows {
                s.frozen[i as usize] = true;
            }
            unfrozen = 0;
        }
        // The frozen flows' weight leaves their resources (after the scan above, so that
        // flows frozen together see the same state).
        for &i in flows {
            let i = i as usize;
            if s.frozen[i] && !s.settled[i] {
                s.settled[i] = true;
                active[i].rate = s.weight[i] * level;
                let (from, to) = s.span[i];
                for u in from..to {
                    s.weight_sum[s.use_res[u as usize] as usize] -= s.weight[i];
                }
            }
        }
    }
}

/// Round-robin weights: for each resource holding more than one flow, the weights of those
/// flows as its arbiters share it (the walk up their paths of the module docs); the other
/// flows weigh 1. Returns whether any weight is not 1.
fn round_robin_weights(active: &[Active], s: &mut Scratch, flows: &[u32]) -> bool {
    s.by_bottleneck.clear();
    for &i in flows {
        if s.bottleneck[i as usize] != CAP {
            s.by_bottleneck.push((s.bottleneck[i as usize], i));
        }
    }
    s.by_bottleneck.sort_unstable();
    let mut any = false;
    let mut g = 0;
    while g < s.by_bottleneck.len() {
        let r = s.by_bottleneck[g].0;
        let ge = g + s.by_bottleneck[g..].iter().take_while(|b| b.0 == r).count();
        if ge - g > 1 {
            any = true;
            s.branches.clear();
            for &(_, i) in &s.by_bottleneck[g..ge] {
                let a = &active[i as usize];
                let at = a.carry.iter().find(|c| c.0 == r).map_or(ROOT, |c| c.1);
                s.branches.push(Branch {
                    group: 0,
                    key: 0,
                    at,
                    flow: i,
                });
            }
            tree_weights(active, s);
        }
        g = ge;
    }
    any
}

/// The walk of [`round_robin_weights`] over `s.branches` (the flows held at one resource,
/// each at its hop there): one step up every path at a time; at each, the flows of one
/// group (same path so far) split their share equally among the distinct inputs they came
/// in by; flows on identical paths split equally.
fn tree_weights(active: &[Active], s: &mut Scratch) {
    for b in &s.branches {
        s.weight[b.flow as usize] = 1.0;
    }
    while !s.branches.is_empty() {
        for b in s.branches.iter_mut() {
            let path = &active[b.flow as usize].path;
            b.at = if b.at == ROOT {
                ROOT
            } else {
                path[b.at as usize].prev
            };
            b.key = if b.at == ROOT {
                ROOT
            } else {
                path[b.at as usize].res
            };
        }
        if !s.branches.is_sorted_by_key(|b| (b.group, b.key, b.flow)) {
            s.branches
                .sort_unstable_by_key(|b| (b.group, b.key, b.flow));
        }
        s.kept.clear();
        let mut next_group = 0u32;
        let branches = &s.branches;
        let mut g = 0;
        while g < branches.len() {
            let group = branches[g].group;
            let ge = g + branches[g..]
                .iter()
                .take_while(|b| b.group == group)
                .count();
            let mut inputs = 0;
            let mut k = g;
            while k < ge {
                inputs += 1;
                k += branches[k..ge]
                    .iter()
                    .take_while(|b| b.key == branches[k].key)
                    .count();
            }
            let mut k = g;
            while k < ge {
                let key = branches[k].key;
                let ke = k + branches[k..ge].iter().take_while(|b| b.key == key).count();
                let split = if key == ROOT { (ke - k) as f64 } else { 1.0 };
                for b in &branches[k..ke] {
                    s.weight[b.flow as usize] /= inputs as f64 * split;
                }
                if key != ROOT && ke - k > 1 {
                    for b in &branches[k..ke] {
                        s.kept.push(Branch {
                            group: next_group,
                            ..*b
                        });
                    }
                    next_group += 1;
                }
                k = ke;
            }
            g = ge;
        }
        std::mem::swap(&mut s.branches, &mut s.kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow over `resources` in that order, using the bandwidth of each.
    fn spec(start: f64, bytes: f64, resources: Vec<u32>, queue: u64) -> FlowSpec {
        let path = chain(&resources, &[]);
        FlowSpec {
            start,
            bytes,
            path,
            cap: 32.0,
            queue,
        }
    }

    /// A path through `before` (arbitration only) then `uses` (bandwidth too).
    fn chain(uses: &[u32], before: &[u32]) -> Vec<Hop> {
        let all = before
            .iter()
            .map(|&r| (r, false))
            .chain(uses.iter().map(|&r| (r, true)));
        all.enumerate()
            .map(|(i, (res, carries))| Hop {
                res,
                prev: if i == 0 { ROOT } else { i as u32 - 1 },
                carries,
            })
            .collect()
    }

    fn run(f: &mut Flows) -> Vec<(FlowId, f64)> {
        let mut done = Vec::new();
        f.advance(f64::INFINITY, &mut done);
        done
    }

    #[test]
    fn one_flow_runs_at_its_bottleneck() {
        let mut f = Flows::new(vec![32.0, 16.0], Arbitration::RoundRobin);
        f.submit(1, spec(10.0, 1600.0, vec![0, 1], 0));
        assert_eq!(run(&mut f), vec![(1, 110.0)]);
        assert!(f.is_idle());
    }

    #[test]
    fn flows_sharing_a_link_split_it_and_the_survivor_speeds_up() {
        let mut f = Flows::new(vec![32.0, 32.0, 32.0], Arbitration::RoundRobin);
        f.submit(1, spec(0.0, 3200.0, vec![0, 1], 1));
        f.submit(2, spec(0.0, 1600.0, vec![0, 2], 2));
        // Both at 16 B/cycle until flow 2 ends at 100; flow 1 has 1600 left at 32.
        assert_eq!(run(&mut f), vec![(2, 100.0), (1, 150.0)]);
    }

    #[test]
    fn max_min_gives_unused_share_to_others() {
        // Flow 1 is capped at 8 by resource 1; flow 2 gets the other 24 of resource 0.
        let mut f = Flows::new(vec![32.0, 8.0, 64.0], Arbitration::RoundRobin);
        f.submit(1, spec(0.0, 800.0, vec![0, 1], 1));
        f.submit(2, spec(0.0, 2400.0, vec![0, 2], 2));
        assert_eq!(run(&mut f), vec![(1, 100.0), (2, 100.0)]);
    }

    #[test]
    fn same_queue_is_first_in_first_out() {
        let mut f = Flows::new(vec![32.0], Arbitration::RoundRobin);
        f.submit(1, spec(0.0, 320.0, vec![0], 7));
        f.submit(2, spec(0.0, 320.0, vec![0], 7));
        assert_eq!(run(&mut f), vec![(1, 10.0), (2, 20.0)]);
    }

    /// Four readers at routers 1..4 of a row whose requests go east through routers 2..4
    /// to a target behind resource 0 (24 B/cycle); resources 1-4 are the readers' NIUs,
    /// 5-8 the links leaving routers 1-4, 9-12 the readers' ejection ports.
    fn parking_lot(arbitration: Arbitration) -> Vec<(FlowId, f64)> {
        let mut cap = vec![24.0];
        cap.extend([100.0; 12]);
        let mut f = Flows::new(cap, arbitration);
        for k in 0..4u32 {
            let before: Vec<u32> = std::iter::once(1 + k).chain(5 + k..9).collect();
            let path = chain(&[0, 9 + k], &before);
            f.submit(
                k as u64 + 1,
                FlowSpec {
                    start: 0.0,
                    bytes: 2400.0,
                    path,
                    cap: 100.0,
                    queue: k as u64,
                },
            );
        }
        run(&mut f)
    }

    #[test]
    fn round_robin_favours_the_flow_that_joins_nearest_the_bottleneck() {
        // Shares 1/8, 1/8, 1/4, 1/2 of 24: flow 4 ends at 200 (12 B/cycle); then flow 3
        // has 1200 left at 12 -> 300; flows 1 and 2 have 1200 left at 12 each -> 400.
        let done = parking_lot(Arbitration::RoundRobin);
        assert_eq!(done.len(), 4);
        let at = |id: FlowId| done.iter().find(|d| d.0 == id).unwrap().1;
        for (id, want) in [(4, 200.0), (3, 300.0), (2, 400.0), (1, 400.0)] {
            assert!(
                (at(id) - want).abs() < 1e-6,
                "flow {id} ended at {} (want {want}): {done:?}",
                at(id)
            );
        }
        // The shared resource never idles: 4 x 2400 bytes at 24 B/cycle.
        assert!((at(1) - 4.0 * 2400.0 / 24.0).abs() < 1e-6);
    }

    #[test]
    fn max_min_fair_ends_competing_flows_together() {
        let done = parking_lot(Arbitration::MaxMinFair);
        assert_eq!(done.len(), 4);
        assert!(done.iter().all(|d| (d.1 - 400.0).abs() < 1e-6), "{done:?}");
    }

    #[test]
    fn a_flow_limited_elsewhere_leaves_its_share_to_the_others() {
        // Two flows join one link (resource 0, 32) from different inputs (1 and 2): 16
        // each, unless one is held to 4 by resource 3; then the other gets 28.
        let mut f = Flows::new(vec![32.0, 100.0, 100.0, 4.0], Arbitration::RoundRobin);
        f.submit(
            1,
            FlowSpec {
                start: 0.0,
                bytes: 400.0,
                path: chain(&[1, 0, 3], &[]),
                cap: 100.0,
                queue: 1,
            },
        );
        f.submit(
            2,
            FlowSpec {
                start: 0.0,
                bytes: 2800.0,
                path: chain(&[2, 0], &[]),
                cap: 100.0,
                queue: 2,
            },
        );
        assert_eq!(run(&mut f), vec![(1, 100.0), (2, 100.0)]);
    }

    #[test]
    fn a_share_left_by_a_flow_held_back_elsewhere_goes_to_the_others() {
        // At resource 0 (30 B/cycle) g (input 4) has half, f and e (both by link 1) a
        // quarter each; g is held to 10 by resource 5, so f and e share the other 20.
        let mut cap = vec![30.0, 100.0, 100.0, 100.0, 100.0, 10.0];
        cap[5] = 10.0;
        let mut f = Flows::new(cap, Arbitration::RoundRobin);
        for (id, path) in [(1, vec![2, 1, 0]), (2, vec![3, 1, 0]), (3, vec![4, 0, 5])] {
            f.submit(
                id,
                FlowSpec {
                    start: 0.0,
                    bytes: 1000.0,
                    path: chain(&path, &[]),
                    cap: 100.0,
                    queue: id,
                },
            );
        }
        assert_eq!(run(&mut f), vec![(1, 100.0), (2, 100.0), (3, 100.0)]);
    }

    #[test]
    fn advancing_in_steps_gives_the_same_result() {
        let mk = || {
            let mut f = Flows::new(vec![32.0, 24.0, 50.0], Arbitration::RoundRobin);
            f.submit(1, spec(3.0, 5000.0, vec![0, 1], 1));
            f.submit(2, spec(17.0, 700.0, vec![0, 2], 2));
            f.submit(3, spec(40.0, 9000.0, vec![1, 2], 3));
            f
        };
        let whole = run(&mut mk());
        let mut f = mk();
        let mut done = Vec::new();
        let mut t = 0.0;
        while !f.is_idle() {
            t += 32.0;
            f.advance(t, &mut done);
        }
        assert_eq!(whole.len(), 3);
        for (a, b) in whole.iter().zip(&done) {
            assert_eq!(a.0, b.0);
            assert!((a.1 - b.1).abs() < 1e-6, "{a:?} {b:?}");
        }
    }
}
