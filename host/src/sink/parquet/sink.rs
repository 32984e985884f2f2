//! The Parquet tables as a sink: three files in a directory, or a hive-partitioned dataset.

use super::direct;
use super::keys::KeyColumn;
use super::tables::{self, Dictionaries};
use super::{MARKS_FILE, OPS_FILE, ROW_GROUP_ROWS, ZONES_FILE};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::profile::{Profile, RingView};
use crate::sink::{self, Finished, Sink};
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the tables go.
#[derive(Clone, Debug)]
enum Layout {
    /// `ttprof_zones.parquet`, `ttprof_marks.parquet`, `ttprof_ops.parquet` in a directory.
    Files(PathBuf),
    /// `DIR/<table>/host=<host>/chip=<n>/part-0.parquet`.
    Dataset { dir: PathBuf, host: String },
}

/// One column of the open row group: encoded by arrow-rs, or (strings) from its keys.
enum Column {
    Arrow(Box<ArrowColumnWriter>),
    Keys(KeyColumn),
}

/// One Parquet file being written: row groups of [`ROW_GROUP_ROWS`] rows (the last one
/// fewer, and a partition the rings left closes its group early), each
/// column encoded as its batches come, the string columns from their dictionary keys
/// ([`super::keys`]), the others by arrow-rs.
struct Table<W: Write + Send = AtomicFile> {
    path: PathBuf,
    file: SerializedFileWriter<Held<W>>,
    columns: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The open row group's columns and rows.
    group: Option<(Vec<Column>, usize)>,
    groups: usize,
    rows: u64,
}

impl Table {
    /// Creates the file at `path` inside `root` (no link below `root` is followed).
    fn create(
        root: &Path,
        path: PathBuf,
        schema: SchemaRef,
        props: WriterProperties,
        inputs: &Inputs,
    ) -> Result<Table> {
        if let Some(dir) = path.parent() {
            crate::atomic::create_dir_within(root, dir)?;
        }
        // Parquet's writer buffers its own writes: a small buffer here, so that a dataset's
        // thousand partitions do not reserve a mebibyte each (3 GB at 1,000 chips).
        let file = AtomicFile::create_buffered(&path, inputs, 8 << 10)?;
        Table::over(path, file, schema, props)
    }

    /// Writes the footer and renames the file into place.
    fn commit(self) -> Result<PathBuf> {
        let path = self.path.clone();
        self.finish()?.commit()?;
        Ok(path)
    }
}

impl<W: Write + Send> Table<W> {
    /// The table written to `file`, named `path` in errors.
    fn over(path: PathBuf, file: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        let (file, columns) = ArrowWriter::try_new(Held(Some(file)), schema.clone(), Some(props))
            .and_then(|w| w.into_serialized_writer())
            .map_err(|e| pq_error(&path, e))?;
        Ok(Table {
            path,
            file,
            columns,
            schema,
            group: None,
            groups: 0,
            rows: 0,
        })
    }

