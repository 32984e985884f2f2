/* jal is always predicted (spec assumption; README.md, "Frontend": the Frontend predicts
 * all control flow): 1 cycle.
 * Unit: j over an ebreak (never executed). */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    j 1f
    ebreak
1:
    .endr
    TIMING_END
