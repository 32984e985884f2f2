//! BRISC: every record kind of the runtime, in an order its C++ twin (examples/cxx/twin.cpp,
//! through include/ttprof.h) repeats macro for macro: the test that C and C++ kernels write
//! exactly what ttprof-rt writes decodes both rings with `wire::decode` and compares them.
//!
//! Runtime argument 0 (`ttprof_rt::arg`): `n`, the iterations of the loop. Per launch: `n`
//! `outer` zones around an `inner` zone and a `value` zone (value = the iteration; `.set`
//! adds 100), an `event`, a `data` record, three `sum` measurements, a `wait` typed as
//! CB 3's front, a `long` zone of 40,000 cycles (not short: the 32-bit form), a flush, and
//! an `after-flush` zone.
#![no_std]
#![no_main]

use ttprof_example_kernels::steps;
use ttprof_rt::{data, event, kernel, sum_zone, value_zone, wait, zone};

fn wait_cycles(n: u32) {
    let clock = 0xFFB1_21F0 as *const u32;
    let start = unsafe { core::ptr::read_volatile(clock) };
    while unsafe { core::ptr::read_volatile(clock) }.wrapping_sub(start) < n {}
}

fn main() {
    let n = ttprof_rt::arg(0);
    for i in 0..n {
        let _outer = zone!("outer");
        steps(10);
        {
            let _inner = zone!("inner");
            steps(10);
        }
        let mut v = value_zone!("value", i);
        steps(5);
        v.set(i + 100);
    }
    event!("event");
    data!("data", 0x1234_5678_9abc_u64);
    for _ in 0..3 {
        let _s = sum_zone!("sum");
        steps(20);
    }
    {
        let _w = wait!("wait", cb_front(3));
        steps(5);
    }
    {
        let _l = zone!("long");
        wait_cycles(40_000);
    }
    ttprof_rt::flush();
    let _z = zone!("after-flush");
    steps(3);
}

kernel!(brisc, main);
