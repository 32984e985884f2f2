//! The interpreter: runs one core until its clock reaches a limit, it halts, or it faults.
//!
//! The loop works on the pre-decoded table ([`crate::hart`]) with pc, clock and retired
//! count held in locals. Each instruction costs `base_cpi` plus the extras of the
//! [`crate::CycleModel`], added after it executes; memory operations see the clock at issue
//! (before their own cost), which is the time a wall-clock read returns.

use crate::csr::{CsrOp, Counters};
use crate::decode::Op;
use crate::fault::FaultKind;
use crate::hart::Hart;
use crate::memory::TileMem;

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

impl Hart {
    /// Runs until the core's clock is at least `limit`. On a fault, `pc` is the faulting
    /// instruction's and it is not counted as retired.
    pub(crate) fn run(&mut self, mem: &mut TileMem, limit: u64, zicsr: bool) -> Result<Exit, FaultKind> {
        let cm = mem.cycle;
        let cpi = cm.base_cpi.max(1) as u64;
        let taken = cm.taken_branch as u64;
        let Hart { regs, local, code, csrs, fetch_base, pc: pc_ref, time, instret, start_time, .. } = self;
        let base = *fetch_base;
        let start = *start_time;
        let mut pc = *pc_ref;
        let mut t = *time;
        let mut n = *instret;

        macro_rules! x {
            ($r:expr) => {
                regs[($r & 63) as usize]
            };
        }
        macro_rules! jump {
            ($target:expr) => {{
                let target: u32 = $target;
                if target & 3 != 0 {
                    break Err(FaultKind::MisalignedJump { target });
                }
                t += taken;
                target
            }};
        }
        macro_rules! try_ {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(f) => break Err(f),
                }
            };
        }

        let result = loop {
            if t >= limit {
                break Ok(Exit::Limit);
            }
            let Some(&i) = code.get((pc.wrapping_sub(base) >> 2) as usize) else {
                break Err(FaultKind::FetchOutsideCode);
            };
            let a = x!(i.rs1);
            let b = x!(i.rs2);
            let imm = i.imm as u32;
            let ea = a.wrapping_add(imm);
            let mut next = pc.wrapping_add(4);
            match i.op {
                Op::Lui => x!(i.rd) = imm,
                Op::Auipc => x!(i.rd) = pc.wrapping_add(imm),
                Op::Jal => {
                    next = jump!(pc.wrapping_add(imm));
                    x!(i.rd) = pc.wrapping_add(4);
                }
                Op::Jalr => {
                    next = jump!(ea & !1);
                    x!(i.rd) = pc.wrapping_add(4);
                }
                Op::Beq => {
                    if a == b {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Bne => {
                    if a != b {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Blt => {
                    if (a as i32) < (b as i32) {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Bge => {
                    if (a as i32) >= (b as i32) {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Bltu => {
                    if a < b {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Bgeu => {
                    if a >= b {
                        next = jump!(pc.wrapping_add(imm));
                    }
                }
                Op::Lb => {
                    let (v, c) = try_!(mem.load::<1>(local, ea, t));
                    x!(i.rd) = v as u8 as i8 as i32 as u32;
                    t += c as u64;
                }
                Op::Lh => {
                    let (v, c) = try_!(mem.load::<2>(local, ea, t));
                    x!(i.rd) = v as u16 as i16 as i32 as u32;
                    t += c as u64;
                }
                Op::Lw => {
                    let (v, c) = try_!(mem.load::<4>(local, ea, t));
                    x!(i.rd) = v;
                    t += c as u64;
                }
                Op::Lbu => {
                    let (v, c) = try_!(mem.load::<1>(local, ea, t));
                    x!(i.rd) = v;
                    t += c as u64;
                }
                Op::Lhu => {
                    let (v, c) = try_!(mem.load::<2>(local, ea, t));
                    x!(i.rd) = v;
                    t += c as u64;
                }
                Op::Sb | Op::Sh | Op::Sw => {
                    let c = match i.op {
                        Op::Sb => try_!(mem.store::<1>(local, ea, b, t)),
                        Op::Sh => try_!(mem.store::<2>(local, ea, b, t)),
                        _ => try_!(mem.store::<4>(local, ea, b, t)),
                    };
                    t += c as u64;
                    if mem.regs.pending_reset.is_some() {
                        t += cpi;
                        n += 1;
                        pc = next;
                        break Ok(Exit::ResetWrite);
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
                Op::Ecall => {
                    t += cpi;
                    n += 1;
                    break Ok(Exit::Halted(x!(10)));
                }
                Op::Ebreak => break Err(FaultKind::Ebreak),
                Op::Csrrw | Op::Csrrs | Op::Csrrc | Op::Csrrwi | Op::Csrrsi | Op::Csrrci => {
                    let csr = i.imm as u32;
                    if !zicsr {
                        break Err(FaultKind::Csr { csr, reason: "this arch has no Zicsr (Wormhole B0 is RV32IM)" });
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
                    x!(i.rd) = try_!(csrs.access(csr, op, operand, write, counters));
                }
                Op::Illegal => break Err(FaultKind::IllegalInstruction),
                Op::NoFetch => break Err(FaultKind::FetchOutsideCode),
            }
            t += cpi;
            n += 1;
            pc = next;
        };
        *pc_ref = pc;
        *time = t;
        *instret = n;
        result
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
