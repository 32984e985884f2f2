//! Issue 23: C and C++ kernels on ttprof's runtime (include/ttprof.h, tt-metal's
//! tools/profiler/kernel_profiler.hpp, libttprof_rt_c.a), built with `ttprof::kernels::build_c`
//! as `ttprof build` builds them and run on the emulator:
//!
//! * every tt-metal macro records what it should, named (several per scope, a call over
//!   several lines, `NIf` with a false flag records nothing, sums, data, both event forms),
//!   in C++ and in C;
//! * without `PROFILE_KERNEL` the `.text` is byte-identical to the same kernel without the
//!   macros;
//! * a C++ kernel writes exactly the records its Rust twin writes, decoded by the reference
//!   decoder `ttprof_rt::wire::decode`;
//! * a C++ zone costs within 2 cycles of a Rust zone (the emulator's pipeline model).

use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use ttprof::devmem::DeviceMemory;
use ttprof::kernels::{build_c, CKernelBuild};
use ttprof_rt::wire::{self, Decoded, Record};
use ttprof_tests::{csv_rows, text_bytes, workspace};

/// Builds `sources` (under examples/cxx) for `risc` into target/cxx-tests/`dir`.
fn build(sources: &[PathBuf], risc: Risc, profile: bool, dir: &str) -> PathBuf {
    let mut b = CKernelBuild::new(sources.to_vec(), risc, Arch::WormholeB0);
    b.profile = profile;
    b.out_dir = workspace().join("target/cxx-tests").join(dir);
    build_c(&b).unwrap_or_else(|e| panic!("{e}"))
}

/// An example Rust kernel, with or without `profile`, copied out of cargo's output under the
/// demo's build lock (the tests of this file build both feature sets at once).
fn rust_kernel(name: &'static str, profile: bool) -> PathBuf {
    let dir = workspace().join("target/cxx-tests").join(if profile {
        "rust-profile"
    } else {
        "rust-plain"
    });
    let built = ttprof_demo::scenario::build_kernel_set(Arch::WormholeB0, profile, &[name], &dir)
        .unwrap_or_else(|e| panic!("{e}"));
    built[name].clone()
}

fn example(name: &str) -> PathBuf {
    workspace().join("examples/cxx").join(name)
}

/// Runs `elf` on BRISC of one tile with these runtime arguments, every record left in the
/// ring (no consumer), and decodes the ring with the reference decoder: `(record, its size in
/// halfwords)` in ring order, and the ELF's site names.
fn run_and_decode(
    elf: &Path,
    args: &[u32],
    name: &str,
) -> (Vec<(Record, usize)>, BTreeMap<u16, String>) {
    let (mut dev, mem, tile) = ttprof_tests::emulated_device(&format!("cxx-tests/{name}"), (1, 1));
    ttprof::launch::set_run_id(&mem, 0, tile, 1).unwrap();
    for (i, v) in args.iter().enumerate() {
        mem.write_u32(
            0,
            tile,
            riscv_linker::runtime_args(Risc::Brisc).start + 4 * i as u32,
            *v,
        )
        .unwrap();
    }
    dev.load_kernel(0, tile, Risc::Brisc, &std::fs::read(elf).unwrap(), name)
        .unwrap();
    dev.run().unwrap_or_else(|e| panic!("{name}: {e}"));
    let head = mem
        .read_u32(0, tile, profiler::ring_word(Risc::Brisc, ring::HEAD))
        .unwrap();
    let data = profiler::ring_data(Risc::Brisc);
    assert!(
        head < data.size,
        "{name}: the records fit the ring without a wrap ({head} bytes)"
    );
    let halves: Vec<u16> = (0..head / 2)
        .map(|i| {
            let w = mem.read_u32(0, tile, data.start + (4 * (i / 2))).unwrap();
            (w >> (16 * (i % 2))) as u16
        })
        .collect();
    let mut records = Vec::new();
    let (mut at, mut reference) = (0, 0u64);
    while at < halves.len() {
        match wire::decode(&halves[at..], reference)
            .unwrap_or_else(|e| panic!("{name}: {e:?} at halfword {at}"))
        {
            Decoded::Record(r, len) => {
                reference = r.ref_time().unwrap_or(reference);
                records.push((r, len));
                at += len;
            }
            Decoded::Pad => panic!("{name}: a pad in a ring that did not wrap"),
        }
    }
    let k = ttprof::elf::KernelElf::load(elf, &ttprof::inputs::Inputs::none()).unwrap();
    let names = k.sites.iter().map(|(id, m)| (id, m.name.clone())).collect();
    (records, names)
}

