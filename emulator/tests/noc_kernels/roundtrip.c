/* A data-movement kernel written against the NIU registers (no helper API), the way
 * tt-metal's dataflow_api drives them: it reads a tensor from interleaved DRAM, writes it
 * to another tile, reads it back, multicasts, increments a remote semaphore, writes it
 * back to DRAM, and records what the status counters said at each step in RES[].
 *
 * Build: riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 [-DBLACKHOLE]
 * Parameters are written by the host into L1 at PARAMS before the run (as firmware
 * writes the DRAM bank tables). */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

#ifdef BLACKHOLE
#define STRIDE 0x800u
#define AT_DATA 0x28u
#define CMD_CTRL 0x40u
#define NODE_ID 0x44u
#define WORD 64u
#else
#define STRIDE 0x400u
#define AT_DATA 0x24u
#define CMD_CTRL 0x28u
#define NODE_ID 0x2Cu
#define WORD 32u
#endif
#define TARG_LO 0x00u
#define TARG_MID 0x04u
#define TARG_HI 0x08u
#define RET_LO 0x0Cu
#define RET_MID 0x10u
#define RET_HI 0x14u
#define PACKET_TAG 0x18u
#define CTRL 0x1Cu
#define AT_LEN_BE 0x20u

#define NIU(noc) (0xFFB20000u + (noc) * 0x10000u)
#define CB(noc, buf, reg) REG(NIU(noc) + (buf) * STRIDE + (reg))
#define STATUS(noc, i) REG(NIU(noc) + 0x200u + 4u * (i))

#define ATOMIC_RESP_RECEIVED 0
#define WR_ACK_RECEIVED 1
#define RD_RESP_RECEIVED 2
#define NONPOSTED_WR_REQ_SENT 0xA
#define POSTED_WR_REQ_SENT 0xB
#define REQS_OUTSTANDING(id) (0x10 + (id))

#define CMD_RD 0u
#define CMD_AT 1u
#define CMD_WR 2u
#define CMD_WR_INLINE (1u << 3)
#define CMD_RESP_MARKED (1u << 4)
#define CMD_BRCST (1u << 5)

#define WR_BUF 0
#define RD_BUF 1
#define REG_BUF 2
#define AT_BUF 3

#define PARAMS 0x30000u
#define RES ((volatile uint32_t *)0x30400u)
#define IN_BUF 0x40000u
#define BACK_BUF 0x50000u
#define SEM 0x30800u
#define MCAST_SRC 0x31000u
#define INLINE_DST 0x31100u
#define MAX_BURST (32u * WORD * 8u)

struct bank { uint32_t x, y, offset; };
struct params {
    struct bank banks[16];
    uint32_t n_banks, n_pages, page_size, in_base, out_base;
    uint32_t bx, by, cx, cy, noc_w, noc_h;
};
#define P ((volatile struct params *)PARAMS)

static uint32_t wall(void) { return REG(0xFFB121F0u); }

/* The coordinate register(s) of an address: Wormhole packs x, y into MID; Blackhole has HI. */
static void set_coords(uint32_t noc, uint32_t buf, uint32_t lo_reg, uint32_t x, uint32_t y) {
#ifdef BLACKHOLE
    CB(noc, buf, lo_reg + 4) = 0;
    CB(noc, buf, lo_reg + 8) = x | (y << 6);
#else
    CB(noc, buf, lo_reg + 4) = (x << 4) | (y << 10);
#endif
}

static void set_mcast(uint32_t noc, uint32_t buf, uint32_t lo_reg, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
#ifdef BLACKHOLE
    CB(noc, buf, lo_reg + 4) = 0;
    CB(noc, buf, lo_reg + 8) = x1 | (y1 << 6) | (x0 << 12) | (y0 << 18);
#else
    CB(noc, buf, lo_reg + 4) = (x1 << 4) | (y1 << 10) | (x0 << 16) | (y0 << 22);
#endif
}

static void wait_ready(uint32_t noc, uint32_t buf) {
    while (CB(noc, buf, CMD_CTRL) != 0) {
    }
}

