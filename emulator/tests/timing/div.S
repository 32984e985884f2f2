/* Divides: README.md, "Integer Unit": a divide occupies the Integer Unit a variable number
 * of cycles: 2 when dividing by zero or one or for INT_MIN / -1 (signed), otherwise
 * "between six and 33 cycles ... dependent upon the magnitude of the dividend" (spec:
 * max(6, 1 + bit length of |dividend|)).
 * The harness passes DIV_OP (div, divu, rem, remu), DIVIDEND and DIVISOR.
 * Unit: DIV_OP a2, a0, a1 (independent: the next one waits only for the Integer Unit). */
#include "timing.h"
    TIMING_START
    li a0, DIVIDEND
    li a1, DIVISOR
    TIMING_LOOP
    .rept REPS
    DIV_OP a2, a0, a1
    .endr
    TIMING_END
