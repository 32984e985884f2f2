//! Checks on decoded times that the decoder alone cannot make, per launch (the records
//! from one `Run` record to the next):
//!
//! * A launch of 2^32 cycles or more: the runtime's hot path takes time differences modulo
//!   2^32, so its zones' times may alias by multiples of 2^32 (see docs/design/ring-encoding.md). Every zone
//!   of such a launch is flagged.
//! * A zone that starts before its launch's `Run` record: an impossible time.
//! * A `Loss` record whose first drop is after its last.

use crate::decode::{RecordKind, Records};
use crate::error::Location;
use crate::issue::Issue;

/// Issues about the times of one ring's records.
pub(crate) fn launch_times(r: &Records, at: Option<Location>) -> Vec<Issue> {
    let mut checks = LaunchTimes::default();
    checks.push(r);
    checks.finish(at)
}

/// [`launch_times`] of a ring whose records come a piece at a time: what is held is the
/// current launch's counts, and the issues of the launches before it.
#[derive(Debug, Default)]
pub(crate) struct LaunchTimes {
    /// The current launch: its `Run` record's time and run (`None` before any), zones,
    /// latest end (of records other than losses), zones that start before it and
    /// inverted losses.
    run: Option<(u64, u64)>,
    zones: u64,
    last: Option<u64>,
    early: u64,
    inverted: u64,
    /// Issues of the launches that ended.
    issues: Vec<(IssueKind, u64, u64, u64)>,
}

/// The issues a launch can have ([`LaunchTimes`]): (kind, run, count, cycles).
#[derive(Clone, Copy, Debug)]
enum IssueKind {
    Long,
    Early,
    Inverted,
}

impl LaunchTimes {
    /// The ring's next records.
    pub(crate) fn push(&mut self, r: &Records) {
        for (j, &kind) in r.kind().iter().enumerate() {
            if kind == RecordKind::Run {
                self.end_launch();
                self.run = Some((r.end_at(j), r.value_at(j)));
                self.last = Some(r.end_at(j));
                continue;
            }
            if kind.is_zone() {
                self.zones += 1;
                if self.run.is_some_and(|(t0, _)| r.start_at(j) < t0) {
                    self.early += 1;
                }
            }
            if kind == RecordKind::Loss {
                self.inverted += u64::from(r.start_at(j) > r.end_at(j));
            } else {
                self.last = self.last.max(Some(r.end_at(j)));
            }
        }
    }

    fn end_launch(&mut self) {
        if let Some((t0, run)) = self.run {
            let last = self.last.unwrap_or(t0);
            if last - t0 >= 1 << 32 && self.zones > 0 {
                self.issues
                    .push((IssueKind::Long, run, self.zones, last - t0));
            }
            if self.early > 0 {
                self.issues.push((IssueKind::Early, run, self.early, 0));
            }
        }
        if self.inverted > 0 {
            self.issues.push((IssueKind::Inverted, 0, self.inverted, 0));
        }
        (self.zones, self.early, self.inverted) = (0, 0, 0);
    }

    /// The ring's issues, after its last records.
    pub(crate) fn finish(mut self, at: Option<Location>) -> Vec<Issue> {
        self.end_launch();
        self.issues
            .into_iter()
            .map(|(kind, run, n, cycles)| match kind {
                IssueKind::Long => Issue::warning(
                    at,
                    format!(
                        "the launch of run {run} lasted {cycles} cycles (2^32 or more): its zones' times may be off by \
                         multiples of 2^32 cycles"
                    ),
                )
                .with_count(n),
                IssueKind::Early => Issue::error(
                    at,
                    format!("{n} zone(s) start before the Run record of their launch (run {run}): impossible times"),
                )
                .with_count(n),
                IssueKind::Inverted => Issue::warning(
                    at,
                    format!("{n} Loss record(s) with the first drop after the last"),
                )
                .with_count(n),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::NO_RUN;

    #[test]
    fn long_launches_early_zones_and_inverted_losses_are_flagged() {
        let mut r = Records::new();
        r.push(RecordKind::Zone, 1, 5, 6, 0, 0, NO_RUN); // before any Run: not checked here
        r.push(RecordKind::Run, 0, 100, 100, 7, 0, 7);
        r.push(RecordKind::Zone, 1, 90, 120, 0, 0, 7); // starts before its Run
        r.push(RecordKind::Zone, 1, 130, 140, 0, 0, 7);
        r.push(RecordKind::Run, 0, 1000, 1000, 8, 0, 8);
        r.push(RecordKind::Zone, 1, 1000, 1000 + (1 << 32), 0, 0, 8);
        r.push(RecordKind::Loss, 0, 50, 40, 0, 3, 8);
        r.push(RecordKind::Run, 0, 1 << 40, 1 << 40, 9, 0, 9);
        r.push(RecordKind::Zone, 1, 1 << 40, (1 << 40) + 5, 0, 0, 9);
        let issues = launch_times(&r, None);
        let text: Vec<String> = issues
            .iter()
            .map(|i| format!("{} [{}]", i, i.count))
            .collect();
        assert_eq!(issues.len(), 3, "{text:#?}");
        assert!(
            text[0].contains("1 zone(s) start before the Run record of their launch (run 7)"),
            "{}",
            text[0]
        );
        assert!(
            text[1].contains("run 8 lasted 4294967296 cycles") && text[1].ends_with("[1]"),
            "{}",
            text[1]
        );
        assert!(text[2].contains("1 Loss record(s)"), "{}", text[2]);
    }
}
