//! Runs of short zones eight at a time with AVX2 (x86-64 only; the caller checks the CPU).
//!
//! Eight short zones are 48 bytes, 24 halfwords `[site, duration, end16]` x 8. Three 16-byte
//! loads and nine byte shuffles split them into three vectors of eight halfwords: the sites
//! (stored as they are), the durations (their top bits say whether all eight are short
//! zones; widened to 32 bits and stored) and the `end16`s. An end's increment over the
//! previous one is `end16 - previous end16` modulo 2^16, which 16-bit lanes compute by
//! themselves; a prefix sum of the eight increments (widened to 32 bits) added to the time
//! before the block gives the eight 64-bit ends. No branch depends on the data except the
//! one that leaves the loop.
//!
//! If the block holds another record, the zones before it are kept (all eight lanes were
//! stored into spare capacity; only those count). A 32-bit zone, event or timestamped data
//! (the records that most often come between short zones) is taken here and the loop goes
//! on; anything else, and any error, is left to the caller. So is a time within a block's
//! increments of `u64::MAX` (where an end could wrap: the caller's checked step reports it).

use super::compact::{Extra, LONG};
use super::hot::{at_or_after, Time, EVENT32, ZONE32};
use super::RecordKind;
use std::arch::x86_64::*;
use ttprof_rt::wire::Kind;

/// `h1` of 32-bit timestamped data (`[site, h1, data: u64, time: u32]`).
const DATA32: u64 = Kind::Data32.header() as u64;

/// Bytes of eight short zones, and how far past a block's start the loads reach.
const BLOCK: usize = 48;

/// The latest time before a block at which its eight end increments (each below 2^16)
/// cannot pass `u64::MAX`; the 32-bit record after a partial block is checked by itself.
const HIGHEST: u64 = u64::MAX - 8 * 0xFFFF;

/// `pshufb` masks: for each output (sites, durations, ends) and each source vector (bytes
/// 0-15, 16-31, 32-47 of the block), the source bytes of each output halfword, or 0x80.
const fn masks() -> [[[u8; 16]; 3]; 3] {
    let mut m = [[[0x80u8; 16]; 3]; 3];
    let mut field = 0;
    while field < 3 {
        let mut zone = 0;
        while zone < 8 {
            let hw = 3 * zone + field;
            let (src, local) = (hw / 8, hw % 8);
            m[field][src][2 * zone] = (2 * local) as u8;
            m[field][src][2 * zone + 1] = (2 * local + 1) as u8;
            zone += 1;
        }
        field += 1;
    }
    m
}

const MASKS: [[[u8; 16]; 3]; 3] = masks();

#[inline(always)]
unsafe fn gather(field: usize, a: __m128i, b: __m128i, c: __m128i) -> __m128i {
    let m = |s: usize| _mm_loadu_si128(MASKS[field][s].as_ptr().cast());
    _mm_or_si128(
        _mm_or_si128(_mm_shuffle_epi8(a, m(0)), _mm_shuffle_epi8(b, m(1))),
        _mm_shuffle_epi8(c, m(2)),
    )
}

/// The columns' spare slots a decode writes into: each pointer is a column's first spare
/// slot, `room` slots each; `row_base` is the table row of slot 0.
pub(super) struct Slots {
    pub ends: *mut u64,
    pub durations: *mut u32,
    pub sites: *mut u16,
    pub room: usize,
    pub(crate) row_base: usize,
}

#[inline(always)]
fn load<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..).and_then(|b| b.first_chunk::<N>()).copied()
}

