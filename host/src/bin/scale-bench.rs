//! Scale benchmark: 140 tiles x 5 RISCs x 100k zones (70 M zones) read out and written to
//! `profile_log_device.csv`, with the time and the peak memory against the ring data.
//!
//! `cargo run --release -p ttprof --features bench --bin scale-bench [-- --tiles N --zones N --out FILE --csv FILE --keep-csv --no-perfetto]`
//!
//! Rings hold 8 KiB, so 100k zones per RISC cannot sit in device memory at once. What is
//! measured, honestly:
//!
//! 1. **Produce** (timed separately, not part of the figure): for each of the 700 rings the
//!    real runtime producer (`ttprof_rt::sim::Sim`, the same code the kernels run) records
//!    launches of nested zones (FW and KERNEL wrappers, a loop zone with two inner zones per
//!    iteration) into a real 8 KiB ring, Block policy, with a consumer that drains whenever
//!    the producer waits. Each drain's span is kept: the ring's byte stream and the `HEAD`
//!    values it was drained at ([`ttprof::replay::RecordedRing`]). These streams are "the
//!    ring data" of the memory figure, held in memory for the whole run.
//! 2. **Read out and write** (the figure): tile by tile, a [`Replay`] presents the tile's five
//!    rings as device memory, publishing one recorded `HEAD` per step; the readout's own
//!    `Drainer` drains it (control words, live spans only, compact decode, payload kept,
//!    `TAIL` written back) until the streams end, exactly as `ttprof capture` does; then each
//!    ring's payload is decoded again, resolved against its site table, ordered into markers
//!    and written as CSV rows (`csv::RingCsv`), and dropped. Rows are formatted
//!    on one thread and written to the file on another; the CSV is written atomically
//!    (temp file, fsync, rename): the time includes the fsync.
//!
//! Peak memory is the process's peak resident set (`VmHWM`), which includes the ring data
//! itself. Each pass's CPU time (user and system, every thread) is reported beside its
//! wall time: on a shared machine it varies less. `--no-perfetto` skips the Perfetto pass.
//! Writes `target/bench/scale.json`.

use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use ttprof::capture::payload::decode_payload;
use ttprof::csv::RingCsv;
use ttprof::decode::ZoneTable;
use ttprof::profile::Profile;
use ttprof::readout::{Readout, RingId, RingReport};
use ttprof::replay::{RecordedRing, Replay};
use ttprof::resolve::Resolution;
use ttprof::sink::stream::Stream;
use ttprof::sink::{ParquetSink, PerfettoSink, Sink};
use ttprof::sites::SiteTable;
use ttprof::timebase::Timebase;

const ARCH: Arch = Arch::Blackhole;

struct Args {
    tiles: usize,
    zones: u64,
    out: PathBuf,
    csv: PathBuf,
    keep_csv: bool,
    perfetto: bool,
}

