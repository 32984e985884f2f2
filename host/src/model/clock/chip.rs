//! Fitting one chip: filter, solve, remove inconsistent samples, decide on drift, estimate
//! the error, and express the result as a [`ChipTime`].

use super::filter::{filter, Kept};
use super::report::ChipFit;
use super::solve::{solve, Obs, Solution, Unsolvable};
use super::{ChipTime, FitOptions, SyncSample};
use riscv_linker::NocCoord;
use std::collections::BTreeMap;

/// Rounds of removing inconsistent samples (worst first) before removing all that remain.
const ROUNDS: usize = 8;
/// Drift is modelled when it is at least this many standard errors from zero: a spurious
/// drift costs about its own size times span²/8 mid-run, so the bar is high.
pub(super) const DRIFT_SIGMAS: f64 = 3.0;
/// Points per tile at which the error estimate is evaluated across the synced span.
pub(super) const GRID: usize = 33;
/// Rounds of removing inconsistent samples, for the stepped fit too.
pub(super) const INCONSISTENT_ROUNDS: usize = ROUNDS;

/// The chip's observations in solver units.
pub(super) struct Data {
    pub(crate) obs: Vec<Obs>,
    /// Half bracket of each observation, ns.
    pub half: Vec<f64>,
    pub tiles: Vec<NocCoord>,
    /// Per tile: cycles of its first sample (the base of its `y`).
    pub base: Vec<u64>,
    /// Host time all relative times count from, and the reference and scale of `u`.
    pub t0: u64,
    pub(crate) t_ref: f64,
    pub scale: f64,
    pub span: (f64, f64),
}

fn prepare(kept: &Kept) -> Data {
    let t0 = kept
        .tiles
        .iter()
        .flat_map(|(_, v)| v.iter().map(|s| s.host_before_ns))
        .min()
        .unwrap_or(0);
    let mid = |s: &SyncSample| (s.host_before_ns - t0) as f64 + s.bracket_ns() as f64 / 2.0;
    let all = kept.tiles.iter().flat_map(|(_, v)| v.iter().map(mid));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| {
        (a.min(m), b.max(m))
    });
    let (t_ref, scale) = ((lo + hi) / 2.0, ((hi - lo) / 2.0).max(1.0));
    let mut d = Data {
        obs: vec![],
        half: vec![],
        tiles: vec![],
        base: vec![],
        t0,
        t_ref,
        scale,
        span: (lo, hi),
    };
    for (j, (tile, samples)) in kept.tiles.iter().enumerate() {
        let base = samples.first().map_or(0, |s| s.device_cycles);
        d.tiles.push(*tile);
        d.base.push(base);
        for s in samples {
            // Non-decreasing within a tile (filtered), so the subtraction cannot wrap.
            let y = s.device_cycles.saturating_sub(base) as f64 + 0.5;
            d.obs.push(Obs {
                tile: j,
                u: (mid(s) - t_ref) / scale,
                y,
            });
            d.half.push(s.bracket_ns() as f64 / 2.0);
        }
    }
    d
}

/// What went wrong, in words, with the counts that explain it.
pub(super) fn unsolvable(why: Unsolvable, used: usize, kept: &Kept, inconsistent: usize) -> String {
    let d = &kept.drops;
    let counts = format!(
        "{used} sample(s) usable after dropping {} inverted, {} non-monotonic, {} wide, {} inconsistent \
         and {} tile(s) with mostly non-monotonic samples",
        d.inverted, d.non_monotonic, d.wide, inconsistent, d.tiles_left_out
    );
    match why {
        Unsolvable::NoSpread => format!(
            "{counts}: no tile has two samples at different host times, so the frequency is undetermined \
             (take at least 2 samples per tile, ideally a window before and one after the run)"
        ),
        Unsolvable::NoDegreesOfFreedom => {
            format!("{counts}: no more samples than unknowns, so nothing is left to estimate the error from")
        }
    }
}

/// Fits one chip from its samples.
pub(super) fn fit_chip(
    chip: u32,
    samples: Vec<(NocCoord, SyncSample)>,
    nominal_mhz: f64,
    opts: &FitOptions,
) -> Result<(ChipTime, ChipFit), String> {
    let total = samples.len();
    if total == 0 {
        return Err("no sync samples".into());
    }
    let kept = filter(samples, opts);
    let d = prepare(&kept);
    if opts.steps {
        if let Some(stepped) =
            super::stepped::fit_stepped(chip, total, &d, &kept, nominal_mhz, opts)
        {
            return stepped;
        }
    }
    let mut active = vec![true; d.obs.len()];
    let mut inconsistent = 0;
    let used = |a: &[bool]| {
        d.obs
            .iter()
            .zip(a)
            .filter(|(_, &on)| on)
            .map(|(o, _)| *o)
            .collect::<Vec<Obs>>()
    };
    let mut round = 0;
    let sol = loop {
        let obs = used(&active);
        let sol = solve(&obs, d.tiles.len(), opts.drift)
            .map_err(|e| unsolvable(e, obs.len(), &kept, inconsistent))?;
        let f = sol.b1 / d.scale;
        if !(f.is_finite() && f > 0.0) {
            return Err(format!(
                "the fitted frequency is {:.6} MHz: these samples do not describe a running counter",
                f * 1e3
            ));
        }
        let excess = inconsistency(&d, &active, &sol, f);
        let worst = excess.iter().map(|&(_, e)| e).fold(0.0, f64::max);
        if excess.is_empty() {
            break sol;
        }
        let cut = if round < ROUNDS { worst / 2.0 } else { 0.0 };
        for (i, e) in excess {
            if e >= cut {
                active[i] = false;
                inconsistent += 1;
            }
        }
        round += 1;
        if round > ROUNDS {
            let obs = used(&active);
            break solve(&obs, d.tiles.len(), opts.drift)
                .map_err(|e| unsolvable(e, obs.len(), &kept, inconsistent))?;
        }
    };
    let drift_sigma = sol.b2_sigma();
    let resolved = sol.quadratic && sol.b2.abs() >= DRIFT_SIGMAS * drift_sigma;
    let sol = if sol.quadratic && !resolved {
        let obs = used(&active);
        solve(&obs, d.tiles.len(), false)
            .map_err(|e| unsolvable(e, obs.len(), &kept, inconsistent))?
    } else {
        sol
    };
    Ok(express(
        chip,
        total,
        &d,
        &kept,
        &active,
        inconsistent,
        &sol,
        (resolved, drift_sigma),
        nominal_mhz,
    ))
}

