//! Memory-mapped registers and fixed address windows seen by the cores of a tile.
//!
//! Addresses from the Wormhole B0 memory map of the baby RISC-V cores
//! (<https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/README.md#memory-map>);
//! tt-metal's Blackhole headers use the same addresses. MMIO must be read with volatile
//! 32-bit loads.

/// Private local RAM of each core (size per arch and RISC: [`crate::Arch::local_ram_size`]).
pub const LOCAL_RAM_BASE: u32 = 0xFFB0_0000;

/// The RISC-V debug register block.
pub const DEBUG_REGS_BASE: u32 = 0xFFB1_2000;
/// Size of the debug register block modelled here.
pub const DEBUG_REGS_SIZE: u32 = 0x1000;

/// The performance counter banks' value registers (`RISCV_DEBUG_REG_PERF_CNT_OUT_H_*`,
/// tt-metal's `tensix.h`): the selected counter's low 32 bits, by the bank's group name
/// (`fpu`, `instrn`, `unpack`, `pack`, `l1`). A counted zone reads its bank's at open and
/// close; `OUT_L` (the cycles counted) is the word before.
pub const PERF_CNT_OUT_H: [(&str, u32); 5] = [
    ("fpu", 0xFFB1_2124),
    ("instrn", 0xFFB1_2104),
    ("unpack", 0xFFB1_210C),
    ("pack", 0xFFB1_2114),
    ("l1", 0xFFB1_211C),
];

/// `RISCV_DEBUG_REG_SOFT_RESET_0`: bits 11-14 hold BRISC and TRISC0-2 in reset, bit 18 NCRISC.
pub const SOFT_RESET_0: u32 = 0xFFB1_21B0;

/// Wall clock, low 32 bits. Reading it latches the high word into [`WALL_CLOCK_H`].
pub const WALL_CLOCK_L: u32 = 0xFFB1_21F0;
/// The live (unlatched) high word of the wall clock.
pub const WALL_CLOCK_H_LIVE: u32 = 0xFFB1_21F4;
/// The high word latched by the last read of [`WALL_CLOCK_L`] (by any core of the tile).
pub const WALL_CLOCK_H: u32 = 0xFFB1_21F8;

/// `RISCV_DEBUG_REG_TIMESTAMP`: a 32-bit store appends an event to the tile's timestamp
/// stream, or flushes a partly filled 16-byte unit; the low three bits choose which
/// ([`timestamp`]), the other 29 bits are passed through. Reads return 0. The stream is
/// shared by the tile's five cores. (tt-isa-documentation,
/// `WormholeB0/TensixTile/DebugTimestamper.md`.)
pub const TIMESTAMP: u32 = 0xFFB1_21FC;
/// `RISCV_DEBUG_REG_TIMESTAMP+4`, the timestamper's control register (`cntl_raw`): bit 0
/// enables buffer 0, bit 1 buffer 1, bit 31 resets the streams every cycle while it is
/// set (pulse it high, then low). Reads back the last value written (3 at reset).
pub const TIMESTAMP_CNTL: u32 = 0xFFB1_2200;
/// `RISCV_DEBUG_REG_TIMESTAMP_STATUS`: the sticky full and overflow bits of both buffers,
/// the write-accumulation buffer's fill by event size, and buffer 0's position (field
/// layout in [`timestamp`]). Writing a full or overflow bit back clears it; clearing a
/// full bit also rewinds that buffer to its start. Buffer 1's position cannot be read.
pub const TIMESTAMP_STATUS: u32 = 0xFFB1_2204;
/// `RISCV_DEBUG_REG_TIMESTAMP+12`: buffer 0's first 16-byte unit (L1 byte address / 16).
pub const TIMESTAMP_BUF0_START: u32 = 0xFFB1_2208;
/// `RISCV_DEBUG_REG_TIMESTAMP+16`: buffer 0's last 16-byte unit (inclusive, address / 16).
pub const TIMESTAMP_BUF0_END: u32 = 0xFFB1_220C;
/// `RISCV_DEBUG_REG_TIMESTAMP+20`: buffer 1's first 16-byte unit (address / 16).
pub const TIMESTAMP_BUF1_START: u32 = 0xFFB1_2210;
/// `RISCV_DEBUG_REG_TIMESTAMP+24`: buffer 1's last 16-byte unit (inclusive, address / 16).
pub const TIMESTAMP_BUF1_END: u32 = 0xFFB1_2214;

