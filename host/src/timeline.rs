//! Device records placed on the host timeline, flattened for the timeline outputs (trace
//! JSON, the HTML timeline) and the terminal summary.
//!
//! One [`Lane`] per ring (chip, tile, RISC). Each lane's [`Zone`]s are listed in the order
//! they open ([`crate::markers`]), with their nesting depth, raw cycles and host ns from the
//! [`Timebase`]; events, data and sum totals are [`Mark`]s. Ops come from the op log (host
//! times) joined with their device span from the wrapper zones ([`crate::report::device`]).
//! Zone names and source locations are interned once per distinct site ([`SiteLabel`]).
//!
//! An op log whose host times do not match the device records (they share less than half
//! of the shorter range: the op log of another run, or another clock) would squeeze the
//! records into a sliver of the timeline: then each op of that chip is placed at its own
//! device times instead, and a warning names both ranges.

use crate::decode::RecordKind;
use crate::issue::Issue;
use crate::markers::{markers, MarkerType};
use crate::oplog::{OpLog, Signpost};
use crate::readout::Readout;
use crate::report::device;
use crate::resolve::Resolution;
use crate::timebase::Timebase;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How much of the shorter of (the op log's host time range, the device records' span) the
/// two must share for the op log's host times to place the ops.
const MIN_HOST_OVERLAP: f64 = 0.5;

/// One ring's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    pub chip: u32,
    pub tile: NocCoord,
    pub risc: Risc,
    /// Nesting levels used (deepest zone depth + 1; 0 without zones).
    pub depth: u16,
}

impl Lane {
    /// `(1,2) [x=2 y=3] TRISC_1`: the tile's logical worker coordinate when it has one,
    /// its NoC0 coordinate, the RISC.
    pub fn name(&self, arch: Arch) -> String {
        match arch.worker_logical(self.tile) {
            Some((c, r)) => format!("({c},{r}) [x={} y={}] {}", self.tile.x, self.tile.y, self.risc.name()),
            None => format!("[x={} y={}] {}", self.tile.x, self.tile.y, self.risc.name()),
        }
    }
}

/// A distinct site: name and source location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SiteLabel {
    pub name: String,
    /// Empty for an unresolved site.
    pub file: String,
    pub line: u32,
}

/// A zone on the host timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    pub lane: u32,
    pub site: u32,
    /// 0 for an outermost zone.
    pub depth: u16,
    /// Run id, or [`crate::decode::NO_RUN`].
    pub run: u32,
    /// Index into [`Timeline::ops`].
    pub op: Option<u32>,
    pub start_cycles: u64,
    pub end_cycles: u64,
    pub start_ns: f64,
    pub end_ns: f64,
}

impl Zone {
    pub fn cycles(&self) -> u64 {
        self.end_cycles - self.start_cycles
    }

    pub fn duration_ns(&self) -> f64 {
        self.end_ns - self.start_ns
    }
}

/// What a point record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    Event,
    Data(u64),
    /// A sum zone's total cycles over `count` measurements.
    Sum {
        total_cycles: u64,
        count: u32,
    },
}

/// An event, data or sum record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    pub lane: u32,
    pub site: u32,
    pub kind: MarkKind,
    pub run: u32,
    pub op: Option<u32>,
    pub cycles: u64,
    pub ns: f64,
}

/// An op: host times from the op log, device spans from its wrapper zones.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSpan {
    pub chip: u32,
    pub run: u32,
    /// The op code, or `run <id>` for a run the op log does not name.
    pub name: String,
    /// Where the op sits on the host timeline: its launch and completion from the op log;
    /// or, when the op log's host times do not match the device records (an issue says so),
    /// its own device span (FW and KERNEL zones, else all its records), whole ns. `None` for
    /// a run the op log does not name, or an op placed by device times that has no records.
    pub host_ns: Option<(u64, u64)>,
    /// The op log's host times as written (equal to `host_ns` unless that was replaced).
    pub log_host_ns: Option<(u64, u64)>,
    /// First KERNEL start to last KERNEL end, and the same for FW zones.
    pub kernel_ns: Option<(f64, f64)>,
    pub fw_ns: Option<(f64, f64)>,
}

/// Everything the timeline outputs draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub arch: Arch,
    pub lanes: Vec<Lane>,
    pub sites: Vec<SiteLabel>,
    /// Lane by lane; within a lane, in opening order.
    pub zones: Vec<Zone>,
    pub marks: Vec<Mark>,
    /// In host (or device) start order.
    pub ops: Vec<OpSpan>,
    pub signposts: Vec<Signpost>,
    pub issues: Vec<Issue>,
}

