//! Frequency steps (DVFS): finding them in one chip's samples, locating each, and fitting
//! the chip piecewise (see `piecewise.rs` for the model).
//!
//! ## Detection
//!
//! The chip's samples, in host-time order, are cut into bins of about four samples per tile.
//! Each bin gives a local frequency, the shared slope of its tiles' samples (tile offsets
//! eliminated by centring, as in the whole-run fit), with a standard error from the bin's
//! own scatter. Walking the bins, the reference is the weighted mean of the last
//! [`WINDOW`] bins of the current piece (so slow drift is followed, not mistaken for a
//! step). A bin that differs from it by more than [`SIGMAS`] standard errors and more than
//! [`MIN_REL`] is a deviation; the new regime starts at the first later bin that agrees with
//! the bin after it. If that regime differs from the old one, a step lies between the last
//! bin of the old regime and the first of the new (the *region*); otherwise the deviation was
//! a burst of bad samples and is ignored. A step whose two sides agree within the bar, or one
//! shorter than a bin, is not found: the consistency check of the fit then flags samples.
//!
//! ## Location
//!
//! With the tile offsets of a first piecewise fit (knots in the middle of the regions), each
//! sample becomes a value of the chip's counter. Near one region the counter is two lines
//! meeting at the step `τ`: `L + f_L·(t-τ)` before, `L + f_R·(t-τ)` after. `τ` minimises
//! the residual sum of squares of that model over the region (a grid, refined five times);
//! its standard error comes from the Gauss-Newton covariance of `(L, f_L, f_R, τ)`. The
//! sample noise of ~100 ns and a frequency change of tens of percent put `τ` within tens of
//! ns, whatever the time between samples. The final fit uses these knots, with a drift term
//! in each piece long enough to resolve one.

use super::chip::DRIFT_SIGMAS;
use super::piecewise::{invert, solve_pieces, Layout, PieceSolution};
use super::solve::Obs;

/// Samples per tile per bin.
const PER_TILE: usize = 4;
/// Fewest samples in a bin.
const MIN_BIN: usize = 16;
/// A bin deviates when it is this many standard errors from the reference...
pub(super) const SIGMAS: f64 = 8.0;
/// ... and relatively this far (drift over a run stays well below; DVFS steps are percent).
pub(super) const MIN_REL: f64 = 50e-6;
/// Bins the reference frequency is averaged over.
const WINDOW: usize = 8;
/// Data used on each side of a region to locate its step, ns (capped by the next region).
const LOCAL_NS: f64 = 50e6;
/// A piece gets a drift term when its samples span at least this long, ns.
const DRIFT_SPAN_NS: f64 = 100e6;

/// A local frequency estimate.
#[derive(Clone, Copy, Debug)]
struct Bin {
    first: f64,
    last: f64,
    slope: Option<(f64, f64)>,
}

/// Where a step lies: somewhere in `[lo, hi]` (ns on the data's axis).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Region {
    pub lo: f64,
    pub hi: f64,
}

/// A located step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Located {
    pub at: f64,
    pub sigma: f64,
    pub region: Region,
}

/// Regions of the steps in `obs` (their `u` is host time in ns), none if the chip kept one
/// frequency.
pub(super) fn detect(obs: &[Obs], tiles: usize) -> Vec<Region> {
    let bins = bins(obs, tiles);
    let agree = |a: (f64, f64), b: (f64, f64)| {
        let d = (a.0 - b.0).abs();
        d <= SIGMAS * (a.1 * a.1 + b.1 * b.1).sqrt() || d <= MIN_REL * b.0.abs()
    };
    let valid: Vec<usize> = (0..bins.len())
        .filter(|&i| bins[i].slope.is_some())
        .collect();
    let slope = |i: usize| bins[valid[i]].slope.unwrap_or((0.0, f64::INFINITY));
    let mut out = Vec::new();
    let mut window: Vec<usize> = Vec::new();
    let mut b = 0;
    while b < valid.len() {
        let Some(reference) = mean(window.iter().map(|&i| slope(i))) else {
            window.push(b);
            b += 1;
            continue;
        };
        if agree(slope(b), reference) {
            window.push(b);
            if window.len() > WINDOW {
                window.remove(0);
            }
            b += 1;
            continue;
        }
        // A deviation: the new regime starts where two neighbouring bins agree.
        let Some(c) = (b..valid.len().saturating_sub(1)).find(|&c| agree(slope(c), slope(c + 1)))
        else {
            break;
        };
        if agree(slope(c), reference) && agree(slope(c + 1), reference) {
            b = c; // a burst of bad samples, not a step
            continue;
        }
        let last_old = *window.last().unwrap_or(&b);
        out.push(Region {
            lo: bins[valid[last_old]].first,
            hi: bins[valid[c]].last,
        });
        window = vec![c];
        b = c + 1;
    }
    out
}

