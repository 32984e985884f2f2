//! A self-contained HTML timeline: one file, no network, the viewer's JS and CSS inline and
//! the data embedded as JSON.
//!
//! The page draws one lane per (chip, tile, RISC) with zones stacked by nesting depth,
//! above them a row of ops (device kernel spans), on a canvas. The point records (events,
//! timestamped data and sum zones, [`crate::timeline::Mark`]) are small triangles at the top
//! of their lane, colored by kind. Wheel zooms around the pointer, dragging or the arrow
//! keys pan, shift+wheel scrolls the lanes, `0` or Reset shows the whole run; hovering a
//! zone shows its name, source location, core and RISC, op, start (host µs and device cycle),
//! duration (ns and cycles) and a value zone's value; hovering a mark shows its name, source location, kind,
//! core, op, time (host µs and device cycle) and its data value, or a sum zone's count of
//! measurements, total and mean cycles.
//!
//! Embedded data (times in whole ns relative to `t0`, the earliest time on the timeline):
//! `lanes: [[label, chip, depth]]`, `sites: [[name, "file:line"]]`,
//! `ops: [[name, run, chip, kernel start, kernel end, host start, host end]]` (null when
//! unknown), `zones`, flat, 9 values each: lane, site, depth, start, duration, op
//! (-1: none), start cycle, cycles, value (a value zone's `value_zone!` value; -1: a plain
//! zone); and `marks`, flat, 8 values each: lane, site, kind
//! (0 event, 1 data, 2 sum zone), time, op (-1: none), cycle, a, b, where a and b are
//! 0 and 0 for an event, the payload and 0 for data, the total cycles and the count of
//! measurements for a sum zone. Every value of a zone or mark is a JSON integer, except that
//! a device cycle count (a start, cycle or cycles), payload or total above 2^53 - 1
//! (JavaScript's `Number.MAX_SAFE_INTEGER`, above which a JSON number is silently rounded)
//! is a string of its decimal digits, e.g. `"18446744073709551615"`. Zones and marks are in the timeline's order (lane by lane, in
//! opening order).
//!
//! A page embeds at most [`MAX_ZONES`] zones (about 50 bytes each, and what a browser still
//! draws smoothly): beyond that it keeps the longest ones, says so in its header line, and
//! the caller reports how many were left out (every zone stays in the device CSV and the
//! trace JSON). Likewise at most [`MAX_MARKS`] marks: beyond that it keeps sum zones first,
//! then data, then events, the earliest of each kind first, and [`Shown`] says how many
//! were left out (every mark stays in the device CSV and the trace JSON).
//!
//! Opening `timeline.html#selftest` makes the page drive its own hover and zoom handlers
//! and write what happened into `#selftest` (for headless browser tests).

mod sink;
pub(crate) use sink::HtmlPage;

use crate::atomic::write_atomic;
use crate::error::Result;
use crate::inputs::Inputs;
use crate::ops::Ops;
use crate::sink::exact;
use crate::timebase::TileClock;
use crate::timeline::{MarkKind, Timeline, Zone};
use std::cmp::Ordering;
use std::io::{self, Write};
use std::path::Path;

/// The file name ttprof writes.
pub const FILE_NAME: &str = "ttprof_timeline.html";

const CSS: &str = include_str!("timeline.css");
const JS: &str = include_str!("timeline.js");

/// Most zones one page embeds.
pub const MAX_ZONES: usize = 1_000_000;

/// Most marks (events, data, sum zones) one page embeds.
pub const MAX_MARKS: usize = 1_000_000;

/// What a page shows of its timeline's zones and marks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shown {
    /// Zones embedded.
    pub zones: usize,
    /// Zones left out (the shortest).
    pub hidden: usize,
    /// Duration of the shortest zone shown, host ns (0 when no zone is shown).
    pub(crate) shortest_shown_ns: f64,
    /// Marks embedded.
    pub marks: usize,
    /// Marks left out (a page keeps sum zones, then data, then events, the earliest of each
    /// kind first).
    pub(crate) marks_hidden: usize,
}

