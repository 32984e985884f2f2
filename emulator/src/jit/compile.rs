//! Translating one basic block of pre-decoded RV32IM into x86-64.
//!
//! Register convention inside generated code: `rbx` = the hart's [`Core`], `rbp` = the
//! block table (checked-entry address per instruction slot, 0 = not compiled, 1 = not
//! compilable), `r12` = L1 base, `r13` = local RAM base, `r14` = clock, `r15` = retired
//! count; `rax`, `rcx`, `rdx` are scratch. Guest registers live in `Core::regs`.
//!
//! A block starts with the limit check (the *checked* entry; the *unchecked* entry is
//! just after it) and runs straight-line code up to and including a branch or jump. The
//! clock and retired count are added at compile time and written to `r14`/`r15` only at
//! the block's exits. Anything the fast paths do not cover (MMIO, local RAM misses,
//! misaligned or faulting accesses, stores into code, division, CSRs, `ecall`, ...)
//! leaves the block *before* that instruction with reason [`SLOW`], and the interpreter
//! executes it: every fault and corner case has exactly one implementation.

use super::x86::*;
use crate::config::CycleModel;
use crate::decode::{Inst, Op};
use crate::hart::Core;
use std::mem::offset_of;

/// Exit reasons written to `Core::exit_reason`.
pub const LIMIT: u32 = 0;
/// pc has no compiled block yet; enter it at a check point.
pub const MISS: u32 = 1;
/// Interpret the instruction at pc (not a check point), then go on.
pub const SLOW: u32 = 2;
/// Continue at pc without a check (a block was cut for length).
pub const CONT: u32 = 3;

/// Bytes of the limit check at the start of every block.
pub const CHECK_LEN: usize = 13;
/// Longest block, in instructions.
const MAX_BLOCK: usize = 256;

const fn reg(r: u8) -> Mem {
    at(RBX, 4 * r as i32)
}
const TIME: i32 = offset_of!(Core, time) as i32;
const LIMIT_OFF: i32 = offset_of!(Core, limit) as i32;
const PC: i32 = offset_of!(Core, pc) as i32;
const REASON: i32 = offset_of!(Core, exit_reason) as i32;
pub const L1_OFF: i32 = offset_of!(Core, l1) as i32;
pub const LOCAL_OFF: i32 = offset_of!(Core, local) as i32;
pub const TABLE_OFF: i32 = offset_of!(Core, table) as i32;
pub const TIME_OFF: i32 = TIME;
pub const INSTRET_OFF: i32 = offset_of!(Core, instret) as i32;

/// What the compiler needs to know about the hart and its tile.
#[derive(Clone, Debug)]
pub struct Env {
    pub fetch_base: u32,
    /// Bytes covered by the block table.
    pub window: u32,
    pub l1_size: u32,
    pub local_size: u32,
    /// Code regions (sorted, `[start, end)`): stores there go the slow way.
    pub code: Vec<(u32, u32)>,
    pub code_end: u32,
    pub cycle: CycleModel,
    pub strict: bool,
    /// Absolute address of the common exit stub.
    pub exit: usize,
}

/// Costs accumulated since the block's entry.
#[derive(Clone, Copy)]
struct Acc {
    cycles: u64,
    count: u64,
}

type Cold<'a> = Box<dyn FnOnce(&mut Block<'a>) + 'a>;

struct Block<'a> {
    env: &'a Env,
    /// The block table as it is now (compiled targets are jumped to directly).
    table: &'a [usize],
    /// This block's first pc.
    start: u32,
    a: Asm,
    /// Where the code will live (absolute), for jumps to the exit stub.
    here: usize,
    /// Out-of-line code, emitted after the body.
    cold: Vec<Cold<'a>>,
}

impl<'a> Block<'a> {
    fn exit_with(&mut self, pc: u32, reason: u32) {
        self.a.store_imm32(at(RBX, PC), pc);
        self.a.store_imm32(at(RBX, REASON), reason);
        let here = self.here;
        self.a.jmp_abs(here, self.env.exit);
    }

