/* Dependent L1 loads: each lw needs the previous one's result, so the full L1 load
 * latency shows. README.md, "Load/Store Unit" table: L1 scratchpad RAM, latency >= 8.
 * Blackhole (spec assumption): the word stays in the data cache, hit latency 3.
 * Unit: lw a0, 0(a0), with the word at a0 holding its own address. */
#include "timing.h"
    TIMING_START
    li a0, L1_DATA
    sw a0, 0(a0)
    TIMING_LOOP
    .rept REPS
    lw a0, 0(a0)
    .endr
    TIMING_END
