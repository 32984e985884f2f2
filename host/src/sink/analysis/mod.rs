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
mod held;
mod path;
mod records;
mod roofline;
mod shared;
mod sink;
mod stopped;
pub(crate) use counters::of_record as op_counters;
pub(crate) use counters::{line as counters_line, zones_line as counted_zones_line};
pub use counters::{CountedZone, OpCounter};
pub use path::{
    arrows, paragraph, Arrow, CoreRef, CriticalPath, PathSegment, SignalRef, UnmatchedSignal,
    UnmatchedWait,
};
pub(crate) use path::{shares, wrap};
pub(crate) use roofline::line as roofline_line;
pub use roofline::{Rate, Roofline};
pub(crate) use shared::Shared;
pub(crate) use sink::AnalysisSink;
pub(crate) use stopped::{add as add_stopped, write as write_with_stops};
pub use stopped::{OpenWait, Stopped, StoppedCore};

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
    /// `BRISC`, `NCRISC`, `TRISC_0`, ...
    pub risc: String,
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
    /// Of `profiler_records_ns`, the part inside each outermost typed wait (taken out of
    /// that wait), ns.
    #[serde(skip)]
    pub(crate) records_in_waits: BTreeMap<Wait, f64>,
    /// Its KERNEL zones, cycles (for the held stretches; emptied by the analysis).
    #[serde(skip)]
    pub(crate) kernel_cycles: Vec<(u64, u64)>,
    /// Its outermost typed waits and profiler stalls, cycles (likewise).
    #[serde(skip)]
    pub(crate) covered_cycles: Vec<(u64, u64)>,
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
    /// Each tile's own analysis.
    pub tiles: Vec<TileAnalysis>,
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
        if !typed || self.tiles.is_empty() {
            return None;
        }
        let n = self.tiles.len() as f64;
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

/// Gathers RISC times ring by ring (see the module docs).
#[derive(Default)]
pub(crate) struct Analyzer {
    /// (name, file, line) of every typed wait site.
    waits_by_site: HashMap<(String, String, u32), Wait>,
    /// Per label index: what the analysis does with its zones.
    kinds: Vec<LabelKind>,
    /// Times per op, tile and RISC.
    cells: Cells,
    /// (name, file, line) of every signal site.
    signals_by_site: HashMap<(String, String, u32), Signal>,
    /// Waits and signals per op, for the critical paths.
    paths: path::Collector,
    /// Per (chip, tile): the cycle count its times are taken from (its first zone's start),
    /// one for every RISC of the tile.
    origins: HashMap<(u32, NocCoord), u64>,
    /// (name, file, line) of every counted zone site, with its bank.
    counted_by_site: HashMap<(String, String, u32), &'static str>,
    /// Per label index: the bank a counted zone counts.
    counted_labels: Vec<Option<&'static str>>,
    /// Counted zones per op, name and bank.
    counted: counters::Counted,
}

/// (op index, chip, tile) -> per RISC (time, first KERNEL start, last KERNEL end); a RISC
/// without a KERNEL zone keeps (+inf, -inf).
type Cells = BTreeMap<(u32, u32, NocCoord), TileCells>;

/// One tile's RISCs in one op, in first-seen order: a `Vec` sized to them, not a `BTreeMap`
/// (whose node reserves eleven `RiscTime`s, 3.5 KB a tile; issue 41).
type TileCells = Vec<(Risc, (RiscTime, f64, f64))>;

/// The entry of `risc` on `key`, made (its stage named by `stage`) on first use.
fn cell(
    cells: &mut Cells,
    key: (u32, u32, NocCoord),
    risc: Risc,
    stage: impl FnOnce() -> String,
) -> &mut (RiscTime, f64, f64) {
    cell_in(cells.entry(key).or_default(), risc, stage)
}

/// The entry of `risc` in one tile's cells, made on first use.
fn cell_in(
    riscs: &mut TileCells,
    risc: Risc,
    stage: impl FnOnce() -> String,
) -> &mut (RiscTime, f64, f64) {
    let i = match riscs.iter().position(|r| r.0 == risc) {
        Some(i) => i,
        None => {
            riscs.reserve_exact(1);
            riscs.push((
                risc,
                (
                    RiscTime {
                        risc: risc.name().to_string(),
                        stage: stage(),
                        ..Default::default()
                    },
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                ),
            ));
            riscs.len() - 1
        }
    };
    &mut riscs[i].1
}

