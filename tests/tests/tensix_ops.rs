//! Compute ops on the Tensix coprocessor through the real CLI: `examples/cxx/tensix/ops.cpp`
//! built for TRISC0-2 (unpack, math, pack) runs eltwise add, eltwise mul, relu and a tiled
//! matmul on the emulator. The inputs go to L1 with `--l1`, with a host reference that follows
//! the Matrix Unit's rounding as ttsim computes it (`example_abi::bf16`: operands aligned to
//! a shared exponent, ties away from zero); the pack kernel compares its output with that
//! reference and records the number of mismatches.
//! The profile must have the stage zones on TRISC0/1/2 and the semaphore waits typed.

use example_abi::bf16::{self, face_index, round as bf16_of, value as f32_of};
use std::path::{Path, PathBuf};
use std::process::Command;
use ttprof_tests::{build_kernels, ttprof_binary, workspace};

const OPS_CPP: &str = "examples/cxx/tensix/ops.cpp";

/// `n` normal BF16 patterns from `seed` ([`example_abi::bf16::normal_values`]).
fn bf16_values(seed: u64, n: usize) -> Vec<u16> {
    example_abi::bf16::normal_values(seed).take(n).collect()
}

/// BF16 values k/8, |k| < 16: at most four mantissa bits, so the Matrix Unit's first
/// fidelity phase multiplies them exactly.
fn small_values(seed: usize, n: usize) -> Vec<u16> {
    (0..n)
        .map(|i| {
            let k = ((i * 7 + seed * 13 + 3) % 31) as f32 - 15.0;
            bf16_of(k / 8.0)
        })
        .collect()
}

fn bytes16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One op's inputs (unpacker 0, unpacker 1) and expected output bytes.
struct Case {
    op: u32,
    tiles: u32,
    in0: Vec<u16>,
    in1: Vec<u16>,
    expect: Vec<u8>,
}

fn eltwise(op: u32, tiles: u32) -> Case {
    let n = 1024 * tiles as usize;
    let (a, b) = if op == 1 {
        (small_values(1, n), small_values(2, n))
    } else {
        (bf16_values(1, n), bf16_values(2, n))
    };
    let out: Vec<u16> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| match op {
            0 => bf16::add(x, y),
            // Onto the zeroed Dst: a product -0 comes back as +0.
            1 => bf16::mul(x, y),
            _ => bf16::relu(x),
        })
        .collect();
    Case {
        op,
        tiles,
        in0: a,
        in1: b,
        expect: bytes16(&out),
    }
}

/// C = X @ Y over `k_tiles` K tiles: Y's tiles go to unpacker 0 (SrcA), X's to unpacker 1
/// (SrcB); Dst accumulates in FP32 and is packed as FP32. Every product and sum is exact.
fn matmul(k_tiles: u32) -> Case {
    let kt = k_tiles as usize;
    let x = small_values(3, 1024 * kt); // X: 32 x 32kt, tile k holds columns 32k..
    let y = small_values(4, 1024 * kt); // Y: 32kt x 32, tile k holds rows 32k..
    let mut out = vec![0f32; 1024];
    for r in 0..32 {
        for c in 0..32 {
            let mut acc = 0f32;
            for k in 0..32 * kt {
                let (t, kk) = (k / 32, k % 32);
                acc += f32_of(x[1024 * t + face_index(r, kk)])
                    * f32_of(y[1024 * t + face_index(kk, c)]);
            }
            out[face_index(r, c)] = acc;
        }
    }
    Case {
        op: 3,
        tiles: k_tiles,
        in0: y,
        in1: x,
        expect: out.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// Runs `case` through `ttprof run` on one tile; returns the output directory. One run at a
/// time: every run builds the same kernel ELFs beside `ops.cpp`.
fn run(name: &str, case: &Case) -> PathBuf {
    run_with(name, case, &[])
}

/// [`run`] with more `ttprof run` arguments (`--lines`, `--sample N`).
fn run_with(name: &str, case: &Case, extra: &[&str]) -> PathBuf {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace().join("target/test-tensix-ops").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, data) in [
        ("in0.bin", bytes16(&case.in0)),
        ("in1.bin", bytes16(&case.in1)),
        ("expect.bin", case.expect.clone()),
    ] {
        std::fs::write(dir.join(file), data).unwrap();
    }
    let l1 = |spec: &str| spec.replace("DIR", dir.to_str().unwrap());
    let o = Command::new(ttprof_binary())
        .current_dir(&dir)
        .args(["run", "--grid", "1x1", "--name", name, "--kernel"])
        .arg(format!("trisc={}", workspace().join(OPS_CPP).display()))
        .arg("--arg")
        .arg(format!("trisc={},{}", case.op, case.tiles))
        .args(["--l1", &l1("0x30000=@DIR/in0.bin")])
        .args(["--l1", &l1("0x38000=@DIR/in1.bin")])
        .args(["--l1", &l1("0x48000=@DIR/expect.bin")])
        .args(["--l1", &format!("0x5F000={}", case.expect.len())])
        .args(extra)
        .args(["--out", "out"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    dir.join("out")
}

/// Rows of the device CSV: (RISC, time, data, zone name, type).
fn rows(out: &Path) -> Vec<(String, u64, String, String, String)> {
    let text = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();
    text.lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.splitn(15, ',').collect();
            let t = f[5].trim().parse().unwrap();
            (f[3].into(), t, f[6].into(), f[10].into(), f[11].into())
        })
        .collect()
}

fn data(rows: &[(String, u64, String, String, String)], name: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r.3 == name && r.4 == "TS_DATA")
        .map(|r| r.2.clone())
        .collect()
}

