//! Decode benchmark: ring bytes -> columnar tables on one core, against `memcpy` of the
//! same bytes in the same run: the compact zone table (`Decoder::decode_compact`, the
//! figures that count) and, as the "before", the rich seven-column table (`Decoder::decode`);
//! also the compact decode of a stream of short zones only (the hot loop by itself), and of
//! a 4 MiB mixed stream that stays in the caches (the loop without the memory traffic).
//!
//! `cargo run --release -p ttprof --features bench --bin decode-bench [-- --mib N --out FILE]`
//!
//! The stream is what dense instrumentation produces (mostly 6-byte short zones, some
//! 32-bit zones, events, data and a `Run` record now and then), encoded by the runtime's own
//! encoder. It is larger than the caches, so both sides run at memory speed. The decode and
//! the `memcpy` run 11 times each, by turns; the best run of each counts. Writes `decode_gbps`, `memcpy_gbps`,
//! `decode_vs_memcpy`, `zones_per_sec` (and context) as JSON, by default to
//! `target/bench/decode.json` in the workspace.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;
use ttprof::decode::{Decoder, Records, Stop, ZoneTable};
use ttprof::testing::Rng;
use ttprof_rt::wire::{encode, Record};

const RUNS: usize = 11;

fn main() {
    let mut mib = 64usize;
    // Under the current folder (run it from the checkout's root).
    let mut out = PathBuf::from("target/bench/decode.json");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--mib", Some(v)) => {
                mib = v
                    .parse()
                    .unwrap_or_else(|_| fail(&format!("--mib {v}: expected a number")))
            }
            ("--out", Some(v)) => out = v.into(),
            _ => fail(&format!(
                "unknown argument {a}; usage: decode-bench [--mib N] [--out FILE]"
            )),
        }
    }
    let bytes = stream(mib << 20, false);
    println!("stream: {:.1} MiB", bytes.len() as f64 / (1 << 20) as f64);

    // Before: the rich table (seven columns, 35 bytes per record), as the decoder wrote it
    // until the compact table existed (`Decoder::decode`).
    let mut records = Records::with_capacity(bytes.len() / 6 + 1);
    let before = best_of(|| {
        records.clear();
        let stop = Decoder::new().decode(black_box(&bytes), &mut records);
        assert_eq!(stop, Ok(Stop::End), "the generated stream decodes");
        black_box(&records);
    });
    let zones = records.zones();
    let rows = records.len();
    drop(records);

    // After: the compact table (14 bytes per row, sparse side tables), and memcpy of the
    // same bytes, run by turns so that both see the same machine (this one is shared).
    let mut table = ZoneTable::new();
    table.reserve(bytes.len() / 6 + 1);
    let mut dst = vec![0u8; bytes.len()];
    let (after, copy) = best_of_both(
        || {
            table.clear(ttprof::decode::NO_RUN);
            let stop = Decoder::new().decode_compact(black_box(&bytes), &mut table);
            assert_eq!(stop, Ok(Stop::End), "the generated stream decodes");
            black_box(&table);
        },
        || {
            dst.copy_from_slice(black_box(&bytes));
            black_box(&dst);
        },
    );
    assert_eq!(
        (table.len(), table.zones()),
        (rows, zones),
        "both tables hold the same rows"
    );
    let table_bytes = table.bytes();
    drop((table, dst));

    // The same on a stream of short zones only: the hot loop alone, without the other records.
    let short = stream(mib << 20, true);
    let mut table = ZoneTable::new();
    table.reserve(short.len() / 6 + 1);
    let short_only = best_of(|| {
        table.clear(ttprof::decode::NO_RUN);
        let stop = Decoder::new().decode_compact(black_box(&short), &mut table);
        assert_eq!(stop, Ok(Stop::End), "the generated stream decodes");
        black_box(&table);
    });
    let short_gbps = short.len() as f64 / 1e9 / short_only;
    drop((table, short));

    // The same mixed stream small enough for the caches (4 MiB, its table 9.4 MiB): what the
    // loop's instructions allow without the memory traffic.
    let small = stream(4 << 20, false);
    let mut table = ZoneTable::new();
    table.reserve(small.len() / 6 + 1);
    let mut dst = vec![0u8; small.len()];
    let (cached, cached_copy) = best_of_both(
        || {
            table.clear(ttprof::decode::NO_RUN);
            let stop = Decoder::new().decode_compact(black_box(&small), &mut table);
            assert_eq!(stop, Ok(Stop::End), "the generated stream decodes");
            black_box(&table);
        },
        || {
            dst.copy_from_slice(black_box(&small));
            black_box(&dst);
        },
    );
    let cached_gbps = small.len() as f64 / 1e9 / cached;
    let cached_memcpy_gbps = small.len() as f64 / 1e9 / cached_copy;
    drop((table, dst, small));

    let gb = bytes.len() as f64 / 1e9;
    let (decode_gbps, before_gbps, memcpy_gbps) = (gb / after, gb / before, gb / copy);
    let zones_per_sec = zones as f64 / after;
    let ratio = decode_gbps / memcpy_gbps;
    let compact_bytes_per_record = table_bytes as f64 / rows as f64;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "records: {rows} ({zones} zones), {:.2} ring bytes per record",
        bytes.len() as f64 / rows as f64
    );
    println!(
        "before (rich table, 35 B/record):    {before_gbps:.3} GB/s, {:.1} M zones/s, {:.3} x memcpy",
        zones as f64 / before / 1e6,
        before_gbps / memcpy_gbps
    );
    println!(
        "after (compact table, {compact_bytes_per_record:.1} B/record): {decode_gbps:.3} GB/s, {:.1} M zones/s, {ratio:.3} x memcpy (target >= 0.5)",
        zones_per_sec / 1e6
    );
    println!(
        "short zones only, compact: {short_gbps:.3} GB/s, {:.3} x memcpy",
        short_gbps / memcpy_gbps
    );
    println!(
        "in the caches (4 MiB), compact: {cached_gbps:.3} GB/s, memcpy {cached_memcpy_gbps:.3} GB/s"
    );
    println!(
        "memcpy: {memcpy_gbps:.3} GB/s; load average {}",
        load.trim()
    );
    let json = serde_json::json!({
        "decode_gbps": decode_gbps,
        "memcpy_gbps": memcpy_gbps,
        "decode_vs_memcpy": ratio,
        "zones_per_sec": zones_per_sec,
        "before_decode_gbps": before_gbps,
        "before_decode_vs_memcpy": before_gbps / memcpy_gbps,
        "before_zones_per_sec": zones as f64 / before,
        "stream_bytes": bytes.len(),
        "records": rows,
        "zones": zones,
        "runs": RUNS,
        "table_bytes_per_record": compact_bytes_per_record,
        "before_table_bytes_per_record": 35,
        "short_only_decode_gbps": short_gbps,
        "short_only_decode_vs_memcpy": short_gbps / memcpy_gbps,
        "in_cache_decode_gbps": cached_gbps,
        "in_cache_memcpy_gbps": cached_memcpy_gbps,
        "decode_vs_memcpy_target": 0.5,
        "loadavg": load.trim(),
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    if let Err(e) = ttprof::atomic::write_atomic(&out, &ttprof::inputs::Inputs::none(), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    }) {
        fail(&e.to_string());
    }
    println!("wrote {}", out.display());
}

