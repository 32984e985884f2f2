//! `ttprof capture`: the command line around [`ttprof::capture`] and its ring-by-ring writer.
//!
//! Writes `profile_log_device.csv` and `capture.json` (per-ring and total counts: zones,
//! records, payload and bus bytes, drops, stalls, drains, why it stopped) into `--out`,
//! ring by ring (memory: one ring's records). With `--all-outputs`, also the op report,
//! the Chrome trace JSON and the HTML timeline, and prints the per-op summary, as
//! `ttprof report` does (memory: every record), on the clock fit of `--clock`.
//!
//! A capture consumes the rings (it moves their `TAIL`), so what it drained is nowhere else
//! afterwards: it needs the op log to name the zones (`--oplog`, or an explicit
//! `--no-oplog`), and an op log it cannot read when the capture ends still leaves the
//! CSV written, with unnamed zones and an error; so does an op log that does not fit the
//! run for `--all-outputs` (it names no ops yet: the CSV, Perfetto trace and Parquet tables
//! are written instead of the report's outputs), a capture that cannot go on (the image
//! truncated under it, the spool's disk full: what was drained is written), each with an
//! error and its count (exit 2). On an image nothing is running on (no kernel running,
//! nobody answering its clock mailbox) it says so before it starts.
//!
//! Numeric arguments are checked before anything else ([`crate::args`]).

use crate::args::{integer_arg, seconds_arg, threshold_ns_arg};
use crate::progress;
use crate::stop::install_ctrl_c;
use riscv_linker::devfile;
use riscv_linker::devfile::Geometry;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use ttprof::capture::{capture_sampled, Captured, Pacing, StopWhen, Stopped};
use ttprof::clock::{ClockSampler, TileSample};
use ttprof::csv::{self as device_csv, CsvWritten};
use ttprof::devmem::{self, DeviceClock, DeviceMemory, FileKind, MappedImage, Snapshot};
use ttprof::issue::{self, Issue};
use ttprof::oplog::OpLog;
use ttprof::outputs::{self, Options};
use ttprof::sink::{ParquetSink, PerfettoSink, Sink};
use ttprof::timebase::Timebase;
use ttprof::{atomic, clock, csv, summary, Error, Result};

/// Arguments of `ttprof capture`.
#[derive(clap::Args, Debug)]
pub struct CaptureArgs {
    /// The device image of a running emulator, or a card (`/dev/tenstorrent/N`, `tt:N`): live
    /// device memory, not a snapshot.
    #[arg(long)]
    pub device: PathBuf,
    /// The op log the host program writes (read when the capture ends, to name the zones;
    /// it need not exist yet when the capture starts). Required unless --no-oplog is given.
    #[arg(long, conflicts_with = "no_oplog")]
    pub oplog: Option<PathBuf>,
    /// Capture without an op log: zones are written as `unresolved-site-<id>`, without
    /// names or source lines. The capture consumes the rings, so those names can never be
    /// recovered afterwards: that is why, without this flag, --oplog is required.
    #[arg(long)]
    pub no_oplog: bool,
    /// Directory for the output files (created if missing).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Stop after this many seconds.
    #[arg(long, conflicts_with = "until_file_gone")]
    pub seconds: Option<f64>,
    /// Stop when this file disappears (it must exist when the capture starts).
    #[arg(long, value_name = "PATH")]
    pub until_file_gone: Option<PathBuf>,
    /// Longest pause between polls while the rings are idle, in milliseconds.
    #[arg(long, default_value_t = 10)]
    pub idle_poll_ms: u64,
    /// Also write every other output `ttprof report` writes (the op report, Chrome trace
    /// JSON, HTML timeline, summary, analysis and op graph) and print the per-op summary
    /// (in two passes over the capture's spool: one ring's records in memory at a time).
    #[arg(long, requires = "oplog")]
    pub all_outputs: bool,
    /// With --all-outputs: a snapshot of clock sync samples (`ttprof clock --device IMAGE
    /// --record FILE` before the first op and after the last) to put device times on the
    /// host clock; nominal clock otherwise.
    #[arg(long, requires = "all_outputs", value_name = "SNAPSHOT")]
    pub clock: Option<PathBuf>,
    /// Take a clock sync sample of one tile per chip every this many µs while draining
    /// (0: none), so the clock fit of --all-outputs sees frequency steps (DVFS) during the
    /// run. Needs live clocks: a running emulator (its clock mailbox) or a card.
    #[arg(long, default_value_t = 0, value_name = "US")]
    pub sample_every_us: u64,
    /// With --all-outputs: hide summary rows whose mean zone is shorter than this (ns).
    #[arg(long, requires = "all_outputs", default_value_t = 0.0)]
    pub threshold_ns: f64,
    /// Where the capture keeps what it drained until it writes the outputs: an unnamed file
    /// (about 6 bytes per zone) in this directory (default: --out). If its disk fills, the
    /// capture stops draining and writes what it took (exit 2, with the count).
    #[arg(long, value_name = "DIR")]
    pub spool_dir: Option<PathBuf>,
    #[command(flatten)]
    pub dataset: crate::args::DatasetArgs,
}

