//! The chip: its configuration, the device and its tiles, L1 and local memory, the memory-mapped
//! devices of a tile, the device-memory image the host maps, kernel loading, running, faults.

pub(crate) mod clock;
pub(crate) mod device;
pub(crate) mod devices;
pub(crate) mod dram;
pub(crate) mod executor;
pub(crate) mod host;
pub(crate) mod image;
pub(crate) mod loader;
pub(crate) mod memory;
pub(crate) mod mmio;
pub(crate) mod run;
pub(crate) mod tile;
