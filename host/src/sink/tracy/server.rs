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
//! not hold up the next; then each tool is served on a thread of its own, up to
//! [`MAX_SESSIONS`] at once (more are refused, see there), so one that reads nothing (and is
//! dropped only after [`ServeOptions::stall`]) does not hold up the next either. The first
//! tool to confirm the end completes the serve: the sessions still running are cut off
//! then (their connections closed) and named in the report's attempts.

use super::plan::TracyStream;
use super::protocol::Handshake;
use super::session::{self, Outcome, Refusal, Transfer, HANDSHAKE_SIZE};
use std::fmt;
use std::io::{self, Read};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// Tracy's default port (`TRACY_DATA_PORT`, `public/client/TracyProfiler.cpp`).
pub const DEFAULT_PORT: u16 = 8086;

/// How long to wait between looks for a new connection or handshake bytes.
const POLL: Duration = Duration::from_millis(20);

/// The most connections waiting for their handshakes at once; more stay queued by the
/// system until one is served or refused.
const MAX_PENDING: usize = 64;

/// The most capture tools served at once, each on a thread of its own (with a second one
/// reading its queries, see [`session`]); a tool whose handshake arrives while this many
/// are being served is refused with `HandshakeNotAvailable` (Tracy: "already connected to
/// another profiler") and named in the log. A session holds a window of the spool per lane
/// (4 KiB), a frame (~0.5 MB) and its query queue: a few MB, and 23 MB with 5,600 lanes
/// (8 chips of 140 tiles).
pub(crate) const MAX_SESSIONS: usize = 4;

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
        std::thread::scope(|scope| {
            let mut serve = Serving {
                server: self,
                stream,
                opts,
                started,
                deadline,
                scope,
                attempts: Vec::new(),
                pending: Vec::new(),
                sessions: Vec::new(),
            };
            let result = serve.run(&mut progress);
            // An error ends every session still running before the scope waits for it (a
            // result has done so already).
            serve.cut_off("the serve failed");
            result
        })
    }
}

/// One serve: the connections waiting for their handshakes and the sessions running.
struct Serving<'scope, 'env: 'scope> {
    server: &'env Server,
    stream: &'env TracyStream,
    opts: &'env ServeOptions,
    started: Instant,
    deadline: Option<Instant>,
    scope: &'scope Scope<'scope, 'env>,
    attempts: Vec<Attempt>,
    pending: Vec<Pending>,
    /// Oldest first.
    sessions: Vec<Session<'scope>>,
}

/// A connection being served on a thread of its own.
struct Session<'scope> {
    peer: SocketAddr,
    /// The connection (a second handle), to cut it off when the serve ends first.
    sock: TcpStream,
    thread: ScopedJoinHandle<'scope, (Outcome, Transfer)>,
}

impl Session<'_> {
    /// Waits for the session's end (a cut-off one ends at once: its socket fails).
    fn join(self) -> (SocketAddr, Outcome, Transfer) {
        match self.thread.join() {
            Ok((outcome, transfer)) => (self.peer, outcome, transfer),
            Err(_) => (
                self.peer,
                Outcome::Aborted("its session ended in a panic (a bug in ttprof)".into()),
                Transfer::default(),
            ),
        }
    }
}

impl<'scope, 'env> Serving<'scope, 'env> {
    fn timeout(&mut self) -> ServeError {
        ServeError::Timeout {
            addr: self.server.addr,
            waited: self.started.elapsed(),
            attempts: std::mem::take(&mut self.attempts),
        }
    }

    /// `client` received everything: the other sessions are cut off, and named.
    fn complete(&mut self, client: SocketAddr, transfer: Transfer) -> ServeReport {
        self.cut_off(&format!("{client} completed the capture"));
        ServeReport {
            client,
            transfer,
            elapsed: self.started.elapsed(),
            attempts: std::mem::take(&mut self.attempts),
        }
    }

    /// Ends every running session (closing its connection), naming each in the attempts.
    fn cut_off(&mut self, why: &str) {
        for s in &self.sessions {
            let _ = s.sock.shutdown(Shutdown::Both);
        }
        for s in std::mem::take(&mut self.sessions) {
            let (peer, outcome, _) = s.join();
            let what = match outcome {
                Outcome::Drained => format!("received everything too, but after {why}"),
                Outcome::Aborted(what) | Outcome::TimedOut(what) => {
                    format!("cut off when {why}: {what}")
                }
            };
            self.attempts.push(Attempt { peer, what });
        }
    }

