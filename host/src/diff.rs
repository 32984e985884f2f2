//! `ttprof diff`: two runs compared per op and zone name, and a performance gate for CI.
//!
//! Each side is the output of `ttprof run` or `ttprof report`, or a device file:
//!
//! - a directory holding `device.snap` and `ops.jsonl` (what `ttprof run` writes) is loaded
//!   through the normal load path ([`Profile::open`]), so zones are named and timed exactly as
//!   every other output names and times them;
//! - any other directory must hold `profile_log_device.csv` (tt-metal's device log, as
//!   `ttprof report` and tt-metal's own profiler write it): zones are its `ZONE_START` /
//!   `ZONE_END` pairs per RISC, sum zones its `ZONE_TOTAL` rows, ns are cycles over its
//!   `CHIP_FREQ[MHz]`, ops are named by the directory's `ops.jsonl` when there is one, else
//!   `run <id>`;
//! - a device log file itself (`profile_log_device.csv` under any name: its first line starts
//!   `ARCH:`) is read the same way, named by the `ops.jsonl` beside it when there is one;
//! - any other file (snapshot or device image) is loaded through [`Profile::open`], named by
//!   the `ops.jsonl` beside it when there is one.
//!
//! # What is matched
//!
//! An op is its op code **and its position among the ops of that code** in the program
//! (the op log's order): the k-th `BinaryNgDeviceOperation` of the base run is compared with
//! the k-th of the new run, so two distinct ops that share an op code (ttnn's add and
//! multiply) are never merged, and repeated launches of one op are compared launch by
//! launch. An op code that occurs once in both runs is shown as itself, otherwise as
//! `CODE #k`. Runs the op log does not name are `run <id>`.
//!
//! For every (op, zone name) both sides have, [`diff`] gives count, total, mean, p50 and p99
//! in cycles and ns, and the relative change of total and mean; rows are sorted by the
//! largest change first. Sum zones (`sum_zone!`) are compared too, as rows of their own
//! ([`RowKind::Sum`]): count is their measurements, total their summed cycles, mean the
//! cycles per measurement, and their samples (percentiles, the test below) are each
//! record's cycles per measurement (one record per core and launch). Zones one side lacks are
//! listed apart (they never fail the gate). When the two runs have no (op, zone) in common,
//! nothing was compared: [`Diff::nothing_matched`] says why, and `ttprof diff` exits 2.
//!
//! Cycle totals are summed in 128 bits (exact: they never wrap); in the JSON a total above
//! 2^64 - 1 is written as a string of its digits, since JSON readers round such numbers.
//!
//! # Exact or noisy
//!
//! The bundled emulator is deterministic: the same kernels on the same inputs give the same
//! cycle counts, so any change between two emulator runs is real. A side is **exact** when it
//! came from the emulator: its directory holds the emulator's device image `device.img`
//! (written by `ttprof run` and nothing else), or the file given is such an image or lies
//! beside one. Anything
//! else (a snapshot or device log without `device.img`: a card's recording, tt-metal's
//! output) is **noisy**: a row's change then carries the confidence of a two-sided
//! Mann-Whitney U test over the two sides' samples ([`mann_whitney`]), and it
//! counts as real only at [`CONFIDENCE`] or more, or when the count changed. Both sides must
//! be exact for the comparison to be exact.
//!
//! **Too few samples.** With few samples per side the test cannot reach [`CONFIDENCE`] at
//! all, however large the change: 3 against 3 can give no p-value below 0.1
//! ([`can_reach_confidence`]). Such a changed row is marked [`DiffRow::too_few_samples`] and
//! printed as `too few samples`, never as no change.
//!
//! # The gate
//!
//! [`Diff::regressions`] lists the rows whose total or mean grew by more than a percentage
//! and whose change is real, plus, under [`FewSamples::Fail`], the rows with too few samples
//! that grew as much (under [`FewSamples::Pass`], the default, they are listed as such and do
//! not fail); `ttprof diff --fail-above PCT [--too-few-samples pass|fail]` exits with
//! [`EXIT_REGRESSION`] naming each.

use crate::error::{Error, Result};
use crate::oplog::OpLog;
use crate::profile::Profile;
use crate::timeline::MarkKind;
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The exit code of `ttprof diff --fail-above` when a zone regressed (0 clean, 1 unusable
/// input, 2 data problems or nothing to compare).
pub const EXIT_REGRESSION: u8 = 3;

/// The confidence at which a change between noisy runs counts as real.
pub const CONFIDENCE: f64 = 0.95;

/// The file name of the emulator's device image in a `ttprof run` directory: its presence
/// marks the run as exact.
const EMULATOR_IMAGE: &str = "device.img";
const SNAPSHOT: &str = "device.snap";
const OPLOG: &str = "ops.jsonl";
const DEVICE_CSV: &str = "profile_log_device.csv";

/// One zone's duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Device cycles.
    pub cycles: u64,
    /// Host ns.
    pub ns: f64,
}

/// One sum zone record: a core's total over one launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SumSample {
    /// Device cycles over its measurements.
    pub total_cycles: u64,
    /// Measurements.
    pub count: u32,
    /// The total in host ns.
    pub ns: f64,
}

/// An op and a zone name: (op code, position among the ops of that code, from 1; zone).
pub type Key = (String, u32, String);

