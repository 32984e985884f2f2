//! BRISC: sum zones that are not the kernel's first site (a past defect: the totals were
//! written under another site's name, with count and total swapped).
//!
//! Arguments (words at `ARGS`): `n`, the number of iterations (0 means 4). Per launch:
//! `acc` data = `n * 1000 + 7` first, then per iteration one `iteration` zone holding one
//! `spin-100` measurement (100 loop steps), three `spin-10` (10 steps each) and, on even
//! iterations, one `spin-even` (50 steps). So per launch `spin-100` counts `n`, `spin-10`
//! `3n` and `spin-even` `ceil(n / 2)` measurements.
#![no_std]
#![no_main]

use ttprof_example_kernels::{rd, steps, ARGS};
use ttprof_rt::{data, event, kernel, sum_zone, zone};

fn main() {
    let n = match rd(ARGS) {
        0 => 4,
        n => n,
    };
    data!("acc", n as u64 * 1000 + 7);
    event!("start");
    for i in 0..n {
        let _z = zone!("iteration");
        {
            let _s = sum_zone!("spin-100");
            steps(100);
        }
        for _ in 0..3 {
            let _s = sum_zone!("spin-10");
            steps(10);
        }
        if i % 2 == 0 {
            let _s = sum_zone!("spin-even");
            steps(50);
        }
    }
}

kernel!(brisc, main);
