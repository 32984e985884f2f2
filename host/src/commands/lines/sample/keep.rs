//! What a sampled profile keeps besides its per-pc counts, in bounded memory however long
//! the run: the samples per window for the between-window interval ([`Clusters`]) and the
//! timed samples for the split by zone ([`TimedKeep`]). Neither stops sampling nor favours
//! the start of a run: windows are merged into ever wider groups of consecutive windows, and
//! timed samples are thinned to a uniform subset.

use super::{SampledKernel, TimedSample};
use crate::util::mix::mix;
use std::collections::BTreeMap;

/// Groups of windows a kernel keeps at most; past it, neighbouring groups are merged.
pub(crate) const MAX_CLUSTERS: usize = 1024;

/// Timed samples a profile keeps at most (about 48 bytes each).
pub(crate) const MAX_TIMED: usize = 1 << 20;

/// A kernel's samples per pc in groups of consecutive windows (the clusters of the
/// between-window interval, [`super::interval`]): one window a group until
/// [`MAX_CLUSTERS`] are full, then neighbours pair up and each later group takes twice as
/// many windows. Groups of consecutive windows are as valid clusters as single windows;
/// with a thousand of them the interval's spread is estimated as well.
#[derive(Clone, Debug, Default)]
pub(crate) struct Clusters {
    /// Per group: its windows, and its samples by pc (sorted by pc).
    groups: Vec<(u64, Vec<(u32, u64)>)>,
    /// Windows a new group takes before the next starts.
    width: u64,
}

impl Clusters {
    /// Adds one window's samples by pc (sorted by pc).
    pub(crate) fn push(&mut self, window: Vec<(u32, u64)>) {
        let width = self.width.max(1);
        match self.groups.last_mut() {
            Some((n, counts)) if *n < width => {
                *n += 1;
                *counts = merge(counts, &window);
            }
            _ => self.groups.push((1, window)),
        }
        if self.groups.len() > MAX_CLUSTERS {
            self.halve();
            self.width = width * 2;
        }
    }

    /// Adds another kernel's groups (another launch of it).
    pub(crate) fn extend(&mut self, o: &Clusters) {
        self.groups.extend(o.groups.iter().cloned());
        self.width = self.width.max(o.width);
        while self.groups.len() > MAX_CLUSTERS {
            self.halve();
            self.width = self.width.max(1) * 2;
        }
    }

    /// Each group's samples by pc.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[(u32, u64)]> {
        self.groups.iter().map(|(_, c)| &c[..])
    }

    /// Groups kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }

    fn halve(&mut self) {
        let groups = std::mem::take(&mut self.groups);
        let mut it = groups.into_iter();
        while let Some((n, a)) = it.next() {
            match it.next() {
                Some((m, b)) => self.groups.push((n + m, merge(&a, &b))),
                None => self.groups.push((n, a)),
            }
        }
    }
}

/// Two pc-sorted count lists added up.
fn merge(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut m: BTreeMap<u32, u64> = a.iter().copied().collect();
    for &(pc, n) in b {
        *m.entry(pc).or_default() += n;
    }
    m.into_iter().collect()
}

/// Which timed samples a profile keeps: sample number `seq` (in arrival order) is kept
/// while a fixed hash of it is 0 modulo `stride`; whenever more than [`MAX_TIMED`] are kept
/// the stride doubles and those no longer passing are dropped. The kept samples are a
/// uniform subset of all (nested: a smaller subset is inside a larger), so the zone shares
/// they give are unbiased; with fewer samples their intervals are wider, and the report
/// says how many were kept.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimedKeep {
    /// Timed samples taken.
    pub(crate) seen: u64,
    /// Kept now.
    pub(crate) kept: u64,
    stride: u64,
}

impl Default for TimedKeep {
    fn default() -> TimedKeep {
        TimedKeep {
            seen: 0,
            kept: 0,
            stride: 1,
        }
    }
}

impl TimedKeep {
    /// Numbers the next timed sample; `Some(seq)` if it is to be kept.
    pub(crate) fn next(&mut self) -> Option<u64> {
        let seq = self.seen;
        self.seen += 1;
        self.passes(seq).then(|| {
            self.kept += 1;
            seq
        })
    }

    fn passes(&self, seq: u64) -> bool {
        mix(seq ^ 0x7469_6D65_6400_0000) & (self.stride - 1) == 0
    }

    /// Once over the budget: doubles the stride and drops from `kernels` the samples that
    /// no longer pass.
    pub(crate) fn thin<'a>(&mut self, kernels: impl Iterator<Item = &'a mut SampledKernel>) {
        if self.kept as usize <= MAX_TIMED {
            return;
        }
        let mut all: Vec<&mut SampledKernel> = kernels.collect();
        while self.kept as usize > MAX_TIMED {
            self.stride *= 2;
            let mut kept = 0;
            for k in all.iter_mut() {
                let keep = |s: &TimedSample| self.passes(s.seq);
                k.timed.retain(keep);
                kept += k.timed.len() as u64;
            }
            self.kept = kept;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_stay_bounded_and_keep_every_sample() {
        let mut c = Clusters::default();
        for w in 0..10_000u64 {
            c.push(vec![(0x6000, 3), (0x6004 + 4 * (w as u32 % 3), 1)]);
        }
        assert!(
            c.len() <= MAX_CLUSTERS && c.len() > MAX_CLUSTERS / 2,
            "{}",
            c.len()
        );
        let total: u64 = c.iter().flatten().map(|x| x.1).sum();
        assert_eq!(total, 40_000, "no sample lost in the merging");
        let windows: u64 = c.groups.iter().map(|g| g.0).sum();
        assert_eq!(windows, 10_000);
        // Consecutive windows: every group but the last holds the same number of them.
        let w0 = c.groups[0].0;
        assert!(c.groups[..c.len() - 1].iter().all(|g| g.0 == w0), "{w0}");
    }

    #[test]
    fn timed_samples_thin_to_a_uniform_subset_within_the_budget() {
        let mut keep = TimedKeep::default();
        let mut k = SampledKernel::default();
        let n = 3 * MAX_TIMED as u64;
        for i in 0..n {
            if let Some(seq) = keep.next() {
                k.timed.push(TimedSample {
                    chip: 0,
                    tile: riscv_linker::NocCoord::new(1, 1),
                    time: i,
                    pc: 0x6000 + 4 * (i % 4) as u32, // four lines, 25 % each
                    cause: 0,
                    window: i / 16,
                    seq,
                });
            }
            keep.thin(std::iter::once(&mut k));
        }
        assert_eq!(keep.seen, n);
        assert!(
            k.timed.len() <= MAX_TIMED && k.timed.len() > MAX_TIMED / 4,
            "{}",
            k.timed.len()
        );
        assert_eq!(keep.kept, k.timed.len() as u64);
        for line in 0..4 {
            let share = k.timed.iter().filter(|s| s.pc == 0x6000 + 4 * line).count() as f64
                / k.timed.len() as f64;
            assert!((share - 0.25).abs() < 0.005, "line {line}: {share}");
        }
        // Late samples are kept as often as early ones.
        let late = k.timed.iter().filter(|s| s.time >= n / 2).count() as f64;
        assert!((late / k.timed.len() as f64 - 0.5).abs() < 0.01);
    }
}
