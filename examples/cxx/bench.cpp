// BRISC: runtime-bench's dense and op-level workloads in C++ (examples/kernels/src/bin/bench.rs
// and records.rs are the Rust twins), so the cost of a zone from ttprof.h is measured against ttprof-rt's.
//
// Arguments (words at 0x30000, as the Rust kernel's): mode, iterations, work.
// * mode 1, dense: per iteration two nested zones around `work` counted-loop steps each.
// * mode 2, op-level: per iteration a gap of `work * 64` cycles, then a zone of `work * 256`.
// * mode 5, one record kind (word 4: records.rs's `kind`) per iteration, then 4 steps.
// * mode 6, eight records of that kind from eight sites back to back, then 4 steps.
#include <stdint.h>
#include <ttprof.h>

static const uint32_t ARGS = 0x30000;

static inline uint32_t rd(uint32_t addr) { return *(volatile uint32_t *)addr; }

// `n` steps of a counted loop, one volatile store each (the Rust kernels' `steps`).
static inline __attribute__((always_inline)) void steps(uint32_t n) {
    for (uint32_t i = 0; i < n; i++) *(volatile uint32_t *)(ARGS + 0x80) = i;
}

// Modes 5 and 6: 4 steps, unrolled (the Rust `records` kernel's `steps`), so that the plain
// and the profile build's loops differ only by the record.
static inline __attribute__((always_inline)) void record_steps() {
    for (uint32_t i = 0; i < 4; i++) *(volatile uint32_t *)(ARGS + 0x80) = i;
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
        case 5:
            switch (rd(ARGS + 16)) {
                case 1:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_ZONE("zone-loop"); }
                        record_steps();
                    }
                    break;
                case 2:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_VALUE_ZONE("value-loop", i); }
                        record_steps();
                    }
                    break;
                case 3:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_EVENT("event-loop");
                        record_steps();
                    }
                    break;
                case 4:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_DATA("data32-loop", i);
                        record_steps();
                    }
                    break;
                case 5:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_DATA("data64-loop", (1ull << 32) | i);
                        record_steps();
                    }
                    break;
                case 6:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_SIGNAL("signal-loop", TTPROF_CB_PUSH(1));
                        record_steps();
                    }
                    break;
                case 7:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_SUM_ZONE("sum-loop"); }
                        record_steps();
                    }
                    break;
                case 8:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_WAIT("wait-loop", TTPROF_CB_FRONT(1)); }
                        record_steps();
                    }
                    break;
                case 9:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_COUNTED_ZONE("counted-loop"); }
                        record_steps();
                    }
                    break;
                default:
                    break;
            }
            break;
        case 6:
            switch (rd(ARGS + 16)) {
                case 1:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_ZONE("zone-0"); }
                        { TTPROF_ZONE("zone-1"); }
                        { TTPROF_ZONE("zone-2"); }
                        { TTPROF_ZONE("zone-3"); }
                        { TTPROF_ZONE("zone-4"); }
                        { TTPROF_ZONE("zone-5"); }
                        { TTPROF_ZONE("zone-6"); }
                        { TTPROF_ZONE("zone-7"); }
                        record_steps();
                    }
                    break;
                case 2:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_VALUE_ZONE("value-0", i); }
                        { TTPROF_VALUE_ZONE("value-1", i); }
                        { TTPROF_VALUE_ZONE("value-2", i); }
                        { TTPROF_VALUE_ZONE("value-3", i); }
                        { TTPROF_VALUE_ZONE("value-4", i); }
                        { TTPROF_VALUE_ZONE("value-5", i); }
                        { TTPROF_VALUE_ZONE("value-6", i); }
                        { TTPROF_VALUE_ZONE("value-7", i); }
                        record_steps();
                    }
                    break;
                case 3:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_EVENT("event-0");
                        TTPROF_EVENT("event-1");
                        TTPROF_EVENT("event-2");
                        TTPROF_EVENT("event-3");
                        TTPROF_EVENT("event-4");
                        TTPROF_EVENT("event-5");
                        TTPROF_EVENT("event-6");
                        TTPROF_EVENT("event-7");
                        record_steps();
                    }
                    break;
                case 4:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_DATA("data32-0", i);
                        TTPROF_DATA("data32-1", i);
                        TTPROF_DATA("data32-2", i);
                        TTPROF_DATA("data32-3", i);
                        TTPROF_DATA("data32-4", i);
                        TTPROF_DATA("data32-5", i);
                        TTPROF_DATA("data32-6", i);
                        TTPROF_DATA("data32-7", i);
                        record_steps();
                    }
                    break;
                case 5:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_DATA("data64-0", (1ull << 32) | i);
                        TTPROF_DATA("data64-1", (1ull << 32) | i);
                        TTPROF_DATA("data64-2", (1ull << 32) | i);
                        TTPROF_DATA("data64-3", (1ull << 32) | i);
                        TTPROF_DATA("data64-4", (1ull << 32) | i);
                        TTPROF_DATA("data64-5", (1ull << 32) | i);
                        TTPROF_DATA("data64-6", (1ull << 32) | i);
                        TTPROF_DATA("data64-7", (1ull << 32) | i);
                        record_steps();
                    }
                    break;
                case 6:
                    for (uint32_t i = 0; i < iterations; i++) {
                        TTPROF_SIGNAL("signal-0", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-1", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-2", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-3", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-4", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-5", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-6", TTPROF_CB_PUSH(1));
                        TTPROF_SIGNAL("signal-7", TTPROF_CB_PUSH(1));
                        record_steps();
                    }
                    break;
                case 7:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_SUM_ZONE("sum-0"); }
                        { TTPROF_SUM_ZONE("sum-1"); }
                        { TTPROF_SUM_ZONE("sum-2"); }
                        { TTPROF_SUM_ZONE("sum-3"); }
                        { TTPROF_SUM_ZONE("sum-4"); }
                        { TTPROF_SUM_ZONE("sum-5"); }
                        { TTPROF_SUM_ZONE("sum-6"); }
                        { TTPROF_SUM_ZONE("sum-7"); }
                        record_steps();
                    }
                    break;
                case 8:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_WAIT("wait-0", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-1", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-2", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-3", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-4", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-5", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-6", TTPROF_CB_FRONT(1)); }
                        { TTPROF_WAIT("wait-7", TTPROF_CB_FRONT(1)); }
                        record_steps();
                    }
                    break;
                case 9:
                    for (uint32_t i = 0; i < iterations; i++) {
                        { TTPROF_COUNTED_ZONE("counted-0"); }
                        { TTPROF_COUNTED_ZONE("counted-1"); }
                        { TTPROF_COUNTED_ZONE("counted-2"); }
                        { TTPROF_COUNTED_ZONE("counted-3"); }
                        { TTPROF_COUNTED_ZONE("counted-4"); }
                        { TTPROF_COUNTED_ZONE("counted-5"); }
                        { TTPROF_COUNTED_ZONE("counted-6"); }
                        { TTPROF_COUNTED_ZONE("counted-7"); }
                        record_steps();
                    }
                    break;
                default:
                    break;
            }
            break;
        default:
            break;
    }
}
