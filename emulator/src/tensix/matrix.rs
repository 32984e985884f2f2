//! The Matrix Unit's data instructions (`MatrixUnit.md` and each instruction's page):
//! `ELWADD`, `ELWSUB`, `ELWMUL`, `MVMUL`, `ZEROACC`, `ZEROSRC`, `MOVA2D`, `MOVB2D`,
//! `MOVD2A`, `MOVD2B`, `CLEARDVALID`, following the functional models line by line; the
//! floating-point arithmetic is `datapath`'s (silicon's rules, as ttsim computes them) or,
//! under [`Numerics::IsaDoc`], the functional models' `float` arithmetic (`isa_doc`).
//!
//! [`footprint`] says, before an instruction issues, which `SrcA`/`SrcB` banks it waits for
//! and which 8-row blocks of `DstBits` it reads and writes (for the read-after-write stall
//! of `Dst.md`); [`execute`] then applies it.
//!
//! Not modelled (an error naming the mode, reported as a fault): integer math
//! (`ALU_ACC_CTRL_INT8_math_enabled`), stochastic rounding (`Fpu_srnd_en`), and what the
//! pages call undefined behaviour. `LaneConfig[..].BLOCK_DEST_MOV` is taken as all lanes
//! enabled.

use super::config::fields::{cfg as c, thd as t};
use super::config::BackendConfig;
use super::counters::{apply_addr_mod, Rwc};
use super::dst::{adj_row, Dst};
use super::float::{self as fl, Style};
use super::isa::{field, opcode};
use super::src_regs::{SrcRegs, A, B};

mod datapath;
mod isa_doc;
use datapath as dp;

/// Opcodes of this module.
#[allow(missing_docs)] // the mnemonics
pub(crate) mod op {
    pub const MOVD2A: u8 = 0x08;
    pub const MOVDBGA2D: u8 = 0x09;
    pub const MOVD2B: u8 = 0x0A;
    pub const ZEROACC: u8 = 0x10;
    pub const ZEROSRC: u8 = 0x11;
    pub const MOVA2D: u8 = 0x12;
    pub const MOVB2D: u8 = 0x13;
    pub const MVMUL: u8 = 0x26;
    pub const ELWMUL: u8 = 0x27;
    pub const ELWADD: u8 = 0x28;
    pub const ELWSUB: u8 = 0x30;
    pub const CLEARDVALID: u8 = 0x36;
}

/// What an instruction needs before it may issue and what it touches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    /// Waits until the Matrix Unit owns its current `SrcA` / `SrcB` bank.
    pub needs: [bool; 2],
    /// 8-row blocks of `DstBits` read (bit `i`: rows `8i..8i+8`).
    pub reads: u128,
    /// 8-row blocks of `DstBits` written.
    pub writes: u128,
}

/// The thread's view of everything an instruction reads.
pub(crate) struct Ctx<'a> {
    /// The issuing thread (`CurrentThread`).
    pub thread: usize,
    /// `Config` and `ThreadConfig`.
    pub cfg: &'a BackendConfig,
    /// The thread's RWCs.
    pub rwc: &'a mut Rwc,
    /// `SrcA`, `SrcB`.
    pub src: &'a mut SrcRegs,
    /// `Dst`.
    pub dst: &'a mut Dst,
    /// Whose arithmetic the floating-point instructions follow.
    pub numerics: Numerics,
}

pub(crate) use crate::config::Numerics;

/// The blocks of `n` rows of `Dst` from `row`, in the 32-bit view if `d32`.
pub(crate) fn blocks(row: u32, n: u32, d32: bool) -> u128 {
    let mut m = 0u128;
    for r in row..row + n {
        if d32 {
            let a = adj_row(r as usize);
            m |= 1 << (a / 8);
            m |= 1 << (((a + 8) & 0x3ff) / 8);
        } else {
            m |= 1 << ((r & 0x3ff) / 8);
        }
    }
    m
}

fn srca_fmt(cfg: &BackendConfig, th: usize) -> u32 {
    if cfg.get(th, c::SRCA_OVERRIDE) != 0 {
        cfg.get(th, c::SRCA_VAL)
    } else {
        cfg.get(th, c::SRCA_FMT)
    }
}

