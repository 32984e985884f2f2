//! The mailboxes ([Mailboxes], `TENSIX_MAILBOX0..3_BASE`): sixteen FIFOs of 32-bit values,
//! one from each of BRISC and the three TRISCs to each. Window `i` names core `i` (BRISC,
//! TRISC0, TRISC1, TRISC2): a store by core `c` pushes onto the mailbox from `c` to `i`, a
//! load by `c` pops the mailbox from `i` to `c`, and a load at an address with bit 2 set
//! (`TENSIX_MAILBOX{i}_BASE + 4`) returns 1 if that mailbox holds a value, else 0, without
//! popping. A mailbox holds at most four values, and the four mailboxes a core writes to
//! hold at most four values between them: a store that would exceed either waits, and so
//! does a pop of an empty mailbox.
//!
//! [Mailboxes]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/Mailboxes.md

use super::{thread, Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Arch, Risc};
use std::collections::VecDeque;

/// Depth of one mailbox, and what the four mailboxes one core writes to hold together.
pub(crate) const MAILBOX_DEPTH: usize = 4;

/// `mailboxes[from][to]`, cores numbered BRISC, TRISC0, TRISC1, TRISC2.
#[derive(Debug, Default)]
pub(crate) struct Mailboxes([[VecDeque<u32>; 4]; 4]);

/// Index of a core among the mailbox peers (BRISC, TRISC0, TRISC1, TRISC2).
fn peer(risc: Risc) -> usize {
    match risc {
        Risc::Brisc => 0,
        t => thread(t).expect("a mailbox peer") + 1,
    }
}

/// The peer the window of `addr` names.
fn window(addr: u32) -> usize {
    ((addr - mmio::MAILBOX_BASE) / mmio::MAILBOX_STRIDE) as usize
}

impl TileDevice for Mailboxes {
    fn name(&self) -> &'static str {
        "mailboxes"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        let mb = &mut self.0[window(a.addr)][peer(a.risc)];
        if a.addr & mmio::MAILBOX_STATUS != 0 {
            Ok(!mb.is_empty() as u32)
        } else {
            mb.pop_front().ok_or(a.blocked(false))
        }
    }

    fn write(&mut self, a: &Access, word: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        let (me, to) = (peer(a.risc), window(a.addr));
        let held: usize = self.0[me].iter().map(VecDeque::len).sum();
        if self.0[me][to].len() >= MAILBOX_DEPTH || held >= MAILBOX_DEPTH {
            return Err(a.blocked(true));
        }
        self.0[me][to].push_back(word);
        Ok(())
    }

    /// The status word: whether the mailbox from a peer holds a value changes by the peer's
    /// push (a store) or this core's pop (a load with an effect, never timeless).
    fn timeless(addr: u32, _: Risc) -> bool {
        addr & mmio::MAILBOX_STATUS != 0
    }

    fn register(&self, addr: u32, _: Risc, _: Arch) -> String {
        format!(
            "status of the mailbox from {}",
            ["BRISC", "TRISC0", "TRISC1", "TRISC2"][window(addr).min(3)]
        )
    }
}
