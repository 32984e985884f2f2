//! Real hardware through Tenstorrent's kernel driver, tt-kmd: a documented stub.
//!
//! ## What a real implementation does
//!
//! tt-kmd exposes each PCIe card as `/dev/tenstorrent/N`. A host process opens it, asks the
//! driver (ioctls) for TLB windows, configures each window to point at a NoC address
//! (`NocCoord::noc_address`: `(y << 42) | (x << 36) | local`), and maps the window (BAR0 on
//! Wormhole: 156 x 1 MiB + 10 x 2 MiB + 20 x 16 MiB windows; Blackhole: 202 x 2 MiB in BAR0,
//! 8 x 4 GiB in BAR4) uncached. Reads and writes are then volatile 32-bit accesses into the
//! window, exactly as [`super::MappedImage`] does over the emulator's file; a readout would
//! program one window per tile it visits. Host reads over PCIe are slow (~0.05 GB/s), which
//! is why the readout reads only control words and live ring spans. The Rust crate `luwen`
//! wraps this driver. Clock samples ([`super::DeviceClock`]) would bracket one read of the
//! tile's wall clock with the host's monotonic clock (`CLOCK_MONOTONIC_RAW`, the clock the
//! op log must then use too): host time before, a 32-bit read of `WALL_CLOCK_L` (which
//! latches the high word) and of `WALL_CLOCK_H` through the tile's TLB window, host time
//! after. The device samples the counter at the `WALL_CLOCK_L` read, so only that read's
//! round trip should lie inside the bracket: read `H` after taking "host after". Samples
//! then go to `ttprof::clock` exactly like the emulator's.
//!
//! ## Why it is a stub
//!
//! Nothing here can be tested honestly without a card, so [`TtKmd::open`] refuses with an
//! error that says so. The type implements [`DeviceMemory`] and [`DeviceClock`] so the
//! traits are known to fit it;
//! it cannot be constructed, so none of those methods can run.

use super::{DeviceClock, DeviceMemory, SyncSample};
use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::NocCoord;

/// Uninhabited: no value of this type exists.
enum Never {}

/// A Tenstorrent PCIe device through tt-kmd (not implemented; see the module docs).
pub struct TtKmd {
    never: Never,
}

impl TtKmd {
    /// The device node of card `index`.
    pub fn device_path(index: u32) -> String {
        format!("/dev/tenstorrent/{index}")
    }

    /// Always an error: whether or not the device node exists, this build cannot drive it.
    pub fn open(index: u32) -> Result<TtKmd> {
        let path = Self::device_path(index);
        let found = if std::path::Path::new(&path).exists() { "exists" } else { "does not exist on this machine" };
        Err(Error::Unsupported(format!(
            "reading real hardware through tt-kmd ({path}, which {found}) is not implemented in this build; \
             read the emulator's device image or a snapshot instead (--device <file>)"
        )))
    }
}

impl DeviceMemory for TtKmd {
    fn geometry(&self) -> Geometry {
        match self.never {}
    }
    fn tiles(&self, _chip: u32) -> Vec<NocCoord> {
        match self.never {}
    }
    fn read_u32(&self, _chip: u32, _tile: NocCoord, _addr: u32) -> Result<u32> {
        match self.never {}
    }
    fn write_u32(&self, _chip: u32, _tile: NocCoord, _addr: u32, _v: u32) -> Result<()> {
        match self.never {}
    }
    fn bytes_read(&self) -> u64 {
        match self.never {}
    }
    fn describe(&self) -> String {
        match self.never {}
    }
}

impl DeviceClock for TtKmd {
    fn sync_sample(&self, _chip: u32, _tile: NocCoord) -> Result<SyncSample> {
        match self.never {}
    }
    fn wait_ns(&self, _ns: u64) -> Result<()> {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn refuses_to_open_and_says_why() {
        let e = match super::TtKmd::open(0) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("the stub opened"),
        };
        assert!(e.contains("/dev/tenstorrent/0") && e.contains("not implemented"), "{e}");
    }
}
