//! `ttprof capture`: the command line around [`super::capture`] and [`super::write`].
//!
//! Writes `profile_log_device.csv` and `capture.json` (per-ring and total counts: zones,
//! records, payload and bus bytes, drops, stalls, drains, why it stopped) into `--out`,
//! ring by ring (memory: one ring's records). With `--all-outputs`, also the op report,
//! the Chrome trace JSON and the HTML timeline, and prints the per-op summary, as
//! `ttprof report` does (memory: every record), on the clock fit of `--clock`.

use super::stop::{install_ctrl_c, StopWhen};
use super::{capture, write, Captured, Pacing};
use crate::devmem::{self, DeviceMemory, FileKind};
use crate::error::{Error, Result};
use crate::issue;
use crate::oplog::OpLog;
use crate::outputs::{self, Options};
use crate::resolve::Resolver;
use crate::timebase::Timebase;
use crate::{atomic, clock, csv, progress, summary};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `ttprof capture`.
#[derive(clap::Args, Debug)]
pub struct CaptureArgs {
    /// The device image of a running emulator (live device memory; not a snapshot).
    #[arg(long)]
    pub device: PathBuf,
    /// The op log the host program writes (read when the capture ends, to name the zones).
    #[arg(long)]
    pub oplog: Option<PathBuf>,
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
    /// Also write the op report, Chrome trace JSON and HTML timeline and print the per-op
    /// summary, as `ttprof report` does (holds every record in memory).
    #[arg(long, requires = "oplog")]
    pub all_outputs: bool,
    /// With --all-outputs: a snapshot of clock sync samples (`ttprof clock --device IMAGE
    /// --record FILE` before the first op and after the last) to put device times on the
    /// host clock; nominal clock otherwise.
    #[arg(long, requires = "all_outputs", value_name = "SNAPSHOT")]
    pub clock: Option<PathBuf>,
    /// With --all-outputs: hide summary rows whose mean zone is shorter than this (ns).
    #[arg(long, requires = "all_outputs", default_value_t = 0.0)]
    pub threshold_ns: f64,
}

/// Name of the summary file.
pub const SUMMARY_FILE: &str = "capture.json";

