//! Exact per-instruction cycle accounting ("lines mode", [`crate::DeviceConfig::lines`]).
//!
//! With lines mode on, every cycle a core's clock advances is charged to the pc of the
//! instruction that advanced it, split by [`Cause`]. The split comes from the pipeline
//! model's own steps ([`crate::isa::pipeline`]): the interpreter notes the issue cycle after
//! each step of an instruction (fetch, operand wait, store queue / load slot), and the
//! difference between consecutive notes is the cycles that step cost. That is the
//! definition; the JIT (module `jit`) reproduces it exactly with counters in its blocks
//! (static cycles times how often each instruction ran, waits added in its out-of-line
//! paths), folded into the `LineTable` before a wall-clock read cuts it and when the core
//! stops; what the JIT leaves to the interpreter (MMIO, the clock reads themselves, division,
//! CSRs) is charged here as before. A core held on a FIFO (an empty mailbox, a full PCBuf) is moved
//! forward by the tile; those cycles go to the blocked instruction as [`Cause::FifoWait`].
//! So, per core and per run, the table sums exactly to the core's cycles (its clock at the
//! halt minus its clock at leaving reset).

pub(crate) use crate::bus::Marks;

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
    /// Held on a FIFO (mailbox, PCBuf) until another core moved it. A TRISC held on its
    /// coprocessor instead charges [`tensix_fifo`] (a push into a full instruction FIFO) or
    /// [`ttsync`] (a TTSync read), with what its thread waits on.
    FifoWait = 5,
}

impl Cause {
    /// Every cause, in index order.
    pub const ALL: [Cause; BASE_CAUSES] = [
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

/// Number of the plain [`Cause`]s; the coprocessor causes follow them ([`tensix_fifo`],
/// [`ttsync`]).
pub const BASE_CAUSES: usize = 6;

/// Number of cause indexes: the plain [`Cause`]s, then `tensix-fifo` and `ttsync` once per
/// [`TensixWait`].
pub const CAUSES: usize = BASE_CAUSES + 2 * TensixWait::COUNT;

/// What a Tensix thread is waiting on, as the coprocessor model sees it when a TRISC is
/// held on it: folded into the held cycles' cause (`tensix-fifo: SrcA valid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum TensixWait {
    /// Nothing holds the thread: its instructions issue (it is working through its queue).
    Issuing = 0,
    /// The MOP Expander is expanding (it takes nothing from the RISC's FIFO meanwhile).
    MopExpander,
    /// The Replay Expander is playing back.
    ReplayExpander,
    /// `SEMWAIT` on semaphore 0 (a mask of several semaphores names its lowest).
    Semaphore0,
    /// `SEMWAIT` on semaphore 1.
    Semaphore1,
    /// `SEMWAIT` on semaphore 2.
    Semaphore2,
    /// `SEMWAIT` on semaphore 3.
    Semaphore3,
    /// `SEMWAIT` on semaphore 4.
    Semaphore4,
    /// `SEMWAIT` on semaphore 5.
    Semaphore5,
    /// `SEMWAIT` on semaphore 6.
    Semaphore6,
    /// `SEMWAIT` on semaphore 7.
    Semaphore7,
    /// A Matrix Unit instruction (or `STALLWAIT` C10) waits for `SrcA` data valid.
    SrcAValid,
    /// ... for `SrcB` data valid (C11).
    SrcBValid,
    /// An `UNPACR` (or C8) waits for the Matrix Unit to give a `SrcA` bank back.
    SrcAFree,
    /// ... a `SrcB` bank (C9).
    SrcBFree,
    /// Unpacker 0 busy (C1; or an `UNPACR` to it still fetching).
    Unpacker0,
    /// Unpacker 1 busy (C2).
    Unpacker1,
    /// An `UNPACR`'s address calculation holds the thread (or every thread's next `UNPACR`).
    UnpackSetup,
    /// Packer 0 busy (C3; a `PACR` still writing, or one already started this cycle).
    Packer,
    /// The Matrix Unit taken (C7, another thread this cycle, a move's structural hazard).
    MatrixUnit,
    /// A `Dst` block written less than the documented cycles ago (read after write).
    DstHazard,
    /// The Vector Unit taken (C14, another thread this cycle, `SFPSWAP`'s stall).
    VectorUnit,
    /// The Sync Unit's one instruction per cycle taken by another thread.
    SyncUnit,
    /// The Configuration Unit's per-cycle limits.
    ConfigUnit,
    /// A Scalar Unit instruction holds the thread, or the unit is busy.
    ScalarUnit,
    /// `ATGETM` waits for a mutex.
    Mutex,
    /// The `STALLWAIT`/`SEMWAIT` conditions hold; the block lifts next cycle.
    WaitGate,
    /// Nothing queued, an instruction still executing (its latency).
    InFlight,
}

impl TensixWait {
    /// Number of variants.
    pub const COUNT: usize = 28;

