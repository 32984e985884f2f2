//! What the stream holds, computed once from a readout: contexts and lanes, each lane's
//! properly nested begin/end sequence in host nanoseconds, the host rows with the op
//! log's launches and the messages (all spooled, [`super::records`]),
//! and the string and source-location tables the capture tool queries.
//!
//! A [`TracyStream`] is immutable, so it can be served again to a capture tool that connects
//! after an earlier one dropped out.

use super::layout::{self, Context, Layout};
use super::protocol::{MessageSeverity, MAX_SOURCE_LOCATIONS, MAX_THREADS};
use super::records::{RecordSpool, RecordWriter, Span};
use crate::decode::RecordKind;
use crate::error::{Error, Result};
use crate::issue::Issue;
use crate::oplog::{OpLog, OpLogEntry, OpRecord};
use crate::profile::{Profile, RingView};
use crate::readout::{Readout, RingId};
use crate::resolve::Resolution;
use crate::sink::{self, exact, Finished, Sink};
use crate::timebase::Timebase;
use crate::timeline::MarkKind;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

/// Marks a lane event as an end.
pub(crate) const END: u32 = u32::MAX;
/// Source-location keys are `SRCLOC_KEY_BASE + index`; string keys are `index + 1`.
pub(crate) const SRCLOC_KEY_BASE: u64 = 1 << 32;

/// A begin (of source location `srcloc`) or an [`END`], at host ns `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneEv {
    pub time: i64,
    pub(crate) srcloc: u32,
}

/// One RISC's row: its begin/end events are in the stream's [`RecordSpool`], in time order,
/// a run per piece of its ring (`first` and `last` are the earliest and latest times).
#[derive(Clone, Debug)]
pub(crate) struct Lane {
    pub context: u8,
    pub thread: u32,
    pub events: Vec<Span>,
    pub first: i64,
    pub last: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SrcLoc {
    pub name: u64,
    pub function: u64,
    pub file: u64,
    pub line: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct HostZone {
    pub start: i64,
    pub end: i64,
    pub(crate) srcloc: u32,
    pub text: String,
}

#[derive(Clone, Debug)]
pub(crate) struct Message {
    pub thread: u32,
    pub time: i64,
    /// Its place among a lane's messages at the same time.
    pub rank: Rank,
    pub severity: MessageSeverity,
    pub text: String,
}

/// What a message reports, in the order a lane's messages at the same time go out (by time,
/// then rank, then record order: the same whether the ring came whole or in pieces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Rank {
    /// A point record (event, data, sum), or a host signpost.
    Mark = 0,
    /// A value zone's value.
    Value = 1,
    /// Records dropped.
    Loss = 2,
}

/// Messages of one thread in time order, in the stream's [`RecordSpool`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct MessageRun {
    pub thread: u32,
    pub span: Span,
}

/// A host row: its thread and its zones in time order, non-overlapping, in the stream's
/// [`RecordSpool`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostRow {
    pub thread: u32,
    pub span: Span,
}

/// What to put in the stream.
#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// Program name shown by the capture tool (at most 63 bytes are sent).
    pub(crate) program_name: String,
    /// Device events, data, sums, value zones' values and in-band loss reports as messages
    /// on their lane.
    pub(crate) device_messages: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            program_name: "ttprof".into(),
            device_messages: true,
        }
    }
}

/// Counts describing a [`TracyStream`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// GPU contexts (Tracy holds 255).
    pub(crate) contexts: usize,
    /// Tiles per context.
    pub(crate) tiles_per_context: usize,
    /// RISC lanes with zones.
    pub lanes: usize,
    /// Device zones.
    pub zones: u64,
    /// Distinct source locations.
    pub(crate) source_locations: usize,
    /// Ops (host CPU zones).
    pub ops: usize,
    /// Host rows (threads) the ops need.
    pub(crate) host_rows: usize,
    /// Messages (device events, data, sums, losses; signposts).
    pub messages: usize,
    /// Zones cut back to their parent's end because they overlapped it partially.
    pub(crate) clipped_zones: u64,
    /// Host time every Tracy time is relative to (the earliest time in the stream).
    pub(crate) base_ns: i64,
    /// Latest host time in the stream (ns).
    pub(crate) last_ns: i64,
}

