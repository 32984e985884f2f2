//! `ttprof_samples.txt`: per op and kernel, the hottest lines by samples with their share,
//! its 95 % interval and, with `--lines`, the exact share beside it; then how the two agree.
//! Launches of the same op running the same kernel on the same core are one entry (their
//! samples and, beside them, their exact cycles added up): what a line costs is a property
//! of the code, and a short kernel needs the samples of several launches ([`merged`]).

use super::{interval, sampled_cause_name, SampleProfile, SampledKernel};
use crate::lines::symbolize::{short, Names};
use crate::lines::{KernelCycles, KernelKey, LineProfile, CAUSES, SPLIT_DROPPED};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Hottest lines listed per kernel.
const TOP_LINES: usize = 12;
/// Lines whose exact share is above this (percent) are compared.
pub(crate) const COMPARED_ABOVE: f64 = 5.0;
/// The agreement the benchmark asks for (percentage points).
pub(crate) const WITHIN_PP: f64 = 2.0;

/// How the sampled shares agree with the exact ones, over the lines above
/// [`COMPARED_ABOVE`] % of their kernel's exact cycles, in every sampled kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Kernels both sampled and measured exactly.
    pub kernels: usize,
    /// Lines compared.
    pub lines: usize,
    /// Of them, sampled within [`WITHIN_PP`] points of exact.
    pub(crate) within_pp: usize,
    /// Of them, exact inside the sampled share's 95 % interval.
    pub(crate) within_ci: usize,
    /// The largest difference, in percentage points, and where.
    pub(crate) max_diff_pp: f64,
    /// The line with the largest difference (`op RISC file:line`).
    pub worst: String,
}

impl std::fmt::Display for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sampled vs exact, {} line(s) above {COMPARED_ABOVE} % in {} kernel(s): {} within {WITHIN_PP} points, {} \
             inside their 95 % interval, largest difference {:.2} points ({})",
            self.lines, self.kernels, self.within_pp, self.within_ci, self.max_diff_pp, self.worst
        )
    }
}

/// Per source line (file, line): counts per cause.
fn by_line(
    key: &KernelKey,
    pcs: &BTreeMap<u32, [u64; CAUSES]>,
    names: &Names,
) -> BTreeMap<(String, u32), ([u64; CAUSES], String)> {
    let mut out: BTreeMap<(String, u32), ([u64; CAUSES], String)> = BTreeMap::new();
    for (&pc, c) in pcs {
        let info = names.get(&key.elf, pc);
        let src = info.source();
        let e = out
            .entry((src.file.clone(), src.line))
            .or_insert_with(|| ([0; CAUSES], src.function.clone()));
        for (a, b) in e.0.iter_mut().zip(c) {
            *a += b;
        }
    }
    out
}

