//! One Tensix tile: five cores sharing an L1 and a register block, run in quanta.
//!
//! ## Scheduling: causal and deterministic
//!
//! The tile advances in windows of `quantum` cycles. Within a window the cores run in
//! causal order: the running core whose clock is furthest behind (ties: [`Risc`] order)
//! runs until it reaches an L1 or register access at a cycle later than every other
//! running core's clock (its *horizon*; for a core earlier in [`Risc`] order, one cycle
//! earlier, which breaks ties), or the window's end. It then stops before that access
//! (`Exit::Yield`), and the core now furthest behind runs. So every access to memory the
//! cores share happens in cycle order, whatever the interleaving: no core observes another
//! core's store before that store's cycle, and an L1 port two cores share serves them first
//! come, first served (ties: [`Risc`] order). Local-RAM accesses and register arithmetic
//! never wait. A core alone in its tile never stops for others (its horizon is
//! unbounded), and its windows are merged.
//!
//! A store to `SOFT_RESET_0` is applied right after the storing instruction: a released
//! core starts at the storing core's clock. A core only notices the end of a window at a
//! control transfer (see [`crate::isa::exec`]), so it may overshoot by one straight-line run.
//! Nothing in a tile depends on other tiles or on host threads, which is what makes a run
//! bit-exact whatever the number of threads.
//!
//! ## L1 ports
//!
//! RISCV B, NC and T0 share one L1 port, T1 and T2 have one each (`L1.md`,
//! `MemoryOrdering.md`); the tile keeps each port's next free cycle and hands it to the
//! core that runs.

use crate::chip::executor::Executor;
use crate::chip::holds::HoldLog;
use crate::chip::loader::Program;
use crate::chip::memory::TileMem;
use crate::devices::Wait;
use crate::error::{Fault, FaultKind, Other, OtherCore};
use crate::isa::exec::Exit;
use crate::isa::hart::{Hart, HartState};
use crate::isa::lines::{self, Cause};
use crate::tensix::Hold;
use riscv_linker::{Arch, NocCoord, Risc};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// One tile and its cores.
#[derive(Debug)]
pub(crate) struct Tile {
    pub chip: u32,
    pub coord: NocCoord,
    /// Position in the device's tile list (chip-major), used to order faults.
    pub global: usize,
    pub harts: Vec<Hart>,
    /// How each core runs (interpreter or JIT), by [`Risc::index`].
    pub executors: Vec<Executor>,
    /// The kernel each core was loaded with, by [`Risc::index`].
    pub kernels: Vec<Option<Arc<Program>>>,
    /// Per hart, a kernel its firmware runs from `[start, end)` (tt-metal's dispatch writes
    /// it there): it names the addresses in that range.
    pub launched: Vec<Option<(u32, u32, Arc<Program>)>>,
    pub mem: TileMem,
    /// The arch has Zicsr (Blackhole).
    pub zicsr: bool,
    pub quantum: u64,
    pub budget: u64,
    /// Start of the current scheduling window (a chip cycle).
    pub now: u64,
    /// Chip cycle at which the current run started.
    pub run_start: u64,
    /// The host wrote into a code region: re-decode before running.
    pub code_dirty: AtomicBool,
    /// Next free cycle of each L1 port ([`l1_port`]).
    pub ports: [u64; 3],
    /// Only BRISC leaves reset when a run starts; the other cores wait for it to clear
    /// their `SOFT_RESET_0` bits, as tt-metal's firmware does (tt-metal's layout).
    pub brisc_boots: bool,
    /// When each core was held in this run, by [`Risc::index`] (module `holds`).
    pub holds: Vec<HoldLog>,
}

/// The L1 port a core uses: BRISC, NCRISC and TRISC0 share port 0.
pub(crate) const fn l1_port(risc: Risc) -> usize {
    match risc {
        Risc::Brisc | Risc::Ncrisc | Risc::Trisc0 => 0,
        Risc::Trisc1 => 1,
        Risc::Trisc2 => 2,
    }
}

