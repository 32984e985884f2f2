//! Errors: why a device could not be built, a kernel not loaded or a run not finished.
//!
//! A fault of a core is reported with everything needed to find the bug without a
//! debugger: chip, tile (NoC x,y), RISC, pc, the instruction word and its disassembly,
//! the nearest ELF symbol and, when the ELF has line tables, the source line.

use riscv_linker::{NocCoord, Risc};
use std::fmt;
use std::path::PathBuf;

/// What went wrong on a core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The word at pc is not an instruction of the emulated ISA.
    IllegalInstruction,
    /// A CSR instruction the core cannot execute (`reason` says why).
    Csr {
        /// The CSR number.
        csr: u32,
        /// Why it cannot be executed.
        reason: &'static str,
    },
    /// pc left the core's code region.
    FetchOutsideCode,
    /// A jump or taken branch to an address that is not 4-byte aligned (no C extension).
    MisalignedJump {
        /// The jump target.
        target: u32,
    },
    /// A load or store to an address no region of this core covers.
    Access {
        /// The address accessed.
        addr: u32,
        /// Bytes accessed.
        size: u32,
        /// A store (`false`: a load).
        write: bool,
    },
    /// A store into the code region of `owner` (code is read-only while kernels run).
    StoreIntoCode {
        /// The address accessed.
        addr: u32,
        /// The core whose code region it is.
        owner: Risc,
    },
    /// A misaligned load or store in [`crate::Misaligned::Strict`] mode.
    Misaligned {
        /// The address accessed.
        addr: u32,
        /// Bytes accessed.
        size: u32,
        /// A store (`false`: a load).
        write: bool,
    },
    /// The core retired more than the configured instruction budget in one run.
    Runaway {
        /// The instruction budget.
        budget: u64,
    },
    /// No core of the device can make progress again: every running core repeats a loop
    /// that stores nothing and reads only what nothing will change, or waits on a FIFO
    /// (`crate::chip::stall`). `cores`: how many cores are stuck (each described in
    /// [`Fault::others`]).
    Deadlock {
        /// Cores stuck.
        cores: usize,
    },
    /// The run reached its wall-clock deadline ([`crate::Device::set_deadline`]) with
    /// `cores` cores still running (each described in [`Fault::others`]).
    Timeout {
        /// Cores still running.
        cores: usize,
    },
    /// The core executed `ebreak` (the runtime's panic handler ends in one).
    Ebreak,
    /// The kernel panicked: its runtime stopped at `ebreak` with the panic's location and
    /// message in registers (`riscv_linker::mmio::PANIC_MAGIC`); the message is empty when
    /// it was not a literal.
    Panic {
        /// The source file of the panic.
        file: String,
        /// Its line.
        line: u32,
        /// The panic message (empty when it was not a literal).
        message: String,
    },
    /// The core issued a NoC request the chip cannot carry out (the message says what and
    /// why: an address outside L1 or DRAM, a target that is not emulated, ...).
    Noc(String),
    /// Not a fault: the access waits on a FIFO (a load from an empty mailbox or PCBuf, a
    /// store to a full one) and the tile retries it; only reported if every core waits (a
    /// deadlock). Nothing of the access has happened: the core's state is as before it.
    Blocked {
        /// The address accessed.
        addr: u32,
        /// A store (`false`: a load).
        write: bool,
    },
    /// An access to a region the memory map leaves unmapped for this core (e.g. a mailbox
    /// from NCRISC, another TRISC's instruction push window, GPRs from NCRISC).
    Unmapped {
        /// The address accessed.
        addr: u32,
        /// Bytes accessed.
        size: u32,
        /// A store (`false`: a load).
        write: bool,
        /// The core that made the access or push.
        risc: Risc,
        /// The region's name in the memory map.
        region: &'static str,
    },
    /// A load from a write-only region (Tensix instruction push, MOP expander configuration).
    WriteOnly {
        /// The address accessed.
        addr: u32,
        /// Bytes accessed.
        size: u32,
        /// The core that made the access or push.
        risc: Risc,
        /// The region's name in the memory map.
        region: &'static str,
    },
    /// `risc` pushed Tensix instruction `word` (`mnemonic`) to Tensix thread `thread` (a
    /// store to `addr`, `.ttinsn`, or a debug-bus push) that the emulator's coprocessor
    /// cannot execute: `problem` says why (an instruction or mode not modelled, undefined
    /// behaviour, a push the hardware would drop). The fault's pc is the pushing core's.
    TensixPush {
        /// The Tensix instruction word.
        word: u32,
        /// The address accessed.
        addr: u32,
        /// The core that made the access or push.
        risc: Risc,
        /// The Tensix thread (0..=2).
        thread: u8,
        /// The instruction's mnemonic.
        mnemonic: &'static str,
        /// Why it cannot be executed.
        problem: String,
    },
    /// Tensix thread `thread` reached `word` (`mnemonic`) at its wait gate and cannot
    /// execute it (`problem`): out of the replay buffer or a MOP expansion that `risc`
    /// started (what the push can check is checked there), or in a state the model refuses
    /// (a Vector Unit hazard software must avoid, undefined behaviour of the flag stack).
    /// The fault is reported on the core whose access brought the coprocessor to that cycle.
    TensixExec {
        /// The Tensix instruction word.
        word: u32,
        /// The core that made the access or push.
        risc: Risc,
        /// The Tensix thread (0..=2).
        thread: u8,
        /// The instruction's mnemonic.
        mnemonic: &'static str,
        /// Why it cannot be executed.
        problem: String,
    },
    /// A store to the tile's debug timestamper that the emulator cannot carry out: what
    /// `DebugTimestamper.md` calls undefined behaviour (mixing event sizes within a 16-byte
    /// unit, a command whose low three bits are 5 or 6), a unit that would land outside L1
    /// or in a code region, or a narrow store to one of its registers. The message says
    /// which (see `src/debug/timestamper.rs`).
    Timestamper(String),
    /// A debug daisychain write into L1 the emulator cannot carry out (a slot in a code
    /// region or outside L1; see `src/debug/daisychain.rs`).
    Daisychain(String),
    /// A TDMA-RISC command or mover operation the emulator cannot carry out (a command form
    /// or destination not modelled, a move out of the documented ranges; see
    /// `src/devices/mover.rs`).
    Mover(String),
    /// NCRISC's instruction RAM used in a way the emulator cannot follow (lines mode, or the
    /// mover writing it while NCRISC executes from it, which the ISA documentation says
    /// corrupts it).
    InstructionRam(String),
    /// A performance counter read or configuration the emulator cannot carry out: a
    /// counter the model cannot derive (named), a select naming no counter, an undocumented
    /// mode (see `src/devices/perf_counters.rs`).
    PerfCounter(String),
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rw = |w: bool| if w { "store" } else { "load" };
        match self {
            FaultKind::IllegalInstruction => write!(f, "illegal instruction"),
            FaultKind::Csr { csr, reason } => write!(f, "CSR {csr:#05x}: {reason}"),
            FaultKind::FetchOutsideCode => write!(f, "instruction fetch outside the core's code region"),
            FaultKind::MisalignedJump { target } => {
                write!(f, "jump to misaligned address {target:#010x} (RV32IM has no compressed instructions)")
            }
            FaultKind::Access { addr, size, write } => {
                write!(f, "{}-byte {} at {addr:#010x} is outside every region of this core", size, rw(*write))
            }
            FaultKind::StoreIntoCode { addr, owner } => {
                write!(f, "store to {addr:#010x} inside the code region of {owner}")
            }
            FaultKind::Misaligned { addr, size, write } => write!(
                f,
                "misaligned {}-byte {} at {addr:#010x} (strict mode; Misaligned::RoundDown rounds down like Wormhole)",
                size,
                rw(*write)
            ),
            FaultKind::Runaway { budget } => {
                write!(f, "runaway: more than {budget} instructions retired in one run (instruction budget)")
            }
            FaultKind::Deadlock { cores } => write!(
                f,
                "deadlock: none of the {cores} running core(s) can make progress (each repeats a loop that stores \
                 nothing and reads only what no core, NoC transfer, coprocessor or host will change, or waits on a \
                 FIFO nothing will serve)"
            ),
            FaultKind::Timeout { cores } => write!(
                f,
                "stopped at the wall-clock deadline with {cores} core(s) still running"
            ),
            FaultKind::Ebreak => write!(f, "kernel stopped at ebreak/panic"),
            FaultKind::Panic { file, line, message } if message.is_empty() => {
                write!(f, "kernel panicked at {}:{line}", file.escape_debug())
            }
            FaultKind::Panic { file, line, message } => {
                write!(f, "kernel panicked at {}:{line}: {}", file.escape_debug(), message.escape_debug())
            }
            FaultKind::Noc(what) => write!(f, "bad NoC request: {what}"),
            FaultKind::Blocked { addr, write } => write!(
                f,
                "{} at {addr:#010x} waits on {} FIFO in {}, and no core of the tile can make progress (deadlock)",
                rw(*write),
                if *write { "a full" } else { "an empty" },
                crate::map::region_name(*addr),
            ),
            FaultKind::Unmapped { addr, size, write, risc, region } => {
                write!(f, "{size}-byte {} at {addr:#010x}: {region} is unmapped for {risc}", rw(*write))
            }
            FaultKind::WriteOnly { addr, size, risc, region } => {
                write!(f, "{size}-byte load at {addr:#010x} by {risc}: {region} is write-only")
            }
            FaultKind::TensixPush { word, addr, risc, thread, mnemonic, problem } => write!(
                f,
                "{risc} pushes Tensix instruction {mnemonic} ({word:#010x}) to Tensix thread T{thread} ({} {addr:#010x}): \
                 {problem}",
                if *addr == riscv_linker::mmio::INSTRN_BUF_CTRL0 { "debug-bus push through" } else { "store to" }
            ),
            FaultKind::TensixExec { word, risc, thread, mnemonic, problem } => write!(
                f,
                "Tensix thread T{thread} cannot execute {mnemonic} ({word:#010x}) at its wait gate (pushed by {risc}, or out of a MOP/REPLAY it pushed): {problem}"
            ),
            FaultKind::Timestamper(what) => write!(f, "debug timestamper: {what}"),
            FaultKind::Daisychain(what) => write!(f, "debug daisychain: {what}"),
            FaultKind::Mover(what) => write!(f, "TDMA-RISC mover: {what}"),
            FaultKind::InstructionRam(what) => write!(f, "NCRISC instruction RAM: {what}"),
            FaultKind::PerfCounter(what) => write!(f, "performance counters, {what}"),
        }
    }
}

