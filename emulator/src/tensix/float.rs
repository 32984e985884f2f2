//! Number formats of the data path: the 4-bit format codes of the configuration, the bit
//! layouts `SrcA`/`SrcB` and `Dst` hold them in (`SrcASrcB.md`, `Dst.md`, the `Write*`
//! functions of `UNPACR_Regular.md`, the `Shuffle*`/`Remove*` functions of `MOVD2A.md` and
//! `MOVA2D.md`), and the Matrix Unit's arithmetic as `FloatBitPatterns.md` describes it.
//!
//! The `float` helpers below serve [`super::matrix::Numerics::IsaDoc`] (the default data
//! path is `matrix/datapath.rs`, fixed point). The Matrix Unit's functional models compute
//! in C `float`. Two documented departures
//! from IEEE 754 are modelled: a biased exponent of 0 reads as zero (denormals flush), and
//! the all-ones exponent is an ordinary number (`(1 + Man/2^n) * 2^(Exp - bias)`, no
//! infinities or NaNs). Values are carried in `f64`, which holds every such number
//! exactly; each `float` operation of the pseudo-code rounds its exact result with
//! [`round_fp32`]. Rounding is to nearest, ties to even; results below the smallest normal
//! flush to zero (after rounding); results past the largest finite value give the pattern
//! the page says the Matrix Unit emits for "too large": exponent all ones, mantissa 0 for
//! FP32/TF32/BF16, exponent and mantissa all ones for FP16.

/// The configuration's 4-bit data format codes (`Packers/FormatConversion.md`).
pub(crate) mod fmt {
    /// `FP32` (`0b0000`).
    pub const FP32: u32 = 0;
    /// `FP16` (`0b0001`).
    pub const FP16: u32 = 1;
    /// `TF32` (`0b0100`).
    pub const TF32: u32 = 4;
    /// `BF16`, tt-metal's Float16_b (`0b0101`).
    pub const BF16: u32 = 5;
    /// `INT32` (`0b1000`).
    pub const INT32: u32 = 8;
    /// `INT16` (`0b1001`).
    pub const INT16: u32 = 9;

    /// The format's name as the documentation spells it.
    pub fn name(f: u32) -> &'static str {
        match f & 15 {
            0 => "FP32",
            1 => "FP16",
            2 => "BFP8a",
            3 => "BFP4a",
            4 => "TF32",
            5 => "BF16",
            6 => "BFP8",
            7 => "BFP4",
            8 => "INT32",
            9 => "INT16",
            10 => "FP8",
            11 => "BFP2a",
            14 => "INT8",
            15 => "BFP2",
            _ => "an undefined format",
        }
    }
}

/// How the Matrix Unit reads `SrcA`/`SrcB` (the functional models' `SrcAStyle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// BF16 (the top seven of TF32's ten mantissa bits).
    Bf16,
    /// FP16 (5-bit exponent).
    Fp16,
    /// TF32 (10-bit mantissa).
    Tf32,
}

impl Style {
    /// `SrcAStyle` for the `SrcA` format code `f` (the functional models' table).
    pub fn of(f: u32) -> Style {
        match f & 15 {
            0 | 5 | 6 | 7 | 15 | 8 | 9 => Style::Bf16,
            4 => Style::Tf32,
            _ => Style::Fp16,
        }
    }
}

// ---- Src layout: Sign, Man(10), Exp(8) ----

/// `WriteSrcTF32`: a 19-bit Sign,Exp(8),Man(10) value to Src's Sign,Man,Exp.
pub(crate) fn write_src_tf32(x: u32) -> u32 {
    (x & 0x40000) | ((x & 0x3ff) << 8) | ((x & 0x3fc00) >> 10)
}

/// `WriteSrcBF16`.
pub(crate) fn write_src_bf16(x: u16) -> u32 {
    write_src_tf32((x as u32) << 3)
}

/// `WriteSrcFP16`.
pub(crate) fn write_src_fp16(x: u16) -> u32 {
    let x = x as u32;
    write_src_tf32(((x & 0x8000) << 3) | (x & 0x7fff))
}

// ---- Dst layouts ----

