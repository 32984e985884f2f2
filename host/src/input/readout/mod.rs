//! Reading the rings out of device memory.
//!
//! For each chip, tile and RISC: read the tile and ring control words, validate them, then
//! read **only** the live span `[TAIL, HEAD)` of the ring ([`span`]), decode it into the
//! compact zone table, and optionally write `TAIL` to free the space (consume). Nothing else
//! of L1 is read; repeated drains read one control word per ring (`HEAD`).
//!
//! [`Drainer`] does this repeatedly while kernels run (streaming, or an in-process
//! consumer), keeping each ring's decoder state between drains; [`read`] is one drain.
//! Problems never abort the readout: a bad tile or ring becomes an [`Issue`] naming chip,
//! tile and RISC, and the other rings are still read.

pub mod checks;
pub mod control;
mod decoded;
mod drainer;
mod ring;
pub mod span;

pub use drainer::{DrainOptions, DrainStats, Drainer, RingReader};

use crate::decode::Records;
use crate::devmem::DeviceMemory;
use crate::error::{Location, Result};
use crate::issue::Issue;
use riscv_linker::devfile::Geometry;
use riscv_linker::{NocCoord, Risc};

/// Which ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RingId {
    /// Chip (device) index.
    pub chip: u32,
    /// The tile, NoC0 coordinates.
    pub tile: NocCoord,
    /// The core of the tile that writes the ring.
    pub risc: Risc,
}

impl RingId {
    /// The ring as an error/issue location (chip, tile, RISC).
    pub fn location(&self) -> Location {
        control::location(self.chip, self.tile, Some(self.risc))
    }
}

/// Everything read from one ring.
#[derive(Clone, Debug)]
pub struct RingReport {
    /// Which ring.
    pub id: RingId,
    /// Decoded records, in ring order (non-decreasing time): the rich view, filled by
    /// [`Drainer::finish`] with what was not taken before (`Drainer::take_zones`).
    pub records: Records,
    /// The control words as last read (read through [`RingReport::control`]); `None` for a
    /// ring not read from device memory (a device CSV's: all zero), which keeps 40 bytes a
    /// ring off an import of hundreds of thousands of rings.
    pub(crate) control: Option<Box<control::RingControl>>,
    /// Records the producer dropped because the ring was full (the `DROPPED` counter).
    pub dropped: u32,
    /// Times the producer waited for the consumer (`STALLS`; each is a `PROFILER-STALL` zone).
    pub stalls: u32,
    /// Sum of the counts of `Loss` records decoded (drops reported in-band so far).
    pub losses_in_band: u64,
    /// `STATE` bits (`ring::STATE_RUNNING`, `STATE_EXITED`, bit 2 = panicked).
    pub state: u32,
    /// Bytes of decoded records.
    pub payload_bytes: u64,
    /// Bytes skipped before the ring's end (PAD) or because they were corrupt.
    pub skipped_bytes: u64,
    /// Bytes read from device memory for this ring (control words and spans).
    pub bus_bytes: u64,
    /// Set when the ring's data became unreadable; later bytes are skipped.
    pub corrupt: Option<String>,
    /// What `records` held before a streamed read handed them on and released them
    /// ([`RingReport::release`]); `None` while `records` holds them.
    pub released: Option<Released>,
}

/// The counts of a ring whose records were handed on ([`RingReport::release`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Released {
    /// Records of every kind.
    pub records: usize,
    /// Of those, zones (with or without a value).
    pub zones: usize,
}

impl RingReport {
    /// Nothing read yet: no records, counters 0, control words all 0.
    pub fn new(id: RingId) -> RingReport {
        RingReport {
            id,
            records: Records::new(),
            control: None,
            dropped: 0,
            stalls: 0,
            losses_in_band: 0,
            state: 0,
            payload_bytes: 0,
            skipped_bytes: 0,
            bus_bytes: 0,
            corrupt: None,
            released: None,
        }
    }

    /// The control words as last read (all zero for a ring not read from device memory).
    pub fn control(&self) -> control::RingControl {
        self.control.as_deref().copied().unwrap_or_default()
    }

    /// The control words, to change them (made, all zero, if there were none).
    pub(crate) fn control_mut(&mut self) -> &mut control::RingControl {
        self.control.get_or_insert_with(Default::default)
    }

    /// Zones (with or without a value) decoded.
    pub fn zones(&self) -> usize {
        if let Some(r) = self.released {
            return r.zones;
        }
        self.records.zones()
    }

