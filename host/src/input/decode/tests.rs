//! The fast decoders (rich and compact tables) against the reference decoder `ttprof_rt::wire::decode`: on generated
//! record streams (which must also decode back to exactly what was encoded) and on a seeded
//! corpus of random and damaged bytes (which must never panic, and must fail at the same
//! byte with the same error). Both include times near `u64::MAX`, where a time extended
//! from its low bits could wrap; `cargo test` with overflow checks on must pass too.

use super::*;
use crate::testing::Rng;
use ttprof_rt::wire::{decode as wire_decode, encode, DecodeError as WireError, Decoded, Record};

/// How a reference decode of a piece ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Stop(Stop),
    Error(DecodeError),
}

/// Decodes a piece with the reference decoder, using the same rules for where a piece ends.
fn reference(bytes: &[u8], mut reference: u64) -> (Vec<Record>, End) {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let rest = &bytes[i..];
        if rest.len() < 4 {
            let stop = if rest.is_empty() {
                Stop::End
            } else {
                Stop::Short { at: i }
            };
            return (out, End::Stop(stop));
        }
        let halves: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        match wire_decode(&halves, reference) {
            Ok(Decoded::Pad) => return (out, End::Stop(Stop::Pad { at: i })),
            Ok(Decoded::Record(r, n)) => {
                reference = r.ref_time().unwrap_or(reference);
                out.push(r);
                i += 2 * n;
            }
            Err(kind) => return (out, End::Error(DecodeError { at: i, kind })),
        }
    }
}

/// Decodes with both fast paths (the rich table and the compact table, from the same
/// state), checks they agree row for row and in their final state, and returns the records.
fn fast(bytes: &[u8], decoder: &mut Decoder) -> (Vec<Record>, End) {
    let as_end = |r: Result<Stop, DecodeError>| match r {
        Ok(s) => End::Stop(s),
        Err(e) => End::Error(e),
    };
    let mut compact_decoder = *decoder;
    let mut out = Records::new();
    let end = as_end(decoder.decode(bytes, &mut out));
    let mut table = ZoneTable::new();
    let mut scalar_decoder = compact_decoder;
    let compact_end = as_end(compact_decoder.decode_compact(bytes, &mut table));
    assert_eq!(compact_end, end, "compact and rich decoders stop alike");
    // Without the eight-at-a-time loop (what a CPU without AVX2 runs): the same table.
    let mut scalar = ZoneTable::new();
    assert_eq!(
        as_end(scalar_decoder.decode_compact_with(bytes, &mut scalar, false)),
        end,
        "scalar compact decoder stops alike"
    );
    assert_eq!(
        (scalar_decoder, &scalar),
        (compact_decoder, &table),
        "scalar and vector compact decoders agree"
    );
    assert_eq!(
        compact_decoder, *decoder,
        "compact and rich decoders end in the same state"
    );
    assert_eq!(
        table.to_records(),
        out,
        "compact table rows equal the rich rows"
    );
    assert_eq!(
        Records::from_table(table),
        out,
        "the table taken into records gives the rich rows"
    );
    (
        (0..out.len()).map(|i| out.record(i).unwrap()).collect(),
        end,
    )
}

