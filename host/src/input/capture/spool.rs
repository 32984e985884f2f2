//! Where a capture keeps what it drained: each ring's payload stream, appended in chunks to
//! one temporary file and read back one ring at a time, so a long capture holds no more in
//! memory than one drain's bytes and one ring's stream.
//!
//! The file has no name: on Linux it is opened with `O_TMPFILE` in the capture's directory;
//! elsewhere (or on a file system without it) the `tempfile` crate creates it exclusively
//! under a random name and removes the name at once. So no file or link planted in the
//! directory is ever opened, and the space goes back when the spool is dropped or the
//! process ends, even when it is killed.

use crate::error::{Error, Result};
use crate::readout::RingId;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Payload streams of many rings in one unnamed file (gone when dropped).
pub struct Spool {
    /// The directory the file is in (for messages).
    dir: PathBuf,
    file: File,
    len: u64,
    /// Per ring, its chunks in order: `(offset, length)`.
    chunks: BTreeMap<RingId, Vec<(u64, u64)>>,
}

impl Spool {
    /// A new, empty spool file in `dir`.
    pub fn create(dir: &Path) -> Result<Spool> {
        let file = tempfile::tempfile_in(dir).map_err(|e| Error::io(dir, "create a capture spool in", e))?;
        Ok(Spool { dir: dir.to_path_buf(), file, len: 0, chunks: BTreeMap::new() })
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
        let io = |e| Error::io(&self.dir, "write the capture spool in", e);
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
            let io = |e| Error::io(&self.dir, "read the capture spool in", e);
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

    /// Whether nothing was spooled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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

    #[cfg(unix)]
    #[test]
    fn a_link_planted_where_the_spool_used_to_go_is_not_followed() {
        use std::os::unix::fs::symlink;
        let dir = crate::testing::temp_dir("spool-link");
        let victims = crate::testing::temp_dir("spool-victims");
        let target = victims.join("victim");
        std::fs::write(&target, b"precious").unwrap();
        // The name earlier versions spooled to, predictable from the pid.
        let link = dir.join(format!(".ttprof-capture-{}.spool", std::process::id()));
        symlink(&target, &link).unwrap();
        let id = RingId { chip: 0, tile: NocCoord::new(1, 1), risc: Risc::Brisc };
        let mut s = Spool::create(&dir).unwrap();
        s.append(&[(id, vec![7; 100])]).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"precious", "written through the link");
        // The spool has no name in the directory, even while it is in use.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "only the planted link");
        assert_eq!(s.read(id).unwrap(), vec![7; 100]);
        drop(s);
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is left as it was");
        assert_eq!(std::fs::read_link(&link).unwrap(), target);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&victims);
    }

    #[test]
    fn a_spool_in_a_missing_directory_names_it() {
        let dir = crate::testing::temp_dir("spool-missing").join("not-there");
        let e = Spool::create(&dir).err().expect("no directory, no spool");
        assert!(e.to_string().contains(&format!("cannot create a capture spool in {}", dir.display())), "{e}");
    }
}
