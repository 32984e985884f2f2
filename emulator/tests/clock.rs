//! The clock model: sync samples over virtual host time, consistent with the kernels'
//! timestamps, and the ground truth that lets tests measure alignment error.

mod common;

use common::*;
use riscv_linker::{mmio, Arch, NocCoord, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{
    ChipClock, ClockModel, Device, DeviceConfig, ReadLatency, SyncSample, TileOffsets,
};

fn config(true_mhz: f64, drift: f64) -> DeviceConfig {
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (2, 1));
    cfg.clock = ClockModel {
        chips: vec![ChipClock {
            true_mhz: Some(true_mhz),
            drift_ppm_per_s: drift,
            reset_host_ns: 5_000.0,
        }],
        tile_offsets: TileOffsets::Explicit(vec![0, 123_456]),
        host_read: ReadLatency::default(),
        ..ClockModel::nominal()
    };
    cfg
}

#[test]
fn a_sample_brackets_the_true_moment_of_the_read() {
    let dev = Device::new(config(985.0, 2.0)).unwrap();
    let tiles = dev.tiles();
    let mut last = 0;
    for k in 0..200 {
        let tile = tiles[k % 2];
        let s = dev.sync_sample(0, tile).unwrap();
        let truth = dev.clock_truth(0, tile).unwrap();
        let at = truth.host_ns_at(s.device_cycles as f64);
        // The counter was read at `at`: within the sample's window (one cycle of rounding).
        assert!(
            s.host_before_ns as f64 - 1.5 <= at && at <= s.host_after_ns as f64 + 1.5,
            "{s:?} read at {at}"
        );
        let rtt = s.host_after_ns - s.host_before_ns;
        assert!(
            (800..20_000).contains(&rtt),
            "round trip {rtt} ns from the default 400+400 ns model"
        );
        assert!(s.host_before_ns >= last, "host time only moves forward");
        last = s.host_after_ns;
    }
}

#[test]
fn tile_offsets_show_in_samples_and_truth() {
    let dev = Device::new(config(1000.0, 0.0)).unwrap();
    let tiles = dev.tiles();
    let a = dev.sync_sample(0, tiles[0]).unwrap();
    let b = dev.sync_sample(0, tiles[1]).unwrap();
    assert_eq!(dev.clock_truth(0, tiles[1]).unwrap().tile_offset, 123_456);
    let diff = b.device_cycles as i64 - a.device_cycles as i64;
    // The second read happens one round trip (a microsecond or two) later.
    assert!((123_456..123_456 + 20_000).contains(&diff), "{diff}");
}

#[test]
fn samples_are_reproducible_from_the_seed() {
    let take = |seed| {
        let mut cfg = config(985.0, 1.0);
        cfg.clock.host_read.seed = seed;
        let dev = Device::new(cfg).unwrap();
        let tile = dev.tiles()[0];
        (0..50)
            .map(|_| dev.sync_sample(0, tile).unwrap())
            .collect::<Vec<SyncSample>>()
    };
    assert_eq!(take(1), take(1));
    assert_ne!(take(1), take(2));
}

#[test]
fn kernel_timestamps_and_host_time_agree() {
    let mut dev = Device::new(config(985.0, 0.0)).unwrap();
    let tile = dev.tiles()[0];
    let before = dev.sync_sample(0, tile).unwrap();
    dev.advance_host_time(1e6);
    let mut w = lis(&[(5, mmio::WALL_CLOCK_L)]);
    w.extend([lw(10, 5, 0), lw(11, 5, 8)]);
    w.extend([addi(0, 0, 0); 100]);
    w.extend([lw(12, 5, 0), lw(13, 5, 8), ecall()]);
    dev.load_kernel(
        0,
        tile,
        Risc::Brisc,
        &elf_for(Arch::WormholeB0, Risc::Brisc, &w),
        "k",
    )
    .unwrap();
    dev.run().unwrap();
    let after = dev.sync_sample(0, tile).unwrap();
    let (_, r) = dev.hart_registers(0, tile, Risc::Brisc).unwrap();
    let (start, end) = (
        (r[11] as u64) << 32 | r[10] as u64,
        (r[13] as u64) << 32 | r[12] as u64,
    );
    let truth = dev.clock_truth(0, tile).unwrap();
    // The kernel ran after the first sample plus the millisecond of host time, and
    // before the second sample.
    assert!(truth.host_ns_at(start as f64) >= before.host_after_ns as f64 + 1e6 - 2.0);
    assert!(start < end && end < after.device_cycles);
    assert!(truth.host_ns_at(end as f64) <= after.host_before_ns as f64 + 2.0);
    let expected = (1e6 + (before.host_after_ns - before.host_before_ns) as f64) * 0.985;
    assert!(
        (start - before.device_cycles) as f64 >= expected * 0.99,
        "the counter kept running at 985 MHz"
    );
}

