//! A ring's payload stream (what a consumer drained, kept in the spool) decoded again into
//! its records.

use super::Spool;
use crate::decode::{DecodeError, Decoder, Pieces, Records, Stop, ZoneTable};
use crate::error::Result;
use crate::issue::Issue;
use crate::readout::RingId;
use ttprof_rt::wire;

/// Decodes a ring's payload stream (see [`super`]) into `table` (cleared first). A stream
/// that does not decode to its end is an error issue naming the ring and the byte; the rows
/// before it are kept.
pub fn decode_payload(id: RingId, bytes: &[u8], table: &mut ZoneTable) -> Option<Issue> {
    let mut d = Decoder::default();
    table.clear(d.run);
    let end = d.decode_compact(bytes, table);
    payload_issue(id, bytes.len(), end)
}

/// [`decode_payload`] of ring `id`'s stream in `spool` into the rich [`Records`] directly:
/// what a reader that wants the records holds, without the compact table beside them while
/// they are made (14 bytes a zone), nor the stream whole (6 bytes a zone: it is read and
/// decoded a piece at a time), and with room for every record it can hold made once, not
/// grown by doubling (issue 41). The same rows (the decoders' tests compare them) and the
/// same issue.
pub fn decode_spooled_records(spool: &mut Spool, id: RingId) -> Result<(Records, Option<Issue>)> {
    let len = spool.len_of(id);
    let mut records = Records::new();
    records.reserve((len / wire::SHORT_ZONE_BYTES as u64) as usize + 2);
    let (mut d, mut pieces) = (Decoder::default(), Pieces::new());
    spool.read_pieces(id, &mut |piece| {
        pieces.feed(piece, |b| d.decode(b, &mut records));
    })?;
    Ok((records, payload_issue(id, len as usize, pieces.end())))
}

/// [`decode_spooled_records`] a piece at a time (a ring of any length, issue 41): the
/// records decoded are handed to `hand` whenever `rows` or more are held, and the rest at
/// the end (never an empty piece), so what is held is `rows` records plus a spool piece's.
/// The concatenated pieces are [`decode_spooled_records`]' records, with the same issue.
pub fn decode_spooled_in_pieces(
    spool: &mut Spool,
    id: RingId,
    rows: usize,
    hand: &mut dyn FnMut(Records),
) -> Result<Option<Issue>> {
    let len = spool.len_of(id);
    let mut records = Records::new();
    let (mut d, mut pieces) = (Decoder::default(), Pieces::new());
    spool.read_pieces(id, &mut |piece| {
        pieces.feed(piece, |b| d.decode(b, &mut records));
        if records.len() >= rows {
            hand(std::mem::take(&mut records));
        }
    })?;
    if !records.is_empty() {
        hand(records);
    }
    Ok(payload_issue(id, len as usize, pieces.end()))
}

/// The issue of a payload stream of `len` bytes that decoded to `end`.
fn payload_issue(id: RingId, len: usize, end: Result<Stop, DecodeError>) -> Option<Issue> {
    match end {
        Ok(Stop::End) => None,
        Ok(stop) => Some(Issue::error(
            Some(id.location()),
            format!("payload stream stops early ({stop:?}) of {len} bytes"),
        )),
        Err(e) => Some(
            Issue::error(
                Some(id.location()),
                format!("payload stream does not decode: {e}"),
            )
            .with_count((len - e.at) as u64),
        ),
    }
}
