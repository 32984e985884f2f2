//! Who made whom wait: each typed wait matched to the signal that ended it, and the critical
//! path of an op through busy spans and waits across cores and tiles. Plain data and
//! functions; `sink::analysis` collects the input from the ring views and writes the result.
//!
//! # Matching
//!
//! A wait is ended by a signal that releases its resource ([`Signal::releases`]) in its
//! scope, recorded while it waited (`start <= at <= end`, device cycles of the op's chip):
//!
//! | wait | signal | scope |
//! | --- | --- | --- |
//! | `cb_front(N)` | `cb_push(N)` | the same tile |
//! | `cb_back(N)` | `cb_pop(N)` | the same tile |
//! | `semaphore(N)` | `sem_inc(N)`, `sem_set(N)` | any tile of the chip (over the NoC) |
//! | `sync(N)` | `sync(N)` | any tile of the chip |
//! | `noc_read`, `noc_write`, `noc_atomic` | `noc_*_done` | the same core (its own transactions) |
//! | `tensix_sem(N)` | `tensix_sem_post(N)` | the same tile (a TRISC pushed the `SEMPOST`) |
//!
//! A Tensix semaphore counts, so its waits are paired with its posts by count instead
//! (`tensix_takes`). A post is recorded when a TRISC pushes it to its Tensix thread; the
//! coprocessor executes it when the thread reaches it, after the work queued before it. On
//! the emulator its log says when ([`SignalMark::executed`]): the post released the
//! semaphore then, and that is the time matched and walked. Without it (a card) the push is
//! the time: a post pushed while its take waited made it wait (the pushing TRISC was late);
//! one pushed before the take began was queued behind its thread's work, and the wait is on
//! the path whole on the waiting core (`--lines` explains it). TTSync has no signal (the
//! thread's own work ends it).
//!
//! Of those, the latest before the wait's end ended it: a consumer polls, so the last
//! release before it saw enough is the one it waited for. A wait whose latest candidate came
//! before it began did not block (`ready`: the data or space was there), nor did a
//! `cb_back` wait before any pop of its CB (the CB's initial space), nor a `tensix_sem` wait
//! before any post of its semaphore (its `SEMINIT` value). Two candidates at
//! that same cycle on different cores are ambiguous; such a wait, and one with no candidate
//! at all, is unmatched, counted per site with the reason, never guessed. A signal that ended no wait
//! (the other side was not waiting) is counted per site too.
//!
//! # The path
//!
//! From the op's last end (the core whose KERNEL zone ends last) backwards: on the current
//! core, the time after its latest wait is busy; a wait matched to a signal on another core
//! is on the path only from the signal to the wait's end (before the signal the waiter had
//! slack), and the path continues on the signalling core at the signal; a wait matched to its
//! own core's signal (the NoC), to a Tensix post pushed before it began, or unmatched, and a
//! profiler stall, is on the path whole, on the same core. A stretch the emulator held a
//! core on another TRISC's work ([`HeldSpan`]: `SrcA` data from unpack, a free bank from
//! math) ends like a wait signalled by that TRISC at its end: the path continues there. A
//! wait the signalling core's own profiler records made late is not a hand-over: when the
//! records it wrote since its last wait (their known cost) add up to
//! at least the signal's lateness (from the wait's start to the signal), the core would not
//! have waited without the profiler, and the wait is on the path whole, on the waiting core,
//! so that instrumenting a kernel more does not move its path ([`SignalMark::profiler`]).
//! A Tensix post whose execution is known crosses into the posting TRISC's *thread*: from
//! the execution back to the push the thread worked through what was queued before it
//! ([`StepKind::Coprocessor`]), unless its wait gate was held on another TRISC's thread in
//! that time ([`OpTrace::gates`]: `SrcA` data from unpack): then the thread's work runs back
//! to the end of that stretch and the path continues on the TRISC it waited for, there.
//! Otherwise it continues on the posting TRISC at the push. A TTSync wait (a TRISC waiting
//! for its own thread to finish) goes the same way: its thread worked up to the wait's end,
//! from the end of its gate's latest stretch on another TRISC's thread inside the wait, and
//! the path continues on that TRISC there; with no such stretch the wait is whole, here.
//! Reaching a core's KERNEL start before the op's first start, the rest is a
//! `launch` wait (that core had not started). Each step ends where the previous began, so
//! the steps tile the op's span: they add up to its duration exactly.

use crate::sites::{Signal, Wait};
use riscv_linker::{NocCoord, Risc};
use std::collections::{BTreeMap, HashMap};

/// A core of the op's chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CoreId {
    /// The tile (NoC0).
    pub tile: NocCoord,
    /// The RISC.
    pub risc: Risc,
}

/// An outermost wait (or profiler stall) on a core, device cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitSpan {
    /// The waiting core.
    pub core: CoreId,
    /// Its start, device cycles.
    pub start: u64,
    /// Its end, device cycles.
    pub end: u64,
    /// The resource; `None`: a `PROFILER-STALL` (the core waited for the host's drain).
    pub wait: Option<Wait>,
    /// The wait zone's label (an index the caller gives meaning).
    pub site: u32,
}

