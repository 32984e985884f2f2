//! Every output file of one readout in one call: tt-metal's `profile_log_device.csv`, the
//! op report `ops_perf_results_<timestamp>.csv`, Chrome trace JSON, the HTML timeline, the
//! per-op summary `ttprof_summary.txt` (also returned, for printing), the bottleneck
//! analysis `ttprof_analysis.json` ([`crate::sink::analysis`]), and the formats that
//! scale: Perfetto's native trace `ttprof_trace.pftrace` and the Parquet tables
//! `ttprof_zones.parquet`, `ttprof_marks.parquet`, `ttprof_ops.parquet`
//! ([`crate::sink::perfetto`], [`crate::sink::parquet`]), and the op graph with its critical
//! path, `ttprof_ops.dot` and `ttprof_ops.svg` ([`crate::sink::graph`]). With
//! [`Options::dataset`] the run also goes into a hive-partitioned Parquet dataset
//! (`--dataset DIR`), in the same pass over the rings.
//!
//! Everything is computed before anything is written, so an op log that does not belong
//! to the device run fails with no file written; each file is then written atomically
//! (temporary file and rename), so a reader never sees half a file.

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::profile::Profile;
use crate::report::OpReport;
use crate::ring_source::{Held, RingSource};
use crate::sink::{
    self, analysis, graph, AnalysisSink, DeviceCsv, Finished, GraphSink, HtmlPage, OpReportSink,
    ParquetSink, PerfettoSink, Sink, SummarySink, TraceJson,
};
use crate::summary::{self, Summary};
use crate::{csv, html, trace};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Choices for [`write_all`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Summary rows whose mean zone duration is below this are hidden (and counted).
    pub summary_threshold_ns: f64,
    /// Time in the op report's file name.
    pub now: SystemTime,
    /// Lines put at the top of the summary (e.g. a kernel fault).
    pub notes: Vec<String>,
    /// Also write the run into this hive-partitioned Parquet dataset (`--dataset DIR`).
    pub dataset: Option<Dataset>,
    /// Zones and marks the HTML page embeds at most ([`html::MAX_ZONES`],
    /// [`html::MAX_MARKS`]; the environment's `TTPROF_HTML_MAX_ZONES` sets both): the page
    /// holds up to twice as many while the rings come, the largest constant in the
    /// outputs' memory.
    pub html_limits: (usize, usize),
    /// The command's input guard: no output is written over one of its inputs
    /// ([`Inputs::none`] by default: no guard).
    pub inputs: Inputs,
    /// The ops a kernel fault stopped (a session's), with what their cores were doing:
    /// `ttprof_analysis.json` lists each with its op (module [`analysis`]'s `stopped`).
    pub stopped: Vec<analysis::Stopped>,
}

/// The page's limits: [`html::MAX_ZONES`] and [`html::MAX_MARKS`], or both set by
/// `TTPROF_HTML_MAX_ZONES` (a number) in the environment.
pub fn html_limits() -> (usize, usize) {
    match std::env::var("TTPROF_HTML_MAX_ZONES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        Some(n) => (n, n),
        None => (html::MAX_ZONES, html::MAX_MARKS),
    }
}

/// Where [`write_all`] adds the run to a hive-partitioned Parquet dataset:
/// `DIR/<table>/host=<host>/chip=<n>/part-0.parquet` (see [`crate::sink::parquet`]).
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The dataset's root.
    pub dir: PathBuf,
    /// The capturing machine's name ([`crate::sink::parquet::default_host`] gives this
    /// one's): letters, digits, `.`, `_`, `-`.
    pub host: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            summary_threshold_ns: 0.0,
            now: SystemTime::now(),
            notes: Vec::new(),
            dataset: None,
            html_limits: html_limits(),
            inputs: Inputs::none(),
            stopped: Vec::new(),
        }
    }
}