impl Timeline {
    /// Places every record of `readout` on the host timeline.
    pub fn build(readout: &Readout, sites: &Resolution, oplog: Option<&OpLog>, timebase: &Timebase) -> Timeline {
        let mut t = Timeline {
            arch: readout.geometry.arch,
            lanes: Vec::with_capacity(readout.rings.len()),
            sites: Vec::new(),
            zones: Vec::with_capacity(readout.zones()),
            marks: Vec::new(),
            ops: Vec::new(),
            signposts: Vec::new(),
            issues: Vec::new(),
        };
        let op_index = t.add_ops(readout, sites, oplog, timebase);
        let mut labels: HashMap<SiteLabel, u32> = HashMap::new();
        let mut skipped: BTreeMap<u32, u64> = BTreeMap::new();
        for (ri, ring) in readout.rings.iter().enumerate() {
            let id = ring.id;
            let lane = t.lanes.len() as u32;
            let mut depth_used = 0u16;
            let r = &ring.records;
            if timebase.host_ns(id.chip, id.tile, 0).is_none() {
                *skipped.entry(id.chip).or_default() += r.len() as u64;
                t.lanes.push(Lane { chip: id.chip, tile: id.tile, risc: id.risc, depth: 0 });
                continue;
            }
            let ns = |c: u64| timebase.host_ns(id.chip, id.tile, c).unwrap_or(f64::NAN);
            // (run, site) -> label index: one metadata lookup per distinct site of the ring.
            let mut local: HashMap<(u32, u16), u32> = HashMap::new();
            let mut label = |run: u32, site: u16, t: &mut Timeline| {
                *local.entry((run, site)).or_insert_with(|| {
                    let l = match sites.site(ri, run, site) {
                        Some(m) => SiteLabel { name: m.name.clone(), file: m.file.clone(), line: m.line },
                        None => SiteLabel { name: format!("unresolved-site-{site}"), file: String::new(), line: 0 },
                    };
                    *labels.entry(l.clone()).or_insert_with(|| {
                        t.sites.push(l);
                        t.sites.len() as u32 - 1
                    })
                })
            };
            let mut depth = 0u16;
            for m in markers(r) {
                let i = m.record as usize;
                let (run, site) = (r.run[i], r.site[i]);
                let op = op_index.get(&(id.chip, run)).copied();
                match m.kind {
                    MarkerType::ZoneStart => {
                        let site = label(run, site, &mut t);
                        t.zones.push(Zone {
                            lane,
                            site,
                            depth,
                            run,
                            op,
                            start_cycles: r.start[i],
                            end_cycles: r.end[i],
                            start_ns: ns(r.start[i]),
                            end_ns: ns(r.end[i]),
                        });
                        depth += 1;
                        depth_used = depth_used.max(depth);
                    }
                    MarkerType::ZoneEnd => depth = depth.saturating_sub(1),
                    kind => {
                        let kind = match (kind, r.kind[i]) {
                            (MarkerType::TsData, _) => MarkKind::Data(r.value[i]),
                            (MarkerType::ZoneTotal, _) | (_, RecordKind::Sum) => {
                                MarkKind::Sum { total_cycles: r.value[i], count: r.count[i] }
                            }
                            _ => MarkKind::Event,
                        };
                        let site = label(run, site, &mut t);
                        t.marks.push(Mark { lane, site, kind, run, op, cycles: r.end[i], ns: ns(r.end[i]) });
                    }
                }
            }
            t.lanes.push(Lane { chip: id.chip, tile: id.tile, risc: id.risc, depth: depth_used });
        }
        for (chip, n) in skipped {
            t.issues.push(
                Issue::error(
                    None,
                    format!("the timebase knows no chip {chip}: its {n} record(s) are not on the timeline"),
                )
                .with_count(n),
            );
        }
        t.check_host_times();
        t
    }

    /// For every chip whose ops' host times (from the op log) do not match the span of its
    /// device records, places those ops at their own device times and says so.
    fn check_host_times(&mut self) {
        let chips: BTreeSet<u32> = self.ops.iter().filter(|o| o.host_ns.is_some()).map(|o| o.chip).collect();
        for chip in chips {
            let logged = self.ops.iter().filter(|o| o.chip == chip).filter_map(|o| o.host_ns);
            let Some(host) = hull(logged.map(|(a, b)| (a as f64, b as f64))) else { continue };
            let Some(device) = hull(self.record_spans(chip).into_values()) else { continue };
            if overlaps_enough(host, device) {
                continue;
            }
            let (placed, unplaced) = self.place_by_device(chip);
            let shared = host.1.min(device.1) - host.0.max(device.0);
            let how = if shared < 0.0 { "do not overlap".to_string() } else { format!("share only {shared:.0} ns of") };
            let mut what = format!(
                "device {chip}: the op log's host times ({:.0}..{:.0} ns) {how} the device records' span on the timebase \
                 ({:.0}..{:.0} ns): is the op log from another run, or the clock fit wrong? {placed} op(s) are placed \
                 at their own device times instead (first FW/KERNEL start to last end)",
                host.0, host.1, device.0, device.1
            );
            if unplaced > 0 {
                what.push_str(&format!("; {unplaced} op(s) without device records are left off the timeline"));
            }
            self.issues.push(Issue::warning(None, what).with_count(placed + unplaced));
        }
    }

