//! Every ring of a [`Profile`] collected on the host timeline: for the outputs that draw or
//! rank the whole run at once (the HTML timeline) and for tests.
//!
//! One [`Lane`] per ring (chip, tile, RISC). Each lane's [`Zone`]s are listed in the order
//! they open ([`crate::markers`]), with their nesting depth and raw cycles, whose host ns are
//! the lane's tile clock's reading of them (from the [`Timebase`]:
//! [`crate::profile::RingView::zone_ns`]); events, data and sum totals are [`Mark`]s; ops are
//! the profile's ([`OpSpan`]: op log host times joined with the wrapper zones' device
//! spans). Zone names and source locations are interned once per distinct site
//! ([`SiteLabel`]). The types are the model's: a [`crate::profile::RingView`] holds one lane's
//! zones and marks.

use crate::issue::Issue;
use crate::oplog::{OpLog, Signpost};
use crate::profile::{Profile, RingView};
use crate::readout::Readout;
use crate::resolve::Resolution;
use crate::timebase::{HostTime, TileClock, Timebase};
use riscv_linker::{Arch, NocCoord, Risc};

/// One ring's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    /// Chip (device) index.
    pub chip: u32,
    /// The tile, NoC0 coordinates.
    pub tile: NocCoord,
    /// The core whose ring this is.
    pub risc: Risc,
    /// Nesting levels used (deepest zone depth + 1; 0 without zones).
    pub depth: u16,
}

impl Lane {
    /// `(1,2) [x=2 y=3] TRISC_1`: the tile's logical worker coordinate when it has one,
    /// its NoC0 coordinate, the RISC.
    pub fn name(&self, arch: Arch) -> String {
        match arch.worker_logical(self.tile) {
            Some((c, r)) => format!(
                "({c},{r}) [x={} y={}] {}",
                self.tile.x,
                self.tile.y,
                self.risc.name()
            ),
            None => format!("[x={} y={}] {}", self.tile.x, self.tile.y, self.risc.name()),
        }
    }
}

/// A distinct site: name and source location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SiteLabel {
    /// The zone's name, or `unresolved-site-<id>` when the site has no metadata.
    pub name: String,
    /// Source file; empty for an unresolved site.
    pub file: String,
    /// 1-based source line; 0 for an unresolved site.
    pub line: u32,
    /// The kernel crate (package) the site is in, or the zone name when unknown (Tracy's
    /// "function"); `None` for an unresolved site.
    pub function: Option<String>,
    /// For a counted zone (`counted_zone!`): the performance counter bank its value
    /// counts, one of [`crate::sites::COUNTED_BANKS`].
    pub counter: Option<&'static str>,
}

/// A zone on the host timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    /// Index into [`Timeline::lanes`] (= the ring's index in the readout).
    pub lane: u32,
    /// Index into [`Timeline::sites`]: the zone's name and source location.
    pub site: u32,
    /// 0 for an outermost zone.
    pub depth: u16,
    /// Run id, or [`crate::decode::NO_RUN`].
    pub run: u32,
    /// Index into [`Timeline::ops`] of the op of its run (`None`: no op for the run).
    pub op: Option<u32>,
    /// Start, the tile's device cycles.
    pub start_cycles: u64,
    /// End, the tile's device cycles (`>= start_cycles`).
    pub end_cycles: u64,
    /// A value zone's value (`value_zone!`), `None` for a plain zone.
    pub value: Option<u32>,
}

impl Zone {
    /// Duration in device cycles.
    pub fn cycles(&self) -> u64 {
        self.end_cycles - self.start_cycles
    }

    /// Start on the host timeline, ns, by its tile's `clock` (NaN without one). A zone
    /// keeps cycles only: its host times are its tile clock's reading of them (the same
    /// `f64` the model computed when it kept them, 16 bytes a zone: issue 41).
    pub(crate) fn start_ns(&self, clock: Option<&TileClock>) -> f64 {
        clock.map_or(f64::NAN, |c| c.host_ns(self.start_cycles))
    }