    /// Appends `batch`; closes the row group when it holds [`ROW_GROUP_ROWS`] rows,
    /// splitting the batch there, so every row group but a partition's last holds exactly
    /// that many rows: what the open one buffers is bounded whatever a ring's length, and
    /// where a group ends does not depend on how the rows were batched (a ring whole or in
    /// pieces, [`crate::sink::Part`], writes the same bytes).
    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let n = batch.num_rows();
        let mut at = 0;
        while at < n {
            let held = self.group.as_ref().map_or(0, |g| g.1);
            let take = ROW_GROUP_ROWS.saturating_sub(held).max(1).min(n - at);
            let part = if take == n {
                batch.clone()
            } else {
                batch.slice(at, take)
            };
            self.append(&part).map_err(|e| pq_error(&self.path, e))?;
            self.rows += take as u64;
            at += take;
            if self.group.as_ref().is_some_and(|g| g.1 >= ROW_GROUP_ROWS) {
                self.close_open_group()?;
            }
        }
        Ok(())
    }

    fn append(&mut self, batch: &RecordBatch) -> parquet::errors::Result<()> {
        if self.group.is_none() {
            let writers = self.columns.create_column_writers(self.groups)?;
            let descr = self.file.schema_descr();
            let columns = writers
                .into_iter()
                .zip(self.schema.fields())
                .enumerate()
                .map(|(i, (w, f))| match f.data_type() {
                    DataType::Dictionary(..) => Column::Keys(KeyColumn::new(descr.column(i))),
                    _ => Column::Arrow(Box::new(w)),
                })
                .collect();
            self.group = Some((columns, 0));
        }
        let Some((columns, rows)) = self.group.as_mut() else {
            return Ok(());
        };
        for ((c, field), array) in columns
            .iter_mut()
            .zip(self.schema.fields())
            .zip(batch.columns())
        {
            match c {
                Column::Keys(k) => k.push(array)?,
                Column::Arrow(w) => {
                    for leaf in compute_leaves(field, array)? {
                        w.write(&leaf)?;
                    }
                }
            }
        }
        *rows += batch.num_rows();
        Ok(())
    }

    /// Writes the open row group, if any.
    fn close_group(&mut self) -> parquet::errors::Result<()> {
        let Some((columns, _)) = self.group.take() else {
            return Ok(());
        };
        let mut group = self.file.next_row_group()?;
        for c in columns {
            match c {
                Column::Arrow(w) => w.close()?.append_to_row_group(&mut group)?,
                Column::Keys(k) => {
                    let (bytes, close) = k.finish(ZSTD_LEVEL)?;
                    group.append_column(&bytes, close)?;
                }
            }
        }
        group.close()?;
        self.groups += 1;
        Ok(())
    }

    /// Closes the open row group, if any (its errors named by the file).
    fn close_open_group(&mut self) -> Result<()> {
        self.close_group().map_err(|e| pq_error(&self.path, e))
    }

    /// Writes the open row group and the footer, flushes them, and hands the file back.
    /// Not Parquet's `into_inner`: the flush there reports a failed write (a full disk)
    /// only as text, where `finish`'s flush gives the `io::Error` itself.
    fn finish(mut self) -> Result<W> {
        self.close_open_group()?;
        self.file.finish().map_err(|e| pq_error(&self.path, e))?;
        self.file.inner_mut().0.take().ok_or_else(|| Error::Output {
            path: self.path.clone(),
            what: "writing Parquet: the file was handed back twice".into(),
        })
    }
}

/// `batch` as one Parquet file at `path` (the `--lines` table), written as the tables are:
/// a full disk is the `io::Error` itself wherever it is met.
pub(crate) fn write_batch(path: &Path, inputs: &Inputs, batch: RecordBatch) -> Result<()> {
    let file = AtomicFile::create(path, inputs)?;
    let mut table = Table::over(path.to_path_buf(), file, batch.schema(), properties())?;
    table.write(batch)?;
    table.commit().map(drop)
}

/// The file under Parquet's writer, until [`Table::finish`] takes it back (then writes
/// fail: nothing is written after the footer).
struct Held<W>(Option<W>);

impl<W: Write> Write for Held<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            Some(w) => w.write(buf),
            None => Err(std::io::Error::other("written after its footer")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |w| w.flush())
    }
}

/// The zstd level of every page.
const ZSTD_LEVEL: i32 = 1;

fn pq_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => {
            match inner.downcast::<std::io::Error>() {
                Ok(io) => Error::io(path, "write", *io),
                Err(other) => Error::Output {
                    path: path.to_path_buf(),
                    what: format!("writing Parquet: {other}"),
                },
            }
        }
        e => Error::Output {
            path: path.to_path_buf(),
            what: format!("writing Parquet: {e}"),
        },
    }
}

