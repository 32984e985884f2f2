//! Clock-alignment benchmark against the emulator's ground truth.
//!
//! `cargo run --release -p ttprof --bin align-bench [-- --seeds N --run-ms MS --via direct|mailbox --out FILE]`
//!
//! A 2-chip Wormhole device with the full 8x10 worker grid (160 tiles), each chip's clock
//! 200 ppm off nominal (one fast, one slow), per-tile wall-clock offsets (seeded, up to 1e6
//! cycles), and host reads of 1 us ± 0.5 us uniform jitter (each leg 500 ± 250 ns). A sync
//! window of 100 samples per tile (round robin, rounds 500 us apart) before the run and one
//! after it; the run is `--run-ms` of virtual host time (the counters follow the clock model
//! whatever kernels do). The fitted timebase converts device times spread over the whole
//! span on every tile; the error is the difference from `Device::clock_truth`.
//!
//! Prints error against sample count (10, 25, 50, 100, 200 per tile per window), the same
//! with a drifting clock (±0.5 ppm/s, to show the drift model), and writes
//! `align_err_p99_ns`, `align_err_max_ns` (100 samples, no drift, pooled over the seeds)
//! and the context as JSON, by default to `target/bench/align.json` in the workspace.
//!
//! Then two scenarios with samples taken during the run ([`ClockSampler`], one read per
//! chip every 100 us while the host "drains" in 50 us steps), besides the two windows:
//!
//! * **DVFS** (`dvfs_*`): 2 Blackhole chips (140 tiles each, ±200 ppm, independent resets
//!   and schedules), a `--dvfs-s` (10) second run with 3 frequency steps per chip
//!   (1350 -> 800 -> 1100 -> 1350 MHz at different times on each chip). Writes the error
//!   percentiles, the steps found against the true ones (`dvfs_steps`) and how far each
//!   located step lies from the true step time (`dvfs_step_error_ns`).
//! * **Multi-chip** (`multichip_*`): 4 Wormhole chips whose resets lie milliseconds apart
//!   (0, 3.7, 11.2, 25.9 ms) with different frequency errors, a 1 s run: the error against
//!   the truth and the skew between chips (one host moment converted from every chip's
//!   counters).

use riscv_linker::Arch;
use serde_json::json;
use std::path::PathBuf;
use ttprof::clock::{emu_tiles, ClockSampler, ClockSync, EmuClock, Fit, FitOptions};
use ttprof::devmem::MappedImage;
use ttprof_emu::{ChipClock, ClockModel, Device, DeviceConfig, FreqStep, ReadLatency, TileOffsets};

const ARCH: Arch = Arch::WormholeB0;
const PPM: f64 = 200.0;
const OFFSET_MAX: u64 = 1_000_000;
const COUNTS: [usize; 5] = [10, 25, 50, 100, 200];
const HEADLINE: usize = 100;
/// Device times checked per tile, spread over the synced span.
const POINTS: usize = 201;

struct Args {
    seeds: u64,
    dvfs_s: f64,
    run_ms: f64,
    drift: f64,
    mailbox: bool,
    out: PathBuf,
}

/// Pooled results of one configuration over the seeds.
struct Outcome {
    errors: Vec<f64>,
    estimated: f64,
    residual: f64,
    drift_resolved: usize,
    fits: usize,
}

impl Outcome {
    fn quantile(&self, q: f64) -> f64 {
        let i = ((self.errors.len() as f64 - 1.0) * q).round() as usize;
        self.errors.get(i).copied().unwrap_or(f64::NAN)
    }

    fn max(&self) -> f64 {
        self.errors.last().copied().unwrap_or(f64::NAN)
    }
}