/// Name of the summary file.
pub const SUMMARY_FILE: &str = "capture.json";

/// The longest `--idle-poll-ms`: a minute (a capture notices the end of `--seconds`, the
/// flag file and Ctrl-C only between polls).
pub const MAX_IDLE_POLL_MS: u64 = 60_000;

/// The checked numeric arguments of `ttprof capture`: when to stop (`None`: not after a
/// time), the longest pause between polls, the summary threshold.
fn numbers(args: &CaptureArgs) -> Result<(Option<Duration>, Duration, f64, u64)> {
    let seconds = args
        .seconds
        .map(|s| seconds_arg("seconds", s))
        .transpose()?;
    let idle = integer_arg(
        "idle-poll-ms",
        args.idle_poll_ms,
        0..=MAX_IDLE_POLL_MS,
        &format!("a number of ms from 0 to {MAX_IDLE_POLL_MS} (a minute)"),
    )?;
    let threshold_ns = threshold_ns_arg("threshold-ns", args.threshold_ns)?;
    let year_us = crate::args::YEAR_SECONDS * 1_000_000;
    let every = integer_arg(
        "sample-every-us",
        args.sample_every_us,
        0..=year_us,
        &format!("a number of µs from 0 to {year_us} (a year)"),
    )?;
    Ok((
        seconds,
        Duration::from_millis(idle.max(1)),
        threshold_ns,
        every,
    ))
}

