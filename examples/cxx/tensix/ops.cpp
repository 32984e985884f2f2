// Compute ops on the Tensix coprocessor, the way tt-metal splits a compute kernel: built once
// per TRISC (`ttprof run --kernel trisc=ops.cpp`), TRISC0 unpacks tiles from L1 into
// SrcA/SrcB, TRISC1 drives the Matrix Unit (and the Vector Unit for relu) into Dst, TRISC2
// packs Dst back to L1. Tiles are handed over with the coprocessor's semaphores:
//   semaphore 0  tiles in Dst ready to pack     (math posts, the pack RISC takes)
//   semaphore 1  free Dst halves (starts at 2)   (pack posts, the math RISC takes)
//   semaphore 2  free Src banks (starts at 2)    (math posts, the unpack RISC takes)
// Each RISC waits on a semaphore by reading it (a typed wait: the profile says which
// semaphore each TRISC waits for) and takes it with a store of an odd value (SEMGET).
//
// Runtime arguments (`--arg trisc=OP,TILES`): OP 0 eltwise add, 1 eltwise mul, 2 relu,
// 3 matmul; TILES the number of tiles (matmul: K tiles accumulated into one output tile).
// L1 (`--l1 ADDR=@FILE`): tiles of 32x32 BF16 (2048 bytes, faces 16x16 row-major) at IN0
// (unpacker 0, SrcA) and IN1 (unpacker 1, SrcB); results at OUT (BF16; matmul FP32). When
// EXPECT_COUNT (a word) is not zero, TRISC2 compares OUT with the EXPECT_COUNT bytes at
// EXPECT and records the data "mismatches" (and "first-mismatch", a byte offset).
#include <cstdint>
#include "ttprof.h"
#include "ttprof_tensix.h"

#define PUSH ttprof_tensix_push

enum : uint32_t {
    IN0 = 0x30000,
    IN1 = 0x38000,
    OUT = 0x40000,
    EXPECT = 0x48000,
    EXPECT_COUNT = 0x5F000,
    OP_ADD = 0,
    OP_MUL = 1,
    OP_RELU = 2,
    OP_MATMUL = 3,
    FMT_FP32 = 0,
    FMT_BF16 = 5,
    TILE_BYTES = 2048,
};

static volatile uint32_t *const SEM = (volatile uint32_t *)0xFFE80020u;   // Tensix semaphores
static volatile uint32_t *const TTSYNC = (volatile uint32_t *)0xFFE80004u; // CoprocessorDoneCheck
static volatile uint32_t *const CFG = (volatile uint32_t *)0xFFEF0000u;   // backend Config

// Waits until semaphore `n` is not zero, then takes one (SEMGET from the RISC side).
static inline void sem_take(uint32_t n) {
    while (SEM[n] == 0) {
    }
    SEM[n] = 1;
}

// Waits until this TRISC's Tensix thread has nothing queued or executing.
static inline void ttsync() {
    *TTSYNC = 0;
    (void)*TTSYNC;
}

// Config word `index` = GPR 4 set to `value` (16 bits), in the thread's instruction order,
// so it cannot overtake an earlier UNPACR/PACR still waiting in the FIFO.
static inline void wrcfg16(uint32_t index, uint32_t value) {
    PUSH(TTPROF_TENSIX_SETDMAREG(value, 8));
    PUSH(TTPROF_TENSIX_WRCFG(4, 0, index));
}

