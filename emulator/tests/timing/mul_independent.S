/* Independent multiplies: Wormhole's multiplier occupies the Integer Unit 2 cycles ("the
 * next instruction cannot enter the unit until the multiply instruction has finished",
 * README.md, "Integer Unit"), so 2 each; Blackhole (spec assumption) issues one per cycle.
 * Unit: mul, mulh, mulhsu, mulhu into 4 registers from the same sources. */
#include "timing.h"
    TIMING_START
    li a0, 0x12345
    li a1, -7
    TIMING_LOOP
    .rept REPS
    mul a2, a0, a1
    mulh a3, a0, a1
    mulhsu a4, a0, a1
    mulhu a5, a0, a1
    .endr
    TIMING_END