/// The best times in seconds of `RUNS` runs each of `f` and `g`, taken by turns.
fn best_of_both(mut f: impl FnMut(), mut g: impl FnMut()) -> (f64, f64) {
    let time = |h: &mut dyn FnMut()| {
        let t = Instant::now();
        h();
        t.elapsed().as_secs_f64()
    };
    (0..RUNS).fold((f64::MAX, f64::MAX), |(a, b), _| {
        (a.min(time(&mut f)), b.min(time(&mut g)))
    })
}

/// The best time in seconds of `RUNS` runs of `f`.
fn best_of(mut f: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// About `size` bytes of a dense-instrumentation stream (`short_only`: short zones only).
fn stream(size: usize, short_only: bool) -> Vec<u8> {
    let mut rng = Rng::new(0xBE4C);
    let mut out = Vec::with_capacity(size + 64);
    let (mut now, mut reference, mut run) = (1_000u64, 1_000u64, 0u32);
    while out.len() < size {
        now += rng.below(40);
        let r = match if short_only { 999 } else { rng.below(1000) } {
            0 => {
                run += 1;
                Record::Run {
                    run_id: run,
                    time: now,
                }
            }
            1..=20 => Record::Zone {
                id: rng.below(64) as u16,
                end: now + 100_000,
                duration: 90_000 + rng.below(9_000),
                value: None,
            },
            21..=30 => Record::Event {
                id: rng.below(64) as u16,
                time: now,
            },
            31..=35 => Record::Data {
                id: rng.below(64) as u16,
                time: now,
                data: rng.next_u64(),
            },
            _ => Record::Zone {
                id: rng.below(64) as u16,
                end: now,
                duration: rng.below(200).min(now),
                value: None,
            },
        };
        if let Some(t) = r.ref_time() {
            now = now.max(t);
        }
        let Some(e) = encode(&r, reference) else {
            continue;
        };
        out.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
        reference = r.ref_time().unwrap_or(reference);
    }
    out
}
