// Moves pages from one Tensix core to another over the NoC, the shape of tt-metal's "NoC tile
// transfer" example: the sender reads pages from DRAM into circular buffer 0, writes each
// into the receiver's circular buffer 0 (the same L1 address on every core of the program)
// and then raises the receiver's semaphore 0 by the page count; the receiver waits for its
// semaphore and writes the pages to DRAM. One source for both roles, picked by a runtime
// argument. Written against tt-metal's dataflow API, built unchanged by `ttprof build
// --tt-metal` (tests/tests/tt_metal_program_cli.rs runs it).
//   compile-time args: the page size in bytes, then TensorAccessorArgs of the buffer
//   runtime args:      role (0 sender, 1 receiver), buffer address (source or destination),
//                      num_pages, the peer's NoC x, the peer's NoC y (receiver: unused)

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t addr = get_arg_val<uint32_t>(1);
    const uint32_t num_pages = get_arg_val<uint32_t>(2);
    const uint32_t peer_x = get_arg_val<uint32_t>(3);
    const uint32_t peer_y = get_arg_val<uint32_t>(4);

    constexpr uint32_t page_bytes = get_compile_time_arg_val(0);
    constexpr auto args = TensorAccessorArgs<1>();
    const auto buffer = TensorAccessor(args, addr, page_bytes);
    const uint32_t cb = get_write_ptr(0);
    const uint32_t sem = get_semaphore(0);

    if (role == 0) {
        for (uint32_t page = 0; page < num_pages; ++page) {
            DeviceZoneScopedN("send-page");
            const uint32_t l1 = cb + page * page_bytes;
            noc_async_read_page(page, buffer, l1);
            noc_async_read_barrier();
            noc_async_write(l1, get_noc_addr(peer_x, peer_y, l1), page_bytes);
        }
        noc_async_write_barrier();
        noc_semaphore_inc(get_noc_addr(peer_x, peer_y, sem), num_pages);
        noc_async_atomic_barrier();
    } else {
        {
            DeviceZoneScopedN("wait-pages");
            noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem), num_pages);
        }
        for (uint32_t page = 0; page < num_pages; ++page) {
            DeviceZoneScopedN("store-page");
            noc_async_write_page(page, buffer, cb + page * page_bytes);
        }
        noc_async_write_barrier();
    }
}
