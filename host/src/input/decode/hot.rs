//! The compact decoder's loop: ring bytes straight into the columns of a [`ZoneTable`].
//!
//! Room for every row the bytes can hold (one per 6 bytes) is reserved once per call, and
//! the dense columns are written through their spare capacity, committed once at the end:
//! no allocation and no bounds checks per zone.
//!
//! A short zone is 6 bytes `[site, duration, end16]` with the top bit of `duration` clear
//! (`ttprof_rt::wire`). Runs of them go four at a time: four unaligned 8-byte loads, one
//! test that all four are short zones, then arithmetic and stores into exact chunks of the
//! columns. The time dependency chain is one addition per zone: an end's increment
//! `(end16 - previous end16) mod 2^16` depends only on the data. What a block cannot take
//! (another record among the four, fewer than 26 bytes left, or times so close to cycle 0
//! that a start could fall before it, or so close to `u64::MAX` that an end could wrap)
//! goes one zone at a time through the checked step,
//! which also takes 32-bit zones (plain rows too) and 32-bit events; any other record goes
//! through the general decoder (`decode_one`) and the side tables, without leaving the loop.
//!
//! On x86-64 with AVX2 the eight-at-a-time loop of [`super::simd`] runs first, at each
//! step; this loop then takes what it leaves (and everything on other CPUs).
//!
//! Measured (decode-bench, 64 MiB streams): this scalar loop alone decodes about 1.4 ns per
//! short zone, and each record of another kind costs tens of cycles more (mostly the
//! mispredicted branch that leaves the block loop); with the vector loop, about 0.9 ns per
//! short zone (memory-bound at that size) and a few ns per 32-bit zone, event or data.

use super::compact::{Extra, ZoneTable, LONG};
use super::{decode_one, DecodeError, Decoder, RecordKind, Stop};
use std::mem::MaybeUninit;
use ttprof_rt::wire::{DecodeError as WireError, Kind};

/// Bit 31 of a little-endian 8-byte load at a record: the top bit of its `h1`.
const EXTENDED: u64 = 0x8000_0000;

/// The times at which a block of four short zones needs no check: from 2^15 (below, a
/// start could fall before cycle 0: durations are below 2^15) to where four end increments
/// (each below 2^16) cannot pass `u64::MAX`.
const BLOCK_TIMES: std::ops::RangeInclusive<u64> = 1 << 15..=u64::MAX - 4 * 0xFFFF;

/// The decoder's time reference through a run of short zones.
pub(super) struct Time {
    pub end: u64,
    /// Low 16 bits of `end` (the previous record's `end16`).
    pub lo: u64,
}

impl Time {
    fn at(reference: u64) -> Time {
        Time {
            end: reference,
            lo: reference & 0xFFFF,
        }
    }

    #[inline(always)]
    fn next(&mut self, q: u64) -> u64 {
        let lo = (q >> 32) & 0xFFFF;
        self.end += lo.wrapping_sub(self.lo) & 0xFFFF;
        self.lo = lo;
        self.end
    }
}

#[inline(always)]
fn load(bytes: &[u8], at: usize) -> Option<u64> {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<8>())
        .map(|q| u64::from_le_bytes(*q))
}

