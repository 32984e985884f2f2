//! `ttprof`: the host side of the Tensix device profiler.
//!
//! The pipeline, one module per step:
//!
//! * [`devmem`]: device memory (the emulator's mapped image, snapshots, a tt-kmd stub).
//! * [`readout`]: validate control blocks, read only each ring's live span, decode it
//!   ([`decode`]), optionally consume; [`readout::Drainer`] for streaming.
//! * [`elf`] and [`sites`]: kernel ELFs and their zone-site tables.
//! * [`resolve`]: bind records to site metadata through the op log ([`oplog`]).
//! * [`csv`]: tt-metal's `profile_log_device.csv`; [`summary`]: per-zone totals.
//! * [`clock`]: sync windows and the least-squares clock fit that yields a [`timebase::Timebase`].
//! * [`outputs`]: every output file of a readout; [`session`]: build, launch on the bundled
//!   emulator, drain and write it all (what `ttprof run` does).
//!
//! Problems in device data are [`issue::Issue`]s (never a panic, never silent); I/O and
//! unusable inputs are [`Error`]s.

mod input;
mod model;
pub mod sink;

pub mod atomic;
pub mod error;
/// Opening user-named input files: regular files only, reads bounded by their size.
pub mod files;
pub mod issue;
/// Building kernel crates for `riscv32im-unknown-none-elf`.
pub mod kernels;
#[cfg(feature = "emulator")]
pub mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use input::{capture, decode, devmem, launch, readout, replay};
pub use model::{clock, elf, markers, oplog, ops, profile, resolve, sites, timebase, timeline};
pub use sink::{csv, html, outputs, report, summary, trace, tracy};
pub use error::{Error, Location, Result};
