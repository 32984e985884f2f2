//! Writes the seed corpora of the fuzz targets (checked in under `fuzz/corpus/<target>/`),
//! from real data: rings written by the runtime's producer (`ttprof_rt::sim::Sim`) and by
//! `wire::encode`, a device image assembled from them and recorded into a snapshot by a
//! readout, an op log written by `OpLogWriter`, synthetic kernel ELFs
//! (`ttprof::testing::kernel_elf`), any real kernel ELFs given on the command line, device
//! logs (the image's readout as `ttprof` writes its CSV, and hand-made shapes) and
//! `ttprof run` specs and manifests.
//!
//! ```text
//! cd fuzz && cargo run --release --example seeds -- corpus [KERNEL.elf ...]
//! ```
//!
//! Real kernel ELFs carry megabytes of DWARF that no parser here reads: strip it first with
//! `llvm-objcopy --strip-debug target/kernels/<arch>/riscv32im-unknown-none-elf/release/reader
//! reader.elf` (GNU strip adds a section symbol to `.ttprof_sites`, which ttprof refuses as a
//! site without metadata).
//! Every seed is checked against its parser before it is written: accepted, or for a device
//! log meant to be refused, refused (the `run_spec` seeds are not checked: most are refusals).

use riscv_linker::devfile::Geometry;
use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use ttprof::devmem::{MappedImage, Recorder, Snapshot, SyncSample};
use ttprof::elf::KernelElf;
use ttprof::oplog::{KernelBinding, OpLog, OpLogWriter, OpRecord, Signpost, TensorDesc};
use ttprof::testing::{kernel_elf, site_json, ElfSpec, ImageBuilder, Rng};
use ttprof_fuzz::fnv1a;
use ttprof_rt::sim::Sim;
use ttprof_rt::wire::{encode, Record, PAD};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(name), bytes).unwrap();
    println!("{target}/{name}: {} bytes", bytes.len());
}

/// Runs one simulated core through `launches` launches of `trees` zone trees and one record
/// of every other kind each; returns its L1 and site table.
fn run_core(arch: Arch, risc: Risc, seed: u64, clock: u64, launches: u32, trees: u32) -> (Vec<u8>, Vec<String>) {
    let mut rng = Rng::new(seed);
    let sim = Sim::install(arch, risc, clock);
    sim.set_tick(0);
    for run in 0..launches {
        assert!(sim.begin_launch(10 + run));
        for i in 0..trees {
            sim.advance(rng.bits(if i % 7 == 0 { 20 } else { 6 }));
            let outer = ttprof_rt::zone!("outer");
            for _ in 0..rng.below(4) {
                sim.advance(rng.bits(5));
                let inner = ttprof_rt::zone!("inner");
                sim.advance(rng.bits(if i % 5 == 0 { 17 } else { 7 }));
                drop(inner);
            }
            drop(outer);
        }
        {
            let mut z = ttprof_rt::value_zone!("tiles", 4);
            sim.advance(50);
            z.set(8);
        }
        ttprof_rt::event!("barrier");
        ttprof_rt::data!("bytes", 4096);
        static SUM: ttprof_rt::SumZone = ttprof_rt::SumZone::__new(ttprof_rt::__site!(ttprof_rt, sum, "wait-cb"));
        for _ in 0..3 {
            let _m = SUM.measure();
            sim.advance(7);
        }
        SUM.emit();
        sim.end_launch();
    }
    (sim.l1(), sim.sites())
}

/// The live span `[TAIL, HEAD)` of `risc`'s ring in a simulated L1 (the ring has not wrapped).
fn live_span(l1: &[u8], risc: Risc) -> Vec<u8> {
    let word = |off| {
        let a = profiler::ring_word(risc, off) as usize;
        u32::from_le_bytes(l1[a..a + 4].try_into().unwrap())
    };
    let (head, tail) = (word(ring::HEAD), word(ring::TAIL));
    assert!(tail <= head && head <= profiler::RING_CAPACITY, "an unwrapped ring");
    let d = profiler::ring_data(risc);
    l1[(d.start + tail) as usize..(d.start + head) as usize].to_vec()
}

