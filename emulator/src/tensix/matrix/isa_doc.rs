//! The Matrix Unit's arithmetic as the ISA documentation's functional models write it
//! ([`super::Numerics::IsaDoc`]): every `float` operation of the pseudo-code rounded to
//! nearest even by [`super::fl::round_fp32`], the result rounded to the `Dst` format to
//! nearest even.

use super::*;

/// Accumulates `r` (already a `float`) onto `Dst` at `(row, col)` if `acc`, and writes it
/// in the format `style`/`d32` select.
fn write_result(dst: &mut Dst, row: usize, col: usize, r: f64, acc: bool, style: Style, d32: bool) {
    if d32 {
        let r = if acc {
            fl::f(r + fl::value(fl::read_dst_fp32(dst.read32(row, col))))
        } else {
            r
        };
        dst.write32(row, col, fl::write_dst_fp32(fl::round_fp32(r)));
    } else if style == Style::Fp16 {
        let r = if acc {
            fl::f(r + fl::fp16_value(fl::read_dst_fp16(dst.read16(row, col))))
        } else {
            r
        };
        dst.write16(row, col, fl::write_dst_fp16(fl::round_fp16(r)));
    } else {
        let r = if acc {
            fl::f(r + fl::bf16_value(fl::read_dst_bf16(dst.read16(row, col))))
        } else {
            r
        };
        dst.write16(row, col, fl::write_dst_bf16(fl::round_bf16(r)));
    }
}

/// `ELWADD`, `ELWSUB`, `ELWMUL`.
pub(super) fn eltwise(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let (style, d32) = styles(x.cfg, th)?;
    let o = opcode(w);
    let Rows {
        bcol0,
        brow,
        a_row,
        b_row,
        dst_row,
    } = eltwise_rows(w, x);
    let ph = phase(x);
    let acc = o == op::ELWMUL || field(w, 21, 1) != 0;
    for i in 0..8 {
        for j in 0..16 {
            let a = fl::src_bits(x.src.mu(A).rows[(a_row + i) & 63][j], style);
            let bi = (b_row + if brow { 0 } else { i }) & 63;
            let b = fl::src_bits(x.src.mu(B).rows[bi][if bcol0 { 0 } else { j }], style);
            let r = if o == op::ELWMUL {
                fl::f(fl::src_a_fidelity(a, ph) * fl::src_b_fidelity(b, ph))
            } else {
                let (av, bv) = (fl::value(a), fl::value(b));
                let mut r = fl::f(if o == op::ELWADD { av + bv } else { av - bv });
                if ph & 1 != 0 {
                    r = fl::f(r / 32.0);
                }
                if ph & 2 != 0 {
                    r = fl::f(r / 128.0);
                }
                r
            };
            write_result(x.dst, dst_row + i, j, r, acc, style, d32);
        }
    }
    Ok(())
}

/// `MVMUL`: `Dst += SrcB @ SrcA`.
pub(super) fn mvmul(w: u32, x: &mut Ctx) -> Result<(), String> {
    let th = x.thread;
    let (style, d32) = styles(x.cfg, th)?;
    let brow = field(w, 19, 1) != 0;
    let n = if brow { 7 } else { 8 };
    let a_row = (x.rwc.src_a.v & 0x38) as usize;
    let b_row = (x.rwc.src_b.v & if brow { 0x3f } else { 0x38 }) as usize;
    let dst_row = (dst_base(x.cfg, th, x.rwc, field(w, 0, 10)) & (0x400 - n as u32)) as usize;
    let ph = phase(x);
    let mut bm = [[0f64; 16]; 8];
    for (i, row) in bm.iter_mut().enumerate().take(n) {
        let src = &x.src.mu(B).rows[(b_row + if brow { 0 } else { i }) & 63];
        for (k, v) in row.iter_mut().enumerate() {
            *v = fl::src_b_fidelity(fl::src_bits(src[k], style), ph);
        }
    }
    // SrcA's 16x16 matrix, transposed: `at[j][k]` is row `k`, column `j`.
    let mut at = [[0f64; 16]; 16];
    for k in 0..16 {
        let src = &x.src.mu(A).rows[(a_row + k) & 63];
        for (j, col) in at.iter_mut().enumerate() {
            col[k] = fl::src_a_fidelity(fl::src_bits(src[j], style), ph);
        }
    }
    let step = if brow { 2 } else { 1 };
    for (i, b) in bm.iter().enumerate().take(n).step_by(step) {
        for (j, a) in at.iter().enumerate() {
            let acc = (0..16).fold(0.0, |acc, k| fl::f(acc + fl::f(b[k] * a[k])));
            write_result(x.dst, dst_row + i, j, acc, true, style, d32);
        }
    }
    Ok(())
}
