//! Where a capture keeps what it drained: each ring's payload stream, appended in chunks to
//! one temporary file and read back one ring at a time, so a long capture holds no more in
//! memory than one drain's bytes and one ring's stream.

use crate::error::{Error, Result};
use crate::readout::RingId;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Payload streams of many rings in one file (removed when dropped).
pub struct Spool {
    path: PathBuf,
    file: File,
    len: u64,
    /// Per ring, its chunks in order: `(offset, length)`.
    chunks: BTreeMap<RingId, Vec<(u64, u64)>>,
}

impl Spool {
    /// A new, empty spool file in `dir`.
    pub fn create(dir: &Path) -> Result<Spool> {
        let path = dir.join(format!(".ttprof-capture-{}.spool", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Error::io(&path, "create capture spool", e))?;
        Ok(Spool { path, file, len: 0, chunks: BTreeMap::new() })
    }

    /// Appends one drain's payloads (ring, bytes) in one write.
    pub fn append(&mut self, drained: &[(RingId, Vec<u8>)]) -> Result<()> {
        let total: usize = drained.iter().map(|(_, b)| b.len()).sum();
        if total == 0 {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(total);
        for (id, bytes) in drained.iter().filter(|(_, b)| !b.is_empty()) {
            self.chunks.entry(*id).or_default().push((self.len + buf.len() as u64, bytes.len() as u64));
            buf.extend_from_slice(bytes);
        }
        let io = |e| Error::io(&self.path, "write capture spool", e);
        self.file.seek(SeekFrom::Start(self.len)).map_err(io)?;
        self.file.write_all(&buf).map_err(io)?;
        self.len += buf.len() as u64;
        Ok(())
    }

    /// Ring `id`'s whole payload stream (empty if it had none).
    pub fn read(&mut self, id: RingId) -> Result<Vec<u8>> {
        let chunks = self.chunks.get(&id).cloned().unwrap_or_default();
        let mut out = vec![0u8; chunks.iter().map(|c| c.1 as usize).sum()];
        let mut at = 0;
        for (offset, len) in chunks {
            let io = |e| Error::io(&self.path, "read capture spool", e);
            self.file.seek(SeekFrom::Start(offset)).map_err(io)?;
            self.file.read_exact(&mut out[at..at + len as usize]).map_err(io)?;
            at += len as usize;
        }
        Ok(out)
    }

    /// Bytes spooled in all.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riscv_linker::{NocCoord, Risc};

    #[test]
    fn rings_read_back_their_chunks_in_order_and_the_file_goes_with_the_spool() {
        let dir = crate::testing::temp_dir("spool");
        let id = |risc| RingId { chip: 0, tile: NocCoord::new(1, 1), risc };
        let mut s = Spool::create(&dir).unwrap();
        s.append(&[(id(Risc::Brisc), vec![1, 2]), (id(Risc::Ncrisc), vec![9]), (id(Risc::Trisc0), vec![])]).unwrap();
        s.append(&[(id(Risc::Brisc), vec![3])]).unwrap();
        assert_eq!(s.read(id(Risc::Brisc)).unwrap(), [1, 2, 3]);
        assert_eq!(s.read(id(Risc::Ncrisc)).unwrap(), [9]);
        assert!(s.read(id(Risc::Trisc2)).unwrap().is_empty());
        assert_eq!(s.len(), 4);
        drop(s);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "spool file removed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