/// `SrcAStyle` and `UseDst32b` of the arithmetic instructions.
fn styles(cfg: &BackendConfig, th: usize) -> Result<(Style, bool), String> {
    if cfg.thd(th, t::FP16A_FORCE) != 0 {
        return Ok((Style::Fp16, false));
    }
    if cfg.get(th, c::INT8_MATH) != 0 {
        return Err("integer math (ALU_ACC_CTRL_INT8_math_enabled) is not modelled".into());
    }
    if cfg.get(th, c::FPU_SRND) != 0 {
        return Err("stochastic rounding (ALU_ROUNDING_MODE_Fpu_srnd_en) is not modelled".into());
    }
    Ok((
        Style::of(srca_fmt(cfg, th)),
        cfg.get(th, c::FP32_ENABLED) != 0,
    ))
}

/// `DstRow + DEST_TARGET_REG_CFG_MATH_Offset + RWCs.Dst + DEST_REGW_BASE_Base`.
fn dst_base(cfg: &BackendConfig, th: usize, rwc: &Rwc, row: u32) -> u32 {
    row.wrapping_add(cfg.thd(th, t::MATH_OFFSET))
        .wrapping_add(rwc.dst.v)
        .wrapping_add(cfg.get(th, c::DEST_REGW_BASE))
}

/// `UseDst32b` of the moves (`MOVD2A`, `MOVD2B`).
fn move_d32(cfg: &BackendConfig, th: usize) -> bool {
    cfg.thd(th, t::FP16A_FORCE) == 0
        && (cfg.get(th, c::FP32_ENABLED) != 0 || cfg.get(th, c::INT8_MATH) != 0)
}

/// Rows of `ZEROACC`: `(first DstBits row, count)` or one 32-bit row.
fn zeroacc_rows(w: u32, cfg: &BackendConfig, th: usize, rwc: &Rwc) -> Vec<(u32, u32, bool)> {
    let (imm, mode, d32) = (field(w, 0, 10), field(w, 19, 2), field(w, 21, 1) != 0);
    match mode {
        0 => {
            let row = dst_base(cfg, th, rwc, imm) & 0x3ff;
            let d32 = cfg.get(th, c::FP32_ENABLED) != 0 || cfg.get(th, c::INT8_MATH) != 0;
            vec![(row, 1, d32)]
        }
        1 => {
            let imm = imm & 0xff;
            match (d32, imm) {
                (true, 0..=31) => vec![(imm * 16, 16, true)],
                (false, 0..=63) => vec![(imm * 16, 16, false)],
                _ => vec![],
            }
        }
        2 => vec![(if imm & 1 != 0 { 512 } else { 0 }, 512, false)],
        _ => vec![(0, 1024, false)],
    }
}

/// See [`Footprint`]. Errors name a mode the model leaves out.
pub(crate) fn footprint(w: u32, x: &Ctx) -> Result<Footprint, String> {
    let (cfg, th) = (x.cfg, x.thread);
    let mut f = Footprint::default();
    match opcode(w) {
        op::ELWADD | op::ELWSUB | op::ELWMUL | op::MVMUL => {
            let (_, d32) = styles(cfg, th)?;
            let o = opcode(w);
            let n = if o == op::MVMUL && field(w, 19, 1) != 0 {
                7
            } else {
                8
            };
            let row = dst_base(cfg, th, x.rwc, field(w, 0, 10))
                & if o == op::MVMUL { 0x400 - n } else { 0x3f8 };
            let m = blocks(row, n, d32);
            f.needs = [true, true];
            f.writes = m;
            let accumulates = matches!(o, op::ELWMUL | op::MVMUL) || field(w, 21, 1) != 0;
            if accumulates {
                f.reads = m;
            }
        }
        op::MOVA2D | op::MOVB2D | op::MOVDBGA2D => {
            let a = opcode(w) != op::MOVB2D;
            // MOVDBGA2D is MOVA2D without the automatic wait for SrcA (MOVDBGA2D.md).
            f.needs[if a { A } else { B }] = opcode(w) != op::MOVDBGA2D;
            let n = if a {
                if field(w, 13, 1) != 0 {
                    8
                } else {
                    1
                }
            } else if field(w, 13, 1) != 0 {
                8
            } else if field(w, 14, 1) != 0 {
                4
            } else {
                1
            };
            let row = dst_base(cfg, th, x.rwc, field(w, 0, 10)) & (0x400 - n.max(1)) & 0x3ff;
            let d32 = srca_fmt(cfg, th) == fl::fmt::TF32 || field(w, 23, 1) != 0;
            f.writes = blocks(row & !(n - 1), n, d32);
        }
        op::MOVD2A | op::MOVD2B => {
            let n = if field(w, 13, 1) != 0 { 4 } else { 1 };
            let row = dst_base(cfg, th, x.rwc, field(w, 0, 10)) & (0x400 - n);
            f.reads = blocks(row, n, move_d32(cfg, th));
        }
        op::ZEROACC => {
            for (row, n, d32) in zeroacc_rows(w, cfg, th, x.rwc) {
                f.writes |= blocks(row, n, d32);
            }
        }
        _ => {}
    }
    Ok(f)
}

