//! Issue 2: the example kernels, built for real, run on the emulator as three ops on a 2x2
//! grid with a consumer draining while they run; the readout must hold exactly the zones
//! the kernels' loops produce (their NoC barrier waits included), properly nested, with names and source lines that match the
//! kernel sources, and monotonic times on every RISC.

use example_abi::Op;
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::path::Path;
use ttprof::decode::RecordKind;
use ttprof::launch::Settings;
use ttprof::oplog::OpLog;
use ttprof::readout::RingReport;
use ttprof::resolve::{Resolution, Resolver};
use ttprof::sites::SiteMeta;
use ttprof_demo::ops::OpSpec;
use ttprof_demo::scenario::{self, Scenario};
use ttprof_tests::workspace;

const OPS: [OpSpec; 3] = [
    OpSpec {
        op: Op::Add,
        tiles: 2,
    },
    OpSpec {
        op: Op::Matmul,
        tiles: 1,
    },
    OpSpec {
        op: Op::Relu,
        tiles: 3,
    },
];

/// Zones (and other records, by name) one core records in one launch of `spec`: what the
/// kernel loops in examples/kernels/src/bin/*.rs do.
fn expected(risc: Risc, spec: &OpSpec) -> BTreeMap<String, u64> {
    let t = spec.tiles as u64;
    let binary = spec.op.is_binary() as u64;
    let mut m = BTreeMap::new();
    let mut add = |name: &str, n: u64| {
        if n > 0 {
            *m.entry(name.to_string()).or_insert(0) += n;
        }
    };
    match risc {
        Risc::Brisc => {
            add("BRISC-FW", 1);
            add("BRISC-KERNEL", 1);
            add("tiles", 1);
            add("read-tile", t);
            add("reserve-in0", t);
            add("noc-read-in0", t);
            add("reserve-in1", t * binary);
            add("noc-read-in1", t * binary);
            // One DRAM read per input tile, each with its barrier.
            add("noc-read-barrier", t * (1 + binary));
            // Signals: each barrier's completion, each CB push.
            add("noc-read-done", t * (1 + binary));
            add("cb-push-0", t);
            add("cb-push-1", t * binary);
        }
        Risc::Trisc0 => {
            add("TRISC-FW", 1);
            add("TRISC-KERNEL", 1);
            add("unpack-tile", t);
            add("wait-in0", t);
            add("wait-in1", t * binary);
            add("wait-src-free", t);
            add("unpack-a", t);
            add("unpack-b", t * binary);
            add("wait-unpacked", t);
            add("cb-pop-0", t);
            add("cb-pop-1", t * binary);
        }
        Risc::Trisc1 => {
            add("TRISC-FW", 1);
            add("TRISC-KERNEL", 1);
            add("math-tile", t);
            add("wait-dst-free", t);
            add("tensix-sem-post-2", t);
            add("tensix-sem-post-0", t);
            add("wait-coprocessor-done", 1);
        }
        Risc::Trisc2 => {
            add("TRISC-FW", 1);
            add("TRISC-KERNEL", 1);
            add("pack-tile", t);
            add("wait-out-space", t);
            add("wait-dst-ready", t);
            add("tensix-sem-post-1", t);
            add("pack-dst", t);
            add("wait-packed", t);
            add("tile-packed", t);
            add("cb-push-4", t);
        }
        Risc::Ncrisc => {
            add("NCRISC-FW", 1);
            add("NCRISC-KERNEL", 1);
            add("write-tile", t);
            add("noc-write", t);
            add("noc-write-barrier", t);
            add("wait-out", t);
            add("noc-write-done", t);
            add("cb-pop-4", t);
        }
    }
    m
}

