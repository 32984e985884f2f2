use super::*;
use crate::model::fixture::{self, times, TILES};
use crate::oplog::{OpLogEntry, Signpost};
use riscv_linker::Risc;
use std::time::{Duration, UNIX_EPOCH};

fn report_of(oplog: &OpLog) -> Result<OpReport> {
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    op_report(&r, &res, oplog, &Timebase::nominal(fixture::ARCH, 1))
}

/// The fixture's kernel span of `run` in ns (1 GHz: one ns per cycle).
fn kernel_span(run: u32) -> (u64, u64) {
    (
        times(run, 0, Risc::Brisc).kernel.0,
        times(run, 1, Risc::Trisc2).kernel.1,
    )
}

/// A minimal RFC 4180 reader (quoted cells, doubled quotes), enough to read back what the
/// writer writes.
pub(crate) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut cells = Vec::new();
        let mut cell = String::new();
        let (mut quoted, mut chars) = (false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', false) if cell.is_empty() => quoted = true,
                ('"', true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                ('"', true) => quoted = false,
                (',', false) => cells.push(std::mem::take(&mut cell)),
                (c, _) => cell.push(c),
            }
        }
        cells.push(cell);
        rows.push(cells);
    }
    rows
}

#[test]
fn rows_join_ops_and_signposts_in_host_order_with_tt_metal_durations() {
    let rep = report_of(&fixture::oplog()).unwrap();
    assert!(rep.issues.is_empty(), "{:?}", rep.issues);
    let kinds: Vec<String> = rep
        .rows
        .iter()
        .map(|r| match r {
            ReportRow::Op(o) => o.op.op_code.clone(),
            ReportRow::Signpost(s) => format!("signpost {}", s.name),
        })
        .collect();
    assert_eq!(
        kinds,
        ["EltwiseAdd", "signpost warmup-done", "Matmul", "Relu"]
    );
    let ops: Vec<&OpRow> = rep.ops().collect();
    for (o, (run, _)) in ops.iter().zip(fixture::OPS) {
        let (s, e) = kernel_span(run);
        assert_eq!(o.kernel_duration_ns(), Some((e - s) as i64));
        let fw = (times(run, 1, Risc::Trisc2).fw.1 - times(run, 0, Risc::Brisc).fw.0) as i64;
        assert_eq!(o.fw_duration_ns(), Some(fw));
    }
    assert_eq!(ops[0].op_to_op_latency_ns(), Some(0), "a device's first op");
    assert_eq!(
        ops[1].op_to_op_latency_ns(),
        Some((kernel_span(2).0 - kernel_span(1).1) as i64)
    );
    assert_eq!(
        ops[2].op_to_op_latency_ns(),
        Some((kernel_span(3).0 - kernel_span(2).1) as i64)
    );
    assert_eq!(ops[1].math_fidelity.as_deref(), Some("HiFi2"));
    assert_eq!((rep.arch, rep.worker_cores), (fixture::ARCH, 2));
}

