//! The demo's scenario: its kernels built, its ops' inputs written into DRAM and their
//! arguments into L1, launched through a [`ttprof::session::Session`] (which drains while
//! kernels run and writes every output), and their outputs read back from DRAM and checked.

use crate::ops::{self, OpSpec};
use crate::workspace;
use example_abi::Op as ExampleOp;
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use ttprof::kernels::{self, KernelBuild};
use ttprof::launch::Settings;
use ttprof::oplog::TensorDesc;
use ttprof::session::{Backend, Config, FinishedSession, Op, Session};
use ttprof_emu::{ChipClock, ClockModel, FreqStep, ReadLatency, TileOffsets};

/// Which kernel binary runs on which core.
pub const KERNELS: [(&str, Risc); 5] = [
    ("reader", Risc::Brisc),
    ("writer", Risc::Ncrisc),
    ("unpack", Risc::Trisc0),
    ("math", Risc::Trisc1),
    ("pack", Risc::Trisc2),
];

/// The op code tt-metal gives the device operation the example op stands for, and the
/// attribute that says which one it is, as tt-metal's op log writes them:
/// `ttnn.add`/`ttnn.multiply` are `BinaryNgDeviceOperation` (`binary_op_type`), `ttnn.relu`
/// a `UnaryDeviceOperation` (`op_chain`), `ttnn.matmul` a `MatmulDeviceOperation`.
/// tt-perf-report classifies ops by these codes (its `OPERATION_CATEGORIES`: `BinaryNg`,
/// `Unary` and `Matmul` with their `DeviceOperation` suffix are Compute ops).
pub fn tt_metal_op(op: ExampleOp) -> (&'static str, (&'static str, &'static str)) {
    match op {
        ExampleOp::Add => (
            "BinaryNgDeviceOperation",
            ("binary_op_type", "BinaryOpType::ADD"),
        ),
        ExampleOp::Mul => (
            "BinaryNgDeviceOperation",
            ("binary_op_type", "BinaryOpType::MUL"),
        ),
        ExampleOp::Relu => (
            "UnaryDeviceOperation",
            ("op_chain", "{UnaryWithParam(op_type=UnaryOpType::RELU)}"),
        ),
        ExampleOp::Matmul => (
            "MatmulDeviceOperation",
            (
                "program_config",
                "batched 32x32 tiles, one per core at a time",
            ),
        ),
    }
}

/// The op's tensors as tt-metal describes them ([W, Z, Y, X]; layout, type and memory as
/// [`ops::tensors`] gives them): every core streams `spec.tiles` 32x32 tiles of each
/// operand. An eltwise op's operands and result are `[1, 1, 32 * tiles * cores, 32]`; the
/// matmul multiplies tile by tile (tile t of in0 by tile t of in1), a batched matmul of
/// `tiles * cores` 32x32 by 32x32 products: its operands and result are
/// `[1, tiles * cores, 32, 32]` (M = K = N = 32), so tt-perf-report reads
/// `b={batch} x 32 x 32 x 32` and the FLOPs the kernels do.
pub fn tensors(spec: &OpSpec, cores: usize) -> (Vec<TensorDesc>, Vec<TensorDesc>) {
    let (mut inputs, mut outputs) = ops::tensors(spec, cores);
    if spec.op == ExampleOp::Matmul {
        for t in inputs.iter_mut().chain(outputs.iter_mut()) {
            t.shape = [1, spec.tiles * cores as u32, 32, 32];
        }
    }
    (inputs, outputs)
}

/// Where an operand of an op comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// Fresh values the host writes into DRAM (deterministic per run id and tile).
    Host,
    /// The output of the op at this index of the sequence, as that op wrote it (read back
    /// from DRAM, checked, and written into this op's input buffer).
    Op(usize),
}

