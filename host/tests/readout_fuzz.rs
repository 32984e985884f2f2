//! Bad device data, seeded and random: whole rings and control blocks, damaged the ways a
//! device or a torn read can damage them (bad magic, version, RISC, base or capacity; HEAD
//! beyond capacity, odd, inside a record, going back between drains; impossible timestamps;
//! random bytes and words), read through the full readout (`Drainer`). Whatever the damage:
//! no panic; every published byte is decoded or counted as skipped; every loss beyond the
//! ring-end padding is an error issue naming the ring, with a count; a damaged ring never
//! stops the other rings of its tile from being read exactly.

use riscv_linker::devfile::Geometry;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use ttprof::decode::Records;
use ttprof::devmem::{DeviceMemory, Snapshot};
use ttprof::issue::Issue;
use ttprof::readout::{DrainOptions, Drainer, Readout, RingId};
use ttprof::testing::Rng;
use ttprof_rt::wire::{encode, Record, PAD};

const ARCH: Arch = Arch::WormholeB0;
const TILE: NocCoord = NocCoord::new(1, 1);
const CAP: u32 = profiler::RING_CAPACITY;

/// A ring as the producer leaves it: records written from counter `start` with pads at the
/// ring's end, `HEAD` after the last one.
struct Ring {
    bytes: Vec<u8>,
    start: u32,
    head: u32,
    records: Vec<Record>,
    /// Counter value at which each record starts, and the pad bytes in all.
    at: Vec<u32>,
    pad_bytes: u32,
}

fn ring(rng: &mut Rng, start: u32, n: usize) -> Ring {
    let mut r = Ring {
        bytes: vec![0u8; CAP as usize],
        start,
        head: start,
        records: Vec::new(),
        at: Vec::new(),
        pad_bytes: 0,
    };
    let (mut t, mut reference) = (1_000 + rng.below(1 << 20), 0u64);
    let mut run_time = t;
    for i in 0..n {
        t += rng.below(300);
        if i == 0 {
            run_time = t;
        }
        let rec = match (i, rng.below(40)) {
            (0, _) => Record::Run {
                run_id: 1 + rng.below(9) as u32,
                time: t,
            },
            (_, 0) => Record::Event {
                id: rng.below(20) as u16,
                time: t,
            },
            (_, 1) => Record::Zone {
                id: 3,
                end: t + 50_000,
                duration: 40_000,
                value: None,
            },
            (_, 2) => Record::Data {
                id: 4,
                time: t,
                data: rng.next_u64(),
            },
            // Zones start after their launch's Run record.
            _ => Record::Zone {
                id: rng.below(20) as u16,
                end: t,
                duration: rng.below(200).min(t - run_time),
                value: None,
            },
        };
        let e = encode(&rec, reference).expect("encodable");
        let to_end = CAP - r.head % CAP;
        let pad = if e.bytes() > to_end { to_end } else { 0 };
        if r.head.wrapping_sub(start) + pad + e.bytes() > CAP {
            break;
        }
        if pad > 0 {
            if pad >= 4 {
                let o = (r.head % CAP) as usize;
                r.bytes[o + 2..o + 4].copy_from_slice(&PAD.to_le_bytes());
            }
            r.head = r.head.wrapping_add(pad);
            r.pad_bytes += pad;
        }
        r.at.push(r.head);
        for (k, h) in e.as_slice().iter().enumerate() {
            let o = ((r.head % CAP) + 2 * k as u32) as usize;
            r.bytes[o..o + 2].copy_from_slice(&h.to_le_bytes());
        }
        r.head = r.head.wrapping_add(e.bytes());
        reference = rec.ref_time().unwrap_or(reference);
        t = t.max(reference);
        r.records.push(rec);
    }
    r
}

/// A one-tile device with the tile block and the given rings (others unused).
fn device(rings: &[(Risc, &Ring, [u32; 12])]) -> Snapshot {
    let g = Geometry {
        arch: ARCH,
        chips: 1,
        tiles_per_chip: 1,
        l1_size: ARCH.l1_size(),
    };
    let snap = Snapshot::new(g, vec![vec![TILE]]).unwrap();
    let c = profiler::control_region();
    snap.add(0, TILE, c.start, &vec![0; (c.size / 4) as usize])
        .unwrap();
    let d = profiler::rings_region();
    snap.add(0, TILE, d.start, &vec![0; (d.size / 4) as usize])
        .unwrap();
    let t = profiler::TILE_BLOCK;
    for (off, v) in [
        (tile::MAGIC, profiler::TILE_MAGIC),
        (tile::VERSION, profiler::VERSION),
        (tile::ARCH, ARCH.id()),
    ] {
        snap.add(0, TILE, t + off, &[v]).unwrap();
    }
    for (risc, r, words) in rings {
        snap.add(0, TILE, profiler::ring_block(*risc), words)
            .unwrap();
        let w: Vec<u32> = r
            .bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        snap.add(0, TILE, profiler::ring_data(*risc).start, &w)
            .unwrap();
    }
    snap
}

