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

impl ChipTime {
    /// Whether cycles map to host time at one constant rate (no drift, no frequency steps).
    fn linear(&self) -> bool {
        self.drift_per_ns == 0.0 && self.segments.len() <= 1
    }

    /// Host ns per device cycle as an exact fraction, for a clock of one constant rate
    /// (`None` with drift or frequency steps, or a rate that is not a positive finite
    /// number). A rate of whole MHz (`cycles_per_ns` is the `f64` nearest `M / 1000`, as
    /// [`ChipTime::nominal`] and a device log's `CHIP_FREQ[MHz]` give it) is taken as
    /// exactly `1000 / M` ns per cycle; any other rate is the exact value of its `f64`.
    pub fn ns_per_cycle(&self) -> Option<NsPerCycle> {
        if !self.linear() {
            return None;
        }
        NsPerCycle::of_rate(self.cycles_per_ns)
    }

    /// Host time of `cycles` on `tile`'s clock, to well under a nanosecond at any count
    /// (see [`HostTime`]).
    pub fn host_time(&self, tile: NocCoord, cycles: u64) -> HostTime {
        self.tile_clock(tile).host_time(cycles)
    }

    /// [`HostTime`] of `cycles` on a tile whose clock read `at_ref` at `reference_ns`.
    ///
    /// Exact (integer arithmetic) on a clock of one constant rate whose reference and tile
    /// offset are whole numbers (a nominal clock, a device log's); otherwise the `f64`
    /// conversion refined by one Newton step carried out in double-double arithmetic: the
    /// count, the offset and the rate enter exactly, so the result is good to ~2^-100 of
    /// its size instead of the `f64`'s 2^-53 (a nanosecond or more past 2^53 ns).
    fn host_time_at(&self, at_ref: f64, cycles: u64) -> HostTime {
        if let Some(t) = self.exact_host_time(at_ref, cycles) {
            return t;
        }
        let hi = self.host_ns_at(at_ref, cycles);
        if !hi.is_finite() {
            return HostTime::from_parts(hi, 0.0);
        }
        // The count relative to the tile's reference, exactly as a double-double `d + dl`.
        let ch = cycles as f64;
        let cl = (cycles as i128 - ch as i128) as f64;
        let (d, e) = two_sum(ch, -at_ref);
        let dl = e + cl;
        // The piece of the clock's curve the count is on: `origin_cycles + f * tau + g * tau^2
        // / 2` cycles at host time `origin_ns + tau`.
        let (origin_ns, origin_cycles, f, g) = if self.segments.len() > 1 {
            let k = self.segments[1..].partition_point(|s| s.origin_cycles <= d);
            let s = &self.segments[k];
            (
                s.origin_ns,
                s.origin_cycles,
                s.cycles_per_ns,
                s.drift_per_ns,
            )
        } else {
            (
                self.reference_ns,
                0.0,
                self.cycles_per_ns,
                self.drift_per_ns,
            )
        };
        // Newton steps on `hi + lo`: the curve's count there, less the count (how far off
        // the time is, in cycles), over the curve's slope. One step is exact on a straight
        // curve; a second makes up for the bend over the few ulps `hi` was off.
        let mut lo = 0.0;
        let mut lost = 0.0;
        for _ in 0..2 {
            let (tau, e) = two_sum(hi, -origin_ns);
            let tau_l = e + lo;
            let (p, pe) = two_prod(f, tau);
            let quad = 0.5 * g * tau * tau;
            let (x, ex) = two_sum(p, -d);
            let (y, ey) = two_sum(x, origin_cycles);
            let (z, ez) = two_sum(y, quad);
            let bend = g * tau_l * (tau + 0.5 * tau_l);
            let small = ex + ey + ez + pe + f * tau_l + bend - dl;
            let slope = f + g * (tau + tau_l);
            lo -= (z + small) / slope;
            lost = (ch.abs() + at_ref.abs()) * 1e-12 / slope.abs() + hi.abs() * 1e-12;
        }
        // The steps correct what rounding the count, the offset and `hi` to `f64`s lost (a
        // few ulps of each); anything larger means `hi` was not on the curve's invertible
        // part (a clamped root): keep it as the `f64` conversion gave it.
        if lo.is_finite() && lo.abs() <= 1.0 + lost {
            HostTime::from_parts(hi, lo)
        } else {
            HostTime::from_parts(hi, 0.0)
        }
    }

