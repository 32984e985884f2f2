//! The functional models, instruction by instruction, with the edge cases the pages call
//! out (whole programs are in `tests/tensix_sfpu.rs`).

use super::arith::{mad, mad_isa_doc, MAD_NAN};
use super::*;
use crate::tensix::counters::Rwc;
use crate::tensix::dst::Dst;
use riscv_linker::tensix as tt;

/// A Vector Unit with the state its instructions reach.
struct Bench {
    u: VectorUnit,
    dst: Dst,
    rwc: Rwc,
    thread_cfg: [u16; 57],
    cfg: [u32; 188],
    cycle: u64,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            u: VectorUnit::default(),
            dst: Dst::default(),
            rwc: Rwc::default(),
            thread_cfg: [0; 57],
            cfg: [0; 188],
            cycle: 0,
        }
    }

    /// Executes `w` two cycles after the previous instruction (clear of the MAD hazard).
    fn run(&mut self, w: u32) -> Result<(), String> {
        self.cycle += 2;
        self.at(w, self.cycle)
    }

    fn at(&mut self, w: u32, cycle: u64) -> Result<(), String> {
        assert_eq!(unsupported(w), None, "{w:#010x}");
        let ctx = Context {
            dst: &mut self.dst,
            rwc: &mut self.rwc,
            thread_cfg: &self.thread_cfg,
            cfg: &self.cfg,
        };
        self.u.execute(w, cycle, ctx)
    }

    fn ok(&mut self, w: u32) -> &mut Self {
        self.run(w).unwrap();
        self
    }

    /// Fills `LReg[r]` with `v(lane)` directly.
    fn set(&mut self, r: usize, v: impl Fn(usize) -> u32) -> &mut Self {
        for l in 0..LANES {
            self.u.lreg[r][l] = v(l);
        }
        self
    }
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn mad_rounds_to_nearest_even_on_three_guard_bits() {
    assert_eq!(mad(f(1.5), f(2.0), f(0.25)), f(3.25));
    // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even wins.
    assert_eq!(mad(f(1.0), f(1.0), f(2f32.powi(-24))), f(1.0));
    let odd = 1.0 + 2f32.powi(-23);
    assert_eq!(
        mad(f(odd), f(1.0), f(2f32.powi(-24))),
        f(1.0 + 2f32.powi(-22))
    );
    // (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24: the product's 27 kept bits hold it exactly.
    let a = 1.0 + 2f32.powi(-12);
    assert_eq!(
        mad(f(a), f(a), f(-(1.0 + 2f32.powi(-11)))),
        f(2f32.powi(-24))
    );
    // Overflow rounds to infinity.
    assert_eq!(mad(f(2f32.powi(127)), f(4.0), 0), f(f32::INFINITY));
}

#[test]
fn mad_is_not_fused_the_products_sticky_bit_survives_cancellation() {
    // (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46 exactly; a fused MAD rounds it to 2^-22. The MAD
    // sub-unit keeps the product to 2^-26 with a sticky bit for the 2^-46, and after the
    // cancellation that bit is a real one: 2^-22 + 2^-26.
    let odd = f(1.0 + 2f32.powi(-23));
    assert_eq!(mad(odd, odd, f(-1.0)), f(2f32.powi(-22) + 2f32.powi(-26)));
    assert_eq!(mad_isa_doc(odd, odd, f(-1.0)), f(2f32.powi(-22)), "fused");
}

#[test]
fn mad_flushes_denormals_and_zero_results_to_plus_zero() {
    let denormal = 0x0000_0001;
    assert_eq!(
        mad(denormal, f(2f32.powi(100)), 0),
        0,
        "denormal input reads as zero"
    );
    assert_eq!(mad(f(1.0), f(1.0), 0x807f_ffff), f(1.0));
    // A denormal result becomes +0.
    assert_eq!(mad(f(2f32.powi(-126)), f(0.5), 0), 0);
    // -0 results (IEEE: -0 * 1 + -0) become +0.
    assert_eq!(mad(0x8000_0000, f(1.0), 0x8000_0000), 0);
    assert_eq!(mad(f(-2.0), f(3.0), f(6.0)), 0);
    // A product that underflows on its own leaves c as it is.
    assert_eq!(
        mad(f(2f32.powi(-100)), f(2f32.powi(-100)), f(-1.0)),
        f(-1.0)
    );
}

