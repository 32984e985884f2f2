//! The JIT and the interpreter must agree bit for bit: same instructions retired, same
//! cycles, same memory, same hook points, same faults. Each scenario runs both ways.

mod common;

use common::*;
use riscv_linker::{memory_map, mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, Misaligned, TileOffsets};

/// Everything observable about a finished (or faulted) run.
#[derive(Debug, PartialEq)]
struct Outcome {
    result: String,
    regs: Vec<(u32, [u32; 32])>,
    l1: Vec<u32>,
    hooks: Vec<u32>,
}

fn scenario(
    jit: bool,
    arch: Arch,
    misaligned: Misaligned,
    kernels: &[(Risc, Vec<u32>)],
    hook_every: Option<u64>,
) -> Outcome {
    scenario_on(jit, false, arch, misaligned, kernels, hook_every).0
}

/// [`scenario`], optionally in lines mode; also returns the device.
fn scenario_on(
    jit: bool,
    lines: bool,
    arch: Arch,
    misaligned: Misaligned,
    kernels: &[(Risc, Vec<u32>)],
    hook_every: Option<u64>,
) -> (Outcome, Device) {
    let mut cfg = DeviceConfig::new(arch, (2, 1));
    cfg.jit = jit;
    cfg.lines = lines;
    cfg.misaligned = misaligned;
    cfg.instruction_budget = 200_000;
    cfg.clock.tile_offsets = TileOffsets::Seeded {
        max_cycles: 5000,
        seed: 9,
    };
    let mut dev = Device::new(cfg).unwrap();
    for tile in dev.tiles() {
        for (risc, words) in kernels {
            dev.load_kernel(0, tile, *risc, &elf_for(arch, *risc, words), "k")
                .unwrap();
        }
    }
    let tiles = dev.tiles();
    let mut hooks = Vec::new();
    let result = match hook_every {
        Some(n) => dev.run_with_hook(n, &mut |d| {
            let v = d.read_u32(0, tiles[0], 0x3_0000).unwrap();
            hooks.push(v);
            d.write_u32(0, tiles[0], 0x3_0004, v).unwrap();
        }),
        None => dev.run(),
    };
    // After a fault only the reported (first) tile's state is specified: the others stop
    // wherever they were when they noticed.
    let (result, inspect) = match result {
        Ok(s) => (format!("{s:?}"), &tiles[..]),
        Err(e) => (e.to_string(), &tiles[..1]),
    };
    let mut regs = Vec::new();
    let mut l1 = Vec::new();
    for &tile in inspect {
        for (risc, _) in kernels {
            regs.push(dev.hart_registers(0, tile, *risc).unwrap());
        }
        let mut w = vec![0u32; 256];
        dev.read_words(0, tile, 0x3_0000, &mut w).unwrap();
        l1.extend(w);
    }
    let o = Outcome {
        result,
        regs,
        l1,
        hooks,
    };
    (o, dev)
}

fn agree(
    arch: Arch,
    misaligned: Misaligned,
    kernels: &[(Risc, Vec<u32>)],
    hook: Option<u64>,
) -> Outcome {
    let a = scenario(true, arch, misaligned, kernels, hook);
    let b = scenario(false, arch, misaligned, kernels, hook);
    assert_eq!(a, b, "JIT and interpreter disagree");
    a
}

/// A loop mixing every fast path and slow path: L1 and local RAM loads/stores of every
/// width, MMIO clock reads, division, a call and return (jalr), and a shared counter.
fn mixed(risc: Risc, iters: u32) -> Vec<u32> {
    let m = memory_map(Arch::WormholeB0, risc);
    let mut w = lis(&[
        (5, 0x3_0000),
        (6, mmio::WALL_CLOCK_L),
        (7, m.stack_top - 64),
        (8, iters),
        (20, 0x3_0100 + 0x80 * risc.index() as u32),
    ]);
    let body = vec![
        lw(9, 6, 0),  // wall clock (MMIO: interpreter)
        lw(10, 5, 0), // shared counter
        beq(0, 0, 4), // check point inside the read-modify-write
        addi(10, 10, 1),
        sw(10, 5, 0),
        sw(9, 7, 0), // local RAM
        lh(11, 7, 2),
        lbu(12, 7, 1),
        sb(12, 20, 3),
        sh(11, 20, 6),
        lw(13, 20, 4),
        divu(14, 9, 8), // division: interpreter
        mul(15, 14, 13),
        mulhu(16, 15, 9),
        add(17, 17, 16),
        jal(1, 12), // call +12
        addi(8, 8, -1),
        jal(0, 12),      // to the loop test
        xor(18, 18, 17), // the "function": one instruction then ret
        jalr(0, 1, 0),
        bne(8, 0, -4 * 20),
        sw(17, 20, 8),
        sw(18, 20, 12),
        ecall(),
    ];
    w.extend(body);
    w
}

