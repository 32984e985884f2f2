//! A ring's zones as its view holds them ([`Zones`]): per zone the index of its record
//! (packed, about a byte: `zone_records`) and its depth (half a byte), about 1.6 bytes;
//! its cycles, run, value and site label (from the ring's (run, site) -> label table) are
//! read when the zone is asked for. A [`Zone`] held whole takes 48
//! bytes beside the record it copies, and a ring's view holds every zone of the ring at
//! once (issue 41).
//!
//! The crate's `ZoneList` reads zones one by one by index, from a view's [`Zones`] or from
//! a slice (a [`crate::timeline::Timeline`]'s lane), so an output written from either takes
//! both.

use crate::decode::{RecordKind, Records};
use crate::model::zone_records::ZoneRecords;
use crate::profile::RingLabels;
use crate::timeline::Zone;
use crate::util::small_map::SmallMap;

/// Zones in opening order, read one at a time.
pub(crate) trait ZoneList {
    /// How many zones.
    fn len(&self) -> usize;

    /// Zone `i` (`i < len()`; panics otherwise, as a slice's index does).
    fn zone(&self, i: usize) -> Zone;

    /// Every zone, in order.
    fn iter(&self) -> impl ExactSizeIterator<Item = Zone> + DoubleEndedIterator + Clone + '_ {
        (0..self.len()).map(move |i| self.zone(i))
    }
}

impl ZoneList for [Zone] {
    fn len(&self) -> usize {
        <[Zone]>::len(self)
    }

    fn zone(&self, i: usize) -> Zone {
        self[i]
    }
}

/// The depth a view keeps beside its zones, not in their half byte (few rings nest that
/// deep: half a byte a zone, not two, issue 41).
const DEEP: u8 = 15;

/// One ring's zones in the order they open (see the module docs).
#[derive(Clone, Debug)]
pub struct Zones<'a> {
    /// The ring's records.
    records: &'a Records,
    /// The ring's (run, site) -> label table ([`Zone::site`]; 0 for a site it lacks).
    labels: Option<&'a RingLabels>,
    /// The ring's lane ([`Zone::lane`]).
    lane: u32,
    /// The op of each run the zones name ([`Zone::op`]).
    ops: SmallMap<u32, Option<u32>>,
    /// Per zone: its record (packed, about a byte a zone).
    record: ZoneRecords,
    /// Per zone, half a byte (zone `2 k` the low half of byte `k`): [`Zone::depth`], or
    /// [`DEEP`] for a zone nested that deep or deeper.
    depth: Vec<u8>,
    /// Zones whose depth was given.
    depths: usize,
    /// (zone, depth) of the zones whose depth is [`DEEP`] or more, in zone order.
    deep: Vec<(u32, u16)>,
}

