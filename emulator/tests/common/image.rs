//! A second mapping of a device's image file: what a host process has.

use memmap2::MmapMut;
use riscv_linker::devfile::{field, STATUS_RUNNING};
use riscv_linker::{Arch, Risc};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use ttprof_emu::asm::*;
use ttprof_emu::Device;

/// A BRISC kernel that spins until the word at L1 `flag` is non-zero, then halts: it runs
/// until a host says so. The words, to be loaded at the start of the code region.
pub fn spin_until(flag: u32) -> Vec<u32> {
    let mut w = super::lis(&[(5, flag)]);
    w.extend([lw(9, 5, 0), beq(9, 0, -4), ecall()]);
    w
}

/// Loads [`spin_until`] on BRISC of `dev`'s first tile.
pub fn load_spin(dev: &mut Device, flag: u32) {
    let tile = dev.tiles()[0];
    let elf = super::elf_for(Arch::WormholeB0, Risc::Brisc, &spin_until(flag));
    dev.load_kernel(0, tile, Risc::Brisc, &elf, "spin").unwrap();
}

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

    /// Waits until the device says a run is in progress (its `STATUS` word; a minute at most,
    /// a safety net rather than a timing assertion).
    pub fn wait_running(&self) {
        let give_up = Instant::now() + Duration::from_secs(60);
        while self.get(field::STATUS) & STATUS_RUNNING == 0 {
            assert!(Instant::now() < give_up, "the run never started");
            std::thread::yield_now();
        }
    }

    /// Writes the word at `at` (release).
    pub fn put(&self, at: usize, v: u32) {
        self.word(at).store(v.to_le(), Ordering::Release)
    }
}
