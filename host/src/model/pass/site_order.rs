//! A ring's distinct (run, site) pairs in the order its records first name them, held as
//! blocks of runs that name the same sites in the same order (a device log's ring names
//! the same few sites in every run), not one entry per pair.
//!
//! Runs are indexes into the ring's [`crate::ring_runs::RingRuns`]. While each run's
//! site-carrying records come together (a run not seen again once the next begins), the
//! pairs are the blocks expanded in order: block by block, run by run, site by site. Once a
//! run comes back after another began, every pair seen so far is put in a set, and each new
//! pair is appended on its own: exact, at a set entry per pair, for such rings only.
//!
//! The run being read ([`Current`]) is held by the reading, one ring at a time
//! ([`crate::pass::Reading`]), not by every ring's order (300,000 rings held 40 bytes each of
//! it to the end of the pass, and a list of its sites; issue 41): the reading closes it into
//! a block ([`SiteOrder::close`]) when it moves to another ring. A reading that comes back
//! to a ring in the run the last one left in (rows of rings interleaved) takes that run out
//! of its block again and goes on with it: the order is as if the ring had been read
//! without a break, not a run that comes back.

use crate::util::vec::push_sized;
use rustc_hash::FxHashSet;

/// Sites of one run searched in a list, before a set.
const FEW: usize = 16;

/// Runs `first..first + runs` (run indexes), each naming `pool[start..start + len]`.
#[derive(Clone, Copy, Debug)]
struct Block {
    first: u32,
    runs: u32,
    start: u32,
    len: u32,
}

/// A ring's distinct (run index, site) pairs in first-seen order (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SiteOrder {
    blocks: Vec<Block>,
    /// The blocks' sites.
    pool: Vec<u16>,
    /// Every pair seen, once a run came back (then no run is current).
    revisited: Option<Box<FxHashSet<(u32, u16)>>>,
}

/// The run whose sites are being read on one ring, and its sites so far (not yet a block
/// of the ring's [`SiteOrder`]): the reading's, a ring at a time (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Current {
    /// The run (an index) and its sites in first-seen order.
    run: Option<(u32, Vec<u16>)>,
    /// Its sites as a set, once they are more than [`FEW`].
    set: Option<Box<FxHashSet<u16>>>,
}

impl SiteOrder {
    /// A site-carrying record of run `run` (an index) at `site`; `seen_before` says whether
    /// the run had one before. `current` is the ring's run being read (empty when the
    /// reading has just come to the ring).
    pub(super) fn add(&mut self, current: &mut Current, run: u32, seen_before: bool, site: u16) {
        if let Some(seen) = &mut self.revisited {
            if seen.insert((run, site)) {
                self.append(run, site);
            }
            return;
        }
        if current.run.is_none() && seen_before {
            self.reopen(current, run);
        }
        match &mut current.run {
            Some((r, sites)) if *r == run => {
                // A run names a few sites: a search of them, a set past a few.
                let new = match &mut current.set {
                    Some(set) => set.insert(site),
                    None => !sites.contains(&site),
                };
                if new {
                    sites.push(site);
                    if sites.len() > FEW && current.set.is_none() {
                        current.set = Some(Box::new(sites.iter().copied().collect()));
                    }
                }
                return;
            }
            _ => {}
        }
        self.close(current);
        if seen_before {
            let seen: FxHashSet<(u32, u16)> = self.iter().collect();
            self.revisited = Some(Box::new(seen));
            self.add(current, run, seen_before, site);
            return;
        }
        current.run = Some((run, vec![site]));
    }

