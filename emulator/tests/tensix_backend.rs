//! The Tensix coprocessor's control backend through whole RV32IM programs: the Sync Unit
//! (semaphores shared with the TRISCs' memory-mapped view, `SEMWAIT`, `STALLWAIT`,
//! mutexes), the Configuration Unit and the RISC view of backend configuration, the Scalar
//! Unit's GPR arithmetic, ADC and RWC instructions, and the diagnosis of instructions the
//! model does not execute. Expected values follow the pages' functional models.

mod common;

use common::prog::*;
use riscv_linker::tensix as tt;
use riscv_linker::{mmio, Risc};
use ttprof_emu::FaultKind;

fn sem(i: u32) -> u32 {
    mmio::SEMAPHORE_BASE + 4 * i
}

#[test]
fn semaphores_are_one_state_for_the_tensix_threads_and_the_riscs() {
    let mut t0 = Prog::new();
    t0.tt(tt::seminit(5, 2, 1 << 3))
        .tt(tt::sempost(1 << 3))
        .ttsync();
    t0.load(A[0], sem(3));
    t0.store(sem(3), 0); // RISC post: 4
    t0.tt(tt::semget(1 << 3)).tt(tt::semget(1 << 3)).ttsync();
    t0.load(A[1], sem(3));
    // SEMINIT on several semaphores; SEMPOST up to Max, SEMGET down to 0.
    t0.tt(tt::seminit(15, 14, 0b1100_0000))
        .tt(tt::sempost(1 << 6));
    t0.tt(tt::semget(1 << 7));
    t0.tt(tt::seminit(1, 1, 1 << 5))
        .tt(tt::semget(1 << 5))
        .ttsync();
    t0.load(A[2], sem(6)).load(A[3], sem(7)).load(A[4], sem(5));
    let r = &run_ok(&[(Risc::Trisc0, &t0)])[0];
    let got: Vec<u32> = A[..5].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(got, [3, 2, 15, 13, 0]);
    // Past Max or below 0 the run stops (non-contractual; ttsim stops too).
    for (word, want) in [
        (
            tt::sempost(1 << 6),
            "SEMPOST on semaphore 6 at its maximum (Value 2, Max 2)",
        ),
        (tt::semget(1 << 5), "SEMGET on semaphore 5 at Value 0"),
    ] {
        let mut t = Prog::new();
        t.tt(tt::seminit(2, 2, 1 << 6)).tt(word).ttsync();
        let (_, msg) = run_fault(&[(Risc::Trisc0, &t)]);
        assert!(msg.contains(want), "{msg}");
    }
}

#[test]
fn semwait_holds_blocked_instructions_until_a_risc_posts() {
    let mut t1 = Prog::new();
    // Wait while semaphore 1 is 0, blocking Scalar Unit instructions (B5).
    t1.tt(tt::semwait(1 << 5, 1 << 1, 1));
    t1.tt(tt::setdmareg(7, 0)).spin(100).gpr(A[0], 0);
    t1.store(sem(1), 0).ttsync().gpr(A[1], 0);
    // Condition C1: wait while Value >= Max (here 1 >= 1), lifted by a RISC get.
    t1.tt(tt::seminit(1, 1, 1 << 2))
        .tt(tt::semwait(1 << 5, 1 << 2, 2));
    t1.tt(tt::setdmareg(9, 2)).spin(100).gpr(A[2], 1);
    t1.store(sem(2), 1).ttsync().gpr(A[3], 1);
    let r = &run_ok(&[(Risc::Trisc1, &t1)])[0];
    let got: Vec<u32> = A[..4].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(got, [0, 7, 0, 9]);
}

#[test]
fn stallwait_c7_waits_for_the_threads_matrix_unit_work() {
    // Not much is observable: the instruction after a STALLWAIT waits at least one cycle.
    let mut t = Prog::new();
    t.tt(tt::incrwc(0, 1, 1, 1))
        .tt(tt::stallwait(1 << 5, 1 << 7));
    t.tt(tt::setdmareg(3, 0)).ttsync().gpr(A[0], 0);
    let r = &run_ok(&[(Risc::Trisc1, &t)])[0];
    assert_eq!(r[A[0] as usize], 3);
}

#[test]
fn a_mutex_holds_the_second_thread_until_the_first_releases() {
    let to = |peer: u32| mmio::mailbox(peer);
    let mut t0 = Prog::new();
    t0.tt(tt::atgetm(2)).ttsync();
    t0.store(to(2), 1); // tell TRISC1: held
    t0.load(A[0], to(2)); // wait for TRISC1
    t0.tt(tt::atrelm(2)).ttsync();
    let mut t1 = Prog::new();
    t1.load(A[0], to(1)); // wait for TRISC0
    t1.tt(tt::atgetm(2))
        .tt(tt::setdmareg(1, 0))
        .spin(100)
        .gpr(A[1], 0);
    t1.store(to(1), 1);
    t1.ttsync().gpr(A[2], 0).tt(tt::atrelm(2));
    let r = run_ok(&[(Risc::Trisc0, &t0), (Risc::Trisc1, &t1)]);
    assert_eq!((r[1][A[1] as usize], r[1][A[2] as usize]), (0, 1));
}

