//! The ring encoding: what the runtime writes and the host decodes.
//!
//! A ring is a stream of little-endian 16-bit halfwords (multi-halfword integers too: the
//! low halfword first). Every record starts with two halfwords `h0, h1`:
//!
//! * `h1 & 0x8000 == 0`: a **short zone** (6 bytes) `[id, duration, end16]`. `duration < 2^15`
//!   cycles, `end16` is the low 16 bits of the end time.
//! * otherwise `h1 = 0x8000 | kind << 8 | aux` introduces an extended record of [`Kind`];
//!   `h0` is the site id for records that have one, else 0. `h1 == 0xFFFF` is [`PAD`]: the rest
//!   of the ring up to its end is unused and the stream continues at the ring's start. Fewer
//!   than 4 bytes before the end are skipped the same way without a `PAD`.
//!
//! **Time.** The decoder keeps `ref`, the 64-bit time of the previous timed record (see
//! [`Kind`]). A time carried in fewer than 64 bits is the smallest value `>= ref` with those
//! low bits, `t = ref + ((low - ref) mod 2^bits)`: exact, since the runtime writes a short
//! form only when it has proved it so, else the 64-bit form. A zone's start is `end -
//! duration`; records are in non-decreasing time order per ring. Times never wrap: a `t`
//! past `u64::MAX` or a start before cycle 0 is a decode error ([`DecodeError::Overflow`],
//! [`DecodeError::Time`]). See docs/design/ring-encoding.md.

/// Records with a site id carry it in `h0`; ids are the site's address in the ELF's
/// `.ttprof_sites` section (see `riscv_linker::script`).
pub type SiteId = u16;

/// Short zones require `duration < SHORT_LIMIT` and `end - ref < 2^16`; the runtime's hot
/// path proves both by requiring `end - anchor < SHORT_LIMIT` (see `producer`).
pub const SHORT_LIMIT: u32 = 1 << 15;

/// Bytes of a short zone.
pub const SHORT_ZONE_BYTES: u32 = 6;

/// Bytes the write limit promises: `tp < gp` means a record of this many bytes fits without
/// a wrap, so no record routine checks its own length (the largest they write, 64-bit data,
/// is 14 bytes; the anchor's slow path writes up to 16, a 32-bit-time datum or value zone).
/// The ring's last few bytes before a wrap go through the general slow path instead.
pub const HOT_ROOM: u32 = 16;

/// `h1` of a pad record.
pub const PAD: u16 = 0xFFFF;

