//! Streaming capture between two real processes: this test process runs the real `bench`
//! kernel (examples/kernels, built for riscv32im) on the emulator, Block policy, several
//! launches on several tiles, writing far more zones than a ring holds; `ttprof capture`
//! runs in another process, attached through the shared device image, draining as the rings
//! fill. The exact accounting: every zone the kernels produced is a `ZONE_END` row of the
//! capture's CSV or counted as dropped on the device, nothing twice; each wait the producer
//! made for the consumer is one `PROFILER-STALL` zone.
//!
//! The tests start `ttprof capture` with each stop condition: a flag file, SIGINT (Ctrl-C),
//! and a time limit. (The waits below are safety nets that fail a broken test instead of
//! hanging it, not timing assertions.)

mod support;

use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;
use support::live::{bench_elf, device, launch_bench, wait_attached, workspace};
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::oplog::OpLogWriter;
use ttprof_emu::Device;

/// The bench kernel's dense mode: two nested zones per iteration (`dense-outer`, `dense-inner`).
const DENSE: u32 = 1;

fn spawn_capture(dir: &Path, stop: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .arg("capture")
        .arg("--device")
        .arg(dir.join("device.img"))
        .arg("--oplog")
        .arg(dir.join("ops.jsonl"))
        .arg("--out")
        .arg(dir.join("out"))
        .args(stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ttprof capture")
}

/// Runs one launch per entry of `iterations` on every tile; writes the op log as it goes.
fn run_launches(dev: &mut Device, mem: &MappedImage, dir: &Path, iterations: &[u32]) {
    let elf = bench_elf("test-capture");
    let mut log =
        OpLogWriter::create(&dir.join("ops.jsonl"), &ttprof::inputs::Inputs::none()).unwrap();
    for (k, &n) in iterations.iter().enumerate() {
        launch_bench(dev, mem, &mut log, elf, k as u32 + 1, [DENSE, n, 2]);
    }
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success(),
        "ttprof capture failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// `ZONE_END` rows per (x, y, zone name), checking every row has 15 columns and each ring's
/// times never go back.
fn zone_ends(csv: &Path) -> BTreeMap<(u8, u8, String), u64> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut ends = BTreeMap::new();
    let mut last: BTreeMap<(u8, u8, String), u64> = BTreeMap::new();
    for line in text.lines().skip(2) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 15, "{line}");
        let (x, y, risc) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].to_string(),
        );
        let time: u64 = f[5].parse().unwrap();
        let prev = last.insert((x, y, risc), time).unwrap_or(0);
        assert!(time >= prev, "time goes back: {line}");
        assert!(
            !f[10].starts_with("unresolved"),
            "every zone is named: {line}"
        );
        if f[11] == "ZONE_END" {
            *ends.entry((x, y, f[10].to_string())).or_default() += 1;
        }
    }
    ends
}

/// Rows of the capture's Parquet zones table per (x, y, zone name).
fn parquet_zones(path: &Path) -> BTreeMap<(u8, u8, String), u64> {
    use arrow_array::types::UInt32Type;
    use arrow_array::{Array, DictionaryArray, StringArray, UInt16Array};
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = BTreeMap::new();
    for batch in reader {
        let b = batch.unwrap();
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap_or_else(|| panic!("no column {n}"))
                .clone()
        };
        let (x, y, name) = (col("tile_x"), col("tile_y"), col("name"));
        let x = x.as_any().downcast_ref::<UInt16Array>().unwrap();
        let y = y.as_any().downcast_ref::<UInt16Array>().unwrap();
        let name = name
            .as_any()
            .downcast_ref::<DictionaryArray<UInt32Type>>()
            .unwrap();
        let names = name
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        for i in 0..b.num_rows() {
            let n = names.value(name.keys().value(i) as usize).to_string();
            *rows
                .entry((x.value(i) as u8, y.value(i) as u8, n))
                .or_default() += 1;
        }
    }
    rows
}

/// The device's counters of every BRISC ring: `(stalls, dropped)`.
fn counters(mem: &MappedImage, t: NocCoord) -> (u64, u64) {
    let w = |off| {
        mem.read_u32(0, t, profiler::ring_word(Risc::Brisc, off))
            .unwrap() as u64
    };
    (w(ring::STALLS), w(ring::DROPPED))
}

