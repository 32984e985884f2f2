//! The coprocessor's signals that Tensix's performance counters count
//! (`tt_metal/tt-llk/docs/performance_counters/hardware_reference.md` in the `ttnn` wheel,
//! tt-llk's `perf_counters` headers): per cycle, which of them were high. The counter
//! registers ([`crate::devices::perf_counters`]) start, stop and select; this module keeps
//! one running total per signal, counted only once some counter bank has been started (so
//! runs that never use them pay nothing).
//!
//! A signal is sampled from the state at the start of a cycle plus what issued in it, and
//! a cycle the lazy simulation skips (nothing can change in it, [`super::Tensix::advance_to`])
//! counts as the cycle before it. What each signal means in the model is said at its
//! index below; docs/design/perf-counters.md says where that is a reading of ours.

use super::isa::{self, opcode, Unit};
use super::Tensix;
use crate::isa::lines::TensixWait;

/// Counting instruction classes at the wait gate (the INSTRN_THREAD bank's availability
/// selects, in their order): Configuration Unit, Sync Unit, Scalar Unit (ThCon), mover,
/// math (Matrix and Vector Units), unpackers, packers. Miscellaneous Unit instructions
/// (ADCs, `NOP`, `SETDVALID`) are in none.
pub(crate) const CLASSES: usize = 7;
pub(crate) const CLASS_CFG: usize = 0;
pub(crate) const CLASS_SYNC: usize = 1;
pub(crate) const CLASS_THCON: usize = 2;
pub(crate) const CLASS_MOVE: usize = 3;
pub(crate) const CLASS_MATH: usize = 4;
pub(crate) const CLASS_UNPACK: usize = 5;
pub(crate) const CLASS_PACK: usize = 6;

/// Per-thread wait reasons (the INSTRN_THREAD bank's `WAITING_FOR_*_t`, in their order):
/// `STALLWAIT` C0 (ThCon memory requests), C1/C2 (unpackers), C3-C6 (packers), C7 (Matrix
/// Unit), `SEMWAIT`'s "while zero" and "while at max", C12 (mover), C13 (the RISC's
/// pending register writes), C14 (Vector Unit).
pub(crate) const WAITS: usize = 9;
pub(crate) const WAIT_THCON: usize = 0;
pub(crate) const WAIT_UNPACK: usize = 1;
pub(crate) const WAIT_PACK: usize = 2;
pub(crate) const WAIT_MATH: usize = 3;
pub(crate) const WAIT_NONZERO_SEM: usize = 4;
pub(crate) const WAIT_NONFULL_SEM: usize = 5;
pub(crate) const WAIT_MOVE: usize = 6;
pub(crate) const WAIT_CFG: usize = 7;
pub(crate) const WAIT_SFPU: usize = 8;
// The model never keeps C0, C12 or C13 (no modelled instruction occupies those units), so
// THCON, MOVE and CFG waits are counted by no code here, only selected by the registers.
const _: [usize; 3] = [WAIT_THCON, WAIT_MOVE, WAIT_CFG];

/// Waits shared by the threads: `SrcA`/`SrcB` not yet given back to the unpackers (C8,
/// C9, or an `UNPACR` waiting for its bank), not yet valid for the Matrix Unit (C10, C11,
/// or a Matrix Unit instruction waiting for its operands).
pub(crate) const SHARED_SRCA_CLEAR: usize = 0;
pub(crate) const SHARED_SRCB_CLEAR: usize = 1;
pub(crate) const SHARED_SRCA_VALID: usize = 2;
pub(crate) const SHARED_SRCB_VALID: usize = 3;