/// One side of a comparison: every zone's duration and every sum zone record per (op, zone
/// name).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// What was read.
    pub source: String,
    /// Whether the run came from the deterministic emulator (see the module docs).
    pub exact: bool,
    /// Durations per (op, zone name).
    pub zones: BTreeMap<Key, Vec<Sample>>,
    /// Sum zone records per (op, sum zone name).
    pub sums: BTreeMap<Key, Vec<SumSample>>,
    /// Problems found reading it (a zone end without its start, a record left out): each
    /// line names what and where.
    pub problems: Vec<String>,
}

/// Reads one side (see the module docs for what `path` may be).
pub fn load(path: &Path) -> Result<Samples> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "read run to compare", e))?;
    if meta.is_dir() {
        let exact = path.join(EMULATOR_IMAGE).is_file();
        if path.join(SNAPSHOT).is_file() && path.join(OPLOG).is_file() {
            return from_file(&path.join(SNAPSHOT), Some(&path.join(OPLOG)), exact);
        }
        let csv = path.join(DEVICE_CSV);
        if !csv.is_file() {
            return Err(Error::BadFile {
                path: path.into(),
                what: format!(
                    "holds neither {SNAPSHOT} with {OPLOG} (a `ttprof run` output) nor {DEVICE_CSV} (a `ttprof report` \
                     or tt-metal output): nothing to compare"
                ),
            });
        }
        let names = match path.join(OPLOG) {
            p if p.is_file() => run_names(&OpLog::read(&p)?),
            _ => HashMap::new(),
        };
        let mut s = from_device_csv(&csv, &names)?;
        s.exact = exact;
        return Ok(s);
    }
    let oplog = path.parent().map(|d| d.join(OPLOG)).filter(|p| p.is_file());
    let beside_image = path
        .parent()
        .is_some_and(|d| d.join(EMULATOR_IMAGE).is_file());
    if crate::tt_metal::device_log::is_device_log(path) {
        let names = match &oplog {
            Some(p) => run_names(&OpLog::read(p)?),
            None => HashMap::new(),
        };
        let mut s = from_device_csv(path, &names)?;
        s.exact = beside_image;
        return Ok(s);
    }
    let exact = beside_image || crate::devmem::file_kind(path)? == crate::devmem::FileKind::Image;
    from_file(path, oplog.as_deref(), exact)
}

fn from_file(device: &Path, oplog: Option<&Path>, exact: bool) -> Result<Samples> {
    let log = oplog.map(OpLog::read).transpose()?;
    // Two readings: the model, then one ring's records at a time.
    let loaded = crate::pass::open(device, log)?;
    let mut rings = crate::pass::DeviceRings::new(&loaded.profile, loaded.memory.as_ref())?;
    let mut s = from_profile_rings(&loaded.profile, &mut rings)?;
    drop(rings);
    s.source = match oplog {
        Some(l) => format!("{} named by {}", loaded.memory.describe(), l.display()),
        None => format!("{} (no op log: sites unnamed)", loaded.memory.describe()),
    };
    s.exact = exact;
    Ok(s)
}

/// Each of `ops` ((chip, run id, op code), in program order) with its position among the
/// ops of its code, from 1.
fn positions<'a>(
    ops: impl Iterator<Item = (u32, u32, &'a str)>,
) -> HashMap<(u32, u32), (String, u32)> {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut out = HashMap::new();
    for (chip, run, code) in ops {
        let k = seen.entry(code).or_default();
        *k += 1;
        out.entry((chip, run)).or_insert((code.to_string(), *k));
    }
    out
}

/// Op code and position per (device, run id), in the op log's order.
fn run_names(log: &OpLog) -> HashMap<(u32, u32), (String, u32)> {
    positions(log.ops().map(|o| (o.device, o.run_id, o.op_code.as_str())))
}

/// Every zone and sum zone record of `p` per (op, zone name); `exact` is left false (the
/// caller knows where the profile came from).
pub fn from_profile(p: &Profile) -> Samples {
    from_profile_rings(p, &mut crate::sink::Held(p)).expect("a profile's own rings are at hand")
}

/// [`from_profile`], each ring's records taken from `rings` (a profile built from passes).
pub fn from_profile_rings(p: &Profile, rings: &mut dyn crate::sink::RingSource) -> Result<Samples> {
    let mut s = Samples {
        source: "profile".into(),
        ..Default::default()
    };
    let ops = positions(p.ops.iter().map(|o| (o.chip, o.run, o.name.as_str())));
    let op_of = |op: Option<u32>, run: u32| -> (String, u32) {
        match op.and_then(|i| p.ops.get(i as usize)) {
            Some(o) => ops
                .get(&(o.chip, o.run))
                .cloned()
                .unwrap_or_else(|| (o.name.clone(), 1)),
            None => (format!("run {run}"), 1),
        }
    };
    for i in 0..p.ring_count() {
        let ring = rings.ring(i)?;
        let view = p.view(i, &ring, true);
        let chip = view.lane.chip;
        for z in &view.zones {
            let (op, k) = op_of(z.op, z.run);
            let zone = p.labels[z.site as usize].name.clone();
            let cycles = z.end_cycles.saturating_sub(z.start_cycles);
            s.zones.entry((op, k, zone)).or_default().push(Sample {
                cycles,
                ns: z.end_ns - z.start_ns,
            });
        }
        let cpn = p
            .timebase
            .chips
            .get(chip as usize)
            .map_or(f64::NAN, |c| c.cycles_per_ns);
        for m in &view.marks {
            let MarkKind::Sum {
                total_cycles,
                count,
            } = m.kind
            else {
                continue;
            };
            let (op, k) = op_of(m.op, m.run);
            let zone = p.labels[m.site as usize].name.clone();
            s.sums.entry((op, k, zone)).or_default().push(SumSample {
                total_cycles,
                count,
                ns: total_cycles as f64 / cpn,
            });
        }
    }
    s.problems = p
        .all_issues()
        .filter(|i| i.is_error())
        .map(|i| i.to_string())
        .collect();
    Ok(s)
}

