//! A tiny RV32IM assembler and ELF32 writer, for tests and benchmarks that need a kernel
//! without a RISC-V toolchain.
//!
//! Each function returns one instruction word; [`Elf`] wraps words into a loadable
//! executable (also valid for `qemu-system-riscv32`'s ELF loader, which is how the
//! differential test uses it, and for `qemu-riscv32`, which the benchmark uses).
//!
//! ```
//! use ttprof_emu::asm::*;
//! let prog = [addi(10, 0, 42), ecall()];
//! let elf = Elf::new(0x6000).text(0x6000, &prog).symbol("_start", 0x6000, 8).build();
//! assert_eq!(&elf[..4], b"\x7fELF");
//! ```

fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    (f7 << 25) | ((rs2 & 31) << 20) | ((rs1 & 31) << 15) | (f3 << 12) | ((rd & 31) << 7) | opc
}
fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    ((imm as u32 & 0xFFF) << 20) | ((rs1 & 31) << 15) | (f3 << 12) | ((rd & 31) << 7) | opc
}
fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7F) << 25)
        | ((rs2 & 31) << 20)
        | ((rs1 & 31) << 15)
        | (f3 << 12)
        | ((imm & 31) << 7)
        | 0x23
}
fn b(off: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let o = off as u32;
    (((o >> 12) & 1) << 31)
        | (((o >> 5) & 0x3F) << 25)
        | ((rs2 & 31) << 20)
        | ((rs1 & 31) << 15)
        | (f3 << 12)
        | (((o >> 1) & 0xF) << 8)
        | (((o >> 11) & 1) << 7)
        | 0x63
}

macro_rules! rtype {
    ($($name:ident = $f7:expr, $f3:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), " rd, rs1, rs2`")]
        pub fn $name(rd: u32, rs1: u32, rs2: u32) -> u32 { r($f7, rs2, rs1, $f3, rd, 0x33) }
    )*};
}
rtype! {
    add = 0, 0; sub = 0x20, 0; sll = 0, 1; slt = 0, 2; sltu = 0, 3; xor = 0, 4; srl = 0, 5; sra = 0x20, 5;
    or = 0, 6; and = 0, 7; mul = 1, 0; mulh = 1, 1; mulhsu = 1, 2; mulhu = 1, 3; div = 1, 4; divu = 1, 5;
    rem = 1, 6; remu = 1, 7;
}

macro_rules! itype {
    ($($name:ident = $f3:expr, $opc:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), " rd, rs1, imm` (12-bit signed immediate)")]
        pub fn $name(rd: u32, rs1: u32, imm: i32) -> u32 { i(imm, rs1, $f3, rd, $opc) }
    )*};
}
itype! {
    addi = 0, 0x13; slti = 2, 0x13; sltiu = 3, 0x13; xori = 4, 0x13; ori = 6, 0x13; andi = 7, 0x13;
    lb = 0, 0x03; lh = 1, 0x03; lw = 2, 0x03; lbu = 4, 0x03; lhu = 5, 0x03; jalr = 0, 0x67;
}

/// `slli rd, rs1, shamt`
pub fn slli(rd: u32, rs1: u32, shamt: u32) -> u32 {
    r(0, shamt, rs1, 1, rd, 0x13)
}
/// `srli rd, rs1, shamt`
pub fn srli(rd: u32, rs1: u32, shamt: u32) -> u32 {
    r(0, shamt, rs1, 5, rd, 0x13)
}
/// `srai rd, rs1, shamt`
pub fn srai(rd: u32, rs1: u32, shamt: u32) -> u32 {
    r(0x20, shamt, rs1, 5, rd, 0x13)
}
/// `sb rs2, imm(rs1)`
pub fn sb(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 0)
}
/// `sh rs2, imm(rs1)`
pub fn sh(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 1)
}
/// `sw rs2, imm(rs1)`
pub fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 2)
}

macro_rules! btype {
    ($($name:ident = $f3:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), " rs1, rs2, off` (pc-relative byte offset)")]
        pub fn $name(rs1: u32, rs2: u32, off: i32) -> u32 { b(off, rs2, rs1, $f3) }
    )*};
}
btype! { beq = 0; bne = 1; blt = 4; bge = 5; bltu = 6; bgeu = 7; }

