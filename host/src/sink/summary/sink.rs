//! The per-op summary (`ttprof_summary.txt`) as a sink: zone statistics gathered ring by
//! ring ([`crate::summary::Builder`]), rendered with the notes given (e.g. a fault) on top
//! and, below, the `event!` checkpoints of each op ([`super::checkpoints`]) and, when the
//! kernels mark typed waits, the bottleneck of each op ([`crate::sink::analysis::render`]).
//!
//! It takes a ring in pieces ([`Sink::takes_pieces`]) when its analysis does (or it has
//! none): the zone statistics take each zone and sum zone on its own
//! ([`crate::summary::Builder::add`]: a ring's pieces give its zones and marks in the order
//! the whole ring does, so they are added in the same order), and the checkpoints carry a
//! ring's runs from piece to piece ([`super::checkpoints`]).

use crate::atomic::write_atomic;
use crate::error::Result;
use crate::inputs::Inputs;
use crate::profile::{Profile, RingView};
use crate::sink::analysis::{self, Shared};
use crate::sink::{Finished, Sink};
use crate::summary::{self, checkpoints::Checkpoints, Summary};
use std::path::{Path, PathBuf};

/// Writes the summary text.
pub struct SummarySink {
    /// `None`: the summary is only rendered (for printing), not written.
    path: Option<PathBuf>,
    /// The command's input guard: the file is not written over one of its inputs.
    inputs: Inputs,
    threshold_ns: f64,
    notes: Vec<String>,
    builder: summary::Builder,
    /// `event!` markers in order, for the checkpoints section.
    checkpoints: Checkpoints,
    /// Typed waits, for the bottleneck section.
    waits: Option<Shared>,
    /// The summary and its text as written (after [`Sink::finish`]).
    pub summary: Option<(Summary, String)>,
    /// The summary in one screen ([`summary::brief`]), after [`Sink::finish`].
    pub brief: String,
}

impl SummarySink {
    /// The summary at `path`, hiding rows whose mean is below `threshold_ns`, with `notes`
    /// as its first lines, never written over one of `inputs`.
    pub fn new(path: &Path, threshold_ns: f64, notes: Vec<String>, inputs: &Inputs) -> SummarySink {
        SummarySink {
            path: Some(path.to_path_buf()),
            inputs: inputs.clone(),
            threshold_ns,
            notes,
            builder: summary::Builder::default(),
            checkpoints: Checkpoints::default(),
            waits: Some(Shared::default()),
            summary: None,
            brief: String::new(),
        }
    }

    /// The same summary, its bottleneck section from `analysis` (shared with other sinks).
    pub(crate) fn with_analysis(mut self, analysis: &Shared) -> SummarySink {
        self.waits = Some(analysis.clone());
        self
    }

    /// The summary rendered into [`SummarySink::summary`] only, for printing.
    pub fn printed(threshold_ns: f64) -> SummarySink {
        SummarySink {
            path: None,
            inputs: Inputs::none(),
            threshold_ns,
            notes: Vec::new(),
            builder: summary::Builder::default(),
            checkpoints: Checkpoints::default(),
            waits: Some(Shared::default()),
            summary: None,
            brief: String::new(),
        }
    }
}

impl Sink for SummarySink {
    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        self.builder.add(
            v.lane(),
            v.zones(),
            v.marks(),
            &p.labels,
            &p.ops,
            &p.timebase,
        );
        self.checkpoints.add(p, v);
        if let Some(a) = &self.waits {
            a.add(p, v);
        }
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        self.waits.as_ref().is_none_or(Shared::takes_pieces)
    }

    fn finish(&mut self, p: &Profile) -> Result<Finished> {
        let s = std::mem::take(&mut self.builder).finish(
            &p.ops,
            Some(&p.device_ops),
            &p.timebase,
            self.threshold_ns,
        );
        let mut text: String = self.notes.iter().map(|n| format!("{n}\n")).collect();
        text.push_str(&summary::render(&s));
        text.push_str(&self.checkpoints.render(self.threshold_ns));
        // The verdict per op, when the kernels mark typed waits.
        let a = self.waits.take().unwrap_or_default().finish(p);
        text.push_str(&analysis::render(&a));
        self.brief = summary::brief::render(&s, &a);
        if let Some(path) = &self.path {
            write_atomic(path, &self.inputs, |w| {
                std::io::Write::write_all(w, text.as_bytes())
            })?;
        }
        self.summary = Some((s, text));
        Ok(Finished {
            files: self.path.iter().cloned().collect(),
            issues: Vec::new(),
        })
    }
}
