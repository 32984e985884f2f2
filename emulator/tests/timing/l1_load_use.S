/* An L1 load followed at once by an instruction using its result: the user cannot enter
 * the Integer Unit until the value is back (README.md, "Integer Unit" and the
 * "Load/Store Unit" latency table: L1 >= 8), so a pair costs 8 + 1.
 * Blackhole: data-cache hit, 3 + 1.
 * Unit: lw a1; addi a2, a1, 1. */
#include "timing.h"
    TIMING_START
    li s0, L1_DATA
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    addi a2, a1, 1
    .endr
    TIMING_END
