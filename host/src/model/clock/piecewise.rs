//! The least-squares core for a chip whose frequency steps (DVFS): one intercept per tile
//! and a shared counter `C(t)` that is continuous and, between knots (the located steps),
//! linear or quadratic in host time.
//!
//! With knots `τ_1 < ... < τ_{K-1}` (`τ_0 = -∞`, `τ_K = +∞`), piece `k` has frequency `f_k`
//! and optional drift `g_k`, and `C` counts from `C(τ_1) = 0`:
//!
//! ```text
//! piece 0:   C(t) = f_0·(t - τ_1) + g_0·(t - τ_1)²/2
//! piece k≥1: C(t) = Σ_{i=1}^{k-1} (f_i·ℓ_i + g_i·ℓ_i²/2) + f_k·(t - τ_k) + g_k·(t - τ_k)²/2,   ℓ_i = τ_{i+1} - τ_i
//! ```
//!
//! which is linear in the `f` and `g` (continuity is built in: the counter never jumps at a
//! step). The tile intercepts are eliminated by centring each tile's data, as in `solve.rs`,
//! leaving a small dense normal system (two unknowns per piece at most), solved by
//! Gauss-Jordan elimination with partial pivoting; the prediction variance is
//! `s²/n_j + vᵀ·M⁻¹·v·s²` with `v` the centred design of `t`.
//!
//! Times are in seconds here (ns / 1e9) and `y` in cycles relative to a per-tile base, so
//! the normal matrix stays well conditioned over runs of minutes.

use super::solve::Obs;

/// ns per unit of time in the design.
const UNIT: f64 = 1e9;

/// Knots and which pieces carry a drift term.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Layout {
    /// Knots in ns (the data's time axis), increasing.
    pub(crate) knots: Vec<f64>,
    /// Per piece (`knots.len() + 1`): whether `g_k` is fitted.
    pub(crate) quad: Vec<bool>,
}

impl Layout {
    pub(super) fn pieces(&self) -> usize {
        self.knots.len() + 1
    }

    /// The piece `m` (ns) falls in.
    pub(super) fn piece(&self, m: f64) -> usize {
        self.knots.partition_point(|&k| k <= m)
    }

    /// Column of `f_k`, and of `g_k` if fitted.
    fn columns(&self) -> (Vec<usize>, Vec<Option<usize>>) {
        let mut f = Vec::new();
        let mut g = Vec::new();
        let mut next = 0;
        for k in 0..self.pieces() {
            f.push(next);
            next += 1;
            if self.quad[k] {
                g.push(Some(next));
                next += 1;
            } else {
                g.push(None);
            }
        }
        (f, g)
    }

    fn width(&self) -> usize {
        self.pieces() + self.quad.iter().filter(|&&q| q).count()
    }

    /// The design row of time `m` (ns).
    pub(super) fn row(&self, m: f64, out: &mut Vec<f64>) {
        let (fc, gc) = self.columns();
        out.clear();
        out.resize(self.width(), 0.0);
        let k = self.piece(m);
        let origin = if k == 0 {
            self.knots.first().copied().unwrap_or(0.0)
        } else {
            self.knots[k - 1]
        };
        for i in 1..k {
            let l = (self.knots[i] - self.knots[i - 1]) / UNIT;
            out[fc[i]] = l;
            if let Some(c) = gc[i] {
                out[c] = l * l / 2.0;
            }
        }
        let d = (m - origin) / UNIT;
        out[fc[k]] = d;
        if let Some(c) = gc[k] {
            out[c] = d * d / 2.0;
        }
    }
}

/// A solved piecewise fit.
#[derive(Clone, Debug)]
pub(super) struct PieceSolution {
    pub layout: Layout,
    /// Coefficients in design order (`f_k` in cycles/s, `g_k` in cycles/s²).
    pub(crate) beta: Vec<f64>,
    /// Per tile: intercept (NaN without observations), count, mean design row.
    pub a: Vec<f64>,
    n: Vec<usize>,
    xbar: Vec<Vec<f64>>,
    /// Inverse of the centred normal matrix.
    inv: Vec<Vec<f64>>,
    /// Residual variance, cycles².
    pub s2: f64,
}

