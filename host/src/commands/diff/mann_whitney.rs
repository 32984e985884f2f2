//! Whether a change between two noisy runs is real: a two-sided Mann-Whitney U test, and
//! whether it can reach [`CONFIDENCE`] at all with so few samples.

use super::CONFIDENCE;

/// Whether a two-sided Mann-Whitney U test over `n1` and `n2` samples can reach
/// [`CONFIDENCE`] at all: its smallest p-value (complete separation, no ties) is
/// 2 / C(n1 + n2, n1). 3 against 3 gives 0.1, 4 against 4 0.029.
pub(crate) fn can_reach_confidence(n1: usize, n2: usize) -> bool {
    if n1 == 0 || n2 == 0 {
        return false;
    }
    let need = 2.0 / (1.0 - CONFIDENCE);
    let (k, n) = (n1.min(n2), n1 + n2);
    // C(n, k) built up factor by factor, stopping once it is large enough.
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
        if c >= need {
            return true;
        }
    }
    c >= need - 1e-9
}

/// Two-sided p-value of the Mann-Whitney U test that `a` and `b` come from the same
/// distribution (`None` when a side is empty). Exact (the U distribution counted) when
/// there are no ties and at most 400 pairs; otherwise the normal approximation with the
/// tie correction and a continuity correction.
pub(crate) fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Mid-ranks; sum of t^3 - t over tie groups.
    let (mut r1, mut ties, mut i) = (0.0, 0.0, 0);
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        r1 += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u = u1.min(f1 * f2 - u1);
    if ties == 0.0 && n1 * n2 <= 400 {
        return Some(exact_u_p(n1, n2, u.round() as usize));
    }
    let n = f1 + f2;
    let var = f1 * f2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0); // every value equal
    }
    let z = ((f1 * f2 / 2.0 - u) - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * normal_upper(z)).min(1.0))
}

/// P(U <= u) * 2 for sample sizes `m`, `n` without ties, from the counts of rank
/// arrangements: f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u).
fn exact_u_p(m: usize, n: usize, u: usize) -> f64 {
    let max = m * n;
    // f[j][v] for the current i (rows over n).
    let mut prev: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; max + 1];
            v[0] = 1.0;
            v
        })
        .collect(); // i = 0: one arrangement, U = 0
    for _i in 1..=m {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n + 1];
        cur[0][0] = 1.0; // j = 0
        for j in 1..=n {
            for v in 0..=max {
                let a = if v >= j { prev[j][v - j] } else { 0.0 };
                cur[j][v] = a + cur[j - 1][v];
            }
        }
        prev = cur;
    }
    let dist = &prev[n];
    let total: f64 = dist.iter().sum();
    let tail: f64 = dist[..=u.min(max)].iter().sum();
    (2.0 * tail / total).min(1.0)
}

/// P(Z > z) for a standard normal Z.
fn normal_upper(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Chebyshev fit, fractional error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_whitney_matches_known_values() {
        // Exact: n1 = n2 = 3, complete separation: p = 2 / 20.
        assert!((mann_whitney(&[1., 2., 3.], &[4., 5., 6.]).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(mann_whitney(&[1., 2.], &[]), None);
        // All tied: no evidence.
        assert_eq!(mann_whitney(&[5.; 30], &[5.; 30]), Some(1.0));
        // Large, separated by a shift with ties: normal approximation, tiny p.
        let a: Vec<f64> = (0..50).map(|i| (i % 10) as f64).collect();
        let b: Vec<f64> = (0..50).map(|i| (i % 10 + 8) as f64).collect();
        assert!(mann_whitney(&a, &b).unwrap() < 1e-6);
        // Normal tail: P(Z > 1.96) = 0.025.
        assert!((normal_upper(1.959964) - 0.025).abs() < 1e-6);
    }
}
