//! A ring's events in time order, made as the sequence is written, from the ring whole or
//! from its pieces in turn ([`crate::profile::Part`]): its zones' slice begins and ends
//! (zones come in opening order with their depth) merged with its marks and counter points.
//!
//! [`InRing`] is what a lane carries from piece to piece. Zones, marks and counted spans
//! are taken as a piece gives them ([`InRing::zone`], [`InRing::mark`], [`InRing::span`]);
//! [`InRing::next`] gives the events whose place in the sequence no later piece can change,
//! and keeps the others. What it keeps is bounded by the nesting depth (the open zones'
//! ends, of the slices and of each counter track), the counters armed, and the marks and
//! points at the latest opening's time; never the ring's zones. It holds because a later
//! piece opens nothing before the latest opening `S` of the pieces so far (host times grow
//! with cycles), and a zone open at `S` that the ring's records close by `S` is closed
//! before any later zone opens (the ring's depth of a zone counts the zones open at its
//! start): its end, earlier than anything to come, is final. Zones whose times overlap
//! without nesting (corrupt records) can keep more marks waiting, until the next zone.
//!
//! The order is the one the whole ring's events are given in: slices (a zone that ends
//! after its enclosing zone, or after the next zone as shallow opens, cut there), then
//! marks, then counter points, merged by time (of equal times, slices first, then marks,
//! then points); marks in time order; each counter track's points as [`super::counters`]'s
//! steps make them, the tracks merged by time, the first-counted counter first.

use crate::timeline::MarkKind;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

/// One event of a ring's sequence in time order.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ev {
    /// A zone opens: its site (label), op and value (a value zone's).
    Begin {
        site: u32,
        op: Option<u32>,
        value: Option<u32>,
    },
    /// The innermost open zone closes.
    End,
    /// A mark: its site (label), op and what it says.
    Mark {
        site: u32,
        op: Option<u32>,
        kind: MarkKind,
    },
    /// A point on a counter track (an index of [`super::counters::Counters::names`], value).
    Counter(usize, f64),
}

/// One counter track of the lane: its spans still open and its points not given yet.
#[derive(Default)]
struct Track {
    /// (end, value) of the open spans, in start order.
    open: Vec<(u64, f64)>,
    /// Points made, in time order, not given yet.
    points: VecDeque<(u64, f64)>,
}

/// The head of one of the merged streams: its next event's time, or a time its next event
/// cannot come before (not known yet), or nothing left.
#[derive(Clone, Copy, Debug)]
enum Head {
    At(u64),
    Wait(u64),
    Done,
}

/// What a lane's sequence carries from piece to piece (see the module docs).
#[derive(Default)]
pub(super) struct InRing {
    /// Ends (ns) of the slices open, outermost first.
    open: Vec<u64>,
    /// Ends (cycles) of the ring's zones open at the latest opening: a later zone's depth
    /// is at most their count.
    ring_open: BinaryHeap<Reverse<u64>>,
    /// The latest opening so far: (cycles, host ns).
    latest: Option<(u64, u64)>,
    /// Zones taken and not made into slices yet: (start ns, end ns, depth, begin).
    zones: VecDeque<(u64, u64, u16, Ev)>,
    /// Slice begins and ends made, not given yet.
    slices: VecDeque<(u64, Ev)>,
    /// Marks taken, not given yet, in time order.
    marks: VecDeque<(u64, Ev)>,
    /// Counter tracks by counter name.
    tracks: BTreeMap<usize, Track>,
    /// The ring's last piece was taken: everything left is final.
    done: bool,
    /// Ends cut, so far.
    pub(super) clamped: u64,
}

impl InRing {
    /// The next opening of the ring starts at `cycles` (`ns` on the host): what was waiting
    /// for it may now be final.
    fn opens(&mut self, cycles: u64, ns: u64) {
        if self.latest.is_none_or(|l| l.0 <= cycles) {
            self.latest = Some((cycles, ns));
        }
        while self
            .ring_open
            .peek()
            .is_some_and(|&Reverse(end)| end <= self.latest.map_or(0, |l| l.0))
        {
            self.ring_open.pop();
        }
    }

    /// Takes the ring's next zone (in opening order): `cycles` its start and end on the
    /// tile, `ns` the same on the host, `depth` its depth in the ring.
    pub(super) fn zone(&mut self, cycles: (u64, u64), ns: (u64, u64), depth: u16, begin: Ev) {
        self.opens(cycles.0, ns.0);
        self.ring_open.push(Reverse(cycles.1));
        self.zones.push_back((ns.0, ns.1, depth, begin));
    }

    /// Takes the ring's next mark (in opening order), at `cycles` on the tile and `ns` on
    /// the host (the time it is drawn at).
    pub(super) fn mark(&mut self, cycles: u64, ns: u64, mark: Ev) {
        self.opens(cycles, ns);
        // In time order, those at one time in the order taken.
        let at = self
            .marks
            .iter()
            .rposition(|m| m.0 <= ns)
            .map_or(0, |k| k + 1);
        self.marks.insert(at, (ns, mark));
    }

    /// Takes a counted zone's span on counter track `name` (from its start to its end, ns,
    /// at `value`), after the zone itself ([`InRing::zone`]).
    pub(super) fn span(&mut self, name: usize, start: u64, end: u64, value: f64) {
        let t = self.tracks.entry(name).or_default();
        close_until(&mut t.open, &mut t.points, start);
        t.open.push((end.max(start), value));
        t.points.push_back((start, value));
    }

    /// Zones, ends, marks and points held (what a lane carries between pieces).
    pub(super) fn held(&self) -> usize {
        let tracks: usize = (self.tracks.values())
            .map(|t| t.open.len() + t.points.len())
            .sum();
        self.open.len()
            + self.ring_open.len()
            + self.zones.len()
            + self.slices.len()
            + self.marks.len()
            + tracks
    }

