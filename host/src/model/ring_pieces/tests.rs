use super::*;
use crate::decode::RecordKind::*;
use crate::decode::NO_RUN;
use crate::markers::{markers, MarkerType};

/// A small xorshift: `next(n)` is in `0..n`.
fn random(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

/// `r` in pieces of random sizes (1 to `most` records).
fn cut(r: &Records, most: u64, next: &mut impl FnMut(u64) -> u64) -> Vec<Records> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < r.len() {
        let to = (at + 1 + next(most) as usize).min(r.len());
        pieces.push(slice(r, at, to));
        at = to;
    }
    pieces
}

/// Both passes over `r`, each in pieces of random sizes: the pieces, or the count of long
/// zones past `cap`.
fn in_pieces(
    r: &Records,
    window: usize,
    cap: usize,
    next: &mut impl FnMut(u64) -> u64,
) -> std::result::Result<Vec<Piece>, u64> {
    let mut first = LongZones::new(window, cap);
    for piece in cut(r, 20, next) {
        first.push(&piece);
    }
    let mut second = Openings::new(0, first.finish()?);
    let mut out = Vec::new();
    for piece in cut(r, 20, next) {
        out.push(second.push(&piece).expect("the same ring"));
    }
    out.push(second.finish().expect("the same ring"));
    Ok(out)
}

/// A ring as the runtime writes one (zones at their close, children first) with points, time
/// anchors, runs and losses between them, now and then a zone that overlaps its neighbour,
/// and, when `reversed`, every record in reverse (malformed: every opening late).
fn ring(len: u64, reversed: bool, next: &mut impl FnMut(u64) -> u64) -> Records {
    let (mut r, mut open, mut t, mut run) = (Records::new(), Vec::new(), 0u64, NO_RUN);
    for _ in 0..len {
        t += next(3);
        match next(9) {
            0..=2 => open.push(t),
            3..=5 if !open.is_empty() => {
                let start = open.pop().unwrap();
                r.push(Zone, 1, start, t, 0, 0, run);
            }
            6 => {
                let kind = [Event, Data, Sum, Time][next(4) as usize];
                r.push(kind, 2, t, t, next(2) * 99, next(2) as u32, run);
            }
            7 => {
                run = run.wrapping_add(1);
                r.push(Run, 0, t, t, run as u64, 0, run);
                if next(4) == 0 {
                    r.push(Loss, 0, t, t + 1, 5, 3, run);
                }
            }
            _ => {
                let start = t.saturating_sub(next(5));
                r.push(ValueZone, 3, start, t + next(3), 7, 0, run);
            }
        }
    }
    while let Some(start) = open.pop() {
        r.push(Zone, 1, start, t, 0, 0, run);
    }
    if reversed {
        let mut back = Records::new();
        for i in (0..r.len()).rev() {
            Row::of(&r, i, 0).push_to(&mut back);
        }
        r = back;
    }
    r
}

/// The openings of `r` in order and each zone's depth, as the whole ring's markers give them
/// (what a view of the whole ring holds).
fn whole(r: &Records) -> (Vec<u64>, Vec<u16>) {
    let (mut rows, mut depths, mut depth) = (Vec::new(), Vec::new(), 0u16);
    for m in markers(r) {
        match m.kind {
            MarkerType::ZoneEnd => depth -= 1,
            MarkerType::ZoneStart => {
                rows.push(m.record as u64);
                depths.push(depth);
                depth += 1;
            }
            _ => rows.push(m.record as u64),
        }
    }
    (rows, depths)
}

/// Taken in pieces of any size with any window, a ring's openings come in the whole ring's
/// order, each the record it was, with the whole ring's depths, and its unmarked records
/// come in ring order: nested, touching, identical and overlapping zones, points at the
/// same times as zones' starts and ends, runs, losses, and rings in reverse.
#[test]
fn pieces_are_the_whole_rings_openings_in_order() {
    let mut next = random(0x2545_f491_4f6c_dd1d);
    for ring_no in 0..300u64 {
        let r = ring((ring_no % 50) * 4, ring_no % 7 == 0, &mut next);
        let (rows, depths) = whole(&r);
        let window = [1, 2, 3, 7, 64][ring_no as usize % 5];
        let pieces = in_pieces(&r, window, usize::MAX, &mut next).unwrap();
        let got_rows: Vec<u64> = pieces.iter().flat_map(|p| p.rows.clone()).collect();
        let got_depths: Vec<u16> = pieces.iter().flat_map(|p| p.depth.clone()).collect();
        assert_eq!(got_rows, rows, "ring {ring_no}, window {window}");
        assert_eq!(got_depths, depths, "ring {ring_no}, window {window}");
        let mut unmarked = Vec::new();
        for p in &pieces {
            for (j, &row) in p.rows.iter().enumerate() {
                let (got, want) = (Row::of(&p.records, j, row), Row::of(&r, row as usize, row));
                assert_eq!(got, want, "ring {ring_no}: opening {j} is its record");
            }
            for j in p.rows.len()..p.records.len() {
                unmarked.push(Row::of(&p.records, j, 0));
            }
        }
        let want: Vec<Row> = (0..r.len())
            .filter(|&i| !is_marked(r.kind()[i]))
            .map(|i| Row::of(&r, i, 0))
            .collect();
        assert_eq!(
            unmarked, want,
            "ring {ring_no}: the unmarked records in ring order"
        );
    }
}

