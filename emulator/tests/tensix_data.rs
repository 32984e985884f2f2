//! The Tensix data path end to end: three TRISC kernels on one tile, the way tt-metal
//! splits a compute kernel. TRISC0 unpacks two tiles from L1 into `SrcA`/`SrcB` (handing the
//! banks to the Matrix Unit with `FlipSrc`), TRISC1 runs the Matrix Unit into `Dst` and posts
//! a semaphore, TRISC2 waits on it and packs `Dst` back to L1. Outputs are compared with a
//! host reference that follows the Matrix Unit's rounding as ttsim computes it (the smaller
//! operand aligned to the larger's mantissa, ties away from zero; docs/design/
//! tensix-coprocessor.md, "Numerics").

mod common;

use common::prog::*;
use common::{device, t0};
use riscv_linker::tensix as tt;
use riscv_linker::{mmio, Arch, Risc};

/// L1 addresses of the operands and the result.
const IN_A: u32 = 0x20000;
const IN_B: u32 = 0x21000;
const OUT: u32 = 0x22000;

/// Format codes.
const FP32: u32 = 0;
const FP16: u32 = 1;
const TF32: u32 = 4;
const BF16: u32 = 5;

/// `sw` of `value` to backend configuration word `index` (bank 0).
fn cfg(p: &mut Prog, index: u32, value: u32) {
    p.store(mmio::TENSIX_CFG_BASE + 4 * index, value);
}

/// TRISC0: unpackers 0 and 1 read 1024 datums of format `fmt` at `IN_A`/`IN_B` into
/// `SrcA`/`SrcB`.
fn unpack_kernel(fmt: u32) -> Prog {
    let mut p = unpack_config(fmt);
    p.tt(tt::unpacr(0, 0, true, false))
        .tt(tt::unpacr(1, 0, true, false));
    p.ttsync();
    p
}

/// TRISC0's configuration for [`unpack_kernel`].
fn unpack_config(fmt: u32) -> Prog {
    unpack_config_io(fmt, fmt)
}

/// [`unpack_config`] converting `in_fmt` in L1 to `out_fmt` in `SrcA`/`SrcB`.
fn unpack_config_io(in_fmt: u32, out_fmt: u32) -> Prog {
    let mut p = Prog::new();
    for (u, addr) in [(0u32, IN_A), (1, IN_B)] {
        let sec = 52 + 40 * u;
        cfg(&mut p, sec, in_fmt | (1 << 4) | (1024 << 16)); // TileDescriptor: uncompressed, XDim
        cfg(&mut p, sec + 1, 1); // YDim 1
        cfg(&mut p, sec + 8, out_fmt | (2 << 4)); // Out_data_format, Throttle_mode x4
        cfg(&mut p, sec + 9, 1); // Disable_zero_compress_cntx0 (UNPACR's context 0)
        cfg(&mut p, sec + 12, addr / 16 - 1); // Base_address (a 16-byte header precedes)
    }
    // SrcA output address (Dest_cntx0_address, in datums): 64, row 4, the first row the
    // page writes; unpacker 0's X dimension of context 0.
    cfg(&mut p, 72, 64);
    cfg(&mut p, 74, 1024);
    p.tt(tt::setc16(3, 1 << 2)); // SRCA_SET_SetOvrdWithAddr: 64 rows in one UNPACR
    p.tt(tt::setadcxx(0b011, 1023, 0)); // X0 = 0, X1 = 1023 for both unpackers
    p
}

/// TRISC2: waits for semaphore 0, packs 1024 datums of `Dst` as `fmt` to `OUT`.
fn pack_kernel(fmt: u32, dst32: bool) -> Prog {
    let mut p = Prog::new();
    cfg(&mut p, 57, OUT / 16 - 1); // L1_Dest_addr (+1 for the tile header)
    cfg(&mut p, 58, 1 | (fmt << 4) | (fmt << 8)); // no compression, Out/In_data_format
    cfg(&mut p, 14, dst32 as u32); // Read_32b_data
    cfg(&mut p, 20, 0xffff); // edge mask: every column kept
    p.tt(tt::setadcxx(0b100, 1023, 0));
    p.tt(tt::semwait(0b101, 1, 1)) // wait while semaphore 0 is 0
        .tt(tt::pacr(0, false, 1, false, false, false, true))
        .tt(tt::semget(1));
    p.ttsync();
    p
}

