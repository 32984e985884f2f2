//! The fit against known clocks: seeded synthetic samples (exact ground truth), and bad
//! input of every kind (errors and warnings with counts, never a panic).

use super::*;
use crate::testing::Rng;
use riscv_linker::{Arch, NocCoord};
use ttprof_emu::ClockTruth;

fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A chip clock: true MHz, drift ppm/s; tile offsets in cycles.
fn truth(mhz: f64, ppm_per_s: f64, offset: u64) -> ClockTruth {
    ClockTruth {
        true_mhz: mhz,
        nominal_mhz: 1000.0,
        drift_ppm_per_s: ppm_per_s,
        reset_host_ns: 0.0,
        tile_offset: offset,
        steps: Vec::new(),
    }
}

/// Tiles of one chip with offsets 0, 1e5, 2e5, ...
fn tiles(n: u8) -> Vec<NocCoord> {
    (0..n).map(|i| NocCoord::new(1 + i, 1)).collect()
}

/// Sequential reads, round robin over `clocks`, `per_tile` rounds starting at least
/// `spacing` ns apart from host time `start`: each leg 500 ± 250 ns uniform (a 1 us ± 0.5 us round trip).
fn window(
    rng: &mut Rng,
    clocks: &[(u32, NocCoord, ClockTruth)],
    per_tile: usize,
    start: f64,
    spacing: f64,
) -> Vec<TileSample> {
    let mut out = Vec::new();
    let mut t = start;
    for round in 0..per_tile {
        t = t.max(start + spacing * round as f64);
        for (chip, tile, truth) in clocks {
            let (chip, tile) = (*chip, *tile);
            let before = t;
            let at = before + 250.0 + 500.0 * unit(rng);
            t = at + 250.0 + 500.0 * unit(rng);
            let sample = SyncSample {
                host_before_ns: before.round() as u64,
                device_cycles: truth.cycles_at(at).floor() as u64,
                host_after_ns: t.round() as u64,
            };
            out.push(TileSample { chip, tile, sample });
        }
    }
    out
}

/// Worst and RMS |fitted - true| host time over `points` device times across the span.
fn measure(fit: &Fit, clocks: &[(u32, NocCoord, ClockTruth)], span: (f64, f64)) -> (f64, f64) {
    let (mut worst, mut sq, mut n) = (0.0f64, 0.0, 0.0);
    for (chip, tile, truth) in clocks {
        let (chip, tile) = (*chip, *tile);
        for k in 0..=50 {
            let t = span.0 + (span.1 - span.0) * k as f64 / 50.0;
            let c = truth.cycles_at(t).floor() as u64;
            let err = fit.timebase.host_ns(chip, tile, c).unwrap() - truth.host_ns_at(c as f64);
            worst = worst.max(err.abs());
            sq += err * err;
            n += 1.0;
        }
    }
    (worst, (sq / n).sqrt())
}

fn two_chips(drift: f64) -> Vec<(u32, NocCoord, ClockTruth)> {
    let mut clocks = Vec::new();
    for (chip, mhz, d) in [(0u32, 1000.2, drift), (1, 999.8, -drift)] {
        for (i, t) in tiles(8).into_iter().enumerate() {
            clocks.push((
                chip,
                t,
                truth(mhz, d, 100_000 * i as u64 + 17 * chip as u64),
            ));
        }
    }
    clocks
}

