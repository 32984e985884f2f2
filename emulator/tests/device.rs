//! The chip model: wall clock, soft reset, scheduling determinism, hooks, host access and
//! the device-memory image file.

mod common;

use common::*;
use riscv_linker::devfile::{self, Geometry};
use riscv_linker::{memory_map, mmio, Arch, NocCoord, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, TileOffsets};

const WALL_L: u32 = mmio::WALL_CLOCK_L;

fn wall_reader() -> Vec<u32> {
    let mut w = lis(&[(5, WALL_L)]);
    w.extend([lw(10, 5, 0), lw(11, 5, 8), lw(12, 5, 4), ecall()]);
    w
}

#[test]
fn wall_clock_counts_cycles_and_keeps_running_across_runs() {
    let arch = Arch::WormholeB0;
    let mut dev = device(arch);
    let tile = t0(arch);
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc2,
        &elf_for(arch, Risc::Trisc2, &wall_reader()),
        "w",
    )
    .unwrap();
    let s1 = dev.run().unwrap();
    let (_, r1) = dev.hart_registers(0, tile, Risc::Trisc2).unwrap();
    // An instruction-cache miss (8 cycles, the cache is empty at reset), then two
    // one-cycle instructions (li) before the first load issues at cycle 10.
    assert_eq!((r1[10], r1[11], r1[12]), (10, 0, 0));
    let h1 = s1.hart(0, tile, Risc::Trisc2).unwrap();
    // The loads issue one per cycle (their results are not used); the fifth instruction
    // starts a new 16-byte line: a second miss. 8 + 2 + 2 + 8 + 1 + 1 (ecall).
    assert_eq!((h1.instructions, h1.cycles), (6, 22));
    assert_eq!(dev.wall_clock(0, tile).unwrap(), 22);
    let s2 = dev.run().unwrap();
    let (_, r2) = dev.hart_registers(0, tile, Risc::Trisc2).unwrap();
    assert_eq!(
        r2[10],
        22 + 10,
        "the clock did not reset between launches (the cache did)"
    );
    assert_eq!(s2.chip_cycles, vec![(22, 44)]);
}

#[test]
fn high_word_is_latched_by_the_low_read_and_live_high_moves() {
    let arch = Arch::WormholeB0;
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.clock.tile_offsets = TileOffsets::Explicit(vec![0xFFFF_FFE0]);
    let mut dev = Device::new(cfg).unwrap();
    let tile = t0(arch);
    let mut w = lis(&[(5, WALL_L)]);
    w.push(lw(10, 5, 0)); // low at 0xFFFFFFF3, latches high = 0
    w.extend([addi(0, 0, 0); 20]);
    w.extend([
        lw(11, 5, 4),
        lw(12, 5, 8),
        lw(13, 5, 0),
        lw(14, 5, 8),
        ecall(),
    ]);
    dev.load_kernel(
        0,
        tile,
        Risc::Brisc,
        &elf_for(arch, Risc::Brisc, &w),
        "latch",
    )
    .unwrap();
    dev.run().unwrap();
    let (_, r) = dev.hart_registers(0, tile, Risc::Brisc).unwrap();
    // BRISC runs its boot jump first (an i-cache miss and 1 cycle), then li after a second
    // miss: the read issues at 8 + 1 + 8 + 2 = 19.
    assert_eq!(r[10], 0xFFFF_FFE0 + 19);
    assert_eq!(
        (r[11], r[12]),
        (1, 0),
        "live high moved on, latched high did not"
    );
    assert_eq!(r[14], 1, "a new low read latched the new high word");
    assert!(r[13] < 0x100);
}

fn counter_bumper() -> Vec<u32> {
    let mut w = lis(&[(5, 0x3_0000)]);
    w.extend([lw(6, 5, 0), addi(6, 6, 1), sw(6, 5, 0), ecall()]);
    w
}

