//! Each op's critical path in the analysis: the waits and signals gathered ring by ring into
//! a [`critpath::OpTrace`] per op, matched and walked by [`crate::critpath`], and written as
//! [`CriticalPath`] (`ttprof_analysis.json`'s `critical_path`), a paragraph per op for the
//! summary ([`paragraph`]) and a list for the HTML panel.
//!
//! The collector is walked along each ring in time order by the analyzer (module `gather`:
//! zones at their start, a cycle's marks after them), whole or a piece at a time; what it
//! carries from one piece of a ring to the next is its `InRing` (per op the latest KERNEL
//! zone and the end of the outermost wait, the zones open, the core's latest outermost
//! waits, and the profiler's cost counted so far, [`Cost`]), bounded by the ring's ops and
//! nesting.

use super::{stage_name, tile_name, LabelKind};
use crate::critpath::{self, CoreId, OpTrace, SignalMark, StepKind, WaitSpan};
use crate::profile::Profile;
use crate::sink::exact;
use crate::timeline::{Lane, Mark, MarkKind, Zone};
use riscv_linker::{NocCoord, Risc};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Waits and signals the collector holds over every op of a run (about 40 bytes each):
/// past it, later ones are counted per op ([`CriticalPath::left_out`]) and left out, so a
/// run of any length stays within a constant.
pub(crate) const PATH_EVENTS: usize = 1 << 20;
/// Per op index, what its rings recorded.
#[derive(Default)]
pub(super) struct Collector {
    traces: BTreeMap<u32, OpTrace>,
    budget: Budget,
    /// The ring being added, carried from its first piece to its last.
    ring: InRing,
}

/// What the collector may still hold ([`PATH_EVENTS`]), apart from the traces so that it
/// can be asked while they are borrowed.
#[derive(Default)]
struct Budget {
    /// Waits, signals and stretches held, every op.
    held: usize,
    /// Per op: those left out past [`PATH_EVENTS`].
    left_out: BTreeMap<u32, u64>,
}

impl Budget {
    /// Whether one more wait, signal or stretch of `op` may be kept (else it is counted).
    fn room(&mut self, op: u32) -> bool {
        if self.held < PATH_EVENTS {
            self.held += 1;
            return true;
        }
        *self.left_out.entry(op).or_default() += 1;
        false
    }
}

/// What the collector carries of the ring being added from one piece to the next (a whole
/// ring is one piece): per op its latest KERNEL zone and the end of its outermost wait, the
/// zones open (as deep as the nesting), the core's latest outermost waits, and the
/// profiler's cost counted so far ([`Cost`]). Bounded by the ops a ring records and its
/// nesting, never its zones.
#[derive(Default)]
struct InRing {
    /// The end of the outermost wait in progress, per op (own cycles).
    wait_end: HashMap<u32, u64>,
    /// The latest KERNEL zone per op, own cycles, with the cost at its start.
    kernels: HashMap<u32, Checked>,
    /// The zones open at the walk's time: (end, site), in opening order.
    open: Vec<(u64, u32)>,
    /// The core's outermost waits and stalls (of any op), each with the cost at its end:
    /// the latest, and the latest that opened before it (a signal at the latest's start
    /// counts from the one before).
    latest_wait: Option<Checked>,
    earlier_wait: Option<Checked>,
    cost: Cost,
}

/// A span of the ring, own cycles, and the profiler's cost at `at` once the walk passed it.
#[derive(Clone, Copy)]
struct Checked {
    start: u64,
    end: u64,
    /// Where the cost is taken.
    at: u64,
    /// [`Cost::cycles`] with every record up to `at` counted (`None`: not passed yet).
    cost: Option<f64>,
}

impl Checked {
    fn new(start: u64, end: u64, at: u64) -> Checked {
        Checked {
            start,
            end,
            at,
            cost: None,
        }
    }

    /// The cost up to `x` (its `at` or a time the walk is at: `now`, counted so far).
    fn cost_at(&self, x: u64, t: u64, now: f64) -> f64 {
        if x >= t {
            now
        } else {
            self.cost.unwrap_or(now)
        }
    }
}

