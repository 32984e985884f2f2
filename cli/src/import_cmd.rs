//! `ttprof import`: a capture tt-metal made on a card (`profile_log_device.csv`, and its op
//! report with `--ops`) into every output `ttprof report` writes, through the same
//! [`ttprof::outputs::write_all`]. Exit 0 clean, 1 unusable input (naming file and line),
//! 2 data problems (unmatched zone markers, counted) after writing the outputs.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use ttprof::import::{self, Imported};
use ttprof::inputs::Inputs;
use ttprof::outputs::{self, Options};
use ttprof::{issue, Result};

/// Arguments of `ttprof import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// tt-metal's device log, `profile_log_device.csv` (line 1 `ARCH: ..., CHIP_FREQ[MHz]:
    /// ...`, then a row per marker), as tt-metal's device profiler or `ttprof report` wrote it.
    pub csv: PathBuf,
    /// tt-metal's op report (`ops_perf_results_<timestamp>.csv`) of the same run: names the
    /// runs (op code, type, attributes, tensors per DEVICE ID and GLOBAL CALL COUNT); without
    /// it ops are `run <id>`.
    #[arg(long, value_name = "FILE")]
    pub ops: Option<PathBuf>,
    /// Directory for the output files (created if missing).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Hide summary rows whose mean zone duration is below this many ns.
    #[arg(long, default_value_t = 0.0)]
    pub threshold_ns: f64,
    /// Print the whole summary (every zone, every wait) instead of one screen of it;
    /// ttprof_summary.txt always holds everything.
    #[arg(long, conflicts_with = "no_summary")]
    pub verbose: bool,
    /// Do not print the summary.
    #[arg(long)]
    pub no_summary: bool,
    #[command(flatten)]
    pub dataset: super::args::DatasetArgs,
}

/// `ttprof import`.
pub fn run(a: &ImportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let threshold_ns = super::args::threshold_ns_arg("threshold-ns", a.threshold_ns)?;
    let dataset = a.dataset.dataset()?;
    let t = Instant::now();
    // Two passes over the file: the model from the first, each ring's records from the
    // second as the outputs take them (memory bounded by the rings, not the file).
    let (
        Imported {
            profile,
            rows,
            zones,
            clock_note,
            ..
        },
        mut rings,
    ) = import::stream(&a.csv, a.ops.as_deref(), inputs)?;
    let read_s = t.elapsed().as_secs_f64();
    if profile.readout().zones() == 0 {
        issue::print(profile.readout().issues());
    }
    let options = Options {
        summary_threshold_ns: threshold_ns,
        dataset,
        inputs: inputs.clone(),
        ..Options::default()
    };
    let written = outputs::write_all_rings(&a.out, &profile, &mut rings, &options)?;
    let total_s = t.elapsed().as_secs_f64();
    if !a.no_summary {
        if a.verbose {
            print!("{}", written.summary_text);
        } else {
            print!("{}", written.brief_text);
        }
        println!();
    }
    let r = profile.readout();
    println!(
        "imported {}: {rows} rows, {} ring(s) on {} tile(s), {zones} zones, {} records; read in {read_s:.2} s \
         ({:.0} rows/s), every output written in {total_s:.2} s",
        a.csv.display(),
        r.rings().len(),
        r.tiles(),
        r.records(),
        rows as f64 / read_s.max(1e-9),
    );
    Ok(super::report_cmd::finish(&clock_note, &profile, &written))
}
