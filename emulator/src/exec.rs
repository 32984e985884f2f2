//! The interpreter: runs one core until its clock reaches a limit, it halts, or it faults.
//!
//! Each instruction costs `base_cpi` plus the extras of the [`crate::CycleModel`], added
//! after it executes; memory operations see the clock at issue (before their own cost),
//! which is the time a wall-clock read returns.
//!
//! ## When a core stops for the limit
//!
//! The limit is checked when a run starts and after every control transfer (branch, taken
//! or not, `jal`, `jalr`), never in straight-line code. This is the rule the JIT
//! ([`crate::jit`]) implements at block boundaries, so both execute exactly the same
//! instructions in every scheduling window and give bit-identical results. A core may
//! therefore overshoot its window by one straight-line run of code.

use crate::csr::{CsrOp, Counters, Csrs};
use crate::decode::{Inst, Op};
use crate::hart::Core;
use crate::fault::FaultKind;
use crate::hart::Hart;
use crate::memory::TileMem;
use riscv_linker::mmio::INSTRN_BUF_BASE;

/// Why [`Hart::run`] returned without a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The core's clock reached the limit.
    Limit,
    /// `ecall`: the core halted with this exit code (`a0`).
    Halted(u32),
    /// The core stored to `SOFT_RESET_0`; the tile must apply it before going on.
    ResetWrite,
}

/// What one executed instruction did to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Fell through to the next instruction.
    Next,
    /// A branch or jump (taken or not): a limit check point.
    Transfer,
    Halted(u32),
    ResetWrite,
}

impl Hart {
    /// Runs until the core's clock is at least `limit` at a check point (see the module
    /// docs), with the JIT where it is enabled. On a fault, pc is the faulting
    /// instruction's and it is not counted as retired.
    pub(crate) fn run(&mut self, mem: &mut TileMem, limit: u64, zicsr: bool) -> Result<Exit, FaultKind> {
        self.core.limit = limit;
        mem.risc = self.risc;
        #[cfg(all(target_arch = "x86_64", unix))]
        if self.jit.is_some() {
            return crate::jit::run(self, mem, zicsr);
        }
        self.interpret(mem, zicsr, true)
    }

    /// Interprets until the limit (in `core.limit`) is reached at a check point. `check`
    /// says whether the first instruction is at a check point.
    pub(crate) fn interpret(&mut self, mem: &mut TileMem, zicsr: bool, mut check: bool) -> Result<Exit, FaultKind> {
        let limit = self.core.limit;
        let start = self.start_time;
        let Hart { core, local, code, csrs, fetch_base, .. } = self;
        let base = *fetch_base;
        loop {
            if check && core.time >= limit {
                return Ok(Exit::Limit);
            }
            match step(core, code, local, csrs, base, start, mem, zicsr)? {
                Flow::Next => check = false,
                Flow::Transfer => check = true,
                Flow::Halted(code) => return Ok(Exit::Halted(code)),
                Flow::ResetWrite => return Ok(Exit::ResetWrite),
            }
        }
    }

    /// Executes the instruction at pc.
    pub(crate) fn step(&mut self, mem: &mut TileMem, zicsr: bool) -> Result<Flow, FaultKind> {
        let start = self.start_time;
        let Hart { core, local, code, csrs, fetch_base, .. } = self;
        step(core, code, local, csrs, *fetch_base, start, mem, zicsr)
    }
}

