/* Back-to-back wall-clock reads: WALL_CLOCK_L is a tile control/debug/status register,
 * latency >= 7 and one of the 4-in-flight regions (README.md, "Load/Store Unit" table),
 * so 4 reads every 7 - 1 = 6 cycles: 1.5 per read.
 * Unit: 4 lw of WALL_CLOCK_L into 4 registers. */
#include "timing.h"
    TIMING_START
    li s0, WALL_CLOCK_L
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    lw a2, 0(s0)
    lw a3, 0(s0)
    lw a4, 0(s0)
    .endr
    TIMING_END
