//! BRISC: signals made through the runtime's helpers (`ttprof_rt::signal::*`) and a typed
//! wait, each on its own line: the host locates every one of them at this file's line,
//! not at the runtime's (tests/tests/site_lines.rs).
#![no_std]
#![no_main]

use ttprof_rt::{kernel, wait};

fn main() {
    {
        let _w = wait!("wait-sem-1", semaphore(1));
        ttprof_example_kernels::steps(4);
    }
    ttprof_rt::signal::sem_inc(1);
    ttprof_rt::signal::cb_push(3);
    ttprof_rt::signal::tensix_sem_post(2);
}

kernel!(brisc, main);
