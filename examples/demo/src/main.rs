//! The ttprof demo: build the example kernels, run a sequence of ops on the emulator with a
//! consumer draining the rings while the kernels run, check every op's output, then write
//! tt-metal's `profile_log_device.csv` and print a per-zone summary.
#![warn(missing_docs)]

use clap::Parser;
use riscv_linker::Arch;
use std::path::PathBuf;
use std::process::ExitCode;
use ttprof::issue;
use ttprof::launch::Settings;
use ttprof::session::{parse_arch, parse_grid, Backend};
use ttprof::tracy;
use ttprof_demo::scenario::{self, Fallible, Scenario};
use ttprof_demo::{ops, screen, target_root};

/// Run the example kernels on the emulator and profile them.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Chip architecture: wormhole_b0 or blackhole.
    #[arg(long, default_value = "wormhole_b0", value_parser = parse_arch)]
    arch: Arch,
    /// Worker grid used, COLSxROWS.
    #[arg(long, default_value = "2x2", value_parser = parse_grid)]
    grid: (u8, u8),
    /// Tiles each core streams per op.
    #[arg(long, default_value_t = 4)]
    tiles: u32,
    /// Output directory (default: target/ttprof-demo of the checkout when run inside it, else of
    /// the current directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Host threads for the emulator (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Who reads the rings: `in-process` drains them while the kernels run (the records
    /// leave the device); `none` leaves them in the rings for a readout afterwards (here,
    /// and by `ttprof report --device <out>/device.snap`), dropping with a count what does
    /// not fit.
    #[arg(long, value_enum, default_value = "in-process")]
    consumer: Consumer,
    /// AI-clock frequency steps (DVFS) while the ops run: `default` (80 %, 110 %, then 100 %
    /// of the nominal AICLK) or `MHZ@TIME,...` (e.g. `800@25us,1100@60us,1000@95us`), times
    /// counted from the first op (49.5 ms after the chip's reset, after the first sync
    /// window). The session then samples the clock every 5 us while draining (every 5k
    /// cycles), and the clock fit finds and locates the steps.
    #[arg(long, value_name = "SCHEDULE")]
    dvfs: Option<String>,
    /// After writing the files, serve the zones to a Tracy 0.14 capture tool on this port
    /// (e.g. `tracy-capture -o demo.tracy -p 8086`) and wait until it has everything.
    #[arg(long)]
    tracy: Option<u16>,
    /// Line-level cycles: every emulated cycle of every core by source line and cause
    /// (ttprof_lines.txt, ttprof_cycles.folded, ttprof_flame.svg, ttprof_lines.parquet).
    #[arg(long)]
    lines: bool,
    /// Where the kernels record zones: `ring` (the per-RISC ring in L1) or `timestamper`
    /// (the tile's debug timestamper, two stores per zone; needs `--consumer in-process`).
    #[arg(long, default_value = "ring", value_parser = Backend::parse)]
    backend: Backend,
    /// Sampled line profile through each tile's debug daisychain, a sample every N cycles
    /// (ttprof_samples.txt, .folded, _flame.svg, .parquet); with --lines, how it agrees
    /// with the exact one.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=256))]
    sample: Option<u32>,
    /// Samples per window and tile with --sample.
    #[arg(long, value_name = "C", requires = "sample")]
    sample_count: Option<u32>,
    /// Launch the op sequence this many times (a sampled profile adds up the launches of
    /// the same op: short kernels need several for their shares to settle).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    repeat: u32,
    /// Print the whole summary (every zone, every wait) and every file written, instead of
    /// one screen; ttprof_summary.txt always holds everything.
    #[arg(long)]
    verbose: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Consumer {
    InProcess,
    None,
}

fn run(args: &Args) -> Fallible<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| target_root().join("ttprof-demo"));
    eprintln!(
        "building the example kernels for {} (the first build also compiles `core`)...",
        args.arch
    );
    let elfs = scenario::build_kernels_for(args.arch, args.backend, &out.join("kernels"))?;
    let s = Scenario {
        arch: args.arch,
        grid: args.grid,
        ops: ops::sequence(args.tiles).repeat(args.repeat as usize),
        out: out.clone(),
        threads: args.threads,
        drain_every_cycles: if args.consumer == Consumer::InProcess {
            250_000
        } else {
            0
        },
        settings: Settings::default(),
        clock: scenario::realistic_clock(args.arch),
        lines: args.lines,
        backend: args.backend,
        sample: args.sample.map(|n| {
            let mut c = ttprof::lines::sample::SampleConfig::new(n);
            if let Some(count) = args.sample_count {
                c.buffer.count = count;
            }
            c
        }),
    };
    let mut s = s;
    if let Some(text) = &args.dvfs {
        s.clock.dvfs =
            vec![scenario::parse_dvfs(args.arch, text).map_err(|e| format!("--dvfs: {e}"))?];
    }
    let profile = scenario::run(&s, &elfs, |line| eprintln!("{line}"))?;
    eprintln!("{}", profile.fit);
    let issues: Vec<_> = profile.issues().cloned().collect();
    print!("{}", screen::render(&profile, &out, args.verbose));
    issue::print(&issues);
    let r = &profile.readout;
    if let Some(port) = args.tracy {
        let stream = tracy::TracyStream::build(
            r,
            &profile.resolution,
            Some(&profile.oplog),
            &profile.fit.timebase,
            &tracy::StreamOptions::default(),
        )?;
        let opts = tracy::ServeOptions {
            addr: ([127, 0, 0, 1], port).into(),
            ..tracy::ServeOptions::default()
        };
        let server = tracy::Server::bind(opts.addr)?;
        let at = server.local_addr();
        eprintln!(
            "serving the zones to Tracy on {at}: run `tracy-capture -o demo.tracy -a {} -p {}` or connect the GUI",
            at.ip(),
            at.port()
        );
        server.serve(&stream, &opts, |msg| eprintln!("{msg}"))?;
    }
    if profile.has_errors() {
        return Err("the readout reported errors (see above)".into());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ttprof-demo: error: {e}");
            ExitCode::FAILURE
        }
    }
}
