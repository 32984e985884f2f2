//! The unpackers' regular `UNPACR` (`UNPACR_Regular.md`): datums from L1 into `SrcA`
//! (unpacker 0), `SrcB` (unpacker 1) or `Dst` (unpacker 0 with `Unpack_If_Sel`), with the
//! page's format conversions, output addressing and counter updates.
//!
//! Modelled: uncompressed input without row search, in `MultiContextMode` (contexts 0-3,
//! no context counter, no per-context formats) or not, input formats
//! FP32, TF32 (to `Dst`), BF16 (Float16_b), FP16 and INT16, the conversions FP32 to TF32 /
//! BF16 (and FP32 / TF32 / INT32 kept as they are when unpacking to `Dst`),
//! `AllDatumsAreZero`, column shift, `SRCA_SET_SetOvrdWithAddr`, `FlipSrc` and
//! `Unpack_Src_Reg_Set_Upd`. Everything else is an error naming it (a fault): compressed
//! input, BFP/FP8/INT8 formats, `FP32ToFP16` (the page does not define it), tileize,
//! transpose (haloize), upsampling, the context counter, row search, and what the page
//! calls undefined behaviour. `Last` (bit 0) has no effect here.

use super::config::fields::{cfg as c, thd as t};
use super::config::BackendConfig;
use super::counters::AdcSet;
use super::dst::Dst;
use super::float::{self as fl, fmt};
use super::isa::field;
use super::matrix::blocks;
use super::src_regs::SrcRegs;
use crate::bus::L1;

/// What one `UNPACR` did, for the timing model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Unpacked {
    /// Unpacker 0 or 1.
    pub which: usize,
    /// Bytes read from L1.
    pub bytes: u32,
    /// `Throttle_mode`: 0 (x1, 16 bytes a cycle), 1 (x2) or 2 (x4).
    pub throttle: u32,
    /// The bank `FlipSrc` hands to the Matrix Unit once the unpack completes.
    pub flip: Option<usize>,
    /// `Dst` blocks written (unpacking to `Dst`).
    pub dst_writes: u128,
}

/// Why a word cannot be executed whatever the configuration (checked at the push).
pub(crate) fn unsupported(w: u32) -> Option<String> {
    if field(w, 1, 1) != 0 || field(w, 13, 1) != 0 {
        return Some(
            "UNPACR's context-counter and cache-flush modes are not modelled (only the regular mode)"
                .into(),
        );
    }
    if field(w, 7, 1) != 0 && field(w, 3, 1) != 0 {
        return Some(
            "UNPACR UseContextCounter (a per-thread context counter) is not modelled".into(),
        );
    }
    if field(w, 7, 1) != 0 && field(w, 8, 2) == 3 {
        return Some("UNPACR MultiContextMode with ContextADC 3 is undefined behaviour".into());
    }
    if field(w, 2, 1) != 0 {
        return Some("UNPACR RowSearch is not modelled".into());
    }
    None
}

/// `FormatConversion` for the modelled formats.
fn convert(inf: u32, outf: u32, bits: u32, to_dst: bool) -> Result<u32, String> {
    let ub = || {
        Err(format!(
            "unpacking {} as {} to {} is undefined behaviour",
            fmt::name(inf),
            fmt::name(outf),
            if to_dst { "Dst" } else { "SrcA/SrcB" }
        ))
    };
    let bf16 = |x: u32| {
        Ok(if to_dst {
            fl::write_dst_bf16(x as u16) as u32
        } else {
            fl::write_src_bf16(x as u16)
        })
    };
    match (inf, outf) {
        (fmt::FP32, fmt::FP32) if to_dst => Ok(fl::write_dst_fp32(bits)),
        (fmt::FP32, fmt::TF32) if to_dst => Ok(fl::write_dst_fp32(bits)),
        (fmt::FP32, fmt::TF32) => Ok(fl::write_src_tf32(bits >> 13)),
        (fmt::FP32, fmt::BF16) => {
            let b = if bits & 0x7f80_0000 == 0 {
                bits & 0x8000_0000
            } else {
                bits
            };
            bf16(b >> 16)
        }
        (fmt::FP32, fmt::FP16) => Err(
            "unpacking FP32 as FP16 is not modelled (UNPACR_Regular.md does not define FP32ToFP16)"
                .into(),
        ),
        (fmt::FP32, fmt::FP32) => ub(),
        (fmt::FP32, _) => ub(),
        (i, o) if i != o => ub(),
        (fmt::BF16, _) => bf16(bits),
        (fmt::FP16, _) => Ok(if to_dst {
            fl::write_dst_fp16(bits as u16) as u32
        } else {
            fl::write_src_fp16(bits as u16)
        }),
        (fmt::TF32 | fmt::INT32, _) if to_dst => Ok(fl::write_dst_fp32(bits)),
        (fmt::TF32 | fmt::INT32, _) => ub(),
        (fmt::INT16, _) if to_dst => Ok(bits),
        (fmt::INT16, _) => Ok(((bits & 0xff00) << 3) | (bits & 0xff)),
        (i, _) => Err(format!("unpacking {} is not modelled", fmt::name(i))),
    }
}

