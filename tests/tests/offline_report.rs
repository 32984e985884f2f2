//! The offline path a user takes: run with the records left in the rings, save a snapshot
//! with the clock-sync samples, and run the `ttprof report` binary on it. Its files must equal
//! what the in-process pipeline wrote from the same run, clock fit included.

use riscv_linker::Arch;
use std::process::Command;
use std::time::UNIX_EPOCH;
use ttprof::launch::Settings;
use ttprof::oplog::OpLog;
use ttprof::outputs::{self, Options};
use ttprof::resolve::Resolver;
use ttprof_demo::ops;
use ttprof_demo::scenario::{self, Scenario};
use ttprof_tests::workspace;

fn file_starting(dir: &std::path::Path, prefix: &str) -> String {
    let e = std::fs::read_dir(dir).unwrap().flatten().find(|e| e.file_name().to_string_lossy().starts_with(prefix));
    std::fs::read_to_string(e.unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display())).path()).unwrap()
}

#[test]
fn a_snapshot_reproduces_the_aligned_outputs_through_the_cli() {
    let arch = Arch::WormholeB0;
    let out = workspace().join("target/test-offline-report");
    let _ = std::fs::remove_dir_all(&out);
    let elfs = scenario::build_kernels(arch, &out.join("kernels")).unwrap();
    let s = Scenario {
        arch,
        grid: (2, 1),
        ops: ops::sequence(2),
        out: out.clone(),
        threads: 2,
        drain_every_cycles: 0, // no consumer: the records stay in the rings
        settings: Settings::default(),
        clock: scenario::realistic_clock(arch),
    };
    let outcome = scenario::run(&s, &elfs, |_| {}).unwrap();
    assert!(outcome.readout.issues.is_empty(), "{:?}", outcome.readout.issues);
    let oplog = OpLog::read(&outcome.oplog).unwrap();
    let res = Resolver::new(&oplog).resolve(&outcome.readout);
    let options = Options { summary_threshold_ns: 0.0, now: UNIX_EPOCH };
    let here = out.join("in-process");
    outputs::write_all(&here, &outcome.readout, &res, &oplog, &outcome.clock.timebase, &options).unwrap();
    let snap = out.join("device.snap");
    scenario::save_snapshot(&outcome, &snap).unwrap();

    let cli = out.join("cli");
    let run = Command::new(ttprof_tests::ttprof_binary())
        .args(["report", "--no-summary", "--device"])
        .arg(&snap)
        .arg("--oplog")
        .arg(&outcome.oplog)
        .arg("--out")
        .arg(&cli)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains("985.0"), "the CLI fits the recorded samples (1.5% slow clock): {stdout}");
    for f in ["profile_log_device.csv", "ops_perf_results_", "ttprof_trace.json"] {
        assert_eq!(file_starting(&cli, f), file_starting(&here, f), "{f} differs between the CLI and the pipeline");
    }
}
