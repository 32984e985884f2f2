//! Chrome trace-event JSON for Perfetto, `chrome://tracing` and Tracy's `import-chrome`.
//!
//! * One process per chip (`pid` = chip + 1, named `Device <chip> (<arch>)`), one thread per
//!   (tile, RISC) (`tid` = `lane_tid`, named like `(0,0) [x=1 y=1] BRISC`), ordered with
//!   `process_sort_index` / `thread_sort_index`. Ids are numbers, as Tracy's importer needs.
//! * Zones are `B`/`E` pairs written per thread in nesting order (an enclosing zone opens
//!   first and closes last, an ending zone closes before one that starts at the same time),
//!   because Perfetto mis-nests `X` events whose rounded ends cross and Tracy's importer
//!   rounds `ts` and `dur` separately. `B` carries the zone's name, `"loc": "file:line"`
//!   (Tracy's importer turns it into a source location) and its op, run and raw cycles,
//!   and a value zone's value (`value_zone!`) as `"value"`.
//! * Ops get their own threads in each chip's process: `ops (device)` with each op's kernel
//!   span (first KERNEL start to last KERNEL end) and `ops (host)` with its host launch to
//!   completion from the op log, each split over more threads if ops overlap (at most
//!   `MAX_OPS_DEVICE_THREADS` and `MAX_OPS_HOST_THREADS` per chip, so that their tids
//!   never reach another kind's; ops beyond are left out and counted in
//!   `TraceStats::ops_left_out`). Signposts are process-wide instant events.
//! * Events, data and sum totals are thread instant events with their values in `args`,
//!   written among the thread's zones in opening order (before the first zone that starts
//!   after them), so a ring given in pieces ([`crate::sink::Sink::takes_pieces`]) is
//!   written byte for byte as it is whole.
//!
//! Times (`ts`) are microseconds on the host timeline, from whole host nanoseconds, so equal
//! times stay equal and order is never lost; a zone's or mark's is exact at any cycle count
//! when the writer has its tile's clock (`sink::exact`), and so are a device op span's ends
//! when it has the model's wrapper-zone times. Each is written with three decimals and `01`
//! more (a hundredth of a nanosecond) so that readers that truncate `ts * 1000` (Tracy's
//! importer) get the same whole nanosecond as readers that round: `1.001` µs alone parses
//! to a double just below it, which truncates to 1000 ns.

mod sink;
pub(crate) use sink::TraceJson;

use crate::atomic::write_atomic;
use crate::decode::NO_RUN;
use crate::error::Result;
use crate::inputs::Inputs;
use crate::oplog::Signpost;
use crate::ops::Ops;
use crate::profile::Part;
use crate::sink::exact;
use crate::timebase::TileClock;
use crate::timeline::{Lane, Mark, MarkKind, OpSpan, SiteLabel, Timeline};
use crate::zones::ZoneList;
use riscv_linker::Arch;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::io::{self, Write};
use std::path::Path;

/// The file name ttprof writes.
pub const FILE_NAME: &str = "ttprof_trace.json";

/// First tid of each op thread kind; lanes start at [`LANE_TID_BASE`].
const OPS_DEVICE_TID: u32 = 1;
const OPS_HOST_TID: u32 = 101;
/// The tid of the first (tile, RISC) lane thread ([`lane_tid`] adds the lane's bits).
pub(crate) const LANE_TID_BASE: u32 = 1000;
/// Most `ops (device)` threads per chip: their tids must stay below the host ops' tids.
pub(crate) const MAX_OPS_DEVICE_THREADS: usize = (OPS_HOST_TID - OPS_DEVICE_TID) as usize;
/// Most `ops (host)` threads per chip: their tids must stay below the lanes' tids.
pub(crate) const MAX_OPS_HOST_THREADS: usize = (LANE_TID_BASE - OPS_HOST_TID) as usize;

/// The process id of a chip.
pub(crate) fn chip_pid(chip: u32) -> u32 {
    chip + 1
}

/// The thread id of a (tile, RISC) lane: RISC in bits 0-2, NoC x in 3-10, y in 11-18.
pub(crate) fn lane_tid(lane: &Lane) -> u32 {
    LANE_TID_BASE
        + (lane.risc.index() as u32 | (lane.tile.x as u32) << 3 | (lane.tile.y as u32) << 11)
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Trace events written, metadata (`"ph":"M"`) events included.
    pub events: u64,
    /// Zones that overlapped an enclosing zone without nesting in it (corrupt times) and
    /// were cut at its end so that every thread stays properly nested.
    pub(crate) clamped: u64,
    /// Ops not drawn on an op thread: more overlapped them than a chip has op threads
    /// ([`MAX_OPS_DEVICE_THREADS`], [`MAX_OPS_HOST_THREADS`]); counted once per thread kind.
    pub(crate) ops_left_out: u64,
}

