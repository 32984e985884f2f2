/* Dependent multiplies: README.md, "Integer Unit": "Multiply instructions ... occupy the
 * Integer Unit for two cycles". Result usable 2 cycles after issue on both arches (spec).
 * Unit: mul a0, a0, a1. */
#include "timing.h"
    TIMING_START
    li a0, 3
    li a1, 5
    TIMING_LOOP
    .rept REPS
    mul a0, a0, a1
    .endr
    TIMING_END
