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
//! * mode 5, one record kind in a loop: per iteration one record of the kind in argument
//!   word 4 (`ARGS + 16`, [`kind`]) and `work` loop steps (the kind is chosen outside the
//!   loop: the loop is what a kernel with that record would run). Built with and without `profile`,
//!   the difference is that record's cost.
//! * mode 6, one record kind in straight-line code: per iteration eight records of that
//!   kind from eight sites back to back, then `work` loop steps.
#![no_std]
#![no_main]

use ttprof_example_kernels::{rd, steps, wr, ARGS};
use ttprof_rt::{data, event, kernel, signal, sum_zone, value_zone, wait, zone};

/// The record kinds of modes 5 and 6 (argument word 4); `runtime-bench` names them.
mod kind {
    pub const ZONE: u32 = 1;
    pub const VALUE_ZONE: u32 = 2;
    pub const EVENT: u32 = 3;
    pub const DATA32: u32 = 4;
    pub const DATA64: u32 = 5;
    pub const SIGNAL: u32 = 6;
    pub const SUM: u32 = 7;
    pub const WAIT: u32 = 8;
}

/// One record of a kind (`zone`, `value`, `event`, `data32`, `data64`, `signal`, `sum`,
/// `wait`) from the site named `$name`, `$i` its data.
macro_rules! one {
    (zone, $i:expr, $name:literal) => {{
        let _z = zone!($name);
    }};
    (value, $i:expr, $name:literal) => {{
        let _z = value_zone!($name, $i);
    }};
    (event, $i:expr, $name:literal) => {
        event!($name)
    };
    (data32, $i:expr, $name:literal) => {
        data!($name, $i as u64)
    };
    (data64, $i:expr, $name:literal) => {
        data!($name, 1 << 32 | $i as u64)
    };
    (signal, $i:expr, $name:literal) => {
        signal!($name, cb_push(1))
    };
    (sum, $i:expr, $name:literal) => {{
        let _m = sum_zone!($name);
    }};
    (wait, $i:expr, $name:literal) => {{
        let _w = wait!($name, cb_front(1));
    }};
}

fn wait_cycles(n: u32) {
    let clock = riscv_linker_wall_clock();
    let start = unsafe { core::ptr::read_volatile(clock) };
    while unsafe { core::ptr::read_volatile(clock) }.wrapping_sub(start) < n {}
}

#[inline(always)]
fn riscv_linker_wall_clock() -> *const u32 {
    0xFFB1_21F0 as *const u32
}

