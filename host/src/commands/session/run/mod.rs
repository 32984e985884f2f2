//! What `ttprof run` does, as a library: the ops of the command line or of a manifest,
//! their kernels built, checked, launched on the emulator in sequence and profiled.
//!
//! [`RunOptions`] holds what the command line gives, spelled as there: kernels
//! `RISC=ELF`, `RISC=CRATE_DIR:BINARY` or `RISC=FILE.cpp` (`trisc`: all three TRISCs),
//! runtime arguments `RISC=V0,V1,..`, tiles `X,Y`, L1 inputs `ADDR=VALUE` or `ADDR=@FILE`,
//! DRAM buffers `ADDR=@FILE[,key=value..]`, numbers decimal or `0x` hex; a manifest (TOML or
//! JSON, its paths relative to itself; see the README) names several ops spelled the same.
//!
//! [`Run::launch`] checks everything before anything is created (a bad value, tile, kernel
//! or L1 input costs no build, no run and no output folder; a build error costs no run),
//! then starts a [`Session`] and launches every op, loading its DRAM inputs before each
//! launch and storing its outputs after. A kernel fault ends the launches and is kept;
//! [`Run::finish`] writes every output (ring by ring, memory bounded at any run length) and
//! returns the [`RunOutcome`]. Any other error of a launch (what only a launch finds: a DRAM
//! output that cannot be written, an I/O error) removes what the run created before it, so
//! an exit 1 leaves the output folder as it was (`util::undo`).

mod dram;
#[cfg(feature = "testing")]
pub mod fuzzing;
mod manifest;
pub(crate) mod spec;

use super::build::{Builder, Building};
use super::{parse_arch, parse_grid, Backend, Config, FinishedSession, Launched, Op, Session};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::launch::Policy;
use crate::lines::sample::SampleConfig;
use crate::outputs::Dataset;
use crate::util::undo::Undo;
use manifest::{ArgList, ManifestPolicy};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `ttprof run` is asked: the op (or a manifest of ops), where it runs and how it is
/// profiled. Values are spelled as on the command line (see the module); numbers are checked
/// already.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Chip architecture (`None`: the manifest's, else Wormhole B0).
    pub arch: Option<Arch>,
    /// Worker grid (`None`: the manifest's, else 1x1).
    pub grid: Option<(u8, u8)>,
    /// Chips, each running every op ([`Config::chips`]; `None`: the manifest's, else 1).
    pub chips: Option<u32>,
    /// `RISC=ELF`, `RISC=CRATE_DIR:BINARY` or `RISC=FILE.cpp` (without a manifest).
    pub kernels: Vec<String>,
    /// Runtime arguments, `RISC=V0,V1,..` (added to every op's).
    pub args: Vec<String>,
    /// A manifest of several ops (instead of `kernels`).
    pub manifest: Option<PathBuf>,
    /// The op's name (without a manifest).
    pub name: String,
    /// Launches of the op (without a manifest: each manifest op says its own).
    pub launches: u32,
    /// L1 inputs, `ADDR=VALUE` or `ADDR=@FILE` (added to every op's).
    pub l1: Vec<String>,
    /// DRAM inputs, `ADDR=@FILE[,page=N][,tensor=ID]` (added to every op's).
    pub dram_in: Vec<String>,
    /// DRAM outputs, `ADDR=@FILE[,bytes=N][,expect=FILE][,page=N][,tensor=ID]`.
    pub dram_out: Vec<String>,
    /// Logical tiles `X,Y` to run on (added to every op's; none: every tile of the grid).
    pub tiles: Vec<String>,
    /// The full-ring policy (`None`: the manifest's, else as built).
    pub policy: Option<Policy>,
    /// [`Config::drain_every_cycles`].
    pub drain_every_cycles: u64,
    /// [`Config::instruction_budget`].
    pub instruction_budget: u64,
    /// [`Config::timeout`].
    pub timeout: Option<Duration>,
    /// [`Config::lines`].
    pub lines: bool,
    /// `--counters`: the performance counters to arm around every op
    /// ([`super::counters::parse`]'s syntax; `None`: none).
    pub counters: Option<String>,
    /// [`Config::backend`].
    pub backend: Backend,
    /// [`Config::sample`], checked before the run starts.
    pub sample: Option<SampleConfig>,
    /// [`Config::dataset`], its host name checked before the run starts.
    pub dataset: Option<Dataset>,
    /// [`Config::summary_threshold_ns`].
    pub summary_threshold_ns: f64,
    /// Output directory.
    pub out: PathBuf,
    /// [`Config::inputs`]: the command's input guard (the manifest, kernel ELFs and input
    /// files are noted in it; no output is written over one).
    pub inputs: Inputs,
}

