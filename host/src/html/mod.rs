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

/// Writes the page to `path` atomically.
pub fn write_file(path: &Path, t: &Timeline) -> Result<()> {
    write_atomic(path, |w| write(w, t))
}

/// Writes the page to `w`.
pub fn write(w: &mut impl Write, t: &Timeline) -> io::Result<()> {
    let data = data_json(t);
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
    write!(w, "</script>\n<script>\n{JS}</script>\n</body>\n</html>\n")
}

/// A JSON string literal that is also safe inside `<script>` (no `<`).
fn js_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into()).replace('<', "\\u003c")
}

fn data_json(t: &Timeline) -> String {
    let (lo, hi) = t.bounds_ns().unwrap_or((0.0, 0.0));
    let t0 = lo.floor() as i64;
    let rel = |ns: f64| (ns.round() as i64 - t0).to_string();
    let opt = |v: Option<f64>| v.map_or("null".to_string(), rel);
    let mut s = String::with_capacity(64 + t.zones.len() * 48);
    let _ = write!(s, "{{\"arch\":{},\"t0\":{t0},\"span\":{}", js_str(t.arch.name()), (hi.round() as i64 - t0).max(0));
    let _ = write!(
        s,
        ",\"summary\":{}",
        js_str(&format!(
            "{} zones on {} lanes, {} ops, {:.3} \u{b5}s of {}; host time starts at {:.3} \u{b5}s",
            t.zones.len(),
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
    for z in &t.zones {
        if !z.start_ns.is_finite() || !z.end_ns.is_finite() {
            continue;
        }
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
    s
}

#[cfg(test)]
mod tests;
