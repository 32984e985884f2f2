//! Where the stream keeps its lanes' begin/end events, its messages (device events, data,
//! sums, losses, value zones' values, signposts) and the op log's host zones: one unnamed
//! temporary file (the `tempfile` crate, in the system's temporary directory; its space
//! goes back when the stream is dropped or the process ends), each run of records (a
//! lane's events, a thread's messages, a host row's zones) written once as its ring is
//! read and read back a small window at a time, so what stays in memory per zone, message
//! or op is nothing: the k-way merge of the lanes ([`super::emit`]) holds one window per
//! lane, whatever the run's length. A lane event is 12 bytes (time as i64, source location
//! as u32); a message or host zone has a text, so it is of any length: a fixed head, then
//! the text's length and bytes (all little-endian). A reader's window grows to the longest
//! record it meets, no further.

use super::plan::{HostZone, LaneEv, Message, Rank};
use super::protocol::MessageSeverity;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Bytes read from the file at a time, per reader.
const WINDOW: usize = 4096;

/// A record kept in the file.
pub(crate) trait Record: Sized {
    /// Appends the record's bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// The record at the start of `b` and its length in bytes; `None` when `b` holds only
    /// part of it.
    fn take(b: &[u8]) -> Option<(Self, usize)>;
}

/// A run of records in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub offset: u64,
    pub bytes: u64,
    pub count: u64,
}

/// Records being written (while the stream is built).
pub(crate) struct RecordWriter {
    out: Option<BufWriter<File>>,
    bytes: u64,
    buf: Vec<u8>,
}

/// The finished file, shared by every session that serves the stream.
#[derive(Clone, Debug)]
pub(crate) struct RecordSpool {
    file: Option<Arc<File>>,
}

fn spool_error(op: &'static str, e: io::Error) -> Error {
    Error::io(std::env::temp_dir(), op, e)
}

impl RecordWriter {
    pub(crate) fn new() -> RecordWriter {
        RecordWriter {
            out: None,
            bytes: 0,
            buf: Vec::new(),
        }
    }

    /// Appends a run of records; where it is.
    pub(crate) fn run<R: Record>(&mut self, records: impl IntoIterator<Item = R>) -> Result<Span> {
        let offset = self.bytes;
        let mut count = 0;
        for r in records {
            self.buf.clear();
            r.put(&mut self.buf);
            let out = match &mut self.out {
                Some(out) => out,
                None => {
                    let f = tempfile::tempfile()
                        .map_err(|e| spool_error("create the Tracy stream's spool in", e))?;
                    self.out.insert(BufWriter::with_capacity(1 << 16, f))
                }
            };
            out.write_all(&self.buf)
                .map_err(|e| spool_error("write the Tracy stream's spool in", e))?;
            self.bytes += self.buf.len() as u64;
            count += 1;
        }
        Ok(Span {
            offset,
            bytes: self.bytes - offset,
            count,
        })
    }

    /// The file, written out.
    pub(crate) fn finish(self) -> Result<RecordSpool> {
        let file = match self.out {
            Some(out) => Some(Arc::new(out.into_inner().map_err(|e| {
                spool_error("write the Tracy stream's spool in", e.into_error())
            })?)),
            None => None,
        };
        Ok(RecordSpool { file })
    }
}

impl RecordSpool {
    /// A reader of `span`'s records.
    pub(crate) fn reader<R: Record>(&self, span: Span) -> RecordReader<R> {
        self.reader_of(&[span])
    }

    /// A reader of `spans`' records, one run after the other.
    pub(crate) fn reader_of<R: Record>(&self, spans: &[Span]) -> RecordReader<R> {
        let mut rest: Vec<Span> = spans.iter().rev().copied().collect();
        let first = rest.pop().unwrap_or_default();
        RecordReader {
            file: self.file.clone(),
            next: first.offset,
            end: first.offset + first.bytes,
            rest,
            buf: Vec::new(),
            pos: 0,
            record: PhantomData,
        }
    }

    /// Every record of `span` (for tests).
    #[cfg(test)]
    pub(crate) fn all<R: Record>(&self, span: Span) -> Vec<R> {
        let mut r = self.reader(span);
        std::iter::from_fn(|| r.next().unwrap()).collect()
    }
}

/// One run's records, read a window at a time.
pub(crate) struct RecordReader<R> {
    file: Option<Arc<File>>,
    /// Next byte to read from the file, and the end of the run.
    next: u64,
    end: u64,
    /// The runs after this one, the next last.
    rest: Vec<Span>,
    buf: Vec<u8>,
    pos: usize,
    record: PhantomData<R>,
}

