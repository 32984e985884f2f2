//! The least-squares core for one chip: `y = a_j + b1·u + b2·u²` with one intercept per
//! tile and a shared curve, plus the covariance needed for error estimates.
//!
//! `u` is host time scaled to about `[-1, 1]` and `y` cycles relative to a per-tile base, so
//! every sum stays well conditioned. The intercepts are eliminated by centring each tile's
//! data: with `ũ = u - ū_j`, `q̃ = u² - mean_j(u²)`, `ỹ = y - ȳ_j`, the shared coefficients
//! solve `[Σũũ Σũq̃; Σũq̃ Σq̃q̃]·[b1 b2]ᵀ = [Σũỹ Σq̃ỹ]ᵀ`, and `a_j = ȳ_j - b1·ū_j - b2·mean_j(u²)`.
//! `ȳ_j` is uncorrelated with the within-tile estimates, so a prediction's variance is
//! `s²/n_j + vᵀ·M⁻¹·v·s²` with `v = (u - ū_j, u² - mean_j(u²))`.

/// One observation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Obs {
    /// Index of the tile (0..tiles).
    pub tile: usize,
    pub u: f64,
    pub y: f64,
}

/// Per-tile sums and means.
#[derive(Clone, Copy, Debug, Default)]
struct TileMeans {
    n: usize,
    u: f64,
    q: f64,
    y: f64,
}

/// A solved fit.
#[derive(Clone, Debug)]
pub(super) struct Solution {
    pub(crate) b1: f64,
    pub(crate) b2: f64,
    /// Whether `b2` was fitted (else it is 0).
    pub(crate) quadratic: bool,
    /// Intercepts per tile (NaN for a tile without observations).
    pub a: Vec<f64>,
    means: Vec<TileMeans>,
    /// Inverse of the normal matrix, `[[uu, uq], [uq, qq]]`.
    inv: [[f64; 2]; 2],
    /// Residual variance, y units squared.
    pub s2: f64,
}

/// Why a fit has no solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unsolvable {
    /// No tile has two observations at different times: the slope is undetermined.
    NoSpread,
    /// As many unknowns as observations: nothing left to estimate the noise from.
    NoDegreesOfFreedom,
}

impl Solution {
    /// `y` of `tile` at `u`.
    pub(crate) fn predict(&self, tile: usize, u: f64) -> f64 {
        self.a[tile] + self.b1 * u + self.b2 * u * u
    }

    /// Variance of [`Solution::predict`] (y units squared).
    pub(crate) fn predict_var(&self, tile: usize, u: f64) -> f64 {
        let m = self.means[tile];
        if m.n == 0 {
            return f64::INFINITY;
        }
        let v = [u - m.u, if self.quadratic { u * u - m.q } else { 0.0 }];
        let quad = v[0] * (self.inv[0][0] * v[0] + self.inv[0][1] * v[1])
            + v[1] * (self.inv[1][0] * v[0] + self.inv[1][1] * v[1]);
        self.s2 * (1.0 / m.n as f64 + quad.max(0.0))
    }

    /// Standard error of `b2` (infinite when not fitted).
    pub(crate) fn b2_sigma(&self) -> f64 {
        if self.quadratic {
            (self.s2 * self.inv[1][1]).max(0.0).sqrt()
        } else {
            f64::INFINITY
        }
    }

    /// Observations per tile.
    pub(super) fn count(&self, tile: usize) -> usize {
        self.means[tile].n
    }
}