#[test]
fn soft_reset_holds_and_releases_cores() {
    let arch = Arch::WormholeB0;
    let mut dev = device(arch);
    let tile = t0(arch);
    let mut b = lis(&[
        (5, 0x3_0000),
        (7, mmio::SOFT_RESET_0),
        (8, 1 << Risc::Trisc0.soft_reset_bit()),
        (9, 2),
    ]);
    b.extend([
        lw(6, 5, 0),
        beq(6, 0, -4), // wait for TRISC0's first bump
        lw(13, 7, 0),  // the register as the run set it up
        sw(8, 7, 0),   // hold TRISC0
        sw(0, 7, 0),   // release everything: TRISC0 restarts at its reset PC
        lw(6, 5, 0),
        bne(6, 9, -4), // wait for the second bump
        ecall(),
    ]);
    dev.load_kernel(0, tile, Risc::Brisc, &elf_for(arch, Risc::Brisc, &b), "b")
        .unwrap();
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc0,
        &elf_for(arch, Risc::Trisc0, &counter_bumper()),
        "t0",
    )
    .unwrap();
    let s = dev.run().unwrap();
    assert_eq!(dev.read_u32(0, tile, 0x3_0000).unwrap(), 2);
    let t = s.hart(0, tile, Risc::Trisc0).unwrap();
    assert_eq!(
        (t.exit_code, t.instructions),
        (Some(0), 6),
        "second life: 6 instructions"
    );
    let (_, r) = dev.hart_registers(0, tile, Risc::Brisc).unwrap();
    let unloaded = [Risc::Ncrisc, Risc::Trisc1, Risc::Trisc2]
        .iter()
        .fold(0, |m, r| m | 1 << r.soft_reset_bit());
    assert_eq!(
        r[13], unloaded,
        "cores without a kernel start the run held in reset"
    );
}

#[test]
fn a_core_held_in_reset_ends_the_run_without_exiting() {
    let arch = Arch::Blackhole;
    let mut dev = device(arch);
    let tile = t0(arch);
    let mut b = lis(&[
        (7, mmio::SOFT_RESET_0),
        (8, 1 << Risc::Trisc1.soft_reset_bit()),
    ]);
    // Count down 100 times (each branch is a point where BRISC yields to the others).
    b.extend([addi(9, 0, 100), addi(9, 9, -1), bne(9, 0, -4)]);
    b.extend([sw(8, 7, 0), ecall()]);
    dev.load_kernel(0, tile, Risc::Brisc, &elf_for(arch, Risc::Brisc, &b), "b")
        .unwrap();
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc1,
        &elf_for(arch, Risc::Trisc1, &[jal(0, 0)]),
        "spin",
    )
    .unwrap();
    let s = dev.run().unwrap();
    let t = s.hart(0, tile, Risc::Trisc1).unwrap();
    assert_eq!(t.exit_code, None);
    assert!(t.instructions > 10, "it ran until BRISC held it");
}

/// Every core of every tile bumps a shared counter (racily, on purpose) and logs wall-clock
/// reads: the result depends on the interleaving, which must not depend on threads.
fn racer(risc: Risc) -> Vec<u32> {
    let mut w = lis(&[
        (5, 0x3_0000),
        (6, WALL_L),
        (7, 0x3_0100 + 0x40 * risc.index() as u32),
        (8, 150),
    ]);
    w.extend([
        lw(9, 6, 0),
        lw(10, 5, 0),
        beq(0, 0, 4), // a check point between the load and the store: other cores may run
        addi(10, 10, 1),
        sw(10, 5, 0),
        andi(11, 8, 15),
        slli(11, 11, 2),
        add(11, 11, 7),
        sw(9, 11, 0),
        addi(8, 8, -1),
        bne(8, 0, -40),
        ecall(),
    ]);
    w
}

fn racing_grid(threads: usize, quantum: u32) -> (ttprof_emu::RunSummary, Vec<u32>) {
    let arch = Arch::WormholeB0;
    let mut cfg = DeviceConfig::new(arch, (3, 3));
    cfg.threads = threads;
    cfg.quantum = quantum;
    cfg.clock.tile_offsets = TileOffsets::Seeded {
        max_cycles: 1000,
        seed: 1,
    };
    let mut dev = Device::new(cfg).unwrap();
    for (i, tile) in dev.tiles().into_iter().enumerate() {
        for risc in Risc::ALL {
            if (i + risc.index()) % 4 != 3 {
                dev.load_kernel(0, tile, risc, &elf_for(arch, risc, &racer(risc)), "racer")
                    .unwrap();
            }
        }
    }
    let s = dev.run().unwrap();
    let mut l1 = Vec::new();
    for tile in dev.tiles() {
        let mut words = vec![0u32; 0x180 / 4];
        dev.read_words(0, tile, 0x3_0000, &mut words).unwrap();
        l1.extend(words);
    }
    (s, l1)
}