/// zstd pages, dictionary strings, delta-encoded times, cycles and place numbers,
/// byte-stream-split durations (the reasons and the measurements: docs/design/outputs.md).
fn properties() -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(ZSTD_LEVEL).unwrap_or_default(),
        ))
        .set_max_row_group_row_count(None)
        // A page per column per row group: fewer page headers and zstd frames (each
        // frame a new zstd context), a little better compressed.
        .set_data_page_row_count_limit(ROW_GROUP_ROWS)
        .set_created_by(format!("ttprof {}", env!("CARGO_PKG_VERSION")));
    for c in [
        "start_cycles",
        "end_cycles",
        "start_ns",
        "cycles",
        "ns",
        "value",
        // Constant through a ring (chip, tile) or nearly (run): deltas of 0 pack into
        // nothing, where a dictionary would hash every row.
        "chip",
        "tile_x",
        "tile_y",
        "run",
    ] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(c), false)
            .set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
    }
    // Durations do not grow along the ring: their bytes split into streams (the high
    // ones all zero) compress better than their deltas (0.76 against 0.93 bytes per zone
    // in scale-bench).
    b = b
        .set_column_dictionary_enabled(ColumnPath::from("duration_ns"), false)
        .set_column_encoding(ColumnPath::from("duration_ns"), Encoding::BYTE_STREAM_SPLIT);
    // Min/max of the dictionary strings would compare every row's string (a fifth of the
    // writer's time); their dictionaries are tiny and say more. Columns whose every row
    // group spans nearly their whole range (sites, lines, depths, durations, values) gain
    // nothing from min/max either: a filter on them cannot skip a row group. The place
    // (chip, tile, run) and time columns keep theirs.
    for c in [
        "risc",
        "op",
        "name",
        "file",
        "site",
        "line",
        "depth",
        "duration_ns",
        "value",
        "count",
        "kind",
        "counter",
    ] {
        b = b.set_column_statistics_enabled(ColumnPath::from(c), EnabledStatistics::None);
    }
    b.build()
}

/// The zones and marks tables of one partition (or of the whole run), open while its rings
/// come. A partition's ops table is written at the end ([`Sink::finish`]), on its own.
struct Tables {
    zones: Table,
    marks: Table,
}

impl Tables {
    /// Writes both tables' open row groups.
    fn close_open_groups(&mut self) -> Result<()> {
        self.zones.close_open_group()?;
        self.marks.close_open_group()
    }

    /// Commits both tables; their paths.
    fn commit(self) -> Result<[PathBuf; 2]> {
        Ok([self.zones.commit()?, self.marks.commit()?])
    }
}

/// Which table of a partition a batch goes to.
#[derive(Clone, Copy, Debug)]
enum Which {
    Zones,
    Marks,
    Ops,
}

/// What makes a partition's tables: where they go, their schemas and properties.
#[derive(Clone)]
struct Maker {
    layout: Layout,
    inputs: Inputs,
    /// The zones, marks and ops schemas.
    schemas: [SchemaRef; 3],
    props: WriterProperties,
}

impl Maker {
    /// The directory everything goes under.
    fn root(&self) -> &Path {
        match &self.layout {
            Layout::Files(dir) | Layout::Dataset { dir, .. } => dir,
        }
    }

    /// The file of table `which` (for chip `chip` in a dataset).
    fn path(&self, which: Which, chip: u32) -> PathBuf {
        let (file, table) = match which {
            Which::Zones => (ZONES_FILE, "zones"),
            Which::Marks => (MARKS_FILE, "marks"),
            Which::Ops => (OPS_FILE, "ops"),
        };
        match &self.layout {
            Layout::Files(dir) => dir.join(file),
            Layout::Dataset { dir, host } => dir
                .join(table)
                .join(format!("host={host}"))
                .join(format!("chip={chip}"))
                .join("part-0.parquet"),
        }
    }

    /// Table `which` of partition `chip`, its file created.
    fn table(&self, which: Which, chip: u32) -> Result<Table> {
        let schema = self.schemas[which as usize].clone();
        let path = self.path(which, chip);
        Table::create(self.root(), path, schema, self.props.clone(), &self.inputs)
    }

    /// The zones and marks tables of partition `chip`.
    fn tables(&self, chip: u32) -> Result<Tables> {
        Ok(Tables {
            zones: self.table(Which::Zones, chip)?,
            marks: self.table(Which::Marks, chip)?,
        })
    }
}

/// Work for the writer thread.
enum Job {
    /// A batch for table `Which` of partition (chip) key `u32`.
    Rows(u32, Which, RecordBatch),
    /// Partition `u32` has had its last ring: commit its zones and marks.
    Close(u32),
}

/// What the writer thread hands back: the partitions still open, the files committed, and
/// the most partitions it held open at once.
type Written = (BTreeMap<u32, Tables>, Vec<PathBuf>, usize);

