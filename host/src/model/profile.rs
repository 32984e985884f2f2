//! The resolved model of one device run: what every output is written from.
//!
//! A [`Profile`] is built once from a readout (the rings' records), the op log that names
//! them and the [`Timebase`] that puts device cycles on the host clock. Building it binds
//! every record to its site ([`crate::resolve`]), interns the distinct zone names
//! ([`SiteLabel`]), joins the op log's ops with their device spans from the firmware wrapper
//! zones ([`crate::ops`]) and checks that the two agree (an op log of another
//! run is placed by device times, with a warning). Outputs then visit it ring by ring:
//! [`Profile::ring`] yields a [`RingView`], one ring's zones (nested, with depth, cycles,
//! host ns and op) and point records, built on demand and dropped after use, so no output
//! needs every zone in memory at once. [`crate::sink`] drives the outputs over it.
//!
//! The name of a record whose site cannot be resolved is `unresolved-site-<id>`
//! (`unresolved_name`) in every output.

use crate::decode::RecordKind;
use crate::devmem::DeviceMemory;
use crate::error::Result;
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::markers::{markers, MarkerType};
use crate::oplog::{OpLog, OpLogEntry, OpRecord, Signpost};
use crate::ops::{self as device, Ops};
use crate::pass::RingPass;
use crate::readout::{self, Readout, RingReport};
use crate::resolve::{Resolution, Resolver};
use crate::sites::SiteMeta;
use crate::timebase::{HostTime, TileClock, Timebase};
use crate::timeline::{widen_time, Lane, Mark, MarkKind, OpSpan, SiteLabel, Zone};
use crate::zones::Zones;
use riscv_linker::devfile::Geometry;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The records' first and last host ns per (chip, op id).
type OpSpans = BTreeMap<(u32, Option<u32>), (HostTime, HostTime)>;

/// How much of the shorter of (the op log's host time range, the device records' span) the
/// two must share for the op log's host times to place the ops.
const MIN_HOST_OVERLAP: f64 = 0.5;

/// The name every output gives a record whose site has no metadata.
pub(crate) fn unresolved_name(site: u16) -> String {
    format!("unresolved-site-{site}")
}

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// One device run, resolved: rings, sites, ops, timebase and the problems found.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The rings' records and the readout's own counts and issues.
    pub(crate) readout: Readout,
    /// Site metadata per ring and run (and the naming issues).
    pub(crate) sites: Resolution,
    /// The op log the records were named with, if any.
    pub(crate) oplog: Option<OpLog>,
    /// Device cycles to host ns, per chip and tile.
    pub(crate) timebase: Timebase,
    /// Distinct zone names and source locations; [`Zone::site`] and [`Mark::site`] index it.
    pub(crate) labels: Vec<SiteLabel>,
    /// Ops in host (or device) start order: host times from the op log, device spans from
    /// the wrapper zones; a run the op log does not name is an op `run <id>`.
    pub(crate) ops: Vec<OpSpan>,
    /// The wrapper zones' times per (chip, run), for the op report.
    pub device_ops: Ops,
    /// Every (chip, run id) the records hold, with the tiles that recorded them (what
    /// [`crate::ops::runs`] gives of the readout).
    pub(crate) runs: BTreeMap<(u32, u32), Vec<riscv_linker::NocCoord>>,
    /// The op log's signposts.
    pub(crate) signposts: Vec<Signpost>,
    /// Problems found building the model (records off the timeline, an op log whose host
    /// times do not match the device). The readout's and the naming's are in their structs:
    /// [`Profile::all_issues`] lists them all.
    pub(crate) issues: Vec<Issue>,
    /// Per ring: (run, site) -> index into `labels`.
    ring_labels: Vec<RingLabels>,
    /// (chip, run) -> index into `ops`.
    op_index: FxHashMap<(u32, u32), u32>,
    /// (chip, run) -> index into the op log's entries of its first op of that run
    /// ([`Profile::op_record`]).
    log_index: FxHashMap<(u32, u32), u32>,
    /// Distinct per constructed profile (clones share it): lets a sink keep what it derived
    /// from one profile's labels and ops while rings of that profile keep coming.
    uid: u64,
}

/// A profile loaded by [`Profile::open`], with the memory it was read from.
pub struct Loaded {
    /// The model.
    pub profile: Profile,
    /// The device memory (for its description and bus counts).
    pub memory: Box<dyn DeviceMemory>,
    /// Where the timebase comes from: a clock fit, or the nominal clock and why.
    pub clock_note: String,
}

