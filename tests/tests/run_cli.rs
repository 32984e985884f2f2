//! `ttprof run` as a user calls it, on the example kernels: a fault, the options that pick
//! tiles, launches, the full-ring policy and the drain cadence, and the mistakes a user makes
//! (each an exit 1 with a message that names what and where).

use riscv_linker::Arch;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof_tests::{
    build_kernels, example_elf as elf, file_starting, fresh_dir, ttprof_binary, ttprof_ok,
    workspace,
};

/// `ttprof run ARGS --out OUT` in a fresh `out`.
fn ttprof_run(args: &[&str], out: &Path) -> Output {
    let _ = std::fs::remove_dir_all(out);
    let mut all: Vec<&OsStr> = vec![OsStr::new("run")];
    all.extend(args.iter().map(OsStr::new));
    all.extend([OsStr::new("--out"), out.as_os_str()]);
    ttprof_tests::ttprof(None, &all)
}

fn zone_starts(out: &Path, name: &str) -> Vec<String> {
    let csv = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
    csv.lines()
        .filter(|l| l.contains(&format!(",{name},ZONE_START,")))
        .map(String::from)
        .collect()
}

/// A kernel panic carries its location and literal message into the fault report.
#[test]
fn a_kernel_panic_names_its_place_and_message() {
    let out = workspace().join("target/test-run-cli/panic");
    let fault = elf("fault");
    let o = ttprof_run(
        &[
            "--grid",
            "1x1",
            "--kernel",
            &format!("brisc={}", fault.display()),
            "--l1",
            "0x30000=1",
            "--l1",
            "0x30004=1",
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "a fault is a data problem: the outputs are written"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    for want in [
        "kernel panicked at ",
        "fault.rs:",
        ": the kernel gave up",
        "BRISC",
    ] {
        assert!(err.contains(want), "{want:?} missing from: {err}");
    }
}

/// Issue 40: a deadlock names, on each core's line, the typed wait the core is inside, from
/// the kernel's DWARF (tests/cxx_cli.rs for C). A Rust kernel's `main` is called through an
/// opaque pointer (`__run`), so the optimiser keeps it a function of its own: inlined into
/// the entry, its copy lost the wait's block from the DWARF and the line named no wait.
/// The stopped core's analysis entry names it too (`stopped.cores[].open_waits`).
#[test]
fn a_rust_deadlock_names_the_wait_its_core_is_in() {
    let out = workspace().join("target/test-run-cli/deadlock-wait");
    let fault = elf("fault");
    let o = ttprof_run(
        &[
            "--grid",
            "1x1",
            "--kernel",
            &format!("brisc={}", fault.display()),
            "--l1",
            "0x30000=1",
            "--l1",
            "0x30004=2",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(2), "a deadlock is a data problem");
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("  chip 0 tile (1,1) BRISC at pc 0x"))
        .unwrap_or_else(|| panic!("no line for the core: {err}"));
    assert!(line.contains("polls L1 0x00030008"), "{line}");
    assert!(
        line.ends_with("; in wait \"wait-in1\" on CB 1 front (data) (src/bin/fault.rs:33)"),
        "{line}"
    );
    assert_eq!(err.matches("wait-in1").count(), 1, "named once: {err}");
    let a: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ttprof_analysis.json")).unwrap()).unwrap();
    let waits = &a["ops"][0]["stopped"]["cores"][0]["open_waits"];
    assert_eq!(
        (
            &waits[0]["zone"],
            &waits[0]["resource"],
            waits.as_array().map(Vec::len)
        ),
        (&"wait-in1".into(), &"CB 1 front (data)".into(), Some(1)),
        "{waits:#}"
    );
}

#[test]
fn a_fault_is_diagnosed_and_the_zones_recorded_before_it_are_written() {
    let out = workspace().join("target/test-run-cli/fault");
    let fault = elf("fault");
    // Three zones of 5000 cycles: under 2^15 cycles, so the runtime never published them
    // before the fault; the host publishes what the stopped core wrote.
    let o = ttprof_run(
        &[
            "--grid",
            "2x1",
            "--kernel",
            &format!("brisc={}", fault.display()),
            "--l1",
            "0x30000=3",
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "a fault is a data problem: the outputs are written"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // The emulator's diagnosis: where, what, the instruction, the symbol and the source line.
    for want in [
        "kernel fault",
        "chip 0 tile",
        "BRISC",
        "is outside every region",
        "at pc 0x",
        "(instruction 0x",
        ": sw a",
        " in fault::main+0x",
        ".rs:",
    ] {
        assert!(err.contains(want), "{want:?} missing from: {err}");
    }
    assert!(err.contains("published by the host and are read"), "{err}");
    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    assert!(
        summary.starts_with("FAULT: chip 0 tile"),
        "the fault is named in the summary: {summary}"
    );
    // The first tile in tile order faulted first and stopped the run: its three zones are
    // all there; the other tile stopped wherever it was.
    let noc = Arch::WormholeB0.worker_noc(0, 0).unwrap();
    let first = format!("0,{},{},BRISC,", noc.x, noc.y);
    let before = zone_starts(&out, "before-fault");
    assert_eq!(
        before.iter().filter(|l| l.starts_with(&first)).count(),
        3,
        "{before:#?}"
    );
    assert!(before.len() <= 6);
    assert!(
        err.contains("stopped by a fault before its kernel ended"),
        "{err}"
    );
}

#[test]
fn tiles_launches_and_policy_pick_what_runs() {
    let out = workspace().join("target/test-run-cli/options");
    let sums = elf("sums");
    let k = format!("brisc={}", sums.display());
    let o = ttprof_run(
        &[
            "--grid",
            "2x2",
            "--kernel",
            &k,
            "--tiles",
            "1,1",
            "--tiles",
            "0,1",
            "--launches",
            "3",
            "--l1",
            "0x30000=2",
            "--policy",
            "drop",
            "--name",
            "two-tiles",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(0));
    let starts = zone_starts(&out, "iteration");
    assert_eq!(
        starts.len(),
        2 * 3 * 2,
        "2 tiles x 3 launches x 2 iterations"
    );
    let tiles: std::collections::BTreeSet<String> = starts
        .iter()
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect();
    let noc = |x, y| Arch::WormholeB0.worker_noc(x, y).unwrap();
    let want: std::collections::BTreeSet<String> = [noc(1, 1), noc(0, 1)]
        .iter()
        .map(|t| format!("0,{},{}", t.x, t.y))
        .collect();
    assert_eq!(tiles, want);
    let runs: std::collections::BTreeSet<&str> = starts
        .iter()
        .map(|l| l.split(',').nth(7).unwrap())
        .collect();
    assert_eq!(
        runs.into_iter().collect::<Vec<_>>(),
        ["1", "2", "3"],
        "a new run id per launch"
    );
    let oplog = std::fs::read_to_string(out.join("ops.jsonl")).unwrap();
    assert_eq!(oplog.matches("\"op_code\":\"two-tiles\"").count(), 3);
}

#[test]
fn mistakes_exit_1_with_what_was_expected() {
    let out = workspace().join("target/test-run-cli/mistakes");
    let sums = elf("sums");
    let cases: [(Vec<String>, &str); 9] = [
        (
            vec![
                "--kernel".into(),
                format!("brisc={}", sums.display()),
                "--launches".into(),
                "0".into(),
            ],
            "--launches",
        ),
        (
            vec![
                "--kernel".into(),
                format!("brisc={}", sums.display()),
                "--l1".into(),
                "0x30000=@/dev/zero".into(),
            ],
            "is not a regular file",
        ),
        (
            vec!["--manifest".into(), "/dev/zero".into()],
            "is not a regular file",
        ),
        (vec![], "nothing to run"),
        (vec!["--kernel".into(), "brisc".into()], "expected RISC=ELF"),
        (
            vec!["--kernel".into(), "brisc=/nonexistent/elf".into()],
            "neither an ELF file nor CRATE_DIR:BINARY",
        ),
        (
            vec!["--kernel".into(), format!("trisc3={}", sums.display())],
            "unknown RISC \"trisc3\"",
        ),
        (
            vec!["--kernel".into(), format!("trisc0={}", sums.display())],
            "was linked for wormhole_b0 BRISC",
        ),
        (
            vec![
                "--kernel".into(),
                format!("brisc={}", sums.display()),
                "--tiles".into(),
                "5,0".into(),
            ],
            "inside the 1x1 grid",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ttprof_run(&args, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {want:?} missing from {err}");
    }
}

/// Unusable input leaves no output folder behind (issue 26: `kernels/`, `device.img` and
/// `ops.jsonl` were created before a kernel linked for another RISC was refused), L1
/// inputs over what the memory map reserves are refused naming the range, and a manifest
/// with no op is refused. Issue 41: so do the checks a launch made (a grid the chip does not
/// have, the timestamper without a consumer, a DRAM buffer past its channel or of part of a
/// page), now made before anything is created; and what only a launch finds (a DRAM output
/// that cannot be written) removes what the run had created, in a folder of the user's only
/// that (the next test).
#[test]
fn unusable_input_creates_nothing_and_reserved_l1_and_empty_manifests_are_refused() {
    let out = workspace().join("target/test-run-cli/unusable");
    let sums = elf("sums");
    let brisc = format!("brisc={}", sums.display());
    let manifest = workspace().join("target/test-run-cli/empty-ops.json");
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    std::fs::write(&manifest, r#"{"op": []}"#).unwrap();
    let dir = workspace().join("target/test-run-cli/unusable-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let (page, part, file) = (
        dir.join("page.bin"),
        dir.join("part.bin"),
        dir.join("a-file"),
    );
    std::fs::write(&page, [0u8; 4096]).unwrap();
    std::fs::write(&part, [0u8; 3000]).unwrap();
    std::fs::write(&file, "a file, not a folder").unwrap();
    let cases: [(Vec<String>, &str); 17] = [
        (
            vec!["--kernel".into(), format!("ncrisc={}", sums.display())],
            "was linked for wormhole_b0 BRISC",
        ),
        // The buffers this run's profiling writes (issue 41: before, accepted, and the
        // sampler or the timestamper overwrote the kernel's input).
        (
            vec!["--kernel".into(), brisc.clone(), "--sample".into(), "16".into(), "--l1".into(), "0xff000=1".into()],
            "overlaps the sample buffer (--sample-buffer, --sample-count) at 0xff000..0xff100",
        ),
        (
            vec![
                "--kernel".into(),
                brisc.clone(),
                "--sample".into(),
                "16".into(),
                "--sample-buffer".into(),
                "0x40000".into(),
                "--l1".into(),
                "0x40010=1".into(),
            ],
            "overlaps the sample buffer (--sample-buffer, --sample-count) at 0x40000..0x40100",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--backend".into(), "timestamper".into(), "--l1".into(), "0x166000=1".into()],
            "overlaps the timestamper backend's buffer 1 at 0x166000..0x16e000",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x58=1".into()],
            "overlaps the profiler's tile control word CONSUMER (the consumer's lease) at 0x58..0x5c",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x50=1".into()],
            "overlaps the profiler's tile control word CONTROL",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x40=1".into()],
            "tile control word MAGIC",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x94=1".into()],
            "overlaps BRISC's profiler ring control word HEAD at 0x94..0x98",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x1000=1".into()],
            "overlaps BRISC's code (a kernel is loaded over it) at 0x800..0x6000",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0xffb00000=1".into()],
            "in a core's local RAM",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--l1".into(), "0x30001=1".into()],
            "4-byte aligned",
        ),
        (
            vec!["--manifest".into(), manifest.display().to_string()],
            "names no op",
        ),
        // Checked by the session or a launch before (issue 41): the folder stayed.
        (
            vec!["--kernel".into(), brisc.clone(), "--grid".into(), "9x1".into()],
            "grid 9x1 does not fit wormhole_b0's 8x10 worker grid",
        ),
        (
            vec![
                "--kernel".into(),
                brisc.clone(),
                "--backend".into(),
                "timestamper".into(),
                "--drain-every-cycles".into(),
                "0".into(),
            ],
            "the timestamper backend needs a consumer draining while kernels run",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--dram-in".into(), format!("0xfffff000=@{}", page.display())],
            "page 0 lands at 0xfffff000 of DRAM channel 0, past its end (0x80000000 bytes on wormhole_b0)",
        ),
        (
            vec!["--kernel".into(), brisc.clone(), "--dram-in".into(), format!("0x0=@{}", part.display())],
            "3000 bytes: not a whole number of the buffer's 4096-byte pages",
        ),
        // Only the launch finds this one: what the run had created goes.
        (
            vec![
                "--kernel".into(),
                brisc.clone(),
                "--l1".into(),
                "0x30000=2".into(),
                "--dram-out".into(),
                format!("0x0=@{},bytes=4096", file.join("o.bin").display()),
            ],
            "cannot create the output's directory",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ttprof_run(&args, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {want:?} missing from {err}");
        assert!(!out.exists(), "{args:?} created {}", out.display());
    }
}

/// Issue 41: a run into a folder of the user's that fails (exit 1) on what only a launch
/// finds leaves it as it was: what the run created (its kernel copies, op log, device image,
/// the folders and DRAM outputs it made) goes, what was there stays. A kernel fault, exit
/// 2, keeps every output (`a_fault_is_diagnosed...`, tests/stopped_ops.rs).
#[test]
fn a_run_that_fails_at_launch_leaves_the_users_folder_as_it_was() {
    let base = workspace().join("target/test-run-cli/unusable-folder");
    let _ = std::fs::remove_dir_all(&base);
    let out = base.join("mine");
    std::fs::create_dir_all(out.join("kernels")).unwrap();
    std::fs::write(out.join("notes.txt"), "the user's").unwrap();
    std::fs::write(out.join("kernels/old"), "the user's").unwrap();
    let blocker = base.join("a-file");
    std::fs::write(&blocker, "a file, not a folder").unwrap();
    let listing = |dir: &Path| {
        let mut v: Vec<String> = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                v.push(p.strip_prefix(dir).unwrap().display().to_string());
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        v.sort();
        v
    };
    let before = listing(&base);
    let brisc = format!("brisc={}", elf("sums").display());
    // Two DRAM outputs: the first is written (inside the folder, in a sub-folder the run
    // makes), the second cannot be.
    let written = out.join("results/o.bin");
    let args = [
        "run".to_string(),
        "--kernel".into(),
        brisc,
        "--l1".into(),
        "0x30000=2".into(),
        "--dram-out".into(),
        format!("0x0=@{},bytes=4096", written.display()),
        "--dram-out".into(),
        format!("0x0=@{},bytes=4096", blocker.join("o.bin").display()),
        "--out".into(),
        out.display().to_string(),
    ];
    let o = ttprof_tests::ttprof(None, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a-file") && err.contains("cannot create the output's directory"),
        "names what and where: {err}"
    );
    assert_eq!(listing(&base), before, "the folder is as it was");
}

/// `ttprof report` of one run's device memory with another run's op log is refused (exit 1,
/// nothing written): the launcher's kernel hashes in the tile block differ from the op
/// log's ELFs. Before, the zones were named from the other run's kernels.
#[test]
fn report_with_another_runs_op_log_is_refused() {
    let base = workspace().join("target/test-run-cli/other-oplog");
    let (a, b, out) = (base.join("a"), base.join("b"), base.join("report"));
    for (dir, kernel) in [(&a, "reader"), (&b, "sums")] {
        let k = format!("brisc={}", elf(kernel).display());
        let o = ttprof_run(&["--kernel", &k, "--l1", "0x30000=2"], dir);
        assert_eq!(o.status.code(), Some(0), "run {kernel}");
    }
    let report = |device: &Path, oplog: &Path| {
        let _ = std::fs::remove_dir_all(&out);
        Command::new(ttprof_binary())
            .arg("report")
            .arg("--device")
            .arg(device)
            .arg("--oplog")
            .arg(oplog)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    for device in ["device.snap", "device.img"] {
        let o = report(&a.join(device), &b.join("ops.jsonl"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{device}: {err}");
        assert!(
            err.contains("is not the op log of")
                && err.contains("BRISC last ran run 1 with a kernel ELF of hash")
                && err.contains("kernels/sums"),
            "{device}: {err}"
        );
        assert!(!out.exists(), "{device}: nothing is written");
        // Its own op log is accepted (the drained image holds no records: exit 2).
        let o = report(&a.join(device), &a.join("ops.jsonl"));
        assert_eq!(
            o.status.code(),
            Some(if device == "device.snap" { 0 } else { 2 }),
            "{device}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `--timeout-s`: a run still going at its wall-clock limit stops with a fault (exit 2)
/// naming every running core, its outputs written; a bad value is refused before anything.
#[test]
fn a_run_past_its_timeout_stops_naming_every_running_core() {
    let out = workspace().join("target/test-run-cli/timeout");
    let bench = format!("brisc={}", elf("bench").display());
    // Mode 2 (waits on the wall clock) for 100000 x 320 cycles: far past one step.
    let long = [
        "--kernel",
        &bench,
        "--l1",
        "0x30000=2",
        "--l1",
        "0x30004=1",
        "--l1",
        "0x30008=100000",
    ];
    // A microsecond: the limit has passed before the first step of the launch ends.
    let o = ttprof_run(&[&long[..], &["--timeout-s", "0.000001"]].concat(), &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stopped at the wall-clock deadline with 1 core(s) still running")
            && err.contains("BRISC at pc 0x")
            && err.contains("instructions retired"),
        "{err}"
    );
    assert!(out.join("profile_log_device.csv").exists());
    for bad in ["nan", "inf", "-1", "1e300"] {
        let arg = format!("--timeout-s={bad}");
        let o = ttprof_run(&[&long[..], &[arg.as_str()]].concat(), &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{bad}: {err}");
        assert!(err.contains("--timeout-s"), "{bad}: {err}");
        assert!(!out.exists(), "{bad}: refused before anything");
    }
}

#[test]
fn records_dropped_on_a_full_ring_are_a_data_problem() {
    let out = workspace().join("target/test-run-cli/drops");
    let sums = elf("sums");
    // 20,000 iterations with no consumer while the kernel runs: far more than a ring holds.
    let k = format!("brisc={}", sums.display());
    let o = ttprof_run(
        &[
            "--kernel",
            &k,
            "--l1",
            "0x30000=20000",
            "--policy",
            "drop",
            "--drain-every-cycles",
            "0",
        ],
        &out,
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "drops make the outputs incomplete"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("record(s) dropped because the ring was full")
            && err.contains("the outputs miss them"),
        "{err}"
    );
    assert!(
        !err.contains("pending"),
        "the kernel exited: nothing is pending: {err}"
    );
    let kept = zone_starts(&out, "iteration").len();
    assert!(kept > 0 && kept < 20_000, "{kept} of 20000 zones kept");
}

#[test]
fn a_readout_of_memory_a_fault_stopped_counts_the_unpublished_records_as_lost() {
    use ttprof::devmem::DeviceMemory;
    let (mut dev, mem, tile) = ttprof_tests::emulated_device("test-run-cli/fault-image", (1, 1));
    ttprof::launch::set_run_id(&mem, 0, tile, 1).unwrap();
    mem.write_u32(0, tile, example_abi::ARGS, 3).unwrap();
    let fault = elf("fault");
    dev.load_kernel(
        0,
        tile,
        riscv_linker::Risc::Brisc,
        &std::fs::read(&fault).unwrap(),
        "fault",
    )
    .unwrap();
    assert!(dev.run().unwrap_err().fault().is_some());
    // Without a session to publish them, the three zones never reached HEAD: an error, not
    // a silent "0 zones" (the kernel is not "still running": the run is over).
    let r = ttprof::readout::read(&mem, false).unwrap();
    assert_eq!(r.zones(), 0);
    let lost: Vec<String> = r
        .issues()
        .iter()
        .filter(|i| i.is_error())
        .map(|i| i.to_string())
        .collect();
    assert!(
        lost.iter()
            .any(|i| i.contains("the run stopped on a fault while this kernel ran")),
        "{:#?}",
        r.issues()
    );
}

#[test]
fn a_consumer_killed_without_detaching_does_not_wedge_the_producers() {
    use riscv_linker::profiler::{self, ring, tile};
    use riscv_linker::Risc;
    use ttprof::devmem::DeviceMemory;
    use ttprof::launch::{Policy, Settings};
    let arch = Arch::WormholeB0;
    let (mut dev, mem, t) = ttprof_tests::emulated_device("test-run-cli/dead-consumer", (1, 1));
    // What a `kill -9`ed capture leaves: CONSUMER set, and nobody draining or renewing it.
    let settings = Settings {
        policy: Policy::Block,
        consumer: true,
        ..Settings::default()
    };
    ttprof::launch::init_tile(&mem, 0, t, arch, &settings).unwrap();
    assert_eq!(
        mem.read_u32(0, t, profiler::TILE_BLOCK + tile::CONSUMER)
            .unwrap(),
        1
    );
    mem.write_u32(0, t, example_abi::ARGS, 20_000).unwrap(); // far more than a ring holds
    let sums = std::fs::read(elf("sums")).unwrap();
    let word = |w: u32| {
        mem.read_u32(0, t, profiler::ring_word(Risc::Brisc, w))
            .unwrap()
    };
    for launch in 1..=2 {
        ttprof::launch::set_run_id(&mem, 0, t, launch).unwrap();
        dev.load_kernel(0, t, Risc::Brisc, &sums, "sums").unwrap();
        dev.run().unwrap_or_else(|e| panic!("launch {launch}: {e}"));
        // The first launch waited once, for one lease, then dropped; the second never waited.
        assert_eq!(word(ring::STALLS), 1, "launch {launch}");
        assert_eq!(
            word(ring::CONSUMER_GONE),
            1,
            "launch {launch}: gave up on heartbeat 1"
        );
        assert!(word(ring::DROPPED) > 0);
    }
    // A live consumer renews the heartbeat: producers wait for it again.
    let mut d = ttprof::readout::Drainer::attach(
        &mem,
        ttprof::readout::DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )
    .unwrap();
    d.drain().unwrap();
    let beat = mem
        .read_u32(0, t, profiler::TILE_BLOCK + tile::CONSUMER)
        .unwrap();
    assert!(beat != 0 && beat != 1, "a new heartbeat: {beat}");
    let r = d.finish().unwrap();
    assert!(
        r.issues()
            .iter()
            .any(|i| i.is_error() && i.to_string().contains("dropped")),
        "{:#?}",
        r.issues()
    );
}

#[test]
fn each_op_of_a_manifest_runs_only_its_own_kernels_on_its_own_tiles() {
    let out = fresh_dir("target/test-run-cli/manifest");
    let sums = elf("sums");
    let manifest = out.join("ops.json");
    let ops = serde_json::json!({
        "arch": "wormhole_b0",
        "grid": "2x1",
        "op": [
            {"name": "both", "kernels": {"brisc": sums}, "l1": ["0x30000=2"]},
            {"name": "one", "kernels": {"brisc": sums}, "tiles": ["1,0"], "l1": ["0x30000=3"], "launches": 2}
        ]
    });
    std::fs::write(&manifest, ops.to_string()).unwrap();
    let o = ttprof_run(
        &["--manifest", manifest.to_str().unwrap()],
        &out.join("out"),
    );
    assert_eq!(o.status.code(), Some(0));
    // (tile, run) of every `iteration` zone: op 1 on both tiles, ops 2 and 3 on (1,0) only.
    let noc = |x, y| Arch::WormholeB0.worker_noc(x, y).unwrap();
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for l in zone_starts(&out.join("out"), "iteration") {
        let f: Vec<&str> = l.split(',').collect();
        *seen
            .entry((format!("{},{}", f[1], f[2]), f[7].to_string()))
            .or_default() += 1;
    }
    let (a, b) = (noc(0, 0), noc(1, 0));
    let at = |t: riscv_linker::NocCoord| format!("{},{}", t.x, t.y);
    let want: BTreeMap<(String, String), usize> = [
        ((at(a), "1".into()), 2),
        ((at(b), "1".into()), 2),
        ((at(b), "2".into()), 3),
        ((at(b), "3".into()), 3),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        seen, want,
        "a core outside the op does not rerun the last op's kernel"
    );
}

#[test]
fn a_kernel_rebuilt_between_launches_gets_its_own_copy_and_the_first_is_kept() {
    use ttprof::session::{Config, L1Input, Op, Session};
    let out = fresh_dir("target/test-run-cli/rebuilt");
    let source = out.join("k");
    let (sums, bench) = (elf("sums"), elf("bench"));
    let mut s = Session::start(Config::new(Arch::WormholeB0, (1, 1), out.join("run"))).unwrap();
    let op = Op::new("k")
        .kernel(riscv_linker::Risc::Brisc, &source)
        .l1(L1Input::word(example_abi::ARGS, 0));
    // Three builds of one path: sums, bench, sums with a byte more (another build).
    let mut third = std::fs::read(&sums).unwrap();
    third.push(0);
    let builds = [
        std::fs::read(&sums).unwrap(),
        std::fs::read(&bench).unwrap(),
        third,
        std::fs::read(&sums).unwrap(),
    ];
    for b in &builds {
        std::fs::write(&source, b).unwrap(); // "rebuilt" in place
        s.launch(&op).unwrap();
    }
    let p = s.finish().unwrap();
    let copies: Vec<PathBuf> = p
        .oplog
        .ops()
        .map(|o| p.oplog.resolve_path(&o.kernels[0].elf))
        .collect();
    assert_eq!(
        copies[0], copies[3],
        "the same contents again: the same copy"
    );
    assert!(
        copies[0] != copies[1] && copies[1] != copies[2] && copies[0] != copies[2],
        "{copies:?}"
    );
    assert_eq!(std::fs::read(&copies[2]).unwrap(), builds[2]);
    assert_eq!(
        std::fs::read(&copies[0]).unwrap(),
        std::fs::read(&sums).unwrap(),
        "the first copy was not overwritten"
    );
    assert_eq!(
        std::fs::read(&copies[1]).unwrap(),
        std::fs::read(&bench).unwrap()
    );
    assert!(p.resolution.issues.is_empty(), "{:#?}", p.resolution.issues);
}

/// The drain cadence decides when records are read, never which: the example pipeline with
/// a slow stage (math) run with the default `--drain-every-cycles` (250,000 cycles: one drain falls
/// inside the kernels, after the fast stages ended and before the slow ones did) and with a
/// short one writes the same zones, every core's FW and KERNEL wrapper zones among them.
/// Regression: a ring found by the only drain while its kernel ran was not read again at the
/// end, so math, pack and writer lost their last records and wrapper zones and `ttprof run`
/// exited 2 with "a kernel is still running".
#[test]
fn the_drain_cadence_never_loses_the_records_of_a_slow_pipeline() {
    let k = build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    );
    let run = |name: &str, drain_every: Option<&str>| {
        let out = workspace().join("target/test-run-cli").join(name);
        let mut args: Vec<String> = ["--grid", "2x1", "--name", "Add"]
            .map(String::from)
            .to_vec();
        for (bin, risc) in [
            ("reader", "brisc"),
            ("unpack", "trisc0"),
            ("math", "trisc1"),
            ("pack", "trisc2"),
            ("writer", "ncrisc"),
        ] {
            args.extend([
                "--kernel".into(),
                format!("{risc}={}", k.elf(bin).unwrap().display()),
            ]);
        }
        // Add over 6 tiles per core, math doing 4000 extra loop steps per tile.
        for l1 in ["0x30000=1", "0x30004=6", "0x30040=3", "0x30044=4000"] {
            args.extend(["--l1".into(), l1.into()]);
        }
        if let Some(d) = drain_every {
            args.extend(["--drain-every-cycles".into(), d.into()]);
        }
        let o = ttprof_run(&args.iter().map(String::as_str).collect::<Vec<_>>(), &out);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        assert!(
            !err.contains("still running") && !err.contains("no wrapper zones"),
            "{name}: {err}"
        );
        // (chip, x, y, RISC, zone) -> how many; the profiler's own stall zones depend on
        // when the consumer came by, so they are left out.
        let csv = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
        let mut zones: BTreeMap<String, u32> = BTreeMap::new();
        for line in csv
            .lines()
            .filter(|l| l.contains(",ZONE_START,") && !l.contains(",PROFILER-STALL,"))
        {
            let f: Vec<&str> = line.split(',').collect();
            *zones
                .entry(format!("{},{},{},{},{}", f[0], f[1], f[2], f[3], f[10]))
                .or_default() += 1;
        }
        zones
    };
    let default = run("cadence-default", None);
    for tile in ["1,1", "2,1"] {
        for (risc, wrapper) in [
            ("BRISC", "BRISC"),
            ("NCRISC", "NCRISC"),
            ("TRISC_0", "TRISC"),
            ("TRISC_1", "TRISC"),
            ("TRISC_2", "TRISC"),
        ] {
            for zone in ["FW", "KERNEL"] {
                let key = format!("0,{tile},{risc},{wrapper}-{zone}");
                assert_eq!(default.get(&key), Some(&1), "{key}: {default:#?}");
            }
        }
    }
    assert_eq!(
        default,
        run("cadence-20000", Some("20000")),
        "the same zones whatever the drain cadence"
    );
}

/// Issue 23: kernel inputs and outputs for CI. The example pipeline adds two DRAM tensors
/// loaded from files; its output is written to a file and checked against an expected one.
/// The demo's add op on a 1x1 grid reading two 2-tile BF16 inputs from DRAM files in `dir`
/// (`a.bin`, `b.bin`), with `want.bin` (their sum) and `wrong.bin` (one byte off) beside:
/// the arguments of `ttprof run` without its `--dram-out`, and the sum's bytes.
fn add_op(dir: &Path) -> (Vec<String>, Vec<u8>) {
    let datums = 2 * 1024; // two tiles of 32x32 BF16
                           // Normal BF16 values, positive and negative, exponents 2^-7..2^6.
    let a: Vec<u16> = (0..datums)
        .map(|i| 0x3c00 + (i * 37 % 0x700) as u16)
        .collect();
    let b: Vec<u16> = (0..datums)
        .map(|i| 0x8000 | (0x3d00 + (i * 91 % 0x600) as u16))
        .collect();
    let want: Vec<u8> = a
        .iter()
        .zip(&b)
        .flat_map(|(x, y)| example_abi::bf16::add(*x, *y).to_le_bytes())
        .collect();
    let bytes = |v: &[u16]| v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(dir.join("a.bin"), bytes(&a)).unwrap();
    std::fs::write(dir.join("b.bin"), bytes(&b)).unwrap();
    std::fs::write(dir.join("want.bin"), &want).unwrap();
    let mut wrong = want.clone();
    wrong[2100] ^= 0xFF;
    std::fs::write(dir.join("wrong.bin"), &wrong).unwrap();
    let mut args: Vec<String> = vec!["--grid".into(), "1x1".into(), "--name".into(), "add".into()];
    for (risc, name) in [
        ("brisc", "reader"),
        ("trisc0", "unpack"),
        ("trisc1", "math"),
        ("trisc2", "pack"),
        ("ncrisc", "writer"),
    ] {
        args.extend(["--kernel".into(), format!("{risc}={}", elf(name).display())]);
    }
    // Op Add, 2 tiles from page 0, pages of 2048 bytes, in0/in1/out at the demo's addresses.
    for l1 in [
        "0x30000=1",
        "0x30004=2",
        "0x30008=0",
        "0x3000c=2048",
        "0x30010=0x1000000",
        "0x30014=0x2000000",
        "0x30018=0x3000000",
    ] {
        args.extend(["--l1".into(), l1.into()]);
    }
    let a_in = format!(
        "0x1000000=@{},page=2048,tensor=1",
        dir.join("a.bin").display()
    );
    let b_in = format!(
        "0x2000000=@{},page=2048,tensor=2",
        dir.join("b.bin").display()
    );
    args.extend(["--dram-in".into(), a_in, "--dram-in".into(), b_in]);
    (args, want)
}

#[test]
fn dram_inputs_come_from_files_and_outputs_go_to_files_checked_against_expected_ones() {
    let dir = fresh_dir("target/test-run-cli/dram");
    let (args, want) = add_op(&dir);
    let run = |expect: &str, out: &str| {
        let spec = format!(
            "0x3000000=@{},expect={},page=2048,tensor=3",
            dir.join(out).display(),
            dir.join(expect).display()
        );
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--dram-out", &spec]);
        ttprof_run(&a, &dir.join(format!("run-{expect}")))
    };
    let ok = run("want.bin", "out.bin");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("out.bin")).unwrap(),
        want,
        "the writer's output, read back into the file"
    );
    let oplog = std::fs::read_to_string(dir.join("run-want.bin/ops.jsonl")).unwrap();
    let op: serde_json::Value = serde_json::from_str(oplog.lines().next().unwrap()).unwrap();
    // Issue 42: with --counters the host reads the NIUs' data counters around the op: the
    // reader's two inputs (2 x 4 KiB) in, the writer's output (4 KiB) out, exactly; the
    // roofline line sets them against a NoC word a cycle (32 B on Wormhole B0).
    assert!(
        op["op"]["counters"].is_null(),
        "no counters unless asked: {op}"
    );
    let counted = {
        let spec = format!(
            "0x3000000=@{},expect={},page=2048,tensor=3",
            dir.join("out.bin").display(),
            dir.join("want.bin").display()
        );
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--dram-out", &spec, "--counters", "fpu,pack"]);
        let o = ttprof_run(&a, &dir.join("run-counters"));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(dir.join("run-counters/ops.jsonl")).unwrap();
        serde_json::from_str::<serde_json::Value>(text.lines().next().unwrap()).unwrap()
    };
    let tile = &counted["op"]["counters"][0];
    assert_eq!(
        (
            tile["noc_read_bytes"].as_u64(),
            tile["noc_write_bytes"].as_u64()
        ),
        (Some(2 * 4096), Some(4096)),
        "{tile}"
    );
    let analysis: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("run-counters/ttprof_analysis.json")).unwrap(),
    )
    .unwrap();
    let roofline = &analysis["ops"][0]["roofline"];
    let cycles = roofline["cycles"].as_u64().unwrap();
    assert_eq!(cycles, tile["cycles"].as_u64().unwrap(), "{roofline}");
    let rate = |what: &str| {
        roofline["rates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["what"] == what)
            .unwrap_or_else(|| panic!("no {what} rate: {roofline}"))
            .clone()
    };
    let read = rate("NoC read");
    assert_eq!(read["amount"], 8192);
    assert_eq!(read["peak_per_cycle"], 32.0);
    let want_pct = 100.0 * 8192.0 / cycles as f64 / 32.0;
    assert!(
        (read["pct"].as_f64().unwrap() - want_pct).abs() < 1e-9,
        "{read}"
    );
    // The math kernel's ELWADDs: each adds an 8x16 block, a 32x32 tile takes 8, two tiles 16.
    assert_eq!(rate("FPU")["unit"], "instructions");
    assert_eq!(rate("FPU")["amount"], 16, "{roofline}");
    let path = analysis["ops"][0]["critical_path"]["counters"]
        .as_str()
        .unwrap_or_default();
    assert!(
        path.contains("FPU_COUNTER counted 16 over the whole op: at most"),
        "{path}"
    );
    let summary = std::fs::read_to_string(dir.join("run-counters/ttprof_summary.txt")).unwrap();
    assert!(
        summary.contains("roofline over ") && summary.contains("NoC read 8,192 bytes"),
        "{summary}"
    );
    let ids = |k: &str| {
        op["op"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        (ids("inputs"), ids("outputs")),
        (vec![1, 2], vec![3]),
        "{op}"
    );

    // Typed buffers (issue 40): the op report says what the tensors hold (not UINT32 rows);
    // a file that is not whole pages is refused, naming it.
    let typed_args = |a_spec: String| {
        // The arguments with input a's `--dram-in` given as `a_spec`.
        args.iter()
            .map(|s| {
                if s.starts_with("0x1000000=@") {
                    a_spec.clone()
                } else {
                    s.clone()
                }
            })
            .collect::<Vec<String>>()
    };
    let a_typed = format!(
        "0x1000000=@{},tensor=1,dtype=bfloat16,shape=1x1x32x64",
        dir.join("a.bin").display()
    );
    let v = typed_args(a_typed);
    let a: Vec<&str> = v.iter().map(String::as_str).collect();
    let typed = ttprof_run(&a, &dir.join("run-typed"));
    assert_eq!(
        typed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&typed.stderr)
    );
    let report = file_starting(&dir.join("run-typed"), "ops_perf_results_");
    let csv = std::fs::read_to_string(report).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        row[header
            .iter()
            .position(|h| h.trim() == name)
            .unwrap_or_else(|| panic!("{name}: {header:?}"))]
    };
    assert_eq!(
        (
            col("INPUT_0_DATATYPE"),
            col("INPUT_0_LAYOUT"),
            col("INPUT_0_Y_PAD[LOGICAL]").split('[').next().unwrap()
        ),
        ("BFLOAT16", "TILE", "32"),
        "{csv}"
    );
    let ragged = format!(
        "0x1000000=@{},page=2000,tensor=1",
        dir.join("a.bin").display()
    );
    let v = typed_args(ragged);
    let a: Vec<&str> = v.iter().map(String::as_str).collect();
    let no = ttprof_run(&a, &dir.join("run-ragged"));
    let err = String::from_utf8_lossy(&no.stderr);
    assert_eq!(no.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a.bin") && err.contains("not a whole number of the buffer's 2000-byte pages"),
        "{err}"
    );

    let bad = run("wrong.bin", "out2.bin");
    assert_eq!(
        bad.status.code(),
        Some(2),
        "a wrong output is a data problem"
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("differs from") && err.contains("wrong.bin at byte offset 2100 (0x834)"),
        "{err}"
    );
    assert!(err.contains("(1 of 4096 bytes, 4096 expected)"), "{err}");
    assert!(
        dir.join("run-wrong.bin/profile_log_device.csv").is_file(),
        "every output is still written"
    );

    // A manifest chains two ops through DRAM: Relu reads Add's output where Add left it, and
    // the op graph has the edge (tensor 3).
    let relu: Vec<u8> = want
        .chunks(2)
        .flat_map(|d| example_abi::bf16::relu(u16::from_le_bytes([d[0], d[1]])).to_le_bytes())
        .collect();
    std::fs::write(dir.join("relu-want.bin"), &relu).unwrap();
    let kernels: Vec<String> = [
        ("brisc", "reader"),
        ("trisc0", "unpack"),
        ("trisc1", "math"),
        ("trisc2", "pack"),
        ("ncrisc", "writer"),
    ]
    .iter()
    .map(|(r, n)| format!("{r} = {:?}", elf(n).display().to_string()))
    .collect();
    let l1 = |op: u32, in0: &str, out: &str| {
        format!(
            r#"["0x30000={op}", "0x30004=2", "0x30008=0", "0x3000c=2048", "0x30010={in0}", "0x30014=0x2000000", "0x30018={out}"]"#
        )
    };
    let manifest = format!(
        r#"grid = "1x1"

[[op]]
name = "add"
kernels = {{ {k} }}
l1 = {add}
dram_in = ["0x1000000=@a.bin,page=2048,tensor=1", "0x2000000=@b.bin,page=2048,tensor=2"]
dram_out = ["0x3000000,page=2048,tensor=3"]

[[op]]
name = "relu"
kernels = {{ {k} }}
l1 = {relu}
dram_in = ["0x3000000,page=2048,tensor=3"]
dram_out = ["0x4000000=@out/relu.bin,expect=relu-want.bin,page=2048,tensor=4"]
"#,
        k = kernels.join(", "),
        add = l1(1, "0x1000000", "0x3000000"),
        relu = l1(4, "0x3000000", "0x4000000"),
    );
    std::fs::write(dir.join("ops.toml"), manifest).unwrap();
    let ci = ttprof_run(
        &["--manifest", dir.join("ops.toml").to_str().unwrap()],
        &dir.join("run-ci"),
    );
    assert_eq!(
        ci.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ci.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("out/relu.bin")).unwrap(),
        relu,
        "the file path is relative to the manifest"
    );
    let dot = std::fs::read_to_string(dir.join("run-ci/ttprof_ops.dot")).unwrap();
    assert!(
        dot.contains("op0 -> op1 [label=\"t3\""),
        "the op graph has the edge from add to relu: {dot}"
    );
}

/// `--out` given relative (the default): the op log names the kernel copies relative to the
/// folder, so a moved (or downloaded) run folder is still reported.
/// Issue 41 (a two-chip run): `--chips 2` runs every op on each chip with the same inputs
/// (chip 1's DRAM inputs loaded too: its output is checked), logs the op once per chip,
/// drains and writes both chips' rings, and `report` of its snapshot writes the same device
/// log; a wrong expected output names each chip; what reads chip 0 only is refused.
#[test]
fn two_chips_run_every_op_on_each_and_report_both() {
    let dir = fresh_dir("target/test-run-cli/chips");
    let (args, want) = add_op(&dir);
    let run = |expect: &str, chips: &str, more: &[&str], out: &str| {
        let spec = format!(
            "0x3000000=@{},expect={},page=2048,tensor=3",
            dir.join("out.bin").display(),
            dir.join(expect).display()
        );
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.extend(["--dram-out", &spec]);
        a.extend(["--chips", chips]);
        a.extend(more);
        ttprof_run(&a, &dir.join(out))
    };
    let ok = run("want.bin", "2", &[], "run");
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert_eq!(ok.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("add on 2 tile(s)"), "{stderr}");
    // Each chip's tensors are its own: no "written twice" warning from the op graph.
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(std::fs::read(dir.join("out.bin")).unwrap(), want);
    let oplog = std::fs::read_to_string(dir.join("run/ops.jsonl")).unwrap();
    let devices: Vec<(u64, u64)> = oplog
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["op"].is_object())
        .map(|v| {
            (
                v["op"]["run_id"].as_u64().unwrap(),
                v["op"]["device"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(devices, [(1, 0), (1, 1)], "{oplog}");
    // Both chips' zones, the same ones on each (one kernel set, the same inputs).
    let csv = std::fs::read_to_string(dir.join("run/profile_log_device.csv")).unwrap();
    let zones_of = |chip: &str| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for l in csv.lines().skip(2) {
            let f: Vec<&str> = l.split(',').collect();
            if f[0] == chip && f[11] == "ZONE_START" {
                *m.entry(format!("{} {}", f[3], f[10])).or_default() += 1;
            }
        }
        m
    };
    let (chip0, chip1) = (zones_of("0"), zones_of("1"));
    assert!(chip0.len() >= 5, "{chip0:?}");
    assert_eq!(chip0, chip1);
    let summary = std::fs::read_to_string(dir.join("run/ttprof_summary.txt")).unwrap();
    assert!(
        summary.contains("add chip 0") && summary.contains("add chip 1"),
        "{summary}"
    );
    // The snapshot reads back to the same device log.
    let report = dir.join("report");
    ttprof_ok(
        None,
        &[
            OsStr::new("report"),
            OsStr::new("--device"),
            dir.join("run/device.snap").as_os_str(),
            OsStr::new("--oplog"),
            dir.join("run/ops.jsonl").as_os_str(),
            OsStr::new("--no-summary"),
            OsStr::new("--out"),
            report.as_os_str(),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(report.join("profile_log_device.csv")).unwrap(),
        csv
    );
    // Every chip's output is checked: each that differs is named.
    let wrong = run("wrong.bin", "2", &[], "run-wrong");
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "{stderr}");
    for chip in ["of chip 0", "of chip 1"] {
        assert!(stderr.contains(chip), "{stderr}");
    }
    // A manifest's `chips` runs each of its ops on every chip (`sums` on each: 2 zones).
    let manifest = dir.join("ops.json");
    let ops = serde_json::json!({
        "grid": "1x1",
        "chips": 3,
        "op": [{"name": "s", "kernels": {"brisc": elf("sums")}, "l1": ["0x30000=2"]}]
    });
    std::fs::write(&manifest, ops.to_string()).unwrap();
    let m = ttprof_run(&["--manifest", manifest.to_str().unwrap()], &dir.join("m"));
    assert_eq!(
        m.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&m.stderr)
    );
    let mut per_chip: BTreeMap<String, usize> = BTreeMap::new();
    for l in zone_starts(&dir.join("m"), "iteration") {
        *per_chip
            .entry(l.split(',').next().unwrap().into())
            .or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [("0".into(), 2), ("1".into(), 2), ("2".into(), 2)].into();
    assert_eq!(per_chip, want);
    // Refused before anything is made: out of range, and with what reads chip 0 only.
    for (chips, more, says) in [
        ("0", &[][..], "give 1 to 32 chips"),
        ("33", &[], "give 1 to 32 chips"),
        ("2", &["--counters", "fpu"], "--chips 2 with --counters"),
        ("2", &["--sample", "64"], "--chips 2 with --sample"),
    ] {
        let o = run("want.bin", chips, more, "refused");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{more:?}: {stderr}");
        assert!(stderr.contains(says), "{more:?}: {stderr}");
        assert!(!dir.join("refused").exists(), "{more:?}");
    }
}

#[test]
fn a_run_folder_given_relative_can_be_moved_and_reported() {
    let base = fresh_dir("target/test-run-cli/relative");
    let sums = elf("sums");
    let kernel = format!("brisc={}", sums.display());
    ttprof_ok(
        Some(&base),
        &[
            "run",
            "--kernel",
            &kernel,
            "--l1",
            "0x30000=2",
            "--out",
            "run",
        ],
    );
    let oplog = std::fs::read_to_string(base.join("run/ops.jsonl")).unwrap();
    assert!(
        oplog.contains("\"elf\":\"kernels/sums\""),
        "relative to the folder: {oplog}"
    );
    std::fs::rename(base.join("run"), base.join("moved")).unwrap();
    let moved = base.join("moved");
    ttprof_ok(
        None,
        &[
            "report".as_ref(),
            "--device".as_ref(),
            moved.join("device.snap").as_os_str(),
            "--oplog".as_ref(),
            moved.join("ops.jsonl").as_os_str(),
            "--out".as_ref(),
            moved.join("again").as_os_str(),
        ],
    );
    assert_eq!(zone_starts(&moved.join("again"), "iteration").len(), 2);
}

/// A directory link planted inside `--out` (`kernels/` -> elsewhere, `device.img` -> a
/// file elsewhere) is refused: nothing is written through it.
#[test]
fn a_link_planted_inside_the_output_folder_is_never_followed() {
    let base = workspace().join("target/test-run-cli/links");
    let _ = std::fs::remove_dir_all(&base);
    let sums = elf("sums");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for (name, target) in [
        ("kernels", elsewhere.clone()),
        ("device.img", elsewhere.join("img")),
    ] {
        let out = base.join(format!("out-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&target, out.join(name)).unwrap();
        let o = Command::new(ttprof_binary())
            .args(["run", "--kernel", &format!("brisc={}", sums.display())])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("symbolic link"),
            "{name}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{name}: nothing written through the link"
        );
    }
}
