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
//!   short zones per iteration around 4 loop steps each). In that loop the zones' hot path
//!   is 13 instructions (open: `lw anchor, beqz, lw clock`; close: the guard's `beqz`,
//!   `lw clock, sub, sub, bgeu, bgeu, sh, sh, sh, addi`), with the clock base, the 2^15
//!   bound and the site id hoisted out of the loop; the rest of the measured figure is the
//!   compiler reshaping the loops around the zones' inline asm (a `j` and the inner loops'
//!   zero-trip guards stay inside) and the amortised slow paths (every 2^15 cycles the
//!   first close of each nesting level re-anchors, about 90 instructions; ring wraps);
//! * `zone_instructions_by_work`: the same for 1, 4, 16 and 64 loop steps per zone: the
//!   sparser the zones, the more each one pays of the every-2^15-cycles slow closes;
//! * `zone_bytes_dense` = dHEAD / dZones in the dense mode;
//! * `zone_bytes_oplevel` = dHEAD / dZones in the op-level mode (64k-cycle gaps, 256k-cycle zones);
//! * `zone_instructions_recording_off`: the same with recording switched off at run time;
//! * `zone_instructions_block` and `zone_instructions_block_recording_off`: the same two
//!   with the block form of `zone!` (mode 3), whose off path is one load and one branch;
//!
//! A consumer drains the ring while the kernel runs, so nothing stalls; the benchmark
//! checks that no zone was dropped or waited for. Writes `target/bench/runtime.json`.

use riscv_linker::{Arch, Risc};
use ttprof::kernels::{self, CKernelBuild};
use std::path::Path;
use ttprof::launch::Policy;
use ttprof_demo::bench::{launch, BenchRun, DENSE, DENSE_BLOCK, OP_LEVEL};
use ttprof_demo::scenario::{build_kernel_set, Fallible};
use ttprof_demo::workspace;

/// Marginal per-zone cost between two iteration counts.
struct Marginal {
    instructions: f64,
    /// Cycles of the emulator's pipeline model (Tenstorrent's documented Baby RISC-V timing).
    cycles: f64,
    bytes: f64,
}

/// `base` run at `n.0` and `n.1` iterations of `zones_per_iter` zones each, of `elf` and,
/// when given, of the plain build too.
fn marginal(elf: &Path, plain: Option<&Path>, base: &BenchRun, n: (u32, u32), zones_per_iter: u32, out: &Path) -> Fallible<Marginal> {
    let run = |elf: &Path, iterations| launch(elf, &BenchRun { iterations, ..base.clone() }, out);
    let recording = base.recording;
    let (a, b) = (run(elf, n.0)?, run(elf, n.1)?);
    for l in [&a, &b] {
        if l.stalls != 0 || l.dropped != 0 {
            return Err(format!("the benchmark run stalled {} times and dropped {} records", l.stalls, l.dropped).into());
        }
    }
    let dz = ((n.1 - n.0) * zones_per_iter) as f64;
    let zones = |l: &ttprof_demo::bench::Launched| l.readout.zones() as f64;
    if recording && zones(&b) - zones(&a) != dz {
        return Err(format!("expected {dz} more zones, read {}", zones(&b) - zones(&a)).into());
    }
    let mut di = (b.instructions - a.instructions) as f64;
    let mut dc = b.cycles as f64 - a.cycles as f64;
    if let Some(plain) = plain {
        let (pa, pb) = (run(plain, n.0)?, run(plain, n.1)?);
        di -= (pb.instructions - pa.instructions) as f64;
        dc -= pb.cycles as f64 - pa.cycles as f64;
    }
    Ok(Marginal { instructions: di / dz, cycles: dc / dz, bytes: (b.ring_bytes - a.ring_bytes) as f64 / dz })
}

