//! What bounds each op: busy time and typed waits per RISC, the pipeline's circular buffers,
//! and a verdict with its evidence (`ttprof_analysis.json`, a section of the summary, the op
//! report's CB wait columns).
//!
//! Kernels mark their blocking calls as typed waits (`ttprof_rt::wait!("wait-in0",
//! cb_front(0))`, `sum_wait!`): a zone whose site metadata names the resource
//! ([`crate::sites::Wait`]). For every op and tile, [`Analyzer`] takes each RISC's time in
//! the op (its KERNEL wrapper zone) and splits it into waits per resource (outermost wait
//! zones only, so a wait inside a wait is not counted twice; a sum wait adds its total) and
//! busy time (the rest).
//!
//! # The verdict
//!
//! The tile's span is the hull of its RISCs' KERNEL zones. A RISC's **active** share is its
//! busy time plus its NoC and semaphore waits (work in flight that the RISC itself started),
//! over the tile's span; CB waits are stalls on another stage. The stage with the largest
//! active share bounds the tile: in a pipeline linked by CBs every other stage ends up
//! waiting on it, upstream ones for space (`cb_back`), downstream ones for data
//! (`cb_front`), and the evidence lists each other stage's largest wait (1% of the span or
//! more) to show it. When the bounding stage's NoC waits outweigh its busy time, the verdict
//! says it is NoC bound.
//! The op's verdict is the same rule over its tiles' summed times; tiles whose own verdict
//! names another stage are listed as disagreeing. A tile without any typed wait gets no
//! verdict (every RISC would look 100% busy).
//!
//! The pipeline's CBs are read off the waits: the RISC that waits on `cb_back(N)` produces
//! into CB N, the one that waits on `cb_front(N)` consumes it.

mod sink;
pub use sink::AnalysisSink;

use crate::profile::{Profile, RingView};
use crate::sites::Wait;
use crate::timeline::MarkKind;
use riscv_linker::{NocCoord, Risc};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The file name of the analysis.
pub const FILE_NAME: &str = "ttprof_analysis.json";

/// One RISC's time in one op on one tile.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RiscTime {
    /// `BRISC`, `NCRISC`, `TRISC_0`, ...
    pub risc: String,
    /// The stage it runs: the kernel's name (its ELF's file stem) or the RISC's role.
    pub stage: String,
    /// Its KERNEL wrapper zone(s), ns.
    pub kernel_ns: f64,
    /// Time in no typed wait, ns.
    pub busy_ns: f64,
    /// Time per resource waited on, ns (outermost waits only).
    pub waits: BTreeMap<String, f64>,
    /// The same per resource, typed (not serialised).
    #[serde(skip)]
    pub by_wait: BTreeMap<Wait, f64>,
}

impl RiscTime {
    fn wait_ns(&self, f: impl Fn(Wait) -> bool) -> f64 {
        self.by_wait.iter().filter(|(w, _)| f(**w)).map(|(_, ns)| ns).sum()
    }

    /// Busy plus NoC and semaphore waits.
    pub fn active_ns(&self) -> f64 {
        self.busy_ns + self.wait_ns(|w| !w.is_cb())
    }

