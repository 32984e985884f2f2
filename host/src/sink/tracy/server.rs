//! Handing a finished readout to a capture tool that connects later.
//!
//! Like a Tracy-instrumented program run with `TRACY_NO_EXIT=1`, ttprof listens (loopback
//! port 8086 unless told otherwise) and does not return until a capture tool has connected
//! and confirmed it received everything. A tool that is refused (wrong protocol version,
//! not Tracy, no handshake in time) or leaves before the end does not end the wait: the
//! stream is immutable, so the next tool gets all of it again.
//!
//! The timeout is a deadline for the whole serve, counted from its start: if no tool has
//! completed a capture by then, [`serve`] returns [`ServeError::Timeout`], whose message
//! says how to connect and what each connection did, including one cut off while it was
//! being served (its writes and waits never last past the deadline, see [`session`]).
//!
//! Connections wait for their handshakes side by side (each for at most
//! [`ServeOptions::handshake`], polled without blocking), so one that never sends it does
//! not hold up the next; streams go to one tool at a time, in the order their handshakes
//! completed.

use super::plan::TracyStream;
use super::session::{self, Outcome, Refusal, Transfer, HANDSHAKE_SIZE};
use std::fmt;
use std::io::{self, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Tracy's default port (`TRACY_DATA_PORT`, `public/client/TracyProfiler.cpp`).
pub const DEFAULT_PORT: u16 = 8086;

/// How long to wait between looks for a new connection or handshake bytes.
const POLL: Duration = Duration::from_millis(20);

/// The most connections waiting for their handshakes at once; more stay queued by the
/// system until one is served or refused.
const MAX_PENDING: usize = 64;

/// Where and how long to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to listen on; loopback by default (a capture from another machine needs an
    /// explicit address such as `0.0.0.0:8086`).
    pub addr: SocketAddr,
    /// How long to wait for a capture tool to connect and drain everything; `None` waits
    /// for ever.
    pub timeout: Option<Duration>,
    /// A connected tool that neither reads nor answers for this long is dropped.
    pub stall: Duration,
    /// A connection that has not sent its handshake this long after it was accepted is
    /// refused (Tracy's own client allows 2 s).
    pub handshake: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)),
            timeout: Some(Duration::from_secs(60)),
            stall: Duration::from_secs(30),
            handshake: Duration::from_secs(2),
        }
    }
}

/// A connection that did not complete a capture (refused, dropped, or cut off by the
/// deadline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// Who connected.
    pub(crate) peer: SocketAddr,
    /// What went wrong.
    pub what: String,
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.peer, self.what)
    }
}

/// A completed capture.
#[derive(Clone, Debug)]
pub struct ServeReport {
    /// The tool that received everything.
    pub client: SocketAddr,
    /// What the capture tool received.
    pub transfer: Transfer,
    /// From listening to the confirmation.
    pub elapsed: Duration,
    /// Earlier connections that were refused or dropped.
    pub attempts: Vec<Attempt>,
}

/// Why serving failed.
#[derive(Debug)]
pub enum ServeError {
    /// The address could not be listened on.
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// No capture tool received everything in time.
    Timeout {
        /// The address listened on.
        addr: SocketAddr,
        /// How long it waited.
        waited: Duration,
        /// The connections that came and failed.
        attempts: Vec<Attempt>,
    },
    /// Another I/O error.
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        source: io::Error,
    },
}

/// The command that captures from `addr`.
pub(crate) fn capture_hint(addr: SocketAddr) -> String {
    format!(
        "tracy-capture -o out.tracy -a {} -p {}",
        addr.ip(),
        addr.port()
    )
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Bind { addr, source } => write!(
                f,
                "cannot listen for Tracy on {addr}: {source} (is another profiled program or ttprof using the port? \
                 choose another with --port)"
            ),
            ServeError::Timeout { addr, waited, attempts } => {
                write!(
                    f,
                    "no Tracy capture tool received the stream within {:.1} s on {addr}: run `{}` (Tracy 0.14.x) or \
                     connect the Tracy GUI to {addr} while ttprof waits, or raise --timeout-s",
                    waited.as_secs_f64(),
                    capture_hint(*addr)
                )?;
                for a in attempts {
                    write!(f, "\n  connection from {a}")?;
                }
                Ok(())
            }
            ServeError::Io { what, source } => write!(f, "Tracy stream: cannot {what}: {source}"),
        }
    }
}

impl std::error::Error for ServeError {}

impl From<ServeError> for crate::Error {
    fn from(e: ServeError) -> crate::Error {
        crate::Error::Tracy {
            what: e.to_string(),
        }
    }
}