impl Tile {
    /// The program that names `pc` on hart `i`: a kernel launched there whose range holds
    /// it, else what was loaded on the hart.
    pub(crate) fn program_at(&self, i: usize, pc: u32) -> Option<&Program> {
        match &self.launched[i] {
            Some((start, end, p)) if (*start..*end).contains(&pc) => Some(p),
            _ => self.kernels[i].as_deref(),
        }
    }

    /// Whether a running core's code names an NIU register page (see [`crate::noc`]).
    pub fn uses_noc(&self) -> bool {
        self.harts.iter().any(|h| h.is_running() && h.uses_noc)
    }

    /// Whether any core of the tile is loaded.
    pub fn loaded(&self) -> bool {
        self.harts.iter().any(|h| h.state != HartState::Empty)
    }

    pub fn any_running(&self) -> bool {
        self.harts.iter().any(Hart::is_running)
    }

    /// Prepares a run starting at chip cycle `start`: every loaded core leaves reset,
    /// every other core's soft-reset bit is set; under tt-metal's layout only BRISC leaves
    /// reset, and a tile whose firmware already runs resumes instead.
    pub fn start_run(&mut self, start: u64) {
        self.refresh_code();
        self.now = start;
        self.run_start = start;
        self.ports = [start; 3];
        self.holds.iter_mut().for_each(HoldLog::clear);
        self.mem.regs.tensix.log.iter_mut().for_each(|l| l.clear());
        self.mem.daisychain().run_start(start);
        let regs = &mut self.mem.regs;
        regs.perf_counters.run_start(start, &mut regs.tensix);
        // Under tt-metal's layout the firmware boots once and then waits for the host's
        // next launch: a tile whose firmware runs goes on where it was, its cores' resets
        // as the firmware left them (tt-metal's host boots at device start only).
        if self.brisc_boots && self.any_running() {
            for h in &mut self.harts {
                h.resume(start);
            }
            return;
        }
        let mut reset = 0;
        for (h, e) in self.harts.iter_mut().zip(&mut self.executors) {
            if h.state == HartState::Empty {
                reset |= 1 << h.risc.soft_reset_bit();
            } else if self.brisc_boots && h.risc != Risc::Brisc {
                e.hold(h);
                reset |= 1 << h.risc.soft_reset_bit();
            } else {
                e.release(h, start);
            }
        }
        self.mem.regs.soft_reset = reset;
        self.mem.regs.pending_reset = None;
    }

    /// The debug daisychain's samples of a core that does not run until `to` (`u64::MAX`:
    /// the run ended), see [`crate::devices::daisychain`].
    pub fn sample_idle(&mut self, to: u64) -> Result<(), Box<Fault>> {
        let Some(risc) = self.mem.daisychain().sampled() else {
            return Ok(());
        };
        if to != u64::MAX && self.hart(risc).is_running() {
            return Ok(());
        }
        self.mem
            .sample_idle(to)
            .map_err(|kind| self.fault(risc.index(), kind))
    }

    /// The daisychain's samples while the tile holds core `i` on a FIFO from `from` to its
    /// clock now.
    fn sample_hold(
        &mut self,
        i: usize,
        from: u64,
        addr: u32,
        write: bool,
    ) -> Result<(), Box<Fault>> {
        let (risc, to, pc) = {
            let h = &self.harts[i];
            (h.risc, h.core.time, h.core.pc)
        };
        if !self.mem.samples(risc) {
            return Ok(());
        }
        let span = crate::devices::daisychain::Span {
            pc,
            issue_from: to,
            access_from: from,
            access_until: to,
            access: Some((addr, write)),
        };
        self.mem
            .sample_span(&span, from, to)
            .map_err(|kind| self.fault(i, kind))
    }

