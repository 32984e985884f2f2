//! The four packers and `PACR` (`PACR.md`, `Packers/InputAddressGenerator.md`,
//! `Packers/OutputAddressGenerator.md`, `Packers/FormatConversion.md`): datums from `Dst`
//! through the early and late format conversions into 16-byte units of L1, each packer's
//! output buffer persisting between instructions until `Last` or `Flush` pads and writes it.
//!
//! Modelled: packers 0-3 (`PackerMask` 0, one packer, 0b0011, 0b1100 or 0b1111; each with
//! its configuration section, its `DEST_TARGET_REG_CFG_PACK_SEC` offset into `Dst`, its L1
//! destination, relative to packer 0's when bit 31 of that is set), `ZeroWrite`, `Flush`,
//! `Last`, `OvrdThreadId`, the ADC address forming and `ADDR_MOD_PACK_SEC` updates (once per
//! ADC used), the L1 FIFO wrap; early conversions FP32 (identity), TF32 and BF16 (rounding,
//! ties away from zero, or truncation) from 32-bit `Dst`, BF16 and FP16 (identity or
//! rounding) from 16-bit `Dst`; late conversions that keep the format, widen BF16/TF32 to
//! FP32 or truncate FP32/TF32 to BF16. Everything else is an error naming it (a fault):
//! reading L1, edge masking other than all columns kept, ReLU, exponent thresholding,
//! downsampling, compression, L1 accumulation, BFP/FP8/integer formats, stochastic rounding,
//! a `PackerMask` the page leaves undefined.
//!
//! Where packers 1-3 keep their configuration is tt-metal's `cfg_defines.h` (the ISA pages
//! name the fields, not their words): `THCON_SEC0_REG1`, `THCON_SEC0_REG8`, `THCON_SEC1_REG1`,
//! `THCON_SEC1_REG8`; their FIFO limit and size are `THCON_SEC<s>_REG9`'s `Pack_0_2_*` and
//! `Pack_1_3_*` fields, taken (ASSUMPTION, from the names) as packer 0 and 1 of section 0 and
//! packer 2 and 3 of section 1.

use super::config::fields::{cfg as c, thd as t};
use super::config::{BackendConfig, Field};
use super::counters::{AdcSet, Counter};
use super::dst::Dst;
use super::float::{self as fl, fmt};
use super::isa::field;
use super::matrix::blocks;
use crate::bus::L1;

/// Packers on a Tensix tile.
pub(crate) const PACKERS: usize = 4;

/// Packer `i`'s configuration section, in words from packer 0's (`THCON_SEC0_REG1` 56,
/// `THCON_SEC0_REG8` 84, `THCON_SEC1_REG1` 96, `THCON_SEC1_REG8` 124).
const SECTION: [usize; PACKERS] = [0, 28, 40, 68];
/// Packer `i`'s `Pack_*_limit_address` and `_fifo_size` words, from packer 0's (88, 90, 128,
/// 130).
const LIMIT: [usize; PACKERS] = [0, 2, 40, 42];

/// Packer `i`'s field whose packer-0 form is `f`.
fn pf(i: usize, f: Field) -> Field {
    f.at(SECTION[i])
}

/// Packer `i`'s FIFO field whose packer-0 form is `f`.
fn pl(i: usize, f: Field) -> Field {
    f.at(LIMIT[i])
}

/// One packer's output stream.
#[derive(Clone, Debug)]
pub(crate) struct Packer {
    /// `DataStream.NeedsNewAddress`.
    pub needs_new: bool,
    /// `DataStream.ByteAddress`.
    pub byte_addr: u32,
    /// Bytes waiting for a whole 16-byte unit.
    pub pending: Vec<u8>,
}

impl Default for Packer {
    fn default() -> Self {
        Packer {
            needs_new: true,
            byte_addr: 0,
            pending: Vec::with_capacity(16),
        }
    }
}

/// What one `PACR` did, for the timing model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Packed {
    /// Bytes written to L1, all packers together.
    pub bytes: u32,
}

/// The packers `PACR` `w` instructs (`PackerMask`; 0 is packer 0).
fn mask(w: u32) -> u32 {
    match field(w, 8, 4) {
        0 => 1,
        m => m,
    }
}