    /// `current`'s sites as a block, leaving it empty: the last block grown by one run when
    /// it is the run before with the same sites, else a new block (sharing the last block's
    /// sites when they are the same). The reading closes its run so when it leaves the ring;
    /// until then [`SiteOrder::iter`] lacks its pairs.
    pub(super) fn close(&mut self, current: &mut Current) {
        current.set = None;
        let Some((run, sites)) = current.run.take() else {
            return;
        };
        if let Some(last) = self.blocks.last_mut() {
            let (s, n) = (last.start as usize, last.len as usize);
            if self.pool[s..s + n] == sites[..] {
                if last.first + last.runs == run {
                    last.runs += 1;
                } else {
                    let b = Block {
                        first: run,
                        runs: 1,
                        ..*last
                    };
                    push_sized(&mut self.blocks, b);
                }
                return;
            }
        }
        let start = self.pool.len() as u32;
        let len = sites.len() as u32;
        if self.pool.is_empty() {
            // A ring's first block (most rings' only one): the run's list is the pool.
            self.pool = sites;
        } else {
            self.pool.extend_from_slice(&sites);
        }
        push_sized(
            &mut self.blocks,
            Block {
                first: run,
                runs: 1,
                start,
                len,
            },
        );
    }

    /// Makes `run` current again when it is the last run closed: a reading came back to the
    /// ring in the run the one before it left in (rows of rings interleaved), and the run
    /// goes on as if it had never been closed (not as a run that comes back). Its sites leave
    /// the last block, and the pool too when they end it and no other block shares them.
    fn reopen(&mut self, current: &mut Current, run: u32) {
        let Some(last) = self.blocks.last_mut() else {
            return;
        };
        if last.first + (last.runs - 1) != run {
            return;
        }
        let (s, n) = (last.start as usize, last.len as usize);
        let sites = self.pool[s..s + n].to_vec();
        last.runs -= 1;
        if last.runs == 0 {
            self.blocks.pop();
            let shared = self
                .blocks
                .last()
                .is_some_and(|b| (b.start + b.len) as usize > s);
            if s + n == self.pool.len() && !shared {
                self.pool.truncate(s);
            }
        }
        if sites.len() > FEW {
            current.set = Some(Box::new(sites.iter().copied().collect()));
        }
        current.run = Some((run, sites));
    }

    /// A pair after a revisit: the last block's sites grown when it is that run's alone
    /// and ends the pool, else a block of its own.
    fn append(&mut self, run: u32, site: u16) {
        if let Some(last) = self.blocks.last_mut() {
            let ends_pool = (last.start + last.len) as usize == self.pool.len();
            if last.first == run && last.runs == 1 && ends_pool {
                self.pool.push(site);
                last.len += 1;
                return;
            }
        }
        push_sized(
            &mut self.blocks,
            Block {
                first: run,
                runs: 1,
                start: self.pool.len() as u32,
                len: 1,
            },
        );
        self.pool.push(site);
    }

