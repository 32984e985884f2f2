//! Producer tests on the host simulator: what the runtime writes decodes to exactly what
//! happened, whatever the ring, the clock and the consumer do.

extern crate std;

use crate::sim::Sim;
use crate::wire::{self, Decoded, Record};
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, Risc};
use std::cell::RefCell;
use std::rc::Rc;
use std::vec::Vec;

const RISC: Risc = Risc::Ncrisc;

fn word(l1: &[u8], addr: u32) -> u32 {
    u32::from_le_bytes(l1[addr as usize..addr as usize + 4].try_into().unwrap())
}

fn set_word(l1: &mut [u8], addr: u32, v: u32) {
    l1[addr as usize..addr as usize + 4].copy_from_slice(&v.to_le_bytes());
}

/// A consumer: reads the published span, decodes it, and (if `advance`) frees it.
#[derive(Default)]
struct Reader {
    reference: u64,
    records: Vec<Record>,
    bytes: u64,
}

impl Reader {
    fn drain(&mut self, l1: &mut [u8], advance: bool) {
        let blk = profiler::ring_block(RISC);
        let (base, cap) = (word(l1, blk + ring::BASE), word(l1, blk + ring::CAPACITY));
        let head = word(l1, blk + ring::HEAD);
        let mut pos = word(l1, blk + ring::TAIL);
        while pos != head {
            let off = pos % cap;
            let to_end = cap - off;
            if to_end < 4 {
                pos = pos.wrapping_add(to_end);
                continue;
            }
            let avail = head.wrapping_sub(pos).min(to_end);
            let halves: Vec<u16> = (0..avail / 2)
                .map(|i| {
                    let a = (base + off + 2 * i) as usize;
                    u16::from_le_bytes([l1[a], l1[a + 1]])
                })
                .collect();
            match wire::decode(&halves, self.reference).expect("published bytes decode") {
                Decoded::Pad => pos = pos.wrapping_add(to_end),
                Decoded::Record(r, n) => {
                    if let Some(t) = r.ref_time() {
                        self.reference = t;
                    }
                    self.records.push(r);
                    self.bytes += 2 * n as u64;
                    pos = pos.wrapping_add(2 * n as u32);
                }
            }
        }
        if advance {
            set_word(l1, blk + ring::TAIL, pos);
        }
    }

    fn zones(&self) -> Vec<(u16, u64, u64)> {
        self.records
            .iter()
            .filter_map(|r| match *r {
                Record::Zone {
                    id,
                    end,
                    duration,
                    value: None,
                } => Some((id, end - duration, end)),
                _ => None,
            })
            .collect()
    }
}

fn setup(clock: u64) -> Sim {
    let sim = Sim::install(Arch::WormholeB0, RISC, clock);
    sim.set_tick(0);
    sim
}

/// Writes a valid tile block, as a launcher does at session start.
fn launcher_init(sim: &Sim, control: u32, consumer: bool) {
    sim.write_u32(profiler::TILE_BLOCK + tile::MAGIC, profiler::TILE_MAGIC);
    sim.write_u32(profiler::TILE_BLOCK + tile::VERSION, profiler::VERSION);
    sim.write_u32(profiler::TILE_BLOCK + tile::CONTROL, control);
    sim.write_u32(profiler::TILE_BLOCK + tile::CONSUMER, consumer as u32);
}

fn drain_now(sim: &Sim, reader: &mut Reader) {
    let mut l1 = sim.l1();
    reader.drain(&mut l1, true);
    let tail = profiler::ring_word(RISC, ring::TAIL);
    sim.write_u32(tail, word(&l1, tail));
}

/// Opens `depth` nested zones `gap` cycles apart, each lasting `len` more cycles than its child.
fn nested(sim: &Sim, depth: u32, gap: u64, len: u64) -> Vec<(u64, u64)> {
    let mut spans = Vec::new();
    fn go(sim: &Sim, depth: u32, gap: u64, len: u64, spans: &mut Vec<(u64, u64)>) {
        if depth == 0 {
            return;
        }
        sim.advance(gap);
        let start = sim.clock();
        let z = crate::zone!("nested");
        go(sim, depth - 1, gap, len, spans);
        sim.advance(len);
        let end = sim.clock();
        drop(z);
        spans.push((start, end));
    }
    go(sim, depth, gap, len, &mut spans);
    spans
}