    /// The exact host time of `cycles` when the clock has one constant rate and its
    /// reference and the tile's offset are whole numbers of ns and cycles.
    fn exact_host_time(&self, at_ref: f64, cycles: u64) -> Option<HostTime> {
        const LIMIT: f64 = (1u128 << 100) as f64;
        let whole = |x: f64| x.fract() == 0.0 && x.abs() < LIMIT;
        if !whole(self.reference_ns) || !whole(at_ref) {
            return None;
        }
        let rate = self.ns_per_cycle()?;
        let dc = cycles as i128 - at_ref as i128;
        let (q, r) = mul_div_rem(dc.unsigned_abs(), rate.num, rate.den)?;
        let q = i128::try_from(q).ok()?;
        let frac = r as f64 / rate.den as f64;
        let reference = self.reference_ns as i128;
        Some(if dc >= 0 {
            HostTime::exact(reference.checked_add(q)?, frac)
        } else if r == 0 {
            HostTime::exact(reference.checked_sub(q)?, 0.0)
        } else {
            HostTime::exact(reference.checked_sub(q)?.checked_sub(1)?, 1.0 - frac)
        })
    }

    /// Host ns between `start` and `end` on `tile`'s clock (see [`HostTime::since`]).
    pub fn span_ns(&self, tile: NocCoord, start: u64, end: u64) -> f64 {
        self.tile_clock(tile).span_ns(start, end)
    }
}

/// Host ns per device cycle, exactly: `num / den` (in lowest terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NsPerCycle {
    /// Numerator.
    pub num: u128,
    /// Denominator (never 0).
    pub den: u128,
}

impl NsPerCycle {
    /// `cycles_per_ns` cycles per ns as an exact fraction (see [`ChipTime::ns_per_cycle`]).
    fn of_rate(cycles_per_ns: f64) -> Option<NsPerCycle> {
        if !(cycles_per_ns.is_finite() && cycles_per_ns > 0.0) {
            return None;
        }
        let mhz = (cycles_per_ns * 1000.0).round();
        if (1.0..=u32::MAX as f64).contains(&mhz) && mhz / 1000.0 == cycles_per_ns {
            return Some(NsPerCycle::reduced(1000, mhz as u128));
        }
        // The f64's exact value `m * 2^e`; ns per cycle is `2^-e / m`.
        let bits = cycles_per_ns.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let (m, e) = if exp == 0 {
            (bits & ((1 << 52) - 1), -1074)
        } else {
            ((bits & ((1 << 52) - 1)) | (1 << 52), exp - 1075)
        };
        let (m, e) = (m >> m.trailing_zeros(), e + m.trailing_zeros() as i32);
        if e >= 0 {
            let den = (m as u128).checked_mul(1u128.checked_shl(e as u32)?)?;
            Some(NsPerCycle { num: 1, den })
        } else {
            let num = 1u128.checked_shl(e.unsigned_abs())?;
            Some(NsPerCycle {
                num,
                den: m as u128,
            })
        }
    }

    fn reduced(num: u128, den: u128) -> NsPerCycle {
        let (mut a, mut b) = (num, den);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        NsPerCycle {
            num: num / a,
            den: den / a,
        }
    }

    /// `cycles` (over `count` items: a mean; 1 for a plain conversion) in ns, rounded to
    /// the nearest whole ns, ties to even (as `{:.0}` rounds). `None` when it would not fit
    /// in 128 bits or `count` is 0.
    pub fn whole_ns(&self, cycles: u128, count: u128) -> Option<u128> {
        let den = self.den.checked_mul(count)?;
        let (q, r) = mul_div_rem(cycles, self.num, den)?;
        round_half_even(q, r, den)
    }
}

/// `q + r / d` (`r < d`) rounded to the nearest integer, ties to even.
pub fn round_half_even(q: u128, r: u128, d: u128) -> Option<u128> {
    let up = match r.cmp(&(d - r)) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => q & 1 == 1,
        std::cmp::Ordering::Less => false,
    };
    q.checked_add(up as u128)
}

