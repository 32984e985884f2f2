//! The summary in one screen: what commands print by default (`--verbose` prints the whole
//! summary; `ttprof_summary.txt` and `ttprof_analysis.json` always hold everything).
//!
//! Per op, largest device kernel time first and at most [`MAX_OPS`] of them: its time and
//! verdict with its evidence; the critical path's largest shares; its waits, matched and
//! unmatched, the unmatched folded by reason and zone name (the reason said once); its
//! slowest zones apart from the runtime's own FW and KERNEL zones. Ops past [`MAX_OPS`] are
//! one line.

use super::{
    column_widths, grouped, grouped_int, name_width, write_row, OpSection, Summary, ZoneRow,
};
use crate::sink::analysis::{self, Analysis, CriticalPath, OpAnalysis};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Ops shown in detail.
pub const MAX_OPS: usize = 6;
/// Zones shown per op.
const TOP_ZONES: usize = 3;
/// Shares of the critical path shown per op.
const PATH_SHARES: usize = 3;
/// Text is wrapped at this many columns.
const WIDTH: usize = 100;

/// The summary `s` and the analysis `a` in one screen.
pub fn render(s: &Summary, a: &Analysis) -> String {
    crate::printable::printable(&render_raw(s, a)).into_owned()
}

fn render_raw(s: &Summary, a: &Analysis) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{}", s.clock);
    for o in s.ops.iter().take(MAX_OPS) {
        op_block(&mut t, o, a);
    }
    let rest = &s.ops[s.ops.len().min(MAX_OPS)..];
    if !rest.is_empty() {
        let ns: f64 = rest.iter().map(|o| o.kernel_ns).sum();
        let _ = writeln!(
            t,
            "{} more op(s), {} ns of device kernel time in all: ttprof_summary.txt has them",
            rest.len(),
            grouped(ns)
        );
    }
    t
}

/// One op: its first launch's analysis (with a note when it has several).
fn op_block(t: &mut String, o: &OpSection, a: &Analysis) {
    let first = o
        .launches
        .iter()
        .find_map(|&(chip, run)| a.ops.iter().find(|x| x.chip == chip && x.run == run));
    let mut head = format!("{}: device kernel time {} ns", o.op, grouped(o.kernel_ns));
    if o.runs > 1 {
        let _ = write!(head, " over {} runs", o.runs);
    }
    if let Some(v) = first.and_then(|x| x.verdict.as_ref()) {
        let _ = write!(head, "; bound by {}", v.bound_by_stage());
    }
    let _ = writeln!(t, "{head}");
    if let Some(x) = first {
        analysis_lines(t, x, o.runs);
    }
    zone_table(t, &o.zones);
}

/// The verdict's evidence, the critical path's largest shares and the waits.
fn analysis_lines(t: &mut String, x: &OpAnalysis, runs: u64) {
    let of_run = if runs > 1 {
        format!(" (run {})", x.run)
    } else {
        String::new()
    };
    if let Some(v) = &x.verdict {
        t.push_str(&analysis::wrap(&v.evidence, WIDTH));
        if !x.disagreeing_tiles.is_empty() {
            t.push_str(&analysis::wrap(
                &format!(
                    "{} tile(s) disagree: ttprof_summary.txt says how",
                    x.disagreeing_tiles.len()
                ),
                WIDTH,
            ));
        }
    }
    if !x.counters.is_empty() {
        t.push_str(&analysis::wrap(
            &format!("{}{of_run}", analysis::counters_line(&x.counters)),
            WIDTH,
        ));
    }
    if let Some(r) = &x.roofline {
        t.push_str(&analysis::wrap(
            &format!("{}{of_run}", analysis::roofline_line(r)),
            WIDTH,
        ));
    }
    if !x.counted_zones.is_empty() {
        t.push_str(&analysis::wrap(
            &format!("{}{of_run}", analysis::counted_zones_line(&x.counted_zones)),
            WIDTH,
        ));
    }
    if let Some(c) = &x.critical_path {
        let note = c
            .counters
            .as_ref()
            .map_or_else(String::new, |n| format!("; {n}"));
        t.push_str(&analysis::wrap(
            &format!("critical path{of_run}: {}{note}", path_shares(c)),
            WIDTH,
        ));
        t.push_str(&analysis::wrap(&waits(c), WIDTH));
    }
}