fn mean(it: impl Iterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
    let (mut sw, mut s) = (0.0, 0.0);
    for (v, sigma) in it {
        let w = 1.0 / (sigma * sigma).max(f64::MIN_POSITIVE);
        sw += w;
        s += w * v;
    }
    (sw > 0.0 && sw.is_finite()).then(|| (s / sw, 1.0 / sw.sqrt()))
}

fn bins(obs: &[Obs], tiles: usize) -> Vec<Bin> {
    let mut order: Vec<usize> = (0..obs.len()).collect();
    order.sort_by(|&a, &b| obs[a].u.total_cmp(&obs[b].u));
    let size = (PER_TILE * tiles).max(MIN_BIN);
    let mut out = Vec::new();
    for chunk in order.chunks(size) {
        if chunk.len() < size / 2 {
            // A short tail joins the previous bin's region without a slope of its own.
            if let Some(last) = out.last_mut() {
                let b: &mut Bin = last;
                b.last = obs[chunk[chunk.len() - 1]].u;
                continue;
            }
        }
        out.push(Bin {
            first: obs[chunk[0]].u,
            last: obs[chunk[chunk.len() - 1]].u,
            slope: slope(obs, chunk, tiles),
        });
    }
    out
}

/// Shared slope of the tiles' samples in `chunk` (cycles/ns) and its standard error.
fn slope(obs: &[Obs], chunk: &[usize], tiles: usize) -> Option<(f64, f64)> {
    let mut n = vec![0usize; tiles];
    let mut mu = vec![0.0; tiles];
    let mut my = vec![0.0; tiles];
    let t0 = obs[chunk[0]].u;
    let y0: Vec<f64> = {
        let mut v = vec![f64::NAN; tiles];
        for &i in chunk {
            if v[obs[i].tile].is_nan() {
                v[obs[i].tile] = obs[i].y;
            }
        }
        v
    };
    for &i in chunk {
        let o = &obs[i];
        n[o.tile] += 1;
        mu[o.tile] += o.u - t0;
        my[o.tile] += o.y - y0[o.tile];
    }
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &i in chunk {
        let o = &obs[i];
        let c = n[o.tile] as f64;
        let (dx, dy) = (o.u - t0 - mu[o.tile] / c, o.y - y0[o.tile] - my[o.tile] / c);
        sxx += dx * dx;
        sxy += dx * dy;
    }
    let used = n.iter().filter(|&&c| c > 0).count();
    let dof = chunk.len().checked_sub(used + 1).filter(|&d| d > 0)?;
    // Negated on purpose: a NaN variance fails the test too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(sxx > 0.0) {
        return None;
    }
    let b = sxy / sxx;
    let mut rss = 0.0;
    for &i in chunk {
        let o = &obs[i];
        let c = n[o.tile] as f64;
        let r = (o.y - y0[o.tile] - my[o.tile] / c) - b * (o.u - t0 - mu[o.tile] / c);
        rss += r * r;
    }
    let sigma = (rss / dof as f64 / sxx).sqrt();
    (b.is_finite() && b > 0.0 && sigma.is_finite()).then_some((b, sigma.max(f64::MIN_POSITIVE)))
}

