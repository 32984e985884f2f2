//! Numeric command-line arguments through the `ttprof` binary: NaN, negative, infinite and
//! absurd values (more than a year) are errors that name the argument, with exit code 1,
//! checked before any file is touched; never a panic (`--seconds 1e20` used to panic
//! converting to a `Duration`).

use riscv_linker::{Arch, NocCoord};
use std::path::Path;
use std::process::Command;
use ttprof::testing::{temp_dir, ImageBuilder};

/// Runs `ttprof args` and checks it failed cleanly naming `--{arg}`; returns stderr.
fn refused<S: AsRef<str>>(args: &[S], arg: &str) -> String {
    let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
    let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args(&args)
        .output()
        .expect("run ttprof");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(
        err.starts_with(&format!("error: --{arg} ")) && err.contains("expected"),
        "{args:?}: {err}"
    );
    err
}

fn image(dir: &Path) -> String {
    let path = dir.join("device.img");
    ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)])
        .write(&path)
        .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn capture_seconds_poll_and_threshold_are_checked() {
    let dir = temp_dir("cli-args-capture");
    let img = image(&dir);
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let capture = |extra: &[&str]| -> Vec<String> {
        ["capture", "--device", &img, "--no-oplog", "--out", out]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    for s in ["1e20", "NaN", "inf", "-1", "31536001"] {
        let e = refused(&capture(&[&format!("--seconds={s}")]), "seconds");
        assert!(e.contains("from 0 to 31536000 (a year)"), "{e}");
    }
    refused(
        &capture(&["--idle-poll-ms", "18446744073709551615"]),
        "idle-poll-ms",
    );
    refused(&capture(&["--idle-poll-ms", "60001"]), "idle-poll-ms");
    let with_oplog = [
        "capture",
        "--device",
        &img,
        "--oplog",
        "ops.jsonl",
        "--all-outputs",
        "--out",
        out,
    ];
    for ns in ["nan", "-inf", "-0.5", "1e300"] {
        let arg = format!("--threshold-ns={ns}");
        refused(&[&with_oplog[..], &[&arg]].concat(), "threshold-ns");
    }
    assert!(
        !Path::new(out).exists(),
        "refused before anything was written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_threshold_tracy_timeout_and_clock_window_are_checked() {
    let dir = temp_dir("cli-args-others");
    let img = image(&dir);
    for ns in ["NaN", "-1", "inf", "1e17"] {
        refused(
            &[
                "report",
                "--device",
                &img,
                "--oplog",
                "missing.jsonl",
                &format!("--threshold-ns={ns}"),
            ],
            "threshold-ns",
        );
    }
    for t in ["18446744073709551615", "31536001"] {
        let e = refused(
            &[
                "tracy",
                "--device",
                &img,
                "--oplog",
                "missing.jsonl",
                "--timeout-s",
                t,
            ],
            "timeout-s",
        );
        assert!(e.contains("from 0 (no limit) to 31536000 (a year)"), "{e}");
    }
    for s in ["0", "1000001", "18446744073709551615"] {
        refused(&["clock", "--device", &img, "--samples", s], "samples");
    }
    refused(
        &[
            "clock",
            "--device",
            &img,
            "--spacing-us",
            "18446744073709551615",
        ],
        "spacing-us",
    );
    // Each argument within its limit, but the window they make lasts more than a year.
    let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args([
            "clock",
            "--device",
            &img,
            "--samples",
            "1000",
            "--spacing-us",
            "31536000000000",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--samples 1000 --spacing-us 31536000000000: a window of")
            && err.contains("more than a year"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_threshold_is_checked_before_anything_runs() {
    let dir = temp_dir("cli-args-run-threshold");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for ns in ["nan", "inf", "-1", "1e300"] {
        let e = refused(
            &[
                "run",
                "--kernel",
                "brisc=missing.elf",
                "--out",
                out,
                &format!("--threshold-ns={ns}"),
            ],
            "threshold-ns",
        );
        assert!(e.contains("a number of ns from 0 to"), "{e}");
    }
    assert!(
        !Path::new(out).exists(),
        "refused before anything was written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_refuses_a_repeated_tile() {
    let dir = temp_dir("cli-args-run-tiles");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args([
            "run",
            "--kernel",
            "brisc=missing.elf",
            "--grid",
            "2x2",
            "--out",
            out,
        ])
        .args(["--tiles", "1,1", "--tiles", "0,1", "--tiles", " 1, 1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("tile \" 1, 1\" given twice"), "{err}");
    assert!(
        !Path::new(out).exists(),
        "refused before anything was written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_budget_is_an_option_checked_before_anything_runs() {
    let dir = temp_dir("cli-args-run-budget");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let e = refused(
        &[
            "run",
            "--kernel",
            "brisc=missing.elf",
            "--out",
            out,
            "--budget",
            "0",
        ],
        "budget",
    );
    assert!(e.contains("1 or more"), "{e}");
    assert!(
        !Path::new(out).exists(),
        "refused before anything was written"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--budget <N>") && help.contains("runaway"),
        "{help}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ttprof"))
            .args(args)
            .output()
            .unwrap()
    };
    // Exit 2 means "written, with data problems": a usage error is unusable input.
    for args in [
        &["capture", "--seconds", "-1"][..],
        &["no-such-command"],
        &["run", "--grid"],
    ] {
        let o = run(args);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).starts_with("error:"),
            "{args:?}"
        );
    }
    let help = run(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: ttprof run"));
}

/// A dataset host name that cannot name one directory (`host=<name>`) is refused before a
/// capture attaches (it would consume the rings) or a report writes anything.
#[test]
fn a_dataset_host_name_that_is_not_one_directory_is_refused_before_anything_runs() {
    let dir = temp_dir("cli-args-dataset");
    let img = image(&dir);
    let out = dir.join("out");
    let ds = dir.join("ds");
    for host in ["../x", "a/b", "", "x=y"] {
        for cmd in [
            vec!["capture", "--device", &img, "--no-oplog", "--seconds", "0"],
            vec!["report", "--device", &img, "--oplog", "ops.jsonl"],
        ] {
            let mut args: Vec<&str> = cmd.clone();
            args.extend([
                "--out",
                out.to_str().unwrap(),
                "--dataset",
                ds.to_str().unwrap(),
                "--dataset-host",
                host,
            ]);
            let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
                .args(&args)
                .output()
                .expect("run ttprof");
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("dataset host name") && err.contains("letters, digits"),
                "{args:?}: {err}"
            );
            assert!(!out.exists() && !ds.exists(), "{args:?}: nothing written");
        }
    }
}

/// A TOML manifest error names line and column and echoes at most a short piece of the
/// line (before, the whole 200 KB line was printed).
#[test]
fn a_manifest_error_on_a_huge_line_echoes_a_short_piece_of_it() {
    let dir = temp_dir("cli-args-toml-echo");
    let manifest = dir.join("ops.toml");
    let huge = format!("[[op]]\nname = \"{}\" junk\n", "x".repeat(200_000));
    std::fs::write(&manifest, huge).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args(["run", "--manifest", manifest.to_str().unwrap()])
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", &err[..err.len().min(2000)]);
    assert!(
        err.contains("not a valid manifest: line 2, column"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.len() < 2000, "{} bytes of error", err.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Flags renamed to carry their unit (`--drain-every-cycles`, `--timeout-s`) or to
/// match the other commands (`snapshot --out`) keep their old spellings as hidden aliases,
/// so scripts keep working; `--help` shows only the new ones.
#[test]
fn renamed_flags_keep_their_old_spellings_as_hidden_aliases() {
    let dir = temp_dir("cli-renamed-flags");
    let img = image(&dir);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ttprof"))
            .args(args)
            .output()
            .unwrap()
    };
    // `--timeout` is `--timeout-s`: its check names the new spelling.
    refused(
        &[
            "tracy",
            "--device",
            &img,
            "--oplog",
            "missing.jsonl",
            "--timeout",
            "31536001",
        ],
        "timeout-s",
    );
    // `--drain-every` is `--drain-every-cycles`: clap reports a bad value against it.
    let o = run(&["run", "--drain-every", "soon"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--drain-every-cycles <CYCLES>"), "{err}");
    // `snapshot --out`, `-o` and `--output` all name the snapshot file.
    for flag in ["--out", "-o", "--output"] {
        let snap = dir.join(format!("snap{flag}"));
        let o = run(&["snapshot", "--device", &img, flag, snap.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(snap.is_file(), "{flag}: no snapshot at {}", snap.display());
    }
    for (cmd, new, old) in [
        ("run", "--drain-every-cycles <CYCLES>", "--drain-every <"),
        ("tracy", "--timeout-s <SECONDS>", "--timeout <"),
        ("snapshot", "--out <SNAPSHOT>", "--output <"),
    ] {
        let help = String::from_utf8_lossy(&run(&[cmd, "--help"]).stdout).into_owned();
        assert!(help.contains(new) && !help.contains(old), "{cmd}:\n{help}");
    }
}
