//! Per-op device times from the firmware wrapper zones.
//!
//! Every launch on every core records `<RISC>-FW` around the whole launch and
//! `<RISC>-KERNEL` around the kernel's `main` (`BRISC-*`, `NCRISC-*`, `TRISC-*`; the three
//! TRISCs share a name and are told apart by their ring). tt-metal's op-level numbers come
//! from these zones alone, across every core of the op:
//!
//! * FW span: first FW start to last FW end; kernel span: first KERNEL start to last
//!   KERNEL end (`DEVICE FW/KERNEL DURATION`);
//! * per RISC: first start to last end of that RISC's KERNEL zones;
//! * per core: first KERNEL start to last KERNEL end on the core (min, max, mean over cores);
//! * DM start: the kernel span measured from the first BRISC/NCRISC KERNEL start;
//! * first to last start: last KERNEL start minus first KERNEL start.
//!
//! Times are placed on the host timeline with the [`Timebase`] per tile before comparing,
//! so tiles whose clocks differ are compared correctly. A zone is a wrapper only if its
//! name is its own ring's wrapper name (`BRISC-FW` on a BRISC ring, ...).

use crate::decode::{RecordKind, NO_RUN};
use crate::issue::Issue;
use crate::model::ring_runs::{RingRuns, RunFacts, Wrapper};
use crate::readout::Readout;
use crate::resolve::Resolution;
use crate::timebase::{HostTime, Timebase};
use riscv_linker::{NocCoord, Risc};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A time on one tile: raw cycles and host ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct At {
    /// The tile whose clock took the time.
    pub tile: NocCoord,
    /// That tile's device cycle counter.
    pub cycles: u64,
    /// The same time on the host timeline, ns (through the tile's [`Timebase`]).
    pub ns: f64,
    /// The same time to well under a ns (`ns` is an `f64`: a ns or more off past 2^53 ns),
    /// for the differences ([`At::since_ns`]).
    pub(crate) time: HostTime,
}

impl At {
    /// Whether this time is before `other` on the host timeline, to the last bit (the
    /// `f64` `ns` of two times past 2^53 ns may be equal; false when either is not a number).
    pub fn before(&self, other: &At) -> bool {
        self.time.before(other.time)
    }

    /// Host ns from `earlier` to this time: the exact difference of the two host times,
    /// not of their rounded `ns`.
    pub fn since_ns(&self, earlier: &At) -> f64 {
        self.time.since(earlier.time)
    }
}

/// First start and last end of a set of zones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeSpan {
    /// Earliest start (by host ns).
    pub start: At,
    /// Latest end (by host ns).
    pub end: At,
    /// Latest start (for "first to last start").
    pub(crate) last_start: At,
}

impl TimeSpan {
    /// `end - start` in ns ([`At::since_ns`]: exact at any cycle count).
    pub fn duration_ns(&self) -> f64 {
        self.end.since_ns(&self.start)
    }

    /// Last start minus first start, in ns (`DEVICE KERNEL FIRST TO LAST START`).
    pub fn first_to_last_start_ns(&self) -> f64 {
        self.last_start.since_ns(&self.start)
    }
}

/// One core's wrapper zones in one op: which RISCs recorded them and the span of its KERNEL
/// zones (what the op report reads per core: the core count, the per-core kernel times,
/// the missing wrapper zones). An op keeps one of these per core: its span as device
/// cycles and its length in ns, 40 bytes, where two `TimeSpan`s were 420 and two host
/// times 96 (issue 41).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoreTimes {
    /// The core's first `<RISC>-KERNEL` start and last end, cycles of its tile's clock
    /// (`None`: none recorded).
    pub kernel_cycles: Option<(u64, u64)>,
    /// That span in ns: the exact difference of its ends' host times.
    kernel_ns: f64,
    /// RISCs (bit = `Risc::index`) that recorded an FW zone.
    pub(crate) fw_riscs: u8,
    /// RISCs (bit = `Risc::index`) that recorded a KERNEL zone.
    pub(crate) kernel_riscs: u8,
}

impl CoreTimes {
    /// Whether a RISC of the core recorded an FW zone.
    pub fn has_fw(&self) -> bool {
        self.fw_riscs != 0
    }

    /// First KERNEL start to last KERNEL end on the core, ns (exact difference of host
    /// times; `None`: no KERNEL zone).
    pub fn kernel_ns(&self) -> Option<f64> {
        self.kernel_cycles.map(|_| self.kernel_ns)
    }

