//! The clock model: how a chip's wall clock relates to (virtual) host time.
//!
//! Each chip has an oscillator with a true frequency `f0` (which may differ from the
//! arch's nominal AICLK) that drifts linearly by `drift_ppm_per_s` ppm per second; the
//! chip counter counts it from the chip's reset, and a tile's wall clock is the counter
//! plus the tile's offset. The device keeps a *virtual* host clock consistent with the
//! kernels' timestamps. A host read of the wall clock ([`crate::Device::sync_sample`])
//! costs two legs of the [`ReadLatency`] distribution and samples the counter when the
//! request arrives; [`ClockTruth`] exposes the exact functions so tests can measure
//! alignment error. Frequency steps and the reference counter: [`crate::time::dvfs`].
//!
//! See docs/design/clock-alignment.md, "The emulator's clocks", for the formulas.

/// One chip's oscillator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChipClock {
    /// True AICLK in MHz; `None` means the arch's nominal frequency.
    pub true_mhz: Option<f64>,
    /// Linear frequency drift in ppm per second of host time (0 = a perfect oscillator).
    pub drift_ppm_per_s: f64,
    /// Host time in ns at which the chip's counters were zero (its reset).
    pub reset_host_ns: f64,
}

impl Default for ChipClock {
    fn default() -> ChipClock {
        ChipClock {
            true_mhz: None,
            drift_ppm_per_s: 0.0,
            reset_host_ns: 0.0,
        }
    }
}

/// Per-tile offsets of the wall clock from the chip's counter, in cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum TileOffsets {
    /// Every tile reads the chip counter (Wormhole and Blackhole share a zero at reset).
    #[default]
    Zero,
    /// Offsets drawn uniformly from `0..=max_cycles`, reproducibly from `seed`.
    Seeded {
        /// The largest offset, cycles.
        max_cycles: u64,
        /// The random stream's seed.
        seed: u64,
    },
    /// Offsets in device tile order (chip-major); missing entries are 0.
    Explicit(Vec<u64>),
}

/// The latency of one host read over PCIe, as two legs: the request reaching the device
/// and the response reaching the host. Each leg is its base, plus an exponentially
/// distributed extra with the given mean, plus a uniform extra in `±half width`, clamped at
/// 0; all drawn reproducibly from `seed`. A zero mean or half width draws nothing, so adding
/// one kind of jitter leaves the other's random stream unchanged.
///
/// The defaults (400 ns + 50 ns mean exponential each way, no uniform part) are this model's
/// assumption for a read of one 32-bit register, not a measurement. [`ReadLatency::uniform`]
/// builds the "round trip ± jitter, uniform" model clock-alignment benchmarks ask for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadLatency {
    /// Base of the request leg (host to device), ns.
    pub request_ns: f64,
    /// Base of the response leg (device to host), ns.
    pub response_ns: f64,
    /// Mean of the request leg's exponential extra, ns (0: none).
    pub request_jitter_mean_ns: f64,
    /// Mean of the response leg's exponential extra, ns (0: none).
    pub response_jitter_mean_ns: f64,
    /// Half width of the request leg's uniform jitter (0: none).
    pub request_uniform_ns: f64,
    /// Half width of the response leg's uniform jitter (0: none).
    pub response_uniform_ns: f64,
    /// The random stream's seed.
    pub seed: u64,
}

impl Default for ReadLatency {
    fn default() -> ReadLatency {
        ReadLatency {
            request_ns: 400.0,
            response_ns: 400.0,
            request_jitter_mean_ns: 50.0,
            response_jitter_mean_ns: 50.0,
            request_uniform_ns: 0.0,
            response_uniform_ns: 0.0,
            seed: 0x7454_7072_6F66,
        }
    }
}

