//! A tile's memory-mapped registers: the wall clock, soft reset, the debug timestamper, and
//! plain register storage for the rest of the debug block, the NoC register windows and the
//! mailboxes.
//!
//! * `WALL_CLOCK_L` returns the low word of the tile's wall clock *at the reading core's
//!   own time* and latches the high word into `WALL_CLOCK_H` (one latch per tile, shared by
//!   its five cores); so does a write to it (`DebugTimestamper.md`'s memory map: "counter_high_at
//!   = counter >> 32, no other effect"). `WALL_CLOCK_H_LIVE` returns the live high word.
//!   Writes to the other two clock registers are ignored.
//! * `SOFT_RESET_0`: a write is applied by the tile after the storing instruction retires
//!   (see [`crate::tile`]): setting a core's bit holds it in reset, clearing it releases
//!   the core at its reset PC if a kernel is loaded.
//! * `TIMESTAMP` .. `TIMESTAMP_BUF1_END` (0xFFB121FC..0xFFB12214): the debug timestamper
//!   ([`crate::timestamper`]), one per tile, its counter the wall clock at the access.
//! * Any other address in the modelled windows reads back what was last written (0 at
//!   first). No NoC transaction is modelled.

use crate::fault::FaultKind;
use crate::timestamper::{Timestamper, UnitSink};
use riscv_linker::mmio;
use std::collections::BTreeMap;

/// Whether `addr` lies in one of the modelled MMIO windows.
pub(crate) fn is_mmio(addr: u32) -> bool {
    let within = |base: u32, size: u32| addr.wrapping_sub(base) < size;
    within(mmio::DEBUG_REGS_BASE, mmio::DEBUG_REGS_SIZE)
        || within(mmio::NOC0_REGS_BASE, mmio::NOC_REGS_SIZE)
        || within(mmio::NOC1_REGS_BASE, mmio::NOC_REGS_SIZE)
        || within(mmio::MAILBOX_BASE, mmio::MAILBOX_SIZE)
}

/// The registers of one tile.
#[derive(Debug, Default)]
pub(crate) struct TileRegs {
    /// Added to a core's time to give the wall clock (the tile's clock offset).
    pub wall_offset: u64,
    /// The high word latched by the last `WALL_CLOCK_L` read.
    pub latched_hi: u32,
    /// `RISCV_DEBUG_REG_SOFT_RESET_0`.
    pub soft_reset: u32,
    /// A value stored to `SOFT_RESET_0` that the tile has not applied yet.
    pub pending_reset: Option<u32>,
    /// The debug timestamper, shared by the tile's five cores.
    pub timestamper: Timestamper,
    pub(crate) other: BTreeMap<u32, u32>,
}

impl TileRegs {
    /// The wall clock at core time `time`.
    pub fn wall(&self, time: u64) -> u64 {
        time.wrapping_add(self.wall_offset)
    }

    /// A 32-bit read at word address `addr` by a core whose clock reads `time`.
    pub fn read(&mut self, addr: u32, time: u64) -> u32 {
        match addr {
            mmio::WALL_CLOCK_L => {
                let w = self.wall(time);
                self.latched_hi = (w >> 32) as u32;
                w as u32
            }
            mmio::WALL_CLOCK_H_LIVE => (self.wall(time) >> 32) as u32,
            mmio::WALL_CLOCK_H => self.latched_hi,
            mmio::SOFT_RESET_0 => self.soft_reset,
            a if Timestamper::owns(a) => self.timestamper.read(a, self.wall(time)),
            _ => self.other.get(&addr).copied().unwrap_or(0),
        }
    }

    /// A 32-bit write at word address `addr` by a core whose clock reads `time`; a
    /// timestamper unit for L1 goes to `unit` (see [`crate::timestamper`]).
    pub fn write(&mut self, addr: u32, value: u32, time: u64, unit: &mut UnitSink<'_>) -> Result<(), FaultKind> {
        match addr {
            mmio::WALL_CLOCK_L => self.latched_hi = (self.wall(time) >> 32) as u32,
            mmio::WALL_CLOCK_H_LIVE | mmio::WALL_CLOCK_H => {}
            mmio::SOFT_RESET_0 => self.pending_reset = Some(value),
            a if Timestamper::owns(a) => {
                let counter = self.wall(time);
                self.timestamper.write(a, value, counter, unit)?;
            }
            _ => {
                self.other.insert(addr, value);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_read_latches_high_word_and_live_high_moves() {
        let mut r = TileRegs { wall_offset: 5, ..TileRegs::default() };
        let t = (7u64 << 32) | 0xFFFF_FFF0;
        assert_eq!(r.read(mmio::WALL_CLOCK_L, t), 0xFFFF_FFF5);
        assert_eq!(r.read(mmio::WALL_CLOCK_H, t + 100), 7, "latched, not live");
        assert_eq!(r.read(mmio::WALL_CLOCK_H_LIVE, t + 100), 8, "live high moved on");
        r.write(mmio::WALL_CLOCK_H, 0, t, &mut no_units).unwrap();
        r.write(mmio::WALL_CLOCK_H_LIVE, 0, t, &mut no_units).unwrap();
        assert_eq!(r.read(mmio::WALL_CLOCK_H, t + 100), 7, "writes to the high words are ignored");
        // A write to the low word latches like a read (DebugTimestamper.md's memory map).
        r.write(mmio::WALL_CLOCK_L, 0xDEAD, t + 100, &mut no_units).unwrap();
        assert_eq!(r.read(mmio::WALL_CLOCK_H, t), 8);
        assert_eq!(r.read(mmio::WALL_CLOCK_L, 0), 5, "the clock itself is not written");
    }

    fn no_units(_: u32, _: [u32; 4]) -> Result<(), String> {
        panic!("no unit expected")
    }

    #[test]
    fn timestamper_registers_use_the_wall_clock() {
        let mut r = TileRegs { wall_offset: 1 << 32, ..TileRegs::default() };
        let mut units = Vec::new();
        let mut sink = |a, d| {
            units.push((a, d));
            Ok(())
        };
        r.write(mmio::TIMESTAMP_BUF0_START, 0x3000, 0, &mut sink).unwrap();
        r.write(mmio::TIMESTAMP_BUF0_END, 0x3001, 0, &mut sink).unwrap();
        r.write(mmio::TIMESTAMP, 0x40, 0x10, &mut sink).unwrap();
        assert_eq!(units, [(0x30000, [0x40, 0x10, 1, 0])], "counter = wall clock = time + offset");
        assert_eq!(r.read(mmio::TIMESTAMP_STATUS, 0x11), 1 << 14);
        assert_eq!(r.read(mmio::TIMESTAMP_BUF0_END, 0x11), 0x3001);
        assert!(r.other.is_empty(), "not plain storage");
    }

    #[test]
    fn other_registers_read_back_and_soft_reset_is_deferred() {
        let mut r = TileRegs::default();
        r.write(mmio::NOC0_REGS_BASE + 8, 42, 0, &mut no_units).unwrap();
        assert_eq!(r.read(mmio::NOC0_REGS_BASE + 8, 0), 42);
        assert_eq!(r.read(mmio::MAILBOX_BASE, 0), 0);
        r.write(mmio::SOFT_RESET_0, mmio::SOFT_RESET_ALL, 0, &mut no_units).unwrap();
        assert_eq!(r.pending_reset, Some(mmio::SOFT_RESET_ALL));
        assert!(is_mmio(mmio::SOFT_RESET_0) && !is_mmio(mmio::LOCAL_RAM_BASE));
    }
}
