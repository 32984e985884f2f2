//! A basic-block JIT for x86-64 hosts: the fast path of [`crate::isa::exec`].
//!
//! Blocks are compiled from the hart's pre-decoded code ([`compile`]) into a per-hart
//! executable buffer and chained through a table indexed by instruction slot, so a loop
//! runs without returning to Rust. Generated code covers ALU, multiply, L1 and local-RAM
//! loads and stores, branches and jumps; everything else (MMIO, division, CSRs, system
//! instructions, every fault) is handed to the interpreter one instruction at a time, so
//! there is one implementation of each corner case. The code buffer is never writable and
//! executable at once.
//!
//! Both engines follow the same rule for when a core stops at its limit and the same
//! pipeline model ([`crate::isa::pipeline`]), so a run gives the same result bit for bit
//! with or without the JIT (`DeviceConfig::jit`). In lines mode ([`crate::isa::lines`])
//! the blocks also count what they charge, and [`Jit::fold`] turns the counts into the
//! line table's cycles. See docs/design/emulator-layers.md, "The executor", and
//! docs/design/line-cycles.md, "The JIT counts the same cycles".

mod compile;
mod x86;

use crate::bus::TileBus;
use crate::error::FaultKind;
use crate::isa::exec::Exit;
use crate::isa::hart::Hart;
use crate::isa::lines::{Cause, LineTable};
pub(crate) use compile::Env;
use compile::{BlockLines, Count, CHECK_LEN, CONT, LIMIT, MISS, YIELD};
use memmap2::{Mmap, MmapMut};
use std::ops::ControlFlow;
use x86::*;

/// Bytes of executable memory per hart (reserved; pages are used as blocks are added).
const BUFFER: usize = 1 << 20;

enum Buf {
    Executable(Mmap),
    /// Transiently, while switching.
    Gone,
}

/// One hart's compiled code.
pub(crate) struct Jit {
    buf: Buf,
    base: usize,
    used: usize,
    /// Bytes of the entry/exit stubs at the start of the buffer.
    stubs: usize,
    /// Checked-entry address per instruction slot of the fetch window (0: not compiled,
    /// 1: starts with an instruction left to the interpreter).
    table: Vec<usize>,
    env: Env,
    /// Lines mode: the counters generated code adds to, and what they mean.
    lines: Option<Lines>,
}

/// A hart's lines-mode counters (see `compile`'s module docs).
struct Lines {
    /// `[0]`: how many blocks are on the dirty list; `[1..=slots]`: the dirty list (block
    /// ids, each at most once); then every block's counters ([`BlockLines::first`]).
    counts: Vec<u64>,
    /// Per block id.
    blocks: Vec<BlockLines>,
    /// Instruction-cache miss penalty.
    icache_miss: u64,
    /// Scratch: exits per instruction of the block being folded.
    exits: Vec<u64>,
    /// Per slot: how often the hart was about to start a block there that is not compiled
    /// yet (up to [`HOT`]).
    heat: Vec<u8>,
}

/// Lines mode compiles a block once the hart has come to its start this often; before, the
/// interpreter runs (and charges) it. Compiling costs about as much as interpreting a short
/// block a hundred times (two `mprotect`s of the buffer dominate), and most blocks of a short
/// kernel (the demo's) run only a few times; a hot loop loses little.
const HOT: u8 = 64;

impl Lines {
    fn new(slots: usize, icache_miss: u64) -> Lines {
        Lines {
            counts: vec![0; 1 + slots],
            blocks: Vec::new(),
            icache_miss,
            exits: Vec::new(),
            heat: vec![0; slots],
        }
    }

    /// Adds the dirty blocks' counts to `table` (`None`: drops them) and zeroes them.
    fn fold(&mut self, mut table: Option<&mut LineTable>) {
        let dirty = std::mem::take(&mut self.counts[0]) as usize;
        for d in 1..=dirty {
            let b = &self.blocks[self.counts[d] as usize];
            let f = b.first as usize;
            let c = &mut self.counts[f..f + 2 + b.counters.len()];
            let entries = std::mem::replace(&mut c[0], u64::MAX).wrapping_add(1);
            let taken = std::mem::take(&mut c[1]);
            let Some(table) = table.as_deref_mut() else {
                c.iter_mut().skip(2).for_each(|n| *n = 0);
                continue;
            };
            self.exits.clear();
            self.exits.resize(b.insts.len() + 1, 0);
            for (&(k, what), n) in b.counters.iter().zip(&mut c[2..]) {
                let n = std::mem::take(n);
                let k = k as usize;
                let Some(inst) = b.insts.get(k) else {
                    continue; // an exit before the instruction that ended the block
                };
                match what {
                    Count::Exit => self.exits[k] += n,
                    Count::ICacheMiss => {
                        table.add(inst.pc, Cause::ICacheMiss as usize, n * self.icache_miss)
                    }
                    Count::LoadUse => table.add(inst.pc, Cause::LoadUse as usize, n),
                    Count::StorePort => table.add(inst.pc, Cause::StorePort as usize, n),
                }
            }
            let mut passes = entries;
            for (inst, exits) in b.insts.iter().zip(&self.exits) {
                passes -= exits;
                let taken = if inst.branch { taken } else { 0 };
                let fell = passes - taken;
                table.add(
                    inst.pc,
                    Cause::Issue as usize,
                    fell * inst.issue[0] + taken * inst.issue[1],
                );
                table.add(
                    inst.pc,
                    Cause::Mispredict as usize,
                    fell * inst.mispredict[0] + taken * inst.mispredict[1],
                );
            }
        }
    }