#[test]
fn the_csv_has_tt_metal_s_v2_1_columns_and_values() {
    let rep = report_of(&fixture::oplog()).unwrap();
    let mut out = Vec::new();
    columns::write(&mut out, &rep).unwrap();
    let rows = parse_csv(std::str::from_utf8(&out).unwrap());
    let header = &rows[0];
    assert_eq!(
        &header[..4],
        ["OP CODE", "OP TYPE", "GLOBAL CALL COUNT", "DEVICE ID"]
    );
    assert!(
        rows.iter().all(|r| r.len() == header.len()),
        "every row has every column"
    );
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    // Two inputs at most (binary ops), one output; tensor columns sit between HEAD and TAIL.
    assert_eq!(
        header[col("DISPATCH GO SEND WAIT TIME [ns]") + 1],
        "INPUT_0_W_PAD[LOGICAL]"
    );
    assert_eq!(header[col("INPUT_1_MEMORY") + 1], "OUTPUT_0_W_PAD[LOGICAL]");
    assert_eq!(header[col("OUTPUT_0_MEMORY") + 1], "METAL TRACE ID");
    assert_eq!(rows.len(), 5);
    let signpost = &rows[2];
    assert_eq!(
        (&*signpost[col("OP CODE")], &*signpost[col("OP TYPE")]),
        ("warmup-done", "signpost")
    );
    assert_eq!(signpost[col("HOST START TS")], "1500000");
    let mm = &rows[3];
    let cell = |name: &str| mm[col(name)].as_str();
    assert_eq!(cell("OP CODE"), "Matmul");
    assert_eq!(cell("OP TYPE"), "tt_dnn_device");
    assert_eq!(cell("GLOBAL CALL COUNT"), "2");
    assert_eq!(cell("DEVICE ARCH"), "wormhole_b0");
    assert_eq!(cell("AVAILABLE WORKER CORE COUNT"), "2");
    assert_eq!(cell("CORE COUNT"), "2");
    assert_eq!(cell("MATH FIDELITY"), "HiFi2");
    assert_eq!(
        cell("ATTRIBUTES"),
        r#"{"math_fidelity":"HiFi2";"note":"a; b";"tiles_per_core":4}"#,
        "`,` becomes `;`"
    );
    assert_eq!(cell("HOST START TS"), "1950000");
    assert_eq!(cell("HOST DURATION [ns]"), "350000");
    let first = times(2, 0, Risc::Brisc);
    let last = times(2, 1, Risc::Trisc2);
    assert_eq!(cell("DEVICE FW START CYCLE"), first.fw.0.to_string());
    assert_eq!(cell("DEVICE FW END CYCLE"), last.fw.1.to_string());
    assert_eq!(
        cell("DEVICE KERNEL DURATION [ns]"),
        (last.kernel.1 - first.kernel.0).to_string()
    );
    let core = |t: usize| times(2, t, Risc::Trisc2).kernel.1 - times(2, t, Risc::Brisc).kernel.0;
    assert_eq!(
        cell("DEVICE KERNEL DURATION PER CORE MIN [ns]"),
        core(0).to_string()
    );
    assert_eq!(
        cell("DEVICE KERNEL DURATION PER CORE MAX [ns]"),
        core(1).to_string()
    );
    assert_eq!(
        cell("DEVICE KERNEL DURATION PER CORE AVG [ns]"),
        ((core(0) + core(1)) / 2).to_string()
    );
    assert_eq!(
        cell("DEVICE KERNEL FIRST TO LAST START [ns]"),
        (last.kernel.0 - first.kernel.0).to_string()
    );
    assert_eq!(
        cell("DEVICE KERNEL DURATION DM START [ns]"),
        (last.kernel.1 - first.kernel.0).to_string()
    );
    for risc in Risc::ALL {
        let span = times(2, 1, risc).kernel.1 - times(2, 0, risc).kernel.0;
        assert_eq!(
            mm[col(&format!(
                "DEVICE {} KERNEL DURATION [ns]",
                risc.name().replace('_', "")
            ))],
            span.to_string()
        );
    }
    assert_eq!(
        cell("DEVICE ERISC KERNEL DURATION [ns]"),
        "",
        "nothing ttprof measures stays empty"
    );
    assert_eq!(
        cell("OP TO OP LATENCY [ns]"),
        (kernel_span(2).0 - kernel_span(1).1).to_string()
    );
    assert_eq!(
        [
            cell("INPUT_1_W_PAD[LOGICAL]"),
            cell("INPUT_1_Y_PAD[LOGICAL]"),
            cell("INPUT_1_LAYOUT"),
            cell("INPUT_1_DATATYPE"),
            cell("INPUT_1_MEMORY")
        ],
        ["1", "64", "TILE", "BFLOAT16", "DEV_0_DRAM_INTERLEAVED"]
    );
    assert_eq!(
        cell("COMPUTE KERNEL SOURCE"),
        "['kernels/trisc0'; 'kernels/trisc1'; 'kernels/trisc2']"
    );
    assert_eq!(rows[4][col("INPUT_1_MEMORY")], "", "Relu has one input");
}

fn issues_of(oplog: &OpLog) -> Vec<String> {
    report_of(oplog)
        .unwrap()
        .issues
        .iter()
        .map(|i| i.to_string())
        .collect()
}

