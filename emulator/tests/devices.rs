//! The tile's devices through whole runs: mailboxes, semaphores, TTSync, GPRs, per-core
//! unmapped windows, and the diagnosis of pushes of Tensix instructions the coprocessor
//! model does not execute (`.ttinsn` and stores to the push windows); the coprocessor
//! itself is exercised by `tensix_*.rs`.

mod common;

use common::*;
use riscv_linker::{mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, EmuError, Fault, FaultKind, RunSummary};

/// Loads `progs` (each followed by `ecall`) on one tile of a fresh device and runs them.
fn run_cores(arch: Arch, progs: &[(Risc, Vec<u32>)]) -> (Device, Result<RunSummary, EmuError>) {
    let mut dev = device(arch);
    for (risc, words) in progs {
        let mut w = words.clone();
        w.push(ecall());
        dev.load_kernel(0, t0(arch), *risc, &elf_for(arch, *risc, &w), "test.elf")
            .expect("load");
    }
    let r = dev.run();
    (dev, r)
}

fn fault(arch: Arch, risc: Risc, words: Vec<u32>) -> (Fault, String) {
    let (_, r) = run_cores(arch, &[(risc, words)]);
    let e = r.expect_err("the program must stop");
    (e.fault().expect("a core fault").clone(), e.to_string())
}

fn regs(dev: &Device, arch: Arch, risc: Risc) -> [u32; 32] {
    dev.hart_registers(0, t0(arch), risc).unwrap().1
}

/// `t0`: the address register of the programs.
const P: u32 = 5;
/// `t1`: the value register.
const V: u32 = 6;
const A: [u32; 6] = [10, 11, 12, 13, 14, 15];

#[test]
fn brisc_mailbox_to_itself_gives_values_back_in_order() {
    for arch in Arch::ALL {
        let mut w = lis(&[(P, mmio::mailbox(0)), (V, 1)]);
        w.push(sw(V, P, 0)); // push 1
        w.extend(li(V, 2));
        w.push(sw(V, P, 0)); // push 2
        w.push(lw(A[0], P, mmio::MAILBOX_STATUS as i32)); // 1: something to pop
        w.push(lw(A[1], P, 0)); // pop: 1
        w.push(lw(A[2], P, 0)); // pop: 2
        w.push(lw(A[3], P, 4)); // 0: empty, and the status read does not wait
        w.extend(li(V, 0x1122_3344));
        w.push(sw(V, P, 0x40)); // any address of the window pushes
        w.push(lbu(A[4], P, 1)); // a byte load pops the whole word
        w.push(lw(A[5], P, 4));
        let (dev, r) = run_cores(arch, &[(Risc::Brisc, w)]);
        r.unwrap_or_else(|e| panic!("{arch:?}: {e}"));
        let x = regs(&dev, arch, Risc::Brisc);
        assert_eq!(A.map(|a| x[a as usize]), [1, 1, 2, 0, 0x33, 0], "{arch:?}");
    }
}

/// BRISC pushes 1..=12 to TRISC0 with no status checks: it waits while the mailbox holds 4;
/// TRISC0 pops 12 values with no status checks: it waits while the mailbox is empty.
/// Every value arrives, in order, on both engines and arches, with identical cycles.
#[test]
fn pushes_and_pops_wait_for_each_other_across_cores() {
    for arch in Arch::ALL {
        let mut results = Vec::new();
        for jit in [true, false] {
            // BRISC: for v in 1..=12 { push v }
            let mut b = lis(&[(P, mmio::mailbox(1)), (V, 1), (A[5], 13)]);
            b.push(sw(V, P, 0));
            b.push(addi(V, V, 1));
            b.push(bne(V, A[5], -8));
            // TRISC0: sum = 0; for _ in 0..12 { sum = sum * 31 + pop }
            let mut t = lis(&[(P, mmio::mailbox(0)), (A[0], 0), (A[1], 12), (A[2], 31)]);
            t.push(lw(V, P, 0));
            t.push(mul(A[0], A[0], A[2]));
            t.push(add(A[0], A[0], V));
            t.push(addi(A[1], A[1], -1));
            t.push(bne(A[1], 0, -16));
            let mut cfg = DeviceConfig::new(arch, (1, 1));
            cfg.jit = jit;
            let mut dev = Device::new(cfg).expect("device");
            for (risc, words) in [(Risc::Brisc, b), (Risc::Trisc0, t)] {
                let mut w = words;
                w.push(ecall());
                dev.load_kernel(0, t0(arch), risc, &elf_for(arch, risc, &w), "test.elf")
                    .expect("load");
            }
            let s = dev.run().unwrap_or_else(|e| panic!("{arch:?}: {e}"));
            let x = regs(&dev, arch, Risc::Trisc0);
            let want = (1..=12u32).fold(0u32, |acc, v| acc.wrapping_mul(31).wrapping_add(v));
            assert_eq!(
                x[A[0] as usize], want,
                "{arch:?} jit={jit}: the values in order"
            );
            results.push(s);
        }
        assert_eq!(
            results[0], results[1],
            "{arch:?}: interpreter and JIT agree"
        );
    }
}

