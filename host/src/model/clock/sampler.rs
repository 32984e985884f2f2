//! Sync samples while the run goes on: [`ClockSampler`], which a drain loop calls.
//!
//! Windows before the first op and after the last ([`super::ClockSync`]) pin one frequency
//! per chip; a frequency step in between (DVFS) can only be seen, and located, with samples
//! taken during the run. The sampler takes them at a bounded rate: each time the drain loop
//! calls [`ClockSampler::tick`] and at least `every_ns` passed (on the caller's clock) since
//! the sampler's last round, it reads one tile of each chip, rotating through the tiles so
//! every tile gets samples over the whole run (the fit needs each tile's offset; the windows
//! give them too). A loop that falls behind gets one round per call, not a burst, so the
//! cost stays at most one read per chip per `every_ns`: with the default 100 us and reads of
//! about 1 us, about 1 % of the bus time of one reader per chip.
//!
//! A failed read does not stop the drain: it is counted ([`ClockSampler::failures`]) and the
//! first message kept, for the caller to report.

use super::{DeviceClock, TileSample};
use riscv_linker::NocCoord;

/// Default time between rounds, ns.
pub const DEFAULT_SAMPLE_EVERY_NS: u64 = 100_000;

/// Continuous clock sampling of a run (see the module docs).
#[derive(Clone, Debug)]
pub struct ClockSampler {
    /// Per chip: its id, its tiles, the next tile to read.
    chips: Vec<(u32, Vec<NocCoord>, usize)>,
    every_ns: u64,
    last_round: Option<u64>,
    samples: Vec<TileSample>,
    failures: u64,
    first_failure: Option<String>,
}

impl ClockSampler {
    /// Samples `tiles` (chip, tile) every `every_ns` at most (0: never).
    pub fn new(tiles: &[(u32, NocCoord)], every_ns: u64) -> ClockSampler {
        let mut chips: Vec<(u32, Vec<NocCoord>, usize)> = Vec::new();
        for &(chip, tile) in tiles {
            match chips.iter_mut().find(|c| c.0 == chip) {
                Some(c) => c.1.push(tile),
                None => chips.push((chip, vec![tile], 0)),
            }
        }
        ClockSampler {
            chips,
            every_ns,
            last_round: None,
            samples: Vec::new(),
            failures: 0,
            first_failure: None,
        }
    }

    /// Time between rounds, ns (0: the sampler is off).
    pub fn every_ns(&self) -> u64 {
        self.every_ns
    }

    /// Takes a round through `clock` if one is due at `now_ns` (any monotonic clock in ns the
    /// caller paces its loop by); returns the samples taken.
    pub fn tick(&mut self, clock: &dyn DeviceClock, now_ns: u64) -> usize {
        if self.every_ns == 0
            || self
                .last_round
                .is_some_and(|last| now_ns.saturating_sub(last) < self.every_ns)
        {
            return 0;
        }
        self.last_round = Some(now_ns);
        let mut taken = 0;
        for (chip, tiles, next) in &mut self.chips {
            let tile = tiles[*next % tiles.len()];
            *next = (*next + 1) % tiles.len();
            match clock.sync_sample(*chip, tile) {
                Ok(sample) => {
                    self.samples.push(TileSample {
                        chip: *chip,
                        tile,
                        sample,
                    });
                    taken += 1;
                }
                Err(e) => {
                    self.failures += 1;
                    self.first_failure
                        .get_or_insert_with(|| format!("chip {chip} tile {tile}: {e}"));
                }
            }
        }
        taken
    }

    /// Every sample so far, in the order taken.
    pub fn samples(&self) -> &[TileSample] {
        &self.samples
    }

    /// Reads that failed, and the first one's message.
    pub fn failures(&self) -> (u64, Option<&str>) {
        (self.failures, self.first_failure.as_deref())
    }
}

/// A warning with a count when some of the sampler's reads failed.
pub fn sampler_issue(sampler: &ClockSampler) -> Option<crate::issue::Issue> {
    let (n, first) = sampler.failures();
    (n > 0).then(|| {
        crate::issue::Issue::warning(
            None,
            format!("{n} clock-sync read(s) during the run failed (the fit has fewer samples); the first: {}", first.unwrap_or("?")),
        )
        .with_count(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devmem::SyncSample;
    use crate::error::{Error, Result};
    use std::sync::Mutex;

    /// A clock that counts reads and fails on one tile.
    struct Fake(Mutex<Vec<(u32, NocCoord)>>);

    impl DeviceClock for Fake {
        fn sync_sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample> {
            self.0.lock().unwrap().push((chip, tile));
            if tile == NocCoord::new(9, 9) {
                return Err(Error::Clock {
                    what: "gone".into(),
                });
            }
            Ok(SyncSample {
                host_before_ns: 0,
                device_cycles: 1,
                host_after_ns: 2,
            })
        }
    }

    #[test]
    fn rounds_rotate_through_each_chips_tiles_at_the_rate_and_count_failures() {
        let (a, b, bad) = (
            NocCoord::new(1, 1),
            NocCoord::new(2, 1),
            NocCoord::new(9, 9),
        );
        let mut s = ClockSampler::new(&[(0, a), (0, b), (1, a), (1, bad)], 1000);
        let clock = Fake(Mutex::new(Vec::new()));
        let mut taken = 0;
        for now in [0, 10, 999, 1000, 1500, 2000, 50_000] {
            taken += s.tick(&clock, now);
        }
        // Due at 0, 1000, 2000 and 50000 (once, not 48 times): 4 rounds of 2 reads.
        let reads = clock.0.lock().unwrap().clone();
        assert_eq!(
            reads,
            vec![
                (0, a),
                (1, a),
                (0, b),
                (1, bad),
                (0, a),
                (1, a),
                (0, b),
                (1, bad)
            ]
        );
        assert_eq!((taken, s.samples().len()), (6, 6));
        assert_eq!(s.failures(), (2, Some("chip 1 tile (9,9): gone")));
        let mut off = ClockSampler::new(&[(0, a)], 0);
        assert_eq!(off.tick(&clock, 5), 0);
    }
}