#[test]
fn an_op_log_that_does_not_match_the_device_run_is_named_in_issues_or_refused() {
    // An op the device never ran, and a run the op log does not name.
    let mut log = fixture::oplog();
    log.entries
        .retain(|e| !matches!(e, OpLogEntry::Op(o) if o.run_id == 3));
    log.entries.push(OpLogEntry::Op(fixture::op(9, "Ghost")));
    let issues = issues_of(&log);
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert!(
        issues[0].contains("op Ghost (run 9, device 0) from op log /fixture/ops.jsonl")
            && issues[0].contains("no FW/KERNEL"),
        "{}",
        issues[0]
    );
    assert!(
        issues[1].contains("device 0 ran run 3") && issues[1].contains("no row"),
        "{}",
        issues[1]
    );
    let rep = report_of(&log).unwrap();
    let ghost = rep.ops().find(|o| o.op.run_id == 9).unwrap();
    assert_eq!((ghost.device.as_ref(), ghost.op_to_op_ns), (None, None));

    // Two entries for one run.
    let mut log = fixture::oplog();
    log.entries.push(OpLogEntry::Op(fixture::op(2, "Again")));
    let issues = issues_of(&log);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(
        issues[0].contains("entries 3 and 5 both claim run 2 on device 0"),
        "{issues:?}"
    );

    // Nothing in common: the wrong log.
    let mut log = fixture::oplog();
    log.entries = vec![
        OpLogEntry::Op(fixture::op(7, "A")),
        OpLogEntry::Op(fixture::op(8, "B")),
    ];
    let e = report_of(&log).unwrap_err().to_string();
    assert!(
        e.starts_with("/fixture/ops.jsonl: does not match the device run"),
        "{e}"
    );
    assert!(
        e.contains("run 7 on device 0, run 8 on device 0")
            && e.contains("the device ran run 1 on device 0"),
        "{e}"
    );

    // A log of signposts only.
    let mut log = fixture::oplog();
    log.entries = vec![OpLogEntry::Signpost(Signpost {
        name: "s".into(),
        device: 0,
        host_ns: 0,
    })];
    assert!(report_of(&log)
        .unwrap_err()
        .to_string()
        .contains("names no ops"));
}

#[test]
fn missing_wrapper_zones_are_named_by_core_and_risc() {
    let mut r = fixture::readout();
    // TRISC_1 on the second tile lost its KERNEL zones; NCRISC on the first lost everything.
    for ring in &mut r.rings {
        let id = ring.id;
        let rec = &mut ring.records;
        let keep: Vec<bool> = (0..rec.len())
            .map(|i| {
                match (
                    id.tile == TILES[1] && id.risc == Risc::Trisc1,
                    id.tile == TILES[0] && id.risc == Risc::Ncrisc,
                ) {
                    (true, _) => rec.site[i] != fixture::site::TRISC_KERNEL,
                    (_, true) => !matches!(
                        rec.site[i],
                        fixture::site::NCRISC_FW | fixture::site::NCRISC_KERNEL
                    ),
                    _ => true,
                }
            })
            .collect();
        let mut kept = crate::decode::Records::new();
        for (i, k) in keep.iter().enumerate() {
            if *k {
                kept.push(
                    rec.kind[i],
                    rec.site[i],
                    rec.start_at(i),
                    rec.end_at(i),
                    rec.value_at(i),
                    rec.count_at(i),
                    rec.run_at(i),
                );
            }
        }
        *rec = kept;
    }
    let res = fixture::resolution(&r);
    let rep = op_report(
        &r,
        &res,
        &fixture::oplog(),
        &Timebase::nominal(fixture::ARCH, 1),
    )
    .unwrap();
    assert_eq!(rep.issues.len(), 3, "one per op: {:?}", rep.issues);
    let text = rep.issues[0].to_string();
    assert!(
        text.starts_with("error: op EltwiseAdd (run 1, device 0): 2 core/RISC pair(s)"),
        "{text}"
    );
    assert!(
        text.contains("NCRISC on tile (1,1) (no NCRISC-FW and NCRISC-KERNEL)"),
        "{text}"
    );
    assert!(
        text.contains("TRISC_1 on tile (2,1) (no TRISC-KERNEL)"),
        "{text}"
    );
    assert_eq!(rep.issues[0].count, 2);
    // The op is still reported from the cores that recorded their zones.
    let op = rep.ops().next().unwrap();
    assert_eq!(op.device.as_ref().unwrap().core_count(), 2);
}

