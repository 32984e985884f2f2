//! `ttprof diff` on real `ttprof run` outputs: two identical emulator runs compare equal and
//! pass the gate; a run whose loop does twice the work fails `--fail-above` with exit 3 and
//! names the zone, in the text, on stderr and in the JSON.

use riscv_linker::Arch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof_tests::{build_kernels, ttprof_binary, workspace};

fn run(out: &Path, iterations: u32) {
    let sums = build_kernels(&workspace().join("examples/kernels"), Arch::WormholeB0, false, &[]);
    let elf = sums.elf("sums").unwrap();
    let _ = std::fs::remove_dir_all(out);
    let o = Command::new(ttprof_binary())
        .args(["run", "--grid", "2x1", "--kernel"])
        .arg(format!("brisc={}", elf.display()))
        .args(["--l1", &format!("0x30000={iterations}"), "--launches", "2", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

fn diff(args: &[&std::ffi::OsStr]) -> Output {
    let o = Command::new(ttprof_binary()).arg("diff").args(args).output().unwrap();
    eprintln!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
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
    let o = diff(&[a.as_os_str(), b.as_os_str(), "--fail-above".as_ref(), "0".as_ref()]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("cycle counts are exact") && text.contains("no change in"), "{text}");

    // Twice the iterations: the `iteration` zone's count doubles and its total nearly
    // doubles (the first iteration of each launch runs with a cold instruction cache, the
    // others do the same work warm), and the kernel's wrapper zones grow; exit 3 names each
    // on stderr.
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
    assert!(err.contains("regression: kernel / iteration: total"), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().find(|l| l.starts_with("kernel ")).unwrap();
    assert!(first.contains("iteration") && first.contains("8->16"), "largest change first: {text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["exact"], true);
    assert_eq!(v["fail_above_pct"], 50.0);
    let failed: Vec<&str> = v["failed"].as_array().unwrap().iter().map(|f| f["zone"].as_str().unwrap()).collect();
    assert!(failed.contains(&"iteration"), "{failed:?}");
    let row = v["rows"].as_array().unwrap().iter().find(|r| r["zone"] == "iteration").unwrap();
    assert_eq!(row["new"]["count"], 16);
    let (base, new) = (row["base"]["total_cycles"].as_u64().unwrap(), row["new"]["total_cycles"].as_u64().unwrap());
    assert!(new > base * 17 / 10 && new < 2 * base, "twice the iterations, the first of each launch cold: {base} -> {new}");
    let mean = row["mean_change_pct"].as_f64().unwrap();
    assert!((-15.0..0.0).contains(&mean), "the same work per iteration, fewer cold ones: {mean}");

    // Above the limit nothing fails: the wrapper zones grow by less than 100%.
    let o = diff(&[a.as_os_str(), c.as_os_str(), "--fail-above".as_ref(), "100".as_ref()]);
    assert_eq!(o.status.code(), Some(0));

    // The device log alone (a `ttprof report` or tt-metal directory, no device.img): noisy
    // runs, compared with a confidence; the count change is still real.
    let logs = root.join("c-log");
    std::fs::create_dir_all(&logs).unwrap();
    for f in ["profile_log_device.csv", "ops.jsonl"] {
        std::fs::copy(c.join(f), logs.join(f)).unwrap();
    }
    let o = diff(&[a.as_os_str(), logs.as_os_str(), "--fail-above".as_ref(), "50".as_ref()]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Mann-Whitney") && text.contains("confidence"), "{text}");

    // Unusable input: exit 1, naming the path.
    let o = diff(&[a.as_os_str(), root.join("missing").as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));
}
