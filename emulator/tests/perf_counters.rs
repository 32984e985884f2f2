//! Tensix's performance counters as a kernel programs them (tt-metal's `tensix.h`
//! registers, tt-llk's select tables): each counter counts what the coprocessor model did,
//! checked against what the test itself pushed; a counter the model cannot derive stops the
//! run naming it.

mod common;

use common::prog::*;
use riscv_linker::tensix as tt;
use riscv_linker::Risc;

const BASE: u32 = 0xFFB1_2000;
/// First control register (period; mode, start/stop follow) and OUT_L (OUT_H follows).
const INSTRN: (u32, u32) = (BASE, BASE + 0x100);
const FPU: (u32, u32) = (BASE + 0x18, BASE + 0x120);
const L1: (u32, u32) = (BASE + 0x30, BASE + 0x118);
const ALL: u32 = BASE + 0x3C;
const GRANT: u32 = 1 << 16;

/// Mode word: `mode` with counter select `sel` (256 up: the grant side).
fn mode(mode: u32, sel: u32) -> u32 {
    mode | (sel & 0xFF) << 8 | if sel >= 256 { GRANT } else { 0 }
}

fn start(p: &mut Prog, bank: (u32, u32)) {
    p.store(bank.0 + 8, 0).store(bank.0 + 8, 1);
}

fn stop(p: &mut Prog, bank: (u32, u32)) {
    p.store(bank.0 + 8, 0).store(bank.0 + 8, 2);
}

/// Selects `sel` of `bank` (continuous mode) and loads its count into `rd`.
fn read(p: &mut Prog, bank: (u32, u32), sel: u32, rd: u32) {
    p.store(bank.0 + 4, mode(0, sel)).load(rd, bank.1 + 4);
}

#[test]
fn the_fpu_and_instruction_banks_count_what_the_thread_issued() {
    let (matrix, vector) = (40, 7);
    let mut p = Prog::new();
    p.store(FPU.0 + 4, mode(0, 0));
    p.store(INSTRN.0 + 4, mode(0, 264)); // THREAD_INSTRUCTIONS_1
    p.store(ALL, 0).store(ALL, 1); // both banks at once
    for i in 0..matrix + vector {
        // Interleaved, so no cycle could issue both.
        p.tt(if i % 6 == 5 && i / 6 < vector {
            tt::sfpnop()
        } else {
            tt::setrwc(0, 0, 0, 0, 0)
        });
    }
    p.ttsync();
    p.store(ALL, 0).store(ALL, 2);
    read(&mut p, FPU, 0, A[0]); // FPU_COUNTER
    read(&mut p, FPU, 1, A[1]); // SFPU_COUNTER
    read(&mut p, FPU, 257, A[2]); // MATH_COUNTER
    p.load(A[3], FPU.1);
    read(&mut p, INSTRN, 264, A[4]);
    p.load(A[5], INSTRN.1);
    read(&mut p, INSTRN, 256, A[6]); // THREAD_INSTRUCTIONS_0: TRISC0 pushed nothing
    let regs = &run_ok(&[(Risc::Trisc1, &p)])[0];
    let r = |i: usize| regs[A[i] as usize];
    assert_eq!(r(0), matrix, "one FPU cycle per Matrix Unit instruction");
    assert_eq!(r(1), vector, "one SFPU cycle per Vector Unit instruction");
    assert_eq!(r(2), matrix + vector, "MATH is either");
    assert_eq!(r(4), matrix + vector, "every instruction thread 1 issued");
    assert_eq!(r(6), 0);
    assert!(r(3) >= matrix + vector, "cycles counted {}", r(3));
    assert_eq!(r(5), r(3), "PERF_CNT_ALL started and stopped both together");
}

#[test]
fn a_period_stops_the_count_at_its_end() {
    let mut p = Prog::new();
    p.store(FPU.0, 100).store(FPU.0 + 4, mode(1, 0));
    start(&mut p, FPU);
    for _ in 0..300 {
        p.tt(tt::setrwc(0, 0, 0, 0, 0));
    }
    p.ttsync();
    p.load(A[0], FPU.1).load(A[1], FPU.1 + 4);
    stop(&mut p, FPU);
    p.load(A[2], FPU.1).load(A[3], FPU.1 + 4);
    let regs = &run_ok(&[(Risc::Trisc1, &p)])[0];
    let r = |i: usize| regs[A[i] as usize];
    assert_eq!(r(0), 100, "OUT_L stops at the period");
    assert!(r(1) > 0 && r(1) <= 100, "at most one a cycle: {}", r(1));
    assert!(r(1) < 300, "the count stopped with the period");
    assert_eq!((r(2), r(3)), (r(0), r(1)), "a later stop changes nothing");
}