    fn flush(&mut self, acc: Acc, extra: u64) {
        let c = acc.cycles + extra;
        if c != 0 {
            self.a.alu_imm(true, 0, Rm::Reg(R14), c as i32);
        }
        if acc.count != 0 {
            self.a.alu_imm(true, 0, Rm::Reg(R15), acc.count as i32);
        }
    }

    /// Leaves for the interpreter at `pc` with the costs of everything before it.
    fn slow(&mut self, pc: u32, acc: Acc) {
        self.flush(acc, 0);
        self.exit_with(pc, SLOW);
    }

    /// Jumps to the block at a static `target` (through the table), or exits.
    fn goto(&mut self, target: u32, checked: bool) {
        let off = target.wrapping_sub(self.env.fetch_base);
        if off >= self.env.window || target & 3 != 0 {
            return self.exit_with(target, if checked { MISS } else { CONT });
        }
        // Direct jumps to this block's own start (loops) and to blocks compiled already;
        // the buffer is only ever emptied as a whole, so these never dangle.
        let known = if target == self.start { Some(self.here) } else { self.table.get((off / 4) as usize).copied().filter(|&e| e > 1) };
        if let Some(entry) = known {
            let here = self.here;
            self.a.jmp_abs(here, if checked { entry } else { entry + CHECK_LEN });
            return;
        }
        let miss = self.a.label();
        self.a.load64(RAX, at(RBP, (off / 4 * 8) as i32));
        self.a.alu_imm(true, 7, Rm::Reg(RAX), 1);
        self.a.jcc(Cond::Be, miss);
        if !checked {
            self.a.alu_imm(true, 0, Rm::Reg(RAX), CHECK_LEN as i32);
        }
        self.a.jmp_reg(RAX);
        self.a.bind(miss);
        self.exit_with(target, if checked { MISS } else { CONT });
    }

    fn read(&mut self, host: u8, r: u8) {
        if r == 0 || r >= 32 {
            self.a.alu_rr(0x31, host, host);
        } else {
            self.a.load32(host, reg(r));
        }
    }

    fn write(&mut self, r: u8, host: u8) {
        if r != 0 && r < 32 {
            self.a.store32(reg(r), host);
        }
    }

    /// eax = rs1 + imm, aligned per the mode; jumps to `slow` if misaligned (strict).
    fn address(&mut self, i: &Inst, size: u32, slow: Label) {
        self.read(RAX, i.rs1);
        if i.imm != 0 {
            self.a.alu_imm(false, 0, Rm::Reg(RAX), i.imm);
        }
        if size > 1 {
            let mask = (size - 1) as i32;
            if self.env.strict {
                self.a.op(None, false, &[0xF7], 0, Rm::Reg(RAX)); // test eax, imm32
                self.a.code.extend_from_slice(&mask.to_le_bytes());
                self.a.jcc(Cond::Ne, slow);
            } else {
                self.a.alu_imm(false, 4, Rm::Reg(RAX), !mask);
            }
        }
    }