#[test]
fn configuration_unit_and_the_risc_view_of_backend_configuration() {
    let cfg = mmio::TENSIX_CFG_BASE;
    let thread_cfg = cfg + 2 * 188 * 4; // ThreadConfig[0][0]
    let mut t = Prog::new();
    t.tt(tt::setdmareg(0xCAFE, 8)).tt(tt::setdmareg(0xBEEF, 9)); // GPR 4
    t.tt(tt::wrcfg(4, false, 10)).ttsync().load(A[0], cfg + 40);
    t.store(cfg + 44, 0x55)
        .tt(tt::rdcfg(5, 11))
        .ttsync()
        .gpr(A[1], 5);
    // RMWCIB2: bits 4-7 of byte 2 of word 10.
    t.tt(tt::rmwcib(2, 0xF0, 0x12, 10))
        .ttsync()
        .load(A[2], cfg + 40);
    // SETC16 StateID = 1: the thread now writes bank 1 (Config[1] follows Config[0]).
    t.tt(tt::setc16(0, 1))
        .tt(tt::nop())
        .tt(tt::wrcfg(4, false, 3))
        .ttsync();
    t.load(A[3], cfg + (188 + 3) * 4)
        .load(A[4], cfg + 3 * 4)
        .load(A[5], thread_cfg);
    // 128-bit WRCFG: GPRs 4-7 to words 20-23 of bank 1.
    t.tt(tt::setdmareg(0x7777, 14))
        .tt(tt::wrcfg(6, true, 22))
        .ttsync();
    t.load(A[6], cfg + (188 + 23) * 4);
    let r = &run_ok(&[(Risc::Trisc0, &t)])[0];
    let got: Vec<u32> = A[..7].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(
        got,
        [0xBEEF_CAFE, 0x55, 0xBE1F_CAFE, 0xBEEF_CAFE, 0, 1, 0x7777]
    );
}

#[test]
fn scalar_unit_gpr_arithmetic() {
    let mut t = Prog::new();
    t.tt(tt::setdmareg(0xFFFE, 2)).tt(tt::setdmareg(0xFFFF, 3)); // GPR1 = 0xFFFFFFFE
    t.tt(tt::setdmareg(5, 4)); // GPR2 = 5
    t.tt(tt::adddmareg(false, 10, 2, 1)); // 3 (wraps)
    t.tt(tt::subdmareg(true, 11, 6, 2)); // 5 - 6
    t.tt(tt::muldmareg(false, 12, 1, 2)); // 0xFFFE * 5
    t.tt(tt::bitwopdmareg(true, 1, 13, 0x30, 2)); // 5 | 0x30
    t.tt(tt::shiftdmareg(true, 1, 14, 1, 1)); // 0xFFFFFFFE >> 1
    t.tt(tt::cmpdmareg(false, 0, 15, 2, 1)); // 0xFFFFFFFE > 5
    t.tt(tt::dmanop()).ttsync();
    for (k, g) in (10..16).enumerate() {
        t.gpr(A[k], g);
    }
    let r = &run_ok(&[(Risc::Trisc2, &t)])[0];
    let got: Vec<u32> = A[..6].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(got, [3, u32::MAX, 0xFFFE * 5, 0x35, 0x7FFF_FFFF, 1]);
}

#[test]
fn adc_and_rwc_instructions_execute() {
    // ADCs and RWCs are not visible to the RISCs; their functional models are unit-tested
    // (`tensix::counters`). Here: every form is accepted and executes in order.
    let mut t = Prog::new();
    for w in [
        tt::setadc(0b111, 1, 2, 0x2_0005),
        tt::setadcxy(0b001, [1, 2, 3, 4], 0xF),
        tt::incadcxy(0b010, [1, 1, 1, 1]),
        tt::addrcrxy(0b100, [1, 1, 1, 1], 0xF),
        tt::setadczw(0b001, [1, 2, 3, 4], 0xF),
        tt::incadczw(0b001, [1, 1, 1, 1]),
        tt::addrcrzw(0b001, [1, 1, 1, 1], 0x5),
        tt::setadcxx(0b011, 100, 200),
        tt::setrwc(0b0101, 2, 3, 4, 0xF),
        tt::incrwc(0b111, 1, 2, 3),
        tt::setdmareg(1, 0),
    ] {
        t.tt(w);
    }
    t.ttsync().gpr(A[0], 0);
    let r = &run_ok(&[(Risc::Trisc0, &t)])[0];
    assert_eq!(r[A[0] as usize], 1);
}