pub mod timestamp {
    //! Values and fields of the debug timestamper's registers ([`super::TIMESTAMP`] and the registers
    //! after it), with the names of `DebugTimestamper.md`'s functional specification.
    //!
    //! Events, by the low three bits of the value stored to [`super::TIMESTAMP`] (`header`; the
    //! counter is the tile's 64-bit wall clock at the store):
    //!
    //! | command | L1 words appended |
    //! |---|---|
    //! | [`APPEND_128B`] | `header, counter_lo, counter_hi, 0` |
    //! | [`APPEND_96B`] | `header, counter_lo, counter_hi` |
    //! | [`APPEND_64B`] | `header, counter_lo` |
    //! | [`APPEND_32B`] | `(header & 0xFFFF) \| ((counter & 0x1F_FFE0) << 11)` |
    //! | [`FLUSH_64B`], [`FLUSH_96B`] | zeros up to the end of the 16-byte unit, which is written |
    //!
    //! Words gather in a 16-byte write-accumulation unit written to L1 when full (or flushed);
    //! sizes must not be mixed within a unit, and low bits 5 and 6 are no command: both are
    //! undefined behaviour.

    /// Low three bits of a 32-bit event.
    pub const APPEND_32B: u32 = 2;
    /// Low three bits of a 64-bit event.
    pub const APPEND_64B: u32 = 1;
    /// Low three bits of a 96-bit event.
    pub const APPEND_96B: u32 = 4;
    /// Low three bits of a 128-bit event (needs no accumulation: one event, one unit).
    pub const APPEND_128B: u32 = 0;
    /// Pads a unit holding 64-bit events with zeros and writes it out.
    pub const FLUSH_64B: u32 = 3;
    /// Pads a unit holding 96-bit events with zeros and writes it out.
    pub const FLUSH_96B: u32 = 7;
    /// The bits of a stored value that choose the command.
    pub const CMD_MASK: u32 = 7;
    /// Bytes in one unit of the stream; buffer start, end and position count these.
    pub const UNIT_BYTES: u32 = 16;

    /// [`super::TIMESTAMP_CNTL`]: buffer 0 may take units.
    pub const CNTL_BUF0_VALID: u32 = 1 << 0;
    /// [`super::TIMESTAMP_CNTL`]: buffer 1 may take units.
    pub const CNTL_BUF1_VALID: u32 = 1 << 1;
    /// [`super::TIMESTAMP_CNTL`]: while set, every cycle clears both buffers' full and
    /// overflow bits and empties the write-accumulation unit (positions are kept).
    pub const CNTL_RESET_STREAMS: u32 = 1 << 31;

    /// [`super::TIMESTAMP_STATUS`] `bufs0_full` (sticky; write 1 to clear and rewind).
    pub const STATUS_BUF0_FULL: u32 = 1 << 0;
    /// `bufs1_full` (sticky; write 1 to clear and rewind).
    pub const STATUS_BUF1_FULL: u32 = 1 << 1;
    /// `bufs0_overflow`: a unit found no valid buffer with space (sticky; write 1 to clear).
    pub const STATUS_BUF0_OVERFLOW: u32 = 1 << 4;
    /// `bufs1_overflow` (sticky; write 1 to clear).
    pub const STATUS_BUF1_OVERFLOW: u32 = 1 << 5;
    /// `accum_pos_64b` (1 bit): 64-bit events in the unit being gathered.
    pub const STATUS_ACCUM_POS_64B_SHIFT: u32 = 8;
    /// `accum_pos_32b` (2 bits): 32-bit events in the unit being gathered.
    pub const STATUS_ACCUM_POS_32B_SHIFT: u32 = 9;
    /// `accum_pos_96b` (2 bits): 96-bit events since the last unit boundary shared by
    /// 96-bit events (4 of them fill 3 units): `(4 - words in the unit) & 3`.
    pub const STATUS_ACCUM_POS_96B_SHIFT: u32 = 11;
    /// `bufs0_position` (18 bits, the top of the register): units written to buffer 0
    /// since it was last rewound.
    pub const STATUS_BUF0_POSITION_SHIFT: u32 = 14;
    /// Mask of `bufs0_position` once shifted down.
    pub const STATUS_BUF0_POSITION_MASK: u32 = (1 << 18) - 1;

    /// Buffer 0's position in a [`super::TIMESTAMP_STATUS`] value.
    pub const fn buf0_position(status: u32) -> u32 {
        (status >> STATUS_BUF0_POSITION_SHIFT) & STATUS_BUF0_POSITION_MASK
    }
}

