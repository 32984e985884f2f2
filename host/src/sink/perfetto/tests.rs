use super::proto::*;
use super::*;
use crate::model::fixture;
use crate::profile::Profile;
use crate::sink::{self, Sink};
use crate::timebase::Timebase;
use prost::Message;
use std::collections::BTreeMap;

/// The trace's packets, every `compressed_packets` chunk inflated in place.
fn packets(bytes: &[u8]) -> Vec<TracePacket> {
    let mut out = Vec::new();
    for p in Trace::decode(bytes).unwrap().packet {
        match &p.compressed_packets {
            Some(z) => {
                let mut raw = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::ZlibDecoder::new(z.as_slice()),
                    &mut raw,
                )
                .unwrap();
                assert!(!raw.is_empty());
                out.extend(packets(&raw));
            }
            None => out.push(p),
        }
    }
    out
}

fn profile() -> Profile {
    fixture::profile_at(0, fixture::ARCH, true)
}

/// Decodes the trace back and replays each sequence's state: every zone is a begin/end pair
/// at its own host ns on its lane's track, with its interned name and `file:line`.
#[test]
fn the_trace_decodes_to_every_zone_mark_and_op_at_its_host_time() {
    let p = profile();
    let dir = crate::testing::temp_dir("perfetto");
    let path = dir.join(FILE_NAME);
    let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
    sink::drive(&p, &mut [&mut s]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let trace = Trace {
        packet: packets(&bytes),
    };
    assert_eq!(trace.packet.len() as u64, s.stats.packets);
    assert_eq!(
        (s.stats.zones, s.stats.marks, s.stats.clamped),
        (120, 90, 0)
    );
    // Per sequence: names, strings, default track, last time.
    #[derive(Default)]
    struct Seq {
        names: BTreeMap<u64, String>,
        strings: BTreeMap<u64, String>,
        track: u64,
        t: u64,
    }
    let mut seqs: BTreeMap<u32, Seq> = BTreeMap::new();
    let mut tracks: BTreeMap<u64, String> = BTreeMap::new();
    // (track, time, name, argument, value) of each slice begin.
    type Begin = (u64, u64, String, Option<String>, Option<u64>);
    let mut begins: Vec<Begin> = Vec::new();
    let (mut instants, mut op_slices) = (0, 0);
    for pk in &trace.packet {
        if let Some(d) = &pk.track_descriptor {
            tracks.insert(d.uuid.unwrap(), d.name.clone().unwrap());
            continue;
        }
        let id = pk.trusted_packet_sequence_id.unwrap();
        let seq = seqs.entry(id).or_default();
        if pk.sequence_flags == Some(SEQ_INCREMENTAL_STATE_CLEARED) {
            seq.names.clear();
            seq.strings.clear();
        }
        // Names and strings are interned with the packet that first uses them (a ring
        // given in pieces does not know them all up front), as Perfetto reads them.
        if let Some(i) = pk.interned_data.as_ref() {
            seq.names.extend(
                i.event_names
                    .iter()
                    .map(|n| (n.iid.unwrap(), n.name.clone().unwrap())),
            );
            seq.strings
                .extend(i.debug_annotation_string_values.iter().map(|s| {
                    (
                        s.iid.unwrap(),
                        String::from_utf8(s.str.clone().unwrap()).unwrap(),
                    )
                }));
        }
        if pk.sequence_flags == Some(SEQ_INCREMENTAL_STATE_CLEARED) {
            let d = pk.trace_packet_defaults.as_ref().unwrap();
            seq.track = d.track_event_defaults.as_ref().unwrap().track_uuid.unwrap();
            seq.t = pk.clock_snapshot.as_ref().unwrap().clocks[0]
                .timestamp
                .unwrap();
            continue;
        }
        let e = pk.track_event.as_ref().unwrap();
        if id == 1 {
            op_slices += (e.r#type == Some(TYPE_SLICE_BEGIN)) as usize;
            continue;
        }
        seq.t += pk.timestamp.unwrap();
        match e.r#type {
            Some(TYPE_SLICE_BEGIN) => {
                let loc = e
                    .debug_annotations
                    .iter()
                    .find(|a| a.name_iid == Some(1))
                    .map(|a| seq.strings[&a.string_value_iid.unwrap()].clone());
                let value = e
                    .debug_annotations
                    .iter()
                    .find(|a| a.name_iid == Some(3))
                    .map(|a| a.uint_value.unwrap());
                begins.push((
                    seq.track,
                    seq.t,
                    seq.names[&e.name_iid.unwrap()].clone(),
                    loc,
                    value,
                ));
            }
            Some(TYPE_INSTANT) => instants += 1,
            _ => {}
        }
    }
    assert_eq!(instants, 90);
    assert_eq!(
        op_slices,
        p.ops.iter().filter(|o| o.host_ns.is_some()).count()
    );
    let mut want = Vec::new();
    for v in p.rings() {
        for z in &v.zones {
            let l = &p.labels[z.site as usize];
            let uuid = tracks
                .iter()
                .find(|(_, n)| **n == v.lane.name(p.geometry().arch))
                .map(|(u, _)| *u)
                .unwrap();
            let value = z.value.map(u64::from);
            want.push((
                uuid,
                z.start_ns(v.clock.as_ref()).round() as u64,
                l.name.clone(),
                Some(format!("{}:{}", l.file, l.line)),
                value,
            ));
        }
    }
    begins.sort();
    want.sort();
    // Value zones carry their value as the `value` argument.
    assert_eq!(
        want.iter().filter(|w| w.4.is_some()).count(),
        30,
        "the fixture's inner zones"
    );
    assert_eq!(begins, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41 (Medium): slices and instants were at `f64` ns rounded, a ns or more off from
/// 2^53 ns on (at 2^62 cycles by up to a thousand): on a chip up for months each is at the
/// exact whole ns of its count.
#[test]
fn times_stay_exact_at_large_cycle_counts() {
    let offset = (1u64 << 62) + 7;
    for arch in [
        riscv_linker::Arch::WormholeB0,
        riscv_linker::Arch::Blackhole,
    ] {
        let p = fixture::profile_at(offset, arch, true);
        let dir = crate::testing::temp_dir("perfetto-large-counts");
        let path = dir.join(FILE_NAME);
        let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
        sink::drive(&p, &mut [&mut s]).unwrap();
        assert_eq!(s.stats.clamped, 0);
        // (type, host ns) of every lane event, each sequence's deltas replayed.
        let mut got: Vec<(i32, u64)> = Vec::new();
        let mut t: BTreeMap<u32, u64> = BTreeMap::new();
        for pk in packets(&std::fs::read(&path).unwrap()) {
            let Some(id) = pk.trusted_packet_sequence_id else {
                continue;
            };
            if pk.track_descriptor.is_some() || id == 1 {
                continue;
            }
            if pk.sequence_flags == Some(SEQ_INCREMENTAL_STATE_CLEARED) {
                let c = &pk.clock_snapshot.as_ref().unwrap().clocks[0];
                t.insert(id, c.timestamp.unwrap());
                continue;
            }
            let now = t.get_mut(&id).unwrap();
            *now += pk.timestamp.unwrap();
            got.push((pk.track_event.unwrap().r#type.unwrap(), *now));
        }
        // The nearest whole ns of `c` cycles at `mhz`, in integers.
        let ns = |c: u64| fixture::whole_ns(arch, c) as u64;
        let mut want: Vec<(i32, u64)> = Vec::new();
        for v in p.rings() {
            for z in &v.zones {
                want.push((TYPE_SLICE_BEGIN, ns(z.start_cycles)));
                want.push((TYPE_SLICE_END, ns(z.end_cycles)));
            }
            want.extend(v.marks.iter().map(|m| (TYPE_INSTANT, ns(m.cycles))));
        }
        got.sort();
        want.sort();
        assert_eq!(got, want, "{arch:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 42: the fixture with counted zones. Its `inner` value zones count bank `fpu`;
/// `--counters` armed FPU_COUNTER and PACKER_BUSY for Matmul (run 2), only PACKER_BUSY for
/// EltwiseAdd (run 1: its counted zones measured nothing) and nothing for Relu (run 3).
/// Over the ops, FPU_COUNTER is 25% of cycles on Matmul, PACKER_BUSY 50% on EltwiseAdd and
/// 25% on Matmul (shares exact in binary).
fn counted_profile() -> Profile {
    counted_profile_of(fixture::readout())
}

/// [`counted_profile`]'s op log and counted `inner` zones over the rings of `r`.
fn counted_profile_of(r: crate::readout::Readout) -> Profile {
    use crate::oplog::{CounterValue, OpLogEntry, TileCounters};
    let value = |bank: &str, name: &str, value| CounterValue {
        bank: bank.into(),
        name: name.into(),
        value,
    };
    let tile = |core, cycles, values| TileCounters {
        core,
        cycles,
        values,
        noc_read_bytes: None,
        noc_write_bytes: None,
    };
    let mut log = fixture::oplog();
    for e in &mut log.entries {
        let OpLogEntry::Op(op) = e else {
            continue;
        };
        op.counters = match op.run_id {
            1 => vec![
                tile(
                    [1, 1],
                    4_000,
                    vec![value("TDMA_PACK", "PACKER_BUSY", 2_000)],
                ),
                tile(
                    [2, 1],
                    4_000,
                    vec![value("TDMA_PACK", "PACKER_BUSY", 2_000)],
                ),
            ],
            2 => vec![
                tile(
                    [1, 1],
                    10_000,
                    vec![
                        value("FPU", "FPU_COUNTER", 3_000),
                        value("TDMA_PACK", "PACKER_BUSY", 1_000),
                    ],
                ),
                tile(
                    [2, 1],
                    6_000,
                    vec![
                        value("FPU", "FPU_COUNTER", 1_000),
                        value("TDMA_PACK", "PACKER_BUSY", 3_000),
                    ],
                ),
            ],
            _ => vec![],
        };
    }
    let res = fixture::resolution(&r);
    let mut p = Profile::resolved(r, res, Some(log), Timebase::nominal(fixture::ARCH, 1));
    for l in &mut p.labels {
        if l.name == "inner" {
            l.counter = Some("fpu");
        }
    }
    p
}

/// Tracks by name: (uuid, parent, counter unit).
type Tracks = BTreeMap<String, (u64, Option<u64>, Option<String>)>;

/// The tracks of `trace` by name, and every counter point in trace order as (track name,
/// host ns, value), each lane sequence's deltas replayed; a lane's points are in the
/// sequence of its zones (on a track under it).
fn counters_of(trace: &[TracePacket]) -> (Tracks, Vec<(String, u64, f64)>) {
    let mut tracks = Tracks::new();
    for d in trace.iter().filter_map(|pk| pk.track_descriptor.as_ref()) {
        let unit = d.counter.as_ref().map(|c| c.unit_name.clone().unwrap());
        tracks.insert(
            d.name.clone().unwrap(),
            (d.uuid.unwrap(), d.parent_uuid, unit),
        );
    }
    let names: BTreeMap<u64, String> = tracks.iter().map(|(n, t)| (t.0, n.clone())).collect();
    let mut t: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut got: Vec<(String, u64, f64)> = Vec::new();
    for pk in trace {
        let Some(id) = pk.trusted_packet_sequence_id else {
            continue;
        };
        if pk.track_descriptor.is_some() {
            continue;
        }
        if pk.sequence_flags == Some(SEQ_INCREMENTAL_STATE_CLEARED) {
            let c = &pk.clock_snapshot.as_ref().unwrap().clocks[0];
            let d = pk.trace_packet_defaults.as_ref().unwrap();
            let lane = d.track_event_defaults.as_ref().unwrap().track_uuid.unwrap();
            t.insert(id, (c.timestamp.unwrap(), lane));
            continue;
        }
        let e = pk.track_event.as_ref().unwrap();
        let at = match t.get_mut(&id) {
            Some((now, lane)) => {
                *now += pk.timestamp.unwrap();
                if e.r#type == Some(TYPE_COUNTER) {
                    let track = &tracks[&names[&e.track_uuid.unwrap()]];
                    assert_eq!(track.1, Some(*lane), "a lane's counter in its sequence");
                }
                *now
            }
            None => pk.timestamp.unwrap(),
        };
        if e.r#type == Some(TYPE_COUNTER) {
            let name = names[&e.track_uuid.unwrap()].clone();
            got.push((name, at, e.double_counter_value.unwrap()));
        }
    }
    (tracks, got)
}

/// Issue 42: counted zones are counter tracks under their lanes (`... BRISC FPU_COUNTER
/// per cycle`, %) with the zone's rate (100 * value / cycles) at its start and 0 at its end,
/// in the lane's own sequence; a zone of an op that armed nothing in its bank has no point;
/// `--counters`' per-op values are counter tracks on the chip (`FPU_COUNTER over ops (% of
/// cycles)`) with each op's summed share over its slice.
#[test]
fn counted_zones_and_op_counters_are_counter_tracks() {
    let p = counted_profile();
    let arch = p.geometry().arch;
    let dir = crate::testing::temp_dir("perfetto-counters");
    let path = dir.join(FILE_NAME);
    let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
    sink::drive(&p, &mut [&mut s]).unwrap();
    let trace = packets(&std::fs::read(&path).unwrap());
    assert_eq!(trace.len() as u64, s.stats.packets);

    let (tracks, mut got) = counters_of(&trace);
    let chip = tracks[&format!("Device 0 ({})", arch.name())].0;
    let mut want_tracks = BTreeMap::new();
    for v in p.rings() {
        let lane = v.lane.name(arch);
        let parent = Some(tracks[&lane].0);
        want_tracks.insert(format!("{lane} FPU_COUNTER per cycle"), (parent, "%"));
    }
    assert_eq!(want_tracks.len(), 10);
    for n in ["FPU_COUNTER", "PACKER_BUSY"] {
        want_tracks.insert(format!("{n} over ops (% of cycles)"), (Some(chip), "%"));
    }
    let got_tracks: BTreeMap<String, (Option<u64>, &str)> = tracks
        .iter()
        .filter_map(|(n, t)| Some((n.clone(), (t.1, t.2.as_deref()?))))
        .collect();
    assert_eq!(got_tracks, want_tracks);
    assert_eq!(s.stats.counter_tracks, 12);

    let mut want: Vec<(String, u64, f64)> = Vec::new();
    let mut unarmed = Vec::new();
    for v in p.rings() {
        let track = format!("{} FPU_COUNTER per cycle", v.lane.name(arch));
        for z in &v.zones {
            if p.labels[z.site as usize].name != "inner" {
                continue;
            }
            let c = v.clock.as_ref();
            let (start, end) = (z.start_ns(c).round() as u64, z.end_ns(c).round() as u64);
            if p.ops[z.op.unwrap() as usize].run != 2 {
                unarmed.push(start);
                continue;
            }
            let cycles = z.end_cycles - z.start_cycles;
            assert_eq!(cycles, 10);
            let rate = 100.0 * z.value.unwrap() as f64 / cycles as f64;
            want.push((track.clone(), start, rate));
            want.push((track.clone(), end, 0.0));
        }
    }
    assert_eq!((want.len(), unarmed.len()), (20, 20));
    // One by hand: Matmul's inner zone on tile 0's BRISC counted 200 in 10 cycles.
    let brisc = format!(
        "{} FPU_COUNTER per cycle",
        p.rings().next().unwrap().lane.name(arch)
    );
    assert!(want.iter().any(|w| w.0 == brisc && w.2 == 2000.0));
    // Counted zones of EltwiseAdd and Relu (nothing armed in `fpu`): no point, not a 0.
    assert!(got
        .iter()
        .all(|g| !g.0.ends_with("per cycle") || !unarmed.contains(&g.1)));
    let op = |run: u32| {
        p.ops
            .iter()
            .find(|o| o.run == run)
            .unwrap()
            .host_ns
            .unwrap()
    };
    let fpu = "FPU_COUNTER over ops (% of cycles)".to_string();
    let pack = "PACKER_BUSY over ops (% of cycles)".to_string();
    want.extend([
        (fpu.clone(), op(2).0, 25.0),
        (fpu, op(2).1, 0.0),
        (pack.clone(), op(1).0, 50.0),
        (pack.clone(), op(1).1, 0.0),
        (pack.clone(), op(2).0, 25.0),
        (pack, op(2).1, 0.0),
    ]);
    let by = |a: &(String, u64, f64), b: &(String, u64, f64)| a.partial_cmp(b).unwrap();
    got.sort_by(by);
    want.sort_by(by);
    assert_eq!(got, want);
    assert_eq!(s.stats.counter_points, 26);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A counter track reads the latest-started span still open: an inner span's end goes
/// back to the outer one's value, overlapping spans hand over, adjacent ones drop to 0 in
/// between.
#[test]
fn counter_steps_follow_the_latest_open_span() {
    use super::counters::steps;
    assert_eq!(
        steps(vec![(0, 100, 5.0), (10, 20, 7.0)]),
        [(0, 5.0), (10, 7.0), (20, 5.0), (100, 0.0)]
    );
    assert_eq!(
        steps(vec![(5, 15, 2.0), (0, 10, 1.0)]),
        [(0, 1.0), (5, 2.0), (15, 0.0)]
    );
    assert_eq!(
        steps(vec![(0, 10, 1.0), (10, 20, 2.0)]),
        [(0, 1.0), (10, 0.0), (10, 2.0), (20, 0.0)]
    );
    assert!(steps(vec![]).is_empty());
}

/// Issue 41: an op the op log does not time sits at its device span, which was its `f64` ns
/// rounded; on a chip up for months its slice is at the exact whole ns of its first FW or
/// KERNEL start and last end.
#[test]
fn untimed_op_slices_stay_exact_at_large_cycle_counts() {
    let offset = (1u64 << 62) + 7;
    let arch = riscv_linker::Arch::WormholeB0;
    let p = fixture::profile_at(offset, arch, false);
    assert!(p.ops.iter().all(|o| o.host_ns.is_none()));
    let dir = crate::testing::temp_dir("perfetto-large-op-slices");
    let path = dir.join(FILE_NAME);
    let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
    sink::drive(&p, &mut [&mut s]).unwrap();
    let mut got: Vec<(i32, u64)> = packets(&std::fs::read(&path).unwrap())
        .into_iter()
        // Sequence 1: descriptors, ops and counters (lanes have their own).
        .filter(|pk| pk.trusted_packet_sequence_id == Some(1))
        .filter_map(|pk| Some((pk.track_event?.r#type?, pk.timestamp?)))
        .filter(|(t, _)| [TYPE_SLICE_BEGIN, TYPE_SLICE_END].contains(t))
        .collect();
    let ns = |c: u64| fixture::whole_ns(arch, c) as u64;
    let mut want: Vec<(i32, u64)> = Vec::new();
    for d in p.device_ops.by_run.values() {
        let spans = || [d.fw, d.kernel].into_iter().flatten();
        let start = spans().map(|s| s.start.cycles).min().unwrap();
        let end = spans().map(|s| s.end.cycles).max().unwrap();
        want.push((TYPE_SLICE_BEGIN, ns(start)));
        want.push((TYPE_SLICE_END, ns(end)));
    }
    assert!(!want.is_empty());
    got.sort();
    want.sort();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fixture's rings with, on the first ring (run 2: Matmul, whose counted zones count),
/// a zone that overlaps the zone it opens in (it starts inside the KERNEL zone and ends after
/// the FW zone around it: cut, clamped), a value zone `inner` that overlaps the ring's own
/// `inner` (counter spans that hand over), two events at one cycle (equal keys in opening
/// order) and an event after the ring's last zone.
fn overlapping_readout() -> crate::readout::Readout {
    use crate::decode::RecordKind;
    use fixture::site;
    let mut r = fixture::readout();
    let run = 2;
    let x = fixture::times(run, 0, riscv_linker::Risc::Brisc);
    let rec = &mut r.rings[0].records;
    let zone = RecordKind::Zone;
    rec.push(zone, site::WORK, x.kernel.0 + 1, x.fw.1 + 50, 0, 0, run);
    let (a, b) = (x.inner.0 + 3, x.inner.1 + 20);
    rec.push(RecordKind::ValueZone, site::INNER, a, b, 7, 0, run);
    for s in [site::BARRIER, site::WAIT] {
        let at = x.kernel.0 + 2;
        rec.push(RecordKind::Event, s, at, at, 0, 0, run);
    }
    let late = x.fw.1 + 900;
    rec.push(RecordKind::Event, site::BARRIER, late, late, 0, 0, run);
    r
}

/// [`counted_profile`] with `work` zones counted too (on the `pack` bank: a second counter
/// track), and on the first ring (run 2) a counted `work` zone and `inner` zone opening at
/// one cycle, twice: the longer one `inner`, then `work`. Two tracks' points at one time, the
/// second of them opened in the piece after the first when the ring is cut between them.
fn two_tracks_profile() -> Profile {
    use crate::decode::RecordKind;
    use fixture::site;
    let mut r = fixture::readout();
    let run = 2;
    let x = fixture::times(run, 0, riscv_linker::Risc::Brisc);
    let rec = &mut r.rings[0].records;
    for (at, inner, work) in [(x.kernel.0 + 5, 100, 50), (x.kernel.0 + 205, 50, 100)] {
        // The shorter closes first: it comes first in the ring.
        let mut two = [(site::INNER, inner), (site::WORK, work)];
        two.sort_by_key(|z| z.1);
        for (site, cycles) in two {
            rec.push(RecordKind::ValueZone, site, at, at + cycles, 3, 0, run);
        }
    }
    let mut p = counted_profile_of(r);
    for l in &mut p.labels {
        if l.name == "work" {
            l.counter = Some("pack");
        }
    }
    p
}

/// Two counter tracks' points at one time come in one order, the first-counted track's
/// first, whichever zone opens first (a point at the latest opening's time waits: a zone
/// opening at that time next may bring an earlier track's point).
#[test]
fn two_tracks_points_at_one_time_come_in_track_order() {
    let p = two_tracks_profile();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
    sink::drive(&p, &mut [&mut s]).unwrap();
    let (_, points) = counters_of(&packets(&std::fs::read(&path).unwrap()));
    let lane = p.rings().next().unwrap().lane.name(p.geometry().arch);
    let tracks = [
        format!("{lane} FPU_COUNTER per cycle"),
        format!("{lane} PACKER_BUSY per cycle"),
    ];
    let mine: Vec<&(String, u64, f64)> = points.iter().filter(|g| tracks.contains(&g.0)).collect();
    // Per time both tracks have a point at: the tracks in the order their points came.
    let mut orders = Vec::new();
    for w in mine.windows(2) {
        if w[0].1 == w[1].1 && w[0].0 != w[1].0 {
            orders.push((w[0].0.clone(), w[1].0.clone()));
        }
    }
    assert_eq!(orders.len(), 2, "{mine:?}");
    assert_eq!(orders[0], orders[1], "{mine:?}");
}

/// Counts the views it is given that are not whole rings (so a test knows the rings came
/// in pieces).
#[derive(Default)]
struct Pieces(usize);

impl crate::sink::Sink for Pieces {
    fn ring(&mut self, _: &Profile, v: &crate::profile::RingView) -> crate::Result<()> {
        self.0 += (v.part() != crate::sink::Part::WHOLE) as usize;
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn finish(&mut self, _: &Profile) -> crate::Result<crate::sink::Finished> {
        Ok(Default::default())
    }
}

/// Issue 41: a ring given in pieces (any window, any piece size) writes the trace the whole
/// ring writes, byte for byte, with the same counts: on the fixture, on counted zones, on a
/// ring with a zone that overlaps its parent (cut), overlapping counter spans and marks with
/// equal keys, on deep nesting whose zones hold many records (cut mid-zone) and on random
/// records (zones that overlap without nesting).
#[test]
fn rings_in_pieces_write_the_trace_whole_rings_do() {
    use crate::ring_source::{Cut, Held, RingSource};
    let profiles = [
        ("fixture", profile()),
        ("counted", counted_profile()),
        ("overlapping", counted_profile_of(overlapping_readout())),
        ("two tracks", two_tracks_profile()),
        (
            "overlapping, not counted",
            fixture::profile_of(overlapping_readout(), fixture::ARCH, true),
        ),
        // Deep nesting, zones holding many records (cut mid-zone), events at shared cycles.
        ("nested", crate::sink::parquet::tests::nested_profile(5)),
        // Every kind, zones that overlap without nesting, two chips.
        ("random", crate::sink::parquet::tests::random_profile(6)),
    ];
    // Each sink holds an analysis handle of its own (its critical paths' flows): it takes
    // pieces too.
    let with_paths = PerfettoSink::new(std::path::Path::new("x"), &crate::inputs::Inputs::none());
    assert!(with_paths.takes_pieces());
    for (name, p) in &profiles {
        // From `rings` through the drive, or (`None`) cut every `every` openings.
        let write = |rings: Option<&mut dyn RingSource>, every: usize, tag: &str| {
            let dir = crate::testing::temp_dir(&format!("perfetto-pieces-{tag}"));
            let path = dir.join(FILE_NAME);
            let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
            assert!(s.takes_pieces());
            let mut pieces = Pieces::default();
            let sinks: &mut [&mut dyn Sink] = &mut [&mut s, &mut pieces];
            let done = match rings {
                Some(rings) => sink::drive_rings(p, rings, sinks).unwrap(),
                None => sink::pieces::drive_resliced(p, every, sinks),
            };
            let bytes = std::fs::read(&path).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
            let at = path.display().to_string();
            let issues: Vec<String> = (done[0].issues.iter())
                .map(|i| format!("{i:?}").replace(&at, "TRACE"))
                .collect();
            (bytes, s.stats, issues, pieces.0)
        };
        let whole = write(Some(&mut Held(p)), 0, "whole");
        assert_eq!(whole.3, 0);
        assert!(whole.1.zones > 0 && whole.1.marks > 0, "{name}");
        if name.starts_with("overlapping") || *name == "random" {
            assert!(whole.1.clamped > 0, "{name}");
        }
        if name.starts_with("counted") || *name == "overlapping" || *name == "two tracks" {
            assert!(whole.1.counter_points > 0, "{name}");
        }
        for window in [1, 2, 5, 64] {
            for piece in [1, 3, 7, 1_000] {
                let tag = format!("{window}-{piece}");
                let cut = write(
                    Some(&mut Cut {
                        profile: p,
                        window,
                        piece,
                    }),
                    0,
                    &tag,
                );
                assert!(cut.3 >= 2 * p.ring_count(), "{name} {tag}: given in pieces");
                assert_eq!(cut.1, whole.1, "{name} {tag}");
                assert_eq!(cut.2, whole.2, "{name} {tag}");
                assert!(cut.0 == whole.0, "{name} {tag}: the traces differ");
            }
        }
        for every in [1, 2, 5] {
            let tag = format!("resliced-{every}");
            let cut = write(None, every, &tag);
            assert!(cut.3 >= 2 * p.ring_count(), "{name} {tag}: given in pieces");
            assert_eq!(cut.1, whole.1, "{name} {tag}");
            assert_eq!(cut.2, whole.2, "{name} {tag}");
            assert!(cut.0 == whole.0, "{name} {tag}: the traces differ");
        }
    }
}

/// Issue 41: what a lane carries from piece to piece does not grow with the ring: a ring of
/// a FW zone around thousands of zones, each with a child and followed by an event, held a
/// handful of ends and marks between pieces, and the trace is the whole ring's.
#[test]
fn a_long_ring_in_pieces_holds_what_its_nesting_needs() {
    use crate::decode::{RecordKind, Records};
    use crate::ring_source::{Cut, Held, RingSource};
    use fixture::site;
    let mut r = fixture::readout();
    let n = 3_000u64;
    let base = 1_000u64;
    let mut rec = Records::new();
    rec.push(RecordKind::Run, 0, base, base, 1, 0, 1);
    for k in 0..n {
        let at = base + 10 + 10 * k;
        rec.push(RecordKind::Zone, site::INNER, at + 1, at + 3, 0, 0, 1);
        rec.push(RecordKind::Zone, site::WORK, at, at + 5, 0, 0, 1);
        rec.push(RecordKind::Event, site::BARRIER, at + 7, at + 7, 0, 0, 1);
    }
    let end = base + 20 + 10 * n;
    rec.push(RecordKind::Zone, site::BRISC_FW, base, end, 0, 0, 1);
    r.rings[0].records = rec;
    let p = fixture::profile_of(r, fixture::ARCH, true);
    let write = |rings: &mut dyn RingSource, tag: &str| {
        let dir = crate::testing::temp_dir(&format!("perfetto-long-{tag}"));
        let path = dir.join(FILE_NAME);
        let mut s = PerfettoSink::new(&path, &crate::inputs::Inputs::none());
        sink::drive_rings(&p, rings, &mut [&mut s]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (bytes, s.stats, s.most_held())
    };
    let whole = write(&mut Held(&p), "whole");
    assert_eq!(
        whole.1.zones,
        2 * n + 1 + 120 - 12,
        "12 zones a fixture ring"
    );
    for piece in [1, 100] {
        let cut = write(
            &mut Cut {
                profile: &p,
                window: 64,
                piece,
            },
            &format!("{piece}"),
        );
        assert!(cut.0 == whole.0, "piece {piece}: the traces differ");
        assert_eq!(cut.1, whole.1, "piece {piece}");
        // The FW zone and a WORK zone open (twice: slices and ring), an event waiting.
        assert!(cut.2 > 0 && cut.2 <= 8, "piece {piece}: held {}", cut.2);
    }
}