/// `lui rd, imm20` (`imm20` is the upper 20 bits)
pub fn lui(rd: u32, imm20: u32) -> u32 {
    (imm20 << 12) | ((rd & 31) << 7) | 0x37
}
/// `auipc rd, imm20`
pub fn auipc(rd: u32, imm20: u32) -> u32 {
    (imm20 << 12) | ((rd & 31) << 7) | 0x17
}
/// `jal rd, off` (pc-relative byte offset)
pub fn jal(rd: u32, off: i32) -> u32 {
    let o = off as u32;
    (((o >> 20) & 1) << 31)
        | (((o >> 1) & 0x3FF) << 21)
        | (((o >> 11) & 1) << 20)
        | (((o >> 12) & 0xFF) << 12)
        | ((rd & 31) << 7)
        | 0x6F
}
/// `ecall`
pub fn ecall() -> u32 {
    0x73
}
/// `ebreak`
pub fn ebreak() -> u32 {
    0x0010_0073
}
/// `fence` (iorw, iorw)
pub fn fence() -> u32 {
    0x0FF0_000F
}
/// `fence.i`
pub fn fence_i() -> u32 {
    0x0000_100F
}
/// `.ttinsn insn`: pushes Tensix instruction `insn` (below 0xC0000000), encoded as `insn`
/// rotated left by two bits.
pub fn ttinsn(insn: u32) -> u32 {
    debug_assert!(insn < 0xC000_0000, ".ttinsn takes a value below 0xC0000000");
    insn.rotate_left(2)
}
/// `csrrw rd, csr, rs1` and friends: `f3` 1..=3 register forms, 5..=7 immediate forms.
pub fn csr(f3: u32, rd: u32, csr: u32, rs1_or_uimm: u32) -> u32 {
    ((csr & 0xFFF) << 20) | ((rs1_or_uimm & 31) << 15) | (f3 << 12) | ((rd & 31) << 7) | 0x73
}

/// `li rd, value` as `lui` + `addi` (always two words, so programs have fixed layouts).
pub fn li(rd: u32, value: u32) -> [u32; 2] {
    let lo = ((value as i32) << 20) >> 20;
    let hi = value.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}

/// A minimal static ELF32 little-endian RISC-V executable.
#[derive(Clone, Debug, Default)]
pub struct Elf {
    entry: u32,
    segments: Vec<(u32, Vec<u8>, u32)>,
    symbols: Vec<(String, u32, u32)>,
}

const EHDR: usize = 52;
const PHDR: usize = 32;
const SHDR: usize = 40;

impl Elf {
    /// An executable whose entry point is `entry`.
    pub fn new(entry: u32) -> Elf {
        Elf {
            entry,
            ..Elf::default()
        }
    }

    /// A loadable segment holding `words` at `addr`.
    pub fn text(self, addr: u32, words: &[u32]) -> Elf {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let n = bytes.len() as u32;
        self.segment(addr, bytes, n)
    }

    /// A loadable segment: `data` at `addr`, zero-filled up to `mem_size` bytes.
    pub fn segment(mut self, addr: u32, data: Vec<u8>, mem_size: u32) -> Elf {
        self.segments.push((addr, data, mem_size));
        self
    }

    /// A function symbol.
    pub fn symbol(mut self, name: &str, addr: u32, size: u32) -> Elf {
        self.symbols.push((name.to_string(), addr, size));
        self
    }

