//! `ttprof report` end to end on the host: simulated cores (the runtime's real producer)
//! record FW/KERNEL wrapper zones around loops of zones for three ops on two tiles and five
//! RISCs; their rings become a device image, their site tables kernel ELFs, and an op log
//! with a signpost names the ops. The CLI must write every output, with op durations equal
//! to the simulated clock's, readable by tt-perf-report; bad inputs must fail clearly.

use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof::oplog::{KernelBinding, OpLogWriter, OpRecord, Signpost, TensorDesc};
use ttprof::testing::{temp_dir, ImageBuilder};
use ttprof_rt::sim::Sim;

mod support;
use support::{p, put_core, text, ttprof, wrapper_sites, Scratch};

const ARCH: Arch = Arch::WormholeB0;
const TILES: [NocCoord; 2] = [NocCoord::new(1, 1), NocCoord::new(2, 1)];
const OPS: [(u32, &str); 3] = [(1, "EltwiseAdd"), (2, "Matmul"), (3, "Relu")];

fn base(run: u32) -> u64 {
    1_000_000 * run as u64
}

/// Kernel span `(start, end)` of one core in one run.
type Spans = BTreeMap<(u32, usize, Risc), (u64, u64)>;

struct Fixture {
    dir: Scratch,
    image: PathBuf,
    oplog: PathBuf,
    kernels: Spans,
    zones: usize,
}

/// One core running every op: the launch sequence of `ttprof_rt::__run`, with the clock
/// driven by the test. Returns its L1, its sites and the number of zones it recorded.
fn run_core(t: usize, risc: Risc, kernels: &mut Spans) -> (Vec<u8>, Vec<String>, usize) {
    let sim = Sim::install(ARCH, risc, 0);
    sim.set_tick(0);
    let (fw, kernel) = wrapper_sites(risc);
    let mut zones = 0;
    for (run, _) in OPS {
        sim.set_clock(base(run) + 300 * t as u64 + 11 * risc.index() as u64);
        let fw_start = sim.clock();
        assert!(sim.begin_launch(run));
        sim.advance(200);
        let k_start = sim.clock();
        for _ in 0..(3 + risc.index() + run as usize) {
            let _z = ttprof_rt::zone!("tile-loop");
            sim.advance(1_000 + 37 * t as u64 + 500 * (run == 2) as u64);
            zones += 1;
        }
        sim.advance(50);
        let k_end = sim.clock();
        sim.record_span(kernel, k_start, k_end);
        sim.advance(100);
        sim.record_span(fw, fw_start, sim.clock());
        sim.end_launch();
        zones += 2;
        kernels.insert((run, t, risc), (k_start, k_end));
    }
    (sim.l1(), sim.sites(), zones)
}

fn fixture(name: &str) -> Fixture {
    let dir = temp_dir(name);
    let mut builder = ImageBuilder::new(ARCH, 1, TILES.to_vec());
    let mut kernels = Spans::new();
    let mut bindings = Vec::new();
    let mut zones = 0;
    for (t, tile) in TILES.iter().enumerate() {
        for risc in Risc::ALL {
            let (l1, sites, n) = run_core(t, risc, &mut kernels);
            zones += n;
            bindings.push(put_core(&mut builder, &dir, *tile, risc, (&l1, sites)));
        }
    }
    let image = dir.join("device.img");
    builder.write(&image).unwrap();
    let oplog = dir.join("ops.jsonl");
    write_oplog(&oplog, &OPS, &bindings);
    Fixture {
        dir: Scratch(dir),
        image,
        oplog,
        kernels,
        zones,
    }
}