#[test]
fn a_mixed_workload_on_five_cores_agrees() {
    let kernels: Vec<(Risc, Vec<u32>)> = Risc::ALL.iter().map(|&r| (r, mixed(r, 300))).collect();
    let o = agree(Arch::WormholeB0, Misaligned::Strict, &kernels, None);
    assert!(
        o.result.starts_with("RunSummary") && !o.result.contains("exit_code: None"),
        "{}",
        o.result
    );
    assert!(
        o.l1[0] > 300 && o.l1[0] < 1500,
        "shared counter {}",
        o.l1[0]
    );
}

#[test]
fn hook_points_agree() {
    // A producer that waits for the hook to acknowledge: ACK (0x30004) must reach SEQ.
    let mut w = lis(&[(5, 0x3_0000), (6, 1), (7, 41)]);
    w.extend([
        sw(6, 5, 0),
        lw(9, 5, 4),
        bne(9, 6, -4),
        addi(6, 6, 1),
        bne(6, 7, -16),
        ecall(),
    ]);
    let o = agree(
        Arch::Blackhole,
        Misaligned::Strict,
        &[(Risc::Trisc1, w)],
        Some(100),
    );
    assert_eq!(o.hooks.iter().max(), Some(&40));
}

#[test]
fn faults_agree() {
    let store_into_code = {
        let mut w = lis(&[(5, 0x6000), (8, 50)]);
        w.extend([addi(8, 8, -1), bne(8, 0, -4), sw(0, 5, 0), ecall()]);
        w
    };
    let misaligned = {
        let mut w = lis(&[(5, 0x3_0001)]);
        w.extend([lw(6, 5, 0), lh(7, 5, 1), sw(6, 5, 2), ecall()]);
        w
    };
    let runaway = vec![addi(5, 5, 1), jal(0, -4)];
    for (risc, w) in [
        (Risc::Brisc, store_into_code),
        (Risc::Ncrisc, misaligned.clone()),
        (Risc::Trisc2, runaway),
    ] {
        let o = agree(Arch::WormholeB0, Misaligned::Strict, &[(risc, w)], None);
        assert!(o.result.starts_with("chip 0"), "{}", o.result);
    }
    let o = agree(
        Arch::WormholeB0,
        Misaligned::RoundDown,
        &[(Risc::Ncrisc, misaligned)],
        None,
    );
    assert!(
        o.result.contains("exit_code"),
        "round-down mode runs to the end: {}",
        o.result
    );
}

#[test]
fn lines_mode_changes_nothing_and_charges_every_cycle() {
    use ttprof_emu::Cause;
    let kernels: Vec<(Risc, Vec<u32>)> = Risc::ALL.iter().map(|&r| (r, mixed(r, 300))).collect();
    for arch in [Arch::WormholeB0, Arch::Blackhole] {
        let plain = scenario(true, arch, Misaligned::Strict, &kernels, None);
        let (lined, dev) = scenario_on(true, true, arch, Misaligned::Strict, &kernels, None);
        assert_eq!(plain, lined, "lines mode changed the run on {arch:?}");
        let profiles = dev.line_profiles();
        // The JIT's counts give the interpreter's table, pc by pc and cause by cause.
        let (_, interpreted) = scenario_on(false, true, arch, Misaligned::Strict, &kernels, None);
        assert_eq!(profiles, interpreted.line_profiles(), "{arch:?}");
        assert_eq!(profiles.len(), 2 * Risc::ALL.len());
        let mut by_cause = [0u64; ttprof_emu::lines::CAUSES];
        for h in &profiles {
            let sum: u64 = h.rows.iter().flat_map(|(_, c)| c.iter()).sum();
            assert_eq!(
                sum, h.cycles,
                "{:?} {:?}: charged vs cycles",
                h.tile, h.risc
            );
            assert!(h.cycles > 300 * 20, "{:?}", h.risc);
            assert!(plain.result.contains(&format!("cycles: {}", h.cycles)));
            for (_, c) in &h.rows {
                for (k, v) in c.iter().enumerate() {
                    by_cause[k] += v;
                }
            }
        }
        for cause in [
            Cause::Issue,
            Cause::LoadUse,
            Cause::Mispredict,
            Cause::ICacheMiss,
        ] {
            assert!(
                by_cause[cause as usize] > 0,
                "{arch:?}: no {cause:?} cycles"
            );
        }
        // The forward taken `beq` (pc index 5+2 after the 5 `lis` pairs) mispredicts on
        // every iteration: at least 300 times the arch's penalty.
        let brisc = &profiles[0];
        let penalty = ttprof_emu::Timing::for_arch(arch).mispredict as u64;
        let worst = brisc
            .rows
            .iter()
            .map(|(_, c)| c[Cause::Mispredict as usize])
            .max()
            .unwrap();
        assert_eq!(worst, 300 * penalty, "{arch:?}");
    }
}
