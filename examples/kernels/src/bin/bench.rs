//! BRISC: the workloads of the runtime benchmark (`runtime-bench`).
//!
//! Arguments (words at `ARGS`): mode, iterations, work.
//! * mode 1, dense: per iteration two nested short zones around `work` counted-loop steps
//!   each. Built with and without `profile`, the instruction difference is the zone cost.
//! * mode 2, op-level: per iteration a gap of `work * 64` cycles, then a zone of
//!   `work * 256` cycles (both waited on the wall clock).
//! * mode 3, dense with the block form of `zone!` (`zone!("name", { ... })`), otherwise as
//!   mode 1.
//! * mode 4, dense timed by hand (for the plain build): mode 1's loop without zones, the
//!   second `steps(work)` (the inner zone's work) between two wall-clock reads; the sum of
//!   those spans goes to argument word 3 (`ARGS + 12`). What the inner zone's recorded
//!   duration would be if the profiler added nothing inside it.
//! * modes 5 and 6 (one record kind in a loop, in straight-line code) are the `records`
//!   kernel's.
#![no_std]
#![no_main]

use ttprof_example_kernels::{rd, steps, wr, ARGS};
use ttprof_rt::{kernel, zone};

fn wait_cycles(n: u32) {
    let clock = riscv_linker_wall_clock();
    let start = unsafe { core::ptr::read_volatile(clock) };
    while unsafe { core::ptr::read_volatile(clock) }.wrapping_sub(start) < n {}
}

#[inline(always)]
fn riscv_linker_wall_clock() -> *const u32 {
    0xFFB1_21F0 as *const u32
}

// Each mode is a function of its own, never inlined, so that its code is what the compiler
// makes of that loop alone: adding or removing another mode does not change it.

#[inline(never)]
fn dense(iterations: u32, work: u32) {
    for _ in 0..iterations {
        let _outer = zone!("dense-outer");
        steps(work);
        {
            let _inner = zone!("dense-inner");
            steps(work);
        }
    }
}

#[inline(never)]
fn dense_block(iterations: u32, work: u32) {
    for _ in 0..iterations {
        zone!("block-outer", {
            steps(work);
            zone!("block-inner", {
                steps(work);
            });
        });
    }
}

#[inline(never)]
fn op_level(iterations: u32, work: u32) {
    for _ in 0..iterations {
        wait_cycles(work * 64);
        let _z = zone!("op-level");
        wait_cycles(work * 256);
    }
}

#[inline(never)]
fn dense_timed(iterations: u32, work: u32) {
    let clock = riscv_linker_wall_clock();
    let mut spans = 0u32;
    for _ in 0..iterations {
        steps(work);
        let start = unsafe { core::ptr::read_volatile(clock) };
        steps(work);
        spans = spans.wrapping_add(unsafe { core::ptr::read_volatile(clock) }.wrapping_sub(start));
    }
    wr(ARGS + 12, spans);
}

fn main() {
    let (mode, iterations, work) = (rd(ARGS), rd(ARGS + 4), rd(ARGS + 8));
    match mode {
        1 => dense(iterations, work),
        2 => op_level(iterations, work),
        3 => dense_block(iterations, work),
        4 => dense_timed(iterations, work),
        _ => {}
    }
}

kernel!(brisc, main);
