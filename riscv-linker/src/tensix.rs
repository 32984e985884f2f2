//! Tensix instruction encoders: one `const fn` per instruction the emulator's coprocessor
//! model executes, returning the 32-bit word a kernel pushes (`sw` to `INSTRN_BUF_BASE`,
//! or `.ttinsn`). Fields are laid out as in Tenstorrent's ISA documentation
//! (`WormholeB0/TensixTile/TensixCoprocessor/<MNEMONIC>.md`); arguments are named after
//! the documented fields and masked to their widths. `device-rt/include/ttprof_tensix.h`
//! has the same encoders as C macros.

const fn f(v: u32, lo: u32, width: u32) -> u32 {
    (v & ((1 << width) - 1)) << lo
}

const fn op(opcode: u32) -> u32 {
    opcode << 24
}

/// `NOP`.
pub const fn nop() -> u32 {
    op(0x02)
}

/// `MOP`: `template` 0 (mask-driven, `count1 + 1` iterations) or 1 (loops from the MOP
/// configuration).
pub const fn mop(template: u32, count1: u32, mask_lo: u32) -> u32 {
    op(0x01) | f(template, 23, 1) | f(count1, 16, 7) | f(mask_lo, 0, 16)
}

/// `MOP_CFG`: the high 16 bits of the next template-0 `MOP`'s mask.
pub const fn mop_cfg(mask_hi: u32) -> u32 {
    op(0x03) | f(mask_hi, 0, 16)
}

/// `REPLAY`: record (`load`, also executing if `exec`) or play back `count` instructions
/// (0 means 64) at `index` of the replay buffer.
pub const fn replay(index: u32, count: u32, exec: bool, load: bool) -> u32 {
    op(0x04) | f(index, 14, 5) | f(count, 4, 6) | f(exec as u32, 1, 1) | f(load as u32, 0, 1)
}

/// `STALLWAIT`: hold the instructions `block_mask` selects until every condition of
/// `condition_mask` is met.
pub const fn stallwait(block_mask: u32, condition_mask: u32) -> u32 {
    op(0xA2) | f(block_mask, 15, 9) | f(condition_mask, 0, 15)
}

/// `SEMWAIT`: hold the instructions `block_mask` selects while a selected semaphore is 0
/// (`condition_mask` bit 0) or at its maximum (bit 1).
pub const fn semwait(block_mask: u32, semaphore_mask: u32, condition_mask: u32) -> u32 {
    op(0xA6) | f(block_mask, 15, 9) | f(semaphore_mask, 2, 8) | f(condition_mask, 0, 2)
}

/// `SEMINIT`.
pub const fn seminit(new_max: u32, new_value: u32, semaphore_mask: u32) -> u32 {
    op(0xA3) | f(new_max, 20, 4) | f(new_value, 16, 4) | f(semaphore_mask, 2, 8)
}

/// `SEMPOST`.
pub const fn sempost(semaphore_mask: u32) -> u32 {
    op(0xA4) | f(semaphore_mask, 2, 8)
}

/// `SEMGET`.
pub const fn semget(semaphore_mask: u32) -> u32 {
    op(0xA5) | f(semaphore_mask, 2, 8)
}

/// `ATGETM`: acquire mutex `index` (0 or 2-7).
pub const fn atgetm(index: u32) -> u32 {
    op(0xA0) | f(index, 0, 16)
}

/// `ATRELM`: release mutex `index`.
pub const fn atrelm(index: u32) -> u32 {
    op(0xA1) | f(index, 0, 16)
}

/// `WRCFG`: GPR `input_reg` (four from `input_reg & !3` if `is_128bit`) to `Config`.
pub const fn wrcfg(input_reg: u32, is_128bit: bool, cfg_index: u32) -> u32 {
    op(0xB0) | f(input_reg, 16, 6) | f(is_128bit as u32, 15, 1) | f(cfg_index, 0, 11)
}

/// `RDCFG`: `Config` word `cfg_index` to GPR `gpr`.
pub const fn rdcfg(gpr: u32, cfg_index: u32) -> u32 {
    op(0xB1) | f(gpr, 16, 8) | f(cfg_index, 0, 16)
}

/// `SETC16`: `ThreadConfig[current thread][cfg_index] = new_value`.
pub const fn setc16(cfg_index: u32, new_value: u32) -> u32 {
    op(0xB2) | f(cfg_index, 16, 8) | f(new_value, 0, 16)
}

