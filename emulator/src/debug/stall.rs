//! Deadlock detection: a run stops as soon as no core of the device can make progress again,
//! instead of spinning into the instruction budget.
//!
//! ## When the device is stuck
//!
//! Every [`EVERY`] simulated cycles, with all tiles paused, the detector looks at each core's
//! *activity marks*: its state, the emit cycle of its last store (`Pipe::last_emit`, which
//! every store to L1, local RAM or a register moves, from the interpreter or the JIT) and
//! its count of *observations* (`Core::observed`: CSR accesses, loads of clocks, FIFO pops
//! and other registers whose value changes without a store; loads of L1, local RAM and the
//! timeless registers of `devices::read_is_timeless` are not observations). A stretch
//! between two looks is *quiet* when no core's marks moved and nothing outside the cores
//! can act: every chip's NoC idle, every NIU settled (no event queued, no request
//! unsent, no command buffer busy) and every Tensix coprocessor idle.
//!
//! Within a run of quiet stretches, each running core's state (pc and `x1..x31`) is
//! remembered at every look. Once every running core is at a state it was in at an earlier
//! look of the same quiet run, the device is deadlocked:
//!
//! * memory has not changed since the quiet run began (no store, no NoC delivery, no
//!   coprocessor work), and nothing a core reads changes with time alone;
//! * so each core's next steps are a function of its state and that memory, and a core
//!   that went from state S back to S without storing or observing anything will do so
//!   forever (a core waiting on a FIFO is the case of a loop of length zero);
//! * so no core will store again, no request will reach the NoC, nothing will wake the
//!   coprocessor, and memory stays as it is.
//!
//! A slow loop that will end is never called a deadlock: it counts (a register changes),
//! reads a clock (an observation), waits for a NoC transfer or the coprocessor (not quiet),
//! or waits for a core that is working (that core's state changes, or it stores). The one
//! assumption is about the host, see [`crate::DeviceConfig::deadlock_detection`].
//!
//! A core whose state does not come back (it counts its tries in a register while it
//! polls, or its loop is longer than [`SEEN`] looks) counts as stuck once [`proof`] shows,
//! by stepping it on the interpreter, that it loops forever on the memory as it is: what
//! keeps changing reaches no branch, address or store. The proof is tried at the first
//! quiet look and each time the quiet run has doubled in length, over a quarter as many
//! instructions as the quiet run has cycles (at most [`PROOF_MAX`]). A loop that polls a
//! device or NIU register while it counts is not proved: the budget stops it.
//!
//! ## The report
//!
//! [`crate::FaultKind::Deadlock`], on the first stuck core in device order, with one line
//! per stuck core in [`crate::Fault::others`]: its pc, function, source line and what it
//! waits on, found by stepping the core once around its loop on the interpreter (which
//! changes nothing: the loop stores nothing) and noting every address it reads and the
//! value there, or the FIFO it waits on; then what each coprocessor thread waits on.

mod proof;

use crate::chip::device::Device;
use crate::chip::fault::{Fault, FaultKind};
use crate::chip::tile::Tile;
use crate::isa::decode::Op;
use crate::isa::exec::Flow;
use crate::isa::hart::HartState;

/// Cycles between two looks.
pub(crate) const EVERY: u64 = 1 << 16;
/// States remembered per core during one quiet run.
const SEEN: usize = 64;
/// Most instructions stepped per core in one proof that it loops forever ([`proof`]).
const PROOF_MAX: u64 = 1 << 24;
/// Instructions stepped per core to find what its loop reads.
const PROBE_STEPS: u64 = 4096;
/// Distinct addresses named per core.
const PROBE_READS: usize = 4;

/// A core's state as the detector compares it: pc and `x1..x31`.
type State = (u32, [u32; 31]);