/// One ring's records on the host timeline.
#[derive(Clone, Debug)]
pub struct RingView<'a> {
    /// Index of the ring in [`Profile::readout`].
    pub(crate) index: usize,
    /// The ring's identity, counts and records.
    pub(crate) ring: &'a RingReport,
    /// Its row: chip, tile, RISC and nesting depth used.
    pub(crate) lane: Lane,
    /// Zones in the order they open, with nesting depth (`lane` is [`RingView::index`]).
    pub(crate) zones: Zones<'a>,
    /// Events, data and sum records.
    pub(crate) marks: Vec<Mark>,
    /// Whether the timebase knows the ring's chip (else `zones` and `marks` are empty and
    /// [`Profile::issues`] counts the records left out).
    pub placed: bool,
    /// The ring's tile clock (`Some` when `placed`): its zones' host times
    /// ([`Zone::start_ns`]).
    pub(crate) clock: Option<TileClock<'a>>,
    /// Whether the view is the whole ring or one of its pieces.
    pub(crate) part: Part,
}

/// Where a [`RingView`] sits in its ring: the whole ring, or one of its pieces in turn
/// ([`crate::ring_pieces`]; only a sink that takes pieces is given them,
/// [`crate::sink::Sink::takes_pieces`]). A piece's zones and marks are the ring's next ones
/// in opening order; its records ([`RingView::ring`]) are its openings in that order, then
/// its share of the ring's unmarked records (time anchors, runs, losses) in ring order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The ring's first view (its first piece, or the whole ring).
    pub first: bool,
    /// The ring's last view (its last piece, or the whole ring).
    pub last: bool,
}

impl Part {
    /// The whole ring.
    pub const WHOLE: Part = Part {
        first: true,
        last: true,
    };
}

impl<'a> RingView<'a> {
    /// Index of the ring in [`Profile::readout`].
    pub fn index(&self) -> usize {
        self.index
    }

    /// The ring's identity, counts and records.
    pub fn ring(&self) -> &'a RingReport {
        self.ring
    }

    /// Its row: chip, tile, RISC and nesting depth used (so far, in a piece).
    pub fn lane(&self) -> Lane {
        self.lane
    }

    /// Whether the view is the whole ring or one of its pieces.
    pub fn part(&self) -> Part {
        self.part
    }

    /// Zones in the order they open, with nesting depth (`lane` is [`RingView::index`]),
    /// each made from the ring's records when asked for ([`crate::zones::Zones::zone`]).
    pub fn zones(&self) -> &Zones<'a> {
        &self.zones
    }

    /// Zone `z`'s start and end on the host timeline, ns: its cycles on the ring's tile clock
    /// (NaN off the timebase).
    pub fn zone_ns(&self, z: &Zone) -> (f64, f64) {
        let c = self.clock.as_ref();
        (z.start_ns(c), z.end_ns(c))
    }

    /// Events, data and sum records.
    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// Whether the timebase knows the ring's chip (else `zones` and `marks` are empty and
    /// [`Profile::issues`] counts the records left out).
    pub fn placed(&self) -> bool {
        self.placed
    }
}

impl Profile {
    /// Reads every ring of `mem` once (without consuming), names the records through
    /// `oplog` and places them with `timebase`.
    pub fn load(
        mem: &dyn DeviceMemory,
        oplog: Option<OpLog>,
        timebase: Timebase,
    ) -> Result<Profile> {
        let readout = readout::read(mem, false)?;
        Ok(Profile::new(readout, oplog, timebase))
    }

    /// The load every command shares: opens `device` (a device image, a snapshot, or what
    /// [`crate::devmem::open`] accepts), reads every ring once (advancing each ring's `TAIL`
    /// past what was read when `consume`), takes the timebase a snapshot's recorded clock
    /// samples give (else the nominal clock: [`Loaded::clock_note`] says which), and names
    /// the records through `oplog`. The files read are noted in `inputs`.
    pub fn open(
        device: &std::path::Path,
        oplog: Option<OpLog>,
        consume: bool,
        inputs: &Inputs,
    ) -> Result<Loaded> {
        let memory = crate::devmem::open(device, consume, inputs)?;
        let g = memory.geometry();
        let (timebase, clock_note) = crate::clock::timebase_for(device, g.arch, g.chips, inputs);
        let readout = readout::read(memory.as_ref(), consume)?;
        Ok(Loaded {
            profile: Profile::new(readout, oplog, timebase),
            memory,
            clock_note,
        })
    }