/// The zones and sum zones of a `profile_log_device.csv`, read by the one device-log reader
/// ([`crate::import`]: `ZONE_START`/`ZONE_END` rows paired per RISC, innermost open zone of
/// the same name and run; `ZONE_TOTAL` rows as sum zones) and compared like any profile
/// ([`from_profile`]); ops are named by `names` ((chip, run id) -> op code and position), or
/// `run <id>`. Streamed: memory is the records, not the file's text.
pub fn from_device_csv(path: &Path, names: &HashMap<(u32, u32), (String, u32)>) -> Result<Samples> {
    let (imported, mut rings) = crate::import::stream(path, None)?;
    let mut p = imported.profile;
    for o in p.ops.iter_mut() {
        if let Some((code, _)) = names.get(&(o.chip, o.run)) {
            o.name = code.clone();
        }
    }
    let mut s = from_profile_rings(&p, &mut rings)?;
    s.source = format!("device log {}", path.display());
    Ok(s)
}

/// A cycle total (exact, 128 bits) as JSON: a number, or a string of its digits above
/// 2^64 - 1, which JSON readers would round.
fn total_json<S: Serializer>(v: &u128, s: S) -> std::result::Result<S::Ok, S::Error> {
    match u64::try_from(*v) {
        Ok(n) => s.serialize_u64(n),
        Err(_) => s.serialize_str(&v.to_string()),
    }
}

/// Count, total, mean and percentiles of one side's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SideStats {
    /// Zones (for a sum zone: its measurements).
    pub count: u64,
    /// Samples the statistics and the test use: zones, or a sum zone's records.
    pub samples: u64,
    /// Total device cycles, summed exactly (128 bits; see the module docs).
    #[serde(serialize_with = "total_json")]
    pub total_cycles: u128,
    /// Mean cycles (per measurement, for a sum zone).
    pub mean_cycles: f64,
    /// Median cycles (of the samples).
    pub p50_cycles: u64,
    /// 99th percentile, cycles.
    pub p99_cycles: u64,
    /// Total host ns.
    pub total_ns: f64,
    /// Mean ns.
    pub mean_ns: f64,
    /// Median ns.
    pub p50_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
}

/// Nearest-rank index of percentile `p` (0..1) of `n` sorted values.
fn rank(p: f64, n: usize) -> usize {
    ((p * n as f64).ceil() as usize).clamp(1, n) - 1
}

impl SideStats {
    /// Of `samples` (nearest-rank percentiles).
    pub fn of(samples: &[Sample]) -> SideStats {
        if samples.is_empty() {
            return SideStats::default();
        }
        let n = samples.len();
        let mut c: Vec<u64> = samples.iter().map(|s| s.cycles).collect();
        c.sort_unstable();
        let mut ns: Vec<f64> = samples.iter().map(|s| s.ns).collect();
        ns.sort_unstable_by(f64::total_cmp);
        let total_cycles: u128 = c.iter().map(|&c| c as u128).sum();
        let total_ns: f64 = ns.iter().sum();
        SideStats {
            count: n as u64,
            samples: n as u64,
            total_cycles,
            mean_cycles: total_cycles as f64 / n as f64,
            p50_cycles: c[rank(0.5, n)],
            p99_cycles: c[rank(0.99, n)],
            total_ns,
            mean_ns: total_ns / n as f64,
            p50_ns: ns[rank(0.5, n)],
            p99_ns: ns[rank(0.99, n)],
        }
    }

    /// Of sum zone records: count and totals over every measurement, percentiles of each
    /// record's cycles (ns) per measurement.
    pub fn of_sums(records: &[SumSample]) -> SideStats {
        if records.is_empty() {
            return SideStats::default();
        }
        let n = records.len();
        let count: u64 = records.iter().map(|r| r.count as u64).sum();
        let total_cycles: u128 = records.iter().map(|r| r.total_cycles as u128).sum();
        let total_ns: f64 = records.iter().map(|r| r.ns).sum();
        let mut c: Vec<u64> = sum_means(records).map(|m| m.round() as u64).collect();
        c.sort_unstable();
        let mut ns: Vec<f64> = records
            .iter()
            .map(|r| {
                if r.count == 0 {
                    0.0
                } else {
                    r.ns / r.count as f64
                }
            })
            .collect();
        ns.sort_unstable_by(f64::total_cmp);
        let per = |x: f64| if count == 0 { 0.0 } else { x / count as f64 };
        SideStats {
            count,
            samples: n as u64,
            total_cycles,
            mean_cycles: per(total_cycles as f64),
            p50_cycles: c[rank(0.5, n)],
            p99_cycles: c[rank(0.99, n)],
            total_ns,
            mean_ns: per(total_ns),
            p50_ns: ns[rank(0.5, n)],
            p99_ns: ns[rank(0.99, n)],
        }
    }
}

