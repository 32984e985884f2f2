//! A ring's payload stream (what a consumer drained, kept in the spool) decoded again into
//! its records.

use crate::decode::{DecodeError, Decoder, Records, Stop, ZoneTable};
use crate::issue::Issue;
use crate::readout::RingId;

/// Decodes a ring's payload stream (see [`super`]) into `table` (cleared first). A stream
/// that does not decode to its end is an error issue naming the ring and the byte; the rows
/// before it are kept.
pub fn decode_payload(id: RingId, bytes: &[u8], table: &mut ZoneTable) -> Option<Issue> {
    let mut d = Decoder::default();
    table.clear(d.run);
    let end = d.decode_compact(bytes, table);
    payload_issue(id, bytes.len(), end)
}

/// [`decode_payload`] into the rich [`Records`] directly: what a reader that wants the
/// records holds, without the compact table beside them while they are made (14 bytes a
/// zone more at the peak of a long ring, issue 41). The same rows (the decoders' tests
/// compare them) and the same issue.
pub fn decode_payload_records(id: RingId, bytes: &[u8]) -> (Records, Option<Issue>) {
    let mut records = Records::new();
    let end = Decoder::default().decode(bytes, &mut records);
    (records, payload_issue(id, bytes.len(), end))
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