/// Executes the regular `UNPACR` `w` of thread `th` (its unpacker's current bank is free).
pub(crate) fn execute(
    w: u32,
    th: usize,
    cfg: &BackendConfig,
    adcs: &mut [AdcSet; 3],
    src: &mut SrcRegs,
    dst: &mut Dst,
    l1: &L1,
) -> Result<Unpacked, String> {
    let which = field(w, 23, 1) as usize;
    let sec = c::THCON_SEC[which];
    let g = |f: super::config::Field| cfg.get(th, f.at(sec));
    let word = |k: usize| cfg.cfg[cfg.state_id(th)][sec + k];
    let td: Vec<u32> = (0..4).map(|k| word(c::TD_WORDS + k)).collect();
    let in_fmt = td[0] & 0xf;
    // MultiContextMode (bit 7; tt-metal's OvrdThreadId, set in every UNPACR LLK emits): the
    // context's registers replace the tile descriptor's uncompressed flag and (unpacker 0)
    // X dimension, the base and offset addresses, Unpack_If_Sel, the column shift, and the
    // output address (Dest_cntx); ContextADC picks the ADCs.
    let multi = field(w, 7, 1) != 0;
    let (ctx, adc) = if multi {
        let ctx = (field(w, 10, 3) + cfg.thd(th, t::CFG_CONTEXT_OFFSET[which])) & 7;
        if which == 1 && ctx >= 2 {
            return Err(format!(
                "UNPACR context {ctx} on unpacker 1 is undefined behaviour"
            ));
        }
        if ctx >= 4 {
            return Err(format!("UNPACR context {ctx} (4-7) is not modelled"));
        }
        if g(c::OVRD_DATA_FORMAT) != 0 {
            return Err("per-context data formats (Ovrd_data_format) are not modelled".into());
        }
        (ctx as usize, field(w, 8, 2) as usize)
    } else {
        (0, th)
    };
    let uncompressed = if multi {
        (word(c::DISABLE_ZERO_COMPRESS_CNTX) >> ctx) & 1
    } else {
        (td[0] >> 4) & 1
    };
    if uncompressed == 0 {
        return Err(if multi {
            format!("compressed input (Disable_zero_compress_cntx{ctx} = 0) is not modelled")
        } else {
            "compressed input (TileDescriptor IsUncompressed = 0) is not modelled".into()
        });
    }
    let half = |k: usize, i: usize| (word(k + i / 2) >> (16 * (i % 2))) & 0xffff;
    let x_dim = if multi && which == 0 {
        half(c::TILE_X_DIM_CNTX, ctx)
    } else {
        td[0] >> 16
    };
    let y_dim = td[1] & 0xff;
    let z_dim = ((td[1] >> 16) & 0xff).max(1);
    let digest = (td[3] >> 24) & 0xff;
    let out_fmt = g(c::OUT_DATA_FORMAT);
    let size = match in_fmt {
        fmt::FP32 | fmt::TF32 | fmt::INT32 => 4,
        fmt::FP16 | fmt::BF16 | fmt::INT16 => 2,
        f => return Err(format!("unpacking {} is not modelled", fmt::name(f))),
    };
    if g(c::TILEIZE) != 0 {
        return Err("tileize mode (discontiguous input rows) is not modelled".into());
    }
    if g(c::UPSAMPLE_RATE) != 0 {
        return Err("upsampling (Upsample_rate) is not modelled".into());
    }
    let throttle = g(c::THROTTLE_MODE);
    if throttle == 3 {
        return Err("Throttle_mode 3 has no documented speed".into());
    }
    let to_dst = which == 0
        && if multi {
            (word(c::UNPACK_IF_SEL_CNTX) >> (4 + ctx)) & 1 != 0
        } else {
            g(c::UNPACK_IF_SEL) != 0
        };
    if which == 0 && g(c::HALOIZE) != 0 {
        return Err("transpose (Haloize_mode) is not modelled".into());
    }
    let (base, offset) = if ctx != 0 {
        (word(c::BASE_CNTX + ctx), word(c::OFFSET_CNTX + ctx))
    } else {
        (g(c::BASE_ADDRESS), g(c::OFFSET_ADDRESS))
    };
    let in_addr = (base.wrapping_add(offset & 0xffff).wrapping_add(1 + digest) as u64) * 16;
    let ch = adcs[adc].sets[which].channel;
    let [x0, y0, z0, w0] = ch[0].xyzw.map(|k| k.v as u64);
    let x_end = ch[1].xyzw[0].v as u64 + 1;
    let first = ((w0 * z_dim as u64 + z0) * y_dim as u64 + y0) * x_dim as u64 + x0;
    let n = x_end.checked_sub(x0).ok_or_else(|| {
        format!("the datum count is negative (ADC X0 {x0} past X1 + 1 = {x_end})")
    })?;
    let limit = g(c::UNPACK_LIMIT) as u64 * 16;
    let fifo = g(c::UNPACK_FIFO_SIZE) as u64 * 16;
    let wrap = |a: u64| if a > limit { a.wrapping_sub(fifo) } else { a };
    let mut addr = wrap(in_addr + first * size);
    let [_, y1, z1, w1] = ch[1].xyzw.map(|k| k.v);
    let mut out = cfg
        .get(th, c::UNP_BASE1[which])
        .wrapping_add(y1.wrapping_mul(cfg.get(th, c::UNP_YSTRIDE1[which])))
        .wrapping_add(z1.wrapping_mul(cfg.get(th, c::UNP_ZSTRIDE1[which])))
        .wrapping_add(w1.wrapping_mul(cfg.get(th, c::UNP_WSTRIDE1[which])));
    let d32 = matches!(out_fmt, fmt::FP32 | fmt::TF32 | fmt::INT32);
    if d32 {
        if out & 3 != 0 {
            return Err(format!(
                "output address {out:#x} is not 4-byte aligned for {}",
                fmt::name(out_fmt)
            ));
        }
        out >>= 2;
    } else if matches!(out_fmt, fmt::FP16 | fmt::BF16 | fmt::INT16) {
        if out & 1 != 0 {
            return Err(format!(
                "output address {out:#x} is odd for {}",
                fmt::name(out_fmt)
            ));
        }
        out >>= 1;
    }
    if multi && which == 0 {
        let ctx_out = half(c::DEST_CNTX, ctx);
        if to_dst || cfg.get(th, c::UNP_ADD_DEST_ADDR_CNTR[0]) != 0 {
            out = out.wrapping_add(ctx_out);
        } else {
            out = ctx_out;
        }
    }
    let col_shift = if which == 1 {
        0
    } else {
        // Shift_amount_cntx<k>: four bits each from SHIFT_AMOUNT_CNTX0.
        let f = c::SHIFT_AMOUNT_CNTX0;
        (word(f.0) >> (f.1 + 4 * ctx as u32)) & 15
    };
    if to_dst && col_shift != 0 {
        return Err("a column shift while unpacking to Dst is undefined behaviour".into());
    }
    let ovrd = cfg.thd(th, t::SRCA_SET_OVRD_WITH_ADDR) != 0;
    let zero = field(w, 4, 1) != 0;
    let bank = src.unp_bank[which];
    let mut dst_writes = 0u128;
    for i in 0..n {
        if addr + size > l1.size() as u64 {
            return Err(format!(
                "datum {i} at L1 address {addr:#x} is outside L1 ({:#x} bytes)",
                l1.size()
            ));
        }
        let bits = match size {
            4 => l1.load::<4>(addr as u32 & !3),
            _ => l1.load::<2>(addr as u32 & !1),
        };
        addr += size;
        if (i + 1) % 16 == 0 {
            addr = wrap(addr);
        }
        let datum = if zero {
            0
        } else {
            convert(in_fmt, out_fmt, bits, to_dst)?
        };
        let (mut row, mut col) = (out / 16, out & 15);
        out = out.wrapping_add(1);
        if which == 1 {
            row = (row + src.unp_row[1][th]) & 0x3f;
            src.banks[1][bank].rows[row as usize][col as usize] = datum;
        } else if !to_dst {
            if row < 4 || col < col_shift {
                continue;
            }
            row -= 4;
            col -= col_shift;
            if ovrd {
                if row >= 64 {
                    return Err(format!("SrcA row {row} (SetOvrdWithAddr) is past 63"));
                }
            } else {
                if row >= 16 {
                    return Err(format!(
                        "SrcA row {row} is past 15 without SRCA_SET_SetOvrdWithAddr: undefined behaviour"
                    ));
                }
                row += src.unp_row[0][th];
            }
            src.banks[0][bank].rows[row as usize & 63][col as usize] = datum;
        } else {
            row = row.wrapping_sub(4) & if ovrd { 15 } else { 0x3ff };
            if d32 {
                dst.write32(row as usize, col as usize, datum);
            } else {
                dst.write16(row as usize, col as usize, datum as u16);
            }
            dst_writes |= blocks(row, 1, d32);
        }
    }
    // Counter updates.
    let set = &mut adcs[adc].sets[which].channel;
    let bump = |v: u32, inc: u32, bits: u32| (v + inc) & ((1 << bits) - 1);
    set[0].xyzw[1].v = bump(set[0].xyzw[1].v, field(w, 17, 2), 13);
    set[0].xyzw[2].v = bump(set[0].xyzw[2].v, field(w, 15, 2), 8);
    set[1].xyzw[1].v = bump(set[1].xyzw[1].v, field(w, 21, 2), 13);
    set[1].xyzw[2].v = bump(set[1].xyzw[2].v, field(w, 19, 2), 8);
    let base = cfg.thd(
        th,
        if which == 1 {
            t::SRCB_SET_BASE
        } else {
            t::SRCA_SET_BASE
        },
    ) << 4;
    let mut flip = None;
    if field(w, 6, 1) != 0 {
        flip = Some(bank);
        src.unp_bank[which] ^= 1;
        src.unp_row[which][th] = base;
    } else if g(c::SRC_REG_SET_UPD) != 0 {
        src.unp_row[which][th] = (src.unp_row[which][th] + 16 + base) & 0x3f;
    }
    Ok(Unpacked {
        which,
        bytes: (n * size) as u32,
        throttle,
        flip,
        dst_writes,
    })
}

