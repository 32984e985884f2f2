/* A loop of REPS addi. InstructionCache.md: 2 KiB cache on RISCV B/T0/T2, 512 bytes on
 * T1 and NC. Spec assumption: direct-mapped, 16-byte lines, a miss costs 8 cycles, no
 * prefetcher. A body larger than the cache misses every line on every pass: 1 + 8/4
 * cycles per instruction; a body that fits runs at 1 per instruction after the first pass.
 * Unit: 1 addi. */
#include "timing.h"
    TIMING_START
    li t0, 0
    TIMING_LOOP
    .rept REPS
    addi t0, t0, 1
    .endr
    TIMING_END
