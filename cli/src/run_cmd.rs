//! `ttprof build` and `ttprof run`: a user's kernel crate, built and profiled on the bundled
//! emulator in one command each (the CLI around [`ttprof::session`]).

use crate::dram;
use clap::Args;
use riscv_linker::{Arch, NocCoord, Risc};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use ttprof::kernels::{self, BuiltKernels, CKernelBuild, KernelBuild};
use ttprof::launch::Policy;
use ttprof::session::Backend;
use ttprof::session::{parse_arch, parse_grid, Config, L1Input, Op, Session};
use ttprof::{issue, Error, Result};

/// Arguments of `ttprof build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    /// A kernel crate (its directory, with Cargo.toml and build.rs), or C/C++ sources
    /// (FILE.c, FILE.cpp, ...) compiled and linked into one kernel for --core.
    #[arg(default_value = ".", value_name = "CRATE_DIR | FILE.c|FILE.cpp...")]
    pub paths: Vec<PathBuf>,
    /// C/C++: the core the kernel is linked for (brisc, ncrisc, trisc0, trisc1, trisc2).
    #[arg(long, value_name = "RISC", value_parser = parse_risc_arg)]
    pub core: Option<Risc>,
    /// Chip architecture the kernels are linked for.
    #[arg(long, default_value = "wormhole_b0", value_parser = parse_arch)]
    pub arch: Arch,
    /// C/C++: build without PROFILE_KERNEL: every profiler macro expands to nothing.
    #[arg(long)]
    pub no_profile: bool,
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

impl BuildArgs {
    fn kernel_build(&self) -> Result<KernelBuild> {
        let [crate_dir] = self.paths.as_slice() else {
            return Err(Error::Argument {
                what: "build one kernel crate at a time (or C/C++ sources with --core)".into(),
            });
        };
        if self.core.is_some() || self.no_profile || !self.flags.is_empty() {
            return Err(Error::Argument { what: format!(
                "{} is a kernel crate: --core, --no-profile and `-- FLAGS` are for C/C++ sources \
                 (a crate says its cores in build.rs; build without `profile` with --no-default-features)",
                crate_dir.display()
            ) });
        }
        let mut b = KernelBuild::new(crate_dir, self.arch);
        b.features = self.features.clone();
        b.no_default_features = self.no_default_features;
        if let Some(t) = &self.target_dir {
            b.target_dir = t.clone();
        }
        Ok(b)
    }

    fn c_build(&self) -> Result<CKernelBuild> {
        let Some(risc) = self.core else {
            return Err(Error::Argument { what: format!(
                "{}: a C/C++ kernel is linked for one core: give --core brisc|ncrisc|trisc0|trisc1|trisc2",
                self.paths[0].display()
            ) });
        };
        if !self.features.is_empty() || self.no_default_features {
            return Err(Error::Argument { what: "--features and --no-default-features are for kernel crates; C/C++ takes -- FLAGS"
                    .into(), });
        }
        let mut b = CKernelBuild::new(self.paths.clone(), risc, self.arch);
        b.profile = !self.no_profile;
        b.out_dir = self
            .target_dir
            .clone()
            .unwrap_or_else(|| b.default_out_dir());
        b.flags = self.flags.clone();
        Ok(b)
    }
}

/// Whether the command line names C/C++ sources (every path a `.c`/`.cpp`/...).
fn is_c_build(paths: &[PathBuf]) -> Result<bool> {
    let c = paths
        .iter()
        .filter(|p| kernels::c_source_kind(p).is_some())
        .count();
    match c {
        0 => Ok(false),
        n if n == paths.len() => Ok(true),
        _ => Err(Error::Argument {
            what: "give either one kernel crate or C/C++ sources (.c, .cpp, .cc, .cxx), not both"
                .into(),
        }),
    }
}

