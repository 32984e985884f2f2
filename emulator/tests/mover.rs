//! TDMA-RISC's mover and NCRISC's instruction RAM through whole runs (Wormhole B0): a core
//! copies code from L1 into the RAM with a mover command, polls the status until the mover
//! is idle, and NCRISC runs that code from 0xFFC00000; the mover writing the RAM while
//! NCRISC executes from it stops the run, as the ISA documentation says the RAM corrupts.

mod common;

use common::prog::{run_cores, Prog, P, V};
use riscv_linker::{mmio, Risc};
use ttprof_emu::asm::*;

/// Where the code for the instruction RAM is staged in L1.
const STAGE: u32 = 0x30000;
const TDMA: u32 = mmio::TDMA_REGS_BASE;
const IRAM: u32 = 0xFFC0_0000;

/// Stages `code` at [`STAGE`] and has the mover copy it to the start of the instruction RAM
/// (the four parameter registers, then command 0x40, as tt-metal's `tdma_xmov` does).
fn copy_to_iram(p: &mut Prog, code: &[u32]) {
    for (i, w) in code.iter().enumerate() {
        p.store(STAGE + 4 * i as u32, *w);
    }
    let units = (4 * code.len() as u32).div_ceil(16);
    p.store(TDMA, STAGE >> 4)
        .store(TDMA + 4, 0x4000) // the RAM as the mover sees it, 0x40000, in 16-byte units
        .store(TDMA + 8, units)
        .store(TDMA + 0xC, 1) // XMOV_L1_TO_L0
        .store(TDMA + 0x10, 0x40);
}

/// Polls `RISCV_TDMA_REG_STATUS` until the mover is idle (bit 0 clear).
fn wait_mover(p: &mut Prog) {
    p.0.extend(li(P, TDMA + 0x14));
    p.0.extend([lw(V, P, 0), andi(V, V, 1), bne(V, 0, -8)]);
}

#[test]
fn ncrisc_runs_code_the_mover_copied_into_its_instruction_ram() {
    let mut n = Prog::new();
    copy_to_iram(&mut n, &[addi(10, 0, 42), addi(11, 10, 1), ecall()]);
    wait_mover(&mut n);
    n.0.extend(li(P, IRAM));
    n.0.push(jalr(1, P, 0));
    let (dev, r) = run_cores(&[(Risc::Ncrisc, &n)]);
    r.unwrap_or_else(|e| panic!("{e}"));
    let (pc, regs) = dev
        .hart_registers(0, common::t0(riscv_linker::Arch::WormholeB0), Risc::Ncrisc)
        .unwrap();
    assert_eq!(
        (regs[10], regs[11]),
        (42, 43),
        "ran from the instruction RAM"
    );
    assert_eq!(pc, IRAM + 8, "halted at the RAM's ecall");
}

#[test]
fn the_mover_writing_the_instruction_ram_ncrisc_runs_from_stops_the_run() {
    // NCRISC copies a spin loop into the RAM and runs it.
    let mut n = Prog::new();
    copy_to_iram(&mut n, &[jal(0, 0)]);
    wait_mover(&mut n);
    n.0.extend(li(P, IRAM));
    n.0.push(jalr(0, P, 0));
    // BRISC waits, then has the mover write the RAM again.
    let mut b = Prog::new();
    b.spin(3000);
    b.store(TDMA, STAGE >> 4)
        .store(TDMA + 4, 0x4000)
        .store(TDMA + 8, 1)
        .store(TDMA + 0xC, 1)
        .store(TDMA + 0x10, 0x40);
    let (_, r) = run_cores(&[(Risc::Ncrisc, &n), (Risc::Brisc, &b)]);
    let e = r.expect_err("refused");
    let f = e.fault().expect("a core fault");
    assert_eq!(f.risc, Risc::Brisc, "{e}");
    assert!(
        e.to_string()
            .contains("the mover wrote it while NCRISC executes from it"),
        "{e}"
    );
}

#[test]
fn a_compact_mover_command_is_refused_naming_it() {
    let mut b = Prog::new();
    b.store(TDMA + 0x10, 0x8000_0040);
    let (_, r) = run_cores(&[(Risc::Brisc, &b)]);
    let e = r.expect_err("refused").to_string();
    assert!(
        e.contains("TDMA-RISC mover") && e.contains("0x80000040"),
        "{e}"
    );
}
