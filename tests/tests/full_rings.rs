//! Issue 4: full rings are never silent, on the emulator with the real runtime.
//!
//! The `bench` kernel's dense mode writes far more than one 8 KiB ring holds. Whatever the
//! policy and the consumer, the host proves the accounting: zones produced = zones
//! delivered + zones counted as dropped, exactly; Block loses nothing and records every
//! wait as a `PROFILER-STALL` zone; Drop reports its losses in-band.

use riscv_linker::Arch;
use std::path::PathBuf;
use std::sync::OnceLock;
use ttprof::decode::RecordKind;
use ttprof::launch::Policy;
use ttprof::readout::Readout;
use ttprof_demo::bench::{launch, BenchRun, Launched, DENSE};
use ttprof_demo::scenario::build_kernel_set;
use ttprof_tests::workspace;

const ITERATIONS: u32 = 3_000;
/// Zones the kernel produces: two per iteration plus BRISC-FW and BRISC-KERNEL.
const PRODUCED: u64 = 2 * ITERATIONS as u64 + 2;

fn bench_elf() -> &'static PathBuf {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| {
        let dir = workspace().join("target/test-full-rings/kernels");
        build_kernel_set(Arch::WormholeB0, true, &["bench"], &dir).unwrap()["bench"].clone()
    })
}

fn run(name: &str, policy: Policy, drain_every: Option<u64>) -> Launched {
    let r = BenchRun {
        mode: DENSE,
        record: 0,
        iterations: ITERATIONS,
        work: 2,
        recording: true,
        policy,
        drain_every,
    };
    launch(
        Arch::WormholeB0,
        bench_elf(),
        &r,
        &workspace().join("target/test-full-rings").join(name),
    )
    .unwrap()
}

/// Drops reported in the ring itself by `Loss` records.
fn losses_in_band(r: &Readout) -> u64 {
    let records = &r.rings()[0].records;
    (0..records.len())
        .filter(|&i| records.kind()[i] == RecordKind::Loss)
        .map(|i| records.count_at(i) as u64)
        .sum()
}

fn zones(r: &Readout) -> u64 {
    r.zones() as u64
}

#[test]
fn block_with_a_slow_consumer_loses_nothing_and_records_every_wait() {
    let l = run("block-slow", Policy::Block, Some(400_000));
    assert_eq!(l.dropped, 0);
    assert!(
        l.stalls > 0,
        "the consumer was slow enough to make the producer wait"
    );
    // Every zone arrived, plus one PROFILER-STALL zone per wait.
    assert_eq!(zones(&l.readout), PRODUCED + l.stalls as u64);
    assert_eq!(losses_in_band(&l.readout), 0);
    assert!(l.readout.issues().is_empty(), "{:?}", l.readout.issues());
}

#[test]
fn drop_with_a_slow_consumer_counts_exactly_what_it_drops() {
    let l = run("drop-slow", Policy::Drop, Some(400_000));
    assert!(l.dropped > 0);
    assert_eq!(l.stalls, 0, "Drop never waits");
    assert_eq!(zones(&l.readout) + l.dropped as u64, PRODUCED);
    // Drops are reported in the ring itself, before the record that followed them.
    assert!(losses_in_band(&l.readout) > 0);
    assert!(losses_in_band(&l.readout) <= l.dropped as u64);
}

#[test]
fn no_consumer_at_all_drops_and_counts_whatever_the_policy() {
    for policy in [Policy::Drop, Policy::Block] {
        let l = run(&format!("none-{policy:?}"), policy, None);
        assert!(l.dropped > 0, "{policy:?}");
        assert_eq!(l.stalls, 0, "{policy:?}: nobody to wait for");
        assert_eq!(zones(&l.readout) + l.dropped as u64, PRODUCED, "{policy:?}");
        // The ring holds exactly what fitted: the first zones, in order.
        assert!(
            l.ring_bytes <= 8192 + 64,
            "{policy:?}: {} bytes",
            l.ring_bytes
        );
    }
}
