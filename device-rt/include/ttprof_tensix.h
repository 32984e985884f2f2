/*
 * ttprof_tensix.h - Tensix instruction encoders for C and C++ kernels: the same words as the
 * Rust `riscv_linker::tensix` encoders, one macro per instruction the ttprof emulator's
 * coprocessor model executes, with the same arguments in the same order. Each expands to a
 * 32-bit constant expression (a compile-time constant when the arguments are), laid out as
 * Tenstorrent's ISA documentation gives the fields
 * (tt-isa-documentation, WormholeB0/TensixTile/TensixCoprocessor/<MNEMONIC>.md).
 * Arguments are masked to their field widths; booleans are 0 or 1.
 *
 * The names carry a TTPROF_TENSIX_ prefix so this header can sit next to tt-metal's
 * ckernel_ops.h, whose TT_OP_* macros order some arguments differently.
 *
 * ttprof_tensix_push(word) pushes an instruction to the calling TRISC's Tensix thread (a
 * store to INSTRN_BUF_BASE; a push into a full FIFO stalls the core until there is room).
 */
#ifndef TTPROF_TENSIX_H
#define TTPROF_TENSIX_H

#include <stdint.h>

#define TTPROF_TENSIX_F(v, lo, width) ((((uint32_t)(v)) & ((1u << (width)) - 1u)) << (lo))
#define TTPROF_TENSIX_OP(opcode) (((uint32_t)(opcode)) << 24)

#define TTPROF_TENSIX_NOP() TTPROF_TENSIX_OP(0x02)
#define TTPROF_TENSIX_MOP(template_, count1, mask_lo)                                        \
  (TTPROF_TENSIX_OP(0x01) | TTPROF_TENSIX_F(template_, 23, 1) |                            \
   TTPROF_TENSIX_F(count1, 16, 7) | TTPROF_TENSIX_F(mask_lo, 0, 16))
#define TTPROF_TENSIX_MOP_CFG(mask_hi) (TTPROF_TENSIX_OP(0x03) | TTPROF_TENSIX_F(mask_hi, 0, 16))
#define TTPROF_TENSIX_REPLAY(index, count, exec, load)                                       \
  (TTPROF_TENSIX_OP(0x04) | TTPROF_TENSIX_F(index, 14, 5) | TTPROF_TENSIX_F(count, 4, 6) |  \
   TTPROF_TENSIX_F(exec, 1, 1) | TTPROF_TENSIX_F(load, 0, 1))
#define TTPROF_TENSIX_STALLWAIT(block_mask, condition_mask)                                  \
  (TTPROF_TENSIX_OP(0xA2) | TTPROF_TENSIX_F(block_mask, 15, 9) |                           \
   TTPROF_TENSIX_F(condition_mask, 0, 15))
#define TTPROF_TENSIX_SEMWAIT(block_mask, semaphore_mask, condition_mask)                    \
  (TTPROF_TENSIX_OP(0xA6) | TTPROF_TENSIX_F(block_mask, 15, 9) |                           \
   TTPROF_TENSIX_F(semaphore_mask, 2, 8) | TTPROF_TENSIX_F(condition_mask, 0, 2))
#define TTPROF_TENSIX_SEMINIT(new_max, new_value, semaphore_mask)                            \
  (TTPROF_TENSIX_OP(0xA3) | TTPROF_TENSIX_F(new_max, 20, 4) |                              \
   TTPROF_TENSIX_F(new_value, 16, 4) | TTPROF_TENSIX_F(semaphore_mask, 2, 8))
#define TTPROF_TENSIX_SEMPOST(semaphore_mask)                                                \
  (TTPROF_TENSIX_OP(0xA4) | TTPROF_TENSIX_F(semaphore_mask, 2, 8))
/* Pushes SEMPOST of Tensix semaphore n (an integer literal, or a macro for one) through
 * `push` (the kernel's function or macro that writes an instruction word to the Tensix FIFO),
 * recording just before it the signal `tensix-sem-post-<n>` that ends a
 * TTPROF_WAIT(.., TTPROF_TENSIX_SEMAPHORE(n)) on this tile: the profile's critical path then
 * crosses from the waiting TRISC to the one that posted. Needs ttprof.h. */
#define TTPROF_TENSIX_POST(n, push)                                                          \
  do {                                                                                       \
    TTPROF_SIGNAL(TTPROF__STR(tensix-sem-post-n), TTPROF_TENSIX_SEM_POST(n));                \
    push(TTPROF_TENSIX_SEMPOST(1u << (n)));                                                  \
  } while (0)
