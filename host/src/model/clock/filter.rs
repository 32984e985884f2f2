//! Which samples of one chip a fit may use: per tile, drop inverted brackets,
//! non-monotonic samples and wide brackets (rules in the module docs of `clock`).

use super::{FitOptions, SyncSample};
use riscv_linker::NocCoord;
use std::collections::BTreeMap;

/// How many samples each rule dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// Host time after < host time before.
    pub(crate) inverted: usize,
    /// Outside the largest run of samples whose device cycles do not decrease in host order.
    pub(crate) non_monotonic: usize,
    /// Tiles left out because more than half their samples were non-monotonic.
    pub(crate) tiles_left_out: usize,
    /// Samples of those tiles (not counted in `non_monotonic`).
    pub(crate) left_out_samples: usize,
    /// Brackets too wide (or beyond the kept fraction).
    pub(crate) wide: usize,
}

/// The samples a fit may use, per tile, in host-time order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    pub tiles: Vec<(NocCoord, Vec<SyncSample>)>,
    pub drops: Drops,
}

/// Applies the rules to one chip's samples.
pub(super) fn filter(
    samples: impl IntoIterator<Item = (NocCoord, SyncSample)>,
    opts: &FitOptions,
) -> Kept {
    let mut by_tile: BTreeMap<NocCoord, Vec<SyncSample>> = BTreeMap::new();
    let mut drops = Drops::default();
    for (tile, s) in samples {
        if s.host_after_ns < s.host_before_ns {
            drops.inverted += 1;
        } else {
            by_tile.entry(tile).or_default().push(s);
        }
    }
    let mut tiles = Vec::new();
    for (tile, mut list) in by_tile {
        list.sort_by_key(|s| (s.host_before_ns, s.host_after_ns));
        let cycles: Vec<u64> = list.iter().map(|s| s.device_cycles).collect();
        let keep = longest_non_decreasing(&cycles);
        if 2 * keep.len() < list.len() {
            drops.tiles_left_out += 1;
            drops.left_out_samples += list.len();
            continue;
        }
        drops.non_monotonic += list.len() - keep.len();
        let list: Vec<SyncSample> = keep.into_iter().map(|i| list[i]).collect();
        let kept = tightest(list, opts);
        drops.wide += kept.1;
        tiles.push((tile, kept.0));
    }
    Kept { tiles, drops }
}

/// Drops wide brackets; returns the rest in host order and how many were dropped.
fn tightest(list: Vec<SyncSample>, opts: &FitOptions) -> (Vec<SyncSample>, usize) {
    let n = list.len();
    let mut widths: Vec<u64> = list.iter().map(|s| s.bracket_ns()).collect();
    widths.sort_unstable();
    let (min, median) = (widths[0] as f64, widths[n / 2] as f64);
    let mut limit = median + opts.wide_spread.max(0.0) * (median - min);
    if let Some(max) = opts.max_bracket_ns {
        limit = limit.min(max as f64);
    }
    let fraction = if opts.keep_fraction.is_finite() {
        opts.keep_fraction.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let at_most = ((fraction * n as f64).ceil() as usize).max(1);
    let mut order: Vec<usize> = (0..n)
        .filter(|&i| list[i].bracket_ns() as f64 <= limit)
        .collect();
    order.sort_by_key(|&i| (list[i].bracket_ns(), i));
    order.truncate(at_most);
    order.sort_unstable();
    let kept: Vec<SyncSample> = order.into_iter().map(|i| list[i]).collect();
    let dropped = n - kept.len();
    (kept, dropped)
}

/// Indices of a longest non-decreasing subsequence (patience sorting, O(n log n)).
pub(crate) fn longest_non_decreasing(v: &[u64]) -> Vec<usize> {
    // tails[k]: index of the smallest possible last element of a run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev = vec![usize::MAX; v.len()];
    for i in 0..v.len() {
        let k = tails.partition_point(|&t| v[t] <= v[i]);
        if k > 0 {
            prev[i] = tails[k - 1];
        }
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut i = tails.last().copied().unwrap_or(usize::MAX);
    while i != usize::MAX {
        out.push(i);
        i = prev[i];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(before: u64, cycles: u64, after: u64) -> SyncSample {
        SyncSample {
            host_before_ns: before,
            device_cycles: cycles,
            host_after_ns: after,
        }
    }

    #[test]
    fn longest_run_skips_spikes_and_dips() {
        assert_eq!(
            longest_non_decreasing(&[1, 2, 3, 100, 5, 6]),
            vec![0, 1, 2, 4, 5]
        );
        assert_eq!(longest_non_decreasing(&[1, 2, 0, 4, 4]), vec![0, 1, 3, 4]);
        assert_eq!(longest_non_decreasing(&[]), Vec::<usize>::new());
        assert_eq!(longest_non_decreasing(&[5, 4, 3]).len(), 1);
    }

    #[test]
    fn each_rule_counts_what_it_drops() {
        let t = NocCoord::new(1, 1);
        let mut v: Vec<(NocCoord, SyncSample)> = (0..10)
            .map(|k| (t, s(1000 * k, 1000 * k + 7, 1000 * k + 100 + k % 3)))
            .collect();
        v.push((t, s(20_000, 1 << 40, 20_100))); // a torn read
        v.push((t, s(30_000, 30_007, 39_000))); // a preempted host: wide
        v.push((t, s(40_000, 40_007, 39_999))); // inverted
        let u = NocCoord::new(2, 1); // counter reset halfway: left out
        v.extend((0..6).map(|k| {
            (
                u,
                s(
                    1000 * k,
                    if k < 3 { 9_000_000 + k } else { k },
                    1000 * k + 100,
                ),
            )
        }));
        let kept = filter(v, &FitOptions::default());
        assert_eq!(
            kept.drops,
            Drops {
                inverted: 1,
                non_monotonic: 1 + 3,
                tiles_left_out: 0,
                left_out_samples: 0,
                wide: 1
            },
            "the torn read, and tile u keeps a run of exactly half its samples"
        );
        assert_eq!(kept.tiles[0].1.len(), 10);
        let half = FitOptions {
            keep_fraction: 0.5,
            ..FitOptions::default()
        };
        let kept = filter(
            (0..10).map(|k| (t, s(1000 * k, k, 1000 * k + 100 + k))),
            &half,
        );
        assert_eq!(
            kept.tiles[0]
                .1
                .iter()
                .map(|s| s.host_before_ns)
                .collect::<Vec<_>>(),
            vec![0, 1000, 2000, 3000, 4000]
        );
        let reset = filter(
            (0..6).map(|k| {
                (
                    u,
                    s(
                        1000 * k,
                        if k < 4 { 9_000_000 + k } else { k },
                        1000 * k + 1,
                    ),
                )
            }),
            &half,
        );
        assert_eq!(
            (
                reset.drops.tiles_left_out,
                reset.drops.left_out_samples,
                reset.tiles.len()
            ),
            (0, 0, 1)
        );
        let reset = filter(
            (0..7).map(|k| {
                (
                    u,
                    s(
                        1000 * k,
                        if k < 3 { 9_000_000 + k } else { 10 - k },
                        1000 * k + 1,
                    ),
                )
            }),
            &half,
        );
        assert_eq!(
            (
                reset.drops.tiles_left_out,
                reset.drops.left_out_samples,
                reset.tiles.len()
            ),
            (1, 7, 0)
        );
    }
}
