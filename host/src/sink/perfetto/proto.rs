//! The subset of Perfetto's trace protos (`protos/perfetto/trace/...`) ttprof writes, as
//! hand-written `prost` messages with Perfetto's field numbers. Only the fields used are
//! declared; a reader skips what it does not know, so the subset stays wire-compatible.

#![allow(missing_docs)]

/// `perfetto.protos.Trace`: the file is a sequence of `packet` fields (tag 1).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket` (trace_packet.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(message, optional, tag = "6")]
    pub(crate) clock_snapshot: Option<ClockSnapshot>,
    #[prost(uint32, optional, tag = "10")]
    pub(crate) trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "12")]
    pub(crate) interned_data: Option<InternedData>,
    #[prost(uint32, optional, tag = "13")]
    pub(crate) sequence_flags: Option<u32>,
    #[prost(uint32, optional, tag = "58")]
    pub(crate) timestamp_clock_id: Option<u32>,
    #[prost(message, optional, tag = "59")]
    pub(crate) trace_packet_defaults: Option<TracePacketDefaults>,
    #[prost(message, optional, tag = "60")]
    pub(crate) track_descriptor: Option<TrackDescriptor>,
    /// A zlib-compressed serialized `Trace` (packets inside).
    #[prost(bytes = "vec", optional, tag = "50")]
    pub compressed_packets: Option<Vec<u8>>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub(crate) const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
pub(crate) const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `perfetto.protos.ClockSnapshot` (clock_snapshot.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
}

/// `ClockSnapshot.Clock`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) clock_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
    #[prost(bool, optional, tag = "3")]
    pub(crate) is_incremental: Option<bool>,
    #[prost(uint64, optional, tag = "4")]
    pub(crate) unit_multiplier_ns: Option<u64>,
}

/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`: the trace's default clock.
pub(crate) const CLOCK_BOOTTIME: u32 = 6;
/// The first sequence-scoped clock id (64..=127 belong to the sequence defining them).
pub(crate) const CLOCK_SEQUENCE_DELTA: u32 = 64;

/// `perfetto.protos.TracePacketDefaults` (trace_packet_defaults.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TracePacketDefaults {
    #[prost(message, optional, tag = "11")]
    pub(crate) track_event_defaults: Option<TrackEventDefaults>,
    #[prost(uint32, optional, tag = "58")]
    pub(crate) timestamp_clock_id: Option<u32>,
}

/// `perfetto.protos.TrackEventDefaults` (track_event.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub(crate) track_uuid: Option<u64>,
}

/// `perfetto.protos.TrackEvent` (track_event.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(message, repeated, tag = "4")]
    pub(crate) debug_annotations: Vec<DebugAnnotation>,
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub(crate) name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub(crate) track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// A `TYPE_COUNTER` event's value.
    #[prost(double, optional, tag = "44")]
    pub(crate) double_counter_value: Option<f64>,
    /// Flows that leave this event (the critical path's signal -> wait arrows).
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows that end at this event.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
pub(crate) const TYPE_SLICE_BEGIN: i32 = 1;
/// `TrackEvent.Type.TYPE_SLICE_END`.
pub(crate) const TYPE_SLICE_END: i32 = 2;
/// `TrackEvent.Type.TYPE_INSTANT`.
pub(crate) const TYPE_INSTANT: i32 = 3;
/// `TrackEvent.Type.TYPE_COUNTER`.
pub(crate) const TYPE_COUNTER: i32 = 4;

/// `perfetto.protos.DebugAnnotation` (debug_annotation.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub(crate) uint_value: Option<u64>,
    #[prost(string, optional, tag = "6")]
    pub(crate) string_value: Option<String>,
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "17")]
    pub(crate) string_value_iid: Option<u64>,
}

/// `perfetto.protos.InternedData` (interned_data.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct InternedData {
    #[prost(message, repeated, tag = "2")]
    pub(crate) event_names: Vec<Interned>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) debug_annotation_names: Vec<Interned>,
    #[prost(message, repeated, tag = "29")]
    pub(crate) debug_annotation_string_values: Vec<InternedString>,
}

/// `EventName` and `DebugAnnotationName`: `iid = 1`, `name = 2`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Interned {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `perfetto.protos.InternedString`: `iid = 1`, `str = 2` (bytes).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}

/// `perfetto.protos.TrackDescriptor` (track_descriptor.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "5")]
    pub(crate) parent_uuid: Option<u64>,
    #[prost(int32, optional, tag = "11")]
    pub(crate) child_ordering: Option<i32>,
    #[prost(int32, optional, tag = "12")]
    pub(crate) sibling_order_rank: Option<i32>,
    /// Present on a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.CounterDescriptor` (counter_descriptor.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub(crate) unit_name: Option<String>,
}

/// `TrackDescriptor.ChildTracksOrdering.EXPLICIT`: children sorted by `sibling_order_rank`.
pub(crate) const CHILD_ORDERING_EXPLICIT: i32 = 3;
