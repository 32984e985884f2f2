//! `RISCV_DEBUG_REG_SOFT_RESET_0`: reads the reset bits as the tile applied them; a write
//! is applied by the tile after the storing instruction retires ([`crate::chip::tile`]):
//! setting a core's bit holds it in reset, clearing it releases the core at its reset PC if
//! a kernel is loaded (the backend configuration's override of it for NCRISC and the TRISCs
//! when enabled, as tt-metal's firmware sets it). The register and the pending write are the
//! tile's ([`super::Devices::soft_reset`], [`super::Devices::pending_reset`]), which the
//! scheduler and the pipeline read.

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;

/// The soft reset register.
#[derive(Debug, Default)]
pub(crate) struct SoftReset;

impl TileDevice for SoftReset {
    fn name(&self) -> &'static str {
        "soft reset"
    }

    fn read(&mut self, _: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(*cx.soft_reset)
    }

    fn write(&mut self, _: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        *cx.pending_reset = Some(word);
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}
