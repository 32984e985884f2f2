//! What bounds each op: busy time and typed waits per RISC, the pipeline's circular buffers,
//! and a verdict with its evidence (`ttprof_analysis.json`, a section of the summary, the op
//! report's CB wait columns).
//!
//! Kernels mark their blocking calls as typed waits (`ttprof_rt::wait!("wait-in0",
//! cb_front(0))`, `sum_wait!`): a zone whose site metadata names the resource
//! ([`crate::sites::Wait`]). For every op and tile, `Analyzer` takes each RISC's time in
//! the op (its KERNEL wrapper zone) and splits it into waits per resource (outermost wait
//! zones only, so a wait inside a wait is not counted twice; a sum wait adds its total) and
//! busy time (the rest).
//!
//! # The verdict
//!
//! The tile's span is the hull of its RISCs' KERNEL zones. A RISC's **active** share is its
//! busy time plus its NoC, sync and semaphore waits (work in flight that the RISC itself
//! started), over the tile's span; CB waits are stalls on another stage, and so are a
//! TRISC's semaphore waits (the Tensix semaphores the compute kernels hand tiles over with:
//! another thread posts them). The stage with the largest
//! active share bounds the tile: in a pipeline linked by CBs every other stage ends up
//! waiting on it, upstream ones for space (`cb_back`), downstream ones for data
//! (`cb_front`), and the evidence lists each other stage's largest wait (1% of the span or
//! more) to show it. When the bounding stage's NoC waits outweigh its busy time, the verdict
//! says it is NoC bound.
//! The op's verdict is the same rule over its tiles' summed times; tiles whose own verdict
//! names another stage are listed as disagreeing. A tile without any typed wait gets no
//! verdict (every RISC would look 100% busy).
//!
//! The profiler's own records inside a KERNEL zone cost their known cycles per kind (module
//! `records`): [`RiscTime::profiler_records_ns`], out of busy time and the waits they fall in.
//!
//! On the emulator, the op log's `held` lines say when the tile held a RISC (module `held`):
//! held on another stage's work is a wait ([`RiscTime::held`]), held while its own Tensix
//! unit worked stays busy and is named ([`RiscTime::coprocessor_busy`]).
//!
//! The pipeline's CBs are read off the waits: the RISC that waits on `cb_back(N)` produces
//! into CB N, the one that waits on `cb_front(N)` consumes it.
//!
//! # The profiler's own cost
//!
//! Time a core spent waiting for the host to drain its full ring (`PROFILER-STALL` zones,
//! Block policy) is neither busy nor a wait on the pipeline: it is its own category,
//! [`RiscTime::profiler_stall_ns`] (only the part inside the KERNEL zone; a stall inside a
//! typed wait is taken out of that wait). It holds the stage up like work does, so stages are
//! ranked by active time plus stalls; when the bounding stage's stalls outweigh both its busy
//! time and its NoC/semaphore waits, the verdict is `profiler`. Records the profiler dropped
//! (a full ring under the Drop policy, or Block without a consumer: `--drain-every-cycles 0`) make a
//! RISC's times incomplete ([`RiscTime::records_lost`], [`RiscTime::missing_kernel_zone`]);
//! any RISC that lost records makes the verdict `profiler` too, whatever the other numbers
//! say. Either way the evidence says what to do: drain more often, or record fewer zones. A
//! RISC without a KERNEL zone that lost no record (its kernel did not finish: a fault) is
//! left out of the ranking and named in the evidence as incomplete. Drops that the
//! ring reports only in its counter (after its last record) are charged to the ring's last
//! run.
//!
//! # `bound_by`
//!
//! What bounds the tile or op, one of [`BOUND_BY`]:
//!
//! | value | when |
//! | --- | --- |
//! | `compute` | the bounding stage is a compute RISC (TRISC) and mostly busy |
//! | `data movement` | the bounding stage is a data-movement RISC (BRISC, NCRISC) and mostly busy |
//! | `noc` | the bounding stage mostly waits on NoC transactions it issued (barriers); [`Verdict::resource`] names which |
//! | `semaphore` | the bounding stage mostly waits on a semaphore (tt-metal's or a Tensix one); [`Verdict::resource`] names it |
//! | `coprocessor` | the bounding stage (a TRISC) mostly waits on TTSync: its Tensix thread finishing |
//! | `profiler` | the profiler's stalls dominate the bounding stage, or it lost records |

