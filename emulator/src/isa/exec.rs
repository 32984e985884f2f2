//! The interpreter: runs one core until its clock reaches a limit, it halts, or it faults.
//!
//! Each instruction is timed by the pipeline model ([`crate::isa::pipeline`]); memory
//! operations see the clock at their issue cycle, which is the time a wall-clock read
//! returns and the cycle at which a store becomes visible to the other cores.
//!
//! ## When a core stops for the limit
//!
//! The limit is checked when a run starts and after every control transfer (branch, taken
//! or not, `jal`, `jalr`), never in straight-line code. This is the rule the JIT
//! ([`crate::jit`]) implements at block boundaries, so both execute exactly the same
//! instructions in every scheduling window and give bit-identical results. A core may
//! therefore overshoot its window by one straight-line run of code.

use crate::bus::{Marks, TileBus};
use crate::error::FaultKind;
use crate::isa::csr::{Counters, CsrOp, Csrs};
use crate::isa::decode::{has_zba_zbb, Inst, Op};
use crate::isa::hart::Core;
use crate::isa::hart::Hart;
use crate::isa::lines::LineTable;
use crate::isa::pipeline::{self, Region};
use riscv_linker::mmio::{INSTRN_BUF_BASE, WALL_CLOCK_L};
use std::ops::ControlFlow;

/// Why [`Hart::run`] returned without a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The core's clock reached the limit.
    Limit,
    /// `ecall`: the core halted with this exit code (`a0`).
    Halted(u32),
    /// The core stored to `SOFT_RESET_0`; the tile must apply it before going on.
    ResetWrite,
    /// The core reached an access at a cycle past its horizon (see [`crate::chip::tile`]).
    Yield,
    /// The access at pc waits on a FIFO (an empty mailbox or PCBuf, a full one): not made;
    /// the tile retries it once another core has moved on.
    Blocked { addr: u32, write: bool },
}

/// What one executed instruction did to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Fell through to the next instruction.
    Next,
    /// A branch or jump (taken or not): a limit check point.
    Transfer,
    /// The instruction at pc is an access another core must precede (`core.time` is its
    /// issue cycle, past the core's horizon): not executed; the tile runs the others first.
    Yield,
    /// The access at pc waits on a FIFO (`core.time` is its issue cycle): not executed.
    Blocked {
        addr: u32,
        write: bool,
    },
    Halted(u32),
    ResetWrite,
}

impl Flow {
    /// Whether a run goes on after this instruction (and whether the next one is a limit
    /// check point) or ends with an [`Exit`]: one mapping for the interpreter and the JIT.
    #[inline(always)]
    pub(crate) fn go_on(self) -> ControlFlow<Exit, bool> {
        match self {
            Flow::Next => ControlFlow::Continue(false),
            Flow::Transfer => ControlFlow::Continue(true),
            Flow::Halted(code) => ControlFlow::Break(Exit::Halted(code)),
            Flow::ResetWrite => ControlFlow::Break(Exit::ResetWrite),
            Flow::Yield => ControlFlow::Break(Exit::Yield),
            Flow::Blocked { addr, write } => ControlFlow::Break(Exit::Blocked { addr, write }),
        }
    }
}

impl Hart {
    /// Interprets until the core's clock is at least `limit` at a check point (see the
    /// module docs). `check` says whether the first instruction is at a check point. On a
    /// fault, pc is the faulting instruction's and it is not counted as retired.
    pub(crate) fn interpret<B: TileBus>(
        &mut self,
        mem: &mut B,
        limit: u64,
        zicsr: bool,
        mut check: bool,
    ) -> Result<Exit, FaultKind> {
        self.core.limit = limit;
        if self.lines.is_some() || mem.sampled() {
            return self.interpret_lines(mem, zicsr, check);
        }
        let limit = self.core.limit;
        let start = self.start_time;
        let zb = has_zba_zbb(self.map.arch);
        let Hart {
            core,
            local,
            code,
            csrs,
            fetch_base,
            ..
        } = self;
        let base = *fetch_base;
        let mut marks = Marks::default();
        loop {
            if check && core.time >= limit {
                return Ok(Exit::Limit);
            }
            match step::<B, false>(
                core, code, local, csrs, base, start, mem, zicsr, zb, &mut marks,
            )?
            .go_on()
            {
                ControlFlow::Continue(at_check) => check = at_check,
                ControlFlow::Break(exit) => return Ok(exit),
            }
        }
    }

