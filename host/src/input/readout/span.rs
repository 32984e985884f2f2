//! Decoding the live span `[TAIL, HEAD)` of one ring, reading only those bytes.
//!
//! `TAIL` and `HEAD` are free-running byte counters; a byte's ring offset is
//! `counter % capacity`. The span is read in at most two contiguous pieces (before and after
//! the ring's end), each rounded out to whole 32-bit words (device reads are 32-bit), so the
//! bus cost is the span plus at most 6 bytes per piece.
//!
//! Where the producer could not fit a record before the ring's end it wrote a `PAD` (or, with
//! fewer than 4 bytes left, nothing) and continued at the ring's start; the counters include
//! the skipped bytes. A `PAD` or short remainder anywhere but before the ring's end, or a
//! span ending inside a record, means the ring is corrupt.

use crate::decode::{DecodeError, Decoder, Records, Stop, ZoneTable};
use crate::error::Result;
use std::fmt;

/// What decoding a span achieved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpanStats {
    /// Bytes of decoded records (the payload).
    pub payload_bytes: u64,
    /// Bytes skipped before the ring's end (`PAD` and short remainders).
    pub skipped_bytes: u64,
    /// Bytes read from device memory for this span.
    pub(crate) read_bytes: u64,
}

/// Why a span could not be decoded to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpanError {
    /// The bytes at counter value `pos` (ring offset `offset`) are not a valid record.
    Corrupt {
        /// Free-running byte counter value of the bad bytes.
        pos: u32,
        /// Their offset in the ring (`pos % capacity`).
        offset: u32,
        /// What is wrong with them.
        what: String,
    },
    /// Device memory could not be read.
    Read(String),
}

impl fmt::Display for SpanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpanError::Corrupt { pos, offset, what } => {
                write!(
                    f,
                    "ring data corrupt at position {pos:#x} (ring offset {offset:#x}): {what}"
                )
            }
            SpanError::Read(e) => write!(f, "cannot read ring data: {e}"),
        }
    }
}

/// A live span: `[tail, head)` of a ring of `capacity` bytes (a power of two, and
/// `head - tail <= capacity`, which the caller checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Counter value of the first live byte (`TAIL`).
    pub tail: u32,
    /// Counter value one past the last live byte (`HEAD`).
    pub head: u32,
    /// Ring size in bytes.
    pub capacity: u32,
}

/// One ring's decoding state across spans: the decoder, reusable read buffers, and
/// optionally a copy of every decoded byte (the ring's payload stream, which decodes to the
/// same records again from `Decoder::default()`).
#[derive(Clone, Debug, Default)]
pub struct SpanDecoder {
    /// The decoder state after the last span (time reference, current run id).
    pub decoder: Decoder,
    words: Vec<u32>,
    bytes: Vec<u8>,
    payload: Option<Vec<u8>>,
}

/// Where a span's records go: the compact table (the readout's hot path) or the rich view.
pub trait SpanOutput {
    /// Decodes one piece with `d` into `self`.
    fn decode_piece(&mut self, d: &mut Decoder, bytes: &[u8]) -> Result<Stop, DecodeError>;
}

impl SpanOutput for ZoneTable {
    fn decode_piece(&mut self, d: &mut Decoder, bytes: &[u8]) -> Result<Stop, DecodeError> {
        d.decode_compact(bytes, self)
    }
}

impl SpanOutput for Records {
    fn decode_piece(&mut self, d: &mut Decoder, bytes: &[u8]) -> Result<Stop, DecodeError> {
        d.decode(bytes, self)
    }
}

impl SpanDecoder {
    /// Continues from `decoder`'s state, with empty buffers and no payload kept.
    pub fn new(decoder: Decoder) -> SpanDecoder {
        SpanDecoder {
            decoder,
            words: Vec::new(),
            bytes: Vec::new(),
            payload: None,
        }
    }

    /// From now on, keep a copy of every decoded byte (see [`SpanDecoder::take_payload`]).
    pub fn keep_payload(&mut self) {
        self.payload.get_or_insert_with(Vec::new);
    }

    /// Appends bytes decoded outside a span (a recorded drained stream) to the kept payload.
    pub(crate) fn keep_decoded(&mut self, bytes: &[u8]) {
        if let Some(kept) = &mut self.payload {
            kept.extend_from_slice(bytes);
        }
    }