#[test]
fn mad_nans_carry_the_sign_and_the_finite_results_bits() {
    let inf = f(f32::INFINITY);
    assert_eq!(mad(inf, f(2.0), f(1.0)), inf);
    assert_eq!(mad(inf, f(-2.0), f(1.0)), f(f32::NEG_INFINITY));
    // Invalid operations: Sign | 0x7F800001 ...
    assert_eq!(mad(inf, 0, 0), 0x7f80_0001, "inf * 0");
    assert_eq!(
        mad(inf, f(1.0), f(f32::NEG_INFINITY)),
        0x7f80_0001,
        "inf - inf"
    );
    assert_eq!(mad(0x7f80_0001, f(1.0), 0), 0x7f80_0001);
    assert_eq!(mad(inf, 1, 0), 0x7f80_0001, "inf * denormal (zero)");
    assert_eq!(mad(f(1.0), f(1.0), 0x7fc0_0000), 0x7f80_0001, "NaN c");
    // ... OR-ed with what the rest computes: inf * 0 + 1.5 has 1.5's mantissa.
    assert_eq!(mad(inf, 0, f(1.5)), 0x7fc0_0001);
    assert_eq!(mad(inf, 0, f(1.25)), 0x7fa0_0001);
    assert_eq!(mad(f(f32::NEG_INFINITY), 0, f(-1.25)), 0xffa0_0001);
    // The ISA documentation's rules give one NaN.
    assert_eq!(mad_isa_doc(inf, 0, f(1.5)), MAD_NAN);
    assert_eq!(MAD_NAN & 1, 1, "the page: the mantissa's low bit is set");
}

#[test]
fn sfpmad_sfpadd_sfpmul_and_the_constant_lregs() {
    let mut b = Bench::new();
    b.set(0, |l| f(l as f32))
        .set(1, |_| f(0.5))
        .set(2, |_| f(-1.0));
    // LReg3 = LReg0 * LReg1 + LReg2; SFPADD: LReg4 = 1.0 * LReg0 + LReg10;
    // SFPMUL: LReg5 = LReg0 * LReg8 + LReg9 (0.8373 and 0).
    b.ok(tt::sfpmad(0, 1, 2, 3, 0))
        .ok(tt::sfpadd(10, 0, 10, 4, 0))
        .ok(tt::sfpmul(0, 8, 9, 5, 0));
    for l in 0..LANES {
        assert_eq!(b.u.lreg[3][l], mad(f(l as f32), f(0.5), f(-1.0)));
        assert_eq!(b.u.lreg[4][l], f(l as f32 + 1.0));
        assert_eq!(b.u.lreg[5][l], mad(f(l as f32), LREG8, 0));
    }
    assert!((f32::from_bits(LREG8) - 0.8373).abs() < 1e-7);
    // LReg15 holds 2 * lane; writes to VD >= 8 are dropped.
    b.ok(tt::sfpmov(15, 6, 0)).ok(tt::sfpmad(10, 10, 10, 9, 0));
    assert_eq!(b.u.lreg[6][31], 62);
    assert_eq!(b.u.read(9, 0), 0);
}

#[test]
fn sfpmad_indirect_registers_come_from_lreg7_per_lane() {
    let mut b = Bench::new();
    b.set(0, |_| f(2.0)).set(1, |_| f(3.0)).set(2, |_| f(10.0));
    // Lane l: VA = 0 or 1, VD = 4 or 5 (low four bits of LReg7; the VA reads bits 0-3 too,
    // so encode VA in one lane pattern and VD in another).
    b.set(7, |l| if l % 2 == 0 { 4 } else { 5 });
    b.ok(tt::sfpmad(0, 1, 2, 6, arith::SFPMAD_MOD1_INDIRECT_VD));
    assert_eq!((b.u.lreg[4][0], b.u.lreg[5][0]), (f(16.0), 0));
    assert_eq!((b.u.lreg[4][1], b.u.lreg[5][1]), (0, f(16.0)));
    b.set(7, |l| (l % 2) as u32);
    b.ok(tt::sfpmad(3, 1, 2, 6, arith::SFPMAD_MOD1_INDIRECT_VA));
    assert_eq!((b.u.lreg[6][0], b.u.lreg[6][1]), (f(16.0), f(19.0)));
}

#[test]
fn reading_a_mad_result_in_the_next_cycle_is_refused() {
    let mut b = Bench::new();
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 10).unwrap();
    let e = b.at(tt::sfpmov(3, 4, 0), 11).unwrap_err();
    assert!(e.contains("LReg[3]") && e.contains("SFPNOP"), "{e}");
    // An unrelated register, or the same one a cycle later, is fine.
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 20).unwrap();
    b.at(tt::sfpmov(2, 4, 0), 21).unwrap();
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 30).unwrap();
    b.at(tt::sfpnop(), 31).unwrap();
    b.at(tt::sfpmov(3, 4, 0), 32).unwrap();
    assert_eq!(b.u.lreg[4][0], f(1.0));
    // SFPSTORE reads its VD.
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 40).unwrap();
    assert!(b.at(tt::sfpstore(3, 3, 0, 0), 41).is_err());
    // SFPSETCC reads VC only when it compares.
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 50).unwrap();
    b.at(tt::sfpsetcc(1, 3, 0, 1), 51).unwrap();
    b.at(tt::sfpmad(10, 10, 9, 3, 0), 60).unwrap();
    assert!(b.at(tt::sfpsetcc(0, 3, 0, 0), 61).is_err());
}