/// produced = captured + dropped, per tile and zone name, exactly.
fn check_accounting(mem: &MappedImage, tiles: &[NocCoord], dir: &Path, iterations: &[u32]) {
    let ends = zone_ends(&dir.join("out/profile_log_device.csv"));
    // The Parquet table and the Perfetto trace, written ring by ring from the same spool,
    // hold every zone too.
    assert_eq!(
        parquet_zones(&dir.join("out/ttprof_zones.parquet")),
        ends,
        "the Parquet zones are the CSV's"
    );
    // (Its packets are compressed, a zone costs a byte or less on this regular kernel; the
    // trace processor checks its content in tests/tests/scalable_outputs.rs.)
    let trace = std::fs::read(dir.join("out/ttprof_trace.pftrace")).unwrap();
    assert!(
        trace.len() > 1000 && trace[0] == 0x0a,
        "the Perfetto trace: {} bytes, starting with a packet",
        trace.len()
    );
    let launches = iterations.len() as u64;
    let per_name: u64 = iterations.iter().map(|&n| n as u64).sum();
    let mut total_stalls = 0;
    for &t in tiles {
        let got = |name: &str| {
            ends.get(&(t.x, t.y, name.to_string()))
                .copied()
                .unwrap_or(0)
        };
        let (stalls, dropped) = counters(mem, t);
        total_stalls += stalls;
        assert_eq!(dropped, 0, "Block with a consumer attached drops nothing");
        assert_eq!(
            got("dense-outer") + got("dense-inner"),
            2 * per_name - dropped,
            "tile {t}"
        );
        assert_eq!(
            (got("dense-outer"), got("dense-inner")),
            (per_name, per_name),
            "tile {t}"
        );
        assert_eq!(
            (got("BRISC-FW"), got("BRISC-KERNEL")),
            (launches, launches),
            "tile {t}"
        );
        assert_eq!(
            got("PROFILER-STALL"),
            stalls,
            "tile {t}: one stall zone per wait"
        );
        let other: u64 = ends
            .iter()
            .filter(|((x, y, _), _)| (*x, *y) == (t.x, t.y))
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            other,
            2 * per_name + 2 * launches + stalls,
            "tile {t}: no other zones, nothing twice"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/capture.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["zones"],
        (tiles.len() as u64 * (2 * per_name + 2 * launches) + total_stalls)
    );
    assert_eq!(summary["dropped"], 0);
    assert_eq!(summary["errors"], 0, "{summary}");
    // The bus cost of each ring, exactly as the read-out's cost model says: the bytes it
    // decoded, plus per drain one `HEAD` word and at most two word-rounded pieces (6 bytes
    // each), plus the control block read once at attach and once at the end. (How many
    // drains there were depends on the two processes' timing; the bound holds for any.)
    let drains = summary["drains"].as_u64().unwrap();
    let rings = summary["rings"].as_array().unwrap();
    assert_eq!(
        rings.len(),
        tiles.len(),
        "one ring per tile (only BRISC runs): {summary}"
    );
    for r in rings {
        let (bus, payload, skipped) = (
            r["bus_bytes"].as_u64().unwrap(),
            r["payload_bytes"].as_u64().unwrap(),
            r["skipped_bytes"].as_u64().unwrap(),
        );
        let bound = payload + skipped + drains * (4 + 2 * 6) + 2 * profiler::RING_BLOCK_SIZE as u64;
        assert!(
            payload > 0 && bus >= payload && bus <= bound,
            "ring {r}: bus {bus} bytes, bound {bound} for {drains} drains"
        );
    }
}

#[test]
fn capture_in_another_process_takes_every_zone_until_the_flag_file_goes() {
    let dir = workspace().join("target/test-capture/flag");
    let (mut dev, mem) = device(&dir, (2, 2));
    let tiles = dev.tiles();
    let flag = dir.join("capturing");
    std::fs::write(&flag, b"").unwrap();
    bench_elf("test-capture"); // built before the capture starts, so it does not idle through a build
    let mut child = spawn_capture(&dir, &["--until-file-gone", flag.to_str().unwrap()]);
    wait_attached(&mem, &tiles, &mut child);
    let iterations = [4_000, 2_500, 3_000];
    run_launches(&mut dev, &mem, &dir, &iterations);
    std::fs::remove_file(&flag).unwrap();
    let out = finish(child);
    assert!(String::from_utf8_lossy(&out.stderr).contains("flag file removed"));
    check_accounting(&mem, &tiles, &dir, &iterations);
    for &t in &tiles {
        assert_eq!(
            mem.read_u32(0, t, profiler::TILE_BLOCK + tile::CONSUMER)
                .unwrap(),
            0,
            "detached"
        );
        let (head, tail) = (
            mem.read_u32(0, t, profiler::ring_word(Risc::Brisc, ring::HEAD))
                .unwrap(),
            mem.read_u32(0, t, profiler::ring_word(Risc::Brisc, ring::TAIL))
                .unwrap(),
        );
        assert_eq!(head, tail, "everything published was consumed");
        assert!(
            head as u64 > 4 * profiler::RING_CAPACITY as u64,
            "the ring wrapped many times"
        );
    }
}