/// `ttprof build`: one line per binary, `NAME PATH`.
pub fn build(args: &BuildArgs) -> Result<ExitCode> {
    if is_c_build(&args.paths)? {
        let b = args.c_build()?;
        let elf = kernels::build_c(&b)?;
        let elf = std::path::absolute(&elf).unwrap_or(elf);
        println!("{} {}", b.name, elf.display());
        return Ok(ExitCode::SUCCESS);
    }
    let built = kernels::build(&args.kernel_build()?)?;
    for (name, path) in &built.binaries {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        println!("{name} {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_risc_arg(s: &str) -> std::result::Result<Risc, String> {
    parse_risc(s).map_err(|e| e.to_string())
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
    /// A kernel for one RISC of every tile: `brisc=PATH/TO/ELF`, `brisc=CRATE_DIR:BINARY` to
    /// build that binary of a kernel crate first, or `brisc=FILE.cpp` (C/C++ sources,
    /// comma-separated) to compile them for that RISC first. RISCs: brisc, ncrisc, trisc0,
    /// trisc1, trisc2, or trisc for all three (a tt-metal compute kernel, built per TRISC).
    #[arg(long = "kernel", value_name = "RISC=ELF|RISC=CRATE:BIN|RISC=FILE.cpp")]
    pub kernels: Vec<String>,
    /// Runtime arguments of one RISC's kernel, 32-bit words (decimal or 0x hex), on every
    /// tile: `brisc=4,0x30000` (tt-metal's `get_arg_val<uint32_t>(i)`, `ttprof_rt::arg(i)`);
    /// `trisc=..` for all three TRISCs.
    #[arg(long = "arg", value_name = "RISC=V0,V1,..")]
    pub args: Vec<String>,
    /// A manifest (TOML or JSON) of several named ops run in sequence; see the README.
    #[arg(long, conflicts_with = "kernels")]
    pub manifest: Option<PathBuf>,
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
    /// bytes unless `page=`), tensor ID in the op log and op graph.
    #[arg(long = "dram-in", value_name = "ADDR=@FILE[,..]")]
    pub dram_in: Vec<String>,
    /// A DRAM output, read back after each launch into FILE:
    /// `ADDR=@FILE[,bytes=N][,expect=FILE][,page=N][,tensor=ID]`; with `expect`, an output
    /// that differs from that file is a data problem (exit 2) naming the first differing byte.
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
    /// (`--drain-every` is an older spelling.)
    #[arg(
        long = "drain-every-cycles",
        alias = "drain-every",
        value_name = "CYCLES",
        default_value_t = 250_000
    )]
    pub drain_every: u64,
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
    #[command(flatten)]
    pub dataset: crate::args::DatasetArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyArg {
    Block,
    Drop,
}

/// A manifest: several ops in sequence (TOML or JSON, by the file's extension).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    arch: Option<String>,
    grid: Option<String>,
    policy: Option<PolicyArg>,
    #[serde(rename = "op")]
    ops: Vec<ManifestOp>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestOp {
    name: String,
    /// RISC -> ELF path or `CRATE_DIR:BINARY`, relative to the manifest.
    kernels: BTreeMap<String, String>,
    #[serde(default)]
    tiles: Vec<String>,
    #[serde(default)]
    l1: Vec<String>,
    /// RISC -> runtime arguments: `[4, 8]` or `"4,0x8"`.
    #[serde(default)]
    args: BTreeMap<String, ArgList>,
    /// DRAM inputs and outputs, as `--dram-in` / `--dram-out` take them (files relative to
    /// the manifest).
    #[serde(default)]
    dram_in: Vec<String>,
    #[serde(default)]
    dram_out: Vec<String>,
    #[serde(default = "one")]
    launches: u32,
    #[serde(default)]
    attributes: serde_json::Map<String, serde_json::Value>,
}

fn one() -> u32 {
    1
}

/// A manifest's runtime arguments of one RISC: integers, or a string as `--arg` takes it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ArgList {
    Words(Vec<u32>),
    Text(String),
}

/// An op as the command line or a manifest gives it, before its crates are built.
struct OpPlan {
    name: String,
    kernels: Vec<(Risc, String)>,
    tiles: Vec<String>,
    l1: Vec<String>,
    args: Vec<(Risc, Vec<u32>)>,
    dram_in: Vec<dram::Buffer>,
    dram_out: Vec<dram::Buffer>,
    launches: u32,
    attributes: serde_json::Map<String, serde_json::Value>,
}

