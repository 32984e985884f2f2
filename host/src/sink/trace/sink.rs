//! Chrome trace JSON (`ttprof_trace.json`) as a sink: one thread per ring, streamed
//! ([`crate::trace::TraceWriter`]); a ring given in pieces carries only its open zones
//! from piece to piece.

use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::profile::{Profile, RingView};
use crate::sink::{Finished, Sink};
use crate::trace::{self, TraceStats, TraceWriter};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Writes the trace JSON.
pub(crate) struct TraceJson {
    path: PathBuf,
    /// The command's input guard: the file is not written over one of its inputs.
    inputs: Inputs,
    writer: Option<TraceWriter<AtomicFile>>,
    /// What was written (after [`Sink::finish`]).
    pub stats: TraceStats,
}

impl TraceJson {
    /// The trace at `path`, never written over one of `inputs`.
    pub(crate) fn new(path: &Path, inputs: &Inputs) -> TraceJson {
        TraceJson {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            writer: None,
            stats: TraceStats::default(),
        }
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, "write", e)
    }
}

impl Sink for TraceJson {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let file = AtomicFile::create(&self.path, &self.inputs)?;
        let chips: BTreeSet<u32> = p.readout.rings.iter().map(|r| r.id.chip).collect();
        let w = TraceWriter::begin(
            file,
            p.geometry().arch,
            &chips,
            &p.ops,
            &p.signposts,
            Some(&p.device_ops),
        )
        .map_err(|e| self.io(e))?;
        self.writer = Some(w);
        Ok(())
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        // Device times exact at any count, from the tile's clock.
        let clock = p.timebase.tile_clock(v.lane.chip, v.lane.tile);
        let r = w.lane(
            v.index,
            &v.lane,
            v.part,
            &v.zones,
            &v.marks,
            &p.labels,
            &p.ops,
            clock.as_ref(),
        );
        r.map_err(|e| self.io(e))
    }

    fn finish(&mut self, _: &Profile) -> Result<Finished> {
        let Some(w) = self.writer.take() else {
            return Ok(Finished::default());
        };
        let (file, stats) = w.finish().map_err(|e| self.io(e))?;
        file.commit()?;
        self.stats = stats;
        let path = self.path.display();
        let mut issues = Vec::new();
        if stats.clamped > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{} zone(s) end after the zone that encloses them (their times are inconsistent): {path} cuts \
                         them at the enclosing zone's end so every thread stays nested",
                        stats.clamped
                    ),
                )
                .with_count(stats.clamped),
            );
        }
        if stats.ops_left_out > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{} op(s) overlap more ops than {path} has op threads for (at most {} for device spans and {} \
                         for host spans per chip): they are left off its op threads (the op report lists every op)",
                        stats.ops_left_out,
                        trace::MAX_OPS_DEVICE_THREADS,
                        trace::MAX_OPS_HOST_THREADS
                    ),
                )
                .with_count(stats.ops_left_out),
            );
        }
        Ok(Finished {
            files: vec![self.path.clone()],
            issues,
        })
    }
}