/// What a run reports while it works, before each kernel build and after each launch.
#[derive(Clone, Copy, Debug)]
pub enum RunEvent<'a> {
    /// A kernel is about to be built from its sources.
    Building(Building<'a>),
    /// A launch ran to its end, on `tiles` tiles.
    Launched {
        /// What the launch did.
        launch: &'a Launched,
        /// How many tiles it ran on.
        tiles: usize,
    },
}

/// A run whose ops have been launched (or stopped by a fault); [`Run::finish`] writes the
/// outputs.
pub struct Run {
    session: Session,
    fault: Option<Error>,
    mismatches: Vec<String>,
}

/// What a finished run leaves.
pub struct RunOutcome {
    /// The session's outputs, readout and problems.
    pub session: FinishedSession,
    /// The kernel fault that ended the launches, if one did ([`Error::Fault`]): the outputs
    /// hold the records published before it.
    pub fault: Option<Error>,
    /// DRAM outputs that differ from their expected files (data problems), each naming the
    /// op, run, file and first differing byte.
    pub mismatches: Vec<String>,
}

/// An op as the command line or a manifest gives it, before its crates are built.
struct OpPlan {
    name: String,
    kernels: Vec<(Risc, String)>,
    tiles: Vec<String>,
    l1: Vec<String>,
    args: Vec<spec::ArgSpec>,
    dram_in: Vec<dram::Buffer>,
    dram_out: Vec<dram::Buffer>,
    launches: u32,
    attributes: serde_json::Map<String, serde_json::Value>,
}

/// What a run launches, and on what.
struct Plan {
    ops: Vec<PlannedOp>,
    arch: Arch,
    grid: (u8, u8),
    chips: u32,
    policy: Policy,
}

/// An op ready to launch: how often, and its DRAM buffers.
struct PlannedOp {
    op: Op,
    launches: u32,
    dram_in: Vec<dram::Buffer>,
    dram_out: Vec<dram::Buffer>,
}

impl Run {
    /// Plans, builds and checks every op, starts the session and launches the ops in order;
    /// `progress` hears of each build and launch. An unusable input is an error before the
    /// output folder is created; a kernel fault ends the launches and is kept for
    /// [`Run::finish`]; any other error ends the run, and what the run had created in the
    /// output folder (and DRAM output files) is removed: the folder is left as it was.
    pub fn launch(options: &RunOptions, progress: &mut dyn FnMut(RunEvent)) -> Result<Run> {
        if options.backend == Backend::Timestamper && options.drain_every_cycles == 0 {
            // Before any build (Session::start would refuse it too, after them).
            return Err(Error::Unsupported(super::TIMESTAMPER_NEEDS_CONSUMER.into()));
        }
        if let Some(spec) = &options.counters {
            // Before any build (the arch the plan settles on is checked again below).
            super::counters::parse(spec, options.arch.unwrap_or(Arch::WormholeB0))?;
        }
        let Plan {
            ops,
            arch,
            grid,
            chips,
            policy,
        } = plan(options, progress)?;
        let mut cfg = Config::new(arch, grid, &options.out);
        cfg.chips = chips;
        cfg.drain_every_cycles = options.drain_every_cycles;
        cfg.summary_threshold_ns = options.summary_threshold_ns;
        cfg.instruction_budget = options.instruction_budget;
        cfg.lines = options.lines;
        if let Some(spec) = &options.counters {
            cfg.counters = super::counters::parse(spec, arch)?;
        }
        // Memory bounded at any run length: drained records go to a spool, outputs ring by ring.
        cfg.spool_records = true;
        cfg.backend = options.backend;
        cfg.timeout = options.timeout;
        if let Some(s) = &options.sample {
            s.check().map_err(|what| Error::Argument { what })?;
            cfg.sample = Some(*s);
        }
        if let Some(d) = &options.dataset {
            crate::sink::parquet::check_host(&d.host)?;
        }
        cfg.dataset = options.dataset.clone();
        cfg.inputs = options.inputs.clone();
        cfg.settings.policy = policy;
        // From here on a failure is found by a launch: what the run created goes with it
        // (`util::undo`), unless a kernel fault ended it (its records are data).
        let mut undo = Undo::default();
        undo.note_dir(&options.out.join("kernels"));
        undo.note_file(&options.out.join(super::OPLOG_FILE));
        undo.note_file(&options.out.join(super::IMAGE_FILE));
        let session = match Session::start(cfg) {
            Ok(s) => s,
            Err(e) => return Err(undo.undo(e)),
        };
        let mut run = Run {
            session,
            fault: None,
            mismatches: Vec::new(),
        };
        match run.launch_all(&ops, progress, &mut undo) {
            Ok(()) => Ok(run),
            Err(e) => {
                undo.created_files(run.session.created_copies());
                // The device, its image and the op log closed before their files go.
                drop(run);
                Err(undo.undo(e))
            }
        }
    }

