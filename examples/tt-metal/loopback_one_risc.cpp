// A tt-metal dataflow kernel that copies an interleaved DRAM buffer to another through a
// circular buffer, all on one RISC (a reader and a writer in one loop), with a profiler zone
// per page. Written as tt-metal kernels are: it includes nothing (the build's wrapper brings in
// tt-metal's dataflow API). Run on BRISC from a program file (tests/tt_metal_program.rs).
//   compile-time args: TensorAccessorArgs of the source, then of the destination
//                      (e.g. 2,2048,2,2048: DRAM, 2048-byte pages)
//   runtime args:      src_addr, dst_addr, num_pages, start_id (the first page)

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t dst_addr = get_arg_val<uint32_t>(1);
    const uint32_t num_pages = get_arg_val<uint32_t>(2);
    const uint32_t start_id = get_arg_val<uint32_t>(3);

    constexpr uint32_t cb_id = 0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    const uint32_t page_bytes = get_local_cb_interface(cb_id).fifo_page_size;
    const auto src = TensorAccessor(src_args, src_addr, page_bytes);
    const auto dst = TensorAccessor(dst_args, dst_addr, page_bytes);

    for (uint32_t i = start_id; i < start_id + num_pages; ++i) {
        DeviceZoneScopedN("copy-page");
        cb_reserve_back(cb_id, 1);
        noc_async_read_page(i, src, get_write_ptr(cb_id));
        noc_async_read_barrier();
        cb_push_back(cb_id, 1);

        cb_wait_front(cb_id, 1);
        noc_async_write_page(i, dst, get_read_ptr(cb_id));
        noc_async_write_barrier();
        cb_pop_front(cb_id, 1);
    }
}
