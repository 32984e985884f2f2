//! `ttprof diff`: two runs compared per op and zone name, and a performance gate for CI.
//!
//! Each side is a `ttprof run` directory (`device.snap` and `ops.jsonl`, loaded through
//! [`Profile::open`](crate::profile::Profile::open)), a directory or file holding tt-metal's
//! device log `profile_log_device.csv`, or a snapshot or device image; the `ops.jsonl`
//! beside it names its ops (`run <id>` otherwise).
//!
//! An op is its op code and its position among the ops of that code (the k-th
//! `BinaryNgDeviceOperation` of one run against the k-th of the other). For every (op, zone
//! name) both sides have, [`diff`] gives count, total, mean, p50 and p99 in cycles and ns
//! and their relative change; sum zones are rows of their own ([`RowKind::Sum`]). A side is
//! exact when it came from the deterministic emulator (`device.img`); otherwise a change is
//! real only when a Mann-Whitney U test reaches `CONFIDENCE` or the count changed, and a
//! row with too few samples for that says so ([`DiffRow::too_few_samples`]).
//! [`Diff::regressions`] is the gate (`ttprof diff --fail-above`, [`EXIT_REGRESSION`]).
//!
//! `samples.rs` reads each side into [`Samples`], `stats.rs` summarises one side,
//! `mann_whitney.rs` tests a noisy change, `render.rs` writes text and JSON.

use serde::Serialize;
use std::collections::BTreeSet;

/// The exit code of `ttprof diff --fail-above` when a zone regressed (0 clean, 1 unusable
/// input, 2 data problems or nothing to compare).
pub const EXIT_REGRESSION: u8 = 3;

/// The confidence at which a change between noisy runs counts as real.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// The file name of the emulator's device image in a `ttprof run` directory: its presence
/// marks the run as exact.
const EMULATOR_IMAGE: &str = "device.img";
const SNAPSHOT: &str = "device.snap";
const OPLOG: &str = "ops.jsonl";
const DEVICE_CSV: &str = "profile_log_device.csv";

mod mann_whitney;
mod render;
mod samples;
mod stats;

pub(crate) use mann_whitney::{can_reach_confidence, mann_whitney};
pub use render::{regression_message, render, to_json};
pub use samples::{
    from_device_csv, from_profile, from_profile_rings, load, Durations, Key, Sample, Samples,
    SumSample, KEPT,
};
use stats::sum_means;
pub(crate) use stats::SideStats;

/// What a row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// Zones: one sample per zone.
    Zone,
    /// A sum zone (`sum_zone!`): one sample per record (core and launch).
    Sum,
}

/// One (op, zone) on both sides.
#[derive(Clone, Debug, Serialize)]
pub struct DiffRow {
    /// The op as shown: its code, with `#k` when the code occurs more than once in either
    /// run (see the module docs).
    pub op: String,
    /// The op code.
    pub op_code: String,
    /// The op's position among the ops of its code in the program, from 1.
    pub position: u32,
    /// The zone name.
    pub zone: String,
    /// A zone or a sum zone.
    pub kind: RowKind,
    /// The base run's figures.
    pub base: SideStats,
    /// The new run's figures.
    pub new: SideStats,
    /// Relative change of the total cycles, in percent (new / base - 1).
    pub(crate) total_change_pct: f64,
    /// Relative change of the mean cycles, in percent.
    pub mean_change_pct: f64,
    /// For noisy runs: the confidence (1 - p) of a two-sided Mann-Whitney U test that the
    /// samples differ. `None` for exact runs (any change is real).
    pub confidence: Option<f64>,
    /// Whether the change counts as real: exact runs and any change, or noisy runs at
    /// `CONFIDENCE` or more, or a changed count.
    pub real: bool,
    /// Noisy runs: the figures changed, but with so few samples per side that the test can
    /// never reach `CONFIDENCE` (`can_reach_confidence`): neither real nor noise.
    pub too_few_samples: bool,
}

impl DiffRow {
    /// The larger of the total's and the mean's change.
    pub fn growth_pct(&self) -> f64 {
        self.total_change_pct.max(self.mean_change_pct)
    }

    /// The zone as shown: its name, `NAME (sum)` for a sum zone.
    pub fn zone_label(&self) -> String {
        zone_label(&self.zone, self.kind)
    }
}