/// Checks one run's output and profile; returns cycles per tile (first unpack zone to the
/// last pack zone, divided by the tiles).
fn check(name: &str, case: &Case) -> f64 {
    let out = run(name, case);
    let r = rows(&out);
    assert_eq!(
        data(&r, "mismatches"),
        ["0"],
        "{name}: the output differs from the reference"
    );
    let outputs = if case.op == 3 { 1 } else { case.tiles as usize };
    for (risc, zone, n) in [
        ("TRISC_0", "unpack-tile", case.tiles as usize),
        ("TRISC_1", "math-tile", case.tiles as usize),
        ("TRISC_2", "pack-tile", outputs),
    ] {
        let starts = r
            .iter()
            .filter(|x| x.0 == risc && x.3 == zone && x.4 == "ZONE_START")
            .count();
        assert_eq!(starts, n, "{name}: {zone} zones on {risc}");
    }
    // The waits are typed: each TRISC's semaphore shows up in the analysis by name.
    let a: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ttprof_analysis.json")).unwrap()).unwrap();
    let riscs = a["ops"][0]["riscs"].as_array().unwrap();
    for (risc, sem, stage) in [
        ("TRISC_0", "Tensix semaphore 2", "ops unpack"),
        ("TRISC_1", "Tensix semaphore 1", "ops math"),
        ("TRISC_2", "Tensix semaphore 0", "ops pack"),
    ] {
        let r = riscs.iter().find(|r| r["risc"] == risc).unwrap();
        let waits = r["waits"].as_object().unwrap();
        assert!(
            waits.contains_key(sem) && waits.contains_key("TTSync (its Tensix thread done)"),
            "{name}: {risc} waits {waits:?}"
        );
        assert_eq!(
            r["stage"], stage,
            "{name}: the TRISC's role names its stage"
        );
    }
    // Each Tensix semaphore wait that blocked is matched to the post another TRISC pushed
    // (`TTPROF_TENSIX_POST`); only the TTSync waits, which no signal ends, stay unmatched.
    let c = &a["ops"][0]["critical_path"];
    for u in c["unmatched_waits"].as_array().unwrap() {
        assert_eq!(
            u["resource"], "TTSync (its Tensix thread done)",
            "{name}: {u:#}"
        );
    }
    let crossed: Vec<&serde_json::Value> = c["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["resource"]
                .as_str()
                .is_some_and(|r| r.starts_with("Tensix semaphore "))
                && s["signal"].is_object()
                && s["signal"]["core"]["risc"] != s["core"]["risc"]
        })
        .collect();
    let matched = c["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["signal"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("tensix-sem-post-"))
        })
        .count();
    assert!(
        matched > 0,
        "{name}: no Tensix semaphore wait on the path was matched: {c:#}"
    );
    for s in &crossed {
        let n = s["resource"].as_str().unwrap().rsplit(' ').next().unwrap();
        assert_eq!(
            s["signal"]["name"],
            format!("tensix-sem-post-{n}"),
            "{name}: {s:#}"
        );
    }
    let t = |risc: &str, zone: &str, kind: &str| -> Vec<u64> {
        r.iter()
            .filter(|x| x.0 == risc && x.3 == zone && x.4 == kind)
            .map(|x| x.1)
            .collect()
    };
    let first = *t("TRISC_0", "unpack-tile", "ZONE_START")
        .iter()
        .min()
        .unwrap();
    let last = *t("TRISC_2", "pack-tile", "ZONE_END").iter().max().unwrap();
    (last - first) as f64 / case.tiles as f64
}

