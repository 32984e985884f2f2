//! The columnar record table the decoder fills.

use super::compact::{Row, ZoneTable};
use super::spans::Spans;
use super::starts::Starts;
use ttprof_rt::wire::{Record, SiteId};

/// What a decoded record is. Short, 32- and 64-bit wire forms of a zone all become `Zone`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RecordKind {
    /// A zone: `site`, `start`, `end`.
    Zone,
    /// A zone with a 32-bit value: `site`, `start`, `end`, `value`.
    ValueZone,
    /// A point event: `site`, `start == end` = its time.
    Event,
    /// Timestamped data: `site`, time in `start == end`, the 64-bit payload in `value`.
    Data,
    /// A sum zone's total: `site`, emitted at `start == end`, total cycles in `value`,
    /// number of measurements in `count`.
    Sum,
    /// A time anchor (`start == end`); carries no user data.
    Time,
    /// A launch of program `value` (= the new `run`) starts at `start == end`.
    Run,
    /// `count` records were dropped between `start` and `end` (Drop policy, ring full);
    /// `value` packs the runs they span: first run in the low 32 bits, last in the high.
    Loss,
}

impl RecordKind {
    /// Whether the record is a zone (with or without a value).
    pub fn is_zone(self) -> bool {
        matches!(self, RecordKind::Zone | RecordKind::ValueZone)
    }
}

/// `run` of records decoded before any `Run` record.
pub const NO_RUN: u32 = u32::MAX;

/// Decoded records, one column per field, one row per record (no per-record allocation).
/// Column meanings per kind are given on [`RecordKind`]; unused fields are 0.
///
/// `value` and `count` are kept only for the rows where either is not 0, `run` only where
/// it changes, a start as its distance from its block's first start (2 bytes, a block's
/// base 8 per 32 rows, the rare far one whole: `starts`) and an end as its distance from
/// the start (2 bytes while most distances are below 2^16, else 4, `spans`; the whole end
/// only for the rare row whose distance is 2^32 - 1 or more, or negative): a short zone's
/// row is about 7.25 bytes, not 35 (a ring's records are held whole while its outputs are
/// written, issue 41). A ring cannot reach 2^32 rows in
/// memory, so rows are numbered in 32 bits.
///
/// The columns are made on the first record: no records cost one word, not seven empty
/// columns (a streamed profile keeps a `Records` per ring after handing its rows on; 300,000
/// rings held 48 MB of empty columns, issue 41).
#[derive(Clone, Default)]
pub struct Records(Option<Box<Columns>>);

/// The columns of [`Records`] (what it reads as).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    /// What each record is.
    pub(crate) kind: Vec<RecordKind>,
    /// Site id (0 for `Time`, `Run`, `Loss`).
    pub(crate) site: Vec<SiteId>,
    /// Start, device cycles ([`Records::start_at`]; 2.25 bytes a row while neighbours start
    /// near each other).
    starts: Starts,
    /// End minus start ([`Records::end_at`]; 2 bytes a row while most are short).
    spans: Spans,
    /// The rows whose `value` or `count` is not 0, in row order ([`Records::value_at`]).
    extra: Vec<Extra>,
    /// (first row, run) where the run changes, in row order ([`Records::run_at`]).
    runs: Vec<(u32, u32)>,
}

/// A row's `value` and `count` ([`Columns::extra`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Extra {
    row: u32,
    count: u32,
    value: u64,
}

/// No columns: what [`Records`] without records reads as.
static NO_COLUMNS: Columns = Columns {
    kind: Vec::new(),
    site: Vec::new(),
    starts: Starts::new(),
    spans: Spans::new(),
    extra: Vec::new(),
    runs: Vec::new(),
};

impl std::ops::Deref for Records {
    type Target = Columns;

    fn deref(&self) -> &Columns {
        self.0.as_deref().unwrap_or(&NO_COLUMNS)
    }
}

impl std::ops::DerefMut for Records {
    /// Makes the columns when there are none.
    fn deref_mut(&mut self) -> &mut Columns {
        self.0.get_or_insert_with(Default::default)
    }
}

impl PartialEq for Records {
    /// Same rows (no columns and empty columns are equal).
    fn eq(&self, other: &Records) -> bool {
        **self == **other
    }
}

impl Eq for Records {}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Records {
    /// What each record is.
    pub fn kind(&self) -> &[RecordKind] {
        &self.kind
    }

    /// Site id (0 for `Time`, `Run`, `Loss`).
    pub fn site(&self) -> &[SiteId] {
        &self.site
    }

    /// Row `i`'s start, device cycles (`== end` for point records).
    pub fn start_at(&self, i: usize) -> u64 {
        self.starts.at(i)
    }

