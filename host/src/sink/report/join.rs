//! Joining the op log with the device's per-op times, and checking that they describe the
//! same run.

use super::{unrelated, OpRow, ReportRow};
use crate::error::Result;
use crate::issue::Issue;
use crate::oplog::{OpLog, OpLogEntry, OpRecord};
use crate::ops::{At, DeviceTimes, Ops};
use riscv_linker::NocCoord;
use std::collections::{BTreeMap, HashMap};

/// At most this many core/RISC pairs are named in one issue.
const EXAMPLES: usize = 6;

/// `runs`: every (chip, run) the readout holds records of, with the tiles that did.
pub(super) fn join(
    oplog: &OpLog,
    mut device: Ops,
    mut runs: BTreeMap<(u32, u32), Vec<NocCoord>>,
    damaged: bool,
) -> Result<(Vec<ReportRow>, Vec<Issue>)> {
    let mut issues = std::mem::take(&mut device.issues);
    if damaged && runs.is_empty() && oplog.ops().next().is_some() {
        // The rings' damage (named in the readout's issues) is the cause, not the op log:
        // the outputs hold what exists and the command exits 2.
        issues.push(Issue::error(
            None,
            format!(
                "op log {} names {} op(s), but no record of any launch survived the damage to the rings: the op \
                 report has no rows",
                oplog.path.display(),
                oplog.ops().count()
            ),
        ));
    } else {
        check_related(oplog, &runs)?;
    }
    let log = oplog.path.display();
    // (host time, log order) -> row
    let mut rows: Vec<(u64, usize, ReportRow)> = Vec::new();
    let mut first_entry: HashMap<(u32, u32), usize> = HashMap::new();
    for (n, entry) in oplog.entries.iter().enumerate() {
        match entry {
            OpLogEntry::Signpost(s) => rows.push((s.host_ns, n, ReportRow::Signpost(s.clone()))),
            OpLogEntry::Held(_) => {}
            OpLogEntry::Op(op) => {
                let repeated = first_entry.contains_key(&(op.device, op.run_id));
                if let Some(first) = first_entry.insert((op.device, op.run_id), n) {
                    issues.push(Issue::error(
                        None,
                        format!(
                            "op log {log}: entries {} and {} both claim run {} on device {}: the device times go to the \
                             first ({}), the second ({}) gets none",
                            first + 1,
                            n + 1,
                            op.run_id,
                            op.device,
                            op_code_of(oplog, first),
                            op.op_code
                        ),
                    ));
                    first_entry.insert((op.device, op.run_id), first);
                }
                let times = device.by_run.remove(&(op.device, op.run_id));
                let started = runs.remove(&(op.device, op.run_id));
                match (&times, started) {
                    (None, _) if repeated => {}
                    // Its cores marked the launch: it ran, and stopped before any wrapper zone
                    // closed (a fault, or a readout taken while it ran).
                    (None, Some(tiles)) => issues.push(Issue::error(
                        None,
                        format!(
                            "op {} (run {}, device {}) from op log {log}: it started on {} tile(s) (their launch markers \
                             are read) but no FW/KERNEL wrapper zone of it ended (stopped by a fault, or read before it \
                             finished): its device columns are empty",
                            op.op_code,
                            op.run_id,
                            op.device,
                            tiles.len()
                        ),
                    )),
                    (None, None) => issues.push(Issue::error(
                        None,
                        format!(
                            "op {} (run {}, device {}) from op log {log}: the device recorded no FW/KERNEL wrapper zones \
                             for it on any core (did it run? was the readout taken after it finished?): its device columns \
                             are empty",
                            op.op_code, op.run_id, op.device
                        ),
                    )),
                    (Some(t), _) => issues.extend(check_cores(op, t)),
                }
                rows.push((
                    op.host_start_ns,
                    n,
                    ReportRow::Op(Box::new(op_row(op, times, &mut issues))),
                ));
            }
        }
    }
    for ((chip, run), tiles) in &runs {
        issues.push(Issue::error(
            None,
            format!(
                "device {chip} ran run {run} (records on {} tile(s)) but op log {log} has no op with that run id on that \
                 device: the report has no row for it",
                tiles.len()
            ),
        ));
    }
    rows.sort_by_key(|(t, n, _)| (*t, *n));
    let mut rows: Vec<ReportRow> = rows.into_iter().map(|(_, _, r)| r).collect();
    set_op_to_op(&mut rows);
    Ok((rows, issues))
}

/// Whether the readout found damage (a corrupt ring, a control block it could not read),
/// or records at all (with no run among them: records before any Run record, as a capture
/// killed after consuming the Run record leaves them): then an op log that matches no surviving run is not
/// to blame.
pub(super) fn damaged(readout: &crate::readout::Readout) -> bool {
    readout
        .rings
        .iter()
        .any(|r| r.corrupt.is_some() || r.record_count() > 0)
        || readout.issues.iter().any(Issue::is_error)
}

fn op_code_of(oplog: &OpLog, entry: usize) -> &str {
    match &oplog.entries[entry] {
        OpLogEntry::Op(o) => &o.op_code,
        OpLogEntry::Signpost(s) => &s.name,
        OpLogEntry::Held(_) => "held",
    }
}