#define TTPROF_TENSIX_SEMGET(semaphore_mask)                                                 \
  (TTPROF_TENSIX_OP(0xA5) | TTPROF_TENSIX_F(semaphore_mask, 2, 8))
#define TTPROF_TENSIX_ATGETM(index) (TTPROF_TENSIX_OP(0xA0) | TTPROF_TENSIX_F(index, 0, 16))
#define TTPROF_TENSIX_ATRELM(index) (TTPROF_TENSIX_OP(0xA1) | TTPROF_TENSIX_F(index, 0, 16))
#define TTPROF_TENSIX_WRCFG(input_reg, is_128bit, cfg_index)                                 \
  (TTPROF_TENSIX_OP(0xB0) | TTPROF_TENSIX_F(input_reg, 16, 6) |                            \
   TTPROF_TENSIX_F(is_128bit, 15, 1) | TTPROF_TENSIX_F(cfg_index, 0, 11))
#define TTPROF_TENSIX_RDCFG(gpr, cfg_index)                                                  \
  (TTPROF_TENSIX_OP(0xB1) | TTPROF_TENSIX_F(gpr, 16, 8) | TTPROF_TENSIX_F(cfg_index, 0, 16))
#define TTPROF_TENSIX_SETC16(cfg_index, new_value)                                           \
  (TTPROF_TENSIX_OP(0xB2) | TTPROF_TENSIX_F(cfg_index, 16, 8) |                            \
   TTPROF_TENSIX_F(new_value, 0, 16))
#define TTPROF_TENSIX_RMWCIB(byte, mask, new_value, index4)                                  \
  (TTPROF_TENSIX_OP(0xB3 + ((byte) & 3)) | TTPROF_TENSIX_F(mask, 16, 8) |                  \
   TTPROF_TENSIX_F(new_value, 8, 8) | TTPROF_TENSIX_F(index4, 0, 8))
#define TTPROF_TENSIX_SETDMAREG(new_value, result_half_reg)                                  \
  (TTPROF_TENSIX_OP(0x45) | TTPROF_TENSIX_F(new_value, 8, 16) |                            \
   TTPROF_TENSIX_F(result_half_reg, 0, 7))
#define TTPROF_TENSIX_DMANOP() TTPROF_TENSIX_OP(0x60)
#define TTPROF_TENSIX_DMAREG_(opcode, imm, mode, result, right, left)                        \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_F(imm, 23, 1) | TTPROF_TENSIX_F(mode, 18, 3) | \
   TTPROF_TENSIX_F(result, 12, 6) | TTPROF_TENSIX_F(right, 6, 6) |                         \
   TTPROF_TENSIX_F(left, 0, 6))
#define TTPROF_TENSIX_ADDDMAREG(imm, result, right, left)                                    \
  TTPROF_TENSIX_DMAREG_(0x58, imm, 0, result, right, left)
#define TTPROF_TENSIX_SUBDMAREG(imm, result, right, left)                                    \
  TTPROF_TENSIX_DMAREG_(0x59, imm, 0, result, right, left)
#define TTPROF_TENSIX_MULDMAREG(imm, result, right, left)                                    \
  TTPROF_TENSIX_DMAREG_(0x5A, imm, 0, result, right, left)
#define TTPROF_TENSIX_BITWOPDMAREG(imm, mode, result, right, left)                           \
  TTPROF_TENSIX_DMAREG_(0x5B, imm, mode, result, right, left)
#define TTPROF_TENSIX_SHIFTDMAREG(imm, mode, result, right, left)                            \
  TTPROF_TENSIX_DMAREG_(0x5C, imm, mode, result, ((right) & ((imm) ? 0x1F : 0x3F)), left)
#define TTPROF_TENSIX_CMPDMAREG(imm, mode, result, right, left)                              \
  TTPROF_TENSIX_DMAREG_(0x5D, imm, mode, result, right, left)
#define TTPROF_TENSIX_UNITS_(u) TTPROF_TENSIX_F(u, 21, 3)
#define TTPROF_TENSIX_SETADC(unit_mask, channel, xyzw, new_value)                            \
  (TTPROF_TENSIX_OP(0x50) | TTPROF_TENSIX_UNITS_(unit_mask) |                              \
   TTPROF_TENSIX_F(channel, 20, 1) | TTPROF_TENSIX_F(xyzw, 18, 2) |                        \
   TTPROF_TENSIX_F(new_value, 0, 18))
