//! The NoC and DRAM model, driven by a data-movement kernel written against the NIU
//! registers (`noc_kernels/roundtrip.c`, compiled with `riscv64-unknown-elf-gcc`): it
//! reads a tensor from interleaved DRAM, round-trips it through another tile, multicasts,
//! increments a remote semaphore and writes the tensor back, checking the status counters
//! at each step, on both arches.

use riscv_linker::noc::{counter, dram};
use riscv_linker::{script::linker_script, Arch, NocCoord, Risc};
use std::path::PathBuf;
use std::process::Command;
use ttprof_emu::{Device, DeviceConfig, EmuError, FaultKind, RunSummary};

const START: &str = r#"
__asm__(".section .ttprof.boot,\"ax\"\n j _start\n.section .ttprof.start,\"ax\"\n.globl _start\n_start:\n la sp, __stack_top\n call main\n ecall\n1: j 1b\n");
"#;

/// Compiles `noc_kernels/<name>.c` for BRISC of `arch`.
fn build(name: &str, arch: Arch) -> Vec<u8> {
    // One directory per test thread: tests build the same kernel concurrently.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("noc-tests")
        .join(
            format!("{:?}", std::thread::current().id())
                .replace(|c: char| !c.is_ascii_alphanumeric(), ""),
        );
    std::fs::create_dir_all(&dir).unwrap();
    let src_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/noc_kernels/{name}.c"));
    let src = dir.join(format!("{name}-{arch}.c"));
    let ld = dir.join(format!("{name}-{arch}.x"));
    let elf = dir.join(format!("{name}-{arch}.elf"));
    std::fs::write(
        &src,
        format!("{START}\n{}", std::fs::read_to_string(&src_path).unwrap()),
    )
    .unwrap();
    std::fs::write(&ld, linker_script(arch, Risc::Brisc)).unwrap();
    let mut cmd = Command::new("riscv64-unknown-elf-gcc");
    cmd.args([
        "-march=rv32im",
        "-mabi=ilp32",
        "-nostdlib",
        "-nostartfiles",
        "-ffreestanding",
        "-O2",
        "-g",
    ])
    .args(["-fno-tree-loop-distribute-patterns", "-o"])
    .arg(&elf)
    .arg(&src)
    .arg(format!("-Wl,-T,{}", ld.display()));
    if arch == Arch::Blackhole {
        cmd.arg("-DBLACKHOLE");
    }
    let out = cmd
        .output()
        .expect("riscv64-unknown-elf-gcc is needed: run scripts/install-test-tools.sh");
    assert!(
        out.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&elf).unwrap()
}

const PARAMS: u32 = 0x30000;
const RES: u32 = 0x30400;
const PAGES: u32 = 24;
const PAGE: u32 = 2048;
const IN_BASE: u32 = 0x10_0000;
const OUT_BASE: u32 = 0x20_0000;