/// Runs `ttprof capture`; exit code 2 when the output is incomplete (error issues).
pub fn run(args: CaptureArgs) -> Result<ExitCode> {
    if devmem::file_kind(&args.device)? == FileKind::Snapshot {
        return Err(Error::BadFile {
            path: args.device.clone(),
            what: "is a snapshot (a recording): capture needs live device memory (the emulator's device image)".into(),
        });
    }
    let stop = match (args.seconds, &args.until_file_gone) {
        (Some(s), _) if !(s.is_finite() && s >= 0.0) => return Err(Error::Other(format!("--seconds {s}: expected a duration >= 0"))),
        (Some(s), _) => StopWhen::After(Duration::from_secs_f64(s)),
        (None, Some(p)) => StopWhen::FileGone(p.clone()),
        (None, None) => StopWhen::Interrupted,
    };
    stop.check()?;
    if let Some(path) = &args.clock {
        // Read again when the capture ends (it may get its second sync window meanwhile).
        if devmem::file_kind(path)? != FileKind::Snapshot {
            return Err(Error::BadFile { path: path.clone(), what: "is not a snapshot: --clock takes the file `ttprof clock --record` writes".into() });
        }
    }
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, "create output directory", e))?;
    let mem = devmem::open(&args.device, true)?;
    install_ctrl_c()?;
    eprintln!("capturing {} until {}", mem.describe(), until(&stop));
    let spinner = progress::spinner();
    let pacing = Pacing { idle: Duration::from_millis(args.idle_poll_ms.max(1)), ..Pacing::default() };
    let mut captured = capture(mem.as_ref(), &stop, pacing, &args.out, |p| {
        spinner.set_message(format!("{} zones from {} rings, {:.1} MB, {} drains", p.zones, p.rings, p.payload_bytes as f64 / 1e6, p.drains));
    })?;
    spinner.finish_and_clear();
    eprintln!("stopped: {} after {:.1} s", captured.stopped.describe(), captured.elapsed.as_secs_f64());

    let oplog = args.oplog.as_deref().map(OpLog::read).transpose()?;
    let csv_path = args.out.join(csv::FILE_NAME);
    let written = match (&oplog, args.all_outputs) {
        (Some(oplog), true) => write_all_outputs(&args, &mut captured, oplog)?,
        _ => {
            let bar = progress::bar(captured.readout.rings.len() as u64, "rings");
            let written = write::write_csv(&csv_path, &mut captured, oplog.as_ref(), &bar)?;
            bar.finish_and_clear();
            written
        }
    };
    let summary = summary_json(&captured, &written, mem.as_ref());
    let summary_path = args.out.join(SUMMARY_FILE);
    let text = serde_json::to_string_pretty(&summary).unwrap_or_default();
    atomic::write_atomic(&summary_path, |w| std::io::Write::write_all(w, text.as_bytes()))?;
    print_summary(&captured, &written, &csv_path, &summary_path);
    let errors = issue::print(&captured.readout.issues) + issue::print(&written.issues);
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the output is incomplete");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--all-outputs`: every record decoded at once, then every output `ttprof report` writes.
fn write_all_outputs(args: &CaptureArgs, captured: &mut Captured, oplog: &OpLog) -> Result<write::Written> {
    let mut issues = write::decode_all(captured)?;
    let readout = &captured.readout;
    let mut sites = Resolver::new(oplog).resolve(readout);
    let g = readout.geometry;
    let (timebase, clock_note) = match &args.clock {
        Some(path) => clock::cli::timebase_for(path, g.arch, g.chips),
        None => (Timebase::nominal(g.arch, g.chips), format!("clock: nominal {} MHz, not aligned (no --clock snapshot)", g.arch.aiclk_mhz())),
    };
    let options = Options { summary_threshold_ns: args.threshold_ns, ..Options::default() };
    let mut out = outputs::write_all(&args.out, readout, &sites, oplog, &timebase, &options)?;
    print!("{}", summary::render(&out.summary));
    println!();
    println!("{clock_note}");
    println!("wrote:");
    for p in out.files() {
        println!("  {}", p.display());
    }
    issues.append(&mut sites.issues);
    issues.append(&mut out.issues);
    Ok(write::Written {
        rows: out.device_csv_rows,
        zones: readout.zones() as u64,
        records: readout.rings.iter().map(|r| r.records.len() as u64).sum(),
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

fn summary_json(c: &Captured, w: &write::Written, mem: &dyn DeviceMemory) -> serde_json::Value {
    let r = &c.readout;
    let rings: Vec<serde_json::Value> = r
        .rings
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
        "dropped": r.rings.iter().map(|x| x.dropped as u64).sum::<u64>(),
        "stalls": r.rings.iter().map(|x| x.stalls as u64).sum::<u64>(),
        "payload_bytes": r.payload_bytes(),
        "bus_bytes": r.bus_bytes,
        "bus_bytes_per_payload_byte": r.bus_bytes_per_payload_byte(),
        "resolved": w.resolved,
        "unresolved": w.unresolved,
        "errors": r.issues.iter().chain(&w.issues).filter(|i| i.is_error()).count(),
        "warnings": r.issues.iter().chain(&w.issues).filter(|i| !i.is_error()).count(),
        "rings": rings,
    })
}

fn print_summary(c: &Captured, w: &write::Written, csv_path: &Path, summary_path: &Path) {
    let r = &c.readout;
    let ratio = r.bus_bytes_per_payload_byte().map_or("n/a".into(), |x| format!("{x:.3}"));
    println!(
        "captured {} zones ({} records) from {} ring(s) in {} drains over {:.1} s; {} dropped, {} stalls; \
         {} payload bytes, {} bus bytes ({ratio} bus bytes per payload byte)",
        w.zones,
        w.records,
        r.rings.len(),
        c.drains,
        c.elapsed.as_secs_f64(),
        r.rings.iter().map(|x| x.dropped as u64).sum::<u64>(),
        r.rings.iter().map(|x| x.stalls as u64).sum::<u64>(),
        r.payload_bytes(),
        r.bus_bytes,
    );
    println!("wrote {} ({} rows)", csv_path.display(), w.rows);
    println!("wrote {}", summary_path.display());
}

