//! The Perfetto trace as a sink (see [`super`]).

use super::counters::{share, steps, Counters};
use super::events::{Ev, InRing};
use super::proto::*;
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::ops::Ops;
use crate::profile::{Profile, RingView};
use crate::sink::analysis::{arrows, Analysis, Shared};
use crate::sink::{exact, Finished, Sink};
use crate::timeline::{Lane, MarkKind, OpSpan, Zone};
use prost::Message;
use riscv_linker::{Arch, NocCoord};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The sequence of descriptors and ops; rings use `FIRST_RING_SEQUENCE + ring index`.
const DESCRIPTOR_SEQUENCE: u32 = 1;
const FIRST_RING_SEQUENCE: u32 = 2;

/// Interned debug annotation names.
const ANN_LOC: u64 = 1;
const ANN_OP: u64 = 2;
const ANN_VALUE: u64 = 3;
const ANN_TOTAL: u64 = 4;
const ANN_COUNT: u64 = 5;
const ANNOTATION_NAMES: [(u64, &str); 5] = [
    (ANN_LOC, "loc"),
    (ANN_OP, "op"),
    (ANN_VALUE, "value"),
    (ANN_TOTAL, "total_cycles"),
    (ANN_COUNT, "count"),
];

/// Track uuids: kind in the top byte, then chip, then the kind's own bits.
fn uuid(kind: u64, chip: u32, low: u64) -> u64 {
    kind << 56 | (chip as u64) << 32 | low
}
fn chip_uuid(chip: u32) -> u64 {
    uuid(1, chip, 0)
}
fn tile_uuid(chip: u32, t: NocCoord) -> u64 {
    uuid(2, chip, (t.x as u64) << 16 | (t.y as u64) << 8)
}
/// The track uuid of a RISC's lane (its zones' track): other writers nest tracks under it.
pub(crate) fn lane_track_uuid(chip: u32, tile: NocCoord, risc: riscv_linker::Risc) -> u64 {
    lane_uuid(&Lane {
        chip,
        tile,
        risc,
        depth: 0,
    })
}
/// A lane's own bits: tile and RISC (24 bits).
fn lane_bits(l: &Lane) -> u64 {
    (l.tile.x as u64) << 16 | (l.tile.y as u64) << 8 | l.risc.index() as u64
}
fn lane_uuid(l: &Lane) -> u64 {
    uuid(3, l.chip, lane_bits(l))
}
fn ops_uuid(chip: u32, k: usize) -> u64 {
    uuid(4, chip, k as u64)
}
// Kind 5: the line profile's tracks (`commands::lines::perfetto`).
/// A lane's counted-zone track of counter `name` (an index of [`Counters::names`]): kind 6,
/// the name in bits 24..32 above the lane's bits. `None` past the 256th name.
fn lane_counter_uuid(l: &Lane, name: usize) -> Option<u64> {
    (name < 256).then(|| uuid(6, l.chip, (name as u64) << 24 | lane_bits(l)))
}
/// A chip's op-level track of counter `name` (an index of [`Counters::names`]): kind 7.
fn op_counter_uuid(chip: u32, name: usize) -> u64 {
    uuid(7, chip, name as u64 & 0xFFFF_FFFF)
}

/// Whole host ns, never negative (a record off the timebase has NaN: 0).
fn ns(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.round() as u64
    } else {
        0
    }
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfettoStats {
    /// Trace packets.
    pub packets: u64,
    /// Zone slices.
    pub zones: u64,
    /// Instants (events, data, sums).
    pub marks: u64,
    /// Op slices.
    pub ops: u64,
    /// Zones cut at their enclosing zone's end or at the next sibling's start (corrupt
    /// times), so that every track stays nested.
    pub(crate) clamped: u64,
    /// Ops with neither host times nor device spans (not drawn).
    pub(crate) ops_left_out: u64,
    /// Flows of the critical paths: a signal's instant to the end of the wait it ended.
    pub flows: u64,
    /// Counter tracks: a lane's counted zones per counter, a chip's ops per counter.
    pub counter_tracks: u64,
    /// Points on the counter tracks.
    pub counter_points: u64,
    /// Counted zones left off the counter tracks because their counter's name came after
    /// the 256th distinct one (no room in the track uuid).
    pub(crate) counters_left_out: u64,
}

