//! Round trips through the real producer: random zone streams recorded by
//! `ttprof_rt::sim::Sim` and drained by the readout's span decoder decode to exactly the
//! zones that were produced, whatever the nesting, gaps, lengths, clock and ring state.

mod common;

use common::*;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, Risc};
use std::cell::RefCell;
use std::rc::Rc;
use ttprof::decode::RecordKind;
use ttprof::testing::Rng;
use ttprof_rt::sim::Sim;

const RISC: Risc = Risc::Trisc1;

/// One random session: `launches` launches of random zone trees, drained by a consumer
/// that runs when the producer waits and, at random, between zones. Returns the host and
/// the expected zones.
fn session(
    seed: u64,
    clock: u64,
    shape: Shape,
    launches: u32,
    trees: u32,
    launch_gap_bits: u32,
) -> (Sim, Rc<RefCell<Host>>, Spans) {
    let mut rng = Rng::new(seed);
    let sim = Sim::install(Arch::WormholeB0, RISC, clock);
    sim.set_tick(0);
    launcher_init(&sim, tile::POLICY_BLOCK, true);
    let host = Rc::new(RefCell::new(Host::new(RISC)));
    let h = host.clone();
    sim.set_consumer(move |l1| h.borrow_mut().drain(l1));
    let mut expected = Vec::new();
    for run in 0..launches {
        sim.advance(rng.bits(launch_gap_bits));
        assert!(sim.begin_launch(100 + run));
        for _ in 0..trees {
            random_zones(&sim, &mut rng, shape, 0, &mut expected);
            if rng.percent(5) {
                host.borrow_mut().poll(&sim);
            }
        }
        sim.end_launch();
    }
    host.borrow_mut().poll(&sim);
    (sim, host, expected)
}

/// Delivered user zones (stall zones removed) as `(name, start, end)`, and the stall count.
fn delivered(sim: &Sim, host: &Host) -> (Vec<(String, u64, u64)>, usize) {
    let mut stalls = 0;
    let mut out = Vec::new();
    for (id, s, e) in host.zones() {
        let name = site_name(sim, id);
        if name == "PROFILER-STALL" {
            stalls += 1;
        } else {
            out.push((name, s, e));
        }
    }
    (out, stalls)
}

fn owned(v: &[(&str, u64, u64)]) -> Vec<(String, u64, u64)> {
    v.iter().map(|(n, s, e)| (n.to_string(), *s, *e)).collect()
}

#[test]
fn dense_nested_zones_across_many_ring_wraps_are_exact() {
    let shape = Shape {
        gap_bits: 6,
        len_bits: 8,
        max_depth: 5,
        max_children: 3,
    };
    for seed in 0..12 {
        let (sim, host, expected) = session(seed, 1_000 + seed * 77, shape, 3, 300, 20);
        let host = host.borrow();
        let (got, stalls) = delivered(&sim, &host);
        assert_eq!(got, owned(&expected), "seed {seed}");
        assert!(
            host.stats.payload_bytes > 4 * profiler::RING_CAPACITY as u64,
            "the ring wrapped several times"
        );
        assert_eq!(
            stalls as u32,
            sim.read_u32(profiler::ring_word(RISC, ring::STALLS)),
            "one stall zone per wait"
        );
        let runs: Vec<u32> = (0..host.records.len())
            .filter(|&i| host.records.kind()[i] == RecordKind::Run)
            .map(|i| host.records.value_at(i) as u32)
            .collect();
        assert_eq!(runs, [100, 101, 102]);
    }
}

#[test]
fn long_gaps_and_long_zones_are_exact() {
    // Gaps up to 2^24 cycles and zones up to 2^22 cycles longer than their children: 32-bit
    // forms; every launch stays below 2^32 cycles (the runtime's documented limit).
    let shape = Shape {
        gap_bits: 24,
        len_bits: 22,
        max_depth: 4,
        max_children: 2,
    };
    for seed in 100..110 {
        let (sim, host, expected) = session(seed, 5, shape, 2, 40, 20);
        let (got, _) = delivered(&sim, &host.borrow());
        assert_eq!(got, owned(&expected), "seed {seed}");
        assert!(
            expected.iter().any(|z| z.2 - z.1 > 1 << 16),
            "long zones present"
        );
    }
}

#[test]
fn launches_across_the_32_bit_clock_wrap_are_exact() {
    let shape = Shape {
        gap_bits: 12,
        len_bits: 10,
        max_depth: 4,
        max_children: 3,
    };
    for seed in 200..208 {
        let (sim, host, expected) = session(seed, u32::MAX as u64 - 30_000, shape, 4, 60, 10);
        let (got, _) = delivered(&sim, &host.borrow());
        assert_eq!(got, owned(&expected), "seed {seed}");
        assert!(expected.first().unwrap().1 < 1 << 32 && expected.last().unwrap().2 > 1 << 32);
    }
}

#[test]
fn drop_policy_delivers_a_subsequence_and_accounts_for_every_loss() {
    let shape = Shape {
        gap_bits: 5,
        len_bits: 6,
        max_depth: 3,
        max_children: 3,
    };
    for (seed, poll_percent) in [(300u64, 0u64), (301, 2), (302, 10), (303, 30)] {
        let mut rng = Rng::new(seed);
        let sim = Sim::install(Arch::WormholeB0, RISC, 0);
        sim.set_tick(0);
        launcher_init(&sim, tile::POLICY_DROP, poll_percent > 0);
        let mut host = Host::new(RISC);
        let mut expected = Vec::new();
        for run in 0..2 {
            assert!(sim.begin_launch(run));
            for _ in 0..800 {
                random_zones(&sim, &mut rng, shape, 0, &mut expected);
                if rng.percent(poll_percent) {
                    host.poll(&sim);
                }
            }
            sim.end_launch();
        }
        host.poll(&sim);
        let (got, stalls) = delivered(&sim, &host);
        assert_eq!(stalls, 0, "Drop never waits");
        let dropped = sim.read_u32(profiler::ring_word(RISC, ring::DROPPED)) as usize;
        assert!(dropped > 0, "seed {seed}: the ring overflowed");
        assert_eq!(
            got.len() + dropped,
            expected.len(),
            "seed {seed}: produced = delivered + dropped"
        );
        // Delivered zones are exactly the produced ones minus the dropped, in order.
        let mut it = owned(&expected).into_iter();
        assert!(
            got.iter().all(|z| it.any(|e| e == *z)),
            "seed {seed}: delivered zones are a subsequence"
        );
        let r = &host.records;
        let in_band: u64 = (0..r.len())
            .filter(|&i| r.kind()[i] == RecordKind::Loss)
            .map(|i| r.count_at(i) as u64)
            .sum();
        // Without a consumer the ring never gets room for a Loss record: the counter alone
        // accounts for the drops.
        assert!(
            in_band <= dropped as u64,
            "seed {seed}: {in_band} reported in-band of {dropped}"
        );
        assert_eq!(
            in_band > 0,
            poll_percent > 0,
            "seed {seed}: Loss records once space was freed"
        );
    }
}