mod counters;
mod gather;
mod held;
#[cfg(test)]
mod in_pieces;
mod path;
mod records;
mod render;
mod roofline;
mod shared;
mod sink;
mod stopped;
mod verdict;
mod write;
pub(crate) use counters::of_record as op_counters;
pub(crate) use counters::{line as counters_line, zones_line as counted_zones_line};
pub use counters::{CountedZone, OpCounter};
use gather::{stage_name, Analyzer, LabelKind};
pub use path::{
    arrows, paragraph, Arrow, CoreRef, CriticalPath, PathSegment, SignalRef, UnmatchedSignal,
    UnmatchedWait,
};
pub(crate) use path::{shares, wrap};
pub(crate) use render::html_panel;
pub use render::render;
pub(crate) use roofline::line as roofline_line;
pub use roofline::{Rate, Roofline};
pub(crate) use shared::Shared;
pub(crate) use sink::AnalysisSink;
pub use stopped::{OpenWait, Stopped, StoppedCore};
use verdict::{cb_links, pct, pipeline_order, verdict, waits_by_name};
pub use write::KEPT_TILES;

use crate::profile::{Profile, RingView};
use crate::sites::{Signal, Wait};
use crate::timeline::MarkKind;
use riscv_linker::{NocCoord, Risc};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The file name of the analysis.
pub const FILE_NAME: &str = "ttprof_analysis.json";

/// Every value [`Verdict::bound_by`] takes (see the module docs).
pub const BOUND_BY: [&str; 6] = [
    "compute",
    "data movement",
    "noc",
    "semaphore",
    "coprocessor",
    "profiler",
];

/// The name of the zone the runtime records around each wait for the consumer.
pub(crate) const PROFILER_STALL: &str = "PROFILER-STALL";

/// What the evidence advises when the profiler dominates a core or lost records.
pub(crate) const PROFILER_ADVICE: &str = "drain the rings more often while the kernels run (`ttprof run --drain-every-cycles N` \
     with fewer cycles; 0 reads only at the end) or record fewer zones (a `sum_zone!` for a zone inside a loop)";

/// One RISC's time in one op on one tile.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RiscTime {
    /// `BRISC`, `NCRISC`, `TRISC_0`, ... ([`Risc::name`]).
    pub risc: &'static str,
    /// The stage it runs: the kernel's name (its ELF's file stem) or the RISC's role.
    pub stage: String,
    /// Its KERNEL wrapper zone(s), ns.
    pub kernel_ns: f64,
    /// Time in no typed wait and no profiler stall, ns.
    pub busy_ns: f64,
    /// Time per resource waited on, ns (outermost waits only).
    pub waits: BTreeMap<String, f64>,
    /// Time stalled on the profiler's full ring inside the KERNEL zone (`PROFILER-STALL`
    /// zones: the core waited for the host to drain), ns. Neither busy nor a wait.
    pub profiler_stall_ns: f64,
    /// Records the profiler dropped on this RISC's full ring in this op: its times are
    /// incomplete.
    pub records_lost: u64,
    /// No KERNEL zone was recorded (its record dropped, or the kernel never finished): its
    /// times are incomplete.
    pub missing_kernel_zone: bool,
    /// The same per resource, typed (not serialised).
    #[serde(skip)]
    pub(crate) by_wait: BTreeMap<Wait, f64>,
    /// Time the emulator held this RISC on another stage's work outside its typed waits
    /// (its Tensix thread waiting for SrcA data, a bank, a semaphore), ns by what: waits,
    /// not busy (module `held`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub held: BTreeMap<String, f64>,
    /// Time the emulator held this RISC while its own coprocessor work ran (its Tensix
    /// thread issuing, its unit busy), ns by unit: part of `busy_ns`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub coprocessor_busy: BTreeMap<String, f64>,
    /// The profiler's own records inside the KERNEL zone (zones, events, signals, data, sum
    /// steps), at their known cost per kind (module `records`), ns: neither busy nor a wait.
    pub profiler_records_ns: f64,
    /// How many records that is.
    pub profiler_records: u64,
}

impl RiscTime {
    fn wait_ns(&self, f: impl Fn(Wait) -> bool) -> f64 {
        self.by_wait
            .iter()
            .filter(|(w, _)| f(**w))
            .map(|(_, ns)| ns)
            .sum()
    }

