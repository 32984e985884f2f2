//! Memory of the CLI paths against the run's length, each command run as a child under
//! `/usr/bin/time` (its peak resident set, `%M`, and its wall time), at 1 M, 2 M, 4 M and
//! 8 M zones:
//!
//! * `report` of a snapshot and `import` of the device CSV it writes ([`long_run::write`]'s
//!   run: every ring holds [`RING_ZONES`] zones, so a longer run has more rings, not longer
//!   ones);
//! * `run`: a C++ kernel ([`KERNEL`], built once per RISC with `ttprof build`) on BRISC and
//!   NCRISC of a 4x4 grid, [`LAUNCH_ZONES`] zones per launch, more launches for more zones
//!   (so each ring grows with the run);
//! * `capture --all-outputs` of the image of such a run made without a consumer (`run
//!   --drain-every-cycles 0 --policy block`), attached while it runs, stopped when it ends;
//! * `tracy` of the `report` run's snapshot, drained by the protocol-level capture tool
//!   ([`ttprof::tracy::test_client`]);
//! * `tracy-messages`: the same of a run heavy in messages ([`long_run::write_with_messages`]:
//!   a data point and a value zone per loop, two messages for every three zones; not run
//!   unless asked for);
//! * `read --consume` of a run's image whose rings were left full (no consumer, Drop
//!   policy): live memory holds at most the rings' capacity, whatever the run's length, so
//!   this one is measured once, at the largest grid.
//!
//! Those are the shape `rings` (`--shapes`, the default): a longer run has more rings. The
//! shape `ring` is one ring of all the zones ([`write_rings_csv`] of one chip's one ring: a
//! device log of one core's BRISC, a `BRISC-KERNEL` zone around a loop of zones, as
//! tt-metal writes it, and one zone of a second chip: a two-chip run), measured with `import` and `tracy` of that log (the commands `ring-import` and `ring-tracy` in the
//! results): peak memory over the length of one ring. The shape `tiny-rings` is
//! [`TINY_RINGS_PER_M`] rings of two zones per size unit on one chip (300,000 rings at 8),
//! the shape `chips` [`CHIPS_PER_M`] chips per size unit, one ring of [`CHIP_RING_ZONES`]
//! zones each (1,000 chips at 8), both written as device logs and measured with `import`
//! (`tiny-rings-import`, `chips-import`, and `chips-dataset`: the chips' `import` with
//! `--dataset`, a partition per chip) and the chips with `tracy` too (`chips-tracy`, up
//! to Tracy's 255 GPU contexts, a chip each; Tracy's lane ids carry NoC coordinates below
//! 32, which the tiny rings' tiles pass): peak memory over the number of rings and chips.
//! The shape `ops` is [`OPS_PER_M`] ops per size unit (2,000 at 8) on one chip's
//! [`OPS_TILES`] tiles, every RISC of each recording a KERNEL zone and one zone per op
//! ([`write_ops_csv`]), measured with `import` (`ops-import`): peak memory over the number
//! of ops.
//! The shape `two-chips` is a real two-chip run, `ttprof run --chips 2` of [`KERNEL`] on BRISC
//! of a 1x1 grid recording all the zones on each chip (two rings of that length), then
//! `report` and `tracy` of its snapshot and `import` of its device log
//! (`two-chips-run`, `-report`, `-tracy`, `-import`).
//!
//! `cargo run --release -p ttprof --features bench --bin stream-bench [-- --ttprof PATH --sizes 1,2,4,8 --shapes rings,ring,tiny-rings,chips,ops,two-chips --commands report,import,run,capture,tracy,read-consume --dir DIR --out FILE --keep]`
//!
//! Writes `target/bench/stream.json`; `--ttprof` defaults to the `ttprof` beside this binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use ttprof::testing::long_run;

