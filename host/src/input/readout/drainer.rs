//! Draining rings repeatedly, with per-ring decoder state kept across drains.
//!
//! Bus cost: `attach` reads each tile's control block and each ring's control words once;
//! a drain then reads one word per ring (`HEAD`) and the live spans; [`Drainer::finish`]
//! reads each ring's counters once more. Decoded records go to each ring's compact
//! [`ZoneTable`]; the rich [`Records`] view is built per ring when records are handed out.
//! A [`RingReader`], which hands each ring out whole, decodes straight into its records
//! (`decoded`).

use super::checks::LaunchTimes;
use super::control::{self, RingControl, RING_WORDS, TILE_WORDS};
use super::decoded::Decoded;
use super::ring::{final_issues, final_issues_after, RingEntry};
use super::{Readout, Released, RingId, RingReport};
use crate::decode::{Records, ZoneTable};
use crate::devmem::DeviceMemory;
use crate::error::Result;
use crate::issue::Issue;
use riscv_linker::profiler::{self, ring, tile, RingMap};
use riscv_linker::{NocCoord, Risc};
use std::time::{Duration, Instant};

/// How a [`Drainer`] treats the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainOptions {
    /// Write `TAIL` after each drain so the producer can reuse the space.
    pub consume: bool,
    /// Set each tile's `CONSUMER` word while attached, so Block-policy producers wait for
    /// this consumer instead of dropping (cleared again by [`Drainer::finish`]). The word is
    /// a lease: every drain writes a new heartbeat, and a producer stops waiting for a
    /// consumer whose heartbeat stopped (killed without detaching).
    pub attach_consumer: bool,
}

/// What one drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainStats {
    /// Records of every kind decoded, all rings.
    pub records: u64,
    /// Of those, zones (with or without a value).
    pub zones: u64,
    /// The largest live span found (bytes): how close the fullest ring was to full.
    pub(crate) largest_span: u32,
    /// Bytes of decoded records, all rings.
    pub payload_bytes: u64,
    /// Bytes read from device memory (control words and spans).
    pub bus_bytes: u64,
}

struct TileEntry {
    chip: u32,
    tile: NocCoord,
    /// Whether the tile block was valid (else re-checked at every drain while unused).
    state: Option<bool>,
    /// Where its blocks and rings are: the layout whose tile block magic was found.
    map: RingMap,
}

/// The memory a drainer reads: borrowed from the caller, or its own (a drainer kept in a
/// long-lived handle such as [`crate::session::Session`]).
enum Mem<'m> {
    Borrowed(&'m dyn DeviceMemory),
    Owned(Box<dyn DeviceMemory + 'm>),
}

impl<'m> std::ops::Deref for Mem<'m> {
    type Target = dyn DeviceMemory + 'm;
    fn deref(&self) -> &Self::Target {
        match self {
            Mem::Borrowed(m) => *m,
            Mem::Owned(m) => &**m,
        }
    }
}

/// Drains every ring of a device, repeatedly.
pub struct Drainer<'m> {
    mem: Mem<'m>,
    opts: DrainOptions,
    tiles: Vec<TileEntry>,
    rings: Vec<RingEntry>,
    /// Rings of valid tiles whose blocks were not initialised yet: probed again each drain.
    pending: Vec<(RingId, usize)>,
    issues: Vec<Issue>,
    bus_start: u64,
    /// Set by `attach`; lets `drain_after_attach` skip repeating its probes.
    just_attached: bool,
    /// Keep each ring's decoded bytes ([`Drainer::keep_payload`]).
    keep_payload: bool,
    /// Probe unused tiles and rings at most this often ([`Drainer::probe_every`]), and when.
    probe_every: Duration,
    last_probe: Option<Instant>,
    /// The value this consumer writes into `CONSUMER` (never 0), renewed at every drain.
    heartbeat: u32,
    /// Leave drained recordings undecoded until each ring's turn ([`super::RingReader`]).
    defer_drained: bool,
}