/// The cycles of a core's own profiler records (their known cost per kind, module
/// `records`), counted as the ring is walked in time order: zones at their open (a zone's
/// cost is split between its open and its close), marks at their time, both only inside
/// their op's (latest) KERNEL zone. A signal's cost is what was counted between the
/// core's last wait before it (or its KERNEL start) and it: the count at those two times,
/// the first taken as the walk passes it (the times it can be are known before: a
/// KERNEL zone's start, a wait's end). The start only moves forward from one signal to
/// the next.
#[derive(Default)]
struct Cost {
    /// Counted so far.
    cycles: f64,
    /// The count at cycle 0 (once the walk passed it).
    at_zero: Option<f64>,
    /// The count the stretch before a signal starts from (never back).
    since: f64,
    /// Ops whose latest KERNEL start the walk has not passed yet.
    pending: Vec<u32>,
}

impl Collector {
    /// Whether nothing was collected.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.traces.is_empty()
    }

    /// A ring begins: nothing carried from the one before.
    pub(super) fn begin_ring(&mut self) {
        self.ring = InRing::default();
    }

    /// The ring's last piece was added.
    pub(super) fn end_ring(&mut self) {
        self.ring = InRing::default();
    }

    /// The walk reaches time `t`: the counts at the times it passed are taken.
    fn pass(&mut self, t: u64) {
        let r = &mut self.ring;
        let now = r.cost.cycles;
        if t > 0 {
            r.cost.at_zero.get_or_insert(now);
        }
        for w in [&mut r.latest_wait, &mut r.earlier_wait]
            .into_iter()
            .flatten()
        {
            if w.cost.is_none() && w.at < t {
                w.cost = Some(now);
            }
        }
        let kernels = &mut r.kernels;
        r.cost.pending.retain(|op| match kernels.get_mut(op) {
            Some(k) if k.at < t => {
                k.cost.get_or_insert(now);
                false
            }
            Some(_) => true,
            None => false,
        });
    }

    /// Whether a record of `op` from `a` to `b` is inside its op's latest KERNEL zone.
    fn inside(&self, op: Option<u32>, a: u64, b: u64) -> bool {
        op.and_then(|op| self.ring.kernels.get(&op))
            .is_some_and(|k| a >= k.start && b <= k.end)
    }

    /// One zone of the ring `chip`/`tile`/`risc`, in opening order: its KERNEL span,
    /// outermost waits and stalls, and its records' cost.
    pub(super) fn zone(
        &mut self,
        p: &Profile,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
        z: &Zone,
        kind: &impl Fn(u32) -> LabelKind,
    ) {
        self.pass(z.start_cycles);
        let k = kind(z.site);
        if matches!(k, LabelKind::Other | LabelKind::Wait(_))
            && self.inside(z.op, z.start_cycles, z.end_cycles)
        {
            let arch = p.readout.geometry().arch;
            self.ring.cost.cycles +=
                super::records::cycles(super::records::zone_record(z.value), arch);
        }
        let r = &mut self.ring;
        if matches!(k, LabelKind::Wait(_) | LabelKind::Stall)
            && r.latest_wait.is_none_or(|w| z.start_cycles >= w.end)
        {
            let w = Checked::new(z.start_cycles, z.end_cycles, z.end_cycles);
            if r.latest_wait.is_some_and(|l| l.start < z.start_cycles) {
                r.earlier_wait = r.latest_wait;
            }
            r.latest_wait = Some(w);
        }
        r.open.retain(|&(e, _)| e > z.start_cycles);
        r.open.push((z.end_cycles, z.site));
        let Some(op) = z.op else { return };
        let core = CoreId { tile, risc };
        let common = on_common_base(p, chip, tile);
        let wait = match k {
            LabelKind::Kernel => {
                r.kernels.insert(
                    op,
                    Checked::new(z.start_cycles, z.end_cycles, z.start_cycles),
                );
                if !r.cost.pending.contains(&op) {
                    r.cost.pending.push(op);
                }
                let t = self.traces.entry(op).or_default();
                let (a, b) = (common(z.start_cycles), common(z.end_cycles));
                let k = t.kernels.entry(core).or_insert((a, b));
                *k = (k.0.min(a), k.1.max(b));
                return;
            }
            LabelKind::Wait(w) => Some(w),
            LabelKind::Stall => None,
            _ => return,
        };
        let end = r.wait_end.entry(op).or_insert(0);
        if z.start_cycles < *end {
            return; // inside a wait already on the path
        }
        *end = z.end_cycles;
        if !self.budget.room(op) {
            return;
        }
        self.traces.entry(op).or_default().waits.push(WaitSpan {
            core,
            start: common(z.start_cycles),
            end: common(z.end_cycles),
            wait,
            site: z.site,
        });
    }

    /// The ring's marks at one time (every zone opening at or before it walked already):
    /// their records' cost, then its signals, each with the innermost zone open at it and
    /// the profiler's own cycles before it.
    pub(super) fn marks(
        &mut self,
        p: &Profile,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
        marks: &[Mark],
        kind: &impl Fn(u32) -> LabelKind,
    ) {
        let Some(t) = marks.first().map(|m| m.cycles) else {
            return;
        };
        self.pass(t);
        let arch = p.readout.geometry().arch;
        for m in marks {
            if self.inside(m.op, m.cycles, m.cycles) {
                let signal = matches!(kind(m.site), LabelKind::Signal(_));
                let (rk, n) = super::records::mark_record(m.kind, signal);
                self.ring.cost.cycles += n * super::records::cycles(rk, arch);
            }
        }
        let core = CoreId { tile, risc };
        let common = on_common_base(p, chip, tile);
        for m in marks {
            let (Some(op), MarkKind::Event, LabelKind::Signal(signal)) =
                (m.op, m.kind, kind(m.site))
            else {
                continue;
            };
            let profiler = self.before(op, m.cycles);
            let r = &mut self.ring;
            r.open.retain(|&(e, _)| e >= m.cycles);
            let zone = r.open.last().map(|&(_, site)| site);
            if !self.budget.room(op) {
                continue;
            }
            self.traces.entry(op).or_default().signals.push(SignalMark {
                core,
                at: common(m.cycles),
                signal,
                site: m.site,
                zone,
                profiler,
                executed: None,
            });
        }
    }

    /// The records' cycles from the core's last wait before `t` (or the KERNEL start of op
    /// `op`) to `t` (the walk at `t`, its marks at `t` counted).
    fn before(&mut self, op: u32, t: u64) -> u64 {
        let r = &mut self.ring;
        let now = r.cost.cycles;
        let wait = r
            .latest_wait
            .filter(|w| w.start < t)
            .or(r.earlier_wait.filter(|w| w.start < t));
        let kernel = r.kernels.get(&op);
        let from_wait = wait.map(|w| (w.end.min(t), w.cost_at(w.end, t, now)));
        let from_kernel = kernel.map(|k| (k.start, k.cost_at(k.start, t, now)));
        let zero = (
            0,
            if t > 0 {
                r.cost.at_zero.unwrap_or(now)
            } else {
                now
            },
        );
        let since = [from_wait, from_kernel]
            .into_iter()
            .flatten()
            .fold(zero, |a, b| if b.0 > a.0 { b } else { a });
        r.cost.since = r.cost.since.max(since.1);
        (now - r.cost.since).max(0.0).round() as u64
    }

    /// The critical path of each op that has KERNEL spans and at least one typed wait or
    /// signal.
    pub(super) fn finish(mut self, p: &Profile) -> BTreeMap<u32, CriticalPath> {
        self.add_held(p);
        self.add_threads(p);
        self.traces
            .into_iter()
            .filter(|(_, t)| {
                !t.kernels.is_empty()
                    && (!t.signals.is_empty() || t.waits.iter().any(|w| w.wait.is_some()))
            })
            .map(|(op, t)| {
                let mut c = build(p, op, &t);
                c.left_out = self.budget.left_out.get(&op).copied().unwrap_or(0);
                (op, c)
            })
            .collect()
    }
}