/// Each sum record's cycles per measurement (0 without measurements).
fn sum_means(records: &[SumSample]) -> impl Iterator<Item = f64> + '_ {
    records.iter().map(|r| {
        if r.count == 0 {
            0.0
        } else {
            r.total_cycles as f64 / r.count as f64
        }
    })
}

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
    pub total_change_pct: f64,
    /// Relative change of the mean cycles, in percent.
    pub mean_change_pct: f64,
    /// For noisy runs: the confidence (1 - p) of a two-sided Mann-Whitney U test that the
    /// samples differ. `None` for exact runs (any change is real).
    pub confidence: Option<f64>,
    /// Whether the change counts as real: exact runs and any change, or noisy runs at
    /// [`CONFIDENCE`] or more, or a changed count.
    pub real: bool,
    /// Noisy runs: the figures changed, but with so few samples per side that the test can
    /// never reach [`CONFIDENCE`] ([`can_reach_confidence`]): neither real nor noise.
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

/// Whether a two-sided Mann-Whitney U test over `n1` and `n2` samples can reach
/// [`CONFIDENCE`] at all: its smallest p-value (complete separation, no ties) is
/// 2 / C(n1 + n2, n1). 3 against 3 gives 0.1, 4 against 4 0.029.
pub fn can_reach_confidence(n1: usize, n2: usize) -> bool {
    if n1 == 0 || n2 == 0 {
        return false;
    }
    let need = 2.0 / (1.0 - CONFIDENCE);
    let (k, n) = (n1.min(n2), n1 + n2);
    // C(n, k) built up factor by factor, stopping once it is large enough.
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
        if c >= need {
            return true;
        }
    }
    c >= need - 1e-9
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
    let zone_side = |s: &Samples, k: &Key| s.zones.get(k).map(|v| (SideStats::of(v), cycles(v)));
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

/// Two-sided p-value of the Mann-Whitney U test that `a` and `b` come from the same
/// distribution (`None` when a side is empty). Exact (the U distribution counted) when
/// there are no ties and at most 400 pairs; otherwise the normal approximation with the
/// tie correction and a continuity correction.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Mid-ranks; sum of t^3 - t over tie groups.
    let (mut r1, mut ties, mut i) = (0.0, 0.0, 0);
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        r1 += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u = u1.min(f1 * f2 - u1);
    if ties == 0.0 && n1 * n2 <= 400 {
        return Some(exact_u_p(n1, n2, u.round() as usize));
    }
    let n = f1 + f2;
    let var = f1 * f2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0); // every value equal
    }
    let z = ((f1 * f2 / 2.0 - u) - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * normal_upper(z)).min(1.0))
}

/// P(U <= u) * 2 for sample sizes `m`, `n` without ties, from the counts of rank
/// arrangements: f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u).
fn exact_u_p(m: usize, n: usize, u: usize) -> f64 {
    let max = m * n;
    // f[j][v] for the current i (rows over n).
    let mut prev: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; max + 1];
            v[0] = 1.0;
            v
        })
        .collect(); // i = 0: one arrangement, U = 0
    for _i in 1..=m {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; n + 1];
        cur[0][0] = 1.0; // j = 0
        for j in 1..=n {
            for v in 0..=max {
                let a = if v >= j { prev[j][v - j] } else { 0.0 };
                cur[j][v] = a + cur[j - 1][v];
            }
        }
        prev = cur;
    }
    let dist = &prev[n];
    let total: f64 = dist.iter().sum();
    let tail: f64 = dist[..=u.min(max)].iter().sum();
    (2.0 * tail / total).min(1.0)
}

