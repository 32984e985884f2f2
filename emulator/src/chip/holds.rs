//! When the tile held each core, and on what: the stretches a core spent blocked on an
//! access the tile moves it past (a push into a full Tensix instruction FIFO, a TTSync
//! read, an empty mailbox or a full PCBuf), stamped on the tile's wall clock, so the host's
//! analysis can count them as waits instead of busy time.
//!
//! A stretch is one contiguous run of held cycles with one cause (a [`crate::lines`] cause
//! index: `tensix-fifo: <wait>`, `ttsync: <wait>`, `fifo-wait`); the next held cycles join
//! it when they follow it directly with the same cause. Memory is bounded: past
//! [`crate::time::stretch::MAX_SPANS`] stretches per core and run, held cycles are only counted
//! ([`HartHolds::lost_cycles`]). The log itself is [`crate::time::stretch`]'s.

use riscv_linker::{NocCoord, Risc};

pub use crate::time::stretch::HeldSpan;
pub(crate) use crate::time::stretch::HoldLog;

/// One core's held stretches in the last run ([`crate::Device::holds`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HartHolds {
    /// The core's chip.
    pub chip: u32,
    /// The core's tile.
    pub tile: NocCoord,
    /// Which of the tile's cores.
    pub risc: Risc,
    /// Its stretches in time order, on the tile's wall clock.
    pub spans: Vec<HeldSpan>,
    /// Held cycles past the cap of stretches (65,536 a core and run): counted, not placed.
    pub lost_cycles: u64,
    /// A TRISC's Tensix thread: when its wait gate held the instruction at its head, and on
    /// what (`tensix-fifo: <wait>` causes), in time order on the wall clock. Empty for
    /// BRISC and NCRISC.
    pub gate: Vec<HeldSpan>,
    /// Gate cycles past the cap of stretches: counted, not placed.
    pub gate_lost_cycles: u64,
    /// A TRISC's Tensix thread: each `SEMPOST` it executed, (wall clock, semaphore), in
    /// time order.
    pub posts: Vec<(u64, u8)>,
    /// A TRISC's Tensix thread: each `SEMGET` it executed, likewise.
    pub gets: Vec<(u64, u8)>,
    /// Posts and gets past the cap (65,536 each a thread and run): counted, not placed.
    pub lost_posts: u64,
}