/// The shapes `--shapes` takes (module docs).
const SHAPES: [&str; 6] = ["rings", "ring", "tiny-rings", "chips", "ops", "two-chips"];
/// `tiny-rings`: rings per size unit (8 -> 300,000 rings of 2 zones).
const TINY_RINGS_PER_M: u64 = 37_500;
/// `chips`: chips per size unit (8 -> 1,000 chips), each one core's BRISC of
/// [`CHIP_RING_ZONES`] zones.
const CHIPS_PER_M: u64 = 125;
/// Chips Tracy takes (a GPU context each): `chips-tracy` runs up to this many.
const TRACY_CHIPS: u64 = 255;
/// Zones of each chip's one ring in the `chips` shape.
const CHIP_RING_ZONES: u64 = 100;
/// `ops`: ops per size unit (8 -> 2,000 ops), each on [`OPS_TILES`] tiles.
const OPS_PER_M: u64 = 250;
/// `ops`: the tiles every op runs on, every RISC of each (320 rings).
const OPS_TILES: u64 = 64;

/// Zones per ring, every size (a longer run has more rings, not longer ones).
const RING_ZONES: u64 = 12_000;
/// The `run` and `capture` kernel: `get_arg_val(0)` zones, one site.
const KERNEL: &str = long_run::ZONES_KERNEL_CPP;
/// The `run` grid: 16 tiles, BRISC and NCRISC each (32 rings).
const GRID: &str = "4x4";
/// Zones a RISC records per launch: 100,000 zones a launch over the grid.
const RISC_ZONES: u64 = 3_125;
/// Zones per launch, all rings.
const LAUNCH_ZONES: u64 = 32 * RISC_ZONES;

