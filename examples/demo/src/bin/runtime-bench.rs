//! What a zone costs on the device, measured on the emulator, per arch.
//!
//! The `bench` kernel (examples/kernels/src/bin/bench.rs) runs on one BRISC, built for
//! Wormhole B0 and for Blackhole, each with and without the runtime's `profile` feature (and
//! with its `timestamper` feature), each at two iteration counts, in several modes (dense,
//! isolated and op-level zones, recording off, the block form). Differences give the
//! *marginal* cost of one zone: (dX_profile - dX_plain) / dZones, X = the BRISC's cycles
//! from reset to halt on the emulator's pipeline model, its instructions, or the ring's
//! `HEAD` bytes. They are printed beside the published producer costs on hardware. Every
//! other record kind is measured the same way on the `records` kernel
//! (examples/kernels/src/bin/records.rs).
//!
//! A consumer drains the ring while the kernel runs, so nothing stalls; the benchmark
//! checks that no zone was dropped or waited for. Writes `target/bench/runtime.json`.
//!
//! See docs/design/zone-cost.md for every key of that file, what each mode measures and
//! the figures.
#![warn(missing_docs)]

use riscv_linker::Arch;
use riscv_linker::Risc;
use std::path::{Path, PathBuf};
use ttprof::decode::RecordKind;
use ttprof::elf::KernelElf;
use ttprof::kernels::{self, CKernelBuild};
use ttprof::launch::Policy;
use ttprof::session::Backend;
use ttprof_demo::bench::{
    launch_with, BenchRun, Launched, DENSE, DENSE_BLOCK, DENSE_TIMED, OP_LEVEL, RECORD_KINDS,
    RECORD_LOOP, RECORD_STRAIGHT,
};
use ttprof_demo::scenario::{build_kernel_features, build_kernel_set, Fallible};
use ttprof_demo::{target_root, workspace};

/// Marginal per-zone cost between two iteration counts.
#[derive(Clone, Copy)]
struct Marginal {
    instructions: f64,
    cycles: f64,
    bytes: f64,
}

/// The bench kernel built for one arch, with and without `profile` (`on` for `backend`).
struct Kernels {
    arch: Arch,
    on: PathBuf,
    off: PathBuf,
    out: PathBuf,
    backend: Backend,
}

impl Kernels {
    fn run(&self, elf: &Path, run: &BenchRun) -> Fallible<Launched> {
        launch_with(self.arch, elf, run, &self.out, self.backend)
    }
}

/// `base` run at `n.0` and `n.1` iterations of `zones_per_iter` zones each, of the profile
/// build minus the plain build.
fn marginal(
    k: &Kernels,
    base: &BenchRun,
    n: (u32, u32),
    zones_per_iter: u32,
) -> Fallible<Marginal> {
    let run = |elf: &Path, iterations| {
        k.run(
            elf,
            &BenchRun {
                iterations,
                ..base.clone()
            },
        )
    };
    let (a, b) = (run(&k.on, n.0)?, run(&k.on, n.1)?);
    for l in [&a, &b] {
        if l.stalls != 0 || l.dropped != 0 {
            return Err(format!(
                "the benchmark run (mode {}, record {}, {} rings) stalled {} times and dropped {} records",
                base.mode, base.record, l.readout.rings().len(), l.stalls, l.dropped
            )
            .into());
        }
    }
    let dz = ((n.1 - n.0) * zones_per_iter) as f64;
    // Every record but a sum zone's (one total per launch) is a row of the readout.
    let rows = |l: &Launched| -> f64 {
        if base.mode == RECORD_LOOP || base.mode == RECORD_STRAIGHT {
            l.readout
                .rings()
                .iter()
                .map(|r| r.records.kind().len() as f64)
                .sum()
        } else {
            l.readout.zones() as f64
        }
    };
    let sums = base.record == SUM_ZONE_KIND;
    if base.recording && !sums && rows(&b) - rows(&a) != dz {
        return Err(format!(
            "mode {} record {}: expected {dz} more records, read {}",
            base.mode,
            base.record,
            rows(&b) - rows(&a)
        )
        .into());
    }
    let (pa, pb) = (run(&k.off, n.0)?, run(&k.off, n.1)?);
    let d = |a: u64, b: u64, pa: u64, pb: u64| ((b - a) as f64 - (pb - pa) as f64) / dz;
    Ok(Marginal {
        instructions: d(
            a.instructions,
            b.instructions,
            pa.instructions,
            pb.instructions,
        ),
        cycles: d(a.cycles, b.cycles, pa.cycles, pb.cycles),
        bytes: (b.ring_bytes - a.ring_bytes) as f64 / dz,
    })
}

