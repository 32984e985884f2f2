//! A profiling session on the bundled emulator: what `ttprof run` does, as a library.
//!
//! ```no_run
//! # fn main() -> ttprof::Result<()> {
//! use ttprof::session::{Config, Op, Session};
//! use riscv_linker::{Arch, Risc};
//!
//! let built = ttprof::kernels::build(&ttprof::kernels::KernelBuild::new("my-kernels", Arch::WormholeB0))?;
//! let mut s = Session::start(Config::new(Arch::WormholeB0, (2, 2), "target/ttprof-run"))?;
//! s.launch(&Op::new("my-op").kernel(Risc::Brisc, built.elf("reader")?))?;
//! let profile = s.finish()?;          // every output file, the op log and device.snap
//! print!("{}", profile.summary_text());
//! # Ok(()) }
//! ```
//!
//! [`Session::start`] creates the emulated device and attaches a consumer that drains the
//! rings while kernels run; each [`Session::launch`] runs one op to the end and appends it
//! to the op log (its ELFs copied under `kernels/`); [`Session::finish`] fits the clocks and
//! writes every output ([`crate::outputs`]) plus `device.snap`, from which `ttprof report`
//! reproduces them offline. A kernel fault ends its launch with the emulator's diagnosis;
//! `finish` still writes every record the device published and names the fault.

mod build;
mod check;
pub mod counters;
mod guard;
mod op;
mod open_waits;
mod program;
pub mod run;

pub use build::{BuildRequest, Building, TtMetalOptions};
pub use check::{check, run_buffers};
pub use op::{L1Input, Op};
pub use program::ProgramOp;
pub use run::spec::{parse_risc, parse_u32, u32_problem};

use crate::capture::spool::Spool;
use crate::clock::{emu_tiles, ClockSampler, ClockSync, EmuClock, Fit, FitOptions};
use crate::devmem::{DeviceMemory, EmuMemory, MappedImage, Snapshot};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::launch::{self, Settings};
use crate::oplog::{KernelBinding, OpLog, OpLogWriter, OpRecord};
use crate::outputs::{self, Written};
use crate::readout::{DrainOptions, Drainer, Readout};
use crate::resolve::{Resolution, Resolver};
pub use crate::stamp::Backend;
use crate::stamp::Stamps;
use riscv_linker::{profiler, Arch, NocCoord, Risc};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use ttprof_emu::{ClockModel, Device, DeviceConfig, Fault};

/// Where the profiler's blocks and rings are under the session's layout.
fn ring_map(cfg: &Config) -> profiler::RingMap {
    match cfg.layout {
        riscv_linker::Layout::Ttprof => profiler::RingMap::TTPROF,
        riscv_linker::Layout::TtMetal => profiler::RingMap::tt_metal(cfg.arch),
    }
}

/// The most chips a session runs ([`Config::chips`]): the device image holds every chip's
/// L1 and DRAM.
pub const MAX_CHIPS: u32 = 32;

/// File name of the snapshot [`Session::finish`] writes.
pub(crate) const SNAPSHOT_FILE: &str = "device.snap";
/// File name of the op log.
pub(crate) const OPLOG_FILE: &str = "ops.jsonl";
/// File name of the emulator's device image.
pub(crate) const IMAGE_FILE: &str = "device.img";

/// What a session runs on and how it profiles.
#[derive(Clone, Debug)]
pub struct Config {
    /// The chip architecture to emulate.
    pub arch: Arch,
    /// Worker tiles, `(columns, rows)` from logical (0,0).
    pub grid: (u8, u8),
    /// Chips of the device, each with `grid` (1 to [`MAX_CHIPS`]). Every op runs on every
    /// chip, its kernels, arguments, L1 and DRAM inputs the same on each (a data-parallel op,
    /// as tt-metal runs a program on each device of a mesh): one op log record per chip
    /// (`device` the chip), every chip's rings drained, aligned and written. Not with
    /// [`Config::counters`] or [`Config::sample`] (those read chip 0 only), nor with tt-metal
    /// programs ([`Session::launch_program`]).
    pub chips: u32,
    /// Output directory (created): outputs, op log, device image, snapshot, kernel copies.
    pub out: PathBuf,
    /// Recording, full-ring policy. `consumer` is set from `drain_every_cycles`.
    pub settings: Settings,
    /// Drain every ring this often (simulated cycles of each tile) while kernels run; 0:
    /// no consumer while kernels run (records beyond a ring's capacity are then lost, and
    /// counted).
    pub drain_every_cycles: u64,
    /// The emulated chip's clock (nominal by default).
    pub clock: ClockModel,
    /// Emulator host threads (0: one per core). Results never depend on it.
    pub threads: usize,
    /// Clock-sync samples per tile in each of the two windows (tt-metal takes 100).
    pub sync_samples: usize,
    /// While kernels run: one clock-sync sample per chip at most this often (virtual host
    /// ns), taken at the drains ([`crate::clock::ClockSampler`]), so frequency steps (DVFS)
    /// are seen and located; 0: only the two windows.
    pub sample_every_ns: u64,
    /// Instructions one core may retire in one launch before it is stopped as a runaway.
    pub instruction_budget: u64,
    /// Also add the run to this hive-partitioned Parquet dataset (`--dataset DIR`).
    pub dataset: Option<outputs::Dataset>,
    /// Summary rows whose mean zone duration is below this many ns are hidden.
    pub summary_threshold_ns: f64,
    /// Line-level cycles (`--lines`): charge every emulated cycle of every core to its
    /// source line and cause, and write the [`crate::lines`] files. Cores then run on the
    /// emulator's interpreter (no JIT).
    pub lines: bool,
    /// Where the kernels record zones, events and data: the ring, or the tile's debug
    /// timestamper (`--backend timestamper`; kernels built for it, see [`Backend`]). The
    /// session then owns every tile's timestamper and drains it with the rings.
    pub backend: Backend,
    /// Wall-clock limit from [`Session::start`] (`--timeout-s`): a launch still running then
    /// stops with a timeout fault naming every running core (`None`: no limit).
    pub timeout: Option<std::time::Duration>,
    /// Sample the line profile through each tile's debug daisychain (`--sample N`,
    /// [`crate::lines::sample`]): one core per tile at a time, rotated every window.
    pub sample: Option<crate::lines::sample::SampleConfig>,
    /// Memory bounded at any run length (`ttprof run` sets it): what the consumer drains goes
    /// to a spool file in `out` as it arrives (nothing of it stays in memory), and
    /// [`Session::finish`] writes the snapshot and every output ring by ring from it
    /// ([`crate::spooled`]), one ring's records at a time. [`FinishedSession::readout`]
    /// then holds each ring's counts, not its records. Applies with a consumer on the ring
    /// backend (the timestamper's records are merged into the rings' at the end, held) and
    /// without [`Config::lines`] or [`Config::sample`] (the zone split of the line profile
    /// and of the samples reads every zone of the model; both run their cores on the
    /// interpreter, so their runs are short).
    pub spool_records: bool,
    /// The command's input guard: the files the session reads are noted in it and no output
    /// is written over one of them (default [`Inputs::none`]: no guard).
    pub inputs: Inputs,
    /// The tiles' L1 layout: ttprof's (ops of ttprof kernels, [`Session::launch`]) or
    /// tt-metal's (tt-metal's firmware and programs, [`Session::launch_program`]; Wormhole
    /// B0). It decides where the profiler's blocks and rings are
    /// (`riscv_linker::profiler::RingMap`).
    pub layout: riscv_linker::Layout,
    /// Performance counters armed before every launch and read after it, one per bank
    /// (`--counters`, [`counters`]); each op's values go into its op log record.
    pub counters: Vec<counters::CounterChoice>,
}