fn main() -> Fallible<()> {
    let ws = workspace();
    let out = ws.join("target/bench");
    std::fs::create_dir_all(&out)?;
    eprintln!("building the bench kernel with and without `profile`...");
    let on = build_kernel_set(Arch::WormholeB0, true, &["bench"], &out.join("kernels-profile"))?;
    let off = build_kernel_set(Arch::WormholeB0, false, &["bench"], &out.join("kernels-plain"))?;
    let (on, off) = (&on["bench"], &off["bench"]);

    // A consumer drains often enough that nothing waits.
    let run = |mode, work, recording| BenchRun { mode, iterations: 0, work, recording, policy: Policy::Block, drain_every: Some(2_000) };
    let dense = marginal(on, Some(off), &run(DENSE, 4, true), (2_000, 6_000), 2, &out)?;
    let mut by_work = Vec::new();
    for work in [1, 4, 16, 64] {
        let m = if work == 4 { dense.instructions } else { marginal(on, Some(off), &run(DENSE, work, true), (2_000, 6_000), 2, &out)?.instructions };
        by_work.push((work, m));
    }
    let dense_off = marginal(on, Some(off), &run(DENSE, 4, false), (2_000, 6_000), 2, &out)?;
    let op_level = marginal(on, None, &run(OP_LEVEL, 1_000, true), (10, 30), 1, &out)?;
    let block = marginal(on, Some(off), &run(DENSE_BLOCK, 4, true), (2_000, 6_000), 2, &out)?;
    let block_off = marginal(on, Some(off), &run(DENSE_BLOCK, 4, false), (2_000, 6_000), 2, &out)?;
    // The same dense zones from C++ (examples/cxx/bench.cpp, ttprof.h), built as `ttprof build`
    // builds it, with the Rust kernels' optimisation level (-O3) and with the default (-O2).
    eprintln!("building the C++ bench kernel with and without PROFILE_KERNEL...");
    let cxx = |profile: bool, opt: &str| -> Fallible<std::path::PathBuf> {
        let mut b = CKernelBuild::new(vec![ws.join("examples/cxx/bench.cpp")], Risc::Brisc, Arch::WormholeB0);
        b.profile = profile;
        b.flags = vec![opt.to_string()];
        b.out_dir = out.join(format!("cxx-{}{opt}", if profile { "profile" } else { "plain" }));
        Ok(kernels::build_c(&b)?)
    };
    let mut cxx_dense = Vec::new();
    for opt in ["-O3", "-O2"] {
        let (con, coff) = (cxx(true, opt)?, cxx(false, opt)?);
        cxx_dense.push((opt, marginal(&con, Some(&coff), &run(DENSE, 4, true), (2_000, 6_000), 2, &out)?));
    }
    let cxx_op_level = marginal(&cxx(true, "-O2")?, None, &run(OP_LEVEL, 1_000, true), (10, 30), 1, &out)?;

    println!("ttprof zone cost (marginal, measured on the emulator; Wormhole B0 BRISC)");
    println!("{:<44} {:>10} {:>12}", "", "measured", "target");
    println!("{:<44} {:>10.2} {:>12}", "instructions per zone (dense, open+close)", dense.instructions, "<= 16");
    println!("{:<44} {:>10.2} {:>12}", "cycles per zone (dense, pipeline model)", dense.cycles, "");
    for (opt, m) in &cxx_dense {
        println!(
            "{:<44} {:>10.2} {:>12}",
            format!("  C++ zone (ttprof.h, {opt}): cycles"),
            m.cycles,
            format!("{:.2} instr, {:.2} B", m.instructions, m.bytes)
        );
    }
    println!("{:<44} {:>10.2} {:>12}", "ring bytes per zone (dense)", dense.bytes, "<= 6");
    println!("{:<44} {:>10.2} {:>12}", "ring bytes per zone (op-level)", op_level.bytes, "<= 12");
    println!("{:<44} {:>10.2} {:>12}", "instructions per zone, recording off", dense_off.instructions, "load+branch");
    println!("{:<44} {:>10.2} {:>12}", "  block form `zone!(name, {...})`", block.instructions, "<= 16");
    println!("{:<44} {:>10.2} {:>12}", "  block form, recording off", block_off.instructions, "load+branch");
    let sweep: Vec<String> = by_work.iter().map(|(w, m)| format!("{w}: {m:.2}")).collect();
    println!("instructions per dense zone by loop steps per zone: {}", sweep.join(", "));
    println!("tt-metal 2026 streaming profiler: 45-51 cycles and ~9.8 ring bytes per zone");

    let json = serde_json::json!({
        "zone_instructions": dense.instructions,
        "zone_bytes_dense": dense.bytes,
        "zone_bytes_oplevel": op_level.bytes,
        "zone_instructions_recording_off": dense_off.instructions,
        "zone_instructions_block": block.instructions,
        "zone_instructions_block_recording_off": block_off.instructions,
        "zone_cycles": dense.cycles,
        "cxx_zone_cycles": cxx_dense.iter().map(|(o, m)| (o.to_string(), serde_json::json!(m.cycles))).collect::<serde_json::Map<_, _>>(),
        "cxx_zone_instructions": cxx_dense.iter().map(|(o, m)| (o.to_string(), serde_json::json!(m.instructions))).collect::<serde_json::Map<_, _>>(),
        "cxx_zone_bytes_dense": cxx_dense[0].1.bytes,
        "cxx_zone_bytes_oplevel": cxx_op_level.bytes,
        "zone_instructions_by_work": by_work.iter().map(|(w, m)| (w.to_string(), serde_json::json!(m))).collect::<serde_json::Map<_, _>>(),
        "method": "marginal per zone between 2000 and 6000 iterations (dense, 2 nested zones each) or 10 and 30 (op-level), profile build minus plain build, emulator instruction counts and ring HEAD bytes",
    });
    let path = out.join("runtime.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)? + "\n")?;
    println!("wrote {}", path.display());
    Ok(())
}
