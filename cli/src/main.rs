//! The `ttprof` command line.
#![warn(missing_docs)]

use args::{integer_arg, threshold_ns_arg, YEAR_SECONDS};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use ttprof::devmem::{self, DeviceMemory, Recorder, Snapshot};
use ttprof::inputs::Inputs;
use ttprof::issue;
use ttprof::oplog::OpLog;
use ttprof::profile::Loaded;
use ttprof::readout::{self, Readout};
use ttprof::sink::{self, DeviceCsv, SummarySink};
use ttprof::{csv, Error, Result};

mod args;
mod capture_cmd;
mod clock_cmd;
mod diff_cmd;
mod import_cmd;
mod output;
mod progress;
mod report_cmd;
mod run_cmd;
mod stop;

/// jemalloc: its resident memory follows the live heap on inputs of many rings, where glibc's
/// malloc kept up to 2.7 times it (docs/design/host-layers.md, "Bounded memory").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options: one arena (a few threads allocate; every arena reserves address space)
/// and address space handed back when freed (`retain:false`), so runs under `prlimit --as`
/// fit (`cli/tests/bounded_memory.rs` failed with the defaults). `_RJEM_MALLOC_CONF` in the
/// environment overrides them.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8] = b"narenas:1,retain:false\0";

#[derive(Parser)]
#[command(
    name = "ttprof",
    version,
    about = "Device-side profiler for Tenstorrent Tensix chips: read zone rings out of device memory"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What a readout reads: device memory and the op log that names its zones.
