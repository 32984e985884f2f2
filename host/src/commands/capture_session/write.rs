//! A capture's outputs, from its spool: the streamed ones (device CSV, Perfetto trace,
//! Parquet tables, ring by ring) or, with `all_outputs`, every output `ttprof report`
//! writes (two passes over the spool: the model, then the rings one at a time).

use super::{CaptureEvent, CaptureOptions};
use crate::capture::Captured;
use crate::clock::{self, TileSample};
use crate::csv::{self as device_csv, CsvWritten};
use crate::devmem::Snapshot;
use crate::error::Result;
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::outputs::{self, Dataset, Options};
use crate::profile::Profile;
use crate::sink::{ParquetSink, PerfettoSink, Sink};
use crate::timebase::Timebase;
use riscv_linker::devfile::Geometry;
use std::path::{Path, PathBuf};

/// What was written, and what the command prints of it.
pub(super) struct Written {
    pub(super) written: CsvWritten,
    /// The per-op summary (`all_outputs` only).
    pub(super) summary: Option<String>,
    pub(super) clock_note: String,
    pub(super) files: Vec<PathBuf>,
}

/// The default outputs, ring by ring from the spool (memory: one ring's records): the
/// device CSV, Perfetto's trace and the Parquet tables (and the dataset's partition).
pub(super) fn streamed(
    options: &CaptureOptions,
    csv_path: &Path,
    captured: &mut Captured,
    oplog: Option<&OpLog>,
    in_run: &[TileSample],
    dataset: Option<Dataset>,
    event: &mut dyn FnMut(CaptureEvent),
) -> Result<Written> {
    let mut issues = Vec::new();
    let g = captured.readout.geometry;
    let (timebase, clock_note) = timebase(options, g, in_run, &mut issues)?;
    let inputs = &options.inputs;
    let mut perfetto =
        PerfettoSink::new(&options.out.join(crate::sink::perfetto::FILE_NAME), inputs);
    let mut parquet = ParquetSink::new(&options.out, inputs);
    let mut dataset = dataset.map(|d| ParquetSink::dataset(&d.dir, &d.host, inputs));
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut perfetto, &mut parquet];
    if let Some(d) = dataset.as_mut() {
        sinks.push(d);
    }
    let of = captured.readout.rings.len() as u64;
    let (mut written, finished, run_issues) = device_csv::write_streamed(
        csv_path,
        inputs,
        captured,
        oplog,
        &timebase,
        sinks,
        &mut |n| event(CaptureEvent::Rings { written: n, of }),
    )?;
    let files = finished.iter().flat_map(|f| f.files.clone()).collect();
    written
        .issues
        .extend(finished.into_iter().flat_map(|f| f.issues));
    written.issues.extend(run_issues);
    written.issues.extend(issues);
    Ok(Written {
        written,
        summary: None,
        clock_note,
        files,
    })
}

/// The capture's timebase: the clock fit of the samples taken while draining (with the
/// `clock` snapshot's windows, if any), of the `clock` snapshot alone, else the nominal
/// clock; and a line that says which.
fn timebase(
    options: &CaptureOptions,
    g: Geometry,
    in_run: &[TileSample],
    issues: &mut Vec<Issue>,
) -> Result<(Timebase, String)> {
    Ok(match (&options.clock, in_run.is_empty()) {
        (Some(path), true) => clock::timebase_for(path, g.arch, g.chips, &options.inputs),
        (None, true) => (
            Timebase::nominal(g.arch, g.chips),
            format!(
                "clock: nominal {} MHz, not aligned (no --clock snapshot)",
                g.arch.aiclk_mhz()
            ),
        ),
        // The samples taken while draining, with the --clock snapshot's windows if any.
        (path, false) => {
            let mut samples = match path {
                Some(p) => Snapshot::load(p, &options.inputs)?.sync_samples(),
                None => Vec::new(),
            };
            samples.extend_from_slice(in_run);
            match clock::fit(&samples, g.arch, g.chips, &clock::FitOptions::default()) {
                Ok(f) => {
                    issues.extend(f.issues.iter().cloned());
                    let note = format!("{f}");
                    (f.timebase, note)
                }
                Err(e) => (
                    Timebase::nominal(g.arch, g.chips),
                    format!(
                        "clock: not aligned, nominal {} MHz: {e}",
                        g.arch.aiclk_mhz()
                    ),
                ),
            }
        }
    })
}

/// `all_outputs`: every output `ttprof report` writes, in two passes over the spool (the
/// model, then the rings one at a time: memory at one ring's records).
pub(super) fn all_outputs(
    options: &CaptureOptions,
    captured: &mut Captured,
    oplog: &OpLog,
    in_run: &[TileSample],
) -> Result<Written> {
    let mut issues = Vec::new();
    let g = captured.readout.geometry;
    let (timebase, clock_note) = timebase(options, g, in_run, &mut issues)?;
    let opts = Options {
        summary_threshold_ns: options.threshold_ns,
        dataset: options.dataset.clone(),
        inputs: options.inputs.clone(),
        ..Options::default()
    };
    // The capture's readout stays as it is until the outputs are written (a failure falls
    // back to the streamed outputs, which read the spool again).
    let s = crate::spooled::profile(
        captured.readout.clone(),
        &mut captured.payload,
        Some(oplog.clone()),
        timebase,
    )?;
    issues.extend(s.decode);
    issues.extend(s.launch);
    let profile = s.profile;
    let mut rings = crate::spooled::SpoolRings::new(&profile, &mut captured.payload);
    let written = outputs::write_all_rings(&options.out, &profile, &mut rings, &opts);
    let Profile {
        readout, mut sites, ..
    } = profile;
    let mut out = written?;
    // The rings with their counts (the capture summary lists them).
    captured.readout = readout;
    let readout = &captured.readout;
    let summary = Some(crate::summary::render(&out.summary));
    let files = out.files().into_iter().map(Path::to_path_buf).collect();
    issues.append(&mut sites.issues);
    issues.append(&mut out.issues);
    Ok(Written {
        written: CsvWritten {
            rows: out.device_csv_rows,
            zones: readout.zones() as u64,
            records: readout.records() as u64,
            resolved: sites.resolved,
            unresolved: sites.unresolved,
            issues,
        },
        summary,
        clock_note,
        files,
    })
}
