//! The wall clock (`WALL_CLOCK_L`, `WALL_CLOCK_H_LIVE`, `WALL_CLOCK_H`): the tile's clock,
//! its cores' time plus the tile's clock offset ([`super::Devices::wall_offset`]).
//! `WALL_CLOCK_L` returns the low word *at the reading core's own time* and latches the high
//! word into `WALL_CLOCK_H` (one latch per tile, shared by its five cores); so does a write
//! to it (`DebugTimestamper.md`'s memory map: "counter_high_at = counter >> 32, no other
//! effect"). `WALL_CLOCK_H_LIVE` returns the live high word. Writes to the other two are
//! ignored.

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::mmio;

/// The wall clock's registers.
#[derive(Debug, Default)]
pub(crate) struct WallClock {
    /// The high word latched by the last `WALL_CLOCK_L` read or write.
    latched_hi: u32,
}

impl TileDevice for WallClock {
    fn name(&self) -> &'static str {
        "wall clock"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(match a.word() {
            mmio::WALL_CLOCK_L => {
                self.latched_hi = (cx.wall >> 32) as u32;
                cx.wall as u32
            }
            mmio::WALL_CLOCK_H_LIVE => (cx.wall >> 32) as u32,
            _ => self.latched_hi,
        })
    }

    fn write(&mut self, a: &Access, _: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        if a.word() == mmio::WALL_CLOCK_L {
            self.latched_hi = (cx.wall >> 32) as u32;
        }
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}
