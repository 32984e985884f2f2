//! The in-process emulator as a [`DeviceClock`]: [`EmuClock`] calls
//! `ttprof_emu::Device::sync_sample` directly (no mailbox), which also advances the device's
//! virtual host clock by each read's round trip, deterministically. For a demo or test that
//! owns the `Device`; another process uses `MappedImage` (the mailbox) instead.

use super::{DeviceClock, SyncSample};
use crate::error::{Error, Result};
use riscv_linker::NocCoord;
use std::sync::Mutex;
use ttprof_emu::Device;

/// Every tile of every chip of an emulated device, chip-major.
pub fn emu_tiles(dev: &Device) -> Vec<(u32, NocCoord)> {
    (0..dev.config().chips).flat_map(|c| dev.tiles().into_iter().map(move |t| (c, t))).collect()
}

/// Borrows a `Device` to take sync samples from it.
pub struct EmuClock<'d> {
    dev: Mutex<&'d mut Device>,
}

impl<'d> EmuClock<'d> {
    pub fn new(dev: &'d mut Device) -> EmuClock<'d> {
        EmuClock { dev: Mutex::new(dev) }
    }
}

impl DeviceClock for EmuClock<'_> {
    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        let mut dev = self.dev.lock().unwrap_or_else(|e| e.into_inner());
        let s = dev.sync_sample(chip, tile).map_err(|e| Error::Other(format!("emulator clock sample: {e}")))?;
        Ok(SyncSample {
            host_before_ns: s.host_before_ns,
            device_cycles: s.device_cycles,
            host_after_ns: s.host_after_ns,
        })
    }

    /// Advances the device's virtual host time (nothing sleeps).
    fn wait_ns(&self, ns: u64) -> Result<()> {
        self.dev.lock().unwrap_or_else(|e| e.into_inner()).advance_host_time(ns as f64);
        Ok(())
    }
}