#[test]
fn sfploadi_modes() {
    let mut b = Bench::new();
    b.ok(tt::sfploadi(0, 0, 0x3fc0)); // BF16 1.5
    assert_eq!(b.u.lreg[0][5], f(1.5));
    b.ok(tt::sfploadi(0, 1, 0x3c00)); // FP16 1.0
    assert_eq!(b.u.lreg[0][5], f(1.0));
    b.ok(tt::sfploadi(0, 1, 0x0000)); // FP16 zero is 2^-112 here
    assert_eq!(b.u.lreg[0][5], 112 << 23);
    b.ok(tt::sfploadi(0, 2, 0xfffe));
    assert_eq!(b.u.lreg[0][5], 0xfffe);
    b.ok(tt::sfploadi(0, 4, 0xfffe));
    assert_eq!(b.u.lreg[0][5], -2i32 as u32);
    b.ok(tt::sfploadi(0, 8, 0x1234))
        .ok(tt::sfploadi(0, 10, 0x5678));
    assert_eq!(b.u.lreg[0][5], 0x1234_5678);
    b.ok(tt::sfploadi(0, 8, 0xabcd));
    assert_eq!(b.u.lreg[0][5], 0xabcd_5678);
    assert!(unsupported(tt::sfploadi(0, 3, 0))
        .unwrap()
        .contains("undefined"));
}

#[test]
fn sfpmov_negates_and_can_ignore_the_lane_mask() {
    let mut b = Bench::new();
    b.set(0, |l| l as u32);
    b.ok(tt::sfpmov(0, 1, arith::SFPMOV_MOD1_NEGATE));
    assert_eq!(b.u.lreg[1][3], 0x8000_0003);
    // Disable every lane (flags false, predication on), then move.
    b.ok(tt::sfpencc(0, 0, 2 | 8)); // EI with E=0... enable predication below
    b.ok(tt::sfpencc(0b01, 0, 2 | 8)); // predication on, flags false
    assert!(!b.u.enabled(0));
    b.ok(tt::sfpmov(0, 2, 0));
    assert_eq!(b.u.lreg[2][3], 0, "no lane enabled");
    b.ok(tt::sfpmov(0, 2, arith::SFPMOV_MOD1_ALL_LANES_ENABLED));
    assert_eq!(b.u.lreg[2][3], 3);
    assert!(unsupported(tt::sfpmov(9, 2, 8)).is_some(), "PRNG");
}

#[test]
fn sfpiadd_adds_subtracts_and_sets_flags() {
    let mut b = Bench::new();
    b.set(0, |l| l as u32).set(1, |_| 10);
    // LReg1 = LReg0 - LReg1 (LReg1 is both VB and VD); flags: result < 0.
    b.ok(tt::sfpiadd(
        0,
        0,
        1,
        arith::SFPIADD_MOD1_ARG_2SCOMP_LREG_DST,
    ));
    assert_eq!(b.u.lreg[1][3], -7i32 as u32);
    assert!(b.u.flags[3] && !b.u.flags[10] && !b.u.flags[12]);
    // LReg2 = LReg0 + (-2048) with CC_GTE0: flags inverted.
    b.ok(tt::sfpiadd(
        0x800,
        0,
        2,
        arith::SFPIADD_MOD1_ARG_IMM | arith::SFPIADD_MOD1_CC_GTE0,
    ));
    assert_eq!(b.u.lreg[2][0], -2048i32 as u32);
    assert!(!b.u.flags[0]);
    // CC_NONE leaves the flags; CC_NONE | CC_GTE0 still inverts them (the model's order).
    let before = b.u.flags;
    b.ok(tt::sfpiadd(
        1,
        0,
        2,
        arith::SFPIADD_MOD1_ARG_IMM | arith::SFPIADD_MOD1_CC_NONE,
    ));
    assert_eq!(b.u.flags, before);
    b.ok(tt::sfpiadd(1, 0, 2, 1 | 4 | 8));
    assert_eq!(b.u.flags, before.map(|x| !x));
    // Wraps.
    b.set(3, |_| u32::MAX);
    b.ok(tt::sfpiadd(1, 3, 3, 1));
    assert_eq!(b.u.lreg[3][0], 0);
}