/// `floor(x * y / d)` and the remainder, with a 256-bit product; `None` when `d` is 0 or
/// the quotient does not fit in 128 bits.
pub fn mul_div_rem(x: u128, y: u128, d: u128) -> Option<(u128, u128)> {
    if d == 0 {
        return None;
    }
    if let Some(p) = x.checked_mul(y) {
        return Some((p / d, p % d));
    }
    let (hi, lo) = mul_wide(x, y);
    if hi >= d {
        return None;
    }
    // Long division of `hi:lo` by `d`, one bit at a time; `r < d` throughout.
    let (mut q, mut r) = (0u128, hi);
    for i in (0..128).rev() {
        let carry = r >> 127;
        r = (r << 1) | ((lo >> i) & 1);
        q <<= 1;
        if carry == 1 || r >= d {
            r = r.wrapping_sub(d);
            q |= 1;
        }
    }
    Some((q, r))
}

/// The 256-bit product of `x` and `y` as (high, low) halves.
fn mul_wide(x: u128, y: u128) -> (u128, u128) {
    const LOW: u128 = u64::MAX as u128;
    let (x1, x0, y1, y0) = (x >> 64, x & LOW, y >> 64, y & LOW);
    let (p00, p01, p10, p11) = (x0 * y0, x0 * y1, x1 * y0, x1 * y1);
    let mid = (p00 >> 64) + (p01 & LOW) + (p10 & LOW);
    let lo = (p00 & LOW) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// `a + b` as the rounded sum and its exact error.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a * b` as the rounded product and its exact error (Dekker's product, no FMA needed).
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let split = |x: f64| {
        let c = 134_217_729.0 * x;
        let hi = c - (c - x);
        (hi, x - hi)
    };
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// A host time as whole ns and a fraction: `whole + frac`, `frac` in `[0, 1)`. Exact or
/// within ~2^-100 of its size (see [`ChipTime::host_time`]), where an `f64` of ns is off by
/// a nanosecond or more from 2^53 ns (104 days) on, and differences of two such `f64`s by
/// as much. A time that is not a finite number below 2^100 ns keeps its `f64` in `frac`
/// (and `whole` is 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTime {
    /// Whole nanoseconds.
    pub whole: i128,
    /// The rest, in `[0, 1)` for a finite time.
    pub frac: f64,
}

impl HostTime {
    /// `whole + frac`, `frac` in `[0, 1]` (a fraction that rounded up to 1 is kept below it).
    fn exact(whole: i128, frac: f64) -> HostTime {
        let below_one = f64::from_bits(1.0f64.to_bits() - 1);
        HostTime {
            whole,
            frac: frac.min(below_one),
        }
    }

    /// `hi + lo` (`lo` small next to `hi`), split into whole ns and a fraction.
    fn from_parts(hi: f64, lo: f64) -> HostTime {
        const LIMIT: f64 = (1u128 << 100) as f64;
        if !(hi.is_finite() && hi.abs() < LIMIT) {
            return HostTime {
                whole: 0,
                frac: hi + lo,
            };
        }
        let w = hi.floor();
        let f = (hi - w) + lo;
        let fl = f.floor();
        let (mut whole, mut frac) = (w as i128 + fl as i128, f - fl);
        if frac >= 1.0 {
            whole += 1;
            frac = 0.0;
        }
        HostTime { whole, frac }
    }

    /// The time as an `f64` of ns (rounded: see the type's docs).
    pub fn ns(self) -> f64 {
        self.whole as f64 + self.frac
    }

    /// Whether the time is before `other` (false when either is not a number), to the
    /// last bit: two times an `f64` of ns cannot tell apart past 2^53 ns are ordered.
    pub fn before(self, other: HostTime) -> bool {
        let exact = |t: HostTime| (0.0..1.0).contains(&t.frac);
        if exact(self) && exact(other) {
            (self.whole, self.frac) < (other.whole, other.frac)
        } else {
            self.ns() < other.ns()
        }
    }

    /// Host ns from `earlier` to `self`: the exact difference, then rounded to an `f64`.
    pub fn since(self, earlier: HostTime) -> f64 {
        self.whole.saturating_sub(earlier.whole) as f64 + (self.frac - earlier.frac)
    }

    /// The largest whole ns at or before the time (`None`: not a finite number).
    pub fn floor(self) -> Option<i128> {
        if (0.0..1.0).contains(&self.frac) {
            Some(self.whole)
        } else {
            self.frac.is_finite().then(|| self.frac.floor() as i128)
        }
    }

