//! Issue 22, part 2: the demo's scenario (four ops on a 2x2 Wormhole B0, a consumer draining
//! while the kernels run) with each recording backend. The kernels built with the runtime's
//! `timestamper` feature record their zones through the tiles' debug timestampers, which the
//! session drains with the rings; every output must then show the same zones as the ring
//! backend's: the same count, names and nesting per core and launch (the times differ: the
//! two backends cost the kernels different cycles).

use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::path::Path;
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::launch::Settings;
use ttprof::session::Backend;
use ttprof_demo::ops;
use ttprof_demo::scenario::{self, Scenario};
use ttprof_tests::workspace;

/// Per (core x, core y, RISC, run id): the (zone name, marker type) sequence of the device CSV.
type Markers = BTreeMap<(String, String, String, String), Vec<(String, String)>>;

fn markers(csv: &Path) -> Markers {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut out = Markers::new();
    for line in text.lines().skip(2) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        out.entry((f[1].into(), f[2].into(), f[3].into(), f[7].into()))
            .or_default()
            .push((f[10].into(), f[11].into()));
    }
    out
}

/// Bytes every ring's producer wrote (`HEAD`), from the device image.
fn ring_bytes(out: &Path) -> u64 {
    let mem = MappedImage::open(&out.join("device.img"), &ttprof::inputs::Inputs::none()).unwrap();
    let mut total = 0u64;
    for tile in mem.tiles(0) {
        for risc in Risc::ALL {
            total += mem
                .read_u32(0, tile, profiler::ring_word(risc, ring::HEAD))
                .unwrap() as u64;
        }
    }
    total
}

fn run(backend: Backend) -> (ttprof::session::FinishedSession, Markers, u64) {
    let arch = Arch::WormholeB0;
    let out = workspace().join(format!("target/test-backend-{}", backend.name()));
    let _ = std::fs::remove_dir_all(&out);
    let elfs = scenario::build_kernels_for(arch, backend, &out.join("kernels")).unwrap();
    let s = Scenario {
        sample: None,
        arch,
        grid: (2, 2),
        ops: ops::sequence(4),
        out: out.clone(),
        threads: 2,
        drain_every_cycles: 250_000,
        settings: Settings {
            consumer: true,
            ..Settings::default()
        },
        clock: scenario::realistic_clock(arch),
        lines: false,
        backend,
    };
    let profile = scenario::run(&s, &elfs, |_| {}).unwrap();
    let issues: Vec<String> = profile.issues().map(|i| i.to_string()).collect();
    assert!(!profile.has_errors(), "{}: {issues:#?}", backend.name());
    let m = markers(&out.join("profile_log_device.csv"));
    (profile, m, ring_bytes(&out))
}

#[test]
fn both_backends_give_the_demo_the_same_zones_names_and_nesting() {
    let (ring, ring_markers, ring_head) = run(Backend::Ring);
    let (ts, ts_markers, ts_head) = run(Backend::Timestamper);
    assert_eq!(ring.readout.zones(), ts.readout.zones(), "zone counts");
    assert!(ring.readout.zones() > 1000, "{}", ring.readout.zones());
    assert_eq!(
        ring_markers.keys().collect::<Vec<_>>(),
        ts_markers.keys().collect::<Vec<_>>(),
        "the same cores and launches"
    );
    for (k, seq) in &ring_markers {
        assert_eq!(seq, &ts_markers[k], "zone names and nesting of {k:?}");
    }
    // The same records by site name in the model every other output (op report, Tracy,
    // Perfetto, Parquet, analysis) is written from, and the same ops.
    let names = |p: &ttprof::session::FinishedSession| {
        let mut v: Vec<(String, usize)> = Vec::new();
        for (k, r) in p.readout.rings().iter().enumerate() {
            for i in 0..r.records.kind().len() {
                if let Some(m) = p
                    .resolution
                    .site(k, r.records.run_at(i), r.records.site()[i])
                {
                    match v.iter_mut().find(|(n, _)| *n == m.name) {
                        Some(e) => e.1 += 1,
                        None => v.push((m.name.clone(), 1)),
                    }
                }
            }
        }
        v.sort();
        v
    };
    assert_eq!(names(&ring), names(&ts));
    assert_eq!(ring.oplog.entries.len(), ts.oplog.entries.len());
    // The zones really went through the timestamper: the rings kept only the launches'
    // run markers, wrapper zones and sum zones.
    assert!(
        ts_head * 4 < ring_head,
        "ring bytes: timestamper backend {ts_head}, ring backend {ring_head}"
    );
}