    /// [`Hart::interpret`] in lines mode: charges every cycle the clock advances to the
    /// instruction that advanced it, by cause ([`crate::isa::lines`]), and hands the span to the
    /// debug daisychain when it samples this core ([`crate::devices::daisychain`]).
    fn interpret_lines<B: TileBus>(
        &mut self,
        mem: &mut B,
        zicsr: bool,
        mut check: bool,
    ) -> Result<Exit, FaultKind> {
        let limit = self.core.limit;
        let sampled = mem.sampled();
        loop {
            if check && self.core.time >= limit {
                return Ok(Exit::Limit);
            }
            let (r, pc, from, marks) = self.step_marked(mem, zicsr, |_| {});
            if sampled {
                mem.sample(pc, from, self.core.time, &marks)?;
            }
            match r?.go_on() {
                ControlFlow::Continue(at_check) => check = at_check,
                ControlFlow::Break(exit) => return Ok(exit),
            }
        }
    }

    /// Charges `cycles` the tile held this core on a FIFO or on the coprocessor to the
    /// blocked instruction under cause index `cause` (lines mode; nothing otherwise).
    pub(crate) fn charge_hold(&mut self, cause: usize, cycles: u64) {
        if let Some(t) = self.lines.as_deref_mut() {
            t.add(self.core.pc, cause, cycles);
        }
    }

    /// [`Hart::step`] in lines mode: also charges the instruction ([`crate::isa::lines`]);
    /// `pending` adds what else is owed to the table (the JIT's counts) before a clock read
    /// cuts it.
    pub(crate) fn step_lines<B: TileBus>(
        &mut self,
        mem: &mut B,
        zicsr: bool,
        pending: impl FnOnce(&mut LineTable),
    ) -> Result<Flow, FaultKind> {
        self.step_marked(mem, zicsr, pending).0
    }

    /// Executes the instruction at pc with its pipeline marks, and charges it to the line
    /// table if there is one (`pending` first, as [`Hart::step_lines`]): the outcome, the
    /// pc and cycle it started at, and the marks (for the daisychain's span).
    fn step_marked<B: TileBus>(
        &mut self,
        mem: &mut B,
        zicsr: bool,
        pending: impl FnOnce(&mut LineTable),
    ) -> (Result<Flow, FaultKind>, u32, u64, Marks) {
        let start = self.start_time;
        let zb = has_zba_zbb(self.map.arch);
        let Hart {
            core,
            local,
            code,
            csrs,
            fetch_base,
            lines,
            ..
        } = self;
        let (pc, from) = (core.pc, core.time);
        let mut marks = Marks::default();
        let r = step::<B, true>(
            core,
            code,
            local,
            csrs,
            *fetch_base,
            start,
            mem,
            zicsr,
            zb,
            &mut marks,
        );
        if let Some(t) = lines.as_deref_mut() {
            charge(t, &r, pc, from, core.time, &marks, pending);
        }
        (r, pc, from, marks)
    }

    /// Executes the instruction at pc.
    pub(crate) fn step<B: TileBus>(&mut self, mem: &mut B, zicsr: bool) -> Result<Flow, FaultKind> {
        let start = self.start_time;
        let zb = has_zba_zbb(self.map.arch);
        let Hart {
            core,
            local,
            code,
            csrs,
            fetch_base,
            ..
        } = self;
        step::<B, false>(
            core,
            code,
            local,
            csrs,
            *fetch_base,
            start,
            mem,
            zicsr,
            zb,
            &mut Marks::default(),
        )
    }
}

/// Charges the instruction at `pc` that moved the clock `from`..`to` with result `r`: a
/// read of the wall clock (what zones are timed with) opens a segment, after `pending`.
#[inline(always)]
fn charge(
    t: &mut LineTable,
    r: &Result<Flow, FaultKind>,
    pc: u32,
    from: u64,
    to: u64,
    marks: &Marks,
    pending: impl FnOnce(&mut LineTable),
) {
    match (r, marks.access) {
        (Ok(Flow::Next), Some((addr, false))) if addr & !3 == WALL_CLOCK_L => {
            pending(t);
            t.charge_clock_read(pc, from, to, marks.issued, marks)
        }
        _ => t.charge(pc, from, to, marks),
    }
}

