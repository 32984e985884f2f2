//! The bundled emulator, in this process, as device memory: L1 and the tile registers a
//! card's NoC window reaches (the debug daisychain's), through the emulator's own host
//! access ([`ttprof_emu::Device::read_u32`]). A session uses it for what its mapped image
//! cannot reach: registers.

use super::DeviceMemory;
use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::NocCoord;

/// An in-process emulated device, borrowed.
pub struct EmuMemory<'a> {
    dev: &'a ttprof_emu::Device,
}

impl<'a> EmuMemory<'a> {
    /// Device memory of `dev`.
    pub fn new(dev: &'a ttprof_emu::Device) -> EmuMemory<'a> {
        EmuMemory { dev }
    }
}

fn err(e: ttprof_emu::EmuError) -> Error {
    Error::Address {
        what: e.to_string(),
    }
}

impl DeviceMemory for EmuMemory<'_> {
    fn geometry(&self) -> Geometry {
        self.dev.geometry()
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        if chip < self.dev.config().chips {
            self.dev.tiles()
        } else {
            Vec::new()
        }
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        self.dev.read_u32(chip, tile, addr).map_err(err)
    }

    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        self.dev.write_u32(chip, tile, addr, v).map_err(err)
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        self.dev.read_words(chip, tile, addr, out).map_err(err)
    }

    fn bytes_read(&self) -> u64 {
        self.dev.bytes_read()
    }

    fn describe(&self) -> String {
        format!("the emulated device ({})", self.dev.image_path().display())
    }
}
