//! The Matrix Unit's instructions against their functional models, including the edge cases
//! the pages call out (denormals, the all-ones exponent, saturation, fidelity phases,
//! broadcasts, the row masks of `ZEROACC`, the move instructions' layouts).

use super::*;
use crate::tensix::counters::Counter;
use crate::tensix::src_regs::Client;
use riscv_linker::tensix as tt;

/// A coprocessor state with both `SrcA`/`SrcB` banks 0 owned by the Matrix Unit.
struct Unit {
    cfg: BackendConfig,
    rwc: Rwc,
    src: SrcRegs,
    dst: Dst,
}

impl Unit {
    /// `SrcA` format `srca` (`ALU_FORMAT_SPEC_REG0_SrcA`), FP32 `Dst` if `fp32`.
    fn new(srca: u32, fp32: bool) -> Unit {
        let mut cfg = BackendConfig::default();
        cfg.cfg[0][1] = (srca << 17) | ((fp32 as u32) << 29);
        let mut src = SrcRegs::default();
        src.banks[A][0].allowed = Client::MatrixUnit;
        src.banks[B][0].allowed = Client::MatrixUnit;
        Unit {
            cfg,
            rwc: Rwc::default(),
            src,
            dst: Dst::default(),
        }
    }

    fn run(&mut self, w: u32) -> Result<Footprint, String> {
        self.run_with(w, Numerics::Ttsim)
    }

    fn run_with(&mut self, w: u32, numerics: Numerics) -> Result<Footprint, String> {
        let mut x = Ctx {
            thread: 0,
            cfg: &self.cfg,
            rwc: &mut self.rwc,
            src: &mut self.src,
            dst: &mut self.dst,
            numerics,
        };
        let f = footprint(w, &x)?;
        execute(w, &mut x)?;
        Ok(f)
    }

    /// Fills `SrcA`/`SrcB` bank 0 with BF16 patterns `f(row, col)`.
    fn fill(&mut self, which: usize, f: impl Fn(usize, usize) -> u16) {
        for r in 0..64 {
            for c in 0..16 {
                self.src.banks[which][0].rows[r][c] = fl::write_src_bf16(f(r, c));
            }
        }
    }

    fn bf16_at(&self, row: usize, col: usize) -> u16 {
        fl::read_dst_bf16(self.dst.read16(row, col))
    }

    fn fp32_at(&self, row: usize, col: usize) -> u32 {
        fl::read_dst_fp32(self.dst.read32(row, col))
    }
}

const BF16: u32 = fl::fmt::BF16;

/// BF16 pattern of a small float (exact in BF16).
fn bf(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}

#[test]
fn elwadd_rounds_ties_away_from_zero_and_rounds_the_aligned_operand() {
    let mut u = Unit::new(BF16, false);
    u.fill(A, |r, _| match r {
        0 => bf(1.0),
        1 => 0xb8e2,
        _ => bf(-1.0),
    });
    // Row 0: 1 + 2^-8 is a tie: away from zero (1 + 2^-7), not to even (1.0).
    // Row 1: the example; 0x380b aligned to 0xb8e2's exponent is 0x458 / 2 = 556
    // (half up) in units of 2^-24, the difference 0x4e4 units ends in a tie: b89d.
    // Row 2: -1 - 2^-8, a tie, goes away from zero too.
    u.fill(B, |r, _| match r {
        0 => 0x3b80,
        1 => 0x380b,
        _ => 0xbb80,
    });
    let f = u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(u.bf16_at(0, 5), bf(1.0 + 2f32.powi(-7)));
    assert_eq!(u.bf16_at(1, 5), 0xb89d);
    assert_eq!(u.bf16_at(2, 5), bf(-1.0 - 2f32.powi(-7)));
    assert_eq!((f.reads, f.writes, f.needs), (0, 1, [true, true]));
    // The ISA documentation's rules (nearest even) stay available as a named option.
    u.run_with(tt::elwadd(0, false, 0, 0, 0), Numerics::IsaDoc)
        .unwrap();
    assert_eq!(u.bf16_at(0, 5), bf(1.0));
    assert_eq!(u.bf16_at(1, 5), 0xb89c);
}

