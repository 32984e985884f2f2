//! The durations of one summary row (op, zone name): every value while the summary holds
//! few enough to sort (`EXACT_ZONES` over every row), else a DDSketch
//! (`sketches-ddsketch`: quantiles within `RELATIVE_ERROR` of the true value, a few KiB
//! whatever the count) with the count, total, min and max still exact. The summary of a
//! run of any length then stays within a constant; a run under the limit gets exact
//! nearest-rank percentiles, byte for byte what sorting every duration gives.

use super::{Stats, Whole};
use crate::timebase::{round_half_even, NsPerCycle};
use sketches_ddsketch::{Config, DDSketch};

/// Durations the whole summary holds exactly (an `f64` of ns and a `u64` of cycles each:
/// 16 MiB); past it the largest rows become sketches until half of it is held.
pub(crate) const EXACT_ZONES: usize = 1 << 20;

/// The sketches' relative error on p50 and p99.
pub(crate) const RELATIVE_ERROR: f64 = 0.01;

/// One row's durations in ns and in cycles, and the clock rate they share (if they do).
#[derive(Default)]
pub(crate) struct Durations {
    values: Values,
    clock: RowClock,
}

enum Values {
    Exact {
        ns: Vec<f64>,
        cycles: Vec<u64>,
    },
    Sketched {
        ns: Box<Sketch>,
        cycles: Box<Sketch>,
    },
}

impl Default for Values {
    fn default() -> Values {
        Values::Exact {
            ns: Vec::new(),
            cycles: Vec::new(),
        }
    }
}

/// The clock rate of every duration of a row: one exact rate (every zone on chips of one
/// constant frequency) makes the row's ns figures exact from its whole cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum RowClock {
    /// Nothing added yet.
    #[default]
    Unset,
    /// Every duration so far at this rate.
    One(NsPerCycle),
    /// Different rates, or one without an exact rate (drift, frequency steps, no timebase).
    Mixed,
}

impl RowClock {
    /// Adds a duration at `rate`.
    pub(super) fn add(&mut self, rate: Option<NsPerCycle>) {
        *self = match (*self, rate) {
            (RowClock::Unset, Some(r)) => RowClock::One(r),
            (RowClock::One(a), Some(r)) if a == r => RowClock::One(a),
            _ => RowClock::Mixed,
        };
    }

    /// The one rate, if there is one.
    pub(super) fn rate(&self) -> Option<NsPerCycle> {
        match self {
            RowClock::One(r) => Some(*r),
            _ => None,
        }
    }
}

/// A sketch and the exact count, total, min and max beside it (the cycles' in integers).
pub(super) struct Sketch {
    sketch: DDSketch,
    n: u64,
    total: f64,
    min: f64,
    max: f64,
    /// Whole cycles: total, min and max.
    cycles: (u128, u64, u64),
}

impl Sketch {
    fn new() -> Sketch {
        Sketch {
            sketch: DDSketch::new(Config::new(RELATIVE_ERROR, 4096, 1e-3)),
            n: 0,
            total: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            cycles: (0, u64::MAX, 0),
        }
    }

    fn add(&mut self, v: f64) {
        self.n += 1;
        self.total += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        // The sketch takes positive values; a zero (or a negative duration) counts at its
        // floor, and the percentile is clamped to [min, max] below.
        self.sketch.add(v.max(0.0));
    }

    fn add_cycles(&mut self, v: u64) {
        self.add(v as f64);
        let (total, min, max) = &mut self.cycles;
        *total += v as u128;
        *min = (*min).min(v);
        *max = (*max).max(v);
    }

    /// Nearest-rank-like percentiles from the sketch, inside the exact [min, max].
    fn stats(&self) -> Stats {
        if self.n == 0 {
            return Stats::default();
        }
        let q = |p: f64| {
            self.sketch
                .quantile(p)
                .ok()
                .flatten()
                .unwrap_or(self.min)
                .clamp(self.min, self.max)
        };
        Stats {
            total: self.total,
            mean: self.total / self.n as f64,
            p50: q(0.50),
            p99: q(0.99),
            min: self.min,
            max: self.max,
            whole: None,
        }
    }

