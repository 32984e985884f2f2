//! The emulator's device image, mapped into this process.
//!
//! The image (layout: `riscv_linker::devfile`) is a shared file mapping that the emulator
//! writes while kernels run. Like a PCIe BAR it is accessed only with volatile, aligned
//! 32-bit loads and stores: never a `memcpy` (which could tear words or read bytes the
//! device is writing in another order) and never a Rust reference into the mapping.
//!
//! The file's header is read with ordinary file I/O and validated before anything is
//! mapped; a file whose size does not match its header is refused, so every access computed
//! from the geometry lies inside the mapping. A file truncated by another process *after*
//! it was opened makes the next access past its new end raise SIGBUS: the mapping is
//! guarded (`ttkmd::sigbus`, as a card's windows are), so that access reads zeros and it
//! and every later one is an error naming the file instead of a crash.

use super::{check_access, DeviceMemory, TileTable};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::devfile::{self, Geometry};
use riscv_linker::NocCoord;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A mapped device image.
pub struct MappedImage {
    path: PathBuf,
    /// SIGBUS guard of `map` (declared first: dropped before the mapping goes).
    guard: Option<super::ttkmd::sigbus::Guard>,
    map: memmap2::MmapRaw,
    geometry: Geometry,
    tiles: TileTable,
    writable: bool,
    bytes_read: AtomicU64,
    /// Host time to report as waited with the next clock-mailbox request, ns.
    clock_delay_ns: AtomicU64,
    /// The open image: holds the consumer lock once claimed, and tells its current length.
    file: std::fs::File,
}

impl MappedImage {
    /// Maps an image for reading and writing (a consumer writes `TAIL`), noting it in
    /// `inputs` (the command's input guard).
    pub fn open(path: &Path, inputs: &Inputs) -> Result<MappedImage> {
        Self::open_with(path, true, inputs)
    }

    /// Maps an image for reading only; writes return an error.
    pub fn open_read_only(path: &Path, inputs: &Inputs) -> Result<MappedImage> {
        Self::open_with(path, false, inputs)
    }

    /// Only a regular file is opened (a FIFO's `open` would block; a device has no size to
    /// check the header against): the path's metadata is checked first.
    fn open_with(path: &Path, writable: bool, inputs: &Inputs) -> Result<MappedImage> {
        let op = if writable {
            "open device image read-write"
        } else {
            "open device image"
        };
        let (mut file, len) =
            crate::files::open_regular(path, "a device image", op, writable, inputs)?;
        let (geometry, tiles) = read_header(&mut file, path, len)?;
        let mut opts = memmap2::MmapOptions::new();
        opts.len(usize::try_from(len).map_err(|_| Error::BadFile {
            path: path.into(),
            what: format!("{len} bytes is too large to map on this host"),
        })?);
        let map = if writable {
            opts.map_raw(&file)
        } else {
            opts.map_raw_read_only(&file)
        }
        .map_err(|e| Error::io(path, "map device image", e))?;
        Ok(MappedImage {
            path: path.into(),
            guard: super::ttkmd::sigbus::Guard::register_unfilled(map.as_ptr(), map.len()),
            map,
            geometry,
            tiles,
            writable,
            bytes_read: AtomicU64::new(0),
            clock_delay_ns: AtomicU64::new(0),
            file,
        })
    }

    /// The image file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The device side's status word (`devfile::STATUS_*` bits).
    pub fn status(&self) -> u32 {
        self.header_word(devfile::field::STATUS)
    }

    /// How many launches the device side has started (bumped at each launch).
    pub fn launches(&self) -> u32 {
        self.header_word(devfile::field::LAUNCHES)
    }

    /// Host time waited since the last clock-mailbox request (see `mailbox.rs`).
    pub(super) fn clock_delay(&self) -> &AtomicU64 {
        &self.clock_delay_ns
    }

    /// Whether writes are allowed (the clock mailbox needs them).
    pub(super) fn writable(&self) -> bool {
        self.writable
    }

    /// A 32-bit header field for atomic access (the clock mailbox and posted-write
    /// protocols). `offset` must be 4-aligned and the field inside the fixed header;
    /// callers pass constants.
    fn header_atomic(&self, offset: usize) -> &std::sync::atomic::AtomicU32 {
        debug_assert!(offset.is_multiple_of(4) && offset + 4 <= devfile::HEADER_FIXED as usize);
        // In bounds (the validated header is at least HEADER_FIXED bytes), aligned (the
        // mapping is page aligned), and the mapping lives as long as `self`.
        unsafe {
            std::sync::atomic::AtomicU32::from_ptr(self.map.as_mut_ptr().add(offset) as *mut u32)
        }
    }

