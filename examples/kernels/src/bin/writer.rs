//! NCRISC: drains result tiles to this core's slice of the interleaved DRAM output buffer,
//! over NoC1 (`noc_async_write` of the CB page, then `noc_async_write_barrier` before the
//! page is freed, as tt-metal's writer kernels do). The barrier's wait is the
//! `noc-write-barrier` typed wait (`noc_write`) inside each `noc-write` zone (ttprof-dm's
//! name and type for it).
#![no_std]
#![no_main]

use ttprof_dm::Noc;
use ttprof_example_kernels::*;
use ttprof_rt::{kernel, signal, wait, zone};

fn main() {
    let (_op, tiles) = args();
    let (out, first) = dram_slice(arg::OUT);
    let mut noc = Noc::new(1);
    for t in 0..tiles {
        let _tile = zone!("write-tile");
        slow_stage(stage::WRITER);
        let o = {
            let _w = wait!("wait-out", cb_front(4));
            Cb(CB_OUT).wait_front()
        };
        {
            let _w = zone!("noc-write");
            noc.async_write(o, out.page(first + t, 0), TILE_BYTES);
            let _b = wait!("noc-write-barrier", noc_write);
            noc.async_write_barrier();
            signal!("noc-write-done", noc_write_done);
        }
        Cb(CB_OUT).pop_front();
    }
}

kernel!(ncrisc, main);
