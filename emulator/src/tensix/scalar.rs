//! The Scalar Unit's (ThCon) GPR arithmetic (`ScalarUnit.md`): `SETDMAREG` (immediate
//! mode), `ADDDMAREG`, `SUBDMAREG`, `MULDMAREG`, `BITWOPDMAREG`, `SHIFTDMAREG`,
//! `CMPDMAREG`, `DMANOP`, on `GPRs[CurrentThread][64]`.

use super::isa::{field, op, opcode};

/// Cycles the Scalar Unit is occupied by `word` (the page's table and the per-instruction
/// "Performance" sections): 1 for `SETDMAREG` and `DMANOP`; 3 for the arithmetic with an
/// immediate or two GPRs of one aligned group of four, 4 otherwise.
pub(crate) fn cycles(word: u32) -> u32 {
    match opcode(word) {
        op::SETDMAREG | op::DMANOP => 1,
        _ if field(word, 23, 1) == 1 => 3,
        _ if field(word, 0, 6) / 4 == field(word, 6, 6) / 4 => 3,
        _ => 4,
    }
}

/// Executes `word` on one thread's GPRs (the word passed [`super::isa::unsupported`]).
pub(crate) fn execute(gprs: &mut [u32; 64], word: u32) {
    let o = opcode(word);
    if o == op::DMANOP {
        return;
    }
    if o == op::SETDMAREG {
        let half = field(word, 0, 7) as usize;
        let value = field(word, 8, 16);
        let g = &mut gprs[half / 2];
        let shift = 16 * (half % 2);
        *g = (*g & !(0xFFFF << shift)) | (value << shift);
        return;
    }
    let left = gprs[field(word, 0, 6) as usize];
    let imm = field(word, 23, 1) == 1;
    let right = if imm {
        field(word, 6, if o == op::SHIFTDMAREG { 5 } else { 6 })
    } else {
        gprs[field(word, 6, 6) as usize]
    };
    let mode = field(word, 18, 3);
    let result = match o {
        op::ADDDMAREG => left.wrapping_add(right),
        op::SUBDMAREG => left.wrapping_sub(right),
        op::MULDMAREG => (left & 0xFFFF) * (right & 0xFFFF),
        op::BITWOPDMAREG => match mode {
            0 => left & right,
            1 => left | right,
            _ => left ^ right,
        },
        op::SHIFTDMAREG => {
            let by = right & 0x1F;
            if mode == 0 {
                left << by
            } else {
                left >> by
            }
        }
        _ => {
            (match mode {
                0 => left > right,
                1 => left < right,
                _ => left == right,
            }) as u32
        }
    };
    gprs[field(word, 12, 6) as usize] = result;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alu(o: u8, mode: u32, res: u32, right: u32, left: u32, imm: bool) -> u32 {
        ((o as u32) << 24) | ((imm as u32) << 23) | (mode << 18) | (res << 12) | (right << 6) | left
    }

    #[test]
    fn setdmareg_writes_one_half() {
        let mut g = [0u32; 64];
        g[3] = 0x1111_2222;
        execute(&mut g, (0x45 << 24) | (0xBEEF << 8) | 7); // half 7: high half of GPR 3
        assert_eq!(g[3], 0xBEEF_2222);
        execute(&mut g, (0x45 << 24) | (0xCAFE << 8) | 6);
        assert_eq!(g[3], 0xBEEF_CAFE);
    }

    #[test]
    fn arithmetic_follows_the_functional_models() {
        let mut g = [0u32; 64];
        g[1] = 0xFFFF_FFFE;
        g[2] = 5;
        g[9] = 0x0003_0004;
        execute(&mut g, alu(op::ADDDMAREG, 0, 10, 2, 1, false));
        assert_eq!(g[10], 3, "wraps");
        execute(&mut g, alu(op::SUBDMAREG, 0, 11, 63, 2, true));
        assert_eq!(g[11], 5u32.wrapping_sub(63));
        execute(&mut g, alu(op::MULDMAREG, 0, 12, 9, 1, false));
        assert_eq!(g[12], 0xFFFE * 4, "low 16 bits of each");
        execute(&mut g, alu(op::BITWOPDMAREG, 2, 13, 2, 9, false));
        assert_eq!(g[13], 0x0003_0001);
        execute(&mut g, alu(op::SHIFTDMAREG, 0, 14, 31, 2, true));
        assert_eq!(g[14], 0x8000_0000);
        g[15] = 33;
        execute(&mut g, alu(op::SHIFTDMAREG, 1, 16, 15, 9, false));
        assert_eq!(g[16], 0x0003_0004 >> 1, "shift amount & 0x1f");
        execute(&mut g, alu(op::CMPDMAREG, 1, 17, 1, 2, false));
        assert_eq!(g[17], 1, "5 < 0xFFFFFFFE unsigned");
        execute(&mut g, alu(op::CMPDMAREG, 2, 18, 5, 2, true));
        assert_eq!(g[18], 1);
    }

    #[test]
    fn cycle_counts() {
        assert_eq!(cycles(0x4500_0000), 1);
        assert_eq!(
            cycles(alu(op::ADDDMAREG, 0, 0, 3, 1, false)),
            3,
            "same group"
        );
        assert_eq!(cycles(alu(op::ADDDMAREG, 0, 0, 4, 1, false)), 4);
        assert_eq!(
            cycles(alu(op::ADDDMAREG, 0, 0, 40, 1, true)),
            3,
            "immediate"
        );
    }
}