impl Config {
    /// `grid` tiles of `arch`, outputs into `out`, a consumer draining every 250k cycles.
    pub fn new(arch: Arch, grid: (u8, u8), out: impl Into<PathBuf>) -> Config {
        Config {
            arch,
            grid,
            chips: 1,
            out: out.into(),
            settings: Settings::default(),
            drain_every_cycles: 250_000,
            clock: ClockModel::nominal(),
            threads: 0,
            sync_samples: 100,
            sample_every_ns: crate::clock::DEFAULT_SAMPLE_EVERY_NS,
            spool_records: false,
            instruction_budget: ttprof_emu::DEFAULT_INSTRUCTION_BUDGET,
            dataset: None,
            summary_threshold_ns: 0.0,
            lines: false,
            backend: Backend::Ring,
            timeout: None,
            sample: None,
            inputs: Inputs::none(),
            layout: riscv_linker::Layout::Ttprof,
            counters: Vec::new(),
        }
    }
}

/// An arch as users spell it (`wormhole_b0`, `blackhole`); the error says what is accepted.
pub fn parse_arch(s: &str) -> std::result::Result<Arch, String> {
    Arch::from_name(s).ok_or_else(|| format!("unknown arch {s:?}: use wormhole_b0 or blackhole"))
}

/// A grid `COLSxROWS` (e.g. `2x2`) for [`Config::grid`].
pub fn parse_grid(s: &str) -> std::result::Result<(u8, u8), String> {
    let (c, r) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("grid {s:?} is not COLSxROWS"))?;
    let n = |v: &str| {
        v.trim()
            .parse::<u8>()
            .map_err(|e| format!("grid {s:?}: {e}"))
    };
    Ok((n(c)?, n(r)?))
}

/// Why [`Session::start`] refuses the timestamper backend without a consumer.
pub(crate) const TIMESTAMPER_NEEDS_CONSUMER: &str =
    "the timestamper backend needs a consumer draining while kernels run (its buffers hold 64 KiB per tile): \
     drain_every_cycles must be positive (ttprof run --drain-every-cycles, the demo's --consumer in-process)";

/// Refuses a grid that is empty or larger than `arch`'s worker grid (before the device, and
/// so the output folder, is made).
pub(crate) fn check_grid(arch: Arch, (cols, rows): (u8, u8)) -> Result<()> {
    let (max_c, max_r) = arch.worker_grid();
    if cols == 0 || rows == 0 || cols > max_c || rows > max_r {
        return Err(Error::Argument {
            what: format!(
                "grid {cols}x{rows} does not fit {arch}'s {max_c}x{max_r} worker grid: give COLSxROWS with 1 to \
                 {max_c} columns and 1 to {max_r} rows"
            ),
        });
    }
    Ok(())
}

/// Refuses a chip count out of 1..=[`MAX_CHIPS`], and more than one chip with what reads
/// chip 0 only (`counters`, `sampling`) or with tt-metal programs (`tt_metal`), before
/// anything is built or made.
pub(crate) fn check_chips(n: u32, counters: bool, sampling: bool, tt_metal: bool) -> Result<()> {
    if n == 0 || n > MAX_CHIPS {
        return Err(Error::Argument {
            what: format!("--chips {n}: give 1 to {MAX_CHIPS} chips"),
        });
    }
    let with = [
        (counters, "--counters (read on chip 0 only)"),
        (sampling, "--sample (one chip's daisychain)"),
        (tt_metal, "tt-metal programs (one chip)"),
    ]
    .into_iter()
    .find(|(on, _)| n > 1 && *on);
    match with {
        Some((_, what)) => Err(Error::Unsupported(format!(
            "--chips {n} with {what}: run one chip (--chips 1)"
        ))),
        None => Ok(()),
    }
}

/// What one launch did.
#[derive(Clone, Debug)]
pub struct Launched {
    /// The run id the op ran with.
    pub run_id: u32,
    /// The op's name.
    pub op: String,
    /// Host time (the emulator's virtual host clock, ns) at launch and when it finished.
    pub host_ns: (u64, u64),
    /// Instructions retired by all cores.
    pub instructions: u64,
}

