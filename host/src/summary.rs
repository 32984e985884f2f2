//! A short per-zone summary: count, total and mean duration per zone name, over all rings.

use crate::decode::RecordKind;
use crate::readout::Readout;
use crate::resolve::Resolution;
use std::collections::HashMap;
use std::fmt::Write;

/// Totals of one zone name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneStats {
    pub name: String,
    pub count: u64,
    pub total_cycles: u64,
    pub min_cycles: u64,
    pub max_cycles: u64,
}

impl ZoneStats {
    pub fn mean_cycles(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_cycles as f64 / self.count as f64
        }
    }
}

/// Zone totals by name (unresolved sites as `unresolved-site-<id>`), largest total first.
pub fn zones(readout: &Readout, sites: &Resolution) -> Vec<ZoneStats> {
    let mut by_name: HashMap<String, ZoneStats> = HashMap::new();
    for (ri, ring) in readout.rings.iter().enumerate() {
        let r = &ring.records;
        // Accumulate per (run, site) first: one name lookup per distinct site, not per zone.
        let mut acc: HashMap<(u32, u16), (u64, u64, u64, u64)> = HashMap::new();
        for i in 0..r.len() {
            if !matches!(r.kind[i], RecordKind::Zone | RecordKind::ValueZone) {
                continue;
            }
            let d = r.end[i] - r.start[i];
            let a = acc.entry((r.run[i], r.site[i])).or_insert((0, 0, u64::MAX, 0));
            *a = (a.0 + 1, a.1 + d, a.2.min(d), a.3.max(d));
        }
        for ((run, site), (count, total, min, max)) in acc {
            let name = match sites.site(ri, run, site) {
                Some(m) => m.name.clone(),
                None => format!("unresolved-site-{site}"),
            };
            let s = by_name.entry(name.clone()).or_insert(ZoneStats {
                name,
                count: 0,
                total_cycles: 0,
                min_cycles: u64::MAX,
                max_cycles: 0,
            });
            s.count += count;
            s.total_cycles += total;
            s.min_cycles = s.min_cycles.min(min);
            s.max_cycles = s.max_cycles.max(max);
        }
    }
    let mut out: Vec<ZoneStats> = by_name.into_values().collect();
    out.sort_by(|a, b| b.total_cycles.cmp(&a.total_cycles).then_with(|| a.name.cmp(&b.name)));
    out
}

/// A text table; times also in microseconds at the nominal clock `mhz`.
pub fn table(stats: &[ZoneStats], mhz: u32) -> String {
    let width = stats.iter().map(|s| s.name.chars().count()).max().unwrap_or(4).max(4);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<width$}  {:>10}  {:>16}  {:>12}  {:>12}  {:>12}",
        "zone", "count", "total [cycles]", "mean [cycles]", "total [us]", "mean [us]"
    );
    let us = |cycles: f64| cycles / mhz.max(1) as f64;
    for s in stats {
        let _ = writeln!(
            t,
            "{:<width$}  {:>10}  {:>16}  {:>12.1}  {:>12.3}  {:>12.3}",
            s.name,
            s.count,
            s.total_cycles,
            s.mean_cycles(),
            us(s.total_cycles as f64),
            us(s.mean_cycles())
        );
    }
    t
}