/// `ttprof run`. Exit 0 clean, 1 unusable input, 2 written with problems (a fault among them).
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    // Numbers first: a bad one costs no build, no run and no output folder.
    let threshold_ns = crate::args::threshold_ns_arg("threshold-ns", args.threshold_ns)?;
    let budget = crate::args::integer_arg(
        "budget",
        args.budget,
        1..=u64::MAX,
        "a number of instructions, 1 or more",
    )?;
    let timeout = crate::args::seconds_arg("timeout-s", args.timeout_s)?;
    let (manifest, base) = match &args.manifest {
        Some(p) => (
            Some(read_manifest(p)?),
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None => (None, PathBuf::new()),
    };
    let arch = match (args.arch, manifest.as_ref().and_then(|m| m.arch.as_deref())) {
        (Some(a), _) => a,
        (None, Some(s)) => parse_arch(s).map_err(|what| Error::Argument { what })?,
        (None, None) => Arch::WormholeB0,
    };
    let grid = match (args.grid, manifest.as_ref().and_then(|m| m.grid.as_deref())) {
        (Some(g), _) => g,
        (None, Some(s)) => parse_grid(s).map_err(|what| Error::Argument { what })?,
        (None, None) => (1, 1),
    };
    let policy = args.policy.or(manifest.as_ref().and_then(|m| m.policy));
    let plans: Vec<OpPlan> = match manifest {
        Some(m) => m
            .ops
            .into_iter()
            .map(|o| {
                let mut kernels = Vec::new();
                for (r, k) in o.kernels {
                    let k = relative_to(&base, &k);
                    kernels.extend(parse_riscs(&r)?.into_iter().map(|risc| (risc, k.clone())));
                }
                let l1 = o.l1.iter().map(|s| relative_l1(&base, s)).collect();
                let mut args = Vec::new();
                for (r, a) in o.args {
                    let words = match a {
                        ArgList::Words(w) => w,
                        ArgList::Text(t) => parse_words(&format!("{r}={t}"), &t)?,
                    };
                    args.extend(
                        parse_riscs(&r)?
                            .into_iter()
                            .map(|risc| (risc, words.clone())),
                    );
                }
                let dram_in = o
                    .dram_in
                    .iter()
                    .map(|d| dram::parse(d, false, &base))
                    .collect::<Result<_>>()?;
                let dram_out = o
                    .dram_out
                    .iter()
                    .map(|d| dram::parse(d, true, &base))
                    .collect::<Result<_>>()?;
                Ok(OpPlan {
                    name: o.name,
                    kernels,
                    tiles: o.tiles,
                    l1,
                    args,
                    dram_in,
                    dram_out,
                    launches: o.launches,
                    attributes: o.attributes,
                })
            })
            .collect::<Result<_>>()?,
        None => {
            if args.kernels.is_empty() {
                return Err(Error::Argument {
                    what:
                        "nothing to run: give --kernel RISC=ELF (once per RISC) or --manifest FILE"
                            .into(),
                });
            }
            let kernels = args
                .kernels
                .iter()
                .map(|k| parse_kernel_arg(k))
                .collect::<Result<Vec<_>>>()?
                .concat();
            vec![OpPlan {
                name: args.name.clone(),
                kernels,
                tiles: Vec::new(),
                l1: Vec::new(),
                args: Vec::new(),
                dram_in: Vec::new(),
                dram_out: Vec::new(),
                launches: 1,
                attributes: Default::default(),
            }]
        }
    };
    let cli_args = args
        .args
        .iter()
        .map(|a| parse_arg_arg(a))
        .collect::<Result<Vec<_>>>()?
        .concat();
    let cli_dram_in = args
        .dram_in
        .iter()
        .map(|d| dram::parse(d, false, Path::new("")))
        .collect::<Result<Vec<_>>>()?;
    let cli_dram_out = args
        .dram_out
        .iter()
        .map(|d| dram::parse(d, true, Path::new("")))
        .collect::<Result<Vec<_>>>()?;
    // Every crate and C/C++ kernel is built (once each) before anything runs: a build error
    // costs no run.
    let mut crates: BTreeMap<PathBuf, BuiltKernels> = BTreeMap::new();
    let mut c_kernels: BTreeMap<(String, Risc), PathBuf> = BTreeMap::new();
    let mut ops = Vec::new();
    for plan in &plans {
        let mut op = Op::new(&plan.name);
        op.attributes = plan.attributes.clone();
        // Tiles before kernels: a bad or repeated tile costs no build.
        let tiles: Vec<&String> = plan.tiles.iter().chain(&args.tiles).collect();
        let mut parsed: Vec<NocCoord> = Vec::new();
        for t in &tiles {
            let c = parse_tile(t, arch, grid)?;
            if parsed.contains(&c) {
                return Err(Error::Argument {
                    what: format!(
                    "op {:?}: tile {t:?} given twice (each tile runs the op once: give it once)",
                    plan.name
                ),
                });
            }
            parsed.push(c);
        }
        for (risc, spec) in &plan.kernels {
            op = op.kernel(
                *risc,
                kernel_path(spec, *risc, arch, args.backend, &mut crates, &mut c_kernels)?,
            );
        }
        for (risc, words) in plan.args.iter().chain(&cli_args) {
            op = op.args(*risc, words.clone());
        }
        if !parsed.is_empty() {
            op = op.tiles(parsed);
        }
        for l1 in plan.l1.iter().chain(&args.l1) {
            op = op.l1(parse_l1(l1)?);
        }
        let launches = if args.manifest.is_some() {
            plan.launches
        } else {
            args.launches
        };
        if launches == 0 {
            return Err(Error::Argument {
                what: format!("op {:?}: launches = 0, expected 1 or more", plan.name),
            });
        }
        let dram_in: Vec<dram::Buffer> = plan
            .dram_in
            .iter()
            .cloned()
            .chain(cli_dram_in.iter().cloned())
            .collect();
        let dram_out: Vec<dram::Buffer> = plan
            .dram_out
            .iter()
            .cloned()
            .chain(cli_dram_out.iter().cloned())
            .collect();
        for b in &dram_in {
            op.inputs.extend(b.tensor_desc(b.len(false)?));
        }
        for b in &dram_out {
            op.outputs.extend(b.tensor_desc(b.len(true)?));
        }
        ops.push((op, launches, dram_in, dram_out));
    }
    if ops.is_empty() {
        return Err(Error::BadFile {
            path: args.manifest.clone().unwrap_or_default(),
            what: "names no op (its op list is empty): nothing to run".into(),
        });
    }
    // Every op's kernels, arguments and L1 inputs are checked before the output folder is
    // created: unusable input leaves nothing behind.
    for (op, ..) in &ops {
        ttprof::session::check(op, arch)?;
    }
    let mut cfg = Config::new(arch, grid, &args.out);
    cfg.drain_every_cycles = args.drain_every;
    cfg.summary_threshold_ns = threshold_ns;
    cfg.instruction_budget = budget;
    cfg.lines = args.lines;
    // Memory bounded at any run length: drained records go to a spool, outputs ring by ring.
    cfg.spool_records = true;
    cfg.backend = args.backend;
    cfg.timeout = (!timeout.is_zero()).then_some(timeout);
    if let Some(n) = args.sample {
        let mut s = ttprof::lines::sample::SampleConfig::new(n);
        s.buffer = ttprof::lines::sample::Buffer {
            addr: args.sample_buffer,
            count: args.sample_count,
        };
        s.check().map_err(|what| Error::Argument { what })?;
        cfg.sample = Some(s);
    }
    cfg.dataset = args.dataset.dataset()?;
    cfg.settings.policy = match policy {
        Some(PolicyArg::Block) => Policy::Block,
        Some(PolicyArg::Drop) => Policy::Drop,
        None => Policy::BuildDefault,
    };
    let mut session = Session::start(cfg)?;
    let mut fault = None;
    // Outputs that differ from their expected files: data problems, reported at the end.
    let mut mismatches = Vec::new();
    'ops: for (op, launches, dram_in, dram_out) in &ops {
        for _ in 0..*launches {
            for b in dram_in {
                b.load(&mut session)?;
            }
            match session.launch(op) {
                Ok(l) => {
                    eprintln!(
                        "run {}: {} on {} tile(s), {} instructions",
                        l.run_id,
                        l.op,
                        op_tiles(op, &session),
                        l.instructions
                    );
                    for b in dram_out {
                        mismatches.extend(b.store(&session, &op.name, l.run_id)?);
                    }
                }
                Err(e @ Error::Fault(_)) => {
                    fault = Some(e);
                    break 'ops;
                }
                Err(e) => return Err(e),
            }
        }
    }
    let profile = match session.finish() {
        Ok(p) => p,
        Err(e) => return crate::disk_full(e),
    };
    print!("{}", profile.summary_text());
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
    if let Some(f) = fault {
        eprintln!("error: {f}");
        eprintln!("error: the outputs hold the records published before the fault");
        return Ok(ExitCode::from(2));
    }
    for m in &mismatches {
        eprintln!("error: {m}");
    }
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the outputs are incomplete");
        return Ok(ExitCode::from(2));
    }
    if !mismatches.is_empty() {
        eprintln!(
            "error: {} DRAM output(s) differ from what was expected",
            mismatches.len()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn op_tiles(op: &Op, s: &Session) -> usize {
    op.tiles.as_ref().map_or(s.tiles().len(), Vec::len)
}

fn read_manifest(path: &Path) -> Result<Manifest> {
    let bytes =
        ttprof::files::read_regular(path, "a manifest (TOML or JSON)", "read manifest", 16 << 20)?;
    let text = String::from_utf8(bytes).map_err(|e| Error::BadFile {
        path: path.into(),
        what: format!("is not UTF-8 text ({e}): expected a TOML or JSON manifest"),
    })?;
    let bad = |what: String| Error::BadFile {
        path: path.into(),
        what,
    };
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => toml::from_str(&text)
            .map_err(|e| bad(format!("not a valid manifest: {}", toml_error(&text, &e)))),
        Some("json") => {
            serde_json::from_str(&text).map_err(|e| bad(format!("not a valid manifest: {e}")))
        }
        _ => Err(bad("a manifest must be a .toml or .json file".into())),
    }
}

/// A TOML error as line, column, message and at most [`ECHO_CHARS`] characters of the line
/// around the error (the crate's own text echoes the whole line, 200 KB for a long one).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    const ECHO_CHARS: usize = 80;
    let Some(span) = e.span() else {
        return e.message().to_string();
    };
    let at = span.start.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let rest = &text[line_start..];
    let row = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let col = text[line_start..at].chars().count();
    let from = col.saturating_sub(ECHO_CHARS / 2);
    let echo: String = row.chars().skip(from).take(ECHO_CHARS).collect();
    let cut = |b: bool| if b { "..." } else { "" };
    format!(
        "line {line}, column {}: {} (near {}{echo:?}{})",
        col + 1,
        e.message().trim_end(),
        cut(from > 0),
        cut(row.chars().count() > from + ECHO_CHARS)
    )
}

