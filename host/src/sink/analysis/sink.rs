//! `ttprof_analysis.json` as a sink: the [`Analyzer`] fed ring by ring (or piece by piece:
//! what a ring's pieces carry is the analyzer's, module `gather`), the [`Analysis`] written
//! as JSON at the end.

use super::{Analysis, Shared, Stopped};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::profile::{Profile, RingView};
use crate::sink::{Finished, Sink};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Writes the bottleneck analysis.
pub(crate) struct AnalysisSink {
    path: PathBuf,
    /// The command's input guard: the file is not written over one of its inputs.
    inputs: Inputs,
    analyzer: Option<Shared>,
    /// The analysis as written (after [`Sink::finish`]).
    pub analysis: Option<Rc<Analysis>>,
}

impl AnalysisSink {
    /// The analysis at `path`, never written over one of `inputs`.
    pub(crate) fn new(path: &Path, inputs: &Inputs) -> AnalysisSink {
        let analyzer = Shared::default();
        analyzer.write_to(path, inputs, Vec::new());
        AnalysisSink {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            analyzer: Some(analyzer),
            analysis: None,
        }
    }

    /// The same file, of `analysis` (shared with other sinks): written as it is computed,
    /// by whichever holder asks first ([`Shared::write_to`]).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> AnalysisSink {
        analysis.write_to(&self.path, &self.inputs, Vec::new());
        self.analyzer = Some(analysis.clone());
        self
    }

    /// The same file, with each op of `stopped` (a session's: the ops a kernel fault
    /// stopped, and what their cores were doing) listed with its op, and added when no core
    /// of it recorded a zone.
    pub(crate) fn with_stopped(self, stopped: Vec<Stopped>) -> AnalysisSink {
        if let Some(a) = &self.analyzer {
            a.write_to(&self.path, &self.inputs, stopped);
        }
        self
    }
}

impl Sink for AnalysisSink {
    /// A ring in pieces when its analysis takes them ([`Shared::takes_pieces`]): the sink
    /// itself keeps nothing of a ring.
    fn takes_pieces(&self) -> bool {
        self.analyzer.as_ref().is_none_or(Shared::takes_pieces)
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        if let Some(a) = &self.analyzer {
            a.add(p, v);
        }
        Ok(())
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let shared = self.analyzer.take().unwrap_or_default();
        let a = shared.finish(p);
        shared
            .written()
            .unwrap_or_else(|| Err(Error::Internal("the analysis was never written".into())))?;
        let left_out: u64 = a
            .ops
            .iter()
            .filter_map(|o| o.critical_path.as_ref())
            .map(|c| c.left_out)
            .sum();
        let mut issues = Vec::new();
        if left_out > 0 {
            issues.push(
                crate::issue::Issue::warning(
                    None,
                    format!(
                        "critical paths: {left_out} wait(s) and signal(s) past the first {} of the run are left out                          (memory stays bounded): those ops' paths stop early (`left_out` in {})",
                        super::path::PATH_EVENTS,
                        self.path.display()
                    ),
                )
                .with_count(left_out),
            );
        }
        self.analysis = Some(a);
        Ok(Finished {
            files: vec![self.path.clone()],
            issues,
        })
    }
}
