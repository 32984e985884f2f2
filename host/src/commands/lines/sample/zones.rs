//! The samples by innermost zone, as `--lines` splits its cycles (`crate::lines::zones`):
//! a sample taken at wall-clock cycle `t` of its tile goes to the innermost zone its core
//! had open at `t` (zone starts inclusive, ends exclusive), from the profile's zones of
//! the same run. A sample's time is its window's start (the tile's wall clock when the
//! daisychain was armed, or the run's start) plus its slot's number of intervals
//! ([`super::TimedSample`]).

use super::SampleProfile;
use crate::lines::zones::{label, lanes, Sweep};
use crate::lines::{CAUSES, NO_ZONE};
use crate::profile::Profile;
use riscv_linker::{NocCoord, Risc};
use std::collections::HashSet;

impl SampleProfile {
    /// Fills every kernel's [`super::SampledKernel::zones`] from `p`'s zones (module docs).
    /// Kernels whose samples have no time keep no zones.
    pub fn split_by_zones(&mut self, p: &Profile) {
        let wanted: HashSet<(u32, NocCoord, Risc)> = self
            .kernels
            .iter()
            .flat_map(|(key, k)| k.timed.iter().map(|s| (s.chip, s.tile, key.risc)))
            .collect();
        let lanes = lanes(p, &wanted);
        for (key, k) in self.kernels.iter_mut() {
            k.zones.clear();
            k.zone_windows.clear();
            let mut order: Vec<usize> = (0..k.timed.len()).collect();
            order.sort_by_key(|&i| (k.timed[i].chip, k.timed[i].tile, k.timed[i].time));
            let mut lane: Option<(u32, NocCoord)> = None;
            let mut sweep = Sweep::new(&[]);
            for i in order {
                let s = k.timed[i];
                if lane != Some((s.chip, s.tile)) {
                    lane = Some((s.chip, s.tile));
                    sweep = Sweep::new(
                        lanes
                            .get(&(s.chip, s.tile, key.risc))
                            .map_or(&[][..], |v| &v[..]),
                    );
                }
                let zone = sweep
                    .at(s.time, |_| {})
                    .map_or(NO_ZONE.to_string(), |z| label(p, z.site));
                k.zones
                    .entry(zone.clone())
                    .or_default()
                    .entry(s.pc)
                    .or_insert([0; CAUSES])[s.cause] += 1;
                *k.zone_windows
                    .entry(zone)
                    .or_default()
                    .entry(s.window)
                    .or_default() += 1;
            }
        }
    }
}