/// Why a `PACR` word cannot be executed whatever the configuration (checked at the push).
pub(crate) fn unsupported(w: u32) -> Option<String> {
    match field(w, 8, 4) {
        0 | 0b0001 | 0b0010 | 0b0100 | 0b1000 | 0b0011 | 0b1100 | 0b1111 => None,
        m => Some(format!(
            "PACR with PackerMask {m:#06b} (the page leaves masks other than one packer, \
             0b0011, 0b1100 and 0b1111 undefined)"
        )),
    }
}

/// The `Dst` datums packer `i` reads for a `PACR` of thread `th`: first datum index and count.
fn input(
    w: u32,
    i: usize,
    th: usize,
    cfg: &BackendConfig,
    adcs: &[AdcSet; 3],
) -> Result<(u32, u32), String> {
    let which = adc_of(w, i, th, cfg);
    let ch = &adcs[which].sets[2].channel;
    let [x, y, z, wv] = ch[0].xyzw.map(|k| k.v);
    let addr = cfg
        .get(th, c::PCK_BASE0)
        .wrapping_add(x.wrapping_mul(cfg.get(th, c::PCK_XSTRIDE0) & 0xf))
        .wrapping_add(y.wrapping_mul(cfg.get(th, c::PCK_YSTRIDE0)))
        .wrapping_add(z.wrapping_mul(cfg.get(th, c::PCK_ZSTRIDE0)))
        .wrapping_add(wv.wrapping_mul(cfg.get(th, c::PCK_WSTRIDE0)));
    let (bpd, xmask) = match cfg.get(th, pf(i, c::P0_IN_DATA_FORMAT)) & 3 {
        0 => (4, 3),
        1 => (2, 7),
        _ => (1, 0xf),
    };
    let n = if field(w, 1, 1) != 0 {
        0
    } else {
        (ch[1].xyzw[0].v + 1)
            .checked_sub(x)
            .ok_or_else(|| format!("the datum count is negative (ADC X0 {x} past X1 + 1)"))?
    };
    let offset = cfg.get(th, c::DEST_TARGET_PACK_OFFSET.at(i));
    let a = ((addr / bpd) & !xmask) + (x & xmask) + (offset << 4);
    Ok((a & 0x3fff, n))
}

/// The ADC packer `i` uses for a `PACR` of thread `th`.
fn adc_of(w: u32, i: usize, th: usize, cfg: &BackendConfig) -> usize {
    if field(w, 7, 1) != 0 {
        match cfg.get(th, pf(i, c::P0_ADDR_CNT_CONTEXT)) {
            3 => 0,
            k => k as usize,
        }
    } else {
        th
    }
}

/// The packers of `w`, in order.
fn packers(w: u32) -> impl Iterator<Item = usize> {
    let m = mask(w);
    (0..PACKERS).filter(move |i| m & (1 << i) != 0)
}

/// The `Dst` blocks a `PACR` reads (for the read-after-write stall).
pub(crate) fn dst_reads(w: u32, th: usize, cfg: &BackendConfig, adcs: &[AdcSet; 3]) -> u128 {
    if field(w, 12, 1) != 0 || field(w, 1, 1) != 0 {
        return 0;
    }
    let d32 = cfg.get(th, c::READ_32B) != 0;
    let mut m = 0;
    for i in packers(w) {
        let Ok((first, n)) = input(w, i, th, cfg, adcs) else {
            continue;
        };
        let (r0, r1) = (first >> 4, (first + n.max(1) - 1) >> 4);
        for r in r0..=r1.min(r0 + 1024) {
            m |= blocks(r & 0x3ff, 1, d32);
        }
    }
    m
}

