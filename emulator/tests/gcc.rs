//! Programs compiled by `riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -nostdlib`
//! with the project's linker script, run on the emulator. The compiler is installed by
//! `scripts/install-test-tools.sh`; without it these tests fail and say so.

mod common;

use common::gcc::{build, START};
use common::*;
use riscv_linker::{Arch, Risc};
use ttprof_emu::FaultKind;

const SORT: &str = r#"
static int data[12] = {9, -3, 27, 0, 14, -8, 5, 5, 100, -42, 7, 1};
static unsigned scratch[4];
int main(void) {
    for (int i = 1; i < 12; i++) {
        int v = data[i], j = i - 1;
        while (j >= 0 && data[j] > v) { data[j + 1] = data[j]; j--; }
        data[j + 1] = v;
    }
    volatile int *out = (volatile int *)0x30000;
    unsigned sum = 0;
    for (int i = 0; i < 12; i++) { out[i] = data[i]; sum = sum * 31u + (unsigned)data[i]; }
    scratch[1] = sum;
    /* a little M-extension work: gcd and a remainder */
    unsigned a = 1071u * scratch[1 + (sum & 0)], b = 462u * 7u;
    while (b) { unsigned t = a % b; a = b; b = t; }
    return (int)(sum ^ (a / 3u));
}
"#;

#[test]
fn a_gcc_built_program_sorts_and_exits_with_its_checksum() {
    let arch = Arch::WormholeB0;
    let elf = build("sort", SORT, arch, Risc::Trisc1);
    let bytes = std::fs::read(&elf).unwrap();
    let mut dev = device(arch);
    let tile = t0(arch);
    dev.load_kernel(0, tile, Risc::Trisc1, &bytes, elf.to_str().unwrap())
        .unwrap();
    let s = dev.run().unwrap();

    let mut sorted = [9, -3, 27, 0, 14, -8, 5, 5, 100, -42, 7, 1];
    sorted.sort();
    let mut sum = 0u32;
    for (i, &v) in sorted.iter().enumerate() {
        assert_eq!(
            dev.read_u32(0, tile, 0x30000 + 4 * i as u32).unwrap() as i32,
            v
        );
        sum = sum.wrapping_mul(31).wrapping_add(v as u32);
    }
    let (mut a, mut b) = (1071u32.wrapping_mul(sum), 462u32 * 7);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let h = s.hart(0, tile, Risc::Trisc1).unwrap();
    assert_eq!(h.exit_code, Some(sum ^ (a / 3)));
    assert!(h.instructions > 100);
}

const BOOM: &str = r#"
__attribute__((noinline)) void boom(volatile int *p) {
    *p = 1;
}
int main(void) {
    boom((volatile int *)0x6000);
    return 0;
}
"#;

#[test]
fn a_fault_in_a_gcc_program_names_function_and_source_line() {
    let arch = Arch::Blackhole;
    let elf = build("boom", BOOM, arch, Risc::Ncrisc);
    let mut dev = device(arch);
    dev.load_kernel(
        0,
        t0(arch),
        Risc::Ncrisc,
        &std::fs::read(&elf).unwrap(),
        "boom.elf",
    )
    .unwrap();
    let e = dev.run().unwrap_err();
    let f = e.fault().unwrap();
    assert_eq!(
        f.kind,
        FaultKind::StoreIntoCode {
            addr: 0x6000,
            owner: Risc::Trisc0
        }
    );
    assert_eq!(
        f.symbol.as_deref().map(|s| s.split('+').next().unwrap()),
        Some("boom"),
        "{e}"
    );
    let full = format!("{START}\n{BOOM}");
    let line = full.lines().position(|l| l.contains("*p = 1;")).unwrap() + 1;
    assert!(
        f.location
            .as_deref()
            .is_some_and(|l| l.ends_with(&format!("boom.c:{line}"))),
        "{e}"
    );
    assert!(e.to_string().contains("sw "), "{e}");
}

/// BRISC sends 1..=10 to TRISC0 through their mailbox. The consumer polls the mailbox's
/// status word before each pop and the producer keeps at most four values in flight (the
/// consumer counts what it took in L1), so no access ever has to wait.
const MAILBOX_PRODUCER: &str = r#"
__asm__(".section .ttprof.boot,\"ax\"\n j _start\n"); /* BRISC's reset PC is 0 */
#define MAILBOX(i) ((volatile unsigned *)(0xFFEC0000u + (i) * 0x1000u))
#define TAKEN (*(volatile unsigned *)0x40000)
int main(void) {
    unsigned sent = 0;
    for (unsigned v = 1; v <= 10; v++) {
        while (sent - TAKEN >= 4) {}
        MAILBOX(1)[0] = v; /* BRISC writes window 1: the mailbox from BRISC to TRISC0 */
        sent++;
    }
    return (int)sent;
}
"#;

