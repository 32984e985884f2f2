//! Launching the `bench` kernel (examples/kernels/src/bin/bench.rs) on one BRISC: used by
//! `runtime-bench` (the cost of a zone) and by the full-ring tests.

use crate::scenario::Fallible;
use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, Risc};
use std::path::Path;
use ttprof::devmem::{DeviceMemory, EmuMemory, MappedImage};
use ttprof::launch::{self, Policy, Settings};
use ttprof::readout::{DrainOptions, Drainer, Readout};
use ttprof::session::Backend;
use ttprof::stamp::Stamps;
use ttprof_emu::{Device, DeviceConfig};

/// Two nested short zones per iteration around `work` loop steps each.
pub const DENSE: u32 = 1;
/// Per iteration a gap of `work * 64` cycles, then a zone of `work * 256` cycles.
pub const OP_LEVEL: u32 = 2;
/// As [`DENSE`], with the block form of `zone!`.
pub const DENSE_BLOCK: u32 = 3;
/// [`DENSE`]'s loop without zones, the inner zone's work between two wall-clock reads whose
/// spans the kernel sums into [`Launched::result`] (run it on the plain build).
pub const DENSE_TIMED: u32 = 4;
/// One record of [`BenchRun::record`]'s kind per iteration, then 4 loop steps (the
/// `records` kernel, examples/kernels/src/bin/records.rs).
pub const RECORD_LOOP: u32 = 5;
/// Eight records of [`BenchRun::record`]'s kind from eight sites back to back (straight-line
/// code) per iteration, then 4 loop steps (the `records` kernel).
pub const RECORD_STRAIGHT: u32 = 6;

/// The record kinds of [`RECORD_LOOP`] and [`RECORD_STRAIGHT`] (the bench kernel's `kind`
/// module), with the names `runtime-bench` reports them by.
pub const RECORD_KINDS: [(u32, &str); 9] = [
    (1, "zone"),
    (2, "value_zone"),
    (3, "event"),
    (4, "data32"),
    (5, "data64"),
    (6, "signal"),
    (7, "sum_zone"),
    (8, "wait"),
    (9, "counted_zone"),
];

/// One launch of the bench kernel.
#[derive(Clone, Debug)]
pub struct BenchRun {
    /// What the kernel does per iteration: [`DENSE`], [`OP_LEVEL`], [`DENSE_BLOCK`],
    /// [`DENSE_TIMED`], [`RECORD_LOOP`] or [`RECORD_STRAIGHT`].
    pub mode: u32,
    /// The record kind of [`RECORD_LOOP`] and [`RECORD_STRAIGHT`] ([`RECORD_KINDS`]); 0 otherwise.
    pub record: u32,
    /// Iterations of the kernel's loop.
    pub iterations: u32,
    /// Loop steps of work per zone (the mode says how they are spent).
    pub work: u32,
    /// Whether the runtime records (false sets the tile's `CONTROL_DISABLE` bit).
    pub recording: bool,
    /// What the core does when its ring is full.
    pub policy: Policy,
    /// Drain the ring this often (simulated cycles); `None`: no consumer while it runs.
    pub drain_every: Option<u64>,
}

/// What one launch did.
pub struct Launched {
    /// Instructions the BRISC retired.
    pub instructions: u64,
    /// The BRISC's cycles from reset to halt (the emulator's pipeline model for the arch).
    pub cycles: u64,
    /// Argument word 3 after the run ([`DENSE_TIMED`] leaves its summed spans there).
    pub result: u32,
    /// Bytes the producer wrote into the ring (`HEAD`), pads included.
    pub ring_bytes: u64,
    /// The ring's `STALLS`: waits for the consumer.
    pub stalls: u32,
    /// The ring's `DROPPED`: records lost to a full ring.
    pub dropped: u32,
    /// Everything read from the ring: during the run (if a consumer was attached) and after.
    pub readout: Readout,
}

/// Runs `elf` (the bench kernel, built for `arch`) once on a fresh 1x1 device of `arch`
/// whose image is in `dir`.
pub fn launch(arch: Arch, elf: &Path, run: &BenchRun, dir: &Path) -> Fallible<Launched> {
    launch_with(arch, elf, run, dir, Backend::Ring)
}

/// [`launch()`] for a kernel built for `backend`: with the timestamper, the host owns the
/// tile's timestamper, drains it with the ring and merges its zones into the readout.
pub fn launch_with(
    arch: Arch,
    elf: &Path,
    run: &BenchRun,
    dir: &Path,
    backend: Backend,
) -> Fallible<Launched> {
    std::fs::create_dir_all(dir)?;
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.image = Some(dir.join("bench.img"));
    let mut dev = Device::new(cfg)?;
    let tile = dev.tiles()[0];
    let mem = MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none())?;
    let consumer = run.drain_every.is_some();
    let settings = Settings {
        recording: run.recording,
        policy: run.policy,
        consumer,
    };
    launch::init_tile(&mem, 0, tile, arch, &settings)?;
    for (i, v) in [run.mode, run.iterations, run.work, 0, run.record]
        .into_iter()
        .enumerate()
    {
        mem.write_u32(0, tile, example_abi::ARGS + 4 * i as u32, v)?;
    }
    dev.load_kernel(
        0,
        tile,
        Risc::Brisc,
        &std::fs::read(elf)?,
        &elf.display().to_string(),
    )?;
    let profiler_mem = MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none())?;
    let mut drainer = Drainer::attach(
        &profiler_mem,
        DrainOptions {
            consume: true,
            attach_consumer: consumer,
        },
    )?;
    let mut stamps = match backend {
        Backend::Ring => None,
        Backend::Timestamper => {
            drainer.keep_payload();
            Some(Stamps::attach(&EmuMemory::new(&dev), arch, run.recording)?)
        }
    };
    let summary = match run.drain_every {
        Some(every) => {
            let mut err = None;
            let s = dev.run_with_hook(every, &mut |d| {
                if err.is_none() {
                    err = drainer.drain().err();
                }
                if let (None, Some(s)) = (&err, stamps.as_mut()) {
                    err = s.drain(&EmuMemory::new(d)).err();
                }
            })?;
            if let Some(e) = err {
                return Err(e.into());
            }
            s
        }
        None => dev.run()?,
    };
    drainer.drain()?;
    let readout = if let Some(mut stamps) = stamps {
        stamps.drain(&EmuMemory::new(&dev))?;
        let mut drained = drainer.take_payload();
        drainer.finish()?;
        let (records, issues, _) = stamps.finish();
        if let Some(i) = issues.first() {
            return Err(format!("timestamper: {i}").into());
        }
        ttprof::stamp::merged_readout(&mem, &mut drained, records)?
    } else {
        drainer.finish()?
    };
    let word = |off| mem.read_u32(0, tile, profiler::ring_word(Risc::Brisc, off));
    let hart = summary
        .hart(0, tile, Risc::Brisc)
        .ok_or("no BRISC in the run summary")?;
    Ok(Launched {
        instructions: hart.instructions,
        cycles: hart.cycles,
        result: mem.read_u32(0, tile, example_abi::ARGS + 12)?,
        ring_bytes: word(ring::HEAD)? as u64,
        stalls: word(ring::STALLS)?,
        dropped: word(ring::DROPPED)?,
        readout,
    })
}
