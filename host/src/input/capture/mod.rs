//! Streaming capture: attach to device memory while kernels run (the emulator's image from
//! another process, or any [`DeviceMemory`]), drain every ring as it fills, and stop on a
//! condition ([`StopWhen`]); then write the outputs ring by ring (the device CSV by
//! [`crate::csv::rings`], each ring's payload decoded again by [`payload`]).
//!
//! While attached, the capture sets each tile's `CONSUMER` word, so Block-policy producers
//! wait for it instead of dropping, and advances `TAIL` after every drain. It polls as fast
//! as the rings fill ([`Pacing`]): often enough that no ring fills up between drains, no more
//! often than needed to find a useful amount of data, backing off while idle.
//!
//! What it keeps per ring is the ring's *payload stream*: the bytes it decoded, which
//! decode again to exactly the same records from a fresh decoder. That is the most compact
//! exact form (6 bytes per short zone); it goes to a spool file ([`spool::Spool`]) as it
//! arrives, and the writer decodes, resolves and writes one ring at a time. Nothing is lost or
//! duplicated across drains: each drain reads
//! `[TAIL, HEAD)` and then moves `TAIL` to `HEAD`.

pub mod payload;
pub mod spool;
pub mod stop;

pub use stop::{Interrupt, StopWhen, Stopped};

use crate::devmem::DeviceMemory;
use crate::error::Result;
use crate::readout::{DrainOptions, Drainer, Readout};
use spool::Spool;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often to poll. The pause adapts so that the fullest ring holds between an eighth and
/// a half of its capacity at each drain: fewer drains would make Block producers wait,
/// more would spend bus reads on `HEAD` words and nearly empty spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// Longest pause (while the rings are idle).
    pub idle: Duration,
    /// How often to look for rings that have not started yet.
    pub probe: Duration,
}

impl Default for Pacing {
    fn default() -> Pacing {
        Pacing {
            idle: Duration::from_millis(10),
            probe: Duration::from_millis(20),
        }
    }
}

impl Pacing {
    /// The pause after a drain whose fullest ring held `span` bytes, given the last pause.
    pub fn next(&self, last: Duration, span: u32) -> Duration {
        let capacity = riscv_linker::profiler::RING_CAPACITY;
        if span >= capacity / 2 {
            last / 2
        } else if span < capacity / 8 {
            (last * 2).max(Duration::from_micros(50)).min(self.idle)
        } else {
            last
        }
    }
}

/// What a capture took.
pub struct Captured {
    /// Counters, issues and bus cost of every ring (their `records` are empty: the records
    /// are in `payload`).
    pub readout: Readout,
    /// Each ring's payload stream, keyed like `readout.rings`.
    pub payload: Spool,
    /// Drains done (each reads every ring's new span once).
    pub drains: u64,
    /// Zones captured.
    pub zones: u64,
    /// How long the capture ran.
    pub elapsed: Duration,
    /// Why it ended.
    pub stopped: Stopped,
}

/// Live figures for a progress display.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Drains so far.
    pub drains: u64,
    /// Zones so far.
    pub zones: u64,
    /// Payload bytes drained so far.
    pub payload_bytes: u64,
    /// Rings seen so far.
    pub rings: usize,
}

/// Captures from `mem` until `stop` (or until `interrupt` is raised, as the command line
/// does on Ctrl-C), spooling into a temporary file in `dir`.
pub fn capture(
    mem: &dyn DeviceMemory,
    stop: &StopWhen,
    interrupt: &Interrupt,
    pacing: Pacing,
    dir: &Path,
    progress: impl FnMut(&Progress),
) -> Result<Captured> {
    capture_sampled(mem, stop, interrupt, pacing, dir, |_| {}, progress)
}

/// [`capture`], with `tick` called after every drain with the ns since the capture started
/// (the capture's own clock): a caller's clock-sync sampler takes a round there when one is
/// due (`crate::clock::ClockSampler::tick`).
pub fn capture_sampled(
    mem: &dyn DeviceMemory,
    stop: &StopWhen,
    interrupt: &Interrupt,
    pacing: Pacing,
    dir: &Path,
    mut tick: impl FnMut(u64),
    mut progress: impl FnMut(&Progress),
) -> Result<Captured> {
    stop.check()?;
    let mut payload = Spool::create(dir)?;
    let start = Instant::now();
    let mut d = Drainer::attach(
        mem,
        DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )?;
    d.keep_payload();
    d.probe_every(pacing.probe);
    let mut live = Progress::default();
    let mut pause = Duration::from_micros(200);
    let mut failed = None;
    let stopped = loop {
        // Check first, then drain: whatever was published before the stop is taken.
        let stopped = stop.reached(start, interrupt);
        // What a drain that fails part way took from the rings (and freed there) is kept
        // all the same, and so is a drain the spool cannot take (in memory).
        let drained = d.drain();
        let kept = collect(&mut d, &mut payload);
        let s = match (drained, kept) {
            (Ok(s), Ok(())) => s,
            (Err(e), _) | (Ok(_), Err(e)) => {
                failed = Some(e);
                break Stopped::Failed;
            }
        };
        live.drains += 1;
        live.zones += s.zones;
        live.payload_bytes += s.payload_bytes;
        live.rings = d.reports().count();
        tick(start.elapsed().as_nanos() as u64);
        progress(&live);
        if let Some(why) = stopped {
            break why;
        }
        pause = pacing.next(pause, s.largest_span);
        if pause.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(pause);
        }
    };
    if failed.is_none() {
        let drained = d.drain_final();
        let kept = collect(&mut d, &mut payload);
        match (drained, kept) {
            (Ok(s), Ok(())) => {
                live.drains += 1;
                live.zones += s.zones;
            }
            (Err(e), _) | (Ok(_), Err(e)) => failed = Some(e),
        }
    }
    let Some(e) = failed else {
        progress(&live);
        let readout = d.finish()?;
        return Ok(Captured {
            readout,
            payload,
            drains: live.drains,
            zones: live.zones,
            elapsed: start.elapsed(),
            stopped,
        });
    };
    // Nothing more is read: what was drained is written, and said so with its count.
    live.zones = d.zones();
    progress(&live);
    let what = format!(
        "the capture stopped early: {e}; the {} zone(s) drained before are written (the rings were consumed up to \
         there), what the device wrote after was not read",
        live.zones
    );
    let readout = d.abandon(crate::issue::Issue::error(None, what).with_count(live.zones));
    Ok(Captured {
        readout,
        payload,
        drains: live.drains,
        zones: live.zones,
        elapsed: start.elapsed(),
        stopped: Stopped::Failed,
    })
}

/// Moves what the drainer decoded into the spool (its tables are dropped: the payload
/// decodes to the same rows).
fn collect(d: &mut Drainer, spool: &mut Spool) -> Result<()> {
    spool.append(&d.take_payload())?;
    drop(d.take_zones());
    Ok(())
}