/// A random record whose times are at or after `now` (and some that go back: Loss). `dense`:
/// nine in ten are short zones close together (runs long enough for the vector loop).
fn random_record(rng: &mut Rng, now: &mut u64, run: &mut u32, dense: bool) -> Record {
    if dense && rng.below(10) != 0 {
        *now = now.saturating_add(rng.below(300));
        return Record::Zone {
            id: rng.bits(16) as u16,
            end: *now,
            duration: rng.below(400).min(*now),
            value: None,
        };
    }
    let gap = match rng.below(10) {
        0..=5 => rng.below(200),
        6 | 7 => rng.below(1 << 17),
        8 => rng.below(1 << 33),
        _ => rng.bits(40),
    };
    *now = now.saturating_add(gap);
    let t = *now;
    let id = rng.bits(16) as u16;
    let duration = match rng.below(8) {
        0..=4 => rng.below(1 << 15),
        5 | 6 => rng.below(1 << 32),
        _ => rng.bits(45),
    }
    .min(t);
    match rng.below(20) {
        0..=11 => Record::Zone {
            id,
            end: t,
            duration,
            value: None,
        },
        12 => Record::Zone {
            id,
            end: t,
            duration,
            value: Some(rng.next_u64() as u32),
        },
        13 => Record::Event { id, time: t },
        14 => Record::Data {
            id,
            time: t,
            data: rng.next_u64(),
        },
        15 => Record::Sum {
            id,
            time: t,
            count: rng.next_u64() as u32,
            total: rng.next_u64(),
        },
        16 => Record::Time { time: t },
        17 => {
            *run = run.wrapping_add(1 + rng.below(3) as u32);
            Record::Run {
                run_id: *run,
                time: t,
            }
        }
        _ => Record::Loss {
            count: rng.next_u64() as u32,
            first_run: *run,
            last_run: run.wrapping_add(1),
            first: t.saturating_sub(rng.below(1000)),
            last: rng.next_u64(),
        },
    }
}

/// A stream of `n` records: the records, their encoding, and each record's end byte.
fn stream(rng: &mut Rng, n: usize, start: u64, dense: bool) -> (Vec<Record>, Vec<u8>, Vec<usize>) {
    let (mut now, mut run, mut reference) = (start, 0u32, start);
    let mut records = Vec::new();
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for _ in 0..n {
        let r = random_record(rng, &mut now, &mut run, dense);
        let e = encode(&r, reference).expect("generated records are encodable");
        bytes.extend(e.as_slice().iter().flat_map(|h| h.to_le_bytes()));
        reference = r.ref_time().unwrap_or(reference);
        records.push(r);
        ends.push(bytes.len());
    }
    (records, bytes, ends)
}

#[test]
fn generated_streams_decode_exactly_in_any_split() {
    let mut rng = Rng::new(0x5EED_0001);
    for case in 0..300 {
        let start = match case % 6 {
            0 | 3 => (u32::MAX as u64) - rng.below(1000),
            // Near the top of the 64-bit range: times run up to u64::MAX itself.
            1 => u64::MAX - rng.below(1 << 24),
            _ => rng.below(1 << 20),
        };
        let n = 1 + rng.below(400) as usize;
        let (records, bytes, ends) = stream(&mut rng, n, start, case % 2 == 0);
        let mut d = Decoder {
            reference: start,
            run: NO_RUN,
        };
        assert_eq!(
            fast(&bytes, &mut d),
            (records.clone(), End::Stop(Stop::End)),
            "case {case}"
        );
        assert_eq!(
            reference(&bytes, start),
            (records.clone(), End::Stop(Stop::End))
        );
        // The same stream in pieces cut at record boundaries, state kept between calls.
        let mut d = Decoder {
            reference: start,
            run: NO_RUN,
        };
        let mut got = Records::new();
        let mut from = 0;
        while from < bytes.len() {
            let k = ends.partition_point(|&e| e <= from) + rng.below(4) as usize;
            let to = ends.get(k).copied().unwrap_or(bytes.len());
            assert_eq!(d.decode(&bytes[from..to], &mut got), Ok(Stop::End));
            from = to;
        }
        let back: Vec<Record> = (0..got.len()).map(|i| got.record(i).unwrap()).collect();
        assert_eq!(back, records, "case {case} in pieces");
        // The compact table, in other pieces, into one table.
        let mut c = Decoder {
            reference: start,
            run: NO_RUN,
        };
        let mut table = ZoneTable::new();
        let mut from = 0;
        while from < bytes.len() {
            let k = ends.partition_point(|&e| e <= from) + rng.below(6) as usize;
            let to = ends.get(k).copied().unwrap_or(bytes.len());
            assert_eq!(
                c.decode_compact(&bytes[from..to], &mut table),
                Ok(Stop::End)
            );
            from = to;
        }
        assert_eq!(
            table.to_records(),
            got,
            "case {case}: compact table in pieces"
        );
        assert_eq!(c, d);
        let zones = records
            .iter()
            .filter(|r| matches!(r, Record::Zone { .. }))
            .count();
        assert_eq!(table.zones(), zones);
        let last_run = records.iter().rev().find_map(|r| {
            if let Record::Run { run_id, .. } = r {
                Some(*run_id)
            } else {
                None
            }
        });
        assert_eq!(d.run, last_run.unwrap_or(NO_RUN));
    }
}