/// Uncompressed packets per `compressed_packets` packet (Perfetto's service uses chunks of
/// this order; the trace processor inflates each at once).
const CHUNK_BYTES: usize = 1 << 20;

/// Appends `p` as one `Trace.packet` field.
fn append_packet(out: &mut Vec<u8>, p: &TracePacket) {
    prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, out);
    prost::encoding::encode_varint(p.encoded_len() as u64, out);
    // Encoding into a Vec cannot run out of space.
    let _ = p.encode(out);
}

/// What the trace carries of a ring from its first view to its last: its lane, its events
/// not final yet ([`InRing`]) and its sequence's state (the sequence, the time of its last
/// packet, the labels and ops interned in it: at most the profile's sites and ops).
struct InLane {
    lane: Lane,
    events: InRing,
    /// The lane's sequence, once its first packet is written.
    seq: Option<u32>,
    /// The time of the sequence's last packet (the next one's delta is from it).
    last: u64,
    labels: BTreeSet<u32>,
    ops: BTreeSet<u32>,
}

/// Writes `ttprof_trace.pftrace`.
pub struct PerfettoSink {
    path: PathBuf,
    /// The command's input guard: the file is not written over one of its inputs.
    inputs: Inputs,
    file: Option<AtomicFile>,
    /// Packets not yet compressed.
    raw: Vec<u8>,
    /// Compressed packets not yet written (written once they pass [`CHUNK_BYTES`], so a long
    /// ring does not hold its whole compressed trace: 17 MB at 16 M zones, issue 41).
    buf: Vec<u8>,
    /// The first write of `buf` that failed between flushes, returned by the next flush.
    failed: Option<std::io::Error>,
    arch: Arch,
    tiles: BTreeSet<(u32, NocCoord)>,
    /// Chips with a track (from [`Sink::begin`]).
    chips: BTreeSet<u32>,
    /// The next ring's packet sequence.
    next_sequence: u32,
    /// The waits and signals of the rings of the profile the trace began with, for the
    /// critical paths' flows (`None` once finished).
    paths: Option<Shared>,
    /// The address of that profile: rings of a run fed in parts come with a part of their
    /// own, whose op and label indices are not the run's (no flows then).
    begun: usize,
    /// The op log's performance counters, for the counter tracks.
    counters: Counters,
    /// Counter tracks described so far (each once).
    counter_tracks: BTreeSet<u64>,
    /// The ring being written, from its first view to its last (a ring given in pieces).
    in_lane: Option<InLane>,
    /// The most a lane's events held from one piece to the next ([`InRing::held`]).
    most_held: usize,
    /// What was written (after [`Sink::finish`]).
    pub stats: PerfettoStats,
}

impl PerfettoSink {
    /// The trace at `path`, never written over one of `inputs`.
    pub fn new(path: &Path, inputs: &Inputs) -> PerfettoSink {
        PerfettoSink {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            file: None,
            raw: Vec::with_capacity(CHUNK_BYTES + (64 << 10)),
            buf: Vec::with_capacity(1 << 20),
            failed: None,
            arch: Arch::WormholeB0,
            tiles: BTreeSet::new(),
            chips: BTreeSet::new(),
            next_sequence: FIRST_RING_SEQUENCE,
            paths: Some(Shared::default()),
            begun: 0,
            counters: Counters::default(),
            counter_tracks: BTreeSet::new(),
            in_lane: None,
            most_held: 0,
            stats: PerfettoStats::default(),
        }
    }