/// `RMWCIB<byte>`: the `mask` bits of byte `byte` (0-3) of `Config` word `index4`.
pub const fn rmwcib(byte: u32, mask: u32, new_value: u32, index4: u32) -> u32 {
    op(0xB3 + (byte & 3)) | f(mask, 16, 8) | f(new_value, 8, 8) | f(index4, 0, 8)
}

/// `SETDMAREG` (immediate): 16 bits into half-register `result_half_reg` (GPR
/// `result_half_reg / 2`, low half if even).
pub const fn setdmareg(new_value: u32, result_half_reg: u32) -> u32 {
    op(0x45) | f(new_value, 8, 16) | f(result_half_reg, 0, 7)
}

/// `DMANOP`.
pub const fn dmanop() -> u32 {
    op(0x60)
}

const fn dmareg(opcode: u32, imm: bool, mode: u32, result: u32, right: u32, left: u32) -> u32 {
    op(opcode)
        | f(imm as u32, 23, 1)
        | f(mode, 18, 3)
        | f(result, 12, 6)
        | f(right, 6, 6)
        | f(left, 0, 6)
}

/// `ADDDMAREG`: `GPR[result] = GPR[left] + (imm ? right : GPR[right])`.
pub const fn adddmareg(imm: bool, result: u32, right: u32, left: u32) -> u32 {
    dmareg(0x58, imm, 0, result, right, left)
}

/// `SUBDMAREG`.
pub const fn subdmareg(imm: bool, result: u32, right: u32, left: u32) -> u32 {
    dmareg(0x59, imm, 0, result, right, left)
}

/// `MULDMAREG` (16 x 16 -> 32 bits, unsigned).
pub const fn muldmareg(imm: bool, result: u32, right: u32, left: u32) -> u32 {
    dmareg(0x5A, imm, 0, result, right, left)
}

/// `BITWOPDMAREG`: `mode` 0 and, 1 or, 2 xor.
pub const fn bitwopdmareg(imm: bool, mode: u32, result: u32, right: u32, left: u32) -> u32 {
    dmareg(0x5B, imm, mode, result, right, left)
}

/// `SHIFTDMAREG`: `mode` 0 left, 1 right (an immediate is 5 bits).
pub const fn shiftdmareg(imm: bool, mode: u32, result: u32, right: u32, left: u32) -> u32 {
    dmareg(
        0x5C,
        imm,
        mode,
        result,
        right & if imm { 0x1F } else { 0x3F },
        left,
    )
}

/// `CMPDMAREG`: `mode` 0 greater, 1 less, 2 equal (unsigned), result 1 or 0.
pub const fn cmpdmareg(imm: bool, mode: u32, result: u32, right: u32, left: u32) -> u32 {
    dmareg(0x5D, imm, mode, result, right, left)
}

/// The units an ADC instruction applies to: bit 0 unpacker 0, bit 1 unpacker 1, bit 2 the
/// packers.
const fn units(u: u32) -> u32 {
    f(u, 21, 3)
}

/// `SETADC`: one counter (`xyzw` 0-3) of `channel`; bits 16-17 of `new_value` override
/// the thread (0: the current one, else thread `n - 1`).
pub const fn setadc(unit_mask: u32, channel: u32, xyzw: u32, new_value: u32) -> u32 {
    op(0x50) | units(unit_mask) | f(channel, 20, 1) | f(xyzw, 18, 2) | f(new_value, 0, 18)
}

const fn adc4(opcode: u32, unit_mask: u32, vals: [u32; 4], flags: u32) -> u32 {
    op(opcode)
        | units(unit_mask)
        | f(vals[3], 15, 3)
        | f(vals[2], 12, 3)
        | f(vals[1], 9, 3)
        | f(vals[0], 6, 3)
        | f(flags, 0, 4)
}

/// `SETADCXY`: `vals` are X0, Y0, X1, Y1; `flags` bit 0 X0, 1 Y0, 2 X1, 3 Y1 select.
pub const fn setadcxy(unit_mask: u32, vals: [u32; 4], flags: u32) -> u32 {
    adc4(0x51, unit_mask, vals, flags)
}

/// `INCADCXY`: X0, Y0, X1, Y1 increments.
pub const fn incadcxy(unit_mask: u32, incs: [u32; 4]) -> u32 {
    adc4(0x52, unit_mask, incs, 0)
}