    /// The largest wait: resource and ns.
    pub fn largest_wait(&self) -> Option<(Wait, f64)> {
        self.by_wait.iter().map(|(w, ns)| (*w, *ns)).max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// A circular buffer as the waits show it.
#[derive(Clone, Debug, Serialize)]
pub struct CbLink {
    pub cb: u32,
    /// Stage that waits for space in it (its producer), if one does.
    pub producer: Option<String>,
    /// Stage that waits for data in it (its consumer), if one does.
    pub consumer: Option<String>,
    /// The producer's wait for space, % of the span.
    pub producer_wait_pct: f64,
    /// The consumer's wait for data, % of the span.
    pub consumer_wait_pct: f64,
}

/// The verdict for one tile or one op.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The bounding stage's RISC.
    pub risc: String,
    /// The bounding stage.
    pub stage: String,
    /// Its active share of the span, %.
    pub active_pct: f64,
    /// Its busy share, %.
    pub busy_pct: f64,
    /// `compute` (busy) or the NoC/semaphore resource it mostly waits on.
    pub bound_by: String,
    /// The sentence: "math on TRISC_1: busy 91%; unpack waits on CB 2 front (data) 64%, ...".
    pub evidence: String,
}

/// One op on one tile.
#[derive(Clone, Debug, Serialize)]
pub struct TileAnalysis {
    /// NoC0 coordinate `x-y`.
    pub tile: String,
    /// First KERNEL start to last KERNEL end of the tile's RISCs, ns.
    pub span_ns: f64,
    pub riscs: Vec<RiscTime>,
    pub cbs: Vec<CbLink>,
    /// `None` when no RISC recorded a typed wait.
    pub verdict: Option<Verdict>,
}

/// One op (one launch).
#[derive(Clone, Debug, Serialize)]
pub struct OpAnalysis {
    pub op: String,
    pub chip: u32,
    pub run: u32,
    /// Summed over tiles.
    pub span_ns: f64,
    pub riscs: Vec<RiscTime>,
    pub verdict: Option<Verdict>,
    /// Tiles whose own verdict names another stage than the op's.
    pub disagreeing_tiles: Vec<String>,
    pub tiles: Vec<TileAnalysis>,
}

impl OpAnalysis {
    /// Mean over tiles of the ns the compute RISCs (TRISCs) waited at CB fronts, and at CB
    /// backs: the op report's `DEVICE COMPUTE CB WAIT FRONT` / `RESERVE BACK` columns.
    /// `None` when the op's kernels record no typed CB wait on a TRISC.
    pub fn compute_cb_waits_ns(&self) -> Option<(f64, f64)> {
        let trisc = |r: &RiscTime| r.risc.starts_with("TRISC");
        let typed = self.riscs.iter().filter(|r| trisc(r)).any(|r| r.by_wait.keys().any(|w| w.is_cb()));
        if !typed || self.tiles.is_empty() {
            return None;
        }
        let n = self.tiles.len() as f64;
        let sum = |f: fn(Wait) -> bool| self.riscs.iter().filter(|r| trisc(r)).map(|r| r.wait_ns(f)).sum::<f64>() / n;
        Some((sum(|w| matches!(w, Wait::CbFront(_))), sum(|w| matches!(w, Wait::CbBack(_)))))
    }
}

/// The analysis of a whole profile.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Analysis {
    pub ops: Vec<OpAnalysis>,
}

/// Gathers RISC times ring by ring (see the module docs).
#[derive(Default)]
pub struct Analyzer {
    /// (name, file, line) of every typed wait site.
    waits_by_site: HashMap<(String, String, u32), Wait>,
    /// Label index -> wait, per profile (filled as rings show their sites).
    label_wait: HashMap<u32, Option<Wait>>,
    /// (op index, chip, tile) -> RISC -> (time, kernel start/end ns).
    cells: BTreeMap<(u32, u32, NocCoord), BTreeMap<Risc, (RiscTime, f64, f64)>>,
}

/// The role of a RISC when its kernel's name is not known.
fn role(risc: Risc) -> &'static str {
    match risc {
        Risc::Trisc0 => "unpack",
        Risc::Trisc1 => "math",
        Risc::Trisc2 => "pack",
        Risc::Brisc => "data movement (BRISC)",
        _ => "data movement (NCRISC)",
    }
}

