//! `ttprof diff`: two runs compared per op and zone name, and a performance gate for CI.
//!
//! Each side is the output of `ttprof run` or `ttprof report`, or a device file:
//!
//! - a directory holding `device.snap` and `ops.jsonl` (what `ttprof run` writes) is loaded
//!   through the normal load path ([`Profile::open`]), so zones are named and timed exactly as
//!   every other output names and times them;
//! - any other directory must hold `profile_log_device.csv` (tt-metal's device log, as
//!   `ttprof report` and tt-metal's own profiler write it): zones are its `ZONE_START` /
//!   `ZONE_END` pairs per RISC, ns are cycles over its `CHIP_FREQ[MHz]`, ops are named by the
//!   directory's `ops.jsonl` when there is one, else `run <id>`;
//! - a file (snapshot or device image) is loaded through [`Profile::open`], named by the
//!   `ops.jsonl` beside it when there is one.
//!
//! For every (op, zone name) both sides have, [`diff`] gives count, total, mean, p50 and p99
//! in cycles and ns, and the relative change of total and mean; rows are sorted by the
//! largest change first. Zones one side lacks are listed apart (they never fail the gate).
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
//! Mann-Whitney U test over the two sides' per-zone durations ([`mann_whitney`]), and it
//! counts as real only at [`CONFIDENCE`] or more. Both sides must be exact for the
//! comparison to be exact.
//!
//! # The gate
//!
//! [`Diff::regressions`] lists the rows whose total or mean grew by more than a percentage
//! and whose change is real; `ttprof diff --fail-above PCT` exits with [`EXIT_REGRESSION`]
//! naming each. Sum zones (`sum_zone!`) hold one total per launch, not per-measurement
//! samples: they are not compared.

use crate::error::{Error, Result};
use crate::oplog::OpLog;
use crate::profile::Profile;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The exit code of `ttprof diff --fail-above` when a zone regressed (0 clean, 1 unusable
/// input, 2 data problems).
pub const EXIT_REGRESSION: u8 = 3;

/// The confidence at which a change between noisy runs counts as real.
pub const CONFIDENCE: f64 = 0.95;

/// The file name of the emulator's device image in a `ttprof run` directory: its presence
/// marks the run as exact.
const EMULATOR_IMAGE: &str = "device.img";
const SNAPSHOT: &str = "device.snap";
const OPLOG: &str = "ops.jsonl";
const DEVICE_CSV: &str = "profile_log_device.csv";

/// The longest device log line read: a row is a marker (~150 bytes; its zone name, from a
/// kernel's site table, is the only free-length part).
pub const MAX_CSV_LINE_BYTES: usize = 64 << 10;

/// One zone's duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Device cycles.
    pub cycles: u64,
    /// Host ns.
    pub ns: f64,
}

/// One side of a comparison: every zone's duration per (op, zone name).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// What was read.
    pub source: String,
    /// Whether the run came from the deterministic emulator (see the module docs).
    pub exact: bool,
    /// Durations per (op name, zone name).
    pub zones: BTreeMap<(String, String), Vec<Sample>>,
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
    let beside_image = path.parent().is_some_and(|d| d.join(EMULATOR_IMAGE).is_file());
    let exact = beside_image || crate::devmem::file_kind(path)? == crate::devmem::FileKind::Image;
    from_file(path, oplog.as_deref(), exact)
}

fn from_file(device: &Path, oplog: Option<&Path>, exact: bool) -> Result<Samples> {
    let log = oplog.map(OpLog::read).transpose()?;
    let loaded = Profile::open(device, log, false)?;
    let mut s = from_profile(&loaded.profile);
    s.source = match oplog {
        Some(l) => format!("{} named by {}", loaded.memory.describe(), l.display()),
        None => format!("{} (no op log: sites unnamed)", loaded.memory.describe()),
    };
    s.exact = exact;
    Ok(s)
}

/// Op code per (device, run id).
fn run_names(log: &OpLog) -> HashMap<(u32, u32), String> {
    log.ops().map(|o| ((o.device, o.run_id), o.op_code.clone())).collect()
}

