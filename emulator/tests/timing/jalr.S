/* jalr is always predicted (spec assumption): auipc + jalr over one instruction,
 * 2 instructions in 2 cycles.
 * Unit: auipc t0, 0; jalr zero, 12(t0) over an ebreak (never executed). */
#include "timing.h"
    TIMING_START
    TIMING_LOOP
    .rept REPS
    auipc t0, 0
    jalr zero, 12(t0)
    ebreak
    .endr
    TIMING_END
