//! One connection from a capture tool: handshake, the stream, the queries, the end.
//!
//! The sequence follows Tracy's client (`Profiler::Worker` and `HandleServerQuery`,
//! `public/client/TracyProfiler.cpp`): the shibboleth and protocol version (read by the
//! server, which waits for the handshakes of every connection at once, and checked by
//! [`check_handshake`]), answered with [`Handshake::ProtocolMismatch`] to another version,
//! else (from [`run`] on) [`Handshake::Welcome`] and the welcome message; then frames while
//! answering queries; after the last event, `Terminate`, and answers until the tool sends
//! `ServerQueryTerminate`, which it does only once nothing it asked for is outstanding
//! (`Worker::Exec`, `server/TracyWorker.cpp`). That query is the proof the capture is
//! complete.
//!
//! Queries are read by a second thread so that a large frame being written never keeps
//! the tool's queries from being read (the tool limits its queries in flight and waits for
//! answers before the end, so both directions must always flow). The queue between the
//! two holds at most [`MAX_QUEUED_QUERIES`]: a client that sends queries and never reads
//! the answers fills it, the reader thread then stops reading, and the system's flow control
//! stops the client; memory stays bounded (it grew ~70 MB/s before). Tracy's own tool never
//! has more in flight than its socket's send buffer holds (at most 8192 queries,
//! `Worker::m_serverQuerySpaceBase`), well below the bound.
//!
//! Every wait is bounded: a write, or the wait for the tool's confirmation, by the stall
//! limit and by the serve's deadline, whichever comes first. A tool that reads slowly but
//! never stalls long is cut off at the deadline ([`Outcome::TimedOut`]).

use super::emit::{answer, Emitter, Reply};
use super::encode::Encoder;
use super::frame::FrameWriter;
use super::plan::TracyStream;
use super::protocol::{
    Handshake, QueryPacket, Welcome, PROTOCOL_VERSION, QUERY_PACKET_SIZE, SHIBBOLETH,
};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bytes of the handshake a tool sends first: the shibboleth and its protocol version.
pub(crate) const HANDSHAKE_SIZE: usize = 12;

/// The most queries read from a tool and not answered yet (see the module docs).
pub(crate) const MAX_QUEUED_QUERIES: usize = 16 * 1024;

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The tool received everything and said so.
    Drained,
    /// Streaming started but the tool left (or stalled) before confirming the end.
    Aborted(String),
    /// The serve's deadline passed before the tool confirmed the end.
    TimedOut(String),
}

/// What one connection transferred.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transfer {
    /// LZ4 frames sent.
    pub frames: u64,
    /// Event bytes before compression, and bytes on the wire (frames only).
    pub(crate) raw_bytes: u64,
    /// Bytes on the wire (compressed).
    pub wire_bytes: u64,
    /// Device zones sent.
    pub zones: u64,
    /// Queries answered, by type (`String`, `SourceLocation`, ...).
    pub queries: BTreeMap<String, u64>,
}

enum Input {
    Query(QueryPacket),
    Closed(io::Result<()>),
}

fn welcome(s: &TracyStream) -> Welcome {
    let epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut cpu_manufacturer = [0u8; 12];
    cpu_manufacturer[..10].copy_from_slice(b"Tenstorren");
    Welcome {
        timer_mul: 1.0,
        init_begin: s.summary.base_ns,
        init_end: s.summary.base_ns,
        resolution: 1,
        epoch,
        exec_time: 0,
        pid: std::process::id() as u64,
        sampling_period: 0,
        flags: 0,
        cpu_arch: 0,
        cpu_manufacturer,
        cpu_id: 0,
        program_name: s.program_name.clone(),
        host_info: s.host_info.clone(),
    }
}

/// A refused handshake: why, and the status to answer with (none to a peer that is not
/// a Tracy capture tool).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) why: String,
    pub(crate) reply: Option<Handshake>,
}

/// Checks the handshake a tool sent.
pub(crate) fn check_handshake(hello: &[u8; HANDSHAKE_SIZE]) -> Result<(), Refusal> {
    if hello[..8] != SHIBBOLETH {
        let why = format!(
            "not a Tracy capture tool (it sent {:?}, not \"TracyPrf\")",
            String::from_utf8_lossy(&hello[..8])
        );
        return Err(Refusal { why, reply: None });
    }
    let version = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]);
    if version != PROTOCOL_VERSION {
        let why = format!(
            "it speaks Tracy protocol {version}, ttprof speaks {PROTOCOL_VERSION} (Tracy 0.14.x): \
             use tracy-capture or the Tracy GUI from release 0.14"
        );
        return Err(Refusal {
            why,
            reply: Some(Handshake::ProtocolMismatch),
        });
    }
    Ok(())
}