/// Extended record kinds (bits 14..8 of `h1`). Sizes are in bytes including `h0, h1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// `id; duration: u32; end: u32` (12 bytes). Sets `ref = end`.
    Zone32 = 0x01,
    /// `id; start: u64; end: u64` (20 bytes). Sets `ref = end`.
    Zone64 = 0x02,
    /// `id; value: u32; duration: u32; end: u32` (16 bytes). Sets `ref = end`.
    ValueZone32 = 0x03,
    /// `id; value: u32; start: u64; end: u64` (24 bytes). Sets `ref = end`.
    ValueZone64 = 0x04,
    /// `id; time: u32` (8 bytes): a point event. Sets `ref = time`.
    Event32 = 0x05,
    /// `id; time: u64` (12 bytes). Sets `ref = time`.
    Event64 = 0x06,
    /// `id; data: u64; time: u32` (16 bytes): timestamped data. Sets `ref = time`.
    Data32 = 0x07,
    /// `id; data: u64; time: u64` (20 bytes). Sets `ref = time`.
    Data64 = 0x08,
    /// `id; count: u32; total: u64; time: u64` (24 bytes): a sum zone's total over `count`
    /// measurements, emitted once at kernel exit. Sets `ref = time`.
    Sum = 0x09,
    /// `0; time: u64` (12 bytes): a time anchor. Sets `ref = time`.
    Time = 0x0A,
    /// `0; run_id: u32; time: u64` (16 bytes): a launch of program `run_id` starts here;
    /// every record up to the next `Run` belongs to it. Sets `ref = time`.
    Run = 0x0B,
    /// `0; count: u32; first_run: u32; last_run: u32; first: u64; last: u64` (32 bytes):
    /// `count` records were dropped because the ring was full, between times `first` (in run
    /// `first_run`) and `last` (in run `last_run`). Does not change `ref`.
    Loss = 0x0C,
    /// `id; time16` (6 bytes): a point event whose time is within 2^16 cycles of `ref`
    /// (the runtime's hot path). Sets `ref = time`.
    EventShort = 0x0D,
    /// `id; data: u32; time16` (10 bytes): timestamped data that fits 32 bits, time within
    /// 2^16 cycles of `ref`. Sets `ref = time`.
    DataShort32 = 0x0E,
    /// `id; data: u64; time16` (14 bytes): timestamped data, time within 2^16 cycles of
    /// `ref`. Sets `ref = time`.
    DataShort = 0x0F,
    /// `id; value: u32; duration16; end16` (12 bytes): a value zone shorter than 2^16 cycles
    /// whose end is within 2^16 cycles of `ref`. Sets `ref = end`.
    ValueZoneShort = 0x10,
    /// `id; time16; data: u32` (10 bytes): [`Kind::DataShort32`] with the time first, the
    /// form the hot path writes at a write pointer 2 mod 4, so that the datum is one aligned
    /// word store. Sets `ref = time`.
    DataShort32TimeFirst = 0x11,
    /// `id; time16; data: u64` (14 bytes): [`Kind::DataShort`] with the time first (as
    /// [`Kind::DataShort32TimeFirst`]). Sets `ref = time`.
    DataShortTimeFirst = 0x12,
    /// `id; duration16; value: u32; end16` (12 bytes): [`Kind::ValueZoneShort`] with the
    /// duration first (as [`Kind::DataShort32TimeFirst`]). Sets `ref = end`.
    ValueZoneShortDurationFirst = 0x13,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 19] = [
        Kind::Zone32,
        Kind::Zone64,
        Kind::ValueZone32,
        Kind::ValueZone64,
        Kind::Event32,
        Kind::Event64,
        Kind::Data32,
        Kind::Data64,
        Kind::Sum,
        Kind::Time,
        Kind::Run,
        Kind::Loss,
        Kind::EventShort,
        Kind::DataShort32,
        Kind::DataShort,
        Kind::ValueZoneShort,
        Kind::DataShort32TimeFirst,
        Kind::DataShortTimeFirst,
        Kind::ValueZoneShortDurationFirst,
    ];

    /// The kind whose code is `k`; `None` for an unknown code.
    pub const fn from_u8(k: u8) -> Option<Kind> {
        match k {
            0x01 => Some(Kind::Zone32),
            0x02 => Some(Kind::Zone64),
            0x03 => Some(Kind::ValueZone32),
            0x04 => Some(Kind::ValueZone64),
            0x05 => Some(Kind::Event32),
            0x06 => Some(Kind::Event64),
            0x07 => Some(Kind::Data32),
            0x08 => Some(Kind::Data64),
            0x09 => Some(Kind::Sum),
            0x0A => Some(Kind::Time),
            0x0B => Some(Kind::Run),
            0x0C => Some(Kind::Loss),
            0x0D => Some(Kind::EventShort),
            0x0E => Some(Kind::DataShort32),
            0x0F => Some(Kind::DataShort),
            0x10 => Some(Kind::ValueZoneShort),
            0x11 => Some(Kind::DataShort32TimeFirst),
            0x12 => Some(Kind::DataShortTimeFirst),
            0x13 => Some(Kind::ValueZoneShortDurationFirst),
            _ => None,
        }
    }

    /// Total size in bytes, including `h0` and `h1`.
    pub const fn bytes(self) -> u32 {
        match self {
            Kind::Zone32 => 12,
            Kind::Zone64 => 20,
            Kind::ValueZone32 => 16,
            Kind::ValueZone64 => 24,
            Kind::Event32 => 8,
            Kind::Event64 => 12,
            Kind::Data32 => 16,
            Kind::Data64 => 20,
            Kind::Sum => 24,
            Kind::Time => 12,
            Kind::Run => 16,
            Kind::Loss => 32,
            Kind::EventShort => 6,
            Kind::DataShort32 => 10,
            Kind::DataShort => 14,
            Kind::ValueZoneShort => 12,
            Kind::DataShort32TimeFirst => 10,
            Kind::DataShortTimeFirst => 14,
            Kind::ValueZoneShortDurationFirst => 12,
        }
    }

    /// `h1` for this kind.
    pub const fn header(self) -> u16 {
        0x8000 | (self as u16) << 8
    }

    /// Whether decoding this record moves the time reference.
    pub const fn sets_ref(self) -> bool {
        !matches!(self, Kind::Loss)
    }
}

