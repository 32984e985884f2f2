//! What the model keeps of a ring once its records are gone: one pass over the ring's
//! records, record by record in ring order, gathers everything [`crate::profile::Profile`]
//! derives from the whole run (the distinct sites in the order they first appear, the
//! records' host time span per run, the firmware wrapper zones of each op), so a run too
//! large to hold can be modelled from a first pass and its rings handed to the outputs in a
//! second ([`crate::sink::drive_rings`]).
//!
//! A pass holds per (run, site) and per run, never per record. Passes are combined in
//! readout order (`crate::profile::Profile::from_passes`), which gives exactly what one
//! pass over a readout holding every record gives (labels in the same order, the same
//! spans, ties kept by the earlier ring).
//!
//! What only the reading of a ring needs (the run whose sites are being read, the wrapper
//! kind of each of its sites) is a `Reading`, held for the ring being read, not by every
//! ring's pass: a device log's rows are read a row at a time, and its 300,000 rings each
//! held 72 bytes of it to the end (issue 41). A reading that leaves a ring settles into its
//! pass (`RingPass::settle`); the ring can be read again later with a new one, which goes
//! on with the run the last one left in.

use crate::decode::{RecordKind, Records};
use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::model::ring_runs::RingRuns;
use crate::oplog::OpLog;
use crate::ops::{RingWrappers, WrapperKinds};
use crate::profile::{Loaded, Profile};
use crate::readout::{RingId, RingReader, RingReport};
use crate::resolve::{has_site, Resolution, Resolver};
use crate::ring_pieces::{hand_on, Long, LongZones, LONG_CAP, LONG_RING, PIECE_ROWS, WINDOW};
use crate::ring_source::RingSource;
use crate::timebase::Timebase;
use site_order::SiteOrder;
use std::borrow::Cow;
use std::path::Path;

mod site_order;

/// What reading one ring holds beside its [`RingPass`] (see the module docs): settled into
/// the pass when the reading leaves the ring, and only then are the pass's sites whole.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// The run whose sites are being read.
    sites: site_order::Current,
    /// The wrapper kind of each site of the run last seen.
    kinds: WrapperKinds,
}

/// One ring's facts (see the module docs).
#[derive(Debug)]
pub(crate) struct RingPass {
    /// Which ring.
    pub id: RingId,
    /// Whether the timebase knows the ring's chip (else only wrappers and counts are kept).
    pub placed: bool,
    /// Records of every kind seen.
    pub(crate) records: u64,
    /// The runs of the records, each once in first-seen order (`NO_RUN` too: its
    /// records have sites and a span), with the span of each run's site-carrying records
    /// placed on the host timeline (the ring's tile's clock: later cycles are later host
    /// times) and of its wrapper zones.
    pub(crate) runs: RingRuns,
    /// Distinct (run, site) of the site-carrying records, in first-seen order.
    sites: SiteOrder,
    /// Which of the ring's zones are its wrapper zones.
    pub(crate) wrappers: RingWrappers,
}

impl RingPass {
    /// A pass over ring `id`, nothing seen yet.
    pub(crate) fn new(id: RingId, timebase: &Timebase) -> RingPass {
        RingPass {
            id,
            placed: timebase.host_ns(id.chip, id.tile, 0).is_some(),
            records: 0,
            runs: RingRuns::default(),
            sites: SiteOrder::default(),
            wrappers: RingWrappers::default(),
        }
    }

    /// The pass over a ring held whole: ring `index` of the readout `sites` resolves.
    pub(crate) fn of_ring(
        index: usize,
        ring: &RingReport,
        sites: &Resolution,
        timebase: &Timebase,
    ) -> RingPass {
        let mut p = RingPass::new(ring.id, timebase);
        let mut reading = Reading::default();
        p.add_records(&mut reading, &ring.records, timebase, |run, site| {
            sites.site(index, run, site).map(|m| m.name.as_str())
        });
        p.settle(reading);
        p
    }