/// Active observations further from the fit than their bracket allows, with the excess (ns).
fn inconsistency(d: &Data, active: &[bool], sol: &Solution, f: f64) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    for (i, o) in d.obs.iter().enumerate().filter(|(i, _)| active[*i]) {
        let excess = excess_ns(
            o.y - sol.predict(o.tile, o.u),
            sol.predict_var(o.tile, o.u),
            d.half[i],
            f,
        );
        out.extend(excess.map(|e| (i, e)));
    }
    out
}

/// How far (ns) an observation whose fit residual is `residual` cycles (with the fit's
/// variance `var` there) lies outside its bracket of half-width `half` ns, at `f` cycles
/// per ns, beyond a tolerance of a cycle, a ns and 4 sigma of the fit; `None` inside it.
/// A residual that is not a number is as far out as can be.
pub(crate) fn excess_ns(residual: f64, var: f64, half: f64, f: f64) -> Option<f64> {
    let r = residual / f;
    let tol = 1.0 / f + 1.0 + 4.0 * var.sqrt() / f;
    let excess = r.abs() - half - tol;
    (excess > 0.0 || !r.is_finite()).then_some(if excess.is_finite() { excess } else { f64::MAX })
}

#[allow(clippy::too_many_arguments)]
fn express(
    chip: u32,
    total: usize,
    d: &Data,
    kept: &Kept,
    active: &[bool],
    inconsistent: usize,
    sol: &Solution,
    (resolved, drift_sigma): (bool, f64),
    nominal_mhz: f64,
) -> (ChipTime, ChipFit) {
    let f = sol.b1 / d.scale;
    let g = 2.0 * sol.b2 / (d.scale * d.scale);
    let mut sq = 0.0;
    let mut n = 0usize;
    for (o, _) in d.obs.iter().zip(active).filter(|(_, &on)| on) {
        let r = (o.y - sol.predict(o.tile, o.u)) / f;
        sq += r * r;
        n += 1;
    }
    let (mut worst, mut var_sum, mut points) = (0.0f64, 0.0, 0usize);
    let mut at_ref = BTreeMap::new();
    for (j, tile) in d.tiles.iter().enumerate() {
        if sol.count(j) == 0 {
            continue; // every sample of this tile was inconsistent
        }
        at_ref.insert(*tile, d.base[j] as f64 + sol.a[j]);
        for k in 0..GRID {
            let u = -1.0 + 2.0 * k as f64 / (GRID - 1) as f64;
            let var = sol.predict_var(j, u) / (f * f);
            worst = worst.max(var.sqrt());
            var_sum += var;
            points += 1;
        }
    }
    let mut values: Vec<f64> = at_ref.values().copied().collect();
    values.sort_by(f64::total_cmp);
    let default = values.get(values.len() / 2).copied().unwrap_or(0.0);
    let error_rms = if points > 0 {
        (var_sum / points as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let residual = if n > 0 { (sq / n as f64).sqrt() } else { 0.0 };
    let ppm_per_s = |g: f64| g / f * 1e15;
    let sigma_g = 2.0 * drift_sigma / (d.scale * d.scale);
    // A drift just below the bar, left out, bends the curve away from the chord by
    // g·D²/(8f) at the middle of the span D.
    let span = d.span.1 - d.span.0;
    let unresolved = (!resolved && sigma_g.is_finite())
        .then(|| DRIFT_SIGMAS * sigma_g * span * span / (8.0 * f));
    let time = ChipTime {
        cycles_per_ns: f,
        drift_per_ns: g,
        reference_ns: d.t0 as f64 + d.t_ref,
        tile_cycles_at_reference: at_ref.clone(),
        default_cycles_at_reference: default,
        residual_ns: residual,
        error_ns: Some(worst),
        segments: Vec::new(),
    };
    let report = ChipFit {
        chip,
        samples: total,
        used: n,
        drops: kept.drops,
        inconsistent,
        tiles: at_ref.len(),
        mhz: f * 1e3,
        ppm_vs_nominal: (f * 1e3 / nominal_mhz - 1.0) * 1e6,
        drift_ppm_per_s: resolved.then(|| ppm_per_s(g)),
        drift_sigma_ppm_per_s: ppm_per_s(sigma_g),
        unresolved_drift_ns: unresolved,
        span_ns: (d.t0 as f64 + d.span.0, d.t0 as f64 + d.span.1),
        residual_ns: residual,
        error_ns: worst,
        error_rms_ns: error_rms,
        steps: Vec::new(),
        segments: Vec::new(),
    };
    (time, report)
}
