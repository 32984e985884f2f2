//! The Tensix coprocessor of one tile: three threads' frontends (FIFOs, MOP Expander, Replay
//! Expander, Wait Gate), the backend's control units (Sync Unit, Configuration Unit,
//! Scalar Unit GPR arithmetic, Miscellaneous Unit ADCs, the Matrix Unit's RWC
//! instructions), its data path (`SrcA`/`SrcB`, `Dst`, the unpackers, the Matrix Unit,
//! packer 0: [`data`] issues them) and the Vector Unit ([`sfpu`]), following Tenstorrent's
//! ISA documentation (`WormholeB0/TensixTile/TensixCoprocessor/`).
//!
//! The coprocessor is simulated cycle by cycle, lazily: every RISC access that can observe
//! or change it first runs it up to the accessing core's clock ([`Tensix::advance_to`]),
//! and the tile runs those accesses in cycle order ([`crate::chip::tile`]). An instruction
//! takes effect when it issues; its latency only says how long it keeps its thread "in
//! flight" and its unit busy. An instruction the model leaves out, or one of the modes
//! listed in [`isa::unsupported`], stops the run with [`FaultKind::TensixPush`] at the
//! push or [`FaultKind::TensixExec`] at the wait gate, naming what it is.
//!
//! See docs/design/tensix-coprocessor.md: what is modelled instruction by instruction, the
//! timing rules, and what is not modelled.

mod config;
mod counters;
mod data;
pub(crate) mod dst;
mod float;
mod frontend;
pub(crate) mod isa;
mod matrix;
mod pack;
pub(crate) mod perf;
mod scalar;
pub(crate) mod sfpu;
mod src_regs;
mod sync;
pub(crate) mod thread_log;
mod unpack;

pub use frontend::FifoDepths;
pub use isa::modelled_mnemonics;

use crate::bus::L1;
use crate::error::FaultKind;
use crate::isa::lines::TensixWait;
use frontend::{Frontend, Insn, Latch};
use isa::{op, opcode, Unit};
use riscv_linker::{mmio, Risc};
use src_regs::{A, B};

pub(crate) use config::RISC_VIEW_BYTES as CONFIG_VIEW_BYTES;

/// Timing of the coprocessor model: the documented figures, and one named assumption per
/// undocumented one (docs/design/tensix-coprocessor.md lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensixTiming {
    /// FIFO capacities per thread (documented: 32/16/16 from the RISC, 8 before the Replay
    /// Expander, 2 before the Wait Gate).
    pub fifos: [FifoDepths; 3],
    /// Cycles a Sync Unit instruction keeps its thread in flight (documented: 1).
    pub sync_latency: u32,
    /// `SETC16`, `RMWCIB` (documented: 1).
    pub cfg_latency: u32,
    /// `WRCFG` (documented: 2).
    pub wrcfg_latency: u32,
    /// `RDCFG` (documented: at least 2; ASSUMPTION: exactly 2).
    pub rdcfg_latency: u32,
    /// Miscellaneous Unit instructions (documented: 1).
    pub misc_latency: u32,
    /// `SETRWC`, `INCRWC`, `ZEROACC`, `ZEROSRC`, `CLEARDVALID` (documented: 1).
    pub rwc_latency: u32,
    /// Vector Unit instructions outside the MAD sub-unit (documented: 1).
    pub sfpu_latency: u32,
    /// `SFPMAD`, `SFPADD`, `SFPMUL` (documented: 2).
    pub sfpu_mad_latency: u32,
    /// `MVMUL`, `ELWMUL`, `ELWADD`, `ELWSUB` (documented: 5).
    pub fpu_latency: u32,
    /// `MOVA2D`, `MOVDBGA2D`, `MOVB2D` (documented: 4).
    pub mov_to_dst_latency: u32,
    /// `MOVD2A` (documented: 2).
    pub movd2a_latency: u32,
    /// `MOVD2B` (ASSUMPTION: 4, the end of the three cycles in which the Matrix Unit only
    /// accepts another `MOVD2B`; the page gives no latency).
    pub movd2b_latency: u32,
    /// Cycles after an instruction writes an 8x16 block of `Dst` during which a Matrix Unit
    /// instruction or `PACR` reading that block stalls (documented: 4).
    pub dst_read_after_write: u32,
    /// `UNPACR` address calculation, holding the thread and every thread's next `UNPACR`
    /// (documented: 2 for uncompressed data).
    pub unpack_setup: u32,
    /// Bytes an unpacker fetches from L1 per cycle at `Throttle_mode` 0 (documented: 16;
    /// x2 and x4 double and quadruple it).
    pub unpack_bytes_per_cycle: u32,
    /// Cycles from a `PACR` entering packer 0 until its first datum can be written
    /// (ASSUMPTION: 2, as the unpackers' address calculation; the pages give none).
    pub pack_setup: u32,
    /// Bytes packer 0 writes to L1 per cycle (ASSUMPTION: 16, one of the 16-byte units the
    /// output address generator writes).
    pub pack_bytes_per_cycle: u32,
}

