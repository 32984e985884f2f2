//! Proof that a core loops forever although some of its registers keep changing (a poll
//! loop with an iteration or retry counter, or with a delay loop inside).
//!
//! The core is stepped on the interpreter from its current state `S` (and restored
//! afterwards), refusing any instruction with an effect or an input other than registers
//! and memory: a store, a `.ttinsn`, a CSR access, `ecall`/`ebreak`, or a load that is not
//! of L1 or local RAM (a device or NIU register read moves the coprocessor's clock or the
//! NoC's bookkeeping, which a proof must not; such loops are left to the budget). Over
//! the instructions `P` run so far, the *relevant* registers `R` are the smallest set
//! holding every branch operand, every `jalr` base and every load's address register, and
//! every source of an instruction of `P` that writes a register of `R`. Each time the core
//! is back at `S`'s pc with every register of `R` equal to its value in `S`, the proof
//! holds: from any state that agrees with `S` on pc and `R`, with memory as it is, `P`
//! takes the same branches, loads the same addresses and leaves `R` as it did (by
//! induction over `P`: what an instruction of `P` computes into `R` depends only on `R`
//! and memory), so the core runs `P` again, and again, forever, storing nothing. The other
//! registers (counters that only grow) never reach a branch, an address or a store.
//!
//! A counter that can end the loop (compared with a bound, or feeding a load address) is in
//! `R`: its value differs after each turn, so no proof, however long the loop waits.

use crate::chip::tile::Tile;
use crate::isa::decode::Op;
use crate::isa::exec::Flow;

/// Whether core `i` of `t`, at its current state, provably loops forever without any
/// effect, given that memory does not change: the length of the loop's turn in
/// instructions. Tries at most `steps` instructions; the core is left as it was.
pub(super) fn loops_forever(t: &mut Tile, i: usize, steps: u64) -> Option<u64> {
    let saved = (t.harts[i].core.clone(), t.harts[i].stuck, t.mem.risc);
    let proved = run(t, i, steps);
    let h = &mut t.harts[i];
    (h.core, h.stuck, t.mem.risc) = saved;
    proved
}

fn run(t: &mut Tile, i: usize, steps: u64) -> Option<u64> {
    if t.harts[i].stuck.is_some() {
        return None;
    }
    t.harts[i].core.horizon = u64::MAX;
    t.mem.risc = t.harts[i].risc;
    let start = t.harts[i].core.regs;
    let start_pc = t.harts[i].core.pc;
    let mut ran = vec![false; t.harts[i].code.len()];
    let mut path = Vec::new();
    let mut relevant = 0u32;
    let mut grown = false;
    for n in 1..=steps {
        let h = &t.harts[i];
        let k = (h.core.pc.wrapping_sub(h.fetch_base) >> 2) as usize;
        let &inst = h.code.get(k)?;
        match inst.op {
            Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu => {
                let addr = h.core.regs[inst.rs1 as usize & 31].wrapping_add(inst.imm as u32);
                let l1 = addr < t.mem.l1.size();
                let local =
                    addr.wrapping_sub(riscv_linker::mmio::LOCAL_RAM_BASE) < h.local.len() as u32;
                if !(l1 || local) {
                    return None;
                }
            }
            op if !pure(op) => return None,
            _ => {}
        }
        if !ran[k] {
            ran[k] = true;
            path.push(inst);
            grown = true;
        }
        match t.harts[i].step(&mut t.mem, t.zicsr) {
            Ok(Flow::Next | Flow::Transfer) => {}
            _ => return None,
        }
        let core = &t.harts[i].core;
        if core.pc != start_pc {
            continue;
        }
        if grown {
            relevant = closure(&path);
            grown = false;
        }
        if (1..32).all(|r| relevant & (1 << r) == 0 || core.regs[r] == start[r]) {
            return Some(n);
        }
    }
    None
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
