//! The host side of the emulator's clock-sync mailbox: [`MappedImage`] implements
//! [`DeviceClock`] by asking the emulator process for a sample through the 64 mailbox
//! bytes of the image header (protocol and layout: `riscv_linker::devfile::mailbox`).
//!
//! One request is outstanding at a time; requests from threads of this process are
//! serialised by a lock, and the response echoes chip and tile so that a second client
//! process shows up as an error instead of a wrong sample. Times in the answer are the
//! emulator's virtual host time (the clock its op log uses), not this process's clock.
//! Mailbox traffic is not device-memory traffic: it does not count in `bytes_read`.
//! [`DeviceClock::wait_ns`] does not sleep: the wait travels with the next request as
//! `REQ_DELAY`, since the emulator's host time is virtual.

use super::{DeviceClock, MappedImage, SyncSample};
use crate::error::{Error, Result};
use riscv_linker::devfile::{field, mailbox as mb};
use riscv_linker::NocCoord;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long to wait for the emulator to answer one request before giving up.
pub(crate) const MAILBOX_TIMEOUT: Duration = Duration::from_secs(10);
/// Poll eagerly (yielding) this long before sleeping between polls.
const EAGER: Duration = Duration::from_micros(500);

/// One request at a time from this process.
static CLIENT: Mutex<()> = Mutex::new(());

impl MappedImage {
    fn mailbox_get(&self, at: usize) -> u32 {
        self.header_load(field::CLOCK_MAILBOX + at)
    }

    fn mailbox_put(&self, at: usize, v: u32) {
        self.header_store(field::CLOCK_MAILBOX + at, v)
    }

    fn mailbox_get64(&self, at: usize) -> u64 {
        self.mailbox_get(at) as u64 | (self.mailbox_get(at + 4) as u64) << 32
    }

    fn mailbox_error(&self, what: String) -> Error {
        Error::Clock {
            what: format!("clock mailbox of {}: {what}", self.path().display()),
        }
    }

    /// Whether an emulator currently answers this image's clock mailbox.
    pub fn clock_served(&self) -> bool {
        self.mailbox_get(mb::SERVER) == mb::SERVING
    }

    /// Waits until `done` holds, failing if the emulator stops serving or takes too long.
    fn mailbox_wait(&self, what: &str, done: impl Fn() -> bool) -> Result<()> {
        let start = Instant::now();
        while !done() {
            if !self.clock_served() {
                return Err(
                    self.mailbox_error(format!("the emulator stopped serving while {what}"))
                );
            }
            let waited = start.elapsed();
            if waited > MAILBOX_TIMEOUT {
                return Err(self.mailbox_error(format!(
                    "no progress after {:.0} s while {what} (is the emulator process alive and not stopped?)",
                    waited.as_secs_f64()
                )));
            }
            if waited < EAGER {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        Ok(())
    }
}

impl DeviceClock for MappedImage {
    /// The emulator's host time is virtual: the wait is sent with the next request
    /// (`REQ_DELAY`), and the emulator starts that read `ns` later. Nothing sleeps.
    fn wait_ns(&self, ns: u64) -> Result<()> {
        let d = self.clock_delay();
        let _ = d.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            Some(v.saturating_add(ns))
        });
        Ok(())
    }

    fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
        if !self.writable() {
            return Err(self.mailbox_error(
                "the image is mapped read-only, and a clock sample writes a request into it: open it read-write".into(),
            ));
        }
        let _one_at_a_time = CLIENT.lock().unwrap_or_else(|e| e.into_inner());
        if !self.clock_served() {
            return Err(self.mailbox_error(format!(
                "no emulator is serving it (SERVER word {:#010x}, expected {:#010x}): the emulator process has ended, \
                 or runs with clock_mailbox = false",
                self.mailbox_get(mb::SERVER),
                mb::SERVING
            )));
        }
        self.mailbox_wait("waiting for another client's pending request", || {
            self.mailbox_get(mb::REQ_SEQ) == self.mailbox_get(mb::RESP_SEQ)
        })?;
        let seq = self.mailbox_get(mb::RESP_SEQ).wrapping_add(1).max(1);
        let delay = self
            .clock_delay()
            .load(Ordering::Acquire)
            .min(u32::MAX as u64);
        self.mailbox_put(mb::REQ_CHIP, chip);
        self.mailbox_put(mb::REQ_TILE, mb::tile_word(tile));
        self.mailbox_put(mb::REQ_DELAY, delay as u32);
        self.mailbox_put(mb::REQ_SEQ, seq);
        self.mailbox_wait(&format!("waiting for the answer to request {seq}"), || {
            self.mailbox_get(mb::RESP_SEQ) == seq
        })?;
        self.clock_delay().fetch_sub(delay, Ordering::AcqRel); // sent: the rest waits for the next request
        let (rc, rt) = (
            self.mailbox_get(mb::RESP_CHIP),
            self.mailbox_get(mb::RESP_TILE),
        );
        if (rc, rt) != (chip, mb::tile_word(tile)) {
            return Err(self.mailbox_error(format!(
                "asked for chip {chip} tile {tile} but the answer is for chip {rc} tile {}: another process is using \
                 the mailbox (one client at a time)",
                mb::word_tile(rt)
            )));
        }
        match self.mailbox_get(mb::RESP_STATUS) {
            mb::STATUS_OK => Ok(SyncSample {
                host_before_ns: self.mailbox_get64(mb::HOST_BEFORE),
                device_cycles: self.mailbox_get64(mb::DEVICE_CYCLES),
                host_after_ns: self.mailbox_get64(mb::HOST_AFTER),
            }),
            mb::STATUS_NO_CHIP => {
                Err(Error::Address { what: format!("clock sample of chip {chip}: the emulator has no such chip") })
            }
            mb::STATUS_NO_TILE => Err(Error::Address {
                what: format!("clock sample of chip {chip} tile {tile}: not a worker tile of the emulated chip"),
            }),
            s => Err(self.mailbox_error(format!("unknown response status {s} (expected 0, 1 or 2)"))),
        }
    }
}