    /// Whether waiting on `w` is waiting on another stage of the pipeline (a handover), not
    /// on work this RISC started: CB waits, Tensix semaphore waits (the semaphores unpack,
    /// math and pack hand tiles over with, posted by another thread), and a TRISC's semaphore
    /// waits.
    pub(crate) fn is_handover(&self, w: Wait) -> bool {
        w.is_cb()
            || matches!(w, Wait::TensixSem(_))
            || (self.is_compute() && matches!(w, Wait::Semaphore(_)))
    }

    /// Busy plus the waits that are not handovers ([`Self::is_handover`]): NoC barriers,
    /// syncs (TTSync: the RISC's own coprocessor work), data-movement RISCs' semaphores.
    /// Held time ([`Self::held`]) is a handover: another stage's work.
    pub(crate) fn active_ns(&self) -> f64 {
        self.busy_ns + self.wait_ns(|w| !self.is_handover(w))
    }

    /// What holds the stage up itself: active time plus profiler stalls (the ranking of
    /// stages).
    pub fn held_ns(&self) -> f64 {
        self.active_ns() + self.profiler_stall_ns
    }

    /// Whether the profiler lost some of this RISC's records.
    pub fn incomplete(&self) -> bool {
        self.records_lost > 0 || self.missing_kernel_zone
    }

    /// Whether a compute RISC (a TRISC) runs it.
    pub(crate) fn is_compute(&self) -> bool {
        self.risc.starts_with("TRISC")
    }

