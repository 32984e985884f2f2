//! The debug timestamper's registers (`TIMESTAMP` .. `TIMESTAMP_BUF1_END`,
//! 0xFFB121FC..0xFFB12214): one per tile, its counter the tile's wall clock at the access;
//! its model is [`crate::debug::timestamper`]. A 1- or 2-byte store faults (the page
//! defines 32-bit writes).

use super::{Access, Ctx, TileDevice};
use crate::debug::timestamper::Timestamper;
use crate::error::FaultKind;

impl TileDevice for Timestamper {
    fn name(&self) -> &'static str {
        "debug timestamper"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(Timestamper::read(self, a.word(), cx.wall))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        Timestamper::write(self, a.word(), word, cx.wall, cx.unit)
    }

    fn merges(&self, addr: u32, size: u32) -> Result<bool, FaultKind> {
        Err(Timestamper::narrow_store(addr & !3, size))
    }
}