#[test]
fn sfpsetcc_needs_predication_on_and_compares_as_int32() {
    let mut b = Bench::new();
    b.set(0, |l| {
        if l < 16 {
            f(-(l as f32) - 1.0)
        } else {
            f(l as f32)
        }
    });
    b.u.flags = [true; LANES];
    b.ok(tt::sfpsetcc(0, 0, 0, 0));
    assert!(
        b.u.flags.iter().all(|x| !x),
        "UseLaneFlagsForLaneEnable false: flags cleared"
    );
    b.ok(tt::sfpencc(0b01, 0, 2)); // predication on, flags true
    b.ok(tt::sfpsetcc(0, 0, 0, 0)); // LT0
    assert!(b.u.flags[0] && !b.u.flags[16]);
    // Now only lanes 0-15 are enabled: NE0 on LReg9 (zero) clears them, 16-31 untouched.
    b.ok(tt::sfpsetcc(0, 9, 0, 2));
    assert!(b.u.flags.iter().all(|x| !x));
    b.ok(tt::sfpencc(0b11, 0, 2 | 8)); // flags true again
    b.ok(tt::sfpsetcc(0, 0, 0, 4)); // GTE0
    assert!(!b.u.flags[0] && b.u.flags[16]);
    b.ok(tt::sfpencc(0b11, 0, 2 | 8));
    b.ok(tt::sfpsetcc(1, 0, 0, 1)); // immediate
    assert!(b.u.flags.iter().all(|&x| x));
    b.ok(tt::sfpsetcc(0, 0, 0, 8)); // clear
    assert!(b.u.flags.iter().all(|x| !x));
    // -0.0 is negative as an int32 (the page: software should flush it).
    b.ok(tt::sfpencc(0b11, 0, 2 | 8));
    b.set(1, |_| 0x8000_0000);
    b.ok(tt::sfpsetcc(0, 1, 0, 6));
    assert!(!b.u.flags[0], "-0 is not == 0");
}

#[test]
fn sfpencc_sets_toggles_and_resets() {
    let mut b = Bench::new();
    b.ok(tt::sfpencc(0, 0, 1)); // EC: toggle on, flags true
    assert!(b.u.use_flags[0] && b.u.flags[0]);
    b.ok(tt::sfpencc(0, 0, 1 | 8)); // toggle off, flags from R = 0
    assert!(!b.u.use_flags[0] && !b.u.flags[0]);
    b.ok(tt::sfpencc(0b10, 0, 8)); // use_flags kept, flags from R = 1
    assert!(!b.u.use_flags[0] && b.u.flags[0]);
}

#[test]
fn if_else_through_the_flag_stack() {
    let mut b = Bench::new();
    b.set(0, |l| (l as i32 - 16) as u32);
    b.ok(tt::sfpencc(0b11, 0, 2 | 8)); // on, all flags
    b.ok(tt::sfppushc());
    b.ok(tt::sfpsetcc(0, 0, 0, 0)); // if (x < 0)
    b.ok(tt::sfploadi(1, 2, 1)); //   y = 1
    b.ok(tt::sfpcompc()); // else
    b.ok(tt::sfploadi(1, 2, 2)); //   y = 2
    b.ok(tt::sfppopc(0));
    for l in 0..LANES {
        assert_eq!(b.u.lreg[1][l], if l < 16 { 1 } else { 2 }, "lane {l}");
    }
    assert!(b.u.flags.iter().all(|&x| x) && b.u.stack.is_empty());
    // SFPCOMPC on an empty stack treats the top as all-true.
    b.ok(tt::sfpsetcc(0, 0, 0, 0)).ok(tt::sfpcompc());
    assert!(!b.u.flags[0] && b.u.flags[16]);
}

#[test]
fn sfppopc_modes_and_the_full_stack_bug() {
    let mut b = Bench::new();
    assert!(b.run(tt::sfppopc(0)).unwrap_err().contains("empty"));
    b.ok(tt::sfpencc(0b01, 0, 2 | 8)); // on, flags false
    b.ok(tt::sfppushc()); // bottom: false
    b.ok(tt::sfpencc(0b11, 0, 2 | 8)); // flags true
    for _ in 0..7 {
        b.ok(tt::sfppushc());
    }
    assert!(b.run(tt::sfppushc()).unwrap_err().contains("full"));
    // Peek (Mod1 3: A && B) on a full stack copies the top over the bottom.
    b.ok(tt::sfppopc(3));
    assert_eq!(b.u.stack.len(), 8);
    assert!(
        b.u.stack[0].flags[0],
        "bottom overwritten by the top (hardware bug)"
    );
    b.ok(tt::sfppopc(13));
    assert!(!b.u.flags[0]);
    b.ok(tt::sfppopc(2)); // !B
    assert!(!b.u.flags[0]);
    b.ok(tt::sfppopc(14));
    assert!(b.u.flags[0] && b.u.use_flags[0]);
    b.ok(tt::sfppopc(15));
    assert!(!b.u.flags[0]);
    b.ok(tt::sfppopc(0));
    assert_eq!(b.u.stack.len(), 7);
    assert!(b.u.flags[0]);
}