impl PieceSolution {
    /// `C(m)` (no intercept), cycles.
    pub(super) fn counter(&self, m: f64) -> f64 {
        let mut row = Vec::new();
        self.layout.row(m, &mut row);
        dot(&row, &self.beta)
    }

    pub(crate) fn predict(&self, tile: usize, m: f64) -> f64 {
        self.a[tile] + self.counter(m)
    }

    /// Variance of [`PieceSolution::predict`], cycles².
    pub(crate) fn predict_var(&self, tile: usize, m: f64) -> f64 {
        if self.n[tile] == 0 {
            return f64::INFINITY;
        }
        let mut row = Vec::new();
        self.layout.row(m, &mut row);
        let v: Vec<f64> = row
            .iter()
            .zip(&self.xbar[tile])
            .map(|(x, b)| x - b)
            .collect();
        let quad: f64 = (0..v.len()).map(|i| v[i] * dot(&self.inv[i], &v)).sum();
        self.s2 * (1.0 / self.n[tile] as f64 + quad.max(0.0))
    }

    /// Frequency (cycles/ns) and drift (cycles/ns²) of piece `k`, and the standard error of
    /// the drift (infinite when not fitted).
    pub(super) fn piece(&self, k: usize) -> (f64, f64, f64) {
        let (fc, gc) = self.layout.columns();
        let f = self.beta[fc[k]] / UNIT;
        match gc[k] {
            Some(c) => (
                f,
                self.beta[c] / (UNIT * UNIT),
                (self.s2 * self.inv[c][c]).max(0.0).sqrt() / (UNIT * UNIT),
            ),
            None => (f, 0.0, f64::INFINITY),
        }
    }

