/* A not-taken forward branch is predicted: 1 cycle (README.md, "Integer Unit": branches
 * occupy the Integer Unit for one cycle; spec: forward predicted not taken).
 * Unit: bne zero, zero to an out-of-line ebreak. */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    bne zero, zero, never
    .endr
    TIMING_END
never:
    ebreak