#[test]
fn sfpload_and_sfpstore_lanes_map_to_four_rows_of_even_or_odd_columns() {
    let mut b = Bench::new();
    b.set(0, |l| f(l as f32 + 0.5));
    // FP32 store to rows 4-7, odd columns (Imm10 = 4 | 2).
    b.ok(tt::sfpstore(0, 3, 0, 4 | 2));
    for l in 0..LANES {
        let (row, col) = (4 + l / 8, (l % 8) * 2 + 1);
        let stored = b.dst.read32(row, col);
        assert_eq!(
            formats::unshuffle_fp32(stored),
            f(l as f32 + 0.5),
            "lane {l}"
        );
        assert_eq!(b.dst.read32(row, col - 1), 0);
    }
    b.ok(tt::sfpload(1, 3, 0, 4 | 2));
    assert_eq!(b.u.lreg[1], b.u.lreg[0]);
    // BF16 and FP16 truncate on the way out.
    b.set(2, |_| f(1.0 + 2f32.powi(-9) + 2f32.powi(-20)));
    b.ok(tt::sfpstore(2, 2, 0, 8)).ok(tt::sfpload(3, 2, 0, 8));
    assert_eq!(b.u.lreg[3][0], f(1.0));
    b.ok(tt::sfpstore(2, 1, 0, 12)).ok(tt::sfpload(3, 1, 0, 12));
    assert_eq!(b.u.lreg[3][0], f(1.0 + 2f32.powi(-9)));
    // FP16 saturates: 2^20 comes back as the largest FP16 pattern.
    b.set(2, |_| f(2f32.powi(20)));
    b.ok(tt::sfpstore(2, 1, 0, 12)).ok(tt::sfpload(3, 1, 0, 12));
    assert_eq!(b.u.lreg[3][0], ((31 + 112) << 23) | (0x3ff << 13));
    // An FP32 denormal is stored as zero of its sign (ttsim); INT32 keeps the bits, and so
    // does FP32 under the ISA page's rules.
    b.set(2, |_| 0x8000_0123);
    b.ok(tt::sfpstore(2, 3, 0, 12)).ok(tt::sfpload(3, 3, 0, 12));
    assert_eq!(b.u.lreg[3][0], 0x8000_0000);
    b.ok(tt::sfpstore(2, 4, 0, 12)).ok(tt::sfpload(3, 4, 0, 12));
    assert_eq!(b.u.lreg[3][0], 0x8000_0123);
    b.u.numerics = crate::config::Numerics::IsaDoc;
    b.ok(tt::sfpstore(2, 3, 0, 12)).ok(tt::sfpload(3, 3, 0, 12));
    assert_eq!(b.u.lreg[3][0], 0x8000_0123);
}

#[test]
fn integer_formats_round_trip() {
    let mut b = Bench::new();
    b.set(0, |l| (l as i32 - 16) as u32);
    // INT32_SM and INT8_COMP: two's complement out, sign-magnitude in Dst, and back.
    for mode in [12, 13] {
        b.ok(tt::sfpstore(0, mode, 0, 16))
            .ok(tt::sfpload(1, mode, 0, 16));
        assert_eq!(b.u.lreg[1], b.u.lreg[0], "mode {mode}");
    }
    assert_eq!(formats::unshuffle_fp32(b.dst.read32(16, 0)), 0x8000_0010);
    // INT16 keeps the sign bit and the low 15 bits as they are (sign-magnitude expected).
    b.ok(tt::sfpstore(0, 8, 0, 16)).ok(tt::sfpload(1, 8, 0, 16));
    for l in 0..LANES {
        let x = b.u.lreg[0][l];
        assert_eq!(b.u.lreg[1][l], (x & 0x8000_0000) | (x & 0x7fff), "lane {l}");
    }
    // LO16_ONLY / HI16_ONLY write one half each; LO16 rotates.
    b.set(2, |_| 0xaaaa_bbbb);
    b.ok(tt::sfpstore(2, 14, 0, 20))
        .ok(tt::sfpstore(2, 15, 0, 24));
    b.set(3, |_| 0x1111_2222);
    b.ok(tt::sfpload(3, 14, 0, 20));
    assert_eq!(b.u.lreg[3][0], 0x1111_bbbb);
    b.ok(tt::sfpload(3, 15, 0, 24));
    assert_eq!(b.u.lreg[3][0], 0xaaaa_bbbb);
    b.ok(tt::sfpstore(2, 9, 0, 28));
    assert_eq!(b.dst.read32(28, 0), 0xbbbb_aaaa);
    b.ok(tt::sfpstore(2, 11, 0, 28));
    assert_eq!(b.dst.read16(28, 0), 0, "MOD0_FMT_ZERO");
}

#[test]
fn int32_all_ignores_the_lane_mask_and_the_high_rwc_bits() {
    let mut b = Bench::new();
    b.set(0, |l| l as u32 + 1);
    b.ok(tt::sfpencc(0b01, 0, 2 | 8)); // every lane disabled
    b.rwc.dst.v = 8 | 2; // INT32_ALL adds only (Dst + Base) & 3
    b.ok(tt::sfpstore(0, 10, 0, 0));
    assert_eq!(b.dst.read32(0, 1), 1, "odd columns from RWC bit 1");
    b.ok(tt::sfpstore(0, 3, 0, 0));
    assert_eq!(
        b.dst.read32(8, 1),
        0,
        "FP32 mode respects the disabled lanes"
    );
}