/// The largest record, in bytes.
pub const MAX_RECORD_BYTES: u32 = 32;

/// One record, as plain data. The runtime encodes these in its slow paths; the host's
/// decoder produces them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A zone of `duration` cycles ending at `end` (short, 32- or 64-bit form).
    Zone {
        /// The zone's site.
        id: SiteId,
        /// Cycle counter when the zone closed.
        end: u64,
        /// Cycles from open to close.
        duration: u64,
        /// The value of a value zone (`value_zone!`), `None` for a plain zone.
        value: Option<u32>,
    },
    /// An event (`event!`) at `time`.
    Event {
        /// The event's site.
        id: SiteId,
        /// Cycle counter when it happened.
        time: u64,
    },
    /// A 64-bit datum (`data!`, `DeviceTimestampedData`) recorded at `time`.
    Data {
        /// The datum's site.
        id: SiteId,
        /// Cycle counter when it was recorded.
        time: u64,
        /// The value.
        data: u64,
    },
    /// A sum zone's total over one launch (`sum_zone!`), flushed at `time`.
    Sum {
        /// The sum zone's site.
        id: SiteId,
        /// Cycle counter at the flush.
        time: u64,
        /// Measurements summed.
        count: u32,
        /// Their cycles, summed.
        total: u64,
    },
    /// A full 64-bit time that resets the decoder's reference (no site).
    Time {
        /// Cycle counter.
        time: u64,
    },
    /// The start of a launch: the run id the host gave it.
    Run {
        /// The launch's run id.
        run_id: u32,
        /// Cycle counter at the launch.
        time: u64,
    },
    /// Records dropped because the ring was full (see [`Kind::Loss`]).
    Loss {
        /// Records dropped.
        count: u32,
        /// Run id of the first dropped record.
        first_run: u32,
        /// Run id of the last dropped record.
        last_run: u32,
        /// Time of the first dropped record.
        first: u64,
        /// Time of the last dropped record.
        last: u64,
    },
}

impl Record {
    /// The time this record sets the decoder's `ref` to, if any.
    pub const fn ref_time(&self) -> Option<u64> {
        match *self {
            Record::Zone { end, .. } => Some(end),
            Record::Event { time, .. }
            | Record::Data { time, .. }
            | Record::Sum { time, .. }
            | Record::Time { time }
            | Record::Run { time, .. } => Some(time),
            Record::Loss { .. } => None,
        }
    }
}

/// A record encoded as halfwords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// The halfwords; only the first `len` are the record.
    pub halves: [u16; (MAX_RECORD_BYTES / 2) as usize],
    /// Halfwords in use.
    pub len: u8,
}

impl Encoded {
    /// The record's halfwords.
    pub fn as_slice(&self) -> &[u16] {
        &self.halves[..self.len as usize]
    }

    /// The record's size in bytes.
    pub const fn bytes(&self) -> u32 {
        self.len as u32 * 2
    }
}

struct Builder {
    out: Encoded,
}

impl Builder {
    const fn new() -> Builder {
        Builder {
            out: Encoded {
                halves: [0; (MAX_RECORD_BYTES / 2) as usize],
                len: 0,
            },
        }
    }
    fn h(&mut self, v: u16) -> &mut Self {
        self.out.halves[self.out.len as usize] = v;
        self.out.len += 1;
        self
    }
    fn w(&mut self, v: u32) -> &mut Self {
        self.h(v as u16).h((v >> 16) as u16)
    }
    fn d(&mut self, v: u64) -> &mut Self {
        self.w(v as u32).w((v >> 32) as u32)
    }
}

