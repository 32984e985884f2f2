//! The capture side of the event stream: decodes frames the way Tracy's server does
//! (`Worker::DispatchProcess` / `Process*`, `server/TracyWorker.cpp`), rebuilds zones,
//! asks for what it does not know yet (strings, source locations, thread names), and
//! records every place where the real server would assert, misread or stall.
//!
//! Only the event types ttprof sends are understood; anything else is a protocol error
//! (the real server would go on, but ttprof never sends it, so a test should fail).

use super::protocol::{
    Ev, MessageSeverity, Query, QueryPacket, GPU_WRAP_THRESHOLD, OFFSET_16, OFFSET_32,
};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GpuContext {
    pub name: Option<String>,
    pub kind: u8,
    pub thread: u32,
    pub(crate) period: f32,
    /// Added to a GPU time to give Tracy's time (`timeDiff`).
    pub(crate) time_diff: i64,
    last_gpu: i64,
    /// GPU times that went back (any amount) and that read as wraps (more than 2^31).
    pub backwards: u64,
    pub wraps: u64,
    slots: HashMap<u16, usize>,
}

/// A zone as Tracy holds it. Times are Tracy's (ns since the welcome's `init_begin`,
/// computed as `Worker` computes them); -1 while unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedZone {
    /// GPU context (`None` for a CPU zone).
    pub context: Option<u8>,
    pub thread: u32,
    pub(crate) srcloc: u64,
    pub start: i64,
    pub end: i64,
    /// For GPU zones: the "CPU" times of begin and end.
    pub(crate) cpu_start: i64,
    pub(crate) cpu_end: i64,
    /// Nesting depth in its lane (0 = top level) and parent (index into the same list).
    pub depth: usize,
    pub parent: Option<usize>,
    pub text: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub thread: u32,
    pub time: i64,
    pub severity: Option<MessageSeverity>,
    pub text: String,
}

/// A source location with its strings resolved (once the answers have arrived).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SourceLocation {
    pub name: u64,
    pub function: u64,
    pub file: u64,
    pub line: u32,
}

/// Everything decoded so far.
#[derive(Debug, Default)]
pub struct EventDecoder {
    pub(crate) contexts: BTreeMap<u8, GpuContext>,
    pub gpu_zones: Vec<DecodedZone>,
    pub(crate) cpu_zones: Vec<DecodedZone>,
    pub messages: Vec<Message>,
    pub strings: HashMap<u64, String>,
    pub threads: HashMap<u64, String>,
    pub(crate) srclocs: HashMap<u64, SourceLocation>,
    /// Queries sent, by type.
    pub queries: BTreeMap<Query, u64>,
    /// Violations of what the server expects, in order.
    pub errors: Vec<String>,
    pub(crate) terminated: bool,
    pub frames: u64,
    pub events: u64,
    /// The welcome's `init_begin`: Tracy shows host time `t` as `t - base` (`TscTime`).
    base: i64,
    /// Queries to send next.
    outbox: Vec<QueryPacket>,
    srcloc_queue: VecDeque<u64>,
    pending_strings: HashSet<u64>,
    pending_threads: HashSet<u64>,
    single: Option<String>,
    thread: u32,
    ref_thread: i64,
    ref_serial: i64,
    ref_gpu: i64,
    gpu_stacks: HashMap<(u8, u32), Vec<usize>>,
    cpu_stacks: HashMap<u32, Vec<usize>>,
}

fn take<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().unwrap_or([0; N])
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(take(b, at))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(take(b, at))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(take(b, at))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(take(b, at))
}

impl EventDecoder {
    /// A decoder for a capture whose welcome message gave `init_begin`.
    pub fn new(init_begin: i64) -> EventDecoder {
        EventDecoder {
            base: init_begin,
            ..EventDecoder::default()
        }
    }

    /// Takes the queries the decoded events call for.
    pub(crate) fn take_queries(&mut self) -> Vec<QueryPacket> {
        std::mem::take(&mut self.outbox)
    }

    /// Whether an answer is still outstanding.
    pub fn pending(&self) -> bool {
        !self.srcloc_queue.is_empty()
            || !self.pending_strings.is_empty()
            || !self.pending_threads.is_empty()
    }