/// Writes the page to `path` atomically (never over one of `inputs`).
pub fn write_file(path: &Path, t: &Timeline, inputs: &Inputs) -> Result<Shown> {
    write_file_limited(path, t, (MAX_ZONES, MAX_MARKS), (0, 0), "", None, inputs)
}

/// What makes the page's op times exact at any cycle count: its ops' wrapper-zone times
/// (zones and marks are exact from their tiles' clocks, which the timeline carries).
/// Without them the page rounds the ops' `f64` ns, a ns or more off from 2^53 ns on.
#[derive(Clone, Copy)]
pub(crate) struct Clocks<'a> {
    pub(crate) device: &'a Ops,
}

/// [`write_file`] embedding at most `zones` zones and `marks` marks, of a timeline from which
/// [`prune`] dropped `pruned` (zones, marks) already, its times exact with `clocks`.
pub(crate) fn write_file_limited(
    path: &Path,
    t: &Timeline,
    (zones, marks): (usize, usize),
    pruned: (usize, usize),
    panel: &str,
    clocks: Option<Clocks>,
    inputs: &Inputs,
) -> Result<Shown> {
    let mut shown = Shown::default();
    write_atomic(path, inputs, |w| {
        shown = write_pruned(w, t, zones, marks, pruned, panel, clocks)?;
        Ok(())
    })?;
    Ok(shown)
}

/// Writes the page to `w`.
pub fn write(w: &mut impl Write, t: &Timeline) -> io::Result<()> {
    write_limited(w, t, MAX_ZONES, MAX_MARKS).map(|_| ())
}

/// Writes the page to `w`, embedding at most `zones` zones (the longest) and `marks` marks
/// (sum zones, then data, then events, the earliest of each first).
pub(crate) fn write_limited(
    w: &mut impl Write,
    t: &Timeline,
    zones: usize,
    marks: usize,
) -> io::Result<Shown> {
    write_pruned(w, t, zones, marks, (0, 0), "", None)
}

/// [`write_limited`] of a timeline from which [`prune`] already dropped `pruned` (zones,
/// marks): they count as left out. `panel` is HTML put after the timeline (the bottleneck
/// panel, [`crate::sink::analysis::html_panel`]; empty for none).
pub(crate) fn write_pruned(
    w: &mut impl Write,
    t: &Timeline,
    zones: usize,
    marks: usize,
    pruned: (usize, usize),
    panel: &str,
    clocks: Option<Clocks>,
) -> io::Result<Shown> {
    write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ttprof timeline</title>\n\
         <style>\n{CSS}</style>\n</head>\n<body>\n<header><h1>ttprof</h1><span class=\"info\" id=\"info\"></span>\
         <button id=\"zoom-in\" title=\"zoom in (+)\">+</button><button id=\"zoom-out\" title=\"zoom out (-)\">&minus;</button>\
         <button id=\"reset\" title=\"whole run (0)\">Reset</button></header>\n\
         <div id=\"view\"><canvas id=\"timeline\"></canvas></div>\n<div id=\"tip\"></div>\n<pre id=\"selftest\"></pre>\n{panel}\
         <script type=\"application/json\" id=\"ttprof-data\">"
    )?;
    // The data straight into the page: its text is ~48 bytes a zone (48 MB at the page's
    // 1 M-zone limit), never held whole.
    let mut out = FmtIo {
        w: &mut *w,
        error: None,
    };
    let shown = data_json(t, zones, marks, pruned, clocks, &mut out);
    if let Some(e) = out.error {
        return Err(e);
    }
    write!(w, "</script>\n<script>\n{JS}</script>\n</body>\n</html>\n")?;
    Ok(shown)
}