/// Records encoded from `reference` on; returns the bytes and each record's end.
fn encoded(records: &[Record], mut reference: u64) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for r in records {
        let e = encode(r, reference).unwrap_or_else(|| panic!("{r:?} after {reference}"));
        bytes.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
        reference = r.ref_time().unwrap_or(reference);
        ends.push(bytes.len());
    }
    (bytes, ends)
}

/// A `decode` input: starting reference, cut, ring bytes.
fn decode_input(reference: u64, cut: usize, ring: &[u8]) -> Vec<u8> {
    let mut v = reference.to_le_bytes().to_vec();
    v.extend_from_slice(&(cut as u16).to_le_bytes());
    v.extend_from_slice(ring);
    v
}

/// One record of every form, from time `t0`.
fn every_form(t0: u64) -> Vec<Record> {
    vec![
        Record::Run { run_id: 7, time: t0 },
        Record::Zone { id: 1, end: t0 + 100, duration: 40, value: None },
        Record::Zone { id: 2, end: t0 + 200_000, duration: 1 << 16, value: None },
        Record::Zone { id: 3, end: t0 + (1 << 40), duration: 1 << 35, value: None },
        Record::Zone { id: 4, end: t0 + (1 << 40) + 500, duration: 5, value: Some(42) },
        Record::Zone { id: 5, end: t0 + (1 << 41), duration: 5, value: Some(7) },
        Record::Event { id: 6, time: t0 + (1 << 41) + 10 },
        Record::Event { id: 6, time: t0 + (1 << 42) },
        Record::Data { id: 8, time: t0 + (1 << 42) + 9, data: u64::MAX },
        Record::Data { id: 8, time: t0 + (1 << 43), data: 5 },
        Record::Sum { id: 9, time: t0 + (1 << 43) + 1, count: 3, total: 1 << 40 },
        Record::Time { time: t0 + (1 << 44) },
        Record::Loss { count: 5, first_run: 7, last_run: 8, first: t0 + (1 << 44), last: t0 + (1 << 44) + 9 },
        Record::Run { run_id: 8, time: t0 + (1 << 44) + 10 },
        Record::Zone { id: 1, end: t0 + (1 << 44) + 30, duration: 12, value: None },
    ]
}