/// The control words (`MAGIC..=STATE`) of a valid block for `r`.
fn block(risc: Risc, r: &Ring) -> [u32; 12] {
    let d = profiler::ring_data(risc);
    let mut w = [0u32; 12];
    for (off, v) in [
        (ring::MAGIC, profiler::RING_MAGIC),
        (ring::VERSION, profiler::VERSION),
        (ring::RISC, risc.index() as u32),
        (ring::BASE, d.start),
        (ring::CAPACITY, d.size),
        (ring::HEAD, r.head),
        (ring::TAIL, r.start),
        (ring::STATE, ring::STATE_EXITED),
    ] {
        w[(off / 4) as usize] = v;
    }
    w
}

fn read(mem: &dyn DeviceMemory) -> Readout {
    let mut d = Drainer::attach(
        mem,
        DrainOptions {
            consume: true,
            attach_consumer: false,
        },
    )
    .unwrap();
    d.drain().unwrap();
    d.finish().unwrap()
}

fn records(r: &Records) -> Vec<Record> {
    (0..r.len()).map(|i| r.record(i).unwrap()).collect()
}

fn errors_at(issues: &[Issue], risc: Risc) -> Vec<&Issue> {
    let at = RingId {
        chip: 0,
        tile: TILE,
        risc,
    }
    .location();
    issues
        .iter()
        .filter(|i| i.is_error() && i.at == Some(at))
        .collect()
}

/// Every published byte decoded or counted as skipped; losses beyond padding are errors.
fn accounted(out: &Readout, risc: Risc, published: u32, pads: u32) {
    let Some(r) = out.rings().iter().find(|r| r.id.risc == risc) else {
        assert!(
            !errors_at(out.issues(), risc).is_empty(),
            "{risc}: a ring left out is an error: {:?}",
            out.issues()
        );
        return;
    };
    assert_eq!(
        r.payload_bytes + r.skipped_bytes,
        published as u64,
        "{risc}: every published byte accounted for"
    );
    if r.skipped_bytes > pads as u64 {
        assert!(
            !errors_at(out.issues(), risc).is_empty(),
            "{risc}: {} bytes skipped without an error",
            r.skipped_bytes
        );
    }
}

#[test]
fn damaged_control_blocks_are_errors_and_the_tile_s_other_rings_are_read_exactly() {
    let mut rng = Rng::new(0xBAD_C0DE);
    for case in 0..300 {
        let start = (rng.bits(32) as u32) & !1;
        let good = ring(&mut rng, start, 2000);
        let bad_start = (rng.bits(32) as u32) & !1;
        let bad = ring(&mut rng, bad_start, 2000);
        let mut w = block(Risc::Trisc0, &bad);
        let word = |off: u32| (off / 4) as usize;
        let what = case % 9;
        match what {
            0 => w[word(ring::MAGIC)] = rng.next_u64() as u32 | 1,
            1 => w[word(ring::VERSION)] = profiler::VERSION + 1 + rng.below(5) as u32,
            2 => w[word(ring::RISC)] = 5 + rng.below(100) as u32,
            3 => w[word(ring::BASE)] ^= 4 << rng.below(10),
            4 => w[word(ring::CAPACITY)] = CAP * 2,
            5 => w[word(ring::HEAD)] = bad.start.wrapping_add(CAP + 2 + 2 * rng.below(1000) as u32),
            6 => w[word(ring::HEAD)] |= 1,
            7 => w[word(ring::TAIL)] = bad.head.wrapping_add(2),
            _ => {
                for x in w.iter_mut() {
                    *x = if rng.percent(50) {
                        rng.next_u64() as u32
                    } else {
                        *x
                    };
                }
            }
        }
        let mem = device(&[
            (Risc::Brisc, &good, block(Risc::Brisc, &good)),
            (Risc::Trisc0, &bad, w),
        ]);
        let out = read(&mem);
        let brisc = out
            .rings()
            .iter()
            .find(|r| r.id.risc == Risc::Brisc)
            .expect("the good ring is read");
        assert_eq!(
            records(&brisc.records),
            good.records,
            "case {case}: the good ring, exactly"
        );
        assert!(
            errors_at(out.issues(), Risc::Brisc).is_empty(),
            "case {case}: {:?}",
            out.issues()
        );
        if what < 8 {
            assert!(
                !errors_at(out.issues(), Risc::Trisc0).is_empty(),
                "case {case} ({what}): the damage is an error: {:?}",
                out.issues()
            );
            assert!(
                out.rings()
                    .iter()
                    .all(|r| r.id.risc != Risc::Trisc0 || r.payload_bytes == 0),
                "case {case}: nothing read from it"
            );
        }
        for i in out.issues() {
            assert!(!i.to_string().is_empty());
        }
    }
}

