/* A taken forward branch is mispredicted (spec assumption: static backward-taken /
 * forward-not-taken predictor): README.md, "Integer Unit": "A mispredicted branch causes
 * a two cycle pipeline bubble ... mispredicted branches occupy the Integer Unit for three
 * cycles". Blackhole (spec): a 4-cycle bubble, 5.
 * Unit: beq zero, zero over an ebreak (the target is not the fall-through, so a frontend
 * that predicted not taken fetched the wrong instruction). */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    beq zero, zero, 1f
    ebreak
1:
    .endr
    TIMING_END
