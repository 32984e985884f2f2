//! Gathering: the [`Analyzer`] takes each ring's zones (KERNEL wrappers, typed waits,
//! profiler stalls, signals, counted zones) into per-(op, tile, RISC) cells, then turns
//! them into the [`Analysis`] (per tile and op: times, CB links, verdicts; the critical
//! paths, counters and roofline from their modules). See the parent module for the rules.
//!
//! # A ring in pieces
//!
//! A ring can be given whole or a piece at a time ([`RingView::part`], issue 41), and the
//! analysis is the same either way, to the bit. The ring is walked in one order, whatever
//! its pieces: its zones in opening order, each at its start, and the marks of each cycle
//! together after every zone opening at or before that cycle (a mark is placed in the
//! KERNEL zone and outermost wait of its op open at its time, a signal counts the
//! profiler's records up to its cycle). A piece's openings are the ring's next ones, so
//! only the marks at its latest cycle can be joined by the next piece (a zone opening at
//! that cycle, more marks): they are held until it comes ([`InRing::held`]). What the walk
//! carries from one piece to the next is [`InRing`] (per op of the ring: its latest KERNEL
//! zone, its outermost wait; the marks of one cycle) and the critical path's own
//! (`path::Collector`: the zones open, the core's latest waits, the profiler's cost so
//! far): bounded by the ops a ring records and its nesting, never its zones. A ring's
//! counts are taken once: its in-band losses are its pieces' records', the drops only its
//! counter knows go, after its last piece, to the op of its last unmarked record (the
//! unmarked records come in ring order).
//!
//! A ring whose op has two KERNEL zones places each zone and mark in the one latest opened
//! at its time (the walk cannot know a later one); every other ring reads as it did when
//! the whole ring's zones were taken first and its marks after.

use super::*;
use crate::markers::is_marked;
use crate::timebase::TileClock;
use crate::timeline::{Mark, Zone};
use crate::util::vec::push_sized;

mod finish;
pub(crate) use finish::LaterTiles;

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
    /// Whether the op log holds held stretches (the emulator's): only then do the cells
    /// keep their KERNEL and covered cycles, which the finish needs for those alone.
    holds: Option<bool>,
    /// The ring being added, carried from its first piece to its last.
    ring: InRing,
    /// Whether some site of the profile is a typed wait or a signal (known at the first
    /// ring): without one no op has a critical path, and `paths` is not fed (it kept every
    /// op's KERNEL span per core, 11 KB an op of 64 tiles; issue 41).
    paths_wanted: Option<bool>,
}

/// What the analyzer carries of the ring being added from one of its pieces to the next
/// (issue 41: a ring can be given in pieces; a whole ring is one piece). Per op of the ring
/// its latest KERNEL zone and outermost wait, and a time's marks that the next piece may
/// add to: bounded by the ops a ring records and the marks of one cycle, never the ring's
/// zones. Dropped after the ring's last piece.
#[derive(Default)]
struct InRing {
    /// Per op index: what its later zones and marks are placed in.
    ops: HashMap<u32, OpInRing>,
    /// The marks at the latest time of the piece before, walked with the next piece's
    /// (a zone it brings may open at that time, and goes first).
    held: Vec<Mark>,
    /// Whether the ring has had a zone or a mark.
    any: bool,
    /// The op of the ring's last unmarked record with one so far (`add_losses`).
    last_op: Option<u32>,
    /// The op of the first zone or point record with one (`add_losses`: the ring's last
    /// record's when no unmarked record has one).
    first_op: Option<u32>,
    /// The tile's origin, once looked up for this ring.
    origin: Option<u64>,
}

/// One op on the ring being added.
#[derive(Default)]
struct OpInRing {
    /// The end of the outermost wait so far (host ns from the tile's origin) and what it
    /// waits on.
    wait_end: Option<(f64, Wait)>,
    /// The latest KERNEL zone, host ns from the tile's origin.
    kernel: Option<(f64, f64)>,
    /// The same, cycles (for the records' cost, module `records`).
    kernel_cycles: Option<(u64, u64)>,
    /// The latest outermost typed wait: (start, end, what), cycles.
    last_wait: Option<(u64, u64, Wait)>,
}