#[test]
fn results_are_bit_identical_whatever_the_thread_count() {
    let (s1, m1) = racing_grid(1, 64);
    assert!(
        m1[0] < 150 * 4,
        "the racy counter lost updates, so the interleaving matters: {}",
        m1[0]
    );
    for threads in [2, 4] {
        let (s, m) = racing_grid(threads, 64);
        assert_eq!(s, s1, "threads={threads}");
        assert_eq!(m, m1, "threads={threads}");
    }
    // Cores run in causal order (every shared access in cycle order), so the scheduling
    // window does not change the result either.
    let (s, m) = racing_grid(2, 7);
    assert_eq!(
        (s, m),
        (s1, m1),
        "the scheduling window is not part of the result"
    );
}

/// A producer that waits for a host consumer: 100 values through an 8-slot ring
/// (head at 0x30F00, written by the core; tail at 0x30F04, written by the host).
fn producer() -> Vec<u32> {
    let mut w = lis(&[(5, 0x3_0F00), (6, 0x3_1000), (7, 1), (8, 101)]);
    w.extend([
        addi(12, 0, 0),
        lw(9, 5, 4),
        sub(10, 12, 9),
        addi(11, 0, 8),
        bgeu(10, 11, -12),
        andi(10, 12, 7),
        slli(10, 10, 2),
        add(10, 10, 6),
        sw(7, 10, 0),
        addi(12, 12, 1),
        sw(12, 5, 0),
        addi(7, 7, 1),
        bne(7, 8, -44),
        ecall(),
    ]);
    w
}

fn drain(dev: &Device, tile: NocCoord, out: &mut Vec<u32>) {
    let head = dev.read_u32(0, tile, 0x3_0F00).unwrap();
    let mut tail = dev.read_u32(0, tile, 0x3_0F04).unwrap();
    while tail != head {
        out.push(dev.read_u32(0, tile, 0x3_1000 + 4 * (tail % 8)).unwrap());
        tail += 1;
    }
    dev.write_u32(0, tile, 0x3_0F04, tail).unwrap();
}

fn hooked_run(threads: usize) -> (Vec<u32>, Vec<u32>, u64) {
    let arch = Arch::Blackhole;
    let mut cfg = DeviceConfig::new(arch, (2, 1));
    cfg.threads = threads;
    let mut dev = Device::new(cfg).unwrap();
    let tiles = dev.tiles();
    for &tile in &tiles {
        dev.load_kernel(
            0,
            tile,
            Risc::Trisc0,
            &elf_for(arch, Risc::Trisc0, &producer()),
            "producer",
        )
        .unwrap();
    }
    let mut got = Vec::new();
    let mut heads = Vec::new();
    dev.run_with_hook(200, &mut |d| {
        heads.push(d.read_u32(0, tiles[1], 0x3_0F00).unwrap());
        drain(d, tiles[0], &mut got);
        let mut other = Vec::new();
        drain(d, tiles[1], &mut other);
    })
    .unwrap();
    drain(&dev, tiles[0], &mut got);
    (got, heads, dev.bytes_read())
}

#[test]
fn a_hook_drains_a_ring_while_the_producer_waits_and_is_deterministic() {
    let (got, heads, bytes) = hooked_run(1);
    assert_eq!(
        got,
        (1..=100).collect::<Vec<_>>(),
        "every value, in order, none lost"
    );
    assert!(
        heads.len() >= 100 / 8,
        "the producer had to wait for the hook: {} calls",
        heads.len()
    );
    assert!(heads.windows(2).all(|w| w[0] <= w[1]));
    assert!(bytes > 0);
    assert_eq!(hooked_run(2), (got, heads, bytes));
}

