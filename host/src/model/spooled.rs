//! The model of a run whose rings were drained into a spool while it ran (`ttprof run`,
//! `ttprof capture --all-outputs`, `ttprof read --consume`): the same two passes as
//! [`crate::pass`], each over the spool instead of device memory (a consumed ring cannot be
//! read twice; its payload stream, kept on disk, decodes again to the same records).
//!
//! [`profile`] is the first pass: each ring's payload read from the spool, decoded, resolved
//! and reduced to its facts (`RingPass`), its records dropped before the next ring; the
//! readout's rings get their counts ([`RingReport::release`]). [`SpoolRings`] is the second:
//! the outputs ([`crate::sink::drive_rings`]) take each ring decoded again from the spool.
//! Memory: one ring's records (its stream read a mebibyte at a time), whatever the run's
//! length.

use crate::capture::payload::{decode_spooled_in_pieces, decode_spooled_records};
use crate::capture::spool::Spool;
use crate::decode::Records;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::pass::{in_pieces, RingPass};
use crate::profile::{Loaded, Profile};
use crate::readout::{checks, Readout, Released, RingReader, RingReport};
use crate::resolve::{Resolution, Resolver};
use crate::ring_pieces::{hand_on, Long, LongZones, LONG_CAP, LONG_RING, PIECE_ROWS, WINDOW};
use crate::ring_source::RingSource;
use crate::timebase::Timebase;
use std::borrow::Cow;
use std::path::Path;

/// The first pass (see the module docs): `readout` is the drainer's (its rings' records may
/// be empty: they are in `spool`). Returns the model, its rings released with their
/// counts, the issues of decoding the spooled streams (the drainer found the same while it
/// decoded them live), and the records' launch-time issues (which a drainer finds on the
/// records it holds at its end: none here).
pub fn profile(
    mut readout: Readout,
    spool: &mut Spool,
    oplog: Option<OpLog>,
    timebase: Timebase,
) -> Result<Spooled> {
    let arch = readout.geometry.arch;
    let mut resolver = oplog.as_ref().map(Resolver::new);
    let mut sites = Resolution::default();
    let mut passes = Vec::with_capacity(readout.rings.len());
    let (mut decode, mut launch) = (Vec::new(), Vec::new());
    for (index, slot) in readout.rings.iter_mut().enumerate() {
        // Each ring a piece at a time (a long ring is never held whole, issue 41).
        let id = slot.id;
        let (mut times, mut counts) = (checks::LaunchTimes::default(), Released::default());
        let read = |add: &mut dyn FnMut(Records)| {
            decode_spooled_in_pieces(spool, id, PIECE_ROWS, &mut |records| {
                times.push(&records);
                counts.records += records.len();
                counts.zones += records.zones();
                add(records);
            })
        };
        let (pass, issue) = in_pieces(index, id, arch, &timebase, &mut resolver, &mut sites, read)?;
        decode.extend(issue);
        launch.extend(times.finish(Some(id.location())));
        passes.push(pass);
        let mut released = slot.release();
        released.released = Some(counts);
        *slot = released;
    }
    drop(resolver);
    Ok(Spooled {
        profile: Profile::from_passes(readout, sites, oplog, timebase, passes),
        decode,
        launch,
    })
}

/// What [`profile`] gives.
pub struct Spooled {
    /// The model, its rings' records released.
    pub profile: Profile,
    /// Problems decoding the spooled payload streams.
    pub decode: Vec<Issue>,
    /// Records out of their launch's time order (`checks::launch_times`).
    pub launch: Vec<Issue>,
}