impl Default for TensixTiming {
    fn default() -> Self {
        let d = |from_risc| FifoDepths {
            from_risc,
            before_replay: 8,
            before_gate: 2,
        };
        TensixTiming {
            fifos: [d(32), d(16), d(16)],
            sync_latency: 1,
            cfg_latency: 1,
            wrcfg_latency: 2,
            rdcfg_latency: 2,
            misc_latency: 1,
            rwc_latency: 1,
            sfpu_latency: 1,
            sfpu_mad_latency: 2,
            fpu_latency: 5,
            mov_to_dst_latency: 4,
            movd2a_latency: 2,
            movd2b_latency: 4,
            dst_read_after_write: 4,
            unpack_setup: 2,
            unpack_bytes_per_cycle: 16,
            pack_setup: 2,
            pack_bytes_per_cycle: 16,
        }
    }
}

/// One thread's frontend state as the debug daisychain presents it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DebugState {
    /// A `MOP` queued before the MOP Expander or expanding (group D bit 25).
    pub mop_busy: bool,
    /// Anything of the thread queued or executing (bit 26, TTSync's signal).
    pub in_flight: bool,
    /// The template of the `MOP` being expanded (bits 84, 85).
    pub template: Option<u8>,
    /// The `MOP`/`MOP_CFG` the expander is processing, else the FIFO's head (bits 86-117).
    pub mop_word: Option<u32>,
    /// Bit 118: expander processing a `MOP`/`MOP_CFG` or the FIFO before it not empty.
    pub fifo1_busy: bool,
    /// Bit 125: the FIFO before the MOP Expander is full.
    pub fifo1_full: bool,
    /// The instruction waiting at the wait gate (frontend group, bits 55-86).
    pub gate_head: Option<u32>,
    /// The FIFO before the Replay Expander is full / empty (frontend group, bits 89, 90).
    pub fifo2_full: bool,
    pub fifo2_empty: bool,
}

/// Which TTSync register a TRISC loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TtSync {
    CoprocessorDone,
    MopExpanderDone,
}

/// Shared-unit budgets of one cycle.
#[derive(Default)]
struct CycleUse {
    sync: bool,
    wrcfg: bool,
    cfg_single: bool,
    cfg_rdwr: bool,
    matrix: bool,
    vector: bool,
    pack: bool,
}

/// The coprocessor's state.
#[derive(Debug)]
pub(crate) struct Tensix {
    /// The next cycle to simulate.
    now: u64,
    timing: TensixTiming,
    threads: [Frontend; 3],
    pub mop_cfg: [[u32; 9]; 3],
    /// `MaskHi` as the pushes so far leave it (for checking a pushed `MOP`'s expansion).
    push_mask_hi: [u32; 3],
    pub gprs: [[u32; 64]; 3],
    pub sync: sync::SyncUnit,
    pub config: config::BackendConfig,
    /// The destination register, shared by the Matrix Unit, unpacker 0, the packers and
    /// the Vector Unit.
    pub dst: dst::Dst,
    /// Whose rules the Matrix Unit's floating-point arithmetic follows (default: ttsim's).
    pub numerics: matrix::Numerics,
    /// The Vector Unit (SFPU) and its `LReg`s, shared by the three threads.
    pub vector: sfpu::VectorUnit,
    /// The thread has an instruction in the Vector Unit until this cycle (`STALLWAIT` C14).
    sfpu_until: [u64; 3],
    /// `SrcA`, `SrcB` and their banks' owners.
    pub src: src_regs::SrcRegs,
    /// The tile's L1, which the unpackers read and the packers write (`None` in unit tests
    /// that never unpack or pack).
    l1: Option<L1>,
    /// The four packers' output streams.
    packers: [pack::Packer; pack::PACKERS],
    /// `STOREREG` writes not yet seen by the device they target (by address; the last
    /// value wins): the NoC overlay's stream registers take them at their next access
    /// ([`Tensix::take_mmio_writes`]).
    mmio_writes: std::collections::BTreeMap<u32, u32>,
    /// Cycle from which each 8-row block of `DstBits` may be read, and the latest of them.
    dst_ready: [u64; 128],
    dst_ready_max: u64,
    /// Unpacker `u` fetches from L1 until this cycle, at speed `unpacker_speed[u]` (1, 2, 4).
    unpacker_busy: [u64; 2],
    unpacker_speed: [u32; 2],
    /// No `UNPACR` may start before this cycle (the address calculation of the last one).
    unpack_setup_until: u64,
    /// Thread `t` has an instruction in unpacker `u`'s pipeline until `[u][t]` (C1, C2).
    unpack_thread_until: [[u64; 3]; 2],
    /// Packer 0 writes until this cycle; thread `t` has work in it until `[t]` (C3).
    pack_busy: u64,
    pack_thread_until: [u64; 3],
    /// `FlipSrc` hand-overs waiting for their `UNPACR` to complete: (SrcA/SrcB, bank, cycle).
    pending_flips: Vec<(usize, usize, u64)>,
    /// After `MOVD2A`/`MOVD2B` the Matrix Unit only accepts that opcode until the cycle.
    mu_only: Option<(u8, u64)>,
    /// After `MOVA2D`/`MOVB2D`, `MOVD2A`, `MOVD2B`, `ELWMUL`, `MVMUL` wait until the cycle.
    mov_to_dst_until: u64,
    adcs: [counters::AdcSet; 3],
    rwcs: [counters::Rwc; 3],
    /// A Scalar Unit instruction holds its thread's gate until this cycle.
    thread_held_until: [u64; 3],
    scalar_busy_until: u64,
    /// The thread has an instruction executing until this cycle.
    inflight_until: [u64; 3],
    matrix_until: [u64; 3],
    /// Cycle of the last `RDCFG`/`WRCFG` issue.
    cfg_rdwr_at: Option<u64>,
    /// The last simulated cycle changed nothing and nothing is timed: only a RISC access
    /// can change the state.
    idle: bool,
    /// Instructions issued through each thread's wait gate.
    pub issued: [u64; 3],
    /// Why thread `t`'s wait gate did not issue in the last simulated cycle (`Issuing` when
    /// it did, or had nothing): what a TRISC held on the thread is charged to.
    why: [TensixWait; 3],
    /// What set `thread_held_until[t]` (the Scalar Unit or an `UNPACR`'s setup).
    held_by: [TensixWait; 3],
    /// What the performance counters count ([`perf`]).
    pub perf: perf::Signals,
    /// Each thread's held gate and executed posts in the current run ([`thread_log`]).
    pub log: [thread_log::ThreadLog; 3],
}

