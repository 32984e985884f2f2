//! Decoding RV32IM + Zicsr + Zba + Zbb instruction words, and the baby RISC-V cores'
//! `.ttinsn`, into [`Inst`].
//!
//! [`decode`] knows every instruction of every emulated arch; whether an arch has one is
//! [`decode_for`]'s question. Zba and Zbb are Blackhole's only ([`has_zba_zbb`]): the
//! interpreter faults on them on Wormhole B0 exactly as on any illegal word, and the
//! disassembler names them whatever the arch.
//!
//! The cores have no C extension: a word whose low two bits are not `0b11` is `.ttinsn`
//! ([Push Tensix instruction]), a store of the word rotated right by two bits (the Tensix
//! instruction) to `INSTRN_BUF_BASE`. So the all-zero word is `.ttinsn 0x00000000`.
//!
//! [Push Tensix instruction]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/PushTensixInstruction.md#ttinsn-instruction-set-extension
//!
//! Decoding never fails: a word that is not a valid instruction of the emulated ISA becomes
//! [`Op::Illegal`], which faults only when executed (hardware would run off into the weeds;
//! the emulator stops and explains). The same decoder feeds the interpreter's pre-decoded
//! cache (`hart`) and the disassembler ([`crate::isa::disasm`]).

use riscv_linker::Arch;

/// An operation. Names follow the RISC-V unprivileged spec mnemonics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Op {
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Lbu,
    Lhu,
    Sb,
    Sh,
    Sw,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    Csrrw,
    Csrrs,
    Csrrc,
    Csrrwi,
    Csrrsi,
    Csrrci,
    // Zba (Blackhole only, see `has_zba_zbb`).
    Sh1add,
    Sh2add,
    Sh3add,
    // Zbb (Blackhole only). The unary ones (`clz` .. `zext.h`, `orc.b`, `rev8`) have
    // `rs2` = 0; `rori`'s shift amount is `imm`.
    Andn,
    Orn,
    Xnor,
    Clz,
    Ctz,
    Cpop,
    Max,
    Maxu,
    Min,
    Minu,
    SextB,
    SextH,
    ZextH,
    Rol,
    Ror,
    Rori,
    OrcB,
    Rev8,
    /// `.ttinsn`: pushes the Tensix instruction in `imm` (a store to `INSTRN_BUF_BASE`).
    TtInsn,
    /// Not an instruction of the emulated ISA.
    Illegal,
    /// Not an instruction fetch target: a word outside the core's code region that sits
    /// inside its pre-decoded fetch window (only used by the interpreter's cache).
    NoFetch,
}

impl Op {
    /// Whether the operation belongs to Zba or Zbb (which only Blackhole's cores have).
    pub const fn is_zba_zbb(self) -> bool {
        matches!(
            self,
            Op::Sh1add
                | Op::Sh2add
                | Op::Sh3add
                | Op::Andn
                | Op::Orn
                | Op::Xnor
                | Op::Clz
                | Op::Ctz
                | Op::Cpop
                | Op::Max
                | Op::Maxu
                | Op::Min
                | Op::Minu
                | Op::SextB
                | Op::SextH
                | Op::ZextH
                | Op::Rol
                | Op::Ror
                | Op::Rori
                | Op::OrcB
                | Op::Rev8
        )
    }
}

/// Whether `arch`'s cores have Zba and Zbb: Blackhole's (`-mcpu=tt-bh`,
/// `rv32im_zaamo_zba_zbb`) do, Wormhole B0's (RV32IM) do not.
pub const fn has_zba_zbb(arch: Arch) -> bool {
    matches!(arch, Arch::Blackhole)
}

/// A decoded instruction. Register fields are architectural numbers (0..=31); fields an
/// operation does not use are 0. `imm` is the sign-extended immediate, the shift amount,
/// or for CSR operations the CSR number (with the 5-bit `uimm` of `csrr*i` in `rs1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Destination register.
    pub rd: u8,
    /// First source register (or a CSR instruction's `uimm`).
    pub rs1: u8,
    /// Second source register.
    pub rs2: u8,
    /// Immediate, shift amount or CSR number.
    pub imm: i32,
}