/// Everything one capture receives (see the module docs).
#[derive(Clone, Debug)]
pub struct TracyStream {
    pub(crate) program_name: String,
    pub(crate) host_info: String,
    pub(crate) strings: Vec<String>,
    pub(crate) srclocs: Vec<SrcLoc>,
    pub(crate) contexts: Vec<Context>,
    pub(crate) threads: BTreeMap<u32, String>,
    pub(crate) lanes: Vec<Lane>,
    /// Host rows.
    pub(crate) host: Vec<HostRow>,
    /// Sorted by thread (runs of one thread in the order they were made: merged by time,
    /// the earlier run first on ties, they give the messages sorted by (thread, time)).
    pub(crate) messages: Vec<MessageRun>,
    /// The lanes' events, the host rows' zones and the messages.
    pub(crate) records: RecordSpool,
    /// Counts describing it.
    pub summary: StreamCounts,
    /// Data that could not be streamed as it is (each says what was done instead).
    pub issues: Vec<Issue>,
}

/// Interns strings and source locations.
#[derive(Default)]
struct Tables {
    strings: Vec<String>,
    string_keys: HashMap<String, u64>,
    srclocs: Vec<SrcLoc>,
    srcloc_index: HashMap<SrcLoc, u32>,
}

impl Tables {
    fn string(&mut self, s: &str) -> u64 {
        if let Some(&k) = self.string_keys.get(s) {
            return k;
        }
        self.strings.push(s.to_string());
        let k = self.strings.len() as u64;
        self.string_keys.insert(s.to_string(), k);
        k
    }

    fn srcloc(&mut self, name: &str, function: &str, file: &str, line: u32) -> Result<u32> {
        let loc = SrcLoc {
            name: self.string(name),
            function: self.string(function),
            file: self.string(file),
            line,
        };
        if let Some(&i) = self.srcloc_index.get(&loc) {
            return Ok(i);
        }
        if self.srclocs.len() >= MAX_SOURCE_LOCATIONS {
            return Err(Error::Tracy {
                what: format!(
                    "more than {MAX_SOURCE_LOCATIONS} distinct zone sites and op names: Tracy cannot hold that many \
                     source locations"
                ),
            });
        }
        self.srclocs.push(loc);
        self.srcloc_index.insert(loc, self.srclocs.len() as u32 - 1);
        Ok(self.srclocs.len() as u32 - 1)
    }
}

/// Begin/end sequence (cycles) of one lane, properly nested, from its zones in opening
/// order ([`crate::profile::RingView::zones`]: by start, longest then outermost first): a
/// zone that ended is closed before one starting at that time; a zone overlapping its
/// parent partially is cut at the parent's end (counted in [`Nest::clipped`]). Made as it
/// is taken: what is held is the open zones' ends.
struct Nest<I: Iterator> {
    zones: std::iter::Peekable<I>,
    /// Ends of the open zones, outermost first.
    stack: Vec<u64>,
    /// Zones cut at their parent's end, so far.
    clipped: u64,
    /// Whether the open zones end after the last zone (the ring's last zones; else they
    /// stay open for the ring's next piece).
    flush: bool,
}

#[cfg(test)]
fn nest<I: Iterator<Item = (u64, u64, u32)>>(zones: I) -> Nest<I> {
    nest_after(zones, Vec::new(), true)
}

/// [`nest`] of a piece of a ring, the zones the pieces before left open being `stack`;
/// without `flush`, they and the piece's own open zones stay open ([`Nest::stack`]).
fn nest_after<I: Iterator<Item = (u64, u64, u32)>>(
    zones: I,
    stack: Vec<u64>,
    flush: bool,
) -> Nest<I> {
    Nest {
        zones: zones.peekable(),
        stack,
        clipped: 0,
        flush,
    }
}

impl<I: Iterator<Item = (u64, u64, u32)>> Iterator for Nest<I> {
    type Item = (u64, u32);

    fn next(&mut self) -> Option<(u64, u32)> {
        let Some(&(start, end, srcloc)) = self.zones.peek() else {
            return self.stack.pop_if(|_| self.flush).map(|t| (t, END));
        };
        if let Some(&top) = self.stack.last() {
            if top <= start {
                self.stack.pop();
                return Some((top, END));
            }
        }
        self.zones.next();
        let mut end = end;
        if let Some(&top) = self.stack.last() {
            if end > top {
                end = top;
                self.clipped += 1;
            }
        }
        self.stack.push(end);
        Some((start, srcloc))
    }
}

