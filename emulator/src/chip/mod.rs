//! The chip: its configuration, the device and its tiles, L1 and local memory, the memory-mapped
//! devices of a tile, the device-memory image the host maps, kernel loading, running, faults.

pub(crate) mod device;
/// The old path of [`crate::devices::read_is_timeless`], which the pipeline calls.
pub(crate) mod devices {
    pub(crate) use crate::devices::read_is_timeless;
}
pub(crate) mod host;
pub(crate) mod image;
pub(crate) mod loader;
pub(crate) mod memory;
pub(crate) mod run;
pub(crate) mod tile;
