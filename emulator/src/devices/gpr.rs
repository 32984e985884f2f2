//! The Tensix GPRs ([GPRs] of the Scalar Unit, `REGFILE_BASE`): BRISC sees all three
//! threads' 64 registers one after the other, TRISC i its own thread's at the base (the rest
//! of the window is plain storage). Every access first runs the coprocessor up to the
//! accessing core's clock; a narrow store merges into the register.
//!
//! [GPRs]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/TensixCoprocessor/ScalarUnit.md#gprs

use super::{thread, Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Arch, Risc};

/// The GPR window (the registers are the coprocessor's).
#[derive(Debug, Default)]
pub(crate) struct Gprs;

/// The thread and register an access at `addr` by `risc` names.
fn gpr(addr: u32, risc: Risc) -> (usize, usize) {
    let (off, per) = (addr - mmio::REGFILE_BASE, mmio::GPRS_PER_THREAD_BYTES);
    match thread(risc) {
        Some(t) => (t, (off / 4) as usize),
        None => ((off / per) as usize, (off % per / 4) as usize),
    }
}

impl TileDevice for Gprs {
    fn name(&self) -> &'static str {
        "Tensix GPRs"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        cx.tensix.advance_to(a.time)?;
        let (t, i) = gpr(a.addr, a.risc);
        Ok(cx.tensix.gprs[t][i])
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        cx.tensix.risc_store(a.time)?;
        let (t, i) = gpr(a.addr, a.risc);
        cx.tensix.gprs[t][i] = word;
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }

    /// Changed by RISC stores and by the coprocessor's own instructions (`SETDMAREG`...).
    fn timeless(_: u32, _: Risc) -> bool {
        true
    }

    fn frozen(&self, _: &Access, cx: &Ctx<'_>) -> bool {
        !cx.tensix.active()
    }

    fn peek(&mut self, a: &Access, cx: &mut Ctx<'_>) -> u32 {
        let (t, i) = gpr(a.addr, a.risc);
        cx.tensix.gprs[t][i]
    }

    fn register(&self, addr: u32, risc: Risc, _: Arch) -> String {
        let (thread, index) = gpr(addr, risc);
        format!("Tensix GPR {index} of thread {thread}")
    }
}
