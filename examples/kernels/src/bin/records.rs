//! BRISC: one record kind at a time, for the runtime benchmark (`runtime-bench`).
//!
//! Arguments (words at `ARGS`): mode, iterations, (unused), (unused), kind ([`kind`]).
//! * mode 5, in a loop: per iteration one record of the kind and [`RECORD_STEPS`] loop
//!   steps (the kind is chosen outside the loop: the loop is what a kernel with that record
//!   would run).
//! * mode 6, in straight-line code: per iteration eight records of the kind from eight sites
//!   back to back, then [`RECORD_STEPS`] loop steps.
//!
//! Built with and without `profile`, the difference is that record's cost. The steps are a
//! constant count, unrolled, so that the plain and the profile build's loops differ only by
//! the record (a counted inner loop let the compiler lay out the two builds' branches
//! differently, and a mispredicted loop branch was counted as the record's). The kernel is
//! apart from `bench` so that neither kernel's code moves when the other changes.
#![no_std]
#![no_main]

use ttprof_example_kernels::{rd, wr, ARGS};
use ttprof_rt::{counted_zone, data, event, kernel, signal, sum_zone, value_zone, wait, zone};

/// Loop steps per iteration (one volatile store each).
const RECORD_STEPS: u32 = 4;

/// The record kinds (argument word 4); `runtime-bench` names them.
mod kind {
    pub const ZONE: u32 = 1;
    pub const VALUE_ZONE: u32 = 2;
    pub const EVENT: u32 = 3;
    pub const DATA32: u32 = 4;
    pub const DATA64: u32 = 5;
    pub const SIGNAL: u32 = 6;
    pub const SUM: u32 = 7;
    pub const WAIT: u32 = 8;
    pub const COUNTED_ZONE: u32 = 9;
}

/// [`RECORD_STEPS`] steps, unrolled.
#[inline(always)]
fn steps() {
    for i in 0..RECORD_STEPS {
        wr(ARGS + 0x80, i);
    }
}

/// One record of a kind (`zone`, `value`, `event`, `data32`, `data64`, `signal`, `sum`,
/// `wait`, `counted`) from the site named `$name`, `$i` its data.
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
    (counted, $i:expr, $name:literal) => {{
        let _z = counted_zone!($name);
    }};
}

/// Mode 5's loop for one kind: one site.
macro_rules! looped {
    ($k:ident, $n:expr, $name:literal) => {
        for i in 0..$n {
            one!($k, i, $name);
            steps();
        }
    };
}

/// Mode 6's loop for one kind: eight sites.
macro_rules! straight {
    ($k:ident, $n:expr, $($name:literal)*) => {
        for i in 0..$n {
            $(one!($k, i, $name);)*
            steps();
        }
    };
}

fn main() {
    let (mode, n, k) = (rd(ARGS), rd(ARGS + 4), rd(ARGS + 16));
    match (mode, k) {
        (5, kind::ZONE) => looped!(zone, n, "zone-loop"),
        (5, kind::VALUE_ZONE) => looped!(value, n, "value-loop"),
        (5, kind::EVENT) => looped!(event, n, "event-loop"),
        (5, kind::DATA32) => looped!(data32, n, "data32-loop"),
        (5, kind::DATA64) => looped!(data64, n, "data64-loop"),
        (5, kind::SIGNAL) => looped!(signal, n, "signal-loop"),
        (5, kind::SUM) => looped!(sum, n, "sum-loop"),
        (5, kind::WAIT) => looped!(wait, n, "wait-loop"),
        (5, kind::COUNTED_ZONE) => looped!(counted, n, "counted-loop"),
        (6, kind::ZONE) => straight!(zone, n, "zone-0" "zone-1" "zone-2" "zone-3" "zone-4" "zone-5" "zone-6" "zone-7"),
        (6, kind::VALUE_ZONE) => straight!(value, n, "value-0" "value-1" "value-2" "value-3" "value-4" "value-5" "value-6" "value-7"),
        (6, kind::EVENT) => straight!(event, n, "event-0" "event-1" "event-2" "event-3" "event-4" "event-5" "event-6" "event-7"),
        (6, kind::DATA32) => straight!(data32, n, "data32-0" "data32-1" "data32-2" "data32-3" "data32-4" "data32-5" "data32-6" "data32-7"),
        (6, kind::DATA64) => straight!(data64, n, "data64-0" "data64-1" "data64-2" "data64-3" "data64-4" "data64-5" "data64-6" "data64-7"),
        (6, kind::SIGNAL) => straight!(signal, n, "signal-0" "signal-1" "signal-2" "signal-3" "signal-4" "signal-5" "signal-6" "signal-7"),
        (6, kind::SUM) => straight!(sum, n, "sum-0" "sum-1" "sum-2" "sum-3" "sum-4" "sum-5" "sum-6" "sum-7"),
        (6, kind::WAIT) => straight!(wait, n, "wait-0" "wait-1" "wait-2" "wait-3" "wait-4" "wait-5" "wait-6" "wait-7"),
        (6, kind::COUNTED_ZONE) => straight!(counted, n, "counted-0" "counted-1" "counted-2" "counted-3" "counted-4" "counted-5" "counted-6" "counted-7"),
        _ => {}
    }
}

kernel!(brisc, main);