#[test]
fn run_column_follows_the_latest_run_record() {
    let records = [
        Record::Zone {
            id: 1,
            end: 10,
            duration: 2,
            value: None,
        },
        Record::Run {
            run_id: 7,
            time: 20,
        },
        Record::Zone {
            id: 1,
            end: 30,
            duration: 2,
            value: None,
        },
        Record::Loss {
            count: 2,
            first_run: 7,
            last_run: 8,
            first: 31,
            last: 32,
        },
        Record::Run {
            run_id: 8,
            time: 40,
        },
        Record::Event { id: 3, time: 50 },
    ];
    let mut bytes = Vec::new();
    let mut reference = 0;
    for r in &records {
        bytes.extend(
            encode(r, reference)
                .unwrap()
                .as_slice()
                .iter()
                .flat_map(|h| h.to_le_bytes()),
        );
        reference = r.ref_time().unwrap_or(reference);
    }
    let mut out = Records::new();
    Decoder::new().decode(&bytes, &mut out).unwrap();
    assert_eq!(out.runs().collect::<Vec<_>>(), [NO_RUN, 7, 7, 7, 8, 8]);
    assert_eq!(out.kind[3], RecordKind::Loss);
    assert_eq!(
        (out.count_at(3), out.start_at(3), out.end_at(3)),
        (2, 31, 32)
    );
}

#[test]
fn random_and_damaged_bytes_never_panic_and_fail_like_the_reference() {
    let mut rng = Rng::new(0xF022_0002);
    let (mut errors, mut overflows) = (0, 0);
    for case in 0..4000 {
        let reference_time = match case % 6 {
            0 | 2 | 4 => rng.bits(20),
            1 | 3 => rng.bits(62),
            // Within 2^40 of u64::MAX: most short times wrap.
            _ => {
                let bits = 1 + rng.below(40) as u32;
                u64::MAX - rng.bits(bits)
            }
        };
        let bytes: Vec<u8> = match case % 4 {
            // Pure noise.
            0 => (0..rng.below(300)).map(|_| rng.next_u64() as u8).collect(),
            // Noise with plausible extended headers.
            1 => (0..rng.below(150))
                .flat_map(|i| {
                    let h = if i % 3 == 1 {
                        0x8000 | (rng.below(16) as u16) << 8
                    } else {
                        rng.next_u64() as u16
                    };
                    h.to_le_bytes()
                })
                .collect(),
            // A valid stream with a few flipped bits, possibly cut anywhere.
            _ => {
                let n = 1 + rng.below(60) as usize;
                let (_, mut b, ends) = stream(&mut rng, n, reference_time, case % 8 < 4);
                if case % 16 == 2 {
                    // A forged 64-bit anchor near u64::MAX between two records.
                    let at = ends[rng.below(ends.len() as u64) as usize];
                    let forged = encode(
                        &Record::Time {
                            time: u64::MAX - rng.below(1 << 20),
                        },
                        0,
                    )
                    .unwrap();
                    b.splice(
                        at..at,
                        forged.as_slice().iter().flat_map(|h| h.to_le_bytes()),
                    );
                }
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(b.len() as u64) as usize;
                    b[at] ^= 1 << rng.below(8);
                }
                if case % 4 == 3 {
                    b.truncate(rng.below(b.len() as u64 + 1) as usize);
                }
                b
            }
        };
        let mut d = Decoder {
            reference: reference_time,
            run: NO_RUN,
        };
        let got = fast(&bytes, &mut d);
        let want = reference(&bytes, reference_time);
        assert_eq!(got, want, "case {case}: {bytes:02x?}");
        if let End::Error(e) = got.1 {
            errors += 1;
            overflows += (e.kind == WireError::Overflow) as usize;
            assert!(e.at < bytes.len() && e.to_string().contains(&format!("byte {}", e.at)));
        }
    }
    assert!(errors > 500, "the corpus exercises errors ({errors})");
    assert!(
        overflows > 100,
        "the corpus exercises times that would wrap ({overflows})"
    );
}