impl<'a> Zones<'a> {
    /// No zones yet, of lane `lane`, whose records are `records` and labels `labels`.
    pub(crate) fn new(
        records: &'a Records,
        labels: Option<&'a RingLabels>,
        lane: u32,
    ) -> Zones<'a> {
        Zones {
            records,
            labels,
            lane,
            ops: SmallMap::default(),
            record: ZoneRecords::default(),
            depth: Vec::new(),
            depths: 0,
            deep: Vec::new(),
        }
    }

    /// Room for `n` more zones' depths (their records come whole: [`Zones::set_records`]).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.depth
            .reserve((self.depths + n).div_ceil(2) - self.depth.len());
    }

    /// The next zone to open: record `record`, nesting depth `depth`; `op` gives its run's
    /// op (asked once per run).
    #[cfg(test)]
    pub(crate) fn push(&mut self, record: usize, depth: u16, op: impl FnOnce(u32) -> Option<u32>) {
        self.push_depth(record, depth, op);
        let mut all = self.record.range(0, self.record.len());
        all.push(record as u32);
        self.record = ZoneRecords::from_slice(&all);
    }

    /// The next zone to open, as [`Zones::push`] without keeping its record: the view gives
    /// every zone's record at the end ([`Zones::set_records`]), made in place of the
    /// markers' own opening order, so that one ring's view does not hold both (4 bytes a
    /// zone, issue 41).
    pub(crate) fn push_depth(
        &mut self,
        record: usize,
        depth: u16,
        op: impl FnOnce(u32) -> Option<u32>,
    ) {
        let run = self.records.run_at(record);
        self.ops.get_or_insert_with(run, || op(run));
        if depth >= DEEP as u16 {
            self.deep.push((self.depths as u32, depth));
        }
        let half = depth.min(DEEP as u16) as u8;
        match self.depths % 2 {
            0 => self.depth.push(half),
            _ => {
                if let Some(b) = self.depth.last_mut() {
                    *b |= half << 4;
                }
            }
        }
        self.depths += 1;
    }

    /// Each zone's record, in the order [`Zones::push_depth`] opened them (one each).
    pub(crate) fn set_records(&mut self, record: ZoneRecords) {
        assert_eq!(record.len(), self.depths, "a record per zone");
        self.record = record;
    }

    /// How many zones.
    pub fn len(&self) -> usize {
        self.record.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.record.len() == 0
    }

    /// Zone `i` (`i < len()`; panics otherwise, as a slice's index does).
    pub fn zone(&self, i: usize) -> Zone {
        let (r, k) = (self.records, self.record.get(i) as usize);
        let run = r.run_at(k);
        let label = self.labels.and_then(|l| l.get(run, r.site[k]));
        Zone {
            lane: self.lane,
            site: label.unwrap_or(0),
            depth: self.depth_of(i),
            run,
            op: self.ops.get(&run).copied().flatten(),
            start_cycles: r.start_at(k),
            end_cycles: r.end_at(k),
            value: (r.kind[k] == RecordKind::ValueZone).then_some(r.value_at(k) as u32),
        }
    }

    /// Zone `i`'s depth.
    fn depth_of(&self, i: usize) -> u16 {
        match self.depth[i / 2] >> (4 * (i % 2)) & 0xF {
            DEEP => {
                let deep = &self.deep;
                deep[deep.partition_point(|&(zone, _)| (zone as usize) < i)].1
            }
            d => d as u16,
        }
    }

    /// Zone `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Zone> {
        (i < self.len()).then(|| self.zone(i))
    }

    /// The first zone, if any.
    pub fn first(&self) -> Option<Zone> {
        self.get(0)
    }

    /// Every zone, in order.
    pub fn iter(&self) -> Iter<'_, 'a> {
        self.into_iter()
    }

    /// The zones' records, in the order the zones open.
    pub(crate) fn order(&self) -> &ZoneRecords {
        &self.record
    }

    /// The records of zones `from..to`, in the order the zones open.
    pub(crate) fn records_in_order(&self, from: usize, to: usize) -> Vec<u32> {
        self.record.range(from, to)
    }

    /// Zone `i`'s start, device cycles (without making the whole zone).
    pub fn start_cycles(&self, i: usize) -> u64 {
        self.records.start_at(self.record.get(i) as usize)
    }

    /// Zone `i`'s end, device cycles (without making the whole zone).
    pub fn end_cycles(&self, i: usize) -> u64 {
        self.records.end_at(self.record.get(i) as usize)
    }
}

impl ZoneList for Zones<'_> {
    fn len(&self) -> usize {
        Zones::len(self)
    }

    fn zone(&self, i: usize) -> Zone {
        Zones::zone(self, i)
    }
}

impl<'z, 'a> IntoIterator for &'z Zones<'a> {
    type Item = Zone;
    type IntoIter = Iter<'z, 'a>;

    fn into_iter(self) -> Iter<'z, 'a> {
        Iter {
            zones: self,
            next: 0,
            end: self.len(),
        }
    }
}

/// [`Zones`] in order (`for z in view.zones()`).
#[derive(Clone, Debug)]
pub struct Iter<'z, 'a> {
    zones: &'z Zones<'a>,
    next: usize,
    end: usize,
}

impl Iterator for Iter<'_, '_> {
    type Item = Zone;