    /// Every record of `r`, in order, read with `reading` (`name` gives a site's name, asked
    /// once per (run, site)).
    pub(crate) fn add_records<'n>(
        &mut self,
        reading: &mut Reading,
        r: &Records,
        timebase: &Timebase,
        name: impl Fn(u32, u16) -> Option<&'n str>,
    ) {
        let rows = r.runs().zip(r.starts().zip(r.ends()));
        for (i, (run, times)) in rows.enumerate() {
            let site = r.site[i];
            self.record(reading, r.kind[i], run, site, times, timebase, || {
                name(run, site)
            });
        }
    }

    /// The next record of the ring, read with `reading`, this ring's since it was made or
    /// last settled (`name` gives the record's site's name, asked at most once per (run,
    /// site) while the ring's runs come one after another).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record<'n>(
        &mut self,
        reading: &mut Reading,
        kind: RecordKind,
        run: u32,
        site: u16,
        (start, end): (u64, u64),
        timebase: &Timebase,
        name: impl FnOnce() -> Option<&'n str>,
    ) {
        self.records += 1;
        let i = self.runs.index_of(run);
        let facts = self.runs.at(i);
        let kinds = &mut reading.kinds;
        self.wrappers.add(
            kinds,
            facts,
            self.id,
            kind,
            site,
            (start, end),
            timebase,
            name,
        );
        if !self.placed || !has_site(kind) {
            return;
        }
        let seen = facts.seen_sites();
        self.sites.add(&mut reading.sites, i as u32, seen, site);
        // Point records sit at their end time, zones span start to end.
        let id = self.id;
        let first = if kind.is_zone() { start } else { end };
        let a = timebase.host_ns(id.chip, id.tile, first);
        let b = timebase.host_ns(id.chip, id.tile, end);
        if let (Some(a), Some(b)) = (a, b) {
            if a.is_finite() && b.is_finite() {
                facts.widen_span(first, end);
            }
        }
    }

    /// The end of `reading` on this ring: what it holds of the ring's sites joins the
    /// pass's, and the rest is dropped.
    pub(crate) fn settle(&mut self, mut reading: Reading) {
        self.sites.close(&mut reading.sites);
    }

    /// Distinct (run, site) of the site-carrying records, in first-seen order (of the
    /// readings settled).
    pub(crate) fn sites(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        let order = self.sites.iter();
        order.map(|(i, site)| (self.runs.id(i as usize), site))
    }
}

/// [`crate::profile::Profile::open`] in two passes: the model from a first reading of
/// `device`, ring by ring (each ring's records dropped once its facts are taken), and no
/// record held; the outputs take the rings from a second reading ([`DeviceRings`] over
/// [`Loaded::memory`]). Device memory is read without consuming (a consumed ring cannot
/// be read twice). The files read are noted in `inputs` (the command's input guard).
pub fn open(device: &Path, oplog: Option<OpLog>, inputs: &Inputs) -> Result<Loaded> {
    let memory = crate::devmem::open(device, false, inputs)?;
    let g = memory.geometry();
    let (timebase, clock_note) = crate::clock::timebase_for(device, g.arch, g.chips, inputs);
    let mut reader = RingReader::attach(memory.as_ref(), false)?;
    let mut resolver = oplog.as_ref().map(Resolver::new);
    let mut sites = Resolution::default();
    let mut passes = Vec::with_capacity(reader.ring_count());
    // Each ring a piece at a time (a long ring is never held whole, issue 41).
    while let Some(id) = reader.next_id() {
        let index = passes.len();
        let (pass, _) = in_pieces(
            index,
            id,
            g.arch,
            &timebase,
            &mut resolver,
            &mut sites,
            |add| reader.next_ring_in_pieces(PIECE_ROWS, add),
        )?;
        passes.push(pass);
    }
    let readout = reader.finish()?;
    drop(resolver);
    let profile = Profile::from_passes(readout, sites, oplog, timebase, passes);
    Ok(Loaded {
        profile,
        memory,
        clock_note,
    })
}