    /// Widens the KERNEL span to cover `k` (a span of this core's tile: later cycles are
    /// later host times; `time` gives a cycle count's).
    fn widen_kernel(&mut self, k: &TimeSpan, time: impl Fn(u64) -> Option<HostTime>) {
        let (start, end) = self
            .kernel_cycles
            .get_or_insert((k.start.cycles, k.end.cycles));
        *start = (*start).min(k.start.cycles);
        *end = (*end).max(k.end.cycles);
        let (start, end) = (*start, *end);
        // Both ends' host times exist: `k`'s did, and every earlier span's.
        self.kernel_ns = match (time(start), time(end)) {
            (Some(a), Some(b)) => b.since(a),
            _ => f64::NAN,
        };
    }
}

/// The device side of one op (one run id on one chip).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceTimes {
    /// First FW start to last FW end over every core (`None`: no FW zone).
    pub fw: Option<TimeSpan>,
    /// First KERNEL start to last KERNEL end over every core (`None`: no KERNEL zone).
    pub kernel: Option<TimeSpan>,
    /// First BRISC/NCRISC KERNEL start.
    pub(crate) dm_kernel_start: Option<At>,
    /// Per RISC (`Risc::index`): its KERNEL zones' span over all cores.
    pub risc_kernel: [Option<TimeSpan>; Risc::COUNT],
    /// Each core's wrapper zones, by tile.
    pub cores: BTreeMap<NocCoord, CoreTimes>,
    /// Wrapper zones seen more than once on one (core, RISC): the run id was reused.
    pub repeated: u64,
}

impl DeviceTimes {
    /// Cores that recorded an FW zone.
    pub fn core_count(&self) -> usize {
        self.cores.values().filter(|c| c.has_fw()).count()
    }

    /// Per-core kernel durations in ns (cores with a KERNEL zone), in core order.
    pub(crate) fn per_core_kernel_ns(&self) -> Vec<f64> {
        self.cores.values().filter_map(|c| c.kernel_ns()).collect()
    }
}

/// Device times of every (chip, run) that recorded wrapper zones.
#[derive(Clone, Debug, Default)]
pub struct Ops {
    /// Device times by (chip, run id).
    /// (An `Arc`: the op report's rows share them, not a copy of every core's times.)
    pub(crate) by_run: BTreeMap<(u32, u32), Arc<DeviceTimes>>,
    /// Wrapper zones left out (chip without a timebase) or seen twice (run id reused).
    pub issues: Vec<Issue>,
}

/// Every (chip, run id) the readout holds records of, with the tiles that recorded them.
pub fn runs(readout: &Readout) -> BTreeMap<(u32, u32), Vec<NocCoord>> {
    let mut out: BTreeMap<(u32, u32), Vec<NocCoord>> = BTreeMap::new();
    // A set, not a search of the run's tiles per ring (quadratic in a run's tiles).
    let mut seen = rustc_hash::FxHashSet::default();
    for ring in &readout.rings {
        let mut last = NO_RUN;
        for run in ring.records.runs() {
            if run != NO_RUN && run != last {
                if seen.insert((ring.id.chip, run, ring.id.tile)) {
                    out.entry((ring.id.chip, run))
                        .or_default()
                        .push(ring.id.tile);
                }
                last = run;
            }
        }
    }
    out
}

/// Collects the wrapper zones of every ring.
pub fn collect(readout: &Readout, sites: &Resolution, timebase: &Timebase) -> Ops {
    let mut ops = Ops::default();
    let mut no_timebase = BTreeMap::<u32, u64>::new();
    for (ri, ring) in readout.rings.iter().enumerate() {
        let id = ring.id;
        let r = &ring.records;
        let (mut w, mut runs) = (RingWrappers::default(), RingRuns::default());
        let mut kinds = WrapperKinds::default();
        for i in 0..r.len() {
            let run = runs.index_of(r.run_at(i));
            w.add(
                &mut kinds,
                runs.at(run),
                id,
                r.kind[i],
                r.site[i],
                (r.start_at(i), r.end_at(i)),
                timebase,
                || {
                    sites
                        .site(ri, r.run_at(i), r.site[i])
                        .map(|m| m.name.as_str())
                },
            );
        }
        ops.merge_ring(id.chip, w, &runs, timebase, &mut no_timebase);
    }
    ops.finish(no_timebase);
    ops
}

