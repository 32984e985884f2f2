/* ALU ops have latency 1: a chain of dependent addi issues one per cycle.
 * WormholeB0/TensixTile/BabyRISCV/README.md, "Integer Unit": "There is a forwarding path
 * allowing the result of the Integer Unit to be consumed by the very next instruction."
 * Unit: 1 addi. Expected 1 cycle (both arches). */
#include "timing.h"
    TIMING_START
    li a0, 0
    TIMING_LOOP
    .rept REPS
    addi a0, a0, 1
    .endr
    TIMING_END
