//! Deadlock detection (`stall`): cores spinning on L1 words or registers nothing will
//! change are stopped early with every core's place and what it polls; loops that will
//! end are left alone.

mod common;

use common::*;
use riscv_linker::noc::{self, counter, NiuMap};
use riscv_linker::{mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, EmuError, FaultKind, RunSummary};

/// `t0`: the address register of the programs.
const P: u32 = 5;
/// `t1`: the value register.
const V: u32 = 6;
/// `t2`: a counter.
const C: u32 = 7;

/// A budget far beyond what detection needs: a run that reaches it was not detected.
const BUDGET: u64 = 100_000_000;

/// Loads `progs` (each followed by `ecall`) on one Wormhole tile and runs them.
fn run_cores(progs: &[(Risc, Vec<u32>)]) -> Result<RunSummary, EmuError> {
    run_cores_with(progs, |_| {})
}

/// [`run_cores`] with the device's configuration adjusted by `adjust`.
fn run_cores_with(
    progs: &[(Risc, Vec<u32>)],
    adjust: impl FnOnce(&mut DeviceConfig),
) -> Result<RunSummary, EmuError> {
    let arch = Arch::WormholeB0;
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.instruction_budget = BUDGET;
    cfg.deadlock_detection = true;
    adjust(&mut cfg);
    let mut dev = Device::new(cfg).expect("device");
    for (risc, words) in progs {
        let mut w = words.clone();
        w.push(ecall());
        dev.load_kernel(0, t0(arch), *risc, &elf_for(arch, *risc, &w), "test.elf")
            .expect("load");
    }
    dev.run()
}

/// `while *addr == 0 {}`.
fn poll(addr: u32) -> Vec<u32> {
    let mut w = li(P, addr).to_vec();
    w.push(lw(V, P, 0));
    w.push(beq(V, 0, -4));
    w
}

/// `while *addr == 0 { tries += 1 }`.
fn counting_poll(addr: u32) -> Vec<u32> {
    let mut w = li(P, addr).to_vec();
    w.extend([lw(V, P, 0), addi(C, C, 1), beq(V, 0, -8)]);
    w
}

#[test]
fn cores_polling_l1_words_nothing_writes_are_a_deadlock_naming_every_core() {
    let r = run_cores(&[(Risc::Brisc, poll(0x30000)), (Risc::Trisc0, poll(0x30004))]);
    let e = r.expect_err("a deadlock");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 2 }, "{e}");
    assert!(f.instret < BUDGET / 10, "found early: {e}");
    let msg = e.to_string();
    for want in [
        "deadlock: none of the 2 running core(s) can make progress",
        "BRISC at pc 0x",
        "polls L1 0x00030000 (reads 0x0)",
        "TRISC_0 at pc 0x",
        "polls L1 0x00030004 (reads 0x0)",
    ] {
        assert!(msg.contains(want), "{want:?} missing from: {msg}");
    }
}

#[test]
fn a_core_polling_l1_beside_one_waiting_on_a_fifo_is_a_deadlock() {
    // TRISC0 pops BRISC's empty mailbox (a FIFO wait); BRISC polls L1.
    let mut pop = li(P, mmio::mailbox(0)).to_vec();
    pop.push(lw(V, P, 0));
    let r = run_cores(&[(Risc::Brisc, poll(0x30000)), (Risc::Trisc0, pop)]);
    let e = r.expect_err("a deadlock");
    assert_eq!(
        e.fault().map(|f| &f.kind),
        Some(&FaultKind::Deadlock { cores: 2 }),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("pops from an empty FIFO at") && msg.contains("polls L1 0x00030000"),
        "{msg}"
    );
}

#[test]
fn a_core_polling_a_flag_another_core_sets_after_a_long_loop_is_not_a_deadlock() {
    // TRISC0 counts down three million iterations (far more than the detector's looks),
    // then sets the flag BRISC polls.
    let mut t = lis(&[(C, 3_000_000), (P, 0x30000), (V, 1)]);
    t.extend([addi(C, C, -1), bne(C, 0, -4), sw(V, P, 0)]);
    run_cores(&[(Risc::Brisc, poll(0x30000)), (Risc::Trisc0, t)]).expect("no deadlock");
}

#[test]
fn a_core_waiting_for_the_clock_is_not_a_deadlock() {
    // BRISC polls an L1 word nothing writes until two million cycles have passed on the
    // wall clock: its loop reads the clock, so it is not stuck.
    let mut w = lis(&[(P, mmio::WALL_CLOCK_L)]);
    w.push(lw(C, P, 0)); // start
    w.extend(li(V, 2_000_000));
    w.push(add(C, C, V)); // deadline
    w.extend(li(12, 0x30000));
    // loop: if *0x30000 != 0 break; if clock >= deadline break
    w.push(lw(V, 12, 0));
    w.push(bne(V, 0, 16));
    w.push(lw(V, P, 0));
    w.push(bltu(V, C, -12));
    run_cores(&[(Risc::Brisc, w), (Risc::Trisc0, poll(0x30004))])
        .expect_err("TRISC0 never ends")
        .fault()
        .map(|f| assert!(matches!(f.kind, FaultKind::Deadlock { cores: 1 }), "{f}"))
        .expect("a fault");
}