/// TRISC1's configuration: `SrcA` format, `Dstacc` (the packer's intermediate format),
/// FP32 `Dst` or not; semaphore 0 starts at 0.
fn math_prologue(srca: u32, dstacc: u32, dst32: bool) -> Prog {
    let mut p = Prog::new();
    cfg(
        &mut p,
        1,
        (srca << 17) | (srca << 21) | (dstacc << 25) | ((dst32 as u32) << 29),
    );
    p.tt(tt::seminit(1, 0, 1));
    p
}

fn run_three(
    t0p: &Prog,
    t1p: &Prog,
    t2p: &Prog,
    a: &[u8],
    b: &[u8],
    out_len: usize,
) -> (Vec<u8>, ttprof_emu::RunSummary) {
    let mut dev = device(Arch::WormholeB0);
    let tile = t0(Arch::WormholeB0);
    dev.write_l1(0, tile, IN_A, a).unwrap();
    dev.write_l1(0, tile, IN_B, b).unwrap();
    let (dev, r) = run_cores_on(
        dev,
        &[
            (Risc::Trisc0, t0p),
            (Risc::Trisc1, t1p),
            (Risc::Trisc2, t2p),
        ],
    );
    let s = r.unwrap_or_else(|e| panic!("the kernels faulted: {e}"));
    let mut out = vec![0u8; out_len];
    dev.read_l1(0, tile, OUT, &mut out).unwrap();
    (out, s)
}

/// `n` normal BF16 patterns from `seed` ([`example_abi::bf16::normal_values`]).
fn bf16_values(seed: u64, n: usize) -> Vec<u16> {
    example_abi::bf16::normal_values(seed).take(n).collect()
}

