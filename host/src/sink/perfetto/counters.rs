//! The op log's performance counters as the trace's counter tracks read them: what each
//! op armed and counted (read once per profile), and spans of a counter's value turned into
//! a track's points.

use crate::oplog::COUNTED_BANKS;
use crate::profile::Profile;
use crate::sink::analysis::op_counters;
use std::collections::HashMap;

/// A counter's (start, end, value) spans as points of a track that reads the value of the
/// latest-started span still open, and 0 when none is: a point at every start, and at every
/// end of that latest span (the value of the span open before it, else 0). Spans that do
/// not overlap give a point at each start and a 0 at each end. Points in time order.
pub(super) fn steps(mut spans: Vec<(u64, u64, f64)>) -> Vec<(u64, f64)> {
    // Stable: spans that start together keep their order (a zone's before its inner zones).
    spans.sort_by_key(|s| s.0);
    let mut points = Vec::with_capacity(2 * spans.len());
    // (end, value) of the open spans, in start order.
    let mut open: Vec<(u64, f64)> = Vec::new();
    for (start, end, value) in spans {
        close_until(&mut open, &mut points, start);
        open.push((end.max(start), value));
        points.push((start, value));
    }
    close_until(&mut open, &mut points, u64::MAX);
    points
}

/// Closes the spans of `open` that end by `t`, earliest end first (see [`steps`]).
fn close_until(open: &mut Vec<(u64, f64)>, points: &mut Vec<(u64, f64)>, t: u64) {
    loop {
        let earliest = (0..open.len()).min_by_key(|&i| open[i].0);
        let Some(i) = earliest.filter(|&i| open[i].0 <= t) else {
            return;
        };
        let (end, _) = open.remove(i);
        if i == open.len() {
            points.push((end, open.last().map_or(0.0, |o| o.1)));
        }
    }
}

/// `100 * value / cycles`, `None` over no cycles (nothing to divide by: no point).
pub(super) fn share(value: u64, cycles: u64) -> Option<f64> {
    (cycles > 0).then(|| 100.0 * value as f64 / cycles as f64)
}

/// What the op log says of one op's performance counters (`ttprof run --counters`).
#[derive(Default)]
struct RunCounters {
    /// The counter armed in each bank of [`COUNTED_BANKS`] (an index of
    /// [`Counters::names`]; `None`: none was armed, a counted zone there measured nothing).
    armed: [Option<usize>; COUNTED_BANKS.len()],
    /// Per counter (an index of [`Counters::names`]): its value and the cycles of the tiles
    /// that counted it, each summed over those tiles.
    totals: Vec<(usize, u64, u64)>,
}

/// The op log's performance counters by (chip, run id), read once per profile, and the
/// counter names the tracks are keyed by.
#[derive(Default)]
pub(super) struct Counters {
    /// Counter names (`FPU_COUNTER`) in the order first seen: a name's index goes into its
    /// tracks' uuids.
    pub(super) names: Vec<String>,
    /// The profile ([`Profile::uid`]) `runs` was read from.
    uid: Option<u64>,
    /// Per (chip, run id): the first op record of it, as [`crate::oplog::OpLog::op`] finds.
    runs: HashMap<(u32, u32), RunCounters>,
}

impl Counters {
    /// Reads `p`'s op log unless it was read already: one walk, not one per zone or op.
    pub(super) fn load(&mut self, p: &Profile) {
        if self.uid == Some(p.uid()) {
            return;
        }
        self.uid = Some(p.uid());
        self.runs.clear();
        let Some(log) = p.oplog.as_ref() else {
            return;
        };
        let Counters { names, runs, .. } = self;
        for rec in log.ops() {
            runs.entry((rec.device, rec.run_id)).or_insert_with(|| {
                let mut run = RunCounters::default();
                for (b, bank) in COUNTED_BANKS.iter().enumerate() {
                    run.armed[b] = rec.armed_counter(bank).map(|n| name_index(names, n));
                }
                run.totals = op_counters(rec)
                    .into_iter()
                    .map(|c| (name_index(names, &c.name), c.value, c.cycles))
                    .collect();
                run
            });
        }
    }

    /// The counter (an index of `names`) armed in `bank` for run `run` on `chip`.
    pub(super) fn armed(&self, chip: u32, run: u32, bank: &str) -> Option<usize> {
        let b = COUNTED_BANKS.iter().position(|&x| x == bank)?;
        self.runs.get(&(chip, run))?.armed[b]
    }

    /// Per counter the op log holds for run `run` on `chip`: (name, value, cycles).
    pub(super) fn totals(&self, chip: u32, run: u32) -> &[(usize, u64, u64)] {
        self.runs.get(&(chip, run)).map_or(&[], |r| &r.totals)
    }
}

/// The index of `name` in `names`, added at the end the first time.
fn name_index(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_string());
            names.len() - 1
        }
    }
}
