//! The columnar record table the decoder fills.

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
/// `value` and `count` are kept only for the rows where either is not 0, and `run` only
/// where it changes: a zone's row is 19 bytes, not 35 (a ring's records are held whole
/// while its outputs are written, issue 41). A ring cannot reach 2^32 rows in memory (its
/// four dense columns alone would be 76 GB), so rows are numbered in 32 bits.
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
    /// Start, device cycles (`== end` for point records).
    pub(crate) start: Vec<u64>,
    /// End, device cycles (the time of a point record).
    pub(crate) end: Vec<u64>,
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
    start: Vec::new(),
    end: Vec::new(),
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

    /// Start, device cycles (`== end` for point records).
    pub fn start(&self) -> &[u64] {
        &self.start
    }

    /// End, device cycles (the time of a point record).
    pub fn end(&self) -> &[u64] {
        &self.end
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
        c.start.reserve(n);
        c.end.reserve(n);
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
        c.start.truncate(n);
        c.end.truncate(n);
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
        c.start.extend_from_slice(&other.start);
        c.end.extend_from_slice(&other.end);
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
        c.start.push(start);
        c.end.push(end);
        if value != 0 || count != 0 {
            c.extra.push(Extra { row, count, value });
        }
        c.run_from(row, run);
    }

    /// Number of rows of `kind`.
    pub fn count_of(&self, kind: RecordKind) -> usize {
        self.kind.iter().filter(|k| **k == kind).count()
    }

    /// Row `i` as the runtime's plain [`Record`] (for tests and for code that wants an enum).
    pub fn record(&self, i: usize) -> Option<Record> {
        let (id, start, end, value, count) = (
            *self.site.get(i)?,
            self.start[i],
            self.end[i],
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
