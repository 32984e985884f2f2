//! Draining rings repeatedly, with per-ring decoder state kept across drains.

use super::control::{self, RingControl, DRAIN_FIRST, DRAIN_WORDS, RING_WORDS, TILE_WORDS};
use super::span::{Span, SpanDecoder, SpanStats};
use super::{Readout, RingId, RingReport};
use crate::decode::{RecordKind, Records};
use crate::devmem::DeviceMemory;
use crate::error::Result;
use crate::issue::Issue;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{NocCoord, Risc};

/// How a [`Drainer`] treats the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainOptions {
    /// Write `TAIL` after each drain so the producer can reuse the space.
    pub consume: bool,
    /// Set each tile's `CONSUMER` word while attached, so Block-policy producers wait for
    /// this consumer instead of dropping (cleared again by [`Drainer::finish`]).
    pub attach_consumer: bool,
}

/// What one drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainStats {
    pub records: u64,
    pub payload_bytes: u64,
    pub bus_bytes: u64,
}

struct TileEntry {
    chip: u32,
    tile: NocCoord,
    /// Whether the tile block was valid (else re-checked at every drain while unused).
    state: Option<bool>,
}

struct RingEntry {
    report: RingReport,
    span: SpanDecoder,
    /// Consumed position (our copy of `TAIL`).
    tail: u32,
    /// Control words read by `attach`, used by the first drain instead of a second read.
    fresh: bool,
    /// Position of the tile in device order (rings are kept in chip, tile, RISC order).
    tile_index: usize,
}

/// Drains every ring of a device, repeatedly.
pub struct Drainer<'m> {
    mem: &'m dyn DeviceMemory,
    opts: DrainOptions,
    tiles: Vec<TileEntry>,
    rings: Vec<RingEntry>,
    /// Rings of valid tiles whose blocks were not initialised yet: probed again each drain.
    pending: Vec<(RingId, usize)>,
    issues: Vec<Issue>,
    bus_start: u64,
    /// Set by `attach`; lets `drain_after_attach` skip repeating its probes.
    just_attached: bool,
}

