//! The second pass of a streamed import: the device log read again, each ring's records
//! built as the first pass did and handed to the outputs as soon as its last row is read
//! ([`CsvRings`], a [`RingSource`]). Memory is the rings in flight: one at a time in a file
//! that lists each ring's rows together (tt-metal's and ttprof's do). When rings
//! interleave, only the rings of a *window* are kept: the ring asked for and the next ones
//! while their records (the first pass counted them) add up to at most [`WINDOW_RECORDS`];
//! rows of later rings are passed over, and when one of those is asked for, the file is
//! read again from its start. Memory is then the larger of the window and the largest
//! ring; time grows with the reads (about one per window's worth of records when every
//! ring spans the whole file).

use super::pairing::{Made, Pairing};
use crate::decode::Records;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::readout::RingReport;
use crate::ring_source::RingSource;
use crate::tt_metal::device_log::DeviceLog;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::path::PathBuf;

/// Records the rings in flight may hold together when rings interleave (one ring larger
/// than this is still held whole): about 40 bytes each, so ~80 MB.
pub(crate) const WINDOW_RECORDS: u64 = 2 << 20;

/// The rings of a device log, read again ring by ring (see the module docs).
pub struct CsvRings {
    path: PathBuf,
    log: Option<DeviceLog>,
    pub(super) pairing: Pairing,
    /// Its records per ring in flight (a map, not a slot per ring of the file: 300,000
    /// rings took 11 MB of empty slots).
    pub(crate) records: FxHashMap<usize, Records>,
    /// Per ring: rows the first pass counted, and records it made.
    expected: Vec<(u64, u64)>,
    made: Vec<Made>,
    /// Rings whose records are kept in this reading: `index..window`.
    window: usize,
    /// The first ring [`CsvRings::in_window`] counts: `from..window`.
    from: usize,
    /// Records the first pass counted in rings `from..window` (the window grows from where
    /// it ended, not from the ring asked for: 150,000 two-zone rings were each summed over
    /// the rest, about 9 s of an 18 s import).
    in_window: u64,
    /// Per ring: whether rows of it were passed over in this reading (outside the window).
    passed_over: Vec<bool>,
    /// Readings of the file so far.
    pub(crate) readings: u32,
    /// [`WINDOW_RECORDS`] (smaller in tests).
    pub(crate) window_records: u64,
    /// The command's input guard: each reading notes the file again.
    inputs: Inputs,
}

impl CsvRings {
    pub(super) fn new(path: PathBuf, expected: Vec<(u64, u64)>, inputs: Inputs) -> CsvRings {
        CsvRings {
            pairing: Pairing::with_rings(&path, expected.len()),
            path,
            log: None,
            records: FxHashMap::default(),
            passed_over: vec![false; expected.len()],
            expected,
            made: Vec::new(),
            window: 0,
            from: 0,
            in_window: 0,
            readings: 0,
            window_records: WINDOW_RECORDS,
            inputs,
        }
    }

    /// Keeps rings `index..` whose records fit [`WINDOW_RECORDS`] (at least ring `index`).
    /// The window never shrinks, and rings asked for come in order, so each ring is counted
    /// in and out once per reading.
    fn set_window(&mut self, index: usize) {
        let records = |r: usize| self.expected.get(r).map_or(0, |e| e.1);
        if self.window <= index {
            (self.from, self.window, self.in_window) = (index, index, 0);
        } else if index < self.from {
            self.in_window = (index..self.window).map(records).sum();
            self.from = index;
        }
        while self.from < index {
            self.in_window -= records(self.from);
            self.from += 1;
        }
        while self.window < self.expected.len() {
            let next = records(self.window);
            if self.window > index && self.in_window + next > self.window_records {
                break;
            }
            self.in_window += next;
            self.window += 1;
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
        if self.passed_over.get(index) == Some(&true) {
            // Rows of this ring were passed over: read the file again from its start.
            self.log = None;
            self.pairing = Pairing::with_rings(&self.path, self.expected.len());
            self.records.clear();
            self.passed_over.iter_mut().for_each(|p| *p = false);
            self.window = index;
        }
        self.set_window(index);
        if self.log.is_none() {
            self.log = Some(DeviceLog::open(&self.path, &self.inputs)?);
            self.readings += 1;
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
                if m.ring >= self.window {
                    if let Some(p) = self.passed_over.get_mut(m.ring) {
                        *p = true;
                    }
                    continue;
                }
                if m.ring < index && !self.records.contains_key(&m.ring) {
                    // A ring handed out already, read again: not kept twice.
                    continue;
                }
                // Sized by the first pass's count: no spare capacity (a growing vector's
                // doubling held up to twice a long ring's records).
                let expected = self.expected.get(m.ring).map_or(0, |e| e.1) as usize;
                self.records
                    .entry(m.ring)
                    .or_insert_with(|| Records::with_capacity(expected))
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
        let records = self.records.remove(&index).unwrap_or_default();
        if records.len() as u64 != self.expected[index].1 {
            return Err(self.changed("a ring's records differ from the first reading"));
        }
        self.pairing.release(index);
        let mut r = RingReport::new(self.pairing.rings[index].id);
        r.records = records;
        if index + 1 == self.expected.len() {
            // The last ring: this reading's state (a ring entry per ring, 30 MB for 300,000
            // rings) is not kept while the outputs finish. A ring asked for again is read
            // again from the file's start.
            self.log = None;
            self.pairing = Pairing::new(&self.path);
            self.records = FxHashMap::default();
            self.window = 0;
        }
        Ok(Cow::Owned(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window as its definition gives it: from ring `index`, the rings whose records
    /// add up to at most the limit (at least ring `index`), never below the last window.
    fn greedy(expected: &[(u64, u64)], index: usize, limit: u64, last: usize) -> usize {
        let (mut total, mut end) = (0, index);
        while let Some(&(_, n)) = expected.get(end) {
            if end > index && total + n > limit {
                break;
            }
            total += n;
            end += 1;
        }
        end.max(last)
    }

    /// The window grown from where it ended is the window summed from the ring asked for,
    /// for rings asked in order, with a ring asked again (back) and the reading started
    /// over (window 0) between.
    #[test]
    fn the_window_grows_from_where_it_ended() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let expected: Vec<(u64, u64)> = (0..2000).map(|_| (0, next() % 40)).collect();
        let mut rings = CsvRings::new(PathBuf::new(), expected.clone(), Inputs::none());
        rings.window_records = 100;
        let mut asks: Vec<usize> = (0..expected.len()).collect();
        asks.splice(700..700, [650, 690, 701]);
        let (mut windows, mut last) = (0, 0);
        for (k, &index) in asks.iter().enumerate() {
            if k == 1500 {
                (rings.window, last) = (0, 0);
            }
            rings.set_window(index);
            let want = greedy(&expected, index, rings.window_records, last);
            assert_eq!(rings.window, want, "ask {k}: ring {index}");
            let held: u64 = (rings.from..rings.window).map(|r| expected[r].1).sum();
            assert_eq!(rings.in_window, held, "ask {k}: ring {index}");
            windows += usize::from(want > last);
            last = rings.window;
        }
        assert!(windows > 100, "{windows} windows");
    }
}