    fn run(&mut self, progress: &mut impl FnMut(&str)) -> Result<ServeReport, ServeError> {
        loop {
            let mut busy = self.accept(progress)?;
            // Sessions that ended, oldest first: the first that drained completes the serve.
            let mut i = 0;
            while i < self.sessions.len() {
                if !self.sessions[i].thread.is_finished() {
                    i += 1;
                    continue;
                }
                busy = true;
                let (peer, outcome, transfer) = self.sessions.remove(i).join();
                match outcome {
                    Outcome::Drained => return Ok(self.complete(peer, transfer)),
                    Outcome::Aborted(what) => {
                        progress(&format!(
                            "capture from {peer} incomplete: {what}; waiting for another"
                        ));
                        self.attempts.push(Attempt { peer, what });
                    }
                    // The deadline has passed: the serve ends below.
                    Outcome::TimedOut(what) => self.attempts.push(Attempt { peer, what }),
                }
            }
            // The handshakes that have arrived, oldest connection first: refuse the bad
            // ones, serve the good ones while there is room for them.
            let mut i = 0;
            while i < self.pending.len() {
                let state = self.pending[i].poll(self.opts.handshake);
                if state == HandshakeState::Waiting {
                    i += 1;
                    continue;
                }
                busy = true;
                let Pending { sock, peer, .. } = self.pending.remove(i);
                let (sock, refusal) = match state {
                    HandshakeState::Refused(r) => (sock, r),
                    _ => match self.start(sock, peer) {
                        Ok(()) => continue,
                        Err(refused) => refused,
                    },
                };
                progress(&format!("refused {peer}: {}", refusal.why));
                session::refuse(sock, &refusal);
                self.attempts.push(Attempt {
                    peer,
                    what: refusal.why,
                });
            }
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                for p in std::mem::take(&mut self.pending) {
                    let what = format!(
                        "connected {:.1} s before the time limit ran out but sent no Tracy handshake",
                        p.since.elapsed().as_secs_f64()
                    );
                    self.attempts.push(Attempt { peer: p.peer, what });
                }
                // Every wait of a session ends at the deadline: they end on their own now,
                // each saying how far it got (or one completes after all).
                for s in std::mem::take(&mut self.sessions) {
                    let (peer, outcome, transfer) = s.join();
                    match outcome {
                        Outcome::Drained => return Ok(self.complete(peer, transfer)),
                        Outcome::Aborted(what) | Outcome::TimedOut(what) => {
                            self.attempts.push(Attempt { peer, what })
                        }
                    }
                }
                return Err(self.timeout());
            }
            if !busy {
                let left = self
                    .deadline
                    .map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
                std::thread::sleep(POLL.min(left));
            }
        }
    }

    /// Takes the connections that have arrived while there is room; whether there were any.
    fn accept(&mut self, progress: &mut impl FnMut(&str)) -> Result<bool, ServeError> {
        let mut any = false;
        while self.pending.len() < MAX_PENDING {
            match self.server.listener.accept() {
                Ok((sock, peer)) => {
                    any = true;
                    progress(&format!("capture tool connected from {peer}"));
                    match sock.set_nonblocking(true) {
                        Ok(()) => self.pending.push(Pending {
                            sock,
                            peer,
                            hello: [0; HANDSHAKE_SIZE],
                            got: 0,
                            since: Instant::now(),
                        }),
                        Err(e) => self.attempts.push(Attempt {
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
        Ok(any)
    }

    /// Serves a connection whose handshake was accepted on a thread of its own, if fewer
    /// than [`MAX_SESSIONS`] are being served; else gives it back with the refusal to
    /// answer it with.
    fn start(&mut self, sock: TcpStream, peer: SocketAddr) -> Result<(), (TcpStream, Refusal)> {
        if self.sessions.len() >= MAX_SESSIONS {
            let busy: Vec<String> = self.sessions.iter().map(|s| s.peer.to_string()).collect();
            let why = format!(
                "{MAX_SESSIONS} capture tools are being served already, the most at once ({}); close one or \
                 wait for it to finish, then connect again",
                busy.join(", ")
            );
            let reply = Some(Handshake::NotAvailable);
            return Err((sock, Refusal { why, reply }));
        }
        // The session's own handle of the connection, blocking (its waits have time limits).
        let theirs = match sock
            .try_clone()
            .and_then(|t| t.set_nonblocking(false).map(|()| t))
        {
            Ok(t) => t,
            Err(e) => {
                let why = format!("cannot set up the connection: {e}");
                return Err((sock, Refusal { why, reply: None }));
            }
        };
        let _ = theirs.set_nodelay(true);
        let (stream, stall, deadline) = (self.stream, self.opts.stall, self.deadline);
        let spawned = std::thread::Builder::new()
            .name("ttprof-tracy-session".into())
            .spawn_scoped(self.scope, move || {
                session::run(stream, theirs, stall, deadline)
            });
        match spawned {
            Ok(thread) => {
                self.sessions.push(Session { peer, sock, thread });
                Ok(())
            }
            Err(e) => {
                let why = format!("cannot start a thread to serve it: {e}");
                let reply = Some(Handshake::NotAvailable);
                Err((sock, Refusal { why, reply }))
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