impl Collector {
    /// The emulator's held stretches on another TRISC's work (the op log's `held` lines),
    /// outside each core's typed waits and stalls, as [`critpath::HeldSpan`]s.
    fn add_held(&mut self, p: &Profile) {
        let holds = super::held::index(p.oplog.as_ref());
        if holds.is_empty() {
            return;
        }
        for (&op, t) in self.traces.iter_mut() {
            let o = &p.ops[op as usize];
            let cores: Vec<CoreId> = t.kernels.keys().copied().collect();
            for core in cores {
                let Some(spans) = holds.get(&(o.chip, o.run, core.tile, core.risc)) else {
                    continue;
                };
                let common = on_common_base(p, o.chip, core.tile);
                let mut covered: Vec<(u64, u64)> = t
                    .waits
                    .iter()
                    .filter(|w| w.core == core)
                    .map(|w| (w.start, w.end))
                    .collect();
                covered.sort_unstable();
                for &&(start, cycles, ref why) in spans {
                    let super::held::HeldOn::Other(_, Some(by)) =
                        super::held::classify(why, core.risc)
                    else {
                        continue;
                    };
                    let (s, e) = (common(start), common(start.saturating_add(cycles as u64)));
                    let by = CoreId {
                        tile: core.tile,
                        risc: by,
                    };
                    for (a, b) in super::held::outside(s, e, &covered) {
                        if self.budget.room(op) {
                            t.held.push(critpath::HeldSpan {
                                core,
                                start: a,
                                end: b,
                                by,
                            });
                        }
                    }
                }
            }
        }
    }
}

