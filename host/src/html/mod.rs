//! A self-contained HTML timeline: one file, no network, the viewer's JS and CSS inline and
//! the data embedded as JSON.
//!
//! The page draws one lane per (chip, tile, RISC) with zones stacked by nesting depth,
//! above them a row of ops (device kernel spans), on a canvas. Wheel zooms around the
//! pointer, dragging or the arrow keys pan, shift+wheel scrolls the lanes, `0` or Reset
//! shows the whole run; hovering a zone shows its name, source location, core and RISC,
//! op, start (host µs and device cycle) and duration (ns and cycles).
//!
//! Embedded data (times in whole ns relative to `t0`, the earliest time on the timeline):
//! `lanes: [[label, chip, depth]]`, `sites: [[name, "file:line"]]`,
//! `ops: [[name, run, chip, kernel start, kernel end, host start, host end]]` (null when
//! unknown), and `zones`, flat, 8 numbers each: lane, site, depth, start, duration, op
//! (-1: none), start cycle, cycles.
//!
//! A page embeds at most [`MAX_ZONES`] zones (about 50 bytes each, and what a browser still
//! draws smoothly): beyond that it keeps the longest ones, says so in its header line, and
//! the caller reports how many were left out (every zone stays in the device CSV and the
//! trace JSON).
//!
//! Opening `timeline.html#selftest` makes the page drive its own hover and zoom handlers
//! and write what happened into `#selftest` (for headless browser tests).

use crate::atomic::write_atomic;
use crate::error::Result;
use crate::timeline::Timeline;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// The file name ttprof writes.
pub const FILE_NAME: &str = "ttprof_timeline.html";

const CSS: &str = include_str!("timeline.css");
const JS: &str = include_str!("timeline.js");

/// Most zones one page embeds.
pub const MAX_ZONES: usize = 1_000_000;

/// What a page shows of its timeline's zones.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shown {
    /// Zones embedded.
    pub zones: usize,
    /// Zones left out (the shortest), and the shortest duration still shown.
    pub hidden: usize,
    pub shortest_shown_ns: f64,
}

/// Writes the page to `path` atomically.
pub fn write_file(path: &Path, t: &Timeline) -> Result<Shown> {
    let mut shown = Shown::default();
    write_atomic(path, |w| {
        shown = write_limited(w, t, MAX_ZONES)?;
        Ok(())
    })?;
    Ok(shown)
}

/// Writes the page to `w`.
pub fn write(w: &mut impl Write, t: &Timeline) -> io::Result<()> {
    write_limited(w, t, MAX_ZONES).map(|_| ())
}

/// Writes the page to `w`, embedding at most `limit` zones (the longest).
pub fn write_limited(w: &mut impl Write, t: &Timeline, limit: usize) -> io::Result<Shown> {
    let (data, shown) = data_json(t, limit);
    write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ttprof timeline</title>\n\
         <style>\n{CSS}</style>\n</head>\n<body>\n<header><h1>ttprof</h1><span class=\"info\" id=\"info\"></span>\
         <button id=\"zoom-in\" title=\"zoom in (+)\">+</button><button id=\"zoom-out\" title=\"zoom out (-)\">&minus;</button>\
         <button id=\"reset\" title=\"whole run (0)\">Reset</button></header>\n\
         <div id=\"view\"><canvas id=\"timeline\"></canvas></div>\n<div id=\"tip\"></div>\n<pre id=\"selftest\"></pre>\n\
         <script type=\"application/json\" id=\"ttprof-data\">"
    )?;
    w.write_all(data.as_bytes())?;
    write!(w, "</script>\n<script>\n{JS}</script>\n</body>\n</html>\n")?;
    Ok(shown)
}