/// The first pass over ring `index` (`id`) of a readout: `read` hands its records a piece at
/// a time to the function it is given, which names them through `resolver` (without one,
/// leaves them unresolved) into `sites` and takes them into the ring's [`RingPass`]. Returns
/// the pass and what `read` returned.
pub(crate) fn in_pieces<T>(
    index: usize,
    id: RingId,
    arch: riscv_linker::Arch,
    timebase: &Timebase,
    resolver: &mut Option<Resolver>,
    sites: &mut Resolution,
    read: impl FnOnce(&mut dyn FnMut(Records)) -> Result<T>,
) -> Result<(RingPass, T)> {
    let (mut pass, mut reading) = (RingPass::new(id, timebase), Reading::default());
    let mut ring = match resolver {
        Some(r) => Some(r.begin_ring(id, arch, sites)),
        None => {
            sites.begin_unresolved();
            None
        }
    };
    let read = read(&mut |records| {
        match (&mut *resolver, &mut ring) {
            (Some(r), Some(ring)) => r.add_records(ring, &records, sites),
            _ => sites.add_unresolved_records(&records),
        }
        pass.add_records(&mut reading, &records, timebase, |run, site| {
            sites.site(index, run, site).map(|m| m.name.as_str())
        });
    })?;
    pass.settle(reading);
    if let (Some(r), Some(ring)) = (resolver, ring) {
        r.end_ring(ring, sites);
    }
    Ok((pass, read))
}

/// The second reading of a profile [`open`] built: each ring read again when the outputs
/// ask for it, and checked against the first reading. A ring of [`LONG_RING`] records or
/// more is given in pieces to outputs that take them ([`RingSource::long_zones`]): it is
/// read once more first, in pieces, for its long zones (by a second reader, made for the
/// first such ring).
pub struct DeviceRings<'m> {
    memory: &'m dyn DeviceMemory,
    reader: RingReader<'m>,
    scout: Option<RingReader<'m>>,
    /// Records per ring the first reading found.
    expected: Vec<usize>,
}

impl<'m> DeviceRings<'m> {
    /// The rings of `memory`, which `profile` was read from.
    pub fn new(profile: &Profile, memory: &'m dyn DeviceMemory) -> Result<DeviceRings<'m>> {
        Ok(DeviceRings {
            memory,
            reader: RingReader::attach(memory, false)?,
            scout: None,
            expected: profile
                .readout
                .rings
                .iter()
                .map(RingReport::record_count)
                .collect(),
        })
    }

    fn changed(index: usize) -> Error {
        Error::Reread {
            what: "device memory",
            ring: index,
        }
    }
}

impl RingSource for DeviceRings<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        let ring = self.reader.next_ring()?;
        match ring {
            Some(r) if self.expected.get(index) == Some(&r.records.len()) => Ok(Cow::Owned(r)),
            _ => Err(DeviceRings::changed(index)),
        }
    }

    fn long_zones(&mut self, index: usize) -> Result<Option<Long>> {
        let Some(&expected) = self.expected.get(index).filter(|&&n| n >= LONG_RING) else {
            return Ok(None);
        };
        let scout = match &mut self.scout {
            Some(s) => s,
            None => self.scout.insert(RingReader::attach(self.memory, false)?),
        };
        scout.skip_to(index);
        let (mut first, mut rows) = (LongZones::new(WINDOW, LONG_CAP), 0);
        let ring = scout.next_ring_in_pieces(PIECE_ROWS, &mut |r| {
            rows += r.len();
            first.push(&r);
        })?;
        if ring.is_none() || rows != expected {
            return Err(DeviceRings::changed(index));
        }
        // Past the cap (a ring whose records go back in time): given whole.
        Ok(first.finish().ok())
    }

    fn pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        let (ring, rows) = hand_on(piece, |add| {
            self.reader.next_ring_in_pieces(PIECE_ROWS, add)
        })?;
        match ring {
            Some(_) if self.expected.get(index) == Some(&rows) => Ok(()),
            _ => Err(DeviceRings::changed(index)),
        }
    }
}

#[cfg(test)]
mod tests;
