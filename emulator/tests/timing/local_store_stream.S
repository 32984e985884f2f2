/* A stream of stores to core-local data RAM: one per cycle (README.md, "Load/Store Unit":
 * regions other than L1 take one store every cycle).
 * Unit: 4 stores to consecutive words of local RAM. */
#include "timing.h"
    TIMING_START
    li s0, LOCAL_RAM + 0x40
    li a1, 0x5A5A5A5A
    TIMING_LOOP
    .rept REPS
    sw a1, 0(s0)
    sw a1, 4(s0)
    sw a1, 8(s0)
    sw a1, 12(s0)
    .endr
    TIMING_END