/// Applies `w` (whose [`footprint`] allowed it to issue).
pub(crate) fn execute(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let thd = &x.cfg.thread[th];
    let addr_mod = field(w, 15, 2);
    match opcode(w) {
        op::ELWADD | op::ELWSUB | op::ELWMUL => {
            match x.numerics {
                Numerics::Ttsim => eltwise(w, x)?,
                Numerics::IsaDoc => isa_doc::eltwise(w, x)?,
            }
            flips(w, x);
            apply_addr_mod(x.rwc, thd, addr_mod, true);
        }
        op::MVMUL => {
            match x.numerics {
                Numerics::Ttsim => mvmul(w, x)?,
                Numerics::IsaDoc => isa_doc::mvmul(w, x)?,
            }
            flips(w, x);
            apply_addr_mod(x.rwc, thd, addr_mod, true);
        }
        op::ZEROACC => {
            for (row, n, d32) in zeroacc_rows(w, x.cfg, th, x.rwc) {
                for r in row..row + n {
                    if d32 {
                        let a = adj_row(r as usize);
                        x.dst.zero_rows(a..a + 1);
                        x.dst.zero_rows(a + 8..a + 9);
                    } else {
                        x.dst.zero_rows(r as usize..r as usize + 1);
                    }
                }
            }
            if field(w, 19, 2) < 2 {
                apply_addr_mod(x.rwc, thd, addr_mod, true);
            }
        }
        op::ZEROSRC => zerosrc(w, x.src),
        op::MOVA2D | op::MOVB2D | op::MOVDBGA2D => {
            mov_to_dst(w, x);
            apply_addr_mod(x.rwc, thd, addr_mod, true);
        }
        op::MOVD2A | op::MOVD2B => {
            mov_from_dst(w, x)?;
            apply_addr_mod(x.rwc, thd, addr_mod, true);
        }
        op::CLEARDVALID => x.src.cleardvalid(w),
        o => {
            return Err(format!(
                "opcode {o:#04x} is not a Matrix Unit data instruction"
            ))
        }
    }
    Ok(())
}

/// `FlipSrcA` (bit 22) and `FlipSrcB` (bit 23).
fn flips(w: u32, x: &mut Ctx) {
    let th = x.thread;
    if field(w, 22, 1) != 0 {
        x.src
            .mu_flip(A, x.cfg.thd(th, t::CLR_DVALID_SRCA_DISABLE) != 0);
    }
    if field(w, 23, 1) != 0 {
        x.src
            .mu_flip(B, x.cfg.thd(th, t::CLR_DVALID_SRCB_DISABLE) != 0);
    }
}

fn phase(x: &Ctx) -> u32 {
    (x.rwc.fidelity + x.cfg.thd(x.thread, t::FIDELITY_BASE)) & 3
}

/// A `SrcA`/`SrcB` datum as the data path reads it in format `style`: Sign, Exp, Man
/// (bit 18, bits 10-17, bits 0-9), BF16 without the three low mantissa bits, FP16 with a
/// 5-bit exponent; `zero` if its exponent is 0 and `flush` (for `SrcA` always).
fn operand(v: u32, style: Style, flush: bool) -> dp::Operand {
    let (sign, mut man, mut exp) = (v & 0x40000, (v >> 8) & 0x3ff, v & 0xff);
    match style {
        Style::Bf16 => man &= !7,
        Style::Fp16 => exp &= 0x1f,
        Style::Tf32 => {}
    }
    dp::Operand {
        bits: sign | (exp << 10) | man,
        zero: flush && exp == 0,
    }
}