impl Analyzer {
    /// Adds one ring's zones and sums.
    pub fn add(&mut self, p: &Profile, v: &RingView) {
        if !v.placed || (v.zones.is_empty() && v.marks.is_empty()) {
            return;
        }
        self.learn_sites(p, v);
        let risc = v.lane.risc;
        let stage_of = |op: u32| -> String {
            let o = &p.ops[op as usize];
            p.oplog
                .as_ref()
                .and_then(|l| l.op(o.chip, o.run))
                .and_then(|r| r.kernel_for(v.lane.tile, risc))
                .and_then(|k| k.elf.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_else(|| role(risc).to_string())
        };
        // Outermost waits: the end of the wait that encloses the current zone, per op.
        let mut wait_end: HashMap<u32, f64> = HashMap::new();
        for z in &v.zones {
            let Some(op) = z.op else { continue };
            let cell = self.cells.entry((op, v.lane.chip, v.lane.tile)).or_default();
            let (t, lo, hi) = cell.entry(risc).or_insert_with(|| {
                (
                    RiscTime { risc: risc.name().to_string(), stage: stage_of(op), ..Default::default() },
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                )
            });
            let dur = (z.end_ns - z.start_ns).max(0.0);
            if !dur.is_finite() {
                continue;
            }
            if p.labels[z.site as usize].name.ends_with("-KERNEL") {
                t.kernel_ns += dur;
                *lo = lo.min(z.start_ns);
                *hi = hi.max(z.end_ns);
                continue;
            }
            let Some(w) = self.label_wait.get(&z.site).copied().flatten() else { continue };
            let end = wait_end.entry(op).or_insert(f64::NEG_INFINITY);
            if z.start_ns < *end {
                continue; // inside a wait already counted
            }
            *end = z.end_ns;
            *t.by_wait.entry(w).or_default() += dur;
        }
        for m in &v.marks {
            let (Some(op), MarkKind::Sum { total_cycles, .. }) = (m.op, m.kind) else { continue };
            let Some(w) = self.label_wait.get(&m.site).copied().flatten() else { continue };
            let Some(cpn) = p.timebase.chips.get(v.lane.chip as usize).map(|c| c.cycles_per_ns).filter(|c| *c > 0.0)
            else {
                continue;
            };
            let cell = self.cells.entry((op, v.lane.chip, v.lane.tile)).or_default();
            let (t, ..) = cell.entry(risc).or_insert_with(|| {
                (
                    RiscTime { risc: risc.name().to_string(), stage: stage_of(op), ..Default::default() },
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                )
            });
            *t.by_wait.entry(w).or_default() += total_cycles as f64 / cpn;
        }
    }

    /// Which labels of this ring are typed waits.
    fn learn_sites(&mut self, p: &Profile, v: &RingView) {
        if self.waits_by_site.is_empty() && self.label_wait.is_empty() {
            self.label_wait.reserve(p.labels.len());
        }
        let r = &v.ring.records;
        let mut seen: std::collections::HashSet<(u32, u16)> = std::collections::HashSet::new();
        for i in 0..r.len() {
            if !crate::resolve::has_site(r.kind[i]) || !seen.insert((r.run[i], r.site[i])) {
                continue;
            }
            if let Some(m) = p.site(v.index, r.run[i], r.site[i]) {
                if let Some(w) = m.wait {
                    self.waits_by_site.insert((m.name.clone(), m.file.clone(), m.line), w);
                }
            }
        }
        for (i, l) in p.labels.iter().enumerate() {
            let w = self.waits_by_site.get(&(l.name.clone(), l.file.clone(), l.line)).copied();
            let e = self.label_wait.entry(i as u32).or_insert(None);
            if w.is_some() {
                *e = w;
            }
        }
    }

    /// The analysis: per op, per tile, verdicts.
    pub fn finish(self, p: &Profile) -> Analysis {
        let mut ops: BTreeMap<u32, OpAnalysis> = BTreeMap::new();
        for ((op, chip, tile), riscs) in self.cells {
            let o = &p.ops[op as usize];
            let lo = riscs.values().map(|r| r.1).fold(f64::INFINITY, f64::min);
            let hi = riscs.values().map(|r| r.2).fold(f64::NEG_INFINITY, f64::max);
            let span = if hi > lo { hi - lo } else { 0.0 };
            let mut times: Vec<RiscTime> = riscs
                .into_values()
                .map(|(mut t, ..)| {
                    let waited: f64 = t.by_wait.values().sum();
                    t.busy_ns = (t.kernel_ns - waited).max(0.0);
                    t.waits = t.by_wait.iter().map(|(w, ns)| (w.to_string(), *ns)).collect();
                    t
                })
                .collect();
            times.sort_by_key(|t| pipeline_order(&t.risc));
            let verdict = verdict(&times, span);
            let cbs = cb_links(&times, span);
            let entry = ops.entry(op).or_insert_with(|| OpAnalysis {
                op: o.name.clone(),
                chip,
                run: o.run,
                span_ns: 0.0,
                riscs: Vec::new(),
                verdict: None,
                disagreeing_tiles: Vec::new(),
                tiles: Vec::new(),
            });
            entry.span_ns += span;
            for t in &times {
                match entry.riscs.iter_mut().find(|r| r.risc == t.risc) {
                    Some(r) => {
                        r.kernel_ns += t.kernel_ns;
                        r.busy_ns += t.busy_ns;
                        for (w, ns) in &t.by_wait {
                            *r.by_wait.entry(*w).or_default() += ns;
                        }
                    }
                    None => entry.riscs.push(t.clone()),
                }
            }
            entry.tiles.push(TileAnalysis {
                tile: format!("{}-{}", tile.x, tile.y),
                span_ns: span,
                riscs: times,
                cbs,
                verdict,
            });
        }
        let mut out = Vec::new();
        for (_, mut a) in ops {
            a.riscs.sort_by_key(|t| pipeline_order(&t.risc));
            for r in &mut a.riscs {
                r.waits = r.by_wait.iter().map(|(w, ns)| (w.to_string(), *ns)).collect();
            }
            a.verdict = verdict(&a.riscs, a.span_ns);
            if let Some(v) = &a.verdict {
                a.disagreeing_tiles = a
                    .tiles
                    .iter()
                    .filter(|t| t.verdict.as_ref().is_some_and(|tv| tv.risc != v.risc))
                    .map(|t| t.tile.clone())
                    .collect();
            }
            out.push(a);
        }
        Analysis { ops: out }
    }
}

/// reader, unpack, math, pack, writer: the order data flows through a Tensix tile.
fn pipeline_order(risc: &str) -> u8 {
    match risc {
        "BRISC" => 0,
        "TRISC_0" => 1,
        "TRISC_1" => 2,
        "TRISC_2" => 3,
        "NCRISC" => 4,
        _ => 5,
    }
}

fn pct(ns: f64, span: f64) -> f64 {
    if span > 0.0 {
        100.0 * ns / span
    } else {
        0.0
    }
}

/// The bounding stage of `times` over `span` (see the module docs).
fn verdict(times: &[RiscTime], span: f64) -> Option<Verdict> {
    if span <= 0.0 || times.iter().all(|t| t.by_wait.is_empty()) {
        return None;
    }
    let bound = times.iter().max_by(|a, b| a.active_ns().total_cmp(&b.active_ns()))?;
    let external = bound.by_wait.iter().filter(|(w, _)| !w.is_cb()).max_by(|a, b| a.1.total_cmp(b.1));
    let bound_by = match external {
        Some((w, ns)) if *ns > bound.busy_ns => w.to_string(),
        _ => "compute".to_string(),
    };
    let mut evidence = format!("{} on {}: busy {:.0}%", bound.stage, bound.risc, pct(bound.busy_ns, span));
    if bound_by != "compute" {
        evidence.push_str(&format!(", waiting on {bound_by} {:.0}%", pct(bound.active_ns() - bound.busy_ns, span)));
    }
    let others: Vec<String> = times
        .iter()
        .filter(|t| t.risc != bound.risc)
        .filter_map(|t| {
            let (w, ns) = t.largest_wait().filter(|(_, ns)| pct(*ns, span) >= 1.0)?;
            Some(format!("{} waits on {w} {:.0}%", t.stage, pct(ns, span)))
        })
        .collect();
    if !others.is_empty() {
        evidence.push_str("; ");
        evidence.push_str(&others.join(", "));
    }
    Some(Verdict {
        risc: bound.risc.clone(),
        stage: bound.stage.clone(),
        active_pct: pct(bound.active_ns(), span),
        busy_pct: pct(bound.busy_ns, span),
        bound_by,
        evidence,
    })
}

/// The CBs the waits name, with who produces and consumes each.
fn cb_links(times: &[RiscTime], span: f64) -> Vec<CbLink> {
    let mut cbs: BTreeMap<u32, CbLink> = BTreeMap::new();
    for t in times {
        for (w, ns) in &t.by_wait {
            let (cb, producer) = match *w {
                Wait::CbBack(i) => (i, true),
                Wait::CbFront(i) => (i, false),
                _ => continue,
            };
            let l = cbs.entry(cb).or_insert(CbLink {
                cb,
                producer: None,
                consumer: None,
                producer_wait_pct: 0.0,
                consumer_wait_pct: 0.0,
            });
            if producer {
                l.producer = Some(t.stage.clone());
                l.producer_wait_pct += pct(*ns, span);
            } else {
                l.consumer = Some(t.stage.clone());
                l.consumer_wait_pct += pct(*ns, span);
            }
        }
    }
    cbs.into_values().collect()
}

/// The verdicts as text, for the summary: one line per op with a verdict, one per
/// disagreeing tile. Empty when no op has one.
pub fn render(a: &Analysis) -> String {
    let mut out = String::new();
    for op in &a.ops {
        let Some(v) = &op.verdict else { continue };
        if out.is_empty() {
            out.push_str("\nbottleneck per op (typed waits; ttprof_analysis.json has every tile and RISC):\n");
        }
        out.push_str(&format!("  {} (run {}): bound by {}: {}\n", op.op, op.run, v.bound_by_stage(), v.evidence));
        if !op.disagreeing_tiles.is_empty() {
            for t in op.tiles.iter().filter(|t| op.disagreeing_tiles.contains(&t.tile)) {
                if let Some(tv) = &t.verdict {
                    out.push_str(&format!("    tile {} disagrees: {}\n", t.tile, tv.evidence));
                }
            }
        }
    }
    out
}

/// Text for HTML (`&`, `<`, `>`, `"` escaped).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The HTML page's panel: one `<details>` per op with a verdict (the verdict, its evidence,
/// a table of each RISC's busy and wait shares, the disagreeing tiles). Empty when no op has
/// a verdict.
pub fn html_panel(a: &Analysis) -> String {
    let mut out = String::new();
    for op in a.ops.iter().filter(|o| o.verdict.is_some()) {
        let Some(v) = &op.verdict else { continue };
        out.push_str(&format!(
            "<details><summary><b>{} (run {})</b>: bound by {}</summary><p>{}</p>\n<table><tr><th>RISC</th><th>stage</th>\
             <th>busy</th><th>waits</th></tr>\n",
            esc(&op.op),
            op.run,
            esc(&v.bound_by_stage()),
            esc(&v.evidence)
        ));
        for r in &op.riscs {
            let waits: Vec<String> =
                r.waits.iter().map(|(w, ns)| format!("{} {:.0}%", esc(w), pct(*ns, op.span_ns))).collect();
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td></tr>\n",
                esc(&r.risc),
                esc(&r.stage),
                pct(r.busy_ns, op.span_ns),
                waits.join(", ")
            ));
        }
        out.push_str("</table>");
        if !op.disagreeing_tiles.is_empty() {
            out.push_str(&format!("<p>tiles that disagree: {}</p>", esc(&op.disagreeing_tiles.join(" "))));
        }
        out.push_str("</details>\n");
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"analysis\"><b>Bottleneck per op</b> (typed waits)\n{out}</section>\n")
}

