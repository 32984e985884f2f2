//! Where the stream keeps its lanes' begin/end events: one unnamed temporary file (the
//! `tempfile` crate, in the system's temporary directory; its space goes back when the
//! stream is dropped or the process ends), each lane's events one contiguous run of
//! 12-byte records (time as i64, source location as u32, little-endian), written as its
//! ring is read. A session reads each lane back through a small window ([`LaneReader`]),
//! so what stays in memory per zone is nothing: the k-way merge of the lanes
//! ([`super::emit`]) holds one window per lane, whatever the run's length.

use super::plan::LaneEv;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

/// Bytes of one event in the file.
const EV_BYTES: usize = 12;

/// Events read from the file at a time, per lane.
const WINDOW: u64 = 256;

/// Lane events being written (while the stream is built).
pub(crate) struct SpoolWriter {
    out: Option<BufWriter<File>>,
    events: u64,
}

/// One lane's events in the file: `count` of them from event number `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub first: u64,
    pub count: u64,
}

/// The finished file, shared by every session that serves the stream.
#[derive(Clone, Debug)]
pub(crate) struct Spool {
    file: Option<Arc<File>>,
}

fn spool_error(op: &'static str, e: io::Error) -> Error {
    Error::io(std::env::temp_dir(), op, e)
}

impl SpoolWriter {
    pub(crate) fn new() -> SpoolWriter {
        SpoolWriter {
            out: None,
            events: 0,
        }
    }

    /// Appends one lane's events; where they are.
    pub(crate) fn lane(&mut self, events: impl Iterator<Item = LaneEv>) -> Result<Run> {
        let out = match &mut self.out {
            Some(out) => out,
            None => {
                let f = tempfile::tempfile()
                    .map_err(|e| spool_error("create the Tracy stream's spool in", e))?;
                self.out.insert(BufWriter::with_capacity(1 << 16, f))
            }
        };
        let first = self.events;
        for e in events {
            let mut b = [0u8; EV_BYTES];
            b[..8].copy_from_slice(&e.time.to_le_bytes());
            b[8..].copy_from_slice(&e.srcloc.to_le_bytes());
            out.write_all(&b)
                .map_err(|e| spool_error("write the Tracy stream's spool in", e))?;
            self.events += 1;
        }
        Ok(Run {
            first,
            count: self.events - first,
        })
    }

    /// The file, written out.
    pub(crate) fn finish(self) -> Result<Spool> {
        let file = match self.out {
            Some(out) => Some(Arc::new(out.into_inner().map_err(|e| {
                spool_error("write the Tracy stream's spool in", e.into_error())
            })?)),
            None => None,
        };
        Ok(Spool { file })
    }
}

impl Spool {
    /// A reader of `run`'s events.
    pub(crate) fn reader(&self, run: Run) -> LaneReader {
        LaneReader {
            file: self.file.clone(),
            next: run.first,
            end: run.first + run.count,
            window: Vec::new(),
            pos: 0,
        }
    }

    /// Every event of `run` (for tests).
    #[cfg(test)]
    pub(crate) fn events(&self, run: Run) -> Vec<LaneEv> {
        let mut r = self.reader(run);
        std::iter::from_fn(|| r.next().unwrap()).collect()
    }
}

/// One lane's events, read a window at a time.
pub(crate) struct LaneReader {
    file: Option<Arc<File>>,
    /// Next event number to read from the file, and the end of the lane's run.
    next: u64,
    end: u64,
    window: Vec<LaneEv>,
    pos: usize,
}

impl LaneReader {
    /// The next event, `None` after the last.
    pub(crate) fn next(&mut self) -> io::Result<Option<LaneEv>> {
        if self.pos == self.window.len() {
            self.fill()?;
            if self.window.is_empty() {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.window[self.pos - 1]))
    }

    fn fill(&mut self) -> io::Result<()> {
        self.window.clear();
        self.pos = 0;
        let n = WINDOW.min(self.end - self.next);
        let Some(file) = self.file.as_deref().filter(|_| n > 0) else {
            return Ok(());
        };
        let mut bytes = vec![0u8; n as usize * EV_BYTES];
        // One session reads at a time: seeking the shared handle is safe here.
        let mut f = file;
        f.seek(SeekFrom::Start(self.next * EV_BYTES as u64))?;
        f.read_exact(&mut bytes)?;
        self.window
            .extend(bytes.chunks_exact(EV_BYTES).map(|b| LaneEv {
                time: i64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
                srcloc: u32::from_le_bytes(b[8..].try_into().unwrap_or_default()),
            }));
        self.next += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_read_back_in_windows_as_written() {
        let mut w = SpoolWriter::new();
        let ev = |i: u64| LaneEv {
            time: i as i64 * 3 - 7,
            srcloc: if i.is_multiple_of(5) {
                super::super::plan::END
            } else {
                i as u32
            },
        };
        let a = w.lane((0..10).map(ev)).unwrap();
        let empty = w.lane(std::iter::empty()).unwrap();
        let b = w.lane((100..100 + 3 * WINDOW + 7).map(ev)).unwrap();
        let s = w.finish().unwrap();
        assert_eq!(s.events(a), (0..10).map(ev).collect::<Vec<_>>());
        assert_eq!(s.events(empty), []);
        // Two readers of one lane, interleaved with another lane's: each keeps its place.
        let (mut r1, mut r2, mut ra) = (s.reader(b), s.reader(b), s.reader(a));
        for i in 100..100 + 3 * WINDOW + 7 {
            assert_eq!(r1.next().unwrap(), Some(ev(i)));
            if i < 110 {
                assert_eq!(ra.next().unwrap(), Some(ev(i - 100)));
            }
            assert_eq!(r2.next().unwrap(), Some(ev(i)));
        }
        assert_eq!((r1.next().unwrap(), ra.next().unwrap()), (None, None));
        // A stream without lanes has no file.
        assert_eq!(SpoolWriter::new().finish().unwrap().events(a), []);
    }
}