    /// End on the host timeline, ns ([`Zone::start_ns`]).
    pub(crate) fn end_ns(&self, clock: Option<&TileClock>) -> f64 {
        clock.map_or(f64::NAN, |c| c.host_ns(self.end_cycles))
    }
}

/// What a point record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// A point event.
    Event,
    /// Timestamped data: the 64-bit payload.
    Data(u64),
    /// A sum zone's total cycles over `count` measurements.
    Sum {
        /// Device cycles summed over every measurement.
        total_cycles: u64,
        /// Number of measurements.
        count: u32,
    },
}

/// An event, data or sum record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    /// Index into [`Timeline::lanes`].
    pub lane: u32,
    /// Index into [`Timeline::sites`].
    pub site: u32,
    /// What the record says.
    pub kind: MarkKind,
    /// Run id, or [`crate::decode::NO_RUN`].
    pub run: u32,
    /// Index into [`Timeline::ops`] of the op of its run (`None`: no op for the run).
    pub op: Option<u32>,
    /// When, the tile's device cycles.
    pub cycles: u64,
    /// When, on the host timeline, ns.
    pub ns: f64,
}

/// An op: host times from the op log, device spans from its wrapper zones.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSpan {
    /// Chip (device) index.
    pub chip: u32,
    /// Run id of the launch.
    pub run: u32,
    /// The op code, or `run <id>` for a run the op log does not name.
    pub name: String,
    /// Where the op sits on the host timeline: its launch and completion from the op log;
    /// or, when the op log's host times do not match the device records (an issue says so),
    /// its own device span (FW and KERNEL zones, else all its records), whole ns. `None` for
    /// a run the op log does not name, or an op placed by device times that has no records.
    pub host_ns: Option<(u64, u64)>,
    /// The op log's host times as written (equal to `host_ns` unless that was replaced).
    pub(crate) log_host_ns: Option<(u64, u64)>,
    /// First KERNEL start to last KERNEL end, host ns (`None`: no KERNEL zone recorded).
    pub kernel_ns: Option<(f64, f64)>,
    /// First FW start to last FW end, host ns (`None`: no FW zone recorded).
    pub(crate) fw_ns: Option<(f64, f64)>,
    /// The FW and KERNEL zones' span on the host timeline to well under a ns (`fw_ns` and
    /// `kernel_ns` are `f64`: a ns or more off past 2^53 ns), for placing the op by it.
    pub(crate) device_time: Option<(HostTime, HostTime)>,
}

/// Everything the timeline outputs draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The chip architecture (for lane names).
    pub arch: Arch,
    /// One per ring, in readout order.
    pub lanes: Vec<Lane>,
    /// Distinct zone names and source locations; [`Zone::site`] and [`Mark::site`] index it.
    pub sites: Vec<SiteLabel>,
    /// Lane by lane; within a lane, in opening order.
    pub zones: Vec<Zone>,
    /// Lane by lane; within a lane, in time order.
    pub marks: Vec<Mark>,
    /// In host (or device) start order.
    pub ops: Vec<OpSpan>,
    /// The op log's signposts.
    pub signposts: Vec<Signpost>,
    /// Problems found placing records on the timeline (the profile's model issues).
    pub issues: Vec<Issue>,
    /// Earliest and latest host ns of zones and marks dropped from the lists (an output that
    /// keeps only what it can show): [`Timeline::bounds_ns`] still covers them.
    pub(crate) dropped_span: Option<(f64, f64)>,
    /// The run's clocks: the lanes' zones' host times ([`Timeline::clock`]).
    pub(crate) timebase: Timebase,
}

impl OpSpan {
    /// Where the device ran the op: its FW and KERNEL zones' span, host ns (`None`: no
    /// wrapper zone recorded).
    pub(crate) fn device_span(&self) -> Option<(f64, f64)> {
        crate::profile::hull(self.fw_ns.into_iter().chain(self.kernel_ns))
    }
}

