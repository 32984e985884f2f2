//! `ttprof capture`: the command line around [`ttprof::capture_session`]: arguments in;
//! progress, what was written and the exit code out.
//!
//! Writes `profile_log_device.csv`, the Perfetto trace, the Parquet tables and
//! `capture.json` (per-ring and total counts: zones, records, payload and bus bytes, drops,
//! stalls, drains, why it stopped) into `--out`, ring by ring (memory: one ring's records).
//! With `--all-outputs`, every output `ttprof report` writes, and prints the per-op summary,
//! on the clock fit of `--clock`. With `--sample N`, also the sampled line profile
//! (`ttprof_samples.*`) through every tile's debug daisychain.
//!
//! A capture consumes the rings, so it needs the op log to name the zones (`--oplog`, or an
//! explicit `--no-oplog`); what happens when the op log cannot be read or does not fit, or
//! the outputs cannot be written, is the library's ([`ttprof::capture_session`]), each with
//! an error and its count (exit 2). On an image nothing is running on (no kernel running,
//! nobody answering its clock mailbox) it says so before it starts.
//!
//! Numeric arguments are checked before anything else ([`crate::args`]).

use crate::args::{integer_arg, seconds_arg, threshold_ns_arg};
use crate::progress;
use crate::stop::install_ctrl_c;
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use ttprof::capture::{Interrupt, StopWhen};
use ttprof::capture_session::{Attached, CaptureEvent, CaptureOptions, CaptureOutcome};
use ttprof::inputs::Inputs;
use ttprof::{issue, Error, Result};

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
    /// Also sample the line profile while draining, as `ttprof run --sample N` does: every
    /// tile's debug daisychain writes the pc of one running core every N cycles (2..256,
    /// varied by +-25 % per window) into its sample buffer; each window is charged to that
    /// core's launch and named from the op log: ttprof_samples.txt, .folded, _flame.svg and
    /// .parquet. Samples are not split by zone (from another process the window's start is
    /// not known to the cycle).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=256), requires = "oplog")]
    pub sample: Option<u32>,
    /// Samples per window and tile (16 bytes of L1 each).
    #[arg(long, value_name = "C", default_value_t = ttprof::lines::sample::DEFAULT_COUNT, requires = "sample")]
    pub sample_count: u32,
    /// L1 address of each tile's sample buffer (16-byte aligned, ending within the low
    /// 1 MiB, in L1 no kernel uses: ttprof fills it with a marker). Default 0xFF000 on the
    /// emulator; required on a card, where only you know which L1 is free.
    #[arg(long, value_name = "ADDR", value_parser = crate::run_cmd::parse_sample_buffer, requires = "sample")]
    pub sample_buffer: Option<u32>,
    #[command(flatten)]
    pub dataset: crate::args::DatasetArgs,
}

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
pub fn run(args: CaptureArgs, inputs: &Inputs) -> Result<ExitCode> {
    let (seconds, idle, threshold_ns, sample_every_us) = numbers(&args)?;
    let dataset = args.dataset.dataset()?;
    if args.oplog.is_none() && !args.no_oplog {
        return Err(Error::Argument { what:
            "ttprof capture needs --oplog: the capture consumes the rings, so zones it cannot name when it ends \
             (they would be written as unresolved-site-<id>) can never be named afterwards; pass --no-oplog to \
             capture unnamed zones anyway"
                .into(),
        });
    }
    let stop = match (seconds, &args.until_file_gone) {
        (Some(d), _) => StopWhen::After(d),
        (None, Some(p)) => StopWhen::FileGone(p.clone()),
        (None, None) => StopWhen::Interrupted,
    };
    let until = until(&stop);
    let sample = args
        .sample
        .map(|n| sample_config(n, args.sample_count, args.sample_buffer, &args.device))
        .transpose()?;
    let interrupt = Interrupt::default();
    let attached = Attached::open(CaptureOptions {
        device: args.device,
        oplog: args.oplog,
        out: args.out,
        stop,
        interrupt: interrupt.clone(),
        inputs: inputs.clone(),
        idle_poll: idle,
        all_outputs: args.all_outputs,
        clock: args.clock,
        sample_every_us,
        threshold_ns,
        spool_dir: args.spool_dir,
        dataset,
        sample,
    })?;
    if let Some(note) = attached.idle_note() {
        eprintln!("{note}");
    }
    install_ctrl_c(&interrupt)?;
    eprintln!("capturing {} until {until}", attached.describe());
    let spinner = progress::spinner();
    let drained = attached.capture(|p| {
        spinner.set_message(format!(
            "{} zones from {} rings, {:.1} MB, {} drains",
            p.zones,
            p.rings,
            p.payload_bytes as f64 / 1e6,
            p.drains
        ));
    })?;
    spinner.finish_and_clear();
    let c = drained.captured();
    eprintln!(
        "stopped: {} after {:.1} s",
        c.stopped.describe(),
        c.elapsed.as_secs_f64()
    );
    let mut bar: Option<ProgressBar> = None;
    let outcome = drained.write(&mut |e| match e {
        CaptureEvent::Rings { written, of } => bar
            .get_or_insert_with(|| progress::bar(of, "rings"))
            .set_position(written),
        CaptureEvent::AllOutputsFailed(e) => eprintln!("error: --all-outputs: {e}"),
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    print_written(&outcome);
    let summary_file = outcome.write_summary()?;
    print_counts(&outcome, &summary_file);
    let errors =
        issue::print(outcome.captured.readout.issues()) + issue::print(&outcome.written.issues);
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the output is incomplete");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--sample N` with its buffer: on a card the buffer must be named (module docs of the
/// argument).
fn sample_config(
    n: u32,
    count: u32,
    buffer: Option<u32>,
    device: &std::path::Path,
) -> Result<ttprof::lines::sample::SampleConfig> {
    let mut s = ttprof::lines::sample::SampleConfig::new(n);
    match buffer {
        Some(addr) => s.buffer.addr = addr,
        None if ttprof::devmem::is_card(device) => {
            return Err(Error::Argument {
                what: format!(
                    "--sample on a card needs --sample-buffer ADDR: {count} x 16 bytes of every tile's L1 (below 1 MiB) \
                     that no kernel uses; ttprof fills it with a marker and the daisychain writes into it"
                ),
            })
        }
        None => {}
    }
    s.buffer.count = count;
    s.check().map_err(|what| Error::Argument { what })?;
    Ok(s)
}

fn until(stop: &StopWhen) -> String {
    match stop {
        StopWhen::Interrupted => "Ctrl-C".into(),
        StopWhen::After(d) => format!("{:.1} s have passed (or Ctrl-C)", d.as_secs_f64()),
        StopWhen::FileGone(p) => format!("{} is removed (or Ctrl-C)", p.display()),
    }
}

/// What a written capture prints first: the per-op summary (--all-outputs), the clock, the
/// files.
fn print_written(o: &CaptureOutcome) {
    if let Some(summary) = &o.summary {
        print!("{summary}");
        println!();
    }
    println!("{}", o.clock_note);
    println!("wrote:");
    for f in &o.files {
        println!("  {}", f.display());
    }
}

/// What a written capture prints last: its counts, the CSV and the summary file.
fn print_counts(o: &CaptureOutcome, summary_file: &std::path::Path) {
    let (c, w) = (&o.captured, &o.written);
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
    println!("wrote {} ({} rows)", o.csv.display(), w.rows);
    if let Some(s) = &o.samples {
        println!(
            "sampled {} window(s) through the daisychains; {} dropped (their core started another launch), {} unfinished",
            s.windows, s.straddled, s.unfinished,
        );
    }
    println!("wrote {}", summary_file.display());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::YEAR_SECONDS;
    use riscv_linker::{Arch, NocCoord};
    use std::path::Path;
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
            sample: None,
            sample_count: ttprof::lines::sample::DEFAULT_COUNT,
            sample_buffer: None,
        }
    }

    #[test]
    fn sampling_a_card_needs_a_named_buffer_and_a_buffer_must_fit() {
        let e = sample_config(8, 16, None, Path::new("tt:0"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("needs --sample-buffer ADDR") && e.contains("16 x 16 bytes"),
            "{e}"
        );
        let s = sample_config(8, 32, Some(0xFE000), Path::new("tt:0")).unwrap();
        assert_eq!((s.buffer.addr, s.buffer.count), (0xFE000, 32));
        let s = sample_config(8, 16, None, Path::new("run/device.img")).unwrap();
        assert_eq!(s.buffer.addr, 0xFF000, "the emulator's default");
        for (addr, count) in [(0x10, 16), (0xFF008, 16), (0xFF000, 0x1000)] {
            let e = sample_config(8, count, Some(addr), Path::new("d.img"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("does not fit"), "{addr:#x} x {count}: {e}");
        }
    }

    #[test]
    fn without_an_op_log_the_capture_refuses_to_start_unless_told_to_capture_unnamed_zones() {
        let dir = temp_dir("capture-oplog");
        // A usable device image: the refusal is about the flags, not the device.
        ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)])
            .write(&dir.join("device.img"))
            .unwrap();
        let e = run(args(&dir, None, false), &Inputs::guarded())
            .unwrap_err()
            .to_string();
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
            assert!(run(a, &Inputs::guarded())
                .unwrap_err()
                .to_string()
                .starts_with("--seconds"));
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
}