/// The dense mode's inner zone: its mean recorded duration as read from the ring, and the
/// plain build's cycles for the same work between two bare wall-clock reads.
struct InnerDuration {
    recorded: f64,
    plain: f64,
}

fn inner_duration(k: &Kernels, work: u32, iterations: u32) -> Fallible<InnerDuration> {
    let run = |mode| BenchRun {
        mode,
        record: 0,
        iterations,
        work,
        recording: true,
        policy: Policy::Block,
        drain_every: Some(2_000),
    };
    let inner = KernelElf::load(&k.on, &ttprof::inputs::Inputs::none())?
        .sites
        .find("dense-inner")
        .ok_or("the bench kernel has no `dense-inner` site")?;
    let on = k.run(&k.on, &run(DENSE))?;
    let (mut n, mut sum) = (0u64, 0u64);
    for ring in on.readout.rings() {
        let r = &ring.records;
        for i in 0..r.kind().len() {
            if r.kind()[i] == RecordKind::Zone && r.site()[i] == inner {
                n += 1;
                sum += r.end_at(i) - r.start_at(i);
            }
        }
    }
    if n != iterations as u64 {
        return Err(format!("read {n} `dense-inner` zones, expected {iterations}").into());
    }
    let plain = k.run(&k.off, &run(DENSE_TIMED))?;
    Ok(InnerDuration {
        recorded: sum as f64 / n as f64,
        plain: plain.result as f64 / iterations as f64,
    })
}

/// Everything measured on one arch.
struct Figures {
    arch: Arch,
    dense: Marginal,
    by_work: Vec<(u32, Marginal)>,
    off: Marginal,
    op_level: Marginal,
    block: Marginal,
    block_off: Marginal,
    inner: InnerDuration,
    /// The timestamper backend (kernel feature `timestamper`): dense, isolated, recording
    /// off, op-level, and its inner zone's duration.
    ts_dense: Marginal,
    ts_isolated: Marginal,
    ts_off: Marginal,
    ts_op_level: Marginal,
    ts_inner: InnerDuration,
    /// Every record kind, in a loop and in straight-line code.
    records: Vec<RecordCost>,
    /// Code bytes of one zone site, Rust (`zone!`) and C++ (`TTPROF_ZONE`): [`site_code_bytes`].
    site_bytes: f64,
    cxx_site_bytes: f64,
}

impl Figures {
    fn isolated(&self) -> Marginal {
        self.by_work
            .iter()
            .find(|(w, _)| *w == ISOLATED_WORK)
            .unwrap()
            .1
    }
}

const ISOLATED_WORK: u32 = 64;
/// [`RECORD_KINDS`]' sum zone: its measurements add no row.
const SUM_ZONE_KIND: u32 = 7;
/// Iterations of the straight-line mode (eight records each).
const STRAIGHT_ITERATIONS: (u32, u32) = (500, 1_500);

/// One record kind's cost: in a loop (one record, 4 unrolled loop steps per iteration) and in
/// straight-line code (eight sites back to back per iteration).
struct RecordCost {
    name: &'static str,
    looped: Marginal,
    straight: Marginal,
}