/// The L1 speeds (x1, x2, x4 as 1, 2, 4) unpackers 0 and 1 get when both fetch at once and
/// want `u0` and `u1` (`UNPACR_Regular.md`, "Performance").
pub(crate) fn shared_speeds(u0: u32, u1: u32) -> (u32, u32) {
    match (u0, u1) {
        (1, x) => (1, x),
        (x, 1) => (x, 1),
        (2, 2) => (1, 1),
        (4, 2) => (2, 1),
        (2, 4) => (1, 2),
        _ => (2, 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_follows_the_table() {
        assert_eq!(shared_speeds(1, 1), (1, 1));
        assert_eq!(shared_speeds(4, 1), (4, 1));
        assert_eq!(shared_speeds(1, 4), (1, 4));
        assert_eq!(shared_speeds(2, 2), (1, 1));
        assert_eq!(shared_speeds(4, 2), (2, 1));
        assert_eq!(shared_speeds(2, 4), (1, 2));
        assert_eq!(shared_speeds(4, 4), (2, 2));
    }

    #[test]
    fn conversions_follow_format_conversion() {
        // FP32 -> BF16 truncates and flushes denormals (keeping the sign).
        assert_eq!(
            convert(0, 5, 0x3f81_ffff, false).unwrap(),
            fl::write_src_bf16(0x3f81)
        );
        assert_eq!(
            convert(0, 5, 0x8000_1234, false).unwrap(),
            fl::write_src_bf16(0x8000)
        );
        // FP32 -> TF32 into Src drops 13 mantissa bits; into Dst it stays FP32.
        assert_eq!(
            convert(0, 4, 0x3fff_ffff, false).unwrap(),
            fl::write_src_tf32(0x3fff_ffff >> 13)
        );
        assert_eq!(
            convert(0, 4, 0x3fff_ffff, true).unwrap(),
            fl::write_dst_fp32(0x3fff_ffff)
        );
        assert!(convert(0, 0, 1, false).unwrap_err().contains("undefined"));
        assert!(convert(5, 1, 1, false).unwrap_err().contains("undefined"));
        assert!(convert(0, 1, 1, false).unwrap_err().contains("FP32ToFP16"));
        assert!(convert(6, 6, 1, false).unwrap_err().contains("BFP8"));
        assert_eq!(convert(9, 9, 0xabcd, false).unwrap(), (0xab << 11) | 0xcd);
    }
}