/// What every zone and mark of one piece is placed with.
struct Walk<'p> {
    chip: u32,
    tile: NocCoord,
    risc: Risc,
    arch: riscv_linker::Arch,
    /// The chip's cycles per ns (`None`: unknown or 0).
    cpn: Option<f64>,
    clock: Option<TileClock<'p>>,
    holds: bool,
}

/// Whether any site table of `p`'s rings has a typed wait or a signal (each table looked at
/// once, however many rings and runs share it).
fn any_wait_or_signal(p: &Profile) -> bool {
    let mut seen = std::collections::HashSet::new();
    p.sites
        .rings
        .iter()
        .flat_map(|r| r.tables())
        .filter(|t| seen.insert(std::sync::Arc::as_ptr(t)))
        .any(|t| {
            t.iter()
                .any(|(_, m)| m.wait.is_some() || m.signal.is_some())
        })
}

/// (op index, chip, tile) -> its RISCs' cells.
type Cells = BTreeMap<(u32, u32, NocCoord), TileCells>;

/// One tile's RISCs in one op, in first-seen order: a `Vec` sized to them, not a `BTreeMap`
/// (whose node reserves eleven cells, 3.5 KB a tile; issue 41).
type TileCells = Vec<Cell>;

/// What the analyzer gathers of one RISC in one op on one tile, from its zones and marks:
/// its [`RiscTime`] is made of it at the finish. Only what gathering adds up (the times the
/// finish derives - the stage's name, busy time, waits by name, held stretches - are not
/// held per cell while the rings come), and what most cells never hold out of line
/// ([`Rare`]): 56 bytes a cell, where a `RiscTime` in the making was 320 (issue 41).
#[derive(Clone)]
struct Cell {
    /// Its RISC.
    risc: Risc,
    /// Made at the finish for a kernel the op log runs here that recorded nothing: its
    /// stage is its ELF's stem (else, as every other cell's, `stage_name`'s).
    unrecorded: bool,
    /// Its KERNEL wrapper zone(s), ns.
    kernel_ns: f64,
    /// Its first KERNEL start and last KERNEL end, host ns (+inf and -inf: none).
    first: f64,
    last: f64,
    /// The profiler's own records inside the KERNEL zone, ns at their known cost.
    profiler_records_ns: f64,
    /// How many records that is.
    profiler_records: u64,
    /// The rest, made when first needed: there is a cell per op, tile and RISC, so what
    /// most cells lack is held apart (a cell with its RISC and times was 104 bytes, then
    /// 64 with them beside it).
    rare: Option<Box<Rare>>,
}

/// What a cell holds only with typed waits, profiler stalls, lost records, or held
/// stretches to place.
#[derive(Clone, Default)]
struct Rare {
    /// Time per resource waited on (outermost waits only), ns.
    by_wait: BTreeMap<Wait, f64>,
    /// Time stalled on the profiler's full ring inside the KERNEL zone, ns.
    profiler_stall_ns: f64,
    /// Records the profiler dropped on its ring in this op.
    records_lost: u64,
    /// Of `profiler_records_ns`, the part inside each outermost typed wait, ns.
    records_in_waits: BTreeMap<Wait, f64>,
    /// Its KERNEL zones, cycles (for the held stretches).
    kernel_cycles: held::Intervals,
    /// Its outermost typed waits and profiler stalls, cycles (likewise).
    covered_cycles: held::Intervals,
}

impl Cell {
    /// Nothing gathered yet for `risc`.
    fn new(risc: Risc) -> Cell {
        Cell {
            risc,
            unrecorded: false,
            kernel_ns: 0.0,
            first: f64::INFINITY,
            last: f64::NEG_INFINITY,
            profiler_records_ns: 0.0,
            profiler_records: 0,
            rare: None,
        }
    }

