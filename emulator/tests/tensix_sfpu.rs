//! The Vector Unit (SFPU) through whole kernels: a C kernel on TRISC1 runs relu (FP32 and
//! BF16) and a multiply-add over `Dst` tiles the test fills directly (the unpackers are not
//! needed), compared with a host reference written from the pages' functional models; and
//! the diagnoses of what software must not do.

mod common;

use common::gcc::build;
use common::prog::*;
use common::*;
use riscv_linker::tensix as tt;
use riscv_linker::{mmio, Arch, Risc};
use ttprof_emu::FaultKind;

/// `Dst` keeps FP32 as `Sign, ManHi(7), Exp(8), ManLo(16)` (`SFPSTORE.md`, `FP32Shuffle`).
fn shuffle32(x: u32) -> u32 {
    let hi = (x >> 16) as u16;
    (u32::from(shuffle16(hi)) << 16) | (x & 0xffff)
}

/// BF16 in `Dst`: `Sign, Man(7), Exp(8)` (`BF16Shuffle`).
fn shuffle16(x: u16) -> u16 {
    (x & 0x8000) | ((x & 0x7f) << 8) | ((x & 0x7f80) >> 7)
}

fn unshuffle32(x: u32) -> u32 {
    let hi = (x >> 16) as u16;
    let hi = (hi & 0x8000) | ((hi & 0xff) << 7) | ((hi & 0x7f00) >> 8);
    (u32::from(hi) << 16) | (x & 0xffff)
}

/// The host reference of `SFPMAD` on Wormhole, by ttsim's rules (docs/design/
/// tensix-coprocessor.md, "Numerics"), on exact values: inputs with exponent 0 are zero;
/// the product keeps 27 significant bits below its exponent `ea + eb - 127`, truncated, any
/// lost bit setting the last one; the operand of smaller exponent is truncated to the
/// larger's 2^-26 units the same way (unless nothing is left); the signed sum of units is
/// normalised (a right shift keeping only the sum's own last bit as sticky), rounded to
/// nearest even on three guard bits; a zero or below-normal result is +0, a product that
/// underflows on its own leaves `c` as it is. This test's inputs have no NaN or infinity
/// in `b` and `c`: an `x` of exponent 255 makes `Sign | 0x7F800001` OR-ed with the bits
/// of the rest (here the product is infinite, so the sum overflows: the NaN alone).
fn mad_ref(a: u32, b: u32, c: u32) -> u32 {
    let parts = |x: u32| -> (i128, i32) {
        let e = ((x >> 23) & 0xff) as i32;
        let m = if e == 0 {
            0
        } else {
            ((x & 0x7f_ffff) | 0x80_0000) as i128
        };
        (if x >> 31 != 0 { -m } else { m }, e)
    };
    let ((ma, ea), (mb, eb), (mc, ec)) = (parts(a), parts(b), parts(c));
    if ea == 255 {
        return if ma.unsigned_abs() == 0x80_0000 && mb != 0 {
            ((a ^ b) & 0x8000_0000) | 0x7f80_0000
        } else {
            ((a ^ b) & 0x8000_0000) | 0x7f80_0001
        };
    }
    // Truncate |v| (in units of 2^-shift) to whole units, a lost bit setting the last one.
    let chop = |v: i128, shift: u32, keep_zero: bool| -> i128 {
        let q = v.abs() >> shift.min(120);
        let lost = (q << shift.min(120)) != v.abs();
        let q = if q == 0 && keep_zero {
            0
        } else {
            q | lost as i128
        };
        v.signum() * q
    };
    let pe = ea + eb - 127;
    if ma == 0 || mb == 0 || pe < 0 {
        return if mc == 0 { 0 } else { c };
    }
    // The product in units of 2^(pe-127-26): 48 bits at 2^(pe-127-46), truncated.
    let p = chop(ma * mb, 20, false);
    let cu = mc * 8; // c in units of 2^(ec-127-26)
    let e = pe.max(ec);
    let sum = chop(p, (e - pe) as u32, true) + chop(cu, (e - ec) as u32, true);
    if sum == 0 {
        return 0;
    }
    let sign = if sum < 0 { 0x8000_0000 } else { 0 };
    let mut m = sum.unsigned_abs();
    let mut e = e;
    while m >= 1 << 27 {
        m = (m >> 1) | (m & 1);
        e += 1;
    }
    while m < 1 << 26 {
        m <<= 1;
        e -= 1;
    }
    if e >= 255 {
        return sign | 0x7f80_0000;
    }
    if e < 0 {
        return 0;
    }
    let mut r = ((e as u32) << 23) + ((m >> 3) as u32 & 0x7f_ffff);
    let g = (m & 7) as u32;
    if g > 4 || (g == 4 && r & 1 == 1) {
        r += 1;
    }
    if r >> 23 == 0 {
        0
    } else {
        sign | r
    }
}

