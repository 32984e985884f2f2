use super::*;
use crate::sink::tracy::TracyStream;
use crate::testing::long_run;

/// Issue 41: a spool's long rings are decoded a piece at a time in both passes: the first
/// finds what a reading of the rings whole finds, and the second gives a sink that takes
/// pieces the stream the rings held whole give.
#[test]
fn a_spools_long_rings_in_pieces_stream_what_they_stream_whole() {
    let dir = tempfile::tempdir().unwrap();
    let run = long_run::write(dir.path(), 5 * 300_000, 300_000).unwrap();
    let oplog = || OpLog::read(&run.oplog, &Inputs::none()).unwrap();
    let inputs = Inputs::none();
    let held = Profile::open(&run.snapshot, Some(oplog()), false, &inputs).unwrap();
    let whole = TracyStream::of_rings_for_tests(
        &held.profile,
        &mut crate::ring_source::Held(&held.profile),
    );
    // The rings consumed into a spool, then read from it as `ttprof run` reads its own.
    let spool_dir = dir.path().join("spool");
    std::fs::create_dir(&spool_dir).unwrap();
    let (consumed, mut spool) =
        open_consuming(&run.snapshot, Some(oplog()), &spool_dir, &inputs).unwrap();
    let p = consumed.profile;
    let spooled = profile(p.readout, &mut spool, Some(oplog()), p.timebase).unwrap();
    let (a, b) = (&spooled.profile, &held.profile);
    assert!(spooled.decode.is_empty(), "{:?}", spooled.decode);
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
    assert!(
        counts(a).iter().any(|c| c.0 >= LONG_RING),
        "{:?}",
        counts(a)
    );
    let mut rings = SpoolRings::new(a, &mut spool);
    let long = (0..a.ring_count())
        .filter(|&i| rings.long_zones(i).unwrap().is_some())
        .count();
    assert!(long >= 1, "a long ring is given in pieces");
    let mut rings = SpoolRings::new(a, &mut spool);
    let pieces = TracyStream::of_rings_for_tests(a, &mut rings);
    assert!(pieces.0 == whole.0, "the events differ");
    assert_eq!(pieces.1, whole.1);
}