    /// The model of records already read: sites resolved through `oplog` (without an op
    /// log every site is unresolved).
    pub fn new(readout: Readout, oplog: Option<OpLog>, timebase: Timebase) -> Profile {
        let sites = match &oplog {
            Some(log) => Resolver::new(log).resolve(&readout),
            None => Resolution::unresolved(&readout),
        };
        Profile::resolved(readout, sites, oplog, timebase)
    }

    /// The model of records whose sites are resolved already (`sites` matches `readout`
    /// ring by ring).
    pub fn resolved(
        readout: Readout,
        sites: Resolution,
        oplog: Option<OpLog>,
        timebase: Timebase,
    ) -> Profile {
        let (mut p, spans) = Profile::build(readout, sites, oplog, timebase);
        p.check_host_times(&spans);
        p
    }

    /// A part of a run (some of its rings, [`crate::sink::stream`]): as
    /// [`Profile::resolved`], but the op log's host times are not checked against the
    /// part's records (a few rings do not span the run: the run's profile checks them when
    /// the stream finishes).
    pub fn part(
        readout: Readout,
        sites: Resolution,
        oplog: Option<OpLog>,
        timebase: Timebase,
    ) -> Profile {
        Profile::build(readout, sites, oplog, timebase).0
    }

    /// The model before the op log's host times are checked, and the records' first and
    /// last host ns per (chip, op) that check needs.
    fn build(
        readout: Readout,
        sites: Resolution,
        oplog: Option<OpLog>,
        timebase: Timebase,
    ) -> (Profile, OpSpans) {
        let passes = readout
            .rings
            .iter()
            .enumerate()
            .map(|(i, ring)| RingPass::of_ring(i, ring, &sites, &timebase))
            .collect();
        Profile::combine(readout, sites, oplog, timebase, passes)
    }

    /// The model of a run read in two passes ([`crate::pass`]): `readout`'s rings may have
    /// released their records ([`RingReport::release`]); `passes` are their facts, one per
    /// ring in readout order. The outputs then take each ring's records from a second pass
    /// ([`crate::sink::drive_rings`]). Gives the same model as [`Profile::resolved`] on the
    /// rings held whole.
    pub(crate) fn from_passes(
        readout: Readout,
        sites: Resolution,
        oplog: Option<OpLog>,
        timebase: Timebase,
        passes: Vec<RingPass>,
    ) -> Profile {
        let (mut p, spans) = Profile::combine(readout, sites, oplog, timebase, passes);
        p.check_host_times(&spans);
        p
    }