/// What a TRISC is held on ([`Tensix::wait_reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// A push into the full FIFO from the RISC (`after_mop`: RISCV B's, into the FIFO
    /// before the Replay Expander).
    Push { after_mop: bool },
    /// A TTSync read.
    Sync(TtSync),
}

impl Default for Tensix {
    fn default() -> Self {
        Tensix::new(TensixTiming::default())
    }
}

impl Tensix {
    pub fn new(timing: TensixTiming) -> Tensix {
        Tensix {
            now: 0,
            timing,
            threads: timing.fifos.map(Frontend::new),
            mop_cfg: [[0; 9]; 3],
            push_mask_hi: [0; 3],
            gprs: [[0; 64]; 3],
            sync: Default::default(),
            config: Default::default(),
            dst: Default::default(),
            numerics: Default::default(),
            vector: Default::default(),
            sfpu_until: [0; 3],
            src: Default::default(),
            l1: None,
            packers: Default::default(),
            mmio_writes: Default::default(),
            dst_ready: [0; 128],
            dst_ready_max: 0,
            unpacker_busy: [0; 2],
            unpacker_speed: [1; 2],
            unpack_setup_until: 0,
            unpack_thread_until: [[0; 3]; 2],
            pack_busy: 0,
            pack_thread_until: [0; 3],
            pending_flips: Vec::new(),
            mu_only: None,
            mov_to_dst_until: 0,
            adcs: Default::default(),
            rwcs: Default::default(),
            thread_held_until: [0; 3],
            scalar_busy_until: 0,
            inflight_until: [0; 3],
            matrix_until: [0; 3],
            cfg_rdwr_at: None,
            idle: true,
            issued: [0; 3],
            why: [TensixWait::Issuing; 3],
            held_by: [TensixWait::ScalarUnit; 3],
            perf: Default::default(),
            log: Default::default(),
        }
    }

    /// Whose rules the Matrix Unit and the Vector Unit's MAD follow.
    pub fn set_numerics(&mut self, numerics: matrix::Numerics) {
        self.numerics = numerics;
        self.vector.numerics = numerics;
    }

    /// Gives the unpackers and packers the tile's L1.
    pub fn attach_l1(&mut self, l1: L1) {
        self.l1 = Some(l1);
    }

    /// The next cycle to simulate (every cycle before it has been).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Whether the coprocessor can change state by itself (so a core waiting on it is not
    /// deadlocked).
    pub fn active(&self) -> bool {
        !self.idle
    }

    /// Simulates every cycle before `time`.
    /// The `STOREREG` writes executed so far, in address order, and forgets them.
    pub fn take_mmio_writes(&mut self) -> std::collections::BTreeMap<u32, u32> {
        std::mem::take(&mut self.mmio_writes)
    }