#[derive(Args)]
struct Input {
    /// Device memory: the emulator's device image, a snapshot file, or a card through tt-kmd
    /// (`/dev/tenstorrent/N` or `tt:N`, see `ttprof devices`).
    #[arg(long)]
    device: PathBuf,
    /// The op log the host program wrote (run ids, kernel ELFs, ops, tensors, host times).
    #[arg(long)]
    oplog: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Build every kernel binary of a kernel crate for riscv32im-unknown-none-elf, or C/C++
    /// sources into one kernel for --core (tt-metal's profiler macros and entry points), and
    /// print `NAME PATH` per kernel.
    Build(run_cmd::BuildArgs),
    /// Run kernels on every tile of a grid of the bundled emulator, draining the rings while
    /// they run, and write every output, the op log and a snapshot into --out.
    Run(run_cmd::RunArgs),
    /// Read every ring once and write profile_log_device.csv (tt-metal's format).
    Read {
        #[command(flatten)]
        input: Input,
        /// Directory for the output files (created if missing).
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Advance each ring's TAIL past what was read, freeing it for the producer.
        #[arg(long)]
        consume: bool,
    },
    /// Read every ring once and write every output (12 files): profile_log_device.csv, the op
    /// report (ops_perf_results_<timestamp>.csv), ttprof_trace.json (Chrome trace),
    /// ttprof_trace.pftrace (Perfetto), ttprof_timeline.html, ttprof_summary.txt,
    /// ttprof_analysis.json (bottleneck per op), ttprof_zones/marks/ops.parquet and the op
    /// graph (ttprof_ops.dot, ttprof_ops.svg); print a per-op summary of zone durations.
    Report {
        #[command(flatten)]
        input: Input,
        /// Directory for the output files (created if missing).
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Hide summary rows whose mean zone duration is below this many ns.
        #[arg(long, default_value_t = 0.0)]
        threshold_ns: f64,
        /// Do not print the summary.
        #[arg(long)]
        no_summary: bool,
        /// Print the whole summary (every zone, every wait) instead of one screen of it;
        /// ttprof_summary.txt always holds everything.
        #[arg(long, conflicts_with = "no_summary")]
        verbose: bool,
        #[command(flatten)]
        dataset: args::DatasetArgs,
    },
    /// Attach to a running emulator's device image, drain the rings while kernels run, and
    /// write what was captured when told to stop (after --seconds, when --until-file-gone's
    /// file disappears, or on Ctrl-C).
    Capture(capture_cmd::CaptureArgs),
    /// List the Tenstorrent cards tt-kmd exposes (/dev/tenstorrent/N): index, arch, PCI
    /// address, driver version, harvesting. Any of them is a `--device` (`tt:N`).
    Devices,
    /// Record the device memory a readout needs into a snapshot file, for offline replay.
    Snapshot {
        /// The emulator's device image, or a card (`/dev/tenstorrent/N`, `tt:N`).
        #[arg(long)]
        device: PathBuf,
        /// Snapshot file to write: a regular file (replaced if it exists; a link, FIFO or
        /// device at the path, or the device file itself, is refused), or `-` for standard
        /// output (a pipe or a file, not a terminal). (`-o`/`--output` are older spellings.)
        #[arg(long = "out", short = 'o', alias = "output", value_name = "SNAPSHOT")]
        output: PathBuf,
        /// Record the whole profiler region of every tile (control blocks and all ring bytes)
        /// instead of only what a readout reads.
        #[arg(long)]
        full: bool,
    },
    /// Serve the device zones and the op log's launches to a Tracy 0.14 capture tool
    /// (`tracy-capture` or the GUI), waiting until one has received everything.
    Tracy {
        /// Device memory: the emulator's device image, a snapshot file, or a card; or
        /// tt-metal's device log `profile_log_device.csv` (as `ttprof import` reads it).
        #[arg(long)]
        device: PathBuf,
        /// The op log that names the device's zones (needed for device memory; not for a
        /// device log).
        #[arg(long)]
        oplog: Option<PathBuf>,
        /// With a device log: tt-metal's op report of the same run, naming its ops.
        #[arg(long, value_name = "FILE")]
        ops: Option<PathBuf>,
        /// Address to listen on (loopback unless a remote capture is wanted).
        #[arg(long, default_value = "127.0.0.1")]
        address: std::net::IpAddr,
        /// TCP port to listen on (Tracy's default).
        #[arg(long, default_value_t = ttprof::tracy::DEFAULT_PORT)]
        port: u16,
        /// Seconds to wait for a capture tool to connect and receive everything (0: no
        /// limit). (`--timeout` and `--timeout-seconds` are older spellings.)
        #[arg(
            long = "timeout-s",
            aliases = ["timeout", "timeout-seconds"],
            value_name = "SECONDS",
            default_value_t = 60
        )]
        timeout: u64,
    },
    /// Clock alignment: take a sync window from a live device image through its clock
    /// mailbox (optionally appending it to a snapshot), or fit a snapshot's recorded samples;
    /// print each chip's fitted frequency, drift, residual and estimated error.
    Clock(clock_cmd::ClockArgs),
    /// Compare two runs per op and zone, sum zones included (count, total, mean, p50, p99 in
    /// cycles and ns); ops are matched by op code and position (`CODE #k` when a code occurs
    /// more than once); with --fail-above PCT exit 3 when a zone grew by more than PCT
    /// percent; exit 2 when the runs have nothing in common.
    Diff(diff_cmd::DiffArgs),
    /// Import a capture tt-metal made on a card: profile_log_device.csv (and its op report
    /// with --ops) into every output `ttprof report` writes (device CSV, op report, traces,
    /// HTML, summary, analysis, Perfetto, Parquet, op graph); exit 2 when zone markers do
    /// not pair up (counted; the outputs are still written).
    Import(import_cmd::ImportArgs),
}