    fn combine(
        readout: Readout,
        sites: Resolution,
        oplog: Option<OpLog>,
        timebase: Timebase,
        mut passes: Vec<RingPass>,
    ) -> (Profile, OpSpans) {
        let mut device_ops = Ops::default();
        let mut no_timebase = BTreeMap::new();
        for pass in &mut passes {
            let w = std::mem::take(&mut pass.wrappers);
            device_ops.merge_ring(pass.id.chip, w, &pass.runs, &timebase, &mut no_timebase);
        }
        device_ops.finish(no_timebase);
        let mut runs: BTreeMap<(u32, u32), Vec<riscv_linker::NocCoord>> = BTreeMap::new();
        // Each tile once per run, in first-seen order: a set, not a search of the run's
        // tiles per ring (quadratic in the tiles of a run: 5 rings a tile, thousands of
        // tiles in a device log).
        let mut seen: FxHashSet<(u32, u32, riscv_linker::NocCoord)> = FxHashSet::default();
        for pass in &passes {
            for run in pass.runs.ids() {
                if seen.insert((pass.id.chip, run, pass.id.tile)) {
                    runs.entry((pass.id.chip, run))
                        .or_default()
                        .push(pass.id.tile);
                }
            }
        }
        drop(seen);
        let mut p = Profile {
            readout,
            sites,
            oplog,
            timebase,
            labels: Vec::new(),
            ops: Vec::new(),
            device_ops,
            runs,
            signposts: Vec::new(),
            issues: Vec::new(),
            ring_labels: Vec::new(),
            op_index: FxHashMap::default(),
            log_index: FxHashMap::default(),
            uid: NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        p.add_ops();
        let spans = p.intern_and_span(&passes);
        (p, spans)
    }

    /// The rings' records and the readout's own counts and issues.
    pub fn readout(&self) -> &Readout {
        &self.readout
    }

    /// Site metadata per ring and run (and the naming issues).
    pub fn sites(&self) -> &Resolution {
        &self.sites
    }

    /// The op log the records were named with, if any.
    pub fn oplog(&self) -> Option<&OpLog> {
        self.oplog.as_ref()
    }

    /// Device cycles to host ns, per chip and tile.
    pub fn timebase(&self) -> &Timebase {
        &self.timebase
    }

    /// Distinct zone names and source locations; [`Zone::site`] and [`Mark::site`] index it.
    pub fn labels(&self) -> &[SiteLabel] {
        &self.labels
    }

    /// Ops in host (or device) start order: host times from the op log, device spans from
    /// the wrapper zones; a run the op log does not name is an op `run <id>`.
    pub fn ops(&self) -> &[OpSpan] {
        &self.ops
    }

    /// The wrapper zones' times per (chip, run), for the op report.
    pub fn device_ops(&self) -> &Ops {
        &self.device_ops
    }

    /// Every (chip, run id) the records hold, with the tiles that recorded them (what
    /// [`crate::ops::runs`] gives of the readout).
    pub fn runs(&self) -> &BTreeMap<(u32, u32), Vec<riscv_linker::NocCoord>> {
        &self.runs
    }

    /// The op log's signposts.
    pub fn signposts(&self) -> &[Signpost] {
        &self.signposts
    }

    /// Problems found building the model (records off the timeline, an op log whose host
    /// times do not match the device). The readout's and the naming's are in their structs:
    /// `Profile::all_issues` lists them all.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// The readout and the naming the profile was built from (the rings with their counts,
    /// the naming's issues), once the profile is no longer needed.
    pub fn into_readout_and_sites(self) -> (Readout, Resolution) {
        (self.readout, self.sites)
    }

    /// This profile's identity: equal for clones, distinct for every profile built (a sink
    /// fed parts of a run, [`crate::sink::stream`], rebuilds what it derives from `labels`
    /// and `ops` when it changes).
    pub(crate) fn uid(&self) -> u64 {
        self.uid
    }

    /// Arch, chips, tiles per chip.
    pub fn geometry(&self) -> Geometry {
        self.readout.geometry
    }

    /// Number of rings.
    pub(crate) fn ring_count(&self) -> usize {
        self.readout.rings.len()
    }

    /// Every problem: the readout's, the naming's and the model's.
    pub(crate) fn all_issues(&self) -> impl Iterator<Item = &Issue> {
        self.readout
            .issues
            .iter()
            .chain(&self.sites.issues)
            .chain(&self.issues)
    }

    /// The metadata of site `id` of run `run` on ring `ring`, when known.
    pub fn site(&self, ring: usize, run: u32, id: u16) -> Option<&SiteMeta> {
        self.sites.site(ring, run, id)
    }

    /// The op log's op of `run` on `chip`: the first, as [`OpLog::op`] finds it, without
    /// its search of the log (once per op, or per tile, that search was quadratic).
    pub(crate) fn op_record(&self, chip: u32, run: u32) -> Option<&OpRecord> {
        let i = *self.log_index.get(&(chip, run))? as usize;
        match self.oplog.as_ref()?.entries.get(i)? {
            OpLogEntry::Op(o) => Some(o),
            _ => None,
        }
    }

    /// The op index of records of `run` on `chip`.
    pub(crate) fn op_of(&self, chip: u32, run: u32) -> Option<u32> {
        self.op_index.get(&(chip, run)).copied()
    }

    /// The index into [`Profile::labels`] of site `site` of run `run` on ring `ring` (what
    /// [`Zone::site`] holds; 0 for a site the ring has no record of).
    pub(crate) fn label_of(&self, ring: usize, run: u32, site: u16) -> u32 {
        self.ring_labels
            .get(ring)
            .and_then(|l| l.get(run, site))
            .unwrap_or(0)
    }

    /// Ring `index` on the host timeline (see [`RingView`]).
    pub fn ring(&self, index: usize) -> RingView<'_> {
        self.view(index, &self.readout.rings[index], true)
    }

