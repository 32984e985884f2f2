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
//! by stepping a copy of it on the interpreter, that it loops forever on the memory as it
//! is: what keeps changing reaches no branch, address or store. Its loop may poll the
//! registers the chip model says are frozen while the device is quiet ([`frozen`]: NIU
//! registers once the NIU is settled, mailbox status, Tensix semaphores, GPRs and
//! configuration while the coprocessor is idle). A proof starts at the first quiet look
//! and carries over from look to look, stepping half as many instructions as the cycles
//! since the last look: a turn of any length is proved after about twice its cycles of
//! quiet, and proofs cost at most half the cycles of the quiet run in instructions.
//!
//! A stretch is quiet only when the outside was quiet at its start as well as at its end:
//! a NoC delivery or coprocessor work during the stretch changes memory without moving a
//! core's marks.
//!
//! ## The report
//!
//! [`crate::FaultKind::Deadlock`], on the first stuck core in device order, with one line
//! per stuck core in [`crate::Fault::others`]: its pc, function, source line and what it
//! waits on, found by stepping the core once around its loop on the interpreter (which
//! changes nothing: the loop stores nothing) and noting every address it reads and the
//! value there, with the kind of register it is ([`frozen::name`]), or the FIFO it waits
//! on; then what each coprocessor thread waits on.

mod frozen;
mod proof;

use crate::chip::device::Device;
use crate::chip::tile::Tile;
use crate::error::{Fault, FaultKind, Other, OtherCore};
use crate::isa::hart::HartState;
use proof::{Proof, Verdict};

/// Cycles between two looks.
pub(crate) const EVERY: u64 = 1 << 16;
/// States remembered per core during one quiet run.
const SEEN: usize = 64;
/// Instructions stepped per core to find what its loop reads.
const PROBE_STEPS: u64 = 4096;
/// Distinct addresses named per core.
const PROBE_READS: usize = 4;

/// A core's state as the detector compares it: pc and `x1..x31`.
type State = (u32, [u32; 31]);

/// Per core: where its proof stands during the current quiet run.
enum Proving {
    /// Not started (the core's state repeated at every look so far, or it is not running).
    No,
    Open(Box<Proof>),
    Proved(u64),
    Refused,
}

