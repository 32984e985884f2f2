//! Tests: the analysis given each ring in pieces (issue 41) writes what it writes of whole
//! rings: `ttprof_analysis.json` and the op report byte for byte, on the fixture and on a
//! run whose kernels wait on each other through CBs (typed waits, signals, a stall and a
//! mark inside waits, sum waits, zones and marks at one cycle, drops in band and after the
//! last record), whatever the pieces.

use super::{AnalysisSink, Shared};
use crate::decode::{RecordKind, TableRow};
use crate::inputs::Inputs;
use crate::model::fixture;
use crate::profile::{Profile, RingView};
use crate::readout::Readout;
use crate::ring_source::{Cut, Held, RingSource};
use crate::sink::{Finished, OpReportSink, Sink};
use crate::sites::SiteTable;
use riscv_linker::Risc;
use std::sync::Arc;

/// The windows and piece sizes every ring is cut with.
const WINDOWS: [usize; 4] = [1, 2, 5, 64];
const PIECES: [usize; 4] = [1, 3, 7, 1_000];

/// Site ids the waiting fixture adds to [`fixture::sites`]'s.
mod site {
    pub(super) const WAIT_IN0: u16 = 11;
    pub(super) const WAIT_OUT1: u16 = 12;
    pub(super) const PUSH_IN0: u16 = 13;
    pub(super) const POP_OUT1: u16 = 14;
    pub(super) const STALL: u16 = 15;
    pub(super) const SUM_WAIT: u16 = 16;
    pub(super) const NOC: u16 = 17;
    pub(super) const PUSH: u16 = 18;
}

fn sites() -> SiteTable {
    let z = |kind: &str, name: &str, line: u32| crate::testing::site_json(kind, name, line);
    let typed = |kind: &str, name: &str, line: u32, key: &str, what: &str| {
        let j = z(kind, name, line);
        format!("{},\"{key}\":\"{what}\"}}", &j[..j.len() - 1])
    };
    SiteTable::from_json_list(&[
        z("zone", "BRISC-FW", 1),
        z("zone", "BRISC-KERNEL", 2),
        z("zone", "NCRISC-FW", 3),
        z("zone", "NCRISC-KERNEL", 4),
        z("zone", "TRISC-FW", 5),
        z("zone", "TRISC-KERNEL", 6),
        z("zone", "work", 10),
        z("value_zone", "inner", 11),
        z("event", "barrier", 12),
        z("data", "bytes", 13),
        z("sum", "wait", 14),
        typed("zone", "wait-in0", 20, "w", "cb_front:0"),
        typed("zone", "wait-out1", 21, "w", "cb_back:1"),
        typed("event", "push-in0", 22, "s", "cb_push:0"),
        typed("event", "pop-out1", 23, "s", "cb_pop:1"),
        z("zone", "PROFILER-STALL", 24),
        typed("sum", "sum-wait", 25, "w", "cb_front:2"),
        typed("zone", "noc-barrier", 26, "w", "noc_read"),
        z("zone", "push", 27),
    ])
    .expect("waiting fixture sites")
}