    /// Every wait, in index order.
    pub const ALL: [TensixWait; TensixWait::COUNT] = {
        use TensixWait::*;
        [
            Issuing,
            MopExpander,
            ReplayExpander,
            Semaphore0,
            Semaphore1,
            Semaphore2,
            Semaphore3,
            Semaphore4,
            Semaphore5,
            Semaphore6,
            Semaphore7,
            SrcAValid,
            SrcBValid,
            SrcAFree,
            SrcBFree,
            Unpacker0,
            Unpacker1,
            UnpackSetup,
            Packer,
            MatrixUnit,
            DstHazard,
            VectorUnit,
            SyncUnit,
            ConfigUnit,
            ScalarUnit,
            Mutex,
            WaitGate,
            InFlight,
        ]
    };

    /// `SEMWAIT` on semaphore `n` (0..8).
    pub const fn semaphore(n: u32) -> TensixWait {
        TensixWait::ALL[3 + (n as usize & 7)]
    }

    /// Short name (used in cause names).
    pub const fn name(self) -> &'static str {
        use TensixWait::*;
        match self {
            Issuing => "issuing",
            MopExpander => "MOP expander",
            ReplayExpander => "replay expander",
            Semaphore0 => "semaphore 0",
            Semaphore1 => "semaphore 1",
            Semaphore2 => "semaphore 2",
            Semaphore3 => "semaphore 3",
            Semaphore4 => "semaphore 4",
            Semaphore5 => "semaphore 5",
            Semaphore6 => "semaphore 6",
            Semaphore7 => "semaphore 7",
            SrcAValid => "SrcA valid",
            SrcBValid => "SrcB valid",
            SrcAFree => "SrcA bank free",
            SrcBFree => "SrcB bank free",
            Unpacker0 => "unpacker 0 busy",
            Unpacker1 => "unpacker 1 busy",
            UnpackSetup => "UNPACR setup",
            Packer => "packer busy",
            MatrixUnit => "Matrix Unit busy",
            DstHazard => "Dst read after write",
            VectorUnit => "Vector Unit busy",
            SyncUnit => "Sync Unit busy",
            ConfigUnit => "Configuration Unit busy",
            ScalarUnit => "Scalar Unit busy",
            Mutex => "mutex",
            WaitGate => "wait gate lifting",
            InFlight => "in flight",
        }
    }
}

/// The cause index of cycles a TRISC is held pushing into a full coprocessor FIFO while
/// its thread waits on `w` (`tensix-fifo: <w>`).
pub const fn tensix_fifo(w: TensixWait) -> usize {
    BASE_CAUSES + w as usize
}

/// The cause index of cycles a TRISC is held on a TTSync read while its thread waits on
/// `w` (`ttsync: <w>`).
pub const fn ttsync(w: TensixWait) -> usize {
    BASE_CAUSES + TensixWait::COUNT + w as usize
}

/// The name of cause index `i` in files: a [`Cause`]'s, `tensix-fifo: <wait>` or
/// `ttsync: <wait>`; `?` past [`CAUSES`].
pub fn cause_name(i: usize) -> &'static str {
    static NAMES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let mut v: Vec<String> = Cause::ALL.iter().map(|c| c.name().to_string()).collect();
        for prefix in ["tensix-fifo", "ttsync"] {
            v.extend(
                TensixWait::ALL
                    .iter()
                    .map(|w| format!("{prefix}: {}", w.name())),
            );
        }
        v
    });
    NAMES.get(i).map_or("?", String::as_str)
}

