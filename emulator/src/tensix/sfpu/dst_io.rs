//! `SFPLOAD` and `SFPSTORE`: between an `LReg` and the even or odd columns of four rows of
//! `Dst`, converting formats as `SFPLOAD.md` and `SFPSTORE.md` specify, then applying the
//! `AddrMod` (`RWCs.md`, `ApplyPartialAddrMod`: every counter but the fidelity phase).
//!
//! The `AddrMod` tables live in `ThreadConfig`; the pages name the fields but not their
//! positions, which follow Wormhole B0's `cfg_defines.h`: `ADDR_MOD_SET_Base` entry 2 bit
//! 0, `ADDR_MOD_AB_SEC<i>` entry `7 + 2i` (SrcA increment bits 0-5, CR 6, clear 7; SrcB
//! the same from bit 8), `ADDR_MOD_DST_SEC<i>` entry `23 + i` (increment bits 0-9, CR 10,
//! clear 11, CToCR 12), `ADDR_MOD_BIAS_SEC<i>` entry `48 + i` (increment bits 0-3, clear 4);
//! `DEST_TARGET_REG_CFG_MATH_Offset` is entry 1 and `DEST_REGW_BASE_Base` is `Config` word 6.

use super::{formats as fm, Context, VectorUnit, LANES};
use crate::tensix::counters::Counter;
use crate::tensix::isa::field;

/// Format from the ALU configuration (refused: not modelled).
pub const MOD0_FMT_SRCB: u32 = 0;
/// FP16 in `Dst16b`.
pub const MOD0_FMT_FP16: u32 = 1;
/// BF16 in `Dst16b`.
pub const MOD0_FMT_BF16: u32 = 2;
/// FP32 (or integer "32") in `Dst32b`.
pub const MOD0_FMT_FP32: u32 = 3;
/// The same as `MOD0_FMT_FP32`.
pub const MOD0_FMT_INT32: u32 = 4;
/// Integer "8" in `Dst16b`, sign-magnitude in `LReg`.
pub const MOD0_FMT_INT8: u32 = 5;
/// 16 opaque bits, zero-extended.
pub const MOD0_FMT_UINT16: u32 = 6;
/// 16 opaque bits in the high half (`SFPSTORE`: 32 bits as they are).
pub const MOD0_FMT_HI16: u32 = 7;
/// Integer "16" (sign-magnitude).
pub const MOD0_FMT_INT16: u32 = 8;
/// 16 opaque bits (`SFPSTORE`: 32 bits rotated by 16).
pub const MOD0_FMT_LO16: u32 = 9;
/// FP32 into every lane, enabled or not, with the RWC's low bits only.
pub const MOD0_FMT_INT32_ALL: u32 = 10;
/// Zero.
pub const MOD0_FMT_ZERO: u32 = 11;
/// Integer "32" in `Dst`, two's complement in `LReg`.
pub const MOD0_FMT_INT32_SM: u32 = 12;
/// Integer "8" in `Dst`, two's complement in `LReg`.
pub const MOD0_FMT_INT8_COMP: u32 = 13;
/// The low 16 bits of `LReg`, the high half kept.
pub const MOD0_FMT_LO16_ONLY: u32 = 14;
/// The high 16 bits of `LReg`, the low half kept.
pub const MOD0_FMT_HI16_ONLY: u32 = 15;

/// `ThreadConfig` entries of the address modifiers (see the module docs).
const ADDR_MOD_SET: usize = 2;
const DEST_TARGET_OFFSET: usize = 1;
const fn ab_sec(i: usize) -> usize {
    7 + 2 * i
}
const fn dst_sec(i: usize) -> usize {
    23 + i
}
const fn bias_sec(i: usize) -> usize {
    48 + i
}
/// `Config` word of `DEST_REGW_BASE_Base`.
const DEST_REGW_BASE: usize = 6;

/// The decoded `SFPLOAD`/`SFPSTORE` operands.
struct Operands {
    vd: usize,
    mod0: u32,
    addr_mod: u32,
    /// The 10-bit `Addr`: bits 2-9 pick four rows, bit 1 the odd columns.
    addr: u32,
}