#[test]
fn a_forged_time_near_2_64_stops_the_decode_at_the_record_that_would_wrap() {
    // A real stream, then a forged anchor 3,000,000 cycles below u64::MAX, then short zones
    // as the producer goes on writing them, 50,000 cycles apart: the 61st one would end past
    // u64::MAX. Before, its time wrapped to near 0 and later times ran backwards (an overflow
    // panic with overflow checks on). Now every decoder stops there with the same error,
    // having decoded the ones before it at their exact times.
    let top = u64::MAX - 3_000_000;
    let mut rng = Rng::new(0x70F_2064);
    let (mut records, mut bytes, _) = stream(&mut rng, 50, 0, true);
    let anchor = Record::Time { time: top };
    bytes.extend(
        encode(&anchor, 0)
            .unwrap()
            .as_slice()
            .iter()
            .flat_map(|h| h.to_le_bytes()),
    );
    records.push(anchor);
    let wrap_at = bytes.len() + 60 * 6;
    for k in 1..=100u64 {
        let end = top.wrapping_add(50_000 * k);
        for h in [7u16, 3, end as u16] {
            bytes.extend(h.to_le_bytes());
        }
        if k <= 60 {
            records.push(Record::Zone {
                id: 7,
                end,
                duration: 3,
                value: None,
            });
        }
    }
    let want = (
        records,
        End::Error(DecodeError {
            at: wrap_at,
            kind: WireError::Overflow,
        }),
    );
    assert_eq!(reference(&bytes, 0), want);
    let mut d = Decoder::new();
    assert_eq!(fast(&bytes, &mut d), want);
    assert_eq!(
        d.reference,
        top + 60 * 50_000,
        "the state is that after the last good record"
    );
    let e = want.1;
    let End::Error(e) = e else { unreachable!() };
    assert!(
        e.to_string().contains(&format!("byte {wrap_at}")) && e.to_string().contains("would wrap"),
        "{e}"
    );
    // The same from a reference already at the top: no record is taken at all.
    let mut d = Decoder {
        reference: u64::MAX,
        run: NO_RUN,
    };
    let zone = [1u8, 0, 3, 0, 0x00, 0x00, 1, 0, 3, 0, 0x01, 0x00];
    assert_eq!(
        fast(&zone, &mut d),
        (
            vec![],
            End::Error(DecodeError {
                at: 0,
                kind: WireError::Overflow
            })
        )
    );
    assert_eq!(
        reference(&zone, u64::MAX),
        (
            vec![],
            End::Error(DecodeError {
                at: 0,
                kind: WireError::Overflow
            })
        )
    );
}

/// One row as the records' accessors give it.
fn row(r: &Records, i: usize) -> (RecordKind, u16, u64, u64, u64, u32, u32) {
    (
        r.kind[i],
        r.site[i],
        r.start_at(i),
        r.end_at(i),
        r.value_at(i),
        r.count_at(i),
        r.run_at(i),
    )
}

