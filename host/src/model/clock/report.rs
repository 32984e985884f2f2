//! [`fit`]: every chip of a run, and what to report about each ([`ChipFit`], [`Fit`]).

use super::chip::fit_chip;
use super::filter::Drops;
use super::{FitOptions, TileSample, Timebase};
use crate::error::{Error, Result};
use crate::issue::Issue;
use riscv_linker::{Arch, NocCoord};
use std::collections::BTreeMap;
use std::fmt;

/// How one chip's clock was fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipFit {
    /// The chip.
    pub chip: u32,
    /// Samples of this chip given to the fit.
    pub samples: usize,
    /// Samples the final fit used.
    pub used: usize,
    /// Samples dropped before the fit, by rule.
    pub drops: Drops,
    /// Samples dropped because the fit could not pass through their brackets.
    pub inconsistent: usize,
    /// Tiles with a fitted offset (other tiles use the median offset).
    pub tiles: usize,
    /// Fitted frequency at the reference time (the middle of the synced span).
    pub mhz: f64,
    /// Its frequency's offset from the arch's nominal AI clock, ppm.
    pub(crate) ppm_vs_nominal: f64,
    /// Fitted drift, when it was resolved (else the fit is linear).
    pub drift_ppm_per_s: Option<f64>,
    /// Standard error of the drift estimate (infinite when it could not be estimated).
    pub(crate) drift_sigma_ppm_per_s: f64,
    /// When drift was estimable but not resolved: how far (ns) a drift just below the
    /// resolution bar would take the middle of the span from the linear fit. Not part of
    /// `error_ns`, which assumes the chosen model; a long run with short windows shows here.
    pub(crate) unresolved_drift_ns: Option<f64>,
    /// Host ns of the first and last sample midpoint used: where the error estimate holds.
    pub span_ns: (f64, f64),
    /// RMS distance of the used samples' midpoints from the fit, ns (the sample noise).
    pub residual_ns: f64,
    /// Estimated error (1 sigma) of a converted time: worst tile, worst moment in the span.
    pub error_ns: f64,
    /// The same, RMS over tiles and the span.
    pub(crate) error_rms_ns: f64,
    /// Frequency steps (DVFS) found in the samples, in time order; `mhz` is then the
    /// cycle-weighted mean frequency over the span, and `segments` says the rest.
    pub steps: Vec<StepFit>,
    /// One entry per stretch between steps (empty when no step was found).
    pub segments: Vec<SegmentFit>,
}

/// A located frequency step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepFit {
    /// Host ns of the step.
    pub at_ns: f64,
    /// Standard error of `at_ns`, ns.
    pub at_sigma_ns: f64,
    /// Where detection put it before locating (the step lies in it): host ns.
    pub(crate) region_ns: (f64, f64),
    /// Fitted frequency just before and just after, MHz.
    pub(crate) mhz_before: f64,
    /// Frequency after the step, MHz.
    pub mhz_after: f64,
}

/// How one stretch between steps was fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentFit {
    /// Host ns of its first and last sample midpoint (the steps bound it in between).
    pub span_ns: (f64, f64),
    /// Samples the final fit used in it.
    pub used: usize,
    /// Mean frequency over its span, MHz.
    pub mhz: f64,
    /// Fitted drift, when resolved.
    pub drift_ppm_per_s: Option<f64>,
    /// Estimated error (1 sigma) of a converted time in it: worst tile, worst moment.
    pub error_ns: f64,
}
/// A fitted timebase for a run, with the report and problems of each chip.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// One entry per chip; chips that could not be fitted keep the nominal mapping.
    pub timebase: Timebase,
    /// One entry per fitted chip.
    pub chips: Vec<ChipFit>,
    /// Dropped samples (warnings, with counts) and chips that could not be fitted (errors).
    pub issues: Vec<Issue>,
}

impl Fit {
    /// The report of `chip`, if it was fitted.
    pub fn chip(&self, chip: u32) -> Option<&ChipFit> {
        self.chips.iter().find(|c| c.chip == chip)
    }

    /// The largest estimated error (1 sigma) of any fitted chip, ns.
    pub fn error_ns(&self) -> Option<f64> {
        self.chips.iter().map(|c| c.error_ns).reduce(f64::max)
    }
}

