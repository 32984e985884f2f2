//! A ring's events in time order, made as the sequence is written: its zones' slice begins
//! and ends (zones come in opening order with their depth) merged with its marks and counter
//! points. Nothing per zone is held but the open zones' ends (one ring of millions of zones
//! held them all, 64 bytes a zone).

use crate::zones::Zones;
use std::iter::Peekable;

/// One event of a ring's sequence in time order.
pub(super) enum Ev {
    /// Zone `i` of the ring's view opens.
    Begin(usize),
    /// The innermost open zone closes.
    End,
    /// Mark `i` of the ring's view.
    Mark(usize),
    /// A point on a counter track (uuid, value).
    Counter(u64, f64),
}

/// The zones' begins and ends in time order, each end where its zone closes or cut at its
/// parent's end or at the next begin of a zone as shallow (times that do not nest).
pub(super) struct Slices<'v, F> {
    zones: &'v Zones<'v>,
    /// The zone whose begin comes next.
    next: usize,
    /// Whole ns of a zone's cycle count on its tile's clock.
    at: F,
    /// Ends of the open zones, outermost first.
    open: Vec<u64>,
    /// The start of zone `next`, once taken (while the ends before it are given).
    start: Option<u64>,
    /// Ends cut, so far.
    pub(super) clamped: u64,
}

impl<'v, F: Fn(u64) -> u64> Slices<'v, F> {
    pub(super) fn new(zones: &'v Zones<'v>, at: F) -> Slices<'v, F> {
        Slices {
            zones,
            next: 0,
            at,
            open: Vec::new(),
            start: None,
            clamped: 0,
        }
    }
}

impl<F: Fn(u64) -> u64> Iterator for Slices<'_, F> {
    type Item = (u64, Ev);

    fn next(&mut self) -> Option<(u64, Ev)> {
        let Some(z) = self.zones.get(self.next) else {
            // After the last zone, whatever is open closes.
            return self.open.pop().map(|end| (end, Ev::End));
        };
        let at = &self.at;
        let start = *self.start.get_or_insert_with(|| at(z.start_cycles));
        if self.open.len() > z.depth as usize {
            let end = self.open.pop().unwrap_or(start);
            let cut = end.min(start);
            if cut < end {
                self.clamped += 1;
            }
            return Some((cut, Ev::End));
        }
        let mut end = at(z.end_cycles).max(start);
        if let Some(&outer) = self.open.last() {
            if end > outer {
                end = outer;
                self.clamped += 1;
            }
        }
        self.open.push(end);
        self.start = None;
        self.next += 1;
        Some((start, Ev::Begin(self.next - 1)))
    }
}

/// `a` with `b` (both in time order) merged in: each of `b` goes before the first event of
/// `a` later than it, so after those at its own time.
pub(super) struct Merged<A: Iterator, B: Iterator> {
    a: Peekable<A>,
    b: Peekable<B>,
}

pub(super) fn merged<A, B>(a: A, b: B) -> Merged<A, B>
where
    A: Iterator<Item = (u64, Ev)>,
    B: Iterator<Item = (u64, Ev)>,
{
    Merged {
        a: a.peekable(),
        b: b.peekable(),
    }
}

impl<A, B> Iterator for Merged<A, B>
where
    A: Iterator<Item = (u64, Ev)>,
    B: Iterator<Item = (u64, Ev)>,
{
    type Item = (u64, Ev);

    fn next(&mut self) -> Option<(u64, Ev)> {
        let b_first = match (self.a.peek(), self.b.peek()) {
            (Some(a), Some(b)) => b.0 < a.0,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if b_first {
            self.b.next()
        } else {
            self.a.next()
        }
    }
}