/// P(Z > z) for a standard normal Z.
fn normal_upper(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Chebyshev fit, fractional error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The comparison as text: a header line per side, one line per changed row (all rows
/// when `all`), zones added and removed, problems.
pub fn render(d: &Diff, all: bool) -> String {
    crate::printable::printable(&render_raw(d, all)).into_owned()
}

/// [`render`] before names are made printable.
fn render_raw(d: &Diff, all: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "base: {}", d.base);
    let _ = writeln!(out, "new:  {}", d.new);
    let _ = writeln!(
        out,
        "{}",
        if d.exact {
            "both runs are emulator runs: cycle counts are exact, every change is real".to_string()
        } else {
            format!(
                "hardware (or unknown) runs: a change is real at {:.0}% confidence (two-sided Mann-Whitney U over the \
                 zone durations) or when the count changed",
                CONFIDENCE * 100.0
            )
        }
    );
    if let Some(why) = d.nothing_matched() {
        let _ = writeln!(out, "{why}");
    }
    let shown: Vec<&DiffRow> = d
        .rows
        .iter()
        .filter(|r| all || r.real || r.too_few_samples)
        .collect();
    if shown.is_empty() && d.added.is_empty() && d.removed.is_empty() && !d.rows.is_empty() {
        let _ = writeln!(out, "no change in {} zone row(s)", d.rows.len());
    }
    let few = d.rows.iter().filter(|r| r.too_few_samples).count();
    if few > 0 {
        let _ = writeln!(
            out,
            "{few} changed row(s) have too few samples for the test to reach {:.0}% confidence (e.g. 3 against 3): \
             marked `too few samples`, neither real nor noise",
            CONFIDENCE * 100.0
        );
    }
    if !shown.is_empty() {
        let op_w = shown
            .iter()
            .map(|r| r.op.chars().count())
            .max()
            .unwrap_or(0)
            .max(20);
        let zone_w = shown
            .iter()
            .map(|r| r.zone_label().chars().count())
            .max()
            .unwrap_or(0)
            .max(24);
        let _ = writeln!(
            out,
            "\n{:<op_w$} {:<zone_w$} {:>13} {:>13} {:>9} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}{}",
            "op",
            "zone",
            "count",
            "total cyc",
            "Δtotal",
            "mean cyc",
            "mean ns",
            "Δmean",
            "p50 cyc",
            "p99 cyc",
            "",
            if d.exact { "" } else { " confidence" }
        );
        for r in shown {
            let status = if r.real {
                String::new()
            } else if r.too_few_samples {
                format!("(too few samples: {} vs {})", r.base.samples, r.new.samples)
            } else if r.total_change_pct == 0.0 && r.mean_change_pct == 0.0 {
                "(no change)".into()
            } else {
                "(noise)".into()
            };
            let _ = writeln!(
                out,
                "{:<op_w$} {:<zone_w$} {:>13} {:>13} {:>9} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}{}",
                r.op,
                r.zone_label(),
                format!("{}->{}", r.base.count, r.new.count),
                format!("{}", r.new.total_cycles),
                signed(r.total_change_pct),
                format!("{:.1}", r.new.mean_cycles),
                format!("{:.1}", r.new.mean_ns),
                signed(r.mean_change_pct),
                r.new.p50_cycles,
                r.new.p99_cycles,
                status,
                r.confidence
                    .map_or(String::new(), |c| format!(" {:.1}%", c * 100.0))
            );
        }
    }
    for (what, list) in [("only in new", &d.added), ("only in base", &d.removed)] {
        for z in list.iter() {
            let _ = writeln!(
                out,
                "{what}: {} / {}: {} zone(s), {} cycles total, mean {:.1}",
                z.op,
                zone_label(&z.zone, z.kind),
                z.stats.count,
                z.stats.total_cycles,
                z.stats.mean_cycles
            );
        }
    }
    for p in &d.problems {
        let _ = writeln!(out, "problem: {p}");
    }
    out
}

fn signed(p: f64) -> String {
    if p.is_infinite() {
        "new".into()
    } else {
        format!("{p:+.1}%")
    }
}

/// The comparison as JSON for CI, with the gate's verdict when `fail_above` is given (rows
/// with too few samples treated as `few` says).
pub fn to_json(d: &Diff, fail_above: Option<f64>, few: FewSamples) -> serde_json::Value {
    let mut v =
        serde_json::to_value(d).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }));
    v["matched"] = serde_json::json!(d.rows.len());
    v["nothing_matched"] = serde_json::json!(d.nothing_matched());
    if let Some(pct) = fail_above {
        let failed: Vec<serde_json::Value> = d
            .regressions(pct, few)
            .into_iter()
            .map(|r| {
                serde_json::json!({"op": r.op, "zone": r.zone, "kind": r.kind, "message": regression_message(r, pct)})
            })
            .collect();
        v["fail_above_pct"] = serde_json::json!(pct);
        v["too_few_samples"] = serde_json::json!(match few {
            FewSamples::Pass => "pass",
            FewSamples::Fail => "fail",
        });
        v["failed"] = serde_json::Value::Array(failed);
    }
    v
}

