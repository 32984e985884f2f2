//! The split by innermost zone: every cycle of `--lines` also goes to the innermost zone
//! its core had open at that cycle, from the profiler records of the same run.
//!
//! The emulator cuts each core's cycles into segments at every load of `WALL_CLOCK_L`
//! ([`ttprof_emu::Segment`]), stamped with the value the load returned; zones are timed by
//! exactly such loads (their open and close read the wall clock), and the profile's zones
//! carry those values (the low word extended to 64 bits). So a zone is a run of whole
//! segments: a segment belongs to the innermost zone open at its start (zone starts
//! inclusive, ends exclusive), and a zone's own cycles (its duration minus its children's)
//! are the sum of its segments' cycles exactly. [`ZoneMatch`] counts the zones whose two
//! times are both segment boundaries of their core: all of them, unless the times came
//! from elsewhere (the timestamper backend stamps a store, not a load).

use super::{Causes, LineProfile, CAUSES};
use crate::profile::Profile;
use riscv_linker::{NocCoord, Risc};
use std::collections::{BTreeMap, HashSet};
use ttprof_emu::Segment;

/// The zone of cycles no zone of their core covered.
pub(crate) const NO_ZONE: &str = "(no zone)";
/// The zone of a core whose split outgrew the emulator's budget
/// ([`ttprof_emu::lines::SEGMENT_ROWS`]).
pub(crate) const SPLIT_DROPPED: &str = "(zone split dropped: too many clock reads)";

/// One core's launch, waiting for the profile's zones.
#[derive(Clone, Debug)]
pub(crate) struct PendingCore {
    /// Index into [`LineProfile::kernels`]' keys (the kernel it ran).
    pub key: super::KernelKey,
    pub chip: u32,
    pub tile: NocCoord,
    pub risc: Risc,
    /// `None`: the split was dropped (all its cycles go to [`SPLIT_DROPPED`]).
    pub segments: Option<Vec<Segment>>,
    /// The core's rows, for a dropped split.
    pub rows: Vec<(u32, Causes)>,
}

/// How the zones of the profile met the cores' segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ZoneMatch {
    /// Zones on the cores that ran in lines mode, within the time the cores ran.
    pub zones: u64,
    /// Of those, zones whose start and end are both clock reads of their core (the shared
    /// clock checked).
    pub(crate) on_clock_reads: u64,
    /// Cores whose split was dropped.
    pub dropped: u64,
}

/// One zone of a lane, as the split needs it.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub start: u64,
    pub end: u64,
    pub site: u32,
}

/// A sweep over one lane's zones (sorted by start, as [`lanes`] gives them) in time order:
/// at each later time, the innermost zone open then (starts inclusive, ends exclusive;
/// zones nest, so the latest opened that is still open). The exact split and the sampled
/// one both place their cycles with it.
pub(crate) struct Sweep<'a> {
    spans: &'a [Span],
    next: usize,
    open: Vec<Span>,
}

impl<'a> Sweep<'a> {
    pub(crate) fn new(spans: &'a [Span]) -> Sweep<'a> {
        Sweep {
            spans,
            next: 0,
            open: Vec::new(),
        }
    }

    /// Opens the zones that start at or before `t` (each shown to `opened` once), closes
    /// those that ended by `t`, and gives the innermost still open. `t` must not decrease.
    pub(crate) fn at(&mut self, t: u64, mut opened: impl FnMut(Span)) -> Option<Span> {
        while let Some(&s) = self.spans.get(self.next).filter(|s| s.start <= t) {
            opened(s);
            self.open.push(s);
            self.next += 1;
        }
        self.open.retain(|s| s.end > t);
        self.open
            .iter()
            .max_by_key(|s| (s.start, std::cmp::Reverse(s.end)))
            .copied()
    }
}

/// The zones of the lanes in `wanted` ((chip, tile, RISC)), sorted by start, outer zones
/// first at equal starts.
pub(crate) fn lanes(
    p: &Profile,
    wanted: &HashSet<(u32, NocCoord, Risc)>,
) -> BTreeMap<(u32, NocCoord, Risc), Vec<Span>> {
    let mut lanes: BTreeMap<(u32, NocCoord, Risc), Vec<Span>> = BTreeMap::new();
    for view in p.rings() {
        let id = (view.lane.chip, view.lane.tile, view.lane.risc);
        if !wanted.contains(&id) {
            continue;
        }
        let spans = lanes.entry(id).or_default();
        spans.extend(view.zones.iter().map(|z| Span {
            start: z.start_cycles,
            end: z.end_cycles,
            site: z.site,
        }));
    }
    for spans in lanes.values_mut() {
        spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    }
    lanes
}

impl LineProfile {
    /// Attributes every pending core's cycles to zones from `p`'s records (module docs),
    /// filling each kernel's [`super::KernelCycles::zones`]. Call once, after the runs.
    pub(crate) fn split_by_zones(&mut self, p: &Profile) -> ZoneMatch {
        let wanted: HashSet<(u32, NocCoord, Risc)> = self
            .pending
            .iter()
            .map(|c| (c.chip, c.tile, c.risc))
            .collect();
        let lanes = lanes(p, &wanted);
        let mut m = ZoneMatch::default();
        let pending = std::mem::take(&mut self.pending);
        for core in &pending {
            let k = self.kernels.entry(core.key.clone()).or_default();
            let Some(segments) = &core.segments else {
                m.dropped += 1;
                add_rows(k.zones.entry(SPLIT_DROPPED.into()).or_default(), &core.rows);
                continue;
            };
            if let Some(w) = windows(p, core, segments) {
                self.windows.push(w);
            }
            let spans = lanes
                .get(&(core.chip, core.tile, core.risc))
                .map_or(&[][..], |v| &v[..]);
            let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
                continue;
            };
            // The zones that overlap this launch: opened before its last segment starts.
            let upto = spans.partition_point(|s| s.start <= last.start);
            let bounds: HashSet<u64> = segments.iter().map(|s| s.start).collect();
            let mut sweep = Sweep::new(&spans[..upto]);
            for seg in segments {
                let innermost = sweep.at(seg.start, |s| {
                    // A zone of this launch (not one that ended before it, nor an outer
                    // one opened before it): does it start and end on clock reads?
                    if s.end > first.start && s.start >= first.start {
                        m.zones += 1;
                        m.on_clock_reads +=
                            u64::from(bounds.contains(&s.start) && bounds.contains(&s.end));
                    }
                });
                let zone = innermost.map_or(NO_ZONE.to_string(), |s| label(p, s.site));
                add_rows(k.zones.entry(zone).or_default(), &seg.rows);
            }
        }
        self.zone_match = Some(m);
        m
    }
}

