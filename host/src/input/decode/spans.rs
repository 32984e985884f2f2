//! Each record's span, its end minus its start: two bytes a row while most spans are short,
//! four once they are not ([`Spans`]).
//!
//! A ring of many small zones (the rings that get long) has spans below 2^16 cycles, so a
//! row keeps its span in a `u16` and the rare longer one beside ([`Spans::wide`]). When
//! those rare ones are not rare (a quarter of the rows: a ring of op-level zones), the
//! column widens to `u32` once, and stays: a row never takes more than the four bytes it
//! took before (issue 41: the records of a 16 M-zone ring were 11 bytes a zone, 4 of them
//! its span). A span of 2^32 - 1 or more, or a negative one (a malformed loss), is kept as
//! its whole end ([`Spans::far`]).

/// A span of 2^32 - 1 or more or negative: its row's end is in [`Spans::far`].
const FAR: u32 = u32::MAX;

/// A narrow row's span of 2^16 - 1 or more: in [`Spans::wide`].
const WIDE: u16 = u16::MAX;

/// Whether a column of `rows` rows, `wide` of them wide, takes less as `u32`s: a quarter
/// or more of them wide (and at least 16).
fn worth_widening(wide: usize, rows: usize) -> bool {
    wide * 4 >= rows.max(64)
}

/// The column: `u16`s while few spans are wide, `u32`s once many are.
#[derive(Clone, Debug)]
enum Column {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// Every row's span (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Spans {
    column: Column,
    /// (row, span) of the narrow rows whose span is [`WIDE`] ([`FAR`]: see `far`), in row
    /// order; empty once the column is wide.
    wide: Vec<(u32, u32)>,
    /// (row, end) of the rows whose span is [`FAR`], in row order.
    far: Vec<(u32, u64)>,
}

impl Default for Spans {
    fn default() -> Spans {
        Spans {
            column: Column::Narrow(Vec::new()),
            wide: Vec::new(),
            far: Vec::new(),
        }
    }
}

impl PartialEq for Spans {
    /// The same spans, however they are held.
    fn eq(&self, other: &Spans) -> bool {
        self.len() == other.len()
            && self.far == other.far
            && (0..self.len()).all(|i| self.span32(i) == other.span32(i))
    }
}

impl Eq for Spans {}

impl Spans {
    /// Spans of no rows.
    pub(crate) const fn new() -> Spans {
        Spans {
            column: Column::Narrow(Vec::new()),
            wide: Vec::new(),
            far: Vec::new(),
        }
    }

    /// How many rows.
    pub(crate) fn len(&self) -> usize {
        match &self.column {
            Column::Narrow(v) => v.len(),
            Column::Wide(v) => v.len(),
        }
    }

    /// Room for `n` more rows.
    pub(crate) fn reserve(&mut self, n: usize) {
        match &mut self.column {
            Column::Narrow(v) => v.reserve(n),
            Column::Wide(v) => v.reserve(n),
        }
    }

    /// Row `i`'s span as 32 bits ([`FAR`]: its end is in `far`).
    fn span32(&self, i: usize) -> u32 {
        match &self.column {
            Column::Wide(v) => v[i],
            Column::Narrow(v) => match v[i] {
                WIDE => {
                    let w = &self.wide;
                    w[w.partition_point(|&(row, _)| (row as usize) < i)].1
                }
                s => s as u32,
            },
        }
    }

    /// Row `i`'s end, its start being `start`.
    pub(crate) fn end_at(&self, i: usize, start: u64) -> u64 {
        match self.span32(i) {
            FAR => {
                let far = &self.far;
                far[far.partition_point(|&(row, _)| (row as usize) < i)].1
            }
            s => start + s as u64,
        }
    }

