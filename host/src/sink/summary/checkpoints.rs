//! Checkpoints: a launch's `event!` markers in order, each with the time since the previous
//! one and since the kernel started (as piker's `Profiler` prints deltas), in the summary.
//!
//! Per op and RISC the events of every tile and launch line up by their position in the
//! launch (the first event, the second, ...): each step shows its name, the mean delta since
//! the previous step (the first: since the RISC's KERNEL zone opened) and the mean
//! cumulative time. Steps whose mean delta is below the summary's threshold are hidden and
//! counted, so a loop's small steps do not drown the large ones.

use crate::profile::Profile;
use crate::timebase::HostTime;
use crate::timeline::{Lane, MarkKind};
use crate::zones::Zones;
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
}

impl Checkpoints {
    /// Adds one ring's events (those of launches with a KERNEL zone on the ring).
    pub(crate) fn add(
        &mut self,
        p: &Profile,
        lane: Lane,
        zones: &Zones,
        marks: &[crate::timeline::Mark],
    ) {
        // The ring's clock: deltas are exact differences of host times, not of the marks'
        // `f64` ns (a ns or more off past 2^53 ns). A ring off the timebase has no zones.
        let Some(clock) = p.timebase.tile_clock(lane.chip, lane.tile) else {
            return;
        };
        // KERNEL start per run on this ring.
        let mut start: BTreeMap<u32, HostTime> = BTreeMap::new();
        for z in zones
            .iter()
            .filter(|z| p.labels[z.site as usize].name.ends_with("-KERNEL"))
        {
            start
                .entry(z.run)
                .or_insert_with(|| clock.host_time(z.start_cycles));
        }
        let mut by_run: BTreeMap<u32, Vec<(f64, u64, u32)>> = BTreeMap::new();
        for m in marks
            .iter()
            .filter(|m| matches!(m.kind, MarkKind::Event) && m.ns.is_finite())
        {
            by_run
                .entry(m.run)
                .or_default()
                .push((m.ns, m.cycles, m.site));
        }
        for (run, mut events) in by_run {
            let Some(&t0) = start.get(&run) else { continue };
            let op = events_op(p, zones, run);
            // In time order: one tile's clock, so its count's order (the `f64`s tie).
            events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let steps = self.lanes.entry((op, lane.risc)).or_default();
            let mut prev = t0;
            for (i, (_, cycles, site)) in events.into_iter().enumerate() {
                let ns = clock.host_time(cycles);
                if steps.len() <= i {
                    steps.push(Step {
                        name: p.labels[site as usize].name.clone(),
                        ..Default::default()
                    });
                }
                steps[i].deltas.push(ns.since(prev));
                steps[i].cumulative.push(ns.since(t0));
                prev = ns;
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

/// The op name of `run`'s records (through any of its zones on the ring).
fn events_op(p: &Profile, zones: &Zones, run: u32) -> String {
    zones
        .iter()
        .find(|z| z.run == run)
        .and_then(|z| z.op)
        .map_or_else(|| format!("run {run}"), |i| p.ops[i as usize].name.clone())
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
