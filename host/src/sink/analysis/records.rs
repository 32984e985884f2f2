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
/// Blackhole), runtime-bench in a loop on 2026-12-02 (zone 18.6 / 18.6, value zone 30.5 /
/// 30.9, event 25.7 / 26.7, data32 30.1 / 31.1, data64 42.1 / 47.2, sum zone 27.0 / 26.0,
/// signal 31.7 / 36.7).
pub(crate) const RECORD_CYCLES: [(RecordKind, f64, f64); 7] = [
    (RecordKind::Zone, 18.6, 18.6),
    (RecordKind::ValueZone, 30.5, 30.9),
    (RecordKind::Event, 25.7, 26.7),
    (RecordKind::Signal, 31.7, 36.7),
    (RecordKind::Data32, 30.1, 31.1),
    (RecordKind::Data64, 42.1, 47.2),
    (RecordKind::SumStep, 27.0, 26.0),
];

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
        assert_eq!(cycles(RecordKind::Data64, Arch::Blackhole), 47.2);
    }
}