    /// Reads a little-endian header field shared with the emulator process (acquire).
    pub(super) fn header_load(&self, offset: usize) -> u32 {
        u32::from_le(
            self.header_atomic(offset)
                .load(std::sync::atomic::Ordering::Acquire),
        )
    }

    /// Writes a little-endian header field shared with the emulator process (release).
    pub(super) fn header_store(&self, offset: usize, v: u32) {
        self.header_atomic(offset)
            .store(v.to_le(), std::sync::atomic::Ordering::Release)
    }

    fn header_word(&self, offset: usize) -> u32 {
        // In bounds: the header is at least HEADER_FIXED bytes and these fields lie inside it.
        unsafe {
            u32::from_le(std::ptr::read_volatile(
                self.map.as_ptr().add(offset) as *const u32
            ))
        }
    }

    /// An error naming the file once an access faulted (the file was truncated under the
    /// mapping): what was read since then is not the device's.
    fn faulted(&self) -> Result<()> {
        if self.guard.as_ref().is_some_and(|g| g.faulted()) {
            return Err(Error::BadFile {
                path: self.path.clone(),
                what: "was truncated while this process read it (SIGBUS on the mapped image): what was read \
                       from it since is not the device's"
                    .into(),
            });
        }
        Ok(())
    }

    /// Byte offset in the mapping of an access already checked by `check_access`.
    fn offset(&self, chip: u32, tile: NocCoord, addr: u32, words: usize) -> Result<usize> {
        let index = self.tiles.index(chip, tile)?;
        check_access(&self.geometry, chip, tile, addr, words)?;
        Ok((self.geometry.tile_offset(chip, index) + addr as u64) as usize)
    }
}

