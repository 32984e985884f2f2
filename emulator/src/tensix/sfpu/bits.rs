//! The Vector Unit's bitwise, field and integer instructions (`SFPAND`, `SFPOR`, `SFPXOR`,
//! `SFPNOT`, `SFPABS`, `SFPSETSGN`, `SFPSETEXP`, `SFPSETMAN`, `SFPEXEXP`, `SFPEXMAN`,
//! `SFPDIVP2`, `SFPLZ`, `SFPSHFT`, `SFPSWAP`): lanewise, each as its page's functional model,
//! with `LaneConfig` at reset (no `EXCHANGE_SRCB_SRCC`, no `ENABLE_DEST_INDEX`).

use super::{op, Fields, VectorUnit, LANES};
use crate::tensix::isa::{field, opcode};

/// Applies `f(c, b, lane_flag)` to every enabled lane: `c` is `LReg[VC]`, `b` is
/// `LReg[VD]` (the pages' `VB = VD`); the result goes to `LReg[VD]` when `VD < 8`, and
/// `f` may set the lane's flag.
fn lanewise(u: &mut VectorUnit, f: Fields, mut op: impl FnMut(u32, u32, &mut bool) -> u32) {
    if f.vd >= 8 {
        return;
    }
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let (c, b) = (u.read(f.vc, lane), u.lreg[f.vd][lane]);
        let mut flag = u.flags[lane];
        u.lreg[f.vd][lane] = op(c, b, &mut flag);
        u.flags[lane] = flag;
    }
}

/// `SignMagIsSmaller` of `SFPSWAP.md`: sign-magnitude (or FP32 total order) `c < d`.
pub fn sign_mag_is_smaller(c: u32, d: u32) -> bool {
    let key = |x: u32| (x ^ (((x as i32) >> 30) as u32 >> 1)) as i32;
    key(c) < key(d)
}

/// `SFPSWAP`'s `VDGetsMin` for `Mod1` 1-8 (bit per lane).
fn vd_gets_min(mod1: u32) -> u32 {
    match mod1 {
        1 => 0xffff_ffff,
        2 => 0x0000_ffff,
        3 => 0x00ff_00ff,
        4 => 0xff00_00ff,
        5 => 0x0000_00ff,
        6 => 0x0000_ff00,
        7 => 0x00ff_0000,
        _ => 0xff00_0000, // 8
    }
}

/// Executes one of this module's instructions.
pub fn execute(u: &mut VectorUnit, w: u32) {
    let f = Fields::of(w);
    let m = f.mod1;
    let imm1 = field(w, 12, 1);
    let imm8 = field(w, 12, 8);
    let imm12 = field(w, 12, 12);
    let fp = |sign: u32, exp: u32, man: u32| {
        ((sign & 1) << 31) | ((exp & 0xff) << 23) | (man & 0x7f_ffff)
    };
    match opcode(w) {
        op::SFPAND => lanewise(u, f, |c, b, _| b & c),
        op::SFPOR => lanewise(u, f, |c, b, _| b | c),
        op::SFPXOR => lanewise(u, f, |c, b, _| b ^ c),
        op::SFPNOT => lanewise(u, f, |c, _, _| !c),
        op::SFPABS => lanewise(u, f, |x, _, _| {
            if x < 0x8000_0000 {
                x
            } else if m & 1 != 0 {
                if x >= 0xff80_0000 {
                    x // -NaN stays
                } else {
                    x & 0x7fff_ffff
                }
            } else {
                x.wrapping_neg()
            }
        }),
        op::SFPSETSGN => lanewise(u, f, |c, b, _| {
            let sign = if m & 1 != 0 { imm1 } else { b >> 31 };
            fp(sign, c >> 23, c)
        }),
        op::SFPSETEXP => lanewise(u, f, |c, b, _| {
            let exp = if m & 1 != 0 {
                imm8
            } else if m & 2 != 0 {
                b >> 23
            } else {
                b
            };
            fp(c >> 31, exp, c)
        }),
        op::SFPSETMAN => lanewise(u, f, |c, b, _| {
            let man = if m & 1 != 0 { imm12 << 11 } else { b };
            fp(c >> 31, c >> 23, man)
        }),
        op::SFPEXEXP => lanewise(u, f, |c, _, flag| {
            let bias = if m & 1 != 0 { 0 } else { 127 };
            let r = ((c >> 23) & 0xff) as i32 - bias;
            if m & 2 != 0 {
                *flag = r < 0;
            }
            if m & 8 != 0 {
                *flag = !*flag;
            }
            r as u32
        }),
        op::SFPEXMAN => lanewise(u, f, |c, _, _| {
            let hidden = if m & 1 != 0 { 0 } else { 1 << 23 };
            hidden + (c & 0x7f_ffff)
        }),
        op::SFPDIVP2 => lanewise(u, f, |c, _, _| {
            let exp = (c >> 23) & 0xff;
            let exp = if m & 1 == 0 {
                imm8
            } else if exp == 255 {
                exp
            } else {
                (exp + imm8) & 0xff
            };
            fp(c >> 31, exp, c)
        }),
        op::SFPLZ => lanewise(u, f, |c, _, flag| {
            let c = if m & 4 != 0 { c & 0x7fff_ffff } else { c };
            if m & 2 != 0 {
                *flag = c != 0;
            }
            if m & 8 != 0 {
                *flag = !*flag;
            }
            c.leading_zeros()
        }),
        op::SFPSHFT => {
            let vc = f.vc;
            if f.vd >= 8 {
                return;
            }
            for lane in 0..LANES {
                if !u.enabled(lane) {
                    continue;
                }
                let amount = if m & 1 != 0 {
                    ((imm12 << 20) as i32) >> 20
                } else {
                    u.read(vc, lane) as i32
                };
                let b = u.lreg[f.vd][lane];
                u.lreg[f.vd][lane] = if amount >= 0 {
                    b << (amount & 31)
                } else {
                    b >> (amount.wrapping_neg() & 31)
                };
            }
        }
        _ => sfpswap(u, f), // op::SFPSWAP
    }
}

/// `SFPSWAP` (`Mod1` above 8 is refused by [`super::unsupported`]).
fn sfpswap(u: &mut VectorUnit, f: Fields) {
    let min_mask = vd_gets_min(f.mod1);
    for lane in 0..LANES {
        if !u.enabled(lane) {
            continue;
        }
        let (c, d) = (u.read(f.vc, lane), u.read(f.vd, lane));
        let swap = if f.mod1 == 0 {
            true
        } else if min_mask >> lane & 1 != 0 {
            sign_mag_is_smaller(c, d)
        } else {
            !sign_mag_is_smaller(c, d)
        };
        if swap {
            if f.vc < 8 {
                u.lreg[f.vc][lane] = d;
            }
            if f.vd < 8 {
                u.lreg[f.vd][lane] = c;
            }
        }
    }
}