/// The fixture's rings with a CB pipeline in every op: unpack (TRISC_0) waits on CB 0
/// three times, a NoC wait and a data mark inside the first, a profiler stall inside the
/// second; the reader (BRISC) pushes CB 0 just before each wait ends (inside a `push`
/// zone, with a mark and an empty zone at the same cycle) and waits on CB 1 itself; pack
/// (TRISC_2) waits on CB 1, which unpack pops, and has a sum wait; NCRISC of the first
/// tile loses records in band and after its last record.
pub(super) fn waiting() -> Profile {
    let mut readout: Readout = fixture::readout();
    for ring in &mut readout.rings {
        let (risc, t) = (
            ring.id.risc,
            fixture::TILES
                .iter()
                .position(|&x| x == ring.id.tile)
                .unwrap(),
        );
        let r = &ring.records;
        let mut rows: Vec<TableRow> = (0..r.len()).map(|i| r.row(i).unwrap()).collect();
        for (run, _) in fixture::OPS {
            let row = |kind, site, start, end, value, count| TableRow {
                kind,
                site,
                start,
                end,
                value,
                count,
                run,
            };
            let zone = |site, start, end| row(RecordKind::Zone, site, start, end, 0, 0);
            let event = |site, at| row(RecordKind::Event, site, at, at, 0, 0);
            let unpack = fixture::times(run, t, Risc::Trisc0);
            let base = unpack.work.1 + 1_000;
            let own = fixture::times(run, t, risc);
            for k in 0..3u64 {
                let s = base + 2_000 * k;
                match risc {
                    Risc::Trisc0 => {
                        if k == 0 {
                            rows.push(zone(site::NOC, s + 10, s + 50));
                            rows.push(row(
                                RecordKind::Data,
                                fixture::site::BYTES,
                                s + 100,
                                s + 100,
                                64,
                                0,
                            ));
                        }
                        if k == 1 {
                            rows.push(zone(site::STALL, s + 20, s + 70));
                        }
                        rows.push(zone(site::WAIT_IN0, s, s + 600));
                        if k == 2 {
                            rows.push(event(fixture::site::BARRIER, s + 600));
                        }
                        rows.push(event(site::POP_OUT1, s + 700));
                    }
                    Risc::Brisc => {
                        rows.push(zone(site::WAIT_OUT1, s + 400, s + 450));
                        // An empty zone, a signal and a mark at one cycle.
                        rows.push(zone(fixture::site::WORK, s + 590, s + 590));
                        rows.push(event(site::PUSH_IN0, s + 590));
                        rows.push(row(
                            RecordKind::Data,
                            fixture::site::BYTES,
                            s + 590,
                            s + 590,
                            1 << 40,
                            0,
                        ));
                        rows.push(zone(site::PUSH, s + 580, s + 595));
                    }
                    Risc::Trisc2 => {
                        rows.push(zone(site::WAIT_OUT1, s + 650, s + 710));
                    }
                    _ => {}
                }
            }
            if risc == Risc::Trisc2 {
                let at = own.kernel.1 - 200;
                rows.push(row(RecordKind::Sum, site::SUM_WAIT, at, at, 500, 4));
            }
            if risc == Risc::Ncrisc && t == 0 && run == 2 {
                let at = own.kernel.0 + 300;
                rows.push(row(RecordKind::Loss, 0, at, at, 2 | 2 << 32, 5));
            }
        }
        // Ring order: by close time, a record closing with another after it as pushed.
        rows.sort_by_key(|r| r.end);
        let mut records = crate::decode::Records::new();
        for r in &rows {
            records.push_row(r);
        }
        if risc == Risc::Ncrisc && t == 0 {
            ring.losses_in_band = 5;
            ring.dropped = 8;
        }
        ring.records = records;
    }
    let res = crate::resolve::Resolution::uniform(&readout, Arc::new(sites()));
    Profile::resolved(
        readout,
        res,
        Some(fixture::oplog()),
        crate::timebase::Timebase::nominal(fixture::ARCH, 1),
    )
}

/// A sink that takes pieces and counts the views that were not a whole ring.
#[derive(Default)]
struct Pieces(usize);

impl Sink for Pieces {
    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, _: &Profile, v: &RingView) -> crate::Result<()> {
        if !(v.part().first && v.part().last) {
            self.0 += 1;
        }
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> crate::Result<Finished> {
        Ok(Finished::default())
    }
}

/// What the analysis and the op report write of `p`'s rings from `rings` (one analysis
/// shared by the two, as the standard outputs do), and the analysis alone: the files'
/// bytes, and how many views were pieces.
fn written(p: &Profile, rings: &mut dyn RingSource) -> (Vec<u8>, Vec<u8>, Vec<u8>, usize) {
    written_by(p, &mut |p, sinks| {
        crate::sink::drive_rings(p, rings, sinks).unwrap()
    })
}

/// Feeds a profile's rings to sinks: what they finished.
type Drive<'a> = &'a mut dyn FnMut(&Profile, &mut [&mut dyn Sink]) -> Vec<Finished>;

/// [`written`], the sinks fed by `drive`.
fn written_by(p: &Profile, drive: Drive) -> (Vec<u8>, Vec<u8>, Vec<u8>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = Inputs::none();
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_765_000_000);
    let shared = Shared::default();
    let mut analysis =
        AnalysisSink::new(&dir.path().join("a.json"), &inputs).with_analysis(&shared);
    let mut report = OpReportSink::new(dir.path(), now, &inputs).with_analysis(&shared);
    let mut alone = AnalysisSink::new(&dir.path().join("alone.json"), &inputs);
    let mut pieces = Pieces::default();
    assert!(analysis.takes_pieces() && report.takes_pieces() && alone.takes_pieces());
    let done = drive(
        p,
        &mut [&mut analysis, &mut report, &mut alone, &mut pieces],
    );
    let read = |f: &Finished| std::fs::read(&f.files[0]).unwrap();
    (read(&done[0]), read(&done[1]), read(&done[2]), pieces.0)
}

/// Every ring cut into pieces of any size with any window: the analysis JSON (shared with
/// the op report, and alone) and the op report are the whole rings' byte for byte.
fn pieces_write_what_whole_rings_do(p: &Profile) -> String {
    let whole = written(p, &mut Held(p));
    assert_eq!(whole.3, 0);
    assert_eq!(whole.0, whole.2, "shared and alone");
    for window in WINDOWS {
        for piece in PIECES {
            let cut = written(
                p,
                &mut Cut {
                    profile: p,
                    window,
                    piece,
                },
            );
            let at = format!("window {window}, piece {piece}");
            if piece < 10 {
                assert!(cut.3 > p.ring_count(), "{at}: rings were cut ({})", cut.3);
            }
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            assert!(
                cut.0 == whole.0,
                "{at}: analysis\n{}\nvs whole\n{}",
                text(&cut.0),
                text(&whole.0)
            );
            assert!(cut.2 == whole.2, "{at}: analysis alone");
            assert!(
                cut.1 == whole.1,
                "{at}: op report\n{}\nvs whole\n{}",
                text(&cut.1),
                text(&whole.1)
            );
        }
    }
    String::from_utf8(whole.0).unwrap()
}