/// Which of one ring's zones are its wrapper zones, fed record by record in ring order,
/// without holding the records: each widens its run's span in the ring's [`RingRuns`]
/// (cycle counts of its first start, last start and last end, made into host times
/// ([`At`]) only when merged). The rings' runs are merged into the run's [`Ops`] ring by
/// ring in readout order ([`Ops::merge_ring`]), which gives what one pass over every ring
/// gives (first earliest start, first latest end: ties keep the earlier ring). One ring is
/// one RISC of one tile, so its runs' op, RISC and core spans are the same span.
#[derive(Debug, Default)]
pub(crate) struct RingWrappers {
    /// The ring (set by the first wrapper zone).
    id: Option<crate::readout::RingId>,
    no_timebase: u64,
}

/// The wrapper kind of each site of `run`, the run of the ring last seen: one name
/// comparison per (run, site) while the ring's runs come one after another, and nothing
/// held per run. Held while one ring is read (by the pass's reading, a ring at a time, not
/// by every ring's [`RingWrappers`]; issue 41), and made anew for each ring: a site's kind
/// depends on the ring's RISC.
#[derive(Debug)]
pub(crate) struct WrapperKinds {
    run: u32,
    of: crate::util::small_map::SmallMap<u16, Option<Wrapper>>,
}

impl Default for WrapperKinds {
    fn default() -> WrapperKinds {
        WrapperKinds {
            run: NO_RUN,
            of: Default::default(),
        }
    }
}

impl RingWrappers {
    /// One record of ring `id` in run `facts`: a wrapper zone (its site's name, asked once
    /// per (run, site) while `kinds` holds the run, is the ring's own `<RISC>-FW` or
    /// `-KERNEL`) widens the run's span.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add<'n>(
        &mut self,
        kinds: &mut WrapperKinds,
        facts: &mut RunFacts,
        id: crate::readout::RingId,
        kind: RecordKind,
        site: u16,
        (start, end): (u64, u64),
        timebase: &Timebase,
        name: impl FnOnce() -> Option<&'n str>,
    ) {
        if kind != RecordKind::Zone || facts.run == NO_RUN {
            return;
        }
        if kinds.run != facts.run {
            kinds.run = facts.run;
            kinds.of = Default::default();
        }
        let w = *kinds.of.get_or_insert_with(site, || {
            let name = name()?;
            if name == id.risc.fw_zone() {
                Some(Wrapper::Fw)
            } else if name == id.risc.kernel_zone() {
                Some(Wrapper::Kernel)
            } else {
                None
            }
        });
        let Some(w) = w else { return };
        let Some(chip) = timebase.chips.get(&id.chip) else {
            self.no_timebase += 1;
            return;
        };
        self.id = Some(id);
        // Compared as host times (as `TimeSpan::add` compares them), the tile's clock
        // turning each count into one.
        let clock = chip.tile_clock(id.tile);
        let before = |a: u64, b: u64| clock.host_time(a).before(clock.host_time(b));
        facts.add_wrapper(w, (start, end), before);
    }
}

impl TimeSpan {
    /// Widens `into` by `other` as adding `other`'s zones one by one would.
    fn widen(into: &mut Option<TimeSpan>, other: Option<TimeSpan>) {
        let Some(b) = other else { return };
        let Some(a) = into else {
            *into = Some(b);
            return;
        };
        if b.start.before(&a.start) {
            a.start = b.start;
        }
        if a.last_start.before(&b.last_start) {
            a.last_start = b.last_start;
        }
        if a.end.before(&b.end) {
            a.end = b.end;
        }
    }
}