#if defined(TRISC_UNPACK)
static void run(uint32_t op, uint32_t tiles) {
    bool two = op != OP_RELU; // relu reads one operand
    for (uint32_t u = 0; u < 2; u++) {
        uint32_t sec = 52 + 40 * u;
        CFG[sec] = FMT_BF16 | (1 << 4) | (1024 << 16); // TileDescriptor: uncompressed, XDim 1024
        CFG[sec + 1] = 1;                              // YDim
        CFG[sec + 8] = FMT_BF16 | (2 << 4);            // Out_data_format, Throttle_mode x4
        CFG[sec + 9] = 1; // UNPACR's context 0 (tt-metal's form): uncompressed
    }
    CFG[72] = 64;   // Dest_cntx0_address: SrcA datum 64, row 4, the first row the unpacker writes
    CFG[74] = 1024; // Tile_x_dim_cntx0
    PUSH(TTPROF_TENSIX_SETC16(3, 1 << 2));       // SRCA_SET_SetOvrdWithAddr: 64 rows at once
    PUSH(TTPROF_TENSIX_SETADCXX(0b011, 1023, 0)); // X from 0 to 1023, both unpackers
    PUSH(TTPROF_TENSIX_SETDMAREG(0, 9));          // GPR 4's high half
    PUSH(TTPROF_TENSIX_SEMINIT(2, 2, 1 << 2));    // two free Src banks
    for (uint32_t t = 0; t < tiles; t++) {
        {
            TTPROF_WAIT("unpack-wait-src-free", TTPROF_TENSIX_SEMAPHORE(2));
            sem_take(2);
        }
        TTPROF_ZONE("unpack-tile");
        // Base_address: the tile's address in 16-byte units, less one for the tile header.
        wrcfg16(52 + 12, (IN0 + t * TILE_BYTES) / 16 - 1);
        PUSH(TTPROF_TENSIX_UNPACR(0, 0, 1, 0));
        if (two) {
            wrcfg16(92 + 12, (IN1 + t * TILE_BYTES) / 16 - 1);
            PUSH(TTPROF_TENSIX_UNPACR(1, 0, 1, 0));
        }
    }
}
#elif defined(TRISC_MATH)
// Eight ELWADD/ELWMUL over a tile at Dst row `dst`, the last giving both banks back and
// clearing the counters (address modifier 1). ELWMUL adds its products to Dst: the half is
// zeroed first (four ZEROACC of 16 rows). ZEROACC of 16 rows applies its address modifier
// too, so it names section 2, which run() sets to no step: with section 0 (+8) the four
// would move the RWCs 32 rows on and the ELWMULs would miss the tile's first 32 rows.
static void eltwise_tile(bool mul, uint32_t dst) {
    for (uint32_t k = 0; mul && k < 4; k++) {
        PUSH(TTPROF_TENSIX_ZEROACC(0, 1, 2, dst / 16 + k));
    }
    for (uint32_t k = 0; k < 8; k++) {
        uint32_t flips = k == 7 ? 0b11 : 0, am = k == 7 ? 1 : 0;
        PUSH(mul ? TTPROF_TENSIX_ELWMUL(flips, 0, am, dst) : TTPROF_TENSIX_ELWADD(flips, 0, 0, am, dst));
    }
}

// Relu: SrcA to Dst (eight MOVA2D of 8 rows), SrcA back to the unpacker, then the Vector
// Unit over the 64 rows, four rows of even then odd columns at a time: negative lanes
// (sign bit set) become zero.
static void relu_tile(uint32_t dst) {
    for (uint32_t k = 0; k < 8; k++) {
        PUSH(TTPROF_TENSIX_MOVA2D(0, 0, k == 7 ? 1 : 0, 1, dst));
    }
    PUSH(TTPROF_TENSIX_CLEARDVALID(0b01, 0, 0));
    for (uint32_t g = 0; g < 32; g++) {
        uint32_t row = dst + (g >> 1) * 4 + (g & 1) * 2;
        PUSH(TTPROF_TENSIX_SFPLOAD(0, 2, 2, row));  // LReg0 = Dst (BF16); AddrMod 2: no step
        PUSH(TTPROF_TENSIX_SFPSETCC(0, 0, 0, 0));   // flags = LReg0 < 0
        PUSH(TTPROF_TENSIX_SFPMOV(9, 0, 0));        // there, LReg0 = LReg9 (zero)
        PUSH(TTPROF_TENSIX_SFPENCC(0, 0, 0));       // every lane again
        PUSH(TTPROF_TENSIX_SFPSTORE(0, 2, 2, row));
    }
}

// The 16 MVMULs of one 32x32 tile in faces, K slice outer; SrcA/SrcB move by the address
// modifiers set in run(), Dst rows come from the immediate. The last gives the banks back.
static void matmul_tile() {
    static const uint8_t am[8] = {0, 1, 0, 2, 0, 1, 0, 3};
    PUSH(TTPROF_TENSIX_SETRWC(0, 0, 0, 0, 0b0111));
    for (uint32_t ki = 0; ki < 2; ki++) {
        for (uint32_t n = 0; n < 8; n++) {
            uint32_t mi = n >> 2, h = (n >> 1) & 1, ni = n & 1;
            uint32_t flips = ki == 1 && n == 7 ? 0b11 : 0;
            PUSH(TTPROF_TENSIX_MVMUL(flips, 0, am[n], 16 * (2 * mi + ni) + 8 * h));
        }
    }
}

