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
use ttprof_tests::{file_starting, workspace};

/// The text of the file in `dir` whose name starts with `prefix`.
fn text_starting(dir: &std::path::Path, prefix: &str) -> String {
    let path = file_starting(dir, prefix);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_snapshot_reproduces_the_aligned_outputs_through_the_cli() {
    snapshot_reproduces_outputs("no-consumer", 0); // the records stay in the rings
}

#[test]
fn a_snapshot_of_a_drained_run_carries_what_the_consumer_took() {
    // The consumer drains (and frees) the rings while the kernels run: the rings end empty,
    // and the snapshot must carry the drained payload for an offline report to see anything.
    snapshot_reproduces_outputs("drained", 20_000);
}

fn snapshot_reproduces_outputs(name: &str, drain_every_cycles: u64) {
    let arch = Arch::WormholeB0;
    let out = workspace().join("target/test-offline-report").join(name);
    let _ = std::fs::remove_dir_all(&out);
    let elfs = scenario::build_kernels(arch, &out.join("kernels")).unwrap();
    let s = Scenario {
        lines: false,
        backend: Default::default(),
        sample: None,
        arch,
        grid: (2, 1),
        ops: ops::sequence(2),
        out: out.clone(),
        threads: 2,
        drain_every_cycles,
        settings: Settings::default(),
        clock: scenario::realistic_clock(arch),
    };
    let outcome = scenario::run(&s, &elfs, |_| {}).unwrap();
    assert!(
        outcome.readout.issues().is_empty(),
        "{:?}",
        outcome.readout.issues()
    );
    assert!(
        outcome.readout.zones() > 100,
        "{} zones",
        outcome.readout.zones()
    );
    let oplog_path = outcome.out.join("ops.jsonl");
    let oplog = OpLog::read(&oplog_path, &ttprof::inputs::Inputs::none()).unwrap();
    let res = Resolver::new(&oplog).resolve(&outcome.readout);
    let options = Options {
        summary_threshold_ns: 0.0,
        now: UNIX_EPOCH,
        notes: vec![],
        dataset: None,
        html_limits: (ttprof::html::MAX_ZONES, ttprof::html::MAX_MARKS),
        inputs: ttprof::inputs::Inputs::none(),
        stopped: vec![],
    };
    let here = out.join("in-process");
    let profile = ttprof::profile::Profile::resolved(
        outcome.readout.clone(),
        res,
        Some(oplog),
        outcome.fit.timebase.clone(),
    );
    outputs::write_all(&here, &profile, &options).unwrap();
    let snap = &outcome.snapshot;
    let drained = ttprof::devmem::Snapshot::load(snap, &ttprof::inputs::Inputs::none())
        .unwrap()
        .drained_bytes();
    assert_eq!(
        drained > 0,
        drain_every_cycles > 0,
        "drained payload recorded: {drained} bytes"
    );

    let cli = out.join("cli");
    let run = Command::new(ttprof_tests::ttprof_binary())
        .args(["report", "--no-summary", "--device"])
        .arg(snap)
        .arg("--oplog")
        .arg(&oplog_path)
        .arg("--out")
        .arg(&cli)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("985.0"),
        "the CLI fits the recorded samples (1.5% slow clock): {stdout}"
    );
    for f in [
        "profile_log_device.csv",
        "ops_perf_results_",
        "ttprof_trace.json",
        "ttprof_summary.txt",
    ] {
        assert_eq!(
            text_starting(&cli, f),
            text_starting(&here, f),
            "{f} differs between the CLI and the pipeline"
        );
    }
    let csv = text_starting(&cli, "profile_log_device.csv");
    assert_eq!(
        csv.lines().filter(|l| l.contains(",ZONE_START,")).count(),
        outcome.readout.zones()
    );

    if drain_every_cycles > 0 {
        // The drained device image itself holds nothing: said so, pointing at the snapshot.
        let run = Command::new(ttprof_tests::ttprof_binary())
            .args(["report", "--no-summary", "--device"])
            .arg(&outcome.image)
            .arg("--oplog")
            .arg(&oplog_path)
            .arg("--out")
            .arg(out.join("from-image"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{err}");
        assert!(
            err.contains("nothing left to read") && err.contains("device.snap"),
            "{err}"
        );
    }
}