/// A signal recorded on a core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalMark {
    /// The signalling core.
    pub core: CoreId,
    /// When, device cycles.
    pub at: u64,
    /// What it releases.
    pub signal: Signal,
    /// The signal's label.
    pub site: u32,
    /// The label of the innermost zone open on its core when it was recorded.
    pub zone: Option<u32>,
    /// Cycles of its core's own profiler records (their known cost) from that core's last
    /// wait before the signal, or its KERNEL start, to the signal: see [`critical_path`].
    pub profiler: u64,
    /// A Tensix semaphore post: the cycle its Tensix thread executed it (the emulator's
    /// log), `None` when unknown (a card) or for any other signal.
    pub executed: Option<u64>,
}

impl SignalMark {
    /// When it released its resource: a Tensix post when its thread executed it (known),
    /// anything else when it was recorded.
    pub fn released(&self) -> u64 {
        self.executed.unwrap_or(self.at)
    }
}

/// A stretch the emulator held a core on another stage's work (outside its typed waits),
/// and the core whose work it waited for: like a wait ended by a signal of that core at the
/// stretch's end, so the path crosses to that core there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldSpan {
    /// The held core.
    pub core: CoreId,
    /// Its start, device cycles.
    pub start: u64,
    /// Its end, device cycles.
    pub end: u64,
    /// The core whose work it waited for (on the same tile).
    pub by: CoreId,
}

/// Everything about one op (one chip, one run) the matching and the path need.
#[derive(Clone, Debug, Default)]
pub struct OpTrace {
    /// Each core's KERNEL span, device cycles.
    pub kernels: BTreeMap<CoreId, (u64, u64)>,
    /// Outermost waits and stalls, any order.
    pub waits: Vec<WaitSpan>,
    /// Signals, any order.
    pub signals: Vec<SignalMark>,
    /// Held stretches (the emulator's), any order.
    pub held: Vec<HeldSpan>,
    /// Stretches a TRISC's Tensix thread's wait gate held an instruction on another TRISC's
    /// thread (the emulator's: `SrcA` data from unpack, a free bank from math), any order:
    /// `core` is the waiting thread's TRISC, `by` the other. The stretches of one thread do
    /// not overlap.
    pub gates: Vec<HeldSpan>,
}

/// Why a wait has no signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unmatched {
    /// No signal of its resource and scope was recorded while it waited.
    NoSignal,
    /// A TTSync wait, or a Tensix semaphore wait whose post no TRISC recorded: the
    /// coprocessor releases it (the line profile, `--lines`, says what the thread waited on).
    Coprocessor,
    /// Signals on two cores at the same, latest cycle.
    Ambiguous,
    /// The resource was released before the wait began, or is a CB's space that no pop had
    /// to free yet (a producer's first reserves): it did not block (the time is the check's
    /// own).
    Ready,
}

impl Unmatched {
    /// The reason in words.
    pub fn reason(self) -> &'static str {
        match self {
            Unmatched::NoSignal => "no signal of its resource was recorded while it waited",
            Unmatched::Coprocessor => {
                "released by the coprocessor, unrecorded (TTSync, or no `tensix_sem_post`)"
            }
            Unmatched::Ambiguous => "signals on two cores at the same cycle could have ended it",
            Unmatched::Ready => "its resource was free when it began (it did not block)",
        }
    }
}

/// The signal that ended each wait of an [`OpTrace`] (by index), or why none.
pub(crate) type Matching = Vec<Result<usize, Unmatched>>;

/// The scope a wait and its signals share: what must be equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Scope {
    Tile(NocCoord),
    Chip,
    Core(CoreId),
}

/// The resource key of a wait or signal: (scope, kind, index).
fn wait_key(w: Wait, core: CoreId) -> (Scope, u8, u32) {
    match w {
        Wait::CbFront(n) => (Scope::Tile(core.tile), 0, n),
        Wait::CbBack(n) => (Scope::Tile(core.tile), 1, n),
        Wait::Semaphore(n) => (Scope::Chip, 2, n),
        Wait::Sync(n) => (Scope::Chip, 3, n),
        Wait::NocRead => (Scope::Core(core), 4, 0),
        Wait::NocWrite => (Scope::Core(core), 5, 0),
        Wait::NocAtomic => (Scope::Core(core), 6, 0),
        Wait::TensixSem(n) => (Scope::Tile(core.tile), 7, n),
        Wait::TtSync => (Scope::Core(core), 8, 0),
    }
}

fn signal_key(s: Signal, core: CoreId) -> (Scope, u8, u32) {
    match s {
        Signal::CbPush(n) => (Scope::Tile(core.tile), 0, n),
        Signal::CbPop(n) => (Scope::Tile(core.tile), 1, n),
        Signal::SemInc(n) | Signal::SemSet(n) => (Scope::Chip, 2, n),
        Signal::Sync(n) => (Scope::Chip, 3, n),
        Signal::NocReadDone => (Scope::Core(core), 4, 0),
        Signal::NocWriteDone => (Scope::Core(core), 5, 0),
        Signal::NocAtomicDone => (Scope::Core(core), 6, 0),
        Signal::TensixSemPost(n) => (Scope::Tile(core.tile), 7, n),
    }
}

