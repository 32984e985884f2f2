//! The Tensix tiles of one real chip: harvesting and the three coordinate systems a host
//! meets (numbers from tt-kmd and tt-metal's SoC descriptors, checked against tt-umd's coordinate
//! managers).
//!
//! * **Logical** `(col, row)`: the unharvested workers, densely numbered in NoC0 order.
//! * **NoC0** `(x, y)`: where a tile physically sits on NoC 0 ([`NocCoord`], what this
//!   project stores everywhere). NoC1 mirrors it: `(W-1-x, H-1-y)` on a `W x H` NoC grid.
//! * **Translated**: what the NoC routes when coordinate translation is on (NIU_CFG_0 bit
//!   14). Wormhole: Tensix x `18..=25` by column, y `18..=27` by unharvested row, harvested
//!   rows last; NoC0 numbers (below 16) still reach tiles directly. Blackhole: the NoC0
//!   numbers themselves, with the unharvested columns packed to the left and the harvested
//!   ones at the right end (the harvested column nearest a die edge last): a NoC0 pair
//!   programmed as it is may reach *another* tile, so a host converts before programming.
//!
//! Harvesting removes whole rows (Wormhole) or columns (Blackhole). A [`TileMap`] takes the
//! mask in **NoC0 order** (bit `i` = the `i`-th Tensix row/column of
//! [`Arch::tensix_noc_ys`]/[`Arch::tensix_noc_xs`]), the form tt-metal's cluster
//! descriptor (`harvest_mask`) and tt-umd use. The card itself reports it in physical
//! layout order; [`TileMap::mask_from_hardware`] converts.

use crate::{Arch, NocCoord};
use core::fmt;

/// Wormhole: bit `i` of the mask the ARC firmware returns (message 0xAA57) is NoC0 row `y`.
const WH_HARDWARE_ROWS: [u8; 10] = [11, 1, 10, 2, 9, 3, 8, 4, 7, 5];
/// Blackhole: bit `i` of the harvested-column mask (telemetry tag 34 inverted) is NoC0 `x`.
const BH_HARDWARE_COLUMNS: [u8; 14] = [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10];
/// Wormhole's first translated Tensix coordinate (x and y).
const WH_TRANSLATED_START: u8 = 18;

/// Why a harvesting mask cannot describe a chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarvestError {
    /// A bit above the arch's Tensix rows/columns.
    BitOutOfRange {
        /// The chip's arch.
        arch: Arch,
        /// The mask, NoC0 order.
        mask: u32,
        /// Harvestable rows (Wormhole) or columns (Blackhole) of the arch.
        lines: u8,
    },
    /// Every row/column harvested: no worker left.
    Everything {
        /// The chip's arch.
        arch: Arch,
        /// The mask, NoC0 order.
        mask: u32,
    },
}

impl fmt::Display for HarvestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HarvestError::BitOutOfRange { arch, mask, lines } => write!(
                f,
                "harvest mask {mask:#x} has a bit above bit {} ({arch} has {lines} Tensix {}, one bit each in NoC0 order)",
                lines - 1,
                lines_name(arch)
            ),
            HarvestError::Everything { arch, mask } => {
                write!(f, "harvest mask {mask:#x} harvests every Tensix {} of a {arch} chip", line_name(arch))
            }
        }
    }
}

/// What harvesting removes on `arch`: `rows` or `columns`.
pub const fn lines_name(arch: Arch) -> &'static str {
    match arch {
        Arch::WormholeB0 => "rows",
        Arch::Blackhole => "columns",
    }
}

const fn line_name(arch: Arch) -> &'static str {
    match arch {
        Arch::WormholeB0 => "row",
        Arch::Blackhole => "column",
    }
}

/// The Tensix tiles of one chip: arch, harvesting and whether coordinate translation is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileMap {
    arch: Arch,
    /// Harvested rows (Wormhole) or columns (Blackhole), bit `i` = `i`-th in NoC0 order.
    mask: u32,
    translation: bool,
}

impl TileMap {
    /// A chip with every worker present (the emulator's and the nominal grid).
    pub const fn full(arch: Arch) -> TileMap {
        TileMap {
            arch,
            mask: 0,
            translation: false,
        }
    }