impl Collector {
    /// The emulator's log of each TRISC's Tensix thread (the op log's `held` lines): the
    /// stretches its gate waited on another TRISC's thread, as [`OpTrace::gates`] (`SrcA`
    /// data names unpack; a Tensix semaphore names the thread that moved it last in the
    /// stretch, [`releaser`]), and the cycle it executed each `SEMPOST`, given to the post
    /// its TRISC recorded when it pushed it (the k-th recorded post of a semaphore is the
    /// k-th executed: a thread executes in order). When the counts differ (records lost or
    /// left out) the posts keep their push.
    fn add_threads(&mut self, p: &Profile) {
        let threads = super::held::threads(p.oplog.as_ref());
        if threads.is_empty() {
            return;
        }
        for (&op, t) in self.traces.iter_mut() {
            let o = &p.ops[op as usize];
            let cores: Vec<CoreId> = t.kernels.keys().copied().collect();
            // The recorded posts by (core, semaphore).
            let mut posts: HashMap<(CoreId, u32), Vec<usize>> = HashMap::new();
            for (i, s) in t.signals.iter().enumerate() {
                if let crate::sites::Signal::TensixSemPost(n) = s.signal {
                    posts.entry((s.core, n)).or_default().push(i);
                }
            }
            for core in cores {
                let Some(th) = threads.get(&(o.chip, o.run, core.tile, core.risc)) else {
                    continue;
                };
                let common = on_common_base(p, o.chip, core.tile);
                for &&(start, cycles, ref why) in &th.gate {
                    let end = start.saturating_add(cycles as u64);
                    let by = match super::held::classify(why, core.risc) {
                        super::held::HeldOn::Other(_, Some(by)) => Some(by),
                        _ => why
                            .strip_prefix("tensix-fifo: semaphore ")
                            .and_then(|n| n.parse::<u32>().ok())
                            .and_then(|n| {
                                let thread = |r: Risc| threads.get(&(o.chip, o.run, core.tile, r));
                                releaser(thread, core.risc, n, start, end)
                            }),
                    };
                    let Some(by) = by else {
                        continue;
                    };
                    if !self.budget.room(op) {
                        continue;
                    }
                    t.gates.push(critpath::HeldSpan {
                        core,
                        start: common(start),
                        end: common(end),
                        by: CoreId {
                            tile: core.tile,
                            risc: by,
                        },
                    });
                }
                let mut executed: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
                for &(at, sem) in &th.posts {
                    executed.entry(sem).or_default().push(common(at));
                }
                for (sem, executed) in executed {
                    let Some(recorded) = posts.get_mut(&(core, sem)) else {
                        continue;
                    };
                    if recorded.len() != executed.len() {
                        continue;
                    }
                    recorded.sort_by_key(|&i| t.signals[i].at);
                    for (&i, e) in recorded.iter().zip(executed) {
                        t.signals[i].executed = Some(e);
                    }
                }
            }
        }
    }
}

/// The TRISC whose thread let a gate held on Tensix semaphore `n` from `start` to `end`
/// (wall clock) go: of the tile's other threads (`thread`), the one that executed the
/// latest `SEMPOST` or `SEMGET` of `n` in that time (a wait for a value above zero is let go
/// by a post, one for a value below the maximum by a get); `None` when none did.
fn releaser<'a>(
    thread: impl Fn(Risc) -> Option<&'a super::held::Thread<'a>>,
    waiting: Risc,
    n: u32,
    start: u64,
    end: u64,
) -> Option<Risc> {
    [Risc::Trisc0, Risc::Trisc1, Risc::Trisc2]
        .into_iter()
        .filter(|&r| r != waiting)
        .filter_map(|r| {
            let th = thread(r)?;
            let at = th
                .posts
                .iter()
                .chain(&th.gets)
                .filter(|&&(at, sem)| sem == n && (start..=end).contains(&at))
                .map(|&(at, _)| at)
                .max()?;
            Some((at, r))
        })
        .max()
        .map(|(_, r)| r)
}