#[test]
fn addr_mod_advances_the_dst_counter_but_not_fidelity() {
    let mut b = Bench::new();
    // ADDR_MOD_DST_SEC1: increment 4; with ADDR_MOD_SET_Base, AddrMod 1 reads SEC5.
    b.thread_cfg[24] = 4;
    b.thread_cfg[28] = 0x400 | 8; // SEC5: Dst_Cr += 8, Dst = Dst_Cr
    b.rwc.fidelity = 1;
    b.set(0, |_| f(7.0));
    b.ok(tt::sfpstore(0, 3, 1, 0)).ok(tt::sfpstore(0, 3, 1, 0));
    assert_eq!(b.rwc.dst.v, 8);
    assert_eq!(
        formats::unshuffle_fp32(b.dst.read32(4, 0)),
        f(7.0),
        "second store at row 4"
    );
    assert_eq!(b.rwc.fidelity, 1);
    b.thread_cfg[2] = 1;
    b.ok(tt::sfpload(1, 3, 1, 0));
    assert_eq!((b.rwc.dst.v, b.rwc.dst.cr), (8, 8));
    // DEST_TARGET_REG_CFG_MATH_Offset adds to the row.
    b.thread_cfg[2] = 0;
    b.thread_cfg[1] = 32;
    b.rwc.dst.v = 0;
    b.ok(tt::sfpstore(0, 3, 0, 0));
    assert_eq!(formats::unshuffle_fp32(b.dst.read32(32, 0)), f(7.0));
    // A bias section that would move ExtraAddrModBit stops the run.
    b.thread_cfg[48] = 1;
    assert!(b
        .run(tt::sfpload(1, 3, 0, 0))
        .unwrap_err()
        .contains("ExtraAddrModBit"));
    b.thread_cfg[48] = 0;
    b.cfg[6] = 16;
    assert!(b
        .run(tt::sfpload(1, 3, 0, 0))
        .unwrap_err()
        .contains("DEST_REGW_BASE"));
}

#[test]
fn unsupported_modes_are_named() {
    assert!(unsupported(tt::sfpload(12, 3, 0, 0))
        .unwrap()
        .contains("SFPLOADMACRO"));
    assert!(unsupported(tt::sfpmov(0, 13, 0)).unwrap().contains("VD 13"));
    assert!(unsupported(tt::sfpstore(0, 0, 0, 0))
        .unwrap()
        .contains("SRCB"));
    assert!(unsupported(tt::sfpnop()).is_none());
}

#[test]
fn sfpmuli_and_sfpaddi_use_the_mad_rules_and_hazard() {
    let mut b = Bench::new();
    b.set(0, |l| f(l as f32)).set(1, |_| 0x0000_0001);
    b.ok(tt::sfpmuli(0x3FC0, 0, 0)); // x 1.5
    assert_eq!(b.u.lreg[0][3], f(4.5));
    b.ok(tt::sfpaddi(0xBE80, 0, 0)); // - 0.25
    assert_eq!(b.u.lreg[0][3], f(4.25));
    assert_eq!(b.u.lreg[0][0], f(-0.25));
    // A denormal times anything is +0; 0 + 0 (from -0.25 + 0.25) is +0.
    b.ok(tt::sfpmuli(0x7F00, 1, 0));
    assert_eq!(b.u.lreg[1][0], 0);
    b.at(tt::sfpaddi(0x3E80, 0, 0), 100).unwrap();
    assert_eq!(b.u.lreg[0][0], 0);
    assert!(
        b.at(tt::sfpand(0, 2), 101).is_err(),
        "SFPADDI's result, next cycle"
    );
}

#[test]
fn bitwise_instructions() {
    let mut b = Bench::new();
    b.set(0, |_| 0xF0F0_1234).set(1, |_| 0x0FF0_FF00);
    b.ok(tt::sfpand(0, 1));
    assert_eq!(b.u.lreg[1][0], 0x00F0_1200);
    b.ok(tt::sfpor(0, 1));
    assert_eq!(b.u.lreg[1][0], 0xF0F0_1234);
    b.set(1, |_| 0xFFFF_0000).ok(tt::sfpxor(0, 1));
    assert_eq!(b.u.lreg[1][0], 0x0F0F_1234);
    b.ok(tt::sfpnot(0, 2));
    assert_eq!(b.u.lreg[2][0], !0xF0F0_1234);
    // Writes to VD >= 8 are dropped.
    b.ok(tt::sfpnot(0, 9));
    assert_eq!(b.u.read(9, 0), 0);
}