const MAILBOX_CONSUMER: &str = r#"
#define MAILBOX(i) ((volatile unsigned *)(0xFFEC0000u + (i) * 0x1000u))
#define TAKEN (*(volatile unsigned *)0x40000)
int main(void) {
    volatile unsigned *out = (volatile unsigned *)0x40010;
    unsigned sum = 0;
    for (unsigned i = 0; i < 10; i++) {
        while (MAILBOX(0)[1] == 0) {} /* TRISC0 reads window 0: from BRISC; +4 = status */
        unsigned v = MAILBOX(0)[0];   /* pop */
        out[i] = v;
        sum = sum * 31u + v;
        TAKEN = i + 1;
    }
    return (int)sum;
}
"#;

#[test]
fn gcc_built_brisc_and_trisc0_pass_values_through_a_mailbox_in_order() {
    for arch in Arch::ALL {
        let producer = build("mailbox_producer", MAILBOX_PRODUCER, arch, Risc::Brisc);
        let consumer = build("mailbox_consumer", MAILBOX_CONSUMER, arch, Risc::Trisc0);
        let mut dev = device(arch);
        let tile = t0(arch);
        dev.write_u32(0, tile, 0x40000, 0).unwrap();
        dev.load_kernel(
            0,
            tile,
            Risc::Brisc,
            &std::fs::read(&producer).unwrap(),
            "producer.elf",
        )
        .unwrap();
        dev.load_kernel(
            0,
            tile,
            Risc::Trisc0,
            &std::fs::read(&consumer).unwrap(),
            "consumer.elf",
        )
        .unwrap();
        let s = dev.run().unwrap_or_else(|e| panic!("{arch:?}: {e}"));
        let got: Vec<u32> = (0..10)
            .map(|i| dev.read_u32(0, tile, 0x40010 + 4 * i).unwrap())
            .collect();
        assert_eq!(got, (1..=10).collect::<Vec<u32>>(), "{arch:?}");
        let sum = (1..=10u32).fold(0u32, |s, v| s.wrapping_mul(31).wrapping_add(v));
        assert_eq!(s.hart(0, tile, Risc::Brisc).unwrap().exit_code, Some(10));
        assert_eq!(s.hart(0, tile, Risc::Trisc0).unwrap().exit_code, Some(sum));
    }
}

/// `.ttinsn` from C (gcc's assembler does not know the mnemonic; the word is the Tensix
/// instruction rotated left by two).
const TTINSN: &str = r#"
__attribute__((noinline)) void push_nop(void) {
    __asm__ volatile(".word 0x08000000"); /* .ttinsn 0x02000000: a Tensix NOP */
}
__attribute__((noinline)) void push_dotpv(void) {
    __asm__ volatile(".word 0xA4000000"); /* .ttinsn 0x29000000: DOTPV, not modelled */
}
int main(void) {
    push_nop();
    push_dotpv();
    return 0;
}
"#;

