#![warn(missing_docs, unreachable_pub)]
//! `ttprof`: the host side of the Tensix device profiler.
//!
//! Kernels linked with `ttprof-rt` write zones into a ring per RISC in each tile's L1; this
//! library reads those rings, names every record from the kernel ELFs, puts device cycles
//! on the host clock, and writes the files people already use. It has three layers, and the
//! data flows through them in this order:
//!
//! 1. **Input**: reaching device memory and turning ring bytes into records.
//!    [`devmem`] ([`DeviceMemory`](devmem::DeviceMemory): the emulator's mapped image, a
//!    [`Snapshot`](devmem::Snapshot), a card through tt-kmd), [`readout`] (control blocks,
//!    live spans, the streaming [`Drainer`](readout::Drainer)), [`decode`] (the ring
//!    encoding), [`capture`] (draining while kernels run), [`replay`], [`launch`], and
//!    [`oplog`] (what the host ran).
//! 2. **Model**: what the records mean. [`elf`] and [`sites`] (zone metadata from kernel
//!    ELFs), [`resolve`], [`clock`] and [`timebase`] (cycles to host ns, through frequency
//!    steps), [`markers`] (nesting order), [`ops`] (op spans from the wrapper zones), and the
//!    resolved whole: [`profile::Profile`], built once, which yields one
//!    [`RingView`](profile::RingView) per ring (zones with depth, cycles, host ns and op;
//!    events, data, sums).
//! 3. **Sinks**: every output implements [`sink::Sink`] and is fed ring by ring by one
//!    driver, [`sink::drive`]: the device CSV ([`csv`]), the op report ([`report`]), trace
//!    JSON ([`trace`]), the HTML timeline ([`html`]), the summary ([`summary`]), the Tracy
//!    stream ([`tracy`]). [`outputs::write_all`] writes the standard set into a directory.
//!
//! Below them, the utility layer: [`atomic`] and [`files`] (how files are written and
//! read), [`printable`]; problems in device data are [`issue::Issue`]s (never a panic,
//! never silent); I/O and unusable inputs are [`Error`]s. Above them, the commands:
//! [`session`] (feature `emulator`, on by default) builds kernels, runs them on the bundled
//! emulator, drains and writes everything (what `ttprof run` does, as [`session::run`]);
//! [`capture_session`] attaches to live device memory, drains while kernels run and writes
//! what it took (what `ttprof capture` does); [`diff`] and [`pathdiff`] compare runs;
//! [`kernels`] builds kernel crates. Each layer imports only the layers below it. The
//! `ttprof` command line is the `ttprof-cli` crate.
//!
//! # A new output is one `Sink`
//!
//! ```
//! use std::collections::BTreeMap;
//! use ttprof::profile::{Profile, RingView};
//! use ttprof::sink::{self, Finished, Sink};
//!
//! /// Zones per name, over every ring.
//! #[derive(Default)]
//! struct ZoneCount(BTreeMap<String, u64>);
//!
//! impl Sink for ZoneCount {
//!     fn ring(&mut self, p: &Profile, ring: &RingView) -> ttprof::Result<()> {
//!         for z in ring.zones() {
//!             *self.0.entry(p.labels()[z.site as usize].name.clone()).or_default() += 1;
//!         }
//!         Ok(())
//!     }
//!
//!     fn finish(&mut self, _: &Profile) -> ttprof::Result<Finished> {
//!         Ok(Finished::default())
//!     }
//! }
//!
//! # fn main() -> ttprof::Result<()> {
//! # use riscv_linker::{Arch, NocCoord, Risc};
//! # let dir = tempfile::tempdir().unwrap();
//! # let image = dir.path().join("device.img");
//! # // A simulated BRISC records two launches of a kernel with a zone in a loop (a kernel
//! # // on the emulator or a card writes the same ring); its L1 becomes a device image.
//! # let sim = ttprof_rt::sim::Sim::install(Arch::WormholeB0, Risc::Brisc, 0);
//! # for run in [1, 2] {
//! #     sim.begin_launch(run);
//! #     for _ in 0..3 {
//! #         let _z = ttprof_rt::zone!("tile-loop");
//! #         sim.advance(1_000);
//! #     }
//! #     sim.end_launch();
//! # }
//! # let mut builder = ttprof::testing::ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)]);
//! # builder.put_ring(0, NocCoord::new(1, 1), Risc::Brisc, &sim.l1());
//! # builder.write(&image)?;
//! // Read a device image (or a snapshot, or a card: `tt:0`) once, without an op log.
//! let loaded = Profile::open(&image, None, false)?;
//! let mut count = ZoneCount::default();
//! sink::drive(&loaded.profile, &mut [&mut count])?;
//! // Without an op log the sites are not named: every output says `unresolved-site-<id>`.
//! assert_eq!(count.0.values().sum::<u64>(), 6);
//! # Ok(())
//! # }
//! ```

mod util;

mod input;
mod model;
pub mod sink;

mod commands;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::{Error, Location, Result};
pub use input::{capture, decode, devmem, launch, oplog, readout, replay, stamp, tt_metal};
pub use model::{
    clock, critpath, elf, import, markers, ops, pass, profile, provenance, resolve, ring_source,
    sites, spooled, timebase, timeline,
};
pub use sink::{csv, html, outputs, report, summary, trace, tracy};

pub use commands::{capture_session, diff, kernels, pathdiff};
#[cfg(feature = "emulator")]
pub use commands::{lines, session};
pub use util::{atomic, error, files, issue, printable};