/// Writes the trace to `path` atomically (never over one of `inputs`).
pub fn write_file(path: &Path, t: &Timeline, inputs: &Inputs) -> Result<TraceStats> {
    let mut stats = TraceStats::default();
    write_atomic(path, inputs, |w| {
        stats = write(w, t)?;
        Ok(())
    })?;
    Ok(stats)
}

/// `ns` as microseconds: whole ns, plus a hundredth of a ns (see the module docs).
fn ts(ns: f64) -> String {
    ts_whole(ns.round() as i128)
}

/// Whole ns `n` as microseconds, as [`ts`].
fn ts_whole(n: i128) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let a = n.unsigned_abs();
    format!("{sign}{}.{:03}01", a / 1000, a % 1000)
}

/// The `ts` of a device time: `cycles` on the tile's `clock`, exact at any count
/// ([`exact::whole_at`]; `ns`, the model's `f64` of it, without a clock).
fn ts_at(clock: Option<&TileClock>, cycles: u64, ns: f64) -> String {
    exact::whole_at(clock, cycles, ns).map_or_else(|| ts(ns), ts_whole)
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into())
}

struct Out<W: Write> {
    w: W,
    first: bool,
    stats: TraceStats,
}

impl<W: Write> Out<W> {
    fn event(&mut self, body: std::fmt::Arguments) -> io::Result<()> {
        self.w
            .write_all(if self.first { b"\n{" } else { b",\n{" })?;
        self.first = false;
        self.w.write_fmt(body)?;
        self.stats.events += 1;
        self.w.write_all(b"}")
    }

    fn meta(&mut self, pid: u32, tid: u32, what: &str, arg: &str) -> io::Result<()> {
        self.event(format_args!(
            r#""name":"{what}","ph":"M","pid":{pid},"tid":{tid},"args":{{{arg}}}"#
        ))
    }
}

/// Writes the trace to `w`.
pub fn write(w: &mut impl Write, t: &Timeline) -> io::Result<TraceStats> {
    let chips: BTreeSet<u32> = t.lanes.iter().map(|l| l.chip).collect();
    let mut out = TraceWriter::begin(w, t.arch, &chips, &t.ops, &t.signposts, None)?;
    let mut marks = &t.marks[..];
    for (li, lane) in t.lanes.iter().enumerate() {
        let n = marks.partition_point(|m| m.lane as usize <= li);
        let (mine, rest) = marks.split_at(n);
        marks = rest;
        out.lane(
            li,
            lane,
            Part::WHOLE,
            t.lane_zones(li as u32),
            mine,
            &t.sites,
            &t.ops,
            t.clock(li as u32).as_ref(),
        )?;
    }
    out.finish().map(|(_, stats)| stats)
}

/// The trace written thread by thread: [`TraceWriter::begin`] writes the chips' processes
/// and their op threads, [`TraceWriter::lane`] one (tile, RISC) thread with its zones and
/// marks, [`TraceWriter::finish`] closes the document. Memory: one lane at a time.
pub(crate) struct TraceWriter<W: Write> {
    out: Out<W>,
    arch: Arch,
    /// The current lane's open zones, (end ns, end cycles), innermost last: carried from
    /// one piece of a ring to the next (as deep as the ring nests).
    open: Vec<(f64, u64)>,
}

