//! `ttprof import`: a tt-metal device log into every output. On the demo's own run, the
//! import of the `profile_log_device.csv` that `ttprof report` wrote gives the same zones
//! (per name), ops and device CSV rows as the report itself; an unmatched `ZONE_END` is
//! counted (exit 2, outputs still written); a truncated file is refused naming its line
//! (exit 1); `ttprof diff` and `ttprof tracy` take the CSV file itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ttprof_tests::{file_starting, fresh_dir, run_demo, ttprof, workspace};

/// Zones per name in a directory's Chrome trace (its `B` events).
fn zones_per_name(dir: &Path) -> BTreeMap<String, usize> {
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("ttprof_trace.json")).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["cat"] == "zone" && e["ph"] == "B" {
            *out.entry(e["name"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    out
}

/// The op report's (op code, core count) rows.
fn op_rows(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file_starting(dir, "ops_perf_results_")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (code, cores) = (col("OP CODE"), col("CORE COUNT"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[code].to_string(), f[cores].to_string())
        })
        .collect()
}

/// The device CSV's rows without `timer_id` (the import numbers sites itself).
fn rows_without_timer_id(csv: &Path) -> Vec<String> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(2)
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.remove(4);
            f.join(",")
        })
        .collect()
}

#[test]
fn importing_the_demo_s_device_log_gives_the_report_s_zones_ops_and_rows() {
    let out = workspace().join("target/test-import");
    let outcome = run_demo(&out);
    let rep = out.join("report");
    let oplog = outcome.out.join("ops.jsonl");
    let o = ttprof(
        None,
        &[
            "report",
            "--no-summary",
            "--device",
            outcome.snapshot.to_str().unwrap(),
            "--oplog",
            oplog.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
    );
    assert!(o.status.success());
    let csv = rep.join("profile_log_device.csv");
    let ops_csv = file_starting(&rep, "ops_perf_results_");
    let imp = out.join("import");
    let o = ttprof(
        None,
        &[
            "import",
            csv.to_str().unwrap(),
            "--ops",
            ops_csv.to_str().unwrap(),
            "--out",
            imp.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("4 op(s)"), "{stdout}");

    let (reported, imported) = (zones_per_name(&rep), zones_per_name(&imp));
    assert!(
        reported.values().sum::<usize>() == outcome.readout.zones() && reported.len() > 6,
        "{reported:?}"
    );
    assert_eq!(imported, reported, "zones per name");
    assert_eq!(
        op_rows(&imp),
        op_rows(&rep),
        "ops named by --ops, same cores"
    );
    assert_eq!(
        rows_without_timer_id(&imp.join("profile_log_device.csv")),
        rows_without_timer_id(&csv),
        "the device CSV written back"
    );
    for f in [
        "ttprof_zones.parquet",
        "ttprof_trace.pftrace",
        "ttprof_timeline.html",
        "ttprof_analysis.json",
        "ttprof_summary.txt",
        "ttprof_ops.dot",
    ] {
        assert!(imp.join(f).is_file(), "{f}");
    }

    // `ttprof diff` takes the CSV file itself: the same run, nothing changed.
    let o = ttprof(
        None,
        &[
            "diff",
            rep.to_str().unwrap(),
            csv.to_str().unwrap(),
            "--fail-above",
            "0",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("device log"), "{text}");
}

const HEAD: &str = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1\n\
PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n";

/// A small tt-metal-style device log: one op on one BRISC, FW and KERNEL zones, a user zone.
fn small_log(extra: &str) -> String {
    format!(
        "{HEAD}0,1,1,BRISC,1,1000,0,7,,,BRISC-FW,ZONE_START,10,fw.cc,\n\
         0,1,1,BRISC,2,1100,0,7,,,BRISC-KERNEL,ZONE_START,11,fw.cc,\n\
         0,1,1,BRISC,3,1200,0,7,,,read,ZONE_START,20,reader.cpp,\n\
         0,1,1,BRISC,3,1300,0,7,,,read,ZONE_END,20,reader.cpp,\n\
         {extra}\
         0,1,1,BRISC,2,1400,0,7,,,BRISC-KERNEL,ZONE_END,11,fw.cc,\n\
         0,1,1,BRISC,1,1500,0,7,,,BRISC-FW,ZONE_END,10,fw.cc,\n"
    )
}

/// `ttprof import CSV --out OUT`.
fn import(csv: &Path, out: &Path) -> std::process::Output {
    ttprof(
        None,
        &[
            "import".as_ref(),
            csv.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    )
}

fn dir(name: &str) -> PathBuf {
    fresh_dir(&format!("target/test-import-small/{name}"))
}

#[test]
fn an_unmatched_zone_end_is_counted_and_the_outputs_are_still_written() {
    let d = dir("unmatched");
    let csv = d.join("profile_log_device.csv");
    std::fs::write(
        &csv,
        small_log("0,1,1,BRISC,4,1350,0,7,,,orphan,ZONE_END,30,reader.cpp,\n"),
    )
    .unwrap();
    let o = import(&csv, &d.join("out"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 ZONE_END row(s) without their ZONE_START (first at line 7) are left out"),
        "{err}"
    );
    assert_eq!(zones_per_name(&d.join("out")).values().sum::<usize>(), 3);
    // The same file without the orphan: clean, exit 0, the op is `run 7`.
    std::fs::write(&csv, small_log("")).unwrap();
    let o = import(&csv, &d.join("clean"));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        op_rows(&d.join("clean")),
        [("run 7".to_string(), "1".to_string())]
    );
}

#[test]
fn a_truncated_or_foreign_file_is_refused_naming_its_line() {
    let d = dir("bad");
    let csv = d.join("profile_log_device.csv");
    let full = small_log("");
    std::fs::write(&csv, &full[..full.len() - 20]).unwrap();
    let o = import(&csv, &d.join("out"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}: line 8: 11 column(s), expected 15",
            csv.display()
        )),
        "{err}"
    );
    assert!(!d.join("out").exists(), "nothing written");
    std::fs::write(&csv, "\u{0}\u{1}garbage\n").unwrap();
    let o = import(&csv, &d.join("out"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 1: expected `ARCH: ..., CHIP_FREQ[MHz]: N"),
        "{err}"
    );
}

#[test]
fn tracy_serves_a_device_log() {
    let d = dir("tracy");
    let csv = d.join("capture.csv");
    std::fs::write(&csv, small_log("")).unwrap();
    // No capture tool connects: the stream is built from the CSV (its zones counted), then
    // the wait times out.
    let o = ttprof(
        None,
        &[
            "tracy",
            "--device",
            csv.to_str().unwrap(),
            "--port",
            "0",
            "--timeout-s",
            "1",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Tracy stream: 3 zones on 1 RISC lanes"),
        "{err}"
    );
    // Device memory still needs its op log.
    let o = ttprof(
        None,
        &[
            "tracy",
            "--device",
            d.join("missing.snap").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs --oplog"));
}
