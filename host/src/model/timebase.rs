//! Device cycles to host time: the one interface between clock alignment (which builds a
//! [`Timebase`] from sync samples) and the outputs (which place device records on the host
//! timeline: op durations in ns, Tracy, trace JSON).
//!
//! Host time is nanoseconds on the host clock the op log uses (`OpRecord::host_start_ns`).
//! A [`Timebase::nominal`] one assumes the nominal AICLK and puts cycle 0 at host time 0;
//! a fitted one (see the clock-alignment module) knows each chip's true frequency and drift
//! and each tile's offset, and how accurate it is.
//!
//! A chip whose AI clock stepped during the run (DVFS) has [`ChipTime::segments`]: its
//! counter is continuous, and between steps it runs at each segment's frequency (and
//! drift). `cycles_per_ns` is then the cycle-weighted mean frequency over the synced span
//! (total cycles / total host time): what one number for the whole run can say (the device
//! CSV's `CHIP_FREQ[MHz]`), while [`ChipTime::host_ns`] maps through the segments.

use riscv_linker::{Arch, NocCoord};
use std::collections::BTreeMap;

/// How one chip's device cycles map to host time.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipTime {
    /// Device cycles per host nanosecond at host time `reference_ns` (GHz).
    pub cycles_per_ns: f64,
    /// Change of `cycles_per_ns` per host nanosecond (drift), 0 when not modelled.
    pub drift_per_ns: f64,
    /// Host time the frequency is given at.
    pub(crate) reference_ns: f64,
    /// Device cycles of each tile's clock at `reference_ns`.
    pub tile_cycles_at_reference: BTreeMap<NocCoord, f64>,
    /// For tiles without their own entry.
    pub(crate) default_cycles_at_reference: f64,
    /// Root-mean-square residual of the fit, in ns (0 for nominal).
    pub residual_ns: f64,
    /// Estimated error of a converted time, in ns (`None` for nominal: unknown).
    pub error_ns: Option<f64>,
    /// Frequency segments when the AI clock stepped (DVFS), in time order; empty: one
    /// frequency, given by the fields above.
    pub segments: Vec<Segment>,
}

/// One stretch of constant AI-clock target between frequency steps.
///
/// Cycles count on the chip's common counter, relative to a tile's reference: tile `j`'s
/// `cycles - tile_cycles_at_reference[j]`. Over the segment the counter is
/// `origin_cycles + f·τ + g·τ²/2` with `τ = t - origin_ns`.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Host ns the segment starts at (the located step; for the first, where the samples start).
    pub start_ns: f64,
    /// Host ns of the segment's origin: its start, except for the first segment (the next step).
    pub origin_ns: f64,
    /// Common-counter cycles at `origin_ns`; a count at or after it belongs to this segment
    /// (every count before the second segment's origin to the first).
    pub origin_cycles: f64,
    /// Cycles per ns at `origin_ns` (GHz).
    pub cycles_per_ns: f64,
    /// Change of `cycles_per_ns` per ns (0 when not modelled).
    pub drift_per_ns: f64,
    /// Estimated error of a converted time in this segment, ns (1 sigma, worst tile).
    pub error_ns: f64,
}

impl Segment {
    /// Host ns at which the common counter reads `dc`.
    fn host_ns(&self, dc: f64) -> f64 {
        let d = dc - self.origin_cycles;
        let f0 = self.cycles_per_ns;
        if self.drift_per_ns == 0.0 {
            return self.origin_ns + d / f0;
        }
        let disc = (f0 * f0 + 2.0 * self.drift_per_ns * d).max(0.0);
        self.origin_ns + 2.0 * d / (f0 + disc.sqrt())
    }
}

impl ChipTime {
    /// The nominal mapping: `mhz` cycles per microsecond, cycle 0 at host time 0.
    pub fn nominal(mhz: u32) -> ChipTime {
        ChipTime {
            cycles_per_ns: mhz as f64 / 1000.0,
            drift_per_ns: 0.0,
            reference_ns: 0.0,
            tile_cycles_at_reference: BTreeMap::new(),
            default_cycles_at_reference: 0.0,
            residual_ns: 0.0,
            error_ns: None,
            segments: Vec::new(),
        }
    }

    /// Host ns of `cycles` on `tile`'s clock.
    pub fn host_ns(&self, tile: NocCoord, cycles: u64) -> f64 {
        self.tile_clock(tile).host_ns(cycles)
    }

