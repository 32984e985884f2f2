//! TRISC1: one counted zone (`counted_zone!`) over 24 Vector Unit instructions its Tensix
//! thread issues (`SFPLOADI`, `SFPMOV`: no operand banks needed), closed after TTSync so the
//! thread is done; then 8 more outside any counted zone. With
//! `ttprof run --counters fpu=SFPU_COUNTER` the zone carries 24 and the op 32.
#![no_std]
#![no_main]

use ttprof_example_kernels::tensix::*;
use ttprof_rt::{counted_zone, kernel, zone};

/// `n` pairs: LReg0 = an immediate, LReg1 = LReg0.
fn vector_pairs(n: u32) {
    for k in 0..n {
        push(sfploadi(0, 0, k));
        push(sfpmov(0, 1, 0));
    }
}

fn main() {
    {
        let _z = counted_zone!("sfpu-24");
        vector_pairs(12);
        ttsync();
    }
    let _z = zone!("sfpu-8");
    vector_pairs(4);
    ttsync();
}

kernel!(trisc1, main);
