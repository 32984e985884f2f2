//! Host access to L1, shaped like a PCIe TLB window: aligned 32-bit reads and writes at
//! (chip, NoC x/y, address), with a count of the bytes read so a readout can report what
//! it would have cost on the bus.
//!
//! The tile's debug timestamper registers are reachable the same way (a card's NoC
//! address space has them at the cores' addresses), so a host can drain its buffers.
//! The debug daisychain's registers too, so a host can program sampling and read
//! `DBG_RD_DATA` ([`crate::devices::daisychain`]).
//!
//! These take `&self` so that a hook of [`Device::run_with_hook`] can drain rings and
//! write consumer positions while the tiles are paused. They go through the same shared
//! mapping as the cores, with the same atomic accesses (see [`crate::chip::memory`]).

use crate::chip::device::Device;
use crate::devices::daisychain::Daisychain;
use crate::devices::timestamper::Timestamper;
use crate::error::EmuError;
use crate::isa::hart::HartState;
use riscv_linker::NocCoord;
use std::sync::atomic::Ordering;

impl Device {
    fn stamper(&self, i: usize) -> std::sync::MutexGuard<'_, Timestamper> {
        self.tiles[i]
            .mem
            .regs
            .timestamper
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn check_window(
        &self,
        chip: u32,
        tile: NocCoord,
        addr: u32,
        words: usize,
    ) -> Result<usize, EmuError> {
        let index = self.tile_index(chip, tile)?;
        let l1 = self.arch().l1_size() as u64;
        if !addr.is_multiple_of(4) || addr as u64 + 4 * words as u64 > l1 {
            return Err(EmuError::Config(format!(
                "host access of {words} word(s) at {addr:#x} on chip {chip} tile {tile}: must be 4-byte aligned and inside L1 ({l1:#x} bytes)"
            )));
        }
        Ok(index)
    }

    /// Reads the 32-bit word at L1 address `addr` of `tile`, or one of the tile's debug
    /// timestamper registers (`riscv_linker::mmio::TIMESTAMP` ..= `TIMESTAMP_BUF1_END`, as a
    /// card exposes them over the NoC; see `timestamper`'s host access).
    pub fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32, EmuError> {
        if Timestamper::owns(addr) {
            let i = self.tile_index(chip, tile)?;
            self.bytes_read.fetch_add(4, Ordering::Relaxed);
            return Ok(self.stamper(i).host_read(addr));
        }
        if Daisychain::owns(addr) {
            let i = self.tile_index(chip, tile)?;
            self.bytes_read.fetch_add(4, Ordering::Relaxed);
            let d = self.tiles[i].mem.regs.daisychain.lock();
            return Ok(d.unwrap_or_else(|e| e.into_inner()).read(addr));
        }
        let i = self.check_window(chip, tile, addr, 1)?;
        self.bytes_read.fetch_add(4, Ordering::Relaxed);
        Ok(self.tiles[i].mem.l1.load::<4>(addr))
    }

    /// Reads `out.len()` consecutive words starting at `addr` (one burst; counts
    /// `4 * out.len()` bytes).
    pub fn read_words(
        &self,
        chip: u32,
        tile: NocCoord,
        addr: u32,
        out: &mut [u32],
    ) -> Result<(), EmuError> {
        let i = self.check_window(chip, tile, addr, out.len())?;
        self.bytes_read
            .fetch_add(4 * out.len() as u64, Ordering::Relaxed);
        let l1 = &self.tiles[i].mem.l1;
        for (k, w) in out.iter_mut().enumerate() {
            *w = l1.load::<4>(addr + 4 * k as u32);
        }
        Ok(())
    }

    /// Writes the 32-bit word at L1 address `addr` of `tile`. Writing into a code region is
    /// allowed (the host loads code); the tile re-decodes before it next runs. The debug
    /// timestamper's control, status and buffer registers are writable too (not its command
    /// register: only cores append events).
    pub fn write_u32(
        &self,
        chip: u32,
        tile: NocCoord,
        addr: u32,
        value: u32,
    ) -> Result<(), EmuError> {
        if Timestamper::owns(addr) {
            let i = self.tile_index(chip, tile)?;
            return self.stamper(i).host_write(addr, value).map_err(|why| {
                EmuError::Config(format!("host write on chip {chip} tile {tile}: {why}"))
            });
        }
        if Daisychain::owns(addr) {
            let t = &self.tiles[self.tile_index(chip, tile)?];
            // While a run is paused (a hook) the write lands at the tile's window end;
            // between runs, sampling starts with the next run.
            let at = t.any_running().then_some(t.now);
            let (l1, code) = (t.mem.l1, &t.mem.code);
            let mut d = t
                .mem
                .regs
                .daisychain
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            return d
                .write(addr, value, at, &mut |a, w| {
                    crate::devices::timestamper::write_unit(&l1, code, a, w)
                })
                .map_err(|why| {
                    EmuError::Config(format!(
                        "host write to the debug daisychain of chip {chip} tile {tile}: {why}"
                    ))
                });
        }
        let i = self.check_window(chip, tile, addr, 1)?;
        let t = &self.tiles[i];
        let code = addr < t.mem.code_end && t.mem.code.iter().any(|(r, _)| r.contains(addr, 4));
        if code
            || t.harts
                .iter()
                .any(|h| h.map.kernel.is_some_and(|k| k.contains(addr, 4)))
        {
            t.code_dirty.store(true, Ordering::Release);
        }
        t.mem.l1.store::<4>(addr, value);
        Ok(())
    }

