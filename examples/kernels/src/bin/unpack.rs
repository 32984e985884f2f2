//! TRISC0: has the unpackers move each input tile from its CB page into `SrcA` (unpacker 0)
//! and `SrcB` (unpacker 1) on the Tensix coprocessor, once the math thread has given a bank
//! back (semaphore `SRC_FREE`), then frees the CB pages when the unpack is done (TTSync).
#![no_std]
#![no_main]

use ttprof_example_kernels::tensix::*;
use ttprof_example_kernels::*;
use ttprof_rt::{kernel, wait, zone};

/// `THCON_SEC<u>_REG0`: unpacker `u`'s configuration words.
const fn sec(u: u32) -> u32 {
    52 + 40 * u
}

fn main() {
    let (op, tiles) = args();
    for u in 0..2 {
        cfg(sec(u), FMT_BF16 | (1 << 4) | (1024 << 16)); // TileDescriptor: uncompressed, XDim 1024
        cfg(sec(u) + 1, 1); // YDim
        cfg(sec(u) + 8, FMT_BF16 | (2 << 4)); // Out_data_format, Throttle_mode x4
        cfg(sec(u) + 9, 1); // UNPACR's context 0 (tt-metal's form): uncompressed
    }
    cfg(72, 64); // Dest_cntx0_address: SrcA datum 64, row 4, the first row the unpacker writes
    cfg(74, 1024); // Tile_x_dim_cntx0
    push(setc16(3, 1 << 2)); // SRCA_SET_SetOvrdWithAddr: 64 rows at once
    push(setadcxx(0b011, 1023, 0)); // X from 0 to 1023, both unpackers
    push(setdmareg(0, 9)); // GPR 4's high half
    push(seminit(2, 2, 1 << sem::SRC_FREE)); // two free Src banks
    for _ in 0..tiles {
        let _tile = zone!("unpack-tile");
        slow_stage(stage::UNPACK);
        let a = {
            let _w = wait!("wait-in0", cb_front(0));
            Cb(CB_IN0).wait_front()
        };
        let b = op.is_binary().then(|| {
            let _w = wait!("wait-in1", cb_front(1));
            Cb(CB_IN1).wait_front()
        });
        {
            let _w = wait!("wait-src-free", tensix_sem(2));
            sem_take(sem::SRC_FREE);
        }
        // MVMUL computes SrcB @ SrcA: a matmul's in0 goes to SrcB, in1 to SrcA.
        let (src_a, src_b) = match (op, b) {
            (Op::Matmul, Some(b)) => (b, Some(a)),
            _ => (a, b),
        };
        {
            let _u = zone!("unpack-a");
            wrcfg16(sec(0) + 12, l1_units(src_a)); // Base_address
            push(unpacr(0, 0, true, false));
        }
        if let Some(src_b) = src_b {
            let _u = zone!("unpack-b");
            wrcfg16(sec(1) + 12, l1_units(src_b));
            push(unpacr(1, 0, true, false));
        }
        {
            // The CB pages are free once the unpackers have read them.
            let _w = wait!("wait-unpacked", ttsync);
            ttsync();
        }
        Cb(CB_IN0).pop_front();
        if b.is_some() {
            Cb(CB_IN1).pop_front();
        }
    }
}

kernel!(trisc0, main);
