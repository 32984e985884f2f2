//! The critical path on a kernel pipeline whose path is known by construction: three stages
//! on one tile (`chain_producer` on BRISC -> CB 0 -> `chain_compute` on TRISC1 -> CB 4 ->
//! `chain_consumer` on NCRISC, 4 tiles, no DRAM), each doing 50 loop steps per tile and the
//! slow one 2000 more. Whichever stage is slow, the path starts on the producer, crosses to
//! compute at a CB 0 push and to the consumer at a CB 4 push; the slow stage decides where:
//! a slow producer hands over at its last push, a fast one at its first, and likewise for
//! compute. The segments tile the op's span and add up to its device kernel duration.

use riscv_linker::Arch;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use ttprof_tests::{build_kernels, ttprof_binary, workspace};

const TILES: u64 = 4;
const SLOW_STEPS: u64 = 2000;

fn run_chain(out: &Path, slow: u32) -> Value {
    run_chain_steps(out, slow, SLOW_STEPS)
}

fn run_chain_steps(out: &Path, slow: u32, steps: u64) -> Value {
    run_chain_with(out, slow, steps, false)
}

/// [`run_chain_steps`], with the kernels' `EXTRA_RECORDS` knob when `more` (more events, data
/// and signals in their loops).
fn run_chain_with(out: &Path, slow: u32, steps: u64, more: bool) -> Value {
    let k = build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    );
    let _ = std::fs::remove_dir_all(out);
    let mut cmd = Command::new(ttprof_binary());
    cmd.args(["run", "--grid", "1x1", "--name", "Chain"]);
    for (risc, bin) in [
        ("brisc", "chain_producer"),
        ("trisc1", "chain_compute"),
        ("ncrisc", "chain_consumer"),
    ] {
        cmd.arg("--kernel")
            .arg(format!("{risc}={}", k.elf(bin).unwrap().display()));
    }
    for l1 in [
        format!("0x30004={TILES}"),
        format!("0x30040={slow}"),
        format!("0x30044={steps}"),
        format!("0x3004c={}", more as u32),
    ] {
        cmd.args(["--l1", &l1]);
    }
    let o = cmd.arg("--out").arg(out).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out.join("ttprof_analysis.json")).unwrap()).unwrap()
}

/// The op report's `DEVICE KERNEL DURATION [ns]` of its only op.
fn kernel_duration_ns(out: &Path) -> f64 {
    let f = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ops_perf_results_")
        })
        .unwrap();
    let text = std::fs::read_to_string(f).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "DEVICE KERNEL DURATION [ns]")
        .unwrap();
    lines
        .next()
        .unwrap()
        .split(',')
        .nth(col)
        .unwrap()
        .parse()
        .unwrap()
}

/// Checks what holds for any path: contiguous segments covering the op's span exactly.
pub fn check_adds_up(c: &Value) {
    let segs = c["segments"].as_array().unwrap();
    let u = |v: &Value| v.as_u64().unwrap();
    assert_eq!(u(&segs[0]["start_cycles"]), u(&c["start_cycles"]));
    assert_eq!(u(&segs[segs.len() - 1]["end_cycles"]), u(&c["end_cycles"]));
    for w in segs.windows(2) {
        assert_eq!(u(&w[0]["end_cycles"]), u(&w[1]["start_cycles"]), "{w:?}");
    }
    let cycles: u64 = segs.iter().map(|s| u(&s["cycles"])).sum();
    assert_eq!(cycles, u(&c["cycles"]));
    assert_eq!(u(&c["cycles"]), u(&c["end_cycles"]) - u(&c["start_cycles"]));
    let ns: f64 = segs.iter().map(|s| s["ns"].as_f64().unwrap()).sum();
    assert!((ns - c["ns"].as_f64().unwrap()).abs() < 1e-3, "{ns} vs {c}");
    for s in segs {
        assert!(s["kind"] == "busy" || s["kind"] == "wait", "{s}");
        assert!(u(&s["cycles"]) > 0, "{s}");
    }
}

