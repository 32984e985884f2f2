//! Snapshot files: `ttprof::devmem::Snapshot::load` of arbitrary bytes, then everything
//! that uses what loads — a readout (`ttprof::readout::read`, without and with consuming),
//! its extents and drained payload, and the clock fit of its sync samples — never panics
//! and never allocates more than the fuzz limit.
//!
//! Input: a snapshot file without its last 8 bytes: the target appends the FNV-1a checksum
//! of the input, so that mutations reach the sections rather than the checksum test (the
//! seeds are real snapshot files with their checksum cut off).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttprof::clock::{fit, FitOptions};
use ttprof::devmem::{DeviceMemory, Snapshot};
use ttprof_fuzz::{fnv1a, scratch};

ttprof_fuzz::limit_allocations!();

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let mut file = data.to_vec();
    file.extend_from_slice(&fnv1a(data).to_le_bytes());
    let scratch = scratch();
    scratch.set(&file, 0);
    let Ok(snap) = Snapshot::load(scratch.path(), &ttprof::inputs::Inputs::none()) else { return };
    let g = snap.geometry();
    let _ = snap.extents();
    let _ = snap.drained_bytes();
    for chip in 0..g.chips.min(4) {
        let _ = snap.tiles(chip);
    }
    if let Ok(r) = ttprof::readout::read(&snap, false) {
        for issue in r.issues() {
            let _ = issue.to_string();
        }
        let _ = (r.records(), r.zones(), r.payload_bytes(), r.bus_bytes_per_payload_byte());
    }
    let _ = ttprof::readout::read(&snap, true);
    let samples = snap.sync_samples();
    if !samples.is_empty() {
        if let Ok(f) = fit(&samples, g.arch, g.chips, &FitOptions::default()) {
            let _ = f.to_string();
        }
    }
}));