fn main() {
    // Under the current folder (run it from the checkout's root).
    let ws = PathBuf::new();
    let exe = std::env::current_exe().unwrap_or_default();
    let mut ttprof = exe.with_file_name("ttprof");
    let mut sizes: Vec<u64> = vec![1, 2, 4, 8];
    let mut dir = ws.join("target/bench/stream");
    let mut out = ws.join("target/bench/stream.json");
    let mut keep = false;
    let mut shapes: Vec<String> = vec!["rings".into()];
    let mut commands: Vec<String> = [
        "report",
        "import",
        "run",
        "capture",
        "tracy",
        "read-consume",
    ]
    .map(String::from)
    .to_vec();
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
            "--commands" => commands = value().split(',').map(String::from).collect(),
            "--shapes" => {
                shapes = value().split(',').map(String::from).collect();
                if let Some(bad) = shapes.iter().find(|s| !SHAPES.contains(&s.as_str())) {
                    fail(&format!(
                        "--shapes: {bad}: expected some of {}",
                        SHAPES.join(", ")
                    ));
                }
            }
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
    let rings_shape = shapes.iter().any(|s| s == "rings");
    let ring_shape = shapes.iter().any(|s| s == "ring");
    let want = |c: &str| rings_shape && commands.iter().any(|x| x == c);
    let want_ring = |c: &str| ring_shape && commands.iter().any(|x| x == c);
    let has =
        |shape: &str, c: &str| shapes.iter().any(|s| s == shape) && commands.iter().any(|x| x == c);
    let mut results = Vec::new();
    let mut record = |cmd: &str, m: u64, r: &Measured, zones: u64, units: u64, unit: &str| {
        println!(
            "{cmd:12} {m} M: {zones} zones, peak RSS {:7.1} MB = {:6.1} bytes/zone, {:6.1} s, {:.2} M {unit}/s (exit {})",
            r.rss as f64 / 1e6,
            r.rss as f64 / zones.max(1) as f64,
            r.seconds,
            units as f64 / r.seconds / 1e6,
            r.code
        );
        results.push(serde_json::json!({
            "command": cmd,
            "size_m": m,
            "zones": zones,
            "rows": units,
            "peak_rss_bytes": r.rss,
            "rss_bytes_per_zone": r.rss as f64 / zones.max(1) as f64,
            "seconds": r.seconds,
            "per_second": units as f64 / r.seconds,
            "per_second_of": unit,
            "exit": r.code,
        }));
    };
    let two_chips = shapes.iter().any(|s| s == "two-chips");
    let kernels =
        (want("run") || want("capture") || want("read-consume") || two_chips).then(|| {
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(&e.to_string()));
            build_kernels(&ttprof, &dir)
        });
    let largest = sizes.iter().copied().max().unwrap_or(1);
    for &m in &sizes {
        let zones = m * 1_000_000;
        let d = dir.join(format!("{m}M"));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| fail(&e.to_string()));
        if want_ring("import") || want_ring("tracy") {
            eprintln!("{m} M zones: one ring's device log ...");
            let csv = d.join("ring.csv");
            let made = write_rings_csv(&csv, 1, 1, zones) + append_chip_zone(&csv, 1);
            if want_ring("import") {
                let r = measure_import(&ttprof, &csv, &d.join("ring-import"));
                record("ring-import", m, &r, made, 2 * made, "rows");
                let _ = std::fs::remove_dir_all(d.join("ring-import"));
            }
            if want_ring("tracy") {
                let r = tracy(&ttprof, &csv, None, 18_800 + m as u16);
                record("ring-tracy", m, &r, made, made, "zones");
            }
            if !keep {
                let _ = std::fs::remove_file(&csv);
            }
        }
        for (shape, chips, rings_per_chip, ring_zones) in [
            ("tiny-rings", 1, m * TINY_RINGS_PER_M, 2),
            ("chips", m * CHIPS_PER_M, 1, CHIP_RING_ZONES),
        ] {
            // Tracy's lanes carry NoC coordinates below 32 (the tiny rings' tiles are past
            // them) and it has 255 GPU contexts, one a chip.
            let tracy_too = shape == "chips" && has(shape, "tracy");
            if !has(shape, "import") && !tracy_too {
                continue;
            }
            eprintln!("{m}: {shape}: {chips} chip(s) of {rings_per_chip} ring(s) ...");
            let csv = d.join(format!("{shape}.csv"));
            let made = write_rings_csv(&csv, chips, rings_per_chip, ring_zones);
            if has(shape, "import") {
                let out = d.join(format!("{shape}-import"));
                let r = measure_import(&ttprof, &csv, &out);
                record(&format!("{shape}-import"), m, &r, made, 2 * made, "rows");
                let _ = std::fs::remove_dir_all(&out);
            }
            // A dataset's partition per chip: its tables open at once.
            if shape == "chips" && has(shape, "import") {
                let (out, set) = (d.join("chips-dataset"), d.join("chips-dataset-parts"));
                let args = [
                    "import",
                    s(&csv),
                    "--no-summary",
                    "--out",
                    s(&out),
                    "--dataset",
                    s(&set),
                ];
                let r = measure(&ttprof, &args);
                record("chips-dataset", m, &r, made, 2 * made, "rows");
                let _ = std::fs::remove_dir_all(&out);
                let _ = std::fs::remove_dir_all(&set);
            }
            if tracy_too && chips > TRACY_CHIPS {
                eprintln!("chips-tracy {m} M: skipped, {chips} chips is more than Tracy's {TRACY_CHIPS} GPU contexts");
            } else if tracy_too {
                let r = tracy(&ttprof, &csv, None, 19_000 + m as u16);
                record(&format!("{shape}-tracy"), m, &r, made, made, "zones");
            }
            if !keep {
                let _ = std::fs::remove_file(&csv);
            }
        }
        if has("ops", "import") {
            let ops = m * OPS_PER_M;
            eprintln!("{m}: ops: {ops} ops on {OPS_TILES} tiles ...");
            let csv = d.join("ops.csv");
            let made = write_ops_csv(&csv, ops);
            let out = d.join("ops-import");
            let r = measure_import(&ttprof, &csv, &out);
            record("ops-import", m, &r, made, 2 * made, "rows");
            let _ = std::fs::remove_dir_all(&out);
            if !keep {
                let _ = std::fs::remove_file(&csv);
            }
        }
        if let (true, Some((brisc, _))) = (two_chips, &kernels) {
            eprintln!("{m} M zones: ttprof run --chips 2, one BRISC ring each ...");
            let out = d.join("two-chips");
            let args = [
                "run",
                "--chips",
                "2",
                "--kernel",
                &format!("brisc={}", brisc.display()),
                "--arg",
                &format!("brisc={zones}"),
                "--out",
                s(&out),
            ];
            let r = measure(&ttprof, &args);
            let csv = out.join("profile_log_device.csv");
            let rows = count_lines(&csv).saturating_sub(2);
            record("two-chips-run", m, &r, rows / 2, rows, "rows");
            let (snap, oplog) = (out.join("device.snap"), out.join("ops.jsonl"));
            let report = d.join("two-chips-report");
            let r = measure_report(&ttprof, &snap, &oplog, &report);
            record("two-chips-report", m, &r, rows / 2, rows, "rows");
            let _ = std::fs::remove_dir_all(&report);
            let import = d.join("two-chips-import");
            let r = measure_import(&ttprof, &csv, &import);
            record("two-chips-import", m, &r, rows / 2, rows, "rows");
            let _ = std::fs::remove_dir_all(&import);
            let r = tracy(&ttprof, &snap, Some(&oplog), 18_900 + m as u16);
            record("two-chips-tracy", m, &r, rows / 2, rows / 2, "zones");
            let _ = std::fs::remove_dir_all(&out);
        }
        if want("report") || want("import") || want("tracy") {
            eprintln!("{m} M zones: recording the rings ...");
            let run =
                long_run::write(&d, zones, RING_ZONES).unwrap_or_else(|e| fail(&e.to_string()));
            let (snap, oplog, made) = (run.snapshot, run.oplog, run.zones);
            let csv = d.join("report/profile_log_device.csv");
            if want("report") || want("import") {
                let report = measure_report(&ttprof, &snap, &oplog, &d.join("report"));
                record("report", m, &report, made, made, "zones");
            }
            if want("import") {
                let rows = count_lines(&csv).saturating_sub(2);
                let import = measure_import(&ttprof, &csv, &d.join("import"));
                record("import", m, &import, made, rows, "rows");
            }
            let _ = std::fs::remove_dir_all(d.join("report"));
            let _ = std::fs::remove_dir_all(d.join("import"));
            if want("tracy") {
                let r = tracy(&ttprof, &snap, Some(&oplog), 18_600 + m as u16);
                record("tracy", m, &r, made, made, "zones");
            }
        }
        if want("tracy-messages") {
            eprintln!("{m} M zones: recording the rings, with messages ...");
            let md = d.join("messages");
            std::fs::create_dir_all(&md).unwrap_or_else(|e| fail(&e.to_string()));
            let run = long_run::write_with_messages(&md, zones, RING_ZONES)
                .unwrap_or_else(|e| fail(&e.to_string()));
            let r = tracy(&ttprof, &run.snapshot, Some(&run.oplog), 18_700 + m as u16);
            record("tracy-messages", m, &r, run.zones, run.zones, "zones");
            let _ = std::fs::remove_dir_all(&md);
        }
        if let Some((brisc, ncrisc)) = &kernels {
            let launches = zones.div_ceil(LAUNCH_ZONES);
            let kernel_args = |out: &Path, extra: &[&str]| -> Vec<String> {
                let mut a: Vec<String> = [
                    "run",
                    "--grid",
                    GRID,
                    "--kernel",
                    &format!("brisc={}", brisc.display()),
                    "--kernel",
                    &format!("ncrisc={}", ncrisc.display()),
                    "--arg",
                    &format!("brisc={RISC_ZONES}"),
                    "--arg",
                    &format!("ncrisc={RISC_ZONES}"),
                    "--launches",
                    &launches.to_string(),
                    "--out",
                    s(out),
                ]
                .map(String::from)
                .to_vec();
                a.extend(extra.iter().map(|x| x.to_string()));
                a
            };
            if want("run") {
                eprintln!("{m} M zones: ttprof run, {launches} launches ...");
                let out = d.join("run");
                let args = kernel_args(&out, &[]);
                let r = measure(
                    &ttprof,
                    &args.iter().map(String::as_str).collect::<Vec<_>>(),
                );
                let rows = count_lines(&out.join("profile_log_device.csv")).saturating_sub(2);
                record("run", m, &r, rows / 2, rows, "rows");
                let _ = std::fs::remove_dir_all(&out);
            }
            if want("capture") {
                eprintln!("{m} M zones: ttprof capture --all-outputs of a run ...");
                let run_out = d.join("capture-run");
                let args = kernel_args(
                    &run_out,
                    &["--drain-every-cycles", "0", "--policy", "block"],
                );
                let out = d.join("capture");
                let r = capture(&ttprof, &args, &run_out, &out);
                let rows = count_lines(&out.join("profile_log_device.csv")).saturating_sub(2);
                record("capture", m, &r, rows / 2, rows, "rows");
                let _ = std::fs::remove_dir_all(&run_out);
                let _ = std::fs::remove_dir_all(&out);
            }
            if want("read-consume") && m == largest {
                eprintln!("read --consume of full rings ...");
                let run_out = d.join("consume-run");
                let mut args =
                    kernel_args(&run_out, &["--drain-every-cycles", "0", "--policy", "drop"]);
                // One launch fills every ring: the image holds what the rings hold.
                let at = args.iter().position(|a| a == "--launches").unwrap_or(0);
                args[at + 1] = "1".into();
                let _ = run_quiet(&ttprof, &args);
                let out = d.join("consume");
                let r = measure(
                    &ttprof,
                    &[
                        "read",
                        "--consume",
                        "--device",
                        s(&run_out.join("device.img")),
                        "--oplog",
                        s(&run_out.join("ops.jsonl")),
                        "--out",
                        s(&out),
                    ],
                );
                let rows = count_lines(&out.join("profile_log_device.csv")).saturating_sub(2);
                record("read-consume", m, &r, rows / 2, rows, "rows");
                let _ = std::fs::remove_dir_all(&run_out);
                let _ = std::fs::remove_dir_all(&out);
            }
        }
        if !keep {
            let _ = std::fs::remove_dir_all(&d);
        }
    }
    if let Some(p) = out.parent() {
        let _ = std::fs::create_dir_all(p);
    }
    let json = serde_json::json!({
        "ring_zones": RING_ZONES,
        "shapes": shapes,
        "run_grid": GRID,
        "run_launch_zones": LAUNCH_ZONES,
        "runs": results,
    });
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
    timed(ttprof, args)
        .wait_with_output()
        .map(|o| measured(args, &o))
        .unwrap_or_else(|e| fail(&format!("/usr/bin/time: {e}")))
}

