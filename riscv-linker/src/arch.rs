//! Chips and cores (numbers from tt-metal's SoC descriptors and Tenstorrent's ISA
//! documentation, <https://github.com/tenstorrent/tt-isa-documentation>).

use core::fmt;

/// A Tenstorrent chip architecture with Tensix worker tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// Wormhole B0: RV32IM cores, 1464 KiB L1, 8x10 worker grid.
    WormholeB0,
    /// Blackhole: RV32IM + Zicsr + Zaamo + Zba + Zbb cores, 1536 KiB L1, 14x10 worker grid.
    Blackhole,
}

impl Arch {
    /// Every supported arch, in [`Arch::id`] order.
    pub const ALL: [Arch; 2] = [Arch::WormholeB0, Arch::Blackhole];

    /// The name tt-metal prints in `profile_log_device.csv` (`ARCH: wormhole_b0`).
    pub const fn name(self) -> &'static str {
        match self {
            Arch::WormholeB0 => "wormhole_b0",
            Arch::Blackhole => "blackhole",
        }
    }

    /// Parses `wormhole_b0` / `wormhole` / `blackhole` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Arch> {
        let n = name.trim();
        if n.eq_ignore_ascii_case("wormhole_b0") || n.eq_ignore_ascii_case("wormhole") {
            Some(Arch::WormholeB0)
        } else if n.eq_ignore_ascii_case("blackhole") {
            Some(Arch::Blackhole)
        } else {
            None
        }
    }

    /// A small stable number for this arch, stored in control blocks and image headers.
    pub const fn id(self) -> u32 {
        match self {
            Arch::WormholeB0 => 1,
            Arch::Blackhole => 2,
        }
    }

    /// The arch with [`Arch::id`] `id`; `None` for an unknown number (e.g. a foreign image).
    pub const fn from_id(id: u32) -> Option<Arch> {
        match id {
            1 => Some(Arch::WormholeB0),
            2 => Some(Arch::Blackhole),
            _ => None,
        }
    }

    /// Bytes of L1 SRAM per Tensix tile.
    pub const fn l1_size(self) -> u32 {
        match self {
            Arch::WormholeB0 => 1_499_136,
            Arch::Blackhole => 1_572_864,
        }
    }

    /// Bytes of private local RAM (at [`crate::mmio::LOCAL_RAM_BASE`]) of one core.
    pub const fn local_ram_size(self, risc: Risc) -> u32 {
        match (self, risc.is_trisc()) {
            (Arch::WormholeB0, false) => 4 * 1024,
            (Arch::WormholeB0, true) => 2 * 1024,
            (Arch::Blackhole, false) => 8 * 1024,
            (Arch::Blackhole, true) => 4 * 1024,
        }
    }

    /// NCRISC instruction RAM (Wormhole only): `(base, size)`.
    pub const fn ncrisc_iram(self) -> Option<(u32, u32)> {
        match self {
            Arch::WormholeB0 => Some((0xFFC0_0000, 16 * 1024)),
            Arch::Blackhole => None,
        }
    }

    /// Nominal AICLK when busy, in MHz (the `CHIP_FREQ[MHz]` tt-metal reports).
    pub const fn aiclk_mhz(self) -> u32 {
        match self {
            Arch::WormholeB0 => 1000,
            Arch::Blackhole => 1350,
        }
    }

    /// The full worker grid in tiles, `(columns, rows)`.
    pub const fn worker_grid(self) -> (u8, u8) {
        match self {
            Arch::WormholeB0 => (8, 10),
            Arch::Blackhole => (14, 10),
        }
    }

    /// The NoC grid, `(columns, rows)`, including non-Tensix tiles.
    pub const fn noc_grid(self) -> (u8, u8) {
        match self {
            Arch::WormholeB0 => (10, 12),
            Arch::Blackhole => (17, 12),
        }
    }

    /// NoC0 x coordinates of Tensix columns, left to right.
    pub const fn tensix_noc_xs(self) -> &'static [u8] {
        match self {
            Arch::WormholeB0 => &[1, 2, 3, 4, 6, 7, 8, 9],
            Arch::Blackhole => &[1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16],
        }
    }

    /// NoC0 y coordinates of Tensix rows, top to bottom.
    pub const fn tensix_noc_ys(self) -> &'static [u8] {
        match self {
            Arch::WormholeB0 => &[1, 2, 3, 4, 5, 7, 8, 9, 10, 11],
            Arch::Blackhole => &[2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        }
    }

    /// The NoC0 coordinate of the worker at logical `(col, row)`, or `None` off the grid.
    pub fn worker_noc(self, col: u8, row: u8) -> Option<NocCoord> {
        let x = *self.tensix_noc_xs().get(col as usize)?;
        let y = *self.tensix_noc_ys().get(row as usize)?;
        Some(NocCoord { x, y })
    }

    /// The logical `(col, row)` of the Tensix tile at a NoC0 coordinate, if it is one.
    pub fn worker_logical(self, noc: NocCoord) -> Option<(u8, u8)> {
        let col = self.tensix_noc_xs().iter().position(|&x| x == noc.x)?;
        let row = self.tensix_noc_ys().iter().position(|&y| y == noc.y)?;
        Some((col as u8, row as u8))
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tile's NoC0 coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NocCoord {
    /// Column on NoC0.
    pub x: u8,
    /// Row on NoC0.
    pub y: u8,
}

