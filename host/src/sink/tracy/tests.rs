//! Protocol-level tests of the Tracy stream: a [`test_client`](super::test_client) client connects
//! to a real [`Server`] on an ephemeral loopback port, exactly as `tracy-capture` would, and
//! everything it rebuilds is compared with the readout it came from.

use super::decoder::EventDecoder;
use super::encode::Encoder;
use super::protocol::{MessageSeverity, Query, QueryPacket};
use super::test_client::{capture, Capture, ClientOptions};
use super::*;
use crate::decode::{RecordKind, Records};
use crate::oplog::{OpLog, OpLogEntry, OpRecord, Signpost};
use crate::readout::{Readout, RingId, RingReport};
use crate::resolve::Resolution;
use crate::sites::SiteTable;
use crate::testing::site_json;
use crate::timebase::{ChipTime, Timebase};
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

const SITES: [(&str, u32); 6] = [
    ("outer", 10),
    ("read-tile", 20),
    ("wait", 30),
    ("math", 40),
    ("tick", 50),
    ("tiles", 60),
];

fn ring(chip: u32, x: u8, y: u8, risc: Risc, records: Records) -> RingReport {
    RingReport {
        records,
        ..RingReport::new(RingId {
            chip,
            tile: NocCoord::new(x, y),
            risc,
        })
    }
}

/// Zones (site, start, end) in ring order: children before their parents, as the device ships them.
fn zones(run: u32, list: &[(u16, u64, u64)]) -> Records {
    let mut r = Records::new();
    let t0 = list.iter().map(|z| z.1).min().unwrap_or(0);
    r.push(RecordKind::Run, 0, t0, t0, run as u64, 0, run);
    for &(site, s, e) in list {
        r.push(RecordKind::Zone, site, s, e, 0, 0, run);
    }
    r
}

/// Two chips; nested, touching, identical and zero-length zones; two RISCs of one tile
/// interleaved in time; an unresolved site; a device event, data and a loss report.
fn fixture(extra_zones: usize) -> (Readout, Resolution, Timebase) {
    let mut brisc = zones(
        1,
        &[
            (1, 100, 200),
            (1, 200, 300),
            (0, 100, 400),
            (2, 400, 400),
            (1, 500, 600),
            (1, 500, 600),
        ],
    );
    brisc.push(RecordKind::Event, 4, 250, 250, 0, 0, 1);
    brisc.push(RecordKind::Data, 4, 260, 260, 77, 0, 1);
    brisc.push(RecordKind::Loss, 0, 610, 620, 1 | 1 << 32, 3, 1);
    let mut trisc = zones(1, &[(3, 150, 350), (0, 120, 380)]);
    trisc.push(RecordKind::ValueZone, 5, 360, 370, 42, 0, 1);
    for i in 0..extra_zones as u64 {
        trisc.push(RecordKind::Zone, 3, 1000 + 10 * i, 1005 + 10 * i, 0, 0, 1);
    }
    let rings = vec![
        ring(0, 1, 1, Risc::Brisc, brisc),
        ring(0, 1, 1, Risc::Trisc1, trisc),
        ring(0, 2, 1, Risc::Ncrisc, zones(1, &[(1, 40, 90)])),
        ring(1, 1, 1, Risc::Brisc, zones(2, &[(9, 10, 20), (0, 5, 30)])),
    ];
    let readout = Readout {
        geometry: Geometry {
            arch: Arch::WormholeB0,
            chips: 2,
            tiles_per_chip: 2,
            l1_size: 1 << 20,
        },
        rings,
        issues: vec![],
        bus_bytes: 0,
        tiles: 4,
        unused_tiles: 1,
    };
    let kind = |n: &str| match n {
        "tick" => "event",
        "tiles" => "value_zone",
        _ => "zone",
    };
    let metas: Vec<String> = SITES
        .iter()
        .map(|(n, l)| site_json(kind(n), n, *l))
        .collect();
    let res = Resolution::uniform(
        &readout,
        Arc::new(SiteTable::from_json_list(&metas).unwrap()),
    );
    // Chip 0 at 1 GHz with tile (2,1)'s clock 1000 cycles ahead; chip 1 at 1.35 GHz, 5 s later.
    let mut c0 = ChipTime::nominal(1000);
    c0.tile_cycles_at_reference
        .insert(NocCoord::new(2, 1), 1000.0);
    let mut c1 = ChipTime::nominal(1350);
    c1.reference_ns = 5e9;
    (
        readout,
        res,
        Timebase {
            chips: [(0, c0), (1, c1)].into(),
        },
    )
}

fn oplog() -> OpLog {
    let op = |run_id, device, code: &str, start, end| {
        OpLogEntry::Op(OpRecord::device_op(
            run_id,
            device,
            code,
            (start, end),
            vec![],
        ))
    };
    let mut entries = vec![
        op(1, 0, "Matmul", 10, 70_000),
        op(3, 0, "Relu", 60_000, 80_000),
        op(2, 1, "Add", 1 << 33, (1 << 33) + 9),
    ];
    entries.push(OpLogEntry::Signpost(Signpost {
        name: "warmup-done".into(),
        device: 0,
        host_ns: 75_000,
    }));
    OpLog {
        path: "/tmp/ops.jsonl".into(),
        entries,
        inputs: crate::inputs::Inputs::none(),
    }
}