impl Inst {
    /// An illegal instruction.
    pub const ILLEGAL: Inst = Inst {
        op: Op::Illegal,
        rd: 0,
        rs1: 0,
        rs2: 0,
        imm: 0,
    };

    const fn new(op: Op, rd: u32, rs1: u32, rs2: u32, imm: i32) -> Inst {
        Inst {
            op,
            rd: rd as u8,
            rs1: rs1 as u8,
            rs2: rs2 as u8,
            imm,
        }
    }

    /// Whether the operation writes `rd`.
    pub const fn writes_rd(&self) -> bool {
        !matches!(
            self.op,
            Op::Beq
                | Op::Bne
                | Op::Blt
                | Op::Bge
                | Op::Bltu
                | Op::Bgeu
                | Op::Sb
                | Op::Sh
                | Op::Sw
                | Op::Fence
                | Op::FenceI
                | Op::Ecall
                | Op::Ebreak
                | Op::TtInsn
                | Op::Illegal
                | Op::NoFetch
        )
    }
}

const fn bits(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1 << (hi - lo + 1)) - 1)
}

const fn imm_i(w: u32) -> i32 {
    (w as i32) >> 20
}

const fn imm_s(w: u32) -> i32 {
    (((w & 0xFE00_0000) as i32) >> 20) | bits(w, 11, 7) as i32
}

const fn imm_b(w: u32) -> i32 {
    (((w & 0x8000_0000) as i32) >> 19)
        | ((bits(w, 7, 7) << 11) | (bits(w, 30, 25) << 5) | (bits(w, 11, 8) << 1)) as i32
}

const fn imm_u(w: u32) -> i32 {
    (w & 0xFFFF_F000) as i32
}

const fn imm_j(w: u32) -> i32 {
    (((w & 0x8000_0000) as i32) >> 11)
        | ((bits(w, 19, 12) << 12) | (bits(w, 20, 20) << 11) | (bits(w, 30, 21) << 1)) as i32
}

/// Decodes one 32-bit instruction word for a core of `arch`: as [`decode`], but an
/// instruction of an extension the arch lacks is [`Op::Illegal`].
pub fn decode_for(w: u32, arch: Arch) -> Inst {
    let i = decode(w);
    if i.op.is_zba_zbb() && !has_zba_zbb(arch) {
        Inst::ILLEGAL
    } else {
        i
    }
}

