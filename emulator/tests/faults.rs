//! The memory map and every kind of fault: each stops the run with an error that names
//! chip, tile, RISC, pc, the instruction, its disassembly and the nearest symbol.

mod common;

use common::*;
use riscv_linker::{memory_map, mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, EmuError, FaultKind, HartState, Misaligned};

fn fault_of(words: &[u32]) -> (ttprof_emu::Fault, String) {
    let (_, r) = run(words);
    let e = r.expect_err("the program must fault");
    (e.fault().expect("a core fault").clone(), e.to_string())
}

#[test]
fn illegal_instruction_report_names_everything() {
    let (f, msg) = fault_of(&[addi(10, 0, 1), 0xFFFF_FFFF, ecall()]);
    assert_eq!(f.kind, FaultKind::IllegalInstruction);
    assert_eq!(
        (f.chip, f.tile, f.risc, f.pc, f.word),
        (0, t0(Arch::Blackhole), Risc::Trisc0, 0x6004, Some(u32::MAX))
    );
    assert_eq!(f.symbol.as_deref(), Some("_start+0x4"));
    assert_eq!(f.instret, 1);
    for part in [
        "chip 0",
        "tile (1,2)",
        "TRISC_0",
        "illegal instruction",
        "0x00006004",
        "0xffffffff",
        "<illegal instruction",
        "_start+0x4",
        "test.elf",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
}

#[test]
fn access_outside_every_region() {
    let mut w = lis(&[(5, 0x0200_0000)]);
    w.push(lw(6, 5, 0));
    let (f, msg) = fault_of(&w);
    assert_eq!(
        f.kind,
        FaultKind::Access {
            addr: 0x0200_0000,
            size: 4,
            write: false
        }
    );
    assert!(msg.contains("lw t1, 0(t0)"), "{msg}");
    // Just past the end of L1 (Blackhole: 1536 KiB).
    let mut w = lis(&[(5, Arch::Blackhole.l1_size())]);
    w.push(sb(0, 5, 0));
    assert_eq!(
        fault_of(&w).0.kind,
        FaultKind::Access {
            addr: Arch::Blackhole.l1_size(),
            size: 1,
            write: true
        }
    );
    // Past the end of TRISC local RAM (4 KiB on Blackhole), though BRISC has 8 KiB there.
    let addr = mmio::LOCAL_RAM_BASE + 0x1000;
    let mut w = lis(&[(5, addr)]);
    w.extend([sw(0, 5, 0), ecall()]);
    let (_, r) = run(&w);
    assert!(matches!(
        r.unwrap_err().fault().unwrap().kind,
        FaultKind::Access { write: true, .. }
    ));
    let (_, r) = run_on(Arch::Blackhole, Risc::Brisc, &w);
    r.expect("BRISC has 8 KiB of local RAM on Blackhole");
}

#[test]
fn stores_into_any_code_region_fault_with_the_owner() {
    for (addr, owner) in [
        (0x6000, Risc::Trisc0),
        (0x800, Risc::Brisc),
        (0x0, Risc::Brisc),
        (0x12000, Risc::Ncrisc),
    ] {
        let mut w = lis(&[(5, addr)]);
        w.push(sw(0, 5, 0));
        let (f, msg) = fault_of(&w);
        assert_eq!(f.kind, FaultKind::StoreIntoCode { addr, owner }, "{msg}");
    }
    // Loads from code and stores to the profiler control blocks and data are fine.
    let mut w = lis(&[
        (5, 0x6000),
        (6, 0x40),
        (7, memory_map(Arch::Blackhole, Risc::Trisc0).data.start),
    ]);
    w.extend([lw(8, 5, 0), sw(8, 6, 0), sw(8, 7, 0), ecall()]);
    run(&w).1.unwrap();
}

#[test]
fn misaligned_access_faults_in_strict_mode_and_rounds_down_in_hardware_mode() {
    let mut w = lis(&[(5, 0x3_0000), (6, 0x1122_3344)]);
    w.extend([sw(6, 5, 0), lw(10, 5, 1), lh(11, 5, 3), ecall()]);
    let (_, r) = run(&w);
    let e = r.unwrap_err();
    assert_eq!(
        e.fault().unwrap().kind,
        FaultKind::Misaligned {
            addr: 0x3_0001,
            size: 4,
            write: false
        }
    );
    assert!(
        e.to_string().contains("RoundDown"),
        "the message says how to get hardware behaviour: {e}"
    );

    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (1, 1));
    cfg.misaligned = Misaligned::RoundDown;
    let mut dev = Device::new(cfg).unwrap();
    let tile = t0(Arch::WormholeB0);
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc0,
        &elf_for(Arch::WormholeB0, Risc::Trisc0, &w),
        "t",
    )
    .unwrap();
    dev.run().unwrap();
    let (_, r) = dev.hart_registers(0, tile, Risc::Trisc0).unwrap();
    assert_eq!(
        (r[10], r[11]),
        (0x1122_3344, 0x1122),
        "rounded down to 0x30000 and 0x30002"
    );
}

