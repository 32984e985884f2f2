//! Fitting a chip whose AI clock stepped (DVFS): detect the steps, locate them, fit the
//! continuous piecewise counter, remove inconsistent samples, and express the result as a
//! segmented [`ChipTime`] with its report (steps and segments).

use super::chip::{unsolvable, Data, GRID, INCONSISTENT_ROUNDS};
use super::filter::Kept;
use super::piecewise::{solve_pieces, PieceSolution};
use super::report::{ChipFit, SegmentFit, StepFit};
use super::solve::{Obs, Unsolvable};
use super::steps::{detect, layout, locate, solve_resolved, Located};
use super::{ChipTime, FitOptions};
use crate::timebase::Segment;
use std::collections::BTreeMap;

/// Most rounds of locating the steps with the previous round's tile offsets.
const LOCATE_ROUNDS: usize = 4;

/// The stepped fit of one chip, or `None` when its samples show no step (or the stepped
/// model cannot be solved: the single-frequency fit then runs and reports what it finds).
pub(super) fn fit_stepped(
    chip: u32,
    total: usize,
    d: &Data,
    kept: &Kept,
    nominal_mhz: f64,
    opts: &FitOptions,
) -> Option<Result<(ChipTime, ChipFit), String>> {
    let tiles = d.tiles.len();
    let obs: Vec<Obs> = d
        .obs
        .iter()
        .map(|o| Obs {
            u: o.u * d.scale + d.t_ref,
            ..*o
        })
        .collect();
    let regions = detect(&obs, tiles);
    if regions.is_empty() {
        return None;
    }
    // Knots in the middle of the regions first: the tile offsets of that fit are biased by
    // the samples near the misplaced knots, so locate again with the offsets of the located
    // knots until they settle.
    let mut knots: Vec<f64> = regions.iter().map(|r| (r.lo + r.hi) / 2.0).collect();
    let mut located = Vec::new();
    for _ in 0..LOCATE_ROUNDS {
        let first = solve_pieces(&obs, tiles, &layout(&obs, knots.clone(), false))?;
        located = locate(&obs, &first, &regions);
        let mut next: Vec<f64> = located.iter().map(|l| l.at).collect();
        next.dedup_by(|a, b| *a <= *b);
        if next.len() != located.len() {
            return None;
        }
        let moved = next
            .iter()
            .zip(&knots)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        knots = next;
        if moved < 1.0 {
            break;
        }
    }
    let mut active = vec![true; obs.len()];
    let mut inconsistent = 0;
    let mut round = 0;
    let (sol, resolved) = loop {
        let used: Vec<Obs> = obs
            .iter()
            .zip(&active)
            .filter(|(_, &on)| on)
            .map(|(o, _)| *o)
            .collect();
        let Some((sol, resolved)) =
            solve_resolved(&used, tiles, layout(&used, knots.clone(), opts.drift))
        else {
            if round == 0 {
                return None;
            }
            return Some(Err(unsolvable(
                Unsolvable::NoDegreesOfFreedom,
                used.len(),
                kept,
                inconsistent,
            )));
        };
        let excess = inconsistency(&obs, &d.half, &active, &sol);
        if excess.is_empty() || round > INCONSISTENT_ROUNDS {
            break (sol, resolved);
        }
        let worst = excess.iter().map(|&(_, e)| e).fold(0.0, f64::max);
        let cut = if round < INCONSISTENT_ROUNDS {
            worst / 2.0
        } else {
            0.0
        };
        for (i, e) in excess {
            if e >= cut {
                active[i] = false;
                inconsistent += 1;
            }
        }
        round += 1;
    };
    let used: Vec<Obs> = obs
        .iter()
        .zip(&active)
        .filter(|(_, &on)| on)
        .map(|(o, _)| *o)
        .collect();
    Some(Ok(express(
        chip,
        total,
        d,
        kept,
        &used,
        inconsistent,
        &sol,
        &resolved,
        &located,
        nominal_mhz,
    )))
}

/// Frequency of `sol` at `m`, cycles/ns.
fn freq_at(sol: &PieceSolution, m: f64) -> f64 {
    let k = sol.layout.piece(m);
    let (f, g, _) = sol.piece(k);
    let origin = if k == 0 {
        sol.layout.knots.first().copied().unwrap_or(0.0)
    } else {
        sol.layout.knots[k - 1]
    };
    f + g * (m - origin)
}