static void read(uint32_t noc, uint32_t x, uint32_t y, uint32_t src, uint32_t dst, uint32_t len, uint32_t txn) {
    wait_ready(noc, RD_BUF);
    CB(noc, RD_BUF, CTRL) = CMD_RD;
    CB(noc, RD_BUF, PACKET_TAG) = txn << 10;
    CB(noc, RD_BUF, RET_LO) = dst;
    CB(noc, RD_BUF, TARG_LO) = src;
    set_coords(noc, RD_BUF, TARG_LO, x, y);
    CB(noc, RD_BUF, AT_LEN_BE) = len;
    CB(noc, RD_BUF, CMD_CTRL) = 1;
}

static void write(uint32_t noc, uint32_t x, uint32_t y, uint32_t src, uint32_t dst, uint32_t len) {
    wait_ready(noc, WR_BUF);
    CB(noc, WR_BUF, CTRL) = CMD_WR | CMD_RESP_MARKED;
    CB(noc, WR_BUF, TARG_LO) = src;
    CB(noc, WR_BUF, RET_LO) = dst;
    set_coords(noc, WR_BUF, RET_LO, x, y);
    CB(noc, WR_BUF, AT_LEN_BE) = len;
    CB(noc, WR_BUF, CMD_CTRL) = 1;
}

static void page_addr(uint32_t base, uint32_t page, uint32_t *x, uint32_t *y, uint32_t *addr) {
    uint32_t b = page % P->n_banks;
    uint32_t stride = (P->page_size + WORD - 1) / WORD * WORD;
    *x = P->banks[b].x;
    *y = P->banks[b].y;
    *addr = P->banks[b].offset + base + (page / P->n_banks) * stride;
}

