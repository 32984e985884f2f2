//! Translating one basic block of pre-decoded RV32IM into x86-64.
//!
//! A block starts with the limit check (the *checked* entry; the *unchecked* entry is
//! just after it) and runs straight-line code up to and including a branch or jump.
//! Anything the fast paths do not cover (MMIO, misaligned or faulting accesses, stores
//! into code, division, CSRs, `ecall`, Blackhole's L1 loads through its data cache, ...)
//! leaves the block *before* that instruction with reason [`SLOW`], and the interpreter
//! executes it: every fault and corner case has exactly one implementation.
//!
//! Generated code applies the rules of [`crate::isa::pipeline`] step by step, on the same
//! state the interpreter uses (`Core::pipe`, in memory); with [`Env::lines`] a block also
//! counts what [`crate::isa::lines`] charges ([`BlockLines`]). The register convention is
//! on [`compile`]. See docs/design/timing-model.md, "The JIT's steps", for why its
//! compile-time shortcuts are exact, and docs/design/line-cycles.md for the counting.

use super::x86::*;
use crate::isa::decode::{Inst, Op};
use crate::isa::hart::Core;
use crate::isa::pipeline::{self, Pipe, Timing, ICACHE_LINE};
use std::mem::offset_of;

/// What one counter of a lines-mode block counts, for its instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// Passes that left the block before the instruction (it did not issue in the block).
    Exit,
    /// Instruction-cache misses on its fetch.
    ICacheMiss,
    /// Cycles it waited for a register.
    LoadUse,
    /// Cycles it waited for the store queue or a load slot.
    StorePort,
}

/// One instruction a lines-mode block reached.
#[derive(Clone, Copy, Debug)]
pub struct InstLines {
    pub pc: u32,
    /// Issue and mispredict cycles when it falls through (`[0]`) and, for the block's
    /// closing branch, when taken (`[1]`).
    pub issue: [u64; 2],
    pub mispredict: [u64; 2],
    /// The block's closing conditional branch (its taken passes are counted).
    pub branch: bool,
}

/// The counters of one lines-mode block, at `first` in the hart's counter array: the
/// block's entries minus one (so the first entry since the last fold makes it zero, and
/// the block puts itself on the dirty list), its taken branches, then one per
/// `counters` entry (instruction index, what).
#[derive(Clone, Debug, Default)]
pub struct BlockLines {
    pub first: u32,
    pub insts: Vec<InstLines>,
    pub counters: Vec<(u16, Count)>,
}

/// The block's issue and mispredict cycles for `i` (see [`InstLines`]).
fn issue_cycles(cfg: &Timing, i: &Inst) -> ([u64; 2], [u64; 2], bool) {
    match i.op {
        Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
            let mis = |taken| {
                if pipeline::mispredicted(i.imm, taken) {
                    cfg.mispredict as u64
                } else {
                    0
                }
            };
            let cost = |taken| pipeline::branch(cfg, 0, i.imm, taken);
            (
                [cost(false) - mis(false), cost(true) - mis(true)],
                [mis(false), mis(true)],
                true,
            )
        }
        Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => {
            let c = cfg.mul_issue as u64;
            ([c, c], [0, 0], false)
        }
        _ => ([1, 1], [0, 0], false),
    }
}

/// Exit reasons written to `Core::exit_reason`.
pub const LIMIT: u32 = 0;
/// pc has no compiled block yet; enter it at a check point.
pub const MISS: u32 = 1;
/// Interpret the instruction at pc (not a check point), then go on.
pub const SLOW: u32 = 2;
/// Continue at pc without a check (a block was cut for length).
pub const CONT: u32 = 3;
/// The access at pc is past the core's horizon: stop before it (see `tile`).
pub const YIELD: u32 = 4;

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
const HORIZON: i32 = offset_of!(Core, horizon) as i32;
const PIPE: i32 = offset_of!(Core, pipe) as i32;
const READY: i32 = PIPE + offset_of!(Pipe, ready) as i32;
const LOADS: i32 = PIPE + offset_of!(Pipe, loads) as i32;
const STORES: i32 = PIPE + offset_of!(Pipe, stores) as i32;
pub const LOAD_AT: i32 = PIPE + offset_of!(Pipe, load_at) as i32;
pub const STORE_AT: i32 = PIPE + offset_of!(Pipe, store_at) as i32;
pub const LAST_EMIT: i32 = PIPE + offset_of!(Pipe, last_emit) as i32;
pub const PORT: i32 = PIPE + offset_of!(Pipe, port) as i32;
const ICACHE: i32 = PIPE + offset_of!(Pipe, icache) as i32;
const LINES: i32 = offset_of!(Core, lines) as i32;

