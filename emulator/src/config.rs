//! What a device looks like and how it counts time: [`DeviceConfig`], [`CycleModel`],
//! [`Misaligned`].

use crate::clock::ClockModel;
use crate::noc::NocConfig;
use riscv_linker::Arch;
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

/// The timing model: how many AICLK cycles each instruction takes.
///
/// Every instruction costs `base_cpi`; on top of that a load or store pays the latency of
/// the memory it touches, a taken branch or jump pays `taken_branch`, and `mul*`/`div*`/`rem*`
/// pay `mul`/`div`. The numbers are a deliberately simple in-order model, not measurements
/// of the hardware; they only need to be deterministic and plausible. Every field can be
/// changed; `CycleModel::default()` documents the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleModel {
    /// Cycles every instruction costs. At least 1 (0 is treated as 1).
    pub base_cpi: u32,
    /// Extra cycles of a load from L1 (default 4).
    pub l1_load: u32,
    /// Extra cycles of a store to L1 (default 1: stores are posted).
    pub l1_store: u32,
    /// Extra cycles of a load or store to the core's local RAM (default 0).
    pub local_ram: u32,
    /// Extra cycles of an MMIO register access, e.g. a wall-clock read (default 8).
    pub mmio: u32,
    /// Extra cycles of a taken branch, `jal` or `jalr` (default 1).
    pub taken_branch: u32,
    /// Extra cycles of `mul`, `mulh`, `mulhsu`, `mulhu` (default 2).
    pub mul: u32,
    /// Extra cycles of `div`, `divu`, `rem`, `remu` (default 16).
    pub div: u32,
}

impl Default for CycleModel {
    fn default() -> CycleModel {
        CycleModel { base_cpi: 1, l1_load: 4, l1_store: 1, local_ram: 0, mmio: 8, taken_branch: 1, mul: 2, div: 16 }
    }
}

impl CycleModel {
    /// Every instruction takes exactly one cycle, whatever it does.
    pub const fn one_per_instruction() -> CycleModel {
        CycleModel { base_cpi: 1, l1_load: 0, l1_store: 0, local_ram: 0, mmio: 0, taken_branch: 0, mul: 0, div: 0 }
    }
}

/// Default number of instructions one hart may retire in one run before it is stopped as a
/// runaway.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = 2_000_000_000;

/// Default scheduling quantum in cycles (see [`DeviceConfig::quantum`]).
pub const DEFAULT_QUANTUM: u32 = 64;

/// Everything [`crate::Device::new`] needs.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    pub arch: Arch,
    /// Number of chips (each with the same grid).
    pub chips: u32,
    /// Worker tiles per chip, `(columns, rows)`, taken from logical (0,0); NoC coordinates
    /// follow [`Arch::worker_noc`]. At most [`Arch::worker_grid`].
    pub grid: (u8, u8),
    /// Where to create the device-memory image file. `None`: a fresh file under
    /// `std::env::temp_dir()`, deleted when the device is dropped.
    pub image: Option<PathBuf>,
    pub cycle: CycleModel,
    pub clock: ClockModel,
    pub misaligned: Misaligned,
    /// Host threads running tiles (0: one per available core). Results never depend on it.
    pub threads: usize,
    /// Instructions one hart may retire in one run before it is stopped as a runaway.
    pub instruction_budget: u64,
    /// Scheduling quantum in cycles: the harts of a tile take turns, in [`riscv_linker::Risc`]
    /// order, each running until its own clock reaches the end of the current quantum.
    /// Smaller is a finer interleaving of the harts' memory traffic, larger is faster.
    pub quantum: u32,
    /// Compile hot code to host machine code (x86-64 Unix hosts; elsewhere ignored).
    /// Results are bit-identical either way; off is only for testing that claim.
    pub jit: bool,
    /// Answer clock-sync requests through the image's mailbox from a background thread
    /// (default on; see `mailbox` in the crate docs). Runs are identical either way.
    pub clock_mailbox: bool,
    /// The NoC and DRAM model ([`NocConfig::for_arch`] by default).
    pub noc: NocConfig,
}

impl DeviceConfig {
    /// One chip of `arch` with a `cols x rows` grid and defaults for everything else.
    pub fn new(arch: Arch, grid: (u8, u8)) -> DeviceConfig {
        DeviceConfig {
            arch,
            chips: 1,
            grid,
            image: None,
            cycle: CycleModel::default(),
            clock: ClockModel::nominal(),
            misaligned: Misaligned::default(),
            threads: 0,
            instruction_budget: DEFAULT_INSTRUCTION_BUDGET,
            quantum: DEFAULT_QUANTUM,
            jit: true,
            clock_mailbox: true,
            noc: NocConfig::for_arch(arch),
        }
    }

    /// The full worker grid of `arch`, on one chip.
    pub fn full_grid(arch: Arch) -> DeviceConfig {
        DeviceConfig::new(arch, arch.worker_grid())
    }
}
