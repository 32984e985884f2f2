//! The Parquet tables as a sink: three files in a directory, or a hive-partitioned dataset.

use super::tables::{self, Dictionaries};
use super::{MARKS_FILE, OPS_FILE, ROW_GROUP_ROWS, ZONES_FILE};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::profile::{Profile, RingView};
use crate::sink::{self, Finished, Sink};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where the tables go.
#[derive(Clone, Debug)]
enum Layout {
    /// `ttprof_zones.parquet`, `ttprof_marks.parquet`, `ttprof_ops.parquet` in a directory.
    Files(PathBuf),
    /// `DIR/<table>/host=<host>/chip=<n>/part-0.parquet`.
    Dataset { dir: PathBuf, host: String },
}

/// One Parquet file being written.
struct Table {
    path: PathBuf,
    schema: SchemaRef,
    writer: ArrowWriter<AtomicFile>,
    rows: u64,
}

impl Table {
    fn create(path: PathBuf, schema: SchemaRef, props: WriterProperties) -> Result<Table> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create directory", e))?;
        }
        let file = AtomicFile::create(&path)?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| pq_error(&path, e))?;
        Ok(Table { path, schema, writer, rows: 0 })
    }

    /// Appends `batch`; closes the row group once [`ROW_GROUP_ROWS`] rows are buffered.
    fn write(&mut self, batch: std::result::Result<RecordBatch, arrow_schema::ArrowError>) -> Result<()> {
        let batch = batch.map_err(|e| Error::Other(format!("{}: building a batch: {e}", self.path.display())))?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.rows += batch.num_rows() as u64;
        self.writer.write(&batch).map_err(|e| pq_error(&self.path, e))?;
        if self.writer.in_progress_rows() >= ROW_GROUP_ROWS {
            self.writer.flush().map_err(|e| pq_error(&self.path, e))?;
        }
        Ok(())
    }

    /// Writes the footer and renames the file into place.
    fn commit(self) -> Result<PathBuf> {
        let file = self.writer.into_inner().map_err(|e| pq_error(&self.path, e))?;
        file.commit()?;
        Ok(self.path)
    }
}

fn pq_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
            Ok(io) => Error::io(path, "write", *io),
            Err(other) => Error::Other(format!("{}: writing Parquet: {other}", path.display())),
        },
        e => Error::Other(format!("{}: writing Parquet: {e}", path.display())),
    }
}

/// zstd pages, dictionary strings, delta-encoded times and cycles, byte-stream-split
/// durations.
fn properties() -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap_or_default()))
        .set_max_row_group_row_count(None)
        .set_created_by(format!("ttprof {}", env!("CARGO_PKG_VERSION")));
    for c in ["start_cycles", "end_cycles", "start_ns", "end_ns", "cycles", "ns", "value"] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(c), false)
            .set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
    }
    // Durations do not grow along the ring: their bytes split into streams (the high
    // ones all zero) compress better than their deltas (0.77 against 1.13 bytes per zone
    // in scale-bench).
    b = b
        .set_column_dictionary_enabled(ColumnPath::from("duration_ns"), false)
        .set_column_encoding(ColumnPath::from("duration_ns"), Encoding::BYTE_STREAM_SPLIT);
    b.build()
}

/// The three tables of one partition (or of the whole run).
struct Tables {
    zones: Table,
    marks: Table,
    ops: Table,
}

/// What [`ParquetSink`] wrote.
#[derive(Clone, Debug, Default)]
pub struct Written {
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
    /// The dictionaries of the profile ([`Profile::uid`]) whose rings are coming.
    dicts: Option<(u64, Dictionaries)>,
    /// Per chip in a dataset; one entry (key 0) for plain files.
    tables: BTreeMap<u32, Tables>,
    /// Rows written (after [`Sink::finish`]).
    pub written: Written,
}

impl ParquetSink {
    /// The three files in `dir` (which must exist or be creatable).
    pub fn new(dir: &Path) -> ParquetSink {
        ParquetSink::with(Layout::Files(dir.to_path_buf()))
    }

    /// A hive-partitioned dataset under `dir` for host `host` (letters, digits, `.`, `_`,
    /// `-`; checked when the drive begins): see [`super`].
    pub fn dataset(dir: &Path, host: &str) -> ParquetSink {
        ParquetSink::with(Layout::Dataset { dir: dir.to_path_buf(), host: host.to_string() })
    }