const fn ready(r: u8) -> Mem {
    at(RBX, READY + 8 * (r & 31) as i32)
}

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
    pub timing: Timing,
    /// Instruction-cache sets of the hart.
    pub icache_sets: u32,
    pub strict: bool,
    /// Lines mode: blocks count what they charge ([`BlockLines`]).
    pub lines: bool,
    /// Absolute address of the common exit stub.
    pub exit: usize,
}

/// What the block has done that is not in `r14`/`r15` yet.
#[derive(Clone, Copy)]
struct Acc {
    /// Cycles to add to `r14` (the core's clock) before the next dynamic step.
    off: u64,
    /// Instructions retired.
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
    /// Registers whose `Pipe::ready` is known to be at most `r14` (bit per register).
    clean: u32,
    /// The warm copy of a loop block (see [`compile`]): where jumps back to `start` go.
    warm: Option<Label>,
    /// Whether instruction-cache lines are checked (not in a warm copy).
    icache: bool,
    /// The `clean` set at the jump back to `start`, if the block made one.
    back_edge: Option<u32>,
    /// Lines mode: the block's id (what it puts on the dirty list) and its counters.
    lines: Option<(u32, BlockLines)>,
}

impl<'a> Block<'a> {
    fn exit_with(&mut self, pc: u32, reason: u32) {
        self.a.store_imm32(at(RBX, PC), pc);
        self.a.store_imm32(at(RBX, REASON), reason);
        let here = self.here;
        self.a.jmp_abs(here, self.env.exit);
    }

    /// The displacement in the counter array of instruction `k`'s counter of `what`
    /// (allocated on first use; the warm copy shares the first copy's).
    fn counter(&mut self, k: u64, what: Count) -> Option<i32> {
        let (_, l) = self.lines.as_mut()?;
        let key = (k as u16, what);
        let j = match l.counters.iter().position(|c| *c == key) {
            Some(j) => j,
            None => {
                l.counters.push(key);
                l.counters.len() - 1
            }
        };
        Some(8 * (l.first as i32 + 2 + j as i32))
    }

    /// Adds 1 to the counter at `disp` (clobbers `rax`).
    fn bump(&mut self, disp: Option<i32>) {
        if let Some(d) = disp {
            self.a.load64(RAX, at(RBX, LINES));
            self.a.alu_imm(true, 0, Rm::Mem(at(RAX, d)), 1);
        }
    }