/// The demo's dataflow: each op's operands (one, two for a binary op). An operand is the
/// output of the latest earlier op of the same size that this op does not read already;
/// without one, fresh host values. The default sequence (Add, Matmul, Relu, Mul) is so
/// Add -> Relu -> Mul with Add's output also Mul's second operand, and the Matmul (half the
/// tiles) on inputs of its own: a graph with a diamond and an independent op. A sequence
/// repeated (the demo's `--repeat`) starts over at each repetition of its first op: that op
/// and the ones after it read nothing from before it, so values stay in range.
pub fn wiring(ops: &[OpSpec]) -> Vec<Vec<Operand>> {
    let mut out = Vec::with_capacity(ops.len());
    let mut block = 0;
    for (i, spec) in ops.iter().enumerate() {
        if i > 0 && spec.op == ops[0].op && spec.tiles == ops[0].tiles {
            block = i;
        }
        let mut earlier = (block..i).rev().filter(|&j| ops[j].tiles == spec.tiles);
        let arity = if spec.op.is_binary() { 2 } else { 1 };
        out.push(
            (0..arity)
                .map(|_| earlier.next().map_or(Operand::Host, Operand::Op))
                .collect(),
        );
    }
    out
}

/// Tensor ids (ttnn's `tensor_id`) of each op's operands and output under `wiring`: ids are
/// handed out in launch order, a host operand's before its op's output; an operand that is
/// an earlier op's output has that output's id.
pub fn tensor_ids(wiring: &[Vec<Operand>]) -> Vec<(Vec<u64>, u64)> {
    let mut next = 0u64;
    let mut ids: Vec<(Vec<u64>, u64)> = Vec::with_capacity(wiring.len());
    for operands in wiring {
        let inputs = operands
            .iter()
            .map(|o| match o {
                Operand::Op(j) => ids[*j].1,
                Operand::Host => {
                    next += 1;
                    next
                }
            })
            .collect();
        next += 1;
        ids.push((inputs, next));
    }
    ids
}

/// Clock-sync samples per tile and window (tt-metal takes 100).
const SYNC_SAMPLES: usize = 100;

/// The demo's result: any error, boxed.
pub type Fallible<T> = Result<T, Box<dyn Error>>;

/// What to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The chip architecture to emulate.
    pub arch: Arch,
    /// Worker tiles, `(columns, rows)` from logical (0,0).
    pub grid: (u8, u8),
    /// The ops, in launch order.
    pub ops: Vec<OpSpec>,
    /// Where the device image, op log and kernel copies go.
    pub out: PathBuf,
    /// Emulator host threads (0: all cores).
    pub threads: usize,
    /// The consumer drains every ring this often (simulated cycles of every tile); 0: never
    /// while kernels run (everything is read after the last op).
    pub drain_every_cycles: u64,
    /// Recording, full-ring policy and consumer switches of the session.
    pub settings: Settings,
    /// The emulated chip's clocks and the host's read latency.
    pub clock: ClockModel,
    /// Line-level cycles (`--lines`, [`ttprof::lines`]).
    pub lines: bool,
    /// Where the kernels record zones (they must be built for it: [`build_kernels_for`]).
    pub backend: Backend,
    /// Sample the line profile through the daisychains every `N` cycles (`--sample N`,
    /// [`ttprof::lines::sample`]).
    pub sample: Option<ttprof::lines::sample::SampleConfig>,
}

/// A chip whose clock is not the nominal one, as real parts are: AICLK 1.5 % slow (0.985
/// GHz seen on a 1 GHz part), a little drift, per-tile offsets, and host reads taking
/// 1 us +- 0.5 us. The clock fit has to find all of it.
pub fn realistic_clock(arch: Arch) -> ClockModel {
    ClockModel {
        chips: vec![ChipClock {
            true_mhz: Some(arch.aiclk_mhz() as f64 * 0.985),
            drift_ppm_per_s: 0.2,
            reset_host_ns: 0.0,
        }],
        tile_offsets: TileOffsets::Seeded {
            max_cycles: 5_000,
            seed: 7,
        },
        host_read: ReadLatency::uniform(1000.0, 500.0, 11),
        ..ClockModel::nominal()
    }
}

/// When the ops start, in virtual host ns from the chip's reset: after the first clock-sync
/// window (100 rounds 500 us apart, plus its reads). `--dvfs` times count from here.
pub const OPS_START_NS: f64 = 49.5e6;

/// With a DVFS schedule the session drains this often (cycles) and samples the clock every
/// [`DVFS_SAMPLE_NS`]: the demo's ops last about 0.1 ms (with the math on the Tensix
/// coprocessor), so the steps need dense samples to be seen.
pub const DVFS_DRAIN_CYCLES: u64 = 500;
/// With a DVFS schedule, the session samples the clock this often (ns).
pub const DVFS_SAMPLE_NS: u64 = 500;

