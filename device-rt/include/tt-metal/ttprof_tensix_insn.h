// ttprof_tensix_insn.h - force-included (`-include`) into a tt-metal compute kernel built by
// `ttprof build --tt-metal` for a TRISC with Debian's riscv64-unknown-elf-g++.
//
// tt-llk pushes a Tensix instruction two ways (ckernel_ops.h): TTI_INSN(E), E a compile-time
// constant, as the directive `.ttinsn E`, which only Tenstorrent's assembler knows; and TT_INSN(E),
// a run-time value, as a store to ckernel::instrn_buffer[0]. Without Tenstorrent's compiler both
// become `.error`. The ISA documentation defines `.ttinsn E` (E < 0xC0000000) as the 32-bit word E
// rotated left by two bits, which the core executes exactly as a store of E to INSTRN_BUF_BASE
// (tt-isa-documentation, WormholeB0/TensixTile/BabyRISCV/PushTensixInstruction.md). So TTI_INSN
// emits that word with `.4byte`, and TT_INSN is tt-llk's own store. The "n" constraint, as in
// tt-llk, needs every encoding to be a constant after inlining: true at -O3, tt-metal's default
// for compute kernels.
#pragma once
#include <cstdint>
#include "ckernel_ops.h"

extern volatile std::uint32_t __instrn_buffer[];

#undef TTI_INSN
#undef TT_INSN
#define TTI_INSN(ENCODING) \
    ({ __asm__ __volatile__(".4byte %0" ::"n"((unsigned(ENCODING) << 2) | (unsigned(ENCODING) >> 30))); })
#define TT_INSN(ENCODING) void(::ckernel::instrn_buffer[0] = unsigned(ENCODING))

// Tensix semaphore posts as signals (with PROFILE_KERNEL): every SEMPOST tt-llk pushes
// (`TTI_SEMPOST(semaphore::t6_sem(n))`, math handing Dst to pack, ...) records a
// `tensix_sem_post(n)` signal at the push, for each semaphore its mask names, so the host
// can match a TRISC's wait on that semaphore to the push that released it, with no change
// to the kernel. The mask is tested bit by bit: each bit's site has a constant index, and a
// constant mask leaves one branch.
#if defined(PROFILE_KERNEL)
#include "ttprof.h"
#define TTPROF__SEMPOST_BIT(mask, n, name)                                             \
    do {                                                                               \
        if ((mask) & (1u << (n))) {                                                    \
            TTPROF_SIGNAL(name, TTPROF_TENSIX_SEM_POST(n));                            \
        }                                                                              \
    } while (0)
#undef TTI_SEMPOST
#define TTI_SEMPOST(sem_sel)                                                           \
    ({                                                                                 \
        const unsigned ttprof__mask = (unsigned)(sem_sel);                             \
        TTPROF__SEMPOST_BIT(ttprof__mask, 0, "tensix-sem-post-0");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 1, "tensix-sem-post-1");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 2, "tensix-sem-post-2");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 3, "tensix-sem-post-3");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 4, "tensix-sem-post-4");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 5, "tensix-sem-post-5");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 6, "tensix-sem-post-6");                                          \
        TTPROF__SEMPOST_BIT(ttprof__mask, 7, "tensix-sem-post-7");                                          \
        TTI_INSN(TT_OP_SEMPOST(sem_sel));                                              \
    })
#endif
