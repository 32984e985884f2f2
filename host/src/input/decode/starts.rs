//! Each record's start: two bytes a row and eight a block of [`BLOCK`] rows ([`Starts`]).
//!
//! A ring holds its records as they close, so neighbouring rows start near each other: a
//! zone and the zone around it that closes next, a dense loop's zones a few dozen cycles
//! apart. A row keeps its start as a signed 16-bit distance from its block's base (the
//! block's first start), the rare row farther than that (the kernel zone closing after its
//! loop, the first row after a long stall) beside as its whole start ([`Starts::far`]).
//! 2.25 bytes a row where a 32-bit column took 4 (issue 41: a 16 M-zone ring's records
//! were 9 bytes a zone, 4 of them its start). Random access stays O(1) (a far row: a binary
//! search of the far list).

/// Rows per block (one base each).
const BLOCK: usize = 32;

/// A row whose start is not within `i16` of its block's base: in [`Starts::far`].
const FAR: i16 = i16::MIN;

/// Every row's start, device cycles (see the module docs).
///
/// Made only by pushing rows in order (and truncating), so the same starts are always held
/// the same way: the derived equality compares starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Starts {
    /// Each block's first start.
    base: Vec<u64>,
    /// Each row's start minus its block's base, or [`FAR`].
    offset: Vec<i16>,
    /// (row, start) of the rows whose offset is [`FAR`], in row order.
    far: Vec<(u32, u64)>,
}

impl Starts {
    /// Starts of no rows.
    pub(crate) const fn new() -> Starts {
        Starts {
            base: Vec::new(),
            offset: Vec::new(),
            far: Vec::new(),
        }
    }

    /// How many rows.
    pub(crate) fn len(&self) -> usize {
        self.offset.len()
    }

    /// Room for `n` more rows.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.offset.reserve(n);
        self.base.reserve(n.div_ceil(BLOCK));
    }

    /// Appends a row starting at `start`.
    #[inline(always)]
    pub(crate) fn push(&mut self, start: u64) {
        let row = self.offset.len();
        if row.is_multiple_of(BLOCK) {
            self.base.push(start);
        }
        let base = self.base[row / BLOCK];
        // The distance modulo 2^64: a start just below a base of 0 is near too.
        let near = i16::try_from(start.wrapping_sub(base) as i64)
            .ok()
            .filter(|&d| d != FAR);
        match near {
            Some(d) => self.offset.push(d),
            None => {
                self.offset.push(FAR);
                self.far.push((row as u32, start));
            }
        }
    }

    /// Row `i`'s start.
    #[inline]
    pub(crate) fn at(&self, i: usize) -> u64 {
        match self.offset[i] {
            FAR => {
                let k = self.far.partition_point(|&(row, _)| (row as usize) < i);
                self.far[k].1
            }
            d => self.base[i / BLOCK].wrapping_add_signed(d.into()),
        }
    }

    /// Every row's start, in row order, in one pass.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let mut far = self.far.iter().map(|&(_, s)| s);
        self.offset.iter().enumerate().map(move |(i, &d)| match d {
            FAR => far.next().unwrap_or_default(),
            d => self.base[i / BLOCK].wrapping_add_signed(d.into()),
        })
    }

    /// Keeps the first `n` rows.
    pub(crate) fn truncate(&mut self, n: usize) {
        self.offset.truncate(n);
        self.base.truncate(n.div_ceil(BLOCK));
        let far = self.far.partition_point(|&(row, _)| (row as usize) < n);
        self.far.truncate(far);
    }

    /// Appends all of `other`'s rows.
    pub(crate) fn append(&mut self, other: &Starts) {
        self.reserve(other.len());
        for s in other.iter() {
            self.push(s);
        }
    }

    /// Bytes held per row, on average (tests of the column's size).
    #[cfg(test)]
    pub(crate) fn bytes_per_row(&self) -> f64 {
        let bytes = 8 * self.base.len() + 2 * self.offset.len() + 12 * self.far.len();
        bytes as f64 / self.len().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(starts: &[u64]) -> Starts {
        let mut s = Starts::new();
        for &x in starts {
            s.push(x);
        }
        s
    }

    fn read_back(s: &Starts) -> Vec<u64> {
        let one: Vec<u64> = (0..s.len()).map(|i| s.at(i)).collect();
        let pass: Vec<u64> = s.iter().collect();
        assert_eq!(one, pass, "at() and iter() agree");
        one
    }

    /// Near, at the edge of `i16`, past it either way, at the ends of `u64` and at a block's
    /// first row: every start reads back exactly, one at a time and in one pass.
    #[test]
    fn every_start_reads_back() {
        let base = 1u64 << 40;
        let mut want = vec![base];
        for d in [
            1i64,
            -1,
            32_767,
            -32_767,
            -32_768,
            32_768,
            -40_000,
            1 << 33,
            -(1 << 33),
            0,
        ] {
            want.push(base.wrapping_add_signed(d));
        }
        want.extend([0, u64::MAX, u64::MAX - 5, 3, 1 << 63]);
        // Past one block, so the later rows have a base of their own.
        for k in 0..100u64 {
            want.push(base + 40 * k);
        }
        want.push(u64::MAX);
        let s = held(&want);
        assert_eq!(read_back(&s), want);
        // -32_768 is the mark of a far row, so that distance is kept far too.
        assert!(s.far.iter().any(|&(_, x)| x == base - 32_768));
        // Distances modulo 2^64: u64::MAX is 1 below a base of 0.
        let low = held(&[0, u64::MAX, 5]);
        assert_eq!(read_back(&low), [0, u64::MAX, 5]);
    }

    /// Truncated at, before and past a block's edge, then pushed again; appended after
    /// rows that end mid-block: the same as pushing those starts in one go.
    #[test]
    fn truncate_and_append_keep_what_pushing_makes() {
        let starts: Vec<u64> = (0..200u64)
            .map(|i| if i % 37 == 5 { i << 36 } else { 1_000 + 30 * i })
            .collect();
        for n in [0, 1, 31, 32, 33, 64, 150, 200, 500] {
            let mut s = held(&starts);
            s.truncate(n);
            let kept = &starts[..n.min(starts.len())];
            assert_eq!(read_back(&s), kept, "truncate({n})");
            assert_eq!(s, held(kept), "truncate({n}) holds what pushing holds");
            s.push(7);
            let mut again = kept.to_vec();
            again.push(7);
            assert_eq!(s, held(&again));
            let mut joined = held(&starts[..n.min(starts.len())]);
            joined.append(&held(&starts[n.min(starts.len())..]));
            assert_eq!(joined, held(&starts), "append at {n}");
        }
    }

    /// A ring of nested dense zones (an inner zone, then the outer one around it that
    /// started just before it, every 348 cycles; now and then a stall of 200,000 cycles and
    /// a kernel zone closing long after its start) takes under 2.5 bytes a start.
    #[test]
    fn a_dense_ring_takes_under_two_and_a_half_bytes_a_start() {
        let mut s = Starts::new();
        let mut want = Vec::new();
        let mut t = 5_000_000u64;
        for i in 0..100_000u64 {
            if i % 700 == 0 {
                t += 200_000;
            }
            want.extend([t + 3, t]);
            t += 348;
            if i % 10_000 == 9_999 {
                want.push(1_000);
            }
        }
        for &x in &want {
            s.push(x);
        }
        assert_eq!(read_back(&s), want);
        assert!(s.bytes_per_row() < 2.5, "{}", s.bytes_per_row());
    }
}