/// NoC 0 register window.
pub const NOC0_REGS_BASE: u32 = 0xFFB2_0000;
/// NoC 1 register window.
pub const NOC1_REGS_BASE: u32 = 0xFFB3_0000;
/// Size of one NoC register window.
pub const NOC_REGS_SIZE: u32 = 0x1_0000;

/// `TENSIX_MAILBOX0_BASE`: the first of the four mailbox windows (one per peer among
/// BRISC, TRISC0, TRISC1, TRISC2; which mailbox an address reaches depends on the core and
/// on load or store, see the emulator's `devices` module).
pub const MAILBOX_BASE: u32 = 0xFFEC_0000;
/// Size of all four mailbox windows together.
pub const MAILBOX_SIZE: u32 = 0x4000;
/// Distance between two mailbox windows (`TENSIX_MAILBOX{i}_BASE = MAILBOX_BASE + i * MAILBOX_STRIDE`).
pub const MAILBOX_STRIDE: u32 = 0x1000;
/// A load at a mailbox address with this bit set asks whether the mailbox holds a value
/// (1) or not (0) instead of popping it.
pub const MAILBOX_STATUS: u32 = 4;

/// `TENSIX_MAILBOX{i}_BASE`: `i` = 0 BRISC, 1 TRISC0, 2 TRISC1, 3 TRISC2.
pub const fn mailbox(i: u32) -> u32 {
    MAILBOX_BASE + i * MAILBOX_STRIDE
}

/// `RISCV_TDMA_REGS_START_ADDR`: TDMA-RISC configuration registers and command interface.
pub const TDMA_REGS_BASE: u32 = 0xFFB1_1000;
/// Size of the TDMA-RISC window.
pub const TDMA_REGS_SIZE: u32 = 0x1000;
/// PIC configuration and status registers.
pub const PIC_REGS_BASE: u32 = 0xFFB1_3000;
/// Size of the PIC window.
pub const PIC_REGS_SIZE: u32 = 0x1000;
/// `NOC_OVERLAY_START_ADDR`: NoC overlay (stream) configuration registers and commands.
pub const NOC_OVERLAY_BASE: u32 = 0xFFB4_0000;
/// Size of the NoC overlay window.
pub const NOC_OVERLAY_SIZE: u32 = 0x4_0000;
/// `TENSIX_MOP_CFG_BASE`: the MOP expander configuration of the TRISC's Tensix thread
/// (nine write-only words, TRISCs only).
pub const MOP_CFG_BASE: u32 = 0xFFB8_0000;
/// Size of the MOP expander configuration (`uint32_t[9]`).
pub const MOP_CFG_SIZE: u32 = 0x24;

/// `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`: `OverrideEn`, `OverrideBusy` and an 8-bit
/// `OverrideValue` per PCBuf, at bits `10 * i`, `10 * i + 1` and `10 * i + 2`.
pub const TRISC_PC_BUF_OVERRIDE: u32 = 0xFFB1_2090;
/// `RISCV_DEBUG_REG_INSTRN_BUF_CTRL0`: lets the debug bus push Tensix instructions.
pub const INSTRN_BUF_CTRL0: u32 = 0xFFB1_20A0;
/// `RISCV_DEBUG_REG_INSTRN_BUF_CTRL1`: the instruction a debug-bus push pushes.
pub const INSTRN_BUF_CTRL1: u32 = 0xFFB1_20A4;
/// `RISCV_DEBUG_REG_DBG_L1_MEM_REG0`: the debug daisychain's first (or only) L1 slot, as
/// an L1 byte address / 16 (low 1 MiB). See [`daisychain`].
pub const DBG_L1_MEM_REG0: u32 = 0xFFB1_2048;
/// `RISCV_DEBUG_REG_DBG_L1_MEM_REG1`: first slot + sample count (sampling mode).
pub const DBG_L1_MEM_REG1: u32 = 0xFFB1_204C;
/// `RISCV_DEBUG_REG_DBG_L1_MEM_REG2`: `WriteMode` (bits 0-3), `SamplingInterval` (4-11,
/// `N - 1`), `WriteTrigger` (12).
pub const DBG_L1_MEM_REG2: u32 = 0xFFB1_2050;
/// `RISCV_DEBUG_REG_DBG_BUS_CNTL_REG`: `SignalSel` (bits 0-15), `DaisySel` (16-23),
/// `Read32Sel` (25-26), `Enabled` (29).
pub const DBG_BUS_CNTL: u32 = 0xFFB1_2054;
/// `RISCV_DEBUG_REG_DBG_RD_DATA`: the 32 bits of the selected 128 that `Read32Sel` picks.
pub const DBG_RD_DATA: u32 = 0xFFB1_205C;