#[test]
fn compute_ops_on_the_coprocessor_match_the_host_reference() {
    for (name, case) in [
        ("add", eltwise(0, 4)),
        ("relu", eltwise(2, 4)),
        ("matmul", matmul(3)),
    ] {
        let per_tile = check(name, &case);
        println!(
            "{name}: {per_tile:.1} cycles per tile ({} tiles, unpack to pack)",
            case.tiles
        );
    }
}

/// Regression: `ops.cpp` zeroed a tile's `Dst` rows with `ZEROACC` naming address-modifier
/// section 0 (+8 rows), which `ZEROACC` of 16 rows applies (`ZEROACC.md`): the `ELWMUL`s
/// after it started 32 rows in and missed the tile's first 32 rows. The reference also
/// took `-x * 0` as `-0`, where `ELWMUL` adds the product to the zeroed `Dst` (`+0`).
#[test]
fn eltwise_mul_on_the_coprocessor_matches_the_host_reference() {
    let case = eltwise(1, 4);
    // The data has signed zero products, the case the reference must get right.
    assert!(case.expect.chunks(2).any(|d| d == [0, 0]));
    let per_tile = check("mul", &case);
    println!("mul: {per_tile:.1} cycles per tile (4 tiles, unpack to pack)");
}

#[test]
fn a_wrong_datum_is_counted_as_a_mismatch() {
    // The check is real: the reference with one datum changed gives one mismatch.
    let mut case = eltwise(0, 2);
    case.expect[2 * 1500] ^= 1;
    let r = rows(&run("add-wrong", &case));
    assert_eq!(data(&r, "mismatches"), ["1"]);
    assert_eq!(data(&r, "first-mismatch"), [(2 * 1500 / 4 * 4).to_string()]);
}

/// `--lines` on the compute kernel: exact per core (the session checks every core's lines
/// against its cycles), the output still right, and the pack RISC's final TTSync wait charged
/// to `ops.cpp`'s TTSync read as `ttsync: packer busy` (packer 0 still writing the last tile).
#[test]
fn lines_charge_the_pack_ttsync_to_the_packer() {
    let case = eltwise(0, 4);
    let out = run_with("add-lines", &case, &["--lines"]);
    assert_eq!(data(&rows(&out), "mismatches"), ["0"]);
    let text = std::fs::read_to_string(out.join("ttprof_lines.txt")).unwrap();
    let src = std::fs::read_to_string(workspace().join(OPS_CPP)).unwrap();
    let line = 1 + src
        .lines()
        .position(|l| l.trim() == "(void)*TTSYNC;")
        .unwrap();
    let pack = text
        .split("== op ")
        .find(|k| k.contains("| TRISC_2 |"))
        .unwrap();
    assert!(pack.contains("(= the cores' cycles)"), "{pack}");
    let row = pack
        .lines()
        .find(|l| l.contains(&format!("ops.cpp:{line} ")))
        .unwrap_or_else(|| panic!("no ops.cpp:{line}: {pack}"));
    assert!(row.contains("ttsync: packer busy"), "{row}");
}

/// The op's counters in ops.jsonl, summed over its tiles: (cycles, {counter: value}).
fn op_counters(out: &Path) -> (u64, std::collections::BTreeMap<String, u64>) {
    let text = std::fs::read_to_string(out.join("ops.jsonl")).unwrap();
    let mut cycles = 0;
    let mut values = std::collections::BTreeMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for tile in v["op"]["counters"].as_array().into_iter().flatten() {
            cycles += tile["cycles"].as_u64().unwrap();
            for c in tile["values"].as_array().unwrap() {
                *values
                    .entry(c["name"].as_str().unwrap().to_string())
                    .or_default() += c["value"].as_u64().unwrap();
            }
        }
    }
    (cycles, values)
}

