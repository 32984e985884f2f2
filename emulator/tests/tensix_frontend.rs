//! The Tensix coprocessor's frontend through whole RV32IM programs: pushes, FIFO
//! back-pressure stalling the pushing core, the MOP Expander's two templates, the Replay
//! Expander, TTSync, `INSTRN_BUF_STATUS`, and RISCV B pushing to any thread. Expected values
//! follow the functional models of `MOPExpander.md`, `REPLAY.md` and `TTSync.md`.

mod common;

use common::prog::*;
use riscv_linker::tensix as tt;
use riscv_linker::{mmio, Risc};
use ttprof_emu::{DeviceConfig, FaultKind};

/// `ADDDMAREG` with an immediate: `GPR[g] += imm`.
fn inc(g: u32, imm: u32) -> u32 {
    tt::adddmareg(true, g, imm, g)
}

fn mop_cfg(p: &mut Prog, cfg: [u32; 9]) {
    for (i, w) in cfg.iter().enumerate() {
        p.store(mmio::MOP_CFG_BASE + 4 * i as u32, *w);
    }
}

#[test]
fn mop_template0_expands_mask_selected_a_and_skip_instructions() {
    let mut p = Prog::new();
    // InsnA0: GPR1 += 1; SkipA0: GPR2 += 1; no B, no A1-A3.
    mop_cfg(&mut p, [0, 0, 0, inc(1, 1), 0, 0, 0, inc(2, 1), 0]);
    // 20 iterations; mask bits 0, 2 (MaskLo) and 16 (MaskHi bit 0) pick SkipA0.
    p.tt(tt::mop_cfg(1)).tt(tt::mop(0, 19, 0b101)).ttsync();
    p.gpr(A[0], 1).gpr(A[1], 2);
    let r = &run_ok(&[(Risc::Trisc0, &p)])[0];
    assert_eq!((r[A[0] as usize], r[A[1] as usize]), (17, 3));
}

#[test]
fn mop_template0_with_b_and_a123() {
    let mut p = Prog::new();
    let cfg = [
        0,
        0b11,
        inc(5, 1),
        inc(1, 1),
        inc(2, 1),
        inc(3, 1),
        inc(4, 1),
        inc(6, 1),
        inc(7, 1),
    ];
    mop_cfg(&mut p, cfg);
    p.tt(tt::mop(0, 3, 0b0100)).ttsync(); // A, A, skip, A
    for g in 1..=7 {
        p.gpr(A[g as usize - 1], g);
    }
    let r = &run_ok(&[(Risc::Trisc1, &p)])[0];
    let got: Vec<u32> = A[..7].iter().map(|&a| r[a as usize]).collect();
    // A0-A3 and B three times; SkipA0 and SkipB once.
    assert_eq!(got, [3, 3, 3, 3, 3, 1, 1]);
}

#[test]
fn mop_template1_runs_its_loops() {
    let nop = tt::nop();
    let mut p = Prog::new();
    // Outer 3, inner 4; StartOp g1, EndOp0 g3, no EndOp1 or LoopOp1; LoopOp g2;
    // Loop0Last (last inner iteration of the last outer one) g4, Loop1Last g5.
    mop_cfg(
        &mut p,
        [
            3,
            4,
            inc(1, 1),
            inc(3, 1),
            nop,
            inc(2, 1),
            nop,
            inc(4, 1),
            inc(5, 1),
        ],
    );
    p.tt(tt::mop(1, 0, 0)).ttsync();
    for g in 1..=5 {
        p.gpr(A[g as usize - 1], g);
    }
    let r = &run_ok(&[(Risc::Trisc2, &p)])[0];
    let got: Vec<u32> = A[..5].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(got, [3, 9, 3, 1, 2]);
}

#[test]
fn replay_records_and_plays_back() {
    let mut p = Prog::new();
    // Record two instructions at index 31 (wrapping to 0) without executing them.
    p.tt(tt::replay(31, 2, false, true))
        .tt(inc(1, 1))
        .tt(inc(2, 2));
    p.ttsync().gpr(A[0], 1);
    for _ in 0..3 {
        p.tt(tt::replay(31, 2, false, false));
    }
    // Record with Exec: runs once while recording, then once more from the buffer.
    p.tt(tt::replay(4, 1, true, true))
        .tt(inc(3, 5))
        .tt(tt::replay(4, 1, false, false));
    p.ttsync().gpr(A[1], 1).gpr(A[2], 2).gpr(A[3], 3);
    let r = &run_ok(&[(Risc::Trisc0, &p)])[0];
    let got: Vec<u32> = A[..4].iter().map(|&a| r[a as usize]).collect();
    assert_eq!(got, [0, 3, 6, 10], "recording alone executes nothing");
}