    /// Forgets every block (after a fold, or their counts are dropped).
    fn clear(&mut self, slots: usize) {
        self.counts.clear();
        self.counts.resize(1 + slots, 0);
        self.blocks.clear();
        self.heat.iter_mut().for_each(|h| *h = 0);
    }
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jit")
            .field("used", &self.used)
            .finish_non_exhaustive()
    }
}

type Enter = unsafe extern "sysv64" fn(*mut crate::isa::hart::Core, usize);

impl Jit {
    /// A JIT for a hart described by `env` (its `exit` is filled in here). `None` if the
    /// host refuses executable memory; the hart then interprets.
    pub fn new(mut env: Env) -> Option<Jit> {
        let mut map = MmapMut::map_anon(BUFFER).ok()?;
        let base = map.as_ptr() as usize;
        let mut a = Asm::new();
        // enter(core = rdi, target = rsi)
        for r in [RBX, RBP, R12, R13, R14, R15] {
            a.push(r);
        }
        a.alu_imm(true, 5, Rm::Reg(RSP), 8);
        a.mov_rr64(RBX, RDI);
        a.load64(R12, at(RBX, compile::L1_OFF));
        a.load64(R13, at(RBX, compile::LOCAL_OFF));
        a.load64(RBP, at(RBX, compile::TABLE_OFF));
        a.load64(R14, at(RBX, compile::TIME_OFF));
        a.load64(R15, at(RBX, compile::INSTRET_OFF));
        a.load64(R8, at(RBX, compile::PORT));
        a.load32(R9, at(RBX, compile::LOAD_AT));
        a.load32(R10, at(RBX, compile::STORE_AT));
        a.load64(R11, at(RBX, compile::LAST_EMIT));
        a.jmp_reg(RSI);
        env.exit = base + a.len();
        a.store64(at(RBX, compile::TIME_OFF), R14);
        a.store64(at(RBX, compile::INSTRET_OFF), R15);
        a.store64(at(RBX, compile::PORT), R8);
        a.store32(at(RBX, compile::LOAD_AT), R9);
        a.store32(at(RBX, compile::STORE_AT), R10);
        a.store64(at(RBX, compile::LAST_EMIT), R11);
        a.alu_imm(true, 0, Rm::Reg(RSP), 8);
        for r in [R15, R14, R13, R12, RBP, RBX] {
            a.pop(r);
        }
        a.ret();
        let stubs = a.finish()?;
        map[..stubs.len()].copy_from_slice(&stubs);
        let buf = Buf::Executable(map.make_exec().ok()?);
        let slots = (env.window / 4) as usize;
        let lines = env
            .lines
            .then(|| Lines::new(slots, env.timing.icache_miss as u64));
        Some(Jit {
            buf,
            base,
            used: stubs.len(),
            stubs: stubs.len(),
            table: vec![0; slots],
            env,
            lines,
        })
    }

    /// Forgets every block (the code they came from changed, or the buffer is full); in
    /// lines mode their counts go to `table` first.
    pub fn reset(&mut self, table: Option<&mut LineTable>) {
        self.table.iter_mut().for_each(|e| *e = 0);
        self.used = self.stubs;
        let slots = self.table.len();
        if let Some(l) = self.lines.as_mut() {
            l.fold(table);
            l.clear(slots);
        }
    }

    /// Lines mode: adds what the blocks counted since the last fold to `table`.
    pub fn fold(&mut self, table: &mut LineTable) {
        if let Some(l) = self.lines.as_mut() {
            l.fold(Some(table));
        }
    }

    /// Lines mode: drops what the blocks counted since the last fold (a new run starts).
    pub fn discard_lines(&mut self) {
        if let Some(l) = self.lines.as_mut() {
            l.fold(None);
        }
    }

    fn append(&mut self, bytes: &[u8]) -> Option<usize> {
        let at = self.used;
        let mut w = match std::mem::replace(&mut self.buf, Buf::Gone) {
            Buf::Executable(x) => x.make_mut().ok()?,
            Buf::Gone => return None,
        };
        w[at..at + bytes.len()].copy_from_slice(bytes);
        self.buf = Buf::Executable(w.make_exec().ok()?);
        self.used += bytes.len();
        Some(self.base + at)
    }