    /// The ring's last piece was taken.
    pub(super) fn finish(&mut self) {
        self.done = true;
    }

    /// The time no later piece opens anything before.
    fn bound(&self) -> u64 {
        self.latest.map_or(0, |l| l.1)
    }

    /// Makes the slices that are final from the zones taken.
    fn make_slices(&mut self) {
        while let Some(&(start, end, depth, _)) = self.zones.front() {
            if self.open.len() > depth as usize {
                let end = self.open.pop().unwrap_or(start);
                let cut = end.min(start);
                if cut < end {
                    self.clamped += 1;
                }
                self.slices.push_back((cut, Ev::End));
                continue;
            }
            let mut end = end.max(start);
            if let Some(&outer) = self.open.last() {
                if end > outer {
                    end = outer;
                    self.clamped += 1;
                }
            }
            self.open.push(end);
            if let Some((_, _, _, begin)) = self.zones.pop_front() {
                self.slices.push_back((start, begin));
            }
        }
        if self.done {
            // After the last zone, whatever is open closes.
            while let Some(end) = self.open.pop() {
                self.slices.push_back((end, Ev::End));
            }
            return;
        }
        // The next zone opens at the latest opening or later, inside at most the ring's
        // zones open then: a slice deeper than that closes before it, at its own end if
        // that comes first.
        let bound = self.bound();
        while self.open.len() > self.ring_open.len() {
            match self.open.last() {
                Some(&end) if end <= bound => {
                    self.open.pop();
                    self.slices.push_back((end, Ev::End));
                }
                _ => break,
            }
        }
    }

    fn slices_head(&self) -> Head {
        match self.slices.front() {
            Some(s) => Head::At(s.0),
            None if self.done => Head::Done,
            // The next slice event: an end at the innermost open slice's end or at the next
            // zone's start, or that start.
            None => Head::Wait(
                self.open
                    .last()
                    .map_or(self.bound(), |&e| e.min(self.bound())),
            ),
        }
    }

    fn marks_head(&self) -> Head {
        match self.marks.front() {
            Some(m) => Head::At(m.0),
            None if self.done => Head::Done,
            None => Head::Wait(self.bound()),
        }
    }

    /// The counter tracks' next point: (time, track) of the earliest, the first-counted
    /// track's at one time.
    fn counters_head(&self) -> (Head, Option<usize>) {
        let first = (self.tracks.iter())
            .filter_map(|(&name, t)| t.points.front().map(|p| (p.0, name)))
            .min();
        match first {
            Some((t, name)) if self.done || t < self.bound() => (Head::At(t), Some(name)),
            _ if self.done => (Head::Done, None),
            // A later span starts, and a span open now ends, at the bound or later; points
            // at the bound wait for the tracks before theirs.
            _ => (Head::Wait(self.bound()), None),
        }
    }

    /// The next event whose place is final, if any yet.
    pub(super) fn next(&mut self) -> Option<(u64, Ev)> {
        self.make_slices();
        if !self.done {
            let bound = self.bound();
            for t in self.tracks.values_mut() {
                close_until(&mut t.open, &mut t.points, bound);
            }
        } else {
            for t in self.tracks.values_mut() {
                close_until(&mut t.open, &mut t.points, u64::MAX);
            }
        }
        // (slices with marks) with counter points, each merged as `merged` did: the second
        // first only when strictly earlier.
        let (a, b) = (self.slices_head(), self.marks_head());
        let (ab, a_first) = merge(a, b);
        let (c, track) = self.counters_head();
        let (head, ab_first) = merge(ab, c);
        if !matches!(head, Head::At(_)) {
            return None;
        }
        if !ab_first {
            let t = self.tracks.get_mut(&track?)?;
            let (ts, value) = t.points.pop_front()?;
            return Some((ts, Ev::Counter(track?, value)));
        }
        if a_first {
            self.slices.pop_front()
        } else {
            self.marks.pop_front()
        }
    }
}

/// The head of `a` with `b` merged in (each of `b` before the first of `a` later than it),
/// and whether it is `a`'s.
fn merge(a: Head, b: Head) -> (Head, bool) {
    match (a, b) {
        (Head::Done, b) => (b, false),
        (a, Head::Done) => (a, true),
        (Head::At(x), Head::At(y)) => {
            if y < x {
                (Head::At(y), false)
            } else {
                (Head::At(x), true)
            }
        }
        // `b` comes at `y` or later: not before `a`'s at `x <= y`.
        (Head::At(x), Head::Wait(y)) if x <= y => (Head::At(x), true),
        (Head::At(_), Head::Wait(y)) => (Head::Wait(y), true),
        // `a` comes at `x` or later: `b`'s goes first if earlier.
        (Head::Wait(x), Head::At(y)) if y < x => (Head::At(y), false),
        (Head::Wait(x), Head::At(_)) => (Head::Wait(x), true),
        (Head::Wait(x), Head::Wait(y)) => (Head::Wait(x.min(y)), true),
    }
}

/// Closes the spans of `open` that end by `t`, earliest end first, each giving a point at
/// its end when it was the latest-started span (the value of the span open before it, else
/// 0): see [`super::counters::steps`].
fn close_until(open: &mut Vec<(u64, f64)>, points: &mut VecDeque<(u64, f64)>, t: u64) {
    loop {
        let earliest = (0..open.len()).min_by_key(|&i| open[i].0);
        let Some(i) = earliest.filter(|&i| open[i].0 <= t) else {
            return;
        };
        let (end, _) = open.remove(i);
        if i == open.len() {
            points.push_back((end, open.last().map_or(0.0, |o| o.1)));
        }
    }
}
