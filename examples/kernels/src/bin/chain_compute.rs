//! TRISC1, the chain's middle stage (see `chain_producer`): CB 0 -> CB 4, slow when
//! [`SLOW_STAGE`] is 3.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, value_zone, wait};

fn main() {
    let (_, tiles) = args();
    for t in 0..tiles {
        let _tile = value_zone!("compute-tile", t);
        instrument(t);
        {
            let _w = wait!("chain-in", cb_front(0));
            Cb(CB_IN0).wait_front();
        }
        {
            let _w = wait!("chain-out-space", cb_back(4));
            Cb(CB_OUT).reserve_back();
        }
        steps(50);
        slow_stage(stage::MATH);
        Cb(CB_IN0).pop_front();
        Cb(CB_OUT).push_back();
    }
}

kernel!(trisc1, main);