/// Every zone of `p` per (op, zone name); `exact` is left false (the caller knows where the
/// profile came from).
pub fn from_profile(p: &Profile) -> Samples {
    let mut s = Samples { source: "profile".into(), ..Default::default() };
    for view in p.rings() {
        for z in &view.zones {
            let op = z.op.map_or_else(|| format!("run {}", z.run), |i| p.ops[i as usize].name.clone());
            let zone = p.labels[z.site as usize].name.clone();
            let cycles = z.end_cycles.saturating_sub(z.start_cycles);
            s.zones.entry((op, zone)).or_default().push(Sample { cycles, ns: z.end_ns - z.start_ns });
        }
    }
    s.problems = p.all_issues().filter(|i| i.is_error()).map(|i| i.to_string()).collect();
    s
}

/// The zones of a `profile_log_device.csv`: `ZONE_START`/`ZONE_END` rows paired per RISC
/// (innermost open zone of the same name), ops named by `names` ((chip, run id) -> op code)
/// or `run <id>`.
///
/// The file is streamed (memory: one line, at most [`MAX_CSV_LINE_BYTES`], and the zones it
/// holds), and a line longer than that is an error naming it.
pub fn from_device_csv(path: &Path, names: &HashMap<(u32, u32), String>) -> Result<Samples> {
    let (file, _) = crate::files::open_regular(path, "a device log (profile_log_device.csv)", "read device log", false)?;
    let bad = |line: usize, what: String| Error::BadFile { path: path.into(), what: format!("line {line}: {what}") };
    let mut reader = crate::files::BoundedLines::new(std::io::BufReader::with_capacity(1 << 16, file), MAX_CSV_LINE_BYTES);
    let mut next = move || -> Result<Option<(usize, String)>> {
        match reader.next_line() {
            Ok(Some((n, l))) => Ok(Some((n, String::from_utf8_lossy(l).into_owned()))),
            Ok(None) => Ok(None),
            Err(crate::files::LineError::TooLong { line, max }) => Err(Error::BadFile {
                path: path.into(),
                what: format!("line {line} is longer than {max} bytes: expected tt-metal's device log, a row per marker"),
            }),
            Err(crate::files::LineError::Io(e)) => Err(Error::io(path, "read device log", e)),
        }
    };
    let first = next()?.map(|l| l.1).unwrap_or_default();
    let mhz: f64 = first
        .split(',')
        .find_map(|f| f.trim().strip_prefix("CHIP_FREQ[MHz]:"))
        .and_then(|v| v.trim().parse().ok())
        .filter(|m: &f64| *m > 0.0)
        .ok_or_else(|| {
            bad(1, format!("expected `ARCH: ..., CHIP_FREQ[MHz]: N, ...` (tt-metal's first line), found {first:?}"))
        })?;
    next()?; // the column names
    let mut s = Samples { source: format!("device log {}", path.display()), ..Default::default() };
    // Open zones per (chip, x, y, risc): (name, run, start cycles).
    let mut open: HashMap<(String, String, String, String), Vec<(String, u32, u64)>> = HashMap::new();
    let mut unmatched = 0u64;
    while let Some((n, line)) = next()? {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() < 12 {
            return Err(bad(n, format!("{} columns, expected 15", f.len())));
        }
        let kind = f[11];
        if kind != "ZONE_START" && kind != "ZONE_END" {
            continue;
        }
        let cycles: u64 = f[5].parse().map_err(|_| bad(n, format!("time {:?} is not a cycle count", f[5])))?;
        let run: u32 = f[7].parse().unwrap_or(u32::MAX);
        let key = (f[0].to_string(), f[1].to_string(), f[2].to_string(), f[3].to_string());
        let stack = open.entry(key).or_default();
        if kind == "ZONE_START" {
            stack.push((f[10].to_string(), run, cycles));
            continue;
        }
        let Some(at) = stack.iter().rposition(|(name, r, _)| name == f[10] && *r == run) else {
            unmatched += 1;
            continue;
        };
        let (name, run, start) = stack.remove(at);
        let chip: u32 = f[0].parse().unwrap_or(0);
        let op = names.get(&(chip, run)).cloned().unwrap_or_else(|| format!("run {run}"));
        let c = cycles.saturating_sub(start);
        s.zones.entry((op, name)).or_default().push(Sample { cycles: c, ns: c as f64 * 1000.0 / mhz });
    }
    let still_open: usize = open.values().map(Vec::len).sum();
    if unmatched + still_open as u64 > 0 {
        s.problems.push(format!(
            "{}: {unmatched} ZONE_END row(s) without their ZONE_START and {still_open} ZONE_START row(s) without their \
             ZONE_END are left out",
            path.display()
        ));
    }
    Ok(s)
}