#[test]
fn a_full_fifo_stalls_the_pushing_core_until_the_thread_moves() {
    // TRISC1's thread waits on semaphore 0 (Value 0) with every block bit: everything
    // behind the SEMWAIT queues up. The FIFOs hold 16 + 8 + 2 instructions.
    let wait = tt::semwait(0x1FF, 1, 1);
    let build = |extra: u32| {
        let mut p = Prog::new();
        p.tt(wait);
        for _ in 0..(26 + extra) {
            p.tt(tt::nop());
        }
        p.load(A[1], mmio::INSTRN_BUF_STATUS).clock(A[0]);
        p
    };
    // TRISC0 posts semaphore 0 after a while.
    let mut poster = Prog::new();
    poster.spin(2000).clock(A[0]).store(mmio::SEMAPHORE_BASE, 0);
    for (extra, stalls) in [(0, false), (1, true)] {
        let t1 = build(extra);
        let r = run_ok(&[(Risc::Trisc0, &poster), (Risc::Trisc1, &t1)]);
        let (posted, done) = (r[0][A[0] as usize], r[1][A[0] as usize]);
        assert_eq!(
            done > posted,
            stalls,
            "extra {extra}: posted {posted}, done {done}"
        );
        if !stalls {
            // T1's FIFO before the Replay Expander is full (bit 1 clear) and not empty (bit
            // 5 clear); T0's and T2's are empty.
            assert_eq!(r[1][A[1] as usize], 0x55);
        }
    }
}

#[test]
fn both_engines_and_any_thread_count_give_the_same_cycles() {
    // Back-pressure, a MOP expansion, a SEMWAIT released by another core, TTSync.
    let mut t1 = Prog::new();
    mop_cfg(&mut t1, [0, 0, 0, inc(1, 1), 0, 0, 0, 0, 0]);
    t1.tt(tt::semwait(0x1FF, 1, 1));
    for _ in 0..40 {
        t1.tt(tt::mop(0, 15, 0));
    }
    t1.clock(A[0]).ttsync().clock(A[1]).gpr(A[2], 1);
    let mut t0 = Prog::new();
    t0.spin(300).store(mmio::SEMAPHORE_BASE, 0);
    let mut runs = Vec::new();
    for (jit, threads) in [(true, 1), (false, 1), (true, 4)] {
        let mut cfg = DeviceConfig::new(riscv_linker::Arch::WormholeB0, (1, 1));
        cfg.jit = jit;
        cfg.threads = threads;
        let dev = ttprof_emu::Device::new(cfg).unwrap();
        let (dev, r) = run_cores_on(dev, &[(Risc::Trisc0, &t0), (Risc::Trisc1, &t1)]);
        let s = r.unwrap();
        let regs = dev
            .hart_registers(0, common::t0(riscv_linker::Arch::WormholeB0), Risc::Trisc1)
            .unwrap()
            .1;
        runs.push((s.harts.iter().map(|h| h.cycles).collect::<Vec<_>>(), regs));
    }
    assert_eq!(runs[0].1[A[2] as usize], 40 * 16);
    assert!(
        runs[0].1[A[0] as usize] > 600,
        "the pushes waited for the post and the MOPs"
    );
    assert!(
        runs.iter().all(|r| *r == runs[0]),
        "{:?}",
        runs.iter().map(|r| &r.0).collect::<Vec<_>>()
    );
}