    pub fn advance_to(&mut self, time: u64) -> Result<(), FaultKind> {
        while self.now < time {
            let c = self.now;
            let progress = self.cycle()?;
            self.now += 1;
            let timer = self.next_timer();
            self.idle = !progress && timer.is_none();
            if !progress {
                self.now = self.now.max(timer.unwrap_or(time).min(time));
            }
            // A gate that held its head on another thread this cycle holds it through the
            // skipped ones too.
            for t in 0..3 {
                if thread_log::hands_over(self.why[t]) && !self.threads[t].fifo3.is_empty() {
                    let cause = crate::isa::lines::tensix_fifo(self.why[t]);
                    self.log[t].gate.note(c, self.now - c, cause);
                }
            }
            if self.perf.on {
                self.perf.count(c, self.now);
            }
        }
        Ok(())
    }

    /// The earliest cycle from `now` at which a timed hold lifts.
    fn next_timer(&self) -> Option<u64> {
        let held = self
            .thread_held_until
            .iter()
            .chain(&self.matrix_until)
            .chain(&self.sfpu_until);
        held.copied()
            .chain([self.scalar_busy_until])
            .chain(self.cfg_rdwr_at.map(|c| c + 1))
            .chain(
                // Only scanned while some block is still becoming readable.
                (self.dst_ready_max >= self.now)
                    .then_some(&self.dst_ready)
                    .into_iter()
                    .flatten()
                    .copied(),
            )
            .chain(self.unpack_thread_until.iter().flatten().copied())
            .chain(self.pack_thread_until)
            .chain([self.unpack_setup_until, self.mov_to_dst_until])
            .chain(self.mu_only.map(|(_, c)| c))
            .chain(self.pending_flips.iter().map(|f| f.2))
            .filter(|&c| c >= self.now)
            .min()
    }

    /// One cycle; `true` if anything changed.
    fn cycle(&mut self) -> Result<bool, FaultKind> {
        let c = self.now;
        let mut used = CycleUse::default();
        let mut progress = false;
        if self.pending_flips.iter().any(|f| f.2 <= c) {
            for &(which, bank, _) in self.pending_flips.iter().filter(|f| f.2 <= c) {
                self.src.banks[which][bank].allowed = src_regs::Client::MatrixUnit;
            }
            self.pending_flips.retain(|f| f.2 > c);
            progress = true;
        }
        let counting = self.perf.on.then(|| self.sample_start(c));
        for t in 0..3 {
            progress |= self.gate(t, c, &mut used)?;
        }
        if let Some(start) = counting {
            self.perf.sample = self.sample_end(start, used.matrix, used.vector);
        }
        for f in &mut self.threads {
            progress |= f.replay_step();
        }
        for (f, cfg) in self.threads.iter_mut().zip(&self.mop_cfg) {
            progress |= f.mop_step(cfg);
        }
        if used.cfg_rdwr {
            self.cfg_rdwr_at = Some(c);
        }
        Ok(progress)
    }

    /// Whether thread `t`'s latched wait lets instructions through at cycle `c`.
    fn wait_met(&self, t: usize, l: &Latch, c: u64) -> bool {
        if l.semwait {
            self.sync.semwait_met(l.condition as u8, l.sem_mask)
        } else {
            l.condition & self.keeping(t, c) == 0
        }
    }

    /// The `STALLWAIT` conditions that keep thread `t` waiting at cycle `c`, bit per
    /// condition (STALLWAIT.md). C0, C4-C6, C12 and C13 name units no modelled
    /// instruction occupies: they never keep it.
    fn keeping(&self, t: usize, c: u64) -> u16 {
        let keep = [
            (1, self.unpack_thread_until[0][t] > c),
            (2, self.unpack_thread_until[1][t] > c),
            (3, self.pack_thread_until[t] > c),
            (7, self.matrix_until[t] > c),
            (8, !self.unp_bank_free(A)),
            (9, !self.unp_bank_free(B)),
            (10, !self.src.mu_valid(A)),
            (11, !self.src.mu_valid(B)),
            (14, self.sfpu_until[t] > c),
        ];
        keep.iter().filter(|k| k.1).fold(0, |m, k| m | 1 << k.0)
    }