/// Signals by resource key: (cycle, index into [`OpTrace::signals`]), sorted.
type ByKey = HashMap<(Scope, u8, u32), Vec<(u64, usize)>>;

/// Matches every wait of `t` to the signal that ended it (see the module docs).
pub(crate) fn match_waits(t: &OpTrace) -> Matching {
    let mut by_key: ByKey = HashMap::new();
    for (i, s) in t.signals.iter().enumerate() {
        by_key
            .entry(signal_key(s.signal, s.core))
            .or_default()
            .push((s.released(), i));
    }
    for v in by_key.values_mut() {
        v.sort_unstable();
    }
    let counted = tensix_takes(t, &by_key);
    t.waits
        .iter()
        .enumerate()
        .map(|(wi, w)| {
            let Some(wait) = w.wait else {
                return Err(Unmatched::NoSignal);
            };
            if let Some(m) = counted.get(&wi) {
                return *m;
            }
            // A producer's first reserves find the CB's space free: nobody had to release it.
            let never = if matches!(wait, Wait::CbBack(_)) {
                Unmatched::Ready
            } else if wait.is_coprocessor() {
                Unmatched::Coprocessor
            } else {
                Unmatched::NoSignal
            };
            let cands = by_key.get(&wait_key(wait, w.core)).ok_or(never)?;
            // The last signal at or before the wait's end...
            let n = cands.partition_point(|&(at, _)| at <= w.end);
            let &(at, i) = cands[..n].last().ok_or(never)?;
            // ...recorded while it waited.
            if at < w.start {
                return Err(Unmatched::Ready);
            }
            let other_core = cands[..n]
                .iter()
                .rev()
                .take_while(|c| c.0 == at)
                .any(|&(_, j)| t.signals[j].core != t.signals[i].core);
            if other_core {
                return Err(Unmatched::Ambiguous);
            }
            Ok(i)
        })
        .collect()
}

/// The Tensix semaphore waits of `t` paired with the posts that released them, by count: a
/// semaphore counts, and each wait on it takes one (a TRISC reads it until it is not zero,
/// then takes one with `SEMGET`), so the j-th take on a tile's semaphore is released by its
/// (j - v)-th post, v its initial value (`SEMINIT`): the least v that leaves no take before
/// its post was released (executed by its thread when the emulator says when, else pushed;
/// a semaphore never goes below zero). Takes within v are `ready` (the initial value). A
/// post pushed before its take began was queued behind its thread's work then; it still
/// ended the wait.
fn tensix_takes(t: &OpTrace, posts: &ByKey) -> HashMap<usize, Result<usize, Unmatched>> {
    let mut takes: HashMap<(Scope, u8, u32), Vec<usize>> = HashMap::new();
    for (i, w) in t.waits.iter().enumerate() {
        if let Some(wait @ Wait::TensixSem(_)) = w.wait {
            takes.entry(wait_key(wait, w.core)).or_default().push(i);
        }
    }
    let mut out = HashMap::new();
    for (key, mut waits) in takes {
        let Some(posts) = posts.get(&key) else {
            continue; // No post recorded: the general rule says why (`coprocessor`).
        };
        waits.sort_by_key(|&i| (t.waits[i].end, t.waits[i].start));
        // v: for every take j (1-based), v >= j - (posts released by its end).
        let initial = waits
            .iter()
            .enumerate()
            .map(|(j, &i)| {
                let pushed = posts.partition_point(|&(at, _)| at <= t.waits[i].end);
                (j + 1).saturating_sub(pushed)
            })
            .max()
            .unwrap_or(0);
        for (j, &i) in waits.iter().enumerate() {
            let m = match j.checked_sub(initial) {
                None => Err(Unmatched::Ready),
                Some(k) => Ok(posts[k].1),
            };
            out.insert(i, m);
        }
    }
    out
}

/// One step of a critical path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathStep {
    /// The core the path is on.
    pub core: CoreId,
    /// Its start, device cycles of the op's chip.
    pub start: u64,
    /// Its end, device cycles.
    pub end: u64,
    /// What the core did.
    pub kind: StepKind,
}

/// What the core did during a [`PathStep`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepKind {
    /// Its own work (no typed wait, no stall).
    Busy,
    /// Waiting: the wait (an index into [`OpTrace::waits`]) and the signal that ended it.
    Wait {
        /// Index into [`OpTrace::waits`].
        wait: usize,
        /// Index into [`OpTrace::signals`], or why none.
        signal: Result<usize, Unmatched>,
    },
    /// Before the core's KERNEL zone began: it had not been launched yet.
    Launch,
    /// The core's Tensix thread working through what its TRISC queued: before a Tensix
    /// semaphore post (an index into [`OpTrace::signals`]), up to when it executed the
    /// post, or, for a TTSync wait (`None`), up to the end of the wait: the coprocessor's
    /// work, not the RISC's.
    Coprocessor {
        /// Index into [`OpTrace::signals`]; `None` for a TTSync wait's thread.
        post: Option<usize>,
    },
}

