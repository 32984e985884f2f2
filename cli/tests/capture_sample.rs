//! `ttprof capture --sample N` from another process: this test process runs the real
//! `bench` kernel on the emulator (two tiles) while `ttprof capture` samples every tile's
//! debug daisychain through the device image's posted register writes, then names the
//! samples from the op log. The sampled share of every line above 5 % agrees with the exact
//! share `ttprof run --lines` gives for the same kernel within 2 percentage points, and the
//! writes the capture posted are all ones the device took.
//!
//! Launches repeat until the capture has armed enough windows (its posted writes, read from
//! the image), so the figure does not depend on how fast either process runs. (The waits
//! are safety nets that fail a broken test instead of hanging it, not timing assertions.)

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::live::{bench_elf, device, launch_bench, wait_attached, workspace};
use ttprof::oplog::OpLogWriter;

/// The bench kernel's arguments: mode 4 (a counted loop and a store, no zones), iterations,
/// loop steps per iteration.
const ARGS: [u32; 3] = [4, 500, 1000];
/// Windows to arm before the last launch: 16 samples each.
const WINDOWS: u32 = 800;
/// Posted writes per armed window (bus control, mode, first, last, trigger).
const WRITES_PER_WINDOW: u32 = 5;

/// `ttprof_lines.txt` / `ttprof_samples.txt`: each line label's share of the first kernel
/// (percent), from its table rows (the first `file:line` token, the share before it).
fn shares(path: &Path) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    let mut started = false;
    for line in text.lines() {
        if line.contains("by innermost zone") {
            break; // the kernel's own table ends here
        }
        if line.starts_with("== ") {
            if started {
                break;
            }
            started = true;
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        if !started || t.len() < 3 || t[0].parse::<u64>().is_err() {
            continue;
        }
        let Some(share) = t[1].strip_suffix('%').and_then(|s| s.parse::<f64>().ok()) else {
            continue;
        };
        if let Some(label) = t.iter().find(|w| {
            w.rsplit_once(':')
                .is_some_and(|(f, n)| !f.is_empty() && n.parse::<u32>().is_ok())
        }) {
            out.insert(label.to_string(), share);
        }
    }
    out
}

#[test]
fn capture_samples_a_running_emulator_and_agrees_with_the_exact_line_profile() {
    let elf = bench_elf("test-capture-sample");
    let dir = workspace().join("target/test-capture-sample/live");
    let (mut dev, mem) = device(&dir, (2, 1));
    let tiles = dev.tiles();

    // The exact profile of the same kernel and arguments.
    let exact_dir = workspace().join("target/test-capture-sample/exact");
    let _ = std::fs::remove_dir_all(&exact_dir);
    let l1: Vec<String> = ARGS
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:#x}={v}", example_abi::ARGS + 4 * i as u32))
        .collect();
    let mut run = Command::new(env!("CARGO_BIN_EXE_ttprof"));
    run.args(["run", "--grid", "1x1", "--lines", "--kernel"])
        .arg(format!("brisc={}", elf.display()));
    for a in &l1 {
        run.arg("--l1").arg(a);
    }
    let out = run.arg("--out").arg(&exact_dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exact = shares(&exact_dir.join("ttprof_lines.txt"));

    let flag = dir.join("capturing");
    std::fs::write(&flag, b"").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .arg("capture")
        .arg("--device")
        .arg(dir.join("device.img"))
        .arg("--oplog")
        .arg(dir.join("ops.jsonl"))
        .args(["--sample", "8", "--until-file-gone"])
        .arg(&flag)
        .arg("--out")
        .arg(dir.join("out"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_attached(&mem, &tiles, &mut child);

    let mut log =
        OpLogWriter::create(&dir.join("ops.jsonl"), &ttprof::inputs::Inputs::none()).unwrap();
    let give_up = Instant::now() + Duration::from_secs(600);
    let mut run_id = 0;
    while mem.posted_state().posted < WINDOWS * WRITES_PER_WINDOW {
        assert!(
            Instant::now() < give_up,
            "the capture armed too few windows"
        );
        run_id += 1;
        launch_bench(&mut dev, &mem, &mut log, elf, run_id, ARGS);
    }
    drop(log);
    std::fs::remove_file(&flag).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        mem.posted_state().refused,
        0,
        "every posted write was taken"
    );

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/capture.json")).unwrap())
            .unwrap();
    let windows = summary["samples"]["windows"].as_u64().unwrap();
    assert!(windows > 0, "{summary}");
    assert_eq!(summary["errors"], 0, "{summary}");

    let sampled = shares(&dir.join("out/ttprof_samples.txt"));
    let hot: Vec<(&String, &f64)> = exact.iter().filter(|(_, s)| **s > 5.0).collect();
    assert!(hot.len() >= 2, "the bench loop's lines: {exact:?}");
    for (line, share) in hot {
        let got = sampled.get(line).copied().unwrap_or(0.0);
        assert!(
            (got - share).abs() <= 2.0,
            "{line}: sampled {got} % vs exact {share} % ({windows} windows)\n{stdout}"
        );
    }
}
