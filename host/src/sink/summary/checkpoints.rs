//! Checkpoints: a launch's `event!` markers in order, each with the time since the previous
//! one and since the kernel started (as piker's `Profiler` prints deltas), in the summary.
//!
//! Per op and RISC the events of every tile and launch line up by their position in the
//! launch (the first event, the second, ...): each step shows its name, the mean delta since
//! the previous step (the first: since the RISC's KERNEL zone opened) and the mean
//! cumulative time. Steps whose mean delta is below the summary's threshold are hidden and
//! counted, so a loop's small steps do not drown the large ones.
//!
//! A ring is read whole or a piece at a time ([`crate::profile::Part`]): its zones and marks
//! come in opening order either way, and a launch's events are taken in that order (its
//! tile's count order) as they come. What is carried from piece to piece ([`InRing`]) is,
//! per run on the ring, when its first KERNEL zone opened, how many of its events were
//! placed and the last one's time: bounded by the runs on the ring, not by its length. The
//! only events held are those of a run whose KERNEL zone has not opened yet (a kernel's
//! events are inside its KERNEL zone, so a well-formed ring holds none; a ring that lost a
//! run's KERNEL zone holds that run's events to its end, then drops them, as the whole ring
//! does).

use crate::profile::{Profile, RingView};
use crate::timebase::{HostTime, TileClock};
use crate::timeline::MarkKind;
use riscv_linker::Risc;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One step: its name and every delta / cumulative time seen for it (ns).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Step {
    /// The `event!` name.
    pub name: String,
    /// Time since the previous checkpoint, ns, per launch.
    pub(crate) deltas: Vec<f64>,
    /// Time since the kernel start, ns, per launch.
    pub(crate) cumulative: Vec<f64>,
}

impl Step {
    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }
    /// Mean time since the previous step, ns.
    pub(crate) fn delta_ns(&self) -> f64 {
        Step::mean(&self.deltas)
    }
    /// Mean time since the kernel started, ns.
    pub(crate) fn cumulative_ns(&self) -> f64 {
        Step::mean(&self.cumulative)
    }
}

/// Steps per (op name, RISC), gathered ring by ring.
#[derive(Default)]
pub(crate) struct Checkpoints {
    /// (op name, RISC) -> steps by position.
    lanes: BTreeMap<(String, Risc), Vec<Step>>,
    /// The ring being read, from its first piece to its last.
    ring: InRing,
}

/// What a ring carries from one piece to the next: its runs so far.
#[derive(Debug, Default)]
struct InRing {
    runs: BTreeMap<u32, Run>,
}

/// One run on the ring being read.
#[derive(Debug, Default)]
struct Run {
    /// When its first KERNEL zone (in opening order) opened, once it has.
    start: Option<HostTime>,
    /// Its events placed so far (the next one's position) and the last one's time.
    placed: usize,
    last: Option<HostTime>,
    /// Its events before its KERNEL zone opened, in order: (cycles, site, op).
    early: Vec<(u64, u32, Option<u32>)>,
}

impl Checkpoints {
    /// Adds one ring's events (those of launches with a KERNEL zone on the ring), or one
    /// piece's: the ring's runs are carried to its last piece ([`InRing`]).
    pub(crate) fn add(&mut self, p: &Profile, v: &RingView) {
        let part = v.part();
        if part.first {
            self.ring = InRing::default();
        }
        // The ring's clock: deltas are exact differences of host times, not of the marks'
        // `f64` ns (a ns or more off past 2^53 ns). A ring off the timebase has no zones.
        let lane = v.lane();
        if let Some(clock) = p.timebase.tile_clock(lane.chip, lane.tile) {
            self.add_piece(p, v, lane.risc, &clock);
        }
        if part.last {
            // Runs whose KERNEL zone never opened on the ring: their events are dropped.
            self.ring = InRing::default();
        }
    }

