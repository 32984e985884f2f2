//! `ttprof-emu`: the bundled Tensix emulator.
//!
//! An RV32IM (+ Zicsr on Blackhole) interpreter and a chip model that stands in for
//! hardware in every user run and CI job:
//!
//! * [`Device`]: `chips` chips of a worker grid, five cores per tile, each tile's L1 in a
//!   shared, file-backed device-memory image laid out as [`riscv_linker::devfile`] says, so
//!   a host tool in another process can map it and read rings while kernels run.
//! * [`Device::load_kernel`] checks a kernel ELF against [`riscv_linker::memory_map`] and
//!   places it; [`Device::run`] / [`Device::run_with_hook`] run every loaded core until it
//!   halts with `ecall` (`a0` = exit code).
//! * The wall clock (latched `WALL_CLOCK_L`/`H`, live `H`), soft reset, the debug
//!   timestamper's event streams into L1 (DebugTimestamper.md's functional model, shared by
//!   the tile's five cores) and the debug register block (the `mmio` and
//!   `timestamper` module docs), the debug daisychain's sampling (`daisychain`), the Baby
//!   RISC-V pipeline as Tenstorrent's ISA documentation times it ([`pipeline`], [`Timing`]),
//!   and a [`ClockModel`] relating each chip's counter to virtual host time for
//!   clock-alignment work ([`Device::sync_sample`], [`Device::clock_truth`]).
//! * The clock-sync mailbox: a host in another process writes a request (chip, tile) into
//!   the image header ([`riscv_linker::devfile::mailbox`]) and a background thread answers
//!   with a sample in virtual host time, while kernels run and while the device is idle.
//!   It cannot change a run: it reads only configuration and the published virtual host
//!   time and writes only the mailbox; the ordering argument is in `src/time/mailbox.rs`.
//! * The tile's devices (mailboxes, PCBufs, TTSync, Tensix semaphores and GPRs, plain
//!   storage for the other windows), per core as the memory map gives them (`devices`
//!   module docs).
//! * The Tensix coprocessor (frontend, control backend, unpacker, Matrix Unit, packer 0 and
//!   the Vector Unit), cycle by cycle in causal time with the cores (`tensix` module docs;
//!   [`modelled_mnemonics`] lists what it executes).
//! * Faults (illegal instruction, bad access, a window unmapped for the core, store into
//!   code, misalignment in strict mode, runaway, `ebreak`, a push of a Tensix instruction
//!   the coprocessor model does not execute, a bad NoC request, undefined timestamper use,
//!   a deadlock) stop the run with an [`EmuError`] naming chip, tile, RISC, pc, the
//!   instruction and its disassembly, the nearest symbol and source line.
//!
//! Runs are deterministic: the same kernels and inputs give the same cycle counts and the
//! same L1 contents, bit for bit, whatever [`DeviceConfig::threads`] is, and whether or not
//! the x86-64 JIT ([`DeviceConfig::jit`]) is used. `README.md` describes the scheduling
//! rule, the memory-ordering argument for the shared image, and the benchmark.
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

mod chip;
mod config;
mod debug;
mod devices;
mod error;
mod isa;
#[cfg(all(target_arch = "x86_64", unix))]
mod jit;
mod map;
mod noc;
mod tensix;
mod time;

pub use debug::lines;
pub use isa::{asm, decode, disasm, pipeline};
pub use time::dvfs;

pub use chip::device::Device;
pub use chip::loader::Program;
pub use chip::run::{HartSummary, RunSummary};
pub use config::{Arbitration, NocCalibration, NocConfig};
pub use config::{DeviceConfig, Misaligned, DEFAULT_INSTRUCTION_BUDGET, DEFAULT_QUANTUM, JIT_VAR};
pub use debug::lines::{Cause, HartLines, Segment, TensixWait};
pub use error::{EmuError, Fault, FaultKind};
pub use isa::csr::MISA_RV32IM;
pub use isa::hart::HartState;
pub use isa::pipeline::{div_cycles, Region, Timing};
pub use riscv_linker::{Arch, NocCoord, Risc};
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