/// A Matrix Unit instruction issued this cycle (`FPU_COUNTER`; every Matrix Unit
/// instruction takes the unit's issue slot for one cycle in the model).
pub(crate) const FPU: usize = 0;
/// A Vector Unit instruction issued this cycle (`SFPU_COUNTER`).
pub(crate) const SFPU: usize = 1;
/// Either ([`FPU`] or [`SFPU`]: `MATH_COUNTER`).
pub(crate) const MATH: usize = 2;
/// Some thread's wait gate holds a Matrix Unit instruction (`MATH_INSTRN_AVAILABLE`).
pub(crate) const MATH_AVAILABLE: usize = 3;
/// A Matrix Unit instruction started (`MATH_INSTRN_STARTED`; the same cycles as [`FPU`]).
pub(crate) const MATH_STARTED: usize = 4;
const AVAILABLE0: usize = 5;
const STALL0: usize = AVAILABLE0 + CLASSES * 3;
/// Some thread stalled ([`stall`] of any thread: `ANY_THREAD_STALL`).
pub(crate) const ANY_STALL: usize = STALL0 + 3;
const ISSUED0: usize = ANY_STALL + 1;
const SHARED0: usize = ISSUED0 + 3;
const WAIT0: usize = SHARED0 + 4;
const UNPACK_BUSY0: usize = WAIT0 + WAITS * 3;
/// Packer 0 has an instruction of some thread in its pipeline (`PACKER_BUSY_0`,
/// `PACKER_BUSY`: the model has only packer 0).
pub(crate) const PACKER_BUSY: usize = UNPACK_BUSY0 + 6;
/// Signals in all.
pub(crate) const SIGNALS: usize = PACKER_BUSY + 1;

/// Thread `t`'s wait gate holds an instruction of class `class` ([`CLASSES`]), issued or not.
pub(crate) const fn available(class: usize, t: usize) -> usize {
    AVAILABLE0 + class * 3 + t
}

/// Thread `t`'s wait gate holds an instruction that does not issue this cycle
/// (`THREAD_STALLS_t`).
pub(crate) const fn stall(t: usize) -> usize {
    STALL0 + t
}

/// Thread `t` issued an instruction (`THREAD_INSTRUCTIONS_t`, a count of instructions).
pub(crate) const fn issued(t: usize) -> usize {
    ISSUED0 + t
}

/// A shared wait ([`SHARED_SRCA_CLEAR`]...) holds some thread's instruction.
pub(crate) const fn shared(which: usize) -> usize {
    SHARED0 + which
}

/// Thread `t`'s instruction is held by its latched wait for reason `why` ([`WAITS`]).
pub(crate) const fn wait(why: usize, t: usize) -> usize {
    WAIT0 + t * WAITS + why
}

/// Thread `t` has an instruction in unpacker `u`'s pipeline (`UNPACKu_BUSY_THREADt`).
pub(crate) const fn unpack_busy(u: usize, t: usize) -> usize {
    UNPACK_BUSY0 + u * 3 + t
}

const _: () = assert!(SIGNALS <= 128);

/// Signal `i`'s counter name, as tt-llk's `perf_counters/types.h` spells it.
pub(crate) fn name(i: usize) -> String {
    const CLASS: [&str; CLASSES] = ["CFG", "SYNC", "THCON", "MOVE", "MATH", "UNPACK", "PACK"];
    const WAIT: [&str; WAITS] = [
        "THCON_IDLE",
        "UNPACK_IDLE",
        "PACK_IDLE",
        "MATH_IDLE",
        "NONZERO_SEM",
        "NONFULL_SEM",
        "MOVE_IDLE",
        "CFG_IDLE",
        "SFPU_IDLE",
    ];
    const SHARED: [&str; 4] = ["SRCA_CLEAR", "SRCB_CLEAR", "SRCA_VALID", "SRCB_VALID"];
    match i {
        FPU => "FPU_COUNTER".into(),
        SFPU => "SFPU_COUNTER".into(),
        MATH => "MATH_COUNTER".into(),
        MATH_AVAILABLE => "MATH_INSTRN_AVAILABLE".into(),
        MATH_STARTED => "MATH_INSTRN_STARTED".into(),
        ANY_STALL => "ANY_THREAD_STALL".into(),
        PACKER_BUSY => "PACKER_BUSY".into(),
        i if i < STALL0 => {
            let k = i - AVAILABLE0;
            format!("{}_INSTRN_AVAILABLE_{}", CLASS[k / 3], k % 3)
        }
        i if i < ANY_STALL => format!("THREAD_STALLS_{}", i - STALL0),
        i if i < SHARED0 => format!("THREAD_INSTRUCTIONS_{}", i - ISSUED0),
        i if i < WAIT0 => format!("WAITING_FOR_{}", SHARED[i - SHARED0]),
        i if i < UNPACK_BUSY0 => {
            let k = i - WAIT0;
            format!("WAITING_FOR_{}_{}", WAIT[k % WAITS], k / WAITS)
        }
        i => {
            let k = i - UNPACK_BUSY0;
            format!("UNPACK{}_BUSY_THREAD{}", k / 3, k % 3)
        }
    }
}

