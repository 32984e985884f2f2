//! The ring decoders on arbitrary bytes: `ttprof::decode`'s rich decoder (into `Records`)
//! and compact decoder (into `ZoneTable`) never panic, agree with each other, and agree with
//! the reference decoder `ttprof_rt::wire::decode`: the same records, or both an error at
//! the same byte. Decoding in two pieces cut at a record boundary (the decoder state kept
//! between them, as the readout does) gives what one piece gives.
//!
//! Input: the decoder's starting time reference (8 bytes, little-endian; zeros if short),
//! a cut position (2 bytes, little-endian: bytes into the ring data, 0 = no cut), then the
//! ring bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttprof::decode::{Decoder, Stop, NO_RUN};
use ttprof_fuzz::ring::{check_piece, End};

ttprof_fuzz::limit_allocations!();

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let mut head = [0u8; 10];
    let n = data.len().min(10);
    head[..n].copy_from_slice(&data[..n]);
    let reference = u64::from_le_bytes(head[..8].try_into().unwrap());
    let cut = u16::from_le_bytes([head[8], head[9]]) as usize;
    let ring = &data[n..];

    let start = Decoder { reference, run: NO_RUN };
    let mut whole = start;
    let (records, end) = check_piece(ring, &mut whole);

    if cut == 0 || cut >= ring.len() {
        return;
    }
    let mut pieces = start;
    let (mut first, first_end) = check_piece(&ring[..cut], &mut pieces);
    if first_end != End::Stop(Stop::End) {
        // Cut inside a record (or before a pad or an error): the readout never splits there.
        return;
    }
    let (second, second_end) = check_piece(&ring[cut..], &mut pieces);
    first.extend(second);
    let shifted = match second_end {
        End::Stop(Stop::End) => End::Stop(Stop::End),
        End::Stop(Stop::Pad { at }) => End::Stop(Stop::Pad { at: at + cut }),
        End::Stop(Stop::Short { at }) => End::Stop(Stop::Short { at: at + cut }),
        End::Error(mut e) => {
            e.at += cut;
            End::Error(e)
        }
    };
    assert_eq!((first, shifted), (records, end), "two pieces cut at byte {cut} decode as one");
    assert_eq!(pieces, whole, "and leave the same state");
}));