/// `ADDRCRXY`: increments of the selected `_Cr` counters, copied to the counters.
pub const fn addrcrxy(unit_mask: u32, incs: [u32; 4], flags: u32) -> u32 {
    adc4(0x53, unit_mask, incs, flags)
}

/// `SETADCZW`: `vals` are Z0, W0, Z1, W1.
pub const fn setadczw(unit_mask: u32, vals: [u32; 4], flags: u32) -> u32 {
    adc4(0x54, unit_mask, vals, flags)
}

/// `INCADCZW`.
pub const fn incadczw(unit_mask: u32, incs: [u32; 4]) -> u32 {
    adc4(0x55, unit_mask, incs, 0)
}

/// `ADDRCRZW`.
pub const fn addrcrzw(unit_mask: u32, incs: [u32; 4], flags: u32) -> u32 {
    adc4(0x56, unit_mask, incs, flags)
}

/// `SETADCXX`: both channels' X.
pub const fn setadcxx(unit_mask: u32, x1: u32, x0: u32) -> u32 {
    op(0x5E) | units(unit_mask) | f(x1, 10, 10) | f(x0, 0, 10)
}

/// `SETRWC` without bank flips: `cr` bit 0 SrcACr, 1 SrcBCr, 2 DstCr, 3 DstCtoCr;
/// `which` bit 0 SrcA, 1 SrcB, 2 Dst, 3 Fidelity.
pub const fn setrwc(cr: u32, dst: u32, src_b: u32, src_a: u32, which: u32) -> u32 {
    op(0x37) | f(cr, 18, 4) | f(dst, 14, 4) | f(src_b, 10, 4) | f(src_a, 6, 4) | f(which, 0, 4)
}

/// `INCRWC`: `cr` bit 0 SrcACr, 1 SrcBCr, 2 DstCr.
pub const fn incrwc(cr: u32, dst: u32, src_b: u32, src_a: u32) -> u32 {
    op(0x38) | f(cr, 18, 3) | f(dst, 14, 4) | f(src_b, 10, 4) | f(src_a, 6, 4)
}

// Vector Unit (SFPU). Argument order follows each page's `TT_SFP...` syntax.

/// `SFPLOAD`: four rows of `Dst` (even or odd columns) into `LReg[vd]`, converting per
/// `mod0` (`MOD0_FMT_*`), then applying address modifier `addr_mod`.
pub const fn sfpload(vd: u32, mod0: u32, addr_mod: u32, imm10: u32) -> u32 {
    op(0x70) | f(vd, 20, 4) | f(mod0, 16, 4) | f(addr_mod, 14, 2) | f(imm10, 0, 10)
}

/// `SFPLOADI`: a 16-bit immediate into every enabled lane of `LReg[vd]` (`mod0`: 0 BF16,
/// 1 FP16, 2 unsigned, 4 signed, 8 upper half, 10 lower half).
pub const fn sfploadi(vd: u32, mod0: u32, imm16: u32) -> u32 {
    op(0x71) | f(vd, 20, 4) | f(mod0, 16, 4) | f(imm16, 0, 16)
}

/// `SFPSTORE`: `LReg[vd]` into four rows of `Dst`, the inverse of [`sfpload`].
pub const fn sfpstore(vd: u32, mod0: u32, addr_mod: u32, imm10: u32) -> u32 {
    op(0x72) | f(vd, 20, 4) | f(mod0, 16, 4) | f(addr_mod, 14, 2) | f(imm10, 0, 10)
}