/// The critical path of an op: steps in time order, from its first start to its last
/// end. Empty without KERNEL spans.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path {
    /// In time order, each starting where the previous ended.
    pub steps: Vec<PathStep>,
    /// The op's first KERNEL start and last KERNEL end, device cycles.
    pub span: (u64, u64),
    /// The walk stopped early (a cycle of zero-length steps; never seen in practice): the
    /// rest, from the op's start, is one busy segment on the core it stopped on.
    pub truncated: bool,
}

/// A wait or a held stretch of one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// Index into [`OpTrace::waits`].
    Wait(usize),
    /// Index into [`OpTrace::held`].
    Held(usize),
}

/// The critical path of `t` given its matching (see the module docs).
pub fn critical_path(t: &OpTrace, m: &Matching) -> Path {
    let Some(op_start) = t.kernels.values().map(|k| k.0).min() else {
        return Path::default();
    };
    let (&last, &(_, op_end)) = t
        .kernels
        .iter()
        .max_by_key(|(c, k)| (k.1, std::cmp::Reverse(**c)))
        .expect("not empty");
    // Each core's waits and held stretches by start.
    let mut per_core: HashMap<CoreId, Vec<Item>> = HashMap::new();
    for (i, w) in t.waits.iter().enumerate() {
        per_core.entry(w.core).or_default().push(Item::Wait(i));
    }
    for (j, h) in t.held.iter().enumerate() {
        if t.kernels.contains_key(&h.by) && h.by != h.core {
            per_core.entry(h.core).or_default().push(Item::Held(j));
        }
    }
    let span_of = |it: Item| match it {
        Item::Wait(i) => (t.waits[i].start, t.waits[i].end),
        Item::Held(j) => (t.held[j].start, t.held[j].end),
    };
    for v in per_core.values_mut() {
        v.sort_by_key(|&it| span_of(it));
    }
    // Each thread's gate stretches on another thread, by start.
    let mut gates: HashMap<CoreId, Vec<HeldSpan>> = HashMap::new();
    for g in &t.gates {
        if t.kernels.contains_key(&g.by) && g.by != g.core {
            gates.entry(g.core).or_default().push(*g);
        }
    }
    for v in gates.values_mut() {
        v.sort_by_key(|g| (g.start, g.end));
    }
    // The latest stretch `c`'s thread's gate waited on another thread between `from` and
    // `until`, unless crossing at its end would repeat the last crossing (stretches of one
    // thread do not overlap: only the latest starting before `until` can reach past `from`).
    let gate_in = |c: CoreId, from: u64, until: u64, crossed_at: Option<u64>| {
        let on = gates.get(&c).map(Vec::as_slice).unwrap_or(&[]);
        on[..on.partition_point(|g| g.start < until)]
            .last()
            .filter(|g| g.end > from && crossed_at != Some(g.end.min(until)))
            .copied()
    };
    let mut out: Vec<PathStep> = Vec::new();
    let push = |out: &mut Vec<PathStep>, core, start: u64, end: u64, kind| {
        if end > start {
            out.push(PathStep {
                core,
                start,
                end,
                kind,
            });
        }
    };
    let (mut core, mut t_now) = (last, op_end);
    let mut truncated = false;
    let mut steps = 0usize;
    let limit = 2 * (t.waits.len() + t.held.len() + t.gates.len() + t.kernels.len()) + 8;
    // The time of the last crossing made at a held stretch: a second one at the same time
    // (two cores each held on the other) is not taken, so the walk always moves back.
    let mut crossed_at: Option<u64> = None;
    loop {
        steps += 1;
        let ks = t.kernels.get(&core).map_or(op_start, |k| k.0).min(t_now);
        if steps > limit {
            truncated = true;
            push(&mut out, core, op_start, t_now, StepKind::Busy);
            break;
        }
        // The latest wait or held stretch on this core that began before now, inside its
        // kernel.
        let items = per_core.get(&core).map(Vec::as_slice).unwrap_or(&[]);
        let n = items.partition_point(|&it| span_of(it).0 < t_now);
        let w = items[..n]
            .iter()
            .rev()
            .copied()
            .find(|&it| span_of(it).0 >= ks);
        let Some(item) = w else {
            push(&mut out, core, ks, t_now, StepKind::Busy);
            push(&mut out, core, op_start, ks, StepKind::Launch);
            break;
        };
        let wi = match item {
            Item::Wait(i) => i,
            Item::Held(j) => {
                // Held until the other core's work let it go: the path continues there.
                let h = t.held[j];
                let he = h.end.min(t_now);
                if crossed_at == Some(he) {
                    push(&mut out, core, h.start, t_now, StepKind::Busy);
                    t_now = h.start;
                } else {
                    push(&mut out, core, he, t_now, StepKind::Busy);
                    crossed_at = Some(he);
                    core = h.by;
                    t_now = he;
                }
                continue;
            }
        };
        let wait = t.waits[wi];
        let we = wait.end.min(t_now);
        push(&mut out, core, we, t_now, StepKind::Busy);
        let kind = StepKind::Wait {
            wait: wi,
            signal: m[wi],
        };
        match m[wi] {
            // A signal released before the wait began did not keep this core waiting by
            // coming late: the wait is on the path whole, here.
            Ok(si) if hands_over(t, si, &wait, core) => {
                let s = t.signals[si];
                let at = s.released().clamp(wait.start, we);
                push(&mut out, core, at, we, kind);
                let Some(executed) = s.executed.map(|e| e.min(at)) else {
                    core = s.core;
                    t_now = at;
                    continue;
                };
                // The posting TRISC's thread, from the push to the execution: at work, or
                // held at its gate on another thread (the path goes on there, at the
                // stretch's end), or the RISC was late to push (it goes on there).
                let pushed = s.at.min(executed);
                let post = StepKind::Coprocessor { post: Some(si) };
                match gate_in(s.core, pushed, executed, crossed_at) {
                    Some(g) => {
                        let ge = g.end.min(executed);
                        push(&mut out, s.core, ge, executed, post);
                        crossed_at = Some(ge);
                        core = g.by;
                        t_now = ge;
                    }
                    None => {
                        push(&mut out, s.core, pushed, executed, post);
                        core = s.core;
                        t_now = pushed;
                    }
                }
            }
            // A TTSync wait is its own thread's work; where the thread's gate waited on
            // another TRISC's thread meanwhile, the path goes on there.
            Err(Unmatched::Coprocessor) if wait.wait == Some(Wait::TtSync) => {
                match gate_in(core, wait.start, we, crossed_at) {
                    Some(g) => {
                        let ge = g.end.min(we);
                        push(&mut out, core, ge, we, StepKind::Coprocessor { post: None });
                        crossed_at = Some(ge);
                        core = g.by;
                        t_now = ge;
                    }
                    None => {
                        push(&mut out, core, wait.start, we, kind);
                        t_now = wait.start;
                    }
                }
            }
            _ => {
                push(&mut out, core, wait.start, we, kind);
                t_now = wait.start;
            }
        }
    }
    out.reverse();
    // Adjacent busy steps of one core are one.
    let mut merged: Vec<PathStep> = Vec::with_capacity(out.len());
    for s in out {
        match merged.last_mut() {
            Some(p)
                if p.core == s.core
                    && p.end == s.start
                    && p.kind == StepKind::Busy
                    && s.kind == StepKind::Busy =>
            {
                p.end = s.end
            }
            _ => merged.push(s),
        }
    }
    Path {
        steps: merged,
        span: (op_start, op_end),
        truncated,
    }
}