    /// The exact figures of a sketch of cycles (its percentiles are estimates).
    fn cycle_figures(&self) -> Figures {
        let (total, min, max) = self.cycles;
        Figures {
            n: self.n,
            total,
            p50: None,
            p99: None,
            min,
            max,
        }
    }
}

/// A row's exact figures in whole cycles (`None`: an estimate, not known exactly).
struct Figures {
    n: u64,
    total: u128,
    p50: Option<u64>,
    p99: Option<u64>,
    min: u64,
    max: u64,
}

impl Figures {
    /// Of every value (sorted in place), percentiles by nearest rank as [`Stats::of`].
    fn of(values: &mut [u64]) -> Option<Figures> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let n = values.len();
        let rank = |p: usize| values[(p * n).div_ceil(100).clamp(1, n) - 1];
        Some(Figures {
            n: n as u64,
            total: values.iter().map(|&v| v as u128).sum(),
            p50: Some(rank(50)),
            p99: Some(rank(99)),
            min: values[0],
            max: values[n - 1],
        })
    }

    /// The figures rounded to whole cycles (ties to even, as `{:.0}` rounds).
    fn cycles(&self) -> Whole {
        let n = self.n.max(1) as u128;
        let mean = round_half_even(self.total / n, self.total % n, n).unwrap_or(u128::MAX);
        Whole {
            total: self.total,
            mean,
            p50: self.p50.map(u128::from),
            p99: self.p99.map(u128::from),
            min: self.min as u128,
            max: self.max as u128,
        }
    }

    /// The figures in whole ns at `rate` (`None` when one does not fit in 128 bits).
    fn ns(&self, rate: NsPerCycle) -> Option<Whole> {
        let ns = |c: u64| rate.whole_ns(c as u128, 1);
        let estimate = |c: Option<u64>| c.map(|c| ns(c).ok_or(())).transpose().ok();
        Some(Whole {
            total: rate.whole_ns(self.total, 1)?,
            mean: rate.whole_ns(self.total, self.n.max(1) as u128)?,
            p50: estimate(self.p50)?,
            p99: estimate(self.p99)?,
            min: ns(self.min)?,
            max: ns(self.max)?,
        })
    }
}

impl Figures {
    /// The figures as `f64`s (the mean unrounded), with [`Figures::cycles`] as their whole
    /// figures.
    fn stats(&self) -> Stats {
        let opt = |v: Option<u64>| v.unwrap_or(0) as f64;
        Stats {
            total: self.total as f64,
            mean: self.total as f64 / self.n.max(1) as f64,
            p50: opt(self.p50),
            p99: opt(self.p99),
            min: self.min as f64,
            max: self.max as f64,
            whole: Some(self.cycles()),
        }
    }
}

/// Statistics of `values` whole cycles (sorted in place), every figure exact ([`Whole`]).
#[cfg(test)]
pub(crate) fn cycle_stats(values: &mut [u64]) -> Stats {
    Figures::of(values).map_or_else(Stats::default, |f| f.stats())
}

impl Durations {
    /// Values held exactly (0 for a sketch).
    pub(super) fn held(&self) -> usize {
        match &self.values {
            Values::Exact { ns, .. } => ns.len(),
            Values::Sketched { .. } => 0,
        }
    }

    /// Zones counted.
    pub(super) fn count(&self) -> u64 {
        match &self.values {
            Values::Exact { ns, .. } => ns.len() as u64,
            Values::Sketched { ns, .. } => ns.n,
        }
    }

    /// Whether the percentiles are estimates.
    pub(crate) fn sketched(&self) -> bool {
        matches!(self.values, Values::Sketched { .. })
    }

    /// One zone's duration: in ns, in whole cycles, and the exact rate between the two
    /// when its chip's clock has one ([`crate::timebase::ChipTime::ns_per_cycle`]).
    pub(super) fn push(&mut self, ns_value: f64, cycles_value: u64, rate: Option<NsPerCycle>) {
        self.clock.add(rate);
        match &mut self.values {
            Values::Exact { ns, cycles } => {
                ns.push(ns_value);
                cycles.push(cycles_value);
            }
            Values::Sketched { ns, cycles } => {
                ns.add(ns_value);
                cycles.add_cycles(cycles_value);
            }
        }
    }

