//! The clock-sync mailbox: a client on its own mapping of the image asks for samples while
//! the device is idle and while kernels run; answers match the clock model, and mailbox
//! traffic never changes a run.

mod common;

use common::image::{load_spin, HostMap};
use common::*;
use riscv_linker::devfile::{field, mailbox as mb, STATUS_RUNNING};
use riscv_linker::{mmio, Arch, NocCoord, Risc};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use ttprof_emu::asm::*;
use ttprof_emu::{
    ChipClock, ClockModel, Device, DeviceConfig, ReadLatency, SyncSample, TileOffsets,
};

/// A mailbox client on a second mapping of the image file (what a host process does).
struct Client {
    map: HostMap,
}

impl Client {
    fn open(dev: &Device) -> Client {
        Client {
            map: HostMap::open(dev),
        }
    }

    fn word(&self, at: usize) -> &AtomicU32 {
        self.map.word(at)
    }

    fn get(&self, at: usize) -> u32 {
        self.map.get(field::CLOCK_MAILBOX + at)
    }

    fn put(&self, at: usize, v: u32) {
        self.map.put(field::CLOCK_MAILBOX + at, v)
    }

    fn get64(&self, at: usize) -> u64 {
        self.get(at) as u64 | (self.get(at + 4) as u64) << 32
    }

    fn header(&self, at: usize) -> u32 {
        self.map.get(at)
    }

    /// One request; `Err(status)` for a refused one.
    fn sample(&self, chip: u32, tile: NocCoord) -> Result<SyncSample, u32> {
        let give_up = Instant::now() + Duration::from_secs(60); // a safety net, not a timing assertion
        assert_eq!(
            self.get(mb::SERVER),
            mb::SERVING,
            "the device serves the mailbox"
        );
        let seq = self.get(mb::RESP_SEQ).wrapping_add(1).max(1);
        self.put(mb::REQ_CHIP, chip);
        self.put(mb::REQ_TILE, mb::tile_word(tile));
        self.put(mb::REQ_SEQ, seq);
        while self.get(mb::RESP_SEQ) != seq {
            assert!(Instant::now() < give_up, "no answer");
            std::thread::yield_now();
        }
        assert_eq!(
            (self.get(mb::RESP_CHIP), self.get(mb::RESP_TILE)),
            (chip, mb::tile_word(tile)),
            "echo"
        );
        match self.get(mb::RESP_STATUS) {
            mb::STATUS_OK => Ok(SyncSample {
                host_before_ns: self.get64(mb::HOST_BEFORE),
                device_cycles: self.get64(mb::DEVICE_CYCLES),
                host_after_ns: self.get64(mb::HOST_AFTER),
            }),
            s => Err(s),
        }
    }
}

fn config(image: &str) -> DeviceConfig {
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (2, 1));
    cfg.chips = 2;
    cfg.image = Some(
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{image}-{}.devmem", std::process::id())),
    );
    cfg.clock = ClockModel {
        chips: vec![
            ChipClock {
                true_mhz: Some(1000.2),
                drift_ppm_per_s: 0.5,
                reset_host_ns: 3_000.0,
            },
            ChipClock {
                true_mhz: Some(999.8),
                drift_ppm_per_s: -0.5,
                reset_host_ns: 9_000.0,
            },
        ],
        tile_offsets: TileOffsets::Explicit(vec![0, 5_000, 77, 123_456]),
        host_read: ReadLatency::uniform(1000.0, 500.0, 42),
        ..ClockModel::nominal()
    };
    cfg
}

fn cleanup(dev: Device) {
    let path = dev.image_path().to_path_buf();
    drop(dev);
    let _ = std::fs::remove_file(path);
}

#[test]
fn idle_device_answers_with_samples_true_to_the_model() {
    let dev = Device::new(config("mailbox-idle")).unwrap();
    let tiles = dev.tiles();
    let client = Client::open(&dev);
    let start = dev.host_time_ns();
    let mut last_after = 0;
    for k in 0..200 {
        let (chip, tile) = (k as u32 % 2, tiles[(k / 2) % 2]);
        let s = client.sample(chip, tile).unwrap();
        let truth = dev.clock_truth(chip, tile).unwrap();
        let at = truth.host_ns_at(s.device_cycles as f64);
        assert!(
            s.host_before_ns as f64 - 1.5 <= at && at <= s.host_after_ns as f64 + 1.5,
            "{s:?} read at {at}"
        );
        assert!(
            (499..=1501).contains(&(s.host_after_ns - s.host_before_ns)),
            "1 us +- 0.5 us: {s:?}"
        );
        assert!(
            s.host_before_ns >= last_after,
            "mailbox host time never goes back"
        );
        last_after = s.host_after_ns;
    }
    assert_eq!(
        dev.host_time_ns(),
        start,
        "mailbox samples do not move the device's clock"
    );
    assert_eq!(client.get(mb::SERVED), 200);
    // A host that says it waited 1 ms gets its read 1 ms later.
    client.put(mb::REQ_DELAY, 1_000_000);
    let s = client.sample(0, tiles[0]).unwrap();
    client.put(mb::REQ_DELAY, 0);
    assert!(
        (s.host_before_ns as i64 - last_after as i64 - 1_000_000).abs() <= 1,
        "{s:?} after {last_after}"
    );
    // In-process time moves on; the mailbox follows it.
    dev.advance_host_time(1e6);
    let s = client.sample(0, tiles[0]).unwrap();
    assert!(s.host_before_ns as f64 >= dev.host_time_ns() - 0.5);
    assert_eq!(client.sample(2, tiles[0]), Err(mb::STATUS_NO_CHIP));
    assert_eq!(
        client.sample(0, NocCoord::new(0, 0)),
        Err(mb::STATUS_NO_TILE)
    );
    let header = client.header(field::CLOCK_MAILBOX);
    cleanup(dev);
    assert_eq!(header, mb::SERVING);
    assert_eq!(
        client.get(mb::SERVER),
        0,
        "a dropped device stops serving and says so"
    );
}

