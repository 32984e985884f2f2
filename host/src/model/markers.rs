//! From records (zones shipped whole, at their close) to a time-ordered marker sequence
//! (zone starts and ends interleaved), as timeline formats want it.
//!
//! A ring holds a zone when it *closes*, so children come before their parents. Markers are
//! ordered by time; at equal times a zone that ended is closed before one that starts, an
//! enclosing zone opens before the zones it contains and closes after them, so properly
//! nested zones stay properly nested.

use crate::decode::{RecordKind, Records};
use crate::model::zone_records::{Packer, ZoneRecords};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// tt-metal's marker (packet) types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum MarkerType {
    /// A zone opens (at its start time).
    ZoneStart = 0,
    /// A zone closes (at its end time).
    ZoneEnd = 1,
    /// A sum zone's total cycles and count, at the time it was emitted.
    ZoneTotal = 2,
    /// Timestamped 64-bit data.
    TsData = 3,
    /// A point event.
    TsEvent = 4,
}

impl MarkerType {
    /// The `type` column of `profile_log_device.csv`.
    pub const fn name(self) -> &'static str {
        match self {
            MarkerType::ZoneStart => "ZONE_START",
            MarkerType::ZoneEnd => "ZONE_END",
            MarkerType::ZoneTotal => "ZONE_TOTAL",
            MarkerType::TsData => "TS_DATA",
            MarkerType::TsEvent => "TS_EVENT",
        }
    }
}

/// One marker: its type, its time, and the record it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// What the marker is.
    pub kind: MarkerType,
    /// When, device cycles.
    pub time: u64,
    /// Index of the record in the ring's [`Records`] it comes from.
    pub record: u32,
}

/// The markers of one ring's records, in time order (see the module docs), made as they
/// are taken. A ring holds its records as they close, so in ring order most openings are
/// already in opening order: a zone that opens before the one it follows (a parent after
/// its children, an overlapping or malformed zone) is *late*. What is held is the late
/// records in opening order (4 bytes each), a bit a record saying which, and the zones open
/// at the time (a heap as deep as the nesting); the openings are the ring's other marked
/// records, in ring order, merged with the late ones (issue 41: every record's opening
/// order, 4 bytes a record, was most of a long ring's view while it was made). What the
/// view keeps (`Markers::keep`) is packed a byte a zone.
pub fn markers(r: &Records) -> Markers<'_> {
    let n = r.len();
    let mut late_rows = vec![0u64; n.div_ceil(64)];
    let mut late = Vec::new();
    let mut last = None;
    for (i, &k) in r.kind().iter().enumerate() {
        if !is_marked(k) {
            continue;
        }
        let key = key(r, i as u32);
        if last.is_some_and(|last| key < last) {
            late.push(i as u32);
            late_rows[i / 64] |= 1 << (i % 64);
        } else {
            last = Some(key);
        }
    }
    opening_order(
        r,
        late,
        Openings::Ring {
            row: 0,
            late: late_rows,
        },
    )
}

/// The markers of `r` whose zones' opening order `zones` is already made (a view's, which
/// [`markers`] made): only the point records are ordered here, and taken in turn with the
/// zones by the same key, so the markers are [`markers`]' own. A ring's outputs that want
/// its markers beside its view then hold 4 bytes a point record, nothing a zone (the
/// device CSV made a second order of every record: 64 MB for a ring of 16 M zones, issue
/// 41). Nothing is kept ([`Markers::keep`] is for the view's making).
pub(crate) fn markers_after_view<'r>(r: &'r Records, zones: &'r ZoneRecords) -> Markers<'r> {
    let points = (0..r.len() as u32).filter(|&i| point(r.kind[i as usize]).is_some());
    opening_order(r, points.collect(), Openings::View { zones, taken: 0 })
}

/// The markers of one piece of a ring given in pieces ([`crate::ring_pieces`]): `r`'s first
/// `open.len()` records are the zones still open after the ring's earlier pieces, `open[j]`
/// the opening number of record `j` ([`Markers::into_open`] gave both), and the rest are
/// the piece's records, its openings in opening order (then unmarked records); `taken`
/// openings came before. Unless the piece is the ring's `last`, the markers stop after its
/// last opening: a zone still open may close after the next piece's first opening. The
/// pieces' markers, in turn, are then the whole ring's [`markers`].
fn markers_of_piece<'r>(r: &'r Records, open: &[u64], taken: usize, last: bool) -> Markers<'r> {
    let mut m = opening_order(r, Vec::new(), Openings::Piece { row: open.len() });
    m.taken = taken;
    m.last = last;
    for (j, &seq) in open.iter().enumerate() {
        m.open.push(Reverse((r.end_at(j), Reverse(seq), j as u32)));
    }
    m
}