/// Checks packer `i`'s configuration for modes the model leaves out.
fn check(i: usize, th: usize, cfg: &BackendConfig) -> Result<(), String> {
    let g = |f| cfg.get(th, f);
    let p = |f| cfg.get(th, pf(i, f));
    if i == 0 && p(c::P0_SOURCE_L1) != 0 {
        return Err("packer 0 reading L1 (Source_interface_selection) is not modelled".into());
    }
    let disable = if g(c::ALL_PACK_DISABLE_ZERO_COMPRESS_OVRD) != 0 {
        (g(c::ALL_PACK_DISABLE_ZERO_COMPRESS) >> i) & 1
    } else {
        p(c::P0_DISABLE_ZERO_COMPRESS)
    };
    if disable == 0 {
        return Err(format!(
            "compression (packer {i}'s Disable_zero_compress = 0) is not modelled"
        ));
    }
    if p(c::P0_EXP_THRESHOLD_EN) != 0 {
        return Err(format!(
            "exponent thresholding (packer {i}) is not modelled"
        ));
    }
    if p(c::P0_L1_ACC) != 0 {
        return Err(format!(
            "accumulation into L1 (packer {i}'s Pack_L1_Acc) is not modelled"
        ));
    }
    if !matches!(p(c::P0_DOWNSAMPLE_MASK), 0 | 0xffff) {
        return Err(format!(
            "downsampling (packer {i}'s Downsample_mask) is not modelled"
        ));
    }
    if g(c::APPLY_RELU) & 3 != 0 {
        return Err("ReLU in the packer (STACC_RELU_ApplyRelu) is not modelled".into());
    }
    if g(c::PACKER_SRND) != 0 {
        return Err("stochastic rounding (Packer_srnd_en) is not modelled".into());
    }
    if p(c::P0_ADD_L1_DEST_OFFSET) != 0 {
        return Err(format!(
            "Add_l1_dest_addr_offset (packer {i}; set by TDMA-RISC) is not modelled"
        ));
    }
    // Edge masking: every mask a packer can select must keep all 16 columns.
    let state = &cfg.cfg[cfg.state_id(th)];
    let two = |word: u32, k: u32| (word >> (2 * k)) & 3;
    let row_sets: Vec<u32> = if g(c::EDGE_FACE_SET_ENABLE) != 0 {
        let a = g(c::EDGE_FACE_SET_SELECT) & 3;
        let m = state[c::TILE_FACE_SET_MAPPING + a as usize];
        (0..16).map(|k| two(m, k)).collect()
    } else {
        vec![g(c::EDGE_ROW_SET_SELECT) & 3]
    };
    for b in row_sets {
        let m = state[c::TILE_ROW_SET_MAPPING + b as usize];
        for k in 0..16 {
            let mask = cfg.get(th, c::EDGE_MASK.at(two(m, k) as usize));
            if mask != 0xffff {
                return Err(format!(
                    "edge masking (PCK_EDGE_OFFSET_SEC{}_mask = {mask:#06x}) is not modelled; set the masks the packers can select to 0xffff",
                    two(m, k)
                ));
            }
        }
    }
    Ok(())
}

/// The early format conversion of one `Dst` datum to `inter` (FP32-layout bits, or the
/// 16-bit pattern in the low half for BF16/FP16).
fn early(d: u32, d32: bool, inter: u32, raw: bool, r10: bool) -> Result<u32, String> {
    Ok(match (d32, inter) {
        (true, fmt::FP32) if !r10 || raw => fl::read_dst_fp32(d),
        (true, fmt::TF32) if raw => fl::read_dst_fp32(d),
        (true, fmt::TF32) => fl::pack_round8(fl::read_dst_fp32(d), 10),
        (true, fmt::BF16) if raw => fl::read_dst_fp32(d) >> 16,
        (true, fmt::BF16) if !r10 => fl::pack_round8(fl::read_dst_fp32(d), 7) >> 16,
        (false, fmt::BF16) if raw => fl::read_dst_bf16(d as u16) as u32,
        (false, fmt::BF16) if !r10 => {
            fl::pack_round8((fl::read_dst_bf16(d as u16) as u32) << 16, 7) >> 16
        }
        (false, fmt::FP16) if raw => fl::read_dst_fp16(d as u16) as u32,
        (false, fmt::FP16) => {
            let h = fl::read_dst_fp16(d as u16) as u32;
            if h & 0x7c00 == 0 {
                0 // denormals and minus zero flush to plus zero
            } else {
                h
            }
        }
        _ => {
            return Err(format!(
                "the early conversion from {}-bit Dst to {} (Read_int8 {}, Round_10b_mant {}) is not modelled",
                if d32 { 32 } else { 16 },
                fmt::name(inter),
                raw as u8,
                r10 as u8
            ))
        }
    })
}