    /// Runs until every core has stopped or the tile's window reaches `limit`. Returns the
    /// first fault. Gives up early (without error) once a tile listed before this one has
    /// faulted (`abort` holds the lowest faulting `global` index), since only the first
    /// fault in tile order is reported.
    pub fn run_until(&mut self, limit: u64, abort: &AtomicUsize) -> Result<(), Box<Fault>> {
        self.refresh_code();
        while self.now < limit && self.any_running() {
            if abort.load(Ordering::Relaxed) < self.global {
                return Ok(());
            }
            let end = self.window_end(limit);
            self.mem.apply_noc(self.now);
            if self
                .mem
                .niu
                .as_mut()
                .is_some_and(|n| std::mem::take(&mut n.code_written))
            {
                self.code_dirty.store(true, Ordering::Release);
                self.refresh_code();
            }
            self.run_window(end)
                .and_then(|()| self.sample_idle(end))
                .inspect_err(|_| {
                    abort.fetch_min(self.global, Ordering::Relaxed);
                })?;
            self.now = end;
        }
        Ok(())
    }

    /// End of the next scheduling window. With a single running core the windows are
    /// merged up to `limit` (cores are only checked against the window at control
    /// transfers, so a lone core executes exactly the same instructions either way), but
    /// never beyond what keeps the instruction budget checkable (a core retires at most
    /// one instruction per cycle).
    fn window_end(&self, limit: u64) -> u64 {
        let mut running = self.harts.iter().filter(|h| h.is_running());
        match (running.next(), running.next()) {
            (Some(h), None) => {
                let left = self.budget.saturating_sub(h.core.instret).saturating_add(1);
                limit.min(
                    self.now
                        .max(h.core.time)
                        .saturating_add(left)
                        .max(self.now.saturating_add(self.quantum)),
                )
            }
            _ => self.now.saturating_add(self.quantum).min(limit),
        }
    }

    /// Runs the cores in causal order (module docs) until each has reached `end`.
    fn run_window(&mut self, end: u64) -> Result<(), Box<Fault>> {
        loop {
            let mut pick: Option<usize> = None;
            for (i, h) in self.harts.iter().enumerate() {
                if h.is_running()
                    && h.core.time < end
                    && pick.is_none_or(|p| h.core.time < self.harts[p].core.time)
                {
                    pick = Some(i);
                }
            }
            let Some(i) = pick else { return Ok(()) };
            let mut horizon = u64::MAX;
            for (j, h) in self.harts.iter().enumerate() {
                if j != i && h.is_running() {
                    horizon = horizon.min(if j < i {
                        h.core.time.saturating_sub(1)
                    } else {
                        h.core.time
                    });
                }
            }
            self.run_hart(i, end, horizon)?;
        }
    }

    /// Runs core `i` until it reaches `end` at a check point, stops before an access past
    /// `horizon`, halts, or changes which cores run.
    fn run_hart(&mut self, i: usize, end: u64, horizon: u64) -> Result<(), Box<Fault>> {
        let port = l1_port(self.harts[i].risc);
        if self.mem.samples(self.harts[i].risc) {
            // Held past this core's own last access: another core's (L1 busy for a sample).
            let mine = self.harts[i].core.pipe.port;
            self.mem.daisychain().l1_busy_until = if self.ports[port] > mine {
                self.ports[port]
            } else {
                0
            };
        }
        self.harts[i].core.horizon = horizon;
        self.harts[i].core.pipe.port = self.ports[port];
        let retired = self.harts[i].core.instret;
        let r = self.executors[i].run(&mut self.harts[i], &mut self.mem, end, self.zicsr);
        self.ports[port] = self.harts[i].core.pipe.port;
        let moved = self.harts[i].core.instret != retired;
        if moved {
            self.harts[i].stuck = None;
        }
        match r {
            Ok(Exit::Blocked { addr, write }) => {
                // Nothing but another core or the Tensix coprocessor can change the FIFO:
                // retry no earlier than the next cycle one of them can act at, or the cycle
                // the device knows the access can succeed at.
                let wait = self.mem.regs.waits_on(addr, self.harts[i].risc, write);
                let cause = self.hold_cause(wait);
                let coprocessor = &self.mem.regs.tensix;
                let cop = coprocessor.active().then(|| coprocessor.now());
                if let Some(at) = wait.until(coprocessor) {
                    let h = &mut self.harts[i];
                    h.stuck = None;
                    let from = h.core.time;
                    let held = at.max(h.core.time + 1);
                    h.charge_hold(cause, held - from);
                    h.core.time = held;
                    self.holds[i].note(from, held - from, cause);
                    self.sample_hold(i, from, addr, write)?;
                    return self.check_budget(i);
                }
                if cop.is_some() {
                    self.harts[i].stuck = None;
                } else if !moved {
                    self.harts[i].stuck = Some((addr, write));
                }
                let next = self
                    .harts
                    .iter()
                    .enumerate()
                    .filter(|&(j, h)| j != i && h.is_running())
                    .map(|(_, h)| h.core.time)
                    .chain(cop)
                    .min();
                let h = &mut self.harts[i];
                let held = next.map_or(h.core.time + 1, |n| n.max(h.core.time + 1));
                h.charge_hold(cause, held - h.core.time);
                let from = h.core.time;
                h.core.time = held;
                self.holds[i].note(from, held - from, cause);
                self.sample_hold(i, from, addr, write)?;
                if self
                    .harts
                    .iter()
                    .filter(|h| h.is_running())
                    .all(|h| h.stuck.is_some())
                {
                    return Err(self.deadlock());
                }
            }
            Ok(Exit::Limit | Exit::Yield) => {}
            Ok(Exit::Halted(code)) => self.harts[i].state = HartState::Exited(code),
            Ok(Exit::ResetWrite) => self.apply_soft_reset(i),
            Err(FaultKind::FetchOutsideCode) if self.switch_window(i)? => {}
            Err(kind) => return Err(self.fault(i, kind)),
        }
        if self.mem.regs.tdma.take_iram_written() {
            self.check_iram_quiet(i)?;
        }
        self.check_budget(i)
    }