    /// Each row's end, given each row's start, in one pass.
    pub(crate) fn ends<'a>(
        &'a self,
        starts: impl ExactSizeIterator<Item = u64> + 'a,
    ) -> impl ExactSizeIterator<Item = u64> + 'a {
        let (mut wide, mut far) = (self.wide.iter(), self.far.iter());
        starts.enumerate().map(move |(i, start)| {
            let s = match &self.column {
                Column::Wide(v) => v[i],
                Column::Narrow(v) => match v[i] {
                    WIDE => wide.next().map_or(0, |&(_, s)| s),
                    s => s as u32,
                },
            };
            match s {
                FAR => far.next().map_or(start, |&(_, end)| end),
                s => start + s as u64,
            }
        })
    }

    /// Appends row `row` (= [`Spans::len`]) from `start` to `end`.
    pub(crate) fn push(&mut self, row: u32, start: u64, end: u64) {
        let s = self.span32_of(row, start, end);
        self.push32(row, s);
    }

    /// Row `row`'s span as 32 bits, its end noted in `far` when it is [`FAR`].
    pub(crate) fn span32_of(&mut self, row: u32, start: u64, end: u64) -> u32 {
        match end.checked_sub(start) {
            Some(s) if s < FAR as u64 => s as u32,
            _ => {
                self.far.push((row, end));
                FAR
            }
        }
    }

    /// Appends row `row` with its 32-bit span `s` (its `far` entry, if any, noted).
    fn push32(&mut self, row: u32, s: u32) {
        match &mut self.column {
            Column::Wide(v) => v.push(s),
            Column::Narrow(v) => {
                if s < WIDE as u32 {
                    v.push(s as u16);
                } else {
                    v.push(WIDE);
                    self.wide.push((row, s));
                    self.widen_if_worth_it();
                }
            }
        }
    }

    /// Widens the column when a quarter of the rows are wide (from then on `u32`s cost
    /// less than `u16`s and 8 bytes a wide row).
    fn widen_if_worth_it(&mut self) {
        if !worth_widening(self.wide.len(), self.len()) {
            return;
        }
        if let Column::Narrow(v) = &self.column {
            let mut listed = self.wide.iter();
            let wide: Vec<u32> = v
                .iter()
                .map(|&s| match s {
                    WIDE => listed.next().map_or(0, |&(_, s)| s),
                    s => s as u32,
                })
                .collect();
            self.column = Column::Wide(wide);
            self.wide = Vec::new();
        }
    }

    /// The spans of `spans`, 32 bits each (`far` already noted: [`Spans::span32_of`]),
    /// narrowed when few are wide. Takes the vector: the column is made after it is read.
    pub(crate) fn with_spans32(mut self, spans: Vec<u32>) -> Spans {
        let wide = spans.iter().filter(|&&s| s >= WIDE as u32).count();
        if worth_widening(wide, spans.len()) {
            self.column = Column::Wide(spans);
            return self;
        }
        let mut narrow = Vec::with_capacity(spans.len());
        for (row, &s) in spans.iter().enumerate() {
            if s < WIDE as u32 {
                narrow.push(s as u16);
            } else {
                narrow.push(WIDE);
                self.wide.push((row as u32, s));
            }
        }
        drop(spans);
        self.column = Column::Narrow(narrow);
        self
    }

    /// Keeps the first `n` rows.
    pub(crate) fn truncate(&mut self, n: usize) {
        match &mut self.column {
            Column::Narrow(v) => v.truncate(n),
            Column::Wide(v) => v.truncate(n),
        }
        let kept = |row: u32| (row as usize) < n;
        let w = self.wide.partition_point(|&(row, _)| kept(row));
        self.wide.truncate(w);
        let f = self.far.partition_point(|&(row, _)| kept(row));
        self.far.truncate(f);
    }

    /// Appends `other`'s rows.
    pub(crate) fn append(&mut self, other: &Spans) {
        let base = self.len() as u32;
        self.far
            .extend(other.far.iter().map(|&(row, end)| (base + row, end)));
        self.reserve(other.len());
        for i in 0..other.len() {
            self.push32(base + i as u32, other.span32(i));
        }
    }

    /// Bytes a row takes in the column (2 or 4).
    #[cfg(test)]
    pub(crate) fn row_bytes(&self) -> usize {
        match self.column {
            Column::Narrow(_) => 2,
            Column::Wide(_) => 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans short, wide and far, pushed or made from 32-bit spans, appended and
    /// truncated, read back one at a time and in one pass: each row ends where it did;
    /// the column widens only when a quarter of the rows are wide.
    #[test]
    fn every_row_ends_where_it_did() {
        let mut rng = crate::testing::Rng::new(11);
        let mut next = || rng.bits(53);
        for wide_share in [0u64, 1, 10, 24, 26, 60, 100] {
            let rows: Vec<(u64, u64)> = (0..2000)
                .map(|i| {
                    let start = (1u64 << 32) - 5000 + 37 * i + next() % 5;
                    let span = match next() % 100 {
                        k if k < wide_share => match next() % 3 {
                            0 => 65_535 + next() % 10,
                            1 => (1 << 32) - 2 + next() % 4,
                            _ => u64::MAX - start + 1,
                        },
                        _ => next() % 65_535,
                    };
                    (start, start.wrapping_add(span))
                })
                .collect();
            let ends: Vec<u64> = rows.iter().map(|r| r.1).collect();
            let mut pushed = Spans::new();
            for (i, &(s, e)) in rows.iter().enumerate() {
                pushed.push(i as u32, s, e);
            }
            let mut made = Spans::new();
            let spans32: Vec<u32> = rows
                .iter()
                .enumerate()
                .map(|(i, &(s, e))| made.span32_of(i as u32, s, e))
                .collect();
            let made = made.with_spans32(spans32);
            let starts = || rows.iter().map(|r| r.0);
            for sp in [&pushed, &made] {
                let one: Vec<u64> = (0..rows.len()).map(|i| sp.end_at(i, rows[i].0)).collect();
                assert_eq!(one, ends, "share {wide_share}");
                assert_eq!(sp.ends(starts()).collect::<Vec<_>>(), ends);
            }
            assert_eq!(pushed, made);
            let share = ends
                .iter()
                .zip(&rows)
                .filter(|(&e, r)| e.wrapping_sub(r.0) >= 65_535)
                .count()
                * 4;
            assert_eq!(made.row_bytes(), if share >= rows.len() { 4 } else { 2 });
            let mut halves = Spans::new();
            let (a, b) = rows.split_at(700);
            for (i, &(s, e)) in a.iter().enumerate() {
                halves.push(i as u32, s, e);
            }
            let mut tail = Spans::new();
            for (i, &(s, e)) in b.iter().enumerate() {
                tail.push(i as u32, s, e);
            }
            halves.append(&tail);
            assert_eq!(halves, pushed);
            halves.truncate(900);
            let cut: Vec<u64> = halves.ends(starts().take(900)).collect();
            assert_eq!(cut, ends[..900]);
        }
    }

    /// A ring of short zones takes two bytes a span; one of op-level zones four, not more.
    #[test]
    fn short_spans_take_two_bytes_and_long_ones_no_more_than_four() {
        let mut short = Spans::new();
        let mut long = Spans::new();
        for i in 0..100_000u32 {
            let start = i as u64 * 1_000_000;
            short.push(i, start, start + 18);
            long.push(i, start, start + 900_000);
        }
        assert_eq!((short.row_bytes(), short.wide.len()), (2, 0));
        assert_eq!((long.row_bytes(), long.wide.len()), (4, 0));
    }
}