/// `SFPSETCC` compares the bits as an int32: anything with the sign bit set is "< 0".
fn relu_ref(x: u32) -> u32 {
    if (x as i32) < 0 {
        0
    } else {
        x
    }
}

/// Inputs: the edge cases first (zeros, denormals, infinities, NaN, extremes), then
/// pseudo-random bit patterns of ordinary magnitude.
fn inputs(n: usize, seed: u32) -> Vec<u32> {
    let mut v = vec![
        0,
        0x8000_0000,
        0x0000_0001,
        0x8040_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f7f_ffff,
        0x3f80_0000,
        0xbf80_0000,
        0x0080_0000,
        0x3e80_0000, // 0.25: 1.5 x - 0.25 is not exact below
    ];
    let mut s = seed;
    while v.len() < n {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // Exponents 96..159 keep the values ordinary, signs both ways.
        let exp = 96 + (s >> 26);
        v.push((s & 0x8000_0000) | (exp << 23) | (s & 0x7f_ffff));
    }
    v
}

const KERNEL: &str = r#"
#include "ttprof_tensix.h"
#define PUSH ttprof_tensix_push
int main(void) {
    /* FP32 relu over Dst32b rows 0-63: four rows of even, then odd columns at a time. */
    PUSH(TTPROF_TENSIX_SFPENCC(1, 0, 2));            /* predication on, every flag true */
    for (unsigned g = 0; g < 32; g++) {
        unsigned row = (g >> 1) * 4 + (g & 1) * 2;
        PUSH(TTPROF_TENSIX_SFPLOAD(0, 3, 0, row));   /* LReg0 = Dst (FP32) */
        PUSH(TTPROF_TENSIX_SFPSETCC(0, 0, 0, 0));    /* flags = LReg0 < 0 */
        PUSH(TTPROF_TENSIX_SFPMOV(9, 0, 0));         /* there, LReg0 = LReg9 (zero) */
        PUSH(TTPROF_TENSIX_SFPENCC(0, 0, 0));        /* every lane again */
        PUSH(TTPROF_TENSIX_SFPSTORE(0, 3, 0, row));
    }
    /* Multiply-add over rows 64-127: LReg3 = LReg0 * 1.5 + (-0.25). */
    PUSH(TTPROF_TENSIX_SFPLOADI(1, 0, 0x3FC0));
    PUSH(TTPROF_TENSIX_SFPLOADI(2, 0, 0xBE80));
    for (unsigned g = 0; g < 32; g++) {
        unsigned row = 64 + (g >> 1) * 4 + (g & 1) * 2;
        PUSH(TTPROF_TENSIX_SFPLOAD(0, 3, 0, row));
        PUSH(TTPROF_TENSIX_SFPMAD(0, 1, 2, 3, 0));
        PUSH(TTPROF_TENSIX_SFPNOP());                /* SFPMAD.md: its result next cycle */
        PUSH(TTPROF_TENSIX_SFPSTORE(3, 3, 0, row));
    }
    /* BF16 relu over Dst16b rows 512-543, the rows walked by the Dst RWC: AddrMod 1
       (ADDR_MOD_DST_SEC1, ThreadConfig entry 24) adds 4 after each odd-column store. */
    PUSH(TTPROF_TENSIX_SETC16(24, 4));
    PUSH(TTPROF_TENSIX_SETRWC(0, 0, 0, 0, 4));       /* Dst counter = 0 */
    for (unsigned g = 0; g < 16; g++) {
        unsigned odd = g & 1;
        PUSH(TTPROF_TENSIX_SFPLOAD(0, 2, 0, 512 + odd * 2));
        PUSH(TTPROF_TENSIX_SFPSETCC(0, 0, 0, 0));
        PUSH(TTPROF_TENSIX_SFPLOADI(0, 0, 0));       /* BF16 zero */
        PUSH(TTPROF_TENSIX_SFPENCC(0, 0, 0));
        PUSH(TTPROF_TENSIX_SFPSTORE(0, 2, odd, 512 + odd * 2));
    }
    volatile uint32_t *sync = (volatile uint32_t *)TTSYNC;
    *sync = 0;
    (void)*sync;
    return 0;
}
"#;

