//! `ttprof build` and `ttprof run`: the command line around [`ttprof::session::build`'s
//! request](ttprof::session::BuildRequest) and [`ttprof::session::run`]: arguments in,
//! progress, the summary, the files written and the exit code out.

use clap::Args;
use riscv_linker::{Arch, Risc};
use std::path::PathBuf;
use std::process::ExitCode;
use ttprof::inputs::Inputs;
use ttprof::launch::Policy;
use ttprof::session::run::{Run, RunEvent, RunOptions, RunOutcome};
use ttprof::session::{parse_arch, parse_grid, Backend, BuildRequest, Building, TtMetalOptions};
use ttprof::{issue, Result};

/// The ring backend's default drain interval (device cycles): `--drain-every-cycles`.
const RING_DRAIN_EVERY_CYCLES: u64 = 250_000;

/// Arguments of `ttprof build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// A kernel crate (its directory, with Cargo.toml and build.rs), or C/C++ sources
    /// (FILE.c, FILE.cpp, ...) compiled and linked into one kernel for --core.
    #[arg(default_value = ".", value_name = "CRATE_DIR | FILE.c|FILE.cpp...")]
    pub paths: Vec<PathBuf>,
    /// C/C++: the core the kernel is linked for (brisc, ncrisc, trisc0, trisc1, trisc2);
    /// with --tt-metal also compute: a compute kernel for all three TRISCs (with Debian's
    /// GCC, FPU code only; TT_SFPI_COMPILER=DIR builds and links it with Tenstorrent's SFPI
    /// toolchain in DIR, as tt-metal does, SFPU code included).
    #[arg(long, value_name = "RISC", value_parser = parse_core_arg)]
    pub core: Option<CoreArg>,
    /// Chip architecture the kernels are linked for.
    #[arg(long, default_value = "wormhole_b0", value_parser = parse_arch)]
    pub arch: Arch,
    /// C/C++: build without PROFILE_KERNEL: every profiler macro expands to nothing.
    #[arg(long)]
    pub no_profile: bool,
    /// Build one tt-metal dataflow kernel (FILE.cpp, for --core brisc|ncrisc) unchanged,
    /// against tt-metal's headers and pre-compiled firmware (TT_METAL_HOME, else the cache
    /// scripts/fetch-tt-metal.sh fills).
    #[arg(long)]
    pub tt_metal: bool,
    /// --tt-metal: a define of the kernel, NAME=VALUE or NAME (repeat the flag).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define, requires = "tt_metal")]
    pub define: Vec<String>,
    /// --tt-metal: the kernel's compile-time arguments, 32-bit words (decimal or 0x hex).
    #[arg(long, value_delimiter = ',', value_name = "V0,V1,..", value_parser = parse_word, requires = "tt_metal")]
    pub compile_args: Vec<u32>,
    /// --tt-metal: named compile-time arguments, NAME=V (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAME=V,..", value_parser = parse_named_arg, requires = "tt_metal")]
    pub named_compile_args: Vec<(String, u32)>,
    /// --tt-metal: a circular buffer's data format, INDEX=FORMAT (bfloat16, float32,
    /// bfloat8_b, uint32, uint16, int32; repeat the flag); the others are bfloat16.
    #[arg(long, value_name = "INDEX=FORMAT", value_parser = parse_cb_format, requires = "tt_metal")]
    pub cb_format: Vec<(u8, ttprof::tt_metal_build::CbFormat)>,
    /// --tt-metal: the NoC the kernel uses (NOC_INDEX).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1), requires = "tt_metal")]
    pub noc: u8,
    /// --tt-metal, compute: the math fidelity, 0 (LoFi), 2 (HiFi2), 3 (HiFi3) or 4 (HiFi4).
    #[arg(long, default_value_t = 4, requires = "tt_metal")]
    pub math_fidelity: u8,
    /// --tt-metal, compute: the SFPU's approximation mode (APPROX).
    #[arg(long, requires = "tt_metal")]
    pub math_approx: bool,
    /// --tt-metal, compute: Dest holds 32-bit values (tt-metal's fp32_dest_acc_en).
    #[arg(long, requires = "tt_metal")]
    pub fp32_dest_acc: bool,
    /// --tt-metal, compute: Dest synchronised whole, not in halves (dst_full_sync_en).
    #[arg(long, requires = "tt_metal")]
    pub dst_full_sync: bool,
    /// Cargo features to enable (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub features: Vec<String>,
    /// Build without the crate's default features (e.g. without `profile`).
    #[arg(long)]
    pub no_default_features: bool,
    /// Cargo's target directory (default: CRATE_DIR/target/ttprof-kernels/ARCH); for C/C++,
    /// the directory of the objects and the ELF (default: target/ttprof-kernels/ARCH/RISC
    /// beside the first source).
    #[arg(long)]
    pub target_dir: Option<PathBuf>,
    /// C/C++: more compiler flags, after `--` (e.g. `-- -O3 -DTILES=8`); `-Wl,`/`-l`/`-L`
    /// flags also go to the link.
    #[arg(last = true, value_name = "FLAGS")]
    pub flags: Vec<String>,
}

