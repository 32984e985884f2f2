/* Blackhole only (Wormhole has no Zicsr): a CSR access serialises, waiting for everything
 * in flight (spec assumption). After an L1 load (data-cache hit, latency 3) a csrr that
 * does not use the load's result still waits for it: 3 + 1 per unit (2 without the rule).
 * Unit: lw a1; csrr a2, cycle. */
#include "timing.h"
    .option arch, +zicsr
    TIMING_START
    li s0, L1_DATA
    TIMING_LOOP
    .rept REPS
    lw a1, 0(s0)
    csrr a2, cycle
    .endr
    TIMING_END