    /// Ring `index` on the host timeline, its records from `ring` (the profile's own, or a
    /// second pass's when the profile released them: [`Profile::from_passes`]); without
    /// `zones`, only the records ([`Profile::ring_records`]).
    pub(crate) fn view<'a>(
        &'a self,
        index: usize,
        ring: &'a RingReport,
        zones: bool,
    ) -> RingView<'a> {
        let id = ring.id;
        let clock = self.timebase.tile_clock(id.chip, id.tile);
        let mut view = RingView {
            index,
            ring,
            lane: Lane {
                chip: id.chip,
                tile: id.tile,
                risc: id.risc,
                depth: 0,
            },
            zones: Zones::new(&ring.records, self.ring_labels.get(index), index as u32),
            marks: Vec::new(),
            placed: clock.is_some(),
            clock,
            part: Part::WHOLE,
        };
        if !view.placed || !zones {
            return view;
        }
        let (ring, id) = (view.ring, view.ring.id);
        let r = &ring.records;
        let (mut depth, mut depth_used) = (0u16, 0u16);
        view.zones.reserve(r.zones());
        let mut it = markers(r);
        while let Some(m) = it.next() {
            let i = m.record as usize;
            match m.kind {
                // A zone's run, op and label are the view's to find when it is asked for
                // (its run's op looked up once per run); its record is kept in the
                // markers' opening order, in place.
                MarkerType::ZoneStart => {
                    view.zones
                        .push_depth(i, depth, |run| self.op_of(id.chip, run));
                    it.keep(m.record);
                    depth += 1;
                    depth_used = depth_used.max(depth);
                }
                MarkerType::ZoneEnd => depth = depth.saturating_sub(1),
                kind => view.marks.push(self.mark(index, ring, i, kind, clock)),
            }
        }
        view.zones.set_records(it.into_kept());
        view.lane.depth = depth_used;
        view
    }

    /// Point record `i` of `ring` (ring `index`), whose marker is `kind`, as a mark.
    pub(crate) fn mark(
        &self,
        index: usize,
        ring: &RingReport,
        i: usize,
        kind: MarkerType,
        clock: Option<TileClock<'_>>,
    ) -> Mark {
        let r = &ring.records;
        let run = r.run_at(i);
        let kind = match (kind, r.kind[i]) {
            (MarkerType::TsData, _) => MarkKind::Data(r.value_at(i)),
            (MarkerType::ZoneTotal, _) | (_, RecordKind::Sum) => MarkKind::Sum {
                total_cycles: r.value_at(i),
                count: r.count_at(i),
            },
            _ => MarkKind::Event,
        };
        Mark {
            lane: index as u32,
            site: self.label_of(index, run, r.site[i]),
            kind,
            run,
            op: self.op_of(ring.id.chip, run),
            cycles: r.end_at(i),
            ns: clock.map_or(f64::NAN, |k| k.host_ns(r.end_at(i))),
        }
    }

    /// Ring `index` without its zones and marks (for outputs that read only the records).
    pub(crate) fn ring_records(&self, index: usize) -> RingView<'_> {
        self.view(index, &self.readout.rings[index], false)
    }

    /// Every ring in readout order.
    pub fn rings(&self) -> impl Iterator<Item = RingView<'_>> {
        (0..self.ring_count()).map(|i| self.ring(i))
    }

    /// Ops from the op log (and runs it does not name), with their device spans.
    fn add_ops(&mut self) {
        let mut dev = self.device_ops.by_run.clone();
        let span = |s: &Option<device::TimeSpan>| s.map(|s| (s.start.ns, s.end.ns));
        let time = |d: &device::DeviceTimes| {
            let t = |s: &Option<device::TimeSpan>| s.map(|s| (s.start.time, s.end.time));
            widen_time(t(&d.fw), t(&d.kernel))
        };
        if let Some(log) = &self.oplog {
            for (i, e) in log.entries.iter().enumerate() {
                if let OpLogEntry::Op(op) = e {
                    self.log_index
                        .entry((op.device, op.run_id))
                        .or_insert(i as u32);
                }
            }
            for op in log.ops() {
                let d = dev.remove(&(op.device, op.run_id));
                self.ops.push(OpSpan {
                    chip: op.device,
                    run: op.run_id,
                    name: op.op_code.clone(),
                    host_ns: Some((op.host_start_ns, op.host_end_ns)),
                    log_host_ns: Some((op.host_start_ns, op.host_end_ns)),
                    kernel_ns: d.as_ref().and_then(|d| span(&d.kernel)),
                    fw_ns: d.as_ref().and_then(|d| span(&d.fw)),
                    device_time: d.as_ref().and_then(|d| time(d)),
                });
            }
            self.signposts = log
                .entries
                .iter()
                .filter_map(|e| match e {
                    OpLogEntry::Signpost(s) => Some(s.clone()),
                    _ => None,
                })
                .collect();
        }
        for ((chip, run), d) in dev {
            self.ops.push(OpSpan {
                chip,
                run,
                name: format!("run {run}"),
                host_ns: None,
                log_host_ns: None,
                kernel_ns: span(&d.kernel),
                fw_ns: span(&d.fw),
                device_time: time(&d),
            });
        }
        sort_ops(&mut self.ops);
        for (i, o) in self.ops.iter().enumerate() {
            self.op_index.entry((o.chip, o.run)).or_insert(i as u32);
        }
    }

    /// Interns each ring's distinct sites (ring by ring, in the order the records first
    /// show them), and returns the first and last host ns of the records per (chip, op)
    /// (`None`: records of no op), from the rings' passes.
    fn intern_and_span(&mut self, passes: &[RingPass]) -> OpSpans {
        let mut global: HashMap<SiteLabel, u32> = HashMap::new();
        let mut spans: OpSpans = BTreeMap::new();
        let mut skipped: BTreeMap<u32, u64> = BTreeMap::new();
        self.ring_labels.reserve_exact(passes.len());
        for (ri, pass) in passes.iter().enumerate() {
            let id = pass.id;
            let mut local: Vec<((u32, u16), u32)> = Vec::new();
            if !pass.placed {
                *skipped.entry(id.chip).or_default() += pass.records;
                self.ring_labels.push(RingLabels::default());
                continue;
            }
            for (run, site) in pass.sites() {
                let l = match self.sites.site(ri, run, site) {
                    Some(m) => SiteLabel {
                        name: m.name.clone(),
                        file: m.file.clone(),
                        line: m.line,
                        function: Some(if m.package.is_empty() {
                            m.name.clone()
                        } else {
                            m.package.clone()
                        }),
                        counter: m.counter,
                    },
                    None => SiteLabel {
                        name: unresolved_name(site),
                        file: String::new(),
                        line: 0,
                        function: None,
                        counter: None,
                    },
                };
                let label = *global.entry(l.clone()).or_insert_with(|| {
                    self.labels.push(l);
                    self.labels.len() as u32 - 1
                });
                local.push(((run, site), label));
            }
            for (run, (a, b)) in pass.runs.iter().filter_map(|f| Some((f.run, f.span()?))) {
                let at = |c| self.timebase.host_time(id.chip, id.tile, c);
                let (Some(a), Some(b)) = (at(a), at(b)) else {
                    continue;
                };
                let op = self.op_index.get(&(id.chip, run)).copied();
                let s = spans.entry((id.chip, op)).or_insert((a, b));
                *s = widen_time(Some(*s), Some((a, b))).expect("both given");
            }
            local.sort_unstable_by_key(|e| e.0);
            self.ring_labels.push(RingLabels::from_sorted(&local));
        }
        for (chip, n) in skipped {
            self.issues.push(
                Issue::error(None, format!("the timebase knows no chip {chip}: its {n} record(s) are not on the timeline"))
                    .with_count(n),
            );
        }
        spans
    }

    /// For every chip whose ops' host times (from the op log) do not match the span of its
    /// device records, places those ops at their own device times and says so.
    /// Checks the op log's host times against `spans` (first and last host ns of the
    /// records per chip and op index); a chip whose op log does not overlap its records
    /// gets its ops placed at their device times, and a warning.
    pub(crate) fn check_host_times(&mut self, spans: &OpSpans) {
        let chips: BTreeSet<u32> = self
            .ops
            .iter()
            .filter(|o| o.host_ns.is_some())
            .map(|o| o.chip)
            .collect();
        for chip in chips {
            let logged = self
                .ops
                .iter()
                .filter(|o| o.chip == chip)
                .filter_map(|o| o.host_ns);
            let Some(host) = hull(logged.map(|(a, b)| (a as f64, b as f64))) else {
                continue;
            };
            let records = spans.range((chip, None)..=(chip, Some(u32::MAX)));
            let Some(device) = hull(records.map(|(_, &(a, b))| (a.ns(), b.ns()))) else {
                continue;
            };
            if overlaps_enough(host, device) {
                continue;
            }
            let (placed, unplaced) = self.place_by_device(chip, spans);
            let shared = host.1.min(device.1) - host.0.max(device.0);
            let how = if shared < 0.0 {
                "do not overlap".to_string()
            } else {
                format!("share only {shared:.0} ns of")
            };
            let mut what = format!(
                "device {chip}: the op log's host times ({:.0}..{:.0} ns) {how} the device records' span on the timebase \
                 ({:.0}..{:.0} ns): is the op log from another run, or the clock fit wrong? {placed} op(s) are placed \
                 at their own device times instead (first FW/KERNEL start to last end)",
                host.0, host.1, device.0, device.1
            );
            if unplaced > 0 {
                what.push_str(&format!(
                    "; {unplaced} op(s) without device records are left off the timeline"
                ));
            }
            self.issues
                .push(Issue::warning(None, what).with_count(placed + unplaced));
        }
    }

    /// Replaces the host times of `chip`'s logged ops by their device span: FW and KERNEL
    /// zones, else all their records. Returns (ops placed, ops without records).
    fn place_by_device(&mut self, chip: u32, spans: &OpSpans) -> (u64, u64) {
        let (mut placed, mut unplaced) = (0, 0);
        for (i, o) in self.ops.iter_mut().enumerate() {
            if o.chip != chip || o.host_ns.is_none() {
                continue;
            }
            let own = o
                .device_time
                .or_else(|| spans.get(&(chip, Some(i as u32))).copied());
            // Whole ns around the span, exact at any size (clamped to the op log's range).
            let whole = |t: Option<i128>| t.map(|t| t.clamp(0, u64::MAX as i128) as u64);
            o.host_ns = own.and_then(|(a, b)| Some((whole(a.floor())?, whole(b.ceil())?)));
            if o.host_ns.is_some() {
                placed += 1;
            } else {
                unplaced += 1;
            }
        }
        (placed, unplaced)
    }
}