/// `Dst[row][col]` as the data path's accumulator reads it (FP32-layout bits; FP16 with its
/// 5-bit exponent in bits 23-27), and the inverse.
fn read_acc(dst: &Dst, row: usize, col: usize, style: Style, d32: bool) -> u32 {
    if d32 {
        fl::read_dst_fp32(dst.read32(row, col))
    } else if style == Style::Fp16 {
        let h = fl::read_dst_fp16(dst.read16(row, col)) as u32;
        ((h & 0x8000) << 16) | ((h & 0x7fff) << 13)
    } else {
        (fl::read_dst_bf16(dst.read16(row, col)) as u32) << 16
    }
}

fn write_acc(dst: &mut Dst, row: usize, col: usize, r: u32, style: Style, d32: bool) {
    if d32 {
        dst.write32(row, col, fl::write_dst_fp32(r));
    } else if style == Style::Fp16 {
        let h = ((r >> 16) & 0x8000) | ((r & 0x0fff_e000) >> 13);
        dst.write16(row, col, fl::write_dst_fp16(h as u16));
    } else {
        dst.write16(row, col, fl::write_dst_bf16((r >> 16) as u16));
    }
}

/// The formats the arithmetic reads `SrcA` and `SrcB` in, `UseDst32b`, the data path mode.
fn path(x: &Ctx) -> Result<(Style, Style, bool, dp::Mode), String> {
    let th = x.thread;
    let (style, d32) = styles(x.cfg, th)?;
    let style_b = if style == Style::Fp16 {
        style
    } else {
        Style::of(x.cfg.get(th, c::SRCB_FMT))
    };
    let mode = dp::Mode {
        fp32: d32,
        exp8: style != Style::Fp16,
    };
    Ok((style, style_b, d32, mode))
}

/// Where an `ELWADD`/`ELWSUB`/`ELWMUL` reads and writes, decoded once for both numerics
/// models: `SrcB` column 0 broadcast (bit 19), `SrcB` row broadcast (bit 20), the first
/// `SrcA`/`SrcB` rows of the 8 it reads and its first `Dst` row.
pub(super) struct Rows {
    pub(super) bcol0: bool,
    pub(super) brow: bool,
    pub(super) a_row: usize,
    pub(super) b_row: usize,
    pub(super) dst_row: usize,
}

pub(super) fn eltwise_rows(w: u32, x: &Ctx) -> Rows {
    let (bcol0, brow) = (field(w, 19, 1) != 0, field(w, 20, 1) != 0);
    Rows {
        bcol0,
        brow,
        a_row: (x.rwc.src_a.v & 0x38) as usize,
        b_row: (x.rwc.src_b.v & if brow { 0x3f } else { 0x38 }) as usize,
        dst_row: (dst_base(x.cfg, x.thread, x.rwc, field(w, 0, 10)) & 0x3f8) as usize,
    }
}

/// `ELWADD`, `ELWSUB`, `ELWMUL`.
fn eltwise(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let (style, style_b, d32, mode) = path(x)?;
    let o = opcode(w);
    let Rows {
        bcol0,
        brow,
        a_row,
        b_row,
        dst_row,
    } = eltwise_rows(w, x);
    let ph = phase(x);
    let add_dst = field(w, 21, 1) != 0;
    if o == op::ELWMUL && add_dst {
        return Err(
            "ELWMUL with AddDst (bit 21) is non-contractual: ELWMUL always accumulates".into(),
        );
    }
    if o != op::ELWMUL && ph != 0 {
        return Err(format!(
            "ELWADD/ELWSUB at fidelity phase {ph} is non-contractual (Numerics::IsaDoc models it)"
        ));
    }
    let flush_b = x.cfg.get(th, c::ZERO_FLAG_DISABLED_SRC) == 0;
    for i in 0..8 {
        for j in 0..16 {
            let a = operand(x.src.mu(A).rows[(a_row + i) & 63][j], style, true);
            let bi = (b_row + if brow { 0 } else { i }) & 63;
            let mut bv = x.src.mu(B).rows[bi][if bcol0 { 0 } else { j }];
            if o == op::ELWSUB {
                bv ^= 0x40000;
            }
            let b = operand(bv, style_b, flush_b);
            let row = dst_row + i;
            let (term, old) = if o == op::ELWMUL {
                let old = read_acc(x.dst, row, j, style, d32);
                (dp::mul_term(a, b, mode, ph), old)
            } else {
                let old = if add_dst {
                    read_acc(x.dst, row, j, style, d32)
                } else {
                    0
                };
                (dp::add_term(a, b, mode), old)
            };
            let r = dp::accumulate([term, dp::Term::default()], old, mode);
            write_acc(x.dst, row, j, r, style, d32);
        }
    }
    Ok(())
}