/// A fault of one core, with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The core's chip.
    pub chip: u32,
    /// The core's tile.
    pub tile: NocCoord,
    /// Which of the tile's cores.
    pub risc: Risc,
    /// The pc of the faulting instruction.
    pub pc: u32,
    /// The instruction word at pc, if pc is readable.
    pub word: Option<u32>,
    /// That word's disassembly.
    pub disassembly: Option<String>,
    /// The ELF the core was running.
    pub elf: String,
    /// Nearest ELF symbol at or below pc, as `name+0xoffset`.
    pub symbol: Option<String>,
    /// Source location from the ELF's line tables, as `file:line`.
    pub location: Option<String>,
    /// Instructions the core retired in this run before the fault.
    pub instret: u64,
    /// For a deadlock or a timeout: where every running core is and what it waits on or
    /// did (one line each; the fault's text prints each on its own line).
    pub others: Vec<Other>,
}

/// One line of a deadlock or timeout report: a running core, or something else that waits
/// (a Tensix thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Other {
    /// The core the line describes and its pc (`None`: not a core).
    pub core: Option<OtherCore>,
    /// The line.
    pub text: String,
}

/// Which core a report line describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherCore {
    /// Its chip.
    pub chip: u32,
    /// Its tile.
    pub tile: NocCoord,
    /// The core.
    pub risc: Risc,
    /// Where it stopped.
    pub pc: u32,
}