/// What a label's zones are to the analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LabelKind {
    /// A KERNEL wrapper zone: the RISC's time in the op.
    Kernel,
    /// A typed wait.
    Wait(Wait),
    /// A `PROFILER-STALL` zone.
    Stall,
    /// A signal (an event).
    Signal(Signal),
    /// Busy time (not looked at).
    Other,
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

/// The stage a RISC of `tile` plays in `op`: its kernel's file stem from the op log, else the
/// RISC's usual role. A compute kernel built once per TRISC (`--kernel trisc=ops.cpp`) has
/// one stem on the three: each is then named with its role too (`ops math`), so "math waits
/// on Tensix semaphore 1" reads as it should.
fn stage_name(p: &Profile, op: u32, tile: NocCoord, risc: Risc) -> String {
    let o = &p.ops[op as usize];
    let run = p.oplog.as_ref().and_then(|l| l.op(o.chip, o.run));
    let stem = |r: Risc| {
        run.and_then(|run| run.kernel_for(tile, r))
            .and_then(|k| k.elf.file_stem().map(|s| s.to_string_lossy().into_owned()))
    };
    let Some(mine) = stem(risc) else {
        return role(risc).to_string();
    };
    let trisc = [Risc::Trisc0, Risc::Trisc1, Risc::Trisc2];
    let shared = trisc.contains(&risc)
        && trisc
            .iter()
            .any(|&r| r != risc && stem(r).as_deref() == Some(mine.as_str()));
    if shared {
        format!("{mine} {}", role(risc))
    } else {
        mine
    }
}