fn main() {
    let args = parse();
    let via = if args.mailbox {
        "the image's clock mailbox"
    } else {
        "Device::sync_sample (in process)"
    };
    println!(
        "2 chips x 80 tiles ({ARCH}), ±{PPM} ppm, tile offsets up to {OFFSET_MAX} cycles, reads 1 us ± 0.5 us uniform, \
         windows before and after a {} ms run, rounds 500 us apart, samples via {via}, {} seed(s)\n",
        args.run_ms, args.seeds
    );
    let mut sweep = Vec::new();
    let mut headline = None;
    for (label, drift) in [("no drift", 0.0), ("drift ±0.5 ppm/s", args.drift)] {
        println!(
            "{label}:\n  samples/tile/window   p50 ns   p99 ns   max ns   est. 1σ worst   residual ns   drift resolved"
        );
        for &n in &COUNTS {
            let o = measure(&args, n, drift);
            println!(
                "  {n:>19} {:>8.1} {:>8.1} {:>8.1} {:>15.1} {:>13.1}   {}/{}",
                o.quantile(0.5),
                o.quantile(0.99),
                o.max(),
                o.estimated,
                o.residual,
                o.drift_resolved,
                o.fits
            );
            sweep.push(json!({
                "drift_ppm_per_s": drift, "samples_per_tile": n, "p50_ns": o.quantile(0.5), "p99_ns": o.quantile(0.99),
                "max_ns": o.max(), "estimated_error_1sigma_worst_ns": o.estimated, "residual_ns": o.residual,
                "drift_resolved": o.drift_resolved, "fits": o.fits,
            }));
            if drift == 0.0 && n == HEADLINE {
                headline = Some(o);
            }
        }
        println!();
    }
    let h = headline.expect("the sweep includes the headline count");
    let (p99, max) = (h.quantile(0.99), h.max());
    println!("align_err_p99_ns = {p99:.1} (target <= 50), align_err_max_ns = {max:.1}");
    let dvfs = dvfs(&args);
    let multichip = multichip(&args);
    let report = json!({
        "dvfs": dvfs,
        "dvfs_err_p99_ns": dvfs["err_p99_ns"],
        "dvfs_steps": dvfs["steps"],
        "dvfs_step_error_ns": dvfs["step_error_ns"],
        "multichip": multichip,
        "multichip_err_p99_ns": multichip["err_p99_ns"],
        "multichip_skew_p99_ns": multichip["skew_p99_ns"],
        "align_err_p99_ns": p99,
        "align_err_max_ns": max,
        "samples_per_sync": HEADLINE,
        "chips": 2,
        "tiles": 160,
        "arch": ARCH.name(),
        "read_latency": "1000 ns ± 500 ns uniform (each leg 500 ± 250 ns)",
        "frequency_error_ppm": PPM,
        "tile_offset_max_cycles": OFFSET_MAX,
        "run_ms": args.run_ms,
        "round_spacing_us": 500,
        "seeds": args.seeds,
        "points_per_tile": POINTS,
        "samples_via": via,
        "estimated_error_1sigma_worst_ns": h.estimated,
        "residual_ns": h.residual,
        "sweep": sweep,
    });
    if let Some(dir) = args.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(
        &args.out,
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    ) {
        Ok(()) => println!("wrote {}", args.out.display()),
        Err(e) => fail(&format!("cannot write {}: {e}", args.out.display())),
    }
}

/// Every seed of one configuration, errors pooled and sorted.
fn measure(args: &Args, samples: usize, drift: f64) -> Outcome {
    let mut o = Outcome {
        errors: Vec::new(),
        estimated: 0.0,
        residual: 0.0,
        drift_resolved: 0,
        fits: 0,
    };
    for seed in 1..=args.seeds {
        let (fit, dev, span) = run(args, samples, drift, seed).unwrap_or_else(|e| fail(&e));
        for c in &fit.chips {
            o.estimated = o.estimated.max(c.error_ns);
            o.residual = o.residual.max(c.residual_ns);
            o.drift_resolved += c.drift_ppm_per_s.is_some() as usize;
            o.fits += 1;
        }
        for (chip, tile) in emu_tiles(&dev) {
            let truth = dev
                .clock_truth(chip, tile)
                .unwrap_or_else(|e| fail(&e.to_string()));
            for k in 0..POINTS {
                let t = span.0 + (span.1 - span.0) * k as f64 / (POINTS - 1) as f64;
                let c = truth.cycles_at(t).floor() as u64;
                let fitted = fit.timebase.host_ns(chip, tile, c).unwrap_or(f64::NAN);
                o.errors.push((fitted - truth.host_ns_at(c as f64)).abs());
            }
        }
    }
    o.errors.sort_by(f64::total_cmp);
    o
}

