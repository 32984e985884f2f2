//! How each core's instructions are executed, chosen per core above the interpreter
//! ([`crate::isa::exec`]) and the JIT (`jit`, x86-64 hosts): the hart knows neither its
//! executor nor its kernel; the tile keeps both beside it.
//!
//! A core runs on its JIT when it has one and the debug daisychain does not sample it (a
//! sampled core is interpreted, instruction by instruction). In lines mode the JIT's
//! counters are folded into the hart's line table wherever the table is cut or read: before
//! the interpreter charges anything, when the core is held in reset, and when compiled
//! code is thrown away.

use crate::bus::TileBus;
use crate::chip::memory::TileMem;
use crate::error::FaultKind;
use crate::isa::exec::Exit;
use crate::isa::hart::Hart;

/// One core's executor.
#[derive(Debug, Default)]
pub(crate) struct Executor {
    /// Compiled code, when the JIT is enabled and available.
    #[cfg(all(target_arch = "x86_64", unix))]
    jit: Option<Box<crate::jit::Jit>>,
    /// The JIT of the L1 window, set aside while the core runs from NCRISC's instruction
    /// RAM, which is interpreted (compiled code is per window; the RAM is entered once per
    /// launch).
    #[cfg(all(target_arch = "x86_64", unix))]
    parked: Option<Box<crate::jit::Jit>>,
}

impl Executor {
    /// Runs `hart` until its clock is at least `limit` at a check point
    /// ([`crate::isa::exec`]), on the JIT where it has one.
    pub fn run(
        &mut self,
        hart: &mut Hart,
        mem: &mut TileMem,
        limit: u64,
        zicsr: bool,
    ) -> Result<Exit, FaultKind> {
        mem.risc = hart.risc;
        #[cfg(all(target_arch = "x86_64", unix))]
        if let Some(jit) = self.jit.as_deref_mut() {
            if !mem.sampled() {
                return crate::jit::run(jit, hart, mem, limit, zicsr);
            }
            // What the JIT counted belongs before anything charged by the interpreter.
            if let Some(t) = hart.lines.as_deref_mut() {
                jit.fold(t);
            }
        }
        hart.interpret(mem, limit, zicsr, true)
    }

    /// Compiles `hart`'s code from now on (after its kernel is installed), if the host
    /// supports it; lines mode must be chosen before.
    #[allow(unused_variables)]
    pub fn enable_jit(&mut self, hart: &Hart, mem: &TileMem) {
        #[cfg(all(target_arch = "x86_64", unix))]
        {
            let mut code: Vec<(u32, u32)> = mem
                .code
                .iter()
                .map(|(r, _)| (r.start, r.end() as u32))
                .collect();
            code.sort();
            let env = crate::jit::Env {
                fetch_base: hart.fetch_base,
                window: 4 * hart.code.len() as u32,
                l1_size: mem.l1.size(),
                local_size: hart.local.len() as u32,
                code,
                code_end: mem.code_end,
                timing: mem.timing,
                icache_sets: hart.core.icache_sets,
                strict: mem.misaligned == crate::config::Misaligned::Strict,
                lines: hart.lines.is_some(),
                exit: 0,
            };
            self.jit = crate::jit::Jit::new(env).map(Box::new);
        }
    }

    /// Drops compiled code (lines mode is being turned on: the JIT is enabled again after).
    pub fn disable_jit(&mut self) {
        #[cfg(all(target_arch = "x86_64", unix))]
        {
            self.jit = None;
        }
    }

    /// Re-decodes `hart`'s code from L1 (the host wrote into it), throwing away what was
    /// compiled from the old code after folding its counts.
    #[allow(unused_variables)]
    pub fn redecode(&mut self, hart: &mut Hart, l1: &crate::bus::L1) {
        #[cfg(all(target_arch = "x86_64", unix))]
        {
            if self.jit.is_none() {
                self.jit = self.parked.take();
            }
            self.parked = None;
            if let Some(j) = self.jit.as_mut() {
                j.reset(hart.lines.as_deref_mut());
            }
        }
        hart.redecode(l1);
    }

    /// `hart`'s pc entered its instruction RAM at `base`, holding `bytes`: it is
    /// interpreted there, its L1 JIT set aside.
    #[allow(unused_variables)]
    pub fn enter_iram(&mut self, hart: &mut Hart, base: u32, bytes: &[u8]) {
        #[cfg(all(target_arch = "x86_64", unix))]
        {
            self.parked = self.jit.take();
        }
        hart.enter_iram(base, bytes);
    }

    /// `hart`'s pc left its instruction RAM: back to the L1 window and its JIT.
    pub fn leave_iram(&mut self, hart: &mut Hart) {
        #[cfg(all(target_arch = "x86_64", unix))]
        if self.jit.is_none() {
            self.jit = self.parked.take();
        }
        hart.leave_iram();
    }

    /// Takes `hart` out of reset at chip cycle `time` (its line table starts afresh).
    pub fn release(&mut self, hart: &mut Hart, time: u64) {
        hart.release(time);
        #[cfg(all(target_arch = "x86_64", unix))]
        if let (Some(j), Some(_)) = (self.jit.as_mut(), hart.lines.as_ref()) {
            if hart.is_running() {
                j.discard_lines();
            }
        }
    }

    /// Puts a running `hart` back into reset, its line table complete.
    pub fn hold(&mut self, hart: &mut Hart) {
        #[cfg(all(target_arch = "x86_64", unix))]
        if let (Some(j), Some(t)) = (self.jit.as_deref_mut(), hart.lines.as_deref_mut()) {
            j.fold(t);
        }
        hart.hold();
    }
}