fn stream(extra_zones: usize) -> (TracyStream, Readout, Resolution, Timebase) {
    let (readout, res, tb) = fixture(extra_zones);
    let s = TracyStream::build(
        &readout,
        &res,
        Some(&oplog()),
        &tb,
        &StreamOptions::default(),
    )
    .unwrap();
    (s, readout, res, tb)
}

fn local() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

fn opts(timeout_ms: u64) -> ServeOptions {
    ServeOptions {
        addr: local(),
        timeout: Some(Duration::from_millis(timeout_ms)),
        stall: Duration::from_secs(20),
        ..Default::default()
    }
}

/// Serves `s` on an ephemeral port while `clients` run one after another.
fn serve_to<T>(
    s: &TracyStream,
    o: &ServeOptions,
    clients: impl FnOnce(SocketAddr) -> T,
) -> (Result<ServeReport, ServeError>, T) {
    let server = Server::bind(o.addr).unwrap();
    let addr = server.local_addr();
    std::thread::scope(|scope| {
        let h = scope.spawn(|| server.serve(s, o, |_| {}));
        let t = clients(addr);
        (h.join().unwrap(), t)
    })
}

/// (lane, context, name, file, line, start, end) of every zone, as the readout says.
type ZoneKey = (String, String, String, String, u32, i64, i64);

fn expected(readout: &Readout, res: &Resolution, tb: &Timebase) -> Vec<ZoneKey> {
    let mut out = Vec::new();
    for (ri, ring) in readout.rings.iter().enumerate() {
        let (id, r) = (ring.id, &ring.records);
        let ctx = format!("Device {}, core {}", id.chip, id.tile);
        for i in (0..r.len()).filter(|&i| r.kind[i].is_zone()) {
            let ns = |c| tb.host_ns(id.chip, id.tile, c).unwrap().round() as i64;
            let (name, file, line) = match res.site(ri, r.run_at(i), r.site[i]) {
                Some(m) => (m.name.clone(), m.file.clone(), m.line),
                None => (
                    format!("unresolved-site-{}", r.site[i]),
                    "(unresolved)".into(),
                    0,
                ),
            };
            let lane = format!("{} {}:{}", id.risc.name(), id.chip, id.tile);
            out.push((
                lane,
                ctx.clone(),
                name,
                file,
                line,
                ns(r.start_at(i)),
                ns(r.end_at(i)),
            ));
        }
    }
    out.sort();
    out
}