fn causes_text(c: &[u64; CAUSES]) -> String {
    let t: u64 = c.iter().sum();
    let mut v: Vec<(u64, usize)> = (0..CAUSES).map(|i| (c[i], i)).filter(|x| x.0 > 0).collect();
    v.sort_by(|a, b| b.cmp(a));
    v.iter()
        .map(|&(n, i)| {
            format!(
                "{} {:.0}%",
                sampled_cause_name(i),
                100.0 * n as f64 / t as f64
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn loc(file: &str, line: u32) -> String {
    if file.is_empty() {
        "?".into()
    } else {
        format!("{}:{line}", short(file))
    }
}

pub(super) fn render(
    p: &SampleProfile,
    exact: Option<&LineProfile>,
    names: &Names,
) -> (String, Option<Agreement>) {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ttprof --sample: the pc of one core per tile every N cycles, taken by the tile's debug daisychain into L1\n\
         share: the line's samples over the kernel's samples, with its 95 % interval (the wider of the binomial one\n\
         and the spread between windows){}\n\
         causes (from the sample's bits): retiring (issue), stalled (load-use, icache miss), lsu-wait (a load/store\n\
         waiting to reach L1), fifo-wait (waiting on a register or FIFO), tensix-fifo (a TRISC's push waiting on\n\
         its coprocessor instruction FIFO), ttsync (a TRISC's TTSync read waiting); for TRISCs, one window in {}\n\
         shows group D instead (no pc): the share of those samples with the Tensix thread busy, its FIFO full, ...\n",
        if exact.is_some() {
            "; exact: the --lines share of the same run"
        } else {
            ""
        },
        super::GROUP_D_EVERY
    );
    let mut agree = exact.map(|_| Agreement::default());
    let exact_groups = exact.map(merged_exact);
    for (key, (runs, k)) in merged(p) {
        let ex = exact_groups.as_ref().and_then(|g| g.get(&key));
        render_kernel(&mut s, &key, &runs, &k, ex, names, agree.as_mut());
    }
    if p.kernels.is_empty() {
        s.push_str("no kernel was sampled\n");
    }
    if p.unwritten > 0 {
        let _ = writeln!(
            s,
            "{} slot(s) were not written when read (windows cut short by the end of a launch or a busy L1)",
            p.unwritten
        );
    }
    let keep = &p.timed_keep;
    if keep.kept < keep.seen {
        let _ = writeln!(
            s,
            "by innermost zone: {} of the {} timed samples are kept, a uniform subset (the profile holds at most {}); \
             their counts and intervals are the subset's",
            keep.kept,
            keep.seen,
            super::keep::MAX_TIMED
        );
    }
    if let Some(a) = &agree {
        let _ = writeln!(s, "{a}");
    }
    (s, agree)
}

/// The launches of one op, core and kernel as one: keyed by the first launch, with every
/// launch's run id.
pub(crate) fn merged(p: &SampleProfile) -> BTreeMap<KernelKey, (Vec<u32>, SampledKernel)> {
    let mut first: BTreeMap<(String, riscv_linker::Risc, std::path::PathBuf), KernelKey> =
        BTreeMap::new();
    let mut out: BTreeMap<KernelKey, (Vec<u32>, SampledKernel)> = BTreeMap::new();
    for (key, k) in &p.kernels {
        let group = first
            .entry((key.op.clone(), key.risc, key.elf.clone()))
            .or_insert_with(|| key.clone())
            .clone();
        let (runs, m) = out.entry(group).or_default();
        runs.push(key.run_id);
        m.add(k);
    }
    out
}

/// [`merged`] for the exact profile.
fn merged_exact(e: &LineProfile) -> BTreeMap<KernelKey, KernelCycles> {
    let mut first: BTreeMap<(String, riscv_linker::Risc, std::path::PathBuf), KernelKey> =
        BTreeMap::new();
    let mut out: BTreeMap<KernelKey, KernelCycles> = BTreeMap::new();
    for (key, k) in &e.kernels {
        let group = first
            .entry((key.op.clone(), key.risc, key.elf.clone()))
            .or_insert_with(|| key.clone())
            .clone();
        let m = out.entry(group).or_default();
        m.cores += k.cores;
        m.cycles += k.cycles;
        for (pc, c) in &k.pcs {
            let row = m.pcs.entry(*pc).or_insert([0; CAUSES]);
            for (a, b) in row.iter_mut().zip(c) {
                *a += b;
            }
        }
        for (zone, pcs) in &k.zones {
            let z = m.zones.entry(zone.clone()).or_default();
            for (pc, c) in pcs {
                let row = z.entry(*pc).or_insert([0; CAUSES]);
                for (a, b) in row.iter_mut().zip(c) {
                    *a += b;
                }
            }
        }
    }
    out
}

/// The kernel's samples by innermost zone: samples, share of the kernel's timed samples
/// with its 95 % interval, the exact share (`--lines`, split by zone too) and the zone's
/// hottest line.
fn render_zones(
    s: &mut String,
    key: &KernelKey,
    k: &SampledKernel,
    exact: Option<&KernelCycles>,
    names: &Names,
) {
    if k.zones.is_empty() {
        return;
    }
    // The timed samples of each window (by window number).
    let mut timed_windows: BTreeMap<u64, u64> = BTreeMap::new();
    for t in &k.timed {
        *timed_windows.entry(t.window).or_default() += 1;
    }
    let n = k.timed.len();
    let _ = writeln!(
        s,
        "  by innermost zone ({n} timed samples):\n  {:>8} {:>6} {:>15} {:>7}  {:<36} hottest line",
        "samples", "share", "95% interval", "exact", "zone"
    );
    let mut zones: Vec<(&String, u64)> = k
        .zones
        .iter()
        .map(|(z, pcs)| (z, pcs.values().flatten().sum()))
        .collect();
    zones.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total = |c: &[u64; CAUSES]| c.iter().sum::<u64>();
    for (zone, count) in zones {
        let per = k.zone_windows.get(zone);
        let w: Vec<(u64, u64)> = timed_windows
            .iter()
            .map(|(id, all)| (per.and_then(|p| p.get(id)).copied().unwrap_or(0), *all))
            .collect();
        let (lo, hi) = interval(&w);
        // No exact share per zone when the exact split was not made, or was dropped on a
        // core (its cycles are in no zone of the kernel's, so every share would be short).
        let exact_col = exact
            .filter(|e| !e.zones.is_empty() && !e.zones.contains_key(SPLIT_DROPPED))
            .map_or("-".to_string(), |e| {
                let c: u64 = e
                    .zones
                    .get(zone)
                    .map_or(0, |pcs| pcs.values().map(total).sum());
                format!("{:.1}%", 100.0 * c as f64 / e.cycles.max(1) as f64)
            });
        let hottest = by_line(key, &k.zones[zone], names)
            .into_iter()
            .max_by(|a, b| total(&a.1 .0).cmp(&total(&b.1 .0)).then(b.0.cmp(&a.0)))
            .map_or(String::new(), |((file, line), (c, f))| {
                format!("{} {f} ({} samples)", loc(&file, line), total(&c))
            });
        let _ = writeln!(
            s,
            "  {:>8} {:>5.1}% {:>15} {:>7}  {:<36} {}",
            count,
            100.0 * count as f64 / n.max(1) as f64,
            format!("{:.1}-{:.1}%", 100.0 * lo, 100.0 * hi),
            exact_col,
            zone,
            hottest
        );
    }
}

fn runs_text(runs: &[u32]) -> String {
    match runs {
        [one] => format!("run {one}"),
        _ => format!(
            "runs {}",
            runs.iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn render_kernel(
    s: &mut String,
    key: &KernelKey,
    runs: &[u32],
    k: &SampledKernel,
    exact: Option<&KernelCycles>,
    names: &Names,
    agree: Option<&mut Agreement>,
) {
    let lines = by_line(key, &k.pcs, names);
    let ex = exact.map(|e| {
        let totals: BTreeMap<(String, u32), u64> = by_line(key, &e.pcs, names)
            .into_iter()
            .map(|(l, (c, _))| (l, c.iter().sum()))
            .collect();
        (totals, e.cycles)
    });
    let _ = writeln!(
        s,
        "== op {} ({}) | {} | {} | {} samples in {} window(s) ({} outside the kernel), ~{} cycles{}",
        key.op,
        runs_text(runs),
        key.risc,
        key.elf
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
        k.samples,
        k.windows,
        k.outside,
        k.cycles,
        ex.as_ref()
            .map_or(String::new(), |(_, c)| format!(" (exact: {c} over all its cores)"))
    );
    let d = &k.tensix;
    if d.samples > 0 {
        let pct = |n: u64| 100.0 * n as f64 / d.samples as f64;
        let _ = writeln!(
            s,
            "  Tensix thread, {} group D samples in {} window(s): instructions in flight {:.0}%, FIFO from the RISC \
             full {:.0}%, MOP queued or expanding {:.0}%, RISC waiting on TTSync {:.0}%, on its PCBuf {:.0}%",
            d.samples,
            d.windows,
            pct(d.in_flight),
            pct(d.fifo_full),
            pct(d.mop_busy),
            pct(d.ttsync_wait),
            pct(d.pcbuf_wait)
        );
    }
    let total = |c: &[u64; CAUSES]| c.iter().sum::<u64>();
    let mut hot: Vec<_> = lines.iter().collect();
    hot.sort_by(|a, b| total(&b.1 .0).cmp(&total(&a.1 .0)).then(a.0.cmp(b.0)));
    let _ = writeln!(
        s,
        "  {:>8} {:>6} {:>15} {:>7} {:>6}  {:<36} {:<32} causes",
        "samples", "share", "95% interval", "exact", "diff", "line", "function"
    );
    let n = k.samples;
    // Per line and window: the line's samples (for its interval).
    let mut pc_line: BTreeMap<u32, (String, u32)> = BTreeMap::new();
    for &pc in k.pcs.keys() {
        let info = names.get(&key.elf, pc);
        pc_line.insert(pc, (info.source().file.clone(), info.source().line));
    }
    let ci = |file: &str, line: u32| {
        let w: Vec<(u64, u64)> = k
            .clusters
            .iter()
            .map(|win| {
                let all: u64 = win.iter().map(|x| x.1).sum();
                let here: u64 = win
                    .iter()
                    .filter(|(pc, _)| pc_line.get(pc).is_some_and(|l| l.0 == file && l.1 == line))
                    .map(|x| x.1)
                    .sum();
                (here, all)
            })
            .collect();
        interval(&w)
    };
    for ((file, line), (c, function)) in hot.iter().take(TOP_LINES) {
        let kk = total(c);
        let share = 100.0 * kk as f64 / n.max(1) as f64;
        let (lo, hi) = ci(file, *line);
        let (exact_col, diff_col) = match &ex {
            Some((t, cycles)) => {
                let e = 100.0 * *t.get(&(file.clone(), *line)).unwrap_or(&0) as f64
                    / (*cycles).max(1) as f64;
                (format!("{e:.1}%"), format!("{:+.1}", share - e))
            }
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "  {:>8} {:>5.1}% {:>15} {:>7} {:>6}  {:<36} {:<32} {}",
            kk,
            share,
            format!("{:.1}-{:.1}%", 100.0 * lo, 100.0 * hi),
            exact_col,
            diff_col,
            loc(file, *line),
            function,
            causes_text(c)
        );
    }
    render_zones(s, key, k, exact, names);
    if let (Some((t, cycles)), Some(a)) = (&ex, agree) {
        if n == 0 {
            return;
        }
        a.kernels += 1;
        for ((file, line), &c) in t {
            let e = 100.0 * c as f64 / (*cycles).max(1) as f64;
            if e <= COMPARED_ABOVE {
                continue;
            }
            let kk = lines.get(&(file.clone(), *line)).map_or(0, |x| total(&x.0));
            let share = 100.0 * kk as f64 / n as f64;
            let (lo, hi) = ci(file, *line);
            let d = (share - e).abs();
            a.lines += 1;
            a.within_pp += (d <= WITHIN_PP) as usize;
            a.within_ci += (100.0 * lo <= e && e <= 100.0 * hi) as usize;
            if d >= a.max_diff_pp {
                a.max_diff_pp = d;
                a.worst = format!("{} {} {}", key.op, key.risc, loc(file, *line));
            }
        }
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use riscv_linker::Risc;
    use std::path::PathBuf;

    fn key(run_id: u32, op: &str) -> KernelKey {
        KernelKey {
            run_id,
            op: op.into(),
            risc: Risc::Trisc1,
            elf: PathBuf::from("kernels/math"),
        }
    }

    fn kernel(pc: u32, n: u64) -> SampledKernel {
        let mut k = SampledKernel::default();
        let mut causes = [0; CAUSES];
        causes[0] = n;
        k.pcs.insert(pc, causes);
        k.samples = n;
        k.windows = 1;
        k.clusters.push(vec![(pc, n)]);
        k
    }

    #[test]
    fn launches_of_the_same_op_and_kernel_add_up() {
        let mut p = SampleProfile::default();
        p.kernels.insert(key(1, "Add"), kernel(0x6000, 10));
        p.kernels.insert(key(2, "Matmul"), kernel(0x6000, 7));
        p.kernels.insert(key(3, "Add"), kernel(0x6004, 5));
        let m = merged(&p);
        assert_eq!(m.len(), 2, "{m:?}");
        let (runs, add) = &m[&key(1, "Add")];
        assert_eq!(runs, &[1, 3]);
        assert_eq!((add.samples, add.windows, add.clusters.len()), (15, 2, 2));
        assert_eq!(add.pcs.len(), 2);
        assert_eq!(m[&key(2, "Matmul")].0, [2]);
        assert_eq!(runs_text(runs), "runs 1, 3");
    }

    /// With `--lines`, a kernel whose exact zone split was dropped (too many clock reads)
    /// has no exact share per zone: the column shows `-`, never `0.0%` (issue 41, High 3).
    #[test]
    fn a_dropped_exact_split_shows_no_exact_share_per_zone() {
        let mut k = kernel(0x6000, 10);
        let mut causes = [0; CAUSES];
        causes[0] = 10;
        k.zones
            .entry("tile".into())
            .or_default()
            .insert(0x6000, causes);
        k.zone_windows
            .entry("tile".into())
            .or_default()
            .insert(0, 10);
        k.timed = (0..10)
            .map(|seq| super::super::TimedSample {
                chip: 0,
                tile: riscv_linker::NocCoord::new(1, 1),
                time: seq * 64,
                pc: 0x6000,
                cause: 0,
                window: 0,
                seq,
            })
            .collect();
        let row = |exact: &KernelCycles| {
            let mut s = String::new();
            render_zones(&mut s, &key(1, "Add"), &k, Some(exact), &Names::default());
            s.lines()
                .find(|l| l.contains(" tile "))
                .unwrap_or_else(|| panic!("no zone row: {s}"))
                .to_string()
        };
        let mut exact = KernelCycles {
            cores: 1,
            cycles: 1000,
            ..KernelCycles::default()
        };
        let mut rows = BTreeMap::new();
        rows.insert(0x6000, [0; CAUSES]);
        exact.zones.insert(SPLIT_DROPPED.into(), rows.clone());
        let dropped = row(&exact);
        assert!(dropped.split_whitespace().nth(3) == Some("-"), "{dropped}");
        // A split that was made: the exact share is printed.
        exact.zones.clear();
        rows.insert(0x6000, {
            let mut c = [0; CAUSES];
            c[0] = 250;
            c
        });
        exact.zones.insert("tile".into(), rows);
        let split = row(&exact);
        assert_eq!(split.split_whitespace().nth(3), Some("25.0%"), "{split}");
    }
}