int main(void) {
    uint32_t n = P->n_pages, ps = P->page_size, total = n * ps;
    uint32_t x, y, a;
    RES[0] = REG(NIU(0) + NODE_ID);
    RES[1] = REG(NIU(1) + NODE_ID);

    /* Software counts seeded from the hardware counters, as tt-metal does at kernel start. */
    uint32_t rd0 = STATUS(0, RD_RESP_RECEIVED), ack0 = STATUS(0, WR_ACK_RECEIVED);
    uint32_t nps0 = STATUS(0, NONPOSTED_WR_REQ_SENT), at0 = STATUS(0, ATOMIC_RESP_RECEIVED);
    uint32_t ps0 = STATUS(0, POSTED_WR_REQ_SENT);

    /* 1. One read, polled too early: the counter and the data are still old. */
    REG(IN_BUF) = 0xDEADBEEFu;
    page_addr(P->in_base, 0, &x, &y, &a);
    uint32_t t0 = wall();
    read(0, x, y, a, IN_BUF, ps, 0);
    RES[2] = CB(0, RD_BUF, CMD_CTRL);
    RES[3] = STATUS(0, RD_RESP_RECEIVED) - rd0;
    RES[4] = REG(IN_BUF);
    while (STATUS(0, RD_RESP_RECEIVED) != rd0 + 1) {
    }
    RES[14] = wall() - t0;
    RES[5] = REG(IN_BUF);

    /* 2. The rest of the tensor, page by page under transaction id 3, then the barrier. */
    for (uint32_t p = 1; p < n; p++) {
        page_addr(P->in_base, p, &x, &y, &a);
        read(0, x, y, a, IN_BUF + p * ps, ps, 3);
    }
    RES[7] = STATUS(0, REQS_OUTSTANDING(3));
    while (STATUS(0, RD_RESP_RECEIVED) != rd0 + n) {
    }
    RES[6] = STATUS(0, REQS_OUTSTANDING(3));

    /* 3. To tile B, non-posted, in bursts; barrier on the acks. */
    uint32_t writes = 0;
    for (uint32_t off = 0; off < total; off += MAX_BURST) {
        uint32_t len = total - off < MAX_BURST ? total - off : MAX_BURST;
        write(0, P->bx, P->by, IN_BUF + off, IN_BUF + off, len);
        writes++;
    }
    while (STATUS(0, WR_ACK_RECEIVED) != ack0 + writes) {
    }
    RES[8] = STATUS(0, NONPOSTED_WR_REQ_SENT) - nps0;
    RES[9] = STATUS(0, WR_ACK_RECEIVED) - ack0;

    /* 4. And back from B. */
    uint32_t reads = n;
    for (uint32_t off = 0; off < total; off += MAX_BURST) {
        uint32_t len = total - off < MAX_BURST ? total - off : MAX_BURST;
        read(0, P->bx, P->by, IN_BUF + off, BACK_BUF + off, len, 0);
        reads++;
    }
    while (STATUS(0, RD_RESP_RECEIVED) != rd0 + reads) {
    }
    uint32_t bad = 0;
    for (uint32_t i = 0; i < total; i += 4) {
        bad += REG(IN_BUF + i) != REG(BACK_BUF + i);
    }
    RES[10] = bad;

    /* 5. Atomic increment of B's semaphore by 5 (noc_semaphore_inc). */
    wait_ready(0, AT_BUF);
    CB(0, AT_BUF, CTRL) = CMD_AT | CMD_RESP_MARKED;
    CB(0, AT_BUF, TARG_LO) = SEM;
    set_coords(0, AT_BUF, TARG_LO, P->bx, P->by);
    CB(0, AT_BUF, AT_LEN_BE) = (1u << 12) | (31u << 2) | ((SEM >> 2) & 3);
    CB(0, AT_BUF, AT_DATA) = 5;
    CB(0, AT_BUF, CMD_CTRL) = 1;
    while (STATUS(0, ATOMIC_RESP_RECEIVED) != at0 + 1) {
    }
    RES[11] = STATUS(0, ATOMIC_RESP_RECEIVED) - at0;

    /* 6. Multicast 256 bytes to the rectangle B..C: one ack per destination. */
    for (uint32_t i = 0; i < 64; i++) REG(MCAST_SRC + 4 * i) = 0x5A5A0000u + i;
    uint32_t acks = STATUS(0, WR_ACK_RECEIVED);
    wait_ready(0, WR_BUF);
    CB(0, WR_BUF, CTRL) = CMD_WR | CMD_RESP_MARKED | CMD_BRCST;
    CB(0, WR_BUF, TARG_LO) = MCAST_SRC;
    CB(0, WR_BUF, RET_LO) = MCAST_SRC;
    set_mcast(0, WR_BUF, RET_LO, P->bx, P->by, P->cx, P->cy);
    CB(0, WR_BUF, AT_LEN_BE) = 256;
    CB(0, WR_BUF, CMD_CTRL) = 1;
    while (STATUS(0, WR_ACK_RECEIVED) != acks + 2) {
    }
    RES[12] = STATUS(0, WR_ACK_RECEIVED) - acks;

    /* 7. Posted inline write of one word to C (noc_inline_dw_write). */
    wait_ready(0, REG_BUF);
    CB(0, REG_BUF, CTRL) = CMD_WR | CMD_WR_INLINE;
    CB(0, REG_BUF, TARG_LO) = INLINE_DST;
    set_coords(0, REG_BUF, TARG_LO, P->cx, P->cy);
    CB(0, REG_BUF, AT_DATA) = 0x12345678u;
    CB(0, REG_BUF, AT_LEN_BE) = 0xFu << (INLINE_DST & (WORD - 1));
    CB(0, REG_BUF, CMD_CTRL) = 1;
    while (STATUS(0, POSTED_WR_REQ_SENT) != ps0 + 1) {
    }

    /* 8. The copy that went through B back to DRAM, interleaved; barrier. */
    ack0 = STATUS(0, WR_ACK_RECEIVED);
    for (uint32_t p = 0; p < n; p++) {
        page_addr(P->out_base, p, &x, &y, &a);
        write(0, x, y, BACK_BUF + p * ps, a, ps);
    }
    while (STATUS(0, WR_ACK_RECEIVED) != ack0 + n) {
    }

    /* 9. One read over NoC1, whose coordinates are mirrored. */
    uint32_t rd1 = STATUS(1, RD_RESP_RECEIVED);
    read(1, P->noc_w - 1 - P->bx, P->noc_h - 1 - P->by, IN_BUF, BACK_BUF, 1024, 0);
    while (STATUS(1, RD_RESP_RECEIVED) != rd1 + 1) {
    }
    bad = 0;
    for (uint32_t i = 0; i < 1024; i += 4) bad += REG(IN_BUF + i) != REG(BACK_BUF + i);
    RES[13] = bad;
    return 0;
}
