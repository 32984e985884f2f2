//! A second mapping of a device's image file: what a host process has.

use memmap2::MmapMut;
use std::sync::atomic::{AtomicU32, Ordering};
use ttprof_emu::Device;

/// The image of `Device`, mapped again, accessed as the host side of its protocols does
/// (atomic little-endian words).
pub struct HostMap {
    map: MmapMut,
}

impl HostMap {
    /// Maps `dev`'s image read-write.
    pub fn open(dev: &Device) -> HostMap {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dev.image_path())
            .unwrap();
        HostMap {
            map: unsafe { MmapMut::map_mut(&file) }.unwrap(),
        }
    }

    /// The word at byte offset `at` of the file.
    pub fn word(&self, at: usize) -> &AtomicU32 {
        assert!(at.is_multiple_of(4) && at + 4 <= self.map.len());
        unsafe { AtomicU32::from_ptr(self.map.as_ptr().add(at) as *mut u32) }
    }

    /// Reads the word at `at` (acquire).
    pub fn get(&self, at: usize) -> u32 {
        u32::from_le(self.word(at).load(Ordering::Acquire))
    }

    /// Writes the word at `at` (release).
    pub fn put(&self, at: usize, v: u32) {
        self.word(at).store(v.to_le(), Ordering::Release)
    }
}
