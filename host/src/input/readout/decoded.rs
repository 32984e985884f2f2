//! Where a ring's decoded records wait to be taken ([`Decoded`]): the compact table, for a
//! drainer whose records are taken a drain at a time, or the records themselves, for a
//! ring read once and handed out whole ([`super::RingReader`]).
//!
//! A ring taken whole from a table was converted into records at the end, both held while
//! it was: 19 bytes a row of a 16 M-zone ring (the table's end, duration and site, the
//! records' start and kind), the peak of `report` (issue 41). Decoded straight into records
//! (the rich decoder, which gives the same rows: `decode::tests`), a row is its 7 or so bytes.

use super::span::SpanOutput;
use crate::decode::{DecodeError, Decoder, RecordKind, Records, Stop, ZoneTable};

/// A ring's decoded records not yet taken (see the module docs).
#[derive(Clone, Debug)]
pub(crate) enum Decoded {
    /// The compact table (taken by [`Decoded::take_table`] or as records).
    Table(ZoneTable),
    /// The records, decoded straight into them.
    Records(Records),
}

/// Where the rows stood before a decode ([`Decoded::mark`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    /// Rows held then.
    pub(crate) rows: usize,
    extras: usize,
}

impl Default for Decoded {
    fn default() -> Decoded {
        Decoded::Table(ZoneTable::new())
    }
}

impl Decoded {
    /// Rows held.
    pub(crate) fn len(&self) -> usize {
        match self {
            Decoded::Table(t) => t.len(),
            Decoded::Records(r) => r.len(),
        }
    }

    /// Whether no rows are held.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Room for the rows of `bytes` more bytes of payload (a short zone's 6 bytes a row):
    /// a payload decoded in pieces then grows its columns once, not by doubling.
    pub(crate) fn reserve_for(&mut self, bytes: u64) {
        let rows = usize::try_from(bytes / u64::from(ttprof_rt::wire::SHORT_ZONE_BYTES))
            .unwrap_or(usize::MAX)
            .saturating_add(2);
        match self {
            Decoded::Table(t) => t.reserve(rows),
            Decoded::Records(r) => r.reserve(rows),
        }
    }

    /// Where the rows stand now.
    pub(crate) fn mark(&self) -> Mark {
        match self {
            Decoded::Table(t) => Mark {
                rows: t.len(),
                extras: t.extra.len(),
            },
            Decoded::Records(r) => Mark {
                rows: r.len(),
                extras: 0,
            },
        }
    }

    /// Rows added since `m`.
    pub(crate) fn rows_since(&self, m: Mark) -> usize {
        self.len() - m.rows
    }

    /// Zones among the rows added since `m`.
    pub(crate) fn zones_since(&self, m: Mark) -> usize {
        match self {
            Decoded::Table(t) => t.zones_since(m.rows, m.extras),
            Decoded::Records(r) => r.zones_since(m.rows),
        }
    }

    /// Records dropped, by the `Loss` rows added since `m`.
    pub(crate) fn losses_since(&self, m: Mark) -> u64 {
        match self {
            Decoded::Table(t) => t.losses_since(m.extras),
            Decoded::Records(r) => (m.rows..r.len())
                .filter(|&i| r.kind[i] == RecordKind::Loss)
                .map(|i| r.count_at(i) as u64)
                .sum(),
        }
    }

    /// The first `Run` row added since `m`, if any.
    pub(crate) fn first_run_since(&self, m: Mark) -> Option<usize> {
        match self {
            Decoded::Table(t) => t
                .runs
                .iter()
                .find(|r| r.row >= m.rows as u64)
                .map(|r| r.row as usize),
            Decoded::Records(r) => r.kind[m.rows..]
                .iter()
                .position(|&k| k == RecordKind::Run)
                .map(|i| m.rows + i),
        }
    }

    /// The rows as records, leaving none (of the same kind).
    pub(crate) fn take_records(&mut self) -> Records {
        match self {
            Decoded::Table(t) => Records::from_table(std::mem::take(t)),
            Decoded::Records(r) => std::mem::take(r),
        }
    }

    /// The rows as a compact table, leaving none: `None` when they are records (a ring
    /// read whole is never taken a table at a time).
    pub(crate) fn take_table(&mut self) -> Option<ZoneTable> {
        match self {
            Decoded::Table(t) => Some(std::mem::take(t)),
            Decoded::Records(_) => None,
        }
    }
}

impl SpanOutput for Decoded {
    fn decode_piece(&mut self, d: &mut Decoder, bytes: &[u8]) -> Result<Stop, DecodeError> {
        match self {
            Decoded::Table(t) => t.decode_piece(d, bytes),
            Decoded::Records(r) => r.decode_piece(d, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use ttprof_rt::wire::{encode, Record};

    /// A stream of zones, events, runs and losses, encoded; each record's end byte.
    fn stream(rng: &mut Rng, n: usize) -> (Vec<u8>, Vec<usize>) {
        let (mut now, mut run, mut reference) = (1_000u64, 0u32, 1_000u64);
        let (mut bytes, mut ends) = (Vec::new(), Vec::new());
        for _ in 0..n {
            now += rng.below(100_000);
            let r = match rng.below(10) {
                0 => Record::Event { id: 3, time: now },
                1 => {
                    run += 1;
                    Record::Run {
                        run_id: run,
                        time: now,
                    }
                }
                2 => Record::Loss {
                    count: 1 + rng.below(50) as u32,
                    first_run: run,
                    last_run: run,
                    first: now - 10,
                    last: now,
                },
                _ => Record::Zone {
                    id: 7,
                    end: now,
                    duration: rng.below(80_000).min(now),
                    value: None,
                },
            };
            let e = encode(&r, reference).unwrap();
            bytes.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
            reference = r.ref_time().unwrap_or(reference);
            ends.push(bytes.len());
        }
        (bytes, ends)
    }

    /// A ring decoded into records counts its rows, zones, losses and first run of each
    /// piece as the table does, and hands out the same records.
    #[test]
    fn records_count_and_read_as_the_table_does() {
        let mut rng = Rng::new(41);
        let (bytes, ends) = stream(&mut rng, 3_000);
        let mut cuts: Vec<usize> = (0..12)
            .map(|_| ends[rng.below(ends.len() as u64) as usize])
            .collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let mut both = [Decoded::default(), Decoded::Records(Records::new())];
        let mut decoders = [Decoder::default(), Decoder::default()];
        let mut from = 0;
        let mut runs_seen = 0;
        for &to in &cuts {
            let mut counts = Vec::new();
            for (d, dec) in both.iter_mut().zip(&mut decoders) {
                let m = d.mark();
                d.decode_piece(dec, &bytes[from..to]).unwrap();
                counts.push((
                    d.rows_since(m),
                    d.zones_since(m),
                    d.losses_since(m),
                    d.first_run_since(m),
                    d.len(),
                ));
            }
            assert_eq!(counts[0], counts[1], "piece {from}..{to}");
            runs_seen += counts[0].3.is_some() as usize;
            from = to;
        }
        assert!(runs_seen > 3, "the pieces hold runs");
        assert!(both[0].losses_since(Mark { rows: 0, extras: 0 }) > 0);
        let [mut table, mut records] = both;
        assert_eq!(table.take_records(), records.take_records());
        assert!(records.take_table().is_none());
        assert!(table.is_empty() && records.is_empty());
    }
}