#[test]
fn a_matmul_without_fidelity_gets_one_with_a_warning() {
    let mut log = fixture::oplog();
    for e in &mut log.entries {
        if let OpLogEntry::Op(o) = e {
            o.attributes.remove("math_fidelity");
        }
    }
    let rep = report_of(&log).unwrap();
    assert_eq!(rep.issues.len(), 1);
    assert!(
        !rep.issues[0].is_error()
            && rep.issues[0]
                .what
                .contains("no \"math_fidelity\" attribute"),
        "{}",
        rep.issues[0]
    );
    let fidelities: Vec<Option<&str>> = rep.ops().map(|o| o.math_fidelity.as_deref()).collect();
    assert_eq!(fidelities, [None, Some("HiFi4"), None]);
}

#[test]
fn file_names_carry_a_utc_timestamp_like_tt_metal_s() {
    let at = |s: u64| file_name(UNIX_EPOCH + Duration::from_secs(s));
    assert_eq!(at(0), "ops_perf_results_1970_01_01_00_00_00.csv");
    assert_eq!(
        at(1_700_000_000),
        "ops_perf_results_2023_11_14_22_13_20.csv"
    );
    assert_eq!(
        at(951_782_400 + 86_399),
        "ops_perf_results_2000_02_29_23_59_59.csv"
    );
    assert_eq!(
        at(4_107_542_400),
        "ops_perf_results_2100_03_01_00_00_00.csv"
    );
}