    fn next(&mut self) -> Option<Zone> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.zones.zone(self.next - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_, '_> {}

impl DoubleEndedIterator for Iter<'_, '_> {
    fn next_back(&mut self) -> Option<Zone> {
        (self.next < self.end).then(|| {
            self.end -= 1;
            self.zones.zone(self.end)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three records in ring order (as they close): a value zone of run 1, the zone of run 1
    /// that holds it, and a zone of run 2.
    fn records() -> Records {
        let mut r = Records::new();
        r.push(RecordKind::ValueZone, 4, 110, 120, 0x1_0000_0007, 0, 1);
        r.push(RecordKind::Zone, 3, 100, 150, 0, 0, 1);
        r.push(RecordKind::Zone, 5, 200, 260, 0, 0, 2);
        r
    }

    /// Labels of the records' (run, site)s, sorted by key; site 5 of run 2 has none.
    fn labels() -> RingLabels {
        RingLabels::from_sorted(&[((1, 3), 30), ((1, 4), 31)])
    }

    #[test]
    fn a_zone_reads_its_record_its_label_depth_and_its_runs_op() {
        let (r, l) = (records(), labels());
        let mut z = Zones::new(&r, Some(&l), 7);
        let mut asked = Vec::new();
        let mut op = |run: u32| {
            asked.push(run);
            (run == 1).then_some(40)
        };
        z.push(1, 0, &mut op);
        z.push(0, 1, &mut op);
        z.push(2, 0, &mut op);
        assert_eq!(asked, [1, 2], "the op is asked once per run");
        assert_eq!(z.len(), 3);
        let outer = Zone {
            lane: 7,
            site: 30,
            depth: 0,
            run: 1,
            op: Some(40),
            start_cycles: 100,
            end_cycles: 150,
            value: None,
        };
        assert_eq!(z.zone(0), outer);
        assert_eq!(
            z.zone(1),
            Zone {
                site: 31,
                depth: 1,
                start_cycles: 110,
                end_cycles: 120,
                value: Some(7),
                ..outer
            },
            "a value zone keeps its value's low 32 bits"
        );
        let last = z.zone(2);
        assert_eq!((last.op, last.site), (None, 0), "run 2: no op, no label");
        assert_eq!((z.start_cycles(2), z.end_cycles(2)), (200, 260));
        assert_eq!(z.get(3), None);
        assert_eq!(z.first(), Some(outer));
        let forward: Vec<u64> = z.iter().map(|z| z.start_cycles).collect();
        let back: Vec<u64> = z.iter().rev().map(|z| z.start_cycles).collect();
        assert_eq!((forward, back), (vec![100, 110, 200], vec![200, 110, 100]));
        assert_eq!(z.iter().len(), 3);
        let mut unlabelled = Zones::new(&r, None, 7);
        unlabelled.push(1, 0, |_| None);
        assert_eq!(unlabelled.zone(0).site, 0, "no table: label 0");
    }

    #[test]
    fn a_slice_and_a_views_zones_read_alike() {
        let (r, l) = (records(), labels());
        let mut z = Zones::new(&r, Some(&l), 0);
        for (i, depth) in [(1, 0), (0, 1), (2, 0)] {
            z.push(i, depth, |_| None);
        }
        let held: Vec<Zone> = z.iter().collect();
        fn all(l: &(impl ZoneList + ?Sized)) -> Vec<Zone> {
            l.iter().collect()
        }
        assert_eq!(all(&z), all(&held[..]));
        assert_eq!(ZoneList::zone(&z, 1), held[1]);
    }

    /// Depths of 15 and more are kept beside the half byte a zone: each zone reads its own.
    #[test]
    fn deep_zones_read_their_own_depth() {
        let mut r = Records::new();
        let depths = [0u16, 14, 15, 16, 3, 1000, 255, u16::MAX, 7];
        for i in 0..depths.len() as u64 {
            r.push(RecordKind::Zone, 1, i, i + 1, 0, 0, 1);
        }
        let mut z = Zones::new(&r, None, 0);
        for (i, &d) in depths.iter().enumerate() {
            z.push_depth(i, d, |_| None);
        }
        let all: Vec<u32> = (0..depths.len() as u32).collect();
        z.set_records(ZoneRecords::from_slice(&all));
        let got: Vec<u16> = z.iter().map(|z| z.depth).collect();
        assert_eq!(got, depths);
        assert_eq!(z.deep.len(), 5);
        assert_eq!(z.depth.len(), 5, "half a byte a zone");
    }

    /// What a view holds per zone (issue 41): a zone made whole is 48 bytes; a view makes
    /// its half-byte depth and takes its record packed from the markers' opening order, about
    /// a byte (`zone_records::tests`).
    #[test]
    fn a_view_holds_under_two_bytes_a_zone() {
        let n = 10_000u32;
        let mut r = Records::new();
        for i in 0..n as u64 {
            r.push(RecordKind::Zone, 1, 10 * i, 10 * i + 5, 0, 0, 1);
        }
        let mut z = Zones::new(&r, None, 0);
        z.reserve(n as usize);
        for i in 0..n as usize {
            z.push_depth(i, 0, |_| None);
        }
        let all: Vec<u32> = (0..n).collect();
        z.set_records(ZoneRecords::from_slice(&all));
        let held = z.depth.capacity() + z.record.held_bytes();
        // Half a byte of depth, a byte of record, 4 bytes of base a block of 32.
        assert!(
            held as f64 / (n as f64) < 1.63,
            "{held} bytes for {n} zones"
        );
        assert_eq!(z.zone(9_999).start_cycles, 99_990);
    }
}