    fn load(&mut self, i: Inst, pc: u32, acc: Acc) {
        let (size, signed) = match i.op {
            Op::Lb => (1, true),
            Op::Lh => (2, true),
            Op::Lw => (4, false),
            Op::Lbu => (1, false),
            _ => (2, false),
        };
        let (slow, local, done) = (self.a.label(), self.a.label(), self.a.label());
        self.address(&i, size, slow);
        self.a.alu_imm(false, 7, Rm::Reg(RAX), self.env.l1_size as i32);
        self.a.jcc(Cond::Ae, local);
        let m = indexed(R12, RAX, 0);
        if size == 4 { self.a.load32(RCX, m) } else { self.a.load_narrow(RCX, m, size, signed) }
        self.write(i.rd, RCX);
        self.a.bind(done);
        let delta = self.env.cycle.local_ram as i64 - self.env.cycle.l1_load as i64;
        let env = self.env;
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(local);
            b.a.mov_rr(RCX, RAX);
            b.a.alu_imm(false, 5, Rm::Reg(RCX), riscv_linker::mmio::LOCAL_RAM_BASE as i32);
            b.a.alu_imm(false, 7, Rm::Reg(RCX), env.local_size as i32);
            b.a.jcc(Cond::Ae, slow);
            let m = indexed(R13, RCX, 0);
            if size == 4 { b.a.load32(RCX, m) } else { b.a.load_narrow(RCX, m, size, signed) }
            b.write(i.rd, RCX);
            if delta != 0 {
                b.a.alu_imm(true, 0, Rm::Reg(R14), delta as i32);
            }
            b.a.jmp(done);
            b.a.bind(slow);
            b.slow(pc, acc);
        }));
    }

    fn store(&mut self, i: Inst, pc: u32, acc: Acc) {
        let size = match i.op {
            Op::Sb => 1,
            Op::Sh => 2,
            _ => 4,
        };
        let (slow, local, low, write, done) =
            (self.a.label(), self.a.label(), self.a.label(), self.a.label(), self.a.label());
        self.address(&i, size, slow);
        self.a.alu_imm(false, 7, Rm::Reg(RAX), self.env.l1_size as i32);
        self.a.jcc(Cond::Ae, local);
        self.a.alu_imm(false, 7, Rm::Reg(RAX), self.env.code_end as i32);
        self.a.jcc(Cond::B, low);
        self.a.bind(write);
        self.read(RCX, i.rs2);
        let m = indexed(R12, RAX, 0);
        match size {
            1 => self.a.store8(m, RCX),
            2 => self.a.store16(m, RCX),
            _ => self.a.store32(m, RCX),
        }
        self.a.bind(done);
        let delta = self.env.cycle.local_ram as i64 - self.env.cycle.l1_store as i64;
        let env = self.env;
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            // Below code_end: allowed only between code regions.
            b.a.bind(low);
            for &(start, end) in &env.code {
                let next = b.a.label();
                b.a.alu_imm(false, 7, Rm::Reg(RAX), end as i32);
                b.a.jcc(Cond::Ae, next);
                b.a.alu_imm(false, 7, Rm::Reg(RAX), start as i32);
                b.a.jcc(Cond::Ae, slow);
                b.a.jmp(write);
                b.a.bind(next);
            }
            b.a.jmp(write);
            b.a.bind(local);
            b.a.mov_rr(RDX, RAX);
            b.a.alu_imm(false, 5, Rm::Reg(RDX), riscv_linker::mmio::LOCAL_RAM_BASE as i32);
            b.a.alu_imm(false, 7, Rm::Reg(RDX), env.local_size as i32);
            b.a.jcc(Cond::Ae, slow);
            b.read(RCX, i.rs2);
            let m = indexed(R13, RDX, 0);
            match size {
                1 => b.a.store8(m, RCX),
                2 => b.a.store16(m, RCX),
                _ => b.a.store32(m, RCX),
            }
            if delta != 0 {
                b.a.alu_imm(true, 0, Rm::Reg(R14), delta as i32);
            }
            b.a.jmp(done);
            b.a.bind(slow);
            b.slow(pc, acc);
        }));
    }

    /// Register-register and register-immediate arithmetic. Returns false if the
    /// operation is not one of them.
    fn alu(&mut self, i: Inst) -> bool {
        let group1 = |op| match op {
            Op::Add | Op::Addi => Some((0x01, 0)),
            Op::Or | Op::Ori => Some((0x09, 1)),
            Op::And | Op::Andi => Some((0x21, 4)),
            Op::Sub => Some((0x29, 5)),
            Op::Xor | Op::Xori => Some((0x31, 6)),
            _ => None,
        };
        let no_write = i.rd == 0 || i.rd >= 32;
        match i.op {
            Op::Lui => {
                if !no_write {
                    self.a.store_imm32(reg(i.rd), i.imm as u32);
                }
            }
            Op::Add | Op::Sub | Op::Or | Op::And | Op::Xor => {
                if no_write {
                    return true;
                }
                let (opc, _) = group1(i.op).unwrap_or((0x01, 0));
                self.read(RAX, i.rs1);
                self.read(RCX, i.rs2);
                self.a.alu_rr(opc, RAX, RCX);
                self.write(i.rd, RAX);
            }
            Op::Addi | Op::Ori | Op::Andi | Op::Xori => {
                if no_write {
                    return true;
                }
                let (_, digit) = group1(i.op).unwrap_or((0x01, 0));
                self.read(RAX, i.rs1);
                self.a.alu_imm(false, digit, Rm::Reg(RAX), i.imm);
                self.write(i.rd, RAX);
            }
            Op::Slt | Op::Sltu | Op::Slti | Op::Sltiu => {
                if no_write {
                    return true;
                }
                self.read(RAX, i.rs1);
                if matches!(i.op, Op::Slt | Op::Sltu) {
                    self.read(RCX, i.rs2);
                    self.a.alu_rr(0x39, RAX, RCX);
                } else {
                    self.a.alu_imm(false, 7, Rm::Reg(RAX), i.imm);
                }
                let c = if matches!(i.op, Op::Slt | Op::Slti) { Cond::L } else { Cond::B };
                self.a.setcc_zx(c, RAX);
                self.write(i.rd, RAX);
            }
            Op::Sll | Op::Srl | Op::Sra => {
                if no_write {
                    return true;
                }
                self.read(RAX, i.rs1);
                self.read(RCX, i.rs2);
                let digit = match i.op {
                    Op::Sll => 4,
                    Op::Srl => 5,
                    _ => 7,
                };
                self.a.shift_cl(digit, RAX);
                self.write(i.rd, RAX);
            }
            Op::Slli | Op::Srli | Op::Srai => {
                if no_write {
                    return true;
                }
                self.read(RAX, i.rs1);
                let digit = match i.op {
                    Op::Slli => 4,
                    Op::Srli => 5,
                    _ => 7,
                };
                self.a.shift_imm(false, digit, RAX, (i.imm & 31) as u8);
                self.write(i.rd, RAX);
            }
            Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => {
                if no_write {
                    return true;
                }
                self.read(RAX, i.rs1);
                self.read(RCX, i.rs2);
                match i.op {
                    Op::Mul => self.a.imul(false, RAX, RCX),
                    _ => {
                        if matches!(i.op, Op::Mulh | Op::Mulhsu) {
                            self.a.movsxd(RAX, RAX);
                        }
                        if i.op == Op::Mulh {
                            self.a.movsxd(RCX, RCX);
                        }
                        self.a.imul(true, RAX, RCX);
                        self.a.shift_imm(true, 5, RAX, 32);
                    }
                }
                self.write(i.rd, RAX);
            }
            Op::Fence | Op::FenceI => {}
            _ => return false,
        }
        true
    }
}