    /// Every distinct (run index, site) of the runs closed, in first-seen order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        self.blocks.iter().flat_map(move |b| {
            let sites = &self.pool[b.start as usize..(b.start + b.len) as usize];
            (b.first..b.first + b.runs).flat_map(move |r| sites.iter().map(move |&s| (r, s)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs come out exactly as a list of distinct pairs in first-seen order gives
    /// them: runs in order with the same sites (one block), gaps, changed sites, a run
    /// with a site more, and runs that come back (the set from then on).
    #[test]
    fn pairs_come_out_in_first_seen_order() {
        let mut cases: Vec<Vec<(u32, u16)>> = vec![
            (0..50)
                .flat_map(|r| [(r, 4), (r, 2), (r, 4), (r, 9)])
                .collect(),
            vec![
                (0, 1),
                (2, 1),
                (3, 1),
                (5, 2),
                (6, 2),
                (6, 1),
                (7, 2),
                (7, 1),
            ],
            (0..3)
                .flat_map(|r| (0..40).map(move |s| (r, (s * 7) % 23)))
                .collect(),
            vec![
                (0, 1),
                (1, 1),
                (0, 2),
                (1, 1),
                (2, 1),
                (1, 3),
                (1, 4),
                (0, 1),
                (2, 5),
            ],
        ];
        // Pseudo-random runs and sites, mostly in order.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let mut run = 0;
            let case = (0..60)
                .map(|_| {
                    match next(10) {
                        0 => run += 1,
                        1 if run > 0 => run -= 1,
                        _ => {}
                    }
                    (run, next(4) as u16)
                })
                .collect();
            cases.push(case);
        }
        // Each case read at once, and read with the reading leaving the ring (closing its
        // run) before every record, or before pseudo-random ones.
        for leave in [Leave::Never, Leave::Always, Leave::Sometimes] {
            for (k, case) in cases.iter().enumerate() {
                let (mut order, mut current) = (SiteOrder::default(), Current::default());
                let mut want: Vec<(u32, u16)> = Vec::new();
                let mut runs_seen: Vec<u32> = Vec::new();
                for &(run, site) in case {
                    let seen_before = runs_seen.contains(&run);
                    if !seen_before {
                        runs_seen.push(run);
                    }
                    let leaves = match leave {
                        Leave::Never => false,
                        Leave::Always => true,
                        Leave::Sometimes => next(5) == 0,
                    };
                    if leaves {
                        order.close(&mut current);
                    }
                    order.add(&mut current, run, seen_before, site);
                    if !want.contains(&(run, site)) {
                        want.push((run, site));
                    }
                }
                order.close(&mut current);
                let got: Vec<(u32, u16)> = order.iter().collect();
                assert_eq!(got, want, "case {k}, {leave:?}: {case:?}");
            }
        }
    }

    /// When a test's reading leaves the ring.
    #[derive(Clone, Copy, Debug)]
    enum Leave {
        Never,
        Always,
        Sometimes,
    }

    /// The run being read is not in the order until the reading closes it.
    #[test]
    fn the_run_being_read_comes_out_once_closed() {
        let (mut order, mut current) = (SiteOrder::default(), Current::default());
        order.add(&mut current, 0, false, 3);
        order.add(&mut current, 1, false, 5);
        order.add(&mut current, 1, true, 6);
        assert_eq!(order.iter().collect::<Vec<_>>(), [(0, 3)]);
        order.close(&mut current);
        assert_eq!(order.iter().collect::<Vec<_>>(), [(0, 3), (1, 5), (1, 6)]);
        assert!(current.run.is_none() && current.set.is_none());
    }

    /// Fifty runs naming the same sites are one block.
    #[test]
    fn runs_naming_the_same_sites_are_one_block() {
        let (mut order, mut current) = (SiteOrder::default(), Current::default());
        for r in 0..50 {
            for s in [4, 2, 4, 9] {
                order.add(&mut current, r, false, s);
            }
        }
        order.close(&mut current);
        assert_eq!(order.blocks.len(), 1);
        assert_eq!(order.pool, [4, 2, 9]);
    }

    /// A reading that leaves the ring before every record (rows of rings interleaved) and
    /// comes back in the same run goes on with that run: the order holds what the ring
    /// read without a break holds (one block, its sites once in the pool), not a set of
    /// every pair.
    #[test]
    fn a_reading_back_in_the_run_it_left_goes_on_with_it() {
        let mut order = SiteOrder::default();
        let mut seen = std::collections::HashSet::new();
        for r in 0..50 {
            for s in [4, 2, 4, 9] {
                let mut current = Current::default();
                order.add(&mut current, r, !seen.insert(r), s);
                order.close(&mut current);
            }
        }
        assert!(order.revisited.is_none());
        assert_eq!(order.blocks.len(), 1);
        assert_eq!(order.pool, [4, 2, 9]);
        // Past a few sites, the run's set is made again when the run is taken back.
        let (mut order, mut current) = (SiteOrder::default(), Current::default());
        for s in 0..40u16 {
            order.close(&mut current);
            order.add(&mut current, 0, s > 0, s % 20);
        }
        assert_eq!(current.set.as_ref().map(|s| s.len()), Some(20));
        order.close(&mut current);
        assert_eq!(order.iter().count(), 20);
        assert_eq!(order.pool.len(), 20);
    }
}
