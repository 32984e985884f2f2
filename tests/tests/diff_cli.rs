//! `ttprof diff` on real `ttprof run` outputs: two identical emulator runs compare equal and
//! pass the gate; a run whose loop does twice the work fails `--fail-above` with exit 3 and
//! names the zone and the sum zones, in the text, on stderr and in the JSON. Ops are matched
//! by op code and position (each launch of `--launches 2` is its own op, `kernel #1`,
//! `kernel #2`); two distinct ops that share a name are never merged; runs with nothing in
//! common exit 2; on noisy runs a zone with too few samples says so.

use std::path::{Path, PathBuf};
use std::process::Output;
use ttprof_tests::{example_elf, ttprof, ttprof_ok, workspace};

fn run(out: &Path, iterations: u32) {
    let elf = example_elf("sums");
    let _ = std::fs::remove_dir_all(out);
    ttprof_ok(
        None,
        &[
            "run".into(),
            "--grid".into(),
            "2x1".into(),
            "--kernel".into(),
            format!("brisc={}", elf.display()),
            "--l1".into(),
            format!("0x30000={iterations}"),
            "--launches".into(),
            "2".into(),
            "--out".into(),
            out.display().to_string(),
        ],
    );
}

fn diff(args: &[&std::ffi::OsStr]) -> Output {
    let all: Vec<&std::ffi::OsStr> = std::iter::once("diff".as_ref())
        .chain(args.iter().copied())
        .collect();
    ttprof(None, &all)
}