/// `c`'s largest shares, busy and waiting, largest first, and how many smaller ones.
fn path_shares(c: &CriticalPath) -> String {
    let (busy, waits) = analysis::shares(c);
    let pct = |v: u64| {
        if c.cycles == 0 {
            0.0
        } else {
            100.0 * v as f64 / c.cycles as f64
        }
    };
    let mut all: Vec<(u64, String)> = busy
        .into_iter()
        .map(|(who, v)| (v, format!("{} busy {:.0}%", short(&who), pct(v))))
        .chain(waits.into_iter().map(|((who, res, by), v)| {
            let (who, by) = (short(&who), ended_by(&by));
            (v, format!("{who} on {res} {:.0}%{by}", pct(v)))
        }))
        .collect();
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let shown: Vec<String> = all.iter().take(PATH_SHARES).map(|s| s.1.clone()).collect();
    let mut text = format!(
        "{} cycles: {}",
        grouped_int(c.cycles as u128),
        shown.join("; ")
    );
    if all.len() > PATH_SHARES {
        let _ = write!(text, "; +{} smaller", all.len() - PATH_SHARES);
    }
    text
}

/// `stage (RISC x-y)` as `stage x-y` (the verdict's evidence names each stage's RISC).
fn short(who: &str) -> String {
    match who.rsplit_once(" (") {
        Some((stage, rest)) => {
            let tile = rest.trim_end_matches(')').rsplit(' ').next().unwrap_or("");
            format!("{stage} {tile}")
        }
        None => who.to_string(),
    }
}

/// What ended a wait, shortly: the signal's name (its site is in the summary file), or that
/// nothing recorded did.
fn ended_by(by: &str) -> String {
    let signal = by.split('`').nth(1).filter(|_| by.starts_with("ended by"));
    match signal {
        Some(name) => format!(" (ended by `{name}`)"),
        None if by.is_empty() => String::new(),
        None => format!(" ({by})"),
    }
}

/// Matched and unmatched waits, the unmatched by reason, then by zone name.
fn waits(c: &CriticalPath) -> String {
    let mut by_reason: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for u in &c.unmatched_waits {
        *by_reason
            .entry(u.reason)
            .or_default()
            .entry(u.zone.as_str())
            .or_default() += u.count;
    }
    let unmatched: u64 = c.unmatched_waits.iter().map(|u| u.count).sum();
    let mut text = format!("waits: {} matched", c.matched_waits);
    if unmatched > 0 {
        let _ = write!(text, ", {unmatched} unmatched");
        let folded: Vec<String> = by_reason
            .iter()
            .map(|(reason, zones)| {
                let mut zones: Vec<(&str, u64)> = zones.iter().map(|(z, n)| (*z, *n)).collect();
                zones.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                let list: Vec<String> = zones.iter().map(|(z, n)| format!("{n} {z}")).collect();
                format!("{}: {reason}", list.join(", "))
            })
            .collect();
        let _ = write!(text, " ({})", folded.join("; "));
    }
    text
}

/// The runtime's own zones, which every launch has.
fn is_runtime_zone(name: &str) -> bool {
    name.ends_with("-FW") || name.ends_with("-KERNEL")
}

