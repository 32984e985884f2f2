//! Full grids: every tile of a Blackhole chip (and two Wormhole chips) with all five cores
//! busy, staying well under 1 GiB of host memory.

mod common;

use common::*;
use riscv_linker::{Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig};

/// Writes one word into each 4 KiB page of a 64 KiB block of user L1 per core, then exits.
fn toucher(risc: Risc) -> Vec<u32> {
    let mut w = lis(&[(5, 0x4_0000 + 0x1_0000 * risc.index() as u32), (6, 16)]);
    w.extend([
        sw(6, 5, 0),
        addi(5, 5, 0x7FF),
        addi(5, 5, 0x7FF),
        addi(5, 5, 2),
        addi(6, 6, -1),
        bne(6, 0, -20),
        ecall(),
    ]);
    w
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn fill(dev: &mut Device, chips: u32) {
    let arch = dev.arch();
    for chip in 0..chips {
        for tile in dev.tiles() {
            for risc in Risc::ALL {
                dev.load_kernel(
                    chip,
                    tile,
                    risc,
                    &elf_for(arch, risc, &toucher(risc)),
                    "toucher",
                )
                .unwrap();
            }
        }
    }
}

#[test]
fn a_full_blackhole_grid_runs_in_under_a_gibibyte() {
    let mut dev = Device::new(DeviceConfig::full_grid(Arch::Blackhole)).unwrap();
    assert_eq!(dev.tiles().len(), 140);
    fill(&mut dev, 1);
    let s = dev.run().unwrap();
    assert_eq!(s.harts.len(), 700);
    assert!(s.harts.iter().all(|h| h.exit_code == Some(0)));
    let last = *dev.tiles().last().unwrap();
    assert_eq!(last, riscv_linker::NocCoord::new(16, 11));
    assert_eq!(
        dev.read_u32(0, last, 0x4_0000 + 0x1_0000 * 4 + 0x1000 * 15)
            .unwrap(),
        1
    );
    let rss = rss_kib();
    eprintln!("full Blackhole grid, 700 cores: RSS {} MiB", rss / 1024);
    assert!(rss < 1024 * 1024, "RSS {rss} KiB");
}

#[test]
fn two_full_wormhole_chips() {
    let mut cfg = DeviceConfig::full_grid(Arch::WormholeB0);
    cfg.chips = 2;
    let mut dev = Device::new(cfg).unwrap();
    fill(&mut dev, 2);
    let s = dev.run().unwrap();
    assert_eq!(s.harts.len(), 2 * 80 * 5);
    assert_eq!(s.chip_cycles.len(), 2);
    let tile = dev.tiles()[79];
    assert_eq!(dev.read_u32(1, tile, 0x4_0000).unwrap(), 16);
}