/// The late conversion: bytes of the L1 datum.
fn late(v: u32, from: u32, to: u32) -> Result<Vec<u8>, String> {
    let b32 = |x: u32| x.to_le_bytes().to_vec();
    let b16 = |x: u32| (x as u16).to_le_bytes().to_vec();
    Ok(match (from, to) {
        (fmt::FP32, fmt::FP32) | (fmt::TF32, fmt::TF32) | (fmt::TF32, fmt::FP32) => b32(v),
        (fmt::BF16, fmt::BF16) | (fmt::FP16, fmt::FP16) => b16(v),
        (fmt::BF16, fmt::FP32) | (fmt::BF16, fmt::TF32) => b32(v << 16),
        (fmt::FP32, fmt::BF16) | (fmt::TF32, fmt::BF16) => b16(v >> 16),
        _ => {
            return Err(format!(
                "the late conversion from {} to {} is not modelled",
                fmt::name(from),
                fmt::name(to)
            ))
        }
    })
}

/// Executes `PACR` `w` of thread `th` on the packers its mask names.
pub(crate) fn execute(
    w: u32,
    th: usize,
    cfg: &BackendConfig,
    adcs: &mut [AdcSet; 3],
    dst: &Dst,
    packers_state: &mut [Packer; PACKERS],
    l1: &L1,
) -> Result<Packed, String> {
    let g = |f| cfg.get(th, f);
    let (last, flush, zero) = (
        field(w, 0, 1) != 0,
        field(w, 1, 1) != 0,
        field(w, 12, 1) != 0,
    );
    let inter = if g(c::DSTACC_OVERRIDE) != 0 {
        g(c::DSTACC_VAL)
    } else {
        g(c::DSTACC)
    };
    let (d32, raw, r10) = (
        g(c::READ_32B) != 0,
        g(c::READ_RAW) != 0,
        g(c::ROUND_10B_MANT) != 0,
    );
    // Everything is checked and every input read before any packer writes or any ADC moves.
    let mut work = Vec::with_capacity(PACKERS);
    for i in packers(w) {
        check(i, th, cfg)?;
        let (first, n) = input(w, i, th, cfg, adcs)?;
        let (in_fmt, out_fmt) = (
            g(pf(i, c::P0_IN_DATA_FORMAT)),
            g(pf(i, c::P0_OUT_DATA_FORMAT)),
        );
        if n > 0 && inter != in_fmt {
            return Err(format!(
                "the intermediate format {} differs from packer {i}'s In_data_format {}: not modelled",
                fmt::name(inter),
                fmt::name(in_fmt)
            ));
        }
        if out_fmt & 2 != 0 {
            return Err(format!(
                "packing to {} (packer {i}) is not modelled",
                fmt::name(out_fmt)
            ));
        }
        work.push((i, first, n, out_fmt));
    }
    // Output address generator: packer 0's initial address, relative base of the others.
    let initial = |i: usize| {
        g(pf(i, c::P0_L1_DEST_ADDR)).wrapping_add((g(pf(i, c::P0_SUB_L1_HEADER)) == 0) as u32)
    };
    let packer0 = initial(0);
    let mut bytes = 0;
    let mut advanced = [false; 3];
    for &(i, first, n, out_fmt) in &work {
        let which = adc_of(w, i, th, cfg);
        advanced[which] = true;
        let ch1 = adcs[which].sets[2].channel[1].xyzw.map(|k| k.v);
        let mut addr = initial(i);
        if i > 0 && packer0 & (1 << 31) != 0 {
            addr = addr.wrapping_add(packer0);
        }
        let yzw = g(c::PCK_BASE1)
            .wrapping_add(ch1[1].wrapping_mul(g(c::PCK_YSTRIDE1)))
            .wrapping_add(ch1[2].wrapping_mul(g(c::PCK_ZSTRIDE1)))
            .wrapping_add(ch1[3].wrapping_mul(g(c::PCK_WSTRIDE1)));
        addr = addr.wrapping_add(yzw & !0xf);
        if addr > g(pl(i, c::P0_LIMIT)) * 2 + 1 {
            addr = addr.wrapping_sub(g(pl(i, c::P0_FIFO_SIZE)) * 2);
        }
        let p = &mut packers_state[i];
        if p.needs_new {
            p.byte_addr = (addr & 0x1ffff) << 4;
            p.needs_new = false;
        }
        for k in 0..n {
            let v = if zero {
                0
            } else {
                let a = (first + k) & 0x3fff;
                let (row, col) = ((a >> 4) as usize, (a & 15) as usize);
                // A 10-bit row in either view (Dst.md: `Dst32b`'s `Row` stays 10 bits;
                // `adj_row` keeps bit 9).
                let d = if d32 {
                    dst.read32(row, col)
                } else {
                    dst.read16(row, col) as u32
                };
                early(d, d32, inter, raw, r10)?
            };
            let out = late(v, inter, out_fmt)?;
            bytes += out.len() as u32;
            p.pending.extend_from_slice(&out);
            while p.pending.len() >= 16 {
                write_unit(p, l1)?;
            }
        }
        if last || flush {
            if !p.pending.is_empty() {
                p.pending.resize(16, 0);
                write_unit(p, l1)?;
            }
            p.needs_new = true;
        }
    }
    // AddrMod: Y/Z of channel 0 (input) and channel 1 (output), once per ADC used.
    let am = cfg.thread[th][t::ADDR_MOD_PACK + field(w, 15, 2) as usize] as u32;
    let y_upd = |cnt: &mut Counter, incr: u32, cr: bool, clear: bool| {
        let m = (1 << 13) - 1;
        if clear {
            *cnt = Counter::default();
        } else if cr {
            cnt.cr = (cnt.cr + incr) & m;
            cnt.v = cnt.cr;
        } else {
            cnt.v = (cnt.v + incr) & m;
        }
    };
    let z_upd = |cnt: &mut Counter, incr: u32, clear: bool| {
        if clear {
            *cnt = Counter::default();
        } else {
            cnt.v = (cnt.v + incr) & 0xff;
        }
    };
    for (which, _) in advanced.iter().enumerate().filter(|(_, a)| **a) {
        let ch = &mut adcs[which].sets[2].channel;
        y_upd(&mut ch[0].xyzw[1], am & 0xf, am & 0x10 != 0, am & 0x20 != 0);
        z_upd(&mut ch[0].xyzw[2], (am >> 12) & 1, am & 0x2000 != 0);
        y_upd(
            &mut ch[1].xyzw[1],
            (am >> 6) & 0xf,
            am & 0x400 != 0,
            am & 0x800 != 0,
        );
        z_upd(&mut ch[1].xyzw[2], (am >> 14) & 1, am & 0x8000 != 0);
    }
    Ok(Packed { bytes })
}