/// A running session. See the module docs.
pub struct Session {
    cfg: Config,
    dev: Device,
    /// The program's traffic (inputs, outputs); the consumer's goes through its own mapping
    /// so the readout's bus cost counts only the profiler's reads.
    mem: MappedImage,
    drainer: Drainer<'static>,
    sync: ClockSync,
    sampler: ClockSampler,
    log: OpLogWriter,
    tiles: Vec<NocCoord>,
    next_run: u32,
    /// (source ELF path, hash of its bytes) -> its copy under `kernels/`.
    copies: HashMap<(PathBuf, u64), PathBuf>,
    /// ELFs the caller put under `kernels/` itself (used in place; no copy may take a name).
    in_folder: std::collections::HashSet<PathBuf>,
    /// The copies under `kernels/` whose names held nothing before this session wrote them
    /// (what a run that fails removes, [`Session::created_copies`]).
    created: Vec<PathBuf>,
    launched: Vec<Launched>,
    faults: Vec<Fault>,
    /// What each fault's cores were doing when it stopped their op (the analysis's
    /// `stopped`).
    stops: Vec<crate::sink::analysis::Stopped>,
    /// Every launch's cycles by pc and cause (`Config::lines`).
    lines: Option<crate::lines::LineProfile>,
    /// Every tile's debug timestamper (`Config::backend` = timestamper).
    stamps: Option<Stamps>,
    /// The daisychain sampler (`Config::sample`).
    daisy: Option<crate::lines::sample::Sampler>,
    /// Where drained payload goes (`Config::spool_records`).
    spool: Option<Spool>,
    /// The spool's first failed write (a full disk): it keeps later payload in memory.
    spool_failed: Option<Error>,
}

impl Session {
    /// Creates the device and its output directory, initialises every tile, takes the first
    /// clock-sync window and attaches the consumer.
    pub fn start(mut cfg: Config) -> Result<Session> {
        let out = &cfg.out;
        if out.exists() && !out.is_dir() {
            return Err(Error::BadFile {
                path: out.clone(),
                what: "is not a directory: the outputs go into a directory".into(),
            });
        }
        // What needs no device is checked before anything is created.
        check_grid(cfg.arch, cfg.grid)?;
        check_chips(
            cfg.chips,
            !cfg.counters.is_empty(),
            cfg.sample.is_some(),
            cfg.layout == riscv_linker::Layout::TtMetal,
        )?;
        cfg.settings.consumer = cfg.drain_every_cycles > 0;
        if cfg.backend == Backend::Timestamper && !cfg.settings.consumer {
            return Err(Error::Unsupported(TIMESTAMPER_NEEDS_CONSUMER.into()));
        }
        let daisy = cfg
            .sample
            .map(|s| crate::lines::sample::Sampler::new(s, cfg.arch))
            .transpose()?;
        crate::atomic::refuse_link(&out.join(IMAGE_FILE))?;
        crate::atomic::create_dir_within(out, &out.join("kernels"))?;
        let mut dc = DeviceConfig::new(cfg.arch, cfg.grid);
        dc.chips = cfg.chips;
        dc.image = Some(out.join(IMAGE_FILE));
        dc.threads = cfg.threads;
        dc.clock = cfg.clock.clone();
        dc.instruction_budget = cfg.instruction_budget;
        dc.lines = cfg.lines;
        dc.layout = cfg.layout;
        // The session owns the image: only profiler consumers write it while kernels run.
        dc.deadlock_detection = true;
        let mut dev = Device::new(dc).map_err(|e| Error::Emulator(e.to_string()))?;
        dev.set_deadline(
            cfg.timeout
                .and_then(|t| std::time::Instant::now().checked_add(t)),
        );
        let tiles = dev.tiles();
        let mem = MappedImage::open(dev.image_path(), &cfg.inputs)?;
        if daisy.is_some() {
            // Held while the session lives: a `capture --sample` of this image is refused.
            mem.claim_sampler()?;
        }
        let map = ring_map(&cfg);
        for chip in 0..cfg.chips {
            for t in &tiles {
                launch::init_tile_in(&map, &mem, chip, *t, cfg.arch, &cfg.settings)?;
            }
        }
        // The timestamper's registers are reachable in-process only (the image holds L1).
        let stamps = match cfg.backend {
            Backend::Ring => None,
            Backend::Timestamper => Some(Stamps::attach(
                &EmuMemory::new(&dev),
                cfg.arch,
                cfg.settings.recording,
            )?),
        };
        let mut sync = ClockSync::new(emu_tiles(&dev), cfg.sync_samples);
        sync.window(&EmuClock::new(&dev))?;
        let sampler = ClockSampler::new(&emu_tiles(&dev), cfg.sample_every_ns);
        let consume = cfg.settings.consumer;
        let profiler_mem: Box<dyn DeviceMemory> =
            Box::new(MappedImage::open(dev.image_path(), &cfg.inputs)?);
        let mut drainer = Drainer::attach_owned(
            profiler_mem,
            DrainOptions {
                consume,
                attach_consumer: consume,
            },
        )?;
        // What the consumer takes leaves the device: keep it for the snapshot.
        drainer.keep_payload();
        let log = OpLogWriter::create(&out.join(OPLOG_FILE), &cfg.inputs)?;
        let spool = (cfg.spool_records
            && consume
            && cfg.backend == Backend::Ring
            && !cfg.lines
            && cfg.sample.is_none())
        .then(|| Spool::create(out))
        .transpose()?;
        Ok(Session {
            spool,
            spool_failed: None,
            dev,
            mem,
            drainer,
            sync,
            sampler,
            log,
            tiles,
            next_run: 1,
            copies: HashMap::new(),
            in_folder: Default::default(),
            created: Vec::new(),
            launched: Vec::new(),
            faults: Vec::new(),
            stops: Vec::new(),
            lines: cfg.lines.then(Default::default),
            stamps,
            daisy,
            cfg,
        })
    }

    /// What the session was started with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The NoC0 coordinates of every worker tile, in device order.
    pub fn tiles(&self) -> &[NocCoord] {
        &self.tiles
    }

