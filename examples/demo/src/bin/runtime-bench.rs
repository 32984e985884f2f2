//! Issue 4's benchmark: what a zone costs on the device, measured exactly on the emulator.
//!
//! The `bench` kernel (examples/kernels/src/bin/bench.rs) runs on one BRISC, built with and
//! without the runtime's `profile` feature, each at two iteration counts. The emulator
//! counts instructions exactly and the ring's `HEAD` counts every byte written (pads
//! included), so differences give the *marginal* cost of one zone with everything a zone
//! really costs (hot path, amortised slow paths, ring wraps) and nothing it does not (the
//! launch's fixed wrapper records cancel out):
//!
//! * `zone_instructions` = (dI_profile - dI_plain) / dZones in the dense mode (two nested
//!   short zones per iteration around a few loop steps);
//! * `zone_bytes_dense` = dHEAD / dZones in the dense mode;
//! * `zone_bytes_oplevel` = dHEAD / dZones in the op-level mode (64k-cycle gaps, 256k-cycle zones);
//! * `zone_instructions_off`: the same with recording switched off at run time.
//!
//! A consumer drains the ring while the kernel runs, so nothing stalls; the benchmark
//! checks that no zone was dropped or waited for. Writes `target/bench/runtime.json`.

use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::Path;
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::launch::{self, Settings};
use ttprof::readout::{DrainOptions, Drainer};
use ttprof_demo::scenario::{build_kernel_set, Fallible};
use ttprof_demo::workspace;
use ttprof_emu::{Device, DeviceConfig};

const DENSE: u32 = 1;
const OP_LEVEL: u32 = 2;

/// What one launch of the bench kernel did.
#[derive(Clone, Copy, Debug)]
struct Launch {
    instructions: u64,
    ring_bytes: u64,
    zones: u64,
    stalls: u32,
    dropped: u32,
}

fn launch(elf: &Path, mode: u32, iterations: u32, work: u32, recording: bool, out: &Path) -> Fallible<Launch> {
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (1, 1));
    cfg.image = Some(out.join("bench.img"));
    let mut dev = Device::new(cfg)?;
    let tile = dev.tiles()[0];
    let mem = MappedImage::open(dev.image_path())?;
    let settings = Settings { recording, consumer: true, ..Settings::default() };
    launch::init_tile(&mem, 0, tile, Arch::WormholeB0, &settings)?;
    let args = example_abi::ARGS;
    for (i, v) in [mode, iterations, work].into_iter().enumerate() {
        mem.write_u32(0, tile, args + 4 * i as u32, v)?;
    }
    dev.load_kernel(0, tile, Risc::Brisc, &std::fs::read(elf)?, &elf.display().to_string())?;
    let consumer = MappedImage::open(dev.image_path())?;
    let mut drainer = Drainer::attach(&consumer, DrainOptions { consume: true, attach_consumer: true })?;
    let mut err = None;
    let summary = dev.run_with_hook(2_000, &mut |_| {
        if err.is_none() {
            err = drainer.drain().err();
        }
    })?;
    if let Some(e) = err {
        return Err(e.into());
    }
    drainer.drain()?;
    let readout = drainer.finish()?;
    let word = |off| mem.read_u32(0, tile, profiler::ring_word(Risc::Brisc, off));
    let hart = summary.hart(0, tile, Risc::Brisc).ok_or("no BRISC in the run summary")?;
    Ok(Launch {
        instructions: hart.instructions,
        ring_bytes: word(ring::HEAD)? as u64,
        zones: readout.zones() as u64,
        stalls: word(ring::STALLS)?,
        dropped: word(ring::DROPPED)?,
    })
}

/// Marginal per-zone cost between two iteration counts.
struct Marginal {
    instructions: f64,
    bytes: f64,
}

fn marginal(elf: &Path, plain: Option<&Path>, mode: u32, n: (u32, u32), work: u32, zones_per_iter: u32, recording: bool, out: &Path) -> Fallible<Marginal> {
    let a = launch(elf, mode, n.0, work, recording, out)?;
    let b = launch(elf, mode, n.1, work, recording, out)?;
    for l in [a, b] {
        if l.stalls != 0 || l.dropped != 0 {
            return Err(format!("the benchmark run stalled {} times and dropped {} records", l.stalls, l.dropped).into());
        }
    }
    let dz = ((n.1 - n.0) * zones_per_iter) as f64;
    if recording && (b.zones - a.zones) as f64 != dz {
        return Err(format!("expected {dz} more zones, read {}", b.zones - a.zones).into());
    }
    let mut di = (b.instructions - a.instructions) as f64;
    if let Some(plain) = plain {
        let (pa, pb) = (launch(plain, mode, n.0, work, recording, out)?, launch(plain, mode, n.1, work, recording, out)?);
        di -= (pb.instructions - pa.instructions) as f64;
    }
    Ok(Marginal { instructions: di / dz, bytes: (b.ring_bytes - a.ring_bytes) as f64 / dz })
}

fn main() -> Fallible<()> {
    let ws = workspace();
    let out = ws.join("target/bench");
    std::fs::create_dir_all(&out)?;
    eprintln!("building the bench kernel with and without `profile`...");
    let on = build_kernel_set(Arch::WormholeB0, true, &["bench"], &out.join("kernels-profile"))?;
    let off = build_kernel_set(Arch::WormholeB0, false, &["bench"], &out.join("kernels-plain"))?;
    let (on, off) = (&on["bench"], &off["bench"]);

    let dense = marginal(on, Some(off), DENSE, (2_000, 6_000), 4, 2, true, &out)?;
    let dense_off = marginal(on, Some(off), DENSE, (2_000, 6_000), 4, 2, false, &out)?;
    let op_level = marginal(on, None, OP_LEVEL, (10, 30), 1_000, 1, true, &out)?;

    println!("ttprof zone cost (marginal, measured on the emulator; Wormhole B0 BRISC)");
    println!("{:<44} {:>10} {:>12}", "", "measured", "target");
    println!("{:<44} {:>10.2} {:>12}", "instructions per zone (dense, open+close)", dense.instructions, "<= 16");
    println!("{:<44} {:>10.2} {:>12}", "ring bytes per zone (dense)", dense.bytes, "<= 6");
    println!("{:<44} {:>10.2} {:>12}", "ring bytes per zone (op-level)", op_level.bytes, "<= 12");
    println!("{:<44} {:>10.2} {:>12}", "instructions per zone, recording off", dense_off.instructions, "load+branch");
    println!("tt-metal 2026 streaming profiler: 45-51 cycles and ~9.8 ring bytes per zone");

    let json = serde_json::json!({
        "zone_instructions": dense.instructions,
        "zone_bytes_dense": dense.bytes,
        "zone_bytes_oplevel": op_level.bytes,
        "zone_instructions_recording_off": dense_off.instructions,
        "method": "marginal per zone between 2000 and 6000 iterations (dense, 2 nested zones each) or 10 and 30 (op-level), profile build minus plain build, emulator instruction counts and ring HEAD bytes",
    });
    let path = out.join("runtime.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)? + "\n")?;
    println!("wrote {}", path.display());
    let _ = NocCoord::new(0, 0);
    Ok(())
}