/// Decodes short zones eight at a time, and the 32-bit zones and events between them, from
/// `bytes[i..]` into slots `written..` of `slots` (events also get their `extra` entry).
/// Returns the position after the last record taken and the number of rows written; stops
/// at any other record, when fewer than 48 bytes or 8 slots remain, and at a time that
/// could wrap (see [`HIGHEST`]).
///
/// # Safety
/// The CPU supports AVX2; `slots` points at `slots.room` writable elements per column.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn short_zones(
    bytes: &[u8],
    mut i: usize,
    t: &mut Time,
    slots: &Slots,
    extra: &mut Vec<Extra>,
    mut written: usize,
) -> (usize, usize) {
    let Slots {
        ends,
        durations,
        sites,
        room,
        row_base,
    } = *slots;
    let first = written;
    // A start before cycle 0 is possible only while the end is below 2^15.
    if t.end < 1 << 15 {
        return (i, 0);
    }
    // The only value carried from block to block is the time (one addition); the previous
    // block's `end16`s are data. Both stay in registers.
    let mut end = t.end;
    let mut previous = _mm_set1_epi16(t.lo as u16 as i16);
    while i + BLOCK <= bytes.len() && written + 8 <= room && end <= HIGHEST {
        let p = bytes.as_ptr().add(i);
        let (a, b, c) = (
            _mm_loadu_si128(p.cast()),
            _mm_loadu_si128(p.add(16).cast()),
            _mm_loadu_si128(p.add(32).cast()),
        );
        let s = gather(0, a, b, c);
        let d = gather(1, a, b, c);
        let lo = gather(2, a, b, c);
        // Top bit of each duration halfword (the odd bytes): another record.
        let other = _mm_movemask_epi8(d) as u32 & 0xAAAA;
        // Increments modulo 2^16, then their prefix sums in 32-bit lanes.
        let increments = _mm_sub_epi16(lo, _mm_alignr_epi8(lo, previous, 14));
        let mut v = _mm256_cvtepu16_epi32(increments);
        v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
        v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
        let low_total = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(3));
        v = _mm256_add_epi32(
            v,
            _mm256_blend_epi32(_mm256_setzero_si256(), low_total, 0xF0),
        );
        let base = _mm256_set1_epi64x(end as i64);
        let e0 = _mm256_add_epi64(base, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
        let e1 = _mm256_add_epi64(base, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
        _mm256_storeu_si256(ends.add(written).cast(), e0);
        _mm256_storeu_si256(ends.add(written + 4).cast(), e1);
        _mm256_storeu_si256(durations.add(written).cast(), _mm256_cvtepu16_epi32(d));
        _mm_storeu_si128(sites.add(written).cast(), s);
        if other == 0 {
            end += _mm256_extract_epi32(v, 7) as u32 as u64;
            previous = lo;
            written += 8;
            i += BLOCK;
            continue;
        }
        // Keep the zones before the other record.
        let n = (other.trailing_zeros() / 2) as usize;
        if n > 0 {
            let last = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(n as i32 - 1));
            end += _mm256_cvtsi256_si32(last) as u32 as u64;
        }
        written += n;
        i += 6 * n;
        // Then the record itself, if it is a 32-bit zone or event (`written < room`: the
        // block had room for eight rows and took at most seven).
        let Some(q) = load::<8>(bytes, i).map(u64::from_le_bytes) else {
            break;
        };
        let (time, duration, len) = match (q >> 16) & 0xFFFF {
            ZONE32 if (q >> 32) as u32 != LONG => {
                let Some(low) = load::<4>(bytes, i + 8).map(u32::from_le_bytes) else {
                    break;
                };
                // An end past u64::MAX, or a start before cycle 0: the caller reports it.
                let Some(e) = at_or_after(end, low) else {
                    break;
                };
                if (q >> 32) > e {
                    break;
                }
                (e, (q >> 32) as u32, 12)
            }
            DATA32 => {
                let (Some(value), Some(low)) = (load::<8>(bytes, i + 4), load::<4>(bytes, i + 12))
                else {
                    break;
                };
                let Some(time) = at_or_after(end, u32::from_le_bytes(low)) else {
                    break;
                };
                extra.push(Extra {
                    row: (row_base + written) as u64,
                    kind: RecordKind::Data,
                    count: 0,
                    value: u64::from_le_bytes(value),
                    start: time,
                });
                (time, 0, 16)
            }
            EVENT32 => {
                let Some(time) = at_or_after(end, (q >> 32) as u32) else {
                    break;
                };
                extra.push(Extra {
                    row: (row_base + written) as u64,
                    kind: RecordKind::Event,
                    count: 0,
                    value: 0,
                    start: time,
                });
                (time, 0, 8)
            }
            _ => break,
        };
        ends.add(written).write(time);
        durations.add(written).write(duration);
        sites.add(written).write(q as u16);
        written += 1;
        i += len;
        end = time;
        previous = _mm_set1_epi16(end as u16 as i16);
    }
    t.end = end;
    t.lo = end & 0xFFFF;
    (i, written - first)
}
