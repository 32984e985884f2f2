//! The second pass of a streamed import: the device log read again, each ring's records
//! built as the first pass did and handed to the outputs as soon as its last row is read
//! ([`CsvRings`], a [`RingSource`]). Memory is the rings in flight: one at a time in a file
//! that lists each ring's rows together (tt-metal's and ttprof's do). When rings
//! interleave, only the rings of a *window* are kept: the ring asked for and the next ones
//! while their records (the first pass counted them) add up to at most [`WINDOW_RECORDS`];
//! rows of later rings are passed over, and when one of those is asked for, the file is
//! read again from its start. Time grows with the reads (about one per window's worth of
//! records when every ring spans the whole file).
//!
//! A ring of [`crate::ring_pieces::LONG_RING`] records or more is given in pieces to
//! outputs that take them ([`crate::ring_pieces`]): a reading of its own (the *scout*, kept
//! from ring to ring) lists its long zones first, then the ring's records are handed on
//! [`crate::ring_pieces::PIECE_ROWS`] at a time as its rows are read. Memory is then the
//! window, not the longest ring.

use super::pairing::{Made, Pairing};
use crate::decode::Records;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::readout::{RingId, RingReport};
use crate::ring_pieces::{Long, LongZones, Sizes};
use crate::ring_source::RingSource;
use crate::tt_metal::device_log::DeviceLog;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

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
    /// The reading that finds long rings' long zones ([`RingSource::long_zones`]).
    scout: Option<Scout>,
    /// How long rings are given in pieces ([`Sizes::STANDARD`]; smaller in tests).
    pub(crate) sizes: Sizes,
}

/// A reading of the file of its own, for long rings' long zones.
struct Scout {
    log: DeviceLog,
    pairing: Pairing,
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
            scout: None,
            sizes: Sizes::STANDARD,
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
        changed(&self.path, what)
    }

    /// Readies the reading for ring `index`: the file read again from its start when rows
    /// of the ring were passed over, and the window set from it.
    fn start(&mut self, index: usize) -> Result<()> {
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
        Ok(())
    }

    /// Reads rows until ring `index` is complete, handing each record of it to `mine` and
    /// keeping those of the other rings of the window (after [`CsvRings::start`]).
    fn read_until(
        &mut self,
        index: usize,
        mine: &mut dyn FnMut(&Made) -> Result<()>,
    ) -> Result<()> {
        loop {
            let done = self.pairing.rings.get(index).map(|r| r.rows);
            if done.is_some() && done == self.expected.get(index).map(|e| e.0) {
                return Ok(());
            }
            let log = self.log.as_mut().expect("opened by start");
            next_made(log, &mut self.pairing, &mut self.made, &self.path)?;
            for m in &self.made {
                if m.ring == index {
                    mine(m)?;
                    continue;
                }
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
                push(
                    self.records
                        .entry(m.ring)
                        .or_insert_with(|| Records::with_capacity(expected)),
                    m,
                );
            }
            if self.pairing.rings.len() > self.expected.len() {
                return Err(self.changed("a ring the first reading did not see"));
            }
        }
    }

    /// Ring `index`'s identity, once its rows are read.
    fn ring_id(&self, index: usize) -> Result<RingId> {
        self.pairing
            .rings
            .get(index)
            .map(|r| r.id)
            .ok_or_else(|| self.changed("a ring the first reading saw is missing"))
    }

    /// Ring `index` was handed out with `records` records: checked against the first
    /// reading, and its reading state freed.
    fn handed(&mut self, index: usize, records: u64) -> Result<()> {
        if Some(records) != self.expected.get(index).map(|e| e.1) {
            return Err(self.changed("a ring's records differ from the first reading"));
        }
        self.pairing.release(index);
        if index + 1 == self.expected.len() {
            // The last ring: this reading's state (a ring entry per ring, 30 MB for 300,000
            // rings) is not kept while the outputs finish. A ring asked for again is read
            // again from the file's start.
            self.log = None;
            self.pairing = Pairing::new(&self.path);
            self.records = FxHashMap::default();
            self.window = 0;
            self.scout = None;
        }
        Ok(())
    }

    /// Ring `index`'s records, read by the scout (a reading of its own, kept from ring to
    /// ring and started again when it has read past rows of the ring), a piece at a time
    /// handed to `piece`.
    fn scout(&mut self, index: usize, piece: &mut dyn FnMut(&Records)) -> Result<()> {
        let (rows, records) = self.expected.get(index).copied().unwrap_or_default();
        let seen = |s: &Scout| s.pairing.rings.get(index).map_or(0, |r| r.rows);
        let mut s = match self.scout.take() {
            Some(s) if seen(&s) == 0 => s,
            _ => {
                self.readings += 1;
                Scout {
                    log: DeviceLog::open(&self.path, &self.inputs)?,
                    pairing: Pairing::with_rings(&self.path, self.expected.len()),
                }
            }
        };
        let (mut buf, mut made, mut read) = (Records::new(), Vec::new(), 0u64);
        while seen(&s) < rows {
            next_made(&mut s.log, &mut s.pairing, &mut made, &self.path)?;
            for m in made.iter().filter(|m| m.ring == index) {
                push(&mut buf, m);
                read += 1;
                if buf.len() >= self.sizes.piece {
                    piece(&buf);
                    buf.clear();
                }
            }
        }
        if !buf.is_empty() {
            piece(&buf);
        }
        if seen(&s) != rows || read != records {
            return Err(self.changed("a ring's records differ from the first reading"));
        }
        self.scout = Some(s);
        Ok(())
    }
}

