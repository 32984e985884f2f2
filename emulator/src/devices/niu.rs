//! The NIU register windows (`NOC0_REGS`, `NOC1_REGS`): with the NoC model on they are the
//! tile's NIUs ([`crate::noc::niu`]): reading one first applies every NoC event due by the
//! reading core's clock, writing `CMD_CTRL` issues a request. With the model off they are
//! plain storage (no NoC transaction is modelled).
//!
//! For the deadlock proof, NIU registers are timeless: the status counters move only when an
//! NIU event is applied (a response, an acknowledgement, a write or atomic arriving, a
//! request leaving), `CMD_CTRL` reads busy only until its buffer's `busy_until`, and the
//! command buffer and configuration words change only by stores. They are frozen when the
//! NIU is settled at the reading core's clock (no event queued, no request unsent, no buffer
//! busy); the NoC being idle (the detector's check) means no packet is on its way.

use super::storage::Storage;
use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::noc::{counter, niu_base, niu_map, CMD_BUFS};
use riscv_linker::{Arch, Risc};

/// The two NIU windows.
#[derive(Debug, Default)]
pub(crate) struct NiuWindows {
    /// The windows with the NoC model off.
    off: Storage,
}

impl TileDevice for NiuWindows {
    fn name(&self) -> &'static str {
        "NIUs"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        match cx.noc.as_mut() {
            Some(n) => {
                n.niu.apply_until(n.l1, a.time, n.code_end);
                Ok(n.niu.read(a.word(), a.time))
            }
            None => Ok(self.off.get(a.addr)),
        }
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        match cx.noc.as_mut() {
            Some(n) => n.niu.write(n.l1, a.word(), word, a.time),
            None => {
                self.off.set(a.addr, word);
                Ok(())
            }
        }
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }

    fn timeless(_: u32, _: Risc) -> bool {
        true
    }

    fn frozen(&self, a: &Access, cx: &Ctx<'_>) -> bool {
        cx.noc.as_ref().is_none_or(|n| n.niu.settled(a.time))
    }

    /// Settled: no event to apply. A read marks the NIU touched (the NoC is then simulated
    /// in epochs); the proof's reads are not the core's.
    fn peek(&mut self, a: &Access, cx: &mut Ctx<'_>) -> u32 {
        match cx.noc.as_mut() {
            Some(n) => {
                let touched = n.niu.touched;
                let v = n.niu.read(a.word(), a.time);
                n.niu.touched = touched;
                v
            }
            None => self.off.get(a.addr),
        }
    }

    fn register(&self, addr: u32, _: Risc, arch: Arch) -> String {
        register_name(addr, arch)
    }
}

/// The name of NIU register `addr`, for the deadlock report.
pub(crate) fn register_name(addr: u32, arch: Arch) -> String {
    let noc = (addr >= niu_base(1)) as u32;
    let off = addr - niu_base(noc);
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
        let status = niu_base(0) + m.status_base + 4 * counter::RD_RESP_RECEIVED;
        assert_eq!(
            register_name(status, arch),
            "NoC 0 status counter RD_RESP_RECEIVED"
        );
        let busy = niu_base(1) + m.cmd_buf_stride + m.cmd_ctrl;
        assert_eq!(
            register_name(busy, arch),
            "NoC 1 command buffer 1 CMD_CTRL (busy bit)"
        );
    }
}
