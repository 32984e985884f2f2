/* The frame every timing program shares (tests/timing.rs builds and runs them).
 *
 * A program is
 *
 *     TIMING_START            boot word (BRISC) and _start in .ttprof.start
 *     ...set-up...
 *     TIMING_LOOP             s11 = LOOPS; a 16-byte aligned loop head
 *     .rept REPS
 *       the pattern           one unit of the rule under test
 *     .endr
 *     TIMING_END              s11 -= 1; bnez s11 back; ecall
 *     ...out-of-line targets (never reached)...
 *
 * and is built four times: REPS = N and 2N, LOOPS = 1 and 2. The per-unit cost is
 *
 *     ((cycles(2N, 2) - cycles(2N, 1)) - (cycles(N, 2) - cycles(N, 1))) / N
 *
 * i.e. the cost of N units in a warm second pass of the loop: everything that happens
 * once (set-up, the first pass's instruction-cache misses, the loop's final mispredicted
 * bnez, ecall) cancels. Straight-line code run once would pay an instruction-cache miss
 * per 16-byte line (the model has no prefetcher), which the table's figures exclude.
 *
 * The pattern may use any register but s11 (the loop counter). Comments are C style:
 * the C preprocessor reads these files first, so a line starting with # is a directive.
 *
 * Defines from the harness: REPS, LOOPS, L1_DATA (the core's L1 data region),
 * NOC_RD_BUF (NoC0 command buffer 1, the read buffer), NOC_CMD_CTRL, NOC_TARG_ADDR_MID,
 * NOC_RET_ADDR_LO, NOC_RET_ADDR_MID, NOC_CTRL, NOC_AT_LEN_BE (register offsets of the
 * arch, from riscv_linker::noc::niu_map).
 */
#ifndef REPS
#error "REPS (units per loop pass) is passed with -DREPS=n"
#endif
#ifndef LOOPS
#define LOOPS 1
#endif

/* Exact code layout (no linker relaxation): line alignment matters to the i-cache. */
.option norelax

#define LOCAL_RAM 0xFFB00000  /* MEM_LOCAL_BASE: the core's own data RAM (stack) */
#define WALL_CLOCK_L 0xFFB121F0 /* RISCV_DEBUG_REG_WALL_CLOCK_L (tile control/debug/status) */

.macro TIMING_START
    /* BRISC resets at 0: its boot word jumps to the code region (other cores' linker
     * scripts discard this section). */
    .section .ttprof.boot, "ax"
    j _start
    .section .ttprof.start, "ax"
    .globl _start
_start:
.endm

.macro TIMING_LOOP
    li s11, LOOPS
    .balign 16
timing_loop:
.endm

.macro TIMING_END
    addi s11, s11, -1
    bnez s11, timing_loop   /* backward: predicted taken; the last pass mispredicts */
    li a0, 0
    ecall
1:  j 1b
.endm
