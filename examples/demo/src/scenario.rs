//! One scenario: kernels built, ops launched with a consumer draining while kernels run,
//! outputs checked, op log written; the caller reads out and writes files.

use crate::ops::{self, OpSpec};
use crate::workspace;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use ttprof::clock::{emu_tiles, ClockSync, EmuClock, Fit, FitOptions};
use riscv_linker::profiler;
use ttprof::devmem::{MappedImage, Snapshot, TileSample};
use ttprof::kernels::{self, KernelBuild};
use ttprof::launch::{self, Settings};
use ttprof::oplog::{KernelBinding, OpLogWriter, OpRecord};
use ttprof::readout::{DrainOptions, Drainer, Readout};
use ttprof_emu::{ChipClock, ClockModel, Device, DeviceConfig, ReadLatency, TileOffsets};

/// Which kernel binary runs on which core.
pub const KERNELS: [(&str, Risc); 5] = [
    ("reader", Risc::Brisc),
    ("writer", Risc::Ncrisc),
    ("unpack", Risc::Trisc0),
    ("math", Risc::Trisc1),
    ("pack", Risc::Trisc2),
];

/// Clock-sync samples per tile and window (tt-metal takes 100).
const SYNC_SAMPLES: usize = 100;

pub type Fallible<T> = Result<T, Box<dyn Error>>;

/// What to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub arch: Arch,
    pub grid: (u8, u8),
    pub ops: Vec<OpSpec>,
    /// Where the device image, op log and kernel copies go.
    pub out: PathBuf,
    /// Emulator host threads (0: all cores).
    pub threads: usize,
    /// The consumer drains every ring this often (simulated cycles of every tile); 0: never
    /// while kernels run (everything is read after the last op).
    pub drain_every_cycles: u64,
    pub settings: Settings,
    /// The emulated chip's clocks and the host's read latency.
    pub clock: ClockModel,
}

/// A chip whose clock is not the nominal one, as real parts are: AICLK 1.5 % slow (0.985
/// GHz seen on a 1 GHz part), a little drift, per-tile offsets, and host reads taking
/// 1 us +- 0.5 us. The clock fit has to find all of it.
pub fn realistic_clock(arch: Arch) -> ClockModel {
    ClockModel {
        chips: vec![ChipClock { true_mhz: Some(arch.aiclk_mhz() as f64 * 0.985), drift_ppm_per_s: 0.2, reset_host_ns: 0.0 }],
        tile_offsets: TileOffsets::Seeded { max_cycles: 5_000, seed: 7 },
        host_read: ReadLatency::uniform(1000.0, 500.0, 11),
    }
}

/// What a scenario produced.
pub struct Outcome {
    pub readout: Readout,
    /// Device clocks fitted to host time from sync windows before and after the ops.
    pub clock: Fit,
    /// The sync samples the fit used (to record them with a snapshot).
    pub sync_samples: Vec<TileSample>,
    pub oplog: PathBuf,
    pub image: PathBuf,
    pub tiles: Vec<NocCoord>,
    /// Instructions retired per op, all cores.
    pub instructions: Vec<u64>,
}

/// Builds the example kernels for `arch` and copies the pipeline's five ELFs into `dir`.
pub fn build_kernels(arch: Arch, dir: &Path) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    let names: Vec<&'static str> = KERNELS.iter().map(|k| k.0).collect();
    build_kernel_set(arch, true, &names, dir)
}

