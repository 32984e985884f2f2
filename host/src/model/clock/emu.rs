//! The in-process emulator as a [`DeviceClock`]: [`EmuClock`] calls
//! `ttprof_emu::Device::sync_sample` directly (no mailbox), which also advances the device's
//! virtual host clock by each read's round trip, deterministically. For a demo or test that
//! owns the `Device`, between runs or from a run's drain hook (which sees `&Device`: samples
//! then follow the run); another process uses `MappedImage` (the mailbox) instead.

use super::{DeviceClock, SyncSample};
use crate::error::{Error, Result};
use riscv_linker::NocCoord;
use ttprof_emu::Device;

/// Every tile of every chip of an emulated device, chip-major.
pub fn emu_tiles(dev: &Device) -> Vec<(u32, NocCoord)> {
    (0..dev.config().chips)
        .flat_map(|c| dev.tiles().into_iter().map(move |t| (c, t)))
        .collect()
}

/// Borrows a `Device` to take sync samples from it.
pub struct EmuClock<'d> {
    dev: &'d Device,
}

impl<'d> EmuClock<'d> {
    /// The clocks of the in-process emulator `dev`.
    pub fn new(dev: &'d Device) -> EmuClock<'d> {
        EmuClock { dev }
    }
}

impl DeviceClock for EmuClock<'_> {
    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        let s = self.dev.sync_sample(chip, tile).map_err(|e| Error::Clock {
            what: format!("emulator clock sample: {e}"),
        })?;
        Ok(SyncSample {
            host_before_ns: s.host_before_ns,
            device_cycles: s.device_cycles,
            host_after_ns: s.host_after_ns,
        })
    }

    /// Advances the device's virtual host time (nothing sleeps).
    fn wait_ns(&self, ns: u64) -> Result<()> {
        self.dev.advance_host_time(ns as f64);
        Ok(())
    }
}