/// Locates each step of `regions` in its region, given a first fit `sol` whose knots lie in
/// the regions (one knot per region).
pub(super) fn locate(obs: &[Obs], sol: &PieceSolution, regions: &[Region]) -> Vec<Located> {
    let mut out = Vec::new();
    for (k, r) in regions.iter().enumerate() {
        let from = if k == 0 {
            f64::NEG_INFINITY
        } else {
            regions[k - 1].hi
        };
        let to = regions.get(k + 1).map_or(f64::INFINITY, |n| n.lo);
        let (from, to) = ((r.lo - LOCAL_NS).max(from), (r.hi + LOCAL_NS).min(to));
        let pts: Vec<(f64, f64)> = obs
            .iter()
            .filter(|o| o.u >= from && o.u <= to && !sol.a[o.tile].is_nan())
            .map(|o| (o.u, o.y - sol.a[o.tile]))
            .collect();
        let located = locate_one(&pts, *r).unwrap_or(Located {
            at: (r.lo + r.hi) / 2.0,
            sigma: (r.hi - r.lo) / 2.0,
            region: *r,
        });
        out.push(located);
    }
    out
}

/// The kinked two-line model of `pts` with its kink at `tau`: RSS and `(L, f_L, f_R)`.
fn kinked(pts: &[(f64, f64)], zbar: f64, tau: f64) -> Option<(f64, [f64; 3])> {
    let mut m = vec![vec![0.0; 3]; 3];
    let mut r = [0.0; 3];
    for &(t, z) in pts {
        let u = (t - tau) / 1e6;
        let x = if t < tau {
            [1.0, u, 0.0]
        } else {
            [1.0, 0.0, u]
        };
        for i in 0..3 {
            r[i] += x[i] * (z - zbar);
            for j in 0..3 {
                m[i][j] += x[i] * x[j];
            }
        }
    }
    let inv = invert(m)?;
    let beta = [0, 1, 2].map(|i| (0..3).map(|j| inv[i][j] * r[j]).sum::<f64>());
    let rss = pts
        .iter()
        .map(|&(t, z)| {
            let u = (t - tau) / 1e6;
            let e = z - zbar - beta[0] - if t < tau { beta[1] * u } else { beta[2] * u };
            e * e
        })
        .sum();
    Some((rss, beta))
}

fn locate_one(pts: &[(f64, f64)], r: Region) -> Option<Located> {
    if pts.len() < 8 {
        return None;
    }
    let zbar = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    const GRID: usize = 48;
    let (mut lo, mut hi) = (r.lo, r.hi);
    let mut best = (f64::INFINITY, (lo + hi) / 2.0);
    for _ in 0..6 {
        let step = (hi - lo) / GRID as f64;
        for i in 0..=GRID {
            let tau = lo + step * i as f64;
            if let Some((rss, _)) = kinked(pts, zbar, tau) {
                if rss < best.0 {
                    best = (rss, tau);
                }
            }
        }
        (lo, hi) = ((best.1 - step).max(r.lo), (best.1 + step).min(r.hi));
        if step < 0.05 {
            break;
        }
    }
    let (rss, beta) = kinked(pts, zbar, best.1)?;
    // Gauss-Newton covariance of (L, f_L, f_R, τ): ∂z/∂τ = -f of the side (per ms).
    let tau = best.1;
    let mut m = vec![vec![0.0; 4]; 4];
    for &(t, _) in pts {
        let u = (t - tau) / 1e6;
        let x = if t < tau {
            [1.0, u, 0.0, -beta[1]]
        } else {
            [1.0, 0.0, u, -beta[2]]
        };
        for i in 0..4 {
            for j in 0..4 {
                m[i][j] += x[i] * x[j];
            }
        }
    }
    let s2 = rss / (pts.len() - 4) as f64;
    let sigma = invert(m).map_or(f64::INFINITY, |inv| (s2 * inv[3][3]).max(0.0).sqrt() * 1e6);
    Some(Located {
        at: tau,
        sigma,
        region: r,
    })
}

/// The layout for `knots` over data spanning `span`: a drift term in each piece whose data
/// spans at least [`DRIFT_SPAN_NS`] (when drift is modelled).
pub(super) fn layout(obs: &[Obs], knots: Vec<f64>, drift: bool) -> Layout {
    let pieces = knots.len() + 1;
    let mut range = vec![(f64::INFINITY, f64::NEG_INFINITY); pieces];
    let l = Layout {
        knots,
        quad: vec![false; pieces],
    };
    for o in obs {
        let k = l.piece(o.u);
        range[k] = (range[k].0.min(o.u), range[k].1.max(o.u));
    }
    let quad = range
        .iter()
        .map(|&(a, b)| drift && b - a >= DRIFT_SPAN_NS)
        .collect();
    Layout { quad, ..l }
}