#[test]
fn short_zones_decode_to_exact_times_in_six_bytes_each() {
    let sim = setup(1_000);
    assert!(sim.begin_launch(7));
    let mut expected = Vec::new();
    for i in 0..50u64 {
        sim.advance(13 + i);
        let s = sim.clock();
        let z = crate::zone!("loop-body");
        sim.advance(40 + 3 * i);
        let e = sim.clock();
        drop(z);
        expected.push((s, e));
    }
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    assert!(matches!(
        r.records[0],
        Record::Run {
            run_id: 7,
            time: 1_000
        }
    ));
    let zones: Vec<(u64, u64)> = r.zones().iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(zones, expected);
    assert_eq!(
        r.bytes,
        16 + 50 * 6,
        "one Run record, then 6 bytes per zone"
    );
    let name = &sim.sites()[r.zones()[0].0 as usize];
    assert!(name.contains("\"n\":\"loop-body\""), "{name}");
}

#[test]
fn a_typed_wait_is_a_zone_on_the_wire_with_its_resource_in_the_metadata() {
    let sim = setup(1_000);
    assert!(sim.begin_launch(3));
    let plain = |sim: &Sim| {
        let _z = crate::zone!("plain");
        sim.advance(20);
    };
    let typed = |sim: &Sim| {
        let _w = crate::wait!("wait-in0", cb_front(16));
        sim.advance(20);
    };
    plain(&sim);
    typed(&sim);
    {
        let _n = crate::wait!("noc", noc_read);
        sim.advance(5);
    }
    {
        let _s = crate::sum_wait!("sum-wait", cb_back(2));
        sim.advance(7);
    }
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    // `zones()` keeps plain zone records (no value): a wait is one, in the same 6 bytes.
    let zones = r.zones();
    assert_eq!(zones.len(), 3);
    assert_eq!(
        (zones[0].2 - zones[0].1, zones[1].2 - zones[1].1),
        (20, 20),
        "a wait times like a zone"
    );
    let sites = sim.sites();
    let meta = |id: u16| sites[id as usize].clone();
    assert!(meta(zones[0].0).contains("\"n\":\"plain\"") && !meta(zones[0].0).contains("\"w\""));
    assert!(
        meta(zones[1].0).contains("\"k\":\"zone\"")
            && meta(zones[1].0).contains("\"w\":\"cb_front:16\""),
        "{}",
        meta(zones[1].0)
    );
    assert!(meta(zones[2].0).contains("\"w\":\"noc_read\""));
    // A sum wait's site is written at kernel exit, on the device only (tests/tests/analysis.rs reads one).
}

#[test]
fn nested_long_and_far_apart_zones_keep_exact_times() {
    let sim = setup(5);
    assert!(sim.begin_launch(1));
    let mut expected = nested(&sim, 4, 10, 20);
    expected.extend(nested(&sim, 3, 100_000, 3));
    expected.extend(nested(&sim, 2, 7, 1 << 20));
    // Within a launch, gaps and zones up to 2^32 cycles (the launch stays below 2^32 cycles;
    // see docs/design/ring-encoding.md for how the host checks longer launches).
    expected.extend(nested(&sim, 2, 1 << 30, 1 << 29));
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let got: Vec<(u64, u64)> = r.zones().iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(got, expected);
}

#[test]
fn a_launch_across_the_32_bit_clock_wrap_is_exact() {
    let sim = setup(u32::MAX as u64 - 300);
    assert!(sim.begin_launch(1));
    let mut expected = Vec::new();
    for _ in 0..40 {
        expected.extend(nested(&sim, 2, 9, 11));
    }
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let got: Vec<(u64, u64)> = r.zones().iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(got, expected);
    assert!(expected.last().unwrap().1 > u32::MAX as u64);
}