/// What [`write_all`] wrote and found.
#[derive(Clone, Debug)]
pub struct Written {
    /// Path of `profile_log_device.csv`.
    pub device_csv: PathBuf,
    /// Marker rows in it (header lines not counted).
    pub device_csv_rows: u64,
    /// Path of the op report `ops_perf_results_<timestamp>.csv`.
    pub op_report: PathBuf,
    /// Path of the Chrome trace JSON.
    pub trace: PathBuf,
    /// Path of the HTML timeline page.
    pub html: PathBuf,
    /// Path of `ttprof_summary.txt`.
    pub summary_file: PathBuf,
    /// Path of `ttprof_analysis.json`.
    pub(crate) analysis_file: PathBuf,
    /// The bottleneck analysis it holds.
    pub analysis: analysis::Analysis,
    /// Path of Perfetto's native trace `ttprof_trace.pftrace`.
    pub perfetto: PathBuf,
    /// Paths of the Parquet tables: zones, marks, ops.
    pub parquet: [PathBuf; 3],
    /// The op graph: `ttprof_ops.dot`, then `ttprof_ops.svg` (left out, with an issue, when
    /// it could not be drawn).
    pub graph_files: Vec<PathBuf>,
    /// The op graph they show (edges by tensor id, critical path).
    pub graph: graph::OpGraph,
    /// The dataset's files (with [`Options::dataset`]; else empty).
    pub dataset: Vec<PathBuf>,
    /// The line-level files (`--lines`, written by the session; else empty).
    pub lines: Vec<PathBuf>,
    /// The op report as written (its rows hold the durations in the file).
    pub report: OpReport,
    /// The per-op, per-zone totals `ttprof_summary.txt` shows.
    pub summary: Summary,
    /// `ttprof_summary.txt` as written.
    pub summary_text: String,
    /// The summary in one screen (what commands print unless asked for everything).
    pub brief_text: String,
    /// Mismatches between op log and device records, records off the timeline, zones cut
    /// to keep the trace nested. Readout and resolution issues are the caller's.
    pub issues: Vec<Issue>,
}

impl Written {
    /// Every file written, in the order written.
    pub fn files(&self) -> Vec<&Path> {
        let mut f: Vec<&Path> = vec![
            &self.device_csv,
            &self.op_report,
            &self.trace,
            &self.html,
            &self.summary_file,
            &self.analysis_file,
            &self.perfetto,
        ];
        f.extend(self.parquet.iter().map(PathBuf::as_path));
        f.extend(self.graph_files.iter().map(PathBuf::as_path));
        f.extend(self.dataset.iter().map(PathBuf::as_path));
        f.extend(self.lines.iter().map(PathBuf::as_path));
        f
    }
}

/// Writes every output file of `profile` into `dir` (created if missing): the standard
/// sinks ([`crate::sink`]) in one drive over the rings. The op log must be the run's
/// (else an error, and no file is written). With [`Options::dataset`], the run is also written into that Parquet dataset in the
/// same pass.
pub fn write_all(dir: &Path, profile: &Profile, options: &Options) -> Result<Written> {
    write_all_rings(dir, profile, &mut Held(profile), options)
}