#[cfg(test)]
impl TracyStream {
    /// The stream of `p`, its rings from `rings`, as the events a capture receives and its
    /// tables (tests comparing two ways of giving the rings).
    pub(crate) fn of_rings_for_tests(
        p: &Profile,
        rings: &mut dyn crate::ring_source::RingSource,
    ) -> (Vec<u8>, String) {
        let mut b = TracySink::new(StreamOptions::default());
        crate::sink::drive_rings(p, rings, &mut [&mut b]).unwrap();
        let s = b.into_stream().unwrap();
        (s.events_for_tests(), s.tables_for_tests())
    }

    /// Every event a capture receives, in order (tests comparing two streams).
    pub(crate) fn events_for_tests(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = super::emit::Emitter::new(self);
        while e.next(&mut out).unwrap() {}
        out
    }

    /// The stream's tables, counts and issues, as text (tests comparing two streams).
    pub(crate) fn tables_for_tests(&self) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            self.strings, self.srclocs, self.threads, self.summary, self.issues
        )
    }
}

impl TracyStream {
    /// Builds the stream of `readout`'s zones (named through `res`, placed on the host
    /// timeline through `timebase`) and, if given, `oplog`'s launches and signposts (a
    /// [`Profile`] of a copy of them, through [`TracySink`]).
    pub fn build(
        readout: &Readout,
        res: &Resolution,
        oplog: Option<&OpLog>,
        timebase: &Timebase,
        opts: &StreamOptions,
    ) -> Result<TracyStream> {
        let p = Profile::resolved(
            readout.clone(),
            res.clone(),
            oplog.cloned(),
            timebase.clone(),
        );
        TracyStream::of(&p, opts)
    }

    /// The stream of a profile: its zones, point records and ops.
    pub fn of(p: &Profile, opts: &StreamOptions) -> Result<TracyStream> {
        let mut b = TracySink::new(opts.clone());
        sink::drive(p, &mut [&mut b])?;
        b.into_stream()
    }
}

/// The Tracy stream as a [`Sink`]: a lane per ring (its zones nested, cut where they
/// overlap their parent partially), device messages, and at the end the op log's
/// launches as host rows.
pub struct TracySink {
    opts: StreamOptions,
    t: Tables,
    layout: Layout,
    threads: BTreeMap<u32, String>,
    /// Lanes and per-ring issues keyed by ring, for the order of [`RingId`]s.
    lanes: Vec<(RingId, Lane)>,
    ring_issues: Vec<(RingId, Issue)>,
    /// Lane events, messages and host zones as they are made.
    records: Option<RecordWriter>,
    message_runs: Vec<MessageRun>,
    /// Earliest and latest time of a message.
    message_times: Option<(i64, i64)>,
    summary: StreamCounts,
    /// The stream (after [`Sink::finish`]).
    pub stream: Option<TracyStream>,
    /// The ring whose pieces are being given, between its pieces.
    in_ring: Option<InRing>,
}

/// What a ring's lane carries from piece to piece ([`Sink::takes_pieces`]).
struct InRing {
    /// The ends of the zones still open.
    stack: Vec<u64>,
    /// Zones cut at their parent's end, and zones, so far.
    clipped: u64,
    zones: u64,
    /// The latest event time, the times that went back, and the first event time.
    prev: i64,
    backwards: u64,
    first: Option<i64>,
    /// The lane's events, a run a piece.
    events: Vec<Span>,
    /// Records of a ring off the timebase.
    unplaced: u64,
}

impl Default for InRing {
    fn default() -> InRing {
        InRing {
            stack: Vec::new(),
            clipped: 0,
            zones: 0,
            prev: i64::MIN,
            backwards: 0,
            first: None,
            events: Vec::new(),
            unplaced: 0,
        }
    }
}

impl TracySink {
    /// A builder with `opts`.
    pub fn new(opts: StreamOptions) -> TracySink {
        TracySink {
            opts,
            t: Tables::default(),
            layout: Layout::default(),
            threads: BTreeMap::new(),
            lanes: Vec::new(),
            ring_issues: Vec::new(),
            records: Some(RecordWriter::new()),
            message_runs: Vec::new(),
            message_times: None,
            summary: StreamCounts::default(),
            stream: None,
            in_ring: None,
        }
    }
}