#[test]
fn recovers_frequency_and_offsets_from_two_windows() {
    let clocks = two_chips(0.0);
    let mut rng = Rng::new(7);
    let mut samples = window(&mut rng, &clocks, 100, 2e9, 20_000.0);
    samples.extend(window(&mut rng, &clocks, 100, 3e9, 20_000.0)); // one second later
    let fit = fit(&samples, Arch::WormholeB0, 2, &FitOptions::default()).unwrap();
    assert!(fit.issues.is_empty(), "{:?}", fit.issues);
    for (chip, mhz) in [(0, 1000.2), (1, 999.8)] {
        let c = fit.chip(chip).unwrap();
        assert_eq!((c.samples, c.used, c.tiles), (1600, 1600, 8));
        assert!(
            (c.mhz - mhz).abs() / mhz < 0.02e-6,
            "chip {chip}: {} vs {mhz} MHz",
            c.mhz
        );
        assert!(
            (c.ppm_vs_nominal - (mhz - 1000.0) * 1e3).abs() < 0.1,
            "{}",
            c.ppm_vs_nominal
        );
        assert!(
            c.residual_ns > 50.0 && c.residual_ns < 200.0,
            "residual is the bracket noise: {}",
            c.residual_ns
        );
        assert!(c.to_string().contains("drift not resolved"), "{c}");
    }
    let (worst, rms) = measure(&fit, &clocks, (2e9, 3.002e9));
    assert!(
        worst < 30.0,
        "worst error {worst} ns: each offset rests on 200 samples of ~100 ns noise"
    );
    let est = fit.chips[0].error_rms_ns;
    assert!(
        rms < 2.0 * est && rms > est / 2.0,
        "measured RMS {rms} ns vs estimated {est} ns"
    );
    for tile in tiles(8) {
        // Offsets recovered: the converted time of the same moment agrees across tiles.
        let t = 2.5e9;
        let (a, b) = (
            &clocks[0].2,
            &clocks.iter().find(|c| c.0 == 0 && c.1 == tile).unwrap().2,
        );
        let ha = fit
            .timebase
            .host_ns(0, clocks[0].1, a.cycles_at(t) as u64)
            .unwrap();
        let hb = fit
            .timebase
            .host_ns(0, tile, b.cycles_at(t) as u64)
            .unwrap();
        assert!((ha - hb).abs() < 30.0, "tile {tile}: {ha} vs {hb}");
    }
}

#[test]
fn drift_between_long_windows_is_modelled() {
    let clocks: Vec<_> = two_chips(1.0);
    let mut rng = Rng::new(8);
    // Windows of 100 rounds 2 ms apart (200 ms), one second apart.
    let mut samples = window(&mut rng, &clocks, 100, 1e9, 2e6);
    samples.extend(window(&mut rng, &clocks, 100, 2e9, 2e6));
    let span = (1e9, 2.2e9);
    let fit = fit(&samples, Arch::WormholeB0, 2, &FitOptions::default()).unwrap();
    for (chip, sign) in [(0, 1.0), (1, -1.0)] {
        let c = fit.chip(chip).unwrap();
        let d = c
            .drift_ppm_per_s
            .unwrap_or_else(|| panic!("drift resolved: {c}"));
        assert!(
            (d - sign).abs() < 5.0 * c.drift_sigma_ppm_per_s,
            "chip {chip}: {d} ± {}",
            c.drift_sigma_ppm_per_s
        );
    }
    let (worst, _) = measure(&fit, &clocks, span);
    assert!(worst < 50.0, "with drift modelled: {worst} ns");
    let linear = super::fit(
        &samples,
        Arch::WormholeB0,
        2,
        &FitOptions {
            drift: false,
            ..FitOptions::default()
        },
    )
    .unwrap();
    assert!(linear
        .chip(0)
        .unwrap()
        .to_string()
        .contains("drift not modelled"));
    let (chord, _) = measure(&linear, &clocks, span);
    assert!(
        chord > 80.0,
        "a chord misses 1 ppm/s over 1.2 s by ~150 ns mid-run: {chord} ns"
    );
    // One window of back-to-back samples: a linear fit from its own spread.
    let one = window(&mut rng, &clocks, 50, 5e9, 0.0);
    let fit1 = super::fit(&one, Arch::WormholeB0, 2, &FitOptions::default()).unwrap();
    assert!(
        (fit1.chip(0).unwrap().ppm_vs_nominal - 200.0 - 5.0).abs() < 100.0,
        "{}",
        fit1.chips[0]
    );
}

