//! Event encoding: one method per event ttprof sends, each appending the packed bytes.
//!
//! Times are delta-encoded against running references that both ends keep, exactly as
//! Tracy's client does (`Profiler::Dequeue` / `DequeueSerial`, `public/client/TracyProfiler.cpp`)
//! and its server undoes (`RefTime`, `server/TracyWorker.cpp`):
//!
//! * CPU zone begin/end: against the current thread's reference, reset to 0 by every
//!   `ThreadContext`; a non-negative delta uses the 16-, 32- or 64-bit form, the latter two
//!   biased by [`OFFSET_16`] / [`OFFSET_32`] (`Worker::ProcessZoneBegin32/64`).
//! * GPU zone begin/end `cpuTime`: against one reference for all serial events.
//! * `GpuTime`: against one reference for all GPU contexts.
//! * Messages and `GpuNewContext` carry absolute times.
//!
//! Events that read a preceding "single string" (GPU context names, messages, zone texts)
//! are written together with it, so nothing can come between them.

use super::protocol::{truncate_utf8, Ev, MessageSeverity, OFFSET_16, OFFSET_32};

/// Longest string one event carries (`u16` length).
pub(crate) const MAX_STRING: usize = u16::MAX as usize;

/// Which GPU context, lane (thread) and query slot a GPU zone event is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GpuAt {
    pub context: u8,
    pub thread: u32,
    pub query: u16,
}

/// Appends events to a buffer, keeping the delta-encoding references of one connection.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    /// The thread of the last `ThreadContext` (0 before any).
    thread: u32,
    ref_thread: i64,
    ref_serial: i64,
    ref_gpu: i64,
}

impl Encoder {
    pub(crate) fn new() -> Encoder {
        Encoder::default()
    }

    fn head(out: &mut Vec<u8>, ev: Ev) {
        out.push(ev as u8);
    }

    /// Switches the current thread (CPU zones and messages belong to it) if it differs.
    pub(crate) fn thread_context(&mut self, out: &mut Vec<u8>, thread: u32) {
        if self.thread == thread && thread != 0 {
            return;
        }
        Self::head(out, Ev::ThreadContext);
        out.extend_from_slice(&thread.to_le_bytes());
        self.thread = thread;
        self.ref_thread = 0;
    }

    /// Makes the server create the current thread and ask its name, with no other effect:
    /// `ZoneValidation` with id 0 sets the thread's next zone id to 0, its initial value
    /// (`Worker::ProcessZoneValidation`), after noticing the thread (`GetCurrentThreadData`).
    pub(crate) fn notice_thread(&mut self, out: &mut Vec<u8>, thread: u32) {
        self.thread_context(out, thread);
        Self::head(out, Ev::ZoneValidation);
        out.extend_from_slice(&0u32.to_le_bytes());
    }

    /// A string for the next event that takes one (`SendSingleString` in TracyProfiler.cpp:
    /// an 8-bit length up to 255 bytes, else a 16-bit length biased by 256).
    fn single_string(out: &mut Vec<u8>, s: &str) {
        let s = truncate_utf8(s, MAX_STRING);
        if s.len() <= u8::MAX as usize {
            Self::head(out, Ev::SingleStringData8);
            out.push(s.len() as u8);
        } else {
            Self::head(out, Ev::SingleStringData);
            out.extend_from_slice(&((s.len() - 256) as u16).to_le_bytes());
        }
        out.extend_from_slice(s.as_bytes());
    }

