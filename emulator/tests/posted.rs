//! Register writes a host process posts through the device image
//! (`riscv_linker::devfile::posted`): the device applies them in order as a run starts and
//! at its step boundaries, refuses and counts what it cannot apply (a tile it has not, an
//! address that is not a daisychain register, more entries than the queue holds), and a
//! daisychain armed that way from another thread samples the running kernel.

mod common;

use common::image::{load_spin, spin_until, HostMap};
use common::{elf_for, lis};
use riscv_linker::devfile::{field, mailbox, posted};
use riscv_linker::mmio::{self, daisychain as dc};
use riscv_linker::{Arch, NocCoord, Risc};
use std::time::{Duration, Instant};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig};

/// The image as the host posting writes sees it.
struct Host {
    map: HostMap,
}

impl Host {
    fn open(dev: &Device) -> Host {
        Host {
            map: HostMap::open(dev),
        }
    }

    fn get(&self, at: usize) -> u32 {
        self.map.get(at)
    }

    fn put(&self, at: usize, v: u32) {
        self.map.put(at, v)
    }

    fn queue(&self, at: usize) -> u32 {
        self.get(field::POSTED_WRITES + at)
    }

    /// Posts one write (the protocol's step 1; the queue has room in these tests).
    fn post(&self, chip: u32, tile: NocCoord, addr: u32, value: u32) {
        let n = self.queue(posted::POSTED);
        let e = field::POSTED_WRITES + posted::entry(n);
        self.put(e + posted::CHIP, chip);
        self.put(e + posted::TILE, mailbox::tile_word(tile));
        self.put(e + posted::ADDR, addr);
        self.put(e + posted::VALUE, value);
        self.put(field::POSTED_WRITES + posted::POSTED, n.wrapping_add(1));
    }
}

fn device(name: &str) -> Device {
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (1, 1));
    cfg.image = Some(
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("posted-{name}-{}.devmem", std::process::id())),
    );
    Device::new(cfg).unwrap()
}

/// A kernel that counts down `n` and halts.
fn countdown(n: u32) -> Vec<u8> {
    let mut w = lis(&[(5, n)]);
    w.extend([addi(5, 5, -1), bne(5, 0, -4), ecall()]);
    elf_for(Arch::WormholeB0, Risc::Brisc, &w)
}

#[test]
fn writes_posted_between_runs_land_as_the_next_starts_and_bad_ones_are_counted() {
    let mut dev = device("between");
    let tile = dev.tiles()[0];
    dev.load_kernel(0, tile, Risc::Brisc, &countdown(1000), "countdown")
        .unwrap();
    let host = Host::open(&dev);
    let cntl = dc::ENABLED | dc::DAISY_RISCV << dc::DAISY_SEL_SHIFT | dc::group_a(Risc::Brisc);
    host.post(0, tile, mmio::DBG_BUS_CNTL, cntl);
    host.post(0, NocCoord::new(99, 99), mmio::DBG_BUS_CNTL, 1); // no such tile
    host.post(0, tile, 0x1000, 5); // L1, not a register
    host.post(7, tile, mmio::DBG_BUS_CNTL, 1); // no such chip
    assert_eq!(host.queue(posted::APPLIED), 0, "nothing applies while idle");
    dev.run().unwrap();
    assert_eq!(
        (
            host.queue(posted::APPLIED),
            host.queue(posted::REFUSED),
            host.queue(posted::LAST_REFUSED)
        ),
        (4, 3, 4)
    );
    assert_eq!(dev.read_u32(0, tile, mmio::DBG_BUS_CNTL).unwrap(), cntl);
    assert_eq!(dev.read_u32(0, tile, 0x1000).unwrap(), 0, "L1 not written");

    // More than the queue holds: the overwritten entries are counted, none applied twice.
    let before = host.queue(posted::POSTED);
    for i in 0..100u32 {
        host.post(0, tile, 0x2000 + 4 * i, i);
    }
    dev.load_kernel(0, tile, Risc::Brisc, &countdown(10), "countdown")
        .unwrap();
    dev.run().unwrap();
    assert_eq!(host.queue(posted::APPLIED), before + 100);
    assert_eq!(host.queue(posted::REFUSED), 3 + 100);
}

#[test]
fn a_daisychain_armed_through_the_queue_samples_the_running_kernel() {
    const FLAG: u32 = 0x3_0000;
    const BUF: u32 = 0x4_0000;
    const SLOTS: u32 = 8;
    let mut dev = device("running");
    let tile = dev.tiles()[0];
    // Spins until the host, having armed the daisychain while it runs, sets FLAG.
    load_spin(&mut dev, FLAG);
    let code = spin_until(FLAG).len() as u32 * 4;
    let host = Host::open(&dev);
    let l1 = dev.geometry().tile_offset(0, 0) as usize;
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            host.map.wait_running();
            let give_up = Instant::now() + Duration::from_secs(60);
            for i in 0..SLOTS * 4 {
                host.put(l1 + (BUF + 4 * i) as usize, 0xDEAD_BEEF);
            }
            let first = BUF >> 4;
            let cntl =
                dc::ENABLED | dc::DAISY_RISCV << dc::DAISY_SEL_SHIFT | dc::group_a(Risc::Brisc);
            host.post(0, tile, mmio::DBG_BUS_CNTL, cntl);
            host.post(0, tile, mmio::DBG_L1_MEM_REG2, dc::MODE_PREPARE);
            host.post(0, tile, mmio::DBG_L1_MEM_REG0, first);
            host.post(0, tile, mmio::DBG_L1_MEM_REG1, first + SLOTS);
            host.post(
                0,
                tile,
                mmio::DBG_L1_MEM_REG2,
                dc::MODE_SAMPLE | 7 << dc::INTERVAL_SHIFT | dc::TRIGGER,
            );
            // Applied at a step boundary of the run; then the last slot fills.
            let last = l1 + (BUF + (SLOTS - 1) * 16) as usize;
            while host.queue(posted::APPLIED) != 5 || host.get(last) == 0xDEAD_BEEF {
                assert!(Instant::now() < give_up, "the samples never came");
                std::thread::yield_now();
            }
            host.put(l1 + FLAG as usize, 1);
        });
        dev.run()
    });
    result.unwrap();
    assert_eq!(host.queue(posted::REFUSED), 0);
    let code_region = riscv_linker::memory_map(Arch::WormholeB0, Risc::Brisc).code;
    let pcs: Vec<u32> = (0..SLOTS)
        .map(|slot| host.get(l1 + (BUF + 16 * slot) as usize) & 0x7FFF_FFFF)
        .collect();
    let first = pcs.iter().min().copied().unwrap();
    for (slot, pc) in pcs.iter().enumerate() {
        assert!(
            code_region.contains(*pc, 4) && *pc - first < code,
            "slot {slot}: pc {pc:#x} is in the spinning kernel ({pcs:x?})"
        );
    }
}