/// Fits every chip of `chips` (of `arch`) from `samples` (see the module docs of `clock`).
///
/// Fails only if no chip at all can be fitted; otherwise unfitted chips keep the nominal
/// mapping and are reported in [`Fit::issues`] as errors, dropped samples as warnings.
pub fn fit(samples: &[TileSample], arch: Arch, chips: u32, opts: &FitOptions) -> Result<Fit> {
    let nominal = arch.aiclk_mhz();
    let mut by_chip: BTreeMap<u32, Vec<(NocCoord, super::SyncSample)>> = BTreeMap::new();
    let mut issues = Vec::new();
    let mut foreign = 0;
    for s in samples {
        if s.chip < chips {
            by_chip.entry(s.chip).or_default().push((s.tile, s.sample));
        } else {
            foreign += 1;
        }
    }
    if foreign > 0 {
        let what = format!(
            "ignored {foreign} sync sample(s) of chips beyond the {chips} chip(s) of this run"
        );
        issues.push(Issue::warning(None, what).with_count(foreign as u64));
    }
    let mut timebase = Timebase::nominal(arch, chips);
    let mut fitted = Vec::new();
    let mut failures = Vec::new();
    for chip in 0..chips {
        match fit_chip(
            chip,
            by_chip.remove(&chip).unwrap_or_default(),
            nominal as f64,
            opts,
        ) {
            Ok((time, report)) => {
                issues.extend(drop_issues(&report));
                timebase.chips.insert(chip, time);
                fitted.push(report);
            }
            Err(why) => {
                let what = format!(
                    "chip {chip}: clock not fitted, its times use the nominal {nominal} MHz: {why}"
                );
                issues.push(Issue::error(None, what));
                failures.push(format!("chip {chip}: {why}"));
            }
        }
    }
    if fitted.is_empty() {
        return Err(Error::Clock {
            what: format!(
                "clock alignment failed for every chip: {}",
                failures.join("; ")
            ),
        });
    }
    Ok(Fit {
        timebase,
        chips: fitted,
        issues,
    })
}

/// A warning with a count for each rule that dropped samples.
fn drop_issues(c: &ChipFit) -> Vec<Issue> {
    let d = &c.drops;
    let rules = [
        (
            d.inverted,
            "with host time after < host time before (inverted brackets)".to_string(),
        ),
        (
            d.non_monotonic,
            "whose device cycles go backwards in host-time order (torn reads or a counter reset?)"
                .into(),
        ),
        (
            d.left_out_samples,
            format!(
                "of {} tile(s) left out because most of their samples were non-monotonic",
                d.tiles_left_out
            ),
        ),
        // Slow reads are what the filter is for: a few are routine, said only when they
        // cost the fit more than a tenth of its samples.
        (
            if d.wide * 10 > c.samples { d.wide } else { 0 },
            format!(
                "of {} with wide brackets (the host was slow to read them)",
                c.samples
            ),
        ),
        (
            c.inconsistent,
            "whose brackets the fitted clock cannot pass through (inconsistent)".into(),
        ),
    ];
    let mut out: Vec<Issue> = rules
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| {
            Issue::warning(
                None,
                format!("chip {}: dropped {n} sync sample(s) {why}", c.chip),
            )
            .with_count(n as u64)
        })
        .collect();
    if c.inconsistent * 10 > c.samples {
        out.push(Issue::warning(
            None,
            format!(
                "chip {}: {} of {} sync samples are inconsistent with the fitted clock: the fit may be unreliable \
                 (mixed runs? a frequency change too small or too brief to locate?)",
                c.chip, c.inconsistent, c.samples
            ),
        ));
    }
    out
}

impl fmt::Display for StepFit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.3} -> {:.3} MHz at {:.9} s (±{:.0} ns)",
            self.mhz_before,
            self.mhz_after,
            self.at_ns / 1e9,
            self.at_sigma_ns
        )
    }
}

impl fmt::Display for ChipFit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.steps.is_empty() {
            let steps: Vec<String> = self.steps.iter().map(|s| s.to_string()).collect();
            return write!(
                f,
                "chip {}: {:.4} MHz cycle-weighted mean ({:+.1} ppm), {} frequency step(s): {}; {} tile(s), {} of {} \
                 samples over {:.3} ms; residual {:.1} ns, est. error {:.1} ns (1 sigma, worst segment and tile; \
                 {:.1} ns RMS)",
                self.chip,
                self.mhz,
                self.ppm_vs_nominal,
                self.steps.len(),
                steps.join(", "),
                self.tiles,
                self.used,
                self.samples,
                (self.span_ns.1 - self.span_ns.0) / 1e6,
                self.residual_ns,
                self.error_ns,
                self.error_rms_ns,
            );
        }
        let drift = match self.drift_ppm_per_s {
            Some(d) => format!("drift {d:+.4} ppm/s"),
            None if self.drift_sigma_ppm_per_s.is_finite() => format!(
                "drift not resolved (|d| < {:.3} ppm/s, up to {:.1} ns mid-span)",
                super::chip::DRIFT_SIGMAS * self.drift_sigma_ppm_per_s,
                self.unresolved_drift_ns.unwrap_or(0.0)
            ),
            None => "drift not modelled".into(),
        };
        write!(
            f,
            "chip {}: {:.4} MHz ({:+.1} ppm), {drift}; {} tile(s), {} of {} samples over {:.3} ms; \
             residual {:.1} ns, est. error {:.1} ns (1 sigma, worst; {:.1} ns RMS)",
            self.chip,
            self.mhz,
            self.ppm_vs_nominal,
            self.tiles,
            self.used,
            self.samples,
            (self.span_ns.1 - self.span_ns.0) / 1e6,
            self.residual_ns,
            self.error_ns,
            self.error_rms_ns,
        )
    }
}

impl fmt::Display for Fit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.chips.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "clock {c}")?;
        }
        Ok(())
    }
}
