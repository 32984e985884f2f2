use super::*;
use crate::ring_pieces::LONG_RING;
use crate::sink::tracy::TracyStream;
use crate::testing::long_run;

/// Issue 41: a snapshot's long rings go to a sink that takes pieces a piece at a time (read
/// once more for their long zones, then in pieces), and the stream is the one made from
/// the rings held whole.
#[test]
fn a_snapshots_long_rings_in_pieces_stream_what_they_stream_whole() {
    let dir = tempfile::tempdir().unwrap();
    let run = long_run::write(dir.path(), 5 * 300_000, 300_000).unwrap();
    let oplog = || OpLog::read(&run.oplog, &Inputs::none()).unwrap();
    let inputs = Inputs::none();
    let held = Profile::open(&run.snapshot, Some(oplog()), false, &inputs).unwrap();
    assert!(held
        .profile
        .readout
        .rings
        .iter()
        .any(|r| r.records.len() >= LONG_RING));
    let whole = TracyStream::of_rings_for_tests(
        &held.profile,
        &mut crate::ring_source::Held(&held.profile),
    );
    let loaded = open(&run.snapshot, Some(oplog()), &inputs).unwrap();
    // The first reading, a piece at a time, finds what one reading of the rings whole does.
    let (a, b) = (&loaded.profile, &held.profile);
    assert_eq!(
        format!("{:?}", a.readout.issues),
        format!("{:?}", b.readout.issues)
    );
    assert_eq!(
        format!("{:?}", a.sites.issues),
        format!("{:?}", b.sites.issues)
    );
    assert_eq!(
        (a.sites.resolved, a.sites.unresolved),
        (b.sites.resolved, b.sites.unresolved)
    );
    let counts = |p: &Profile| -> Vec<(usize, usize)> {
        let rings = p.readout.rings.iter();
        rings.map(|r| (r.record_count(), r.zones())).collect()
    };
    assert_eq!(counts(a), counts(b));
    let mut rings = DeviceRings::new(&loaded.profile, loaded.memory.as_ref()).unwrap();
    let long = (0..loaded.profile.ring_count())
        .filter(|&i| rings.long_zones(i).unwrap().is_some())
        .count();
    assert!(long >= 1, "a long ring is given in pieces");
    let mut rings = Counting {
        rings: DeviceRings::new(&loaded.profile, loaded.memory.as_ref()).unwrap(),
        pieces: 0,
    };
    let pieces = TracyStream::of_rings_for_tests(&loaded.profile, &mut rings);
    assert!(
        rings.pieces > long,
        "{} pieces of {long} long rings",
        rings.pieces
    );
    assert!(pieces.0 == whole.0, "the events differ");
    assert_eq!(pieces.1, whole.1);
}

/// [`DeviceRings`], counting the pieces it gives.
struct Counting<'m> {
    rings: DeviceRings<'m>,
    pieces: usize,
}

impl RingSource for Counting<'_> {
    fn ring(&mut self, index: usize) -> Result<Cow<'_, RingReport>> {
        self.rings.ring(index)
    }

    fn long_zones(&mut self, index: usize) -> Result<Option<Long>> {
        self.rings.long_zones(index)
    }

    fn pieces(
        &mut self,
        index: usize,
        piece: &mut dyn FnMut(&Records) -> Result<()>,
    ) -> Result<()> {
        let n = &mut self.pieces;
        self.rings.pieces(index, &mut |r| {
            *n += 1;
            piece(r)
        })
    }
}

/// A ring's runs are each listed once in first-seen order, whether they come in order
/// (found new without a search) or go back to an earlier one.
#[test]
fn a_rings_runs_are_listed_once_in_first_seen_order() {
    let id = RingId {
        chip: 0,
        tile: riscv_linker::NocCoord::new(1, 1),
        risc: riscv_linker::Risc::Brisc,
    };
    let timebase = Timebase::nominal(riscv_linker::Arch::WormholeB0, 1);
    let (mut p, mut reading) = (RingPass::new(id, &timebase), Reading::default());
    for run in [3, 3, 1, 5, 5, 3, 7, crate::decode::NO_RUN, 2, 7, 8, 1] {
        p.record(
            &mut reading,
            RecordKind::Zone,
            run,
            0,
            (1, 2),
            &timebase,
            || None,
        );
    }
    p.settle(reading);
    assert_eq!(p.runs.ids().collect::<Vec<_>>(), [3, 1, 5, 7, 2, 8]);
    assert_eq!(p.records, 12);
}