#[test]
fn a_semaphore_wait_counts_as_a_stall_of_its_thread() {
    // TRISC1 waits on semaphore 0 (zero) until TRISC0 posts it after a spin.
    let mut math = Prog::new();
    math.tt(tt::seminit(1, 0, 1));
    math.ttsync();
    start(&mut math, INSTRN);
    math.tt(tt::semwait(1 << 6, 1, 1))
        .tt(tt::setrwc(0, 0, 0, 0, 0));
    math.ttsync();
    stop(&mut math, INSTRN);
    read(&mut math, INSTRN, 52, A[0]); // WAITING_FOR_NONZERO_SEM_1 (Wormhole)
    read(&mut math, INSTRN, 25, A[1]); // THREAD_STALLS_1
    read(&mut math, INSTRN, 43, A[2]); // WAITING_FOR_NONZERO_SEM_0
    read(&mut math, INSTRN, 16, A[3]); // MATH_INSTRN_AVAILABLE_1
    math.load(A[4], INSTRN.1);
    let mut unpack = Prog::new();
    unpack.spin(300).tt(tt::sempost(1)).ttsync();
    let regs = run_ok(&[(Risc::Trisc1, &math), (Risc::Trisc0, &unpack)]);
    let r = |i: usize| regs[0][A[i] as usize];
    assert!(r(0) > 300, "the wait spans TRISC0's spin: {}", r(0));
    assert!(
        r(1) >= r(0),
        "a waiting thread is stalled: {} < {}",
        r(1),
        r(0)
    );
    assert!(r(3) >= r(0), "the blocked SETRWC was available all along");
    assert!(r(4) >= r(1));
    assert_eq!(r(2), 0, "thread 0 never waited");
}

#[test]
fn a_counter_the_model_cannot_derive_is_refused_by_name() {
    let mut p = Prog::new();
    start(&mut p, L1);
    read(&mut p, L1, 3, A[0]);
    let (_, msg) = run_fault(&[(Risc::Trisc0, &p)]);
    assert!(
        msg.contains("L1 bank") && msg.contains("not modelled"),
        "{msg}"
    );
    assert!(msg.contains("L1's ports"), "{msg}");

    let mut p = Prog::new();
    start(&mut p, INSTRN);
    read(&mut p, INSTRN, 10, A[0]); // XSEARCH: no counter
    let (_, msg) = run_fault(&[(Risc::Trisc0, &p)]);
    assert!(
        msg.contains("select 10 names no counter on wormhole_b0"),
        "{msg}"
    );

    let mut p = Prog::new();
    p.store(FPU.0 + 4, 7);
    start(&mut p, FPU);
    let (_, msg) = run_fault(&[(Risc::Trisc0, &p)]);
    assert!(msg.contains("mode 7"), "{msg}");
}

#[test]
fn a_host_arms_the_banks_before_a_run_and_reads_them_after() {
    let mut p = Prog::new();
    for _ in 0..25 {
        p.tt(tt::setrwc(0, 0, 0, 0, 0));
    }
    p.ttsync();
    let mut dev = common::device(riscv_linker::Arch::WormholeB0);
    dev.arm_perf_counters(&[("FPU", 0), ("INSTRN_THREAD", 264), ("L1", 0)])
        .expect_err("an L1 counter is refused when armed");
    dev.arm_perf_counters(&[("FPU", 0), ("INSTRN_THREAD", 264)])
        .unwrap();
    let (mut dev, r) = run_cores_on(dev, &[(Risc::Trisc1, &p)]);
    r.unwrap();
    let tile = common::t0(riscv_linker::Arch::WormholeB0);
    let (cycles, fpu) = dev.perf_counter(0, tile, "FPU").unwrap();
    let (_, instructions) = dev.perf_counter(0, tile, "INSTRN_THREAD").unwrap();
    assert_eq!(fpu, 25);
    assert_eq!(instructions, 25);
    assert!(cycles >= 25);
    assert_eq!(
        dev.perf_counter(0, tile, "TDMA_PACK").unwrap(),
        (0, 0),
        "never armed"
    );
}