#[test]
fn fetch_outside_code_and_misaligned_jumps() {
    let mut w = lis(&[(5, 0x3_0000)]);
    w.push(jalr(0, 5, 0));
    let (f, _) = fault_of(&w);
    assert_eq!(
        (f.kind, f.pc, f.word),
        (FaultKind::FetchOutsideCode, 0x3_0000, Some(0))
    );
    let (f, _) = fault_of(&[jal(0, 6)]);
    assert_eq!(
        (f.kind, f.pc),
        (FaultKind::MisalignedJump { target: 0x6006 }, 0x6000)
    );
    // Running off the end of the code region.
    let m = memory_map(Arch::Blackhole, Risc::Trisc0);
    let last = m.code.start + m.code.size - 4;
    let elf = Elf::new(m.code.start)
        .text(m.code.start, &[jal(0, (last - m.code.start) as i32)])
        .text(last, &[addi(0, 0, 0)]);
    let mut dev = device(Arch::Blackhole);
    dev.load_kernel(
        0,
        t0(Arch::Blackhole),
        Risc::Trisc0,
        &elf.build(),
        "off-the-end",
    )
    .unwrap();
    let f = dev.run().unwrap_err().fault().unwrap().clone();
    assert_eq!(
        (f.kind, f.pc),
        (FaultKind::FetchOutsideCode, m.code.start + m.code.size)
    );
}

#[test]
fn runaway_kernels_stop_at_the_instruction_budget() {
    let mut cfg = DeviceConfig::new(Arch::Blackhole, (1, 1));
    cfg.instruction_budget = 10_000;
    let mut dev = Device::new(cfg).unwrap();
    let tile = t0(Arch::Blackhole);
    dev.load_kernel(
        0,
        tile,
        Risc::Ncrisc,
        &elf_for(Arch::Blackhole, Risc::Ncrisc, &[jal(0, 0)]),
        "spin.elf",
    )
    .unwrap();
    let e = dev.run().unwrap_err();
    let f = e.fault().unwrap();
    assert_eq!(f.kind, FaultKind::Runaway { budget: 10_000 });
    assert!(f.instret > 10_000 && f.instret < 10_000 + 2 * ttprof_emu::DEFAULT_QUANTUM as u64);
    assert!(
        e.to_string().contains("NCRISC") && e.to_string().contains("jal zero, 0x12000"),
        "{e}"
    );
    assert_eq!(
        dev.hart_state(0, tile, Risc::Ncrisc).unwrap(),
        HartState::Faulted
    );
}

#[test]
fn first_fault_in_tile_order_is_reported_whatever_the_threads() {
    for threads in [1, 2, 3] {
        let mut cfg = DeviceConfig::new(Arch::WormholeB0, (3, 2));
        cfg.threads = threads;
        let mut dev = Device::new(cfg).unwrap();
        let tiles = dev.tiles();
        for (i, &tile) in tiles.iter().enumerate() {
            // Tiles 2 and 4 fault, at different times; the others run a while and exit.
            let words: Vec<u32> = if i == 2 || i == 4 {
                let mut w = vec![addi(5, 0, 0); 300 - 50 * i];
                w.push(ebreak());
                w
            } else {
                let mut w = vec![addi(5, 5, 1); 400];
                w.push(ecall());
                w
            };
            dev.load_kernel(
                0,
                tile,
                Risc::Trisc1,
                &elf_for(Arch::WormholeB0, Risc::Trisc1, &words),
                "k",
            )
            .unwrap();
        }
        let f = dev.run().unwrap_err().fault().unwrap().clone();
        assert_eq!(
            (f.tile, f.kind.clone()),
            (tiles[2], FaultKind::Ebreak),
            "threads={threads}"
        );
    }
}