const fn sfp_abcd(opcode: u32, va: u32, vb: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    op(opcode) | f(va, 16, 4) | f(vb, 12, 4) | f(vc, 8, 4) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPMAD`: `LReg[vd] = LReg[va] * LReg[vb] + LReg[vc]` (`mod1` 4: VA from `LReg[7]`,
/// 8: VD from `LReg[7]`).
pub const fn sfpmad(va: u32, vb: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_abcd(0x84, va, vb, vc, vd, mod1)
}

/// `SFPADD`: [`sfpmad`]'s operation under its own opcode (`va` 10, the constant 1.0).
pub const fn sfpadd(va: u32, vb: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_abcd(0x85, va, vb, vc, vd, mod1)
}

/// `SFPMUL`: [`sfpmad`]'s operation under its own opcode (`vc` 9, the constant 0).
pub const fn sfpmul(va: u32, vb: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_abcd(0x86, va, vb, vc, vd, mod1)
}

/// `SFPMOV`: `LReg[vd] = LReg[vc]` (`mod1` 1: negate, 2: every lane).
pub const fn sfpmov(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_abcd(0x7C, 0, 0, vc, vd, mod1)
}

/// `SFPIADD`: integer `LReg[vd] = LReg[vc] +/- LReg[vd]` or `LReg[vc] + imm12` (signed),
/// setting lane flags per `mod1`.
pub const fn sfpiadd(imm12: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    op(0x79) | f(imm12, 12, 12) | f(vc, 8, 4) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPSETCC`: lane flags from `LReg[vc]` compared with zero, or from `imm1` (per `mod1`).
pub const fn sfpsetcc(imm1: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    op(0x7B) | f(imm1, 12, 1) | f(vc, 8, 4) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPENCC`: turn lane predication on/off (`mod1` 1 toggle, 2 from `imm2` bit 0) and set
/// the lane flags (to `imm2` bit 1 with `mod1` 8, else true).
pub const fn sfpencc(imm2: u32, vd: u32, mod1: u32) -> u32 {
    op(0x8A) | f(imm2, 12, 2) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPCOMPC`: `else` of a predicated `if`.
pub const fn sfpcompc() -> u32 {
    op(0x8B)
}

/// `SFPPUSHC`: push the lane flags onto the flag stack.
pub const fn sfppushc() -> u32 {
    op(0x87)
}

/// `SFPPOPC`: pop (`mod1` 0) or peek and combine (`mod1` 1-15) the flag stack.
pub const fn sfppopc(mod1: u32) -> u32 {
    op(0x88) | f(mod1, 0, 4)
}

/// `SFPNOP`: occupies the Vector Unit for a cycle.
pub const fn sfpnop() -> u32 {
    op(0x8F)
}

/// The common layout `Imm12 | VC | VD | Mod1` (bits 12-23, 8-11, 4-7, 0-3) of the lanewise
/// Vector Unit instructions below.
const fn sfp_cd(opcode: u32, imm12: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    op(opcode) | f(imm12, 12, 12) | f(vc, 8, 4) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPMULI`: `LReg[vd] *= BF16(imm16)` (MAD sub-unit; `mod1` 8: VD from `LReg[7]`).
pub const fn sfpmuli(imm16: u32, vd: u32, mod1: u32) -> u32 {
    op(0x74) | f(imm16, 8, 16) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPADDI`: `LReg[vd] += BF16(imm16)` (MAD sub-unit).
pub const fn sfpaddi(imm16: u32, vd: u32, mod1: u32) -> u32 {
    op(0x75) | f(imm16, 8, 16) | f(vd, 4, 4) | f(mod1, 0, 4)
}

/// `SFPDIVP2`: set (`mod1` 0) or add to (`mod1` 1) the FP32 exponent of `LReg[vc]`.
pub const fn sfpdivp2(imm8: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x76, imm8 & 0xFF, vc, vd, mod1)
}

/// `SFPEXEXP`: the FP32 exponent of `LReg[vc]` as an integer (debiased unless `mod1` 1).
pub const fn sfpexexp(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x77, 0, vc, vd, mod1)
}

/// `SFPEXMAN`: the FP32 mantissa of `LReg[vc]` (with the hidden bit unless `mod1` 1).
pub const fn sfpexman(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x78, 0, vc, vd, mod1)
}

/// `SFPSHFT`: shift `LReg[vd]` left (or right, negative) by `LReg[vc]` or `imm12`.
pub const fn sfpshft(imm12: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x7A, imm12, vc, vd, mod1)
}

/// `SFPABS`: integer (`mod1` 0) or FP32 (`mod1` 1) absolute value of `LReg[vc]`.
pub const fn sfpabs(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x7D, 0, vc, vd, mod1)
}

/// `SFPAND`: `LReg[vd] &= LReg[vc]`.
pub const fn sfpand(vc: u32, vd: u32) -> u32 {
    sfp_cd(0x7E, 0, vc, vd, 0)
}

/// `SFPOR`: `LReg[vd] |= LReg[vc]`.
pub const fn sfpor(vc: u32, vd: u32) -> u32 {
    sfp_cd(0x7F, 0, vc, vd, 0)
}