/// The coprocessor part of a cause index: (`true` for TTSync, `false` for FIFO
/// back-pressure, the wait), `None` for a plain [`Cause`].
pub fn tensix_part(i: usize) -> Option<(bool, TensixWait)> {
    let j = i.checked_sub(BASE_CAUSES)?;
    let w = *TensixWait::ALL.get(j % TensixWait::COUNT)?;
    (j < 2 * TensixWait::COUNT).then_some((j >= TensixWait::COUNT, w))
}

/// Most entries a core's zone split keeps (the line table's segments; an entry is one
/// instruction's cycles of one cause in one segment): 2^18 entries of 12 bytes, 3 MiB. A
/// core that reads the clock so often that its segments need more (tens of thousands of
/// zones) loses its zone split, never its line profile.
pub const SEGMENT_ROWS: usize = 1 << 18;

// A segment entry holds its cause index in a byte.
const _: () = assert!(CAUSES <= 256);

/// Cycles per instruction and cause of one core, indexed by `(pc - base) / 4`, and the same
/// split into segments at every read of the wall clock (the zone split, [`Segment`]).
///
/// The charges go to `cur`, the current segment's rows (the indices it touched in
/// `dirty`); a clock read closes the segment: its rows move to `entries` (one per cause
/// that holds cycles, 12 bytes each: most instructions have one or two of the
/// [`CAUSES`]) and are added to `rows`, the run's totals. So an instruction costs one row update
/// either way; a segment costs the rows it touched.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineTable {
    pub base: u32,
    /// Totals of the closed segments.
    rows: Vec<[u64; CAUSES]>,
    /// The current segment.
    cur: Vec<[u64; CAUSES]>,
    /// Rows of `cur` in `dirty` (a flag, not a test of the row: comparing six words per
    /// instruction cost more than the rest of the accounting).
    marked: Vec<bool>,
    dirty: Vec<u32>,
    /// Closed segments after the first: (core time of the clock read that opened it, its
    /// first index into `entries`). The first segment starts at the core's release.
    starts: Vec<(u64, u32)>,
    /// Closed segments' rows: (row index, cause index, cycles), a row's entries back to
    /// back, a cause's cycles split over several entries if they exceed `u32`.
    entries: Vec<(u32, u8, u32)>,
    /// `entries` would have exceeded [`SEGMENT_ROWS`]: the split was dropped.
    overflow: bool,
}

impl LineTable {
    pub fn new(base: u32) -> LineTable {
        LineTable {
            base,
            ..LineTable::default()
        }
    }

    #[inline(always)]
    fn row(&mut self, pc: u32) -> &mut [u64; CAUSES] {
        let i = (pc.wrapping_sub(self.base) >> 2) as usize;
        if i >= self.cur.len() {
            self.cur.resize(i + 1, [0; CAUSES]);
            self.marked.resize(i + 1, false);
        }
        if !self.marked[i] {
            self.marked[i] = true;
            self.dirty.push(i as u32);
        }
        &mut self.cur[i]
    }

    /// Charges the instruction at `pc`, which moved the clock from `from` to `to`, by the
    /// marks the interpreter noted (each clamped into `from..=to`, so the parts always sum
    /// to `to - from`, also for an instruction stopped half way: a yield, a blocked access).
    #[inline(always)]
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

    /// Charges the instruction at `pc` that read the wall clock at core time `at` (its
    /// issue cycle): the cycles before `at` to the segment that ends there, the rest to a
    /// new segment that starts there. The parts are [`LineTable::charge`]'s, cut at `at`.
    pub fn charge_clock_read(&mut self, pc: u32, from: u64, to: u64, at: u64, m: &Marks) {
        let at = at.clamp(from, to);
        self.charge(pc, from, at, m);
        self.close_segment(at);
        let mut rest = *m;
        rest.mispredict = m.mispredict.min(to - at);
        self.charge(pc, at, to, &rest);
    }

    /// Ends the current segment; the next starts at core time `at`.
    fn close_segment(&mut self, at: u64) {
        if !self.overflow && self.entries.len() + self.dirty.len() > SEGMENT_ROWS {
            self.overflow = true;
            self.starts = Vec::new();
            self.entries = Vec::new();
        }
        if self.rows.len() < self.cur.len() {
            self.rows.resize(self.cur.len(), [0; CAUSES]);
        }
        for &i in &self.dirty {
            self.marked[i as usize] = false;
            let c = std::mem::replace(&mut self.cur[i as usize], [0; CAUSES]);
            for (t, n) in self.rows[i as usize].iter_mut().zip(c) {
                *t += n;
            }
            if self.overflow {
                continue;
            }
            for (k, mut left) in c.into_iter().enumerate() {
                while left > 0 {
                    let part = left.min(u32::MAX as u64);
                    self.entries.push((i, k as u8, part as u32));
                    left -= part;
                }
            }
        }
        self.dirty.clear();
        if !self.overflow {
            self.starts.push((at, self.entries.len() as u32));
        }
    }