impl TracySink {
    /// Spools `messages` (of one thread or several), sorted by (thread, time, rank) with
    /// ties in the order given: one run per thread.
    fn spool_messages(&mut self, mut messages: Vec<Message>) -> Result<()> {
        messages.sort_by_key(|m| (m.thread, m.time, m.rank));
        self.summary.messages += messages.len();
        for m in &messages {
            let (lo, hi) = self.message_times.get_or_insert((m.time, m.time));
            (*lo, *hi) = ((*lo).min(m.time), (*hi).max(m.time));
        }
        let records = self
            .records
            .as_mut()
            .ok_or_else(|| Error::Internal("a message after the Tracy stream was built".into()))?;
        let mut rest = messages.into_iter().peekable();
        while let Some(thread) = rest.peek().map(|m| m.thread) {
            let run = std::iter::from_fn(|| rest.next_if(|m| m.thread == thread));
            let span = records.run(run)?;
            self.message_runs.push(MessageRun { thread, span });
        }
        Ok(())
    }

    /// The stream built (after the drive's `finish`).
    pub(crate) fn into_stream(mut self) -> Result<TracyStream> {
        self.stream
            .take()
            .ok_or_else(|| Error::Internal("the Tracy stream was not built".into()))
    }
}

impl Sink for TracySink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let tiles = p
            .readout
            .rings
            .iter()
            // A ring read in two passes holds its counts, not its records.
            .filter(|r| match r.released {
                Some(c) => c.zones > 0,
                None => r.records.kind.iter().any(|k| k.is_zone()),
            })
            .map(|r| (r.id.chip, r.id.tile));
        self.layout = Layout::new(tiles)?;
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        let id = v.ring.id;
        let r = &v.ring.records;
        let thread = layout::lane_thread(id.chip, id.tile, id.risc)?;
        let at = Some(id.location());
        let part = v.part();
        let mut st = match self.in_ring.take() {
            Some(st) if !part.first => st,
            _ => InRing::default(),
        };
        if !v.placed {
            st.unplaced += r.len() as u64;
            if part.last {
                let n = st.unplaced;
                let what = format!(
                    "chip {} has no clock mapping: {n} record(s) not streamed to Tracy",
                    id.chip
                );
                self.ring_issues
                    .push((id, Issue::error(at, what).with_count(n)));
            } else {
                self.in_ring = Some(st);
            }
            return Ok(());
        }
        // Whole ns exact at any count ([`exact`]); 0 off the timebase.
        let clock = p.timebase.tile_clock(id.chip, id.tile);
        let round = |cycles: u64, ns: f64| {
            exact::whole_at(clock.as_ref(), cycles, ns).map_or(0, exact::to_i64)
        };
        // Each label's source location, interned in the order the zones first name it.
        let mut srclocs: Vec<Option<u32>> = vec![None; p.labels.len()];
        for z in &v.zones {
            let Some(slot) = srclocs.get_mut(z.site as usize) else {
                continue;
            };
            if slot.is_none() {
                let l = &p.labels[z.site as usize];
                *slot = Some(match &l.function {
                    Some(function) => self.t.srcloc(&l.name, function, &l.file, l.line)?,
                    None => self.t.srcloc(&l.name, "unresolved", "(unresolved)", 0)?,
                });
            }
        }
        let mut messages = Vec::new();
        if self.opts.device_messages {
            for m in &v.marks {
                let name = &p.labels[m.site as usize].name;
                let text = match m.kind {
                    MarkKind::Event => name.clone(),
                    MarkKind::Data(value) => format!("{name} = {value}"),
                    MarkKind::Sum {
                        total_cycles,
                        count,
                    } => format!("{name}: {count} x, {total_cycles} cycles in all"),
                };
                messages.push(Message {
                    thread,
                    time: round(m.cycles, m.ns),
                    rank: Rank::Mark,
                    severity: MessageSeverity::Info,
                    text,
                });
            }
            // A value zone's value: Tracy's GPU zones carry no text or value (`ZoneText` and
            // `ZoneValue` apply to the thread's CPU zone), so it is a message on the lane at
            // the zone's start.
            for z in v.zones.iter().filter(|z| z.value.is_some()) {
                let name = &p.labels[z.site as usize].name;
                let text = format!("{name}: value {}", z.value.unwrap_or(0));
                messages.push(Message {
                    thread,
                    time: round(z.start_cycles, z.start_ns(clock.as_ref())),
                    rank: Rank::Value,
                    severity: MessageSeverity::Info,
                    text,
                });
            }
            for i in (0..r.len()).filter(|&i| r.kind[i] == RecordKind::Loss) {
                let c = r.start_at(i);
                let time = round(c, clock.as_ref().map_or(f64::NAN, |k| k.host_ns(c)));
                let text = format!("{} record(s) dropped: ring full", r.count_at(i));
                messages.push(Message {
                    thread,
                    time,
                    rank: Rank::Loss,
                    severity: MessageSeverity::Warning,
                    text,
                });
            }
        }
        if !messages.is_empty() || !v.zones.is_empty() {
            self.spool_messages(messages)?;
            self.threads
                .insert(thread, layout::lane_name(id.chip, id.tile, id.risc));
        }
        st.zones += v.zones.len() as u64;
        let mut seq = nest_after(
            v.zones.iter().map(|z| {
                let srcloc = srclocs.get(z.site as usize).copied().flatten();
                (z.start_cycles, z.end_cycles, srcloc.unwrap_or(0))
            }),
            std::mem::take(&mut st.stack),
            part.last,
        );
        let to_ns = |c: u64| round(c, clock.as_ref().map_or(f64::NAN, |k| k.host_ns(c)));
        let (prev, backwards, first) = (&mut st.prev, &mut st.backwards, &mut st.first);
        let events = (&mut seq).map(|(c, srcloc)| {
            let ns = to_ns(c);
            *backwards += (ns < *prev) as u64;
            *prev = (*prev).max(ns);
            first.get_or_insert(*prev);
            LaneEv {
                time: *prev,
                srcloc,
            }
        });
        let records = self
            .records
            .as_mut()
            .ok_or_else(|| Error::Internal("a ring after the Tracy stream was built".into()))?;
        let events = records.run(events)?;
        if events.count > 0 {
            st.events.push(events);
        }
        st.clipped += seq.clipped;
        st.stack = seq.stack;
        if !part.last {
            self.in_ring = Some(st);
            return Ok(());
        }
        if st.zones == 0 {
            return Ok(());
        }
        let clipped = st.clipped;
        if clipped > 0 {
            let what = format!("{clipped} zone(s) overlap their parent partially: cut at the parent's end for Tracy");
            self.ring_issues
                .push((id, Issue::warning(at, what).with_count(clipped)));
        }
        self.summary.clipped_zones += clipped;
        self.summary.zones += st.zones;
        let (first, last) = (st.first.unwrap_or(st.prev), st.prev);
        if st.backwards > 0 {
            let what = format!("the timebase maps {} later cycle count(s) to earlier host times: held at the previous time", st.backwards);
            self.ring_issues
                .push((id, Issue::warning(at, what).with_count(st.backwards)));
        }
        let context = self.layout.context_of(id.chip, id.tile).unwrap_or(0);
        self.lanes.push((
            id,
            Lane {
                context,
                thread,
                events: st.events,
                first,
                last,
            },
        ));
        Ok(())
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let mut t = std::mem::take(&mut self.t);
        let mut threads = std::mem::take(&mut self.threads);
        let mut lanes = std::mem::take(&mut self.lanes);
        let mut ring_issues = std::mem::take(&mut self.ring_issues);
        lanes.sort_by_key(|(id, _)| *id);
        ring_issues.sort_by_key(|(id, _)| *id);
        let lanes: Vec<Lane> = lanes.into_iter().map(|(_, l)| l).collect();
        let mut issues: Vec<Issue> = ring_issues.into_iter().map(|(_, i)| i).collect();
        let mut records = self
            .records
            .take()
            .ok_or_else(|| Error::Internal("the Tracy stream was built twice".into()))?;
        let (host, host_times, ops, signposts) = match &p.oplog {
            Some(log) => host_rows(log, &mut t, &mut threads, &mut records, &mut issues)?,
            None => (Vec::new(), None, 0, Vec::new()),
        };
        self.records = Some(records);
        self.spool_messages(signposts)?;
        let records = self
            .records
            .take()
            .ok_or_else(|| Error::Internal("the Tracy stream was built twice".into()))?
            .finish()?;
        let mut messages = std::mem::take(&mut self.message_runs);
        messages.sort_by_key(|r| r.thread);
        if threads.len() > MAX_THREADS {
            return Err(Error::Tracy {
                what: format!(
                    "{} lanes and host rows: Tracy holds at most {MAX_THREADS} threads",
                    threads.len()
                ),
            });
        }
        let mut summary = std::mem::take(&mut self.summary);
        let times = lanes.iter().flat_map(|l| [l.first, l.last]);
        let times = times.chain(host_times.into_iter().flat_map(|(lo, hi)| [lo, hi]));
        let times = times.chain(self.message_times.into_iter().flat_map(|(lo, hi)| [lo, hi]));
        let (base, last) = times.fold((None::<i64>, None::<i64>), |(lo, hi), t| {
            (
                Some(lo.map_or(t, |lo| lo.min(t))),
                Some(hi.map_or(t, |hi| hi.max(t))),
            )
        });
        summary.base_ns = base.unwrap_or(0);
        summary.last_ns = last.unwrap_or(0);
        let layout = std::mem::take(&mut self.layout);
        summary.contexts = layout.contexts.len();
        summary.tiles_per_context = layout.tiles_per_context;
        summary.lanes = lanes.len();
        summary.source_locations = t.srclocs.len();
        summary.ops = ops;
        summary.host_rows = host.len();
        let chips = p
            .readout
            .rings
            .iter()
            .map(|r| r.id.chip)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let found = issues.clone();
        self.stream = Some(TracyStream {
            program_name: self.opts.program_name.clone(),
            host_info: format!(
                "ttprof {}: {} device zones from {} chip(s), {} RISC lanes in {} GPU contexts",
                env!("CARGO_PKG_VERSION"),
                summary.zones,
                chips,
                summary.lanes,
                summary.contexts
            ),
            strings: t.strings,
            srclocs: t.srclocs,
            contexts: layout.contexts,
            threads,
            lanes,
            host,
            messages,
            records,
            summary,
            issues,
        });
        Ok(Finished {
            files: Vec::new(),
            issues: found,
        })
    }
}