#[test]
fn the_fixture_s_analysis_in_pieces_is_the_whole_rings() {
    let json = pieces_write_what_whole_rings_do(&fixture::profile_at(0, fixture::ARCH, true));
    assert!(json.contains("\"profiler_records\""), "{json}");
}

#[test]
fn waits_signals_and_the_critical_path_in_pieces_are_the_whole_rings() {
    let p = waiting();
    let json = pieces_write_what_whole_rings_do(&p);
    let a: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ops = a["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 3, "{json}");
    for op in ops {
        // The pipeline is seen: typed waits, a path through signals, the drops.
        let path = &op["critical_path"];
        assert!(path["matched_waits"].as_u64().unwrap() > 0, "{path}");
        let riscs = op["riscs"].as_array().unwrap();
        let unpack = riscs.iter().find(|r| r["risc"] == "TRISC_0").unwrap();
        assert!(
            unpack["waits"]["CB 0 front (data)"].as_f64().unwrap() > 0.0,
            "{unpack}"
        );
        assert!(
            unpack["profiler_stall_ns"].as_f64().unwrap() > 0.0,
            "{unpack}"
        );
        let pack = riscs.iter().find(|r| r["risc"] == "TRISC_2").unwrap();
        assert!(
            pack["waits"]["CB 2 front (data)"].as_f64().unwrap() > 0.0,
            "{pack}"
        );
    }
    let lost = |op: &serde_json::Value| {
        op["riscs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["records_lost"].as_u64().unwrap())
            .sum::<u64>()
    };
    // 5 in band in the second op, 3 after the ring's last record (the third op's).
    assert_eq!(
        ops.iter().map(lost).collect::<Vec<_>>(),
        [0, 5, 3],
        "{json}"
    );
    // The reader's push signal is in the empty `work` zone at its cycle (inside `push`):
    // the innermost zone open at it, though that zone may come in the piece after it.
    assert!(json.contains("\"zone\": \"work\""), "{json}");
}

/// Issue 41: the analysis takes any cut of a ring's opening order, not only the cuts the
/// pieces' openings make: the marks of a piece's latest cycle are held until no later
/// piece can bring a zone or mark at that cycle (the reader's push signal and mark come
/// before the empty `work` zone at their cycle in opening order, but after it in the walk).
#[test]
fn any_cut_of_the_opening_order_writes_what_whole_rings_do() {
    for (name, p) in [
        ("fixture", fixture::profile_at(0, fixture::ARCH, true)),
        ("waiting", waiting()),
    ] {
        let whole = written(&p, &mut Held(&p));
        for every in [1, 2, 3, 5] {
            let cut = written_by(&p, &mut |p, sinks| {
                crate::sink::pieces::drive_resliced(p, every, sinks)
            });
            let at = format!("{name}, cut every {every} openings");
            assert!(cut.3 > p.ring_count(), "{at}: rings were cut ({})", cut.3);
            assert!(cut.0 == whole.0, "{at}: analysis");
            assert!(cut.2 == whole.2, "{at}: analysis alone");
            assert!(cut.1 == whole.1, "{at}: op report");
        }
    }
}

/// Two holders of one analysis fed every piece in turn (as the driver feeds two sinks) get
/// what one holder fed the whole rings gets: each piece added once.
#[test]
fn two_holders_fed_pieces_in_turn_give_what_one_gives_alone() {
    struct Holder(Shared);
    impl Sink for Holder {
        fn takes_pieces(&self) -> bool {
            self.0.takes_pieces()
        }
        fn ring(&mut self, p: &Profile, v: &RingView) -> crate::Result<()> {
            self.0.add(p, v);
            Ok(())
        }
        fn finish(&mut self, _: &Profile) -> crate::Result<Finished> {
            Ok(Finished::default())
        }
    }
    for p in [fixture::profile_at(0, fixture::ARCH, true), waiting()] {
        let alone = Shared::default();
        crate::sink::drive_rings(&p, &mut Held(&p), &mut [&mut Holder(alone.clone())]).unwrap();
        let want = serde_json::to_string(&*alone.finish(&p)).unwrap();
        for piece in [1, 4] {
            let shared = Shared::default();
            let (mut a, mut b) = (Holder(shared.clone()), Holder(shared.clone()));
            let mut pieces = Pieces::default();
            let mut rings = Cut {
                profile: &p,
                window: 2,
                piece,
            };
            crate::sink::drive_rings(&p, &mut rings, &mut [&mut a, &mut b, &mut pieces]).unwrap();
            assert!(pieces.0 > p.ring_count());
            let got = serde_json::to_string(&*b.0.finish(&p)).unwrap();
            assert!(std::rc::Rc::ptr_eq(&a.0.finish(&p), &b.0.finish(&p)));
            assert!(got == want, "piece {piece}:\n{got}\nvs\n{want}");
        }
    }
}