/// Encodes `r` in the smallest form the decoder can read exactly, given the decoder's time
/// reference `reference` just before this record. Returns `None` for a record that cannot be
/// encoded after `reference` (a time earlier than `reference`, or a start before time 0).
pub fn encode(r: &Record, reference: u64) -> Option<Encoded> {
    if let Some(t) = r.ref_time() {
        if t < reference {
            return None;
        }
    }
    let gap = |t: u64| t - reference;
    let mut b = Builder::new();
    match *r {
        Record::Zone {
            id,
            end,
            duration,
            value,
        } => {
            if duration > end {
                return None;
            }
            match value {
                None if duration < SHORT_LIMIT as u64 && gap(end) < 1 << 16 => {
                    b.h(id).h(duration as u16).h(end as u16);
                }
                None if duration <= u32::MAX as u64 && gap(end) <= u32::MAX as u64 => {
                    b.h(id)
                        .h(Kind::Zone32.header())
                        .w(duration as u32)
                        .w(end as u32);
                }
                None => {
                    b.h(id).h(Kind::Zone64.header()).d(end - duration).d(end);
                }
                Some(v) if duration < 1 << 16 && gap(end) < 1 << 16 => {
                    b.h(id)
                        .h(Kind::ValueZoneShort.header())
                        .w(v)
                        .h(duration as u16)
                        .h(end as u16);
                }
                Some(v) if duration <= u32::MAX as u64 && gap(end) <= u32::MAX as u64 => {
                    b.h(id)
                        .h(Kind::ValueZone32.header())
                        .w(v)
                        .w(duration as u32)
                        .w(end as u32);
                }
                Some(v) => {
                    b.h(id)
                        .h(Kind::ValueZone64.header())
                        .w(v)
                        .d(end - duration)
                        .d(end);
                }
            }
        }
        Record::Event { id, time } if gap(time) < 1 << 16 => {
            b.h(id).h(Kind::EventShort.header()).h(time as u16);
        }
        Record::Event { id, time } if gap(time) <= u32::MAX as u64 => {
            b.h(id).h(Kind::Event32.header()).w(time as u32);
        }
        Record::Event { id, time } => {
            b.h(id).h(Kind::Event64.header()).d(time);
        }
        Record::Data { id, time, data } if gap(time) < 1 << 16 && data <= u32::MAX as u64 => {
            b.h(id)
                .h(Kind::DataShort32.header())
                .w(data as u32)
                .h(time as u16);
        }
        Record::Data { id, time, data } if gap(time) < 1 << 16 => {
            b.h(id).h(Kind::DataShort.header()).d(data).h(time as u16);
        }
        Record::Data { id, time, data } if gap(time) <= u32::MAX as u64 => {
            b.h(id).h(Kind::Data32.header()).d(data).w(time as u32);
        }
        Record::Data { id, time, data } => {
            b.h(id).h(Kind::Data64.header()).d(data).d(time);
        }
        Record::Sum {
            id,
            time,
            count,
            total,
        } => {
            b.h(id).h(Kind::Sum.header()).w(count).d(total).d(time);
        }
        Record::Time { time } => {
            b.h(0).h(Kind::Time.header()).d(time);
        }
        Record::Run { run_id, time } => {
            b.h(0).h(Kind::Run.header()).w(run_id).d(time);
        }
        Record::Loss {
            count,
            first_run,
            last_run,
            first,
            last,
        } => {
            b.h(0)
                .h(Kind::Loss.header())
                .w(count)
                .w(first_run)
                .w(last_run)
                .d(first)
                .d(last);
        }
    }
    Some(b.out)
}

/// Why a record could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The record runs past the end of the given halfwords (`need` halfwords).
    Truncated {
        /// Halfwords the record needs.
        need: usize,
    },
    /// `h1` names no known kind.
    UnknownKind {
        /// The halfword that should name a kind.
        h1: u16,
    },
    /// A 64-bit time earlier than the reference, or a start after its end (a zone's
    /// duration longer than its end: a start before cycle 0).
    Time,
    /// A time carried in 16 or 32 bits that has no value at or after the reference below
    /// 2^64: the reference is so close to `u64::MAX` that the time would wrap.
    Overflow,
}

/// What [`decode`] found at the start of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A record and its length in halfwords.
    Record(Record, usize),
    /// A [`PAD`]: the rest of the ring is unused.
    Pad,
}

