//! The line profile in the Perfetto trace (`ttprof_trace.pftrace`): under each RISC's track
//! (its zones), one counter track per cause that took cycles on the core (`... BRISC
//! cycles: load-use %`: the cause's share of the core's cycles in each window) and one
//! slice track (`... BRISC hottest line`: per window a slice named by the line that took
//! the most cycles, with its share). A window is consecutive clock-read segments of one
//! launch (module `zones`), at least 1/200 of it.
//!
//! The packets are appended to the trace the outputs wrote (a Perfetto trace is a sequence
//! of packets, so two are one): a packet sequence of its own, absolute `BOOTTIME`
//! timestamps (the trace's host ns), names as plain strings.

use super::symbolize::{Frame, Names};
use super::zones::CoreWindows;
use super::{cause_name, Causes, CAUSES};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::sink::perfetto::proto::*;
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

/// The packet sequence of the line tracks (the trace's own start at 1).
const SEQUENCE: u32 = 0x7FFF_0000;

/// Track uuids of the line tracks: kind 5 in the top byte (the trace's own use 1..4, 6 and 7), the
/// lane's bits below, the track (0: hottest line, 1 + cause: a counter) in bits 24..32.
fn uuid(w: &CoreWindows, track: u64) -> u64 {
    let lane = crate::sink::perfetto::lane_track_uuid(w.chip, w.tile, w.risc);
    5 << 56 | (lane & 0x00FF_FFFF_FFFF_FFFF & !(0xFF << 24)) | track << 24
}

fn ns(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.round() as u64
    } else {
        0
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Appends the line tracks of `cores` to the trace at `path` (not one of `inputs`). Returns
/// the events written.
pub(crate) fn append(
    cores: &[CoreWindows],
    names: &Names,
    path: &Path,
    inputs: &Inputs,
) -> Result<u64> {
    let mut out = Vec::new();
    let mut events = 0u64;
    let mut first = true;
    let mut packet = |out: &mut Vec<u8>, mut p: TracePacket| {
        p.trusted_packet_sequence_id = Some(SEQUENCE);
        if first {
            p.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
            first = false;
        }
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, out);
        prost::encoding::encode_varint(p.encoded_len() as u64, out);
        let _ = p.encode(out);
    };
    let mut described = BTreeSet::new();
    for core in cores {
        let lane = crate::sink::perfetto::lane_track_uuid(core.chip, core.tile, core.risc);
        let used: Causes = core.windows.iter().fold([0; CAUSES], |mut a, w| {
            for (x, y) in a.iter_mut().zip(w.causes) {
                *x += y;
            }
            a
        });
        let causes: Vec<usize> = (0..CAUSES).filter(|&i| used[i] > 0).collect();
        let mut describe = |out: &mut Vec<u8>, track: u64, name: String, counter: bool| {
            let id = uuid(core, track);
            if described.insert(id) {
                packet(
                    out,
                    TracePacket {
                        track_descriptor: Some(TrackDescriptor {
                            uuid: Some(id),
                            name: Some(name),
                            parent_uuid: Some(lane),
                            sibling_order_rank: Some(100 + track as i32),
                            counter: counter.then(|| CounterDescriptor {
                                unit_name: Some("%".into()),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                );
            }
            id
        };
        let hottest = describe(&mut out, 0, format!("{} hottest line", core.lane), false);
        let counters: Vec<(usize, u64)> = causes
            .iter()
            .map(|&i| {
                let name = format!("{} cycles: {} %", core.lane, cause_name(i));
                (i, describe(&mut out, 1 + i as u64, name, true))
            })
            .collect();
        for w in &core.windows {
            let cycles: u64 = w.causes.iter().sum();
            let at = ns(w.start_ns);
            for &(i, track) in &counters {
                let value = share(w.causes[i], cycles);
                packet(&mut out, counter(at, track, value));
                events += 1;
            }
            // The window's hottest source line (its pcs added up).
            let mut lines: BTreeMap<Frame, u64> = BTreeMap::new();
            for &(pc, n) in &w.pcs {
                *lines
                    .entry(names.get(&core.key.elf, pc).source().clone())
                    .or_default() += n;
            }
            let Some((leaf, top)) = lines
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            else {
                continue;
            };
            let begin = TrackEvent {
                r#type: Some(TYPE_SLICE_BEGIN),
                track_uuid: Some(hottest),
                name: Some(format!(
                    "{} {:.0}% {}",
                    leaf.location(),
                    share(top, cycles),
                    leaf.function
                )),
                debug_annotations: vec![
                    DebugAnnotation {
                        name: Some("line_cycles".into()),
                        uint_value: Some(top),
                        ..Default::default()
                    },
                    DebugAnnotation {
                        name: Some("window_cycles".into()),
                        uint_value: Some(cycles),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            };
            packet(&mut out, event(at, begin));
            let end = TrackEvent {
                r#type: Some(TYPE_SLICE_END),
                track_uuid: Some(hottest),
                ..Default::default()
            };
            packet(&mut out, event(ns(w.end_ns), end));
            events += 2;
        }
        // The counters drop to 0 when the launch ends.
        if let Some(last) = core.windows.last() {
            for &(_, track) in &counters {
                packet(&mut out, counter(ns(last.end_ns), track, 0.0));
                events += 1;
            }
        }
    }
    crate::atomic::write_atomic(path, inputs, |w| {
        let mut old = std::fs::File::open(path)?;
        std::io::copy(&mut old, w)?;
        w.write_all(&out)
    })?;
    Ok(events)
}

fn counter(at: u64, track: u64, value: f64) -> TracePacket {
    event(
        at,
        TrackEvent {
            r#type: Some(TYPE_COUNTER),
            track_uuid: Some(track),
            double_counter_value: Some(value),
            ..Default::default()
        },
    )
}

fn event(at: u64, e: TrackEvent) -> TracePacket {
    TracePacket {
        timestamp: Some(at),
        track_event: Some(e),
        ..Default::default()
    }
}
