// lltt.h for a compiler without Tenstorrent's Tensix builtins (`ttprof build --tt-metal`, TRISC).
//
// SFPI's lltt.h records and replays Tensix instruction sequences (the Replay Expander's
// buffer) through a compiler builtin. This header pushes the same REPLAY instruction (opcode
// 0x04: start << 14 | length << 4 | execute_while_loading << 1 | load) as a store to
// INSTRN_BUF_BASE, which the ISA documentation gives as equivalent to the instruction form
// (tt-isa-documentation, WormholeB0/TensixTile/BabyRISCV/PushTensixInstruction.md).
#pragma once
#include <cstdint>

extern volatile std::uint32_t __instrn_buffer[];

namespace lltt {
enum ExecBool : bool { NoExec, Exec };

[[gnu::always_inline]] constexpr std::uint32_t replay_insn(unsigned start, unsigned length) {
    return (0x04u << 24) | (start << 14) | (length << 4);
}

// The next `length` instructions this thread pushes go into the replay buffer from `start`
// (and are also executed when E is Exec).
template <ExecBool E = NoExec>
[[gnu::always_inline]] inline void record(unsigned start, unsigned length) {
    ::__instrn_buffer[0] = replay_insn(start, length) | (unsigned(bool(E)) << 1) | 1u;
}

// Plays back `length` recorded instructions from `start`.
[[gnu::always_inline]] inline void replay(unsigned start, unsigned length) {
    ::__instrn_buffer[0] = replay_insn(start, length);
}
}  // namespace lltt
