//! The host reference of the example ops on BF16 tiles: the bits the Matrix Unit of a
//! Wormhole B0 writes as the kernels configure it (16-bit `Dst` holding BF16; fidelity
//! phase 0, "LoFi", and for `MVMUL` the other phases too: [`mvmul_datum_phase`]), by the
//! rules of Tenstorrent's functional simulator ttsim, which
//! the coprocessor model follows (docs/design/tensix-coprocessor.md, "Numerics"). This
//! module states those rules on exact values (`f64` holds every intermediate exactly),
//! independently of the emulator's bit-level data path:
//!
//! - `ELWADD`: the smaller operand is rounded to a multiple of the larger one's last
//!   mantissa unit (11-bit mantissas, `2^(e-10)`), half away from zero; the exact sum is
//!   then rounded to BF16 half away from zero ([`round`]).
//! - `ELWMUL`: the product of `SrcA`'s top four and `SrcB`'s top six mantissa bits, exact,
//!   rounded to BF16 half away from zero; a product whose exponent underflows is zero.
//! - `MVMUL`: each half of the 16-term dot product (8 terms) is summed in units of `2^-10`
//!   of its largest product exponent, each product rounded to that unit half away from
//!   zero; the two half sums and the old `Dst` value are rounded to units of `2^-23` and
//!   then `2^-10` of the largest of their exponents (the sums half toward plus infinity,
//!   `Dst` half away from zero), added, and rounded to BF16 half away from zero.
//! - Exponent 0 reads as zero; a zero result is `+0`; a result below the smallest normal
//!   is `+0`, one past the largest is the "too large" pattern (exponent 255, mantissa 0).
//!
//! The kernels pack `Dst` to L1 as it is, so these are the bits the output tiles must hold.
//!
//! A tile is 32x32 datums stored as four 16x16 faces, each row-major ([`face_index`]), the
//! order the unpackers and packer 0 move a tile in.

use crate::{TILE_DIM, TILE_ELEMS};

/// The `float` value of the BF16 pattern `h`.
pub fn value(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// The Matrix Unit's value of a BF16 pattern: exponent 0 is zero, exponent 255 a number.
fn mu_value(h: u16) -> f64 {
    let e = ((h >> 7) & 0xff) as i32;
    if e == 0 {
        return 0.0;
    }
    let v = (1.0 + (h & 0x7f) as f64 / 128.0) * pow2(e - 127);
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

/// `2^e` (`e` within `f64`'s normal range).
pub(crate) fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

fn abs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

/// The largest integer not above `x` (`|x| < 2^62`).
fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// `x` to a multiple of `unit`: ties away from zero, or toward plus infinity.
pub(crate) fn to_unit(x: f64, unit: f64, ties_up: bool) -> f64 {
    if ties_up {
        floor(x / unit + 0.5) * unit
    } else if x < 0.0 {
        -floor(-x / unit + 0.5) * unit
    } else {
        floor(x / unit + 0.5) * unit
    }
}

/// The biased exponent of a non-zero `x` (`2^(e-127) <= |x| < 2^(e-126)`).
fn exponent(x: f64) -> i32 {
    ((abs(x).to_bits() >> 52) as i32) - 1023 + 127
}

/// The BF16 pattern of an exact result: 8 significant bits, ties away from zero; zero and
/// results below the smallest normal are `+0`, results past the largest the pattern
/// `Sign, 255, 0`.
pub fn round_exact(x: f64) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let r = to_unit(x, pow2(exponent(x) - 127 - 7), false);
    let e = exponent(r);
    let sign = if r < 0.0 { 0x8000 } else { 0 };
    if e <= 0 {
        0
    } else if e >= 255 {
        sign | 0x7f80
    } else {
        let m = (abs(r) / pow2(e - 127) * 128.0) as u16 - 128;
        sign | ((e as u16) << 7) | m
    }
}

/// `x` (a `float`) to BF16 as the Matrix Unit rounds: [`round_exact`].
pub fn round(x: f32) -> u16 {
    round_exact(x as f64)
}

/// Index of datum `(row, col)` of a tile stored as four 16x16 faces, each row-major.
pub const fn face_index(row: usize, col: usize) -> usize {
    ((row / 16) * 2 + col / 16) * 256 + (row % 16) * 16 + col % 16
}

/// `SrcAFidelityBits` of phase 0: sign, exponent and the top four mantissa bits.
pub fn src_a_phase0(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xfff8_0000)
}

/// `SrcBFidelityBits` of phase 0: sign, exponent and the top six mantissa bits.
pub fn src_b_phase0(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xfffe_0000)
}

fn exp_of(h: u16) -> i32 {
    ((h >> 7) & 0xff) as i32
}

/// `ELWADD` into BF16 `Dst` (not accumulating).
pub fn add(a: u16, b: u16) -> u16 {
    let (big, small) = if a & 0x7fff >= b & 0x7fff {
        (a, b)
    } else {
        (b, a)
    };
    if exp_of(big) == 0 {
        return 0;
    }
    let unit = pow2(exp_of(big) - 127 - 10);
    round_exact(mu_value(big) + to_unit(mu_value(small), unit, false))
}

