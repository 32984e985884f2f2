//! TRISC0: moves input tiles into source pages for the math core.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, wait, zone};

fn main() {
    let (op, tiles) = args();
    for _ in 0..tiles {
        let _tile = zone!("unpack-tile");
        slow_stage(stage::UNPACK);
        let src = {
            let _w = wait!("wait-src-space", cb_back(2));
            Cb(CB_SRC).reserve_back()
        };
        let a = {
            let _w = wait!("wait-in0", cb_front(0));
            Cb(CB_IN0).wait_front()
        };
        {
            let _u = zone!("unpack-a");
            copy_tile(a, src);
        }
        Cb(CB_IN0).pop_front();
        if op.is_binary() {
            let b = {
                let _w = wait!("wait-in1", cb_front(1));
                Cb(CB_IN1).wait_front()
            };
            {
                let _u = zone!("unpack-b");
                copy_tile(b, src + TILE_BYTES);
            }
            Cb(CB_IN1).pop_front();
        }
        Cb(CB_SRC).push_back();
    }
}

kernel!(trisc0, main);
