//! The op report: `ops_perf_results_<timestamp>.csv`, one row per op, as tt-metal writes it
//! and `tt-perf-report` reads it.
//!
//! Each op (one program launch: a run id on a device) is joined from two sources:
//!
//! * the **op log** ([`crate::oplog`]): op code, type, attributes, tensors, host times,
//!   which kernels ran on which cores; signposts;
//! * the **device records**: the `*-FW` and `*-KERNEL` wrapper zones of every core that
//!   ran the op ([`crate::ops`]), placed on the host timeline by the [`Timebase`].
//!
//! The columns are tt-metal's current ("v2.1") header, with `DEVICE ARCH` and
//! `AVAILABLE WORKER CORE COUNT` ([`columns`]). Rows are in host start order with
//! signposts between them; `OP TO OP LATENCY [ns]` is an op's first KERNEL start minus
//! the previous op's last KERNEL end on the same device (0 for a device's first op).
//! Durations are host ns rounded to whole ns, as tt-metal prints them.
//!
//! Mismatches between the two sources never disappear silently (module `join`): an op without
//! wrapper zones, a core or RISC the op log names that recorded none, a device run the op
//! log does not name are [`Issue`]s; an op log that shares no op with the device run is an
//! [`Error`].

pub mod columns;
mod join;
mod sink;

#[cfg(test)]
mod tests;

use crate::atomic::write_atomic;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::oplog::{OpLog, OpRecord, Signpost};
use crate::readout::Readout;
use crate::resolve::Resolution;
use crate::timebase::Timebase;
use riscv_linker::Arch;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use crate::ops as device;
pub(crate) use crate::ops::DeviceTimes;
pub(crate) use sink::OpReportSink;

/// One op joined with its device times.
#[derive(Clone, Debug, PartialEq)]
pub struct OpRow {
    /// The op as the op log recorded it (name, attributes, tensors, host times).
    pub op: OpRecord,
    /// `None` when the device recorded no wrapper zones for this op (an issue says so).
    /// (Shared with the model's [`crate::ops::Ops`]: no copy of every core's times.)
    pub device: Option<Arc<DeviceTimes>>,
    /// This op's first KERNEL start minus the previous op's last KERNEL end on its device,
    /// in ns; 0 for the device's first op; `None` without device times.
    pub(crate) op_to_op_ns: Option<f64>,
    /// The same from this op's first BRISC/NCRISC KERNEL start.
    pub(crate) op_to_op_dm_ns: Option<f64>,
    /// `MATH FIDELITY`: the op's `math_fidelity` attribute.
    pub math_fidelity: Option<String>,
}

/// Rounds host ns the way the report prints them.
pub(crate) fn whole_ns(ns: f64) -> i64 {
    ns.round() as i64
}

impl OpRow {
    /// `DEVICE KERNEL DURATION [ns]` as written.
    pub fn kernel_duration_ns(&self) -> Option<i64> {
        Some(whole_ns(self.device.as_ref()?.kernel?.duration_ns()))
    }

    /// `DEVICE FW DURATION [ns]` as written.
    pub fn fw_duration_ns(&self) -> Option<i64> {
        Some(whole_ns(self.device.as_ref()?.fw?.duration_ns()))
    }

    /// `OP TO OP LATENCY [ns]` as written.
    pub fn op_to_op_latency_ns(&self) -> Option<i64> {
        self.op_to_op_ns.map(whole_ns)
    }
}

/// A row of the report.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportRow {
    /// An op with its device times.
    Op(Box<OpRow>),
    /// A signpost, written as a row of its own (`OP TYPE` `signpost`).
    Signpost(Signpost),
}

/// The op report of one readout.
#[derive(Clone, Debug, PartialEq)]
pub struct OpReport {
    /// The chip architecture of the run (the `DEVICE ARCH` column).
    pub arch: Arch,
    /// `AVAILABLE WORKER CORE COUNT`: worker tiles of the device.
    pub(crate) worker_cores: u32,
    /// Ops and signposts in host time order.
    pub rows: Vec<ReportRow>,
    /// Mismatches between the op log and the device records.
    pub issues: Vec<Issue>,
    /// Per (device, run): the mean per tile of the ns compute RISCs spent in typed waits at
    /// CB fronts and backs ([`crate::sink::analysis`]), the `DEVICE COMPUTE CB WAIT FRONT` and
    /// `RESERVE BACK` columns; filled by `OpReportSink`, empty for ops without typed waits.
    pub compute_cb_waits: std::collections::BTreeMap<(u32, u32), (f64, f64)>,
}

impl OpReport {
    /// The op rows, in order.
    pub fn ops(&self) -> impl Iterator<Item = &OpRow> {
        self.rows.iter().filter_map(|r| match r {
            ReportRow::Op(o) => Some(&**o),
            ReportRow::Signpost(_) => None,
        })
    }

    /// Writes the CSV to `path` atomically (never over one of `inputs`).
    pub fn write_file(&self, path: &Path, inputs: &Inputs) -> Result<()> {
        write_atomic(path, inputs, |w| columns::write(w, self))
    }

    /// Writes the CSV into `dir` under tt-metal's name for `now`; returns its path.
    /// Never over one of `inputs`.
    pub(crate) fn write_into(
        &self,
        dir: &Path,
        now: SystemTime,
        inputs: &Inputs,
    ) -> Result<std::path::PathBuf> {
        let path = dir.join(file_name(now));
        self.write_file(&path, inputs)?;
        Ok(path)
    }
}

/// Builds the op report of `readout` (its sites resolved by `sites`) with the ops of
/// `oplog`, placing device times on the host timeline with `timebase`.
///
/// Errors only when the op log cannot belong to this device run (no op in common); every
/// other mismatch is an issue in [`OpReport::issues`].
pub fn op_report(
    readout: &Readout,
    sites: &Resolution,
    oplog: &OpLog,
    timebase: &Timebase,
) -> Result<OpReport> {
    let ops = device::collect(readout, sites, timebase);
    let (rows, issues) = join::join(oplog, ops, device::runs(readout), join::damaged(readout))?;
    Ok(OpReport {
        arch: readout.geometry.arch,
        worker_cores: readout.geometry.tiles_per_chip,
        rows,
        issues,
        compute_cb_waits: Default::default(),
    })
}

/// The op report of a [`crate::profile::Profile`] (whose wrapper-zone times are computed
/// already) with the ops of `oplog`; errors as [`op_report`] does.
pub(crate) fn of_profile(p: &crate::profile::Profile, oplog: &OpLog) -> Result<OpReport> {
    let (rows, issues) = join::join(
        oplog,
        p.device_ops.clone(),
        p.runs.clone(),
        join::damaged(&p.readout),
    )?;
    let g = p.geometry();
    Ok(OpReport {
        arch: g.arch,
        worker_cores: g.tiles_per_chip,
        rows,
        issues,
        compute_cb_waits: Default::default(),
    })
}

/// `ops_perf_results_<YYYY_MM_DD_HH_MM_SS>.csv` for `now` (UTC), tt-metal's file name.
pub fn file_name(now: SystemTime) -> String {
    let secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "ops_perf_results_{y:04}_{m:02}_{d:02}_{:02}_{:02}_{:02}.csv",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Gregorian (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift to a calendar whose years start on March 1st, in 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + (month <= 2) as i64;
    (year, month, day)
}

/// An op log that shares nothing with the device run.
fn unrelated(oplog: &OpLog, what: String) -> Error {
    Error::BadFile {
        path: oplog.path.clone(),
        what,
    }
}