/// `tile`'s cycle counts on the chip's common base ([`offset`]), 0 at the least.
fn on_common_base(p: &Profile, chip: u32, tile: NocCoord) -> impl Fn(u64) -> u64 {
    let off = offset(p, chip, tile);
    move |c| (c as i64 - off).max(0) as u64
}

/// How far `tile`'s cycle counter runs ahead of the chip's common base (the timebase's
/// default counter at its reference time), whole cycles: `common = tile cycles - offset`.
/// The critical path's cycles are on that base, so times of different tiles compare.
fn offset(p: &Profile, chip: u32, tile: riscv_linker::NocCoord) -> i64 {
    p.timebase.chips.get(&chip).map_or(0, |c| {
        let at = c
            .tile_cycles_at_reference
            .get(&tile)
            .copied()
            .unwrap_or(c.default_cycles_at_reference);
        (at - c.default_cycles_at_reference).round() as i64
    })
}

/// A core in the output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CoreRef {
    /// NoC0 `x-y`.
    pub tile: String,
    /// `BRISC`, `TRISC_1`, ...
    pub risc: String,
    /// The kernel it runs (its ELF's stem) or its role.
    pub stage: String,
}

/// The signal that ended a wait on the path.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SignalRef {
    /// Where it was recorded.
    pub core: CoreRef,
    /// What it released (`CB 4 push (data ready)`).
    pub signal: String,
    /// The signal site's name, file and line.
    pub name: String,
    /// Source file of the signal site.
    pub file: String,
    /// Source line of the signal site.
    pub line: u32,
    /// The innermost zone open on its core when it was recorded.
    pub zone: Option<String>,
    /// When, device cycles.
    pub cycles: u64,
    /// A Tensix semaphore post: when its Tensix thread executed it (the emulator's log),
    /// device cycles; it released the semaphore then, not when it was recorded (pushed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executed_cycles: Option<u64>,
}

/// One step of a critical path.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PathSegment {
    /// The core the path is on.
    pub core: CoreRef,
    /// `busy` or `wait`.
    pub kind: &'static str,
    /// `Tensix thread` when the busy work is the core's Tensix thread's (working through
    /// what its TRISC queued before the post `signal`, up to its execution, or, without a
    /// signal, up to the end of the TRISC's TTSync wait), not the RISC's. Not written
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<&'static str>,
    /// What it waited on (`CB 4 front (data)`, `NoC read barrier`, `profiler stall`,
    /// `launch`: the core had not started yet); `None` when busy.
    pub resource: Option<String>,
    /// The wait zone's name and source line; `None` when busy.
    pub zone: Option<String>,
    /// The signal that ended the wait, `None` when busy or unmatched.
    pub signal: Option<SignalRef>,
    /// Why a wait has no signal.
    pub unmatched: Option<&'static str>,
    /// Device cycles of the op's chip, on its common base (each tile's counter shifted by
    /// its offset from the chip's reference, so that tiles compare).
    pub start_cycles: u64,
    /// End, device cycles.
    pub end_cycles: u64,
    /// Its length in cycles.
    pub cycles: u64,
    /// Its length in host ns.
    pub ns: f64,
}

/// Waits of one site that no signal ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UnmatchedWait {
    /// The waiting core.
    pub core: CoreRef,
    /// The wait zone's name.
    pub zone: String,
    /// Its source line, `file:line`.
    pub at: String,
    /// What it waits on.
    pub resource: String,
    /// Why none of its waits was matched.
    pub reason: &'static str,
    /// How many.
    pub count: u64,
}

/// Signals of one site that ended no wait (the other side was not waiting then).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UnmatchedSignal {
    /// The signalling core.
    pub core: CoreRef,
    /// The signal's name.
    pub name: String,
    /// Its source line, `file:line`.
    pub at: String,
    /// How many.
    pub count: u64,
}

