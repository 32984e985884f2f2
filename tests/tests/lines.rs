//! `ttprof run --lines`: every emulated cycle by source line and cause, for a Rust kernel
//! and a C++ kernel. The line files must add up to the cores' cycles, exactly, and agree with
//! a run without `--lines` (same cycles, same zones).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use ttprof_tests::{example_elf as elf, ttprof_binary, workspace};

fn run(dir: &Path, args: &[&str]) {
    let o = Command::new(ttprof_binary())
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    eprintln!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "ttprof run {args:?}");
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
    let dir = workspace().join("target/test-lines/rust");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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
        "ttprof_example_kernels::wr (inlined into __ttprof_main)",
    );
    assert!(text.contains("2 core(s)"), "{text}");
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
    let dir = workspace().join("target/test-lines/cxx");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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

/// `--sample`: the daisychain's samples of a small C++ kernel on three TRISCs, rotated
/// between them, agree with the exact line shares of the same run within the interval the
/// report computes, and sampling changes nothing in the run (its zones are the same).
#[test]
fn sampled_shares_agree_with_exact_within_their_interval() {
    let dir = workspace().join("target/test-lines/sampled");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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
"#,
    )
    .unwrap();
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
}