/// Values and counts are kept only where not 0, runs and a start's high 32 bits only where
/// they change, and an end as its distance from the start unless that is 2^32 - 1 or more or
/// negative: every row reads back as pushed, after `append`, `truncate`, `runs`, `starts`
/// and `ends`, and two tables of the same rows are equal however they were made.
#[test]
fn sparse_values_and_runs_read_back_as_pushed() {
    let mut rng = Rng::new(0x5EC0_0041);
    let kinds = [
        RecordKind::Zone,
        RecordKind::ValueZone,
        RecordKind::Sum,
        RecordKind::Run,
    ];
    for case in 0..200 {
        let n = rng.below(60) as usize;
        let mut run = NO_RUN;
        let rows: Vec<_> = (0..n)
            .map(|i| {
                if rng.percent(10) {
                    run = rng.below(4) as u32;
                }
                let (value, count) = match rng.below(3) {
                    0 => (0, 0),
                    1 => (rng.next_u64(), 0),
                    _ => (rng.bits(8), rng.below(5) as u32),
                };
                let kind = kinds[rng.below(4) as usize];
                let start = match rng.below(4) {
                    0 => 10 * i as u64,
                    1 => (1 << 32) - 8 + rng.below(16),
                    2 => (rng.below(3) << 32) + rng.bits(32),
                    _ => u64::MAX - rng.bits(40),
                };
                let end = match rng.below(6) {
                    0 => start.checked_add(u32::MAX as u64 - 1),
                    1 => start.checked_add(u32::MAX as u64),
                    2 => start.checked_add((1 << 33) + rng.bits(8)),
                    3 => Some(start.saturating_sub(1 + rng.bits(8))),
                    _ => start.checked_add(rng.bits(16)),
                };
                let end = end.unwrap_or(u64::MAX);
                (kind, i as u16, start, end, value, count, run)
            })
            .collect();
        let push_all = |rows: &[(RecordKind, u16, u64, u64, u64, u32, u32)]| {
            let mut r = Records::new();
            for &(k, s, a, b, v, c, run) in rows {
                r.push(k, s, a, b, v, c, run);
            }
            r
        };
        let whole = push_all(&rows);
        for (i, want) in rows.iter().enumerate() {
            assert_eq!(row(&whole, i), *want, "case {case} row {i}");
        }
        let runs: Vec<u32> = rows.iter().map(|r| r.6).collect();
        assert_eq!(whole.runs().collect::<Vec<_>>(), runs, "case {case}");
        let starts: Vec<u64> = rows.iter().map(|r| r.2).collect();
        let ends: Vec<u64> = rows.iter().map(|r| r.3).collect();
        assert_eq!(whole.starts().collect::<Vec<_>>(), starts, "case {case}");
        assert_eq!(whole.ends().collect::<Vec<_>>(), ends, "case {case}");
        let cut = rng.below(n as u64 + 1) as usize;
        let mut joined = push_all(&rows[..cut]);
        joined.append(&push_all(&rows[cut..]));
        assert_eq!(joined, whole, "case {case}: appended at {cut}");
        let mut short = whole.clone();
        short.truncate(cut);
        assert_eq!(
            short,
            push_all(&rows[..cut]),
            "case {case}: truncated at {cut}"
        );
        short.append(&push_all(&rows[cut..]));
        assert_eq!(short, whole, "case {case}: truncated, then appended");
    }
}

/// A table taken into records (`Records::from_table`, what the drainer hands out) gives the
/// rows `to_records` gives: any kind, long and inverted spans, starts past 2^32, a run before
/// the table's first `Run` record.
#[test]
fn a_table_taken_into_records_reads_as_its_rows() {
    let mut rng = Rng::new(0x7AB1_E041);
    let kinds = [
        RecordKind::Zone,
        RecordKind::Zone,
        RecordKind::ValueZone,
        RecordKind::Event,
        RecordKind::Data,
        RecordKind::Sum,
        RecordKind::Run,
        RecordKind::Loss,
    ];
    for case in 0..300 {
        let mut t = ZoneTable::new();
        let first = match rng.below(3) {
            0 => NO_RUN,
            _ => rng.below(5) as u32,
        };
        t.clear(first);
        for _ in 0..rng.below(80) {
            let kind = kinds[rng.below(kinds.len() as u64) as usize];
            let start = match rng.below(3) {
                0 => rng.bits(20),
                1 => (1 << 32) - 4 + rng.below(8),
                _ => rng.bits(40),
            };
            let end = match (kind, rng.below(4)) {
                (RecordKind::Loss, 0) => start.saturating_sub(1 + rng.bits(8)),
                (k, 1) if k.is_zone() => start + u32::MAX as u64 + rng.below(3),
                (k, _) if k.is_zone() || k == RecordKind::Loss => start + rng.bits(16),
                _ => start,
            };
            let (value, count) = match rng.below(3) {
                0 => (0, 0),
                _ => (rng.bits(40), rng.below(4) as u32),
            };
            let value = if kind == RecordKind::Run {
                rng.below(5)
            } else {
                value
            };
            t.push(kind, rng.below(9) as u16, start, end, value, count);
        }
        assert_eq!(
            Records::from_table(t.clone()),
            t.to_records(),
            "case {case}"
        );
    }
}
