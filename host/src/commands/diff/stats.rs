//! One side's count, total, mean and percentiles per row.

use super::{Durations, Sample, SumSample};
use crate::timebase::round_half_even;
use serde::{Serialize, Serializer};

/// A cycle total (exact, 128 bits) as JSON: a number, or a string of its digits above
/// 2^64 - 1, which JSON readers would round.
fn total_json<S: Serializer>(v: &u128, s: S) -> std::result::Result<S::Ok, S::Error> {
    match u64::try_from(*v) {
        Ok(n) => s.serialize_u64(n),
        Err(_) => s.serialize_str(&v.to_string()),
    }
}

/// Count, total, mean and percentiles of one side's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SideStats {
    /// Zones (for a sum zone: its measurements).
    pub count: u64,
    /// Samples the statistics and the test use: zones, or a sum zone's records.
    pub samples: u64,
    /// Total device cycles, summed exactly (128 bits; see the module docs).
    #[serde(serialize_with = "total_json")]
    pub total_cycles: u128,
    /// Mean cycles (per measurement, for a sum zone).
    pub(crate) mean_cycles: f64,
    /// Median cycles (of the samples).
    pub(crate) p50_cycles: u64,
    /// 99th percentile, cycles.
    pub(crate) p99_cycles: u64,
    /// Total host ns.
    pub(crate) total_ns: f64,
    /// Mean ns.
    pub(crate) mean_ns: f64,
    /// Median ns.
    pub p50_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
}

/// Nearest-rank index of percentile `p` (0..1) of `n` sorted values.
fn rank(p: f64, n: usize) -> usize {
    ((p * n as f64).ceil() as usize).clamp(1, n) - 1
}

impl SideStats {
    /// Of `samples` (nearest-rank percentiles).
    pub fn of(samples: &[Sample]) -> SideStats {
        if samples.is_empty() {
            return SideStats::default();
        }
        let n = samples.len();
        let mut c: Vec<u64> = samples.iter().map(|s| s.cycles).collect();
        c.sort_unstable();
        let mut ns: Vec<f64> = samples.iter().map(|s| s.ns).collect();
        ns.sort_unstable_by(f64::total_cmp);
        let total_cycles: u128 = c.iter().map(|&c| c as u128).sum();
        let total_ns: f64 = ns.iter().sum();
        SideStats {
            count: n as u64,
            samples: n as u64,
            total_cycles,
            mean_cycles: total_cycles as f64 / n as f64,
            p50_cycles: c[rank(0.5, n)],
            p99_cycles: c[rank(0.99, n)],
            total_ns,
            mean_ns: total_ns / n as f64,
            p50_ns: ns[rank(0.5, n)],
            p99_ns: ns[rank(0.99, n)],
        }
    }

    /// Of one (op, zone)'s durations: [`SideStats::of`] its kept durations, with the count,
    /// totals and means over every zone when those are a sample.
    pub fn of_durations(d: &Durations) -> SideStats {
        let mut st = SideStats::of(d.kept());
        if d.is_sampled() {
            st.count = d.count;
            st.total_cycles = d.total_cycles;
            st.mean_cycles = d.total_cycles as f64 / d.count as f64;
            st.total_ns = d.total_ns;
            st.mean_ns = d.total_ns / d.count as f64;
        }
        st
    }

    /// Of sum zone records: count and totals over every measurement, percentiles of each
    /// record's cycles (ns) per measurement.
    pub(crate) fn of_sums(records: &[SumSample]) -> SideStats {
        if records.is_empty() {
            return SideStats::default();
        }
        let n = records.len();
        let count: u64 = records.iter().map(|r| r.count as u64).sum();
        let total_cycles: u128 = records.iter().map(|r| r.total_cycles as u128).sum();
        let total_ns: f64 = records.iter().map(|r| r.ns).sum();
        // Each record's mean rounded (halves up) in integers: exact past 2^53 cycles.
        let mut c: Vec<u64> = records
            .iter()
            .map(|r| match r.count as u128 {
                0 => 0,
                n => ((2 * r.total_cycles as u128 + n) / (2 * n)) as u64,
            })
            .collect();
        c.sort_unstable();
        let mut ns: Vec<f64> = records
            .iter()
            .map(|r| {
                if r.count == 0 {
                    0.0
                } else {
                    r.ns / r.count as f64
                }
            })
            .collect();
        ns.sort_unstable_by(f64::total_cmp);
        let per = |x: f64| if count == 0 { 0.0 } else { x / count as f64 };
        SideStats {
            count,
            samples: n as u64,
            total_cycles,
            mean_cycles: per(total_cycles as f64),
            p50_cycles: c[rank(0.5, n)],
            p99_cycles: c[rank(0.99, n)],
            total_ns,
            mean_ns: per(total_ns),
            p50_ns: ns[rank(0.5, n)],
            p99_ns: ns[rank(0.99, n)],
        }
    }
}

impl SideStats {
    /// [`SideStats::mean_cycles`] as the text prints it (one decimal): `total_cycles / count`
    /// exactly (ties to even) from 2^53 cycles on, where the `f64` mean is a cycle or more off
    /// (2^64 - 1 would show as `...616.0`); below, the `f64`'s, as always.
    pub(crate) fn mean_cycles_text(&self) -> String {
        let (total, n) = (self.total_cycles, self.count as u128);
        if total < 1 << 53 || n == 0 {
            return format!("{:.1}", self.mean_cycles);
        }
        let tenths = total
            .checked_mul(10)
            .and_then(|t| round_half_even(t / n, t % n, n));
        match tenths {
            Some(t) => format!("{}.{}", t / 10, t % 10),
            None => format!("{:.1}", self.mean_cycles),
        }
    }
}

/// Each sum record's cycles per measurement (0 without measurements).
pub(super) fn sum_means(records: &[SumSample]) -> impl Iterator<Item = f64> + '_ {
    records.iter().map(|r| {
        if r.count == 0 {
            0.0
        } else {
            r.total_cycles as f64 / r.count as f64
        }
    })
}
