//! A minimal x86-64 assembler: just the instruction forms the block compiler emits, with
//! labels and 32-bit relative fixups.

/// General-purpose registers (their hardware numbers).
pub const RAX: u8 = 0;
pub const RCX: u8 = 1;
pub const RDX: u8 = 2;
pub const RBX: u8 = 3;
pub const RSP: u8 = 4;
pub const RBP: u8 = 5;
pub const RSI: u8 = 6;
pub const RDI: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const R10: u8 = 10;
pub const R11: u8 = 11;
pub const R12: u8 = 12;
pub const R13: u8 = 13;
pub const R14: u8 = 14;
pub const R15: u8 = 15;

/// An operand in memory: `[base + index << scale + disp]`.
#[derive(Clone, Copy, Debug)]
pub struct Mem {
    pub base: u8,
    pub index: Option<(u8, u8)>,
    pub disp: i32,
}

/// `[base + disp]`.
pub const fn at(base: u8, disp: i32) -> Mem {
    Mem {
        base,
        index: None,
        disp,
    }
}

/// `[base + index << scale]`.
pub const fn indexed(base: u8, index: u8, scale: u8) -> Mem {
    Mem {
        base,
        index: Some((index, scale)),
        disp: 0,
    }
}

impl Mem {
    /// The same operand with displacement `disp`.
    pub const fn with_disp(self, disp: i32) -> Mem {
        Mem { disp, ..self }
    }
}

/// The r/m operand of an instruction.
#[derive(Clone, Copy, Debug)]
pub enum Rm {
    Reg(u8),
    Mem(Mem),
}

/// A label: a position in the code, bound once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

/// Condition codes for `jcc`/`setcc`.
#[derive(Clone, Copy, Debug)]
pub enum Cond {
    B = 0x2,
    Ae = 0x3,
    E = 0x4,
    Ne = 0x5,
    Be = 0x6,
    A = 0x7,
    L = 0xC,
    Ge = 0xD,
}

