//! The analysis as text: the summary's verdict lines and the HTML page's panel.

use super::*;

/// The verdicts as text, for the summary: one line per op with a verdict, one per
/// disagreeing tile. Empty when no op has one.
pub fn render(a: &Analysis) -> String {
    crate::printable::printable(&render_raw(a)).into_owned()
}

/// [`render`] before names are made printable.
fn render_raw(a: &Analysis) -> String {
    let mut out = String::new();
    for op in &a.ops {
        let Some(v) = &op.verdict else { continue };
        if out.is_empty() {
            out.push_str("\nbottleneck per op (typed waits; ttprof_analysis.json has every tile and RISC):\n");
        }
        out.push_str(&format!(
            "  {} (run {}): bound by {}: {}\n",
            op.op,
            op.run,
            v.bound_by_stage(),
            v.evidence
        ));
        if !op.disagreeing_tiles.is_empty() {
            for t in op.tiles.iter().filter(|t| v.disagrees(t)) {
                if let Some(tv) = &t.verdict {
                    out.push_str(&format!("    tile {} disagrees: {}\n", t.tile, tv.evidence));
                }
            }
        }
    }
    let mut paths = String::new();
    for op in &a.ops {
        if let Some(c) = &op.critical_path {
            paths.push_str(&paragraph(&op.op, op.run, c));
        }
    }
    let counted: Vec<String> = a
        .ops
        .iter()
        .filter(|op| !op.counters.is_empty() || !op.counted_zones.is_empty())
        .map(|op| {
            let lines: Vec<String> = [
                counters::line(&op.counters),
                op.roofline.as_ref().map(roofline::line).unwrap_or_default(),
                counters::zones_line(&op.counted_zones),
            ]
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect();
            format!("  {} (run {}): {}\n", op.op, op.run, lines.join("\n    "))
        })
        .collect();
    if !counted.is_empty() {
        out.push_str("\nperformance counters per op (ttprof run --counters):\n");
        out.extend(counted);
    }
    if !paths.is_empty() {
        out.push_str(
            "\ncritical path per op (each wait ended by the signal matched to it; ttprof_analysis.json has every segment):\n",
        );
        out.push_str(&paths);
    }
    out
}

/// Text for HTML (`&`, `<`, `>`, `"` escaped).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML page's panel: one `<details>` per op with a verdict (the verdict, its evidence,
/// a table of each RISC's busy and wait shares, the disagreeing tiles). Empty when no op has
/// a verdict.
pub(crate) fn html_panel(a: &Analysis) -> String {
    let mut out = String::new();
    for op in a.ops.iter().filter(|o| o.verdict.is_some()) {
        let Some(v) = &op.verdict else { continue };
        out.push_str(&format!(
            "<details><summary><b>{} (run {})</b>: bound by {}</summary><p>{}</p>\n<table><tr><th>RISC</th><th>stage</th>\
             <th>busy</th><th>waits</th><th>profiler</th></tr>\n",
            esc(&op.op),
            op.run,
            esc(&v.bound_by_stage()),
            esc(&v.evidence)
        ));
        for r in &op.riscs {
            let waits: Vec<String> = r
                .waits
                .iter()
                .map(|(w, ns)| format!("{} {:.0}%", esc(w), pct(*ns, op.span_ns)))
                .collect();
            let mut profiler = Vec::new();
            if r.profiler_stall_ns > 0.0 {
                profiler.push(format!(
                    "stalled {:.0}%",
                    pct(r.profiler_stall_ns, op.span_ns)
                ));
            }
            if r.records_lost > 0 {
                profiler.push(format!("{} record(s) lost", r.records_lost));
            }
            if r.missing_kernel_zone {
                profiler.push("no KERNEL zone".to_string());
            }
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td><td>{}</td></tr>\n",
                esc(r.risc),
                esc(&r.stage),
                pct(r.busy_ns, op.span_ns),
                waits.join(", "),
                profiler.join(", ")
            ));
        }
        out.push_str("</table>");
        if let Some(r) = &op.roofline {
            out.push_str(&format!(
                "<p class=\"roofline\">{}</p>",
                esc(&roofline::line(r))
            ));
        }
        if !op.disagreeing_tiles.is_empty() {
            out.push_str(&format!(
                "<p>tiles that disagree: {}</p>",
                esc(&op.disagreeing_tiles.join(" "))
            ));
        }
        out.push_str("</details>\n");
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"analysis\"><b>Bottleneck per op</b> (typed waits)\n{out}</section>\n")
}
