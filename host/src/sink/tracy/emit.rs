//! A [`TracyStream`] in wire order, and the answers to the capture tool's queries.
//!
//! Order of a session: every GPU context (`GpuNewContext`, its name), every lane thread
//! noticed (so the tool asks its name), the host rows' op zones, the messages, then all
//! lanes' zone begins and ends merged into one time order (a k-way merge), so each
//! context's GPU time stream never goes back (Tracy would read a jump back of more than
//! 2^31 ns as a counter wrap). The lanes' events are read back from the stream's spool a
//! window at a time ([`super::records`]), so the merge holds one window per lane; the host
//! rows' zones and the messages likewise: one row's reader at a time,
//! and for messages the readers of one thread's runs (one, unless several rings share a
//! thread), merged by time. Times go out relative to the stream's base for GPU times, so
//! they start at 0; the contexts map GPU time 0 to host time `base`.

use super::encode::{Encoder, GpuAt};
use super::plan::{HostZone, LaneEv, Message, TracyStream, END, SRCLOC_KEY_BASE};
use super::protocol::{Ev, Query, QueryPacket, GPU_CONTEXT_CUSTOM};
use super::records::RecordReader;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Contexts,
    Threads,
    Host,
    Messages,
    Device,
    Done,
}

/// Walks a stream one event group at a time, with one connection's encoder state.
pub(crate) struct Emitter<'a> {
    s: &'a TracyStream,
    enc: Encoder,
    phase: Phase,
    /// Position within the phase: (item, sub-item).
    i: usize,
    j: usize,
    threads: Vec<u32>,
    /// Each lane's events not merged yet, and the merge: (next event, lane) by time.
    readers: Vec<RecordReader<LaneEv>>,
    heap: BinaryHeap<Reverse<(i64, u32, u32)>>,
    heap_ready: bool,
    /// The host row being sent.
    host: Option<RecordReader<HostZone>>,
    /// The message runs of the thread being sent, each with its next message.
    group: Vec<(RecordReader<Message>, Option<Message>)>,
    next_query: Vec<u16>,
    /// GPU zone begins sent so far.
    pub(crate) zones_sent: u64,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(s: &'a TracyStream) -> Emitter<'a> {
        let threads = s.lanes.iter().map(|l| l.thread).collect();
        let readers = s
            .lanes
            .iter()
            .map(|l| s.records.reader_of(&l.events))
            .collect();
        let next_query = vec![0; s.contexts.len()];
        Emitter {
            s,
            enc: Encoder::new(),
            phase: Phase::Contexts,
            i: 0,
            j: 0,
            threads,
            readers,
            heap: BinaryHeap::new(),
            heap_ready: false,
            host: None,
            group: Vec::new(),
            next_query,
            zones_sent: 0,
        }
    }

    fn advance(&mut self, to: Phase) {
        self.phase = to;
        self.i = 0;
        self.j = 0;
    }

    /// Lane `lane`'s next event into the merge.
    fn refill(&mut self, lane: u32) -> io::Result<()> {
        let reader = &mut self.readers[lane as usize];
        if let Some(LaneEv { time, srcloc }) = reader.next().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot read the Tracy stream's spool back: {e}"),
            )
        })? {
            self.heap.push(Reverse((time, lane, srcloc)));
        }
        Ok(())
    }

    /// Appends the next event group to `out`; false once everything has been emitted (an
    /// error only when the spooled events cannot be read back).
    pub(crate) fn next(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let base = self.s.summary.base_ns;
        loop {
            match self.phase {
                Phase::Contexts => match self.s.contexts.get(self.i) {
                    Some(c) => {
                        self.enc
                            .gpu_new_context(out, c.id, GPU_CONTEXT_CUSTOM, base, 0);
                        self.enc.gpu_context_name(out, c.id, &c.name);
                        self.i += 1;
                        return Ok(true);
                    }
                    None => self.advance(Phase::Threads),
                },
                Phase::Threads => match self.threads.get(self.i) {
                    Some(&t) => {
                        self.enc.notice_thread(out, t);
                        self.i += 1;
                        return Ok(true);
                    }
                    None => self.advance(Phase::Host),
                },
                Phase::Host => {
                    let Some(row) = self.s.host.get(self.i) else {
                        self.advance(Phase::Messages);
                        continue;
                    };
                    let reader = self
                        .host
                        .get_or_insert_with(|| self.s.records.reader(row.span));
                    match reader.next().map_err(read_error)? {
                        Some(z) => {
                            self.enc.thread_context(out, row.thread);
                            self.enc
                                .zone_begin(out, SRCLOC_KEY_BASE + z.srcloc as u64, z.start);
                            self.enc.zone_text(out, &z.text);
                            self.enc.zone_end(out, z.end);
                            return Ok(true);
                        }
                        None => {
                            self.host = None;
                            self.i += 1;
                        }
                    }
                }
                Phase::Messages => {
                    if self.group.is_empty() {
                        let runs = &self.s.messages;
                        let Some(thread) = runs.get(self.i).map(|r| r.thread) else {
                            self.advance(Phase::Device);
                            continue;
                        };
                        while let Some(r) = runs.get(self.i).filter(|r| r.thread == thread) {
                            let mut reader = self.s.records.reader(r.span);
                            let first = reader.next().map_err(read_error)?;
                            self.group.push((reader, first));
                            self.i += 1;
                        }
                    }
                    // The earliest message (then the least rank), the earlier run first on ties.
                    let next = (self.group.iter().enumerate())
                        .filter_map(|(k, (_, m))| m.as_ref().map(|m| (m.time, m.rank, k)))
                        .min();
                    let Some((_, _, k)) = next else {
                        self.group.clear();
                        continue;
                    };
                    let (reader, head) = &mut self.group[k];
                    let following = reader.next().map_err(read_error)?;
                    if let Some(m) = std::mem::replace(head, following) {
                        self.enc.thread_context(out, m.thread);
                        self.enc.message(out, m.time, m.severity, &m.text);
                    }
                    return Ok(true);
                }
                Phase::Device => {
                    if !self.heap_ready {
                        for lane in 0..self.readers.len() as u32 {
                            self.refill(lane)?;
                        }
                        self.heap_ready = true;
                    }
                    let Some(Reverse((time, lane, srcloc))) = self.heap.pop() else {
                        self.advance(Phase::Done);
                        continue;
                    };
                    self.refill(lane)?;
                    let l = &self.s.lanes[lane as usize];
                    let query = &mut self.next_query[l.context as usize];
                    let at = GpuAt {
                        context: l.context,
                        thread: l.thread,
                        query: *query,
                    };
                    *query = query.wrapping_add(1);
                    match srcloc {
                        END => self.enc.gpu_zone_end(out, at, time, time - base),
                        srcloc => {
                            self.enc.gpu_zone_begin(
                                out,
                                at,
                                SRCLOC_KEY_BASE + srcloc as u64,
                                time,
                                time - base,
                            );
                            self.zones_sent += 1;
                        }
                    }
                    return Ok(true);
                }
                Phase::Done => return Ok(false),
            }
        }
    }
}