    /// The device's L1 as the program sees it (stage inputs, check outputs; DRAM buffers go
    /// through [`Session::write_dram_interleaved`] and [`Session::read_dram_interleaved`]).
    pub fn memory(&self) -> &dyn DeviceMemory {
        &self.mem
    }

    /// The emulated device itself (registers, local RAM, the wall clock).
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// Writes `data` into the DRAM of every chip of the device as an interleaved buffer at
    /// bank address `base` with pages of `page_size` bytes, laid out as tt-metal does (page
    /// `p` in bank `p % banks`): the inputs of ops whose kernels read DRAM over the NoC.
    pub fn write_dram_interleaved(&mut self, base: u32, page_size: u32, data: &[u8]) -> Result<()> {
        for chip in 0..self.cfg.chips {
            self.dev
                .write_dram_interleaved(chip, base, page_size, data)
                .map_err(|e| {
                    Error::Emulator(format!(
                        "write {} bytes to the DRAM buffer at bank address {base:#x} of chip {chip}: {e}",
                        data.len()
                    ))
                })?;
        }
        Ok(())
    }

    /// Writes `data` into the workers' L1 as a tt-metal interleaved L1 buffer at bank
    /// address `base` over `banks` banks (the firmware's count; page `p` on the worker of
    /// bank `p % banks`, `ttprof_emu::tt_metal::program::l1_page`).
    pub fn write_l1_interleaved(
        &mut self,
        banks: u32,
        base: u32,
        page_size: u32,
        data: &[u8],
    ) -> Result<()> {
        ttprof_emu::tt_metal::program::write_l1_interleaved(
            &mut self.dev,
            banks,
            base,
            page_size,
            data,
        )
        .map_err(|e| Error::Emulator(e.to_string()))
    }

    /// Reads `len` bytes of an interleaved L1 buffer ([`Session::write_l1_interleaved`]).
    pub fn read_l1_interleaved(
        &self,
        banks: u32,
        base: u32,
        page_size: u32,
        len: usize,
    ) -> Result<Vec<u8>> {
        ttprof_emu::tt_metal::program::read_l1_interleaved(&self.dev, banks, base, page_size, len)
            .map_err(|e| Error::Emulator(e.to_string()))
    }

    /// Reads `len` bytes of an interleaved DRAM buffer of `chip` (see
    /// [`Session::write_dram_interleaved`]): the outputs ops wrote back over the NoC.
    pub fn read_dram_interleaved(
        &self,
        chip: u32,
        base: u32,
        page_size: u32,
        len: usize,
    ) -> Result<Vec<u8>> {
        self.dev
            .read_dram_interleaved(chip, base, page_size, len)
            .map_err(|e| {
                Error::Emulator(format!(
                    "read {len} bytes of the DRAM buffer at bank address {base:#x} of chip {chip}: {e}"
                ))
            })
    }

    /// The run id the next launch will get.
    pub fn next_run_id(&self) -> u32 {
        self.next_run
    }

    /// Launches so far.
    pub fn launched(&self) -> &[Launched] {
        &self.launched
    }

    /// Faults so far (at most one per launch).
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// The kernel copies this session wrote under `kernels/` where nothing was before: with
    /// the op log, the device image and the folders it made, what a run that fails on
    /// unusable input removes ([`run::Run::launch`]).
    pub fn created_copies(&self) -> &[PathBuf] {
        &self.created
    }

