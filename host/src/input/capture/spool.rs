//! Where a capture keeps what it drained: each ring's payload stream, appended in chunks to
//! one temporary file and read back one ring at a time, so a long capture holds no more in
//! memory than one drain's bytes and one ring's stream.
//!
//! When a write fails (its disk is full), the drain's bytes are kept in memory instead and
//! the error is returned: the capture stops draining then, so what it already took from the
//! rings (and freed there) is still read back whole.
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

/// The most [`Spool::read_pieces`] reads at a time.
pub const PIECE_BYTES: u64 = 1 << 20;

/// Payload streams of many rings in one unnamed file (gone when dropped).
pub struct Spool {
    /// The directory the file is in (for messages).
    dir: PathBuf,
    file: File,
    len: u64,
    /// Per ring, its chunks in order: `(offset, length)`.
    chunks: BTreeMap<RingId, Vec<(u64, u64)>>,
    /// Per ring, what could not be written to the file (after its chunks there).
    held: BTreeMap<RingId, Vec<u8>>,
}

impl Spool {
    /// A new, empty spool file in `dir`.
    pub fn create(dir: &Path) -> Result<Spool> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| Error::io(dir, "create a capture spool in", e))?;
        Ok(Spool {
            dir: dir.to_path_buf(),
            file,
            len: 0,
            chunks: BTreeMap::new(),
            held: BTreeMap::new(),
        })
    }

    /// Appends one drain's payloads (ring, bytes) in one write. When the write fails (a
    /// full disk), the bytes are kept in memory, still read back by [`Spool::read_pieces`], and
    /// the error is returned: the caller should take no more (each later append is kept
    /// in memory too, unbounded).
    pub fn append(&mut self, drained: &[(RingId, Vec<u8>)]) -> Result<()> {
        let total: usize = drained.iter().map(|(_, b)| b.len()).sum();
        if total == 0 {
            return Ok(());
        }
        let written = if self.held.is_empty() {
            self.write(drained, total)
        } else {
            Err(None)
        };
        match written {
            Ok(()) => Ok(()),
            Err(e) => {
                for (id, bytes) in drained {
                    self.held.entry(*id).or_default().extend_from_slice(bytes);
                }
                match e {
                    Some(e) => Err(e),
                    None => Err(Error::Spool {
                        dir: self.dir.clone(),
                        kept: total as u64,
                    }),
                }
            }
        }
    }

    /// Writes one drain's payloads at the end of the file; `Err(Some)` when that fails
    /// (nothing of it is counted then).
    fn write(
        &mut self,
        drained: &[(RingId, Vec<u8>)],
        total: usize,
    ) -> std::result::Result<(), Option<Error>> {
        let mut buf = Vec::with_capacity(total);
        let mut chunks = Vec::new();
        for (id, bytes) in drained.iter().filter(|(_, b)| !b.is_empty()) {
            chunks.push((*id, (self.len + buf.len() as u64, bytes.len() as u64)));
            buf.extend_from_slice(bytes);
        }
        let io = |e| Some(Error::io(&self.dir, "write the capture spool in", e));
        self.file.seek(SeekFrom::Start(self.len)).map_err(io)?;
        self.file.write_all(&buf).map_err(io)?;
        for (id, chunk) in chunks {
            self.chunks.entry(id).or_default().push(chunk);
        }
        self.len += buf.len() as u64;
        Ok(())
    }

    /// Ring `id`'s payload stream handed to `piece` in order, at most [`PIECE_BYTES`] at a
    /// time from one reused buffer: what a reader that decodes it as it goes uses, so the
    /// stream (6 bytes a zone) is never held whole beside the records it becomes (issue 41).
    /// The pieces joined are the stream, spooled chunks first, then what was held in memory.
    pub fn read_pieces(&mut self, id: RingId, piece: &mut dyn FnMut(&[u8])) -> Result<()> {
        let chunks = self.chunks.get(&id).map_or(&[][..], Vec::as_slice);
        let mut buf = vec![0u8; PIECE_BYTES.min(self.len_of(id)) as usize];
        for &(offset, len) in chunks {
            let io = |e| Error::io(&self.dir, "read the capture spool in", e);
            self.file.seek(SeekFrom::Start(offset)).map_err(io)?;
            let mut left = len;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                self.file.read_exact(&mut buf[..n]).map_err(io)?;
                piece(&buf[..n]);
                left -= n as u64;
            }
        }
        if let Some(held) = self.held.get(&id) {
            for p in held.chunks(PIECE_BYTES as usize) {
                piece(p);
            }
        }
        Ok(())
    }

    /// The length of ring `id`'s payload stream (0 if it had none).
    pub fn len_of(&self, id: RingId) -> u64 {
        let chunks = self.chunks.get(&id).map_or(&[][..], Vec::as_slice);
        let held = self.held.get(&id).map_or(0, Vec::len);
        chunks.iter().map(|c| c.1).sum::<u64>() + held as u64
    }

    /// The rings with spooled payload, in ring order.
    pub fn rings(&self) -> Vec<RingId> {
        let mut ids: Vec<RingId> = self
            .chunks
            .keys()
            .chain(self.held.keys())
            .copied()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Bytes kept in memory because the file could not take them.
    pub fn held(&self) -> u64 {
        self.held.values().map(|b| b.len() as u64).sum()
    }

    /// Bytes spooled in all (in the file and held in memory).
    pub fn len(&self) -> u64 {
        self.len + self.held()
    }

    /// Whether nothing was spooled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riscv_linker::{NocCoord, Risc};

    /// The ring of `risc` on the tests' one tile.
    fn id(risc: Risc) -> RingId {
        RingId {
            chip: 0,
            tile: NocCoord::new(1, 1),
            risc,
        }
    }

    impl Spool {
        /// Ring `id`'s whole stream, its pieces joined.
        fn read(&mut self, id: RingId) -> Result<Vec<u8>> {
            let mut out = Vec::new();
            self.read_pieces(id, &mut |p| out.extend_from_slice(p))?;
            Ok(out)
        }
    }

    #[test]
    fn rings_read_back_their_chunks_in_order_and_the_file_goes_with_the_spool() {
        let dir = crate::testing::temp_dir("spool");
        let mut s = Spool::create(&dir).unwrap();
        s.append(&[
            (id(Risc::Brisc), vec![1, 2]),
            (id(Risc::Ncrisc), vec![9]),
            (id(Risc::Trisc0), vec![]),
        ])
        .unwrap();
        s.append(&[(id(Risc::Brisc), vec![3])]).unwrap();
        assert_eq!(s.read(id(Risc::Brisc)).unwrap(), [1, 2, 3]);
        assert_eq!(s.read(id(Risc::Ncrisc)).unwrap(), [9]);
        assert!(s.read(id(Risc::Trisc2)).unwrap().is_empty());
        assert_eq!(s.len(), 4);
        drop(s);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "spool file removed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A stream longer than a piece comes in pieces of at most [`PIECE_BYTES`], joined the
    /// stream in order (another ring's chunk between its own is skipped).
    #[test]
    fn a_long_stream_is_read_in_bounded_pieces() {
        let dir = crate::testing::temp_dir("spool-pieces");
        let long: Vec<u8> = (0..PIECE_BYTES as usize * 5 / 2).map(|i| i as u8).collect();
        let mut s = Spool::create(&dir).unwrap();
        s.append(&[(id(Risc::Brisc), long[..100].to_vec())])
            .unwrap();
        s.append(&[(id(Risc::Ncrisc), vec![9; 10])]).unwrap();
        s.append(&[(id(Risc::Brisc), long[100..].to_vec())])
            .unwrap();
        let (mut joined, mut largest) = (Vec::new(), 0);
        s.read_pieces(id(Risc::Brisc), &mut |p| {
            largest = largest.max(p.len());
            joined.extend_from_slice(p);
        })
        .unwrap();
        assert!(joined == long, "the pieces joined are the stream");
        assert_eq!(largest as u64, PIECE_BYTES);
        assert_eq!(s.len_of(id(Risc::Brisc)), long.len() as u64);
        assert_eq!(s.len_of(id(Risc::Trisc1)), 0);
        drop(s);
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
        let id = id(Risc::Brisc);
        let mut s = Spool::create(&dir).unwrap();
        s.append(&[(id, vec![7; 100])]).unwrap();
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"precious",
            "written through the link"
        );
        // The spool has no name in the directory, even while it is in use.
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "only the planted link"
        );
        assert_eq!(s.read(id).unwrap(), vec![7; 100]);
        drop(s);
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link is left as it was"
        );
        assert_eq!(std::fs::read_link(&link).unwrap(), target);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&victims);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_drain_the_disk_cannot_take_is_kept_in_memory_and_read_back_with_the_rest() {
        // A spool whose file is /dev/full: every write fails with ENOSPC, as on a full disk.
        let dir = crate::testing::temp_dir("spool-full");
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        // A failed write: the error names the spool and the disk, the bytes are kept.
        let mut s2 = Spool {
            dir: dir.clone(),
            file: full,
            len: 0,
            chunks: BTreeMap::new(),
            held: BTreeMap::new(),
        };
        let e = s2
            .append(&[(id(Risc::Brisc), vec![1, 2]), (id(Risc::Ncrisc), vec![9])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot write the capture spool in")
                && e.contains("No space left on device"),
            "{e}"
        );
        assert_eq!((s2.len(), s2.held()), (3, 3));
        let e = s2
            .append(&[(id(Risc::Brisc), vec![3])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("failed before: 1 more byte(s) kept in memory"),
            "{e}"
        );
        assert_eq!(s2.read(id(Risc::Brisc)).unwrap(), [1, 2, 3]);
        assert_eq!(s2.read(id(Risc::Ncrisc)).unwrap(), [9]);
        // Chunks in the file come first, then what was held.
        let mut s3 = Spool::create(&dir).unwrap();
        s3.append(&[(id(Risc::Brisc), vec![1, 2])]).unwrap();
        s3.held.insert(id(Risc::Brisc), vec![3, 4]);
        assert_eq!(s3.read(id(Risc::Brisc)).unwrap(), [1, 2, 3, 4]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_spool_in_a_missing_directory_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("not-there");
        let e = Spool::create(&dir).err().expect("no directory, no spool");
        assert!(
            e.to_string().contains(&format!(
                "cannot create a capture spool in {}",
                dir.display()
            )),
            "{e}"
        );
    }
}
