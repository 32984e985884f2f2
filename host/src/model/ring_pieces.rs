//! A ring's zones in opening order, made from its records read a piece at a time (issue 41:
//! a ring's view holds every zone of the ring; this is the order a view of a bounded number
//! of zones needs).
//!
//! A ring holds its zones as they close, so a zone comes after the zones it contains: in
//! ring order most openings are already in opening order, and the ones that are not (a
//! parent after its children) are *late* ([`crate::markers`]). A late zone is *long* when it
//! opens before a record more than a window of `W` marked records (zones and point records)
//! earlier in the ring: only a zone that contains more than `W` records is. Two passes over
//! the ring then give every opening in order while holding at most `2 W` records:
//!
//! 1. [`LongZones`] reads the ring once, keeping the last `W` records' keys, and lists its
//!    long zones whole (at most the nesting depth times `N / W` of them in a ring of `N`
//!    records; a malformed ring can have more, and past a cap the ring is not taken in
//!    pieces: [`LongZones::finish`] says so).
//! 2. [`Openings`] reads it again, in pieces of any size, and after each piece gives the
//!    openings that no later record can precede: a record that is not long opens after
//!    every record more than `W` before it, so once the ring is read up to record `m`, every
//!    opening up to the largest key of records `..m - W` is final. The long zones are given
//!    from the first pass's list as their turn comes, and skipped when the second pass
//!    reaches them.
//!
//! Each piece ([`Piece`]) is its openings as a [`Records`] in opening order (then the
//! ring's unmarked records of that piece, in ring order), with each zone's nesting depth
//! (the zones still open carried from piece to piece), so the concatenated pieces are the
//! ring's [`crate::markers`] openings and its view's depths.

use crate::decode::{Records, TableRow};
use crate::error::{Error, Result};
use crate::markers::{is_marked, point};
use crate::model::zone_records::ZoneRecords;
use crate::profile::{Profile, RingView};
use crate::readout::RingReport;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The window a source that gives rings in pieces finds their long zones with: what the
/// second pass holds of a ring is about this many records beside the piece it is given.
pub const WINDOW: usize = 1 << 14;

/// The most long zones a source lists for a ring before it gives the ring whole instead (a
/// well-formed ring has a few; one whose records go back in time can have one a record).
pub const LONG_CAP: usize = 1 << 14;

/// Records a source holds of a ring before it hands them on as a piece (it hands them on
/// where its input's pieces end, so a piece may be larger).
pub const PIECE_ROWS: usize = 1 << 16;

/// A ring with fewer records than this is given whole: it is about a piece.
pub const LONG_RING: usize = 1 << 18;

/// The sizes a source gives rings in pieces by (smaller in tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// [`LONG_RING`].
    pub long_ring: usize,
    /// [`WINDOW`].
    pub window: usize,
    /// [`LONG_CAP`].
    pub cap: usize,
    /// [`PIECE_ROWS`].
    pub piece: usize,
}

impl Sizes {
    /// The constants above.
    pub(crate) const STANDARD: Sizes = Sizes {
        long_ring: LONG_RING,
        window: WINDOW,
        cap: LONG_CAP,
        piece: PIECE_ROWS,
    };
}

/// Hands each piece `read` gives to `piece` until one fails (the rest are read and not
/// handed on): what `read` returned and the rows handed, or the first error.
pub(crate) fn hand_on<T>(
    piece: &mut dyn FnMut(&Records) -> Result<()>,
    read: impl FnOnce(&mut dyn FnMut(Records)) -> Result<T>,
) -> Result<(T, usize)> {
    let (mut rows, mut failed) = (0, None);
    let read = read(&mut |r| {
        if failed.is_none() {
            rows += r.len();
            failed = piece(&r).err();
        }
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok((read, rows)),
    }
}

/// A record's place in opening order: (start, longest first, outermost first = later in the
/// ring first), as [`crate::markers`] orders it (`row` is its row in the whole ring).
type Key = (u64, Reverse<u64>, Reverse<u64>);

/// One record whole, with its row in the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Row in the whole ring (ring order).
    pub row: u64,
    /// The record.
    pub record: TableRow,
}

impl Row {
    /// Row `i` of `r`, row `row` of the ring (`i < r.len()`).
    pub fn of(r: &Records, i: usize, row: u64) -> Row {
        let record = r.row(i).unwrap_or_else(|| panic!("row {i} of {}", r.len()));
        Row { row, record }
    }

    fn key(&self) -> Key {
        (
            self.record.start,
            Reverse(self.record.end),
            Reverse(self.row),
        )
    }

    fn push_to(&self, out: &mut Records) {
        out.push_row(&self.record);
    }
}

/// The largest key of the marked records more than a window back.
#[derive(Clone, Debug)]
struct Lag {
    window: usize,
    /// The keys of the last `window` marked records, oldest first.
    recent: VecDeque<Key>,
    /// The largest key of the marked records before them.
    passed: Option<Key>,
}

impl Lag {
    fn new(window: usize) -> Lag {
        Lag {
            window: window.max(1),
            recent: VecDeque::new(),
            passed: None,
        }
    }

