//! `SFPLOADI`, `SFPMAD` (and `SFPADD`, `SFPMUL`, the same instruction), `SFPMOV`,
//! `SFPIADD`: lanewise, each as its page's functional model.

use super::{formats, Fields, VectorUnit, LANES};
use crate::tensix::isa::field;

/// Take VA from the low four bits of `LReg[7]`, per lane.
pub const SFPMAD_MOD1_INDIRECT_VA: u32 = 4;
/// Take VD from the low four bits of `LReg[7]`, per lane.
pub const SFPMAD_MOD1_INDIRECT_VD: u32 = 8;
/// Flip the sign bit.
pub const SFPMOV_MOD1_NEGATE: u32 = 1;
/// Write every lane, enabled or not (only as the whole `Mod1`).
pub const SFPMOV_MOD1_ALL_LANES_ENABLED: u32 = 2;
/// Read a special register instead of `LReg[VC]` (not modelled).
pub const SFPMOV_MOD1_FROM_SPECIAL: u32 = 8;
/// `LReg[VC] + Imm12` instead of a register operand.
pub const SFPIADD_MOD1_ARG_IMM: u32 = 1;
/// `LReg[VC] - LReg[VD]` instead of the sum.
pub const SFPIADD_MOD1_ARG_2SCOMP_LREG_DST: u32 = 2;
/// Leave the lane flags (else: flag = result < 0).
pub const SFPIADD_MOD1_CC_NONE: u32 = 4;
/// Invert the lane flags afterwards.
pub const SFPIADD_MOD1_CC_GTE0: u32 = 8;

/// The NaN the MAD sub-unit emitted under [`crate::config::Numerics::IsaDoc`]: the page guarantees only
/// that the mantissa's least significant bit is set (ASSUMPTION: a positive quiet NaN).
pub const MAD_NAN: u32 = 0x7FC0_0001;