impl Ops {
    /// Merges the wrapper zones of the next ring (rings in readout order) of `chip`.
    pub(crate) fn merge_ring(
        &mut self,
        chip: u32,
        ring: RingWrappers,
        runs: &RingRuns,
        timebase: &Timebase,
        no_timebase: &mut BTreeMap<u32, u64>,
    ) {
        if ring.no_timebase > 0 {
            *no_timebase.entry(chip).or_default() += ring.no_timebase;
        }
        let Some(id) = ring.id else { return };
        let at = |cycles: u64| {
            Some(At {
                tile: id.tile,
                cycles,
                ns: timebase.host_ns(id.chip, id.tile, cycles)?,
                time: timebase.host_time(id.chip, id.tile, cycles)?,
            })
        };
        let span = |c: Option<[u64; 3]>| {
            let [start, last_start, end] = c?;
            Some(TimeSpan {
                start: at(start)?,
                end: at(end)?,
                last_start: at(last_start)?,
            })
        };
        let bit = 1u8 << id.risc.index();
        // Runs without wrapper zones have none to merge (and make no op).
        for r in runs.iter().filter(|r| r.zones != [0, 0]) {
            let fw = span(r.wrapper(Wrapper::Fw));
            let kernel = span(r.wrapper(Wrapper::Kernel));
            let op = Arc::make_mut(self.by_run.entry((chip, r.run)).or_default());
            TimeSpan::widen(&mut op.fw, fw);
            TimeSpan::widen(&mut op.kernel, kernel);
            TimeSpan::widen(&mut op.risc_kernel[id.risc.index()], kernel);
            if let (Some(k), Risc::Brisc | Risc::Ncrisc) = (kernel, id.risc) {
                if op.dm_kernel_start.is_none_or(|o| k.start.before(&o)) {
                    op.dm_kernel_start = Some(k.start);
                }
            }
            let core = op.cores.entry(id.tile).or_default();
            if let Some(k) = &kernel {
                core.widen_kernel(k, |c| timebase.host_time(id.chip, id.tile, c));
            }
            if fw.is_some() {
                core.fw_riscs |= bit;
            }
            if kernel.is_some() {
                core.kernel_riscs |= bit;
            }
            op.repeated += r.zones.iter().filter(|&&n| n >= 2).count() as u64;
        }
    }