#[test]
fn ctrl_c_stops_a_capture_cleanly_and_keeps_everything() {
    let dir = workspace().join("target/test-capture/sigint");
    let (mut dev, mem) = device(&dir, (2, 1));
    let tiles = dev.tiles();
    bench_elf("test-capture"); // built before the capture starts, so it does not idle through a build
    let mut child = spawn_capture(&dir, &[]);
    wait_attached(&mem, &tiles, &mut child);
    let iterations = [3_000, 1_000];
    run_launches(&mut dev, &mem, &dir, &iterations);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = finish(child);
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    check_accounting(&mem, &tiles, &dir, &iterations);
}

#[test]
fn a_capture_with_all_outputs_writes_what_ttprof_report_writes() {
    let dir = workspace().join("target/test-capture/all");
    let (mut dev, mem) = device(&dir, (2, 1));
    let tiles = dev.tiles();
    bench_elf("test-capture");
    let flag = dir.join("capturing");
    std::fs::write(&flag, b"").unwrap();
    let mut child = spawn_capture(
        &dir,
        &["--all-outputs", "--until-file-gone", flag.to_str().unwrap()],
    );
    wait_attached(&mem, &tiles, &mut child);
    let iterations = [2_000, 500, 1_500];
    run_launches(&mut dev, &mem, &dir, &iterations);
    std::fs::remove_file(&flag).unwrap();
    let out = finish(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The same exact accounting, now through the all-at-once writer.
    check_accounting(&mem, &tiles, &dir, &iterations);
    assert!(
        stdout.contains("clock: nominal") && stdout.contains("dense-inner"),
        "{stdout}"
    );
    // The op report: one row per launch, named as the op log says, on both cores.
    let report = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ops_perf_results_")
        })
        .expect("an op report");
    let text = std::fs::read_to_string(&report).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), iterations.len(), "{text}");
    assert!(rows.iter().all(|r| r.starts_with("Bench,")), "{text}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/ttprof_trace.json")).unwrap())
            .unwrap();
    let zones = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "dense-inner")
        .count();
    let per_tile: u32 = iterations.iter().sum();
    assert_eq!(
        zones,
        tiles.len() * per_tile as usize,
        "every dense-inner zone on the timeline"
    );
    assert!(
        std::fs::metadata(dir.join("out/ttprof_timeline.html"))
            .unwrap()
            .len()
            > 0
    );
}

/// `--sample-every-us`: the capture takes clock samples through the image's clock mailbox
/// while it drains, and the outputs' times come from their fit, not the nominal clock.
#[test]
fn a_capture_sampling_the_clock_while_draining_fits_it() {
    let dir = workspace().join("target/test-capture/sampled");
    let (mut dev, mem) = device(&dir, (2, 1));
    let tiles = dev.tiles();
    bench_elf("test-capture");
    let flag = dir.join("capturing");
    std::fs::write(&flag, b"").unwrap();
    let args = [
        "--all-outputs",
        "--sample-every-us",
        "50",
        "--until-file-gone",
        flag.to_str().unwrap(),
    ];
    let mut child = spawn_capture(&dir, &args);
    wait_attached(&mem, &tiles, &mut child);
    // The capture samples while the device is idle too (the mailbox answers between runs).
    std::thread::sleep(Duration::from_millis(200));
    let iterations = [2_000, 500];
    run_launches(&mut dev, &mem, &dir, &iterations);
    std::thread::sleep(Duration::from_millis(200));
    std::fs::remove_file(&flag).unwrap();
    let out = finish(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    check_accounting(&mem, &tiles, &dir, &iterations);
    assert!(
        !stdout.contains("clock: nominal") && !stdout.contains("not aligned"),
        "{stdout}"
    );
    assert!(
        stdout.contains("clock chip 0"),
        "the fit is printed: {stdout}"
    );
}

#[test]
fn capture_refuses_a_clock_file_that_is_not_a_snapshot() {
    let dir = workspace().join("target/test-capture/clock");
    let (_dev, _mem) = device(&dir, (1, 1));
    std::fs::write(dir.join("ops.jsonl"), b"").unwrap();
    let img = dir.join("device.img");
    let child = spawn_capture(
        &dir,
        &[
            "--all-outputs",
            "--clock",
            img.to_str().unwrap(),
            "--seconds",
            "0",
        ],
    );
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is not a snapshot"),
        "{err}"
    );
}

#[test]
fn a_timed_capture_of_an_idle_device_writes_an_empty_csv() {
    let dir = workspace().join("target/test-capture/seconds");
    let (dev, mem) = device(&dir, (1, 1));
    std::fs::write(dir.join("ops.jsonl"), b"").unwrap();
    let mut child = spawn_capture(&dir, &["--seconds", "1"]);
    wait_attached(&mem, &dev.tiles(), &mut child);
    let out = finish(child);
    assert!(String::from_utf8_lossy(&out.stderr).contains("time elapsed"));
    let csv = std::fs::read_to_string(dir.join("out/profile_log_device.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "header lines only: {csv}");
    assert_eq!(
        mem.read_u32(0, dev.tiles()[0], profiler::TILE_BLOCK + tile::CONSUMER)
            .unwrap(),
        0
    );
}