    /// `tile`'s clock, for converting many counts of one tile (its offset looked up once).
    pub(crate) fn tile_clock(&self, tile: NocCoord) -> TileClock<'_> {
        TileClock {
            chip: self,
            at_ref: self
                .tile_cycles_at_reference
                .get(&tile)
                .copied()
                .unwrap_or(self.default_cycles_at_reference),
        }
    }

    /// Host ns of `cycles` on a tile whose clock read `at_ref` at `reference_ns`.
    fn host_ns_at(&self, at_ref: f64, cycles: u64) -> f64 {
        let dc = cycles as f64 - at_ref;
        if self.segments.len() > 1 {
            let k = self.segments[1..].partition_point(|s| s.origin_cycles <= dc);
            return self.segments[k].host_ns(dc);
        }
        let f0 = self.cycles_per_ns;
        if self.drift_per_ns == 0.0 {
            return self.reference_ns + dc / f0;
        }
        // cycles(t) = f0*t + drift*t^2/2 (t from the reference): solve for t.
        let a = self.drift_per_ns / 2.0;
        let disc = (f0 * f0 + 4.0 * a * dc).max(0.0);
        self.reference_ns + 2.0 * dc / (f0 + disc.sqrt())
    }
}

/// One tile's clock on its chip ([`ChipTime::tile_clock`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TileClock<'a> {
    chip: &'a ChipTime,
    at_ref: f64,
}

impl TileClock<'_> {
    /// Host ns of `cycles` (exactly [`ChipTime::host_ns`] of the tile).
    #[inline]
    pub(crate) fn host_ns(&self, cycles: u64) -> f64 {
        self.chip.host_ns_at(self.at_ref, cycles)
    }
}

/// Device-to-host time for every chip of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Timebase {
    /// One per chip present, by chip id (sparse: an id read from a file may be any u32).
    pub chips: BTreeMap<u32, ChipTime>,
}

impl Timebase {
    /// Nominal frequency of `arch` for `chips` chips.
    pub fn nominal(arch: Arch, chips: u32) -> Timebase {
        Timebase {
            chips: (0..chips)
                .map(|c| (c, ChipTime::nominal(arch.aiclk_mhz())))
                .collect(),
        }
    }

    /// Host ns of `cycles` on `tile` of `chip` (`None` for an unknown chip).
    pub fn host_ns(&self, chip: u32, tile: NocCoord, cycles: u64) -> Option<f64> {
        self.chips.get(&chip).map(|c| c.host_ns(tile, cycles))
    }

    /// A duration in ns between two cycle counts of one tile.
    pub fn duration_ns(&self, chip: u32, tile: NocCoord, start: u64, end: u64) -> Option<f64> {
        Some(self.host_ns(chip, tile, end)? - self.host_ns(chip, tile, start)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal_and_drifting_clocks_convert_consistently() {
        let t = NocCoord::new(1, 1);
        let nominal = Timebase::nominal(Arch::Blackhole, 1);
        assert!((nominal.host_ns(0, t, 1350).unwrap() - 1000.0).abs() < 1e-9);
        assert_eq!(nominal.host_ns(1, t, 1350), None);
        let mut c = ChipTime::nominal(1000);
        c.tile_cycles_at_reference.insert(t, 500.0);
        c.reference_ns = 10.0;
        c.drift_per_ns = 1e-9;
        // cycles at host time 10 + t: 500 + t + 1e-9 t^2 / 2; invert at t = 1e6 ns.
        let cycles = 500.0 + 1e6 + 1e-9 * 1e12 / 2.0;
        assert!((c.host_ns(t, cycles as u64) - (10.0 + 1e6)).abs() < 1.0);
    }

    #[test]
    fn segments_map_through_the_steps() {
        let t = NocCoord::new(1, 1);
        let mut c = ChipTime::nominal(1000);
        c.tile_cycles_at_reference.insert(t, 1e6);
        // 1.35 GHz until host 2e6 ns (the reference: counter 0), then 0.8 GHz.
        let seg = |start_ns, origin_ns, origin_cycles, f| Segment {
            start_ns,
            origin_ns,
            origin_cycles,
            cycles_per_ns: f,
            drift_per_ns: 0.0,
            error_ns: 1.0,
        };
        c.segments = vec![seg(0.0, 2e6, 0.0, 1.35), seg(2e6, 2e6, 0.0, 0.8)];
        assert!(
            (c.host_ns(t, 1_000_000 + 1350) - (2e6 + 1000.0)).abs() > 1.0,
            "after the step: 0.8 GHz"
        );
        assert!((c.host_ns(t, 1_000_000 + 800) - (2e6 + 1000.0)).abs() < 1e-9);
        assert!((c.host_ns(t, 1_000_000 - 1350) - (2e6 - 1000.0)).abs() < 1e-9);
        assert!((c.host_ns(t, 0) - (2e6 - 1e6 / 1.35)).abs() < 1e-6);
        let tb = Timebase {
            chips: BTreeMap::from([(0, c)]),
        };
        assert!(
            (tb.duration_ns(0, t, 1_000_000 - 1350, 1_000_000 + 800)
                .unwrap()
                - 2000.0)
                .abs()
                < 1e-9
        );
    }
}