/// Count, total, mean and percentiles of one side's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Zones.
    pub count: u64,
    /// Total device cycles.
    pub total_cycles: u64,
    /// Mean cycles.
    pub mean_cycles: f64,
    /// Median cycles.
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

impl Stats {
    /// Of `samples` (nearest-rank percentiles).
    pub fn of(samples: &[Sample]) -> Stats {
        if samples.is_empty() {
            return Stats::default();
        }
        let n = samples.len();
        let mut c: Vec<u64> = samples.iter().map(|s| s.cycles).collect();
        c.sort_unstable();
        let mut ns: Vec<f64> = samples.iter().map(|s| s.ns).collect();
        ns.sort_unstable_by(f64::total_cmp);
        let rank = |p: f64| ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        let total_cycles: u64 = c.iter().sum();
        let total_ns: f64 = ns.iter().sum();
        Stats {
            count: n as u64,
            total_cycles,
            mean_cycles: total_cycles as f64 / n as f64,
            p50_cycles: c[rank(0.5)],
            p99_cycles: c[rank(0.99)],
            total_ns,
            mean_ns: total_ns / n as f64,
            p50_ns: ns[rank(0.5)],
            p99_ns: ns[rank(0.99)],
        }
    }
}

/// One (op, zone) on both sides.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The op code.
    pub op: String,
    /// The zone name.
    pub zone: String,
    /// The base run's figures.
    pub base: Stats,
    /// The new run's figures.
    pub new: Stats,
    /// Relative change of the total cycles, in percent (new / base - 1).
    pub total_change_pct: f64,
    /// Relative change of the mean cycles, in percent.
    pub mean_change_pct: f64,
    /// For noisy runs: the confidence (1 - p) of a two-sided Mann-Whitney U test that the
    /// durations differ. `None` for exact runs (any change is real).
    pub confidence: Option<f64>,
    /// Whether the change counts as real: exact runs and any change, or noisy runs at
    /// [`CONFIDENCE`] or more.
    pub real: bool,
}

impl Row {
    /// The larger of the total's and the mean's change.
    pub fn growth_pct(&self) -> f64 {
        self.total_change_pct.max(self.mean_change_pct)
    }
}

