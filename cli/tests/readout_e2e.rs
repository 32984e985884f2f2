//! End to end on the host: simulated cores' rings assembled into a device image (the
//! emulator's file layout), synthetic kernel ELFs with the simulators' site tables, an op
//! log; then readout, resolution, CSV, snapshots, damaged inputs and the CLI.

#[path = "../../host/tests/common/mod.rs"]
mod common;

use common::*;
use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use ttprof::devmem::{DeviceMemory, MappedImage, Recorder, Snapshot};
use ttprof::oplog::{KernelBinding, OpLog, OpLogWriter, OpRecord};
use ttprof::readout::{self, DrainOptions, Drainer, RingId};
use ttprof::resolve::Resolver;
use ttprof::testing::{write_kernel_elf, ElfSpec, ImageBuilder, Rng};
use ttprof_rt::sim::Sim;

const ARCH: Arch = Arch::WormholeB0;
const RISCS: [Risc; 3] = [Risc::Brisc, Risc::Ncrisc, Risc::Trisc1];
const RUNS: [u32; 2] = [11, 12];

fn tiles() -> Vec<NocCoord> {
    vec![NocCoord::new(1, 1), NocCoord::new(2, 1)]
}

type Expected = HashMap<(u32, NocCoord, Risc), Vec<(String, u64, u64)>>;

struct Fixture {
    dir: PathBuf,
    image: PathBuf,
    oplog: PathBuf,
    builder: ImageBuilder,
    expected: Expected,
    /// Non-zone records per ring: one value zone, event, data and sum per launch.
    extras: usize,
}

