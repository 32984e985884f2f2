//! Which registers outside L1 and local RAM a loop proved stuck ([`super::proof`]) may
//! read, and their values read without side effects.
//!
//! A proof runs only at a quiet look ([`super`]): no core stored or observed anything
//! since the last look, every chip's NoC is idle, every NIU settled and every coprocessor
//! idle. Each register kind is allowed when the chip model says that, from such a state,
//! nothing but a store by a core can change it; a store ends the quiet run, and the
//! deadlock is only declared when every running core is stuck, so none will store:
//!
//! * **NIU registers** (both NoCs): the status counters move only when an NIU event is
//!   applied (a response, an acknowledgement, a write or atomic arriving, a request
//!   leaving), `CMD_CTRL` reads busy only until its buffer's `busy_until`, and the command
//!   buffer and configuration words change only by stores. Frozen when the NIU is settled
//!   at the reading core's clock (no event queued, no request unsent, no buffer busy); the
//!   NoC being idle (checked by the caller) means no packet is on its way to this tile.
//! * **Mailbox status**: whether the mailbox from a peer holds a value changes by the
//!   peer's push (a store) or this core's pop (a load with an effect, never allowed).
//!   Always frozen.
//! * **Tensix semaphores, GPRs, backend configuration**: changed by RISC stores and by the
//!   coprocessor's own instructions (`SEMPOST`/`SEMGET`, `SETDMAREG`, `WRCFG`...), which
//!   only run while it is active. Frozen when the coprocessor is idle (nothing in flight
//!   and no timed hold pending); read without moving its clock (a real read first
//!   simulates it up to the core's cycle, which a proof stepping ahead must not do).
//! * **Plain storage windows** (TDMA, PIC, overlay, the storage parts of the register
//!   file and configuration windows): only stores. Always frozen.
//!
//! Everything else is refused: clocks, the timestamper, the daisychain and the debug
//! registers (change with time or are not modelled as storage), FIFO pops, PCBufs and
//! TTSync (effects or waits), write-only windows. These are the reads
//! [`crate::chip::devices::read_is_timeless`] calls timeless, with the condition under
//! which each stays so.

use crate::chip::devices::{target, Device as Dev, Target};
use crate::chip::tile::Tile;
use crate::noc::niu;
use riscv_linker::noc::{counter, niu_base, niu_map, CMD_BUFS};
use riscv_linker::{mmio, Arch, Risc};

/// A register kind a stuck loop may poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frozen {
    /// An NIU register of NoC `noc`, at byte offset `off` of its window.
    Niu {
        noc: u32,
        off: u32,
    },
    /// The status word of the mailbox from peer `peer` (0 BRISC, 1..=3 TRISC0..2).
    MailboxStatus {
        peer: usize,
    },
    Semaphore(usize),
    Gpr {
        thread: usize,
        index: usize,
    },
    Config {
        off: u32,
    },
    /// A plain storage word above local RAM.
    Storage,
}

/// The kind of the register at `addr` read by `risc` on `t` at cycle `time`, when it
/// cannot change from now on but through a store (see the module's rules); `None` when it
/// can, or when reading it has an effect.
pub(crate) fn frozen(t: &Tile, addr: u32, risc: Risc, time: u64) -> Option<Frozen> {
    let idle = !t.mem.regs.dev.tensix.active();
    match kind(addr, risc)? {
        k @ Frozen::Niu { .. } => t
            .mem
            .niu
            .as_ref()
            .is_none_or(|n| n.settled(time))
            .then_some(k),
        k @ (Frozen::Semaphore(_) | Frozen::Gpr { .. } | Frozen::Config { .. }) => {
            idle.then_some(k)
        }
        k @ (Frozen::MailboxStatus { .. } | Frozen::Storage) => Some(k),
    }
}

/// The kind of the register at `addr` read by `risc`, among those a proof may read under
/// some condition ([`frozen`]).
pub(crate) fn kind(addr: u32, risc: Risc) -> Option<Frozen> {
    if niu::in_window(addr) {
        let noc = (addr >= niu_base(1)) as u32;
        return Some(Frozen::Niu {
            noc,
            off: addr - niu_base(noc),
        });
    }
    match target(addr, risc) {
        Target::Storage => Some(Frozen::Storage),
        Target::Device(Dev::Mailbox { peer }) if addr & mmio::MAILBOX_STATUS != 0 => {
            Some(Frozen::MailboxStatus { peer })
        }
        Target::Device(Dev::Semaphore(i)) => Some(Frozen::Semaphore(i)),
        Target::Device(Dev::Gpr { thread, index }) => Some(Frozen::Gpr { thread, index }),
        Target::Device(Dev::Config { off }) => Some(Frozen::Config { off }),
        _ => None,
    }
}