fn bytes16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// [`bytes16`] back: little-endian 16-bit datums.
fn words16(b: &[u8]) -> Vec<u16> {
    b.chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

// Host reference (`example_abi::bf16`, shared with the demo): the smaller operand rounded
// to the larger's 11-bit mantissa, the sum rounded into BF16, ties away from zero; the
// inputs are normal, so no flushing happens.
use example_abi::bf16::add as bf16_add;

#[test]
fn eltwise_add_of_two_bf16_tiles_unpack_math_pack() {
    let (a, b) = (bf16_values(1, 1024), bf16_values(2, 1024));
    let (out, _) = run_three(
        &unpack_kernel(BF16),
        &eltwise_math(BF16, BF16, false),
        &pack_kernel(BF16, false),
        &bytes16(&a),
        &bytes16(&b),
        2048,
    );
    let got = words16(&out);
    let want: Vec<u16> = a.iter().zip(&b).map(|(&x, &y)| bf16_add(x, y)).collect();
    let differing = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(
        differing,
        0,
        "first datums: got {:04x?} want {:04x?}",
        &got[..8],
        &want[..8]
    );
    // The reference is not the identity: rounding happened somewhere.
    assert!(a.iter().zip(&b).any(|(&x, &y)| {
        let exact = f32::from_bits((x as u32) << 16) + f32::from_bits((y as u32) << 16);
        exact.to_bits() & 0xffff != 0
    }));
}

#[test]
fn unpacr_words_as_tt_metal_emits_them_use_the_contexts_registers() {
    // tt-metal's LLK sets MultiContextMode (bit 7, its OvrdThreadId) and Last (bit 0) in
    // every UNPACR, and configures context 0's registers instead of the tile descriptor's
    // flag and UNP0_ADDR_BASE_REG_1: Disable_zero_compress_cntx0, Tile_x_dim_cntx0 and
    // Dest_cntx0_address = 4 * 16 (SrcA row 4, the first row the page writes).
    let (a, b) = (bf16_values(31, 1024), bf16_values(32, 1024));
    let mut p = Prog::new();
    for (u, addr) in [(0u32, IN_A), (1, IN_B)] {
        let sec = 52 + 40 * u;
        cfg(&mut p, sec, BF16 | (1024 << 16)); // TileDescriptor: IsUncompressed = 0
        cfg(&mut p, sec + 1, 1); // YDim 1
        cfg(&mut p, sec + 8, BF16 | (2 << 4)); // Out_data_format, Throttle_mode x4
        cfg(&mut p, sec + 9, 1); // Disable_zero_compress_cntx0
        cfg(&mut p, sec + 12, addr / 16 - 1); // Base_address
    }
    cfg(&mut p, 72, 4 * 16); // THCON_SEC0_REG5_Dest_cntx0_address
    cfg(&mut p, 74, 1024); // THCON_SEC0_REG5_Tile_x_dim_cntx0
    p.tt(tt::setc16(3, 1 << 2)); // SRCA_SET_SetOvrdWithAddr
    p.tt(tt::setadcxx(0b011, 1023, 0));
    let ovrd_last = (1 << 7) | 1;
    p.tt(tt::unpacr(0, 0, true, false) | ovrd_last)
        .tt(tt::unpacr(1, 0, true, false) | ovrd_last)
        .ttsync();
    let (out, _) = run_three(
        &p,
        &eltwise_math(BF16, BF16, false),
        &pack_kernel(BF16, false),
        &bytes16(&a),
        &bytes16(&b),
        2048,
    );
    let got = words16(&out);
    let want: Vec<u16> = a.iter().zip(&b).map(|(&x, &y)| bf16_add(x, y)).collect();
    assert_eq!(got, want);
}

/// TRISC1: eight `ELWADD`s over the tile (`SrcA`, `SrcB` and `Dst` step 8 rows by
/// `ADDR_MOD_*_SEC0`; the last gives both banks back), then the semaphore for the packer.
fn eltwise_math(srca: u32, dstacc: u32, dst32: bool) -> Prog {
    let mut math = math_prologue(srca, dstacc, dst32);
    math.tt(tt::setc16(7, 8 | (8 << 8))).tt(tt::setc16(23, 8));
    for k in 0..8 {
        math.tt(tt::elwadd(if k == 7 { 0b11 } else { 0 }, false, 0, 0, 0));
    }
    math.tt(tt::sempost(1)).ttsync();
    math
}

/// `x` to a multiple of `unit`, ties away from zero.
fn to_unit_away(x: f64, unit: f64) -> f64 {
    x.signum() * (x.abs() / unit + 0.5).floor() * unit
}

/// The Matrix Unit's `ELWADD` of two values with `bits`-bit mantissas and exponents
/// `ea >= eb` (unbiased): the smaller is first rounded to the larger's last mantissa unit,
/// half away from zero (ttsim's rule, docs/design/tensix-coprocessor.md "Numerics"); the
/// sum is then exact.
fn aligned_sum(big: f64, small: f64) -> f64 {
    if big == 0.0 {
        return small;
    }
    let unit = 2f64.powi(big.abs().log2().floor() as i32 - 10);
    big + to_unit_away(small, unit)
}

/// Host reference for FP16 (inputs and result normal or zero): [`aligned_sum`] rounded to
/// FP16 half away from zero; a zero sum is +0.
fn fp16_add(a: u16, b: u16) -> u16 {
    let f = |h: u16| {
        let e = ((h >> 10) & 0x1f) as i32;
        let m = 1.0 + (h & 0x3ff) as f64 / 1024.0;
        let v = m * 2f64.powi(e - 15);
        if h & 0x8000 != 0 {
            -v
        } else {
            v
        }
    };
    let (x, y) = (f(a), f(b));
    let s = if x.abs() >= y.abs() {
        aligned_sum(x, y)
    } else {
        aligned_sum(y, x)
    };
    if s == 0.0 {
        return 0;
    }
    let e = s.abs().log2().floor() as i32;
    let r = to_unit_away(s, 2f64.powi(e - 10));
    let e = r.abs().log2().floor() as i32;
    let m = (r.abs() / 2f64.powi(e) * 1024.0) as u16 - 1024;
    let sign = if r < 0.0 { 0x8000 } else { 0 };
    sign | (((e + 15) as u16) << 10) | m
}

#[test]
fn eltwise_add_of_fp16_tiles() {
    let pick = |seed| -> Vec<u16> {
        bf16_values(seed, 1024)
            .into_iter()
            .map(|x| (x & 0x8000) | ((12 + ((x >> 7) & 0x7)) << 10) | (x & 0x3ff))
            .collect()
    };
    let (a, b) = (pick(11), pick(12));
    let (out, _) = run_three(
        &{
            let mut p = unpack_config(FP16);
            p.tt(tt::unpacr(0, 0, true, false))
                .tt(tt::unpacr(1, 0, true, false))
                .ttsync();
            p
        },
        &eltwise_math(FP16, FP16, false),
        &pack_kernel(FP16, false),
        &bytes16(&a),
        &bytes16(&b),
        2048,
    );
    for (i, c) in out.chunks(2).enumerate() {
        let got = u16::from_le_bytes([c[0], c[1]]);
        assert_eq!(
            got,
            fp16_add(a[i], b[i]),
            "datum {i}: {:04x} + {:04x}",
            a[i],
            b[i]
        );
    }
}

#[test]
fn fp32_tiles_are_unpacked_as_tf32_and_added_in_fp32_dst() {
    let vals = |seed| -> Vec<u32> {
        bf16_values(seed, 1024)
            .into_iter()
            .enumerate()
            .map(|(i, x)| ((x as u32) << 16) | (i as u32 * 0x9e37) & 0xffff)
            .collect()
    };
    let (a, b) = (vals(21), vals(22));
    let bytes32 = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let mut unpack = unpack_config_io(FP32, TF32);
    unpack
        .tt(tt::unpacr(0, 0, true, false))
        .tt(tt::unpacr(1, 0, true, false))
        .ttsync();
    let (out, _) = run_three(
        &unpack,
        &eltwise_math(TF32, FP32, true),
        &pack_kernel(FP32, true),
        &bytes32(&a),
        &bytes32(&b),
        4096,
    );
    for (i, c) in out.chunks(4).enumerate() {
        let got = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        // The unpacker keeps TF32's 10 mantissa bits; the smaller operand is aligned to the
        // larger's 11-bit mantissa, the sum kept exactly in FP32 Dst (+0 if it cancels).
        let tf32 = |x: u32| f32::from_bits(x & !0x1fff) as f64;
        let (x, y) = (tf32(a[i]), tf32(b[i]));
        let s = if x.abs() >= y.abs() {
            aligned_sum(x, y)
        } else {
            aligned_sum(y, x)
        };
        assert_eq!(
            got,
            (s as f32).to_bits() & !(((s == 0.0) as u32) << 31),
            "datum {i}"
        );
    }
}

/// `(M, K)` matrix entry of a 32x32 matrix stored as four 16x16 faces
/// `[(0,0), (0,1), (1,0), (1,1)]`, each row-major: the datum index of `(r, c)`.
fn face_index(r: usize, c: usize) -> usize {
    ((r / 16) * 2 + c / 16) * 256 + (r % 16) * 16 + c % 16
}

#[test]
fn matmul_of_two_32x32_tiles_with_mvmul_in_fp32_dst() {
    // C = X @ Y. X goes to SrcB (unpacker 1), Y to SrcA (unpacker 0): Dst += SrcB @ SrcA.
    // Entries k/8 (|k| < 16) need at most four mantissa bits: one fidelity phase is exact.
    let val = |s: usize| ((s * 7 + 3) % 31) as f32 / 8.0 - 15.0 / 8.0;
    let x: Vec<f32> = (0..1024).map(val).collect(); // row-major X[r][c] = x[32r + c]
    let y: Vec<f32> = (0..1024).map(|i| val(i * 5 + 11)).collect();
    let faces = |m: &[f32]| {
        let mut f = vec![0u16; 1024];
        for r in 0..32 {
            for c in 0..32 {
                f[face_index(r, c)] = (m[32 * r + c].to_bits() >> 16) as u16;
            }
        }
        bytes16(&f)
    };
    let mut math = math_prologue(BF16, FP32, true);
    math.tt(tt::zeroacc(false, 3, 0, 0));
    // Faces: X (mi, ki) at SrcB rows 16 (2 mi + ki); Y (ki, ni) at SrcA rows 16 (2 ki + ni);
    // C (mi, ni) at Dst32b rows 16 (2 mi + ni).
    mvmul_addr_mods(&mut math);
    mvmul_tile(&mut math, 0);
    math.tt(tt::cleardvalid(0b11, false, false));
    math.tt(tt::sempost(1)).ttsync();
    let (out, _) = run_three(
        &unpack_kernel(BF16),
        &math,
        &pack_kernel(FP32, true),
        &faces(&y)[..], // IN_A: unpacker 0, SrcA
        &faces(&x)[..], // IN_B: unpacker 1, SrcB
        4096,
    );
    let got: Vec<f32> = out
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for r in 0..32 {
        for c in 0..32 {
            // The hardware's order: one float accumulation per 16-wide K slice, then Dst +=.
            let mut acc = 0f32;
            for ki in 0..2 {
                let mut s = 0f32;
                for k in 0..16 {
                    s += x[32 * r + 16 * ki + k] * y[32 * (16 * ki + k) + c];
                }
                acc += s;
            }
            assert_eq!(got[face_index(r, c)], acc, "C[{r}][{c}]");
        }
    }
}

#[test]
fn math_waits_for_unpacked_data_and_the_packer_for_the_semaphore() {
    // The math thread starts first; its ELWADD can only issue once FlipSrc has handed both
    // banks over, and the pack waits on the semaphore: the result is still exact.
    let (a, b) = (bf16_values(7, 1024), bf16_values(8, 1024));
    let math = eltwise_math(BF16, BF16, false);
    let mut unpack = Prog::new();
    unpack.spin(2000); // the unpacker starts late
    unpack.0.extend(unpack_kernel(BF16).0);
    let (out, s) = run_three(
        &unpack,
        &math,
        &pack_kernel(BF16, false),
        &bytes16(&a),
        &bytes16(&b),
        2048,
    );
    assert_eq!(out[..2], bf16_add(a[0], b[0]).to_le_bytes());
    assert_eq!(out[2046..], bf16_add(a[1023], b[1023]).to_le_bytes());
    let t1 = s.hart(0, t0(Arch::WormholeB0), Risc::Trisc1).unwrap();
    assert!(
        t1.cycles > 4000,
        "TRISC1's TTSync waited for the late unpack: {}",
        t1.cycles
    );
}

/// `ADDR_MOD_AB_SEC<k>` (ThreadConfig word `7 + 2k`): `SrcA += a`, `SrcB += b`.
fn addr_mod_ab(p: &mut Prog, k: u32, a: u32, b: u32) {
    p.tt(tt::setc16(7 + 2 * k, a | (b << 8)));
}

/// The matmul's 16 `MVMUL`s for one 32x32 tile in faces, K-slice outer so that no `Dst`
/// block is read within four cycles of its write: `SrcA`/`SrcB` move by address modifiers
/// only (`mvmul_addr_mods` sets them up), `Dst` rows come from the immediate.
fn mvmul_tile(p: &mut Prog, flips_last: u32) {
    p.tt(tt::setrwc(0, 0, 0, 0, 0b0111));
    for ki in 0..2 {
        for (n, am) in [0, 1, 0, 2, 0, 1, 0, 3].into_iter().enumerate() {
            let (mi, h, ni) = (n as u32 >> 2, (n as u32 >> 1) & 1, n as u32 & 1);
            let flips = if ki == 1 && n == 7 { flips_last } else { 0 };
            p.tt(tt::mvmul(flips, false, am, 16 * (2 * mi + ni) + 8 * h));
        }
    }
}

/// `SrcA`/`SrcB` steps between consecutive `MVMUL`s of [`mvmul_tile`] (6-bit counters).
fn mvmul_addr_mods(p: &mut Prog) {
    addr_mod_ab(p, 0, 16, 0);
    addr_mod_ab(p, 1, 48, 8);
    addr_mod_ab(p, 2, 48, 24);
    addr_mod_ab(p, 3, 16, 40);
}

/// Eight `ELWADD`s over a 32x32 tile at `Dst` row `dst`, the last giving the banks back
/// and clearing the counters (address modifier 1).
fn elwadd_tile(p: &mut Prog, dst: u32) {
    for k in 0..8 {
        let (flips, am) = if k == 7 { (0b11, 1) } else { (0, 0) };
        p.tt(tt::elwadd(flips, false, 0, am, dst));
    }
}

fn elwadd_addr_mods(p: &mut Prog) {
    addr_mod_ab(p, 0, 8, 8);
    p.tt(tt::setc16(23, 8)); // Dst += 8
    p.tt(tt::setc16(9, 0x8080)); // section 1: clear SrcA, SrcB
    p.tt(tt::setc16(24, 0x800)); // and Dst
}

/// TRISC1 alone, the banks handed over by `SETDVALID`: the Matrix Unit's own rate.
fn math_only(tiles: u32, matmul: bool) -> u64 {
    let mut math = math_prologue(BF16, BF16, false);
    if matmul {
        mvmul_addr_mods(&mut math);
    } else {
        elwadd_addr_mods(&mut math);
    }
    // One tile's instructions, recorded in the replay buffer by the first tile and played
    // back by one push per later tile: the Matrix Unit, not the pushing core, sets the pace.
    let mut tile = Prog::new();
    tile.tt(tt::setdvalid(0b11));
    if matmul {
        mvmul_tile(&mut tile, 0b11);
    } else {
        elwadd_tile(&mut tile, 0);
    }
    let n = tile.0.len() as u32;
    math.tt(tt::replay(0, n, true, true));
    math.0.extend(&tile.0);
    for _ in 1..tiles {
        math.tt(tt::replay(0, n, false, false));
    }
    math.ttsync();
    let (dev, r) = run_cores_on(device(Arch::WormholeB0), &[(Risc::Trisc1, &math)]);
    let s = r.unwrap_or_else(|e| panic!("{e}"));
    drop(dev);
    s.hart(0, t0(Arch::WormholeB0), Risc::Trisc1)
        .unwrap()
        .cycles
}

/// Unpack, math and pack of `tiles` BF16 tiles, `Dst` double-buffered between math and
/// pack with semaphores 0 (tiles ready) and 1 (halves free): TRISC2's cycles.
fn pipeline(tiles: u32, matmul: bool) -> u64 {
    let mut unpack = unpack_config(BF16);
    for _ in 0..tiles {
        unpack
            .tt(tt::unpacr(0, 0, true, false))
            .tt(tt::unpacr(1, 0, true, false));
    }
    unpack.ttsync();
    let mut math = math_prologue(BF16, BF16, false);
    math.tt(tt::seminit(2, 2, 1 << 1)); // two free Dst halves
    if matmul {
        mvmul_addr_mods(&mut math);
    } else {
        elwadd_addr_mods(&mut math);
    }
    for n in 0..tiles {
        math.tt(tt::semwait(0b100_0010, 1 << 1, 1)) // a free half (B1, B6)
            .tt(tt::semget(1 << 1));
        if matmul {
            for k in 0..4 {
                math.tt(tt::zeroacc(false, 1, 0, 4 * (n % 2) + k)); // 16 rows each
            }
            // The same 16 MVMULs on the other half: DEST_TARGET_REG_CFG_MATH_Offset.
            math.tt(tt::setc16(1, 64 * (n % 2)));
            mvmul_tile(&mut math, 0b11);
        } else {
            elwadd_tile(&mut math, 64 * (n % 2));
        }
        math.tt(tt::sempost(1));
    }
    math.ttsync();
    let mut pack = Prog::new();
    cfg(&mut pack, 57, OUT / 16 - 1);
    cfg(&mut pack, 58, 1 | (BF16 << 4) | (BF16 << 8));
    cfg(&mut pack, 20, 0xffff);
    cfg(&mut pack, 8, 2048 << 12); // Ystride: one Dst half
    pack.tt(tt::setc16(31, 1)) // ADDR_MOD_PACK_SEC0: Y += 1
        .tt(tt::setc16(32, 1 << 5)); // SEC1: Y = 0
    pack.tt(tt::setadcxx(0b100, 1023, 0));
    for n in 0..tiles {
        pack.tt(tt::semwait(0b101, 1, 1))
            .tt(tt::pacr(n % 2, false, 1, false, false, false, true))
            .tt(tt::semget(1))
            .tt(tt::sempost(1 << 1));
    }
    pack.ttsync();
    let (a, b) = (bf16_values(3, 1024), bf16_values(4, 1024));
    let (_, s) = run_three(&unpack, &math, &pack, &bytes16(&a), &bytes16(&b), 16);
    s.hart(0, t0(Arch::WormholeB0), Risc::Trisc2)
        .unwrap()
        .cycles
}

#[test]
fn the_pipelines_run_many_tiles() {
    // Not a timing assertion: many tiles go through both pipelines without a deadlock and
    // take longer than one.
    assert!(pipeline(6, false) > pipeline(2, false));
    assert!(pipeline(6, true) > pipeline(2, true));
    assert!(math_only(4, true) > math_only(1, true));
}

/// Cycles per 32x32 tile (steady state: the difference between 8 and 40 tiles) against
/// the Matrix Unit's documented peak (MatrixUnit.md: `ELWADD` 128 additions, `MVMUL` 4096
/// flops a cycle: 8 and 16 cycles a tile at one fidelity phase).
#[test]
#[ignore]
fn cycles_per_tile() {
    let per = |f: &dyn Fn(u32) -> u64| (f(40) - f(8)) as f64 / 32.0;
    for (name, matmul, peak) in [("eltwise add", false, 8.0), ("matmul", true, 16.0)] {
        let mu = per(&|n| math_only(n, matmul));
        let full = per(&|n| pipeline(n, matmul));
        println!(
            "{name}: Matrix Unit alone {mu:.1} cycles/tile ({:.0}% of peak {peak}), unpack+math+pack {full:.1} cycles/tile ({:.0}% of peak)",
            100.0 * peak / mu,
            100.0 * peak / full
        );
    }
}

#[test]
fn a_pack_with_the_default_configuration_stops_naming_compression() {
    // Reset configuration leaves Disable_zero_compress at 0: the packer would compress.
    let mut pack = Prog::new();
    pack.tt(tt::setadcxx(0b100, 15, 0))
        .tt(tt::pacr(0, false, 1, false, false, false, true))
        .ttsync();
    let (f, msg) = run_fault(&[(Risc::Trisc2, &pack)]);
    assert!(
        matches!(
            f.kind,
            ttprof_emu::FaultKind::TensixExec {
                thread: 2,
                risc: Risc::Trisc2,
                mnemonic: "PACR",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("compression") && msg.contains("TRISC_2"),
        "{msg}"
    );
}