    /// Thread `t`'s wait gate at cycle `c`.
    fn gate(&mut self, t: usize, c: u64, used: &mut CycleUse) -> Result<bool, FaultKind> {
        let mut progress = false;
        if let Some(l) = self.threads[t].latch {
            match l.met_at {
                Some(m) if m < c => {
                    self.threads[t].latch = None;
                    progress = true;
                }
                None if self.wait_met(t, &l, c) => {
                    self.threads[t].latch = Some(Latch {
                        met_at: Some(c),
                        ..l
                    });
                    progress = true;
                }
                _ => {}
            }
        }
        if self.thread_held_until[t] > c {
            self.why[t] = self.held_by[t];
            return Ok(progress);
        }
        self.why[t] = TensixWait::Issuing;
        let Some(&head) = self.threads[t].fifo3.front() else {
            return Ok(progress);
        };
        if let Some(l) = self.threads[t].latch {
            if isa::blocked(head.word, l.block) {
                self.why[t] = self.latch_wait(t, &l, c);
                return Ok(progress);
            }
        }
        let exec_fault = |problem: String| FaultKind::TensixExec {
            word: head.word,
            risc: head.from,
            thread: t as u8,
            mnemonic: isa::mnemonic(head.word),
            problem,
        };
        if let Some(problem) = isa::unsupported(head.word) {
            return Err(exec_fault(problem));
        }
        if !self.issue(t, head, c, used).map_err(exec_fault)? {
            return Ok(progress);
        }
        self.threads[t].fifo3.pop_front();
        self.issued[t] += 1;
        // What the gate faces next cycle: an instruction that holds its thread (the Scalar
        // Unit, an UNPACR's setup) is what a held TRISC waits on from now.
        if self.thread_held_until[t] > c + 1 {
            self.why[t] = self.held_by[t];
        }
        Ok(true)
    }

    /// Issues `insn` from thread `t` at cycle `c` if its unit accepts it.
    fn issue(&mut self, t: usize, insn: Insn, c: u64, used: &mut CycleUse) -> Result<bool, String> {
        let w = insn.word;
        let o = opcode(w);
        let unit = isa::info(o).map(|i| i.unit);
        let tm = self.timing;
        let latency = match unit {
            Some(Unit::Sync) => {
                match o {
                    op::ATGETM => {
                        let m = isa::field(w, 0, 16) as usize;
                        // ATRELM's fairness: a mutex released by thread i while both other
                        // threads wait for it goes to thread (i + 1) % 3.
                        let turn = self.sync.released_by[m].map(|i| (i as usize + 1) % 3);
                        if turn.is_some_and(|p| p != t && self.wants_mutex(p, m))
                            || !self.sync.try_acquire(m, t as u8)
                        {
                            self.why[t] = TensixWait::Mutex;
                            return Ok(false);
                        }
                    }
                    op::ATRELM => self.sync.release(isa::field(w, 0, 16) as usize, t as u8),
                    _ => {
                        if used.sync {
                            self.why[t] = TensixWait::SyncUnit;
                            return Ok(false);
                        }
                        used.sync = true;
                        self.sync_op(t, w)?;
                    }
                }
                tm.sync_latency
            }
            Some(Unit::Config) => match o {
                op::SETC16 => {
                    self.config.setc16(t, w);
                    tm.cfg_latency
                }
                op::WRCFG => {
                    if used.wrcfg {
                        self.why[t] = TensixWait::ConfigUnit;
                        return Ok(false);
                    }
                    used.wrcfg = true;
                    used.cfg_rdwr = true;
                    self.config.wrcfg(t, &self.gprs[t], w);
                    tm.wrcfg_latency
                }
                _ => {
                    if used.cfg_single || (c > 0 && self.cfg_rdwr_at == Some(c - 1)) {
                        self.why[t] = TensixWait::ConfigUnit;
                        return Ok(false);
                    }
                    used.cfg_single = true;
                    if o == op::RDCFG {
                        used.cfg_rdwr = true;
                        self.config.rdcfg(t, &mut self.gprs[t], w);
                        tm.rdcfg_latency
                    } else {
                        self.config.rmwcib(t, w);
                        tm.cfg_latency
                    }
                }
            },
            Some(Unit::Scalar) => {
                if self.scalar_busy_until > c {
                    self.why[t] = TensixWait::ScalarUnit;
                    return Ok(false);
                }
                let n = scalar::cycles(w);
                if o == op::REG2FLOP {
                    scalar::reg2flop(&mut self.config, &mut self.adcs, &self.gprs[t], t, w);
                } else if o == op::STOREREG {
                    let (addr, value) = scalar::storereg(&self.gprs[t], w);
                    self.mmio_writes.insert(addr, value);
                } else {
                    scalar::execute(&mut self.gprs[t], w);
                }
                self.scalar_busy_until = c + n as u64;
                self.thread_held_until[t] = c + n as u64;
                self.held_by[t] = TensixWait::ScalarUnit;
                n
            }
            Some(Unit::Misc) => {
                match o {
                    op::NOP => {}
                    op::SETDVALID => self.setdvalid(t, w),
                    _ => counters::adc(&mut self.adcs, t, w),
                }
                tm.misc_latency
            }
            Some(Unit::Matrix) => match self.issue_matrix(t, w, c, used)? {
                Some(latency) => latency,
                None => return Ok(false),
            },
            Some(Unit::Unpack) => match self.issue_unpack(t, w, c)? {
                Some(latency) => latency,
                None => return Ok(false),
            },
            Some(Unit::Pack) => match self.issue_pack(t, w, c, used)? {
                Some(latency) => latency,
                None => return Ok(false),
            },
            Some(Unit::Vector) => {
                // One instruction per cycle from all threads together (VectorUnit.md).
                if used.vector || !self.vector.accepts(w, c) {
                    self.why[t] = TensixWait::VectorUnit;
                    return Ok(false);
                }
                used.vector = true;
                let ctx = sfpu::Context {
                    dst: &mut self.dst,
                    rwc: &mut self.rwcs[t],
                    thread_cfg: &self.config.thread[t],
                    cfg: &self.config.cfg[self.config.state_id(t)],
                };
                self.vector.execute(w, c, ctx)?;
                let n = if sfpu::two_cycles(w) {
                    tm.sfpu_mad_latency
                } else {
                    tm.sfpu_latency
                };
                self.sfpu_until[t] = c + n as u64;
                n
            }
            Some(Unit::MopExpander | Unit::ReplayExpander) => {
                return Err(format!(
                    "{} reached the wait gate unexpanded (the replay buffer cannot hold frontend instructions)",
                    isa::mnemonic(w)
                ))
            }
            _ => return Err("not modelled".into()),
        };
        self.inflight_until[t] = self.inflight_until[t].max(c + latency as u64);
        Ok(true)
    }