    /// Charges `cycles` to `pc` under cause index `cause` (a [`Cause`] as `usize`,
    /// [`tensix_fifo`], [`ttsync`]).
    pub fn add(&mut self, pc: u32, cause: usize, cycles: u64) {
        if cycles > 0 {
            self.row(pc)[cause] += cycles;
        }
    }

    /// The rows that hold cycles: (pc, cycles per cause).
    pub fn nonzero(&self) -> Vec<(u32, [u64; CAUSES])> {
        let n = self.rows.len().max(self.cur.len());
        (0..n)
            .filter_map(|i| {
                let mut r = self.rows.get(i).copied().unwrap_or([0; CAUSES]);
                for (t, n) in r
                    .iter_mut()
                    .zip(self.cur.get(i).copied().unwrap_or([0; CAUSES]))
                {
                    *t += n;
                }
                (r != [0; CAUSES]).then(|| (self.base.wrapping_add(4 * i as u32), r))
            })
            .collect()
    }

    /// The run split at every clock read, in time order, with `start` the first segment's
    /// start (the core's release); `None` if the split overflowed [`SEGMENT_ROWS`].
    /// Times are the core's clock.
    pub fn segments(&self, start: u64) -> Option<Vec<Segment>> {
        if self.overflow {
            return None;
        }
        let mut out = Vec::with_capacity(self.starts.len() + 1);
        let mut from = (start, 0usize);
        for &(at, end) in &self.starts {
            out.push(self.segment(from.0, &self.entries[from.1..end as usize]));
            from = (at, end as usize);
        }
        // The open segment: the closed entries after the last start, then `cur`.
        let mut last = self.segment(from.0, &self.entries[from.1..]);
        for &i in &self.dirty {
            let pc = self.base.wrapping_add(4 * i);
            last.rows.push((pc, self.cur[i as usize]));
        }
        last.rows.sort_by_key(|r| r.0);
        out.push(last);
        out.retain(|s| !s.rows.is_empty());
        Some(out)
    }

    fn segment(&self, start: u64, entries: &[(u32, u8, u32)]) -> Segment {
        let mut rows: Vec<(u32, [u64; CAUSES])> = Vec::with_capacity(entries.len());
        for &(i, k, c) in entries {
            let pc = self.base.wrapping_add(4 * i);
            // A row split over several entries has them back to back.
            match rows.last_mut().filter(|r| r.0 == pc) {
                Some(r) => r.1[k as usize] += c as u64,
                None => {
                    let mut row = [0; CAUSES];
                    row[k as usize] = c as u64;
                    rows.push((pc, row));
                }
            }
        }
        rows.sort_by_key(|r| r.0);
        Segment { start, rows }
    }
}