impl Verdict {
    /// "math (TRISC_1)" or "NoC read barrier (reader on BRISC)".
    pub fn bound_by_stage(&self) -> String {
        if self.bound_by == "compute" {
            format!("{} ({})", self.stage, self.risc)
        } else {
            format!("{} ({} on {})", self.bound_by, self.stage, self.risc)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risc(name: &str, stage: &str, kernel: f64, waits: &[(Wait, f64)]) -> RiscTime {
        let by_wait: BTreeMap<Wait, f64> = waits.iter().copied().collect();
        let busy = kernel - by_wait.values().sum::<f64>();
        RiscTime {
            risc: name.into(),
            stage: stage.into(),
            kernel_ns: kernel,
            busy_ns: busy,
            by_wait,
            ..Default::default()
        }
    }

    #[test]
    fn the_busiest_stage_bounds_and_the_others_waits_are_the_evidence() {
        let times = vec![
            risc("BRISC", "reader", 1000.0, &[(Wait::CbBack(0), 700.0)]),
            risc("TRISC_0", "unpack", 1000.0, &[(Wait::CbBack(2), 640.0)]),
            risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(2), 90.0)]),
            risc("TRISC_2", "pack", 1000.0, &[(Wait::CbFront(3), 700.0)]),
        ];
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!((v.stage.as_str(), v.bound_by.as_str()), ("math", "compute"));
        assert_eq!(
            v.evidence,
            "math on TRISC_1: busy 91%; reader waits on CB 0 back (space) 70%, unpack waits on CB 2 back (space) 64%, \
             pack waits on CB 3 front (data) 70%"
        );
        let cbs = cb_links(&times, 1000.0);
        let cb2 = cbs.iter().find(|c| c.cb == 2).unwrap();
        assert_eq!((cb2.producer.as_deref(), cb2.consumer.as_deref()), (Some("unpack"), Some("math")));
        // No typed wait at all: no verdict.
        assert!(verdict(&[risc("BRISC", "x", 10.0, &[])], 10.0).is_none());
    }

    #[test]
    fn the_html_panel_escapes_and_is_empty_without_verdicts() {
        let times = vec![
            risc("BRISC", "read<er>", 1000.0, &[(Wait::CbBack(0), 700.0)]),
            risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(0), 100.0)]),
        ];
        let mut op = OpAnalysis {
            op: "A&B".into(),
            chip: 0,
            run: 1,
            span_ns: 1000.0,
            riscs: times.clone(),
            verdict: verdict(&times, 1000.0),
            disagreeing_tiles: vec!["1-2".into()],
            tiles: vec![],
        };
        for r in &mut op.riscs {
            r.waits = r.by_wait.iter().map(|(w, ns)| (w.to_string(), *ns)).collect();
        }
        let html = html_panel(&Analysis { ops: vec![op.clone()] });
        assert!(html.starts_with("<section id=\"analysis\">"), "{html}");
        assert!(html.contains("<b>A&amp;B (run 1)</b>: bound by math (TRISC_1)"), "{html}");
        assert!(html.contains("<tr><td>BRISC</td><td>read&lt;er&gt;</td><td>30%</td><td>CB 0 back (space) 70%</td></tr>"), "{html}");
        assert!(html.contains("tiles that disagree: 1-2"));
        op.verdict = None;
        assert_eq!(html_panel(&Analysis { ops: vec![op] }), "");
    }

    #[test]
    fn a_stage_mostly_in_noc_barriers_is_noc_bound() {
        let times = vec![
            risc("BRISC", "reader", 1000.0, &[(Wait::NocRead, 800.0)]),
            risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(2), 850.0)]),
        ];
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!((v.stage.as_str(), v.bound_by.as_str()), ("reader", "NoC read barrier"));
        assert!(v.evidence.starts_with("reader on BRISC: busy 20%, waiting on NoC read barrier 80%"), "{}", v.evidence);
    }
}