/// Most windows per core and launch in the Perfetto trace's line tracks.
const WINDOWS: u64 = 200;

/// One core's launch cut into windows for the Perfetto trace ([`super::perfetto`]).
#[derive(Clone, Debug)]
pub(crate) struct CoreWindows {
    pub key: super::KernelKey,
    pub chip: u32,
    pub tile: NocCoord,
    pub risc: Risc,
    /// The lane's name in the trace (`(0,0) [x=1 y=1] BRISC`).
    pub lane: String,
    pub windows: Vec<Window>,
}

/// Consecutive segments of one core, at least 1/[`WINDOWS`] of its launch (a segment is
/// never cut: the emulator keeps no times inside it).
#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// Host ns (the profile's timebase).
    pub start_ns: f64,
    pub end_ns: f64,
    pub causes: Causes,
    /// Cycles per pc.
    pub(crate) pcs: Vec<(u32, u64)>,
}

/// `core`'s segments as windows on the host timeline (`None` off the timebase).
fn windows(p: &Profile, core: &PendingCore, segments: &[Segment]) -> Option<CoreWindows> {
    let total: u64 = segments
        .iter()
        .flat_map(|s| s.rows.iter().flat_map(|r| r.1))
        .sum();
    let width = (total / WINDOWS).max(1);
    let ns = |cycles: u64| p.timebase.host_ns(core.chip, core.tile, cycles);
    let mut out = Vec::new();
    let mut open: Option<(u64, u64, Causes, BTreeMap<u32, u64>)> = None;
    for (i, seg) in segments.iter().enumerate() {
        let (start, cycles, causes, pcs) =
            open.get_or_insert_with(|| (seg.start, 0, [0; CAUSES], BTreeMap::new()));
        for (pc, c) in &seg.rows {
            let n: u64 = c.iter().sum();
            *cycles += n;
            *pcs.entry(*pc).or_default() += n;
            for (a, b) in causes.iter_mut().zip(c) {
                *a += b;
            }
        }
        if *cycles >= width || i + 1 == segments.len() {
            out.push(Window {
                start_ns: ns(*start)?,
                end_ns: ns(*start + *cycles)?,
                causes: *causes,
                pcs: std::mem::take(pcs).into_iter().collect(),
            });
            open = None;
        }
    }
    let lane = crate::timeline::Lane {
        chip: core.chip,
        tile: core.tile,
        risc: core.risc,
        depth: 0,
    };
    Some(CoreWindows {
        key: core.key.clone(),
        chip: core.chip,
        tile: core.tile,
        risc: core.risc,
        lane: lane.name(p.geometry().arch),
        windows: out,
    })
}

/// A zone's name as the files show it.
pub(crate) fn label(p: &Profile, site: u32) -> String {
    p.labels
        .get(site as usize)
        .map_or_else(|| format!("site {site}"), |l| l.name.clone())
}

fn add_rows(into: &mut BTreeMap<u32, Causes>, rows: &[(u32, Causes)]) {
    for (pc, c) in rows {
        let r = into.entry(*pc).or_insert([0; CAUSES]);
        for (a, b) in r.iter_mut().zip(c) {
            *a += b;
        }
    }
}