impl ReadLatency {
    /// A round trip of `round_trip_ns ± jitter_ns` with uniform jitter and no exponential
    /// tail: each leg is `round_trip_ns / 2 ± jitter_ns / 2`, uniform and independent, so
    /// the round trip always lies within `round_trip_ns ± jitter_ns` and the legs are
    /// symmetric on average (e.g. `uniform(1000.0, 500.0, seed)`: 1 us ± 0.5 us).
    pub fn uniform(round_trip_ns: f64, jitter_ns: f64, seed: u64) -> ReadLatency {
        let (leg, half) = (round_trip_ns.max(0.0) / 2.0, jitter_ns.max(0.0) / 2.0);
        ReadLatency {
            request_ns: leg,
            response_ns: leg,
            request_jitter_mean_ns: 0.0,
            response_jitter_mean_ns: 0.0,
            request_uniform_ns: half,
            response_uniform_ns: half,
            seed,
        }
    }

    /// Draws one read's `(request leg, response leg)` in ns.
    pub(crate) fn draw(&self, rng: &mut SplitMix) -> (f64, f64) {
        let request = leg(
            rng,
            self.request_ns,
            self.request_jitter_mean_ns,
            self.request_uniform_ns,
        );
        let response = leg(
            rng,
            self.response_ns,
            self.response_jitter_mean_ns,
            self.response_uniform_ns,
        );
        (request, response)
    }
}

fn leg(rng: &mut SplitMix, base: f64, exp_mean: f64, half_width: f64) -> f64 {
    let exp = rng.exp(exp_mean);
    let uniform = if half_width > 0.0 {
        (2.0 * rng.unit() - 1.0) * half_width
    } else {
        0.0
    };
    (base.max(0.0) + exp + uniform).max(0.0)
}

use crate::time::dvfs::{self, FreqStep, Piece, REF_MHZ};

/// Clocks of all chips of a device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockModel {
    /// Chip `c` uses `chips[c]`, or the last entry if there are fewer (none: nominal).
    pub chips: Vec<ChipClock>,
    /// Each tile's wall-clock offset from its chip's counter.
    pub tile_offsets: TileOffsets,
    /// The latency of the host's register reads (clock alignment's samples).
    pub host_read: ReadLatency,
    /// Chip `c`'s AI-clock frequency steps (DVFS) are `dvfs[c]`, in host-time order (see
    /// [`crate::time::dvfs`]); a chip without an entry keeps one frequency.
    pub dvfs: Vec<Vec<FreqStep>>,
}

impl ClockModel {
    /// Every chip at its nominal frequency, no drift, no tile offsets.
    pub fn nominal() -> ClockModel {
        ClockModel::default()
    }

    /// The oscillator of chip `chip`.
    pub fn chip(&self, chip: u32) -> ChipClock {
        self.chips
            .get(chip as usize)
            .or(self.chips.last())
            .copied()
            .unwrap_or_default()
    }

    /// The frequency steps of chip `chip` (empty: none).
    pub fn steps(&self, chip: u32) -> &[FreqStep] {
        self.dvfs.get(chip as usize).map_or(&[], Vec::as_slice)
    }

    /// The exact clock of a tile of `chip` whose wall clock is `tile_offset` ahead of the chip counter.
    pub fn truth(&self, chip: u32, nominal_mhz: f64, tile_offset: u64) -> ClockTruth {
        ClockTruth::new(self.chip(chip), nominal_mhz, tile_offset, self.steps(chip))
    }

    /// Wall-clock offsets of `n` tiles in device order.
    pub fn offsets(&self, n: usize) -> Vec<u64> {
        match &self.tile_offsets {
            TileOffsets::Zero => vec![0; n],
            TileOffsets::Explicit(v) => (0..n).map(|i| v.get(i).copied().unwrap_or(0)).collect(),
            TileOffsets::Seeded { max_cycles, seed } => {
                let mut rng = SplitMix(*seed);
                (0..n)
                    .map(|_| {
                        if *max_cycles == u64::MAX {
                            rng.next()
                        } else {
                            rng.next() % (max_cycles + 1)
                        }
                    })
                    .collect()
            }
        }
    }
}