fn read_error(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot read the Tracy stream's message spool back: {e}"),
    )
}

/// What a query asked for, once answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// An answer was appended to `out`.
    Answered,
    /// `ServerQueryTerminate`: the tool has everything it wants and closes.
    Terminate,
    /// `ServerQueryDisconnect`: the user stopped the capture.
    Disconnect,
    /// A query type this stream never causes; answered with an acknowledgement so the
    /// tool's query budget is returned.
    Unexpected,
}

/// Appends the answer to `q` (the events Tracy's client sends in `Profiler::HandleServerQuery`).
pub(crate) fn answer(s: &TracyStream, q: QueryPacket, out: &mut Vec<u8>) -> Reply {
    let string = |key: u64| {
        key.checked_sub(1)
            .and_then(|i| s.strings.get(i as usize))
            .map_or("???", |s| s.as_str())
    };
    match q.query() {
        Some(Query::Terminate) => return Reply::Terminate,
        Some(Query::Disconnect) => return Reply::Disconnect,
        Some(Query::String) => Encoder::string_transfer(out, Ev::StringData, q.ptr, string(q.ptr)),
        Some(Query::ThreadString) => {
            let name = s
                .threads
                .get(&(q.ptr as u32))
                .cloned()
                .unwrap_or_else(|| format!("thread {:#x}", q.ptr));
            Encoder::string_transfer(out, Ev::ThreadName, q.ptr, &name);
        }
        Some(Query::SourceLocation) => {
            let loc = q
                .ptr
                .checked_sub(SRCLOC_KEY_BASE)
                .and_then(|i| s.srclocs.get(i as usize));
            match loc {
                Some(l) => Encoder::source_location(out, l.name, l.function, l.file, l.line, 0),
                None => Encoder::source_location(out, 0, 0, 0, 0, 0),
            }
        }
        Some(Query::PlotName) => Encoder::string_transfer(out, Ev::PlotName, q.ptr, "???"),
        Some(Query::FrameName) => Encoder::string_transfer(out, Ev::FrameName, q.ptr, "???"),
        Some(Query::FiberName) => Encoder::string_transfer(out, Ev::FiberName, q.ptr, "???"),
        Some(Query::ExternalName) => {
            Encoder::string_transfer(out, Ev::ExternalName, q.ptr, "???");
            Encoder::string_transfer(out, Ev::ExternalThreadName, q.ptr, "???");
            return Reply::Unexpected;
        }
        Some(Query::SourceCode) => {
            Encoder::ack_source_code_not_available(out, q.ptr as u32);
            return Reply::Unexpected;
        }
        Some(Query::SymbolCode) => {
            Encoder::ack(out, Ev::AckSymbolCodeNotAvailable);
            return Reply::Unexpected;
        }
        Some(
            Query::Parameter
            | Query::DataTransfer
            | Query::DataTransferPart
            | Query::Symbol
            | Query::CallstackFrame,
        )
        | None => {
            Encoder::ack(out, Ev::AckServerQueryNoop);
            return Reply::Unexpected;
        }
    }
    Reply::Answered
}
