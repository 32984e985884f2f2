//! The PCBufs ([PCBufs], BRISC to TRISC i, sixteen deep): BRISC pushes with a store anywhere
//! in `PC_BUF_BASE` / `PC1_BUF_BASE` / `PC2_BUF_BASE` (waits while full); TRISC i pops with
//! a load of `PC_BUF_BASE` (waits while empty, unless `OverrideEn` is set in
//! `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`, which then returns `OverrideValue`); TRISC
//! stores there are discarded. A BRISC load returns 0 once the FIFO is empty, TRISC i is
//! waiting on a PCBuf load and Tensix thread i has nothing in flight (or at once with
//! `OverrideEn` and `OverrideBusy`), and waits otherwise.
//!
//! The override register (in the debug block, storage that reads back) is this device's
//! too; TTSync reads it as well ([`super::Ctx::pc_buf_override`]).
//!
//! [PCBufs]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/PCBufs.md

use super::{thread, Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Risc};
use std::collections::VecDeque;

/// Depth of one PCBuf.
pub(crate) const PC_BUF_DEPTH: usize = 16;

/// The three PCBufs and their override register.
#[derive(Debug, Default)]
pub(crate) struct PcBufs {
    bufs: [VecDeque<u32>; 3],
    /// TRISC i has a load of its PCBuf waiting on the empty FIFO.
    waiting: [bool; 3],
    /// `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`.
    pub(crate) override_reg: u32,
}

/// `OverrideEn`, `OverrideBusy`, `OverrideValue` of PCBuf `i` in the override register.
pub(crate) fn override_bits(reg: u32, i: usize) -> (bool, bool, u32) {
    let f = reg >> (10 * i);
    (f & 1 != 0, f & 2 != 0, (f >> 2) & 0xFF)
}

impl PcBufs {
    /// TRISC `i`'s PCBuf as the debug daisychain shows it: its head (`None`: empty) and
    /// whether it is full.
    pub fn state(&self, i: usize) -> (Option<u32>, bool) {
        let b = &self.bufs[i];
        (b.front().copied(), b.len() >= PC_BUF_DEPTH)
    }
}

/// BRISC's PCBuf of a window.
fn brisc_buf(addr: u32) -> usize {
    ((addr - mmio::PC_BUF_BASE) / mmio::PC_BUF_SIZE) as usize
}

impl TileDevice for PcBufs {
    fn name(&self) -> &'static str {
        "PCBufs"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        if a.word() == mmio::TRISC_PC_BUF_OVERRIDE {
            return Ok(self.override_reg);
        }
        if a.risc == Risc::Brisc {
            let i = brisc_buf(a.addr);
            let (en, busy, _) = override_bits(self.override_reg, i);
            return if (en && busy)
                || (self.bufs[i].is_empty()
                    && self.waiting[i]
                    && cx.tensix.thread_done(i, a.time)?)
            {
                Ok(0)
            } else {
                Err(a.blocked(false))
            };
        }
        let i = thread(a.risc).expect("a TRISC's PCBuf");
        let (en, _, value) = override_bits(self.override_reg, i);
        match self.bufs[i].pop_front() {
            Some(v) => {
                self.waiting[i] = false;
                Ok(v)
            }
            None if en => {
                self.waiting[i] = false;
                Ok(value)
            }
            None => {
                self.waiting[i] = true;
                Err(a.blocked(false))
            }
        }
    }

    fn write(&mut self, a: &Access, word: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        if a.word() == mmio::TRISC_PC_BUF_OVERRIDE {
            self.override_reg = word;
        } else if a.risc == Risc::Brisc {
            let b = &mut self.bufs[brisc_buf(a.addr)];
            if b.len() >= PC_BUF_DEPTH {
                return Err(a.blocked(true));
            }
            b.push_back(word);
        }
        Ok(())
    }

    /// The override register merges; the FIFOs take the stored bytes.
    fn merges(&self, addr: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(addr & !3 == mmio::TRISC_PC_BUF_OVERRIDE)
    }
}
