//! BRISC: streams this core's slice of the input tiles from interleaved DRAM into the CBs
//! the unpacker reads, over NoC0 (`noc_async_read` of one page into the reserved CB page,
//! then `noc_async_read_barrier`, as tt-metal's reader kernels do). The barrier's wait is
//! the `noc-read-barrier` zone inside each `noc-read-in*` zone (ttprof-dm's name for it).
#![no_std]
#![no_main]

use ttprof_dm::Noc;
use ttprof_example_kernels::*;
use ttprof_rt::{data, kernel, zone};

fn main() {
    let (op, tiles) = args();
    data!("tiles", tiles as u64);
    let (in0, first) = dram_slice(arg::IN0);
    let (in1, _) = dram_slice(arg::IN1);
    let mut noc = Noc::new(0);
    for t in 0..tiles {
        let _tile = zone!("read-tile");
        let slot = {
            let _w = zone!("reserve-in0");
            Cb(CB_IN0).reserve_back()
        };
        {
            let _r = zone!("noc-read-in0");
            noc.async_read(in0.page(first + t, 0), slot, TILE_BYTES);
            let _w = zone!("noc-read-barrier");
            noc.async_read_barrier();
        }
        Cb(CB_IN0).push_back();
        if op.is_binary() {
            let slot = {
                let _w = zone!("reserve-in1");
                Cb(CB_IN1).reserve_back()
            };
            {
                let _r = zone!("noc-read-in1");
                noc.async_read(in1.page(first + t, 0), slot, TILE_BYTES);
                let _w = zone!("noc-read-barrier");
                noc.async_read_barrier();
            }
            Cb(CB_IN1).push_back();
        }
    }
}

kernel!(brisc, main);