    /// Bytes read by the host through [`Device::read_u32`], [`Device::read_words`] and
    /// [`Device::sync_sample`] since the device was made (or the counter reset).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// Resets the [`Device::bytes_read`] counter to 0.
    pub fn reset_bytes_read(&self) {
        self.bytes_read.store(0, Ordering::Relaxed);
    }

    /// Arms the performance counters of every tile (`(bank, select)`: a bank of
    /// [`crate::PERF_COUNTER_BANKS`] and its counter select, 256 up the grant side) and
    /// starts them at the next run's first cycle: what a host writes just before a launch.
    /// A counter the model cannot derive is refused here, naming it.
    pub fn arm_perf_counters(&mut self, banks: &[(&str, u32)]) -> Result<(), EmuError> {
        let arch = self.arch();
        for &(bank, sel) in banks {
            crate::describe_perf_counter(arch, bank, sel).map_err(EmuError::Config)?;
        }
        let banks = banks
            .iter()
            .map(|&(bank, sel)| Ok((bank_index(bank)?, sel)))
            .collect::<Result<Vec<_>, EmuError>>()?;
        for t in &mut self.tiles {
            t.mem.regs.perf_counters.pending = banks.clone();
        }
        Ok(())
    }

    /// A tile's performance counter bank as a host reads it after a run, at the cycle the
    /// tile's last core stopped: (cycles since it was started, the selected counter),
    /// whole. (0, 0) for a bank never started.
    pub fn perf_counter(
        &mut self,
        chip: u32,
        tile: NocCoord,
        bank: &str,
    ) -> Result<(u64, u64), EmuError> {
        let i = self.tile_index(chip, tile)?;
        let b = bank_index(bank)?;
        let t = &mut self.tiles[i];
        // Read as a host does once the tile's last core stopped, not at the end of the
        // emulator's last scheduling window (which can lie far past it).
        let stopped = t
            .harts
            .iter()
            .filter_map(|h| match h.state {
                HartState::Running => Some(t.now),
                HartState::Exited(_) | HartState::Faulted => Some(h.core.time),
                HartState::Empty | HartState::Reset => None,
            })
            .max()
            .unwrap_or(t.now)
            .min(t.now);
        let regs = &mut t.mem.regs;
        regs.perf_counters
            .read_bank(b, stopped, &mut regs.tensix)
            .map_err(|k| EmuError::Config(format!("chip {chip} tile {tile}: {k}")))
    }

    /// Status counter `index` ([`riscv_linker::noc::counter`]) of a tile's NIU `noc` as a
    /// host reads it after a run: with every NoC event due by the tile's last cycle applied.
    pub fn niu_counter(
        &mut self,
        chip: u32,
        tile: NocCoord,
        noc: u8,
        index: u32,
    ) -> Result<u32, EmuError> {
        if noc > 1 || index >= riscv_linker::noc::counter::COUNT {
            return Err(EmuError::Config(format!(
                "no NIU status counter {index:#x} on NoC {noc} (NoCs 0 and 1, counters below {:#x})",
                riscv_linker::noc::counter::COUNT
            )));
        }
        let i = self.tile_index(chip, tile)?;
        let t = &mut self.tiles[i];
        t.mem.apply_noc(t.now);
        Ok(t.mem.niu.as_ref().map_or(0, |n| n.counter(noc, index)))
    }
}

/// The index of performance counter bank `bank` in [`crate::PERF_COUNTER_BANKS`].
fn bank_index(bank: &str) -> Result<usize, EmuError> {
    crate::PERF_COUNTER_BANKS
        .iter()
        .position(|&b| b == bank)
        .ok_or_else(|| EmuError::Config(format!("no performance counter bank {bank:?}")))
}
