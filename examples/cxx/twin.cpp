// BRISC: examples/kernels/src/bin/twin.rs in C++ through ttprof.h, macro for macro: the
// test that C and C++ kernels write exactly what ttprof-rt writes decodes both rings with
// the reference decoder (ttprof_rt::wire::decode) and compares them record by record.
#include <stdint.h>
#include <ttprof.h>

// `n` steps of a counted loop, one volatile store each (the Rust kernels' `steps`).
static inline __attribute__((always_inline)) void steps(uint32_t n) {
    for (uint32_t i = 0; i < n; i++) *(volatile uint32_t *)0x30080 = i;
}

static void wait_cycles(uint32_t n) {
    volatile uint32_t *clock = (volatile uint32_t *)0xFFB121F0;
    uint32_t start = *clock;
    while (*clock - start < n) {
    }
}

void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; i++) {
        TTPROF_ZONE("outer");
        steps(10);
        {
            TTPROF_ZONE("inner");
            steps(10);
        }
        TTPROF_VALUE_ZONE_AS(v, "value", i);
        steps(5);
        TTPROF_VALUE_ZONE_SET(v, i + 100);
    }
    TTPROF_EVENT("event");
    TTPROF_DATA("data", 0x123456789abcull);
    for (int k = 0; k < 3; k++) {
        TTPROF_SUM_ZONE("sum");
        steps(20);
    }
    {
        TTPROF_WAIT("wait", TTPROF_CB_FRONT(3));
        steps(5);
    }
    {
        TTPROF_ZONE("long");
        wait_cycles(40000);
    }
    ttprof_publish();
    TTPROF_ZONE("after-flush");
    steps(3);
}