/// An op log that names ops, against a device that ran ops, with none in common, is the
/// wrong log (or the wrong device image): a hard error rather than a report of empty rows.
fn check_related(oplog: &OpLog, runs: &BTreeMap<(u32, u32), Vec<NocCoord>>) -> Result<()> {
    let logged: Vec<(u32, u32)> = oplog.ops().map(|o| (o.device, o.run_id)).collect();
    let ran: Vec<(u32, u32)> = runs.keys().copied().collect();
    if logged.iter().any(|k| runs.contains_key(k)) || (logged.is_empty() && ran.is_empty()) {
        return Ok(());
    }
    let list = |v: &[(u32, u32)]| {
        let mut s: Vec<String> = v
            .iter()
            .take(8)
            .map(|(d, r)| format!("run {r} on device {d}"))
            .collect();
        if v.len() > 8 {
            s.push(format!("... ({} in all)", v.len()));
        }
        s.join(", ")
    };
    Err(unrelated(
        oplog,
        if ran.is_empty() {
            format!(
                "names {} op(s) ({}), but the readout holds no records of any launch: nothing ran with profiling on, an \
                 in-process consumer already read and freed the rings, or the device memory is not from this run",
                logged.len(),
                list(&logged)
            )
        } else if logged.is_empty() {
            format!(
                "names no ops, but the device ran {}: the op log is not the one this run wrote",
                list(&ran)
            )
        } else {
            format!(
                "does not match the device run: it names {}, the device ran {}: is it the op log of this run?",
                list(&logged),
                list(&ran)
            )
        },
    ))
}

/// Core/RISC pairs the op names in its kernel bindings that recorded no FW or no KERNEL zone.
fn check_cores(op: &OpRecord, t: &DeviceTimes) -> Option<Issue> {
    let mut missing = Vec::new();
    let mut unknown_riscs = Vec::new();
    for k in &op.kernels {
        let Some(risc) = k.risc() else {
            unknown_riscs.push(k.risc.clone());
            continue;
        };
        let bit = 1u8 << risc.index();
        for c in &k.cores {
            let tile = riscv_linker::NocCoord::new(c[0], c[1]);
            let core = t.cores.get(&tile).copied().unwrap_or_default();
            let what = match (core.fw_riscs & bit != 0, core.kernel_riscs & bit != 0) {
                (true, true) => continue,
                (false, false) => format!("{} and {}", risc.fw_zone(), risc.kernel_zone()),
                (false, true) => risc.fw_zone().to_string(),
                (true, false) => risc.kernel_zone().to_string(),
            };
            missing.push((tile, risc, what));
        }
    }
    let mut text = Vec::new();
    if !missing.is_empty() {
        let examples: Vec<String> = missing
            .iter()
            .take(EXAMPLES)
            .map(|(tile, risc, what)| format!("{risc} on tile {tile} (no {what})"))
            .collect();
        let more = if missing.len() > EXAMPLES {
            format!(", and {} more", missing.len() - EXAMPLES)
        } else {
            String::new()
        };
        text.push(format!(
            "{} core/RISC pair(s) the op log names recorded no wrapper zones: {}{more} (kernel still running, or its records \
             dropped?): the op's times cover only the cores that did",
            missing.len(),
            examples.join(", ")
        ));
    }
    if !unknown_riscs.is_empty() {
        text.push(format!(
            "the op log names unknown RISC(s) {:?} (expected BRISC, NCRISC, TRISC_0..2)",
            unknown_riscs
        ));
    }
    (!text.is_empty()).then(|| {
        Issue::error(
            None,
            format!(
                "op {} (run {}, device {}): {}",
                op.op_code,
                op.run_id,
                op.device,
                text.join("; ")
            ),
        )
        .with_count(missing.len() as u64)
    })
}

/// The fidelity tt-perf-report's matmul analysis needs when the op log gives none.
const DEFAULT_MATMUL_FIDELITY: &str = "HiFi4";

fn op_row(
    op: &OpRecord,
    device: Option<std::sync::Arc<DeviceTimes>>,
    issues: &mut Vec<Issue>,
) -> OpRow {
    let attr = |k: &str| {
        op.attributes
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let mut math_fidelity = attr("math_fidelity").or_else(|| attr("MATH FIDELITY"));
    if math_fidelity.is_none() && op.op_code.contains("Matmul") {
        issues.push(Issue::warning(
            None,
            format!(
                "op {} (run {}, device {}) has no \"math_fidelity\" attribute; tt-perf-report's matmul analysis stops without \
                 MATH FIDELITY, so {DEFAULT_MATMUL_FIDELITY} was written (record the real one in the op's attributes)",
                op.op_code, op.run_id, op.device
            ),
        ));
        math_fidelity = Some(DEFAULT_MATMUL_FIDELITY.into());
    }
    OpRow {
        op: op.clone(),
        device,
        op_to_op_ns: None,
        op_to_op_dm_ns: None,
        math_fidelity,
    }
}

/// Sets each op's latency from the previous op with device times on the same device.
fn set_op_to_op(rows: &mut [ReportRow]) {
    // Exact differences of host times ([`At::since_ns`]), not of their `f64` ns.
    let mut prev_end: BTreeMap<u32, At> = BTreeMap::new();
    for row in rows.iter_mut() {
        let ReportRow::Op(o) = row else { continue };
        let Some(kernel) = o.device.as_ref().and_then(|d| d.kernel) else {
            continue;
        };
        let dm_start = o
            .device
            .as_ref()
            .and_then(|d| d.dm_kernel_start)
            .unwrap_or(kernel.start);
        match prev_end.get(&o.op.device) {
            Some(end) => {
                o.op_to_op_ns = Some(kernel.start.since_ns(end));
                o.op_to_op_dm_ns = Some(dm_start.since_ns(end));
            }
            None => {
                o.op_to_op_ns = Some(0.0);
                o.op_to_op_dm_ns = Some(0.0);
            }
        }
        prev_end.insert(o.op.device, kernel.end);
    }
}
