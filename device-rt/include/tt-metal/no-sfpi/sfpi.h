// sfpi.h for a compiler without Tenstorrent's SFPI extensions (`ttprof build --tt-metal`, TRISC).
//
// SFPI's C++ API (sfpi::vFloat, dst_reg, v_if, ...) ships with Tenstorrent's SFPI compiler, not
// with tt-metal: its values live in the SFPU's eight local registers, which only that compiler
// allocates, so Debian's GCC cannot generate SFPU code at all. tt-llk includes this header from
// every compute kernel, FPU-only ones too, which use none of its types: here it has none. A
// kernel that reaches SFPU code fails to compile on the first SFPI name, and `ttprof build`
// reports which function needed the SFPI compiler.
#pragma once

// The instruction-field constants of SFPI's API that tt-llk passes to raw TTI_SFP* macros in
// code every compute kernel includes (Blackhole's ckernel_sfpu_load_config.h): plain numbers,
// with the values the ISA documentation gives (tt-isa-documentation,
// WormholeB0/TensixTile/TensixCoprocessor/SFPLOADI.md).
namespace sfpi {
constexpr unsigned SFPLOADI_MOD0_FLOATB = 0;
constexpr unsigned SFPLOADI_MOD0_FLOATA = 1;
constexpr unsigned SFPLOADI_MOD0_USHORT = 2;
constexpr unsigned SFPLOADI_MOD0_SHORT = 4;
constexpr unsigned SFPLOADI_MOD0_UPPER = 8;
constexpr unsigned SFPLOADI_MOD0_LOWER = 10;
}  // namespace sfpi
