//! Zba and Zbb end to end: a program using them runs on a Blackhole core through the public
//! API (with and without the JIT, which leaves them to the interpreter: same registers,
//! same cycles), and the same words stop a Wormhole core as illegal instructions.

mod common;

use common::*;
use riscv_linker::{Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, EmuError, FaultKind, RunSummary};

/// Zba and Zbb encodings (ratified bit-manipulation spec v1.0.0, RV32); the crate's
/// assembler is RV32IM.
mod zb {
    fn r(f7: u32, f3: u32, rd: u32, rs1: u32, rs2: u32, opc: u32) -> u32 {
        (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
    }
    pub fn sh2add(rd: u32, rs1: u32, rs2: u32) -> u32 {
        r(0b0010000, 4, rd, rs1, rs2, 0x33)
    }
    pub fn sh3add(rd: u32, rs1: u32, rs2: u32) -> u32 {
        r(0b0010000, 6, rd, rs1, rs2, 0x33)
    }
    pub fn max(rd: u32, rs1: u32, rs2: u32) -> u32 {
        r(0b0000101, 6, rd, rs1, rs2, 0x33)
    }
    pub fn maxu(rd: u32, rs1: u32, rs2: u32) -> u32 {
        r(0b0000101, 7, rd, rs1, rs2, 0x33)
    }
    pub fn andn(rd: u32, rs1: u32, rs2: u32) -> u32 {
        r(0b0100000, 7, rd, rs1, rs2, 0x33)
    }
    pub fn clz(rd: u32, rs1: u32) -> u32 {
        r(0b0110000, 1, rd, rs1, 0, 0x13)
    }
    pub fn ctz(rd: u32, rs1: u32) -> u32 {
        r(0b0110000, 1, rd, rs1, 1, 0x13)
    }
    pub fn cpop(rd: u32, rs1: u32) -> u32 {
        r(0b0110000, 1, rd, rs1, 2, 0x13)
    }
    pub fn sext_b(rd: u32, rs1: u32) -> u32 {
        r(0b0110000, 1, rd, rs1, 4, 0x13)
    }
    pub fn zext_h(rd: u32, rs1: u32) -> u32 {
        r(0b0000100, 4, rd, rs1, 0, 0x33)
    }
    pub fn rori(rd: u32, rs1: u32, shamt: u32) -> u32 {
        r(0b0110000, 5, rd, rs1, shamt, 0x13)
    }
    pub fn orc_b(rd: u32, rs1: u32) -> u32 {
        r(0b0010100, 5, rd, rs1, 0b00111, 0x13)
    }
    pub fn rev8(rd: u32, rs1: u32) -> u32 {
        r(0b0110100, 5, rd, rs1, 0b11000, 0x13)
    }
}

/// A loop whose body mixes Zba/Zbb with instructions the JIT compiles, then straight-line
/// Zbb, then `ecall`.
fn program() -> Vec<u32> {
    let mut w = vec![
        addi(10, 0, 0),  // acc = 0
        addi(11, 0, 10), // i = 10
        addi(13, 0, 0),  // clz sum = 0
        // loop: acc += 4 * i; clz sum += clz(acc); i -= 1; bnez i, loop
        zb::sh2add(10, 11, 10),
        zb::clz(12, 10),
        add(13, 13, 12),
        addi(11, 11, -1),
        bne(11, 0, -16),
    ];
    w.extend(lis(&[(5, 0x80), (6, 0x1234_5678), (7, 0x0012_0034)]));
    w.extend([
        zb::sext_b(14, 5),    // 0xFFFFFF80
        zb::rev8(15, 6),      // 0x78563412
        zb::zext_h(16, 14),   // 0xFF80
        zb::sh3add(17, 5, 6), // 0x400 + 0x12345678
        zb::orc_b(18, 7),     // 0x00FF00FF
        zb::max(19, 14, 5),   // signed: max(-128, 128) = 128
        zb::maxu(20, 14, 5),  // unsigned: 0xFFFFFF80
        zb::rori(21, 6, 8),   // 0x78123456
        zb::ctz(22, 0),       // ctz(0) = 32
        zb::cpop(23, 14),     // 25
        zb::andn(24, 6, 7),   // 0x12345678 & !0x00120034
        ecall(),
    ]);
    w
}

fn run_with(arch: Arch, jit: bool, words: &[u32]) -> (Device, Result<RunSummary, EmuError>) {
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.jit = jit;
    let mut dev = Device::new(cfg).expect("device");
    dev.load_kernel(
        0,
        t0(arch),
        Risc::Brisc,
        &elf_for(arch, Risc::Brisc, words),
        "zb.elf",
    )
    .expect("load");
    let r = dev.run();
    (dev, r)
}

#[test]
fn blackhole_runs_zba_and_zbb_with_and_without_the_jit() {
    let mut clz_sum = 0;
    let mut acc = 0u32;
    for i in (1..=10u32).rev() {
        acc += 4 * i;
        clz_sum += acc.leading_zeros();
    }
    let mut outcomes = Vec::new();
    for jit in [false, true] {
        let (dev, r) = run_with(Arch::Blackhole, jit, &program());
        let summary = r.unwrap_or_else(|e| panic!("jit {jit}: {e}"));
        let h = summary
            .hart(0, t0(Arch::Blackhole), Risc::Brisc)
            .copied()
            .expect("BRISC ran");
        let regs = dev
            .hart_registers(0, t0(Arch::Blackhole), Risc::Brisc)
            .unwrap()
            .1;
        assert_eq!(
            (regs[10], regs[11], regs[13]),
            (220, 0, clz_sum),
            "jit {jit}"
        );
        assert_eq!(
            regs[14..=24],
            [
                0xFFFF_FF80,
                0x7856_3412,
                0xFF80,
                0x1234_5A78,
                0x00FF_00FF,
                0x80,
                0xFFFF_FF80,
                0x7812_3456,
                32,
                25,
                0x1224_5648,
            ],
            "jit {jit}"
        );
        outcomes.push((regs, h.instructions, h.cycles, h.exit_code));
    }
    assert_eq!(
        outcomes[0], outcomes[1],
        "the JIT and the interpreter agree"
    );
}

#[test]
fn wormhole_stops_at_the_first_zbb_instruction_as_illegal() {
    for jit in [false, true] {
        let (_, r) = run_with(Arch::WormholeB0, jit, &program());
        let e = r.expect_err("Wormhole B0 has no Zba/Zbb");
        let f = e.fault().expect("a core fault");
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "jit {jit}: {e}");
        // The first `sh2add`, after the three `addi` (and the boot word's `jal`).
        let code = riscv_linker::memory_map(Arch::WormholeB0, Risc::Brisc)
            .code
            .start;
        assert_eq!((f.pc, f.instret), (code + 12, 4), "jit {jit}");
        assert!(e.to_string().contains("illegal instruction"), "{e}");
        assert!(e.to_string().contains("sh2add a0, a1, a0"), "{e}");
    }
}