/// The op's slowest zones by total time (its user zones; the runtime's own when it has no
/// other), as a small table.
fn zone_table(t: &mut String, zones: &[ZoneRow]) {
    let user: Vec<&ZoneRow> = zones.iter().filter(|z| !is_runtime_zone(&z.zone)).collect();
    let rows: Vec<&ZoneRow> = if user.is_empty() {
        zones.iter().take(TOP_ZONES).collect()
    } else {
        user.into_iter().take(TOP_ZONES).collect()
    };
    if rows.is_empty() {
        return;
    }
    let header: Vec<String> = ["count", "total ns", "mean ns", "p99 ns", "mean cyc"]
        .map(String::from)
        .to_vec();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|z| {
            let [total, mean, _, p99, ..] = z.ns.shown();
            let [_, mean_cycles, ..] = z.cycles.shown();
            vec![z.count.to_string(), total, mean, p99, mean_cycles]
        })
        .collect();
    let title = "slowest zones";
    let name_w = name_width(rows.iter().map(|z| z.zone.as_str()), title);
    let widths = column_widths(&header, cells.iter());
    write_row(t, "  ", (title, name_w), &header, &widths);
    for (z, c) in rows.iter().zip(&cells) {
        write_row(t, "  ", (&z.zone, name_w), c, &widths);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::analysis::{CoreRef, PathSegment, UnmatchedWait};
    use crate::summary::Stats;

    fn zone(name: &str, total: f64) -> ZoneRow {
        let ns = Stats {
            total,
            mean: total / 4.0,
            ..Stats::default()
        };
        ZoneRow {
            zone: name.into(),
            count: 4,
            ns,
            cycles: ns,
        }
    }

    fn op(name: &str, run: u32, kernel_ns: f64) -> OpSection {
        OpSection {
            op: name.into(),
            runs: 1,
            kernel_ns,
            launches: vec![(0, run)],
            zones: vec![
                zone("BRISC-FW", 9e6),
                zone("BRISC-KERNEL", 8e6),
                zone("read-tile", 3e6),
                zone("write-tile", 2e6),
                zone("wait-in0", 1e6),
                zone("math-tile", 5e5),
            ],
            sums: vec![],
            values: vec![],
        }
    }

    fn summary(ops: Vec<OpSection>) -> Summary {
        Summary {
            ops,
            threshold_ns: 0.0,
            hidden: 0,
            hidden_total_ns: 0.0,
            estimated: 0,
            clock: "ns on the host clock: chip 0 at a nominal 1000 MHz (not aligned)".into(),
        }
    }

    fn core(stage: &str, risc: &str, tile: &str) -> CoreRef {
        CoreRef {
            tile: tile.into(),
            risc: risc.into(),
            stage: stage.into(),
        }
    }

    fn unmatched(zone: &str, tile: &str, count: u64) -> UnmatchedWait {
        UnmatchedWait {
            core: core("pack", "TRISC_2", tile),
            zone: zone.into(),
            at: "pack.rs:10".into(),
            resource: "semaphore 0".into(),
            reason: "no signal of its resource was recorded while it waited",
            count,
        }
    }

    fn segment(who: CoreRef, resource: Option<&str>, cycles: u64) -> PathSegment {
        PathSegment {
            core: who,
            kind: if resource.is_some() { "wait" } else { "busy" },
            on: None,
            resource: resource.map(String::from),
            zone: None,
            signal: None,
            unmatched: resource.map(|_| "no signal of its resource was recorded while it waited"),
            start_cycles: 0,
            end_cycles: cycles,
            cycles,
            ns: cycles as f64,
        }
    }

    fn analysis(run: u32) -> OpAnalysis {
        let path = CriticalPath {
            start_cycles: 0,
            end_cycles: 1000,
            cycles: 1000,
            ns: 1000.0,
            truncated: false,
            segments: vec![
                segment(core("pack", "TRISC_2", "1-1"), Some("semaphore 0"), 600),
                segment(core("pack", "TRISC_2", "1-1"), None, 300),
                segment(core("writer", "NCRISC", "1-1"), None, 60),
                segment(core("reader", "BRISC", "1-1"), None, 40),
            ],
            matched_waits: 7,
            // The same wait on four tiles, another on two: folded into one count each.
            unmatched_waits: ["1-1", "1-2", "2-1", "2-2"]
                .iter()
                .map(|t| unmatched("wait-dst-ready", t, 4))
                .chain(
                    ["1-1", "1-2"]
                        .iter()
                        .map(|t| unmatched("wait-packed", t, 1)),
                )
                .collect(),
            unmatched_signals: vec![],
            left_out: 0,
            counters: None,
        };
        OpAnalysis {
            op: "Add".into(),
            chip: 0,
            run,
            span_ns: 1000.0,
            riscs: vec![],
            verdict: None,
            disagreeing_tiles: vec![],
            tiles: vec![],
            tiles_left_out: 0,
            critical_path: Some(path),
            counters: vec![],
            counted_zones: vec![],
            roofline: None,
        }
    }

    #[test]
    fn unmatched_waits_are_folded_by_zone_with_their_reason_once() {
        let text = render(
            &summary(vec![op("Add", 1, 5e6)]),
            &Analysis {
                ops: vec![analysis(1)],
            },
        );
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "waits: 7 matched, 18 unmatched (16 wait-dst-ready, 2 wait-packed: no signal of its \
                 resource was recorded while it waited)"
            ),
            "{text}"
        );
        assert_eq!(
            flat.matches("no signal of its resource").count(),
            1,
            "{text}"
        );
        // The path's three largest shares, the rest counted; cores by stage and tile.
        assert!(
            flat.contains(
                "critical path: 1,000 cycles: pack 1-1 on semaphore 0 60% (unmatched); pack 1-1 \
                 busy 30%; writer 1-1 busy 6%; +1 smaller"
            ),
            "{text}"
        );
    }

    #[test]
    fn zones_shown_are_the_slowest_user_zones_and_ops_past_the_limit_are_one_line() {
        let ops: Vec<OpSection> = (0..MAX_OPS as u32 + 2)
            .map(|i| op(&format!("Op{i}"), i, 1e6 * (20 - i) as f64))
            .collect();
        let text = render(&summary(ops), &Analysis::default());
        assert!(
            text.contains("read-tile") && text.contains("write-tile"),
            "{text}"
        );
        assert!(text.contains("wait-in0"), "{text}");
        assert!(
            !text.contains("math-tile"),
            "only the slowest {TOP_ZONES}: {text}"
        );
        assert!(
            !text.contains("BRISC-FW") && !text.contains("BRISC-KERNEL"),
            "{text}"
        );
        assert!(text.contains("Op5:") && !text.contains("Op6:"), "{text}");
        assert!(
            text.contains("2 more op(s), 27,000,000 ns of device kernel time in all"),
            "{text}"
        );
        // Per op: a head line, a table header and three rows; the clock; the rest.
        assert_eq!(text.lines().count(), 1 + MAX_OPS * 5 + 1, "{text}");
    }

    /// Issue 41 (Low): the critical path's cycles were printed through an `f64` (2^64 - 1
    /// showed as `...616`).
    #[test]
    fn critical_path_cycles_print_exactly() {
        let mut x = analysis(1);
        let path = x.critical_path.as_mut().unwrap();
        (path.cycles, path.end_cycles) = (u64::MAX, u64::MAX);
        let text = render(
            &summary(vec![op("Add", 1, 5e6)]),
            &Analysis { ops: vec![x] },
        );
        assert!(
            text.contains("critical path: 18,446,744,073,709,551,615 cycles:"),
            "{text}"
        );
    }

    #[test]
    fn an_op_with_only_runtime_zones_shows_them() {
        let mut o = op("Add", 1, 5e6);
        o.zones.truncate(2);
        let text = render(&summary(vec![o]), &Analysis::default());
        assert!(
            text.contains("BRISC-FW") && text.contains("BRISC-KERNEL"),
            "{text}"
        );
    }
}
