//! One core ("hart"): registers, clock, local RAM, CSRs and the pre-decoded code it runs.
//!
//! Code is decoded once, when the kernel is loaded, into a table indexed by
//! `(pc - fetch_base) / 4` covering the core's fetch window (boot word and code region).
//! Stores into code regions fault ([`crate::chip::memory`]), so the table can never go stale
//! while a kernel runs; the host writing into code marks the tile for re-decoding.
//! The interpreter itself is in [`crate::isa::exec`].

use crate::bus::L1;
use crate::isa::csr::Csrs;
use crate::isa::decode::{decode, Inst, Op};
use crate::isa::pipeline::{Pipe, Timing, ICACHE_LINE};
use riscv_linker::{MemoryMap, Risc};

/// Register index the pre-decoded code uses for writes to `x0` (discarded).
pub(crate) const SINK: u8 = 32;

/// Where a core is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HartState {
    /// No kernel loaded.
    Empty,
    /// Loaded and held in reset.
    Reset,
    /// Running.
    Running,
    /// Halted by `ecall`, with the exit code from `a0`.
    Exited(u32),
    /// Stopped by a fault (the run reported it).
    Faulted,
}

/// The architectural state the interpreter and the JIT (module `jit`) share, laid out
/// for generated code (`repr(C)`, fixed offsets).
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct Core {
    /// x0..x31, then the write sink (index [`SINK`]); padded to 64 so that a register
    /// number masked with 63 needs no bounds check.
    pub regs: [u32; 64],
    /// The core's own clock: the chip cycle it has reached.
    pub time: u64,
    /// Instructions retired since the core left reset.
    pub instret: u64,
    /// The clock value at which the current run stops (checked at control transfers).
    pub limit: u64,
    pub pc: u32,
    /// Why generated code returned (see `jit`).
    pub exit_reason: u32,
    /// Host addresses for generated code: L1 base, local RAM base, block table.
    pub l1: usize,
    pub local: usize,
    pub table: usize,
    /// The latest cycle at which this core may make an L1 or register access before
    /// another core must run (see [`crate::chip::tile`]); `u64::MAX` when it runs alone.
    pub horizon: u64,
    /// Instruction-cache sets (lines) of this core: a power of two.
    pub icache_sets: u32,
    /// The pipeline's timing state ([`crate::isa::pipeline`]).
    pub pipe: Pipe,
    /// Accesses whose result may change without any store (a CSR, a clock, a FIFO pop, a
    /// register with side effects): counted by the interpreter, which runs every such
    /// access (the JIT never does). A core that did none and stored nothing since the
    /// deadlock detector last looked has only read memory ([`crate::chip::stall`]).
    pub observed: u64,
    /// Host address of the JIT's lines-mode counters (see `jit`), 0 outside lines mode.
    pub lines: usize,
}

impl Core {
    fn new(pc: u32, icache_sets: u32) -> Core {
        Core {
            regs: [0; 64],
            time: 0,
            instret: 0,
            limit: 0,
            pc,
            exit_reason: 0,
            l1: 0,
            local: 0,
            table: 0,
            horizon: u64::MAX,
            icache_sets,
            pipe: Pipe::default(),
            observed: 0,
            lines: 0,
        }
    }
}

/// One core of a tile.
#[derive(Debug)]
pub(crate) struct Hart {
    pub risc: Risc,
    pub map: MemoryMap,
    pub core: Core,
    /// The chip cycle at which the core left reset.
    pub start_time: u64,
    /// Private local RAM (allocated when a kernel is loaded).
    pub local: Vec<u8>,
    /// Pre-decoded fetch window.
    pub code: Vec<Inst>,
    /// Address of `code[0]`.
    pub fetch_base: u32,
    /// The L1 fetch window (`code`, `fetch_base`) set aside while the core fetches from
    /// NCRISC's instruction RAM ([`Hart::enter_iram`]).
    pub l1_window: Option<(Vec<Inst>, u32)>,
    pub csrs: Csrs,
    pub state: HartState,
    /// The code loads an NIU register page address (`lui` of `0xFFB2x`/`0xFFB3x`).
    pub uses_noc: bool,
    /// Waiting on a FIFO (address, write) without having retired anything since it last
    /// tried: a tile whose running cores all are is deadlocked.
    pub stuck: Option<(u32, bool)>,
    /// Cycles per instruction and cause, in lines mode ([`crate::isa::lines`]): charged by
    /// the interpreter, and by the JIT's counters when they are folded in.
    pub lines: Option<Box<crate::isa::lines::LineTable>>,
}

/// Decodes one instruction word for the pre-decoded table (writes to `x0` go to [`SINK`]).
fn predecode(word: u32) -> Inst {
    let mut i = decode(word);
    if i.writes_rd() && i.rd == 0 {
        i.rd = SINK;
    }
    i
}

/// Whether `code` loads an NIU register page address (`lui` of `0xFFB2x`/`0xFFB3x`).
fn uses_niu(code: &[Inst]) -> bool {
    let niu = riscv_linker::mmio::NOC0_REGS_BASE
        ..riscv_linker::mmio::NOC1_REGS_BASE + riscv_linker::mmio::NOC_REGS_SIZE;
    code.iter()
        .any(|i| i.op == Op::Lui && niu.contains(&(i.imm as u32)))
}