    /// Takes the next marked record's key; whether it is long (opens before a record more
    /// than the window back).
    fn push(&mut self, key: Key) -> bool {
        let long = self.passed.is_some_and(|p| key < p);
        self.recent.push_back(key);
        if self.recent.len() > self.window {
            let old = self.recent.pop_front();
            self.passed = self.passed.max(old);
        }
        long
    }
}

/// The first pass: a ring's long zones (see the module docs).
#[derive(Clone, Debug)]
pub struct LongZones {
    lag: Lag,
    cap: usize,
    rows: u64,
    long: Vec<Row>,
    /// Long records past the cap.
    over: u64,
}

impl LongZones {
    /// A ring read with a window of `window` marked records, listing at most `cap` long
    /// zones.
    pub fn new(window: usize, cap: usize) -> LongZones {
        LongZones {
            lag: Lag::new(window),
            cap,
            rows: 0,
            long: Vec::new(),
            over: 0,
        }
    }

    /// The ring's next records, `r` (the piece after the ones given before).
    pub fn push(&mut self, r: &Records) {
        for (i, &k) in r.kind().iter().enumerate() {
            let row = self.rows + i as u64;
            if !is_marked(k) {
                continue;
            }
            let key = (r.start_at(i), Reverse(r.end_at(i)), Reverse(row));
            if self.lag.push(key) {
                if self.long.len() < self.cap {
                    self.long.push(Row::of(r, i, row));
                } else {
                    self.over += 1;
                }
            }
        }
        self.rows += r.len() as u64;
    }

    /// The long zones, or `Err(n)`: the ring has `n` long records, more than the cap (take
    /// it whole).
    pub fn finish(mut self) -> std::result::Result<Long, u64> {
        if self.over > 0 {
            return Err(self.long.len() as u64 + self.over);
        }
        self.long.sort_unstable_by_key(Row::key);
        Ok(Long {
            window: self.lag.window,
            rows: self.long,
        })
    }
}

/// A ring's long zones ([`LongZones::finish`]): what its second pass ([`Openings`]) needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Long {
    /// The window they were found with.
    window: usize,
    /// The long zones, in opening order.
    rows: Vec<Row>,
}

impl Long {
    /// The long zones, in opening order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
}

/// One piece of a ring in opening order ([`Openings`]).
#[derive(Clone, Debug, Default)]
pub struct Piece {
    /// The openings (zones and point records) in opening order, then the piece's unmarked
    /// records (time anchors, runs, losses) in ring order.
    pub records: Records,
    /// Each opening's row in the whole ring, in the order of `records`' openings.
    pub rows: Vec<u64>,
    /// Each zone's nesting depth, in the order of `records`' zones.
    pub depth: Vec<u16>,
}

/// A zone still open: (end, innermost first = later opening first).
type Open = Reverse<(u64, Reverse<u64>)>;

/// The second pass: a ring's openings in order, a piece at a time (see the module docs).
#[derive(Debug)]
pub struct Openings {
    ring: usize,
    lag: Lag,
    /// The first pass's long zones, in opening order; `long_given` of them given,
    /// `long_seen` met again.
    long: Vec<Row>,
    long_given: usize,
    long_seen: usize,
    /// The long zones' rows, sorted (to skip them when met).
    long_rows: Vec<u64>,
    /// Read, not given yet, by key.
    held: BinaryHeap<Reverse<(Key, HeldRow)>>,
    /// Unmarked records of the piece being read.
    unmarked: Vec<Row>,
    /// Zones open at the last opening given.
    open: BinaryHeap<Open>,
    openings: u64,
    /// The most records held at once ([`Openings::most_held`]).
    most_held: usize,
    /// Nesting levels used so far (the deepest zone's depth + 1).
    levels: u16,
    rows: u64,
}

/// A held row, ordered by its key only (the key holds the row, so keys are unique).
#[derive(Clone, Copy, Debug)]
struct HeldRow(Row);

impl PartialEq for HeldRow {
    fn eq(&self, other: &HeldRow) -> bool {
        self.0.row == other.0.row
    }
}

impl Eq for HeldRow {}

impl PartialOrd for HeldRow {
    fn partial_cmp(&self, other: &HeldRow) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for HeldRow {
    fn cmp(&self, other: &HeldRow) -> std::cmp::Ordering {
        self.0.row.cmp(&other.0.row)
    }
}

impl Openings {
    /// Ring `ring` read again, with what its first pass found ([`LongZones::finish`]).
    pub fn new(ring: usize, long: Long) -> Openings {
        let mut long_rows: Vec<u64> = long.rows.iter().map(|r| r.row).collect();
        long_rows.sort_unstable();
        Openings {
            ring,
            lag: Lag::new(long.window),
            long: long.rows,
            long_given: 0,
            long_seen: 0,
            long_rows,
            held: BinaryHeap::new(),
            unmarked: Vec::new(),
            open: BinaryHeap::new(),
            openings: 0,
            most_held: 0,
            levels: 0,
            rows: 0,
        }
    }

