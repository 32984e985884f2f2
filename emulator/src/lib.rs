//! `ttprof-emu`: the bundled Tensix emulator. An RV32IM (+ Zicsr on Blackhole) interpreter and
//! JIT, and a chip model that stands in for hardware in every user run and CI job.
//!
//! * [`Device`] is `chips` chips of a worker grid ([`DeviceConfig`]), five cores per tile, each
//!   tile's L1 in a shared device-memory image another process can map and read rings from.
//! * [`Device::load_kernel`] checks a kernel ELF ([`Program`]) and places it; [`Device::run`]
//!   runs every loaded core until it halts with `ecall` ([`RunSummary`]) or faults
//!   ([`EmuError`], [`Fault`]: chip, tile, RISC, pc, instruction, symbol and source line).
//! * Cores are timed as Tenstorrent's ISA documentation times the Baby RISC-V pipeline
//!   ([`pipeline`], [`Timing`]); [`lines`] charges every cycle to an instruction and a
//!   [`Cause`]; chips' clocks run against virtual host time ([`ClockModel`], [`dvfs`]); the
//!   NoC and DRAM ([`NocConfig`]) and the Tensix coprocessor ([`modelled_mnemonics`]) are
//!   modelled cycle by cycle.
//! * [`asm`], [`decode`], [`disasm`]: a small RV32IM assembler, decoder and disassembler.
//!
//! Runs are deterministic: the same kernels and inputs give the same cycles and L1 bit for bit,
//! whatever [`DeviceConfig::threads`] and [`DeviceConfig::jit`] are. How the emulator is built,
//! layer by layer, is in the repository's `docs/design/`.
//!
//! ```no_run
//! use ttprof_emu::{Device, DeviceConfig};
//! use riscv_linker::{Arch, Risc};
//! # fn main() -> Result<(), ttprof_emu::EmuError> {
//! let mut dev = Device::new(DeviceConfig::new(Arch::WormholeB0, (2, 2)))?;
//! let elf = std::fs::read("reader.elf").unwrap();
//! for tile in dev.tiles() {
//!     dev.load_kernel(0, tile, Risc::Brisc, &elf, "reader.elf")?;
//! }
//! let summary = dev.run()?;
//! println!("{} instructions", summary.instructions());
//! # Ok(()) }
//! ```

mod bus;
mod chip;
mod config;
mod devices;
mod error;
mod isa;
#[cfg(all(target_arch = "x86_64", unix))]
mod jit;
mod map;
mod noc;
mod tensix;
mod time;
pub mod tt_metal;

pub use isa::lines;
pub use isa::{asm, decode, disasm, pipeline};
pub use time::dvfs;

pub use chip::device::Device;
pub use chip::holds::{HartHolds, HeldSpan};
pub use chip::loader::Program;
pub use chip::run::{HartSummary, RunSummary};
pub use config::{Arbitration, NocCalibration, NocConfig};
pub use config::{
    DeviceConfig, Misaligned, Numerics, DEFAULT_INSTRUCTION_BUDGET, DEFAULT_QUANTUM, JIT_VAR,
};
pub use devices::perf_counters::{describe as describe_perf_counter, BANKS as PERF_COUNTER_BANKS};
pub use error::{EmuError, Fault, FaultKind, Other, OtherCore};
pub use isa::csr::MISA_RV32IM;
pub use isa::hart::HartState;
pub use isa::lines::{Cause, HartLines, Segment, TensixWait};
pub use isa::pipeline::{div_cycles, Region, Timing};
pub use riscv_linker::{Arch, Layout, NocCoord, Risc};
pub use tensix::{modelled_mnemonics, FifoDepths, TensixTiming};
pub use time::clock::{ChipClock, ClockModel, ClockTruth, ReadLatency, TileOffsets};
pub use time::dvfs::{parse_schedule, FreqStep, REF_MHZ};
pub use time::sync::SyncSample;

#[cfg(test)]
mod tests {
    /// A device can be moved to and shared with other threads (e.g. a host-side reader).
    #[test]
    fn device_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::Device>();
        check::<crate::EmuError>();
    }
}
