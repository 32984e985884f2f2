//! One connection from a capture tool: handshake, the stream, the queries, the end.
//!
//! The sequence follows Tracy's client (`Profiler::Worker` and `HandleServerQuery`,
//! `public/client/TracyProfiler.cpp`): read the shibboleth and protocol version (2 s limit),
//! answer [`Handshake::ProtocolMismatch`] to another version, else [`Handshake::Welcome`]
//! and the welcome message; then send frames while answering queries; after the last event,
//! send `Terminate` and keep answering until the tool sends `ServerQueryTerminate`, which
//! it does only once nothing it asked for is outstanding (`Worker::Exec`,
//! `server/TracyWorker.cpp`). That query is the proof the capture is complete.
//!
//! Queries are read by a second thread so that a large frame being written never keeps
//! the tool's queries from being read (the tool limits its queries in flight and waits for
//! answers before the end, so both directions must always flow).

use super::emit::{answer, Emitter, Reply};
use super::encode::Encoder;
use super::frame::FrameWriter;
use super::plan::Stream;
use super::protocol::{Handshake, QueryPacket, Welcome, PROTOCOL_VERSION, QUERY_PACKET_SIZE, SHIBBOLETH};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a connected tool has to send its handshake (Tracy's client allows 2 s).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The tool received everything and said so.
    Drained,
    /// The handshake failed; nothing was streamed.
    Rejected(String),
    /// Streaming started but the tool left (or stalled) before confirming the end.
    Aborted(String),
}

/// What one connection transferred.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transfer {
    pub frames: u64,
    /// Event bytes before compression, and bytes on the wire (frames only).
    pub raw_bytes: u64,
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

fn welcome(s: &Stream) -> Welcome {
    let epoch = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
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

/// Reads and checks the handshake; `Err` says why the connection is refused.
fn handshake(sock: &mut TcpStream) -> Result<(), String> {
    sock.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).map_err(|e| e.to_string())?;
    let mut hello = [0u8; 12];
    sock.read_exact(&mut hello).map_err(|e| format!("no Tracy handshake within {HANDSHAKE_TIMEOUT:?} ({e})"))?;
    if hello[..8] != SHIBBOLETH {
        return Err(format!("not a Tracy capture tool (it sent {:?}, not \"TracyPrf\")", String::from_utf8_lossy(&hello[..8])));
    }
    let version = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]);
    if version != PROTOCOL_VERSION {
        let _ = sock.write_all(&[Handshake::ProtocolMismatch as u8]);
        return Err(format!(
            "it speaks Tracy protocol {version}, ttprof speaks {PROTOCOL_VERSION} (Tracy 0.14.x): \
             use tracy-capture or the Tracy GUI from release 0.14"
        ));
    }
    Ok(())
}

fn spawn_reader(sock: &TcpStream) -> io::Result<(Receiver<Input>, std::thread::JoinHandle<()>)> {
    let mut r = sock.try_clone()?;
    r.set_read_timeout(None)?;
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new().name("ttprof-tracy-queries".into()).spawn(move || {
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

/// Serves `s` over `sock` until the tool confirms the end, leaves or stalls for `stall`.
pub(crate) fn run(s: &Stream, mut sock: TcpStream, stall: Duration) -> (Outcome, Transfer) {
    let mut t = Transfer::default();
    if let Err(why) = handshake(&mut sock) {
        let _ = sock.shutdown(Shutdown::Both);
        return (Outcome::Rejected(why), t);
    }
    let outcome = match spawn_reader(&sock) {
        Ok((rx, reader)) => {
            let outcome = stream(s, &mut sock, &rx, stall, &mut t);
            let _ = sock.shutdown(Shutdown::Both);
            let _ = reader.join();
            outcome
        }
        Err(e) => Outcome::Aborted(format!("cannot read the tool's queries: {e}")),
    };
    (outcome, t)
}

fn stream(s: &Stream, sock: &mut TcpStream, rx: &Receiver<Input>, stall: Duration, t: &mut Transfer) -> Outcome {
    let total = s.summary.zones;
    let progress = |t: &Transfer| format!("{} of {total} zones sent in {} frames", t.zones, t.frames);
    let io_err = |e: io::Error, t: &Transfer| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            Outcome::Aborted(format!("the tool read nothing for {stall:?} ({})", progress(t)))
        }
        _ => Outcome::Aborted(format!("connection lost: {e} ({})", progress(t))),
    };
    if let Err(e) = sock.set_write_timeout(Some(stall)).and_then(|_| {
        sock.write_all(&[Handshake::Welcome as u8])?;
        sock.write_all(&welcome(s).to_bytes())
    }) {
        return io_err(e, t);
    }
    let (mut fw, mut emitter, mut unit) = (FrameWriter::new(), Emitter::new(s), Vec::new());
    let mut terminate_sent = false;
    loop {
        // Take every query that has arrived (once all is sent: wait for at least one),
        // answer them together, then send the next frame of events.
        let mut inputs = Vec::new();
        if terminate_sent {
            match rx.recv_timeout(stall) {
                Ok(i) => inputs.push(i),
                Err(RecvTimeoutError::Timeout) => {
                    return Outcome::Aborted(format!("everything was sent, but the tool did not confirm within {stall:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => inputs.push(Input::Closed(Ok(()))),
            }
        }
        inputs.extend(rx.try_iter());
        t.frames = fw.frames;
        t.raw_bytes = fw.raw_bytes;
        t.wire_bytes = fw.wire_bytes;
        t.zones = emitter.zones_sent;
        for input in inputs {
            let q = match input {
                Input::Query(q) => q,
                Input::Closed(r) => {
                    let why = match r {
                        Ok(()) if terminate_sent => "the tool closed the connection without confirming the end".into(),
                        Ok(()) => "the tool closed the connection".to_string(),
                        Err(e) => format!("connection lost: {e}"),
                    };
                    return Outcome::Aborted(format!("{why} ({})", progress(t)));
                }
            };
            unit.clear();
            match answer(s, q, &mut unit) {
                Reply::Terminate if terminate_sent => return Outcome::Drained,
                Reply::Terminate => return Outcome::Aborted(format!("the tool ended the capture early ({})", progress(t))),
                Reply::Disconnect => return Outcome::Aborted(format!("the tool disconnected ({})", progress(t))),
                Reply::Answered | Reply::Unexpected => {}
            }
            let kind = q.query().map_or_else(|| format!("unknown {}", q.kind), |k| format!("{k:?}"));
            *t.queries.entry(kind).or_default() += 1;
            if let Err(e) = fw.push(sock, &unit) {
                return io_err(e, t);
            }
        }
        let sent = if terminate_sent {
            fw.flush(sock)
        } else {
            send_frame(&mut fw, &mut emitter, &mut unit, sock, &mut terminate_sent)
        };
        if let Err(e) = sent {
            return io_err(e, t);
        }
    }
}

/// Sends events until one frame has gone out; after the last event, `Terminate`.
fn send_frame(
    fw: &mut FrameWriter,
    emitter: &mut Emitter,
    unit: &mut Vec<u8>,
    sock: &mut TcpStream,
    terminate_sent: &mut bool,
) -> io::Result<()> {
    let frames = fw.frames;
    while fw.frames == frames {
        unit.clear();
        if !emitter.next(unit) {
            Encoder::terminate(unit);
            fw.push(sock, unit)?;
            *terminate_sent = true;
            return fw.flush(sock);
        }
        fw.push(sock, unit)?;
    }
    Ok(())
}