/// The zones and marks tables, per chip in a dataset (one entry, key 0, for plain files),
/// encoded and written on their own thread: the caller builds the next ring's batches
/// meanwhile (the encoding, dictionary strings and zstd, is about a third of the work). A
/// partition's files are made at its first batch and committed after its last ring, so a
/// dataset holds open only the partitions whose rings are coming (one when rings come chip
/// by chip), not every chip's.
struct Writer {
    tx: Option<std::sync::mpsc::SyncSender<Vec<Job>>>,
    thread: Option<std::thread::JoinHandle<Result<Written>>>,
    /// Batches not handed over yet, in order, and their rows: handed over together once
    /// they reach [`HAND_OVER_ROWS`] rows or [`HAND_OVER_JOBS`] batches (a wake of the
    /// writer per two-zone ring was a tenth of an import of 150,000 rings).
    jobs: Vec<Job>,
    rows: usize,
}

/// Rows [`Writer::jobs`] holds before they are handed over.
const HAND_OVER_ROWS: usize = 8192;
/// Batches [`Writer::jobs`] holds before they are handed over.
const HAND_OVER_JOBS: usize = 64;

impl Writer {
    fn start(maker: Maker) -> Writer {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Job>>(4);
        let thread = std::thread::spawn(move || {
            let mut tables: BTreeMap<u32, Tables> = BTreeMap::new();
            let mut files = Vec::new();
            let mut most_open = 0;
            let mut last = None;
            for job in rx.into_iter().flatten() {
                let (key, which, batch) = match job {
                    Job::Rows(key, which, batch) => (key, which, batch),
                    Job::Close(key) => {
                        // A partition whose rings made no row has its empty tables too.
                        let t = match tables.remove(&key) {
                            Some(t) => t,
                            None => maker.tables(key)?,
                        };
                        files.extend(t.commit()?);
                        continue;
                    }
                };
                // A partition the batches left closes its open row groups: their column
                // writers (a zstd context each, about a mebibyte a table) are not held for
                // every chip whose rings interleave. Rings come chip by chip, so a chip's row
                // groups are the ones it would have had (rings of chips that interleave make
                // more, smaller ones).
                if let Some(t) = last.filter(|&l| l != key).and_then(|l| tables.get_mut(&l)) {
                    t.close_open_groups()?;
                }
                last = Some(key);
                let open = tables.len();
                let t = match tables.entry(key) {
                    std::collections::btree_map::Entry::Occupied(t) => t.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => {
                        most_open = most_open.max(open + 1);
                        e.insert(maker.tables(key)?)
                    }
                };
                match which {
                    Which::Zones => t.zones.write(batch)?,
                    Which::Marks => t.marks.write(batch)?,
                    Which::Ops => {
                        return Err(Error::Internal(
                            "the Parquet writer thread takes no ops rows".into(),
                        ))
                    }
                }
            }
            Ok((tables, files, most_open))
        });
        Writer {
            tx: Some(tx),
            thread: Some(thread),
            jobs: Vec::new(),
            rows: 0,
        }
    }

    /// Hands a batch over, a small one with the next ones; if the writer stopped, its
    /// error.
    fn send(&mut self, key: u32, which: Which, batch: RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        self.jobs.push(Job::Rows(key, which, batch));
        if self.rows >= HAND_OVER_ROWS || self.jobs.len() >= HAND_OVER_JOBS {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Partition `key` has had its last ring: its files are committed after its batches.
    fn close(&mut self, key: u32) {
        self.jobs.push(Job::Close(key));
    }

    /// Hands the batches held over.
    fn hand_over(&mut self) -> Result<()> {
        if self.jobs.is_empty() {
            return Ok(());
        }
        self.rows = 0;
        let jobs = std::mem::take(&mut self.jobs);
        let sent = self.tx.as_ref().map(|tx| tx.send(jobs));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => match self.join() {
                Err(e) => Err(e),
                Ok(_) => Err(Error::Internal("the Parquet writer stopped".into())),
            },
        }
    }

    /// Waits for every batch to be written; the partitions still open, to commit, and the
    /// files committed.
    fn join(&mut self) -> Result<Written> {
        if !self.jobs.is_empty() && self.tx.is_some() {
            self.hand_over()?;
        }
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Internal("the Parquet writer thread panicked".into())),
            None => Err(Error::Internal("the Parquet writer already stopped".into())),
        }
    }
}