/// The zone each zone must sit directly inside (by name, `*` ending a prefix), from the
/// kernel sources.
fn parent_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "reserve-in0" | "noc-read-in0" | "reserve-in1" | "noc-read-in1" => "read-tile",
        "wait-in0" | "wait-in1" | "wait-src-free" | "unpack-a" | "unpack-b" | "wait-unpacked" => {
            "unpack-tile"
        }
        "wait-dst-free" => "math-tile",
        "wait-out-space" | "wait-dst-ready" | "pack-dst" | "wait-packed" => "pack-tile",
        "noc-write" | "wait-out" => "write-tile",
        // The barrier waits sit inside the zone around their transfer.
        "noc-read-barrier" => "noc-read-in*",
        "noc-write-barrier" => "noc-write",
        n if n.ends_with("-KERNEL") => return Some(fw_of(n)),
        n if n.ends_with("-FW") => return None,
        _ => "KERNEL",
    })
}

fn fw_of(kernel: &str) -> &'static str {
    match kernel {
        "BRISC-KERNEL" => "BRISC-FW",
        "NCRISC-KERNEL" => "NCRISC-FW",
        _ => "TRISC-FW",
    }
}

fn site(res: &Resolution, ring: usize, run: u32, id: u16) -> &SiteMeta {
    res.site(ring, run, id)
        .unwrap_or_else(|| panic!("ring {ring} run {run}: site {id} unresolved"))
}

/// The source line of a site must be the line of the kernel source that names it.
fn check_source_line(meta: &SiteMeta, kernels: &Path) {
    if meta.name.ends_with("-FW") || meta.name.ends_with("-KERNEL") || meta.name == "PROFILER-STALL"
    {
        return; // the runtime's own sites: their lines are in device-rt
    }
    let file = kernels.join(&meta.file);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let line = text
        .lines()
        .nth(meta.line as usize - 1)
        .unwrap_or_else(|| panic!("{}:{} past the end", meta.file, meta.line));
    // A signal made by a runtime helper (`ttprof_rt::signal::cb_push(n)`) is located at the
    // kernel's line that calls the helper.
    let helper = meta.package == "ttprof-rt";
    assert!(
        if helper {
            line.contains("ttprof_rt::signal::")
        } else {
            line.contains(&format!("!(\"{}\"", meta.name))
        },
        "{}:{} is {line:?}, which does not name {:?}",
        meta.file,
        meta.line,
        meta.name
    );
}

fn check_ring(ring_index: usize, ring: &RingReport, res: &Resolution, kernels: &Path) {
    let r = &ring.records;
    let risc = ring.id.risc;
    // Monotonic: records are in non-decreasing time order, every zone ends after it starts.
    for i in 0..r.len() {
        assert!(
            r.start_at(i) <= r.end_at(i),
            "{risc}: record {i} ends before it starts"
        );
        if i > 0 {
            assert!(
                r.end_at(i - 1) <= r.end_at(i),
                "{risc}: record {i} goes back in time"
            );
        }
    }
    for (run_index, spec) in OPS.iter().enumerate() {
        let run = run_index as u32 + 1;
        let rows: Vec<usize> = (0..r.len())
            .filter(|&i| r.run_at(i) == run && r.kind()[i] != RecordKind::Run)
            .collect();
        let mut counts = BTreeMap::new();
        for &i in &rows {
            let meta = site(res, ring_index, run, r.site()[i]);
            check_source_line(meta, kernels);
            *counts.entry(meta.name.clone()).or_insert(0u64) += 1;
        }
        assert_eq!(
            counts,
            expected(risc, spec),
            "{} run {run} ({:?})",
            ring.id.location(),
            spec.op
        );
        // Nesting: zones of one run form a tree matching the kernel's scopes.
        let mut zones: Vec<(u64, u64, String)> = rows
            .iter()
            .filter(|&&i| matches!(r.kind()[i], RecordKind::Zone | RecordKind::ValueZone))
            .map(|&i| {
                (
                    r.start_at(i),
                    r.end_at(i),
                    site(res, ring_index, run, r.site()[i]).name.clone(),
                )
            })
            .collect();
        zones.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut open: Vec<(u64, u64, String)> = Vec::new();
        for z in zones {
            while open
                .last()
                .is_some_and(|p| p.1 <= z.0 && !(p.0 == z.0 && p.1 >= z.1))
            {
                open.pop();
            }
            if let Some(p) = open.last() {
                assert!(
                    z.1 <= p.1,
                    "{risc}: {} [{}, {}] overlaps {} [{}, {}] without nesting",
                    z.2,
                    z.0,
                    z.1,
                    p.2,
                    p.0,
                    p.1
                );
                let want = match parent_of(&z.2) {
                    Some("KERNEL") => risc_kernel(risc),
                    Some(n) => n,
                    None => panic!("{risc}: {} is nested inside {}", z.2, p.2),
                };
                let inside = match want.strip_suffix('*') {
                    Some(prefix) => p.2.starts_with(prefix),
                    None => p.2 == want,
                };
                assert!(
                    inside,
                    "{risc}: {} must be directly inside {want}, not {}",
                    z.2, p.2
                );
            } else {
                assert!(
                    z.2.ends_with("-FW"),
                    "{risc}: {} is outside the FW zone",
                    z.2
                );
            }
            open.push(z);
        }
    }
    assert_eq!(ring.dropped, 0);
    assert_eq!(ring.losses_in_band, 0);
}