    /// Core `i`'s pc left its fetch window: if it went into NCRISC's instruction RAM, or
    /// back to L1 from there, the core's fetch window follows it (`true`: run on);
    /// otherwise the fault stands (`false`).
    fn switch_window(&mut self, i: usize) -> Result<bool, Box<Fault>> {
        let h = &self.harts[i];
        let Some((base, size)) = h.iram() else {
            return Ok(false);
        };
        let inside = h.core.pc.wrapping_sub(base) < size;
        if h.in_iram() {
            if inside {
                return Ok(false);
            }
            self.executors[i].leave_iram(&mut self.harts[i]);
            return Ok(true);
        }
        if !inside {
            return Ok(false);
        }
        if h.lines.is_some() {
            return Err(self.fault(
                i,
                FaultKind::InstructionRam(
                    "line-level cycles (--lines) of code in the instruction RAM are not \
                     modelled"
                        .into(),
                ),
            ));
        }
        // Decoded from the RAM as it is now: earlier writes are in it.
        self.mem.regs.tdma.take_iram_written();
        let bytes = self.mem.regs.tdma.iram();
        self.executors[i].enter_iram(&mut self.harts[i], base, &bytes[..size as usize]);
        Ok(true)
    }

    /// The mover wrote NCRISC's instruction RAM during core `i`'s run: refused while NCRISC
    /// runs from it (`InstructionRAM.md`: the RAM is corrupted); otherwise NCRISC decodes
    /// the new contents when it next enters.
    fn check_iram_quiet(&mut self, i: usize) -> Result<(), Box<Fault>> {
        let n = Risc::Ncrisc.index();
        if self.harts[n].is_running() && self.harts[n].in_iram() {
            return Err(self.fault(
                i,
                FaultKind::InstructionRam(
                    "the mover wrote it while NCRISC executes from it (the ISA documentation: \
                     the RAM is corrupted); put NCRISC in reset or back in L1 first"
                        .into(),
                ),
            ));
        }
        Ok(())
    }

    /// The cause index of the cycles a core is held on a blocked access that waits on
    /// `wait` ([`crate::isa::lines`]): a push into a full coprocessor FIFO is `tensix-fifo`,
    /// a TTSync read `ttsync`, each with what the coprocessor thread waits on now; anything
    /// else (mailboxes, PCBufs) `fifo-wait`.
    fn hold_cause(&self, wait: Wait) -> usize {
        let cop = &self.mem.regs.tensix;
        match wait {
            Wait::Tensix {
                thread,
                hold: hold @ Hold::Push { .. },
            } => lines::tensix_fifo(cop.wait_reason(thread, hold)),
            Wait::Tensix { thread, hold } => lines::ttsync(cop.wait_reason(thread, hold)),
            Wait::Peers => Cause::FifoWait as usize,
        }
    }

