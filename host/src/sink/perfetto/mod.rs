//! Perfetto's native trace (`ttprof_trace.pftrace`): protobuf `TracePacket`s with
//! `TrackEvent`s, which Perfetto's UI and trace processor load without the JSON importer's
//! size limits (Perfetto calls Chrome JSON "legacy").
//!
//! * Tracks: one per chip (`Device 0 (wormhole_b0)`), under it one per tile
//!   (`(0,0) [x=1 y=1]`) and the op tracks (`ops`, `ops 2`, ... when ops overlap), under each
//!   tile one per RISC (`(0,0) [x=1 y=1] BRISC`, the same lane name as the JSON trace), in
//!   explicit order.
//! * Zones are `TYPE_SLICE_BEGIN`/`TYPE_SLICE_END` pairs on their RISC's track, written in
//!   nesting order (a zone that ends after its enclosing zone, or after the next sibling
//!   starts, is cut there and counted: times from corrupt records). The begin carries the
//!   debug annotations `loc` (`file:line`) and `op`, and a value zone's (`value_zone!`)
//!   `value`. Events, data and sums are
//!   `TYPE_INSTANT`s on the same track; data carry `value`, sums `total_cycles` and
//!   `count`. Ops are slices on their chip's op tracks at their host times, with `run`.
//! * Performance counters (`TYPE_COUNTER` on counter tracks, unit `%`): under each RISC's
//!   track, one per counter its counted zones (`counted_zone!`) count
//!   (`(0,0) [x=1 y=1] TRISC_1 FPU_COUNTER per cycle`): 100 * the zone's value / its cycles
//!   from the zone's start, 0 from its end, in the ring's own sequence. The counter is the one
//!   `ttprof run --counters` armed in the zone's bank for its op; a zone of an op that armed
//!   none measured nothing and has no point. Beside the op tracks, one per counter the op log
//!   holds (`FPU_COUNTER over ops (% of cycles)`): over each op's slice, 100 * its value
//!   summed over the op's tiles / the cycles of those tiles, 0 between ops. Where spans of
//!   one track overlap, it reads the latest-started one still open.
//! * Each ring is one packet sequence: its first packet clears the incremental state,
//!   interns the annotation names, sets the ring's track as the default track and a
//!   sequence-scoped incremental clock as the default clock. Every later packet carries only
//!   the time since the previous one, the event type and interned ids: a zone (begin and
//!   end) costs a few dozen bytes at most. A zone name, a `file:line` or an op string is
//!   interned with the first packet of the sequence that uses it (as Perfetto's own SDK
//!   does), so the sequence is written without knowing the ring's names up front.
//! * Times are host ns from the clock fit (`BOOTTIME` domain, whole ns).
//! * Packets are written in `compressed_packets` chunks (zlib of about 1 MiB of packets
//!   each), as Perfetto's tracing service does with `compression_type: DEFLATE`; the trace
//!   processor and UI inflate them on load.
//!
//! Written streaming ([`PerfettoSink`]): chip descriptors first, then ring by ring (each
//! ring's tile and RISC descriptors before its events, a lane's counter track's descriptor
//! before its first point), the ops last (so a run fed in parts, [`crate::sink::stream`],
//! has their device spans). Names come from the profile each ring arrives with.
//!
//! A ring can be given in pieces ([`crate::sink::Part`], issue 41): the trace is the one the
//! whole ring writes, byte for byte. Between pieces the sink carries the ring's lane, its
//! sequence (its number, the time of its last packet, the names and ops interned in it:
//! at most the profile's sites and ops) and the events not final yet (`events::InRing`:
//! the open zones' ends, the open counter spans, the marks and points at the latest
//! opening's time): bounded by the nesting depth and the counters, never the ring's zones.
//! It takes pieces when its analysis handle (the critical paths' flows) does too.

mod counters;
mod events;
pub mod proto;
mod sink;

pub(crate) use sink::lane_track_uuid;
pub use sink::{PerfettoSink, PerfettoStats};

/// The file name ttprof writes.
pub const FILE_NAME: &str = "ttprof_trace.pftrace";

#[cfg(test)]
mod tests;
