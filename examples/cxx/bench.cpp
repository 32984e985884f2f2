// BRISC: runtime-bench's dense and op-level workloads in C++ (examples/kernels/src/bin/bench.rs
// is the Rust twin), so the cost of a zone from ttprof.h is measured against ttprof-rt's.
//
// Arguments (words at 0x30000, as the Rust kernel's): mode, iterations, work.
// * mode 1, dense: per iteration two nested zones around `work` counted-loop steps each.
// * mode 2, op-level: per iteration a gap of `work * 64` cycles, then a zone of `work * 256`.
#include <stdint.h>
#include <ttprof.h>

static const uint32_t ARGS = 0x30000;

static inline uint32_t rd(uint32_t addr) { return *(volatile uint32_t *)addr; }

// `n` steps of a counted loop, one volatile store each (the Rust kernels' `steps`).
static inline __attribute__((always_inline)) void steps(uint32_t n) {
    for (uint32_t i = 0; i < n; i++) *(volatile uint32_t *)(ARGS + 0x80) = i;
}

static void wait_cycles(uint32_t n) {
    volatile uint32_t *clock = (volatile uint32_t *)0xFFB121F0;
    uint32_t start = *clock;
    while (*clock - start < n) {
    }
}

void kernel_main() {
    uint32_t mode = rd(ARGS), iterations = rd(ARGS + 4), work = rd(ARGS + 8);
    switch (mode) {
        case 1:
            for (uint32_t i = 0; i < iterations; i++) {
                TTPROF_ZONE("dense-outer");
                steps(work);
                {
                    TTPROF_ZONE("dense-inner");
                    steps(work);
                }
            }
            break;
        case 2:
            for (uint32_t i = 0; i < iterations; i++) {
                wait_cycles(work * 64);
                TTPROF_ZONE("op-level");
                wait_cycles(work * 256);
            }
            break;
        default:
            break;
    }
}