/// Phase 0's product of `a` (`SrcA`) and `b` (`SrcB`) and its exponent (`None`: zero).
fn product(a: u16, b: u16) -> Option<(f64, i32)> {
    product_phase(a, b, 0)
}

/// Fidelity phase `phase`'s product of `a` (`SrcA`) and `b` (`SrcB`) and its exponent
/// (`None`: an operand is zero). Of each operand's 11-bit mantissa with its implicit one
/// (`m`, bit 10 the one), phase bit 0 takes `SrcA`'s bits 6-10 (clear) or 1-5 (set), phase
/// bit 1 `SrcB`'s bits 4-10 (clear) or 0-3 (set); the exponent the products are aligned by
/// is the operands' less 5 for `SrcA`'s low bits and 7 for `SrcB`'s. A phase whose bits are
/// all zero still has that exponent (its product is 0).
fn product_phase(a: u16, b: u16, phase: u32) -> Option<(f64, i32)> {
    if exp_of(a) == 0 || exp_of(b) == 0 {
        return None;
    }
    let man = |h: u16| ((0x80 | (h & 0x7f) as u32) << 3) as f64;
    let sign = |h: u16| if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (ma, mb) = (man(a) as u32, man(b) as u32);
    let fa = if phase & 1 != 0 {
        ((ma >> 1) & 31) as f64 * pow2(-9)
    } else {
        (ma >> 6) as f64 * pow2(-4)
    };
    let fb = if phase & 2 != 0 {
        (mb & 15) as f64 * pow2(-10)
    } else {
        (mb >> 4) as f64 * pow2(-6)
    };
    let p = sign(a) * sign(b) * fa * fb * pow2(exp_of(a) - 127) * pow2(exp_of(b) - 127);
    let bias = if phase & 1 != 0 { 5 } else { 0 } + if phase & 2 != 0 { 7 } else { 0 };
    Some((p, exp_of(a) + exp_of(b) - 127 - bias))
}

/// `ELWMUL` (fidelity phase 0) onto a `Dst` row zeroed by `ZEROACC`.
pub fn mul(a: u16, b: u16) -> u16 {
    match product(a, b) {
        Some((p, e)) if e > 0 => round_exact(p),
        _ => 0,
    }
}

/// One `MVMUL` result: `dst` plus the dot product of `srcb` and `srca` (16 each).
pub fn mvmul_datum(srcb: &[u16; 16], srca: &[u16; 16], dst: u16) -> u16 {
    mvmul_datum_phase(srcb, srca, dst, 0)
}

/// [`mvmul_datum`] in fidelity phase `phase` (0-3; HiFi2 runs phases 0 and 1, HiFi3 0-2,
/// HiFi4 0-3, each a `MVMUL` accumulating into `Dst`).
pub fn mvmul_datum_phase(srcb: &[u16; 16], srca: &[u16; 16], dst: u16, phase: u32) -> u16 {
    let mut terms = [(0f64, 0i32); 2];
    for (h, t) in terms.iter_mut().enumerate() {
        let ps: [(f64, i32); 8] = core::array::from_fn(|k| {
            product_phase(srca[8 * h + k], srcb[8 * h + k], phase).unwrap_or((0.0, 0))
        });
        let e = ps.iter().map(|p| p.1).max().unwrap_or(0);
        if e > 0 {
            let unit = pow2(e - 127 - 10);
            *t = (ps.iter().map(|p| to_unit(p.0, unit, false)).sum(), e);
        }
    }
    let e = terms[0].1.max(terms[1].1).max(exp_of(dst));
    if e <= 0 {
        return 0;
    }
    let (fine, coarse) = (pow2(e - 127 - 23), pow2(e - 127 - 10));
    let mut sum = to_unit(to_unit(mu_value(dst), fine, false), coarse, false);
    for t in terms {
        sum += to_unit(to_unit(t.0, fine, true), coarse, true);
    }
    round_exact(sum)
}

/// Relu on the Vector Unit (`SFPSETCC` on the sign, `SFPMOV` of zero where it is set):
/// a datum with the sign bit set (negative numbers and `-0`) becomes `+0`.
pub fn relu(a: u16) -> u16 {
    if a & 0x8000 != 0 {
        0
    } else {
        a
    }
}

/// One 32x32 tile of `x @ y` as the kernels issue `MVMUL`s (`Dst += SrcB @ SrcA`, `x` in
/// `SrcB`, `y` in `SrcA`, fidelity phase 0) onto a zeroed BF16 `Dst`: each output datum
/// gets two `MVMUL`s, K columns 0-15 then 16-31 ([`mvmul_datum`]).
pub fn matmul(x: &[u16], y: &[u16], out: &mut [u16]) {
    assert!(x.len() == TILE_ELEMS && y.len() == TILE_ELEMS && out.len() == TILE_ELEMS);
    for r in 0..TILE_DIM {
        for c in 0..TILE_DIM {
            let mut dst = 0u16;
            for k0 in [0, 16] {
                let b: [u16; 16] = core::array::from_fn(|k| x[face_index(r, k0 + k)]);
                let a: [u16; 16] = core::array::from_fn(|k| y[face_index(k0 + k, c)]);
                dst = mvmul_datum(&b, &a, dst);
            }
            out[face_index(r, c)] = dst;
        }
    }
}

