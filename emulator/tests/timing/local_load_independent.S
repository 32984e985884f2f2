/* Independent local-RAM loads: latency 2 < 5, so one per cycle (README.md, "Load/Store
 * Unit": "Throughput of sustained loads is one per cycle if the load latency is less than
 * five cycles"; local RAM is not one of the 4-in-flight regions).
 * Unit: 4 loads into 4 registers. */
#include "timing.h"
    TIMING_START
    li s0, LOCAL_RAM
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    lw a2, 4(s0)
    lw a3, 8(s0)
    lw a4, 12(s0)
    .endr
    TIMING_END
