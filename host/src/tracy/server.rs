//! Handing a finished readout to a capture tool that connects later.
//!
//! Like a Tracy-instrumented program run with `TRACY_NO_EXIT=1`, ttprof listens (loopback
//! port 8086 unless told otherwise) and does not return until a capture tool has connected
//! and confirmed it received everything. A tool that is refused (wrong protocol version,
//! not Tracy) or leaves before the end does not end the wait: the stream is immutable, so
//! the next tool gets all of it again. If no tool completes a capture within the timeout
//! (counted from the start, and again from each dropped capture), [`serve`] returns
//! [`ServeError::Timeout`], whose message says how to connect and what went wrong before.

use super::plan::Stream;
use super::session::{self, Outcome, Transfer};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

/// Tracy's default port (`TRACY_DATA_PORT`, `public/client/TracyProfiler.cpp`).
pub const DEFAULT_PORT: u16 = 8086;

/// How long to wait between looks for a new connection.
const POLL: Duration = Duration::from_millis(20);

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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)),
            timeout: Some(Duration::from_secs(60)),
            stall: Duration::from_secs(30),
        }
    }
}

/// A connection that did not complete a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub peer: SocketAddr,
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
    pub transfer: Transfer,
    /// From listening to the confirmation.
    pub elapsed: Duration,
    /// Earlier connections that were refused or dropped.
    pub attempts: Vec<Attempt>,
}

#[derive(Debug)]
pub enum ServeError {
    Bind { addr: SocketAddr, source: io::Error },
    Timeout { addr: SocketAddr, waited: Duration, attempts: Vec<Attempt> },
    Io { what: &'static str, source: io::Error },
}

/// The command that captures from `addr`.
pub fn capture_hint(addr: SocketAddr) -> String {
    format!("tracy-capture -o out.tracy -a {} -p {}", addr.ip(), addr.port())
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
                     connect the Tracy GUI to {addr} while ttprof waits, or raise --timeout",
                    waited.as_secs_f64(),
                    capture_hint(*addr)
                )?;
                for a in attempts {
                    write!(f, "\n  earlier connection from {a}")?;
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
        crate::Error::Other(e.to_string())
    }
}

/// A listening socket; bind first to learn the port (e.g. when asking for port 0).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Server {
    pub fn bind(addr: SocketAddr) -> Result<Server, ServeError> {
        let listener = TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Io { what: "read the listening address", source })?;
        listener.set_nonblocking(true).map_err(|source| ServeError::Io { what: "poll for connections", source })?;
        Ok(Server { listener, addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `stream` until a capture tool has received all of it (see the module docs).
    /// `progress` hears about connections as they come and go.
    pub fn serve(&self, stream: &Stream, opts: &ServeOptions, mut progress: impl FnMut(&str)) -> Result<ServeReport, ServeError> {
        let started = Instant::now();
        let mut waiting_since = started;
        let mut attempts = Vec::new();
        loop {
            let (sock, peer) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                    if opts.timeout.is_some_and(|t| waiting_since.elapsed() >= t) {
                        return Err(ServeError::Timeout { addr: self.addr, waited: started.elapsed(), attempts });
                    }
                    std::thread::sleep(POLL);
                    continue;
                }
                Err(source) => return Err(ServeError::Io { what: "accept a connection", source }),
            };
            sock.set_nonblocking(false).map_err(|source| ServeError::Io { what: "set up a connection", source })?;
            let _ = sock.set_nodelay(true);
            progress(&format!("capture tool connected from {peer}"));
            match session::run(stream, sock, opts.stall) {
                (Outcome::Drained, transfer) => {
                    return Ok(ServeReport { client: peer, transfer, elapsed: started.elapsed(), attempts });
                }
                (Outcome::Rejected(what), _) => {
                    progress(&format!("refused {peer}: {what}"));
                    attempts.push(Attempt { peer, what });
                }
                (Outcome::Aborted(what), _) => {
                    progress(&format!("capture from {peer} incomplete: {what}; waiting for another"));
                    attempts.push(Attempt { peer, what });
                    waiting_since = Instant::now();
                }
            }
        }
    }
}

/// Binds `opts.addr` and serves `stream` (see [`Server::serve`]).
pub fn serve(stream: &Stream, opts: &ServeOptions, progress: impl FnMut(&str)) -> Result<ServeReport, ServeError> {
    Server::bind(opts.addr)?.serve(stream, opts, progress)
}
