//! Device zones in Tracy: ttprof speaks Tracy's network protocol (version 82, Tracy 0.14.x)
//! itself, as the profiled program, so `tracy-capture` and the Tracy GUI can connect to it.
//!
//! Why not the `tracy-client` crate: through its API a GPU context gets one row and there
//! are at most 255 contexts, while a chip has up to 140 tiles x 5 RISCs. The protocol
//! itself lets a context carry one row per thread id given in each zone, which is what
//! tt-metal's Tracy fork uses; `layout` says how chips, tiles and RISCs map onto
//! contexts and rows (one context per tile up to 255 tiles, then tiles grouped per chip).
//!
//! What a capture shows:
//! * one GPU context per tile (or group of tiles), named `Device 0, core (1,2)`, with one
//!   row per RISC named `BRISC 0:(1,2)`; each device zone is a GPU zone on its RISC's row,
//!   nested as it ran, with its name and source `file:line` (one Tracy source location per
//!   zone *site*, never per zone: Tracy holds at most 32K), at host-aligned times from the
//!   [`Timebase`](crate::timebase::Timebase) (period 1 ns);
//! * the op log's launches as CPU zones on an `Ops: device N` thread (name = op code, text =
//!   `op=Matmul run=3 device=0 tiles=4`: run id and attributes on one line, without commas
//!   or double quotes, so `tracy-csvexport -u` writes one line per zone), signposts as
//!   messages there;
//! * device events, data, sums and loss reports as messages on their RISC's thread, and a
//!   value zone's value (`value_zone!`) as a message `name: value N` at the zone's start on
//!   its RISC's thread: Tracy's GPU zones have no text or value (its `ZoneText` and
//!   `ZoneValue` events attach to the thread's current CPU zone, which a device lane has
//!   not), and a source location per value would exhaust Tracy's 32K of them.
//!
//! Use: [`TracyStream::build`] once, then [`serve`] (or [`Server::bind`] + [`Server::serve`] to
//! pick the port first): it listens on loopback port 8086 unless told otherwise and returns
//! once a capture tool has received everything, or with a [`ServeError::Timeout`] that
//! says how to connect. `ttprof tracy --device <image|snapshot> --oplog <ops.jsonl>` does
//! both.
//!
//! Modules, one job each: `protocol` (Tracy's numbers, with their source files),
//! `encode` (event bytes and delta-encoded times), `frame` (LZ4 framing), `layout`,
//! `plan` (readout to stream), `records` (what the stream keeps on disk), `emit` (wire order and query answers), `session` (one
//! connection), `server` (listening, timeouts, retries, sessions side by side), and for tests (feature `testing`)
//! `test_client` with `decoder`: a capture tool that checks everything the real server
//! relies on.

pub mod command;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod decoder;
pub(crate) mod emit;
pub(crate) mod encode;
pub(crate) mod frame;
pub(crate) mod layout;
pub(crate) mod plan;
// Both sides of the protocol: the server's half is always used, the capture tool's half
// (decoding the handshake, queries' replies, severities) only by `test_client`.
#[cfg_attr(not(any(test, feature = "testing")), allow(dead_code, unreachable_pub))]
pub(crate) mod protocol;
pub(crate) mod records;
pub(crate) mod server;
pub(crate) mod session;
#[cfg(any(test, feature = "testing"))]
pub mod test_client;
#[cfg(test)]
mod tests;

pub use plan::{StreamCounts, StreamOptions, TracySink, TracyStream};
pub use server::{serve, Attempt, ServeError, ServeOptions, ServeReport, Server, DEFAULT_PORT};