#[test]
fn sfpabs_integer_and_float() {
    let mut b = Bench::new();
    let cases = [
        -5i32 as u32,
        i32::MIN as u32,
        f(-2.5),
        0xFFC0_0000,
        0xFF80_0000,
        7,
    ];
    b.set(0, |l| cases[l % cases.len()]);
    b.ok(tt::sfpabs(0, 1, 0)).ok(tt::sfpabs(0, 2, 1));
    let int: Vec<u32> = (0..6).map(|l| b.u.lreg[1][l]).collect();
    let fl: Vec<u32> = (0..6).map(|l| b.u.lreg[2][l]).collect();
    assert_eq!(
        int,
        [
            5,
            i32::MIN as u32,
            f(-2.5).wrapping_neg(),
            0x0040_0000,
            0x0080_0000,
            7
        ]
    );
    // Float mode: -5 (0xFFFFFFFB) is a -NaN pattern, so it stays.
    // -NaN stays -NaN; -Inf (0xFF800000) counts as "-NaN or above" per the page's test.
    assert_eq!(fl, [0xFFFF_FFFB, 0, f(2.5), 0xFFC0_0000, 0xFF80_0000, 7]);
}

#[test]
fn sign_exponent_and_mantissa_fields() {
    let mut b = Bench::new();
    b.set(0, |_| f(-1.5)).set(1, |_| f(8.0));
    // SETSGN from LReg[VD]'s sign, then from Imm1.
    b.ok(tt::sfpsetsgn(0, 0, 1, 0));
    assert_eq!(b.u.lreg[1][0], f(1.5));
    b.ok(tt::sfpsetsgn(1, 1, 2, 1));
    assert_eq!(b.u.lreg[2][0], f(-1.5));
    // SETEXP: Imm8, VD's exponent, VD's low bits.
    b.ok(tt::sfpsetexp(128, 0, 3, 1));
    assert_eq!(b.u.lreg[3][0], f(-3.0));
    b.set(4, |_| f(8.0)).ok(tt::sfpsetexp(0, 0, 4, 2));
    assert_eq!(b.u.lreg[4][0], f(-12.0));
    b.set(4, |_| 126).ok(tt::sfpsetexp(0, 0, 4, 0));
    assert_eq!(b.u.lreg[4][0], f(-0.75));
    // SETMAN: Imm12 << 11, or VD's low 23 bits.
    // (LReg1 is 1.5 now.)
    b.ok(tt::sfpsetman(0xC00, 1, 5, 1));
    assert_eq!(b.u.lreg[5][0], f(1.75));
    b.set(5, |_| f(5.25)).ok(tt::sfpsetman(0, 1, 5, 0));
    assert_eq!(b.u.lreg[5][0], f(1.3125));
    // EXEXP: debiased, raw, and the flags (exponent < 0 -> flag; inverted).
    b.set(6, |l| f(2f32.powi(l as i32 - 4)));
    b.ok(tt::sfpexexp(6, 7, 2));
    assert_eq!((b.u.lreg[7][0], b.u.lreg[7][5]), (-4i32 as u32, 1));
    assert!(b.u.flags[0] && !b.u.flags[4]);
    b.ok(tt::sfpexexp(6, 7, 1 | 2 | 8));
    assert_eq!(b.u.lreg[7][4], 127);
    assert!(b.u.flags[0], "raw exponent is never < 0; inverted");
    // EXMAN with and without the hidden bit.
    b.ok(tt::sfpexman(0, 2, 0));
    assert_eq!(b.u.lreg[2][0], 0x00C0_0000);
    b.ok(tt::sfpexman(0, 2, 1));
    assert_eq!(b.u.lreg[2][0], 0x0040_0000);
    // DIVP2: set the exponent, or add with wrap, leaving Inf/NaN alone.
    b.ok(tt::sfpdivp2(127, 0, 2, 0));
    assert_eq!(b.u.lreg[2][0], f(-1.5));
    b.ok(tt::sfpdivp2(-2i32 as u32, 1, 2, 1)); // 8-bit wrapping add: 127 + 254 = 125
    assert_eq!(b.u.lreg[2][0], f(0.375));
    b.set(3, |_| f(f32::INFINITY)).ok(tt::sfpdivp2(5, 3, 3, 1));
    assert_eq!(b.u.lreg[3][0], f(f32::INFINITY));
    b.set(3, |_| f(2f32.powi(127))).ok(tt::sfpdivp2(2, 3, 3, 1));
    assert_eq!(b.u.lreg[3][0], 0, "254 + 2 wraps to exponent 0");
}

