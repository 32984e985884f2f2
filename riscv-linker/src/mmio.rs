//! Memory-mapped registers and fixed address windows seen by every core of a tile.
//!
//! Identical on Wormhole B0 and Blackhole. MMIO must be read with volatile 32-bit loads.

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

/// Mailbox window.
pub const MAILBOX_BASE: u32 = 0xFFEC_0000;
/// Size of the mailbox window modelled here.
pub const MAILBOX_SIZE: u32 = 0x1000;

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