    /// A string transfer answering a query (`StringData`, `ThreadName`, ...).
    pub(crate) fn string_transfer(out: &mut Vec<u8>, ev: Ev, ptr: u64, s: &str) {
        debug_assert!(ev.is_string_transfer());
        let s = truncate_utf8(s, MAX_STRING);
        Self::head(out, ev);
        out.extend_from_slice(&ptr.to_le_bytes());
        out.extend_from_slice(&(s.len() as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    /// An answer with no payload (`AckServerQueryNoop`, `AckSymbolCodeNotAvailable`).
    pub(crate) fn ack(out: &mut Vec<u8>, ev: Ev) {
        Self::head(out, ev);
    }

    pub(crate) fn ack_source_code_not_available(out: &mut Vec<u8>, id: u32) {
        Self::head(out, Ev::AckSourceCodeNotAvailable);
        out.extend_from_slice(&id.to_le_bytes());
    }

    /// The answer to a source-location query: string keys, line, colour (0 = Tracy's default).
    pub(crate) fn source_location(
        out: &mut Vec<u8>,
        name: u64,
        function: u64,
        file: u64,
        line: u32,
        rgb: u32,
    ) {
        Self::head(out, Ev::SourceLocation);
        for v in [name, function, file] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&line.to_le_bytes());
        out.extend_from_slice(&[rgb as u8, (rgb >> 8) as u8, (rgb >> 16) as u8]);
    }

    /// A GPU context whose zones carry their own thread (context thread 0), period 1 ns.
    /// GPU time `gpu_time` corresponds to host time `cpu_time`.
    pub(crate) fn gpu_new_context(
        &mut self,
        out: &mut Vec<u8>,
        context: u8,
        kind: u8,
        cpu_time: i64,
        gpu_time: i64,
    ) {
        Self::head(out, Ev::GpuNewContext);
        out.extend_from_slice(&cpu_time.to_le_bytes());
        out.extend_from_slice(&gpu_time.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&1.0f32.to_le_bytes());
        out.extend_from_slice(&[context, 0, kind]);
    }

    pub(crate) fn gpu_context_name(&mut self, out: &mut Vec<u8>, context: u8, name: &str) {
        Self::single_string(out, name);
        Self::head(out, Ev::GpuContextName);
        out.push(context);
    }

    /// A GPU zone opens on `at.thread` (its lane), with static source location `srcloc`,
    /// at host time `cpu_time` = GPU time `gpu_time` (see [`Encoder::gpu_new_context`]).
    pub(crate) fn gpu_zone_begin(
        &mut self,
        out: &mut Vec<u8>,
        at: GpuAt,
        srcloc: u64,
        cpu_time: i64,
        gpu_time: i64,
    ) {
        Self::head(out, Ev::GpuZoneBeginSerial);
        self.gpu_zone_common(out, at, cpu_time);
        out.extend_from_slice(&srcloc.to_le_bytes());
        self.gpu_time(out, at, gpu_time);
    }

    /// The innermost open GPU zone of `at.thread` closes (times as for a begin).
    pub(crate) fn gpu_zone_end(
        &mut self,
        out: &mut Vec<u8>,
        at: GpuAt,
        cpu_time: i64,
        gpu_time: i64,
    ) {
        Self::head(out, Ev::GpuZoneEndSerial);
        self.gpu_zone_common(out, at, cpu_time);
        self.gpu_time(out, at, gpu_time);
    }

    fn gpu_zone_common(&mut self, out: &mut Vec<u8>, at: GpuAt, cpu_time: i64) {
        out.extend_from_slice(&(cpu_time.wrapping_sub(self.ref_serial)).to_le_bytes());
        self.ref_serial = cpu_time;
        out.extend_from_slice(&at.thread.to_le_bytes());
        out.extend_from_slice(&at.query.to_le_bytes());
        out.push(at.context);
    }

    /// The GPU timestamp of the begin or end just sent with `query` (sent right after it, so
    /// the server's query slot is free again before the next use).
    fn gpu_time(&mut self, out: &mut Vec<u8>, at: GpuAt, time: i64) {
        Self::head(out, Ev::GpuTime);
        out.extend_from_slice(&(time.wrapping_sub(self.ref_gpu)).to_le_bytes());
        self.ref_gpu = time;
        out.extend_from_slice(&at.query.to_le_bytes());
        out.push(at.context);
    }

    /// A CPU zone opens on the current thread.
    pub(crate) fn zone_begin(&mut self, out: &mut Vec<u8>, srcloc: u64, time: i64) {
        let dt = time.wrapping_sub(self.ref_thread);
        self.ref_thread = time;
        if (0..OFFSET_16).contains(&dt) {
            Self::head(out, Ev::ZoneBegin16);
            out.extend_from_slice(&(dt as u16).to_le_bytes());
        } else if (0..OFFSET_32).contains(&dt) {
            Self::head(out, Ev::ZoneBegin32);
            out.extend_from_slice(&((dt - OFFSET_16) as u32).to_le_bytes());
        } else {
            Self::head(out, Ev::ZoneBegin);
            let v = if dt >= 0 { dt - OFFSET_32 } else { dt };
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&srcloc.to_le_bytes());
    }

    /// Text shown with the innermost open CPU zone of the current thread.
    pub(crate) fn zone_text(&mut self, out: &mut Vec<u8>, text: &str) {
        Self::single_string(out, text);
        Self::head(out, Ev::ZoneText);
    }

    /// The innermost open CPU zone of the current thread closes.
    pub(crate) fn zone_end(&mut self, out: &mut Vec<u8>, time: i64) {
        let dt = time.wrapping_sub(self.ref_thread);
        self.ref_thread = time;
        if (0..OFFSET_16).contains(&dt) {
            Self::head(out, Ev::ZoneEnd16);
            out.extend_from_slice(&(dt as u16).to_le_bytes());
        } else if (0..OFFSET_32).contains(&dt) {
            Self::head(out, Ev::ZoneEnd32);
            out.extend_from_slice(&((dt - OFFSET_16) as u32).to_le_bytes());
        } else {
            Self::head(out, Ev::ZoneEnd);
            let v = if dt >= 0 { dt - OFFSET_32 } else { dt };
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A message on the current thread at absolute `time`.
    pub(crate) fn message(
        &mut self,
        out: &mut Vec<u8>,
        time: i64,
        severity: MessageSeverity,
        text: &str,
    ) {
        Self::single_string(out, text);
        Self::head(out, Ev::Message);
        out.extend_from_slice(&time.to_le_bytes());
        out.push(severity.metadata());
    }

    /// The program has sent everything (`QueueType::Terminate`).
    pub(crate) fn terminate(out: &mut Vec<u8>) {
        Self::head(out, Ev::Terminate);
    }
}
