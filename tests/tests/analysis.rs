//! The bottleneck analysis on real kernels: the example pipeline (reader -> unpack -> math ->
//! pack -> writer through CBs, each stage marking its blocking calls with typed waits) run on
//! the emulator five times, each time with one stage made slow (`SLOW_STAGE`), must name that
//! stage, with evidence its own zones support, in `ttprof_analysis.json`, the summary, the
//! HTML page's panel and the op report's CB wait columns.

use riscv_linker::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;
use ttprof_tests::{build_kernels, ttprof_binary, workspace};

const STAGES: [(&str, &str, &str); 5] = [
    ("reader", "brisc", "BRISC"),
    ("unpack", "trisc0", "TRISC_0"),
    ("math", "trisc1", "TRISC_1"),
    ("pack", "trisc2", "TRISC_2"),
    ("writer", "ncrisc", "NCRISC"),
];

/// Runs the pipeline (Add, 12 tiles, 2x1 grid) with `slow` (1..=5, 0: none) doing `steps`
/// extra loop steps per tile. 12 tiles are more than the pipeline holds in flight (two CB
/// pages per input, two `Src` banks, two `Dst` halves, two output pages), so a slow stage at
/// one end holds up the other end too.
pub fn run_pipeline(out: &Path, slow: u32, steps: u32) {
    run_pipeline_with(out, slow, steps, false, 20000, 0);
}

/// [`run_pipeline`], each extra step a `slow-step` zone when `zoned` (`SLOW_ZONES`), the
/// rings drained every `drain_every` cycles (0: only at the end); `ttprof run` must exit
/// with `code`.
fn run_pipeline_with(out: &Path, slow: u32, steps: u32, zoned: bool, drain_every: u64, code: i32) {
    run_pipeline_l1(out, slow, steps, zoned, drain_every, code, &[]);
}

/// [`run_pipeline_with`], with more `--l1 ADDR=VALUE` words.
fn run_pipeline_l1(
    out: &Path,
    slow: u32,
    steps: u32,
    zoned: bool,
    drain_every: u64,
    code: i32,
    more: &[&str],
) {
    let k = build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    );
    let mut cmd = Command::new(ttprof_binary());
    cmd.args([
        "run",
        "--grid",
        "2x1",
        "--drain-every-cycles",
        &drain_every.to_string(),
        "--name",
        "Add",
    ]);
    for (bin, risc, _) in STAGES {
        cmd.arg("--kernel")
            .arg(format!("{risc}={}", k.elf(bin).unwrap().display()));
    }
    for l1 in [
        "0x30000=1".to_string(),
        "0x30004=12".into(),
        format!("0x30040={slow}"),
        format!("0x30044={steps}"),
        format!("0x30048={}", zoned as u32),
    ]
    .into_iter()
    .chain(more.iter().map(|s| s.to_string()))
    {
        cmd.args(["--l1", &l1]);
    }
    let _ = std::fs::remove_dir_all(out);
    let o = cmd.arg("--out").arg(out).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The entry of `risc` (`BRISC`, `TRISC_1`, ...) in an op's `riscs`.
fn risc_of<'a>(op: &'a serde_json::Value, risc: &str) -> &'a serde_json::Value {
    op["riscs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["risc"] == risc)
        .unwrap_or_else(|| panic!("no {risc} in {op:#}"))
}

fn analysis(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("ttprof_analysis.json")).unwrap()).unwrap()
}