    /// Lines mode, at the start of a pass: counts the entry; the first since the last fold
    /// puts the block on the dirty list (`counts[0]` entries from `counts[1]`).
    fn count_entry(&mut self) {
        let Some((id, l)) = &self.lines else {
            return;
        };
        let (id, disp) = (*id, 8 * l.first as i32);
        let (first, back) = (self.a.label(), self.a.label());
        self.a.load64(RAX, at(RBX, LINES));
        self.a.alu_imm(true, 0, Rm::Mem(at(RAX, disp)), 1);
        self.a.jcc(Cond::E, first);
        self.a.bind(back);
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(first);
            b.a.load64(RCX, at(RAX, 0));
            b.a.store_imm64(indexed(RAX, RCX, 3).with_disp(8), id as i32);
            b.a.alu_imm(true, 0, Rm::Mem(at(RAX, 0)), 1);
            b.a.jmp(back);
        }));
    }

    fn flush(&mut self, acc: Acc, extra: u64) {
        let c = acc.off + extra;
        if c != 0 {
            self.a.alu_imm(true, 0, Rm::Reg(R14), c as i32);
        }
        if acc.count != 0 {
            self.a.alu_imm(true, 0, Rm::Reg(R15), acc.count as i32);
        }
    }

    /// Leaves for the interpreter at `pc` with the costs of everything before it.
    fn slow(&mut self, pc: u32, acc: Acc) {
        let exit = self.counter(acc.count, Count::Exit);
        self.bump(exit);
        self.flush(acc, 0);
        self.exit_with(pc, SLOW);
    }

    /// Adds the pending cycles to `r14` (a dynamic step follows).
    fn settle(&mut self, acc: &mut Acc) {
        if acc.off != 0 {
            self.a.alu_imm(true, 0, Rm::Reg(R14), acc.off as i32);
            acc.off = 0;
        }
    }

    /// `r14 = max(r14, [m])`, as a branch to out-of-line code rather than a `cmov`: most
    /// waits at a given instruction either always or never happen, so the branch predicts
    /// well and the clock does not carry a data dependency through every wait.
    /// In lines mode the wait's cycles go to counter `charge` (instruction, cause).
    fn wait_for(&mut self, m: Mem, charge: (u64, Count)) {
        let (wait, back) = (self.a.label(), self.a.label());
        let disp = self.counter(charge.0, charge.1);
        self.a.cmp64(R14, Rm::Mem(m));
        self.a.jcc(Cond::B, wait);
        self.a.bind(back);
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(wait);
            match disp {
                Some(d) => {
                    // counter += new r14 - old r14 (rax may hold the access's address).
                    b.a.push(RAX);
                    b.a.load64(RAX, at(RBX, LINES));
                    b.a.op(None, true, &[0x29], R14, Rm::Mem(at(RAX, d)));
                    b.a.load64(R14, m);
                    b.a.op(None, true, &[0x01], R14, Rm::Mem(at(RAX, d)));
                    b.a.pop(RAX);
                }
                None => b.a.load64(R14, m),
            }
            b.a.jmp(back);
        }));
    }

    /// [`pipeline::need`]: the instruction waits for register `r`.
    fn need(&mut self, r: u8, acc: &mut Acc) {
        if r == 0 || r >= 32 || self.clean & (1 << r) != 0 {
            return;
        }
        self.settle(acc);
        self.wait_for(ready(r), (acc.count, Count::LoadUse));
        self.clean |= 1 << r;
    }

    /// A result in `rd` ready no later than the next instruction issues.
    fn ready_next(&mut self, rd: u8) {
        if rd == 0 || rd >= 32 || self.clean & (1 << rd) != 0 {
            return;
        }
        self.a.store64(ready(rd), R14);
        self.clean |= 1 << rd;
    }

    /// A result in `rd` ready `lat` cycles after the issue cycle `r14 + acc.off`.
    fn ready_at(&mut self, rd: u8, acc: Acc, lat: u64) {
        if rd == 0 || rd >= 32 {
            return;
        }
        self.a.lea64(RDX, at(R14, (acc.off + lat) as i32));
        self.a.store64(ready(rd), RDX);
        self.clean &= !(1 << rd);
    }

    /// [`pipeline::fetch`] for the instruction at `pc` (its line is checked once per block).
    fn fetch(&mut self, pc: u32, k: u64) {
        let line = pc / ICACHE_LINE;
        let count = self.counter(k, Count::ICacheMiss);
        let tag = at(RBX, ICACHE + 4 * (line & (self.env.icache_sets - 1)) as i32);
        let (miss, back) = (self.a.label(), self.a.label());
        self.a
            .alu_imm(false, 7, Rm::Mem(tag), line.wrapping_add(1) as i32);
        self.a.jcc(Cond::Ne, miss);
        self.a.bind(back);
        let penalty = self.env.timing.icache_miss as i32;
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(miss);
            b.a.store_imm32(tag, line.wrapping_add(1));
            b.a.alu_imm(true, 0, Rm::Reg(R14), penalty);
            if let Some(d) = count {
                b.a.push(RAX);
                b.a.load64(RAX, at(RBX, LINES));
                b.a.alu_imm(true, 0, Rm::Mem(at(RAX, d)), 1);
                b.a.pop(RAX);
            }
            b.a.jmp(back);
        }));
    }

    /// [`pipeline::queue`]: waits while the store queue is full.
    fn queue(&mut self, acc: &mut Acc) {
        self.settle(acc);
        self.wait_for(
            indexed(RBX, R10, 3).with_disp(STORES),
            (acc.count, Count::StorePort),
        );
    }

    /// Stops before the access at `pc` if `r14` is past the horizon.
    fn horizon(&mut self, pc: u32, acc: Acc) {
        let past = self.a.label();
        let exit = self.counter(acc.count, Count::Exit);
        self.a.cmp64_mem(R14, at(RBX, HORIZON));
        self.a.jcc(Cond::A, past);
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(past);
            b.bump(exit);
            b.flush(acc, 0);
            b.exit_with(pc, YIELD);
        }));
    }

    /// Jumps to the block at a static `target` (through the table), or exits.
    fn goto(&mut self, target: u32, checked: bool) {
        let off = target.wrapping_sub(self.env.fetch_base);
        if off >= self.env.window || target & 3 != 0 {
            return self.exit_with(target, if checked { MISS } else { CONT });
        }
        if target == self.start {
            self.back_edge = Some(self.clean);
            if let Some(warm) = self.warm {
                self.a.jmp(warm);
                return;
            }
        }
        // Direct jumps to this block's own start (loops) and to blocks compiled already;
        // the buffer is only ever emptied as a whole, so these never dangle.
        let known = if target == self.start {
            Some(self.here)
        } else {
            self.table
                .get((off / 4) as usize)
                .copied()
                .filter(|&e| e > 1)
        };
        if let Some(entry) = known {
            let here = self.here;
            self.a
                .jmp_abs(here, if checked { entry } else { entry + CHECK_LEN });
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

    /// A load: [`pipeline::need`], [`pipeline::queue`], then for L1 [`pipeline::slot`],
    /// the horizon and [`pipeline::load`]; local RAM out of line. `acc` is the state
    /// before the instruction and becomes the state after it.
    fn load(&mut self, i: Inst, pc: u32, acc: &mut Acc) {
        let (size, signed) = match i.op {
            Op::Lb => (1, true),
            Op::Lh => (2, true),
            Op::Lw => (4, false),
            Op::Lbu => (1, false),
            _ => (2, false),
        };
        self.need(i.rs1, acc);
        self.queue(acc);
        let before = *acc;
        let (slow, local, done) = (self.a.label(), self.a.label(), self.a.label());
        self.address(&i, size, slow);
        self.a
            .alu_imm(false, 7, Rm::Reg(RAX), self.env.l1_size as i32);
        self.a.jcc(Cond::Ae, local);
        if self.env.timing.dcache_lines != 0 {
            // Blackhole's data cache: the interpreter's.
            self.a.jmp(slow);
        } else {
            // L1: a load slot, the horizon, the port.
            let lat = self.env.timing.l1_load as i32;
            self.wait_for(
                indexed(RBX, R9, 3).with_disp(LOADS),
                (before.count, Count::StorePort),
            );
            self.horizon(pc, before);
            self.a.mov_rr64(RDX, R8);
            self.a.cmp64(RDX, Rm::Reg(R14));
            self.a.cmovb64(RDX, Rm::Reg(R14));
            self.a.lea64(R8, at(RDX, 1));
            self.a.lea64(RSI, at(RDX, lat - 1));
            self.a.store64(indexed(RBX, R9, 3).with_disp(LOADS), RSI);
            self.a.alu_imm(false, 0, Rm::Reg(R9), 1);
            self.a
                .alu_imm(false, 4, Rm::Reg(R9), pipeline::LOADS_IN_FLIGHT as i32 - 1);
            if i.rd != 0 && i.rd < 32 {
                self.a.lea64(RSI, at(RDX, lat));
                self.a.store64(ready(i.rd), RSI);
            }
            let m = indexed(R12, RAX, 0);
            if size == 4 {
                self.a.load32(RCX, m)
            } else {
                self.a.load_narrow(RCX, m, size, signed)
            }
            self.write(i.rd, RCX);
        }
        self.a.bind(done);
        if i.rd != 0 && i.rd < 32 {
            self.clean &= !(1 << i.rd);
        }
        acc.off = 1;
        let env = self.env;
        self.cold.push(Box::new(move |b: &mut Block<'a>| {
            b.a.bind(local);
            b.a.mov_rr(RCX, RAX);
            b.a.alu_imm(
                false,
                5,
                Rm::Reg(RCX),
                riscv_linker::mmio::LOCAL_RAM_BASE as i32,
            );
            b.a.alu_imm(false, 7, Rm::Reg(RCX), env.local_size as i32);
            b.a.jcc(Cond::Ae, slow);
            if i.rd != 0 && i.rd < 32 {
                b.a.lea64(RDX, at(R14, env.timing.local_load as i32));
                b.a.store64(ready(i.rd), RDX);
            }
            let m = indexed(R13, RCX, 0);
            if size == 4 {
                b.a.load32(RCX, m)
            } else {
                b.a.load_narrow(RCX, m, size, signed)
            }
            b.write(i.rd, RCX);
            b.a.jmp(done);
            b.a.bind(slow);
            b.slow(pc, before);
        }));
    }

    /// A store: [`pipeline::need`], [`pipeline::queue`], the horizon for L1, then
    /// [`pipeline::store`].
    fn store(&mut self, i: Inst, pc: u32, acc: &mut Acc) {
        let size = match i.op {
            Op::Sb => 1,
            Op::Sh => 2,
            _ => 4,
        };
        self.need(i.rs1, acc);
        self.need(i.rs2, acc);
        self.queue(acc);
        let before = *acc;
        let (slow, local, low, write, done) = (
            self.a.label(),
            self.a.label(),
            self.a.label(),
            self.a.label(),
            self.a.label(),
        );
        self.address(&i, size, slow);
        self.a
            .alu_imm(false, 7, Rm::Reg(RAX), self.env.l1_size as i32);
        self.a.jcc(Cond::Ae, local);
        self.a
            .alu_imm(false, 7, Rm::Reg(RAX), self.env.code_end as i32);
        self.a.jcc(Cond::B, low);
        self.a.bind(write);
        self.horizon(pc, before);
        // emit = max(t + 1, last_emit + 1, port); the port is then held.
        self.a.mov_rr64(RDX, R11);
        self.a.cmp64(RDX, Rm::Reg(R14));
        self.a.cmovb64(RDX, Rm::Reg(R14));
        self.a.alu_imm(true, 0, Rm::Reg(RDX), 1);
        self.a.cmp64(RDX, Rm::Reg(R8));
        self.a.cmovb64(RDX, Rm::Reg(R8));
        self.a
            .lea64(R8, at(RDX, self.env.timing.l1_store_port as i32));
        self.emitted();
        self.read(RCX, i.rs2);
        let m = indexed(R12, RAX, 0);
        match size {
            1 => self.a.store8(m, RCX),
            2 => self.a.store16(m, RCX),
            _ => self.a.store32(m, RCX),
        }
        self.a.bind(done);
        acc.off = 1;
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
            b.a.mov_rr(RDI, RAX);
            b.a.alu_imm(
                false,
                5,
                Rm::Reg(RDI),
                riscv_linker::mmio::LOCAL_RAM_BASE as i32,
            );
            b.a.alu_imm(false, 7, Rm::Reg(RDI), env.local_size as i32);
            b.a.jcc(Cond::Ae, slow);
            // emit = max(t + 1, last_emit + 1): no port.
            b.a.mov_rr64(RDX, R11);
            b.a.cmp64(RDX, Rm::Reg(R14));
            b.a.cmovb64(RDX, Rm::Reg(R14));
            b.a.alu_imm(true, 0, Rm::Reg(RDX), 1);
            b.emitted();
            b.read(RCX, i.rs2);
            let m = indexed(R13, RDI, 0);
            match size {
                1 => b.a.store8(m, RCX),
                2 => b.a.store16(m, RCX),
                _ => b.a.store32(m, RCX),
            }
            b.a.jmp(done);
            b.a.bind(slow);
            b.slow(pc, before);
        }));
    }

    /// Records a store emitted at `rdx` in the queue.
    fn emitted(&mut self) {
        self.a.mov_rr64(R11, RDX);
        self.a.store64(indexed(RBX, R10, 3).with_disp(STORES), RDX);
        self.a.alu_imm(false, 0, Rm::Reg(R10), 1);
        self.a
            .alu_imm(false, 4, Rm::Reg(R10), pipeline::STORE_QUEUE as i32 - 1);
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
                let c = if matches!(i.op, Op::Slt | Op::Slti) {
                    Cond::L
                } else {
                    Cond::B
                };
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

/// Compiles the block starting at `pc`, to be placed at absolute address `here`, given
/// the current block `table`.
/// `None` if the first instruction is one the JIT leaves to the interpreter.
///
/// Register convention inside generated code: `rbx` = the hart's [`Core`], `rbp` = the
/// block table (checked-entry address per instruction slot, 0 = not compiled, 1 = not
/// compilable), `r12` = L1 base, `r13` = local RAM base, `r14` = clock, `r15` = retired
/// count, and four fields of `Core::pipe` kept in registers between entry and exit: `r8` =
/// the L1 port's next free cycle, `r9` = the load ring's position, `r10` = the store ring's
/// position, `r11` = the last store's emit cycle; `rax`, `rcx`, `rdx`, `rsi`, `rdi` are
/// scratch. Guest registers live in `Core::regs`.
///
/// A block that ends by jumping back to its own start (a loop) is compiled twice: the
/// first copy runs once from any entry; its jump back goes to a second, *warm* copy that
/// starts with what the first copy's end knows (registers known ready, instruction-cache
/// lines present: nothing else runs on this core in between) and loops on itself.
///
/// In lines mode `lines` is (the block's id, its first counter's index); the block's
/// counters come back with the code.
pub fn compile(
    env: &Env,
    table: &[usize],
    code: &[Inst],
    pc: u32,
    here: usize,
    lines: Option<(u32, u32)>,
) -> Option<(Vec<u8>, Option<BlockLines>)> {
    let mut b = Block {
        env,
        table,
        start: pc,
        a: Asm::new(),
        here,
        cold: Vec::new(),
        clean: 0,
        warm: None,
        icache: true,
        back_edge: None,
        lines: lines.map(|(id, first)| {
            (
                id,
                BlockLines {
                    first,
                    ..BlockLines::default()
                },
            )
        }),
    };
    let limit_exit = b.a.label();
    b.a.cmp64_mem(R14, at(RBX, LIMIT_OFF));
    b.a.jcc(Cond::Ae, limit_exit);
    debug_assert_eq!(b.a.len(), CHECK_LEN);
    let loops = loops_to_start(env, code, pc);
    if loops {
        b.warm = Some(b.a.label());
    }
    if !body(&mut b, code, pc) {
        return None;
    }
    if let (Some(warm), Some(clean)) = (b.warm, b.back_edge) {
        // The warm copy: entered only from a jump back to `pc` (a check point).
        b.a.bind(warm);
        b.a.cmp64_mem(R14, at(RBX, LIMIT_OFF));
        b.a.jcc(Cond::Ae, limit_exit);
        b.clean = clean;
        b.icache = lines_collide(env, code, pc);
        body(&mut b, code, pc);
    }
    b.a.bind(limit_exit);
    b.exit_with(pc, LIMIT);
    while let Some(f) = b.cold.pop() {
        f(&mut b);
    }
    let lines = b.lines.take().map(|(_, l)| l);
    Some((b.a.finish()?, lines))
}

/// The last instruction of the block at `pc` (the first control transfer, or an
/// instruction left to the interpreter, or the length limit) and whether it can jump back
/// to `pc`.
fn loops_to_start(env: &Env, code: &[Inst], pc: u32) -> bool {
    let mut p = pc;
    for _ in 0..MAX_BLOCK {
        let Some(&i) = code.get((p.wrapping_sub(env.fetch_base) / 4) as usize) else {
            return false;
        };
        if !compilable(i.op) {
            return false;
        }
        match i.op {
            Op::Jal | Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                return p.wrapping_add(i.imm as u32) == pc;
            }
            Op::Jalr => return false,
            _ => {}
        }
        p = p.wrapping_add(4);
    }
    false
}

