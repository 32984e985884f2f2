//! Stretches of cycles with a cause: when something was held, and on what. A stretch is
//! one contiguous run of cycles with one cause index (the caller gives causes their
//! meaning: the causes of [`crate::lines`] for a core held by its tile or a Tensix thread's
//! wait gate); the next cycles join it when they follow it directly with the same cause.
//! Memory is bounded: past [`MAX_SPANS`] stretches a log only counts cycles
//! ([`HoldLog::lost_cycles`]).

/// Most stretches kept per core and run (16 bytes each: 1 MiB).
pub const MAX_SPANS: usize = 1 << 16;

/// One stretch of held cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldSpan {
    /// The wall clock when it began (a core's records are stamped on the same clock).
    pub start: u64,
    /// How long, in cycles.
    pub cycles: u32,
    /// Why: a cause index of [`crate::lines`] (name: [`crate::lines::cause_name`]).
    pub cause: u8,
}

/// One log's stretches in a run (core time; the device converts to wall clock).
#[derive(Clone, Debug, Default)]
pub(crate) struct HoldLog {
    pub spans: Vec<HeldSpan>,
    pub lost_cycles: u64,
}

impl HoldLog {
    /// Notes `cycles` held cycles from core time `from` for `cause`.
    pub fn note(&mut self, from: u64, cycles: u64, cause: usize) {
        let cause = cause as u8;
        if let Some(last) = self.spans.last_mut() {
            let joins = last.cause == cause && last.start + last.cycles as u64 == from;
            if joins && last.cycles as u64 + cycles <= u32::MAX as u64 {
                last.cycles += cycles as u32;
                return;
            }
        }
        if self.spans.len() >= MAX_SPANS || cycles > u32::MAX as u64 {
            self.lost_cycles += cycles;
            return;
        }
        self.spans.push(HeldSpan {
            start: from,
            cycles: cycles as u32,
            cause,
        });
    }

    pub fn clear(&mut self) {
        self.spans.clear();
        self.lost_cycles = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_cycles_of_one_cause_join_and_others_start_a_stretch() {
        let mut log = HoldLog::default();
        log.note(100, 5, 7);
        log.note(105, 3, 7); // follows directly, same cause: joins
        log.note(108, 2, 8); // another cause
        log.note(120, 4, 8); // a gap
        let got: Vec<(u64, u32, u8)> = log
            .spans
            .iter()
            .map(|s| (s.start, s.cycles, s.cause))
            .collect();
        assert_eq!(got, [(100, 8, 7), (108, 2, 8), (120, 4, 8)]);
        assert_eq!(log.lost_cycles, 0);
    }

    #[test]
    fn past_the_cap_held_cycles_are_counted_not_placed() {
        let mut log = HoldLog::default();
        for k in 0..MAX_SPANS as u64 + 10 {
            log.note(10 * k, 2, 5);
        }
        assert_eq!(log.spans.len(), MAX_SPANS);
        assert_eq!(log.lost_cycles, 20);
    }
}