/// Reads and validates the header and the tile table with plain file reads.
fn read_header(file: &mut File, path: &Path, len: u64) -> Result<(Geometry, TileTable)> {
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    let mut fixed = vec![0u8; devfile::HEADER_FIXED as usize];
    let got =
        read_up_to(file, &mut fixed).map_err(|e| Error::io(path, "read device image header", e))?;
    fixed.truncate(got);
    // Checks the geometry and that the header's sizes (checked arithmetic) describe exactly
    // `len` bytes: nothing below is allocated before it is known to be inside the file.
    let geometry = Geometry::read_header(&fixed, len).map_err(|e| bad(e.to_string()))?;
    let header_size = usize::try_from(geometry.header_size())
        .ok()
        .filter(|&h| h as u64 <= len)
        .ok_or_else(|| {
            bad(format!(
                "its header of {} bytes does not fit in the file",
                geometry.header_size()
            ))
        })?;
    let mut header = vec![0u8; header_size];
    header[..fixed.len()].copy_from_slice(&fixed);
    file.read_exact(&mut header[fixed.len()..])
        .map_err(|e| Error::io(path, "read device image tile table", e))?;
    let mut per_chip = Vec::with_capacity(geometry.chips as usize);
    for chip in 0..geometry.chips {
        let tiles: Option<Vec<NocCoord>> = (0..geometry.tiles_per_chip)
            .map(|t| geometry.tile_coord(&header, chip, t))
            .collect();
        let tiles = tiles.ok_or_else(|| bad(format!("tile table of chip {chip} is incomplete")))?;
        per_chip.push(tiles);
    }
    let tiles = TileTable::checked(&geometry, per_chip).map_err(bad)?;
    Ok((geometry, tiles))
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

impl MappedImage {
    /// Takes the image's lock for `role` (one holder per role), or says what holds it:
    /// `held` completes "the image ...".
    fn claim(&self, role: riscv_linker::lock::Role, held: &str) -> Result<()> {
        let locked = riscv_linker::lock::try_lock(&self.file, role)
            .map_err(|e| Error::io(&self.path, "lock device image", e))?;
        if locked {
            return Ok(());
        }
        Err(Error::BadFile {
            path: self.path.clone(),
            what: held.into(),
        })
    }
}

impl DeviceMemory for MappedImage {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        self.tiles.tiles(chip)
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        let mut w = [0u32; 1];
        self.read_words(chip, tile, addr, &mut w)?;
        Ok(w[0])
    }

    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        if !self.writable {
            return Err(Error::Address {
                what: format!(
                    "chip {chip} tile {tile}: cannot write {addr:#x}: {} is mapped read-only",
                    self.path.display()
                ),
            });
        }
        if riscv_linker::mmio::daisychain::is_register(addr) {
            // Not in the image: queued for the emulator process (`posted.rs`).
            self.tiles.index(chip, tile)?;
            return self.post(chip, tile, addr, v);
        }
        let off = self.offset(chip, tile, addr, 1)?;
        // `offset` checked the access lies inside this tile's L1 image inside the mapping,
        // and the mapping is page aligned, so the word is aligned.
        unsafe { std::ptr::write_volatile(self.map.as_mut_ptr().add(off) as *mut u32, v.to_le()) };
        self.faulted()
    }

    fn posted_room(&self) -> Option<u32> {
        Some(self.posted_room_now())
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        let off = self.offset(chip, tile, addr, out.len())?;
        let base = unsafe { self.map.as_ptr().add(off) } as *const u32;
        for (i, w) in out.iter_mut().enumerate() {
            // See `write_u32`: in bounds and aligned.
            *w = u32::from_le(unsafe { std::ptr::read_volatile(base.add(i)) });
        }
        self.faulted()?;
        self.bytes_read
            .fetch_add(4 * out.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn describe(&self) -> String {
        format!("device image {}", self.path.display())
    }

    fn device_status(&self) -> Option<u32> {
        Some(self.status())
    }

    fn claim_consumer(&self) -> Result<()> {
        self.claim(
            riscv_linker::lock::Role::Consumer,
            "already has a consumer draining it (another ttprof capture, ttprof run or Session holds its consumer \
             lock): one consumer per device, or the two would split its records between them; read it without \
             consuming (ttprof read without --consume) or stop the other",
        )
    }

    fn claim_sampler(&self) -> Result<()> {
        self.claim(
            riscv_linker::lock::Role::Sampler,
            "already has a sampler driving its debug daisychains (another ttprof capture --sample or ttprof run \
             --sample holds its sampler lock): one sampler per device, or each would arm and read the other's \
             windows",
        )
    }

    fn check(&self) -> Result<()> {
        let len = self
            .file
            .metadata()
            .map_err(|e| Error::io(&self.path, "stat device image", e))?
            .len();
        if len < self.map.len() as u64 {
            return Err(Error::BadFile {
                path: self.path.clone(),
                what: format!(
                    "was truncated to {len} bytes while mapped ({} bytes): the device that owned it is gone or was \
                     restarted; nothing more is read from it",
                    self.map.len()
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ImageBuilder;
    use riscv_linker::Arch;

    #[test]
    fn words_read_and_written_are_checked_and_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("dev.img");
        // Blackhole's worker rows start at NoC y = 2.
        let (t0, t1) = (NocCoord::new(1, 2), NocCoord::new(2, 2));
        let mut b = ImageBuilder::new(Arch::Blackhole, 2, vec![t0, t1]);
        b.poke(1, t1, 0x100, 0xA5A5_0001);
        b.write(&path).unwrap();
        let m = MappedImage::open(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(m.geometry().chips, 2);
        assert_eq!(m.read_u32(1, t1, 0x100).unwrap(), 0xA5A5_0001);
        assert_eq!(m.read_u32(0, t1, 0x100).unwrap(), 0, "chips are separate");
        m.write_u32(0, t0, 0x2_0000, 7).unwrap();
        let mut w = [0u32; 3];
        m.read_words(0, t0, 0x1_FFFC, &mut w).unwrap();
        assert_eq!(w, [0, 7, 0]);
        assert_eq!(m.bytes_read(), 4 + 4 + 12);
        let l1 = Arch::Blackhole.l1_size();
        assert!(m
            .read_u32(0, t0, l1)
            .unwrap_err()
            .to_string()
            .contains("inside L1"));
        assert!(m
            .read_u32(0, t0, 2)
            .unwrap_err()
            .to_string()
            .contains("aligned"));
        assert!(m
            .read_u32(2, t0, 0)
            .unwrap_err()
            .to_string()
            .contains("no such tile"));
        assert_eq!(m.bytes_read(), 20, "failed reads read nothing");

        let ro = MappedImage::open_read_only(&path, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!(
            ro.read_u32(0, t0, 0x2_0000).unwrap(),
            7,
            "one shared mapping"
        );
        assert!(ro
            .write_u32(0, t0, 0, 1)
            .unwrap_err()
            .to_string()
            .contains("read-only"));

        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 4096]).unwrap();
        let e = MappedImage::open(&path, &crate::inputs::Inputs::none())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("dev.img") && e.contains("truncated or wrong file"),
            "{e}"
        );
    }

    #[test]
    fn a_header_whose_sizes_overflow_is_refused_before_anything_is_allocated() {
        // 2^31 chips x 2^31 tiles in a 4 KiB file: the sizes wrapped to 4 KiB in u64 and the
        // tile table allocation aborted the process ("memory allocation of 51539607552 bytes
        // failed").
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("huge.img");
        let arch = Arch::WormholeB0;
        let mut h = vec![0u8; devfile::PAGE as usize];
        h[..8].copy_from_slice(&devfile::MAGIC);
        let stride = (arch.l1_size() as u64).div_ceil(devfile::PAGE as u64) * devfile::PAGE as u64;
        for (at, v) in [
            (devfile::field::VERSION, devfile::VERSION),
            (devfile::field::ARCH, arch.id()),
            (devfile::field::CHIPS, 1 << 31),
            (devfile::field::TILES_PER_CHIP, 1 << 31),
            (devfile::field::L1_SIZE, arch.l1_size()),
            (devfile::field::HEADER_SIZE, devfile::PAGE),
            (devfile::field::TILE_STRIDE, stride as u32),
        ] {
            h[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        std::fs::write(&path, &h).unwrap();
        for e in [
            MappedImage::open(&path, &crate::inputs::Inputs::none())
                .err()
                .unwrap(),
            MappedImage::open_read_only(&path, &crate::inputs::Inputs::none())
                .err()
                .unwrap(),
        ] {
            let e = e.to_string();
            assert!(
                e.contains("huge.img: 2147483648 chip(s) of 2147483648 tile(s): expected at least one chip and 1..=120"),
                "{e}"
            );
        }
        // No chip at all.
        h[devfile::field::CHIPS..devfile::field::CHIPS + 4].copy_from_slice(&0u32.to_le_bytes());
        h[devfile::field::TILES_PER_CHIP..devfile::field::TILES_PER_CHIP + 4]
            .copy_from_slice(&1u32.to_le_bytes());
        std::fs::write(&path, &h).unwrap();
        let e = MappedImage::open(&path, &crate::inputs::Inputs::none())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("0 chip(s) of 1 tile(s): expected at least one chip"),
            "{e}"
        );
    }

    #[test]
    fn a_tile_table_with_a_tile_twice_or_not_a_worker_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("dev.img");
        let tiles = vec![
            NocCoord::new(1, 1),
            NocCoord::new(2, 1),
            NocCoord::new(3, 1),
        ];
        ImageBuilder::new(Arch::WormholeB0, 2, tiles)
            .write(&path)
            .unwrap();
        let good = std::fs::read(&path).unwrap();
        let entry = |chip: usize, i: usize| devfile::HEADER_FIXED as usize + 4 * (3 * chip + i);
        // Chip 1 lists (2,1) twice: its rows and those of tile #2 were read as one tile's.
        let mut twice = good.clone();
        twice[entry(1, 2)] = 2;
        std::fs::write(&path, &twice).unwrap();
        let e = MappedImage::open_read_only(&path, &crate::inputs::Inputs::none())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("dev.img: tile table of chip 1 lists tile (2,1) twice (entries 1 and 2)"),
            "{e}"
        );
        for (x, y) in [(5, 1), (0, 0), (10, 1), (200, 200)] {
            let mut bad = good.clone();
            bad[entry(0, 0)] = x;
            bad[entry(0, 0) + 1] = y;
            std::fs::write(&path, &bad).unwrap();
            let e = MappedImage::open(&path, &crate::inputs::Inputs::none())
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.contains(&format!(
                    "tile table entry 0 of chip 0 is ({x},{y}), which is not a Tensix worker tile"
                )),
                "{e}"
            );
        }
        std::fs::write(&path, &good).unwrap();
        assert_eq!(
            MappedImage::open(&path, &crate::inputs::Inputs::none())
                .unwrap()
                .tiles(1)
                .len(),
            3
        );
    }
}