/// Each core reads the wall clock in a loop and stores the reads: the result is the schedule.
fn clock_logger(risc: Risc) -> Vec<u32> {
    let mut w = lis(&[
        (5, mmio::WALL_CLOCK_L),
        (7, 0x3_0000 + 0x100 * risc.index() as u32),
        (8, 60),
    ]);
    w.extend([
        lw(9, 5, 0),
        sw(9, 7, 0),
        addi(7, 7, 4),
        addi(8, 8, -1),
        bne(8, 0, -16),
        ecall(),
    ]);
    w
}

fn logged_run(hammer: bool) -> (ttprof_emu::RunSummary, Vec<u32>, Vec<SyncSample>) {
    let mut dev = Device::new(config(if hammer {
        "mailbox-hammer"
    } else {
        "mailbox-quiet"
    }))
    .unwrap();
    let tiles = dev.tiles();
    for chip in 0..2 {
        for &tile in &tiles {
            for risc in Risc::ALL {
                let elf = elf_for(Arch::WormholeB0, risc, &clock_logger(risc));
                dev.load_kernel(chip, tile, risc, &elf, "logger").unwrap();
            }
        }
    }
    let client = Client::open(&dev);
    let stop = AtomicBool::new(false);
    let mut in_process = Vec::new();
    let summary = std::thread::scope(|s| {
        if hammer {
            s.spawn(|| {
                while !stop.load(Ordering::Acquire) {
                    client.sample(1, tiles[1]).unwrap();
                }
            });
        }
        while hammer && client.get(mb::SERVED) < 10 {
            std::thread::yield_now(); // the hammering has begun before the first run
        }
        let mut summaries = Vec::new();
        for _ in 0..3 {
            in_process.push(dev.sync_sample(0, tiles[0]).unwrap());
            summaries.push(dev.run_with_hook(50, &mut |_| {}).unwrap());
            dev.advance_host_time(10_000.0);
        }
        stop.store(true, Ordering::Release);
        summaries.pop().unwrap()
    });
    let mut l1 = Vec::new();
    for chip in 0..2 {
        for &tile in &tiles {
            let mut words = vec![0u32; 0x500 / 4];
            dev.read_words(chip, tile, 0x3_0000, &mut words).unwrap();
            l1.extend(words);
        }
    }
    cleanup(dev);
    (summary, l1, in_process)
}

#[test]
fn mailbox_traffic_never_changes_a_run() {
    let quiet = logged_run(false);
    let hammered = logged_run(true);
    assert_eq!(
        quiet, hammered,
        "runs, L1 and in-process samples are identical with a busy mailbox"
    );
}

#[test]
fn a_running_device_answers_too() {
    const FLAG: u32 = 0x3_0000;
    let dev_cfg = config("mailbox-running");
    let mut dev = Device::new(dev_cfg).unwrap();
    let tile = dev.tiles()[0];
    // The kernel spins until the client, having sampled during the run, sets FLAG.
    load_spin(&mut dev, FLAG);
    let client = Client::open(&dev);
    let flag_at = dev.geometry().tile_offset(0, 0) as usize + FLAG as usize;
    let (result, during) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            client.map.wait_running();
            let samples: Vec<SyncSample> =
                (0..20).map(|_| client.sample(0, tile).unwrap()).collect();
            let running = client.header(field::STATUS) & STATUS_RUNNING != 0;
            client.word(flag_at).store(1u32.to_le(), Ordering::Release);
            (samples, running)
        });
        let r = dev.run();
        (r, sampler.join().unwrap())
    });
    result.unwrap();
    let (samples, still_running) = during;
    assert!(still_running, "all 20 answers came while the kernel ran");
    let truth = dev.clock_truth(0, tile).unwrap();
    for s in &samples {
        let at = truth.host_ns_at(s.device_cycles as f64);
        assert!(
            s.host_before_ns as f64 - 1.5 <= at && at <= s.host_after_ns as f64 + 1.5,
            "{s:?}"
        );
    }
    cleanup(dev);
}