/// The exact relation between host time and one tile's wall clock.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockTruth {
    /// True frequency at the chip's reset at the nominal target, MHz.
    pub true_mhz: f64,
    /// The arch's nominal frequency, MHz.
    pub nominal_mhz: f64,
    /// The true frequency's drift, parts per million per second.
    pub drift_ppm_per_s: f64,
    /// Host time of the chip's reset (counter 0), ns.
    pub reset_host_ns: f64,
    /// This tile's wall-clock offset from the chip counter, cycles.
    pub tile_offset: u64,
    /// The chip's AI-clock frequency steps (DVFS), in host-time order; empty: none.
    pub steps: Vec<FreqStep>,
}

impl ClockTruth {
    pub(crate) fn new(
        chip: ChipClock,
        nominal_mhz: f64,
        tile_offset: u64,
        steps: &[FreqStep],
    ) -> ClockTruth {
        ClockTruth {
            true_mhz: chip.true_mhz.unwrap_or(nominal_mhz),
            nominal_mhz,
            drift_ppm_per_s: chip.drift_ppm_per_s,
            reset_host_ns: chip.reset_host_ns,
            tile_offset,
            steps: steps.to_vec(),
        }
    }

    /// Cycles per ns at the reset (before drift) while the PLL targets `target_mhz`: the
    /// target scaled by the oscillator's error (exactly `true_mhz` at the nominal target).
    fn k(&self, target_mhz: f64) -> f64 {
        let mhz = if target_mhz == self.nominal_mhz {
            self.true_mhz
        } else {
            target_mhz * self.true_mhz / self.nominal_mhz
        };
        mhz * 1e-3
    }

    fn a(&self) -> f64 {
        self.drift_ppm_per_s * 1e-6 / 2e9
    }

    /// `∫ (1 + d·Δ/1e9) dΔ` from the reset: the drift-stretched time.
    fn p(&self, d: f64) -> f64 {
        d + self.a() * d * d
    }

    fn pieces(&self) -> Vec<Piece> {
        dvfs::pieces(&self.steps, self.nominal_mhz, self.reset_host_ns)
    }

    /// The chip counter (without the tile offset) at host time `host_ns`, fractional.
    pub fn chip_cycles_at(&self, host_ns: f64) -> f64 {
        let d = (host_ns - self.reset_host_ns).max(0.0);
        let pieces = self.pieces();
        let mut cycles = 0.0;
        for (i, piece) in pieces.iter().enumerate().filter(|(_, p)| p.start <= d) {
            let end = pieces.get(i + 1).map_or(d, |n| n.start.min(d));
            cycles += self.k(piece.mhz) * (self.p(end) - self.p(piece.start));
        }
        cycles
    }

    /// This tile's wall clock at host time `host_ns`, fractional.
    pub fn cycles_at(&self, host_ns: f64) -> f64 {
        self.chip_cycles_at(host_ns) + self.tile_offset as f64
    }

    /// The host time at which the chip counter reads `chip_cycles`.
    pub fn host_ns_at_chip(&self, chip_cycles: f64) -> f64 {
        let pieces = self.pieces();
        let mut done = 0.0;
        for (i, piece) in pieces.iter().enumerate() {
            let k = self.k(piece.mhz);
            let next = pieces.get(i + 1);
            let here = next.map_or(f64::INFINITY, |n| {
                k * (self.p(n.start) - self.p(piece.start))
            });
            if chip_cycles < done + here || next.is_none() {
                let c = self.p(piece.start) + (chip_cycles - done) / k;
                // Stable root of a·Δ² + Δ - c = 0 (also right for a = 0).
                return self.reset_host_ns
                    + 2.0 * c / (1.0 + (1.0 + 4.0 * self.a() * c).max(0.0).sqrt());
            }
            done += here;
        }
        self.reset_host_ns
    }

    /// The host time at which this tile's wall clock reads `cycles`.
    pub fn host_ns_at(&self, cycles: f64) -> f64 {
        self.host_ns_at_chip(cycles - self.tile_offset as f64)
    }