    /// The same trace, its critical paths' flows from `analysis` (shared with other sinks;
    /// `pub(crate)`: the handle is the library's own).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> PerfettoSink {
        self.paths = Some(analysis.clone());
        self
    }

    /// The most a lane's events held from one piece to the next.
    #[cfg(test)]
    pub(crate) fn most_held(&self) -> usize {
        self.most_held
    }

    /// The critical paths' flows: for each wait on a path that another core's signal ended,
    /// an instant `signal <name>` on the signalling RISC's track at the signal, with a flow
    /// to an instant `released: <resource>` on the waiting RISC's track at the wait's end.
    fn flows(&mut self, p: &Profile, a: &Analysis) {
        for (i, w) in arrows(p, a).into_iter().enumerate() {
            let id = i as u64 + 1;
            let ev = |track, name: String, out: Vec<u64>, end: Vec<u64>| TrackEvent {
                r#type: Some(TYPE_INSTANT),
                track_uuid: Some(track),
                name: Some(name),
                flow_ids: out,
                terminating_flow_ids: end,
                ..Default::default()
            };
            let events = [
                (
                    w.from_ns,
                    ev(
                        lane_uuid(&w.from),
                        format!("signal {}", w.signal),
                        vec![id],
                        vec![],
                    ),
                ),
                (
                    w.to_ns,
                    ev(
                        lane_uuid(&w.to),
                        format!("released: {}", w.resource),
                        vec![],
                        vec![id],
                    ),
                ),
            ];
            for (ts, e) in events {
                self.packet(TracePacket {
                    timestamp: Some(exact::to_u64(ts)),
                    trusted_packet_sequence_id: Some(DESCRIPTOR_SEQUENCE),
                    track_event: Some(e),
                    ..Default::default()
                });
            }
            self.stats.flows += 1;
        }
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, "write", e)
    }

    /// Appends `p` as one `Trace.packet` field.
    fn packet(&mut self, p: TracePacket) {
        append_packet(&mut self.raw, &p);
        self.stats.packets += 1;
        if self.raw.len() >= CHUNK_BYTES {
            self.seal();
            if self.buf.len() >= CHUNK_BYTES && self.failed.is_none() {
                self.failed = self.write_buf().err();
            }
        }
    }

    /// Writes the compressed packets so far.
    fn write_buf(&mut self) -> std::io::Result<()> {
        let Some(f) = self.file.as_mut() else {
            return Ok(());
        };
        let r = f.write_all(&self.buf);
        self.buf.clear();
        r
    }

    /// The packets so far as one packet of `compressed_packets` (zlib of the `Trace` they
    /// form), as Perfetto's own tracing service writes them.
    fn seal(&mut self) {
        if self.raw.is_empty() {
            return;
        }
        let mut z = flate2::write::ZlibEncoder::new(
            Vec::with_capacity(self.raw.len() / 4),
            flate2::Compression::fast(),
        );
        // Writing into a Vec cannot fail.
        let _ = z.write_all(&self.raw);
        let packed = z.finish().unwrap_or_default();
        self.raw.clear();
        append_packet(
            &mut self.buf,
            &TracePacket {
                compressed_packets: Some(packed),
                ..Default::default()
            },
        );
    }

    fn flush(&mut self) -> Result<()> {
        self.seal();
        let r = self.failed().and_then(|()| self.write_buf());
        r.map_err(|e| self.io(e))
    }

    /// The write of compressed packets that failed since the last check, if one did.
    fn failed(&mut self) -> std::io::Result<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    fn descriptor(&mut self, d: TrackDescriptor) {
        self.packet(TracePacket {
            trusted_packet_sequence_id: Some(DESCRIPTOR_SEQUENCE),
            track_descriptor: Some(d),
            ..Default::default()
        });
    }

    /// A counter track in % named `name` under `parent`, described the first time.
    fn counter_track(&mut self, uuid: u64, name: String, parent: u64, rank: i32) {
        if !self.counter_tracks.insert(uuid) {
            return;
        }
        self.stats.counter_tracks += 1;
        self.descriptor(TrackDescriptor {
            uuid: Some(uuid),
            name: Some(name),
            parent_uuid: Some(parent),
            sibling_order_rank: Some(rank),
            counter: Some(CounterDescriptor {
                unit_name: Some("%".into()),
            }),
            ..Default::default()
        });
    }

    /// The chip's op-level counters (`ttprof run --counters`): per counter a track beside
    /// the op tracks that reads, over each op's slice, the counter's value over the cycles
    /// that counted it (%, both summed over the op's tiles), and 0 between ops. Absolute
    /// times on the descriptor sequence, like the op slices (it has no incremental clock).
    fn op_counters(&mut self, chip: u32, timed: &[(u64, u64, &OpSpan)]) {
        let mut spans: BTreeMap<usize, Vec<(u64, u64, f64)>> = BTreeMap::new();
        for &(start, end, o) in timed {
            for &(name, value, cycles) in self.counters.totals(o.chip, o.run) {
                if let Some(pct) = share(value, cycles) {
                    spans.entry(name).or_default().push((start, end, pct));
                }
            }
        }
        for (name, spans) in spans {
            let track = op_counter_uuid(chip, name);
            let title = format!("{} over ops (% of cycles)", self.counters.names[name]);
            // After the op tracks (ranks 0, 1, ...), before the tiles (1000 on).
            let rank = 500 + name.min(400) as i32;
            self.counter_track(track, title, chip_uuid(chip), rank);
            for (ts, value) in steps(spans) {
                self.packet(TracePacket {
                    timestamp: Some(ts),
                    trusted_packet_sequence_id: Some(DESCRIPTOR_SEQUENCE),
                    track_event: Some(counter_event(track, value)),
                    ..Default::default()
                });
                self.stats.counter_points += 1;
            }
        }
    }

    /// A counted zone's counter (an index of [`Counters::names`]) and its change per cycle
    /// (%); `None` for a zone that counts nothing, whose op armed nothing in its bank, or
    /// that took no cycles.
    fn zone_rate(&self, p: &Profile, z: &Zone) -> Option<(usize, f64)> {
        let bank = p.labels.get(z.site as usize)?.counter?;
        let op = p.ops.get(z.op? as usize)?;
        let name = self.counters.armed(op.chip, op.run, bank)?;
        let rate = share(z.value?.into(), z.end_cycles.saturating_sub(z.start_cycles))?;
        Some((name, rate))
    }

    /// The chip's ops on op tracks (a new track whenever ops overlap).
    fn ops(&mut self, chip: u32, ops: &[OpSpan], device: &Ops) {
        // An op the op log does not time (or a run it does not name) sits at its device span:
        // exact from the model's wrapper-zone times (its FW and KERNEL zones' hull), else
        // the span's `f64` ns rounded.
        let exact = |o: &OpSpan| -> Option<(u64, u64)> {
            let d = device.by_run.get(&(o.chip, o.run))?;
            let spans = || [d.fw, d.kernel].into_iter().flatten();
            let start = spans()
                .map(|s| s.start)
                .reduce(|a, b| if b.before(&a) { b } else { a })?;
            let end = spans()
                .map(|s| s.end)
                .reduce(|a, b| if a.before(&b) { b } else { a })?;
            Some((
                exact::to_u64(exact::whole_of(&start)?),
                exact::to_u64(exact::whole_of(&end)?),
            ))
        };
        let span = |o: &OpSpan| {
            o.host_ns
                .or_else(|| exact(o).or_else(|| o.device_span().map(|(a, b)| (ns(a), ns(b)))))
        };
        let mut timed: Vec<(u64, u64, &OpSpan)> = ops
            .iter()
            .filter(|o| o.chip == chip)
            .filter_map(|o| span(o).map(|(a, b)| (a, b, o)))
            .collect();
        self.stats.ops_left_out += ops
            .iter()
            .filter(|o| o.chip == chip && span(o).is_none())
            .count() as u64;
        timed.sort_by_key(|t| (t.0, t.1));
        let mut lanes: Vec<u64> = Vec::new();
        for &(start, end, o) in &timed {
            let k = match lanes.iter().position(|&free| free <= start) {
                Some(k) => k,
                None => {
                    lanes.push(0);
                    let k = lanes.len() - 1;
                    let name = if k == 0 {
                        "ops".to_string()
                    } else {
                        format!("ops {}", k + 1)
                    };
                    self.descriptor(TrackDescriptor {
                        uuid: Some(ops_uuid(chip, k)),
                        name: Some(name),
                        parent_uuid: Some(chip_uuid(chip)),
                        sibling_order_rank: Some(k as i32),
                        ..Default::default()
                    });
                    k
                }
            };
            lanes[k] = end.max(start);
            let track = Some(ops_uuid(chip, k));
            let run = DebugAnnotation {
                name: Some("run".into()),
                uint_value: Some(o.run as u64),
                ..Default::default()
            };
            let begin = TrackEvent {
                r#type: Some(TYPE_SLICE_BEGIN),
                track_uuid: track,
                name: Some(o.name.clone()),
                debug_annotations: vec![run],
                ..Default::default()
            };
            let end_ev = TrackEvent {
                r#type: Some(TYPE_SLICE_END),
                track_uuid: track,
                ..Default::default()
            };
            for (ts, ev) in [(start, begin), (end.max(start), end_ev)] {
                self.packet(TracePacket {
                    timestamp: Some(ts),
                    trusted_packet_sequence_id: Some(DESCRIPTOR_SEQUENCE),
                    track_event: Some(ev),
                    ..Default::default()
                });
            }
            self.stats.ops += 1;
        }
        self.op_counters(chip, &timed);
    }

    /// The chip's track.
    fn chip(&mut self, chip: u32) {
        self.descriptor(TrackDescriptor {
            uuid: Some(chip_uuid(chip)),
            name: Some(format!("Device {chip} ({})", self.arch.name())),
            child_ordering: Some(CHILD_ORDERING_EXPLICIT),
            sibling_order_rank: Some(chip as i32),
            ..Default::default()
        });
    }

    /// The tile's track, the first time one of its rings is seen.
    fn tile(&mut self, lane: &Lane) {
        if !self.tiles.insert((lane.chip, lane.tile)) {
            return;
        }
        let t = lane.tile;
        let name = match self.arch.worker_logical(t) {
            Some((c, r)) => format!("({c},{r}) [x={} y={}]", t.x, t.y),
            None => format!("[x={} y={}]", t.x, t.y),
        };
        self.descriptor(TrackDescriptor {
            uuid: Some(tile_uuid(lane.chip, t)),
            name: Some(name),
            parent_uuid: Some(chip_uuid(lane.chip)),
            child_ordering: Some(CHILD_ORDERING_EXPLICIT),
            sibling_order_rank: Some(1_000 + ((t.y as i32) << 8 | t.x as i32)),
            ..Default::default()
        });
    }

    /// The ring's lane, at its first view: its tile's and its own track (its sequence
    /// begins with its first event).
    fn begin_lane(&mut self, v: &RingView) {
        let lane = v.lane;
        self.tile(&lane);
        let track = lane_uuid(&lane);
        self.descriptor(TrackDescriptor {
            uuid: Some(track),
            name: Some(lane.name(self.arch)),
            parent_uuid: Some(tile_uuid(lane.chip, lane.tile)),
            sibling_order_rank: Some(lane.risc.index() as i32),
            ..Default::default()
        });
        self.in_lane = Some(InLane {
            lane,
            events: InRing::default(),
            seq: None,
            last: 0,
            labels: BTreeSet::new(),
            ops: BTreeSet::new(),
        });
    }

    /// One view of the ring (the whole ring or its next piece) into its lane's sequence:
    /// its zones, marks and counted zones taken, then every event now final written.
    fn lane(&mut self, p: &Profile, v: &RingView) {
        if v.part.first || self.in_lane.is_none() {
            self.begin_lane(v);
        }
        let Some(mut l) = self.in_lane.take() else {
            return;
        };
        self.counters.load(p);
        // Whole ns exact at any count ([`exact`]), from the tile's clock.
        let clock = p.timebase.tile_clock(l.lane.chip, l.lane.tile);
        let at = |cycles: u64, v: f64| {
            exact::whole_at(clock.as_ref(), cycles, v).map_or(0, exact::to_u64)
        };
        // A zone's times: its cycles on the tile's clock.
        let zone_at = |cycles: u64| {
            at(
                cycles,
                clock.as_ref().map_or(f64::NAN, |c| c.host_ns(cycles)),
            )
        };
        // Zones and marks taken in opening order (a mark before the first zone that starts
        // after it), and what is final written after each zone: what the lane holds is
        // then bounded within a view too, not only between pieces (a ring given whole
        // held every zone of it here, ~60 bytes each).
        let mut marks = v.marks.iter().peekable();
        let take_mark = |l: &mut InLane, m: &crate::timeline::Mark| {
            let mark = Ev::Mark {
                site: m.site,
                op: m.op,
                kind: m.kind,
            };
            l.events.mark(m.cycles, at(m.cycles, m.ns), mark);
        };
        for z in &v.zones {
            while let Some(m) = marks.next_if(|m| m.cycles < z.start_cycles) {
                take_mark(&mut l, m);
            }
            let (start, end) = (zone_at(z.start_cycles), zone_at(z.end_cycles));
            let begin = Ev::Begin {
                site: z.site,
                op: z.op,
                value: z.value,
            };
            l.events
                .zone((z.start_cycles, z.end_cycles), (start, end), z.depth, begin);
            // A counted zone's counter points, in the same sequence (their times are
            // deltas on its clock too).
            if let Some((name, rate)) = self.zone_rate(p, &z) {
                if lane_counter_uuid(&l.lane, name).is_some() {
                    l.events.span(name, start, end, rate);
                } else {
                    self.stats.counters_left_out += 1;
                }
            }
            while let Some((ts, e)) = l.events.next() {
                self.event(p, &mut l, ts, e);
            }
        }
        for m in marks {
            take_mark(&mut l, m);
        }
        if v.part.last {
            l.events.finish();
        }
        while let Some((ts, e)) = l.events.next() {
            self.event(p, &mut l, ts, e);
        }
        if v.part.last {
            self.stats.clamped += l.events.clamped;
        } else {
            self.most_held = self.most_held.max(l.events.held());
            self.in_lane = Some(l);
        }
    }

    /// Writes one event of the lane's sequence, the sequence's first packet before the
    /// first: it clears the incremental state, interns the annotation names, sets the
    /// lane's track as the default track and a sequence-scoped incremental clock as the
    /// default clock. An event's names and strings are interned with it, the first time
    /// the sequence uses them.
    fn event(&mut self, p: &Profile, l: &mut InLane, ts: u64, e: Ev) {
        let seq = match l.seq {
            Some(seq) => seq,
            None => {
                let seq = self.next_sequence;
                self.next_sequence += 1;
                self.sequence_start(seq, lane_uuid(&l.lane), ts);
                l.seq = Some(seq);
                l.last = ts;
                seq
            }
        };
        let nl = p.labels.len() as u64;
        let mut interned = InternedData {
            event_names: Vec::new(),
            debug_annotation_names: Vec::new(),
            debug_annotation_string_values: Vec::new(),
        };
        let mut annotations = |site: u32, op: Option<u32>| {
            let label = p.labels.get(site as usize);
            if l.labels.insert(site) {
                interned.event_names.push(Interned {
                    iid: Some(site as u64 + 1),
                    name: Some(label_name(p, site).to_string()),
                });
                if let Some(l) = label.filter(|l| !l.file.is_empty()) {
                    interned
                        .debug_annotation_string_values
                        .push(InternedString {
                            iid: Some(site as u64 + 1),
                            str: Some(format!("{}:{}", l.file, l.line).into_bytes()),
                        });
                }
            }
            let mut a = Vec::with_capacity(2);
            if label.is_some_and(|l| !l.file.is_empty()) {
                a.push(DebugAnnotation {
                    name_iid: Some(ANN_LOC),
                    string_value_iid: Some(site as u64 + 1),
                    ..Default::default()
                });
            }
            if let Some(o) = op {
                if l.ops.insert(o) {
                    let name = p
                        .ops
                        .get(o as usize)
                        .map_or_else(String::new, |o| o.name.clone());
                    interned
                        .debug_annotation_string_values
                        .push(InternedString {
                            iid: Some(nl + 1 + o as u64),
                            str: Some(name.into_bytes()),
                        });
                }
                a.push(DebugAnnotation {
                    name_iid: Some(ANN_OP),
                    string_value_iid: Some(nl + 1 + o as u64),
                    ..Default::default()
                });
            }
            a
        };
        let ev = match e {
            Ev::Begin { site, op, value } => {
                self.stats.zones += 1;
                let mut a = annotations(site, op);
                if let Some(value) = value {
                    a.push(DebugAnnotation {
                        name_iid: Some(ANN_VALUE),
                        uint_value: Some(value as u64),
                        ..Default::default()
                    });
                }
                TrackEvent {
                    r#type: Some(TYPE_SLICE_BEGIN),
                    name_iid: Some(site as u64 + 1),
                    debug_annotations: a,
                    ..Default::default()
                }
            }
            Ev::End => TrackEvent {
                r#type: Some(TYPE_SLICE_END),
                ..Default::default()
            },
            Ev::Mark { site, op, kind } => {
                self.stats.marks += 1;
                let mut a = annotations(site, op);
                let uint = |iid, v| DebugAnnotation {
                    name_iid: Some(iid),
                    uint_value: Some(v),
                    ..Default::default()
                };
                match kind {
                    MarkKind::Event => {}
                    MarkKind::Data(v) => a.push(uint(ANN_VALUE, v)),
                    MarkKind::Sum {
                        total_cycles,
                        count,
                    } => {
                        a.push(uint(ANN_TOTAL, total_cycles));
                        a.push(uint(ANN_COUNT, count as u64));
                    }
                }
                TrackEvent {
                    r#type: Some(TYPE_INSTANT),
                    name_iid: Some(site as u64 + 1),
                    debug_annotations: a,
                    ..Default::default()
                }
            }
            Ev::Counter(name, value) => {
                // `Ev::Counter` is given only for a name with a track uuid.
                let track = lane_counter_uuid(&l.lane, name).unwrap_or(0);
                let title = format!(
                    "{} {} per cycle",
                    l.lane.name(self.arch),
                    self.counters.names[name]
                );
                self.counter_track(track, title, lane_uuid(&l.lane), name as i32);
                self.stats.counter_points += 1;
                counter_event(track, value)
            }
        };
        let new = !(interned.event_names.is_empty()
            && interned.debug_annotation_string_values.is_empty());
        let ts = ts.max(l.last);
        self.packet(TracePacket {
            timestamp: Some(ts - l.last),
            trusted_packet_sequence_id: Some(seq),
            sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
            track_event: Some(ev),
            interned_data: new.then_some(interned),
            ..Default::default()
        });
        l.last = ts;
    }

    /// A lane's sequence's first packet, at `t0` (its first event's time).
    fn sequence_start(&mut self, seq: u32, track: u64, t0: u64) {
        let interned = InternedData {
            event_names: Vec::new(),
            debug_annotation_names: ANNOTATION_NAMES
                .iter()
                .map(|&(iid, n)| Interned {
                    iid: Some(iid),
                    name: Some(n.into()),
                })
                .collect(),
            debug_annotation_string_values: Vec::new(),
        };
        self.packet(TracePacket {
            trusted_packet_sequence_id: Some(seq),
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            interned_data: Some(interned),
            trace_packet_defaults: Some(TracePacketDefaults {
                track_event_defaults: Some(TrackEventDefaults {
                    track_uuid: Some(track),
                }),
                timestamp_clock_id: Some(CLOCK_SEQUENCE_DELTA),
            }),
            clock_snapshot: Some(ClockSnapshot {
                clocks: vec![
                    Clock {
                        clock_id: Some(CLOCK_SEQUENCE_DELTA),
                        timestamp: Some(t0),
                        is_incremental: Some(true),
                        unit_multiplier_ns: None,
                    },
                    Clock {
                        clock_id: Some(CLOCK_BOOTTIME),
                        timestamp: Some(t0),
                        is_incremental: None,
                        unit_multiplier_ns: None,
                    },
                ],
            }),
            ..Default::default()
        });
    }
}

