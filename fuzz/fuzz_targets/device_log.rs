//! Device logs (`profile_log_device.csv`, what `ttprof import CSV` reads): the first pass,
//! `ttprof::import::stream`, of a file holding arbitrary bytes never panics, and on a file
//! it accepts, the second pass (each ring's records read again, `CsvRings`) fed to a sink
//! through `sink::drive_rings` as `ttprof import` feeds its outputs: every ring comes back
//! (the file does not change, so the second pass has no reason to refuse it), with the
//! records the first pass counted, and its zones end no earlier than they start.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttprof::profile::{Profile, RingView};
use ttprof::sink::{drive_rings, Finished, Sink};

ttprof_fuzz::limit_allocations!();

/// Checks each ring's view, counting the rings seen.
#[derive(Default)]
struct Check {
    rings: usize,
}

impl Sink for Check {
    fn ring(&mut self, profile: &Profile, view: &RingView) -> ttprof::Result<()> {
        assert_eq!(view.index(), self.rings, "rings come in readout order");
        let want = &profile.readout().rings()[view.index()];
        let ring = view.ring();
        assert_eq!(ring.id, want.id, "ring {} is the one the first pass listed", view.index());
        if let Some(released) = &want.released {
            assert_eq!(ring.records.len(), released.records, "ring {}: the records the first pass counted", view.index());
        }
        for z in view.zones() {
            assert!(z.end_cycles >= z.start_cycles, "a zone ends no earlier than it starts: {z:?}");
            let _ = (z.cycles(), view.zone_ns(&z));
            let _ = &profile.labels()[z.site as usize].name;
        }
        for m in view.marks() {
            let _ = &profile.labels()[m.site as usize].name;
        }
        self.rings += 1;
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> ttprof::Result<Finished> {
        Ok(Finished::default())
    }
}

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let scratch = ttprof_fuzz::scratch();
    scratch.set(data, 0);
    let inputs = ttprof::inputs::Inputs::none();
    let (imported, mut rings) = match ttprof::import::stream(scratch.path(), None, &inputs) {
        Ok(x) => x,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let profile = &imported.profile;
    for i in profile.readout().issues().iter().chain(profile.issues()) {
        let _ = i.to_string();
    }
    let _ = profile.ops().len();
    let mut check = Check::default();
    if let Err(e) = drive_rings(profile, &mut rings, &mut [&mut check]) {
        panic!("the second pass over an unchanged device log failed: {e}");
    }
    assert_eq!(check.rings, profile.readout().rings().len(), "every ring is read again");
}));
