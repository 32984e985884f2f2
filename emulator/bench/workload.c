/* The benchmark workload: integer loops with loads, stores, multiplies and branches,
 * no MMIO. Built twice by emu-bench from this one source: as a Tensix kernel (linked with
 * riscv-linker's script, started by kernel_start.S) and as a bare static Linux binary for
 * qemu-riscv32 (started by linux_start.S). ITERS is set on the compiler's command line. */

#ifndef ITERS
#define ITERS 10
#endif

static unsigned buf[512];

unsigned work(void) {
    unsigned x = 12345u, acc = 0;
    for (unsigned it = 0; it < ITERS; it++) {
        for (int i = 0; i < 512; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (buf[i] >> 1) ^ x;
        }
        for (int i = 0; i < 512; i++) {
            unsigned v = buf[i];
            acc += v * (unsigned)(i | 1);
            if (v & 0x100) {
                acc ^= v >> 3;
            } else {
                acc += 7;
            }
        }
        /* a short insertion pass over 32 words: data-dependent branches */
        for (int i = 1; i < 32; i++) {
            unsigned v = buf[i];
            int j = i - 1;
            while (j >= 0 && buf[j] > v) {
                buf[j + 1] = buf[j];
                j--;
            }
            buf[j + 1] = v;
        }
    }
    return acc;
}
