//! A basic-block JIT for x86-64 hosts: the fast path of [`crate::isa::exec`].
//!
//! Blocks are compiled on first use from the hart's pre-decoded code ([`compile`]) into a
//! per-hart executable buffer and chained through a table indexed by instruction slot, so
//! a loop runs without returning to Rust. Generated code covers ALU, multiply, L1 and
//! local-RAM loads and stores, branches and jumps; everything else (MMIO, division,
//! CSRs, system instructions, every fault) is handed to the interpreter one instruction
//! at a time, so there is one implementation of each corner case.
//!
//! Both follow the same rule for when a core stops at its limit (at run entry and after
//! control transfers, see [`crate::isa::exec`]) and the same pipeline model
//! ([`crate::isa::pipeline`]; `compile` says how), so a run gives the
//! same result bit for bit with or without the JIT (`DeviceConfig::jit`); the tests check
//! this, and the QEMU differential test runs through the JIT.
//!
//! The code buffer is never writable and executable at once: it is switched to
//! read-write to append a block and back to read-execute before running.

mod compile;
mod x86;

use crate::chip::fault::FaultKind;
use crate::chip::memory::TileMem;
use crate::isa::exec::{Exit, Flow};
use crate::isa::hart::Hart;
pub(crate) use compile::Env;
use compile::{CHECK_LEN, CONT, LIMIT, MISS, YIELD};
use memmap2::{Mmap, MmapMut};
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
        Some(Jit {
            buf,
            base,
            used: stubs.len(),
            stubs: stubs.len(),
            table: vec![0; slots],
            env,
        })
    }

    /// Forgets every block (the code they came from changed).
    pub fn reset(&mut self) {
        self.table.iter_mut().for_each(|e| *e = 0);
        self.used = self.stubs;
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

    /// The checked entry of the block at `pc`, compiling it if needed.
    fn entry(&mut self, pc: u32, code: &[crate::isa::decode::Inst]) -> Option<usize> {
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
        let mut bytes = compile::compile(&self.env, &self.table, code, pc, self.base + self.used);
        if bytes.as_ref().is_some_and(|b| self.used + b.len() > BUFFER) {
            self.reset();
            bytes = compile::compile(&self.env, &self.table, code, pc, self.base + self.used);
        }
        let Some(bytes) = bytes else {
            self.table[slot] = 1;
            return None;
        };
        let addr = self.append(&bytes)?;
        self.table[slot] = addr;
        Some(addr)
    }

    fn enter(&self, core: &mut crate::isa::hart::Core, addr: usize) {
        if !matches!(self.buf, Buf::Executable(_)) {
            return;
        }
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
pub(crate) fn run(h: &mut Hart, mem: &mut TileMem, zicsr: bool) -> Result<Exit, FaultKind> {
    let Some(mut jit) = h.jit.take() else {
        return h.interpret(mem, zicsr, true);
    };
    let r = run_with(&mut jit, h, mem, zicsr);
    h.jit = Some(jit);
    r
}

fn run_with(
    jit: &mut Jit,
    h: &mut Hart,
    mem: &mut TileMem,
    zicsr: bool,
) -> Result<Exit, FaultKind> {
    h.core.l1 = mem.l1.base() as usize;
    h.core.local = h.local.as_mut_ptr() as usize;
    h.core.table = jit.table.as_ptr() as usize;
    let mut check = true;
    loop {
        if let Some(entry) = jit.entry(h.core.pc, &h.code) {
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
        match h.step(mem, zicsr)? {
            Flow::Next => check = false,
            Flow::Transfer => check = true,
            Flow::Halted(code) => return Ok(Exit::Halted(code)),
            Flow::ResetWrite => return Ok(Exit::ResetWrite),
            Flow::Yield => return Ok(Exit::Yield),
            Flow::Blocked { addr, write } => return Ok(Exit::Blocked { addr, write }),
        }
    }
}