/// What a ring given in pieces carries from one piece's markers to the next: the zones
/// still open (their records, and their opening numbers) and the count of openings taken.
/// It holds the zones open at a piece's end, as many as the ring nests (a malformed ring's
/// overlapping zones stay open too, as they do in [`markers`]' own heap).
#[derive(Default)]
pub(crate) struct Carry {
    records: Records,
    seq: Vec<u64>,
    taken: usize,
}

impl Carry {
    /// The records the markers of the ring's next piece are read from: the zones still
    /// open, then `piece`'s records (its openings in opening order, [`crate::ring_pieces`]).
    /// After the ring's first piece, start again from `Carry::default()`.
    pub(crate) fn join(&mut self, piece: &Records) -> Records {
        let mut joined = std::mem::take(&mut self.records);
        for i in 0..piece.len() {
            if let Some(row) = piece.row(i) {
                joined.push_row(&row);
            }
        }
        joined
    }

    /// The markers of `joined` ([`Carry::join`]): the whole ring's next ones, stopping after
    /// the piece's last opening unless it is the ring's `last`.
    pub(crate) fn markers<'r>(&self, joined: &'r Records, last: bool) -> Markers<'r> {
        markers_of_piece(joined, &self.seq, self.taken, last)
    }

    /// Keeps the zones `done` (the markers of `joined`, all taken) left open, for the next
    /// piece.
    pub(crate) fn keep_open(&mut self, joined: &Records, done: Markers) {
        let (open, taken) = done.into_open();
        self.taken = taken;
        self.seq.clear();
        for (i, seq) in open {
            if let Some(row) = joined.row(i as usize) {
                self.records.push_row(&row);
                self.seq.push(seq);
            }
        }
    }
}

/// Whether a record of kind `k` has markers (a zone, or a point record).
pub(crate) fn is_marked(k: RecordKind) -> bool {
    k.is_zone() || point(k).is_some()
}

/// Record `i`'s place in opening order: (start, longest first, outermost first = later in
/// the ring first).
fn key(r: &Records, i: u32) -> (u64, Reverse<u64>, Reverse<u32>) {
    (
        r.start_at(i as usize),
        Reverse(r.end_at(i as usize)),
        Reverse(i),
    )
}

/// [`Markers`] over `openings` merged with `late` (put in opening order here).
fn opening_order<'r>(r: &'r Records, mut late: Vec<u32>, openings: Openings<'r>) -> Markers<'r> {
    late.sort_unstable_by_key(|&i| key(r, i));
    Markers {
        r,
        openings,
        late,
        late_taken: 0,
        taken: 0,
        kept: Vec::new(),
        packer: Packer::default(),
        open: BinaryHeap::new(),
        pending: None,
        last: true,
    }
}

/// The marker of a point record's kind (`None`: a zone, or no marker).
pub(crate) fn point(k: RecordKind) -> Option<MarkerType> {
    match k {
        RecordKind::Event => Some(MarkerType::TsEvent),
        RecordKind::Data => Some(MarkerType::TsData),
        RecordKind::Sum => Some(MarkerType::ZoneTotal),
        _ => None,
    }
}

/// The openings already in opening order, which [`Markers`] merges with its late ones.
enum Openings<'r> {
    /// The ring's marked records in ring order, but the late ones (a bit a record); `row`:
    /// the next to look at.
    Ring { row: usize, late: Vec<u64> },
    /// A view's zones, `taken` of them taken.
    View {
        zones: &'r ZoneRecords,
        taken: usize,
    },
    /// A piece's records, already in opening order ([`markers_of_piece`]); `row`: the next
    /// to look at.
    Piece { row: usize },
}

/// [`markers`]' iterator.
pub struct Markers<'r> {
    r: &'r Records,
    openings: Openings<'r>,
    /// The openings out of place in `openings`, in opening order; `late_taken` of them
    /// taken.
    late: Vec<u32>,
    late_taken: usize,
    /// Openings taken.
    taken: usize,
    /// What [`Markers::keep`] packed (a byte a zone, made on the first).
    kept: Vec<u32>,
    packer: Packer,
    /// Open zones by (end, innermost first).
    open: BinaryHeap<Reverse<(u64, Reverse<u64>, u32)>>,
    /// The opening taken while zones that end before it were closed.
    pending: Option<(usize, u32)>,
    /// Whether the records end the ring (else the zones open after the last opening are
    /// left open: [`markers_of_piece`]).
    last: bool,
}