    /// A chip with the rows (Wormhole) or columns (Blackhole) of `mask` (NoC0 order)
    /// harvested, and coordinate translation on or off.
    pub fn new(arch: Arch, mask: u32, translation: bool) -> Result<TileMap, HarvestError> {
        let lines = Self::harvestable(arch).len() as u8;
        if mask >> lines != 0 {
            return Err(HarvestError::BitOutOfRange { arch, mask, lines });
        }
        if mask.count_ones() == lines as u32 {
            return Err(HarvestError::Everything { arch, mask });
        }
        Ok(TileMap {
            arch,
            mask,
            translation,
        })
    }

    /// The NoC0-order mask of a mask as the card reports it: Wormhole's ARC message 0xAA57
    /// (bit `i` = NoC0 row `[11,1,10,2,9,3,8,4,7,5][i]`), Blackhole's inverted telemetry tag
    /// 34 masked with 0x3FFF (bit `i` = NoC0 column `[1,16,2,15,3,14,4,13,5,12,6,11,7,10][i]`).
    pub fn mask_from_hardware(arch: Arch, hardware: u32) -> Result<u32, HarvestError> {
        let (order, lines): (&[u8], &[u8]) = match arch {
            Arch::WormholeB0 => (&WH_HARDWARE_ROWS, arch.tensix_noc_ys()),
            Arch::Blackhole => (&BH_HARDWARE_COLUMNS, arch.tensix_noc_xs()),
        };
        if hardware >> order.len() != 0 {
            return Err(HarvestError::BitOutOfRange {
                arch,
                mask: hardware,
                lines: order.len() as u8,
            });
        }
        let mut mask = 0;
        for (bit, line) in order.iter().enumerate() {
            if hardware >> bit & 1 != 0 {
                let i = lines
                    .iter()
                    .position(|l| l == line)
                    .expect("every hardware line is a Tensix line");
                mask |= 1 << i;
            }
        }
        Ok(mask)
    }

