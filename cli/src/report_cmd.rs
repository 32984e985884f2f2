//! `ttprof report`: read device memory once and write every output file (device CSV, op
//! report, trace JSON, HTML timeline, analysis, Perfetto trace, Parquet tables, and the
//! Parquet dataset with `--dataset`), then print the per-op summary and every problem.

use std::path::Path;
use std::process::ExitCode;
use ttprof::inputs::Inputs;
use ttprof::oplog::OpLog;
use ttprof::outputs::{self, Options};
use ttprof::profile::{Loaded, Profile};
use ttprof::{issue, Result};

/// What `ttprof report` was asked.
pub struct Args<'a> {
    pub device: &'a Path,
    pub oplog: &'a Path,
    pub out: &'a Path,
    pub threshold_ns: f64,
    pub summary: bool,
    /// Print the whole summary, not one screen of it.
    pub verbose: bool,
    pub dataset: Option<outputs::Dataset>,
    /// The command's input guard.
    pub inputs: &'a Inputs,
}

pub fn run(a: &Args) -> Result<ExitCode> {
    let oplog = OpLog::read(a.oplog, a.inputs)?;
    // Two readings: the model from the first, each ring's records from the second as the
    // outputs take them (one ring's records in memory at a time).
    let Loaded {
        profile,
        memory,
        clock_note,
    } = ttprof::pass::open(a.device, Some(oplog), a.inputs)?;
    // Another run's op log would name the zones from the wrong ELFs: refused before writing.
    if let Some(log) = profile.oplog() {
        ttprof::provenance::check(memory.as_ref(), a.device, log)?;
    }
    let mut rings = ttprof::pass::DeviceRings::new(&profile, memory.as_ref())?;
    if profile.readout().zones() == 0 {
        // Say why before the outputs refuse an empty readout (e.g. a consumer drained it).
        issue::print(profile.readout().issues());
    }
    let options = Options {
        summary_threshold_ns: a.threshold_ns,
        dataset: a.dataset.clone(),
        inputs: a.inputs.clone(),
        ..Options::default()
    };
    let written = match outputs::write_all_rings(a.out, &profile, &mut rings, &options) {
        Ok(w) => w,
        Err(e) => return super::disk_full(e),
    };
    drop(rings);
    let readout = profile.readout();
    let mem = memory.as_ref();

    if a.summary {
        if a.verbose {
            print!("{}", written.summary_text);
        } else {
            print!("{}", written.brief_text);
        }
        println!();
    }
    super::print_readout_line(readout, mem);
    Ok(finish(&clock_note, &profile, &written))
}

/// What `report` and `import` print after writing: the clock, the ops, the files, then every
/// problem; exit 2 when any is an error.
pub fn finish(clock_note: &str, profile: &Profile, written: &outputs::Written) -> ExitCode {
    println!("{clock_note}");
    println!(
        "{} op(s), {} signpost(s)",
        written.report.ops().count(),
        written.report.rows.len() - written.report.ops().count()
    );
    println!("wrote:");
    for p in written.files() {
        println!("  {}", p.display());
    }
    let errors = issue::print(profile.readout().issues())
        + issue::print(&profile.sites().issues)
        + issue::print(&written.issues);
    if errors > 0 {
        eprintln!("error: {errors} problem(s) above: the outputs are incomplete");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