/* v0..v3: X0, Y0, X1, Y1 (or Z0, W0, Z1, W1); flags bit k selects v<k>. */
#define TTPROF_TENSIX_ADC4_(opcode, unit_mask, v0, v1, v2, v3, flags)                        \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_UNITS_(unit_mask) | TTPROF_TENSIX_F(v3, 15, 3) | \
   TTPROF_TENSIX_F(v2, 12, 3) | TTPROF_TENSIX_F(v1, 9, 3) | TTPROF_TENSIX_F(v0, 6, 3) |    \
   TTPROF_TENSIX_F(flags, 0, 4))
#define TTPROF_TENSIX_SETADCXY(u, v0, v1, v2, v3, flags)                                     \
  TTPROF_TENSIX_ADC4_(0x51, u, v0, v1, v2, v3, flags)
#define TTPROF_TENSIX_INCADCXY(u, v0, v1, v2, v3) TTPROF_TENSIX_ADC4_(0x52, u, v0, v1, v2, v3, 0)
#define TTPROF_TENSIX_ADDRCRXY(u, v0, v1, v2, v3, flags)                                     \
  TTPROF_TENSIX_ADC4_(0x53, u, v0, v1, v2, v3, flags)
#define TTPROF_TENSIX_SETADCZW(u, v0, v1, v2, v3, flags)                                     \
  TTPROF_TENSIX_ADC4_(0x54, u, v0, v1, v2, v3, flags)
#define TTPROF_TENSIX_INCADCZW(u, v0, v1, v2, v3) TTPROF_TENSIX_ADC4_(0x55, u, v0, v1, v2, v3, 0)
#define TTPROF_TENSIX_ADDRCRZW(u, v0, v1, v2, v3, flags)                                     \
  TTPROF_TENSIX_ADC4_(0x56, u, v0, v1, v2, v3, flags)
#define TTPROF_TENSIX_SETADCXX(unit_mask, x1, x0)                                            \
  (TTPROF_TENSIX_OP(0x5E) | TTPROF_TENSIX_UNITS_(unit_mask) | TTPROF_TENSIX_F(x1, 10, 10) | \
   TTPROF_TENSIX_F(x0, 0, 10))
#define TTPROF_TENSIX_SETRWC(cr, dst, src_b, src_a, which)                                   \
  (TTPROF_TENSIX_OP(0x37) | TTPROF_TENSIX_F(cr, 18, 4) | TTPROF_TENSIX_F(dst, 14, 4) |     \
   TTPROF_TENSIX_F(src_b, 10, 4) | TTPROF_TENSIX_F(src_a, 6, 4) | TTPROF_TENSIX_F(which, 0, 4))
#define TTPROF_TENSIX_INCRWC(cr, dst, src_b, src_a)                                          \
  (TTPROF_TENSIX_OP(0x38) | TTPROF_TENSIX_F(cr, 18, 3) | TTPROF_TENSIX_F(dst, 14, 4) |     \
   TTPROF_TENSIX_F(src_b, 10, 4) | TTPROF_TENSIX_F(src_a, 6, 4))

/* Vector Unit (SFPU). Argument order follows each page's TT_SFP... syntax. */
#define TTPROF_TENSIX_SFPLOAD(vd, mod0, addr_mod, imm10)                                     \
  (TTPROF_TENSIX_OP(0x70) | TTPROF_TENSIX_F(vd, 20, 4) | TTPROF_TENSIX_F(mod0, 16, 4) |    \
   TTPROF_TENSIX_F(addr_mod, 14, 2) | TTPROF_TENSIX_F(imm10, 0, 10))
#define TTPROF_TENSIX_SFPLOADI(vd, mod0, imm16)                                              \
  (TTPROF_TENSIX_OP(0x71) | TTPROF_TENSIX_F(vd, 20, 4) | TTPROF_TENSIX_F(mod0, 16, 4) |    \
   TTPROF_TENSIX_F(imm16, 0, 16))
#define TTPROF_TENSIX_SFPSTORE(vd, mod0, addr_mod, imm10)                                    \
  (TTPROF_TENSIX_OP(0x72) | TTPROF_TENSIX_F(vd, 20, 4) | TTPROF_TENSIX_F(mod0, 16, 4) |    \
   TTPROF_TENSIX_F(addr_mod, 14, 2) | TTPROF_TENSIX_F(imm10, 0, 10))