#[test]
fn a_run_past_its_wall_clock_deadline_stops_naming_every_running_core() {
    // A core that counts forever (never a deadlock) beside one that polls an L1 word.
    let arch = Arch::WormholeB0;
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.instruction_budget = BUDGET;
    let mut dev = Device::new(cfg).expect("device");
    let count = vec![addi(C, C, 1), jal(0, -4)];
    for (risc, words) in [(Risc::Brisc, count), (Risc::Trisc0, poll(0x30000))] {
        dev.load_kernel(0, t0(arch), risc, &elf_for(arch, risc, &words), "test.elf")
            .expect("load");
    }
    // Already past: the run stops after its first step.
    dev.set_deadline(Some(std::time::Instant::now()));
    let e = dev.run().expect_err("stopped at the deadline");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Timeout { cores: 2 }, "{e}");
    assert!(f.instret < BUDGET, "{e}");
    let msg = e.to_string();
    for want in [
        "stopped at the wall-clock deadline with 2 core(s) still running",
        "BRISC at pc 0x",
        "TRISC_0 at pc 0x",
        "instructions retired",
    ] {
        assert!(msg.contains(want), "{want:?} missing from: {msg}");
    }
}

#[test]
fn a_poll_loop_that_counts_its_tries_in_a_register_is_a_deadlock() {
    // `while *0x30000 == 0 { tries += 1 }`: the register state never repeats, but the
    // count reaches no branch, address or store.
    let mut w = li(P, 0x30000).to_vec();
    w.extend([lw(V, P, 0), addi(C, C, 1), beq(V, 0, -8)]);
    let e = run_cores(&[(Risc::Brisc, w), (Risc::Trisc0, poll(0x30004))]).expect_err("a deadlock");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 2 }, "{e}");
    eprintln!("a retry counter: reported after {} instructions", f.instret);
    assert!(f.instret < BUDGET / 10, "found early: {e}");
    assert!(
        e.to_string().contains("polls L1 0x00030000 (reads 0x0)"),
        "{e}"
    );
}

#[test]
fn a_poll_loop_with_a_timeout_counter_that_ends_is_not_a_deadlock() {
    // BRISC polls a word nothing writes, giving up after three million tries (far more
    // than the detector's looks), then exits; TRISC0 polls forever. Had BRISC been called
    // stuck, the deadlock would name two cores.
    let mut w = lis(&[(P, 0x30000), (C, 3_000_000)]);
    // loop: if *0x30000 != 0 break; if --tries == 0 break
    w.extend([lw(V, P, 0), bne(V, 0, 12), addi(C, C, -1), bne(C, 0, -12)]);
    let e = run_cores(&[(Risc::Brisc, w), (Risc::Trisc0, poll(0x30004))])
        .expect_err("TRISC0 never ends");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
    assert!(e.to_string().contains("TRISC_0 at pc 0x"), "{e}");
}

#[test]
fn a_poll_loop_whose_period_spans_many_looks_is_a_deadlock() {
    // Between two polls of a word nothing writes, a delay loop of 2.5 million turns
    // (more than 64 looks of the detector per poll), and a retry count that only grows.
    let mut w = li(P, 0x30000).to_vec();
    // loop: if *0x30000 != 0 break; retries += 1; delay 2.5 M; repeat
    w.extend([lw(V, P, 0), bne(V, 0, 28), addi(12, 12, 1)]);
    w.extend(li(C, 2_500_000));
    w.extend([addi(C, C, -1), bne(C, 0, -4), jal(0, -28)]);
    let e = run_cores(&[(Risc::Brisc, w)]).expect_err("a deadlock");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
    eprintln!(
        "a 5 M-instruction turn: reported after {} instructions",
        f.instret
    );
    assert!(f.instret < BUDGET, "found before the budget: {e}");
    assert!(
        e.to_string().contains("polls L1 0x00030000 (reads 0x0)"),
        "{e}"
    );
}

#[test]
fn a_poll_loop_that_ends_when_a_value_derived_from_its_count_does_is_not_a_deadlock() {
    // BRISC counts its tries and leaves once `tries >> 22` is nonzero (four million tries):
    // the count reaches the branch only through another register. TRISC0 polls forever;
    // had BRISC been called stuck, the deadlock would name two cores.
    let mut w = li(P, 0x30000).to_vec();
    // loop: if *0x30000 != 0 break; tries += 1; if tries >> 22 == 0 repeat
    w.extend([
        lw(V, P, 0),
        bne(V, 0, 16),
        addi(C, C, 1),
        srli(12, C, 22),
        beq(12, 0, -16),
    ]);
    let e = run_cores(&[(Risc::Brisc, w), (Risc::Trisc0, poll(0x30004))])
        .expect_err("TRISC0 never ends");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
}

