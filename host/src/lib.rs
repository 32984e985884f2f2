//! `ttprof`: the host side of the Tensix device profiler.

pub mod error;
/// Building kernel crates for `riscv32im-unknown-none-elf` (owned by the examples/tests work).
pub mod kernels;
/// The launcher's side of the profiler protocol: tile control blocks, run ids (owned by the examples/tests work).
pub mod launch;
pub mod oplog;

pub use error::{Error, Location, Result};
