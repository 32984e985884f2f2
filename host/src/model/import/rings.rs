//! The second pass of a streamed import: the device log read again, each ring's records
//! built as the first pass did and handed to the outputs as soon as its last row is read
//! ([`CsvRings`], a [`RingSource`]). Memory is the rings in flight: one at a time in a file
//! that lists each ring's rows together (tt-metal's and ttprof's do), more when rings
//! interleave (every ring from its first row to its last).

use super::pairing::{Made, Pairing};
use crate::decode::Records;
use crate::error::{Error, Result};
use crate::readout::RingReport;
use crate::sink::RingSource;
use crate::tt_metal::device_log::DeviceLog;
use std::borrow::Cow;
use std::path::PathBuf;

/// The rings of a device log, read again ring by ring (see the module docs).
pub struct CsvRings {
    path: PathBuf,
    log: Option<DeviceLog>,
    pairing: Pairing,
    /// Per ring: its records while in flight.
    records: Vec<Option<Records>>,
    /// Per ring: rows the first pass counted, and records it made.
    expected: Vec<(u64, u64)>,
    made: Vec<Made>,
}

impl CsvRings {
    pub(super) fn new(path: PathBuf, expected: Vec<(u64, u64)>) -> CsvRings {
        CsvRings {
            pairing: Pairing::new(&path),
            path,
            log: None,
            records: Vec::new(),
            expected,
            made: Vec::new(),
        }
    }

    fn changed(&self, what: &str) -> Error {
        Error::BadFile {
            path: self.path.clone(),
            what: format!("changed while it was read ({what}): the outputs are not written"),
        }
    }

    /// Reads rows until ring `index` is complete.
    fn read_until(&mut self, index: usize) -> Result<()> {
        if self.log.is_none() {
            self.log = Some(DeviceLog::open(&self.path)?);
        }
        loop {
            let done = self.pairing.rings.get(index).map(|r| r.rows);
            if done.is_some() && done == self.expected.get(index).map(|e| e.0) {
                return Ok(());
            }
            let log = self.log.as_mut().expect("opened above");
            let Some(row) = log.next_row()? else {
                return Err(self.changed("it ended before the rows of a ring seen the first time"));
            };
            self.made.clear();
            self.pairing.row(&row, &mut self.made)?;
            for m in &self.made {
                if self.records.len() <= m.ring {
                    self.records.resize_with(m.ring + 1, || None);
                }
                self.records[m.ring]
                    .get_or_insert_with(Records::new)
                    .push(m.kind, m.site, m.start, m.end, m.value, m.count, m.run);
            }
            if self.pairing.rings.len() > self.expected.len() {
                return Err(self.changed("a ring the first reading did not see"));
            }
        }
    }
}

impl RingSource for CsvRings {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        self.read_until(index)?;
        let records = self
            .records
            .get_mut(index)
            .and_then(Option::take)
            .unwrap_or_default();
        if records.len() as u64 != self.expected[index].1 {
            return Err(self.changed("a ring's records differ from the first reading"));
        }
        let mut r = RingReport::new(self.pairing.rings[index].id);
        r.records = records;
        Ok(Cow::Owned(r))
    }
}
