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

/// `RISCV_DEBUG_REG_SOFT_RESET_0`: bits 11-14 hold BRISC and TRISC0-2 in reset, bit 18 NCRISC.
pub const SOFT_RESET_0: u32 = 0xFFB1_21B0;

/// Wall clock, low 32 bits. Reading it latches the high word into [`WALL_CLOCK_H`].
pub const WALL_CLOCK_L: u32 = 0xFFB1_21F0;
/// The live (unlatched) high word of the wall clock.
pub const WALL_CLOCK_H_LIVE: u32 = 0xFFB1_21F4;
/// The high word latched by the last read of [`WALL_CLOCK_L`] (by any core of the tile).
pub const WALL_CLOCK_H: u32 = 0xFFB1_21F8;

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
/// register window: 0x2C on Wormhole, 0x44 on Blackhole (`shared/reference/tensix-noc.md`).
/// Never all ones on a live tile, which makes it the host's check that a 0xFFFFFFFF read
/// came from a card that is still there.
pub const fn noc_node_id(arch: crate::Arch) -> u32 {
    NOC0_REGS_BASE
        + match arch {
            crate::Arch::WormholeB0 => 0x2C,
            crate::Arch::Blackhole => 0x44,
        }
}

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
            assert!(w[0].0 as u64 + w[0].1 as u64 <= w[1].0 as u64, "{:#x} overlaps {:#x}", w[0].0, w[1].0);
        }
        assert_eq!(mailbox(3) + MAILBOX_STRIDE, MAILBOX_BASE + MAILBOX_SIZE);
        const { assert!(SEMAPHORE_BASE + 4 * SEMAPHORES <= PC_BUF_BASE + PC_BUF_SIZE) };
        const { assert!(GPRS_PER_THREAD_BYTES * 3 <= REGFILE_SIZE) };
        for r in [TRISC_PC_BUF_OVERRIDE, INSTRN_BUF_CTRL0, INSTRN_BUF_CTRL1, INSTRN_BUF_STATUS, SOFT_RESET_0] {
            assert!(r.wrapping_sub(DEBUG_REGS_BASE) < DEBUG_REGS_SIZE);
        }
    }
}