#[test]
fn fp32_elwadd_aligns_the_smaller_operand_to_eleven_bits() {
    // FP32 Dst, TF32 operands: 1 + 1.5 * 2^-11 is exact in FP32, but the smaller operand
    // is rounded to the larger's 11-bit mantissa first: 1.5 units of 2^-10 -> 1 (0.75
    // rounds up), so the sum is 1 + 2^-10.
    let mut u = Unit::new(fl::fmt::TF32, true);
    u.cfg.cfg[0][1] |= fl::fmt::TF32 << 21; // SrcB format
    for w in [A, B] {
        u.src.banks[w][0].rows[0] = [fl::write_src_tf32(if w == A {
            0x3f800000 >> 13
        } else {
            (1.5f32 * 2f32.powi(-11)).to_bits() >> 13
        }); 16];
    }
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(u.fp32_at(0, 0), 0x3f80_2000);
    assert_ne!(
        (1.0f32 + 1.5 * 2f32.powi(-11)).to_bits(),
        0x3f80_2000,
        "IEEE would keep it"
    );
}

#[test]
fn elwmul_product_ties_round_away_and_cancellations_are_plus_zero() {
    let mut u = Unit::new(BF16, false);
    // (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8: a tie at BF16, away from zero.
    u.fill(A, |r, _| if r == 0 { 0x3f88 } else { 0xbf80 });
    u.fill(B, |_, _| 0x3f88);
    u.run(tt::elwmul(0, 0, 0, 0)).unwrap();
    assert_eq!(u.bf16_at(0, 0), 0x3f91);
    // Row 1: -(1 + 2^-4) onto Dst = +(1 + 2^-4): exact cancellation gives +0.
    u.dst.write16(1, 0, fl::write_dst_bf16(0x3f88));
    u.run(tt::elwmul(0, 0, 0, 0)).unwrap();
    assert_eq!(u.dst.read16(1, 0), 0);
    // ELWMUL always accumulates; its AddDst bit is non-contractual and refused.
    let e = u.run((0x27 << 24) | (1 << 21)).unwrap_err();
    assert!(e.contains("AddDst"), "{e}");
}

#[test]
fn results_at_the_all_ones_exponent_are_the_too_large_pattern() {
    // 2^128 * 1.5 is a number to the Matrix Unit, but a result at exponent 255 is written
    // as exponent 255, mantissa 0 (the documented "too large" pattern).
    let mut u = Unit::new(BF16, false);
    u.fill(A, |_, _| 0x7fc0);
    u.fill(B, |_, _| 0);
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(u.bf16_at(0, 0), 0x7f80);
    let mut u = Unit::new(BF16, true);
    u.fill(A, |_, _| 0xff7f);
    u.fill(B, |_, _| 0xff7f);
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(u.fp32_at(0, 0), 0xff80_0000);
}

#[test]
fn mvmul_rounds_each_product_to_the_largest_exponent_of_its_half() {
    // Dst[i][j] = 1 * 1 + 1 * (1.5 * 2^-11): the small product is aligned to 2^-10 units
    // half away from zero (0.75 -> 1): 1 + 2^-10 in FP32 Dst, not the exact 1 + 1.5 * 2^-11.
    let mut u = Unit::new(BF16, true);
    u.fill(A, |r, _| match r {
        0 => bf(1.0),
        1 => 0x3a40, // 1.5 * 2^-11
        _ => 0,
    });
    u.fill(B, |_, c| if c < 2 { bf(1.0) } else { 0 });
    u.run(tt::mvmul(0, false, 0, 0)).unwrap();
    assert_eq!(u.fp32_at(3, 7), 0x3f80_2000);
}