/// `ttprof run --backend timestamper` on a C++ kernel (`examples/cxx/twin.cpp`: nested zones,
/// a value zone, an event, data, a typed wait, a long zone, a sum, a flush) builds it with
/// `-DTTPROF_BACKEND_TIMESTAMPER` (the header's stores replace the ring's hot path) and writes
/// the same device CSV as the ring backend: zone names, nesting, event and data values.
#[test]
fn ttprof_run_records_a_cxx_kernel_through_the_timestamper_as_through_the_ring() {
    let mut csv = Vec::new();
    for backend in ["ring", "timestamper"] {
        let out = workspace().join(format!("target/test-backend-cxx-{backend}"));
        let _ = std::fs::remove_dir_all(&out);
        let o = std::process::Command::new(ttprof_tests::ttprof_binary())
            .current_dir(workspace())
            .args([
                "run",
                "--backend",
                backend,
                "--grid",
                "1x1",
                "--arg",
                "brisc=3",
            ])
            .args(["--kernel", "brisc=examples/cxx/twin.cpp", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // RISC, data, zone name, type, meta data: everything but the times. A sum's data
        // is its total of cycles, a time (the code before it differs between the backends,
        // and so does the state of the store queue it starts with): its count stays.
        let text = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
        let rows: Vec<String> = text
            .lines()
            .skip(2)
            .map(|l| {
                let f: Vec<&str> = l.split(',').map(str::trim).collect();
                let data = if f[11] == "ZONE_TOTAL" { "" } else { f[6] };
                [f[3], data, f[10], f[11], f[14]].join(",")
            })
            .collect();
        let elf = std::fs::read(out.join("kernels/twin.elf")).unwrap();
        csv.push((rows, elf));
    }
    assert!(csv[0].0.len() > 20, "{:?}", csv[0].0);
    assert_eq!(csv[0].0, csv[1].0);
    assert_ne!(
        csv[0].1, csv[1].1,
        "the timestamper build is another kernel"
    );
}

/// `ttprof run --backend timestamper` of a dense kernel (50,000 empty zones back to back, a
/// few cycles each) at the default drain interval records every zone: the default is sized
/// to what the timestamper's buffers hold (at 250,000 cycles, ~94 % of a dense kernel's
/// zones were lost; issue 41, High 2).
#[test]
fn a_dense_kernel_loses_no_zone_through_the_timestamper_at_the_default_drain_interval() {
    const ZONES: usize = 50_000;
    let dir = workspace().join("target/test-backend-dense");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("dense.cpp"),
        r#"
#include <stdint.h>
#include <ttprof.h>
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; i++) {
        TTPROF_ZONE("dense");
    }
}
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let o = std::process::Command::new(ttprof_tests::ttprof_binary())
        .current_dir(&dir)
        .args(["run", "--backend", "timestamper", "--grid", "1x1"])
        .args(["--kernel", "brisc=dense.cpp", "--arg"])
        .arg(format!("brisc={ZONES}"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{said}");
    let text = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
    let ends = text
        .lines()
        .skip(2)
        .filter(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            f[10] == "dense" && f[11] == "ZONE_END"
        })
        .count();
    assert_eq!(ends, ZONES, "{said}");
}

/// A run that loses zones through the timestamper (a dense kernel drained only every 250,000
/// cycles) exits 2, and so does `ttprof report` of its snapshot, saying what was lost: the
/// snapshot records the loss (before, `report` of it exited 0; issue 41, High 2).
#[test]
fn report_of_a_lossy_timestamper_run_exits_2_saying_so() {
    let dir = workspace().join("target/test-backend-lossy");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("dense.cpp"),
        r#"
#include <stdint.h>
#include <ttprof.h>
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; i++) {
        TTPROF_ZONE("dense");
    }
}
"#,
    )
    .unwrap();
    let ttprof = |args: &[&str]| {
        let o = std::process::Command::new(ttprof_tests::ttprof_binary())
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.code(), said)
    };
    let (code, said) = ttprof(&[
        "run",
        "--backend",
        "timestamper",
        "--grid",
        "1x1",
        "--kernel",
        "brisc=dense.cpp",
        "--arg",
        "brisc=50000",
        "--drain-every-cycles",
        "250000",
        "--out",
        "out",
    ]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("the debug timestamper overflowed"), "{said}");
    let (code, said) = ttprof(&[
        "report",
        "--device",
        "out/device.snap",
        "--oplog",
        "out/ops.jsonl",
        "--out",
        "report",
    ]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("the debug timestamper overflowed") && said.contains("lost an end"),
        "{said}"
    );
    // `diff` against a run that lost nothing calls no change a regression (before: the
    // lossy side's shorter totals were judged), unless asked.
    let (code, said) = ttprof(&[
        "run",
        "--backend",
        "timestamper",
        "--grid",
        "1x1",
        "--kernel",
        "brisc=dense.cpp",
        "--arg",
        "brisc=50000",
        "--out",
        "clean",
    ]);
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = ttprof(&["diff", "clean", "out", "--fail-above", "1"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("either run lost data, so no change is judged a regression")
            && !said.contains("regression: "),
        "{said}"
    );
    let (code, said) = ttprof(&["diff", "clean", "out", "--fail-above", "1", "--allow-lossy"]);
    assert!(
        code != Some(0) && !said.contains("no change is judged"),
        "{said}"
    );
}
