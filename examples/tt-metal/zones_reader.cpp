// A tt-metal dataflow kernel with profiler zones, written as tt-metal kernels are: it
// includes nothing (the build's wrapper brings in tt-metal's dataflow API) and records with
// tt-metal's macros. Built unchanged by `ttprof build --tt-metal --core ncrisc`
// (tests/tests/tt_metal_build.rs); ttprof's api/debug/kernel_profiler.hpp makes the macros
// record into ttprof's ring.
//
// Reads `num_tiles` pages of an interleaved DRAM buffer into circular buffer 0, one zone per
// tile, an event when done, the total wait as a sum zone and the last page id as data.
//   compile-time args: TensorAccessorArgs of the source (e.g. 2,2048: DRAM, 2048-byte pages)
//   runtime args:      src_addr, num_tiles, start_id

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t num_tiles = get_arg_val<uint32_t>(1);
    const uint32_t start_id = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_id = 0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    const auto src = TensorAccessor(src_args, src_addr, get_tile_size(cb_id));

    for (uint32_t i = start_id; i < start_id + num_tiles; ++i) {
        DeviceZoneScopedN("read-tile");
        {
            DeviceZoneScopedSumN1("cb-wait");
            cb_reserve_back(cb_id, 1);
        }
        noc_async_read_page(i, src, get_write_ptr(cb_id));
        noc_async_read_barrier();
        cb_push_back(cb_id, 1);
    }
    DeviceTimestampedData("last-page", start_id + num_tiles - 1);
    DeviceRecordEvent("reader-done");
}
