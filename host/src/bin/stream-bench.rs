//! Memory of the CLI paths against the run's length: `ttprof report` on a snapshot and
//! `ttprof import` on the device CSV it writes, at 1 M, 2 M, 4 M and 8 M zones, each run as
//! a child under `/usr/bin/time` (its peak resident set, `%M`, and its wall time).
//!
//! `cargo run --release -p ttprof --features bench --bin stream-bench [-- --ttprof PATH --sizes 1,2,4,8 --dir DIR --out FILE --keep]`
//!
//! The run is [`long_run::write`]'s: every ring holds the same number of zones
//! ([`RING_ZONES`], recorded by the real runtime producer), so a longer run has more rings,
//! not longer ones: with memory bounded by a ring, the peak stays put and the bytes per zone
//! fall. `ttprof report` writes every output from the snapshot, its
//! `profile_log_device.csv` is then imported by `ttprof import`.
//! Writes `target/bench/stream.json`; `--ttprof` defaults to the `ttprof` beside this binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use ttprof::testing::long_run;

/// Zones per ring, every size (a longer run has more rings, not longer ones).
const RING_ZONES: u64 = 12_000;

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ws = manifest.parent().unwrap_or(&manifest).to_path_buf();
    let exe = std::env::current_exe().unwrap_or_default();
    let mut ttprof = exe.with_file_name("ttprof");
    let mut sizes: Vec<u64> = vec![1, 2, 4, 8];
    let mut dir = ws.join("target/bench/stream");
    let mut out = ws.join("target/bench/stream.json");
    let mut keep = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| fail(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--ttprof" => ttprof = value().into(),
            "--dir" => dir = value().into(),
            "--out" => out = value().into(),
            "--keep" => keep = true,
            "--sizes" => {
                sizes = value()
                    .split(',')
                    .map(|s| {
                        s.parse()
                            .unwrap_or_else(|_| fail("--sizes: millions of zones, e.g. 1,2,4,8"))
                    })
                    .collect()
            }
            _ => fail(&format!("unknown argument {arg}")),
        }
    }
    if !ttprof.exists() {
        fail(&format!(
            "{} not found: build it (cargo build --release -p ttprof-cli) or pass --ttprof",
            ttprof.display()
        ));
    }
    let mut results = Vec::new();
    for m in sizes {
        let zones = m * 1_000_000;
        let d = dir.join(format!("{m}M"));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| fail(&e.to_string()));
        eprintln!("{m} M zones: recording the rings ...");
        let run = long_run::write(&d, zones, RING_ZONES).unwrap_or_else(|e| fail(&e.to_string()));
        let (snap, oplog, made) = (run.snapshot, run.oplog, run.zones);
        let report = measure(
            &ttprof,
            &[
                "report",
                "--no-summary",
                "--device",
                s(&snap),
                "--oplog",
                s(&oplog),
                "--out",
                s(&d.join("report")),
            ],
        );
        let csv = d.join("report/profile_log_device.csv");
        let rows = count_lines(&csv).saturating_sub(2);
        let import = measure(
            &ttprof,
            &[
                "import",
                s(&csv),
                "--no-summary",
                "--out",
                s(&d.join("import")),
            ],
        );
        for (cmd, r, units, unit) in [
            ("report", &report, made, "zones"),
            ("import", &import, rows, "rows"),
        ] {
            println!(
                "{cmd:6} {m} M zones: peak RSS {:7.1} MB = {:6.1} bytes/zone, {:6.1} s, {:.2} M {unit}/s (exit {})",
                r.rss as f64 / 1e6,
                r.rss as f64 / made as f64,
                r.seconds,
                units as f64 / r.seconds / 1e6,
                r.code
            );
            results.push(serde_json::json!({
                "command": cmd,
                "zones": made,
                "rows": rows,
                "peak_rss_bytes": r.rss,
                "rss_bytes_per_zone": r.rss as f64 / made as f64,
                "seconds": r.seconds,
                "per_second": units as f64 / r.seconds,
                "per_second_of": unit,
                "exit": r.code,
            }));
        }
        if !keep {
            let _ = std::fs::remove_dir_all(&d);
        }
    }
    if let Some(p) = out.parent() {
        let _ = std::fs::create_dir_all(p);
    }
    let json = serde_json::json!({ "ring_zones": RING_ZONES, "runs": results });
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    )
    .unwrap_or_else(|e| fail(&e.to_string()));
    eprintln!("wrote {}", out.display());
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap_or_else(|| fail("paths must be UTF-8"))
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

struct Measured {
    rss: u64,
    seconds: f64,
    code: i32,
}

/// Runs `ttprof args` under `/usr/bin/time`: its peak resident set and wall time. Exit 0
/// and 2 (data problems, outputs written) are accepted.
fn measure(ttprof: &Path, args: &[&str]) -> Measured {
    let o = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("TTPROF_BENCH %M %e")
        .arg(ttprof)
        .args(args)
        .output()
        .unwrap_or_else(|e| fail(&format!("/usr/bin/time: {e}")));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("TTPROF_BENCH "))
        .unwrap_or_else(|| fail(&format!("no figures from /usr/bin/time: {err}")));
    let mut f = line.split_whitespace();
    let kb: u64 = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    let seconds: f64 = f.next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let code = o.status.code().unwrap_or(-1);
    if code != 0 && code != 2 {
        fail(&format!("ttprof {} exited {code}: {err}", args.join(" ")));
    }
    Measured {
        rss: kb * 1024,
        seconds: seconds.max(0.01),
        code,
    }
}

fn count_lines(path: &Path) -> u64 {
    use std::io::BufRead;
    let f = std::fs::File::open(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    std::io::BufReader::new(f).lines().count() as u64
}
