/* Two-core causality probe (tests/timing.rs, causality tests).
 *
 * Two cores of one tile play ping-pong through one L1 word FLAG for K rounds. In round r
 * the pinger stores 2r+1 and waits for 2r+2; the ponger waits for 2r+1 and stores 2r+2.
 * Each side logs, per round, into its own L1 log at LOG:
 *   seen: the wall clock read right after its poll loop saw the other side's value;
 *   sent: the wall clock read just before the store of its own value.
 * A hart cannot observe a store before the store happens, so the receiver's `seen` of a
 * round is at least the sender's `sent` (MemoryOrdering.md: a write-request is processed
 * after it is emitted, and a read observes it only after it is processed; the wall-clock
 * read is after the poll's load because the poll's branch consumes the load's result).
 *
 * Defines: PINGER (1 or 0), K, FLAG, LOG (L1 addresses).
 */
#include <stdint.h>

__asm__(".section .ttprof.boot,\"ax\"\n j _start\n"
        ".section .ttprof.start,\"ax\"\n.globl _start\n_start:\n la sp, __stack_top\n call main\n ecall\n1: j 1b\n");

#define WALL_CLOCK_L (*(volatile uint32_t *)0xFFB121F0u)
#define FLAG_WORD (*(volatile uint32_t *)(FLAG))

struct rec {
    uint32_t round, seen, sent, pad;
};

static void wait_for(uint32_t v) {
    while (FLAG_WORD != v) {
    }
}

int main(void) {
    volatile struct rec *log = (volatile struct rec *)(LOG);
    for (uint32_t r = 0; r < K; r++) {
#if PINGER
        uint32_t sent = WALL_CLOCK_L;
        FLAG_WORD = 2 * r + 1;
        wait_for(2 * r + 2);
        uint32_t seen = WALL_CLOCK_L;
#else
        wait_for(2 * r + 1);
        uint32_t seen = WALL_CLOCK_L;
        uint32_t sent = WALL_CLOCK_L;
        FLAG_WORD = 2 * r + 2;
#endif
        log[r].round = r;
        log[r].seen = seen;
        log[r].sent = sent;
    }
    return 0;
}