/// Ops in host start order (an op without host times at its FW start, else last): the
/// order of [`Profile::ops`].
pub(crate) fn sort_ops(ops: &mut [OpSpan]) {
    let key = |o: &OpSpan| {
        o.host_ns
            .map(|h| h.0 as f64)
            .or(o.fw_ns.map(|f| f.0))
            .unwrap_or(f64::INFINITY)
    };
    ops.sort_by(|a, b| key(a).total_cmp(&key(b)));
}

/// The smallest range holding every finite range of `spans`.
pub(crate) fn hull(spans: impl IntoIterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
    spans
        .into_iter()
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .fold(None, |acc, (a, b)| {
            Some(acc.map_or((a, b), |(lo, hi): (f64, f64)| (lo.min(a), hi.max(b))))
        })
}

/// Whether `host` and `device` share at least [`MIN_HOST_OVERLAP`] of the shorter one (a
/// range of no length must lie inside the other).
fn overlaps_enough(host: (f64, f64), device: (f64, f64)) -> bool {
    let shared = host.1.min(device.1) - host.0.max(device.0);
    let shorter = (host.1 - host.0).min(device.1 - device.0);
    if shorter <= 0.0 {
        shared >= 0.0
    } else {
        shared >= MIN_HOST_OVERLAP * shorter
    }
}

