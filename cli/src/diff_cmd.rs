//! `ttprof diff BASE NEW`: two runs compared per op and zone ([`ttprof::diff`]), and a
//! performance gate: `--fail-above PCT` exits 3 naming every zone whose total or mean grew by
//! more than PCT percent (0 clean, 1 unusable input, 2 data problems in either run or
//! nothing to compare). A run that lost data is never judged: exit 2 unless `--allow-lossy`.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use ttprof::diff::{self, FewSamples, EXIT_REGRESSION};
use ttprof::inputs::Inputs;
use ttprof::{Error, Result};

/// What `--fail-above` does with a row that has too few samples to judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FewArg {
    /// Never fail on it: it is listed as `too few samples` and warned about on stderr when
    /// it grew above the limit.
    Pass,
    /// Fail on it when it grew above the limit, as on a real change.
    Fail,
}

/// Arguments of `ttprof diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The reference run: a `ttprof run` output directory, a `ttprof report` (or tt-metal)
    /// directory with profile_log_device.csv (and its ops.jsonl to name the ops), or a
    /// snapshot / device image file.
    pub base: PathBuf,
    /// The run to compare with it (same kinds).
    pub new: PathBuf,
    /// Exit 3 when a zone's or sum zone's total or mean cycles grew by more than this many
    /// percent (a real change: any on emulator runs, 95% confidence or a changed count on
    /// hardware runs).
    #[arg(long, value_name = "PCT")]
    pub fail_above: Option<f64>,
    /// Hardware runs: what --fail-above does with a zone whose samples are too few for the
    /// test ever to reach 95% confidence (e.g. 3 against 3), printed as `too few samples`.
    #[arg(long, value_enum, value_name = "POLICY", default_value = "pass")]
    pub too_few_samples: FewArg,
    /// Also write the comparison as JSON (rows, zones added/removed, the gate's failures)
    /// to FILE: a regular file (replaced if it exists; a link, FIFO or device at the path,
    /// or a file of either run, is refused), or `-` for standard output (the table then
    /// goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print every row, not only the changed ones.
    #[arg(long)]
    pub all: bool,
    /// Let --fail-above judge a change even when either run lost data (its problems are
    /// listed; the run that lost zones has other totals and means than what ran). Without
    /// it, such a diff exits 2 and calls nothing a regression.
    #[arg(long)]
    pub allow_lossy: bool,
}

/// `ttprof diff`.
pub fn run(a: &DiffArgs, inputs: &Inputs) -> Result<ExitCode> {
    if let Some(p) = a.fail_above {
        if !p.is_finite() || p < 0.0 {
            return Err(Error::Argument {
                what: format!("--fail-above {p}: expected a percentage, 0 or more"),
            });
        }
    }
    let few = match a.too_few_samples {
        FewArg::Pass => FewSamples::Pass,
        FewArg::Fail => FewSamples::Fail,
    };
    if let Some(path) = &a.json {
        crate::output::check(path, inputs)?;
    }
    let base = diff::load(&a.base, inputs)?;
    let new = diff::load(&a.new, inputs)?;
    let d = diff::diff(&base, &new);
    // Which part of each op's critical path grew (run folders with ttprof_analysis.json).
    let paths = match (
        ttprof::pathdiff::load(&a.base),
        ttprof::pathdiff::load(&a.new),
    ) {
        (Some(b), Some(n)) => ttprof::pathdiff::compare(&b, &n),
        _ => Vec::new(),
    };
    let json_to_stdout = a.json.as_deref().is_some_and(crate::output::is_stdout);
    let text = format!(
        "{}{}",
        diff::render(&d, a.all),
        ttprof::pathdiff::render(&paths)
    );
    if json_to_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    // Either run lost data: its totals and means are not what ran, so nothing is judged.
    let unjudged = a.fail_above.is_some() && !a.allow_lossy && !d.problems.is_empty();
    if let Some(path) = &a.json {
        let mut json = diff::to_json(&d, a.fail_above, few);
        if let Some(o) = json.as_object_mut() {
            o.insert(
                "critical_paths".into(),
                serde_json::to_value(&paths).unwrap_or_default(),
            );
            if unjudged {
                o.insert("failed".into(), serde_json::Value::Array(Vec::new()));
                o.insert(
                    "not_judged".into(),
                    "either run lost data (see problems); --allow-lossy judges anyway".into(),
                );
            }
        }
        let mut text = serde_json::to_string_pretty(&json)
            .map_err(|e| Error::Internal(format!("diff as JSON: {e}")))?;
        if json_to_stdout {
            text.push('\n');
        }
        crate::output::write(path, text.as_bytes(), false, inputs)?;
        if !json_to_stdout {
            println!("wrote {}", path.display());
        }
    }
    if unjudged {
        eprintln!(
            "error: {} problem(s) reading the runs (listed above): either run lost data, so no change is judged a \
             regression (--allow-lossy judges anyway)",
            d.problems.len()
        );
        return Ok(ExitCode::from(2));
    }
    if let Some(pct) = a.fail_above {
        if few == FewSamples::Pass {
            for r in d.unjudged_growth(pct) {
                eprintln!(
                    "warning: {} / {} grew {:+.1}% but has too few samples to tell ({} vs {}): not failed \
                     (--too-few-samples fail fails it)",
                    r.op,
                    r.zone_label(),
                    r.growth_pct(),
                    r.base.samples,
                    r.new.samples
                );
            }
        }
        let failed = d.regressions(pct, few);
        if !failed.is_empty() {
            for r in &failed {
                eprintln!("regression: {}", diff::regression_message(r, pct));
            }
            eprintln!("error: {} zone(s) grew by more than {pct}%", failed.len());
            return Ok(ExitCode::from(EXIT_REGRESSION));
        }
    }
    if let Some(why) = d.nothing_matched() {
        eprintln!("error: {why}");
        return Ok(ExitCode::from(2));
    }
    if !d.problems.is_empty() {
        eprintln!(
            "error: {} problem(s) reading the runs (listed above)",
            d.problems.len()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
