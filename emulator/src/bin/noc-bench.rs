//! `noc-bench`: the emulator's NoC and DRAM model next to tt-metal's published hardware
//! figures, both arches, in one run.
//!
//! ```text
//! cargo run --release -p ttprof-emu --bin noc-bench [-- --out FILE] [--mmio-load N] [--calibrate]
//! ```
//!
//! It builds `emulator/bench/noc.c` (a kernel that programs the NIU registers as tt-metal's
//! data-movement tests do) with `riscv64-unknown-elf-gcc` for each arch and runs its cases
//! on the emulator: bandwidths, single-transfer latencies, N readers of one DRAM bank, and
//! emulated MIPS under NoC traffic. Each published case's emulated and hardware figures
//! (the `HW` table below), the readers table and `max_rel_error` go to
//! `target/bench/noc.json`. `--mmio-load N` runs the cores with another load latency for
//! the MMIO windows; `--calibrate` re-fits [`NocCalibration`] and prints the values to
//! paste into `NocCalibration::for_arch`.
//!
//! See docs/design/noc-model.md, "noc-bench", for each case and key.

use riscv_linker::noc::{dram, max_packet_bytes};
use riscv_linker::{script::linker_script, Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use ttprof_emu::{Device, DeviceConfig, NocCalibration, NocConfig};

const PARAMS: u32 = 0x30000;
const RESULT: u32 = 0x30100;
const READ: u32 = 0;
const WRITE: u32 = 1;
const MCAST: u32 = 2;
/// Transactions of the bandwidth cases and of each reader.
const COUNT: u32 = 64;
/// Most readers of one bank.
const READERS: usize = 16;

/// tt-metal's published hardware figures: (case, wormhole_b0, blackhole).
const HW: [(&str, f64, f64); 6] = [
    ("dram_read", 22.0, 33.0),
    ("dram_write", 21.0, 34.0),
    ("one_to_one", 29.0, 60.0),
    ("multicast", 15.0, 24.0),
    ("l1_read_latency", 290.0, 368.0),
    ("dram_read_latency", 384.0, 479.0),
];

fn hw(arch: Arch, case: &str) -> f64 {
    let h = HW.iter().find(|h| h.0 == case).expect("a published case");
    if arch == Arch::WormholeB0 {
        h.1
    } else {
        h.2
    }
}

fn build(work: &Path, arch: Arch) -> Result<Vec<u8>, String> {
    let ld = work.join(format!("noc-{arch}.x"));
    std::fs::write(&ld, linker_script(arch, Risc::Brisc)).map_err(|e| e.to_string())?;
    let out = work.join(format!("noc-{arch}.elf"));
    // The workload's sources, carried in the binary (nothing read from the checkout).
    for (name, text) in [
        ("kernel_start.S", include_str!("../../bench/kernel_start.S")),
        ("noc.c", include_str!("../../bench/noc.c")),
    ] {
        let p = work.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let bench = work;
    let mut cmd = Command::new("riscv64-unknown-elf-gcc");
    cmd.args([
        "-march=rv32im",
        "-mabi=ilp32",
        "-O2",
        "-nostdlib",
        "-nostartfiles",
        "-ffreestanding",
    ])
    .args(["-fno-tree-loop-distribute-patterns", "-Wl,--no-relax"])
    .arg(bench.join("kernel_start.S"))
    .arg(bench.join("noc.c"))
    .arg(format!("-Wl,-T,{}", ld.display()))
    .arg("-o")
    .arg(&out);
    if arch == Arch::Blackhole {
        cmd.arg("-DBLACKHOLE");
    }
    let r = cmd
        .output()
        .map_err(|e| format!("riscv64-unknown-elf-gcc: {e} (run scripts/install-test-tools.sh)"))?;
    if !r.status.success() {
        return Err(format!(
            "gcc failed:\n{}",
            String::from_utf8_lossy(&r.stderr)
        ));
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

fn job(tile: NocCoord, mode: u32, target: NocCoord, addr: u32, size: u32, count: u32) -> Job {
    Job {
        tile,
        mode,
        target,
        addr,
        size,
        count,
        mcast_start: NocCoord::new(0, 0),
        dests: 1,
    }
}

/// One arch's kernel and the models it runs under.
struct Bench {
    arch: Arch,
    elf: Vec<u8>,
    /// Overrides `Timing::mmio_load` (None: the documented pipeline's).
    mmio_load: Option<u32>,
    noc: NocConfig,
}

/// Figures of one arch.
struct Figures {
    /// The published cases, in [`HW`]'s order.
    emu: Vec<(&'static str, f64)>,
    readers: Vec<Readers>,
    noc_mips: f64,
}

/// N readers of one bank.
struct Readers {
    n: usize,
    first: f64,
    median: f64,
    last: f64,
    total_bytes_per_cycle: f64,
}

impl Bench {
    /// Runs `jobs` at once on a `grid` device; returns each job's measured cycles, the
    /// instructions retired and the host seconds.
    fn run(&self, grid: (u8, u8), jobs: &[Job]) -> Result<(Vec<u64>, u64, f64), String> {
        let mut cfg = DeviceConfig::new(self.arch, grid);
        cfg.clock_mailbox = false;
        if let Some(n) = self.mmio_load {
            cfg.timing.mmio_load = n;
        }
        cfg.noc = self.noc;
        let mut dev = Device::new(cfg).map_err(|e| e.to_string())?;
        for j in jobs {
            let p = [
                j.mode,
                j.target.x as u32,
                j.target.y as u32,
                j.addr,
                j.size,
                j.count,
                j.mcast_start.x as u32,
                j.mcast_start.y as u32,
                j.dests,
            ];
            for (i, v) in p.iter().enumerate() {
                dev.write_u32(0, j.tile, PARAMS + 4 * i as u32, *v)
                    .map_err(|e| e.to_string())?;
            }
            dev.load_kernel(0, j.tile, Risc::Brisc, &self.elf, "noc.elf")
                .map_err(|e| e.to_string())?;
        }
        let t = Instant::now();
        let s = dev.run().map_err(|e| e.to_string())?;
        let secs = t.elapsed().as_secs_f64();
        let cycles = jobs
            .iter()
            .map(|j| {
                dev.read_u32(0, j.tile, RESULT)
                    .map(u64::from)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        Ok((cycles, s.instructions(), secs))
    }

    fn one(&self, grid: (u8, u8), j: Job) -> Result<f64, String> {
        self.run(grid, &[j]).map(|r| r.0[0] as f64)
    }

    fn worker(&self, c: u8, r: u8) -> Result<NocCoord, String> {
        self.arch
            .worker_noc(c, r)
            .ok_or_else(|| format!("{} has no worker ({c},{r})", self.arch))
    }

    /// The largest packet, the bytes of `COUNT` of them, DRAM bank 0 and an address in it.
    fn dram(&self) -> (u32, f64, dram::Bank, u32) {
        let bank = dram::bank(self.arch, 0);
        let size = max_packet_bytes(self.arch);
        (
            size,
            (size * COUNT) as f64,
            bank,
            bank.offset as u32 + 0x100_0000,
        )
    }

    /// The two single-transfer latencies (cycles) and the multicast bandwidth: what
    /// [`NocCalibration`] is fitted to.
    fn calibrated_cases(&self) -> Result<[f64; 3], String> {
        let (a, b) = (self.worker(0, 0)?, self.worker(1, 0)?);
        let (size, bytes, bank, at) = self.dram();
        let flit = riscv_linker::noc::flit_bytes(self.arch);
        let l1 = self.one((2, 1), job(a, READ, b, 0x40000, flit, 1))?;
        let dram = self.one((1, 1), job(a, READ, bank.endpoint, at, flit, 1))?;
        let far = self.worker(3, 3)?;
        let mcast = Job {
            tile: a,
            mode: MCAST,
            target: far,
            addr: 0x40000,
            size,
            count: COUNT,
            mcast_start: a,
            dests: 15,
        };
        Ok([l1, dram, bytes / self.one((4, 4), mcast)?])
    }

    fn measure(&self) -> Result<Figures, String> {
        let (a, b) = (self.worker(0, 0)?, self.worker(1, 0)?);
        let (size, bytes, bank, at) = self.dram();
        let dram_read = bytes / self.one((1, 1), job(a, READ, bank.endpoint, at, size, COUNT))?;
        let dram_write = bytes / self.one((1, 1), job(a, WRITE, bank.endpoint, at, size, COUNT))?;
        let one_to_one = bytes / self.one((2, 1), job(a, WRITE, b, 0x40000, size, COUNT))?;
        let [l1, dram, mcast] = self.calibrated_cases()?;
        let emu = vec![
            ("dram_read", dram_read),
            ("dram_write", dram_write),
            ("one_to_one", one_to_one),
            ("multicast", mcast),
            ("l1_read_latency", l1),
            ("dram_read_latency", dram),
        ];

        // N readers of one bank, each its own part of it.
        let mut readers = Vec::new();
        for n in 1..=READERS {
            let jobs: Vec<Job> = (0..n)
                .map(|i| {
                    let t = self.worker(i as u8 % 4, i as u8 / 4)?;
                    Ok(job(
                        t,
                        READ,
                        bank.endpoint,
                        at + i as u32 * size * COUNT,
                        size,
                        COUNT,
                    ))
                })
                .collect::<Result<_, String>>()?;
            let (mut cycles, _, _) = self.run((4, 4), &jobs)?;
            cycles.sort_unstable();
            let c = |i: usize| cycles[i] as f64;
            let median = if n % 2 == 1 {
                c(n / 2)
            } else {
                (c(n / 2 - 1) + c(n / 2)) / 2.0
            };
            let last = c(n - 1);
            readers.push(Readers {
                n,
                first: c(0),
                median,
                last,
                total_bytes_per_cycle: n as f64 * bytes / last,
            });
        }

        // NoC-heavy MIPS: every core of a 4x4 grid reads its right-hand neighbour (wrapping).
        let mut jobs = Vec::new();
        for r in 0..4 {
            for c in 0..4 {
                jobs.push(job(
                    self.worker(c, r)?,
                    READ,
                    self.worker((c + 1) % 4, r)?,
                    0x40000,
                    256,
                    20000,
                ));
            }
        }
        let (_, instr, secs) = self.run((4, 4), &jobs)?;
        Ok(Figures {
            emu,
            readers,
            noc_mips: instr as f64 / secs / 1e6,
        })
    }

    /// Re-fits the calibrated constants. Each case depends on its own constant only: an
    /// access term moves its latency cycle for cycle (in steps of the kernel's polling
    /// loop), the multicast efficiency scales the multicast bandwidth. So each constant
    /// moves by (published - measured) cycles, or by published / measured, a few rounds;
    /// per case the value that came closest wins, ties going to the one nearest the old
    /// value. Returns the fit and what it measures.
    fn calibrate(&mut self) -> Result<(NocCalibration, [f64; 3]), String> {
        let want = [
            hw(self.arch, "l1_read_latency"),
            hw(self.arch, "dram_read_latency"),
            hw(self.arch, "multicast"),
        ];
        let old = self.noc.calibration();
        let as_f64 = |c: &NocCalibration| {
            [
                c.l1_read_cycles as f64,
                c.dram_read_cycles as f64,
                c.multicast_efficiency,
            ]
        };
        let old_v = as_f64(&old);
        // Per case: (error, distance from the old value, value).
        let mut best = [(f64::INFINITY, f64::INFINITY, 0.0); 3];
        for _ in 0..6 {
            let c = self.noc.calibration();
            let v = as_f64(&c);
            let got = self.calibrated_cases()?;
            for i in 0..3 {
                let cand = ((got[i] - want[i]).abs(), (v[i] - old_v[i]).abs(), v[i]);
                if (cand.0, cand.1) < (best[i].0, best[i].1) {
                    best[i] = cand;
                }
            }
            let step = |x: u32, i: usize| (x as f64 + (want[i] - got[i]).round()).max(0.0) as u32;
            let next = NocCalibration {
                l1_read_cycles: step(c.l1_read_cycles, 0),
                dram_read_cycles: step(c.dram_read_cycles, 1),
                multicast_efficiency: (c.multicast_efficiency * want[2] / got[2] * 1000.0).round()
                    / 1000.0,
            };
            if next == c {
                break;
            }
            self.noc = self.noc.calibrated(next);
        }
        let fit = NocCalibration {
            l1_read_cycles: best[0].2 as u32,
            dram_read_cycles: best[1].2 as u32,
            multicast_efficiency: best[2].2,
        };
        self.noc = self.noc.calibrated(fit);
        Ok((fit, self.calibrated_cases()?))
    }
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("noc-bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    // Under the current folder (run it from the checkout's root).
    let mut out = PathBuf::from("target/bench/noc.json");
    let mut mmio_load: Option<u32> = None;
    let mut calibrate = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a value")?),
            "--mmio-load" => {
                let v = args.next().ok_or("--mmio-load needs a number of cycles")?;
                mmio_load = Some(
                    v.parse()
                        .map_err(|_| format!("--mmio-load {v:?}: not a number of cycles"))?,
                );
            }
            "--calibrate" => calibrate = true,
            "-h" | "--help" => {
                return Err("usage: noc-bench [--out FILE] [--mmio-load N] [--calibrate]".into())
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    let work = out
        .parent()
        .unwrap_or(Path::new("."))
        .join("noc-bench-work");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    if calibrate {
        println!(
            "calibrating NocCalibration for the pipeline model (NoC register load latency: {})",
            mmio_load.map_or("documented, 7".to_string(), |n| n.to_string())
        );
        for arch in Arch::ALL {
            let mut b = Bench {
                arch,
                elf: build(&work, arch)?,
                mmio_load,
                noc: NocConfig::for_arch(arch),
            };
            let before = b.noc.calibration();
            let (c, got) = b.calibrate()?;
            println!("{arch:12} was {before:?}");
            println!(
                "{arch:12} fit {c:?}\n{:12} -> l1_read_latency {:.0} (hw {}), dram_read_latency {:.0} (hw {}), multicast {:.1} (hw {})",
                "",
                got[0],
                hw(arch, "l1_read_latency"),
                got[1],
                hw(arch, "dram_read_latency"),
                got[2],
                hw(arch, "multicast")
            );
        }
        println!("paste the fits into NocCalibration::for_arch (emulator/src/noc/mod.rs), then rerun noc-bench");
        return Ok(());
    }
    let mut json = Vec::new();
    let mut max_err = 0.0f64;
    for arch in Arch::ALL {
        let b = Bench {
            arch,
            elf: build(&work, arch)?,
            mmio_load,
            noc: NocConfig::for_arch(arch),
        };
        let f = b.measure()?;
        for (case, emu) in &f.emu {
            let hw = hw(arch, case);
            let err = (emu - hw).abs() / hw;
            max_err = max_err.max(err);
            println!(
                "{arch:12} {case:18} emu {emu:8.1}  hw {hw:6.1}  error {:5.1} %",
                100.0 * err
            );
            json.push(format!("  \"{case}_{arch}_emu\": {emu:.2}"));
            json.push(format!("  \"{case}_{arch}_hw\": {hw:.1}"));
        }
        println!("{arch:12} N readers of DRAM bank 0, {COUNT} x {} B each: cycles first / median / last, spread, bank B/cycle", max_packet_bytes(arch));
        let mut rows = Vec::new();
        for r in &f.readers {
            let spread = r.last / r.first;
            println!(
                "{arch:12}   N {:2}: {:8.0} {:8.0} {:8.0}  spread {:5.2}  total {:5.1}",
                r.n, r.first, r.median, r.last, spread, r.total_bytes_per_cycle
            );
            rows.push(format!(
                "    {{\"n\": {}, \"first\": {:.0}, \"median\": {:.1}, \"last\": {:.0}, \"spread\": {spread:.3}, \"total_bytes_per_cycle\": {:.2}}}",
                r.n, r.first, r.median, r.last, r.total_bytes_per_cycle
            ));
        }
        json.push(format!(
            "  \"readers_{arch}\": [\n{}\n  ]",
            rows.join(",\n")
        ));
        let single = f.emu[0].1;
        let four = f.readers.iter().find(|r| r.n == 4).ok_or("4 readers")?;
        println!(
            "{arch:12} contention: 4 readers on one DRAM bank get {:.1} B/cycle together; total / one reader = {:.3}",
            four.total_bytes_per_cycle,
            four.total_bytes_per_cycle / single
        );
        println!("{arch:12} NoC-heavy 4x4 grid: {:.1} MIPS", f.noc_mips);
        json.push(format!(
            "  \"contention_{arch}_per_reader\": {:.2}",
            four.total_bytes_per_cycle / 4.0
        ));
        json.push(format!(
            "  \"contention_{arch}_split\": {:.3}",
            four.total_bytes_per_cycle / single
        ));
        json.push(format!("  \"noc_mips_{arch}\": {:.1}", f.noc_mips));
    }
    json.push(format!("  \"max_rel_error\": {max_err:.3}"));
    json.push(format!(
        "  \"mmio_load_cycles\": {}",
        mmio_load.unwrap_or(ttprof_emu::Timing::for_arch(Arch::WormholeB0).mmio_load)
    ));
    json.push(format!(
        "  \"host_threads\": {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    ));
    println!("max_rel_error = {max_err:.3}");
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(&out, format!("{{\n{}\n}}\n", json.join(",\n")))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}
