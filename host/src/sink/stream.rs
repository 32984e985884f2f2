//! Feeding sinks a run that arrives in parts: a capture too large to hold at once is
//! decoded ring by ring from its spool, each ring becomes a small [`Profile`] of its own (a
//! *part*), and the sinks that allow it ([`Sink::streams`]: the Perfetto trace, the Parquet
//! tables) see every part's rings as if one profile held them all.
//!
//! The run's profile ([`Stream::begin`]) carries what is known before the records: the
//! geometry and rings (their records may be empty), the op log's ops and the timebase.
//! Each part's ops carry the device spans its rings saw; [`Stream::finish`] merges them
//! into the run's ops (earliest start, latest end per chip and run; a run the op log does
//! not name is added) before the sinks write their run-wide tables from it.
//!
//! Build each part with [`Profile::part`], which leaves the check of the op log's host
//! times to the run. Memory stays at one part plus what the sinks buffer.

use super::{Finished, Sink};
use crate::error::{Error, Result};
use crate::issue::Issue;
use crate::profile::Profile;
use crate::timebase::HostTime;
use crate::timeline::{widen_time, OpSpan};
use std::collections::BTreeMap;

/// Sinks being fed parts of one run (see the module docs).
pub struct Stream<'a> {
    sinks: Vec<&'a mut dyn Sink>,
    /// Device spans per (chip, run) seen so far: kernel and FW.
    spans: BTreeMap<(u32, u32), Spans>,
    /// The parts' own issues (records off the timeline).
    issues: Vec<Issue>,
}

#[derive(Clone, Debug, Default)]
struct Spans {
    name: String,
    kernel: Option<(f64, f64)>,
    fw: Option<(f64, f64)>,
    time: Option<(HostTime, HostTime)>,
}

fn widen(into: &mut Option<(f64, f64)>, span: Option<(f64, f64)>) {
    let Some((s, e)) = span else { return };
    *into = Some(match *into {
        Some((a, b)) => (a.min(s), b.max(e)),
        None => (s, e),
    });
}

impl<'a> Stream<'a> {
    /// Begins every sink on `run` (see the module docs). A sink that cannot stream is an
    /// error naming its position, before anything is written.
    pub fn begin(run: &Profile, mut sinks: Vec<&'a mut dyn Sink>) -> Result<Stream<'a>> {
        if let Some(i) = sinks.iter().position(|s| !s.streams()) {
            return Err(Error::Internal(format!(
                "sink {i} cannot be fed a run in parts"
            )));
        }
        for s in sinks.iter_mut() {
            s.begin(run)?;
        }
        Ok(Stream {
            sinks,
            spans: BTreeMap::new(),
            issues: Vec::new(),
        })
    }

    /// Feeds every ring of `part` to every sink, in order.
    pub fn part(&mut self, part: &Profile) -> Result<()> {
        let zones = self.sinks.iter().any(|s| s.wants_zones());
        for i in 0..part.ring_count() {
            let view = if zones {
                part.ring(i)
            } else {
                part.ring_records(i)
            };
            for s in self.sinks.iter_mut() {
                s.ring(part, &view)?;
            }
        }
        self.issues.extend(part.issues.iter().cloned());
        for o in part
            .ops
            .iter()
            .filter(|o| o.kernel_ns.is_some() || o.fw_ns.is_some())
        {
            let e = self.spans.entry((o.chip, o.run)).or_insert_with(|| Spans {
                name: o.name.clone(),
                ..Spans::default()
            });
            widen(&mut e.kernel, o.kernel_ns);
            widen(&mut e.fw, o.fw_ns);
            e.time = widen_time(e.time, o.device_time);
        }
        Ok(())
    }

    /// Merges the parts' device spans into `run`'s ops, checks the op log's host times
    /// against them (as [`Profile::resolved`] does; a warning in `run.issues` when they do
    /// not match), adds the parts' issues to `run.issues`, then finishes every sink on it.
    pub fn finish(mut self, run: &mut Profile) -> Result<Vec<Finished>> {
        for o in run.ops.iter_mut() {
            if let Some(s) = self.spans.remove(&(o.chip, o.run)) {
                widen(&mut o.kernel_ns, s.kernel);
                widen(&mut o.fw_ns, s.fw);
                o.device_time = widen_time(o.device_time, s.time);
            }
        }
        for ((chip, run_id), s) in std::mem::take(&mut self.spans) {
            run.ops.push(OpSpan {
                chip,
                run: run_id,
                name: s.name,
                host_ns: None,
                log_host_ns: None,
                kernel_ns: s.kernel,
                fw_ns: s.fw,
                device_time: s.time,
            });
        }
        crate::profile::sort_ops(&mut run.ops);
        // The op log's host times against the device spans of the whole run.
        let spans: BTreeMap<(u32, Option<u32>), (HostTime, HostTime)> = run
            .ops
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.device_time.map(|s| ((o.chip, Some(i as u32)), s)))
            .collect();
        run.check_host_times(&spans);
        run.issues.append(&mut self.issues);
        let run = &*run;
        self.sinks.iter_mut().map(|s| s.finish(run)).collect()
    }
}