/// Whether this CPU runs the eight-at-a-time loop ([`super::simd`]).
pub(super) fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Decodes `bytes` into `out` (see `Decoder::decode_compact`), with the eight-at-a-time loop
/// if `simd`.
pub(super) fn decode(
    d: &mut Decoder,
    bytes: &[u8],
    out: &mut ZoneTable,
    simd: bool,
) -> Result<Stop, DecodeError> {
    // Every record is at least 6 bytes.
    let room = bytes.len() / 6 + 1;
    out.reserve(room);
    let base = out.len();
    let mut written = 0usize;
    let mut i = 0usize;
    let mut t = Time::at(d.reference);
    let result = loop {
        let (next, n, error) = short_zones(bytes, i, &mut t, out, base, written, room, simd);
        i = next;
        written += n;
        if let Some(kind) = error {
            break Err(DecodeError { at: i, kind });
        }
        let rest = &bytes[i.min(bytes.len())..];
        if rest.len() < 4 {
            break Ok(if rest.is_empty() {
                Stop::End
            } else {
                Stop::Short { at: i }
            });
        }
        match decode_one(rest, t.end) {
            Ok(None) => break Ok(Stop::Pad { at: i }),
            Ok(Some((row, len))) => {
                if row.kind == RecordKind::Run {
                    d.run = row.value as u32;
                }
                if row.kind != RecordKind::Loss {
                    t = Time::at(row.end);
                }
                let duration = out.side_tables(
                    (base + written) as u64,
                    row.kind,
                    row.start,
                    row.end,
                    row.value,
                    row.count,
                );
                // `written < room`: the rows so far took at least 6 bytes each, this one too.
                out.end.spare_capacity_mut()[written].write(row.end);
                out.duration.spare_capacity_mut()[written].write(duration);
                out.site.spare_capacity_mut()[written].write(row.site);
                written += 1;
                i += len;
            }
            Err(kind) => break Err(DecodeError { at: i, kind }),
        }
    };
    // SAFETY: the first `written` spare slots of each column were initialised, in order
    // (`written < room`, which `reserve` guaranteed).
    unsafe {
        out.end.set_len(base + written);
        out.duration.set_len(base + written);
        out.site.set_len(base + written);
    }
    d.reference = t.end;
    result
}

/// Decodes short zones from `bytes[i..]` into spare slots `written..room` of the columns
/// while at least 8 bytes remain and the next record is a short zone. Returns the position
/// after the last zone, the number of zones, and the error if a zone's start would fall
/// before cycle 0 or its end past `u64::MAX` (at the returned position).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn short_zones(
    bytes: &[u8],
    mut i: usize,
    t: &mut Time,
    out: &mut ZoneTable,
    base: usize,
    mut written: usize,
    room: usize,
    simd: bool,
) -> (usize, usize, Option<WireError>) {
    let first = written;
    let mut error = None;
    'outer: loop {
        #[cfg(target_arch = "x86_64")]
        if simd {
            let slots = super::simd::Slots {
                ends: out.end.spare_capacity_mut().as_mut_ptr().cast(),
                durations: out.duration.spare_capacity_mut().as_mut_ptr().cast(),
                sites: out.site.spare_capacity_mut().as_mut_ptr().cast(),
                room,
                row_base: base,
            };
            // SAFETY: `simd` is true only on a CPU with AVX2; each column has `room` spare
            // slots (`decode` reserved them).
            let (next, n) =
                unsafe { super::simd::short_zones(bytes, i, t, &slots, &mut out.extra, written) };
            i = next;
            written += n;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = simd;
        let ends = &mut out.end.spare_capacity_mut()[written..room];
        let durations = &mut out.duration.spare_capacity_mut()[written..room];
        let sites = &mut out.site.spare_capacity_mut()[written..room];
        // Four zones at a time.
        let blocks = ends
            .chunks_exact_mut(4)
            .zip(durations.chunks_exact_mut(4))
            .zip(sites.chunks_exact_mut(4));
        for ((e, d), s) in blocks {
            let (Some(q0), Some(q3)) = (load(bytes, i), load(bytes, i + 18)) else {
                break;
            };
            let (Some(q1), Some(q2)) = (load(bytes, i + 6), load(bytes, i + 12)) else {
                break;
            };
            // A start before cycle 0 is possible only while end < 2^15 (durations < 2^15);
            // an end past u64::MAX only within four increments of it.
            if (q0 | q1 | q2 | q3) & EXTENDED != 0 || !BLOCK_TIMES.contains(&t.end) {
                break;
            }
            let ends = [t.next(q0), t.next(q1), t.next(q2), t.next(q3)];
            put(e, d, s, ends, [q0, q1, q2, q3]);
            written += 4;
            i += 24;
        }
        // Then up to four single zones, checked.
        let ends = &mut out.end.spare_capacity_mut()[written..room];
        let durations = &mut out.duration.spare_capacity_mut()[written..room];
        let sites = &mut out.site.spare_capacity_mut()[written..room];
        let mut singles = 0;
        for ((e, d), s) in ends
            .iter_mut()
            .zip(durations.iter_mut())
            .zip(sites.iter_mut())
            .take(4)
        {
            let Some(q) = load(bytes, i) else {
                break 'outer;
            };
            if q & EXTENDED != 0 {
                // A 32-bit zone (a zone longer than 2^15 cycles, e.g. op level) is a plain
                // row too: take it here rather than through the general decoder.
                if (q >> 16) & 0xFFFF == EVENT32 {
                    // A point event: a row with its time and an extra entry.
                    let Some(low) = load32(bytes, i + 4) else {
                        break 'outer;
                    };
                    let Some(time) = at_or_after(t.end, low) else {
                        error = Some(WireError::Overflow);
                        break 'outer;
                    };
                    out.extra.push(Extra {
                        row: (base + written) as u64,
                        kind: RecordKind::Event,
                        count: 0,
                        value: 0,
                        start: time,
                    });
                    e.write(time);
                    d.write(0);
                    s.write(q as u16);
                    *t = Time::at(time);
                    written += 1;
                    singles += 1;
                    i += 8;
                    // Back to blocks: short zones follow most other records.
                    break;
                }
                match zone32(bytes, i, q, t) {
                    Some(Ok(end)) => {
                        e.write(end);
                        d.write((q >> 32) as u32);
                        s.write(q as u16);
                        *t = Time::at(end);
                        written += 1;
                        singles += 1;
                        i += 12;
                        break;
                    }
                    Some(Err(kind)) => {
                        error = Some(kind);
                        break 'outer;
                    }
                    None => break 'outer,
                }
            }
            let duration = (q >> 16) & 0x7FFF;
            let Some(end) = t
                .end
                .checked_add(((q >> 32) & 0xFFFF).wrapping_sub(t.lo) & 0xFFFF)
            else {
                error = Some(WireError::Overflow);
                break 'outer;
            };
            if duration > end {
                error = Some(WireError::Time);
                break 'outer;
            }
            e.write(t.next(q));
            d.write(duration as u32);
            s.write(q as u16);
            written += 1;
            singles += 1;
            i += 6;
        }
        if singles == 0 {
            break;
        }
    }
    (i, written - first, error)
}