/// The counted zone `zone` of the analysis' first op: (the counter it was named by, its
/// value).
fn counted_zone(out: &Path, zone: &str) -> (Option<String>, Option<u64>) {
    let text = std::fs::read_to_string(out.join("ttprof_analysis.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let z = v["ops"][0]["counted_zones"]
        .as_array()
        .and_then(|a| a.iter().find(|z| z["zone"] == zone))
        .unwrap_or_else(|| panic!("no counted zone {zone}: {text}"))
        .clone();
    (z["counter"].as_str().map(String::from), z["value"].as_u64())
}

/// `ttprof_zones.parquet`'s (counter, value) of the zones named `zone`.
fn parquet_counted(out: &Path, zone: &str) -> Vec<(Option<String>, Option<u32>)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    use arrow_array::Array;
    let f = std::fs::File::open(out.join("ttprof_zones.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let string = |col: &str, i: usize| {
            let d = b.column_by_name(col).unwrap().as_dictionary::<UInt32Type>();
            d.is_valid(i).then(|| {
                d.values()
                    .as_string::<i32>()
                    .value(d.keys().value(i) as usize)
                    .to_string()
            })
        };
        let v = b
            .column_by_name("value")
            .unwrap()
            .as_primitive::<UInt32Type>();
        // One column per armed counter after `counter`: a counted zone's value sits in its
        // counter's column and nowhere else.
        let schema = b.schema();
        let after = schema.index_of("counter").unwrap() + 1;
        let per_counter: Vec<(String, &arrow_array::UInt32Array)> = (after..b.num_columns())
            .map(|c| {
                let name = schema.field(c).name().clone();
                (name, b.column(c).as_primitive::<UInt32Type>())
            })
            .collect();
        for i in 0..b.num_rows() {
            if string("name", i).as_deref() == Some(zone) {
                let (counter, value) = (string("counter", i), v.is_valid(i).then(|| v.value(i)));
                for (name, col) in &per_counter {
                    let cell = col.is_valid(i).then(|| col.value(i));
                    let want = value.filter(|_| counter.as_deref() == Some(name.as_str()));
                    assert_eq!(cell, want, "{zone}: column {name}");
                }
                if let Some(c) = &counter {
                    assert!(per_counter.iter().any(|(n, _)| n == c), "no column {c}");
                }
                rows.push((counter, value));
            }
        }
    }
    rows
}

/// The host arms and reads the counters around the launch: no zone of the kernel moves
/// (times and names the same to the cycle), and the counted zone says it measured nothing
/// when no counter was armed.
#[test]
fn counters_on_or_off_change_no_zone() {
    let on = rows(&run_with(
        "matmul-on",
        &matmul(2),
        &["--counters", "fpu,instrn,unpack,pack"],
    ));
    let off_dir = run("matmul-off", &matmul(2));
    let off = rows(&off_dir);
    let zones =
        |r: &[(String, u64, String, String, String)]| -> Vec<(String, u64, String, String)> {
            r.iter()
                .map(|(risc, t, _, name, kind)| (risc.clone(), *t, name.clone(), kind.clone()))
                .collect()
        };
    assert!(on.len() > 20, "{on:?}");
    assert_eq!(zones(&on), zones(&off));
    assert_eq!(counted_zone(&off_dir, "math-op"), (None, None));
    // Parquet: the counted zone's value only with the counter that names it.
    assert_eq!(parquet_counted(&off_dir, "math-op"), [(None, None)]);
    let on_dir = workspace().join("target/test-tensix-ops/matmul-on/out");
    assert_eq!(
        parquet_counted(&on_dir, "math-op"),
        [(Some("FPU_COUNTER".to_string()), Some(35))]
    );
    assert_eq!(parquet_counted(&on_dir, "math-tile").len(), 2);
    assert!(parquet_counted(&on_dir, "math-tile")
        .iter()
        .all(|r| r.0.is_none()));
}

/// `--counters`: the Matrix and Vector Unit cycles of each op are the instructions
/// ops.cpp's math thread pushes, counted from its source: matmul over K tiles one `ZEROACC`
/// and per tile a `SETRWC` and 16 `MVMUL`s; relu per tile eight `MOVA2D`s and a
/// `CLEARDVALID`, and 32 groups of five Vector Unit instructions after one `SFPENCC`.
#[test]
fn counters_count_the_units_instructions_each_op_pushes() {
    let k = 2;
    let out = run_with("matmul-counters", &matmul(k), &["--counters", "fpu,unpack"]);
    assert_eq!(
        data(&rows(&out), "mismatches"),
        ["0"],
        "counting changes no result"
    );
    let (cycles, v) = op_counters(&out);
    assert_eq!(v["FPU_COUNTER"], 1 + 17 * k as u64, "{v:?}");
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ttprof_analysis.json")).unwrap())
            .unwrap();
    let evidence = a["ops"][0]["verdict"]["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("Tensix counters over the op: FPU_COUNTER 0.")
            && evidence.contains("UNPACK0_BUSY_THREAD0"),
        "{evidence}"
    );
    // The math stage bounds it, yet the FPU issued under 1% of the op's cycles: the counters
    // name no unit, and the verdict says so.
    assert!(
        evidence.contains("no counted unit near its peak")
            && a["ops"][0]["verdict"]["unit"].is_null(),
        "{evidence}"
    );
    let fpu = &a["ops"][0]["roofline"]["rates"][0];
    assert_eq!(
        (&fpu["what"], &fpu["amount"]),
        (&"FPU".into(), &(1 + 17 * k).into())
    );
    // ops.cpp's counted zone `math-op` spans the math thread's whole op: the same count.
    assert_eq!(
        counted_zone(&out, "math-op"),
        (Some("FPU_COUNTER".into()), Some(1 + 17 * k as u64))
    );
    // The banks stop with the tile's last core (about 21,000 cycles here), not with
    // the emulator's last scheduling window (250,000 cycles past the start).
    assert!(cycles > 0 && cycles < 50_000, "{cycles} cycles");
    let busy = v["UNPACK0_BUSY_THREAD0"];
    assert!(
        busy > 0 && busy < cycles,
        "unpacker 0 busy {busy} of {cycles} cycles"
    );

    let tiles = 2;
    let out = run_with(
        "relu-counters",
        &eltwise(2, tiles),
        &[
            "--counters",
            "fpu=SFPU_COUNTER,instrn=MATH_INSTRN_AVAILABLE_1",
        ],
    );
    let (_, v) = op_counters(&out);
    assert_eq!(v["SFPU_COUNTER"], 1 + 160 * tiles as u64, "{v:?}");
    assert_eq!(
        counted_zone(&out, "math-op"),
        (Some("SFPU_COUNTER".into()), Some(1 + 160 * tiles as u64))
    );
    assert!(v["MATH_INSTRN_AVAILABLE_1"] >= v["SFPU_COUNTER"], "{v:?}");
}

#[test]
fn a_counter_the_emulator_does_not_model_is_refused_before_the_run() {
    let o = Command::new(ttprof_binary())
        .args([
            "run",
            "--counters",
            "fpu,l1",
            "--kernel",
            "trisc=nothing.cpp",
            "--out",
        ])
        .arg(workspace().join("target/test-tensix-ops/refused"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--counters") && err.contains("L1's ports"),
        "{err}"
    );
}

/// `counted_zone!` in a Rust kernel (examples/kernels' `counted`): the zone carries the
/// Vector Unit instructions issued inside it (24 of the op's 32), named by the counter
/// `--counters` armed; the summary says so.
#[test]
fn a_rust_counted_zone_carries_the_instructions_issued_inside_it() {
    let kernels = build_kernels(
        &workspace().join("examples/kernels"),
        riscv_linker::Arch::WormholeB0,
        false,
        &[],
    );
    let out = workspace().join("target/test-tensix-ops/counted-rust");
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(ttprof_binary())
        .args(["run", "--counters", "fpu=SFPU_COUNTER", "--kernel"])
        .arg(format!(
            "trisc1={}",
            kernels.elf("counted").unwrap().display()
        ))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        counted_zone(&out, "sfpu-24"),
        (Some("SFPU_COUNTER".into()), Some(24))
    );
    assert_eq!(op_counters(&out).1["SFPU_COUNTER"], 32);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("counted zones: sfpu-24 SFPU_COUNTER 24 over"),
        "{stdout}"
    );
}
