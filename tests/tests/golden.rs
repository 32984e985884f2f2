//! Golden files: the bytes `ttprof run` writes for one small, fixed run, reviewed and kept as
//! insta snapshots in `tests/tests/snapshots/` (defmt's `*.out` approach). Any change to the
//! device CSV, the op report, the trace JSON or the summary fails here and shows the diff, so
//! a refactor of the host crate cannot change an output unnoticed, and an intended change is
//! reviewed line by line (`INSTA_UPDATE=always cargo test --release -p ttprof-tests --test
//! golden`, then read `git diff tests/tests/snapshots`).
//!
//! The run: `examples/kernels/src/bin/sums.rs` on BRISC of a 2x1 grid, two launches of two
//! iterations each. Per core and launch that is the `BRISC-FW`/`BRISC-KERNEL` wrapper zones,
//! a data record (`acc` = 2 * 1000 + 7), an event (`start`), two `iteration` zones and three
//! sum zones (`spin-100` x2, `spin-10` x6, `spin-even` x1 measurements).
//!
//! Everything in these files is deterministic: device cycles come from the emulator, and so
//! do the host-ns timestamps (the session's host clock is the emulator's virtual host clock,
//! and the clock fit is made from its sync samples). Two runs were diffed byte for byte;
//! only two things differ between runs or checkouts, and only they are redacted:
//! * the op report's file name, `ops_perf_results_<UTC wall-clock time>.csv`: the file is
//!   found by its pattern and the name checked against it, its content is snapshotted whole;
//! * the absolute path of this checkout, which the runtime's sites carry as their source
//!   file (`kernel!` expands in `device-rt/src/lib.rs`, outside the kernel crate): it is
//!   replaced by `[WORKSPACE]`.
//!
//! The cycle counts depend on the kernel's machine code, so a new rustc that compiles
//! `sums` differently changes them: review such a diff like any other.

use riscv_linker::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use ttprof_tests::{build_kernels, ttprof_binary, workspace};

/// The output directory of the one `ttprof run` every test here reads (made on first use).
fn run_outputs() -> &'static Path {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let sums = build_kernels(
            &workspace().join("examples/kernels"),
            Arch::WormholeB0,
            false,
            &[],
        );
        let elf = sums
            .elf("sums")
            .expect("examples/kernels has a `sums` binary");
        let out = workspace().join("target/test-golden");
        let _ = std::fs::remove_dir_all(&out);
        let o = Command::new(ttprof_binary())
            .arg("run")
            .args(["--grid", "2x1", "--launches", "2", "--name", "golden"])
            // The kernel's argument word: two iterations per launch.
            .args(["--l1", "0x30000=2"])
            .arg("--kernel")
            .arg(format!("brisc={}", elf.display()))
            .arg("--out")
            .arg(&out)
            .output()
            .expect("ttprof runs");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "ttprof run failed:\n{log}");
        out
    })
}

/// An output file's text with this checkout's absolute path replaced by `[WORKSPACE]` (the
/// only run- or machine-dependent part of the files snapshotted here, see the module docs).
fn output(name: &str) -> String {
    let path = run_outputs().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let root = workspace().to_string_lossy().into_owned();
    text.replace(&root, "[WORKSPACE]")
}

/// Whether `name` is `ops_perf_results_YYYY_MM_DD_HH_MM_SS.csv`.
fn is_op_report_name(name: &str) -> bool {
    let Some(stamp) = name
        .strip_prefix("ops_perf_results_")
        .and_then(|s| s.strip_suffix(".csv"))
    else {
        return false;
    };
    let fields: Vec<&str> = stamp.split('_').collect();
    let widths = [4, 2, 2, 2, 2, 2];
    fields.len() == widths.len()
        && fields
            .iter()
            .zip(widths)
            .all(|(f, w)| f.len() == w && f.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn device_csv() {
    insta::assert_snapshot!("profile_log_device.csv", output("profile_log_device.csv"));
}

#[test]
fn op_report() {
    // The file name carries the wall-clock time of the run (tt-metal's name): not
    // snapshotted, only checked to be the one op report of the run, named by that pattern.
    let names: Vec<String> = std::fs::read_dir(run_outputs())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ops_perf_results"))
        .collect();
    assert_eq!(names.len(), 1, "one op report per run: {names:?}");
    assert!(
        is_op_report_name(&names[0]),
        "{:?} is not ops_perf_results_YYYY_MM_DD_HH_MM_SS.csv",
        names[0]
    );
    insta::assert_snapshot!("ops_perf_results.csv", output(&names[0]));
}

#[test]
fn trace_json() {
    insta::assert_snapshot!("ttprof_trace.json", output("ttprof_trace.json"));
}

#[test]
fn summary() {
    insta::assert_snapshot!("ttprof_summary.txt", output("ttprof_summary.txt"));
}

#[test]
fn op_report_names_are_recognised() {
    assert!(is_op_report_name(
        "ops_perf_results_2026_11_23_12_36_01.csv"
    ));
    for bad in [
        "ops_perf_results_2026_11_23_12_36.csv",
        "ops_perf_results_2026_11_23_12_36_0x.csv",
        "ops_perf_results.csv",
    ] {
        assert!(!is_op_report_name(bad), "{bad}");
    }
}