    /// The PLL target at host time `host_ns`, MHz (nominal before the first step).
    pub fn target_mhz_at(&self, host_ns: f64) -> f64 {
        let d = (host_ns - self.reset_host_ns).max(0.0);
        self.pieces()
            .iter()
            .rev()
            .find(|p| p.start <= d)
            .map_or(self.nominal_mhz, |p| p.mhz)
    }

    /// The true frequency at host time `host_ns`, MHz.
    pub fn mhz_at(&self, host_ns: f64) -> f64 {
        let d = (host_ns - self.reset_host_ns).max(0.0);
        self.k(self.target_mhz_at(host_ns)) * 1e3 * (1.0 + self.drift_ppm_per_s * 1e-6 * d / 1e9)
    }

    /// The chip's 50 MHz reference counter at host time `host_ns`, fractional: the reference
    /// oscillator itself (its error and drift), unaffected by DVFS.
    pub fn ref_ticks_at(&self, host_ns: f64) -> f64 {
        let d = (host_ns - self.reset_host_ns).max(0.0);
        REF_MHZ * 1e-3 * self.true_mhz / self.nominal_mhz * self.p(d)
    }

    /// The true steps, as `(host ns, true MHz before, true MHz after)` (the oscillator's error
    /// and drift included), for steps after the chip's reset that change the frequency.
    pub fn true_steps(&self) -> Vec<(f64, f64, f64)> {
        let pieces = self.pieces();
        pieces
            .windows(2)
            .filter(|w| w[0].mhz != w[1].mhz)
            .map(|w| {
                let t = self.reset_host_ns + w[1].start;
                let drift = 1.0 + self.drift_ppm_per_s * 1e-6 * w[1].start / 1e9;
                (
                    t,
                    self.k(w[0].mhz) * 1e3 * drift,
                    self.k(w[1].mhz) * 1e3 * drift,
                )
            })
            .collect()
    }
}

