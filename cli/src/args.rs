//! Numeric command-line arguments, checked before anything else: NaN, negative, infinite or
//! absurd values (more than a year) are errors naming the argument, never a panic.

use std::time::Duration;
use ttprof::{Error, Result};

/// A year in seconds: the longest time any numeric argument may ask for. Longer is a typo,
/// and far longer is past what a `Duration` or an `Instant` holds (`--seconds 1e20`).
pub const YEAR_SECONDS: u64 = 365 * 24 * 3600;

/// `--{name} {value}` if `range` holds it (never NaN), else an error that names the
/// argument and says what it expects (`expected`, e.g. "a number of seconds from 0 to 10").
pub fn number_arg(
    name: &str,
    value: f64,
    range: std::ops::RangeInclusive<f64>,
    expected: &str,
) -> Result<f64> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(Error::Argument {
        what: format!("--{name} {value}: expected {expected}"),
    })
}

/// [`number_arg`] for an integer argument.
pub fn integer_arg(
    name: &str,
    value: u64,
    range: std::ops::RangeInclusive<u64>,
    expected: &str,
) -> Result<u64> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(Error::Argument {
        what: format!("--{name} {value}: expected {expected}"),
    })
}

/// `--{name} {seconds}` as a duration: from 0 to a year.
pub fn seconds_arg(name: &str, seconds: f64) -> Result<Duration> {
    let expected = format!("a number of seconds from 0 to {YEAR_SECONDS} (a year)");
    let seconds = number_arg(name, seconds, 0.0..=YEAR_SECONDS as f64, &expected)?;
    Duration::try_from_secs_f64(seconds).map_err(|e| Error::Argument {
        what: format!("--{name} {seconds}: {e}"),
    })
}

/// `--{name} {ns}` as a threshold in ns: from 0 to a year.
pub fn threshold_ns_arg(name: &str, ns: f64) -> Result<f64> {
    let max = YEAR_SECONDS as f64 * 1e9;
    number_arg(
        name,
        ns,
        0.0..=max,
        &format!("a number of ns from 0 to {max} (a year)"),
    )
}

/// `--dataset DIR [--dataset-host NAME]`: also add the run to a hive-partitioned Parquet
/// dataset, beside the captures of other hosts and chips.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DatasetArgs {
    /// Also write the zones, marks and ops tables into this hive-partitioned Parquet
    /// dataset: DIR/<table>/host=<host>/chip=<n>/part-0.parquet (a partition of the same
    /// host and chip is replaced). Query it with any engine, e.g. DuckDB (see the README).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<std::path::PathBuf>,
    /// The host name of the dataset's partition (default: this machine's).
    #[arg(long, value_name = "NAME", requires = "dataset")]
    pub dataset_host: Option<String>,
}

impl DatasetArgs {
    /// The dataset to write, if asked; a host name that cannot name a partition is an
    /// error (checked before anything runs or is consumed).
    pub fn dataset(&self) -> Result<Option<ttprof::outputs::Dataset>> {
        let dataset = self.unchecked();
        if let Some(d) = &dataset {
            ttprof::sink::parquet::check_host(&d.host)?;
        }
        Ok(dataset)
    }

    /// The dataset to write, if asked, its host name not checked yet (the library checks
    /// it where the command did before: `ttprof run` after building the kernels).
    pub fn unchecked(&self) -> Option<ttprof::outputs::Dataset> {
        let dir = self.dataset.clone()?;
        let host = self
            .dataset_host
            .clone()
            .unwrap_or_else(ttprof::sink::parquet::default_host);
        Some(ttprof::outputs::Dataset { dir, host })
    }
}