/// Whether the path leaves `wait` (on `core`) for the core of the signal `si` that ended it:
/// another core of the op released it while it waited, and that core's own profiler
/// records do not account for the push coming late (the module docs).
fn hands_over(t: &OpTrace, si: usize, wait: &WaitSpan, core: CoreId) -> bool {
    let s = &t.signals[si];
    let late = s.at.saturating_sub(wait.start);
    let profiler_made_it_late = s.profiler > 0 && s.at >= wait.start && s.profiler >= late;
    s.core != core
        && s.released() >= wait.start
        && t.kernels.contains_key(&s.core)
        && !profiler_made_it_late
}

/// Waits no signal ended, per (core, site, reason).
pub(crate) type UnmatchedWaits = BTreeMap<(CoreId, u32, Unmatched), u64>;
/// Signals that ended no wait, per (core, site).
pub(crate) type UnmatchedSignals = BTreeMap<(CoreId, u32), u64>;

/// Per site, how many waits no signal ended and why (not those that did not block:
/// [`Unmatched::Ready`]), and how many signals ended no wait: ((core, site, reason), count)
/// and ((core, site), count).
pub fn unmatched(t: &OpTrace, m: &Matching) -> (UnmatchedWaits, UnmatchedSignals) {
    let mut waits = BTreeMap::new();
    let mut used = vec![false; t.signals.len()];
    for (w, r) in t.waits.iter().zip(m) {
        match r {
            Ok(i) => used[*i] = true,
            // A profiler stall is no wait on the pipeline; a ready one waited on nobody.
            Err(e) if w.wait.is_some() && *e != Unmatched::Ready => {
                *waits.entry((w.core, w.site, *e)).or_default() += 1
            }
            Err(_) => {}
        }
    }
    let mut signals = BTreeMap::new();
    for (s, u) in t.signals.iter().zip(used) {
        if !u {
            *signals.entry((s.core, s.site)).or_default() += 1;
        }
    }
    (waits, signals)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path's steps as (RISC, start, end, what: `busy`, `wait`, `thread`, `launch`).
    fn steps_of(p: &Path) -> Vec<(Risc, u64, u64, &'static str)> {
        let name = |k| match k {
            StepKind::Busy => "busy",
            StepKind::Wait { .. } => "wait",
            StepKind::Coprocessor { .. } => "thread",
            StepKind::Launch => "launch",
        };
        p.steps
            .iter()
            .map(|s| (s.core.risc, s.start, s.end, name(s.kind)))
            .collect()
    }

    fn core(x: u8, risc: Risc) -> CoreId {
        CoreId {
            tile: NocCoord { x, y: 1 },
            risc,
        }
    }

    /// reader -> CB 0 -> math -> CB 1 -> writer on one tile, math slow: the path is the
    /// reader's first tile, math's work, then the writer's last tile.
    fn pipeline() -> OpTrace {
        let (r, m, w) = (
            core(1, Risc::Brisc),
            core(1, Risc::Trisc1),
            core(1, Risc::Ncrisc),
        );
        let mut t = OpTrace::default();
        t.kernels.insert(r, (0, 40));
        t.kernels.insert(m, (5, 230));
        t.kernels.insert(w, (2, 260));
        let wait = |core, start, end, wait| WaitSpan {
            core,
            start,
            end,
            wait: Some(wait),
            site: 0,
        };
        let sig = |core, at, signal| SignalMark {
            core,
            at,
            signal,
            site: 1,
            zone: None,
            profiler: 0,
            executed: None,
        };
        // Reader: reads tile 0 (NoC 10..20), pushes it at 25, tile 1 at 38 (CB 0 has room).
        t.waits.push(wait(r, 10, 20, Wait::NocRead));
        t.signals.push(sig(r, 19, Signal::NocReadDone));
        t.signals.push(sig(r, 25, Signal::CbPush(0)));
        t.signals.push(sig(r, 38, Signal::CbPush(0)));
        // Math: waits for tile 0 from 6 to 27, works to 120, pushes at 120, tile 1 already
        // there (no wait), works to 220, pushes at 220.
        t.waits.push(wait(m, 6, 27, Wait::CbFront(0)));
        t.signals.push(sig(m, 120, Signal::CbPush(1)));
        t.signals.push(sig(m, 220, Signal::CbPush(1)));
        // Writer: waits for tile 0 from 3 to 123, writes, waits for tile 1 130..224, writes
        // (NoC 230..250), ends at 260.
        t.waits.push(wait(w, 3, 123, Wait::CbFront(1)));
        t.waits.push(wait(w, 130, 224, Wait::CbFront(1)));
        t.waits.push(wait(w, 230, 250, Wait::NocWrite));
        t.signals.push(sig(w, 249, Signal::NocWriteDone));
        t
    }

    /// Unpack slow, math held on its FIFO waiting for SrcA data (no typed wait): the path
    /// crosses from math to unpack at the end of the held stretch, and unpack's slow work
    /// is on it; a stretch each core held on the other at the same end is crossed once.
    #[test]
    fn a_held_stretch_crosses_to_the_core_whose_work_it_waited_for() {
        let (u, m) = (core(1, Risc::Trisc0), core(1, Risc::Trisc1));
        let mut t = OpTrace::default();
        t.kernels.insert(u, (0, 100));
        t.kernels.insert(m, (0, 120));
        t.held.push(HeldSpan {
            core: m,
            start: 10,
            end: 90,
            by: u,
        });
        let p = critical_path(&t, &match_waits(&t));
        let got: Vec<(Risc, u64, u64, StepKind)> = p
            .steps
            .iter()
            .map(|s| (s.core.risc, s.start, s.end, s.kind))
            .collect();
        assert_eq!(
            got,
            [
                (Risc::Trisc0, 0, 90, StepKind::Busy),
                (Risc::Trisc1, 90, 120, StepKind::Busy)
            ]
        );
        // Without the stretch, math's own time is the path.
        let plain = critical_path(
            &OpTrace {
                held: vec![],
                ..t.clone()
            },
            &vec![],
        );
        assert_eq!(plain.steps.len(), 1);
        // Each held on the other until 90: one crossing, then back in time on unpack.
        t.held.push(HeldSpan {
            core: u,
            start: 50,
            end: 95,
            by: m,
        });
        let p = critical_path(&t, &match_waits(&t));
        assert_eq!(p.steps.first().map(|s| s.start), Some(0));
        assert_eq!(p.steps.iter().map(|s| s.end - s.start).sum::<u64>(), 120);
        assert!(!p.truncated);
    }

    /// Math posts Tensix semaphore 0 (initial value 1) for the packer: the packer's takes
    /// pair with the posts by count, not with the latest post before each take's end.
    #[test]
    fn tensix_semaphore_takes_pair_with_posts_by_count() {
        let (m, p) = (core(1, Risc::Trisc1), core(1, Risc::Trisc2));
        let mut t = OpTrace::default();
        t.kernels.insert(m, (0, 100));
        t.kernels.insert(p, (0, 120));
        let take = |start, end| WaitSpan {
            core: p,
            start,
            end,
            wait: Some(Wait::TensixSem(0)),
            site: 0,
        };
        let post = |at| SignalMark {
            core: m,
            at,
            signal: Signal::TensixSemPost(0),
            site: 1,
            zone: None,
            profiler: 0,
            executed: None,
        };
        // Take 1 finds the initial value; take 2 waits for post 1 (pushed at 30, during it);
        // take 3 begins at 50, after post 2 was pushed (40: queued behind math's work), and
        // ends at 70; post 3 comes at 90, for take 4 (95..96).
        t.waits = vec![take(1, 2), take(10, 31), take(50, 70), take(95, 96)];
        t.signals = vec![post(30), post(40), post(90)];
        assert_eq!(
            match_waits(&t),
            [Err(Unmatched::Ready), Ok(0), Ok(1), Ok(2)]
        );
        // The path from the packer's end: take 4 ended by post 3, pushed before it began
        // (whole, on the packer); take 3's post was queued (whole, on the packer); take 2's
        // post came while it waited: the path crosses to math at 30.
        let path = critical_path(&t, &match_waits(&t));
        let on_math: u64 = path
            .steps
            .iter()
            .filter(|s| s.core == m)
            .map(|s| s.end - s.start)
            .sum();
        assert_eq!(on_math, 30, "{path:?}");
        assert!(path
            .steps
            .iter()
            .any(|s| s.core == p && s.start == 50 && s.end == 70));
        // No post recorded for a semaphore: the coprocessor's, unmatched.
        t.signals.clear();
        assert!(match_waits(&t)
            .iter()
            .all(|m| *m == Err(Unmatched::Coprocessor)));
    }

    /// Issue 40: with the emulator's log the take of a post ends when math's thread
    /// executed it, and the path goes on in that thread. Math pushes its post at 20, before
    /// the packer's take begins (30); its thread executes it at 80, held at its gate on
    /// unpack's data from 10 to 60: the path is the packer's wait from 80, math's thread
    /// from 60 to 80, then unpack (busy) from its start. Without the gate the thread's work
    /// goes back to the push (20), then math.
    #[test]
    fn a_tensix_post_ends_its_take_when_executed_and_the_path_goes_through_its_thread() {
        let (u, m, p) = (
            core(1, Risc::Trisc0),
            core(1, Risc::Trisc1),
            core(1, Risc::Trisc2),
        );
        let mut t = OpTrace::default();
        t.kernels.insert(u, (0, 70));
        t.kernels.insert(m, (0, 90));
        t.kernels.insert(p, (0, 100));
        t.waits.push(WaitSpan {
            core: p,
            start: 30,
            end: 85,
            wait: Some(Wait::TensixSem(0)),
            site: 0,
        });
        t.signals.push(SignalMark {
            core: m,
            at: 20,
            signal: Signal::TensixSemPost(0),
            site: 1,
            zone: None,
            profiler: 0,
            executed: Some(80),
        });
        t.gates.push(HeldSpan {
            core: m,
            start: 10,
            end: 60,
            by: u,
        });
        let m_ = match_waits(&t);
        assert_eq!(m_, [Ok(0)]);
        let steps = |t: &OpTrace| -> Vec<(Risc, u64, u64, &'static str)> {
            let path = critical_path(t, &match_waits(t));
            assert_eq!(path.steps.iter().map(|s| s.end - s.start).sum::<u64>(), 100);
            steps_of(&path)
        };
        assert_eq!(
            steps(&t),
            [
                (Risc::Trisc0, 0, 60, "busy"),
                (Risc::Trisc1, 60, 80, "thread"),
                (Risc::Trisc2, 80, 85, "wait"),
                (Risc::Trisc2, 85, 100, "busy"),
            ]
        );
        t.gates.clear();
        assert_eq!(
            steps(&t),
            [
                (Risc::Trisc1, 0, 20, "busy"),
                (Risc::Trisc1, 20, 80, "thread"),
                (Risc::Trisc2, 80, 85, "wait"),
                (Risc::Trisc2, 85, 100, "busy"),
            ]
        );
        // Without the execution (a card) the post was pushed before the take began: the
        // take is on the path whole, on the packer, as before.
        t.signals[0].executed = None;
        assert_eq!(
            steps(&t),
            [
                (Risc::Trisc2, 0, 30, "busy"),
                (Risc::Trisc2, 30, 85, "wait"),
                (Risc::Trisc2, 85, 100, "busy"),
            ]
        );
    }

    /// A TTSync wait is its thread's work: the packer waits 40..90 for its thread, whose
    /// gate waited 50..70 on math's thread; the path is math to 70, the packer's thread from
    /// 70 to 90, then the packer. Without the gate the wait is whole, on the packer.
    #[test]
    fn a_ttsync_wait_goes_through_its_thread_to_what_its_gate_waited_on() {
        let (m, p) = (core(1, Risc::Trisc1), core(1, Risc::Trisc2));
        let mut t = OpTrace::default();
        t.kernels.insert(m, (0, 80));
        t.kernels.insert(p, (0, 100));
        t.waits.push(WaitSpan {
            core: p,
            start: 40,
            end: 90,
            wait: Some(Wait::TtSync),
            site: 0,
        });
        t.gates.push(HeldSpan {
            core: p,
            start: 50,
            end: 70,
            by: m,
        });
        let steps = |t: &OpTrace| -> Vec<(Risc, u64, u64, &'static str)> {
            let m = match_waits(t);
            assert_eq!(m, [Err(Unmatched::Coprocessor)]);
            steps_of(&critical_path(t, &m))
        };
        assert_eq!(
            steps(&t),
            [
                (Risc::Trisc1, 0, 70, "busy"),
                (Risc::Trisc2, 70, 90, "thread"),
                (Risc::Trisc2, 90, 100, "busy"),
            ]
        );
        t.gates.clear();
        assert_eq!(
            steps(&t),
            [
                (Risc::Trisc2, 0, 40, "busy"),
                (Risc::Trisc2, 40, 90, "wait"),
                (Risc::Trisc2, 90, 100, "busy"),
            ]
        );
    }

    #[test]
    fn waits_match_the_latest_signal_of_their_resource_while_they_waited() {
        let t = pipeline();
        let m = match_waits(&t);
        assert_eq!(m, [Ok(0), Ok(1), Ok(3), Ok(4), Ok(5)]);
        let (w, s) = unmatched(&t, &m);
        assert!(w.is_empty());
        // Only the reader's second push ended no wait: math was busy when it came.
        assert_eq!(s.values().sum::<u64>(), 1, "{s:?}");
    }

    /// Issue 39: math's own profiler records (95 cycles before its second push, since its
    /// last wait) cover the 90 cycles the writer's second wait was late by: without them the
    /// tile would have been there, so that wait is on the path whole on the writer, and the
    /// path crosses to math only at its first push.
    #[test]
    fn a_wait_made_late_only_by_the_profilers_records_is_not_a_hand_over() {
        let mut t = pipeline();
        let push = |t: &OpTrace| {
            t.signals
                .iter()
                .position(|s| s.core.risc == Risc::Trisc1 && s.at == 220)
                .unwrap()
        };
        let i = push(&t);
        t.signals[i].profiler = 95;
        let p = critical_path(&t, &match_waits(&t));
        let seg: Vec<(Risc, u64, u64, bool)> = p
            .steps
            .iter()
            .map(|s| (s.core.risc, s.start, s.end, s.kind == StepKind::Busy))
            .collect();
        assert_eq!(
            seg,
            [
                (Risc::Brisc, 0, 10, true),
                (Risc::Brisc, 10, 20, false),
                (Risc::Brisc, 20, 25, true),
                (Risc::Trisc1, 25, 27, false),
                (Risc::Trisc1, 27, 120, true),
                (Risc::Ncrisc, 120, 123, false),
                (Risc::Ncrisc, 123, 130, true),
                (Risc::Ncrisc, 130, 224, false),
                (Risc::Ncrisc, 224, 230, true),
                (Risc::Ncrisc, 230, 250, false),
                (Risc::Ncrisc, 250, 260, true),
            ]
        );
        // 89 cycles of records do not cover it: the hand-over stands.
        t.signals[i].profiler = 89;
        let p = critical_path(&t, &match_waits(&t));
        assert!(p
            .steps
            .iter()
            .any(|s| s.core.risc == Risc::Trisc1 && s.end == 220));
    }

    #[test]
    fn the_path_follows_the_signals_and_adds_up_to_the_op() {
        let t = pipeline();
        let m = match_waits(&t);
        let p = critical_path(&t, &m);
        assert_eq!(
            steps_of(&p),
            [
                (Risc::Brisc, 0, 10, "busy"),
                (Risc::Brisc, 10, 20, "wait"),
                (Risc::Brisc, 20, 25, "busy"),
                (Risc::Trisc1, 25, 27, "wait"),
                (Risc::Trisc1, 27, 220, "busy"),
                (Risc::Ncrisc, 220, 224, "wait"),
                (Risc::Ncrisc, 224, 230, "busy"),
                (Risc::Ncrisc, 230, 250, "wait"),
                (Risc::Ncrisc, 250, 260, "busy"),
            ]
        );
        assert_eq!(p.span, (0, 260));
        assert_eq!(p.steps.iter().map(|s| s.end - s.start).sum::<u64>(), 260);
        assert!(!p.truncated);
    }

    #[test]
    fn unmatched_and_ambiguous_waits_stay_on_their_core_and_are_counted() {
        let mut t = pipeline();
        // Nobody signals CB 1 any more; a semaphore wait with two signals at the same cycle.
        t.signals.retain(|s| s.signal != Signal::CbPush(1));
        let s = core(2, Risc::Brisc);
        t.kernels.insert(s, (0, 100));
        t.waits.push(WaitSpan {
            core: s,
            start: 10,
            end: 50,
            wait: Some(Wait::Semaphore(3)),
            site: 7,
        });
        for c in [core(1, Risc::Brisc), core(3, Risc::Brisc)] {
            t.signals.push(SignalMark {
                core: c,
                at: 40,
                signal: Signal::SemInc(3),
                site: 2,
                zone: None,
                profiler: 0,
                executed: None,
            });
        }
        let m = match_waits(&t);
        assert_eq!(m[2], Err(Unmatched::NoSignal));
        // A producer's first reserve finds the space free.
        assert_eq!(
            match_waits(&OpTrace {
                waits: vec![WaitSpan {
                    wait: Some(Wait::CbBack(9)),
                    ..t.waits[0]
                }],
                ..t.clone()
            }),
            [Err(Unmatched::Ready)]
        );
        assert_eq!(m[5], Err(Unmatched::Ambiguous));
        let (w, _) = unmatched(&t, &m);
        assert_eq!(w.values().sum::<u64>(), 3);
        assert_eq!(w[&(s, 7, Unmatched::Ambiguous)], 1);
        let p = critical_path(&t, &m);
        // The writer's unmatched wait is on the path whole, on the writer.
        assert!(p.steps.iter().all(|s| s.core.risc == Risc::Ncrisc));
        assert_eq!(p.steps.iter().map(|s| s.end - s.start).sum::<u64>(), 260);
        assert_eq!(p.steps[0].kind, StepKind::Launch);
        assert_eq!((p.steps[0].start, p.steps[0].end), (0, 2));
    }
}