/// Fits `obs` with `layout`, then drops the drift terms that are not resolved and refits.
pub(super) fn solve_resolved(
    obs: &[Obs],
    tiles: usize,
    layout: Layout,
) -> Option<(PieceSolution, Vec<bool>)> {
    let sol = solve_pieces(obs, tiles, &layout)?;
    let resolved: Vec<bool> = (0..layout.pieces())
        .map(|k| {
            let (_, g, sg) = sol.piece(k);
            layout.quad[k] && g.abs() >= DRIFT_SIGMAS * sg
        })
        .collect();
    if resolved == layout.quad {
        return Some((sol, resolved));
    }
    let sol = solve_pieces(
        obs,
        tiles,
        &Layout {
            quad: resolved.clone(),
            ..layout
        },
    )?;
    Some((sol, resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-robin samples of `tiles` tiles every `every` ns from 0 to `end`, ~100 ns noise.
    fn samples(counter: impl Fn(f64) -> f64, tiles: usize, every: f64, end: f64) -> Vec<Obs> {
        let mut out = Vec::new();
        let mut k = 0u64;
        let mut t = 0.0;
        while t < end {
            let tile = (k % tiles as u64) as usize;
            let noise =
                ((k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
                    * 300.0;
            out.push(Obs {
                tile,
                u: t + noise,
                y: counter(t) + 1e5 * tile as f64,
            });
            k += 1;
            t += every;
        }
        out
    }

    fn steps(t: f64) -> f64 {
        // 1.35 GHz, 0.8 GHz from 1.2 s, 1.1 GHz from 2.5004 s.
        let (a, b) = (1.2e9, 2.5004e9);
        if t < a {
            1.35 * t
        } else if t < b {
            1.35 * a + 0.8 * (t - a)
        } else {
            1.35 * a + 0.8 * (b - a) + 1.1 * (t - b)
        }
    }

    #[test]
    fn finds_and_locates_steps_to_tens_of_ns() {
        let obs = samples(steps, 8, 50_000.0, 4e9);
        let regions = detect(&obs, 8);
        assert_eq!(regions.len(), 2, "{regions:?}");
        assert!(
            regions[0].lo <= 1.2e9 && 1.2e9 <= regions[0].hi,
            "{regions:?}"
        );
        assert!(
            regions[1].lo <= 2.5004e9 && 2.5004e9 <= regions[1].hi,
            "{regions:?}"
        );
        let knots: Vec<f64> = regions.iter().map(|r| (r.lo + r.hi) / 2.0).collect();
        let sol = solve_pieces(&obs, 8, &layout(&obs, knots, false)).unwrap();
        let located = locate(&obs, &sol, &regions);
        for (l, truth) in located.iter().zip([1.2e9, 2.5004e9]) {
            assert!((l.at - truth).abs() < 100.0, "{l:?} vs {truth}");
            assert!(l.sigma > 1.0 && l.sigma < 100.0, "{l:?}");
            assert!((l.at - truth).abs() < 5.0 * l.sigma, "{l:?} vs {truth}");
        }
    }

    #[test]
    fn one_frequency_with_drift_has_no_step() {
        // 1 GHz drifting by 0.5 ppm/s over 10 s, sampled sparsely and densely.
        let drifting = |t: f64| t + 0.5e-6 * t * t / 2e9;
        for every in [20_000.0, 2e6] {
            let obs = samples(drifting, 8, every, 1e10);
            assert!(detect(&obs, 8).is_empty(), "every {every} ns");
        }
        // Two windows a second apart, nothing between.
        let mut obs = samples(|t| 1.0002 * t, 8, 500_000.0, 5e7);
        obs.extend(
            samples(|t| 1.0002 * t, 8, 500_000.0, 5e7)
                .into_iter()
                .map(|o| Obs {
                    u: o.u + 1e9,
                    y: o.y + 1.0002e9,
                    ..o
                }),
        );
        assert!(detect(&obs, 8).is_empty());
    }
}
