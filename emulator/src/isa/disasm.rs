//! Disassembly of one instruction word, in the style of GNU objdump's `-M no-aliases`
//! output with ABI register names (so a fault message reads like the listing of the ELF).
//! Zba and Zbb instructions get their standard mnemonics whatever the arch (a Wormhole core
//! faults on them as illegal instructions; the listing still says what they are).

use crate::isa::decode::{decode, Op};
use std::fmt::{self, Write};

/// ABI names of the integer registers.
pub const REG_NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

fn reg(r: u8) -> &'static str {
    REG_NAMES[(r & 31) as usize]
}

/// The name of a CSR the emulator knows, or `None`.
pub fn csr_name(csr: u32) -> Option<&'static str> {
    Some(match csr {
        0xC00 => "cycle",
        0xC01 => "time",
        0xC02 => "instret",
        0xC80 => "cycleh",
        0xC81 => "timeh",
        0xC82 => "instreth",
        0xB00 => "mcycle",
        0xB02 => "minstret",
        0xB80 => "mcycleh",
        0xB82 => "minstreth",
        0x300 => "mstatus",
        0x301 => "misa",
        0x304 => "mie",
        0x305 => "mtvec",
        0x340 => "mscratch",
        0x341 => "mepc",
        0x342 => "mcause",
        0x343 => "mtval",
        0x344 => "mip",
        0xF11 => "mvendorid",
        0xF12 => "marchid",
        0xF13 => "mimpid",
        0xF14 => "mhartid",
        _ => return None,
    })
}

/// The mnemonic of an operation.
pub fn mnemonic(op: Op) -> &'static str {
    use Op::*;
    match op {
        Lui => "lui",
        Auipc => "auipc",
        Jal => "jal",
        Jalr => "jalr",
        Beq => "beq",
        Bne => "bne",
        Blt => "blt",
        Bge => "bge",
        Bltu => "bltu",
        Bgeu => "bgeu",
        Lb => "lb",
        Lh => "lh",
        Lw => "lw",
        Lbu => "lbu",
        Lhu => "lhu",
        Sb => "sb",
        Sh => "sh",
        Sw => "sw",
        Addi => "addi",
        Slti => "slti",
        Sltiu => "sltiu",
        Xori => "xori",
        Ori => "ori",
        Andi => "andi",
        Slli => "slli",
        Srli => "srli",
        Srai => "srai",
        Add => "add",
        Sub => "sub",
        Sll => "sll",
        Slt => "slt",
        Sltu => "sltu",
        Xor => "xor",
        Srl => "srl",
        Sra => "sra",
        Or => "or",
        And => "and",
        Mul => "mul",
        Mulh => "mulh",
        Mulhsu => "mulhsu",
        Mulhu => "mulhu",
        Div => "div",
        Divu => "divu",
        Rem => "rem",
        Remu => "remu",
        Fence => "fence",
        FenceI => "fence.i",
        Ecall => "ecall",
        Ebreak => "ebreak",
        Csrrw => "csrrw",
        Csrrs => "csrrs",
        Csrrc => "csrrc",
        Csrrwi => "csrrwi",
        Csrrsi => "csrrsi",
        Csrrci => "csrrci",
        Sh1add => "sh1add",
        Sh2add => "sh2add",
        Sh3add => "sh3add",
        Andn => "andn",
        Orn => "orn",
        Xnor => "xnor",
        Clz => "clz",
        Ctz => "ctz",
        Cpop => "cpop",
        Max => "max",
        Maxu => "maxu",
        Min => "min",
        Minu => "minu",
        SextB => "sext.b",
        SextH => "sext.h",
        ZextH => "zext.h",
        Rol => "rol",
        Ror => "ror",
        Rori => "rori",
        OrcB => "orc.b",
        Rev8 => "rev8",
        TtInsn => ".ttinsn",
        Illegal | NoFetch => "<illegal>",
    }
}

