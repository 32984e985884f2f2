//! TRISC1: once a half of `Dst` is free (semaphore `DST_FREE`), has the Matrix Unit compute
//! a tile from `SrcA`/`SrcB` into it (`ELWADD`, `ELWMUL`, `MVMUL`; relu moves `SrcA` to
//! `Dst` and zeroes its negative datums on the Vector Unit), then gives the `Src` banks back
//! (semaphore `SRC_FREE`) and hands the tile to the packer (semaphore `DST_READY`). The
//! Matrix Unit itself waits at the wait gate until the unpackers have filled the banks.
//! `Dst` is 16-bit BF16 and every multiplication uses fidelity phase 0 ("LoFi"):
//! `example_abi::bf16` is the host reference.
#![no_std]
#![no_main]

use ttprof_example_kernels::tensix::*;
use ttprof_example_kernels::*;
use ttprof_rt::{kernel, value_zone, wait};

/// `ThreadConfig` indices of `ADDR_MOD_AB_SEC<k>` and `ADDR_MOD_DST_SEC<k>`.
const fn addr_mod_ab(k: u32) -> u32 {
    7 + 2 * k
}
const fn addr_mod_dst(k: u32) -> u32 {
    23 + k
}

/// The four address-modifier sections the math thread's instructions name: `(SrcA and
/// SrcB increments or clears, Dst increment or clear)`. Every op sets all four, as the
/// previous op on this core may have left others.
fn addr_mods(op: Op) -> [(u32, u32); 4] {
    if op == Op::Matmul {
        // SrcA += a, SrcB += b between MVMULs; Dst rows come from the immediates.
        [(16, 0), (48 | (8 << 8), 0), (48 | (24 << 8), 0), (16 | (40 << 8), 0)]
    } else {
        // 0: the next 8 rows of all three; 1: back to row 0 (the tile's last
        // instruction); 2: no step (ZEROACC, SFPLOAD, SFPSTORE).
        [(8 | (8 << 8), 8), (0x8080, 0x800), (0, 0), (0, 0)]
    }
}

/// Eight ELWADD/ELWMUL over a tile at `Dst` row `dst`, the last giving both banks back and
/// clearing the counters. ELWMUL adds its products to `Dst`: the tile's rows are zeroed
/// first (four ZEROACC of 16 rows, with section 2 so they leave the counters alone).
fn eltwise_tile(mul: bool, dst: u32) {
    if mul {
        for k in 0..4 {
            push(zeroacc(false, 1, 2, dst / 16 + k));
        }
    }
    for k in 0..8 {
        let (flips, am) = if k == 7 { (0b11, 1) } else { (0, 0) };
        push(if mul {
            elwmul(flips, 0, am, dst)
        } else {
            elwadd(flips, false, 0, am, dst)
        });
    }
}

/// Relu: `SrcA` to `Dst` (eight MOVA2D of 8 rows), `SrcA` back to the unpacker, then the
/// Vector Unit over the 64 rows, four rows of even then odd columns at a time: lanes with
/// the sign bit set become zero.
fn relu_tile(dst: u32) {
    for k in 0..8 {
        push(mova2d(false, 0, if k == 7 { 1 } else { 0 }, true, dst));
    }
    push(cleardvalid(0b01, false, false));
    for g in 0..32 {
        let row = dst + (g >> 1) * 4 + (g & 1) * 2;
        push(sfpload(0, 2, 2, row)); // LReg0 = Dst (BF16)
        push(sfpsetcc(0, 0, 0, 0)); // flags = LReg0 < 0
        push(sfpmov(9, 0, 0)); // there, LReg0 = LReg9 (zero)
        push(sfpencc(0, 0, 0)); // every lane again
        push(sfpstore(0, 2, 2, row));
    }
}

/// One 32x32 matmul into the zeroed `Dst` tile at row `dst`: 16 MVMULs of 8 rows, K slice
/// outer; SrcA/SrcB move by the address modifiers, `Dst` rows come from the immediate. The
/// last gives both banks back.
fn matmul_tile(dst: u32) {
    const AM: [u32; 8] = [0, 1, 0, 2, 0, 1, 0, 3];
    for k in 0..4 {
        push(zeroacc(false, 1, 0, dst / 16 + k));
    }
    push(setrwc(0, 0, 0, 0, 0b0111)); // counters back to 0 (ZEROACC moved them)
    for ki in 0..2 {
        for n in 0..8u32 {
            let (mi, h, ni) = (n >> 2, (n >> 1) & 1, n & 1);
            let flips = if ki == 1 && n == 7 { 0b11 } else { 0 };
            push(mvmul(flips, false, AM[n as usize], dst + 16 * (2 * mi + ni) + 8 * h));
        }
    }
}

fn main() {
    let (op, tiles) = args();
    // ALU formats: SrcA BF16, SrcB BF16, Dst BF16 (16-bit Dst).
    cfg(1, (FMT_BF16 << 17) | (FMT_BF16 << 21) | (FMT_BF16 << 25));
    push(seminit(2, 0, 1 << sem::DST_READY));
    push(seminit(2, 2, 1 << sem::DST_FREE));
    for (k, (ab, dst)) in addr_mods(op).into_iter().enumerate() {
        push(setc16(addr_mod_ab(k as u32), ab));
        push(setc16(addr_mod_dst(k as u32), dst));
    }
    if op == Op::Relu {
        push(sfpencc(1, 0, 2)); // lane predication on, every flag true
    }
    for t in 0..tiles {
        let _tile = value_zone!("math-tile", t);
        slow_stage(stage::MATH);
        {
            let _w = wait!("wait-dst-free", tensix_sem(1));
            sem_take(sem::DST_FREE);
        }
        let dst = 64 * (t % 2);
        if op == Op::Add {
            // Rows 0..8 of the tile += SrcA + SrcB, again and again: each reads the rows the
            // one before wrote (a Dst read after write), the banks stay valid (section 2: no
            // counter step), and the tile's own ELWADDs below overwrite the rows.
            for _ in 0..rd(EXTRA_ELWADDS) {
                push(elwadd(0, true, 0, 2, dst));
            }
        }
        match op {
            Op::Add | Op::Mul => eltwise_tile(op == Op::Mul, dst),
            Op::Relu => relu_tile(dst),
            Op::Matmul => matmul_tile(dst),
        }
        post(sem::SRC_FREE); // a Src bank free for the unpacker
        post(sem::DST_READY); // the tile is in Dst
    }
    let _w = wait!("wait-coprocessor-done", ttsync);
    ttsync();
}

kernel!(trisc1, main);
