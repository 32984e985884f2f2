//! TRISC1: computes result tiles, a block of rows at a time.
#![no_std]
#![no_main]

use ttprof_example_kernels::*;
use ttprof_rt::{kernel, value_zone, wait, zone};

fn main() {
    let (op, tiles) = args();
    let rows = if op == Op::Matmul { 8 } else { TILE_DIM };
    for t in 0..tiles {
        let _tile = value_zone!("math-tile", t);
        slow_stage(stage::MATH);
        let src = {
            let _w = wait!("wait-src", cb_front(2));
            Cb(CB_SRC).wait_front()
        };
        let dst = {
            let _w = wait!("wait-dst-space", cb_back(3));
            Cb(CB_DST).reserve_back()
        };
        row_blocks(rows, |first| {
            let _b = zone!("math-rows");
            compute_rows(op, src, src + TILE_BYTES, dst, first, rows);
        });
        Cb(CB_SRC).pop_front();
        Cb(CB_DST).push_back();
    }
}

kernel!(trisc1, main);
