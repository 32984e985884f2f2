//! Issue 41: an op a fault stopped is in `ttprof_analysis.json` with what is known of it.
//! Before, a deadlocked op's analysis was `{"ops": []}` (its KERNEL zones never closed, so
//! no cell was made) and its open waits were only in the fault's text.

use serde_json::Value;
use std::path::PathBuf;
use ttprof_tests::{ttprof, workspace};

/// A C kernel that opens a zone, then a wait on `resource`, and polls an L1 word nothing
/// writes.
fn stuck(resource: &str) -> String {
    format!(
        r#"
#include <ttprof.h>
#include <stdint.h>
void kernel_main(void) {{
    TTPROF_ZONE("setup");
    TTPROF_WAIT("stuck-wait", {resource});
    while (*(volatile uint32_t*)0x30000 == 0) {{}}
}}
"#
    )
}

fn sources(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = workspace().join("target/test-stopped-ops").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

#[test]
fn a_deadlocked_op_is_analysed_with_each_cores_open_wait_and_since_when() {
    let dir = sources(
        "deadlock",
        &[
            ("reader.c", &stuck("TTPROF_CB_FRONT(1)")),
            ("writer.c", &stuck("TTPROF_CB_BACK(4)")),
        ],
    );
    let o = ttprof(
        Some(&dir),
        &[
            "run",
            "--grid",
            "1x1",
            "--kernel",
            "brisc=reader.c",
            "--kernel",
            "ncrisc=writer.c",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "a deadlock is a data problem");
    let out = dir.join("out");
    // A run that produced data keeps everything it wrote (only exit 1 removes it).
    for f in [
        "kernels/reader.elf",
        "ops.jsonl",
        "device.img",
        "device.snap",
    ] {
        assert!(out.join(f).exists(), "{f} was removed");
    }
    let text = std::fs::read_to_string(out.join("ttprof_analysis.json")).unwrap();
    let a: Value = serde_json::from_str(&text).unwrap();
    let ops = a["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 1, "the op that stopped is there: {text}");
    let op = &ops[0];
    assert_eq!(
        (op["op"].as_str(), op["run"].as_u64()),
        (Some("kernel"), Some(1))
    );
    // What the records say so far: both RISCs, neither with its KERNEL zone.
    let riscs: Vec<(&str, bool)> = op["riscs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["risc"].as_str().unwrap(),
                r["missing_kernel_zone"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(riscs, [("BRISC", true), ("NCRISC", true)], "{text}");
    assert_eq!(op["tiles"][0]["tile"], "1-1", "{text}");
    let stopped = &op["stopped"];
    assert!(
        stopped["fault"]
            .as_str()
            .unwrap()
            .starts_with("deadlock: none of the 2 running core(s) can make progress"),
        "{text}"
    );
    assert_eq!(
        stopped["others"],
        Value::Array(vec![]),
        "no Tensix thread waits: {text}"
    );
    let cores = stopped["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 2, "one per running core: {text}");
    for (risc, stage, resource, at) in [
        ("BRISC", "reader", "CB 1 front (data)", "reader.c:6"),
        ("NCRISC", "writer", "CB 4 back (space)", "writer.c:6"),
    ] {
        let c = cores
            .iter()
            .find(|c| c["risc"] == risc)
            .unwrap_or_else(|| panic!("no {risc}: {text}"));
        assert_eq!(
            (c["tile"].as_str(), c["stage"].as_str()),
            (Some("1-1"), Some(stage))
        );
        let state = c["state"].as_str().unwrap();
        assert!(
            state.starts_with(&format!("chip 0 tile (1,1) {risc} at pc 0x"))
                && state.contains("polls L1 0x00030000"),
            "{state}"
        );
        assert!(c["pc"].as_str().unwrap().starts_with("0x"), "{text}");
        let waits = c["open_waits"].as_array().unwrap();
        assert_eq!(waits.len(), 1, "{risc}: {text}");
        let w = &waits[0];
        assert_eq!(
            (w["zone"].as_str(), w["resource"].as_str(), w["at"].as_str()),
            (Some("stuck-wait"), Some(resource), Some(at)),
            "{text}"
        );
        // Since when: the start the wait's guard holds (in registers here, from the DWARF).
        let stop = c["stopped_cycles"]
            .as_u64()
            .expect("the tile's clock at the stop");
        let since = w["since_cycles"]
            .as_u64()
            .unwrap_or_else(|| panic!("{text}"));
        let waited = w["waited_cycles"].as_u64().unwrap();
        assert!(since > 0 && since < stop, "{since} {stop}");
        assert_eq!(since + waited, stop);
        // The detector stops a deadlock within a few hundred thousand cycles of quiet.
        assert!(waited < 10_000_000, "{waited}");
        assert!(w["waited_ns"].as_f64().unwrap() > 0.0, "{text}");
    }
}