#[test]
fn identical_runs_pass_and_twice_the_work_fails_naming_the_zone() {
    let root = workspace().join("target/test-diff");
    let (a, b, c): (PathBuf, PathBuf, PathBuf) = (root.join("a"), root.join("b"), root.join("c"));
    run(&a, 2);
    run(&b, 2);
    run(&c, 4);
    let json = root.join("diff.json");

    // Two identical emulator runs: exact, no change, exit 0 even with a 0% limit.
    let o = diff(&[
        a.as_os_str(),
        b.as_os_str(),
        "--fail-above".as_ref(),
        "0".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("cycle counts are exact") && text.contains("no change in"),
        "{text}"
    );

    // Twice the iterations: the `iteration` zone's count doubles and its total nearly
    // doubles (the first iteration of each launch runs with a cold instruction cache, the
    // others do the same work warm), and the kernel's wrapper zones grow; exit 3 names each
    // on stderr. Each launch is its own op (`kernel #1`, `kernel #2`: 2 tiles x 2 iterations).
    let o = diff(&[
        a.as_os_str(),
        c.as_os_str(),
        "--fail-above".as_ref(),
        "50".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("regression: kernel #1 / iteration: total"),
        "{err}"
    );
    assert!(
        err.contains("regression: kernel #2 / iteration: total"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    // Largest change first: the sum zone `spin-10` (3 measurements per iteration: its total
    // doubles, and a little more), then the others.
    let first = text.lines().find(|l| l.starts_with("kernel ")).unwrap();
    assert!(
        first.contains("spin-10 (sum)") && first.contains("12->24"),
        "largest change first: {text}"
    );
    let iteration = text
        .lines()
        .find(|l| l.starts_with("kernel #1") && l.contains(" iteration "))
        .unwrap();
    assert!(iteration.contains("4->8"), "{text}");
    // Sum zones are compared too (issue 25: they never were): `spin-100` measures once per
    // iteration, so its count and total double.
    assert!(
        err.contains("regression: kernel #1 / spin-100 (sum): total"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["exact"], true);
    assert_eq!(v["fail_above_pct"], 50.0);
    let failed: Vec<&str> = v["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["zone"].as_str().unwrap())
        .collect();
    assert!(
        failed.contains(&"iteration") && failed.contains(&"spin-100"),
        "{failed:?}"
    );
    let rows = v["rows"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| r["zone"] == "iteration" && r["op"] == "kernel #1")
        .unwrap();
    assert_eq!(
        (
            row["op_code"].as_str(),
            row["position"].as_u64(),
            row["kind"].as_str()
        ),
        (Some("kernel"), Some(1), Some("zone"))
    );
    assert_eq!(row["new"]["count"], 8);
    let sum = rows
        .iter()
        .find(|r| r["zone"] == "spin-100" && r["op"] == "kernel #2")
        .unwrap();
    assert_eq!(
        (
            sum["kind"].as_str(),
            sum["base"]["count"].as_u64(),
            sum["new"]["count"].as_u64()
        ),
        (Some("sum"), Some(4), Some(8))
    );
    assert_eq!(sum["new"]["samples"], 2, "one sum record per tile");
    let (base, new) = (
        row["base"]["total_cycles"].as_u64().unwrap(),
        row["new"]["total_cycles"].as_u64().unwrap(),
    );
    assert!(
        new > base * 17 / 10 && new < 2 * base,
        "twice the iterations, the first of each launch cold: {base} -> {new}"
    );
    let mean = row["mean_change_pct"].as_f64().unwrap();
    assert!(
        (-15.0..0.0).contains(&mean),
        "the same work per iteration, fewer cold ones: {mean}"
    );

    // Above the limit nothing fails: every zone grows by less than 110% (the most, the sum
    // zone `spin-10`, a little over 100%: twice the measurements, each a little longer).
    let o = diff(&[
        a.as_os_str(),
        c.as_os_str(),
        "--fail-above".as_ref(),
        "110".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(0));

    // The device log alone (a `ttprof report` or tt-metal directory, no device.img): noisy
    // runs, compared with a confidence; the count change is still real.
    let logs = root.join("c-log");
    std::fs::create_dir_all(&logs).unwrap();
    for f in ["profile_log_device.csv", "ops.jsonl"] {
        std::fs::copy(c.join(f), logs.join(f)).unwrap();
    }
    let o = diff(&[
        a.as_os_str(),
        logs.as_os_str(),
        "--fail-above".as_ref(),
        "30".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Mann-Whitney") && text.contains("confidence"),
        "{text}"
    );
    // Each op's BRISC-KERNEL: one zone per tile, 2 against 2, each about 40% longer: the test
    // can never reach 95% with so few, so it says so (issue 25: it was printed as no
    // change) and by default does not fail the gate, with a warning.
    let kernel = text
        .lines()
        .find(|l| l.starts_with("kernel #1") && l.contains("BRISC-KERNEL"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(kernel.contains("(too few samples: 2 vs 2)"), "{kernel}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: kernel #1 / BRISC-KERNEL grew")
            && !err.contains("regression: kernel #1 / BRISC-KERNEL"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "kernel #1" && r["zone"] == "BRISC-KERNEL")
        .unwrap()
        .clone();
    assert_eq!(
        (row["too_few_samples"].as_bool(), row["real"].as_bool()),
        (Some(true), Some(false)),
        "{row:#}"
    );
    // --too-few-samples fail: the gate fails on it.
    let o = diff(&[
        a.as_os_str(),
        logs.as_os_str(),
        "--fail-above".as_ref(),
        "20".as_ref(),
        "--too-few-samples".as_ref(),
        "fail".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("regression: kernel #1 / BRISC-KERNEL: total")
            && err.contains("too few samples to tell: 2 vs 2"),
        "{err}"
    );

    // The device log without its op log: its ops are `run <id>`, nothing matches the run
    // folder's `kernel` ops. That is exit 2 with a message, even under the gate (issue 25:
    // 0 zones matched and exit 0).
    std::fs::remove_file(logs.join("ops.jsonl")).unwrap();
    let o = diff(&[
        a.as_os_str(),
        logs.as_os_str(),
        "--fail-above".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: nothing to compare: no op and zone is in both runs"),
        "{err}"
    );
    assert!(
        err.contains("new ops: run 1, run 2") && err.contains("put its op log (ops.jsonl) beside"),
        "{err}"
    );

    // Unusable input: exit 1, naming the path.
    let o = diff(&[a.as_os_str(), root.join("missing").as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));
}

/// Runs `manifest` (TOML text; `ELF` stands for the `sums` kernel) into `out`.
fn run_manifest(out: &Path, manifest: &str) {
    let elf = example_elf("sums");
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).unwrap();
    let path = out.with_extension("toml");
    std::fs::write(&path, manifest.replace("ELF", &elf.display().to_string())).unwrap();
    ttprof_ok(
        None,
        &[
            "run".as_ref(),
            "--manifest".as_ref(),
            path.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    );
}

/// Issue 25: two distinct ops with one op code (ttnn's add and multiply are both
/// `BinaryNgDeviceOperation`) were merged into one row. Here two ops named `binary` run the
/// same kernel on different work (2 and 4 iterations); only the second gets slower (8): it
/// alone is named, `binary #2`, with its own figures, and `binary #1` has not changed.
#[test]
fn distinct_ops_with_one_op_code_are_matched_by_position() {
    let root = workspace().join("target/test-diff-ops");
    let manifest = |second: u32| {
        format!(
            "arch = \"wormhole_b0\"\ngrid = \"2x1\"\n\n\
             [[op]]\nname = \"binary\"\nkernels = {{ brisc = \"ELF\" }}\nl1 = [\"0x30000=2\"]\n\n\
             [[op]]\nname = \"unary\"\nkernels = {{ brisc = \"ELF\" }}\nl1 = [\"0x30000=3\"]\n\n\
             [[op]]\nname = \"binary\"\nkernels = {{ brisc = \"ELF\" }}\nl1 = [\"0x30000={second}\"]\n"
        )
    };
    let (base, new) = (root.join("base"), root.join("new"));
    run_manifest(&base, &manifest(4));
    run_manifest(&new, &manifest(8));
    let json = root.join("diff.json");
    let o = diff(&[
        base.as_os_str(),
        new.as_os_str(),
        "--fail-above".as_ref(),
        "10".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let row = |op: &str, zone: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["op"] == op && r["zone"] == zone && r["kind"] == "zone")
            .unwrap()
            .clone()
    };
    let first = row("binary #1", "iteration");
    assert_eq!(
        (
            first["base"]["count"].as_u64(),
            first["new"]["count"].as_u64(),
            first["real"].as_bool()
        ),
        (Some(4), Some(4), Some(false))
    );
    let second = row("binary #2", "iteration");
    assert_eq!(
        (
            second["base"]["count"].as_u64(),
            second["new"]["count"].as_u64()
        ),
        (Some(8), Some(16))
    );
    assert_eq!(
        row("unary", "iteration")["real"],
        false,
        "an op code that occurs once is shown as itself"
    );
    let failed: Vec<String> = v["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} / {}",
                f["op"].as_str().unwrap(),
                f["zone"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        failed.iter().all(|f| f.starts_with("binary #2 / ")),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"binary #2 / iteration".to_string()),
        "{failed:?}"
    );
}
