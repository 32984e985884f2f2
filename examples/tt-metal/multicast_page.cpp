// Sends one page to a row of cores at once, the shape of tt-metal's multicast example: the
// sender reads the page from DRAM into circular buffer 0, multicasts it into circular
// buffer 0 of every core of the rectangle, then multicasts its semaphore 0 (set to 1) onto
// theirs; each receiver waits for its semaphore and writes the page into its own page of
// the output. One source for both roles, picked by a runtime argument. Written against
// tt-metal's dataflow API, built unchanged by `ttprof build --tt-metal`
// (tests/tests/tt_metal_program_cli.rs runs it).
//   compile-time args: the page size in bytes, then TensorAccessorArgs of the buffers
//   runtime args:      sender: 0, source address, the rectangle's NoC x0, y0, x1, y1 and
//                      its core count;
//                      receiver: 1, output address, its page index in the output

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t addr = get_arg_val<uint32_t>(1);

    constexpr uint32_t page_bytes = get_compile_time_arg_val(0);
    constexpr auto args = TensorAccessorArgs<1>();
    const auto buffer = TensorAccessor(args, addr, page_bytes);
    const uint32_t cb = get_write_ptr(0);
    const uint32_t sem = get_semaphore(0);
    volatile tt_l1_ptr uint32_t* sem_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem);

    if (role == 0) {
        DeviceZoneScopedN("multicast");
        const uint32_t x0 = get_arg_val<uint32_t>(2);
        const uint32_t y0 = get_arg_val<uint32_t>(3);
        const uint32_t x1 = get_arg_val<uint32_t>(4);
        const uint32_t y1 = get_arg_val<uint32_t>(5);
        const uint32_t cores = get_arg_val<uint32_t>(6);
        noc_async_read_page(0, buffer, cb);
        noc_async_read_barrier();
        noc_async_write_multicast(cb, get_noc_multicast_addr(x0, y0, x1, y1, cb), page_bytes, cores);
        noc_async_write_barrier();
        *sem_ptr = 1;
        noc_semaphore_set_multicast(sem, get_noc_multicast_addr(x0, y0, x1, y1, sem), cores);
        noc_async_write_barrier();
    } else {
        const uint32_t index = get_arg_val<uint32_t>(2);
        {
            DeviceZoneScopedN("wait-page");
            noc_semaphore_wait(sem_ptr, 1);
        }
        noc_async_write_page(index, buffer, cb);
        noc_async_write_barrier();
    }
}
