//! The op report (`ops_perf_results_<timestamp>.csv`) as a sink: built from the model's op
//! spans in [`Sink::begin`] (so an op log that does not belong to the run stops the drive
//! before any file is written), written at the end.

use crate::sink::{Finished, Sink};
use crate::error::{Error, Result};
use crate::profile::{Profile, RingView};
use crate::report::{self, OpReport};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Writes the op report into a directory under tt-metal's name for a time.
pub struct OpReportSink {
    dir: PathBuf,
    now: SystemTime,
    /// The report (after [`Sink::begin`]).
    pub report: Option<OpReport>,
}

impl OpReportSink {
    /// The report in `dir`, named for `now`.
    pub fn new(dir: &Path, now: SystemTime) -> OpReportSink {
        OpReportSink { dir: dir.to_path_buf(), now, report: None }
    }
}

impl Sink for OpReportSink {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let Some(oplog) = &p.oplog else {
            return Err(Error::Other("the op report needs the op log that names the run's ops".into()));
        };
        self.report = Some(report::of_profile(p, oplog)?);
        Ok(())
    }

    fn wants_zones(&self) -> bool {
        false
    }

    fn ring(&mut self, _: &Profile, _: &RingView) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> Result<Finished> {
        let Some(report) = &self.report else { return Ok(Finished::default()) };
        let path = report.write_into(&self.dir, self.now)?;
        Ok(Finished { files: vec![path], issues: report.issues.clone() })
    }
}