/// A manifest's path relative to its own directory (`CRATE:BIN` keeps its binary name).
fn relative_to(base: &Path, spec: &str) -> String {
    match split_crate(spec) {
        Some((dir, bin)) => format!("{}:{bin}", base.join(dir).display()),
        None => base.join(spec).display().to_string(),
    }
}

fn relative_l1(base: &Path, spec: &str) -> String {
    match spec.split_once("=@") {
        Some((addr, file)) => format!("{addr}=@{}", base.join(file).display()),
        None => spec.to_string(),
    }
}

/// `CRATE_DIR:BINARY` when the part before the last `:` is a directory with a Cargo.toml.
fn split_crate(spec: &str) -> Option<(&str, &str)> {
    let (dir, bin) = spec.rsplit_once(':')?;
    (!bin.is_empty() && Path::new(dir).join("Cargo.toml").is_file()).then_some((dir, bin))
}

/// The C/C++ sources of a `--kernel` value (`FILE.cpp` or `a.cpp,b.c`), if it names some.
fn c_sources(spec: &str) -> Option<Vec<PathBuf>> {
    let files: Vec<PathBuf> = spec.split(',').map(PathBuf::from).collect();
    files
        .iter()
        .all(|f| kernels::c_source_kind(f).is_some())
        .then_some(files)
}