    /// The largest wait: resource and ns.
    pub(crate) fn largest_wait(&self) -> Option<(Wait, f64)> {
        self.by_wait
            .iter()
            .map(|(w, ns)| (*w, *ns))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// A circular buffer as the waits show it.
#[derive(Clone, Debug, Serialize)]
pub struct CbLink {
    /// The CB index.
    pub cb: u32,
    /// Stage that waits for space in it (its producer), if one does.
    pub producer: Option<String>,
    /// Stage that waits for data in it (its consumer), if one does.
    pub consumer: Option<String>,
    /// The producer's wait for space, % of the span.
    pub(crate) producer_wait_pct: f64,
    /// The consumer's wait for data, % of the span.
    pub(crate) consumer_wait_pct: f64,
}

/// The verdict for one tile or one op.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The bounding stage's RISC.
    pub risc: String,
    /// The bounding stage.
    pub stage: String,
    /// Its active share of the span, %.
    pub(crate) active_pct: f64,
    /// Its busy share, %.
    pub busy_pct: f64,
    /// Its share stalled on the profiler's full ring, %.
    pub profiler_pct: f64,
    /// What bounds it, one of [`BOUND_BY`]: `compute`, `data movement`, `noc`, `semaphore`,
    /// `profiler` (see the module docs).
    pub bound_by: String,
    /// For `noc` and `semaphore`: the resource it mostly waits on (`NoC read barrier`,
    /// `semaphore 3`).
    pub resource: Option<String>,
    /// For a TRISC stage (`compute`, `coprocessor`): the Tensix unit the op's counters show
    /// busy at least half its cycles (`FPU`, `SFPU`, `unpacker`,
    /// `packer`), when `ttprof run --counters` armed one that speaks for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
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
    /// Busy and wait time of each RISC on the tile.
    pub riscs: Vec<RiscTime>,
    /// The circular buffers the waits name, with who waits on them.
    pub cbs: Vec<CbLink>,
    /// `None` when no RISC recorded a typed wait.
    pub verdict: Option<Verdict>,
}

/// A tile's name in the analysis: NoC0 `x-y`.
fn tile_name(tile: NocCoord) -> String {
    format!("{}-{}", tile.x, tile.y)
}

/// One op (one launch).
#[derive(Clone, Debug, Serialize)]
pub struct OpAnalysis {
    /// The op code.
    pub op: String,
    /// Its chip.
    pub chip: u32,
    /// Its run id.
    pub run: u32,
    /// Summed over tiles.
    pub span_ns: f64,
    /// Busy and wait time per RISC, summed over tiles.
    pub riscs: Vec<RiscTime>,
    /// The bounding stage and its evidence (`None` without typed waits).
    pub verdict: Option<Verdict>,
    /// Tiles whose own verdict names another stage than the op's.
    pub disagreeing_tiles: Vec<String>,
    /// Each tile's own analysis. The file has every tile; in memory, past the run's first
    /// [`KEPT_TILES`] tiles, an op keeps only the tiles whose verdict disagrees with its own,
    /// each with its verdict and span but no RISC times or CBs, and counts the others in
    /// [`OpAnalysis::tiles_left_out`] (module `write`).
    pub tiles: Vec<TileAnalysis>,
    /// Tiles of the op not in [`OpAnalysis::tiles`] (in the file only).
    #[serde(skip)]
    pub tiles_left_out: usize,
    /// The chain of busy spans and waits from the op's first start to its last end, each
    /// wait with the signal that ended it (`None` without typed waits or signals).
    pub critical_path: Option<CriticalPath>,
    /// Performance counters over the op, summed over its tiles (`ttprof run --counters`;
    /// empty: none were armed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<OpCounter>,
    /// Its counted zones (`counted_zone!`) by name: the counter's change over them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counted_zones: Vec<CountedZone>,
    /// Its rates against the arch's peaks (`--counters`; module `roofline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Roofline>,
}

impl OpAnalysis {
    /// Mean over tiles of the ns the compute RISCs (TRISCs) waited at CB fronts, and at CB
    /// backs: the op report's `DEVICE COMPUTE CB WAIT FRONT` / `RESERVE BACK` columns.
    /// `None` when the op's kernels record no typed CB wait on a TRISC.
    pub(crate) fn compute_cb_waits_ns(&self) -> Option<(f64, f64)> {
        let trisc = |r: &RiscTime| r.risc.starts_with("TRISC");
        let typed = self
            .riscs
            .iter()
            .filter(|r| trisc(r))
            .any(|r| r.by_wait.keys().any(|w| w.is_cb()));
        let tiles = self.tiles.len() + self.tiles_left_out;
        if !typed || tiles == 0 {
            return None;
        }
        let n = tiles as f64;
        let sum = |f: fn(Wait) -> bool| {
            self.riscs
                .iter()
                .filter(|r| trisc(r))
                .map(|r| r.wait_ns(f))
                .sum::<f64>()
                / n
        };
        Some((
            sum(|w| matches!(w, Wait::CbFront(_))),
            sum(|w| matches!(w, Wait::CbBack(_))),
        ))
    }
}

/// The analysis of a whole profile.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Analysis {
    /// Every op, in op order.
    pub ops: Vec<OpAnalysis>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risc(name: &'static str, stage: &str, kernel: f64, waits: &[(Wait, f64)]) -> RiscTime {
        let by_wait: BTreeMap<Wait, f64> = waits.iter().copied().collect();
        let busy = kernel - by_wait.values().sum::<f64>();
        RiscTime {
            risc: name,
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
        assert_eq!(
            (v.stage.as_str(), v.bound_by.as_str(), v.profiler_pct),
            ("math", "compute", 0.0)
        );
        assert_eq!(
            v.evidence,
            "math on TRISC_1: busy 91%; reader waits on CB 0 back (space) 70%, unpack waits on CB 2 back (space) 64%, \
             pack waits on CB 3 front (data) 70%"
        );
        let cbs = cb_links(&times, 1000.0);
        let cb2 = cbs.iter().find(|c| c.cb == 2).unwrap();
        assert_eq!(
            (cb2.producer.as_deref(), cb2.consumer.as_deref()),
            (Some("unpack"), Some("math"))
        );
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
            tiles_left_out: 0,
            critical_path: None,
            counters: vec![],
            counted_zones: vec![],
            roofline: None,
        };
        for r in &mut op.riscs {
            r.waits = r
                .by_wait
                .iter()
                .map(|(w, ns)| (w.to_string(), *ns))
                .collect();
        }
        let html = html_panel(&Analysis {
            ops: vec![op.clone()],
        });
        assert!(html.starts_with("<section id=\"analysis\">"), "{html}");
        assert!(
            html.contains("<b>A&amp;B (run 1)</b>: bound by math (TRISC_1)"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>BRISC</td><td>read&lt;er&gt;</td><td>30%</td><td>CB 0 back (space) 70%</td><td></td></tr>"),
            "{html}"
        );
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
        assert_eq!((v.stage.as_str(), v.bound_by.as_str()), ("reader", "noc"));
        assert_eq!(v.resource.as_deref(), Some("NoC read barrier"));
        assert_eq!(v.bound_by_stage(), "NoC read barrier (reader on BRISC)");
        assert!(
            v.evidence
                .starts_with("reader on BRISC: busy 20%, waiting on NoC read barrier 80%"),
            "{}",
            v.evidence
        );
    }

    /// Issue 25: `bound_by` was "compute" whatever stage bounded the op.
    #[test]
    fn bound_by_names_data_movement_compute_semaphore_and_noc() {
        let stage = |bound: RiscTime| {
            let times = vec![
                bound,
                risc("TRISC_2", "pack", 1000.0, &[(Wait::CbFront(3), 900.0)]),
            ];
            verdict(&times, 1000.0).unwrap()
        };
        let v = stage(risc("BRISC", "reader", 1000.0, &[(Wait::CbBack(0), 10.0)]));
        assert_eq!(
            (v.stage.as_str(), v.bound_by.as_str(), v.resource.as_deref()),
            ("reader", "data movement", None)
        );
        let v = stage(risc(
            "NCRISC",
            "writer",
            1000.0,
            &[(Wait::CbFront(4), 10.0)],
        ));
        assert_eq!(v.bound_by, "data movement");
        let v = stage(risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(2), 10.0)]));
        assert_eq!(
            (v.bound_by.as_str(), v.bound_by_stage().as_str()),
            ("compute", "math (TRISC_1)")
        );
        let v = stage(risc(
            "BRISC",
            "reader",
            1000.0,
            &[(Wait::Semaphore(3), 700.0)],
        ));
        assert_eq!(
            (v.bound_by.as_str(), v.resource.as_deref()),
            ("semaphore", Some("semaphore 3"))
        );
        // A TRISC's semaphore wait is a handover between unpack, math and pack (the Tensix
        // semaphores): the stage posting it bounds the op, not the one waiting.
        let times = vec![
            risc("TRISC_2", "pack", 1000.0, &[(Wait::Semaphore(0), 900.0)]),
            risc("BRISC", "reader", 1000.0, &[(Wait::NocRead, 100.0)]),
        ];
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!(
            (v.stage.as_str(), v.bound_by.as_str()),
            ("reader", "data movement")
        );
        {
            let v = &v;
            assert!(BOUND_BY.contains(&v.bound_by.as_str()));
        }
    }

    /// Issue 25: a reader that spent most of its time stalled on its full ring was "busy".
    #[test]
    fn profiler_stalls_are_their_own_category_and_can_bound_the_op() {
        let mut reader = risc("BRISC", "reader", 1000.0, &[(Wait::CbBack(0), 10.0)]);
        reader.profiler_stall_ns = 770.0;
        reader.busy_ns -= 770.0;
        let times = vec![
            reader.clone(),
            risc("TRISC_0", "unpack", 1000.0, &[(Wait::CbFront(0), 950.0)]),
            risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(2), 900.0)]),
        ];
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!(
            (v.stage.as_str(), v.bound_by.as_str()),
            ("reader", "profiler")
        );
        assert_eq!((v.busy_pct.round(), v.profiler_pct.round()), (22.0, 77.0));
        assert_eq!(v.bound_by_stage(), "the profiler (reader on BRISC)");
        assert!(
            v.evidence
                .starts_with("reader on BRISC: stalled on the profiler's full ring 77%"),
            "{}",
            v.evidence
        );
        assert!(
            v.evidence.contains("--drain-every-cycles") && v.evidence.contains("fewer zones"),
            "{}",
            v.evidence
        );
        // Smaller stalls: the stage is still named for its work, the stall share is quoted.
        let mut reader = risc("BRISC", "reader", 1000.0, &[(Wait::CbBack(0), 10.0)]);
        reader.profiler_stall_ns = 100.0;
        reader.busy_ns -= 100.0;
        let v = verdict(&[reader, times[1].clone()], 1000.0).unwrap();
        assert_eq!(v.bound_by, "data movement");
        assert_eq!(v.evidence, "reader on BRISC: busy 89%, stalled on the profiler 10%; unpack waits on CB 0 front (data) 95%");
    }

    /// Issue 25: with `--drain-every-cycles 0` a RISC whose records were dropped (its KERNEL zone
    /// among them) looked "busy 0%", and another stage was named.
    #[test]
    fn lost_records_make_the_verdict_the_profiler() {
        let mut reader = risc("BRISC", "reader", 0.0, &[(Wait::CbBack(0), 300.0)]);
        reader.busy_ns = 0.0;
        reader.records_lost = 10684;
        reader.missing_kernel_zone = true;
        let times = vec![
            reader,
            risc("TRISC_1", "math", 1000.0, &[(Wait::CbFront(2), 990.0)]),
        ];
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!(
            (v.stage.as_str(), v.risc.as_str(), v.bound_by.as_str()),
            ("reader", "BRISC", "profiler")
        );
        assert!(
            v.evidence.starts_with(
                "the profiler lost records, so these times are incomplete: reader on BRISC dropped 10684 record(s) on its \
                 full ring and recorded no KERNEL zone; drain the rings more often"
            ),
            "{}",
            v.evidence
        );
        let mut op = OpAnalysis {
            op: "Add".into(),
            chip: 0,
            run: 1,
            span_ns: 1000.0,
            riscs: times.clone(),
            verdict: Some(v),
            disagreeing_tiles: vec![],
            tiles: vec![],
            tiles_left_out: 0,
            critical_path: None,
            counters: vec![],
            counted_zones: vec![],
            roofline: None,
        };
        for r in &mut op.riscs {
            r.waits = r
                .by_wait
                .iter()
                .map(|(w, ns)| (w.to_string(), *ns))
                .collect();
        }
        let a = Analysis { ops: vec![op] };
        assert!(render(&a).contains(
            "Add (run 1): bound by the profiler (reader on BRISC): the profiler lost records"
        ));
        let html = html_panel(&a);
        assert!(html.contains("<th>profiler</th>"), "{html}");
        assert!(
            html.contains("<td>10684 record(s) lost, no KERNEL zone</td>"),
            "{html}"
        );
        let json = serde_json::to_value(&a).unwrap();
        let r = &json["ops"][0]["riscs"][0];
        assert_eq!(
            (
                r["records_lost"].as_u64(),
                r["missing_kernel_zone"].as_bool()
            ),
            (Some(10684), Some(true))
        );
        assert!(r["profiler_stall_ns"].is_number(), "{r}");
        // No KERNEL zone but nothing lost (the kernel did not finish): not the profiler's
        // doing; that RISC is left out of the ranking and named.
        let mut times = times;
        times[0].records_lost = 0;
        let v = verdict(&times, 1000.0).unwrap();
        assert_eq!((v.stage.as_str(), v.bound_by.as_str()), ("math", "compute"));
        assert!(
            v.evidence.ends_with(
                "; incomplete: reader on BRISC recorded no KERNEL zone (it did not finish)"
            ),
            "{}",
            v.evidence
        );
    }

    /// Issue 41 (Medium): durations and spans were differences of two `f64` host times, a
    /// ns or more off from 2^53 ns on (at 2^62 cycles by up to a thousand): the analysis of
    /// a chip up for months must read as it does near cycle 0.
    #[test]
    fn times_stay_exact_at_large_cycle_counts() {
        use crate::model::fixture;
        for arch in [
            riscv_linker::Arch::WormholeB0,
            riscv_linker::Arch::Blackhole,
        ] {
            let times = |offset: u64| {
                let p = fixture::profile_at(offset, arch, true);
                let mut a = Analyzer::default();
                for v in p.rings() {
                    a.add(&p, &v);
                }
                let mut out = Vec::new();
                for o in a.finish(&p).ops {
                    out.push(o.span_ns);
                    for r in &o.riscs {
                        out.extend([r.kernel_ns, r.busy_ns, r.profiler_records_ns]);
                    }
                }
                out
            };
            let base = times(0);
            assert!(
                base.len() > 10 && base.iter().any(|&t| t > 1000.0),
                "{base:?}"
            );
            for offset in [(1u64 << 53) + 3, (1 << 62) + 7] {
                let got = times(offset);
                assert_eq!(got.len(), base.len());
                for (g, b) in got.iter().zip(&base) {
                    assert!((g - b).abs() < 1e-6, "{arch:?} at {offset}: {g} vs {b}");
                }
            }
        }
    }
}