/// Cycles an instruction costs statically (base + multiply; memory latency of the L1 path).
fn static_cost(cm: &CycleModel, op: Op) -> u64 {
    let base = cm.base_cpi.max(1) as u64;
    base + match op {
        Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => cm.mul as u64,
        Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => cm.l1_load as u64,
        Op::Sb | Op::Sh | Op::Sw => cm.l1_store as u64,
        _ => 0,
    }
}

/// Compiles the block starting at `pc`, to be placed at absolute address `here`, given
/// the current block `table`.
/// `None` if the first instruction is one the JIT leaves to the interpreter.
pub fn compile(env: &Env, table: &[usize], code: &[Inst], pc: u32, here: usize) -> Option<Vec<u8>> {
    let mut b = Block { env, table, start: pc, a: Asm::new(), here, cold: Vec::new() };
    let limit_exit = b.a.label();
    b.a.cmp64_mem(R14, at(RBX, LIMIT_OFF));
    b.a.jcc(Cond::Ae, limit_exit);
    debug_assert_eq!(b.a.len(), CHECK_LEN);
    let cm = env.cycle;
    let taken = cm.taken_branch as u64;
    let mut acc = Acc { cycles: 0, count: 0 };
    let mut p = pc;
    loop {
        let Some(&i) = code.get((p.wrapping_sub(env.fetch_base) / 4) as usize) else {
            b.flush(acc, 0);
            b.exit_with(p, MISS); // the interpreter reports the fetch fault
            break;
        };
        if acc.count as usize == MAX_BLOCK {
            b.flush(acc, 0);
            b.goto(p, false);
            break;
        }
        let cost = static_cost(&cm, i.op);
        let after = Acc { cycles: acc.cycles + cost, count: acc.count + 1 };
        match i.op {
            Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => b.load(i, p, acc),
            Op::Sb | Op::Sh | Op::Sw => b.store(i, p, acc),
            Op::Auipc => {
                if i.rd != 0 && i.rd < 32 {
                    b.a.store_imm32(reg(i.rd), p.wrapping_add(i.imm as u32));
                }
            }
            Op::Jal => {
                let target = p.wrapping_add(i.imm as u32);
                if target & 3 != 0 {
                    b.slow(p, acc);
                    break;
                }
                if i.rd != 0 && i.rd < 32 {
                    b.a.store_imm32(reg(i.rd), p.wrapping_add(4));
                }
                b.flush(after, taken);
                b.goto(target, true);
                break;
            }
            Op::Jalr => {
                let misaligned = b.a.label();
                b.read(RAX, i.rs1);
                if i.imm != 0 {
                    b.a.alu_imm(false, 0, Rm::Reg(RAX), i.imm);
                }
                b.a.alu_imm(false, 4, Rm::Reg(RAX), -2);
                b.a.op(None, false, &[0xF7], 0, Rm::Reg(RAX));
                b.a.code.extend_from_slice(&3i32.to_le_bytes());
                b.a.jcc(Cond::Ne, misaligned);
                if i.rd != 0 && i.rd < 32 {
                    b.a.store_imm32(reg(i.rd), p.wrapping_add(4));
                }
                b.flush(after, taken);
                // Dynamic goto: rcx = target - fetch_base, in bytes.
                let miss = b.a.label();
                b.a.mov_rr(RCX, RAX);
                b.a.alu_imm(false, 5, Rm::Reg(RCX), env.fetch_base as i32);
                b.a.alu_imm(false, 7, Rm::Reg(RCX), env.window as i32);
                b.a.jcc(Cond::Ae, miss);
                b.a.load64(RDX, indexed(RBP, RCX, 1));
                b.a.alu_imm(true, 7, Rm::Reg(RDX), 1);
                b.a.jcc(Cond::Be, miss);
                b.a.jmp_reg(RDX);
                b.a.bind(miss);
                b.a.store32(at(RBX, PC), RAX);
                b.a.store_imm32(at(RBX, REASON), MISS);
                let here = b.here;
                b.a.jmp_abs(here, env.exit);
                b.a.bind(misaligned);
                b.slow(p, acc);
                break;
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let target = p.wrapping_add(i.imm as u32);
                let taken_l = b.a.label();
                b.read(RAX, i.rs1);
                b.read(RCX, i.rs2);
                b.a.alu_rr(0x39, RAX, RCX);
                let c = match i.op {
                    Op::Beq => Cond::E,
                    Op::Bne => Cond::Ne,
                    Op::Blt => Cond::L,
                    Op::Bge => Cond::Ge,
                    Op::Bltu => Cond::B,
                    _ => Cond::Ae,
                };
                b.a.jcc(c, taken_l);
                b.flush(after, 0);
                b.goto(p.wrapping_add(4), true);
                b.a.bind(taken_l);
                if target & 3 != 0 {
                    b.slow(p, acc);
                } else {
                    b.flush(after, taken);
                    b.goto(target, true);
                }
                break;
            }
            _ => {
                if !b.alu(i) {
                    // Division, CSRs, ecall, ebreak, illegal: the interpreter's.
                    if acc.count == 0 {
                        return None;
                    }
                    b.slow(p, acc);
                    break;
                }
            }
        }
        acc = after;
        p = p.wrapping_add(4);
    }
    b.a.bind(limit_exit);
    b.exit_with(pc, LIMIT);
    while let Some(f) = b.cold.pop() {
        f(&mut b);
    }
    b.a.finish()
}