    fn query(&mut self, q: Query, ptr: u64) {
        *self.queries.entry(q).or_default() += 1;
        self.outbox.push(QueryPacket::new(q, ptr, 0));
    }

    fn check_string(&mut self, ptr: u64) {
        if ptr != 0 && !self.strings.contains_key(&ptr) && self.pending_strings.insert(ptr) {
            self.query(Query::String, ptr);
        }
    }

    fn check_srcloc(&mut self, ptr: u64) {
        if !self.srclocs.contains_key(&ptr) && !self.srcloc_queue.contains(&ptr) {
            self.srcloc_queue.push_back(ptr);
            self.query(Query::SourceLocation, ptr);
        }
    }

    /// The current thread is used (`GetCurrentThreadData` -> `NoticeThread`).
    fn notice_thread(&mut self) {
        let t = self.thread as u64;
        if !self.threads.contains_key(&t) && self.pending_threads.insert(t) {
            self.query(Query::ThreadString, t);
        }
    }

    fn take_single(&mut self, what: &str) -> String {
        self.single.take().unwrap_or_else(|| {
            self.errors
                .push(format!("{what} without the string it reads"));
            String::new()
        })
    }

    /// Decodes one decompressed frame; `Err` when it cannot be parsed any further.
    pub fn frame(&mut self, b: &[u8]) -> Result<(), String> {
        self.frames += 1;
        let mut at = 0;
        while at < b.len() {
            let ev = Ev::from_u8(b[at])
                .ok_or_else(|| format!("frame {}: unknown event type {}", self.frames, b[at]))?;
            let head = ev.size();
            let tail = match ev {
                Ev::SingleStringData8 => b.get(at + 1).map(|&n| 1 + n as usize),
                Ev::SingleStringData => {
                    (at + 3 <= b.len()).then(|| 2 + 256 + u16_at(b, at + 1) as usize)
                }
                e if e.is_string_transfer() => {
                    (at + head + 2 <= b.len()).then(|| 2 + u16_at(b, at + head) as usize)
                }
                _ => Some(0),
            };
            let end = tail.map(|t| at + head + t).filter(|&end| end <= b.len()).ok_or_else(|| {
                format!("frame {}: {ev:?} runs past the end of the frame (events must not straddle frames)", self.frames)
            })?;
            self.event(ev, &b[at..end]);
            self.events += 1;
            at = end;
        }
        Ok(())
    }