/// One ring's labels: (run, site) to an index into [`Profile::labels`].
///
/// Consecutive run ids whose sites have the same labels are one span: a device log's ops
/// all run one kernel table, where one entry per (run, site) held 8 KB an op of 64 tiles
/// (issue 41). One slice, not a map or two slices: one ring in 300,000 with one site took
/// 124 bytes as a hash map; this takes 40. Laid out as `[spans, (first run, last run,
/// start) per span, (site, label) per site of each span]`, a span's sites sorted, `start`
/// indexing the (site, label) pairs.
#[derive(Clone, Debug, Default)]
pub(crate) struct RingLabels(Box<[u32]>);

impl RingLabels {
    /// The labels of `entries`, sorted by (run, site), each once.
    pub(crate) fn from_sorted(entries: &[((u32, u16), u32)]) -> RingLabels {
        // Each run's (site, label) list, and the spans of runs with equal lists.
        let mut spans: Vec<[u32; 3]> = Vec::new();
        let mut sites: Vec<u32> = Vec::new();
        let mut at = 0;
        while at < entries.len() {
            let run = entries[at].0 .0;
            let n = entries[at..].iter().take_while(|e| e.0 .0 == run).count();
            let list = &entries[at..at + n];
            at += n;
            if let Some(last) = spans.last_mut() {
                let start = 2 * last[2] as usize;
                let same = last[1].checked_add(1) == Some(run)
                    && sites.len() - start == 2 * n
                    && list
                        .iter()
                        .zip(sites[start..].chunks(2))
                        .all(|(e, s)| s == [e.0 .1 as u32, e.1]);
                if same {
                    last[1] = run;
                    continue;
                }
            }
            spans.push([run, run, (sites.len() / 2) as u32]);
            sites.extend(list.iter().flat_map(|e| [e.0 .1 as u32, e.1]));
        }
        let mut all = Vec::with_capacity(1 + 3 * spans.len() + sites.len());
        all.push(spans.len() as u32);
        all.extend(spans.iter().flatten());
        all.extend(sites);
        RingLabels(all.into_boxed_slice())
    }