fn decode_seeds(out: &Path) {
    // Real rings: what the producer wrote on two simulated cores.
    for (name, arch, risc, seed, clock) in [
        ("sim-wormhole-brisc", Arch::WormholeB0, Risc::Brisc, 1, 1_000),
        ("sim-blackhole-trisc1-high-clock", Arch::Blackhole, Risc::Trisc1, 2, (1 << 32) - 5_000),
    ] {
        let (l1, _) = run_core(arch, risc, seed, clock, 2, 24);
        let span = live_span(&l1, risc);
        write(out, "decode", name, &decode_input(0, 0, &span));
    }
    // Every record form, whole and cut at a record boundary.
    let (bytes, ends) = encoded(&every_form(1_000), 0);
    write(out, "decode", "every-form", &decode_input(0, 0, &bytes));
    write(out, "decode", "every-form-cut", &decode_input(0, ends[5], &bytes));
    // Around the 32-bit wrap of the 32-bit forms, and from a high reference.
    let t0 = u32::MAX as u64 - 120;
    let (bytes, ends) = encoded(&every_form(t0), t0);
    write(out, "decode", "every-form-u32-wrap", &decode_input(t0, ends[2], &bytes));
    let t0 = 1 << 62;
    let (bytes, _) = encoded(&every_form(t0), t0);
    write(out, "decode", "every-form-high", &decode_input(t0, 0, &bytes));
    // A dense run of short zones (the eight-at-a-time loop), then a pad.
    let mut rng = Rng::new(3);
    let mut t = 5_000u64;
    let dense: Vec<Record> = (0..40)
        .map(|_| {
            t += rng.below(300);
            Record::Zone { id: rng.bits(16) as u16, end: t, duration: rng.below(400), value: None }
        })
        .collect();
    let (mut bytes, ends) = encoded(&dense, 4_000);
    bytes.extend_from_slice(&[0, 0]);
    bytes.extend_from_slice(&PAD.to_le_bytes());
    bytes.extend_from_slice(&[0xAA; 6]);
    write(out, "decode", "dense-short-zones-pad", &decode_input(4_000, ends[16], &bytes));
    // Damaged: an unknown kind, a time going back, a record cut short.
    let (mut bytes, _) = encoded(&every_form(1_000)[..4], 0);
    bytes.extend_from_slice(&[0, 0, 0x00, 0x8D]);
    write(out, "decode", "unknown-kind", &decode_input(0, 0, &bytes));
    let (mut bytes, _) = encoded(&every_form(1_000)[..3], 0);
    let back = encode(&Record::Zone { id: 1, end: 1 << 40, duration: 1, value: None }, 0).unwrap();
    let mut h = back.halves;
    h[2..10].copy_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    bytes.extend(h[..10].iter().flat_map(|x| x.to_le_bytes()));
    write(out, "decode", "time-goes-back", &decode_input(0, 0, &bytes));
    let (bytes, _) = encoded(&every_form(1_000)[..4], 0);
    write(out, "decode", "cut-short", &decode_input(0, 0, &bytes[..bytes.len() - 6]));
}

const TILES: [NocCoord; 2] = [NocCoord::new(1, 1), NocCoord::new(2, 1)];

/// A device image of simulated cores' rings: one chip of two Wormhole tiles, two RISCs each,
/// one short launch on each (a small snapshot: the fuzzer's inputs stay small).
fn image(dir: &Path) -> (PathBuf, Vec<(Risc, Vec<String>)>) {
    let mut b = ImageBuilder::new(Arch::WormholeB0, 1, TILES.to_vec());
    let mut sites = Vec::new();
    let mut seed = 10;
    for tile in TILES {
        for risc in [Risc::Brisc, Risc::Trisc0] {
            seed += 1;
            let (l1, s) = run_core(Arch::WormholeB0, risc, seed, 2_000 * seed, 1, 5);
            b.put_ring(0, tile, risc, &l1);
            sites.push((risc, s));
        }
    }
    let path = dir.join("device.img");
    b.write(&path).unwrap();
    (path, sites)
}

