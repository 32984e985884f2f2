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

pub mod atomic;
pub mod capture;
pub mod clock;
pub mod csv;
pub mod decode;
pub mod devmem;
pub mod elf;
pub mod error;
/// Opening user-named input files: regular files only, reads bounded by their size.
pub mod files;
pub mod html;
pub mod issue;
/// Building kernel crates for `riscv32im-unknown-none-elf`.
pub mod kernels;
/// The launcher's side of the profiler protocol: tile control blocks, run ids.
pub mod launch;
pub mod markers;
pub mod oplog;
pub mod outputs;
pub mod profile;
pub mod readout;
pub mod replay;
pub mod report;
pub mod resolve;
#[cfg(feature = "emulator")]
pub mod session;
pub mod sink;
pub mod sites;
pub mod summary;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod timebase;
pub mod timeline;
pub mod trace;
pub mod tracy;

pub use error::{Error, Location, Result};