#[test]
fn elwadd_with_add_dst_accumulates_in_fp32() {
    let mut u = Unit::new(BF16, true);
    u.fill(A, |r, c| bf((r * 16 + c) as f32));
    u.fill(B, |_, _| bf(0.5));
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    u.run(tt::elwadd(0, true, 0, 0, 0)).unwrap();
    for (r, c) in [(0, 0), (3, 7), (7, 15)] {
        let want = 2.0 * ((r * 16 + c) as f32 + 0.5);
        assert_eq!(u.fp32_at(r, c), want.to_bits(), "({r}, {c})");
    }
    // The footprint of an accumulating ELWADD reads the two DstBits blocks of Dst32b rows 0-7.
    let f = footprint(tt::elwadd(0, true, 0, 0, 0), &ctx(&mut u)).unwrap();
    assert_eq!((f.reads, f.writes), (0b11, 0b11));
}

fn ctx(u: &mut Unit) -> Ctx<'_> {
    Ctx {
        thread: 0,
        cfg: &u.cfg,
        rwc: &mut u.rwc,
        src: &mut u.src,
        dst: &mut u.dst,
        numerics: Numerics::Ttsim,
    }
}

#[test]
fn elwsub_broadcasts_a_srcb_row_and_column() {
    let mut u = Unit::new(BF16, true);
    u.fill(A, |_, c| bf(c as f32));
    u.fill(B, |r, c| bf((100 * r + c) as f32));
    u.rwc.src_b.v = 3; // BroadcastSrcBRow keeps SrcB row 3 (not masked to 0x38)
    u.run(tt::elwsub(0, false, 0b11, 0, 0)).unwrap();
    for r in 0..8 {
        assert_eq!(u.fp32_at(r, 9), (9.0f32 - 300.0).to_bits());
    }
}

#[test]
fn the_all_ones_exponent_is_a_number_and_overflow_saturates() {
    let mut u = Unit::new(BF16, false);
    u.fill(A, |r, _| if r == 0 { 0x7f80 } else { 0x0001 }); // "infinity"; a denormal
    u.fill(B, |r, _| if r == 0 { 0x7f80 } else { bf(2.0) });
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(
        u.bf16_at(0, 0),
        0x7f80,
        "2^128 + 2^128 is too large: the all-ones pattern"
    );
    assert_eq!(u.bf16_at(1, 0), bf(2.0), "the denormal reads as zero");
    // FP16: 65504 + 65504 saturates to exponent 31, mantissa 1023.
    let mut u = Unit::new(fl::fmt::FP16, false);
    for w in [A, B] {
        u.src.banks[w][0].rows[0] = [fl::write_src_fp16(0x7bff); 16];
    }
    u.run(tt::elwadd(0, false, 0, 0, 0)).unwrap();
    assert_eq!(fl::read_dst_fp16(u.dst.read16(0, 0)), 0x7fff);
}

#[test]
fn elwmul_fidelity_phases_sum_to_the_full_product() {
    // BF16 x BF16 needs all four phases for full precision (SrcASrcB.md).
    let (a, b) = (bf(1.0 + 127.0 / 128.0), bf(1.0 + 85.0 / 128.0));
    let mut u = Unit::new(BF16, true);
    u.fill(A, |_, _| a);
    u.fill(B, |_, _| b);
    u.run(tt::elwmul(0, 0, 0, 0)).unwrap();
    let phase0 = f32::from_bits(u.fp32_at(0, 0));
    assert!(
        phase0 < (1.0 + 127.0 / 128.0) * (1.0 + 85.0 / 128.0),
        "phase 0 drops bits"
    );
    for phase in 1..4 {
        u.rwc.fidelity = phase;
        u.run(tt::elwmul(0, 0, 0, 0)).unwrap();
    }
    let full = (1.0f64 + 127.0 / 128.0) * (1.0 + 85.0 / 128.0);
    assert_eq!(f32::from_bits(u.fp32_at(4, 3)) as f64, full);
}

