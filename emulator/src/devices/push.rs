//! The instruction pushes ([Push Tensix instruction]): stores to `INSTRN_BUF_BASE` (a TRISC
//! to its own Tensix thread, BRISC to thread 0) and BRISC's to `INSTRN1_BUF_BASE` /
//! `INSTRN2_BUF_BASE` (threads 1 and 2) push the stored word into the thread's instruction
//! FIFO ([`crate::tensix`]; `.ttinsn` too); a push into a full FIFO waits; an instruction
//! the model does not execute stops the run with [`FaultKind::TensixPush`]. Loads of the
//! push windows are [`FaultKind::WriteOnly`]. Every push first runs the coprocessor up to
//! the accessing core's clock.
//!
//! The debug bus pushes too ([`DebugPush`]): `RISCV_DEBUG_REG_INSTRN_BUF_STATUS` reads the
//! state of the FIFOs before the Replay Expanders and ignores writes; a write to
//! `RISCV_DEBUG_REG_INSTRN_BUF_CTRL0` that raises a "push" bit (4-6) of a thread whose
//! debug-control bit (0-2) is set pushes `INSTRN_BUF_CTRL1` to that thread. Both control
//! words read back.
//!
//! [Push Tensix instruction]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/PushTensixInstruction.md

use super::{thread, Access, Ctx, TileDevice, Wait};
use crate::error::FaultKind;
use crate::tensix::Hold;
use riscv_linker::{mmio, Risc};

/// The push windows.
#[derive(Debug, Default)]
pub(crate) struct Pushes;

/// The Tensix thread a push at `addr` by `risc` goes to.
fn target_thread(addr: u32, risc: Risc) -> usize {
    thread(risc)
        .unwrap_or_else(|| ((addr - mmio::INSTRN_BUF_BASE) / mmio::INSTRN_BUF_SIZE) as usize)
}

impl TileDevice for Pushes {
    fn name(&self) -> &'static str {
        "Tensix instruction pushes"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Err(a.write_only())
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        let t = target_thread(a.addr, a.risc) as u8;
        cx.tensix.push(t, word, a.risc, a.addr, a.time)
    }

    /// A slot in the thread's FIFO: BRISC's pushes enter before the MOP Expander, a TRISC's
    /// after it.
    fn waits_on(&self, a: &Access, write: bool) -> Wait {
        if !write {
            return Wait::Peers;
        }
        Wait::Tensix {
            thread: target_thread(a.addr, a.risc),
            hold: Hold::Push {
                after_mop: a.risc == Risc::Brisc,
            },
        }
    }
}

/// `INSTRN_BUF_CTRL0`, `INSTRN_BUF_CTRL1` and `INSTRN_BUF_STATUS` of the debug block.
#[derive(Debug, Default)]
pub(crate) struct DebugPush {
    ctrl: [u32; 2],
}

impl TileDevice for DebugPush {
    fn name(&self) -> &'static str {
        "debug-bus instruction push"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        match a.word() {
            mmio::INSTRN_BUF_STATUS => cx.tensix.status(a.time),
            w => Ok(self.ctrl[((w - mmio::INSTRN_BUF_CTRL0) / 4) as usize]),
        }
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        match a.word() {
            mmio::INSTRN_BUF_STATUS => {}
            mmio::INSTRN_BUF_CTRL0 => {
                let raised = word & !self.ctrl[0];
                if let Some(t) =
                    (0..3u8).find(|&t| word & (1 << t) != 0 && raised & (0x10 << t) != 0)
                {
                    cx.tensix.push(t, self.ctrl[1], a.risc, a.word(), a.time)?;
                }
                self.ctrl[0] = word;
            }
            _ => self.ctrl[1] = word,
        }
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}
