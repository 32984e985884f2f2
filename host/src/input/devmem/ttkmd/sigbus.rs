//! SIGBUS from a mapped TLB window becomes an error, not a crash.
//!
//! A card that is reset (or falls off the bus) while one of its windows is mapped can make
//! the next load from the window raise SIGBUS, which kills the process by default. The
//! existing guard of the emulator's image (`DeviceMemory::check` before a drain: a
//! truncated image is refused before it is touched) cannot see a reset coming, so mapped
//! windows get a second line: each window registers its address range here, and a SIGBUS
//! handler that finds the faulting address inside a registered range replaces the whole
//! range with anonymous memory filled with 0xFF bytes (`mmap(MAP_FIXED)`), marks the
//! range faulted and returns. The faulting load is restarted, reads 0xFFFFFFFF, and the
//! reader sees the mark ([`Guard::faulted`]) and reports "card went away". A SIGBUS
//! anywhere else is passed on to the previous handler (or the default action), unchanged.
//!
//! The handler only loads atomics, calls `mmap` and writes memory it just mapped: nothing
//! that allocates or takes a lock. Windows are small (at most 16 MiB), so the 0xFF fill is
//! cheap and happens once per faulted window.

use nix::libc;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// Ranges that can be guarded at once (a backend maps a handful of windows).
const SLOTS: usize = 64;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
    busy: AtomicBool,
    /// Fill the replacement with 0xFF bytes (a card window); else it reads zeros (a large
    /// file mapping, whose reader stops at the mark).
    fill: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
    busy: AtomicBool::new(false),
    fill: AtomicBool::new(true),
};
static SLOTS_TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The SIGBUS action before ours, written once before our handler is installed.
struct Previous(UnsafeCell<libc::sigaction>);
// SAFETY: written only inside `INSTALL.call_once`, before the handler that reads it exists.
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(UnsafeCell::new(unsafe { std::mem::zeroed() }));
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in &SLOTS_TABLE {
        let (start, len) = (
            slot.start.load(Ordering::Acquire),
            slot.len.load(Ordering::Acquire),
        );
        if len == 0 || addr < start || addr >= start + len {
            continue;
        }
        // SAFETY: [start, start + len) is a mapping this process registered and has not
        // unmapped (unregistering happens before unmapping); replacing it keeps the range
        // mapped, and the window's owner unmaps it later as usual.
        let p = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p as usize == start {
            if slot.fill.load(Ordering::Acquire) {
                unsafe { std::ptr::write_bytes(start as *mut u8, 0xFF, len) };
            }
            slot.faulted.store(true, Ordering::Release);
            return;
        }
        break;
    }
    // Not ours (or the range could not be replaced): what would have happened without us.
    // SAFETY: PREVIOUS was written before this handler was installed.
    unsafe {
        let prev = &*PREVIOUS.0.get();
        let handler = prev.sa_sigaction;
        if prev.sa_flags & libc::SA_SIGINFO != 0
            && handler != libc::SIG_DFL
            && handler != libc::SIG_IGN
        {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            f(sig, info, ctx);
        } else if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(sig);
        } else {
            // Restore the default and return: the load faults again and the process dies
            // of SIGBUS as it would have.
            libc::sigaction(libc::SIGBUS, prev, std::ptr::null_mut());
        }
    }
}

fn install() -> bool {
    INSTALL.call_once(|| {
        // SAFETY: plain sigaction setup; PREVIOUS is written before the handler can run.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut act.sa_mask);
            if libc::sigaction(libc::SIGBUS, &act, PREVIOUS.0.get()) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
    INSTALLED.load(Ordering::Acquire)
}

/// A registered range; unregistered on drop (drop it before unmapping the range).
pub(crate) struct Guard {
    slot: usize,
}

impl Guard {
    /// Guards `[start, start + len)`. `None` when every slot is taken or the handler could
    /// not be installed (the window then works unguarded, as any mapping does).
    pub(crate) fn register(start: *const u8, len: usize) -> Option<Guard> {
        Self::register_with(start, len, true)
    }

    /// As [`Guard::register`], but a fault leaves the range reading zeros instead of 0xFF
    /// bytes (no fill: a device image can be far larger than a window); its reader must
    /// look at [`Guard::faulted`] before trusting what it read.
    pub(crate) fn register_unfilled(start: *const u8, len: usize) -> Option<Guard> {
        Self::register_with(start, len, false)
    }

    fn register_with(start: *const u8, len: usize, fill: bool) -> Option<Guard> {
        if !install() || len == 0 {
            return None;
        }
        for (i, slot) in SLOTS_TABLE.iter().enumerate() {
            if slot
                .busy
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.faulted.store(false, Ordering::Release);
                slot.fill.store(fill, Ordering::Release);
                slot.start.store(start as usize, Ordering::Release);
                slot.len.store(len, Ordering::Release);
                return Some(Guard { slot: i });
            }
        }
        None
    }

    /// Whether a SIGBUS hit the range since it was registered (its contents are then all
    /// 0xFF bytes, not the device's).
    pub(crate) fn faulted(&self) -> bool {
        SLOTS_TABLE[self.slot].faulted.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let slot = &SLOTS_TABLE[self.slot];
        slot.len.store(0, Ordering::Release);
        slot.start.store(0, Ordering::Release);
        slot.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmd_a_sigbus_in_a_guarded_mapping_reads_all_ones_and_is_marked() {
        // A file mapping whose file shrinks faults like a window of a card that was reset.
        let dir = crate::testing::temp_dir("kmd-sigbus");
        let path = dir.join("window");
        std::fs::write(&path, vec![0x5Au8; 2 * 4096]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let map = memmap2::MmapOptions::new()
            .len(2 * 4096)
            .map_raw(&file)
            .unwrap();
        let guard = Guard::register(map.as_ptr(), map.len()).expect("a slot");
        let read =
            |off: usize| unsafe { std::ptr::read_volatile(map.as_ptr().add(off) as *const u32) };
        assert_eq!(read(4096), 0x5A5A_5A5A);
        assert!(!guard.faulted());
        file.set_len(0).unwrap();
        assert_eq!(
            read(4096),
            u32::MAX,
            "the faulting load completes with all ones"
        );
        assert!(guard.faulted());
        assert_eq!(read(0), u32::MAX, "the whole range was replaced");
        drop(guard);
        drop(map);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
