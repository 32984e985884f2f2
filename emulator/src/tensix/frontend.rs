//! One Tensix thread's frontend (`README.md` of the coprocessor, `MOPExpander.md`,
//! `REPLAY.md`, the frontend diagram): a FIFO from the RISC (32 entries for T0, 16 for T1
//! and T2), the MOP Expander, a FIFO of 8 (RISCV B's pushes and debug-bus pushes join here),
//! the Replay Expander with its 32-entry buffer, a FIFO of 2, then the Wait Gate (in
//! [`super`], which owns the backend units it dispatches to).
//!
//! Each stage moves at most one instruction per cycle, and a stage only moves an
//! instruction into a FIFO with room (back-pressure). The stages of one cycle run from the
//! back of the pipeline to the front, so a full pipeline advances by one everywhere.

use super::isa::{field, op, opcode};
use riscv_linker::Risc;
use std::collections::VecDeque;

/// An instruction in flight through the frontend, and the core that pushed it (or pushed
/// the `MOP`/`REPLAY` it came out of).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Insn {
    pub word: u32,
    pub from: Risc,
}

/// The Replay Expander's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Replay {
    Idle,
    /// Recording `left` more instructions at `index` (also passing them on if `exec`).
    Loading {
        index: usize,
        left: u32,
        exec: bool,
    },
    /// Playing `left` more instructions back from `index`.
    Playing {
        index: usize,
        left: u32,
        from: Risc,
    },
}

/// A latched `STALLWAIT` or `SEMWAIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Latch {
    pub semwait: bool,
    pub condition: u16,
    pub sem_mask: u8,
    pub block: u16,
    /// The cycle the conditions were first all met; the block lifts the cycle after.
    pub met_at: Option<u64>,
}

/// Capacities of the three FIFOs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FifoDepths {
    /// Entries of the FIFO the RISC pushes into.
    pub from_risc: usize,
    /// Entries between the MOP expander and the replay expander.
    pub before_replay: usize,
    /// Entries in front of the wait gate.
    pub before_gate: usize,
}

#[derive(Debug)]
pub(crate) struct Frontend {
    pub depths: FifoDepths,
    pub fifo1: VecDeque<Insn>,
    mask_hi: u32,
    /// The rest of the current MOP expansion.
    expansion: VecDeque<u32>,
    expanding_from: Risc,
    /// The `MOP` being expanded (for the debug daisychain).
    expanding_mop: Option<u32>,
    /// One-cycle penalty after an expansion unless the next instruction is a `MOP`.
    penalty: bool,
    pub fifo2: VecDeque<Insn>,
    replay_buf: [u32; 32],
    replay: Replay,
    pub fifo3: VecDeque<Insn>,
    pub latch: Option<Latch>,
    /// Instructions emitted by the MOP expander (counts expansions' output only).
    pub mop_emitted: u64,
}

impl Frontend {
    pub fn new(depths: FifoDepths) -> Frontend {
        Frontend {
            depths,
            fifo1: VecDeque::new(),
            mask_hi: 0,
            expansion: VecDeque::new(),
            expanding_from: Risc::Brisc,
            expanding_mop: None,
            penalty: false,
            fifo2: VecDeque::new(),
            replay_buf: [0; 32],
            replay: Replay::Idle,
            fifo3: VecDeque::new(),
            latch: None,
            mop_emitted: 0,
        }
    }

    /// Whether a `MOP` is queued for or being expanded by the MOP Expander
    /// (TTSync's `MOPExpanderDoneCheck` waits while this holds).
    pub fn mop_busy(&self) -> bool {
        !self.expansion.is_empty() || self.fifo1.iter().any(|i| opcode(i.word) == op::MOP)
    }

    /// Whether the MOP Expander takes nothing from the RISC's FIFO because of a `MOP`: it is
    /// emitting an expansion or in the idle cycle after one.
    pub fn mop_expanding(&self) -> bool {
        !self.expansion.is_empty() || self.penalty
    }

    /// Whether the Replay Expander is playing back (it takes nothing in meanwhile).
    pub fn replay_playing(&self) -> bool {
        matches!(self.replay, Replay::Playing { .. })
    }

