//! A backend wrapper that records every word it reads into a [`Snapshot`], so replaying the
//! same readout from the snapshot reads exactly the same words.

use super::{DeviceMemory, Snapshot};
use crate::error::Result;
use riscv_linker::devfile::Geometry;
use riscv_linker::NocCoord;

/// Reads through to `inner` and keeps a copy of what was read.
pub struct Recorder<'m> {
    inner: &'m dyn DeviceMemory,
    snapshot: Snapshot,
}

impl<'m> Recorder<'m> {
    /// Records every read made through it from `inner`.
    pub fn new(inner: &'m dyn DeviceMemory) -> Result<Recorder<'m>> {
        Ok(Recorder {
            inner,
            snapshot: Snapshot::like(inner)?,
        })
    }

    /// What was read so far.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// What was read, as a snapshot.
    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }
}

impl DeviceMemory for Recorder<'_> {
    fn geometry(&self) -> Geometry {
        self.inner.geometry()
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        self.inner.tiles(chip)
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        let v = self.inner.read_u32(chip, tile, addr)?;
        self.snapshot.add(chip, tile, addr, &[v])?;
        Ok(v)
    }

    /// Writes go to the device only: the snapshot keeps what was read.
    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        self.inner.write_u32(chip, tile, addr, v)
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        self.inner.read_words(chip, tile, addr, out)?;
        self.snapshot.add(chip, tile, addr, out)
    }

    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }

    fn describe(&self) -> String {
        format!("{} (recording)", self.inner.describe())
    }

    /// Recorded too: a snapshot of a snapshot keeps the drained payload.
    fn drained_payload_len(&self, chip: u32, tile: NocCoord, risc: riscv_linker::Risc) -> u64 {
        self.inner.drained_payload_len(chip, tile, risc)
    }

    fn drained_payload(
        &self,
        chip: u32,
        tile: NocCoord,
        risc: riscv_linker::Risc,
        piece: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<bool> {
        let mut failed = None;
        let any = self.inner.drained_payload(chip, tile, risc, &mut |bytes| {
            if failed.is_none() {
                failed = self.snapshot.add_drained(chip, tile, risc, bytes).err();
            }
            piece(bytes);
        })?;
        match failed {
            Some(e) => Err(std::io::Error::other(format!(
                "record the drained payload: {e}"
            ))),
            None => Ok(any),
        }
    }
}
