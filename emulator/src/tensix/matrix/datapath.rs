//! The Matrix Unit's floating-point data path as silicon computes it (the `Ttsim` numerics
//! of [`super::Numerics`]): fixed-point mantissas aligned to a shared exponent, not `float`
//! operations. Tenstorrent's functional simulator ttsim, the public golden model of
//! Wormhole B0, computes this way; the rules below are written from reading it and are
//! checked against it element by element by an external harness (the design doc's
//! "Numerics" section has the figures). In short:
//!
//! - An operand is Sign, Exp (8 bits, or 5 for FP16), an 11-bit mantissa with its implicit
//!   one. Exponent 0 is zero; the all-ones exponent is an ordinary number.
//! - `ELWADD`/`ELWSUB` align the smaller operand to the larger's exponent, rounding its
//!   mantissa to 11 bits half away from zero, then add or subtract exactly.
//! - `ELWMUL` and `MVMUL` multiply the fidelity phase's 5 bits of `SrcA`'s mantissa by
//!   7 bits of `SrcB`'s; `MVMUL` sums each half (8 products) of its 16-term dot product at
//!   the half's largest exponent, each product rounded half away from zero on alignment.
//! - The accumulator ([`accumulate`]) aligns up to two such terms and the old `Dst` value to
//!   their largest exponent (terms round half toward plus infinity, `Dst` half away from
//!   zero); without FP32 `Dst` each is first rounded to 11 mantissa bits; it adds them,
//!   normalises, and rounds the sum half away from zero to the `Dst` format (8 mantissa
//!   bits with the implicit one for BF16, 11 for FP16, 24 for FP32).
//! - A result below the smallest normal is +0 (no sign); past the largest exponent it is the
//!   "too large" pattern: Sign, exponent 255, mantissa 0 (FP16 `Dst`: exponent 31,
//!   mantissa 1023). An exact cancellation is +0.
//! - One documented quirk of Wormhole's renormaliser: a sum of exactly minus one unit in the
//!   last place normalises as if it had four more bits.

/// One term of the accumulator: sign, biased exponent, magnitude with the implicit one at
/// bit 23 when normalised (bits below are fraction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Term {
    pub neg: bool,
    pub exp: i32,
    pub man: u32,
}

/// What the data path's result is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mode {
    /// `Dst` holds FP32 (`ALU_ACC_CTRL_Fp32_enabled`).
    pub fp32: bool,
    /// Operands have 8-bit exponents (every format but FP16).
    pub exp8: bool,
}

/// Shifts `m` right by `d` rounding half away from zero (its magnitude half up); less one
/// first if `toward_zero_on_tie` (a negative term's tie rounds toward plus infinity).
fn align(m: u32, d: i32, toward_zero_on_tie: bool) -> u32 {
    if d <= 0 {
        return m;
    }
    if d >= 31 {
        return 0;
    }
    ((m as u64 + (1u64 << (d - 1)) - toward_zero_on_tie as u64) >> d) as u32
}

/// `Dst`'s old value (FP32-layout bits; an FP16 `Dst` value with its 5-bit exponent in
/// bits 23-27) plus `terms`, as FP32-layout bits in the same convention.
pub(crate) fn accumulate(terms: [Term; 2], dst: u32, mode: Mode) -> u32 {
    let dst_neg = dst >> 31 != 0;
    let dst_exp = ((dst >> 23) & 0xff) as i32;
    let mut dst_man = if dst_exp == 0 {
        0
    } else {
        (dst & 0x7f_ffff) | 0x80_0000
    };
    let exp = terms[0].exp.max(terms[1].exp).max(dst_exp);
    if exp <= 0 {
        return 0;
    }
    let mut mans = [0u32; 2];
    for (m, t) in mans.iter_mut().zip(&terms) {
        *m = align(t.man, exp - t.exp, t.neg);
        if !mode.fp32 {
            *m = (*m + (1 << 12) - t.neg as u32) & !0x1fff;
        }
    }
    dst_man = align(dst_man, exp - dst_exp, false);
    if !mode.fp32 {
        dst_man = (dst_man + (1 << 12)) & !0x1fff;
    }
    let mut sum = dst_man as i64;
    for (m, t) in mans.iter().zip(&terms) {
        if t.neg == dst_neg {
            sum += *m as i64;
        } else {
            sum -= *m as i64;
        }
    }
    let mut neg = dst_neg;
    if sum < 0 {
        sum = -sum;
        neg = !neg;
    }
    if sum == 0 {
        return 0;
    }
    let mut man = sum as u32;
    let mut shift = man.leading_zeros() as i32 - 8;
    if neg && man == 1 {
        shift -= 27; // Wormhole's renormaliser on minus one ulp
    }
    let mut exp = exp - shift;
    let keep = if mode.fp32 {
        0
    } else if mode.exp8 {
        16
    } else {
        13
    };
    shift -= keep;
    if shift < 0 {
        let s = -shift;
        man = ((man as u64 + (1u64 << (s - 1))) >> s) as u32;
    } else {
        man <<= shift;
    }
    man <<= keep;
    if man & 0x100_0000 != 0 {
        exp += 1;
    }
    let man = man & 0x7f_ffff;
    let sign = (neg as u32) << 31;
    if exp <= 0 {
        0
    } else if mode.fp32 || mode.exp8 {
        if exp >= 255 {
            sign | 0x7f80_0000
        } else {
            sign | ((exp as u32) << 23) | man
        }
    } else if exp >= 32 {
        sign | (31 << 23) | (0x3ff << 13)
    } else {
        sign | ((exp as u32) << 23) | man
    }
}