/// Which of `n` items to embed, given each one's key (`key(i)`, `None`: not drawable):
/// every drawable one, or the `limit` that `order` puts first (`Less`: `a` before `b`), ties
/// in the given order. Returns the choice, how many are kept and left out, and the last key
/// kept (`None` when none is). Keys are made again as needed, not listed (16 bytes an item
/// beside the ranked ones: a 1 M-zone page's prune briefly held 16 MB more, issue 41).
fn select<K: Copy>(
    n: usize,
    key: impl Fn(usize) -> Option<K>,
    limit: usize,
    order: impl Fn(&K, &K) -> Ordering,
) -> (Vec<bool>, usize, usize, Option<K>) {
    let keys = || (0..n).map(&key);
    let total = keys().flatten().count();
    if total <= limit {
        let last = keys().flatten().max_by(&order);
        return (keys().map(|k| k.is_some()).collect(), total, 0, last);
    }
    if limit == 0 {
        return (vec![false; n], 0, total, None);
    }
    // Sized to the drawable ones (collected from a filter, it grew by doubling).
    let mut ranked: Vec<K> = Vec::with_capacity(total);
    ranked.extend(keys().flatten());
    // The limit-th key: everything before it is kept, then ties up to the limit.
    let (_, cut, _) = ranked.select_nth_unstable_by(limit - 1, &order);
    let cut = *cut;
    let mut ties = limit
        - ranked
            .iter()
            .filter(|k| order(k, &cut) == Ordering::Less)
            .count();
    drop(ranked);
    let keep = keys()
        .map(|k| match k.map(|k| order(&k, &cut)) {
            Some(Ordering::Less) => true,
            Some(Ordering::Equal) if ties > 0 => {
                ties -= 1;
                true
            }
            _ => false,
        })
        .collect();
    (keep, limit, total - limit, Some(cut))
}

/// A zone's rank key: its host duration, ns (`None`: it cannot be drawn), by its lane's
/// `clock`.
pub(crate) fn zone_key(z: &Zone, clock: Option<&TileClock>) -> Option<f64> {
    let (start, end) = (z.start_ns(clock), z.end_ns(clock));
    (start.is_finite() && end.is_finite()).then(|| (end - start).max(0.0))
}

/// The page's zone order on keys: the longest first (`Less`: `a` before `b`).
pub(crate) fn zone_order(a: &f64, b: &f64) -> Ordering {
    b.total_cmp(a)
}

/// Which zones to embed: every drawable one, or the `limit` longest (ties in time order).
fn zone_selection(t: &Timeline, limit: usize) -> (Vec<bool>, Shown) {
    let clocks = t.lane_clocks();
    let key = |z: &Zone| zone_key(z, clocks.get(z.lane as usize).and_then(Option::as_ref));
    let (keep, zones, hidden, shortest) =
        select(t.zones.len(), |i| key(&t.zones[i]), limit, zone_order);
    (
        keep,
        Shown {
            zones,
            hidden,
            shortest_shown_ns: shortest.unwrap_or(0.0),
            ..Shown::default()
        },
    )
}

/// A mark's kind as the page numbers it, which is also its rank when a page has to leave
/// marks out (the highest kept first).
/// Drops from `t` the zones and marks a page limited to `zones` and `marks` can never
/// embed, whatever comes later: those with at least `zones` (`marks`) better ones before
/// them in the page's own order, and those it cannot draw. What is kept keeps its order, so
/// a page written afterwards is the page of the whole timeline. Returns the drawable zones
/// and marks dropped (they count as left out of the page), and, when zones were dropped,
/// the key of the last zone kept: a zone added later whose key is not before it in
/// [`zone_order`] can never be embedded either (`zones` earlier ones are at least as long).
pub(crate) fn prune(t: &mut Timeline, zones: usize, marks: usize) -> (usize, usize, Option<f64>) {
    let before = t.bounds_ns();
    let (keep, shown) = zone_selection(t, zones);
    let cut = (shown.hidden > 0).then_some(shown.shortest_shown_ns);
    let mut k = keep.into_iter();
    t.zones.retain(|_| k.next().unwrap_or(false));
    let (keep, _, marks_hidden) = mark_selection(t, marks);
    let mut k = keep.into_iter();
    t.marks.retain(|_| k.next().unwrap_or(false));
    // The page's time axis still spans what was dropped.
    t.dropped_span = before;
    (shown.hidden, marks_hidden, cut)
}

fn kind_code(k: MarkKind) -> u8 {
    match k {
        MarkKind::Event => 0,
        MarkKind::Data(_) => 1,
        MarkKind::Sum { .. } => 2,
    }
}

