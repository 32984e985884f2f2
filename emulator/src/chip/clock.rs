//! The device's clocks as a host reads them: virtual host time, and the clock-sync samples a
//! host reading a tile's wall clock over PCIe would take ([`crate::time::sync`],
//! [`crate::time::clock`] for the model).

use crate::chip::device::Device;
use crate::error::EmuError;
use crate::time::clock::SplitMix;
use crate::time::sync::{read_clock, Read, SyncSample};
use riscv_linker::NocCoord;

impl Device {
    /// Virtual host time now, in ns.
    /// During a run (in a [`Device::run_with_hook`] hook) this is the latest time every chip
    /// has been simulated to, when that is later.
    pub fn host_time_ns(&self) -> f64 {
        self.host
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .now_ns
            .max(self.published.get())
    }

    /// Lets `ns` of virtual host time pass (the host doing other work between runs); the
    /// chips' counters advance with it.
    pub fn advance_host_time(&self, ns: f64) {
        let mut h = self.host.lock().unwrap_or_else(|e| e.into_inner());
        h.now_ns += ns.max(0.0);
        let now = h.now_ns;
        self.published.advance(now);
    }

    /// Reads `tile`'s wall clock the way the host would over PCIe: the request takes a drawn
    /// latency to reach the device, which samples its counter then, and the response takes
    /// another to come back. Virtual host time advances by both.
    ///
    /// Between runs the read starts at the device's host time. During a run (from a
    /// [`Device::run_with_hook`] hook, which is why this takes `&self`) it starts at the
    /// latest host time the device has simulated every chip to, so samples taken while the
    /// rings drain follow the run; they never change what the cores compute.
    ///
    /// (A host in another process asks through the image's clock mailbox instead, see the
    /// crate docs; those samples never move this clock.)
    pub fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample, EmuError> {
        let index = self.tile_index(chip, tile)?;
        let offset = self.tiles[index].mem.regs.wall_offset;
        let truth = self.truth_of(chip, offset);
        let (before, read) = self
            .host_read(|rng, before| read_clock(&truth, &self.cfg.clock.host_read, rng, before));
        // The chip counter never runs behind a value a run already reached.
        let chip_cycles = read.chip_cycles.max(self.chip_time[chip as usize]);
        self.bytes_read
            .fetch_add(8, std::sync::atomic::Ordering::Relaxed);
        Ok(SyncSample {
            host_before_ns: before.round() as u64,
            device_cycles: chip_cycles.wrapping_add(offset),
            host_after_ns: read.after.round() as u64,
        })
    }

    /// Reads chip `chip`'s fixed 50 MHz reference counter (see [`crate::time::dvfs`]) the way the
    /// host would, like [`Device::sync_sample`]: `device_cycles` holds reference ticks.
    pub fn ref_sample(&self, chip: u32) -> Result<SyncSample, EmuError> {
        if chip >= self.cfg.chips {
            return Err(EmuError::Config(format!(
                "chip {chip}: the device has {} chip(s)",
                self.cfg.chips
            )));
        }
        let truth = self.truth_of(chip, 0);
        let (before, read) = self.host_read(|rng, before| {
            let (request, response) = self.cfg.clock.host_read.draw(rng);
            let at = before + request;
            Read {
                after: at + response,
                chip_cycles: truth.ref_ticks_at(at).floor() as u64,
            }
        });
        self.bytes_read
            .fetch_add(8, std::sync::atomic::Ordering::Relaxed);
        Ok(SyncSample {
            host_before_ns: before.round() as u64,
            device_cycles: read.chip_cycles,
            host_after_ns: read.after.round() as u64,
        })
    }

    /// One host read starting now (see [`Device::sync_sample`]): returns its start and what
    /// `draw` made of it, and moves host time to the response's arrival.
    fn host_read(&self, draw: impl FnOnce(&mut SplitMix, f64) -> Read) -> (f64, Read) {
        let mut host = self.host.lock().unwrap_or_else(|e| e.into_inner());
        let before = host.now_ns.max(self.published.get());
        let read = draw(&mut host.rng, before);
        host.now_ns = read.after;
        self.published.advance(read.after);
        (before, read)
    }

    /// Moves every chip's counter up to the current host time (before a run).
    pub(crate) fn catch_up_chips(&mut self) {
        let now = self.host_time_ns();
        for chip in 0..self.cfg.chips {
            let c = self.truth_of(chip, 0).chip_cycles_at(now).floor() as u64;
            let t = &mut self.chip_time[chip as usize];
            *t = (*t).max(c);
        }
    }

    /// Moves host time to when the slowest chip reached its counter (after a run).
    pub(crate) fn catch_up_host(&mut self) {
        let mut latest = self.host_time_ns();
        for chip in 0..self.cfg.chips {
            let h = self
                .truth_of(chip, 0)
                .host_ns_at_chip(self.chip_time[chip as usize] as f64);
            latest = latest.max(h);
        }
        self.host
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .now_ns = latest;
        self.published.advance(latest);
    }
}
