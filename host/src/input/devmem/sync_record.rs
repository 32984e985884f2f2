//! Clock-sync samples in a [`Snapshot`]: recorded (section tag 3), saved, loaded and
//! replayed, so a readout's clock alignment can be redone offline from the same samples.
//!
//! ## Section body (tag 3), little-endian
//!
//! ```text
//! 0   count u32
//! 4   0 u32 (reserved)
//! 8   count samples, 32 bytes each, in the order they were taken:
//!     chip u32, tile index u32 (into the tile table), host before ns u64,
//!     device cycles u64, host after ns u64
//! ```
//!
//! A snapshot may hold several such sections; their samples are read in file order.
//! Samples are stored as read, even impossible ones: judging them is the clock fit's job.

use super::{DeviceClock, DeviceMemory, Snapshot, SyncSample, TileSample};
use crate::error::{Error, Result};
use riscv_linker::NocCoord;
use std::collections::HashMap;
use std::sync::Mutex;

/// Section tag of clock samples.
pub(super) const TAG_SYNC: u32 = 3;
const SAMPLE_BYTES: usize = 32;

/// The samples of a snapshot and where each tile's replay stands.
#[derive(Debug, Default)]
pub(super) struct SyncLog {
    inner: Mutex<Log>,
}

#[derive(Debug, Default)]
struct Log {
    samples: Vec<TileSample>,
    /// Per tile: indices into `samples`, in order, and how many were replayed.
    by_tile: HashMap<(u32, NocCoord), (Vec<usize>, usize)>,
}

impl SyncLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn push(&self, s: TileSample) {
        let mut log = self.lock();
        let i = log.samples.len();
        log.samples.push(s);
        log.by_tile.entry((s.chip, s.tile)).or_default().0.push(i);
    }

    pub(super) fn all(&self) -> Vec<TileSample> {
        self.lock().samples.clone()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lock().samples.is_empty()
    }

    /// The section body; `index` gives a tile's index in the tile table.
    pub(super) fn encode(&self, index: impl Fn(u32, NocCoord) -> Result<u32>) -> Result<Vec<u8>> {
        let log = self.lock();
        let mut body = Vec::with_capacity(8 + SAMPLE_BYTES * log.samples.len());
        body.extend_from_slice(&(log.samples.len() as u32).to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        for s in &log.samples {
            body.extend_from_slice(&s.chip.to_le_bytes());
            body.extend_from_slice(&index(s.chip, s.tile)?.to_le_bytes());
            for v in [
                s.sample.host_before_ns,
                s.sample.device_cycles,
                s.sample.host_after_ns,
            ] {
                body.extend_from_slice(&v.to_le_bytes());
            }
        }
        Ok(body)
    }

    /// Adds the samples of one section body; `tiles` is the tile table per chip.
    pub(super) fn decode(&self, data: &[u8], tiles: &[Vec<NocCoord>]) -> Result<(), String> {
        let count = data
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        let fits = |n: usize| {
            SAMPLE_BYTES.checked_mul(n).and_then(|b| b.checked_add(8)) == Some(data.len())
        };
        let Some(count) = count.filter(|&n| fits(n)) else {
            return Err(format!(
                "clock sample section of {} bytes: expected 8 bytes of count then 32 bytes per sample",
                data.len()
            ));
        };
        let u32_at =
            |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let u64_at = |b: &[u8], at: usize| u32_at(b, at) as u64 | (u32_at(b, at + 4) as u64) << 32;
        for (k, b) in data[8..].chunks_exact(SAMPLE_BYTES).enumerate().take(count) {
            let (chip, index) = (u32_at(b, 0), u32_at(b, 4));
            let tile = tiles.get(chip as usize).and_then(|t| t.get(index as usize)).copied().ok_or_else(|| {
                format!("clock sample {k} names chip {chip} tile #{index}, which the tile table does not have")
            })?;
            let sample = SyncSample {
                host_before_ns: u64_at(b, 8),
                device_cycles: u64_at(b, 16),
                host_after_ns: u64_at(b, 24),
            };
            self.push(TileSample { chip, tile, sample });
        }
        Ok(())
    }

    /// The next recorded sample of a tile, in recorded order.
    fn replay(&self, chip: u32, tile: NocCoord) -> std::result::Result<SyncSample, usize> {
        let mut log = self.lock();
        let Log { samples, by_tile } = &mut *log;
        let Some((indices, next)) = by_tile.get_mut(&(chip, tile)) else {
            return Err(0);
        };
        let Some(&i) = indices.get(*next) else {
            return Err(indices.len());
        };
        *next += 1;
        Ok(samples[i].sample)
    }
}

impl Snapshot {
    /// Records one clock sample (after checking the tile exists).
    pub fn add_sync_sample(&self, chip: u32, tile: NocCoord, sample: SyncSample) -> Result<()> {
        if !self.tiles(chip).contains(&tile) {
            return Err(Error::Address {
                what: format!(
                    "clock sample of chip {chip} tile {tile}: {} has no such tile",
                    self.describe()
                ),
            });
        }
        self.sync.push(TileSample { chip, tile, sample });
        Ok(())
    }

    /// Records samples taken elsewhere (e.g. `ttprof::clock::ClockSync::samples`).
    pub fn add_sync_samples(&self, samples: &[TileSample]) -> Result<()> {
        samples
            .iter()
            .try_for_each(|s| self.add_sync_sample(s.chip, s.tile, s.sample))
    }

    /// Every recorded clock sample, in the order taken.
    pub fn sync_samples(&self) -> Vec<TileSample> {
        self.sync.all()
    }
}

/// Replays the recorded samples of each tile in order; an error once they run out. Waiting
/// is free: the recorded times already include whatever the recording host waited.
impl DeviceClock for Snapshot {
    fn wait_ns(&self, _ns: u64) -> Result<()> {
        Ok(())
    }

    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        self.sync.replay(chip, tile).map_err(|recorded| {
            Error::Clock {
                what: format!(
                    "{}: no more recorded clock samples of chip {chip} tile {tile} ({recorded} recorded, all replayed)",
                    self.describe()
                ),
            }
        })
    }
}

/// Takes samples through `inner` and records each into a snapshot.
pub struct ClockRecorder<'a> {
    inner: &'a dyn DeviceClock,
    into: &'a Snapshot,
}

impl<'a> ClockRecorder<'a> {
    /// Takes samples from `inner` and adds each to the snapshot `into`.
    pub fn new(inner: &'a dyn DeviceClock, into: &'a Snapshot) -> ClockRecorder<'a> {
        ClockRecorder { inner, into }
    }
}

impl DeviceClock for ClockRecorder<'_> {
    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        let s = self.inner.sync_sample(chip, tile)?;
        self.into.add_sync_sample(chip, tile, s)?;
        Ok(s)
    }

    fn wait_ns(&self, ns: u64) -> Result<()> {
        self.inner.wait_ns(ns)
    }
}
