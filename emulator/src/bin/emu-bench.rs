//! `emu-bench`: how fast is the emulator, next to QEMU, on the same workload?
//!
//! ```text
//! cargo run --release -p ttprof-emu --bin emu-bench [-- --iters N --grid-iters N --out FILE]
//! ```
//!
//! It compiles `emulator/bench/workload.c` (integer loops with loads, stores, multiplies
//! and branches; no MMIO) with `riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32` twice:
//! as a BRISC kernel for the emulator and as a bare static Linux binary that exits via
//! `ecall`, for `qemu-riscv32`. Then it measures, in one run:
//!
//! * `emu_mips`: one hart (BRISC of a 1x1 Wormhole device), best of three runs;
//! * `qemu_mips`: the Linux build under `qemu-riscv32`, as the difference between a long
//!   and a short build, so QEMU's start-up is not counted (the instruction counts are the
//!   emulator's counts of the same loop compiled with the same flags);
//! * `grid_mips`: all five harts of every tile of a full Wormhole grid, on all host cores;
//!
//! and writes them with `emu_vs_qemu = emu_mips / qemu_mips` to
//! `target/bench/emulator.json`.

use riscv_linker::{script::linker_script, Arch, Risc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use ttprof_emu::{Device, DeviceConfig};

struct Args {
    iters: u32,
    grid_iters: u32,
    out: PathBuf,
    jit: bool,
    quantum: Option<u32>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        iters: 20000,
        grid_iters: 100,
        // Under the current folder (run it from the checkout's root).
        out: PathBuf::from("target/bench/emulator.json"),
        jit: true,
        quantum: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--iters" => a.iters = value()?.parse().map_err(|e| format!("--iters: {e}"))?,
            "--grid-iters" => {
                a.grid_iters = value()?.parse().map_err(|e| format!("--grid-iters: {e}"))?
            }
            "--out" => a.out = PathBuf::from(value()?),
            "--no-jit" => a.jit = false,
            "--quantum" => {
                a.quantum = Some(value()?.parse().map_err(|e| format!("--quantum: {e}"))?)
            }
            "-h" | "--help" => {
                return Err("usage: emu-bench [--iters N] [--grid-iters N] [--out FILE] [--no-jit] [--quantum CYCLES]".into());
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(a)
}

/// The workload's sources (`emulator/bench/`), carried in the binary: written into `work`
/// to build, so nothing is read from the checkout the binary was built from.
const SOURCES: [(&str, &str); 3] = [
    ("kernel_start.S", include_str!("../../bench/kernel_start.S")),
    ("linux_start.S", include_str!("../../bench/linux_start.S")),
    ("workload.c", include_str!("../../bench/workload.c")),
];

/// Writes [`SOURCES`] into `work`; returns it.
fn bench_dir(work: &Path) -> Result<PathBuf, String> {
    for (name, text) in SOURCES {
        let p = work.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(work.to_path_buf())
}

fn gcc(args: &[&str], out: &Path) -> Result<(), String> {
    let r = Command::new("riscv64-unknown-elf-gcc")
        .args([
            "-march=rv32im",
            "-mabi=ilp32",
            "-O2",
            "-nostdlib",
            "-nostartfiles",
            "-ffreestanding",
        ])
        .args(["-fno-tree-loop-distribute-patterns", "-Wl,--no-relax"])
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("riscv64-unknown-elf-gcc: {e} (run scripts/install-test-tools.sh)"))?;
    if !r.status.success() {
        return Err(format!(
            "gcc failed:\n{}",
            String::from_utf8_lossy(&r.stderr)
        ));
    }
    Ok(())
}

/// Builds the workload as a kernel for `risc` (Wormhole) with `iters` iterations.
fn build_kernel(work: &Path, risc: Risc, iters: u32) -> Result<PathBuf, String> {
    let ld = work.join(format!("{}.x", risc.ident()));
    std::fs::write(&ld, linker_script(Arch::WormholeB0, risc)).map_err(|e| e.to_string())?;
    let out = work.join(format!("kernel-{}-{iters}.elf", risc.ident()));
    let d = bench_dir(work)?;
    let define = format!("-DITERS={iters}");
    let script = format!("-Wl,-T,{}", ld.display());
    let (start, src) = (d.join("kernel_start.S"), d.join("workload.c"));
    gcc(
        &[
            &define,
            start.to_str().unwrap_or(""),
            src.to_str().unwrap_or(""),
            &script,
        ],
        &out,
    )?;
    Ok(out)
}

/// Builds the workload as a static Linux binary with `iters` iterations.
fn build_linux(work: &Path, iters: u32) -> Result<PathBuf, String> {
    let out = work.join(format!("linux-{iters}"));
    let d = bench_dir(work)?;
    let define = format!("-DITERS={iters}");
    let (start, src) = (d.join("linux_start.S"), d.join("workload.c"));
    gcc(
        &[
            "-static",
            &define,
            start.to_str().unwrap_or(""),
            src.to_str().unwrap_or(""),
        ],
        &out,
    )?;
    Ok(out)
}

/// Runs `elf` on BRISC of a 1x1 device: (instructions, seconds, exit code).
fn config(args: &Args, grid: (u8, u8)) -> DeviceConfig {
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, grid);
    cfg.jit = args.jit;
    if let Some(q) = args.quantum {
        cfg.quantum = q;
    }
    cfg
}

fn emu_single(args: &Args, elf: &Path) -> Result<(u64, f64, u32), String> {
    let bytes = std::fs::read(elf).map_err(|e| e.to_string())?;
    let mut dev = Device::new(config(args, (1, 1))).map_err(|e| e.to_string())?;
    let tile = dev.tiles()[0];
    dev.load_kernel(0, tile, Risc::Brisc, &bytes, &elf.display().to_string())
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    let s = dev.run().map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    Ok((s.instructions(), secs, s.harts[0].exit_code.unwrap_or(0)))
}

/// Seconds `qemu-riscv32` takes to run `bin`, and its exit status.
fn qemu(bin: &Path) -> Result<(f64, i32), String> {
    let t = Instant::now();
    let st = Command::new("qemu-riscv32")
        .arg(bin)
        .status()
        .map_err(|e| format!("qemu-riscv32: {e} (run scripts/install-test-tools.sh)"))?;
    Ok((t.elapsed().as_secs_f64(), st.code().unwrap_or(-1)))
}

fn best<T: Copy>(
    n: usize,
    mut f: impl FnMut() -> Result<(f64, T), String>,
) -> Result<(f64, T), String> {
    let mut out: Option<(f64, T)> = None;
    for _ in 0..n {
        let r = f()?;
        if out.is_none_or(|o| r.0 < o.0) {
            out = Some(r);
        }
    }
    out.ok_or_else(|| "no run".to_string())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("emu-bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let target = args.out.parent().unwrap_or(Path::new(".")).to_path_buf();
    let work = target.join("emu-bench-work");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let small_iters = (args.iters / 10).max(1);

    // Single hart.
    let big = build_kernel(&work, Risc::Brisc, args.iters)?;
    let small = build_kernel(&work, Risc::Brisc, small_iters)?;
    let (i_small, _, _) = emu_single(&args, &small)?;
    let (emu_secs, (i_big, exit)) =
        best(3, || emu_single(&args, &big).map(|(i, s, e)| (s, (i, e))))?;
    let emu_mips = i_big as f64 / emu_secs / 1e6;
    println!("emulator, 1 hart: {i_big} instructions in {emu_secs:.3} s = {emu_mips:.1} MIPS");

    // QEMU on the same loop.
    let (lb, ls) = (
        build_linux(&work, args.iters)?,
        build_linux(&work, small_iters)?,
    );
    let (tb, code) = best(3, || qemu(&lb))?;
    let (ts, _) = best(3, || qemu(&ls))?;
    if code != (exit & 0xFF) as i32 {
        return Err(format!(
            "qemu exit {code} differs from the emulator's {} (low byte)",
            exit & 0xFF
        ));
    }
    let qemu_mips = (i_big - i_small) as f64 / (tb - ts).max(1e-9) / 1e6;
    println!("qemu-riscv32: {tb:.3} s long, {ts:.3} s short = {qemu_mips:.1} MIPS");

    // Full grid.
    let arch = Arch::WormholeB0;
    let mut dev = Device::new(config(&args, arch.worker_grid())).map_err(|e| e.to_string())?;
    let mut elfs = Vec::new();
    for risc in Risc::ALL {
        let p = build_kernel(&work, risc, args.grid_iters)?;
        elfs.push((
            risc,
            std::fs::read(&p).map_err(|e| e.to_string())?,
            p.display().to_string(),
        ));
    }
    for tile in dev.tiles() {
        for (risc, bytes, name) in &elfs {
            dev.load_kernel(0, tile, *risc, bytes, name)
                .map_err(|e| e.to_string())?;
        }
    }
    let t = Instant::now();
    let s = dev.run().map_err(|e| e.to_string())?;
    let grid_secs = t.elapsed().as_secs_f64();
    let grid_mips = s.instructions() as f64 / grid_secs / 1e6;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "emulator, full {arch} grid ({} harts, {threads} threads): {} instructions in {grid_secs:.3} s = {grid_mips:.1} MIPS",
        s.harts.len(),
        s.instructions()
    );
    let ratio = emu_mips / qemu_mips;
    println!("emu_vs_qemu = {ratio:.2}");

    let json = format!(
        "{{\n  \"jit\": {},\n  \"quantum\": {},\n  \"emu_mips\": {emu_mips:.2},\n  \"qemu_mips\": {qemu_mips:.2},\n  \"emu_vs_qemu\": {ratio:.3},\n  \"grid_mips\": {grid_mips:.2},\n  \"single_instructions\": {i_big},\n  \"grid_instructions\": {},\n  \"grid_harts\": {},\n  \"host_threads\": {threads}\n}}\n",
        args.jit,
        dev.config().quantum,
        s.instructions(),
        s.harts.len()
    );
    std::fs::write(&args.out, json).map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
