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

/// A BRISC with `program` at the start of its code region, out of reset at cycle 0.
fn core_with(program: &[u32]) -> (Hart, FlatRam) {
    let map = memory_map(Arch::WormholeB0, Risc::Brisc);
    let ram = FlatRam::new(Arch::WormholeB0.l1_size());
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