/// Fits `obs` over `tiles` tiles, with the quadratic term if `quadratic` and it is
/// determined (else linear).
pub(super) fn solve(obs: &[Obs], tiles: usize, quadratic: bool) -> Result<Solution, Unsolvable> {
    let mut means = vec![TileMeans::default(); tiles];
    for o in obs {
        let m = &mut means[o.tile];
        m.n += 1;
        m.u += o.u;
        m.q += o.u * o.u;
        m.y += o.y;
    }
    for m in &mut means {
        if m.n > 0 {
            let n = m.n as f64;
            (m.u, m.q, m.y) = (m.u / n, m.q / n, m.y / n);
        }
    }
    let (mut uu, mut uq, mut qq, mut uy, mut qy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for o in obs {
        let m = &means[o.tile];
        let (du, dq, dy) = (o.u - m.u, o.u * o.u - m.q, o.y - m.y);
        uu += du * du;
        uq += du * dq;
        qq += dq * dq;
        uy += du * dy;
        qy += dq * dy;
    }
    if uu <= 0.0 || !uu.is_finite() {
        return Err(Unsolvable::NoSpread);
    }
    let used_tiles = means.iter().filter(|m| m.n > 0).count();
    let det = uu * qq - uq * uq;
    // Collinear within rounding: the curvature is not determined by these times.
    let quadratic = quadratic && det > 1e-9 * uu * qq && obs.len() > used_tiles + 2;
    let (b1, b2, inv) = if quadratic {
        (
            (qq * uy - uq * qy) / det,
            (uu * qy - uq * uy) / det,
            [[qq / det, -uq / det], [-uq / det, uu / det]],
        )
    } else {
        (uy / uu, 0.0, [[1.0 / uu, 0.0], [0.0, 0.0]])
    };
    let params = used_tiles + 1 + quadratic as usize;
    if obs.len() <= params {
        return Err(Unsolvable::NoDegreesOfFreedom);
    }
    let a: Vec<f64> = means
        .iter()
        .map(|m| {
            if m.n > 0 {
                m.y - b1 * m.u - b2 * m.q
            } else {
                f64::NAN
            }
        })
        .collect();
    let rss: f64 = obs
        .iter()
        .map(|o| {
            let r = o.y - (a[o.tile] + b1 * o.u + b2 * o.u * o.u);
            r * r
        })
        .sum();
    let dof = obs.len() - params;
    Ok(Solution {
        b1,
        b2,
        quadratic,
        a,
        means,
        inv,
        s2: rss / dof as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_curve_and_offsets() {
        let mut obs = Vec::new();
        for tile in 0..3 {
            for k in 0..20 {
                let u = -1.0 + k as f64 / 10.0 + tile as f64 * 0.01;
                let noise = if k % 2 == 0 { 0.25 } else { -0.25 };
                obs.push(Obs {
                    tile,
                    u,
                    y: 100.0 * tile as f64 + 5e8 * u + 30.0 * u * u + noise,
                });
            }
        }
        let s = solve(&obs, 3, true).unwrap();
        assert!(s.quadratic);
        assert!(
            (s.b1 - 5e8).abs() < 1.0 && (s.b2 - 30.0).abs() < 1.0,
            "{} {}",
            s.b1,
            s.b2
        );
        for tile in 0..3 {
            assert!((s.predict(tile, 0.3) - (100.0 * tile as f64 + 1.5e8 + 2.7)).abs() < 0.5);
        }
        let sd = s.predict_var(1, 0.0).sqrt();
        assert!(sd > 0.01 && sd < 0.5, "{sd}");
        let lin = solve(&obs, 3, false).unwrap();
        assert!(!lin.quadratic && lin.b2 == 0.0 && lin.b2_sigma().is_infinite());
    }

    #[test]
    fn degenerate_inputs_are_reported() {
        let same_time = [
            Obs {
                tile: 0,
                u: 0.5,
                y: 1.0,
            },
            Obs {
                tile: 0,
                u: 0.5,
                y: 2.0,
            },
        ];
        assert_eq!(
            solve(&same_time, 1, true).unwrap_err(),
            Unsolvable::NoSpread
        );
        let one_each = [
            Obs {
                tile: 0,
                u: 0.0,
                y: 1.0,
            },
            Obs {
                tile: 1,
                u: 1.0,
                y: 2.0,
            },
        ];
        assert_eq!(solve(&one_each, 2, true).unwrap_err(), Unsolvable::NoSpread);
        let two = [
            Obs {
                tile: 0,
                u: 0.0,
                y: 1.0,
            },
            Obs {
                tile: 0,
                u: 1.0,
                y: 2.0,
            },
        ];
        assert_eq!(
            solve(&two, 1, true).unwrap_err(),
            Unsolvable::NoDegreesOfFreedom
        );
        assert_eq!(solve(&[], 0, true).unwrap_err(), Unsolvable::NoSpread);
    }
}