    fn with(layout: Layout) -> ParquetSink {
        ParquetSink { layout, dicts: None, tables: BTreeMap::new(), written: Written::default() }
    }

    fn partitioned(&self) -> bool {
        matches!(self.layout, Layout::Dataset { .. })
    }

    /// The file of `table` (for chip `chip` in a dataset).
    fn path(&self, table: &str, chip: u32) -> PathBuf {
        match &self.layout {
            Layout::Files(dir) => dir.join(match table {
                "zones" => ZONES_FILE,
                "marks" => MARKS_FILE,
                _ => OPS_FILE,
            }),
            Layout::Dataset { dir, host } => {
                dir.join(table).join(format!("host={host}")).join(format!("chip={chip}")).join("part-0.parquet")
            }
        }
    }
}

/// Whether `host` can name a partition directory: 1 to 128 letters, digits, `.`, `_`,
/// `-`, and not `.` or `..`.
fn valid_host(host: &str) -> bool {
    (1..=128).contains(&host.len())
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && host != "."
        && host != ".."
}

impl Sink for ParquetSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let with_chip = !self.partitioned();
        let chips: BTreeSet<u32> = if let Layout::Dataset { host, .. } = &self.layout {
            if !valid_host(host) {
                return Err(Error::Other(format!(
                    "dataset host name {host:?}: use 1 to 128 letters, digits, '.', '_' or '-' (it names a directory \
                     host=<name>)"
                )));
            }
            p.readout.rings.iter().map(|r| r.id.chip).chain(p.ops.iter().map(|o| o.chip)).collect()
        } else {
            [0].into()
        };
        let props = properties();
        for &chip in &chips {
            let zones = Table::create(self.path("zones", chip), tables::zones_schema(with_chip), props.clone())?;
            let marks = Table::create(self.path("marks", chip), tables::marks_schema(with_chip), props.clone())?;
            let ops = Table::create(self.path("ops", chip), tables::ops_schema(with_chip), props.clone())?;
            self.tables.insert(chip, Tables { zones, marks, ops });
        }
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        let with_chip = !self.partitioned();
        if self.dicts.as_ref().is_none_or(|(uid, _)| *uid != p.uid()) {
            self.dicts = Some((p.uid(), Dictionaries::new(&p.labels, &p.ops)));
        }
        let Some((_, d)) = self.dicts.as_ref() else { return Ok(()) };
        let key = if with_chip { 0 } else { v.lane.chip };
        let Some(t) = self.tables.get_mut(&key) else {
            return Err(Error::Other(format!("internal: no Parquet partition for chip {}", v.lane.chip)));
        };
        t.zones.write(tables::zones_batch(&t.zones.schema, d, &v.lane, &v.zones, with_chip))?;
        t.marks.write(tables::marks_batch(&t.marks.schema, d, &v.lane, &v.marks, with_chip))?;
        self.written.zones += v.zones.len() as u64;
        self.written.marks += v.marks.len() as u64;
        Ok(())
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        // Ops last: a run fed in parts knows its ops' device spans only now.
        let with_chip = !self.partitioned();
        for (&chip, t) in self.tables.iter_mut() {
            t.ops.write(tables::ops_batch(&t.ops.schema, &p.ops, (!with_chip).then_some(chip)))?;
            self.written.ops += t.ops.rows;
        }
        let mut files = Vec::new();
        let mut ops = Vec::new();
        for (_, t) in std::mem::take(&mut self.tables) {
            files.push(t.zones.commit()?);
            files.push(t.marks.commit()?);
            ops.push(t.ops);
        }
        for t in ops {
            files.push(t.commit()?);
        }
        Ok(Finished { files, issues: Vec::new() })
    }
}

/// Writes `profile` as a hive-partitioned dataset under `dir` for host `host`
/// (`DIR/<table>/host=<host>/chip=<n>/part-0.parquet`; see [`super`]): what `--dataset DIR`
/// does. An existing partition of the same host and chip is replaced.
pub fn write_dataset(dir: &Path, host: &str, profile: &Profile) -> Result<(Finished, Written)> {
    let mut s = ParquetSink::dataset(dir, host);
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
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
        .collect();
    if valid_host(&name) {
        name
    } else {
        "localhost".into()
    }
}