    /// The checked entry of the block at `pc`, compiling it if needed (a full buffer is
    /// emptied, its counts going to `lines`).
    fn entry(
        &mut self,
        pc: u32,
        code: &[crate::isa::decode::Inst],
        lines: Option<&mut LineTable>,
    ) -> Option<usize> {
        let off = pc.wrapping_sub(self.env.fetch_base);
        if off >= self.env.window || pc & 3 != 0 || !matches!(self.buf, Buf::Executable(_)) {
            return None;
        }
        let slot = (off / 4) as usize;
        match self.table[slot] {
            0 => {}
            1 => return None,
            a => return Some(a),
        }
        if let Some(heat) = self.lines.as_mut().map(|l| &mut l.heat[slot]) {
            if *heat < HOT {
                *heat += 1;
                return None;
            }
        }
        let ids = |l: &Option<Lines>| {
            l.as_ref()
                .map(|l| (l.blocks.len() as u32, l.counts.len() as u32))
        };
        // At the end of the buffer; compiled again at its start once a full buffer is emptied.
        let here =
            |j: &Self| compile::compile(&j.env, &j.table, code, pc, j.base + j.used, ids(&j.lines));
        let mut bytes = here(self);
        if bytes
            .as_ref()
            .is_some_and(|b| self.used + b.0.len() > BUFFER)
        {
            self.reset(lines);
            bytes = here(self);
        }
        let Some((bytes, counters)) = bytes else {
            self.table[slot] = 1;
            return None;
        };
        let addr = self.append(&bytes)?;
        self.table[slot] = addr;
        if let (Some(l), Some(b)) = (self.lines.as_mut(), counters) {
            // At most one block per slot: the dirty list (`slots` long) never overflows.
            l.counts.push(u64::MAX);
            l.counts.push(0);
            l.counts.resize(l.counts.len() + b.counters.len(), 0);
            l.blocks.push(b);
        }
        Some(addr)
    }

    fn enter(&mut self, core: &mut crate::isa::hart::Core, addr: usize) {
        if !matches!(self.buf, Buf::Executable(_)) {
            return;
        }
        core.lines = self
            .lines
            .as_mut()
            .map_or(0, |l| l.counts.as_mut_ptr() as usize);
        // SAFETY: `base` starts with the entry stub compiled above, the buffer is
        // executable, and `addr` is a block entry in it. Generated code only touches the
        // core (rbx), the table, and guest memory inside the bounds it checks.
        unsafe {
            let enter: Enter = std::mem::transmute::<usize, Enter>(self.base);
            enter(core, addr);
        }
    }
}

/// [`Hart::run`] with the JIT.
/// Runs `h` on its compiled code until its clock is at least `limit` at a check point,
/// handing what generated code does not cover to the interpreter one instruction at a time.
pub(crate) fn run<B: TileBus>(
    jit: &mut Jit,
    h: &mut Hart,
    mem: &mut B,
    limit: u64,
    zicsr: bool,
) -> Result<Exit, FaultKind> {
    h.core.limit = limit;
    let r = run_with(jit, h, mem, zicsr);
    if let Some(t) = h.lines.as_deref_mut() {
        if matches!(r, Ok(Exit::Halted(_) | Exit::ResetWrite) | Err(_)) {
            jit.fold(t);
        }
    }
    r
}

fn run_with<B: TileBus>(
    jit: &mut Jit,
    h: &mut Hart,
    mem: &mut B,
    zicsr: bool,
) -> Result<Exit, FaultKind> {
    h.core.l1 = mem.l1().base() as usize;
    h.core.local = h.local.as_mut_ptr() as usize;
    h.core.table = jit.table.as_ptr() as usize;
    let mut check = true;
    loop {
        if let Some(entry) = jit.entry(h.core.pc, &h.code, h.lines.as_deref_mut()) {
            jit.enter(&mut h.core, if check { entry } else { entry + CHECK_LEN });
            match h.core.exit_reason {
                LIMIT => return Ok(Exit::Limit),
                YIELD => return Ok(Exit::Yield),
                MISS => {
                    check = true;
                    continue;
                }
                CONT => {
                    check = false;
                    continue;
                }
                _ => check = false, // SLOW: interpret the instruction at pc
            }
        }
        if check && h.core.time >= h.core.limit {
            return Ok(Exit::Limit);
        }
        let flow = if h.lines.is_some() {
            h.step_lines(mem, zicsr, |t| jit.fold(t))
        } else {
            h.step(mem, zicsr)
        };
        match flow?.go_on() {
            ControlFlow::Continue(at_check) => check = at_check,
            ControlFlow::Break(exit) => return Ok(exit),
        }
    }
}
