#![no_std]
#![no_main]
use ttprof_rt::{kernel, zone};

fn main() {
    let mut acc = 0u32;
    for i in 0..100u32 {
        let _z = zone!("probe-loop");
        acc = acc.wrapping_mul(31).wrapping_add(i);
        unsafe { core::ptr::write_volatile(0x30000 as *mut u32, acc) };
    }
}
kernel!(brisc, main);