#[test]
fn the_verdict_names_the_stage_made_slow_with_evidence_from_its_waits() {
    let root: PathBuf = workspace().join("target/test-analysis");
    for (i, (stage, _, risc)) in STAGES.iter().enumerate() {
        let out = root.join(stage);
        run_pipeline(&out, i as u32 + 1, 20000);
        let a = analysis(&out);
        let ops = a["ops"].as_array().unwrap();
        assert_eq!(ops.len(), 1);
        let op = &ops[0];
        let v = &op["verdict"];
        assert_eq!(
            (v["stage"].as_str().unwrap(), v["risc"].as_str().unwrap()),
            (*stage, *risc),
            "{v:#}"
        );
        // What bounds it: the reader and writer are data-movement RISCs, the rest compute
        // (issue 25: this was "compute" for every stage).
        let kind = if matches!(*stage, "reader" | "writer") {
            "data movement"
        } else {
            "compute"
        };
        assert_eq!(v["bound_by"], kind, "{v:#}");
        assert!(v["resource"].is_null() && v["profiler_pct"] == 0.0, "{v:#}");
        // The evidence is the op's own numbers: the bound stage is the busiest, every other
        // stage waited on a handover (a CB, or between the TRISCs a Tensix semaphore), and
        // the sentence quotes them.
        let riscs = op["riscs"].as_array().unwrap();
        assert_eq!(riscs.len(), 5);
        let busy = |r: &serde_json::Value| r["busy_ns"].as_f64().unwrap();
        let bound = riscs.iter().find(|r| r["risc"] == *risc).unwrap();
        for r in riscs.iter().filter(|r| r["risc"] != *risc) {
            assert!(
                busy(r) < busy(bound),
                "{stage}: {r:#} is busier than {bound:#}"
            );
            // The reader and writer also wait on their NoC barriers (DRAM reads and writes),
            // but far less than on the handovers the bound stage holds up. (A TRISC's TTSync
            // wait, `sync 0`, is on its Tensix thread, which may itself wait at the wait gate
            // for the unpackers: math's last one lasts as long as the tiles still to come.)
            let waits = r["waits"].as_object().unwrap();
            assert!(
                waits
                    .keys()
                    .all(|w| ["CB ", "NoC ", "Tensix semaphore ", "TTSync "]
                        .iter()
                        .any(|p| w.starts_with(p))),
                "{waits:?}"
            );
            let sum = |p: &str| {
                waits
                    .iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .map(|(_, v)| v.as_f64().unwrap())
                    .sum::<f64>()
            };
            let handovers = sum("CB ") + sum("Tensix semaphore ") + sum("TTSync ");
            assert!(handovers > 4.0 * sum("NoC "), "{stage}: {waits:?}");
        }
        let pct = 100.0 * busy(bound) / op["span_ns"].as_f64().unwrap();
        let evidence = v["evidence"].as_str().unwrap();
        assert!(
            evidence.starts_with(&format!("{stage} on {risc}: busy {pct:.0}%")),
            "{evidence}"
        );
        assert!(v["busy_pct"].as_f64().unwrap() > 50.0, "{v:#}");
        // Both tiles run the same work: they agree.
        assert_eq!(op["tiles"].as_array().unwrap().len(), 2);
        assert!(op["disagreeing_tiles"].as_array().unwrap().is_empty());
        // The summary says it in one line.
        let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
        assert!(
            summary.contains(&format!(
                "Add (run 1): bound by {stage} ({risc}): {evidence}"
            )),
            "{summary}"
        );
        // The HTML page has a panel per op with the same verdict.
        let page = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
        assert!(page.contains("<section id=\"analysis\">"), "no panel");
        assert!(
            page.contains(&format!("<b>Add (run 1)</b>: bound by {stage} ({risc})")),
            "panel of {stage}"
        );
    }

    // The CBs, read off the waits, are the pipeline's ends (between the TRISCs, the Tensix
    // registers and semaphores hand the tiles over).
    let a = analysis(&root.join("math"));
    let cbs = &a["ops"][0]["tiles"][0]["cbs"];
    let link = |cb: u64| {
        cbs.as_array()
            .unwrap()
            .iter()
            .find(|c| c["cb"] == cb)
            .unwrap()
            .clone()
    };
    for (cb, producer, consumer) in [(0, "reader", "unpack"), (4, "pack", "writer")] {
        let l = link(cb);
        assert_eq!(
            (l["producer"].as_str(), l["consumer"].as_str()),
            (Some(producer), Some(consumer)),
            "{l:#}"
        );
    }
    let writer = risc_of(&a["ops"][0], "NCRISC").clone();
    assert!(
        writer["waits"]["CB 4 front (data)"].as_f64().unwrap() > 0.0,
        "{writer:#}"
    );

    // The op report's compute CB wait columns hold the TRISCs' typed waits (mean per tile).
    let report = std::fs::read_dir(root.join("math"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ops_perf_results_")
        })
        .unwrap();
    let text = std::fs::read_to_string(report).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| {
        row[header.iter().position(|h| *h == name).unwrap()]
            .parse::<f64>()
            .unwrap()
    };
    // Mean per tile (2 tiles) of the TRISCs' waits whose resource names `end`.
    let trisc = |end: &str| -> f64 {
        a["ops"][0]["riscs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["risc"].as_str().unwrap().starts_with("TRISC"))
            .flat_map(|r| {
                r["waits"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(w, _)| w.contains(end))
                    .map(|(_, ns)| ns.as_f64().unwrap())
            })
            .sum::<f64>()
            / 2.0
    };
    let front = cell("DEVICE COMPUTE CB WAIT FRONT [ns]");
    let back = cell("DEVICE COMPUTE CB RESERVE BACK [ns]");
    assert!((front - trisc("front")).abs() <= 1.0, "{front}");
    assert!((back - trisc("back")).abs() <= 1.0, "{back}");
    assert!(front > 0.0 && back > 0.0);
}

/// Issue 40: the critical path crosses the coprocessor. The TRISCs hand tiles over with
/// Tensix semaphores and record each post they push (`tensix::post`); the emulator's log
/// says when each post's Tensix thread executed it and when a thread's wait gate waited on
/// another's (math's for unpack's `SrcA` data). So a wait on a Tensix semaphore ends when
/// the post executed, the path goes on in the posting thread (`on: Tensix thread`) and from
/// its gate to the thread it waited for. Whichever stage is slow - the reader, unpack, math,
/// pack or the writer - the path reaches it from the writer's end and it holds most of the
/// path, busy: a slow stage is no longer blamed on the stage that waited for it. (A slow
/// stage does its extra work before it waits for its tile, so the stages before it are off
/// the path.)
#[test]
fn the_critical_path_walks_through_the_coprocessor_to_the_slow_stage() {
    let root: PathBuf = workspace().join("target/test-analysis-path");
    let mut threads = 0;
    for (slow, risc) in [
        (1, "BRISC"),
        (2, "TRISC_0"),
        (3, "TRISC_1"),
        (4, "TRISC_2"),
        (5, "NCRISC"),
    ] {
        let out = root.join(format!("slow-{slow}"));
        run_pipeline(&out, slow, 20000);
        let a = analysis(&out);
        let op = &a["ops"][0];
        assert_eq!(
            op["verdict"]["risc"], risc,
            "slow {slow}: {:#}",
            op["verdict"]
        );
        let c = &op["critical_path"];
        let segs = c["segments"].as_array().unwrap();
        let total = c["cycles"].as_u64().unwrap();
        let busy = |r: &str| -> u64 {
            segs.iter()
                .filter(|s| s["core"]["risc"] == r && s["kind"] == "busy")
                .map(|s| s["cycles"].as_u64().unwrap())
                .sum()
        };
        assert!(
            busy(risc) * 2 >= total,
            "slow {slow}: {risc} busy {} of {total}: {c:#}",
            busy(risc)
        );
        let on_path = |r: &str| {
            segs.iter()
                .any(|s| s["core"]["risc"] == r && s["resource"] != "launch")
        };
        assert!(on_path(risc) && on_path("NCRISC"), "slow {slow}: {c:#}");
        // No Tensix semaphore wait on the path is left unexplained: each that blocked ends
        // when a post of another TRISC of its tile executed, and the path goes on in that
        // TRISC's thread.
        for (k, s) in segs.iter().enumerate() {
            let Some(r) = s["resource"]
                .as_str()
                .filter(|r| r.starts_with("Tensix semaphore "))
            else {
                continue;
            };
            if s["unmatched"].is_string() {
                assert_eq!(
                    s["unmatched"], "its resource was free when it began (it did not block)",
                    "slow {slow}: {s:#}"
                );
                continue;
            }
            let n = r.rsplit(' ').next().unwrap();
            let post = &s["signal"];
            assert_eq!(
                post["name"],
                format!("tensix-sem-post-{n}"),
                "slow {slow}: {s:#}"
            );
            assert_eq!(post["core"]["tile"], s["core"]["tile"]);
            assert_ne!(post["core"]["risc"], s["core"]["risc"]);
            let executed = post["executed_cycles"].as_u64().unwrap();
            assert!(executed >= post["cycles"].as_u64().unwrap(), "{s:#}");
            // The step before it is the posting thread's work up to the post, unless that
            // was empty (the path went straight on to what the thread waited for).
            let Some(before) = k.checked_sub(1).map(|j| &segs[j]) else {
                continue;
            };
            if before["core"] == post["core"] && before["kind"] == "busy" {
                assert_eq!(
                    (&before["on"], &before["end_cycles"], &s["start_cycles"]),
                    (&"Tensix thread".into(), &executed.into(), &executed.into()),
                    "slow {slow}: {before:#}"
                );
                threads += 1;
            }
        }
        // The summary's path line names the slow stage's busy share first.
        let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
        let stage = op["verdict"]["stage"].as_str().unwrap();
        let flat = summary.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&format!("busy: {stage} ({risc} ")),
            "slow {slow}: {flat}"
        );
    }
    assert!(threads > 0, "no path went through a Tensix thread's work");
}