    /// The label of site `site` of run `run`, if the ring has a record of it.
    pub(crate) fn get(&self, run: u32, site: u16) -> Option<u32> {
        let n = *self.0.first()? as usize;
        let (spans, sites) = self.0[1..].split_at(3 * n);
        let spans: &[[u32; 3]] = bytemuck::cast_slice(spans);
        let sites: &[[u32; 2]] = bytemuck::cast_slice(sites);
        // The first span that ends at or after `run` (spans are sorted and disjoint).
        let i = spans.partition_point(|s| s[1] < run);
        let span = spans.get(i).filter(|s| s[0] <= run)?;
        let to = spans
            .get(i + 1)
            .map_or(sites.len(), |next| next[2] as usize);
        let pairs = &sites[span[2] as usize..to];
        let k = pairs.binary_search_by_key(&(site as u32), |p| p[0]).ok()?;
        Some(pairs[k][1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;

    /// Views built ring by ring hold exactly what the whole timeline holds, and the record
    /// spans the model computes in its one pass match the zones and marks of the views.
    /// The profile finds an op's record as the op log's own search does: the first of its
    /// (chip, run), with a signpost between entries and a run id logged twice.
    #[test]
    fn an_ops_record_is_the_op_logs_first_of_its_run() {
        let mut log = fixture::oplog();
        let OpLogEntry::Op(mut again) = log.entries[0].clone() else {
            panic!("the fixture's op log starts with an op")
        };
        again.op_code = "again".into();
        log.entries.push(OpLogEntry::Op(again));
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let p = Profile::resolved(
            r,
            res,
            Some(log.clone()),
            Timebase::nominal(fixture::ARCH, 1),
        );
        let mut asked = 0;
        for chip in 0..2 {
            for run in 0..6 {
                assert_eq!(
                    p.op_record(chip, run),
                    log.op(chip, run),
                    "chip {chip} run {run}"
                );
                asked += usize::from(log.op(chip, run).is_some());
            }
        }
        assert_eq!(asked, fixture::OPS.len());
        assert_ne!(p.op_record(0, fixture::OPS[0].0).unwrap().op_code, "again");
    }

    /// A ring's labels answer every (run, site) as the entries they were made of, and no
    /// other; consecutive runs with the same labels share a span.
    #[test]
    fn ring_labels_answer_each_run_and_site_as_given() {
        // Runs 1..=50 label sites 3 and 9 alike, run 51 one site more, 52..=60 as 1..=50,
        // run 62 (61 skipped) likewise, 70 its own labels.
        let mut want: BTreeMap<(u32, u16), u32> = BTreeMap::new();
        for run in (1..=60).chain([62]) {
            want.insert((run, 3), 7);
            want.insert((run, 9), 8);
        }
        want.insert((51, 5), 2);
        want.insert((70, 3), 1);
        let entries: Vec<((u32, u16), u32)> = want.iter().map(|(&k, &v)| (k, v)).collect();
        let l = RingLabels::from_sorted(&entries);
        for run in 0..80 {
            for site in 0..12 {
                assert_eq!(
                    l.get(run, site),
                    want.get(&(run, site)).copied(),
                    "run {run} site {site}"
                );
            }
        }
        // Spans: 1..=50, 51, 52..=60, 62, 70.
        assert_eq!(l.0[0], 5, "{:?}", l.0);
        assert_eq!(RingLabels::default().get(1, 3), None);
        assert_eq!(RingLabels::from_sorted(&[]).get(0, 0), None);
    }

    #[test]
    fn ring_views_add_up_to_the_timeline() {
        let p = fixture::profile_at(0, fixture::ARCH, true);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let (mut zones, mut marks) = (0, 0);
        for v in p.rings() {
            assert!(v.placed);
            assert!(v
                .zones
                .iter()
                .all(|z| z.lane as usize == v.index && (z.site as usize) < p.labels.len()));
            assert!(
                (1..v.zones.len()).all(|i| v.zones.start_cycles(i - 1) <= v.zones.start_cycles(i)),
                "opening order"
            );
            zones += v.zones.len();
            marks += v.marks.len();
        }
        assert_eq!((zones, marks), (120, 90));
        assert_eq!(p.labels.len(), 11, "one label per distinct site");
        assert_eq!(unresolved_name(7), "unresolved-site-7");
    }
}