    /// The file's bytes. Segment data is placed at file offsets congruent to its address
    /// modulo 4096, as loaders that map pages (qemu-user) require.
    pub fn build(&self) -> Vec<u8> {
        let mut out = vec![0u8; EHDR + PHDR * self.segments.len()];
        let mut phdrs = Vec::new();
        for (addr, data, mem) in &self.segments {
            let page = 0x1000;
            let mut off = out.len().div_ceil(page) * page;
            off += (*addr as usize) % page;
            out.resize(off, 0);
            out.extend_from_slice(data);
            phdrs.push((
                off as u32,
                *addr,
                data.len() as u32,
                (*mem).max(data.len() as u32),
            ));
        }
        // Sections: null, .text (first segment), .symtab, .strtab, .shstrtab.
        let mut strtab = vec![0u8];
        let mut symtab = vec![0u8; 16];
        for (name, addr, size) in &self.symbols {
            let at = strtab.len() as u32;
            strtab.extend_from_slice(name.as_bytes());
            strtab.push(0);
            put32(&mut symtab, at);
            put32(&mut symtab, *addr);
            put32(&mut symtab, *size);
            symtab.extend_from_slice(&[0x12, 0]); // STB_GLOBAL | STT_FUNC, default visibility
            symtab.extend_from_slice(&1u16.to_le_bytes()); // in .text
        }
        let shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0";
        let sym_off = align4(&mut out);
        out.extend_from_slice(&symtab);
        let str_off = out.len();
        out.extend_from_slice(&strtab);
        let shstr_off = out.len();
        out.extend_from_slice(shstr);
        let sh_off = align4(&mut out);
        out.extend_from_slice(&[0u8; SHDR]);
        let (t_off, t_addr, t_size) = phdrs.first().map_or((0, 0, 0), |p| (p.0, p.1, p.2));
        section(&mut out, 1, 1, 6, t_addr, t_off, t_size, 0, 0, 4, 0);
        section(
            &mut out,
            7,
            2,
            0,
            0,
            sym_off as u32,
            symtab.len() as u32,
            3,
            1,
            4,
            16,
        );
        section(
            &mut out,
            15,
            3,
            0,
            0,
            str_off as u32,
            strtab.len() as u32,
            0,
            0,
            1,
            0,
        );
        section(
            &mut out,
            23,
            3,
            0,
            0,
            shstr_off as u32,
            shstr.len() as u32,
            0,
            0,
            1,
            0,
        );

        let mut h = Vec::with_capacity(EHDR);
        h.extend_from_slice(b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0");
        h.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        h.extend_from_slice(&243u16.to_le_bytes()); // EM_RISCV
        put32(&mut h, 1);
        put32(&mut h, self.entry);
        put32(&mut h, EHDR as u32);
        put32(&mut h, sh_off as u32);
        put32(&mut h, 0); // flags: no RVC, soft float
        for v in [EHDR, PHDR, self.segments.len(), SHDR, 5, 4] {
            h.extend_from_slice(&(v as u16).to_le_bytes());
        }
        out[..EHDR].copy_from_slice(&h);
        for (k, (off, addr, filesz, memsz)) in phdrs.into_iter().enumerate() {
            let mut p = Vec::with_capacity(PHDR);
            for v in [1, off, addr, addr, filesz, memsz, 7, 0x1000] {
                put32(&mut p, v);
            }
            out[EHDR + k * PHDR..EHDR + (k + 1) * PHDR].copy_from_slice(&p);
        }
        out
    }
}

fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn align4(v: &mut Vec<u8>) -> usize {
    v.resize(v.len().div_ceil(4) * 4, 0);
    v.len()
}

#[allow(clippy::too_many_arguments)]
fn section(
    out: &mut Vec<u8>,
    name: u32,
    ty: u32,
    flags: u32,
    addr: u32,
    off: u32,
    size: u32,
    link: u32,
    info: u32,
    align: u32,
    entsize: u32,
) {
    for v in [name, ty, flags, addr, off, size, link, info, align, entsize] {
        put32(out, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode::{decode, Op};

    #[test]
    fn encoders_round_trip_through_the_decoder() {
        let d = decode(beq(1, 2, -8));
        assert_eq!((d.op, d.rs1, d.rs2, d.imm), (Op::Beq, 1, 2, -8));
        let d = decode(jal(1, -2048));
        assert_eq!((d.op, d.rd, d.imm), (Op::Jal, 1, -2048));
        let d = decode(jal(0, 0xFFFFE));
        assert_eq!(d.imm, 0xFFFFE);
        let d = decode(sw(5, 2, -12));
        assert_eq!((d.op, d.rs1, d.rs2, d.imm), (Op::Sw, 2, 5, -12));
        let d = decode(srai(3, 4, 31));
        assert_eq!((d.op, d.rd, d.rs1, d.imm), (Op::Srai, 3, 4, 31));
        for v in [
            0u32,
            1,
            0x7FF,
            0x800,
            0xFFF,
            0x8000_0000,
            0xFFFF_F800,
            0xDEAD_BEEF,
            u32::MAX,
        ] {
            let [a, b] = li(7, v);
            let (ha, hb) = (decode(a), decode(b));
            assert_eq!((ha.imm as u32).wrapping_add(hb.imm as u32), v, "li {v:#x}");
        }
    }
}