/// Running totals of every signal, and the signals of the last simulated cycle.
#[derive(Clone, Debug)]
pub(crate) struct Signals {
    /// Counting (some bank has been started since the tile came up).
    pub on: bool,
    /// Cycles (or, for [`issued`], instructions) each signal was high.
    pub totals: [u64; SIGNALS],
    /// The signals of the last simulated cycle, bit per signal.
    pub sample: u128,
    /// Cycles at which a bank's period ends: the totals are kept as of then
    /// ([`Signals::frozen`]), by bank index.
    pub freeze_at: [Option<u64>; 5],
    pub frozen: [Option<Box<[u64; SIGNALS]>>; 5],
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            on: false,
            totals: [0; SIGNALS],
            sample: 0,
            freeze_at: [None; 5],
            frozen: Default::default(),
        }
    }
}

impl Signals {
    /// Counts the last sample for cycles `from..to` (the simulated cycle and the ones
    /// skipped after it), keeping the totals of a bank whose period ends inside.
    pub fn count(&mut self, from: u64, to: u64) {
        let mut at = from;
        while at < to {
            // The earliest period end in (at, to].
            let next = self
                .freeze_at
                .iter()
                .flatten()
                .copied()
                .filter(|&f| f > at && f <= to)
                .min()
                .unwrap_or(to);
            self.add(next - at);
            at = next;
            for b in 0..5 {
                if self.freeze_at[b] == Some(at) {
                    self.freeze_at[b] = None;
                    self.frozen[b] = Some(Box::new(self.totals));
                }
            }
        }
    }

    /// An instruction issued only in a cycle that changed something, which the simulation
    /// never skips past: issue signals always count once.
    fn add(&mut self, cycles: u64) {
        let mut m = self.sample;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            self.totals[i] = self.totals[i].wrapping_add(cycles);
            m &= m - 1;
        }
    }
}

/// What a cycle's sample starts from: the signals at its start, each thread's issue count
/// and whether its gate held an instruction.
pub(super) struct Start {
    sample: u128,
    issued: [u64; 3],
    heads: [bool; 3],
}

impl Tensix {
    /// The start of cycle `c`'s sample (before the wait gates run).
    pub(super) fn sample_start(&self, c: u64) -> Start {
        Start {
            sample: self.signals_before(c),
            issued: self.issued,
            heads: [0, 1, 2].map(|t| !self.threads[t].fifo3.is_empty()),
        }
    }

    /// Cycle's sample once the wait gates have run: what issued (`matrix`, `vector`: an
    /// instruction entered that unit), who stalled and on which operand or bank.
    pub(super) fn sample_end(&self, start: Start, matrix: bool, vector: bool) -> u128 {
        let mut sample = start.sample;
        for t in 0..3 {
            if self.issued[t] > start.issued[t] {
                sample |= 1 << issued(t);
            } else if start.heads[t] {
                sample |= 1 << stall(t) | 1 << ANY_STALL;
                // An operand or bank the instruction itself waits for.
                let which = match self.why[t] {
                    TensixWait::SrcAValid => Some(SHARED_SRCA_VALID),
                    TensixWait::SrcBValid => Some(SHARED_SRCB_VALID),
                    TensixWait::SrcAFree => Some(SHARED_SRCA_CLEAR),
                    TensixWait::SrcBFree => Some(SHARED_SRCB_CLEAR),
                    _ => None,
                };
                if let Some(w) = which {
                    sample |= 1 << shared(w);
                }
            }
        }
        if matrix {
            sample |= 1 << FPU | 1 << MATH_STARTED | 1 << MATH;
        }
        if vector {
            sample |= 1 << SFPU | 1 << MATH;
        }
        sample
    }

