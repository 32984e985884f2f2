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

/// The NaN the MAD sub-unit emits. The page guarantees only that the mantissa's least
/// significant bit is set (ASSUMPTION: a positive quiet NaN with that bit set).
pub const MAD_NAN: u32 = 0x7FC0_0001;

/// `a * b + c` as the Vector Unit computes it (`SFPMAD.md`, "IEEE754 conformance"):
/// denormal inputs read as zero; one rounding, to nearest with ties to even; NaN and
/// infinities by the IEEE 754 rules, any NaN emitted as [`MAD_NAN`]; a denormal or
/// negative-zero result becomes +0. The page says the product is kept in "higher precision
/// than FP32" but not infinite: ASSUMPTION, exact (a fused multiply-add), which differs from
/// hardware only in the last bit of sums that cancel a long product tail.
pub fn mad(a: u32, b: u32, c: u32) -> u32 {
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
        let d = mad(u.read(va, lane), u.read(f.vb, lane), u.read(f.vc, lane));
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
            mad(imm, super::LREG10, c)
        } else {
            mad(imm, c, 0)
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