/// An op's critical path and how its waits matched.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CriticalPath {
    /// The op's first KERNEL start, device cycles.
    pub start_cycles: u64,
    /// Its last KERNEL end, device cycles.
    pub end_cycles: u64,
    /// `end - start`: what the segments' cycles add up to.
    pub cycles: u64,
    /// The same in host ns.
    pub ns: f64,
    /// The walk stopped early (see `critpath::Path::truncated`).
    pub truncated: bool,
    /// In time order.
    pub segments: Vec<PathSegment>,
    /// Waits matched to the signal that ended them.
    pub matched_waits: u64,
    /// Waits no signal ended, per site.
    pub unmatched_waits: Vec<UnmatchedWait>,
    /// Signals that ended no wait, per site.
    pub(crate) unmatched_signals: Vec<UnmatchedSignal>,
    /// Waits and signals of the op left out (a run holding more than `PATH_EVENTS`, 1 Mi): the
    /// path is walked over those kept, and stops early. Not written when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) left_out: u64,
    /// What the op's counters (`--counters`) say of the path's compute time: how much of
    /// the TRISCs' busy cycles on it the FPU bank's count over the op can at most account
    /// for. `None` without such a counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn build(p: &Profile, op: u32, t: &OpTrace) -> CriticalPath {
    let chip = p.ops[op as usize].chip;
    let core_ref = |c: CoreId| CoreRef {
        tile: tile_name(c.tile),
        risc: c.risc.name().to_string(),
        stage: stage_name(p, op, c.tile, c.risc),
    };
    let label = |site: u32| p.labels.get(site as usize);
    let name = |site: u32| label(site).map_or_else(|| format!("site {site}"), |l| l.name.clone());
    let at = |site: u32| label(site).map_or_else(String::new, |l| format!("{}:{}", l.file, l.line));
    let raw = |c: CoreId, x: u64| (x as i64 + offset(p, chip, c.tile)).max(0) as u64;
    let ns = |c: CoreId, a: u64, b: u64| {
        p.timebase
            .duration_ns(chip, c.tile, raw(c, a), raw(c, b))
            .unwrap_or(f64::NAN)
    };
    let signal_ref = |si: usize| {
        let sg = &t.signals[si];
        let l = label(sg.site);
        SignalRef {
            core: core_ref(sg.core),
            signal: sg.signal.to_string(),
            name: name(sg.site),
            file: l.map_or_else(String::new, |l| l.file.clone()),
            line: l.map_or(0, |l| l.line),
            zone: sg.zone.map(name),
            cycles: sg.at,
            executed_cycles: sg.executed,
        }
    };
    let m = critpath::match_waits(t);
    let path = critpath::critical_path(t, &m);
    let segments = path
        .steps
        .iter()
        .map(|s| {
            let on = matches!(s.kind, StepKind::Coprocessor { .. }).then_some("Tensix thread");
            let (kind, resource, zone, signal, unmatched) = match s.kind {
                StepKind::Busy => ("busy", None, None, None, None),
                StepKind::Coprocessor { post } => ("busy", None, None, post.map(signal_ref), None),
                StepKind::Launch => ("wait", Some("launch".to_string()), None, None, None),
                StepKind::Wait { wait, signal } => {
                    let w = &t.waits[wait];
                    let resource = w
                        .wait
                        .map_or_else(|| "profiler stall".to_string(), |w| w.to_string());
                    let zone = Some(format!("{} ({})", name(w.site), at(w.site)));
                    match signal {
                        Ok(si) => ("wait", Some(resource), zone, Some(signal_ref(si)), None),
                        Err(e) => (
                            "wait",
                            Some(resource),
                            zone,
                            None,
                            w.wait.map(|_| e.reason()),
                        ),
                    }
                }
            };
            PathSegment {
                core: core_ref(s.core),
                kind,
                on,
                resource,
                zone,
                signal,
                unmatched,
                start_cycles: s.start,
                end_cycles: s.end,
                cycles: s.end - s.start,
                ns: ns(s.core, s.start, s.end),
            }
        })
        .collect();
    let (uw, us) = critpath::unmatched(t, &m);
    let matched_waits = m.iter().filter(|r| r.is_ok()).count() as u64;
    let unmatched_waits = uw
        .into_iter()
        .map(|((c, site, why), count)| UnmatchedWait {
            core: core_ref(c),
            zone: name(site),
            at: at(site),
            resource: t
                .waits
                .iter()
                .find(|w| w.site == site && w.core == c)
                .and_then(|w| w.wait)
                .map_or_else(String::new, |w| w.to_string()),
            reason: why.reason(),
            count,
        })
        .collect();
    let unmatched_signals = us
        .into_iter()
        .map(|((c, site), count)| UnmatchedSignal {
            core: core_ref(c),
            name: name(site),
            at: at(site),
            count,
        })
        .collect();
    let (a, b) = path.span;
    let any = path.steps.first().map(|s| s.core);
    CriticalPath {
        start_cycles: a,
        end_cycles: b,
        cycles: b - a,
        ns: any.map_or(0.0, |c| ns(c, a, b)),
        truncated: path.truncated,
        segments,
        matched_waits,
        unmatched_waits,
        unmatched_signals,
        left_out: 0,
        counters: None,
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// `stage (RISC x-y)`.
fn who(c: &CoreRef) -> String {
    format!("{} ({} {})", c.stage, c.risc, c.tile)
}

/// The path's time by who spent it, largest first: busy cycles per core (`stage (RISC
/// x-y)`; its Tensix thread's apart, `stage's Tensix thread (RISC x-y)`), and wait cycles
/// per (core, resource, what ended the wait).
pub(crate) type Shares = (Vec<(String, u64)>, Vec<((String, String, String), u64)>);

/// [`Shares`] of `c`.
pub(crate) fn shares(c: &CriticalPath) -> Shares {
    let mut busy: BTreeMap<String, u64> = BTreeMap::new();
    let mut waits: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for s in &c.segments {
        if s.kind == "busy" {
            let w = match s.on {
                Some(on) => format!("{}'s {on} ({} {})", s.core.stage, s.core.risc, s.core.tile),
                None => who(&s.core),
            };
            *busy.entry(w).or_default() += s.cycles;
        } else {
            let by = match (&s.signal, s.unmatched) {
                (Some(r), _) => format!(
                    "ended by {} `{}`{} at {}:{}",
                    who(&r.core),
                    r.name,
                    r.zone
                        .as_ref()
                        .map_or_else(String::new, |z| format!(" in {z}")),
                    r.file,
                    r.line
                ),
                (None, Some(r)) if r == critpath::Unmatched::Ready.reason() => {
                    "ready when it began".to_string()
                }
                (None, Some(_)) => "unmatched".to_string(),
                (None, None) => String::new(),
            };
            *waits
                .entry((who(&s.core), s.resource.clone().unwrap_or_default(), by))
                .or_default() += s.cycles;
        }
    }
    let mut busy: Vec<(String, u64)> = busy.into_iter().collect();
    busy.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut waits: Vec<((String, String, String), u64)> = waits.into_iter().collect();
    waits.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (busy, waits)
}

/// One readable paragraph: where the op's time went along its critical path.
pub fn paragraph(op: &str, run: u32, c: &CriticalPath) -> String {
    let (busy, waits) = shares(c);
    let mut text = format!(
        "{op} (run {run}): critical path {} cycles ({:.0} ns), {} segment(s)",
        c.cycles,
        c.ns,
        c.segments.len()
    );
    let shown = |v: u64| pct(v, c.cycles) >= 1.0;
    let b: Vec<String> = busy
        .iter()
        .filter(|(_, v)| shown(*v))
        .map(|(w, v)| format!("{w} {:.0}%", pct(*v, c.cycles)))
        .collect();
    if !b.is_empty() {
        text.push_str(&format!("; busy: {}", b.join(", ")));
    }
    let w: Vec<String> = waits
        .iter()
        .filter(|(_, v)| shown(*v))
        .map(|((core, res, by), v)| {
            let by = if by.is_empty() {
                String::new()
            } else {
                format!(", {by}")
            };
            format!("{core} on {res} {:.0}%{by}", pct(*v, c.cycles))
        })
        .collect();
    if !w.is_empty() {
        text.push_str(&format!("; waiting: {}", w.join("; ")));
    }
    if let Some(n) = &c.counters {
        text.push_str(&format!("; {n}"));
    }
    let uw: u64 = c.unmatched_waits.iter().map(|u| u.count).sum();
    let us: u64 = c.unmatched_signals.iter().map(|u| u.count).sum();
    text.push_str(&format!(
        ". {} wait(s) matched to their signal, {uw} unmatched{}; {us} signal(s) ended no wait.",
        c.matched_waits,
        if uw == 0 {
            String::new()
        } else {
            format!(
                " ({})",
                c.unmatched_waits
                    .iter()
                    .map(|u| format!("{}x {} on {}: {}", u.count, u.zone, who(&u.core), u.reason))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    ));
    if c.truncated {
        text.push_str(" (the walk stopped early: the start is one busy segment.)");
    }
    wrap(&text, 100)
}

/// `text` wrapped at `width` columns, indented by 2, continuation lines by 4.
pub(crate) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = "  ".to_string();
    let mut fresh = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !fresh && line.len() + 1 + word.len() > width {
            out.push_str(&line);
            out.push('\n');
            line = "    ".to_string();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// An arrow of a critical path: from a signal to the end of the wait on the path it ended,
/// on another core (the hand-overs: the HTML page's arrows, the Perfetto trace's flows).
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow {
    /// The signalling core's lane.
    pub from: Lane,
    /// The signal's host ns, whole (exact at any count: [`crate::sink::exact`]; 0 when it
    /// is not a number).
    pub(crate) from_ns: i128,
    /// The waiting core's lane.
    pub to: Lane,
    /// The wait's end, whole host ns (as `from_ns`).
    pub(crate) to_ns: i128,
    /// The signal's name.
    pub signal: String,
    /// What the wait waited on.
    pub resource: String,
}

/// Every hand-over of every op's critical path, in path order: from the signal (a Tensix
/// post's execution, when known) to the end of the wait it ended.
pub fn arrows(p: &Profile, a: &super::Analysis) -> Vec<Arrow> {
    let lane = |chip: u32, c: &CoreRef| -> Option<Lane> {
        let (x, y) = c.tile.split_once('-')?;
        Some(Lane {
            chip,
            tile: NocCoord {
                x: x.parse().ok()?,
                y: y.parse().ok()?,
            },
            risc: Risc::ALL.into_iter().find(|r| r.name() == c.risc)?,
            depth: 0,
        })
    };
    let mut out = Vec::new();
    for op in &a.ops {
        let Some(c) = &op.critical_path else { continue };
        for s in &c.segments {
            let Some(sig) = s.signal.as_ref().filter(|g| g.core != s.core) else {
                continue;
            };
            let (Some(from), Some(to)) = (lane(op.chip, &sig.core), lane(op.chip, &s.core)) else {
                continue;
            };
            let raw = |t, x: u64| (x as i64 + offset(p, op.chip, t)).max(0) as u64;
            let whole = |tile: NocCoord, cycles: u64| {
                let clock = p.timebase.tile_clock(op.chip, tile)?;
                Some(exact::whole_at(Some(&clock), cycles, clock.host_ns(cycles)).unwrap_or(0))
            };
            let (Some(from_ns), Some(to_ns)) = (
                // A Tensix post released its semaphore when its thread executed it.
                whole(
                    from.tile,
                    raw(from.tile, sig.executed_cycles.unwrap_or(sig.cycles)),
                ),
                whole(to.tile, raw(to.tile, s.end_cycles)),
            ) else {
                continue;
            };
            out.push(Arrow {
                from,
                from_ns,
                to,
                to_ns,
                signal: sig.name.clone(),
                resource: s.resource.clone().unwrap_or_default(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::held::Thread;
    use super::*;

    /// Math's thread waits at its gate on Tensix semaphore 0 from 100 to 150: pack's
    /// `SEMGET` at 148 let it go (unpack's post of it at 90 came before the wait, and
    /// math's own post does not count); on semaphore 1 nobody moved it.
    #[test]
    fn a_gate_on_a_semaphore_is_let_go_by_the_latest_post_or_get_of_another_thread() {
        let unpack = Thread {
            posts: vec![(90, 0)],
            ..Thread::default()
        };
        let math = Thread {
            posts: vec![(149, 0)],
            ..Thread::default()
        };
        let pack = Thread {
            gets: vec![(120, 0), (148, 0), (160, 0)],
            ..Thread::default()
        };
        let thread = |r: Risc| match r {
            Risc::Trisc0 => Some(&unpack),
            Risc::Trisc1 => Some(&math),
            Risc::Trisc2 => Some(&pack),
            _ => None,
        };
        assert_eq!(
            releaser(thread, Risc::Trisc1, 0, 100, 150),
            Some(Risc::Trisc2)
        );
        assert_eq!(
            releaser(thread, Risc::Trisc1, 0, 80, 95),
            Some(Risc::Trisc0)
        );
        assert_eq!(releaser(thread, Risc::Trisc1, 1, 100, 150), None);
    }
}