/// What [`host_rows`] makes: the rows, the earliest and latest time of their zones, the
/// ops, the signposts (messages, not yet spooled).
type HostRows = (Vec<HostRow>, Option<(i64, i64)>, usize, Vec<Message>);

/// The op log's launches as CPU zones, one row per device unless launches overlap, each
/// row's zones spooled to `records`; signposts as messages on the device's first row.
/// What is held meanwhile is a few words per op (the op log itself is in memory).
fn host_rows(
    log: &OpLog,
    t: &mut Tables,
    threads: &mut BTreeMap<u32, String>,
    records: &mut RecordWriter,
    issues: &mut Vec<Issue>,
) -> Result<HostRows> {
    let file = log.path.display().to_string();
    // Per device: (start, end, source location, index in `all`).
    let mut by_device: BTreeMap<u32, Vec<(i64, i64, u32, usize)>> = BTreeMap::new();
    let mut times: Option<(i64, i64)> = None;
    let all: Vec<&OpRecord> = log.ops().collect();
    for (k, op) in all.iter().enumerate() {
        let start = op.host_start_ns.min(i64::MAX as u64) as i64;
        let mut end = op.host_end_ns.min(i64::MAX as u64) as i64;
        if end < start {
            issues.push(Issue::warning(
                None,
                format!(
                    "op {} (run {}) ends before it starts: shown with no duration",
                    op.op_code, op.run_id
                ),
            ));
            end = start;
        }
        let srcloc = t.srcloc(&op.op_code, &op.op_type, &file, 0)?;
        by_device
            .entry(op.device)
            .or_default()
            .push((start, end, srcloc, k));
        let (lo, hi) = times.get_or_insert((start, end));
        (*lo, *hi) = ((*lo).min(start), (*hi).max(end));
    }
    let mut rows = Vec::new();
    for (device, mut zones) in by_device {
        zones.sort_by_key(|z| (z.0, Reverse(z.1)));
        let mut device_rows: Vec<Vec<(i64, i64, u32, usize)>> = Vec::new();
        for z in zones {
            match device_rows
                .iter_mut()
                .find(|r| r.last().is_none_or(|l| l.1 <= z.0))
            {
                Some(row) => row.push(z),
                None => device_rows.push(vec![z]),
            }
        }
        for (i, zones) in device_rows.into_iter().enumerate() {
            let thread = layout::host_thread(device, i as u32)?;
            threads.insert(thread, layout::host_name(device, i as u32));
            let zones = zones.into_iter().map(|(start, end, srcloc, k)| HostZone {
                start,
                end,
                srcloc,
                text: op_zone_text(all[k]),
            });
            let span = records.run(zones)?;
            rows.push(HostRow { thread, span });
        }
    }
    let mut signposts = Vec::new();
    for e in &log.entries {
        if let OpLogEntry::Signpost(s) = e {
            let thread = layout::host_thread(s.device, 0)?;
            threads
                .entry(thread)
                .or_insert_with(|| layout::host_name(s.device, 0));
            let time = s.host_ns.min(i64::MAX as u64) as i64;
            signposts.push(Message {
                thread,
                time,
                rank: Rank::Mark,
                severity: MessageSeverity::Info,
                text: s.name.clone(),
            });
        }
    }
    Ok((rows, times, all.len(), signposts))
}

