/* A local-RAM load and an immediate use: latency 2, "so long as the one instruction
 * immediately after the load is independent of the load result, the latency of the load
 * is entirely hidden" (README.md, "Local data RAM"); here it is not: 2 + 1.
 * Unit: lw a1; addi a2, a1, 1. */
#include "timing.h"
    TIMING_START
    li s0, LOCAL_RAM
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    addi a2, a1, 1
    .endr
    TIMING_END
