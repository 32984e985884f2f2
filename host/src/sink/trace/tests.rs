use super::*;
use crate::model::fixture::{self, times, TILES};
use crate::timebase::Timebase;
use crate::timeline::Zone;
use riscv_linker::Risc;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

fn timeline() -> Timeline {
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    Timeline::build(
        &r,
        &res,
        Some(&fixture::oplog()),
        &Timebase::nominal(fixture::ARCH, 1),
    )
}

fn events(t: &Timeline) -> (Vec<Value>, TraceStats) {
    let mut out = Vec::new();
    let stats = write(&mut out, t).unwrap();
    let v: Value = serde_json::from_slice(&out).expect("valid JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    (
        v["traceEvents"]
            .as_array()
            .expect("traceEvents array")
            .clone(),
        stats,
    )
}

type Thread = (u64, u64);

/// Checks what every consumer needs, the way Tracy's `import-chrome` reads the file: numeric
/// `pid`/`tid` below 2^32, a `ph`, numeric `ts`, names on `B` and `i`, `loc` as `file:line`;
/// named threads and processes. Returns each thread's zones as (name, start ns, end ns)
/// after replaying `B`/`E` in (stable) time order, which is what Perfetto and Tracy do.
fn check_structure(ev: &[Value]) -> BTreeMap<Thread, Vec<(String, u64, u64)>> {
    let mut names: HashMap<Thread, String> = HashMap::new();
    let mut processes: HashMap<u64, String> = HashMap::new();
    let mut timed: Vec<(u64, usize, Thread, &Value)> = Vec::new();
    for (k, e) in ev.iter().enumerate() {
        let ph = e["ph"].as_str().expect("ph");
        let pid = e["pid"].as_u64().expect("numeric pid");
        let tid = e["tid"].as_u64().expect("numeric tid");
        assert!(pid <= u32::MAX as u64 && tid <= u32::MAX as u64);
        match ph {
            "M" => {
                let arg = &e["args"];
                match e["name"].as_str().unwrap() {
                    "thread_name" => {
                        let name: String = arg["name"].as_str().unwrap().into();
                        if let Some(other) = names.insert((pid, tid), name.clone()) {
                            panic!("thread {pid}/{tid} is both {other:?} and {name:?}");
                        }
                    }
                    "process_name" => {
                        drop(processes.insert(pid, arg["name"].as_str().unwrap().into()))
                    }
                    "thread_sort_index" | "process_sort_index" => {
                        assert!(arg["sort_index"].is_u64())
                    }
                    other => panic!("unexpected metadata {other}"),
                }
            }
            "B" | "E" | "i" => {
                let ts = e["ts"].as_f64().expect("numeric ts");
                if ph != "E" {
                    assert!(e["name"].is_string(), "{e}");
                }
                if let Some(loc) = e.get("loc") {
                    let (file, line) = loc.as_str().unwrap().rsplit_once(':').unwrap();
                    assert!(!file.is_empty() && line.parse::<u32>().is_ok(), "{loc}");
                }
                // Tracy's importer: uint64(ts * 1000).
                timed.push(((ts * 1000.0) as u64, k, (pid, tid), e));
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    timed.sort_by_key(|(t, k, _, _)| (*t, *k));
    let mut open: HashMap<Thread, Vec<(String, u64)>> = HashMap::new();
    let mut zones: BTreeMap<Thread, Vec<(String, u64, u64)>> = BTreeMap::new();
    for (t, _, th, e) in timed {
        assert!(
            names.contains_key(&th) || e["s"] == "p",
            "thread {th:?} has no thread_name"
        );
        assert!(
            processes.contains_key(&th.0),
            "process {} has no process_name",
            th.0
        );
        match e["ph"].as_str().unwrap() {
            "B" => open
                .entry(th)
                .or_default()
                .push((e["name"].as_str().unwrap().into(), t)),
            "E" => {
                let (name, start) = open
                    .get_mut(&th)
                    .and_then(|s| s.pop())
                    .unwrap_or_else(|| panic!("E without B on {th:?}"));
                zones.entry(th).or_default().push((name, start, t));
            }
            _ => {}
        }
    }
    assert!(open.values().all(|s| s.is_empty()), "unclosed zones");
    zones
}

#[test]
fn every_zone_is_a_nested_pair_on_its_tile_and_risc_thread_at_its_host_time() {
    let t = timeline();
    let (ev, stats) = events(&t);
    assert_eq!(stats.clamped, 0);
    assert_eq!(stats.events as usize, ev.len());
    let zones = check_structure(&ev);
    let lane = t
        .lanes
        .iter()
        .find(|l| l.tile == TILES[1] && l.risc == Risc::Trisc1)
        .unwrap();
    let mine = &zones[&(1, lane_tid(lane) as u64)];
    assert_eq!(mine.len(), 12, "4 zones x 3 ops");
    // Each zone pairs with its own end even after time sorting: durations are exact.
    let x = times(2, 1, Risc::Trisc1);
    for (name, (s, e)) in [
        ("work", x.work),
        ("inner", x.inner),
        ("TRISC-KERNEL", x.kernel),
        ("TRISC-FW", x.fw),
    ] {
        assert!(
            mine.contains(&(name.to_string(), s, e)),
            "{name} {s}..{e} in {mine:?}"
        );
    }
    let names: HashMap<Thread, &str> = ev
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            (
                (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()),
                e["args"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names[&(1, lane_tid(lane) as u64)],
        "(1,0) [x=2 y=1] TRISC_1"
    );
    assert_eq!(names[&(1, 1)], "ops (device)");
    assert_eq!(names[&(1, 101)], "ops (host)");
    assert_eq!(
        zones.values().map(Vec::len).sum::<usize>(),
        t.zones.len() + 2 * 3,
        "lane zones and op spans"
    );
    // Ops: device kernel spans and host spans.
    let (ks, ke) = (
        times(2, 0, Risc::Brisc).kernel.0,
        times(2, 1, Risc::Trisc2).kernel.1,
    );
    assert!(zones[&(1, 1)].contains(&("Matmul".into(), ks, ke)));
    assert!(zones[&(1, 101)].contains(&("Matmul".into(), 1_950_000, 2_300_000)));
    // The first B event of a zone carries its source location, op and cycles.
    let b = ev
        .iter()
        .find(|e| e["ph"] == "B" && e["name"] == "work" && e["args"]["run"] == 2)
        .unwrap();
    assert_eq!(b["loc"], "src/kernel.rs:10");
    assert_eq!(b["args"]["op"], "Matmul");
    assert_eq!(
        (b["ts"].as_f64().unwrap() * 1000.0) as u64,
        times(2, 0, Risc::Brisc).work.0
    );
    assert!(
        b["args"].get("value").is_none(),
        "a plain zone has no value: {b}"
    );
    // A value zone's value is an argument (it once reached only the device CSV).
    let inner = ev
        .iter()
        .filter(|e| e["ph"] == "B" && e["name"] == "inner")
        .collect::<Vec<_>>();
    assert_eq!(inner.len(), 3 * 10);
    let b = inner
        .iter()
        .find(|e| e["args"]["run"] == 3 && e["tid"] == lane_tid(lane) as u64)
        .unwrap();
    assert_eq!(
        b["args"]["value"],
        crate::model::fixture::inner_value(3, 1, Risc::Trisc1)
    );
    let signpost = ev.iter().find(|e| e["cat"] == "signpost").unwrap();
    assert_eq!(
        (signpost["name"].as_str(), signpost["s"].as_str()),
        (Some("warmup-done"), Some("p"))
    );
    assert_eq!(
        (signpost["ts"].as_f64().unwrap() * 1000.0) as u64,
        1_500_000
    );
    let marks = ev.iter().filter(|e| e["cat"] == "mark").count();
    assert_eq!(marks, t.marks.len());
    let data = ev.iter().find(|e| e["name"] == "bytes").unwrap();
    assert_eq!(data["args"]["value"], 4096);
}

#[test]
fn equal_times_keep_their_order_and_zones_that_break_nesting_are_cut() {
    let mut t = timeline();
    // Touching zones, and a zone that ends after its parent (corrupt times).
    let lane = 0u32;
    let site = t.zones[0].site;
    let z = |d: u16, s: u64, e: u64| Zone {
        lane,
        site,
        depth: d,
        run: 1,
        op: None,
        start_cycles: s,
        end_cycles: e,
        value: None,
    };
    let keep: Vec<Zone> = t.zones.iter().filter(|z| z.lane != lane).copied().collect();
    t.zones = [z(0, 10, 20), z(0, 20, 30), z(1, 25, 35), z(0, 40, 40)]
        .into_iter()
        .chain(keep)
        .collect();
    let (ev, stats) = events(&t);
    assert_eq!(stats.clamped, 1);
    let zones = check_structure(&ev);
    let tid = lane_tid(&t.lanes[0]) as u64;
    let spans: Vec<(u64, u64)> = zones[&(1, tid)].iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(spans, [(10, 20), (25, 30), (20, 30), (40, 40)]);
}

#[test]
fn timestamps_are_whole_nanoseconds_in_microseconds_for_truncating_and_rounding_readers() {
    assert_eq!(ts(0.0), "0.00001");
    assert_eq!(ts(1234.4), "1.23401");
    assert_eq!(ts(1234.5), "1.23501");
    assert_eq!(ts(-1.0), "-0.00101");
    // Truncating `ts * 1000` (Tracy's importer) gives the whole ns back, even for times
    // hours into a run; `1.001` alone would give 1000.
    for ns in [1001u64, 1234, 4_294_967_295, 7_200_000_000_123, 1, 999] {
        let us: f64 = ts(ns as f64).parse().unwrap();
        assert_eq!((us * 1000.0) as u64, ns, "{}", ts(ns as f64));
        assert_eq!((us * 1000.0).round() as u64, ns);
    }
    assert_eq!(("1.001".parse::<f64>().unwrap() * 1000.0) as u64, 1000);
}

/// The first-fit placement of ops on threads as it was written first: a scan over every
/// thread for each op (quadratic in overlapping ops), kept as the reference.
fn first_fit(mut spans: Vec<OpBar>) -> Vec<Vec<OpBar>> {
    spans.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut threads: Vec<(f64, Vec<OpBar>)> = Vec::new();
    for s in spans {
        match threads
            .iter_mut()
            .find(|(end, _)| end.round() <= s.1.round())
        {
            Some(th) => {
                th.0 = s.2;
                th.1.push(s);
            }
            None => threads.push((s.2, vec![s])),
        }
    }
    threads.into_iter().map(|(_, l)| l).collect()
}

#[test]
fn ops_go_to_the_first_free_thread_with_work_linear_in_the_ops() {
    let mut rng = crate::testing::Rng::new(15);
    for round in 0..200 {
        let n = 1 + rng.below(60) as usize;
        let spans: Vec<OpBar> = (0..n)
            .map(|i| {
                // Few distinct times (ties, ends equal to starts) and half-ns (rounding).
                let a = rng.below(40) as f64 / 2.0;
                let b = a + rng.below(12) as f64 / 2.0;
                match rng.below(50) {
                    0 => (i, if rng.percent(50) { f64::NAN } else { -f64::NAN }, b),
                    1 => (i, a, f64::NAN),
                    2 => (i, f64::NEG_INFINITY, a),
                    3 => (i, a, f64::INFINITY),
                    _ => (i, a, b),
                }
            })
            .collect();
        let placed = op_threads(spans.clone(), usize::MAX);
        let want = first_fit(spans);
        assert_eq!(
            format!("{:?}", placed.threads),
            format!("{want:?}"),
            "round {round}"
        );
        assert!(
            placed.steps <= 4 * n as u64,
            "round {round}: {} steps for {n} ops",
            placed.steps
        );
    }
    // 100,000 ops that all overlap (e.g. unmatched ops of an op log with one host time
    // range): each needs its own thread. The scan looked at n^2 / 2 = 5e9 threads (15 s).
    let n = 100_000;
    let overlapping: Vec<OpBar> = (0..n)
        .map(|i| (i, 1_000.0 + i as f64, 5_000_000.0))
        .collect();
    let placed = op_threads(overlapping, usize::MAX);
    assert_eq!(placed.threads.len(), n);
    assert!(
        placed.steps <= 4 * n as u64,
        "{} steps for {n} ops",
        placed.steps
    );
    let one_after_another: Vec<OpBar> = (0..n)
        .map(|i| (i, 10.0 * i as f64, 10.0 * i as f64 + 10.0))
        .collect();
    let placed = op_threads(one_after_another, usize::MAX);
    assert_eq!(placed.threads.len(), 1);
    assert!(
        placed.steps <= 4 * n as u64,
        "{} steps for {n} ops",
        placed.steps
    );
    // With a limit on threads, what does not fit is left out; the rest is placed as before.
    let spans: Vec<OpBar> = vec![
        (0, 0.0, 10.0),
        (1, 1.0, 5.0),
        (2, 2.0, 3.0),
        (3, 3.0, 4.0),
        (4, 4.0, 6.0),
    ];
    let placed = op_threads(spans, 2);
    assert_eq!(
        format!("{:?}", placed.threads),
        format!("{:?}", [vec![(0, 0.0, 10.0)], vec![(1, 1.0, 5.0)]])
    );
    assert_eq!(placed.left_out, 3);
}

#[test]
fn ops_beyond_the_op_threads_a_chip_has_are_counted_and_never_share_a_lane_s_thread() {
    // The fixture's three ops, and 100,000 more from the op log that match no device records
    // and all overlap: their host spans needed 100,000 "ops (host)" threads, whose tids ran
    // into the lanes' (from LANE_TID_BASE), naming one thread twice and mixing ops into lanes.
    let r = fixture::readout();
    let res = fixture::resolution(&r);
    let mut log = fixture::oplog();
    let n = 100_000;
    for k in 0..n {
        let mut op = fixture::op(1_000 + k, "Ghost");
        op.kernels.clear();
        (op.host_start_ns, op.host_end_ns) = (1_000_000 + k as u64, 3_000_000);
        log.entries.push(crate::oplog::OpLogEntry::Op(op));
    }
    let t = Timeline::build(&r, &res, Some(&log), &Timebase::nominal(fixture::ARCH, 1));
    assert_eq!(
        t.ops.iter().filter(|o| o.host_ns.is_some()).count(),
        n as usize + 3
    );
    let (ev, stats) = events(&t);
    check_structure(&ev);
    let op_threads = |kind: &str| {
        ev.iter()
            .filter(|e| {
                e["name"] == "thread_name" && e["args"]["name"].as_str().unwrap().starts_with(kind)
            })
            .count()
    };
    assert_eq!(op_threads("ops (host)"), MAX_OPS_HOST_THREADS);
    assert_eq!(
        op_threads("ops (device)"),
        1,
        "the three ops with device times follow each other"
    );
    let host_bars = ev
        .iter()
        .filter(|e| {
            e["cat"] == "op"
                && (OPS_HOST_TID..LANE_TID_BASE).contains(&(e["tid"].as_u64().unwrap() as u32))
        })
        .count();
    assert_eq!(host_bars as u64 + stats.ops_left_out, n as u64 + 3);
    assert!(stats.ops_left_out > 0);
    assert!(ev
        .iter()
        .filter(|e| e["cat"] == "op")
        .all(|e| e["tid"].as_u64().unwrap() < LANE_TID_BASE as u64));
}

/// The text of `key`'s value in one event line of the trace (its `ts` as written: serde_json
/// would parse it to an `f64`).
fn field(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// Issue 41: zones and marks were written at `f64` ns rounded, a ns or more off from 2^53 ns
/// on (at 2^62 cycles by up to a thousand); through the sink each is at the exact whole ns
/// of its count, from the tile's clock.
#[test]
fn lane_times_stay_exact_at_large_cycle_counts() {
    let offset = (1u64 << 62) + 7;
    let arch = riscv_linker::Arch::WormholeB0;
    let p = fixture::profile_at(offset, arch, true);
    let dir = crate::testing::temp_dir("trace-large-counts");
    let path = dir.join("trace.json");
    let mut s = TraceJson::new(&path, &crate::inputs::Inputs::none());
    crate::sink::drive(&p, &mut [&mut s]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // The `ts` text of every event on a lane thread (serde_json would parse it to an f64).
    let mut got: Vec<String> = text
        .lines()
        .filter(|l| !l.contains("\"ph\":\"M\""))
        .filter(|l| field(l, "tid").is_some_and(|t| t.parse::<u32>().unwrap() >= LANE_TID_BASE))
        .filter_map(|l| field(l, "ts"))
        .collect();
    // The nearest whole ns of `c` cycles at the arch's clock, in integers, as `ts` writes it.
    let us = |c: u64| {
        let n = fixture::whole_ns(arch, c);
        format!("{}.{:03}01", n / 1000, n % 1000)
    };
    let mut want: Vec<String> = Vec::new();
    for v in p.rings() {
        for z in &v.zones {
            want.push(us(z.start_cycles));
            want.push(us(z.end_cycles));
        }
        want.extend(v.marks.iter().map(|m| us(m.cycles)));
    }
    assert_eq!(got.len(), want.len());
    got.sort();
    want.sort();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41: the device op threads' spans were the ops' `f64` kernel ns rounded, a ns or
/// more off from 2^53 ns on; through the sink each end is the exact whole ns of its KERNEL
/// zone's count, from the model's wrapper-zone times.
#[test]
fn device_op_spans_stay_exact_at_large_cycle_counts() {
    let offset = (1u64 << 62) + 7;
    let arch = riscv_linker::Arch::WormholeB0;
    let p = fixture::profile_at(offset, arch, true);
    let dir = crate::testing::temp_dir("trace-large-op-spans");
    let path = dir.join("trace.json");
    let mut s = TraceJson::new(&path, &crate::inputs::Inputs::none());
    crate::sink::drive(&p, &mut [&mut s]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let device = OPS_DEVICE_TID..OPS_DEVICE_TID + MAX_OPS_DEVICE_THREADS as u32;
    let mut got: Vec<String> = text
        .lines()
        .filter(|l| l.contains("\"ph\":\"B\"") || l.contains("\"ph\":\"E\""))
        .filter(|l| field(l, "tid").is_some_and(|t| device.contains(&t.parse::<u32>().unwrap())))
        .filter_map(|l| field(l, "ts"))
        .collect();
    let us = |c: u64| {
        let n = fixture::whole_ns(arch, c);
        format!("{}.{:03}01", n / 1000, n % 1000)
    };
    let mut want: Vec<String> = p
        .device_ops
        .by_run
        .values()
        .filter_map(|d| d.kernel)
        .flat_map(|k| [us(k.start.cycles), us(k.end.cycles)])
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got.len(), want.len());
    got.sort();
    want.sort();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 41: a ring given in pieces is written byte for byte as it is whole: its thread's
/// name once, its open zones carried from piece to piece (a zone cut at its parent's end
/// among them), its marks among its zones in opening order.
#[test]
fn rings_in_pieces_are_written_as_whole_rings_are() {
    let mut r = fixture::readout();
    let x = times(2, 0, r.rings[0].id.risc);
    // A zone that starts inside the second op's work and ends after its FW zone: cut.
    r.rings[0].records.push(
        crate::decode::RecordKind::Zone,
        fixture::site::WORK,
        x.work.0 + 1,
        x.fw.1 + 5,
        0,
        0,
        2,
    );
    let p = fixture::profile_of(r, fixture::ARCH, true);
    let (files, issues) =
        crate::sink::pieces::assert_pieces_write_what_whole_rings_do("trace-pieces", &p, &|dir| {
            Box::new(TraceJson::new(
                &dir.join(FILE_NAME),
                &crate::inputs::Inputs::none(),
            ))
        });
    let text = String::from_utf8(files[FILE_NAME].clone()).unwrap();
    assert!(text.contains("\"cat\":\"mark\""), "marks are written");
    assert!(
        issues.iter().any(|i| i.contains("1 zone(s) end after")),
        "{issues:?}"
    );
    let ev: Value = serde_json::from_str(&text).unwrap();
    check_structure(ev["traceEvents"].as_array().unwrap());
}