impl Analyzer {
    /// Adds one ring's zones and sums.
    pub(crate) fn add(&mut self, p: &Profile, v: &RingView) {
        if !v.placed {
            return;
        }
        self.add_losses(p, v);
        if v.zones.is_empty() && v.marks.is_empty() {
            return;
        }
        self.learn_sites(p, v);
        for z in &v.zones {
            let bank = self.counted_labels.get(z.site as usize).copied().flatten();
            if let (Some(bank), Some(value), Some(op)) = (bank, z.value, z.op) {
                let name = p.labels[z.site as usize].name.clone();
                let e = self.counted.entry((op, name, bank)).or_default();
                e.0 += 1;
                e.1 = e.1.saturating_add(value.into());
                e.2 = e.2.saturating_add(z.cycles());
            }
        }
        let kinds = &self.kinds;
        self.paths.add(p, v, |site| {
            kinds
                .get(site as usize)
                .copied()
                .unwrap_or(LabelKind::Other)
        });
        let risc = v.lane.risc;
        let (chip, tile) = (v.lane.chip, v.lane.tile);
        let stage_of = |op: u32| stage_name(p, op, tile, risc);
        let kinds = &self.kinds;
        let kind = |site: u32| {
            kinds
                .get(site as usize)
                .copied()
                .unwrap_or(LabelKind::Other)
        };
        // Outermost waits: the end of the wait that encloses the current zone and what it
        // waits on, per op; the span of the current KERNEL zone, per op.
        let mut wait_end: HashMap<u32, (f64, Wait)> = HashMap::new();
        let mut kernel: HashMap<u32, (f64, f64)> = HashMap::new();
        // Per op: the KERNEL zone's cycles and the outermost waits' (start, end, what), for
        // the records' cost (module `records`).
        let mut kernel_cycles: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut waits_of: HashMap<u32, Vec<(u64, u64, Wait)>> = HashMap::new();
        let arch = p.readout.geometry().arch;
        let cpn_of_chip = p
            .timebase
            .chips
            .get(&chip)
            .map(|t| t.cycles_per_ns)
            .filter(|c| *c > 0.0);
        let ns_of = |c: f64| cpn_of_chip.map_or(0.0, |cpn| c / cpn);
        // Host ns from the tile's origin: exact differences of host times (the zones' `f64`
        // ns are a ns or more off from 2^53 ns on), small enough that their differences
        // (durations, spans) are exact too.
        let clock = p.timebase.tile_clock(chip, tile);
        let origin = *self
            .origins
            .entry((chip, tile))
            .or_insert_with(|| v.zones.first().map_or(0, |z| z.start_cycles));
        let at = |c: u64, ns: f64| clock.map_or(ns, |k| k.span_ns(origin, c));
        for z in &v.zones {
            let k = kind(z.site);
            if let (Some(op), LabelKind::Other | LabelKind::Wait(_)) = (z.op, k) {
                let inside = kernel_cycles
                    .get(&op)
                    .is_some_and(|&(s, e)| z.start_cycles >= s && z.end_cycles <= e);
                if inside {
                    let rk = records::zone_record(z.value);
                    let ns = ns_of(records::cycles(rk, arch));
                    // Inside an outermost wait (not the wait itself): that wait's time.
                    let within = waits_of
                        .get(&op)
                        .and_then(|w| w.last())
                        .filter(|&&(s, e, _)| {
                            z.start_cycles >= s
                                && z.end_cycles <= e
                                && (z.start_cycles, z.end_cycles) != (s, e)
                        });
                    let (t, ..) = cell(&mut self.cells, (op, chip, tile), risc, || stage_of(op));
                    t.profiler_records += 1;
                    t.profiler_records_ns += ns;
                    if let Some(&(_, _, w)) = within {
                        *t.records_in_waits.entry(w).or_default() += ns;
                    }
                }
            }
            let (Some(op), false) = (z.op, k == LabelKind::Other) else {
                continue;
            };
            if k == LabelKind::Kernel {
                kernel_cycles.insert(op, (z.start_cycles, z.end_cycles));
            }
            if let LabelKind::Wait(w) = k {
                let outer = waits_of
                    .get(&op)
                    .and_then(|v| v.last())
                    .is_none_or(|&(_, e, _)| z.start_cycles >= e);
                if outer {
                    waits_of
                        .entry(op)
                        .or_default()
                        .push((z.start_cycles, z.end_cycles, w));
                }
            }
            let (start_ns, end_ns) = (at(z.start_cycles, z.start_ns), at(z.end_cycles, z.end_ns));
            let dur = (end_ns - start_ns).max(0.0);
            if !dur.is_finite() {
                continue;
            }
            let (t, lo, hi) = cell(&mut self.cells, (op, chip, tile), risc, || stage_of(op));
            match k {
                LabelKind::Kernel => {
                    t.kernel_ns += dur;
                    t.kernel_cycles.push((z.start_cycles, z.end_cycles));
                    *lo = lo.min(start_ns);
                    *hi = hi.max(end_ns);
                    kernel.insert(op, (start_ns, end_ns));
                }
                LabelKind::Wait(w) => {
                    let end = wait_end.entry(op).or_insert((f64::NEG_INFINITY, w));
                    if start_ns >= end.0 {
                        *end = (end_ns, w);
                        *t.by_wait.entry(w).or_default() += dur;
                        t.covered_cycles.push((z.start_cycles, z.end_cycles));
                    } // else: inside a wait already counted
                }
                LabelKind::Stall => {
                    // Only the part inside the KERNEL zone (zones come in opening order, so
                    // the KERNEL zone that holds it came first); a stall after the kernel's
                    // end (writing its last records) is not the kernel's time.
                    let Some(&(ks, ke)) = kernel.get(&op) else {
                        continue;
                    };
                    let (s, e) = (start_ns.max(ks), end_ns.min(ke));
                    if e <= s {
                        continue;
                    }
                    t.covered_cycles.push((z.start_cycles, z.end_cycles));
                    t.profiler_stall_ns += e - s;
                    // Inside a typed wait: that wait's time was the profiler's.
                    if let Some(&(end, w)) = wait_end.get(&op) {
                        let inside = (e.min(end) - s).max(0.0);
                        if let Some(ns) = t.by_wait.get_mut(&w) {
                            *ns = (*ns - inside).max(0.0);
                        }
                    }
                }
                LabelKind::Other | LabelKind::Signal(_) => {}
            }
        }
        let cpn = cpn_of_chip;
        for m in &v.marks {
            let Some(op) = m.op else { continue };
            let Some(&(ks, ke)) = kernel_cycles.get(&op) else {
                continue;
            };
            if m.cycles < ks || m.cycles > ke {
                continue;
            }
            let signal = matches!(kind(m.site), LabelKind::Signal(_));
            let (rk, n) = records::mark_record(m.kind, signal);
            let ns = n * ns_of(records::cycles(rk, arch));
            let waits = waits_of.get(&op).map_or(&[][..], Vec::as_slice);
            let i = waits.partition_point(|&(_, e, _)| e < m.cycles);
            let within = waits.get(i).filter(|&&(s, e, _)| {
                rk != records::RecordKind::SumStep && m.cycles > s && m.cycles < e
            });
            let (t, ..) = cell(&mut self.cells, (op, chip, tile), risc, || stage_of(op));
            t.profiler_records += n as u64;
            t.profiler_records_ns += ns;
            if let Some(&(_, _, w)) = within {
                *t.records_in_waits.entry(w).or_default() += ns;
            }
        }
        for m in &v.marks {
            let (Some(op), MarkKind::Sum { total_cycles, .. }, LabelKind::Wait(w), Some(cpn)) =
                (m.op, m.kind, kind(m.site), cpn)
            else {
                continue;
            };
            *cell(&mut self.cells, (op, chip, tile), risc, || stage_of(op))
                .0
                .by_wait
                .entry(w)
                .or_default() += total_cycles as f64 / cpn;
        }
    }

