//! The command layer, above input, model and sink: what the `ttprof` subcommands do, as a
//! library, each taking inputs through the model to the outputs.
//!
//! [`session`] (`ttprof run`: build kernels, run them on the bundled emulator, drain and
//! write everything), [`capture_session`] (`ttprof capture`: attach to live device memory,
//! drain while kernels run, write what it took), [`diff`] and [`pathdiff`] (`ttprof diff`:
//! two runs compared), [`lines`] (line-level cycles and samples of `run --lines` and
//! `--sample`), [`kernels`] (building kernel crates and C/C++ kernels), [`tt_metal_build`]
//! (building tt-metal's dataflow kernels unchanged).

pub mod capture_session;
pub mod diff;
pub mod kernels;
#[cfg(feature = "emulator")]
pub mod lines;
pub mod pathdiff;
#[cfg(feature = "emulator")]
pub mod session;
pub mod tt_metal_build;
#[cfg(feature = "emulator")]
pub mod tt_metal_program;