/// Lines mode: the cycles TRISC1 is held pushing into its full FIFO are charged to the push
/// with what its thread waits on (the SEMWAIT's semaphore, the Scalar Unit running the MOPs'
/// expansions, then the MOP Expander itself; a push behind an expansion skips ahead in one
/// step, and those cycles must be charged too), its TTSync wait
/// to the TTSync read, and every core's rows still sum to its cycles.
#[test]
fn lines_mode_charges_coprocessor_holds_to_what_the_thread_waits_on() {
    use ttprof_emu::lines::{tensix_fifo, ttsync};
    use ttprof_emu::TensixWait;
    let mut t1 = Prog::new();
    // Template 0: mask bit clear GPR1 += 1 (the Scalar Unit, 3 cycles), set a NOP.
    mop_cfg(&mut t1, [0, 0, 0, inc(1, 1), 0, 0, 0, tt::nop(), 0]);
    t1.tt(tt::semwait(0x1FF, 1, 1));
    for _ in 0..20 {
        t1.tt(tt::mop(0, 15, 0));
    }
    for _ in 0..40 {
        t1.tt(tt::mop(0, 15, 0xFFFF));
    }
    t1.tt(tt::semwait(0x1FF, 1 << 1, 1)).tt(tt::nop()).ttsync();
    let mut t0 = Prog::new();
    t0.spin(300)
        .store(mmio::SEMAPHORE_BASE, 0)
        .spin(3000)
        .store(mmio::SEMAPHORE_BASE + 4, 0);
    let mut cfg = DeviceConfig::new(riscv_linker::Arch::WormholeB0, (1, 1));
    cfg.lines = true;
    let dev = ttprof_emu::Device::new(cfg).unwrap();
    let (dev, r) = run_cores_on(dev, &[(Risc::Trisc0, &t0), (Risc::Trisc1, &t1)]);
    r.unwrap();
    let profiles = dev.line_profiles();
    assert_eq!(profiles.len(), 2);
    for h in &profiles {
        let sum: u64 = h.rows.iter().flat_map(|(_, c)| c.iter()).sum();
        assert_eq!(sum, h.cycles, "{}: charged vs cycles", h.risc);
    }
    let t1 = profiles.iter().find(|h| h.risc == Risc::Trisc1).unwrap();
    let by = |i: usize| t1.rows.iter().map(|(_, c)| c[i]).sum::<u64>();
    let all: Vec<(&str, u64)> = (0..ttprof_emu::lines::CAUSES)
        .map(|i| (ttprof_emu::lines::cause_name(i), by(i)))
        .filter(|x| x.1 > 0)
        .collect();
    assert!(by(tensix_fifo(TensixWait::Semaphore0)) > 100, "{all:?}");
    assert!(by(tensix_fifo(TensixWait::ScalarUnit)) > 100, "{all:?}");
    assert!(by(tensix_fifo(TensixWait::MopExpander)) > 100, "{all:?}");
    assert!(by(ttsync(TensixWait::Semaphore1)) > 1000, "{all:?}");
    assert_eq!(by(ttprof_emu::Cause::FifoWait as usize), 0);
}

#[test]
fn ttsync_waits_until_the_thread_has_nothing_in_flight() {
    let mut t0 = Prog::new();
    t0.tt(tt::semwait(1 << 5, 1 << 2, 1)) // wait on semaphore 2, blocking Scalar Unit
        .tt(tt::setdmareg(0x1234, 0))
        .spin(50)
        .gpr(A[0], 0) // still held
        .ttsync()
        .clock(A[1])
        .gpr(A[2], 0);
    let mut t2 = Prog::new();
    t2.spin(1000).clock(A[0]).store(mmio::SEMAPHORE_BASE + 8, 0);
    let r = run_ok(&[(Risc::Trisc0, &t0), (Risc::Trisc2, &t2)]);
    assert_eq!(r[0][A[0] as usize], 0, "SETDMAREG held behind the SEMWAIT");
    assert!(
        r[0][A[1] as usize] > r[1][A[0] as usize],
        "TTSync returned after the post"
    );
    assert_eq!(r[0][A[2] as usize], 0x1234);
}

#[test]
fn mop_expander_done_check_waits_for_the_expansion() {
    let mut p = Prog::new();
    mop_cfg(&mut p, [0, 0, 0, tt::nop(), 0, 0, 0, 0, 0]);
    p.clock(A[0]).tt(tt::mop(0, 127, 0)); // 128 NOPs
    p.0.extend(ttprof_emu::asm::li(P, mmio::TTSYNC_MOP_EXPANDER_DONE));
    p.0.extend([
        ttprof_emu::asm::sw(0, P, 0),
        ttprof_emu::asm::lw(V, P, 0),
        ttprof_emu::asm::andi(V, V, 0),
    ]);
    p.clock(A[1]);
    let r = &run_ok(&[(Risc::Trisc0, &p)])[0];
    let waited = r[A[1] as usize] - r[A[0] as usize];
    assert!(waited >= 128, "one instruction per cycle at best: {waited}");
}

