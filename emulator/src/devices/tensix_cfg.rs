//! The coprocessor's configuration as the cores see it ([`crate::tensix`]): the backend
//! configuration (`TENSIX_CFG_BASE`: `Config[2][188]`, then `ThreadConfig`, which RISC stores
//! do not change; the rest of the window is plain storage), and the MOP Expander
//! configuration (`TENSIX_MOP_CFG_BASE`, per TRISC, write-only: a load faults, the page calls
//! it undefined). Every store, and every configuration load, first runs the coprocessor up to
//! the accessing core's clock.

use super::{thread, Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Arch, Risc};

/// The backend configuration window (`Config`, then `ThreadConfig`).
#[derive(Debug, Default)]
pub(crate) struct Config;

/// The byte offset of `addr` in the configuration window.
fn off(addr: u32) -> u32 {
    addr - mmio::TENSIX_CFG_BASE
}

impl TileDevice for Config {
    fn name(&self) -> &'static str {
        "Tensix backend configuration"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        cx.tensix.advance_to(a.time)?;
        Ok(cx.tensix.config.risc_read(off(a.addr)))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        cx.tensix.risc_store(a.time)?;
        cx.tensix.config.risc_write(off(a.addr), word);
        Ok(())
    }

    /// Changed by RISC stores and by the coprocessor's own instructions (`WRCFG`...).
    fn timeless(_: u32, _: Risc) -> bool {
        true
    }

    fn frozen(&self, _: &Access, cx: &Ctx<'_>) -> bool {
        !cx.tensix.active()
    }

    fn peek(&mut self, a: &Access, cx: &mut Ctx<'_>) -> u32 {
        cx.tensix.config.risc_read(off(a.addr))
    }

    fn register(&self, addr: u32, _: Risc, _: Arch) -> String {
        format!("Tensix configuration +{:#x}", off(addr))
    }
}

/// The MOP Expander configuration of each TRISC's Tensix thread.
#[derive(Debug, Default)]
pub(crate) struct MopCfg;

impl TileDevice for MopCfg {
    fn name(&self) -> &'static str {
        "MOP expander configuration"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Err(a.write_only())
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        let t = thread(a.risc).expect("a TRISC's MOP configuration");
        cx.tensix.risc_store(a.time)?;
        cx.tensix.mop_cfg[t][((a.addr - mmio::MOP_CFG_BASE) / 4) as usize] = word;
        Ok(())
    }
}