#[test]
fn bad_samples_are_dropped_with_counts_and_the_fit_survives() {
    let clocks = two_chips(0.0);
    let mut rng = Rng::new(9);
    let mut samples = window(&mut rng, &clocks, 40, 1e9, 20_000.0);
    samples.extend(window(&mut rng, &clocks, 40, 1.05e9, 20_000.0));
    // Sample i is of clocks[i % 16]: chip 0 for i % 16 < 8.
    samples[2].sample.device_cycles += 1 << 32; // a torn read (high word off by one)
    samples[17].sample.host_after_ns = samples[17].sample.host_before_ns - 1; // inverted
    samples[35].sample.host_after_ns += 40_000; // preempted: wide
    samples[52].sample.device_cycles -= 5_000; // 5 us early: still in order, but outside its bracket
    samples[69].sample.device_cycles += 900; // 0.9 us late: likewise
    samples.push(TileSample {
        chip: 5,
        tile: NocCoord::new(1, 1),
        sample: samples[0].sample,
    });
    let fit = fit(&samples, Arch::WormholeB0, 2, &FitOptions::default()).unwrap();
    let c = fit.chip(0).unwrap();
    let d = c.drops;
    assert_eq!((d.inverted, d.wide, d.tiles_left_out), (1, 1, 0), "{d:?}");
    assert!(
        d.non_monotonic + c.inconsistent >= 3,
        "torn, early and late reads: {d:?}, {}",
        c.inconsistent
    );
    assert_eq!(
        c.used + d.inverted + d.wide + d.non_monotonic + c.inconsistent,
        c.samples
    );
    let text: Vec<String> = fit.issues.iter().map(|i| i.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("inverted") && t.contains("chip 0")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t.contains("beyond the 2 chip(s)")),
        "{text:?}"
    );
    assert!(fit.issues.iter().all(|i| !i.is_error()));
    let (worst, _) = measure(&fit, &clocks, (1e9, 1.05e9));
    assert!(worst < 40.0, "{worst}");
    assert_eq!(
        (fit.chip(1).unwrap().used, fit.chip(1).unwrap().samples),
        (640, 640),
        "chip 1 untouched"
    );
}

#[test]
fn unfittable_samples_are_explained_never_a_panic() {
    let t = NocCoord::new(1, 1);
    let s = |b: u64, c: u64, a: u64| TileSample {
        chip: 0,
        tile: t,
        sample: SyncSample {
            host_before_ns: b,
            device_cycles: c,
            host_after_ns: a,
        },
    };
    let e = fit(&[], Arch::WormholeB0, 1, &FitOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("chip 0") && e.contains("no sync samples"), "{e}");
    let e = fit(
        &[s(100, 5, 200)],
        Arch::WormholeB0,
        1,
        &FitOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("1 sample(s) usable") && e.contains("frequency is undetermined"),
        "{e}"
    );
    let e = fit(
        &[s(100, 5, 200), s(100, 9, 200)],
        Arch::WormholeB0,
        1,
        &FitOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("undetermined"), "{e}");
    let backwards: Vec<TileSample> = (0..10)
        .map(|k| s(1000 * k, 1000 - k, 1000 * k + 10))
        .collect();
    let e = fit(&backwards, Arch::WormholeB0, 1, &FitOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("1 tile(s) with mostly non-monotonic samples"),
        "{e}"
    );
    // One chip fitted, the other not: nominal for it, and an error issue.
    let clocks = two_chips(0.0);
    let mut rng = Rng::new(3);
    let chip0: Vec<TileSample> = window(&mut rng, &clocks[..8], 20, 1e9, 0.0);
    let fit = fit(&chip0, Arch::WormholeB0, 2, &FitOptions::default()).unwrap();
    assert!(fit
        .issues
        .iter()
        .any(|i| i.is_error() && i.to_string().contains("chip 1: clock not fitted")));
    assert_eq!(fit.timebase.chips[&1], ChipTime::nominal(1000));
}

#[test]
fn random_samples_never_panic() {
    let mut rng = Rng::new(11);
    for round in 0..300 {
        let n = rng.below(40) as usize;
        let tiles = 1 + rng.below(3) as u8;
        let samples: Vec<TileSample> = (0..n)
            .map(|_| {
                let pick = |rng: &mut Rng| match rng.below(4) {
                    0 => rng.next_u64(),
                    1 => rng.below(3),
                    2 => u64::MAX - rng.below(3),
                    _ => 1_000_000 + rng.below(10_000),
                };
                TileSample {
                    chip: rng.below(2) as u32,
                    tile: NocCoord::new(1 + rng.below(tiles as u64) as u8, 1),
                    sample: SyncSample {
                        host_before_ns: pick(&mut rng),
                        device_cycles: pick(&mut rng),
                        host_after_ns: pick(&mut rng),
                    },
                }
            })
            .collect();
        let opts = FitOptions {
            keep_fraction: unit(&mut rng) * 1.5,
            ..FitOptions::default()
        };
        if let Ok(f) = fit(&samples, Arch::Blackhole, 2, &opts) {
            let _ = f.to_string();
            let _ = f.timebase.host_ns(0, NocCoord::new(1, 1), rng.next_u64());
        }
        let _ = round;
    }
}