/// One line naming a regression: op, zone, what grew, by how much, over the limit.
pub fn regression_message(r: &DiffRow, pct: f64) -> String {
    format!(
        "{} / {}: total {} -> {} cycles ({}), mean {:.1} -> {:.1} cycles ({}): above the {pct}% limit{}",
        r.op,
        r.zone_label(),
        r.base.total_cycles,
        r.new.total_cycles,
        signed(r.total_change_pct),
        r.base.mean_cycles,
        r.new.mean_cycles,
        signed(r.mean_change_pct),
        match (r.too_few_samples, r.confidence) {
            (true, _) => format!(" (too few samples to tell: {} vs {})", r.base.samples, r.new.samples),
            (false, Some(c)) => format!(" ({:.1}% confidence)", c * 100.0),
            (false, None) => String::new(),
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(exact: bool, zones: &[(&str, &[u64])]) -> Samples {
        let mut s = Samples {
            source: "test".into(),
            exact,
            ..Default::default()
        };
        for (z, c) in zones {
            s.zones.insert(
                ("op".into(), 1, z.to_string()),
                c.iter()
                    .map(|&c| Sample {
                        cycles: c,
                        ns: c as f64,
                    })
                    .collect(),
            );
        }
        s
    }

    #[test]
    fn stats_take_nearest_rank_percentiles() {
        let s: Vec<Sample> = (1..=100)
            .map(|c| Sample {
                cycles: c,
                ns: c as f64 * 2.0,
            })
            .collect();
        let st = SideStats::of(&s);
        assert_eq!(
            (st.count, st.total_cycles, st.p50_cycles, st.p99_cycles),
            (100, 5050, 50, 99)
        );
        assert_eq!((st.mean_cycles, st.p50_ns), (50.5, 100.0));
        assert_eq!(SideStats::of(&[]).count, 0);
    }

    #[test]
    fn identical_exact_runs_have_no_change_and_a_doubled_zone_regresses() {
        let a = side(true, &[("loop", &[100, 100, 100]), ("other", &[5])]);
        let d = diff(&a, &a);
        assert!(d.unchanged() && d.regressions(0.0, FewSamples::Pass).is_empty());
        let b = side(true, &[("loop", &[200, 200, 200]), ("other", &[5])]);
        let d = diff(&a, &b);
        assert_eq!(d.rows[0].zone, "loop", "largest change first");
        assert_eq!(
            (d.rows[0].total_change_pct, d.rows[0].mean_change_pct),
            (100.0, 100.0)
        );
        let r = d.regressions(50.0, FewSamples::Pass);
        assert_eq!(r.len(), 1);
        assert!(
            regression_message(r[0], 50.0).contains("op / loop: total 300 -> 600 cycles (+100.0%)")
        );
        assert!(
            d.regressions(100.0, FewSamples::Pass).is_empty(),
            "exactly +100% is not above 100%"
        );
    }

    #[test]
    fn noisy_runs_need_confidence() {
        // Overlapping samples with a slightly higher mean: not significant.
        let a = side(false, &[("z", &[100, 104, 98, 101, 99, 103])]);
        let b = side(false, &[("z", &[101, 105, 97, 102, 100, 104])]);
        let d = diff(&a, &b);
        assert!(
            !d.rows[0].real && !d.rows[0].too_few_samples,
            "{:?}",
            d.rows[0]
        );
        assert!(d.regressions(0.1, FewSamples::Fail).is_empty());
        // Every new sample above every base sample: p = 2/C(12,6) = 0.0022.
        let c = side(false, &[("z", &[200, 204, 198, 201, 199, 203])]);
        let d = diff(&a, &c);
        let conf = d.rows[0].confidence.unwrap();
        assert!((conf - (1.0 - 2.0 / 924.0)).abs() < 1e-9, "{conf}");
        assert_eq!(d.regressions(50.0, FewSamples::Pass).len(), 1);
    }

    /// Issue 25: on hardware runs a zone with 3 samples per side could never fail the gate
    /// (the test's smallest p is 0.1) and was printed as no change.
    #[test]
    fn too_few_samples_are_said_and_the_gate_treats_them_as_asked() {
        assert!(
            !can_reach_confidence(3, 3)
                && !can_reach_confidence(3, 4)
                && !can_reach_confidence(1, 30)
        );
        assert!(
            can_reach_confidence(4, 4) && can_reach_confidence(3, 5) && can_reach_confidence(2, 8)
        );
        assert!(can_reach_confidence(1000, 1000) && !can_reach_confidence(0, 10));
        let a = side(false, &[("z", &[100, 101, 102])]);
        let b = side(false, &[("z", &[200, 201, 202])]);
        let d = diff(&a, &b);
        let r = &d.rows[0];
        assert!(!r.real && r.too_few_samples, "{r:?}");
        assert!(
            (r.confidence.unwrap() - 0.9).abs() < 1e-9,
            "the best 3 against 3 can do"
        );
        assert!(!d.unchanged());
        let text = render(&d, false);
        assert!(!text.contains("no change"), "{text}");
        assert!(
            text.contains("(too few samples: 3 vs 3)")
                && text.contains("1 changed row(s) have too few samples"),
            "{text}"
        );
        // The gate: passed by default, failed when asked.
        assert!(d.regressions(50.0, FewSamples::Pass).is_empty());
        assert_eq!(d.unjudged_growth(50.0).len(), 1);
        let failed = d.regressions(50.0, FewSamples::Fail);
        assert_eq!(failed.len(), 1);
        assert!(regression_message(failed[0], 50.0).ends_with("(too few samples to tell: 3 vs 3)"));
        assert!(
            d.regressions(100.0, FewSamples::Fail).is_empty(),
            "+99% is not above 100%"
        );
        let json = to_json(&d, Some(50.0), FewSamples::Fail);
        assert_eq!(
            (
                json["too_few_samples"].as_str(),
                json["failed"].as_array().unwrap().len()
            ),
            (Some("fail"), 1)
        );
        assert_eq!(json["rows"][0]["too_few_samples"], true);
        // Identical samples are no change, whatever their number.
        let d = diff(&a, &a);
        assert!(d.unchanged() && !d.rows[0].too_few_samples);
        // Exact runs never have too few samples: every change is real.
        let d = diff(&side(true, &[("z", &[100])]), &side(true, &[("z", &[101])]));
        assert!(d.rows[0].real && !d.rows[0].too_few_samples);
    }

    /// Issue 25: sum zones were never compared (a 64% slower sum zone went unnoticed).
    #[test]
    fn sum_zones_are_compared() {
        let sums = |exact: bool, per_record: &[(u64, u32)]| {
            let mut s = side(exact, &[("loop", &[100, 100])]);
            let v = per_record
                .iter()
                .map(|&(t, c)| SumSample {
                    total_cycles: t,
                    count: c,
                    ns: t as f64,
                })
                .collect();
            s.sums.insert(("op".into(), 1, "wait".into()), v);
            s
        };
        let a = sums(true, &[(1000, 10), (1000, 10)]);
        let b = sums(true, &[(1640, 10), (1640, 10)]);
        let d = diff(&a, &b);
        assert_eq!(d.rows.len(), 2);
        let r = &d.rows[0];
        assert_eq!(
            (r.zone.as_str(), r.kind, r.zone_label().as_str()),
            ("wait", RowKind::Sum, "wait (sum)")
        );
        assert_eq!(
            (
                r.base.count,
                r.base.samples,
                r.base.total_cycles,
                r.base.mean_cycles
            ),
            (20, 2, 2000, 100.0)
        );
        assert_eq!((r.new.total_cycles, r.new.p50_cycles), (3280, 164));
        assert!(
            (r.total_change_pct - 64.0).abs() < 1e-9 && (r.mean_change_pct - 64.0).abs() < 1e-9
        );
        let failed = d.regressions(50.0, FewSamples::Pass);
        assert_eq!(failed.len(), 1);
        assert!(regression_message(failed[0], 50.0)
            .starts_with("op / wait (sum): total 2000 -> 3280 cycles (+64.0%)"));
        assert!(render(&d, false).contains("wait (sum)"));
        assert_eq!(
            to_json(&d, Some(50.0), FewSamples::Pass)["failed"][0]["kind"],
            "sum"
        );
        // Noisy runs: the test runs over each record's cycles per measurement.
        let a = sums(false, &(0..10).map(|i| (1000 + i, 10)).collect::<Vec<_>>());
        let b = sums(false, &(0..10).map(|i| (1640 + i, 10)).collect::<Vec<_>>());
        let d = diff(&a, &b);
        let r = d.rows.iter().find(|r| r.kind == RowKind::Sum).unwrap();
        assert!(r.real && r.confidence.unwrap() > 0.999, "{r:?}");
    }

    /// Issue 25: cycle totals were summed in u64 and wrapped silently.
    #[test]
    fn cycle_totals_do_not_wrap() {
        let half = 1u64 << 63;
        let s = SideStats::of(&[
            Sample {
                cycles: half,
                ns: 1.0,
            },
            Sample {
                cycles: half,
                ns: 1.0,
            },
            Sample { cycles: 5, ns: 1.0 },
        ]);
        assert_eq!(s.total_cycles, (1u128 << 64) + 5);
        let r = SideStats::of_sums(
            &[SumSample {
                total_cycles: u64::MAX,
                count: 1,
                ns: 0.0,
            }; 2],
        );
        assert_eq!(r.total_cycles, 2 * u64::MAX as u128);
        // JSON: a total above 2^64 - 1 is a string (a number would be rounded).
        let v = serde_json::to_value(s).unwrap();
        assert_eq!(v["total_cycles"], "18446744073709551621");
        assert_eq!(
            serde_json::to_value(SideStats::of(&[Sample { cycles: 7, ns: 7.0 }])).unwrap()
                ["total_cycles"],
            7
        );
        let a = side(true, &[("z", &[half, half])]);
        let b = side(true, &[("z", &[half, half, half])]);
        let d = diff(&a, &b);
        assert_eq!(d.rows[0].total_change_pct, 50.0);
        assert_eq!(
            to_json(&d, None, FewSamples::Pass)["rows"][0]["new"]["total_cycles"],
            (3u128 << 63).to_string()
        );
    }

    /// Issue 25: distinct ops that share an op code (ttnn's add and multiply are both
    /// `BinaryNgDeviceOperation`) were merged; they are matched by position and code.
    #[test]
    fn ops_that_share_an_op_code_are_matched_by_position() {
        let log = |ops: &[(u32, &str)]| -> HashMap<(u32, u32), (String, u32)> {
            positions(ops.iter().map(|&(run, code)| (0u32, run, code)))
        };
        let names = log(&[(1, "BinaryNg"), (2, "Matmul"), (3, "Relu"), (4, "BinaryNg")]);
        assert_eq!(names[&(0, 1)], ("BinaryNg".to_string(), 1));
        assert_eq!(names[&(0, 4)], ("BinaryNg".to_string(), 2));
        assert_eq!(names[&(0, 2)], ("Matmul".to_string(), 1));
        let run = |add: u64, mul: u64| {
            let mut s = Samples {
                exact: true,
                ..Default::default()
            };
            for (k, c) in [(1, add), (2, mul)] {
                s.zones.insert(
                    ("BinaryNg".into(), k, "tile".into()),
                    vec![Sample {
                        cycles: c,
                        ns: c as f64,
                    }],
                );
            }
            s.zones.insert(
                ("Matmul".into(), 1, "tile".into()),
                vec![Sample { cycles: 9, ns: 9.0 }],
            );
            s
        };
        // Only the second BinaryNg op (mul) got slower: it alone regresses, by its own +50%.
        let d = diff(&run(100, 200), &run(100, 300));
        let changed: Vec<(&str, f64)> = d
            .rows
            .iter()
            .filter(|r| r.real)
            .map(|r| (r.op.as_str(), r.total_change_pct))
            .collect();
        assert_eq!(changed, [("BinaryNg #2", 50.0)]);
        assert_eq!(
            d.rows.iter().find(|r| r.op_code == "Matmul").unwrap().op,
            "Matmul",
            "a code that occurs once"
        );
        assert_eq!(d.ops.0, ["BinaryNg #1", "BinaryNg #2", "Matmul"]);
    }

    /// Issue 25: two runs with nothing in common were "compared" with 0 rows, and the gate
    /// passed.
    #[test]
    fn nothing_matched_is_said() {
        let a = side(true, &[("x", &[1])]);
        let mut b = Samples {
            exact: false,
            ..Default::default()
        };
        b.zones.insert(
            ("run 1".into(), 1, "x".into()),
            vec![Sample { cycles: 1, ns: 1.0 }],
        );
        let d = diff(&a, &b);
        let why = d.nothing_matched().unwrap();
        assert!(
            why.starts_with("nothing to compare: no op and zone is in both runs"),
            "{why}"
        );
        assert!(
            why.contains("base ops: op; new ops: run 1")
                && why.contains("new run's ops are unnamed"),
            "{why}"
        );
        assert!(render(&d, false).contains("nothing to compare"));
        assert_eq!(to_json(&d, Some(5.0), FewSamples::Pass)["matched"], 0);
        assert!(diff(&a, &a).nothing_matched().is_none());
        let empty = Samples::default();
        assert!(
            diff(&empty, &empty).nothing_matched().is_none(),
            "nothing on either side: nothing to say"
        );
    }

    #[test]
    fn mann_whitney_matches_known_values() {
        // Exact: n1 = n2 = 3, complete separation: p = 2 / 20.
        assert!((mann_whitney(&[1., 2., 3.], &[4., 5., 6.]).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(mann_whitney(&[1., 2.], &[]), None);
        // All tied: no evidence.
        assert_eq!(mann_whitney(&[5.; 30], &[5.; 30]), Some(1.0));
        // Large, separated by a shift with ties: normal approximation, tiny p.
        let a: Vec<f64> = (0..50).map(|i| (i % 10) as f64).collect();
        let b: Vec<f64> = (0..50).map(|i| (i % 10 + 8) as f64).collect();
        assert!(mann_whitney(&a, &b).unwrap() < 1e-6);
        // Normal tail: P(Z > 1.96) = 0.025.
        assert!((normal_upper(1.959964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn added_and_removed_zones_are_listed_apart() {
        let a = side(true, &[("x", &[1])]);
        let b = side(true, &[("y", &[1])]);
        let d = diff(&a, &b);
        assert!(d.rows.is_empty() && !d.unchanged());
        assert_eq!(
            (d.added[0].zone.as_str(), d.removed[0].zone.as_str()),
            ("y", "x")
        );
        let text = render(&d, false);
        assert!(
            text.contains("only in new: op / y") && text.contains("only in base: op / x"),
            "{text}"
        );
    }

    #[test]
    fn a_device_log_pairs_zone_rows_and_names_ops() {
        let dir = crate::testing::temp_dir("diff-csv");
        let csv = dir.join(DEVICE_CSV);
        std::fs::write(
            &csv,
            "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 500, Max Compute Cores: 64\nheader\n\
             0,1,1,BRISC,1,100,0,3,,,outer,ZONE_START,1,a.rs,\n\
             0,1,1,BRISC,2,110,0,3,,,inner,ZONE_START,2,a.rs,\n\
             0,1,1,BRISC,2,130,0,3,,,inner,ZONE_END,2,a.rs,\n\
             0,1,1,BRISC,1,200,0,3,,,outer,ZONE_END,1,a.rs,\n\
             0,1,1,BRISC,1,300,0,4,,,outer,ZONE_END,1,a.rs,\n\
             0,1,1,BRISC,5,310,90,3,,,wait,ZONE_TOTAL,5,a.rs,{\"count\": 3}\n",
        )
        .unwrap();
        let names = HashMap::from([((0, 3), ("Matmul".to_string(), 1))]);
        let s = from_device_csv(&csv, &names).unwrap();
        let outer = &s.zones[&("Matmul".to_string(), 1, "outer".to_string())];
        assert_eq!(
            outer,
            &vec![Sample {
                cycles: 100,
                ns: 200.0
            }]
        );
        assert_eq!(
            s.zones[&("Matmul".to_string(), 1, "inner".to_string())][0].cycles,
            20
        );
        assert_eq!(
            s.sums[&("Matmul".to_string(), 1, "wait".to_string())],
            [SumSample {
                total_cycles: 90,
                count: 3,
                ns: 180.0
            }]
        );
        assert_eq!(
            s.problems.len(),
            1,
            "the unmatched end is counted: {:?}",
            s.problems
        );
        // An end before its start: a problem, not a zone of 0 cycles.
        std::fs::write(
            &csv,
            "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 500, Max Compute Cores: 64\nheader\n\
             0,1,1,BRISC,1,100,0,3,,,outer,ZONE_START,1,a.rs,\n\
             0,1,1,BRISC,1,90,0,3,,,outer,ZONE_END,1,a.rs,\n",
        )
        .unwrap();
        let s = from_device_csv(&csv, &names).unwrap();
        assert!(s.zones.is_empty(), "{:?}", s.zones);
        assert!(
            s.problems.len() == 1 && s.problems[0].contains("1 zone(s) whose ZONE_END is earlier"),
            "{:?}",
            s.problems
        );
        for f in ["inf", "NaN", "-500", "0", "1e400"] {
            std::fs::write(
                &csv,
                format!("ARCH: wormhole_b0, CHIP_FREQ[MHz]: {f}, Max Compute Cores: 64\nheader\n"),
            )
            .unwrap();
            let e = from_device_csv(&csv, &names).unwrap_err().to_string();
            assert!(
                e.contains(csv.to_str().unwrap())
                    && e.contains("line 1: CHIP_FREQ[MHz]: ")
                    && e.contains("positive, finite"),
                "{f}: {e}"
            );
        }
        std::fs::write(&csv, "not a device log\n").unwrap();
        let e = from_device_csv(&csv, &names).unwrap_err().to_string();
        assert!(e.contains("line 1: expected `ARCH"), "{e}");
        let e = load(&dir.join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        std::fs::remove_file(&csv).unwrap();
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("nothing to compare"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