    /// Records the profiler dropped on this ring, per op: each in-band `Loss` record's count
    /// goes to its run's op, the drops only the ring's counter knows (after its last record)
    /// to the op of the ring's last record.
    fn add_losses(&mut self, p: &Profile, v: &RingView) {
        use crate::decode::RecordKind;
        let r = &v.ring.records;
        let (chip, tile, risc) = (v.lane.chip, v.lane.tile, v.lane.risc);
        let stage_of = |op: u32| stage_name(p, op, tile, risc);
        let mut lost: Vec<(u32, u64)> = Vec::new();
        for i in (0..r.len()).filter(|&i| r.kind[i] == RecordKind::Loss) {
            if let Some(op) = p.op_of(chip, r.run[i]) {
                lost.push((op, r.count[i] as u64));
            }
        }
        let after_last = (v.ring.dropped as u64).saturating_sub(v.ring.losses_in_band);
        if after_last > 0 {
            if let Some(op) = (0..r.len()).rev().find_map(|i| p.op_of(chip, r.run[i])) {
                lost.push((op, after_last));
            }
        }
        for (op, n) in lost {
            cell(&mut self.cells, (op, chip, tile), risc, || stage_of(op))
                .0
                .records_lost += n;
        }
    }

    /// Which labels are typed waits or KERNEL zones, from the site tables of the runs this
    /// ring holds (a few dozen sites per kernel, not a pass over the records).
    fn learn_sites(&mut self, p: &Profile, v: &RingView) {
        let mut runs: Vec<u32> = Vec::new();
        for run in v
            .zones
            .iter()
            .map(|z| z.run)
            .chain(v.marks.iter().map(|m| m.run))
        {
            if runs.last() != Some(&run) && !runs.contains(&run) {
                runs.push(run);
            }
        }
        let mut learned = self.kinds.len() != p.labels.len();
        for run in runs {
            let Some(table) = p.sites.rings.get(v.index).and_then(|r| r.table(run)) else {
                continue;
            };
            for (_, m) in table.iter() {
                if let Some(w) = m.wait {
                    learned |= self
                        .waits_by_site
                        .insert((m.name.clone(), m.file.clone(), m.line), w)
                        .is_none();
                }
                if let Some(s) = m.signal {
                    learned |= self
                        .signals_by_site
                        .insert((m.name.clone(), m.file.clone(), m.line), s)
                        .is_none();
                }
                if let Some(b) = m.counter {
                    learned |= self
                        .counted_by_site
                        .insert((m.name.clone(), m.file.clone(), m.line), b)
                        .is_none();
                }
            }
        }
        if learned {
            self.counted_labels = p
                .labels
                .iter()
                .map(|l| {
                    self.counted_by_site
                        .get(&(l.name.clone(), l.file.clone(), l.line))
                        .copied()
                })
                .collect();
            self.kinds = p
                .labels
                .iter()
                .map(|l| {
                    let key = (l.name.clone(), l.file.clone(), l.line);
                    if let Some(s) = self.signals_by_site.get(&key) {
                        return LabelKind::Signal(*s);
                    }
                    match self.waits_by_site.get(&key) {
                        Some(w) => LabelKind::Wait(*w),
                        None if l.name.ends_with("-KERNEL") => LabelKind::Kernel,
                        None if l.name == PROFILER_STALL => LabelKind::Stall,
                        None => LabelKind::Other,
                    }
                })
                .collect();
        }
    }

