//! One demo session: build, launch every op with a consumer draining while kernels run,
//! check outputs, then read out and write the files.

use crate::ops::{self, OpSpec};
use crate::{workspace, Args};
use riscv_linker::{NocCoord, Risc};
use std::collections::BTreeMap;
use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use ttprof::devmem::MappedImage;
use ttprof::kernels::{self, KernelBuild};
use ttprof::launch::{self, Settings};
use ttprof::oplog::{KernelBinding, OpLog, OpLogWriter, OpRecord};
use ttprof::readout::{DrainOptions, Drainer, Readout};
use ttprof::resolve::{Resolution, Resolver};
use ttprof::{csv, summary};
use ttprof_emu::{Device, DeviceConfig};

/// Which kernel binary runs on which core.
pub const KERNELS: [(&str, Risc); 5] = [
    ("reader", Risc::Brisc),
    ("writer", Risc::Ncrisc),
    ("unpack", Risc::Trisc0),
    ("math", Risc::Trisc1),
    ("pack", Risc::Trisc2),
];

/// The consumer drains every ring this often (simulated cycles of every tile).
const DRAIN_EVERY_CYCLES: u64 = 250_000;

type Fallible<T> = Result<T, Box<dyn Error>>;

/// Builds the example kernels and copies their ELFs into `dir`.
fn build_kernels(args: &Args, dir: &Path) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    let ws = workspace();
    eprintln!("building the example kernels for {} (the first build also compiles `core`)...", args.arch);
    let built = kernels::build(&KernelBuild {
        crate_dir: ws.join("examples/kernels"),
        arch: args.arch,
        target_dir: ws.join("target/kernels"),
        features: vec![],
        no_default_features: false,
    })?;
    fs::create_dir_all(dir)?;
    let mut elfs = BTreeMap::new();
    for (name, _) in KERNELS {
        let to = dir.join(name);
        fs::copy(built.elf(name)?, &to)?;
        elfs.insert(name, to);
    }
    Ok(elfs)
}

fn op_record(spec: &OpSpec, run_id: u32, tiles: &[NocCoord], host: (u64, u64)) -> OpRecord {
    let (inputs, outputs) = ops::tensors(spec, tiles.len());
    let mut attributes = serde_json::Map::new();
    attributes.insert("tiles_per_core".into(), spec.tiles.into());
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
                elf: PathBuf::from("kernels").join(name),
                cores: tiles.iter().map(|t| [t.x, t.y]).collect(),
            })
            .collect(),
    }
}

/// Runs every op; returns the readout of everything the consumer drained.
fn launch_ops(args: &Args, out: &Path, elfs: &BTreeMap<&str, PathBuf>) -> Fallible<Readout> {
    let mut cfg = DeviceConfig::new(args.arch, args.grid);
    cfg.image = Some(out.join("device.img"));
    cfg.threads = args.threads;
    let mut dev = Device::new(cfg)?;
    let tiles = dev.tiles();
    // The host's views of the device: mapped images, as a PCIe BAR would be. The program's
    // own traffic (inputs, outputs) and the profiler's are counted apart.
    let mem = MappedImage::open(dev.image_path())?;
    let profiler_mem = MappedImage::open(dev.image_path())?;
    let settings = Settings { consumer: true, ..Settings::default() };
    for t in &tiles {
        launch::init_tile(&mem, 0, *t, args.arch, &settings)?;
    }
    let mut drainer = Drainer::attach(&profiler_mem, DrainOptions { consume: true, attach_consumer: true })?;
    let mut log = OpLogWriter::create(&out.join("ops.jsonl"))?;
    let images: Vec<(Risc, Vec<u8>, String)> = KERNELS
        .iter()
        .map(|(name, risc)| Ok((*risc, fs::read(&elfs[name])?, elfs[name].display().to_string())))
        .collect::<Fallible<_>>()?;
    for (i, spec) in ops::sequence(args.tiles).iter().enumerate() {
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
        let summary = dev.run_with_hook(DRAIN_EVERY_CYCLES, &mut |_| {
            if drain_error.is_none() {
                drain_error = drainer.drain().err();
            }
        })?;
        let end = dev.host_time_ns() as u64;
        if let Some(e) = drain_error {
            return Err(e.into());
        }
        for t in &tiles {
            if let Some(mismatch) = ops::check(&mem, *t, spec, run_id)? {
                return Err(mismatch.into());
            }
        }
        eprintln!(
            "op {run_id}: {:<10} {} tiles x {} cores, {:.1} M instructions, output checked",
            spec.op.name(),
            spec.tiles,
            tiles.len(),
            summary.instructions() as f64 / 1e6,
        );
        log.op(&op_record(spec, run_id, &tiles, (start, end)))?;
    }
    drainer.drain()?;
    Ok(drainer.finish()?)
}

fn report(readout: &Readout, res: &Resolution, mhz: u32) {
    let stats = summary::zones(readout, res);
    println!("{}", summary::table(&stats, mhz));
    let dropped: u64 = readout.rings.iter().map(|r| r.dropped as u64).sum();
    let stalls: u64 = readout.rings.iter().map(|r| r.stalls as u64).sum();
    println!(
        "{} records from {} rings ({} zones), {} dropped, {} consumer waits; {:.3} bus bytes per payload byte",
        readout.records(),
        readout.rings.len(),
        readout.zones(),
        dropped,
        stalls,
        readout.bus_bytes_per_payload_byte().unwrap_or(0.0),
    );
    for issue in readout.issues.iter().chain(&res.issues) {
        eprintln!("{issue}");
    }
}

pub fn run(args: &Args) -> Fallible<()> {
    let out = args.out.clone().unwrap_or_else(|| workspace().join("target/ttprof-demo"));
    fs::create_dir_all(&out)?;
    let elfs = build_kernels(args, &out.join("kernels"))?;
    let readout = launch_ops(args, &out, &elfs)?;
    let oplog = OpLog::read(&out.join("ops.jsonl"))?;
    let res = Resolver::new(&oplog).resolve(&readout);
    let csv_path = out.join("profile_log_device.csv");
    csv::write_file(&csv_path, &readout, &res)?;
    report(&readout, &res, args.arch.aiclk_mhz());
    println!("\nwrote:");
    for p in [&csv_path, &out.join("ops.jsonl"), &out.join("device.img"), &out.join("kernels")] {
        println!("  {}", p.display());
    }
    if readout.has_errors() || res.issues.iter().any(|i| i.is_error()) {
        return Err("the readout reported errors (see above)".into());
    }
    Ok(())
}