    /// The nearest whole ns, halves away from zero as `f64::round` (`None`: not a finite
    /// number): what the outputs that write whole ns print.
    pub fn round(self) -> Option<i128> {
        if (0.0..1.0).contains(&self.frac) {
            let up = self.frac > 0.5 || (self.frac == 0.5 && self.whole >= 0);
            Some(self.whole.saturating_add(up as i128))
        } else {
            self.frac.is_finite().then(|| self.frac.round() as i128)
        }
    }

    /// The smallest whole ns at or after the time (`None`: not a finite number).
    pub fn ceil(self) -> Option<i128> {
        if (0.0..1.0).contains(&self.frac) {
            Some(self.whole.saturating_add((self.frac > 0.0) as i128))
        } else {
            self.frac.is_finite().then(|| self.frac.ceil() as i128)
        }
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

    /// [`ChipTime::host_time`] of the tile.
    pub(crate) fn host_time(&self, cycles: u64) -> HostTime {
        self.chip.host_time_at(self.at_ref, cycles)
    }

    /// Host ns from `start` to `end` (a zone's duration): exact differences of the two
    /// [`HostTime`]s, not of two rounded `f64`s.
    pub(crate) fn span_ns(&self, start: u64, end: u64) -> f64 {
        self.host_time(end).since(self.host_time(start))
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

    /// A duration in ns between two cycle counts of one tile (exact differences: see
    /// [`ChipTime::span_ns`]).
    pub fn duration_ns(&self, chip: u32, tile: NocCoord, start: u64, end: u64) -> Option<f64> {
        Some(self.chips.get(&chip)?.span_ns(tile, start, end))
    }

    /// `tile`'s clock on `chip` (`None` for an unknown chip), for converting many counts of
    /// one tile.
    pub(crate) fn tile_clock(&self, chip: u32, tile: NocCoord) -> Option<TileClock<'_>> {
        self.chips.get(&chip).map(|c| c.tile_clock(tile))
    }

    /// [`ChipTime::host_time`] of `cycles` on `tile` of `chip` (`None` for an unknown chip).
    pub fn host_time(&self, chip: u32, tile: NocCoord, cycles: u64) -> Option<HostTime> {
        self.chips.get(&chip).map(|c| c.host_time(tile, cycles))
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
    /// Issue 41 (Medium): cycles became ns through `f64`s, which are no longer whole past
    /// 2^53 (104 days of a 1 GHz counter): a zone's duration was the difference of two
    /// rounded host times (at 2^62 cycles, off by up to a thousand ns), and a time rounded
    /// to whole ns was off too.
    #[test]
    fn conversions_stay_exact_at_large_cycle_counts() {
        let t = NocCoord::new(1, 1);
        let big = (1u64 << 62) + 7;
        // Nominal clocks: exact, whole MHz taken as exactly that.
        let wh = Timebase::nominal(Arch::WormholeB0, 1);
        assert_eq!(wh.duration_ns(0, t, big, big + 1), Some(1.0));
        assert_eq!(wh.host_time(0, t, big).unwrap().floor(), Some(big as i128));
        let bh = Timebase::nominal(Arch::Blackhole, 1);
        // 1350 MHz: 27 cycles are 20 ns.
        let at = 27 * (1u64 << 57) + 5;
        let time = bh.host_time(0, t, at).unwrap();
        let want = 20 * (1i128 << 57) + 3;
        assert_eq!((time.floor(), time.ceil()), (Some(want), Some(want + 1)));
        assert!((time.frac - 19.0 / 27.0).abs() < 1e-12, "{time:?}");
        let whole = bh.host_time(0, t, 27 * (1u64 << 57)).unwrap();
        assert_eq!(
            (whole.floor(), whole.ceil()),
            (Some(want - 3), Some(want - 3))
        );
        assert_eq!(time.round(), Some(want + 1), "19/27 rounds up");
        assert_eq!(bh.duration_ns(0, t, at, at + 1350), Some(1000.0));
        let half = |whole, frac| HostTime { whole, frac }.round();
        assert_eq!(
            [half(2, 0.5), half(-3, 0.5), half(-3, 0.25), half(7, 0.0)],
            [Some(3), Some(-3), Some(-3), Some(7)],
            "halves away from zero: 2.5 -> 3, -2.5 -> -3"
        );
        assert_eq!(
            bh.chips[&0].ns_per_cycle(),
            Some(NsPerCycle { num: 20, den: 27 })
        );
        // A fitted clock (a rate of no whole MHz, fractional reference and offset): within
        // a millionth of a ns of the exact figure.
        let mut c = ChipTime::nominal(1000);
        c.cycles_per_ns = 1.000_000_123;
        c.reference_ns = 12_345.25;
        c.tile_cycles_at_reference.insert(t, (1u64 << 62) as f64);
        let tb = Timebase {
            chips: BTreeMap::from([(0, c.clone())]),
        };
        let d = tb.duration_ns(0, t, big, big + 1_000).unwrap();
        assert!((d - 1_000.0 / 1.000_000_123).abs() < 1e-6, "{d}");
        // 7 cycles after the tile's reference count: 7 / rate ns after the reference.
        let h = tb.host_time(0, t, big).unwrap();
        let want: f64 = 12_345.25 + 7.0 / 1.000_000_123;
        assert_eq!(h.floor(), Some(want.floor() as i128));
        assert!((h.frac - want.fract()).abs() < 1e-9, "{h:?}");
        // With drift: the duration of 1000 cycles a million cycles after the reference, as
        // the same curve gives it near cycle 0.
        c.drift_per_ns = 1e-9;
        let tb = Timebase {
            chips: BTreeMap::from([(0, c.clone())]),
        };
        let mut near = c.clone();
        near.tile_cycles_at_reference.insert(t, 0.0);
        let want = near.host_ns(t, 1_001_007) - near.host_ns(t, 1_000_007);
        let at = big + 1_000_000;
        let d = tb.duration_ns(0, t, at, at + 1_000).unwrap();
        assert!((d - want).abs() < 1e-6, "{d} vs {want}");
        // Segments (a frequency step): likewise.
        let seg = |origin_cycles, f| Segment {
            start_ns: 0.0,
            origin_ns: 12_345.25,
            origin_cycles,
            cycles_per_ns: f,
            drift_per_ns: 0.0,
            error_ns: 1.0,
        };
        c.drift_per_ns = 0.0;
        c.segments = vec![seg(0.0, 1.35), seg(0.0, 0.8)];
        let tb = Timebase {
            chips: BTreeMap::from([(0, c)]),
        };
        assert!((tb.duration_ns(0, t, at, at + 800).unwrap() - 1000.0).abs() < 1e-6);
        assert!((tb.duration_ns(0, t, big - 2000, big - 650).unwrap() - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn exact_fractions_round_half_to_even_and_overflow_to_none() {
        let ns = NsPerCycle { num: 1, den: 1 };
        assert_eq!(ns.whole_ns(u64::MAX as u128, 1), Some(u64::MAX as u128));
        // Means: 5/2 and 7/2 round to even, as `{:.0}` does.
        assert_eq!((ns.whole_ns(5, 2), ns.whole_ns(7, 2)), (Some(2), Some(4)));
        assert_eq!(ns.whole_ns(1, 0), None);
        // A 256-bit product: (2^128 - 1)^2 / (2^128 - 1).
        assert_eq!(
            mul_div_rem(u128::MAX, u128::MAX, u128::MAX),
            Some((u128::MAX, 0))
        );
        assert_eq!(
            mul_div_rem(u128::MAX, 3, 7),
            Some((
                u128::MAX / 7 * 3 + (u128::MAX % 7) * 3 / 7,
                (u128::MAX % 7) * 3 % 7
            ))
        );
        assert_eq!(mul_div_rem(u128::MAX, 2, 1), None, "past 128 bits");
        // Rates: whole MHz exactly, any other rate as its f64's exact value.
        assert_eq!(
            NsPerCycle::of_rate(1.0),
            Some(NsPerCycle { num: 1, den: 1 })
        );
        assert_eq!(
            NsPerCycle::of_rate(0.5),
            Some(NsPerCycle { num: 2, den: 1 })
        );
        let r = NsPerCycle::of_rate(1.000_000_123).unwrap();
        assert_eq!(r.num as f64 / r.den as f64, 1.0 / 1.000_000_123);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(NsPerCycle::of_rate(bad), None);
        }
        assert_eq!(
            NsPerCycle::of_rate(f64::MIN_POSITIVE),
            None,
            "2^1022 ns a cycle"
        );
    }
}
