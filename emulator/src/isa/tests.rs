//! The interpreter alone, over a flat RAM: no chip, no devices, no JIT. What these tests
//! check (results, the pipeline's cycles, where a run stops, faults) is the interpreter's
//! own; the chip's memory system is the bus's business.

use crate::bus::{local_load, local_store, Marks, TileBus, L1};
use crate::config::Timing;
use crate::error::FaultKind;
use crate::isa::asm::*;
use crate::isa::exec::Exit;
use crate::isa::hart::Hart;
use crate::map::Region;
use riscv_linker::{memory_map, mmio::LOCAL_RAM_BASE, Arch, Risc};

/// L1 as plain memory and nothing else: any other address faults.
struct FlatRam {
    _backing: Vec<u128>,
    l1: L1,
    timing: Timing,
}

impl FlatRam {
    fn new(bytes: u32) -> FlatRam {
        let mut backing = vec![0u128; bytes as usize / 16];
        // SAFETY: `backing` is 16-byte aligned, `bytes` long, and lives as long as `l1`
        // (both in this value; the Vec's heap block does not move).
        let l1 = unsafe { L1::new(backing.as_mut_ptr() as *mut u8, bytes) };
        FlatRam {
            _backing: backing,
            l1,
            timing: Timing::for_arch(Arch::WormholeB0),
        }
    }
}

impl TileBus for FlatRam {
    fn l1(&self) -> &L1 {
        &self.l1
    }

    fn timing(&self) -> &Timing {
        &self.timing
    }

    fn aligned(&self, addr: u32, size: u32, write: bool) -> Result<u32, FaultKind> {
        if addr & (size - 1) == 0 {
            Ok(addr)
        } else {
            Err(FaultKind::Misaligned { addr, size, write })
        }
    }

    fn load<const N: u32>(&mut self, local: &[u8], addr: u32, _: u64) -> Result<u32, FaultKind> {
        if addr < self.l1.size() {
            return Ok(self.l1.load::<N>(addr));
        }
        if let Some(v) = local_load::<N>(local, addr) {
            return Ok(v);
        }
        Err(FaultKind::Access {
            addr,
            size: N,
            write: false,
        })
    }

    fn store<const N: u32>(
        &mut self,
        local: &mut [u8],
        addr: u32,
        v: u32,
        _: u64,
    ) -> Result<(), FaultKind> {
        if addr < self.l1.size() {
            self.l1.store::<N>(addr, v);
            return Ok(());
        }
        if local_store::<N>(local, addr, v) {
            return Ok(());
        }
        Err(FaultKind::Access {
            addr,
            size: N,
            write: true,
        })
    }

    fn region(&self, addr: u32, local_len: u32) -> Region {
        if addr < self.l1.size() {
            Region::L1
        } else if addr.wrapping_sub(LOCAL_RAM_BASE) < local_len {
            Region::Local
        } else {
            Region::Mmio
        }
    }

    fn read_is_timeless(&self, _: u32) -> bool {
        true
    }

    fn wall(&self, time: u64) -> u64 {
        time
    }

    fn reset_pending(&self) -> bool {
        false
    }

    fn sampled(&mut self) -> bool {
        false
    }

    fn sample(&mut self, _: u32, _: u64, _: u64, _: &Marks) -> Result<(), FaultKind> {
        Ok(())
    }
}

/// A Wormhole BRISC with `program` at the start of its code region, out of reset at cycle 0.
fn core_with(program: &[u32]) -> (Hart, FlatRam) {
    core_on(Arch::WormholeB0, program)
}

/// A BRISC of `arch` with `program` at the start of its code region, out of reset at cycle 0.
fn core_on(arch: Arch, program: &[u32]) -> (Hart, FlatRam) {
    let map = memory_map(arch, Risc::Brisc);
    let ram = FlatRam::new(arch.l1_size());
    for (k, &w) in program.iter().enumerate() {
        ram.l1.store::<4>(map.code.start + 4 * k as u32, w);
    }
    let mut hart = Hart::new(map);
    hart.install(&ram.l1);
    hart.release(0);
    hart.core.pc = map.code.start;
    (hart, ram)
}

fn run(hart: &mut Hart, ram: &mut FlatRam) -> Result<Exit, FaultKind> {
    hart.interpret(ram, u64::MAX, false, true)
}