impl<'m> Drainer<'m> {
    /// Reads and validates every tile and ring control block.
    pub fn attach(mem: &'m dyn DeviceMemory, opts: DrainOptions) -> Result<Drainer<'m>> {
        Self::attach_to(Mem::Borrowed(mem), opts, false)
    }

    /// Like [`Drainer::attach`], owning the memory it reads.
    pub(crate) fn attach_owned(
        mem: Box<dyn DeviceMemory + 'm>,
        opts: DrainOptions,
    ) -> Result<Drainer<'m>> {
        Self::attach_to(Mem::Owned(mem), opts, false)
    }

    fn attach_to(mem: Mem<'m>, opts: DrainOptions, defer: bool) -> Result<Drainer<'m>> {
        mem.check()?;
        if opts.consume {
            mem.claim_consumer()?;
        }
        let g = mem.geometry();
        let mut tiles = Vec::new();
        for chip in 0..g.chips {
            for tile in mem.tiles(chip) {
                tiles.push(TileEntry {
                    chip,
                    tile,
                    state: None,
                    map: RingMap::TTPROF,
                });
            }
        }
        let bus_start = mem.bytes_read();
        // What the recording lost that the memory does not show (a snapshot's record).
        let issues = mem.recorded_issues();
        let mut d = Drainer {
            mem,
            opts,
            tiles,
            rings: Vec::new(),
            pending: Vec::new(),
            issues,
            bus_start,
            just_attached: true,
            keep_payload: false,
            probe_every: Duration::ZERO,
            last_probe: None,
            heartbeat: first_heartbeat(),
            defer_drained: defer,
        };
        d.discover()?;
        Ok(d)
    }

    /// Renews the lease: a new heartbeat in every attached tile's `CONSUMER` word.
    fn beat(&mut self) -> Result<()> {
        if !self.opts.attach_consumer {
            return Ok(());
        }
        self.heartbeat = self.heartbeat.wrapping_add(1).max(1);
        for t in self.tiles.iter().filter(|t| t.state == Some(true)) {
            self.mem.write_u32(
                t.chip,
                t.tile,
                t.map.tile_block + tile::CONSUMER,
                self.heartbeat,
            )?;
        }
        Ok(())
    }

    /// Checks tiles not yet known to be valid; adds their rings.
    fn discover(&mut self) -> Result<()> {
        let g = self.mem.geometry();
        for i in 0..self.tiles.len() {
            let (chip, tile) = (self.tiles[i].chip, self.tiles[i].tile);
            if self.tiles[i].state.is_some() {
                continue;
            }
            // MAGIC is written last: a zero magic is a tile nothing initialised (4 bytes read).
            // ttprof's layout first, then tt-metal's (a kernel built for tt-metal's firmware).
            let mut w = [0u32; TILE_WORDS];
            let mut map = RingMap::TTPROF;
            w[0] = self
                .mem
                .read_u32(chip, tile, map.tile_block + tile::MAGIC)?;
            if w[0] != profiler::TILE_MAGIC {
                // Under tt-metal ttprof's block address holds launch message 0. A memory that
                // cannot answer there (a snapshot of ttprof's layout, which recorded only
                // ttprof's blocks) is not in tt-metal's layout.
                let tt = RingMap::tt_metal(g.arch);
                let magic = self
                    .mem
                    .read_u32(chip, tile, tt.tile_block + tile::MAGIC)
                    .ok();
                if magic == Some(profiler::TILE_MAGIC) {
                    map = tt;
                    w[0] = profiler::TILE_MAGIC;
                }
            }
            if w[0] == 0 {
                continue;
            }
            self.tiles[i].map = map;
            self.mem
                .read_words(chip, tile, map.tile_block + 4, &mut w[1..])?;
            match control::check_tile(&w, &g, &map, control::location(chip, tile, None)) {
                Ok(issues) => {
                    self.issues.extend(issues);
                    self.tiles[i].state = Some(true);
                }
                Err(issue) => {
                    self.issues.push(issue);
                    self.tiles[i].state = Some(false);
                    continue;
                }
            }
            if self.opts.attach_consumer {
                self.mem
                    .write_u32(chip, tile, map.tile_block + tile::CONSUMER, self.heartbeat)?;
            }
            for risc in Risc::ALL {
                let id = RingId { chip, tile, risc };
                if !self.add_ring(id, i)? {
                    self.pending.push((id, i));
                }
            }
        }
        Ok(())
    }

    /// Adds a ring if its block was initialised; returns whether it was.
    fn add_ring(&mut self, id: RingId, tile_index: usize) -> Result<bool> {
        let before = self.mem.bytes_read();
        // As for tiles: a zero magic is a ring no kernel ever initialised (4 bytes read).
        let map = self.tiles[tile_index].map;
        let mut w = [0u32; RING_WORDS];
        w[0] = self
            .mem
            .read_u32(id.chip, id.tile, map.ring_block(id.risc) + ring::MAGIC)?;
        if w[0] == 0 {
            return Ok(false);
        }
        self.mem
            .read_words(id.chip, id.tile, map.ring_block(id.risc) + 4, &mut w[1..])?;
        let c = RingControl::from_words(&w);
        if let Err(what) = control::check_ring(&c, id.risc, &map) {
            self.issues.push(Issue::error(Some(id.location()), what));
            return Ok(true);
        }
        let mut report = RingReport::new(id);
        report.control = Some(Box::new(c));
        report.bus_bytes = self.mem.bytes_read() - before;
        let mut entry = RingEntry::new(report, tile_index, map, self.keep_payload);
        // A recording of a drained run carries what its consumer took: it comes first.
        if self.defer_drained {
            entry.deferred = Some(self.issues.len());
        } else {
            entry.feed_drained(&*self.mem, &mut self.issues);
        }
        self.rings.push(entry);
        // Keep rings in device order (chip, tile, RISC) whenever they appear.
        self.rings.sort_by_key(|r| (r.tile_index, r.report.id.risc));
        Ok(true)
    }

    /// Looks for tiles and rings that started since they were last probed.
    fn probe(&mut self) -> Result<()> {
        self.last_probe = Some(Instant::now());
        if self.tiles.iter().any(|t| t.state.is_none()) {
            self.discover()?;
        }
        for (id, tile_index) in std::mem::take(&mut self.pending) {
            if !self.add_ring(id, tile_index)? {
                self.pending.push((id, tile_index));
            }
        }
        Ok(())
    }

    /// Reads every ring's new records once; with `consume`, frees them.
    pub fn drain(&mut self) -> Result<DrainStats> {
        self.just_attached = false;
        self.drain_inner()
    }

    /// `attach` immediately followed by one drain (nothing can have launched in between, so
    /// the probes `attach` just made are not repeated), for a one-shot read that
    /// [`Drainer::finish`]es right after: the control words `attach` read are that read's,
    /// so `finish` does not read them again (each ring block is read once).
    pub(crate) fn drain_after_attach(&mut self) -> Result<DrainStats> {
        let stats = self.drain_inner()?;
        for r in &mut self.rings {
            r.stale = false;
        }
        Ok(stats)
    }

    fn drain_inner(&mut self) -> Result<DrainStats> {
        self.mem.check()?;
        self.beat()?;
        let before = self.mem.bytes_read();
        // Tiles and rings unused so far may have started since: a kernel can launch between
        // `attach` and any drain, the first one included.
        let due = self
            .last_probe
            .is_none_or(|t| t.elapsed() >= self.probe_every);
        if !std::mem::take(&mut self.just_attached) && due {
            self.probe()?;
        }
        let mut stats = DrainStats::default();
        for entry in &mut self.rings {
            let (n, z, p) = (entry.rows, entry.zones, entry.report.payload_bytes);
            entry.drain(&*self.mem, self.opts.consume, &mut self.issues)?;
            stats.records += entry.rows - n;
            stats.zones += entry.zones - z;
            stats.largest_span = stats.largest_span.max(entry.last_span);
            stats.payload_bytes += entry.report.payload_bytes - p;
        }
        stats.bus_bytes = self.mem.bytes_read() - before;
        Ok(stats)
    }

    /// Probes tiles and rings that were unused so far (4 bytes each) at most every `d`
    /// instead of at every drain: a streaming consumer that drains often saves most of that
    /// bus traffic, and a ring that starts meanwhile is found at the next probe (its data
    /// waits in the ring). [`Drainer::drain_final`] always probes.
    pub(crate) fn probe_every(&mut self, d: Duration) {
        self.probe_every = d;
    }

    /// From now on, every ring keeps a copy of the bytes it decodes (its payload stream,
    /// which decodes again to the same records from a fresh `Decoder`): see
    /// [`Drainer::take_payload`]. For capture, which stores that stream instead of tables.
    pub fn keep_payload(&mut self) {
        self.keep_payload = true;
        for r in &mut self.rings {
            r.span.keep_payload();
        }
    }

    /// Moves each ring's decoded bytes kept since the last call out of the drainer.
    pub fn take_payload(&mut self) -> Vec<(RingId, Vec<u8>)> {
        self.rings
            .iter_mut()
            .map(|r| (r.report.id, r.span.take_payload()))
            .filter(|(_, p)| !p.is_empty())
            .collect()
    }

    /// Moves the records decoded so far out of the drainer as rich tables (for streaming
    /// consumers); counts and decoder state stay.
    pub fn take_records(&mut self) -> Vec<(RingId, Records)> {
        self.take_zones()
            .into_iter()
            .map(|(id, t)| (id, Records::from_table(t)))
            .collect()
    }

    /// Moves the records decoded so far out of the drainer as compact tables; counts and
    /// decoder state stay. (A [`RingReader`]'s rings, decoded into records, have none.)
    pub(crate) fn take_zones(&mut self) -> Vec<(RingId, ZoneTable)> {
        self.rings
            .iter_mut()
            .filter(|r| !r.table.is_empty())
            .filter_map(|r| Some((r.report.id, r.table.take_table()?)))
            .collect()
    }

    /// The rings found so far, with their counts (their `records` stay empty until
    /// [`Drainer::finish`]).
    pub fn reports(&self) -> impl Iterator<Item = &RingReport> {
        self.rings.iter().map(|r| &r.report)
    }

    /// Issues found so far.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// The last drain: reads each ring's counters (`DROPPED`, `STALLS`, `STATE`, ...) and
    /// drains what was published since the last drain. [`Drainer::finish`] does it too; call
    /// it first to take what it decoded ([`Drainer::take_zones`], [`Drainer::take_payload`]).
    pub(crate) fn drain_final(&mut self) -> Result<DrainStats> {
        self.probe()?;
        self.refresh_all()
    }

    /// Reads each ring's counters and drains what was published since its last drain.
    fn refresh_all(&mut self) -> Result<DrainStats> {
        self.mem.check()?;
        let before = self.mem.bytes_read();
        let mut stats = DrainStats::default();
        for entry in &mut self.rings {
            let (n, z, p) = (entry.rows, entry.zones, entry.report.payload_bytes);
            entry.refresh(&*self.mem, self.opts.consume, &mut self.issues)?;
            entry.settle(&mut self.issues);
            stats.records += entry.rows - n;
            stats.zones += entry.zones - z;
            stats.payload_bytes += entry.report.payload_bytes - p;
        }
        stats.bus_bytes = self.mem.bytes_read() - before;
        Ok(stats)
    }

    /// Reads each ring's counters and drains what it published since its last drain (like
    /// `Drainer::drain_final`, without probing for new rings), then detaches (clears
    /// `CONSUMER` if it was set) and returns everything read, each ring's records as the rich
    /// view of its table.
    pub fn finish(mut self) -> Result<Readout> {
        self.refresh_all()?;
        if self.opts.attach_consumer {
            for t in self.tiles.iter().filter(|t| t.state == Some(true)) {
                self.mem
                    .write_u32(t.chip, t.tile, t.map.tile_block + tile::CONSUMER, 0)?;
            }
        }
        let g = self.mem.geometry();
        let consumed: Vec<u64> = self
            .rings
            .iter()
            .map(|r| r.consumed_before as u64)
            .filter(|&b| b > 0)
            .collect();
        let zones: u64 = self.rings.iter().map(|r| r.zones).sum();
        if let Some(issue) = consumed_issue(&consumed, zones, &self.mem.describe()) {
            self.issues.push(issue);
        }
        let faulted = self
            .mem
            .device_status()
            .is_some_and(|s| s & riscv_linker::devfile::STATUS_FAULTED != 0);
        let mut rings = Vec::with_capacity(self.rings.len());
        for mut r in self.rings {
            r.report.records = r.table.take_records();
            self.issues.extend(final_issues(&r.report, faulted));
            rings.push(r.report);
        }
        Ok(Readout {
            geometry: g,
            tiles: self.tiles.len() as u32,
            unused_tiles: self.tiles.iter().filter(|t| t.state.is_none()).count() as u32,
            rings,
            issues: self.issues,
            bus_bytes: self.mem.bytes_read() - self.bus_start,
        })
    }
}

impl Drainer<'_> {
    /// Zones decoded so far, all rings (handed out or not).
    pub fn zones(&self) -> u64 {
        self.rings.iter().map(|r| r.zones).sum()
    }