    /// Runs one op to its end on its tiles (see the module docs). A fault is returned as
    /// [`Error::Fault`] after the op was logged; the session can still [`Session::finish`].
    pub fn launch(&mut self, op: &Op) -> Result<Launched> {
        let tiles = match &op.tiles {
            Some(t) => {
                if let Some(bad) = t.iter().find(|c| !self.tiles.contains(c)) {
                    return Err(Error::Argument {
                        what: format!(
                            "op {:?}: tile {bad} is not a worker tile of this {}x{} {} grid (tiles: {})",
                            op.name,
                            self.cfg.grid.0,
                            self.cfg.grid.1,
                            self.cfg.arch,
                            self.tiles.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" ")
                        ),
                    });
                }
                t.clone()
            }
            None => self.tiles.clone(),
        };
        if let Some((bad, risc, _)) = op.tile_args.iter().find(|(c, ..)| !tiles.contains(c)) {
            return Err(Error::Argument {
                what: format!(
                    "op {:?}: runtime arguments for {risc} on tile {bad}, which does not run the op",
                    op.name
                ),
            });
        }
        let mut images = Vec::new();
        let buffers = check::run_buffers(self.cfg.arch, self.cfg.backend, self.cfg.sample.as_ref());
        for (risc, bytes) in check(op, self.cfg.arch, &buffers, &self.cfg.inputs)? {
            let elf = &op
                .kernels
                .iter()
                .find(|(r, _)| *r == risc)
                .expect("checked")
                .1;
            let copy = self.copy_kernel(elf, &bytes)?;
            images.push((risc, bytes, copy));
        }
        let run_id = self.next_run;
        self.next_run += 1;
        // Only this op's kernels run: every other core of the device stays in reset.
        for chip in 0..self.cfg.chips {
            for t in &self.tiles {
                for risc in Risc::ALL {
                    if !(tiles.contains(t) && images.iter().any(|(r, ..)| *r == risc)) {
                        self.dev
                            .unload_kernel(chip, *t, risc)
                            .map_err(|e| Error::Emulator(e.to_string()))?;
                    }
                }
            }
            for t in &tiles {
                for input in &op.l1 {
                    input.write(&self.mem, chip, *t)?;
                }
                // Every kernel of the op reads its own arguments; words past them read 0.
                for (risc, ..) in &images {
                    let values = op.args_on(*t, *risc);
                    let region = riscv_linker::runtime_args(*risc);
                    for i in 0..riscv_linker::MAX_RUNTIME_ARGS {
                        let v = values.get(i as usize).copied().unwrap_or(0);
                        self.mem.write_u32(chip, *t, region.start + 4 * i, v)?;
                    }
                }
                launch::set_run_id(&self.mem, chip, *t, run_id)?;
                for (risc, bytes, copy) in &images {
                    self.dev
                        .load_kernel(chip, *t, *risc, bytes, &copy.display().to_string())
                        .map_err(|e| Error::Emulator(e.to_string()))?;
                    launch::set_kernel(&self.mem, chip, *t, *risc, bytes)?;
                }
            }
        }
        if let Some(s) = self.daisy.as_mut() {
            let kernels = images.iter().map(|(r, _, c)| (*r, c.clone())).collect();
            // Armed before the run: sampling starts with it (its start is known in the hook).
            s.start_launch(
                &EmuMemory::new(&self.dev),
                &crate::lines::sample::no_clock,
                run_id,
                &op.name,
                &tiles,
                kernels,
            )?;
        }
        let noc_before = counters::arm(&mut self.dev, &self.cfg.counters, &tiles)?;
        let start = self.dev.host_time_ns() as u64;
        let mut drain_error = None;
        let drain_every = self.cfg.drain_every_cycles;
        let window = self.daisy.as_ref().map(|s| s.config().window_cycles());
        let result = if drain_every > 0 || window.is_some() {
            // The hook runs every window when sampling; the drains keep their own period.
            let every = match window {
                Some(w) if drain_every > 0 => w.min(drain_every),
                Some(w) => w,
                None => drain_every,
            };
            let (drainer, sampler, daisy) = (&mut self.drainer, &mut self.sampler, &mut self.daisy);
            let (stamps, spool) = (&mut self.stamps, &mut self.spool);
            let spool_failed = &mut self.spool_failed;
            let mut at = 0u64;
            self.dev.run_with_hook(every, &mut |dev| {
                let before = at;
                at += every;
                if drain_every > 0 && at / drain_every != before / drain_every {
                    if drain_error.is_none() {
                        drain_error = drainer.drain().err();
                    }
                    if let (None, Some(spool)) = (&drain_error, spool.as_mut()) {
                        // A spool that cannot write keeps the payload in memory: the run
                        // goes on, nothing drained is lost (said at the end).
                        if let Err(e) = spool_drained(drainer, spool) {
                            spool_failed.get_or_insert(e);
                        }
                    }
                    if let (None, Some(s)) = (&drain_error, stamps.as_mut()) {
                        drain_error = s.drain(&EmuMemory::new(dev)).err();
                    }
                    sampler.tick(&EmuClock::new(dev), dev.host_time_ns() as u64);
                }
                if let Some(s) = daisy.as_mut() {
                    if drain_error.is_none() {
                        // During a run the device's wall clock reads the run's start; the
                        // hook runs `at` cycles into it.
                        let clock = |chip, t| {
                            dev.wall_clock(chip, t).ok().map(|run_start| {
                                crate::lines::sample::TileTime {
                                    run_start,
                                    now: run_start + at,
                                }
                            })
                        };
                        drain_error = s.window(&EmuMemory::new(dev), &clock).err();
                    }
                }
            })
        } else {
            self.dev.run()
        };
        if let Some(s) = self.daisy.as_mut() {
            // After the run the wall clock reads its end.
            let cycles = result
                .as_ref()
                .ok()
                .and_then(|r| r.chip_cycles.first())
                .map(|&(start, end)| end - start);
            let dev = &self.dev;
            let clock = |chip, t| {
                let end = dev.wall_clock(chip, t).ok()?;
                Some(crate::lines::sample::TileTime {
                    run_start: end - cycles?,
                    now: end,
                })
            };
            s.end_launch(&EmuMemory::new(&self.dev), &clock)?;
        }
        let end = self.dev.host_time_ns() as u64;
        // Read whether the launch completed or not: a faulting op's counts so far are its own.
        let op_counters = counters::read(
            &mut self.dev,
            &self.cfg.counters,
            &tiles,
            noc_before.as_ref(),
        )?;
        // What the last drain inside the run did not see (every core has flushed at exit).
        if let (None, Some(s)) = (&drain_error, self.stamps.as_mut()) {
            drain_error = s.drain(&EmuMemory::new(&self.dev)).err();
        }
        // One record per chip: the op ran on each (the same run id, `device` the chip).
        for chip in 0..self.cfg.chips {
            let record = OpRecord {
                run_id,
                device: chip,
                op_code: op.name.clone(),
                op_type: "tt_dnn_device".into(),
                attributes: op.attributes.clone(),
                inputs: op.inputs.clone(),
                outputs: op.outputs.clone(),
                host_start_ns: start,
                host_end_ns: end,
                kernels: images
                    .iter()
                    .map(|(risc, _, copy)| KernelBinding {
                        risc: risc.name().into(),
                        // Relative to the folder (the op log's directory), so a moved or
                        // downloaded run folder still names its kernels.
                        elf: self.in_out(copy),
                        cores: tiles.iter().map(|t| [t.x, t.y]).collect(),
                    })
                    .collect(),
                counters: op_counters.clone(),
            };
            // Logged whatever happened: the records a faulting launch published still need names.
            self.log.op(&record)?;
        }
        self.log_holds(run_id)?;
        let summary = match result {
            Ok(s) => s,
            Err(e) => {
                let kernels: Vec<(Risc, &[u8])> =
                    images.iter().map(|(r, b, _)| (*r, &b[..])).collect();
                return Err(self.stopped(e, &op.name, run_id, &tiles, &kernels));
            }
        };
        if let Some(e) = drain_error {
            return Err(e);
        }
        if let Some(lines) = self.lines.as_mut() {
            lines.add_launch(run_id, &op.name, &self.dev.line_profiles())?;
        }
        let launched = Launched {
            run_id,
            op: op.name.clone(),
            host_ns: (start, end),
            instructions: summary.instructions(),
        };
        self.launched.push(launched.clone());
        Ok(launched)
    }

    /// Logs every stretch the emulator held a core in the last run (`held` lines).
    fn log_holds(&mut self, run_id: u32) -> Result<()> {
        // Stretches with their cause by name; (cycle, semaphore) pairs widened.
        let named = |v: &[ttprof_emu::HeldSpan]| -> Vec<(u64, u32, String)> {
            v.iter()
                .map(|s| {
                    let why = ttprof_emu::lines::cause_name(s.cause as usize);
                    (s.start, s.cycles, why.to_string())
                })
                .collect()
        };
        let sems = |v: &[(u64, u8)]| -> Vec<(u64, u32)> {
            v.iter().map(|&(c, s)| (c, s as u32)).collect()
        };
        for h in self.dev.holds() {
            self.log.holds(&crate::oplog::CoreHolds {
                run_id,
                device: h.chip,
                core: [h.tile.x, h.tile.y],
                risc: h.risc.name().into(),
                spans: named(&h.spans),
                lost_cycles: h.lost_cycles,
                gate: named(&h.gate),
                gate_lost_cycles: h.gate_lost_cycles,
                posts: sems(&h.posts),
                gets: sems(&h.gets),
                lost_posts: h.lost_posts,
            })?;
        }
        Ok(())
    }

    /// The error of a launch the emulator stopped (`e`, on `tiles` running `riscs`): a
    /// core's fault is kept for the outputs, and the stopped cores' last records are
    /// published ([`launch::publish_stopped`]; an error doing that is returned instead).
    fn stopped(
        &mut self,
        mut e: ttprof_emu::EmuError,
        op: &str,
        run_id: u32,
        tiles: &[NocCoord],
        kernels: &[(Risc, &[u8])],
    ) -> Error {
        let riscs: Vec<Risc> = kernels.iter().map(|(r, _)| *r).collect();
        if let ttprof_emu::EmuError::Fault(f) = &mut e {
            let (cores, others) = open_waits::annotate(f, tiles, kernels);
            let mut stop = self.stop(f, run_id, &cores, kernels);
            stop.others = others;
            self.stops.push(stop);
        }
        let recovered = match e.fault() {
            Some(f) => {
                self.faults.push(f.clone());
                match self.publish_stopped_cores(tiles, &riscs) {
                    Ok(n) => Some(n),
                    Err(err) => return err,
                }
            }
            None => None,
        };
        Error::Fault {
            op: op.to_string(),
            run: run_id,
            what: e.to_string(),
            recovered,
        }
    }

    /// What `fault` (of run `run`) stopped, each of its `cores` with its open waits and when
    /// each opened: the start its guard holds ([`guard`]), read off the stopped core's
    /// registers and memory; the tile's wall clock gives the start's upper bits (a wait
    /// opened less than 2^32 cycles before the stop).
    fn stop(
        &self,
        fault: &Fault,
        run: u32,
        cores: &[open_waits::StoppedCore],
        kernels: &[(Risc, &[u8])],
    ) -> crate::sink::analysis::Stopped {
        use crate::sink::analysis::{OpenWait, Stopped, StoppedCore};
        let chip = fault.chip;
        let l1 = self.cfg.arch.l1_size();
        let cores = cores
            .iter()
            .map(|c| {
                let stopped = self.dev.wall_clock(chip, c.tile).ok();
                let regs = self.dev.hart_registers(chip, c.tile, c.risc).ok();
                let local = self.dev.local_ram(chip, c.tile, c.risc).ok();
                let word = |addr: u32| -> Option<u32> {
                    if let Some(at) = addr.checked_sub(riscv_linker::mmio::LOCAL_RAM_BASE) {
                        let at = at as usize;
                        let b = local.as_ref()?.get(at..at.checked_add(4)?)?;
                        return Some(u32::from_le_bytes(b.try_into().ok()?));
                    }
                    (u64::from(addr) + 4 <= u64::from(l1))
                        .then(|| self.mem.read_u32(chip, c.tile, addr).ok())
                        .flatten()
                };
                let elf = kernels.iter().find(|(r, _)| *r == c.risc).map(|(_, e)| *e);
                let waits = c
                    .waits
                    .iter()
                    .map(|w| {
                        let start = match (elf, regs) {
                            (Some(elf), Some((_, regs))) => guard::guard_start(
                                elf,
                                c.pc,
                                &|f: &str| open_waits::same_file(f, &w.file),
                                w.line,
                                &guard::Core { regs, word: &word },
                            ),
                            _ => None,
                        };
                        // The start is the wall clock's low word: the last such time before
                        // the stop.
                        let since = start.zip(stopped).map(|(s, now)| {
                            now.saturating_sub(u64::from((now as u32).wrapping_sub(s)))
                        });
                        OpenWait::new(
                            w.name.clone(),
                            w.wait.to_string(),
                            format!("{}:{}", w.file, w.line),
                            since,
                            stopped,
                        )
                    })
                    .collect();
                StoppedCore::new(c.tile, c.risc, c.pc, c.text.clone(), stopped, waits)
            })
            .collect();
        Stopped {
            chip,
            run,
            fault: fault.kind.to_string(),
            cores,
            others: Vec::new(),
        }
    }

    /// After a fault stopped the run: every core of the op that was still in a kernel gets
    /// its last records published from its write pointer (`tp`), see
    /// [`launch::publish_stopped`]. Returns the bytes published.
    fn publish_stopped_cores(&self, tiles: &[NocCoord], riscs: &[Risc]) -> Result<u64> {
        let mut bytes = 0u64;
        for chip in 0..self.cfg.chips {
            for t in tiles {
                for risc in riscs {
                    let (_, regs) = self
                        .dev
                        .hart_registers(chip, *t, *risc)
                        .map_err(|e| Error::Emulator(e.to_string()))?;
                    let map = ring_map(&self.cfg);
                    if let launch::PublishOutcome::Published { bytes: b } =
                        launch::publish_stopped(&map, &self.mem, chip, *t, *risc, regs[4])?
                    {
                        bytes += b as u64;
                    }
                }
            }
        }
        Ok(bytes)
    }

    /// `path` relative to the output folder when it is inside it (both made absolute first:
    /// the folder may be given relative, the copies are absolute).
    fn in_out(&self, path: &Path) -> PathBuf {
        let out = std::path::absolute(&self.cfg.out).unwrap_or_else(|_| self.cfg.out.clone());
        path.strip_prefix(&out).unwrap_or(path).to_path_buf()
    }

    /// Copies a kernel ELF under `kernels/` once per source path: `kernels/<name>`, or
    /// `kernels/<name>-<n>` when another ELF of that name was copied already.
    fn copy_kernel(&mut self, elf: &Path, bytes: &[u8]) -> Result<PathBuf> {
        let source = std::path::absolute(elf).unwrap_or_else(|_| elf.to_path_buf());
        let dir = std::path::absolute(self.cfg.out.join("kernels"))
            .unwrap_or_else(|_| self.cfg.out.join("kernels"));
        if source.parent() == Some(dir.as_path()) {
            // Already in the output folder (the caller built it there).
            self.in_folder.insert(source.clone());
            return Ok(source);
        }
        // One copy per (source, contents): a rebuilt kernel gets a new copy, and the copies
        // earlier ops of the op log name are never overwritten.
        let key = (source, {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            h.finish()
        });
        if let Some(copy) = self.copies.get(&key) {
            return Ok(copy.clone());
        }
        let stem = elf
            .file_name()
            .map_or("kernel".into(), |n| n.to_string_lossy().into_owned());
        let taken = |p: &Path| self.in_folder.contains(p) || self.copies.values().any(|c| c == p);
        let mut copy = dir.join(&stem);
        let mut n = 2;
        while taken(&copy) {
            copy = dir.join(format!("{stem}-{n}"));
            n += 1;
        }
        let new = matches!(std::fs::symlink_metadata(&copy),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        crate::atomic::write_atomic(&copy, &self.cfg.inputs, |w| {
            std::io::Write::write_all(w, bytes)
        })?;
        if new {
            self.created.push(copy.clone());
        }
        self.copies.insert(key, copy.clone());
        Ok(copy)
    }

    /// Drains the last records, fits the clocks, writes every output, the snapshot and the
    /// summary (see the module docs).
    pub fn finish(self) -> Result<FinishedSession> {
        let Session {
            cfg,
            dev,
            mem,
            mut drainer,
            mut sync,
            sampler,
            log,
            faults,
            launched,
            stops,
            lines,
            stamps,
            mut daisy,
            mut spool,
            mut spool_failed,
            ..
        } = self;
        drop(log);
        drainer.drain_final()?;
        if let Some(spool) = spool.as_mut() {
            if let Err(e) = spool_drained(&mut drainer, spool) {
                spool_failed.get_or_insert(e);
            }
        }
        let mut drained = drainer.take_payload();
        let mut readout = drainer.finish()?;
        let (mut stamp_issues, mut stamp_bus) = (Vec::new(), 0);
        if let Some(mut stamps) = stamps {
            stamps.drain(&EmuMemory::new(&dev))?;
            let (records, issues, bus) = stamps.finish();
            (stamp_issues, stamp_bus) = (issues, bus);
            crate::stamp::merge_into(&mut drained, records, &mut stamp_issues);
        }
        sync.window(&EmuClock::new(&dev))?;
        sync.extend(sampler.samples());
        let mut fit = sync.fit(cfg.arch, dev.config().chips, &FitOptions::default())?;
        fit.issues.extend(crate::clock::sampler_issue(&sampler));
        let snapshot = cfg.out.join(SNAPSHOT_FILE);
        let snap = Snapshot::like(&mem)?;
        for region in ring_map(&cfg).regions() {
            snap.capture_region(&mem, region.start, region.size)?;
        }
        // What the consumer freed is no longer in the rings: the snapshot carries it. Without
        // a consumer the records are still in the rings (and recorded with them).
        if cfg.settings.consumer {
            for (id, bytes) in &drained {
                snap.add_drained(id.chip, id.tile, id.risc, bytes)?;
            }
        }
        snap.add_sync_samples(sync.samples())?;
        // The timestamper's loss is not in the memory: the snapshot records it, so its
        // readout (here and `ttprof report --device device.snap`) reports it.
        snap.add_losses(&stamp_issues)?;
        let written_snapshot = match spool.as_mut() {
            // The drained payload from the spool, a ring at a time.
            Some(spool) => {
                let rings: Vec<_> = spool
                    .rings()
                    .into_iter()
                    .map(|id| (id, spool.len_of(id)))
                    .collect();
                snap.save_with_drained(&snapshot, &cfg.inputs, &rings, |id, piece| {
                    spool.read_pieces(id, piece)
                })?;
                true
            }
            None => false,
        };
        if cfg.backend == Backend::Timestamper {
            // The rings' records with the timestamper's merged in, read back as any readout
            // of the snapshot reads them (`ttprof report --device device.snap` sees the same).
            let bus = readout.bus_bytes;
            readout = crate::readout::read(&snap, false)?;
            readout.bus_bytes = bus + stamp_bus;
        }
        if !written_snapshot {
            snap.save(&snapshot, &cfg.inputs)?;
        }
        drop(snap);
        let oplog = OpLog::read(&cfg.out.join(OPLOG_FILE), &cfg.inputs)?;
        let mut issues: Vec<Issue> = faults.iter().map(fault_issue).collect();
        issues.extend(fit.issues.iter().cloned());
        if let Some(e) = spool_failed {
            issues.push(Issue::warning(
                None,
                format!("{e}: the records drained from then on were kept in memory instead"),
            ));
        }
        let options = outputs::Options {
            notes: faults.iter().map(|f| format!("FAULT: {f}")).collect(),
            dataset: cfg.dataset.clone(),
            summary_threshold_ns: cfg.summary_threshold_ns,
            inputs: cfg.inputs.clone(),
            // The ops a fault stopped, with what their cores were doing.
            stopped: stops,
            ..outputs::Options::default()
        };
        remove_old_op_reports(&cfg.out)?;
        let (model, mut written) = match spool.as_mut() {
            // Two passes over the spool: the model, then the outputs a ring at a time.
            Some(spool) => {
                let s = crate::spooled::profile(readout, spool, Some(oplog), fit.timebase.clone())?;
                let mut model = s.profile;
                model.readout.issues.extend(s.launch);
                let mut rings = crate::spooled::SpoolRings::new(&model, spool);
                let written = outputs::write_all_rings(&cfg.out, &model, &mut rings, &options)?;
                (model, written)
            }
            None => {
                let resolution = Resolver::new(&oplog).resolve(&readout);
                let model = crate::profile::Profile::resolved(
                    readout,
                    resolution,
                    Some(oplog),
                    fit.timebase.clone(),
                );
                let written = outputs::write_all(&cfg.out, &model, &options)?;
                (model, written)
            }
        };
        drop(spool);
        let mut lines = lines;
        if let Some(lines) = &mut lines {
            // Never spooled (`Config::spool_records`): the model holds every zone.
            lines.split_by_zones(&model);
            written.lines = lines.write(&cfg.out, &cfg.inputs)?;
        }
        let mut agreement = None;
        if let Some(d) = &mut daisy {
            // Never spooled either: the model holds every zone.
            d.profile_mut().split_by_zones(&model);
            let (files, a) = d.profile().write(&cfg.out, lines.as_ref(), &cfg.inputs)?;
            written.lines.extend(files);
            agreement = a;
        }
        let crate::profile::Profile {
            readout,
            sites: resolution,
            oplog,
            ..
        } = model;
        let oplog = oplog.unwrap_or_default();
        Ok(FinishedSession {
            out: cfg.out,
            readout,
            resolution,
            oplog,
            fit,
            written,
            snapshot,
            image: dev.image_path().to_path_buf(),
            faults,
            launched,
            issues,
            samples: daisy.map(|d| d.profile().clone()),
            agreement,
        })
    }
}