#[test]
fn a_loop_sums_and_halts_with_a0() {
    // a0 = 0; t0 = 10; loop: a0 += t0; t0 -= 1; bnez t0, loop; ecall
    let (mut hart, mut ram) = core_with(&[
        addi(10, 0, 0),
        addi(5, 0, 10),
        add(10, 10, 5),
        addi(5, 5, -1),
        bne(5, 0, -8),
        ecall(),
    ]);
    assert_eq!(run(&mut hart, &mut ram), Ok(Exit::Halted(55)));
    assert_eq!(hart.core.instret, 2 + 3 * 10 + 1);
}

#[test]
fn loads_and_stores_reach_l1_and_local_ram() {
    let mut p = vec![];
    p.extend(li(6, 0x1_0000));
    p.extend(li(7, LOCAL_RAM_BASE));
    p.extend([
        addi(5, 0, 0x5A),
        sw(5, 6, 0),
        sb(5, 7, 3),
        lw(10, 6, 0),
        lbu(11, 7, 3),
        add(10, 10, 11),
        ecall(),
    ]);
    let (mut hart, mut ram) = core_with(&p);
    assert_eq!(run(&mut hart, &mut ram), Ok(Exit::Halted(0xB4)));
    assert_eq!(ram.l1.load::<4>(0x1_0000), 0x5A);
    assert_eq!(hart.local[3], 0x5A);
}

/// Cycles of `program` from leaving reset to its `ecall`.
fn cycles(program: &[u32]) -> u64 {
    let (mut hart, mut ram) = core_with(program);
    assert!(matches!(run(&mut hart, &mut ram), Ok(Exit::Halted(_))));
    hart.core.time
}

#[test]
fn a_load_used_at_once_waits_for_its_region_latency() {
    let t = Timing::for_arch(Arch::WormholeB0);
    for (base, latency) in [(0x1_0000, t.l1_load), (LOCAL_RAM_BASE, t.local_load)] {
        let mut used = li(6, base).to_vec();
        used.extend([lw(5, 6, 0), addi(7, 5, 1), ecall()]);
        let mut unused = li(6, base).to_vec();
        unused.extend([lw(5, 6, 0), addi(7, 0, 1), ecall()]);
        // The dependent `addi` issues when the load's result is ready (`latency` cycles
        // after the load reaches memory); the independent one the next cycle.
        assert_eq!(
            cycles(&used) - cycles(&unused),
            latency as u64 - 1,
            "load from {base:#x}"
        );
    }
}

#[test]
fn a_run_stops_at_the_first_control_transfer_past_its_limit_and_resumes() {
    let program = [
        addi(10, 0, 0),
        addi(5, 0, 100),
        add(10, 10, 5),
        addi(5, 5, -1),
        bne(5, 0, -8),
        ecall(),
    ];
    let (mut whole, mut ram) = core_with(&program);
    assert_eq!(run(&mut whole, &mut ram), Ok(Exit::Halted(5050)));

    let (mut hart, mut ram) = core_with(&program);
    let mut stops = 0;
    let exit = loop {
        let limit = hart.core.time + 7;
        match hart.interpret(&mut ram, limit, false, true) {
            Ok(Exit::Limit) => {
                // Only at a check point: after a branch, i.e. at the loop's head or exit.
                assert!(hart.core.time >= limit);
                assert!([8, 20].contains(&(hart.core.pc - hart.map.code.start)));
                stops += 1;
            }
            other => break other,
        }
    };
    assert_eq!(exit, Ok(Exit::Halted(5050)));
    assert!(stops > 10, "{stops} stops");
    // Stopping and resuming changes nothing: the same instructions, the same cycles.
    assert_eq!(
        (hart.core.instret, hart.core.time),
        (whole.core.instret, whole.core.time)
    );
}

#[test]
fn faults_name_the_access_and_leave_pc_on_the_instruction() {
    let cases: [(&[u32], FaultKind); 4] = [
        (
            &[lui(6, 0x80000), lw(5, 6, 0)],
            FaultKind::Access {
                addr: 0x8000_0000,
                size: 4,
                write: false,
            },
        ),
        (
            &[addi(6, 0, 0x102), sw(5, 6, 0)],
            FaultKind::Misaligned {
                addr: 0x102,
                size: 4,
                write: true,
            },
        ),
        (&[addi(5, 0, 1), ebreak()], FaultKind::Ebreak),
        (&[addi(5, 0, 1), 0xFFFF_FFFF], FaultKind::IllegalInstruction),
    ];
    for (program, want) in cases {
        let (mut hart, mut ram) = core_with(program);
        assert_eq!(run(&mut hart, &mut ram), Err(want.clone()));
        assert_eq!(hart.core.pc, hart.map.code.start + 4, "{want:?}");
        assert_eq!(hart.core.instret, 1, "{want:?}");
    }
}