#[test]
fn torn_heads_impossible_times_and_random_bytes_are_counted_never_silent() {
    let mut rng = Rng::new(0x70_42);
    let mut damaged = [0; 4];
    for case in 0..600 {
        let start = (rng.bits(32) as u32) & !1;
        let count = 1 + rng.below(1500) as usize;
        let mut r = ring(&mut rng, start, count);
        let mut w = block(Risc::Ncrisc, &r);
        let n = r.records.len();
        let what = case % 4;
        let mut expect_error = false;
        let mut keep = n; // records that must come out exactly
        match what {
            // HEAD inside a record (a torn publish).
            0 if n > 1 => {
                let k = 1 + rng.below(n as u64 - 1) as usize;
                let len =
                    r.at.get(k + 1)
                        .copied()
                        .unwrap_or(r.head)
                        .wrapping_sub(r.at[k]);
                if len > 4 {
                    w[(ring::HEAD / 4) as usize] =
                        r.at[k].wrapping_add(2 + 2 * rng.below(len as u64 / 2 - 1) as u32);
                    expect_error = true;
                    keep = k;
                }
            }
            // A record whose time goes back: a 64-bit zone ending before the reference.
            1 if n > 2 => {
                let k = 1 + rng.below(n as u64 - 2) as usize;
                let e = encode(
                    &Record::Zone {
                        id: 1,
                        end: 5,
                        duration: 1,
                        value: None,
                    },
                    0,
                )
                .unwrap();
                let long = encode(
                    &Record::Zone {
                        id: 1,
                        end: 1 << 40,
                        duration: 1,
                        value: None,
                    },
                    0,
                )
                .unwrap();
                let zone64 = e.halves[1] & 0x8000 == 0 && long.bytes() == 20;
                if zone64 && r.head.wrapping_sub(r.at[k]) >= 20 && (r.at[k] % CAP) + 20 <= CAP {
                    // [id, Zone64 header, start = 0, end = 1] over record k (and what follows
                    // it): an end far before every time here.
                    let mut h = long.halves;
                    h[2..10].copy_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
                    for (j, x) in h[..10].iter().enumerate() {
                        let o = ((r.at[k] % CAP) + 2 * j as u32) as usize;
                        r.bytes[o..o + 2].copy_from_slice(&x.to_le_bytes());
                    }
                    expect_error = true;
                    keep = k;
                }
            }
            // Random bytes anywhere in the live span.
            2 => {
                for _ in 0..1 + rng.below(8) {
                    let o = (r
                        .start
                        .wrapping_add(rng.below(r.head.wrapping_sub(r.start) as u64 + 1) as u32)
                        % CAP) as usize;
                    r.bytes[o] = rng.next_u64() as u8;
                }
                keep = 0;
            }
            _ => {}
        }
        let mem = device(&[(Risc::Ncrisc, &r, w)]);
        let out = read(&mem);
        let published = w[(ring::HEAD / 4) as usize].wrapping_sub(r.start);
        accounted(&out, Risc::Ncrisc, published, r.pad_bytes);
        let got = out
            .rings()
            .iter()
            .find(|x| x.id.risc == Risc::Ncrisc)
            .map(|x| records(&x.records))
            .unwrap_or_default();
        assert_eq!(
            got[..keep.min(got.len())],
            r.records[..keep.min(got.len())],
            "case {case} ({what}): records before the damage"
        );
        if what == 3 {
            assert_eq!(got, r.records, "case {case}: undamaged");
            assert!(
                out.issues().iter().all(|i| !i.is_error()),
                "case {case}: {:?}",
                out.issues()
            );
        }
        if expect_error {
            damaged[what] += 1;
            assert_eq!(
                got.len(),
                keep,
                "case {case} ({what}): every record before the damage, none after"
            );
            let errors = errors_at(out.issues(), Risc::Ncrisc);
            assert!(
                !errors.is_empty(),
                "case {case} ({what}): an error names the ring"
            );
            assert!(
                errors.iter().any(|i| i.count > 0),
                "case {case}: with a count: {errors:?}"
            );
        }
    }
    assert!(
        damaged[0] > 100 && damaged[1] > 100,
        "the corpus tears heads and breaks times often: {damaged:?}"
    );
}