/// Executes the instruction at `core.pc` (the parts of a hart passed separately, so that
/// the compiler knows they do not alias and keeps them in registers across a loop), timing
/// it with [`crate::isa::pipeline`]. With `LINES`, notes the issue cycle after each pipeline
/// step in `marks` ([`crate::isa::lines`]); without, the notes compile away. `zicsr` and
/// `zb` say whether the arch has Zicsr and Zba + Zbb ([`has_zba_zbb`]): without Zba + Zbb,
/// their (pre-decoded) instructions fault as [`Op::Illegal`] does.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn step<B: TileBus, const LINES: bool>(
    core: &mut Core,
    code: &[Inst],
    local: &mut [u8],
    csrs: &mut Csrs,
    fetch_base: u32,
    start: u64,
    mem: &mut B,
    zicsr: bool,
    zb: bool,
    marks: &mut Marks,
) -> Result<Flow, FaultKind> {
    {
        let cfg = *mem.timing();
        let pc = core.pc;
        let n = core.instret;
        let Some(&i) = code.get((pc.wrapping_sub(fetch_base) >> 2) as usize) else {
            return Err(FaultKind::FetchOutsideCode);
        };
        let p = &mut core.pipe;
        let mut t = core.time + pipeline::fetch(p, pc, core.icache_sets, cfg.icache_miss);
        if LINES {
            marks.fetched = t;
        }
        t = pipeline::need(p, pipeline::need(p, t, i.rs1), i.rs2);
        if LINES {
            marks.operands = t;
        }
        let regs = &mut core.regs;

        macro_rules! x {
            ($r:expr) => {
                regs[($r & 63) as usize]
            };
        }
        macro_rules! jump {
            ($target:expr) => {{
                let target: u32 = $target;
                if target & 3 != 0 {
                    core.time = t;
                    return Err(FaultKind::MisalignedJump { target });
                }
                target
            }};
        }
        // A load or store: waits for the store queue (and a load slot), and yields to the
        // tile if another core must act first (see `tile`): the access is not made.
        macro_rules! access {
            ($region:expr, $is_load:expr) => {{
                let region = $region;
                t = pipeline::queue(p, t);
                if $is_load && region != Region::Local {
                    t = pipeline::slot(p, t);
                }
                if LINES {
                    marks.issued = t;
                }
                if region != Region::Local && t > core.horizon {
                    core.time = t;
                    return Ok(Flow::Yield);
                }
            }};
        }
        let a = x!(i.rs1);
        let b = x!(i.rs2);
        let imm = i.imm as u32;
        let ea = a.wrapping_add(imm);
        let mut next = pc.wrapping_add(4);
        let mut flow = Flow::Next;
        let local_len = local.len() as u32;
        let next_t;
        match i.op {
            Op::Lui => {
                x!(i.rd) = imm;
                next_t = pipeline::alu(p, t, i.rd);
            }
            Op::Auipc => {
                x!(i.rd) = pc.wrapping_add(imm);
                next_t = pipeline::alu(p, t, i.rd);
            }
            Op::Jal => {
                next = jump!(pc.wrapping_add(imm));
                x!(i.rd) = pc.wrapping_add(4);
                flow = Flow::Transfer;
                next_t = pipeline::alu(p, t, i.rd);
            }
            Op::Jalr => {
                next = jump!(ea & !1);
                x!(i.rd) = pc.wrapping_add(4);
                flow = Flow::Transfer;
                next_t = pipeline::alu(p, t, i.rd);
            }
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                let cond = match i.op {
                    Op::Beq => a == b,
                    Op::Bne => a != b,
                    Op::Blt => (a as i32) < (b as i32),
                    Op::Bge => (a as i32) >= (b as i32),
                    Op::Bltu => a < b,
                    _ => a >= b,
                };
                if cond {
                    next = jump!(pc.wrapping_add(imm));
                }
                flow = Flow::Transfer;
                if LINES && pipeline::mispredicted(i.imm, cond) {
                    marks.mispredict = cfg.mispredict as u64;
                }
                next_t = pipeline::branch(&cfg, t, i.imm, cond);
            }
            Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => {
                let size = match i.op {
                    Op::Lb | Op::Lbu => 1,
                    Op::Lh | Op::Lhu => 2,
                    _ => 4,
                };
                let addr = mem.aligned(ea, size, false)?;
                let region = mem.region(addr, local_len);
                if LINES {
                    marks.access = Some((addr, false));
                }
                access!(region, true);
                let v = match size {
                    1 => mem.load::<1>(local, addr, t),
                    2 => mem.load::<2>(local, addr, t),
                    _ => mem.load::<4>(local, addr, t),
                };
                let v = match v {
                    Err(FaultKind::Blocked { addr, write }) => {
                        core.time = t;
                        return Ok(Flow::Blocked { addr, write });
                    }
                    v => v?,
                };
                if !matches!(region, Region::L1 | Region::Local) && !mem.read_is_timeless(addr) {
                    core.observed += 1;
                }
                x!(i.rd) = match i.op {
                    Op::Lb => v as u8 as i8 as i32 as u32,
                    Op::Lh => v as u16 as i16 as i32 as u32,
                    _ => v,
                };
                next_t = pipeline::load(p, &cfg, t, i.rd, region, addr);
            }
            Op::Sb | Op::Sh | Op::Sw => {
                let size = match i.op {
                    Op::Sb => 1,
                    Op::Sh => 2,
                    _ => 4,
                };
                let addr = mem.aligned(ea, size, true)?;
                let region = mem.region(addr, local_len);
                if LINES {
                    marks.access = Some((addr, true));
                }
                access!(region, false);
                let stored = match size {
                    1 => mem.store::<1>(local, addr, b, t),
                    2 => mem.store::<2>(local, addr, b, t),
                    _ => mem.store::<4>(local, addr, b, t),
                };
                if let Err(FaultKind::Blocked { addr, write }) = stored {
                    core.time = t;
                    return Ok(Flow::Blocked { addr, write });
                }
                stored?;
                if mem.reset_pending() {
                    flow = Flow::ResetWrite;
                }
                next_t = pipeline::store(p, &cfg, t, region);
            }
            Op::Addi
            | Op::Slti
            | Op::Sltiu
            | Op::Xori
            | Op::Ori
            | Op::Andi
            | Op::Slli
            | Op::Srli
            | Op::Srai
            | Op::Add
            | Op::Sub
            | Op::Sll
            | Op::Slt
            | Op::Sltu
            | Op::Xor
            | Op::Srl
            | Op::Sra
            | Op::Or
            | Op::And => {
                x!(i.rd) = alu(i.op, a, b, i.imm);
                next_t = pipeline::alu(p, t, i.rd);
            }
            // Zba and Zbb: single-cycle Integer Unit operations, timed as the ALU's (the
            // ISA documentation gives them no timing of their own).
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
            | Op::Rev8 => {
                if !zb {
                    // Not an instruction of this arch: the fault of any illegal word.
                    return Err(FaultKind::IllegalInstruction);
                }
                x!(i.rd) = zba_zbb(i.op, a, b, i.imm);
                next_t = pipeline::alu(p, t, i.rd);
            }
            Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => {
                x!(i.rd) = mul(i.op, a, b);
                next_t = pipeline::mul(p, &cfg, t, i.rd);
            }
            Op::Div | Op::Divu | Op::Rem | Op::Remu => {
                x!(i.rd) = div(i.op, a, b);
                next_t = pipeline::div(p, t, i.rd, pipeline::div_cycles(&cfg, i.op, a, b));
            }
            // Stores reach L1 in program order and code never changes while running
            // (see `memory`), so both fences have nothing left to order (on Wormhole
            // `fence` is a nop, README.md "Instruction set").
            Op::Fence | Op::FenceI => next_t = t + 1,
            Op::Ecall => {
                flow = Flow::Halted(x!(10));
                next_t = t + 1;
            }
            Op::Ebreak => {
                core.time = t;
                return Err(FaultKind::Ebreak);
            }
            Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                let csr = i.imm as u32;
                if !zicsr {
                    return Err(FaultKind::Csr {
                        csr,
                        reason: "this arch has no Zicsr (Wormhole B0 is RV32IM)",
                    });
                }
                if cfg.csr_serialises {
                    t = p.settled(t);
                    if LINES {
                        marks.issued = t;
                    }
                }
                let (op, operand) = match i.op {
                    Op::Csrrw => (CsrOp::Write, a),
                    Op::Csrrs => (CsrOp::Set, a),
                    Op::Csrrc => (CsrOp::Clear, a),
                    Op::Csrrwi => (CsrOp::Write, i.rs1 as u32),
                    Op::Csrrsi => (CsrOp::Set, i.rs1 as u32),
                    _ => (CsrOp::Clear, i.rs1 as u32),
                };
                let write = op == CsrOp::Write || i.rs1 != 0;
                let counters = Counters {
                    cycles: t - start,
                    instret: n,
                    wall: mem.wall(t),
                };
                x!(i.rd) = csrs.access(csr, op, operand, write, counters)?;
                core.observed += 1;
                next_t = pipeline::alu(p, t, i.rd);
            }
            // `.ttinsn`: exactly a `sw` of the Tensix instruction word to INSTRN_BUF_BASE.
            Op::TtInsn => {
                if LINES {
                    marks.access = Some((INSTRN_BUF_BASE, true));
                }
                access!(Region::Mmio, false);
                match mem.store::<4>(local, INSTRN_BUF_BASE, imm, t) {
                    Err(FaultKind::Blocked { addr, write }) => {
                        core.time = t;
                        return Ok(Flow::Blocked { addr, write });
                    }
                    r => r?,
                }
                next_t = pipeline::store(p, &cfg, t, Region::Mmio);
            }
            Op::Illegal => return Err(FaultKind::IllegalInstruction),
            Op::NoFetch => return Err(FaultKind::FetchOutsideCode),
        }
        core.time = next_t;
        core.instret = n + 1;
        // An ecall halts with pc on the ecall itself.
        if !matches!(flow, Flow::Halted(_)) {
            core.pc = next;
        }
        Ok(flow)
    }
}