/// `ttprof build`: one line per binary, `NAME PATH`.
pub fn build(args: &BuildArgs) -> Result<ExitCode> {
    let compute_all = args.core == Some(CoreArg::Compute);
    if compute_all && !args.tt_metal {
        return Err(ttprof::Error::Argument {
            what: "--core compute builds a tt-metal compute kernel: add --tt-metal (a C/C++ kernel of \
                   ttprof's is built for one core: trisc0, trisc1 or trisc2)"
                .into(),
        });
    }
    let request = BuildRequest {
        paths: args.paths.clone(),
        core: match args.core {
            Some(CoreArg::Risc(r)) => Some(r),
            _ => None,
        },
        arch: args.arch,
        no_profile: args.no_profile,
        features: args.features.clone(),
        no_default_features: args.no_default_features,
        target_dir: args.target_dir.clone(),
        flags: args.flags.clone(),
        tt_metal: args.tt_metal.then(|| TtMetalOptions {
            defines: args.define.clone(),
            compile_args: args.compile_args.clone(),
            named_args: args.named_compile_args.clone(),
            cb_formats: args.cb_format.clone(),
            noc: args.noc,
            compute_all,
            compute: ttprof::tt_metal_build::ComputeConfig {
                math_fidelity: args.math_fidelity,
                approx: args.math_approx,
                fp32_dest_acc: args.fp32_dest_acc,
                dst_full_sync: args.dst_full_sync,
            },
        }),
    };
    for (name, path) in request.build()? {
        println!("{name} {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `NAME` or `NAME=VALUE`: a define.
fn parse_define(s: &str) -> std::result::Result<String, String> {
    ttprof::tt_metal_build::check_define(s)?;
    Ok(s.to_string())
}

/// `NAME=V`: a named compile-time argument.
fn parse_named_arg(s: &str) -> std::result::Result<(String, u32), String> {
    let (name, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: give NAME=VALUE"))?;
    ttprof::tt_metal_build::check_define(name)?;
    Ok((name.to_string(), parse_word(v)?))
}

/// `INDEX=FORMAT`: a circular buffer's data format.
fn parse_cb_format(s: &str) -> std::result::Result<(u8, ttprof::tt_metal_build::CbFormat), String> {
    let (i, f) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: give INDEX=FORMAT (e.g. 0=bfloat16)"))?;
    let i: u8 = i
        .trim()
        .parse()
        .ok()
        .filter(|i| *i < 64)
        .ok_or_else(|| format!("{s:?}: the index is a circular buffer, 0 to 63"))?;
    Ok((i, ttprof::tt_metal_build::CbFormat::parse(f.trim())?))
}

/// A 32-bit word in decimal or 0x hex.
fn parse_word(s: &str) -> std::result::Result<u32, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("{s:?} is not a 32-bit word (decimal or 0x hex)"))
}

/// `ttprof build --core`: one RISC, or `compute` (a tt-metal compute kernel's three TRISCs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreArg {
    /// One RISC.
    Risc(Risc),
    /// All three TRISCs.
    Compute,
}

fn parse_core_arg(s: &str) -> std::result::Result<CoreArg, String> {
    if s == "compute" {
        return Ok(CoreArg::Compute);
    }
    ttprof::session::parse_risc(s)
        .map(CoreArg::Risc)
        .map_err(|e| format!("{e} (or compute: a tt-metal compute kernel for all three TRISCs)"))
}

/// Arguments of `ttprof run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Chip architecture: wormhole_b0 or blackhole (a manifest's `arch` otherwise, then wormhole_b0).
    #[arg(long, value_parser = parse_arch)]
    pub arch: Option<Arch>,
    /// Worker grid, COLSxROWS from logical (0,0) (a manifest's `grid` otherwise, then 1x1).
    #[arg(long, value_parser = parse_grid)]
    pub grid: Option<(u8, u8)>,
    /// Chips of the emulated device, each with the grid, every op run on each of them with
    /// the same kernels, arguments and inputs (a data-parallel op; one op log record per
    /// chip, the chip its `device`): 1 to 32 (a manifest's `chips` otherwise, then 1). Not
    /// with --counters or --sample.
    #[arg(long, conflicts_with = "program")]
    pub chips: Option<u32>,
    /// A kernel for one RISC of every tile: `brisc=PATH/TO/ELF`, `brisc=CRATE_DIR:BINARY` to
    /// build that binary of a kernel crate first, or `brisc=FILE.cpp` (C/C++ sources,
    /// comma-separated) to compile them for that RISC first. RISCs: brisc, ncrisc, trisc0,
    /// trisc1, trisc2, or trisc for all three (a tt-metal compute kernel, built per TRISC).
    #[arg(long = "kernel", value_name = "RISC=ELF|RISC=CRATE:BIN|RISC=FILE.cpp")]
    pub kernels: Vec<String>,
    /// Runtime arguments of one RISC's kernel, 32-bit words (decimal or 0x hex), on every
    /// tile: `brisc=4,0x30000` (tt-metal's `get_arg_val<uint32_t>(i)`, `ttprof_rt::arg(i)`);
    /// `trisc=..` for all three TRISCs; `brisc@1,0=..` on logical tile 1,0 only, instead
    /// (tt-metal's `SetRuntimeArgs` for one core).
    #[arg(long = "arg", value_name = "RISC[@X,Y]=V0,V1,..")]
    pub args: Vec<String>,
    /// A manifest (TOML or JSON) of several named ops run in sequence; see the README.
    #[arg(long, conflicts_with = "kernels")]
    pub manifest: Option<PathBuf>,
    /// A tt-metal program file (TOML: cores, kernels built unchanged from their sources,
    /// circular buffers, runtime arguments, semaphores; or several [[program]]s run in
    /// order; interleaved DRAM and L1 buffers with inputs and expected outputs), run with
    /// tt-metal's pre-compiled firmware, ttprof acting as its slow-dispatch host; see
    /// docs/design/tt-metal-program.md. An output that differs from its expected file
    /// exits 2.
    #[arg(long, conflicts_with_all = ["kernels", "manifest"])]
    pub program: Option<PathBuf>,
    /// Name of the op (with --kernel).
    #[arg(long, default_value = "kernel")]
    pub name: String,
    /// Launch the op this many times, each with a new run id (1 or more).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub launches: u32,
    /// Written into L1 of every tile before each launch: `ADDR=VALUE` (a 32-bit word) or
    /// `ADDR=@FILE` (the file's bytes). Numbers in decimal or 0x hex.
    #[arg(long = "l1", value_name = "ADDR=VALUE|ADDR=@FILE")]
    pub l1: Vec<String>,
    /// A DRAM input, loaded before each launch: `ADDR=@FILE[,page=N][,tensor=ID]`, an
    /// interleaved buffer at bank address ADDR (page `p` in bank `p % banks`, pages of 4096
    /// bytes unless `page=`), tensor ID in the op log and op graph; `,dtype=bfloat16,
    /// shape=1x1x32x64[,layout=tile|row_major]` says what it holds (the op report's columns;
    /// the page a tile's or a row's). A file that is not whole pages is refused.
    #[arg(long = "dram-in", value_name = "ADDR=@FILE[,..]")]
    pub dram_in: Vec<String>,
    /// A DRAM output, read back after each launch into FILE:
    /// `ADDR=@FILE[,bytes=N][,expect=FILE][,page=N][,tensor=ID]` (and `dtype=`, `shape=`,
    /// `layout=` as for an input); with `expect`, an output that differs from that file is a
    /// data problem (exit 2) naming the first differing byte. With --chips, FILE holds chip
    /// 0's output and every chip's is compared with `expect`.
    #[arg(long = "dram-out", value_name = "ADDR=@FILE[,..]")]
    pub dram_out: Vec<String>,
    /// Run on these tiles only: logical worker coordinates `X,Y` (repeat the flag; a tile
    /// given twice is refused).
    #[arg(long = "tiles", value_name = "X,Y")]
    pub tiles: Vec<String>,
    /// What a producer does when its ring is full: `block` waits for the consumer (lossless,
    /// recorded as PROFILER-STALL zones, which the bottleneck analysis counts as the
    /// profiler's time, not the kernel's), `drop` drops and counts. Default: as built.
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// Drain the rings every this many device cycles while kernels run (0: read only at the
    /// end, so a ring that fills drops its later records). When the analysis says the op is
    /// bound by the profiler, drain more often (fewer cycles) or record fewer zones.
    /// (`--drain-every` is an older spelling.) Default: 250000 on the ring backend, 2048 on
    /// the timestamper's (what its 32 KiB buffer holds of a dense kernel's zones, with room
    /// to spare; a longer interval there loses zones, which the run reports).
    #[arg(
        long = "drain-every-cycles",
        alias = "drain-every",
        value_name = "CYCLES"
    )]
    pub drain_every: Option<u64>,
    /// Instructions one core may retire in one launch before it is stopped as a runaway
    /// (a fault, exit 2): raise it for a legitimately long kernel (1 or more; default
    /// 2000000000).
    #[arg(long, value_name = "N", default_value_t = 2_000_000_000)]
    // ttprof_emu::DEFAULT_INSTRUCTION_BUDGET
    pub budget: u64,
    /// Stop the run after this many seconds of wall-clock time (0: no limit, the default):
    /// a launch still running then is a fault (exit 2) naming every core still running
    /// (chip, tile, RISC, pc, function, source line, instructions retired); the outputs hold
    /// what was recorded before it.
    #[arg(long = "timeout-s", value_name = "SECONDS", default_value_t = 0.0)]
    pub timeout_s: f64,
    /// Line-level cycles: charge every emulated cycle of every core to its source line
    /// (function, inlined frames), innermost zone and cause, and write ttprof_lines.txt,
    /// ttprof_cycles.folded, ttprof_flame.svg and ttprof_lines.parquet, and per-core line
    /// tracks in ttprof_trace.pftrace. The cores run on the emulator's interpreter (no
    /// JIT), so the run is slower; its results are the same.
    #[arg(long)]
    pub lines: bool,
    /// Tensix performance counters over every op, per tile: groups `fpu`, `instrn`,
    /// `unpack`, `pack` (`l1`: not modelled by the emulator), each `GROUP` (its default
    /// counter: FPU_COUNTER, THREAD_STALLS_1, UNPACK0_BUSY_THREAD0, PACKER_BUSY) or
    /// `GROUP=COUNTER` with a name from tt-llk's tables (e.g. `instrn=WAITING_FOR_SRCA_VALID`).
    /// The host arms them before each launch and reads them after it (no device cycles);
    /// the values go into ops.jsonl, the summary and ttprof_analysis.json. With --program too.
    #[arg(long, value_name = "GROUPS")]
    pub counters: Option<String>,
    /// Where kernels record zones, events and data: `ring` (the per-RISC ring in L1) or
    /// `timestamper` (the tile's debug timestamper: two stores per zone). Kernel crates are
    /// built with `--features ttprof-rt/timestamper`, C/C++ with
    /// `-DTTPROF_BACKEND_TIMESTAMPER`; an ELF given as a file must have been built so.
    #[arg(long, default_value = "ring", value_parser = Backend::parse)]
    pub backend: Backend,
    /// Sampled line profile, the way a card can take it: each tile's debug daisychain
    /// writes the pc of one of its cores every N cycles (2..256, varied by +-25 % per
    /// window) into L1; the host reads the samples and arms the next core every window
    /// (--sample-count x N cycles) and launch, and writes ttprof_samples.txt (per line:
    /// samples, share and its 95 % interval), ttprof_samples.folded, ttprof_samples_flame.svg
    /// and ttprof_samples.parquet. With --lines too, each share is set beside the exact one
    /// and the agreement is printed. The sampled cores run on the interpreter.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=256))]
    pub sample: Option<u32>,
    /// Samples per window and tile (16 bytes of L1 each).
    #[arg(long, value_name = "C", default_value_t = ttprof::lines::sample::DEFAULT_COUNT, requires = "sample")]
    pub sample_count: u32,
    /// L1 address of each tile's sample buffer (16-byte aligned; the buffer must end
    /// within the low 1 MiB and not overlap the kernels' data).
    #[arg(long, value_name = "ADDR", default_value = "0xFF000", value_parser = parse_sample_buffer, requires = "sample")]
    pub sample_buffer: u32,
    /// Output directory.
    #[arg(long, default_value = "target/ttprof-run")]
    pub out: PathBuf,
    /// Hide summary rows whose mean zone duration is below this many ns.
    #[arg(long, default_value_t = 0.0)]
    pub threshold_ns: f64,
    /// Print the whole summary (every zone, every wait) instead of one screen of it;
    /// ttprof_summary.txt always holds everything.
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub dataset: crate::args::DatasetArgs,
}

