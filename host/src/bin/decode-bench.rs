//! Decode benchmark: ring bytes -> columnar records on one core, against `memcpy` of the
//! same bytes in the same run.
//!
//! `cargo run --release -p ttprof --bin decode-bench [-- --mib N --out FILE]`
//!
//! The stream is what dense instrumentation produces (mostly 6-byte short zones, some
//! 32-bit zones, events, data and a `Run` record now and then), encoded by the runtime's own
//! encoder. It is larger than the caches, so both sides run at memory speed. Each side runs
//! several times; the best run counts. Writes `decode_gbps`, `memcpy_gbps`,
//! `decode_vs_memcpy`, `zones_per_sec` (and context) as JSON, by default to
//! `target/bench/decode.json` in the workspace.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;
use ttprof::decode::{Decoder, RecordKind, Records, Stop};
use ttprof::testing::Rng;
use ttprof_rt::wire::{encode, Record};

const RUNS: usize = 7;

fn main() {
    let mut mib = 64usize;
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = manifest.parent().unwrap_or(&manifest).join("target/bench/decode.json");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--mib", Some(v)) => mib = v.parse().unwrap_or_else(|_| fail(&format!("--mib {v}: expected a number"))),
            ("--out", Some(v)) => out = v.into(),
            _ => fail(&format!("unknown argument {a}; usage: decode-bench [--mib N] [--out FILE]")),
        }
    }
    let bytes = stream(mib << 20);
    println!("stream: {:.1} MiB", bytes.len() as f64 / (1 << 20) as f64);

    let mut records = Records::with_capacity(bytes.len() / 6 + 1);
    let mut best_decode = f64::MAX;
    for _ in 0..RUNS {
        records.clear();
        let t = Instant::now();
        let stop = Decoder::new().decode(black_box(&bytes), &mut records);
        let dt = t.elapsed().as_secs_f64();
        assert_eq!(stop, Ok(Stop::End), "the generated stream decodes");
        black_box(&records);
        best_decode = best_decode.min(dt);
    }
    let zones = records.kind.iter().filter(|k| matches!(k, RecordKind::Zone | RecordKind::ValueZone)).count();

    let mut dst = vec![0u8; bytes.len()];
    let mut best_copy = f64::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        dst.copy_from_slice(black_box(&bytes));
        black_box(&dst);
        best_copy = best_copy.min(t.elapsed().as_secs_f64());
    }

    let gb = bytes.len() as f64 / 1e9;
    let decode_gbps = gb / best_decode;
    let memcpy_gbps = gb / best_copy;
    let zones_per_sec = zones as f64 / best_decode;
    let ratio = decode_gbps / memcpy_gbps;
    // Bytes the decoder writes per record: one entry in each column.
    let table_bytes_per_record = 1 + 2 + 8 + 8 + 8 + 4 + 4;
    println!(
        "records: {} ({} zones), {:.2} ring bytes and {table_bytes_per_record} table bytes per record",
        records.len(),
        zones,
        bytes.len() as f64 / records.len() as f64
    );
    println!("decode:  {decode_gbps:.3} GB/s, {:.1} M zones/s", zones_per_sec / 1e6);
    println!("memcpy:  {memcpy_gbps:.3} GB/s");
    println!("decode / memcpy: {ratio:.3} (target >= 0.5)");
    let json = serde_json::json!({
        "decode_gbps": decode_gbps,
        "memcpy_gbps": memcpy_gbps,
        "decode_vs_memcpy": ratio,
        "zones_per_sec": zones_per_sec,
        "stream_bytes": bytes.len(),
        "records": records.len(),
        "zones": zones,
        "runs": RUNS,
        "table_bytes_per_record": table_bytes_per_record,
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
    if let Err(e) = ttprof::atomic::write_atomic(&out, |w| std::io::Write::write_all(w, text.as_bytes())) {
        fail(&e.to_string());
    }
    println!("wrote {}", out.display());
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// About `size` bytes of a dense-instrumentation stream.
fn stream(size: usize) -> Vec<u8> {
    let mut rng = Rng::new(0xBE4C);
    let mut out = Vec::with_capacity(size + 64);
    let (mut now, mut reference, mut run) = (1_000u64, 1_000u64, 0u32);
    while out.len() < size {
        now += rng.below(40);
        let r = match rng.below(1000) {
            0 => {
                run += 1;
                Record::Run { run_id: run, time: now }
            }
            1..=20 => Record::Zone { id: rng.below(64) as u16, end: now + 100_000, duration: 90_000 + rng.below(9_000), value: None },
            21..=30 => Record::Event { id: rng.below(64) as u16, time: now },
            31..=35 => Record::Data { id: rng.below(64) as u16, time: now, data: rng.next_u64() },
            _ => Record::Zone { id: rng.below(64) as u16, end: now, duration: rng.below(200).min(now), value: None },
        };
        if let Some(t) = r.ref_time() {
            now = now.max(t);
        }
        let Some(e) = encode(&r, reference) else { continue };
        out.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
        reference = r.ref_time().unwrap_or(reference);
    }
    out
}