    /// The rest, made on first use.
    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Default::default)
    }

    /// The cell's times as the analysis reports them (`busy_ns`, `waits`, `held` and
    /// `coprocessor_busy` are the finish's), and its KERNEL and covered cycles.
    fn into_time(self, stage: String) -> (RiscTime, held::Intervals, held::Intervals) {
        let rare = self.rare.map(|r| *r).unwrap_or_default();
        let mut t = RiscTime {
            risc: self.risc.name(),
            stage,
            kernel_ns: self.kernel_ns,
            by_wait: rare.by_wait,
            profiler_stall_ns: rare.profiler_stall_ns,
            records_lost: rare.records_lost,
            profiler_records_ns: self.profiler_records_ns,
            profiler_records: self.profiler_records,
            ..RiscTime::default()
        };
        // The records inside waits leave those waits: their cost is the profiler's.
        for (w, ns) in &rare.records_in_waits {
            if let Some(x) = t.by_wait.get_mut(w) {
                *x = (*x - ns).max(0.0);
            }
        }
        (t, rare.kernel_cycles, rare.covered_cycles)
    }
}

/// The entry of `risc` on `key`, made on first use.
fn cell(cells: &mut Cells, key: (u32, u32, NocCoord), risc: Risc) -> &mut Cell {
    cell_in(cells.entry(key).or_default(), risc)
}

/// The entry of `risc` in one tile's cells, made on first use.
fn cell_in(riscs: &mut TileCells, risc: Risc) -> &mut Cell {
    let i = match riscs.iter().position(|r| r.risc == risc) {
        Some(i) => i,
        None => {
            riscs.reserve_exact(1);
            riscs.push(Cell::new(risc));
            riscs.len() - 1
        }
    };
    &mut riscs[i]
}

