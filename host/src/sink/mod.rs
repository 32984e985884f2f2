//! Outputs as sinks of a [`Profile`]: every output file is a [`Sink`] that the one driver,
//! [`drive`], feeds ring by ring.
//!
//! A sink sees the whole model first ([`Sink::begin`]), then one [`RingView`] at a time in
//! readout order ([`Sink::ring`]), then [`Sink::finish`], where it commits its file and says
//! what it wrote and found. A ring's view is built once for every sink and dropped before
//! the next ring. The rings' records come from the profile ([`drive`]) or from a second
//! pass over the input ([`drive_rings`], a [`RingSource`], defined in the model layer), so
//! no more than one ring's records need be in memory.
//!
//! Files are written atomically ([`crate::atomic::AtomicFile`]): a sink that fails, or a
//! driver that stops on another sink's error, leaves no partial file behind. [`stream`]
//! feeds the sinks that allow it ([`Sink::streams`]) a capture too large to hold, one part
//! at a time. Adding an output is one file: a type implementing [`Sink`], handed to
//! [`drive`] (or added to [`crate::outputs::write_all`]'s standard set).

pub mod analysis;
pub mod csv;
pub(crate) mod exact;
pub mod graph;
pub mod html;
pub mod outputs;
pub mod parquet;
pub mod perfetto;
#[cfg(test)]
pub(crate) mod pieces;
pub mod report;
pub mod stream;
pub mod summary;
pub mod trace;
pub mod tracy;

pub(crate) use analysis::AnalysisSink;
pub use csv::DeviceCsv;
pub(crate) use graph::GraphSink;
pub(crate) use html::HtmlPage;
pub use parquet::ParquetSink;
pub use perfetto::PerfettoSink;
pub(crate) use report::OpReportSink;
pub use summary::SummarySink;
pub(crate) use trace::TraceJson;

use crate::decode::Records;
use crate::error::Result;
use crate::issue::Issue;
pub use crate::profile::Part;
use crate::profile::{Profile, RingView};
use crate::ring_pieces::{self, Openings, Piece};
pub use crate::ring_source::{Held, RingSource};
use std::path::PathBuf;

/// An output fed by [`drive`].
///
/// ```
/// use std::collections::BTreeMap;
/// use ttprof::profile::{Profile, RingView};
/// use ttprof::sink::{self, Finished, Sink};
///
/// /// Zones per name, over every ring.
/// #[derive(Default)]
/// struct ZoneCount(BTreeMap<String, u64>);
///
/// impl Sink for ZoneCount {
///     fn ring(&mut self, p: &Profile, ring: &RingView) -> ttprof::Result<()> {
///         for z in ring.zones() {
///             *self.0.entry(p.labels()[z.site as usize].name.clone()).or_default() += 1;
///         }
///         Ok(())
///     }
///
///     fn finish(&mut self, _: &Profile) -> ttprof::Result<Finished> {
///         Ok(Finished::default())
///     }
/// }
///
/// # fn main() -> ttprof::Result<()> {
/// # use riscv_linker::{Arch, NocCoord, Risc};
/// # let dir = tempfile::tempdir().unwrap();
/// # let image = dir.path().join("device.img");
/// # // A simulated BRISC records two launches of a kernel with a zone in a loop (a kernel
/// # // on the emulator or a card writes the same ring); its L1 becomes a device image.
/// # let sim = ttprof_rt::sim::Sim::install(Arch::WormholeB0, Risc::Brisc, 0);
/// # for run in [1, 2] {
/// #     sim.begin_launch(run);
/// #     for _ in 0..3 {
/// #         let _z = ttprof_rt::zone!("tile-loop");
/// #         sim.advance(1_000);
/// #     }
/// #     sim.end_launch();
/// # }
/// # let mut builder = ttprof::testing::ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)]);
/// # builder.put_ring(0, NocCoord::new(1, 1), Risc::Brisc, &sim.l1());
/// # builder.write(&image)?;
/// // Read a device image (or a snapshot, or a card: `tt:0`) once, without an op log.
/// let loaded = Profile::open(&image, None, false, &ttprof::inputs::Inputs::none())?;
/// let mut count = ZoneCount::default();
/// sink::drive(&loaded.profile, &mut [&mut count])?;
/// // Without an op log the sites are not named: every output says `unresolved-site-<id>`.
/// assert_eq!(count.0.values().sum::<u64>(), 6);
/// # Ok(())
/// # }
/// ```
pub trait Sink {
    /// Before the first ring. An error here stops the drive before any file is written.
    fn begin(&mut self, _profile: &Profile) -> Result<()> {
        Ok(())
    }