fn risc_kernel(risc: Risc) -> &'static str {
    match risc {
        Risc::Brisc => "BRISC-KERNEL",
        Risc::Ncrisc => "NCRISC-KERNEL",
        _ => "TRISC-KERNEL",
    }
}

#[test]
fn example_kernels_on_an_emulated_wormhole_read_out_exactly() {
    read_out_exactly(Arch::WormholeB0, (2, 2));
}

#[test]
fn example_kernels_on_an_emulated_blackhole_read_out_exactly() {
    read_out_exactly(Arch::Blackhole, (2, 1));
}

fn read_out_exactly(arch: Arch, grid: (u8, u8)) {
    let out = workspace().join("target/test-end-to-end").join(arch.name());
    let _ = std::fs::remove_dir_all(&out);
    let elfs = scenario::build_kernels(arch, &out.join("kernels")).unwrap();
    let cores = grid.0 as usize * grid.1 as usize;
    let s = Scenario {
        lines: false,
        backend: Default::default(),
        sample: None,
        arch,
        grid,
        ops: OPS.to_vec(),
        out: out.clone(),
        threads: 2,
        // Drain often, so the rings wrap and the consumer and producers interleave.
        drain_every_cycles: 20_000,
        settings: Settings {
            consumer: true,
            ..Settings::default()
        },
        clock: scenario::realistic_clock(arch),
    };
    let outcome = scenario::run(&s, &elfs, |_| {}).unwrap();
    let readout = &outcome.readout;
    assert!(readout.issues().is_empty(), "{:?}", readout.issues());
    assert_eq!(
        readout.rings().len(),
        cores * 5,
        "every RISC of every tile ran"
    );
    let oplog = OpLog::read(
        &outcome.out.join("ops.jsonl"),
        &ttprof::inputs::Inputs::none(),
    )
    .unwrap();
    let res = Resolver::new(&oplog).resolve(readout);
    assert!(res.issues.is_empty(), "{:?}", res.issues);
    assert_eq!(res.unresolved, 0);
    let kernels = workspace().join("examples/kernels");
    for (i, ring) in readout.rings().iter().enumerate() {
        check_ring(i, ring, &res, &kernels);
    }
    // The device CSV the session wrote has tt-metal's header, with the clock fit's frequency
    // (the emulated chip runs 1.5 % slow), and rows for every tile and RISC.
    let csv = out.join("profile_log_device.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let fitted = (arch.aiclk_mhz() as f64 * 0.985).round() as u32;
    assert_eq!(
        ttprof::csv::freq_mhz(&outcome.fit.timebase),
        fitted,
        "{}",
        outcome.fit
    );
    let arch_line = format!(
        "ARCH: {}, CHIP_FREQ[MHz]: {fitted}, Max Compute Cores: {cores}",
        arch.name()
    );
    assert_eq!(lines.next().unwrap(), arch_line);
    assert_eq!(lines.next().unwrap(), ttprof::csv::HEADER);
    let mut seen = std::collections::BTreeSet::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 15, "{l}");
        seen.insert((f[1].to_string(), f[2].to_string(), f[3].to_string()));
    }
    assert_eq!(seen.len(), cores * 5);
}
