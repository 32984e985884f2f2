/* Independent L1 loads: at most 4 non-local loads in flight, so with latency N = 8 the
 * sustained rate is 4 loads every N - 1 = 7 cycles (1.75 per load).
 * README.md, "Load/Store Unit": "when the load latency is N cycles, the throughput of
 * sustained loads is four such loads every N - 1 cycles". Blackhole: data-cache hits,
 * latency 3 < 5, one per cycle.
 * Unit: 4 loads of one 16-byte line into 4 registers. */
#include "timing.h"
    TIMING_START
    li s0, L1_DATA
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    lw a2, 4(s0)
    lw a3, 8(s0)
    lw a4, 12(s0)
    .endr
    TIMING_END