#[test]
fn block_policy_waits_for_a_slow_consumer_and_loses_nothing() {
    let sim = setup(0);
    let reader = Rc::new(RefCell::new(Reader::default()));
    let r2 = reader.clone();
    launcher_init(&sim, 0, true);
    // A consumer that frees space only when the producer waits: every wait is a stall.
    sim.set_consumer(move |l1| r2.borrow_mut().drain(l1, true));
    assert!(sim.begin_launch(3));
    let n = 5_000u64;
    let mut expected = Vec::new();
    for _ in 0..n {
        expected.extend(nested(&sim, 1, 2, 5));
    }
    sim.end_launch();
    let mut l1 = sim.l1();
    reader.borrow_mut().drain(&mut l1, true);
    let r = reader.borrow();
    let stall_id = r
        .zones()
        .iter()
        .map(|z| z.0)
        .find(|id| sim.sites()[*id as usize].contains("PROFILER-STALL"));
    let stall_id = stall_id.expect("stall zones recorded");
    let user: Vec<(u64, u64)> = r
        .zones()
        .iter()
        .filter(|z| z.0 != stall_id)
        .map(|z| (z.1, z.2))
        .collect();
    assert_eq!(user, expected, "every zone delivered, in order, exact");
    let stalls = r.zones().iter().filter(|z| z.0 == stall_id).count() as u32;
    assert!(stalls > 0);
    assert_eq!(
        stalls,
        sim.read_u32(profiler::ring_word(RISC, ring::STALLS))
    );
    assert_eq!(sim.read_u32(profiler::ring_word(RISC, ring::DROPPED)), 0);
}

#[test]
fn drop_policy_counts_exactly_what_it_drops() {
    for consumer in [false, true] {
        let sim = setup(0);
        launcher_init(
            &sim,
            tile::POLICY_DROP << tile::CONTROL_POLICY_SHIFT,
            consumer,
        );
        assert!(sim.begin_launch(9));
        let mut reader = Reader::default();
        let produced = 6_000u64;
        for i in 0..produced {
            nested(&sim, 1, 3, 4);
            if consumer && i % 700 == 0 {
                drain_now(&sim, &mut reader); // too slow: the ring holds ~1365 zones
            }
        }
        sim.end_launch();
        drain_now(&sim, &mut reader);
        let delivered = reader.zones().len() as u64;
        let dropped = sim.read_u32(profiler::ring_word(RISC, ring::DROPPED)) as u64;
        let reported: u64 = reader
            .records
            .iter()
            .map(|r| {
                if let Record::Loss { count, .. } = r {
                    *count as u64
                } else {
                    0
                }
            })
            .sum();
        assert!(dropped > 0, "the ring overflowed");
        assert_eq!(delivered + dropped, produced, "consumer={consumer}");
        // Losses still pending at exit are in the counter but not yet in a Loss record.
        assert!(reported <= dropped);
        let times: Vec<u64> = reader.zones().iter().map(|z| z.2).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "delivered zones stay in time order"
        );
    }
}