/// `h1` of a 32-bit zone (`[site, h1, duration: u32, end: u32]`).
pub(super) const ZONE32: u64 = Kind::Zone32.header() as u64;
/// `h1` of a 32-bit event (`[site, h1, time: u32]`).
pub(super) const EVENT32: u64 = Kind::Event32.header() as u64;

/// The end of the 32-bit zone at `bytes[i..]` (whose first 8 bytes are `q`), or `None` if
/// it is another record, is cut short, or has a duration that needs the side table.
#[inline(always)]
fn zone32(bytes: &[u8], i: usize, q: u64, t: &Time) -> Option<Result<u64, WireError>> {
    if (q >> 16) & 0xFFFF != ZONE32 || (q >> 32) as u32 == LONG {
        return None;
    }
    let low = load32(bytes, i + 8)?;
    Some(match at_or_after(t.end, low) {
        None => Err(WireError::Overflow),
        Some(end) if (q >> 32) > end => Err(WireError::Time),
        Some(end) => Ok(end),
    })
}

/// The first time at or after `reference` whose low 32 bits are `low`, or `None` if it
/// would pass `u64::MAX`.
#[inline(always)]
pub(super) fn at_or_after(reference: u64, low: u32) -> Option<u64> {
    reference.checked_add(low.wrapping_sub(reference as u32) as u64)
}

#[inline(always)]
fn load32(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<4>())
        .map(|q| u32::from_le_bytes(*q))
}

/// Stores four zones, column by column (adjacent stores, which the compiler merges).
#[inline(always)]
fn put(
    e: &mut [MaybeUninit<u64>],
    d: &mut [MaybeUninit<u32>],
    s: &mut [MaybeUninit<u16>],
    ends: [u64; 4],
    q: [u64; 4],
) {
    for (slot, v) in e.iter_mut().zip(ends) {
        slot.write(v);
    }
    for (slot, q) in d.iter_mut().zip(q) {
        slot.write(((q >> 16) & 0x7FFF) as u32);
    }
    for (slot, q) in s.iter_mut().zip(q) {
        slot.write(q as u16);
    }
}
