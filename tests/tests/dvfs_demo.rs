//! Issue 14 on the demo: the chip's AI clock steps three times while the ops run (the
//! demo's `--dvfs default`). The session samples the clock during the run, the fit finds and
//! locates the steps, and every op's device kernel duration (what the op report writes) equals
//! the duration on the emulator's true clock within the fit's error estimate; a fit that
//! ignores the steps is far off.

use riscv_linker::Arch;
use std::collections::BTreeMap;
use ttprof::clock::{fit, FitOptions};
use ttprof::launch::Settings;
use ttprof::timebase::{ChipTime, Segment, Timebase};
use ttprof::timeline::Timeline;
use ttprof_demo::ops;
use ttprof_demo::scenario::{self, Scenario};
use ttprof_emu::ClockModel;
use ttprof_tests::workspace;

/// The emulator's true clock of chip 0 as a timebase: one exact segment per piece of the
/// schedule (the drift, too), each tile at its true offset.
fn truth_timebase(clock: &ClockModel, arch: Arch, grid: (u8, u8)) -> Timebase {
    let nominal = arch.aiclk_mhz() as f64;
    let coords: Vec<_> = (0..grid.1)
        .flat_map(|r| (0..grid.0).map(move |c| arch.worker_noc(c, r).unwrap()))
        .collect();
    let offsets = clock.offsets(coords.len());
    let truth = clock.truth(0, nominal, 0);
    let mut chip = ChipTime::nominal(arch.aiclk_mhz());
    for (t, o) in coords.iter().zip(&offsets) {
        chip.tile_cycles_at_reference.insert(*t, *o as f64);
    }
    let mut starts = vec![truth.reset_host_ns];
    starts.extend(truth.true_steps().iter().map(|s| s.0));
    let a = truth.drift_ppm_per_s * 1e-6 / 2e9;
    chip.segments = starts
        .iter()
        .map(|&at| {
            let d = at - truth.reset_host_ns;
            let k = truth.mhz_at(at + 1e-6) * 1e-3 / (1.0 + 2.0 * a * (d + 1e-6));
            Segment {
                start_ns: at,
                origin_ns: at,
                origin_cycles: truth.chip_cycles_at(at),
                cycles_per_ns: k * (1.0 + 2.0 * a * d),
                drift_per_ns: 2.0 * a * k,
                error_ns: 0.0,
            }
        })
        .collect();
    Timebase {
        chips: std::collections::BTreeMap::from([(0, chip)]),
    }
}

#[test]
fn demo_op_durations_through_frequency_steps_match_the_true_clock() {
    let arch = Arch::WormholeB0;
    let grid = (2, 2);
    let out = workspace().join("target/test-dvfs-demo");
    let _ = std::fs::remove_dir_all(&out);
    let elfs = scenario::build_kernels(arch, &out.join("kernels")).unwrap();
    let mut clock = scenario::realistic_clock(arch);
    clock.dvfs = vec![scenario::parse_dvfs(arch, "default").unwrap()];
    let s = Scenario {
        lines: false,
        backend: Default::default(),
        sample: None,
        arch,
        grid,
        ops: ops::sequence(4),
        out: out.clone(),
        threads: 2,
        drain_every_cycles: 250_000,
        settings: Settings {
            consumer: true,
            ..Settings::default()
        },
        clock: clock.clone(),
    };
    let p = scenario::run(&s, &elfs, |_| {}).unwrap();
    let c = p.fit.chip(0).unwrap();
    let truth = clock.truth(0, arch.aiclk_mhz() as f64, 0);
    assert_eq!(c.steps.len(), 3, "{}", p.fit);
    for (found, real) in c.steps.iter().zip(truth.true_steps()) {
        assert!(
            (found.at_ns - real.0).abs() < 1000.0,
            "step at {} vs true {}: {}",
            found.at_ns,
            real.0,
            p.fit
        );
        // The pieces are 25-35 us of samples (the demo's ops last about 0.1 ms with their
        // math on the coprocessor), so the frequency after a step is known to ~0.2 %.
        assert!(
            (found.mhz_after - real.2).abs() < 2.5,
            "{found} vs {real:?}"
        );
    }
    let err = p.fit.error_ns().unwrap();
    assert!(err > 0.0 && err < 50.0, "{}", p.fit);
    assert!(
        p.summary_text().contains("3 frequency step(s)"),
        "{}",
        p.summary_text()
    );

    let oplog = &p.oplog;
    let durations = |tb: &Timebase| -> BTreeMap<u32, f64> {
        let t = Timeline::build(&p.readout, &p.resolution, Some(oplog), tb);
        t.ops
            .iter()
            .filter_map(|o| o.kernel_ns.map(|(a, b)| (o.run, b - a)))
            .collect()
    };
    let fitted = durations(&p.fit.timebase);
    let real = durations(&truth_timebase(&clock, arch, grid));
    assert_eq!(fitted.len(), 4);
    for (run, d) in &fitted {
        let r = real[run];
        // Two converted times, each within the estimate (1 sigma): 5 sigma for the difference.
        assert!(
            (d - r).abs() <= 5.0 * err + 2.0,
            "run {run}: {d} ns fitted vs {r} ns true (est. error {err} ns)"
        );
    }
    // Without the steps the same samples give durations microseconds off.
    let samples = ttprof::devmem::Snapshot::load(&p.snapshot, &ttprof::inputs::Inputs::none())
        .unwrap()
        .sync_samples();
    let single = fit(
        &samples,
        arch,
        1,
        &FitOptions {
            steps: false,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let off = durations(&single.timebase);
    let worst = off
        .iter()
        .map(|(run, d)| (d - real[run]).abs())
        .fold(0.0, f64::max);
    assert!(
        worst > 1000.0,
        "a single frequency misses the steps by {worst} ns"
    );
}
