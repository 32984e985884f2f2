//! Gathering: the [`Analyzer`] takes each ring's zones (KERNEL wrappers, typed waits,
//! profiler stalls, signals, counted zones) into per-(op, tile, RISC) cells, then turns
//! them into the [`Analysis`] (per tile and op: times, CB links, verdicts; the critical
//! paths, counters and roofline from their modules). See the parent module for the rules.

use super::*;
use crate::util::vec::push_sized;

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
}

/// (op index, chip, tile) -> per RISC (time, first KERNEL start, last KERNEL end); a RISC
/// without a KERNEL zone keeps (+inf, -inf).
type Cells = BTreeMap<(u32, u32, NocCoord), TileCells>;

/// One tile's RISCs in one op, in first-seen order: a `Vec` sized to them, not a `BTreeMap`
/// (whose node reserves eleven cells, 3.5 KB a tile; issue 41).
type TileCells = Vec<(Risc, (Cell, f64, f64))>;

/// What the analyzer gathers of one RISC in one op on one tile, from its zones and marks:
/// its [`RiscTime`] is made of it at the finish. Only what gathering adds up (the times the
/// finish derives - the stage's name, busy time, waits by name, held stretches - are not
/// held per cell while the rings come), and what most cells never hold out of line
/// ([`Rare`]): 104 bytes a cell where a `RiscTime` in the making was 320 (issue 41).
#[derive(Default)]
struct Cell {
    /// Made at the finish for a kernel the op log runs here that recorded nothing: its
    /// stage is its ELF's stem (else, as every other cell's, `stage_name`'s).
    unrecorded: bool,
    /// Its KERNEL wrapper zone(s), ns.
    kernel_ns: f64,
    /// Time per resource waited on (outermost waits only), ns.
    by_wait: BTreeMap<Wait, f64>,
    /// Time stalled on the profiler's full ring inside the KERNEL zone, ns.
    profiler_stall_ns: f64,
    /// Records the profiler dropped on its ring in this op.
    records_lost: u64,
    /// The profiler's own records inside the KERNEL zone, ns at their known cost.
    profiler_records_ns: f64,
    /// How many records that is.
    profiler_records: u64,
    /// The rest, made when first needed.
    rare: Option<Box<Rare>>,
}

/// What a cell holds only with records inside typed waits or held stretches to place.
#[derive(Default)]
struct Rare {
    /// Of `profiler_records_ns`, the part inside each outermost typed wait, ns.
    records_in_waits: BTreeMap<Wait, f64>,
    /// Its KERNEL zones, cycles (for the held stretches).
    kernel_cycles: held::Intervals,
    /// Its outermost typed waits and profiler stalls, cycles (likewise).
    covered_cycles: held::Intervals,
}