    /// The template (0, 1) of the `MOP` being expanded.
    pub fn expanding_template(&self) -> Option<u8> {
        self.expanding_mop.map(|w| field(w, 23, 1) as u8)
    }

    /// The `MOP` being expanded, else the instruction at the front of the FIFO before the
    /// MOP Expander (what the debug daisychain's group D shows).
    pub fn mop_word(&self) -> Option<u32> {
        self.expanding_mop
            .or_else(|| self.fifo1.front().map(|i| i.word))
    }

    /// Instructions queued anywhere in the frontend (expansions not yet emitted excluded).
    pub fn queued(&self) -> usize {
        self.fifo1.len() + self.fifo2.len() + self.fifo3.len()
    }

    /// Instructions the current MOP expansion has still to emit: the MOP Expander takes
    /// nothing from the RISC's FIFO for at least that many cycles, whatever else happens.
    pub fn expansion_left(&self) -> usize {
        self.expansion.len()
    }

    /// Whether nothing is queued or being expanded anywhere in the frontend.
    pub fn empty(&self) -> bool {
        self.fifo1.is_empty()
            && self.expansion.is_empty()
            && self.fifo2.is_empty()
            && self.replay == Replay::Idle
            && self.fifo3.is_empty()
    }

    fn room2(&self) -> bool {
        self.fifo2.len() < self.depths.before_replay
    }

    fn room3(&self) -> bool {
        self.fifo3.len() < self.depths.before_gate
    }

    /// One cycle of the MOP Expander; `true` if anything moved or changed.
    pub fn mop_step(&mut self, cfg: &[u32; 9]) -> bool {
        if !self.expansion.is_empty() {
            if !self.room2() {
                return false;
            }
            self.emit_expansion();
            return true;
        }
        if self.penalty {
            self.penalty = false;
            if self.fifo1.front().is_none_or(|i| opcode(i.word) != op::MOP) {
                return true;
            }
        }
        let Some(&head) = self.fifo1.front() else {
            return false;
        };
        match opcode(head.word) {
            op::MOP_CFG => self.mask_hi = field(head.word, 0, 16),
            op::MOP => {
                if !self.room2() {
                    return false;
                }
                self.expansion = expand(head.word, self.mask_hi, cfg).into();
                self.expanding_from = head.from;
                self.expanding_mop = (!self.expansion.is_empty()).then_some(head.word);
                if self.expansion.is_empty() {
                    self.penalty = true;
                } else {
                    self.emit_expansion();
                }
            }
            _ => {
                if !self.room2() {
                    return false;
                }
                self.fifo2.push_back(head);
            }
        }
        self.fifo1.pop_front();
        true
    }

    fn emit_expansion(&mut self) {
        let word = self.expansion.pop_front().expect("expansion not empty");
        self.fifo2.push_back(Insn {
            word,
            from: self.expanding_from,
        });
        self.mop_emitted += 1;
        if self.expansion.is_empty() {
            self.expanding_mop = None;
            self.penalty = true;
        }
    }

    /// One cycle of the Replay Expander; `true` if anything moved or changed.
    pub fn replay_step(&mut self) -> bool {
        match self.replay {
            Replay::Playing { index, left, from } => {
                if !self.room3() {
                    return false;
                }
                self.play(index, left, from);
                true
            }
            Replay::Loading { index, left, exec } => {
                let Some(&head) = self.fifo2.front() else {
                    return false;
                };
                if exec && !self.room3() {
                    return false;
                }
                self.fifo2.pop_front();
                self.replay_buf[index] = head.word;
                if exec {
                    self.fifo3.push_back(head);
                }
                self.replay = if left > 1 {
                    Replay::Loading {
                        index: (index + 1) % 32,
                        left: left - 1,
                        exec,
                    }
                } else {
                    Replay::Idle
                };
                true
            }
            Replay::Idle => {
                let Some(&head) = self.fifo2.front() else {
                    return false;
                };
                let w = head.word;
                if opcode(w) != op::REPLAY {
                    if !self.room3() {
                        return false;
                    }
                    self.fifo2.pop_front();
                    self.fifo3.push_back(head);
                    return true;
                }
                let (index, count) = (field(w, 14, 5) as usize, field(w, 4, 6));
                let count = if count == 0 { 64 } else { count };
                if field(w, 0, 1) == 1 {
                    self.fifo2.pop_front();
                    self.replay = Replay::Loading {
                        index,
                        left: count,
                        exec: field(w, 1, 1) == 1,
                    };
                    return true;
                }
                if !self.room3() {
                    return false;
                }
                self.fifo2.pop_front();
                self.play(index, count, head.from);
                true
            }
        }
    }

