// Adds two interleaved DRAM buffers of uint32 word by word on one RISC, the shape of
// tt-metal's "add two integers in a RISC-V" example written for pages: no compute engine,
// circular buffers 0 and 1 used as L1 scratch. Written against tt-metal's dataflow API, built
// unchanged by `ttprof build --tt-metal` (tests/tests/tt_metal_program_cli.rs runs it).
//   compile-time args: the page size in bytes, then TensorAccessorArgs of a, b and the sum
//                      (each e.g. 2,256: interleaved DRAM, 256-byte pages)
//   runtime args:      a_addr, b_addr, sum_addr, num_pages

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t sum_addr = get_arg_val<uint32_t>(2);
    const uint32_t num_pages = get_arg_val<uint32_t>(3);

    constexpr uint32_t page_bytes = get_compile_time_arg_val(0);
    constexpr auto a_args = TensorAccessorArgs<1>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    constexpr auto sum_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, page_bytes);
    const auto b = TensorAccessor(b_args, b_addr, page_bytes);
    const auto sum = TensorAccessor(sum_args, sum_addr, page_bytes);

    const uint32_t a_l1 = get_write_ptr(0);
    const uint32_t b_l1 = get_write_ptr(1);
    for (uint32_t page = 0; page < num_pages; ++page) {
        DeviceZoneScopedN("add-page");
        noc_async_read_page(page, a, a_l1);
        noc_async_read_page(page, b, b_l1);
        noc_async_read_barrier();
        volatile tt_l1_ptr uint32_t* x = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(a_l1);
        volatile tt_l1_ptr uint32_t* y = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(b_l1);
        for (uint32_t i = 0; i < page_bytes / 4; ++i) {
            x[i] = x[i] + y[i];
        }
        noc_async_write_page(page, sum, a_l1);
        noc_async_write_barrier();
    }
}