    /// Whether thread `t`'s next instruction at its gate is an `ATGETM` of mutex `m`.
    fn wants_mutex(&self, t: usize, m: usize) -> bool {
        self.threads[t].fifo3.front().is_some_and(|i| {
            opcode(i.word) == op::ATGETM && isa::field(i.word, 0, 16) as usize == m
        })
    }

    /// `SEMINIT`, `SEMPOST`, `SEMGET`, `STALLWAIT`, `SEMWAIT` of thread `t`.
    fn sync_op(&mut self, t: usize, w: u32) -> Result<(), String> {
        let block_of = |w| match isa::field(w, 15, 9) as u16 {
            0 => isa::block::B6,
            b => b,
        };
        let stall = |condition| Latch {
            semwait: false,
            condition,
            sem_mask: 0,
            block: block_of(w),
            met_at: None,
        };
        match opcode(w) {
            op::SEMINIT => self.sync.seminit(w),
            op::SEMPOST => {
                self.sync.sempost(w)?;
                for i in sync::selected(w) {
                    self.log[t].post(self.now, i as u8, false);
                }
            }
            op::SEMGET => {
                self.sync.semget(w)?;
                for i in sync::selected(w) {
                    self.log[t].post(self.now, i as u8, true);
                }
            }
            op::STALLWAIT => {
                let cond = match isa::field(w, 0, 15) as u16 {
                    0 => 0x7F,
                    c => c,
                };
                self.threads[t].latch = Some(stall(cond));
            }
            _ => {
                let cond = isa::field(w, 0, 2) as u16;
                self.threads[t].latch = Some(if cond == 0 {
                    stall(0x7F)
                } else {
                    Latch {
                        semwait: true,
                        condition: cond,
                        sem_mask: isa::field(w, 2, 8) as u8,
                        block: block_of(w),
                        met_at: None,
                    }
                });
            }
        }
        Ok(())
    }

    /// A push of `word` to thread `thread` by `risc` at `time` (a store to `addr`; the
    /// debug bus when `addr` is `INSTRN_BUF_CTRL0`). A full FIFO makes the store wait.
    pub fn push(
        &mut self,
        thread: u8,
        word: u32,
        risc: Risc,
        addr: u32,
        time: u64,
    ) -> Result<(), FaultKind> {
        self.advance_to(time)?;
        let t = thread as usize;
        let fault = |problem: String| FaultKind::TensixPush {
            word,
            addr: addr & !3,
            risc,
            thread,
            mnemonic: isa::mnemonic(word),
            problem,
        };
        if let Some(p) = isa::unsupported(word) {
            return Err(fault(p));
        }
        let debug = addr & !3 == mmio::INSTRN_BUF_CTRL0;
        let after_mop = risc == Risc::Brisc || debug;
        let o = opcode(word);
        if after_mop && matches!(o, op::MOP | op::MOP_CFG) {
            return Err(fault(
                "RISCV B and the debug bus push after the MOP Expander: it would reach the wait gate unexpanded".into(),
            ));
        }
        if o == op::MOP {
            let words = frontend::expand(word, self.push_mask_hi[t], &self.mop_cfg[t]);
            if let Some((w, p)) = words
                .iter()
                .find_map(|&w| isa::unsupported(w).map(|p| (w, p)))
            {
                return Err(fault(format!(
                    "its expansion contains {} ({w:#010x}): {p}",
                    isa::mnemonic(w)
                )));
            }
        }
        let f = &mut self.threads[t];
        let insn = Insn { word, from: risc };
        if after_mop {
            if f.fifo2.len() >= f.depths.before_replay {
                if debug {
                    return Err(fault(
                        "a debug-bus push into a full FIFO (the page says software must not)"
                            .into(),
                    ));
                }
                return Err(FaultKind::Blocked { addr, write: true });
            }
            f.fifo2.push_back(insn);
        } else {
            if f.fifo1.len() >= f.depths.from_risc {
                return Err(FaultKind::Blocked { addr, write: true });
            }
            if o == op::MOP_CFG {
                self.push_mask_hi[t] = isa::field(word, 0, 16);
            }
            f.fifo1.push_back(insn);
        }
        self.idle = false;
        Ok(())
    }