/// A deterministic endless stream of normal BF16 patterns (xorshift from `seed`), either
/// sign, exponents spread over 2^-6..2^6: inputs whose sums and products stay normal, as
/// this reference requires.
pub fn normal_values(seed: u64) -> impl Iterator<Item = u16> {
    let mut x = seed;
    core::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let sign = ((x >> 63) as u16) << 15;
        let exp = 121 + (x >> 40) as u16 % 13;
        sign | (exp << 7) | (x as u16 & 0x7f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest_ties_away_from_zero() {
        // 1 + 2^-8 is halfway between BF16 1.0 and 1.0078125: away from zero.
        assert_eq!(round(1.0 + 1.0 / 256.0), 0x3f81);
        assert_eq!(round(-1.0 - 1.0 / 256.0), 0xbf81);
        assert_eq!(round(1.0 + 1.0 / 512.0), 0x3f80, "below half");
        assert_eq!(round(-2.5), 0xc020);
        assert_eq!(round_exact(pow2(128)), 0x7f80, "too large");
        assert_eq!(round_exact(-1.5 * pow2(-127)), 0, "underflow is +0");
    }

    #[test]
    fn add_rounds_the_smaller_operand_to_the_larger_ones_unit_first() {
        // The example of issue 38: 0x380b aligned to 0xb8e2's unit is 556/1024 of it
        // (1112/2, half up), the difference ends in a tie at BF16: away, b89d.
        assert_eq!(add(0xb8e2, 0x380b), 0xb89d);
        assert_eq!(add(0x380b, 0xb8e2), 0xb89d, "commutes");
        assert_eq!(add(0x3f80, 0xbf80), 0, "cancellation is +0");
        assert_eq!(add(0x7fc0, 0), 0x7f80, "exponent 255 result: too large");
        assert_eq!(add(0x0001, 0x3f80), 0x3f80, "a denormal reads as zero");
    }

    #[test]
    fn mvmul_rounds_products_to_their_halfs_unit() {
        // 1 + (1.5 * 2^-11): the small product becomes one unit of 2^-10 (0.75 rounds up),
        // then BF16 rounds 1 + 2^-10 down to 1.0; the first half only: a second half of
        // zeros changes nothing.
        let mut b = [0u16; 16];
        let mut a = [0u16; 16];
        (b[0], b[1], a[0], a[1]) = (0x3f80, 0x3f80, 0x3f80, 0x3a40);
        assert_eq!(mvmul_datum(&b, &a, 0), 0x3f80);
        // 1 + 2^-8 from the two halves (1 and 2^-8): a tie at BF16, away from zero.
        (b[8], a[8], a[1]) = (0x3f80, 0x3b80, 0);
        assert_eq!(mvmul_datum(&b, &a, 0), 0x3f81);
        // The same with Dst holding -1: exact cancellation of the 1s, 2^-8 left.
        (a[0], b[0]) = (0, 0);
        assert_eq!(mvmul_datum(&b, &a, 0xbf80), 0xbf7f);
    }

    #[test]
    fn mul_keeps_the_phase_zero_bits_and_gives_positive_zero() {
        // 1 + 2^-7 (SrcA): its lowest BF16 mantissa bit is below phase 0's four, so it is
        // dropped: 1.0078125 * 2 = 2.
        assert_eq!(mul(0x3f81, 0x4000), 0x4000);
        // The same as SrcB keeps six bits, also dropping bit 0.
        assert_eq!(mul(0x4000, 0x3f81), 0x4000);
        // But 1 + 2^-4 survives in both.
        assert_eq!(mul(0x3f88, 0x4000), 0x4008);
        assert_eq!(mul(0xbfc0, 0x0000), 0x0000, "-1.5 * 0 + 0 is +0");
    }

    #[test]
    fn matmul_of_identity_is_the_other_operand_at_phase_zero() {
        let mut eye = [0u16; TILE_ELEMS];
        for i in 0..TILE_DIM {
            eye[face_index(i, i)] = 0x3f80;
        }
        let y: [u16; TILE_ELEMS] = core::array::from_fn(|i| 0x3f80 + (i % 100) as u16);
        let mut out = [0u16; TILE_ELEMS];
        matmul(&eye, &y, &mut out);
        // SrcA (y) keeps four mantissa bits.
        for i in 0..TILE_ELEMS {
            assert_eq!(out[i], y[i] & 0xfff8, "datum {i}");
        }
    }

    #[test]
    fn relu_zeroes_every_datum_with_the_sign_bit() {
        assert_eq!(relu(0x8000), 0);
        assert_eq!(relu(0xbf80), 0);
        assert_eq!(relu(0x3f80), 0x3f80);
    }
}