/// Answers a refused handshake (if it calls for an answer) and closes the connection.
pub(crate) fn refuse(mut sock: TcpStream, refusal: &Refusal) {
    if let Some(reply) = refusal.reply {
        let _ = sock.set_nonblocking(false);
        let _ = sock.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = sock.write_all(&[reply as u8]);
    }
    let _ = sock.shutdown(Shutdown::Both);
}

/// How long the next wait may last: `stall`, cut to what is left before `deadline` (and
/// whether it was cut); `None` once the deadline has passed.
fn wait_limit(stall: Duration, deadline: Option<Instant>) -> Option<(Duration, bool)> {
    let Some(deadline) = deadline else {
        return Some((stall, false));
    };
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())?;
    Some(if left < stall {
        (left, true)
    } else {
        (stall, false)
    })
}

/// The tool's socket for writing: each write waits at most the stall limit, and never
/// past the deadline (a write once it has passed fails at once).
struct Limited<'a> {
    sock: &'a TcpStream,
    stall: Duration,
    deadline: Option<Instant>,
    /// Whether the last write's wait was cut by the deadline, or came after it.
    cut: bool,
}

impl Write for Limited<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some((wait, cut)) = wait_limit(self.stall, self.deadline) else {
            self.cut = true;
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the time limit ran out",
            ));
        };
        self.cut = cut;
        self.sock.set_write_timeout(Some(wait))?;
        let mut sock = self.sock;
        sock.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut sock = self.sock;
        sock.flush()
    }
}

fn spawn_reader(sock: &TcpStream) -> io::Result<(Receiver<Input>, std::thread::JoinHandle<()>)> {
    let mut r = sock.try_clone()?;
    r.set_read_timeout(None)?;
    // Bounded: when the writer does not keep up (the tool reads nothing), the reader
    // blocks here instead of queueing without end.
    let (tx, rx) = mpsc::sync_channel(MAX_QUEUED_QUERIES);
    let handle = std::thread::Builder::new()
        .name("ttprof-tracy-queries".into())
        .spawn(move || {
            let mut b = [0u8; QUERY_PACKET_SIZE];
            loop {
                let input = match r.read_exact(&mut b) {
                    Ok(()) => Input::Query(QueryPacket::from_bytes(&b)),
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Input::Closed(Ok(())),
                    Err(e) => Input::Closed(Err(e)),
                };
                let last = matches!(input, Input::Closed(_));
                if tx.send(input).is_err() || last {
                    return;
                }
            }
        })?;
    Ok((rx, handle))
}

/// Serves `s` over `sock`, whose handshake was accepted ([`check_handshake`]), until the
/// tool confirms the end, leaves, stalls for `stall`, or `deadline` passes.
pub(crate) fn run(
    s: &TracyStream,
    sock: TcpStream,
    stall: Duration,
    deadline: Option<Instant>,
) -> (Outcome, Transfer) {
    let mut t = Transfer::default();
    let outcome = match spawn_reader(&sock) {
        Ok((rx, reader)) => {
            let mut out = Limited {
                sock: &sock,
                stall,
                deadline,
                cut: false,
            };
            let outcome = stream(s, &mut out, &rx, &mut t);
            let _ = sock.shutdown(Shutdown::Both);
            // A reader blocked on the full queue wakes up with an error and ends.
            drop(rx);
            let _ = reader.join();
            outcome
        }
        Err(e) => Outcome::Aborted(format!("cannot read the tool's queries: {e}")),
    };
    (outcome, t)
}