    /// Stops a core that retired more instructions than the run's budget.
    fn check_budget(&mut self, i: usize) -> Result<(), Box<Fault>> {
        if self.harts[i].core.instret > self.budget && self.harts[i].is_running() {
            return Err(self.fault(
                i,
                FaultKind::Runaway {
                    budget: self.budget,
                },
            ));
        }
        Ok(())
    }

    /// Every running core waits on a FIFO that only another waiting core could change:
    /// the report names the first, and every core's place is in its message.
    fn deadlock(&mut self) -> Box<Fault> {
        let i = self
            .harts
            .iter()
            .position(|h| h.is_running() && h.stuck.is_some())
            .unwrap_or(0);
        let (addr, write) = self.harts[i].stuck.unwrap_or((0, false));
        let (chip, tile) = (self.chip, self.coord);
        let others: Vec<Other> = self
            .harts
            .iter()
            .enumerate()
            .filter(|(_, h)| h.is_running())
            .map(|(k, h)| {
                let (a, w) = h.stuck.unwrap_or((0, false));
                let at = self
                    .program_at(k, h.core.pc)
                    .and_then(|p| p.symbols.line(h.core.pc))
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default();
                Other {
                    core: Some(OtherCore {
                        chip,
                        tile,
                        risc: h.risc,
                        pc: h.core.pc,
                    }),
                    text: format!(
                        "{} at pc {:#010x}{at} {} {a:#010x}",
                        h.risc.name(),
                        h.core.pc,
                        if w { "pushes to" } else { "pops from" }
                    ),
                }
            })
            .collect();
        let mut f = self.fault(i, FaultKind::Blocked { addr, write });
        f.others = others;
        f.others
            .extend(self.mem.regs.tensix.waits().into_iter().map(Other::text));
        f
    }

    /// Re-decodes every loaded core's code if the host wrote into a code region.
    fn refresh_code(&mut self) {
        if self.code_dirty.swap(false, Ordering::AcqRel) {
            for (h, e) in self.harts.iter_mut().zip(&mut self.executors) {
                if h.state != HartState::Empty {
                    e.redecode(h, &self.mem.l1);
                }
            }
        }
    }

    /// Applies a store to `SOFT_RESET_0` made by core `writer`.
    fn apply_soft_reset(&mut self, writer: usize) {
        let Some(new) = self.mem.regs.pending_reset.take() else {
            return;
        };
        let old = self.mem.regs.soft_reset;
        self.mem.regs.soft_reset = new;
        let at = self.harts[writer].core.time;
        let cfg = &self.mem.regs.tensix.config.cfg[0];
        let debug = &self.mem.regs.debug_regs.words;
        for (h, e) in self.harts.iter_mut().zip(&mut self.executors) {
            let bit = 1 << h.risc.soft_reset_bit();
            if new & bit != 0 && old & bit == 0 {
                e.hold(h);
            } else if new & bit == 0 && old & bit != 0 {
                e.release(h, at);
                let arch = h.map.arch;
                let pc = match arch {
                    Arch::WormholeB0 => reset_pc_override(arch, h.risc, |w| cfg[w as usize]),
                    Arch::Blackhole => reset_pc_override(arch, h.risc, |off| {
                        debug.get(riscv_linker::mmio::DEBUG_REGS_BASE + off)
                    }),
                };
                if let Some(pc) = pc {
                    h.core.pc = pc;
                }
            }
        }
    }

