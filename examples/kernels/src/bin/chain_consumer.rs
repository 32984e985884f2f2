//! NCRISC, the chain's last stage (see `chain_producer`): drains CB 4, slow when
//! [`SLOW_STAGE`] is 5.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, value_zone, wait};

fn main() {
    let (_, tiles) = args();
    for t in 0..tiles {
        let _tile = value_zone!("consume-tile", t);
        instrument(t);
        {
            let _w = wait!("chain-data", cb_front(4));
            Cb(CB_OUT).wait_front();
        }
        steps(50);
        slow_stage(stage::WRITER);
        Cb(CB_OUT).pop_front();
    }
}

kernel!(ncrisc, main);