    fn event(&mut self, ev: Ev, b: &[u8]) {
        match ev {
            Ev::SingleStringData8 => {
                self.single = Some(String::from_utf8_lossy(&b[2..]).into_owned())
            }
            Ev::SingleStringData => {
                self.single = Some(String::from_utf8_lossy(&b[3..]).into_owned())
            }
            Ev::StringData
            | Ev::ThreadName
            | Ev::PlotName
            | Ev::FrameName
            | Ev::ExternalName
            | Ev::ExternalThreadName
            | Ev::FiberName => {
                let (ptr, text) = (u64_at(b, 1), String::from_utf8_lossy(&b[11..]).into_owned());
                let asked = match ev {
                    Ev::StringData => self
                        .pending_strings
                        .remove(&ptr)
                        .then(|| self.strings.insert(ptr, text)),
                    Ev::ThreadName => self
                        .pending_threads
                        .remove(&ptr)
                        .then(|| self.threads.insert(ptr, text)),
                    _ => None,
                };
                if asked.is_none() {
                    self.errors
                        .push(format!("{ev:?} for {ptr:#x}, which was not asked for"));
                }
            }
            Ev::SourceLocation => match self.srcloc_queue.pop_front() {
                Some(ptr) => {
                    let loc = SourceLocation {
                        name: u64_at(b, 1),
                        function: u64_at(b, 9),
                        file: u64_at(b, 17),
                        line: u32_at(b, 25),
                    };
                    for s in [loc.name, loc.function, loc.file] {
                        self.check_string(s);
                    }
                    self.srclocs.insert(ptr, loc);
                }
                None => self
                    .errors
                    .push("a source location that was not asked for".into()),
            },
            Ev::ThreadContext => {
                self.thread = u32_at(b, 1);
                self.ref_thread = 0;
            }
            Ev::ZoneValidation => self.notice_thread(),
            Ev::GpuNewContext => self.gpu_new_context(b),
            Ev::GpuContextName => {
                let name = self.take_single("GpuContextName");
                match self.contexts.get_mut(&b[1]) {
                    Some(c) => c.name = Some(name),
                    None => self.errors.push(format!(
                        "name for GPU context {} before it was created",
                        b[1]
                    )),
                }
            }
            Ev::GpuZoneBeginSerial | Ev::GpuZoneEndSerial => self.gpu_zone(ev, b),
            Ev::GpuTime => self.gpu_time(b),
            Ev::ZoneBegin | Ev::ZoneBegin32 | Ev::ZoneBegin16 => {
                let (dt, srcloc) = match ev {
                    Ev::ZoneBegin16 => (u16_at(b, 1) as i64, u64_at(b, 3)),
                    Ev::ZoneBegin32 => (u32_at(b, 1) as i64 + OFFSET_16, u64_at(b, 5)),
                    _ => (
                        i64_at(b, 1) + if i64_at(b, 1) >= 0 { OFFSET_32 } else { 0 },
                        u64_at(b, 9),
                    ),
                };
                self.ref_thread += dt;
                self.notice_thread();
                self.check_srcloc(srcloc);
                let t = self.ref_thread - self.base;
                let stack = self.cpu_stacks.entry(self.thread).or_default();
                let (depth, parent) = (stack.len(), stack.last().copied());
                stack.push(self.cpu_zones.len());
                let thread = self.thread;
                self.cpu_zones.push(DecodedZone {
                    context: None,
                    thread,
                    srcloc,
                    start: t,
                    end: -1,
                    cpu_start: t,
                    cpu_end: t,
                    depth,
                    parent,
                    text: None,
                });
            }
            Ev::ZoneEnd | Ev::ZoneEnd32 | Ev::ZoneEnd16 => {
                let dt = match ev {
                    Ev::ZoneEnd16 => u16_at(b, 1) as i64,
                    Ev::ZoneEnd32 => u32_at(b, 1) as i64 + OFFSET_16,
                    _ => i64_at(b, 1) + if i64_at(b, 1) >= 0 { OFFSET_32 } else { 0 },
                };
                self.ref_thread += dt;
                let t = self.ref_thread - self.base;
                match self.cpu_stacks.get_mut(&self.thread).and_then(|s| s.pop()) {
                    Some(i) if t >= self.cpu_zones[i].start => self.cpu_zones[i].end = t,
                    Some(_) => self.errors.push(format!(
                        "CPU zone on thread {:#x} ends before it starts",
                        self.thread
                    )),
                    None => self.errors.push(format!(
                        "CPU zone end on thread {:#x} with no zone open",
                        self.thread
                    )),
                }
            }
            Ev::ZoneText => {
                let text = self.take_single("ZoneText");
                match self.cpu_stacks.get(&self.thread).and_then(|s| s.last()) {
                    Some(&i) => self.cpu_zones[i].text = Some(text),
                    None => self.errors.push(format!(
                        "zone text on thread {:#x} with no zone open",
                        self.thread
                    )),
                }
            }
            Ev::Message => {
                let text = self.take_single("Message");
                self.notice_thread();
                let m = Message {
                    thread: self.thread,
                    time: i64_at(b, 1) - self.base,
                    severity: MessageSeverity::from_metadata(b[9]),
                    text,
                };
                self.messages.push(m);
            }
            Ev::Terminate => self.terminated = true,
            Ev::KeepAlive => {}
            Ev::AckServerQueryNoop
            | Ev::AckSourceCodeNotAvailable
            | Ev::AckSymbolCodeNotAvailable => self
                .errors
                .push(format!("{ev:?}, but no query that takes it was sent")),
        }
    }