    /// Builds the report of a fault of core `i` (pc is the faulting instruction's).
    pub fn fault(&mut self, i: usize, kind: FaultKind) -> Box<Fault> {
        let kind = match kind {
            FaultKind::Ebreak => self.panic_of(i).unwrap_or(FaultKind::Ebreak),
            k => k,
        };
        self.harts[i].state = HartState::Faulted;
        let h = &self.harts[i];
        let pc = h.core.pc;
        let l1 = &self.mem.l1;
        let word = if pc.is_multiple_of(4) && (pc as u64 + 4) <= l1.size() as u64 {
            Some(l1.load::<4>(pc))
        } else {
            None
        };
        let program = self.program_at(i, pc);
        Box::new(Fault {
            kind,
            chip: self.chip,
            tile: self.coord,
            risc: h.risc,
            pc,
            word,
            disassembly: word.map(|w| crate::isa::disasm::disassemble(w, pc)),
            elf: program.map_or_else(|| "<no kernel>".to_string(), |p| p.name.clone()),
            symbol: program.and_then(|p| p.symbols.describe(pc)),
            location: program.and_then(|p| p.symbols.line(pc)),
            instret: h.core.instret,
            others: Vec::new(),
        })
    }

    /// The panic a core's runtime reported at its `ebreak`, if it followed the convention of
    /// `riscv_linker::mmio::PANIC_MAGIC` and its strings are readable UTF-8 in L1.
    fn panic_of(&self, i: usize) -> Option<FaultKind> {
        let r = &self.harts[i].core.regs;
        if r[15] != riscv_linker::mmio::PANIC_MAGIC {
            return None;
        }
        let text = |ptr: u32, len: u32| -> Option<String> {
            let len = len.min(256);
            if ptr as u64 + len as u64 > self.mem.l1.size() as u64 {
                return None;
            }
            let mut bytes = vec![0u8; len as usize];
            self.mem.l1.read_into(ptr, &mut bytes);
            String::from_utf8(bytes).ok()
        };
        Some(FaultKind::Panic {
            file: text(r[10], r[11])?,
            line: r[12],
            message: text(r[13], r[14])?,
        })
    }

    /// The hart of `risc`.
    pub fn hart(&self, risc: Risc) -> &Hart {
        &self.harts[risc.index()]
    }

    pub fn hart_mut(&mut self, risc: Risc) -> &mut Hart {
        &mut self.harts[risc.index()]
    }
}

/// The reset PC `risc` leaves soft reset at when BRISC's firmware overrides it (tt-metal sets
/// them before it releases the other cores; BRISC has none): a PC register and an enable bit
/// per core, read by `read`.
/// - Wormhole B0, `Config[0]` words (`cfg_defines.h`): 158-160 (`TRISC_RESET_PC_SEC0..2_PC`)
///   with the enable bits in word 161 (`TRISC_RESET_PC_OVERRIDE`), 162
///   (`NCRISC_RESET_PC_PC`) with word 163's bit 0.
/// - Blackhole, offsets in the debug block (`tensix.h`): `TRISC0..2_RESET_PC` (+0x228,
///   +0x22C, +0x230) with the enable bits in `TRISC_RESET_PC_OVERRIDE` (+0x234),
///   `NCRISC_RESET_PC` (+0x238) with bit 0 of `NCRISC_RESET_PC_OVERRIDE` (+0x23C).
fn reset_pc_override(arch: Arch, risc: Risc, read: impl Fn(u32) -> u32) -> Option<u32> {
    let (pc, enable, bit) = match (arch, risc) {
        (_, Risc::Brisc) => return None,
        (Arch::WormholeB0, Risc::Trisc0) => (158, 161, 0),
        (Arch::WormholeB0, Risc::Trisc1) => (159, 161, 1),
        (Arch::WormholeB0, Risc::Trisc2) => (160, 161, 2),
        (Arch::WormholeB0, Risc::Ncrisc) => (162, 163, 0),
        (Arch::Blackhole, Risc::Trisc0) => (0x228, 0x234, 0),
        (Arch::Blackhole, Risc::Trisc1) => (0x22C, 0x234, 1),
        (Arch::Blackhole, Risc::Trisc2) => (0x230, 0x234, 2),
        (Arch::Blackhole, Risc::Ncrisc) => (0x238, 0x23C, 0),
    };
    (read(enable) >> bit & 1 != 0).then(|| read(pc))
}