    /// Records of every kind decoded (held, or released).
    pub(crate) fn record_count(&self) -> usize {
        self.released.map_or(self.records.len(), |r| r.records)
    }

    /// The ring without its records (their counts kept: [`RingReport::zones`],
    /// `RingReport::record_count`): what a streamed profile keeps of a ring once the
    /// records went to the outputs.
    pub fn release(&self) -> RingReport {
        RingReport {
            id: self.id,
            records: Records::new(),
            control: self.control.clone(),
            dropped: self.dropped,
            stalls: self.stalls,
            losses_in_band: self.losses_in_band,
            state: self.state,
            payload_bytes: self.payload_bytes,
            skipped_bytes: self.skipped_bytes,
            bus_bytes: self.bus_bytes,
            corrupt: self.corrupt.clone(),
            released: Some(Released {
                records: self.record_count(),
                zones: self.zones(),
            }),
        }
    }
}

/// The result of a readout.
#[derive(Clone, Debug)]
pub struct Readout {
    /// The device read: architecture, chips, tiles per chip, L1 size.
    pub(crate) geometry: Geometry,
    /// Every ring that held a valid control block, in (chip, tile image order, RISC) order.
    pub(crate) rings: Vec<RingReport>,
    /// Problems found in tile and ring control blocks and ring data, in the order found.
    pub(crate) issues: Vec<Issue>,
    /// Every byte read from device memory, including tile control blocks.
    pub(crate) bus_bytes: u64,
    /// Tiles visited.
    pub(crate) tiles: u32,
    /// Of those, tiles that had never run a ttprof kernel (tile control block magic still 0).
    pub(crate) unused_tiles: u32,
}

impl Readout {
    /// A readout of `rings` on `tiles` tiles of `geometry` with nothing read yet: no issue,
    /// no byte read (what a caller that streams the records itself starts from).
    pub fn of_rings(geometry: Geometry, rings: Vec<RingReport>, tiles: u32) -> Readout {
        Readout {
            geometry,
            rings,
            issues: Vec::new(),
            bus_bytes: 0,
            tiles,
            unused_tiles: 0,
        }
    }

    /// The device read: architecture, chips, tiles per chip, L1 size.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Every ring that held a valid control block, in (chip, tile image order, RISC) order.
    pub fn rings(&self) -> &[RingReport] {
        &self.rings
    }

    /// The rings, to change (a caller dropping their records once written, say).
    pub fn rings_mut(&mut self) -> &mut [RingReport] {
        &mut self.rings
    }

    /// Problems found in tile and ring control blocks and ring data, in the order found.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// Every byte read from device memory, including tile control blocks.
    pub fn bus_bytes(&self) -> u64 {
        self.bus_bytes
    }

    /// Tiles visited.
    pub fn tiles(&self) -> u32 {
        self.tiles
    }

    /// Of those, tiles that had never run a ttprof kernel (tile control block magic still 0).
    pub fn unused_tiles(&self) -> u32 {
        self.unused_tiles
    }

    /// Bytes of decoded records, all rings.
    pub fn payload_bytes(&self) -> u64 {
        self.rings.iter().map(|r| r.payload_bytes).sum()
    }

    /// Records of every kind decoded (held in [`RingReport::records`]), all rings.
    pub fn records(&self) -> usize {
        self.rings.iter().map(RingReport::record_count).sum()
    }

    /// Zones (with or without a value) decoded, all rings.
    pub fn zones(&self) -> usize {
        self.rings.iter().map(|r| r.zones()).sum()
    }

    /// Bus bytes read per byte of decoded payload (`None` without payload).
    pub fn bus_bytes_per_payload_byte(&self) -> Option<f64> {
        let p = self.payload_bytes();
        (p > 0).then(|| self.bus_bytes as f64 / p as f64)
    }

    /// Whether any issue is an error (the readout is incomplete).
    pub fn has_errors(&self) -> bool {
        self.issues.iter().any(|i| i.is_error())
    }
}

/// Reads every ring of every chip once. With `consume`, `TAIL` is advanced past what was read.
pub fn read(mem: &dyn DeviceMemory, consume: bool) -> Result<Readout> {
    let mut d = Drainer::attach(
        mem,
        DrainOptions {
            consume,
            attach_consumer: false,
        },
    )?;
    d.drain_after_attach()?;
    d.finish()
}
