//! The compact zone table: what the fast decoder writes.
//!
//! One row per record, in ring order, in three dense columns: `end` (u64, the record's
//! time), `duration` (u32) and `site` (u16) - 14 bytes per row, against 35 for the rich
//! [`Records`] view. Almost every row of a dense ring is a plain zone, and a plain zone is
//! exactly those three values. Everything else lives in two sparse side tables:
//!
//! * [`Extra`]: rows that are not plain zones (events, data, sums, `Time`, `Run`, `Loss`,
//!   zones with a value) and zones whose duration does not fit 32 bits (their `duration` is
//!   [`LONG`] and the start is in the extra entry). Sorted by row.
//! * [`RunMark`]: the rows where a `Run` record sets a new run id. A row's run is that of the
//!   last mark at or before it, or [`ZoneTable::first_run`] before any mark.
//!
//! [`ZoneTable::to_records`] builds the rich view ([`Records`]) of a table, e.g. per ring for
//! output code; [`Rows`] walks the rows in order with cursors into the side tables.

use super::records::{RecordKind, Records, NO_RUN};
use ttprof_rt::wire::SiteId;

/// `duration` of a row whose true duration (or start) is in its [`Extra`] entry.
pub(crate) const LONG: u32 = u32::MAX;

/// The fields of a row that is not a plain zone with a 32-bit duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Extra {
    /// Index of the row in the table.
    pub row: u64,
    /// What the row is.
    pub kind: RecordKind,
    /// `Sum`: measurements; `Loss`: records dropped.
    pub count: u32,
    /// `ValueZone`: the value; `Data`: the payload; `Sum`: total cycles; `Run`: the run id;
    /// `Loss`: first run (low 32 bits) and last run (high 32 bits).
    pub value: u64,
    /// The row's start (zones: `end - duration`; points: the time; `Loss`: the first drop).
    pub start: u64,
}

/// A `Run` record at `row` sets the run id to `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunMark {
    /// Index of the `Run` record's row in the table.
    pub row: u64,
    /// The run id it sets for itself and the rows after it.
    pub run: u32,
}

/// Decoded records of one ring, compact: one row per record in ring order, 14 bytes per
/// plain zone (end, 32-bit duration, site), with sparse side tables for every other kind.
/// Read it with [`ZoneTable::rows`] or as the rich view [`ZoneTable::to_records`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneTable {
    /// Per row: the record's (end) time, device cycles.
    pub(crate) end: Vec<u64>,
    /// Per row: zone duration in cycles; [`LONG`] when it is in the row's [`Extra`] entry,
    /// 0 for rows that are not zones.
    pub(crate) duration: Vec<u32>,
    /// Per row: the site id (0 for `Time`, `Run`, `Loss`).
    pub(crate) site: Vec<SiteId>,
    /// Rows that are not plain 32-bit-duration zones, sorted by row.
    pub(crate) extra: Vec<Extra>,
    /// Rows where a `Run` record sets a new run id, sorted by row.
    pub(crate) runs: Vec<RunMark>,
    /// Run id of rows before the first [`RunMark`] ([`NO_RUN`] before any `Run` record).
    pub(crate) first_run: u32,
}

impl Default for ZoneTable {
    fn default() -> ZoneTable {
        ZoneTable::new()
    }
}

/// One row, with every field resolved (field meanings per kind are on [`RecordKind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// What the record is.
    pub kind: RecordKind,
    /// Site id (0 for `Time`, `Run`, `Loss`).
    pub site: SiteId,
    /// Start, device cycles (`== end` for point records; `Loss`: the first drop).
    pub start: u64,
    /// End, device cycles (the record's time for point records; `Loss`: the last drop).
    pub end: u64,
    /// Kind-specific payload (zone value, data, sum total cycles, run id, packed loss runs); else 0.
    pub value: u64,
    /// `Sum`: measurements; `Loss`: records dropped; else 0.
    pub count: u32,
    /// Run id of the latest `Run` record at or before the row, or [`NO_RUN`].
    pub run: u32,
}

impl ZoneTable {
    /// An empty table, rows before any `Run` record in run [`NO_RUN`].
    pub const fn new() -> ZoneTable {
        ZoneTable {
            end: Vec::new(),
            duration: Vec::new(),
            site: Vec::new(),
            extra: Vec::new(),
            runs: Vec::new(),
            first_run: NO_RUN,
        }
    }