#[test]
fn a_ttinsn_in_a_gcc_program_stops_with_the_tensix_diagnosis() {
    let arch = Arch::WormholeB0;
    let elf = build("ttinsn", TTINSN, arch, Risc::Trisc2);
    let mut dev = device(arch);
    dev.load_kernel(
        0,
        t0(arch),
        Risc::Trisc2,
        &std::fs::read(&elf).unwrap(),
        "ttinsn.elf",
    )
    .unwrap();
    let e = dev.run().unwrap_err();
    let f = e.fault().unwrap();
    assert!(
        matches!(
            f.kind,
            FaultKind::TensixPush {
                word: 0x2900_0000,
                addr: 0xFFE4_0000,
                risc: Risc::Trisc2,
                thread: 2,
                mnemonic: "DOTPV",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        f.symbol.as_deref().map(|s| s.split('+').next().unwrap()),
        Some("push_dotpv"),
        "{e}"
    );
    for part in [
        "TRISC_2",
        "DOTPV",
        "0x29000000",
        "not modelled",
        ".ttinsn 0x29000000",
    ] {
        assert!(e.to_string().contains(part), "{part:?} missing from {e}");
    }
}

/// The C encoders of `ttprof_tensix.h` against the Rust ones, and a kernel that drives the
/// coprocessor through them: SEMINIT/SEMPOST, a GPR computed by the Scalar Unit and read
/// back through `REGFILE_BASE`.
const TENSIX_C: &str = r#"
#include "ttprof_tensix.h"
int main(void) {
    volatile uint32_t *out = (volatile uint32_t *)0x30000;
    out[0] = TTPROF_TENSIX_MOP(1, 0x7F, 0xFFFF);
    out[1] = TTPROF_TENSIX_REPLAY(31, 0, 1, 1);
    out[2] = TTPROF_TENSIX_SEMWAIT(2, 8, 1);
    out[3] = TTPROF_TENSIX_RMWCIB(3, 0xF0, 0xAB, 7);
    out[4] = TTPROF_TENSIX_SHIFTDMAREG(1, 1, 9, 33, 2);
    out[5] = TTPROF_TENSIX_ADDRCRZW(5, 1, 2, 3, 4, 0xF);
    out[6] = TTPROF_TENSIX_SETRWC(0xF, 1, 2, 3, 0xF);
    out[7] = TTPROF_TENSIX_SETADC(7, 1, 3, 0x3FFFF);
    out[8] = TTPROF_TENSIX_UNPACR(1, 0x44, 1, 0);
    out[9] = TTPROF_TENSIX_PACR(1, 0, 1, 1, 0, 0, 1);
    out[10] = TTPROF_TENSIX_ELWADD(3, 1, 2, 2, 0x3F8);
    out[11] = TTPROF_TENSIX_MVMUL(2, 1, 3, 16);
    out[12] = TTPROF_TENSIX_ZEROACC(1, 3, 0, 0);
    out[13] = TTPROF_TENSIX_MOVB2D(0, 1, 0, 5, 0);
    out[14] = TTPROF_TENSIX_MOVD2A(0, 0, 0, 1, 4);
    out[15] = TTPROF_TENSIX_CLEARDVALID(3, 1, 0);
    out[16] = TTPROF_TENSIX_ZEROSRC(1, 0, 1, 3);
    out[17] = TTPROF_TENSIX_ELWMUL(1, 1, 1, 0);
    out[18] = TTPROF_TENSIX_MOVDBGA2D(1, 8, 2, 1, 40);
    ttprof_tensix_push(TTPROF_TENSIX_SEMINIT(9, 4, 1 << 2));
    ttprof_tensix_push(TTPROF_TENSIX_SEMPOST(1 << 2));
    ttprof_tensix_push(TTPROF_TENSIX_SETDMAREG(20, 2));
    ttprof_tensix_push(TTPROF_TENSIX_MULDMAREG(1, 3, 7, 1));
    volatile uint32_t *sync = (volatile uint32_t *)0xFFE80004u; /* CoprocessorDoneCheck */
    *sync = 0;
    (void)*sync;
    uint32_t sem = *(volatile uint32_t *)(0xFFE80020u + 4 * 2);
    uint32_t gpr = *(volatile uint32_t *)(0xFFE00000u + 4 * 3);
    return (int)(sem * 1000 + gpr);
}
"#;

#[test]
fn the_c_tensix_encoders_match_the_rust_ones_and_drive_the_coprocessor() {
    use riscv_linker::tensix as tt;
    let arch = Arch::WormholeB0;
    let elf = build("tensix", TENSIX_C, arch, Risc::Trisc0);
    let mut dev = device(arch);
    let tile = t0(arch);
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc0,
        &std::fs::read(&elf).unwrap(),
        "tensix.elf",
    )
    .unwrap();
    let s = dev.run().unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<u32> = (0..19)
        .map(|i| dev.read_u32(0, tile, 0x30000 + 4 * i).unwrap())
        .collect();
    let want = [
        tt::mop(1, 0x7F, 0xFFFF),
        tt::replay(31, 0, true, true),
        tt::semwait(2, 8, 1),
        tt::rmwcib(3, 0xF0, 0xAB, 7),
        tt::shiftdmareg(true, 1, 9, 33, 2),
        tt::addrcrzw(5, [1, 2, 3, 4], 0xF),
        tt::setrwc(0xF, 1, 2, 3, 0xF),
        tt::setadc(7, 1, 3, 0x3FFFF),
        tt::unpacr(1, 0x44, true, false),
        tt::pacr(1, false, 1, true, false, false, true),
        tt::elwadd(3, true, 2, 2, 0x3F8),
        tt::mvmul(2, true, 3, 16),
        tt::zeroacc(true, 3, 0, 0),
        tt::movb2d(false, 1, 0, 5, 0),
        tt::movd2a(false, 0, 0, true, 4),
        tt::cleardvalid(3, true, false),
        tt::zerosrc(true, false, true, 3),
        tt::elwmul(1, 1, 1, 0),
        tt::movdbga2d(true, 8, 2, true, 40),
    ];
    assert_eq!(got, want);
    // Semaphore 2: 4 + 1; GPR 3 = GPR 1 (20) * 7.
    assert_eq!(
        s.hart(0, tile, Risc::Trisc0).unwrap().exit_code,
        Some(5 * 1000 + 140)
    );
}