/// `WriteDstBF16`: Sign,Exp,Man to Dst's Sign,Man(7),Exp(8).
pub(crate) fn write_dst_bf16(x: u16) -> u16 {
    (x & 0x8000) | ((x & 0x7f) << 8) | ((x & 0x7f80) >> 7)
}

/// The inverse of [`write_dst_bf16`].
pub(crate) fn read_dst_bf16(d: u16) -> u16 {
    (d & 0x8000) | ((d & 0xff) << 7) | ((d >> 8) & 0x7f)
}

/// `WriteDstFP16`: Sign,Exp,Man to Dst's Sign,Man(10),Exp(5).
pub(crate) fn write_dst_fp16(x: u16) -> u16 {
    (x & 0x8000) | ((x & 0x3ff) << 5) | ((x & 0x7c00) >> 10)
}

/// The inverse of [`write_dst_fp16`].
pub(crate) fn read_dst_fp16(d: u16) -> u16 {
    (d & 0x8000) | ((d & 0x1f) << 10) | ((d >> 5) & 0x3ff)
}

/// `WriteDstFP32`: [`write_dst_bf16`] on the high half.
pub(crate) fn write_dst_fp32(x: u32) -> u32 {
    ((write_dst_bf16((x >> 16) as u16) as u32) << 16) | (x & 0xffff)
}

/// The inverse of [`write_dst_fp32`].
pub(crate) fn read_dst_fp32(d: u32) -> u32 {
    ((read_dst_bf16((d >> 16) as u16) as u32) << 16) | (d & 0xffff)
}

// ---- values ----

/// A Src datum read as `style`, as FP32-layout bits (exponent 0: signed zero).
pub(crate) fn src_bits(v: u32, style: Style) -> u32 {
    let sign = ((v >> 18) & 1) << 31;
    let man10 = (v >> 8) & 0x3ff;
    let (exp, man) = match style {
        Style::Tf32 => (v & 0xff, man10),
        Style::Bf16 => (v & 0xff, man10 & !7),
        Style::Fp16 => match v & 0x1f {
            0 => (0, 0),
            e => (e + 112, man10),
        },
    };
    if exp == 0 {
        sign
    } else {
        sign | (exp << 23) | (man << 13)
    }
}

/// The value of FP32-layout bits as the Matrix Unit reads them (exponent 0 is zero,
/// exponent 255 an ordinary number).
pub(crate) fn value(bits: u32) -> f64 {
    let sign = if bits >> 31 != 0 { -1.0 } else { 1.0 };
    let exp = ((bits >> 23) & 0xff) as i32;
    if exp == 0 {
        return sign * 0.0;
    }
    let man = (bits & 0x7f_ffff) as f64 / (1u32 << 23) as f64;
    sign * (1.0 + man) * 2f64.powi(exp - 127)
}

/// A 16-bit FP16 pattern (IEEE layout) as FP32-layout bits (exponent 0 flushes).
pub(crate) fn fp16_to_bits(h: u16) -> u32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    match (h >> 10) & 0x1f {
        0 => sign,
        e => sign | ((e + 112) << 23) | ((h & 0x3ff) << 13),
    }
}

/// Rounds `x` to `man` mantissa bits, nearest-even, as IEEE-layout bits of a format with
/// `exp_bits` exponent bits (bias `2^(exp_bits-1) - 1`, all-ones exponent finite).
/// Below the smallest normal: signed zero; above the largest finite: `overflow`.
fn round(x: f64, man: u32, exp_bits: u32, overflow: u32) -> u32 {
    let sign = ((x.is_sign_negative()) as u32) << (man + exp_bits);
    if x == 0.0 || !x.is_finite() {
        return sign;
    }
    let b = x.abs().to_bits();
    let mut e = ((b >> 52) & 0x7ff) as i32 - 1023;
    let m = (b & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = 52 - man;
    let mut q = m >> shift;
    let rem = m & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q += 1;
        if q == 1u64 << (man + 1) {
            q >>= 1;
            e += 1;
        }
    }
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let max_e = (1i32 << exp_bits) - 1 - bias;
    if e < 1 - bias {
        sign
    } else if e > max_e {
        sign | overflow
    } else {
        sign | (((e + bias) as u32) << man) | (q as u32 & ((1 << man) - 1))
    }
}

