/* Dependent L1 loads alternating between two words 1 KiB apart: on Blackhole they map
 * to the same line of the (assumed) 64 x 16 B direct-mapped data cache, so every load
 * misses and pays the L1 latency; Wormhole has no data cache.
 * README.md, "Load/Store Unit" table: L1 latency >= 8.
 * Unit: lw a0, 0(a0), where A holds B and B holds A. */
#include "timing.h"
    TIMING_START
    li a0, L1_DATA
    li a1, L1_DATA + 0x400
    sw a1, 0(a0)
    sw a0, 0(a1)
    TIMING_LOOP
    .rept REPS
    lw a0, 0(a0)
    .endr
    TIMING_END
