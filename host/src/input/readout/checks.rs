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
    let mut out = Vec::new();
    let mut i = 0;
    while i < r.len() {
        // One launch: a Run record and everything up to the next one (or records before any).
        let first = i;
        i += 1;
        while i < r.len() && r.kind[i] != RecordKind::Run {
            i += 1;
        }
        let launch = first..i;
        let run_time = (r.kind[first] == RecordKind::Run).then(|| r.end_at(first));
        let zones = launch.clone().filter(|&j| r.kind[j].is_zone()).count() as u64;
        if let Some(t0) = run_time {
            let last = launch
                .clone()
                .filter(|&j| r.kind[j] != RecordKind::Loss)
                .map(|j| r.end_at(j))
                .max()
                .unwrap_or(t0);
            if last - t0 >= 1 << 32 && zones > 0 {
                out.push(
                    Issue::warning(
                        at,
                        format!(
                            "the launch of run {} lasted {} cycles (2^32 or more): its zones' times may be off by \
                             multiples of 2^32 cycles",
                            r.value_at(first),
                            last - t0
                        ),
                    )
                    .with_count(zones),
                );
            }
            let early = launch
                .clone()
                .filter(|&j| r.kind[j].is_zone() && r.start_at(j) < t0)
                .count() as u64;
            if early > 0 {
                out.push(
                    Issue::error(
                        at,
                        format!("{early} zone(s) start before the Run record of their launch (run {}): impossible times", r.value_at(first)),
                    )
                    .with_count(early),
                );
            }
        }
        let inverted = launch
            .filter(|&j| r.kind[j] == RecordKind::Loss && r.start_at(j) > r.end_at(j))
            .count() as u64;
        if inverted > 0 {
            out.push(
                Issue::warning(
                    at,
                    format!("{inverted} Loss record(s) with the first drop after the last"),
                )
                .with_count(inverted),
            );
        }
    }
    out
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