impl Markers<'_> {
    /// Keeps `record`, the record of a zone whose opening was taken, packed (what is kept is
    /// in the order it is given: [`Markers::into_kept`]).
    pub(crate) fn keep(&mut self, record: u32) {
        assert!(self.packer.len() < self.taken, "keep only what was taken");
        assert!(
            matches!(self.openings, Openings::Ring { .. }),
            "a view's zones are kept once"
        );
        if self.kept.is_empty() {
            // A byte a zone of the ring, the most that can be kept.
            self.kept = vec![0; self.r.zones().div_ceil(4)];
        }
        self.packer.push(record, &mut self.kept);
    }

    /// What [`Markers::keep`] kept, in order.
    pub(crate) fn into_kept(self) -> ZoneRecords {
        self.packer.finish(self.kept)
    }

    /// The zones still open after the markers taken (the record of each, and its opening
    /// number), and the number of openings taken: what the ring's next piece starts from
    /// ([`markers_of_piece`]).
    fn into_open(self) -> (Vec<(u32, u64)>, usize) {
        let open = self
            .open
            .into_iter()
            .map(|Reverse((_, Reverse(seq), i))| (i, seq))
            .collect();
        (open, self.taken)
    }

    /// How many openings are late (tests of what the markers hold).
    #[cfg(test)]
    fn late_len(&self) -> usize {
        self.late.len()
    }

    /// The next opening of [`Markers::openings`], not taken.
    fn peek_in_order(&mut self) -> Option<u32> {
        match &mut self.openings {
            Openings::Ring { row, late } => {
                let kinds = self.r.kind();
                while let Some(&k) = kinds.get(*row) {
                    let is_late = late[*row / 64] >> (*row % 64) & 1 == 1;
                    if !is_late && is_marked(k) {
                        return Some(*row as u32);
                    }
                    *row += 1;
                }
                None
            }
            Openings::View { zones, taken } => (*taken < zones.len()).then(|| zones.get(*taken)),
            Openings::Piece { row } => {
                let kinds = self.r.kind();
                while let Some(&k) = kinds.get(*row) {
                    if is_marked(k) {
                        return Some(*row as u32);
                    }
                    *row += 1;
                }
                None
            }
        }
    }

    fn take_opening(&mut self) -> Option<(usize, u32)> {
        let in_order = self.peek_in_order();
        let late = self.late.get(self.late_taken).copied();
        let i = match (in_order, late) {
            (Some(a), Some(b)) if key(self.r, b) < key(self.r, a) => {
                self.late_taken += 1;
                b
            }
            (Some(a), _) => {
                match &mut self.openings {
                    Openings::Ring { row, .. } | Openings::Piece { row } => *row += 1,
                    Openings::View { taken, .. } => *taken += 1,
                }
                a
            }
            (None, b) => {
                self.late_taken += 1;
                b?
            }
        };
        self.taken += 1;
        Some((self.taken - 1, i))
    }
}