/// `SFPNOT`: `LReg[vd] = !LReg[vc]`.
pub const fn sfpnot(vc: u32, vd: u32) -> u32 {
    sfp_cd(0x80, 0, vc, vd, 0)
}

/// `SFPLZ`: count leading zeros of `LReg[vc]`, optionally setting lane flags.
pub const fn sfplz(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x81, 0, vc, vd, mod1)
}

/// `SFPSETEXP`: `LReg[vc]` with its FP32 exponent from `imm8` or `LReg[vd]`.
pub const fn sfpsetexp(imm8: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x82, imm8 & 0xFF, vc, vd, mod1)
}

/// `SFPSETMAN`: `LReg[vc]` with its FP32 mantissa from `imm12 << 11` or `LReg[vd]`.
pub const fn sfpsetman(imm12: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x83, imm12, vc, vd, mod1)
}

/// `SFPSETSGN`: `LReg[vc]` with its sign from `imm1` or `LReg[vd]`.
pub const fn sfpsetsgn(imm1: u32, vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x89, imm1 & 1, vc, vd, mod1)
}

/// `SFPXOR`: `LReg[vd] ^= LReg[vc]`.
pub const fn sfpxor(vc: u32, vd: u32) -> u32 {
    sfp_cd(0x8D, 0, vc, vd, 0)
}

/// `SFPSWAP`: swap `LReg[vc]` and `LReg[vd]` (`mod1` 0) or order them per lane (1-8).
pub const fn sfpswap(vc: u32, vd: u32, mod1: u32) -> u32 {
    sfp_cd(0x92, 0, vc, vd, mod1)
}

// ---- Data path: unpackers, Matrix Unit, packers ----

/// `SETRWC` with bank flips: `flips` bit 1 `FlipSrcB`, bit 0 `FlipSrcA`; the other
/// arguments as [`setrwc`].
pub const fn setrwc_flip(flips: u32, cr: u32, dst: u32, src_b: u32, src_a: u32, which: u32) -> u32 {
    setrwc(cr, dst, src_b, src_a, which) | f(flips, 22, 2)
}

/// `UNPACR` (regular mode) as tt-metal's LLK emits it: unpacker `which_unpacker` (0:
/// `SrcA` or `Dst`, 1: `SrcB`);
/// `incs` is `(Ch1YInc << 6) + (Ch1ZInc << 4) + (Ch0YInc << 2) + Ch0ZInc`;
/// `flip_src` hands the bank to the Matrix Unit when done. It sets
/// `MultiContextMode` (bit 7, LLK's OvrdThreadId: context 0 plus the thread's
/// `CfgContextOffset`, ADC 0) and `Last` (bit 0), so the kernel configures context 0:
/// `THCON_SEC<u>_REG2_Disable_zero_compress_cntx0`, `Unpack_if_sel_cntx0`, and for unpacker
/// 0 `THCON_SEC0_REG5_Tile_x_dim_cntx0` and `Dest_cntx0_address` (the `SrcA` or `Dst`
/// output address, where the non-context mode reads `UNP0_ADDR_BASE_REG_1`).
pub const fn unpacr(
    which_unpacker: u32,
    incs: u32,
    flip_src: bool,
    all_datums_are_zero: bool,
) -> u32 {
    op(0x42)
        | f(which_unpacker, 23, 1)
        | f(incs, 15, 8)
        | f(1, 7, 1)
        | f(flip_src as u32, 6, 1)
        | f(all_datums_are_zero as u32, 4, 1)
        | f(1, 0, 1)
}

/// `PACR`: `packer_mask` 0 or 1 is packer 0; `last`/`flush` end the output stream.
pub const fn pacr(
    addr_mod: u32,
    zero_write: bool,
    packer_mask: u32,
    ovrd_thread_id: bool,
    concat: bool,
    flush: bool,
    last: bool,
) -> u32 {
    op(0x41)
        | f(addr_mod, 15, 2)
        | f(zero_write as u32, 12, 1)
        | f(packer_mask, 8, 4)
        | f(ovrd_thread_id as u32, 7, 1)
        | f(concat as u32, 4, 1)
        | f(flush as u32, 1, 1)
        | f(last as u32, 0, 1)
}

const fn elw(
    opcode: u32,
    flips: u32,
    add_dst: bool,
    broadcast: u32,
    addr_mod: u32,
    dst_row: u32,
) -> u32 {
    op(opcode)
        | f(flips, 22, 2)
        | f(add_dst as u32, 21, 1)
        | f(broadcast, 19, 2)
        | f(addr_mod, 15, 2)
        | f(dst_row, 0, 10)
}