/// Every kind of [`RECORD_KINDS`] on `k` (the `records` kernel).
fn record_costs(k: &Kernels) -> Fallible<Vec<RecordCost>> {
    let mut out = Vec::new();
    for (record, name) in RECORD_KINDS {
        // Records up to 14 bytes each, up to eight back to back: the 8 KiB ring is drained
        // often enough that the producer never waits (every 2,000 cycles it did, once).
        let run = |mode| BenchRun {
            mode,
            record,
            iterations: 0,
            work: 0,
            recording: true,
            policy: Policy::Block,
            drain_every: Some(500),
        };
        out.push(RecordCost {
            name,
            looped: marginal(k, &run(RECORD_LOOP), DENSE_ITERATIONS, 1)?,
            straight: marginal(k, &run(RECORD_STRAIGHT), STRAIGHT_ITERATIONS, 8)?,
        });
    }
    Ok(out)
}
const DENSE_ITERATIONS: (u32, u32) = (2_000, 6_000);

/// Bytes of `.text` in a kernel ELF.
fn text_bytes(elf: &Path) -> Fallible<u64> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(elf)?;
    let file = object::File::parse(&*data)?;
    let text = file
        .section_by_name(".text")
        .ok_or_else(|| format!("{} has no .text", elf.display()))?;
    Ok(text.size())
}

/// Zone sites of the small and the large code-size kernel: `sites_16`, `sites_48`
/// (examples/kernels), and the C++ sources [`cxx_sites_source`] writes.
const SITES: (u32, u32) = (16, 48);

/// The code bytes of one zone site (open + close, what `zone!` or `TTPROF_ZONE` expands to
/// where it is written): the `.text` growth from [`SITES`]`.0` to `.1` sites of the profile
/// build, minus the plain build's growth (the store each zone wraps), per added site.
/// `elfs` are (profile small, profile large, plain small, plain large).
fn site_code_bytes(elfs: [&Path; 4]) -> Fallible<f64> {
    let [on_a, on_b, off_a, off_b] = elfs.map(text_bytes);
    let grow = |a: u64, b: u64| b as f64 - a as f64;
    Ok((grow(on_a?, on_b?) - grow(off_a?, off_b?)) / (SITES.1 - SITES.0) as f64)
}

/// A C++ kernel of `n` zone sites in straight-line code, each around one volatile store of
/// its position (the twin of examples/kernels' `zone_sites!`).
fn cxx_sites_source(n: u32) -> String {
    let mut s = String::from(
        "#include <stdint.h>\n#include <ttprof.h>\n\nvoid kernel_main() {\n    volatile uint32_t *p = (volatile uint32_t *)(0x30000 + 0x80);\n",
    );
    for i in 0..n {
        s.push_str(&format!("    {{ TTPROF_ZONE(\"site\"); *p = {i}; }}\n"));
    }
    s.push_str("}\n");
    s
}

/// [`site_code_bytes`] of the C++ header (ttprof.h, `ttprof build`'s default -O2) on `arch`.
fn cxx_site_code_bytes(arch: Arch, out: &Path) -> Fallible<f64> {
    let dir = out.join(arch.name()).join("cxx-sites");
    std::fs::create_dir_all(&dir)?;
    let mut elfs = Vec::new();
    for profile in [true, false] {
        for n in [SITES.0, SITES.1] {
            let src = dir.join(format!("sites_{n}.cpp"));
            std::fs::write(&src, cxx_sites_source(n))?;
            let mut b = CKernelBuild::new(vec![src], Risc::Brisc, arch);
            b.profile = profile;
            b.out_dir = dir.join(if profile { "profile" } else { "plain" });
            elfs.push(kernels::build_c(&b)?);
        }
    }
    site_code_bytes([&elfs[0], &elfs[1], &elfs[2], &elfs[3]])
}