#[test]
fn write_file_is_atomic_and_names_the_path_it_cannot_write() {
    let rep = report_of(&fixture::oplog()).unwrap();
    let dir = crate::testing::temp_dir("op-report");
    let path = rep
        .write_into(&dir, UNIX_EPOCH, &crate::inputs::Inputs::none())
        .unwrap();
    assert_eq!(
        path.file_name().unwrap(),
        "ops_perf_results_1970_01_01_00_00_00.csv"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary file left"
    );
    let e = rep
        .write_file(
            &dir.join("no-such-dir/x.csv"),
            &crate::inputs::Inputs::none(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("no-such-dir/x.csv"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `tt-perf-report` with `args`; `None` (with a message) when it is not installed.
fn tt_perf_report(args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    match std::process::Command::new("tt-perf-report")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
    {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED: tt-perf-report is not installed (pip install tt-perf-report): cannot check the op report with it");
            None
        }
        Err(e) => panic!("cannot run tt-perf-report: {e}"),
    }
}

/// `1234567.8` -> `1,234,568`, as Python's `{:,.0f}` prints it.
fn thousands(x: f64) -> String {
    let s = format!("{x:.0}");
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// The check the issue asks for: tt-perf-report reads the report, exits 0, and the device
/// times and op-to-op gaps it prints are the ones ttprof computed.
pub(crate) fn check_with_tt_perf_report(rep: &OpReport, dir: &std::path::Path) {
    let csv = dir.join(file_name(UNIX_EPOCH));
    rep.write_file(&csv, &crate::inputs::Inputs::none())
        .unwrap();
    let out_csv = dir.join("perf-report.csv");
    let Some(out) = tt_perf_report(&[
        csv.as_os_str(),
        "--ignore-signposts".as_ref(),
        "--csv".as_ref(),
        out_csv.as_os_str(),
    ]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tt-perf-report failed on {}:\n{stdout}\n{}",
        csv.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Detected CSV format: v2.1"), "{stdout}");
    // Its CSV holds the raw values: Device Time and Op-to-Op Gap in microseconds.
    let rows = parse_csv(&std::fs::read_to_string(&out_csv).unwrap());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    let (calls, time, gap) = (
        col("Global Call Count"),
        col("Device Time"),
        col("Op-to-Op Gap"),
    );
    let mut checked = 0;
    for (k, ours) in rep.ops().enumerate() {
        let theirs = rows[1..]
            .iter()
            .find(|r| r[calls].parse::<f64>().ok() == Some(ours.op.run_id as f64))
            .unwrap_or_else(|| {
                panic!(
                    "tt-perf-report lost op {} (run {})",
                    ours.op.op_code, ours.op.run_id
                )
            });
        let us = |ns: i64| ns as f64 / 1000.0;
        assert_eq!(
            theirs[time].parse::<f64>().ok(),
            ours.kernel_duration_ns().map(us),
            "device time of {}",
            ours.op.op_code
        );
        if k > 0 {
            assert_eq!(
                theirs[gap].parse::<f64>().ok(),
                ours.op_to_op_latency_ns().map(us),
                "op-to-op gap of {}",
                ours.op.op_code
            );
        }
        checked += 1;
    }
    assert!(checked > 0);
    // The terminal table: each op's device time, in whole microseconds.
    let Some(out) = tt_perf_report(&[
        csv.as_os_str(),
        "--ignore-signposts".as_ref(),
        "--no-advice".as_ref(),
        "--no-summary".as_ref(),
    ]) else {
        return;
    };
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    for ours in rep.ops() {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == ours.op.op_code))
            .unwrap_or_else(|| panic!("no table row for {} in\n{table}", ours.op.op_code));
        let printed: Vec<&str> = line
            .split(" μs")
            .map(|s| s.rsplit(' ').next().unwrap())
            .collect();
        let want = thousands(ours.kernel_duration_ns().unwrap() as f64 / 1000.0);
        assert_eq!(
            printed[0], want,
            "printed device time of {} in {line:?}",
            ours.op.op_code
        );
    }
}

#[test]
fn tt_perf_report_reads_the_report_and_prints_ttprof_s_durations() {
    let dir = crate::testing::temp_dir("tt-perf-report");
    let rep = report_of(&fixture::oplog()).unwrap();
    check_with_tt_perf_report(&rep, &dir);
    // By default it analyses the ops after the last signpost: the signpost row is read as one.
    let csv = dir.join(file_name(UNIX_EPOCH));
    if let Some(out) = tt_perf_report(&[
        csv.as_os_str(),
        "--no-advice".as_ref(),
        "--no-summary".as_ref(),
    ]) {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("Using last signpost: warmup-done"),
            "{text}"
        );
        assert!(
            !text.contains("EltwiseAdd") && text.contains("Relu"),
            "{text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41 (Medium): `DEVICE KERNEL FIRST TO LAST START`, `DEVICE KERNEL DURATION DM START`
/// and the `OP TO OP LATENCY` columns were differences of two `f64` host times, a ns or more
/// off from 2^53 ns on (at 2^62 cycles by up to a thousand): on a chip up for months every
/// device column but the cycle counts must read as it does near cycle 0, and the cycle
/// counts exactly.
#[test]
fn device_columns_stay_exact_at_large_cycle_counts() {
    for arch in [
        riscv_linker::Arch::WormholeB0,
        riscv_linker::Arch::Blackhole,
    ] {
        let csv = |offset: u64| {
            let r = fixture::readout_at(offset);
            let res = fixture::resolution(&r);
            let tb = Timebase::nominal(arch, 1);
            let rep = op_report(&r, &res, &fixture::oplog(), &tb).unwrap();
            let mut out = Vec::new();
            columns::write(&mut out, &rep).unwrap();
            parse_csv(std::str::from_utf8(&out).unwrap())
        };
        let base = csv(0);
        let col = |name: &str| base[0].iter().position(|h| h == name).unwrap();
        let cycles = [col("DEVICE FW START CYCLE"), col("DEVICE FW END CYCLE")];
        assert_ne!(base[3][col("OP TO OP LATENCY [ns]")], "");
        for offset in [(1u64 << 53) + 3, (1 << 62) + 7, u64::MAX - (1 << 30)] {
            let rows = csv(offset);
            assert_eq!(rows.len(), base.len());
            for (row, want) in rows.iter().zip(&base).skip(1) {
                for (i, (cell, want)) in row.iter().zip(want).enumerate() {
                    let want = match want.parse::<u64>() {
                        Ok(c) if cycles.contains(&i) => (c + offset).to_string(),
                        _ => want.clone(),
                    };
                    assert_eq!(cell, &want, "{arch:?} at {offset}: {}", base[0][i]);
                }
            }
        }
    }
}