fn kernel_path(
    spec: &str,
    risc: Risc,
    arch: Arch,
    backend: Backend,
    crates: &mut BTreeMap<PathBuf, BuiltKernels>,
    c_kernels: &mut BTreeMap<(String, Risc), PathBuf>,
) -> Result<PathBuf> {
    if let Some(sources) = c_sources(spec) {
        if let Some(elf) = c_kernels.get(&(spec.to_string(), risc)) {
            return Ok(elf.clone());
        }
        eprintln!("building {spec} for {risc} ({arch})...");
        let mut b = CKernelBuild::new(sources, risc, arch);
        if backend == Backend::Timestamper {
            b.flags.push("-DTTPROF_BACKEND_TIMESTAMPER".into());
        }
        let elf = kernels::build_c(&b)?;
        c_kernels.insert((spec.to_string(), risc), elf.clone());
        return Ok(elf);
    }
    let Some((dir, bin)) = split_crate(spec) else {
        let p = PathBuf::from(spec);
        if !p.is_file() {
            return Err(Error::Argument { what: format!(
                "kernel {spec:?} is neither an ELF file nor CRATE_DIR:BINARY (a directory with Cargo.toml, a colon, a binary name) \
                 nor C/C++ sources (FILE.c, FILE.cpp)"
            ) });
        }
        return Ok(p);
    };
    let dir = PathBuf::from(dir);
    if !crates.contains_key(&dir) {
        eprintln!("building the kernel crate {} for {arch}...", dir.display());
        let mut b = KernelBuild::new(&dir, arch);
        b.features
            .extend(backend.kernel_feature().map(String::from));
        crates.insert(dir.clone(), kernels::build(&b)?);
    }
    crates[&dir].elf(bin).map(Path::to_path_buf)
}

