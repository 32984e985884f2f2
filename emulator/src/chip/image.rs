//! The device-memory image: one file, laid out as `riscv_linker::devfile` says, mapped
//! shared so that a host tool in another process sees every tile's L1 as it changes.
//!
//! The file's space is reserved when it is created (`posix_fallocate`): a sparse file on a
//! full disk would let the mapping be created and then kill the process with SIGBUS at
//! the first page the disk cannot hold, so a disk without room for the whole image is an
//! error naming the file, before anything runs. (Where the file system cannot reserve
//! space, the file stays sparse, as before.) Header fields written while running
//! (`STATUS`, `LAUNCHES`) are stored atomically.

use crate::bus::L1;
use crate::error::EmuError;
use memmap2::MmapMut;
use riscv_linker::devfile::{field, mailbox, posted, Geometry};
use riscv_linker::NocCoord;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Tries at the image's device lock, 10 ms apart, before it counts as held.
const LOCK_TRIES: u32 = 20;

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
    pub fn create(
        path: Option<&Path>,
        geometry: Geometry,
        tiles: &[NocCoord],
    ) -> Result<Image, EmuError> {
        let (path, delete_on_drop) = match path {
            Some(p) => (p.to_path_buf(), false),
            None => {
                let n = NEXT_IMAGE.fetch_add(1, Ordering::Relaxed);
                (
                    std::env::temp_dir()
                        .join(format!("ttprof-emu-{}-{n}.devmem", std::process::id())),
                    true,
                )
            }
        };
        let io = |source| EmuError::Image {
            path: path.clone(),
            source,
        };
        // Lock before truncating: a second emulator on the same path must not wipe the first's
        // memory under it (and its readers would die of SIGBUS).
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // A lock just released can still be held for a moment by a child another thread is
        // spawning (the forked fd table keeps the file description until its `exec`): retry
        // briefly before calling the image taken.
        let mut locked = false;
        for _ in 0..LOCK_TRIES {
            locked = riscv_linker::lock::try_lock(&file, riscv_linker::lock::Role::Device)
                .map_err(io)?;
            if locked {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if !locked {
            return Err(EmuError::Config(format!(
                "device image {} is in use by another emulator (it holds the image's device lock): one emulator per \
                 image, or its memory would be truncated under it",
                path.display()
            )));
        }
        file.set_len(0).map_err(io)?;
        file.set_len(geometry.file_size()).map_err(io)?;
        if let Err(e) = reserve(&file, geometry.file_size()) {
            // Give back what was reserved: the image is unusable.
            let _ = file.set_len(0);
            if delete_on_drop {
                let _ = std::fs::remove_file(&path);
            }
            return Err(io(e));
        }
        // SAFETY: the file was just created by us; another process may map it too, which is
        // the point, and every access of ours is atomic or a plain header write made before
        // anyone could know the file is valid.
        let mut map = unsafe { MmapMut::map_mut(&file) }.map_err(io)?;
        let header_size = geometry.header_size() as usize;
        geometry
            .write_header(&mut map[..header_size], tiles)
            .map_err(|e| EmuError::Config(format!("cannot write device image header: {e}")))?;
        let base = map.as_mut_ptr();
        Ok(Image {
            path,
            delete_on_drop,
            geometry,
            base,
            _map: map,
            _file: file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reserves the disk space of the image's `size` bytes, so no page of the mapping can fail
/// for want of space later (see the module docs). A file system that cannot reserve space
/// leaves the file sparse; a disk without room is an error that says how much was needed.
fn reserve(file: &std::fs::File, size: u64) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    {
        use nix::errno::Errno;
        let len = i64::try_from(size)
            .map_err(|_| std::io::Error::other(format!("{size} bytes is too large a file")))?;
        match nix::fcntl::posix_fallocate(file, 0, len) {
            Ok(()) => Ok(()),
            Err(Errno::EOPNOTSUPP | Errno::ENOSYS | Errno::EINVAL) => Ok(()),
            Err(e) => {
                let e = std::io::Error::from(e);
                Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot reserve the image's {size} bytes ({:.1} MB) on its disk: {e} (free some space, or put \
                         the image elsewhere, e.g. another --out)",
                        size as f64 / 1e6
                    ),
                ))
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    {
        let _ = (file, size);
        Ok(())
    }
}

impl Image {
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
        self.header_word(field::STATUS)
            .store(bits.to_le(), Ordering::Release);
    }

    /// Applies the posted register writes waiting in the header's queue
    /// (`devfile::posted`), in order, with `apply` (false: refused, counted); returns how
    /// many it took. The entries are the host's: any value may be there, `apply` checks them.
    pub fn apply_posted(&self, mut apply: impl FnMut(u32, NocCoord, u32, u32) -> bool) -> u32 {
        let q = |at: usize| self.header_word(field::POSTED_WRITES + at);
        let get = |at: usize| u32::from_le(q(at).load(Ordering::Acquire));
        let (posted, applied) = (get(posted::POSTED), get(posted::APPLIED));
        if posted == applied {
            return 0; // the usual case, looked at every step: nothing written
        }
        // A host that wrote more than the queue holds overwrote entries not yet applied:
        // those are lost; take the newest ENTRIES and count the rest as refused.
        let pending = posted.wrapping_sub(applied);
        let skipped = pending.saturating_sub(posted::ENTRIES as u32);
        let mut refused = skipped;
        let mut last_refused = (skipped > 0).then(|| applied.wrapping_add(skipped));
        let mut n = applied.wrapping_add(skipped);
        while n != posted {
            let e = posted::entry(n);
            let ok = apply(
                get(e + posted::CHIP),
                mailbox::word_tile(get(e + posted::TILE)),
                get(e + posted::ADDR),
                get(e + posted::VALUE),
            );
            n = n.wrapping_add(1);
            if !ok {
                refused += 1;
                last_refused = Some(n);
            }
        }
        if refused > 0 {
            let r = get(posted::REFUSED).wrapping_add(refused);
            q(posted::REFUSED).store(r.to_le(), Ordering::Release);
        }
        if let Some(l) = last_refused {
            q(posted::LAST_REFUSED).store(l.to_le(), Ordering::Release);
        }
        q(posted::APPLIED).store(posted.to_le(), Ordering::Release);
        pending
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

#[cfg(test)]
mod tests {
    use crate::{Device, DeviceConfig};
    use riscv_linker::Arch;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
    struct Tmpfs(PathBuf);

    impl Tmpfs {
        /// `None` (and a note) where mounting is not allowed (not root, no tmpfs).
        fn mount(name: &str, size: &str) -> Option<Tmpfs> {
            let dir =
                std::env::temp_dir().join(format!("ttprof-emu-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let ok = Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(&dir)
                .status();
            if !matches!(ok, Ok(s) if s.success()) {
                let _ = std::fs::remove_dir(&dir);
                eprintln!("SKIPPED: cannot mount a {size} tmpfs (needs root): the full-disk case is not tested");
                return None;
            }
            Some(Tmpfs(dir))
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Tmpfs {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
            let _ = std::fs::remove_dir(&self.0);
        }
    }

    #[test]
    fn an_image_the_disk_cannot_hold_is_an_error_naming_it_not_a_bus_error_later() {
        // A 4x4 Wormhole grid's image is ~24 MB; the disk holds 4 MB. Before, the sparse
        // file was created and mapped, and the first page past 4 MB killed the process with
        // SIGBUS (`ttprof run --grid 4x4 --out` on a small tmpfs: "Bus error", exit 135).
        let Some(fs) = Tmpfs::mount("full-disk", "4m") else {
            return;
        };
        let image = fs.path().join("device.img");
        let mut cfg = DeviceConfig::new(Arch::WormholeB0, (4, 4));
        cfg.image = Some(image.clone());
        let e = Device::new(cfg)
            .expect_err("no room for the image: an error")
            .to_string();
        assert!(
            e.contains(&format!("device-memory image {}", image.display())),
            "{e}"
        );
        assert!(
            e.contains("cannot reserve the image's") && e.contains("No space left on device"),
            "{e}"
        );
        assert_eq!(
            std::fs::metadata(&image).map(|m| m.len()).unwrap_or(0),
            0,
            "the space is given back"
        );
        // An image that fits is reserved whole: every page of it is there.
        let mut cfg = DeviceConfig::new(Arch::WormholeB0, (1, 1));
        cfg.image = Some(image.clone());
        let dev = Device::new(cfg).expect("one tile fits in 4 MB");
        let meta = std::fs::metadata(&image).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert!(
            meta.blocks() * 512 >= meta.len(),
            "reserved, not sparse: {} of {} bytes",
            meta.blocks() * 512,
            meta.len()
        );
        drop(dev);
    }
}
