//! The finish: the cells gathered turned into the [`Analysis`], an op at a time (per tile:
//! each RISC's times, the CB links, the verdict; per op: the sums over its tiles, the
//! verdict, the disagreeing tiles, the critical path, counters and roofline).

use super::*;
use std::rc::Rc;

impl Analyzer {
    /// The analysis: per op, per tile, verdicts.
    pub(crate) fn finish(self, p: &Profile) -> Analysis {
        let ops = self.into_ops(p, usize::MAX).map(|(mut op, later)| {
            op.tiles.extend(later.make());
            op
        });
        Analysis { ops: ops.collect() }
    }

    /// The analysis an op at a time, in op order ([`Analysis::ops`]): an op's tiles are made
    /// when it is asked for, so a caller that writes each op and keeps only part of it
    /// holds one op's tiles at a time (module `write`). Each op comes with its first
    /// `made` tiles in [`OpAnalysis::tiles`] and the rest still as cells ([`LaterTiles`]),
    /// so that an op of very many tiles is never held whole: its own fields (sums over its
    /// tiles, verdict, disagreeing tiles) are computed first, from each tile made and let
    /// go, and a later tile is made again when it is written (issue 41: one op of 60,000
    /// tiles held 76 MB of tiles).
    pub(crate) fn into_ops(
        self,
        p: &Profile,
        made: usize,
    ) -> impl Iterator<Item = (OpAnalysis, LaterTiles<'_>)> + '_ {
        let mut paths = self.paths.finish(p);
        let holds = Rc::new(held::index(p.oplog.as_ref()));
        // Tiles per op: each op's list sized to them (a doubling one held up to twice its
        // 200 bytes a tile unused; issue 41).
        let mut tile_count: HashMap<u32, usize> = HashMap::new();
        for &(op, ..) in self.cells.keys() {
            *tile_count.entry(op).or_default() += 1;
        }
        let counted = self.counted;
        // The cells are in op order: an op is whole when the next cell is another op's.
        let mut cells = self.cells.into_iter().peekable();
        std::iter::from_fn(move || {
            let op = cells.peek()?.0 .0;
            let o = &p.ops[op as usize];
            let mut later = LaterTiles {
                p,
                op,
                holds: Rc::clone(&holds),
                cells: Vec::new(),
            };
            // The verdict's RISC of each later tile, for the disagreeing tiles once the
            // op's own verdict is known.
            let mut later_riscs: Vec<Option<Risc>> = Vec::new();
            let mut entry: Option<OpAnalysis> = None;
            while let Some(((_, chip, tile), riscs)) = cells.next_if(|((o, ..), _)| *o == op) {
                let entry = entry.get_or_insert_with(|| {
                    let rec = p.op_record(o.chip, o.run);
                    let tiles = tile_count.get(&op).copied().unwrap_or(0);
                    OpAnalysis {
                        op: o.name.clone(),
                        chip,
                        run: o.run,
                        span_ns: 0.0,
                        riscs: Vec::new(),
                        verdict: None,
                        disagreeing_tiles: Vec::new(),
                        tiles: Vec::with_capacity(tiles.min(made)),
                        tiles_left_out: 0,
                        critical_path: None,
                        counters: counters::of(rec),
                        counted_zones: counters::counted_zones(&counted, op, rec),
                        roofline: roofline::of(rec, p.geometry().arch),
                    }
                });
                let is_later = entry.tiles.len() >= made;
                let t = if !is_later {
                    tile_analysis(p, op, chip, tile, riscs, &holds)
                } else {
                    let t = tile_analysis(p, op, chip, tile, riscs.clone(), &holds);
                    later.cells.push((chip, tile, riscs));
                    later_riscs.push(t.verdict.as_ref().and_then(|v| Risc::from_name(&v.risc)));
                    t
                };
                entry.span_ns += t.span_ns;
                add_up(&mut entry.riscs, &t.riscs);
                if !is_later {
                    entry.tiles.push(t);
                }
            }
            let mut a = entry?;
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
                let made = a.tiles.iter().filter(|t| v.disagrees(t));
                let later = later
                    .cells
                    .iter()
                    .zip(&later_riscs)
                    .filter(|(_, r)| r.is_some_and(|r| r.name() != v.risc));
                a.disagreeing_tiles = made
                    .map(|t| t.tile.clone())
                    .chain(later.map(|((_, tile, _), _)| tile_name(*tile)))
                    .collect();
            }
            Some((a, later))
        })
    }
}

