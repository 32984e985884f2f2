//! NCRISC: drains result tiles to the output tensor.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, sum_wait, zone};

fn main() {
    let (_op, tiles) = args();
    for t in 0..tiles {
        let _tile = zone!("write-tile");
        slow_stage(stage::WRITER);
        let o = {
            let _w = sum_wait!("wait-out", cb_front(4));
            Cb(CB_OUT).wait_front()
        };
        {
            let _w = zone!("noc-write");
            copy_tile(o, OUT + t * TILE_BYTES);
        }
        Cb(CB_OUT).pop_front();
    }
}

kernel!(ncrisc, main);