    /// Ends a drain that cannot go on (the device memory is gone, or there is nowhere to
    /// keep more records): reads and drains nothing more, detaches (clears `CONSUMER`) only
    /// if the memory still checks, and returns what was read, with `why` among its issues.
    /// The rings' counters are those of their last drain.
    pub(crate) fn abandon(mut self, why: Issue) -> Readout {
        let alive = self.mem.check().is_ok();
        if alive && self.opts.attach_consumer {
            for t in self.tiles.iter().filter(|t| t.state == Some(true)) {
                let _ = self
                    .mem
                    .write_u32(t.chip, t.tile, t.map.tile_block + tile::CONSUMER, 0);
            }
        }
        self.issues.push(why);
        let g = self.mem.geometry();
        let faulted = alive
            && self
                .mem
                .device_status()
                .is_some_and(|s| s & riscv_linker::devfile::STATUS_FAULTED != 0);
        let mut rings = Vec::with_capacity(self.rings.len());
        for mut r in self.rings {
            r.report.records = r.table.take_records();
            self.issues.extend(final_issues(&r.report, faulted));
            rings.push(r.report);
        }
        Readout {
            geometry: g,
            tiles: self.tiles.len() as u32,
            unused_tiles: self.tiles.iter().filter(|t| t.state.is_none()).count() as u32,
            rings,
            issues: self.issues,
            bus_bytes: self.mem.bytes_read() - self.bus_start,
        }
    }
}

