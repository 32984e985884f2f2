//! The debug daisychain's registers (`DBG_BUS_CNTL`, `DBG_L1_MEM_REG0..2`, `DBG_RD_DATA`):
//! one per tile; its model is [`crate::debug::daisychain`]. A write at the storing core's
//! clock; a single write of the presented bits goes into L1 as one 16-byte unit.

use super::{Access, Ctx, TileDevice};
use crate::debug::daisychain::Daisychain;
use crate::error::FaultKind;

impl TileDevice for Daisychain {
    fn name(&self) -> &'static str {
        "debug daisychain"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(Daisychain::read(self, a.word()))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        Daisychain::write(self, a.word(), word, Some(a.time), cx.unit)
            .map_err(FaultKind::Daisychain)
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}
