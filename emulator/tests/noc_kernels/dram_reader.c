/* One of several cores reading the same DRAM bank: `count` back-to-back reads of `size`
 * bytes from the bank's NoC0 endpoint into L1, then a barrier on RD_RESP_RECEIVED; the
 * wall-clock cycles from the first issue to the barrier's end go to RES[0], the first
 * word read to RES[1].
 *
 * Build: riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 [-DBLACKHOLE] */
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
#define RD_BUF 1u
#define CB(reg) REG(0xFFB20000u + RD_BUF * STRIDE + (reg))
#define RD_RESP_RECEIVED REG(0xFFB20000u + 0x200u + 4u * 2u)

#define PARAMS ((volatile uint32_t *)0x30000u)
#define RES ((volatile uint32_t *)0x30400u)
#define DST 0x40000u

static uint32_t wall(void) { return REG(0xFFB121F0u); }

int main(void) {
    uint32_t x = PARAMS[0], y = PARAMS[1], addr = PARAMS[2], size = PARAMS[3], count = PARAMS[4];
    uint32_t rd0 = RD_RESP_RECEIVED;
    CB(CTRL) = 0; /* read */
    CB(AT_LEN_BE) = size;
    CB(RET_LO) = DST;
#ifdef BLACKHOLE
    CB(TARG_LO + 4) = 0;
    CB(TARG_LO + 8) = x | (y << 6);
#else
    CB(TARG_LO + 4) = (x << 4) | (y << 10);
#endif
    uint32_t t0 = wall();
    for (uint32_t i = 0; i < count; i++) {
        while (CB(CMD_CTRL) != 0) {
        }
        CB(TARG_LO) = addr + i * size;
        CB(CMD_CTRL) = 1;
    }
    while (RD_RESP_RECEIVED != rd0 + count) {
    }
    RES[0] = wall() - t0;
    RES[1] = *(volatile uint32_t *)(uintptr_t)DST; /* the last read's first word */
    return 0;
}