/// `a * b + c` as Wormhole's Vector Unit computes it: ttsim's rules (its public golden
/// model), checked against it bit for bit by the external harness of the design doc's
/// "Numerics" section. Not a fused multiply-add:
///
/// - Denormal inputs read as zero.
/// - The exact 48-bit product keeps 24 bits plus three guard bits, the rest OR-ed into the
///   last (sticky) bit; the smaller of product and `c` is shifted to the larger's exponent,
///   its lost bits OR-ed into its last bit unless it shifted to zero.
/// - The sum is normalised keeping only its own lowest bit as sticky, then rounded to
///   nearest even on the three guard bits.
/// - A result below the smallest normal (before or after rounding), or an exact zero, is +0
///   (`c` comes back as it is when the product is zero or underflows on its own: `-0 + 0`
///   keeps a normal `c`'s sign); past the largest exponent, infinity.
/// - NaN: an invalid operation (NaN input, `Inf * 0`, `Inf - Inf`) gives `Sign | 0x7F800001`
///   (the product's sign; `c`'s when only `c` is NaN), OR-ed with the finite result's bits
///   computed as if the NaN operand were zero: the mantissa is not a fixed pattern.
pub fn mad(a: u32, b: u32, c: u32) -> u32 {
    let parts = |x: u32| {
        let e = ((x >> 23) & 0xff) as i32;
        let m = if e == 0 {
            0
        } else {
            (x & 0x7f_ffff) | 0x80_0000
        };
        (x & 0x8000_0000, e, m)
    };
    let ((sa, ea, ma), (sb, eb, mb), (sc, ec, mc)) = (parts(a), parts(b), parts(c));
    let p_sign = sa ^ sb;
    let full = ma as u64 * mb as u64; // 2^46 scale for 1.0
    let mut p_m = (full >> 20) | ((full & 0xf_ffff != 0) as u64); // 2^26 scale, sticky
    let mut p_e = ea + eb - 127;
    let mut c_m = (mc as u64) << 3; // 2^26 scale
                                    // An operand at exponent 255 is invalid if it is NaN or multiplies a zero.
    let a_nan = ea == 255 && (mb == 0 || ma != 0x80_0000);
    let b_nan = eb == 255 && (ma == 0 || mb != 0x80_0000);
    let mut nan = 0u32;
    if ea == 255 || eb == 255 || ec == 255 || p_e >= 255 {
        let c_inf = ec == 255 && mc == 0x80_0000;
        let p_big = ea == 255 || eb == 255 || p_e >= 255;
        if a_nan || b_nan || (c_inf && p_big && sc != p_sign) {
            nan = p_sign | 0x7f80_0001;
        } else if ec == 255 && !c_inf {
            nan = sc | 0x7f80_0001;
        } else if c_inf {
            return c;
        } else {
            return p_sign | 0x7f80_0000;
        }
        p_e = p_e.min(255);
    }
    if p_m == 0 || p_e < 0 {
        if nan == 0 {
            return if mc != 0 { c } else { 0 };
        }
        (p_m, p_e) = (0, 0);
    }
    // Align the smaller exponent's operand: lost bits stick to its last bit unless it
    // shifted out entirely.
    let shift = |m: u64, d: i32| -> u64 {
        if d <= 0 {
            return m;
        }
        if d >= 64 {
            return 0;
        }
        let r = m >> d;
        if r != 0 {
            r | ((r << d != m) as u64)
        } else {
            0
        }
    };
    let mut r_e = p_e.max(ec);
    p_m = shift(p_m, r_e - p_e);
    c_m = shift(c_m, r_e - ec);
    let (r_sign, r_m) = if p_m >= c_m {
        (p_sign, if p_sign == sc { p_m + c_m } else { p_m - c_m })
    } else {
        (sc, if p_sign == sc { p_m + c_m } else { c_m - p_m })
    };
    let mut r_m = r_m as u32;
    if r_m == 0 {
        return nan;
    }
    let n = 5 - r_m.leading_zeros() as i32; // leading one to bit 26
    r_e += n;
    if r_e >= 255 {
        return if nan != 0 { nan } else { r_sign | 0x7f80_0000 };
    }
    if r_e < 0 {
        return nan;
    }
    if n <= 0 {
        r_m <<= -n;
    } else {
        r_m = (r_m >> n) | (r_m & 1);
    }
    let mut r = ((r_e as u32) << 23) + ((r_m >> 3) & 0x7f_ffff);
    r += (((r_m & 7) + (r & 1)) > 4) as u32;
    if r >> 23 == 0 {
        return nan;
    }
    (if nan != 0 { nan } else { r_sign }) | r
}

/// The ISA documentation's MAD (`SFPMAD.md`, "IEEE754 conformance"; [`crate::config::Numerics::IsaDoc`]):
/// denormal inputs read as zero; one rounding of the exact result, to nearest even (a
/// fused multiply-add: the page says only "higher precision than FP32"); NaN and
/// infinities by IEEE 754, any NaN emitted as [`MAD_NAN`]; a denormal or negative-zero
/// result becomes +0.
pub fn mad_isa_doc(a: u32, b: u32, c: u32) -> u32 {
    let flush = |x: u32| {
        if x & 0x7f80_0000 == 0 {
            x & 0x8000_0000
        } else {
            x
        }
    };
    let [a, b, c] = [a, b, c].map(|x| f32::from_bits(flush(x)));
    let r = a.mul_add(b, c);
    if r.is_nan() {
        return MAD_NAN;
    }
    let bits = r.to_bits();
    if bits & 0x7f80_0000 == 0 {
        0
    } else {
        bits
    }
}

impl VectorUnit {
    /// The MAD sub-unit's `a * b + c` under the unit's [`crate::config::Numerics`].
    pub fn mad(&self, a: u32, b: u32, c: u32) -> u32 {
        match self.numerics {
            crate::config::Numerics::Ttsim => mad(a, b, c),
            crate::config::Numerics::IsaDoc => mad_isa_doc(a, b, c),
        }
    }
}

