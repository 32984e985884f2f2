//! BRISC: 16 zone sites in straight-line code, nothing else. runtime-bench divides the
//! `.text` growth from `sites_16` to `sites_48` by 32 (`zone_site_code_bytes_<arch>`).
#![no_std]
#![no_main]

use ttprof_example_kernels::zone_sites;
use ttprof_rt::kernel;

fn main() {
    zone_sites!(s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s13 s14 s15);
}

kernel!(brisc, main);