/// Disassembles `word` located at `pc` (branch and jump targets are printed as absolute
/// addresses, like objdump).
pub fn disassemble(word: u32, pc: u32) -> String {
    let i = decode(word);
    let m = mnemonic(i.op);
    let mut s = String::new();
    let target = pc.wrapping_add(i.imm as u32);
    let r = match i.op {
        Op::Lui | Op::Auipc => write!(s, "{m} {}, {:#x}", reg(i.rd), (i.imm as u32) >> 12),
        Op::Jal => write!(s, "{m} {}, {target:#x}", reg(i.rd)),
        Op::Jalr => write!(s, "{m} {}, {}({})", reg(i.rd), i.imm, reg(i.rs1)),
        Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
            write!(s, "{m} {}, {}, {target:#x}", reg(i.rs1), reg(i.rs2))
        }
        Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => {
            write!(s, "{m} {}, {}({})", reg(i.rd), i.imm, reg(i.rs1))
        }
        Op::Sb | Op::Sh | Op::Sw => write!(s, "{m} {}, {}({})", reg(i.rs2), i.imm, reg(i.rs1)),
        Op::Addi
        | Op::Slti
        | Op::Sltiu
        | Op::Xori
        | Op::Ori
        | Op::Andi
        | Op::Slli
        | Op::Srli
        | Op::Srai
        | Op::Rori => {
            write!(s, "{m} {}, {}, {}", reg(i.rd), reg(i.rs1), i.imm)
        }
        Op::Clz | Op::Ctz | Op::Cpop | Op::SextB | Op::SextH | Op::ZextH | Op::OrcB | Op::Rev8 => {
            write!(s, "{m} {}, {}", reg(i.rd), reg(i.rs1))
        }
        Op::Fence | Op::FenceI | Op::Ecall | Op::Ebreak => write!(s, "{m}"),
        Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
            let csr = CsrName(i.imm as u32);
            if matches!(i.op, Op::Csrrwi | Op::Csrrsi | Op::Csrrci) {
                write!(s, "{m} {}, {csr}, {}", reg(i.rd), i.rs1)
            } else {
                write!(s, "{m} {}, {csr}, {}", reg(i.rd), reg(i.rs1))
            }
        }
        Op::TtInsn => write!(s, "{m} {:#010x}", i.imm as u32),
        Op::Illegal | Op::NoFetch => write!(s, "<illegal instruction {word:#010x}>"),
        _ => write!(s, "{m} {}, {}, {}", reg(i.rd), reg(i.rs1), reg(i.rs2)),
    };
    debug_assert!(r.is_ok());
    s
}

struct CsrName(u32);

impl fmt::Display for CsrName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match csr_name(self.0) {
            Some(n) => f.write_str(n),
            None => write!(f, "{:#x}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_objdump() {
        assert_eq!(disassemble(0xFFF00513, 0), "addi a0, zero, -1");
        assert_eq!(disassemble(0xFE512A23, 0), "sw t0, -12(sp)");
        assert_eq!(disassemble(0xFE208CE3, 0x100), "beq ra, sp, 0xf8");
        assert_eq!(disassemble(0x0010006F, 0), "jal zero, 0x800");
        assert_eq!(disassemble(0xC0002573, 0), "csrrs a0, cycle, zero");
        assert_eq!(disassemble(0x3402D073, 0), "csrrwi zero, mscratch, 5");
        assert_eq!(disassemble(0x02B50533, 0), "mul a0, a0, a1");
        assert_eq!(disassemble(0x00000073, 0), "ecall");
        assert_eq!(
            disassemble(0xFFFFFFFF, 0),
            "<illegal instruction 0xffffffff>"
        );
        assert_eq!(disassemble(0xFFB01117, 0x800), "auipc sp, 0xffb01");
        assert_eq!(disassemble(0x0800_0000, 0), ".ttinsn 0x02000000");
        assert_eq!(disassemble(0, 0), ".ttinsn 0x00000000");
    }

    #[test]
    fn zba_and_zbb_by_their_mnemonics() {
        // Words as GNU as assembles them (`-march=rv32i_zba_zbb`).
        for (word, text) in [
            (0x20B52533, "sh1add a0, a0, a1"),
            (0x20B54533, "sh2add a0, a0, a1"),
            (0x20B56533, "sh3add a0, a0, a1"),
            (0x40B57533, "andn a0, a0, a1"),
            (0x40B56533, "orn a0, a0, a1"),
            (0x40B54533, "xnor a0, a0, a1"),
            (0x60051513, "clz a0, a0"),
            (0x60151513, "ctz a0, a0"),
            (0x60251513, "cpop a0, a0"),
            (0x0AB56533, "max a0, a0, a1"),
            (0x0AB57533, "maxu a0, a0, a1"),
            (0x0AB54533, "min a0, a0, a1"),
            (0x0AB55533, "minu a0, a0, a1"),
            (0x60451513, "sext.b a0, a0"),
            (0x60551513, "sext.h a0, a0"),
            (0x08054533, "zext.h a0, a0"),
            (0x60B51533, "rol a0, a0, a1"),
            (0x60B55533, "ror a0, a0, a1"),
            (0x61F55513, "rori a0, a0, 31"),
            (0x28755513, "orc.b a0, a0"),
            (0x69855513, "rev8 a0, a0"),
        ] {
            assert_eq!(disassemble(word, 0), text, "{word:#010x}");
        }
    }
}
