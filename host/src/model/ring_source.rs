//! Where a profile's rings' records come from when the outputs are fed
//! ([`crate::sink::drive_rings`]): the profile itself ([`Held`]), or a second pass over the
//! input when the profile was built from passes that released them (the device,
//! [`crate::pass::DeviceRings`]; a spool, [`crate::spooled::SpoolRings`]; a device log, `CsvRings`).

use crate::error::Result;
use crate::profile::Profile;
use crate::readout::RingReport;
use std::borrow::Cow;

/// Where [`crate::sink::drive_rings`] takes each ring's records from: the profile itself
/// ([`Held`]), or a second pass over the input when the profile was built from passes and
/// released them (`Profile::from_passes`). Asked once per ring, in readout order.
pub trait RingSource {
    /// Ring `index` of the profile, with its records.
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>>;
}

/// The rings a profile holds.
pub struct Held<'p>(pub &'p Profile);

impl RingSource for Held<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        Ok(Cow::Borrowed(&self.0.readout.rings[index]))
    }
}
