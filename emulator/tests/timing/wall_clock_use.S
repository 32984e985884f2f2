/* A wall-clock read and an immediate use: latency 7 (README.md, "Load/Store Unit" table,
 * tile control/debug/status) + 1. This is the cost of a profiler timestamp that is
 * consumed at once.
 * Unit: lw a1, WALL_CLOCK_L; addi a2, a1, 1. */
#include "timing.h"
    TIMING_START
    li s0, WALL_CLOCK_L
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    addi a2, a1, 1
    .endr
    TIMING_END