    /// Whether [`Sink::ring`] needs the ring's zones and marks ([`RingView::zones`]); a sink
    /// that reads only the raw records (the device CSV) says no, and when no sink needs
    /// them the driver does not build them.
    fn wants_zones(&self) -> bool {
        true
    }

    /// One ring, in readout order: the whole ring, or, to a sink that takes pieces, each
    /// of its pieces in turn ([`RingView::part`]).
    fn ring(&mut self, profile: &Profile, ring: &RingView) -> Result<()>;

    /// Whether [`Sink::ring`] can be given a ring a piece at a time ([`Part`]): called once
    /// a piece, it carries what it keeps of the ring (its open zones, its lane's state)
    /// from the first piece to the last. A ring's pieces are given only when every sink of
    /// the drive takes them and the source reads its rings so
    /// ([`RingSource::long_zones`]); otherwise each ring comes whole.
    fn takes_pieces(&self) -> bool {
        false
    }

    /// Whether the sink can be fed a run that arrives in parts ([`stream::Stream`]): its
    /// [`Sink::ring`] takes the ring's names, labels and ops from the `profile` passed with
    /// the ring (the part holding it, not the run), and it writes run-wide tables (ops) in
    /// [`Sink::finish`], whose profile is the run's. The Perfetto trace and the Parquet
    /// tables can; the sinks that keep the whole run to summarise it cannot.
    fn streams(&self) -> bool {
        false
    }

    /// After the last ring: commits the output and reports it.
    fn finish(&mut self, profile: &Profile) -> Result<Finished>;
}

/// What a sink wrote and found.
#[derive(Clone, Debug, Default)]
pub struct Finished {
    /// Files written, in order.
    pub files: Vec<PathBuf>,
    /// Problems the output found (zones it had to cut, items it left out).
    pub issues: Vec<Issue>,
}

/// Feeds `profile` to every sink: all `begin`s, then each ring to every sink, then all
/// `finish`es (in the order given). Stops at the first error.
pub fn drive(profile: &Profile, sinks: &mut [&mut dyn Sink]) -> Result<Vec<Finished>> {
    drive_rings(profile, &mut Held(profile), sinks)
}

/// [`drive`], each ring's records taken from `rings` (one ring in memory at a time when
/// the source reads them on demand).
pub fn drive_rings(
    profile: &Profile,
    rings: &mut dyn RingSource,
    sinks: &mut [&mut dyn Sink],
) -> Result<Vec<Finished>> {
    for s in sinks.iter_mut() {
        s.begin(profile)?;
    }
    let zones = sinks.iter().any(|s| s.wants_zones());
    let pieces = sinks.iter().all(|s| s.takes_pieces());
    for i in 0..profile.ring_count() {
        if pieces {
            if let Some(long) = rings.long_zones(i)? {
                ring_in_pieces(profile, rings, i, long, sinks)?;
                continue;
            }
        }
        let ring = rings.ring(i)?;
        let view = profile.view(i, &ring, zones);
        for s in sinks.iter_mut() {
            s.ring(profile, &view)?;
        }
    }
    sinks.iter_mut().map(|s| s.finish(profile)).collect()
}

/// Ring `index` fed to every sink a piece at a time (every sink takes pieces).
fn ring_in_pieces(
    profile: &Profile,
    rings: &mut dyn RingSource,
    index: usize,
    long: ring_pieces::Long,
    sinks: &mut [&mut dyn Sink],
) -> Result<()> {
    let mut openings = Openings::new(index, long);
    let mut first = true;
    let mut feed = |piece: Piece, levels: u16, last: bool| {
        let part = Part { first, last };
        first = false;
        feed_piece(
            profile,
            index,
            piece.records,
            &piece.depth,
            levels,
            part,
            sinks,
        )
    };
    rings.pieces(index, &mut |r| {
        let piece = openings.push(r)?;
        feed(piece, openings.levels(), false)
    })?;
    let piece = openings.finish()?;
    feed(piece, openings.levels(), true)
}

/// One piece of ring `index` (its records, a depth per zone, the ring's levels so far)
/// fed to every sink as the `part` it is.
pub(crate) fn feed_piece(
    profile: &Profile,
    index: usize,
    records: Records,
    depth: &[u16],
    levels: u16,
    part: Part,
    sinks: &mut [&mut dyn Sink],
) -> Result<()> {
    let mut ring = profile.readout.rings[index].clone();
    ring.released = None;
    ring.records = records;
    let mut view = ring_pieces::view(profile, index, &ring, depth, levels);
    view.part = part;
    for s in sinks.iter_mut() {
        s.ring(profile, &view)?;
    }
    Ok(())
}
