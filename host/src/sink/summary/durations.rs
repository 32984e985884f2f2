//! The durations of one summary row (op, zone name): every value while the summary holds
//! few enough to sort (`EXACT_ZONES` over every row), else a DDSketch
//! (`sketches-ddsketch`: quantiles within `RELATIVE_ERROR` of the true value, a few KiB
//! whatever the count) with the count, total, min and max still exact. The summary of a
//! run of any length then stays within a constant; a run under the limit gets exact
//! nearest-rank percentiles, byte for byte what sorting every duration gives.

use super::Stats;
use sketches_ddsketch::{Config, DDSketch};

/// Durations the whole summary holds exactly (two `f64` each: 16 MiB); past it the largest
/// rows become sketches until half of it is held.
pub(crate) const EXACT_ZONES: usize = 1 << 20;

/// The sketches' relative error on p50 and p99.
pub(crate) const RELATIVE_ERROR: f64 = 0.01;

/// One row's durations in ns and in cycles.
pub(super) enum Durations {
    Exact {
        ns: Vec<f64>,
        cycles: Vec<f64>,
    },
    Sketched {
        ns: Box<Sketch>,
        cycles: Box<Sketch>,
    },
}

impl Default for Durations {
    fn default() -> Durations {
        Durations::Exact {
            ns: Vec::new(),
            cycles: Vec::new(),
        }
    }
}

/// A sketch and the exact count, total, min and max beside it.
pub(super) struct Sketch {
    sketch: DDSketch,
    n: u64,
    total: f64,
    min: f64,
    max: f64,
}

impl Sketch {
    fn new() -> Sketch {
        Sketch {
            sketch: DDSketch::new(Config::new(RELATIVE_ERROR, 4096, 1e-3)),
            n: 0,
            total: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
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
        }
    }
}

impl Durations {
    /// Values held exactly (0 for a sketch).
    pub(super) fn held(&self) -> usize {
        match self {
            Durations::Exact { ns, .. } => ns.len(),
            Durations::Sketched { .. } => 0,
        }
    }

    /// Zones counted.
    pub(super) fn count(&self) -> u64 {
        match self {
            Durations::Exact { ns, .. } => ns.len() as u64,
            Durations::Sketched { ns, .. } => ns.n,
        }
    }

    /// Whether the percentiles are estimates.
    pub(crate) fn sketched(&self) -> bool {
        matches!(self, Durations::Sketched { .. })
    }

    /// One zone's duration.
    pub(super) fn push(&mut self, ns_value: f64, cycles_value: f64) {
        match self {
            Durations::Exact { ns, cycles } => {
                ns.push(ns_value);
                cycles.push(cycles_value);
            }
            Durations::Sketched { ns, cycles } => {
                ns.add(ns_value);
                cycles.add(cycles_value);
            }
        }
    }

    /// Turns the values held into a sketch (in the order they came).
    pub(crate) fn sketch(&mut self) {
        if let Durations::Exact { ns, cycles } = self {
            let (mut a, mut b) = (Sketch::new(), Sketch::new());
            ns.iter().for_each(|&v| a.add(v));
            cycles.iter().for_each(|&v| b.add(v));
            *self = Durations::Sketched {
                ns: Box::new(a),
                cycles: Box::new(b),
            };
        }
    }

    /// Statistics in ns and in cycles.
    pub(super) fn stats(self) -> (Stats, Stats) {
        match self {
            Durations::Exact { mut ns, mut cycles } => (Stats::of(&mut ns), Stats::of(&mut cycles)),
            Durations::Sketched { ns, cycles } => (ns.stats(), cycles.stats()),
        }
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
            exact.push(v, v);
            sketched.push(v, v);
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
            rows[0].push(1.0, 1.0);
        }
        for _ in 0..EXACT_ZONES {
            rows[1].push(2.0, 2.0);
        }
        rows[2].push(3.0, 3.0);
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
