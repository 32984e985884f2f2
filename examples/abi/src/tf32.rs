//! The host reference of `ELWADD` on Float32 tiles with 32-bit `Dst` (tt-metal's
//! `fp32_dest_acc_en`), by the same rules of Tenstorrent's functional simulator ttsim as
//! [`crate::bf16`], stated on exact values:
//!
//! - The unpacker turns each Float32 datum into TF32 for `SrcA`/`SrcB` by dropping the low 13
//!   of its 23 mantissa bits (no rounding): sign, 8-bit exponent, 10-bit mantissa.
//! - `ELWADD` rounds the smaller operand to a multiple of the larger one's last mantissa unit
//!   (11-bit mantissas, `2^(e-10)`), half away from zero, and adds exactly.
//! - 32-bit `Dst` holds the sum as it is (it has at most 12 significant bits), packed to L1
//!   unchanged.
//! - Exponent 0 reads as zero; a zero result is `+0`; a result below the smallest normal is
//!   `+0`, one past the largest the "too large" pattern (exponent 255, mantissa 0).

use crate::bf16::{pow2, to_unit};

/// A Float32 datum as `SrcA`/`SrcB` hold it: its TF32 truncation's value (exponent 0 is
/// zero, exponent 255 an ordinary number).
fn src_value(x: u32) -> f64 {
    let e = ((x >> 23) & 0xff) as i32;
    if e == 0 {
        return 0.0;
    }
    let man = (x >> 13) & 0x3ff;
    let v = (1.0 + man as f64 / 1024.0) * pow2(e - 127);
    if x >> 31 != 0 {
        -v
    } else {
        v
    }
}

/// `ELWADD` of Float32 datums `a` and `b` (bit patterns) into 32-bit `Dst`: the Float32
/// pattern packed to L1.
pub fn add(a: u32, b: u32) -> u32 {
    // Compare magnitudes as the operands are held (TF32).
    let (big, small) = if a & 0x7fff_e000 >= b & 0x7fff_e000 {
        (a, b)
    } else {
        (b, a)
    };
    let e = ((big >> 23) & 0xff) as i32;
    if e == 0 {
        return 0;
    }
    let sum = src_value(big) + to_unit(src_value(small), pow2(e - 127 - 10), false);
    // Exact in Float32 (at most 12 significant bits); past the largest exponent `as f32`
    // gives the "too large" pattern (Sign, 255, 0). Zero and results below the smallest
    // normal are +0.
    let bits = (sum as f32).to_bits();
    if bits & 0x7f80_0000 == 0 {
        0
    } else {
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn truncates_to_tf32_and_aligns_the_smaller_operand() {
        // 1 + 2^-11: the smaller operand is below half the larger's last unit... exactly
        // half: rounded away from zero to one unit (2^-10).
        assert_eq!(add(f(1.0), f(1.0 / 2048.0)), f(1.0 + 1.0 / 1024.0));
        // Bits below TF32's mantissa are dropped before the add.
        assert_eq!(add(f(1.0 + 1.0 / 8192.0), f(2.0)), f(3.0));
        assert_eq!(add(f(1.5), f(-1.5)), 0);
        assert_eq!(add(f(-3.0), f(1.0)), f(-2.0));
        // Exponent 0 is zero.
        assert_eq!(add(1, f(2.0)), f(2.0));
    }
}
