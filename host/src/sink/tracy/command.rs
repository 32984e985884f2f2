//! `ttprof tracy`: read a device image or snapshot once, then serve it to a Tracy capture
//! tool (what the CLI's subcommand runs; a library caller would use [`TracyStream::build`] and
//! [`serve`](super::serve) directly).

use super::{
    server::capture_hint, ServeOptions, ServeReport, Server, StreamOptions, TracySink, TracyStream,
};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::profile::Profile;
use crate::ring_source::RingSource;
use std::path::Path;

/// What the command did: the capture, and every problem found on the way.
pub struct TracyOutcome {
    /// What the capture tool received.
    pub report: ServeReport,
    /// Problems in the data (readout, naming, stream).
    pub issues: Vec<Issue>,
}

/// Where `ttprof tracy` reads the run from.
pub enum Source<'a> {
    /// A device image, snapshot or card, named by the op log.
    Device {
        /// The device memory.
        device: &'a Path,
        /// The op log that names its zones.
        oplog: &'a Path,
    },
    /// tt-metal's device log (`profile_log_device.csv`) and, optionally, its op report
    /// ([`crate::import`]).
    DeviceLog {
        /// The device log.
        csv: &'a Path,
        /// The op report naming its runs.
        ops: Option<&'a Path>,
    },
}

/// Reads `source` (never consuming a device), and serves the stream until a capture tool
/// has drained it. Progress goes to stderr. The run is read in two passes (the model, then
/// the rings one at a time, [`crate::pass`], [`crate::import::stream`]): what stays is the
/// Tracy stream's own tables.
pub fn run(source: &Source, opts: &ServeOptions) -> Result<TracyOutcome> {
    // It writes no file: no input needs guarding.
    let inputs = Inputs::none();
    let (p, stream, note) = match *source {
        Source::Device { device, oplog } => {
            let oplog = OpLog::read(oplog, &inputs)?;
            let loaded = crate::pass::open(device, Some(oplog), &inputs)?;
            let mut rings = crate::pass::DeviceRings::new(&loaded.profile, loaded.memory.as_ref())?;
            let stream = stream_of(&loaded.profile, &mut rings)?;
            drop(rings);
            (loaded.profile, stream, loaded.clock_note)
        }
        Source::DeviceLog { csv, ops } => {
            let (i, mut rings) = crate::import::stream(csv, ops, &inputs)?;
            let stream = stream_of(&i.profile, &mut rings)?;
            (i.profile, stream, i.clock_note)
        }
    };
    eprintln!("{note}");
    serve_stream(p, stream, opts)
}

/// The Tracy stream of `p`, each ring's records taken from `rings`.
fn stream_of(p: &Profile, rings: &mut dyn RingSource) -> Result<TracyStream> {
    let mut b = TracySink::new(StreamOptions::default());
    crate::sink::drive_rings(p, rings, &mut [&mut b])?;
    b.into_stream()
}

/// Serves `p` until a capture tool has drained it.
pub fn serve(p: Profile, opts: &ServeOptions) -> Result<TracyOutcome> {
    let stream = TracyStream::of(&p, &StreamOptions::default())?;
    serve_stream(p, stream, opts)
}

/// Serves `stream`, built from `p`, until a capture tool has drained it.
fn serve_stream(p: Profile, stream: TracyStream, opts: &ServeOptions) -> Result<TracyOutcome> {
    let s = &stream.summary;
    eprintln!(
        "Tracy stream: {} zones on {} RISC lanes in {} GPU contexts ({} tile(s) each), {} source locations, {} ops, \
         {} messages",
        s.zones, s.lanes, s.contexts, s.tiles_per_context, s.source_locations, s.ops, s.messages,
    );
    let server = Server::bind(opts.addr)?;
    let addr = server.local_addr();
    let limit = opts.timeout.map_or("no time limit".to_string(), |t| {
        format!("up to {} s", t.as_secs_f64())
    });
    eprintln!(
        "waiting for a Tracy 0.14 capture tool on {addr} ({limit}): run `{}`",
        capture_hint(addr)
    );
    let report = server.serve(&stream, opts, |msg| eprintln!("{msg}"))?;
    let t = &report.transfer;
    let queries: u64 = t.queries.values().sum();
    eprintln!(
        "capture complete: {} received {} zones in {} frames ({} bytes, {} compressed) and {queries} answers",
        report.client, t.zones, t.frames, t.raw_bytes, t.wire_bytes
    );
    let issues = p
        .readout
        .issues
        .into_iter()
        .chain(p.sites.issues)
        .chain(stream.issues)
        .collect();
    Ok(TracyOutcome { report, issues })
}