fn write_oplog(path: &Path, ops: &[(u32, &str)], bindings: &[KernelBinding]) {
    let tensor = TensorDesc {
        id: None,
        shape: [1, 1, 32, 64],
        layout: "TILE".into(),
        dtype: "BFLOAT16".into(),
        memory: "DEV_0_DRAM_INTERLEAVED".into(),
    };
    let mut w = OpLogWriter::create(path, &ttprof::inputs::Inputs::none()).unwrap();
    for &(run, code) in ops {
        let mut attributes = serde_json::Map::new();
        if code == "Matmul" {
            attributes.insert("math_fidelity".into(), "HiFi4".into());
        }
        w.op(&OpRecord {
            run_id: run,
            device: 0,
            op_code: code.into(),
            op_type: "tt_dnn_device".into(),
            attributes,
            inputs: vec![tensor.clone(), tensor.clone()],
            outputs: vec![tensor.clone()],
            host_start_ns: base(run) - 5_000,
            host_end_ns: base(run) + 100_000,
            kernels: bindings.to_vec(),
            counters: vec![],
        })
        .unwrap();
        if run == 1 {
            w.signpost(&Signpost {
                name: "warm".into(),
                device: 0,
                host_ns: base(1) + 200_000,
            })
            .unwrap();
        }
    }
}

fn report(f: &Fixture, device: &Path, out: &Path) -> Output {
    ttprof(&[
        "report",
        "--device",
        p(device),
        "--oplog",
        p(&f.oplog),
        "--out",
        p(out),
        "--threshold-ns",
        "100",
    ])
}

/// `(header, rows)` of the op report in `dir` (no quoted cells in this fixture).
fn op_report(dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let path = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ops_perf_results_")
        })
        .expect("an op report");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

