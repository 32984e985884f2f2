//! Whole host ns of device times, for the outputs that write them (Tracy, Perfetto,
//! Parquet, the op report): exact at any cycle count.
//!
//! The model carries each time as an `f64` of ns, which is no longer whole from 2^53 ns
//! (104 days of a 1 GHz counter) on and a few ulps off before that. Below [`F64_BELOW`] ns
//! its error is under 2^-16 ns, so it rounds to the same whole ns as the exact time
//! whenever that is not within 2^-16 ns of a half (never, on a clock of whole MHz up to
//! 32 GHz: its fractions are multiples of `1 / MHz`), and is used as is (cheap, and what
//! the outputs always wrote); from there on the time is taken from the tile's clock
//! ([`crate::timebase::HostTime`]).

use crate::ops::At;
use crate::timebase::{HostTime, TileClock};

/// Host ns below which an `f64` of the time is within 2^-16 ns of it (2^36 ns: 69 s).
pub(crate) const F64_BELOW: f64 = (1u64 << 36) as f64;

/// The nearest whole ns (halves away from zero, as `f64::round`) of a time the model gives
/// as `ns`, which `exact` gives exactly; `None` when it is not a finite number.
pub(crate) fn whole(ns: f64, exact: impl FnOnce() -> Option<HostTime>) -> Option<i128> {
    if ns.abs() < F64_BELOW {
        return Some(ns.round() as i128);
    }
    exact()?.round()
}

/// [`whole`] of `cycles` on `clock` (`ns`: the same time through the `f64` conversion;
/// `None` without a clock).
pub(crate) fn whole_at(clock: Option<&TileClock>, cycles: u64, ns: f64) -> Option<i128> {
    whole(ns, || clock.map(|c| c.host_time(cycles)))
}

/// [`whole`] of an op's device time.
pub(crate) fn whole_of(at: &At) -> Option<i128> {
    whole(at.ns, || Some(at.time))
}

/// `v` clamped into `i64` (Tracy's and Parquet's whole ns).
pub(crate) fn to_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// `v` clamped into `u64` (Perfetto's timestamps, never negative).
pub(crate) fn to_u64(v: i128) -> u64 {
    v.clamp(0, u64::MAX as i128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timebase::ChipTime;
    use riscv_linker::NocCoord;

    /// Issue 41: whole ns at any count: the `f64` below 2^36 ns, the exact time after.
    #[test]
    fn whole_ns_are_exact_at_any_count() {
        let t = NocCoord::new(1, 1);
        let c = ChipTime::nominal(1000);
        let clock = c.tile_clock(t);
        let at = |n: u64| whole_at(Some(&clock), n, c.host_ns(t, n));
        assert_eq!(at(12_345), Some(12_345));
        assert_eq!(at(u64::MAX), Some(u64::MAX as i128));
        assert_eq!(at((1 << 62) + 7), Some((1 << 62) + 7));
        assert_eq!(whole_at(None, 1 << 62, f64::NAN), None);
        // 1350 MHz: 27 cycles are 20 ns; 2^62 + 14 cycles are ... + 10.37 ns.
        let bh = ChipTime::nominal(1350);
        let clock = bh.tile_clock(t);
        let n = 27 * (1u64 << 57) + 14;
        let want = 20 * (1i128 << 57) + 10;
        assert_eq!(whole_at(Some(&clock), n, bh.host_ns(t, n)), Some(want));
        assert_eq!((to_i64(want << 8), to_u64(-1)), (i64::MAX, 0));
    }
}
