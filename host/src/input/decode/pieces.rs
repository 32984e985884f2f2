//! A payload stream decoded a piece at a time, as it is read, never held whole (issue 41: a
//! ring's stream, 6 bytes a zone, was read whole beside the records it decodes to). A
//! record a piece cuts is carried into the next, so the rows, and how the stream ends, are
//! those of decoding it in one piece.

use super::{DecodeError, Stop};
use ttprof_rt::wire;

/// The state between pieces (see the module docs).
#[derive(Debug, Default)]
pub struct Pieces {
    /// The bytes of a record the last piece cut.
    carry: Vec<u8>,
    /// The carried bytes and the next piece, joined (its room kept from piece to piece).
    joined: Vec<u8>,
    /// Bytes given, and bytes decoded (the stream's offset of `carry`).
    total: u64,
    good: u64,
    /// How decoding stopped before the stream's end (a bad record or a pad: what follows
    /// is not decoded, as in one piece), at the stream's offsets.
    stopped: Option<Result<Stop, DecodeError>>,
    /// How the last piece ended when it cut a record (at the stream's offsets).
    cut: Option<Result<Stop, DecodeError>>,
}

impl Pieces {
    /// No piece yet.
    pub fn new() -> Pieces {
        Pieces::default()
    }

    /// Decodes the next `piece` (after what the last one cut) with `decode`, which decodes
    /// the records at the start of the bytes it is given and says how they end (as
    /// [`super::Decoder::decode`] does); returns the bytes decoded this time.
    pub fn feed<'a>(
        &'a mut self,
        piece: &'a [u8],
        decode: impl FnOnce(&[u8]) -> Result<Stop, DecodeError>,
    ) -> &'a [u8] {
        self.total += piece.len() as u64;
        if self.stopped.is_some() {
            return &[];
        }
        let bytes: &[u8] = if self.carry.is_empty() {
            piece
        } else {
            self.joined.clear();
            self.joined.extend_from_slice(&self.carry);
            self.joined.extend_from_slice(piece);
            &self.joined
        };
        let end = decode(bytes);
        let base = self.good as usize;
        let cut = |at: usize| bytes.len() - at < wire::MAX_RECORD_BYTES as usize;
        let (decoded, carried) = match end {
            Ok(Stop::End) => (bytes.len(), false),
            Ok(Stop::Short { at }) => (at, true),
            Err(e) if matches!(e.kind, wire::DecodeError::Truncated { .. }) && cut(e.at) => {
                (e.at, true)
            }
            Ok(Stop::Pad { at }) => (at, false),
            Err(e) => (e.at, false),
        };
        let shifted = match end {
            Ok(Stop::End) => Ok(Stop::End),
            Ok(Stop::Short { at }) => Ok(Stop::Short { at: base + at }),
            Ok(Stop::Pad { at }) => Ok(Stop::Pad { at: base + at }),
            Err(e) => Err(DecodeError {
                at: base + e.at,
                kind: e.kind,
            }),
        };
        self.good += decoded as u64;
        self.carry.clear();
        self.cut = None;
        if carried {
            self.carry.extend_from_slice(&bytes[decoded..]);
            self.cut = Some(shifted);
        } else if decoded < bytes.len() {
            self.stopped = Some(shifted);
        }
        &bytes[..decoded]
    }

    /// Bytes given so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes decoded so far.
    pub fn good(&self) -> u64 {
        self.good
    }

    /// How the stream ends, as decoding it in one piece would say (offsets in the stream).
    pub fn end(&self) -> Result<Stop, DecodeError> {
        self.stopped.or(self.cut).unwrap_or(Ok(Stop::End))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Decoder, Records};
    use crate::testing::Rng;
    use ttprof_rt::wire::{encode, Record};

    /// Zones short and long, events, data and runs, encoded, then `tail` (junk or a cut).
    fn stream(rng: &mut Rng, n: usize, tail: &[u8]) -> Vec<u8> {
        let (mut now, mut reference, mut bytes) = (1_000u64, 1_000u64, Vec::new());
        for k in 0..n {
            now += rng.below(70_000);
            let r = match rng.below(6) {
                0 => Record::Event { id: 3, time: now },
                1 => Record::Data {
                    id: 4,
                    time: now,
                    data: rng.below(u64::MAX) << rng.below(32),
                },
                2 => Record::Run {
                    run_id: k as u32,
                    time: now,
                },
                _ => Record::Zone {
                    id: 5,
                    end: now,
                    duration: rng.below(now.min(1 << 20)),
                    value: None,
                },
            };
            let e = encode(&r, reference).expect("times only grow");
            bytes.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
            reference = r.ref_time().unwrap_or(reference);
        }
        bytes.extend_from_slice(tail);
        bytes
    }

    /// Every way of cutting a stream into pieces gives the rows and the end of decoding it
    /// whole: pieces of every size from a byte up, a record cut at the stream's end, junk
    /// after it, a pad (fails when the carry is dropped: a record a piece cuts is lost).
    #[test]
    fn pieces_decode_as_one() {
        let mut rng = Rng::new(41);
        for tail in [
            &[][..],
            &[0x12, 0x34],
            &[0xFF; 9],
            &[0, 0, 0, 0, 1, 2, 3, 4],
        ] {
            let bytes = stream(&mut rng, 300, tail);
            let mut whole = Records::new();
            let end = Decoder::default().decode(&bytes, &mut whole);
            for size in [1, 2, 3, 5, 6, 7, 13, 64, 1000, bytes.len()] {
                let (mut d, mut rows, mut p) = (Decoder::default(), Records::new(), Pieces::new());
                let mut decoded = 0;
                for piece in bytes.chunks(size) {
                    decoded += p.feed(piece, |b| d.decode(b, &mut rows)).len();
                }
                assert_eq!(rows, whole, "pieces of {size}, tail {tail:?}");
                assert_eq!(p.end(), end, "pieces of {size}, tail {tail:?}");
                assert_eq!((p.total(), p.good()), (bytes.len() as u64, decoded as u64));
            }
        }
    }
}
