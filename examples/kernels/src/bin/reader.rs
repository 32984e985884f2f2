//! BRISC: streams this core's slice of the input tiles from interleaved DRAM into the CBs
//! the unpacker reads, over NoC0 (`noc_async_read` of one page into the reserved CB page,
//! then `noc_async_read_barrier`, as tt-metal's reader kernels do). The barrier's wait is
//! the `noc-read-barrier` typed wait (`noc_read`) inside each `noc-read-in*` zone
//! (ttprof-dm's name and type for it).
#![no_std]
#![no_main]

use ttprof_dm::Noc;
use ttprof_example_kernels::*;
use ttprof_rt::{data, kernel, signal, wait, zone};

fn main() {
    let (op, tiles) = args();
    data!("tiles", tiles as u64);
    let (in0, first) = dram_slice(arg::IN0);
    let (in1, _) = dram_slice(arg::IN1);
    let mut noc = Noc::new(0);
    for t in 0..tiles {
        let _tile = zone!("read-tile");
        slow_stage(stage::READER);
        let slot = {
            let _w = wait!("reserve-in0", cb_back(0));
            Cb(CB_IN0).reserve_back()
        };
        {
            let _r = zone!("noc-read-in0");
            noc.async_read(in0.page(first + t, 0), slot, TILE_BYTES);
            let _w = wait!("noc-read-barrier", noc_read);
            noc.async_read_barrier();
            signal!("noc-read-done", noc_read_done);
        }
        Cb(CB_IN0).push_back();
        if op.is_binary() {
            let slot = {
                let _w = wait!("reserve-in1", cb_back(1));
                Cb(CB_IN1).reserve_back()
            };
            {
                let _r = zone!("noc-read-in1");
                noc.async_read(in1.page(first + t, 0), slot, TILE_BYTES);
                let _w = wait!("noc-read-barrier", noc_read);
                noc.async_read_barrier();
            signal!("noc-read-done", noc_read_done);
            }
            Cb(CB_IN1).push_back();
        }
    }
}

kernel!(brisc, main);