pub mod daisychain {
    //! Fields and values of the debug daisychain's registers ([`super::DBG_BUS_CNTL`],
    //! [`super::DBG_L1_MEM_REG2`]), with the names of tt-isa-documentation's
    //! `WormholeB0/TensixTile/DebugDaisychain.md` (register offsets as in tt-exalens).
    use crate::Risc;

    /// `DBG_BUS_CNTL_REG.Enabled`.
    pub const ENABLED: u32 = 1 << 29;
    /// `DBG_BUS_CNTL_REG.DaisySel` shift.
    pub const DAISY_SEL_SHIFT: u32 = 16;
    /// `DBG_BUS_CNTL_REG.Read32Sel` shift (2 bits).
    pub const READ32_SEL_SHIFT: u32 = 25;
    /// `DaisySel` of the RISC-V execution state groups.
    pub const DAISY_RISCV: u32 = 7;
    /// `SignalSel` of the self-test pattern (any valid `DaisySel`).
    pub const SIGNAL_SELF_TEST: u32 = 255;
    /// `DBG_L1_MEM_REG2.WriteMode`: prepare (latch `REG0` as the next slot).
    pub const MODE_PREPARE: u32 = 0xF;
    /// `WriteMode`: each trigger writes the same slot.
    pub const MODE_SAME: u32 = 0;
    /// `WriteMode`: each trigger writes the next slot.
    pub const MODE_NEXT: u32 = 1;
    /// `WriteMode`: sample every `N` cycles, `c` slots.
    pub const MODE_SAMPLE: u32 = 4;
    /// `DBG_L1_MEM_REG2.SamplingInterval` shift (8 bits, `N - 1`).
    pub const INTERVAL_SHIFT: u32 = 4;
    /// `DBG_L1_MEM_REG2.WriteTrigger`.
    pub const TRIGGER: u32 = 1 << 12;
    /// Samples land in the low 1 MiB of L1.
    pub const L1_LIMIT: u32 = 1 << 20;
    /// Bytes of one sample (128 bits).
    pub const SAMPLE_BYTES: u32 = 16;
    /// Sampling intervals software should use (`N = 1` may take one sample too many).
    pub const INTERVALS: core::ops::RangeInclusive<u32> = 2..=256;

    /// Whether `addr` is one of the daisychain's registers (what a host reaches of it through
    /// a tile's NoC window).
    pub const fn is_register(addr: u32) -> bool {
        matches!(
            addr,
            super::DBG_BUS_CNTL
                | super::DBG_L1_MEM_REG0
                | super::DBG_L1_MEM_REG1
                | super::DBG_L1_MEM_REG2
                | super::DBG_RD_DATA
        )
    }

    /// `SignalSel` of group A (pc about to retire, the load/store unit's request, the
    /// frontend's fetch pc) of `risc`.
    pub const fn group_a(risc: Risc) -> u32 {
        match risc {
            Risc::Brisc => 10,
            Risc::Trisc0 => 12,
            Risc::Trisc1 => 14,
            Risc::Trisc2 => 16,
            Risc::Ncrisc => 24,
        }
    }

    /// `SignalSel` of group D (PCBuf, MOP expander, coprocessor and wait bits) of a TRISC.
    pub const fn group_d(risc: Risc) -> Option<u32> {
        match risc {
            Risc::Trisc0 => Some(19),
            Risc::Trisc1 => Some(21),
            Risc::Trisc2 => Some(23),
            _ => None,
        }
    }

