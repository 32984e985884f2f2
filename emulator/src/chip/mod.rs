//! The chip: the device and its tiles (their scheduler and memory), the executor of each core,
//! the device-memory image the host maps, kernel loading and ELF symbols, running, deadlock
//! detection, and the host's side of clocks and DRAM.

pub(crate) mod clock;
pub(crate) mod device;
pub(crate) mod dram;
pub(crate) mod executor;
pub(crate) mod holds;
pub(crate) mod host;
pub(crate) mod image;
pub(crate) mod loader;
pub(crate) mod memory;
pub(crate) mod run;
pub(crate) mod stall;
pub(crate) mod symbols;
pub(crate) mod tile;
