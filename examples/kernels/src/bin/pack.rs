//! TRISC2: moves result tiles into the CB the writer drains.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{event, kernel, wait, zone};

fn main() {
    let (_op, tiles) = args();
    for _ in 0..tiles {
        let _tile = zone!("pack-tile");
        slow_stage(stage::PACK);
        let d = {
            let _w = wait!("wait-dst", cb_front(3));
            Cb(CB_DST).wait_front()
        };
        let o = {
            let _w = wait!("wait-out-space", cb_back(4));
            Cb(CB_OUT).reserve_back()
        };
        {
            let _p = zone!("pack-copy");
            copy_tile(d, o);
        }
        Cb(CB_DST).pop_front();
        Cb(CB_OUT).push_back();
        event!("tile-packed");
    }
}

kernel!(trisc2, main);