/// An op's tiles past the ones [`Analyzer::into_ops`] made: still as cells, each made into
/// its [`TileAnalysis`] when asked for ([`LaterTiles::make`]), the same to the bit.
pub(crate) struct LaterTiles<'p> {
    p: &'p Profile,
    op: u32,
    holds: Rc<held::Index<'p>>,
    /// (chip, tile, its RISCs' cells), in tile order.
    cells: Vec<(u32, NocCoord, TileCells)>,
}

impl<'p> LaterTiles<'p> {
    /// No later tile (an op of `p` made whole).
    pub(crate) fn none(p: &'p Profile) -> LaterTiles<'p> {
        LaterTiles {
            p,
            op: 0,
            holds: Rc::default(),
            cells: Vec::new(),
        }
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// Each made, in tile order (after the op's [`OpAnalysis::tiles`]).
    pub(crate) fn make(&self) -> impl Iterator<Item = TileAnalysis> + '_ {
        self.cells.iter().map(|(chip, tile, riscs)| {
            tile_analysis(self.p, self.op, *chip, *tile, riscs.clone(), &self.holds)
        })
    }
}

/// One tile of op `op` made from its cells: its RISCs' times, span, CB links and verdict.
fn tile_analysis(
    p: &Profile,
    op: u32,
    chip: u32,
    tile: NocCoord,
    riscs: TileCells,
    holds: &held::Index<'_>,
) -> TileAnalysis {
    let (times, span) = tile_times(p, op, chip, tile, riscs, holds);
    TileAnalysis {
        tile: tile_name(tile),
        span_ns: span,
        verdict: verdict(&times, span),
        cbs: cb_links(&times, span),
        riscs: times,
    }
}

/// One tile's RISC times in op `op` from its cells (each RISC the op log runs a kernel on
/// here and that recorded nothing added), in pipeline order, and the tile's span (first
/// KERNEL start to last KERNEL end, ns).
fn tile_times(
    p: &Profile,
    op: u32,
    chip: u32,
    tile: NocCoord,
    mut riscs: TileCells,
    holds: &held::Index<'_>,
) -> (Vec<RiscTime>, f64) {
    let o = &p.ops[op as usize];
    let cpn = p.timebase.chips.get(&chip).map_or(0.0, |c| c.cycles_per_ns);
    // A RISC the op log runs a kernel on here whose KERNEL zone never arrived.
    let rec = p.op_record(o.chip, o.run);
    if let Some(rec) = rec {
        for risc in Risc::ALL {
            if rec.kernel_for(tile, risc).is_some() && riscs.iter().all(|r| r.risc != risc) {
                cell_in(&mut riscs, risc).unrecorded = true;
            }
        }
    }
    let lo = riscs.iter().map(|r| r.first).fold(f64::INFINITY, f64::min);
    let hi = riscs
        .iter()
        .map(|r| r.last)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 0.0 };
    let mut times: Vec<RiscTime> = riscs
        .into_iter()
        .map(|c| {
            let (risc, lo) = (c.risc, c.first);
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
            let (mut t, kernel, covered) = c.into_time(stage);
            t.missing_kernel_zone = !lo.is_finite();
            if let Some(spans) = holds.get(&(o.chip, o.run, tile, risc)) {
                held::apply(&mut t, (kernel, covered), risc, spans, cpn);
            }
            // The records inside waits left those waits (`Cell::into_time`); every
            // record's cost is out of busy time.
            let waited: f64 = t.by_wait.values().sum::<f64>() + t.held.values().sum::<f64>();
            t.busy_ns =
                (t.kernel_ns - waited - t.profiler_stall_ns - t.profiler_records_ns).max(0.0);
            t.waits = waits_by_name(&t);
            t
        })
        .collect();
    times.sort_by_key(|t| pipeline_order(t.risc));
    (times, span)
}

/// Adds one tile's RISC times to the op's sums over its tiles.
fn add_up(riscs: &mut Vec<RiscTime>, times: &[RiscTime]) {
    for t in times {
        match riscs.iter_mut().find(|r| r.risc == t.risc) {
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
            None => riscs.push(t.clone()),
        }
    }
}