static void run(uint32_t op, uint32_t tiles) {
    bool matmul = op == OP_MATMUL;
    // ALU formats: SrcA and SrcB BF16; Dst BF16, or FP32 (32-bit Dst) for matmul.
    CFG[1] = (FMT_BF16 << 17) | (FMT_BF16 << 21) | ((matmul ? FMT_FP32 : FMT_BF16) << 25) |
             ((uint32_t)matmul << 29);
    PUSH(TTPROF_TENSIX_SEMINIT(2, 0, 1 << 0)); // tiles ready
    PUSH(TTPROF_TENSIX_SEMINIT(2, 2, 1 << 1)); // two free Dst halves
    if (matmul) {
        // ADDR_MOD_AB_SEC<k> (ThreadConfig 7 + 2k): SrcA += a, SrcB += b between MVMULs.
        PUSH(TTPROF_TENSIX_SETC16(7, 16 | (0 << 8)));
        PUSH(TTPROF_TENSIX_SETC16(9, 48 | (8 << 8)));
        PUSH(TTPROF_TENSIX_SETC16(11, 48 | (24 << 8)));
        PUSH(TTPROF_TENSIX_SETC16(13, 16 | (40 << 8)));
    } else {
        PUSH(TTPROF_TENSIX_SETC16(7, 8 | (8 << 8))); // section 0: SrcA, SrcB += 8
        PUSH(TTPROF_TENSIX_SETC16(23, 8));           // Dst += 8
        PUSH(TTPROF_TENSIX_SETC16(9, 0x8080));       // section 1: clear SrcA, SrcB
        PUSH(TTPROF_TENSIX_SETC16(24, 0x800));       // and Dst
        PUSH(TTPROF_TENSIX_SETC16(11, 0));           // section 2: no step (ZEROACC, SFPLOAD)
        PUSH(TTPROF_TENSIX_SETC16(25, 0));
    }
    if (op == OP_RELU) {
        PUSH(TTPROF_TENSIX_SFPENCC(1, 0, 2)); // lane predication on, every flag true
    }
    if (matmul) {
        {
            TTPROF_WAIT("math-wait-dst-free", TTPROF_TENSIX_SEMAPHORE(1));
            sem_take(1);
        }
        PUSH(TTPROF_TENSIX_ZEROACC(0, 3, 0, 0));
    }
    for (uint32_t t = 0; t < tiles; t++) {
        if (!matmul) {
            TTPROF_WAIT("math-wait-dst-free", TTPROF_TENSIX_SEMAPHORE(1));
            sem_take(1);
        }
        TTPROF_ZONE("math-tile");
        uint32_t dst = 64 * (t % 2);
        if (matmul) {
            matmul_tile();
        } else if (op == OP_RELU) {
            relu_tile(dst);
        } else {
            eltwise_tile(op == OP_MUL, dst);
        }
        TTPROF_TENSIX_POST(2, PUSH); // a Src bank free for the unpacker
        if (!matmul) {
            TTPROF_TENSIX_POST(0, PUSH); // the tile is in Dst
        }
    }
    if (matmul) {
        TTPROF_TENSIX_POST(0, PUSH);
    }
}
#elif defined(TRISC_PACK)
static void run(uint32_t op, uint32_t tiles) {
    bool matmul = op == OP_MATMUL;
    uint32_t fmt = matmul ? FMT_FP32 : FMT_BF16;
    uint32_t bytes = matmul ? 2 * TILE_BYTES : TILE_BYTES;
    CFG[58] = 1 | (fmt << 4) | (fmt << 8); // no compression, Out/In_data_format
    CFG[14] = matmul;                      // Read_32b_data
    CFG[20] = 0xffff;                      // edge mask: every column kept
    CFG[8] = 2048u << 12;                  // Ystride: one Dst half
    PUSH(TTPROF_TENSIX_SETC16(31, 1));      // ADDR_MOD_PACK_SEC0: Y += 1
    PUSH(TTPROF_TENSIX_SETC16(32, 1 << 5)); // SEC1: Y = 0
    PUSH(TTPROF_TENSIX_SETADCXX(0b100, 1023, 0));
    PUSH(TTPROF_TENSIX_SETDMAREG(0, 9));
    uint32_t outputs = matmul ? 1 : tiles;
    for (uint32_t t = 0; t < outputs; t++) {
        {
            TTPROF_WAIT("pack-wait-tile-ready", TTPROF_TENSIX_SEMAPHORE(0));
            sem_take(0);
        }
        TTPROF_ZONE("pack-tile");
        wrcfg16(57, (OUT + t * bytes) / 16 - 1); // L1_Dest_addr (less one for the header)
        PUSH(TTPROF_TENSIX_PACR(matmul ? 1 : t % 2, 0, 1, 0, 0, 0, 1));
        TTPROF_TENSIX_POST(1, PUSH); // the Dst half is free again
    }
}

// Compares OUT with the expected bytes the test placed at EXPECT.
static void check() {
    uint32_t n = *(volatile uint32_t *)EXPECT_COUNT / 4;
    if (n == 0) {
        return;
    }
    const volatile uint32_t *out = (const volatile uint32_t *)OUT;
    const volatile uint32_t *want = (const volatile uint32_t *)EXPECT;
    uint32_t bad = 0, first = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] != want[i] && bad++ == 0) {
            first = 4 * i;
        }
    }
    TTPROF_DATA("mismatches", bad);
    if (bad) {
        TTPROF_DATA("first-mismatch", first);
    }
}
#endif

namespace NAMESPACE {
void MAIN {
    uint32_t op = get_arg_val<uint32_t>(0), tiles = get_arg_val<uint32_t>(1);
#if defined(TRISC_MATH)
    // The math thread's whole op, until its coprocessor thread is done: with
    // `ttprof run --counters fpu` it carries the Matrix Unit instructions the op issued.
    TTPROF_COUNTED_ZONE("math-op");
#endif
    run(op, tiles);
    {
        TTPROF_WAIT("wait-coprocessor-done", TTPROF_TTSYNC);
        ttsync();
    }
#if defined(TRISC_PACK)
    check();
#endif
}
}  // namespace NAMESPACE