/// The error for a file that changed between readings (`what` says how).
fn changed(path: &Path, what: &str) -> Error {
    Error::BadFile {
        path: path.to_path_buf(),
        what: format!("changed while it was read ({what}): the outputs are not written"),
    }
}

/// Reads the next row of `log` and pairs it: the records it completes in `made` (an
/// error when the file ends first: the caller reads only rows the first reading counted).
fn next_made(
    log: &mut DeviceLog,
    pairing: &mut Pairing,
    made: &mut Vec<Made>,
    path: &Path,
) -> Result<()> {
    let Some(row) = log.next_row()? else {
        return Err(changed(
            path,
            "it ended before the rows of a ring seen the first time",
        ));
    };
    made.clear();
    pairing.row(&row, made)?;
    Ok(())
}

/// Adds the record `m` to `r`.
fn push(r: &mut Records, m: &Made) {
    r.push(m.kind, m.site, m.start, m.end, m.value, m.count, m.run);
}

impl RingSource for CsvRings {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        self.start(index)?;
        let expected = self.expected.get(index).map_or(0, |e| e.1) as usize;
        let mut records = self
            .records
            .remove(&index)
            .unwrap_or_else(|| Records::with_capacity(expected));
        self.read_until(index, &mut |m| {
            push(&mut records, m);
            Ok(())
        })?;
        let id = self.ring_id(index)?;
        self.handed(index, records.len() as u64)?;
        let mut r = RingReport::new(id);
        r.records = records;
        Ok(Cow::Owned(r))
    }

    /// A ring of [`crate::ring_pieces::LONG_RING`] records or more: its long zones, from the
    /// scout's reading of it (past [`crate::ring_pieces::LONG_CAP`] of them, a ring whose
    /// records go back in time, it is given whole).
    fn long_zones(&mut self, index: usize) -> Result<Option<Long>> {
        if self
            .expected
            .get(index)
            .is_none_or(|e| e.1 < self.sizes.long_ring as u64)
        {
            return Ok(None);
        }
        let mut first = LongZones::new(self.sizes.window, self.sizes.cap);
        self.scout(index, &mut |r| first.push(r))?;
        Ok(first.finish().ok())
    }

    /// Ring `index`'s records in pieces of [`crate::ring_pieces::PIECE_ROWS`] (the first
    /// one larger when the window of an earlier ring held more of them).
    fn pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        self.start(index)?;
        let mut buf = self.records.remove(&index).unwrap_or_default();
        let (mut handed, most) = (0u64, self.sizes.piece);
        self.read_until(index, &mut |m| {
            push(&mut buf, m);
            if buf.len() >= most {
                handed += buf.len() as u64;
                piece(&buf)?;
                buf.clear();
            }
            Ok(())
        })?;
        if !buf.is_empty() {
            handed += buf.len() as u64;
            piece(&buf)?;
        }
        self.handed(index, handed)
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