impl Drop for Writer {
    /// A writer dropped before [`Writer::join`] (a drive stopped on an error) waits for its
    /// thread, which drops the uncommitted files: none is left behind.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What [`ParquetSink`] wrote.
#[derive(Clone, Debug, Default)]
pub struct ParquetRows {
    /// Zone rows.
    pub zones: u64,
    /// Mark rows.
    pub marks: u64,
    /// Op rows.
    pub ops: u64,
}

/// Writes the zones, marks and ops tables ([`super`]).
pub struct ParquetSink {
    layout: Layout,
    /// The command's input guard: no table is written over one of its inputs.
    inputs: Inputs,
    /// The dictionaries of the profile ([`Profile::uid`]) whose rings are coming.
    dicts: Option<(u64, Dictionaries)>,
    /// What makes the tables (from [`Sink::begin`]).
    maker: Option<Maker>,
    /// Every partition (chip) key, and the index of its last ring if it has rings (from
    /// [`Sink::begin`]).
    partitions: BTreeMap<u32, Option<usize>>,
    /// The thread that encodes and writes the tables (from [`Sink::begin`]).
    writer: Option<Writer>,
    /// What a ring given in pieces carries from piece to piece: the ends of its zones still
    /// open (a zone's depth counts them), earliest first. Cleared at each ring's first view.
    open: BinaryHeap<Reverse<u64>>,
    /// Rows written (after [`Sink::finish`]).
    pub written: ParquetRows,
    /// The most partitions whose rings were being written at once (after [`Sink::finish`]).
    pub(crate) most_open: usize,
}

impl ParquetSink {
    /// The three files in `dir` (which must exist or be creatable), never written over one
    /// of `inputs`.
    pub fn new(dir: &Path, inputs: &Inputs) -> ParquetSink {
        ParquetSink::with(Layout::Files(dir.to_path_buf()), inputs)
    }

    /// A hive-partitioned dataset under `dir` for host `host` (letters, digits, `.`, `_`,
    /// `-`; checked when the drive begins): see [`super`]. No file is written over one of
    /// `inputs`.
    pub fn dataset(dir: &Path, host: &str, inputs: &Inputs) -> ParquetSink {
        ParquetSink::with(
            Layout::Dataset {
                dir: dir.to_path_buf(),
                host: host.to_string(),
            },
            inputs,
        )
    }

    fn with(layout: Layout, inputs: &Inputs) -> ParquetSink {
        ParquetSink {
            layout,
            inputs: inputs.clone(),
            dicts: None,
            maker: None,
            partitions: BTreeMap::new(),
            writer: None,
            most_open: 0,
            open: BinaryHeap::new(),
            written: ParquetRows::default(),
        }
    }

