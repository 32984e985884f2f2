//! A capture tool at the protocol level, for tests and diagnostics: connects the way
//! `tracy-capture` does (`Worker::Exec`, `server/TracyWorker.cpp`): retries until the
//! program listens, sends the shibboleth and protocol version, reads the handshake status
//! and welcome message, then reads and decompresses frames, decodes them
//! (the decoder), sends the queries they call for, and once `Terminate` has arrived and
//! nothing it asked for is outstanding, sends `ServerQueryTerminate` and closes.
//!
//! It is stricter than Tracy: every deviation the real server would assert on, misread or
//! stall over is collected in [`Capture::errors`].

use super::decoder::{DecodedZone, EventDecoder};
use super::frame::read_frame;
use super::protocol::{
    Handshake, Query, QueryPacket, Welcome, PROTOCOL_VERSION, SHIBBOLETH, WELCOME_SIZE,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How to connect, and optionally how to misbehave.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The protocol version to announce.
    pub protocol_version: u32,
    /// Give up connecting, or waiting for data, after this long.
    pub timeout: Duration,
    /// Close the connection after this many frames, as a tool that dies mid-stream.
    pub stop_after_frames: Option<u64>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: PROTOCOL_VERSION,
            timeout: Duration::from_secs(30),
            stop_after_frames: None,
        }
    }
}

/// What a capture received.
#[derive(Debug)]
pub struct Capture {
    /// The server's welcome message.
    pub(crate) welcome: Welcome,
    /// Everything decoded from the stream.
    pub decoded: EventDecoder,
    /// Whether the capture ended as Tracy's does (`Terminate` received, everything
    /// answered, `ServerQueryTerminate` sent).
    pub complete: bool,
    /// Compressed bytes received in frames.
    pub wire_bytes: u64,
}

impl Capture {
    /// Protocol errors found (see the module docs).
    pub fn errors(&self) -> &[String] {
        &self.decoded.errors
    }

    /// A string the program sent for `key` (`"???"` if it never arrived).
    pub fn string(&self, key: u64) -> &str {
        self.decoded.strings.get(&key).map_or("???", |s| s.as_str())
    }

    /// The name the stream gave `thread`.
    pub fn thread_name(&self, thread: u32) -> &str {
        self.decoded
            .threads
            .get(&(thread as u64))
            .map_or("???", |s| s.as_str())
    }

    /// A zone's (name, file, line) through its source location.
    pub fn site(&self, z: &DecodedZone) -> (&str, &str, u32) {
        match self.decoded.srclocs.get(&z.srcloc) {
            Some(l) => (self.string(l.name), self.string(l.file), l.line),
            None => ("???", "???", 0),
        }
    }

    /// Host ns of a time as Tracy holds it (Tracy shows times since the welcome's `init_begin`).
    pub fn host_ns(&self, tracy_time: i64) -> i64 {
        tracy_time + self.welcome.init_begin
    }

    /// The name of GPU context `id`.
    pub fn context_name(&self, id: u8) -> &str {
        self.decoded
            .contexts
            .get(&id)
            .and_then(|c| c.name.as_deref())
            .unwrap_or("???")
    }
}

fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, String> {
    let deadline = Instant::now() + timeout;
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!("cannot connect to {addr}: {e}"))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Captures from the program listening at `addr`. `Err` when no capture could start (no
/// connection, or the program refused the handshake: the message names the status).
pub fn capture(addr: SocketAddr, opts: &ClientOptions) -> Result<Capture, String> {
    let mut sock = connect(addr, opts.timeout)?;
    let io = |e: std::io::Error| format!("capture from {addr}: {e}");
    sock.set_read_timeout(Some(opts.timeout)).map_err(io)?;
    sock.write_all(&SHIBBOLETH).map_err(io)?;
    sock.write_all(&opts.protocol_version.to_le_bytes())
        .map_err(io)?;
    let mut status = [0u8; 1];
    sock.read_exact(&mut status)
        .map_err(|e| format!("capture from {addr}: no handshake status ({e})"))?;
    match Handshake::from_u8(status[0]) {
        Some(Handshake::Welcome) => {}
        other => {
            return Err(format!(
                "capture from {addr}: handshake refused: {other:?} (status byte {})",
                status[0]
            ))
        }
    }
    let mut w = [0u8; WELCOME_SIZE];
    sock.read_exact(&mut w).map_err(io)?;
    let welcome = Welcome::from_bytes(&w);
    let mut decoded = EventDecoder::new(welcome.init_begin);
    let (mut packed, mut frame, mut wire_bytes) = (Vec::new(), Vec::new(), 0u64);
    loop {
        if opts.stop_after_frames.is_some_and(|n| decoded.frames >= n) {
            return Ok(Capture {
                welcome,
                decoded,
                complete: false,
                wire_bytes,
            });
        }
        if !read_frame(&mut sock, &mut packed, &mut frame).map_err(io)? {
            decoded
                .errors
                .push("the program closed the connection before the capture ended".into());
            decoded.finish();
            return Ok(Capture {
                welcome,
                decoded,
                complete: false,
                wire_bytes,
            });
        }
        wire_bytes += 4 + packed.len() as u64;
        if let Err(e) = decoded.frame(&frame) {
            decoded.errors.push(e);
            return Ok(Capture {
                welcome,
                decoded,
                complete: false,
                wire_bytes,
            });
        }
        let queries: Vec<u8> = decoded
            .take_queries()
            .iter()
            .flat_map(|q| q.to_bytes())
            .collect();
        sock.write_all(&queries).map_err(io)?;
        if decoded.terminated && !decoded.pending() {
            sock.write_all(&QueryPacket::new(Query::Terminate, 0, 0).to_bytes())
                .map_err(io)?;
            decoded.finish();
            return Ok(Capture {
                welcome,
                decoded,
                complete: true,
                wire_bytes,
            });
        }
    }
}
