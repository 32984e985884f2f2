//! Where everything lives on a Tensix tile.
//!
//! This crate is the single source of truth for memory layout, shared by the `no_std`
//! kernel runtime (`ttprof-rt`), the emulator and the host tool:
//!
//! * [`Arch`] and [`Risc`]: the chips and the five "Baby RISC-V" cores of a tile, with the
//!   numbers from tt-metal's SoC descriptors and Tenstorrent's ISA documentation.
//! * [`memory_map`]: per (arch, RISC) code, data, local RAM, stack and reset PC.
//! * [`mmio`]: the wall clock, soft reset and the other memory-mapped registers.
//! * [`noc`]: the NIU register map per arch, command/status encodings, DRAM channels and banks.
//! * [`profiler`]: the profiler's L1 region: one tile control block, one ring per RISC.
//! * [`tt_metal`]: tt-metal's L1 layout (Wormhole B0 and Blackhole), for its pre-compiled firmware.
//! * [`tilemap`]: a real chip's tiles: harvesting, NoC0, NoC1 and translated coordinates.
//! * [`devfile`]: the layout of a device-memory image file (the emulator's PCIe-like mapping).
//! * `script` / `build` (feature `std`): the linker script for an (arch, RISC) pair and the
//!   helper a kernel crate's `build.rs` calls.
//!
//! Everything here is plain data and `const fn`s so that it can be used from kernels.
#![no_std]
#![warn(missing_docs)]

#[cfg(any(feature = "std", test))]
extern crate std;

mod arch;
pub mod devfile;
mod map;
pub mod mmio;
pub mod noc;
pub mod profiler;
pub mod tensix;
pub mod tilemap;
pub mod tt_metal;

#[cfg(feature = "std")]
pub mod build;
#[cfg(feature = "lock")]
pub mod lock;
#[cfg(feature = "std")]
pub mod script;

pub use arch::{Arch, NocCoord, Risc};
pub use map::{
    l1_reserved, memory_map, runtime_args, L1Owner, Layout, MemoryMap, Region, MAX_RUNTIME_ARGS,
    RUNTIME_ARGS_BASE, RUNTIME_ARGS_BYTES, USER_L1_BASE,
};
pub use tilemap::{HarvestError, TileMap};
