//! Taking sync windows: [`ClockSync`] samples every tile of a run round robin through any
//! [`DeviceClock`] and keeps the samples for the fit.
//!
//! Round robin (`tile 0, tile 1, ..., tile 0, ...`) spreads each tile's samples over the
//! whole window, and rounds start at least [`DEFAULT_SPACING_NS`] apart (the clock's
//! [`DeviceClock::wait_ns`] fills the gap; tt-metal spaces its samples the same 500 us).
//! A window then spans ~`samples × spacing` (50 ms for 100), long enough to show the
//! clock's local slope, which is what lets two windows resolve drift between them; a burst
//! of back-to-back samples cannot (its slope error is the bracket noise over a span of a
//! few hundred microseconds).

use super::report::{fit, Fit};
use super::{DeviceClock, FitOptions, TileSample};
use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use riscv_linker::{Arch, NocCoord};

/// Every tile of every chip of `mem`, chip-major.
pub fn all_tiles(mem: &dyn DeviceMemory) -> Vec<(u32, NocCoord)> {
    (0..mem.geometry().chips)
        .flat_map(|c| mem.tiles(c).into_iter().map(move |t| (c, t)))
        .collect()
}

/// Default time from one round's start to the next's, ns.
pub const DEFAULT_SPACING_NS: u64 = 500_000;

/// Sync windows of one run and the samples they took.
#[derive(Clone, Debug)]
pub struct ClockSync {
    tiles: Vec<(u32, NocCoord)>,
    per_tile: usize,
    spacing_ns: u64,
    samples: Vec<TileSample>,
    windows: usize,
}

impl ClockSync {
    /// Windows of `samples_per_tile` samples of each of `tiles` (chip, tile).
    pub fn new(tiles: Vec<(u32, NocCoord)>, samples_per_tile: usize) -> ClockSync {
        ClockSync {
            tiles,
            per_tile: samples_per_tile,
            spacing_ns: DEFAULT_SPACING_NS,
            samples: Vec::new(),
            windows: 0,
        }
    }

    /// Sets the time from one round's start to the next's (0: back to back).
    pub fn with_spacing_ns(mut self, ns: u64) -> ClockSync {
        self.spacing_ns = ns;
        self
    }

    /// Takes one window through `clock`: `samples_per_tile` rounds over every tile. On an
    /// error the window's samples taken so far are kept and the error names the tile.
    pub fn window(&mut self, clock: &dyn DeviceClock) -> Result<()> {
        if self.tiles.is_empty() || self.per_tile == 0 {
            return Err(Error::Clock {
                what: format!(
                    "clock sync window of {} sample(s) per tile over {} tile(s): nothing to sample",
                    self.per_tile,
                    self.tiles.len()
                ),
            });
        }
        let window = self.windows + 1;
        let fail = |round, what: String| Error::Clock {
            what: format!("clock sync window {window}, round {round}: {what}"),
        };
        for round in 0..self.per_tile {
            let first = self.samples.len();
            for &(chip, tile) in &self.tiles {
                let sample = clock
                    .sync_sample(chip, tile)
                    .map_err(|e| fail(round, format!("chip {chip} tile {tile}: {e}")))?;
                self.samples.push(TileSample { chip, tile, sample });
            }
            let took = self.samples[self.samples.len() - 1]
                .sample
                .host_after_ns
                .saturating_sub(self.samples[first].sample.host_before_ns);
            if round + 1 < self.per_tile && took < self.spacing_ns {
                clock
                    .wait_ns(self.spacing_ns - took)
                    .map_err(|e| fail(round, format!("waiting: {e}")))?;
            }
        }
        self.windows += 1;
        Ok(())
    }

    /// Adds samples taken elsewhere (e.g. replayed from a snapshot).
    pub fn extend(&mut self, samples: &[TileSample]) {
        self.samples.extend_from_slice(samples);
    }

    /// Every sample so far, in the order taken.
    pub fn samples(&self) -> &[TileSample] {
        &self.samples
    }

    /// Complete windows taken so far.
    pub fn windows(&self) -> usize {
        self.windows
    }

    /// Fits the samples so far (see [`super::fit`]).
    pub fn fit(&self, arch: Arch, chips: u32, opts: &FitOptions) -> Result<Fit> {
        fit(&self.samples, arch, chips, opts)
    }
}