/// Which marks to embed: every drawable one, or `limit` of them: sum zones, then data, then
/// events, the earliest of each kind first (ties in timeline order).
fn mark_selection(t: &Timeline, limit: usize) -> (Vec<bool>, usize, usize) {
    let key = |i: usize| {
        let m = &t.marks[i];
        m.ns.is_finite().then_some((kind_code(m.kind), m.ns))
    };
    let (keep, shown, hidden, _) = select(t.marks.len(), key, limit, |a, b| {
        b.0.cmp(&a.0).then(a.1.total_cmp(&b.1))
    });
    (keep, shown, hidden)
}

/// A u64 as JSON that JavaScript reads exactly: a number up to 2^53 - 1, else a string.
struct Exact(u64);

impl std::fmt::Display for Exact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MAX_SAFE: u64 = (1 << 53) - 1;
        if self.0 <= MAX_SAFE {
            write!(f, "{}", self.0)
        } else {
            write!(f, "\"{}\"", self.0)
        }
    }
}

/// A JSON string literal that is also safe inside `<script>` (no `<`).
pub(crate) fn js_str(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_else(|_| "\"?\"".into())
        .replace('<', "\\u003c")
}

/// An `io::Write` as a `fmt::Write`, keeping the first I/O error (`fmt::Error` carries
/// none) for the caller to return.
struct FmtIo<'a, W: Write> {
    w: &'a mut W,
    error: Option<io::Error>,
}

impl<W: Write> std::fmt::Write for FmtIo<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.error.is_some() {
            return Err(std::fmt::Error);
        }
        self.w.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// The page's data (the JSON its script reads) into `s`; what it shows.
