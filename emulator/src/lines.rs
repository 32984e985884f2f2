//! Exact per-instruction cycle accounting ("lines mode", [`crate::DeviceConfig::lines`]).
//!
//! With lines mode on, a core runs on the interpreter (never the JIT) and every cycle its
//! clock advances is charged to the pc of the instruction that advanced it, split by
//! [`Cause`]. The split comes from the pipeline model's own steps ([`crate::pipeline`]):
//! the interpreter notes the issue cycle after each step of an instruction (fetch, operand
//! wait, store queue / load slot), and the difference between consecutive notes is the
//! cycles that step cost. A core held on a FIFO (an empty mailbox, a full PCBuf) is moved
//! forward by the tile; those cycles go to the blocked instruction as [`Cause::FifoWait`].
//! So, per core and per run, the table sums exactly to the core's cycles (its clock at the
//! halt minus its clock at leaving reset).

/// Why a cycle was spent on an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Cause {
    /// The instruction's own cycles in the Integer Unit (1 for most; `mul`, `div` more).
    Issue = 0,
    /// Waiting for a source register: a load's (or `mul`/`div`'s) result not yet ready.
    LoadUse = 1,
    /// A load or store waiting for the store queue or a load slot (and, on Blackhole, a
    /// CSR access waiting for everything in flight).
    StorePort = 2,
    /// The extra cycles of a mispredicted branch.
    Mispredict = 3,
    /// An instruction-cache miss on the instruction's fetch.
    ICacheMiss = 4,
    /// Held on a FIFO (mailbox, PCBuf, TTSync, semaphore) until another core moved it.
    FifoWait = 5,
}

/// Number of [`Cause`]s.
pub const CAUSES: usize = 6;

impl Cause {
    /// Every cause, in index order.
    pub const ALL: [Cause; CAUSES] = [
        Cause::Issue,
        Cause::LoadUse,
        Cause::StorePort,
        Cause::Mispredict,
        Cause::ICacheMiss,
        Cause::FifoWait,
    ];

    /// Short lowercase name (used in files).
    pub const fn name(self) -> &'static str {
        match self {
            Cause::Issue => "issue",
            Cause::LoadUse => "load-use",
            Cause::StorePort => "store-port",
            Cause::Mispredict => "mispredict",
            Cause::ICacheMiss => "icache-miss",
            Cause::FifoWait => "fifo-wait",
        }
    }
}

/// Issue cycles the interpreter notes while it times one instruction (only in lines mode).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Marks {
    /// After the fetch (instruction-cache miss included).
    pub fetched: u64,
    /// After the operand waits.
    pub operands: u64,
    /// After the store-queue / load-slot waits (the issue cycle).
    pub issued: u64,
    /// Extra cycles of a mispredicted branch (0 otherwise).
    pub mispredict: u64,
    /// A load's or store's (address, write), for the debug daisychain's samples.
    pub access: Option<(u32, bool)>,
}

/// Cycles per instruction and cause of one core, indexed by `(pc - base) / 4`.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineTable {
    pub base: u32,
    pub rows: Vec<[u64; CAUSES]>,
}

impl LineTable {
    pub fn new(base: u32) -> LineTable {
        LineTable {
            base,
            rows: Vec::new(),
        }
    }

    #[inline]
    fn row(&mut self, pc: u32) -> &mut [u64; CAUSES] {
        let i = (pc.wrapping_sub(self.base) >> 2) as usize;
        if i >= self.rows.len() {
            self.rows.resize(i + 1, [0; CAUSES]);
        }
        &mut self.rows[i]
    }

    /// Charges the instruction at `pc`, which moved the clock from `from` to `to`, by the
    /// marks the interpreter noted (each clamped into `from..=to`, so the parts always sum
    /// to `to - from`, also for an instruction stopped half way: a yield, a blocked access).
    #[inline]
    pub fn charge(&mut self, pc: u32, from: u64, to: u64, m: &Marks) {
        if to <= from {
            return;
        }
        let fetched = m.fetched.clamp(from, to);
        let operands = m.operands.clamp(fetched, to);
        let issued = m.issued.clamp(operands, to);
        let rest = to - issued;
        let mispredict = m.mispredict.min(rest);
        let r = self.row(pc);
        r[Cause::ICacheMiss as usize] += fetched - from;
        r[Cause::LoadUse as usize] += operands - fetched;
        r[Cause::StorePort as usize] += issued - operands;
        r[Cause::Mispredict as usize] += mispredict;
        r[Cause::Issue as usize] += rest - mispredict;
    }

    /// Charges `cycles` to `pc` under one cause.
    pub fn add(&mut self, pc: u32, cause: Cause, cycles: u64) {
        if cycles > 0 {
            self.row(pc)[cause as usize] += cycles;
        }
    }

    /// The rows that hold cycles: (pc, cycles per cause).
    pub fn nonzero(&self) -> Vec<(u32, [u64; CAUSES])> {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.iter().any(|&c| c != 0))
            .map(|(i, r)| (self.base.wrapping_add(4 * i as u32), *r))
            .collect()
    }
}

/// One core's cycles per instruction and cause in the last run (lines mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HartLines {
    /// The core's chip.
    pub chip: u32,
    /// The core's tile.
    pub tile: riscv_linker::NocCoord,
    /// Which of the tile's cores.
    pub risc: riscv_linker::Risc,
    /// The name the kernel was loaded under (usually its ELF's path).
    pub kernel: String,
    /// The core's cycles in the run (from leaving reset to halting); the rows sum to it.
    pub cycles: u64,
    /// (pc, cycles per [`Cause`] in index order), by pc; only pcs that took cycles.
    pub rows: Vec<(u32, [u64; CAUSES])>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_splits_into_parts_that_sum_to_the_delta() {
        let mut t = LineTable::new(0x100);
        let m = Marks {
            fetched: 18,
            operands: 20,
            issued: 23,
            mispredict: 2,
            access: None,
        };
        t.charge(0x104, 10, 26, &m);
        let r = t.nonzero();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, 0x104);
        assert_eq!(r[0].1, [1, 2, 3, 2, 8, 0]);
        // Stopped half way (a yield after the operand wait): marks past the end clamp.
        let mut t = LineTable::new(0);
        t.charge(0, 10, 15, &m);
        assert_eq!(t.nonzero()[0].1.iter().sum::<u64>(), 5);
        assert_eq!(t.nonzero()[0].1[Cause::ICacheMiss as usize], 5);
    }
}