/// The smallest span holding both (`None` when neither is given), to the last bit of each
/// time ([`HostTime::before`]).
pub(crate) fn widen_time(
    a: Option<(HostTime, HostTime)>,
    b: Option<(HostTime, HostTime)>,
) -> Option<(HostTime, HostTime)> {
    match (a, b) {
        (Some((s, e)), Some((s2, e2))) => Some((
            if s2.before(s) { s2 } else { s },
            if e.before(e2) { e2 } else { e },
        )),
        (x, None) | (None, x) => x,
    }
}

impl Timeline {
    /// Places every record of `readout` on the host timeline (builds the [`Profile`] of a
    /// copy of them: for tests and small readouts; outputs visit a profile ring by ring).
    pub fn build(
        readout: &Readout,
        sites: &Resolution,
        oplog: Option<&OpLog>,
        timebase: &Timebase,
    ) -> Timeline {
        let p = Profile::resolved(
            readout.clone(),
            sites.clone(),
            oplog.cloned(),
            timebase.clone(),
        );
        Timeline::of(&p)
    }

    /// Every ring of `p`, collected.
    pub fn of(p: &Profile) -> Timeline {
        let mut t = Timeline::begin(p);
        for view in p.rings() {
            t.push_ring(view);
        }
        t
    }

    /// A timeline with `p`'s ops, labels, signposts and model issues, and no lanes yet.
    pub fn begin(p: &Profile) -> Timeline {
        Timeline {
            arch: p.geometry().arch,
            lanes: Vec::with_capacity(p.ring_count()),
            sites: p.labels.clone(),
            zones: Vec::new(),
            marks: Vec::new(),
            ops: p.ops.clone(),
            signposts: p.signposts.clone(),
            issues: p.issues.clone(),
            dropped_span: None,
            timebase: p.timebase.clone(),
        }
    }

