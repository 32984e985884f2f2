//! `ttprof_analysis.json` as a sink: the [`Analyzer`] fed ring by ring (or piece by piece:
//! what a ring's pieces carry is the analyzer's, module `gather`), the [`Analysis`] written
//! as JSON at the end.

use super::{Analysis, Shared};
use crate::error::Result;
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
        AnalysisSink {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            analyzer: Some(Shared::default()),
            analysis: None,
        }
    }

    /// The same file, of `analysis` (shared with other sinks).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> AnalysisSink {
        self.analyzer = Some(analysis.clone());
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
        let a = self.analyzer.take().unwrap_or_default().finish(p);
        super::write_with_stops(&self.path, &a, &[], &self.inputs)?;
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