/// The detector of one run.
pub(crate) struct Watch {
    /// The next look, in cycles past the run's start.
    next: u64,
    /// Per core of the device (tile order, then RISC): state, last store's emit cycle,
    /// observations, at the last look.
    marks: Vec<(HartState, u64, u64)>,
    /// Per core: the states seen at the looks of the current quiet run.
    seen: Vec<Vec<State>>,
    /// Per core: proved to loop forever during the current quiet run, with turns of this
    /// many instructions ([`proof`]).
    proved: Vec<Option<u64>>,
    /// Where the current quiet run began, in cycles past the run's start.
    quiet_since: u64,
    /// The quiet span (cycles) at which the next proof is tried.
    next_proof: u64,
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            next: EVERY,
            marks: Vec::new(),
            seen: Vec::new(),
            proved: Vec::new(),
            quiet_since: 0,
            next_proof: 0,
        }
    }

    /// Looks at the device, paused `rel` cycles past the run's start (nothing is done
    /// before the next look is due). Returns the deadlock fault once the device is stuck.
    pub fn look(&mut self, dev: &mut Device, rel: u64) -> Option<Box<Fault>> {
        if rel < self.next {
            return None;
        }
        self.next = rel.saturating_add(EVERY);
        let marks: Vec<(HartState, u64, u64)> = dev
            .tiles
            .iter()
            .flat_map(|t| &t.harts)
            .map(|h| (h.state, h.core.pipe.last_emit, h.core.observed))
            .collect();
        let quiet = marks == self.marks && outside_quiet(dev);
        self.marks = marks;
        if !quiet {
            let harts = dev.tiles.iter().flat_map(|t| &t.harts);
            self.seen = harts
                .map(|h| {
                    if h.is_running() {
                        vec![state(&h.core.regs, h.core.pc)]
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            self.proved = vec![None; self.seen.len()];
            self.quiet_since = rel;
            self.next_proof = 0;
            return None;
        }
        // Proofs are tried at the first quiet look, then each time the quiet span has
        // doubled, each over a quarter as many instructions as the span's cycles: all the
        // tries of a quiet run step at most half as many instructions as its cycles, and a
        // loop whose relevant state repeats within PROOF_MAX instructions is found.
        let span = rel - self.quiet_since;
        let proof_steps = (span >= self.next_proof).then(|| (span / 4).clamp(1, PROOF_MAX));
        if proof_steps.is_some() {
            self.next_proof = span.saturating_mul(2);
        }
        let (mut any, mut all) = (false, true);
        let mut k = 0;
        for t in dev.tiles.iter_mut() {
            for i in 0..t.harts.len() {
                let (seen, proved) = (&mut self.seen[k], &mut self.proved[k]);
                k += 1;
                let h = &t.harts[i];
                if !h.is_running() || proved.is_some() {
                    any |= h.is_running();
                    continue;
                }
                any = true;
                let s = state(&h.core.regs, h.core.pc);
                if seen.contains(&s) {
                    continue;
                }
                if seen.len() < SEEN {
                    seen.push(s);
                }
                // Once one core is known to move, the others need no proof this look.
                if all {
                    *proved = proof_steps.and_then(|n| proof::loops_forever(t, i, n));
                }
                all &= proved.is_some();
            }
        }
        (any && all).then(|| report(dev, &self.proved))
    }
}

fn state(regs: &[u32; 64], pc: u32) -> State {
    let mut x = [0u32; 31];
    x.copy_from_slice(&regs[1..32]);
    (pc, x)
}

/// Nothing outside the cores can change memory or what a register read returns.
fn outside_quiet(dev: &Device) -> bool {
    dev.noc.iter().all(|n| n.is_idle())
        && dev.tiles.iter().all(|t| {
            let earliest = t
                .harts
                .iter()
                .filter(|h| h.is_running())
                .map(|h| h.core.time)
                .min()
                .unwrap_or(t.now);
            !t.mem.regs.dev.tensix.active()
                && t.mem.niu.as_ref().is_none_or(|n| n.settled(earliest))
        })
}

/// The fault of a run stopped at its wall-clock deadline: blamed on the first running core,
/// every running core's place and instructions retired described.
pub(crate) fn timeout(dev: &mut Device) -> Box<Fault> {
    let mut lines = Vec::new();
    let mut first = None;
    for (k, t) in dev.tiles.iter().enumerate() {
        for (i, h) in t.harts.iter().enumerate() {
            if h.is_running() {
                first.get_or_insert((k, i));
                lines.push(format!(
                    "{}: {} instructions retired{}",
                    place(t, i),
                    h.core.instret,
                    h.stuck
                        .map(|(a, _)| format!(", waiting on a FIFO at {a:#010x}"))
                        .unwrap_or_default()
                ));
            }
        }
        lines.extend(
            t.mem
                .regs
                .dev
                .tensix
                .waits()
                .into_iter()
                .map(|w| format!("chip {} tile {}: {w}", t.chip, t.coord)),
        );
    }
    let cores = first.map_or(0, |_| {
        dev.tiles
            .iter()
            .flat_map(|t| &t.harts)
            .filter(|h| h.is_running())
            .count()
    });
    let (k, i) = first.unwrap_or((0, 0));
    let mut f = dev.tiles[k].fault(i, FaultKind::Timeout { cores });
    f.others = lines;
    f
}

/// Chip, tile, RISC, pc, function and source line of core `i` of `t`.
fn place(t: &Tile, i: usize) -> String {
    let h = &t.harts[i];
    let program = h.program.as_ref();
    let pc = h.core.pc;
    let mut place = format!(
        "chip {} tile {} {} at pc {pc:#010x}",
        t.chip,
        t.coord,
        h.risc.name()
    );
    if let Some(s) = program.and_then(|p| p.symbols.describe(pc)) {
        place.push_str(&format!(" in {s}"));
    }
    if let Some(l) = program.and_then(|p| p.symbols.line(pc)) {
        place.push_str(&format!(" ({l})"));
    }
    place
}

/// The deadlock fault: blamed on the first running core, every running core described.
/// `turns`: per core, the length of its loop's turn when [`proof`] found it.
fn report(dev: &mut Device, turns: &[Option<u64>]) -> Box<Fault> {
    let mut lines = Vec::new();
    let mut first = None;
    let mut cores = 0;
    let mut turns = turns.iter();
    for (k, t) in dev.tiles.iter_mut().enumerate() {
        for i in 0..t.harts.len() {
            let turn = turns.next().copied().flatten().unwrap_or(0);
            if t.harts[i].is_running() {
                first.get_or_insert((k, i));
                cores += 1;
                lines.push(describe(t, i, turn));
            }
        }
        lines.extend(
            t.mem
                .regs
                .dev
                .tensix
                .waits()
                .into_iter()
                .map(|w| format!("chip {} tile {}: {w}", t.chip, t.coord)),
        );
    }
    let (k, i) = first.unwrap_or((0, 0));
    let mut f = dev.tiles[k].fault(i, FaultKind::Deadlock { cores });
    f.others = lines;
    f
}

/// One line: where core `i` of `t` is and what it waits on (`turn`: its loop's length
/// in instructions, when known).
fn describe(t: &mut Tile, i: usize, turn: u64) -> String {
    let place = place(t, i);
    let program = t.harts[i].program.clone();
    let line = |pc: u32| program.as_ref().and_then(|p| p.symbols.line(pc));
    let waits = match probe(t, i, turn) {
        Probe::Fifo { addr, write } => format!(
            "{} {addr:#010x} ({})",
            if write {
                "pushes to a full FIFO at"
            } else {
                "pops from an empty FIFO at"
            },
            crate::chip::devices::region_name(addr)
        ),
        Probe::Reads(reads) if reads.is_empty() => "loops reading nothing".to_string(),
        Probe::Reads(reads) => {
            let l1 = t.mem.l1.size();
            let shown: Vec<String> = reads
                .iter()
                .map(|&(at, addr, value)| {
                    let what = if addr < l1 {
                        "L1"
                    } else {
                        crate::chip::devices::region_name(addr)
                    };
                    let src = line(at).map(|l| format!(" at {l}")).unwrap_or_default();
                    format!("{what} {addr:#010x} (reads {value:#x}{src})")
                })
                .collect();
            format!("polls {}", shown.join(", "))
        }
    };
    format!("{place}: {waits}")
}

enum Probe {
    Fifo {
        addr: u32,
        write: bool,
    },
    /// (pc of the load, address, value read), first [`PROBE_READS`] distinct addresses.
    Reads(Vec<(u32, u32, u32)>),
}

/// Steps core `i` once around its loop (at least `turn` instructions, when it counts in a
/// register its state never comes back) on the interpreter, noting what it reads.
fn probe(t: &mut Tile, i: usize, turn: u64) -> Probe {
    if let Some((addr, write)) = t.harts[i].stuck {
        return Probe::Fifo { addr, write };
    }
    let start = state(&t.harts[i].core.regs, t.harts[i].core.pc);
    t.harts[i].core.horizon = u64::MAX;
    t.mem.risc = t.harts[i].risc;
    let mut reads: Vec<(u32, u32, u32)> = Vec::new();
    for _ in 0..turn.max(PROBE_STEPS) {
        let h = &t.harts[i];
        let pc = h.core.pc;
        let load = h
            .code
            .get((pc.wrapping_sub(h.fetch_base) >> 2) as usize)
            .filter(|i| matches!(i.op, Op::Lb | Op::Lh | Op::Lw | Op::Lbu | Op::Lhu))
            .map(|i| {
                (
                    h.core.regs[i.rs1 as usize & 63].wrapping_add(i.imm as u32),
                    i.rd as usize & 63,
                )
            });
        match t.harts[i].step(&mut t.mem, t.zicsr) {
            Ok(Flow::Blocked { addr, write }) => return Probe::Fifo { addr, write },
            Ok(Flow::Next | Flow::Transfer) => {}
            _ => break,
        }
        if let Some((addr, rd)) = load {
            if reads.len() < PROBE_READS && !reads.iter().any(|r| r.1 == addr) {
                reads.push((pc, addr, t.harts[i].core.regs[rd]));
            }
        }
        if state(&t.harts[i].core.regs, t.harts[i].core.pc) == start {
            break;
        }
    }
    Probe::Reads(reads)
}
