//! One ring's runs, each once in the order its records first name them, with what a first
//! pass keeps of each ([`RunFacts`]): the span of its records and of its wrapper zones.
//!
//! A first pass holds one of these per ring until the readout's end (a device log may
//! interleave rings), so it holds one entry per (ring, run) and is kept small: 72 bytes a
//! run, found by bisection while the ring's runs come in ascending order (they mostly do),
//! through a hash index only once a run comes below an earlier one. (Issue 41: four maps
//! and lists per run, keyed by run and by (run, site), held about 250 bytes per ring and
//! run: 310 MB for 4,000 ops of 64 tiles.)

use crate::util::vec::room_for_one;
use rustc_hash::FxHashMap;

/// Which of a [`RunFacts`]'s spans hold something.
const SPAN: u8 = 1;
const FW: u8 = 2;
const KERNEL: u8 = 4;
const SITES: u8 = 8;

/// One ring's wrapper zone kinds: its RISC's `<RISC>-FW` and `<RISC>-KERNEL` zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrapper {
    Fw,
    Kernel,
}

/// What a ring's first pass keeps of one run, as cycle counts of the ring's tile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunFacts {
    /// The run id (`NO_RUN` for records outside any run).
    pub(crate) run: u32,
    /// FW and KERNEL wrapper zones seen, saturating (two or more: the run id was reused).
    pub(crate) zones: [u8; 2],
    /// Which spans below hold something (`SPAN`, `FW`, `KERNEL`; `SITES`: a site-carrying
    /// record was seen).
    has: u8,
    /// First and last cycles of the run's site-carrying records placed on the timeline.
    span: [u64; 2],
    /// FW zones: first start, last start, last end.
    fw: [u64; 3],
    /// KERNEL zones, likewise.
    kernel: [u64; 3],
}

impl RunFacts {
    fn new(run: u32) -> RunFacts {
        RunFacts {
            run,
            zones: [0; 2],
            has: 0,
            span: [0; 2],
            fw: [0; 3],
            kernel: [0; 3],
        }
    }

    /// The first and last cycles of the run's placed site-carrying records, if any.
    pub(crate) fn span(&self) -> Option<(u64, u64)> {
        (self.has & SPAN != 0).then_some((self.span[0], self.span[1]))
    }

    /// Widens the records' span by one record from `first` to `end` cycles.
    pub(crate) fn widen_span(&mut self, first: u64, end: u64) {
        if self.has & SPAN == 0 {
            self.span = [first, end];
            self.has |= SPAN;
        } else {
            self.span = [self.span[0].min(first), self.span[1].max(end)];
        }
    }

    /// The run's wrapper zones of kind `w`: first start, last start, last end.
    pub(crate) fn wrapper(&self, w: Wrapper) -> Option<[u64; 3]> {
        match w {
            Wrapper::Fw => (self.has & FW != 0).then_some(self.fw),
            Wrapper::Kernel => (self.has & KERNEL != 0).then_some(self.kernel),
        }
    }

    /// Counts one wrapper zone of kind `w` from `start` to `end` and widens its span:
    /// `before(a, b)` says whether cycle count `a` is an earlier host time than `b` (ties
    /// keep the zone seen first).
    pub(crate) fn add_wrapper(
        &mut self,
        w: Wrapper,
        (start, end): (u64, u64),
        before: impl Fn(u64, u64) -> bool,
    ) {
        let (bit, n, span) = match w {
            Wrapper::Fw => (FW, &mut self.zones[0], &mut self.fw),
            Wrapper::Kernel => (KERNEL, &mut self.zones[1], &mut self.kernel),
        };
        *n = n.saturating_add(1);
        if self.has & bit == 0 {
            *span = [start, start, end];
            self.has |= bit;
            return;
        }
        let [first, last, latest_end] = span;
        if before(start, *first) {
            *first = start;
        }
        if before(*last, start) {
            *last = start;
        }
        if before(*latest_end, end) {
            *latest_end = end;
        }
    }

    /// Whether a site-carrying record of the run was seen; marks one seen.
    pub(crate) fn seen_sites(&mut self) -> bool {
        let seen = self.has & SITES != 0;
        self.has |= SITES;
        seen
    }
}