/// One `float` operation's rounding: FP32-layout bits of `x`.
pub(crate) fn round_fp32(x: f64) -> u32 {
    round(x, 23, 8, 0x7f80_0000)
}

/// `x` rounded as a `float` would be, as a value.
pub(crate) fn f(x: f64) -> f64 {
    value(round_fp32(x))
}

/// `RoundToBF16`: 16-bit BF16 pattern.
pub(crate) fn round_bf16(x: f64) -> u16 {
    round(x, 7, 8, 0x7f80) as u16
}

/// `RoundToFP16`: 16-bit FP16 pattern; too large gives exponent 31, mantissa 1023.
pub(crate) fn round_fp16(x: f64) -> u16 {
    round(x, 10, 5, 0x7fff) as u16
}

/// The value of a BF16 pattern as the Matrix Unit reads it.
pub(crate) fn bf16_value(h: u16) -> f64 {
    value((h as u32) << 16)
}

/// The value of an FP16 pattern as the Matrix Unit reads it.
pub(crate) fn fp16_value(h: u16) -> f64 {
    value(fp16_to_bits(h))
}

/// `SrcAFidelityBits` on FP32-layout bits: the mantissa bits the phase consumes.
pub(crate) fn src_a_fidelity(bits: u32, phase: u32) -> f64 {
    if phase & 1 == 0 {
        value(bits & 0xfff8_0000)
    } else {
        value(bits) - value(bits & 0xfff8_3fff)
    }
}

/// `SrcBFidelityBits`.
pub(crate) fn src_b_fidelity(bits: u32, phase: u32) -> f64 {
    if phase & 2 == 0 {
        value(bits & 0xfffe_0000)
    } else {
        value(bits) - value(bits & 0xfffe_1fff)
    }
}