/// A record without its times: what it is, its site's name, its payload and its size.
fn shape(r: &Record, len: usize, names: &BTreeMap<u16, String>) -> String {
    let name = |id: &u16| {
        names
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("unknown site {id}"))
    };
    match r {
        Record::Zone { id, value, .. } => {
            format!("zone {} value {value:?} ({len} halfwords)", name(id))
        }
        Record::Event { id, .. } => format!("event {} ({len})", name(id)),
        Record::Data { id, data, .. } => format!("data {} = {data:#x} ({len})", name(id)),
        Record::Sum { id, count, .. } => format!("sum {} x{count} ({len})", name(id)),
        Record::Time { .. } => format!("time ({len})"),
        Record::Run { run_id, .. } => format!("run {run_id} ({len})"),
        Record::Loss { count, .. } => format!("loss {count} ({len})"),
    }
}

#[test]
fn a_cxx_kernel_writes_exactly_what_its_rust_twin_writes() {
    let rust = rust_kernel("twin", true);
    let cxx = build(&[example("twin.cpp")], Risc::Brisc, true, "twin");
    let n = 20;
    let (r, rn) = run_and_decode(&rust, &[n], "twin-rust");
    let (c, cn) = run_and_decode(&cxx, &[n], "twin-cxx");
    let r: Vec<String> = r.iter().map(|(x, l)| shape(x, *l, &rn)).collect();
    let c: Vec<String> = c.iter().map(|(x, l)| shape(x, *l, &cn)).collect();
    assert_eq!(
        c, r,
        "the C++ ring, record by record, against the Rust ring"
    );
    // What the twins write: short zones (3 halfwords) for the dense ones, the 32-bit form for
    // the long one, a value zone per iteration with its last value, every other kind once;
    // value zones, events and data in their 16-bit-time forms (issue 39: 6, 3 and 7
    // halfwords, from the shared record routines both languages call).
    let count = |s: &str| c.iter().filter(|x| x.as_str() == s).count();
    assert_eq!(
        count("zone outer value None (3 halfwords)"),
        n as usize,
        "{c:#?}"
    );
    assert_eq!(count("zone inner value None (3 halfwords)"), n as usize);
    assert_eq!(count("zone long value None (6 halfwords)"), 1);
    assert_eq!(count("zone value value Some(119) (6 halfwords)"), 1);
    assert_eq!(
        count("event event (3)")
            + count("data data = 0x123456789abc (7)")
            + count("sum sum x3 (12)"),
        3
    );
    assert_eq!(
        count("zone wait value None (3 halfwords)")
            + count("zone after-flush value None (3 halfwords)"),
        2
    );
    assert_eq!(
        (c.first().map(String::as_str), c.last().map(String::as_str)),
        (
            Some("run 1 (8)"),
            Some("zone BRISC-FW value None (6 halfwords)")
        )
    );
    // The wait's type is in the C++ site's metadata, as `wait!` puts it in the Rust one's.
    let k = ttprof::elf::KernelElf::load(&cxx, &ttprof::inputs::Inputs::none()).unwrap();
    let wait = k.sites.iter().find(|(_, m)| m.name == "wait").unwrap().1;
    assert_eq!(wait.wait, Some(ttprof::sites::Wait::CbFront(3)));
}