impl Cell {
    /// The rest, made on first use.
    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Default::default)
    }

    /// The cell's times as the analysis reports them (`busy_ns`, `waits`, `held` and
    /// `coprocessor_busy` are the finish's), and its KERNEL and covered cycles.
    fn into_time(self, risc: Risc, stage: String) -> (RiscTime, held::Intervals, held::Intervals) {
        let mut t = RiscTime {
            risc: risc.name(),
            stage,
            kernel_ns: self.kernel_ns,
            by_wait: self.by_wait,
            profiler_stall_ns: self.profiler_stall_ns,
            records_lost: self.records_lost,
            profiler_records_ns: self.profiler_records_ns,
            profiler_records: self.profiler_records,
            ..RiscTime::default()
        };
        let rare = self.rare.map(|r| *r).unwrap_or_default();
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
fn cell(cells: &mut Cells, key: (u32, u32, NocCoord), risc: Risc) -> &mut (Cell, f64, f64) {
    cell_in(cells.entry(key).or_default(), risc)
}

/// The entry of `risc` in one tile's cells, made on first use.
fn cell_in(riscs: &mut TileCells, risc: Risc) -> &mut (Cell, f64, f64) {
    let i = match riscs.iter().position(|r| r.0 == risc) {
        Some(i) => i,
        None => {
            riscs.reserve_exact(1);
            riscs.push((risc, (Cell::default(), f64::INFINITY, f64::NEG_INFINITY)));
            riscs.len() - 1
        }
    };
    &mut riscs[i].1
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
    /// Makes the (empty) cells of `tile` in `op` on `chip`: the tile is analysed though no
    /// ring recorded anything of it (an op a fault stopped, module `stopped`).
    pub(super) fn add_tile(&mut self, op: u32, chip: u32, tile: NocCoord) {
        self.cells.entry((op, chip, tile)).or_default();
    }

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
        let holds = *self
            .holds
            .get_or_insert_with(|| p.oplog.as_ref().is_some_and(|l| l.holds().next().is_some()));
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
                    let (t, ..) = cell(&mut self.cells, (op, chip, tile), risc);
                    t.profiler_records += 1;
                    t.profiler_records_ns += ns;
                    if let Some(&(_, _, w)) = within {
                        *t.rare().records_in_waits.entry(w).or_default() += ns;
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
            let (start_ns, end_ns) = (
                at(z.start_cycles, z.start_ns(clock.as_ref())),
                at(z.end_cycles, z.end_ns(clock.as_ref())),
            );
            let dur = (end_ns - start_ns).max(0.0);
            if !dur.is_finite() {
                continue;
            }
            let (t, lo, hi) = cell(&mut self.cells, (op, chip, tile), risc);
            match k {
                LabelKind::Kernel => {
                    t.kernel_ns += dur;
                    if holds {
                        push_sized(&mut t.rare().kernel_cycles, (z.start_cycles, z.end_cycles));
                    }
                    *lo = lo.min(start_ns);
                    *hi = hi.max(end_ns);
                    kernel.insert(op, (start_ns, end_ns));
                }
                LabelKind::Wait(w) => {
                    let end = wait_end.entry(op).or_insert((f64::NEG_INFINITY, w));
                    if start_ns >= end.0 {
                        *end = (end_ns, w);
                        *t.by_wait.entry(w).or_default() += dur;
                        if holds {
                            push_sized(
                                &mut t.rare().covered_cycles,
                                (z.start_cycles, z.end_cycles),
                            );
                        }
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
                    if holds {
                        push_sized(&mut t.rare().covered_cycles, (z.start_cycles, z.end_cycles));
                    }
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
            let (t, ..) = cell(&mut self.cells, (op, chip, tile), risc);
            t.profiler_records += n as u64;
            t.profiler_records_ns += ns;
            if let Some(&(_, _, w)) = within {
                *t.rare().records_in_waits.entry(w).or_default() += ns;
            }
        }
        for m in &v.marks {
            let (Some(op), MarkKind::Sum { total_cycles, .. }, LabelKind::Wait(w), Some(cpn)) =
                (m.op, m.kind, kind(m.site), cpn)
            else {
                continue;
            };
            *cell(&mut self.cells, (op, chip, tile), risc)
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
        let mut lost: Vec<(u32, u64)> = Vec::new();
        for i in (0..r.len()).filter(|&i| r.kind[i] == RecordKind::Loss) {
            if let Some(op) = p.op_of(chip, r.run_at(i)) {
                lost.push((op, r.count_at(i) as u64));
            }
        }
        let after_last = (v.ring.dropped as u64).saturating_sub(v.ring.losses_in_band);
        if after_last > 0 {
            if let Some(op) = (0..r.len()).rev().find_map(|i| p.op_of(chip, r.run_at(i))) {
                lost.push((op, after_last));
            }
        }
        for (op, n) in lost {
            cell(&mut self.cells, (op, chip, tile), risc).0.records_lost += n;
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
        // Tiles per op: each op's list sized to them (a doubling one held up to twice its
        // 200 bytes a tile unused; issue 41).
        let mut tile_count: HashMap<u32, usize> = HashMap::new();
        for &(op, ..) in self.cells.keys() {
            *tile_count.entry(op).or_default() += 1;
        }
        for ((op, chip, tile), mut riscs) in self.cells {
            let o = &p.ops[op as usize];
            let cpn = p.timebase.chips.get(&chip).map_or(0.0, |c| c.cycles_per_ns);
            // A RISC the op log runs a kernel on here whose KERNEL zone never arrived.
            let rec = p.oplog.as_ref().and_then(|l| l.op(o.chip, o.run));
            if let Some(rec) = rec {
                for risc in Risc::ALL {
                    if rec.kernel_for(tile, risc).is_some() && riscs.iter().all(|r| r.0 != risc) {
                        cell_in(&mut riscs, risc).0.unrecorded = true;
                    }
                }
            }
            let lo = riscs.iter().map(|r| r.1 .1).fold(f64::INFINITY, f64::min);
            let hi = riscs
                .iter()
                .map(|r| r.1 .2)
                .fold(f64::NEG_INFINITY, f64::max);
            let span = if hi > lo { hi - lo } else { 0.0 };
            let mut times: Vec<RiscTime> = riscs
                .into_iter()
                .map(|(risc, (c, lo, _))| {
                    let stem = || {
                        rec.and_then(|rec| rec.kernel_for(tile, risc))
                            .and_then(|k| k.elf.file_stem())
                            .map_or_else(
                                || role(risc).to_string(),
                                |s| s.to_string_lossy().into_owned(),
                            )
                    };
                    let stage = if c.unrecorded {
                        stem()
                    } else {
                        stage_name(p, op, tile, risc)
                    };
                    let (mut t, kernel, covered) = c.into_time(risc, stage);
                    t.missing_kernel_zone = !lo.is_finite();
                    if let Some(spans) = holds.get(&(o.chip, o.run, tile, risc)) {
                        held::apply(&mut t, (kernel, covered), risc, spans, cpn);
                    }
                    // The records inside waits left those waits (`Cell::into_time`); every
                    // record's cost is out of busy time.
                    let waited: f64 =
                        t.by_wait.values().sum::<f64>() + t.held.values().sum::<f64>();
                    t.busy_ns =
                        (t.kernel_ns - waited - t.profiler_stall_ns - t.profiler_records_ns)
                            .max(0.0);
                    t.waits = waits_by_name(&t);
                    t
                })
                .collect();
            times.sort_by_key(|t| pipeline_order(t.risc));
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
                tiles: Vec::with_capacity(tile_count.get(&op).copied().unwrap_or(0)),
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
            a.riscs.sort_by_key(|t| pipeline_order(t.risc));
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