/// What a label's zones are to the analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LabelKind {
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
pub(super) fn role(risc: Risc) -> &'static str {
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
pub(super) fn stage_name(p: &Profile, op: u32, tile: NocCoord, risc: Risc) -> String {
    let o = &p.ops[op as usize];
    let run = p.op_record(o.chip, o.run);
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
    /// Makes the (empty) cells of `tile` in `op` on `chip`: the tile is analysed though no
    /// ring recorded anything of it (an op a fault stopped, module `stopped`).
    pub(super) fn add_tile(&mut self, op: u32, chip: u32, tile: NocCoord) {
        self.cells.entry((op, chip, tile)).or_default();
    }

    /// Adds one ring's zones and sums, or one piece of it ([`RingView::part`]): what the
    /// ring's later pieces need is carried in [`InRing`] from its first piece to its last,
    /// and the ring's counts (its drops) are taken once.
    pub(crate) fn add(&mut self, p: &Profile, v: &RingView) {
        if !v.placed {
            return;
        }
        let part = v.part();
        let paths = *self
            .paths_wanted
            .get_or_insert_with(|| any_wait_or_signal(p));
        if part.first {
            self.ring = InRing::default();
            if paths {
                self.paths.begin_ring();
            }
        }
        self.add_losses(p, v);
        if !(v.zones.is_empty() && v.marks.is_empty()) {
            self.ring.any = true;
            self.learn_sites(p, v);
        }
        if self.ring.any {
            self.walk(p, v, part.last);
        }
        if part.last {
            if self.ring.any {
                // A ring of marks only: its tile's times are taken from cycle 0 (its first
                // zone, had it one, would have set them).
                self.origins.entry((v.lane.chip, v.lane.tile)).or_insert(0);
            }
            self.ring = InRing::default();
            if paths {
                self.paths.end_ring();
            }
        }
    }

    /// The piece's zones and marks (after the marks held from the piece before) in time
    /// order: each zone at its start, then the marks at that time, a time's marks taken
    /// together once no later piece can bring a zone or mark at that time (the ring's last
    /// piece, or a later record: a piece's openings are the ring's next ones, so only its
    /// latest time can go on into the next piece). Whole or in pieces, the ring is walked
    /// in the same order, so every sum is made in the same order.
    fn walk(&mut self, p: &Profile, v: &RingView, last: bool) {
        let marks: Vec<Mark> = std::mem::take(&mut self.ring.held)
            .into_iter()
            .chain(v.marks.iter().copied())
            .collect();
        let latest = v
            .zones
            .len()
            .checked_sub(1)
            .map(|i| v.zones.start_cycles(i))
            .max(marks.last().map(|m| m.cycles));
        let (chip, tile) = (v.lane.chip, v.lane.tile);
        let holds = *self
            .holds
            .get_or_insert_with(|| p.oplog.as_ref().is_some_and(|l| l.holds().next().is_some()));
        let cx = Walk {
            chip,
            tile,
            risc: v.lane.risc,
            arch: p.readout.geometry().arch,
            cpn: p
                .timebase
                .chips
                .get(&chip)
                .map(|t| t.cycles_per_ns)
                .filter(|c| *c > 0.0),
            clock: p.timebase.tile_clock(chip, tile),
            holds,
        };
        let mut zones = v.zones.iter().peekable();
        let mut next = 0;
        loop {
            let at = marks.get(next).map(|m| m.cycles);
            if let Some(z) = zones.next_if(|z| at.is_none_or(|t| z.start_cycles <= t)) {
                self.zone(p, &cx, &z);
                continue;
            }
            let Some(t) = at else { break };
            let to = next + marks[next..].iter().take_while(|m| m.cycles == t).count();
            if !last && to == marks.len() && Some(t) == latest {
                self.ring.held = marks[next..].to_vec();
                break;
            }
            self.marks(p, &cx, &marks[next..to]);
            next = to;
        }
    }

    /// One zone of the ring, in opening order.
    fn zone(&mut self, p: &Profile, cx: &Walk, z: &Zone) {
        let (chip, tile, risc, holds, clock) = (cx.chip, cx.tile, cx.risc, cx.holds, cx.clock);
        let kinds = &self.kinds;
        let kind = |site: u32| {
            kinds
                .get(site as usize)
                .copied()
                .unwrap_or(LabelKind::Other)
        };
        if self.paths_wanted == Some(true) {
            self.paths.zone(p, cx.chip, cx.tile, risc, z, &kind);
        }
        let bank = self.counted_labels.get(z.site as usize).copied().flatten();
        if let (Some(bank), Some(value), Some(op)) = (bank, z.value, z.op) {
            let name = p.labels[z.site as usize].name.clone();
            let e = self.counted.entry((op, name, bank)).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(value.into());
            e.2 = e.2.saturating_add(z.cycles());
        }
        let arch = cx.arch;
        let ns_of = |c: f64| cx.cpn.map_or(0.0, |cpn| c / cpn);
        // Host ns from the tile's origin (the first zone's start of its first ring with
        // zones or marks): exact differences of host times (the zones' `f64` ns are a ns or
        // more off from 2^53 ns on), small enough that their differences (durations,
        // spans) are exact too.
        let origin = *self
            .ring
            .origin
            .get_or_insert_with(|| *self.origins.entry((chip, tile)).or_insert(z.start_cycles));
        let at = |c: u64, ns: f64| clock.map_or(ns, |k| k.span_ns(origin, c));
        let k = kind(z.site);
        if let (Some(op), LabelKind::Other | LabelKind::Wait(_)) = (z.op, k) {
            let o = self.ring.ops.get(&op);
            let inside = o
                .and_then(|o| o.kernel_cycles)
                .is_some_and(|(s, e)| z.start_cycles >= s && z.end_cycles <= e);
            if inside {
                let rk = records::zone_record(z.value);
                let ns = ns_of(records::cycles(rk, arch));
                // Inside an outermost wait (not the wait itself): that wait's time.
                let within = o.and_then(|o| o.last_wait).filter(|&(s, e, _)| {
                    z.start_cycles >= s
                        && z.end_cycles <= e
                        && (z.start_cycles, z.end_cycles) != (s, e)
                });
                let t = cell(&mut self.cells, (op, chip, tile), risc);
                t.profiler_records += 1;
                t.profiler_records_ns += ns;
                if let Some((_, _, w)) = within {
                    *t.rare().records_in_waits.entry(w).or_default() += ns;
                }
            }
        }
        let (Some(op), false) = (z.op, k == LabelKind::Other) else {
            return;
        };
        let o = self.ring.ops.entry(op).or_default();
        if k == LabelKind::Kernel {
            o.kernel_cycles = Some((z.start_cycles, z.end_cycles));
        }
        if let LabelKind::Wait(w) = k {
            if o.last_wait.is_none_or(|(_, e, _)| z.start_cycles >= e) {
                o.last_wait = Some((z.start_cycles, z.end_cycles, w));
            }
        }
        let (start_ns, end_ns) = (
            at(z.start_cycles, z.start_ns(clock.as_ref())),
            at(z.end_cycles, z.end_ns(clock.as_ref())),
        );
        let dur = (end_ns - start_ns).max(0.0);
        if !dur.is_finite() {
            return;
        }
        let t = cell(&mut self.cells, (op, chip, tile), risc);
        match k {
            LabelKind::Kernel => {
                t.kernel_ns += dur;
                if holds {
                    push_sized(&mut t.rare().kernel_cycles, (z.start_cycles, z.end_cycles));
                }
                t.first = t.first.min(start_ns);
                t.last = t.last.max(end_ns);
                o.kernel = Some((start_ns, end_ns));
            }
            LabelKind::Wait(w) => {
                let end = o.wait_end.get_or_insert((f64::NEG_INFINITY, w));
                if start_ns >= end.0 {
                    *end = (end_ns, w);
                    *t.rare().by_wait.entry(w).or_default() += dur;
                    if holds {
                        push_sized(&mut t.rare().covered_cycles, (z.start_cycles, z.end_cycles));
                    }
                } // else: inside a wait already counted
            }
            LabelKind::Stall => {
                // Only the part inside the KERNEL zone (zones come in opening order, so
                // the KERNEL zone that holds it came first); a stall after the kernel's
                // end (writing its last records) is not the kernel's time.
                let Some((ks, ke)) = o.kernel else {
                    return;
                };
                let (s, e) = (start_ns.max(ks), end_ns.min(ke));
                if e <= s {
                    return;
                }
                if holds {
                    push_sized(&mut t.rare().covered_cycles, (z.start_cycles, z.end_cycles));
                }
                t.rare().profiler_stall_ns += e - s;
                // Inside a typed wait: that wait's time was the profiler's.
                if let Some((end, w)) = o.wait_end {
                    let inside = (e.min(end) - s).max(0.0);
                    if let Some(ns) = t.rare().by_wait.get_mut(&w) {
                        *ns = (*ns - inside).max(0.0);
                    }
                }
            }
            LabelKind::Other | LabelKind::Signal(_) => {}
        }
    }

    /// The ring's marks at one time, every zone opening at or before it walked already.
    fn marks(&mut self, p: &Profile, cx: &Walk, marks: &[Mark]) {
        let (chip, tile, risc) = (cx.chip, cx.tile, cx.risc);
        let kinds = &self.kinds;
        let kind = |site: u32| {
            kinds
                .get(site as usize)
                .copied()
                .unwrap_or(LabelKind::Other)
        };
        if self.paths_wanted == Some(true) {
            self.paths.marks(p, chip, tile, risc, marks, &kind);
        }
        let (arch, cpn) = (cx.arch, cx.cpn);
        let ns_of = |c: f64| cpn.map_or(0.0, |cpn| c / cpn);
        for m in marks {
            let Some(op) = m.op else { continue };
            let o = self.ring.ops.get(&op);
            if let Some((ks, ke)) = o.and_then(|o| o.kernel_cycles) {
                if m.cycles >= ks && m.cycles <= ke {
                    let signal = matches!(kind(m.site), LabelKind::Signal(_));
                    let (rk, n) = records::mark_record(m.kind, signal);
                    let ns = n * ns_of(records::cycles(rk, arch));
                    // In the op's latest outermost wait: the only one that can hold it
                    // (outermost waits do not overlap, and every one opening before it
                    // was walked).
                    let within = o.and_then(|o| o.last_wait).filter(|&(s, e, _)| {
                        rk != records::RecordKind::SumStep && m.cycles > s && m.cycles < e
                    });
                    let t = cell(&mut self.cells, (op, chip, tile), risc);
                    t.profiler_records += n as u64;
                    t.profiler_records_ns += ns;
                    if let Some((_, _, w)) = within {
                        *t.rare().records_in_waits.entry(w).or_default() += ns;
                    }
                }
            }
            if let (MarkKind::Sum { total_cycles, .. }, LabelKind::Wait(w), Some(cpn)) =
                (m.kind, kind(m.site), cpn)
            {
                *cell(&mut self.cells, (op, chip, tile), risc)
                    .rare()
                    .by_wait
                    .entry(w)
                    .or_default() += total_cycles as f64 / cpn;
            }
        }
    }

    /// Records the profiler dropped on this ring, per op: each in-band `Loss` record's count
    /// goes to its run's op (a piece's losses are its own records'), the drops only the
    /// ring's counter knows (after its last record) to the op of the ring's last record
    /// with one, after its last piece. A piece's unmarked records come in ring order, its
    /// zones and points in opening order, so that op is found from the unmarked ones: a
    /// run changes only at a `Run` record, which is unmarked, so the last record with an op
    /// is of the run of the last unmarked record with one ([`InRing::last_op`]), unless
    /// no unmarked record has one: then every record with an op is of the run the ring
    /// began in (its decoder's, before any `Run` record), and any of them gives it
    /// ([`InRing::first_op`]).
    fn add_losses(&mut self, p: &Profile, v: &RingView) {
        use crate::decode::RecordKind;
        let r = &v.ring.records;
        let (chip, tile, risc) = (v.lane.chip, v.lane.tile, v.lane.risc);
        let mut lost: Vec<(u32, u64)> = Vec::new();
        for i in 0..r.len() {
            if is_marked(r.kind[i]) {
                if self.ring.first_op.is_none() {
                    self.ring.first_op = p.op_of(chip, r.run_at(i));
                }
                continue;
            }
            let Some(op) = p.op_of(chip, r.run_at(i)) else {
                continue;
            };
            self.ring.last_op = Some(op);
            if r.kind[i] == RecordKind::Loss {
                lost.push((op, r.count_at(i) as u64));
            }
        }
        let after_last = (v.ring.dropped as u64).saturating_sub(v.ring.losses_in_band);
        let last_op = self.ring.last_op.or(self.ring.first_op);
        if let (true, true, Some(op)) = (v.part().last, after_last > 0, last_op) {
            lost.push((op, after_last));
        }
        for (op, n) in lost {
            cell(&mut self.cells, (op, chip, tile), risc)
                .rare()
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
}

/// An analyzer fed every ring of `p` whole (for tests).
#[cfg(test)]
pub(super) fn fed(p: &Profile) -> Analyzer {
    let mut a = Analyzer::default();
    for v in p.rings() {
        a.add(p, &v);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;

    /// A cell is the 56 bytes its docs say: one is held per op, tile and RISC until the
    /// last ring.
    #[test]
    fn a_cell_is_56_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 56);
    }

    /// Without a typed wait or a signal among the profile's sites, no op can have a critical
    /// path and the path's collector keeps nothing (the ops' KERNEL spans per core, 11 KB an
    /// op of 64 tiles); with them it does.
    #[test]
    fn the_critical_paths_collect_only_when_a_site_can_give_one() {
        let plain = fixture::profile_at(0, fixture::ARCH, true);
        let a = fed(&plain);
        assert_eq!(a.paths_wanted, Some(false));
        assert!(a.paths.is_empty());
        let analysis = a.finish(&plain);
        assert!(!analysis.ops.is_empty());
        assert!(analysis.ops.iter().all(|o| o.critical_path.is_none()));
        let waiting = super::super::in_pieces::waiting();
        let a = fed(&waiting);
        assert_eq!(a.paths_wanted, Some(true));
        assert!(!a.paths.is_empty());
        assert!(a
            .finish(&waiting)
            .ops
            .iter()
            .all(|o| o.critical_path.is_some()));
    }
}