fn parse_kernel_arg(s: &str) -> Result<Vec<(Risc, String)>> {
    let (risc, path) = s.split_once('=').ok_or_else(|| Error::Argument {
        what: format!(
            "--kernel {s:?}: expected RISC=ELF or RISC=CRATE_DIR:BINARY, e.g. brisc=target/reader"
        ),
    })?;
    Ok(parse_riscs(risc)?
        .into_iter()
        .map(|r| (r, path.to_string()))
        .collect())
}

/// `--arg RISC=V0,V1,..`.
fn parse_arg_arg(s: &str) -> Result<Vec<(Risc, Vec<u32>)>> {
    let (risc, words) = s.split_once('=').ok_or_else(|| Error::Argument {
        what: format!("--arg {s:?}: expected RISC=V0,V1,.. e.g. brisc=4,0x30000"),
    })?;
    let words = parse_words(s, words)?;
    Ok(parse_riscs(risc)?
        .into_iter()
        .map(|r| (r, words.clone()))
        .collect())
}

/// A RISC, or `trisc`: the three TRISCs, as tt-metal runs a compute kernel (unpack, math,
/// pack: one build per TRISC, with that TRISC's defines).
fn parse_riscs(s: &str) -> Result<Vec<Risc>> {
    if s.trim().eq_ignore_ascii_case("trisc") {
        return Ok(vec![Risc::Trisc0, Risc::Trisc1, Risc::Trisc2]);
    }
    Ok(vec![parse_risc(s)?])
}

/// Comma-separated 32-bit words (decimal or 0x hex); `what` names them in the error.
fn parse_words(what: &str, words: &str) -> Result<Vec<u32>> {
    if words.trim().is_empty() {
        return Ok(Vec::new());
    }
    words
        .split(',')
        .map(|w| {
            parse_u32(w).ok_or_else(|| Error::Argument {
                what: format!(
                    "runtime arguments {what:?}: {w:?} is not a 32-bit number (decimal or 0x hex)"
                ),
            })
        })
        .collect()
}