    /// The analysis: per op, per tile, verdicts.
    pub(crate) fn finish(self, p: &Profile) -> Analysis {
        let mut paths = self.paths.finish(p);
        let mut ops: BTreeMap<u32, OpAnalysis> = BTreeMap::new();
        let holds = held::index(p.oplog.as_ref());
        for ((op, chip, tile), mut riscs) in self.cells {
            let o = &p.ops[op as usize];
            let cpn = p.timebase.chips.get(&chip).map_or(0.0, |c| c.cycles_per_ns);
            for (risc, (t, ..)) in riscs.iter_mut() {
                match holds.get(&(o.chip, o.run, tile, *risc)) {
                    Some(spans) => held::apply(t, *risc, spans, cpn),
                    None => {
                        t.kernel_cycles = Vec::new();
                        t.covered_cycles = Vec::new();
                    }
                }
            }
            // A RISC the op log runs a kernel on here whose KERNEL zone never arrived.
            if let Some(rec) = p.oplog.as_ref().and_then(|l| l.op(o.chip, o.run)) {
                for risc in Risc::ALL {
                    let Some(k) = rec.kernel_for(tile, risc) else {
                        continue;
                    };
                    let stage = || {
                        k.elf.file_stem().map_or_else(
                            || role(risc).to_string(),
                            |s| s.to_string_lossy().into_owned(),
                        )
                    };
                    let (t, lo, _) = cell_in(&mut riscs, risc, stage);
                    t.missing_kernel_zone = !lo.is_finite();
                }
            }
            for (_, (t, lo, _)) in riscs.iter_mut() {
                t.missing_kernel_zone |= !lo.is_finite();
            }
            let lo = riscs.iter().map(|r| r.1 .1).fold(f64::INFINITY, f64::min);
            let hi = riscs
                .iter()
                .map(|r| r.1 .2)
                .fold(f64::NEG_INFINITY, f64::max);
            let span = if hi > lo { hi - lo } else { 0.0 };
            let mut times: Vec<RiscTime> = riscs
                .into_iter()
                .map(|(_, (mut t, ..))| {
                    for (w, ns) in &t.records_in_waits {
                        if let Some(x) = t.by_wait.get_mut(w) {
                            *x = (*x - ns).max(0.0);
                        }
                    }
                    // The records inside waits left those waits (above); every record's
                    // cost is out of busy time.
                    let waited: f64 =
                        t.by_wait.values().sum::<f64>() + t.held.values().sum::<f64>();
                    t.busy_ns =
                        (t.kernel_ns - waited - t.profiler_stall_ns - t.profiler_records_ns)
                            .max(0.0);
                    t.waits = waits_by_name(&t);
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
                critical_path: None,
                counters: counters::of(p.oplog.as_ref(), o.chip, o.run),
                counted_zones: counters::counted_zones(
                    &self.counted,
                    op,
                    p.oplog.as_ref(),
                    o.chip,
                    o.run,
                ),
                roofline: roofline::of(p.oplog.as_ref(), o.chip, o.run, p.geometry().arch),
            });
            entry.span_ns += span;
            for t in &times {
                match entry.riscs.iter_mut().find(|r| r.risc == t.risc) {
                    Some(r) => {
                        r.kernel_ns += t.kernel_ns;
                        r.busy_ns += t.busy_ns;
                        r.profiler_stall_ns += t.profiler_stall_ns;
                        r.profiler_records_ns += t.profiler_records_ns;
                        r.profiler_records += t.profiler_records;
                        r.records_lost += t.records_lost;
                        r.missing_kernel_zone |= t.missing_kernel_zone;
                        for (w, ns) in &t.by_wait {
                            *r.by_wait.entry(*w).or_default() += ns;
                        }
                        for (w, ns) in &t.held {
                            *r.held.entry(w.clone()).or_default() += ns;
                        }
                        for (u, ns) in &t.coprocessor_busy {
                            *r.coprocessor_busy.entry(u.clone()).or_default() += ns;
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
        for (op, mut a) in ops {
            a.critical_path = paths.remove(&op);
            if let Some(c) = a.critical_path.as_mut() {
                c.counters = counters::path_note(c, &a.counters);
            }
            a.riscs.sort_by_key(|t| pipeline_order(&t.risc));
            for r in &mut a.riscs {
                r.waits = waits_by_name(r);
            }
            a.verdict = verdict(&a.riscs, a.span_ns);
            if let Some(v) = a.verdict.as_mut().filter(|_| !a.counters.is_empty()) {
                v.evidence.push_str("; ");
                v.evidence.push_str(&counters::evidence(&a.counters));
                if matches!(v.bound_by.as_str(), "compute" | "coprocessor") {
                    if let Some((unit, why)) = counters::decide(&a.counters) {
                        v.unit = unit.map(String::from);
                        v.evidence.push_str("; ");
                        v.evidence.push_str(&why);
                    }
                }
            }
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

/// A RISC's typed waits and held time by name (what `waits` holds).
fn waits_by_name(t: &RiscTime) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = t
        .by_wait
        .iter()
        .map(|(w, ns)| (w.to_string(), *ns))
        .collect();
    for (what, ns) in &t.held {
        *out.entry(what.clone()).or_default() += ns;
    }
    out
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
    // Records lost: no share can be trusted, the profiler is the answer.
    let lost: Vec<&RiscTime> = times.iter().filter(|t| t.incomplete()).collect();
    let dropped = lost.iter().any(|t| t.records_lost > 0);
    if let Some(worst) = lost
        .iter()
        .copied()
        .filter(|_| dropped)
        .max_by_key(|t| (t.records_lost, t.missing_kernel_zone))
    {
        let what: Vec<String> = lost
            .iter()
            .map(|t| {
                let mut w = Vec::new();
                if t.records_lost > 0 {
                    w.push(format!(
                        "dropped {} record(s) on its full ring",
                        t.records_lost
                    ));
                }
                if t.missing_kernel_zone {
                    w.push("recorded no KERNEL zone".to_string());
                }
                format!("{} on {} {}", t.stage, t.risc, w.join(" and "))
            })
            .collect();
        return Some(Verdict {
            risc: worst.risc.clone(),
            stage: worst.stage.clone(),
            active_pct: pct(worst.active_ns(), span),
            busy_pct: pct(worst.busy_ns, span),
            profiler_pct: pct(worst.profiler_stall_ns, span),
            bound_by: "profiler".to_string(),
            resource: None,
            unit: None,
            evidence: format!(
                "the profiler lost records, so these times are incomplete: {}; {PROFILER_ADVICE}",
                what.join(", ")
            ),
        });
    }
    // A RISC without a KERNEL zone (and no record lost: it did not finish) has no time to
    // rank; the evidence says it is missing.
    let bound = times
        .iter()
        .filter(|t| !t.missing_kernel_zone)
        .max_by(|a, b| a.held_ns().total_cmp(&b.held_ns()))?;
    let external = bound
        .by_wait
        .iter()
        .filter(|(w, _)| !bound.is_handover(**w))
        .max_by(|a, b| a.1.total_cmp(b.1));
    let external_ns = bound.active_ns() - bound.busy_ns;
    let stall = bound.profiler_stall_ns;
    let (bound_by, resource) = match external {
        _ if stall > bound.busy_ns && stall > external_ns => ("profiler", None),
        Some((w, ns)) if *ns > bound.busy_ns => (
            match w {
                Wait::Semaphore(_) | Wait::TensixSem(_) => "semaphore",
                Wait::TtSync => "coprocessor",
                _ => "noc",
            },
            Some(w.to_string()),
        ),
        _ if bound.is_compute() => ("compute", None),
        _ => ("data movement", None),
    };
    let mut evidence = if bound_by == "profiler" {
        format!(
            "{} on {}: stalled on the profiler's full ring {:.0}% (PROFILER-STALL: waiting for the host to drain it), \
             busy {:.0}%",
            bound.stage,
            bound.risc,
            pct(stall, span),
            pct(bound.busy_ns, span)
        )
    } else {
        let mut e = format!(
            "{} on {}: busy {:.0}%",
            bound.stage,
            bound.risc,
            pct(bound.busy_ns, span)
        );
        let units: Vec<String> = bound
            .coprocessor_busy
            .iter()
            .filter(|(_, ns)| pct(**ns, span) >= 1.0)
            .map(|(u, ns)| format!("{u} {:.0}%", pct(*ns, span)))
            .collect();
        if !units.is_empty() {
            e.push_str(&format!(
                " (held while {} busy: {})",
                if units.len() == 1 {
                    "its unit was"
                } else {
                    "its units were"
                },
                units.join(", ")
            ));
        }
        e
    };
    if let Some(r) = &resource {
        evidence.push_str(&format!(", waiting on {r} {:.0}%", pct(external_ns, span)));
    }
    if pct(bound.profiler_records_ns, span) >= 1.0 {
        evidence.push_str(&format!(
            ", its profiler records {:.0}% (not counted as busy)",
            pct(bound.profiler_records_ns, span)
        ));
    }
    if bound_by != "profiler" && pct(stall, span) >= 1.0 {
        evidence.push_str(&format!(
            ", stalled on the profiler {:.0}%",
            pct(stall, span)
        ));
    }
    let others: Vec<String> = times
        .iter()
        .filter(|t| t.risc != bound.risc)
        .flat_map(|t| {
            let typed = t.largest_wait().map(|(w, ns)| (w.to_string(), ns));
            let held = t
                .held
                .iter()
                .map(|(w, ns)| (format!("{w} (held)"), *ns))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let wait = typed
                .into_iter()
                .chain(held)
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .filter(|(_, ns)| pct(*ns, span) >= 1.0)
                .map(|(w, ns)| format!("{} waits on {w} {:.0}%", t.stage, pct(ns, span)));
            let stalled = (pct(t.profiler_stall_ns, span) >= 1.0).then(|| {
                format!(
                    "{} stalled on the profiler {:.0}%",
                    t.stage,
                    pct(t.profiler_stall_ns, span)
                )
            });
            wait.into_iter().chain(stalled)
        })
        .collect();
    if !others.is_empty() {
        evidence.push_str("; ");
        evidence.push_str(&others.join(", "));
    }
    let unfinished: Vec<String> = lost
        .iter()
        .map(|t| format!("{} on {}", t.stage, t.risc))
        .collect();
    if !unfinished.is_empty() {
        evidence.push_str(&format!(
            "; incomplete: {} recorded no KERNEL zone (it did not finish)",
            unfinished.join(", ")
        ));
    }
    // The profiler dominates a core: its stalls are at least half of that core's kernel time.
    if bound_by == "profiler"
        || times
            .iter()
            .any(|t| t.kernel_ns > 0.0 && 2.0 * t.profiler_stall_ns >= t.kernel_ns)
    {
        evidence.push_str(&format!(
            "; the profile measures the profiler: {PROFILER_ADVICE}"
        ));
    }
    Some(Verdict {
        risc: bound.risc.clone(),
        stage: bound.stage.clone(),
        active_pct: pct(bound.active_ns(), span),
        busy_pct: pct(bound.busy_ns, span),
        profiler_pct: pct(stall, span),
        bound_by: bound_by.to_string(),
        resource,
        unit: None,
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
    crate::printable::printable(&render_raw(a)).into_owned()
}

/// [`render`] before names are made printable.
fn render_raw(a: &Analysis) -> String {
    let mut out = String::new();
    for op in &a.ops {
        let Some(v) = &op.verdict else { continue };
        if out.is_empty() {
            out.push_str("\nbottleneck per op (typed waits; ttprof_analysis.json has every tile and RISC):\n");
        }
        out.push_str(&format!(
            "  {} (run {}): bound by {}: {}\n",
            op.op,
            op.run,
            v.bound_by_stage(),
            v.evidence
        ));
        if !op.disagreeing_tiles.is_empty() {
            for t in op
                .tiles
                .iter()
                .filter(|t| op.disagreeing_tiles.contains(&t.tile))
            {
                if let Some(tv) = &t.verdict {
                    out.push_str(&format!("    tile {} disagrees: {}\n", t.tile, tv.evidence));
                }
            }
        }
    }
    let mut paths = String::new();
    for op in &a.ops {
        if let Some(c) = &op.critical_path {
            paths.push_str(&paragraph(&op.op, op.run, c));
        }
    }
    let counted: Vec<String> = a
        .ops
        .iter()
        .filter(|op| !op.counters.is_empty() || !op.counted_zones.is_empty())
        .map(|op| {
            let lines: Vec<String> = [
                counters::line(&op.counters),
                op.roofline.as_ref().map(roofline::line).unwrap_or_default(),
                counters::zones_line(&op.counted_zones),
            ]
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect();
            format!("  {} (run {}): {}\n", op.op, op.run, lines.join("\n    "))
        })
        .collect();
    if !counted.is_empty() {
        out.push_str("\nperformance counters per op (ttprof run --counters):\n");
        out.extend(counted);
    }
    if !paths.is_empty() {
        out.push_str(
            "\ncritical path per op (each wait ended by the signal matched to it; ttprof_analysis.json has every segment):\n",
        );
        out.push_str(&paths);
    }
    out
}

/// Text for HTML (`&`, `<`, `>`, `"` escaped).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML page's panel: one `<details>` per op with a verdict (the verdict, its evidence,
/// a table of each RISC's busy and wait shares, the disagreeing tiles). Empty when no op has
/// a verdict.
pub(crate) fn html_panel(a: &Analysis) -> String {
    let mut out = String::new();
    for op in a.ops.iter().filter(|o| o.verdict.is_some()) {
        let Some(v) = &op.verdict else { continue };
        out.push_str(&format!(
            "<details><summary><b>{} (run {})</b>: bound by {}</summary><p>{}</p>\n<table><tr><th>RISC</th><th>stage</th>\
             <th>busy</th><th>waits</th><th>profiler</th></tr>\n",
            esc(&op.op),
            op.run,
            esc(&v.bound_by_stage()),
            esc(&v.evidence)
        ));
        for r in &op.riscs {
            let waits: Vec<String> = r
                .waits
                .iter()
                .map(|(w, ns)| format!("{} {:.0}%", esc(w), pct(*ns, op.span_ns)))
                .collect();
            let mut profiler = Vec::new();
            if r.profiler_stall_ns > 0.0 {
                profiler.push(format!(
                    "stalled {:.0}%",
                    pct(r.profiler_stall_ns, op.span_ns)
                ));
            }
            if r.records_lost > 0 {
                profiler.push(format!("{} record(s) lost", r.records_lost));
            }
            if r.missing_kernel_zone {
                profiler.push("no KERNEL zone".to_string());
            }
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td><td>{}</td></tr>\n",
                esc(&r.risc),
                esc(&r.stage),
                pct(r.busy_ns, op.span_ns),
                waits.join(", "),
                profiler.join(", ")
            ));
        }
        out.push_str("</table>");
        if let Some(r) = &op.roofline {
            out.push_str(&format!(
                "<p class=\"roofline\">{}</p>",
                esc(&roofline::line(r))
            ));
        }
        if !op.disagreeing_tiles.is_empty() {
            out.push_str(&format!(
                "<p>tiles that disagree: {}</p>",
                esc(&op.disagreeing_tiles.join(" "))
            ));
        }
        out.push_str("</details>\n");
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"analysis\"><b>Bottleneck per op</b> (typed waits)\n{out}</section>\n")
}

impl Verdict {
    /// "math (TRISC_1)", "NoC read barrier (reader on BRISC)", "the FPU (math on TRISC_1)"
    /// or "the profiler (reader on BRISC)".
    pub(crate) fn bound_by_stage(&self) -> String {
        if let Some(u) = &self.unit {
            return format!("the {u} ({} on {})", self.stage, self.risc);
        }
        match (&self.resource, self.bound_by.as_str()) {
            (Some(r), _) => format!("{r} ({} on {})", self.stage, self.risc),
            (None, "profiler") => format!("the profiler ({} on {})", self.stage, self.risc),
            _ => format!("{} ({})", self.stage, self.risc),
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
        use crate::timebase::Timebase;
        for arch in [
            riscv_linker::Arch::WormholeB0,
            riscv_linker::Arch::Blackhole,
        ] {
            let times = |offset: u64| {
                let r = fixture::readout_at(offset);
                let res = fixture::resolution(&r);
                let tb = Timebase::nominal(arch, 1);
                let p = Profile::resolved(r, res, Some(fixture::oplog()), tb);
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