fn main() {
    let (mode, iterations, work) = (rd(ARGS), rd(ARGS + 4), rd(ARGS + 8));
    match mode {
        1 => {
            for _ in 0..iterations {
                let _outer = zone!("dense-outer");
                steps(work);
                {
                    let _inner = zone!("dense-inner");
                    steps(work);
                }
            }
        }
        3 => {
            for _ in 0..iterations {
                zone!("block-outer", {
                    steps(work);
                    zone!("block-inner", {
                        steps(work);
                    });
                });
            }
        }
        2 => {
            for _ in 0..iterations {
                wait_cycles(work * 64);
                let _z = zone!("op-level");
                wait_cycles(work * 256);
            }
        }
        4 => {
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
        5 => match rd(ARGS + 16) {
            kind::ZONE => {
                for i in 0..iterations {
                    one!(zone, i, "zone-loop");
                    steps(work);
                }
            }
            kind::VALUE_ZONE => {
                for i in 0..iterations {
                    one!(value, i, "value-loop");
                    steps(work);
                }
            }
            kind::EVENT => {
                for i in 0..iterations {
                    one!(event, i, "event-loop");
                    steps(work);
                }
            }
            kind::DATA32 => {
                for i in 0..iterations {
                    one!(data32, i, "data32-loop");
                    steps(work);
                }
            }
            kind::DATA64 => {
                for i in 0..iterations {
                    one!(data64, i, "data64-loop");
                    steps(work);
                }
            }
            kind::SIGNAL => {
                for i in 0..iterations {
                    one!(signal, i, "signal-loop");
                    steps(work);
                }
            }
            kind::SUM => {
                for i in 0..iterations {
                    one!(sum, i, "sum-loop");
                    steps(work);
                }
            }
            kind::WAIT => {
                for i in 0..iterations {
                    one!(wait, i, "wait-loop");
                    steps(work);
                }
            }
            _ => {}
        },
        6 => match rd(ARGS + 16) {
            kind::ZONE => {
                for i in 0..iterations {
                    one!(zone, i, "zone-0");
                    one!(zone, i, "zone-1");
                    one!(zone, i, "zone-2");
                    one!(zone, i, "zone-3");
                    one!(zone, i, "zone-4");
                    one!(zone, i, "zone-5");
                    one!(zone, i, "zone-6");
                    one!(zone, i, "zone-7");
                    steps(work);
                }
            }
            kind::VALUE_ZONE => {
                for i in 0..iterations {
                    one!(value, i, "value-0");
                    one!(value, i, "value-1");
                    one!(value, i, "value-2");
                    one!(value, i, "value-3");
                    one!(value, i, "value-4");
                    one!(value, i, "value-5");
                    one!(value, i, "value-6");
                    one!(value, i, "value-7");
                    steps(work);
                }
            }
            kind::EVENT => {
                for i in 0..iterations {
                    one!(event, i, "event-0");
                    one!(event, i, "event-1");
                    one!(event, i, "event-2");
                    one!(event, i, "event-3");
                    one!(event, i, "event-4");
                    one!(event, i, "event-5");
                    one!(event, i, "event-6");
                    one!(event, i, "event-7");
                    steps(work);
                }
            }
            kind::DATA32 => {
                for i in 0..iterations {
                    one!(data32, i, "data32-0");
                    one!(data32, i, "data32-1");
                    one!(data32, i, "data32-2");
                    one!(data32, i, "data32-3");
                    one!(data32, i, "data32-4");
                    one!(data32, i, "data32-5");
                    one!(data32, i, "data32-6");
                    one!(data32, i, "data32-7");
                    steps(work);
                }
            }
            kind::DATA64 => {
                for i in 0..iterations {
                    one!(data64, i, "data64-0");
                    one!(data64, i, "data64-1");
                    one!(data64, i, "data64-2");
                    one!(data64, i, "data64-3");
                    one!(data64, i, "data64-4");
                    one!(data64, i, "data64-5");
                    one!(data64, i, "data64-6");
                    one!(data64, i, "data64-7");
                    steps(work);
                }
            }
            kind::SIGNAL => {
                for i in 0..iterations {
                    one!(signal, i, "signal-0");
                    one!(signal, i, "signal-1");
                    one!(signal, i, "signal-2");
                    one!(signal, i, "signal-3");
                    one!(signal, i, "signal-4");
                    one!(signal, i, "signal-5");
                    one!(signal, i, "signal-6");
                    one!(signal, i, "signal-7");
                    steps(work);
                }
            }
            kind::SUM => {
                for i in 0..iterations {
                    one!(sum, i, "sum-0");
                    one!(sum, i, "sum-1");
                    one!(sum, i, "sum-2");
                    one!(sum, i, "sum-3");
                    one!(sum, i, "sum-4");
                    one!(sum, i, "sum-5");
                    one!(sum, i, "sum-6");
                    one!(sum, i, "sum-7");
                    steps(work);
                }
            }
            kind::WAIT => {
                for i in 0..iterations {
                    one!(wait, i, "wait-0");
                    one!(wait, i, "wait-1");
                    one!(wait, i, "wait-2");
                    one!(wait, i, "wait-3");
                    one!(wait, i, "wait-4");
                    one!(wait, i, "wait-5");
                    one!(wait, i, "wait-6");
                    one!(wait, i, "wait-7");
                    steps(work);
                }
            }
            _ => {}
        },
        _ => {}
    }
}

kernel!(brisc, main);