    /// Whether thread `t` has nothing in flight: its frontend is empty and nothing it issued
    /// is still executing (TTSync's `CoprocessorDoneCheck`, PCBufs' "Tensix Ti is idle").
    pub fn thread_done(&mut self, t: usize, time: u64) -> Result<bool, FaultKind> {
        self.advance_to(time)?;
        Ok(self.threads[t].empty()
            && self.inflight_until[t] <= self.now
            && self.thread_held_until[t] <= self.now)
    }

    /// A TTSync load by TRISC `t` at `time`: `true` once it may return.
    pub fn ttsync(&mut self, t: usize, which: TtSync, time: u64) -> Result<bool, FaultKind> {
        match which {
            TtSync::CoprocessorDone => self.thread_done(t, time),
            TtSync::MopExpanderDone => {
                self.advance_to(time)?;
                Ok(!self.threads[t].mop_busy())
            }
        }
    }

    /// `RISCV_DEBUG_REG_INSTRN_BUF_STATUS` at `time`: bit `i` "FIFO before thread i's Replay
    /// Expander not full", bit `4 + i` "that FIFO empty".
    pub fn status(&mut self, time: u64) -> Result<u32, FaultKind> {
        self.advance_to(time)?;
        let mut s = 0;
        for (i, f) in self.threads.iter().enumerate() {
            s |= ((f.fifo2.len() < f.depths.before_replay) as u32) << i;
            s |= (f.fifo2.is_empty() as u32) << (4 + i);
        }
        Ok(s)
    }

    /// The earliest cycle a push that just found thread `t`'s FIFO from the RISC full can
    /// succeed, when that is known to be later than the next cycle: while the MOP Expander
    /// is expanding it takes nothing from that FIFO, and nothing outside can speed it up.
    pub fn earliest_push(&self, t: usize) -> Option<u64> {
        let f = &self.threads[t];
        let left = f.expansion_left() as u64;
        (f.fifo1.len() >= f.depths.from_risc && left > 1).then(|| self.now + left)
    }

    /// What keeps thread `t`'s latched `STALLWAIT`/`SEMWAIT` from lifting at cycle `c`:
    /// the lowest semaphore of a `SEMWAIT`'s mask, the first `STALLWAIT` condition that
    /// still holds, or `WaitGate` when they are met and the block lifts next cycle.
    fn latch_wait(&self, t: usize, l: &Latch, c: u64) -> TensixWait {
        if l.met_at.is_some() {
            return TensixWait::WaitGate;
        }
        if l.semwait {
            return TensixWait::semaphore(l.sem_mask.trailing_zeros());
        }
        use TensixWait::*;
        let k = l.condition & self.keeping(t, c);
        [
            (1, Unpacker0),
            (2, Unpacker1),
            (3, Packer),
            (7, MatrixUnit),
            (8, SrcAFree),
            (9, SrcBFree),
            (10, SrcAValid),
            (11, SrcBValid),
            (14, VectorUnit),
        ]
        .iter()
        .find(|&&(bit, _)| k & (1 << bit) != 0)
        .map_or(WaitGate, |x| x.1)
    }