    /// Row `i`'s end, device cycles (the time of a point record).
    pub fn end_at(&self, i: usize) -> u64 {
        self.spans.end_at(i, self.start_at(i))
    }

    /// Each row's start ([`Records::start_at`]), in row order, in one pass.
    pub fn starts(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.starts.iter()
    }

    /// Each row's end ([`Records::end_at`]), in row order, in one pass.
    pub fn ends(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.spans.ends(self.starts())
    }

    /// Row `i`'s kind-specific payload: zone value, data, sum total cycles, run id, packed
    /// loss runs (0 past the last row).
    pub fn value_at(&self, i: usize) -> u64 {
        self.extra(i).map_or(0, |e| e.value)
    }

    /// Row `i`'s count: `Sum`: measurements; `Loss`: records dropped (0 past the last row).
    pub fn count_at(&self, i: usize) -> u32 {
        self.extra(i).map_or(0, |e| e.count)
    }

    /// Row `i`'s run: the id of the most recent `Run` record (its own id for a `Run`), or
    /// [`NO_RUN`] (and past the last row, the last row's).
    pub fn run_at(&self, i: usize) -> u32 {
        let runs = &self.runs;
        match runs.partition_point(|&(from, _)| from as usize <= i) {
            0 => NO_RUN,
            n => runs[n - 1].1,
        }
    }

