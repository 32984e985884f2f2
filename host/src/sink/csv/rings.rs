//! `profile_log_device.csv` written one ring at a time from a capture's spool: decode the
//! ring's payload stream into its records, check its launch times, resolve its sites
//! through the op log, write its CSV rows (and hand the ring to the streaming sinks), and
//! drop it before the next ring. Memory stays at one ring's records.

use super::{self as csv, RowWriter};
use crate::atomic::write_atomic;
use crate::capture::payload::decode_spooled_records;
use crate::capture::Captured;
use crate::decode::{Records, ZoneTable};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::profile::Profile;
use crate::readout::{checks, Readout, RingReport};
use crate::resolve::{Resolution, Resolver, RingSites};
use crate::sink::stream::Stream;
use crate::sink::{Finished, Sink};
use crate::sites::SiteTable;
use crate::timebase::Timebase;
use riscv_linker::devfile::Geometry;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct CsvWritten {
    /// CSV rows (markers) written.
    pub rows: u64,
    /// Zones written.
    pub zones: u64,
    /// Records decoded.
    pub records: u64,
    /// Site-carrying records bound to metadata, and not.
    pub resolved: u64,
    /// Site-carrying records that could not be named.
    pub unresolved: u64,
    /// Decode, launch-time and naming problems.
    pub issues: Vec<Issue>,
}

/// Writes `profile_log_device.csv` ring by ring.
pub struct RingCsv<'a> {
    geometry: Geometry,
    oplog: Option<&'a OpLog>,
    resolver: Option<Resolver<'a>>,
    rows: RowWriter,
    /// Some ring was written without any naming.
    named_unresolved: bool,
    /// Counts and issues so far.
    pub written: CsvWritten,
}