/// A zone only one side has.
#[derive(Clone, Debug, Serialize)]
pub struct OneSided {
    /// The op code.
    pub op: String,
    /// The zone name.
    pub zone: String,
    /// Its figures.
    pub stats: Stats,
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
    pub rows: Vec<Row>,
    /// Zones only the base has.
    pub removed: Vec<OneSided>,
    /// Zones only the new run has.
    pub added: Vec<OneSided>,
    /// Problems reading either side.
    pub problems: Vec<String>,
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

/// Compares `new` against `base`.
pub fn diff(base: &Samples, new: &Samples) -> Diff {
    let exact = base.exact && new.exact;
    let mut rows = Vec::new();
    let mut removed = Vec::new();
    for ((op, zone), b) in &base.zones {
        let Some(n) = new.zones.get(&(op.clone(), zone.clone())) else {
            removed.push(OneSided { op: op.clone(), zone: zone.clone(), stats: Stats::of(b) });
            continue;
        };
        let (bs, ns) = (Stats::of(b), Stats::of(n));
        let total_change_pct = pct(ns.total_cycles as f64, bs.total_cycles as f64);
        let mean_change_pct = pct(ns.mean_cycles, bs.mean_cycles);
        let changed = total_change_pct != 0.0 || mean_change_pct != 0.0;
        let (confidence, real) = if exact {
            (None, changed)
        } else {
            let c = mann_whitney(&cycles(b), &cycles(n)).map_or(0.0, |p| 1.0 - p);
            // A count change is real whatever the durations do: the zones ran a different
            // number of times.
            (Some(c), changed && (c >= CONFIDENCE || bs.count != ns.count))
        };
        rows.push(Row {
            op: op.clone(),
            zone: zone.clone(),
            base: bs,
            new: ns,
            total_change_pct,
            mean_change_pct,
            confidence,
            real,
        });
    }
    let added = new
        .zones
        .iter()
        .filter(|(k, _)| !base.zones.contains_key(*k))
        .map(|((op, zone), s)| OneSided { op: op.clone(), zone: zone.clone(), stats: Stats::of(s) })
        .collect();
    let size = |r: &Row| r.total_change_pct.abs().max(r.mean_change_pct.abs());
    rows.sort_by(|a, b| size(b).total_cmp(&size(a)).then_with(|| (&a.op, &a.zone).cmp(&(&b.op, &b.zone))));
    let mut problems: Vec<String> = base.problems.iter().map(|p| format!("base: {p}")).collect();
    problems.extend(new.problems.iter().map(|p| format!("new: {p}")));
    Diff { base: base.source.clone(), new: new.source.clone(), exact, rows, removed, added, problems }
}

fn cycles(s: &[Sample]) -> Vec<f64> {
    s.iter().map(|s| s.cycles as f64).collect()
}

impl Diff {
    /// Rows whose total or mean grew by more than `pct` percent with a real change.
    pub fn regressions(&self, pct: f64) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.real && r.growth_pct() > pct).collect()
    }

    /// Whether nothing changed at all.
    pub fn unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.rows.iter().all(|r| !r.real)
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
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
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
                                + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
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
    let shown: Vec<&Row> = d.rows.iter().filter(|r| all || r.real).collect();
    if shown.is_empty() && d.added.is_empty() && d.removed.is_empty() {
        let _ = writeln!(out, "no change in {} zone row(s)", d.rows.len());
    }
    if !shown.is_empty() {
        let _ = writeln!(
            out,
            "\n{:<20} {:<24} {:>13} {:>13} {:>9} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}{}",
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
            let _ = writeln!(
                out,
                "{:<20} {:<24} {:>13} {:>13} {:>9} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}{}",
                r.op,
                r.zone,
                format!("{}->{}", r.base.count, r.new.count),
                format!("{}", r.new.total_cycles),
                signed(r.total_change_pct),
                format!("{:.1}", r.new.mean_cycles),
                format!("{:.1}", r.new.mean_ns),
                signed(r.mean_change_pct),
                r.new.p50_cycles,
                r.new.p99_cycles,
                if r.real { "" } else { "(noise)" },
                r.confidence.map_or(String::new(), |c| format!(" {:.1}%", c * 100.0))
            );
        }
    }
    for (what, list) in [("only in new", &d.added), ("only in base", &d.removed)] {
        for z in list.iter() {
            let _ = writeln!(
                out,
                "{what}: {} / {}: {} zone(s), {} cycles total, mean {:.1}",
                z.op, z.zone, z.stats.count, z.stats.total_cycles, z.stats.mean_cycles
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

/// The comparison as JSON for CI, with the gate's verdict when `fail_above` is given.
pub fn to_json(d: &Diff, fail_above: Option<f64>) -> serde_json::Value {
    let mut v = serde_json::to_value(d).unwrap_or_default();
    if let Some(pct) = fail_above {
        let failed: Vec<serde_json::Value> = d
            .regressions(pct)
            .into_iter()
            .map(|r| serde_json::json!({"op": r.op, "zone": r.zone, "message": regression_message(r, pct)}))
            .collect();
        v["fail_above_pct"] = serde_json::json!(pct);
        v["failed"] = serde_json::Value::Array(failed);
    }
    v
}

/// One line naming a regression: op, zone, what grew, by how much, over the limit.
pub fn regression_message(r: &Row, pct: f64) -> String {
    format!(
        "{} / {}: total {} -> {} cycles ({}), mean {:.1} -> {:.1} cycles ({}): above the {pct}% limit{}",
        r.op,
        r.zone,
        r.base.total_cycles,
        r.new.total_cycles,
        signed(r.total_change_pct),
        r.base.mean_cycles,
        r.new.mean_cycles,
        signed(r.mean_change_pct),
        r.confidence.map_or(String::new(), |c| format!(" ({:.1}% confidence)", c * 100.0))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(exact: bool, zones: &[(&str, &[u64])]) -> Samples {
        let mut s = Samples { source: "test".into(), exact, ..Default::default() };
        for (z, c) in zones {
            s.zones
                .insert(("op".into(), z.to_string()), c.iter().map(|&c| Sample { cycles: c, ns: c as f64 }).collect());
        }
        s
    }

    #[test]
    fn stats_take_nearest_rank_percentiles() {
        let s: Vec<Sample> = (1..=100).map(|c| Sample { cycles: c, ns: c as f64 * 2.0 }).collect();
        let st = Stats::of(&s);
        assert_eq!((st.count, st.total_cycles, st.p50_cycles, st.p99_cycles), (100, 5050, 50, 99));
        assert_eq!((st.mean_cycles, st.p50_ns), (50.5, 100.0));
        assert_eq!(Stats::of(&[]).count, 0);
    }

    #[test]
    fn identical_exact_runs_have_no_change_and_a_doubled_zone_regresses() {
        let a = side(true, &[("loop", &[100, 100, 100]), ("other", &[5])]);
        let d = diff(&a, &a);
        assert!(d.unchanged() && d.regressions(0.0).is_empty());
        let b = side(true, &[("loop", &[200, 200, 200]), ("other", &[5])]);
        let d = diff(&a, &b);
        assert_eq!(d.rows[0].zone, "loop", "largest change first");
        assert_eq!((d.rows[0].total_change_pct, d.rows[0].mean_change_pct), (100.0, 100.0));
        let r = d.regressions(50.0);
        assert_eq!(r.len(), 1);
        assert!(regression_message(r[0], 50.0).contains("op / loop: total 300 -> 600 cycles (+100.0%)"));
        assert!(d.regressions(100.0).is_empty(), "exactly +100% is not above 100%");
    }

    #[test]
    fn noisy_runs_need_confidence() {
        // Overlapping samples with a slightly higher mean: not significant.
        let a = side(false, &[("z", &[100, 104, 98, 101, 99, 103])]);
        let b = side(false, &[("z", &[101, 105, 97, 102, 100, 104])]);
        let d = diff(&a, &b);
        assert!(!d.rows[0].real && d.regressions(0.1).is_empty(), "{:?}", d.rows[0]);
        // Every new sample above every base sample: p = 2/C(12,6) = 0.0022.
        let c = side(false, &[("z", &[200, 204, 198, 201, 199, 203])]);
        let d = diff(&a, &c);
        let conf = d.rows[0].confidence.unwrap();
        assert!((conf - (1.0 - 2.0 / 924.0)).abs() < 1e-9, "{conf}");
        assert_eq!(d.regressions(50.0).len(), 1);
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
        assert_eq!((d.added[0].zone.as_str(), d.removed[0].zone.as_str()), ("y", "x"));
        let text = render(&d, false);
        assert!(text.contains("only in new: op / y") && text.contains("only in base: op / x"), "{text}");
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
             0,1,1,BRISC,1,300,0,4,,,outer,ZONE_END,1,a.rs,\n",
        )
        .unwrap();
        let names = HashMap::from([((0, 3), "Matmul".to_string())]);
        let s = from_device_csv(&csv, &names).unwrap();
        let outer = &s.zones[&("Matmul".to_string(), "outer".to_string())];
        assert_eq!(outer, &vec![Sample { cycles: 100, ns: 200.0 }]);
        assert_eq!(s.zones[&("Matmul".to_string(), "inner".to_string())][0].cycles, 20);
        assert_eq!(s.problems.len(), 1, "the unmatched end is counted: {:?}", s.problems);
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
