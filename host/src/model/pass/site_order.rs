//! A ring's distinct (run, site) pairs in the order its records first name them, held as
//! blocks of runs that name the same sites in the same order (a device log's ring names
//! the same few sites in every run), not one entry per pair.
//!
//! Runs are indexes into the ring's [`crate::ring_runs::RingRuns`]. While each run's
//! site-carrying records come together (a run not seen again once the next begins), the
//! pairs are the blocks expanded in order: block by block, run by run, site by site. Once a
//! run comes back after another began, every pair seen so far is put in a set, and each new
//! pair is appended on its own: exact, at a set entry per pair, for such rings only.

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
    /// The run whose sites are being seen, and its sites so far (not yet a block).
    current: Option<(u32, Vec<u16>)>,
    /// The current run's sites as a set, once they are more than [`FEW`].
    current_set: Option<Box<FxHashSet<u16>>>,
    /// Every pair seen, once a run came back (then `current` is `None`).
    revisited: Option<Box<FxHashSet<(u32, u16)>>>,
}

impl SiteOrder {
    /// A site-carrying record of run `run` (an index) at `site`; `seen_before` says whether
    /// the run had one before.
    pub(super) fn add(&mut self, run: u32, seen_before: bool, site: u16) {
        if let Some(seen) = &mut self.revisited {
            if seen.insert((run, site)) {
                self.append(run, site);
            }
            return;
        }
        match &mut self.current {
            Some((r, sites)) if *r == run => {
                // A run names a few sites: a search of them, a set past a few.
                let new = match &mut self.current_set {
                    Some(set) => set.insert(site),
                    None => !sites.contains(&site),
                };
                if new {
                    sites.push(site);
                    if sites.len() > FEW && self.current_set.is_none() {
                        self.current_set = Some(Box::new(sites.iter().copied().collect()));
                    }
                }
                return;
            }
            _ => {}
        }
        self.close_current();
        if seen_before {
            let seen: FxHashSet<(u32, u16)> = self.iter().collect();
            self.revisited = Some(Box::new(seen));
            self.add(run, seen_before, site);
            return;
        }
        self.current = Some((run, vec![site]));
    }

    /// The current run's sites as a block: the last block grown by one run when it is
    /// the run before with the same sites, else a new block (sharing the last block's
    /// sites when they are the same).
    fn close_current(&mut self) {
        self.current_set = None;
        let Some((run, sites)) = self.current.take() else {
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
                    self.blocks.push(b);
                }
                return;
            }
        }
        let start = self.pool.len() as u32;
        self.pool.extend_from_slice(&sites);
        self.blocks.push(Block {
            first: run,
            runs: 1,
            start,
            len: sites.len() as u32,
        });
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
        self.blocks.push(Block {
            first: run,
            runs: 1,
            start: self.pool.len() as u32,
            len: 1,
        });
        self.pool.push(site);
    }

    /// Every distinct (run index, site), in first-seen order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        let blocks = self.blocks.iter().flat_map(move |b| {
            let sites = &self.pool[b.start as usize..(b.start + b.len) as usize];
            (b.first..b.first + b.runs).flat_map(move |r| sites.iter().map(move |&s| (r, s)))
        });
        let current = self
            .current
            .iter()
            .flat_map(|(r, sites)| sites.iter().map(|&s| (*r, s)));
        blocks.chain(current)
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
        for (k, case) in cases.iter().enumerate() {
            let mut order = SiteOrder::default();
            let mut want: Vec<(u32, u16)> = Vec::new();
            let mut runs_seen: Vec<u32> = Vec::new();
            for &(run, site) in case {
                let seen_before = runs_seen.contains(&run);
                if !seen_before {
                    runs_seen.push(run);
                }
                order.add(run, seen_before, site);
                if !want.contains(&(run, site)) {
                    want.push((run, site));
                }
            }
            assert_eq!(order.iter().collect::<Vec<_>>(), want, "case {k}: {case:?}");
        }
    }

    /// Fifty runs naming the same sites are one block.
    #[test]
    fn runs_naming_the_same_sites_are_one_block() {
        let mut order = SiteOrder::default();
        for r in 0..50 {
            for s in [4, 2, 4, 9] {
                order.add(r, false, s);
            }
        }
        order.close_current();
        assert_eq!(order.blocks.len(), 1);
        assert_eq!(order.pool, [4, 2, 9]);
    }
}