    fn play(&mut self, index: usize, left: u32, from: Risc) {
        self.fifo3.push_back(Insn {
            word: self.replay_buf[index],
            from,
        });
        self.replay = if left > 1 {
            Replay::Playing {
                index: (index + 1) % 32,
                left: left - 1,
                from,
            }
        } else {
            Replay::Idle
        };
    }
}

/// What a `MOP` expands to, per `MOPExpander.md`'s functional model (the configuration is
/// sampled when the expansion starts).
pub(crate) fn expand(mop: u32, mask_hi: u32, cfg: &[u32; 9]) -> Vec<u32> {
    let mut out = Vec::new();
    if field(mop, 23, 1) == 0 {
        let mut mask = (mask_hi << 16) | field(mop, 0, 16);
        let count1 = field(mop, 16, 7);
        let (has_b, has_a123) = (cfg[1] & 1 != 0, cfg[1] & 2 != 0);
        for _ in 0..=count1 {
            if mask & 1 == 0 {
                out.push(cfg[3]);
                if has_a123 {
                    out.extend_from_slice(&cfg[4..7]);
                }
                if has_b {
                    out.push(cfg[2]);
                }
            } else {
                out.push(cfg[7]);
                if has_b {
                    out.push(cfg[8]);
                }
            }
            mask >>= 1;
        }
        return out;
    }
    let is_nop = |w: u32| opcode(w) == op::NOP;
    let mut outer = cfg[0] & 127;
    let mut inner = cfg[1] & 127;
    let (start, end0, end1) = (cfg[2], cfg[3], cfg[4]);
    let (mut loop_op, loop_op1, loop0_last, loop1_last) = (cfg[5], cfg[6], cfg[7], cfg[8]);
    let flip = if is_nop(loop_op1) {
        0
    } else {
        inner *= 2;
        loop_op ^ loop_op1
    };
    if outer == 1 && is_nop(start) && inner == 0 && !is_nop(end0) {
        outer += 128; // the documented hardware bug
    }
    for j in 0..outer {
        if !is_nop(start) {
            out.push(start);
        }
        for i in 0..inner {
            out.push(if i != inner - 1 {
                loop_op
            } else if j != outer - 1 {
                loop1_last
            } else {
                loop0_last
            });
            loop_op ^= flip;
        }
        if !is_nop(end0) {
            out.push(end0);
            if !is_nop(end1) {
                out.push(end1);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOP: u32 = 0x0200_0000;

    fn mop(template: u32, count1: u32, mask_lo: u32) -> u32 {
        (1 << 24) | (template << 23) | (count1 << 16) | mask_lo
    }

    #[test]
    fn template0_masks_between_a_and_skip_sequences() {
        let cfg = [0, 0b11, 0xB, 0xA0, 0xA1, 0xA2, 0xA3, 0x50, 0x5B];
        // Three iterations, mask 0b010: A, skip, A.
        let got = expand(mop(0, 2, 0b010), 0, &cfg);
        let a = [0xA0, 0xA1, 0xA2, 0xA3, 0xB];
        let want: Vec<u32> = [&a[..], &[0x50, 0x5B], &a[..]].concat();
        assert_eq!(got, want);
        // Without HasB/HasA123; the high mask half comes from MOP_CFG.
        let cfg = [0, 0, 0xB, 0xA0, 0, 0, 0, 0x50, 0];
        let got = expand(mop(0, 17, 0), 0b10, &cfg);
        assert_eq!(got.len(), 18);
        assert_eq!(got[17], 0x50, "bit 17 of the mask is MaskHi bit 1");
        assert!(got[..17].iter().all(|&w| w == 0xA0));
    }

    #[test]
    fn template1_loops_with_start_end_and_last_overrides() {
        // Outer 2, inner 3, start S, end E0 E1, loop L, no LoopOp1.
        let cfg = [2, 3, 0x5, 0xE0, 0xE1, 0x10, NOP, 0x70, 0x71];
        let got = expand(mop(1, 0, 0), 0, &cfg);
        assert_eq!(
            got,
            [0x5, 0x10, 0x10, 0x71, 0xE0, 0xE1, 0x5, 0x10, 0x10, 0x70, 0xE0, 0xE1]
        );
        // LoopOp1 alternates and doubles the inner count; NOP start/end are skipped.
        let cfg = [1, 2, NOP, NOP, 0xE1, 0x10, 0x11, 0x70, 0x71];
        assert_eq!(expand(mop(1, 0, 0), 0, &cfg), [0x10, 0x11, 0x10, 0x70]);
        // The hardware bug: outer 1, NOP start, inner 0, real EndOp0: 129 iterations.
        let cfg = [1, 0, NOP, 0xE0, NOP, 0, 0, 0, 0];
        assert_eq!(expand(mop(1, 0, 0), 0, &cfg).len(), 129);
        // Outer 0: nothing.
        assert!(expand(mop(1, 0, 0), 0, &[0, 5, 0, 0, 0, 0, 0, 0, 0]).is_empty());
    }

    fn fe() -> Frontend {
        Frontend::new(FifoDepths {
            from_risc: 16,
            before_replay: 8,
            before_gate: 2,
        })
    }

    fn push(f: &mut Frontend, w: u32) {
        f.fifo1.push_back(Insn {
            word: w,
            from: Risc::Trisc0,
        });
    }

    /// Runs the two expanders, draining FIFO 3 each cycle, until idle; returns the output.
    fn drain(f: &mut Frontend, cfg: &[u32; 9]) -> (Vec<u32>, u32) {
        let mut out = Vec::new();
        let mut cycles = 0;
        while !f.empty() {
            if let Some(i) = f.fifo3.pop_front() {
                out.push(i.word);
            }
            f.replay_step();
            f.mop_step(cfg);
            cycles += 1;
            assert!(cycles < 10_000);
        }
        (out, cycles)
    }

    #[test]
    fn replay_records_and_plays_back() {
        let mut f = fe();
        let cfg = [0; 9];
        // Load 3 at index 30 without executing, then play 4 from index 31 (wraps).
        push(&mut f, (4 << 24) | (30 << 14) | (3 << 4) | 1);
        for w in [0x11, 0x12, 0x13] {
            push(&mut f, w);
        }
        push(&mut f, (4 << 24) | (31 << 14) | (4 << 4));
        let (out, _) = drain(&mut f, &cfg);
        assert_eq!(out, [0x12, 0x13, 0x0, 0x0], "buffer starts zeroed");
        // Load with Exec passes them on as well; Count 0 means 64.
        push(&mut f, (4 << 24) | (2 << 4) | 0b11);
        push(&mut f, 0x21);
        push(&mut f, 0x22);
        push(&mut f, 4 << 24);
        let (out, _) = drain(&mut f, &cfg);
        assert_eq!(out.len(), 2 + 64);
        assert_eq!(out[..4], [0x21, 0x22, 0x21, 0x22]);
    }

    #[test]
    fn mop_expansion_then_penalty_cycle() {
        let mut f = fe();
        let cfg = [0, 0, 0, 0x0200_0001, 0, 0, 0, 0, 0];
        push(&mut f, mop(0, 3, 0)); // four instructions
        push(&mut f, 0x0200_0002);
        let (out, cycles) = drain(&mut f, &cfg);
        assert_eq!(out.len(), 5);
        assert_eq!(f.mop_emitted, 4);
        // 4 emit cycles, 1 penalty, 1 pass-through, then 2 stages to leave FIFO 3.
        assert_eq!(cycles, 4 + 1 + 1 + 2);
        assert!(!f.mop_busy());
    }
}
