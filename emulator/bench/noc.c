/* noc-bench's data-movement kernel: drives the NIU registers the way tt-metal's
 * data-movement tests do (noc_async_read / noc_async_write / multicast, then a barrier on
 * the status counter) and measures itself with the wall clock.
 *
 * Parameters (written by the host at PARAMS): mode, x, y, remote address, bytes per
 * transaction, transactions, multicast rectangle end (x1, y1), destinations.
 * Result at RESULT: cycles from the first issue to the barrier's end. */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#ifdef BLACKHOLE
#define STRIDE 0x800u
#define CMD_CTRL 0x40u
#else
#define STRIDE 0x400u
#define CMD_CTRL 0x28u
#endif
#define TARG_LO 0x00u
#define RET_LO 0x0Cu
#define CTRL 0x1Cu
#define AT_LEN_BE 0x20u
#define NIU 0xFFB20000u
#define CB(buf, reg) REG(NIU + (buf) * STRIDE + (reg))
#define STATUS(i) REG(NIU + 0x200u + 4u * (i))
#define WR_ACK_RECEIVED 1
#define RD_RESP_RECEIVED 2

#define PARAMS 0x30000u
#define RESULT 0x30100u
#define LOCAL_BUF 0x40000u

enum { READ = 0, WRITE = 1, MCAST = 2 };

static void coords(uint32_t buf, uint32_t reg, uint32_t x, uint32_t y, uint32_t x0, uint32_t y0) {
#ifdef BLACKHOLE
    CB(buf, reg + 4) = 0;
    CB(buf, reg + 8) = x | (y << 6) | (x0 << 12) | (y0 << 18);
#else
    CB(buf, reg + 4) = (x << 4) | (y << 10) | (x0 << 16) | (y0 << 22);
#endif
}

static uint32_t wall(void) { return REG(0xFFB121F0u); }

int work(void) {
    volatile uint32_t *p = (volatile uint32_t *)PARAMS;
    uint32_t mode = p[0], x = p[1], y = p[2], addr = p[3], size = p[4], count = p[5];
    uint32_t x0 = p[6], y0 = p[7], dests = p[8];
    uint32_t rd0 = STATUS(RD_RESP_RECEIVED), ack0 = STATUS(WR_ACK_RECEIVED);
    /* State set once per kernel, as tt-metal's *_set_state variants do. */
    uint32_t buf = mode == READ ? 1 : 0;
    CB(buf, CTRL) = mode == READ ? 0u : (2u | (1u << 4) | (mode == MCAST ? (1u << 5) : 0u));
    CB(buf, AT_LEN_BE) = size;
    uint32_t t0 = wall();
    for (uint32_t i = 0; i < count; i++) {
        while (CB(buf, CMD_CTRL) != 0) {
        }
        if (mode == READ) {
            CB(buf, RET_LO) = LOCAL_BUF;
            CB(buf, TARG_LO) = addr + (i % 64) * size;
            coords(buf, TARG_LO, x, y, 0, 0);
        } else {
            CB(buf, TARG_LO) = LOCAL_BUF;
            CB(buf, RET_LO) = addr + (i % 64) * size;
            coords(buf, RET_LO, x, y, x0, y0);
        }
        CB(buf, CMD_CTRL) = 1;
    }
    if (mode == READ) {
        while (STATUS(RD_RESP_RECEIVED) != rd0 + count) {
        }
    } else {
        while (STATUS(WR_ACK_RECEIVED) != ack0 + count * dests) {
        }
    }
    REG(RESULT) = wall() - t0;
    return 0;
}