fn elf_error(bytes: &[u8], risc: Risc) -> String {
    let mut dev = device(Arch::WormholeB0);
    let e = dev
        .load_kernel(0, t0(Arch::WormholeB0), risc, bytes, "bad.elf")
        .unwrap_err();
    assert!(matches!(e, EmuError::Elf { .. }), "{e}");
    e.to_string()
}

#[test]
fn bad_elfs_are_rejected_with_the_reason() {
    let good = elf_for(Arch::WormholeB0, Risc::Trisc0, &[ecall()]);
    let mut wrong_machine = good.clone();
    wrong_machine[18] = 62; // EM_X86_64
    let m = elf_error(&wrong_machine, Risc::Trisc0);
    assert!(m.starts_with("bad.elf: wrong machine"), "{m}");
    assert!(elf_error(b"not an elf at all", Risc::Trisc0).contains("not an ELF"));

    // Linked for TRISC0, loaded on TRISC1: the segment misses every TRISC1 region.
    let m = elf_error(&good, Risc::Trisc1);
    assert!(
        m.contains("PT_LOAD segment 0 [0x00006000, 0x00006004)"),
        "{m}"
    );
    assert!(
        m.contains("TRISC_1") && m.contains("code [0x0000a000, 0x0000e000)"),
        "{m}"
    );

    // A segment in the right code region plus one straddling data and the rings.
    let d = memory_map(Arch::WormholeB0, Risc::Trisc0).data;
    let straddle = Elf::new(0x6000)
        .text(0x6000, &[ecall()])
        .segment(d.end() as u32 - 4, vec![1; 8], 8)
        .build();
    assert!(elf_error(&straddle, Risc::Trisc0).contains("segment 1"));

    // Data only: nothing at the reset PC.
    let data_only = Elf::new(0x6000).segment(d.start, vec![1; 4], 4).build();
    assert!(elf_error(&data_only, Risc::Trisc0).contains("reset PC 0x6000"));
}

#[test]
fn segments_in_data_and_local_ram_are_placed_and_bss_zeroed() {
    let arch = Arch::WormholeB0;
    let m = memory_map(arch, Risc::Ncrisc);
    let mut dev = device(arch);
    let tile = t0(arch);
    dev.write_u32(0, tile, m.data.start + 4, 0xFFFF_FFFF)
        .unwrap(); // will be .bss
    let elf = Elf::new(m.code.start)
        .text(m.code.start, &[ecall()])
        .segment(m.data.start, vec![1, 2, 3, 4], 8)
        .segment(m.local_ram.start + 16, vec![9, 9], 2)
        .build();
    dev.load_kernel(0, tile, Risc::Ncrisc, &elf, "n").unwrap();
    assert_eq!(dev.read_u32(0, tile, m.data.start).unwrap(), 0x0403_0201);
    assert_eq!(
        dev.read_u32(0, tile, m.data.start + 4).unwrap(),
        0,
        ".bss zeroed"
    );
    assert_eq!(
        &dev.local_ram(0, tile, Risc::Ncrisc).unwrap()[16..18],
        &[9, 9]
    );
    assert_eq!(
        dev.local_ram(0, tile, Risc::Ncrisc).unwrap().len(),
        4096,
        "Wormhole NCRISC: 4 KiB"
    );
}

#[test]
fn bad_configurations_and_host_accesses_are_errors_not_panics() {
    assert!(Device::new(DeviceConfig::new(Arch::WormholeB0, (9, 1))).is_err());
    assert!(Device::new(DeviceConfig::new(Arch::WormholeB0, (0, 1))).is_err());
    let dev = device(Arch::WormholeB0);
    let tile = t0(Arch::WormholeB0);
    assert!(dev.read_u32(0, tile, 2).is_err(), "misaligned");
    assert!(
        dev.read_u32(0, tile, Arch::WormholeB0.l1_size()).is_err(),
        "past L1"
    );
    assert!(dev.read_u32(1, tile, 0).is_err(), "no chip 1");
    assert!(
        dev.read_u32(0, riscv_linker::NocCoord::new(5, 1), 0)
            .is_err(),
        "not a worker"
    );
    let mut dev = dev;
    assert!(
        matches!(dev.run(), Err(EmuError::Config(_))),
        "nothing loaded"
    );
}