/// Two cores each pop from a mailbox only the other could fill, before pushing: no core can
/// move. The run stops with a deadlock naming both.
#[test]
fn two_cores_waiting_on_each_other_is_a_deadlock() {
    let arch = Arch::WormholeB0;
    let b = {
        let mut w = lis(&[(P, mmio::mailbox(1))]);
        w.push(lw(V, P, 0));
        w.push(sw(V, P, 0));
        w
    };
    let t = {
        let mut w = lis(&[(P, mmio::mailbox(0))]);
        w.push(lw(V, P, 0));
        w.push(sw(V, P, 0));
        w
    };
    let (_, r) = run_cores(arch, &[(Risc::Brisc, b), (Risc::Trisc0, t)]);
    let msg = r.expect_err("deadlock").to_string();
    assert!(
        msg.contains("deadlock") && msg.contains("BRISC at pc") && msg.contains("TRISC_0 at pc"),
        "{msg}"
    );
}

#[test]
fn a_pop_of_an_empty_mailbox_waits() {
    // No core will ever push: a deadlock, reported at once.
    let mut w = lis(&[(P, mmio::mailbox(1))]);
    w.push(lw(A[0], P, 0));
    let (f, msg) = fault(Arch::WormholeB0, Risc::Trisc1, w);
    assert_eq!(
        f.kind,
        FaultKind::Blocked {
            addr: mmio::mailbox(1),
            write: false
        }
    );
    assert!(
        msg.contains("waits on an empty FIFO") && msg.contains("TENSIX_MAILBOX"),
        "{msg}"
    );
}

#[test]
fn a_fifth_push_waits() {
    let mut w = lis(&[(P, mmio::mailbox(2))]);
    w.extend([sw(0, P, 0), sw(0, P, 0), sw(0, P, 0), sw(0, P, 0)]);
    w.push(sw(0, P, 0));
    let (f, _) = fault(Arch::Blackhole, Risc::Trisc2, w);
    assert_eq!(
        f.kind,
        FaultKind::Blocked {
            addr: mmio::mailbox(2),
            write: true
        }
    );
    assert_eq!(f.instret, 6, "four pushes done, the fifth not retired");
}

#[test]
fn brisc_writes_a_trisc_gpr_and_the_trisc_reads_it() {
    // Cores run in causal order: TRISC1 counts down 200 loop steps (about 400 cycles)
    // before it reads, long after BRISC's stores.
    let arch = Arch::WormholeB0;
    let mut b = lis(&[
        (P, mmio::REGFILE_BASE + mmio::GPRS_PER_THREAD_BYTES + 8),
        (V, 42),
    ]);
    b.push(sw(V, P, 0)); // thread V, GPR 2
    b.extend(lis(&[(P, mmio::TENSIX_CFG_BASE + 0x10), (V, 7)]));
    b.push(sw(V, P, 0));
    let mut t = lis(&[(P, mmio::REGFILE_BASE), (A[3], 200)]);
    t.push(addi(A[3], A[3], -1));
    t.push(bne(A[3], 0, -4));
    t.push(lw(A[0], P, 8));
    t.extend(li(P, mmio::TENSIX_CFG_BASE + 0x10));
    t.push(lw(A[1], P, 0));
    let (dev, r) = run_cores(arch, &[(Risc::Brisc, b), (Risc::Trisc1, t)]);
    r.unwrap();
    let x = regs(&dev, arch, Risc::Trisc1);
    assert_eq!((x[10], x[11]), (42, 7));
}

#[test]
fn semaphores_and_ttsync_from_a_trisc() {
    let mut w = lis(&[(P, mmio::SEMAPHORE_BASE + 4 * 5)]);
    w.extend([sw(0, P, 0), sw(0, P, 0), sw(0, P, 0)]); // post x3
    w.extend(li(V, 1));
    w.push(sw(V, P, 0)); // get
    w.push(lw(A[0], P, 0));
    w.push(lw(A[1], P, 4)); // semaphore 6, untouched
    w.extend(li(P, mmio::TTSYNC_COPROCESSOR_DONE));
    w.push(sw(0, P, 0));
    w.push(lw(A[2], P, 0)); // returns at once: the Tensix thread has nothing in flight
    w.push(andi(A[2], A[2], 0));
    let (dev, r) = run_cores(Arch::WormholeB0, &[(Risc::Trisc0, w)]);
    r.unwrap();
    let x = regs(&dev, Arch::WormholeB0, Risc::Trisc0);
    assert_eq!((x[10], x[11], x[12]), (2, 0, 0));
}