    /// Group A, bit 31 of word 0: the instruction about to retire may leave the load/store
    /// unit (the pc in bits 0-30 is then valid).
    pub const A_RETIRING: u32 = 1 << 31;
    /// Group A, word 1 bit 30 (bit 62): the load/store unit is trying to emit a read.
    pub const A_LSU_READ: u32 = 1 << 30;
    /// Group A, word 1 bit 31 (bit 63): the load/store unit is trying to emit a write.
    pub const A_LSU_WRITE: u32 = 1 << 31;
    /// Group D, word 0 bit 30: the TRISC waits on a TTSync read.
    pub const D_TTSYNC_WAIT: u32 = 1 << 30;
    /// Group D, word 0 bit 31: the TRISC waits on a read from its PCBuf.
    pub const D_PCBUF_WAIT: u32 = 1 << 31;
    /// Group D, word 0 bit 26: the coprocessor has in-flight instructions from the thread.
    pub const D_COPROCESSOR_BUSY: u32 = 1 << 26;
    /// Group D, word 0 bit 23: the TRISC's PCBuf FIFO is empty.
    pub const D_PCBUF_EMPTY: u32 = 1 << 23;
    /// Group D, word 0 bit 24: the TRISC's PCBuf FIFO is full.
    pub const D_PCBUF_FULL: u32 = 1 << 24;
    /// Group D, word 0 bit 25: a `MOP` is queued before the thread's MOP Expander or being
    /// expanded (TTSync's `MOPExpanderDoneCheck` signal).
    pub const D_MOP_BUSY: u32 = 1 << 25;
    /// Group D, word 0 bit 28: RISCV B waits on a read from the TRISC's PCBuf.
    pub const D_BRISC_PCBUF_WAIT: u32 = 1 << 28;
    /// Group D, word 2 bit 20 (bit 84): the MOP Expander expands a template 0 `MOP`.
    pub const D2_TEMPLATE0: u32 = 1 << 20;
    /// Group D, word 2 bit 21 (bit 85): ... a template 1 `MOP`.
    pub const D2_TEMPLATE1: u32 = 1 << 21;
    /// Group D, bits 86-117: the `MOP`/`MOP_CFG` being processed, else the head of the FIFO
    /// before the MOP Expander (its low 10 bits in word 2 from bit 22, the rest in word 3).
    pub const D_MOP_WORD_BIT: u32 = 86;
    /// Group D, word 3 bit 22 (bit 118): the MOP Expander processes a `MOP`/`MOP_CFG` or
    /// the FIFO before it is not empty.
    pub const D3_FIFO_BUSY: u32 = 1 << 22;
    /// Group D, word 3 bit 29 (bit 125): the FIFO before the MOP Expander is full (a push
    /// from the RISC waits).
    pub const D3_FIFO_FULL: u32 = 1 << 29;
}

/// `RISCV_DEBUG_REG_INSTRN_BUF_STATUS` (read-only): bits 0-2 "FIFO before thread i's replay
/// expander not full", bits 4-6 "that FIFO empty".
pub const INSTRN_BUF_STATUS: u32 = 0xFFB1_20A8;

/// `REGFILE_BASE`: Tensix GPRs (`GPRs[3][64]`): BRISC sees all three threads' 64 GPRs one
/// after the other, TRISC i sees its own thread's 64.
pub const REGFILE_BASE: u32 = 0xFFE0_0000;
/// Size of the GPR window.
pub const REGFILE_SIZE: u32 = 0x1000;
/// Bytes of one Tensix thread's GPRs.
pub const GPRS_PER_THREAD_BYTES: u32 = 64 * 4;

/// `INSTRN_BUF_BASE`: a store pushes a Tensix instruction (BRISC: to thread T0, TRISC i: to
/// thread Ti). The `.ttinsn` instruction is a store here.
pub const INSTRN_BUF_BASE: u32 = 0xFFE4_0000;
/// `INSTRN1_BUF_BASE`: BRISC pushes to Tensix thread T1.
pub const INSTRN1_BUF_BASE: u32 = 0xFFE5_0000;
/// `INSTRN2_BUF_BASE`: BRISC pushes to Tensix thread T2.
pub const INSTRN2_BUF_BASE: u32 = 0xFFE6_0000;
/// Size of one instruction-push window.
pub const INSTRN_BUF_SIZE: u32 = 0x1_0000;

/// `PC_BUF_BASE`: BRISC's side of PCBuf 0; for TRISC i its side of PCBuf i (first word),
/// TTSync (up to 0x1F) and the Tensix semaphores (from 0x20).
pub const PC_BUF_BASE: u32 = 0xFFE8_0000;
/// `PC1_BUF_BASE`: BRISC's side of PCBuf 1 (to TRISC1).
pub const PC1_BUF_BASE: u32 = 0xFFE9_0000;
/// `PC2_BUF_BASE`: BRISC's side of PCBuf 2 (to TRISC2).
pub const PC2_BUF_BASE: u32 = 0xFFEA_0000;
/// Size of one PCBuf window.
pub const PC_BUF_SIZE: u32 = 0x1_0000;
/// TTSync `CoprocessorDoneCheck` (TRISCs).
pub const TTSYNC_COPROCESSOR_DONE: u32 = PC_BUF_BASE + 4;
/// TTSync `MOPExpanderDoneCheck` (TRISCs).
pub const TTSYNC_MOP_EXPANDER_DONE: u32 = PC_BUF_BASE + 8;
/// `pc_buf_base[PC_BUF_SEMAPHORE_BASE + i]`: Tensix semaphore `i` (TRISCs; a load reads its
/// value, a store of an odd value decrements it, of an even value increments it).
pub const SEMAPHORE_BASE: u32 = PC_BUF_BASE + 0x20;
/// Number of Tensix semaphores.
pub const SEMAPHORES: u32 = 8;