/// Math slowed on the coprocessor (2,000 extra accumulating `ELWADD`s a tile,
/// `EXTRA_ELWADDS`): its RISC is held on the full instruction FIFO while the Matrix Unit
/// works, so it is bound by math with the Matrix Unit named, and its critical path is math's
/// work reached from the writer's end and back to the reader. With the same `ELWADD`s and a slow unpacker instead,
/// math's RISC is held waiting for `SrcA` data: a wait on unpack, not busy math.
#[test]
fn a_risc_held_on_the_coprocessor_is_busy_only_while_its_own_unit_works() {
    let root: PathBuf = workspace().join("target/test-analysis-held");
    let out = root.join("math-on-coprocessor");
    run_pipeline_l1(&out, 0, 0, false, 20000, 0, &["0x30050=2000"]);
    let a = analysis(&out);
    let op = &a["ops"][0];
    let v = &op["verdict"];
    assert_eq!(
        (&v["risc"], &v["bound_by"]),
        (&"TRISC_1".into(), &"compute".into()),
        "{v:#}"
    );
    assert!(
        v["evidence"].as_str().unwrap().contains("the Matrix Unit"),
        "{v:#}"
    );
    let math = risc_of(op, "TRISC_1");
    let unit = math["coprocessor_busy"]["the Matrix Unit"]
        .as_f64()
        .unwrap();
    let kernel = math["kernel_ns"].as_f64().unwrap();
    // The RISC spends 3 of every 5 cycles on its push loop (busy) and is held for 2 while
    // each ELWADD waits on the one before (Dst read after write): the Matrix Unit's share.
    assert!(
        unit * 4.0 > kernel,
        "the Matrix Unit {unit} of {kernel} ns: {math:#}"
    );
    assert!(math["busy_ns"].as_f64().unwrap() >= unit, "{math:#}");
    // Issue 40: its critical path is mostly math's busy time and reaches back to the reader
    // (the first tiles' reads), not only the stage that waited for math.
    let c = &op["critical_path"];
    let segs = c["segments"].as_array().unwrap();
    let total = c["cycles"].as_u64().unwrap();
    let math_busy: u64 = segs
        .iter()
        .filter(|s| s["core"]["risc"] == "TRISC_1" && s["kind"] == "busy")
        .map(|s| s["cycles"].as_u64().unwrap())
        .sum();
    assert!(
        math_busy * 10 >= total * 9,
        "math busy {math_busy} of {total}: {c:#}"
    );
    assert!(
        segs.iter()
            .any(|s| s["core"]["risc"] == "BRISC" && s["resource"] != "launch"),
        "the path reaches the reader: {c:#}"
    );

    let out = root.join("unpack-slow");
    run_pipeline_l1(&out, 2, 20000, false, 20000, 0, &["0x30050=64"]);
    let a = analysis(&out);
    let op = &a["ops"][0];
    assert_eq!(op["verdict"]["risc"], "TRISC_0", "{:#}", op["verdict"]);
    let math = risc_of(op, "TRISC_1");
    let held = math["held"]["SrcA data from unpack"]
        .as_f64()
        .unwrap_or(0.0);
    let kernel = math["kernel_ns"].as_f64().unwrap();
    assert!(
        held * 4.0 > kernel,
        "held on SrcA {held} of {kernel} ns: {math:#}"
    );
    assert_eq!(
        math["waits"]["SrcA data from unpack"],
        math["held"]["SrcA data from unpack"]
    );
    let busy = math["busy_ns"].as_f64().unwrap();
    let waited: f64 = math["waits"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    // The critical path crosses from math's held stretches to the unpacker, whose slow work
    // is its largest busy share.
    let segs = op["critical_path"]["segments"].as_array().unwrap();
    let busy_on = |r: &str| -> u64 {
        segs.iter()
            .filter(|s| s["core"]["risc"] == r && s["kind"] == "busy")
            .map(|s| s["cycles"].as_u64().unwrap())
            .sum()
    };
    let total = op["critical_path"]["cycles"].as_u64().unwrap();
    assert!(
        busy_on("TRISC_0") * 2 >= total,
        "unpack busy {} of {total}: {:#}",
        busy_on("TRISC_0"),
        op["critical_path"]
    );
    // Every part of its kernel time is in one category: busy, a wait (typed or held), a
    // profiler stall or its own records.
    let profiler =
        math["profiler_stall_ns"].as_f64().unwrap() + math["profiler_records_ns"].as_f64().unwrap();
    assert!((busy + waited + profiler - kernel).abs() < 1.0, "{math:#}");
}

/// With no stage slowed, the reader spends most of its time waiting on its own NoC reads
/// (DRAM latency, modelled): the op is NoC bound, named by its barrier, and every other stage
/// waits on a handover (issue 40: a NoC-bound variant named right).
#[test]
fn an_op_waiting_on_its_noc_reads_is_noc_bound() {
    let out = workspace().join("target/test-analysis-noc");
    run_pipeline(&out, 0, 0);
    let a = analysis(&out);
    let op = &a["ops"][0];
    let v = &op["verdict"];
    assert_eq!(
        (&v["risc"], &v["bound_by"], &v["resource"]),
        (&"BRISC".into(), &"noc".into(), &"NoC read barrier".into()),
        "{v:#}"
    );
    let reader = risc_of(op, "BRISC");
    let noc = reader["waits"]["NoC read barrier"].as_f64().unwrap();
    assert!(noc > reader["busy_ns"].as_f64().unwrap(), "{reader:#}");
    assert!(
        v["evidence"]
            .as_str()
            .unwrap()
            .contains("waiting on NoC read barrier"),
        "{v:#}"
    );
}

#[test]
fn kernels_without_typed_waits_get_no_verdict() {
    let sums = build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    );
    let out = workspace().join("target/test-analysis/sums");
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(ttprof_binary())
        .args(["run", "--kernel"])
        .arg(format!("brisc={}", sums.elf("sums").unwrap().display()))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let a = analysis(&out);
    assert!(a["ops"][0]["verdict"].is_null(), "{a:#}");
    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    assert!(!summary.contains("bottleneck"), "{summary}");
    let page = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
    assert!(!page.contains("id=\"analysis\""));
}

