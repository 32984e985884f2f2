//! TDMA-RISC's command queue and the mover, as far as tt-metal's firmware uses them
//! (`TDMA-RISC.md`, `Mover.md` of the ISA documentation, Wormhole B0), and NCRISC's
//! instruction RAM, which only the mover writes (`BabyRISCV/InstructionRAM.md`).
//!
//! Modelled: the four parameter registers (`RISCV_TDMA_REG_XMOV_SRC_ADDR`, `_DST_ADDR`,
//! `_SIZE`, `_DIRECTION` at `+0x00..+0x0C`), a command with parameters written to
//! `RISCV_TDMA_REG_COMMAND_ADDR` (`+0x10`): the mover command (opcode `0x40`, what
//! tt-metal's `tdma_xmov` writes), the mover wait (`0x46`) and the NOP (`0x89`); and
//! `RISCV_TDMA_REG_STATUS` (`+0x14`): mover busy (bit 0), command queue empty (bit 3),
//! parameter queue empty (bit 5) and the queue's free capacity (bits 8-15).
//!
//! The move itself happens when its command is written ([`TdmaRisc::take_move`] hands it to
//! the tile's memory, which owns L1): its data is in place at once, and the status says the
//! mover is busy for as long as the ISA documentation's measured ideal rate takes (eight
//! 16-byte reads and writes every 11 cycles for a copy, one 16-byte write a cycle for a
//! zero fill, [`move_cycles`]); a second command waits for the first. So a core that polls
//! the status, as tt-metal's `wait_tdma_movers_done` does, waits as long as on the chip
//! without L1 port contention; a core that read the destination early would see the data
//! early (no firmware does).
//!
//! Refused, naming the command ([`FaultKind::Mover`]): compact commands (bit 31), the L1
//! write command (`0x66`), any other opcode, a move whose source or destination leaves L1 or
//! the documented ranges, or whose destination is the Tensix backend configuration (not
//! modelled). The packer and unpacker metadata registers of the window read back what was
//! stored, as before.

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use riscv_linker::{mmio, Risc};

/// `RISCV_TDMA_REG_COMMAND_ADDR`.
const COMMAND: u32 = mmio::TDMA_REGS_BASE + 0x10;
/// `RISCV_TDMA_REG_STATUS`.
const STATUS: u32 = mmio::TDMA_REGS_BASE + 0x14;
/// NCRISC's instruction RAM as the mover addresses it (`_TO_L0` modes): `0x40000..=0x4FFFF`.
const IRAM_VIEW: u32 = 0x4_0000;
/// Bytes of NCRISC's instruction RAM (Wormhole B0).
pub(crate) const IRAM_BYTES: usize = 16 * 1024;

/// The mover's direction field (`xmov_direction_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `XMOV_L0_TO_L1`: zero-fill L1.
    ZeroL1,
    /// `XMOV_L1_TO_L0`: copy from L1 to the instruction RAM (or the backend configuration).
    L1ToL0,
    /// `XMOV_L0_TO_L0`: zero-fill the instruction RAM (or the backend configuration).
    ZeroL0,
    /// `XMOV_L1_TO_L1`: copy within L1.
    L1ToL1,
}

/// One move, in bytes (the command's 16-byte units shifted as the mover does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    pub src: u32,
    pub dst: u32,
    pub count: u32,
    pub mode: Mode,
}

impl Move {
    /// The instruction RAM byte offset a `_TO_L0` move writes at, `None` when its writes are
    /// discarded (outside both views, `Mover.md`), or why it is refused.
    pub fn iram_offset(&self) -> Result<Option<u32>, String> {
        let d = self.dst;
        if d <= 0xFFFF {
            return Err(format!(
                "a move to the Tensix backend configuration (destination {d:#x}) is not modelled"
            ));
        }
        if !(IRAM_VIEW..=IRAM_VIEW + 0xFFFF).contains(&d) {
            return Ok(None);
        }
        let off = d - IRAM_VIEW;
        if off as u64 + self.count as u64 > IRAM_BYTES as u64 {
            return Err(format!(
                "{} bytes to NCRISC's instruction RAM at offset {off:#x}: past its {IRAM_BYTES} \
                 bytes",
                self.count
            ));
        }
        Ok(Some(off))
    }
}

/// Cycles the mover is busy with `count` bytes in `mode`: `Mover.md`'s measured ideal rates
/// (a copy: eight 128-bit reads and writes every 11 cycles; a zero fill: one 128-bit write a
/// cycle), at least one cycle.
pub(crate) fn move_cycles(count: u32, mode: Mode) -> u64 {
    let units = u64::from(count.div_ceil(16));
    match mode {
        Mode::L1ToL0 | Mode::L1ToL1 => (units * 11).div_ceil(8),
        Mode::ZeroL1 | Mode::ZeroL0 => units,
    }
    .max(1)
}

/// TDMA-RISC's command interface and the mover, with NCRISC's instruction RAM.
#[derive(Debug, Default)]
pub(crate) struct TdmaRisc {
    /// `CmdParams`.
    params: [u32; 4],
    /// Core time at which the mover is done with the last move.
    busy_until: u64,
    /// Core time at which the last command left the queue (started its move).
    queued_until: u64,
    /// The move of the command just written, for the tile's memory to carry out.
    pending: Option<Move>,
    /// NCRISC's instruction RAM (allocated at the first write to it).
    iram: Vec<u8>,
    /// The instruction RAM was written since [`TdmaRisc::take_iram_written`] last looked.
    iram_written: bool,
    /// The window's other registers: storage.
    other: super::storage::Storage,
}

impl TdmaRisc {
    /// The move of the command just written, if any (taken once).
    pub fn take_move(&mut self) -> Option<Move> {
        self.pending.take()
    }