    /// First and last host ns of the records on `chip`'s lanes, per op (index into `ops`;
    /// `None` for records of no op).
    fn record_spans(&self, chip: u32) -> BTreeMap<Option<u32>, (f64, f64)> {
        let mut spans = BTreeMap::new();
        let on_chip = |lane: u32| self.lanes.get(lane as usize).is_some_and(|l| l.chip == chip);
        let zones = self.zones.iter().filter(|z| on_chip(z.lane)).map(|z| (z.op, z.start_ns, z.end_ns));
        let marks = self.marks.iter().filter(|m| on_chip(m.lane)).map(|m| (m.op, m.ns, m.ns));
        for (op, a, b) in zones.chain(marks) {
            if a.is_finite() && b.is_finite() {
                let s = spans.entry(op).or_insert((a, b));
                *s = (s.0.min(a), s.1.max(b));
            }
        }
        spans
    }

    /// Replaces the host times of `chip`'s logged ops by their device span: FW and KERNEL
    /// zones, else all their records. Returns (ops placed, ops without records).
    fn place_by_device(&mut self, chip: u32) -> (u64, u64) {
        let records = self.record_spans(chip);
        let (mut placed, mut unplaced) = (0, 0);
        for (i, o) in self.ops.iter_mut().enumerate() {
            if o.chip != chip || o.host_ns.is_none() {
                continue;
            }
            let own = hull(o.fw_ns.into_iter().chain(o.kernel_ns)).or_else(|| records.get(&Some(i as u32)).copied());
            o.host_ns = own.map(|(a, b)| (a.max(0.0).floor() as u64, b.max(0.0).ceil() as u64));
            if o.host_ns.is_some() {
                placed += 1;
            } else {
                unplaced += 1;
            }
        }
        (placed, unplaced)
    }

    /// Ops from the op log (and runs it does not name), with their device spans; returns
    /// (chip, run) -> op index.
    fn add_ops(
        &mut self,
        readout: &Readout,
        sites: &Resolution,
        oplog: Option<&OpLog>,
        timebase: &Timebase,
    ) -> HashMap<(u32, u32), u32> {
        let mut dev = device::collect(readout, sites, timebase);
        let span = |s: &Option<device::Span>| s.map(|s| (s.start.ns, s.end.ns));
        if let Some(log) = oplog {
            for op in log.ops() {
                let d = dev.by_run.remove(&(op.device, op.run_id));
                self.ops.push(OpSpan {
                    chip: op.device,
                    run: op.run_id,
                    name: op.op_code.clone(),
                    host_ns: Some((op.host_start_ns, op.host_end_ns)),
                    log_host_ns: Some((op.host_start_ns, op.host_end_ns)),
                    kernel_ns: d.as_ref().and_then(|d| span(&d.kernel)),
                    fw_ns: d.as_ref().and_then(|d| span(&d.fw)),
                });
            }
            self.signposts = log
                .entries
                .iter()
                .filter_map(|e| match e {
                    crate::oplog::OpLogEntry::Signpost(s) => Some(s.clone()),
                    _ => None,
                })
                .collect();
        }
        for ((chip, run), d) in dev.by_run {
            self.ops.push(OpSpan {
                chip,
                run,
                name: format!("run {run}"),
                host_ns: None,
                log_host_ns: None,
                kernel_ns: span(&d.kernel),
                fw_ns: span(&d.fw),
            });
        }
        let key = |o: &OpSpan| o.host_ns.map(|h| h.0 as f64).or(o.fw_ns.map(|f| f.0)).unwrap_or(f64::INFINITY);
        self.ops.sort_by(|a, b| key(a).total_cmp(&key(b)));
        let mut index = HashMap::new();
        for (i, o) in self.ops.iter().enumerate() {
            index.entry((o.chip, o.run)).or_insert(i as u32);
        }
        index
    }

    /// The zones of lane `lane` (a contiguous slice).
    pub fn lane_zones(&self, lane: u32) -> &[Zone] {
        let from = self.zones.partition_point(|z| z.lane < lane);
        let to = self.zones.partition_point(|z| z.lane <= lane);
        &self.zones[from..to]
    }