/// Register-register and register-immediate arithmetic (`imm` is the sign-extended
/// immediate; shifts use its low five bits).
#[inline(always)]
fn alu(op: Op, a: u32, b: u32, imm: i32) -> u32 {
    let ea = a.wrapping_add(imm as u32);
    let imm_s = imm;
    let imm = imm as u32;
    match op {
        Op::Addi => ea,
        Op::Slti => ((a as i32) < imm_s) as u32,
        Op::Sltiu => (a < imm) as u32,
        Op::Xori => a ^ imm,
        Op::Ori => a | imm,
        Op::Andi => a & imm,
        Op::Slli => a << (imm & 31),
        Op::Srli => a >> (imm & 31),
        Op::Srai => ((a as i32) >> (imm & 31)) as u32,
        Op::Add => a.wrapping_add(b),
        Op::Sub => a.wrapping_sub(b),
        Op::Sll => a << (b & 31),
        Op::Slt => ((a as i32) < (b as i32)) as u32,
        Op::Sltu => (a < b) as u32,
        Op::Xor => a ^ b,
        Op::Srl => a >> (b & 31),
        Op::Sra => ((a as i32) >> (b & 31)) as u32,
        Op::Or => a | b,
        Op::And => a & b,
        // The one caller's arm lists exactly the operations above.
        _ => {
            debug_assert!(false, "not an ALU operation: {op:?}");
            a
        }
    }
}

