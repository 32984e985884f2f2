//! The clock-sync mailbox responder: answers a host process's wall-clock sample requests
//! through the device image (protocol: [`riscv_linker::devfile::mailbox`]), while kernels
//! run and while the device is idle between runs.
//!
//! A background thread polls the mailbox's request word; each request is answered with a
//! sample drawn exactly as [`crate::Device::sync_sample`] draws one (two latency legs, the
//! counter read when the request arrives), in virtual host time. The responder reads only
//! immutable configuration and the device's published virtual host time, writes only the
//! mailbox (which no core can address) and keeps its own cursor and latency stream, so
//! mailbox traffic cannot change a run; which published time a request meets is a
//! real-time race, as on hardware. Each side writes its sequence word last, with release,
//! and reads the other's with acquire.
//!
//! See docs/design/clock-alignment.md, "The mailbox", for why this is deterministic.

use crate::error::EmuError;
use crate::time::clock::{ChipClock, ClockTruth, ReadLatency, SplitMix};
use crate::time::dvfs::FreqStep;
use riscv_linker::devfile::mailbox as mb;
use riscv_linker::NocCoord;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Separates the responder's latency stream from the device's in-process one.
const STREAM: u64 = 0x6D61_696C_626F_7831;
/// After a request, keep polling eagerly this long (requests come in windows).
const EAGER: Duration = Duration::from_millis(2);
/// Otherwise sleep this long between polls.
const IDLE_POLL: Duration = Duration::from_millis(1);

/// What the responder needs to answer: immutable after the device is built.
pub(crate) struct Context {
    /// One oscillator per chip.
    pub chips: Vec<ChipClock>,
    /// Each chip's frequency steps.
    pub dvfs: Vec<Vec<FreqStep>>,
    pub nominal_mhz: f64,
    pub host_read: ReadLatency,
    /// One chip's tiles, in image order.
    pub coords: Vec<NocCoord>,
    /// Wall-clock offsets, chip-major.
    pub offsets: Vec<u64>,
}

/// The device's virtual host time, as published to the responder (f64 bits; never negative,
/// so the bit patterns order like the values and `fetch_max` keeps it monotonic).
#[derive(Clone, Debug, Default)]
pub(crate) struct Published(Arc<AtomicU64>);

impl Published {
    pub fn new(ns: f64) -> Published {
        Published(Arc::new(AtomicU64::new(ns.max(0.0).to_bits())))
    }

    /// Moves the published time forward to `ns` (never back).
    pub fn advance(&self, ns: f64) {
        if ns.is_finite() {
            self.0.fetch_max(ns.max(0.0).to_bits(), Ordering::AcqRel);
        }
    }

    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Acquire))
    }
}

/// The mailbox's place in the image mapping.
struct Mailbox(*mut u8);

// SAFETY: the pointer is only used for atomic accesses to the 64 mailbox bytes, and the
// thread using it is joined (Responder::drop) before the device drops its image mapping
// (the `mailbox` field is declared before `image` in `Device`).
unsafe impl Send for Mailbox {}

impl Mailbox {
    fn word(&self, at: usize) -> &AtomicU32 {
        debug_assert!(at.is_multiple_of(4) && at < mb::SIZE);
        // SAFETY: inside the header mapping, 4-byte aligned (the mailbox offset is 64).
        unsafe { AtomicU32::from_ptr(self.0.add(at) as *mut u32) }
    }

    fn get(&self, at: usize) -> u32 {
        u32::from_le(self.word(at).load(Ordering::Acquire))
    }

    fn put(&self, at: usize, v: u32) {
        self.word(at).store(v.to_le(), Ordering::Release);
    }

    fn put64(&self, at: usize, v: u64) {
        self.put(at, v as u32);
        self.put(at + 4, (v >> 32) as u32);
    }
}

/// The running responder thread; stopping it (drop) clears `SERVER` and joins it.
pub(crate) struct Responder {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder").finish_non_exhaustive()
    }
}

impl Responder {
    /// Starts answering the mailbox at `mailbox` (the image's `CLOCK_MAILBOX` bytes).
    ///
    /// # Safety
    /// `mailbox` must point at the 64 mailbox bytes of a live mapping that outlives the
    /// returned value.
    pub unsafe fn start(
        ctx: Context,
        mailbox: *mut u8,
        published: Published,
    ) -> Result<Responder, EmuError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // Announce before returning, so a client that finds the image finds it served.
        Mailbox(mailbox).put(mb::SERVER, mb::SERVING);
        let served = Mailbox(mailbox);
        let thread = std::thread::Builder::new()
            .name("ttprof-emu-clock-mailbox".into())
            .spawn(move || serve(&ctx, &served, &published, &flag))
            .map_err(|e| {
                Mailbox(mailbox).put(mb::SERVER, 0);
                EmuError::Config(format!("cannot start the clock mailbox thread: {e}"))
            })?;
        Ok(Responder {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn serve(ctx: &Context, mailbox: &Mailbox, published: &Published, stop: &AtomicBool) {
    let mut rng = SplitMix(ctx.host_read.seed ^ STREAM);
    let mut cursor = 0.0f64;
    let mut served = mailbox.get(mb::SERVED);
    let mut last = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let req = mailbox.get(mb::REQ_SEQ);
        if req != mailbox.get(mb::RESP_SEQ) {
            let waited = cursor + mailbox.get(mb::REQ_DELAY) as f64;
            cursor = answer(ctx, mailbox, published.get().max(waited), &mut rng);
            served = served.wrapping_add(1);
            mailbox.put(mb::SERVED, served);
            mailbox.put(mb::RESP_SEQ, req);
            last = Instant::now();
        } else if last.elapsed() < EAGER {
            std::thread::yield_now();
        } else {
            std::thread::park_timeout(IDLE_POLL);
        }
    }
    mailbox.put(mb::SERVER, 0);
}

/// Writes the response fields (not `RESP_SEQ`) for the pending request, whose read starts
/// at virtual host time `before`; returns the new cursor.
fn answer(ctx: &Context, mailbox: &Mailbox, before: f64, rng: &mut SplitMix) -> f64 {
    let chip = mailbox.get(mb::REQ_CHIP);
    let tile_word = mailbox.get(mb::REQ_TILE);
    let tile = mb::word_tile(tile_word);
    mailbox.put(mb::RESP_CHIP, chip);
    mailbox.put(mb::RESP_TILE, tile_word);
    let index = ctx.coords.iter().position(|&c| c == tile);
    let (Some(oscillator), Some(index)) = (ctx.chips.get(chip as usize), index) else {
        let status = if (chip as usize) < ctx.chips.len() {
            mb::STATUS_NO_TILE
        } else {
            mb::STATUS_NO_CHIP
        };
        mailbox.put(mb::RESP_STATUS, status);
        return before;
    };
    let offset = ctx.offsets[chip as usize * ctx.coords.len() + index];
    let steps = ctx.dvfs.get(chip as usize).map_or(&[][..], Vec::as_slice);
    let truth = ClockTruth::new(*oscillator, ctx.nominal_mhz, offset, steps);
    let read = crate::time::sync::read_clock(&truth, &ctx.host_read, rng, before);
    mailbox.put64(mb::HOST_BEFORE, before.round() as u64);
    mailbox.put64(mb::DEVICE_CYCLES, read.chip_cycles.wrapping_add(offset));
    mailbox.put64(mb::HOST_AFTER, read.after.round() as u64);
    mailbox.put(mb::RESP_STATUS, mb::STATUS_OK);
    read.after
}
