//! `ttprof clock`: take a sync window from a live emulator image (through its clock
//! mailbox) or fit the samples a snapshot recorded, and print the fit.
//!
//! Typical use around a run of another process: `ttprof clock --device dev.img --record
//! sync.snap` before the first op and again after the last (each call appends one window),
//! then `ttprof clock --device sync.snap` prints the fit of both windows.

use crate::args::{integer_arg, YEAR_SECONDS};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use ttprof::clock::{all_tiles, fit, ClockSync, FitOptions, TileSample};
use ttprof::devmem::{self, DeviceMemory, FileKind, Snapshot};
use ttprof::inputs::Inputs;
use ttprof::{Error, Result};

/// Arguments of `ttprof clock`.
#[derive(clap::Args, Debug, Clone)]
pub struct ClockArgs {
    /// A live device image (a window is taken through its clock mailbox), a card (`tt:N`:
    /// through tt-kmd), or a snapshot
    /// (its recorded samples are fitted).
    #[arg(long)]
    pub device: PathBuf,
    /// Samples per tile in the window taken from a live image.
    #[arg(long, default_value_t = 100)]
    pub samples: usize,
    /// Time from one round of samples to the next, in microseconds.
    #[arg(long, default_value_t = 500)]
    pub spacing_us: u64,
    /// Append the window's samples to this snapshot file (created if missing) and fit all
    /// the samples it then holds. Only with a live device image: a snapshot given as
    /// `--device` has no clocks to sample, and the combination is refused.
    #[arg(long)]
    pub record: Option<PathBuf>,
}

/// The most `--samples` per tile in one window (each is a mailbox round trip per tile).
pub const MAX_SAMPLES: u64 = 1_000_000;

/// Checks `--samples` and `--spacing-us` (from 1 to [`MAX_SAMPLES`]; up to a year, and a
/// window no longer than a year) before anything else; the errors name the argument.
fn check_numbers(args: &ClockArgs) -> Result<()> {
    let samples = integer_arg(
        "samples",
        args.samples as u64,
        1..=MAX_SAMPLES,
        &format!("a number of samples per tile from 1 to {MAX_SAMPLES}"),
    )?;
    let year_us = YEAR_SECONDS * 1_000_000;
    let spacing = integer_arg(
        "spacing-us",
        args.spacing_us,
        0..=year_us,
        &format!("a number of µs from 0 to {year_us} (a year)"),
    )?;
    if (samples - 1)
        .checked_mul(spacing)
        .is_none_or(|us| us > year_us)
    {
        return Err(Error::Argument { what: format!(
            "--samples {samples} --spacing-us {spacing}: a window of {samples} rounds {spacing} µs apart lasts more than a year"
        ) });
    }
    Ok(())
}

/// Runs `ttprof clock`; exit code 2 when a chip could not be fitted.
pub fn run(args: &ClockArgs, inputs: &Inputs) -> Result<ExitCode> {
    check_numbers(args)?;
    let kind = if devmem::is_card(&args.device) {
        FileKind::Image
    } else {
        devmem::file_kind(&args.device, inputs)?
    };
    let (snapshot_samples, geometry) = match kind {
        FileKind::Snapshot => {
            if let Some(record) = &args.record {
                return Err(Error::BadFile {
                    path: args.device.clone(),
                    what: format!(
                        "is a snapshot, whose recorded samples are fitted as they are; --record {} appends a new window, \
                         which can only be taken from a live device image (give --device the emulator's image to record \
                         a window, or leave out --record to fit this snapshot)",
                        record.display()
                    ),
                });
            }
            let snap = Snapshot::load(&args.device, inputs)?;
            (snap.sync_samples(), snap.geometry())
        }
        // A device image (its clock mailbox) or a card (tt-kmd).
        FileKind::Image => {
            let live = devmem::open_live(&args.device, inputs)?;
            let mem: &dyn DeviceMemory = &*live;
            let mut sync = ClockSync::new(all_tiles(mem), args.samples)
                .with_spacing_ns(args.spacing_us * 1000);
            sync.window(&*live)?;
            println!(
                "took {} sample(s) from {}",
                sync.samples().len(),
                mem.describe()
            );
            match &args.record {
                Some(path) => (record(path, mem, &sync, inputs)?, mem.geometry()),
                None => (sync.samples().to_vec(), mem.geometry()),
            }
        }
    };
    let fit = fit(
        &snapshot_samples,
        geometry.arch,
        geometry.chips,
        &FitOptions::default(),
    )?;
    println!("{fit}");
    for issue in &fit.issues {
        eprintln!("{issue}");
    }
    Ok(if fit.issues.iter().any(|i| i.is_error()) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Appends the window to the snapshot at `path`; returns every sample it then holds.
fn record(
    path: &Path,
    mem: &dyn DeviceMemory,
    sync: &ClockSync,
    inputs: &Inputs,
) -> Result<Vec<TileSample>> {
    let snap = if path.exists() {
        Snapshot::load(path, inputs)?
    } else {
        Snapshot::like(mem)?
    };
    snap.add_sync_samples(sync.samples())?;
    // The snapshot read above is updated in place, on purpose.
    inputs.release(path);
    snap.save(path, inputs)?;
    let all = snap.sync_samples();
    println!(
        "recorded them in {} ({} sample(s) in all)",
        path.display(),
        all.len()
    );
    Ok(all)
}
