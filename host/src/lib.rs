#![warn(missing_docs, unreachable_pub)]
//! `ttprof`: the host side of the Tensix device profiler.
//!
//! Kernels linked with `ttprof-rt` write zones into a ring per RISC in each tile's L1; this
//! library reads those rings, names every record from the kernel ELFs, puts device cycles
//! on the host clock, and writes the files people already use. Its layers, each importing
//! only the ones before it:
//!
//! 1. **Util**: [`error`], [`issue`] (problems in device data, never a panic), [`files`],
//!    [`inputs`] (the input guard), [`atomic`] (how files are read and written), [`printable`].
//! 2. **Input**: device memory and ring bytes to records: [`devmem`], [`readout`],
//!    [`decode`], [`capture`], [`replay`], [`launch`], [`oplog`] (what the host ran).
//! 3. **Model**: what the records mean: [`elf`], [`sites`], [`resolve`], [`clock`],
//!    [`timebase`], [`ops`], and the resolved whole, [`profile::Profile`], which yields one
//!    [`RingView`](profile::RingView) per ring.
//! 4. **Sinks**: every output is a [`sink::Sink`] fed ring by ring by [`sink::drive`]
//!    ([`csv`], [`report`], [`trace`], [`html`], [`summary`], [`tracy`]);
//!    [`outputs::write_all`] writes the standard set; a new output is one `Sink` (see its
//!    example).
//! 5. **Commands**: what `ttprof run` ([`session`], feature `emulator`), `ttprof capture`
//!    ([`capture_session`]) and `ttprof diff` ([`diff`], [`pathdiff`]) do, and [`kernels`].
//!    The command line is the `ttprof-cli` crate.

mod util;

mod input;
mod model;
pub mod sink;

mod commands;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::{Error, Location, Result};
pub use input::{capture, decode, devmem, launch, oplog, readout, replay, stamp, tt_metal};
pub use model::{
    clock, critpath, elf, import, markers, ops, pass, profile, provenance, resolve, ring_pieces,
    ring_source, sites, spooled, timebase, timeline, zones,
};
pub use sink::{csv, html, outputs, report, summary, trace, tracy};

pub use commands::{capture_session, diff, kernels, pathdiff, tt_metal_build};
#[cfg(feature = "emulator")]
pub use commands::{lines, session, tt_metal_program};
pub use util::{atomic, error, files, inputs, issue, printable};
