//! The fast ring decoder: ring bytes to the compact columnar [`ZoneTable`] (and, from it,
//! the rich [`Records`] view).
//!
//! It reads the encoding defined in `ttprof_rt::wire` and agrees exactly with the reference
//! decoder `wire::decode` (records, errors, and which records set the time reference); the
//! tests check that on generated streams and on random bytes. The hot loop (module `hot`) handles
//! runs of 6-byte short zones with one 8-byte load each and writes 14 bytes per zone; every
//! other kind goes through a `match` and the table's side tables.
//!
//! A [`Decoder`] keeps its state (the time reference `ref` and the current run id) between
//! calls, so a ring can be decoded piecewise as it is drained. One call decodes one
//! contiguous piece of ring bytes; how the piece ends is reported as a [`Stop`]:
//! the readout (which knows whether the piece ended at the ring's end or at `HEAD`) decides
//! whether that is normal.

mod compact;
mod hot;
mod pieces;
mod records;
#[cfg(target_arch = "x86_64")]
mod simd;
mod spans;
mod starts;
#[cfg(test)]
mod tests;

pub use compact::{Row as TableRow, Rows, ZoneTable};
pub use pieces::Pieces;
pub use records::{Columns, RecordKind, Records, NO_RUN};

use std::fmt;
use ttprof_rt::wire::{self, DecodeError as WireError, Kind, PAD};

/// How a call to [`Decoder::decode`] ended (all records before that point were appended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every byte was decoded.
    End,
    /// A `PAD` record at byte `at`: the rest of the ring up to its end is unused.
    Pad {
        /// Byte offset of the `PAD` record in the piece.
        at: usize,
    },
    /// Fewer than 4 bytes remain from byte `at`: too few for any record. Normal just before
    /// the ring's end (the producer skips them); anywhere else the data is cut short.
    Short {
        /// Byte offset in the piece of the first byte left undecoded.
        at: usize,
    },
}

/// A record that could not be decoded, at byte `at` of the piece given to the decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset of the bad record in the piece given to the decoder.
    pub at: usize,
    /// What is wrong with it, in the reference decoder's terms.
    pub kind: WireError,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            WireError::Truncated { need } => {
                write!(f, "record at byte {} is cut short: it needs {} bytes", self.at, 2 * need)
            }
            WireError::UnknownKind { h1 } => write!(
                f,
                "unknown record header {h1:#06x} at byte {} (expected a short zone, a known kind 0x01..=0x13, or PAD)",
                self.at
            ),
            WireError::Time => write!(
                f,
                "impossible timestamp in the record at byte {}: a time before the previous record's, or a zone \
                 starting after its end or before cycle 0",
                self.at
            ),
            WireError::Overflow => write!(
                f,
                "impossible timestamp in the record at byte {}: its low time bits, after the previous record's \
                 time, would pass the largest 64-bit cycle count (the time would wrap)",
                self.at
            ),
        }
    }
}

/// Decoder state carried between pieces of one ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoder {
    /// Time of the last record that sets the reference (`wire`'s `ref`).
    pub reference: u64,
    /// Run id of the last `Run` record, or [`NO_RUN`].
    pub run: u32,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder {
            reference: 0,
            run: NO_RUN,
        }
    }
}

/// One decoded record that did not take the hot path.
pub(crate) struct Slow {
    pub(crate) kind: RecordKind,
    pub(crate) site: u16,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) value: u64,
    pub(crate) count: u32,
}