#[derive(Default)]
pub struct Asm {
    pub code: Vec<u8>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    pub fn len(&self) -> usize {
        self.code.len()
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.code.len());
    }

    /// Resolves every fixup; `None` if a used label was never bound.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        for &(pos, l) in &self.fixups {
            let target = self.labels[l.0]?;
            let rel = target as i64 - (pos as i64 + 4);
            self.code[pos..pos + 4].copy_from_slice(&(rel as i32).to_le_bytes());
        }
        Some(self.code)
    }

    fn rel32(&mut self, l: Label) {
        self.fixups.push((self.code.len(), l));
        self.code.extend_from_slice(&[0; 4]);
    }

    fn imm32(&mut self, v: i32) {
        self.code.extend_from_slice(&v.to_le_bytes());
    }

    /// Emits `[prefix] [REX] opcode modrm [sib] [disp]` for `reg` and `rm`.
    pub fn op(&mut self, prefix: Option<u8>, w: bool, opcode: &[u8], reg: u8, rm: Rm) {
        if let Some(p) = prefix {
            self.code.push(p);
        }
        let (x, b) = match rm {
            Rm::Reg(r) => (0, r >> 3),
            Rm::Mem(m) => (m.index.map_or(0, |(i, _)| i >> 3), m.base >> 3),
        };
        let rex = 0x40 | (u8::from(w) << 3) | ((reg >> 3) << 2) | (x << 1) | b;
        if rex != 0x40 {
            self.code.push(rex);
        }
        self.code.extend_from_slice(opcode);
        let reg = (reg & 7) << 3;
        match rm {
            Rm::Reg(r) => self.code.push(0xC0 | reg | (r & 7)),
            Rm::Mem(m) => {
                let base = m.base & 7;
                let (mode, disp8) = if m.disp == 0 && base != 5 {
                    (0x00, false)
                } else if (-128..128).contains(&m.disp) {
                    (0x40, true)
                } else {
                    (0x80, false)
                };
                match m.index {
                    Some((i, scale)) => {
                        self.code.push(mode | reg | 4);
                        self.code.push((scale << 6) | ((i & 7) << 3) | base);
                    }
                    None if base == 4 => {
                        self.code.push(mode | reg | 4);
                        self.code.push(0x24);
                    }
                    None => self.code.push(mode | reg | base),
                }
                if mode == 0x40 && disp8 {
                    self.code.push(m.disp as i8 as u8);
                } else if mode == 0x80 {
                    self.imm32(m.disp);
                }
            }
        }
    }

    /// `mov r32, [m]`
    pub fn load32(&mut self, r: u8, m: Mem) {
        self.op(None, false, &[0x8B], r, Rm::Mem(m));
    }
    /// `mov r64, [m]`
    pub fn load64(&mut self, r: u8, m: Mem) {
        self.op(None, true, &[0x8B], r, Rm::Mem(m));
    }
    /// `mov [m], r32`
    pub fn store32(&mut self, m: Mem, r: u8) {
        self.op(None, false, &[0x89], r, Rm::Mem(m));
    }
    /// `mov [m], r16`
    pub fn store16(&mut self, m: Mem, r: u8) {
        self.op(Some(0x66), false, &[0x89], r, Rm::Mem(m));
    }
    /// `mov [m], r8` (only al, cl, dl, bl: no REX needed for the low byte)
    pub fn store8(&mut self, m: Mem, r: u8) {
        self.op(None, false, &[0x88], r, Rm::Mem(m));
    }
    /// `mov [m], r64`
    pub fn store64(&mut self, m: Mem, r: u8) {
        self.op(None, true, &[0x89], r, Rm::Mem(m));
    }
    /// `mov dword [m], imm32`
    pub fn store_imm32(&mut self, m: Mem, v: u32) {
        self.op(None, false, &[0xC7], 0, Rm::Mem(m));
        self.imm32(v as i32);
    }
    /// `mov qword [m], imm32` (sign-extended)
    pub fn store_imm64(&mut self, m: Mem, v: i32) {
        self.op(None, true, &[0xC7], 0, Rm::Mem(m));
        self.imm32(v);
    }
    /// Zero- or sign-extending narrow loads: `movzx/movsx r32, byte/word [m]`.
    pub fn load_narrow(&mut self, r: u8, m: Mem, bytes: u32, signed: bool) {
        let opc = match (bytes, signed) {
            (1, false) => 0xB6,
            (1, true) => 0xBE,
            (2, false) => 0xB7,
            _ => 0xBF,
        };
        self.op(None, false, &[0x0F, opc], r, Rm::Mem(m));
    }
    /// Register-register ALU op `op dst, src` (32-bit) with an `op r/m32, r32` opcode:
    /// add 0x01, or 0x09, and 0x21, sub 0x29, xor 0x31, cmp 0x39.
    pub fn alu_rr(&mut self, opcode: u8, dst: u8, src: u8) {
        self.op(None, false, &[opcode], src, Rm::Reg(dst));
    }
    /// `op r/m, imm32` with group-1 digit: add 0, or 1, and 4, sub 5, xor 6, cmp 7.
    pub fn alu_imm(&mut self, w: bool, digit: u8, rm: Rm, v: i32) {
        self.op(None, w, &[0x81], digit, rm);
        self.imm32(v);
    }
    /// `lea r64, [m]`
    pub fn lea64(&mut self, r: u8, m: Mem) {
        self.op(None, true, &[0x8D], r, Rm::Mem(m));
    }
    /// `cmovb r64, r/m64`
    pub fn cmovb64(&mut self, r: u8, rm: Rm) {
        self.op(None, true, &[0x0F, 0x42], r, rm);
    }
    /// `cmp r64, r/m64`
    pub fn cmp64(&mut self, r: u8, rm: Rm) {
        self.op(None, true, &[0x3B], r, rm);
    }
    /// `cmp r64, [m]`
    pub fn cmp64_mem(&mut self, r: u8, m: Mem) {
        self.op(None, true, &[0x3B], r, Rm::Mem(m));
    }
    /// Shift `r32` by `cl`: shl 4, shr 5, sar 7.
    pub fn shift_cl(&mut self, digit: u8, r: u8) {
        self.op(None, false, &[0xD3], digit, Rm::Reg(r));
    }
    /// Shift by an immediate (`w` for 64-bit).
    pub fn shift_imm(&mut self, w: bool, digit: u8, r: u8, n: u8) {
        self.op(None, w, &[0xC1], digit, Rm::Reg(r));
        self.code.push(n);
    }
    /// `imul dst, src` (32- or 64-bit).
    pub fn imul(&mut self, w: bool, dst: u8, src: u8) {
        self.op(None, w, &[0x0F, 0xAF], dst, Rm::Reg(src));
    }
    /// `movsxd r64, r32`
    pub fn movsxd(&mut self, dst: u8, src: u8) {
        self.op(None, true, &[0x63], dst, Rm::Reg(src));
    }
    /// `mov dst32, src32`
    pub fn mov_rr(&mut self, dst: u8, src: u8) {
        self.op(None, false, &[0x89], src, Rm::Reg(dst));
    }
    /// `mov r64, r64`
    pub fn mov_rr64(&mut self, dst: u8, src: u8) {
        self.op(None, true, &[0x89], src, Rm::Reg(dst));
    }
    /// `setcc r8; movzx r32, r8` (al/cl/dl only).
    pub fn setcc_zx(&mut self, c: Cond, r: u8) {
        self.op(None, false, &[0x0F, 0x90 | c as u8], 0, Rm::Reg(r));
        self.op(None, false, &[0x0F, 0xB6], r, Rm::Reg(r));
    }
    /// `jcc label` (rel32).
    pub fn jcc(&mut self, c: Cond, l: Label) {
        self.code.extend_from_slice(&[0x0F, 0x80 | c as u8]);
        self.rel32(l);
    }
    /// `jmp label` (rel32).
    pub fn jmp(&mut self, l: Label) {
        self.code.push(0xE9);
        self.rel32(l);
    }
    /// `jmp rel32` to an absolute position of the final code buffer (`here` is where this
    /// code will be placed).
    pub fn jmp_abs(&mut self, here: usize, target: usize) {
        self.code.push(0xE9);
        let rel = target as i64 - (here as i64 + self.code.len() as i64 + 4);
        self.imm32(rel as i32);
    }
    /// `jmp r64`
    pub fn jmp_reg(&mut self, r: u8) {
        self.op(None, false, &[0xFF], 4, Rm::Reg(r));
    }
    pub fn push(&mut self, r: u8) {
        if r >= 8 {
            self.code.push(0x41);
        }
        self.code.push(0x50 | (r & 7));
    }
    pub fn pop(&mut self, r: u8) {
        if r >= 8 {
            self.code.push(0x41);
        }
        self.code.push(0x58 | (r & 7));
    }
    pub fn ret(&mut self) {
        self.code.push(0xC3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_match_the_manual() {
        let mut a = Asm::new();
        a.load32(RAX, at(RBX, 8)); // mov eax, [rbx+8]
        a.store32(at(RBX, 4), RCX); // mov [rbx+4], ecx
        a.load_narrow(RCX, indexed(R12, RAX, 0), 1, false); // movzx ecx, byte [r12+rax]
        a.load64(RAX, indexed(RBP, RCX, 3)); // mov rax, [rbp+rcx*8]
        a.cmp64_mem(R14, at(RBX, 0x110)); // cmp r14, [rbx+0x110]
        a.alu_imm(true, 0, Rm::Reg(R14), 5); // add r14, 5
        a.store16(indexed(R13, RCX, 0), RCX); // mov [r13+rcx], cx
        a.setcc_zx(Cond::L, RAX);
        assert_eq!(
            a.code,
            [
                0x8B, 0x43, 0x08, //
                0x89, 0x4B, 0x04, //
                0x41, 0x0F, 0xB6, 0x0C, 0x04, //
                0x48, 0x8B, 0x44, 0xCD, 0x00, //
                0x4C, 0x3B, 0xB3, 0x10, 0x01, 0x00, 0x00, //
                0x49, 0x81, 0xC6, 0x05, 0x00, 0x00, 0x00, //
                0x66, 0x41, 0x89, 0x4C, 0x0D, 0x00, //
                0x0F, 0x9C, 0xC0, 0x0F, 0xB6, 0xC0,
            ]
        );
    }
}
