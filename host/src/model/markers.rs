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
/// are taken: what is held is the records' opening order (4 bytes a record) and the zones
/// open at the time (a heap as deep as the nesting), not the markers (16 bytes each, two a
/// zone). What the view keeps (`Markers::keep`) is packed into the order's memory as it
/// is read.
pub fn markers(r: &Records) -> Markers<'_> {
    let is_marked = |k: RecordKind| k.is_zone() || point(k).is_some();
    // Sized before it is filled: a collected filter grows by doubling, up to twice the
    // rows (issue 41).
    let marked = r.kind().iter().filter(|&&k| is_marked(k)).count();
    let mut order = Vec::with_capacity(marked);
    order.extend((0..r.len() as u32).filter(|&i| is_marked(r.kind[i as usize])));
    opening_order(r, order, None)
}

/// The markers of `r` whose zones' opening order `zones` is already made (a view's, which
/// [`markers`] made): only the point records are ordered here, and taken in turn with the
/// zones by the same key, so the markers are [`markers`]' own. A ring's outputs that want
/// its markers beside its view then hold 4 bytes a point record, not 4 a record (the
/// device CSV's: 64 MB for a ring of 16 M zones, issue 41). Nothing is kept
/// ([`Markers::keep`] is for the view's making).
pub(crate) fn markers_after_view<'r>(r: &'r Records, zones: &'r ZoneRecords) -> Markers<'r> {
    let points = (0..r.len() as u32).filter(|&i| point(r.kind[i as usize]).is_some());
    opening_order(r, points.collect(), Some(zones))
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

/// [`Markers`] over `rows` put in opening order, and `zones` (already in it) when given.
fn opening_order<'r>(
    r: &'r Records,
    mut rows: Vec<u32>,
    zones: Option<&'r ZoneRecords>,
) -> Markers<'r> {
    rows.sort_unstable_by_key(|&i| key(r, i));
    Markers {
        r,
        order: rows,
        read: 0,
        zones: zones.map(|z| (z, 0)),
        packer: Packer::default(),
        open: BinaryHeap::new(),
        pending: None,
    }
}

/// The marker of a point record's kind (`None`: a zone, or no marker).
fn point(k: RecordKind) -> Option<MarkerType> {
    match k {
        RecordKind::Event => Some(MarkerType::TsEvent),
        RecordKind::Data => Some(MarkerType::TsData),
        RecordKind::Sum => Some(MarkerType::ZoneTotal),
        _ => None,
    }
}

/// [`markers`]' iterator.
pub struct Markers<'r> {
    r: &'r Records,
    /// The openings; `order[..read]` are taken, the words before reused by [`Markers::keep`]
    /// (with `zones`: the point records' openings, `read` less the zones taken of them).
    order: Vec<u32>,
    /// Openings taken.
    read: usize,
    /// The zones' openings when they were made already ([`markers_after_view`]), and how
    /// many of them are taken.
    zones: Option<(&'r ZoneRecords, usize)>,
    packer: Packer,
    /// Open zones by (end, innermost first).
    open: BinaryHeap<Reverse<(u64, Reverse<u64>, u32)>>,
    /// The opening taken from `order` while zones that end before it were closed.
    pending: Option<(usize, u32)>,
}

impl Markers<'_> {
    /// Keeps `record`, a record whose opening was taken, packed in the opening order's own
    /// memory (what is kept is in the order it is given: [`Markers::into_kept`]).
    pub(crate) fn keep(&mut self, record: u32) {
        // Each opening is taken once and kept at most once, so fewer are kept than read:
        // the packer writes only words of openings already taken.
        assert!(self.packer.len() < self.read, "keep only what was taken");
        assert!(self.zones.is_none(), "a view's zones are kept once");
        self.packer.push(record, &mut self.order[..self.read]);
    }

    /// What [`Markers::keep`] kept, in order.
    pub(crate) fn into_kept(self) -> ZoneRecords {
        self.packer.finish(self.order)
    }

    fn take_opening(&mut self) -> Option<(usize, u32)> {
        let i = match &mut self.zones {
            None => *self.order.get(self.read)?,
            Some((zones, taken)) => {
                let zone = (*taken < zones.len()).then(|| zones.get(*taken));
                let point = self.order.get(self.read - *taken).copied();
                match (zone, point) {
                    (Some(z), Some(p)) if key(self.r, p) < key(self.r, z) => p,
                    (Some(z), _) => {
                        *taken += 1;
                        z
                    }
                    (None, p) => p?,
                }
            }
        };
        self.read += 1;
        Some((self.read - 1, i))
    }
}

impl Iterator for Markers<'_> {
    type Item = Marker;

    fn next(&mut self) -> Option<Marker> {
        let r = self.r;
        let next = self.pending.take().or_else(|| self.take_opening());
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

    /// A view keeps its zones' records packed in the opening order's own memory (issue 41:
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

    /// The markers of a ring whose view made its zones' order are the ones made from its
    /// records alone: nested, touching, identical and overlapping zones, events, data and
    /// sums at the same times as zones' starts and ends (issue 41: the device CSV takes the
    /// view's order instead of making a second one).
    #[test]
    fn markers_after_the_view_are_the_markers() {
        use RecordKind::*;
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for ring in 0..200 {
            // Zones closed as a ring holds them (at their close, children first), with
            // points between them, and now and then a zone that overlaps its neighbour.
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
            let mut made = markers(&r);
            while let Some(m) = made.next() {
                if m.kind == MarkerType::ZoneStart {
                    made.keep(m.record);
                }
            }
            let zones = made.into_kept();
            assert_eq!(zones.len(), r.zones());
            let after = markers_after_view(&r, &zones).collect::<Vec<_>>();
            assert_eq!(after, markers(&r).collect::<Vec<_>>(), "ring {ring}");
        }
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
