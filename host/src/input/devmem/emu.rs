//! [`EmuMemory`]: the in-process emulator's device memory, through the interface a card's
//! window offers: L1 words and, as on a card's NoC, the tile's debug registers - the
//! timestamper's (`riscv_linker::mmio::TIMESTAMP` ..= `TIMESTAMP_BUF1_END`) and the daisychain's. The device image file
//! ([`super::MappedImage`]) holds L1 only, so the timestamper backend drains in-process
//! (the emulator's hook pauses the tiles; see `ttprof_emu::Device::run_with_hook`).

use super::DeviceMemory;
use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::NocCoord;
use ttprof_emu::Device;

/// Borrows a `Device` as [`DeviceMemory`].
pub struct EmuMemory<'d> {
    dev: &'d Device,
}

impl<'d> EmuMemory<'d> {
    /// The device memory of the in-process emulator `dev`.
    pub fn new(dev: &'d Device) -> EmuMemory<'d> {
        EmuMemory { dev }
    }
}

fn emu(e: ttprof_emu::EmuError) -> Error {
    Error::Address {
        what: e.to_string(),
    }
}

impl DeviceMemory for EmuMemory<'_> {
    fn geometry(&self) -> Geometry {
        let c = self.dev.config();
        Geometry {
            arch: c.arch,
            chips: c.chips,
            tiles_per_chip: self.dev.tiles().len() as u32,
            l1_size: c.arch.l1_size(),
        }
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        if chip < self.dev.config().chips {
            self.dev.tiles()
        } else {
            Vec::new()
        }
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        self.dev.read_u32(chip, tile, addr).map_err(emu)
    }

    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        self.dev.write_u32(chip, tile, addr, v).map_err(emu)
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        self.dev.read_words(chip, tile, addr, out).map_err(emu)
    }

    fn bytes_read(&self) -> u64 {
        self.dev.bytes_read()
    }

    fn describe(&self) -> String {
        format!(
            "the in-process emulator ({})",
            self.dev.image_path().display()
        )
    }
}