/// A one-shot readout ([`super::read`]) taken one ring at a time: each ring's drained
/// recording (a snapshot of a drained run) is decoded and its live span read only when its
/// turn comes, and the ring is handed out with its records (`RingReader::next_ring`), so
/// no more than one ring's records are held. [`RingReader::finish`] gives the readout with
/// its rings released ([`RingReport::release`]) and its issues in the order
/// [`super::read`] gives them.
pub struct RingReader<'m> {
    d: Drainer<'m>,
    next: usize,
    faulted: bool,
    /// Per ring: its drained recording's issues and their place among the attach's.
    fed: Vec<(usize, Vec<Issue>)>,
    drained: Vec<Issue>,
    settled: Vec<Issue>,
    finals: Vec<Issue>,
}

impl<'m> RingReader<'m> {
    /// Attaches to `mem` (reading the tile and ring control blocks only).
    pub fn attach(mem: &'m dyn DeviceMemory, consume: bool) -> Result<RingReader<'m>> {
        let opts = DrainOptions {
            consume,
            attach_consumer: false,
        };
        let mut d = Drainer::attach_to(Mem::Borrowed(mem), opts, true)?;
        d.mem.check()?;
        // Each ring is handed out whole: decoded straight into its records, never held as
        // a table and records at once (`decoded`).
        for r in &mut d.rings {
            r.table = Decoded::Records(r.table.take_records());
        }
        let faulted = d
            .mem
            .device_status()
            .is_some_and(|s| s & riscv_linker::devfile::STATUS_FAULTED != 0);
        Ok(RingReader {
            d,
            next: 0,
            faulted,
            fed: Vec::new(),
            drained: Vec::new(),
            settled: Vec::new(),
            finals: Vec::new(),
        })
    }

    /// Rings found.
    pub(crate) fn ring_count(&self) -> usize {
        self.d.rings.len()
    }

    /// From now on, each ring keeps the bytes it decodes ([`Drainer::keep_payload`]): a
    /// reader that consumes keeps them to decode the ring again.
    pub fn keep_payload(&mut self) {
        self.d.keep_payload();
    }

    /// Moves the bytes decoded since the last call out ([`Drainer::take_payload`]).
    pub fn take_payload(&mut self) -> Vec<(RingId, Vec<u8>)> {
        self.d.take_payload()
    }

    /// The next ring, read and decoded, with its records (`None` after the last).
    pub(crate) fn next_ring(&mut self) -> Result<Option<RingReport>> {
        self.next_ring_to(None)
    }

    /// The next ring (`None` after the last), its records handed to `hand` in ring order, a
    /// piece at a time: the recorded drained payload's rows whenever `rows` or more are held
    /// ([`RingEntry::feed_drained_to`]), then the rest. The ring comes back without records;
    /// its end-of-readout checks are made as the pieces go by.
    pub(crate) fn next_ring_in_pieces(
        &mut self,
        rows: usize,
        hand: &mut dyn FnMut(Records),
    ) -> Result<Option<RingReport>> {
        self.next_ring_to(Some((rows, hand)))
    }

    /// The next ring's identity (`None` after the last).
    pub(crate) fn next_id(&self) -> Option<RingId> {
        self.d.rings.get(self.next).map(|e| e.report.id)
    }

    /// Reads from ring `index` on (the rings before it are not read: a reader that looks
    /// at some rings only, never finished).
    pub(crate) fn skip_to(&mut self, index: usize) {
        self.next = self.next.max(index);
    }

    fn next_ring_to(
        &mut self,
        mut out: Option<(usize, &mut dyn FnMut(Records))>,
    ) -> Result<Option<RingReport>> {
        let Some(entry) = self.d.rings.get_mut(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let mem = &*self.d.mem;
        let (mut times, mut handed) = (LaunchTimes::default(), Released::default());
        if let Some(slot) = entry.deferred.take() {
            let mut issues = Vec::new();
            let rows = out.as_ref().map(|(n, _)| *n);
            let mut checked = |r: Records| {
                times.push(&r);
                handed.records += r.len();
                handed.zones += r.zones();
                if let Some((_, hand)) = &mut out {
                    hand(r);
                }
            };
            let to = rows.map(|n| (n, &mut checked as &mut dyn FnMut(Records)));
            entry.feed_drained_to(mem, &mut issues, to);
            self.fed.push((slot, issues));
        }
        entry.drain(mem, self.d.opts.consume, &mut self.drained)?;
        entry.stale = false;
        entry.settle(&mut self.settled);
        let mut report = entry.report.release();
        report.released = None;
        report.records = entry.table.take_records();
        times.push(&report.records);
        self.finals
            .extend(final_issues_after(&report, times, self.faulted));
        entry.report = report.release();
        if let Some((_, hand)) = out {
            // The ring's counts are those of every piece.
            let rest = entry.report.released.unwrap_or_default();
            let all = Released {
                records: handed.records + rest.records,
                zones: handed.zones + rest.zones,
            };
            entry.report.released = Some(all);
            hand(std::mem::take(&mut report.records));
            report = entry.report.clone();
        }
        Ok(Some(report))
    }

    /// The readout (every ring read first), its rings without records.
    pub fn finish(mut self) -> Result<Readout> {
        while self.next_ring()?.is_some() {}
        let d = self.d;
        let mut issues = Vec::with_capacity(d.issues.len());
        let mut fed = self.fed.into_iter().peekable();
        for (i, issue) in d.issues.into_iter().enumerate() {
            while let Some((_, f)) = fed.next_if(|(slot, _)| *slot <= i) {
                issues.extend(f);
            }
            issues.push(issue);
        }
        issues.extend(fed.flat_map(|(_, f)| f));
        issues.extend(self.drained);
        issues.extend(self.settled);
        let consumed: Vec<u64> = d
            .rings
            .iter()
            .map(|r| r.consumed_before as u64)
            .filter(|&b| b > 0)
            .collect();
        let zones: u64 = d.rings.iter().map(|r| r.zones).sum();
        issues.extend(consumed_issue(&consumed, zones, &d.mem.describe()));
        issues.extend(self.finals);
        Ok(Readout {
            geometry: d.mem.geometry(),
            tiles: d.tiles.len() as u32,
            unused_tiles: d.tiles.iter().filter(|t| t.state.is_none()).count() as u32,
            rings: d.rings.into_iter().map(|r| r.report).collect(),
            issues,
            bus_bytes: d.mem.bytes_read() - d.bus_start,
        })
    }
}

/// A heartbeat unlikely to equal the last one of an earlier consumer of the same device (a
/// producer that gave up on that one waits again only once the value changes).
fn first_heartbeat() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (std::process::id().rotate_left(16) ^ nanos).max(1)
}

/// Rings an earlier reader consumed before this readout attached: what it took is no longer
/// in device memory. A warning with the byte count; an error when nothing is left at all
/// (every output would be empty).
fn consumed_issue(consumed: &[u64], zones: u64, memory: &str) -> Option<Issue> {
    let bytes: u64 = consumed.iter().sum();
    if bytes == 0 {
        return None;
    }
    let what = format!(
        "{} ring(s) of {memory} were drained by an earlier reader before this readout: {bytes} byte(s) of records \
         are no longer in device memory (that reader's outputs hold them; a snapshot ttprof run or the demo saved, \
         device.snap, carries what they drained)",
        consumed.len()
    );
    Some(if zones == 0 {
        Issue::error(None, format!("nothing left to read: {what}")).with_count(bytes)
    } else {
        Issue::warning(None, what).with_count(bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::consumed_issue;

    #[test]
    fn records_an_earlier_reader_consumed_are_counted_and_an_empty_readout_is_an_error() {
        assert!(consumed_issue(&[], 0, "image x").is_none());
        let w = consumed_issue(&[100, 20], 5, "image x").unwrap();
        assert!(
            !w.is_error() && w.count == 120 && w.to_string().contains("2 ring(s) of image x"),
            "{w}"
        );
        let e = consumed_issue(&[100], 0, "image x").unwrap();
        assert!(
            e.is_error()
                && e.to_string().contains("nothing left to read")
                && e.to_string().contains("device.snap"),
            "{e}"
        );
    }
}