fn tensor() -> Vec<u8> {
    (0..PAGES * PAGE)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

struct Run {
    dev: Device,
    summary: RunSummary,
    a: NocCoord,
    b: NocCoord,
    c: NocCoord,
}

fn setup(arch: Arch, threads: usize) -> (Device, NocCoord, NocCoord, NocCoord) {
    let mut cfg = DeviceConfig::new(arch, (3, 1));
    cfg.threads = threads;
    cfg.clock_mailbox = false;
    let mut dev = Device::new(cfg).unwrap();
    let t = dev.tiles();
    let (a, b, c) = (t[0], t[1], t[2]);
    dev.write_dram_interleaved(0, IN_BASE, PAGE, &tensor())
        .unwrap();
    // The bank table, as firmware fills it, then the kernel's parameters.
    let mut words = Vec::new();
    for bank in 0..16 {
        let bk = if bank < dram::banks(arch) {
            Some(dram::bank(arch, bank))
        } else {
            None
        };
        words.extend(bk.map_or([0, 0, 0], |b| {
            [b.endpoint.x as u32, b.endpoint.y as u32, b.offset as u32]
        }));
    }
    let (w, h) = arch.noc_grid();
    words.extend([dram::banks(arch), PAGES, PAGE, IN_BASE, OUT_BASE]);
    words.extend([
        b.x as u32, b.y as u32, c.x as u32, c.y as u32, w as u32, h as u32,
    ]);
    for (i, v) in words.iter().enumerate() {
        dev.write_u32(0, a, PARAMS + 4 * i as u32, *v).unwrap();
    }
    dev.load_kernel(
        0,
        a,
        Risc::Brisc,
        &build("roundtrip", arch),
        "roundtrip.elf",
    )
    .unwrap();
    (dev, a, b, c)
}

fn run(arch: Arch, threads: usize) -> Run {
    let (mut dev, a, b, c) = setup(arch, threads);
    let summary = dev.run().unwrap_or_else(|e| panic!("{arch}: {e}"));
    Run {
        dev,
        summary,
        a,
        b,
        c,
    }
}

fn res(r: &Run, i: u32) -> u32 {
    r.dev.read_u32(0, r.a, RES + 4 * i).unwrap()
}

fn l1(r: &Run, tile: NocCoord, addr: u32, len: u32) -> Vec<u8> {
    let mut w = vec![0u32; (len / 4) as usize];
    r.dev.read_words(0, tile, addr, &mut w).unwrap();
    w.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn check_roundtrip(arch: Arch) {
    let r = run(arch, 1);
    let data = tensor();
    assert_eq!(
        r.summary.hart(0, r.a, Risc::Brisc).unwrap().exit_code,
        Some(0)
    );
    let (w, h) = arch.noc_grid();
    let node = |c: NocCoord| c.x as u32 | (c.y as u32) << 6;
    assert_eq!(res(&r, 0) & 0xFFF, node(r.a), "NODE_ID on NoC0");
    assert_eq!(
        res(&r, 0) >> 12,
        w as u32 | (h as u32) << 6,
        "NODE_ID carries the grid size"
    );
    assert_eq!(
        res(&r, 1) & 0xFFF,
        node(NocCoord::new(w - 1 - r.a.x, h - 1 - r.a.y)),
        "NODE_ID on NoC1 is mirrored"
    );
    assert_eq!(res(&r, 2), 1, "CMD_CTRL reads busy right after the issue");
    assert_eq!(
        res(&r, 3),
        0,
        "RD_RESP_RECEIVED has not moved right after the issue"
    );
    assert_eq!(res(&r, 4), 0xDEAD_BEEF, "polled too early: the old data");
    assert_eq!(
        res(&r, 5).to_le_bytes(),
        data[..4],
        "after the barrier: the data"
    );
    let latency = res(&r, 14);
    assert!(
        (150..1500).contains(&latency),
        "{arch}: one DRAM page read took {latency} cycles"
    );
    assert!(
        res(&r, 7) > 0,
        "REQS_OUTSTANDING_ID(3) counts reads in flight"
    );
    assert_eq!(res(&r, 6), 0, "and is back to 0 after the barrier");
    let bursts = (PAGES * PAGE).div_ceil(riscv_linker::noc::max_packet_bytes(arch));
    assert_eq!(
        (res(&r, 8), res(&r, 9)),
        (bursts, bursts),
        "one sent and one ack per write"
    );
    assert_eq!(res(&r, 10), 0, "the copy read back from B matches");
    assert_eq!(res(&r, 11), 1, "one atomic response");
    assert_eq!(
        res(&r, 12),
        2,
        "a multicast to two tiles is acknowledged twice"
    );
    assert_eq!(res(&r, 13), 0, "the NoC1 read matches");
    // What landed where.
    assert_eq!(
        l1(&r, r.b, 0x40000, PAGES * PAGE),
        data,
        "tile B holds the tensor"
    );
    assert_eq!(
        r.dev.read_u32(0, r.b, 0x30800).unwrap(),
        5,
        "B's semaphore was incremented"
    );
    let mcast: Vec<u8> = (0..64u32)
        .flat_map(|i| (0x5A5A_0000 + i).to_le_bytes())
        .collect();
    assert_eq!(l1(&r, r.b, 0x31000, 256), mcast);
    assert_eq!(l1(&r, r.c, 0x31000, 256), mcast);
    assert_eq!(
        r.dev.read_u32(0, r.c, 0x31100).unwrap(),
        0x1234_5678,
        "inline write landed on C"
    );
    assert_eq!(
        r.dev
            .read_dram_interleaved(0, OUT_BASE, PAGE, data.len())
            .unwrap(),
        data,
        "written back to DRAM"
    );
    // The counters persist after the kernel and agree with what it issued.
    let reads = PAGES + bursts;
    assert_eq!(
        r.dev
            .noc_counter(0, r.a, 0, counter::RD_RESP_RECEIVED)
            .unwrap(),
        reads
    );
    assert_eq!(
        r.dev
            .noc_counter(0, r.a, 1, counter::RD_RESP_RECEIVED)
            .unwrap(),
        1
    );
    assert_eq!(
        r.dev
            .noc_counter(0, r.a, 0, counter::WR_ACK_RECEIVED)
            .unwrap(),
        bursts + 2 + PAGES
    );
    assert_eq!(
        r.dev
            .noc_counter(0, r.a, 0, counter::POSTED_WR_REQ_SENT)
            .unwrap(),
        1
    );
    assert_eq!(
        r.dev.noc_counter(0, r.a, 0, counter::CMD_ACCEPTED).unwrap(),
        reads + bursts + 1 + 1 + 1 + PAGES
    );
}

#[test]
fn wormhole_kernel_round_trips_a_dram_tensor_through_another_tile() {
    check_roundtrip(Arch::WormholeB0);
}

#[test]
fn blackhole_kernel_round_trips_a_dram_tensor_through_another_tile() {
    check_roundtrip(Arch::Blackhole);
}

#[test]
fn noc_runs_are_identical_whatever_the_thread_count() {
    for arch in Arch::ALL {
        let one = run(arch, 1);
        let four = run(arch, 4);
        assert_eq!(one.summary, four.summary, "{arch}");
        for t in [one.a, one.b, one.c] {
            assert_eq!(
                l1(&one, t, 0x30000, 0x40000),
                l1(&four, t, 0x30000, 0x40000),
                "{arch} {t}"
            );
        }
    }
}

#[test]
fn a_request_to_a_tile_that_is_not_emulated_is_a_fault_naming_it() {
    let arch = Arch::WormholeB0;
    let (mut dev, a, _, _) = setup(arch, 1);
    // Point tile B's coordinates at a worker outside the 3x1 grid.
    let outside = arch.worker_noc(5, 5).unwrap();
    dev.write_u32(0, a, PARAMS + 4 * (48 + 5), outside.x as u32)
        .unwrap();
    dev.write_u32(0, a, PARAMS + 4 * (48 + 6), outside.y as u32)
        .unwrap();
    match dev.run() {
        Err(EmuError::Fault(f)) => match &f.kind {
            FaultKind::Noc(msg) => {
                assert!(
                    msg.contains("outside the emulated grid") && msg.contains(&outside.to_string()),
                    "{msg}"
                )
            }
            k => panic!("wrong fault {k:?}"),
        },
        other => panic!("expected a fault, got {other:?}"),
    }
}

#[test]
fn host_dram_access_checks_its_bounds() {
    let mut dev = Device::new(DeviceConfig::new(Arch::Blackhole, (1, 1))).unwrap();
    assert!(
        dev.write_dram(0, 8, 0, &[1]).is_err(),
        "Blackhole has 8 channels"
    );
    assert!(dev
        .write_dram(0, 7, dram::channel_size(Arch::Blackhole) - 1, &[1, 2])
        .is_err());
    assert!(dev.write_dram_interleaved(0, 0, 0, &[1]).is_err());
    dev.write_dram(0, 7, 100, &[1, 2, 3]).unwrap();
    assert_eq!(dev.read_dram(0, 7, 99, 5).unwrap(), vec![0, 1, 2, 3, 0]);
}

/// Eight cores of a 4x2 grid each read 16 of the largest packets from DRAM bank 0 at once,
/// each from its own part of the bank, with `threads` host threads. Returns each core's
/// cycles from its first issue to its barrier's end.
fn dram_readers(arch: Arch, threads: usize) -> Vec<u32> {
    let mut cfg = DeviceConfig::new(arch, (4, 2));
    cfg.threads = threads;
    cfg.clock_mailbox = false;
    let mut dev = Device::new(cfg).unwrap();
    let bank = dram::bank(arch, 0);
    let size = riscv_linker::noc::max_packet_bytes(arch);
    let count = 16;
    let elf = build("dram_reader", arch);
    let tiles = dev.tiles();
    for (i, &t) in tiles.iter().enumerate() {
        let at = bank.offset + (i as u64 * count as u64 * size as u64);
        // The last packet of each core's part starts with its number: the data says whose.
        let last = at + (count as u64 - 1) * size as u64;
        dev.write_dram(0, bank.channel, last, &(i as u32 + 1).to_le_bytes())
            .unwrap();
        for (k, v) in [
            bank.endpoint.x as u32,
            bank.endpoint.y as u32,
            at as u32,
            size,
            count,
        ]
        .iter()
        .enumerate()
        {
            dev.write_u32(0, t, PARAMS + 4 * k as u32, *v).unwrap();
        }
        dev.load_kernel(0, t, Risc::Brisc, &elf, "dram_reader.elf")
            .unwrap();
    }
    dev.run().unwrap_or_else(|e| panic!("{arch}: {e}"));
    let mut cycles = Vec::new();
    for (i, &t) in tiles.iter().enumerate() {
        assert_eq!(
            dev.read_u32(0, t, RES + 4).unwrap(),
            i as u32 + 1,
            "{arch} {t}: the last read's data"
        );
        cycles.push(dev.read_u32(0, t, RES).unwrap());
    }
    cycles
}

#[test]
fn readers_of_one_dram_bank_finish_as_the_routers_serve_them_on_any_thread_count() {
    for arch in Arch::ALL {
        let one = dram_readers(arch, 1);
        let two = dram_readers(arch, 2);
        let four = dram_readers(arch, 4);
        assert_eq!(one, two, "{arch}");
        assert_eq!(one, four, "{arch}");
        // Round-robin arbitration along the requests' routes: not all together.
        let (lo, hi) = (*one.iter().min().unwrap(), *one.iter().max().unwrap());
        assert!(hi as f64 >= 1.5 * lo as f64, "{arch}: {one:?}");
        // And the bank is never idle: eight readers' bytes at about the endpoint's rate.
        let cfg = ttprof_emu::NocConfig::for_arch(arch);
        let bytes = 8.0 * 16.0 * riscv_linker::noc::max_packet_bytes(arch) as f64;
        let rate = bytes / hi as f64;
        assert!(
            rate > 0.95 * cfg.dram_source_bytes_per_cycle
                && rate <= cfg.dram_source_bytes_per_cycle,
            "{arch}: {rate} B/cycle"
        );
    }
}