fn operands(w: u32, ctx: &Context) -> Result<Operands, String> {
    let base = ctx.cfg[DEST_REGW_BASE];
    if base != 0 {
        return Err(format!(
            "DEST_REGW_BASE_Base is {base:#x}: a non-zero Dst base is not modelled"
        ));
    }
    let mod0 = field(w, 16, 4);
    let offset = u32::from(ctx.thread_cfg[DEST_TARGET_OFFSET]);
    let rwc = ctx.rwc.dst.v;
    let mut addr = field(w, 0, 10) + offset;
    addr += if mod0 == MOD0_FMT_INT32_ALL {
        rwc & 3
    } else {
        rwc
    };
    Ok(Operands {
        vd: field(w, 20, 4) as usize,
        mod0,
        addr_mod: field(w, 14, 2),
        addr: addr & 0x3ff,
    })
}

/// The `Dst` row and column of `lane` at `addr`.
fn cell(addr: u32, lane: usize) -> (usize, usize) {
    let row = (addr & !3) as usize + lane / 8;
    let col = (lane & 7) * 2 + usize::from(addr & 2 != 0);
    (row, col)
}

/// `ApplyPartialAddrMod(AddrMod)`: the RWC updates of `ApplyAddrMod` without the fidelity
/// phase. `ExtraAddrModBit` is not modelled (always 0): an address modifier whose bias
/// section would set it stops the run.
fn apply_partial_addr_mod(ctx: &mut Context, addr_mod: u32) -> Result<(), String> {
    let mut index = addr_mod as usize;
    if ctx.thread_cfg[ADDR_MOD_SET] & 1 != 0 {
        index += 4;
    }
    let ab = u32::from(ctx.thread_cfg[ab_sec(index)]);
    let dst = u32::from(ctx.thread_cfg[dst_sec(index)]);
    let bias = u32::from(ctx.thread_cfg[bias_sec(index)]);
    if bias & 0x10 == 0 && bias & 3 != 0 {
        return Err(format!(
            "ADDR_MOD_BIAS_SEC{index} increments ExtraAddrModBit, which is not modelled"
        ));
    }
    let r = &mut *ctx.rwc;
    let src = |c: &mut Counter, bits: u32| {
        let (incr, cr, clear) = (bits & 0x3f, bits & 0x40 != 0, bits & 0x80 != 0);
        if clear {
            *c = Counter::default();
        } else if cr {
            c.cr = (c.cr + incr) & 0x3f;
            c.v = c.cr;
        } else {
            c.v = (c.v + incr) & 0x3f;
        }
    };
    src(&mut r.src_a, ab & 0xff);
    src(&mut r.src_b, ab >> 8);
    let (incr, cr, clear, c_to_cr) = (
        dst & 0x3ff,
        dst & 0x400 != 0,
        dst & 0x800 != 0,
        dst & 0x1000 != 0,
    );
    let d = &mut r.dst;
    if clear {
        *d = Counter::default();
    } else if c_to_cr {
        d.v = (d.v + incr) & 0x3ff;
        d.cr = d.v;
    } else if cr {
        d.cr = (d.cr + incr) & 0x3ff;
        d.v = d.cr;
    } else {
        d.v = (d.v + incr) & 0x3ff;
    }
    Ok(())
}