/// The text of an op's CPU zone: one line of `key=value` fields separated by spaces
/// (`op=Matmul run=3 device=0 tiles=4`), then the op's attributes in the op log's order.
/// It holds no comma, double quote or line break ([`plain`]), so `tracy-csvexport -u`
/// keeps one zone per CSV line.
fn op_zone_text(op: &OpRecord) -> String {
    let mut text = format!(
        "op={} run={} device={}",
        plain(&op.op_code),
        op.run_id,
        op.device
    );
    for (key, value) in &op.attributes {
        let value = match value {
            serde_json::Value::String(s) => plain(s),
            other => plain(&other.to_string()),
        };
        text.push_str(&format!(" {}={value}", plain(key)));
    }
    text
}

/// `s` on one line and safe in an unquoted CSV field: commas become semicolons, double
/// quotes single quotes, control characters and line separators spaces.
fn plain(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ',' => ';',
            '"' => '\'',
            '\u{2028}' | '\u{2029}' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_follows_ring_order_for_ties_and_clips_partial_overlaps() {
        // Zones in ring order (srcloc = position in the ring), nested in the model's
        // opening order (`markers`), as the stream's lanes are.
        let nest_ring = |zones: &[(u64, u64)]| {
            let mut r = crate::decode::Records::default();
            for &(start, end) in zones {
                r.push(RecordKind::Zone, 0, start, end, 0, 0, 1);
            }
            let open = crate::markers::markers(&r)
                .filter(|m| m.kind == crate::markers::MarkerType::ZoneStart);
            let mut n = nest(open.map(|m| {
                (
                    r.start_at(m.record as usize),
                    r.end_at(m.record as usize),
                    m.record,
                )
            }));
            let seq: Vec<(u64, u32)> = (&mut n).collect();
            (seq, n.clipped)
        };
        // Ring order: child 0, sibling 1 touching it, parent 2 (same start as the child).
        let (seq, clipped) = nest_ring(&[(10, 20), (20, 30), (10, 40), (40, 40)]);
        assert_eq!(
            seq,
            [
                (10, 2),
                (10, 0),
                (20, END),
                (20, 1),
                (30, END),
                (40, END),
                (40, 3),
                (40, END)
            ]
        );
        assert_eq!(clipped, 0);
        // Identical spans: the later one in the ring is the outer one.
        let (seq, _) = nest_ring(&[(5, 9), (5, 9)]);
        assert_eq!(seq, [(5, 1), (5, 0), (9, END), (9, END)]);
        // [0, 10] and [5, 15] overlap partially: the second is cut at 10.
        let (seq, clipped) = nest_ring(&[(0, 10), (5, 15)]);
        assert_eq!(
            (seq, clipped),
            (vec![(0, 0), (5, 1), (10, END), (10, END)], 1)
        );
    }
}