/// Decodes the record at the start of `h`, given the decoder's `reference` (the reference
/// decoder: the host's fast decoder must agree with it).
pub fn decode(h: &[u16], reference: u64) -> Result<Decoded, DecodeError> {
    let get = |n: usize| -> Result<&[u16], DecodeError> {
        h.get(..n).ok_or(DecodeError::Truncated { need: n })
    };
    let w = |s: &[u16], i: usize| s[i] as u64 | (s[i + 1] as u64) << 16;
    let d = |s: &[u16], i: usize| w(s, i) | w(s, i + 2) << 32;
    let h2 = get(2)?;
    let (id, h1) = (h2[0], h2[1]);
    if h1 & 0x8000 == 0 {
        let s = get(3)?;
        let end = checked_extend(reference, s[2] as u64, 16).ok_or(DecodeError::Overflow)?;
        let duration = h1 as u64;
        if duration > end {
            return Err(DecodeError::Time);
        }
        return Ok(Decoded::Record(
            Record::Zone {
                id,
                end,
                duration,
                value: None,
            },
            3,
        ));
    }
    if h1 == PAD {
        return Ok(Decoded::Pad);
    }
    let kind = Kind::from_u8((h1 >> 8) as u8 & 0x7F).ok_or(DecodeError::UnknownKind { h1 })?;
    let n = (kind.bytes() / 2) as usize;
    let s = get(n)?;
    let t32 = |i: usize| checked_extend(reference, w(s, i), 32).ok_or(DecodeError::Overflow);
    let t16 = |i: usize| checked_extend(reference, s[i] as u64, 16).ok_or(DecodeError::Overflow);
    let abs = |t: u64| {
        if t < reference {
            Err(DecodeError::Time)
        } else {
            Ok(t)
        }
    };
    let r = match kind {
        Kind::Zone32 => Record::Zone {
            id,
            end: t32(4)?,
            duration: w(s, 2),
            value: None,
        },
        Kind::Zone64 => {
            let (start, end) = (d(s, 2), abs(d(s, 6))?);
            if start > end {
                return Err(DecodeError::Time);
            }
            Record::Zone {
                id,
                end,
                duration: end - start,
                value: None,
            }
        }
        Kind::ValueZone32 => Record::Zone {
            id,
            end: t32(6)?,
            duration: w(s, 4),
            value: Some(w(s, 2) as u32),
        },
        Kind::ValueZone64 => {
            let (start, end) = (d(s, 4), abs(d(s, 8))?);
            if start > end {
                return Err(DecodeError::Time);
            }
            Record::Zone {
                id,
                end,
                duration: end - start,
                value: Some(w(s, 2) as u32),
            }
        }
        Kind::Event32 => Record::Event { id, time: t32(2)? },
        Kind::Event64 => Record::Event {
            id,
            time: abs(d(s, 2))?,
        },
        Kind::Data32 => Record::Data {
            id,
            data: d(s, 2),
            time: t32(6)?,
        },
        Kind::Data64 => Record::Data {
            id,
            data: d(s, 2),
            time: abs(d(s, 6))?,
        },
        Kind::Sum => Record::Sum {
            id,
            count: w(s, 2) as u32,
            total: d(s, 4),
            time: abs(d(s, 8))?,
        },
        Kind::Time => Record::Time {
            time: abs(d(s, 2))?,
        },
        Kind::Run => Record::Run {
            run_id: w(s, 2) as u32,
            time: abs(d(s, 4))?,
        },
        Kind::Loss => Record::Loss {
            count: w(s, 2) as u32,
            first_run: w(s, 4) as u32,
            last_run: w(s, 6) as u32,
            first: d(s, 8),
            last: d(s, 12),
        },
        Kind::EventShort => Record::Event { id, time: t16(2)? },
        Kind::DataShort32 => Record::Data {
            id,
            data: w(s, 2),
            time: t16(4)?,
        },
        Kind::DataShort => Record::Data {
            id,
            data: d(s, 2),
            time: t16(6)?,
        },
        Kind::ValueZoneShort => Record::Zone {
            id,
            end: t16(5)?,
            duration: s[4] as u64,
            value: Some(w(s, 2) as u32),
        },
        Kind::DataShort32TimeFirst => Record::Data {
            id,
            data: w(s, 3),
            time: t16(2)?,
        },
        Kind::DataShortTimeFirst => Record::Data {
            id,
            data: d(s, 3),
            time: t16(2)?,
        },
        Kind::ValueZoneShortDurationFirst => Record::Zone {
            id,
            end: t16(5)?,
            duration: s[2] as u64,
            value: Some(w(s, 3) as u32),
        },
    };
    if let Record::Zone { end, duration, .. } = r {
        if duration > end {
            return Err(DecodeError::Time);
        }
    }
    Ok(Decoded::Record(r, n))
}