/// `TENSIX_CFG_BASE`: Tensix backend configuration (BRISC and TRISCs).
pub const TENSIX_CFG_BASE: u32 = 0xFFEF_0000;
/// Size of the backend configuration window.
pub const TENSIX_CFG_SIZE: u32 = 0x1_0000;

/// All soft-reset bits of a tile's five cores.
pub const SOFT_RESET_ALL: u32 = (0xF << 11) | (1 << 18);

/// Offset of `NOC_NODE_ID` (x in bits 0..6, y in bits 6..12, grid size above) in a NoC
/// register window: 0x2C on Wormhole, 0x44 on Blackhole (tt-metal's `noc_parameters.h`).
/// Never all ones on a live tile, which makes it the host's check that a 0xFFFFFFFF read
/// came from a card that is still there.
pub const fn noc_node_id(arch: crate::Arch) -> u32 {
    NOC0_REGS_BASE
        + match arch {
            crate::Arch::WormholeB0 => 0x2C,
            crate::Arch::Blackhole => 0x44,
        }
}

/// The panic convention between a kernel's runtime and the emulator: a panic handler
/// that stops at `ebreak` with `a5` = [`PANIC_MAGIC`] passes its location and message in
/// `a0` (file pointer), `a1` (file length), `a2` (line), `a3` (message pointer) and `a4`
/// (message length, 0 when the message is not a literal). The strings live in L1 (the
/// kernel's read-only data); the emulator's fault report shows them. On a card the core
/// pauses for the debugger with the same registers.
pub const PANIC_MAGIC: u32 = u32::from_le_bytes(*b"PANI");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_disjoint_and_in_address_order() {
        let windows = [
            (LOCAL_RAM_BASE, 0x2000),
            (TDMA_REGS_BASE, TDMA_REGS_SIZE),
            (DEBUG_REGS_BASE, DEBUG_REGS_SIZE),
            (PIC_REGS_BASE, PIC_REGS_SIZE),
            (NOC0_REGS_BASE, NOC_REGS_SIZE),
            (NOC1_REGS_BASE, NOC_REGS_SIZE),
            (NOC_OVERLAY_BASE, NOC_OVERLAY_SIZE),
            (MOP_CFG_BASE, MOP_CFG_SIZE),
            (REGFILE_BASE, REGFILE_SIZE),
            (INSTRN_BUF_BASE, INSTRN_BUF_SIZE),
            (INSTRN1_BUF_BASE, INSTRN_BUF_SIZE),
            (INSTRN2_BUF_BASE, INSTRN_BUF_SIZE),
            (PC_BUF_BASE, PC_BUF_SIZE),
            (PC1_BUF_BASE, PC_BUF_SIZE),
            (PC2_BUF_BASE, PC_BUF_SIZE),
            (MAILBOX_BASE, MAILBOX_SIZE),
            (TENSIX_CFG_BASE, TENSIX_CFG_SIZE),
        ];
        for w in windows.windows(2) {
            assert!(
                w[0].0 as u64 + w[0].1 as u64 <= w[1].0 as u64,
                "{:#x} overlaps {:#x}",
                w[0].0,
                w[1].0
            );
        }
        assert_eq!(mailbox(3) + MAILBOX_STRIDE, MAILBOX_BASE + MAILBOX_SIZE);
        const { assert!(SEMAPHORE_BASE + 4 * SEMAPHORES <= PC_BUF_BASE + PC_BUF_SIZE) };
        const { assert!(GPRS_PER_THREAD_BYTES * 3 <= REGFILE_SIZE) };
        for r in [
            TRISC_PC_BUF_OVERRIDE,
            INSTRN_BUF_CTRL0,
            INSTRN_BUF_CTRL1,
            INSTRN_BUF_STATUS,
            SOFT_RESET_0,
            DBG_L1_MEM_REG0,
            DBG_BUS_CNTL,
            DBG_RD_DATA,
        ] {
            assert!(r.wrapping_sub(DEBUG_REGS_BASE) < DEBUG_REGS_SIZE);
        }
    }
}