fn measure(arch: Arch, root: &Path) -> Fallible<Figures> {
    let dir = root.join(arch.name());
    eprintln!(
        "{}: building the bench kernel with and without `profile`...",
        arch.name()
    );
    let kernel_names = ["bench", "records", "sites_16", "sites_48"];
    let on_set = build_kernel_set(arch, true, &kernel_names, &dir.join("kernels-profile"))?;
    let off_set = build_kernel_set(arch, false, &kernel_names, &dir.join("kernels-plain"))?;
    let site_bytes = site_code_bytes([
        &on_set["sites_16"],
        &on_set["sites_48"],
        &off_set["sites_16"],
        &off_set["sites_48"],
    ])?;
    let cxx_site_bytes = cxx_site_code_bytes(arch, root)?;
    let (on, off) = (on_set["bench"].clone(), off_set["bench"].clone());
    let ts_on = build_kernel_features(
        arch,
        true,
        &["timestamper"],
        &["bench"],
        &dir.join("kernels-timestamper"),
    )?["bench"]
        .clone();
    let ts = Kernels {
        arch,
        on: ts_on,
        off: off.clone(),
        out: dir.join("timestamper"),
        backend: Backend::Timestamper,
    };
    let records = Kernels {
        arch,
        on: on_set["records"].clone(),
        off: off_set["records"].clone(),
        out: dir.clone(),
        backend: Backend::Ring,
    };
    let k = Kernels {
        arch,
        on,
        off,
        out: dir,
        backend: Backend::Ring,
    };
    eprintln!("{}: running...", arch.name());

    // A consumer drains often enough that nothing waits.
    let run = |mode, work, recording| BenchRun {
        mode,
        record: 0,
        iterations: 0,
        work,
        recording,
        policy: Policy::Block,
        drain_every: Some(2_000),
    };
    let dense = marginal(&k, &run(DENSE, 4, true), DENSE_ITERATIONS, 2)?;
    let mut by_work = Vec::new();
    for work in [1, 4, 16, ISOLATED_WORK] {
        let m = if work == 4 {
            dense
        } else {
            marginal(&k, &run(DENSE, work, true), DENSE_ITERATIONS, 2)?
        };
        by_work.push((work, m));
    }
    Ok(Figures {
        arch,
        dense,
        by_work,
        off: marginal(&k, &run(DENSE, 4, false), DENSE_ITERATIONS, 2)?,
        op_level: marginal(&k, &run(OP_LEVEL, 1_000, true), (10, 30), 1)?,
        block: marginal(&k, &run(DENSE_BLOCK, 4, true), DENSE_ITERATIONS, 2)?,
        block_off: marginal(&k, &run(DENSE_BLOCK, 4, false), DENSE_ITERATIONS, 2)?,
        inner: inner_duration(&k, 4, DENSE_ITERATIONS.1)?,
        ts_dense: marginal(&ts, &run(DENSE, 4, true), DENSE_ITERATIONS, 2)?,
        ts_isolated: marginal(&ts, &run(DENSE, ISOLATED_WORK, true), DENSE_ITERATIONS, 2)?,
        ts_off: marginal(&ts, &run(DENSE, 4, false), DENSE_ITERATIONS, 2)?,
        ts_op_level: marginal(&ts, &run(OP_LEVEL, 1_000, true), (10, 30), 1)?,
        ts_inner: inner_duration(&ts, 4, DENSE_ITERATIONS.1)?,
        records: record_costs(&records)?,
        site_bytes,
        cxx_site_bytes,
    })
}