/// One device: window, run, window, fit. Returns the fit and the synced span (host ns).
fn run(
    args: &Args,
    samples: usize,
    drift: f64,
    seed: u64,
) -> Result<(Fit, Device, (f64, f64)), String> {
    let nominal = ARCH.aiclk_mhz() as f64;
    let mut cfg = DeviceConfig::full_grid(ARCH);
    cfg.chips = 2;
    cfg.clock = ClockModel {
        chips: vec![
            ChipClock {
                true_mhz: Some(nominal * (1.0 + PPM * 1e-6)),
                drift_ppm_per_s: drift,
                reset_host_ns: 1e6,
            },
            ChipClock {
                true_mhz: Some(nominal * (1.0 - PPM * 1e-6)),
                drift_ppm_per_s: -drift,
                reset_host_ns: 2.5e6,
            },
        ],
        tile_offsets: TileOffsets::Seeded {
            max_cycles: OFFSET_MAX,
            seed,
        },
        host_read: ReadLatency::uniform(1000.0, 500.0, seed),
        ..ClockModel::nominal()
    };
    cfg.clock_mailbox = args.mailbox;
    let mut dev = Device::new(cfg).map_err(|e| e.to_string())?;
    let mut sync = ClockSync::new(emu_tiles(&dev), samples);
    let start = dev.host_time_ns();
    let mapped = if args.mailbox {
        Some(
            MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none())
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    let mut window = |dev: &mut Device| match &mapped {
        Some(m) => sync.window(m),
        None => sync.window(&EmuClock::new(dev)),
    };
    window(&mut dev).map_err(|e| e.to_string())?;
    dev.advance_host_time(args.run_ms * 1e6);
    window(&mut dev).map_err(|e| e.to_string())?;
    let end = sync
        .samples()
        .last()
        .map_or(start, |s| s.sample.host_after_ns as f64);
    let fit = sync
        .fit(ARCH, 2, &FitOptions::default())
        .map_err(|e| e.to_string())?;
    drop(mapped);
    Ok((fit, dev, (start, end)))
}

/// Every chip's truth on every tile, and the conversion error at `POINTS` host times per
/// tile over `span`.
fn errors(fit: &Fit, dev: &Device, span: (f64, f64), out: &mut Vec<f64>) {
    for (chip, tile) in emu_tiles(dev) {
        let truth = dev
            .clock_truth(chip, tile)
            .unwrap_or_else(|e| fail(&e.to_string()));
        for k in 0..POINTS {
            let t = span.0 + (span.1 - span.0) * k as f64 / (POINTS - 1) as f64;
            let c = truth.cycles_at(t).floor() as u64;
            let fitted = fit.timebase.host_ns(chip, tile, c).unwrap_or(f64::NAN);
            out.push((fitted - truth.host_ns_at(c as f64)).abs());
        }
    }
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

/// A device of `cfg`: a window, `run_ns` of host time drained in 50 us steps with a
/// sampler reading one tile per chip every 100 us, a window; the fit and the synced span.
fn sampled_run(cfg: DeviceConfig, run_ns: f64) -> Result<(Fit, Device, (f64, f64)), String> {
    let (arch, chips) = (cfg.arch, cfg.chips);
    let dev = Device::new(cfg).map_err(|e| e.to_string())?;
    let tiles = emu_tiles(&dev);
    let mut sync = ClockSync::new(tiles.clone(), HEADLINE);
    let mut sampler = ClockSampler::new(&tiles, 100_000);
    let start = dev.host_time_ns();
    sync.window(&EmuClock::new(&dev))
        .map_err(|e| e.to_string())?;
    let end_run = dev.host_time_ns() + run_ns;
    while dev.host_time_ns() < end_run {
        dev.advance_host_time(50_000.0);
        sampler.tick(&EmuClock::new(&dev), dev.host_time_ns() as u64);
    }
    if let (n @ 1.., Some(first)) = sampler.failures() {
        return Err(format!("{n} sample(s) failed: {first}"));
    }
    sync.window(&EmuClock::new(&dev))
        .map_err(|e| e.to_string())?;
    sync.extend(sampler.samples());
    let end = dev.host_time_ns();
    let fit = sync
        .fit(arch, chips, &FitOptions::default())
        .map_err(|e| e.to_string())?;
    Ok((fit, dev, (start, end)))
}

/// The DVFS scenario (see the crate docs).
fn dvfs(args: &Args) -> serde_json::Value {
    const BH: Arch = Arch::Blackhole;
    let run_ns = args.dvfs_s * 1e9;
    // Fractions of the run at which each chip steps to 800, 1100 and back to 1350 MHz.
    let plans = [[0.21, 0.47, 0.73], [0.13, 0.55, 0.89]];
    let (mut errs, mut found, mut truth_steps, mut step_errs, mut sigmas) =
        (Vec::new(), 0, 0, Vec::new(), Vec::new());
    let (mut estimated, mut inconsistent) = (0.0f64, 0);
    println!("DVFS: 2 chips x 140 tiles ({BH}), a {} s run, steps 1350 -> 800 -> 1100 -> 1350 MHz, sampled every 100 us per chip:", args.dvfs_s);
    for seed in 1..=args.seeds {
        let mut cfg = DeviceConfig::full_grid(BH);
        cfg.chips = 2;
        cfg.clock_mailbox = false;
        let (r0, r1) = (1e6, 2.5e6 + seed as f64 * 1e5);
        let start = r1 + 0.0;
        let window_ns = HEADLINE as f64 * 500e3 + 1e6;
        cfg.clock = ClockModel {
            chips: vec![
                ChipClock {
                    true_mhz: Some(1350.0 * (1.0 + PPM * 1e-6)),
                    drift_ppm_per_s: 0.0,
                    reset_host_ns: r0,
                },
                ChipClock {
                    true_mhz: Some(1350.0 * (1.0 - PPM * 1e-6)),
                    drift_ppm_per_s: 0.0,
                    reset_host_ns: r1,
                },
            ],
            tile_offsets: TileOffsets::Seeded {
                max_cycles: OFFSET_MAX,
                seed,
            },
            host_read: ReadLatency::uniform(1000.0, 500.0, seed),
            dvfs: plans
                .iter()
                .map(|plan| {
                    plan.iter()
                        .zip([800.0, 1100.0, 1350.0])
                        .map(|(&at, mhz)| FreqStep {
                            at_host_ns: start + window_ns + at * run_ns + seed as f64 * 7_919.0,
                            mhz,
                        })
                        .collect()
                })
                .collect(),
        };
        let (fit, dev, span) = sampled_run(cfg, run_ns).unwrap_or_else(|e| fail(&e));
        errors(&fit, &dev, span, &mut errs);
        for c in &fit.chips {
            estimated = estimated.max(c.error_ns);
            inconsistent += c.inconsistent;
            let truth = dev
                .clock_truth(c.chip, dev.tiles()[0])
                .unwrap_or_else(|e| fail(&e.to_string()));
            let true_steps = truth.true_steps();
            truth_steps += true_steps.len();
            for s in &c.steps {
                let nearest = true_steps
                    .iter()
                    .map(|t| s.at_ns - t.0)
                    .min_by(|a, b| a.abs().total_cmp(&b.abs()));
                if let Some(d) = nearest.filter(|d| d.abs() < 1e6) {
                    found += 1;
                    step_errs.push(d.abs());
                    sigmas.push(s.at_sigma_ns);
                }
            }
            if seed == 1 {
                println!("  {c}");
            }
        }
    }
    errs.sort_by(f64::total_cmp);
    step_errs.sort_by(f64::total_cmp);
    let (p50, p99, max) = (
        quantile(&errs, 0.5),
        quantile(&errs, 0.99),
        errs.last().copied().unwrap_or(f64::NAN),
    );
    let step_max = step_errs.last().copied().unwrap_or(f64::NAN);
    println!(
        "  error p50 {p50:.1} ns, p99 {p99:.1} ns, max {max:.1} ns (est. 1σ worst {estimated:.1} ns); steps found {found} of \
         {truth_steps}, located within {:.1} ns (median), {step_max:.1} ns (max) of the true step time\n",
        quantile(&step_errs, 0.5)
    );
    println!("dvfs_err_p99_ns = {p99:.1} (target <= 50)\n");
    sigmas.sort_by(f64::total_cmp);
    let sigma_median = quantile(&sigmas, 0.5);
    json!({
        "err_p50_ns": p50, "err_p99_ns": p99, "err_max_ns": max, "estimated_error_1sigma_worst_ns": estimated,
        "steps": { "found": found, "true": truth_steps },
        "step_error_ns": { "median": quantile(&step_errs, 0.5), "max": step_max, "all": step_errs,
                           "sigma_median": sigma_median },
        "inconsistent_samples": inconsistent,
        "chips": 2, "tiles": 280, "arch": BH.name(), "run_s": args.dvfs_s, "seeds": args.seeds,
        "schedule": "1350 -> 800 -> 1100 -> 1350 MHz at 21/47/73 % (chip 0) and 13/55/89 % (chip 1) of the run",
        "frequency_error_ppm": PPM, "sample_every_us_per_chip": 100, "windows_samples_per_tile": HEADLINE,
        "read_latency": "1000 ns ± 500 ns uniform",
    })
}

/// The multi-chip scenario (see the crate docs).
fn multichip(args: &Args) -> serde_json::Value {
    let resets = [0.0, 3.7e6, 11.2e6, 25.9e6];
    let ppms = [180.0, -150.0, 60.0, -220.0];
    let (mut errs, mut skews) = (Vec::new(), Vec::new());
    for seed in 1..=args.seeds {
        let mut cfg = DeviceConfig::new(ARCH, (4, 4));
        cfg.chips = 4;
        cfg.clock_mailbox = false;
        let nominal = ARCH.aiclk_mhz() as f64;
        cfg.clock = ClockModel {
            chips: resets
                .iter()
                .zip(ppms)
                .map(|(&r, ppm)| ChipClock {
                    true_mhz: Some(nominal * (1.0 + ppm * 1e-6)),
                    drift_ppm_per_s: 0.0,
                    reset_host_ns: r + 1e6,
                })
                .collect(),
            tile_offsets: TileOffsets::Seeded {
                max_cycles: OFFSET_MAX,
                seed,
            },
            host_read: ReadLatency::uniform(1000.0, 500.0, seed),
            ..ClockModel::nominal()
        };
        let (fit, dev, span) = sampled_run(cfg, 1e9).unwrap_or_else(|e| fail(&e));
        errors(&fit, &dev, span, &mut errs);
        let tiles = dev.tiles();
        for k in 0..POINTS {
            let t = span.0 + (span.1 - span.0) * k as f64 / (POINTS - 1) as f64;
            let at: Vec<f64> = (0..4u32)
                .map(|chip| {
                    let tile = tiles[(k + chip as usize) % tiles.len()];
                    let truth = dev
                        .clock_truth(chip, tile)
                        .unwrap_or_else(|e| fail(&e.to_string()));
                    fit.timebase
                        .host_ns(chip, tile, truth.cycles_at(t).round() as u64)
                        .unwrap_or(f64::NAN)
                })
                .collect();
            let (lo, hi) = at
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            skews.push(hi - lo);
        }
    }
    errs.sort_by(f64::total_cmp);
    skews.sort_by(f64::total_cmp);
    let (p99, skew) = (quantile(&errs, 0.99), quantile(&skews, 0.99));
    println!("multi-chip: 4 chips ({ARCH}, 4x4 tiles) reset 0 / 3.7 / 11.2 / 25.9 ms apart, a 1 s run: error p99 {p99:.1} ns, \
              max {:.1} ns; skew between chips p99 {skew:.1} ns, max {:.1} ns\n", errs.last().copied().unwrap_or(f64::NAN), skews.last().copied().unwrap_or(f64::NAN));
    json!({
        "err_p99_ns": p99, "err_max_ns": errs.last(), "skew_p99_ns": skew, "skew_max_ns": skews.last(),
        "chips": 4, "reset_offsets_ms": [0.0, 3.7, 11.2, 25.9], "frequency_error_ppm": ppms, "run_s": 1, "seeds": args.seeds,
    })
}

fn parse() -> Args {
    // Under the current folder (run it from the checkout's root): a binary never writes
    // into the checkout it was built from unless run there.
    let out = PathBuf::from("target/bench/align.json");
    let mut a = Args {
        seeds: 5,
        dvfs_s: 10.0,
        run_ms: 1000.0,
        drift: 0.5,
        mailbox: false,
        out,
    };
    let mut it = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> f64 {
        v.and_then(|v| v.parse().ok())
            .unwrap_or_else(|| fail(&format!("{what}: expected a number")))
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--seeds" => a.seeds = num(it.next(), "--seeds").max(1.0) as u64,
            "--run-ms" => a.run_ms = num(it.next(), "--run-ms").max(0.0),
            "--dvfs-s" => a.dvfs_s = num(it.next(), "--dvfs-s").max(1.0),
            "--drift" => a.drift = num(it.next(), "--drift"),
            "--via" => match it.next().as_deref() {
                Some("mailbox") => a.mailbox = true,
                Some("direct") => a.mailbox = false,
                v => fail(&format!("--via {v:?}: expected direct or mailbox")),
            },
            "--out" => a.out = it.next().map(PathBuf::from).unwrap_or_else(|| fail("--out: expected a path")),
            _ => fail(&format!(
                "unknown argument {flag}; usage: align-bench [--seeds N] [--run-ms MS] [--dvfs-s S] [--drift PPM_PER_S] \
                 [--via direct|mailbox] [--out FILE]"
            )),
        }
    }
    a
}

fn fail(msg: &str) -> ! {
    eprintln!("align-bench: {msg}");
    std::process::exit(2)
}
