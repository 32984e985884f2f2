//! Decoding RV32IM + Zicsr instruction words, and the baby RISC-V cores' `.ttinsn`, into
//! [`Inst`].
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
    /// `.ttinsn`: pushes the Tensix instruction in `imm` (a store to `INSTRN_BUF_BASE`).
    TtInsn,
    /// Not an instruction of the emulated ISA.
    Illegal,
    /// Not an instruction fetch target: a word outside the core's code region that sits
    /// inside its pre-decoded fetch window (only used by the interpreter's cache).
    NoFetch,
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

/// Decodes one 32-bit instruction word.
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
}