#[test]
fn relu_and_multiply_add_over_dst_tiles_match_the_host_reference() {
    let arch = Arch::WormholeB0;
    let tile = t0(arch);
    let src = KERNEL.replace("TTSYNC", &format!("{:#x}u", mmio::TTSYNC_COPROCESSOR_DONE));
    let elf = build("sfpu", &src, arch, Risc::Trisc1);
    let mut dev = device(arch);
    let relu_in = inputs(64 * 16, 1);
    let mad_in = inputs(64 * 16, 2);
    let bf16_in: Vec<u16> = inputs(32 * 16, 3)
        .iter()
        .map(|&x| (x >> 16) as u16)
        .collect();
    for r in 0..64 {
        for c in 0..16 {
            let k = r * 16 + c;
            dev.set_tensix_dst32(0, tile, r, c, shuffle32(relu_in[k]))
                .unwrap();
            dev.set_tensix_dst32(0, tile, 64 + r, c, shuffle32(mad_in[k]))
                .unwrap();
        }
    }
    for r in 0..32 {
        for c in 0..16 {
            dev.set_tensix_dst16(0, tile, 512 + r, c, shuffle16(bf16_in[r * 16 + c]))
                .unwrap();
        }
    }
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc1,
        &std::fs::read(&elf).unwrap(),
        "sfpu.elf",
    )
    .unwrap();
    dev.run().unwrap_or_else(|e| panic!("{e}"));

    let mut diffs = Vec::new();
    for r in 0..64 {
        for c in 0..16 {
            let k = r * 16 + c;
            // SFPSTORE of FP32 writes a denormal as zero of its sign (ttsim's rule).
            let relu_out = relu_ref(relu_in[k]);
            let relu_want = if relu_out & 0x7f80_0000 == 0 {
                relu_out & 0x8000_0000
            } else {
                relu_out
            };
            let got = unshuffle32(dev.tensix_dst32(0, tile, r, c).unwrap());
            if got != relu_want {
                diffs.push(format!(
                    "relu [{r}][{c}] of {:#010x}: {got:#010x}",
                    relu_in[k]
                ));
            }
            let x = f32::from_bits(mad_in[k]);
            let want = mad_ref(mad_in[k], 1.5f32.to_bits(), (-0.25f32).to_bits());
            let got = unshuffle32(dev.tensix_dst32(0, tile, 64 + r, c).unwrap());
            if got != want {
                diffs.push(format!(
                    "mad [{r}][{c}] of {x:e}: {got:#010x}, want {want:#010x}"
                ));
            }
        }
    }
    for r in 0..32 {
        for c in 0..16 {
            let x = bf16_in[r * 16 + c];
            // SFPLOAD BF16 widens, relu, SFPSTORE BF16 flushes denormals to signed zero.
            let widened = u32::from(x) << 16;
            let mut want = (relu_ref(widened) >> 16) as u16;
            if want & 0x7f80 == 0 {
                want &= 0x8000;
            }
            let got = dev.tensix_dst16(0, tile, 512 + r, c).unwrap();
            if got != shuffle16(want) {
                diffs.push(format!("bf16 relu [{r}][{c}] of {x:#06x}: {got:#06x}"));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs[..diffs.len().min(20)].join("\n")
    );
    // The inputs did exercise the edge cases: a negative zero, a denormal, a NaN.
    assert_eq!(unshuffle32(dev.tensix_dst32(0, tile, 0, 1).unwrap()), 0);
    assert_eq!(
        unshuffle32(dev.tensix_dst32(0, tile, 64, 6).unwrap()),
        0x7f80_0001,
        "NaN * 1.5 - 0.25: the product's sign | 0x7F800001"
    );
    assert_eq!(
        unshuffle32(dev.tensix_dst32(0, tile, 64, 2).unwrap()),
        0xbe80_0000
    );
}

#[test]
fn reading_a_mad_result_in_the_next_cycle_stops_the_run() {
    let mut t = Prog::new();
    // Hold the Vector Unit instructions (B8) on a semaphore so they issue back to back.
    t.tt(tt::semwait(1 << 8, 1 << 0, 1));
    t.tt(tt::sfpmad(10, 10, 9, 3, 0))
        .tt(tt::sfpstore(3, 3, 0, 0));
    t.store(mmio::SEMAPHORE_BASE, 0).ttsync();
    let (f, msg) = run_fault(&[(Risc::Trisc1, &t)]);
    match f.kind {
        FaultKind::TensixExec {
            mnemonic, thread, ..
        } => {
            assert_eq!((mnemonic, thread), ("SFPSTORE", 1), "{msg}");
        }
        k => panic!("{k:?}"),
    }
    assert!(msg.contains("LReg[3]") && msg.contains("SFPNOP"), "{msg}");
    // With an SFPNOP between them the same kernel runs.
    let mut t = Prog::new();
    t.tt(tt::semwait(1 << 8, 1 << 0, 1));
    t.tt(tt::sfpmad(10, 10, 9, 3, 0))
        .tt(tt::sfpnop())
        .tt(tt::sfpstore(3, 3, 0, 0));
    t.store(mmio::SEMAPHORE_BASE, 0).ttsync();
    run_ok(&[(Risc::Trisc1, &t)]);
}

#[test]
fn flag_stack_misuse_and_unmodelled_modes_are_diagnosed() {
    let mut t = Prog::new();
    t.tt(tt::sfppopc(0)).ttsync();
    let (f, msg) = run_fault(&[(Risc::Trisc0, &t)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixExec {
                mnemonic: "SFPPOPC",
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("empty flag stack"), "{msg}");
    let mut t = Prog::new();
    t.tt(tt::sfpload(12, 3, 0, 0));
    let (f, msg) = run_fault(&[(Risc::Trisc0, &t)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixPush {
                mnemonic: "SFPLOAD",
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("SFPLOADMACRO"), "{msg}");
    // A Vector Unit instruction the model leaves out still stops the run at the push.
    let mut t = Prog::new();
    t.tt(0x7300_0000); // SFPLUT
    let (_, msg) = run_fault(&[(Risc::Trisc0, &t)]);
    assert!(msg.contains("SFPLUT is not modelled"), "{msg}");
}

const ENCODERS_C: &str = r#"
#include "ttprof_tensix.h"
int main(void) {
    volatile uint32_t *out = (volatile uint32_t *)0x30000;
    unsigned i = 0;
    out[i++] = TTPROF_TENSIX_SFPLOAD(3, 12, 2, 0x3FF);
    out[i++] = TTPROF_TENSIX_SFPLOADI(7, 10, 0xBEEF);
    out[i++] = TTPROF_TENSIX_SFPSTORE(5, 1, 3, 0x155);
    out[i++] = TTPROF_TENSIX_SFPMAD(1, 2, 3, 4, 8);
    out[i++] = TTPROF_TENSIX_SFPADD(10, 2, 3, 4, 4);
    out[i++] = TTPROF_TENSIX_SFPMUL(1, 2, 9, 4, 0);
    out[i++] = TTPROF_TENSIX_SFPMOV(15, 6, 3);
    out[i++] = TTPROF_TENSIX_SFPIADD(0xABC, 2, 3, 9);
    out[i++] = TTPROF_TENSIX_SFPSETCC(1, 5, 6, 1);
    out[i++] = TTPROF_TENSIX_SFPENCC(3, 0, 10);
    out[i++] = TTPROF_TENSIX_SFPCOMPC();
    out[i++] = TTPROF_TENSIX_SFPPUSHC();
    out[i++] = TTPROF_TENSIX_SFPPOPC(13);
    out[i++] = TTPROF_TENSIX_SFPNOP();
    out[i++] = TTPROF_TENSIX_SFPMULI(0x3FC0, 2, 8);
    out[i++] = TTPROF_TENSIX_SFPADDI(0xBE80, 3, 0);
    out[i++] = TTPROF_TENSIX_SFPDIVP2(0x1FE, 1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPEXEXP(1, 2, 11);
    out[i++] = TTPROF_TENSIX_SFPEXMAN(1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPSHFT(0xFF8, 1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPABS(1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPAND(1, 2);
    out[i++] = TTPROF_TENSIX_SFPOR(3, 4);
    out[i++] = TTPROF_TENSIX_SFPNOT(5, 6);
    out[i++] = TTPROF_TENSIX_SFPLZ(1, 2, 14);
    out[i++] = TTPROF_TENSIX_SFPSETEXP(0x180, 1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPSETMAN(0xABC, 1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPSETSGN(3, 1, 2, 1);
    out[i++] = TTPROF_TENSIX_SFPXOR(7, 0);
    out[i++] = TTPROF_TENSIX_SFPSWAP(3, 4, 8);
    return (int)i;
}
"#;

#[test]
fn the_c_vector_unit_encoders_match_the_rust_ones() {
    let arch = Arch::WormholeB0;
    let tile = t0(arch);
    let elf = build("sfpu_encoders", ENCODERS_C, arch, Risc::Trisc0);
    let mut dev = device(arch);
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc0,
        &std::fs::read(&elf).unwrap(),
        "enc.elf",
    )
    .unwrap();
    let s = dev.run().unwrap_or_else(|e| panic!("{e}"));
    let want = [
        tt::sfpload(3, 12, 2, 0x3FF),
        tt::sfploadi(7, 10, 0xBEEF),
        tt::sfpstore(5, 1, 3, 0x155),
        tt::sfpmad(1, 2, 3, 4, 8),
        tt::sfpadd(10, 2, 3, 4, 4),
        tt::sfpmul(1, 2, 9, 4, 0),
        tt::sfpmov(15, 6, 3),
        tt::sfpiadd(0xABC, 2, 3, 9),
        tt::sfpsetcc(1, 5, 6, 1),
        tt::sfpencc(3, 0, 10),
        tt::sfpcompc(),
        tt::sfppushc(),
        tt::sfppopc(13),
        tt::sfpnop(),
        tt::sfpmuli(0x3FC0, 2, 8),
        tt::sfpaddi(0xBE80, 3, 0),
        tt::sfpdivp2(0x1FE, 1, 2, 1),
        tt::sfpexexp(1, 2, 11),
        tt::sfpexman(1, 2, 1),
        tt::sfpshft(0xFF8, 1, 2, 1),
        tt::sfpabs(1, 2, 1),
        tt::sfpand(1, 2),
        tt::sfpor(3, 4),
        tt::sfpnot(5, 6),
        tt::sfplz(1, 2, 14),
        tt::sfpsetexp(0x180, 1, 2, 1),
        tt::sfpsetman(0xABC, 1, 2, 1),
        tt::sfpsetsgn(3, 1, 2, 1),
        tt::sfpxor(7, 0),
        tt::sfpswap(3, 4, 8),
    ];
    assert_eq!(
        s.hart(0, tile, Risc::Trisc0).unwrap().exit_code,
        Some(want.len() as u32)
    );
    for (i, w) in want.iter().enumerate() {
        let got = dev.read_u32(0, tile, 0x30000 + 4 * i as u32).unwrap();
        assert_eq!(got, *w, "encoder {i}: C {got:#010x}, Rust {w:#010x}");
    }
}

/// Emulator speed with the Vector Unit busy (run with `cargo test --release -p ttprof-emu
/// --test tensix_sfpu -- --ignored --nocapture speed`): TRISC1 pushes `MOP`s of 128
/// `SFPMAD`s (32 lanes each) in a loop; the unit takes one per cycle.
#[test]
#[ignore]
fn speed_with_the_vector_unit_busy() {
    let iters = 20_000u32;
    let mut p = Prog::new();
    // InsnA0 (MOP configuration word 3) = SFPMAD LReg3 = LReg0 * LReg1 + LReg2.
    p.store(mmio::MOP_CFG_BASE + 12, tt::sfpmad(0, 1, 2, 3, 0));
    p.0.extend(ttprof_emu::asm::li(C, iters));
    p.tt(tt::mop(0, 127, 0));
    p.0.extend([
        ttprof_emu::asm::addi(C, C, -1),
        ttprof_emu::asm::bne(C, 0, -8),
    ]);
    p.ttsync();
    let start = std::time::Instant::now();
    let (_, r) = run_cores(&[(Risc::Trisc1, &p)]);
    let secs = start.elapsed().as_secs_f64();
    let s = r.unwrap();
    let sfpu = iters as u64 * 128;
    let cycles = s.harts.iter().map(|h| h.cycles).max().unwrap();
    assert!(
        cycles >= sfpu,
        "one Vector Unit instruction per cycle at most"
    );
    println!(
        "MOPs of 128 SFPMADs: {sfpu} Vector Unit instructions in {cycles} cycles, {secs:.3} s: \
         {:.1} M SFPU instructions/s ({:.0} M lane operations/s)",
        sfpu as f64 / secs / 1e6,
        32.0 * sfpu as f64 / secs / 1e6
    );
}
