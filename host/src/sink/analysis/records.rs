//! The profiler's own records are not the kernel's work (issue 39): each record a RISC
//! writes inside its KERNEL zone costs it a known number of cycles, [`RECORD_CYCLES`], which
//! the analysis reports as `profiler_records_ns` and takes out of the time it falls in (its
//! busy time, or the outermost typed wait it was recorded in).
//!
//! The costs are runtime-bench's figures for the documented pipeline (records in a loop,
//! `cargo run --release -p ttprof-demo --bin runtime-bench`, `runtime.json`): what the
//! runtime's record routines cost on that model. A real core's cost differs with its cache
//! (a miss adds cycles); the emulator's line profile (`--lines`) measures a given kernel's.
//! They are one named table, to be updated with the runtime.

use crate::timeline::MarkKind;
use riscv_linker::Arch;

/// What a record is, for its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordKind {
    /// A zone, open and close (a typed wait is one).
    Zone,
    /// A value zone.
    ValueZone,
    /// An event.
    Event,
    /// A signal (an event that releases a resource).
    Signal,
    /// Timestamped data, 32-bit payload.
    Data32,
    /// Timestamped data, 64-bit payload.
    Data64,
    /// One measurement of a sum zone (its record is written once, at the end).
    SumStep,
}

/// Cycles a record of each kind costs the core that writes it, per arch: (Wormhole B0,
/// Blackhole), runtime-bench's `records` kernel in a loop (one record and 4 loop steps per
/// iteration) on 2026-12-03; 64-bit data in straight-line code, since in that run's loop
/// the bench kernel's code aliased the routine in the direct-mapped instruction cache
/// (64.4 / 81.3: two misses per record, a property of that layout, not of the record).
pub(crate) const RECORD_CYCLES: [(RecordKind, f64, f64); 7] = [
    (RecordKind::Zone, 16.7, 19.1),
    (RecordKind::ValueZone, 17.8, 28.6),
    (RecordKind::Event, 11.8, 23.4),
    (RecordKind::Signal, 11.8, 23.8),
    (RecordKind::Data32, 17.8, 28.7),
    (RecordKind::Data64, 35.0, 36.3),
    (RecordKind::SumStep, 29.0, 16.0),
];

/// What record a zone is: a value zone, or a zone (a typed wait is one).
pub(crate) fn zone_record(value: Option<u32>) -> RecordKind {
    if value.is_some() {
        RecordKind::ValueZone
    } else {
        RecordKind::Zone
    }
}

/// What record a mark is, and how many (a sum zone's total counts its measurements);
/// `signal`: its site is a signal's.
pub(crate) fn mark_record(kind: MarkKind, signal: bool) -> (RecordKind, f64) {
    match kind {
        MarkKind::Sum { count, .. } => (RecordKind::SumStep, count as f64),
        MarkKind::Data(d) if d > u32::MAX as u64 => (RecordKind::Data64, 1.0),
        MarkKind::Data(_) => (RecordKind::Data32, 1.0),
        MarkKind::Event if signal => (RecordKind::Signal, 1.0),
        MarkKind::Event => (RecordKind::Event, 1.0),
    }
}

/// The cost of one record of `kind` on `arch`, cycles.
pub(crate) fn cycles(kind: RecordKind, arch: Arch) -> f64 {
    RECORD_CYCLES
        .iter()
        .find(|(k, ..)| *k == kind)
        .map_or(0.0, |&(_, wh, bh)| match arch {
            Arch::Blackhole => bh,
            _ => wh,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_cost_on_both_arches() {
        for (k, ..) in RECORD_CYCLES {
            for arch in [Arch::WormholeB0, Arch::Blackhole] {
                assert!(cycles(k, arch) > 10.0, "{k:?} {arch:?}");
            }
        }
        assert_eq!(cycles(RecordKind::Data64, Arch::Blackhole), 36.3);
    }
}
