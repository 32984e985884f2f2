//! The op report (`ops_perf_results_<timestamp>.csv`) as a sink: built from the model's op
//! spans in [`Sink::begin`] (so an op log that does not belong to the run stops the drive
//! before any file is written), written at the end. Its rings feed only the analysis (the
//! CB wait columns), which takes them in pieces too.

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::profile::{Profile, RingView};
use crate::report::{self, OpReport};
use crate::sink::analysis::Shared;
use crate::sink::{Finished, Sink};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Writes the op report into a directory under tt-metal's name for a time.
pub(crate) struct OpReportSink {
    dir: PathBuf,
    /// The command's input guard: the report is not written over one of its inputs.
    inputs: Inputs,
    now: SystemTime,
    /// The report (after [`Sink::begin`]).
    pub report: Option<OpReport>,
    /// Typed waits, for the CB wait columns.
    waits: Option<Shared>,
}

impl OpReportSink {
    /// The report in `dir`, named for `now`, never written over one of `inputs`.
    pub(crate) fn new(dir: &Path, now: SystemTime, inputs: &Inputs) -> OpReportSink {
        OpReportSink {
            dir: dir.to_path_buf(),
            inputs: inputs.clone(),
            now,
            report: None,
            waits: Some(Shared::default()),
        }
    }

    /// The same report, its CB wait columns from `analysis` (shared with other sinks).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> OpReportSink {
        self.waits = Some(analysis.clone());
        self
    }
}

impl Sink for OpReportSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let Some(oplog) = &p.oplog else {
            return Err(Error::Argument {
                what: "the op report needs the op log that names the run's ops".into(),
            });
        };
        self.report = Some(report::of_profile(p, oplog)?);
        Ok(())
    }

    /// A ring in pieces when the analysis its CB wait columns come from takes them
    /// ([`Shared::takes_pieces`]): the report itself is made from the model's op spans.
    fn takes_pieces(&self) -> bool {
        self.waits.as_ref().is_none_or(Shared::takes_pieces)
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        if let Some(a) = &self.waits {
            a.add(p, v);
        }
        Ok(())
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let analysis = self.waits.take().unwrap_or_default().finish(p);
        let analysis = &*analysis;
        let Some(report) = &mut self.report else {
            return Ok(Finished::default());
        };
        for op in &analysis.ops {
            if let Some(w) = op.compute_cb_waits_ns() {
                report.compute_cb_waits.insert((op.chip, op.run), w);
            }
        }
        let path = report.write_into(&self.dir, self.now, &self.inputs)?;
        Ok(Finished {
            files: vec![path],
            issues: report.issues.clone(),
        })
    }
}