/// Whether two of the block's instruction-cache lines share a set (then a pass over the
/// block can evict its own lines, and the warm copy checks them too).
fn lines_collide(env: &Env, code: &[Inst], pc: u32) -> bool {
    let mut p = pc;
    let mut seen = std::collections::HashSet::new();
    let sets = env.icache_sets;
    for _ in 0..MAX_BLOCK {
        if !seen.insert((p / ICACHE_LINE) & (sets - 1)) && p.is_multiple_of(ICACHE_LINE) {
            return true;
        }
        let Some(&i) = code.get((p.wrapping_sub(env.fetch_base) / 4) as usize) else {
            return false;
        };
        if matches!(
            i.op,
            Op::Jal | Op::Jalr | Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu
        ) || !compilable(i.op)
        {
            return false;
        }
        p = p.wrapping_add(4);
    }
    true
}

/// Emits one copy of the block's instructions from `pc`. False if the first instruction is
/// left to the interpreter.
fn body(b: &mut Block<'_>, code: &[Inst], pc: u32) -> bool {
    let env = b.env;
    let cfg = env.timing;
    let mut acc = Acc { off: 0, count: 0 };
    let mut p = pc;
    b.count_entry();
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
        if !compilable(i.op) {
            // Division, CSRs, ecall, ebreak, illegal: the interpreter's.
            if acc.count == 0 {
                return false;
            }
            b.slow(p, acc);
            break;
        }
        if let Some((_, l)) = b.lines.as_mut() {
            if l.insts.len() == acc.count as usize {
                let (issue, mispredict, branch) = issue_cycles(&cfg, &i);
                l.insts.push(InstLines {
                    pc: p,
                    issue,
                    mispredict,
                    branch,
                });
            }
        }
        if b.icache && (p == pc || p.is_multiple_of(ICACHE_LINE)) {
            b.fetch(p, acc.count);
        }
        match i.op {
            Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => b.load(i, p, &mut acc),
            Op::Sb | Op::Sh | Op::Sw => b.store(i, p, &mut acc),
            Op::Auipc | Op::Lui => {
                let v = if i.op == Op::Lui {
                    i.imm as u32
                } else {
                    p.wrapping_add(i.imm as u32)
                };
                if i.rd != 0 && i.rd < 32 {
                    b.a.store_imm32(reg(i.rd), v);
                }
                b.ready_next(i.rd);
                acc.off += 1;
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
                b.ready_next(i.rd);
                let after = Acc {
                    off: acc.off + 1,
                    count: acc.count + 1,
                };
                b.flush(after, 0);
                b.goto(target, true);
                break;
            }
            Op::Jalr => {
                let misaligned = b.a.label();
                b.need(i.rs1, &mut acc);
                let before = acc;
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
                b.ready_next(i.rd);
                let after = Acc {
                    off: acc.off + 1,
                    count: acc.count + 1,
                };
                b.flush(after, 0);
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
                b.slow(p, before);
                break;
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let target = p.wrapping_add(i.imm as u32);
                b.need(i.rs1, &mut acc);
                b.need(i.rs2, &mut acc);
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
                let cost = |taken| pipeline::branch(&cfg, 0, i.imm, taken);
                b.a.jcc(c, taken_l);
                b.flush(
                    Acc {
                        off: acc.off + cost(false),
                        count: acc.count + 1,
                    },
                    0,
                );
                b.goto(p.wrapping_add(4), true);
                b.a.bind(taken_l);
                if target & 3 != 0 {
                    b.slow(p, acc);
                } else {
                    let taken = b.lines.as_ref().map(|(_, l)| 8 * (l.first as i32 + 1));
                    b.bump(taken);
                    b.flush(
                        Acc {
                            off: acc.off + cost(true),
                            count: acc.count + 1,
                        },
                        0,
                    );
                    b.goto(target, true);
                }
                break;
            }
            Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => {
                b.need(i.rs1, &mut acc);
                b.need(i.rs2, &mut acc);
                b.alu(i);
                if cfg.mul_latency <= cfg.mul_issue {
                    b.ready_next(i.rd);
                } else {
                    b.ready_at(i.rd, acc, cfg.mul_latency as u64);
                }
                acc.off += cfg.mul_issue as u64;
            }
            _ => {
                b.need(i.rs1, &mut acc);
                b.need(i.rs2, &mut acc);
                if !b.alu(i) {
                    // Not arithmetic after all: the interpreter's.
                    b.slow(p, acc);
                    break;
                }
                b.ready_next(i.rd);
                acc.off += 1;
            }
        }
        acc.count += 1;
        p = p.wrapping_add(4);
    }
    true
}

/// Whether generated code covers `op` (everything else is the interpreter's). Zba and Zbb
/// are the interpreter's too: it also faults on them on an arch without them.
fn compilable(op: Op) -> bool {
    if op.is_zba_zbb() {
        return false;
    }
    !matches!(
        op,
        Op::Div
            | Op::Divu
            | Op::Rem
            | Op::Remu
            | Op::Ecall
            | Op::Ebreak
            | Op::Csrrw
            | Op::Csrrs
            | Op::Csrrc
            | Op::Csrrwi
            | Op::Csrrsi
            | Op::Csrrci
            | Op::TtInsn
            | Op::Illegal
            | Op::NoFetch
    )
}
