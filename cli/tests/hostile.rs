//! Hostile and heavy input (issue 26, "High"): `ttprof` runs as root in many CI containers,
//! so every path it is given may be a device node, a FIFO or a link, every input may be huge
//! or crafted, and every disk may fill. Each test here failed before its fix:
//!
//! - outputs replaced whatever was at their path (`/dev/stdout`, a FIFO, a link, the
//!   command's own input);
//! - untrusted inputs were read whole (a huge snapshot, device log or op log line) and
//!   aborted under a memory limit;
//! - `ttprof capture` lost what it had drained when the op log named no ops yet, when the
//!   image was truncated under it, or when its spool's disk filled.
//!
//! `TTPROF_BIN=/path/to/ttprof` runs them against another build (the one before a fix).
//!
//! The fixture: simulated cores (the runtime's real producer) record zones into rings that
//! become a device image, with kernel ELFs of their sites and an op log naming the run.

use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::oplog::{KernelBinding, OpLogWriter, OpRecord};
use ttprof::testing::{files_under, temp_dir, write_kernel_elf, ElfSpec, ImageBuilder};
use ttprof_rt::sim::Sim;

mod support;
use support::{bin, limited, p, put_core, text, ttprof, wrapper_sites, zone_ends, Scratch};

const ARCH: Arch = Arch::WormholeB0;
const TILES: [NocCoord; 2] = [NocCoord::new(1, 1), NocCoord::new(2, 1)];
/// Zones per ring (~6 bytes each: 6 KB of an 8 KB ring).
const LOOPS: usize = 1000;

struct Fixture {
    dir: Scratch,
    image: PathBuf,
    oplog: PathBuf,
    /// Every zone the rings hold (loops and the FW/KERNEL wrappers).
    zones: usize,
}

/// One core's launch of run 1: `LOOPS` zones inside its FW/KERNEL wrappers.
fn run_core(risc: Risc) -> (Vec<u8>, Vec<String>, usize) {
    let sim = Sim::install(ARCH, risc, 0);
    sim.set_tick(0);
    let (fw, kernel) = wrapper_sites(risc);
    sim.set_clock(1_000_000 + 11 * risc.index() as u64);
    let fw_start = sim.clock();
    assert!(sim.begin_launch(1));
    sim.advance(200);
    let k_start = sim.clock();
    for _ in 0..LOOPS {
        let _z = ttprof_rt::zone!("tile-loop");
        sim.advance(100);
    }
    sim.advance(50);
    sim.record_span(kernel, k_start, sim.clock());
    sim.advance(100);
    sim.record_span(fw, fw_start, sim.clock());
    sim.end_launch();
    (sim.l1(), sim.sites(), LOOPS + 2)
}

/// The op log of run 1, one op `Loop` whose kernels are `bindings`.
fn write_loop_oplog(path: &Path, bindings: Vec<KernelBinding>) {
    let mut w = OpLogWriter::create(path, &ttprof::inputs::Inputs::none()).unwrap();
    w.op(&OpRecord {
        run_id: 1,
        device: 0,
        op_code: "Loop".into(),
        op_type: "tt_dnn_device".into(),
        attributes: Default::default(),
        inputs: vec![],
        outputs: vec![],
        host_start_ns: 900_000,
        host_end_ns: 2_000_000,
        kernels: bindings,
        counters: vec![],
    })
    .unwrap();
}

fn fixture(name: &str) -> Fixture {
    let dir = temp_dir(name);
    let mut builder = ImageBuilder::new(ARCH, 1, TILES.to_vec());
    let mut bindings = Vec::new();
    let mut zones = 0;
    for tile in TILES {
        for risc in Risc::ALL {
            let (l1, sites, n) = run_core(risc);
            zones += n;
            bindings.push(put_core(&mut builder, &dir, tile, risc, (&l1, sites)));
        }
    }
    let image = dir.join("device.img");
    builder.write(&image).unwrap();
    let oplog = dir.join("ops.jsonl");
    write_loop_oplog(&oplog, bindings);
    Fixture {
        dir: Scratch(dir),
        image,
        oplog,
        zones,
    }
}