impl<W: Write> TraceWriter<W> {
    /// Opens the document: a process per chip in `chips` (and per chip of an op), with the
    /// op threads and signposts.
    pub(crate) fn begin(
        w: W,
        arch: Arch,
        chips: &BTreeSet<u32>,
        ops: &[OpSpan],
        signposts: &[Signpost],
        device: Option<&Ops>,
    ) -> io::Result<Self> {
        let mut out = Out {
            w,
            first: true,
            stats: TraceStats::default(),
        };
        out.w.write_all(b"{\"traceEvents\":[")?;
        let chips: BTreeSet<u32> = chips
            .iter()
            .copied()
            .chain(ops.iter().map(|o| o.chip))
            .collect();
        for &chip in &chips {
            let pid = chip_pid(chip);
            out.meta(
                pid,
                0,
                "process_name",
                &format!(r#""name":{}"#, json(&format!("Device {chip} ({arch})"))),
            )?;
            out.meta(
                pid,
                0,
                "process_sort_index",
                &format!(r#""sort_index":{chip}"#),
            )?;
            write_ops(&mut out, ops, signposts, chip, device)?;
        }
        Ok(TraceWriter {
            out,
            arch,
            open: Vec::new(),
        })
    }

    /// One (tile, RISC) thread: its name, its zones (in opening order) and its marks, or,
    /// for a ring given in pieces ([`Part`]), the next piece of them: the name with the
    /// first piece, the zones still open carried to the next piece and closed after the
    /// last. Marks are written among the zones in opening order (a mark before a zone that
    /// starts after it; [`write_zones`]), so a ring written whole and in pieces gives the
    /// same bytes. `index` orders the threads; `labels` and `ops` are what the zones' and
    /// marks' indices point into; `clock`, the tile's, makes their times exact at any count.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lane(
        &mut self,
        index: usize,
        lane: &Lane,
        part: Part,
        zones: &(impl ZoneList + ?Sized),
        marks: &[Mark],
        labels: &[SiteLabel],
        ops: &[OpSpan],
        clock: Option<&TileClock>,
    ) -> io::Result<()> {
        let out = &mut self.out;
        let (pid, tid) = (chip_pid(lane.chip), lane_tid(lane));
        if part.first {
            self.open.clear();
            out.meta(
                pid,
                tid,
                "thread_name",
                &format!(r#""name":{}"#, json(&lane.name(self.arch))),
            )?;
            out.meta(
                pid,
                tid,
                "thread_sort_index",
                &format!(r#""sort_index":{}"#, LANE_TID_BASE as usize + index),
            )?;
        }
        let thread = Thread {
            pid,
            tid,
            labels,
            ops,
            clock,
        };
        write_zones(out, &thread, zones, marks, &mut self.open)?;
        if part.last {
            close(out, &thread, &mut self.open, None)?;
        }
        Ok(())
    }

    /// Closes the document; returns the writer and what was written.
    pub(crate) fn finish(mut self) -> io::Result<(W, TraceStats)> {
        write!(
            self.out.w,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"generator\":\"ttprof\",\"arch\":\"{}\"}}}}\n",
            self.arch
        )?;
        Ok((self.out.w, self.out.stats))
    }
}

/// A lane thread's ids and what its zones' and marks' indices point into.
struct Thread<'a> {
    pid: u32,
    tid: u32,
    labels: &'a [SiteLabel],
    ops: &'a [OpSpan],
    clock: Option<&'a TileClock<'a>>,
}

/// Writes the `E` of each zone in `open` (innermost last) that ends by `until` (all of
/// them with `None`).
fn close<W: Write>(
    out: &mut Out<W>,
    t: &Thread,
    open: &mut Vec<(f64, u64)>,
    until: Option<u64>,
) -> io::Result<()> {
    while let Some(&(end_ns, end)) = open.last() {
        if until.is_some_and(|u| end > u) {
            break;
        }
        open.pop();
        out.event(format_args!(
            r#""ph":"E","pid":{},"tid":{},"ts":{}"#,
            t.pid,
            t.tid,
            ts_at(t.clock, end, end_ns)
        ))?;
    }
    Ok(())
}

/// Writes `zones` (in opening order) as `B` events, each zone's `E` once the next zone
/// starts at or after its end, with `open` the zones still open (from the lane's earlier
/// pieces, and left for its later ones). Each mark goes before the first zone that opens
/// after it (opening order: by start, a longer span first, so a mark at a zone's start
/// comes after the zone unless the zone is empty), the rest after the last zone, each
/// after the `E` of the zones that end by its time: a thread's events are in time order,
/// and wherever a ring's pieces end they come in the same order.
fn write_zones<W: Write>(
    out: &mut Out<W>,
    t: &Thread,
    zones: &(impl ZoneList + ?Sized),
    marks: &[Mark],
    open: &mut Vec<(f64, u64)>,
) -> io::Result<()> {
    let (pid, tid, clock) = (t.pid, t.tid, t.clock);
    let mut marks = marks.iter().peekable();
    for z in zones.iter() {
        let before = |m: &&Mark| m.cycles < z.start_cycles;
        while let Some(m) = marks.next_if(before) {
            close(out, t, open, Some(m.cycles))?;
            write_mark(out, t, m)?;
        }
        close(out, t, open, Some(z.start_cycles))?;
        let site = &t.labels[z.site as usize];
        let op = z.op.map(|o| &t.ops[o as usize]);
        let loc = if site.file.is_empty() {
            String::new()
        } else {
            format!(
                r#","loc":{}"#,
                json(&format!("{}:{}", site.file, site.line))
            )
        };
        let op_arg = op
            .map(|o| format!(r#""op":{},"#, json(&o.name)))
            .unwrap_or_default();
        let run_arg = if z.run == NO_RUN {
            String::new()
        } else {
            format!(r#""run":{},"#, z.run)
        };
        let value_arg = z
            .value
            .map(|v| format!(r#","value":{v}"#))
            .unwrap_or_default();
        out.event(format_args!(
            r#""name":{},"cat":"zone","ph":"B","pid":{pid},"tid":{tid},"ts":{}{loc},"args":{{{op_arg}{run_arg}"start_cycles":{},"cycles":{}{value_arg}}}"#,
            json(&site.name),
            ts_at(clock, z.start_cycles, z.start_ns(clock)),
            z.start_cycles,
            z.cycles()
        ))?;
        let mut end = (z.end_ns(clock), z.end_cycles);
        if let Some(&(parent_ns, parent)) = open.last() {
            if end.1 > parent {
                out.stats.clamped += 1;
                end = (parent_ns, parent);
            }
        }
        open.push(end);
    }
    for m in marks {
        close(out, t, open, Some(m.cycles))?;
        write_mark(out, t, m)?;
    }
    Ok(())
}

/// One mark as a thread instant event.
fn write_mark<W: Write>(out: &mut Out<W>, t: &Thread, m: &Mark) -> io::Result<()> {
    let site = &t.labels[m.site as usize];
    let args = match m.kind {
        MarkKind::Event => format!(r#""cycles":{}"#, m.cycles),
        MarkKind::Data(v) => format!(r#""value":{v},"cycles":{}"#, m.cycles),
        MarkKind::Sum {
            total_cycles,
            count,
        } => {
            format!(
                r#""total_cycles":{total_cycles},"count":{count},"cycles":{}"#,
                m.cycles
            )
        }
    };
    out.event(format_args!(
        r#""name":{},"cat":"mark","ph":"i","s":"t","pid":{},"tid":{},"ts":{},"args":{{{args}}}"#,
        json(&site.name),
        t.pid,
        t.tid,
        ts_at(t.clock, m.cycles, m.ns)
    ))
}

/// An op drawn on an op thread: (op index, start ns, end ns).
type OpBar = (usize, f64, f64);

/// The op threads of one chip: device kernel spans and host spans, split over as many
/// threads as overlapping ops need; signposts as process-wide instants.
fn write_ops<W: Write>(
    out: &mut Out<W>,
    all: &[OpSpan],
    signposts: &[Signpost],
    chip: u32,
    device: Option<&Ops>,
) -> io::Result<()> {
    let pid = chip_pid(chip);
    let ops: Vec<usize> = (0..all.len()).filter(|&i| all[i].chip == chip).collect();
    // (tid base, thread name, host rather than device span)
    for (base, label, host, max) in [
        (
            OPS_DEVICE_TID,
            "ops (device)",
            false,
            MAX_OPS_DEVICE_THREADS,
        ),
        (OPS_HOST_TID, "ops (host)", true, MAX_OPS_HOST_THREADS),
    ] {
        let span = |i: usize| {
            let o = &all[i];
            if host {
                o.host_ns.map(|(a, b)| (a as f64, b as f64))
            } else {
                o.kernel_ns
            }
        };
        let spans: Vec<OpBar> = ops
            .iter()
            .filter_map(|&i| span(i).map(|(a, b)| (i, a, b)))
            .collect();
        let n = spans.len() as u64;
        let placed = op_threads(spans, max);
        debug_assert!(placed.steps <= 4 * n, "op placement is O(n log n)");
        out.stats.ops_left_out += placed.left_out;
        for (k, list) in placed.threads.iter().enumerate() {
            let tid = base + k as u32;
            let name = if k == 0 {
                label.to_string()
            } else {
                format!("{label} {}", k + 1)
            };
            out.meta(
                pid,
                tid,
                "thread_name",
                &format!(r#""name":{}"#, json(&name)),
            )?;
            out.meta(
                pid,
                tid,
                "thread_sort_index",
                &format!(r#""sort_index":{tid}"#),
            )?;
            for &(i, a, b) in list {
                let o = &all[i];
                // A device span's ends exact from the model's wrapper-zone times (the op's
                // `kernel_ns` are `f64`s: a ns or more off past 2^53 ns).
                let exact = (!host)
                    .then(|| device?.by_run.get(&(o.chip, o.run))?.kernel)
                    .flatten()
                    .and_then(|k| Some((exact::whole_of(&k.start)?, exact::whole_of(&k.end)?)));
                let (a, b) = match exact {
                    Some((a, b)) => (ts_whole(a), ts_whole(b)),
                    None => (ts(a), ts(b)),
                };
                let host = o
                    .log_host_ns
                    .map(|(s, e)| format!(r#","host_start_ns":{s},"host_end_ns":{e}"#))
                    .unwrap_or_default();
                out.event(format_args!(
                    r#""name":{},"cat":"op","ph":"B","pid":{pid},"tid":{tid},"ts":{},"args":{{"run":{}{host}}}"#,
                    json(&o.name),
                    a,
                    o.run
                ))?;
                out.event(format_args!(
                    r#""ph":"E","pid":{pid},"tid":{tid},"ts":{}"#,
                    b
                ))?;
            }
        }
    }
    for s in signposts.iter().filter(|s| s.device == chip) {
        out.event(format_args!(
            r#""name":{},"cat":"signpost","ph":"i","s":"p","pid":{pid},"tid":{OPS_DEVICE_TID},"ts":{}"#,
            json(&s.name),
            ts(s.host_ns as f64)
        ))?;
    }
    Ok(())
}

/// Op bars split over threads.
struct OpThreads {
    /// Each thread's bars, in start order.
    threads: Vec<Vec<OpBar>>,
    /// Bars that found every thread busy when there were already as many as allowed.
    left_out: u64,
    /// Threads looked at to place the bars: the work done.
    steps: u64,
}

/// Greedy: each op, in start order, goes to the first (lowest-numbered) thread whose last op
/// ended by its start, in whole ns; else to a new thread, if there are fewer than `max`
/// (thread ids are a limited range); else it is left out (and counted).
///
/// Starts only grow, so a thread free for one op stays free for every later op: busy
/// threads wait in a min-heap by their end, move to a set of free threads once an op starts
/// at or after it, and each op takes the lowest free one. That is O(n log n) for n ops;
/// a scan over every thread for each op was O(n^2) when many ops overlap (100,000 ops of
/// an op log that match no device records, all in one host time range, took 15 s). An end
/// or start that is NaN never compares as "ended by": such a thread is never reused, and
/// such an op gets a new thread.
fn op_threads(mut spans: Vec<OpBar>, max: usize) -> OpThreads {
    spans.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut threads: Vec<Vec<OpBar>> = Vec::new();
    let mut left_out = 0;
    // (rounded end, thread) of busy threads, earliest end first.
    let mut busy: BinaryHeap<Reverse<(Ns, usize)>> = BinaryHeap::new();
    let mut free: BTreeSet<usize> = BTreeSet::new();
    let mut steps = 0;
    for s in spans {
        let start = s.1.round();
        if !start.is_nan() {
            while let Some(&Reverse((end, k))) = busy.peek() {
                if end.0 > start {
                    break;
                }
                busy.pop();
                free.insert(k);
                steps += 2;
            }
        }
        let k = match if start.is_nan() {
            None
        } else {
            free.pop_first()
        } {
            Some(k) => {
                steps += 1;
                k
            }
            None if threads.len() < max => {
                threads.push(Vec::new());
                threads.len() - 1
            }
            None => {
                left_out += 1;
                continue;
            }
        };
        threads[k].push(s);
        let end = s.2.round();
        if !end.is_nan() {
            busy.push(Reverse((Ns(end), k)));
            steps += 1;
        }
    }
    OpThreads {
        threads,
        left_out,
        steps,
    }
}

/// A rounded time that is not NaN, ordered as a number.
#[derive(Clone, Copy, PartialEq)]
struct Ns(f64);

impl Eq for Ns {}

impl PartialOrd for Ns {
    fn partial_cmp(&self, other: &Ns) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ns {
    fn cmp(&self, other: &Ns) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests;
