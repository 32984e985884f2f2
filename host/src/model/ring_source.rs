//! Where a profile's rings' records come from when the outputs are fed
//! ([`crate::sink::drive_rings`]): the profile itself ([`Held`]), or a second pass over the
//! input when the profile was built from passes that released them (the device,
//! [`crate::pass::DeviceRings`]; a spool, [`crate::spooled::SpoolRings`]; a device log, `CsvRings`).

use crate::decode::Records;
use crate::error::Result;
use crate::profile::Profile;
use crate::readout::RingReport;
use crate::ring_pieces::Long;
use std::borrow::Cow;

/// Where [`crate::sink::drive_rings`] takes each ring's records from: the profile itself
/// ([`Held`]), or a second pass over the input when the profile was built from passes and
/// released them (`Profile::from_passes`). Asked once per ring, in readout order.
pub trait RingSource {
    /// Ring `index` of the profile, with its records.
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>>;

    /// Ring `index`'s long zones ([`crate::ring_pieces::LongZones`], found in the source's
    /// first pass), when the source can give the ring in pieces ([`RingSource::pieces`]);
    /// `None` (the default): it gives the ring whole.
    fn long_zones(&mut self, _index: usize) -> Result<Option<Long>> {
        Ok(None)
    }

    /// Ring `index`'s records a piece at a time, in ring order, each handed to `piece` (asked
    /// only of a ring whose [`RingSource::long_zones`] the source gave, in place of
    /// [`RingSource::ring`]).
    fn pieces(
        &mut self,
        index: usize,
        _piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        Err(crate::error::Error::Internal(format!(
            "ring {index} was asked for in pieces of a source that gives rings whole"
        )))
    }
}

/// The rings a profile holds.
pub struct Held<'p>(pub &'p Profile);

impl RingSource for Held<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        Ok(Cow::Borrowed(&self.0.readout.rings[index]))
    }
}

/// The rings a profile holds, each given in pieces of `piece` records, ordered with a window
/// of `window` (tests that a sink taking pieces writes what it writes of whole rings).
#[cfg(test)]
pub(crate) struct Cut<'p> {
    pub profile: &'p Profile,
    pub window: usize,
    pub piece: usize,
}

#[cfg(test)]
impl RingSource for Cut<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        Ok(Cow::Borrowed(&self.profile.readout.rings[index]))
    }

    fn long_zones(&mut self, index: usize) -> Result<Option<Long>> {
        let mut first = crate::ring_pieces::LongZones::new(self.window, usize::MAX);
        first.push(&self.profile.readout.rings[index].records);
        Ok(first.finish().ok())
    }

    fn pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        let r = &self.profile.readout.rings[index].records;
        for from in (0..r.len()).step_by(self.piece.max(1)) {
            let to = (from + self.piece.max(1)).min(r.len());
            piece(&crate::ring_pieces::slice(r, from, to))?;
        }
        Ok(())
    }
}