/// Executes the instruction at `core.pc` (the parts of a hart passed separately, so that
/// the compiler knows they do not alias and keeps them in registers across a loop).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn step(
    core: &mut Core,
    code: &[Inst],
    local: &mut [u8],
    csrs: &mut Csrs,
    fetch_base: u32,
    start: u64,
    mem: &mut TileMem,
    zicsr: bool,
) -> Result<Flow, FaultKind> {
    {
        let cm = mem.cycle;
        let cpi = cm.base_cpi.max(1) as u64;
        let taken = cm.taken_branch as u64;
        let regs = &mut core.regs;
        let pc = core.pc;
        let mut t = core.time;
        let n = core.instret;
        let Some(&i) = code.get((pc.wrapping_sub(fetch_base) >> 2) as usize) else {
            return Err(FaultKind::FetchOutsideCode);
        };

        macro_rules! x {
            ($r:expr) => {
                regs[($r & 63) as usize]
            };
        }
        macro_rules! jump {
            ($target:expr) => {{
                let target: u32 = $target;
                if target & 3 != 0 {
                    return Err(FaultKind::MisalignedJump { target });
                }
                t += taken;
                target
            }};
        }
        let a = x!(i.rs1);
        let b = x!(i.rs2);
        let imm = i.imm as u32;
        let ea = a.wrapping_add(imm);
        let mut next = pc.wrapping_add(4);
        let mut flow = Flow::Next;
        match i.op {
            Op::Lui => x!(i.rd) = imm,
            Op::Auipc => x!(i.rd) = pc.wrapping_add(imm),
            Op::Jal => {
                next = jump!(pc.wrapping_add(imm));
                x!(i.rd) = pc.wrapping_add(4);
                flow = Flow::Transfer;
            }
            Op::Jalr => {
                next = jump!(ea & !1);
                x!(i.rd) = pc.wrapping_add(4);
                flow = Flow::Transfer;
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
            }
            Op::Lb => {
                let (v, c) = mem.load::<1>(local, ea, t)?;
                x!(i.rd) = v as u8 as i8 as i32 as u32;
                t += c as u64;
            }
            Op::Lh => {
                let (v, c) = mem.load::<2>(local, ea, t)?;
                x!(i.rd) = v as u16 as i16 as i32 as u32;
                t += c as u64;
            }
            Op::Lw => {
                let (v, c) = mem.load::<4>(local, ea, t)?;
                x!(i.rd) = v;
                t += c as u64;
            }
            Op::Lbu => {
                let (v, c) = mem.load::<1>(local, ea, t)?;
                x!(i.rd) = v;
                t += c as u64;
            }
            Op::Lhu => {
                let (v, c) = mem.load::<2>(local, ea, t)?;
                x!(i.rd) = v;
                t += c as u64;
            }
            Op::Sb | Op::Sh | Op::Sw => {
                let c = match i.op {
                    Op::Sb => mem.store::<1>(local, ea, b, t)?,
                    Op::Sh => mem.store::<2>(local, ea, b, t)?,
                    _ => mem.store::<4>(local, ea, b, t)?,
                };
                t += c as u64;
                if mem.regs.pending_reset.is_some() {
                    flow = Flow::ResetWrite;
                }
            }
            Op::Addi => x!(i.rd) = ea,
            Op::Slti => x!(i.rd) = ((a as i32) < i.imm) as u32,
            Op::Sltiu => x!(i.rd) = (a < imm) as u32,
            Op::Xori => x!(i.rd) = a ^ imm,
            Op::Ori => x!(i.rd) = a | imm,
            Op::Andi => x!(i.rd) = a & imm,
            Op::Slli => x!(i.rd) = a << (imm & 31),
            Op::Srli => x!(i.rd) = a >> (imm & 31),
            Op::Srai => x!(i.rd) = ((a as i32) >> (imm & 31)) as u32,
            Op::Add => x!(i.rd) = a.wrapping_add(b),
            Op::Sub => x!(i.rd) = a.wrapping_sub(b),
            Op::Sll => x!(i.rd) = a << (b & 31),
            Op::Slt => x!(i.rd) = ((a as i32) < (b as i32)) as u32,
            Op::Sltu => x!(i.rd) = (a < b) as u32,
            Op::Xor => x!(i.rd) = a ^ b,
            Op::Srl => x!(i.rd) = a >> (b & 31),
            Op::Sra => x!(i.rd) = ((a as i32) >> (b & 31)) as u32,
            Op::Or => x!(i.rd) = a | b,
            Op::And => x!(i.rd) = a & b,
            Op::Mul | Op::Mulh | Op::Mulhsu | Op::Mulhu => {
                x!(i.rd) = mul(i.op, a, b);
                t += cm.mul as u64;
            }
            Op::Div | Op::Divu | Op::Rem | Op::Remu => {
                x!(i.rd) = div(i.op, a, b);
                t += cm.div as u64;
            }
            // Stores reach L1 in program order and code never changes while running
            // (see `memory`), so both fences have nothing left to order.
            Op::Fence | Op::FenceI => {}
            Op::Ecall => flow = Flow::Halted(x!(10)),
            Op::Ebreak => return Err(FaultKind::Ebreak),
            Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                let csr = i.imm as u32;
                if !zicsr {
                    return Err(FaultKind::Csr { csr, reason: "this arch has no Zicsr (Wormhole B0 is RV32IM)" });
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
                let counters = Counters { cycles: t - start, instret: n, wall: mem.regs.wall(t) };
                x!(i.rd) = csrs.access(csr, op, operand, write, counters)?;
            }
            // `.ttinsn`: exactly a `sw` of the Tensix instruction word to INSTRN_BUF_BASE.
            Op::TtInsn => t += mem.store::<4>(local, INSTRN_BUF_BASE, imm, t)? as u64,
            Op::Illegal => return Err(FaultKind::IllegalInstruction),
            Op::NoFetch => return Err(FaultKind::FetchOutsideCode),
        }
        core.time = t + cpi;
        core.instret = n + 1;
        // An ecall halts with pc on the ecall itself.
        if !matches!(flow, Flow::Halted(_)) {
            core.pc = next;
        }
        Ok(flow)
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
