//! Proof that a core loops forever although some of its registers keep changing (a poll
//! loop with an iteration or retry counter, or with a delay loop inside).
//!
//! A copy of the core is stepped on the interpreter from its state `S` at the first quiet
//! look, a share of the instructions at each look of the quiet run ([`Proof::advance`]),
//! refusing any instruction with an effect or an input other than registers, memory and
//! the registers the chip model says are frozen ([`super::frozen`]): a store, a
//! `.ttinsn`, a CSR access, `ecall`/`ebreak`, a load with an effect (a FIFO pop) or of a
//! register that can change without a store (a clock, or an NIU register while a transfer
//! is on its way). A frozen register is read without effect ([`super::frozen::peek`]):
//! neither the coprocessor's clock nor the NoC's bookkeeping moves. Over the instructions
//! `P` run so far, the *relevant* registers `R` are the smallest set holding every branch
//! operand, every `jalr` base and every load's address register, and every source of an
//! instruction of `P` that writes a register of `R`. Each time the copy is back at `S`'s
//! pc with every register of `R` equal to its value in `S`, the proof holds: from any
//! state that agrees with `S` on pc and `R`, with memory as it is, `P` takes the same
//! branches, loads the same addresses and leaves `R` as it did (by induction over `P`:
//! what an instruction of `P` computes into `R` depends only on `R` and memory), so the
//! core runs `P` again, and again, forever, storing nothing. The other registers (counters
//! that only grow) never reach a branch, an address or a store.
//!
//! A counter that can end the loop (compared with a bound, or feeding a load address) is in
//! `R`: its value differs after each turn, so no proof, however long the loop waits.
//!
//! Memory during a quiet run does not change, so a proof carries over from look to look
//! and needs no bound on the length of a turn: what it holds is the copy of the core, the
//! instructions of `P` (at most one per instruction of the code window) and a mark per
//! instruction of the window.

use super::frozen;
use crate::chip::tile::Tile;
use crate::isa::decode::{Inst, Op};
use crate::isa::exec::Flow;
use crate::isa::hart::Core;

/// A proof in progress for one core.
pub(super) struct Proof {
    /// `S`: where the proof started.
    start_pc: u32,
    start: [u32; 64],
    /// The copy of the core stepped from `S`.
    core: Core,
    /// Per instruction of the code window: it is in `P`.
    ran: Vec<bool>,
    /// `P`, in the order first run.
    path: Vec<Inst>,
    /// `R` of `path` (bit `r` for `x{r}`), recomputed when `path` grew.
    relevant: u32,
    grown: bool,
    /// Instructions stepped so far.
    steps: u64,
}

/// Where a proof stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not yet decided: step on.
    Open,
    /// The core loops forever, with turns of this many instructions.
    Proved(u64),
    /// The core did something a proof cannot follow.
    Refused,
}

impl Proof {
    /// A proof starting at core `i`'s current state; `None` for a core waiting on a FIFO
    /// (its state repeats: the look's other rule catches it).
    pub fn new(t: &Tile, i: usize) -> Option<Box<Proof>> {
        let h = &t.harts[i];
        h.stuck.is_none().then(|| {
            Box::new(Proof {
                start_pc: h.core.pc,
                start: h.core.regs,
                core: h.core.clone(),
                ran: vec![false; h.code.len()],
                path: Vec::new(),
                relevant: 0,
                grown: false,
                steps: 0,
            })
        })
    }

    /// Steps the copy at most `n` more instructions (the core itself is left as it is).
    pub fn advance(&mut self, t: &mut Tile, i: usize, n: u64) -> Verdict {
        let Proof {
            start_pc,
            start,
            core,
            ran,
            path,
            relevant,
            grown,
            steps,
        } = self;
        on_copy(t, i, core, |t| {
            for _ in 0..n {
                let Some(s) = step_pure(t, i) else {
                    return Verdict::Refused;
                };
                *steps += 1;
                if !ran[s.index] {
                    ran[s.index] = true;
                    path.push(s.inst);
                    *grown = true;
                }
                let c = &t.harts[i].core;
                if c.pc != *start_pc {
                    continue;
                }
                if *grown {
                    *relevant = closure(path);
                    *grown = false;
                }
                if (1..32).all(|r| *relevant & (1 << r) == 0 || c.regs[r] == start[r]) {
                    return Verdict::Proved(*steps);
                }
            }
            Verdict::Open
        })
    }
}

/// Runs `f` with `core` in place of core `i`'s state, and swaps them back after: the
/// core's own state, its FIFO wait and the tile's current RISC are as they were.
pub(super) fn on_copy<R>(
    t: &mut Tile,
    i: usize,
    core: &mut Core,
    f: impl FnOnce(&mut Tile) -> R,
) -> R {
    let saved = (t.harts[i].stuck, t.mem.risc);
    std::mem::swap(&mut t.harts[i].core, core);
    t.harts[i].stuck = None;
    t.harts[i].core.horizon = u64::MAX;
    t.mem.risc = t.harts[i].risc;
    let r = f(t);
    std::mem::swap(&mut t.harts[i].core, core);
    (t.harts[i].stuck, t.mem.risc) = saved;
    r
}