/// Zba and Zbb encodings (ratified bit-manipulation spec v1.0.0, RV32), for the tests: the
/// crate's assembler is RV32IM.
mod zb {
    fn r(f7: u32, f3: u32, rd: u32, rs1: u32, rs2: u32, opc: u32) -> u32 {
        (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
    }
    macro_rules! op {
        ($($name:ident = $f7:expr, $f3:expr;)*) => {$(
            pub fn $name(rd: u32, rs1: u32, rs2: u32) -> u32 { r($f7, $f3, rd, rs1, rs2, 0x33) }
        )*};
    }
    op! {
        sh1add = 0b0010000, 2; sh2add = 0b0010000, 4; sh3add = 0b0010000, 6;
        andn = 0b0100000, 7; orn = 0b0100000, 6; xnor = 0b0100000, 4;
        max = 0b0000101, 6; maxu = 0b0000101, 7; min = 0b0000101, 4; minu = 0b0000101, 5;
        rol = 0b0110000, 1; ror = 0b0110000, 5;
    }
    macro_rules! unary {
        ($($name:ident = $f7:expr, $sel:expr, $f3:expr, $opc:expr;)*) => {$(
            pub fn $name(rd: u32, rs1: u32) -> u32 { r($f7, $f3, rd, rs1, $sel, $opc) }
        )*};
    }
    unary! {
        clz = 0b0110000, 0, 1, 0x13; ctz = 0b0110000, 1, 1, 0x13; cpop = 0b0110000, 2, 1, 0x13;
        sext_b = 0b0110000, 4, 1, 0x13; sext_h = 0b0110000, 5, 1, 0x13;
        zext_h = 0b0000100, 0, 4, 0x33;
        orc_b = 0b0010100, 0b00111, 5, 0x13; rev8 = 0b0110100, 0b11000, 5, 0x13;
    }
    pub fn rori(rd: u32, rs1: u32, shamt: u32) -> u32 {
        r(0b0110000, 5, rd, rs1, shamt, 0x13)
    }
}

/// `rd` (x7) after `f` on x5 = `a`, x6 = `b` on a Blackhole core (interpreter, no chip).
fn zb_result(insn: u32, a: u32, b: u32) -> u32 {
    let mut p = li(5, a).to_vec();
    p.extend(li(6, b));
    p.extend([insn, ecall()]);
    let (mut hart, mut ram) = core_on(Arch::Blackhole, &p);
    assert_eq!(
        run(&mut hart, &mut ram),
        Ok(Exit::Halted(0)),
        "{insn:#010x}"
    );
    hart.core.regs[7]
}

/// Known values for every Zba and Zbb instruction on RV32, edge cases included.
#[test]
fn zba_and_zbb_compute_what_the_spec_says() {
    type R = fn(u32, u32, u32) -> u32;
    type Binary<'a> = (&'a str, R, &'a [(u32, u32, u32)]);
    let binary: &[Binary] = &[
        (
            "sh1add",
            zb::sh1add,
            &[(3, 10, 16), (0x8000_0001, 1, 3), (u32::MAX, 0, 0xFFFF_FFFE)],
        ),
        (
            "sh2add",
            zb::sh2add,
            &[
                (3, 10, 22),
                (0x4000_0001, 0, 4),
                (0x1000, 0x2000_0000, 0x2000_4000),
            ],
        ),
        (
            "sh3add",
            zb::sh3add,
            &[(3, 10, 34), (0x2000_0001, 1, 9), (u32::MAX, 8, 0)],
        ),
        (
            "andn",
            zb::andn,
            &[
                (0xF0F0, 0xFF00, 0x00F0),
                (u32::MAX, 0, u32::MAX),
                (u32::MAX, u32::MAX, 0),
            ],
        ),
        (
            "orn",
            zb::orn,
            &[
                (0xF0F0, 0xFFFF_00FF, 0xFFF0),
                (0, 0, u32::MAX),
                (0, u32::MAX, 0),
            ],
        ),
        (
            "xnor",
            zb::xnor,
            &[
                (0xF0F0, 0xFF00, 0xFFFF_F00F),
                (u32::MAX, u32::MAX, u32::MAX),
                (0, u32::MAX, 0),
            ],
        ),
        // Signed against unsigned: 0xFFFFFFFF is -1 signed, the largest unsigned.
        (
            "max",
            zb::max,
            &[
                (u32::MAX, 1, 1),
                (0x8000_0000, 0x7FFF_FFFF, 0x7FFF_FFFF),
                (5, 5, 5),
            ],
        ),
        (
            "maxu",
            zb::maxu,
            &[
                (u32::MAX, 1, u32::MAX),
                (0x8000_0000, 0x7FFF_FFFF, 0x8000_0000),
            ],
        ),
        (
            "min",
            zb::min,
            &[
                (u32::MAX, 1, u32::MAX),
                (0x8000_0000, 0x7FFF_FFFF, 0x8000_0000),
                (0, 0, 0),
            ],
        ),
        (
            "minu",
            zb::minu,
            &[(u32::MAX, 1, 1), (0x8000_0000, 0x7FFF_FFFF, 0x7FFF_FFFF)],
        ),
        // Rotations use the low five bits of rs2: by 0, 31, and 32 (= 0) and 33 (= 1).
        (
            "rol",
            zb::rol,
            &[
                (0x8000_0001, 0, 0x8000_0001),
                (0x8000_0001, 1, 3),
                (0x8000_0001, 31, 0xC000_0000),
                (0x1234_5678, 32, 0x1234_5678),
                (0x1234_5678, 33, 0x2468_ACF0),
            ],
        ),
        (
            "ror",
            zb::ror,
            &[
                (0x8000_0001, 0, 0x8000_0001),
                (0x8000_0001, 1, 0xC000_0000),
                (0x8000_0001, 31, 3),
                (0x1234_5678, 32, 0x1234_5678),
                (0x1234_5678, 36, 0x8123_4567),
            ],
        ),
    ];
    for &(name, f, cases) in binary {
        for &(a, b, want) in cases {
            let got = zb_result(f(7, 5, 6), a, b);
            assert_eq!(got, want, "{name} {a:#x}, {b:#x}: got {got:#x}");
        }
    }
    type U = fn(u32, u32) -> u32;
    type Unary<'a> = (&'a str, U, &'a [(u32, u32)]);
    let unary: &[Unary] = &[
        (
            "clz",
            zb::clz,
            &[(0, 32), (1, 31), (0x8000_0000, 0), (0x0001_0000, 15)],
        ),
        (
            "ctz",
            zb::ctz,
            &[(0, 32), (1, 0), (0x8000_0000, 31), (0x0001_0000, 16)],
        ),
        (
            "cpop",
            zb::cpop,
            &[(0, 0), (u32::MAX, 32), (0x8000_0001, 2), (0xF0F0, 8)],
        ),
        (
            "sext.b",
            zb::sext_b,
            &[
                (0x80, 0xFFFF_FF80),
                (0x7F, 0x7F),
                (0xFFFF_FF00, 0),
                (0x1234_56FF, u32::MAX),
            ],
        ),
        (
            "sext.h",
            zb::sext_h,
            &[
                (0x8000, 0xFFFF_8000),
                (0x7FFF, 0x7FFF),
                (0xFFFF_0000, 0),
                (0x1234_89AB, 0xFFFF_89AB),
            ],
        ),
        (
            "zext.h",
            zb::zext_h,
            &[
                (0xFFFF_8000, 0x8000),
                (0x1234_5678, 0x5678),
                (u32::MAX, 0xFFFF),
            ],
        ),
        (
            "orc.b",
            zb::orc_b,
            &[
                (0, 0),
                (0x0100_8000, 0xFF00_FF00),
                (0x0102_0304, u32::MAX),
                (0x80, 0xFF),
            ],
        ),
        (
            "rev8",
            zb::rev8,
            &[(0x1234_5678, 0x7856_3412), (0xFF, 0xFF00_0000), (0, 0)],
        ),
    ];
    for &(name, f, cases) in unary {
        for &(a, want) in cases {
            let got = zb_result(f(7, 5), a, 0xDEAD_BEEF);
            assert_eq!(got, want, "{name} {a:#x}: got {got:#x}");
        }
    }
    for (a, shamt, want) in [
        (0x8000_0001, 0, 0x8000_0001),
        (0x8000_0001, 1, 0xC000_0000),
        (0x8000_0001, 31, 3),
        (0x1234_5678, 4, 0x8123_4567),
    ] {
        let got = zb_result(zb::rori(7, 5, shamt), a, 0);
        assert_eq!(got, want, "rori {a:#x}, {shamt}: got {got:#x}");
    }
    // rd = x0 stays zero; rd = rs1 reads before it writes.
    assert_eq!(zb_result(zb::clz(0, 5), 1, 0), 0);
    let mut p = li(5, 3).to_vec();
    p.extend([zb::sh3add(5, 5, 5), ecall()]);
    let (mut hart, mut ram) = core_on(Arch::Blackhole, &p);
    assert_eq!(run(&mut hart, &mut ram), Ok(Exit::Halted(0)));
    assert_eq!(hart.core.regs[5], 27);
}

/// Every Zba/Zbb instruction, one word each.
fn zb_words() -> [u32; 21] {
    [
        zb::sh1add(7, 5, 6),
        zb::sh2add(7, 5, 6),
        zb::sh3add(7, 5, 6),
        zb::andn(7, 5, 6),
        zb::orn(7, 5, 6),
        zb::xnor(7, 5, 6),
        zb::clz(7, 5),
        zb::ctz(7, 5),
        zb::cpop(7, 5),
        zb::max(7, 5, 6),
        zb::maxu(7, 5, 6),
        zb::min(7, 5, 6),
        zb::minu(7, 5, 6),
        zb::sext_b(7, 5),
        zb::sext_h(7, 5),
        zb::zext_h(7, 5),
        zb::rol(7, 5, 6),
        zb::ror(7, 5, 6),
        zb::rori(7, 5, 3),
        zb::orc_b(7, 5),
        zb::rev8(7, 5),
    ]
}

#[test]
fn zba_and_zbb_are_illegal_instructions_on_wormhole() {
    // The fault of an undecodable word, at the same pc, cycle and instruction count.
    let (mut reference, mut ram) = core_with(&[addi(5, 0, 1), 0xFFFF_FFFF]);
    assert_eq!(
        run(&mut reference, &mut ram),
        Err(FaultKind::IllegalInstruction)
    );
    for w in zb_words() {
        let (mut hart, mut ram) = core_with(&[addi(5, 0, 1), w]);
        assert_eq!(
            run(&mut hart, &mut ram),
            Err(FaultKind::IllegalInstruction),
            "{w:#010x}"
        );
        assert_eq!(
            (hart.core.pc, hart.core.instret, hart.core.time),
            (
                reference.core.pc,
                reference.core.instret,
                reference.core.time
            ),
            "{w:#010x}"
        );
        assert_eq!(hart.core.regs[7], 0, "{w:#010x} wrote rd");
        // The one-instruction step (what the JIT hands the interpreter) faults alike.
        let (mut hart, mut ram) = core_with(&[w]);
        assert_eq!(
            hart.step(&mut ram, false),
            Err(FaultKind::IllegalInstruction)
        );
        // And the same word runs on Blackhole.
        let (mut hart, mut ram) = core_on(Arch::Blackhole, &[addi(5, 0, 1), w, ecall()]);
        assert_eq!(run(&mut hart, &mut ram), Ok(Exit::Halted(0)), "{w:#010x}");
    }
}

#[test]
fn zba_and_zbb_cost_what_an_alu_instruction_costs() {
    // Back to back and dependent: each takes one cycle and forwards to the next, like `add`.
    let body = |f: &dyn Fn(u32, u32, u32) -> u32| {
        let mut p = li(5, 0x1234).to_vec();
        p.extend([f(6, 5, 5), f(7, 6, 6), f(8, 7, 7), addi(9, 8, 1), ecall()]);
        p
    };
    let (mut hart, mut ram) = core_on(Arch::Blackhole, &body(&|d, a, b| add(d, a, b)));
    assert!(matches!(run(&mut hart, &mut ram), Ok(Exit::Halted(_))));
    let alu = hart.core.time;
    for (name, f) in [
        ("sh2add", zb::sh2add as fn(u32, u32, u32) -> u32),
        ("andn", zb::andn),
        ("maxu", zb::maxu),
        ("ror", zb::ror),
    ] {
        let (mut hart, mut ram) = core_on(Arch::Blackhole, &body(&f));
        assert!(matches!(run(&mut hart, &mut ram), Ok(Exit::Halted(_))));
        assert_eq!(hart.core.time, alu, "{name}");
    }
    for (name, f) in [
        ("clz", zb::clz as fn(u32, u32) -> u32),
        ("rev8", zb::rev8),
        ("sext.b", zb::sext_b),
    ] {
        let (mut hart, mut ram) = core_on(Arch::Blackhole, &body(&|d, a, _| f(d, a)));
        assert!(matches!(run(&mut hart, &mut ram), Ok(Exit::Halted(_))));
        assert_eq!(hart.core.time, alu, "{name}");
    }
}