#[test]
fn mvmul_multiplies_srcb_by_srca_and_accumulates() {
    let mut u = Unit::new(BF16, true);
    // SrcA = 2 * identity (16x16), SrcB rows 8-15 hold r + c.
    u.fill(A, |r, c| if r % 16 == c { bf(2.0) } else { 0 });
    u.fill(B, |r, c| bf((r + c) as f32));
    u.rwc.src_b.v = 8;
    u.run(tt::mvmul(0, false, 0, 16)).unwrap();
    u.run(tt::mvmul(0, false, 0, 16)).unwrap();
    for (i, j) in [(0, 0), (5, 9), (7, 15)] {
        let want = 2.0 * 2.0 * (8 + i + j) as f32;
        assert_eq!(u.fp32_at(16 + i, j), want.to_bits(), "({i}, {j})");
    }
    // A full 16-term dot product: all-ones rows and columns sum to 16.
    let mut u = Unit::new(BF16, false);
    u.fill(A, |_, _| bf(1.0));
    u.fill(B, |_, _| bf(1.0));
    u.run(tt::mvmul(0, false, 0, 0)).unwrap();
    assert_eq!(u.bf16_at(3, 3), bf(16.0));
}

#[test]
fn addr_mod_and_flips_after_the_operation() {
    let mut u = Unit::new(BF16, false);
    u.cfg.thread[0][7 + 2] = 8 | (8 << 8); // ADDR_MOD_AB_SEC1: SrcA += 8, SrcB += 8
    u.cfg.thread[0][24] = 8; // ADDR_MOD_DST_SEC1: Dst += 8
    u.run(tt::elwadd(0b11, false, 0, 1, 0)).unwrap();
    assert_eq!(
        (u.rwc.src_a, u.rwc.src_b.v, u.rwc.dst.v),
        (Counter { v: 8, cr: 0 }, 8, 8)
    );
    assert_eq!(
        (u.src.mu_bank, u.src.banks[A][0].allowed),
        ([1, 1], Client::Unpackers)
    );
    // CLR_DVALID_SrcA_Disable keeps the bank the Matrix Unit's while moving on.
    u.src.banks[A][1].allowed = Client::MatrixUnit;
    u.cfg.thread[0][5] = 1;
    u.src.banks[B][1].allowed = Client::MatrixUnit;
    u.run(tt::elwadd(0b01, false, 0, 0, 0)).unwrap();
    assert_eq!(
        (u.src.mu_bank[A], u.src.banks[A][1].allowed),
        (0, Client::MatrixUnit)
    );
}

#[test]
fn zeroacc_modes_clear_the_documented_rows() {
    let mut u = Unit::new(BF16, false);
    for r in 0..1024 {
        u.dst.write16(r, 0, 0xffff);
    }
    u.run(tt::zeroacc(false, 1, 0, 2)).unwrap(); // 16 rows: 32..48
    assert_eq!(
        (
            u.dst.read16(31, 0),
            u.dst.read16(32, 0),
            u.dst.read16(47, 0)
        ),
        (0xffff, 0, 0)
    );
    assert_eq!(u.dst.read16(48, 0), 0xffff);
    u.run(tt::zeroacc(true, 1, 0, 1)).unwrap(); // Dst32b rows 16..32
    assert_eq!(u.dst.read32(16, 0), 0);
    assert_eq!(u.dst.read32(31, 0), 0);
    assert_eq!(u.dst.read32(32, 0), 0xffff_ffff);
    u.run(tt::zeroacc(false, 2, 0, 1)).unwrap(); // high half
    assert_eq!((u.dst.read16(511, 0), u.dst.read16(512, 0)), (0xffff, 0));
    u.rwc.dst.v = 5;
    u.run(tt::zeroacc(false, 0, 0, 2)).unwrap(); // one row: 2 + RWC Dst
    assert_eq!((u.dst.read16(6, 0), u.dst.read16(7, 0)), (0xffff, 0));
    u.run(tt::zeroacc(false, 3, 0, 0)).unwrap();
    assert_eq!(u.dst.read16(100, 0), 0);
}