/// Decodes one 32-bit instruction word, knowing every extension of every emulated arch
/// (see [`decode_for`]).
pub fn decode(w: u32) -> Inst {
    let rd = bits(w, 11, 7);
    let rs1 = bits(w, 19, 15);
    let rs2 = bits(w, 24, 20);
    let f3 = bits(w, 14, 12);
    let f7 = bits(w, 31, 25);
    if w & 3 != 3 {
        // No C extension: this space is `.ttinsn`, the Tensix instruction rotated left by 2.
        return Inst::new(Op::TtInsn, 0, 0, 0, w.rotate_right(2) as i32);
    }
    match bits(w, 6, 0) {
        0b0110111 => Inst::new(Op::Lui, rd, 0, 0, imm_u(w)),
        0b0010111 => Inst::new(Op::Auipc, rd, 0, 0, imm_u(w)),
        0b1101111 => Inst::new(Op::Jal, rd, 0, 0, imm_j(w)),
        0b1100111 if f3 == 0 => Inst::new(Op::Jalr, rd, rs1, 0, imm_i(w)),
        0b1100011 => {
            let op = match f3 {
                0 => Op::Beq,
                1 => Op::Bne,
                4 => Op::Blt,
                5 => Op::Bge,
                6 => Op::Bltu,
                7 => Op::Bgeu,
                _ => return Inst::ILLEGAL,
            };
            Inst::new(op, 0, rs1, rs2, imm_b(w))
        }
        0b0000011 => {
            let op = match f3 {
                0 => Op::Lb,
                1 => Op::Lh,
                2 => Op::Lw,
                4 => Op::Lbu,
                5 => Op::Lhu,
                _ => return Inst::ILLEGAL,
            };
            Inst::new(op, rd, rs1, 0, imm_i(w))
        }
        0b0100011 => {
            let op = match f3 {
                0 => Op::Sb,
                1 => Op::Sh,
                2 => Op::Sw,
                _ => return Inst::ILLEGAL,
            };
            Inst::new(op, 0, rs1, rs2, imm_s(w))
        }
        0b0010011 => {
            let shamt = rs2 as i32;
            let (op, imm) = match (f3, f7) {
                (0, _) => (Op::Addi, imm_i(w)),
                (2, _) => (Op::Slti, imm_i(w)),
                (3, _) => (Op::Sltiu, imm_i(w)),
                (4, _) => (Op::Xori, imm_i(w)),
                (6, _) => (Op::Ori, imm_i(w)),
                (7, _) => (Op::Andi, imm_i(w)),
                (1, 0) => (Op::Slli, shamt),
                (5, 0) => (Op::Srli, shamt),
                (5, 0b0100000) => (Op::Srai, shamt),
                // Zbb's unary operations: imm[11:5] = 0110000, the operation in imm[4:0].
                (1, 0b0110000) => match rs2 {
                    0b00000 => (Op::Clz, 0),
                    0b00001 => (Op::Ctz, 0),
                    0b00010 => (Op::Cpop, 0),
                    0b00100 => (Op::SextB, 0),
                    0b00101 => (Op::SextH, 0),
                    _ => return Inst::ILLEGAL,
                },
                (5, 0b0110000) => (Op::Rori, shamt),
                // orc.b (imm 0x287) and RV32's rev8 (imm 0x698).
                (5, 0b0010100) if rs2 == 0b00111 => (Op::OrcB, 0),
                (5, 0b0110100) if rs2 == 0b11000 => (Op::Rev8, 0),
                _ => return Inst::ILLEGAL,
            };
            Inst::new(op, rd, rs1, 0, imm)
        }
        0b0110011 => {
            let op = match (f7, f3) {
                (0, 0) => Op::Add,
                (0b0100000, 0) => Op::Sub,
                (0, 1) => Op::Sll,
                (0, 2) => Op::Slt,
                (0, 3) => Op::Sltu,
                (0, 4) => Op::Xor,
                (0, 5) => Op::Srl,
                (0b0100000, 5) => Op::Sra,
                (0, 6) => Op::Or,
                (0, 7) => Op::And,
                (1, 0) => Op::Mul,
                (1, 1) => Op::Mulh,
                (1, 2) => Op::Mulhsu,
                (1, 3) => Op::Mulhu,
                (1, 4) => Op::Div,
                (1, 5) => Op::Divu,
                (1, 6) => Op::Rem,
                (1, 7) => Op::Remu,
                (0b0010000, 2) => Op::Sh1add,
                (0b0010000, 4) => Op::Sh2add,
                (0b0010000, 6) => Op::Sh3add,
                (0b0100000, 4) => Op::Xnor,
                (0b0100000, 6) => Op::Orn,
                (0b0100000, 7) => Op::Andn,
                (0b0000101, 4) => Op::Min,
                (0b0000101, 5) => Op::Minu,
                (0b0000101, 6) => Op::Max,
                (0b0000101, 7) => Op::Maxu,
                (0b0110000, 1) => Op::Rol,
                (0b0110000, 5) => Op::Ror,
                // RV32's zext.h is `pack rd, rs1, x0` (pack with rs2 != 0 is Zbkb's).
                (0b0000100, 4) if rs2 == 0 => Op::ZextH,
                _ => return Inst::ILLEGAL,
            };
            Inst::new(op, rd, rs1, rs2, 0)
        }
        0b0001111 => match f3 {
            // fence: fm/pred/succ and the unused register fields are ignored, as the spec
            // asks of implementations that treat all fences alike.
            0 => Inst::new(Op::Fence, 0, 0, 0, 0),
            1 => Inst::new(Op::FenceI, 0, 0, 0, 0),
            _ => Inst::ILLEGAL,
        },
        0b1110011 => {
            let csr = bits(w, 31, 20) as i32;
            match f3 {
                0 if rd == 0 && rs1 == 0 && w >> 20 == 0 => Inst::new(Op::Ecall, 0, 0, 0, 0),
                0 if rd == 0 && rs1 == 0 && w >> 20 == 1 => Inst::new(Op::Ebreak, 0, 0, 0, 0),
                1 => Inst::new(Op::Csrrw, rd, rs1, 0, csr),
                2 => Inst::new(Op::Csrrs, rd, rs1, 0, csr),
                3 => Inst::new(Op::Csrrc, rd, rs1, 0, csr),
                5 => Inst::new(Op::Csrrwi, rd, rs1, 0, csr),
                6 => Inst::new(Op::Csrrsi, rd, rs1, 0, csr),
                7 => Inst::new(Op::Csrrci, rd, rs1, 0, csr),
                _ => Inst::ILLEGAL,
            }
        }
        _ => Inst::ILLEGAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates_are_sign_extended_and_scrambled_correctly() {
        // jal x1, -4 : imm[20|10:1|11|19:12] = 1 1111111110 1 11111111
        assert_eq!(decode(0xFFDFF0EF), Inst::new(Op::Jal, 1, 0, 0, -4));
        // beq x1, x2, -8
        assert_eq!(decode(0xFE208CE3), Inst::new(Op::Beq, 0, 1, 2, -8));
        // sw x5, -12(x2)
        assert_eq!(decode(0xFE512A23), Inst::new(Op::Sw, 0, 2, 5, -12));
        // addi x10, x0, -1
        assert_eq!(decode(0xFFF00513), Inst::new(Op::Addi, 10, 0, 0, -1));
        // lui x5, 0xfffff
        assert_eq!(
            decode(0xFFFFF2B7),
            Inst::new(Op::Lui, 5, 0, 0, 0xFFFF_F000u32 as i32)
        );
        // bne x0, x0, +4094 (max positive branch offset)
        assert_eq!(decode(0x7E001FE3), Inst::new(Op::Bne, 0, 0, 0, 4094));
    }

    #[test]
    fn reserved_encodings_are_illegal() {
        assert_eq!(decode(0xFFFF_FFFF).op, Op::Illegal);
        assert_eq!(decode(0x4000_1013).op, Op::Illegal, "slli with funct7 != 0");
        assert_eq!(
            decode(0x4000_0033 | (1 << 12)).op,
            Op::Illegal,
            "sub-style sll"
        );
        assert_eq!(decode(0x0000_2067).op, Op::Illegal, "jalr with funct3 != 0");
        assert_eq!(decode(0x0000_3003).op, Op::Illegal, "ld is RV64");
        assert_eq!(
            decode(0x0020_0073).op,
            Op::Illegal,
            "uret is not implemented"
        );
    }

    #[test]
    fn words_with_low_bits_other_than_0b11_are_ttinsn() {
        // .ttinsn 0x02000000 (a Tensix NOP) is encoded as the word rotated left by two.
        assert_eq!(
            decode(0x0800_0000),
            Inst::new(Op::TtInsn, 0, 0, 0, 0x0200_0000)
        );
        assert_eq!(decode(0).op, Op::TtInsn);
        assert_eq!(decode(0x0000_0001).imm as u32, 0x4000_0000);
        assert_eq!(
            decode(0xFFFF_FFFE).imm as u32,
            0xBFFF_FFFF,
            "the largest (rotated) immediate"
        );
        assert!(!decode(0x0000_0002).writes_rd());
    }

    #[test]
    fn system_and_csr_forms() {
        assert_eq!(decode(0x0000_0073).op, Op::Ecall);
        assert_eq!(decode(0x0010_0073).op, Op::Ebreak);
        // csrrs a0, cycle, x0
        assert_eq!(decode(0xC000_2573), Inst::new(Op::Csrrs, 10, 0, 0, 0xC00));
        // csrrwi x0, mscratch, 5
        assert_eq!(decode(0x3402_D073), Inst::new(Op::Csrrwi, 0, 5, 0, 0x340));
        assert_eq!(decode(0x0FF0_000F).op, Op::Fence);
        assert_eq!(decode(0x0000_100F).op, Op::FenceI);
    }

    /// Every Zba and Zbb instruction as GNU as assembles it (`-march=rv32i_zba_zbb`), with
    /// rd = a0, rs1 = a0 and, for the binary ones, rs2 = a1.
    const ZB: [(u32, Op); 21] = [
        (0x20B52533, Op::Sh1add),
        (0x20B54533, Op::Sh2add),
        (0x20B56533, Op::Sh3add),
        (0x40B57533, Op::Andn),
        (0x40B56533, Op::Orn),
        (0x40B54533, Op::Xnor),
        (0x60051513, Op::Clz),
        (0x60151513, Op::Ctz),
        (0x60251513, Op::Cpop),
        (0x0AB56533, Op::Max),
        (0x0AB57533, Op::Maxu),
        (0x0AB54533, Op::Min),
        (0x0AB55533, Op::Minu),
        (0x60451513, Op::SextB),
        (0x60551513, Op::SextH),
        (0x08054533, Op::ZextH),
        (0x60B51533, Op::Rol),
        (0x60B55533, Op::Ror),
        (0x61F55513, Op::Rori), // rori a0, a0, 31
        (0x28755513, Op::OrcB),
        (0x69855513, Op::Rev8),
    ];

    #[test]
    fn zba_and_zbb_decode_on_blackhole() {
        for (w, op) in ZB {
            let unary = matches!(w & 0x7F, 0x13) || op == Op::ZextH;
            let want = match op {
                Op::Rori => Inst::new(op, 10, 10, 0, 31),
                _ if unary => Inst::new(op, 10, 10, 0, 0),
                _ => Inst::new(op, 10, 10, 11, 0),
            };
            assert_eq!(decode(w), want, "{w:#010x}");
            assert_eq!(decode_for(w, Arch::Blackhole), want, "{w:#010x}");
            assert!(op.is_zba_zbb() && decode(w).writes_rd());
        }
        assert_eq!(decode(0x6005_5513), Inst::new(Op::Rori, 10, 10, 0, 0));
    }

    #[test]
    fn zba_and_zbb_stay_illegal_on_wormhole() {
        for (w, op) in ZB {
            assert_eq!(
                decode_for(w, Arch::WormholeB0),
                Inst::ILLEGAL,
                "{op:?} {w:#010x}"
            );
        }
        // What Wormhole has is unchanged.
        for w in [0x00B50533, 0x02B50533, 0xFFF00513, 0x01F51513] {
            assert_eq!(decode_for(w, Arch::WormholeB0), decode(w));
            assert!(!decode(w).op.is_zba_zbb());
        }
    }

    #[test]
    fn neighbours_of_zbb_encodings_are_illegal() {
        for (w, what) in [
            (0x6035_1513, "clz group, imm[4:0] = 3"),
            (0x6065_1513, "clz group, imm[4:0] = 6"),
            (0x6085_1513, "clz group, imm[4:0] = 8"),
            (0x08B5_4533, "pack (Zbkb): zext.h with rs2 != 0"),
            (0x2865_5513, "gorci other than orc.b"),
            (0x6B85_5513, "RV64's rev8"),
            (0x6875_5513, "brev8 (Zbkb)"),
            (0x6205_5513, "rori with shamt >= 32 (RV64)"),
            (0x2005_1513, "an unassigned OP-IMM funct7"),
            (0x20B5_0533, "Zba's funct7 with funct3 0"),
            (
                0x08B5_0533,
                "zext.h's funct7 with funct3 0 (add.uw is RV64, in OP-32)",
            ),
            (0x0AB5_0533, "min group, funct3 0"),
            (0x60B5_0533, "rol group, funct3 0"),
        ] {
            assert_eq!(decode(w).op, Op::Illegal, "{what}: {w:#010x}");
        }
    }
}