fn main() -> ExitCode {
    // No output may replace a file this command reads (`snapshot --device X -o X`): every
    // opener notes what it reads in this guard, every writer asks it.
    let inputs = Inputs::guarded();
    // A usage error is unusable input: exit 1 (clap's own code, 2, means data problems here).
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Ctrl-C and SIGTERM remove the temporaries of unfinished outputs (exit 130).
    if let Err(e) = stop::install() {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    let result = match cli.command {
        Command::Build(args) => run_cmd::build(&args),
        Command::Run(args) => run_cmd::run(&args, &inputs),
        Command::Read {
            input,
            out,
            consume,
        } => read(&input.device, &input.oplog, &out, consume, &inputs),
        Command::Snapshot {
            device,
            output,
            full,
        } => snapshot(&device, &output, full, &inputs),
        Command::Devices => {
            let cards = devmem::list_cards(&Default::default());
            print!("{}", devmem::render_cards(&cards));
            Ok(ExitCode::SUCCESS)
        }
        Command::Capture(args) => capture_cmd::run(args, &inputs),
        Command::Clock(args) => clock_cmd::run(&args, &inputs),
        Command::Diff(args) => diff_cmd::run(&args, &inputs),
        Command::Import(args) => import_cmd::run(&args, &inputs),
        Command::Report {
            input,
            out,
            threshold_ns,
            no_summary,
            verbose,
            dataset,
        } => threshold_ns_arg("threshold-ns", threshold_ns).and_then(|threshold_ns| {
            let dataset = dataset.dataset()?;
            report_cmd::run(&report_cmd::Args {
                device: &input.device,
                oplog: &input.oplog,
                out: &out,
                threshold_ns,
                summary: !no_summary,
                verbose,
                dataset,
                inputs: &inputs,
            })
        }),
        Command::Tracy {
            device,
            oplog,
            ops,
            address,
            port,
            timeout,
        } => {
            let expected =
                format!("a number of seconds from 0 (no limit) to {YEAR_SECONDS} (a year)");
            integer_arg("timeout-s", timeout, 0..=YEAR_SECONDS, &expected).and_then(|timeout| {
                let opts = ttprof::tracy::ServeOptions {
                    addr: (address, port).into(),
                    timeout: (timeout > 0).then(|| std::time::Duration::from_secs(timeout)),
                    ..Default::default()
                };
                use ttprof::tracy::command::{self, Source};
                let source = if ttprof::tt_metal::device_log::is_device_log(&device) {
                    Source::DeviceLog {
                        csv: &device,
                        ops: ops.as_deref(),
                    }
                } else {
                    if ops.is_some() {
                        return Err(Error::Argument {
                            what: format!(
                                "--ops names the runs of a device log (profile_log_device.csv); --device {} is device memory: \
                                 name it with --oplog",
                                device.display()
                            ),
                        });
                    }
                    let oplog = oplog.as_deref().ok_or_else(|| {
                        Error::Argument {
                            what: format!(
                                "--device {}: device memory needs --oplog (the op log that names its zones)",
                                device.display()
                            ),
                        }
                    })?;
                    Source::Device {
                        device: &device,
                        oplog,
                    }
                };
                command::run(&source, &opts).map(|o| {
                    if issue::print(&o.issues) > 0 {
                        ExitCode::from(2)
                    } else {
                        ExitCode::SUCCESS
                    }
                })
            })
        }
    };
    match result {
        Ok(code) => code,
        // Drained zones lost (the disk filled): data lost, not unusable input.
        Err(e @ Error::CaptureLost { .. }) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// An error while the outputs were written: a full disk is not unusable input (the files
/// written before it are complete), so it ends with exit 2 naming the file not written;
/// anything else stays an error (exit 1).
fn disk_full(e: Error) -> Result<ExitCode> {
    let Some(path) = e.disk_full() else {
        return Err(e);
    };
    eprintln!("error: {e}");
    eprintln!(
        "error: {} was not written (its disk is full); the outputs written before it are complete: free space or \
         write elsewhere, and run again for the rest",
        path.display()
    );
    Ok(ExitCode::from(2))
}

fn read(
    device: &Path,
    oplog_path: &Path,
    out: &Path,
    consume: bool,
    inputs: &Inputs,
) -> Result<ExitCode> {
    let oplog = OpLog::read(oplog_path, inputs)?;
    if consume
        && !devmem::is_card(device)
        && devmem::file_kind(device, inputs)? == devmem::FileKind::Snapshot
    {
        return Err(Error::BadFile {
            path: device.into(),
            what:
                "is a snapshot (a recording of device memory): --consume needs live device memory"
                    .into(),
        });
    }
    // Two readings (the model, then the rings one at a time); a consumed ring cannot be
    // read twice, so `--consume` keeps what it freed in a spool file under `out` and the
    // second reading is of the spool (in the nearest existing directory of `out`: nothing is
    // created before the input is known to be usable).
    let spool_dir = out
        .ancestors()
        .find(|d| d.is_dir())
        .unwrap_or(Path::new("."));
    let (
        Loaded {
            profile,
            memory,
            clock_note,
        },
        mut spool,
    ) = if consume {
        let (l, s) = ttprof::spooled::open_consuming(device, Some(oplog), spool_dir, inputs)?;
        (l, Some(s))
    } else {
        (ttprof::pass::open(device, Some(oplog), inputs)?, None)
    };
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, "create output directory", e))?;
    let csv_path = out.join(csv::FILE_NAME);
    // The device CSV and the summary (printed, not written) in one pass over the rings.
    let mut device_csv = DeviceCsv::new(&csv_path, inputs);
    let mut summary = SummarySink::printed(0.0);
    let mut sinks: [&mut dyn sink::Sink; 2] = [&mut device_csv, &mut summary];
    match spool.as_mut() {
        Some(spool) => {
            let mut rings = ttprof::spooled::SpoolRings::new(&profile, spool);
            sink::drive_rings(&profile, &mut rings, &mut sinks)?;
        }
        None => {
            let mut rings = ttprof::pass::DeviceRings::new(&profile, memory.as_ref())?;
            sink::drive_rings(&profile, &mut rings, &mut sinks)?;
        }
    }
    if let Some((_, text)) = &summary.summary {
        print!("{text}");
    }
    println!();
    print_readout_line(profile.readout(), memory.as_ref());
    println!("{clock_note}");
    println!(
        "wrote {} ({} rows)",
        csv_path.display(),
        device_csv.written_rows
    );

    let errors = issue::print(profile.readout().issues()) + issue::print(&profile.sites().issues);
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the output is incomplete");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_readout_line(r: &Readout, mem: &dyn DeviceMemory) {
    let ratio = r
        .bus_bytes_per_payload_byte()
        .map_or("n/a".into(), |x| format!("{x:.3}"));
    let dropped: u64 = r.rings().iter().map(|x| x.dropped as u64).sum();
    let stalls: u64 = r.rings().iter().map(|x| x.stalls as u64).sum();
    println!(
        "read {}: {} ring(s) on {} of {} tile(s), {} records ({} zones), {} dropped, {} stalls; \
         {} payload bytes, {} bus bytes ({ratio} bus bytes per payload byte)",
        mem.describe(),
        r.rings().len(),
        r.tiles() - r.unused_tiles(),
        r.tiles(),
        r.records(),
        r.zones(),
        dropped,
        stalls,
        r.payload_bytes(),
        r.bus_bytes(),
    );
}

fn snapshot(device: &Path, output: &Path, full: bool, inputs: &Inputs) -> Result<ExitCode> {
    output::check(output, inputs)?;
    let mem = devmem::open(device, false, inputs)?;
    let recorder = Recorder::new(mem.as_ref())?;
    let readout = readout::read(&recorder, false)?;
    let snap: Snapshot = recorder.into_snapshot();
    if full {
        let c = riscv_linker::profiler::control_region();
        snap.capture_region(mem.as_ref(), c.start, c.size)?;
        let r = riscv_linker::profiler::rings_region();
        snap.capture_region(mem.as_ref(), r.start, r.size)?;
    }
    output::write(output, &snap.to_bytes()?, true, inputs)?;
    let words: usize = snap.extents().iter().map(|e| e.words.len()).sum();
    let line = format!(
        "({} bytes of device memory, {} ring(s))",
        4 * words,
        readout.rings().len()
    );
    if output::is_stdout(output) {
        eprintln!("wrote the snapshot to standard output {line}");
    } else {
        println!("wrote {} {line}", output.display());
    }
    let errors = issue::print(readout.issues());
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