/// `--policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// Wait for the consumer (lossless).
    Block,
    /// Drop and count.
    Drop,
}

/// `ttprof run`. Exit 0 clean, 1 unusable input, 2 written with problems (a fault among them).
pub fn run(args: &RunArgs, inputs: &Inputs) -> Result<ExitCode> {
    if let Some(program) = &args.program {
        return run_program(
            program,
            &args.out,
            inputs,
            args.counters.as_deref(),
            args.verbose,
        );
    }
    // Numbers first: a bad one costs no build, no run and no output folder.
    let threshold_ns = crate::args::threshold_ns_arg("threshold-ns", args.threshold_ns)?;
    let budget = crate::args::integer_arg(
        "budget",
        args.budget,
        1..=u64::MAX,
        "a number of instructions, 1 or more",
    )?;
    let timeout = crate::args::seconds_arg("timeout-s", args.timeout_s)?;
    let options = RunOptions {
        arch: args.arch,
        grid: args.grid,
        chips: args.chips,
        kernels: args.kernels.clone(),
        args: args.args.clone(),
        manifest: args.manifest.clone(),
        name: args.name.clone(),
        launches: args.launches,
        l1: args.l1.clone(),
        dram_in: args.dram_in.clone(),
        dram_out: args.dram_out.clone(),
        tiles: args.tiles.clone(),
        policy: args.policy.map(|p| match p {
            PolicyArg::Block => Policy::Block,
            PolicyArg::Drop => Policy::Drop,
        }),
        drain_every_cycles: args.drain_every.unwrap_or(match args.backend {
            Backend::Ring => RING_DRAIN_EVERY_CYCLES,
            Backend::Timestamper => ttprof::stamp::DRAIN_EVERY_CYCLES,
        }),
        instruction_budget: budget,
        timeout: (!timeout.is_zero()).then_some(timeout),
        lines: args.lines,
        counters: args.counters.clone(),
        backend: args.backend,
        sample: args.sample.map(|n| {
            let mut s = ttprof::lines::sample::SampleConfig::new(n);
            s.buffer = ttprof::lines::sample::Buffer {
                addr: args.sample_buffer,
                count: args.sample_count,
            };
            s
        }),
        dataset: args.dataset.unchecked(),
        summary_threshold_ns: threshold_ns,
        out: args.out.clone(),
        inputs: inputs.clone(),
    };
    let run = Run::launch(&options, &mut |p| match p {
        RunEvent::Building(Building::Sources { spec, risc, arch }) => {
            eprintln!("building {spec} for {risc} ({arch})...")
        }
        RunEvent::Building(Building::Crate { dir, arch }) => {
            eprintln!("building the kernel crate {} for {arch}...", dir.display())
        }
        RunEvent::Launched { launch, tiles } => eprintln!(
            "run {}: {} on {tiles} tile(s), {} instructions",
            launch.run_id, launch.op, launch.instructions
        ),
    })?;
    match run.finish() {
        Ok(outcome) => Ok(print(&outcome, args.verbose)),
        Err(e) => crate::disk_full(e),
    }
}

