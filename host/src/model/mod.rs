//! The model layer: what the records mean.
//!
//! [`elf`] and [`sites`] (zone metadata from kernel ELFs), [`resolve`] (records to sites),
//! [`clock`] and [`timebase`] (device cycles to host ns), [`markers`] (zone nesting order; [`ring_pieces`], the same order from a ring read a piece at a time),
//! [`ops`] (op spans from the wrapper zones), and the resolved whole, [`profile::Profile`],
//! with its per-ring views (a view's zones: [`zones`]); [`timeline`] collects them. [`critpath`] matches waits to
//! signals and walks each op's critical path. [`import`] builds a profile from tt-metal's
//! own capture files instead of device memory. [`ring_source`] is where the outputs take
//! each ring's records from: the profile, or a second pass over the input ([`pass`],
//! [`spooled`], [`import`]). [`provenance`] checks that an op log names the kernels device
//! memory ran.

pub mod clock;
pub mod critpath;
pub mod elf;
#[cfg(test)]
pub(crate) mod fixture;
pub mod import;
pub mod markers;
pub mod ops;
pub mod pass;
pub mod profile;
pub mod provenance;
pub mod resolve;
pub mod ring_pieces;
pub(crate) mod ring_runs;
pub mod ring_source;
pub mod sites;
pub mod spooled;
pub mod timebase;
pub mod timeline;
pub(crate) mod zone_records;
pub mod zones;