    /// Turns the values held into a sketch (in the order they came).
    pub(crate) fn sketch(&mut self) {
        if let Values::Exact { ns, cycles } = &self.values {
            let (mut a, mut b) = (Sketch::new(), Sketch::new());
            ns.iter().for_each(|&v| a.add(v));
            cycles.iter().for_each(|&v| b.add_cycles(v));
            self.values = Values::Sketched {
                ns: Box::new(a),
                cycles: Box::new(b),
            };
        }
    }

    /// Statistics in ns and in cycles. The cycles' figures are exact integers; so are the
    /// ns figures when every duration had one exact rate (else they are the `f64`s').
    pub(super) fn stats(self) -> (Stats, Stats) {
        let rate = self.clock.rate();
        let (mut ns, mut cycles, figures) = match self.values {
            Values::Exact { mut ns, mut cycles } => {
                let Some(f) = Figures::of(&mut cycles) else {
                    return (Stats::of(&mut ns), Stats::default());
                };
                (Stats::of(&mut ns), f.stats(), f)
            }
            Values::Sketched { ns, cycles } => (ns.stats(), cycles.stats(), cycles.cycle_figures()),
        };
        ns.whole = rate.and_then(|r| figures.ns(r));
        cycles.whole = Some(figures.cycles());
        (ns, cycles)
    }
}

/// Keeps `rows` within [`EXACT_ZONES`] held values: when `held` passes it, the largest
/// exact rows become sketches until at most half of it is held. Returns the new `held`.
pub(super) fn bound<'a>(rows: impl Iterator<Item = &'a mut Durations>, held: usize) -> usize {
    if held <= EXACT_ZONES {
        return held;
    }
    let mut exact: Vec<&mut Durations> = rows.filter(|d| d.held() > 0).collect();
    exact.sort_by_key(|d| std::cmp::Reverse(d.held()));
    let mut held = held;
    for d in exact {
        if held <= EXACT_ZONES / 2 {
            break;
        }
        held -= d.held();
        d.sketch();
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sketch_keeps_count_total_min_max_exact_and_percentiles_within_the_error() {
        let mut exact = Durations::default();
        let mut sketched = Durations::default();
        for i in 1..=100_000u32 {
            let v = f64::from(i % 1000 + 1) * 3.0;
            exact.push(v, v as u64, None);
            sketched.push(v, v as u64, None);
        }
        sketched.sketch();
        assert!(sketched.sketched() && sketched.held() == 0);
        assert_eq!(sketched.count(), 100_000);
        let (e, _) = exact.stats();
        let (s, _) = sketched.stats();
        assert_eq!((s.total, s.min, s.max), (e.total, e.min, e.max));
        for (a, b) in [(s.p50, e.p50), (s.p99, e.p99)] {
            assert!((a - b).abs() <= b * RELATIVE_ERROR * 1.01, "{a} vs {b}");
        }
    }

    #[test]
    fn past_the_limit_the_largest_rows_become_sketches() {
        let mut rows: Vec<Durations> = (0..3).map(|_| Durations::default()).collect();
        for _ in 0..EXACT_ZONES / 4 {
            rows[0].push(1.0, 1, None);
        }
        for _ in 0..EXACT_ZONES {
            rows[1].push(2.0, 2, None);
        }
        rows[2].push(3.0, 3, None);
        let held: usize = rows.iter().map(Durations::held).sum();
        let held = bound(rows.iter_mut(), held);
        assert_eq!(held, EXACT_ZONES / 4 + 1);
        assert_eq!(
            rows.iter().map(Durations::sketched).collect::<Vec<_>>(),
            [false, true, false]
        );
        assert_eq!(
            bound(rows.iter_mut(), held),
            held,
            "under the limit: unchanged"
        );
    }
}