    /// The performance counters' signals at the start of cycle `c` : what each
    /// thread's wait gate holds, what its latched wait waits for, the unpackers and packer.
    fn signals_before(&self, c: u64) -> u128 {
        let mut s = 0u128;
        for t in 0..3 {
            if self.unpack_thread_until[0][t] > c {
                s |= 1 << unpack_busy(0, t);
            }
            if self.unpack_thread_until[1][t] > c {
                s |= 1 << unpack_busy(1, t);
            }
            if self.pack_thread_until[t] > c {
                s |= 1 << PACKER_BUSY;
            }
            let Some(head) = self.threads[t].fifo3.front() else {
                continue;
            };
            let unit = isa::info(opcode(head.word)).map(|i| i.unit);
            let class = match unit {
                Some(Unit::Config) => Some(CLASS_CFG),
                Some(Unit::Sync) => Some(CLASS_SYNC),
                Some(Unit::Scalar) => Some(CLASS_THCON),
                Some(Unit::Mover) => Some(CLASS_MOVE),
                Some(Unit::Matrix | Unit::Vector) => Some(CLASS_MATH),
                Some(Unit::Unpack) => Some(CLASS_UNPACK),
                Some(Unit::Pack) => Some(CLASS_PACK),
                _ => None,
            };
            if let Some(k) = class {
                s |= 1 << available(k, t);
            }
            if unit == Some(Unit::Matrix) {
                s |= 1 << MATH_AVAILABLE;
            }
            // What its latched wait waits for (what the instruction itself waits for is
            // known once the gate has tried it, in `cycle`).
            let Some(l) = self.threads[t].latch else {
                continue;
            };
            if l.met_at.is_some() || !isa::blocked(head.word, l.block) {
                continue;
            }
            if l.semwait {
                let (zero, full) = self.sync.semwait_keeping(l.condition as u8, l.sem_mask);
                if zero {
                    s |= 1 << wait(WAIT_NONZERO_SEM, t);
                }
                if full {
                    s |= 1 << wait(WAIT_NONFULL_SEM, t);
                }
                continue;
            }
            let k = l.condition & self.keeping(t, c);
            for (bits, why) in [
                (0b110, WAIT_UNPACK),
                (0b1111000, WAIT_PACK),
                (1 << 7, WAIT_MATH),
                (1 << 14, WAIT_SFPU),
            ] {
                if k & bits != 0 {
                    s |= 1 << wait(why, t);
                }
            }
            for (bit, which) in [
                (8, SHARED_SRCA_CLEAR),
                (9, SHARED_SRCB_CLEAR),
                (10, SHARED_SRCA_VALID),
                (11, SHARED_SRCB_VALID),
            ] {
                if k & (1 << bit) != 0 {
                    s |= 1 << shared(which);
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_distinct_and_in_range() {
        let mut seen = [false; SIGNALS];
        let mut all = vec![
            FPU,
            SFPU,
            MATH,
            MATH_AVAILABLE,
            MATH_STARTED,
            ANY_STALL,
            PACKER_BUSY,
        ];
        for t in 0..3 {
            all.extend((0..CLASSES).map(|c| available(c, t)));
            all.extend((0..WAITS).map(|w| wait(w, t)));
            all.extend([stall(t), issued(t), unpack_busy(0, t), unpack_busy(1, t)]);
        }
        all.extend((0..4).map(shared));
        for i in all {
            assert!(!seen[i], "signal {i} twice");
            seen[i] = true;
        }
        assert!(seen.iter().all(|&s| s), "every index is a signal");
    }

    #[test]
    fn a_period_end_keeps_the_totals_as_of_then() {
        let mut s = Signals {
            on: true,
            sample: 1 << FPU | 1 << issued(1),
            ..Default::default()
        };
        s.freeze_at[2] = Some(13);
        s.count(10, 20);
        assert_eq!(s.totals[FPU], 10);
        assert_eq!(s.frozen[2].as_ref().unwrap()[FPU], 3);
        assert_eq!(s.frozen[2].as_ref().unwrap()[issued(1)], 3);
        assert_eq!(s.freeze_at[2], None);
    }
}