#[test]
fn the_path_is_the_one_built_into_the_pipeline() {
    let root = workspace().join("target/test-critical-path");
    // (slow stage, its RISC, whether the producer hands over at its last push, whether
    // compute does).
    for (slow, risc, producer_last, compute_last) in [
        (1, "BRISC", true, true),
        (3, "TRISC_1", false, true),
        (5, "NCRISC", false, false),
    ] {
        let out = root.join(format!("slow-{slow}"));
        let a = run_chain(&out, slow);
        let op = &a["ops"][0];
        let c = &op["critical_path"];
        check_adds_up(c);
        // The op's duration, as the op report gives it.
        assert!(
            (c["ns"].as_f64().unwrap() - kernel_duration_ns(&out)).abs() <= 1.0,
            "{} vs {}",
            c["ns"],
            kernel_duration_ns(&out)
        );
        let segs = c["segments"].as_array().unwrap();
        let start = c["start_cycles"].as_u64().unwrap();
        // The cores in path order: producer, compute, consumer.
        let mut cores: Vec<&str> = Vec::new();
        for s in segs {
            let r = s["core"]["risc"].as_str().unwrap();
            if s["resource"] != "launch" && cores.last() != Some(&r) {
                cores.push(r);
            }
        }
        assert_eq!(cores, ["BRISC", "TRISC_1", "NCRISC"], "slow {slow}");
        // Exactly two hand-overs, each a CB wait ended by the other stage's push.
        let jumps: Vec<&Value> = segs
            .iter()
            .filter(|s| s["signal"].is_object() && s["signal"]["core"]["risc"] != s["core"]["risc"])
            .collect();
        assert_eq!(jumps.len(), 2, "{jumps:#?}");
        let hand =
            |j: &Value, (waiter, resource, by, name, zone): (&str, &str, &str, &str, &str)| {
                assert_eq!(j["core"]["risc"], waiter);
                assert_eq!(j["kind"], "wait");
                assert_eq!(j["resource"], resource);
                assert_eq!(j["signal"]["core"]["risc"], by);
                assert_eq!(j["signal"]["name"], name);
                assert_eq!(j["signal"]["zone"], zone);
                assert_eq!(j["signal"]["core"]["tile"], j["core"]["tile"]);
                // The wait is on the path from the signal on.
                assert_eq!(j["start_cycles"], j["signal"]["cycles"]);
                j["signal"]["cycles"].as_u64().unwrap() - start
            };
        let p = hand(
            jumps[0],
            (
                "TRISC_1",
                "CB 0 front (data)",
                "BRISC",
                "cb-push-0",
                "produce-tile",
            ),
        );
        let q = hand(
            jumps[1],
            (
                "NCRISC",
                "CB 4 front (data)",
                "TRISC_1",
                "cb-push-4",
                "compute-tile",
            ),
        );
        // A slow stage's last push comes in the op's last tile's worth of time (its slow work
        // spreads the op over TILES such spans); a fast stage's first push in the first.
        let total = c["cycles"].as_u64().unwrap();
        let at = |last: bool, t: u64| {
            if last {
                assert!(
                    t * TILES >= total * (TILES - 1),
                    "slow {slow}: {t} of {total}"
                );
            } else {
                assert!(t * TILES < total, "slow {slow}: {t} of {total}");
            }
        };
        at(producer_last, p);
        at(compute_last, q);
        // The slow stage holds most of the path, busy.
        let busy = |r: &str| -> u64 {
            segs.iter()
                .filter(|s| s["core"]["risc"] == r && s["kind"] == "busy")
                .map(|s| s["cycles"].as_u64().unwrap())
                .sum()
        };
        assert!(busy(risc) * 4 >= total * 3, "slow {slow}: {c:#}");
        assert!(busy(risc) >= TILES * SLOW_STEPS);
        // Every wait was matched to its signal or did not block: none unmatched.
        assert_eq!(c["unmatched_waits"], serde_json::json!([]), "{c:#}");
        assert!(c["matched_waits"].as_u64().unwrap() >= 2);
        // The summary's paragraph names the slow stage's busy share first.
        let summary = std::fs::read_to_string(out.join("ttprof_summary.txt")).unwrap();
        let para = summary
            .split("critical path per op")
            .nth(1)
            .unwrap_or_else(|| panic!("{summary}"));
        let stage = op["riscs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["risc"] == risc)
            .unwrap()["stage"]
            .as_str()
            .unwrap()
            .to_string();
        let flat = para.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&format!("busy: {stage} ({risc} 1-1)")),
            "{flat}"
        );
        assert!(flat.contains("ended by"), "{flat}");
        // The HTML page draws the two hand-overs as arrows, from the signalling lane.
        let html = std::fs::read_to_string(out.join("ttprof_timeline.html")).unwrap();
        let paths = html
            .split("<script type=\"application/json\" id=\"ttprof-paths\">")
            .nth(1)
            .and_then(|r| r.split("</script>").next())
            .unwrap_or_else(|| panic!("no ttprof-paths in the page"));
        let arrows: Vec<Value> = serde_json::from_str(paths).unwrap();
        assert_eq!(arrows.len(), 2, "{arrows:?}");
        assert!(arrows[0][0].as_str().unwrap().ends_with("BRISC"));
        assert!(arrows[0][3].as_str().unwrap().ends_with("TRISC_1"));
        assert!(arrows[1][3].as_str().unwrap().ends_with("NCRISC"));
        assert!(arrows[0][2].as_i64() <= arrows[0][5].as_i64());
        // The Perfetto trace carries them as flows: each id leaves one instant and ends at one.
        let (outs, ends) = flows(&out.join("ttprof_trace.pftrace"));
        assert_eq!(
            outs,
            [
                (1, "signal cb-push-0".to_string()),
                (2, "signal cb-push-4".to_string())
            ]
        );
        assert_eq!(
            ends,
            [
                (1, "released: CB 0 front (data)".to_string()),
                (2, "released: CB 4 front (data)".to_string())
            ]
        );
    }
}

