//! Directed tests: every RV32IM + Zicsr instruction, run on the emulator end to end
//! (assembled, wrapped in an ELF, loaded on TRISC0 of a Blackhole tile, run to `ecall`).

mod common;

use common::*;
use riscv_linker::{mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::FaultKind;

const A: u32 = 5;
const B: u32 = 6;
const D: u32 = 7;

type RFn = fn(u32, u32, u32) -> u32;

fn check_r(name: &str, f: RFn, cases: &[(u32, u32, u32)]) {
    for &(a, b, want) in cases {
        let mut w = lis(&[(A, a), (B, b)]);
        w.push(f(D, A, B));
        let got = regs_after(&w)[D as usize];
        assert_eq!(
            got, want,
            "{name} {a:#x}, {b:#x}: got {got:#x}, want {want:#x}"
        );
    }
}

type IFn = fn(u32, u32, i32) -> u32;

fn check_i(name: &str, f: IFn, cases: &[(u32, i32, u32)]) {
    for &(a, imm, want) in cases {
        let mut w = lis(&[(A, a)]);
        w.push(f(D, A, imm));
        let got = regs_after(&w)[D as usize];
        assert_eq!(
            got, want,
            "{name} {a:#x}, {imm}: got {got:#x}, want {want:#x}"
        );
    }
}

const MIN: u32 = 0x8000_0000;
const M1: u32 = u32::MAX;

#[test]
fn add_sub_and_logic() {
    check_r(
        "add",
        add,
        &[(1, 2, 3), (M1, 1, 0), (MIN, MIN, 0), (0x7FFF_FFFF, 1, MIN)],
    );
    check_r("sub", sub, &[(3, 2, 1), (0, 1, M1), (MIN, 1, 0x7FFF_FFFF)]);
    check_r("xor", xor, &[(0xF0F0, 0xFF00, 0x0FF0), (M1, M1, 0)]);
    check_r("or", or, &[(0xF0F0, 0xFF00, 0xFFF0)]);
    check_r("and", and, &[(0xF0F0, 0xFF00, 0xF000)]);
}

#[test]
fn shifts_use_only_five_bits() {
    check_r("sll", sll, &[(1, 31, MIN), (1, 32, 1), (3, 33, 6)]);
    check_r(
        "srl",
        srl,
        &[(MIN, 31, 1), (MIN, 32, MIN), (M1, 4, 0x0FFF_FFFF)],
    );
    check_r(
        "sra",
        sra,
        &[(MIN, 31, M1), (MIN, 4, 0xF800_0000), (0x4000_0000, 30, 1)],
    );
    for (f, name, a, sh, want) in [
        (slli as fn(u32, u32, u32) -> u32, "slli", 1u32, 31u32, MIN),
        (srli, "srli", MIN, 31, 1),
        (srai, "srai", MIN, 31, M1),
        (srai, "srai", 0x7000_0000, 4, 0x0700_0000),
    ] {
        let mut w = lis(&[(A, a)]);
        w.push(f(D, A, sh));
        assert_eq!(regs_after(&w)[D as usize], want, "{name}");
    }
}

#[test]
fn comparisons_signed_and_unsigned() {
    check_r(
        "slt",
        slt,
        &[(M1, 0, 1), (0, M1, 0), (MIN, 0x7FFF_FFFF, 1), (5, 5, 0)],
    );
    check_r("sltu", sltu, &[(M1, 0, 0), (0, M1, 1), (5, 5, 0)]);
    check_i("slti", slti, &[(M1, 0, 1), (0, -1, 0), (5, 6, 1)]);
    check_i("sltiu", sltiu, &[(0, -1, 1), (M1, -1, 0), (5, 6, 1)]);
}

#[test]
fn immediate_arithmetic_sign_extends() {
    check_i(
        "addi",
        addi,
        &[(1, -1, 0), (0, -2048, 0xFFFF_F800), (0, 2047, 2047)],
    );
    check_i("xori", xori, &[(0x0F, -1, 0xFFFF_FFF0)]);
    check_i("ori", ori, &[(0x100, -2048, 0xFFFF_F900)]);
    check_i("andi", andi, &[(M1, -16, 0xFFFF_FFF0), (M1, 0x7FF, 0x7FF)]);
}

#[test]
fn multiply_all_halves() {
    check_r(
        "mul",
        mul,
        &[(3, 4, 12), (M1, M1, 1), (0x1_0001, 0x1_0001, 0x0002_0001)],
    );
    check_r(
        "mulh",
        mulh,
        &[(M1, M1, 0), (MIN, MIN, 0x4000_0000), (MIN, 1, M1)],
    );
    check_r(
        "mulhsu",
        mulhsu,
        &[(M1, M1, M1), (MIN, M1, 0x8000_0000), (1, M1, 0)],
    );
    check_r("mulhu", mulhu, &[(M1, M1, 0xFFFF_FFFE), (MIN, 2, 1)]);
}

#[test]
fn divide_edge_cases_follow_the_spec() {
    check_r(
        "div",
        div,
        &[
            (7, 2, 3),
            (-7i32 as u32, 2, -3i32 as u32),
            (5, 0, M1),
            (MIN, M1, MIN),
        ],
    );
    check_r("divu", divu, &[(7, 2, 3), (M1, 2, 0x7FFF_FFFF), (5, 0, M1)]);
    check_r(
        "rem",
        rem,
        &[(7, 2, 1), (-7i32 as u32, 2, M1), (5, 0, 5), (MIN, M1, 0)],
    );
    check_r("remu", remu, &[(7, 2, 1), (5, 0, 5), (M1, 10, 5)]);
}

#[test]
fn lui_auipc_and_x0_stays_zero() {
    let r = regs_after(&[lui(D, 0xABCDE), auipc(8, 1), addi(0, 0, 5), lui(0, 1)]);
    assert_eq!(r[D as usize], 0xABCD_E000);
    // auipc is the second instruction, at code start + 4 (TRISC0 code starts at 0x6000).
    assert_eq!(r[8], 0x6004 + 0x1000);
    assert_eq!(r[0], 0);
}

#[test]
fn jumps_link_and_land() {
    // 0: jal ra, +8 ; 4: addi a0,a0,1 (skipped) ; 8: addi a1,a1,1
    let r = regs_after(&[jal(1, 8), addi(10, 10, 1), addi(11, 11, 1)]);
    assert_eq!((r[1], r[10], r[11]), (0x6004, 0, 1));
    // jalr clears bit 0 of the target and links pc+4; rd == rs1 uses the old value.
    let mut w = lis(&[(5, 0x6000 + 17)]); // 8 bytes; target 0x6010 after &!1
    w.extend([
        jalr(5, 5, 0),
        addi(10, 0, 1),
        addi(11, 0, 2),
        addi(12, 0, 3),
    ]);
    let r = regs_after(&w);
    assert_eq!((r[5], r[10], r[11], r[12]), (0x600C, 0, 2, 3));
    // backwards jal
    let r = regs_after(&[jal(0, 12), addi(13, 0, 7), jal(0, 8), jal(0, -8)]);
    assert_eq!(r[13], 7);
}

#[test]
fn every_branch_taken_and_not_taken() {
    type BFn = fn(u32, u32, i32) -> u32;
    let cases: [(&str, BFn, u32, u32, bool); 14] = [
        ("beq", beq, 3, 3, true),
        ("beq", beq, 3, 4, false),
        ("bne", bne, 3, 4, true),
        ("bne", bne, 3, 3, false),
        ("blt", blt, M1, 0, true),
        ("blt", blt, 0, M1, false),
        ("bge", bge, 0, M1, true),
        ("bge", bge, 5, 5, true),
        ("bge", bge, M1, 0, false),
        ("bltu", bltu, 0, M1, true),
        ("bltu", bltu, M1, 0, false),
        ("bgeu", bgeu, M1, 0, true),
        ("bgeu", bgeu, 5, 5, true),
        ("bgeu", bgeu, 0, M1, false),
    ];
    for (name, f, a, b, taken) in cases {
        let mut w = lis(&[(A, a), (B, b)]);
        w.extend([f(A, B, 8), addi(10, 0, 1), addi(11, 0, 1)]);
        let r = regs_after(&w);
        assert_eq!((r[10] == 0, r[11]), (taken, 1), "{name} {a:#x} {b:#x}");
    }
}

#[test]
fn loads_and_stores_of_every_width_in_l1_and_local_ram() {
    for base in [0x3_0000u32, mmio::LOCAL_RAM_BASE + 0x100] {
        let mut w = lis(&[(A, base), (B, 0x8081_F2F3)]);
        w.extend([
            sw(B, A, 0),
            lw(10, A, 0),
            lb(11, A, 0),  // 0xF3 -> sign-extended
            lbu(12, A, 0), // 0xF3
            lh(13, A, 2),  // 0x8081 -> sign-extended
            lhu(14, A, 2),
            sb(B, A, 5), // byte 0xF3 at +5
            sh(B, A, 6), // half 0xF2F3 at +6
            lw(15, A, 4),
            lb(16, A, 1), // 0xF2
            lw(17, A, -4 + 4),
        ]);
        let r = regs_after(&w);
        assert_eq!(r[10], 0x8081_F2F3, "lw at {base:#x}");
        assert_eq!(r[11], 0xFFFF_FFF3, "lb");
        assert_eq!(r[12], 0xF3, "lbu");
        assert_eq!(r[13], 0xFFFF_8081, "lh");
        assert_eq!(r[14], 0x8081, "lhu");
        assert_eq!(r[15], 0xF2F3_F300, "sb/sh");
        assert_eq!(r[16], 0xFFFF_FFF2, "lb of a middle byte");
        assert_eq!(r[17], 0x8081_F2F3);
    }
}

#[test]
fn stores_to_l1_are_visible_to_the_host() {
    let mut w = lis(&[(A, 0x3_0010), (B, 0xDEAD_BEEF)]);
    w.extend([sw(B, A, 0), ecall()]);
    let (dev, r) = run(&w);
    r.unwrap();
    assert_eq!(
        dev.read_u32(0, t0(Arch::Blackhole), 0x3_0010).unwrap(),
        0xDEAD_BEEF
    );
}

#[test]
fn fences_are_no_ops_and_ecall_returns_a0() {
    let mut w = vec![fence(), fence_i(), addi(10, 0, 42)];
    w.push(ecall());
    let (_, r) = run(&w);
    let s = r.unwrap();
    let h = s.hart(0, t0(Arch::Blackhole), Risc::Trisc0).unwrap();
    assert_eq!(h.exit_code, Some(42));
    assert_eq!(h.instructions, 4, "ecall retires");
}

#[test]
fn ebreak_stops_the_run_as_a_panic() {
    let (_, r) = run(&[addi(10, 0, 1), ebreak()]);
    let e = r.unwrap_err();
    let f = e.fault().expect("a fault");
    assert_eq!(f.kind, FaultKind::Ebreak);
    assert_eq!(f.pc, 0x6004);
    assert!(
        e.to_string().contains("kernel stopped at ebreak/panic"),
        "{e}"
    );
}

#[test]
fn csr_scratch_registers_and_counters() {
    let r = regs_after(&[
        addi(5, 0, 0x55),
        csr(1, 0, 0x340, 5),  // csrrw x0, mscratch, t0
        csr(2, 10, 0x340, 0), // csrrs a0, mscratch, x0
        csr(6, 11, 0x340, 2), // csrrsi a1, mscratch, 2 (old value)
        csr(7, 12, 0x340, 1), // csrrci a2, mscratch, 1
        csr(2, 13, 0x340, 0), // final value
        csr(2, 14, 0xC02, 0), // instret: 6 retired before this one
        csr(2, 15, 0xF14, 0), // mhartid
        csr(5, 16, 0x341, 9), // csrrwi a6, mepc, 9 (old 0)
        csr(2, 17, 0x341, 0),
        csr(2, 18, 0x301, 0), // misa
    ]);
    assert_eq!(r[10], 0x55);
    assert_eq!(r[11], 0x55);
    assert_eq!(r[12], 0x57);
    assert_eq!(r[13], 0x56);
    assert_eq!(r[14], 6);
    assert_eq!(r[15], 0);
    assert_eq!((r[16], r[17]), (0, 9));
    assert_eq!(r[18], ttprof_emu::MISA_RV32IM);
}

#[test]
fn cycle_and_time_csrs_follow_the_pipeline_model() {
    // The first fetch misses the empty instruction cache (8 cycles); then each ALU
    // instruction and each CSR read costs 1 cycle (nothing is in flight to serialise on).
    let r = regs_after(&[
        csr(2, 10, 0xC00, 0), // cycle at issue of instruction 0: 8 (the miss)
        addi(0, 0, 0),
        addi(0, 0, 0),
        csr(2, 11, 0xC00, 0), // after 3 one-cycle instructions: 11
        csr(2, 12, 0xC01, 0), // time = wall clock: a new 16-byte line, another miss: 20
        csr(2, 13, 0xC81, 0),
    ]);
    assert_eq!((r[10], r[11]), (8, 11));
    assert_eq!((r[12], r[13]), (20, 0));
}

#[test]
fn csr_faults_on_wormhole_unknown_and_read_only() {
    let (_, r) = run_on(
        Arch::WormholeB0,
        Risc::Trisc0,
        &[csr(2, 10, 0xC00, 0), ecall()],
    );
    let e = r.unwrap_err();
    assert!(
        matches!(e.fault().unwrap().kind, FaultKind::Csr { csr: 0xC00, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("no Zicsr"), "{e}");
    let (_, r) = run(&[csr(2, 10, 0x7C1, 0), ecall()]);
    assert!(matches!(
        r.unwrap_err().fault().unwrap().kind,
        FaultKind::Csr { csr: 0x7C1, .. }
    ));
    let (_, r) = run(&[csr(1, 0, 0xC00, 5), ecall()]);
    assert!(r.unwrap_err().to_string().contains("read-only"));
}