/// `SFPLOADI` (Mod0 already checked by [`super::unsupported`]).
pub fn sfploadi(u: &mut VectorUnit, w: u32) {
    let vd = field(w, 20, 4) as usize;
    let mod0 = field(w, 16, 4);
    let imm = field(w, 0, 16);
    if vd >= 8 {
        return;
    }
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let old = u.lreg[vd][lane];
        u.lreg[vd][lane] = match mod0 {
            0 => imm << 16,
            1 => formats::sfploadi_fp16(imm as u16),
            2 => imm,
            4 => imm as u16 as i16 as i32 as u32,
            8 => (imm << 16) | (old & 0xffff),
            _ => (old & 0xffff_0000) | imm, // 10
        };
    }
}

/// `SFPMAD`/`SFPADD`/`SFPMUL`; returns the `LReg`s written (bit mask).
pub fn sfpmad(u: &mut VectorUnit, f: Fields) -> u32 {
    let mut wrote = 0;
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let va = if f.mod1 & SFPMAD_MOD1_INDIRECT_VA != 0 {
            (u.lreg[7][lane] & 15) as usize
        } else {
            f.va
        };
        let d = u.mad(u.read(va, lane), u.read(f.vb, lane), u.read(f.vc, lane));
        let vd = if f.mod1 & SFPMAD_MOD1_INDIRECT_VD != 0 {
            (u.lreg[7][lane] & 15) as usize
        } else {
            f.vd
        };
        if vd < 8 {
            u.lreg[vd][lane] = d;
            wrote |= 1 << vd;
        }
    }
    wrote
}

/// `SFPMULI` (`LReg[VD] = BF16(Imm16) * LReg[VD] + 0`) or `SFPADDI` (`LReg[VD] =
/// BF16(Imm16) * 1.0 + LReg[VD]`); returns the `LReg`s written (bit mask).
pub fn sfpmuli_addi(u: &mut VectorUnit, w: u32, f: Fields, add: bool) -> u32 {
    let imm = field(w, 8, 16) << 16;
    let mut wrote = 0;
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let c = u.read(f.vd, lane);
        let d = if add {
            u.mad(imm, super::LREG10, c)
        } else {
            u.mad(imm, c, 0)
        };
        let vd = if f.mod1 & SFPMAD_MOD1_INDIRECT_VD != 0 {
            (u.lreg[7][lane] & 15) as usize
        } else {
            f.vd
        };
        if vd < 8 {
            u.lreg[vd][lane] = d;
            wrote |= 1 << vd;
        }
    }
    wrote
}

/// `SFPMOV` (the special-register mode is refused by [`super::unsupported`]).
pub fn sfpmov(u: &mut VectorUnit, f: Fields) {
    for lane in 0..LANES {
        if !(u.enabled(lane) || f.mod1 == SFPMOV_MOD1_ALL_LANES_ENABLED) {
            continue;
        }
        let mut x = u.read(f.vc, lane);
        if f.mod1 & SFPMOV_MOD1_NEGATE != 0 {
            x ^= 0x8000_0000;
        }
        if f.vd < 8 {
            u.lreg[f.vd][lane] = x;
        }
    }
}

/// `SFPIADD`.
pub fn sfpiadd(u: &mut VectorUnit, w: u32, f: Fields) {
    if f.vd >= 8 {
        return;
    }
    let imm = ((field(w, 12, 12) << 20) as i32 >> 20) as u32;
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let c = u.read(f.vc, lane);
        let r = if f.mod1 & SFPIADD_MOD1_ARG_IMM != 0 {
            c.wrapping_add(imm)
        } else if f.mod1 & SFPIADD_MOD1_ARG_2SCOMP_LREG_DST != 0 {
            c.wrapping_sub(u.lreg[f.vd][lane])
        } else {
            c.wrapping_add(u.lreg[f.vd][lane])
        };
        u.lreg[f.vd][lane] = r;
        if f.mod1 & SFPIADD_MOD1_CC_NONE == 0 {
            u.flags[lane] = (r as i32) < 0;
        }
        if f.mod1 & SFPIADD_MOD1_CC_GTE0 != 0 {
            u.flags[lane] = !u.flags[lane];
        }
    }
}