    /// After the last ring: the issues (wrapper zones without a timebase, run ids reused).
    pub fn finish(&mut self, no_timebase: BTreeMap<u32, u64>) {
        let ops = self;
        for (chip, n) in no_timebase {
            ops.issues.push(
            Issue::error(
                None,
                format!("the timebase knows no chip {chip}: {n} wrapper zone(s) of that chip left out of op times"),
            )
            .with_count(n),
        );
        }
        for ((chip, run), t) in &ops.by_run {
            if t.repeated > 0 {
                ops.issues.push(
                Issue::warning(
                    None,
                    format!(
                        "device {chip} run {run}: {} core/RISC pair(s) recorded their wrapper zones more than once (run id reused?): \
                         the op's times span every launch",
                        t.repeated
                    ),
                )
                .with_count(t.repeated),
            );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::{self, times, TILES};
    use riscv_linker::Arch;

    #[test]
    fn op_spans_come_from_the_wrapper_zones_of_every_core() {
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        let ops = collect(&r, &res, &Timebase::nominal(fixture::ARCH, 1));
        assert!(ops.issues.is_empty(), "{:?}", ops.issues);
        assert_eq!(
            ops.by_run.keys().copied().collect::<Vec<_>>(),
            [(0, 1), (0, 2), (0, 3)]
        );
        let d = &ops.by_run[&(0, 2)];
        assert_eq!(d.core_count(), 2);
        // First FW start: tile 0 BRISC; last end: tile 1 TRISC2.
        let first = times(2, 0, Risc::Brisc);
        let last = times(2, 1, Risc::Trisc2);
        let fw = d.fw.unwrap();
        assert_eq!(
            (fw.start.cycles, fw.end.cycles, fw.start.tile, fw.end.tile),
            (first.fw.0, last.fw.1, TILES[0], TILES[1])
        );
        let k = d.kernel.unwrap();
        assert_eq!(
            (k.start.cycles, k.end.cycles),
            (first.kernel.0, last.kernel.1)
        );
        assert_eq!(
            k.duration_ns(),
            (last.kernel.1 - first.kernel.0) as f64,
            "1 GHz nominal: 1 ns per cycle"
        );
        assert_eq!(k.last_start.cycles, times(2, 1, Risc::Trisc2).kernel.0);
        assert_eq!(d.dm_kernel_start.unwrap().cycles, first.kernel.0);
        let t1 = d.risc_kernel[Risc::Trisc1.index()].unwrap();
        assert_eq!(
            (t1.start.cycles, t1.end.cycles),
            (
                times(2, 0, Risc::Trisc1).kernel.0,
                times(2, 1, Risc::Trisc1).kernel.1
            )
        );
        let per_core = d.per_core_kernel_ns();
        let core =
            |t| (times(2, t, Risc::Trisc2).kernel.1 - times(2, t, Risc::Brisc).kernel.0) as f64;
        assert_eq!(per_core, [core(0), core(1)]);
        assert_eq!(d.cores[&TILES[0]].fw_riscs, 0b11111);
    }

    /// A ring's wrapper zones are kept once per run in first-seen order, whether its runs
    /// come in order, go back to an earlier one, or pass the few found by a search.
    #[test]
    fn a_rings_wrapper_zones_are_kept_once_per_run() {
        let id = crate::readout::RingId {
            chip: 0,
            tile: TILES[0],
            risc: Risc::Brisc,
        };
        let tb = Timebase::nominal(fixture::ARCH, 1);
        let (mut w, mut by_run) = (RingWrappers::default(), RingRuns::default());
        let mut kinds = WrapperKinds::default();
        let runs: Vec<u32> = (1..=20).chain([3, 15, 1, 15, 21]).collect();
        for (k, &run) in runs.iter().enumerate() {
            let t = 100 * k as u64;
            let i = by_run.index_of(run);
            w.add(
                &mut kinds,
                by_run.at(i),
                id,
                RecordKind::Zone,
                7,
                (t, t + 50),
                &tb,
                || Some("BRISC-KERNEL"),
            );
        }
        let got: Vec<(u32, u8)> = by_run.iter().map(|r| (r.run, r.zones[1])).collect();
        let want: Vec<(u32, u8)> = (1..=21)
            .map(|r| (r, runs.iter().filter(|&&x| x == r).count() as u8))
            .collect();
        assert_eq!(got, want);
        // Run 15's KERNEL span covers its three zones.
        let k15 = by_run.iter().nth(14).unwrap().wrapper(Wrapper::Kernel);
        assert_eq!(k15, Some([1400, 2300, 2350]));
    }

    #[test]
    fn zones_named_like_another_risc_wrapper_are_not_wrappers_and_unknown_chips_are_reported() {
        let mut r = fixture::readout();
        // A BRISC-FW zone on an NCRISC ring does not count as NCRISC's wrapper.
        let ring = r
            .rings
            .iter_mut()
            .find(|x| x.id.risc == Risc::Ncrisc)
            .unwrap();
        for k in 0..ring.records.len() {
            if ring.records.site[k] == fixture::site::NCRISC_FW {
                ring.records.site[k] = fixture::site::BRISC_FW;
            }
        }
        let res = fixture::resolution(&r);
        let ops = collect(&r, &res, &Timebase::nominal(fixture::ARCH, 1));
        assert_eq!(ops.by_run[&(0, 1)].cores[&TILES[0]].fw_riscs, 0b11101);
        let none = collect(&r, &res, &Timebase::nominal(fixture::ARCH, 0));
        assert!(none.by_run.is_empty());
        assert!(
            none.issues[0].to_string().contains("knows no chip 0"),
            "{}",
            none.issues[0]
        );
    }

    /// Issue 41 (Medium): an op's durations were differences of two `f64` host times, a ns
    /// or more off from 2^53 ns on (at 2^60 cycles by hundreds of ns): the op report's
    /// `DEVICE ... DURATION [ns]` columns of a chip up for months were wrong.
    #[test]
    fn op_durations_stay_exact_at_large_cycle_counts() {
        for offset in [0, (1 << 53) + 3, (1 << 60) + 1, u64::MAX - (1 << 30)] {
            for arch in [Arch::WormholeB0, Arch::Blackhole] {
                let r = fixture::readout_at(offset);
                let res = fixture::resolution(&r);
                let ops = collect(&r, &res, &Timebase::nominal(arch, 1));
                let d = &ops.by_run[&(0, 2)];
                let (first, last) = (times(2, 0, Risc::Brisc), times(2, 1, Risc::Trisc2));
                // ns = cycles * 1000 / MHz, exactly (1000 / 1350 = 20 / 27).
                let ns = |cycles: u64| cycles as f64 * 1000.0 / arch.aiclk_mhz() as f64;
                let k = d.kernel.unwrap();
                assert_eq!(k.start.cycles, first.kernel.0 + offset);
                let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
                assert!(
                    close(k.duration_ns(), ns(last.kernel.1 - first.kernel.0)),
                    "{arch:?} at {offset}: {} ns",
                    k.duration_ns()
                );
                assert!(close(
                    k.first_to_last_start_ns(),
                    ns(last.kernel.0 - first.kernel.0)
                ));
                let fw = d.fw.unwrap();
                assert!(close(fw.duration_ns(), ns(last.fw.1 - first.fw.0)));
                let core =
                    |t| ns(times(2, t, Risc::Trisc2).kernel.1 - times(2, t, Risc::Brisc).kernel.0);
                let per_core = d.per_core_kernel_ns();
                assert!(close(per_core[0], core(0)) && close(per_core[1], core(1)));
            }
        }
    }
}