fn stream(s: &TracyStream, sock: &mut Limited, rx: &Receiver<Input>, t: &mut Transfer) -> Outcome {
    let (stall, deadline) = (sock.stall, sock.deadline);
    let total = s.summary.zones;
    let progress =
        |t: &Transfer| format!("{} of {total} zones sent in {} frames", t.zones, t.frames);
    let timed_out = |t: &Transfer| {
        Outcome::TimedOut(format!(
            "the time limit ran out before it confirmed the end ({})",
            progress(t)
        ))
    };
    let io_err = |e: io::Error, cut: bool, t: &Transfer| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if cut => timed_out(t),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Outcome::Aborted(format!(
            "the tool read nothing for {stall:?} ({})",
            progress(t)
        )),
        _ => Outcome::Aborted(format!("connection lost: {e} ({})", progress(t))),
    };
    if let Err(e) = sock
        .write_all(&[Handshake::Welcome as u8])
        .and_then(|_| sock.write_all(&welcome(s).to_bytes()))
    {
        return io_err(e, sock.cut, t);
    }
    let (mut fw, mut emitter, mut unit) = (FrameWriter::new(), Emitter::new(s), Vec::new());
    let mut terminate_sent = false;
    loop {
        // Take every query that has arrived (once all is sent: wait for at least one),
        // answer them together, then send the next frame of events.
        let mut inputs = Vec::new();
        if terminate_sent {
            let Some((wait, cut)) = wait_limit(stall, deadline) else {
                return timed_out(t);
            };
            match rx.recv_timeout(wait) {
                Ok(i) => inputs.push(i),
                Err(RecvTimeoutError::Timeout) if cut => return timed_out(t),
                Err(RecvTimeoutError::Timeout) => {
                    return Outcome::Aborted(format!(
                        "everything was sent, but the tool did not confirm within {stall:?}"
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => inputs.push(Input::Closed(Ok(()))),
            }
        }
        // What has arrived, at most a queue's worth (a tool that keeps sending cannot keep
        // this loop from sending the stream).
        inputs.extend(rx.try_iter().take(MAX_QUEUED_QUERIES));
        t.frames = fw.frames;
        t.raw_bytes = fw.raw_bytes;
        t.wire_bytes = fw.wire_bytes;
        t.zones = emitter.zones_sent;
        for input in inputs {
            let q = match input {
                Input::Query(q) => q,
                Input::Closed(r) => {
                    let why = match r {
                        Ok(()) if terminate_sent => {
                            "the tool closed the connection without confirming the end".into()
                        }
                        Ok(()) => "the tool closed the connection".to_string(),
                        Err(e) => format!("connection lost: {e}"),
                    };
                    return Outcome::Aborted(format!("{why} ({})", progress(t)));
                }
            };
            unit.clear();
            match answer(s, q, &mut unit) {
                Reply::Terminate if terminate_sent => return confirmed(s, t),
                Reply::Terminate => {
                    return Outcome::Aborted(format!(
                        "the tool ended the capture early ({})",
                        progress(t)
                    ))
                }
                Reply::Disconnect => {
                    return Outcome::Aborted(format!("the tool disconnected ({})", progress(t)))
                }
                Reply::Answered | Reply::Unexpected => {}
            }
            let kind = q
                .query()
                .map_or_else(|| format!("unknown {}", q.kind), |k| format!("{k:?}"));
            *t.queries.entry(kind).or_default() += 1;
            if let Err(e) = fw.push(sock, &unit) {
                return io_err(e, sock.cut, t);
            }
        }
        let sent = if terminate_sent {
            fw.flush(sock)
        } else {
            send_frame(&mut fw, &mut emitter, &mut unit, sock, &mut terminate_sent)
        };
        if let Err(e) = sent {
            return io_err(e, sock.cut, t);
        }
    }
}

/// The tool confirmed the end: judged by what it acknowledged, not by the bytes queued
/// in the socket. A tool that read the stream asked for every source location its zones
/// use (Tracy queries each one it meets); one that asked for fewer never read them.
fn confirmed(s: &TracyStream, t: &Transfer) -> Outcome {
    let asked = t.queries.get("SourceLocation").copied().unwrap_or(0);
    let sent = s.summary.source_locations as u64;
    if asked >= sent {
        return Outcome::Drained;
    }
    Outcome::Aborted(format!(
        "the tool confirmed the end but asked for {asked} of the stream's {sent} source locations: it did not \
         read the whole stream ({} of {} zones sent in {} frames)",
        t.zones, s.summary.zones, t.frames
    ))
}

/// Sends events until one frame has gone out; after the last event, `Terminate`.
fn send_frame(
    fw: &mut FrameWriter,
    emitter: &mut Emitter,
    unit: &mut Vec<u8>,
    sock: &mut Limited,
    terminate_sent: &mut bool,
) -> io::Result<()> {
    let frames = fw.frames;
    while fw.frames == frames {
        unit.clear();
        if !emitter.next(unit)? {
            Encoder::terminate(unit);
            fw.push(sock, unit)?;
            *terminate_sent = true;
            return fw.flush(sock);
        }
        fw.push(sock, unit)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connected pair on loopback: (ttprof's side, the tool's side).
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let tool = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().unwrap().0, tool)
    }

    #[test]
    fn writes_to_a_tool_that_reads_nothing_or_slowly_end_at_the_deadline_not_the_stall_limit() {
        // The stall limit is far away: only the deadline can end these writes (before, a
        // tool that read a little at a time held the server for as long as it liked).
        let chunk = vec![0u8; 1 << 20];
        for slow in [false, true] {
            let (ours, tool) = pair();
            // The tool's side stays open throughout: held here, or read slowly by a thread
            // (until told to stop: what is buffered by then would take minutes).
            let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (reader, _held) = if slow {
                let done = done.clone();
                let reader = std::thread::spawn(move || {
                    let mut tool = tool;
                    let mut b = [0u8; 64];
                    while !done.load(std::sync::atomic::Ordering::Relaxed)
                        && matches!(tool.read(&mut b), Ok(n) if n > 0)
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                });
                (Some(reader), None)
            } else {
                (None, Some(tool))
            };
            let deadline = Instant::now() + Duration::from_millis(300);
            let mut out = Limited {
                sock: &ours,
                stall: Duration::from_secs(600),
                deadline: Some(deadline),
                cut: false,
            };
            let e = (0..1024)
                .find_map(|_| out.write_all(&chunk).err())
                .expect("the writes end");
            assert!(
                matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ),
                "slow {slow}: {e}"
            );
            assert!(out.cut, "slow {slow}: cut by the deadline");
            // Past the deadline a write fails at once.
            out.cut = false;
            assert_eq!(out.write(&[0]).unwrap_err().kind(), io::ErrorKind::TimedOut);
            assert!(out.cut);
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = ours.shutdown(Shutdown::Both);
            if let Some(r) = reader {
                r.join().unwrap();
            }
        }
    }

    #[test]
    fn a_tool_that_floods_queries_is_held_back_once_the_queue_is_full() {
        // The writer is stuck (here: nobody takes queries at all, as when it blocks on a
        // tool that reads nothing) while the tool sends queries as fast as it can. Before,
        // the reader thread took every query into an unbounded queue: the tool could push
        // gigabytes into the server's memory (~70 MB/s). Now the reader stops at
        // MAX_QUEUED_QUERIES and the system's flow control stops the tool.
        let (ours, mut tool) = pair();
        let (rx, reader) = spawn_reader(&ours).unwrap();
        tool.set_write_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let packet = QueryPacket::new(super::super::protocol::Query::String, 1, 0).to_bytes();
        let batch: Vec<u8> = packet
            .iter()
            .copied()
            .cycle()
            .take(packet.len() * 4096)
            .collect();
        let limit: u64 = 64 << 20;
        let mut sent = 0u64;
        let stopped = loop {
            if sent >= limit {
                break None;
            }
            match tool.write(&batch) {
                Ok(n) => sent += n as u64,
                Err(e) => break Some(e),
            }
        };
        // (What it got through is the queue plus the sockets' buffers: a few MB.)
        assert!(
            stopped.is_some(),
            "the tool wrote {sent} bytes of queries without being held back"
        );
        assert!(rx.try_recv().is_ok(), "the queue holds what was read");
        // The reader ends once the queue is gone (it was blocked on a full one).
        drop(rx);
        let _ = ours.shutdown(Shutdown::Both);
        reader.join().unwrap();
    }

    #[test]
    fn wait_limits_are_the_stall_limit_cut_to_the_deadline() {
        let stall = Duration::from_secs(30);
        assert_eq!(wait_limit(stall, None), Some((stall, false)));
        let (wait, cut) = wait_limit(stall, Some(Instant::now() + Duration::from_secs(5))).unwrap();
        assert!(cut && wait <= Duration::from_secs(5));
        assert_eq!(
            wait_limit(stall, Some(Instant::now() + Duration::from_secs(3600))),
            Some((stall, false))
        );
        assert_eq!(
            wait_limit(stall, Some(Instant::now() - Duration::from_millis(1))),
            None
        );
    }
}