#[test]
fn an_unmodelled_instruction_names_mnemonic_thread_and_pushing_pc() {
    let mut t = Prog::new();
    t.tt(tt::nop()).tt(0x2900_0000); // DOTPV
    let (f, msg) = run_fault(&[(Risc::Trisc1, &t)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixPush {
                word: 0x2900_0000,
                risc: Risc::Trisc1,
                thread: 1,
                mnemonic: "DOTPV",
                ..
            }
        ),
        "{msg}"
    );
    assert_eq!((f.risc, f.pc), (Risc::Trisc1, 0xA004), "the push's pc");
    for part in [
        "TRISC_1",
        "DOTPV",
        "Tensix thread T1",
        "not modelled",
        "0x0000a004",
    ] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
}

#[test]
fn a_mop_whose_expansion_holds_an_unmodelled_instruction_stops_at_its_push() {
    let mut t = Prog::new();
    t.store(mmio::MOP_CFG_BASE + 12, 0x7300_0000); // InsnA0 = SFPLUT
    t.tt(tt::mop(0, 0, 0));
    let (f, msg) = run_fault(&[(Risc::Trisc0, &t)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixPush {
                mnemonic: "MOP",
                thread: 0,
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("SFPLUT is not modelled"), "{msg}");
}

#[test]
fn unmodelled_modes_and_undefined_behaviour_are_diagnosed() {
    for (word, what) in [
        (0x4500_0080, "packer"), // SETDMAREG special mode
        (tt::atgetm(1), "waits forever"),
        (tt::wrcfg(0, false, 188), "past Config"),
        (tt::bitwopdmareg(false, 3, 0, 0, 0), "undefined"),
        (
            tt::pacr(0, false, 0b0101, false, false, false, false),
            "PackerMask 0b0101",
        ),
        (
            tt::unpacr(0, 0, false, false) | (1 << 7) | (1 << 3),
            "UseContextCounter",
        ),
        (0x0200_0004, "NOP with reserved bits"),
        (tt::unpacr(0, 0, false, false) | (1 << 2), "RowSearch"),
        (tt::zeroacc(false, 1, 0, 0) | (1 << 18), "Revert"),
    ] {
        let mut t = Prog::new();
        t.tt(word);
        let (f, msg) = run_fault(&[(Risc::Trisc2, &t)]);
        assert!(matches!(f.kind, FaultKind::TensixPush { .. }), "{msg}");
        assert!(msg.contains(what), "{what:?} missing from {msg}");
    }
}

#[test]
fn replaying_never_recorded_entries_stops_at_the_wait_gate() {
    let mut t = Prog::new();
    t.tt(tt::replay(10, 1, false, false)).ttsync();
    let (f, msg) = run_fault(&[(Risc::Trisc2, &t)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixExec {
                word: 0,
                thread: 2,
                risc: Risc::Trisc2,
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("opcode 0x00"), "{msg}");
}

#[test]
fn a_deadlock_on_the_coprocessor_says_what_each_thread_waits_on() {
    // T1 waits on semaphore 4 that nobody posts, then TTSync waits for T1 forever.
    let mut t = Prog::new();
    t.tt(tt::semwait(0x1FF, 1 << 4, 1))
        .tt(tt::setdmareg(1, 0))
        .ttsync();
    let (f, msg) = run_fault(&[(Risc::Trisc1, &t)]);
    assert!(
        matches!(f.kind, FaultKind::Blocked { write: false, .. }),
        "{msg}"
    );
    for part in [
        "deadlock",
        "TRISC_1",
        "Tensix T1: 1 instruction(s) queued, next SETDMAREG, held by SEMWAIT",
        "semaphores 0x10",
    ] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
}

#[test]
fn design_md_lists_exactly_the_modelled_instructions() {
    let design = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/design/tensix-coprocessor.md"
    ))
    .expect("docs/design/tensix-coprocessor.md");
    let start = design.find("**Supported instructions**").expect("the list");
    let end = start + design[start..].find("\n\n").expect("end of the paragraph");
    let listed: std::collections::BTreeSet<&str> = design[start..end]
        .split('`')
        .skip(3) // the text before the list, and the code span naming the function
        .step_by(2)
        .filter(|w| {
            w.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .collect();
    let modelled: std::collections::BTreeSet<&str> =
        ttprof_emu::modelled_mnemonics().into_iter().collect();
    assert_eq!(listed, modelled);
}
