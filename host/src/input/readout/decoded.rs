//! Where a ring's decoded records wait to be taken ([`Decoded`]): the compact table, for a
//! drainer whose records are taken a drain at a time, or the records themselves, for a
//! ring read once and handed out whole ([`super::RingReader`]).
//!
//! A ring taken whole from a table was converted into records at the end, both held while
//! it was: 19 bytes a row of a 16 M-zone ring (the table's end, duration and site, the
//! records' start and kind), the peak of `report` (issue 41). Decoded straight into records
//! (the rich decoder, which gives the same rows: `decode::tests`), a row is its 9 bytes.

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
            Decoded::Records(r) => r.kind[m.rows..].iter().filter(|k| k.is_zone()).count(),
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

    /// Decodes `bytes` with `d` into the rows (a drained recording fed in).
    pub(crate) fn decode(&mut self, d: &mut Decoder, bytes: &[u8]) -> Result<Stop, DecodeError> {
        self.decode_piece(d, bytes)
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