    /// The decoded bytes kept since the last call (empty unless [`SpanDecoder::keep_payload`]).
    pub fn take_payload(&mut self) -> Vec<u8> {
        self.payload
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Decodes `span`. `read(offset, words)` reads whole words at a 4-aligned ring offset.
    /// Records go to `out` (a [`ZoneTable`] or [`Records`]) and counts to `stats`; on error
    /// both keep what came before the bad record.
    pub fn decode(
        &mut self,
        span: Span,
        read: impl FnMut(u32, &mut [u32]) -> Result<()>,
        out: &mut impl SpanOutput,
        stats: &mut SpanStats,
    ) -> Result<(), SpanError> {
        decode_span(read, span, self, out, stats)
    }
}

fn decode_span(
    mut read: impl FnMut(u32, &mut [u32]) -> Result<()>,
    Span {
        tail,
        head,
        capacity,
    }: Span,
    state: &mut SpanDecoder,
    out: &mut impl SpanOutput,
    stats: &mut SpanStats,
) -> Result<(), SpanError> {
    let mut pos = tail;
    while pos != head {
        let offset = pos % capacity;
        let to_end = capacity - offset;
        let left = head.wrapping_sub(pos);
        let corrupt = |what: String| SpanError::Corrupt { pos, offset, what };
        if to_end < 4 {
            if left < to_end {
                return Err(corrupt(format!(
                    "HEAD ends {left} bytes into the {to_end} unused bytes before the ring's end"
                )));
            }
            pos = pos.wrapping_add(to_end);
            stats.skipped_bytes += to_end as u64;
            continue;
        }
        let avail = left.min(to_end);
        let piece = read_piece(&mut read, offset, avail, state)
            .map_err(|e| SpanError::Read(e.to_string()))?;
        stats.read_bytes += piece.1;
        let bytes = &state.bytes[piece.0..piece.0 + avail as usize];
        let reaches_end = avail == to_end;
        let result = out.decode_piece(&mut state.decoder, bytes);
        if let Some(kept) = &mut state.payload {
            let good = match result {
                Ok(Stop::End) => bytes.len(),
                Ok(Stop::Pad { at } | Stop::Short { at }) => at,
                Err(e) => e.at,
            };
            kept.extend_from_slice(&bytes[..good]);
        }
        // Records before a bad one were decoded: their bytes count as payload.
        let decoded = match result {
            Ok(Stop::End) => avail,
            Ok(Stop::Pad { at } | Stop::Short { at }) => at as u32,
            Err(e) => e.at as u32,
        };
        stats.payload_bytes += decoded as u64;
        let stop = result.map_err(|e: DecodeError| SpanError::Corrupt {
            pos: pos.wrapping_add(e.at as u32),
            offset: offset + e.at as u32,
            what: e.to_string(),
        })?;
        match stop {
            Stop::End => {}
            Stop::Pad { .. } | Stop::Short { .. } if reaches_end => {}
            Stop::Pad { at } => {
                return Err(SpanError::Corrupt {
                    pos: pos.wrapping_add(at as u32),
                    offset: offset + at as u32,
                    what: format!(
                        "PAD record {} bytes before HEAD, expected one only before the ring's end",
                        avail - at as u32
                    ),
                })
            }
            Stop::Short { at } => {
                return Err(SpanError::Corrupt {
                    pos: pos.wrapping_add(at as u32),
                    offset: offset + at as u32,
                    what: format!(
                        "HEAD cuts the record at this position after {} bytes",
                        avail - at as u32
                    ),
                })
            }
        }
        stats.skipped_bytes += (avail - decoded) as u64;
        pos = pos.wrapping_add(avail);
    }
    Ok(())
}

/// Reads ring bytes `[offset, offset + len)` as whole words into `buffers.bytes`; returns
/// where the wanted bytes start in it and how many bytes were read.
fn read_piece(
    read: &mut impl FnMut(u32, &mut [u32]) -> Result<()>,
    offset: u32,
    len: u32,
    buffers: &mut SpanDecoder,
) -> Result<(usize, u64)> {
    let first = offset & !3;
    let last = (offset + len + 3) & !3;
    let n = ((last - first) / 4) as usize;
    buffers.words.clear();
    buffers.words.resize(n, 0);
    read(first, &mut buffers.words)?;
    buffers.bytes.clear();
    buffers
        .bytes
        .extend(buffers.words.iter().flat_map(|w| w.to_le_bytes()));
    Ok(((offset - first) as usize, 4 * n as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ttprof_rt::wire::{encode, Record, PAD};

    /// A ring of `cap` bytes holding `records` written from counter `start` the way the
    /// producer writes them (PAD or skip at the end); returns the ring and the head.
    fn ring(cap: u32, start: u32, records: &[Record]) -> (Vec<u8>, u32) {
        let mut bytes = vec![0xEEu8; cap as usize];
        let (mut pos, mut reference) = (start, 0u64);
        for r in records {
            let e = encode(r, reference).unwrap();
            let to_end = cap - pos % cap;
            if e.bytes() > to_end {
                if to_end >= 4 {
                    let at = (pos % cap) as usize;
                    bytes[at..at + 4].copy_from_slice(&[0, 0, PAD as u8, (PAD >> 8) as u8]);
                }
                pos = pos.wrapping_add(to_end);
            }
            for (i, h) in e.as_slice().iter().enumerate() {
                let at = (pos % cap) as usize + 2 * i;
                bytes[at..at + 2].copy_from_slice(&h.to_le_bytes());
            }
            pos = pos.wrapping_add(e.bytes());
            reference = r.ref_time().unwrap_or(reference);
        }
        (bytes, pos)
    }

    fn run(bytes: &[u8], tail: u32, head: u32) -> (Records, SpanStats, Result<(), SpanError>) {
        let cap = bytes.len() as u32;
        let mut out = Records::new();
        let mut stats = SpanStats::default();
        let read = |off: u32, w: &mut [u32]| {
            for (i, x) in w.iter_mut().enumerate() {
                let a = (off as usize) + 4 * i;
                *x = u32::from_le_bytes(bytes[a..a + 4].try_into().unwrap());
            }
            Ok(())
        };
        let r = SpanDecoder::default().decode(
            Span {
                tail,
                head,
                capacity: cap,
            },
            read,
            &mut out,
            &mut stats,
        );
        (out, stats, r)
    }

    fn zones(n: u64) -> Vec<Record> {
        (0..n)
            .map(|i| Record::Zone {
                id: i as u16,
                end: 100 + 10 * i,
                duration: 3,
                value: None,
            })
            .collect()
    }

    #[test]
    fn a_span_across_the_ring_end_with_pad_decodes_in_order() {
        for start in [0u32, 2, 60, 58, 62, u32::MAX - 61] {
            let records: Vec<Record> = zones(5)
                .into_iter()
                .chain([Record::Event {
                    id: 9,
                    time: 1 << 40,
                }])
                .chain(zones(0))
                .collect();
            let (bytes, head) = ring(64, start, &records);
            let (out, stats, r) = run(&bytes, start, head);
            r.unwrap();
            let got: Vec<Record> = (0..out.len()).map(|i| out.record(i).unwrap()).collect();
            assert_eq!(got, records, "start {start}");
            assert_eq!(
                stats.payload_bytes + stats.skipped_bytes,
                head.wrapping_sub(start) as u64
            );
            assert!(stats.read_bytes <= stats.payload_bytes + stats.skipped_bytes + 12);
        }
    }

    #[test]
    fn a_head_inside_a_record_or_a_pad_before_head_is_corruption_at_a_position() {
        let (bytes, head) = ring(64, 0, &zones(4));
        let (out, _, r) = run(&bytes, 0, head - 2);
        assert_eq!(out.len(), 3);
        match r {
            Err(SpanError::Corrupt { pos: 18, .. }) => {}
            other => panic!("{other:?}"),
        }
        let mut padded = bytes.clone();
        padded[6..10].copy_from_slice(&[0, 0, 0xFF, 0xFF]);
        let e = run(&padded, 0, head).2.unwrap_err().to_string();
        assert!(e.contains("PAD") && e.contains("0x6"), "{e}");
    }
}