fn received(c: &Capture) -> Vec<ZoneKey> {
    let d = &c.decoded;
    let mut out: Vec<ZoneKey> = d
        .gpu_zones
        .iter()
        .map(|z| {
            let (name, file, line) = c.site(z);
            let ctx = c.context_name(z.context.unwrap()).to_string();
            (
                c.thread_name(z.thread).into(),
                ctx,
                name.into(),
                file.into(),
                line,
                c.host_ns(z.start),
                c.host_ns(z.end),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_zone_arrives_once_with_its_name_site_lane_and_host_time() {
    let (s, readout, res, tb) = stream(0);
    assert!(s.issues.is_empty(), "{:?}", s.issues);
    let (report, cap) = serve_to(&s, &opts(20_000), |addr| {
        capture(addr, &ClientOptions::default()).unwrap()
    });
    let report = report.unwrap();
    assert!(cap.complete, "{:?}", cap.errors());
    assert!(cap.errors().is_empty(), "{:#?}", cap.errors());
    assert_eq!(received(&cap), expected(&readout, &res, &tb));
    let d = &cap.decoded;
    assert_eq!(
        (d.gpu_zones.len() as u64, report.transfer.zones),
        (s.summary.zones, s.summary.zones)
    );
    assert_eq!(cap.welcome.init_begin, s.summary.base_ns);
    assert_eq!(
        (cap.welcome.program_name.as_str(), cap.welcome.timer_mul),
        ("ttprof", 1.0)
    );

    // Nesting: BRISC's `outer` holds read-tile and the touching second read-tile; the
    // identical pair nests (later shipped = outer); TRISC_1 nests inside its own outer.
    let by = |lane: &str, name: &str| {
        d.gpu_zones
            .iter()
            .enumerate()
            .filter(|(_, z)| cap.thread_name(z.thread) == lane && cap.site(z).0 == name)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    let outer = by("BRISC 0:(1,1)", "outer")[0];
    let reads = by("BRISC 0:(1,1)", "read-tile");
    assert_eq!(
        reads
            .iter()
            .map(|&i| d.gpu_zones[i].parent)
            .collect::<Vec<_>>(),
        [Some(outer), Some(outer), None, Some(reads[2])]
    );
    assert_eq!(
        d.gpu_zones[by("TRISC_1 0:(1,1)", "math")[0]].parent,
        Some(by("TRISC_1 0:(1,1)", "outer")[0])
    );
    for z in &d.gpu_zones {
        if let Some(p) = z.parent {
            let p = &d.gpu_zones[p];
            assert!(
                p.thread == z.thread && p.start <= z.start && z.end <= p.end,
                "{z:?} in {p:?}"
            );
        }
        assert_eq!(
            (z.cpu_start, z.cpu_end),
            (z.start, z.end),
            "CPU-side times equal the device times"
        );
    }

    // Contexts: one per tile, GPU time never going back, period 1, per-zone lanes.
    let names: Vec<&str> = d.contexts.keys().map(|&c| cap.context_name(c)).collect();
    assert_eq!(
        names,
        [
            "Device 0, core (1,1)",
            "Device 0, core (2,1)",
            "Device 1, core (1,1)"
        ]
    );
    assert!(d
        .contexts
        .values()
        .all(|c| c.backwards == 0 && c.wraps == 0 && c.thread == 0 && c.kind == 7));

    // One source location per site, not per zone: BRISC's 6 zones use 3 sites.
    let sites = s.srclocs.len() as u64;
    assert_eq!(d.queries[&Query::SourceLocation], sites);
    assert_eq!(
        sites,
        5 + 1 + 3,
        "outer, read-tile, wait, math, tiles + unresolved-site-9 + 3 op codes"
    );
    assert!(sites < s.summary.zones + 3);
    assert_eq!(report.transfer.queries["SourceLocation"], sites);
    assert_eq!(
        report.transfer.queries["ThreadString"],
        4 + 2 + 1,
        "4 lanes, 2 host rows of device 0, 1 of device 1"
    );

    // Ops: CPU zones with host times on per-device rows; the overlapping launch gets a row.
    let ops: BTreeMap<&str, (&str, i64, i64, &str)> = d
        .cpu_zones
        .iter()
        .map(|z| {
            (
                cap.site(z).0,
                (
                    cap.thread_name(z.thread),
                    cap.host_ns(z.start),
                    cap.host_ns(z.end),
                    z.text.as_deref().unwrap_or(""),
                ),
            )
        })
        .collect();
    assert_eq!(
        ops["Matmul"],
        ("Ops: device 0", 10, 70_000, "op=Matmul run=1 device=0")
    );
    assert_eq!(
        ops["Relu"],
        ("Ops: device 0 #2", 60_000, 80_000, "op=Relu run=3 device=0")
    );
    assert_eq!(
        ops["Add"],
        (
            "Ops: device 1",
            1 << 33,
            (1 << 33) + 9,
            "op=Add run=2 device=1"
        )
    );

    // Messages: the signpost, the device event and data on their lane, the loss as a warning.
    let msgs: Vec<(&str, i64, &str, Option<MessageSeverity>)> = d
        .messages
        .iter()
        .map(|m| {
            (
                cap.thread_name(m.thread),
                cap.host_ns(m.time),
                m.text.as_str(),
                m.severity,
            )
        })
        .collect();
    assert!(msgs.contains(&(
        "Ops: device 0",
        75_000,
        "warmup-done",
        Some(MessageSeverity::Info)
    )));
    assert!(msgs.contains(&("BRISC 0:(1,1)", 250, "tick", Some(MessageSeverity::Info))));
    assert!(msgs.contains(&(
        "BRISC 0:(1,1)",
        260,
        "tick = 77",
        Some(MessageSeverity::Info)
    )));
    assert!(msgs.contains(&(
        "BRISC 0:(1,1)",
        610,
        "3 record(s) dropped: ring full",
        Some(MessageSeverity::Warning)
    )));
    // A value zone's value (it once reached only the device CSV).
    assert!(
        msgs.contains(&(
            "TRISC_1 0:(1,1)",
            360,
            "tiles: value 42",
            Some(MessageSeverity::Info)
        )),
        "{msgs:?}"
    );
    assert!(report.attempts.is_empty());
}

#[test]
fn device_zones_of_one_context_go_out_in_time_order_across_lanes() {
    // BRISC and TRISC_1 of tile (1,1) interleave; the second chip's times are 5 s later.
    let (s, ..) = stream(0);
    let mut events = Vec::new();
    let mut e = emit::Emitter::new(&s);
    while e.next(&mut events).unwrap() {}
    let mut d = EventDecoder::new(s.summary.base_ns);
    d.frame(&events).unwrap();
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let starts: Vec<i64> = d
        .gpu_zones
        .iter()
        .filter(|z| z.context == Some(0))
        .map(|z| z.start)
        .collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    let lanes: std::collections::BTreeSet<u32> = d
        .gpu_zones
        .iter()
        .filter(|z| z.context == Some(0))
        .map(|z| z.thread)
        .collect();
    assert_eq!(lanes.len(), 2);
    assert!(d.contexts.values().all(|c| c.backwards == 0));
}

#[test]
fn cpu_zone_times_round_trip_in_every_delta_form() {
    let mut enc = Encoder::new();
    let mut b = Vec::new();
    enc.thread_context(&mut b, 7);
    let times = [-5i64, 10, 70_000, 70_000 + (1 << 32), 70_000 + (1 << 32)];
    for (i, &t) in times.iter().enumerate() {
        enc.zone_begin(&mut b, i as u64 + 1, t);
    }
    for &t in times.iter().rev() {
        enc.zone_end(&mut b, t + 3);
    }
    let mut d = EventDecoder::new(0);
    d.frame(&b).unwrap();
    assert_eq!(
        d.cpu_zones.iter().map(|z| z.start).collect::<Vec<_>>(),
        times
    );
    assert_eq!(
        d.cpu_zones
            .iter()
            .map(|z| z.end - z.start)
            .collect::<Vec<_>>(),
        [3; 5]
    );
}

#[test]
fn a_tool_with_another_protocol_version_is_refused_and_the_next_one_served() {
    let (s, ..) = stream(0);
    let (report, (old, garbage, good)) = serve_to(&s, &opts(20_000), |addr| {
        let old = capture(
            addr,
            &ClientOptions {
                protocol_version: 76,
                ..Default::default()
            },
        );
        let garbage = {
            use std::io::{Read, Write};
            let mut t = std::net::TcpStream::connect(addr).unwrap();
            t.write_all(b"GET / HTTP/1").unwrap(); // 12 bytes, as many as a handshake
            let mut b = Vec::new();
            t.read_to_end(&mut b).map(|_| b)
        };
        (
            old,
            garbage,
            capture(addr, &ClientOptions::default()).unwrap(),
        )
    });
    let e = old.unwrap_err();
    assert!(e.contains("ProtocolMismatch"), "{e}");
    assert_eq!(
        garbage.unwrap(),
        b"",
        "a non-Tracy peer is closed on without a reply"
    );
    assert!(good.complete && good.errors().is_empty());
    let report = report.unwrap();
    assert_eq!(report.attempts.len(), 2);
    assert!(
        report.attempts[0].what.contains("protocol 76") && report.attempts[0].what.contains("0.14"),
        "{}",
        report.attempts[0]
    );
    assert!(
        report.attempts[1].what.contains("not a Tracy capture tool"),
        "{}",
        report.attempts[1]
    );
}

#[test]
fn nobody_connecting_times_out_with_a_message_that_says_how_to_capture() {
    let (s, ..) = stream(0);
    let (report, ()) = serve_to(&s, &opts(300), |_| ());
    let e = report.unwrap_err();
    let msg = e.to_string();
    let ServeError::Timeout { addr, attempts, .. } = &e else {
        panic!("{msg}")
    };
    assert!(attempts.is_empty());
    assert!(
        msg.contains("no Tracy capture tool received the stream within"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "tracy-capture -o out.tracy -a 127.0.0.1 -p {}",
            addr.port()
        )),
        "{msg}"
    );
}

#[test]
fn a_tool_leaving_mid_stream_is_reported_and_the_next_one_gets_everything() {
    let (s, readout, res, tb) = stream(40_000);
    let (report, (partial, full)) = serve_to(&s, &opts(20_000), |addr| {
        let partial = capture(
            addr,
            &ClientOptions {
                stop_after_frames: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
        (partial, capture(addr, &ClientOptions::default()).unwrap())
    });
    assert!(!partial.complete && (partial.decoded.gpu_zones.len() as u64) < s.summary.zones);
    assert!(
        full.complete && full.errors().is_empty(),
        "{:?}",
        full.errors()
    );
    assert!(full.decoded.frames > 3, "the stream spans several frames");
    assert_eq!(received(&full), expected(&readout, &res, &tb));
    let report = report.unwrap();
    assert_eq!(report.attempts.len(), 1);
    let what = &report.attempts[0].what;
    assert!(
        what.contains("closed the connection") || what.contains("connection lost"),
        "{what}"
    );
    assert!(
        what.contains(&format!("of {} zones sent", s.summary.zones)),
        "{what}"
    );
}

#[test]
fn a_tool_leaving_mid_stream_with_nobody_after_it_times_out_naming_it() {
    let (s, ..) = stream(40_000);
    let (report, _) = serve_to(&s, &opts(500), |addr| {
        capture(
            addr,
            &ClientOptions {
                stop_after_frames: Some(1),
                ..Default::default()
            },
        )
    });
    let msg = report.unwrap_err().to_string();
    assert!(
        msg.contains("no Tracy capture tool received the stream")
            && msg.contains("connection from 127.0.0.1"),
        "{msg}"
    );
}

/// Connects and sends a valid handshake, then reads nothing: the connection stays open
/// while the returned socket lives.
fn silent_tool(addr: SocketAddr) -> std::net::TcpStream {
    use std::io::Write;
    let mut t = std::net::TcpStream::connect(addr).unwrap();
    t.write_all(&protocol::SHIBBOLETH).unwrap();
    t.write_all(&protocol::PROTOCOL_VERSION.to_le_bytes())
        .unwrap();
    t
}

/// A client that reads 100 bytes of the stream, then confirms the end: not a capture.
#[test]
fn a_tool_that_confirms_the_end_without_reading_the_stream_is_not_a_complete_capture() {
    use std::io::{Read, Write};
    let (s, ..) = stream(0);
    let (report, _) = serve_to(&s, &opts(1500), |addr| {
        let mut t = silent_tool(addr);
        let mut b = [0u8; 100];
        t.read_exact(&mut b).unwrap();
        // Everything is queued in the socket by now (a small stream): the confirmation
        // comes after the server's Terminate was sent, as a real tool's would.
        std::thread::sleep(Duration::from_millis(300));
        t.write_all(&QueryPacket::new(Query::Terminate, 0, 0).to_bytes())
            .unwrap();
        let _ = t.read_to_end(&mut Vec::new());
    });
    let e = report.expect_err("a client that read 100 bytes did not capture the stream");
    let msg = e.to_string();
    assert!(
        msg.contains("did not read the whole stream") || msg.contains("ended the capture early"),
        "{msg}"
    );
}

#[test]
fn a_tool_that_stops_reading_is_cut_off_at_the_timeout_and_named() {
    // The stall limit (20 s) is far longer than the timeout: only the deadline can end the
    // serve while the tool holds the connection open without reading (before, the timeout
    // was not looked at while a tool was connected: the stall limit ended it, and the wait
    // started again).
    let (s, ..) = stream(40_000);
    let (report, tool) = serve_to(&s, &opts(1000), silent_tool);
    let peer = tool.local_addr().unwrap();
    let e = report.unwrap_err();
    let msg = e.to_string();
    let ServeError::Timeout { attempts, .. } = &e else {
        panic!("{msg}")
    };
    assert_eq!(attempts.len(), 1, "{msg}");
    assert_eq!(attempts[0].peer, peer, "{msg}");
    assert!(
        attempts[0]
            .what
            .contains("the time limit ran out before it confirmed the end"),
        "{msg}"
    );
    assert!(
        attempts[0]
            .what
            .contains(&format!("of {} zones sent", s.summary.zones)),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("connection from {peer}: the time limit ran out")),
        "{msg}"
    );
}

#[test]
fn a_connection_that_never_sends_its_handshake_does_not_hold_up_the_next_tool() {
    // The handshake limit (60 s) is far longer than the serve's timeout (30 s): the good
    // tool is served only if its handshake is read while the idle connection is open (before,
    // connections were taken one at a time: the idle one held the server for its handshake
    // limit).
    let (s, ..) = stream(0);
    let o = ServeOptions {
        handshake: Duration::from_secs(60),
        ..opts(30_000)
    };
    let (report, (mut idle, good)) = serve_to(&s, &o, |addr| {
        let idle = std::net::TcpStream::connect(addr).unwrap();
        (idle, capture(addr, &ClientOptions::default()).unwrap())
    });
    let report = report.unwrap();
    assert!(
        good.complete && good.errors().is_empty(),
        "{:?}",
        good.errors()
    );
    assert!(
        report.attempts.is_empty(),
        "the idle connection was never waited out: {:?}",
        report.attempts
    );
    // The serve closed it when it returned.
    use std::io::Read;
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(idle.read(&mut [0u8; 16]).unwrap(), 0);
}

#[test]
fn connections_without_a_handshake_are_refused_after_the_handshake_limit_or_named_at_the_timeout() {
    let (s, ..) = stream(0);
    let o = ServeOptions {
        handshake: Duration::from_millis(100),
        ..opts(60_000)
    };
    let (report, good) = serve_to(&s, &o, |addr| {
        // Two idle connections, one of which sends half a handshake, are refused ...
        let idle = std::net::TcpStream::connect(addr).unwrap();
        let mut half = std::net::TcpStream::connect(addr).unwrap();
        std::io::Write::write_all(&mut half, &protocol::SHIBBOLETH[..6]).unwrap();
        use std::io::Read;
        for mut t in [idle, half] {
            t.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            assert_eq!(t.read(&mut [0u8; 16]).unwrap(), 0, "closed without a reply");
        }
        // ... and the next tool is served.
        capture(addr, &ClientOptions::default()).unwrap()
    });
    assert!(good.complete);
    let attempts = report.unwrap().attempts;
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert!(
        attempts
            .iter()
            .all(|a| a.what.starts_with("no Tracy handshake within 100ms")),
        "{attempts:?}"
    );
    assert!(
        attempts.iter().any(|a| a.what.contains("(6 of 12 bytes)")),
        "{attempts:?}"
    );
    // One still waiting for its handshake when the timeout comes is named in the error.
    let o = ServeOptions {
        handshake: Duration::from_secs(60),
        ..opts(300)
    };
    let (report, _idle) = serve_to(&s, &o, |addr| std::net::TcpStream::connect(addr).unwrap());
    let msg = report.unwrap_err().to_string();
    assert!(
        msg.contains("before the time limit ran out but sent no Tracy handshake"),
        "{msg}"
    );
}

/// Connects and sends a valid handshake like [`silent_tool`], then waits (at most a minute,
/// a hang guard) for the server's answer and checks it is a welcome: a tool the server is
/// serving that reads nothing more.
fn welcomed_idle_tool(addr: SocketAddr) -> std::net::TcpStream {
    use std::io::Read;
    let mut t = silent_tool(addr);
    t.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut b = [0u8; 1];
    let status = t
        .read_exact(&mut b)
        .ok()
        .and_then(|()| protocol::Handshake::from_u8(b[0]));
    assert_eq!(status, Some(protocol::Handshake::Welcome));
    t
}

#[test]
fn idle_tools_that_sent_their_handshake_do_not_hold_up_the_next_tool() {
    // Two tools send a valid handshake and then read nothing, a third connection sends
    // nothing at all. The stall and handshake limits (10 min) are far beyond the serve's
    // timeout (40 s, only a hang guard): the good tool gets everything only if it is served
    // beside the idle ones (before, sessions ran one at a time: an idle tool held the server
    // for the stall limit, 30 s by default, and two locked the real tool out).
    let (s, readout, res, tb) = stream(0);
    let o = ServeOptions {
        stall: Duration::from_secs(600),
        handshake: Duration::from_secs(600),
        ..opts(40_000)
    };
    let (report, (idle, good)) = serve_to(&s, &o, |addr| {
        // The first one's session has started once its welcome comes.
        let idle = vec![
            welcomed_idle_tool(addr),
            silent_tool(addr),
            std::net::TcpStream::connect(addr).unwrap(),
        ];
        (idle, capture(addr, &ClientOptions::default()))
    });
    let good = good.expect("the good tool is served beside the idle ones");
    assert!(
        good.complete && good.errors().is_empty(),
        "{:?}",
        good.errors()
    );
    assert_eq!(received(&good), expected(&readout, &res, &tb));
    let report = report.unwrap();
    assert_eq!(report.transfer.zones, s.summary.zones);
    // The two idle sessions were cut off once the good tool had everything (the connection
    // without a handshake was never a session).
    let peers: Vec<_> = idle[..2].iter().map(|t| t.local_addr().unwrap()).collect();
    assert_eq!(
        report.attempts.iter().map(|a| a.peer).collect::<Vec<_>>(),
        peers,
        "{:?}",
        report.attempts
    );
    assert!(
        report
            .attempts
            .iter()
            .all(|a| a.what.contains("cut off when") && a.what.contains("completed the capture")),
        "{:?}",
        report.attempts
    );
}

#[test]
fn a_tool_beyond_the_session_limit_is_refused_as_not_available_and_served_once_one_leaves() {
    let (s, ..) = stream(0);
    let o = ServeOptions {
        stall: Duration::from_secs(600),
        ..opts(40_000)
    };
    let (report, (idle, refused, good)) = serve_to(&s, &o, |addr| {
        // As many idle tools as there may be sessions, each being served (welcomed) ...
        let mut idle: Vec<_> = (0..server::MAX_SESSIONS)
            .map(|_| welcomed_idle_tool(addr))
            .collect();
        // ... so the next is refused with Tracy's "not available" ...
        let refused = capture(addr, &ClientOptions::default());
        // ... until one of them leaves (its session ends once the server sees it gone:
        // retried until then, a minute at most).
        let gone = idle.remove(0).local_addr().unwrap();
        let hang_guard = std::time::Instant::now() + Duration::from_secs(60);
        let good = loop {
            match capture(addr, &ClientOptions::default()) {
                Err(e) if e.contains("NotAvailable") && std::time::Instant::now() < hang_guard => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                r => break r,
            }
        };
        (idle, (refused, gone), good)
    });
    let (refused, gone) = refused;
    let e = refused.unwrap_err();
    assert!(e.contains("NotAvailable"), "{e}");
    let good = good.unwrap();
    assert!(
        good.complete && good.errors().is_empty(),
        "{:?}",
        good.errors()
    );
    let report = report.unwrap();
    let a = &report.attempts;
    assert!(
        a.iter().any(|a| a.what.starts_with(&format!(
            "{} capture tools are being served already, the most at once (",
            server::MAX_SESSIONS
        ))),
        "{a:?}"
    );
    assert!(
        a.iter()
            .any(|a| a.peer == gone && !a.what.contains("cut off when")),
        "the idle tool that left is named: {a:?}"
    );
    // The idle tools still connected were cut off at the end.
    for t in &idle {
        let peer = t.local_addr().unwrap();
        assert!(
            a.iter()
                .any(|a| a.peer == peer && a.what.contains("cut off when")),
            "{peer}: {a:?}"
        );
    }
}

#[test]
fn layout_limits_and_bad_nesting_are_explained() {
    // 300 tiles on one chip: grouped two per context.
    let mut readout = fixture(0).0;
    readout.rings = (0..300u32)
        .map(|i| {
            ring(
                0,
                (i % 20) as u8,
                (i / 20) as u8,
                Risc::Brisc,
                zones(1, &[(0, 1, 2)]),
            )
        })
        .collect();
    let res = Resolution::uniform(
        &readout,
        Arc::new(SiteTable::from_json_list(&[site_json("zone", "z", 1)]).unwrap()),
    );
    let tb = Timebase::nominal(Arch::WormholeB0, 1);
    let s = TracyStream::build(&readout, &res, None, &tb, &StreamOptions::default()).unwrap();
    assert_eq!(
        (
            s.summary.contexts,
            s.summary.tiles_per_context,
            s.summary.lanes
        ),
        (150, 2, 300)
    );
    // A zone overlapping its parent partially is cut, and said so; a chip without a clock
    // mapping is reported, not streamed.
    readout.rings = vec![
        ring(0, 1, 1, Risc::Brisc, zones(1, &[(0, 0, 10), (0, 5, 15)])),
        ring(3, 1, 1, Risc::Brisc, zones(1, &[(0, 0, 1)])),
    ];
    let s = TracyStream::build(&readout, &res, None, &tb, &StreamOptions::default()).unwrap();
    assert_eq!((s.summary.zones, s.summary.clipped_zones), (2, 1));
    let issues: Vec<String> = s.issues.iter().map(|i| i.to_string()).collect();
    assert!(
        issues
            .iter()
            .any(|i| i.contains("overlap their parent partially")),
        "{issues:?}"
    );
    assert!(
        issues
            .iter()
            .any(|i| i.contains("chip 3 has no clock mapping")),
        "{issues:?}"
    );
}

#[test]
fn op_zone_texts_are_one_line_without_commas_or_quotes() {
    // Attributes as tt-metal logs them: strings with commas and quotes, nested JSON, a
    // multi-line program config.
    let mut log = oplog();
    let attributes = serde_json::json!({
        "tiles": 4,
        "program_config": "MatmulMultiCoreReuseProgramConfig(compute_with_storage_grid_size=(x=8,y=8),\nin0_block_w=2)",
        "memory_config": {"buffer_type": "L1", "shard_spec": [1, 2]},
        "name": "say \"hi\"\r\n\tnow\u{2028}",
        "with,comma": true,
    });
    for e in &mut log.entries {
        if let OpLogEntry::Op(o) = e {
            o.attributes = attributes.as_object().unwrap().clone();
            o.op_code = format!("{},\"x\"", o.op_code);
        }
    }
    let (readout, res, tb) = fixture(0);
    let s = TracyStream::build(&readout, &res, Some(&log), &tb, &StreamOptions::default()).unwrap();
    let texts: Vec<String> = s
        .host
        .iter()
        .flat_map(|r| s.records.all::<plan::HostZone>(r.span))
        .map(|z| z.text)
        .collect();
    assert_eq!(texts.len(), 3);
    for t in &texts {
        assert!(
            !t.contains(['\n', '\r', ',', '"']) && !t.chars().any(char::is_control),
            "{t:?}"
        );
    }
    let matmul = texts
        .iter()
        .find(|t| t.starts_with("op=Matmul;'x' run=1 device=0 "))
        .unwrap();
    assert!(matmul.contains(" tiles=4"), "{matmul}");
    assert!(matmul.contains(" program_config=MatmulMultiCoreReuseProgramConfig(compute_with_storage_grid_size=(x=8;y=8); in0_block_w=2)"), "{matmul}");
    assert!(
        matmul.contains(" memory_config={'buffer_type':'L1';'shard_spec':[1;2]}"),
        "{matmul}"
    );
    assert!(matmul.contains(" name=say 'hi'   now "), "{matmul}");
    assert!(matmul.contains(" with;comma=true"), "{matmul}");
}

/// The order Tracy draws a GPU context's rows in: the iteration order of the context's
/// thread table (`GpuCtxData::threadData`, a robin_hood flat map) after `tids` were inserted
/// in this order. A model of `server/tracy_robin_hood.h` for a table of up to 6 keys (8
/// buckets, never resized): `hash_int`, `keyToIdx`, `insertKeyPrepareEmptySpot`, `shiftUp`.
fn tracy_row_order(tids: &[u32]) -> Vec<u32> {
    assert!(tids.len() <= 6, "a bigger table is resized");
    let hash = super::layout::tracy_hash;
    // 8 buckets, then the overflow area; info 0 = empty, else 32 * (distance + 1) + 5 hash bits.
    let (mut info, mut keys) = ([0u64; 16], [0u32; 16]);
    for &t in tids {
        let h = hash(t);
        let (mut idx, mut inf) = (((h >> 5) & 7) as usize, 32 + (h & 31));
        while inf < info[idx] {
            idx += 1;
            inf += 32;
        }
        while inf == info[idx] {
            idx += 1;
            inf += 32;
        }
        let empty = (idx..).find(|&k| info[k] == 0).unwrap();
        for k in (idx..empty).rev() {
            info[k + 1] = info[k] + 32;
            keys[k + 1] = keys[k];
        }
        (info[idx], keys[idx]) = (inf, t);
    }
    (0..16).filter(|&k| info[k] != 0).map(|k| keys[k]).collect()
}

#[test]
fn every_tile_shows_its_risc_rows_in_risc_order() {
    // Every worker tile of two Wormhole chips; each RISC's zone starts at a different time
    // per tile (so the rows reach Tracy in scrambled orders); some tiles lack some RISCs.
    let arch = Arch::WormholeB0;
    let (cols, rows) = arch.worker_grid();
    let mut rings = Vec::new();
    for chip in 0..2u32 {
        for (i, tile) in (0..rows)
            .flat_map(|r| (0..cols).map(move |c| arch.worker_noc(c, r).unwrap()))
            .enumerate()
        {
            for risc in Risc::ALL {
                if i % 7 == 3 && matches!(risc, Risc::Ncrisc | Risc::Trisc0) {
                    continue;
                }
                let start = 10 * ((risc.index() * 7 + i * 3) % 5) as u64;
                rings.push(ring(
                    chip,
                    tile.x,
                    tile.y,
                    risc,
                    zones(1, &[(0, start, start + 100)]),
                ));
            }
        }
    }
    let mut readout = fixture(0).0;
    readout.geometry = Geometry {
        arch,
        chips: 2,
        tiles_per_chip: (cols * rows) as u32,
        l1_size: arch.l1_size(),
    };
    readout.rings = rings;
    let res = Resolution::uniform(
        &readout,
        Arc::new(SiteTable::from_json_list(&[site_json("zone", "z", 1)]).unwrap()),
    );
    let s = TracyStream::build(
        &readout,
        &res,
        None,
        &Timebase::nominal(arch, 2),
        &StreamOptions::default(),
    )
    .unwrap();
    let short = (0..80).filter(|i| i % 7 == 3).count();
    assert_eq!(
        (s.contexts.len(), s.lanes.len()),
        (160, 2 * (80 * 5 - short * 2))
    );
    for c in &s.contexts {
        // Threads enter the table at their first zone, in the order the stream sends them.
        let mut lanes: Vec<(i64, usize)> = s
            .lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.context == c.id)
            .map(|(i, l)| (l.first, i))
            .collect();
        lanes.sort();
        let order = tracy_row_order(
            &lanes
                .iter()
                .map(|&(_, i)| s.lanes[i].thread)
                .collect::<Vec<_>>(),
        );
        let names: Vec<&str> = order
            .iter()
            .map(|t| s.threads[t].split(' ').next().unwrap())
            .collect();
        let mut expected: Vec<&str> = names.clone();
        expected.sort_by_key(|n| Risc::from_name(n).unwrap().index());
        assert_eq!(names, expected, "{}", c.name);
        assert!(
            names.len() == 5 || names == ["BRISC", "TRISC_1", "TRISC_2"],
            "{}: {names:?}",
            c.name
        );
    }
}

/// Issue 41 (Medium): device times went to Tracy as `f64` ns rounded, a ns or more off from
/// 2^53 ns on (at 2^62 cycles by up to a thousand): zones and messages of a chip up for
/// months arrive at their exact whole ns.
#[test]
fn device_times_arrive_exactly_at_large_cycle_counts() {
    let offset = 1u64 << 62;
    let (mut readout, res, tb) = fixture(0);
    for ring in &mut readout.rings {
        ring.records = ring.records.shifted(offset);
    }
    let s = TracyStream::build(
        &readout,
        &res,
        Some(&oplog()),
        &tb,
        &StreamOptions::default(),
    )
    .unwrap();
    assert!(s.issues.is_empty(), "{:?}", s.issues);
    let (report, cap) = serve_to(&s, &opts(20_000), |addr| {
        capture(addr, &ClientOptions::default()).unwrap()
    });
    report.unwrap();
    assert!(
        cap.complete && cap.errors().is_empty(),
        "{:?}",
        cap.errors()
    );
    // Chip 0 at 1 GHz (tile (2,1) 1000 cycles ahead); chip 1 at 1350 MHz (27 cycles are
    // 20 ns) from 5 s: nearest whole ns in integers (27 is odd: no halves).
    let exact = |id: RingId, c: u64| -> i64 {
        let c = c as i128;
        let ns = match (id.chip, id.tile == NocCoord::new(2, 1)) {
            (0, true) => c - 1000,
            (0, false) => c,
            _ => 5_000_000_000 + (40 * c + 27) / 54,
        };
        ns as i64
    };
    let mut want: Vec<(String, i64, i64)> = Vec::new();
    for ring in &readout.rings {
        let (id, r) = (ring.id, &ring.records);
        for i in (0..r.len()).filter(|&i| r.kind[i].is_zone()) {
            let lane = format!("{} {}:{}", id.risc.name(), id.chip, id.tile);
            want.push((lane, exact(id, r.start_at(i)), exact(id, r.end_at(i))));
        }
    }
    want.sort();
    let mut got: Vec<(String, i64, i64)> = received(&cap)
        .into_iter()
        .map(|z| (z.0, z.5, z.6))
        .collect();
    got.sort();
    assert_eq!(got, want);
    let base = 1i64 << 62;
    let msgs: Vec<(i64, &str)> = cap
        .decoded
        .messages
        .iter()
        .map(|m| (cap.host_ns(m.time), m.text.as_str()))
        .collect();
    for m in [
        (base + 250, "tick"),
        (base + 260, "tick = 77"),
        (base + 610, "3 record(s) dropped: ring full"),
        (base + 360, "tiles: value 42"),
    ] {
        assert!(msgs.contains(&m), "{m:?} in {msgs:?}");
    }
}

/// A ring given in pieces (any window, any piece size) streams what the whole ring streams:
/// the same events and messages in the same order (a value zone's value and an event at the
/// same time included), the same tables, counts and issues.
#[test]
fn rings_in_pieces_stream_what_whole_rings_do() {
    use crate::profile::Profile;
    use crate::ring_source::{Cut, Held, RingSource};
    let (mut readout, res, tb) = fixture(40);
    // An event at the value zone's start, on its lane; a loss on the first lane.
    readout.rings[1]
        .records
        .push(RecordKind::Event, 4, 360, 360, 0, 0, 1);
    readout.rings[0]
        .records
        .push(RecordKind::Loss, 0, 250, 250, 1 | 1 << 32, 2, 1);
    let p = Profile::resolved(readout, res, Some(oplog()), tb);
    let build = |rings: &mut dyn RingSource| {
        let mut b = TracySink::new(StreamOptions::default());
        crate::sink::drive_rings(&p, rings, &mut [&mut b]).unwrap();
        b.into_stream().unwrap()
    };
    let bytes = TracyStream::events_for_tests;
    let whole = build(&mut Held(&p));
    assert!(whole.lanes.iter().all(|l| l.events.len() == 1));
    for window in [1, 2, 5, 64] {
        for piece in [1, 3, 7, 1_000] {
            let cut = build(&mut Cut {
                profile: &p,
                window,
                piece,
            });
            let at = format!("window {window}, piece {piece}");
            assert!(bytes(&cut) == bytes(&whole), "{at}: the events differ");
            assert_eq!(cut.tables_for_tests(), whole.tables_for_tests(), "{at}");
            if piece < 10 && window < 10 {
                // Openings given before the ring's end: a lane written in several runs.
                assert!(cut.lanes.iter().any(|l| l.events.len() > 1), "{at}");
            }
        }
    }
}