/// An operand: Sign (bit 18), Exp (bits 10-17), Man (bits 0-9), already masked to its
/// format. `zero`: it reads as zero.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand {
    pub bits: u32,
    pub zero: bool,
}

fn parts(v: u32) -> (bool, i32, u32) {
    (v >> 18 != 0, ((v >> 10) & 0xff) as i32, (v & 0x3ff) | 0x400)
}

/// `ELWADD`'s term (`ELWSUB` passes `b` with its sign flipped).
pub(crate) fn add_term(a: Operand, b: Operand, mode: Mode) -> Term {
    let mut a = if a.zero { 0 } else { a.bits };
    let mut b = if b.zero { 0 } else { b.bits };
    if (a & 0x3ffff) < (b & 0x3ffff) {
        std::mem::swap(&mut a, &mut b);
    }
    let (neg, exp_a, man_a) = parts(a);
    let (neg_b, exp_b, man_b) = parts(b);
    let man_a = if a == 0 { 0 } else { man_a };
    let mut man_b = if b == 0 { 0 } else { man_b };
    if exp_b < exp_a {
        let d = exp_a - exp_b;
        man_b = if d < 12 { align(man_b, d, false) } else { 0 };
    }
    let man = if neg == neg_b {
        man_a + man_b
    } else {
        man_a - man_b
    } << 13;
    let mut exp = exp_a;
    if mode.fp32 && !mode.exp8 {
        exp = if exp != 0 { exp + 127 - 15 } else { 127 - 30 };
    }
    Term { neg, exp, man }
}

/// The exponent bias a product carries: rebias to the `Dst` format, less 5 for `SrcA`'s
/// low mantissa bits (phase bit 0), less 7 for `SrcB`'s (phase bit 1).
fn product_bias(mode: Mode, phase: u32) -> i32 {
    let mut adj = if mode.exp8 {
        -127
    } else if mode.fp32 {
        127 - 30
    } else {
        -15
    };
    if phase & 1 != 0 {
        adj -= 5;
    }
    if phase & 2 != 0 {
        adj -= 7;
    }
    adj
}

/// One product of the phase's mantissa bits: `(neg, exp, man)`, `man` up to 12 bits; `None`
/// when an operand is zero.
fn product(a: Operand, b: Operand, mode: Mode, phase: u32) -> Option<(bool, i32, u32)> {
    if a.zero || b.zero {
        return None;
    }
    let (sa, ea, ma) = parts(a.bits);
    let (sb, eb, mb) = parts(b.bits);
    let ma = if phase & 1 != 0 {
        (ma >> 1) & 31
    } else {
        ma >> 6
    };
    let mb = if phase & 2 != 0 {
        (mb & 15) << 3
    } else {
        mb >> 4
    };
    Some((sa != sb, ea + eb + product_bias(mode, phase), ma * mb))
}

/// `ELWMUL`'s term.
pub(crate) fn mul_term(a: Operand, b: Operand, mode: Mode, phase: u32) -> Term {
    match product(a, b, mode, phase) {
        Some((neg, exp, man)) if exp > 0 => Term {
            neg,
            exp,
            man: man << 13,
        },
        _ => Term {
            neg: false,
            exp: product_bias(mode, phase).max(0),
            man: 0,
        },
    }
}

/// `MVMUL`'s two terms for the dot product of `a` and `b` (16 each): one per half.
pub(crate) fn dot_terms(a: &[Operand; 16], b: &[Operand; 16], mode: Mode, phase: u32) -> [Term; 2] {
    let zero_exp = product_bias(mode, phase).max(0);
    let mut out = [Term::default(); 2];
    for (h, t) in out.iter_mut().enumerate() {
        let ps: Vec<(bool, i32, u32)> = (8 * h..8 * h + 8)
            .map(|k| product(a[k], b[k], mode, phase).unwrap_or((false, zero_exp, 0)))
            .collect();
        let exp = ps.iter().map(|p| p.1).max().unwrap_or(0);
        if exp <= 0 {
            continue;
        }
        let sum: i64 = ps
            .iter()
            .map(|&(neg, e, m)| {
                let d = (exp - e).min(30);
                let m = ((((m as u64) << 1) + (1u64 << d)) >> (d + 1)) as i64;
                if neg {
                    -m
                } else {
                    m
                }
            })
            .sum();
        *t = Term {
            neg: sum < 0,
            exp,
            man: (sum.unsigned_abs() as u32) << 13,
        };
    }
    out
}
