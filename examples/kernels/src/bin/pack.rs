//! TRISC2: once the math thread has a tile in `Dst` (semaphore `DST_READY`), has packer 0
//! move that half of `Dst` into a page of the CB the writer drains, gives the half back
//! (semaphore `DST_FREE`) and publishes the page when the pack is done (TTSync).
#![no_std]
#![no_main]

use ttprof_example_kernels::tensix::*;
use ttprof_example_kernels::*;
use ttprof_rt::{event, kernel, wait, zone};

fn main() {
    let (_op, tiles) = args();
    cfg(58, 1 | (FMT_BF16 << 4) | (FMT_BF16 << 8)); // no compression, Out/In_data_format
    cfg(14, 0); // Read_32b_data: 16-bit Dst
    cfg(20, 0xffff); // edge mask: every column kept
    cfg(8, 2048 << 12); // Ystride: one tile of Dst (64 rows of 16 BF16)
    push(setadcxy(0b100, [0; 4], 0b1111)); // the packer's counters from zero, every op
    push(setc16(31, 1)); // ADDR_MOD_PACK_SEC0: Y += 1 (the other half of Dst next)
    push(setc16(32, 1 << 5)); // SEC1: Y = 0
    push(setadcxx(0b100, 1023, 0));
    push(setdmareg(0, 9));
    for t in 0..tiles {
        let _tile = zone!("pack-tile");
        slow_stage(stage::PACK);
        let o = {
            let _w = wait!("wait-out-space", cb_back(4));
            Cb(CB_OUT).reserve_back()
        };
        {
            let _w = wait!("wait-dst-ready", tensix_sem(0));
            sem_take(sem::DST_READY);
        }
        {
            let _p = zone!("pack-dst");
            wrcfg16(57, l1_units(o)); // L1_Dest_addr
            push(pacr(t % 2, false, 1, false, false, false, true));
            post(sem::DST_FREE); // the Dst half is free again
        }
        {
            let _w = wait!("wait-packed", ttsync);
            ttsync();
        }
        Cb(CB_OUT).push_back();
        event!("tile-packed");
    }
}

kernel!(trisc2, main);