#[test]
fn report_writes_every_output_with_the_simulated_durations() {
    let f = fixture("report-cli");
    let out = f.dir.join("out");
    let o = report(&f, &f.image, &out);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("count") && all.contains("p99 ns") && all.contains("tile-loop"),
        "summary printed: {all}"
    );
    assert!(all.contains("3 op(s), 1 signpost(s)"), "{all}");
    for name in [
        "profile_log_device.csv",
        "ttprof_trace.json",
        "ttprof_timeline.html",
    ] {
        assert!(out.join(name).is_file(), "{name} written");
    }
    let (header, rows) = op_report(&out);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    assert_eq!(rows.len(), 4, "three ops and a signpost");
    assert_eq!(
        (
            rows[1][col("OP CODE")].as_str(),
            rows[1][col("OP TYPE")].as_str()
        ),
        ("warm", "signpost")
    );
    let ops: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("OP TYPE")] == "tt_dnn_device")
        .collect();
    let mut prev_end = None;
    for (row, (run, code)) in ops.iter().zip(OPS) {
        let spans: Vec<(u64, u64)> = f
            .kernels
            .iter()
            .filter(|(k, _)| k.0 == run)
            .map(|(_, v)| *v)
            .collect();
        let start = spans.iter().map(|s| s.0).min().unwrap();
        let end = spans.iter().map(|s| s.1).max().unwrap();
        assert_eq!(row[col("OP CODE")], code);
        assert_eq!(
            row[col("DEVICE KERNEL DURATION [ns]")],
            (end - start).to_string(),
            "{code}: 1 GHz, ns = cycles"
        );
        assert_eq!(row[col("CORE COUNT")], "2");
        assert_eq!(
            row[col("OP TO OP LATENCY [ns]")],
            prev_end.map_or(0, |e| start - e).to_string()
        );
        let trisc1 = |t| f.kernels[&(run, t, Risc::Trisc1)];
        assert_eq!(
            row[col("DEVICE TRISC1 KERNEL DURATION [ns]")],
            (trisc1(1).1 - trisc1(0).0).to_string()
        );
        prev_end = Some(end);
    }
    // The trace holds every zone once, as a B/E pair.
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ttprof_trace.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let zone_begins = events
        .iter()
        .filter(|e| e["ph"] == "B" && e["cat"] == "zone")
        .count();
    let ends = events.iter().filter(|e| e["ph"] == "E").count();
    assert_eq!(zone_begins, f.zones);
    assert_eq!(ends, f.zones + 2 * OPS.len(), "zones and the two op lanes");
    let html = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
    assert!(html.contains("tile-loop") && html.contains("Matmul"));

    // tt-perf-report reads it and prints the same device times.
    let csv = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("ops_perf"))
        .unwrap();
    let check = f.dir.join("perf.csv");
    match Command::new("tt-perf-report")
        .args([p(&csv), "--ignore-signposts", "--csv", p(&check)])
        .env("NO_COLOR", "1")
        .output()
    {
        Err(_) => {
            eprintln!("SKIPPED: tt-perf-report is not installed: the op report was not read by it")
        }
        Ok(o) => {
            assert!(o.status.success(), "tt-perf-report failed: {}", text(&o));
            let t = std::fs::read_to_string(&check).unwrap();
            let mut lines = t.lines().map(|l| l.split(',').collect::<Vec<_>>());
            let h = lines.next().unwrap();
            let (c, d) = (
                h.iter().position(|x| *x == "OP Code").unwrap(),
                h.iter().position(|x| *x == "Device Time").unwrap(),
            );
            let printed: BTreeMap<String, f64> = lines
                .filter(|r| !r[d].is_empty())
                .map(|r| {
                    (
                        r[c].split(' ').next().unwrap().to_string(),
                        r[d].parse().unwrap(),
                    )
                })
                .collect();
            for row in &ops {
                let ours: f64 = row[col("DEVICE KERNEL DURATION [ns]")].parse().unwrap();
                assert_eq!(
                    printed[&row[col("OP CODE")]],
                    ours / 1000.0,
                    "{}",
                    row[col("OP CODE")]
                );
            }
        }
    }

    // A snapshot of the device memory gives the same op report.
    let snap = f.dir.join("device.snap");
    assert!(
        ttprof(&["snapshot", "--device", p(&f.image), "-o", p(&snap)])
            .status
            .success()
    );
    let out2 = f.dir.join("out-snap");
    let o = report(&f, &snap, &out2);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(op_report(&out2), op_report(&out));
    // `ttprof read` still writes the device CSV alone.
    let o = ttprof(&[
        "read",
        "--device",
        p(&f.image),
        "--oplog",
        p(&f.oplog),
        "--out",
        p(&f.dir.join("read")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(f.dir.join("read/profile_log_device.csv")).unwrap(),
        std::fs::read(out.join("profile_log_device.csv")).unwrap()
    );
}

#[test]
fn bad_inputs_fail_with_errors_that_name_them() {
    let f = fixture("report-cli-bad");
    let bindings: Vec<KernelBinding> = Vec::new();
    // An op log from another run: nothing is written.
    let other = f.dir.join("other.jsonl");
    write_oplog(&other, &[(7, "A"), (8, "B")], &bindings);
    let out = f.dir.join("out-other");
    let o = ttprof(&[
        "report",
        "--device",
        p(&f.image),
        "--oplog",
        p(&other),
        "--out",
        p(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let msg = text(&o);
    assert!(
        msg.contains(&format!(
            "error: {}: does not match the device run",
            other.display()
        )),
        "{msg}"
    );
    assert!(
        msg.contains("run 7 on device 0") && msg.contains("the device ran run 1 on device 0"),
        "{msg}"
    );
    assert!(!out.exists());
    // An op log that misses an op: the outputs are written and the run is named.
    let partial = f.dir.join("partial.jsonl");
    write_oplog(&partial, &OPS[..2], &bindings);
    let out = f.dir.join("out-partial");
    let o = ttprof(&[
        "report",
        "--device",
        p(&f.image),
        "--oplog",
        p(&partial),
        "--out",
        p(&out),
        "--no-summary",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("device 0 ran run 3") && msg.contains("no row for it"),
        "{msg}"
    );
    assert!(
        msg.contains("run id 3 is not in op log"),
        "the resolver names the unnamed records too: {msg}"
    );
    assert_eq!(op_report(&out).1.len(), 3);
    // An output path that is a file.
    let file = f.dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = report(&f, &f.image, &file);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains(&format!("error: {}: is not a directory", file.display())),
        "{}",
        text(&o)
    );
    // Device memory that does not exist.
    let o = report(&f, &f.dir.join("missing.img"), &f.dir.join("out-missing"));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("missing.img"), "{}", text(&o));
}