#[test]
fn zerosrc_clears_banks_and_can_write_negative_infinity() {
    let mut u = Unit::new(BF16, false);
    u.fill(A, |_, _| bf(1.0));
    u.fill(B, |_, _| bf(1.0));
    u.src.unp_bank[A] = 1;
    u.run(tt::zerosrc(true, true, false, 0b01)).unwrap(); // the Matrix Unit's SrcA bank (0)
    assert_eq!(u.src.banks[A][0].rows[9][9], 0x7ffff);
    assert_eq!(u.src.banks[B][0].rows[9][9], fl::write_src_bf16(bf(1.0)));
    u.run(tt::zerosrc(false, false, true, 0b10)).unwrap(); // both SrcB banks
    assert_eq!(u.src.banks[B][0].rows[0][0], 0);
}

#[test]
fn moves_between_src_and_dst_keep_the_documented_layouts() {
    let mut u = Unit::new(BF16, false);
    u.fill(A, |r, c| bf((r * 16 + c) as f32));
    u.run(tt::mova2d(false, 8, 0, true, 40)).unwrap(); // SrcA rows 8..16 to Dst 40..48
    assert_eq!(u.bf16_at(41, 2), bf(146.0));
    // MOVD2B brings them back into SrcB.
    u.run(tt::movd2b(false, 0, 0, true, 40)).unwrap();
    assert_eq!(u.src.banks[B][0].rows[1][2], u.src.banks[A][0].rows[9][2]);
    // MOVB2D broadcasting SrcB row 1, column 0 to eight rows.
    u.run(tt::movb2d(false, 1, 0, 0b011, 64)).unwrap();
    assert_eq!(
        (u.bf16_at(64, 15), u.bf16_at(71, 3)),
        (bf(144.0), bf(144.0))
    );
    // A denormal SrcA datum (exponent 0) is flushed to zero by a move.
    u.src.banks[A][0].rows[0][0] = 0x3ff00;
    u.run(tt::mova2d(false, 0, 0, false, 80)).unwrap();
    assert_eq!(u.dst.read16(80, 0), 0);
    // TF32 SrcA keeps its low three mantissa bits in Dst32b.
    let mut u = Unit::new(fl::fmt::TF32, true);
    u.src.banks[A][0].rows[0][0] = fl::write_src_tf32(0x3fff_ffff >> 13);
    u.run(tt::mova2d(false, 0, 0, false, 0)).unwrap();
    assert_eq!(u.fp32_at(0, 0), 0x3fff_e000);
    u.run(tt::movd2a(false, 1, 0, false, 0)).unwrap();
    assert_eq!(u.src.banks[A][0].rows[1][0], u.src.banks[A][0].rows[0][0]);
}

#[test]
fn movdbga2d_is_mova2d_without_the_wait_for_srca() {
    // MOVDBGA2D.md: identical to MOVA2D, but it does not wait for the Matrix Unit to own
    // SrcA's bank.
    let mut u = Unit::new(BF16, false);
    u.fill(A, |r, c| bf((r * 16 + c) as f32));
    let dbg = u.run(tt::movdbga2d(false, 8, 0, true, 40)).unwrap();
    assert_eq!(u.bf16_at(41, 2), bf(146.0));
    let plain = u.run(tt::mova2d(false, 8, 0, true, 48)).unwrap();
    assert_eq!(u.bf16_at(49, 2), bf(146.0));
    assert_eq!(plain.needs, [true, false]);
    assert_eq!(dbg.needs, [false, false]);
    assert_eq!(dbg.writes, blocks(40, 8, false));
    assert_eq!(plain.writes, blocks(48, 8, false));
}

#[test]
fn unmodelled_modes_are_named() {
    let mut u = Unit::new(BF16, false);
    u.cfg.cfg[0][1] |= 1 << 31;
    assert!(u
        .run(tt::elwadd(0, false, 0, 0, 0))
        .unwrap_err()
        .contains("INT8"));
    let mut u = Unit::new(BF16, false);
    u.cfg.cfg[0][1] |= 1;
    assert!(u
        .run(tt::mvmul(0, false, 0, 0))
        .unwrap_err()
        .contains("stochastic"));
    let mut u = Unit::new(fl::fmt::TF32, false);
    assert!(u
        .run(tt::movd2a(false, 0, 0, false, 0))
        .unwrap_err()
        .contains("undefined"));
}