    /// Lane `lane`'s tile clock (`None` for a lane off the timebase, or past the lanes).
    pub(crate) fn clock(&self, lane: u32) -> Option<TileClock<'_>> {
        let l = self.lanes.get(lane as usize)?;
        self.timebase.tile_clock(l.chip, l.tile)
    }

    /// Every lane's tile clock, by lane ([`Timeline::clock`]), for a pass over the zones.
    pub(crate) fn lane_clocks(&self) -> Vec<Option<TileClock<'_>>> {
        (0..self.lanes.len() as u32)
            .map(|l| self.clock(l))
            .collect()
    }

    /// Appends one ring (rings must come in readout order: lane `i` is ring `i`).
    pub(crate) fn push_ring(&mut self, view: RingView) {
        debug_assert_eq!(view.index, self.lanes.len());
        self.lanes.push(view.lane);
        self.zones.extend(view.zones.iter());
        self.marks.extend(view.marks);
    }

    /// The zones of lane `lane` (a contiguous slice).
    pub(crate) fn lane_zones(&self, lane: u32) -> &[Zone] {
        let from = self.zones.partition_point(|z| z.lane < lane);
        let to = self.zones.partition_point(|z| z.lane <= lane);
        &self.zones[from..to]
    }

    /// Earliest and latest host ns of anything on the timeline (`None` when empty).
    pub(crate) fn bounds_ns(&self) -> Option<(f64, f64)> {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut see = |a: f64, b: f64| {
            if a.is_finite() && b.is_finite() {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        };
        let clocks = self.lane_clocks();
        for z in &self.zones {
            let c = clocks.get(z.lane as usize).and_then(Option::as_ref);
            see(z.start_ns(c), z.end_ns(c));
        }
        for m in &self.marks {
            see(m.ns, m.ns);
        }
        for o in &self.ops {
            if let Some((a, b)) = o.kernel_ns {
                see(a, b);
            }
            if let Some((a, b)) = o.host_ns {
                see(a as f64, b as f64);
            }
        }
        if let Some((a, b)) = self.dropped_span {
            see(a, b);
        }
        (lo <= hi).then_some((lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::{self, times, TILES};

    use fixture::timeline;

    /// A zone is 48 bytes (64 while it kept its host times as two `f64`s): the model holds
    /// one per zone of the ring it is on (issue 41).
    #[test]
    fn a_zone_is_48_bytes() {
        assert_eq!(std::mem::size_of::<Zone>(), 48);
    }

    #[test]
    fn zones_nest_by_depth_and_carry_cycles_host_times_and_ops() {
        let t = timeline();
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        assert_eq!(t.lanes.len(), 10);
        assert_eq!(t.zones.len(), 120);
        assert_eq!(t.marks.len(), 90);
        let lane = t
            .lanes
            .iter()
            .position(|l| l.tile == TILES[1] && l.risc == Risc::Trisc1)
            .unwrap() as u32;
        assert_eq!(
            t.lanes[lane as usize].depth, 4,
            "FW > KERNEL > work > inner"
        );
        assert_eq!(
            t.lanes[lane as usize].name(fixture::ARCH),
            "(1,0) [x=2 y=1] TRISC_1"
        );
        let zones = t.lane_zones(lane);
        let names: Vec<(&str, u16)> = zones[..4]
            .iter()
            .map(|z| (t.sites[z.site as usize].name.as_str(), z.depth))
            .collect();
        assert_eq!(
            names,
            [
                ("TRISC-FW", 0),
                ("TRISC-KERNEL", 1),
                ("work", 2),
                ("inner", 3)
            ]
        );
        let x = times(2, 1, Risc::Trisc1);
        let work = zones
            .iter()
            .find(|z| z.run == 2 && t.sites[z.site as usize].name == "work")
            .unwrap();
        assert_eq!((work.start_cycles, work.end_cycles), x.work);
        let c = t.clock(work.lane);
        assert_eq!(
            (work.start_ns(c.as_ref()), work.end_ns(c.as_ref())),
            (x.work.0 as f64, x.work.1 as f64),
            "nominal 1 GHz, cycle 0 at 0 ns"
        );
        let op = &t.ops[work.op.unwrap() as usize];
        assert_eq!(
            (op.name.as_str(), op.run, op.host_ns),
            ("Matmul", 2, Some((1_950_000, 2_300_000)))
        );
        let k = (
            times(2, 0, Risc::Brisc).kernel.0 as f64,
            times(2, 1, Risc::Trisc2).kernel.1 as f64,
        );
        assert_eq!(op.kernel_ns, Some(k));
        assert_eq!(t.sites[work.site as usize].file, "src/kernel.rs");
        assert_eq!(t.signposts.len(), 1);
        let sum = t
            .marks
            .iter()
            .find(|m| matches!(m.kind, MarkKind::Sum { .. }))
            .unwrap();
        assert_eq!(
            sum.kind,
            MarkKind::Sum {
                total_cycles: 30,
                count: 3
            }
        );
        assert_eq!(t.sites.len(), 11, "one label per distinct site");
    }

    /// Run `run`'s first FW start (tile 0's BRISC) and last FW end (tile 1's TRISC2), cycles.
    fn fw_span(run: u32) -> (u64, u64) {
        (
            times(run, 0, Risc::Brisc).fw.0,
            times(run, 1, Risc::Trisc2).fw.1,
        )
    }

    /// The fixture's timeline with every op's host times moved by `shift_ns`.
    fn shifted(shift_ns: u64) -> Timeline {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let mut log = fixture::oplog();
        for e in &mut log.entries {
            if let crate::oplog::OpLogEntry::Op(o) = e {
                o.host_start_ns += shift_ns;
                o.host_end_ns += shift_ns;
            }
        }
        Timeline::build(&r, &res, Some(&log), &Timebase::nominal(fixture::ARCH, 1))
    }

    #[test]
    fn an_op_log_off_the_device_span_is_reported_and_its_ops_placed_by_device_times() {
        // The device records span run 1's first FW start to run 3's last FW end.
        let first = times(1, 0, Risc::Brisc).fw.0;
        let last = times(3, 1, Risc::Trisc2).fw.1;
        // Host times bracket the device times: used as they are, nothing to say.
        let t = timeline();
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        assert!(t.ops.iter().all(|o| o.host_ns == o.log_host_ns));
        // An op log 10 s later (another run's): a warning naming both ranges, and each op at
        // its own device span.
        let t = shifted(10_000_000_000);
        let [issue] = &t.issues[..] else {
            panic!("{:?}", t.issues)
        };
        assert_eq!(
            (issue.severity, issue.count),
            (crate::issue::Severity::Warning, 3)
        );
        assert!(
            issue
                .what
                .contains("the op log's host times (10000950000..10003300000 ns) do not overlap"),
            "{}",
            issue.what
        );
        assert!(
            issue.what.contains(&format!(
                "device records' span on the timebase ({first}..{last} ns)"
            )),
            "{}",
            issue.what
        );
        assert!(
            issue
                .what
                .contains("3 op(s) are placed at their own device times"),
            "{}",
            issue.what
        );
        for (run, _) in fixture::OPS {
            let op = t.ops.iter().find(|o| o.run == run).unwrap();
            let fw = fw_span(run);
            assert_eq!(
                op.host_ns,
                Some(fw),
                "run {run}: first FW start to last FW end"
            );
            let logged = fixture::op(run, "").host_start_ns + 10_000_000_000;
            assert_eq!(
                op.log_host_ns.map(|h| h.0),
                Some(logged),
                "the op log's times are kept"
            );
        }
        let (lo, hi) = t.bounds_ns().unwrap();
        assert_eq!(
            (lo, hi),
            (first as f64, last as f64),
            "the timeline spans the device records only"
        );
        // Barely overlapping (about 6% of the device span shared) counts as not matching.
        let t = shifted(2_000_000);
        let shared = format!(
            "(2950000..5300000 ns) share only {} ns of",
            last - 2_950_000
        );
        assert!(
            t.issues
                .iter()
                .any(|i| i.what.contains(&shared)
                    && i.what.contains("placed at their own device times")),
            "{:?}",
            t.issues
        );
        // Mostly overlapping is trusted.
        assert!(shifted(500_000).issues.is_empty());
    }

    /// Issue 41: an op placed by its own device times is placed to the ns at any size. The
    /// chip's clock reads cycle 0 at 2^60 ns (whole ns: an `f64` there steps by 256), the
    /// op log's times are nowhere near: each op's host times are its first FW start and last
    /// FW end exactly (through `f64` they were rounded to a multiple of 256 ns).
    #[test]
    fn an_op_placed_by_device_times_far_from_zero_is_placed_to_the_ns() {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let mut tb = Timebase::nominal(fixture::ARCH, 1);
        let base = 1u64 << 60;
        tb.chips.get_mut(&0).unwrap().reference_ns = base as f64;
        let t = Timeline::build(&r, &res, Some(&fixture::oplog()), &tb);
        assert!(
            t.issues
                .iter()
                .any(|i| i.what.contains("placed at their own device times")),
            "{:?}",
            t.issues
        );
        for (run, _) in fixture::OPS {
            let op = t.ops.iter().find(|o| o.run == run).unwrap();
            let fw = fw_span(run);
            assert_eq!(op.host_ns, Some((base + fw.0, base + fw.1)), "run {run}");
        }
    }

    #[test]
    fn runs_missing_from_the_op_log_still_get_an_op_and_unknown_chips_are_reported() {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let t = Timeline::build(&r, &res, None, &Timebase::nominal(fixture::ARCH, 1));
        let names: Vec<&str> = t.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["run 1", "run 2", "run 3"]);
        assert!(t.zones.iter().all(|z| z.op.is_some()));
        let none = Timeline::build(&r, &res, None, &Timebase::nominal(fixture::ARCH, 0));
        assert!(none.zones.is_empty());
        assert!(
            none.issues
                .iter()
                .any(|i| i.what.contains("knows no chip 0: its 240 record(s)")),
            "{:?}",
            none.issues
        );
    }
}