/// Which zones to embed: every drawable one, or the `limit` longest (ties in time order).
fn selection(t: &Timeline, limit: usize) -> (Vec<bool>, Shown) {
    let drawable = |z: &crate::timeline::Zone| z.start_ns.is_finite() && z.end_ns.is_finite();
    let duration = |z: &crate::timeline::Zone| (z.end_ns - z.start_ns).max(0.0);
    let mut lengths: Vec<f64> = t.zones.iter().filter(|z| drawable(z)).map(duration).collect();
    let total = lengths.len();
    if total <= limit {
        let min = lengths.iter().copied().fold(f64::INFINITY, f64::min);
        return (t.zones.iter().map(drawable).collect(), Shown { zones: total, hidden: 0, shortest_shown_ns: if total > 0 { min } else { 0.0 } });
    }
    if limit == 0 {
        return (vec![false; t.zones.len()], Shown { zones: 0, hidden: total, shortest_shown_ns: 0.0 });
    }
    // The limit-th longest duration: everything longer is kept, then ties up to the limit.
    let (_, cut, _) = lengths.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
    let cut = *cut;
    let mut ties = limit - lengths.iter().filter(|&&d| d > cut).count();
    let keep: Vec<bool> = t
        .zones
        .iter()
        .map(|z| {
            let d = duration(z);
            let tie = drawable(z) && d == cut && ties > 0;
            ties -= tie as usize;
            drawable(z) && (d > cut || tie)
        })
        .collect();
    (keep, Shown { zones: limit, hidden: total - limit, shortest_shown_ns: cut })
}

/// A JSON string literal that is also safe inside `<script>` (no `<`).
fn js_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into()).replace('<', "\\u003c")
}

fn data_json(t: &Timeline, limit: usize) -> (String, Shown) {
    let (keep, shown) = selection(t, limit);
    let (lo, hi) = t.bounds_ns().unwrap_or((0.0, 0.0));
    let t0 = lo.floor() as i64;
    let rel = |ns: f64| (ns.round() as i64 - t0).to_string();
    let opt = |v: Option<f64>| v.map_or("null".to_string(), rel);
    let mut s = String::with_capacity(64 + shown.zones * 48);
    let _ = write!(s, "{{\"arch\":{},\"t0\":{t0},\"span\":{}", js_str(t.arch.name()), (hi.round() as i64 - t0).max(0));
    let _ = write!(
        s,
        ",\"summary\":{}",
        js_str(&format!(
            "{} zones{} on {} lanes, {} ops, {:.3} \u{b5}s of {}; host time starts at {:.3} \u{b5}s",
            shown.zones,
            if shown.hidden > 0 {
                format!(" (the longest; {} shorter than {:.0} ns are not shown)", shown.hidden, shown.shortest_shown_ns)
            } else {
                String::new()
            },
            t.lanes.iter().filter(|l| l.depth > 0).count(),
            t.ops.len(),
            (hi - lo) / 1e3,
            t.arch,
            lo / 1e3
        ))
    );
    s.push_str(",\"lanes\":[");
    for (i, l) in t.lanes.iter().enumerate() {
        let _ = write!(s, "{}[{},{},{}]", if i > 0 { "," } else { "" }, js_str(&l.name(t.arch)), l.chip, l.depth);
    }
    s.push_str("],\"sites\":[");
    for (i, site) in t.sites.iter().enumerate() {
        let loc = if site.file.is_empty() { String::new() } else { format!("{}:{}", site.file, site.line) };
        let _ = write!(s, "{}[{},{}]", if i > 0 { "," } else { "" }, js_str(&site.name), js_str(&loc));
    }
    s.push_str("],\"ops\":[");
    for (i, o) in t.ops.iter().enumerate() {
        let _ = write!(
            s,
            "{}[{},{},{},{},{},{},{}]",
            if i > 0 { "," } else { "" },
            js_str(&o.name),
            o.run,
            o.chip,
            opt(o.kernel_ns.map(|k| k.0)),
            opt(o.kernel_ns.map(|k| k.1)),
            opt(o.host_ns.map(|h| h.0 as f64)),
            opt(o.host_ns.map(|h| h.1 as f64)),
        );
    }
    s.push_str("],\"zones\":[");
    let mut first = true;
    for (z, _) in t.zones.iter().zip(&keep).filter(|(_, &k)| k) {
        let start = z.start_ns.round() as i64;
        let _ = write!(
            s,
            "{}{},{},{},{},{},{},{},{}",
            if first { "" } else { "," },
            z.lane,
            z.site,
            z.depth,
            start - t0,
            (z.end_ns.round() as i64 - start).max(0),
            z.op.map_or(-1, |o| o as i64),
            z.start_cycles,
            z.cycles()
        );
        first = false;
    }
    s.push_str("]}");
    (s, shown)
}

#[cfg(test)]
mod tests;
