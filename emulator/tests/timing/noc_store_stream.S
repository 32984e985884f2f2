/* A stream of stores to a NoC register: README.md, "Load/Store Unit": "Other memory
 * regions can achieve a throughput of one store every cycle".
 * The register is TARG_ADDR_LO of NoC0 command buffer 0 (0xFFB20000): plain storage,
 * nothing is issued (CMD_CTRL is never written).
 * Unit: 1 sw. */
#include "timing.h"
    TIMING_START
    li s0, NOC_TARG_ADDR_LO_0
    li a1, 0x30000
    TIMING_LOOP
    .rept REPS
    sw a1, 0(s0)
    .endr
    TIMING_END