    fn add_piece(&mut self, p: &Profile, v: &RingView, risc: Risc, clock: &TileClock) {
        let Checkpoints { lanes, ring } = self;
        // KERNEL start per run on this ring (the first to open); the events that came
        // before it are placed then, ahead of the piece's own.
        for z in v
            .zones()
            .iter()
            .filter(|z| p.labels[z.site as usize].name.ends_with("-KERNEL"))
        {
            let run = ring.runs.entry(z.run).or_default();
            if run.start.is_none() {
                run.start = Some(clock.host_time(z.start_cycles));
                for (cycles, site, op) in std::mem::take(&mut run.early) {
                    place(lanes, p, risc, clock, z.run, run, (cycles, site, op));
                }
            }
        }
        // Events in the order they come: opening order, the tile's count order.
        for m in v
            .marks()
            .iter()
            .filter(|m| matches!(m.kind, MarkKind::Event) && m.ns.is_finite())
        {
            let run = ring.runs.entry(m.run).or_default();
            let event = (m.cycles, m.site, m.op);
            if run.start.is_some() {
                place(lanes, p, risc, clock, m.run, run, event);
            } else {
                run.early.push(event);
            }
        }
    }

    /// The section: one block per (op, RISC) with events, steps below `threshold_ns` hidden.
    /// Empty when no launch recorded an event.
    pub(crate) fn render(&self, threshold_ns: f64) -> String {
        crate::printable::printable(&self.render_raw(threshold_ns)).into_owned()
    }

    /// [`Checkpoints::render`] before names are made printable.
    fn render_raw(&self, threshold_ns: f64) -> String {
        let mut out = String::new();
        for ((op, risc), steps) in &self.lanes {
            if out.is_empty() {
                out.push_str("\ncheckpoints (event! markers in launch order; mean over tiles and launches: +since the previous, @since the kernel started):\n");
            }
            let shown: Vec<&Step> = steps
                .iter()
                .filter(|s| s.delta_ns() >= threshold_ns)
                .collect();
            let hidden = steps.len() - shown.len();
            let _ = write!(out, "  {op} {}:", risc.name());
            for s in &shown {
                let _ = write!(
                    out,
                    " {} +{} @{} ns;",
                    s.name,
                    super::grouped(s.delta_ns()),
                    super::grouped(s.cumulative_ns())
                );
            }
            if hidden > 0 {
                let _ = write!(
                    out,
                    " ({hidden} step(s) under {} ns hidden)",
                    super::grouped(threshold_ns)
                );
            }
            out.push('\n');
        }
        out
    }
}

/// Places the next event of `run` (whose KERNEL zone has opened), `(cycles, site, op)`,
/// among the steps of its op on `risc`.
fn place(
    lanes: &mut BTreeMap<(String, Risc), Vec<Step>>,
    p: &Profile,
    risc: Risc,
    clock: &TileClock,
    id: u32,
    run: &mut Run,
    (cycles, site, op): (u64, u32, Option<u32>),
) {
    let Some(t0) = run.start else { return };
    // The op of the event's run: every zone and mark of a run has its run's op.
    let op = op.map_or_else(|| format!("run {id}"), |i| p.ops[i as usize].name.clone());
    let steps = lanes.entry((op, risc)).or_default();
    let i = run.placed;
    if steps.len() <= i {
        steps.push(Step {
            name: p.labels[site as usize].name.clone(),
            ..Default::default()
        });
    }
    let ns = clock.host_time(cycles);
    steps[i].deltas.push(ns.since(run.last.unwrap_or(t0)));
    steps[i].cumulative.push(ns.since(t0));
    run.placed += 1;
    run.last = Some(ns);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_show_mean_deltas_and_cumulative_times_and_small_ones_are_hidden() {
        let step = |name: &str, d: &[f64], c: &[f64]| Step {
            name: name.into(),
            deltas: d.to_vec(),
            cumulative: c.to_vec(),
        };
        let mut c = Checkpoints::default();
        c.lanes.insert(
            ("Matmul".into(), Risc::Trisc2),
            vec![
                step("first", &[1000.0, 3000.0], &[1000.0, 3000.0]),
                step("tiny", &[10.0], &[2010.0]),
                step("last", &[5000.0], &[7010.0]),
            ],
        );
        let all = c.render(0.0);
        assert!(all.contains("  Matmul TRISC_2: first +2,000 @2,000 ns; tiny +10 @2,010 ns; last +5,000 @7,010 ns;\n"), "{all}");
        let some = c.render(100.0);
        assert!(
            some.contains(
                "first +2,000 @2,000 ns; last +5,000 @7,010 ns; (1 step(s) under 100 ns hidden)"
            ),
            "{some}"
        );
        assert_eq!(
            Checkpoints::default().render(0.0),
            "",
            "no events, no section"
        );
    }
}
