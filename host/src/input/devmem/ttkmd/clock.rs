//! Clock samples of a card: one uncached read of the tile's `WALL_CLOCK_L` bracketed by
//! `CLOCK_MONOTONIC_RAW`, then `WALL_CLOCK_H` (the high word that read latched) outside
//! the bracket. The device samples its counter at the `L` read, so only that read's round
//! trip lies inside `[host_before, host_after]`. Each sample keeps the tightest of
//! [`TRIES`] round trips; `ttprof::clock` then filters and fits the samples exactly as it
//! does the emulator's (`SyncSample`, host times in ns).
//!
//! Host times are `CLOCK_MONOTONIC_RAW` (not slewed by NTP): an op log aligned with these
//! samples must be stamped with the same clock.
//!
//! Caveat (only a card can tell how much it matters): reading `WALL_CLOCK_L` latches the
//! high word for every reader of the tile, so a kernel that reads `L` then the *latched*
//! `H` at the same moment may see a high word from the host's read; the runtime reads the
//! live high word around `L` instead (`riscv_linker::mmio`: `WALL_CLOCK_L` latches
//! `WALL_CLOCK_H`, `WALL_CLOCK_H_LIVE` is live).

use super::backend::TtKmd;
use super::driver::Driver;
use crate::devmem::{DeviceClock, SyncSample};
use crate::error::Result;
use riscv_linker::{mmio, NocCoord};

/// Round trips per sample; the one with the narrowest bracket is kept.
pub const TRIES: usize = 3;

/// `CLOCK_MONOTONIC_RAW` in ns.
pub fn monotonic_raw_ns() -> u64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC_RAW) {
        Ok(t) => t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64,
        // Linux always has it; fall back to the monotonic clock std uses.
        Err(_) => {
            use std::sync::OnceLock;
            static START: OnceLock<std::time::Instant> = OnceLock::new();
            START
                .get_or_init(std::time::Instant::now)
                .elapsed()
                .as_nanos() as u64
        }
    }
}

impl<D: Driver> DeviceClock for TtKmd<D> {
    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        self.tile_index(chip, tile)?;
        let mut best: Option<SyncSample> = None;
        for _ in 0..TRIES {
            // The window is pointed before the bracket opens: the bracket holds one read.
            let (before, lo, after, hi) =
                self.with_window(tile, mmio::WALL_CLOCK_L as u64, |d, id, off_l| {
                    let off_h = off_l + (mmio::WALL_CLOCK_H - mmio::WALL_CLOCK_L) as u64;
                    let before = monotonic_raw_ns();
                    let lo = d.read_u32(id, off_l)?;
                    let after = monotonic_raw_ns();
                    let hi = d.read_u32(id, off_h)?;
                    Ok((before, lo, after, hi))
                })?;
            if lo == u32::MAX && hi == u32::MAX {
                self.confirm_alive(tile)?;
            }
            let s = SyncSample {
                host_before_ns: before,
                device_cycles: (hi as u64) << 32 | lo as u64,
                host_after_ns: after,
            };
            if best.is_none_or(|b| s.bracket_ns() < b.bracket_ns()) {
                best = Some(s);
            }
        }
        Ok(best.expect("TRIES > 0"))
    }
}