#[test]
fn sfplz_and_sfpshft() {
    let mut b = Bench::new();
    b.set(0, |l| if l == 0 { 0 } else { 0x8000_0000 >> (l - 1) });
    b.ok(tt::sfplz(0, 1, 2));
    assert_eq!((b.u.lreg[1][0], b.u.lreg[1][1], b.u.lreg[1][5]), (32, 0, 4));
    assert!(!b.u.flags[0] && b.u.flags[1]);
    // NOSGN_MASK: the sign bit does not count; CC_COMP inverts.
    b.ok(tt::sfplz(0, 1, 4 | 2 | 8));
    assert_eq!(b.u.lreg[1][1], 32);
    assert!(b.u.flags[1] && !b.u.flags[2]);
    // SFPSHFT by Imm12 (negative: logical right) and by LReg[VC].
    b.set(2, |_| 0x8000_00F0).ok(tt::sfpshft(4, 0, 2, 1));
    assert_eq!(b.u.lreg[2][0], 0x0000_0F00);
    b.ok(tt::sfpshft(-8i32 as u32, 0, 2, 1));
    assert_eq!(b.u.lreg[2][0], 0x0000_000F);
    b.set(3, |l| l as u32)
        .set(2, |_| 1)
        .ok(tt::sfpshft(0, 3, 2, 0));
    assert_eq!((b.u.lreg[2][0], b.u.lreg[2][31]), (1, 0x8000_0000));
    b.set(3, |_| -33i32 as u32)
        .set(2, |_| 0x100)
        .ok(tt::sfpshft(0, 3, 2, 0));
    assert_eq!(b.u.lreg[2][0], 0x80, "-33 shifts right by 33 & 31 = 1");
}

#[test]
fn sfpswap_swaps_or_orders_in_sign_magnitude_order() {
    let mut b = Bench::new();
    b.set(0, |l| f(l as f32 - 16.0)).set(1, |_| f(0.5));
    b.ok(tt::sfpswap(0, 1, 0));
    assert_eq!((b.u.lreg[0][0], b.u.lreg[1][0]), (f(0.5), f(-16.0)));
    // Mod1 1: VD = min, VC = max in every lane (VC = 0, VD = 1).
    b.ok(tt::sfpswap(0, 1, 1));
    assert_eq!((b.u.lreg[1][0], b.u.lreg[0][0]), (f(-16.0), f(0.5)));
    assert_eq!((b.u.lreg[1][31], b.u.lreg[0][31]), (f(0.5), f(15.0)));
    // Mod1 2: lanes 16-31 get the opposite order.
    b.ok(tt::sfpswap(0, 1, 2));
    assert_eq!((b.u.lreg[1][31], b.u.lreg[0][31]), (f(15.0), f(0.5)));
    // -0 < +0 and -NaN below -Inf in this order.
    assert!(bits::sign_mag_is_smaller(0x8000_0000, 0));
    assert!(bits::sign_mag_is_smaller(0xFFC0_0000, 0xFF80_0000));
    assert!(bits::sign_mag_is_smaller(f(-2.0), f(-1.0)));
    assert!(unsupported(tt::sfpswap(0, 1, 9))
        .unwrap()
        .contains("undefined"));
    // In the next cycle only SFPNOP is accepted (hardware stalls anything else).
    b.at(tt::sfpswap(0, 1, 0), 100).unwrap();
    assert!(!b.u.accepts(tt::sfpmov(0, 2, 0), 101) && b.u.accepts(tt::sfpnop(), 101));
    assert!(b.u.accepts(tt::sfpmov(0, 2, 0), 102));
}

/// `SFPCONFIG` with `VD` 11, as `SFPCONFIG.md`'s model: `Imm16` at bits 8-23, `VD` 4-7,
/// `Mod1` 0-3.
fn sfpconfig(imm16: u32, vd: u32, mod1: u32) -> u32 {
    0x91 << 24 | imm16 << 8 | vd << 4 | mod1
}

#[test]
fn sfpconfig_writes_lreg11_from_lreg0_s_first_eight_lanes() {
    let mut b = Bench::new();
    b.set(0, |l| 100 + l as u32);
    assert_eq!(b.u.read(11, 9), 0, "zero at reset");
    // tt-metal's firmware: SFPLOADI LReg[0] = -1.0 (BF16 0xbf80), then SFPCONFIG VD 11.
    b.ok(sfpconfig(0, 11, 0));
    assert_eq!(b.u.read(11, 3), 103);
    assert_eq!(
        b.u.read(11, 11),
        103,
        "lanes broadcast from the first eight"
    );
    b.ok(sfpconfig(0, 11, 1));
    assert_eq!(b.u.read(11, 30), 0xBF80_0000, "MOD1_IMM16_IS_VALUE: -1.0");
    // With a lane mask only lanes whose Imm16 bit 2 (lane & 7) is set are written.
    b.set(0, |_| 7).ok(sfpconfig(0b0100, 11, 8));
    assert_eq!(
        (b.u.read(11, 1), b.u.read(11, 9), b.u.read(11, 0)),
        (7, 7, 0xBF80_0000)
    );
    for vd in [0, 8, 12, 15] {
        assert!(unsupported(sfpconfig(0, vd, 0))
            .unwrap()
            .contains("not modelled"));
    }
}
