//! The host side of the image's posted register writes (protocol and layout:
//! `riscv_linker::devfile::posted`): [`MappedImage`]'s `write_u32` to a debug daisychain
//! register queues the write for the emulator process, which applies it at its next step
//! boundary, as a card takes a register write through a TLB window without answering it.
//!
//! Posting waits only for room in the queue (the emulator applies writes while a run is in
//! progress and as the next one starts; a caller that must not wait looks at
//! `DeviceMemory::posted_room` first); [`MappedImage::flush_posted`] waits until every
//! write posted so far took effect and says how many the device refused. Requests from
//! threads of this process are serialised by a lock; another process must not post to the
//! same image at the same time (the capture that posts holds the image's consumer lock).

use super::MappedImage;
use crate::error::{Error, Result};
use riscv_linker::devfile::{field, mailbox, posted};
use riscv_linker::NocCoord;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One poster at a time in this process.
static POSTER: Mutex<()> = Mutex::new(());

/// How long to wait for room in the queue (or for a flush) before giving up.
const POSTED_TIMEOUT: Duration = Duration::from_secs(10);

/// What [`MappedImage::flush_posted`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostedState {
    /// Writes posted to the image so far (by every client).
    pub posted: u32,
    /// Writes the device refused so far (no such tile, not a register it takes).
    pub refused: u32,
}

impl MappedImage {
    fn queue_get(&self, at: usize) -> u32 {
        self.header_load(field::POSTED_WRITES + at)
    }

    fn queue_put(&self, at: usize, v: u32) {
        self.header_store(field::POSTED_WRITES + at, v)
    }

    fn posted_error(&self, what: String) -> Error {
        Error::Address {
            what: format!(
                "posted register writes of {}: {what}",
                self.path().display()
            ),
        }
    }

    /// Waits until `done` holds (polling, sleeping between looks), or fails after
    /// [`POSTED_TIMEOUT`] saying what it waited for.
    fn posted_wait(&self, what: &str, done: impl Fn() -> bool) -> Result<()> {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > POSTED_TIMEOUT {
                return Err(self.posted_error(format!(
                    "no progress after {:.0} s while {what}: the emulator applies them while a run is in progress \
                     (is a run going, and its process alive and not stopped?)",
                    POSTED_TIMEOUT.as_secs_f64()
                )));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        Ok(())
    }

    /// Queues a write of `value` to register `addr` of `tile` (module docs).
    pub(super) fn post(&self, chip: u32, tile: NocCoord, addr: u32, value: u32) -> Result<()> {
        let _one = POSTER.lock().unwrap_or_else(|e| e.into_inner());
        let n = self.queue_get(posted::POSTED);
        self.posted_wait("waiting for room in the queue", || {
            n.wrapping_sub(self.queue_get(posted::APPLIED)) < posted::ENTRIES as u32
        })?;
        let e = posted::entry(n);
        self.queue_put(e + posted::CHIP, chip);
        self.queue_put(e + posted::TILE, mailbox::tile_word(tile));
        self.queue_put(e + posted::ADDR, addr);
        self.queue_put(e + posted::VALUE, value);
        self.queue_put(posted::POSTED, n.wrapping_add(1));
        Ok(())
    }

    /// Entries free in the queue now.
    pub(super) fn posted_room_now(&self) -> u32 {
        let used = self
            .queue_get(posted::POSTED)
            .wrapping_sub(self.queue_get(posted::APPLIED));
        (posted::ENTRIES as u32).saturating_sub(used)
    }

    /// The queue's counts now (writes posted and refused so far), without waiting.
    pub fn posted_state(&self) -> PostedState {
        PostedState {
            posted: self.queue_get(posted::POSTED),
            refused: self.queue_get(posted::REFUSED),
        }
    }

    /// Waits until the device applied every write posted so far; errors if it takes longer
    /// than 10 s (no run in progress applies them).
    pub fn flush_posted(&self) -> Result<PostedState> {
        let _one = POSTER.lock().unwrap_or_else(|e| e.into_inner());
        let n = self.queue_get(posted::POSTED);
        self.posted_wait("waiting for the device to apply them", || {
            self.queue_get(posted::APPLIED) == n
        })?;
        Ok(PostedState {
            posted: n,
            refused: self.queue_get(posted::REFUSED),
        })
    }
}