/// A listening socket; bind first to learn the port (e.g. when asking for port 0).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Server {
    /// Listens on `addr` (port 0: any free port).
    pub fn bind(addr: SocketAddr) -> Result<Server, ServeError> {
        let listener =
            TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Io {
            what: "read the listening address",
            source,
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| ServeError::Io {
                what: "poll for connections",
                source,
            })?;
        Ok(Server { listener, addr })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `stream` until a capture tool has received all of it (see the module docs).
    /// `progress` hears about connections as they come and go.
    pub fn serve(
        &self,
        stream: &TracyStream,
        opts: &ServeOptions,
        mut progress: impl FnMut(&str),
    ) -> Result<ServeReport, ServeError> {
        let started = Instant::now();
        // A limit too far away to represent is no limit.
        let deadline = opts.timeout.and_then(|t| started.checked_add(t));
        let timeout = |attempts| ServeError::Timeout {
            addr: self.addr,
            waited: started.elapsed(),
            attempts,
        };
        let mut attempts = Vec::new();
        let mut pending: Vec<Pending> = Vec::new();
        loop {
            let mut busy = false;
            while pending.len() < MAX_PENDING {
                match self.listener.accept() {
                    Ok((sock, peer)) => {
                        busy = true;
                        progress(&format!("capture tool connected from {peer}"));
                        match sock.set_nonblocking(true) {
                            Ok(()) => pending.push(Pending {
                                sock,
                                peer,
                                hello: [0; HANDSHAKE_SIZE],
                                got: 0,
                                since: Instant::now(),
                            }),
                            Err(e) => attempts.push(Attempt {
                                peer,
                                what: format!("cannot set up the connection: {e}"),
                            }),
                        }
                    }
                    Err(e)
                        if e.kind() == io::ErrorKind::WouldBlock
                            || e.kind() == io::ErrorKind::Interrupted =>
                    {
                        break
                    }
                    Err(source) => {
                        return Err(ServeError::Io {
                            what: "accept a connection",
                            source,
                        })
                    }
                }
            }
            // The handshakes that have arrived, oldest connection first: refuse the bad ones,
            // serve the first good one (then look again: time has passed).
            let mut i = 0;
            while i < pending.len() {
                let state = pending[i].poll(opts.handshake);
                if state == HandshakeState::Waiting {
                    i += 1;
                    continue;
                }
                busy = true;
                let Pending { sock, peer, .. } = pending.remove(i);
                let refusal = match state {
                    HandshakeState::Refused(r) => r,
                    // Accepted (one still waiting was passed over above).
                    _ => match sock.set_nonblocking(false) {
                        Ok(()) => {
                            let _ = sock.set_nodelay(true);
                            match session::run(stream, sock, opts.stall, deadline) {
                                (Outcome::Drained, transfer) => {
                                    return Ok(ServeReport {
                                        client: peer,
                                        transfer,
                                        elapsed: started.elapsed(),
                                        attempts,
                                    });
                                }
                                (Outcome::Aborted(what), _) => {
                                    progress(&format!("capture from {peer} incomplete: {what}; waiting for another"));
                                    attempts.push(Attempt { peer, what });
                                }
                                (Outcome::TimedOut(what), _) => {
                                    attempts.push(Attempt { peer, what });
                                    return Err(timeout(attempts));
                                }
                            }
                            break;
                        }
                        Err(e) => Refusal {
                            why: format!("cannot set up the connection: {e}"),
                            reply: None,
                        },
                    },
                };
                progress(&format!("refused {peer}: {}", refusal.why));
                session::refuse(sock, &refusal);
                attempts.push(Attempt {
                    peer,
                    what: refusal.why,
                });
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                for p in pending {
                    let what = format!("connected {:.1} s before the time limit ran out but sent no Tracy handshake", p.since.elapsed().as_secs_f64());
                    attempts.push(Attempt { peer: p.peer, what });
                }
                return Err(timeout(attempts));
            }
            if !busy {
                let left = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
                std::thread::sleep(POLL.min(left));
            }
        }
    }
}

/// A connection waiting for its handshake (non-blocking).
struct Pending {
    sock: TcpStream,
    peer: SocketAddr,
    hello: [u8; HANDSHAKE_SIZE],
    got: usize,
    since: Instant,
}

/// Where a pending connection's handshake stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum HandshakeState {
    Waiting,
    Accepted,
    Refused(Refusal),
}

impl Pending {
    /// Reads what has arrived of the handshake without blocking; refuses a connection
    /// without a whole handshake `limit` after it was accepted.
    fn poll(&mut self, limit: Duration) -> HandshakeState {
        let refused = |why: String| HandshakeState::Refused(Refusal { why, reply: None });
        while self.got < HANDSHAKE_SIZE {
            match self.sock.read(&mut self.hello[self.got..]) {
                Ok(0) => {
                    return refused(format!(
                        "closed the connection after {} of the {HANDSHAKE_SIZE} handshake bytes",
                        self.got
                    ))
                }
                Ok(n) => self.got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.since.elapsed() >= limit {
                        return refused(format!(
                            "no Tracy handshake within {limit:?} ({} of {HANDSHAKE_SIZE} bytes)",
                            self.got
                        ));
                    }
                    return HandshakeState::Waiting;
                }
                Err(e) => return refused(format!("connection lost before the handshake: {e}")),
            }
        }
        match session::check_handshake(&self.hello) {
            Ok(()) => HandshakeState::Accepted,
            Err(r) => HandshakeState::Refused(r),
        }
    }
}

/// Binds `opts.addr` and serves `stream` (see [`Server::serve`]).
pub fn serve(
    stream: &TracyStream,
    opts: &ServeOptions,
    progress: impl FnMut(&str),
) -> Result<ServeReport, ServeError> {
    Server::bind(opts.addr)?.serve(stream, opts, progress)
}