/// [`write_all`], each ring's records taken from `rings` (a profile built from passes,
/// `Profile::from_passes`, holds none: the outputs see one ring at a time).
pub fn write_all_rings(
    dir: &Path,
    profile: &Profile,
    rings: &mut dyn RingSource,
    options: &Options,
) -> Result<Written> {
    let dataset = options
        .dataset
        .as_ref()
        .map(|d| (d.dir.as_path(), d.host.as_str()));
    if dir.exists() && !dir.is_dir() {
        return Err(Error::BadFile {
            path: dir.into(),
            what: "is not a directory: the outputs go into a directory".into(),
        });
    }
    if profile.oplog.is_none() {
        return Err(Error::Argument {
            what: "the outputs need the op log that names the run's ops".into(),
        });
    }
    if let Some(d) = &options.dataset {
        crate::sink::parquet::check_host(&d.host)?;
    }
    // Refuse an op log of another run before the directory is created.
    if let Some(oplog) = &profile.oplog {
        crate::report::of_profile(profile, oplog)?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create output directory", e))?;
    let device_csv = dir.join(csv::FILE_NAME);
    let trace_path = dir.join(trace::FILE_NAME);
    let inputs = &options.inputs;
    let mut csv_sink = DeviceCsv::new(&device_csv, inputs);
    // One analysis for the five sinks that show it.
    let shared = analysis::Shared::default();
    let mut report = OpReportSink::new(dir, options.now, inputs).with_analysis(&shared);
    let mut trace_sink = TraceJson::new(&trace_path, inputs);
    let mut page = HtmlPage::new(
        &dir.join(html::FILE_NAME),
        vec![device_csv.clone(), trace_path.clone()],
        inputs,
    )
    .with_op_graph(graph::SVG_FILE_NAME)
    .with_limits(options.html_limits.0, options.html_limits.1)
    .with_analysis(&shared);
    let mut summary_sink = SummarySink::new(
        &dir.join(summary::FILE_NAME),
        options.summary_threshold_ns,
        options.notes.clone(),
        inputs,
    )
    .with_analysis(&shared);
    let mut analysis_sink = AnalysisSink::new(&dir.join(analysis::FILE_NAME), inputs)
        .with_analysis(&shared)
        .with_stopped(options.stopped.clone());
    let mut perfetto = PerfettoSink::new(&dir.join(crate::sink::perfetto::FILE_NAME), inputs)
        .with_analysis(&shared);
    drop(shared);
    let mut parquet = ParquetSink::new(dir, inputs);
    let mut graph_sink = GraphSink::new(dir, inputs);
    let mut data = dataset.map(|(d, host)| ParquetSink::dataset(d, host, inputs));
    let mut sinks: Vec<&mut dyn Sink> = vec![
        &mut csv_sink,
        &mut report,
        &mut trace_sink,
        &mut page,
        &mut summary_sink,
        &mut analysis_sink,
        &mut perfetto,
        &mut parquet,
        &mut graph_sink,
    ];
    if let Some(d) = data.as_mut() {
        sinks.push(d);
    }
    let mut finished = sink::drive_rings(profile, rings, &mut sinks)?;
    let dataset_files = if dataset.is_some() {
        finished.pop().map(|f| f.files).unwrap_or_default()
    } else {
        Vec::new()
    };
    let [csv_done, report_done, trace_done, html_done, summary_done, analysis_done, perfetto_done, parquet_done, graph_done] =
        <[Finished; 9]>::try_from(finished)
            .map_err(|_| Error::Internal("nine sinks, nine results".into()))?;
    let parquet_files = <[PathBuf; 3]>::try_from(parquet_done.files)
        .map_err(|_| Error::Internal("three Parquet tables".into()))?;
    let report = report
        .report
        .ok_or_else(|| Error::Internal("no op report".into()))?;
    let brief_text = std::mem::take(&mut summary_sink.brief);
    let (summary, summary_text) = summary_sink
        .summary
        .ok_or_else(|| Error::Internal("no summary".into()))?;
    let mut issues = report_done.issues.clone();
    issues.extend(profile.issues.iter().cloned());
    issues.extend(html_done.issues.iter().cloned());
    issues.extend(trace_done.issues.iter().cloned());
    issues.extend(perfetto_done.issues.iter().cloned());
    issues.extend(graph_done.issues.iter().cloned());
    issues.extend(analysis_done.issues.iter().cloned());
    let first = |f: Finished| f.files.into_iter().next().unwrap_or_default();
    Ok(Written {
        device_csv: first(csv_done),
        device_csv_rows: csv_sink.written_rows,
        op_report: first(report_done),
        trace: first(trace_done),
        html: first(html_done),
        summary_file: first(summary_done),
        analysis_file: first(analysis_done),
        analysis: analysis_sink
            .analysis
            .take()
            .map(std::rc::Rc::unwrap_or_clone)
            .unwrap_or_default(),
        perfetto: first(perfetto_done),
        parquet: parquet_files,
        graph_files: graph_done.files,
        graph: graph_sink.graph.unwrap_or_default(),
        dataset: dataset_files,
        lines: Vec::new(),
        report,
        summary,
        summary_text,
        brief_text,
        issues,
    })
}

/// What [`write_all_rings`] writes of a profile (tests comparing two ways of giving its
/// rings): every file with its bytes, the dataset's files, the issues (the folder written
/// into as `<dir>`) and the brief.
#[cfg(test)]
pub(crate) struct WrittenBytes {
    pub files: std::collections::BTreeMap<PathBuf, Vec<u8>>,
    pub dataset: std::collections::BTreeMap<PathBuf, Vec<u8>>,
    pub issues: Vec<String>,
    pub brief: String,
}

#[cfg(test)]
impl WrittenBytes {
    /// Every output of `p`, its rings from `rings`, into `root`/`name` (the dataset beside
    /// it): fixed options, a page small enough to be pruned mid-ring.
    pub(crate) fn of(
        root: &Path,
        name: &str,
        p: &Profile,
        rings: &mut dyn RingSource,
    ) -> WrittenBytes {
        let (dir, data) = (root.join(name), root.join(format!("{name}-dataset")));
        let options = Options {
            now: std::time::UNIX_EPOCH,
            html_limits: (7, 5),
            dataset: Some(Dataset {
                dir: data.clone(),
                host: "h".into(),
            }),
            ..Options::default()
        };
        let w = write_all_rings(&dir, p, rings, &options).unwrap();
        let issues = w
            .issues
            .iter()
            .map(|i| format!("{i:?}").replace(&dir.display().to_string(), "<dir>"))
            .collect();
        WrittenBytes {
            files: crate::testing::files_under(&dir),
            dataset: crate::testing::files_under(&data),
            issues,
            brief: w.brief_text,
        }
    }

    /// Asserts that `self` is `whole`, byte for byte (`name` in the message).
    pub(crate) fn assert_is(&self, whole: &WrittenBytes, name: &str) {
        assert_eq!(
            self.files.keys().collect::<Vec<_>>(),
            whole.files.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (file, bytes) in whole.files.iter().chain(&whole.dataset) {
            let other = self.files.get(file).or_else(|| self.dataset.get(file));
            assert!(other == Some(bytes), "{name}: {} differs", file.display());
        }
        assert_eq!(self.dataset.len(), whole.dataset.len(), "{name}");
        assert_eq!(self.issues, whole.issues, "{name}: the issues differ");
        assert_eq!(self.brief, whole.brief, "{name}: the brief differs");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;
    use std::time::UNIX_EPOCH;

    fn run(dir: &Path, oplog: &crate::oplog::OpLog) -> Result<Written> {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let options = Options {
            summary_threshold_ns: 0.0,
            now: UNIX_EPOCH,
            notes: vec![],
            dataset: None,
            html_limits: (html::MAX_ZONES, html::MAX_MARKS),
            inputs: Inputs::none(),
            stopped: vec![],
        };
        let p = Profile::resolved(
            r,
            res,
            Some(oplog.clone()),
            crate::timebase::Timebase::nominal(fixture::ARCH, 1),
        );
        write_all(dir, &p, &options)
    }

    #[test]
    fn every_file_is_written_into_the_directory() {
        let dir = crate::testing::temp_dir("outputs").join("new/sub");
        let w = run(&dir, &fixture::oplog()).unwrap();
        assert!(w.issues.is_empty(), "{:?}", w.issues);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "ops_perf_results_1970_01_01_00_00_00.csv",
                "profile_log_device.csv",
                "ttprof_analysis.json",
                "ttprof_marks.parquet",
                "ttprof_ops.dot",
                "ttprof_ops.parquet",
                "ttprof_ops.svg",
                "ttprof_summary.txt",
                "ttprof_timeline.html",
                "ttprof_trace.json",
                "ttprof_trace.pftrace",
                "ttprof_zones.parquet"
            ]
        );
        assert_eq!(w.device_csv_rows, 330);
        // The fixture's op log has no tensor ids: three ops, no edges, and the files say so.
        assert_eq!(
            (
                w.graph.nodes.len(),
                w.graph.edges.len(),
                w.graph.without_ids
            ),
            (3, 0, 3)
        );
        let dot = std::fs::read_to_string(dir.join("ttprof_ops.dot")).unwrap();
        assert!(dot.contains("// 3 ops carry no tensor ids"), "{dot}");
        assert_eq!(
            w.graph_files,
            [dir.join("ttprof_ops.dot"), dir.join("ttprof_ops.svg")]
        );
        let page = std::fs::read_to_string(&w.html).unwrap();
        assert!(
            page.contains("<a href=\"ttprof_ops.svg\">"),
            "the page links the op graph"
        );
        assert!(w.files().iter().all(|p| p.starts_with(&dir)));
        std::fs::remove_dir_all(dir.parent().unwrap().parent().unwrap()).unwrap();
    }

    #[test]
    fn a_wrong_op_log_or_an_unwritable_directory_writes_nothing_and_says_why() {
        let dir = crate::testing::temp_dir("outputs-bad");
        let mut log = fixture::oplog();
        log.entries = vec![crate::oplog::OpLogEntry::Op(fixture::op(42, "Other"))];
        let e = run(&dir.join("out"), &log).unwrap_err().to_string();
        assert!(e.contains("does not match the device run"), "{e}");
        assert!(!dir.join("out").exists(), "nothing written");
        // The output path is a file.
        let file = dir.join("file");
        std::fs::write(&file, "x").unwrap();
        let e = run(&file, &fixture::oplog()).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: is not a directory: the outputs go into a directory",
                file.display()
            )
        );
        // A directory that cannot be created.
        let e = run(&file.join("sub"), &fixture::oplog())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "cannot create output directory {}",
                file.join("sub").display()
            )),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A [`crate::ring_source::Cut`] that counts the rings it gave in pieces.
    struct Counted<'p>(crate::ring_source::Cut<'p>, usize);

    impl RingSource for Counted<'_> {
        fn ring(&mut self, i: usize) -> Result<std::borrow::Cow<'_, crate::readout::RingReport>> {
            self.0.ring(i)
        }

        fn long_zones(&mut self, i: usize) -> Result<Option<crate::ring_pieces::Long>> {
            self.0.long_zones(i)
        }

        fn pieces(
            &mut self,
            i: usize,
            piece: &mut dyn FnMut(&crate::decode::Records) -> Result<()>,
        ) -> Result<()> {
            self.1 += 1;
            self.0.pieces(i, piece)
        }
    }

    /// Issue 41: every output file (the dataset's too) and every issue is the same, byte for
    /// byte, whether the rings come whole or each in pieces: every standard sink takes
    /// pieces, so the drive gives them (a zone that ends after its parent, and page limits
    /// small enough that the page is pruned in the middle of rings, among them).
    #[test]
    fn every_output_is_the_same_from_rings_in_pieces() {
        let mut r = fixture::readout();
        let x = fixture::times(2, 0, r.rings[0].id.risc);
        r.rings[0].records.push(
            crate::decode::RecordKind::Zone,
            fixture::site::WORK,
            x.work.0 + 1,
            x.fw.1 + 5,
            0,
            0,
            2,
        );
        let p = fixture::profile_of(r, fixture::ARCH, true);
        let root = crate::testing::temp_dir("outputs-pieces");
        let whole = WrittenBytes::of(&root, "whole", &p, &mut Held(&p));
        assert!(
            whole.files.len() >= 10 && !whole.dataset.is_empty(),
            "{:?}",
            whole.files.keys()
        );
        for (window, piece) in [(1, 1), (2, 3), (64, 7), (5, 1_000)] {
            let cut = crate::ring_source::Cut {
                profile: &p,
                window,
                piece,
            };
            let mut counted = Counted(cut, 0);
            let name = format!("cut-{window}-{piece}");
            let got = WrittenBytes::of(&root, &name, &p, &mut counted);
            assert_eq!(counted.1, p.ring_count(), "{name}: every ring in pieces");
            got.assert_is(&whole, &name);
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