/// Flow ids with the names of the instants they leave or end at.
type Flows = Vec<(u64, String)>;

/// The flow ids leaving and ending at instants of a Perfetto trace, with the instants' names.
fn flows(path: &Path) -> (Flows, Flows) {
    use prost::Message;
    use ttprof::sink::perfetto::proto::{Trace, TracePacket};
    fn packets(bytes: &[u8], out: &mut Vec<TracePacket>) {
        for p in Trace::decode(bytes).unwrap().packet {
            match &p.compressed_packets {
                Some(z) => {
                    let mut raw = Vec::new();
                    std::io::Read::read_to_end(
                        &mut flate2::read::ZlibDecoder::new(z.as_slice()),
                        &mut raw,
                    )
                    .unwrap();
                    packets(&raw, out);
                }
                None => out.push(p),
            }
        }
    }
    let mut all = Vec::new();
    packets(&std::fs::read(path).unwrap(), &mut all);
    let (mut outs, mut ends) = (Vec::new(), Vec::new());
    for e in all.iter().filter_map(|p| p.track_event.as_ref()) {
        let name = e.name.clone().unwrap_or_default();
        outs.extend(e.flow_ids.iter().map(|&i| (i, name.clone())));
        ends.extend(e.terminating_flow_ids.iter().map(|&i| (i, name.clone())));
    }
    (outs, ends)
}

/// `ttprof diff` names the part of the path that grew: compute's busy time, when compute
/// does half as much work again.
#[test]
fn diff_names_the_segment_of_the_path_that_grew() {
    let root = workspace().join("target/test-critical-path-diff");
    let (base, new) = (root.join("base"), root.join("new"));
    run_chain_steps(&base, 3, SLOW_STEPS);
    run_chain_steps(&new, 3, SLOW_STEPS * 3 / 2);
    let o = Command::new(ttprof_binary())
        .arg("diff")
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("critical paths (ttprof_analysis.json):"),
        "{text}"
    );
    assert!(
        text.contains("grew most: chain_compute (TRISC_1 1-1) busy "),
        "{text}"
    );
}

/// Issue 39, item 6: instrumenting the kernels more (per tile an event, a datum and a signal,
/// and an event every 500 loop steps of the slow stage, as the README advises) changes
/// neither the op's verdict nor its critical path (the cores, the hand-overs and the
/// resources, in order), and the op's duration by at most 5 %. With records of ~1,000 cycles
/// each (before issue 39) the slow stage's tiles grew by about half.
#[test]
fn more_instrumentation_changes_neither_the_verdict_nor_the_path() {
    let root = workspace().join("target/test-critical-path-instrumented");
    for slow in [1u32, 3, 5] {
        let plain = run_chain_with(&root.join(format!("plain-{slow}")), slow, SLOW_STEPS, false);
        let more = run_chain_with(&root.join(format!("more-{slow}")), slow, SLOW_STEPS, true);
        let (p, m) = (&plain["ops"][0], &more["ops"][0]);
        for key in ["stage", "risc", "bound_by", "resource"] {
            assert_eq!(p["verdict"][key], m["verdict"][key], "slow {slow}: {key}");
        }
        let path = |op: &Value| -> Vec<(String, String, String)> {
            let mut out: Vec<(String, String, String)> = Vec::new();
            for s in op["critical_path"]["segments"].as_array().unwrap() {
                let step = (
                    s["core"]["risc"].to_string(),
                    s["kind"].to_string(),
                    s["resource"].to_string(),
                );
                if out.last() != Some(&step) {
                    out.push(step);
                }
            }
            out
        };
        assert_eq!(path(p), path(m), "slow {slow}");
        check_adds_up(&m["critical_path"]);
        let cycles = |op: &Value| op["critical_path"]["cycles"].as_u64().unwrap() as f64;
        let grew = cycles(m) / cycles(p) - 1.0;
        assert!(
            (0.0..=0.05).contains(&grew),
            "slow {slow}: the op took {:.2} % longer with more records",
            grew * 100.0
        );
    }
}