    /// The instruction RAM's contents (`IRAM_BYTES`; zeros where never written).
    pub fn iram(&self) -> Vec<u8> {
        let mut v = self.iram.clone();
        v.resize(IRAM_BYTES, 0);
        v
    }

    /// The instruction RAM, writable (allocated on first use).
    pub fn iram_mut(&mut self) -> &mut [u8] {
        if self.iram.is_empty() {
            self.iram = vec![0; IRAM_BYTES];
        }
        self.iram_written = true;
        &mut self.iram
    }

    /// Whether the instruction RAM was written since the last call.
    pub fn take_iram_written(&mut self) -> bool {
        std::mem::take(&mut self.iram_written)
    }

    fn enqueue(&mut self, cmd: u32, time: u64) -> Result<(), FaultKind> {
        let refuse = |what: String| Err(FaultKind::Mover(format!("command {cmd:#010x}: {what}")));
        if cmd >> 31 != 0 {
            return refuse("compact commands (bit 31) are not modelled".into());
        }
        match cmd & 0xFF {
            0x40 => {
                let p = self.params;
                let mode = match p[3] & 3 {
                    0 => Mode::ZeroL1,
                    1 => Mode::L1ToL0,
                    2 => Mode::ZeroL0,
                    _ => Mode::L1ToL1,
                };
                let m = Move {
                    src: p[0] << 4,
                    dst: p[1] << 4,
                    count: (p[2] & 0xFFFF) << 4,
                    mode,
                };
                let start = time.max(self.busy_until);
                self.queued_until = start;
                self.busy_until = start + move_cycles(m.count, mode);
                self.pending = Some(m);
                Ok(())
            }
            0x46 | 0x89 => Ok(()),
            0x66 => refuse("the L1 write command (0x66) is not modelled".into()),
            op => refuse(format!(
                "opcode {op:#04x} is not a documented TDMA-RISC command"
            )),
        }
    }

    fn status(&self, time: u64) -> u32 {
        let busy = time < self.busy_until;
        let queued = time < self.queued_until;
        let mut s = u32::from(busy);
        if !queued {
            s |= 1 << 3 | 1 << 5 | 4 << 8;
        } else {
            s |= 3 << 8;
        }
        s
    }
}

impl TileDevice for TdmaRisc {
    fn name(&self) -> &'static str {
        "TDMA-RISC"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(match a.word() {
            w if w < COMMAND + 4 => 0,
            STATUS => self.status(a.time),
            w => self.other.get(w),
        })
    }

    fn write(&mut self, a: &Access, word: u32, _: &mut Ctx<'_>) -> Result<(), FaultKind> {
        match a.word() {
            COMMAND => self.enqueue(word, a.time)?,
            STATUS => {}
            w if w < COMMAND => self.params[((w - mmio::TDMA_REGS_BASE) / 4) as usize] = word,
            w => self.other.set(w, word),
        }
        Ok(())
    }

    fn merges(&self, addr: u32, size: u32) -> Result<bool, FaultKind> {
        if addr & !3 == COMMAND {
            return Err(FaultKind::Mover(format!(
                "a {size}-byte store to RISCV_TDMA_REG_COMMAND_ADDR: commands are whole words"
            )));
        }
        Ok(true)
    }

    /// The status changes as time passes; the other registers only by stores.
    fn timeless(addr: u32, _: Risc) -> bool {
        addr & !3 != STATUS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_the_mover_busy_at_the_documented_rate_and_zero_fills_at_one_unit_a_cycle() {
        // 4 KiB: 256 units, 8 every 11 cycles.
        assert_eq!(move_cycles(4096, Mode::L1ToL0), 352);
        assert_eq!(move_cycles(4096, Mode::ZeroL0), 256);
        assert_eq!(move_cycles(0, Mode::L1ToL1), 1);
    }

    #[test]
    fn the_firmware_s_move_is_queued_then_the_status_reports_busy_until_done() {
        let mut t = TdmaRisc {
            params: [0x8960 >> 4, 0x4000, 64, 1],
            ..TdmaRisc::default()
        };
        t.enqueue(0x40, 100).unwrap();
        let m = t.take_move().unwrap();
        assert_eq!(
            (m.src, m.dst, m.count, m.mode),
            (0x8960, 0x4_0000, 1024, Mode::L1ToL0)
        );
        assert_eq!(m.iram_offset(), Ok(Some(0)));
        assert_eq!(t.status(100) & 0b1001, 0b1001, "busy, queue empty");
        assert_eq!(t.status(100 + 88) & 0b1001, 0b1000, "idle after 64 units");
        // A second move waits for the first: queued, then busy.
        t.enqueue(0x40, 110).unwrap();
        assert_eq!(t.status(150) & 0b1001, 0b0001, "queued behind the first");
        assert_eq!(t.status(188 + 88) & 1, 0);
    }

    #[test]
    fn compact_commands_unknown_opcodes_and_the_backend_configuration_are_refused_by_name() {
        let mut t = TdmaRisc::default();
        let e = t.enqueue(0x8000_0040, 0).unwrap_err().to_string();
        assert!(e.contains("compact"), "{e}");
        let e = t.enqueue(0x12, 0).unwrap_err().to_string();
        assert!(e.contains("0x12"), "{e}");
        let m = Move {
            src: 0,
            dst: 0x100,
            count: 16,
            mode: Mode::L1ToL0,
        };
        assert!(m
            .iram_offset()
            .unwrap_err()
            .contains("backend configuration"));
        let m = Move {
            dst: 0x4_3FF0,
            count: 32,
            ..m
        };
        assert!(m.iram_offset().unwrap_err().contains("past its"));
        let m = Move { dst: 0x9_0000, ..m };
        assert_eq!(m.iram_offset(), Ok(None), "outside both views: discarded");
    }
}
