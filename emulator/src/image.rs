//! The device-memory image: one file, laid out as `riscv_linker::devfile` says, mapped
//! shared so that a host tool in another process sees every tile's L1 as it changes.
//!
//! The file is created sparse (`set_len`), so only pages that a kernel or the host touches
//! take memory or disk. Header fields written while running (`STATUS`, `LAUNCHES`) are
//! stored atomically.

use crate::fault::EmuError;
use crate::memory::L1;
use memmap2::MmapMut;
use riscv_linker::devfile::{field, Geometry};
use riscv_linker::NocCoord;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_IMAGE: AtomicU32 = AtomicU32::new(0);

/// A created and mapped device-memory image.
#[derive(Debug)]
pub(crate) struct Image {
    path: PathBuf,
    delete_on_drop: bool,
    geometry: Geometry,
    base: *mut u8,
    // Keeps the mapping alive; accessed only through `base` after creation.
    _map: MmapMut,
    // Holds the image's device lock (`riscv_linker::lock`) while the device lives.
    _file: std::fs::File,
}

// SAFETY: `base` points into `_map`, which this value owns; all accesses through it are
// atomic (header fields) or go through `L1`, whose accesses are atomic.
unsafe impl Send for Image {}
unsafe impl Sync for Image {}

impl Image {
    /// Creates (or truncates) the image file at `path`, or a fresh temporary one, sizes it
    /// for `geometry`, maps it and writes the header with `tiles` as every chip's tile table.
    pub fn create(path: Option<&Path>, geometry: Geometry, tiles: &[NocCoord]) -> Result<Image, EmuError> {
        let (path, delete_on_drop) = match path {
            Some(p) => (p.to_path_buf(), false),
            None => {
                let n = NEXT_IMAGE.fetch_add(1, Ordering::Relaxed);
                (std::env::temp_dir().join(format!("ttprof-emu-{}-{n}.devmem", std::process::id())), true)
            }
        };
        let io = |source| EmuError::Image { path: path.clone(), source };
        // Lock before truncating: a second emulator on the same path must not wipe the first's
        // memory under it (and its readers would die of SIGBUS).
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        if !riscv_linker::lock::try_lock(&file, riscv_linker::lock::Role::Device).map_err(io)? {
            return Err(EmuError::Config(format!(
                "device image {} is in use by another emulator (it holds the image's device lock): one emulator per \
                 image, or its memory would be truncated under it",
                path.display()
            )));
        }
        file.set_len(0).map_err(io)?;
        file.set_len(geometry.file_size()).map_err(io)?;
        // SAFETY: the file was just created by us; another process may map it too, which is
        // the point, and every access of ours is atomic or a plain header write made before
        // anyone could know the file is valid.
        let mut map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        let header_size = geometry.header_size() as usize;
        geometry
            .write_header(&mut map[..header_size], tiles)
            .map_err(|e| EmuError::Config(format!("cannot write device image header: {e}")))?;
        let base = map.as_mut_ptr();
        Ok(Image { path, delete_on_drop, geometry, base, _map: map, _file: file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The L1 of tile `tile` (image order) of `chip`.
    pub fn l1(&self, chip: u32, tile: u32) -> L1 {
        let off = self.geometry.tile_offset(chip, tile) as usize;
        // SAFETY: the offset and `l1_size` lie inside the mapping (devfile geometry), tile
        // offsets are page aligned, and the mapping lives as long as `self`.
        unsafe { L1::new(self.base.add(off), self.geometry.l1_size) }
    }

    /// The clock-sync mailbox bytes in the header (`devfile::mailbox`), valid while `self` is.
    pub fn mailbox(&self) -> *mut u8 {
        // SAFETY: CLOCK_MAILBOX + 64 <= HEADER_FIXED <= header size, inside the mapping.
        unsafe { self.base.add(field::CLOCK_MAILBOX) }
    }

    fn header_word(&self, at: usize) -> &AtomicU32 {
        // SAFETY: header fields are 4-aligned offsets inside the (page-aligned) mapping.
        unsafe { AtomicU32::from_ptr(self.base.add(at) as *mut u32) }
    }

    /// Replaces the `STATUS` word.
    pub fn set_status(&self, bits: u32) {
        self.header_word(field::STATUS).store(bits.to_le(), Ordering::Release);
    }

    /// Bumps the `LAUNCHES` word.
    pub fn bump_launches(&self) {
        let w = self.header_word(field::LAUNCHES);
        let v = u32::from_le(w.load(Ordering::Acquire)).wrapping_add(1);
        w.store(v.to_le(), Ordering::Release);
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        if self.delete_on_drop {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