#[test]
fn a_head_that_goes_back_between_drains_is_an_error_and_later_data_is_skipped_not_misread() {
    let mut rng = Rng::new(7);
    let r = ring(&mut rng, 0, 500);
    let mem = device(&[(Risc::Trisc2, &r, block(Risc::Trisc2, &r))]);
    let mut d = Drainer::attach(
        &mem,
        DrainOptions {
            consume: true,
            attach_consumer: false,
        },
    )
    .unwrap();
    d.drain().unwrap();
    let head = profiler::ring_word(Risc::Trisc2, ring::HEAD);
    mem.write_u32(0, TILE, head, r.head - 100).unwrap();
    d.drain().unwrap();
    mem.write_u32(0, TILE, head, r.head + 40).unwrap();
    d.drain().unwrap();
    let out = d.finish().unwrap();
    assert_eq!(
        records(&out.rings()[0].records),
        r.records,
        "what was read before stays"
    );
    let errors = errors_at(out.issues(), Risc::Trisc2);
    assert_eq!(errors.len(), 1, "{:?}", out.issues());
    assert!(
        errors[0].what.contains("beyond the ring's capacity"),
        "{}",
        errors[0]
    );
}

#[test]
fn attaching_where_an_earlier_consumer_left_tail_warns_about_the_records_before_the_next_run() {
    let mut rng = Rng::new(11);
    let r = ring(&mut rng, 0, 300);
    // An earlier consumer took the first 20 records: this readout starts mid-launch.
    let mut w = block(Risc::Brisc, &r);
    w[(ring::TAIL / 4) as usize] = r.at[20];
    let out = read(&device(&[(Risc::Brisc, &r, w)]));
    let warn: Vec<&Issue> = out
        .issues()
        .iter()
        .filter(|i| i.what.contains("earlier consumer left TAIL"))
        .collect();
    assert_eq!(warn.len(), 1, "{:?}", out.issues());
    assert_eq!(
        warn[0].count,
        r.records.len() as u64 - 20,
        "every record read, none before a Run"
    );
    assert_eq!(
        out.rings()[0].records.len(),
        r.records.len() - 20,
        "all of them are still read"
    );
    // From the ring's first byte, nothing to warn about.
    let out = read(&device(&[(Risc::Brisc, &r, block(Risc::Brisc, &r))]));
    assert!(
        out.issues()
            .iter()
            .all(|i| !i.what.contains("earlier consumer")),
        "{:?}",
        out.issues()
    );
}

#[test]
fn a_forged_time_near_2_64_makes_the_ring_corrupt_from_the_record_that_would_wrap() {
    // Two short zones in the middle of a ring replaced by a 64-bit Time record at u64::MAX:
    // the short zone after it has no time at or after u64::MAX with its low bits. Before,
    // its time wrapped to near 0 (times ran backwards; an overflow panic with overflow checks
    // on); now the ring is corrupt from that record, with a count, and nothing after it is
    // read.
    let mut rng = Rng::new(0x2064);
    let mut checked = 0;
    for case in 0..40 {
        let start = (rng.bits(32) as u32) & !1;
        let mut r = ring(&mut rng, start, 400);
        let short = |k: usize| r.at.get(k + 1).map(|&e| e.wrapping_sub(r.at[k])) == Some(6);
        let Some(k) = (10..r.records.len().saturating_sub(3))
            .find(|&k| short(k) && short(k + 1) && short(k + 2) && (r.at[k] % CAP) + 12 <= CAP)
        else {
            continue;
        };
        let e = encode(&Record::Time { time: u64::MAX }, 0).unwrap();
        for (j, h) in e.as_slice().iter().enumerate() {
            let o = ((r.at[k] % CAP) + 2 * j as u32) as usize;
            r.bytes[o..o + 2].copy_from_slice(&h.to_le_bytes());
        }
        // The zone after it ends exactly at u64::MAX only if its end16 is 0xFFFF.
        let end16 = u16::from_le_bytes(
            r.bytes[(r.at[k + 2] % CAP) as usize + 4..][..2]
                .try_into()
                .unwrap(),
        );
        if end16 == 0xFFFF {
            continue;
        }
        checked += 1;
        let w = block(Risc::Brisc, &r);
        let out = read(&device(&[(Risc::Brisc, &r, w)]));
        let got = records(&out.rings()[0].records);
        let mut want = r.records[..k].to_vec();
        want.push(Record::Time { time: u64::MAX });
        assert_eq!(
            got, want,
            "case {case}: every record before the forged time, and it"
        );
        accounted(&out, Risc::Brisc, r.head.wrapping_sub(r.start), r.pad_bytes);
        let errors = errors_at(out.issues(), Risc::Brisc);
        assert_eq!(errors.len(), 1, "case {case}: {:?}", out.issues());
        assert!(
            errors[0].what.contains("would wrap") && errors[0].count > 0,
            "case {case}: {}",
            errors[0]
        );
    }
    assert!(checked > 20, "the corpus forges times often ({checked})");
}
