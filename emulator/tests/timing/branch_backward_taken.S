/* A taken backward branch is predicted: 1 cycle (spec: backward predicted taken; jal
 * always predicted). README.md, "Integer Unit": a correctly predicted branch occupies the
 * Integer Unit one cycle.
 * Unit: j 2f; 1: j 3f; 2: beq zero, zero, 1b; 3:  - one backward taken beq and two jal,
 * 3 instructions in 3 cycles. */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    j 2f
1:  j 3f
2:  beq zero, zero, 1b
3:
    .endr
    TIMING_END