/// Runs `ttprof capture`; exit code 2 when the output is incomplete (error issues).
pub fn run(args: CaptureArgs) -> Result<ExitCode> {
    let (seconds, idle, threshold_ns, sample_every_us) = numbers(&args)?;
    let dataset = args.dataset.dataset()?;
    if args.oplog.is_none() && !args.no_oplog {
        return Err(Error::Other(
            "ttprof capture needs --oplog: the capture consumes the rings, so zones it cannot name when it ends \
             (they would be written as unresolved-site-<id>) can never be named afterwards; pass --no-oplog to \
             capture unnamed zones anyway"
                .into(),
        ));
    }
    let card = devmem::is_card(&args.device);
    if !card && devmem::file_kind(&args.device)? == FileKind::Snapshot {
        return Err(Error::BadFile {
            path: args.device.clone(),
            what: "is a snapshot (a recording): capture needs live device memory (the emulator's device image)".into(),
        });
    }
    let stop = match (seconds, &args.until_file_gone) {
        (Some(d), _) => StopWhen::After(d),
        (None, Some(p)) => StopWhen::FileGone(p.clone()),
        (None, None) => StopWhen::Interrupted,
    };
    stop.check()?;
    if let Some(path) = &args.clock {
        // Read again when the capture ends (it may get its second sync window meanwhile).
        if devmem::file_kind(path)? != FileKind::Snapshot {
            return Err(Error::BadFile {
                path: path.clone(),
                what: "is not a snapshot: --clock takes the file `ttprof clock --record` writes"
                    .into(),
            });
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::io(&args.out, "create output directory", e))?;
    let live = devmem::open_live(&args.device)?;
    let mem: &dyn DeviceMemory = &*live;
    if !card {
        if let Some(note) = idle_note(&MappedImage::open_read_only(&args.device)?) {
            eprintln!("{note}");
        }
    }
    install_ctrl_c()?;
    eprintln!("capturing {} until {}", mem.describe(), until(&stop));
    let spinner = progress::spinner();
    let pacing = Pacing {
        idle,
        ..Pacing::default()
    };
    let mut sampler =
        ClockSampler::new(&clock::all_tiles(mem), sample_every_us.saturating_mul(1000));
    let clock_source: Option<(&dyn DeviceClock, &mut ClockSampler)> =
        (sample_every_us > 0).then_some((&*live as &dyn DeviceClock, &mut sampler));
    let spool_dir = args.spool_dir.as_deref().unwrap_or(&args.out);
    let mut captured = capture_sampled(mem, &stop, pacing, spool_dir, clock_source, |p| {
        spinner.set_message(format!(
            "{} zones from {} rings, {:.1} MB, {} drains",
            p.zones,
            p.rings,
            p.payload_bytes as f64 / 1e6,
            p.drains
        ));
    })?;
    spinner.finish_and_clear();
    eprintln!(
        "stopped: {} after {:.1} s",
        captured.stopped.describe(),
        captured.elapsed.as_secs_f64()
    );

    let (oplog, oplog_issue) = read_oplog(args.oplog.as_deref(), args.all_outputs);
    let csv_path = args.out.join(csv::FILE_NAME);
    // Once the outputs cannot be written at all, say what is lost (the rings were freed).
    let zones = captured.zones;
    let spool_hint = if args.spool_dir.is_none() && captured.stopped == Stopped::Failed {
        " (a spool whose disk filled shares it with --out: give --spool-dir another disk)"
    } else {
        ""
    };
    let lost = |e: Error| {
        Error::Other(format!(
            "{e}: the {zones} zone(s) this capture drained could not be written and are lost (the rings were \
             consumed){spool_hint}"
        ))
    };
    let mut written = match (&oplog, args.all_outputs) {
        (Some(oplog), true) => match write_all_outputs(
            &args,
            threshold_ns,
            &mut captured,
            oplog,
            sampler.samples(),
            dataset.clone(),
        ) {
            Ok(w) => w,
            // The rings were consumed: what `report` would write cannot be (the op log does
            // not fit the run yet, say), so write what a capture writes without
            // --all-outputs, and say why.
            Err(e) => {
                for r in captured.readout.rings_mut() {
                    r.records = Default::default();
                }
                eprintln!("error: --all-outputs: {e}");
                let mut w = write_streamed(
                    &args,
                    &csv_path,
                    &mut captured,
                    Some(oplog),
                    sampler.samples(),
                    dataset,
                )
                .map_err(lost)?;
                let what = format!(
                    "--all-outputs: {e}: the op report, trace, timeline and summary are not written; the {} captured \
                     zone(s) are in {}, the Perfetto trace and the Parquet tables (named where the op log names their \
                     run): the rings were consumed, so keep this output",
                    w.zones,
                    csv_path.display()
                );
                w.issues.push(Issue::error(None, what).with_count(w.zones));
                w
            }
        },
        _ => write_streamed(
            &args,
            &csv_path,
            &mut captured,
            oplog.as_ref(),
            sampler.samples(),
            dataset,
        )
        .map_err(lost)?,
    };
    written.issues.extend(oplog_issue);
    written.issues.extend(clock::sampler_issue(&sampler));
    let summary = summary_json(&captured, &written, mem);
    let summary_path = args.out.join(SUMMARY_FILE);
    let text = serde_json::to_string_pretty(&summary).unwrap_or_default();
    atomic::write_atomic(&summary_path, |w| {
        std::io::Write::write_all(w, text.as_bytes())
    })?;
    print_summary(&captured, &written, &csv_path, &summary_path);
    let errors = issue::print(captured.readout.issues()) + issue::print(&written.issues);
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the output is incomplete");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// A note when nothing is running on `image`: no kernel runs (its status word) and no
/// emulator answers its clock mailbox (an emulator that is alive but between launches
/// does). `None` otherwise.
fn idle_note(image: &MappedImage) -> Option<String> {
    let status = image.status();
    if status & devfile::STATUS_RUNNING != 0 || image.clock_served() {
        return None;
    }
    let last = if status & devfile::STATUS_FAULTED != 0 {
        "its last run faulted"
    } else if status & devfile::STATUS_FINISHED != 0 {
        "its last run finished"
    } else {
        "no run has started on it"
    };
    Some(format!(
        "note: no emulator is running on {} ({last}, and nothing answers its clock mailbox): the capture reads \
         what is already in the rings",
        image.path().display()
    ))
}

/// The op log at `path`, if given and readable. One that cannot be read (the capture has
/// consumed the rings already) is an error issue, and the CSV is written without names
/// (without the other outputs, for `all_outputs`).
fn read_oplog(path: Option<&Path>, all_outputs: bool) -> (Option<OpLog>, Option<Issue>) {
    let Some(path) = path else {
        return (None, None);
    };
    match OpLog::read(path) {
        Ok(log) => (Some(log), None),
        Err(e) => {
            let outputs = if all_outputs {
                " (and only the CSV and the capture summary are written)"
            } else {
                ""
            };
            let what = format!(
                "cannot name the captured zones: {e}: they are written as unresolved-site-<id>{outputs}; the rings \
                 were consumed, so keep this output"
            );
            (None, Some(Issue::error(None, what)))
        }
    }
}

/// The default outputs, ring by ring from the spool (memory: one ring's records): the
/// device CSV, Perfetto's trace and the Parquet tables (and the `--dataset` partition).
fn write_streamed(
    args: &CaptureArgs,
    csv_path: &Path,
    captured: &mut Captured,
    oplog: Option<&OpLog>,
    in_run: &[TileSample],
    dataset: Option<outputs::Dataset>,
) -> Result<CsvWritten> {
    let mut issues = Vec::new();
    let g = captured.readout.geometry();
    let (timebase, clock_note) = timebase(args, g, in_run, &mut issues)?;
    let mut perfetto = PerfettoSink::new(&args.out.join(ttprof::sink::perfetto::FILE_NAME));
    let mut parquet = ParquetSink::new(&args.out);
    let mut dataset = dataset.map(|d| ParquetSink::dataset(&d.dir, &d.host));
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut perfetto, &mut parquet];
    if let Some(d) = dataset.as_mut() {
        sinks.push(d);
    }
    let bar = progress::bar(captured.readout.rings().len() as u64, "rings");
    let (mut written, finished, run_issues) =
        device_csv::write_streamed(csv_path, captured, oplog, &timebase, sinks, &mut |n| {
            bar.set_position(n)
        })?;
    bar.finish_and_clear();
    println!("{clock_note}");
    println!("wrote:");
    for f in finished.iter().flat_map(|f| &f.files) {
        println!("  {}", f.display());
    }
    written
        .issues
        .extend(finished.into_iter().flat_map(|f| f.issues));
    written.issues.extend(run_issues);
    written.issues.extend(issues);
    Ok(written)
}

/// The capture's timebase: the clock fit of the samples taken while draining (with the
/// `--clock` snapshot's windows, if any), of the `--clock` snapshot alone, else the nominal
/// clock; and a line that says which.
fn timebase(
    args: &CaptureArgs,
    g: Geometry,
    in_run: &[TileSample],
    issues: &mut Vec<Issue>,
) -> Result<(Timebase, String)> {
    Ok(match (&args.clock, in_run.is_empty()) {
        (Some(path), true) => clock::timebase_for(path, g.arch, g.chips),
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
                Some(p) => Snapshot::load(p)?.sync_samples(),
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

/// `--all-outputs`: every output `ttprof report` writes, in two passes over the spool (the
/// model, then the rings one at a time: memory at one ring's records).
fn write_all_outputs(
    args: &CaptureArgs,
    threshold_ns: f64,
    captured: &mut Captured,
    oplog: &OpLog,
    in_run: &[TileSample],
    dataset: Option<outputs::Dataset>,
) -> Result<CsvWritten> {
    let mut issues = Vec::new();
    let g = captured.readout.geometry();
    let (timebase, clock_note) = timebase(args, g, in_run, &mut issues)?;
    let options = Options {
        summary_threshold_ns: threshold_ns,
        dataset,
        ..Options::default()
    };
    // The capture's readout stays as it is until the outputs are written (a failure falls
    // back to the streamed outputs, which read the spool again).
    let s = ttprof::spooled::profile(
        captured.readout.clone(),
        &mut captured.payload,
        Some(oplog.clone()),
        timebase,
    )?;
    issues.extend(s.decode);
    issues.extend(s.launch);
    let profile = s.profile;
    let mut rings = ttprof::spooled::SpoolRings::new(&profile, &mut captured.payload);
    let written = outputs::write_all_rings(&args.out, &profile, &mut rings, &options);
    let (readout, mut sites) = profile.into_readout_and_sites();
    let mut out = written?;
    // The rings with their counts (the capture summary lists them).
    captured.readout = readout;
    let readout = &captured.readout;
    print!("{}", summary::render(&out.summary));
    println!();
    println!("{clock_note}");
    println!("wrote:");
    for p in out.files() {
        println!("  {}", p.display());
    }
    issues.append(&mut sites.issues);
    issues.append(&mut out.issues);
    Ok(CsvWritten {
        rows: out.device_csv_rows,
        zones: readout.zones() as u64,
        records: readout.records() as u64,
        resolved: sites.resolved,
        unresolved: sites.unresolved,
        issues,
    })
}

fn until(stop: &StopWhen) -> String {
    match stop {
        StopWhen::Interrupted => "Ctrl-C".into(),
        StopWhen::After(d) => format!("{:.1} s have passed (or Ctrl-C)", d.as_secs_f64()),
        StopWhen::FileGone(p) => format!("{} is removed (or Ctrl-C)", p.display()),
    }
}

fn summary_json(c: &Captured, w: &CsvWritten, mem: &dyn DeviceMemory) -> serde_json::Value {
    let r = &c.readout;
    let rings: Vec<serde_json::Value> = r
        .rings()
        .iter()
        .map(|x| {
            serde_json::json!({
                "chip": x.id.chip, "x": x.id.tile.x, "y": x.id.tile.y, "risc": x.id.risc.name(),
                "payload_bytes": x.payload_bytes, "skipped_bytes": x.skipped_bytes, "bus_bytes": x.bus_bytes,
                "dropped": x.dropped, "stalls": x.stalls, "losses_in_band": x.losses_in_band,
                "corrupt": x.corrupt,
            })
        })
        .collect();
    serde_json::json!({
        "device": mem.describe(),
        "stopped": c.stopped.describe(),
        "seconds": c.elapsed.as_secs_f64(),
        "drains": c.drains,
        "zones": w.zones,
        "records": w.records,
        "rows": w.rows,
        "dropped": r.rings().iter().map(|x| x.dropped as u64).sum::<u64>(),
        "stalls": r.rings().iter().map(|x| x.stalls as u64).sum::<u64>(),
        "payload_bytes": r.payload_bytes(),
        "bus_bytes": r.bus_bytes(),
        "bus_bytes_per_payload_byte": r.bus_bytes_per_payload_byte(),
        "resolved": w.resolved,
        "unresolved": w.unresolved,
        "errors": r.issues().iter().chain(&w.issues).filter(|i| i.is_error()).count(),
        "warnings": r.issues().iter().chain(&w.issues).filter(|i| !i.is_error()).count(),
        "rings": rings,
    })
}

fn print_summary(c: &Captured, w: &CsvWritten, csv_path: &Path, summary_path: &Path) {
    let r = &c.readout;
    let ratio = r
        .bus_bytes_per_payload_byte()
        .map_or("n/a".into(), |x| format!("{x:.3}"));
    println!(
        "captured {} zones ({} records) from {} ring(s) in {} drains over {:.1} s; {} dropped, {} stalls; \
         {} payload bytes, {} bus bytes ({ratio} bus bytes per payload byte)",
        w.zones,
        w.records,
        r.rings().len(),
        c.drains,
        c.elapsed.as_secs_f64(),
        r.rings().iter().map(|x| x.dropped as u64).sum::<u64>(),
        r.rings().iter().map(|x| x.stalls as u64).sum::<u64>(),
        r.payload_bytes(),
        r.bus_bytes(),
    );
    println!("wrote {} ({} rows)", csv_path.display(), w.rows);
    println!("wrote {}", summary_path.display());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::YEAR_SECONDS;
    use riscv_linker::{Arch, NocCoord};
    use ttprof::testing::{temp_dir, ImageBuilder};

    fn args(dir: &Path, oplog: Option<PathBuf>, no_oplog: bool) -> CaptureArgs {
        CaptureArgs {
            device: dir.join("device.img"),
            oplog,
            no_oplog,
            out: dir.join("out"),
            seconds: Some(0.0),
            until_file_gone: None,
            idle_poll_ms: 10,
            all_outputs: false,
            clock: None,
            sample_every_us: 0,
            threshold_ns: 0.0,
            spool_dir: None,
            dataset: Default::default(),
        }
    }

    /// An image file whose header words `STATUS` and clock-mailbox `SERVER` are as given.
    fn image(dir: &Path, status: u32, server: u32) -> PathBuf {
        let path = dir.join("device.img");
        ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)])
            .write(&path)
            .unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[devfile::field::STATUS..][..4].copy_from_slice(&status.to_le_bytes());
        let server_at = devfile::field::CLOCK_MAILBOX + devfile::mailbox::SERVER;
        bytes[server_at..][..4].copy_from_slice(&server.to_le_bytes());
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn without_an_op_log_the_capture_refuses_to_start_unless_told_to_capture_unnamed_zones() {
        let dir = temp_dir("capture-oplog");
        image(&dir, 0, 0);
        let e = run(args(&dir, None, false)).unwrap_err().to_string();
        assert!(
            e.contains("needs --oplog") && e.contains("pass --no-oplog"),
            "{e}"
        );
        assert!(
            !dir.join("out").exists(),
            "refused before anything was touched"
        );
        // The flag is spelled --no-oplog and conflicts with --oplog.
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: CaptureArgs,
        }
        use clap::Parser;
        assert!(
            Cli::try_parse_from(["capture", "--device", "d", "--no-oplog"])
                .unwrap()
                .a
                .no_oplog
        );
        assert!(
            Cli::try_parse_from(["capture", "--device", "d", "--no-oplog", "--oplog", "o"])
                .is_err()
        );
        // An op log that cannot be read when the capture ends: an error issue, nothing lost.
        let (log, issue) = read_oplog(Some(&dir.join("missing.jsonl")), true);
        let issue = issue.unwrap();
        assert!(log.is_none() && issue.is_error(), "{issue}");
        assert!(
            issue.what.contains("missing.jsonl") && issue.what.contains("unresolved-site-<id>"),
            "{issue}"
        );
        assert!(
            issue.what.contains("only the CSV and the capture summary"),
            "{issue}"
        );
        assert_eq!(read_oplog(None, false).1, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn numeric_arguments_that_are_nan_negative_infinite_or_absurd_are_errors_naming_them() {
        let dir = temp_dir("capture-numbers");
        let with = |f: &dyn Fn(&mut CaptureArgs)| {
            let mut a = args(&dir, None, true);
            f(&mut a);
            numbers(&a)
        };
        for s in [
            f64::NAN,
            -1.0,
            -0.001,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e20,
            f64::MAX,
            YEAR_SECONDS as f64 + 1.0,
        ] {
            let e = with(&|a| a.seconds = Some(s)).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--seconds {s}: expected a number of seconds from 0 to 31536000 (a year)"
                )),
                "{e}"
            );
            // And before anything else: the device is not even looked at (it does not exist).
            let mut a = args(&dir, None, true);
            a.seconds = Some(s);
            assert!(run(a).unwrap_err().to_string().starts_with("--seconds"));
        }
        for ns in [f64::NAN, -5.0, f64::INFINITY, 1e30] {
            let e = with(&|a| a.threshold_ns = ns).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--threshold-ns {ns}: expected a number of ns from 0 to"
                )),
                "{e}"
            );
        }
        for ms in [MAX_IDLE_POLL_MS + 1, u64::MAX] {
            let e = with(&|a| a.idle_poll_ms = ms).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--idle-poll-ms {ms}: expected a number of ms from 0 to 60000"
                )),
                "{e}"
            );
        }
        // The limits themselves and everyday values are fine.
        let ok = with(&|a| {
            a.seconds = Some(YEAR_SECONDS as f64);
            a.idle_poll_ms = MAX_IDLE_POLL_MS;
            a.threshold_ns = 250.5;
        });
        assert_eq!(
            ok.unwrap(),
            (
                Some(Duration::from_secs(YEAR_SECONDS)),
                Duration::from_secs(60),
                250.5,
                0
            )
        );
        let ok = with(&|a| {
            a.seconds = Some(0.25);
            a.idle_poll_ms = 0;
        });
        assert_eq!(
            ok.unwrap(),
            (
                Some(Duration::from_millis(250)),
                Duration::from_millis(1),
                0.0,
                0
            )
        );
        let e = with(&|a| a.sample_every_us = u64::MAX)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--sample-every-us 18446744073709551615: expected a number of µs"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_image_nothing_runs_on_gets_a_note() {
        let dir = temp_dir("capture-idle");
        let note = |status, server| {
            idle_note(&MappedImage::open_read_only(&image(&dir, status, server)).unwrap())
        };
        let n = note(0, 0).expect("a fresh image: no emulator");
        assert!(
            n.contains("no emulator is running on") && n.contains("device.img"),
            "{n}"
        );
        assert!(
            n.contains("no run has started on it")
                && n.contains("reads what is already in the rings"),
            "{n}"
        );
        assert!(note(devfile::STATUS_FINISHED, 0)
            .unwrap()
            .contains("its last run finished"));
        assert!(note(devfile::STATUS_FINISHED | devfile::STATUS_FAULTED, 0)
            .unwrap()
            .contains("its last run faulted"));
        assert_eq!(
            note(devfile::STATUS_RUNNING, 0),
            None,
            "a kernel is running"
        );
        assert_eq!(
            note(devfile::STATUS_FINISHED, devfile::mailbox::SERVING),
            None,
            "an emulator between launches"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
