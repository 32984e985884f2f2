// A tt-metal compute kernel with profiler zones, written as tt-metal's compute kernels are:
// tt-metal's compute API, one source for the three TRISCs (unpack, math, pack), each built
// with its own `TRISC_*` define. Built unchanged by `ttprof build --tt-metal --core compute`
// (tests/tests/tt_metal_compute.rs); ttprof's api/debug/kernel_profiler.hpp makes the macros
// record into each TRISC's ring.
//
// Copies `num_tiles` tiles from circular buffer 0 to circular buffer 16 through Dst, one zone
// per tile on every TRISC.
//   runtime args: num_tiles

#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/pack.h"
#include "api/debug/kernel_profiler.hpp"

void kernel_main() {
    const uint32_t num_tiles = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_in = 0;
    constexpr uint32_t cb_out = 16;

    compute_kernel_hw_startup(cb_in, cb_out);
    copy_init(cb_in);
    for (uint32_t i = 0; i < num_tiles; ++i) {
        DeviceZoneScopedN("copy-tile");
        cb_wait_front(cb_in, 1);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(cb_out, 1);
        pack_tile(0, cb_out);
        cb_push_back(cb_out, 1);
        tile_regs_release();
        cb_pop_front(cb_in, 1);
    }
}