/// The named DVFS schedule `default`: down to 80 % of the nominal AICLK 25 us into the
/// ops, up to 110 % at 60 us, back to nominal at 95 us, all while the demo's four ops run
/// (the arch's range scaled: Blackhole 1350 -> 1080 -> 1485 -> 1350 MHz).
pub fn default_dvfs(arch: Arch) -> Vec<FreqStep> {
    let n = arch.aiclk_mhz() as f64;
    [(25e3, 0.8), (60e3, 1.1), (95e3, 1.0)]
        .iter()
        .map(|&(at, f)| FreqStep {
            at_host_ns: OPS_START_NS + at,
            mhz: n * f,
        })
        .collect()
}

/// A `--dvfs` argument: `default`, or `MHZ@TIME,...` with times from [`OPS_START_NS`].
pub fn parse_dvfs(arch: Arch, text: &str) -> Result<Vec<FreqStep>, String> {
    if text == "default" {
        return Ok(default_dvfs(arch));
    }
    ttprof_emu::parse_schedule(text, OPS_START_NS)
}

/// Builds the example kernels for `arch` and copies the pipeline's five ELFs into `dir`.
pub fn build_kernels(arch: Arch, dir: &Path) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    build_kernels_for(arch, Backend::Ring, dir)
}

/// [`build_kernels`] for a recording backend (the timestamper's is the kernels' feature
/// `timestamper`).
pub fn build_kernels_for(
    arch: Arch,
    backend: Backend,
    dir: &Path,
) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    let names: Vec<&'static str> = KERNELS.iter().map(|k| k.0).collect();
    let features: &[&str] = match backend {
        Backend::Ring => &[],
        Backend::Timestamper => &["timestamper"],
    };
    build_kernel_features(arch, true, features, &names, dir)
}

/// Builds the example kernel crate for `arch` with or without its `profile` feature and
/// copies the named ELFs into `dir` (builds with other features reuse cargo's output paths).
pub fn build_kernel_set(
    arch: Arch,
    profile: bool,
    names: &[&'static str],
    dir: &Path,
) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    build_kernel_features(arch, profile, &[], names, dir)
}