/// Active observations further from the fit than their bracket allows, with the excess (ns).
fn inconsistency(
    obs: &[Obs],
    half: &[f64],
    active: &[bool],
    sol: &PieceSolution,
) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    for (i, o) in obs.iter().enumerate().filter(|(i, _)| active[*i]) {
        let f = freq_at(sol, o.u);
        let excess = super::chip::excess_ns(
            o.y - sol.predict(o.tile, o.u),
            sol.predict_var(o.tile, o.u),
            half[i],
            f,
        );
        out.extend(excess.map(|e| (i, e)));
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn express(
    chip: u32,
    total: usize,
    d: &Data,
    kept: &Kept,
    used: &[Obs],
    inconsistent: usize,
    sol: &PieceSolution,
    resolved: &[bool],
    located: &[Located],
    nominal_mhz: f64,
) -> (ChipTime, ChipFit) {
    let t0 = d.t0 as f64;
    let knots = &sol.layout.knots;
    let pieces = sol.layout.pieces();
    let (lo, hi) = used
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), o| {
            (a.min(o.u), b.max(o.u))
        });
    let mut sq = 0.0;
    let mut per_piece = vec![(0usize, f64::INFINITY, f64::NEG_INFINITY); pieces];
    for o in used {
        let r = (o.y - sol.predict(o.tile, o.u)) / freq_at(sol, o.u);
        sq += r * r;
        let p = &mut per_piece[sol.layout.piece(o.u)];
        *p = (p.0 + 1, p.1.min(o.u), p.2.max(o.u));
    }
    let residual = if used.is_empty() {
        0.0
    } else {
        (sq / used.len() as f64).sqrt()
    };
    let mut at_ref = BTreeMap::new();
    for (j, tile) in d.tiles.iter().enumerate() {
        if sol.count(j) > 0 {
            at_ref.insert(*tile, d.base[j] as f64 + sol.a[j]);
        }
    }
    let (mut var_sum, mut points, mut worst_all) = (0.0, 0usize, 0.0f64);
    let mut segments = Vec::new();
    let mut segment_fits = Vec::new();
    for k in 0..pieces {
        let from = if k == 0 { lo } else { knots[k - 1].max(lo) };
        let to = if k + 1 < pieces { knots[k].min(hi) } else { hi };
        let mut worst = 0.0f64;
        for j in 0..d.tiles.len() {
            if sol.count(j) == 0 {
                continue;
            }
            for g in 0..GRID {
                let m = from + (to - from) * g as f64 / (GRID - 1) as f64;
                let f = freq_at(sol, m);
                let var = sol.predict_var(j, m) / (f * f);
                worst = worst.max(var.sqrt());
                var_sum += var;
                points += 1;
            }
        }
        worst_all = worst_all.max(worst);
        let (f, g, _) = sol.piece(k);
        let origin = if k == 0 { knots[0] } else { knots[k - 1] };
        segments.push(Segment {
            start_ns: t0 + from,
            origin_ns: t0 + origin,
            origin_cycles: if k == 0 { 0.0 } else { sol.counter(origin) },
            cycles_per_ns: f,
            drift_per_ns: g,
            error_ns: worst,
        });
        let (n, a, b) = per_piece[k];
        let mean = if b > a {
            (sol.counter(b) - sol.counter(a)) / (b - a)
        } else {
            freq_at(sol, from)
        };
        segment_fits.push(SegmentFit {
            span_ns: (t0 + a.min(b), t0 + b.max(a)),
            used: n,
            mhz: mean * 1e3,
            drift_ppm_per_s: resolved[k].then(|| g / f * 1e15),
            error_ns: worst,
        });
    }
    let steps: Vec<StepFit> = located
        .iter()
        .map(|l| StepFit {
            at_ns: t0 + l.at,
            at_sigma_ns: l.sigma,
            region_ns: (t0 + l.region.lo, t0 + l.region.hi),
            mhz_before: freq_at(sol, l.at - 1e-3) * 1e3,
            mhz_after: freq_at(sol, l.at) * 1e3,
        })
        .collect();
    let mean = if hi > lo {
        (sol.counter(hi) - sol.counter(lo)) / (hi - lo)
    } else {
        sol.piece(0).0
    };
    let error_rms = if points > 0 {
        (var_sum / points as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let mut values: Vec<f64> = at_ref.values().copied().collect();
    values.sort_by(f64::total_cmp);
    let time = ChipTime {
        cycles_per_ns: mean,
        drift_per_ns: 0.0,
        reference_ns: t0 + knots[0],
        default_cycles_at_reference: values.get(values.len() / 2).copied().unwrap_or(0.0),
        tile_cycles_at_reference: at_ref.clone(),
        residual_ns: residual,
        error_ns: Some(worst_all),
        segments,
    };
    let report = ChipFit {
        chip,
        samples: total,
        used: used.len(),
        drops: kept.drops,
        inconsistent,
        tiles: at_ref.len(),
        mhz: mean * 1e3,
        ppm_vs_nominal: (mean * 1e3 / nominal_mhz - 1.0) * 1e6,
        drift_ppm_per_s: None,
        drift_sigma_ppm_per_s: f64::INFINITY,
        unresolved_drift_ns: None,
        span_ns: (t0 + lo, t0 + hi),
        residual_ns: residual,
        error_ns: worst_all,
        error_rms_ns: error_rms,
        steps,
        segments: segment_fits,
    };
    (time, report)
}