impl Hart {
    pub fn new(map: MemoryMap) -> Hart {
        Hart {
            risc: map.risc,
            map,
            core: Core::new(map.reset_pc, Timing::icache_bytes(map.risc) / ICACHE_LINE),
            start_time: 0,
            local: Vec::new(),
            code: Vec::new(),
            fetch_base: 0,
            l1_window: None,
            csrs: Csrs::default(),
            state: HartState::Empty,
            uses_noc: false,
            stuck: None,
            lines: None,
        }
    }

    /// The fetch window: from the boot word (if any) to the end of the code region, or of
    /// the kernel range when the layout has one (tt-metal's).
    pub fn fetch_window(&self) -> (u32, u32) {
        let m = &self.map;
        let start = m.boot.map_or(m.code.start, |b| b.start.min(m.code.start));
        let end = m.kernel.map_or(m.code.end(), |k| k.end().max(m.code.end()));
        (start, end as u32)
    }

    fn fetchable(&self, addr: u32) -> bool {
        let m = &self.map;
        m.code.contains(addr, 4)
            || m.boot.is_some_and(|b| b.contains(addr, 4))
            || m.kernel.is_some_and(|k| k.contains(addr, 4))
    }

    /// Installs a loaded kernel: allocates local RAM, decodes the fetch window from `l1`
    /// and holds the core in reset.
    pub fn install(&mut self, l1: &L1) {
        self.local = vec![0; self.map.local_ram.size as usize];
        self.redecode(l1);
        self.state = HartState::Reset;
    }

    /// NCRISC's instruction RAM (`base`, bytes) on an arch that has one; `None` for other
    /// cores.
    pub fn iram(&self) -> Option<(u32, u32)> {
        (self.risc == Risc::Ncrisc)
            .then(|| self.map.arch.ncrisc_iram())
            .flatten()
    }

    /// Whether the core fetches from its instruction RAM now.
    pub fn in_iram(&self) -> bool {
        self.l1_window.is_some()
    }

    /// The core's pc entered its instruction RAM at `base`: decodes `bytes` (the RAM's
    /// contents now: the mover is the only writer, and a write while the core is inside is
    /// refused by the tile) as the fetch window, the L1 window set aside.
    pub fn enter_iram(&mut self, base: u32, bytes: &[u8]) {
        let code: Vec<Inst> = bytes
            .chunks_exact(4)
            .map(|w| predecode(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
            .collect();
        self.uses_noc |= uses_niu(&code);
        let l1 = std::mem::replace(&mut self.code, code);
        self.l1_window = Some((l1, self.fetch_base));
        self.fetch_base = base;
    }

    /// The core's pc left its instruction RAM: the L1 window is the fetch window again.
    pub fn leave_iram(&mut self) {
        if let Some((code, base)) = self.l1_window.take() {
            self.code = code;
            self.fetch_base = base;
        }
    }

    /// Re-decodes the fetch window from L1 (after the host wrote into code).
    pub fn redecode(&mut self, l1: &L1) {
        self.l1_window = None;
        let (start, end) = self.fetch_window();
        self.fetch_base = start;
        self.code.clear();
        for addr in (start..end).step_by(4) {
            let inst = if self.fetchable(addr) && addr + 4 <= l1.size() {
                predecode(l1.load::<4>(addr))
            } else {
                Inst {
                    op: Op::NoFetch,
                    ..Inst::ILLEGAL
                }
            };
            self.code.push(inst);
        }
        self.uses_noc = uses_niu(&self.code);
    }

    /// Takes the core out of reset at chip cycle `time`: fresh registers, pc at the reset
    /// vector, `sp` at the top of local RAM, local RAM left as it was.
    pub fn release(&mut self, time: u64) {
        if self.state == HartState::Empty {
            return;
        }
        self.core.regs = [0; 64];
        self.core.regs[2] = self.map.stack_top;
        self.core.pc = self.map.reset_pc;
        self.core.time = time;
        self.start_time = time;
        self.core.instret = 0;
        self.core.horizon = u64::MAX;
        self.core.pipe.reset(time);
        self.stuck = None;
        if let Some(t) = self.lines.as_deref_mut() {
            *t = crate::isa::lines::LineTable::new(self.fetch_base);
        }
        self.csrs = Csrs::default();
        self.state = HartState::Running;
    }

    /// Lets a running core go on at chip cycle `time` (a new run of firmware that never
    /// stopped): registers, pc and counters as they were; its clock moves up to `time`
    /// when it is behind (it idled between the runs, nothing in flight).
    pub fn resume(&mut self, time: u64) {
        if self.is_running() && self.core.time < time {
            self.core.time = time;
            self.core.pipe.reset(time);
        }
    }

    /// Puts a running core back into reset (its soft-reset bit was set).
    pub fn hold(&mut self) {
        if self.state != HartState::Empty {
            self.state = HartState::Reset;
        }
    }

    /// Turns lines mode on for this hart (after `install`): every cycle is charged to an
    /// instruction and a cause.
    pub fn enable_lines(&mut self) {
        self.lines = Some(Box::new(crate::isa::lines::LineTable::new(self.fetch_base)));
    }

    pub fn is_running(&self) -> bool {
        self.state == HartState::Running
    }
}
