//! What the emulator itself observes: line-level cycle accounting, deadlock detection, ELF
//! symbols for diagnoses. The tile's debug hardware (the timestamper and the daisychain) is
//! among the devices ([`crate::devices`]).

pub mod lines;
pub(crate) mod stall;
pub(crate) mod symbols;

/// The old paths of the timestamper and the daisychain (their models are devices' now).
pub(crate) use crate::devices::{daisychain, timestamper};