    /// What thread `t` waits on while a TRISC is held on it (`hold`), as of the last
    /// simulated cycle: for a push into a full FIFO, the first stage downstream that does
    /// not move (a playing Replay Expander, the wait gate's reason), else the MOP Expander
    /// when it is expanding (the thread issues one a cycle, a `MOP` takes one per
    /// instruction of its expansion); for TTSync, the wait gate's reason while anything is queued,
    /// else the unit still executing the thread's last instruction.
    pub fn wait_reason(&self, t: usize, hold: Hold) -> TensixWait {
        let f = &self.threads[t];
        let gate = || {
            if f.fifo3.is_empty() {
                TensixWait::Issuing
            } else {
                self.why[t]
            }
        };
        let downstream = || {
            if f.replay_playing() {
                TensixWait::ReplayExpander
            } else if f.fifo3.len() >= f.depths.before_gate || !f.fifo3.is_empty() {
                gate()
            } else {
                TensixWait::Issuing
            }
        };
        let fifo2_full = f.fifo2.len() >= f.depths.before_replay;
        // A stage downstream that does not move is the reason; while everything moves (one
        // instruction a cycle), a MOP being expanded is what keeps the RISC's FIFO full.
        let push_chain = |after_mop: bool| {
            let down = if after_mop || fifo2_full {
                downstream()
            } else {
                TensixWait::Issuing
            };
            if down == TensixWait::Issuing && !after_mop && f.mop_expanding() {
                TensixWait::MopExpander
            } else {
                down
            }
        };
        match hold {
            Hold::Push { after_mop } => push_chain(after_mop),
            Hold::Sync(TtSync::MopExpanderDone) => push_chain(false),
            Hold::Sync(TtSync::CoprocessorDone) => {
                if !f.empty() {
                    if !f.fifo3.is_empty() {
                        gate()
                    } else if f.mop_expanding() {
                        TensixWait::MopExpander
                    } else if f.replay_playing() {
                        TensixWait::ReplayExpander
                    } else {
                        TensixWait::Issuing
                    }
                } else {
                    self.in_flight(t)
                }
            }
        }
    }

    /// The unit still executing an instruction of thread `t` (nothing queued).
    fn in_flight(&self, t: usize) -> TensixWait {
        let c = self.now;
        use TensixWait::*;
        [
            (self.thread_held_until[t] > c, self.held_by[t]),
            (self.pack_thread_until[t] > c, Packer),
            (self.unpack_thread_until[0][t] > c, Unpacker0),
            (self.unpack_thread_until[1][t] > c, Unpacker1),
            (self.matrix_until[t] > c, MatrixUnit),
            (self.sfpu_until[t] > c, VectorUnit),
        ]
        .iter()
        .find(|x| x.0)
        .map_or(InFlight, |x| x.1)
    }

    /// Group D state of thread `t` for the debug daisychain (`DebugDaisychain.md`): the
    /// MOP Expander and the FIFO before it, and whether the thread has anything in flight.
    pub fn debug_state(&self, t: usize) -> DebugState {
        let f = &self.threads[t];
        DebugState {
            mop_busy: f.mop_busy(),
            in_flight: !(f.empty()
                && self.inflight_until[t] <= self.now
                && self.thread_held_until[t] <= self.now),
            template: f.expanding_template(),
            mop_word: f.mop_word(),
            fifo1_busy: f.mop_word().is_some() || !f.fifo1.is_empty(),
            fifo1_full: f.fifo1.len() >= f.depths.from_risc,
            gate_head: f.fifo3.front().map(|i| i.word),
            fifo2_full: f.fifo2.len() >= f.depths.before_replay,
            fifo2_empty: f.fifo2.is_empty(),
        }
    }

    /// What each Tensix thread with work left is waiting on, one line each (for a deadlock
    /// report).
    pub fn waits(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (t, f) in self.threads.iter().enumerate() {
            if f.empty() {
                continue;
            }
            let next = f.fifo3.front().map(|i| i.word);
            let why = match (f.latch, next) {
                (Some(l), Some(w)) if isa::blocked(w, l.block) && l.semwait => format!(
                    "held by SEMWAIT (condition {:#x}) on semaphores {:#04x}",
                    l.condition, l.sem_mask
                ),
                (Some(l), Some(w)) if isa::blocked(w, l.block) => {
                    format!("held by STALLWAIT (conditions {:#x})", l.condition)
                }
                (_, Some(w)) if opcode(w) == op::ATGETM => {
                    let m = isa::field(w, 0, 16) as usize;
                    match self.sync.mutex[m] {
                        Some(h) => format!("waiting for mutex {m}, held by T{h}"),
                        None => format!("waiting for mutex {m}"),
                    }
                }
                (_, Some(w)) => self.data_wait(w).unwrap_or_else(|| "not held".to_string()),
                _ => "not held".to_string(),
            };
            let next = next.map_or("nothing at the wait gate yet", isa::mnemonic);
            out.push(format!(
                "Tensix T{t}: {} instruction(s) queued, next {next}, {why}",
                f.queued()
            ));
        }
        out
    }

    /// Marks the state as changed by a RISC access (so the next cycles are simulated).
    pub fn touched(&mut self) {
        self.idle = false;
    }

    /// Before a RISC store at `time` changes the coprocessor's state (a semaphore, a GPR,
    /// the configuration): runs it up to the store, then marks it changed.
    pub fn risc_store(&mut self, time: u64) -> Result<(), FaultKind> {
        self.advance_to(time)?;
        self.touched();
        Ok(())
    }

    /// Instructions the MOP Expanders emitted, per thread.
    #[cfg(test)]
    pub fn mop_emitted(&self) -> [u64; 3] {
        [0, 1, 2].map(|t| self.threads[t].mop_emitted)
    }
}

#[cfg(test)]
mod tests;
