//! Clock alignment: from sync samples to a fitted [`Timebase`] (device cycles to host ns),
//! with its residual and estimated error.
//!
//! ## Samples
//!
//! A sync sample is `(host before, device cycles, host after)`: the host read one tile's
//! wall clock and the device sampled its counter at some moment `t*` inside the bracket.
//! [`ClockSync`] takes *windows* of samples through any [`DeviceClock`] (round robin over
//! the tiles, `n` per tile), typically one before the first op and one after the last.
//!
//! With an in-process emulator (the demo), around the ops:
//!
//! ```no_run
//! use ttprof::clock::{emu_tiles, ClockSync, EmuClock, FitOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let cfg = ttprof_emu::DeviceConfig::new(riscv_linker::Arch::WormholeB0, (2, 2));
//! let mut dev = ttprof_emu::Device::new(cfg)?;
//! let mut sync = ClockSync::new(emu_tiles(&dev), 100);
//! sync.window(&EmuClock::new(&mut dev))?; // before the first op
//! // ... launch the ops ...
//! sync.window(&EmuClock::new(&mut dev))?; // after the last op
//! let fit = sync.fit(dev.arch(), dev.config().chips, &FitOptions::default())?;
//! println!("{fit}"); // per chip: frequency, drift, residual, estimated error
//! fit.issues.iter().for_each(|i| eprintln!("{i}"));
//! let timebase = fit.timebase; // what the outputs convert device cycles with
//! # let _ = timebase; Ok(()) }
//! ```
//!
//! Another process uses the image's mailbox instead:
//! `sync.window(&MappedImage::open(path, &Inputs::none())?)`.
//!
//! ## Model
//!
//! Per chip, the counter of tile `j` at host time `t` (`τ = t - t_ref`) is
//!
//! ```text
//! F_j(t) = o_j + f·τ + (g/2)·τ²
//! ```
//!
//! one frequency `f` (cycles/ns at `t_ref`) and one drift `g` shared by all tiles of the chip
//! (they share an oscillator), one offset `o_j` per tile. This is exactly how a crystal with
//! linearly drifting frequency behaves (and the emulator's clock model).
//!
//! ## Estimator (least squares)
//!
//! Each kept sample gives the observation `y = cycles + 1/2` (a counter read at a uniformly
//! random point of its cycle is on average half a cycle behind the fractional count) at the
//! bracket midpoint `m = (before + after) / 2`. `o_j`, `f` and `g` minimise
//! `Σ (y - F_j(m))²` over all tiles of the chip: the tile offsets are eliminated by centring
//! each tile's data (a shared-slope "fixed effects" regression), leaving a 2x2 normal
//! system for `f` and `g` (see `solve.rs`). Drift is kept only when it is resolved (at least
//! 2 standard errors from zero), which needs samples spread in time: two windows far apart,
//! each long enough to show its local slope. Otherwise `g = 0` and the two windows give the
//! chord.
//!
//! Before the fit, per tile (see `filter.rs`):
//! * inverted brackets (after < before) are dropped;
//! * non-monotonic samples are dropped: ordered by host time, the device cycles must not
//!   decrease; the largest non-decreasing subset is kept (a torn read or a counter reset
//!   shows up here), and a tile losing more than half its samples is left out;
//! * wide brackets are dropped: wider than `median + k·(median - min)` of the tile
//!   ([`FitOptions::wide_spread`]) or than [`FitOptions::max_bracket_ns`], then only the
//!   tightest [`FitOptions::keep_fraction`] are kept. Slow reads are routine (a PCIe read's
//!   latency has a tail; the emulator draws it so): a warning says so only when they are
//!   more than a tenth of the chip's samples.
//!
//! After the fit, a sample whose midpoint lies further from the fitted curve than its own
//! half bracket (plus a cycle and the fit's own uncertainty) cannot be a read of this clock:
//! such *inconsistent* samples are removed (worst first) and the fit repeated.
//!
//! ## Error model
//!
//! The midpoint misses `t*` by `e = (request leg - response leg) / 2`, bounded by the half
//! bracket. With legs of the same distribution `e` has mean zero and the fit is unbiased;
//! a constant asymmetry of the two legs is invisible to any bracketing method and shifts all
//! times by half of it (as in NTP). Treating the `e` as independent with equal variance,
//! the residual variance `s²` estimates their variance, and the standard error of a
//! converted time on tile `j` at host time `t` is
//! `sqrt(s²/n_j + vᵀ·Cov(f, g)·v) / f` (`v` the centred design of `t`): [`ChipFit`]
//! reports its worst value over the chip's tiles and the synced span (`error_ns`, 1 sigma)
//! and its RMS (`error_rms_ns`). `residual_ns` is the RMS distance of the kept samples'
//! midpoints from the fit: the sample noise, about the half bracket, not the error of the
//! fit, which shrinks with the number of samples. Outside the synced span errors grow
//! (extrapolation), fastest when drift is modelled.
//!
//! Samples that cannot be fitted (none, too few, no spread in time, all inconsistent) are
//! errors naming the chip and the counts; dropped samples are warnings with counts
//! ([`Fit::issues`]). A chip that cannot be fitted keeps the nominal mapping and an error
//! issue; if no chip can be fitted, [`fit`] fails. Nothing here panics on bad samples.

mod chip;
#[cfg(feature = "emulator")]
mod emu;
mod filter;
mod piecewise;
mod report;
mod sampler;
mod solve;
mod source;
mod stepped;
mod steps;
mod sync;
#[cfg(test)]
mod tests;

#[cfg(feature = "emulator")]
pub use emu::{emu_tiles, EmuClock};
pub use filter::Drops;
pub use report::{fit, ChipFit, Fit, SegmentFit, StepFit};
pub use sampler::{sampler_issue, ClockSampler, DEFAULT_SAMPLE_EVERY_NS};
pub use source::{readout_note, timebase_for};
pub use sync::{all_tiles, ClockSync, DEFAULT_SPACING_NS};

pub use crate::devmem::{DeviceClock, SyncSample, TileSample};
pub use crate::timebase::{ChipTime, Segment, Timebase};

/// Choices of the fit; [`FitOptions::default`] is what the benchmark measures.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// Keep at most this fraction of each tile's samples, the tightest brackets (0..=1).
    pub keep_fraction: f64,
    /// Drop brackets wider than `median + wide_spread·(median - min)` of their tile.
    pub wide_spread: f64,
    /// Drop brackets wider than this, if set (ns).
    pub max_bracket_ns: Option<u64>,
    /// Model drift (the `g` term) when the samples resolve it.
    pub drift: bool,
    /// Look for frequency steps (DVFS) and fit piecewise when there are any.
    pub steps: bool,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            keep_fraction: 1.0,
            wide_spread: 3.0,
            max_bracket_ns: None,
            drift: true,
            steps: true,
        }
    }
}