/// A `TYPE_COUNTER` event of `value` on counter track `track`.
fn counter_event(track: u64, value: f64) -> TrackEvent {
    TrackEvent {
        r#type: Some(TYPE_COUNTER),
        track_uuid: Some(track),
        double_counter_value: Some(value),
        ..Default::default()
    }
}

fn label_name(p: &Profile, l: u32) -> &str {
    p.labels.get(l as usize).map_or("?", |l| l.name.as_str())
}

impl Sink for PerfettoSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        self.file = Some(AtomicFile::create(&self.path, &self.inputs)?);
        self.begun = p as *const Profile as usize;
        self.arch = p.geometry().arch;
        let chips: BTreeSet<u32> = p
            .readout
            .rings
            .iter()
            .map(|r| r.id.chip)
            .chain(p.ops.iter().map(|o| o.chip))
            .collect();
        for &chip in &chips {
            self.chip(chip);
        }
        self.chips = chips;
        self.flush()
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        self.lane(p, v);
        if p as *const Profile as usize == self.begun {
            if let Some(a) = &self.paths {
                a.add(p, v);
            }
        } else {
            self.paths = None;
        }
        // Packets are sealed and written as they pass [`CHUNK_BYTES`], not per ring (a new
        // compressor per ring: 150,000 two-zone rings spent a fifth of an import zeroing
        // zlib's tables); a write that failed meanwhile is reported here.
        self.failed().map_err(|e| self.io(e))
    }

    fn streams(&self) -> bool {
        true
    }

    /// Its own part does (`InLane`); the critical paths' analysis it feeds must too.
    fn takes_pieces(&self) -> bool {
        self.paths.as_ref().is_none_or(Shared::takes_pieces)
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        if self.file.is_none() {
            return Ok(Finished::default());
        }
        // Ops last: a run fed in parts knows its ops' device spans only now.
        self.counters.load(p);
        let chips: BTreeSet<u32> = self
            .chips
            .iter()
            .copied()
            .chain(p.ops.iter().map(|o| o.chip))
            .collect();
        for chip in chips {
            if !self.chips.contains(&chip) {
                self.chip(chip);
            }
            self.ops(chip, &p.ops, &p.device_ops);
        }
        if let Some(a) = self.paths.take() {
            let a = a.finish(p);
            self.flows(p, &a);
        }
        self.flush()?;
        let Some(file) = self.file.take() else {
            return Ok(Finished::default());
        };
        file.commit()?;
        let path = self.path.display();
        let mut issues = Vec::new();
        let s = self.stats;
        if s.clamped > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{} zone(s) end after the zone that encloses them or after the next one starts (their times are \
                         inconsistent): {path} cuts them there so every track stays nested",
                        s.clamped
                    ),
                )
                .with_count(s.clamped),
            );
        }
        if s.ops_left_out > 0 {
            issues.push(
                Issue::warning(None, format!("{} op(s) have neither host times nor device records: {path} leaves them off its op tracks", s.ops_left_out))
                    .with_count(s.ops_left_out),
            );
        }
        if s.counters_left_out > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{} counted zone(s) count a counter named after 256 others: {path} leaves them off \
                         the counter tracks (their values are in the other outputs)",
                        s.counters_left_out
                    ),
                )
                .with_count(s.counters_left_out),
            );
        }
        Ok(Finished {
            files: vec![self.path.clone()],
            issues,
        })
    }
}
