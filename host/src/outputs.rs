//! Every output file of one readout in one call: tt-metal's `profile_log_device.csv`, the
//! op report `ops_perf_results_<timestamp>.csv`, Chrome trace JSON, the HTML timeline, and
//! the per-op summary `ttprof_summary.txt` (also returned, for printing).
//!
//! Everything is computed before anything is written, so an op log that does not belong
//! to the device run fails with no file written; each file is then written atomically
//! (temporary file and rename), so a reader never sees half a file.

use crate::error::{Error, Result};
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::readout::Readout;
use crate::report::{op_report, OpReport};
use crate::resolve::Resolution;
use crate::summary::{self, Summary};
use crate::timebase::Timebase;
use crate::timeline::Timeline;
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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            summary_threshold_ns: 0.0,
            now: SystemTime::now(),
            notes: Vec::new(),
        }
    }
}

/// What [`write_all`] wrote and found.
#[derive(Clone, Debug)]
pub struct Written {
    pub device_csv: PathBuf,
    pub device_csv_rows: u64,
    pub op_report: PathBuf,
    pub trace: PathBuf,
    pub html: PathBuf,
    pub summary_file: PathBuf,
    /// The op report as written (its rows hold the durations in the file).
    pub report: OpReport,
    pub summary: Summary,
    /// `ttprof_summary.txt` as written.
    pub summary_text: String,
    /// Mismatches between op log and device records, records off the timeline, zones cut
    /// to keep the trace nested. Readout and resolution issues are the caller's.
    pub issues: Vec<Issue>,
}

impl Written {
    /// Every file written, in the order written.
    pub fn files(&self) -> [&Path; 5] {
        [
            &self.device_csv,
            &self.op_report,
            &self.trace,
            &self.html,
            &self.summary_file,
        ]
    }
}

/// Writes every output file for `readout` into `dir` (created if missing).
pub fn write_all(
    dir: &Path,
    readout: &Readout,
    sites: &Resolution,
    oplog: &OpLog,
    timebase: &Timebase,
    options: &Options,
) -> Result<Written> {
    let report = op_report(readout, sites, oplog, timebase)?;
    let timeline = Timeline::build(readout, sites, Some(oplog), timebase);
    let summary = summary::per_op(&timeline, timebase, options.summary_threshold_ns);
    if dir.exists() && !dir.is_dir() {
        return Err(Error::BadFile {
            path: dir.into(),
            what: "is not a directory: the outputs go into a directory".into(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create output directory", e))?;
    let device_csv = dir.join(csv::FILE_NAME);
    let device_csv_rows = csv::write_file(&device_csv, readout, sites, csv::freq_mhz(timebase))?;
    let op_report_path = report.write_into(dir, options.now)?;
    let trace_path = dir.join(trace::FILE_NAME);
    let stats = trace::write_file(&trace_path, &timeline)?;
    let html_path = dir.join(html::FILE_NAME);
    let shown = html::write_file(&html_path, &timeline)?;
    let summary_file = dir.join(summary::FILE_NAME);
    let mut summary_text: String = options.notes.iter().map(|n| format!("{n}\n")).collect();
    summary_text.push_str(&summary::render(&summary));
    crate::atomic::write_atomic(&summary_file, |w| {
        std::io::Write::write_all(w, summary_text.as_bytes())
    })?;
    let mut issues = report.issues.clone();
    issues.extend(timeline.issues.iter().cloned());
    if shown.hidden > 0 {
        issues.push(
            Issue::warning(
                None,
                format!(
                    "{} shows the {} longest zones; {} shorter than {:.0} ns are left out of it (every zone is in {} and {})",
                    html_path.display(),
                    shown.zones,
                    shown.hidden,
                    shown.shortest_shown_ns,
                    device_csv.display(),
                    trace_path.display()
                ),
            )
            .with_count(shown.hidden as u64),
        );
    }
    if shown.marks_hidden > 0 {
        issues.push(
            Issue::warning(
                None,
                format!(
                    "{} shows {} events, data and sum zones (sum zones first, then data, then events); {} more are \
                     left out of it (every one is in {} and {})",
                    html_path.display(),
                    shown.marks,
                    shown.marks_hidden,
                    device_csv.display(),
                    trace_path.display()
                ),
            )
            .with_count(shown.marks_hidden as u64),
        );
    }
    if stats.clamped > 0 {
        issues.push(
            Issue::warning(
                None,
                format!(
                    "{} zone(s) end after the zone that encloses them (their times are inconsistent): {} cuts them at \
                     the enclosing zone's end so every thread stays nested",
                    stats.clamped,
                    trace_path.display()
                ),
            )
            .with_count(stats.clamped),
        );
    }
    if stats.ops_left_out > 0 {
        issues.push(
            Issue::warning(
                None,
                format!(
                    "{} op(s) overlap more ops than {} has op threads for (at most {} for device spans and {} for host \
                     spans per chip): they are left off its op threads (the op report lists every op)",
                    stats.ops_left_out,
                    trace_path.display(),
                    trace::MAX_OPS_DEVICE_THREADS,
                    trace::MAX_OPS_HOST_THREADS
                ),
            )
            .with_count(stats.ops_left_out),
        );
    }
    Ok(Written {
        device_csv,
        device_csv_rows,
        op_report: op_report_path,
        trace: trace_path,
        html: html_path,
        summary_file,
        report,
        summary,
        summary_text,
        issues,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use std::time::UNIX_EPOCH;

    fn run(dir: &Path, oplog: &OpLog) -> Result<Written> {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let options = Options {
            summary_threshold_ns: 0.0,
            now: UNIX_EPOCH,
            notes: vec![],
        };
        write_all(
            dir,
            &r,
            &res,
            oplog,
            &Timebase::nominal(fixture::ARCH, 1),
            &options,
        )
    }

    #[test]
    fn every_file_is_written_into_the_directory() {
        let dir = crate::testing::temp_dir("outputs").join("new/sub");
        let w = run(&dir, &fixture::oplog()).unwrap();
        assert!(w.issues.is_empty(), "{:?}", w.issues);
        let mut names: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "ops_perf_results_1970_01_01_00_00_00.csv",
                "profile_log_device.csv",
                "ttprof_summary.txt",
                "ttprof_timeline.html",
                "ttprof_trace.json"
            ]
        );
        assert_eq!(w.device_csv_rows, 330);
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
        assert_eq!(e, format!("{}: is not a directory: the outputs go into a directory", file.display()));
        // A directory that cannot be created.
        let e = run(&file.join("sub"), &fixture::oplog()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot create output directory {}", file.join("sub").display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
