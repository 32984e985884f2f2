/* The register traffic of issuing a NoC read, without issuing it: poll CMD_CTRL of an idle
 * command buffer (NoC register, latency 7: README.md, "Load/Store Unit" table), branch on
 * it (not taken, forward: predicted), then 6 stores to the buffer's registers (one per
 * cycle: non-L1 region). 7 + 1 + 6 = 14.
 * CMD_CTRL is never written, so nothing is issued; the branch goes to an ebreak (a fault)
 * if the buffer ever reads busy.
 * Unit: lw CMD_CTRL; bnez; sw TARG_ADDR_LO, TARG_ADDR_MID, RET_ADDR_LO, RET_ADDR_MID,
 * CTRL, AT_LEN_BE of NoC0 command buffer 1 (tt-metal's read buffer). */
#include "timing.h"
    TIMING_START
    li s0, NOC_RD_BUF
    li a2, 0x30000      /* an L1 address */
    li a3, 0            /* coordinates/high bits (never used) */
    li a4, 0            /* NOC_CMD_RD */
    li a5, 64           /* bytes */
    TIMING_LOOP
    .rept REPS
    lw a0, NOC_CMD_CTRL(s0)
    bnez a0, noc_busy
    sw a2, 0(s0)
    sw a3, NOC_TARG_ADDR_MID(s0)
    sw a2, NOC_RET_ADDR_LO(s0)
    sw a3, NOC_RET_ADDR_MID(s0)
    sw a4, NOC_CTRL(s0)
    sw a5, NOC_AT_LEN_BE(s0)
    .endr
    TIMING_END
noc_busy:
    ebreak
