/* An L1 load hidden by 7 independent instructions: README.md, "Local data RAM": "a load
 * from L1 has a latency of at least eight cycles: seven independent instructions are
 * required to fully hide the latency". 9 instructions in 9 cycles.
 * Unit: lw a1; 7 x addi a3 (independent of a1); add a2, a2, a1. */
#include "timing.h"
    TIMING_START
    li s0, L1_DATA
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    .rept 7
    addi a3, a3, 1
    .endr
    add a2, a2, a1
    .endr
    TIMING_END