    /// Each row's run ([`Records::run_at`]), in row order, in one pass.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        let (changes, mut next, mut run) = (&self.runs, 0, NO_RUN);
        (0..self.len()).map(move |i| {
            while changes
                .get(next)
                .is_some_and(|&(from, _)| from as usize <= i)
            {
                run = changes[next].1;
                next += 1;
            }
            run
        })
    }

    /// Row `i`'s value and count, when either is not 0.
    fn extra(&self, i: usize) -> Option<&Extra> {
        let extra = &self.extra;
        let row = u32::try_from(i).ok()?;
        extra
            .binary_search_by_key(&row, |e| e.row)
            .ok()
            .map(|k| &extra[k])
    }

    /// No records.
    pub fn new() -> Records {
        Records::default()
    }

    /// No records, with room for `n` in every column.
    pub fn with_capacity(n: usize) -> Records {
        let mut r = Records::default();
        r.reserve(n);
        r
    }

    /// Reserves room for `n` more records in every column.
    pub fn reserve(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let c = &mut **self;
        c.kind.reserve(n);
        c.site.reserve(n);
        c.starts.reserve(n);
        c.spans.reserve(n);
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// Removes every record (keeps the columns' capacity).
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps the first `n` records.
    pub fn truncate(&mut self, n: usize) {
        let Some(c) = self.0.as_deref_mut() else {
            return;
        };
        c.kind.truncate(n);
        c.site.truncate(n);
        c.starts.truncate(n);
        c.spans.truncate(n);
        let kept = |row: u32| (row as usize) < n;
        let extra = c.extra.partition_point(|e| kept(e.row));
        c.extra.truncate(extra);
        let runs = c.runs.partition_point(|&(from, _)| kept(from));
        c.runs.truncate(runs);
    }

    /// Appends all of `other`'s rows.
    pub fn append(&mut self, other: &Records) {
        if other.is_empty() {
            return;
        }
        let c = &mut **self;
        let base = c.kind.len() as u32;
        c.kind.extend_from_slice(&other.kind);
        c.site.extend_from_slice(&other.site);
        c.starts.append(&other.starts);
        c.spans.append(&other.spans);
        c.extra.extend(other.extra.iter().map(|e| Extra {
            row: base + e.row,
            ..*e
        }));
        for &(from, run) in &other.runs {
            c.run_from(base + from, run);
        }
    }

    /// Appends one record (field meanings per kind on [`RecordKind`]; unused fields 0).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn push(
        &mut self,
        kind: RecordKind,
        site: SiteId,
        start: u64,
        end: u64,
        value: u64,
        count: u32,
        run: u32,
    ) {
        let c = &mut **self;
        let row = c.kind.len() as u32;
        c.kind.push(kind);
        c.site.push(site);
        c.starts.push(start);
        c.spans.push(row, start, end);
        if value != 0 || count != 0 {
            c.extra.push(Extra { row, count, value });
        }
        c.run_from(row, run);
    }

    /// The rich view of `t`, made from its columns as it is taken: its sites and durations
    /// become the records' sites and 32-bit spans in place, so a long ring holds about 17
    /// bytes a row while it is converted, not the table's 14 beside the records' 7 or more
    /// ([`ZoneTable::to_records`] gives the same rows).
    pub(crate) fn from_table(t: ZoneTable) -> Records {
        let n = t.len();
        if n == 0 {
            return Records::new();
        }
        let ZoneTable {
            end,
            duration,
            site,
            extra,
            runs: marks,
            first_run,
        } = t;
        let mut c = Columns {
            kind: Vec::with_capacity(n),
            site,
            ..Columns::default()
        };
        c.starts.reserve(n);
        // The durations become the 32-bit spans in place, then the column (narrowed once
        // the ends are let go).
        let mut span32 = duration;
        let (mut extra, mut marks, mut run) =
            (extra.iter().peekable(), marks.iter().peekable(), first_run);
        for (i, &end) in end.iter().enumerate() {
            let row = i as u32;
            if let Some(m) = marks.next_if(|m| m.row == i as u64) {
                run = m.run;
            }
            c.run_from(row, run);
            let (kind, start) = match extra.next_if(|e| e.row == i as u64) {
                Some(e) => {
                    if e.value != 0 || e.count != 0 {
                        c.extra.push(Extra {
                            row,
                            count: e.count,
                            value: e.value,
                        });
                    }
                    (e.kind, e.start)
                }
                None => (RecordKind::Zone, end - span32[i] as u64),
            };
            c.kind.push(kind);
            c.starts.push(start);
            span32[i] = c.spans.span32_of(row, start, end);
        }
        drop(end);
        c.spans = std::mem::take(&mut c.spans).with_spans32(span32);
        Records(Some(Box::new(c)))
    }

    /// The same rows with every start and end moved `by` cycles later (test fixtures at
    /// large clock values).
    #[cfg(test)]
    pub(crate) fn shifted(&self, by: u64) -> Records {
        let mut out = Records::with_capacity(self.len());
        let runs = self.runs().collect::<Vec<_>>();
        for (i, run) in runs.into_iter().enumerate() {
            out.push(
                self.kind[i],
                self.site[i],
                self.start_at(i) + by,
                self.end_at(i) + by,
                self.value_at(i),
                self.count_at(i),
                run,
            );
        }
        out
    }

    /// Number of rows of `kind`.
    pub fn count_of(&self, kind: RecordKind) -> usize {
        self.kind.iter().filter(|k| **k == kind).count()
    }

    /// Number of zones (with or without a value).
    pub fn zones(&self) -> usize {
        self.zones_since(0)
    }

    /// Number of zones among the rows from `row` on.
    pub fn zones_since(&self, row: usize) -> usize {
        let kinds = self.kind.get(row..).unwrap_or_default();
        kinds.iter().filter(|k| k.is_zone()).count()
    }

    /// Row `i` with every field (`None` past the last).
    pub fn row(&self, i: usize) -> Option<Row> {
        Some(Row {
            kind: *self.kind().get(i)?,
            site: self.site[i],
            start: self.start_at(i),
            end: self.end_at(i),
            value: self.value_at(i),
            count: self.count_at(i),
            run: self.run_at(i),
        })
    }

    /// Appends `r` ([`Records::push`] of its fields).
    pub fn push_row(&mut self, r: &Row) {
        self.push(r.kind, r.site, r.start, r.end, r.value, r.count, r.run);
    }

    /// Row `i` as the runtime's plain [`Record`] (for tests and for code that wants an enum).
    pub fn record(&self, i: usize) -> Option<Record> {
        let (id, start, end, value, count) = (
            *self.site.get(i)?,
            self.start_at(i),
            self.end_at(i),
            self.value_at(i),
            self.count_at(i),
        );
        Some(match self.kind[i] {
            RecordKind::Zone => Record::Zone {
                id,
                end,
                duration: end - start,
                value: None,
            },
            RecordKind::ValueZone => Record::Zone {
                id,
                end,
                duration: end - start,
                value: Some(value as u32),
            },
            RecordKind::Event => Record::Event { id, time: end },
            RecordKind::Data => Record::Data {
                id,
                time: end,
                data: value,
            },
            RecordKind::Sum => Record::Sum {
                id,
                time: end,
                count,
                total: value,
            },
            RecordKind::Time => Record::Time { time: end },
            RecordKind::Run => Record::Run {
                run_id: value as u32,
                time: end,
            },
            RecordKind::Loss => Record::Loss {
                count,
                first_run: value as u32,
                last_run: (value >> 32) as u32,
                first: start,
                last: end,
            },
        })
    }
}

impl Columns {
    /// Row `row` (the last so far) has run `run`.
    fn run_from(&mut self, row: u32, run: u32) {
        let last = match self.runs.last() {
            Some(&(_, r)) => r,
            None => NO_RUN,
        };
        if last != run {
            self.runs.push((row, run));
        }
    }
}