/// `ttprof diff` on a kernel whose inner loop does twice the work: math's extra loop goes
/// from 10000 to 20000 steps per tile (each step an L1 store: 5 cycles of its L1 port, so
/// math is the bottleneck in both runs); the gate fails naming `math-tile`, whose mean grew.
#[test]
fn twice_the_work_in_math_fails_the_diff_gate_naming_the_zone() {
    let root: PathBuf = workspace().join("target/test-analysis/diff");
    let (base, same, slower) = (root.join("base"), root.join("same"), root.join("slower"));
    run_pipeline(&base, 3, 10000);
    run_pipeline(&same, 3, 10000);
    run_pipeline(&slower, 3, 20000);
    let diff = |new: &Path| {
        Command::new(ttprof_binary())
            .arg("diff")
            .arg(&base)
            .arg(new)
            .args(["--fail-above", "20"])
            .output()
            .unwrap()
    };
    let o = diff(&same);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = diff(&slower);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("regression: Add / math-tile:"))
        .unwrap_or_else(|| panic!("{err}"));
    let mean = line.split("mean ").nth(1).unwrap();
    let growth: f64 = mean
        .split('(')
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(growth > 20.0, "math-tile grows by the extra loop: {line}");
    // The stages that only wait on math grow less per tile than math does, or not at all.
    assert!(!err.contains("regression: Add / noc-read-in0"), "{err}");
}