/// `ELWADD`: `flips` bit 1 `FlipSrcB`, bit 0 `FlipSrcA`; `broadcast` bit 1
/// `BroadcastSrcBRow`, bit 0 `BroadcastSrcBCol0`; `add_dst` accumulates onto `Dst`.
pub const fn elwadd(flips: u32, add_dst: bool, broadcast: u32, addr_mod: u32, dst_row: u32) -> u32 {
    elw(0x28, flips, add_dst, broadcast, addr_mod, dst_row)
}

/// `ELWSUB` (`SrcA - SrcB`), arguments as [`elwadd`].
pub const fn elwsub(flips: u32, add_dst: bool, broadcast: u32, addr_mod: u32, dst_row: u32) -> u32 {
    elw(0x30, flips, add_dst, broadcast, addr_mod, dst_row)
}

/// `ELWMUL` (`Dst += SrcA * SrcB`), arguments as [`elwadd`].
pub const fn elwmul(flips: u32, broadcast: u32, addr_mod: u32, dst_row: u32) -> u32 {
    elw(0x27, flips, false, broadcast, addr_mod, dst_row)
}

/// `MVMUL` (`Dst += SrcB @ SrcA`): `flips` as [`elwadd`].
pub const fn mvmul(flips: u32, broadcast_srcb_row: bool, addr_mod: u32, dst_row: u32) -> u32 {
    op(0x26)
        | f(flips, 22, 2)
        | f(broadcast_srcb_row as u32, 19, 1)
        | f(addr_mod, 15, 2)
        | f(dst_row, 0, 10)
}

/// `ZEROACC`: `mode` 0 one row, 1 sixteen rows, 2 half of `Dst`, 3 all of it.
pub const fn zeroacc(use_dst32b: bool, mode: u32, addr_mod: u32, imm10: u32) -> u32 {
    op(0x10) | f(use_dst32b as u32, 21, 1) | f(mode, 19, 2) | f(addr_mod, 15, 2) | f(imm10, 0, 10)
}

/// `ZEROSRC`: `clear` bit 1 `SrcB`, bit 0 `SrcA`.
pub const fn zerosrc(
    negative_inf_srca: bool,
    single_bank_matrix_unit: bool,
    both_banks: bool,
    clear: u32,
) -> u32 {
    op(0x11)
        | f(negative_inf_srca as u32, 4, 1)
        | f(single_bank_matrix_unit as u32, 3, 1)
        | f(both_banks as u32, 2, 1)
        | f(clear, 0, 2)
}

const fn mov(
    opcode: u32,
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    rows: u32,
    dst_row: u32,
) -> u32 {
    op(opcode)
        | f(use_dst32b_lo as u32, 23, 1)
        | f(src_row, 17, 6)
        | f(addr_mod, 15, 2)
        | f(rows, 12, 3)
        | f(dst_row, 0, 10)
}

/// `MOVA2D`: one row of `SrcA` to `Dst`, or eight if `move_8_rows`.
pub const fn mova2d(
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    move_8_rows: bool,
    dst_row: u32,
) -> u32 {
    mov(
        0x12,
        use_dst32b_lo,
        src_row,
        addr_mod,
        (move_8_rows as u32) << 1,
        dst_row,
    )
}

/// `MOVDBGA2D`: [`mova2d`] without its automatic wait for `SrcA` data valid.
pub const fn movdbga2d(
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    move_8_rows: bool,
    dst_row: u32,
) -> u32 {
    mov(
        0x09,
        use_dst32b_lo,
        src_row,
        addr_mod,
        (move_8_rows as u32) << 1,
        dst_row,
    )
}

/// `MOVB2D`: `rows` bit 2 `Move4Rows`, bit 1 `Broadcast1RowTo8`, bit 0 `BroadcastCol0`.
pub const fn movb2d(
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    rows: u32,
    dst_row: u32,
) -> u32 {
    mov(0x13, use_dst32b_lo, src_row, addr_mod, rows, dst_row)
}

/// `MOVD2A`: one row of `Dst` to `SrcA`, or four if `move_4_rows`.
pub const fn movd2a(
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    move_4_rows: bool,
    dst_row: u32,
) -> u32 {
    mov(
        0x08,
        use_dst32b_lo,
        src_row,
        addr_mod,
        (move_4_rows as u32) << 1,
        dst_row,
    )
}