#[test]
fn recording_off_writes_nothing_and_on_again_at_next_launch() {
    let sim = setup(0);
    assert!(sim.begin_launch(1));
    nested(&sim, 2, 5, 5);
    // The host switches recording off: CONTROL bit, then the hot word's L1 copy. The core's
    // hot word is in its local RAM, which the host cannot reach: zones that close on the hot
    // path still record until the next slow path, which honours the switch.
    sim.write_u32(profiler::TILE_BLOCK + tile::CONTROL, tile::CONTROL_DISABLE);
    sim.write_u32(profiler::ring_word(RISC, ring::ANCHOR), 0);
    nested(&sim, 3, 5, 5);
    sim.advance(1 << 16);
    nested(&sim, 1, 5, 5);
    nested(&sim, 3, 5, 5);
    sim.end_launch();
    assert!(!sim.begin_launch(2));
    nested(&sim, 3, 5, 5);
    sim.end_launch();
    sim.write_u32(profiler::TILE_BLOCK + tile::CONTROL, 0);
    assert!(sim.begin_launch(3));
    let expected = nested(&sim, 1, 5, 5);
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    assert_eq!(
        r.zones().len(),
        2 + 3 + 1 + 1,
        "launch 1: 2 zones, 3 on the hot path after the switch, 1 slow close that honours it"
    );
    assert_eq!((r.zones()[6].1, r.zones()[6].2), expected[0]);
    let runs: Vec<u32> = r
        .records
        .iter()
        .filter_map(|x| {
            if let Record::Run { run_id, .. } = x {
                Some(*run_id)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(runs, [1, 3]);
}

/// A long zone's close writes the anchor without re-reading the hot word (`records.rs`):
/// `tp < gp` proves recording is on. A record inside it whose slow path honours the host's
/// switch clears the hot word and lowers `gp`, so the long close takes the slow path and
/// recording stays off (were `gp` left up, the close would write a non-zero anchor and
/// switch recording back on).
#[test]
fn a_long_zone_closed_after_recording_went_off_keeps_it_off() {
    let sim = setup(0);
    assert!(sim.begin_launch(1));
    let start = sim.clock();
    let outer = crate::zone!("outer");
    sim.advance(10);
    // The host switches recording off; the next record 2^16 cycles after the anchor takes
    // the slow path, which writes it and then honours the switch.
    sim.write_u32(profiler::TILE_BLOCK + tile::CONTROL, tile::CONTROL_DISABLE);
    sim.advance(1 << 16);
    crate::event!("inside");
    assert_eq!(
        crate::sim::hw::hot(),
        0,
        "the slow path switched recording off"
    );
    sim.advance(1 << 16);
    let end = sim.clock();
    drop(outer);
    assert_eq!(
        crate::sim::hw::hot(),
        0,
        "the long close left recording off"
    );
    nested(&sim, 2, 5, 5);
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    // The zone opened while recording was on is recorded, exactly; nothing after it.
    assert_eq!(r.zones(), [(r.zones()[0].0, start, end)]);
    let events = r
        .records
        .iter()
        .filter(|x| matches!(x, Record::Event { .. }));
    assert_eq!(events.count(), 1);
}

/// Nested block-form zones (`zone!(name, { ... })`), `gap` cycles apart and each `len`
/// cycles longer than its child; returns each zone's span and the depth the blocks reached.
fn nested_blocks(sim: &Sim, depth: u32, gap: u64, len: u64, spans: &mut Vec<(u64, u64)>) -> u32 {
    if depth == 0 {
        return 0;
    }
    sim.advance(gap);
    let start = sim.clock();
    let inner = crate::zone!("block", {
        let inner = nested_blocks(sim, depth - 1, gap, len, spans);
        sim.advance(len);
        inner + 1
    });
    spans.push((start, sim.clock()));
    inner
}

#[test]
fn block_zones_record_exactly_and_evaluate_to_their_block_either_way() {
    let sim = setup(100);
    assert!(sim.begin_launch(1));
    let mut expected = Vec::new();
    assert_eq!(nested_blocks(&sim, 3, 7, 11, &mut expected), 3);
    assert_eq!(
        nested_blocks(&sim, 2, 1 << 16, 1 << 15, &mut expected),
        2,
        "long ones too"
    );
    // Switched off: the next slow close (a zone after a long gap) honours the switch, then
    // the blocks still run and nothing is recorded.
    sim.write_u32(profiler::TILE_BLOCK + tile::CONTROL, tile::CONTROL_DISABLE);
    sim.write_u32(profiler::ring_word(RISC, ring::ANCHOR), 0);
    sim.advance(1 << 16);
    assert_eq!(nested_blocks(&sim, 1, 7, 11, &mut expected), 1);
    assert_eq!(nested_blocks(&sim, 3, 7, 11, &mut Vec::new()), 3);
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let got: Vec<(u64, u64)> = r.zones().iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(got, expected);
    assert!(r
        .zones()
        .iter()
        .all(|z| sim.sites()[z.0 as usize].contains("\"n\":\"block\"")));
}

#[test]
fn events_data_value_and_sum_zones_round_trip() {
    let sim = setup(100);
    assert!(sim.begin_launch(4));
    sim.advance(10);
    crate::event!("tick");
    // A gap longer than the hot path's 2^15-cycle window (within the 2^32 cycles of a
    // launch, which the 32-bit hot path assumes): the slow path writes the datum.
    sim.advance(1 << 20);
    crate::data!("bytes", 0xDEAD_BEEF_0000_0001);
    {
        let mut z = crate::value_zone!("tiles", 3);
        sim.advance(50);
        z.set(8);
    }
    let sum_site = crate::__site!(crate, sum, "wait");
    static SUM: crate::SumZone = crate::SumZone::__new(crate::__site!(crate, sum, "wait-static"));
    for _ in 0..4 {
        let _m = SUM.measure();
        sim.advance(25);
    }
    SUM.emit();
    let _ = sum_site;
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let kinds: Vec<&Record> = r.records.iter().skip(1).collect();
    assert!(matches!(kinds[0], Record::Event { time: 110, .. }));
    // After the long gap, the datum in its 32-bit-time form (16 bytes), no anchor record.
    assert_eq!(r.records.len(), 5, "{:?}", r.records);
    assert!(
        matches!(kinds[1], Record::Data { data: 0xDEAD_BEEF_0000_0001, time, .. } if *time == 110 + (1 << 20))
    );
    assert!(matches!(
        kinds[2],
        Record::Zone {
            value: Some(8),
            duration: 50,
            ..
        }
    ));
    assert!(matches!(
        kinds[3],
        Record::Sum {
            count: 4,
            total: 100,
            ..
        }
    ));
}

/// A counted zone is a value zone on the wire whose site says which bank it counts; the
/// host simulator has no counters, so its change is 0.
#[test]
fn a_counted_zone_is_a_value_zone_of_a_counted_site() {
    let sim = setup(100);
    assert!(sim.begin_launch(4));
    {
        let _z = crate::counted_zone!("mm");
        sim.advance(30);
    }
    {
        let _z = crate::counted_zone!("unpacked", unpack);
        sim.advance(20);
    }
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let zones: Vec<&Record> = r.records.iter().skip(1).collect();
    assert!(
        zones
            .iter()
            .all(|z| matches!(z, Record::Zone { value: Some(0), .. })),
        "{zones:?}"
    );
    let sites = sim.sites();
    assert!(
        sites
            .iter()
            .any(|s| s.contains("\"k\":\"counted_fpu\",\"n\":\"mm\"")),
        "{sites:?}"
    );
    assert!(sites
        .iter()
        .any(|s| s.contains("\"k\":\"counted_unpack\",\"n\":\"unpacked\"")));
}

#[test]
fn a_torn_ring_block_is_reinitialised_at_launch() {
    let sim = setup(0);
    assert!(sim.begin_launch(1));
    nested(&sim, 1, 1, 1);
    sim.end_launch();
    // Corrupt the head beyond the capacity: the next launch starts a fresh ring.
    sim.write_u32(profiler::ring_word(RISC, ring::HEAD), 0x10_0000);
    assert!(sim.begin_launch(2));
    let expected = nested(&sim, 1, 1, 1);
    sim.end_launch();
    assert_eq!(sim.read_u32(profiler::ring_word(RISC, ring::TAIL)), 0);
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    assert!(matches!(r.records[0], Record::Run { run_id: 2, .. }));
    assert_eq!((r.zones()[0].1, r.zones()[0].2), expected[0]);
}

#[test]
fn op_level_zones_cost_twelve_bytes_and_short_zones_after_a_gap_stay_exact() {
    let sim = setup(0);
    assert!(sim.begin_launch(1));
    let head = || sim.read_u32(profiler::ring_word(RISC, ring::HEAD));
    let mut expected = Vec::new();
    // Op-level: 200k-cycle gaps, 1M-cycle zones.
    sim.end_launch();
    let before = head();
    assert!(sim.begin_launch(2));
    for _ in 0..20 {
        expected.extend(nested(&sim, 1, 200_000, 1_000_000));
    }
    sim.end_launch();
    let op_level_bytes = head() - before - 16; // minus the Run record
    assert_eq!(op_level_bytes, 20 * 12);
    // A short zone after a long gap: one 12-byte record, no separate anchor record.
    let before = head();
    assert!(sim.begin_launch(3));
    expected.extend(nested(&sim, 1, 100_000, 10));
    // ...and the dense zones after it are 6 bytes again.
    for _ in 0..10 {
        expected.extend(nested(&sim, 2, 3, 4));
    }
    sim.end_launch();
    assert_eq!(head() - before - 16, 12 + 10 * 2 * 6);
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let got: Vec<(u64, u64)> = r.zones().iter().map(|z| (z.1, z.2)).collect();
    assert_eq!(got, expected);
}

/// xorshift64*: every failure reproduces from its seed.
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }

    /// A gap or a length at a random scale: mostly short, often right at the short form's
    /// 2^15 and 2^16 bounds, now and then far beyond them.
    fn cycles(&mut self) -> u64 {
        match self.below(10) {
            0..=5 => self.below(64),
            6 => self.below(400),
            7 => (1 << 15) - 40 + self.below(80),
            8 => (1 << 16) - 40 + self.below(80),
            _ => self.below(1 << 20),
        }
    }
}

/// A random tree of nested zones (up to `depth` levels, up to 3 children each) with random
/// gaps and lengths, and an event now and then; appends each zone's span as it closes.
fn random_tree(
    sim: &Sim,
    g: &mut Gen,
    depth: u32,
    zones: &mut Vec<(u64, u64)>,
    events: &mut Vec<u64>,
) {
    sim.advance(g.cycles());
    if g.below(6) == 0 {
        events.push(sim.clock());
        crate::event!("random-event");
    }
    let start = sim.clock();
    let z = crate::zone!("random");
    for _ in 0..if depth == 0 { 0 } else { g.below(4) } {
        random_tree(sim, g, depth - 1, zones, events);
    }
    sim.advance(g.cycles());
    let end = sim.clock();
    drop(z);
    zones.push((start, end));
}

#[test]
fn random_zone_trees_round_trip_exactly_through_a_slow_consumer() {
    for seed in 1..=24u64 {
        let sim = setup(seed * 1_000_003);
        let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let reader = Rc::new(RefCell::new(Reader::default()));
        let r2 = reader.clone();
        launcher_init(&sim, 0, true);
        // Frees space only when the producer waits, and at random points in between.
        sim.set_consumer(move |l1| r2.borrow_mut().drain(l1, true));
        assert!(sim.begin_launch(seed as u32));
        let (mut zones, mut events) = (Vec::new(), Vec::new());
        for _ in 0..600 {
            random_tree(&sim, &mut g, 3, &mut zones, &mut events);
            if g.below(8) == 0 {
                drain_now(&sim, &mut reader.borrow_mut());
            }
        }
        sim.end_launch();
        drain_now(&sim, &mut reader.borrow_mut());
        let r = reader.borrow();
        let name = |id: u16| sim.sites()[id as usize].clone();
        let got: Vec<(u64, u64)> = r
            .zones()
            .iter()
            .filter(|z| name(z.0).contains("\"n\":\"random\""))
            .map(|z| (z.1, z.2))
            .collect();
        assert_eq!(
            got, zones,
            "seed {seed}: every zone, in close order, with exact times"
        );
        let got_events: Vec<u64> = r
            .records
            .iter()
            .filter_map(|x| {
                if let Record::Event { time, .. } = *x {
                    Some(time)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(got_events, events, "seed {seed}");
        assert_eq!(
            sim.read_u32(profiler::ring_word(RISC, ring::DROPPED)),
            0,
            "seed {seed}"
        );
        assert!(
            zones.len() > 600 && r.bytes > 3 * profiler::ring_data(RISC).size as u64,
            "seed {seed}: the ring wrapped"
        );
    }
}

/// Issue 39: events, data, value zones and long zones in a loop, interleaved with short
/// zones, past many anchor moves (2^15 cycles) and ring wraps, decode to exactly what
/// happened, and every one after the first slow path is written in its short form.
#[test]
fn mixed_records_in_a_loop_decode_exactly_in_their_short_forms() {
    let sim = setup(1_000);
    let reader = Rc::new(RefCell::new(Reader::default()));
    let r2 = reader.clone();
    launcher_init(&sim, 0, true);
    // The hot paths publish nothing: a consumer drains when the producer waits for room.
    sim.set_consumer(move |l1| r2.borrow_mut().drain(l1, true));
    assert!(sim.begin_launch(9));
    let mut expected = Vec::new();
    for i in 0..3_000u64 {
        sim.advance(7);
        {
            let _z = crate::zone!("short");
            sim.advance(5);
            let t = sim.clock();
            crate::event!("tick");
            expected.push(Record::Event { id: 0, time: t });
            sim.advance(3);
            let t = sim.clock();
            crate::data!("small", i);
            expected.push(Record::Data {
                id: 0,
                time: t,
                data: i,
            });
            let t = sim.clock();
            crate::data!("big", i << 40 | 1);
            expected.push(Record::Data {
                id: 0,
                time: t,
                data: i << 40 | 1,
            });
            let start = sim.clock();
            let v = crate::value_zone!("value", i as u32);
            sim.advance(11);
            drop(v);
            expected.push(Record::Zone {
                id: 0,
                end: start + 11,
                duration: 11,
                value: Some(i as u32),
            });
        }
        if i % 500 == 499 {
            // A zone longer than the hot path's window: the 32-bit form.
            let start = sim.clock();
            let z = crate::zone!("long");
            sim.advance(100_000);
            drop(z);
            expected.push(Record::Zone {
                id: 0,
                end: start + 100_000,
                duration: 100_000,
                value: None,
            });
        }
    }
    sim.end_launch();
    let mut r = reader.borrow_mut();
    drain_now(&sim, &mut r);
    // Everything but the short zones (checked by the other tests) and the launch's own records.
    let got: Vec<Record> = r
        .records
        .iter()
        .filter_map(|rec| match *rec {
            Record::Zone {
                duration, value, ..
            } if value.is_none() && duration < 1 << 15 => None,
            Record::Zone {
                end,
                duration,
                value,
                ..
            } => Some(Record::Zone {
                id: 0,
                end,
                duration,
                value,
            }),
            Record::Event { time, .. } => Some(Record::Event { id: 0, time }),
            Record::Data { time, data, .. } => Some(Record::Data { id: 0, time, data }),
            _ => None,
        })
        .collect();
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "the decoded records differ from what happened"
    );
    // 6 + 6 + 10 + 14 + 12 bytes per iteration in the short forms, the long zones 12 each;
    // the slow paths (an anchor move per 2^15 cycles, a wrap per 8 KiB) add a few bytes.
    let short_forms = 3_000 * 48 + 6 * 12;
    assert!(
        r.bytes >= short_forms && r.bytes < short_forms + short_forms / 50,
        "{} ring bytes for {short_forms} in the short forms",
        r.bytes
    );
}

/// Records more often than every 2^15 cycles never take the slow path once the launch's
/// first record is written: the routines' refresh moves the anchor as they go and publishes
/// (the private copy of the anchor, which only a slow path writes, stays put), and every
/// time decodes exactly.
#[test]
fn frequent_records_refresh_the_anchor_without_the_slow_path() {
    let sim = setup(5);
    assert!(sim.begin_launch(1));
    crate::event!("first");
    let private_anchor = || {
        sim.read_u32(profiler::ring_word(
            RISC,
            crate::producer::private::ANCHOR_LO,
        ))
    };
    let slow = private_anchor();
    let mut expected = Vec::new();
    // 900 records 150 cycles apart: 135,000 cycles, four 2^15 windows, 6.3 KB (no wrap).
    for i in 0..300u64 {
        sim.advance(150);
        expected.push(sim.clock());
        crate::event!("tick");
        sim.advance(150);
        expected.push(sim.clock());
        crate::data!("tile", i);
        sim.advance(150);
        let start = sim.clock();
        let _z = crate::zone!("step");
        drop(_z);
        expected.push(start);
    }
    assert_eq!(private_anchor(), slow, "no slow path moved the anchor");
    let head = sim.read_u32(profiler::ring_word(RISC, ring::HEAD));
    assert!(head > 6_000, "the refreshes published {head} bytes");
    sim.end_launch();
    let mut r = Reader::default();
    drain_now(&sim, &mut r);
    let got: Vec<u64> = r
        .records
        .iter()
        .filter_map(|x| match *x {
            Record::Event { time, .. } | Record::Data { time, .. } => Some(time),
            Record::Zone {
                end, duration: 0, ..
            } => Some(end),
            _ => None,
        })
        .skip(1)
        .collect();
    assert_eq!(got, expected);
}