impl<R: Record> RecordReader<R> {
    /// The next record, `None` after the last.
    pub(crate) fn next(&mut self) -> io::Result<Option<R>> {
        loop {
            if let Some((r, used)) = R::take(&self.buf[self.pos..]) {
                self.pos += used;
                return Ok(Some(r));
            }
            let left = self.end - self.next;
            if left == 0 {
                if self.pos < self.buf.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a record cut short at the end of its run",
                    ));
                }
                match self.rest.pop() {
                    Some(span) => {
                        (self.next, self.end) = (span.offset, span.offset + span.bytes);
                        continue;
                    }
                    None => return Ok(None),
                }
            }
            let Some(file) = self.file.as_deref() else {
                return Ok(None);
            };
            self.buf.drain(..self.pos);
            self.pos = 0;
            let n = (WINDOW as u64).min(left) as usize;
            let at = self.buf.len();
            self.buf.resize(at + n, 0);
            file.read_exact_at(&mut self.buf[at..], self.next)?;
            self.next += n as u64;
        }
    }
}

/// `text`'s length and bytes.
fn put_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// The text after a head of `head` bytes, and the record's whole length.
fn take_text(b: &[u8], head: usize) -> Option<(String, usize)> {
    let len = u32::from_le_bytes(b.get(head..head + 4)?.try_into().ok()?) as usize;
    let text = b.get(head + 4..head + 4 + len)?;
    Some((String::from_utf8_lossy(text).into_owned(), head + 4 + len))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

/// time i64, source location u32.
impl Record for LaneEv {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&self.srcloc.to_le_bytes());
    }

    fn take(b: &[u8]) -> Option<(LaneEv, usize)> {
        (b.len() >= 12).then(|| {
            let e = LaneEv {
                time: i64_at(b, 0),
                srcloc: u32_at(b, 8),
            };
            (e, 12)
        })
    }
}

/// thread u32, time i64, severity (as Tracy's metadata byte), text.
impl Record for Message {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.thread.to_le_bytes());
        out.extend_from_slice(&self.time.to_le_bytes());
        out.push(self.severity.metadata());
        out.push(self.rank as u8);
        put_text(out, &self.text);
    }

    fn take(b: &[u8]) -> Option<(Message, usize)> {
        let (text, used) = take_text(b, 14)?;
        let severity = MessageSeverity::from_metadata(b[12]).unwrap_or(MessageSeverity::Info);
        let rank = match b[13] {
            0 => Rank::Mark,
            1 => Rank::Value,
            _ => Rank::Loss,
        };
        let m = Message {
            thread: u32_at(b, 0),
            time: i64_at(b, 4),
            rank,
            severity,
            text,
        };
        Some((m, used))
    }
}