/// Names listed per kind on a ring's line of `ttprof run --program` without `--verbose`.
const RING_NAMES: usize = 16;

/// `ttprof run --program`: builds, runs and checks a tt-metal program; exit 2 when an
/// output differs from its expected file.
fn run_program(
    path: &std::path::Path,
    out: &std::path::Path,
    inputs: &Inputs,
    counters: Option<&str>,
    verbose: bool,
) -> Result<ExitCode> {
    let o = ttprof::tt_metal_program::run(path, out, inputs, counters)?;
    println!("{}: tt-metal firmware {}", path.display(), o.firmware);
    for p in &o.programs {
        let cores: Vec<String> = p.cores.iter().map(|(x, y)| format!("{x},{y}")).collect();
        let done = match p.kernel_cycles {
            Some(c) => format!("kernels done after {c} cycles"),
            None => "stopped by a fault".into(),
        };
        println!(
            "program {} (id {}) on {} core(s) ({}): {done}",
            p.name,
            p.run_id,
            cores.len(),
            cores.join(" "),
        );
    }
    for b in &o.buffers {
        println!(
            "buffer {}: {} bytes at bank address {:#x}, {}-byte pages",
            b.name, b.bytes, b.address, b.page_size
        );
    }
    for r in &o.rings {
        // A ring's names by name, at most RING_NAMES of them unless `verbose` (a kernel of
        // 1,000 zone sites printed a line of 1,000 names).
        let list = |m: &std::collections::BTreeMap<String, u64>| {
            let shown = if verbose { m.len() } else { RING_NAMES };
            let mut s = m
                .iter()
                .take(shown)
                .map(|(n, c)| format!("{n} x{c}"))
                .collect::<Vec<_>>()
                .join(", ");
            if m.len() > shown {
                s += &format!(", and {} more (--verbose lists them)", m.len() - shown);
            }
            s
        };
        if o.programs.len() > 1 {
            // A core's ring holds every program's records: these are this program's.
            println!(
                "ring {} of {} on {},{}: zones: {}; events, data, sums: {}",
                r.kernel,
                r.program,
                r.core.0,
                r.core.1,
                list(&r.zones),
                list(&r.others)
            );
            continue;
        }
        println!(
            "ring {} on {},{}: {} bytes, {} dropped; zones: {}; events, data, sums: {}",
            r.kernel,
            r.core.0,
            r.core.1,
            r.bytes,
            r.dropped,
            list(&r.zones),
            list(&r.others)
        );
    }
    for m in &o.matched {
        println!("output {m}: equal to its expected file");
    }
    for m in &o.mismatches {
        eprintln!(
            "error: output {} differs from {} at byte {} (device {:#04x}, expected {:#04x})",
            m.buffer,
            m.expect.display(),
            m.offset,
            m.got,
            m.want
        );
    }
    let profile = &o.session;
    if verbose {
        print!("{}", profile.summary_text());
    } else {
        print!("{}", profile.brief_text());
    }
    println!("wrote:");
    for p in profile.files() {
        println!("  {}", p.display());
    }
    let issues: Vec<_> = profile.issues().cloned().collect();
    let errors = issue::print(&issues);
    let dropped = o.dropped;
    if dropped > 0 {
        eprintln!(
            "error: {dropped} records dropped: a ring filled between two drains (a ring under \
             tt-metal holds 1,920 bytes; drained every 10,000 cycles)"
        );
    }
    if let Some(f) = &o.fault {
        // The fault itself is among the issues above (at its core): its summary once.
        eprintln!("error: {f}");
        eprintln!(
            "error: the outputs hold the records published before the fault; the program's \
             outputs were not checked"
        );
        return Ok(ExitCode::from(2));
    }
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the outputs are incomplete");
    }
    Ok(if o.mismatches.is_empty() && dropped == 0 && errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Prints a finished run: the summary (one screen of it unless `verbose`), the readout's
/// figures, the files written and every problem; the exit code.
fn print(outcome: &RunOutcome, verbose: bool) -> ExitCode {
    let profile = &outcome.session;
    if verbose {
        print!("{}", profile.summary_text());
    } else {
        print!("{}", profile.brief_text());
    }
    let r = &profile.readout;
    println!(
        "\n{} records from {} rings ({} zones); {:.3} bus bytes per payload byte",
        r.records(),
        r.rings().len(),
        r.zones(),
        r.bus_bytes_per_payload_byte().unwrap_or(0.0)
    );
    if let Some(a) = &profile.agreement {
        println!("{a}");
    }
    println!("wrote:");
    for p in profile.files() {
        println!("  {}", p.display());
    }
    let issues: Vec<_> = profile.issues().cloned().collect();
    let errors = issue::print(&issues);
    match &outcome.fault {
        // The fault itself is among the issues above (at its core): said once.
        Some(ttprof::Error::Fault {
            op,
            run,
            recovered: Some(n),
            ..
        }) => {
            eprintln!(
                "error: kernel fault: op {op:?} (run {run}) stopped at the fault above; the cores stopped with it: \
                 {n} byte(s) of records they had written since their last publication were published by the host \
                 and are read"
            );
            eprintln!("error: the outputs hold the records published before the fault");
            return ExitCode::from(2);
        }
        Some(f) => {
            eprintln!("error: {f}");
            eprintln!("error: the outputs hold the records published before the fault");
            return ExitCode::from(2);
        }
        None => {}
    }
    for m in &outcome.mismatches {
        eprintln!("error: {m}");
    }
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the outputs are incomplete");
        return ExitCode::from(2);
    }
    if !outcome.mismatches.is_empty() {
        eprintln!(
            "error: {} DRAM output(s) differ from what was expected",
            outcome.mismatches.len()
        );
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

pub(crate) fn parse_sample_buffer(s: &str) -> std::result::Result<u32, String> {
    ttprof::session::parse_u32(s)
        .ok_or_else(|| format!("{s:?} {}", ttprof::session::u32_problem(s)))
}
