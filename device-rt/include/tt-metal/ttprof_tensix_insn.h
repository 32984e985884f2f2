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