/// Round to nearest with ties away from zero to `keep` mantissa bits of an 8-bit-exponent
/// FP32-layout value (the packers' early rounding), as ttsim does it: NaN becomes infinity
/// (its sign kept), the magnitude is rounded (a carry may reach the exponent: a denormal
/// within half a unit of the smallest normal becomes it), and a result below the smallest
/// normal, minus zero included, becomes plus zero. Returns FP32-layout bits with the dropped
/// bits zero.
pub(crate) fn pack_round8(bits: u32, keep: u32) -> u32 {
    let exp = (bits >> 23) & 0xff;
    if exp == 0xff {
        return bits & 0xff80_0000; // infinity keeps its sign
    }
    let drop = 23 - keep;
    let half = 1u32 << (drop - 1);
    let mag = bits & 0x7fff_ffff;
    let rounded = (mag + half) & !((1u32 << drop) - 1); // may carry into the exponent
    if rounded >> 23 == 0 {
        return 0;
    }
    (bits & 0x8000_0000) | rounded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_round_trip() {
        for x in [0x3f80u16, 0xc123, 0x7f7f, 0x0001, 0x8000] {
            assert_eq!(read_dst_bf16(write_dst_bf16(x)), x);
            assert_eq!(read_dst_fp16(write_dst_fp16(x)), x);
        }
        assert_eq!(write_dst_bf16(0x3f80), 0x007f, "sign, man 0, exp 127");
        let w = 0x4049_0fdb; // pi
        assert_eq!(read_dst_fp32(write_dst_fp32(w)), w);
        // Src: 1.0 BF16 -> exp 127 in the low byte, mantissa above.
        assert_eq!(write_src_bf16(0x3f80), 127);
        assert_eq!(write_src_bf16(0xbfc0), (1 << 18) | (0x40 << 11) | 127);
        assert_eq!(
            write_src_fp16(0x3c00),
            15,
            "FP16 1.0: exp 15 in the low 5 bits"
        );
        assert_eq!(src_bits(write_src_bf16(0xbfc0), Style::Bf16), 0xbfc0_0000);
        assert_eq!(src_bits(write_src_fp16(0x3c00), Style::Fp16), 0x3f80_0000);
    }

    #[test]
    fn the_matrix_unit_reads_denormals_as_zero_and_max_exponent_as_a_number() {
        assert_eq!(value(0x0000_0001), 0.0, "FP32 denormal");
        assert!(value(0x8040_0000).is_sign_negative() && value(0x8040_0000) == 0.0);
        assert_eq!(value(0x7f80_0000), 2f64.powi(128), "not infinity");
        assert_eq!(value(0x7fc0_0000), 1.5 * 2f64.powi(128), "not NaN");
        assert_eq!(fp16_value(0x7c00), 65536.0, "FP16 exponent 31 is finite");
        assert_eq!(fp16_value(0x0200), 0.0, "FP16 denormal");
        assert_eq!(src_bits(write_src_fp16(0x0200), Style::Fp16), 0);
    }

    #[test]
    fn rounding_is_nearest_even_with_flush_and_saturation() {
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even (1).
        assert_eq!(round_fp32(1.0 + 2f64.powi(-24)), 0x3f80_0000);
        assert_eq!(round_fp32(1.0 + 3.0 * 2f64.powi(-24)), 0x3f80_0002);
        // Below 2^-126: zero with the sign kept.
        assert_eq!(round_fp32(2f64.powi(-127)), 0);
        assert_eq!(round_fp32(-2f64.powi(-127)), 0x8000_0000);
        // Rounding up into the normal range is not flushed.
        assert_eq!(
            round_fp32((1.0 - 2f64.powi(-25)) * 2f64.powi(-126)),
            0x0080_0000
        );
        // Past exponent 255: the "too large" pattern.
        assert_eq!(round_fp32(2f64.powi(130)), 0x7f80_0000);
        assert_eq!(
            round_fp32(1.5 * 2f64.powi(128)),
            0x7fc0_0000,
            "still representable"
        );
        assert_eq!(round_bf16(1.0 + 2f64.powi(-8)), 0x3f80, "tie to even");
        assert_eq!(round_bf16(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
        assert_eq!(
            round_fp16(65536.0 * 4.0),
            0x7fff,
            "FP16 saturates to exp 31, man 1023"
        );
        assert_eq!(round_fp16(2f64.powi(-15)), 0, "FP16 denormal results flush");
        assert_eq!(round_fp16(-1.5), 0xbe00);
    }

    #[test]
    fn fidelity_phases_split_the_mantissas() {
        let a = 0x3fff_e000; // 1.99999... with 10 mantissa bits set (TF32)
        let whole = value(a);
        let hi = src_a_fidelity(a, 0);
        let lo = src_a_fidelity(a, 1);
        assert_eq!(value(0x3ff8_0000), hi, "implicit 1 and four mantissa bits");
        assert_eq!(
            hi + lo + 2f64.powi(-10),
            whole,
            "the last TF32 bit is never consumed"
        );
        let b = 0x3fff_e000;
        assert_eq!(src_b_fidelity(b, 0) + src_b_fidelity(b, 2), value(b));
    }

    #[test]
    fn packer_rounding_is_ties_away() {
        // BF16 keep 7: 1 + 2^-8 (a tie) rounds away from zero.
        assert_eq!(pack_round8(0x3f80_8000, 7), 0x3f81_0000);
        assert_eq!(pack_round8(0xbf80_8000, 7), 0xbf81_0000);
        assert_eq!(
            pack_round8(0x8000_0000, 7),
            0,
            "minus zero becomes plus zero"
        );
        assert_eq!(pack_round8(0x0000_1234, 7), 0, "denormal");
        assert_eq!(
            pack_round8(0x807f_7fff, 7),
            0,
            "a denormal below half a unit: plus zero"
        );
        assert_eq!(
            pack_round8(0x807f_8000, 7),
            0x8080_0000,
            "a denormal at half a unit rounds to the smallest normal, keeping its sign"
        );
        assert_eq!(pack_round8(0x007f_f000, 10), 0x0080_0000, "TF32 too");
        assert_eq!(
            pack_round8(0xffc0_0000, 7),
            0xff80_0000,
            "NaN becomes infinity"
        );
        assert_eq!(
            pack_round8(0x7f7f_ffff, 7),
            0x7f80_0000,
            "carries into infinity"
        );
    }
}