fn zone_label(zone: &str, kind: RowKind) -> String {
    match kind {
        RowKind::Zone => zone.to_string(),
        RowKind::Sum => format!("{zone} (sum)"),
    }
}

/// A zone only one side has.
#[derive(Clone, Debug, Serialize)]
pub struct OneSided {
    /// The op as shown.
    pub op: String,
    /// The zone name.
    pub zone: String,
    /// A zone or a sum zone.
    pub kind: RowKind,
    /// Its figures.
    pub stats: SideStats,
}

/// Two runs compared.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// What the base run is (path).
    pub base: String,
    /// What the new run is (path).
    pub new: String,
    /// Both sides exact (emulator runs).
    pub exact: bool,
    /// Rows both sides have, largest change first.
    pub rows: Vec<DiffRow>,
    /// Zones only the base has.
    pub removed: Vec<OneSided>,
    /// Zones only the new run has.
    pub added: Vec<OneSided>,
    /// Problems reading either side.
    pub problems: Vec<String>,
    /// The ops of each side as shown (base, new), in order: what [`Diff::nothing_matched`]
    /// names.
    pub ops: (Vec<String>, Vec<String>),
}

fn pct(new: f64, base: f64) -> f64 {
    if base == 0.0 {
        if new == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (new / base - 1.0) * 100.0
    }
}

/// The op label of `(code, position)`: the code when it occurs once on both sides.
fn op_label(code: &str, position: u32, many: &BTreeSet<&str>) -> String {
    if many.contains(code) {
        format!("{code} #{position}")
    } else {
        code.to_string()
    }
}

/// Compares `new` against `base`.
pub fn diff(base: &Samples, new: &Samples) -> Diff {
    let exact = base.exact && new.exact;
    // Op codes at a position above 1 on either side are shown with their position.
    let keys = || {
        base.zones
            .keys()
            .chain(base.sums.keys())
            .chain(new.zones.keys())
            .chain(new.sums.keys())
    };
    let many: BTreeSet<&str> = keys().filter(|k| k.1 > 1).map(|k| k.0.as_str()).collect();
    let label = |k: &Key| op_label(&k.0, k.1, &many);
    let mut rows = Vec::new();
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let mut compare = |kind: RowKind,
                       b: Option<(&Key, SideStats, Vec<f64>)>,
                       n: Option<(&Key, SideStats, Vec<f64>)>| match (b, n) {
        (Some((k, bs, _)), None) => removed.push(OneSided {
            op: label(k),
            zone: k.2.clone(),
            kind,
            stats: bs,
        }),
        (None, Some((k, ns, _))) => added.push(OneSided {
            op: label(k),
            zone: k.2.clone(),
            kind,
            stats: ns,
        }),
        (Some((k, bs, bx)), Some((_, ns, nx))) => {
            let total_change_pct = pct(ns.total_cycles as f64, bs.total_cycles as f64);
            let mean_change_pct = pct(ns.mean_cycles, bs.mean_cycles);
            let changed = total_change_pct != 0.0 || mean_change_pct != 0.0;
            let (confidence, real, too_few_samples) = if exact {
                (None, changed, false)
            } else {
                let c = mann_whitney(&bx, &nx).map_or(0.0, |p| 1.0 - p);
                // A count change is real whatever the durations do: the zones ran a
                // different number of times.
                let real = changed && (c >= CONFIDENCE || bs.count != ns.count);
                (
                    Some(c),
                    real,
                    changed && !real && !can_reach_confidence(bx.len(), nx.len()),
                )
            };
            rows.push(DiffRow {
                op: label(k),
                op_code: k.0.clone(),
                position: k.1,
                zone: k.2.clone(),
                kind,
                base: bs,
                new: ns,
                total_change_pct,
                mean_change_pct,
                confidence,
                real,
                too_few_samples,
            });
        }
        (None, None) => {}
    };
    let zone_side = |s: &Samples, k: &Key| {
        s.zones
            .get(k)
            .map(|v| (SideStats::of_durations(v), cycles(v.kept())))
    };
    let sum_side = |s: &Samples, k: &Key| {
        s.sums
            .get(k)
            .map(|v| (SideStats::of_sums(v), sum_means(v).collect()))
    };
    let zone_keys: BTreeSet<&Key> = base.zones.keys().chain(new.zones.keys()).collect();
    for k in zone_keys {
        let b = zone_side(base, k).map(|(s, x)| (k, s, x));
        let n = zone_side(new, k).map(|(s, x)| (k, s, x));
        compare(RowKind::Zone, b, n);
    }
    let sum_keys: BTreeSet<&Key> = base.sums.keys().chain(new.sums.keys()).collect();
    for k in sum_keys {
        let b = sum_side(base, k).map(|(s, x)| (k, s, x));
        let n = sum_side(new, k).map(|(s, x)| (k, s, x));
        compare(RowKind::Sum, b, n);
    }
    let size = |r: &DiffRow| r.total_change_pct.abs().max(r.mean_change_pct.abs());
    rows.sort_by(|a, b| {
        size(b).total_cmp(&size(a)).then_with(|| {
            (&a.op_code, a.position, &a.zone, a.kind)
                .cmp(&(&b.op_code, b.position, &b.zone, b.kind))
        })
    });
    let mut problems: Vec<String> = base.problems.iter().map(|p| format!("base: {p}")).collect();
    problems.extend(new.problems.iter().map(|p| format!("new: {p}")));
    let ops_of = |s: &Samples| -> Vec<String> {
        let set: BTreeSet<(&str, u32)> = s
            .zones
            .keys()
            .chain(s.sums.keys())
            .map(|k| (k.0.as_str(), k.1))
            .collect();
        set.into_iter()
            .map(|(c, p)| op_label(c, p, &many))
            .collect()
    };
    let ops = (ops_of(base), ops_of(new));
    Diff {
        base: base.source.clone(),
        new: new.source.clone(),
        exact,
        rows,
        removed,
        added,
        problems,
        ops,
    }
}