    /// The ring's next records, `r`; the openings now final. An error when the ring does
    /// not read as it did in the first pass.
    pub fn push(&mut self, r: &Records) -> Result<Piece> {
        let mut piece = Piece::default();
        for (i, &k) in r.kind().iter().enumerate() {
            let row = Row::of(r, i, self.rows + i as u64);
            if !is_marked(k) {
                self.unmarked.push(row);
                continue;
            }
            if self.lag.push(row.key()) {
                if self.long_rows.binary_search(&row.row).is_err() {
                    return Err(self.changed());
                }
                self.long_seen += 1;
            } else {
                self.held.push(Reverse((row.key(), HeldRow(row))));
                self.most_held = self.most_held.max(self.held.len());
                // What is held past the window is given as the piece is read: a piece
                // much larger than the window is not held whole.
                if self.held.len() >= 2 * self.lag.window {
                    self.give_into(&mut piece, self.lag.passed);
                }
            }
        }
        self.rows += r.len() as u64;
        self.give_into(&mut piece, self.lag.passed);
        Ok(self.with_unmarked(piece))
    }

    /// The openings left, after the ring's last piece.
    pub fn finish(&mut self) -> Result<Piece> {
        if self.long_seen != self.long.len() {
            return Err(self.changed());
        }
        let mut piece = Piece::default();
        self.give_into(&mut piece, Some((u64::MAX, Reverse(0), Reverse(0))));
        Ok(self.with_unmarked(piece))
    }

    /// Nesting levels the zones given so far use (the deepest depth + 1; the ring's
    /// [`crate::timeline::Lane::depth`] after the last piece).
    pub fn levels(&self) -> u16 {
        self.levels
    }

    /// Records read but not given yet (what the second pass holds beside the long zones).
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The most records held at once so far (at most twice the window).
    pub fn most_held(&self) -> usize {
        self.most_held
    }

    fn changed(&self) -> Error {
        Error::Reread {
            what: "a ring read in pieces",
            ring: self.ring,
        }
    }

    /// The openings whose keys are at most `until`, in order, onto `piece`.
    fn give_into(&mut self, piece: &mut Piece, until: Option<Key>) {
        let Some(until) = until else {
            return;
        };
        loop {
            let held = self.held.peek().map(|Reverse((k, _))| *k);
            let long = self.long.get(self.long_given).map(Row::key);
            let row = match (held, long) {
                (Some(h), l) if h <= until && l.is_none_or(|l| h < l) => {
                    self.held.pop().map(|Reverse((_, HeldRow(r)))| r)
                }
                (_, Some(l)) if l <= until => {
                    self.long_given += 1;
                    Some(self.long[self.long_given - 1])
                }
                _ => None,
            };
            let Some(row) = row else { break };
            while self
                .open
                .peek()
                .is_some_and(|Reverse((end, _))| *end <= row.record.start)
            {
                self.open.pop();
            }
            if row.record.kind.is_zone() {
                let depth = self.open.len().min(u16::MAX as usize) as u16;
                self.levels = self.levels.max(depth.saturating_add(1));
                piece.depth.push(depth);
                self.open
                    .push(Reverse((row.record.end, Reverse(self.openings))));
            }
            self.openings += 1;
            piece.rows.push(row.row);
            row.push_to(&mut piece.records);
        }
    }

    /// `piece` with the unmarked records read since the last piece, in ring order.
    fn with_unmarked(&mut self, mut piece: Piece) -> Piece {
        for row in self.unmarked.drain(..) {
            row.push_to(&mut piece.records);
        }
        piece
    }
}

/// Rows `from..to` of `r` as records of their own (rows of the ring from `from`).
#[cfg(test)]
pub(crate) fn slice(r: &Records, from: usize, to: usize) -> Records {
    let mut out = Records::new();
    for i in from..to {
        Row::of(r, i, i as u64).push_to(&mut out);
    }
    out
}

/// The view of one piece of ring `index` of `profile`: `ring` is the ring's report holding
/// the piece's records ([`Piece::records`]), `depth` the piece's zones' depths
/// ([`Piece::depth`]) and `levels` the nesting levels used so far ([`Openings::levels`]).
/// The pieces' views in turn hold the whole ring's view's zones and marks.
pub fn view<'a>(
    profile: &'a Profile,
    index: usize,
    ring: &'a RingReport,
    depth: &[u16],
    levels: u16,
) -> RingView<'a> {
    let mut view = profile.view(index, ring, false);
    if !view.placed {
        return view;
    }
    let (r, chip) = (&ring.records, ring.id.chip);
    view.zones.reserve(depth.len());
    let mut zones = Vec::with_capacity(depth.len());
    for (i, &k) in r.kind().iter().enumerate() {
        if k.is_zone() {
            debug_assert!(zones.len() < depth.len(), "a depth per zone");
            let d = depth.get(zones.len()).copied().unwrap_or(0);
            view.zones.push_depth(i, d, |run| profile.op_of(chip, run));
            zones.push(i as u32);
        } else if let Some(marker) = point(k) {
            let mark = profile.mark(index, ring, i, marker, view.clock);
            view.marks.push(mark);
        }
    }
    view.zones.set_records(ZoneRecords::from_slice(&zones));
    view.lane.depth = levels;
    view
}

#[cfg(test)]
mod tests;