fn snapshot_seeds(out: &Path, image_path: &Path, dir: &Path) {
    // What a readout of the image read, as `ttprof read --snapshot` records it, with clock
    // samples and a drained payload besides (every section kind).
    let mem = MappedImage::open_read_only(image_path, &ttprof::inputs::Inputs::none()).unwrap();
    let rec = Recorder::new(&mem).unwrap();
    let live = ttprof::readout::read(&rec, false).unwrap();
    assert!(live.records() > 40 && !live.has_errors(), "{:?}", live.issues());
    let snap = rec.into_snapshot();
    let path = dir.join("device.snap");
    snap.save(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let plain = std::fs::read(&path).unwrap();
    for (i, t) in TILES.iter().enumerate() {
        for k in 0..3u64 {
            let before = 1_000_000 * (k + 1) + 10 * i as u64;
            let sample = SyncSample { host_before_ns: before, device_cycles: 1_000 * before, host_after_ns: before + 700 };
            snap.add_sync_sample(0, *t, sample).unwrap();
        }
    }
    let (l1, _) = run_core(Arch::WormholeB0, Risc::Ncrisc, 99, 50, 1, 24);
    snap.add_drained(0, TILES[1], Risc::Ncrisc, &live_span(&l1, Risc::Ncrisc)[..240]).unwrap();
    snap.save(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let full = std::fs::read(&path).unwrap();
    // A snapshot of nothing but its tile table (Blackhole, two chips of two worker tiles).
    let g = Geometry { arch: Arch::Blackhole, chips: 2, tiles_per_chip: 2, l1_size: Arch::Blackhole.l1_size() };
    let bh = vec![NocCoord::new(1, 2), NocCoord::new(2, 2)];
    Snapshot::new(g, vec![bh.clone(), bh]).unwrap().save(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let empty = std::fs::read(&path).unwrap();
    for (name, bytes) in [("readout", &plain), ("readout-sync-drained", &full), ("tile-table-only", &empty)] {
        std::fs::write(&path, bytes).unwrap();
        let back = Snapshot::load(&path, &ttprof::inputs::Inputs::none()).unwrap();
        if back.extents().is_empty() {
            // Nothing recorded: a readout names the first word it misses.
            assert!(ttprof::readout::read(&back, false).is_err());
        } else {
            ttprof::readout::read(&back, false).unwrap();
        }
        assert_eq!(fnv1a(&bytes[..bytes.len() - 8]).to_le_bytes(), bytes[bytes.len() - 8..]);
        // The target appends the checksum itself.
        write(out, "snapshot", name, &bytes[..bytes.len() - 8]);
    }
}

fn image_header_seeds(out: &Path, image_path: &Path, dir: &Path) {
    // The header page of the real image (the target extends it to its size with zeros).
    let bytes = std::fs::read(image_path).unwrap();
    let g = Geometry::read_header(&bytes, bytes.len() as u64).unwrap();
    write(out, "image_header", "wormhole-1x2", &bytes[..g.header_size() as usize]);
    // Blackhole, three chips of three tiles; and no tiles at all (the header is the file).
    let tiles = vec![NocCoord::new(1, 2), NocCoord::new(2, 2), NocCoord::new(3, 2)];
    let path = dir.join("bh.img");
    ImageBuilder::new(Arch::Blackhole, 3, tiles).write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let g = Geometry::read_header(&bytes, bytes.len() as u64).unwrap();
    write(out, "image_header", "blackhole-3x3", &bytes[..g.header_size() as usize]);
    // (The checked-in `no-chips` seed, an image of no chips, was written when such an image
    // opened; the builder now refuses one, as the header reader does.)
    assert!(ImageBuilder::new(Arch::WormholeB0, 0, vec![]).write(&path).is_err());
    write(out, "image_header", "fixed-fields-only", &bytes[..riscv_linker::devfile::HEADER_FIXED as usize]);
}

fn oplog_seeds(out: &Path, dir: &Path, sites: &[(Risc, Vec<String>)]) {
    let path = dir.join("ops.jsonl");
    let mut w = OpLogWriter::create(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let tensor = |memory: &str| TensorDesc {
        id: None,
        shape: [1, 1, 32, 256],
        layout: "TILE".into(),
        dtype: "BFLOAT16".into(),
        memory: memory.into(),
    };
    for run in [10, 11] {
        w.op(&OpRecord {
            run_id: run,
            device: 0,
            op_code: format!("Matmul{run}"),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![tensor("DEV_0_L1_INTERLEAVED"), tensor("DEV_0_DRAM_INTERLEAVED")],
            outputs: vec![tensor("DEV_0_L1_INTERLEAVED")],
            host_start_ns: 1_000 * run as u64,
            host_end_ns: 1_000 * run as u64 + 900,
            kernels: sites
                .iter()
                .map(|(risc, _)| KernelBinding {
                    risc: risc.name().into(),
                    elf: format!("kernels/{}", risc.ident()).into(),
                    cores: TILES.iter().map(|t| [t.x, t.y]).collect(),
                })
                .collect(),
            counters: vec![],
        })
        .unwrap();
        w.signpost(&Signpost { name: format!("after-{run}"), device: 0, host_ns: 1_000 * run as u64 + 950 }).unwrap();
    }
    drop(w);
    let mut bytes = std::fs::read(&path).unwrap();
    write(out, "oplog", "two-ops-signposts", &bytes);
    // As a host program writes it by hand: attributes, blank lines, relative and absolute ELFs.
    bytes = concat!(
        "\n",
        r#"{"op":{"run_id":1,"device":0,"op_code":"kernel","op_type":"tt_dnn_device","attributes":{"tiles":"8","k":{"a":[1,2.5,null,true]}},"inputs":[],"outputs":[],"host_start_ns":49501709,"host_end_ns":49604109,"kernels":[{"risc":"BRISC","elf":"kernels/fault","cores":[[1,1],[2,1]]},{"risc":"TRISC_2","elf":"/abs/k.elf","cores":[]}]}}"#,
        "\n  \n",
        r#"{"signpost":{"name":"warmup-done","device":0,"host_ns":12000}}"#,
        "\n"
    )
    .as_bytes()
    .to_vec();
    write(out, "oplog", "hand-written", &bytes);
    for (name, bytes) in [("two-ops-signposts", std::fs::read(&path).unwrap()), ("hand-written", bytes)] {
        std::fs::write(&path, &bytes).unwrap();
        OpLog::read(&path, &ttprof::inputs::Inputs::none()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

fn elf_seeds(out: &Path, sites: &[(Risc, Vec<String>)], real: &[PathBuf]) {
    let (risc, s) = &sites[0];
    let mut specs = vec![("sim-sites", ElfSpec::kernel(Arch::WormholeB0, *risc, s.clone()))];
    let kinds = ["zone", "value_zone", "event", "data", "sum"];
    let every: Vec<String> = kinds.iter().enumerate().map(|(i, k)| site_json(k, &format!("{k}-site"), 10 + i as u32)).collect();
    specs.push(("every-kind", ElfSpec::kernel(Arch::Blackhole, Risc::Trisc2, every)));
    for (name, spec) in specs {
        let bytes = kernel_elf(&spec);
        KernelElf::parse(Path::new(name), &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        write(out, "elf_sites", name, &bytes);
    }
    for path in real {
        let bytes = std::fs::read(path).unwrap();
        let k = KernelElf::parse(path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let name = format!("kernel-{}", path.file_stem().unwrap().to_string_lossy());
        println!("{}: {} sites, {:?} {:?}", path.display(), k.sites.len(), k.arch, k.risc);
        write(out, "elf_sites", &name, &bytes);
    }
}

/// A device log's two header lines.
const CSV_HEAD: &str = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1\n\
    PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, \
    trace id, trace id counter, zone name, type, source line, source file, meta data\n";

/// One device-log row, its unread columns (timer id, trace ids) empty.
fn row(chip: u64, x: u32, y: u32, risc: &str, time: u64, run: &str, name: &str, kind: &str) -> String {
    format!("{chip},{x},{y},{risc},,{time},,{run},,,{name},{kind},3,k.cpp,\n")
}

/// Checks a device log the way `ttprof import` reads it: both passes when `accepted`, else
/// the first pass refuses it.
fn check_device_log(dir: &Path, name: &str, bytes: &[u8], accepted: bool) {
    use ttprof::ring_source::RingSource;
    let path = dir.join("profile_log_device.csv");
    std::fs::write(&path, bytes).unwrap();
    match ttprof::import::stream(&path, None, &ttprof::inputs::Inputs::none()) {
        Ok((i, mut rings)) => {
            assert!(accepted, "{name}: accepted");
            for n in 0..i.profile.readout().rings().len() {
                rings.ring(n).unwrap_or_else(|e| panic!("{name}: ring {n}: {e}"));
            }
        }
        Err(e) => assert!(!accepted, "{name}: {e}"),
    }
}

/// Device logs (`ttprof import`): one written by ttprof from the image's readout, and the
/// shapes issue 41's review found problems with: huge chip ids, many tiny rings (together
/// and interleaved), one long ring, deep nesting, long zone names (one past the line limit).
fn device_log_seeds(out: &Path, image_path: &Path, dir: &Path) {
    let none = ttprof::inputs::Inputs::none();
    let mut seeds: Vec<(&str, Vec<u8>, bool)> = Vec::new();
    let loaded = ttprof::profile::Profile::open(image_path, None, false, &none).unwrap();
    let p = &loaded.profile;
    let mut bytes = Vec::new();
    ttprof::csv::write(&mut bytes, p.readout(), p.sites(), 1000).unwrap();
    seeds.push(("sim-image", bytes, true));
    let pair = |chip: u64, x: u32, y: u32, risc: &str, t: u64, name: &str| {
        row(chip, x, y, risc, t, "1", name, "ZONE_START") + &row(chip, x, y, risc, t + 10, "1", name, "ZONE_END")
    };
    // Every row type, two runs, a value zone, a sum zone's count, an unmodelled RISC.
    let mut every = String::from(CSV_HEAD);
    every += &pair(0, 1, 1, "BRISC", 100, "z");
    every += &row(0, 1, 1, "BRISC", 120, "1", "d", "TS_DATA");
    every += &row(0, 1, 1, "BRISC", 130, "1", "e", "TS_EVENT");
    every += "0,1,1,BRISC,,140,7000,1,,,s,ZONE_TOTAL,3,k.cpp,{\"count\": 4}\n";
    every += "0,1,1,NCRISC,,150,,2,,,v,ZONE_START,3,k.cpp,{\"value\": 42}\n";
    every += &row(0, 1, 1, "NCRISC", 160, "2", "v", "ZONE_END");
    every += &row(0, 1, 1, "ERISC", 170, "2", "x", "TS_EVENT");
    every += &row(0, 2, 1, "TRISC_0", 180, "", "orphan", "ZONE_END");
    every += &row(0, 2, 1, "TRISC_1", 190, "2", "open", "ZONE_START");
    seeds.push(("every-row-type", every.into_bytes(), true));
    // Chip ids at u32::MAX and a million (the geometry's chip count saturates; nothing is
    // sized by it), and one past u32::MAX (refused).
    for (name, chip) in [("chip-u32-max", u32::MAX as u64), ("chip-million", 1_000_000), ("chip-past-u32", 1 << 32)] {
        let text = format!("{CSV_HEAD}{}{}", pair(0, 1, 1, "BRISC", 100, "z"), pair(chip, 1, 1, "BRISC", 200, "z"));
        seeds.push((name, text.into_bytes(), chip <= u32::MAX as u64));
    }
    // 2,000 rings of one sum zone each (one row each), on 2,000 chips' ids.
    let mut many = String::from(CSV_HEAD);
    for i in 0..2_000u64 {
        many += &format!("{i},1,1,BRISC,,{i},5,1,,,s,ZONE_TOTAL,,,\n");
    }
    seeds.push(("rings-2000-sum-zones", many.into_bytes(), true));
    // 1,200 rings of one zone each, each ring's rows together, then interleaved: every
    // ZONE_START first, every ZONE_END after (the second pass's window).
    let rings: Vec<(u32, u32, &str)> =
        (0..1_200u32).map(|i| (i % 240, i / 240, ["BRISC", "NCRISC", "TRISC_0"][(i % 3) as usize])).collect();
    let mut together = String::from(CSV_HEAD);
    let (mut starts, mut ends) = (String::new(), String::new());
    for &(x, y, risc) in &rings {
        together += &format!("0,{x},{y},{risc},,1,,,,,z,ZONE_START,,,\n0,{x},{y},{risc},,2,,,,,z,ZONE_END,,,\n");
        starts += &format!("0,{x},{y},{risc},,1,,,,,z,ZONE_START,,,\n");
        ends += &format!("0,{x},{y},{risc},,2,,,,,z,ZONE_END,,,\n");
    }
    seeds.push(("rings-1200-one-zone", together.into_bytes(), true));
    seeds.push(("rings-1200-interleaved", format!("{CSV_HEAD}{starts}{ends}").into_bytes(), true));
    // One ring of 1,300 zones in sequence, and 1,300 nested (the open-zone stack).
    let mut long = String::from(CSV_HEAD);
    let (mut open, mut close) = (String::new(), String::new());
    for i in 0..1_300u64 {
        long += &format!("0,1,1,BRISC,,{},,,,,z,ZONE_START,,,\n0,1,1,BRISC,,{},,,,,z,ZONE_END,,,\n", 3 * i, 3 * i + 2);
        open += &format!("0,1,1,BRISC,,{i},,,,,z,ZONE_START,,,\n");
        close += &format!("0,1,1,BRISC,,{},,,,,z,ZONE_END,,,\n", 10_000 - i);
    }
    seeds.push(("ring-1300-zones", long.into_bytes(), true));
    seeds.push(("ring-1300-nested", format!("{CSV_HEAD}{open}{close}").into_bytes(), true));
    // Long zone names: 65,000 bytes (inside the 64 KiB line limit; never closed, so the
    // issue names it) and 70,000 (past it: refused).
    let name = "n".repeat(65_000);
    seeds.push(("name-65000", format!("{CSV_HEAD}{}", row(0, 1, 1, "BRISC", 1, "1", &name, "ZONE_START")).into_bytes(), true));
    let name = "n".repeat(70_000);
    seeds.push(("name-70000", format!("{CSV_HEAD}{}", row(0, 1, 1, "BRISC", 1, "1", &name, "ZONE_START")).into_bytes(), false));
    // Times near 2^64, data and run ids at their limits.
    let mut high = String::from(CSV_HEAD);
    high += &format!("0,1,1,BRISC,,{},,4294967295,,,z,ZONE_START,,,\n", u64::MAX - 5);
    high += &format!("0,1,1,BRISC,,{},{},4294967295,,,z,ZONE_END,,,\n", u64::MAX, u64::MAX);
    high += &format!("0,255,255,BRISC,,{},,,,,s,ZONE_TOTAL,,,{{\"count\": 4294967295}}\n", u64::MAX);
    seeds.push(("times-near-u64-max", high.into_bytes(), true));
    for (name, bytes, accepted) in seeds {
        assert!(bytes.len() < 100_000, "{name}: {} bytes", bytes.len());
        check_device_log(dir, name, &bytes, accepted);
        write(out, "device_log", name, &bytes);
    }
}

/// `ttprof run`'s specs (the `run_spec` target's `KIND [LEN]` line, then the specs or the
/// manifest): the command line's and the README's forms, and `bytes=` of 2^64 - 1, 4 GiB,
/// 2^32 - 1 and just over the 1 GiB cap, huge addresses, pages and ids.
fn run_spec_seeds(out: &Path) {
    let seeds: [(&str, &str); 16] = [
        ("l1-words", "l1\n0x30000=7\n0x30004=0xffffffff\n196608=1_000\n0x30001=1\n0xffffffff=0\n"),
        ("l1-file", "l1 4096\n0x30000=@in.bin\n0x1000=@in.bin\n0xffffff00=@in.bin\n"),
        ("l1-file-past-l1", "l1 1048576\n0x100000=@in.bin\n"),
        ("dram-in", "dram-in 8192\n0x10000=@a.bin\n0x10000=@a.bin,page=2048,tensor=3\n0x0,tensor=9\n"),
        ("dram-in-typed", "dram-in 8192\n0x0=@a.bin,dtype=bfloat16,shape=1x1x32x128\n0x0=@a.bin,dtype=uint32,shape=4x512,layout=row_major\n"),
        ("dram-out", "dram-out\n0x20000=@out.bin,bytes=8192\n0x20000=@out.bin,expect=want.bin,tensor=4\n0x0,tensor=5\n"),
        ("dram-out-bytes-u64-max", "dram-out\n0x0=@out.bin,bytes=18446744073709551615\n"),
        ("dram-out-bytes-4gib", "dram-out\n0x0=@out.bin,bytes=4294967296\n0x0=@out.bin,bytes=0x100000000\n"),
        ("dram-out-bytes-u32-max", "dram-out\n0x0=@out.bin,bytes=4294967295\n0x0=@out.bin,bytes=1073741828\n0x0=@out.bin,bytes=1073741824\n"),
        ("dram-huge-addr-tensor", "dram-out\n0xffffffff=@out.bin,bytes=4096,tensor=4294967295\n0xfffff000=@o,bytes=1073741824,page=4\n"),
        ("dram-in-huge-file", "dram-in 8589934592\n0x0=@a.bin\n"),
        // A tensor whose bytes pass 2^64 (once a multiply overflow), and pages near 2^32.
        ("dram-shape-past-u64", "dram-in\n0x0=@a.bin,dtype=float32,shape=65536x65536x65536x65536\n0x0=@a.bin,dtype=uint16,shape=4294967295x4294967295,layout=row_major\n"),
        ("dram-page-near-u32-max", "dram-out\n0x0=@o,bytes=0,page=4294967292\n0x0=@o,dtype=float32,shape=1x1073741823,layout=row_major,bytes=0\n"),
        ("manifest-toml", "toml 4096\narch = \"wormhole_b0\"\ngrid = \"2x2\"\npolicy = \"block\"\n\n[[op]]\nname = \"add\"\nkernels = { brisc = \"kernels:reader\", trisc = \"add.cpp\" }\ntiles = [\"0,0\", \"1,1\"]\nl1 = [\"0x30000=7\", \"0x30010=@in.bin\"]\nargs = { brisc = [1, 2], \"ncrisc@1,1\" = \"4,0x8\" }\ndram_in = [\"0x0=@a.bin\"]\ndram_out = [\"0x10000=@out.bin,bytes=4096,expect=want.bin\"]\nlaunches = 2\nattributes = { k = \"v\", n = 3 }\n\n[[op]]\nname = \"second\"\nkernels = { ncrisc = \"k.elf\" }\n"),
        ("manifest-json", "json 4096\n{\"arch\": \"blackhole\", \"grid\": \"14x10\", \"op\": [{\"name\": \"a\", \"kernels\": {\"brisc\": \"r.elf\"}, \"tiles\": [\"13,9\"], \"dram_out\": [\"0x0=@o.bin,bytes=4294967295\"], \"launches\": 4294967295}]}\n"),
        ("manifest-long-name", "toml\n[[op]]\nname = \"NAME\"\nkernels = { brisc = \"k.elf\" }\n"),
    ];
    for (name, text) in seeds {
        let text = text.replace("NAME", &"n".repeat(70_000));
        assert!(text.len() < 100_000, "{name}: {} bytes", text.len());
        write(out, "run_spec", name, text.as_bytes());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("corpus", |s| s.as_str()));
    let real: Vec<PathBuf> = args.iter().skip(1).map(PathBuf::from).collect();
    let dir = ttprof::testing::temp_dir("fuzz-seeds");
    decode_seeds(&out);
    let (image_path, sites) = image(&dir);
    snapshot_seeds(&out, &image_path, &dir);
    image_header_seeds(&out, &image_path, &dir);
    oplog_seeds(&out, &dir, &sites);
    elf_seeds(&out, &sites, &real);
    device_log_seeds(&out, &image_path, &dir);
    run_spec_seeds(&out);
    let _ = std::fs::remove_dir_all(&dir);
}