    pub(super) fn count(&self, tile: usize) -> usize {
        self.n[tile]
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Fits `obs` (their `u` is the time in ns) over `tiles` tiles with `layout`; `None` when
/// the system is singular (a piece without spread) or leaves no degrees of freedom.
pub(super) fn solve_pieces(obs: &[Obs], tiles: usize, layout: &Layout) -> Option<PieceSolution> {
    let p = layout.width();
    let mut n = vec![0usize; tiles];
    let mut xbar = vec![vec![0.0; p]; tiles];
    let mut ybar = vec![0.0; tiles];
    let mut row = Vec::with_capacity(p);
    for o in obs {
        layout.row(o.u, &mut row);
        n[o.tile] += 1;
        xbar[o.tile].iter_mut().zip(&row).for_each(|(s, x)| *s += x);
        ybar[o.tile] += o.y;
    }
    for j in 0..tiles {
        if n[j] > 0 {
            let c = n[j] as f64;
            xbar[j].iter_mut().for_each(|s| *s /= c);
            ybar[j] /= c;
        }
    }
    let mut m = vec![vec![0.0; p]; p];
    let mut r = vec![0.0; p];
    let mut v = vec![0.0; p];
    for o in obs {
        layout.row(o.u, &mut row);
        for i in 0..p {
            v[i] = row[i] - xbar[o.tile][i];
        }
        let dy = o.y - ybar[o.tile];
        for i in 0..p {
            r[i] += v[i] * dy;
            for k in i..p {
                m[i][k] += v[i] * v[k];
            }
        }
    }
    // Mirror the upper triangle (row i reads column i of earlier rows: indices, not iterators).
    #[allow(clippy::needless_range_loop)]
    for i in 0..p {
        for k in 0..i {
            m[i][k] = m[k][i];
        }
    }
    let used_tiles = n.iter().filter(|&&c| c > 0).count();
    if obs.len() <= used_tiles + p {
        return None;
    }
    let inv = invert(m)?;
    let beta: Vec<f64> = inv.iter().map(|row| dot(row, &r)).collect();
    if beta.iter().any(|b| !b.is_finite()) {
        return None;
    }
    let a: Vec<f64> = (0..tiles)
        .map(|j| {
            if n[j] > 0 {
                ybar[j] - dot(&xbar[j], &beta)
            } else {
                f64::NAN
            }
        })
        .collect();
    let mut rss = 0.0;
    for o in obs {
        layout.row(o.u, &mut row);
        let e = o.y - a[o.tile] - dot(&row, &beta);
        rss += e * e;
    }
    let s2 = rss / (obs.len() - used_tiles - p) as f64;
    Some(PieceSolution {
        layout: layout.clone(),
        beta,
        a,
        n,
        xbar,
        inv,
        s2,
    })
}

/// Inverse of a symmetric positive (semi)definite matrix by Gauss-Jordan elimination with
/// partial pivoting; `None` when it is singular to working precision.
pub(super) fn invert(mut m: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let p = m.len();
    let scale: f64 = (0..p).map(|i| m[i][i].abs()).fold(0.0, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let diag: Vec<f64> = (0..p).map(|i| m[i][i].abs()).collect();
    let mut inv: Vec<Vec<f64>> = (0..p)
        .map(|i| (0..p).map(|k| (i == k) as u8 as f64).collect())
        .collect();
    for col in 0..p {
        let pivot = (col..p).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        // Relative to the column's own diagonal: columns have very different scales (s vs s²).
        // Negated on purpose: a NaN pivot fails the test too.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !(m[pivot][col].abs() > 1e-11 * diag[col]) {
            return None;
        }
        m.swap(col, pivot);
        inv.swap(col, pivot);
        let d = m[col][col];
        for k in 0..p {
            m[col][k] /= d;
            inv[col][k] /= d;
        }
        for i in 0..p {
            if i != col {
                let f = m[i][col];
                if f != 0.0 {
                    for k in 0..p {
                        m[i][k] -= f * m[col][k];
                        inv[i][k] -= f * inv[col][k];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_continuous_counter_with_two_steps_and_tile_offsets() {
        // 1.35 GHz, then 0.8 GHz from 2 s, then 1.1 GHz (with drift) from 5 s.
        let truth = |t: f64| -> f64 {
            let s = t / 1e9;
            if s < 2.0 {
                1.35e9 * s
            } else if s < 5.0 {
                2.7e9 + 0.8e9 * (s - 2.0)
            } else {
                2.7e9 + 2.4e9 + 1.1e9 * (s - 5.0) + 50.0 * (s - 5.0) * (s - 5.0) / 2.0
            }
        };
        let mut obs = Vec::new();
        for k in 0..4000 {
            let t = 1e6 + k as f64 * 2e6 + 137.0;
            let tile = k % 3;
            let noise = if k % 2 == 0 { 0.3 } else { -0.3 };
            obs.push(Obs {
                tile,
                u: t,
                y: truth(t) + 1000.0 * tile as f64 + noise,
            });
        }
        let layout = Layout {
            knots: vec![2e9, 5e9],
            quad: vec![false, false, true],
        };
        let s = solve_pieces(&obs, 3, &layout).unwrap();
        let (f0, _, _) = s.piece(0);
        let (f1, _, _) = s.piece(1);
        let (f2, g2, sg) = s.piece(2);
        assert!(
            (f0 - 1.35).abs() < 1e-9 && (f1 - 0.8).abs() < 1e-9 && (f2 - 1.1).abs() < 1e-9,
            "{f0} {f1} {f2}"
        );
        assert!(
            (g2 * 1e18 - 50.0).abs() < 5.0 * sg * 1e18 + 1.0,
            "{} ± {}",
            g2 * 1e18,
            sg * 1e18
        );
        for t in [1.5e9, 2e9, 3.3e9, 7.7e9] {
            let e = s.predict(2, t) - (truth(t) + 2000.0);
            assert!(e.abs() < 0.5, "{t}: {e}");
            assert!(s.predict_var(2, t).sqrt() < 0.1);
        }
        // A last piece without data leaves its frequency undetermined.
        let bad = Layout {
            knots: vec![2e9, 9e9],
            quad: vec![false; 3],
        };
        assert!(solve_pieces(&obs, 3, &bad).is_none());
    }

    #[test]
    fn inversion_handles_pivoting_and_singularity() {
        let m = vec![vec![0.0, 2.0], vec![2.0, 1.0]];
        let inv = invert(m).unwrap();
        assert!((inv[0][0] + 0.25).abs() < 1e-12 && (inv[0][1] - 0.5).abs() < 1e-12);
        assert!(invert(vec![vec![1.0, 1.0], vec![1.0, 1.0]]).is_none());
        assert!(invert(vec![vec![0.0]]).is_none());
    }
}