fn main() -> Fallible<()> {
    let ws = workspace();
    let out = target_root().join("bench");
    std::fs::create_dir_all(&out)?;
    let figs = Arch::ALL
        .iter()
        .map(|&arch| measure(arch, &out))
        .collect::<Fallible<Vec<_>>>()?;
    let [wh, bh] = [&figs[0], &figs[1]];
    assert_eq!((wh.arch, bh.arch), (Arch::WormholeB0, Arch::Blackhole));

    // The same dense zones from C++ (examples/cxx/bench.cpp, ttprof.h), built as `ttprof build`
    // builds it, with the Rust kernels' optimisation level (-O3) and with the default (-O2).
    eprintln!("building the C++ bench kernel with and without PROFILE_KERNEL...");
    let cxx = |profile: bool, opt: &str| -> Fallible<PathBuf> {
        let mut b = CKernelBuild::new(
            vec![ws.join("examples/cxx/bench.cpp")],
            Risc::Brisc,
            Arch::WormholeB0,
        );
        b.profile = profile;
        b.flags = vec![opt.to_string()];
        b.out_dir = out.join(format!(
            "cxx-{}{opt}",
            if profile { "profile" } else { "plain" }
        ));
        Ok(kernels::build_c(&b)?)
    };
    let mut cxx_dense = Vec::new();
    let mut cxx_records = Vec::new();
    for opt in ["-O3", "-O2"] {
        let k = Kernels {
            arch: Arch::WormholeB0,
            on: cxx(true, opt)?,
            off: cxx(false, opt)?,
            out: out.join("cxx-runs"),
            backend: Backend::Ring,
        };
        let run = BenchRun {
            mode: DENSE,
            record: 0,
            iterations: 0,
            work: 4,
            recording: true,
            policy: Policy::Block,
            drain_every: Some(2_000),
        };
        cxx_dense.push((opt, marginal(&k, &run, DENSE_ITERATIONS, 2)?));
        if opt == "-O2" {
            // `ttprof build`'s default level.
            cxx_records = record_costs(&k)?;
        }
    }

    println!(
        "ttprof zone cost (marginal: profile build minus plain build, one BRISC on the emulator's"
    );
    println!("pipeline model from tt-isa-documentation; open + close)");
    println!(
        "{:<50} {:>11} {:>11}   reference / target",
        "", "Wormhole B0", "Blackhole"
    );
    let row = |label: &str, f: &dyn Fn(&Figures) -> f64, reference: &str| {
        println!("{label:<50} {:>11.2} {:>11.2}   {reference}", f(wh), f(bh));
    };
    row(
        "cycles per zone, dense (4 loop steps per zone)",
        &|f| f.dense.cycles,
        "tt-metal 45-51 (BH), tt-llk 29-30",
    );
    row(
        "timestamper backend: cycles per zone, dense",
        &|f| f.ts_dense.cycles,
        "target <= 6",
    );
    row(
        "timestamper backend: cycles per zone, isolated",
        &|f| f.ts_isolated.cycles,
        "",
    );
    row(
        "timestamper backend: cycles per zone, op-level",
        &|f| f.ts_op_level.cycles,
        "",
    );
    row(
        "timestamper backend: cycles per zone, recording off",
        &|f| f.ts_off.cycles,
        "buffers disabled by the host",
    );
    row(
        "timestamper backend: instructions per zone (dense)",
        &|f| f.ts_dense.instructions,
        "two stores",
    );
    row(
        "timestamper backend: profiler's cycles in a duration",
        &|f| f.ts_inner.recorded - f.ts_inner.plain,
        "",
    );
    row(
        "cycles per zone, isolated (64 loop steps per zone)",
        &|f| f.isolated().cycles,
        "tt-metal 45-51 (BH), tt-llk 29-30",
    );
    row(
        "cycles per zone, op-level (256k-cycle zones)",
        &|f| f.op_level.cycles,
        "the 32-bit form (duration >= 2^15)",
    );
    row("cycles per zone, recording off", &|f| f.off.cycles, "");
    row(
        "cycles per zone, block form `zone!(name, {..})`",
        &|f| f.block.cycles,
        "",
    );
    row(
        "cycles per zone, block form, recording off",
        &|f| f.block_off.cycles,
        "",
    );
    row(
        "inner zone's recorded duration, mean cycles",
        &|f| f.inner.recorded,
        "",
    );
    row(
        "  same work, plain build, bare clock reads",
        &|f| f.inner.plain,
        "",
    );
    row(
        "  the profiler's own cycles inside the duration",
        &|f| f.inner.recorded - f.inner.plain,
        "",
    );
    row(
        "instructions per zone (dense)",
        &|f| f.dense.instructions,
        "<= 16",
    );
    row(
        "instructions per zone (isolated)",
        &|f| f.isolated().instructions,
        "",
    );
    row(
        "instructions per zone (op-level: the 32-bit form)",
        &|f| f.op_level.instructions,
        "",
    );
    row(
        "instructions per zone, recording off",
        &|f| f.off.instructions,
        "load+branch",
    );
    row(
        "instructions per zone, block form",
        &|f| f.block.instructions,
        "<= 16",
    );
    row(
        "instructions per zone, block form, recording off",
        &|f| f.block_off.instructions,
        "load+branch",
    );
    row(
        "ring bytes per zone (dense)",
        &|f| f.dense.bytes,
        "<= 6 (tt-metal ~9.8)",
    );
    for (opt, m) in &cxx_dense {
        println!(
            "{:<50} {:>11.2} {:>11}   {:.2} instructions, {:.2} ring bytes",
            format!("C++ zone (ttprof.h, {opt}), dense: cycles"),
            m.cycles,
            "",
            m.instructions,
            m.bytes
        );
    }
    row(
        "code bytes per zone site, Rust `zone!`",
        &|f| f.site_bytes,
        "<= 48 (issue 39)",
    );
    row(
        "code bytes per zone site, C++ `TTPROF_ZONE` (-O2)",
        &|f| f.cxx_site_bytes,
        "<= 48 (issue 39)",
    );
    row(
        "ring bytes per zone (op-level)",
        &|f| f.op_level.bytes,
        "<= 12",
    );
    for f in &figs {
        let sweep: Vec<String> = f
            .by_work
            .iter()
            .map(|(w, m)| format!("{w}: {:.2} cycles / {:.2} instr", m.cycles, m.instructions))
            .collect();
        println!(
            "{} by loop steps per zone: {}",
            f.arch.name(),
            sweep.join(", ")
        );
    }
    println!();
    println!("cycles per record (marginal), loop (1 record + 4 unrolled loop steps per iteration) / straight-line (8 sites back to back)");
    println!(
        "{:<24} {:>17} {:>17} {:>17}   ring bytes (WH)",
        "", "Wormhole B0", "Blackhole", "C++ ttprof.h, WH"
    );
    let pair = |m: &RecordCost| format!("{:.1} / {:.1}", m.looped.cycles, m.straight.cycles);
    for (i, r) in wh.records.iter().enumerate() {
        println!(
            "{:<24} {:>17} {:>17} {:>17}   {:.1}",
            r.name,
            pair(r),
            pair(&bh.records[i]),
            cxx_records.get(i).map(pair).unwrap_or_default(),
            r.looped.bytes
        );
    }
    println!(
        "{:<24} {:>17.1} {:>17.1} {:>17}   {:.1}",
        "long zone (op-level)", wh.op_level.cycles, bh.op_level.cycles, "", wh.op_level.bytes
    );
    println!("references: tt-metal's 2026 streaming profiler, 45-51 cycles per zone measured on Blackhole");
    println!("(74 for its 5-word form); tt-llk's minimal profiler 29-30 cycles per zone");

    let by_work = |f: &Figures, g: fn(&Marginal) -> f64| {
        f.by_work
            .iter()
            .map(|(w, m)| (w.to_string(), serde_json::json!(g(m))))
            .collect::<serde_json::Map<_, _>>()
    };
    let mut json = serde_json::json!({
        "zone_instructions": wh.dense.instructions,
        "zone_bytes_dense": wh.dense.bytes,
        "zone_bytes_oplevel": wh.op_level.bytes,
        "zone_instructions_recording_off": wh.off.instructions,
        "zone_instructions_block": wh.block.instructions,
        "zone_instructions_block_recording_off": wh.block_off.instructions,
        "zone_instructions_by_work": by_work(wh, |m| m.instructions),
        "method": "marginal per zone between 2000 and 6000 iterations (dense, 2 nested zones each) or 10 and 30 (op-level), profile build minus plain build, one BRISC on the emulator: instruction counts, cycles from reset to halt on the pipeline model of tt-isa-documentation (emulator/src/isa/pipeline.rs) per arch, ring HEAD bytes; unsuffixed zone_instructions* keys are Wormhole B0",
        "reference_cycles_per_zone": {"tt_metal_streaming_blackhole": [45, 51], "tt_llk": [29, 30]},
        "zone_site_code_bytes_method": "(.text of 48 zone sites - .text of 16) of the profile build minus the same difference of the plain build, over 32: straight-line BRISC kernels, each zone around one volatile store; Rust examples/kernels sites_16/sites_48, C++ (cxx_ keys) generated and built at -O2 as `ttprof build` builds it",
    });
    let map = json.as_object_mut().unwrap();
    for f in &figs {
        let a = f.arch.name();
        let mut put = |k: String, v: serde_json::Value| {
            map.insert(k, v);
        };
        put(format!("zone_cycles_{a}"), f.dense.cycles.into());
        put(format!("zone_site_code_bytes_{a}"), f.site_bytes.into());
        put(
            format!("cxx_zone_site_code_bytes_{a}"),
            f.cxx_site_bytes.into(),
        );
        // The same figure under the backend's name, for the side-by-side with a timestamper
        // backend (issue 22).
        put(format!("zone_cycles_ring_{a}"), f.dense.cycles.into());
        put(format!("zone_off_cycles_{a}"), f.off.cycles.into());
        put(
            format!("zone_cycles_timestamper_{a}"),
            f.ts_dense.cycles.into(),
        );
        put(
            format!("zone_instructions_timestamper_{a}"),
            f.ts_dense.instructions.into(),
        );
        put(
            format!("zone_cycles_timestamper_isolated_{a}"),
            f.ts_isolated.cycles.into(),
        );
        put(
            format!("zone_cycles_timestamper_oplevel_{a}"),
            f.ts_op_level.cycles.into(),
        );
        put(
            format!("zone_off_cycles_timestamper_{a}"),
            f.ts_off.cycles.into(),
        );
        put(
            format!("zone_overhead_in_duration_cycles_timestamper_{a}"),
            (f.ts_inner.recorded - f.ts_inner.plain).into(),
        );
        put(
            format!("zone_cycles_isolated_{a}"),
            f.isolated().cycles.into(),
        );
        put(format!("zone_cycles_oplevel_{a}"), f.op_level.cycles.into());
        put(format!("zone_cycles_block_{a}"), f.block.cycles.into());
        put(
            format!("zone_cycles_block_off_{a}"),
            f.block_off.cycles.into(),
        );
        put(
            format!("zone_cycles_by_work_{a}"),
            by_work(f, |m| m.cycles).into(),
        );
        put(
            format!("zone_overhead_in_duration_cycles_{a}"),
            (f.inner.recorded - f.inner.plain).into(),
        );
        put(
            format!("inner_duration_recorded_cycles_{a}"),
            f.inner.recorded.into(),
        );
        put(
            format!("inner_duration_plain_cycles_{a}"),
            f.inner.plain.into(),
        );
    }
    for f in &figs {
        let a = f.arch.name();
        for r in &f.records {
            map.insert(
                format!("record_cycles_{}_{a}", r.name),
                r.looped.cycles.into(),
            );
            map.insert(
                format!("record_cycles_{}_straight_{a}", r.name),
                r.straight.cycles.into(),
            );
            map.insert(
                format!("record_bytes_{}_{a}", r.name),
                r.looped.bytes.into(),
            );
        }
        map.insert(
            format!("record_cycles_long_zone_{a}"),
            f.op_level.cycles.into(),
        );
    }
    for r in &cxx_records {
        map.insert(
            format!("cxx_record_cycles_{}_wormhole_b0", r.name),
            r.looped.cycles.into(),
        );
        map.insert(
            format!("cxx_record_cycles_{}_straight_wormhole_b0", r.name),
            r.straight.cycles.into(),
        );
    }
    for (opt, m) in &cxx_dense {
        map.insert(format!("cxx_zone_cycles_wormhole_b0{opt}"), m.cycles.into());
        map.insert(
            format!("cxx_zone_instructions_wormhole_b0{opt}"),
            m.instructions.into(),
        );
    }
    for (k, v) in [
        ("zone_instructions_blackhole", bh.dense.instructions),
        (
            "zone_instructions_isolated_wormhole_b0",
            wh.isolated().instructions,
        ),
        (
            "zone_instructions_isolated_blackhole",
            bh.isolated().instructions,
        ),
        (
            "zone_instructions_recording_off_blackhole",
            bh.off.instructions,
        ),
        ("zone_instructions_block_blackhole", bh.block.instructions),
        (
            "zone_instructions_block_recording_off_blackhole",
            bh.block_off.instructions,
        ),
        ("zone_bytes_dense_blackhole", bh.dense.bytes),
    ] {
        map.insert(k.into(), v.into());
    }
    let path = out.join("runtime.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)? + "\n")?;
    println!("wrote {}", path.display());
    Ok(())
}