fn parse_risc(s: &str) -> Result<Risc> {
    let lower = s.trim().to_ascii_lowercase();
    Risc::ALL
        .into_iter()
        .find(|r| r.ident() == lower || r.name().eq_ignore_ascii_case(&lower))
        .ok_or_else(|| Error::Argument { what: format!("unknown RISC {s:?}: use brisc, ncrisc, trisc0, trisc1 or trisc2 (or trisc: all three)") })
}

/// Logical `X,Y` of the grid to its NoC0 coordinate.
fn parse_tile(s: &str, arch: Arch, grid: (u8, u8)) -> Result<NocCoord> {
    let bad = || Error::Argument {
        what: format!(
            "tile {s:?}: expected logical worker coordinates X,Y inside the {}x{} grid",
            grid.0, grid.1
        ),
    };
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    let (x, y) = (
        x.trim().parse::<u8>().map_err(|_| bad())?,
        y.trim().parse::<u8>().map_err(|_| bad())?,
    );
    if x >= grid.0 || y >= grid.1 {
        return Err(bad());
    }
    arch.worker_noc(x, y).ok_or_else(bad)
}

fn parse_l1(s: &str) -> Result<L1Input> {
    let bad = |why: &str| Error::Argument {
        what: format!("--l1 {s:?}: {why} (expected ADDR=VALUE or ADDR=@FILE)"),
    };
    let (addr, value) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
    let addr = parse_u32(addr).ok_or_else(|| bad("the address is not a number"))?;
    match value.strip_prefix('@') {
        Some(file) => L1Input::file(addr, Path::new(file)),
        None => Ok(L1Input::word(
            addr,
            parse_u32(value).ok_or_else(|| bad("the value is not a 32-bit number"))?,
        )),
    }
}

fn parse_sample_buffer(s: &str) -> std::result::Result<u32, String> {
    parse_u32(s).ok_or_else(|| format!("{s:?} is not an address (decimal or 0x hex)"))
}

pub(crate) fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_and_bad_ones_say_what_was_expected() {
        assert_eq!(parse_risc("TRISC1").unwrap(), Risc::Trisc1);
        assert_eq!(parse_risc("ncrisc").unwrap(), Risc::Ncrisc);
        assert!(parse_risc("trisc3")
            .unwrap_err()
            .to_string()
            .contains("use brisc"));
        assert_eq!(parse_l1("0x100=7").unwrap(), L1Input::word(0x100, 7));
        assert!(parse_l1("0x100")
            .unwrap_err()
            .to_string()
            .contains("ADDR=VALUE"));
        assert!(parse_l1("abc=1")
            .unwrap_err()
            .to_string()
            .contains("address is not a number"));
        assert_eq!(
            parse_tile("1,0", Arch::WormholeB0, (2, 2)).unwrap(),
            Arch::WormholeB0.worker_noc(1, 0).unwrap()
        );
        assert!(parse_tile("2,0", Arch::WormholeB0, (2, 2)).is_err());
        assert_eq!(parse_grid("4x2").unwrap(), (4, 2));
        assert!(parse_kernel_arg("brisc")
            .unwrap_err()
            .to_string()
            .contains("RISC=ELF"));
        assert_eq!(
            parse_arg_arg("ncrisc=4,0x10, 7").unwrap(),
            [(Risc::Ncrisc, vec![4, 16, 7])]
        );
        assert_eq!(parse_arg_arg("brisc=").unwrap(), [(Risc::Brisc, vec![])]);
        assert_eq!(
            parse_arg_arg("trisc=3").unwrap(),
            [Risc::Trisc0, Risc::Trisc1, Risc::Trisc2].map(|r| (r, vec![3]))
        );
        assert_eq!(parse_kernel_arg("TRISC=c.cpp").unwrap().len(), 3);
        assert!(parse_arg_arg("brisc=4,x")
            .unwrap_err()
            .to_string()
            .contains("\"x\" is not a 32-bit number"));
        assert!(parse_arg_arg("4,5")
            .unwrap_err()
            .to_string()
            .contains("RISC=V0,V1"));
        assert_eq!(
            c_sources("a.cpp,b.c"),
            Some(vec![PathBuf::from("a.cpp"), PathBuf::from("b.c")])
        );
        assert_eq!(c_sources("target/reader"), None);
    }
}