/// Only a zone that holds more than a window of records is long: a kernel zone around
/// 10,000 short zones is one; parents after their one child never are; a ring in reverse
/// has every record but the first window's long, and past the cap it is not taken in pieces.
#[test]
fn only_zones_longer_than_the_window_are_listed() {
    let long = |r: &Records, window, cap| {
        let mut first = LongZones::new(window, cap);
        first.push(r);
        first.finish()
    };
    let mut flat = Records::new();
    for k in 0..10_000 {
        flat.push(Zone, 1, 10 + 5 * k, 14 + 5 * k, 0, 0, NO_RUN);
    }
    flat.push(Zone, 2, 0, 60_000, 0, 0, NO_RUN);
    let listed = long(&flat, 64, 100).unwrap();
    let listed = listed.rows();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].row, listed[0].record.site, listed[0].record.end),
        (10_000, 2, 60_000)
    );
    let mut pairs = Records::new();
    for k in 0..1_000 {
        pairs.push(Zone, 1, 10 * k + 2, 10 * k + 5, 0, 0, NO_RUN);
        pairs.push(Zone, 2, 10 * k, 10 * k + 8, 0, 0, NO_RUN);
    }
    assert_eq!(long(&pairs, 1, 100).unwrap().rows().len(), 0);
    let mut back = Records::new();
    for k in (0..1_000).rev() {
        back.push(Zone, 1, 10 * k, 10 * k + 5, 0, 0, NO_RUN);
    }
    assert_eq!(long(&back, 64, 1_000).unwrap().rows().len(), 1_000 - 65);
    assert_eq!(long(&back, 64, 100), Err(1_000 - 65));
}

/// What the second pass holds is at most twice the window of records, however long the
/// ring and however large its pieces: a kernel zone around 100,000 short zones, read in
/// pieces of 100 and of 30,000 with a window of 64.
#[test]
fn the_second_pass_holds_twice_the_window() {
    let mut r = Records::new();
    for k in 0..100_000 {
        r.push(Zone, 1, 10 + 5 * k, 14 + 5 * k, 0, 0, NO_RUN);
    }
    r.push(Zone, 2, 0, 600_000, 0, 0, NO_RUN);
    for size in [100, 30_000] {
        let mut first = LongZones::new(64, 10);
        first.push(&r);
        let mut second = Openings::new(0, first.finish().unwrap());
        let mut given = 0;
        for from in (0..r.len()).step_by(size) {
            let piece = second
                .push(&slice(&r, from, (from + size).min(r.len())))
                .unwrap();
            assert!(second.held() <= 64, "held {} after a piece", second.held());
            given += piece.rows.len();
            if from == 0 {
                assert_eq!(piece.rows[0], 100_000, "the kernel zone opens first");
                assert_eq!(piece.depth[..2], [0, 1]);
            }
        }
        given += second.finish().unwrap().rows.len();
        assert_eq!(given, r.len());
        assert!(second.most_held() <= 2 * 64, "held {}", second.most_held());
    }
}

/// A second reading that is not the first's (a long zone gone, or a new one) is an error,
/// not a wrong order.
#[test]
fn a_ring_that_changed_is_an_error() {
    let mut kernel = Records::new();
    for k in 0..100 {
        kernel.push(Zone, 1, 10 + 5 * k, 14 + 5 * k, 0, 0, NO_RUN);
    }
    let flat = kernel.clone();
    kernel.push(Zone, 2, 0, 1_000, 0, 0, NO_RUN);
    let long = |r: &Records| {
        let mut first = LongZones::new(8, 10);
        first.push(r);
        first.finish().unwrap()
    };
    let mut gone = Openings::new(3, long(&kernel));
    gone.push(&flat).unwrap();
    let e = gone.finish().unwrap_err();
    assert!(matches!(e, Error::Reread { ring: 3, .. }), "{e}");
    let mut new = Openings::new(4, long(&flat));
    assert!(matches!(
        new.push(&kernel),
        Err(Error::Reread { ring: 4, .. })
    ));
}

/// A profile's rings taken in pieces give views whose zones and marks, in turn, are the
/// whole ring's view's (sites, depths, runs, ops, cycles, host times, values), and whose
/// last piece's lane uses the whole ring's nesting levels.
#[test]
fn piece_views_are_the_whole_views_in_turn() {
    let p = crate::model::fixture::profile_at(0, crate::model::fixture::ARCH, true);
    let mut next = random(7);
    for index in 0..p.ring_count() {
        let whole = p.ring(index);
        let slot = &p.readout.rings[index];
        for window in [1, 3, 16] {
            let mut first = LongZones::new(window, usize::MAX);
            first.push(&slot.records);
            let mut second = Openings::new(index, first.finish().unwrap());
            let (mut zones, mut marks, mut levels) = (Vec::new(), Vec::new(), 0);
            let mut pieces: Vec<Piece> = cut(&slot.records, 9, &mut next)
                .iter()
                .map(|r| second.push(r).unwrap())
                .collect();
            pieces.push(second.finish().unwrap());
            for piece in pieces {
                let mut ring = slot.clone();
                ring.records = piece.records;
                let v = view(&p, index, &ring, &piece.depth, second.levels());
                zones.extend(v.zones.iter());
                marks.extend(v.marks.iter().cloned());
                levels = v.lane.depth;
            }
            assert!(!whole.zones.is_empty());
            let want: Vec<_> = whole.zones.iter().collect();
            assert_eq!(zones, want, "ring {index}, window {window}");
            assert_eq!(format!("{marks:?}"), format!("{:?}", whole.marks));
            assert_eq!(levels, whole.lane.depth);
        }
    }
}