#[test]
fn one_instruction_per_thread_per_cycle_and_threads_run_in_parallel() {
    let per = |risc: Risc| {
        let mut p = Prog::new();
        mop_cfg(&mut p, [0, 0, 0, tt::nop(), 0, 0, 0, 0, 0]);
        p.clock(A[0]);
        for _ in 0..8 {
            p.tt(tt::mop(0, 127, 0));
        }
        p.ttsync().clock(A[1]);
        (risc, p)
    };
    let progs = [per(Risc::Trisc0), per(Risc::Trisc1), per(Risc::Trisc2)];
    let refs: Vec<(Risc, &Prog)> = progs.iter().map(|(r, p)| (*r, p)).collect();
    let r = run_ok(&refs);
    for (k, regs) in r.iter().enumerate() {
        let took = regs[A[1] as usize] - regs[A[0] as usize];
        // 1024 NOPs, plus the frontend's few cycles and the RISC's own accesses.
        assert!(
            (1024..1024 + 100).contains(&took),
            "thread {k}: {took} cycles"
        );
    }
}

#[test]
fn brisc_pushes_to_any_thread() {
    let mut b = Prog::new();
    b.store(mmio::INSTRN2_BUF_BASE, tt::setdmareg(0xABCD, 2 * 7)); // thread 2, GPR 7 low
    b.store(mmio::INSTRN_BUF_BASE, tt::setdmareg(0x0042, 2 * 3 + 1)); // thread 0, GPR 3 high
                                                                      // Poll thread 2's GPR 7 (BRISC sees all three threads' GPRs).
    let poll = b.0.len() as i32;
    b.gpr(A[0], 2 * 64 + 7);
    let here = b.0.len() as i32;
    b.0.push(ttprof_emu::asm::beq(A[0], 0, (poll - here) * 4));
    b.spin(10).gpr(A[1], 3);
    let r = &run_ok(&[(Risc::Brisc, &b)])[0];
    assert_eq!((r[A[0] as usize], r[A[1] as usize]), (0xABCD, 0x0042_0000));
}

#[test]
fn brisc_cannot_push_a_mop() {
    let mut b = Prog::new();
    b.store(mmio::INSTRN1_BUF_BASE, tt::mop(0, 0, 0));
    let (f, msg) = run_fault(&[(Risc::Brisc, &b)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixPush {
                risc: Risc::Brisc,
                thread: 1,
                mnemonic: "MOP",
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("after the MOP Expander"), "{msg}");
}

/// Emulator speed with the coprocessor busy (not a check: `cargo test --release -p
/// ttprof-emu --test tensix_frontend -- --ignored --nocapture speed`). Each TRISC pushes
/// `MOP`s of 128 `NOP`s (expansion-bound) or single `NOP`s (push-bound) in a loop.
#[test]
#[ignore]
fn speed_with_the_coprocessor_busy() {
    for (what, per_iter, body) in [
        ("MOP of 128 NOPs", 128u64, tt::mop(0, 127, 0)),
        ("single NOPs", 1u64, tt::nop()),
    ] {
        let iters = 20_000u32;
        let prog = |risc| {
            let mut p = Prog::new();
            mop_cfg(&mut p, [0, 0, 0, tt::nop(), 0, 0, 0, 0, 0]);
            p.0.extend(ttprof_emu::asm::li(C, iters));
            p.tt(body);
            p.0.extend([
                ttprof_emu::asm::addi(C, C, -1),
                ttprof_emu::asm::bne(C, 0, -8),
            ]);
            p.ttsync();
            (risc, p)
        };
        let progs = [prog(Risc::Trisc0), prog(Risc::Trisc1), prog(Risc::Trisc2)];
        let refs: Vec<(Risc, &Prog)> = progs.iter().map(|(r, p)| (*r, p)).collect();
        let start = std::time::Instant::now();
        let (_, r) = run_cores(&refs);
        let secs = start.elapsed().as_secs_f64();
        let s = r.unwrap();
        let tensix = 3 * iters as u64 * per_iter;
        let cycles = s.harts.iter().map(|h| h.cycles).max().unwrap();
        println!(
            "{what}: {} RISC instructions, {tensix} Tensix instructions, {cycles} cycles in {secs:.3} s: \
             {:.1} RISC MIPS, {:.1} M Tensix instructions/s",
            s.instructions(),
            s.instructions() as f64 / secs / 1e6,
            tensix as f64 / secs / 1e6
        );
    }
}
