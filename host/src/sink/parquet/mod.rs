//! Parquet tables of a run: `ttprof_zones.parquet` (one row per zone), `ttprof_marks.parquet`
//! (events, data and sums) and `ttprof_ops.parquet` (ops), for captures of any size and any
//! engine (DuckDB, pandas/pyarrow, Polars, Spark, Trino, DataFusion).
//!
//! Written streaming ([`ParquetSink`]): each ring's zones and marks become one Arrow batch
//! when the ring is visited, built straight from the ring's records (`direct`), not from
//! the model's per-zone structs, a long ring in batches of `ROW_GROUP_ROWS` rows, and a row
//! group is closed as soon as it holds `ROW_GROUP_ROWS` rows, a batch split there (a long
//! ring spans several row groups, small rings share one): memory stays at one batch plus
//! the encoded row group, whatever a ring's length. A ring may come in pieces
//! ([`crate::sink::Part`], issue 41): each piece's zones and marks are appended after the
//! ring's earlier ones, and only the ends of the zones still open (their depths count
//! them: as many as the nesting depth) are carried between pieces. Since a row group ends
//! at a fixed count of rows, not where a batch ends, the files are the ones the whole rings
//! make, byte for byte. Strings (RISC, name, file, op, kind)
//! are dictionary-encoded Arrow columns whose Parquet pages ttprof writes itself from the
//! keys (`keys`: a dictionary page of the strings the row group uses, an `RLE_DICTIONARY`
//! page of indices; arrow-rs would hash every row's string again), without min/max
//! statistics; the other columns go through arrow-rs's column writers: times and
//! cycles `DELTA_BINARY_PACKED` (zones come in opening order, so starts grow by small
//! steps), and so do `chip`, `tile_x`, `tile_y` and `run` (constant through a ring),
//! durations `BYTE_STREAM_SPLIT`; every page is zstd-compressed, one page per column per
//! row group; only the place and time columns carry min/max statistics. The end in ns
//! is not stored: it is `start_ns + duration_ns` (a column of it cost about 0.93 bytes per
//! zone); the duration is stored once, in ns: in cycles it is `end_cycles - start_cycles`
//! (a column of it would cost about one more byte per zone).
//!
//! # Schema
//!
//! `ttprof_zones.parquet`, one row per zone, rings in readout order, each ring's zones in
//! the order they open:
//!
//! | column | type | meaning |
//! | --- | --- | --- |
//! | `chip` | uint32 | chip (device) index |
//! | `tile_x`, `tile_y` | uint16 | the tile's NoC0 coordinate |
//! | `risc` | string (dict) | `BRISC`, `NCRISC`, `TRISC0`, `TRISC1`, `TRISC2` |
//! | `run` | uint32, null | run (launch) id; null for records of no run |
//! | `op` | string (dict), null | the op of the run (op log `op_code`, or `run <id>`) |
//! | `site` | uint32 | the zone's distinct site (name, file, line) in this run's profile |
//! | `name` | string (dict) | zone name (`unresolved-site-<id>` when unnamed) |
//! | `file`, `line` | string (dict), uint32 | source location (empty, 0 when unnamed) |
//! | `depth` | uint16 | nesting depth, 0 for an outermost zone |
//! | `start_cycles`, `end_cycles` | uint64 | device cycles of the tile |
//! | `start_ns` | int64 | host ns from the clock fit (rounded) |
//! | `duration_ns` | int64 | the end in host ns (rounded) minus `start_ns`: the end is `start_ns + duration_ns` (in cycles: `end_cycles - start_cycles`) |
//! | `value` | uint32, null | a value zone's value (`value_zone!`); null for a plain zone, and for a counted zone whose op armed no counter in its bank |
//! | `counter` | dictionary, null | for a counted zone (`counted_zone!`): the performance counter `value` counts (`FPU_COUNTER`), as `ttprof run --counters` armed it for the op; null otherwise |
//! | one per counter armed in the run (`FPU_COUNTER`, ...) | uint32, null | a counted zone's `value` in the column of the counter it counted; null in the others and for every other zone (the columns follow `counter`'s dictionary order: the order the op log first arms them) |
//!
//! `ttprof_marks.parquet`, one row per event, data or sum record: `chip`, `tile_x`,
//! `tile_y`, `risc`, `run`, `op`, `site`, `name`, `file`, `line` as above, then `kind`
//! (`event`, `data`, `sum`), `cycles` (uint64), `ns` (int64), `value` (uint64, null for an
//! event: the data payload, or a sum's total cycles) and `count` (uint32, null unless a sum:
//! its number of measurements).
//!
//! `ttprof_ops.parquet`, one row per op: `chip`, `run`, `op` (string), `host_start_ns`,
//! `host_end_ns` (int64, null: where the op sits on the host timeline), `kernel_start_ns`,
//! `kernel_end_ns` (first KERNEL start to last KERNEL end), `fw_start_ns`, `fw_end_ns` (the
//! FW zones' span), all int64 host ns, null when unknown.
//!
//! # Dataset
//!
//! [`write_dataset`] writes the same tables as a hive-partitioned dataset,
//! `DIR/<table>/host=<name>/chip=<n>/part-0.parquet` (`<table>` is `zones`, `marks` or
//! `ops`); the files leave out `chip`, which the path carries. Captures of several hosts
//! of a multi-card system then sit side by side and any engine reads them as one table
//! (DuckDB: `read_parquet('DIR/zones/*/*/*.parquet', hive_partitioning = true)`).
//!
//! A partition's zones and marks files are made at its chip's first ring and committed
//! after its last; its ops file is written at the end. A dataset of many chips whose rings
//! come chip by chip (as a device log lists them) holds one partition open at a time, not
//! every chip's three files.

mod direct;
mod keys;
mod sink;
mod tables;

pub(crate) use sink::write_batch;
pub use sink::{check_host, default_host, write_dataset, ParquetRows, ParquetSink};
#[cfg(test)]
use tables::{marks_schema, zones_schema};

/// The zones table's file name.
pub const ZONES_FILE: &str = "ttprof_zones.parquet";
/// The marks (events, data, sums) table's file name.
pub const MARKS_FILE: &str = "ttprof_marks.parquet";
/// The ops table's file name.
pub const OPS_FILE: &str = "ttprof_ops.parquet";

/// The rows of a row group (a file's or partition's last one may hold fewer): a group is
/// closed as soon as it holds this many, wherever a batch or a ring ends.
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 16;

#[cfg(test)]
pub(crate) mod tests;