    /// Launches every op in order (see [`Run::launch`]); a kernel fault ends the launches
    /// and is kept. The DRAM outputs it writes are noted in `undo`.
    fn launch_all(
        &mut self,
        ops: &[PlannedOp],
        progress: &mut dyn FnMut(RunEvent),
        undo: &mut Undo,
    ) -> Result<()> {
        let session = &mut self.session;
        for p in ops {
            for _ in 0..p.launches {
                for b in &p.dram_in {
                    b.load(session)?;
                }
                match session.launch(&p.op) {
                    Ok(l) => {
                        let tiles = p.op.tiles.as_ref().map_or(session.tiles().len(), Vec::len)
                            * session.config().chips as usize;
                        progress(RunEvent::Launched { launch: &l, tiles });
                        for b in &p.dram_out {
                            if let Some(file) = &b.file {
                                undo.note_file(file);
                            }
                            // Outputs that differ from their expected files: data problems,
                            // reported at the end.
                            self.mismatches
                                .extend(b.store(session, &p.op.name, l.run_id)?);
                        }
                    }
                    Err(e @ Error::Fault { .. }) => {
                        self.fault = Some(e);
                        return Ok(());
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Drains the last records and writes every output ([`Session::finish`]).
    pub fn finish(self) -> Result<RunOutcome> {
        Ok(RunOutcome {
            session: self.session.finish()?,
            fault: self.fault,
            mismatches: self.mismatches,
        })
    }
}

/// The ops to launch, the arch, grid and policy: the manifest or the command line's op,
/// every kernel built, every op checked ([`super::check`]).
fn plan(options: &RunOptions, progress: &mut dyn FnMut(RunEvent)) -> Result<Plan> {
    let (manifest, base) = match &options.manifest {
        Some(p) => (
            Some(manifest::read(p, &options.inputs)?),
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None => (None, PathBuf::new()),
    };
    let arch = match (
        options.arch,
        manifest.as_ref().and_then(|m| m.arch.as_deref()),
    ) {
        (Some(a), _) => a,
        (None, Some(s)) => parse_arch(s).map_err(|what| Error::Argument { what })?,
        (None, None) => Arch::WormholeB0,
    };
    let grid = match (
        options.grid,
        manifest.as_ref().and_then(|m| m.grid.as_deref()),
    ) {
        (Some(g), _) => g,
        (None, Some(s)) => parse_grid(s).map_err(|what| Error::Argument { what })?,
        (None, None) => (1, 1),
    };
    super::check_grid(arch, grid)?;
    let chips = options
        .chips
        .or(manifest.as_ref().and_then(|m| m.chips))
        .unwrap_or(1);
    super::check_chips(
        chips,
        options.counters.is_some(),
        options.sample.is_some(),
        false,
    )?;
    let policy = match (options.policy, manifest.as_ref().and_then(|m| m.policy)) {
        (Some(p), _) => p,
        (None, Some(ManifestPolicy::Block)) => Policy::Block,
        (None, Some(ManifestPolicy::Drop)) => Policy::Drop,
        (None, None) => Policy::BuildDefault,
    };
    let plans: Vec<OpPlan> = match manifest {
        Some(m) => m
            .ops
            .into_iter()
            .map(|o| manifest_op(o, &base))
            .collect::<Result<_>>()?,
        None => {
            if options.kernels.is_empty() {
                return Err(Error::Argument {
                    what:
                        "nothing to run: give --kernel RISC=ELF (once per RISC) or --manifest FILE"
                            .into(),
                });
            }
            let kernels = options
                .kernels
                .iter()
                .map(|k| spec::parse_kernel_arg(k))
                .collect::<Result<Vec<_>>>()?
                .concat();
            vec![OpPlan {
                name: options.name.clone(),
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
    let cli_args = options
        .args
        .iter()
        .map(|a| spec::parse_arg_arg(a))
        .collect::<Result<Vec<_>>>()?
        .concat();
    let cli_dram_in = options
        .dram_in
        .iter()
        .map(|d| dram::parse(d, false, Path::new("")))
        .collect::<Result<Vec<_>>>()?;
    let cli_dram_out = options
        .dram_out
        .iter()
        .map(|d| dram::parse(d, true, Path::new("")))
        .collect::<Result<Vec<_>>>()?;
    // Every crate and C/C++ kernel is built (once each) before anything runs: a build error
    // costs no run.
    let mut builder = Builder::new(arch, options.backend);
    let mut ops = Vec::new();
    for plan in &plans {
        let mut op = Op::new(&plan.name);
        op.attributes = plan.attributes.clone();
        // Tiles before kernels: a bad or repeated tile costs no build.
        let tiles: Vec<&String> = plan.tiles.iter().chain(&options.tiles).collect();
        let mut parsed: Vec<NocCoord> = Vec::new();
        for t in &tiles {
            let c = spec::parse_tile(t, arch, grid)?;
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
            let elf = builder.kernel(spec, *risc, &mut |b| progress(RunEvent::Building(b)))?;
            op = op.kernel(*risc, elf);
        }
        for (risc, tile, words) in plan.args.iter().chain(&cli_args) {
            op = match tile {
                None => op.args(*risc, words.clone()),
                Some(t) => {
                    let c = spec::parse_tile(t, arch, grid)?;
                    if !parsed.is_empty() && !parsed.contains(&c) {
                        return Err(Error::Argument {
                            what: format!(
                                "op {:?}: runtime arguments for {risc} on tile {t:?}, which \
                                 does not run the op (its tiles: {})",
                                plan.name,
                                tiles
                                    .iter()
                                    .map(|t| t.as_str())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                        });
                    }
                    op.tile_args(c, *risc, words.clone())
                }
            };
        }
        if !parsed.is_empty() {
            op = op.tiles(parsed);
        }
        for l1 in plan.l1.iter().chain(&options.l1) {
            op = op.l1(spec::parse_l1(l1, &options.inputs)?);
        }
        let launches = if options.manifest.is_some() {
            plan.launches
        } else {
            options.launches
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
            b.check(arch, false)?;
            op.inputs.extend(b.tensor_desc(b.len(false)?));
        }
        for b in &dram_out {
            b.check(arch, true)?;
            op.outputs.extend(b.tensor_desc(b.len(true)?));
        }
        ops.push(PlannedOp {
            op,
            launches,
            dram_in,
            dram_out,
        });
    }
    if ops.is_empty() {
        return Err(Error::BadFile {
            path: options.manifest.clone().unwrap_or_default(),
            what: "names no op (its op list is empty): nothing to run".into(),
        });
    }
    // Every op's kernels, arguments and L1 inputs are checked before the output folder is
    // created: unusable input leaves nothing behind.
    let buffers = super::check::run_buffers(arch, options.backend, options.sample.as_ref());
    for p in &ops {
        super::check(&p.op, arch, &buffers, &options.inputs)?;
    }
    Ok(Plan {
        ops,
        arch,
        grid,
        chips,
        policy,
    })
}

/// One op of a manifest, its paths relative to the manifest's directory `base`.
fn manifest_op(o: manifest::ManifestOp, base: &Path) -> Result<OpPlan> {
    let mut kernels = Vec::new();
    for (r, k) in o.kernels {
        let k = manifest::relative_kernel(base, &k);
        kernels.extend(
            spec::parse_riscs(&r)?
                .into_iter()
                .map(|risc| (risc, k.clone())),
        );
    }
    let l1 =
        o.l1.iter()
            .map(|s| manifest::relative_l1(base, s))
            .collect();
    let mut args = Vec::new();
    for (r, a) in o.args {
        let words = match a {
            ArgList::Words(w) => w,
            ArgList::Text(t) => spec::parse_words(&format!("{r}={t}"), &t)?,
        };
        args.extend(spec::parse_arg_target(&r, words)?);
    }
    let dram_in = o
        .dram_in
        .iter()
        .map(|d| dram::parse(d, false, base))
        .collect::<Result<_>>()?;
    let dram_out = o
        .dram_out
        .iter()
        .map(|d| dram::parse(d, true, base))
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
}