/// SplitMix64: a tiny, well-known generator; reproducible from its seed.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponential with the given mean (0 when the mean is 0).
    pub fn exp(&mut self, mean: f64) -> f64 {
        if mean <= 0.0 {
            return 0.0;
        }
        -mean * (1.0 - self.unit()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth(mhz: f64, ppm: f64) -> ClockTruth {
        ClockTruth::new(
            ChipClock {
                true_mhz: Some(mhz),
                drift_ppm_per_s: ppm,
                reset_host_ns: 1000.0,
            },
            1000.0,
            7,
            &[],
        )
    }

    #[test]
    fn host_time_and_cycles_are_inverse() {
        for (mhz, ppm) in [(985.0, 0.0), (1350.0, 3.0), (1000.0, -5.0)] {
            let t = truth(mhz, ppm);
            for h in [1000.0, 5e3, 1e9, 3.3e10] {
                let c = t.cycles_at(h);
                assert!((t.host_ns_at(c) - h).abs() < 1e-3, "{mhz} {ppm} {h}");
            }
        }
        let t = truth(985.0, 0.0);
        assert!(
            (t.cycles_at(1000.0 + 1e9) - (985e6 + 7.0)).abs() < 1e-3,
            "985 MHz: 985e6 cycles a second"
        );
    }

    #[test]
    fn frequency_steps_keep_the_counter_continuous_and_invertible() {
        let mut t = truth(1000.0 * (1.0 + 200e-6), 0.5);
        t.steps = vec![
            FreqStep {
                at_host_ns: 1000.0 + 2e9,
                mhz: 800.0,
            },
            FreqStep {
                at_host_ns: 1000.0 + 5e9,
                mhz: 1100.0,
            },
            FreqStep {
                at_host_ns: 1000.0 + 7e9,
                mhz: 1000.0,
            },
        ];
        let flat = truth(1000.0 * (1.0 + 200e-6), 0.5);
        // Before the first step: the single-frequency model exactly.
        assert_eq!(
            t.chip_cycles_at(1000.0 + 1.5e9),
            flat.chip_cycles_at(1000.0 + 1.5e9)
        );
        for h in [
            1000.0,
            3e6,
            2e9 + 999.0,
            2e9 + 1001.0,
            4e9,
            5e9 + 1000.0,
            6.5e9,
            9e9,
            1.2e10,
        ] {
            let c = t.cycles_at(h);
            assert!(
                (t.host_ns_at(c) - h).abs() < 1e-3,
                "{h}: {}",
                t.host_ns_at(c)
            );
        }
        // Continuous at a step, slope from the new target scaled by the oscillator's error.
        let at = 1000.0 + 5e9;
        assert!((t.chip_cycles_at(at + 1e-3) - t.chip_cycles_at(at - 1e-3)).abs() < 0.01);
        let slope = (t.chip_cycles_at(at + 1e6) - t.chip_cycles_at(at)) / 1e6 * 1e3;
        let expect = 1100.0 * (1.0 + 200e-6) * (1.0 + 0.5e-6 * 5.0);
        assert!((slope - expect).abs() < 1e-3, "{slope} vs {expect}");
        assert!((t.mhz_at(at + 1.0) - expect).abs() < 1e-3 && t.target_mhz_at(at - 1.0) == 800.0);
        let steps = t.true_steps();
        assert_eq!(steps.len(), 3);
        assert!(
            (steps[0].0 - (1000.0 + 2e9)).abs() < 1e-9
                && (steps[0].2 / steps[0].1 - 0.8).abs() < 1e-12
        );
        // The reference counter ignores the steps: 50 MHz with the oscillator's error.
        let ticks = t.ref_ticks_at(1000.0 + 1e9);
        assert!(
            (ticks - 50e6 * (1.0 + 200e-6) * (1.0 + 0.25e-6)).abs() < 1e-3,
            "{ticks}"
        );
        assert_eq!(ticks, flat.ref_ticks_at(1000.0 + 1e9));
    }

    #[test]
    fn drift_changes_frequency_linearly() {
        let t = truth(1000.0, 10.0);
        assert!((t.mhz_at(1000.0 + 1e9) - 1000.01).abs() < 1e-9);
        // Over one second the counter gains half the drift: 1e9 * (1 + 10e-6 / 2).
        assert!((t.chip_cycles_at(1000.0 + 1e9) - 1_000_005_000.0).abs() < 1e-3);
    }

    #[test]
    fn uniform_latency_stays_in_its_band_and_exponential_draws_are_unchanged() {
        let u = ReadLatency::uniform(1000.0, 500.0, 9);
        let mut rng = SplitMix(u.seed);
        let (mut lo, mut hi, mut sum) = (f64::MAX, 0.0f64, 0.0);
        for _ in 0..20_000 {
            let (a, b) = u.draw(&mut rng);
            assert!(
                (250.0..=750.0).contains(&a) && (250.0..=750.0).contains(&b),
                "{a} {b}"
            );
            lo = lo.min(a + b);
            hi = hi.max(a + b);
            sum += a - b;
        }
        assert!(
            lo < 560.0 && hi > 1440.0 && lo >= 500.0 && hi <= 1500.0,
            "round trips {lo}..{hi}"
        );
        assert!((sum / 20_000.0).abs() < 5.0, "legs symmetric on average");
        // The default (exponential only) draws exactly what it drew before uniform jitter existed.
        let d = ReadLatency::default();
        let (mut r1, mut r2) = (SplitMix(d.seed), SplitMix(d.seed));
        for _ in 0..100 {
            let expected = (400.0 + r2.exp(50.0), 400.0 + r2.exp(50.0));
            assert_eq!(d.draw(&mut r1), expected);
        }
    }

    #[test]
    fn seeded_offsets_are_reproducible_and_bounded() {
        let m = ClockModel {
            tile_offsets: TileOffsets::Seeded {
                max_cycles: 100,
                seed: 3,
            },
            ..ClockModel::nominal()
        };
        let a = m.offsets(50);
        assert_eq!(a, m.offsets(50));
        assert!(a.iter().all(|&o| o <= 100) && a.iter().any(|&o| o != a[0]));
    }
}