impl<'a> RingCsv<'a> {
    /// Sites are resolved through `oplog` when given; otherwise records are written as
    /// `unresolved-site-<id>` and a warning says how many.
    pub fn new(geometry: Geometry, oplog: Option<&'a OpLog>) -> RingCsv<'a> {
        RingCsv {
            geometry,
            oplog,
            resolver: oplog.map(Resolver::new),
            rows: RowWriter::new(),
            named_unresolved: false,
            written: CsvWritten::default(),
        }
    }

    /// Writes the CSV's two header lines (nominal clock: a capture has no clock fit).
    pub fn header(&self, w: &mut impl Write) -> io::Result<()> {
        csv::header(w, self.geometry, self.geometry.arch.aiclk_mhz())
    }

    /// Writes one ring: `report` gives its identity (its `records` are ignored), `table` its
    /// records, named through the op log (if any).
    pub fn ring(
        &mut self,
        w: &mut impl Write,
        report: &RingReport,
        table: &ZoneTable,
    ) -> io::Result<()> {
        self.write_ring(w, report, table.to_records(), None)
            .map(drop)
    }

    /// Writes one ring (as [`RingCsv::ring`], or [`RingCsv::ring_with_sites`] with
    /// `uniform`) and returns it as a part of the run for the sinks fed in parts
    /// ([`crate::sink::stream`]): named as in the CSV, placed with `timebase`.
    pub(crate) fn ring_part(
        &mut self,
        w: &mut impl Write,
        report: &RingReport,
        records: Records,
        uniform: Option<&Arc<SiteTable>>,
        timebase: &Timebase,
    ) -> io::Result<Profile> {
        let (one, res) = self.write_ring(w, report, records, uniform)?;
        Ok(Profile::part(
            one,
            res,
            self.oplog.cloned(),
            timebase.clone(),
        ))
    }

    /// Writes one ring whose every run used the kernel with site table `sites` (an
    /// in-process producer that knows its sites, like `ttprof_rt::sim::Sim`).
    pub fn ring_with_sites(
        &mut self,
        w: &mut impl Write,
        report: &RingReport,
        table: &ZoneTable,
        sites: &Arc<SiteTable>,
    ) -> io::Result<()> {
        self.write_ring(w, report, table.to_records(), Some(sites))
            .map(drop)
    }

    /// Writes the ring's rows; returns the ring as a one-ring readout and its naming.
    fn write_ring(
        &mut self,
        w: &mut impl Write,
        report: &RingReport,
        records: Records,
        uniform: Option<&Arc<SiteTable>>,
    ) -> io::Result<(Readout, Resolution)> {
        let (one, res) = self.name_ring(report, records, uniform);
        self.written.rows +=
            self.rows
                .ring(w, report.id, &one.rings[0].records, &res.rings[0], None)?;
        Ok((one, res))
    }

    /// One ring as a part of the run ([`crate::sink::stream`]), named and counted as
    /// `RingCsv::ring_part` does, without writing its CSV rows.
    pub fn part_only(
        &mut self,
        report: &RingReport,
        table: &ZoneTable,
        uniform: Option<&Arc<SiteTable>>,
        timebase: &Timebase,
    ) -> Profile {
        let (one, res) = self.name_ring(report, table.to_records(), uniform);
        Profile::part(one, res, self.oplog.cloned(), timebase.clone())
    }

    /// The ring's records as a one-ring readout, and their naming (one entry per ring).
    fn name_ring(
        &mut self,
        report: &RingReport,
        records: Records,
        uniform: Option<&Arc<SiteTable>>,
    ) -> (Readout, Resolution) {
        let id = report.id;
        self.written
            .issues
            .extend(checks::launch_times(&records, Some(id.location())));
        self.written.records += records.len() as u64;
        self.written.zones += records.zones() as u64;
        let mut one = Readout {
            geometry: self.geometry,
            rings: vec![report.clone()],
            issues: Vec::new(),
            bus_bytes: 0,
            tiles: 1,
            unused_tiles: 0,
        };
        one.rings[0].records = records;
        let mut res = match (uniform, &mut self.resolver) {
            (Some(t), _) => Resolution::uniform(&one, t.clone()),
            (None, Some(r)) => r.resolve(&one),
            (None, None) => {
                let r = &one.rings[0].records;
                let n = (0..r.len())
                    .filter(|&i| crate::resolve::has_site(r.kind[i]))
                    .count() as u64;
                Resolution {
                    rings: vec![RingSites::default()],
                    unresolved: n,
                    ..Resolution::default()
                }
            }
        };
        self.written.issues.append(&mut res.issues);
        self.written.resolved += res.resolved;
        self.written.unresolved += res.unresolved;
        self.named_unresolved |= uniform.is_none() && self.resolver.is_none();
        if res.rings.is_empty() {
            res.rings.push(RingSites::default());
        }
        (one, res)
    }

    /// The issues, with a warning if nothing could be named for want of an op log.
    pub fn finish(mut self) -> CsvWritten {
        if self.named_unresolved && self.written.unresolved > 0 {
            let n = self.written.unresolved;
            self.written.issues.push(
                Issue::warning(
                    None,
                    format!("without an op log: {n} record(s) are written as unresolved-site-<id>"),
                )
                .with_count(n),
            );
        }
        self.written
    }
}

/// Writes the capture's device CSV to `path` (atomically) ring by ring, and feeds every
/// ring as a part ([`crate::sink::stream`]) to `sinks` (the Perfetto trace, the Parquet
/// tables: sinks that can stream; none for the CSV alone), placed with `timebase`: every
/// output in one pass over the spool, memory at one ring's records. `progress` is told how
/// many rings are written after each one. Returns the CSV's
/// counts, what each sink wrote, and the run's issues (the op log's host times against the
/// device, records off the timeline). The CSV is never written over one of `inputs`.
pub fn write_streamed(
    path: &Path,
    inputs: &Inputs,
    captured: &mut Captured,
    oplog: Option<&OpLog>,
    timebase: &Timebase,
    sinks: Vec<&mut dyn Sink>,
    progress: &mut dyn FnMut(u64),
) -> Result<(CsvWritten, Vec<Finished>, Vec<Issue>)> {
    let mut rings = captured.readout.clone();
    for r in &mut rings.rings {
        r.records = Default::default();
    }
    let res = Resolution::unresolved(&rings);
    let mut run = Profile::resolved(rings, res, oplog.cloned(), timebase.clone());
    let streaming = !sinks.is_empty();
    let mut stream = Stream::begin(&run, sinks)?;
    let mut csv = RingCsv::new(captured.readout.geometry, oplog);
    let mut decode_issues = Vec::new();
    let mut failed: Option<crate::Error> = None;
    let spool = &mut captured.payload;
    write_atomic(path, inputs, |w| {
        csv.header(w)?;
        for (i, ring) in captured.readout.rings.iter().enumerate() {
            let (records, issue) =
                decode_spooled_records(spool, ring.id).map_err(io::Error::other)?;
            decode_issues.extend(issue);
            if !streaming {
                csv.write_ring(w, ring, records, None)?;
            } else if let Err(e) = stream.part(&csv.ring_part(w, ring, records, None, timebase)?) {
                let what = e.to_string();
                failed = Some(e);
                return Err(io::Error::other(what));
            }
            progress(i as u64 + 1);
        }
        Ok(())
    })
    .map_err(|e| failed.take().unwrap_or(e))?;
    let finished = stream.finish(&mut run)?;
    let mut written = csv.finish();
    written.issues.extend(decode_issues);
    Ok((written, finished, run.issues))
}