#[test]
fn windows_a_core_does_not_have_name_region_and_core() {
    let mut w = lis(&[(P, mmio::MAILBOX_BASE)]);
    w.push(lw(A[0], P, 0));
    let (f, msg) = fault(Arch::WormholeB0, Risc::Ncrisc, w);
    assert!(
        matches!(
            f.kind,
            FaultKind::Unmapped {
                addr: mmio::MAILBOX_BASE,
                size: 4,
                write: false,
                risc: Risc::Ncrisc,
                ..
            }
        ),
        "{msg}"
    );
    for part in ["TENSIX_MAILBOX", "unmapped for NCRISC"] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
    let mut w = lis(&[(P, mmio::PC2_BUF_BASE)]);
    w.push(sw(0, P, 0));
    let (f, msg) = fault(Arch::Blackhole, Risc::Trisc2, w);
    assert!(
        matches!(
            f.kind,
            FaultKind::Unmapped {
                write: true,
                risc: Risc::Trisc2,
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("PC2_BUF_BASE") && msg.contains("TRISC_2"),
        "{msg}"
    );
}

#[test]
fn ttinsn_of_an_unmodelled_instruction_stops_with_the_tensix_diagnosis() {
    let nop = 0x0200_0000; // Tensix NOP: modelled
    let dotpv = 0x2900_0000; // not modelled
    let (f, msg) = fault(
        Arch::WormholeB0,
        Risc::Trisc0,
        vec![addi(10, 0, 1), ttinsn(nop), ttinsn(dotpv)],
    );
    assert!(
        matches!(
            &f.kind,
            FaultKind::TensixPush {
                word: 0x2900_0000,
                addr: mmio::INSTRN_BUF_BASE,
                risc: Risc::Trisc0,
                thread: 0,
                mnemonic: "DOTPV",
                ..
            }
        ),
        "{msg}"
    );
    assert_eq!((f.pc, f.word, f.instret), (0x6008, Some(ttinsn(dotpv)), 2));
    for part in [
        "TRISC_0",
        "Tensix instruction DOTPV (0x29000000)",
        "Tensix thread T0",
        "DOTPV is not modelled",
        ".ttinsn 0x29000000",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
    assert!(
        !msg.contains("illegal") && !msg.contains("outside every region"),
        "{msg}"
    );
    // NCRISC cannot push: `.ttinsn` is a store to a window it does not have.
    let (f, msg) = fault(Arch::WormholeB0, Risc::Ncrisc, vec![ttinsn(nop)]);
    assert!(
        matches!(
            f.kind,
            FaultKind::Unmapped {
                addr: mmio::INSTRN_BUF_BASE,
                write: true,
                risc: Risc::Ncrisc,
                ..
            }
        ),
        "{msg}"
    );
}

#[test]
fn stores_to_the_push_windows_stop_with_the_tensix_diagnosis() {
    for (risc, base, thread) in [
        (Risc::Brisc, mmio::INSTRN_BUF_BASE, 0),
        (Risc::Brisc, mmio::INSTRN1_BUF_BASE, 1),
        (Risc::Brisc, mmio::INSTRN2_BUF_BASE, 2),
        (Risc::Trisc1, mmio::INSTRN_BUF_BASE, 1),
        (Risc::Trisc2, mmio::INSTRN_BUF_BASE, 2),
    ] {
        let mut w = lis(&[(P, base), (V, 0x1634_5678)]); // TRNSPSRCB: not modelled
        w.push(sw(V, P, 0));
        let (f, msg) = fault(Arch::Blackhole, risc, w);
        assert!(
            matches!(
                f.kind,
                FaultKind::TensixPush {
                    word: 0x1634_5678,
                    addr,
                    risc: r,
                    thread: t,
                    mnemonic: "TRNSPSRCB",
                    ..
                } if addr == base && r == risc && t == thread
            ),
            "{msg}"
        );
        assert!(
            msg.contains("TRNSPSRCB is not modelled")
                && msg.contains(risc.name())
                && msg.contains("0x16345678"),
            "{msg}"
        );
    }
    // A TRISC's load from its push window, or a push to another thread's window.
    let mut w = lis(&[(P, mmio::INSTRN_BUF_BASE)]);
    w.push(lw(A[0], P, 0));
    assert!(matches!(
        fault(Arch::WormholeB0, Risc::Trisc0, w).0.kind,
        FaultKind::WriteOnly {
            risc: Risc::Trisc0,
            ..
        }
    ));
    let mut w = lis(&[(P, mmio::INSTRN1_BUF_BASE)]);
    w.push(sw(0, P, 0));
    assert!(matches!(
        fault(Arch::WormholeB0, Risc::Trisc1, w).0.kind,
        FaultKind::Unmapped {
            risc: Risc::Trisc1,
            ..
        }
    ));
}