impl Decoder {
    /// The state at the start of a ring: time reference 0, no run yet ([`NO_RUN`]).
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes the records at the start of `bytes` straight into the rich view `out` (35
    /// table bytes per record; the fast path is [`Decoder::decode_compact`], whose table
    /// gives the same rows through [`ZoneTable::to_records`]). On error, `out` holds every
    /// record before the bad one and the state is as after the last good record.
    pub fn decode(&mut self, bytes: &[u8], out: &mut Records) -> Result<Stop, DecodeError> {
        out.reserve(bytes.len() / wire::SHORT_ZONE_BYTES as usize + 1);
        let mut i = 0usize;
        let mut reference = self.reference;
        let mut run = self.run;
        let result = loop {
            // A short zone, read with one 8-byte load while 8 bytes remain.
            if let Some(q) = bytes.get(i..).and_then(|b| b.first_chunk::<8>()) {
                let q = u64::from_le_bytes(*q);
                let h1 = (q >> 16) as u16;
                if h1 & 0x8000 == 0 {
                    let Some(end) = reference
                        .checked_add(((q >> 32) & 0xFFFF).wrapping_sub(reference) & 0xFFFF)
                    else {
                        break Err(DecodeError {
                            at: i,
                            kind: WireError::Overflow,
                        });
                    };
                    let duration = h1 as u64;
                    if duration > end {
                        break Err(DecodeError {
                            at: i,
                            kind: WireError::Time,
                        });
                    }
                    reference = end;
                    out.push(RecordKind::Zone, q as u16, end - duration, end, 0, 0, run);
                    i += 6;
                    continue;
                }
            }
            let rest = &bytes[i.min(bytes.len())..];
            if rest.len() < 4 {
                break Ok(if rest.is_empty() {
                    Stop::End
                } else {
                    Stop::Short { at: i }
                });
            }
            match decode_one(rest, reference) {
                Ok(None) => break Ok(Stop::Pad { at: i }),
                Ok(Some((row, len))) => {
                    if row.kind == RecordKind::Run {
                        run = row.value as u32;
                    }
                    if row.kind != RecordKind::Loss {
                        reference = row.end;
                    }
                    out.push(
                        row.kind, row.site, row.start, row.end, row.value, row.count, run,
                    );
                    i += len;
                }
                Err(kind) => break Err(DecodeError { at: i, kind }),
            }
        };
        self.reference = reference;
        self.run = run;
        result
    }

    /// Decodes the records at the start of `bytes`, appending them to `out` (the fast path).
    /// On error, `out` holds every record before the bad one and the state is as after the
    /// last good record.
    pub fn decode_compact(
        &mut self,
        bytes: &[u8],
        out: &mut ZoneTable,
    ) -> Result<Stop, DecodeError> {
        self.decode_compact_with(bytes, out, hot::simd_available())
    }

    /// [`Decoder::decode_compact`], with or without the eight-at-a-time loop (the tests run
    /// both).
    fn decode_compact_with(
        &mut self,
        bytes: &[u8],
        out: &mut ZoneTable,
        simd: bool,
    ) -> Result<Stop, DecodeError> {
        if out.is_empty() {
            out.first_run = self.run;
        }
        hot::decode(self, bytes, out, simd)
    }
}

#[inline]
fn le16(b: &[u8], at: usize) -> u64 {
    u16::from_le_bytes([b[at], b[at + 1]]) as u64
}

#[inline]
fn le32(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as u64
}

#[inline]
fn le64(b: &[u8], at: usize) -> u64 {
    le32(b, at) | le32(b, at + 4) << 32
}

/// Decodes one record that is not a complete short zone in an 8-byte window: an extended
/// record, a PAD (`None`), or a short zone near the end of the piece. `b.len() >= 4`.
#[cold]
pub(crate) fn decode_one(b: &[u8], reference: u64) -> Result<Option<(Slow, usize)>, WireError> {
    let (site, h1) = (le16(b, 0) as u16, le16(b, 2) as u16);
    let zone = |start: u64, end: u64, value: Option<u32>| Slow {
        kind: if value.is_some() {
            RecordKind::ValueZone
        } else {
            RecordKind::Zone
        },
        site,
        start,
        end,
        value: value.unwrap_or(0) as u64,
        count: 0,
    };
    let point = |kind: RecordKind, site: u16, t: u64, value: u64, count: u32| Slow {
        kind,
        site,
        start: t,
        end: t,
        value,
        count,
    };
    if h1 & 0x8000 == 0 {
        if b.len() < 6 {
            return Err(WireError::Truncated { need: 3 });
        }
        let end = wire::checked_extend(reference, le16(b, 4), 16).ok_or(WireError::Overflow)?;
        let duration = h1 as u64;
        if duration > end {
            return Err(WireError::Time);
        }
        return Ok(Some((zone(end - duration, end, None), 6)));
    }
    if h1 == PAD {
        return Ok(None);
    }
    let kind = Kind::from_u8((h1 >> 8) as u8 & 0x7F).ok_or(WireError::UnknownKind { h1 })?;
    let len = kind.bytes() as usize;
    if b.len() < len {
        return Err(WireError::Truncated { need: len / 2 });
    }
    let t32 =
        |at: usize| wire::checked_extend(reference, le32(b, at), 32).ok_or(WireError::Overflow);
    let t16 =
        |at: usize| wire::checked_extend(reference, le16(b, at), 16).ok_or(WireError::Overflow);
    let abs = |t: u64| {
        if t < reference {
            Err(WireError::Time)
        } else {
            Ok(t)
        }
    };
    let span = |duration: u64, end: u64| {
        if duration > end {
            Err(WireError::Time)
        } else {
            Ok(end - duration)
        }
    };
    let ordered = |start: u64, end: u64| {
        if start > end {
            Err(WireError::Time)
        } else {
            Ok(start)
        }
    };
    let row = match kind {
        Kind::Zone32 => {
            let end = t32(8)?;
            zone(span(le32(b, 4), end)?, end, None)
        }
        Kind::Zone64 => {
            let end = abs(le64(b, 12))?;
            zone(ordered(le64(b, 4), end)?, end, None)
        }
        Kind::ValueZone32 => {
            let end = t32(12)?;
            zone(span(le32(b, 8), end)?, end, Some(le32(b, 4) as u32))
        }
        Kind::ValueZone64 => {
            let end = abs(le64(b, 16))?;
            zone(ordered(le64(b, 8), end)?, end, Some(le32(b, 4) as u32))
        }
        Kind::Event32 => point(RecordKind::Event, site, t32(4)?, 0, 0),
        Kind::Event64 => point(RecordKind::Event, site, abs(le64(b, 4))?, 0, 0),
        Kind::Data32 => point(RecordKind::Data, site, t32(12)?, le64(b, 4), 0),
        Kind::Data64 => point(RecordKind::Data, site, abs(le64(b, 12))?, le64(b, 4), 0),
        Kind::Sum => point(
            RecordKind::Sum,
            site,
            abs(le64(b, 16))?,
            le64(b, 8),
            le32(b, 4) as u32,
        ),
        Kind::Time => point(RecordKind::Time, 0, abs(le64(b, 4))?, 0, 0),
        Kind::Run => point(RecordKind::Run, 0, abs(le64(b, 8))?, le32(b, 4), 0),
        Kind::EventShort => point(RecordKind::Event, site, t16(4)?, 0, 0),
        Kind::DataShort32 => point(RecordKind::Data, site, t16(8)?, le32(b, 4), 0),
        Kind::DataShort => point(RecordKind::Data, site, t16(12)?, le64(b, 4), 0),
        Kind::ValueZoneShort => {
            let end = t16(10)?;
            zone(span(le16(b, 8), end)?, end, Some(le32(b, 4) as u32))
        }
        Kind::DataShort32TimeFirst => point(RecordKind::Data, site, t16(4)?, le32(b, 6), 0),
        Kind::DataShortTimeFirst => point(RecordKind::Data, site, t16(4)?, le64(b, 6), 0),
        Kind::ValueZoneShortDurationFirst => {
            let end = t16(10)?;
            zone(span(le16(b, 4), end)?, end, Some(le32(b, 6) as u32))
        }
        Kind::Loss => Slow {
            kind: RecordKind::Loss,
            site: 0,
            start: le64(b, 16),
            end: le64(b, 24),
            value: le32(b, 8) | le32(b, 12) << 32,
            count: le32(b, 4) as u32,
        },
    };
    Ok(Some((row, len)))
}