/// `MOVD2B`, arguments as [`movd2a`].
pub const fn movd2b(
    use_dst32b_lo: bool,
    src_row: u32,
    addr_mod: u32,
    move_4_rows: bool,
    dst_row: u32,
) -> u32 {
    mov(
        0x0A,
        use_dst32b_lo,
        src_row,
        addr_mod,
        (move_4_rows as u32) << 1,
        dst_row,
    )
}

/// `CLEARDVALID`: `flips` as [`elwadd`]; `reset` gives every bank to the unpackers.
pub const fn cleardvalid(flips: u32, keep_reading_same_src: bool, reset: bool) -> u32 {
    op(0x36) | f(flips, 22, 2) | f(keep_reading_same_src as u32, 1, 1) | f(reset as u32, 0, 1)
}

/// `SETDVALID`: `flips` bit 1 `SrcB`, bit 0 `SrcA` go to the Matrix Unit.
pub const fn setdvalid(flips: u32) -> u32 {
    op(0x57) | f(flips, 0, 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_the_documented_layouts() {
        assert_eq!(nop(), 0x0200_0000);
        assert_eq!(mop(1, 0x7F, 0xFFFF), 0x01FF_FFFF);
        assert_eq!(replay(31, 0, true, true), 0x0407_C003);
        assert_eq!(stallwait(0x1FF, 0x7FFF), 0xA2FF_FFFF);
        assert_eq!(semwait(1 << 1, 1 << 3, 1), 0xA601_0021);
        assert_eq!(seminit(2, 1, 1), 0xA321_0004);
        assert_eq!(rmwcib(3, 0xF0, 0xAB, 7), 0xB6F0_AB07);
        assert_eq!(setdmareg(0xBEEF, 5), 0x45BE_EF05);
        assert_eq!(adddmareg(true, 3, 63, 1), 0x5880_3FC1);
        assert_eq!(setc16(1, 0xFFFF), 0xB201_FFFF);
        assert_eq!(setadcxx(0b100, 1, 2), 0x5E80_0402);
        assert_eq!(sfpload(3, 3, 2, 0x3FF), 0x7033_83FF);
        assert_eq!(sfpmad(1, 2, 3, 4, 8), 0x8401_2348);
        assert_eq!(sfpiadd(0xFFF, 2, 3, 1), 0x79FF_F231);
        assert_eq!(sfpencc(3, 0, 10), 0x8A00_300A);
        assert_eq!(sfpmuli(0x3FC0, 2, 8), 0x743F_C028);
        assert_eq!(sfpsetman(0xABC, 1, 2, 1), 0x83AB_C121);
        assert_eq!(sfpswap(3, 4, 1), 0x9200_0341);
    }

    #[test]
    fn data_path_words_match_the_documented_layouts() {
        assert_eq!(elwadd(0b11, true, 0b10, 2, 0x3f8), 0x28F1_03F8);
        assert_eq!(elwsub(0, false, 0, 0, 8), 0x3000_0008);
        assert_eq!(elwmul(0b01, 0b01, 1, 0), 0x2748_8000);
        assert_eq!(mvmul(0b10, true, 3, 16), 0x2689_8010);
        assert_eq!(zeroacc(true, 3, 0, 0), 0x1038_0000);
        assert_eq!(zerosrc(true, false, true, 0b11), 0x1100_0017);
        assert_eq!(mova2d(true, 63, 1, true, 5), 0x12FE_A005);
        assert_eq!(movb2d(false, 1, 0, 0b101, 0), 0x1302_5000);
        assert_eq!(movd2a(false, 0, 0, true, 4), 0x0800_2004);
        assert_eq!(movd2b(false, 0, 0, false, 4), 0x0A00_0004);
        assert_eq!(cleardvalid(0b11, true, false), 0x36C0_0002);
        assert_eq!(setdvalid(0b10), 0x5700_0002);
        // MultiContextMode (bit 7) and Last (bit 0) always set, as tt-metal emits UNPACR.
        assert_eq!(unpacr(1, 0b01_00_01_00, true, false), 0x42A2_00C1);
        assert_eq!(pacr(1, false, 1, true, false, false, true), 0x4100_8181);
        assert_eq!(setrwc_flip(0b11, 0, 0, 0, 0, 0b1111), 0x37C0_000F);
    }
}