/// Runs the tt-metal macro kernel on a 2x1 grid through a session, twice, and checks every
/// macro's rows in the device CSV.
fn check_tt_metal_macros(source: &str, out: &str) {
    let elf = build(&[example(source)], Risc::Brisc, true, out);
    let dir = workspace().join("target/cxx-tests").join(out).join("run");
    let _ = std::fs::remove_dir_all(&dir);
    let mut s = ttprof::session::Session::start(ttprof::session::Config::new(
        Arch::WormholeB0,
        (2, 1),
        &dir,
    ))
    .unwrap();
    let (n, id) = (7u32, 4242u32);
    let op = ttprof::session::Op::new("macros")
        .kernel(Risc::Brisc, &elf)
        .args(Risc::Brisc, vec![n, id]);
    for _ in 0..2 {
        s.launch(&op).unwrap();
    }
    let profile = s.finish().unwrap();
    assert_eq!(
        profile.issues().filter(|i| i.is_error()).count(),
        0,
        "{:#?}",
        profile.issues().collect::<Vec<_>>()
    );
    let rows = csv_rows(&dir.join("profile_log_device.csv"));
    let count = |name: &str, kind: &str| {
        rows.get(&(name.to_string(), kind.to_string()))
            .map_or(0, Vec::len)
    };
    let launches = 2 * 2; // two tiles, two launches
    let n = n as usize;
    for z in ["two-per-scope-a", "two-per-scope-b", "multi-line"] {
        assert_eq!(
            (count(z, "ZONE_START"), count(z, "ZONE_END")),
            (launches * n, launches * n),
            "{source}: {z}"
        );
    }
    assert_eq!(
        count("if-false", "ZONE_START"),
        0,
        "{source}: NIf with a false flag records nothing"
    );
    assert_eq!(
        count("if-odd", "ZONE_START"),
        launches * (n / 2),
        "{source}: NIf honours its flag"
    );
    for sum in ["sum-1", "sum-2"] {
        let totals = &rows[&(sum.to_string(), "ZONE_TOTAL".to_string())];
        assert_eq!(
            totals.len(),
            launches,
            "{source}: one {sum} total per launch"
        );
        assert!(
            totals
                .iter()
                .all(|(_, meta)| meta == &format!("{{\"count\": {n}}}")),
            "{source}: {totals:?}"
        );
    }
    let data = &rows[&("data".to_string(), "TS_DATA".to_string())];
    let mut values: Vec<u64> = data.iter().map(|(d, _)| d.parse().unwrap()).collect();
    values.sort();
    values.dedup();
    assert_eq!(
        values,
        (0..n as u64).map(|i| i << 32 | 7).collect::<Vec<_>>(),
        "{source}"
    );
    assert_eq!(data.len(), launches * n);
    assert_eq!(
        count("named-event", "TS_EVENT"),
        launches,
        "{source}: the name form"
    );
    let numbered = &rows[&("DeviceRecordEvent".to_string(), "TS_DATA".to_string())];
    assert!(
        numbered.len() == launches && numbered.iter().all(|(d, _)| d == "4242"),
        "{source}: the numeric form: {numbered:?}"
    );
    assert_eq!(count("BRISC-KERNEL", "ZONE_START"), launches);
    // Every site resolves to the source line of its macro, the multi-line call to its first line.
    let k = ttprof::elf::KernelElf::load(&elf, &ttprof::inputs::Inputs::none()).unwrap();
    let line = |name: &str| {
        k.sites
            .iter()
            .find(|(_, m)| m.name == name)
            .map(|(_, m)| (m.line, m.file.clone()))
            .unwrap()
    };
    let text = std::fs::read_to_string(example(source)).unwrap();
    let at = |needle: &str| 1 + text.lines().position(|l| l.contains(needle)).unwrap() as u32;
    assert_eq!(
        line("multi-line").0,
        at("\"multi-line\"") - 1,
        "{source}: the line of the call's first line"
    );
    assert_eq!(
        line("two-per-scope-b").0,
        at("DeviceZoneScopedN(\"two-per-scope-b\")"),
        "{source}: two zones on one line"
    );
    assert!(line("two-per-scope-a").1.ends_with(source));
}

#[test]
fn tt_metal_macros_record_what_they_name_in_cxx() {
    check_tt_metal_macros("tt_metal_macros.cpp", "macros-cxx");
}

#[test]
fn tt_metal_macros_record_what_they_name_in_c() {
    check_tt_metal_macros("tt_metal_macros.c", "macros-c");
}

/// Every profiler macro of the C/C++ API (tt-metal's and ttprof.h's).
const MACROS: [&str; 10] = [
    "DeviceZoneScopedN",
    "DeviceTimestampedData",
    "DeviceRecordEvent",
    "DeviceZoneScopedSumN",
    "kernel_profiler::quick_push",
    "TTPROF_",
    "ttprof__value_zone_set",
    "ttprof_publish",
    "ttprof_flush",
    "SYNC_",
];