/// Reconstructs a time from its low `bits` bits and the decoder reference, for a caller
/// that knows the time fits (the runtime, from its own anchor); decoders of ring bytes use
/// [`checked_extend`].
#[inline]
pub const fn extend(reference: u64, low: u64, bits: u32) -> u64 {
    reference + (low.wrapping_sub(reference) & low_mask(bits))
}

/// Reconstructs a time from its low `bits` bits and the decoder reference: the smallest
/// time at or after `reference` with those low bits, or `None` if it would pass `u64::MAX`.
#[inline]
pub const fn checked_extend(reference: u64, low: u64, bits: u32) -> Option<u64> {
    reference.checked_add(low.wrapping_sub(reference) & low_mask(bits))
}

const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hot path writes a datum or a value zone in one of two layouts by the write
    /// pointer's alignment; both decode to the same record.
    #[test]
    fn the_time_first_twins_decode_as_their_forms() {
        let r = 0x1_2345_0000u64;
        let pairs: [(&[u16], &[u16]); 3] = [
            (
                &[7, Kind::DataShort32.header(), 0xBEEF, 0xDEAD, 0x0123],
                &[
                    7,
                    Kind::DataShort32TimeFirst.header(),
                    0x0123,
                    0xBEEF,
                    0xDEAD,
                ],
            ),
            (
                &[7, Kind::DataShort.header(), 1, 2, 3, 4, 0x0123],
                &[7, Kind::DataShortTimeFirst.header(), 0x0123, 1, 2, 3, 4],
            ),
            (
                &[
                    7,
                    Kind::ValueZoneShort.header(),
                    0xBEEF,
                    0xDEAD,
                    0x20,
                    0x0123,
                ],
                &[
                    7,
                    Kind::ValueZoneShortDurationFirst.header(),
                    0x20,
                    0xBEEF,
                    0xDEAD,
                    0x0123,
                ],
            ),
        ];
        for (a, b) in pairs {
            let (x, y) = (decode(a, r), decode(b, r));
            assert!(
                matches!(x, Ok(Decoded::Record(_, n)) if n == a.len()),
                "{x:?}"
            );
            assert_eq!(x, y, "{a:x?} and {b:x?}");
        }
    }

    #[test]
    fn kinds_round_trip_and_sizes_are_even() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_u8(k as u8), Some(k));
            assert_eq!(k.bytes() % 2, 0);
            assert!(k.bytes() <= MAX_RECORD_BYTES);
            assert_ne!(k.header(), PAD);
        }
    }

    #[test]
    fn encoder_picks_the_smallest_exact_form() {
        let z = |end, duration| Record::Zone {
            id: 7,
            end,
            duration,
            value: None,
        };
        assert_eq!(encode(&z(1000, 10), 990).unwrap().bytes(), 6);
        assert_eq!(encode(&z(100_000, 1 << 15), 99_990).unwrap().bytes(), 12);
        assert_eq!(encode(&z(1 << 40, 5), 0).unwrap().bytes(), 20);
        assert_eq!(encode(&z(70_000, 5), 0).unwrap().bytes(), 12);
        assert!(encode(&z(5, 1), 6).is_none(), "time before the reference");
        assert!(encode(&z(5, 6), 0).is_none(), "start before zero");
        let e = encode(&Record::Event { id: 1, time: 100 }, 0).unwrap();
        assert_eq!(e.as_slice(), &[1, Kind::EventShort.header(), 100]);
        let e = encode(
            &Record::Event {
                id: 1,
                time: 1 << 16,
            },
            0,
        )
        .unwrap();
        assert_eq!(e.as_slice(), &[1, Kind::Event32.header(), 0, 1]);
        let data = |time, data| Record::Data { id: 2, time, data };
        assert_eq!(encode(&data(9, 5), 0).unwrap().bytes(), 10);
        assert_eq!(encode(&data(9, 1 << 32), 0).unwrap().bytes(), 14);
        assert_eq!(encode(&data(1 << 16, 5), 0).unwrap().bytes(), 16);
        let value = |end, duration| Record::Zone {
            id: 7,
            end,
            duration,
            value: Some(3),
        };
        assert_eq!(encode(&value(1000, 10), 990).unwrap().bytes(), 12);
        assert_eq!(encode(&value(1 << 17, 1 << 16), 0).unwrap().bytes(), 16);
    }

    #[test]
    fn decode_inverts_encode_for_every_form() {
        let records = [
            (
                Record::Zone {
                    id: 3,
                    end: 1000,
                    duration: 10,
                    value: None,
                },
                990,
            ),
            (
                Record::Zone {
                    id: 3,
                    end: 1 << 33,
                    duration: 1 << 20,
                    value: None,
                },
                (1 << 33) - 100,
            ),
            (
                Record::Zone {
                    id: 3,
                    end: 1 << 40,
                    duration: 1 << 35,
                    value: None,
                },
                0,
            ),
            (
                Record::Zone {
                    id: 9,
                    end: 500,
                    duration: 5,
                    value: Some(42),
                },
                0,
            ),
            (
                Record::Zone {
                    id: 9,
                    end: 1 << 40,
                    duration: 5,
                    value: Some(7),
                },
                0,
            ),
            (Record::Event { id: 1, time: 77 }, 70),
            (
                Record::Event {
                    id: 1,
                    time: 70 + (1 << 16),
                },
                70,
            ),
            (
                Record::Data {
                    id: 2,
                    time: 80,
                    data: u32::MAX as u64,
                },
                70,
            ),
            (
                Record::Data {
                    id: 2,
                    time: 70 + (1 << 20),
                    data: 1,
                },
                70,
            ),
            (
                Record::Zone {
                    id: 9,
                    end: 1 << 20,
                    duration: 1 << 17,
                    value: Some(42),
                },
                0,
            ),
            (
                Record::Event {
                    id: 1,
                    time: 1 << 34,
                },
                70,
            ),
            (
                Record::Data {
                    id: 2,
                    time: 80,
                    data: u64::MAX,
                },
                70,
            ),
            (
                Record::Data {
                    id: 2,
                    time: 1 << 36,
                    data: 5,
                },
                70,
            ),
            (
                Record::Sum {
                    id: 4,
                    time: 90,
                    count: 3,
                    total: 1 << 40,
                },
                70,
            ),
            (Record::Time { time: 1 << 50 }, 70),
            (
                Record::Run {
                    run_id: 12,
                    time: 100,
                },
                70,
            ),
            (
                Record::Loss {
                    count: 5,
                    first_run: 3,
                    last_run: 4,
                    first: 1,
                    last: 2,
                },
                70,
            ),
        ];
        for (r, reference) in records {
            let e = encode(&r, reference).unwrap();
            assert_eq!(
                decode(e.as_slice(), reference),
                Ok(Decoded::Record(r, e.len as usize)),
                "{r:?}"
            );
            if e.len > 2 {
                assert!(matches!(
                    decode(&e.as_slice()[..e.len as usize - 1], reference),
                    Err(DecodeError::Truncated { .. })
                ));
            }
        }
        assert_eq!(decode(&[0, PAD], 0), Ok(Decoded::Pad));
        assert_eq!(
            decode(&[0, 0x8000 | 0x7E << 8], 0),
            Err(DecodeError::UnknownKind {
                h1: 0x8000 | 0x7E << 8
            })
        );
    }

    #[test]
    fn extend_picks_the_next_value_with_those_low_bits() {
        assert_eq!(extend(0x1_FFF0, 0x0005, 16), 0x2_0005);
        assert_eq!(extend(0x1_0005, 0x0005, 16), 0x1_0005);
        assert_eq!(extend(0xFFFF_FFFF, 1, 32), 0x1_0000_0001);
        assert_eq!(extend(7, 1 << 40, 64), 1 << 40);
        assert_eq!(checked_extend(0x1_FFF0, 0x0005, 16), Some(0x2_0005));
        assert_eq!(checked_extend(u64::MAX - 3, 0xFFFF, 16), Some(u64::MAX));
        assert_eq!(checked_extend(u64::MAX - 3, 0x0000, 16), None);
        assert_eq!(checked_extend(u64::MAX, 0xFFFF_FFFF, 32), Some(u64::MAX));
        assert_eq!(checked_extend(u64::MAX, 0, 32), None);
    }

    #[test]
    fn times_near_the_top_of_the_range_decode_until_they_would_wrap() {
        let top = u64::MAX - 10;
        // Exact at the very top: a 64-bit anchor, then short and 32-bit forms up to u64::MAX.
        let anchor = Record::Time { time: top };
        let zone = Record::Zone {
            id: 1,
            end: u64::MAX,
            duration: 5,
            value: None,
        };
        assert_eq!(
            decode(encode(&anchor, 0).unwrap().as_slice(), 0),
            Ok(Decoded::Record(anchor, 6))
        );
        let short = encode(&zone, top).unwrap();
        assert_eq!(short.len, 3);
        assert_eq!(decode(short.as_slice(), top), Ok(Decoded::Record(zone, 3)));
        let event = Record::Event {
            id: 2,
            time: u64::MAX,
        };
        assert_eq!(
            decode(encode(&event, top).unwrap().as_slice(), top),
            Ok(Decoded::Record(event, 3))
        );
        // A short zone whose end16 lies below the reference's low bits would need a time past
        // 2^64: an error at that record (was: a time wrapped to near 0, or an overflow panic).
        let low = (top & 0xFFFF) as u16 - 1;
        assert_eq!(decode(&[1, 5, low], top), Err(DecodeError::Overflow));
        // Likewise every 32-bit form.
        let low32 = (top as u32 - 1).to_le_bytes();
        let w = [
            u16::from_le_bytes([low32[0], low32[1]]),
            u16::from_le_bytes([low32[2], low32[3]]),
        ];
        let records: [&[u16]; 4] = [
            &[3, Kind::Zone32.header(), 5, 0, w[0], w[1]],
            &[3, Kind::ValueZone32.header(), 9, 0, 5, 0, w[0], w[1]],
            &[3, Kind::Event32.header(), w[0], w[1]],
            &[3, Kind::Data32.header(), 1, 2, 3, 4, w[0], w[1]],
        ];
        // And every 16-bit form.
        let shorts: [&[u16]; 7] = [
            &[3, Kind::EventShort.header(), low],
            &[3, Kind::DataShort32.header(), 1, 2, low],
            &[3, Kind::DataShort.header(), 1, 2, 3, 4, low],
            &[3, Kind::ValueZoneShort.header(), 9, 0, 5, low],
            &[3, Kind::DataShort32TimeFirst.header(), low, 1, 2],
            &[3, Kind::DataShortTimeFirst.header(), low, 1, 2, 3, 4],
            &[3, Kind::ValueZoneShortDurationFirst.header(), 5, 9, 0, low],
        ];
        for h in shorts {
            assert_eq!(decode(h, top), Err(DecodeError::Overflow), "{h:x?}");
        }
        for h in records {
            assert_eq!(decode(h, top), Err(DecodeError::Overflow), "{h:x?}");
            assert!(
                matches!(decode(h, top - (1 << 32)), Ok(Decoded::Record(..))),
                "{h:x?} from a lower reference"
            );
        }
        // A forged 64-bit time at u64::MAX itself is a valid time; only what follows it can wrap.
        let max = Record::Time { time: u64::MAX };
        assert_eq!(
            decode(encode(&max, 0).unwrap().as_slice(), 0),
            Ok(Decoded::Record(max, 6))
        );
        assert_eq!(
            decode(&[1, 0, 0xFFFF], u64::MAX),
            Ok(Decoded::Record(
                Record::Zone {
                    id: 1,
                    end: u64::MAX,
                    duration: 0,
                    value: None
                },
                3
            ))
        );
        assert_eq!(
            decode(&[1, 0, 0xFFFE], u64::MAX),
            Err(DecodeError::Overflow)
        );
    }

    #[test]
    fn a_short_zone_starting_before_cycle_0_is_an_error_like_every_other_form() {
        assert_eq!(decode(&[1, 10, 9], 0), Err(DecodeError::Time));
        assert_eq!(
            decode(&[1, 10, 10], 0),
            Ok(Decoded::Record(
                Record::Zone {
                    id: 1,
                    end: 10,
                    duration: 10,
                    value: None
                },
                3
            ))
        );
        assert_eq!(
            decode(&[1, Kind::Zone32.header(), 11, 0, 10, 0], 0),
            Err(DecodeError::Time)
        );
        assert_eq!(
            decode(&[1, Kind::ValueZoneShort.header(), 4, 0, 11, 10], 0),
            Err(DecodeError::Time)
        );
        assert_eq!(
            decode(
                &[1, Kind::ValueZoneShortDurationFirst.header(), 11, 4, 0, 10],
                0
            ),
            Err(DecodeError::Time)
        );
    }
}