/// [`build_kernel_set`] with the kernel crate's `features` enabled.
pub fn build_kernel_features(
    arch: Arch,
    profile: bool,
    features: &[&str],
    names: &[&'static str],
    dir: &Path,
) -> Fallible<BTreeMap<&'static str, PathBuf>> {
    // Cargo writes every feature set's ELFs to the same paths: build and copy under a lock
    // (tests build concurrently), in one target directory per arch.
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let ws = workspace();
    let built = kernels::build(&KernelBuild {
        crate_dir: ws.join("examples/kernels"),
        arch,
        target_dir: crate::target_root().join("kernels").join(arch.name()),
        features: features.iter().map(|f| f.to_string()).collect(),
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

/// Runs every op of `s` with the kernels in `elfs` through a [`Session`], checking each op's
/// output (every tile's slice of it, read back from DRAM); an op's operands are earlier ops'
/// outputs as [`wiring`] says, and the op log names every tensor by the id [`tensor_ids`]
/// gives it (so the op graph shows the dataflow). The session writes every output file into
/// `s.out`.
pub fn run(
    s: &Scenario,
    elfs: &BTreeMap<&str, PathBuf>,
    mut progress: impl FnMut(&str),
) -> Fallible<FinishedSession> {
    let mut cfg = Config::new(s.arch, s.grid, &s.out);
    cfg.threads = s.threads;
    cfg.drain_every_cycles = s.drain_every_cycles;
    cfg.settings = s.settings;
    cfg.clock = s.clock.clone();
    cfg.sync_samples = SYNC_SAMPLES;
    cfg.lines = s.lines;
    cfg.backend = s.backend;
    cfg.sample = s.sample;
    if s.clock.dvfs.iter().any(|steps| !steps.is_empty()) {
        cfg.sample_every_ns = DVFS_SAMPLE_NS;
        if cfg.drain_every_cycles > 0 {
            cfg.drain_every_cycles = cfg.drain_every_cycles.min(DVFS_DRAIN_CYCLES);
        }
    }
    let mut session = Session::start(cfg)?;
    let tiles = session.tiles().to_vec();
    for spec in &s.ops {
        ops::check_shape(spec, tiles.len())?;
    }
    let wiring = wiring(&s.ops);
    let ids = tensor_ids(&wiring);
    // Each op's checked output, kept while a later op may read it.
    let mut outputs: Vec<Option<Vec<u16>>> = vec![None; s.ops.len()];
    for (i, spec) in s.ops.iter().enumerate() {
        let run_id = session.next_run_id();
        let fresh = ops::inputs(spec, &tiles, run_id);
        let mut operands = Vec::new();
        for (k, source) in wiring[i].iter().enumerate() {
            operands.push(match source {
                Operand::Host => {
                    if k == 0 {
                        fresh.0.clone()
                    } else {
                        fresh.1.clone()
                    }
                }
                Operand::Op(j) => outputs[*j]
                    .clone()
                    .ok_or("internal: an operand from an op not run")?,
            });
        }
        let (a, b) = (&operands[0], operands.get(1).unwrap_or(&fresh.1));
        ops::fill_dram(&mut session, spec, a, b)?;
        for (core, t) in tiles.iter().enumerate() {
            ops::stage(session.memory(), *t, core as u32, spec)?;
        }
        let (code, what) = tt_metal_op(spec.op);
        // The Matrix Unit multiplies with fidelity phase 0 only (example_abi::bf16).
        let mut op = Op::new(code)
            .attribute("tiles_per_core", spec.tiles)
            .attribute("math_fidelity", "LoFi")
            .attribute(what.0, what.1);
        (op.inputs, op.outputs) = tensors(spec, tiles.len());
        for (t, id) in op.inputs.iter_mut().zip(&ids[i].0) {
            t.id = Some(*id);
        }
        for t in &mut op.outputs {
            t.id = Some(ids[i].1);
        }
        for (name, risc) in KERNELS {
            op = op.kernel(risc, &elfs[name]);
        }
        let launched = session.launch(&op)?;
        outputs[i] = Some(ops::check(&session, spec, &tiles, a, b)??);
        if wiring[i + 1..]
            .iter()
            .flatten()
            .all(|o| *o != Operand::Op(i))
        {
            outputs[i] = None;
        }
        progress(&format!(
            "op {run_id}: {:<10} {} tiles x {} cores, {:.1} M instructions, output checked",
            spec.op.name(),
            spec.tiles,
            tiles.len(),
            launched.instructions as f64 / 1e6,
        ));
    }
    Ok(session.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sequence_is_a_diamond_beside_an_independent_matmul() {
        let w = wiring(&ops::sequence(4));
        assert_eq!(
            w,
            [
                vec![Operand::Host, Operand::Host],
                vec![Operand::Host, Operand::Host],
                vec![Operand::Op(0)],
                vec![Operand::Op(2), Operand::Op(0)],
            ]
        );
        // Add reads tensors 1, 2 and writes 3; the Matmul 4, 5 -> 6; Relu 3 -> 7; Mul 7, 3 -> 8.
        assert_eq!(
            tensor_ids(&w),
            [
                (vec![1, 2], 3),
                (vec![4, 5], 6),
                (vec![3], 7),
                (vec![7, 3], 8)
            ]
        );
        // One tile per core: the Matmul has Add's size and reads Add's output.
        let w = wiring(&ops::sequence(1));
        assert_eq!(w[1], [Operand::Op(0), Operand::Host]);
        assert_eq!(w[3], [Operand::Op(2), Operand::Op(1)]);
    }

    #[test]
    fn a_repeated_sequence_starts_over_at_each_repetition() {
        let w = wiring(&ops::sequence(4).repeat(2));
        let once = wiring(&ops::sequence(4));
        let shifted: Vec<Vec<Operand>> = once
            .iter()
            .map(|ops| {
                ops.iter()
                    .map(|o| match o {
                        Operand::Op(j) => Operand::Op(j + 4),
                        Operand::Host => Operand::Host,
                    })
                    .collect()
            })
            .collect();
        assert_eq!(w[..4], once[..]);
        assert_eq!(w[4..], shifted[..], "the second Add reads fresh inputs");
    }
}