/// What a load of `size` bytes at `addr` of kind `kind` returns (zero-extended, as the
/// memory's load does), read without any effect on the tile.
pub(crate) fn peek(t: &mut Tile, kind: Frozen, addr: u32, size: u32, time: u64) -> u32 {
    let risc = t.mem.risc;
    let tensix = &t.mem.regs.dev.tensix;
    let word = match kind {
        Frozen::Niu { .. } => match t.mem.niu.as_mut() {
            // Settled: no event to apply. A read marks the NIU touched (the NoC is then
            // simulated in epochs); the proof's reads are not the core's.
            Some(n) => {
                let touched = n.touched;
                let v = n.read(addr & !3, time);
                n.touched = touched;
                v
            }
            None => t.mem.regs.read(addr, size, time, risc).unwrap_or(0),
        },
        Frozen::Semaphore(i) => tensix.sync.sems[i].value as u32,
        Frozen::Gpr { thread, index } => tensix.gprs[thread][index],
        Frozen::Config { off } => tensix.config.risc_read(off),
        // Pure reads: the mailbox status and plain storage.
        Frozen::MailboxStatus { .. } | Frozen::Storage => {
            t.mem.regs.read(addr, size, time, risc).unwrap_or(0)
        }
    };
    let mask = if size == 4 {
        u32::MAX
    } else {
        (1u32 << (size * 8)) - 1
    };
    (word >> ((addr & 3) * 8)) & mask
}

/// The name of the register at `addr` of kind `kind`, for the deadlock report.
pub(crate) fn name(kind: Frozen, addr: u32, arch: Arch) -> String {
    match kind {
        Frozen::Niu { noc, off } => {
            let m = niu_map(arch);
            let (buf, reg) = (off / m.cmd_buf_stride, off % m.cmd_buf_stride);
            let status = m.status_base..m.status_base + 4 * counter::COUNT;
            if off < CMD_BUFS * m.cmd_buf_stride && buf == 0 && status.contains(&reg) {
                format!(
                    "NoC {noc} status counter {}",
                    counter_name((reg - m.status_base) / 4)
                )
            } else if off < CMD_BUFS * m.cmd_buf_stride && reg == m.cmd_ctrl {
                format!("NoC {noc} command buffer {buf} CMD_CTRL (busy bit)")
            } else {
                format!("NoC {noc} NIU register +{off:#x}")
            }
        }
        Frozen::MailboxStatus { peer } => format!(
            "status of the mailbox from {}",
            ["BRISC", "TRISC0", "TRISC1", "TRISC2"][peer.min(3)]
        ),
        Frozen::Semaphore(i) => format!("Tensix semaphore {i}"),
        Frozen::Gpr { thread, index } => format!("Tensix GPR {index} of thread {thread}"),
        Frozen::Config { off } => format!("Tensix configuration +{off:#x}"),
        Frozen::Storage => crate::map::region_name(addr).to_string(),
    }
}

fn counter_name(index: u32) -> String {
    const NAMES: [&str; 12] = [
        "ATOMIC_RESP_RECEIVED",
        "WR_ACK_RECEIVED",
        "RD_RESP_RECEIVED",
        "RD_DATA_WORD_RECEIVED",
        "CMD_ACCEPTED",
        "RD_REQ_SENT",
        "NONPOSTED_ATOMIC_SENT",
        "POSTED_ATOMIC_SENT",
        "NONPOSTED_WR_DATA_WORD_SENT",
        "POSTED_WR_DATA_WORD_SENT",
        "NONPOSTED_WR_REQ_SENT",
        "POSTED_WR_REQ_SENT",
    ];
    match index {
        i if (i as usize) < NAMES.len() => NAMES[i as usize].to_string(),
        0x10..=0x1F => format!("REQS_OUTSTANDING_ID({})", index - 0x10),
        0x20..=0x2F => format!("WRITE_REQS_OUTGOING_ID({})", index - 0x20),
        i => format!("{i:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_niu_registers_are_named_by_kind() {
        let arch = Arch::WormholeB0;
        let m = niu_map(arch);
        let status = Frozen::Niu {
            noc: 0,
            off: m.status_base + 4 * counter::RD_RESP_RECEIVED,
        };
        assert_eq!(
            name(status, 0, arch),
            "NoC 0 status counter RD_RESP_RECEIVED"
        );
        let busy = Frozen::Niu {
            noc: 1,
            off: m.cmd_buf_stride + m.cmd_ctrl,
        };
        assert_eq!(
            name(busy, 0, arch),
            "NoC 1 command buffer 1 CMD_CTRL (busy bit)"
        );
    }
}