impl NocCoord {
    /// The tile at column `x`, row `y` of NoC0.
    pub const fn new(x: u8, y: u8) -> NocCoord {
        NocCoord { x, y }
    }

    /// The 64-bit NoC address of `local` on this tile: `(y << 42) | (x << 36) | local`.
    pub const fn noc_address(self, local: u32) -> u64 {
        ((self.y as u64) << 42) | ((self.x as u64) << 36) | local as u64
    }
}

impl fmt::Display for NocCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.x, self.y)
    }
}

/// One of the five Baby RISC-V cores of a Tensix tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Risc {
    /// Data movement 0.
    Brisc = 0,
    /// Data movement 1.
    Ncrisc = 1,
    /// Compute: unpack.
    Trisc0 = 2,
    /// Compute: math.
    Trisc1 = 3,
    /// Compute: pack.
    Trisc2 = 4,
}

impl Risc {
    /// The five cores in [`Risc::index`] order.
    pub const ALL: [Risc; 5] = [
        Risc::Brisc,
        Risc::Ncrisc,
        Risc::Trisc0,
        Risc::Trisc1,
        Risc::Trisc2,
    ];
    /// Cores per Tensix tile.
    pub const COUNT: usize = 5;

    /// Position of this core in [`Risc::ALL`] (0..5): the ring and slot number.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The core at [`Risc::index`] `i`; `None` from 5 up.
    pub const fn from_index(i: usize) -> Option<Risc> {
        match i {
            0 => Some(Risc::Brisc),
            1 => Some(Risc::Ncrisc),
            2 => Some(Risc::Trisc0),
            3 => Some(Risc::Trisc1),
            4 => Some(Risc::Trisc2),
            _ => None,
        }
    }

    /// Whether this is one of the three compute cores (TRISC0..2).
    pub const fn is_trisc(self) -> bool {
        matches!(self, Risc::Trisc0 | Risc::Trisc1 | Risc::Trisc2)
    }