/// `ttprof` with its address space limited to `bytes`.
fn ttprof_limited(bytes: u64, args: &[&str]) -> Output {
    limited(bytes, args).output().expect("run ttprof")
}

// --- Item 1: outputs replace nothing but a regular file, and never an input ---------------

#[test]
fn outputs_never_replace_links_devices_fifos_or_the_commands_own_inputs() {
    use std::os::unix::fs::FileTypeExt;
    let f = fixture("hostile-outputs");
    let image_bytes = std::fs::read(&f.image).unwrap();

    // `snapshot --device X -o X` overwrote its own input with a snapshot and exited 0.
    let o = ttprof(&["snapshot", "--device", p(&f.image), "-o", p(&f.image)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "{}: is an input of this command: refusing",
            f.image.display()
        )),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::read(&f.image).unwrap() == image_bytes,
        "the device image is untouched"
    );
    // The same through a hard link.
    let hard = f.dir.join("hard.img");
    std::fs::hard_link(&f.image, &hard).unwrap();
    let o = ttprof(&["snapshot", "--device", p(&f.image), "-o", p(&hard)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("(the same file as {})", f.image.display())),
        "{}",
        text(&o)
    );
    assert!(std::fs::read(&f.image).unwrap() == image_bytes);
    // `-o -`: the snapshot on standard output (a pipe here), the note on standard error.
    let o = ttprof(&["snapshot", "--device", p(&f.image), "-o", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stdout.starts_with(b"TTSNAP\0\0"), "a snapshot on stdout");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("wrote the snapshot to standard output"),
        "{}",
        text(&o)
    );
    let snap = f.dir.join("from-stdout.snap");
    std::fs::write(&snap, &o.stdout).unwrap();
    let o = ttprof(&[
        "read",
        "--device",
        p(&snap),
        "--oplog",
        p(&f.oplog),
        "--out",
        p(&f.dir.join("r")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        zone_ends(&f.dir.join("r/profile_log_device.csv")),
        f.zones,
        "the streamed snapshot holds every zone"
    );

    // `diff --json` at a link to /proc/self/fd/1, a FIFO, a character device (as root,
    // /dev/null itself became a regular file): refused, each left as it was.
    let link = f.dir.join("stdout-link");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let fifo = f.dir.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let null = f.dir.join("null");
    let have_null = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have_null {
        eprintln!("SKIPPED: mknod failed (not root): no character device to test with");
    }
    for (dest, what) in [
        (&link, "is a symbolic link"),
        (&fifo, "is a FIFO"),
        (&null, "is a character device"),
    ] {
        if dest == &null && !have_null {
            continue;
        }
        let o = ttprof(&["diff", p(&f.image), p(&f.image), "--json", p(dest)]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", text(&o));
        assert!(
            text(&o).contains(&format!("{}: {what}", dest.display())),
            "{}",
            text(&o)
        );
        assert!(
            text(&o).contains("not a regular file: ttprof writes an output only as a regular file"),
            "{}",
            text(&o)
        );
        assert!(
            text(&o).contains("`-` writes to standard output"),
            "{}",
            text(&o)
        );
        let t = std::fs::symlink_metadata(dest).unwrap().file_type();
        assert!(
            t.is_symlink() || t.is_fifo() || t.is_char_device(),
            "{what}: still there, not replaced: {t:?}"
        );
    }
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("/proc/self/fd/1")
    );
    // `--json -`: the JSON alone on standard output, the table on standard error.
    let o = ttprof(&["diff", p(&f.image), p(&f.image), "--json", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON");
    assert!(json["rows"].is_array(), "{json}");
    let table = String::from_utf8_lossy(&o.stderr);
    assert!(
        table.contains("base: ") && table.contains("no change in"),
        "the table on stderr: {}",
        text(&o)
    );
    // An output onto a file of either run (here its op log, read beside the image).
    let log = std::fs::read(&f.oplog).unwrap();
    let o = ttprof(&["diff", p(&f.image), p(&f.image), "--json", p(&f.oplog)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("is an input of this command"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read(&f.oplog).unwrap(),
        log,
        "the op log is untouched"
    );
    // A regular file is still replaced, as before.
    let out = f.dir.join("diff.json");
    std::fs::write(&out, "old").unwrap();
    let o = ttprof(&["diff", p(&f.image), p(&f.image), "--json", p(&out)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&out).unwrap().contains("\"rows\""));
}

// --- Item 3: untrusted inputs are checked before they are read, and read in bounded pieces --

/// The address space `ttprof` gets in these tests: ample for the fixture's readout, far
/// less than the files below (each was read whole, or expanded, before: an abort, exit 134).
const LIMIT: u64 = 512 << 20;
/// The size of the huge inputs (sparse files: no disk is used for their zeros).
const HUGE: u64 = 1 << 30;

/// A sparse file of `len` bytes that starts with `head`.
fn sparse(path: &Path, head: &[u8], len: u64) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(head).unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn huge_or_crafted_inputs_are_refused_under_a_memory_limit_not_read_whole() {
    let f = fixture("hostile-inputs");
    let out = f.dir.join("out");
    // The limit is no obstacle to the fixture's own report.
    let o = ttprof_limited(
        LIMIT,
        &[
            "report",
            "--device",
            p(&f.image),
            "--oplog",
            p(&f.oplog),
            "--out",
            p(&out),
            "--no-summary",
        ],
    );
    assert!(
        o.status.success(),
        "the fixture reports under the limit: {}",
        text(&o)
    );

    // A snapshot's magic, then nothing that makes sense: refused at its header.
    let junk = f.dir.join("junk.snap");
    sparse(&junk, b"TTSNAP\0\0", HUGE);
    let o = ttprof_limited(
        LIMIT,
        &[
            "report",
            "--device",
            p(&junk),
            "--oplog",
            p(&f.oplog),
            "--out",
            p(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("junk.snap: snapshot format version 0, this build reads version 1"),
        "{}",
        text(&o)
    );
    // A well-formed header and one section spanning the file, with a wrong checksum: the
    // checksum is checked streaming, before any section is held.
    let mut head = b"TTSNAP\0\0".to_vec();
    for v in [1u32, ARCH.id(), 1, TILES.len() as u32, ARCH.l1_size(), 1] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    head.extend_from_slice(&4u32.to_le_bytes()); // drained payload
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&(HUGE - 32 - 16 - 8).to_le_bytes());
    let crafted = f.dir.join("crafted.snap");
    sparse(&crafted, &head, HUGE);
    for args in [
        vec![
            "report",
            "--device",
            p(&crafted),
            "--oplog",
            p(&f.oplog),
            "--out",
            p(&out),
        ],
        vec![
            "read",
            "--device",
            p(&crafted),
            "--oplog",
            p(&f.oplog),
            "--out",
            p(&out),
        ],
        vec!["diff", p(&crafted), p(&f.image)],
    ] {
        let o = ttprof_limited(LIMIT, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("crafted.snap: checksum mismatch"),
            "{args:?}: {}",
            text(&o)
        );
    }

    // A device log whose third line never ends: streamed, refused at the line limit.
    let run = f.dir.join("csv-run");
    std::fs::create_dir_all(&run).unwrap();
    let header = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 2\nPCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n";
    sparse(&run.join("profile_log_device.csv"), header.as_bytes(), HUGE);
    let o = ttprof_limited(LIMIT, &["diff", p(&run), p(&run)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("profile_log_device.csv: line 3 is longer than 65536 bytes"),
        "{}",
        text(&o)
    );

    // An op log of one 48 MB line (an attribute of 24 M numbers: ~800 MB once parsed).
    let big = f.dir.join("big.jsonl");
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        w.write_all(br#"{"op":{"run_id":1,"device":0,"op_code":"Loop","op_type":"t","host_start_ns":0,"host_end_ns":1,"attributes":{"a":["#).unwrap();
        let chunk = "1,".repeat(1 << 20);
        for _ in 0..24 {
            w.write_all(chunk.as_bytes()).unwrap();
        }
        w.write_all(b"1]}}}\n").unwrap();
    }
    let o = ttprof_limited(
        LIMIT,
        &[
            "report",
            "--device",
            p(&f.image),
            "--oplog",
            p(&big),
            "--out",
            p(&out),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("big.jsonl:1: longer than 1048576 bytes"),
        "{}",
        text(&o)
    );
}

// --- Item 5: a capture writes what it drained, whatever stops it ---------------------------

/// Starts `ttprof capture` on the fixture's image (`extra` arguments after the defaults).
fn capture(f: &Fixture, oplog: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args([
            "capture",
            "--device",
            p(&f.image),
            "--oplog",
            p(oplog),
            "--out",
            p(&f.dir.join("out")),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ttprof capture")
}

/// Waits for `child`, failing the test if it has not ended after two minutes.
fn wait(mut child: std::process::Child) -> Output {
    let give_up = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > give_up {
            let _ = child.kill();
            panic!("ttprof capture did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The end of a capture that lost nothing but could not write everything: exit 2, every
/// zone in the CSV, and an error naming `why` with the count.
fn check_kept(f: &Fixture, o: &Output, why: &str) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert_eq!(
        zone_ends(&f.dir.join("out/profile_log_device.csv")),
        f.zones,
        "every zone drained is written: {all}"
    );
    assert!(all.contains(why), "{all}");
    assert!(
        all.contains(&format!("the {} ", f.zones)) || all.contains(&format!("({})", f.zones)),
        "the count is said: {all}"
    );
}

#[test]
fn a_capture_with_all_outputs_and_an_op_log_that_names_no_ops_yet_writes_what_it_drained() {
    // The op log exists but is empty (the host program has not finished an op yet): the
    // report outputs cannot be joined to it. Before, exit 1 and nothing written.
    let f = fixture("hostile-capture-empty-log");
    let empty = f.dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let o = wait(capture(&f, &empty, &["--all-outputs", "--seconds", "0"]));
    check_kept(&f, &o, "--all-outputs");
    assert!(
        text(&o).contains("names no ops, but the device ran run 1"),
        "{}",
        text(&o)
    );
    assert!(
        f.dir.join("out/ttprof_trace.pftrace").is_file()
            && f.dir.join("out/ttprof_zones.parquet").is_file()
    );
}

#[test]
fn a_capture_whose_image_is_truncated_under_it_writes_what_it_drained() {
    // Before, exit 1 and nothing written, though every zone had been drained (and freed in
    // the rings) by then.
    let f = fixture("hostile-capture-truncated");
    let flag = f.dir.join("capturing");
    std::fs::write(&flag, "").unwrap();
    // Slow polls (a drain takes well under a millisecond): the image is truncated between
    // two drains, not during one (a truncation during a drain: see
    // `an_image_truncated_under_its_mapping_is_an_error_naming_it_not_sigbus`).
    let mut child = capture(
        &f,
        &f.oplog,
        &["--until-file-gone", p(&flag), "--idle-poll-ms", "1000"],
    );
    {
        let mem = MappedImage::open_read_only(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
        let give_up = Instant::now() + Duration::from_secs(120);
        let drained = |t: NocCoord| {
            mem.read_u32(0, t, profiler::TILE_BLOCK + tile::CONSUMER)
                .unwrap()
                != 0
                && Risc::ALL.iter().all(|&r| {
                    let at = profiler::ring_block(r);
                    mem.read_u32(0, t, at + ring::TAIL).unwrap()
                        == mem.read_u32(0, t, at + ring::HEAD).unwrap()
                })
        };
        while !TILES.iter().all(|&t| drained(t)) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the capture ended early"
            );
            assert!(
                Instant::now() < give_up,
                "the capture did not drain the rings"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f.image)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let o = wait(child);
    check_kept(&f, &o, "was truncated to 4096 bytes while mapped");
    assert!(
        text(&o).contains("the capture stopped early"),
        "{}",
        text(&o)
    );
}

/// A tmpfs of `size` on a fresh directory, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: PathBuf, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status();
        if !matches!(ok, Ok(s) if s.success()) {
            eprintln!("SKIPPED: cannot mount a {size} tmpfs (needs root): the full-disk case is not tested");
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Tmpfs {
    /// Fills the disk with a file of pages until a write fails; returns the file.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.0.join("filler");
        let mut w = std::fs::File::create(&filler).unwrap();
        let page = vec![0xA5u8; 4096];
        while w.write_all(&page).is_ok() {}
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_capture_whose_spool_disk_fills_writes_what_it_drained() {
    // The spool's disk holds one page more than a filler: the first drain (~60 KB) does not
    // fit. Before, exit 1 and the drained records gone.
    let f = fixture("hostile-capture-spool-full");
    let Some(fs) = Tmpfs::mount(f.dir.join("spool"), "1m") else {
        return;
    };
    let filler = fs.fill();
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len - 4096)
        .unwrap();
    // The spool on that disk, the outputs on another (`--spool-dir`): all written.
    let o = wait(capture(
        &f,
        &f.oplog,
        &["--spool-dir", p(&fs.0), "--seconds", "0"],
    ));
    check_kept(&f, &o, "cannot write the capture spool in");
    assert!(
        text(&o).contains("No space left on device")
            && text(&o).contains("the capture stopped early"),
        "{}",
        text(&o)
    );
    drop(fs);
}

#[test]
fn a_capture_whose_only_disk_fills_says_how_many_zones_it_lost() {
    // The spool and the outputs on one full disk: nothing can be written, but the capture
    // says what it lost and how to avoid it (before: only the spool's write error), and
    // exits 2: data lost, not unusable input (issue 41; before: exit 1).
    let f = fixture("hostile-capture-disk-full");
    let Some(fs) = Tmpfs::mount(f.dir.join("out"), "1m") else {
        return;
    };
    fs.fill();
    let o = wait(capture(&f, &f.oplog, &["--seconds", "0"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let msg = format!(
        "the {} zone(s) this capture drained could not be written and are lost",
        f.zones
    );
    assert!(
        text(&o).contains(&msg) && text(&o).contains("give --spool-dir another disk"),
        "{}",
        text(&o)
    );
    drop(fs);
}

// --- Issue 26, Medium: no link inside a folder we write into is followed ---------------------

/// A directory link planted inside a shared dataset (`zones/host=h/chip=0` -> elsewhere)
/// is refused with a message naming it; nothing lands outside.
#[test]
fn a_link_planted_inside_a_dataset_is_never_followed() {
    let f = fixture("hostile-dataset-link");
    let ds = f.dir.join("ds");
    let elsewhere = f.dir.join("elsewhere");
    std::fs::create_dir_all(ds.join("zones/host=h")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ds.join("zones/host=h/chip=0")).unwrap();
    let out = f.dir.join("out");
    let o = ttprof(&[
        "report",
        "--device",
        p(&f.image),
        "--oplog",
        p(&f.oplog),
        "--out",
        p(&out),
        "--dataset",
        p(&ds),
        "--dataset-host",
        "h",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("chip=0") && t.contains("symbolic link"), "{t}");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the link: {t}"
    );
}

// --- Issue 26, Medium: a damaged only ring is a data problem, not the op log's --------------

/// One tile, one BRISC ring of run 1, damaged by `damage`, with its op log.
fn one_ring(name: &str, damage: impl Fn(&mut ImageBuilder, NocCoord)) -> Fixture {
    let dir = temp_dir(name);
    let tile = TILES[0];
    let mut builder = ImageBuilder::new(ARCH, 1, vec![tile]);
    let (l1, sites, zones) = run_core(Risc::Brisc);
    builder.put_ring(0, tile, Risc::Brisc, &l1);
    write_kernel_elf(
        &dir.join("k.elf"),
        &ElfSpec::kernel(ARCH, Risc::Brisc, sites),
    )
    .unwrap();
    damage(&mut builder, tile);
    let image = dir.join("device.img");
    builder.write(&image).unwrap();
    let oplog = dir.join("ops.jsonl");
    write_loop_oplog(
        &oplog,
        vec![KernelBinding {
            risc: "BRISC".into(),
            elf: "k.elf".into(),
            cores: vec![[tile.x, tile.y]],
        }],
    );
    Fixture {
        dir: Scratch(dir),
        image,
        oplog,
        zones,
    }
}

#[test]
fn a_damaged_only_ring_is_a_data_problem_named_with_what_exists_written() {
    let data = profiler::ring_data(Risc::Brisc).start;
    type Damage = Box<dyn Fn(&mut ImageBuilder, NocCoord)>;
    let cases: [(&str, Damage, &str); 3] = [
        (
            "magic",
            Box::new(|b, t| {
                b.poke(
                    0,
                    t,
                    profiler::ring_word(Risc::Brisc, ring::MAGIC),
                    0xDEAD_BEEF,
                )
            }),
            "magic is 0xdeadbeef",
        ),
        (
            "record",
            Box::new(move |b, t| b.poke(0, t, data + 136, 0x9F00_0000)),
            "unknown record header",
        ),
        // What a capture killed after consuming the Run record leaves: the ring's first
        // record is no longer a Run record.
        (
            "run",
            Box::new(move |b, t| {
                for off in (0..16).step_by(4) {
                    b.poke(0, t, data + off, 0);
                }
            }),
            "record(s) before any Run record",
        ),
    ];
    for (name, damage, want) in cases {
        let f = one_ring(&format!("hostile-one-ring-{name}"), damage);
        let out = f.dir.join("out");
        let o = ttprof(&[
            "report",
            "--device",
            p(&f.image),
            "--oplog",
            p(&f.oplog),
            "--out",
            p(&out),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        assert!(t.contains(want), "{name}: {t}");
        assert!(!t.contains("swap"), "{name}: not the op log's fault: {t}");
        assert!(
            out.join("profile_log_device.csv").exists(),
            "{name}: what exists is written"
        );
    }
}

/// Names come from files ttprof does not control: an ESC, a NUL or a right-to-left override
/// in a zone name reaches the terminal escaped, never raw (here through `ttprof diff`'s
/// table of two tt-metal device logs).
#[test]
fn control_characters_in_names_are_printed_escaped() {
    let dir = temp_dir("printable-names");
    let evil = "evil\u{1b}[2J\u{0}\u{202e}zone";
    let header = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1\nPCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n";
    let mut runs = Vec::new();
    for (name, cycles) in [("a", 1000u64), ("b", 5000)] {
        let run = dir.join(name);
        std::fs::create_dir_all(&run).unwrap();
        let mut csv = header.to_string();
        for i in 0..10u64 {
            let start = 100_000 * (i + 1);
            csv.push_str(&format!(
                "0,1,1,BRISC,1,{start},0,1,,,{evil},ZONE_START,3,k.cpp,\n0,1,1,BRISC,65537,{},0,1,,,{evil},ZONE_END,3,k.cpp,\n",
                start + cycles
            ));
        }
        std::fs::write(run.join("profile_log_device.csv"), csv).unwrap();
        runs.push(run);
    }
    let o = ttprof(&["diff", p(&runs[0]), p(&runs[1])]);
    let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
    let shown = String::from_utf8_lossy(&all);
    assert!(
        shown.contains("evil\\u{1b}[2J\\u{0}\\u{202e}zone"),
        "{shown}"
    );
    for raw in [0x1bu8, 0] {
        assert!(
            !all.contains(&raw),
            "byte {raw:#x} reached the terminal: {shown}"
        );
    }
    assert!(!shown.contains('\u{202e}'), "{shown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture given an op log path that does not exist names that path and never says "no op
/// log given" (it was given: it could not be read).
#[test]
fn a_capture_with_a_missing_op_log_names_the_path_not_an_absent_option() {
    let f = fixture("hostile-capture-missing-log");
    let missing = f.dir.join("not-written-yet.jsonl");
    let o = wait(capture(&f, &missing, &["--seconds", "0"]));
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.contains("not-written-yet.jsonl"), "{all}");
    assert!(!all.contains("no op log given"), "{all}");
    assert!(
        all.contains("without an op log"),
        "the records it could not name are counted: {all}"
    );
    assert_eq!(
        zone_ends(&f.dir.join("out/profile_log_device.csv")),
        f.zones,
        "every zone drained is written: {all}"
    );
}

// --- Ctrl-C and SIGTERM leave no hidden temporaries (issue 26, Low) -------------------------

/// Temporaries (`.ttprof-*.tmp`) in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".ttprof-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_interrupted_report_removes_its_temporaries() {
    let f = fixture("hostile-interrupted");
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let out = f.dir.join(format!("out-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        // Each commit waits forever with its temporary in place: the signal comes mid-write.
        let child = Command::new(bin())
            .args([
                "report",
                "--device",
                p(&f.image),
                "--oplog",
                p(&f.oplog),
                "--out",
            ])
            .arg(&out)
            .env("TTPROF_TEST_HOLD_COMMIT", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let give_up = Instant::now() + Duration::from_secs(120);
        while temporaries(&out).is_empty() {
            assert!(Instant::now() < give_up, "{name}: no temporary appeared");
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: a plain kill(2) of our own child.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{name}: {}", text(&o));
        assert!(
            text(&o).contains("unfinished output(s) removed"),
            "{name}: {}",
            text(&o)
        );
        assert_eq!(temporaries(&out), Vec::<String>::new(), "{name}");
    }
}

// --- A full disk after the main outputs: exit 2 naming what was not written (issue 26) -----

#[test]
fn a_disk_full_after_the_main_outputs_exits_2_naming_what_was_not_written() {
    // The outputs go to a disk with room; the dataset to a full one. Before: exit 1, as
    // if the input were unusable.
    let f = fixture("hostile-dataset-disk-full");
    let Some(fs) = Tmpfs::mount(f.dir.join("dataset"), "1m") else {
        return;
    };
    fs.fill();
    let out = f.dir.join("out");
    let o = report_with_dataset(&f, &out, &fs.0);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("was not written (its disk is full)") && text(&o).contains(p(&fs.0)),
        "{}",
        text(&o)
    );
    assert_eq!(zone_ends(&out.join("profile_log_device.csv")), f.zones);
    drop(fs);
}

/// `report` of the fixture's image to `out`, with `--dataset dataset`.
fn report_with_dataset(f: &Fixture, out: &Path, dataset: &Path) -> Output {
    ttprof(&[
        "report",
        "--device",
        p(&f.image),
        "--oplog",
        p(&f.oplog),
        "--out",
        p(out),
        "--dataset",
        p(dataset),
    ])
}

#[test]
fn a_dataset_disk_that_fills_at_any_page_exits_2_never_1() {
    // The dataset's disk is given one more page of room each time, from none to all it
    // needs, so the disk fills at every page of the dataset's files. Every one is a full
    // disk (exit 2 naming the dataset), never an unusable input (exit 1). (A disk filling
    // in Parquet's own last flush, which came back as text and exit 1, is tested byte by
    // byte in the library: `a_disk_full_anywhere_in_a_table_is_the_io_error_itself`.)
    let f = fixture("hostile-dataset-disk-fills");
    let out = f.dir.join("out");
    let report = |dataset: &Path| report_with_dataset(&f, &out, dataset);
    // The dataset's pages, written where there is room.
    let roomy = f.dir.join("roomy");
    let o = report(&roomy);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let written = files_under(&roomy);
    let pages: u64 = written
        .values()
        .map(|bytes| (bytes.len() as u64).div_ceil(4096))
        .sum();
    assert!(pages > 3, "the dataset spans pages: {pages}");
    let Some(fs) = Tmpfs::mount(f.dir.join("dataset"), "1m") else {
        return;
    };
    let filler = fs.fill();
    let full = std::fs::metadata(&filler).unwrap().len();
    let dataset = fs.0.join("set");
    let mut codes = Vec::new();
    for room in 0..=pages + 2 {
        let _ = std::fs::remove_dir_all(&dataset);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap()
            .set_len(full - room * 4096)
            .unwrap();
        let o = report(&dataset);
        let code = o.status.code();
        match code {
            Some(2) => assert!(
                text(&o).contains("was not written (its disk is full)")
                    && text(&o).contains(p(&dataset)),
                "room {room} pages: {}",
                text(&o)
            ),
            Some(0) => assert_eq!(
                files_under(&dataset).keys().collect::<Vec<_>>(),
                written.keys().collect::<Vec<_>>(),
                "room {room} pages"
            ),
            _ => panic!("room {room} of {pages} pages: {code:?}: {}", text(&o)),
        }
        codes.push(code);
    }
    assert_eq!(codes[0], Some(2), "no room is a full disk");
    assert_eq!(
        codes.last(),
        Some(&Some(0)),
        "room for all of it writes it all"
    );
    drop(fs);
}

// --- An image truncated under its mapping: an error naming it, not SIGBUS (issue 26) --------

#[test]
fn an_image_truncated_under_its_mapping_is_an_error_naming_it_not_sigbus() {
    // What a capture's drain meets when the image is truncated during it. Before: SIGBUS
    // killed the process (this test binary with it).
    let f = fixture("hostile-truncated-mapping");
    let mem = MappedImage::open(&f.image, &ttprof::inputs::Inputs::none()).unwrap();
    let at = profiler::ring_block(Risc::Brisc);
    assert!(mem.read_u32(0, TILES[1], at + ring::HEAD).is_ok());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f.image)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let mut words = vec![0u32; 64];
    let e = mem
        .read_words(0, TILES[1], profiler::RING_BASE, &mut words)
        .expect_err("the image is gone under the mapping")
        .to_string();
    assert!(
        e.contains(p(&f.image)) && e.contains("was truncated while this process read it"),
        "{e}"
    );
    assert!(
        mem.write_u32(0, TILES[1], at + ring::TAIL, 0).is_err(),
        "every later access is refused too"
    );
}

/// A device log is untrusted: a `PCIe slot` of 4294967295 in a 358-byte CSV made one entry
/// per chip id up to it (issue 41, High 1: `import`, `diff` and `tracy` aborted out of
/// memory). Memory follows the chips present, not the largest id.
#[test]
fn a_huge_chip_id_in_a_device_log_takes_no_memory() {
    let dir = temp_dir("hostile-huge-chip-id");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let csv = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 1\n\
PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data\n\
4294967295,1,1,BRISC,1,1000,0,1,,,z,ZONE_START,3,k.cpp,\n\
4294967295,1,1,BRISC,65537,2000,0,1,,,z,ZONE_END,3,k.cpp,\n";
    let log = run.join("profile_log_device.csv");
    std::fs::write(&log, csv).unwrap();
    let out = dir.join("out");
    let o = limited(
        1 << 30,
        &["import", p(&log), "--no-summary", "--out", p(&out)],
    )
    .output()
    .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 2)),
        "import: {}",
        text(&o)
    );
    assert_eq!(
        zone_ends(&out.join("profile_log_device.csv")),
        1,
        "{}",
        text(&o)
    );
    let o = limited(1 << 30, &["diff", p(&run), p(&run)])
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 2)), "diff: {}", text(&o));
    assert!(text(&o).contains('z'), "diff: {}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
