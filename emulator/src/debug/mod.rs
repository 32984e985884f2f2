//! What the tile's debug hardware and the emulator itself observe: the debug timestamper and
//! daisychain, deadlock detection, ELF symbols for diagnoses.

pub(crate) mod daisychain;
pub(crate) mod stall;
pub(crate) mod symbols;
pub(crate) mod timestamper;