/// Moves what `drainer` decoded since the last call into `spool` (its tables dropped: the
/// payload decodes to the same records). A write that fails keeps the payload in the
/// spool's memory, and says so.
fn spool_drained(drainer: &mut Drainer, spool: &mut Spool) -> Result<()> {
    let kept = spool.append(&drainer.take_payload());
    drop(drainer.take_zones());
    kept
}

/// A fault as a data problem at its core.
fn fault_issue(f: &Fault) -> Issue {
    let at = crate::Location {
        chip: f.chip,
        x: f.tile.x,
        y: f.tile.y,
        risc: Some(f.risc),
    };
    // The issue names the core itself: the fault's text without its own location prefix.
    // The note goes on the fault's first line, before the one line per core of a deadlock.
    let full = f.to_string();
    let what = full.strip_prefix(&format!("{at}: ")).unwrap_or(&full);
    let (head, cores) = what.split_once('\n').unwrap_or((what, ""));
    // The fault's own lead-in to its core lines goes after the note, just before them.
    let (head, lead) = match head.strip_suffix("; every running core:") {
        Some(h) => (h, "; every running core:\n"),
        None if cores.is_empty() => (head, ""),
        None => (head, "\n"),
    };
    Issue::error(
        Some(at),
        format!(
            "the kernel faulted: {head}; the records it wrote before the fault are read (the host published \
             what the stopped cores had written){lead}{cores}"
        ),
    )
}

