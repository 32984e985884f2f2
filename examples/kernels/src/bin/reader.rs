//! BRISC: streams input tiles into the CBs the unpacker reads.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{data, kernel, wait, zone};

fn main() {
    let (op, tiles) = args();
    data!("tiles", tiles as u64);
    for t in 0..tiles {
        let _tile = zone!("read-tile");
        slow_stage(stage::READER);
        let in0 = {
            let _w = wait!("reserve-in0", cb_back(0));
            Cb(CB_IN0).reserve_back()
        };
        {
            let _r = zone!("noc-read-in0");
            copy_tile(IN0 + t * TILE_BYTES, in0);
        }
        Cb(CB_IN0).push_back();
        if op.is_binary() {
            let in1 = {
                let _w = wait!("reserve-in1", cb_back(1));
                Cb(CB_IN1).reserve_back()
            };
            {
                let _r = zone!("noc-read-in1");
                copy_tile(IN1 + t * TILE_BYTES, in1);
            }
            Cb(CB_IN1).push_back();
        }
    }
}

kernel!(brisc, main);