/// `ttprof args` started under `/usr/bin/time`, its output piped.
fn timed(ttprof: &Path, args: &[&str]) -> Child {
    Command::new("/usr/bin/time")
        .arg("-f")
        .arg("TTPROF_BENCH %M %e")
        .arg(ttprof)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("/usr/bin/time: {e}")))
}

/// The figures `/usr/bin/time` printed for `ttprof args`.
fn measured(args: &[&str], o: &Output) -> Measured {
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
        let tail: Vec<&str> = err.lines().rev().take(20).collect();
        fail(&format!(
            "ttprof {} exited {code}: {}",
            args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    Measured {
        rss: kb * 1024,
        seconds: seconds.max(0.01),
        code,
    }
}

/// Runs `ttprof args` without measuring it (its exit status).
fn run_quiet(ttprof: &Path, args: &[String]) -> Option<i32> {
    Command::new(ttprof)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .and_then(|s| s.code())
}

/// Builds [`KERNEL`] for BRISC and NCRISC with `ttprof build`: the ELFs' paths.
fn build_kernels(ttprof: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let src = dir.join("zones.cpp");
    std::fs::write(&src, KERNEL).unwrap_or_else(|e| fail(&e.to_string()));
    let build = |risc: &str| {
        let o = Command::new(ttprof)
            .args(["build", "--core", risc, s(&src), "--target-dir"])
            .arg(dir.join(risc))
            .output()
            .unwrap_or_else(|e| fail(&format!("ttprof build: {e}")));
        let out = String::from_utf8_lossy(&o.stdout);
        match out.split_whitespace().nth(1) {
            Some(p) if o.status.success() => PathBuf::from(p),
            _ => fail(&format!(
                "ttprof build --core {risc}: {}{}",
                out,
                String::from_utf8_lossy(&o.stderr)
            )),
        }
    };
    (build("brisc"), build("ncrisc"))
}

/// `ttprof capture --all-outputs` of the run `run_args` makes (no consumer of its own),
/// attached once its image and op log exist, stopped (its flag file removed) when the run
/// ends.
fn capture(ttprof: &Path, run_args: &[String], run_out: &Path, out: &Path) -> Measured {
    let _ = std::fs::remove_dir_all(run_out);
    let flag = run_out.with_extension("flag");
    std::fs::write(&flag, b"").unwrap_or_else(|e| fail(&e.to_string()));
    let mut run = Command::new(ttprof)
        .args(run_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("ttprof run: {e}")));
    let (image, oplog) = (run_out.join("device.img"), run_out.join("ops.jsonl"));
    let start = Instant::now();
    while !(image.exists() && oplog.exists()) {
        if start.elapsed() > Duration::from_secs(120) || run.try_wait().ok().flatten().is_some() {
            fail("ttprof run did not create its device image and op log");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let args = [
        "capture",
        "--device",
        s(&image),
        "--oplog",
        s(&oplog),
        "--all-outputs",
        "--until-file-gone",
        s(&flag),
        "--out",
        s(out),
    ];
    let child = timed(ttprof, &args);
    let _ = run.wait();
    let _ = std::fs::remove_file(&flag);
    let o = child
        .wait_with_output()
        .unwrap_or_else(|e| fail(&format!("ttprof capture: {e}")));
    measured(&args, &o)
}

/// `ttprof report` of a snapshot and its op log into `out`, without the printed summary.
fn measure_report(ttprof: &Path, snap: &Path, oplog: &Path, out: &Path) -> Measured {
    measure(
        ttprof,
        &[
            "report",
            "--no-summary",
            "--device",
            s(snap),
            "--oplog",
            s(oplog),
            "--out",
            s(out),
        ],
    )
}

/// `ttprof import` of a device log into `out`, without the printed summary.
fn measure_import(ttprof: &Path, csv: &Path, out: &Path) -> Measured {
    measure(ttprof, &["import", s(csv), "--no-summary", "--out", s(out)])
}

/// `ttprof tracy` of a snapshot (with its op log) or a device log on `port`, drained by
/// the protocol-level capture tool.
fn tracy(ttprof: &Path, snap: &Path, oplog: Option<&Path>, port: u16) -> Measured {
    let port_arg = port.to_string();
    let mut args = vec!["tracy", "--device", s(snap)];
    if let Some(oplog) = oplog {
        args.extend(["--oplog", s(oplog)]);
    }
    args.extend(["--port", &port_arg, "--timeout-s", "900"]);
    let mut child = timed(ttprof, &args);
    let opts = ttprof::tracy::test_client::ClientOptions {
        timeout: Duration::from_secs(900),
        ..Default::default()
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let client = std::thread::spawn(move || ttprof::tracy::test_client::capture(addr, &opts));
    // A server that stopped (an input Tracy cannot take) is not waited for the client's
    // timeout: its client is left to give up on its own.
    let mut ended = None;
    while !client.is_finished() {
        match (child.try_wait(), ended) {
            (Ok(Some(_)), None) => ended = Some(Instant::now()),
            (_, Some(at)) if at.elapsed() > Duration::from_secs(5) => break,
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if client.is_finished() {
        if let Ok(Err(e)) = client.join() {
            eprintln!("tracy capture: {e}");
        }
    }
    let o = child
        .wait_with_output()
        .unwrap_or_else(|e| fail(&format!("ttprof tracy: {e}")));
    measured(&args, &o)
}

fn count_lines(path: &Path) -> u64 {
    use std::io::BufRead;
    let f = std::fs::File::open(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    std::io::BufReader::new(f).lines().count() as u64
}

/// Appends to the device log at `path` one `BRISC-KERNEL` zone of core (1, 1) of `chip`.
/// Returns the zones written (1).
fn append_chip_zone(path: &Path, chip: u64) -> u64 {
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| {
            write!(
                f,
                "{chip},1,1,BRISC,0,100,0,1,,,BRISC-KERNEL,ZONE_START,1,kernel.cpp,\n\
                 {chip},1,1,BRISC,0,200,0,1,,,BRISC-KERNEL,ZONE_END,1,kernel.cpp,\n"
            )
        });
    written.unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    1
}

/// Writes tt-metal's device log of `chips` chips of `rings` rings each (cores from 1,1 up,
/// five RISCs a core), each ring a `<RISC>-KERNEL` zone around `zones - 1` zones, one run.
/// Returns the zones written.
/// The RISCs' names in a device log, in ring order on a tile.
const RISC_NAMES: [&str; 5] = ["BRISC", "NCRISC", "TRISC_0", "TRISC_1", "TRISC_2"];

/// A device log at `path`, buffered, its two header lines written (Wormhole B0 at 1 GHz, as
/// tt-metal writes them).
fn device_log(path: &Path) -> std::io::BufWriter<std::fs::File> {
    use std::io::Write;
    let f =
        std::fs::File::create(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    writeln!(
        w,
        "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1"
    )
    .and_then(|()| {
        writeln!(
            w,
            "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data"
        )
    })
    .unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    w
}

/// A device log of `ops` ops on one chip, each on the same [`OPS_TILES`] tiles, every RISC
/// of each: a KERNEL zone around one zone per RISC and op, as tt-metal writes a model's
/// run of many small ops (each ring's rows together, in op order). Returns the zones.
fn write_ops_csv(path: &Path, ops: u64) -> u64 {
    use std::io::Write;
    let mut w = device_log(path);
    let written = (|| -> std::io::Result<()> {
        for tile in 0..OPS_TILES {
            let (x, y) = (1 + tile % 8, 1 + tile / 8);
            for risc in RISC_NAMES {
                let kernel = if risc.starts_with("TRISC") {
                    "TRISC-KERNEL"
                } else {
                    &format!("{risc}-KERNEL")
                };
                for op in 0..ops {
                    let t = 1_000 + 300 * op;
                    let run = op + 1;
                    let mut row = |time: u64, name: &str, kind: &str, line: u32| {
                        writeln!(
                            w,
                            "0,{x},{y},{risc},0,{time},0,{run},,,{name},{kind},{line},kernel.cpp,"
                        )
                    };
                    row(t, kernel, "ZONE_START", 1)?;
                    row(t + 10, "step", "ZONE_START", 5)?;
                    row(t + 17, "step", "ZONE_END", 5)?;
                    row(t + 120, kernel, "ZONE_END", 1)?;
                }
            }
        }
        w.flush()
    })();
    written.unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    ops * OPS_TILES * 5 * 2
}

fn write_rings_csv(path: &Path, chips: u64, rings: u64, zones: u64) -> u64 {
    use std::io::Write;
    let mut w = device_log(path);
    let inner = zones.saturating_sub(1);
    let written = (|| -> std::io::Result<()> {
        for chip in 0..chips {
            for ring in 0..rings {
                let core = ring / 5;
                let (x, y) = (1 + core % 250, 1 + core / 250);
                let risc = RISC_NAMES[(ring % 5) as usize];
                let mut row = |time: u64, name: &str, kind: &str, line: u32| {
                    writeln!(
                        w,
                        "{chip},{x},{y},{risc},0,{time},0,1,,,{name},{kind},{line},kernel.cpp,"
                    )
                };
                let kernel = format!(
                    "{}-KERNEL",
                    if risc.starts_with("TRISC") {
                        "TRISC"
                    } else {
                        risc
                    }
                );
                row(100, &kernel, "ZONE_START", 1)?;
                for i in 0..inner {
                    let t = 110 + 10 * i;
                    row(t, "step", "ZONE_START", 5)?;
                    row(t + 7, "step", "ZONE_END", 5)?;
                }
                row(110 + 10 * inner, &kernel, "ZONE_END", 1)?;
            }
        }
        w.flush()
    })();
    written.unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
    chips * rings * zones
}
