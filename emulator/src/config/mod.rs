//! What a device looks like and how it counts time: [`DeviceConfig`], [`Misaligned`]; the
//! pipeline's cost table is [`Timing`], the NoC's [`NocConfig`].

mod noc;
mod numerics;
mod timing;

pub use noc::{Arbitration, NocCalibration, NocConfig};
pub use numerics::Numerics;
pub use timing::Timing;

use crate::time::clock::ClockModel;
use riscv_linker::{Arch, Layout};
use std::path::PathBuf;

/// How misaligned loads and stores behave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Misaligned {
    /// Fault with a message naming the address and width (the default: finds kernel bugs).
    #[default]
    Strict,
    /// Round the address down to the access width, as Wormhole hardware does silently.
    RoundDown,
}

/// Default number of instructions one hart may retire in one run before it is stopped as a
/// runaway.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = 2_000_000_000;

/// Default scheduling quantum in cycles (see [`DeviceConfig::quantum`]).
pub const DEFAULT_QUANTUM: u32 = 64;

/// The environment variable that turns the JIT off when it is `0` ([`DeviceConfig::jit`]).
pub const JIT_VAR: &str = "TTPROF_EMU_JIT";

/// Everything [`crate::Device::new`] needs.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// The chip generation (memory map, timing rules, clock).
    pub arch: Arch,
    /// Number of chips (each with the same grid).
    pub chips: u32,
    /// Worker tiles per chip, `(columns, rows)`, taken from logical (0,0); NoC coordinates
    /// follow [`Arch::worker_noc`]. At most [`Arch::worker_grid`].
    pub grid: (u8, u8),
    /// Where to create the device-memory image file. `None`: a fresh file under
    /// `std::env::temp_dir()`, deleted when the device is dropped.
    pub image: Option<PathBuf>,
    /// The Baby RISC-V pipeline's timing rules ([`Timing::for_arch`] by default).
    pub timing: Timing,
    /// The chips' clocks: frequencies, drift, tile offsets, DVFS steps, host read latency.
    pub clock: ClockModel,
    /// What a misaligned load or store does.
    pub misaligned: Misaligned,
    /// Host threads running tiles (0: one per available core). Results never depend on it.
    pub threads: usize,
    /// Instructions one hart may retire in one run before it is stopped as a runaway.
    pub instruction_budget: u64,
    /// Scheduling window in cycles: within a window the harts of a tile run in causal order
    /// (every L1 or register access in cycle order, see `tile`), so the window only sets how
    /// often NoC epochs, hooks and instruction-budget checks can interrupt them.
    pub quantum: u32,
    /// Compile hot code to host machine code (x86-64 Unix hosts; elsewhere ignored).
    /// Results, line profiles included, are bit-identical either way; off is only for
    /// testing that claim. [`DeviceConfig::new`] turns it off when the environment has
    /// `TTPROF_EMU_JIT=0` (so the claim can be tested through any program built on the
    /// emulator, e.g. `TTPROF_EMU_JIT=0 ttprof run --lines ...`).
    pub jit: bool,
    /// Lines mode ([`crate::isa::lines`]): charge every cycle of every core to the instruction
    /// and [`crate::Cause`] that spent it, read after a run with
    /// [`crate::Device::line_profiles`]. The JIT's code counts what it charges (cores the
    /// debug daisychain samples run on the interpreter); results are the same as without.
    pub lines: bool,
    /// Answer clock-sync requests through the image's mailbox from a background thread
    /// (default on; see `mailbox` in the crate docs). Runs are identical either way.
    pub clock_mailbox: bool,
    /// The NoC and DRAM model ([`NocConfig::for_arch`] by default).
    pub noc: NocConfig,
    /// Stop a run as a deadlock ([`crate::FaultKind::Deadlock`]) once no core can make
    /// progress again (`crate::chip::stall`). Off by default: the detector assumes that nothing
    /// outside the emulator (another process writing the image, a hook of
    /// [`crate::Device::run_with_hook`]) writes a word a core polls without also reading a
    /// clock. A profiler consumer qualifies (it writes `TAIL` and its heartbeat, and the
    /// runtime's wait for ring space reads the clock); a host that releases spinning
    /// cores by writing their L1 does not. `ttprof run`, which owns its image, turns it on.
    pub deadlock_detection: bool,
    /// Whose L1 layout the tiles follow ([`Layout`]): ttprof's (the default: its kernels,
    /// placed by the loader) or tt-metal's (its pre-compiled firmware, its mailboxes, kernels
    /// in its kernel configuration buffer; Wormhole B0 only). It decides which code the
    /// cores may fetch, which L1 stores are faults, and where the loader puts an ELF.
    pub layout: Layout,
    /// Whose rules the Tensix Matrix Unit's floating-point arithmetic follows where the two
    /// public references disagree ([`Numerics`]): ttsim's by default.
    pub numerics: Numerics,
}

impl DeviceConfig {
    /// One chip of `arch` with a `cols x rows` grid and defaults for everything else.
    pub fn new(arch: Arch, grid: (u8, u8)) -> DeviceConfig {
        DeviceConfig {
            arch,
            chips: 1,
            grid,
            image: None,
            timing: Timing::for_arch(arch),
            clock: ClockModel::nominal(),
            misaligned: Misaligned::default(),
            threads: 0,
            instruction_budget: DEFAULT_INSTRUCTION_BUDGET,
            quantum: DEFAULT_QUANTUM,
            jit: std::env::var_os(JIT_VAR).is_none_or(|v| v != "0"),
            lines: false,
            clock_mailbox: true,
            noc: NocConfig::for_arch(arch),
            deadlock_detection: false,
            layout: Layout::Ttprof,
            numerics: Numerics::default(),
        }
    }

    /// The full worker grid of `arch`, on one chip.
    pub fn full_grid(arch: Arch) -> DeviceConfig {
        DeviceConfig::new(arch, arch.worker_grid())
    }
}