#define TTPROF_TENSIX_SFP_ABCD_(opcode, va, vb, vc, vd, mod1)                                \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_F(va, 16, 4) | TTPROF_TENSIX_F(vb, 12, 4) |     \
   TTPROF_TENSIX_F(vc, 8, 4) | TTPROF_TENSIX_F(vd, 4, 4) | TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPMAD(va, vb, vc, vd, mod1) TTPROF_TENSIX_SFP_ABCD_(0x84, va, vb, vc, vd, mod1)
#define TTPROF_TENSIX_SFPADD(va, vb, vc, vd, mod1) TTPROF_TENSIX_SFP_ABCD_(0x85, va, vb, vc, vd, mod1)
#define TTPROF_TENSIX_SFPMUL(va, vb, vc, vd, mod1) TTPROF_TENSIX_SFP_ABCD_(0x86, va, vb, vc, vd, mod1)
#define TTPROF_TENSIX_SFPMOV(vc, vd, mod1) TTPROF_TENSIX_SFP_ABCD_(0x7C, 0, 0, vc, vd, mod1)
#define TTPROF_TENSIX_SFPIADD(imm12, vc, vd, mod1)                                           \
  (TTPROF_TENSIX_OP(0x79) | TTPROF_TENSIX_F(imm12, 12, 12) | TTPROF_TENSIX_F(vc, 8, 4) |   \
   TTPROF_TENSIX_F(vd, 4, 4) | TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPSETCC(imm1, vc, vd, mod1)                                           \
  (TTPROF_TENSIX_OP(0x7B) | TTPROF_TENSIX_F(imm1, 12, 1) | TTPROF_TENSIX_F(vc, 8, 4) |     \
   TTPROF_TENSIX_F(vd, 4, 4) | TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPENCC(imm2, vd, mod1)                                                \
  (TTPROF_TENSIX_OP(0x8A) | TTPROF_TENSIX_F(imm2, 12, 2) | TTPROF_TENSIX_F(vd, 4, 4) |     \
   TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPCOMPC() TTPROF_TENSIX_OP(0x8B)
#define TTPROF_TENSIX_SFPPUSHC() TTPROF_TENSIX_OP(0x87)
#define TTPROF_TENSIX_SFPPOPC(mod1) (TTPROF_TENSIX_OP(0x88) | TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPNOP() TTPROF_TENSIX_OP(0x8F)
#define TTPROF_TENSIX_SFP_CD_(opcode, imm12, vc, vd, mod1)                                   \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_F(imm12, 12, 12) | TTPROF_TENSIX_F(vc, 8, 4) |  \
   TTPROF_TENSIX_F(vd, 4, 4) | TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPMULI(imm16, vd, mod1)                                               \
  (TTPROF_TENSIX_OP(0x74) | TTPROF_TENSIX_F(imm16, 8, 16) | TTPROF_TENSIX_F(vd, 4, 4) |    \
   TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPADDI(imm16, vd, mod1)                                               \
  (TTPROF_TENSIX_OP(0x75) | TTPROF_TENSIX_F(imm16, 8, 16) | TTPROF_TENSIX_F(vd, 4, 4) |    \
   TTPROF_TENSIX_F(mod1, 0, 4))
#define TTPROF_TENSIX_SFPDIVP2(imm8, vc, vd, mod1)                                           \
  TTPROF_TENSIX_SFP_CD_(0x76, (imm8) & 0xFF, vc, vd, mod1)
#define TTPROF_TENSIX_SFPEXEXP(vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x77, 0, vc, vd, mod1)
#define TTPROF_TENSIX_SFPEXMAN(vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x78, 0, vc, vd, mod1)
#define TTPROF_TENSIX_SFPSHFT(imm12, vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x7A, imm12, vc, vd, mod1)
#define TTPROF_TENSIX_SFPABS(vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x7D, 0, vc, vd, mod1)
#define TTPROF_TENSIX_SFPAND(vc, vd) TTPROF_TENSIX_SFP_CD_(0x7E, 0, vc, vd, 0)
#define TTPROF_TENSIX_SFPOR(vc, vd) TTPROF_TENSIX_SFP_CD_(0x7F, 0, vc, vd, 0)
#define TTPROF_TENSIX_SFPNOT(vc, vd) TTPROF_TENSIX_SFP_CD_(0x80, 0, vc, vd, 0)
#define TTPROF_TENSIX_SFPLZ(vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x81, 0, vc, vd, mod1)
#define TTPROF_TENSIX_SFPSETEXP(imm8, vc, vd, mod1)                                          \
  TTPROF_TENSIX_SFP_CD_(0x82, (imm8) & 0xFF, vc, vd, mod1)
#define TTPROF_TENSIX_SFPSETMAN(imm12, vc, vd, mod1)                                         \
  TTPROF_TENSIX_SFP_CD_(0x83, imm12, vc, vd, mod1)
#define TTPROF_TENSIX_SFPSETSGN(imm1, vc, vd, mod1)                                          \
  TTPROF_TENSIX_SFP_CD_(0x89, (imm1) & 1, vc, vd, mod1)
#define TTPROF_TENSIX_SFPXOR(vc, vd) TTPROF_TENSIX_SFP_CD_(0x8D, 0, vc, vd, 0)
#define TTPROF_TENSIX_SFPSWAP(vc, vd, mod1) TTPROF_TENSIX_SFP_CD_(0x92, 0, vc, vd, mod1)
/* ---- Data path: unpackers, Matrix Unit, packers ---- */
/* flips: bit 1 FlipSrcB, bit 0 FlipSrcA; broadcast: bit 1 SrcB row, bit 0 SrcB column 0. */
#define TTPROF_TENSIX_SETRWC_FLIP(flips, cr, dst, src_b, src_a, which)                       \
  (TTPROF_TENSIX_SETRWC(cr, dst, src_b, src_a, which) | TTPROF_TENSIX_F(flips, 22, 2))
/* incs: (Ch1YInc << 6) + (Ch1ZInc << 4) + (Ch0YInc << 2) + Ch0ZInc. As tt-metal's LLK emits
   it: MultiContextMode (bit 7, context 0) and Last (bit 0) set, so the kernel configures
   context 0's registers (Disable_zero_compress_cntx0, Tile_x_dim_cntx0, Dest_cntx0_address,
   Unpack_if_sel_cntx0; see riscv_linker::tensix::unpacr). */
#define TTPROF_TENSIX_UNPACR(which_unpacker, incs, flip_src, all_datums_are_zero)           \
  (TTPROF_TENSIX_OP(0x42) | TTPROF_TENSIX_F(which_unpacker, 23, 1) |                       \
   TTPROF_TENSIX_F(incs, 15, 8) | TTPROF_TENSIX_F(1, 7, 1) | TTPROF_TENSIX_F(flip_src, 6, 1) | \
   TTPROF_TENSIX_F(all_datums_are_zero, 4, 1) | TTPROF_TENSIX_F(1, 0, 1))
#define TTPROF_TENSIX_PACR(addr_mod, zero_write, packer_mask, ovrd_thread_id, concat, flush, \
                           last)                                                             \
  (TTPROF_TENSIX_OP(0x41) | TTPROF_TENSIX_F(addr_mod, 15, 2) |                             \
   TTPROF_TENSIX_F(zero_write, 12, 1) | TTPROF_TENSIX_F(packer_mask, 8, 4) |                \
   TTPROF_TENSIX_F(ovrd_thread_id, 7, 1) | TTPROF_TENSIX_F(concat, 4, 1) |                  \
   TTPROF_TENSIX_F(flush, 1, 1) | TTPROF_TENSIX_F(last, 0, 1))
#define TTPROF_TENSIX_ELW_(opcode, flips, add_dst, broadcast, addr_mod, dst_row)             \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_F(flips, 22, 2) | TTPROF_TENSIX_F(add_dst, 21, 1) | \
   TTPROF_TENSIX_F(broadcast, 19, 2) | TTPROF_TENSIX_F(addr_mod, 15, 2) |                   \
   TTPROF_TENSIX_F(dst_row, 0, 10))
#define TTPROF_TENSIX_ELWADD(flips, add_dst, broadcast, addr_mod, dst_row)                   \
  TTPROF_TENSIX_ELW_(0x28, flips, add_dst, broadcast, addr_mod, dst_row)
#define TTPROF_TENSIX_ELWSUB(flips, add_dst, broadcast, addr_mod, dst_row)                   \
  TTPROF_TENSIX_ELW_(0x30, flips, add_dst, broadcast, addr_mod, dst_row)
#define TTPROF_TENSIX_ELWMUL(flips, broadcast, addr_mod, dst_row)                            \
  TTPROF_TENSIX_ELW_(0x27, flips, 0, broadcast, addr_mod, dst_row)
#define TTPROF_TENSIX_MVMUL(flips, broadcast_srcb_row, addr_mod, dst_row)                    \
  (TTPROF_TENSIX_OP(0x26) | TTPROF_TENSIX_F(flips, 22, 2) |                                \
   TTPROF_TENSIX_F(broadcast_srcb_row, 19, 1) | TTPROF_TENSIX_F(addr_mod, 15, 2) |          \
   TTPROF_TENSIX_F(dst_row, 0, 10))
/* mode: 0 one row, 1 sixteen rows, 2 half of Dst, 3 all of Dst. */
#define TTPROF_TENSIX_ZEROACC(use_dst32b, mode, addr_mod, imm10)                             \
  (TTPROF_TENSIX_OP(0x10) | TTPROF_TENSIX_F(use_dst32b, 21, 1) | TTPROF_TENSIX_F(mode, 19, 2) | \
   TTPROF_TENSIX_F(addr_mod, 15, 2) | TTPROF_TENSIX_F(imm10, 0, 10))
/* clear: bit 1 SrcB, bit 0 SrcA. */
#define TTPROF_TENSIX_ZEROSRC(negative_inf_srca, single_bank_matrix_unit, both_banks, clear)  \
  (TTPROF_TENSIX_OP(0x11) | TTPROF_TENSIX_F(negative_inf_srca, 4, 1) |                     \
   TTPROF_TENSIX_F(single_bank_matrix_unit, 3, 1) | TTPROF_TENSIX_F(both_banks, 2, 1) |     \
   TTPROF_TENSIX_F(clear, 0, 2))
#define TTPROF_TENSIX_MOV_(opcode, use_dst32b_lo, src_row, addr_mod, rows, dst_row)          \
  (TTPROF_TENSIX_OP(opcode) | TTPROF_TENSIX_F(use_dst32b_lo, 23, 1) |                      \
   TTPROF_TENSIX_F(src_row, 17, 6) | TTPROF_TENSIX_F(addr_mod, 15, 2) |                     \
   TTPROF_TENSIX_F(rows, 12, 3) | TTPROF_TENSIX_F(dst_row, 0, 10))
#define TTPROF_TENSIX_MOVA2D(use_dst32b_lo, src_row, addr_mod, move_8_rows, dst_row)         \
  TTPROF_TENSIX_MOV_(0x12, use_dst32b_lo, src_row, addr_mod, ((move_8_rows) ? 2 : 0), dst_row)
/* MOVA2D without its automatic wait for SrcA data valid. */
#define TTPROF_TENSIX_MOVDBGA2D(use_dst32b_lo, src_row, addr_mod, move_8_rows, dst_row)      \
  TTPROF_TENSIX_MOV_(0x09, use_dst32b_lo, src_row, addr_mod, ((move_8_rows) ? 2 : 0), dst_row)
/* rows: bit 2 Move4Rows, bit 1 Broadcast1RowTo8, bit 0 BroadcastCol0. */
#define TTPROF_TENSIX_MOVB2D(use_dst32b_lo, src_row, addr_mod, rows, dst_row)                \
  TTPROF_TENSIX_MOV_(0x13, use_dst32b_lo, src_row, addr_mod, rows, dst_row)
#define TTPROF_TENSIX_MOVD2A(use_dst32b_lo, src_row, addr_mod, move_4_rows, dst_row)         \
  TTPROF_TENSIX_MOV_(0x08, use_dst32b_lo, src_row, addr_mod, ((move_4_rows) ? 2 : 0), dst_row)
#define TTPROF_TENSIX_MOVD2B(use_dst32b_lo, src_row, addr_mod, move_4_rows, dst_row)         \
  TTPROF_TENSIX_MOV_(0x0A, use_dst32b_lo, src_row, addr_mod, ((move_4_rows) ? 2 : 0), dst_row)
#define TTPROF_TENSIX_CLEARDVALID(flips, keep_reading_same_src, reset)                       \
  (TTPROF_TENSIX_OP(0x36) | TTPROF_TENSIX_F(flips, 22, 2) |                                \
   TTPROF_TENSIX_F(keep_reading_same_src, 1, 1) | TTPROF_TENSIX_F(reset, 0, 1))
#define TTPROF_TENSIX_SETDVALID(flips) (TTPROF_TENSIX_OP(0x57) | TTPROF_TENSIX_F(flips, 0, 2))

/* Pushes `word` to the calling TRISC's Tensix thread (RISCV B: to thread T0). */
static inline void ttprof_tensix_push(uint32_t word) {
  *(volatile uint32_t *)0xFFE40000u = word;
}

#endif /* TTPROF_TENSIX_H */
