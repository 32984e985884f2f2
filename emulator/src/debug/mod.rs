//! What the tile's debug hardware and the emulator itself observe: the debug timestamper and
//! daisychain, line-level cycle accounting, deadlock detection, ELF symbols for diagnoses.

pub(crate) mod daisychain;
pub mod lines;
pub(crate) mod stall;
pub(crate) mod symbols;

/// The timestamper's old path (its model is a device's now).
pub(crate) use crate::devices::timestamper;
