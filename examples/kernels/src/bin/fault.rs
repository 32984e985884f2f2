//! BRISC: records zones, then faults (a store outside every region of the core), for the
//! tests of what a fault leaves: the emulator's diagnosis, and the zones published before it.
//!
//! Arguments (words at `ARGS`): the number of `before-fault` zones (0 means 20), each about
//! 5000 cycles long, so the runtime publishes its ring many times before the fault; then
//! (`ARGS + 4`) 0: the bad store, 1: a `panic!` with a literal message, 2: a deadlock
//! inside a typed wait (it polls `ARGS + 8`, which nothing writes).
#![no_std]
#![no_main]

use ttprof_example_kernels::{rd, ARGS};
use ttprof_rt::{kernel, wait, zone};

fn wait_cycles(n: u32) {
    let clock = 0xFFB1_21F0 as *const u32; // the tile's wall clock, low word
    let start = unsafe { core::ptr::read_volatile(clock) };
    while unsafe { core::ptr::read_volatile(clock) }.wrapping_sub(start) < n {}
}

fn main() {
    let n = match rd(ARGS) {
        0 => 20,
        n => n,
    };
    for _ in 0..n {
        let _z = zone!("before-fault");
        wait_cycles(5000);
    }
    if rd(ARGS + 4) == 1 {
        panic!("the kernel gave up");
    }
    if rd(ARGS + 4) == 2 {
        let _w = wait!("wait-in1", cb_front(1));
        while rd(ARGS + 8) == 0 {}
    }
    // No region of any core covers this address: the emulator stops the core here.
    unsafe { core::ptr::write_volatile(0x0FFF_FFF0 as *mut u32, 1) };
}

kernel!(brisc, main);