fn data_json(
    t: &Timeline,
    zone_limit: usize,
    mark_limit: usize,
    pruned: (usize, usize),
    clocks: Option<Clocks>,
    s: &mut impl std::fmt::Write,
) -> Shown {
    let (keep, mut shown) = zone_selection(t, zone_limit);
    let (keep_marks, marks, marks_hidden) = mark_selection(t, mark_limit);
    shown.hidden += pruned.0;
    shown.marks = marks;
    shown.marks_hidden = marks_hidden + pruned.1;
    let mut kinds = [0usize; 3];
    let mut on_lane = vec![false; t.lanes.len()];
    for (m, _) in t.marks.iter().zip(&keep_marks).filter(|(_, &k)| k) {
        kinds[kind_code(m.kind) as usize] += 1;
        on_lane[m.lane as usize] = true;
    }
    let (lo, hi) = t.bounds_ns().unwrap_or((0.0, 0.0));
    let t0 = lo.floor() as i64;
    let rel = |ns: f64| (ns.round() as i64 - t0).to_string();
    let opt = |v: Option<f64>| v.map_or("null".to_string(), rel);
    // Whole ns of a device time: exact from its lane's tile clock (the `f64` of it below
    // 2^36 ns, `exact`), else the model's `f64` rounded.
    let lane_clocks = t.lane_clocks();
    let whole = |lane: u32, cycles: u64, ns: f64| -> i64 {
        let clock = lane_clocks.get(lane as usize).and_then(Option::as_ref);
        exact::whole_at(clock, cycles, ns).map_or(ns.round() as i64, exact::to_i64)
    };
    let zone_at = |lane: u32, cycles: u64| -> i64 {
        let clock = lane_clocks.get(lane as usize).and_then(Option::as_ref);
        whole(lane, cycles, clock.map_or(f64::NAN, |c| c.host_ns(cycles)))
    };
    let device_span = |o: &crate::timeline::OpSpan| -> Option<(i64, i64)> {
        let k = clocks?.device.by_run.get(&(o.chip, o.run))?.kernel?;
        Some((
            exact::to_i64(exact::whole_of(&k.start)?),
            exact::to_i64(exact::whole_of(&k.end)?),
        ))
    };
    let _ = write!(
        s,
        "{{\"arch\":{},\"t0\":{t0},\"span\":{}",
        js_str(t.arch.name()),
        (hi.round() as i64 - t0).max(0)
    );
    let _ = write!(
        s,
        ",\"summary\":{}",
        js_str(&format!(
            "{} zones{} on {} lanes, {} marks ({} events, {} data, {} sum zones{}), {} ops, {:.3} \u{b5}s of {}; host time starts at {:.3} \u{b5}s",
            shown.zones,
            if shown.hidden > 0 {
                format!(" (the longest; {} shorter than {:.0} ns are not shown)", shown.hidden, shown.shortest_shown_ns)
            } else {
                String::new()
            },
            t.lanes.iter().zip(&on_lane).filter(|(l, &m)| l.depth > 0 || m).count(),
            shown.marks,
            kinds[0],
            kinds[1],
            kinds[2],
            if shown.marks_hidden > 0 {
                format!("; {} more are not shown: the page keeps sum zones, then data, then events, the earliest first", shown.marks_hidden)
            } else {
                String::new()
            },
            t.ops.len(),
            (hi - lo) / 1e3,
            t.arch,
            lo / 1e3
        ))
    );
    let _ = s.write_str(",\"lanes\":[");
    for (i, l) in t.lanes.iter().enumerate() {
        let _ = write!(
            s,
            "{}[{},{},{}]",
            if i > 0 { "," } else { "" },
            js_str(&l.name(t.arch)),
            l.chip,
            l.depth
        );
    }
    let _ = s.write_str("],\"sites\":[");
    for (i, site) in t.sites.iter().enumerate() {
        let loc = if site.file.is_empty() {
            String::new()
        } else {
            format!("{}:{}", site.file, site.line)
        };
        let _ = write!(
            s,
            "{}[{},{}]",
            if i > 0 { "," } else { "" },
            js_str(&site.name),
            js_str(&loc)
        );
    }
    let _ = s.write_str("],\"ops\":[");
    for (i, o) in t.ops.iter().enumerate() {
        let _ = write!(
            s,
            "{}[{},{},{},{},{},{},{}]",
            if i > 0 { "," } else { "" },
            js_str(&o.name),
            o.run,
            o.chip,
            device_span(o)
                .map_or_else(|| opt(o.kernel_ns.map(|k| k.0)), |k| (k.0 - t0).to_string()),
            device_span(o)
                .map_or_else(|| opt(o.kernel_ns.map(|k| k.1)), |k| (k.1 - t0).to_string()),
            opt(o.host_ns.map(|h| h.0 as f64)),
            opt(o.host_ns.map(|h| h.1 as f64)),
        );
    }
    let _ = s.write_str("],\"zones\":[");
    let mut first = true;
    for (z, _) in t.zones.iter().zip(&keep).filter(|(_, &k)| k) {
        let start = zone_at(z.lane, z.start_cycles);
        let _ = write!(
            s,
            "{}{},{},{},{},{},{},{},{},{}",
            if first { "" } else { "," },
            z.lane,
            z.site,
            z.depth,
            start - t0,
            (zone_at(z.lane, z.end_cycles) - start).max(0),
            z.op.map_or(-1, |o| o as i64),
            Exact(z.start_cycles),
            Exact(z.cycles()),
            z.value.map_or(-1, i64::from)
        );
        first = false;
    }
    let _ = s.write_str("],\"marks\":[");
    let mut first = true;
    for (m, _) in t.marks.iter().zip(&keep_marks).filter(|(_, &k)| k) {
        let (a, b) = match m.kind {
            MarkKind::Event => (0, 0),
            MarkKind::Data(v) => (v, 0),
            MarkKind::Sum {
                total_cycles,
                count,
            } => (total_cycles, count as u64),
        };
        let _ = write!(
            s,
            "{}{},{},{},{},{},{},{},{}",
            if first { "" } else { "," },
            m.lane,
            m.site,
            kind_code(m.kind),
            whole(m.lane, m.cycles, m.ns) - t0,
            m.op.map_or(-1, |o| o as i64),
            Exact(m.cycles),
            Exact(a),
            Exact(b)
        );
        first = false;
    }
    let _ = s.write_str("]}");
    shown
}

#[cfg(test)]
mod tests;
