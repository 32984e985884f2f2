//! `noc-bench`: the emulator's NoC and DRAM model next to tt-metal's published hardware
//! figures, both arches, in one run.
//!
//! ```text
//! cargo run --release -p ttprof-emu --bin noc-bench [-- --out FILE]
//! ```
//!
//! It compiles `emulator/bench/noc.c` (a kernel that programs the NIU registers as
//! tt-metal's data-movement tests do: issue back-to-back, then a barrier on the status
//! counter, timed with the wall clock) with `riscv64-unknown-elf-gcc` for each arch and
//! runs it on the emulator:
//!
//! * bandwidth in bytes/cycle: `dram_read`, `dram_write` (one core, one DRAM bank),
//!   `one_to_one` (writes to a neighbour), `multicast` (writes to a 4x4 rectangle, per
//!   source) - 64 transactions of the largest packet;
//! * latency in cycles of one flit-sized transfer: `l1_read` (a neighbour's L1),
//!   `dram_read_latency`;
//! * `contention`: four cores reading the same DRAM channel at once: each should get a
//!   quarter of one reader's bandwidth (`contention_<arch>_split` = the four readers'
//!   total over one reader's, ideally 1);
//! * `noc_mips`: emulated instructions per host second on a NoC-heavy 4x4 grid where
//!   every core reads its neighbour's L1 (256-byte reads, 20 000 per core).
//!
//! Keys `<case>_<arch>_emu` and `<case>_<arch>_hw` (tt-metal's figures, from
//! `shared/reference/tensix-noc.md`) and `max_rel_error` over all cases go to
//! `target/bench/noc.json`.

