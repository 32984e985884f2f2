//! `Dst`, the coprocessor's destination register: one storage of 1024 rows x 16 columns of
//! 16-bit cells (`DstBits`), viewed either as `Dst16b` (the same cells) or as `Dst32b`
//! (512 distinct rows of 32-bit data, each datum split over two cells eight rows apart),
//! as `WormholeB0/TensixTile/TensixCoprocessor/Dst.md` specifies.
//!
//! The Matrix Unit, the unpacker that writes `Dst`, the packers and the Vector Unit all
//! read and write through this one type, so their views agree bit for bit.

/// Rows of `DstBits`.
pub const ROWS: usize = 1024;
/// Columns of every row.
pub const COLS: usize = 16;

/// The register's storage and its two views.
#[derive(Clone)]
pub struct Dst {
    bits: Box<[[u16; COLS]; ROWS]>,
}

impl Default for Dst {
    fn default() -> Self {
        Dst {
            bits: Box::new([[0; COLS]; ROWS]),
        }
    }
}

impl std::fmt::Debug for Dst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nonzero = self.bits.iter().flatten().filter(|&&b| b != 0).count();
        write!(f, "Dst {{ {nonzero} non-zero cells }}")
    }
}

/// The `DstBits` row that holds the high half of `Dst32b[row]` (the low half is 8 rows
/// below): `((row & 0x1f8) << 1) | (row & 0x207)`, with `row` a 10-bit index.
pub fn adj_row(row: usize) -> usize {
    let row = row & 0x3ff;
    ((row & 0x1f8) << 1) | (row & 0x207)
}

impl Dst {
    /// `Dst16b[row][col]` (`row` taken modulo 1024).
    pub fn read16(&self, row: usize, col: usize) -> u16 {
        self.bits[row & 0x3ff][col]
    }

    /// Writes `Dst16b[row][col]`.
    pub fn write16(&mut self, row: usize, col: usize, value: u16) {
        self.bits[row & 0x3ff][col] = value;
    }

    /// `Dst32b[row][col]`: `(DstBits[adj][col] << 16) | DstBits[adj + 8][col]`.
    pub fn read32(&self, row: usize, col: usize) -> u32 {
        let a = adj_row(row);
        (u32::from(self.bits[a][col]) << 16) | u32::from(self.bits[(a + 8) & 0x3ff][col])
    }

    /// Writes `Dst32b[row][col]` (the inverse of [`Dst::read32`]).
    pub fn write32(&mut self, row: usize, col: usize, value: u32) {
        let a = adj_row(row);
        self.bits[a][col] = (value >> 16) as u16;
        self.bits[(a + 8) & 0x3ff][col] = value as u16;
    }

    /// Sets every cell of `DstBits` rows `rows` to zero.
    #[allow(dead_code)] // ZEROACC (Matrix Unit), as it lands
    pub fn zero_rows(&mut self, rows: std::ops::Range<usize>) {
        for r in rows {
            self.bits[r & 0x3ff] = [0; COLS];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_32_bit_view_splits_a_datum_over_two_rows_eight_apart() {
        let mut d = Dst::default();
        d.write32(0, 3, 0x1234_5678);
        assert_eq!(d.read16(0, 3), 0x1234);
        assert_eq!(d.read16(8, 3), 0x5678);
        // Row 8 of the 32-bit view lands on DstBits row 16 (the page's AdjRow).
        d.write32(8, 0, 0xaaaa_bbbb);
        assert_eq!(adj_row(8), 16);
        assert_eq!((d.read16(16, 0), d.read16(24, 0)), (0xaaaa, 0xbbbb));
        assert_eq!(d.read32(8, 0), 0xaaaa_bbbb);
        // 512 distinct rows: every 32-bit row maps to a distinct pair of cells.
        let mut seen = std::collections::HashSet::new();
        for r in 0..512 {
            let a = adj_row(r);
            assert!(seen.insert(a) && seen.insert(a + 8), "row {r}");
        }
        assert_eq!(seen.len(), ROWS);
    }
}