    /// Number of rows (records of every kind).
    pub fn len(&self) -> usize {
        self.end.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    /// Removes every row; `first_run` becomes `run` (the decoder's run at this point).
    pub fn clear(&mut self, run: u32) {
        self.end.clear();
        self.duration.clear();
        self.site.clear();
        self.extra.clear();
        self.runs.clear();
        self.first_run = run;
    }

    /// Bytes of the table's columns in use (for memory accounting).
    pub fn bytes(&self) -> usize {
        self.len() * 14
            + self.extra.len() * std::mem::size_of::<Extra>()
            + self.runs.len() * std::mem::size_of::<RunMark>()
    }

    /// Reserves room for `n` more rows in the dense columns.
    pub fn reserve(&mut self, n: usize) {
        self.end.reserve(n);
        self.duration.reserve(n);
        self.site.reserve(n);
    }

    /// Appends a row of any kind: `start..=end` with `kind`'s fields.
    pub fn push(
        &mut self,
        kind: RecordKind,
        site: SiteId,
        start: u64,
        end: u64,
        value: u64,
        count: u32,
    ) {
        let row = self.len() as u64;
        let duration = self.side_tables(row, kind, start, end, value, count);
        self.end.push(end);
        self.duration.push(duration);
        self.site.push(site);
    }

    /// Records what row `row` needs beyond the dense columns (a run mark, an extra entry)
    /// and returns its `duration` column value.
    pub(crate) fn side_tables(
        &mut self,
        row: u64,
        kind: RecordKind,
        start: u64,
        end: u64,
        value: u64,
        count: u32,
    ) -> u32 {
        let is_zone = kind.is_zone();
        let duration = if is_zone {
            u32::try_from(end - start)
                .ok()
                .filter(|&d| d != LONG)
                .unwrap_or(LONG)
        } else {
            0
        };
        if kind == RecordKind::Run {
            self.runs.push(RunMark {
                row,
                run: value as u32,
            });
        }
        if !(kind == RecordKind::Zone && duration != LONG) {
            self.extra.push(Extra {
                row,
                kind,
                count,
                value,
                start,
            });
        }
        duration
    }

    /// Number of zones (with or without a value).
    pub fn zones(&self) -> usize {
        let not_zones = self.extra.iter().filter(|e| !e.kind.is_zone()).count();
        self.len() - not_zones
    }

    /// Number of zones among the rows from `row` on, whose extra entries start at `extra`
    /// (the table's lengths at some earlier point).
    pub(crate) fn zones_since(&self, row: usize, extra: usize) -> usize {
        let extras = self.extra.get(extra..).unwrap_or_default();
        let not_zones = extras.iter().filter(|e| !e.kind.is_zone()).count();
        self.len().saturating_sub(row) - not_zones
    }

    /// Sum of the counts of `Loss` rows (drops reported in-band).
    pub fn losses(&self) -> u64 {
        self.losses_since(0)
    }

    /// The same over the side-table rows from index `extras` on (what a decode added).
    pub(crate) fn losses_since(&self, extras: usize) -> u64 {
        self.extra[extras..]
            .iter()
            .filter(|e| e.kind == RecordKind::Loss)
            .map(|e| e.count as u64)
            .sum()
    }

    /// The rows in order.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            t: self,
            i: 0,
            extra: 0,
            mark: 0,
            run: self.first_run,
        }
    }

    /// The rich view: every row with every field.
    pub fn to_records(&self) -> Records {
        let mut r = Records::with_capacity(self.len());
        self.append_to(&mut r);
        r
    }

    /// Appends the rich view of every row to `out`.
    pub(crate) fn append_to(&self, out: &mut Records) {
        out.reserve(self.len());
        for row in self.rows() {
            out.push_row(&row);
        }
    }
}

/// Iterator over a table's rows (see [`ZoneTable::rows`]).
pub struct Rows<'a> {
    t: &'a ZoneTable,
    i: usize,
    extra: usize,
    mark: usize,
    run: u32,
}

impl Iterator for Rows<'_> {
    type Item = Row;

    #[inline]
    fn next(&mut self) -> Option<Row> {
        let t = self.t;
        let i = self.i;
        let end = *t.end.get(i)?;
        self.i += 1;
        if let Some(m) = t.runs.get(self.mark) {
            if m.row == i as u64 {
                self.run = m.run;
                self.mark += 1;
            }
        }
        let (site, duration) = (t.site[i], t.duration[i]);
        if let Some(e) = t.extra.get(self.extra) {
            if e.row == i as u64 {
                self.extra += 1;
                return Some(Row {
                    kind: e.kind,
                    site,
                    start: e.start,
                    end,
                    value: e.value,
                    count: e.count,
                    run: self.run,
                });
            }
        }
        Some(Row {
            kind: RecordKind::Zone,
            site,
            start: end - duration as u64,
            end,
            value: 0,
            count: 0,
            run: self.run,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.t.len() - self.i;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Rows<'_> {}