/// Writes the first 16 pending bytes at the stream's address.
fn write_unit(p: &mut Packer, l1: &L1) -> Result<(), String> {
    let a = p.byte_addr;
    if a as u64 + 16 > l1.size() as u64 {
        return Err(format!(
            "packer output at L1 address {a:#x} is outside L1 ({:#x} bytes)",
            l1.size()
        ));
    }
    let unit: Vec<u8> = p.pending.drain(..16).collect();
    for k in 0..4 {
        let word = u32::from_le_bytes(unit[4 * k..4 * k + 4].try_into().expect("4 bytes"));
        l1.store::<4>(a + 4 * k as u32, word);
    }
    p.byte_addr = a.wrapping_add(16);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_conversions() {
        let one_and_tie = fl::write_dst_fp32(0x3f80_8000); // 1 + 2^-8
        assert_eq!(
            early(one_and_tie, true, fmt::BF16, false, false).unwrap(),
            0x3f81
        );
        assert_eq!(
            early(one_and_tie, true, fmt::BF16, true, false).unwrap(),
            0x3f80,
            "truncation"
        );
        assert_eq!(
            early(one_and_tie, true, fmt::FP32, false, false).unwrap(),
            0x3f80_8000
        );
        let neg_zero = fl::write_dst_fp16(0x8000) as u32;
        assert_eq!(early(neg_zero, false, fmt::FP16, false, false).unwrap(), 0);
        assert_eq!(
            early(neg_zero, false, fmt::FP16, true, false).unwrap(),
            0x8000,
            "identity"
        );
        assert!(early(0, false, fmt::FP32, false, false).is_err());
    }

    #[test]
    fn late_conversions() {
        assert_eq!(
            late(0x3f80, fmt::BF16, fmt::FP32).unwrap(),
            0x3f80_0000u32.to_le_bytes()
        );
        assert_eq!(
            late(0x3f81_ffff, fmt::FP32, fmt::BF16).unwrap(),
            [0x81, 0x3f]
        );
        assert!(late(0, fmt::FP16, fmt::BF16).is_err());
    }
}
