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

/// `run` of records decoded before any `Run` record.
pub const NO_RUN: u32 = u32::MAX;

/// Decoded records, one column per field, one row per record (no per-record allocation).
/// Column meanings per kind are given on [`RecordKind`]; unused fields are 0.
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
    /// Kind-specific payload: zone value, data, sum total cycles, run id, packed loss runs.
    pub(crate) value: Vec<u64>,
    /// `Sum`: measurements; `Loss`: records dropped.
    pub(crate) count: Vec<u32>,
    /// Run id of the most recent `Run` record (its own id for a `Run`), or [`NO_RUN`].
    pub(crate) run: Vec<u32>,
}

/// No columns: what [`Records`] without records reads as.
static NO_COLUMNS: Columns = Columns {
    kind: Vec::new(),
    site: Vec::new(),
    start: Vec::new(),
    end: Vec::new(),
    value: Vec::new(),
    count: Vec::new(),
    run: Vec::new(),
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

    /// Kind-specific payload: zone value, data, sum total cycles, run id, packed loss runs.
    pub fn value(&self) -> &[u64] {
        &self.value
    }

    /// `Sum`: measurements; `Loss`: records dropped.
    pub fn count(&self) -> &[u32] {
        &self.count
    }

    /// Run id of the most recent `Run` record (its own id for a `Run`), or [`NO_RUN`].
    pub fn run(&self) -> &[u32] {
        &self.run
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
        c.value.reserve(n);
        c.count.reserve(n);
        c.run.reserve(n);
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
        c.value.truncate(n);
        c.count.truncate(n);
        c.run.truncate(n);
    }

    /// Appends all of `other`'s rows.
    pub fn append(&mut self, other: &Records) {
        if other.is_empty() {
            return;
        }
        let c = &mut **self;
        c.kind.extend_from_slice(&other.kind);
        c.site.extend_from_slice(&other.site);
        c.start.extend_from_slice(&other.start);
        c.end.extend_from_slice(&other.end);
        c.value.extend_from_slice(&other.value);
        c.count.extend_from_slice(&other.count);
        c.run.extend_from_slice(&other.run);
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
        c.kind.push(kind);
        c.site.push(site);
        c.start.push(start);
        c.end.push(end);
        c.value.push(value);
        c.count.push(count);
        c.run.push(run);
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
            self.value[i],
            self.count[i],
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