/// One ring's runs in first-seen order (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RingRuns {
    list: Vec<RunFacts>,
    /// Run id -> index into `list`, made once a run comes below an earlier one (until
    /// then `list` is in ascending order of run id).
    index: Option<Box<FxHashMap<u32, u32>>>,
}

impl RingRuns {
    /// The index of `run`'s entry, made when absent.
    pub(crate) fn index_of(&mut self, run: u32) -> usize {
        let last = self.list.last().map(|f| f.run);
        if last == Some(run) {
            return self.list.len() - 1;
        }
        let found = match (&self.index, last) {
            (Some(index), _) => index.get(&run).map(|&i| i as usize),
            (None, Some(last)) if run < last => {
                self.list.binary_search_by_key(&run, |f| f.run).ok()
            }
            // Above every earlier run: new.
            (None, _) => None,
        };
        if let Some(i) = found {
            return i;
        }
        room_for_one(&mut self.list);
        self.list.push(RunFacts::new(run));
        let i = self.list.len() - 1;
        match &mut self.index {
            Some(index) => {
                index.insert(run, i as u32);
            }
            None if last.is_some_and(|last| run < last) => {
                let all = self.list.iter().enumerate();
                self.index = Some(Box::new(all.map(|(i, f)| (f.run, i as u32)).collect()));
            }
            None => {}
        }
        i
    }

    /// The run at `index` (of [`RingRuns::index_of`]).
    pub(crate) fn at(&mut self, index: usize) -> &mut RunFacts {
        &mut self.list[index]
    }

    /// Every run, in first-seen order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, RunFacts> {
        self.list.iter()
    }

    /// The run id at `index`.
    pub(crate) fn id(&self, index: usize) -> u32 {
        self.list[index].run
    }

    /// Every run id but `NO_RUN`, in first-seen order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        let ids = self.list.iter().map(|f| f.run);
        ids.filter(|&r| r != crate::decode::NO_RUN)
    }

    /// Whether runs were looked up through the hash index (one came below an earlier one).
    #[cfg(test)]
    pub(crate) fn indexed(&self) -> bool {
        self.index.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs are listed once in first-seen order, whether they ascend (bisection), revisit
    /// an earlier one, or come below one (the index from then on).
    #[test]
    fn a_rings_runs_are_found_once_in_first_seen_order() {
        let mut r = RingRuns::default();
        let seq = [3, 3, 5, 9, 5, 3, 11, 12, 9];
        for (k, &run) in seq.iter().enumerate() {
            let i = r.index_of(run);
            assert_eq!(r.id(i), run, "step {k}");
            assert!(!r.indexed(), "ascending with revisits: no index (step {k})");
        }
        for &run in &[1, 12, 2, 3, 1, 40, 2] {
            let i = r.index_of(run);
            assert_eq!(r.id(i), run);
        }
        assert!(r.indexed());
        assert_eq!(r.ids().collect::<Vec<_>>(), [3, 5, 9, 11, 12, 1, 2, 40]);
    }

    #[test]
    fn a_runs_wrapper_span_keeps_first_start_last_start_and_last_end() {
        let mut f = RunFacts::new(1);
        let before = |a: u64, b: u64| a < b;
        assert_eq!(f.wrapper(Wrapper::Fw), None);
        f.add_wrapper(Wrapper::Fw, (50, 60), before);
        f.add_wrapper(Wrapper::Fw, (10, 20), before);
        f.add_wrapper(Wrapper::Fw, (70, 65), before);
        assert_eq!(f.wrapper(Wrapper::Fw), Some([10, 70, 65]));
        assert_eq!(f.wrapper(Wrapper::Kernel), None);
        assert_eq!(f.zones, [3, 0]);
        assert_eq!(f.span(), None);
        f.widen_span(5, 6);
        f.widen_span(2, 4);
        assert_eq!(f.span(), Some((2, 6)));
        assert!(!f.seen_sites() && f.seen_sites());
    }

    #[test]
    fn run_facts_are_72_bytes() {
        assert_eq!(std::mem::size_of::<RunFacts>(), 72);
    }
}