impl<'m> Drainer<'m> {
    /// Reads and validates every tile and ring control block.
    pub fn attach(mem: &'m dyn DeviceMemory, opts: DrainOptions) -> Result<Drainer<'m>> {
        let g = mem.geometry();
        let mut tiles = Vec::new();
        for chip in 0..g.chips {
            for tile in mem.tiles(chip) {
                tiles.push(TileEntry { chip, tile, state: None });
            }
        }
        let mut d = Drainer { mem, opts, tiles, rings: Vec::new(), pending: Vec::new(), issues: Vec::new(), bus_start: mem.bytes_read(), just_attached: true };
        d.discover()?;
        Ok(d)
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
            let mut w = [0u32; TILE_WORDS];
            w[0] = self.mem.read_u32(chip, tile, profiler::TILE_BLOCK + profiler::tile::MAGIC)?;
            if w[0] == 0 {
                continue;
            }
            self.mem.read_words(chip, tile, profiler::TILE_BLOCK + 4, &mut w[1..])?;
            match control::check_tile(&w, &g, control::location(chip, tile, None)) {
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
                self.mem.write_u32(chip, tile, profiler::TILE_BLOCK + tile::CONSUMER, 1)?;
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
        let mut w = [0u32; RING_WORDS];
        w[0] = self.mem.read_u32(id.chip, id.tile, profiler::ring_block(id.risc) + ring::MAGIC)?;
        if w[0] == 0 {
            return Ok(false);
        }
        self.mem.read_words(id.chip, id.tile, profiler::ring_block(id.risc) + 4, &mut w[1..])?;
        let c = RingControl::from_words(&w);
        if let Err(what) = control::check_ring(&c, id.risc) {
            self.issues.push(Issue::error(Some(id.location()), what));
            return Ok(true);
        }
        let mut report = RingReport::new(id);
        report.control = c;
        report.bus_bytes = self.mem.bytes_read() - before;
        self.rings.push(RingEntry { report, span: SpanDecoder::default(), tail: c.tail, fresh: true, tile_index });
        // Keep rings in device order (chip, tile, RISC) whenever they appear.
        self.rings.sort_by_key(|r| (r.tile_index, r.report.id.risc));
        Ok(true)
    }

    /// Reads every ring's new records once; with `consume`, frees them.
    pub fn drain(&mut self) -> Result<DrainStats> {
        self.just_attached = false;
        self.drain_inner()
    }

    /// `attach` immediately followed by one drain (nothing can have launched in between, so
    /// the probes `attach` just made are not repeated).
    pub(crate) fn drain_after_attach(&mut self) -> Result<DrainStats> {
        self.drain_inner()
    }

    fn drain_inner(&mut self) -> Result<DrainStats> {
        let before = self.mem.bytes_read();
        // Tiles and rings unused so far may have started since: a kernel can launch between
        // `attach` and any drain, the first one included.
        if !std::mem::take(&mut self.just_attached) {
            if self.tiles.iter().any(|t| t.state.is_none()) {
                self.discover()?;
            }
            for (id, tile_index) in std::mem::take(&mut self.pending) {
                if !self.add_ring(id, tile_index)? {
                    self.pending.push((id, tile_index));
                }
            }
        }
        let mut stats = DrainStats::default();
        for entry in &mut self.rings {
            let n = entry.report.records.len();
            let p = entry.report.payload_bytes;
            drain_ring(self.mem, self.opts, entry, &mut self.issues)?;
            stats.records += (entry.report.records.len() - n) as u64;
            stats.payload_bytes += entry.report.payload_bytes - p;
        }
        stats.bus_bytes = self.mem.bytes_read() - before;
        Ok(stats)
    }

    /// Moves the records decoded so far out of the drainer (for streaming consumers);
    /// counts and decoder state stay.
    pub fn take_records(&mut self) -> Vec<(RingId, Records)> {
        self.rings
            .iter_mut()
            .filter(|r| !r.report.records.is_empty())
            .map(|r| (r.report.id, std::mem::take(&mut r.report.records)))
            .collect()
    }

    /// Issues found so far.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// Detaches (clears `CONSUMER` if it was set) and returns everything read.
    pub fn finish(mut self) -> Result<Readout> {
        if self.opts.attach_consumer {
            for t in self.tiles.iter().filter(|t| t.state == Some(true)) {
                self.mem.write_u32(t.chip, t.tile, profiler::TILE_BLOCK + tile::CONSUMER, 0)?;
            }
        }
        let g = self.mem.geometry();
        for r in &self.rings {
            self.issues.extend(final_issues(&r.report));
        }
        Ok(Readout {
            geometry: g,
            tiles: self.tiles.len() as u32,
            unused_tiles: self.tiles.iter().filter(|t| t.state.is_none()).count() as u32,
            rings: self.rings.into_iter().map(|r| r.report).collect(),
            issues: self.issues,
            bus_bytes: self.mem.bytes_read() - self.bus_start,
        })
    }
}

fn drain_ring(mem: &dyn DeviceMemory, opts: DrainOptions, e: &mut RingEntry, issues: &mut Vec<Issue>) -> Result<()> {
    let id = e.report.id;
    let before = mem.bytes_read();
    if !std::mem::take(&mut e.fresh) {
        let mut w = [0u32; DRAIN_WORDS];
        mem.read_words(id.chip, id.tile, profiler::ring_block(id.risc) + DRAIN_FIRST, &mut w)?;
        e.report.control.set_live(&w);
    }
    let mut c = e.report.control;
    c.tail = e.tail;
    e.report.dropped = c.dropped;
    e.report.stalls = c.stalls;
    e.report.state = c.state;
    if e.report.corrupt.is_none() {
        if let Err(what) = control::check_positions(&c) {
            issues.push(Issue::error(Some(id.location()), what));
            e.report.corrupt = Some("control words".into());
        }
    }
    let head = c.head;
    if e.report.corrupt.is_some() {
        // Skip what the producer wrote since: it cannot be decoded without the lost state.
        let skipped = head.wrapping_sub(e.tail);
        if skipped <= c.capacity {
            e.report.skipped_bytes += skipped as u64;
            e.tail = head;
        }
    } else if head != e.tail {
        let n = e.report.records.len();
        let mut stats = SpanStats::default();
        let base = profiler::ring_data(id.risc).start;
        let span = Span { tail: e.tail, head, capacity: c.capacity };
        let read = |off: u32, w: &mut [u32]| mem.read_words(id.chip, id.tile, base + off, w);
        let result = e.span.decode(span, read, &mut e.report.records, &mut stats);
        e.report.payload_bytes += stats.payload_bytes;
        e.report.skipped_bytes += stats.skipped_bytes;
        e.report.losses_in_band += loss_count(&e.report.records, n);
        if let Err(err) = result {
            let consumed = stats.payload_bytes + stats.skipped_bytes;
            e.report.skipped_bytes += head.wrapping_sub(e.tail) as u64 - consumed;
            issues.push(
                Issue::error(Some(id.location()), format!("{err}; the rest of this ring is skipped"))
                    .with_count(head.wrapping_sub(e.tail) as u64 - consumed),
            );
            e.report.corrupt = Some(err.to_string());
        }
        e.tail = head;
    }
    if opts.consume && e.report.control.tail != e.tail {
        mem.write_u32(id.chip, id.tile, profiler::ring_word(id.risc, ring::TAIL), e.tail)?;
        e.report.control.tail = e.tail;
    }
    e.report.bus_bytes += mem.bytes_read() - before;
    Ok(())
}

fn loss_count(r: &Records, from: usize) -> u64 {
    (from..r.len()).filter(|&i| r.kind[i] == RecordKind::Loss).map(|i| r.count[i] as u64).sum()
}

/// Warnings about a ring's final state.
fn final_issues(r: &RingReport) -> Vec<Issue> {
    let at = Some(r.id.location());
    let mut out = super::checks::launch_times(&r.records, at);
    if r.dropped > 0 {
        out.push(
            Issue::warning(
                at,
                format!(
                    "{} record(s) dropped because the ring was full (Drop policy, or Block without a consumer); \
                     {} reported in-band by Loss records, the rest are pending until the producer's next record",
                    r.dropped, r.losses_in_band
                ),
            )
            .with_count(r.dropped as u64),
        );
    }
    if r.state & (1 << 2) != 0 {
        out.push(Issue::error(at, "the kernel panicked (STATE bit 2); its zones up to the panic were read"));
    } else if r.state & ring::STATE_RUNNING != 0 {
        out.push(Issue::warning(at, "a kernel is still running: records after the last published HEAD are not read yet"));
    }
    out
}