    /// Earliest and latest host ns of anything on the timeline (`None` when empty).
    pub fn bounds_ns(&self) -> Option<(f64, f64)> {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut see = |a: f64, b: f64| {
            if a.is_finite() && b.is_finite() {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        };
        for z in &self.zones {
            see(z.start_ns, z.end_ns);
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
        (lo <= hi).then_some((lo, hi))
    }
}

/// The smallest range holding every finite range of `spans`.
fn hull(spans: impl IntoIterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
    spans
        .into_iter()
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .fold(None, |acc, (a, b)| Some(acc.map_or((a, b), |(lo, hi): (f64, f64)| (lo.min(a), hi.max(b)))))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{self, times, TILES};

    use fixture::timeline;

    #[test]
    fn zones_nest_by_depth_and_carry_cycles_host_times_and_ops() {
        let t = timeline();
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        assert_eq!(t.lanes.len(), 10);
        assert_eq!(t.zones.len(), 120);
        assert_eq!(t.marks.len(), 90);
        let lane = t.lanes.iter().position(|l| l.tile == TILES[1] && l.risc == Risc::Trisc1).unwrap() as u32;
        assert_eq!(t.lanes[lane as usize].depth, 4, "FW > KERNEL > work > inner");
        assert_eq!(t.lanes[lane as usize].name(fixture::ARCH), "(1,0) [x=2 y=1] TRISC_1");
        let zones = t.lane_zones(lane);
        let names: Vec<(&str, u16)> =
            zones[..4].iter().map(|z| (t.sites[z.site as usize].name.as_str(), z.depth)).collect();
        assert_eq!(names, [("TRISC-FW", 0), ("TRISC-KERNEL", 1), ("work", 2), ("inner", 3)]);
        let x = times(2, 1, Risc::Trisc1);
        let work = zones.iter().find(|z| z.run == 2 && t.sites[z.site as usize].name == "work").unwrap();
        assert_eq!((work.start_cycles, work.end_cycles), x.work);
        assert_eq!((work.start_ns, work.end_ns), (x.work.0 as f64, x.work.1 as f64), "nominal 1 GHz, cycle 0 at 0 ns");
        let op = &t.ops[work.op.unwrap() as usize];
        assert_eq!((op.name.as_str(), op.run, op.host_ns), ("Matmul", 2, Some((1_950_000, 2_300_000))));
        let k = (times(2, 0, Risc::Brisc).kernel.0 as f64, times(2, 1, Risc::Trisc2).kernel.1 as f64);
        assert_eq!(op.kernel_ns, Some(k));
        assert_eq!(t.sites[work.site as usize].file, "src/kernel.rs");
        assert_eq!(t.signposts.len(), 1);
        let sum = t.marks.iter().find(|m| matches!(m.kind, MarkKind::Sum { .. })).unwrap();
        assert_eq!(sum.kind, MarkKind::Sum { total_cycles: 30, count: 3 });
        assert_eq!(t.sites.len(), 11, "one label per distinct site");
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
        let [issue] = &t.issues[..] else { panic!("{:?}", t.issues) };
        assert_eq!((issue.severity, issue.count), (crate::issue::Severity::Warning, 3));
        assert!(issue.what.contains("the op log's host times (10000950000..10003300000 ns) do not overlap"), "{}", issue.what);
        assert!(issue.what.contains(&format!("device records' span on the timebase ({first}..{last} ns)")), "{}", issue.what);
        assert!(issue.what.contains("3 op(s) are placed at their own device times"), "{}", issue.what);
        for (run, _) in fixture::OPS {
            let op = t.ops.iter().find(|o| o.run == run).unwrap();
            let fw = (times(run, 0, Risc::Brisc).fw.0, times(run, 1, Risc::Trisc2).fw.1);
            assert_eq!(op.host_ns, Some(fw), "run {run}: first FW start to last FW end");
            let logged = fixture::op(run, "").host_start_ns + 10_000_000_000;
            assert_eq!(op.log_host_ns.map(|h| h.0), Some(logged), "the op log's times are kept");
        }
        let (lo, hi) = t.bounds_ns().unwrap();
        assert_eq!((lo, hi), (first as f64, last as f64), "the timeline spans the device records only");
        // Barely overlapping (about 6% of the device span shared) counts as not matching.
        let t = shifted(2_000_000);
        let shared = format!("(2950000..5300000 ns) share only {} ns of", last - 2_950_000);
        assert!(t.issues.iter().any(|i| i.what.contains(&shared) && i.what.contains("placed at their own device times")), "{:?}", t.issues);
        // Mostly overlapping is trusted.
        assert!(shifted(500_000).issues.is_empty());
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
        assert!(none.issues.iter().any(|i| i.what.contains("knows no chip 0: its 240 record(s)")), "{:?}", none.issues);
    }
}
