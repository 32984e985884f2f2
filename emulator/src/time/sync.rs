//! Virtual host time and clock-sync samples: what a host reading a tile's wall clock over
//! PCIe would observe (see [`crate::time::clock`] for the model).

use crate::chip::device::Device;
use crate::error::EmuError;
use crate::time::clock::{ClockTruth, ReadLatency, SplitMix};
use riscv_linker::NocCoord;

/// One host read of a tile's wall clock: the host's clock just before it issued the read,
/// the counter value the device returned, and the host's clock when the value arrived.
/// Host times are virtual nanoseconds, rounded to the nearest nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSample {
    /// Host clock when the read was sent, ns.
    pub host_before_ns: u64,
    /// The counter value the device returned, cycles.
    pub device_cycles: u64,
    /// Host clock when the value arrived, ns.
    pub host_after_ns: u64,
}

/// The device's virtual host clock and the generator of read latencies.
#[derive(Clone, Debug)]
pub(crate) struct HostClock {
    pub now_ns: f64,
    rng: SplitMix,
}

impl HostClock {
    pub fn new(seed: u64, start_ns: f64) -> HostClock {
        HostClock {
            now_ns: start_ns,
            rng: SplitMix(seed),
        }
    }
}

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

/// One drawn read of a wall clock.
pub(crate) struct Read {
    /// Host time the response arrives.
    pub after: f64,
    /// The chip counter (without the tile offset) when the request arrived.
    pub chip_cycles: u64,
}

/// A read issued at host time `before`: the request leg, the counter sampled on arrival,
/// the response leg. Shared by in-process samples and the mailbox responder.
pub(crate) fn read_clock(
    truth: &ClockTruth,
    lat: &ReadLatency,
    rng: &mut SplitMix,
    before: f64,
) -> Read {
    let (request, response) = lat.draw(rng);
    let at = before + request;
    Read {
        after: at + response,
        chip_cycles: truth.chip_cycles_at(at).floor() as u64,
    }
}