/// Every run writes a new timestamped op report (as tt-metal does); keep only the new one so
/// `tt-perf-report <out>/ops_perf_results_*.csv` reads this run alone.
pub(crate) fn remove_old_op_reports(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("ops_perf_results_") && name.ends_with(".csv") {
            std::fs::remove_file(e.path())
                .map_err(|err| Error::io(e.path(), "remove the previous op report", err))?;
        }
    }
    Ok(())
}

/// What a finished session read and wrote.
pub struct FinishedSession {
    /// The output directory.
    pub out: PathBuf,
    /// What was read out (every ring's records).
    pub readout: Readout,
    /// The records' site metadata.
    pub resolution: Resolution,
    /// The op log the session wrote.
    pub oplog: OpLog,
    /// The clock fit every output's host times come from.
    pub fit: Fit,
    /// The output files written.
    pub written: Written,
    /// The snapshot of the run (replayable offline).
    pub snapshot: PathBuf,
    /// The emulator's device image.
    pub image: PathBuf,
    /// Cores that faulted.
    pub faults: Vec<Fault>,
    /// Every launch, in order.
    pub launched: Vec<Launched>,
    /// Faults and clock-fit problems (readout, resolution and output issues are in their
    /// own structs; [`FinishedSession::issues`] lists them all).
    pub issues: Vec<Issue>,
    /// The daisychain's samples (`Config::sample`).
    pub samples: Option<crate::lines::sample::SampleProfile>,
    /// How the sampled line shares agree with the exact ones (`Config::sample` with
    /// `Config::lines`).
    pub agreement: Option<crate::lines::sample::Agreement>,
}

impl FinishedSession {
    /// Every problem found: faults, readout, naming, clock fit, outputs.
    pub fn issues(&self) -> impl Iterator<Item = &Issue> {
        self.issues
            .iter()
            .chain(&self.readout.issues)
            .chain(&self.resolution.issues)
            .chain(&self.written.issues)
    }

    /// Whether some problem makes the outputs incomplete or wrong.
    pub fn has_errors(&self) -> bool {
        self.issues().any(Issue::is_error)
    }

    /// The per-op summary as written to `ttprof_summary.txt`.
    pub fn summary_text(&self) -> &str {
        &self.written.summary_text
    }

    /// The summary in one screen (`summary::brief`): what commands print by default.
    pub fn brief_text(&self) -> &str {
        &self.written.brief_text
    }

    /// Every file written: the outputs, then the op log, the device image and the snapshot.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .written
            .files()
            .iter()
            .map(|p| p.to_path_buf())
            .collect();
        files.extend([
            self.out.join(OPLOG_FILE),
            self.image.clone(),
            self.snapshot.clone(),
        ]);
        files
    }
}