impl Drop for Fixture {
    /// Removes the scratch files unless the test failed (then they are kept to look at).
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs one simulated core through both launches; returns its L1, its site table, and the
/// zones it produced (name, start, end).
fn run_core(seed: u64, risc: Risc) -> (Vec<u8>, Vec<String>, NamedSpans) {
    let mut rng = Rng::new(seed);
    let sim = Sim::install(ARCH, risc, 1_000 + seed * 10_000);
    sim.set_tick(0);
    let shape = Shape {
        gap_bits: 6,
        len_bits: 7,
        max_depth: 3,
        max_children: 3,
    };
    let mut zones = Vec::new();
    for run in RUNS {
        assert!(sim.begin_launch(run));
        for _ in 0..12 {
            random_zones(&sim, &mut rng, shape, 0, &mut zones);
        }
        sim.advance(3);
        let start = sim.clock();
        {
            let mut z = ttprof_rt::value_zone!("tiles", 4);
            sim.advance(50);
            z.set(8);
        }
        zones.push(("tiles", start, start + 50));
        ttprof_rt::event!("barrier");
        ttprof_rt::data!("bytes", 4096);
        static SUM: ttprof_rt::SumZone =
            ttprof_rt::SumZone::__new(ttprof_rt::__site!(ttprof_rt, sum, "wait-cb"));
        for _ in 0..3 {
            let _m = SUM.measure();
            sim.advance(7);
        }
        SUM.emit();
        sim.end_launch();
    }
    assert_eq!(
        sim.read_u32(profiler::ring_word(risc, ring::DROPPED)),
        0,
        "the fixture fits in the ring"
    );
    let named = zones
        .into_iter()
        .map(|(n, s, e)| (n.to_string(), s, e))
        .collect();
    (sim.l1(), sim.sites(), named)
}

fn fixture(name: &str) -> Fixture {
    let dir = ttprof::testing::temp_dir(name);
    let mut builder = ImageBuilder::new(ARCH, 2, tiles());
    let mut expected = Expected::new();
    let mut bindings: HashMap<u32, Vec<KernelBinding>> = HashMap::new();
    let mut seed = 0;
    for chip in 0..2 {
        for tile in tiles() {
            for risc in RISCS {
                seed += 1;
                let (l1, sites, zones) = run_core(seed, risc);
                builder.put_ring(chip, tile, risc, &l1);
                let elf = format!("k-{chip}-{}-{}-{}.elf", tile.x, tile.y, risc.ident());
                write_kernel_elf(&dir.join(&elf), &ElfSpec::kernel(ARCH, risc, sites)).unwrap();
                bindings.entry(chip).or_default().push(KernelBinding {
                    risc: risc.name().into(),
                    elf: elf.into(),
                    cores: vec![[tile.x, tile.y]],
                });
                expected.insert((chip, tile, risc), zones);
            }
        }
    }
    let image = dir.join("device.img");
    builder.write(&image).unwrap();
    let oplog = dir.join("ops.jsonl");
    let mut w = OpLogWriter::create(&oplog, &ttprof::inputs::Inputs::none()).unwrap();
    for chip in 0..2 {
        for run in RUNS {
            w.op(&OpRecord::device_op(
                run,
                chip,
                format!("Op{run}"),
                (0, 1),
                bindings[&chip].clone(),
            ))
            .unwrap();
        }
    }
    drop(w);
    Fixture {
        dir,
        image,
        oplog,
        builder,
        expected,
        extras: 4 * RUNS.len(),
    }
}

fn zones_by_ring(r: &readout::Readout, sites: &ttprof::resolve::Resolution) -> Expected {
    let mut out = Expected::new();
    for (ri, ring) in r.rings().iter().enumerate() {
        let rec = &ring.records;
        let v = (0..rec.len())
            .filter(|&i| {
                matches!(
                    rec.kind()[i],
                    ttprof::decode::RecordKind::Zone | ttprof::decode::RecordKind::ValueZone
                )
            })
            .map(|i| {
                (
                    sites
                        .site(ri, rec.run_at(i), rec.site()[i])
                        .unwrap()
                        .name
                        .clone(),
                    rec.start_at(i),
                    rec.end_at(i),
                )
            })
            .collect();
        out.insert((ring.id.chip, ring.id.tile, ring.id.risc), v);
    }
    out
}

#[test]
fn every_ring_reads_out_resolves_and_costs_little_bus_traffic() {
    let f = fixture("e2e");
    let mem = MappedImage::open(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
    let r = readout::read(&mem, false).unwrap();
    assert!(r.issues().is_empty(), "{:?}", r.issues());
    assert_eq!(r.rings().len(), 2 * 2 * RISCS.len());
    assert_eq!((r.tiles(), r.unused_tiles()), (4, 0));
    let oplog = OpLog::read(&f.oplog, &ttprof::inputs::Inputs::none()).unwrap();
    let sites = Resolver::new(&oplog).resolve(&r);
    assert!(sites.issues.is_empty(), "{:?}", sites.issues);
    assert_eq!(sites.unresolved, 0);
    assert_eq!(zones_by_ring(&r, &sites), f.expected);
    for ring in r.rings() {
        assert_eq!(
            ring.records.len(),
            f.expected[&(ring.id.chip, ring.id.tile, ring.id.risc)].len() - 2
                + f.extras
                + RUNS.len()
        );
        assert_eq!(ring.state, ring::STATE_EXITED);
        assert_eq!((ring.dropped, ring.stalls), (0, 0));
    }
    // Only control words and live spans were read: everything read is accounted for.
    let ratio = r.bus_bytes_per_payload_byte().unwrap();
    assert!(ratio <= 1.05, "bus bytes per payload byte {ratio}");
    assert_eq!(r.bus_bytes(), mem.bytes_read());
    // Rings' bytes, plus 4 tile blocks (7 words) and the MAGIC word of each of the 8 unused
    // ring blocks.
    assert_eq!(
        r.bus_bytes(),
        r.rings().iter().map(|x| x.bus_bytes).sum::<u64>() + 4 * 7 * 4 + 8 * 4
    );
}

#[test]
fn consuming_frees_the_rings_and_a_drainer_never_duplicates() {
    let f = fixture("consume");
    let mem = MappedImage::open(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
    let mut d = Drainer::attach(
        &mem,
        DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )
    .unwrap();
    let first = d.drain().unwrap();
    assert!(first.records > 0);
    // The consumer's lease: one non-zero heartbeat in every tile, renewed at every drain.
    let beat = |t| {
        mem.read_u32(0, t, profiler::TILE_BLOCK + profiler::tile::CONSUMER)
            .unwrap()
    };
    let first_beat = beat(tiles()[0]);
    assert_ne!(first_beat, 0);
    for t in tiles() {
        assert_eq!(beat(t), first_beat);
    }
    let second = d.drain().unwrap();
    for t in tiles() {
        assert!(beat(t) != first_beat && beat(t) != 0, "renewed");
    }
    assert_eq!((second.records, second.payload_bytes), (0, 0));
    assert_eq!(
        second.bus_bytes,
        12 * 4 + 8 * 4,
        "an idle drain reads HEAD of each ring, MAGIC of unused ones"
    );
    let taken: usize = d.take_records().iter().map(|(_, r)| r.len()).sum();
    assert_eq!(taken as u64, first.records);
    let r = d.finish().unwrap();
    assert_eq!(
        mem.read_u32(
            1,
            NocCoord::new(2, 1),
            profiler::TILE_BLOCK + profiler::tile::CONSUMER
        )
        .unwrap(),
        0
    );
    for ring in r.rings() {
        let head = mem
            .read_u32(
                ring.id.chip,
                ring.id.tile,
                profiler::ring_word(ring.id.risc, ring::HEAD),
            )
            .unwrap();
        let tail = mem
            .read_u32(
                ring.id.chip,
                ring.id.tile,
                profiler::ring_word(ring.id.risc, ring::TAIL),
            )
            .unwrap();
        assert_eq!(head, tail);
    }
    assert_eq!(
        readout::read(&mem, false).unwrap().records(),
        0,
        "nothing left to read"
    );
}

#[test]
fn a_snapshot_replays_the_readout_bit_for_bit() {
    let f = fixture("snap");
    let mem = MappedImage::open_read_only(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
    let rec = Recorder::new(&mem).unwrap();
    let live = readout::read(&rec, false).unwrap();
    let path = f.dir.join("dev.snap");
    rec.into_snapshot()
        .save(&path, &ttprof::inputs::Inputs::none())
        .unwrap();
    let snap = Snapshot::load(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let replay = readout::read(&snap, false).unwrap();
    assert_eq!(replay.rings().len(), live.rings().len());
    for (a, b) in live.rings().iter().zip(replay.rings()) {
        assert_eq!(
            (a.id, &a.records, a.bus_bytes),
            (b.id, &b.records, b.bus_bytes)
        );
    }
    assert_eq!(snap.bytes_read(), live.bus_bytes());
    // The snapshot holds what was read and no more.
    let held: u64 = snap
        .extents()
        .iter()
        .map(|e| 4 * e.words.len() as u64)
        .sum();
    assert!(held <= live.bus_bytes());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = Snapshot::load(&path, &ttprof::inputs::Inputs::none())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dev.snap") && (e.contains("truncated") || e.contains("checksum")),
        "{e}"
    );
}

fn read_with(builder: &ImageBuilder, dir: &Path, name: &str) -> readout::Readout {
    let path = dir.join(name);
    builder.write(&path).unwrap();
    readout::read(
        &MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap(),
        false,
    )
    .unwrap()
}

#[test]
fn damaged_rings_are_reported_where_they_are_and_the_rest_is_read() {
    let mut f = fixture("damaged");
    let t = NocCoord::new(2, 1);
    // Bad magic on chip 1 BRISC, HEAD beyond capacity on chip 0 NCRISC, garbage in the
    // middle of chip 0 TRISC1's span.
    f.builder.poke(
        1,
        t,
        profiler::ring_word(Risc::Brisc, ring::MAGIC),
        0xDEAD_BEEF,
    );
    f.builder.poke(
        0,
        t,
        profiler::ring_word(Risc::Ncrisc, ring::HEAD),
        0x10_0000,
    );
    // The ring starts with a 16-byte Run record and short zones: byte 136 starts the 21st
    // zone. Make it an extended record of unknown kind 0x1f.
    let data = profiler::ring_data(Risc::Trisc1).start;
    f.builder.poke(0, t, data + 136, 0x9F00_0000);
    let r = read_with(&f.builder, &f.dir, "damaged.img");
    let msgs: Vec<String> = r
        .issues()
        .iter()
        .filter(|i| i.is_error())
        .map(|i| i.to_string())
        .collect();
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert!(
        msgs.iter().any(|m| m.contains("chip 1 tile (2,1) BRISC")
            && m.contains("magic is 0xdeadbeef")
            && m.contains("\"TTPR\"")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("chip 0 tile (2,1) NCRISC")
                && m.contains("beyond the ring's capacity")),
        "{msgs:#?}"
    );
    let bad = msgs
        .iter()
        .find(|m| m.contains("chip 0 tile (2,1) TRISC_1"))
        .unwrap();
    assert!(
        bad.contains("corrupt at position 0x88 (ring offset 0x88)")
            && bad.contains("unknown record header 0x9f00"),
        "{bad}"
    );
    // The damaged TRISC1 ring still gives the records before the damage.
    let ring = r
        .rings()
        .iter()
        .find(|x| {
            x.id == RingId {
                chip: 0,
                tile: t,
                risc: Risc::Trisc1,
            }
        })
        .unwrap();
    assert_eq!(ring.records.len(), 1 + 20);
    assert!(ring.corrupt.is_some() && ring.skipped_bytes > 0);
    // Every other ring is complete.
    assert_eq!(
        r.rings().iter().filter(|x| x.corrupt.is_none()).count(),
        12 - 1 - 2
    );
}

#[test]
fn a_wrong_tile_block_and_an_unused_tile_are_told_apart() {
    let mut f = fixture("tileblock");
    f.builder.poke(
        0,
        NocCoord::new(1, 1),
        profiler::TILE_BLOCK + profiler::tile::ARCH,
        Arch::Blackhole.id(),
    );
    for off in (0..profiler::RING_BLOCKS + 5 * profiler::RING_BLOCK_SIZE).step_by(4) {
        f.builder.poke(1, NocCoord::new(1, 1), off, 0);
    }
    let r = read_with(&f.builder, &f.dir, "tiles.img");
    let msgs: Vec<String> = r.issues().iter().map(|i| i.to_string()).collect();
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
    assert!(
        msgs[0].contains("chip 0 tile (1,1)")
            && msgs[0].contains("arch id 2, expected 1 (wormhole_b0"),
        "{}",
        msgs[0]
    );
    assert_eq!(r.unused_tiles(), 1);
    assert_eq!(r.rings().len(), 6);
}

#[test]
fn op_logs_and_elfs_that_do_not_match_the_run_are_counted_not_dropped() {
    let f = fixture("mismatch");
    let mem = MappedImage::open(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
    let r = readout::read(&mem, false).unwrap();
    // Forget run 12 on chip 1, and bind chip 0's BRISC kernels to an NCRISC ELF.
    let mut log = OpLog::read(&f.oplog, &ttprof::inputs::Inputs::none()).unwrap();
    log.entries.retain(
        |e| !matches!(e, ttprof::oplog::OpLogEntry::Op(o) if o.device == 1 && o.run_id == 12),
    );
    let ncrisc_elf = f.dir.join("k-0-1-1-ncrisc.elf");
    for e in &mut log.entries {
        if let ttprof::oplog::OpLogEntry::Op(o) = e {
            for k in o
                .kernels
                .iter_mut()
                .filter(|k| k.risc == "BRISC" && o.device == 0)
            {
                k.elf = ncrisc_elf.clone();
            }
        }
    }
    let sites = Resolver::new(&log).resolve(&r);
    let total: u64 = sites.resolved + sites.unresolved;
    assert_eq!(
        total as usize,
        r.records() - r.rings().len() * RUNS.len(),
        "every site record counted"
    );
    let missing_run: u64 = sites
        .issues
        .iter()
        .filter(|i| i.what.contains("run id 12 is not in op log"))
        .map(|i| i.count)
        .sum();
    let wrong_elf: u64 = sites
        .issues
        .iter()
        .filter(|i| i.what.contains("was linked for wormhole_b0 NCRISC"))
        .map(|i| i.count)
        .sum();
    assert!(missing_run > 0 && wrong_elf > 0, "{:#?}", sites.issues);
    assert_eq!(missing_run + wrong_elf, sites.unresolved);
    assert_eq!(
        sites
            .issues
            .iter()
            .filter(|i| i.what.contains("run id 12"))
            .count(),
        6,
        "one per ring of chip 1"
    );
}

/// Reads profile_log_device.csv the way tt-metal's process_device_log.py does, and checks
/// every row against the readout.
#[test]
fn the_device_csv_parses_like_process_device_log_and_nests() {
    let f = fixture("csv");
    let r = readout::read(
        &MappedImage::open(&f.image, &ttprof::inputs::Inputs::none()).unwrap(),
        false,
    )
    .unwrap();
    let sites =
        Resolver::new(&OpLog::read(&f.oplog, &ttprof::inputs::Inputs::none()).unwrap()).resolve(&r);
    let path = f.dir.join(ttprof::csv::FILE_NAME);
    let rows_written =
        ttprof::csv::write_file(&path, &r, &sites, 1000, &ttprof::inputs::Inputs::none()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let info: Vec<&str> = lines.next().unwrap().split(',').collect();
    let field = |i: usize| info[i].split(':').next_back().unwrap().trim();
    assert_eq!((field(0), field(1), field(2)), ("wormhole_b0", "1000", "2"));
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    assert_eq!(header.len(), 15);
    assert_eq!(header[5], "time[cycles since reset]");
    type Lane = (u32, u8, u8, String);
    let mut stacks: HashMap<Lane, Vec<(String, u64)>> = HashMap::new();
    let mut last_time: HashMap<Lane, u64> = HashMap::new();
    let mut got = Expected::new();
    let mut rows = 0;
    for line in lines {
        let c: Vec<&str> = line.split(',').collect();
        assert_eq!(c.len(), 15, "{line}");
        rows += 1;
        let (chip, x, y): (u32, u8, u8) = (
            c[0].parse().unwrap(),
            c[1].parse().unwrap(),
            c[2].parse().unwrap(),
        );
        let risc = Risc::from_name(c[3]).unwrap();
        let timer: u32 = c[4].parse().unwrap();
        let time: u64 = c[5].parse().unwrap();
        let run: u32 = c[7].parse().unwrap();
        assert!(RUNS.contains(&run) && c[8].is_empty() && c[9].is_empty());
        let key = (chip, x, y, c[3].to_string());
        assert!(
            *last_time.get(&key).unwrap_or(&0) <= time,
            "time order per RISC: {line}"
        );
        last_time.insert(key.clone(), time);
        let name = c[10].to_string();
        let kind = c[11];
        assert_eq!(
            timer >> 16,
            [
                "ZONE_START",
                "ZONE_END",
                "ZONE_TOTAL",
                "TS_DATA",
                "TS_EVENT"
            ]
            .iter()
            .position(|k| *k == kind)
            .unwrap() as u32
        );
        let line_no: u32 = c[12].parse().unwrap();
        assert!(line_no > 0 && c[13].ends_with(".rs"), "{line}");
        match kind {
            "ZONE_START" => stacks.entry(key).or_default().push((name, time)),
            "ZONE_END" => {
                let (open, start) = stacks
                    .get_mut(&key)
                    .unwrap()
                    .pop()
                    .expect("END after its START");
                assert_eq!(open, name, "properly nested: {line}");
                if name == "tiles" {
                    assert_eq!(c[14], "{\"value\": 8}");
                }
                got.entry((chip, NocCoord::new(x, y), risc))
                    .or_default()
                    .push((name, start, time));
            }
            "TS_DATA" => assert_eq!((name.as_str(), c[6]), ("bytes", "4096")),
            "TS_EVENT" => assert_eq!(name, "barrier"),
            "ZONE_TOTAL" => assert_eq!(
                (name.as_str(), c[6], c[14]),
                ("wait-cb", "21", "{\"count\": 3}")
            ),
            other => panic!("type {other}"),
        }
    }
    assert_eq!(rows, rows_written);
    assert!(
        stacks.values().all(|s| s.is_empty()),
        "every START has its END"
    );
    // The same zones as produced (CSV order is by start; compare as sets per ring).
    for (k, v) in f.expected.iter() {
        let mut a = v.clone();
        let mut b = got[k].clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{k:?}");
    }
}

fn ttprof(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ttprof"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn the_cli_reads_snapshots_and_fails_clearly_on_bad_input() {
    let f = fixture("cli");
    let (img, log, out) = (
        f.image.to_str().unwrap(),
        f.oplog.to_str().unwrap(),
        f.dir.join("out"),
    );
    let (code, stdout, stderr) = ttprof(&[
        "read",
        "--device",
        img,
        "--oplog",
        log,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("profile_log_device.csv")
            && stdout.contains("tiles")
            && stdout.contains("bus bytes per payload byte"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("profile_log_device.csv")).unwrap();

    let snap = f.dir.join("s.snap");
    let (code, stdout, stderr) =
        ttprof(&["snapshot", "--device", img, "-o", snap.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("12 ring(s)"), "{stdout}");
    let out2 = f.dir.join("out2");
    let (code, _, stderr) = ttprof(&[
        "read",
        "--device",
        snap.to_str().unwrap(),
        "--oplog",
        log,
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out2.join("profile_log_device.csv")).unwrap(),
        csv,
        "the replay writes the same CSV"
    );

    // A device file of the wrong size.
    let short = f.dir.join("short.img");
    std::fs::write(&short, &std::fs::read(&f.image).unwrap()[..8192]).unwrap();
    let (code, _, stderr) = ttprof(&["read", "--device", short.to_str().unwrap(), "--oplog", log]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("short.img") && stderr.contains("truncated or wrong file"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
    // Not a device file at all.
    let (code, _, stderr) = ttprof(&["read", "--device", log, "--oplog", log]);
    assert_eq!(code, 1);
    assert!(stderr.contains("expected a device image"), "{stderr}");
    // A missing kernel ELF: the readout still writes, names the file, and fails.
    std::fs::remove_file(f.dir.join("k-0-1-1-brisc.elf")).unwrap();
    let (code, _, stderr) = ttprof(&[
        "read",
        "--device",
        img,
        "--oplog",
        log,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("k-0-1-1-brisc.elf") && stderr.contains("chip 0 tile (1,1) BRISC"),
        "{stderr}"
    );
    // --consume on a snapshot (a recording) is refused with the reason.
    let (code, _, stderr) = ttprof(&[
        "read",
        "--device",
        snap.to_str().unwrap(),
        "--oplog",
        log,
        "--consume",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("s.snap") && stderr.contains("--consume"),
        "{stderr}"
    );
}
