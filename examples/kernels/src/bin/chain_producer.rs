//! BRISC, first stage of the three-stage chain (producer -> compute -> consumer, through
//! CB 0 and CB 4, no DRAM) whose critical path the tests know by construction: each stage
//! does a fixed amount of work per tile, and the [`SLOW_STAGE`] (1: this one) [`SLOW_STEPS`]
//! more.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, value_zone, wait};

fn main() {
    let (_, tiles) = args();
    for t in 0..tiles {
        let _tile = value_zone!("produce-tile", t);
        instrument(t);
        {
            let _w = wait!("chain-space", cb_back(0));
            Cb(CB_IN0).reserve_back();
        }
        steps(50);
        slow_stage(stage::READER);
        Cb(CB_IN0).push_back();
    }
}

kernel!(brisc, main);