/// [`crate::pass::open`] for a reader that consumes (`ttprof read --consume`): the first
/// reading frees each ring as it reads it, so its payload goes to a spool in `spool_dir`
/// (nothing of it held) and the outputs take each ring from there ([`SpoolRings`]). The
/// files read are noted in `inputs`.
pub fn open_consuming(
    device: &Path,
    oplog: Option<OpLog>,
    spool_dir: &Path,
    inputs: &Inputs,
) -> Result<(Loaded, Spool)> {
    let memory = crate::devmem::open(device, true, inputs)?;
    let g = memory.geometry();
    let (timebase, clock_note) = crate::clock::timebase_for(device, g.arch, g.chips, inputs);
    let mut spool = Spool::create(spool_dir)?;
    let mut reader = RingReader::attach(memory.as_ref(), true)?;
    reader.keep_payload();
    let mut resolver = oplog.as_ref().map(Resolver::new);
    let mut sites = Resolution::default();
    let mut passes = Vec::with_capacity(reader.ring_count());
    let mut spool_failed = None;
    while let Some(ring) = reader.next_ring()? {
        match &mut resolver {
            Some(r) => r.resolve_ring(&ring, g.arch, &mut sites),
            None => sites.add_unresolved(&ring),
        }
        passes.push(RingPass::of_ring(passes.len(), &ring, &sites, &timebase));
        // A spool that cannot write keeps the bytes in memory: the consumed records stay.
        if let Err(e) = spool.append(&reader.take_payload()) {
            spool_failed.get_or_insert(e);
        }
    }
    let mut readout = reader.finish()?;
    if let Some(e) = spool_failed {
        readout.issues.push(Issue::warning(
            None,
            format!("{e}: the consumed records were kept in memory instead"),
        ));
    }
    drop(resolver);
    let profile = Profile::from_passes(readout, sites, oplog, timebase, passes);
    Ok((
        Loaded {
            profile,
            memory,
            clock_note,
        },
        spool,
    ))
}

/// `slot` with the records its spooled payload decodes to (a drainer that spools hands its
/// records out with the payload, so `slot` holds none), decoded straight into the records.
fn decoded(slot: &RingReport, spool: &mut Spool, issues: &mut Vec<Issue>) -> Result<RingReport> {
    let (records, issue) = decode_spooled_records(spool, slot.id)?;
    issues.extend(issue);
    let mut ring = slot.clone();
    ring.released = None;
    ring.records = records;
    Ok(ring)
}

/// The second pass: each ring decoded again from the spool the first pass read.
pub struct SpoolRings<'s> {
    spool: &'s mut Spool,
    /// The rings as the first pass left them (counts, no records).
    rings: Vec<RingReport>,
}

impl<'s> SpoolRings<'s> {
    /// The rings of `profile` (built by [`profile`] from `spool`).
    pub fn new(profile: &Profile, spool: &'s mut Spool) -> SpoolRings<'s> {
        SpoolRings {
            spool,
            rings: profile.readout.rings.clone(),
        }
    }
}

impl SpoolRings<'_> {
    /// Ring `index`'s records decoded from the spool a piece at a time, each handed to
    /// `piece` until one fails; checked against the count the first pass found.
    fn in_pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        let slot = self
            .rings
            .get(index)
            .ok_or_else(|| Error::Internal(format!("no ring {index} in the spool")))?;
        let (_, rows) = hand_on(piece, |add| {
            decode_spooled_in_pieces(self.spool, slot.id, PIECE_ROWS, add)
        })?;
        if rows != slot.record_count() {
            return Err(Error::Reread {
                what: "the spool",
                ring: index,
            });
        }
        Ok(())
    }
}

impl RingSource for SpoolRings<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        let slot = self
            .rings
            .get(index)
            .ok_or_else(|| Error::Internal(format!("no ring {index} in the spool")))?;
        let mut ignored = Vec::new();
        let ring = decoded(slot, self.spool, &mut ignored)?;
        if ring.records.len() != slot.record_count() {
            return Err(Error::Reread {
                what: "the spool",
                ring: index,
            });
        }
        Ok(Cow::Owned(ring))
    }

    /// A ring of [`LONG_RING`] records or more: its long zones, from one more decoding of
    /// its stream (past [`LONG_CAP`] of them, a ring whose records go back in time, it is
    /// given whole).
    fn long_zones(&mut self, index: usize) -> Result<Option<Long>> {
        if self
            .rings
            .get(index)
            .is_none_or(|r| r.record_count() < LONG_RING)
        {
            return Ok(None);
        }
        let mut first = LongZones::new(WINDOW, LONG_CAP);
        self.in_pieces(index, &mut |r| {
            first.push(r);
            Ok(())
        })?;
        Ok(first.finish().ok())
    }

    fn pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        self.in_pieces(index, piece)
    }
}

#[cfg(test)]
mod tests;