    /// The name tt-metal's host uses (`RISC processor type` column): `BRISC`, `TRISC_0`, ...
    pub const fn name(self) -> &'static str {
        match self {
            Risc::Brisc => "BRISC",
            Risc::Ncrisc => "NCRISC",
            Risc::Trisc0 => "TRISC_0",
            Risc::Trisc1 => "TRISC_1",
            Risc::Trisc2 => "TRISC_2",
        }
    }

    /// Lower-case identifier used in file and symbol names: `brisc`, `trisc0`, ...
    pub const fn ident(self) -> &'static str {
        match self {
            Risc::Brisc => "brisc",
            Risc::Ncrisc => "ncrisc",
            Risc::Trisc0 => "trisc0",
            Risc::Trisc1 => "trisc1",
            Risc::Trisc2 => "trisc2",
        }
    }

    /// Parses [`Risc::name`] or [`Risc::ident`] spellings (case-insensitive).
    pub fn from_name(name: &str) -> Option<Risc> {
        Risc::ALL
            .into_iter()
            .find(|r| name.eq_ignore_ascii_case(r.name()) || name.eq_ignore_ascii_case(r.ident()))
    }

    /// The firmware wrapper zone tt-metal records around a launch: `BRISC-FW`, `TRISC-FW`, ...
    pub const fn fw_zone(self) -> &'static str {
        match self {
            Risc::Brisc => "BRISC-FW",
            Risc::Ncrisc => "NCRISC-FW",
            _ => "TRISC-FW",
        }
    }

    /// The kernel wrapper zone: `BRISC-KERNEL`, `NCRISC-KERNEL`, `TRISC-KERNEL`.
    pub const fn kernel_zone(self) -> &'static str {
        match self {
            Risc::Brisc => "BRISC-KERNEL",
            Risc::Ncrisc => "NCRISC-KERNEL",
            _ => "TRISC-KERNEL",
        }
    }

    /// This core's bit in `RISCV_DEBUG_REG_SOFT_RESET_0` (bits 11-14: BRISC, TRISC0-2; 18: NCRISC).
    pub const fn soft_reset_bit(self) -> u32 {
        match self {
            Risc::Brisc => 11,
            Risc::Trisc0 => 12,
            Risc::Trisc1 => 13,
            Risc::Trisc2 => 14,
            Risc::Ncrisc => 18,
        }
    }
}

impl fmt::Display for Risc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_grids_match_reference_counts() {
        assert_eq!(
            Arch::WormholeB0.tensix_noc_xs().len() * Arch::WormholeB0.tensix_noc_ys().len(),
            80
        );
        assert_eq!(
            Arch::Blackhole.tensix_noc_xs().len() * Arch::Blackhole.tensix_noc_ys().len(),
            140
        );
        for arch in Arch::ALL {
            let (c, r) = arch.worker_grid();
            assert_eq!(arch.tensix_noc_xs().len(), c as usize);
            assert_eq!(arch.tensix_noc_ys().len(), r as usize);
        }
    }

    #[test]
    fn logical_and_noc_coordinates_round_trip() {
        for arch in Arch::ALL {
            let (c, r) = arch.worker_grid();
            for col in 0..c {
                for row in 0..r {
                    let noc = arch.worker_noc(col, row).unwrap();
                    assert_eq!(arch.worker_logical(noc), Some((col, row)));
                }
            }
            assert_eq!(arch.worker_noc(c, 0), None);
        }
        // Wormhole skips NoC column 5 and row 6 (not Tensix).
        assert_eq!(Arch::WormholeB0.worker_logical(NocCoord::new(5, 1)), None);
        assert_eq!(Arch::WormholeB0.worker_logical(NocCoord::new(1, 6)), None);
    }

    #[test]
    fn names_parse_back() {
        for r in Risc::ALL {
            assert_eq!(Risc::from_name(r.name()), Some(r));
            assert_eq!(Risc::from_name(r.ident()), Some(r));
            assert_eq!(Risc::from_index(r.index()), Some(r));
        }
        for a in Arch::ALL {
            assert_eq!(Arch::from_name(a.name()), Some(a));
            assert_eq!(Arch::from_id(a.id()), Some(a));
        }
    }

    #[test]
    fn noc_address_packs_coordinates() {
        assert_eq!(
            NocCoord::new(1, 2).noc_address(0x100),
            (2u64 << 42) | (1u64 << 36) | 0x100
        );
    }
}