/// start i64, end i64, source location u32, text.
impl Record for HostZone {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.start.to_le_bytes());
        out.extend_from_slice(&self.end.to_le_bytes());
        out.extend_from_slice(&self.srcloc.to_le_bytes());
        put_text(out, &self.text);
    }

    fn take(b: &[u8]) -> Option<(HostZone, usize)> {
        let (text, used) = take_text(b, 20)?;
        let z = HostZone {
            start: i64_at(b, 0),
            end: i64_at(b, 8),
            srcloc: u32_at(b, 16),
            text,
        };
        Some((z, used))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(i: usize, text: String) -> Message {
        Message {
            thread: i as u32 * 7,
            time: i as i64 * 1000 - 5,
            rank: [Rank::Mark, Rank::Value, Rank::Loss][i % 3],
            severity: if i.is_multiple_of(3) {
                MessageSeverity::Warning
            } else {
                MessageSeverity::Info
            },
            text,
        }
    }

    /// A lane written a run per piece of its ring, with other runs between them, reads back
    /// as one run.
    #[test]
    fn a_lanes_runs_read_back_as_one() {
        let mut w = RecordWriter::new();
        let ev = |i: u64| LaneEv {
            time: i as i64,
            srcloc: i as u32,
        };
        let mut spans = Vec::new();
        for piece in 0..5u64 {
            spans.push(w.run((piece * 1_000..(piece + 1) * 1_000).map(ev)).unwrap());
            w.run((0..piece as usize).map(|i| message(i, "x".repeat(i))))
                .unwrap();
            spans.push(w.run(std::iter::empty::<LaneEv>()).unwrap());
        }
        let spool = w.finish().unwrap();
        let mut r = spool.reader_of::<LaneEv>(&spans);
        let back: Vec<LaneEv> = std::iter::from_fn(|| r.next().unwrap()).collect();
        assert_eq!(back, (0..5_000).map(ev).collect::<Vec<_>>());
        let mut none = spool.reader_of::<LaneEv>(&[]);
        assert_eq!(none.next().unwrap(), None);
    }

    #[test]
    fn lanes_read_back_in_windows_as_written() {
        let mut w = RecordWriter::new();
        let ev = |i: u64| LaneEv {
            time: i as i64 * 3 - 7,
            srcloc: if i.is_multiple_of(5) {
                super::super::plan::END
            } else {
                i as u32
            },
        };
        let long = 3 * WINDOW as u64 + 7;
        let a = w.run((0..10).map(ev)).unwrap();
        let empty = w.run(std::iter::empty::<LaneEv>()).unwrap();
        let b = w.run((100..100 + long).map(ev)).unwrap();
        let s = w.finish().unwrap();
        assert_eq!(s.all::<LaneEv>(a), (0..10).map(ev).collect::<Vec<_>>());
        assert_eq!(s.all::<LaneEv>(empty), []);
        // Two readers of one lane, interleaved with another lane's: each keeps its place.
        let (mut r1, mut r2, mut ra) = (
            s.reader::<LaneEv>(b),
            s.reader::<LaneEv>(b),
            s.reader::<LaneEv>(a),
        );
        for i in 100..100 + long {
            assert_eq!(r1.next().unwrap(), Some(ev(i)));
            if i < 110 {
                assert_eq!(ra.next().unwrap(), Some(ev(i - 100)));
            }
            assert_eq!(r2.next().unwrap(), Some(ev(i)));
        }
        assert_eq!((r1.next().unwrap(), ra.next().unwrap()), (None, None));
        // A stream without records has no file.
        assert_eq!(RecordWriter::new().finish().unwrap().all::<LaneEv>(a), []);
    }

    #[test]
    fn records_of_any_length_read_back_in_windows_as_written() {
        let mut w = RecordWriter::new();
        // Short texts across many windows, a text longer than a window, an empty text.
        let short: Vec<Message> = (0..2000)
            .map(|i| message(i, format!("event {i}")))
            .collect();
        let long = vec![
            message(1, "x".repeat(3 * WINDOW + 5)),
            message(2, String::new()),
            message(3, "é".repeat(10)),
        ];
        let zones: Vec<HostZone> = (0..50)
            .map(|i| HostZone {
                start: i,
                end: i + 10,
                srcloc: i as u32,
                text: format!("op=Op{i} run=1 device=0"),
            })
            .collect();
        let a = w.run(short.clone()).unwrap();
        let empty = w.run(Vec::<Message>::new()).unwrap();
        let b = w.run(long.clone()).unwrap();
        let z = w.run(zones.clone()).unwrap();
        let s = w.finish().unwrap();
        let text = |m: &[Message]| -> Vec<(u32, i64, MessageSeverity, String)> {
            m.iter()
                .map(|m| (m.thread, m.time, m.severity, m.text.clone()))
                .collect()
        };
        assert_eq!(text(&s.all::<Message>(a)), text(&short));
        assert_eq!(empty.count, 0);
        assert!(s.all::<Message>(empty).is_empty());
        assert_eq!(text(&s.all::<Message>(b)), text(&long));
        let back: Vec<(i64, i64, u32, String)> = s
            .all::<HostZone>(z)
            .into_iter()
            .map(|z| (z.start, z.end, z.srcloc, z.text))
            .collect();
        let want: Vec<(i64, i64, u32, String)> = zones
            .into_iter()
            .map(|z| (z.start, z.end, z.srcloc, z.text))
            .collect();
        assert_eq!(back, want);
        // Two readers of one run interleaved keep their places.
        let (mut r1, mut r2) = (s.reader::<Message>(a), s.reader::<Message>(a));
        for m in &short {
            assert_eq!(r1.next().unwrap().unwrap().text, m.text);
            assert_eq!(r2.next().unwrap().unwrap().text, m.text);
        }
        assert!(r1.next().unwrap().is_none());
        // A stream without records has no file.
        assert!(RecordWriter::new()
            .finish()
            .unwrap()
            .all::<Message>(a)
            .is_empty());
    }
}