    fn gpu_new_context(&mut self, b: &[u8]) {
        let id = b[25];
        let (cpu, gpu, thread) = (i64_at(b, 1), i64_at(b, 9), u32_at(b, 17));
        let period = f32::from_le_bytes(take(b, 21));
        if self.contexts.contains_key(&id) {
            self.errors.push(format!("GPU context {id} created twice"));
        }
        if period != 1.0 {
            self.errors.push(format!(
                "GPU context {id} has period {period}: times would be scaled"
            ));
        }
        // `Worker::ProcessGpuNewContext`: timeDiff = TscTime(cpuTime) - gpuTime (period 1).
        let c = GpuContext {
            name: None,
            kind: b[27],
            thread,
            period,
            time_diff: cpu - self.base - gpu,
            last_gpu: 0,
            backwards: 0,
            wraps: 0,
            slots: HashMap::new(),
        };
        self.contexts.insert(id, c);
    }

    fn gpu_zone(&mut self, ev: Ev, b: &[u8]) {
        self.ref_serial += i64_at(b, 1);
        let (thread, query, ctx, cpu) = (
            u32_at(b, 9),
            u16_at(b, 13),
            b[15],
            self.ref_serial - self.base,
        );
        match self.contexts.get(&ctx) {
            None => {
                self.errors.push(format!(
                    "GPU zone in context {ctx}, which was never created"
                ));
                return;
            }
            Some(c) if c.slots.contains_key(&query) => self.errors.push(format!(
                "GPU context {ctx}: query slot {query} reused before its GpuTime"
            )),
            Some(_) => {}
        }
        let next = self.gpu_zones.len();
        let lane = self.gpu_stacks.entry((ctx, thread)).or_default();
        let zone = if ev == Ev::GpuZoneBeginSerial {
            let (srcloc, depth, parent) = (u64_at(b, 16), lane.len(), lane.last().copied());
            lane.push(next);
            let z = DecodedZone {
                context: Some(ctx),
                thread,
                srcloc,
                start: -1,
                end: -1,
                cpu_start: cpu,
                cpu_end: -1,
                depth,
                parent,
                text: None,
            };
            self.gpu_zones.push(z);
            self.check_srcloc(srcloc);
            next
        } else if let Some(i) = lane.pop() {
            self.gpu_zones[i].cpu_end = cpu;
            i
        } else {
            self.errors.push(format!(
                "GPU zone end on lane {thread:#x} of context {ctx} with no zone open"
            ));
            return;
        };
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.slots.insert(query, zone);
        }
    }

    fn gpu_time(&mut self, b: &[u8]) {
        self.ref_gpu += i64_at(b, 1);
        let (query, ctx, t) = (u16_at(b, 9), b[11], self.ref_gpu);
        let Some(c) = self.contexts.get_mut(&ctx) else {
            self.errors.push(format!(
                "GpuTime for context {ctx}, which was never created"
            ));
            return;
        };
        if t < c.last_gpu {
            c.backwards += 1;
            if t < c.last_gpu - GPU_WRAP_THRESHOLD {
                c.wraps += 1;
            }
        }
        c.last_gpu = t;
        let time = t + c.time_diff;
        // Tracy: the first GpuTime of a zone is its start, the second its end (a start below
        // 0 would read as "no start yet").
        if time < 0 {
            self.errors.push(format!(
                "GPU time {time} ns before the capture's start in context {ctx}"
            ));
        }
        match c.slots.remove(&query) {
            Some(i) if self.gpu_zones[i].start < 0 => self.gpu_zones[i].start = time,
            Some(i) => self.gpu_zones[i].end = time,
            None => self.errors.push(format!(
                "GpuTime for empty query slot {query} of context {ctx}"
            )),
        }
    }

    /// Checks left at the end of a capture: zones still open, answers still missing.
    pub fn finish(&mut self) {
        for ((ctx, thread), s) in &self.gpu_stacks {
            if !s.is_empty() {
                self.errors.push(format!(
                    "{} GPU zone(s) still open on lane {thread:#x} of context {ctx}",
                    s.len()
                ));
            }
        }
        for (thread, s) in &self.cpu_stacks {
            if !s.is_empty() {
                self.errors.push(format!(
                    "{} CPU zone(s) still open on thread {thread:#x}",
                    s.len()
                ));
            }
        }
        if self.pending() {
            self.errors
                .push("queries still unanswered at the end".into());
        }
    }
}
