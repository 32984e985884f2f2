/* Dependent loads from core-local data RAM: README.md, "Local data RAM": "A load from
 * local RAM has a latency of two cycles".
 * Unit: lw a0, 0(a0), with the local word at a0 holding its own address. */
#include "timing.h"
    TIMING_START
    li a0, LOCAL_RAM
    sw a0, 0(a0)
    TIMING_LOOP
    .rept REPS
    lw a0, 0(a0)
    .endr
    TIMING_END