impl Iterator for Markers<'_> {
    type Item = Marker;

    fn next(&mut self) -> Option<Marker> {
        let r = self.r;
        let next = self.pending.take().or_else(|| self.take_opening());
        if next.is_none() && !self.last {
            return None;
        }
        // Zones that end at or before the next opening (all of them after the last) close
        // first.
        let until = next.map_or(u64::MAX, |(_, i)| r.start_at(i as usize));
        if let Some(&Reverse((end, _, i))) = self.open.peek() {
            if end <= until {
                self.open.pop();
                self.pending = next;
                return Some(Marker {
                    kind: MarkerType::ZoneEnd,
                    time: end,
                    record: i,
                });
            }
        }
        let (seq, i) = next?;
        let k = r.kind[i as usize];
        Some(match point(k) {
            Some(kind) => Marker {
                kind,
                time: r.end_at(i as usize),
                record: i,
            },
            None => {
                self.open
                    .push(Reverse((r.end_at(i as usize), Reverse(seq as u64), i)));
                Marker {
                    kind: MarkerType::ZoneStart,
                    time: r.start_at(i as usize),
                    record: i,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::NO_RUN;

    fn records(zones: &[(RecordKind, u64, u64)]) -> Records {
        let mut r = Records::new();
        for (i, &(k, s, e)) in zones.iter().enumerate() {
            r.push(k, i as u16, s, e, 0, 0, NO_RUN);
        }
        r
    }

    fn seq(r: &Records) -> Vec<(u32, &'static str, u64)> {
        markers(r)
            .map(|m| (m.record, m.kind.name(), m.time))
            .collect()
    }

    /// A view keeps its zones' records packed, a byte a zone (issue 41:
    /// one ring's view held both, 4 bytes a zone more; the packing:
    /// `zone_records::tests`).
    #[test]
    fn kept_openings_come_back_in_order() {
        use RecordKind::*;
        let r = records(&[
            (Zone, 10, 20),
            (Event, 25, 25),
            (Zone, 10, 40),
            (Zone, 40, 41),
        ]);
        let mut it = markers(&r);
        let mut starts = Vec::new();
        while let Some(m) = it.next() {
            if m.kind == MarkerType::ZoneStart {
                it.keep(m.record);
                starts.push(m.record);
            }
        }
        let kept = it.into_kept();
        assert_eq!(kept.range(0, kept.len()), [2, 0, 3]);
        assert_eq!(kept.range(0, kept.len()), starts);
    }

    /// Ring `ring` of the rings the tests below read: zones closed as a ring holds them (at
    /// their close, children first), with points between them, now and then a zone that
    /// overlaps its neighbour, and every seventh ring malformed (every opening before the one
    /// it follows). Each record's value is its row.
    fn random_ring(ring: usize, next: &mut impl FnMut(u64) -> u64) -> Records {
        use RecordKind::*;
        let (mut r, mut open, mut t) = (Records::new(), Vec::new(), 0u64);
        for _ in 0..(ring % 40) * 4 {
            t += next(3);
            match next(6) {
                0 | 1 => open.push(t),
                2 | 3 if !open.is_empty() => {
                    let start = open.pop().unwrap();
                    r.push(Zone, 1, start, t, 0, 0, NO_RUN);
                }
                4 => {
                    let kind = [Event, Data, Sum, Time][next(4) as usize];
                    r.push(kind, 2, t, t, 0, 0, NO_RUN);
                }
                _ => {
                    let start = t.saturating_sub(next(5));
                    r.push(ValueZone, 3, start, t + next(3), 7, 0, NO_RUN);
                }
            }
        }
        while let Some(start) = open.pop() {
            r.push(Zone, 1, start, t, 0, 0, NO_RUN);
        }
        let rows: Vec<usize> = if ring.is_multiple_of(7) {
            (0..r.len()).rev().collect()
        } else {
            (0..r.len()).collect()
        };
        let mut out = Records::new();
        for (row, i) in rows.into_iter().enumerate() {
            let (s, e) = (r.start_at(i), r.end_at(i));
            out.push(r.kind[i], r.site[i], s, e, row as u64, 0, NO_RUN);
        }
        out
    }

    fn xorshift() -> impl FnMut(u64) -> u64 {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// The openings come in opening order (that of a sort of every marked record), and the
    /// markers of a ring whose view made its zones' order are the ones made from its
    /// records alone: nested, touching, identical and overlapping zones, events, data and
    /// sums at the same times as zones' starts and ends, and rings in reverse (issue 41:
    /// the openings are the ring's order merged with the late ones, and the device CSV
    /// takes the view's order instead of making a second one).
    #[test]
    fn markers_after_the_view_are_the_markers() {
        let mut next = xorshift();
        for ring in 0..200 {
            let r = random_ring(ring, &mut next);
            let mut made = markers(&r);
            let mut openings = Vec::new();
            while let Some(m) = made.next() {
                if m.kind != MarkerType::ZoneEnd {
                    openings.push(m.record);
                }
                if m.kind == MarkerType::ZoneStart {
                    made.keep(m.record);
                }
            }
            // Every marked record, in opening order (a sort of them all).
            let mut sorted: Vec<u32> = (0..r.len() as u32)
                .filter(|&i| is_marked(r.kind[i as usize]))
                .collect();
            sorted.sort_by_key(|&i| key(&r, i));
            assert_eq!(openings, sorted, "ring {ring}");
            let zones = made.into_kept();
            assert_eq!(zones.len(), r.zones());
            let after = markers_after_view(&r, &zones).collect::<Vec<_>>();
            assert_eq!(after, markers(&r).collect::<Vec<_>>(), "ring {ring}");
        }
    }

    /// A ring given in pieces ([`crate::ring_pieces`]: its openings in order, a piece at a
    /// time, of any size and window) has, piece by piece with the zones still open carried
    /// ([`Carry`]), the markers of the whole ring (issue 41: the device CSV of a long ring
    /// held all of it).
    #[test]
    fn pieces_markers_are_the_whole_rings() {
        use crate::ring_pieces::{slice, LongZones, Openings as InOrder};
        let mut next = xorshift();
        // (kind, time, the record's row in the whole ring).
        let of = |r: &Records, m: Marker| (m.kind, m.time, r.value_at(m.record as usize));
        for ring in 0..200 {
            let r = random_ring(ring, &mut next);
            let whole: Vec<_> = markers(&r).map(|m| of(&r, m)).collect();
            for (window, size) in [(1, 1), (2, 3), (5, 7), (64, 1), (3, 1_000)] {
                let mut first = LongZones::new(window, usize::MAX);
                first.push(&r);
                let mut in_order = InOrder::new(0, first.finish().unwrap());
                let mut pieces = Vec::new();
                for from in (0..r.len()).step_by(size) {
                    let to = (from + size).min(r.len());
                    pieces.push(in_order.push(&slice(&r, from, to)).unwrap().records);
                }
                pieces.push(in_order.finish().unwrap().records);
                let (mut carry, mut got) = (Carry::default(), Vec::new());
                let n = pieces.len();
                for (k, piece) in pieces.iter().enumerate() {
                    let joined = carry.join(piece);
                    let mut made = carry.markers(&joined, k + 1 == n);
                    got.extend(made.by_ref().map(|m| of(&joined, m)));
                    carry.keep_open(&joined, made);
                }
                assert_eq!(got, whole, "ring {ring}, window {window}, pieces of {size}");
            }
        }
    }

    /// A ring of short zones in a kernel zone has one late opening, the kernel zone; one of
    /// a parent and a child a step has the parents (issue 41: the markers held every
    /// record's opening, 4 bytes each).
    #[test]
    fn only_parents_are_late() {
        use RecordKind::*;
        let mut flat: Vec<(RecordKind, u64, u64)> = (0..10_000)
            .map(|k| (Zone, 10 + 5 * k, 14 + 5 * k))
            .collect();
        flat.push((Zone, 0, 60_000));
        assert_eq!(markers(&records(&flat)).late_len(), 1);
        let nested: Vec<(RecordKind, u64, u64)> = (0..1_000)
            .flat_map(|k| [(Zone, 10 * k + 2, 10 * k + 5), (Zone, 10 * k, 10 * k + 8)])
            .collect();
        assert_eq!(markers(&records(&nested)).late_len(), 1_000);
    }

    #[test]
    fn children_shipped_first_are_opened_inside_their_parents() {
        use RecordKind::*;
        // Ring order: child a, child b (touching a), event, parent p with the same start as a.
        let r = records(&[
            (Zone, 10, 20),
            (Zone, 20, 30),
            (Event, 25, 25),
            (Zone, 10, 40),
            (Zone, 40, 40),
        ]);
        assert_eq!(
            seq(&r),
            [
                (3, "ZONE_START", 10),
                (0, "ZONE_START", 10),
                (0, "ZONE_END", 20),
                (1, "ZONE_START", 20),
                (2, "TS_EVENT", 25),
                (1, "ZONE_END", 30),
                (3, "ZONE_END", 40),
                (4, "ZONE_START", 40),
                (4, "ZONE_END", 40),
            ]
        );
    }

    #[test]
    fn identical_spans_nest_by_ring_order_and_time_never_goes_back() {
        use RecordKind::*;
        let r = records(&[(Zone, 5, 9), (Zone, 5, 9), (Zone, 1, 9), (Sum, 9, 9)]);
        let s = seq(&r);
        assert_eq!(
            s.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            [
                (2, "ZONE_START"),
                (1, "ZONE_START"),
                (0, "ZONE_START"),
                (0, "ZONE_END"),
                (1, "ZONE_END"),
                (2, "ZONE_END"),
                (3, "ZONE_TOTAL"),
            ]
        );
        assert!(s.windows(2).all(|w| w[0].2 <= w[1].2));
    }
}