/// The source without instrumentation: every statement that uses a profiler macro goes,
/// over as many lines as its parentheses take.
fn strip(text: &str, stripped: &mut usize) -> String {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for l in text.lines() {
        let code = !l.trim_start().starts_with("//") && !l.trim_start().starts_with('#');
        if depth > 0 || (code && MACROS.iter().any(|m| l.contains(m))) {
            if depth == 0 {
                *stripped += 1;
            }
            depth += l.matches('(').count() as i32 - l.matches(')').count() as i32;
            continue;
        }
        out.push(l);
    }
    assert_eq!(depth, 0, "unbalanced parentheses");
    out.join("\n") + "\n"
}

#[test]
fn without_profile_kernel_the_text_is_byte_identical_to_the_kernel_without_the_macros() {
    let plain_dir = workspace().join("target/cxx-tests/plain-src");
    std::fs::create_dir_all(&plain_dir).unwrap();
    for source in [
        "tt_metal_macros.cpp",
        "tt_metal_macros.c",
        "twin.cpp",
        "bench.cpp",
    ] {
        let mut stripped = 0;
        let text = std::fs::read_to_string(example(source)).unwrap();
        let plain_src = plain_dir.join(source);
        std::fs::write(&plain_src, strip(&text, &mut stripped)).unwrap();
        assert!(
            stripped >= 3,
            "{source}: {stripped} macro statements stripped"
        );
        let with = build(
            &[example(source)],
            Risc::Brisc,
            false,
            &format!("noprofile-{source}"),
        );
        let without = build(&[plain_src], Risc::Brisc, false, &format!("plain-{source}"));
        let profiled = build(
            &[example(source)],
            Risc::Brisc,
            true,
            &format!("profile-{source}"),
        );
        assert_eq!(
            text_bytes(&with),
            text_bytes(&without),
            "{source}: the macros without PROFILE_KERNEL change the .text"
        );
        assert_ne!(
            text_bytes(&with),
            text_bytes(&profiled),
            "{source}: with PROFILE_KERNEL the macros record"
        );
    }
}

#[test]
fn a_cxx_zone_costs_within_2_cycles_of_a_rust_zone() {
    use ttprof::launch::Policy;
    use ttprof_demo::bench::{launch, BenchRun, DENSE};
    let dir = workspace().join("target/cxx-tests/cost");
    let (rust_on, rust_off) = (rust_kernel("bench", true), rust_kernel("bench", false));
    let cxx_on = build(&[example("bench.cpp")], Risc::Brisc, true, "cost-profile");
    let cxx_off = build(&[example("bench.cpp")], Risc::Brisc, false, "cost-plain");
    // Cycles per zone: (profile - plain) between 1000 and 3000 iterations of two nested zones.
    let per_zone = |on: &Path, off: &Path| -> (f64, f64) {
        let run = |elf: &Path, iterations| {
            let r = BenchRun {
                mode: DENSE,
                record: 0,
                iterations,
                work: 4,
                recording: true,
                policy: Policy::Block,
                drain_every: Some(2_000),
            };
            launch(Arch::WormholeB0, elf, &r, &dir).unwrap()
        };
        let (a, b, pa, pb) = (
            run(on, 1_000),
            run(on, 3_000),
            run(off, 1_000),
            run(off, 3_000),
        );
        assert_eq!(
            b.readout.zones() - a.readout.zones(),
            4_000,
            "{}",
            on.display()
        );
        let zones = 4_000.0;
        let cycles = ((b.cycles - a.cycles) as f64 - (pb.cycles - pa.cycles) as f64) / zones;
        let bytes = (b.ring_bytes - a.ring_bytes) as f64 / zones;
        (cycles, bytes)
    };
    let (rust, rust_bytes) = per_zone(&rust_on, &rust_off);
    let (cxx, cxx_bytes) = per_zone(&cxx_on, &cxx_off);
    eprintln!("cycles per dense zone: Rust {rust:.2}, C++ {cxx:.2}; ring bytes {rust_bytes:.2} / {cxx_bytes:.2}");
    assert!(
        (cxx - rust).abs() <= 2.0,
        "a C++ zone costs {cxx:.2} cycles, a Rust zone {rust:.2}"
    );
    // Short zones, 6 bytes each, and a pad a lap: a record that would leave less than the
    // hot path's room (`wire::HOT_ROOM`, 16 bytes) before the ring's end wraps early, so a
    // lap pads at most 29 bytes (about 0.01 a zone here).
    assert!(
        rust_bytes < 6.02 && cxx_bytes == rust_bytes,
        "ring bytes per zone: Rust {rust_bytes}, C++ {cxx_bytes}"
    );
}