fn cycles(s: &[Sample]) -> Vec<f64> {
    s.iter().map(|s| s.cycles as f64).collect()
}

/// What the gate does with a row that has too few samples to judge ([`DiffRow::too_few_samples`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FewSamples {
    /// It never fails the gate (it is listed, and warned about when it grew above the
    /// limit). The default.
    #[default]
    Pass,
    /// It fails the gate when it grew above the limit, as a real change would.
    Fail,
}

impl Diff {
    /// Rows whose total or mean grew by more than `pct` percent with a real change, and,
    /// under [`FewSamples::Fail`], with too few samples to tell.
    pub fn regressions(&self, pct: f64, few: FewSamples) -> Vec<&DiffRow> {
        self.rows
            .iter()
            .filter(|r| {
                (r.real || (r.too_few_samples && few == FewSamples::Fail)) && r.growth_pct() > pct
            })
            .collect()
    }

    /// Rows with too few samples to tell whose total or mean grew by more than `pct` percent.
    pub fn unjudged_growth(&self, pct: f64) -> Vec<&DiffRow> {
        self.rows
            .iter()
            .filter(|r| r.too_few_samples && r.growth_pct() > pct)
            .collect()
    }

    /// Whether nothing changed at all.
    pub fn unchanged(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.rows.iter().all(|r| !r.real && !r.too_few_samples)
    }

    /// When the two runs have zones but no (op, zone) in common: why nothing was compared.
    pub fn nothing_matched(&self) -> Option<String> {
        if !self.rows.is_empty() || (self.added.is_empty() && self.removed.is_empty()) {
            return None;
        }
        let list = |ops: &[String]| -> String {
            match ops.len() {
                0 => "none".to_string(),
                n if n > 6 => format!("{}, ... ({n} ops)", ops[..6].join(", ")),
                _ => ops.join(", "),
            }
        };
        let unnamed = |ops: &[String]| !ops.is_empty() && ops.iter().all(|o| o.starts_with("run "));
        let hint = if unnamed(&self.ops.0) != unnamed(&self.ops.1) {
            format!(
                "; the {} run's ops are unnamed (`run <id>`): put its op log ({OPLOG}) beside its {DEVICE_CSV}",
                if unnamed(&self.ops.0) { "base" } else { "new" }
            )
        } else {
            String::new()
        };
        Some(format!(
            "nothing to compare: no op and zone is in both runs ({} zone row(s) only in base, {} only in new; base ops: \
             {}; new ops: {}){hint}",
            self.removed.len(),
            self.added.len(),
            list(&self.ops.0),
            list(&self.ops.1)
        ))
    }
}

#[cfg(test)]
mod tests;
