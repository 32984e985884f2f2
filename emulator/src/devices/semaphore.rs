//! The Tensix semaphores as the TRISCs see them ([semaphores] of the Sync Unit,
//! `PC_BUF_BASE + 0x20 + 4 * i`): a load returns `Value`; a store of an odd value acts like
//! `SEMGET`, of an even value like `SEMPOST`. Every access first runs the coprocessor up to
//! the accessing core's clock.
//!
//! [semaphores]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/TensixCoprocessor/SyncUnit.md#semaphores

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Arch, Risc};

/// The semaphore window (the semaphores are the coprocessor's).
#[derive(Debug, Default)]
pub(crate) struct Semaphores;

fn index(addr: u32) -> usize {
    ((addr - mmio::SEMAPHORE_BASE) / 4) as usize
}

impl TileDevice for Semaphores {
    fn name(&self) -> &'static str {
        "Tensix semaphores"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        cx.tensix.advance_to(a.time)?;
        Ok(cx.tensix.sync.sems[index(a.addr)].value as u32)
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        cx.tensix.risc_store(a.time)?;
        cx.tensix.sync.risc_write(index(a.addr), word);
        Ok(())
    }

    /// Changed by RISC stores and by the coprocessor's `SEMPOST`/`SEMGET`.
    fn timeless(_: u32, _: Risc) -> bool {
        true
    }

    /// Frozen while the coprocessor is idle (nothing in flight, no timed hold pending).
    fn frozen(&self, _: &Access, cx: &Ctx<'_>) -> bool {
        !cx.tensix.active()
    }

    /// Without moving the coprocessor's clock (a proof stepping ahead must not).
    fn peek(&mut self, a: &Access, cx: &mut Ctx<'_>) -> u32 {
        cx.tensix.sync.sems[index(a.addr)].value as u32
    }

    fn register(&self, addr: u32, _: Risc, _: Arch) -> String {
        format!("Tensix semaphore {}", index(addr))
    }
}
