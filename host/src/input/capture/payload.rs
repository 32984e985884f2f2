//! A ring's payload stream (what a consumer drained, kept in the spool) decoded again into
//! its records.

use crate::decode::{Decoder, Stop, ZoneTable};
use crate::issue::Issue;
use crate::readout::RingId;

/// Decodes a ring's payload stream (see [`super`]) into `table` (cleared first). A stream
/// that does not decode to its end is an error issue naming the ring and the byte; the rows
/// before it are kept.
pub fn decode_payload(id: RingId, bytes: &[u8], table: &mut ZoneTable) -> Option<Issue> {
    let mut d = Decoder::default();
    table.clear(d.run);
    match d.decode_compact(bytes, table) {
        Ok(Stop::End) => None,
        Ok(stop) => Some(Issue::error(
            Some(id.location()),
            format!(
                "payload stream stops early ({stop:?}) of {} bytes",
                bytes.len()
            ),
        )),
        Err(e) => Some(
            Issue::error(
                Some(id.location()),
                format!("payload stream does not decode: {e}"),
            )
            .with_count((bytes.len() - e.at) as u64),
        ),
    }
}