/// Issue 25: a stage that spends most of its kernel stalled on its full ring (a zone per
/// loop step, rings drained every 2M cycles) was "bound by reader ... busy 98%"; with no
/// drain at all (`--drain-every-cycles 0`) its records, KERNEL zone included, were dropped and
/// another stage was named "busy 0%". Stalls are their own category and, when they dominate,
/// the verdict; lost records make the times incomplete, and the verdict says so; both say
/// what to do.
#[test]
fn profiler_stalls_and_lost_records_are_the_profilers_not_the_stages() {
    let root: PathBuf = workspace().join("target/test-analysis/profiler");
    let out = root.join("stalls");
    run_pipeline_with(&out, 1, 2000, true, 2_000_000, 0);
    let a = analysis(&out);
    let op = &a["ops"][0];
    let v = &op["verdict"];
    assert_eq!(
        (
            v["stage"].as_str(),
            v["risc"].as_str(),
            v["bound_by"].as_str()
        ),
        (Some("reader"), Some("BRISC"), Some("profiler")),
        "{v:#}"
    );
    let riscs = op["riscs"].as_array().unwrap();
    let reader = riscs.iter().find(|r| r["risc"] == "BRISC").unwrap();
    let ns = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap();
    let (stall, busy, kernel) = (
        ns(reader, "profiler_stall_ns"),
        ns(reader, "busy_ns"),
        ns(reader, "kernel_ns"),
    );
    assert!(
        stall > kernel / 2.0 && busy < stall,
        "the reader mostly stalled: {reader:#}"
    );
    assert_eq!(
        reader["records_lost"], 0,
        "Block with a consumer loses nothing"
    );
    // Every part of its kernel time is in one category (its records' known cost among them).
    let waits: f64 = reader["waits"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    let records = ns(reader, "profiler_records_ns");
    assert!(records > 0.0, "{reader:#}");
    assert!(
        (busy + waits + stall + records - kernel).abs() < 1.0,
        "{reader:#}"
    );
    // The stalls are the PROFILER-STALL zones the summary lists (those inside the kernel).
    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    let row = summary
        .lines()
        .find(|l| l.trim_start().starts_with("PROFILER-STALL "))
        .unwrap_or_else(|| panic!("{summary}"));
    let total: f64 = row
        .split_whitespace()
        .nth(2)
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(
        stall <= total + 1.0 && stall > 0.9 * total,
        "{stall} of {total}"
    );
    let evidence = v["evidence"].as_str().unwrap();
    let pct = (100.0 * stall / ns(op, "span_ns")).round();
    assert!(
        evidence.starts_with(&format!(
            "reader on BRISC: stalled on the profiler's full ring {pct}%"
        )),
        "{evidence}"
    );
    assert!(
        evidence.contains("--drain-every-cycles") && evidence.contains("fewer zones"),
        "{evidence}"
    );
    assert!(
        summary.contains(&format!(
            "Add (run 1): bound by the profiler (reader on BRISC): {evidence}"
        )),
        "{summary}"
    );
    let page = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
    assert!(
        page.contains("<b>Add (run 1)</b>: bound by the profiler (reader on BRISC)"),
        "panel"
    );
    assert!(
        page.contains(&format!("<td>stalled {pct}%</td>")),
        "the panel's profiler column"
    );

    // No consumer while the kernels run: the reader's ring fills and its later records,
    // its KERNEL zone among them, are dropped (exit 2: data problems).
    let out = root.join("dropped");
    run_pipeline_with(&out, 1, 2000, true, 0, 2);
    let a = analysis(&out);
    let op = &a["ops"][0];
    let v = &op["verdict"];
    assert_eq!(
        (v["stage"].as_str(), v["bound_by"].as_str()),
        (Some("reader"), Some("profiler")),
        "{v:#}"
    );
    let reader = risc_of(op, "BRISC").clone();
    assert!(
        reader["records_lost"].as_u64().unwrap() > 0 && reader["missing_kernel_zone"] == true,
        "{reader:#}"
    );
    for r in op["riscs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["risc"] != "BRISC")
    {
        assert!(
            r["records_lost"] == 0 && r["missing_kernel_zone"] == false,
            "{r:#}"
        );
    }
    let evidence = v["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with(
            "the profiler lost records, so these times are incomplete: reader on BRISC dropped "
        ),
        "{evidence}"
    );
    assert!(evidence.contains("--drain-every-cycles"), "{evidence}");
}

/// Issue 25: `value_zone!` values reached only the device CSV. math's `math-tile` zones
/// carry their tile index (0..12 on each of the two tiles): the summary lists them, and the
/// Parquet zones table, the trace JSON and the HTML page carry each zone's value (the
/// Perfetto and Tracy outputs are checked in their own unit tests).
#[test]
fn value_zones_reach_the_summary_parquet_trace_and_html() {
    let out = workspace().join("target/test-analysis/values");
    run_pipeline(&out, 0, 0);
    let want: Vec<u64> = (0..12).flat_map(|t| [t, t]).collect();

    let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
    assert!(
        summary.contains("    value zone  zones  min value  mean value  max value"),
        "{summary}"
    );
    let row: Vec<&str> = summary
        .lines()
        .map(str::split_whitespace)
        .map(Iterator::collect::<Vec<_>>)
        .find(|w| w.len() == 5 && w[0] == "math-tile")
        .unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(row, ["math-tile", "24", "0", "5.5", "11"]);

    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ttprof_trace.json")).unwrap()).unwrap();
    let begins = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "B" && e["cat"] == "zone");
    let mut values: Vec<u64> = begins
        .clone()
        .filter(|e| e["name"] == "math-tile")
        .map(|e| e["args"]["value"].as_u64().unwrap())
        .collect();
    values.sort_unstable();
    assert_eq!(values, want);
    assert!(begins
        .filter(|e| e["name"] != "math-tile")
        .all(|e| e["args"].get("value").is_none()));

    let page = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
    let start = page.find("id=\"ttprof-data\">").unwrap() + "id=\"ttprof-data\">".len();
    let data: serde_json::Value =
        serde_json::from_str(&page[start..start + page[start..].find("</script>").unwrap()])
            .unwrap();
    let zones: Vec<i64> = data["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let mut values: Vec<u64> = zones
        .chunks(9)
        .filter(|z| data["sites"][z[1] as usize][0] == "math-tile")
        .map(|z| u64::try_from(z[8]).unwrap())
        .collect();
    values.sort_unstable();
    assert_eq!(values, want);

    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    use arrow_array::Array;
    let f = std::fs::File::open(out.join("ttprof_zones.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut values = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let names = b
            .column_by_name("name")
            .unwrap()
            .as_dictionary::<UInt32Type>();
        let strings = names.values().as_string::<i32>();
        let v = b
            .column_by_name("value")
            .unwrap()
            .as_primitive::<UInt32Type>();
        for i in 0..b.num_rows() {
            let math = strings.value(names.keys().value(i) as usize) == "math-tile";
            assert_eq!(v.is_valid(i), math);
            if math {
                values.push(v.value(i) as u64);
            }
        }
    }
    values.sort_unstable();
    assert_eq!(values, want);
}