#[test]
fn ground_truth_measures_a_simple_alignment() {
    // A least-squares fit of midpoints recovers the true frequency from samples alone,
    // and the truth says how good the fit is.
    let dev = Device::new(config(985.0, 0.0)).unwrap();
    let tile = dev.tiles()[0];
    let mut pts = Vec::new();
    for _ in 0..200 {
        let s = dev.sync_sample(0, tile).unwrap();
        pts.push((
            (s.host_before_ns + s.host_after_ns) as f64 / 2.0,
            s.device_cycles as f64,
        ));
        dev.advance_host_time(50_000.0);
    }
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
        / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    let mhz = slope * 1e3;
    assert!((mhz - 985.0).abs() < 0.05, "fitted {mhz} MHz");
    let truth = dev.clock_truth(0, tile).unwrap();
    let h = mx + 1e6;
    let predicted = my + slope * (h - mx);
    let err_ns = (predicted - truth.cycles_at(h)) / 0.985;
    assert!(
        err_ns.abs() < 100.0,
        "alignment error {err_ns} ns with symmetric latency"
    );
}

#[test]
fn frequency_steps_show_in_samples_and_the_reference_counter_ignores_them() {
    let mut cfg = config(1000.0, 0.0);
    cfg.clock.dvfs = vec![ttprof_emu::parse_schedule("800@1ms,1100@3ms", 5_000.0).unwrap()];
    let dev = Device::new(cfg).unwrap();
    let tile = dev.tiles()[0];
    let truth = dev.clock_truth(0, tile).unwrap();
    assert_eq!(truth.true_steps().len(), 2);
    let rate = |dev: &Device, sample: fn(&Device, NocCoord) -> SyncSample| {
        let a = sample(dev, tile);
        dev.advance_host_time(200_000.0);
        let b = sample(dev, tile);
        (b.device_cycles - a.device_cycles) as f64 / (b.host_before_ns - a.host_before_ns) as f64
    };
    let wall = |d: &Device, t| d.sync_sample(0, t).unwrap();
    let reference = |d: &Device, _| d.ref_sample(0).unwrap();
    let mut seen = Vec::new();
    for _ in 0..20 {
        seen.push((rate(&dev, wall), rate(&dev, reference)));
    }
    // 1 GHz, then 0.8 GHz from 1 ms, 1.1 GHz from 3 ms (each rate within its 2 us bracket noise);
    // the 50 MHz reference counter throughout.
    assert!(
        (seen[1].0 - 1.0).abs() < 0.02
            && (seen[4].0 - 0.8).abs() < 0.02
            && (seen[12].0 - 1.1).abs() < 0.02,
        "{seen:?}"
    );
    assert!(seen.iter().all(|s| (s.1 - 0.05).abs() < 0.001), "{seen:?}");
    for _ in 0..50 {
        let s = dev.sync_sample(0, tile).unwrap();
        let at = truth.host_ns_at(s.device_cycles as f64);
        assert!(
            s.host_before_ns as f64 - 1.5 <= at && at <= s.host_after_ns as f64 + 1.5,
            "{s:?} read at {at}"
        );
        dev.advance_host_time(37_000.0);
    }
    assert!(dev.ref_sample(1).is_err());
}
