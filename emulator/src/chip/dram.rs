//! The device's DRAM as a host reaches it between runs, like a host writing buffers over
//! PCIe (contents: [`crate::noc::dram`]).

use crate::chip::device::Device;
use crate::error::EmuError;
use riscv_linker::noc::dram as layout;
use riscv_linker::NocCoord;

/// Host access to DRAM, between runs (like a host writing buffers over PCIe).
impl Device {
    fn check_dram(&self, chip: u32, channel: u32, offset: u64, len: usize) -> Result<(), EmuError> {
        let arch = self.arch();
        if chip >= self.cfg.chips {
            return Err(EmuError::Config(format!(
                "chip {chip} does not exist (the device has {})",
                self.cfg.chips
            )));
        }
        let channels = layout::channels(arch).len() as u32;
        if channel >= channels {
            return Err(EmuError::Config(format!(
                "DRAM channel {channel} does not exist ({arch} has {channels})"
            )));
        }
        let size = layout::channel_size(arch);
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(EmuError::Config(format!(
                "DRAM access of {len} bytes at {offset:#x} runs past channel {channel} ({size:#x} bytes)"
            )));
        }
        if !self.cfg.noc.enabled {
            return Err(EmuError::Config(
                "DRAM is part of the NoC model, which this device has turned off".into(),
            ));
        }
        Ok(())
    }

    /// Writes `data` at byte `offset` of DRAM channel `channel` of `chip`.
    pub fn write_dram(
        &mut self,
        chip: u32,
        channel: u32,
        offset: u64,
        data: &[u8],
    ) -> Result<(), EmuError> {
        self.check_dram(chip, channel, offset, data.len())?;
        self.noc[chip as usize]
            .dram
            .write(channel, offset, data, None);
        Ok(())
    }

    /// Reads `len` bytes at byte `offset` of DRAM channel `channel` of `chip`.
    pub fn read_dram(
        &self,
        chip: u32,
        channel: u32,
        offset: u64,
        len: usize,
    ) -> Result<Vec<u8>, EmuError> {
        self.check_dram(chip, channel, offset, len)?;
        let mut v = vec![0u8; len];
        self.noc[chip as usize].dram.read(channel, offset, &mut v);
        self.bytes_read
            .fetch_add(len as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(v)
    }

    /// Writes `data` as an interleaved buffer at bank address `base` with pages of
    /// `page_size` bytes, laid out as tt-metal does (page `p` in bank `p % banks`,
    /// [`riscv_linker::noc::dram::interleaved_page`]); the last page may be partial.
    pub fn write_dram_interleaved(
        &mut self,
        chip: u32,
        base: u32,
        page_size: u32,
        data: &[u8],
    ) -> Result<(), EmuError> {
        if page_size == 0 {
            return Err(EmuError::Config(
                "interleaved DRAM buffer: page size must be positive".into(),
            ));
        }
        for (p, page) in data.chunks(page_size as usize).enumerate() {
            let (bank, at) = layout::interleaved_page(self.arch(), base, page_size, p as u32);
            self.write_dram(chip, bank.channel, at, page)?;
        }
        Ok(())
    }

    /// Reads `len` bytes of an interleaved buffer (see [`Device::write_dram_interleaved`]).
    pub fn read_dram_interleaved(
        &self,
        chip: u32,
        base: u32,
        page_size: u32,
        len: usize,
    ) -> Result<Vec<u8>, EmuError> {
        if page_size == 0 {
            return Err(EmuError::Config(
                "interleaved DRAM buffer: page size must be positive".into(),
            ));
        }
        let mut out = Vec::with_capacity(len);
        let mut p = 0u32;
        while out.len() < len {
            let n = (page_size as usize).min(len - out.len());
            let (bank, at) = layout::interleaved_page(self.arch(), base, page_size, p);
            out.extend(self.read_dram(chip, bank.channel, at, n)?);
            p += 1;
        }
        Ok(out)
    }

    /// Status counter `index` ([`riscv_linker::noc::counter`]) of NIU `noc` of a tile, as
    /// a core would read it now (between runs).
    pub fn noc_counter(
        &self,
        chip: u32,
        tile: NocCoord,
        noc: u8,
        index: u32,
    ) -> Result<u32, EmuError> {
        let t = &self.tiles[self.tile_index(chip, tile)?];
        if noc > 1 || index >= riscv_linker::noc::counter::COUNT {
            return Err(EmuError::Config(format!(
                "NIU {noc} counter {index}: no such counter"
            )));
        }
        t.mem
            .niu
            .as_ref()
            .map(|n| n.counter(noc, index))
            .ok_or_else(|| EmuError::Config("the NoC model is off".into()))
    }

    /// Requests the NoC of `chip` has carried and payload bytes it has moved, since the
    /// device was made.
    pub fn noc_traffic(&self, chip: u32) -> Option<(u64, u64)> {
        self.noc.get(chip as usize).map(|n| (n.requests, n.bytes))
    }
}