/// The detector of one run.
pub(crate) struct Watch {
    /// The next look, in cycles past the run's start.
    next: u64,
    /// The last look, in cycles past the run's start.
    last: u64,
    /// Per core of the device (tile order, then RISC): state, last store's emit cycle,
    /// observations, at the last look.
    marks: Vec<(HartState, u64, u64)>,
    /// Nothing outside the cores could act at the last look ([`outside_quiet`]).
    outside_was_quiet: bool,
    /// Per core: the states seen at the looks of the current quiet run.
    seen: Vec<Vec<State>>,
    /// Per core: its proof during the current quiet run ([`proof`]).
    proofs: Vec<Proving>,
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            next: EVERY,
            last: 0,
            marks: Vec::new(),
            outside_was_quiet: false,
            seen: Vec::new(),
            proofs: Vec::new(),
        }
    }

    /// Looks at the device, paused `rel` cycles past the run's start (nothing is done
    /// before the next look is due). Returns the deadlock fault once the device is stuck.
    pub fn look(&mut self, dev: &mut Device, rel: u64) -> Option<Box<Fault>> {
        if rel < self.next {
            return None;
        }
        self.next = rel.saturating_add(EVERY);
        let since = rel - std::mem::replace(&mut self.last, rel);
        let marks: Vec<(HartState, u64, u64)> = dev
            .tiles
            .iter()
            .flat_map(|t| &t.harts)
            .map(|h| (h.state, h.core.pipe.last_emit, h.core.observed))
            .collect();
        let outside = outside_quiet(dev);
        let quiet = marks == self.marks && outside && self.outside_was_quiet;
        self.marks = marks;
        self.outside_was_quiet = outside;
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
            self.proofs = self.seen.iter().map(|_| Proving::No).collect();
            return None;
        }
        // Each open proof steps half as many instructions as the cycles since the last
        // look: all of a quiet run's proofs step at most half its cycles per core.
        let steps = (since / 2).max(1);
        let (mut any, mut all) = (false, true);
        let mut k = 0;
        for t in dev.tiles.iter_mut() {
            for i in 0..t.harts.len() {
                let (seen, proving) = (&mut self.seen[k], &mut self.proofs[k]);
                k += 1;
                if !t.harts[i].is_running() {
                    continue;
                }
                any = true;
                if matches!(proving, Proving::Proved(_)) {
                    continue;
                }
                let s = state(&t.harts[i].core.regs, t.harts[i].core.pc);
                if seen.contains(&s) {
                    continue;
                }
                if seen.len() < SEEN {
                    seen.push(s);
                }
                if let Proving::No = proving {
                    *proving = Proof::new(t, i).map_or(Proving::Refused, Proving::Open);
                }
                if let Proving::Open(p) = proving {
                    match p.advance(t, i, steps) {
                        Verdict::Open => {}
                        Verdict::Proved(turn) => *proving = Proving::Proved(turn),
                        Verdict::Refused => *proving = Proving::Refused,
                    }
                }
                all &= matches!(proving, Proving::Proved(_));
            }
        }
        let turns: Vec<Option<u64>> = self
            .proofs
            .iter()
            .map(|p| match p {
                Proving::Proved(turn) => Some(*turn),
                _ => None,
            })
            .collect();
        (any && all).then(|| report(dev, &turns))
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
            !t.mem.regs.tensix.active() && t.mem.niu.as_ref().is_none_or(|n| n.settled(earliest))
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
                lines.push(Other {
                    core: Some(core_of(t, i)),
                    text: format!(
                        "{}: {} instructions retired{}",
                        place(t, i),
                        h.core.instret,
                        h.stuck
                            .map(|(a, _)| format!(", waiting on a FIFO at {a:#010x}"))
                            .unwrap_or_default()
                    ),
                });
            }
        }
        lines.extend(
            t.mem
                .regs
                .tensix
                .waits()
                .into_iter()
                .map(|w| Other::text(format!("chip {} tile {}: {w}", t.chip, t.coord))),
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
    let pc = h.core.pc;
    let program = t.program_at(i, pc);
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

/// Which core `i` of `t` is, and its pc, for a report line.
fn core_of(t: &Tile, i: usize) -> OtherCore {
    OtherCore {
        chip: t.chip,
        tile: t.coord,
        risc: t.harts[i].risc,
        pc: t.harts[i].core.pc,
    }
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
                let text = describe(t, i, turn);
                lines.push(Other {
                    core: Some(core_of(t, i)),
                    text,
                });
            }
        }
        lines.extend(
            t.mem
                .regs
                .tensix
                .waits()
                .into_iter()
                .map(|w| Other::text(format!("chip {} tile {}: {w}", t.chip, t.coord))),
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
    let programs = (t.kernels[i].clone(), t.launched[i].clone());
    let line = |pc: u32| {
        match &programs.1 {
            Some((start, end, p)) if (*start..*end).contains(&pc) => Some(p.as_ref()),
            _ => programs.0.as_deref(),
        }
        .and_then(|p| p.symbols.line(pc))
    };
    let waits = match probe(t, i, turn) {
        Probe::Fifo { addr, write } => format!(
            "{} {addr:#010x} ({})",
            if write {
                "pushes to a full FIFO at"
            } else {
                "pops from an empty FIFO at"
            },
            crate::map::region_name(addr)
        ),
        Probe::Reads(reads) if reads.is_empty() => "loops reading nothing".to_string(),
        Probe::Reads(reads) => {
            let l1 = t.mem.l1.size();
            let (risc, arch) = (t.harts[i].risc, t.harts[i].map.arch);
            let shown: Vec<String> = reads
                .iter()
                .map(|&(at, addr, value)| {
                    let what = if addr < l1 {
                        "L1".to_string()
                    } else {
                        frozen::name(t, addr, risc, arch)
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

/// Steps a copy of core `i` once around its loop (at least `turn` instructions, when it
/// counts in a register its state never comes back) without effects ([`proof::step_pure`]),
/// noting what it reads.
fn probe(t: &mut Tile, i: usize, turn: u64) -> Probe {
    if let Some((addr, write)) = t.harts[i].stuck {
        return Probe::Fifo { addr, write };
    }
    let start = state(&t.harts[i].core.regs, t.harts[i].core.pc);
    let mut copy = t.harts[i].core.clone();
    let mut reads: Vec<(u32, u32, u32)> = Vec::new();
    proof::on_copy(t, i, &mut copy, |t| {
        for _ in 0..turn.max(PROBE_STEPS) {
            let Some(s) = proof::step_pure(t, i) else {
                break;
            };
            if let Some((addr, value)) = s.load {
                if reads.len() < PROBE_READS && !reads.iter().any(|r| r.1 == addr) {
                    reads.push((s.pc, addr, value));
                }
            }
            if state(&t.harts[i].core.regs, t.harts[i].core.pc) == start {
                break;
            }
        }
    });
    Probe::Reads(reads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::{beq, li, lw, Elf};
    use crate::config::DeviceConfig;
    use crate::noc::niu::EventKind;
    use riscv_linker::{memory_map, Arch, Risc};

    #[test]
    fn stall_a_stretch_during_which_the_noc_delivered_is_not_quiet() {
        // BRISC polls an L1 word a NoC write is about to set. The device is looked at
        // twice with nothing run in between but the write landing: memory changed under
        // the core's unchanged state, so the second look must not call it stuck.
        let arch = Arch::WormholeB0;
        let mut dev = Device::new(DeviceConfig::new(arch, (1, 1))).expect("device");
        let m = memory_map(arch, Risc::Brisc);
        let mut w = li(5, 0x30000).to_vec();
        w.extend([lw(6, 5, 0), beq(6, 0, -4)]);
        let mut elf = Elf::new(m.code.start).text(m.code.start, &w);
        if let Some(b) = m.boot {
            let jump = crate::asm::jal(0, (m.code.start - b.start) as i32);
            elf = elf.text(b.start, &[jump]);
        }
        let coord = arch.worker_noc(0, 0).expect("a worker");
        dev.load_kernel(0, coord, Risc::Brisc, &elf.build(), "t.elf")
            .expect("load");
        let t = &mut dev.tiles[0];
        t.start_run(0);
        let payload = crate::noc::niu::Payload {
            data: vec![1u8, 0, 0, 0].into(),
            be: None,
        };
        let niu = t.mem.niu.as_mut().expect("an NIU");
        niu.push(
            1,
            EventKind::Write {
                addr: 0x30000,
                payload,
            },
        );
        let mut watch = Watch::new();
        assert!(watch.look(&mut dev, EVERY).is_none(), "a first look");
        dev.tiles[0].mem.apply_noc(u64::MAX);
        assert_eq!(dev.tiles[0].mem.l1.load::<4>(0x30000), 1);
        assert!(
            watch.look(&mut dev, 2 * EVERY).is_none(),
            "the word the core polls changed since the last look"
        );
    }
}