impl Other {
    /// A line about something that is not a core.
    pub fn text(text: String) -> Other {
        Other { core: None, text }
    }
}

impl fmt::Display for Other {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "chip {} tile {} {}: {} at pc {:#010x}",
            self.chip, self.tile, self.risc, self.kind, self.pc
        )?;
        match (self.word, &self.disassembly) {
            (Some(w), Some(text)) => write!(f, " (instruction {w:#010x}: {text})")?,
            (Some(w), None) => write!(f, " (instruction {w:#010x})")?,
            (None, _) => write!(f, " (no instruction readable at pc)")?,
        }
        match &self.symbol {
            Some(s) => write!(f, " in {s}")?,
            None => write!(f, " (no symbol)")?,
        }
        if let Some(l) = &self.location {
            write!(f, " at {l}")?;
        }
        write!(f, " [{} after {} instructions]", self.elf, self.instret)?;
        // One line per core: a deadlock report is read core by core.
        if !self.others.is_empty() {
            write!(f, "; every running core:")?;
            for o in &self.others {
                write!(f, "\n  {o}")?;
            }
        }
        Ok(())
    }
}

/// Every error of the emulator.
#[derive(Debug)]
pub enum EmuError {
    /// A core faulted or stopped at `ebreak`.
    Fault(Box<Fault>),
    /// An ELF was rejected (`file` names it).
    Elf {
        /// The ELF's path.
        file: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The device-memory image could not be created or mapped.
    Image {
        /// The image file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The configuration or an argument is impossible.
    Config(String),
}

impl EmuError {
    /// The fault, if this error is one.
    pub fn fault(&self) -> Option<&Fault> {
        match self {
            EmuError::Fault(f) => Some(f),
            _ => None,
        }
    }
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::Fault(x) => x.fmt(f),
            EmuError::Elf { file, reason } => write!(f, "{file}: {reason}"),
            EmuError::Image { path, source } => {
                write!(f, "device-memory image {}: {source}", path.display())
            }
            EmuError::Config(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for EmuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmuError::Image { source, .. } => Some(source),
            _ => None,
        }
    }
}
