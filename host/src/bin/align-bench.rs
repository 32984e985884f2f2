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

use riscv_linker::Arch;
use serde_json::json;
use std::path::PathBuf;
use ttprof::clock::{emu_tiles, ClockSync, EmuClock, Fit, FitOptions};
use ttprof::devmem::MappedImage;
use ttprof_emu::{ChipClock, ClockModel, Device, DeviceConfig, ReadLatency, TileOffsets};

const ARCH: Arch = Arch::WormholeB0;
const PPM: f64 = 200.0;
const OFFSET_MAX: u64 = 1_000_000;
const COUNTS: [usize; 5] = [10, 25, 50, 100, 200];
const HEADLINE: usize = 100;
/// Device times checked per tile, spread over the synced span.
const POINTS: usize = 201;

struct Args {
    seeds: u64,
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
    let via = if args.mailbox { "the image's clock mailbox" } else { "Device::sync_sample (in process)" };
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
    let report = json!({
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
    match std::fs::write(&args.out, serde_json::to_string_pretty(&report).unwrap_or_default() + "\n") {
        Ok(()) => println!("wrote {}", args.out.display()),
        Err(e) => fail(&format!("cannot write {}: {e}", args.out.display())),
    }
}

/// Every seed of one configuration, errors pooled and sorted.
fn measure(args: &Args, samples: usize, drift: f64) -> Outcome {
    let mut o = Outcome { errors: Vec::new(), estimated: 0.0, residual: 0.0, drift_resolved: 0, fits: 0 };
    for seed in 1..=args.seeds {
        let (fit, dev, span) = run(args, samples, drift, seed).unwrap_or_else(|e| fail(&e));
        for c in &fit.chips {
            o.estimated = o.estimated.max(c.error_ns);
            o.residual = o.residual.max(c.residual_ns);
            o.drift_resolved += c.drift_ppm_per_s.is_some() as usize;
            o.fits += 1;
        }
        for (chip, tile) in emu_tiles(&dev) {
            let truth = dev.clock_truth(chip, tile).unwrap_or_else(|e| fail(&e.to_string()));
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
fn run(args: &Args, samples: usize, drift: f64, seed: u64) -> Result<(Fit, Device, (f64, f64)), String> {
    let nominal = ARCH.aiclk_mhz() as f64;
    let mut cfg = DeviceConfig::full_grid(ARCH);
    cfg.chips = 2;
    cfg.clock = ClockModel {
        chips: vec![
            ChipClock { true_mhz: Some(nominal * (1.0 + PPM * 1e-6)), drift_ppm_per_s: drift, reset_host_ns: 1e6 },
            ChipClock { true_mhz: Some(nominal * (1.0 - PPM * 1e-6)), drift_ppm_per_s: -drift, reset_host_ns: 2.5e6 },
        ],
        tile_offsets: TileOffsets::Seeded { max_cycles: OFFSET_MAX, seed },
        host_read: ReadLatency::uniform(1000.0, 500.0, seed),
        ..ClockModel::nominal()
    };
    cfg.clock_mailbox = args.mailbox;
    let mut dev = Device::new(cfg).map_err(|e| e.to_string())?;
    let mut sync = ClockSync::new(emu_tiles(&dev), samples);
    let start = dev.host_time_ns();
    let mapped =
        if args.mailbox { Some(MappedImage::open(dev.image_path()).map_err(|e| e.to_string())?) } else { None };
    let mut window = |dev: &mut Device| match &mapped {
        Some(m) => sync.window(m),
        None => sync.window(&EmuClock::new(dev)),
    };
    window(&mut dev).map_err(|e| e.to_string())?;
    dev.advance_host_time(args.run_ms * 1e6);
    window(&mut dev).map_err(|e| e.to_string())?;
    let end = sync.samples().last().map_or(start, |s| s.sample.host_after_ns as f64);
    let fit = sync.fit(ARCH, 2, &FitOptions::default()).map_err(|e| e.to_string())?;
    drop(mapped);
    Ok((fit, dev, (start, end)))
}

fn parse() -> Args {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = manifest.parent().unwrap_or(&manifest).join("target/bench/align.json");
    let mut a = Args { seeds: 5, run_ms: 1000.0, drift: 0.5, mailbox: false, out };
    let mut it = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> f64 {
        v.and_then(|v| v.parse().ok()).unwrap_or_else(|| fail(&format!("{what}: expected a number")))
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--seeds" => a.seeds = num(it.next(), "--seeds").max(1.0) as u64,
            "--run-ms" => a.run_ms = num(it.next(), "--run-ms").max(0.0),
            "--drift" => a.drift = num(it.next(), "--drift"),
            "--via" => match it.next().as_deref() {
                Some("mailbox") => a.mailbox = true,
                Some("direct") => a.mailbox = false,
                v => fail(&format!("--via {v:?}: expected direct or mailbox")),
            },
            "--out" => a.out = it.next().map(PathBuf::from).unwrap_or_else(|| fail("--out: expected a path")),
            _ => fail(&format!(
                "unknown argument {flag}; usage: align-bench [--seeds N] [--run-ms MS] [--drift PPM_PER_S] \
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
