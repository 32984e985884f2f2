//! Each zone's record in opening order, packed: a byte a zone, not four (issue 41: a view
//! of a 16 M-zone ring held 64 MB of record indices).
//!
//! Zones are taken in blocks of [`BLOCK`]; a block keeps its least record (`base`) and each
//! zone its record's distance from it in a byte. Neighbours in opening order are neighbours
//! in the ring too (a ring holds zones as they close), so distances are small: a zone
//! whose distance does not fit (the parent of many zones of its block, or a zone among
//! hundreds of points) is listed whole beside the bytes ([`ZoneRecords::escaped`]).
//!
//! The bytes are written four a word into memory the caller lends ([`Packer`]): the
//! markers' (`markers::Markers::keep`), a byte a zone of the ring, made on the first zone
//! kept.

/// Zones a block's base covers.
pub(crate) const BLOCK: usize = 32;

/// The byte of a zone whose record is in [`ZoneRecords::escaped`].
const ESCAPE: u8 = u8::MAX;

/// Zones' records in order (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ZoneRecords {
    /// Per zone a byte: its record minus its block's base, or [`ESCAPE`]; four a word.
    bytes: Vec<u32>,
    /// Per block: the least record in it.
    base: Vec<u32>,
    /// (zone, record) of the zones whose byte is [`ESCAPE`], in zone order.
    escaped: Vec<(u32, u32)>,
    /// How many zones.
    len: usize,
}

impl ZoneRecords {
    /// `records` packed.
    pub(crate) fn from_slice(records: &[u32]) -> ZoneRecords {
        let mut memory = vec![0u32; records.len().div_ceil(4)];
        let mut p = Packer::default();
        for &r in records {
            p.push(r, &mut memory);
        }
        p.finish(memory)
    }

    /// How many zones.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Zone `i`'s record (`i < len()`; panics otherwise, as a slice's index does).
    pub(crate) fn get(&self, i: usize) -> u32 {
        assert!(i < self.len, "zone {i} of {}", self.len);
        match bytemuck::cast_slice::<u32, u8>(&self.bytes)[i] {
            ESCAPE => {
                let e = &self.escaped;
                e[e.partition_point(|&(zone, _)| (zone as usize) < i)].1
            }
            d => self.base[i / BLOCK] + d as u32,
        }
    }

    /// Zones `from..to`'s records.
    pub(crate) fn range(&self, from: usize, to: usize) -> Vec<u32> {
        (from..to).map(|i| self.get(i)).collect()
    }

    /// Bytes held (tests of what a view costs).
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> usize {
        self.bytes.capacity() * 4 + self.base.capacity() * 4 + self.escaped.capacity() * 8
    }
}

/// Packs records one at a time into memory the caller lends ([`Packer::push`]).
#[derive(Debug, Default)]
pub(crate) struct Packer {
    /// The block being taken.
    block: Vec<u32>,
    /// Zones whose bytes are written.
    written: usize,
    base: Vec<u32>,
    escaped: Vec<(u32, u32)>,
}

impl Packer {
    /// Takes the next zone's record. `memory` is where the bytes go: word `w` is written
    /// only once `4 * w + 3` zones were given (the words before the `n`-th zone's `n / 4`
    /// are free to take, and only they are written).
    pub(crate) fn push(&mut self, record: u32, memory: &mut [u32]) {
        if self.block.capacity() == 0 {
            self.block.reserve_exact(BLOCK);
        }
        self.block.push(record);
        if self.block.len() == BLOCK {
            self.flush(memory);
        }
    }

    fn flush(&mut self, memory: &mut [u32]) {
        let Some(&base) = self.block.iter().min() else {
            return;
        };
        let bytes = bytemuck::cast_slice_mut::<u32, u8>(memory);
        for (j, &r) in self.block.iter().enumerate() {
            let zone = self.written + j;
            bytes[zone] = match r - base {
                d if d < ESCAPE as u32 => d as u8,
                _ => {
                    self.escaped.push((zone as u32, r));
                    ESCAPE
                }
            };
        }
        self.base.push(base);
        self.written += self.block.len();
        self.block.clear();
    }

    /// Records given so far.
    pub(crate) fn len(&self) -> usize {
        self.written + self.block.len()
    }

    /// The packed records, in `memory` (the words [`Packer::push`] wrote; the rest let go).
    pub(crate) fn finish(mut self, mut memory: Vec<u32>) -> ZoneRecords {
        self.flush(&mut memory);
        memory.truncate(self.written.div_ceil(4));
        memory.shrink_to_fit();
        self.base.shrink_to_fit();
        self.escaped.shrink_to_fit();
        ZoneRecords {
            bytes: memory,
            base: self.base,
            escaped: self.escaped,
            len: self.written,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every zone reads its own record, whatever the distances: small, at and past a
    /// byte, a parent far after its children, a block's least record anywhere in it,
    /// partial last blocks.
    #[test]
    fn every_zone_reads_its_record() {
        let mut rng = crate::testing::Rng::new(7);
        let mut next = || rng.bits(31) as u32;
        for n in [0usize, 1, 3, 4, 31, 32, 33, 64, 65, 1000] {
            for spread in [1u32, 8, 254, 255, 256, 100_000] {
                let mut r: Vec<u32> = (0..n as u32).map(|i| i * 2).collect();
                for x in r.iter_mut() {
                    *x += next() % spread;
                }
                if n > 5 {
                    r[5] = u32::MAX;
                    r[n - 1] = 0;
                }
                let z = ZoneRecords::from_slice(&r);
                let got: Vec<u32> = (0..n).map(|i| z.get(i)).collect();
                assert_eq!(got, r, "n {n}, spread {spread}");
                assert_eq!(z.range(0, n), r);
                assert_eq!(z.len(), n);
            }
        }
    }

    /// A ring of zones with a few points between them and an enclosing zone: about a byte
    /// a zone, the enclosing zone alone listed whole.
    #[test]
    fn a_ring_of_zones_takes_a_byte_a_zone() {
        let n = 100_000u32;
        // Opening order: the kernel zone (closed last), then zone i (record 3 i: two
        // points after each).
        let mut r = vec![3 * n];
        r.extend((0..n).map(|i| 3 * i));
        let z = ZoneRecords::from_slice(&r);
        assert_eq!(z.escaped, [(0, 3 * n)]);
        let per_zone = z.held_bytes() as f64 / r.len() as f64;
        assert!(per_zone < 1.2, "{per_zone} bytes a zone");
        assert_eq!(z.get(0), 3 * n);
        assert_eq!(z.get(n as usize), 3 * (n - 1));
    }

    /// The packer writes only words whose zones were all given: what the markers have not
    /// read yet is left as it was.
    #[test]
    fn the_packer_writes_only_behind_what_it_was_given() {
        let n = 200usize;
        let mut memory: Vec<u32> = (0..n as u32).map(|i| 0xA000_0000 | i).collect();
        let mut p = Packer::default();
        for i in 0..n {
            p.push(i as u32 * 3, &mut memory);
            // Words after the one holding zone i are untouched.
            for (w, &word) in memory.iter().enumerate().skip(i / 4 + 1) {
                assert_eq!(word, 0xA000_0000 | w as u32, "after zone {i}");
            }
        }
        let z = p.finish(memory);
        assert_eq!(
            z.range(0, n),
            (0..n as u32).map(|i| i * 3).collect::<Vec<_>>()
        );
        assert_eq!(z.bytes.len(), n / 4);
    }
}
