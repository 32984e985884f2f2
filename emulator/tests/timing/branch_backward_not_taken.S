/* A not-taken backward branch is mispredicted (spec: backward predicted taken): 1 + the
 * 2-cycle bubble of README.md, "Integer Unit" [Blackhole, spec: 1 + 4].
 * Unit: bne zero, zero back to _start (never taken). */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    bne zero, zero, _start
    .endr
    TIMING_END