/// The cycles a core spent between two reads of the wall clock (the zone split: zone
/// times are such reads, so a zone's cycles are whole segments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// When it starts: the wall clock the read that opened it returned (in
    /// [`HartLines::segments`]; the core's release for the first), or the core's clock.
    pub start: u64,
    /// (pc, cycles per [`Cause`]), by pc; only pcs that took cycles.
    pub rows: Vec<(u32, [u64; CAUSES])>,
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
    /// The same cycles split at every load of `WALL_CLOCK_L`, segment starts on the tile's
    /// wall clock (what the read returned, the high word included), in time order: a zone's
    /// cycles are the segments from its start read to its end read. `None` when the split
    /// outgrew [`SEGMENT_ROWS`].
    pub segments: Option<Vec<Segment>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with the plain causes' cycles `v` and none of the coprocessor's.
    fn row(v: [u64; BASE_CAUSES]) -> [u64; CAUSES] {
        let mut r = [0; CAUSES];
        r[..BASE_CAUSES].copy_from_slice(&v);
        r
    }

    #[test]
    fn cause_indexes_name_the_coprocessor_waits() {
        assert_eq!(TensixWait::ALL.len(), TensixWait::COUNT);
        for (i, w) in TensixWait::ALL.iter().enumerate() {
            assert_eq!(*w as usize, i);
        }
        assert_eq!(cause_name(Cause::FifoWait as usize), "fifo-wait");
        assert_eq!(
            cause_name(tensix_fifo(TensixWait::SrcAValid)),
            "tensix-fifo: SrcA valid"
        );
        assert_eq!(
            cause_name(ttsync(TensixWait::Packer)),
            "ttsync: packer busy"
        );
        assert_eq!(
            cause_name(ttsync(TensixWait::semaphore(2))),
            "ttsync: semaphore 2"
        );
        assert_eq!(cause_name(CAUSES - 1), "ttsync: in flight");
        assert_eq!(cause_name(CAUSES), "?");
        assert_eq!(tensix_part(2), None);
        assert_eq!(
            tensix_part(tensix_fifo(TensixWait::Mutex)),
            Some((false, TensixWait::Mutex))
        );
        assert_eq!(
            tensix_part(ttsync(TensixWait::Issuing)),
            Some((true, TensixWait::Issuing))
        );
        assert_eq!(tensix_part(CAUSES), None);
    }

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
        assert_eq!(r[0].1[..BASE_CAUSES], [1, 2, 3, 2, 8, 0]);
        // Stopped half way (a yield after the operand wait): marks past the end clamp.
        let mut t = LineTable::new(0);
        t.charge(0, 10, 15, &m);
        assert_eq!(t.nonzero()[0].1.iter().sum::<u64>(), 5);
        assert_eq!(t.nonzero()[0].1[Cause::ICacheMiss as usize], 5);
    }

    #[test]
    fn clock_reads_split_the_run_into_segments_that_sum_to_the_totals() {
        let mut t = LineTable::new(0);
        let m = Marks {
            fetched: 0,
            operands: 0,
            issued: 0,
            mispredict: 0,
            access: None,
        };
        t.charge(0, 100, 101, &m);
        // The read at 0x4 issues at 103 (2 cycles of store-port wait) and ends at 104.
        let read = Marks {
            fetched: 101,
            operands: 101,
            issued: 103,
            ..m
        };
        t.charge_clock_read(4, 101, 104, 103, &read);
        t.charge(8, 104, 110, &m);
        t.add(8, Cause::FifoWait as usize, 5);
        t.add(8, tensix_fifo(TensixWait::SrcAValid), 3);
        t.charge_clock_read(4, 115, 116, 115, &m);
        t.charge(0, 116, 117, &m);
        let s = t.segments(100).unwrap();
        let starts: Vec<u64> = s.iter().map(|s| s.start).collect();
        assert_eq!(starts, [100, 103, 115]);
        assert_eq!(
            s[0].rows,
            [(0, row([1, 0, 0, 0, 0, 0])), (4, row([0, 0, 2, 0, 0, 0]))]
        );
        assert_eq!(
            s[1].rows,
            [
                (4, row([1, 0, 0, 0, 0, 0])),
                (8, {
                    let mut r = row([6, 0, 0, 0, 0, 5]);
                    r[tensix_fifo(TensixWait::SrcAValid)] = 3;
                    r
                })
            ]
        );
        assert_eq!(
            s[2].rows,
            [(0, row([1, 0, 0, 0, 0, 0])), (4, row([1, 0, 0, 0, 0, 0]))]
        );
        let sum = |rows: &[(u32, [u64; CAUSES])]| -> u64 { rows.iter().flat_map(|r| r.1).sum() };
        assert_eq!(s.iter().map(|s| sum(&s.rows)).sum::<u64>(), 20);
        assert_eq!(sum(&t.nonzero()), 20);
    }

    #[test]
    fn a_split_past_its_budget_is_dropped_and_the_totals_kept() {
        let mut t = LineTable::new(0);
        let m = Marks::default();
        for k in 0..SEGMENT_ROWS as u64 + 2 {
            t.charge_clock_read(0, k, k + 1, k, &m);
        }
        assert!(t.segments(0).is_none());
        assert_eq!(
            t.nonzero(),
            [(0, row([SEGMENT_ROWS as u64 + 2, 0, 0, 0, 0, 0]))]
        );
    }
}