use riscv_linker::noc::{dram, max_packet_bytes};
use riscv_linker::{script::linker_script, Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use ttprof_emu::{Device, DeviceConfig};

const PARAMS: u32 = 0x30000;
const RESULT: u32 = 0x30100;
const READ: u32 = 0;
const WRITE: u32 = 1;
const MCAST: u32 = 2;

/// tt-metal's published hardware figures: (case, wormhole_b0, blackhole).
const HW: [(&str, f64, f64); 6] = [
    ("dram_read", 22.0, 33.0),
    ("dram_write", 21.0, 34.0),
    ("one_to_one", 29.0, 60.0),
    ("multicast", 15.0, 24.0),
    ("l1_read_latency", 290.0, 368.0),
    ("dram_read_latency", 384.0, 479.0),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build(work: &Path, arch: Arch) -> Result<Vec<u8>, String> {
    let ld = work.join(format!("noc-{arch}.x"));
    std::fs::write(&ld, linker_script(arch, Risc::Brisc)).map_err(|e| e.to_string())?;
    let out = work.join(format!("noc-{arch}.elf"));
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let mut cmd = Command::new("riscv64-unknown-elf-gcc");
    cmd.args(["-march=rv32im", "-mabi=ilp32", "-O2", "-nostdlib", "-nostartfiles", "-ffreestanding"])
        .args(["-fno-tree-loop-distribute-patterns", "-Wl,--no-relax"])
        .arg(bench.join("kernel_start.S"))
        .arg(bench.join("noc.c"))
        .arg(format!("-Wl,-T,{}", ld.display()))
        .arg("-o")
        .arg(&out);
    if arch == Arch::Blackhole {
        cmd.arg("-DBLACKHOLE");
    }
    let r = cmd.output().map_err(|e| format!("riscv64-unknown-elf-gcc: {e} (run scripts/install-test-tools.sh)"))?;
    if !r.status.success() {
        return Err(format!("gcc failed:\n{}", String::from_utf8_lossy(&r.stderr)));
    }
    std::fs::read(&out).map_err(|e| e.to_string())
}

/// One kernel invocation: which tile, and its parameters.
struct Job {
    tile: NocCoord,
    mode: u32,
    target: NocCoord,
    addr: u32,
    size: u32,
    count: u32,
    mcast_start: NocCoord,
    dests: u32,
}

/// Runs `jobs` at once on a `grid` device; returns each job's measured cycles, the
/// instructions retired and the host seconds.
fn run(arch: Arch, grid: (u8, u8), elf: &[u8], jobs: &[Job]) -> Result<(Vec<u64>, u64, f64), String> {
    let mut cfg = DeviceConfig::new(arch, grid);
    cfg.clock_mailbox = false;
    let mut dev = Device::new(cfg).map_err(|e| e.to_string())?;
    for j in jobs {
        let p = [j.mode, j.target.x as u32, j.target.y as u32, j.addr, j.size, j.count, j.mcast_start.x as u32, j.mcast_start.y as u32, j.dests];
        for (i, v) in p.iter().enumerate() {
            dev.write_u32(0, j.tile, PARAMS + 4 * i as u32, *v).map_err(|e| e.to_string())?;
        }
        dev.load_kernel(0, j.tile, Risc::Brisc, elf, "noc.elf").map_err(|e| e.to_string())?;
    }
    let t = Instant::now();
    let s = dev.run().map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    let cycles = jobs.iter().map(|j| dev.read_u32(0, j.tile, RESULT).map(u64::from).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    Ok((cycles, s.instructions(), secs))
}

fn job(tile: NocCoord, mode: u32, target: NocCoord, addr: u32, size: u32, count: u32) -> Job {
    Job { tile, mode, target, addr, size, count, mcast_start: NocCoord::new(0, 0), dests: 1 }
}

struct ArchFigures {
    emu: Vec<(&'static str, f64)>,
    contention_split: f64,
    contention_per_reader: f64,
    noc_mips: f64,
}

fn measure(arch: Arch, elf: &[u8]) -> Result<ArchFigures, String> {
    let w = |c, r| arch.worker_noc(c, r).ok_or("grid");
    let a = w(0, 0)?;
    let b = w(1, 0)?;
    let bank = dram::bank(arch, 0);
    let size = max_packet_bytes(arch);
    let count = 64;
    let bytes = (size * count) as f64;
    let flit = riscv_linker::noc::flit_bytes(arch);
    let mut emu = Vec::new();

    let one = |jobs: Vec<Job>, grid| run(arch, grid, elf, &jobs).map(|r| r.0[0] as f64);
    let dram_at = bank.offset as u32 + 0x100_0000;
    emu.push(("dram_read", bytes / one(vec![job(a, READ, bank.endpoint, dram_at, size, count)], (1, 1))?));
    emu.push(("dram_write", bytes / one(vec![job(a, WRITE, bank.endpoint, dram_at, size, count)], (1, 1))?));
    emu.push(("one_to_one", bytes / one(vec![job(a, WRITE, b, 0x40000, size, count)], (2, 1))?));
    let far = w(3, 3)?;
    let mcast = Job { tile: a, mode: MCAST, target: far, addr: 0x40000, size, count, mcast_start: a, dests: 15 };
    emu.push(("multicast", bytes / one(vec![mcast], (4, 4))?));
    emu.push(("l1_read_latency", one(vec![job(a, READ, b, 0x40000, flit, 1)], (2, 1))?));
    emu.push(("dram_read_latency", one(vec![job(a, READ, bank.endpoint, dram_at, flit, 1)], (1, 1))?));

    // Contention: four readers on one DRAM channel.
    let readers: Vec<NocCoord> = (0..4).map(|c| w(c, 0)).collect::<Result<_, _>>()?;
    let jobs: Vec<Job> =
        readers.iter().enumerate().map(|(i, &t)| job(t, READ, bank.endpoint, dram_at + i as u32 * size * count, size, count)).collect();
    let (cycles, _, _) = run(arch, (4, 1), elf, &jobs)?;
    let per_reader = cycles.iter().map(|&c| bytes / c as f64).sum::<f64>() / 4.0;
    let single = emu[0].1;
    let split = 4.0 * per_reader / single;

    // NoC-heavy MIPS: every core of a 4x4 grid reads its right-hand neighbour (wrapping).
    let mut jobs = Vec::new();
    for r in 0..4 {
        for c in 0..4 {
            jobs.push(job(w(c, r)?, READ, w((c + 1) % 4, r)?, 0x40000, 256, 20000));
        }
    }
    let (_, instr, secs) = run(arch, (4, 4), elf, &jobs)?;
    Ok(ArchFigures { emu, contention_split: split, contention_per_reader: per_reader, noc_mips: instr as f64 / secs / 1e6 })
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("noc-bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let mut out = root().join("target/bench/noc.json");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a value")?),
            "-h" | "--help" => return Err("usage: noc-bench [--out FILE]".into()),
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    let work = out.parent().unwrap_or(Path::new(".")).join("noc-bench-work");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut json = Vec::new();
    let mut max_err = 0.0f64;
    for (ai, arch) in Arch::ALL.into_iter().enumerate() {
        let elf = build(&work, arch)?;
        let f = measure(arch, &elf)?;
        for (case, emu) in &f.emu {
            let hw = HW.iter().find(|h| h.0 == *case).map(|h| if ai == 0 { h.1 } else { h.2 }).ok_or("case")?;
            let err = (emu - hw).abs() / hw;
            max_err = max_err.max(err);
            println!("{arch:12} {case:18} emu {emu:8.1}  hw {hw:6.1}  error {:5.1} %", 100.0 * err);
            json.push(format!("  \"{case}_{arch}_emu\": {emu:.2}"));
            json.push(format!("  \"{case}_{arch}_hw\": {hw:.1}"));
        }
        println!(
            "{arch:12} contention: 4 readers on one DRAM channel get {:.1} B/cycle each; total / one reader = {:.3}",
            f.contention_per_reader, f.contention_split
        );
        println!("{arch:12} NoC-heavy 4x4 grid: {:.1} MIPS", f.noc_mips);
        json.push(format!("  \"contention_{arch}_per_reader\": {:.2}", f.contention_per_reader));
        json.push(format!("  \"contention_{arch}_split\": {:.3}", f.contention_split));
        json.push(format!("  \"noc_mips_{arch}\": {:.1}", f.noc_mips));
    }
    json.push(format!("  \"max_rel_error\": {max_err:.3}"));
    json.push(format!("  \"host_threads\": {}", std::thread::available_parallelism().map_or(1, |n| n.get())));
    println!("max_rel_error = {max_err:.3}");
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(&out, format!("{{\n{}\n}}\n", json.join(",\n"))).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}