/// Zba and Zbb on RV32 (`b` is `rs2`'s value, `imm` `rori`'s shift amount), as the
/// ratified bit-manipulation spec (v1.0.0) defines them.
#[inline]
fn zba_zbb(op: Op, a: u32, b: u32, imm: i32) -> u32 {
    match op {
        Op::Sh1add => (a << 1).wrapping_add(b),
        Op::Sh2add => (a << 2).wrapping_add(b),
        Op::Sh3add => (a << 3).wrapping_add(b),
        Op::Andn => a & !b,
        Op::Orn => a | !b,
        Op::Xnor => !(a ^ b),
        Op::Clz => a.leading_zeros(),
        Op::Ctz => a.trailing_zeros(),
        Op::Cpop => a.count_ones(),
        Op::Max => (a as i32).max(b as i32) as u32,
        Op::Maxu => a.max(b),
        Op::Min => (a as i32).min(b as i32) as u32,
        Op::Minu => a.min(b),
        Op::SextB => a as u8 as i8 as i32 as u32,
        Op::SextH => a as u16 as i16 as i32 as u32,
        Op::ZextH => a & 0xFFFF,
        Op::Rol => a.rotate_left(b & 31),
        Op::Ror => a.rotate_right(b & 31),
        Op::Rori => a.rotate_right(imm as u32 & 31),
        // Each byte: all ones if any of its bits is set, else zero.
        Op::OrcB => (0..4).fold(0, |r, k| {
            let byte = 0xFFu32 << (8 * k);
            if a & byte != 0 {
                r | byte
            } else {
                r
            }
        }),
        Op::Rev8 => a.swap_bytes(),
        // The one caller's arm lists exactly the operations above.
        _ => {
            debug_assert!(false, "not a Zba/Zbb operation: {op:?}");
            a
        }
    }
}

#[inline]
fn mul(op: Op, a: u32, b: u32) -> u32 {
    match op {
        Op::Mul => a.wrapping_mul(b),
        Op::Mulh => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
        Op::Mulhsu => ((a as i32 as i64 * b as i64) >> 32) as u32,
        _ => ((a as u64 * b as u64) >> 32) as u32,
    }
}

/// Division as the spec defines it: no traps; x/0 = all ones, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0.
#[inline]
fn div(op: Op, a: u32, b: u32) -> u32 {
    match op {
        Op::Div if b == 0 => u32::MAX,
        Op::Div => (a as i32).wrapping_div(b as i32) as u32,
        Op::Divu if b == 0 => u32::MAX,
        Op::Divu => a / b,
        Op::Rem if b == 0 => a,
        Op::Rem => (a as i32).wrapping_rem(b as i32) as u32,
        _ if b == 0 => a,
        _ => a % b,
    }
}