#[test]
fn host_access_counts_bytes_and_host_writes_into_code_are_picked_up() {
    let arch = Arch::WormholeB0;
    let mut dev = device(arch);
    let tile = t0(arch);
    dev.load_kernel(
        0,
        tile,
        Risc::Trisc0,
        &elf_for(arch, Risc::Trisc0, &[addi(10, 0, 1), ecall()]),
        "k",
    )
    .unwrap();
    dev.reset_bytes_read();
    let mut words = [0u32; 5];
    dev.read_words(0, tile, 0x6000, &mut words).unwrap();
    dev.read_u32(0, tile, 0x6000).unwrap();
    assert_eq!(dev.bytes_read(), 24);
    assert_eq!(words[0], addi(10, 0, 1));
    dev.write_u32(0, tile, 0x6000, addi(10, 0, 77)).unwrap();
    let s = dev.run().unwrap();
    assert_eq!(s.harts[0].exit_code, Some(77));
    assert_eq!(dev.bytes_read(), 24, "writes are not reads");
}

#[test]
fn the_image_file_has_the_devfile_layout_and_a_second_mapping_sees_stores() {
    let arch = Arch::Blackhole;
    let path = std::env::temp_dir().join(format!("ttprof-emu-test-{}.devmem", std::process::id()));
    let mut cfg = DeviceConfig::new(arch, (2, 2));
    cfg.chips = 2;
    cfg.image = Some(path.clone());
    let mut dev = Device::new(cfg).unwrap();
    assert_eq!(dev.image_path(), path);
    let tile = dev.tiles()[3];
    let mut w = lis(&[(5, 0x3_0040), (6, 0xC0FF_EE00)]);
    w.extend([sw(6, 5, 0), ecall()]);
    dev.load_kernel(1, tile, Risc::Trisc2, &elf_for(arch, Risc::Trisc2, &w), "k")
        .unwrap();

    let file = std::fs::File::open(&path).unwrap();
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let g = Geometry::read_header(&map, map.len() as u64).unwrap();
    assert_eq!(g, dev.geometry());
    assert_eq!((g.chips, g.tiles_per_chip), (2, 4));
    assert_eq!(g.tile_coord(&map, 1, 3), Some(tile));
    dev.run().unwrap();
    let at = g.tile_offset(1, 3) as usize + 0x3_0040;
    assert_eq!(
        u32::from_le_bytes(map[at..at + 4].try_into().unwrap()),
        0xC0FF_EE00
    );
    let word = |f: usize| u32::from_le_bytes(map[f..f + 4].try_into().unwrap());
    assert_eq!(word(devfile::field::STATUS), devfile::STATUS_FINISHED);
    assert_eq!(word(devfile::field::LAUNCHES), 1);
    drop(dev);
    assert!(path.exists(), "an image at a given path is kept");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_temporary_image_is_removed_with_the_device() {
    let dev = device(Arch::WormholeB0);
    let path = dev.image_path().to_path_buf();
    assert!(path.starts_with(std::env::temp_dir()) && path.exists());
    drop(dev);
    assert!(!path.exists());
}

#[test]
fn memory_maps_follow_riscv_linker() {
    // Each core's reset PC and local RAM size come from riscv-linker; a kernel placed per
    // those maps runs on every core of both arches.
    for arch in Arch::ALL {
        let mut dev = device(arch);
        let tile = t0(arch);
        for risc in Risc::ALL {
            let m = memory_map(arch, risc);
            let mut w = lis(&[(5, m.stack_top - 4)]);
            w.extend([sw(2, 5, 0), lw(10, 5, 0), ecall()]);
            dev.load_kernel(0, tile, risc, &elf_for(arch, risc, &w), "k")
                .unwrap();
        }
        let s = dev.run().unwrap();
        for risc in Risc::ALL {
            let m = memory_map(arch, risc);
            assert_eq!(
                s.hart(0, tile, risc).unwrap().exit_code,
                Some(m.stack_top),
                "{arch} {risc}: sp = stack top"
            );
        }
    }
}