/// One instruction stepped by [`step_pure`].
pub(super) struct Stepped {
    /// Its pc, its index in the code window, the instruction.
    pub pc: u32,
    pub index: usize,
    pub inst: Inst,
    /// A load's address and the value it read.
    pub load: Option<(u32, u32)>,
}

/// Steps core `i` of `t` (whose tile's current RISC it must be) by one instruction, when
/// that instruction has no effect beyond the core's registers and reads only registers,
/// L1, local RAM and frozen registers; `None` (nothing done) otherwise.
pub(super) fn step_pure(t: &mut Tile, i: usize) -> Option<Stepped> {
    let h = &t.harts[i];
    let pc = h.core.pc;
    let index = (pc.wrapping_sub(h.fetch_base) >> 2) as usize;
    let &inst = h.code.get(index)?;
    let size = match inst.op {
        Op::Lb | Op::Lbu => 1,
        Op::Lh | Op::Lhu => 2,
        Op::Lw => 4,
        op if pure(op) => 0,
        _ => return None,
    };
    let addr = h.core.regs[inst.rs1 as usize & 31].wrapping_add(inst.imm as u32);
    let plain = addr < t.mem.l1.size()
        || addr.wrapping_sub(riscv_linker::mmio::LOCAL_RAM_BASE) < h.local.len() as u32;
    if size != 0 && !plain {
        // A device or NIU register: read without effect when frozen.
        if !addr.is_multiple_of(size) {
            return None;
        }
        let (risc, time) = (h.risc, h.core.time);
        let v = frozen::peek(t, addr, size, risc, time)?;
        let v = match inst.op {
            Op::Lb => v as u8 as i8 as i32 as u32,
            Op::Lh => v as u16 as i16 as i32 as u32,
            _ => v,
        };
        let core = &mut t.harts[i].core;
        core.regs[inst.rd as usize & 63] = v;
        core.pc = pc.wrapping_add(4);
        core.instret += 1;
        core.time += 1;
        return Some(Stepped {
            pc,
            index,
            inst,
            load: Some((addr, v)),
        });
    }
    match t.harts[i].step(&mut t.mem, t.zicsr) {
        Ok(Flow::Next | Flow::Transfer) => {}
        _ => return None,
    }
    let load = (size != 0).then(|| (addr, t.harts[i].core.regs[inst.rd as usize & 63]));
    Some(Stepped {
        pc,
        index,
        inst,
        load,
    })
}

/// Operations without effects or inputs beyond registers (loads are checked apart).
fn pure(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        Lui | Auipc
            | Jal
            | Jalr
            | Beq
            | Bne
            | Blt
            | Bge
            | Bltu
            | Bgeu
            | Addi
            | Slti
            | Sltiu
            | Xori
            | Ori
            | Andi
            | Slli
            | Srli
            | Srai
            | Add
            | Sub
            | Sll
            | Slt
            | Sltu
            | Xor
            | Srl
            | Sra
            | Or
            | And
            | Mul
            | Mulh
            | Mulhsu
            | Mulhu
            | Div
            | Divu
            | Rem
            | Remu
            | Fence
    )
}

/// The relevant registers of `path` (bit `r` for `x{r}`; unused source fields are `x0`).
fn closure(path: &[crate::isa::decode::Inst]) -> u32 {
    let bit = |r: u8| 1u32 << (r & 31);
    let mut set = 0u32;
    for i in path {
        match i.op {
            Op::Beq | Op::Bne | Op::Blt | Op::Bge | Op::Bltu | Op::Bgeu => {
                set |= bit(i.rs1) | bit(i.rs2)
            }
            Op::Jalr | Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => set |= bit(i.rs1),
            _ => {}
        }
    }
    loop {
        let before = set;
        for i in path {
            if i.rd != 0 && set & bit(i.rd) != 0 {
                set |= bit(i.rs1) | bit(i.rs2);
            }
        }
        if set == before {
            return set & !1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode::Inst;

    fn inst(op: Op, rd: u8, rs1: u8, rs2: u8) -> Inst {
        Inst {
            op,
            rd,
            rs1,
            rs2,
            imm: 0,
        }
    }

    #[test]
    fn stall_a_counter_that_reaches_only_itself_is_not_relevant() {
        // x6 = *x5; x7 += 1; if x6 == 0 loop
        let p = [
            inst(Op::Lw, 6, 5, 0),
            inst(Op::Addi, 7, 7, 0),
            inst(Op::Beq, 0, 6, 0),
        ];
        assert_eq!(closure(&p), 1 << 5 | 1 << 6);
    }

    #[test]
    fn stall_a_counter_feeding_a_branch_or_an_address_is_relevant() {
        let bound = [inst(Op::Addi, 7, 7, 0), inst(Op::Bne, 0, 7, 8)];
        assert_eq!(closure(&bound), 1 << 7 | 1 << 8);
        // x9 = x7 * 4; x10 = x5 + x9; x6 = *x10
        let address = [
            inst(Op::Addi, 7, 7, 0),
            inst(Op::Slli, 9, 7, 0),
            inst(Op::Add, 10, 5, 9),
            inst(Op::Lw, 6, 10, 0),
        ];
        assert_eq!(closure(&address), 1 << 5 | 1 << 7 | 1 << 9 | 1 << 10);
    }
}