#[test]
fn poll_loops_counting_while_they_poll_noc_semaphore_and_mailbox_registers_are_a_deadlock() {
    // Nothing is in flight on the NoC, the coprocessor is idle and no core pushes to the
    // mailbox: none of the three registers can change, though each core's count grows.
    let rd_resp = noc::status_reg(Arch::WormholeB0, 0, counter::RD_RESP_RECEIVED);
    let e = run_cores(&[
        (Risc::Brisc, counting_poll(rd_resp)),
        (Risc::Trisc0, counting_poll(mmio::SEMAPHORE_BASE + 4 * 2)),
        (
            Risc::Trisc1,
            counting_poll(mmio::mailbox(0) + mmio::MAILBOX_STATUS),
        ),
    ])
    .expect_err("a deadlock");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 3 }, "{e}");
    eprintln!(
        "counting polls of registers: reported after {} instructions",
        f.instret
    );
    assert!(f.instret < BUDGET / 10, "found early: {e}");
    let msg = e.to_string();
    for want in [
        "BRISC at pc 0x",
        "polls NoC 0 status counter RD_RESP_RECEIVED 0xffb20208 (reads 0x0)",
        "TRISC_0 at pc 0x",
        "polls Tensix semaphore 2 0xffe80028 (reads 0x0)",
        "TRISC_1 at pc 0x",
        "polls status of the mailbox from BRISC 0xffec0004 (reads 0x0)",
    ] {
        assert!(msg.contains(want), "{want:?} missing from: {msg}");
    }
}

/// BRISC reads 64 bytes of its own L1 through NoC 0 (`0x30100` to `0x40000`).
fn noc_self_read() -> Vec<u32> {
    let arch = Arch::WormholeB0;
    let m = noc::niu_map(arch);
    let base = noc::cmd_buf_reg(arch, 0, noc::RD_CMD_BUF, 0);
    let me = t0(arch);
    let mut w = li(P, base).to_vec();
    for (reg, value) in [
        (m.ctrl, noc::ctrl::READ),
        (m.at_len_be, 64),
        (m.ret_addr_lo, 0x40000),
        (m.targ_addr_lo, 0x30100),
        (m.targ_addr_mid, NiuMap::coord_field(arch, me, 0x30100)),
        (m.cmd_ctrl, 1),
    ] {
        w.extend(li(V, value));
        w.push(sw(V, P, reg as i32));
    }
    w
}

#[test]
fn a_counting_poll_of_a_noc_counter_whose_read_is_in_flight_is_not_a_deadlock() {
    // BRISC issues a NoC read whose response takes 300,000 cycles (several looks of the
    // detector), counting its polls of RD_RESP_RECEIVED until the response lands, then
    // exits. TRISC0 polls forever: had BRISC been called stuck, the deadlock would name
    // two cores.
    let rd_resp = noc::status_reg(Arch::WormholeB0, 0, counter::RD_RESP_RECEIVED);
    let mut b = noc_self_read();
    b.extend(counting_poll(rd_resp));
    let e = run_cores_with(&[(Risc::Brisc, b), (Risc::Trisc0, poll(0x30004))], |cfg| {
        cfg.noc.l1_read_cycles = 300_000
    })
    .expect_err("TRISC0 never ends");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
    assert!(e.to_string().contains("TRISC_0 at pc 0x"), "{e}");
}

#[test]
fn a_counting_poll_of_a_semaphore_another_core_posts_later_is_not_a_deadlock() {
    // TRISC0 counts its polls of semaphore 1 while TRISC1 counts down three million
    // iterations, then posts it; BRISC polls L1 forever. Had TRISC0 been called stuck, the
    // deadlock would name two cores.
    let sem = mmio::SEMAPHORE_BASE + 4;
    let mut post = lis(&[(C, 3_000_000), (P, sem)]);
    post.extend([addi(C, C, -1), bne(C, 0, -4), sw(0, P, 0)]);
    let e = run_cores(&[
        (Risc::Brisc, poll(0x30000)),
        (Risc::Trisc0, counting_poll(sem)),
        (Risc::Trisc1, post),
    ])
    .expect_err("BRISC never ends");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
    assert!(e.to_string().contains("BRISC at pc 0x"), "{e}");
}

#[test]
fn a_poll_loop_whose_turn_is_over_sixteen_million_instructions_is_a_deadlock() {
    // As above, with a delay loop of ten million turns between two polls: a turn of more
    // than twenty million instructions.
    let mut w = li(P, 0x30000).to_vec();
    w.extend([lw(V, P, 0), bne(V, 0, 28), addi(12, 12, 1)]);
    w.extend(li(C, 10_000_000));
    w.extend([addi(C, C, -1), bne(C, 0, -4), jal(0, -28)]);
    let e = run_cores(&[(Risc::Brisc, w)]).expect_err("a deadlock");
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Deadlock { cores: 1 }, "{e}");
    eprintln!(
        "a 20 M-instruction turn: reported after {} instructions",
        f.instret
    );
    assert!(f.instret < BUDGET, "found before the budget: {e}");
    assert!(
        e.to_string().contains("polls L1 0x00030000 (reads 0x0)"),
        "{e}"
    );
}