/// `MVMUL`: `Dst += SrcB @ SrcA`.
fn mvmul(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let (style, style_b, d32, mode) = path(x)?;
    if x.cfg.get(th, c::ZERO_FLAG_DISABLED_SRC) != 0 {
        return Err(
            "MVMUL keeping SrcB denormals (ALU_ACC_CTRL_Zero_Flag_disabled_src) is not modelled"
                .into(),
        );
    }
    let brow = field(w, 19, 1) != 0;
    let n = if brow { 7 } else { 8 };
    let a_row = (x.rwc.src_a.v & 0x38) as usize;
    let b_row = (x.rwc.src_b.v & if brow { 0x3f } else { 0x38 }) as usize;
    let dst_row = (dst_base(x.cfg, th, x.rwc, field(w, 0, 10)) & (0x400 - n as u32)) as usize;
    let ph = phase(x);
    // SrcA's 16x16 matrix, transposed: `at[j][k]` is row `k`, column `j`.
    let zero = operand(0, style, true);
    let mut at = [[zero; 16]; 16];
    for k in 0..16 {
        let src = &x.src.mu(A).rows[(a_row + k) & 63];
        for (j, col) in at.iter_mut().enumerate() {
            col[k] = operand(src[j], style, true);
        }
    }
    let step = if brow { 2 } else { 1 };
    for i in (0..n).step_by(step) {
        let src = &x.src.mu(B).rows[(b_row + if brow { 0 } else { i }) & 63];
        let b: [dp::Operand; 16] = std::array::from_fn(|k| operand(src[k], style_b, true));
        for (j, a) in at.iter().enumerate() {
            let row = dst_row + i;
            let old = read_acc(x.dst, row, j, style, d32);
            let r = dp::accumulate(dp::dot_terms(a, &b, mode, ph), old, mode);
            write_acc(x.dst, row, j, r, style, d32);
        }
    }
    Ok(())
}

/// `ZEROSRC`.
fn zerosrc(w: u32, s: &mut SrcRegs) {
    let (both, single_mu, neg_inf) = (w & 4 != 0, w & 8 != 0, w & 16 != 0);
    for which in [A, B] {
        if w & (1 << which) == 0 {
            continue;
        }
        let banks: Vec<usize> = if both {
            vec![0, 1]
        } else if single_mu {
            vec![s.mu_bank[which]]
        } else {
            vec![s.unp_bank[which]]
        };
        let v = if which == A && neg_inf { 0x7ffff } else { 0 };
        for b in banks {
            s.banks[which][b].rows = [[v; 16]; 64];
        }
    }
}

/// `RemoveLowMantissa`: Src BF16 to Dst BF16.
fn remove_low_mantissa(x: u32) -> u16 {
    (((x & (1 << 18)) >> 3) | ((x & (0x7f << 11)) >> 3) | (x & 0xff)) as u16
}

/// `RemoveHighExponent`: Src FP16 to Dst FP16.
fn remove_high_exponent(x: u32) -> u16 {
    (((x & (1 << 18)) >> 3) | ((x & (0x3ff << 8)) >> 3) | (x & 0x1f)) as u16
}

