//! `profile_log_device.csv` as a sink: rows streamed ring by ring ([`crate::csv`]), or a
//! piece of a ring at a time, the zones still open carried from piece to piece
//! ([`RowWriter::piece`]).

use crate::atomic::AtomicFile;
use crate::csv::{self, RowWriter};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::profile::{Part, Profile, RingView};
use crate::resolve::RingSites;
use crate::sink::{Finished, Sink};
use std::path::{Path, PathBuf};

/// Writes tt-metal's device CSV.
pub struct DeviceCsv {
    path: PathBuf,
    /// The command's input guard: the file is not written over one of its inputs.
    inputs: Inputs,
    file: Option<AtomicFile>,
    rows: RowWriter,
    /// Marker rows written.
    pub written_rows: u64,
}

impl DeviceCsv {
    /// The CSV at `path`, never written over one of `inputs`.
    pub fn new(path: &Path, inputs: &Inputs) -> DeviceCsv {
        DeviceCsv {
            path: path.to_path_buf(),
            inputs: inputs.clone(),
            file: None,
            rows: RowWriter::new(),
            written_rows: 0,
        }
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, "write", e)
    }
}

impl Sink for DeviceCsv {
    fn begin(&mut self, p: &Profile) -> Result<()> {
        let mut file = AtomicFile::create(&self.path, &self.inputs)?;
        csv::header(file.writer(), p.geometry(), csv::freq_mhz(&p.timebase))
            .map_err(|e| self.io(e))?;
        self.file = Some(file);
        Ok(())
    }

    fn wants_zones(&self) -> bool {
        false
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, v: &RingView) -> Result<()> {
        let none = RingSites::default();
        let sites = p.sites.rings.get(v.index).unwrap_or(&none);
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        // The view's zones when another output asked for them (this one does not).
        let records = &v.ring.records;
        let zones = (v.zones.len() == records.zones()).then(|| v.zones.order());
        let written = if v.part == Part::WHOLE {
            self.rows
                .ring(file.writer(), v.ring.id, records, sites, zones)
        } else {
            self.rows
                .piece(file.writer(), v.ring.id, records, sites, v.part)
        };
        match written {
            Ok(n) => self.written_rows += n,
            Err(e) => return Err(self.io(e)),
        }
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> Result<Finished> {
        if let Some(file) = self.file.take() {
            file.commit()?;
        }
        Ok(Finished {
            files: vec![self.path.clone()],
            issues: Vec::new(),
        })
    }
}