    fn partitioned(&self) -> bool {
        matches!(self.layout, Layout::Dataset { .. })
    }
}

/// `host` as a dataset's host name, or an error that says what is accepted: checked before
/// anything is written.
pub fn check_host(host: &str) -> Result<()> {
    if valid_host(host) {
        return Ok(());
    }
    Err(Error::Argument {
        what: format!(
            "dataset host name {host:?}: use 1 to 128 letters, digits, '.', '_' or '-' (it names a directory host=<name>)"
        ),
    })
}

/// Whether `host` can name a partition directory: 1 to 128 letters, digits, `.`, `_`,
/// `-`, and not `.` or `..`.
fn valid_host(host: &str) -> bool {
    (1..=128).contains(&host.len())
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && host != "."
        && host != ".."
}

impl Sink for ParquetSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let with_chip = !self.partitioned();
        if let Layout::Dataset { host, .. } = &self.layout {
            check_host(host)?;
        }
        let key = |chip: u32| if with_chip { 0 } else { chip };
        let mut partitions = BTreeMap::new();
        if with_chip {
            partitions.insert(0, None);
        }
        for (i, r) in p.readout.rings.iter().enumerate() {
            partitions.insert(key(r.id.chip), Some(i));
        }
        for o in &p.ops {
            partitions.entry(key(o.chip)).or_insert(None);
        }
        let counters = tables::counter_names(p.oplog.as_ref());
        let maker = Maker {
            layout: self.layout.clone(),
            inputs: self.inputs.clone(),
            schemas: [
                tables::zones_schema(with_chip, &counters),
                tables::marks_schema(with_chip),
                tables::ops_schema(with_chip),
            ],
            props: properties(),
        };
        // Every file may be written (not a link, a device, an input): said before any ring
        // is read, though each is made only when its partition's rings come.
        for &chip in partitions.keys() {
            for which in [Which::Zones, Which::Marks, Which::Ops] {
                crate::atomic::check_destination(&maker.path(which, chip), &self.inputs)?;
            }
        }
        self.writer = Some(Writer::start(maker.clone()));
        self.maker = Some(maker);
        self.partitions = partitions;
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }

    /// The batches are built from the ring's records (module `direct`), not from its zones.
    fn wants_zones(&self) -> bool {
        false
    }

    /// A piece's zones and marks are rows appended after the ring's earlier ones, and a
    /// row group closes at a fixed count of rows (`Table::write`): the files are the
    /// ones the whole rings make. Between pieces only the open zones' ends are kept.
    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        let with_chip = !self.partitioned();
        if v.part().first {
            self.open.clear();
        }
        if self.dicts.as_ref().is_none_or(|(uid, _)| *uid != p.uid()) {
            self.dicts = Some((p.uid(), Dictionaries::new(p)));
        }
        let key = if with_chip { 0 } else { v.lane.chip };
        let closes = v.part().last && self.partitions.get(&key) == Some(&Some(v.index));
        let (Some((_, d)), Some(Maker { schemas, .. }), Some(w)) = (
            self.dicts.as_ref(),
            self.maker.as_ref(),
            self.writer.as_mut(),
        ) else {
            return Ok(());
        };
        let (written, open) = (&mut self.written, &mut self.open);
        // A long ring goes in batches of `direct::BATCH_ROWS` rows: one ring's whole table
        // was ~90 bytes a zone.
        direct::ring_batches_by(
            &schemas[0],
            &schemas[1],
            d,
            p,
            v,
            with_chip,
            direct::BATCH_ROWS,
            open,
            &|e| {
                Error::Internal(format!(
                    "Parquet table of chip {key}: building a batch: {e}"
                ))
            },
            &mut |is_zones, batch| {
                let n = batch.num_rows() as u64;
                if is_zones {
                    written.zones += n;
                    w.send(key, Which::Zones, batch)
                } else {
                    written.marks += n;
                    w.send(key, Which::Marks, batch)
                }
            },
        )?;
        if closes {
            w.close(key);
        }
        Ok(())
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let with_chip = !self.partitioned();
        let (Some(maker), Some(mut w)) = (self.maker.take(), self.writer.take()) else {
            return Ok(Finished::default());
        };
        let (mut open, mut files, most_open) = w.join()?;
        self.most_open = most_open;
        // The zones and marks of partitions without rings (a chip only an op names), then
        // the ops, a partition at a time: a run fed in parts knows its ops' device spans
        // only now.
        for (&key, last) in &self.partitions {
            let tables = match open.remove(&key) {
                Some(t) => t,
                None if last.is_none() => maker.tables(key)?,
                None => continue,
            };
            files.extend(tables.commit()?);
        }
        for &key in self.partitions.keys() {
            let b = tables::ops_batch(
                &maker.schemas[Which::Ops as usize],
                &p.ops,
                &p.device_ops,
                (!with_chip).then_some(key),
            )
            .map_err(|e| Error::Internal(format!("Parquet ops table: building a batch: {e}")))?;
            let mut t = maker.table(Which::Ops, key)?;
            t.write(b)?;
            self.written.ops += t.rows;
            files.push(t.commit()?);
        }
        Ok(Finished {
            files,
            issues: Vec::new(),
        })
    }
}

/// Writes `profile` as a hive-partitioned dataset under `dir` for host `host`
/// (`DIR/<table>/host=<host>/chip=<n>/part-0.parquet`; see [`super`]): what `--dataset DIR`
/// does. An existing partition of the same host and chip is replaced; one of `inputs` is not.
pub fn write_dataset(
    dir: &Path,
    host: &str,
    profile: &Profile,
    inputs: &Inputs,
) -> Result<(Finished, ParquetRows)> {
    let mut s = ParquetSink::dataset(dir, host, inputs);
    let mut done = sink::drive(profile, &mut [&mut s])?;
    Ok((done.pop().unwrap_or_default(), s.written))
}

/// This machine's name as a dataset host name: the kernel's host name with characters a
/// partition directory cannot hold replaced by `_` (`localhost` when it has none).
pub fn default_host() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name: String = raw
        .trim()
        .chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if valid_host(&name) {
        name
    } else {
        "localhost".into()
    }
}

#[cfg(test)]
mod full_disk;