    /// NoC0 numbers of the lines harvesting removes: rows (Wormhole) or columns (Blackhole).
    pub const fn harvestable(arch: Arch) -> &'static [u8] {
        match arch {
            Arch::WormholeB0 => arch.tensix_noc_ys(),
            Arch::Blackhole => arch.tensix_noc_xs(),
        }
    }

    /// The chip's arch.
    pub const fn arch(&self) -> Arch {
        self.arch
    }

    /// The harvesting mask, NoC0 order.
    pub const fn mask(&self) -> u32 {
        self.mask
    }

    /// Whether coordinate translation is on (the NoC routes translated coordinates).
    pub const fn translation(&self) -> bool {
        self.translation
    }

    /// NoC0 numbers of the harvested rows (Wormhole) or columns (Blackhole).
    pub fn harvested_lines(&self) -> impl Iterator<Item = u8> + '_ {
        Self::harvestable(self.arch)
            .iter()
            .enumerate()
            .filter(|(i, _)| self.mask >> i & 1 != 0)
            .map(|(_, l)| *l)
    }

    fn xs(&self) -> impl Iterator<Item = u8> + '_ {
        let harvest_x = self.arch == Arch::Blackhole;
        self.arch
            .tensix_noc_xs()
            .iter()
            .enumerate()
            .filter(move |(i, _)| !harvest_x || self.mask >> i & 1 == 0)
            .map(|(_, x)| *x)
    }

    fn ys(&self) -> impl Iterator<Item = u8> + '_ {
        let harvest_y = self.arch == Arch::WormholeB0;
        self.arch
            .tensix_noc_ys()
            .iter()
            .enumerate()
            .filter(move |(i, _)| !harvest_y || self.mask >> i & 1 == 0)
            .map(|(_, y)| *y)
    }

    /// The logical worker grid `(columns, rows)` after harvesting.
    pub fn grid(&self) -> (u8, u8) {
        (self.xs().count() as u8, self.ys().count() as u8)
    }

    /// NoC0 coordinates of the unharvested workers, row by row in NoC0 order (logical order).
    #[cfg(any(feature = "std", test))]
    pub fn workers(&self) -> std::vec::Vec<NocCoord> {
        self.ys()
            .flat_map(|y| self.xs().map(move |x| NocCoord::new(x, y)))
            .collect()
    }

    /// The NoC0 coordinate of logical worker `(col, row)`, `None` off the harvested grid.
    pub fn logical_to_noc0(&self, col: u8, row: u8) -> Option<NocCoord> {
        Some(NocCoord::new(
            self.xs().nth(col as usize)?,
            self.ys().nth(row as usize)?,
        ))
    }

    /// The logical `(col, row)` of an unharvested worker at NoC0 `noc`.
    pub fn noc0_to_logical(&self, noc: NocCoord) -> Option<(u8, u8)> {
        let col = self.xs().position(|x| x == noc.x)?;
        let row = self.ys().position(|y| y == noc.y)?;
        Some((col as u8, row as u8))
    }

    /// Whether NoC0 `noc` is an unharvested Tensix worker.
    pub fn is_worker(&self, noc: NocCoord) -> bool {
        self.noc0_to_logical(noc).is_some()
    }

    /// The NoC1 coordinate of a NoC0 coordinate (any tile of the NoC grid).
    pub fn noc0_to_noc1(&self, noc: NocCoord) -> Option<NocCoord> {
        let (w, h) = self.arch.noc_grid();
        (noc.x < w && noc.y < h).then(|| NocCoord::new(w - 1 - noc.x, h - 1 - noc.y))
    }

    /// The translated coordinate of the Tensix tile at NoC0 `noc` (harvested tiles
    /// included: they get the last numbers), `None` for a non-Tensix coordinate. With
    /// translation off it is `noc` itself.
    pub fn noc0_to_translated(&self, noc: NocCoord) -> Option<NocCoord> {
        let col = self.arch.tensix_noc_xs().iter().position(|&x| x == noc.x)?;
        let row = self.arch.tensix_noc_ys().iter().position(|&y| y == noc.y)?;
        if !self.translation {
            return Some(noc);
        }
        match self.arch {
            Arch::WormholeB0 => {
                let ty = self.harvest_rank(row)?;
                Some(NocCoord::new(
                    WH_TRANSLATED_START + col as u8,
                    WH_TRANSLATED_START + ty,
                ))
            }
            Arch::Blackhole => {
                let tx = self.harvest_rank(col)?;
                Some(NocCoord::new(self.arch.tensix_noc_xs()[tx as usize], noc.y))
            }
        }
    }

    /// The NoC0 coordinate a translated Tensix coordinate reaches, `None` if it is none.
    /// With translation off it is the coordinate itself (when a Tensix tile). Wormhole's
    /// NoC0 numbers still reach their tiles with translation on.
    pub fn translated_to_noc0(&self, t: NocCoord) -> Option<NocCoord> {
        let tensix = |c: NocCoord| self.arch.worker_logical(c).map(|_| c);
        if !self.translation {
            return tensix(t);
        }
        let xs = self.arch.tensix_noc_xs();
        let ys = self.arch.tensix_noc_ys();
        match self.arch {
            Arch::WormholeB0 if t.x < 16 && t.y < 16 => tensix(t),
            Arch::WormholeB0 => {
                let col = t.x.checked_sub(WH_TRANSLATED_START)? as usize;
                let rank = t.y.checked_sub(WH_TRANSLATED_START)?;
                let row = (0..ys.len()).find(|&r| self.harvest_rank(r) == Some(rank))?;
                Some(NocCoord::new(*xs.get(col)?, ys[row]))
            }
            Arch::Blackhole => {
                let rank = xs.iter().position(|&x| x == t.x)? as u8;
                ys.iter().position(|&y| y == t.y)?;
                let col = (0..xs.len()).find(|&c| self.harvest_rank(c) == Some(rank))?;
                Some(NocCoord::new(xs[col], t.y))
            }
        }
    }

    /// The coordinate to program into a TLB window to reach the worker at NoC0 `noc`:
    /// translated where translation is on and NoC0 numbers would reach another tile
    /// (Blackhole), NoC0 otherwise. `None` for a non-Tensix coordinate.
    pub fn noc0_to_programmed(&self, noc: NocCoord) -> Option<NocCoord> {
        match self.arch {
            // Translation passes NoC0 numbers (below 16) through on Wormhole.
            Arch::WormholeB0 => self.arch.worker_logical(noc).map(|_| noc),
            Arch::Blackhole => self.noc0_to_translated(noc),
        }
    }

    /// The position of harvestable line `i` (NoC0 order) in translated order: unharvested
    /// lines first in NoC0 order; then the harvested ones (Wormhole: in NoC0 order;
    /// Blackhole: from the right end inwards, the one nearest a die edge last).
    fn harvest_rank(&self, i: usize) -> Option<u8> {
        let lines = Self::harvestable(self.arch);
        if i >= lines.len() {
            return None;
        }
        let harvested = |j: usize| self.mask >> j & 1 != 0;
        if !harvested(i) {
            return Some((0..i).filter(|&j| !harvested(j)).count() as u8);
        }
        let kept = (0..lines.len()).filter(|&j| !harvested(j)).count() as u8;
        match self.arch {
            Arch::WormholeB0 => Some(kept + (0..i).filter(|&j| harvested(j)).count() as u8),
            Arch::Blackhole => {
                // Harvested columns sorted by die position (their index in the hardware
                // order) take the translated columns from the last one leftwards.
                let die = |j: usize| {
                    BH_HARDWARE_COLUMNS
                        .iter()
                        .position(|&x| x == lines[j])
                        .unwrap_or(usize::MAX)
                };
                let before = (0..lines.len())
                    .filter(|&j| harvested(j) && die(j) < die(i))
                    .count() as u8;
                Some(lines.len() as u8 - 1 - before)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn n(x: u8, y: u8) -> NocCoord {
        NocCoord::new(x, y)
    }

    #[test]
    fn full_grids_are_the_reference_worker_sets() {
        let wh = TileMap::full(Arch::WormholeB0);
        assert_eq!(wh.grid(), (8, 10));
        assert_eq!(wh.workers().len(), 80);
        assert_eq!(
            wh.logical_to_noc0(4, 5),
            Some(n(6, 7)),
            "NoC column 5 and row 6 are not Tensix"
        );
        let bh = TileMap::full(Arch::Blackhole);
        assert_eq!(bh.grid(), (14, 10));
        assert_eq!(bh.logical_to_noc0(7, 0), Some(n(10, 2)));
        assert_eq!(bh.workers()[..2], [n(1, 2), n(2, 2)]);
    }

    #[test]
    fn hardware_masks_become_noc0_order_masks() {
        // Wormhole: ARC bit 0 is NoC row 11 (the 10th row, bit 9); bit 1 is row 1 (bit 0).
        assert_eq!(TileMap::mask_from_hardware(Arch::WormholeB0, 1), Ok(1 << 9));
        assert_eq!(TileMap::mask_from_hardware(Arch::WormholeB0, 2), Ok(1));
        assert_eq!(
            TileMap::mask_from_hardware(Arch::WormholeB0, 1 << 9),
            Ok(1 << 4),
            "bit 9 = row 5"
        );
        // Blackhole: bit 1 is column 16 (the last, bit 13); bits 12/13 are columns 7/10.
        assert_eq!(TileMap::mask_from_hardware(Arch::Blackhole, 2), Ok(1 << 13));
        assert_eq!(
            TileMap::mask_from_hardware(Arch::Blackhole, 0b11 << 12),
            Ok(0b11 << 6)
        );
        let e = TileMap::mask_from_hardware(Arch::Blackhole, 1 << 14).unwrap_err();
        assert!(std::format!("{e}").contains("above bit 13"), "{e}");
    }

    #[test]
    fn wormhole_harvested_rows_leave_the_grid_and_go_last_in_translation() {
        // tt-umd's example: NoC0 rows 4 and 8 harvested (NoC0-order bits 3 and 6).
        let m = TileMap::new(Arch::WormholeB0, 1 << 3 | 1 << 6, true).unwrap();
        assert_eq!(m.grid(), (8, 8));
        assert_eq!(m.harvested_lines().collect::<Vec<_>>(), [4, 8]);
        assert!(!m.is_worker(n(1, 4)) && !m.is_worker(n(9, 8)) && m.is_worker(n(9, 9)));
        // Logical (4,3) is NoC0 (6,5), translated (22,21) (the reference's worked example).
        assert_eq!(m.logical_to_noc0(4, 3), Some(n(6, 5)));
        assert_eq!(m.noc0_to_translated(n(6, 5)), Some(n(22, 21)));
        assert_eq!(m.noc0_to_translated(n(1, 1)), Some(n(18, 18)));
        assert_eq!(m.noc0_to_translated(n(9, 11)), Some(n(25, 25)));
        // Harvested rows take the last translated rows, in NoC0 order.
        assert_eq!(m.noc0_to_translated(n(1, 4)), Some(n(18, 26)));
        assert_eq!(m.noc0_to_translated(n(1, 8)), Some(n(18, 27)));
        for noc in TileMap::full(Arch::WormholeB0).workers() {
            let t = m.noc0_to_translated(noc).unwrap();
            assert_eq!(m.translated_to_noc0(t), Some(noc), "{noc} -> {t}");
            assert_eq!(
                m.translated_to_noc0(noc),
                Some(noc),
                "NoC0 numbers pass through"
            );
            assert_eq!(m.noc0_to_programmed(noc), Some(noc));
        }
        assert_eq!(m.noc0_to_translated(n(5, 1)), None, "not a Tensix tile");
        assert_eq!(m.noc0_to_noc1(n(1, 1)), Some(n(8, 10)));
    }

    #[test]
    fn blackhole_harvested_columns_shift_translated_numbers() {
        // A p100: NoC0 columns 7 and 10 harvested (NoC0-order bits 6 and 7, mask 192 as
        // in tt-umd's p100 cluster descriptor).
        let m = TileMap::new(Arch::Blackhole, 192, true).unwrap();
        assert_eq!(m.grid(), (12, 10));
        assert_eq!(m.workers().len(), 120);
        assert_eq!(m.logical_to_noc0(6, 0), Some(n(11, 2)));
        // Unharvested columns pack left: NoC0 x 11 is translated x 7, 16 is 14.
        assert_eq!(m.noc0_to_translated(n(6, 2)), Some(n(6, 2)));
        assert_eq!(m.noc0_to_translated(n(11, 5)), Some(n(7, 5)));
        assert_eq!(m.noc0_to_translated(n(16, 11)), Some(n(14, 11)));
        // Harvested ones go right, the one nearest a die edge (7, die position 12) last.
        assert_eq!(m.noc0_to_translated(n(7, 2)), Some(n(16, 2)));
        assert_eq!(m.noc0_to_translated(n(10, 2)), Some(n(15, 2)));
        // So NoC0 (7,y) programmed as it is, with translation on, reaches NoC0 (11,y): the
        // programmed coordinate must be the translated one.
        assert_eq!(m.translated_to_noc0(n(7, 3)), Some(n(11, 3)));
        assert_eq!(m.noc0_to_programmed(n(11, 3)), Some(n(7, 3)));
        for noc in TileMap::full(Arch::Blackhole).workers() {
            assert_eq!(
                m.translated_to_noc0(m.noc0_to_translated(noc).unwrap()),
                Some(noc),
                "{noc}"
            );
        }
        let off = TileMap::new(Arch::Blackhole, 192, false).unwrap();
        assert_eq!(
            off.noc0_to_programmed(n(11, 3)),
            Some(n(11, 3)),
            "no translation: NoC0 as it is"
        );
        assert_eq!(m.noc0_to_noc1(n(1, 2)), Some(n(15, 9)));
    }

    #[test]
    fn bad_masks_are_refused_with_the_reason() {
        let e = TileMap::new(Arch::WormholeB0, 1 << 10, false).unwrap_err();
        assert_eq!(std::format!("{e}"), "harvest mask 0x400 has a bit above bit 9 (wormhole_b0 has 10 Tensix rows, one bit each in NoC0 order)");
        let e = TileMap::new(Arch::Blackhole, 0x3FFF, false).unwrap_err();
        assert!(
            std::format!("{e}").contains("harvests every Tensix column"),
            "{e}"
        );
    }
}