/// Builds the example kernel crate for `arch` with or without its `profile` feature and
/// copies the named ELFs into `dir` (builds with other features reuse cargo's output paths).
pub fn build_kernel_set(arch: Arch, profile: bool, names: &[&'static str], dir: &Path) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    // Cargo writes every feature set's ELFs to the same paths: build and copy under a lock
    // (tests build concurrently), in one target directory per arch.
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let ws = workspace();
    let built = kernels::build(&KernelBuild {
        crate_dir: ws.join("examples/kernels"),
        arch,
        target_dir: ws.join("target/kernels").join(arch.name()),
        features: vec![],
        no_default_features: !profile,
    })?;
    fs::create_dir_all(dir)?;
    let mut elfs = BTreeMap::new();
    for name in names {
        let to = dir.join(name);
        fs::copy(built.elf(name)?, &to)?;
        elfs.insert(*name, to);
    }
    Ok(elfs)
}

/// An ELF path as the op log in `dir` should name it: relative to `dir` when inside it (the
/// op log resolves relative paths against its own directory, so the folder can move).
fn logged_path(elf: &Path, dir: &Path) -> PathBuf {
    elf.strip_prefix(dir).map(Path::to_path_buf).unwrap_or_else(|_| std::path::absolute(elf).unwrap_or_else(|_| elf.to_path_buf()))
}

fn op_record(spec: &OpSpec, run_id: u32, tiles: &[NocCoord], host: (u64, u64), elfs: &BTreeMap<&str, PathBuf>, dir: &Path) -> OpRecord {
    let (inputs, outputs) = ops::tensors(spec, tiles.len());
    let mut attributes = serde_json::Map::new();
    attributes.insert("tiles_per_core".into(), spec.tiles.into());
    // The example ops compute exactly on integers: the highest fidelity.
    attributes.insert("math_fidelity".into(), "HiFi4".into());
    OpRecord {
        run_id,
        device: 0,
        op_code: spec.op.name().into(),
        op_type: "tt_dnn_device".into(),
        attributes,
        inputs,
        outputs,
        host_start_ns: host.0,
        host_end_ns: host.1,
        kernels: KERNELS
            .iter()
            .map(|(name, risc)| KernelBinding {
                risc: risc.name().into(),
                elf: logged_path(&elfs[name], dir),
                cores: tiles.iter().map(|t| [t.x, t.y]).collect(),
            })
            .collect(),
    }
}

/// Runs every op of `s` with the kernels in `elfs`; returns everything the consumer read.
pub fn run(s: &Scenario, elfs: &BTreeMap<&str, PathBuf>, mut progress: impl FnMut(&str)) -> Fallible<Outcome> {
    fs::create_dir_all(&s.out)?;
    let mut cfg = DeviceConfig::new(s.arch, s.grid);
    cfg.image = Some(s.out.join("device.img"));
    cfg.threads = s.threads;
    cfg.clock = s.clock.clone();
    let mut dev = Device::new(cfg)?;
    let tiles = dev.tiles();
    // The host's views of the device: mapped images, as a PCIe BAR would be. The program's
    // own traffic (inputs, outputs) and the profiler's are counted apart.
    let mem = MappedImage::open(dev.image_path())?;
    let profiler_mem = MappedImage::open(dev.image_path())?;
    for t in &tiles {
        launch::init_tile(&mem, 0, *t, s.arch, &s.settings)?;
    }
    // A sync window before the first op and one after the last: the clock fit puts every
    // device record on the host timeline the op log uses.
    let mut sync = ClockSync::new(emu_tiles(&dev), SYNC_SAMPLES);
    sync.window(&EmuClock::new(&mut dev))?;
    let consume = s.drain_every_cycles > 0;
    let mut drainer = Drainer::attach(&profiler_mem, DrainOptions { consume, attach_consumer: consume })?;
    let oplog = s.out.join("ops.jsonl");
    let mut log = OpLogWriter::create(&oplog)?;
    let images: Vec<(Risc, Vec<u8>, String)> = KERNELS
        .iter()
        .map(|(name, risc)| Ok((*risc, fs::read(&elfs[name])?, elfs[name].display().to_string())))
        .collect::<Fallible<_>>()?;
    let mut instructions = Vec::new();
    for (i, spec) in s.ops.iter().enumerate() {
        let run_id = i as u32 + 1;
        for t in &tiles {
            ops::stage(&mem, *t, spec, run_id)?;
            launch::set_run_id(&mem, 0, *t, run_id)?;
            for (risc, elf, name) in &images {
                dev.load_kernel(0, *t, *risc, elf, name)?;
            }
        }
        // Host times are the emulator's virtual host clock, the one its clock model relates
        // the device counters to (a real host would use its monotonic clock).
        let start = dev.host_time_ns() as u64;
        let mut drain_error = None;
        let summary = if consume {
            dev.run_with_hook(s.drain_every_cycles, &mut |_| {
                if drain_error.is_none() {
                    drain_error = drainer.drain().err();
                }
            })?
        } else {
            dev.run()?
        };
        let end = dev.host_time_ns() as u64;
        if let Some(e) = drain_error {
            return Err(e.into());
        }
        for t in &tiles {
            if let Some(mismatch) = ops::check(&mem, *t, spec, run_id)? {
                return Err(mismatch.into());
            }
        }
        instructions.push(summary.instructions());
        progress(&format!(
            "op {run_id}: {:<10} {} tiles x {} cores, {:.1} M instructions, output checked",
            spec.op.name(),
            spec.tiles,
            tiles.len(),
            summary.instructions() as f64 / 1e6,
        ));
        log.op(&op_record(spec, run_id, &tiles, (start, end), elfs, &s.out))?;
    }
    drainer.drain()?;
    sync.window(&EmuClock::new(&mut dev))?;
    let clock = sync.fit(s.arch, dev.config().chips, &FitOptions::default())?;
    let sync_samples = sync.samples().to_vec();
    Ok(Outcome { readout: drainer.finish()?, clock, sync_samples, oplog, image: dev.image_path().to_path_buf(), tiles, instructions })
}

/// Saves what a readout needs (control blocks and rings of every tile) with the clock-sync
/// samples, so `ttprof report --device <path>` reproduces the aligned outputs offline.
pub fn save_snapshot(outcome: &Outcome, path: &Path) -> Fallible<()> {
    let mem = MappedImage::open_read_only(&outcome.image)?;
    let snap = Snapshot::like(&mem)?;
    for region in [profiler::control_region(), profiler::rings_region()] {
        snap.capture_region(&mem, region.start, region.size)?;
    }
    snap.add_sync_samples(&outcome.sync_samples)?;
    snap.save(path)?;
    Ok(())
}
