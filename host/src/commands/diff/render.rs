//! The comparison as text (what `ttprof diff` prints) and as JSON (`--json`).

use super::{zone_label, Diff, DiffRow, FewSamples, RowKind, CONFIDENCE, KEPT};
use crate::sink::summary::{shown_name, NAME_SHOWN};

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
    let sampled = d
        .rows
        .iter()
        .filter(|r| {
            r.kind == RowKind::Zone
                && (r.base.samples < r.base.count || r.new.samples < r.new.count)
        })
        .count();
    if sampled > 0 {
        let _ = writeln!(
            out,
            "{sampled} row(s) have more than {KEPT} zones on a side: their p50, p99 and test are of a uniform sample \
             of {KEPT} zones of each such side (count, total and mean of every zone)"
        );
    }
    if !shown.is_empty() {
        let op_w = shown
            .iter()
            .map(|r| r.op.chars().count().min(NAME_SHOWN))
            .max()
            .unwrap_or(0)
            .max(20);
        let zone_w = shown
            .iter()
            .map(|r| r.zone_label().chars().count().min(NAME_SHOWN))
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
                shown_name(&r.op),
                shown_name(&r.zone_label()),
                format!("{}->{}", r.base.count, r.new.count),
                format!("{}", r.new.total_cycles),
                signed(r.total_change_pct),
                r.new.mean_cycles_text(),
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
                "{what}: {} / {}: {} zone(s), {} cycles total, mean {}",
                z.op,
                zone_label(&z.zone, z.kind),
                z.stats.count,
                z.stats.total_cycles,
                z.stats.mean_cycles_text()
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
        "{} / {}: total {} -> {} cycles ({}), mean {} -> {} cycles ({}): above the {pct}% limit{}",
        r.op,
        r.zone_label(),
        r.base.total_cycles,
        r.new.total_cycles,
        signed(r.total_change_pct),
        r.base.mean_cycles_text(),
        r.new.mean_cycles_text(),
        signed(r.mean_change_pct),
        match (r.too_few_samples, r.confidence) {
            (true, _) => format!(
                " (too few samples to tell: {} vs {})",
                r.base.samples, r.new.samples
            ),
            (false, Some(c)) => format!(" ({:.1}% confidence)", c * 100.0),
            (false, None) => String::new(),
        }
    )
}
