//! Clock sync through every backend against the emulator's ground truth: the in-process
//! adapter, the image's clock mailbox (in this process, and from a second process while a
//! kernel runs), and a snapshot that records, saves, loads and replays the samples.

use riscv_linker::{memory_map, Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use ttprof::clock::{all_tiles, emu_tiles, ClockSync, EmuClock, Fit, FitOptions, TileSample};
use ttprof::devmem::{ClockRecorder, DeviceClock, DeviceMemory, MappedImage, Snapshot, SyncSample};
use ttprof_emu::asm::{beq, ecall, jal, li, lw, Elf};
use ttprof_emu::{ChipClock, ClockModel, Device, DeviceConfig, ReadLatency, TileOffsets};

const ARCH: Arch = Arch::WormholeB0;
const FLAG: u32 = 0x3_0000;
const IMAGE_ENV: &str = "TTPROF_CLOCK_CHILD_IMAGE";
const OUT_ENV: &str = "TTPROF_CLOCK_CHILD_OUT";

fn scratch(name: &str) -> PathBuf {
    let dir = ttprof::testing::temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two chips of 2x2 tiles, 1 us ± 0.5 us reads, ±200 ppm, seeded tile offsets.
fn device(image: &Path) -> Device {
    let mut cfg = DeviceConfig::new(ARCH, (2, 2));
    cfg.chips = 2;
    cfg.image = Some(image.to_path_buf());
    cfg.clock = ClockModel {
        chips: vec![
            ChipClock {
                true_mhz: Some(1000.2),
                drift_ppm_per_s: 0.0,
                reset_host_ns: 1e6,
            },
            ChipClock {
                true_mhz: Some(999.8),
                drift_ppm_per_s: 0.0,
                reset_host_ns: 3e6,
            },
        ],
        tile_offsets: TileOffsets::Seeded {
            max_cycles: 1_000_000,
            seed: 5,
        },
        host_read: ReadLatency::uniform(1000.0, 500.0, 77),
        ..ClockModel::nominal()
    };
    Device::new(cfg).unwrap()
}

/// Worst |fitted - true| host time of device times across `span`, over every tile.
fn worst_error(fit: &Fit, dev: &Device, span: (f64, f64)) -> f64 {
    let mut worst = 0.0f64;
    for (chip, tile) in emu_tiles(dev) {
        let truth = dev.clock_truth(chip, tile).unwrap();
        for k in 0..=20 {
            let c = truth
                .cycles_at(span.0 + (span.1 - span.0) * k as f64 / 20.0)
                .floor() as u64;
            let err = fit.timebase.host_ns(chip, tile, c).unwrap() - truth.host_ns_at(c as f64);
            worst = worst.max(err.abs());
        }
    }
    worst
}

#[test]
fn in_process_windows_are_recorded_replayed_and_fit_the_truth() {
    let dir = scratch("clock-inproc");
    let dev = device(&dir.join("dev.img"));
    let mem = MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none()).unwrap();
    let snap = Snapshot::like(&mem).unwrap();
    let mut sync = ClockSync::new(emu_tiles(&dev), 50);
    let start = dev.host_time_ns();
    sync.window(&ClockRecorder::new(&EmuClock::new(&dev), &snap))
        .unwrap();
    dev.advance_host_time(0.5e9); // the run
    sync.window(&ClockRecorder::new(&EmuClock::new(&dev), &snap))
        .unwrap();
    let end = dev.host_time_ns();
    assert!(
        end - start > 0.5e9 + 2.0 * 49.0 * 500e3,
        "windows are spread 500 us a round"
    );
    let fit = sync.fit(ARCH, 2, &FitOptions::default()).unwrap();
    assert!(fit.issues.is_empty(), "{:?}", fit.issues);
    let worst = worst_error(&fit, &dev, (start, end));
    assert!(worst < 50.0, "worst alignment error {worst} ns\n{fit}");

    let path = dir.join("sync.snap");
    snap.save(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let back = Snapshot::load(&path, &ttprof::inputs::Inputs::none()).unwrap();
    assert_eq!(
        back.sync_samples(),
        sync.samples(),
        "saved and loaded in order"
    );
    let refit = ttprof::clock::fit(&back.sync_samples(), ARCH, 2, &FitOptions::default()).unwrap();
    assert_eq!(refit, fit, "the offline fit is the live one");
    // Replay: each tile's samples in the order taken, then a clear error.
    let tile = dev.tiles()[3];
    let recorded: Vec<SyncSample> = sync
        .samples()
        .iter()
        .filter(|s| s.chip == 1 && s.tile == tile)
        .map(|s| s.sample)
        .collect();
    let replayed: Vec<SyncSample> = (0..100)
        .map(|_| back.sync_sample(1, tile).unwrap())
        .collect();
    assert_eq!(replayed, recorded);
    let e = back.sync_sample(1, tile).unwrap_err().to_string();
    assert!(
        e.contains("no more recorded clock samples") && e.contains("100 recorded"),
        "{e}"
    );
    assert!(back
        .add_sync_sample(0, NocCoord::new(9, 9), recorded[0])
        .is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_mailbox_answers_in_virtual_host_time() {
    let dir = scratch("clock-mailbox");
    let dev = device(&dir.join("dev.img"));
    let mem = MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none()).unwrap();
    assert!(mem.clock_served());
    let mut sync = ClockSync::new(all_tiles(&mem), 40);
    let start = dev.host_time_ns();
    sync.window(&mem).unwrap();
    dev.advance_host_time(0.2e9);
    sync.window(&mem).unwrap();
    let samples = sync.samples();
    assert!(
        samples
            .windows(2)
            .all(|w| w[1].sample.host_before_ns >= w[0].sample.host_after_ns),
        "in order"
    );
    let first_after_run = samples[samples.len() / 2].sample.host_before_ns as f64;
    assert!(
        first_after_run >= start + 0.2e9,
        "the second window follows the device's clock"
    );
    assert!(
        samples[samples.len() - 1].sample.host_after_ns as f64 - first_after_run > 39.0 * 500e3,
        "REQ_DELAY spreads it"
    );
    let fit = sync.fit(ARCH, 2, &FitOptions::default()).unwrap();
    let end = samples[samples.len() - 1].sample.host_after_ns as f64;
    let worst = worst_error(&fit, &dev, (start, end));
    assert!(worst < 50.0, "worst alignment error {worst} ns\n{fit}");

    let e = mem
        .sync_sample(2, NocCoord::new(1, 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip 2") && e.contains("no such chip"), "{e}");
    let e = mem
        .sync_sample(0, NocCoord::new(0, 0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a worker tile"), "{e}");
    let ro =
        MappedImage::open_read_only(dev.image_path(), &ttprof::inputs::Inputs::none()).unwrap();
    assert!(ro
        .sync_sample(0, NocCoord::new(1, 1))
        .unwrap_err()
        .to_string()
        .contains("read-only"));
    drop(dev);
    let e = mem
        .sync_sample(0, NocCoord::new(1, 1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no emulator is serving"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// BRISC spins until `FLAG` is set.
fn spin_until_flag() -> Vec<u8> {
    let m = memory_map(ARCH, Risc::Brisc);
    let mut w: Vec<u32> = li(5, FLAG).to_vec();
    w.extend([lw(9, 5, 0), beq(9, 0, -4), ecall()]);
    let boot = m.boot.expect("BRISC boots from a jump");
    Elf::new(m.code.start)
        .text(m.code.start, &w)
        .text(boot.start, &[jal(0, (m.code.start - boot.start) as i32)])
        .symbol("_start", m.code.start, 4 * w.len() as u32)
        .build()
}

#[test]
fn another_process_syncs_while_a_kernel_runs() {
    let dir = scratch("clock-two-process");
    let mut dev = device(&dir.join("dev.img"));
    let tiles = dev.tiles();
    for chip in 0..2 {
        for &t in &tiles {
            dev.load_kernel(chip, t, Risc::Brisc, &spin_until_flag(), "spin")
                .unwrap();
        }
    }
    let out = dir.join("samples.txt");
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_takes_a_window_then_releases_the_kernels",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(IMAGE_ENV, dev.image_path())
        .env(OUT_ENV, &out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = dev.host_time_ns();
    let run = dev.run();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "child: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    run.unwrap();
    let samples: Vec<TileSample> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            let sample = SyncSample {
                host_before_ns: v[3],
                device_cycles: v[4],
                host_after_ns: v[5],
            };
            TileSample {
                chip: v[0] as u32,
                tile: NocCoord::new(v[1] as u8, v[2] as u8),
                sample,
            }
        })
        .collect();
    assert_eq!(samples.len(), 8 * 30);
    for s in &samples {
        let truth = dev.clock_truth(s.chip, s.tile).unwrap();
        let at = truth.host_ns_at(s.sample.device_cycles as f64);
        assert!(
            s.sample.host_before_ns as f64 - 1.5 <= at && at <= s.sample.host_after_ns as f64 + 1.5,
            "{s:?}"
        );
    }
    let fit = ttprof::clock::fit(&samples, ARCH, 2, &FitOptions::default()).unwrap();
    let span = (start, samples.last().unwrap().sample.host_after_ns as f64);
    let worst = worst_error(&fit, &dev, span);
    assert!(worst < 100.0, "one window only: {worst} ns\n{fit}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "the other process of another_process_syncs_while_a_kernel_runs, which starts it"]
fn child_takes_a_window_then_releases_the_kernels() {
    let (Ok(image), Ok(out)) = (std::env::var(IMAGE_ENV), std::env::var(OUT_ENV)) else {
        panic!("run by another_process_syncs_while_a_kernel_runs only");
    };
    let mem = MappedImage::open(Path::new(&image), &ttprof::inputs::Inputs::none()).unwrap();
    // A safety net so a broken emulator fails the test instead of hanging it.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while mem.status() & riscv_linker::devfile::STATUS_RUNNING == 0 {
        assert!(
            std::time::Instant::now() < give_up,
            "the kernels never started"
        );
        std::thread::yield_now();
    }
    let mut sync = ClockSync::new(all_tiles(&mem), 30).with_spacing_ns(100_000);
    sync.window(&mem).unwrap();
    assert!(
        mem.status() & riscv_linker::devfile::STATUS_RUNNING != 0,
        "sampled while the kernels ran"
    );
    let lines: Vec<String> = sync
        .samples()
        .iter()
        .map(|s| {
            let v = [
                s.tile.x as u64,
                s.tile.y as u64,
                s.sample.host_before_ns,
                s.sample.device_cycles,
                s.sample.host_after_ns,
            ];
            format!("{} {} {} {} {} {}", s.chip, v[0], v[1], v[2], v[3], v[4])
        })
        .collect();
    std::fs::write(&out, lines.join("\n")).unwrap();
    for (chip, tile) in all_tiles(&mem) {
        mem.write_u32(chip, tile, FLAG, 1).unwrap();
    }
}

#[test]
fn the_cli_records_windows_and_prints_the_fit() {
    let dir = scratch("clock-cli");
    let dev = device(&dir.join("dev.img"));
    let snap = dir.join("sync.snap");
    let ttprof = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ttprof"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let image = dev.image_path().to_str().unwrap().to_string();
    let record = [
        "clock",
        "--device",
        &image,
        "--samples",
        "20",
        "--spacing-us",
        "100",
        "--record",
        snap.to_str().unwrap(),
    ];
    let (code, text) = ttprof(&record);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("took 160 sample(s)") && text.contains("160 sample(s) in all"),
        "{text}"
    );
    dev.advance_host_time(0.1e9);
    let (code, text) = ttprof(&record);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("320 sample(s) in all"), "{text}");
    let (code, text) = ttprof(&["clock", "--device", snap.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("clock chip 0: 1000.2") && text.contains("(+200.") && text.contains("(-200."),
        "{text}"
    );
    assert!(text.contains("4 tile(s), 160 of 160 samples"), "{text}");
    // A snapshot has no clocks to take a window from: --record with one is refused (it was
    // ignored, and the fit printed as if a window had been recorded).
    let other = dir.join("other.snap");
    let (code, text) = ttprof(&[
        "clock",
        "--device",
        snap.to_str().unwrap(),
        "--record",
        other.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(&format!("error: {}: is a snapshot", snap.display()))
            && text.contains(&format!(
                "--record {} appends a new window",
                other.display()
            ))
            && text.contains("leave out --record"),
        "{text}"
    );
    assert!(!other.exists(), "nothing recorded");
    drop(dev);
    let (code, text) = ttprof(&record);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("no emulator is serving"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