/// `SFPLOAD` (`MOD0_FMT_SRCB` is refused by [`super::unsupported`]).
pub fn sfpload(u: &mut VectorUnit, w: u32, mut ctx: Context) -> Result<(), String> {
    let o = operands(w, &ctx)?;
    if o.vd < 8 {
        for lane in 0..LANES {
            if !(u.enabled(lane) || o.mod0 == MOD0_FMT_INT32_ALL) {
                continue;
            }
            let (row, col) = cell(o.addr, lane);
            let d16 = || ctx.dst.read16(row, col);
            let d32 = || fm::unshuffle_fp32(ctx.dst.read32(row, col));
            let old = u.lreg[o.vd][lane];
            u.lreg[o.vd][lane] = match o.mod0 {
                MOD0_FMT_FP16 => fm::read_fp16(d16()),
                MOD0_FMT_BF16 => u32::from(fm::unshuffle_bf16(d16())) << 16,
                MOD0_FMT_FP32 | MOD0_FMT_INT32 | MOD0_FMT_INT32_ALL => d32(),
                MOD0_FMT_INT32_SM => fm::sign_mag_to_twos(d32()),
                MOD0_FMT_INT8 => fm::sign_mag8_to_32(d16()),
                MOD0_FMT_INT8_COMP => fm::sign_mag_to_twos(fm::sign_mag11_to_32(d16())),
                MOD0_FMT_LO16_ONLY => (old & 0xffff_0000) | u32::from(d16()),
                MOD0_FMT_HI16_ONLY => (u32::from(d16()) << 16) | (old & 0xffff),
                MOD0_FMT_INT16 => fm::sign_mag16_to_32(d16()),
                MOD0_FMT_UINT16 | MOD0_FMT_LO16 => u32::from(d16()),
                MOD0_FMT_HI16 => u32::from(d16()) << 16,
                _ => {
                    debug_assert_eq!(o.mod0, MOD0_FMT_ZERO);
                    0
                }
            };
        }
    }
    apply_partial_addr_mod(&mut ctx, o.addr_mod)
}

/// `SFPSTORE` (`MOD0_FMT_SRCB` is refused by [`super::unsupported`]).
pub fn sfpstore(u: &mut VectorUnit, w: u32, mut ctx: Context) -> Result<(), String> {
    let o = operands(w, &ctx)?;
    for lane in 0..LANES {
        if !(u.enabled(lane) || o.mod0 == MOD0_FMT_INT32_ALL) {
            continue;
        }
        let x = u.read(o.vd, lane);
        let (row, col) = cell(o.addr, lane);
        let dst = &mut *ctx.dst;
        match o.mod0 {
            MOD0_FMT_FP16 => dst.write16(row, col, fm::shuffle_fp16(fm::to_fp16(x))),
            MOD0_FMT_BF16 => dst.write16(row, col, fm::shuffle_bf16(fm::to_bf16(x))),
            // FP32: ttsim flushes a denormal to signed zero (as SFPSTORE to BF16 does); the
            // ISA page stores the bits as they are ([`crate::config::Numerics::IsaDoc`]).
            MOD0_FMT_FP32 if u.numerics == crate::config::Numerics::Ttsim => {
                dst.write32(row, col, fm::shuffle_fp32(fm::flush_denormal(x)))
            }
            MOD0_FMT_FP32 | MOD0_FMT_INT32 | MOD0_FMT_INT32_ALL => {
                dst.write32(row, col, fm::shuffle_fp32(x))
            }
            MOD0_FMT_INT32_SM => dst.write32(row, col, fm::shuffle_fp32(fm::to_sign_mag(x))),
            MOD0_FMT_INT8 => dst.write16(row, col, fm::shuffle_fp16(fm::sign_mag11_to_fp16(x))),
            MOD0_FMT_INT8_COMP => dst.write16(
                row,
                col,
                fm::shuffle_fp16(fm::sign_mag11_to_fp16(fm::to_sign_mag(x))),
            ),
            MOD0_FMT_LO16_ONLY | MOD0_FMT_UINT16 => dst.write16(row, col, x as u16),
            MOD0_FMT_HI16_ONLY => dst.write16(row, col, (x >> 16) as u16),
            MOD0_FMT_INT16 => dst.write16(row, col, (((x >> 31) << 15) | (x & 0x7fff)) as u16),
            MOD0_FMT_LO16 => dst.write32(row, col, x.rotate_left(16)),
            MOD0_FMT_HI16 => dst.write32(row, col, x),
            _ => {
                debug_assert_eq!(o.mod0, MOD0_FMT_ZERO);
                dst.write16(row, col, 0)
            }
        }
    }
    apply_partial_addr_mod(&mut ctx, o.addr_mod)
}