/// `MOVA2D`, `MOVB2D`, `MOVDBGA2D` (`MOVA2D`'s functional model).
fn mov_to_dst(w: u32, x: &mut Ctx) {
    let th = x.thread;
    let a = opcode(w) != op::MOVB2D;
    let fmt = srca_fmt(x.cfg, th);
    let use8 =
        x.cfg.thd(th, t::FP16A_FORCE) == 0 && matches!(fmt & 15, 0 | 4 | 5 | 6 | 7 | 15 | 8 | 9);
    let flush = x.cfg.get(th, c::ZERO_FLAG_DISABLED_SRC) == 0;
    let lo = field(w, 23, 1) != 0;
    let mut dst_row = dst_base(x.cfg, th, x.rwc, field(w, 0, 10));
    let which = if a { A } else { B };
    let mut src_row = field(w, 17, 6) + if a { x.rwc.src_a.v } else { x.rwc.src_b.v };
    let (bcol0, bcast8) = (!a && field(w, 12, 1) != 0, !a && field(w, 13, 1) != 0);
    let n = if a {
        if field(w, 13, 1) != 0 {
            dst_row &= 0x3f8;
            src_row &= 0x38;
            8
        } else {
            dst_row &= 0x3ff;
            src_row &= 0x3f;
            1
        }
    } else if bcast8 {
        dst_row &= 0x3f8;
        src_row &= 0x3f;
        8
    } else if field(w, 14, 1) != 0 {
        dst_row &= 0x3fc;
        src_row &= 0x3c;
        4
    } else {
        dst_row &= 0x3ff;
        src_row &= 0x3f;
        1
    };
    for _ in 0..n {
        for col in 0..16 {
            let mut v = x.src.mu(which).rows[src_row as usize & 63][if bcol0 { 0 } else { col }];
            if flush && v & 0xff == 0 {
                v = 0;
            }
            let v16 = if use8 {
                remove_low_mantissa(v)
            } else {
                remove_high_exponent(v)
            };
            let r = dst_row as usize;
            if fmt == fl::fmt::TF32 {
                let mut low = (((v >> 8) & 7) << 13) as u16;
                if lo {
                    low |= v16;
                }
                x.dst.write32(r, col, ((v16 as u32) << 16) | low as u32);
            } else if lo {
                let old = x.dst.read32(r, col);
                x.dst.write32(r, col, (old & 0xffff_0000) | v16 as u32);
            } else {
                x.dst.write16(r, col, v16);
            }
        }
        dst_row += 1;
        if !bcast8 {
            src_row += 1;
        }
    }
}

/// `MOVD2A`, `MOVD2B`.
fn mov_from_dst(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let a = opcode(w) == op::MOVD2A;
    let which = if a { A } else { B };
    let d32 = move_d32(x.cfg, th);
    let style = if x.cfg.thd(th, t::FP16A_FORCE) != 0 {
        Style::Fp16
    } else {
        Style::of(srca_fmt(x.cfg, th))
    };
    let lo = field(w, 23, 1) != 0;
    let mut dst_row = dst_base(x.cfg, th, x.rwc, field(w, 0, 10));
    let mut src_row = field(w, 17, 6) + if a { x.rwc.src_a.v } else { x.rwc.src_b.v };
    let n = if field(w, 13, 1) != 0 {
        dst_row &= 0x3fc;
        src_row &= 0x3c;
        4
    } else {
        dst_row &= 0x3ff;
        src_row &= 0x3f;
        1
    };
    if !d32 && (lo || style == Style::Tf32) {
        return Err(format!(
            "{} of 16-bit Dst data {} is undefined behaviour",
            if a { "MOVD2A" } else { "MOVD2B" },
            if lo { "with UseDst32bLo" } else { "as TF32" }
        ));
    }
    let shuffle_bf16 = |x: u32| ((x & 0xff00) << 3) | (x & 0xff);
    let shuffle_fp16 = |x: u32| ((x & 0xffe0) << 3) | (x & 0x1f);
    // ShuffleTF32: the page masks Sign,HiMan with 0x3fc000, which cannot be meant (it is
    // 0x7f800 << 3, and the Exp and LoMan masks beside it are right): 0x7f800 keeps bits
    // 11-18 of the shifted Dst word where its own comment puts Sign and HiMan.
    let shuffle_tf32 = |x: u32| (x & 0x7f800) | ((x & 7) << 8) | ((x & 0x7f8) >> 3);
    for _ in 0..n {
        for col in 0..16 {
            let r = dst_row as usize;
            let v = if d32 {
                let mut d = x.dst.read32(r, col);
                if lo {
                    d = (d << 16) | (d & 0xffff);
                }
                match style {
                    Style::Bf16 => shuffle_bf16(d >> 16),
                    Style::Fp16 => shuffle_fp16(d >> 16),
                    Style::Tf32 if !lo => shuffle_tf32(d >> 13),
                    Style::Tf32 => d & 0x1fff,
                }
            } else {
                let d = x.dst.read16(r, col) as u32;
                match style {
                    Style::Fp16 => shuffle_fp16(d),
                    _ => shuffle_bf16(d),
                }
            };
            x.src.mu_mut(which).rows[src_row as usize & 63][col] = v;
        }
        dst_row += 1;
        src_row += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod agreement;
