//! Device records placed on the host timeline, flattened for the timeline outputs (trace
//! JSON, the HTML timeline) and the terminal summary.
//!
//! One [`Lane`] per ring (chip, tile, RISC). Each lane's [`Zone`]s are listed in the order
//! they open ([`crate::markers`]), with their nesting depth, raw cycles and host ns from the
//! [`Timebase`]; events, data and sum totals are [`Mark`]s. Ops come from the op log (host
//! times) joined with their device span from the wrapper zones ([`crate::report::device`]).
//! Zone names and source locations are interned once per distinct site ([`SiteLabel`]).

use crate::decode::RecordKind;
use crate::issue::Issue;
use crate::markers::{markers, MarkerType};
use crate::oplog::{OpLog, Signpost};
use crate::readout::Readout;
use crate::report::device;
use crate::resolve::Resolution;
use crate::timebase::Timebase;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::{BTreeMap, HashMap};

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
    /// Host launch and completion, if the op log has the op.
    pub host_ns: Option<(u64, u64)>,
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
        t
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
