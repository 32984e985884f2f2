//! The host reference of the example ops on BF16 tiles, following the functional models of
//! Tenstorrent's ISA documentation (`WormholeB0/TensixTile/TensixCoprocessor/`, `ELWADD.md`,
//! `ELWMUL.md`, `MVMUL.md`) as the kernels configure the Matrix Unit: 16-bit `Dst` holding
//! BF16, fidelity phase 0 only ("LoFi"), `float` arithmetic rounded to nearest even, then
//! `RoundToBF16` (nearest, ties to even) into `Dst`. The kernels pack `Dst` to L1 as it is,
//! so these are the bits the output tiles must hold.
//!
//! A tile is 32x32 datums stored as four 16x16 faces, each row-major ([`face_index`]), the
//! order the unpackers and packer 0 move a tile in. The inputs must be normal numbers (or
//! zero) whose products and sums stay normal: the Matrix Unit flushes denormals, and its
//! NaN/infinity handling is not IEEE 754's; this reference does not model either.

use crate::{TILE_DIM, TILE_ELEMS};

/// The `float` value of the BF16 pattern `h`.
pub fn value(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// `RoundToBF16`: `x` to the nearest BF16 pattern, ties to even (`x` finite).
pub fn round(x: f32) -> u16 {
    let bits = x.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
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

/// `ELWADD` into BF16 `Dst`: `RoundToBF16(a + b)`.
pub fn add(a: u16, b: u16) -> u16 {
    round(value(a) + value(b))
}

/// `ELWMUL` (fidelity phase 0) onto a `Dst` row zeroed by `ZEROACC`: the product of `a`'s
/// and `b`'s phase-0 bits plus zero (so `-0` becomes `+0`), rounded to BF16.
pub fn mul(a: u16, b: u16) -> u16 {
    round(src_a_phase0(value(a)) * src_b_phase0(value(b)) + 0.0)
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
/// gets two `MVMUL`s, K columns 0-15 then 16-31; each sums its 16 products in K order in
/// `float` from zero, adds that sum to `Dst` and rounds to BF16.
pub fn matmul(x: &[u16], y: &[u16], out: &mut [u16]) {
    assert!(x.len() == TILE_ELEMS && y.len() == TILE_ELEMS && out.len() == TILE_ELEMS);
    for r in 0..TILE_DIM {
        for c in 0..TILE_DIM {
            let mut dst = 0u16;
            for k0 in [0, 16] {
                let mut sum = 0f32;
                for k in k0..k0 + 16 {
                    let b = src_b_phase0(value(x[face_index(r, k)]));
                    let a = src_a_phase0(value(y[face_index(k, c)]));
                    sum += b * a;
                }
                dst = round(sum + value(dst));
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
    fn rounding_is_to_nearest_even() {
        // 1 + 2^-8 is halfway between BF16 1.0 and 1.0078125: to the even one, 1.0.
        assert_eq!(round(1.0 + 1.0 / 256.0), 0x3f80);
        // 1.0078125 + 2^-8 is halfway again: up, to the even 1.015625.
        assert_eq!(round(1.0078125 + 1.0 / 256.0), 0x3f82);
        assert_eq!(round(-2.5), 0xc020);
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
