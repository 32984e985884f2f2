//! The decoder's hot loop: a run of short zones, straight into the compact table.
//!
//! A short zone is 6 bytes `[site, duration, end16]` with the top bit of `duration` clear
//! (`ttprof_rt::wire`). The loop reads 8 bytes at a time (so it runs while 8 bytes remain),
//! and stops at the first record that is not a short zone, leaving it to the general path.
//!
//! Per zone it does one unaligned load, a handful of ALU operations and three stores into
//! memory reserved up front: no allocation, no bounds checks on the output (each column's
//! spare capacity is iterated), and a time dependency chain of one addition: the end's
//! increment `(end16 - previous end16) mod 2^16` does not depend on the previous end, only
//! on the previous record's low bits, which for a run of short zones are in the data.

use super::compact::ZoneTable;
use ttprof_rt::wire::DecodeError as WireError;

/// Decodes short zones from `bytes[i..]` into `out` while at least 8 bytes remain and the
/// next record is a short zone. Returns the position after the last zone decoded and, if
/// decoding stopped at an impossible time (a start before cycle 0), that error (at the
/// returned position). `reference` is the decoder's time reference, updated.
#[inline(never)]
pub(super) fn short_zones(bytes: &[u8], mut i: usize, reference: &mut u64, out: &mut ZoneTable) -> (usize, Option<WireError>) {
    // Every record is at least 6 bytes, so this call adds at most len / 6 rows.
    let room = bytes.len().saturating_sub(i) / 6 + 1;
    out.reserve(room);
    let mut end = *reference;
    let mut prev_lo = end & 0xFFFF;
    let mut written = 0usize;
    let mut error = None;
    {
        let ends = &mut out.end.spare_capacity_mut()[..room];
        let durations = &mut out.duration.spare_capacity_mut()[..room];
        let sites = &mut out.site.spare_capacity_mut()[..room];
        for ((e, d), s) in ends.iter_mut().zip(durations.iter_mut()).zip(sites.iter_mut()) {
            let Some(q) = bytes.get(i..).and_then(|b| b.first_chunk::<8>()) else { break };
            let q = u64::from_le_bytes(*q);
            if q & 0x8000_0000 != 0 {
                break;
            }
            let lo = (q >> 32) & 0xFFFF;
            let next = end + (lo.wrapping_sub(prev_lo) & 0xFFFF);
            let duration = (q >> 16) & 0x7FFF;
            if duration > next {
                error = Some(WireError::Time);
                break;
            }
            end = next;
            prev_lo = lo;
            e.write(end);
            d.write(duration as u32);
            s.write(q as u16);
            written += 1;
            i += 6;
        }
    }
    let n = out.end.len() + written;
    // SAFETY: the loop initialised the first `written` spare slots of each column (`written`
    // is at most `room`, which `reserve` guaranteed).
    unsafe {
        out.end.set_len(n);
        out.duration.set_len(n);
        out.site.set_len(n);
    }
    *reference = end;
    (i, error)
}