fn main() {
    // Under the current folder (run it from the checkout's root).
    let ws = PathBuf::new();
    let mut a = Args {
        tiles: 140,
        zones: 100_000,
        out: ws.join("target/bench/scale.json"),
        csv: ws.join("target/bench/scale/profile_log_device.csv"),
        keep_csv: false,
        perfetto: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| fail(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--tiles" => a.tiles = value().parse().unwrap_or_else(|_| fail("--tiles: expected a number")),
            "--zones" => a.zones = value().parse().unwrap_or_else(|_| fail("--zones: expected a number")),
            "--out" => a.out = value().into(),
            "--csv" => a.csv = value().into(),
            "--keep-csv" => a.keep_csv = true,
            "--no-perfetto" => a.perfetto = false,
            _ => fail(&format!("unknown argument {arg}; usage: scale-bench [--tiles N] [--zones N] [--out FILE] [--csv FILE] [--keep-csv] [--no-perfetto]")),
        }
    }
    let coords = grid(a.tiles);
    let t = Instant::now();
    let rings = produce_all(a.tiles, a.zones);
    let produce_s = t.elapsed().as_secs_f64();
    let ring_bytes: u64 = rings.iter().flatten().map(|r| r.1.bytes.len() as u64).sum();
    println!(
        "produced {} rings, {:.1} MB of ring data in {produce_s:.1} s",
        rings.len() * 5,
        ring_bytes as f64 / 1e6
    );

    let t = Instant::now();
    reset_peak_rss();
    let cpu0 = cpu_seconds();
    let m = readout_and_write(&a, coords.clone(), &rings);
    let seconds = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let peak = peak_rss_bytes();
    let out_dir = a.csv.parent().map(|p| p.to_path_buf()).unwrap_or_default();
    let mut other = BTreeMap::new();
    let outputs: &[Output] = if a.perfetto {
        &[Output::Parquet, Output::Perfetto]
    } else {
        &[Output::Parquet]
    };
    for &output in outputs {
        reset_peak_rss();
        let t = Instant::now();
        let cpu0 = cpu_seconds();
        let o = readout_and_stream(&out_dir, coords.clone(), &rings, output);
        let secs = t.elapsed().as_secs_f64();
        let cpu_secs = cpu_seconds() - cpu0;
        let files: &[&str] = match output {
            Output::Parquet => &[
                ttprof::sink::parquet::ZONES_FILE,
                ttprof::sink::parquet::MARKS_FILE,
                ttprof::sink::parquet::OPS_FILE,
            ],
            _ => &[ttprof::sink::perfetto::FILE_NAME],
        };
        let bytes: u64 = files
            .iter()
            .map(|f| {
                std::fs::metadata(out_dir.join(f))
                    .map(|m| m.len())
                    .unwrap_or(0)
            })
            .sum();
        let zones_bytes = std::fs::metadata(out_dir.join(files[0]))
            .map(|m| m.len())
            .unwrap_or(0);
        if o.zones != m.zones || o.rows != m.zones {
            eprintln!(
                "warning: the {output:?} pass decoded {} zones and wrote {} (the CSV pass {})",
                o.zones, o.rows, m.zones
            );
        }
        println!(
            "{output:?}: {} zones in {secs:.1} s ({:.2} x the CSV's time; CPU {cpu_secs:.1} s = {:.2} x the CSV's), {:.2} GB = {:.2} bytes per zone ({:.2} in the zones file); peak RSS {:.2} x the ring data; {} issue(s)",
            o.rows, secs / seconds, cpu_secs / cpu, bytes as f64 / 1e9, bytes as f64 / o.rows.max(1) as f64, zones_bytes as f64 / o.rows.max(1) as f64,
            peak_rss_bytes() as f64 / ring_bytes as f64, o.issues
        );
        other.insert(
            output,
            (o, secs, bytes, zones_bytes, peak_rss_bytes(), cpu_secs),
        );
        if !a.keep_csv {
            for f in files {
                let _ = std::fs::remove_file(out_dir.join(f));
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let csv_bytes = std::fs::metadata(&a.csv).map(|m| m.len()).unwrap_or(0);
    println!(
        "read out and wrote {} zones ({} records, {} CSV rows, {:.2} GB) in {seconds:.1} s ({:.1} M zones/s; rows all formatted after {:.1} s, the rest is writing and fsync)",
        m.zones, m.records, m.rows, csv_bytes as f64 / 1e9, m.zones as f64 / seconds / 1e6, m.written_s
    );
    println!(
        "peak RSS {:.1} MB = {:.2} x the ring data ({:.1} MB); bus {:.4} bytes per payload byte; {} issue(s); load average {}",
        peak as f64 / 1e6, peak as f64 / ring_bytes as f64, ring_bytes as f64 / 1e6, m.bus as f64 / m.payload as f64, m.issues, load.trim()
    );
    let mut json = serde_json::json!({
        "tiles": a.tiles, "riscs": 5, "zones_per_ring_min": a.zones,
        "zones": m.zones, "records": m.records, "csv_rows": m.rows, "csv_bytes": csv_bytes,
        "seconds": seconds, "seconds_rows_formatted": m.written_s, "zones_per_sec": m.zones as f64 / seconds,
        "peak_rss_bytes": peak, "ring_bytes": ring_bytes, "peak_rss_vs_ring_bytes": peak as f64 / ring_bytes as f64,
        "payload_bytes": m.payload, "bus_bytes": m.bus, "bus_bytes_per_payload_byte": m.bus as f64 / m.payload as f64,
        "stalls": m.stalls, "issues": m.issues, "produce_seconds": produce_s,
        "cpu_seconds": cpu,
        "parquet_seconds": other[&Output::Parquet].1, "parquet_vs_csv_seconds": other[&Output::Parquet].1 / seconds,
        "parquet_cpu_seconds": other[&Output::Parquet].5, "parquet_vs_csv_cpu_seconds": other[&Output::Parquet].5 / cpu,
        "parquet_bytes": other[&Output::Parquet].2, "parquet_bytes_per_zone": other[&Output::Parquet].2 as f64 / m.zones as f64,
        "parquet_zones_file_bytes_per_zone": other[&Output::Parquet].3 as f64 / m.zones as f64,
        "parquet_peak_rss_vs_ring_bytes": other[&Output::Parquet].4 as f64 / ring_bytes as f64,
        "parquet_issues": other[&Output::Parquet].0.issues,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), "loadavg": load.trim(),
    });
    if let (Some(p), Some(obj)) = (other.get(&Output::Perfetto), json.as_object_mut()) {
        for (k, v) in [
            ("perfetto_seconds", serde_json::json!(p.1)),
            ("perfetto_vs_csv_seconds", serde_json::json!(p.1 / seconds)),
            ("perfetto_cpu_seconds", serde_json::json!(p.5)),
            ("perfetto_vs_csv_cpu_seconds", serde_json::json!(p.5 / cpu)),
            ("perfetto_bytes", serde_json::json!(p.2)),
            (
                "perfetto_bytes_per_zone",
                serde_json::json!(p.2 as f64 / m.zones as f64),
            ),
            (
                "perfetto_peak_rss_vs_ring_bytes",
                serde_json::json!(p.4 as f64 / ring_bytes as f64),
            ),
            ("perfetto_issues", serde_json::json!(p.0.issues)),
        ] {
            obj.insert(k.into(), v);
        }
    }
    if let Some(dir) = a.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    if let Err(e) = ttprof::atomic::write_atomic(&a.out, &ttprof::inputs::Inputs::none(), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    }) {
        fail(&e.to_string());
    }
    println!("wrote {}", a.out.display());
    if !a.keep_csv {
        let _ = std::fs::remove_file(&a.csv);
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// The first `n` worker tiles of a Blackhole chip (14 x 10 = 140).
fn grid(n: usize) -> Vec<NocCoord> {
    let (cols, rows) = ARCH.worker_grid();
    let all: Vec<NocCoord> = (0..rows)
        .flat_map(|r| (0..cols).filter_map(move |c| ARCH.worker_noc(c, r)))
        .collect();
    if n > all.len() {
        fail(&format!(
            "--tiles {n}: {ARCH} has {} worker tiles",
            all.len()
        ));
    }
    all[..n].to_vec()
}

/// One ring as produced: its RISC, its traffic and its kernel's site table.
type Produced = (Risc, RecordedRing, Arc<SiteTable>);
type TileRings = Vec<Produced>;

/// Records every ring with the real producer, on all cores.
fn produce_all(tiles: usize, zones: u64) -> Vec<TileRings> {
    let jobs = tiles * 5;
    let next = AtomicUsize::new(0);
    let done: Mutex<BTreeMap<usize, Produced>> = Mutex::new(BTreeMap::new());
    let bar = progress_bar(jobs as u64, "rings produced");
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                if j >= jobs {
                    break;
                }
                let risc = Risc::ALL[j % 5];
                let (rec, sites) = produce(risc, j as u64, zones);
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(j, (risc, rec, sites));
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut all = done
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_values();
    (0..tiles).map(|_| all.by_ref().take(5).collect()).collect()
}

/// One ring: launches of `[FW [KERNEL [loop [wait] [compute]]...]]` until `zones` zones
/// (the runtime's producer, as `ttprof::testing::long_run` records it).
fn produce(risc: Risc, seed: u64, zones: u64) -> (RecordedRing, Arc<SiteTable>) {
    const LAUNCHES: u64 = 10;
    let iterations = (zones.div_ceil(LAUNCHES).saturating_sub(2)).div_ceil(3);
    let (_, rec, sites, _) = ttprof::testing::long_run::record_ring(risc, seed, iterations);
    let sites =
        SiteTable::from_json_list(&sites).unwrap_or_else(|e| fail(&format!("site metadata: {e}")));
    (rec, Arc::new(sites))
}

struct Measured {
    zones: u64,
    records: u64,
    rows: u64,
    payload: u64,
    bus: u64,
    stalls: u64,
    issues: usize,
    written_s: f64,
}

/// The output a pass after the CSV's writes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Output {
    Parquet,
    Perfetto,
}

/// A tile's recorded rings, copied for one pass (the ring data stays for the next).
fn tile_copy(t: &TileRings) -> Vec<(Risc, RecordedRing)> {
    t.iter().map(|(r, rec, _)| (*r, rec.clone())).collect()
}

/// Tile by tile: replay, drain, decode, resolve, and feed each ring as a part of the run
/// to the Parquet or Perfetto sink ([`ttprof::sink::stream`]), as `ttprof capture` does.
fn readout_and_stream(
    dir: &std::path::Path,
    coords: Vec<NocCoord>,
    rings: &[TileRings],
    output: Output,
) -> Measured {
    let t0 = Instant::now();
    let replay = Replay::new(ARCH, coords.clone());
    let geometry = replay_geometry(&replay);
    let _ = std::fs::create_dir_all(dir);
    let timebase = Timebase::nominal(ARCH, 1);
    let skeleton = Readout::of_rings(
        geometry,
        coords
            .iter()
            .flat_map(|&tile| {
                Risc::ALL.map(|risc| {
                    RingReport::new(RingId {
                        chip: 0,
                        tile,
                        risc,
                    })
                })
            })
            .collect(),
        coords.len() as u32,
    );
    let res = Resolution::unresolved(&skeleton);
    let mut run = Profile::resolved(skeleton, res, None, timebase.clone());
    let mut parquet = ParquetSink::new(dir, &ttprof::inputs::Inputs::none());
    let mut perfetto = PerfettoSink::new(
        &dir.join(ttprof::sink::perfetto::FILE_NAME),
        &ttprof::inputs::Inputs::none(),
    );
    let sink: &mut dyn Sink = if output == Output::Parquet {
        &mut parquet
    } else {
        &mut perfetto
    };
    let mut stream = Stream::begin(&run, vec![sink]).unwrap_or_else(|e| fail(&e.to_string()));
    let mut namer = RingCsv::new(geometry, None);
    let mut m = Measured {
        zones: 0,
        records: 0,
        rows: 0,
        payload: 0,
        bus: 0,
        stalls: 0,
        issues: 0,
        written_s: 0.0,
    };
    let bar = progress_bar(
        rings.len() as u64,
        &format!("tiles read out and written to {output:?}"),
    );
    replay_rings(&replay, rings, &mut m, &bar, |report, table, sites| {
        let part = namer.part_only(report, table, Some(sites), &timebase);
        stream.part(&part).map_err(std::io::Error::other)
    })
    .unwrap_or_else(|e| fail(&e.to_string()));
    m.written_s = t0.elapsed().as_secs_f64();
    let finished = stream
        .finish(&mut run)
        .unwrap_or_else(|e| fail(&e.to_string()));
    bar.finish_and_clear();
    for i in finished
        .iter()
        .flat_map(|f| &f.issues)
        .chain(run.issues())
        .take(5)
    {
        eprintln!("{i}");
    }
    m.issues += finished.iter().map(|f| f.issues.len()).sum::<usize>() + run.issues().len();
    let written = namer.finish();
    m.issues += written.issues.len();
    (m.zones, m.records) = (written.zones, written.records);
    m.rows = if output == Output::Parquet {
        parquet.written.zones
    } else {
        perfetto.stats.zones
    };
    m
}

/// Tile by tile: replay, drain, decode, resolve, write rows.
fn readout_and_write(a: &Args, coords: Vec<NocCoord>, rings: &[TileRings]) -> Measured {
    let t0 = Instant::now();
    let replay = Replay::new(ARCH, coords);
    if let Some(dir) = a.csv.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut m = Measured {
        zones: 0,
        records: 0,
        rows: 0,
        payload: 0,
        bus: 0,
        stalls: 0,
        issues: 0,
        written_s: 0.0,
    };
    let bar = progress_bar(rings.len() as u64, "tiles read out and written");
    let mut csv = RingCsv::new(replay_geometry(&replay), None);
    let result =
        ttprof::atomic::write_atomic_threaded(&a.csv, &ttprof::inputs::Inputs::none(), |out| {
            let mut out = out;
            let w = &mut out;
            csv.header(w)?;
            replay_rings(&replay, rings, &mut m, &bar, |report, table, sites| {
                csv.ring_with_sites(w, report, table, sites)
            })?;
            m.written_s = t0.elapsed().as_secs_f64();
            Ok(())
        });
    bar.finish_and_clear();
    if let Err(e) = result {
        fail(&e.to_string());
    }
    let written = csv.finish();
    for i in written.issues.iter().take(5) {
        eprintln!("{i}");
    }
    m.issues += written.issues.len();
    (m.zones, m.records, m.rows) = (written.zones, written.records, written.rows);
    m
}

/// Tile by tile: replays the tile's recorded rings, drains them as a capture does, decodes
/// each ring's payload and hands it to `each` with its site table; counts bus and payload
/// bytes, stalls and issues into `m`.
fn replay_rings(
    replay: &Replay,
    rings: &[TileRings],
    m: &mut Measured,
    bar: &indicatif::ProgressBar,
    mut each: impl FnMut(&RingReport, &ZoneTable, &Arc<SiteTable>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut table = ZoneTable::new();
    for (index, tile_rings) in rings.iter().enumerate() {
        let sites: BTreeMap<Risc, Arc<SiteTable>> =
            tile_rings.iter().map(|(r, _, s)| (*r, s.clone())).collect();
        replay.load_tile(index, tile_copy(tile_rings));
        let readout =
            ttprof::testing::long_run::drain_tile(replay).map_err(std::io::Error::other)?;
        m.bus += readout.0.bus_bytes();
        m.payload += readout.0.payload_bytes();
        m.stalls += readout
            .0
            .rings()
            .iter()
            .map(|r| r.stalls as u64)
            .sum::<u64>();
        m.issues += readout.0.issues().len();
        for i in readout.0.issues().iter().take(3) {
            eprintln!("{i}");
        }
        for report in readout.0.rings() {
            let bytes = readout
                .1
                .get(&report.id.risc)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if let Some(issue) = decode_payload(report.id, bytes, &mut table) {
                eprintln!("{issue}");
                m.issues += 1;
            }
            each(report, &table, &sites[&report.id.risc])?;
        }
        bar.inc(1);
    }
    Ok(())
}

fn replay_geometry(r: &Replay) -> riscv_linker::devfile::Geometry {
    ttprof::devmem::DeviceMemory::geometry(r)
}

/// Starts a new peak for [`peak_rss_bytes`] (Linux: `5` into `/proc/self/clear_refs`
/// resets `VmHWM` to the current resident set); without it the peak spans every pass.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU time (user and system, every thread) this process used so far, from
/// `/proc/self/stat` (0 if unavailable): on a shared machine it varies less than the wall
/// time.
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

/// Peak resident set of this process, from `/proc/self/status` (0 if unavailable).
fn peak_rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// A bar over `len` units of `unit` on stderr (hidden when stderr is not a terminal).
fn progress_bar(len: u64, unit: &str) -> indicatif::ProgressBar {
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    indicatif::ProgressBar::new(len).with_style(style)
}
