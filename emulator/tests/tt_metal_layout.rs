//! The L1 layout a device follows (`DeviceConfig::layout`): ttprof's own, or tt-metal's,
//! whose firmware stores to its mailboxes where ttprof keeps BRISC's code.

mod common;

use riscv_linker::{tt_metal, Arch, Layout, Risc};
use ttprof_emu::asm::{ecall, jal, li, lw, sw, Elf};
use ttprof_emu::{Device, DeviceConfig, EmuError, FaultKind};

const ARCH: Arch = Arch::WormholeB0;
const MAP: &tt_metal::L1Map = tt_metal::l1_map(ARCH);
/// A word of tt-metal's mailboxes, the probe's first store (issue 37).
const MAILBOX_WORD: u32 = 0x342c;

fn device(layout: Layout) -> Device {
    let mut cfg = DeviceConfig::new(ARCH, (1, 1));
    cfg.layout = layout;
    Device::new(cfg).expect("device")
}

/// Stores 0x5a5a to `addr`, loads it back into a0, halts.
fn store_then_halt(addr: u32) -> Vec<u32> {
    let mut w = Vec::new();
    w.extend(li(5, addr));
    w.extend(li(6, 0x5a5a));
    w.push(sw(6, 5, 0));
    w.push(lw(10, 5, 0));
    w.push(ecall());
    w
}

/// BRISC code at tt-metal's firmware slot with its `.data` word in local RAM; the boot
/// word is the host's to write.
fn brisc_firmware_elf(words: &[u32]) -> Vec<u8> {
    brisc_firmware_elf_in(MAP, words)
}

fn brisc_firmware_elf_in(map: &tt_metal::L1Map, words: &[u32]) -> Vec<u8> {
    let base = map.firmware(Risc::Brisc).start;
    Elf::new(base)
        .text(base, words)
        .text(riscv_linker::mmio::LOCAL_RAM_BASE, &[0x1234_5678])
        .symbol("_start", base, 4 * words.len() as u32)
        .build()
}

fn boot_brisc(dev: &Device) {
    boot_brisc_in(dev, MAP);
}

fn boot_brisc_in(dev: &Device, map: &tt_metal::L1Map) {
    let t = common::t0(map.arch);
    let jump = jal(0, map.firmware(Risc::Brisc).start as i32);
    dev.write_u32(0, t, map.boot_code_base, jump)
        .expect("boot word");
}

#[test]
fn under_ttprofs_layout_the_mailbox_word_is_briscs_code() {
    let mut dev = device(Layout::Ttprof);
    // ttprof's BRISC code starts at 0x800 and covers 0x342c.
    let w = store_then_halt(MAILBOX_WORD);
    let elf = common::elf_for(ARCH, Risc::Brisc, &w);
    dev.load_kernel(0, common::t0(ARCH), Risc::Brisc, &elf, "t.elf")
        .expect("load");
    let e = dev.run().expect_err("a store into code");
    let EmuError::Fault(f) = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(
            f.kind,
            FaultKind::StoreIntoCode {
                addr: MAILBOX_WORD,
                owner: Risc::Brisc
            }
        ),
        "{e}"
    );
}

#[test]
fn under_tt_metals_layout_firmware_stores_to_its_mailboxes() {
    let mut dev = device(Layout::TtMetal);
    let t = common::t0(ARCH);
    let elf = brisc_firmware_elf(&store_then_halt(MAILBOX_WORD));
    dev.load_kernel(0, t, Risc::Brisc, &elf, "fw.elf")
        .expect("load");
    boot_brisc(&dev);
    let s = dev.run().expect("runs");
    assert_eq!(s.hart(0, t, Risc::Brisc).unwrap().exit_code, Some(0x5a5a));
    assert_eq!(dev.read_u32(0, t, MAILBOX_WORD).unwrap(), 0x5a5a);
    // The loader put the local-RAM image where tt-metal's firmware copies it from.
    let scratch = MAP.local_init_scratch(Risc::Brisc);
    assert_eq!(dev.read_u32(0, t, scratch).unwrap(), 0x1234_5678);
}

#[test]
fn under_tt_metals_layout_the_firmware_slots_are_read_only() {
    for (addr, owner) in [
        (MAP.firmware(Risc::Brisc).start + 0x100, Risc::Brisc),
        (MAP.firmware(Risc::Trisc2).start, Risc::Trisc2),
        (MAP.firmware(Risc::Ncrisc).start + 8, Risc::Ncrisc),
    ] {
        let mut dev = device(Layout::TtMetal);
        let elf = brisc_firmware_elf(&store_then_halt(addr));
        dev.load_kernel(0, common::t0(ARCH), Risc::Brisc, &elf, "fw.elf")
            .expect("load");
        boot_brisc(&dev);
        let e = dev.run().expect_err("a store into firmware");
        let EmuError::Fault(f) = &e else {
            panic!("{e}")
        };
        assert!(
            matches!(f.kind, FaultKind::StoreIntoCode { addr: a, owner: o } if a == addr && o == owner),
            "{e}"
        );
    }
}

#[test]
fn under_tt_metals_layout_brisc_runs_a_kernel_the_host_wrote() {
    let mut dev = device(Layout::TtMetal);
    let t = common::t0(ARCH);
    let kernel = MAP.kernel_config.start + 0x100;
    // The firmware jumps to the kernel's address; the kernel stores and halts.
    let mut fw = li(5, kernel).to_vec();
    fw.push(ttprof_emu::asm::jalr(1, 5, 0));
    dev.load_kernel(0, t, Risc::Brisc, &brisc_firmware_elf(&fw), "fw.elf")
        .expect("load");
    boot_brisc(&dev);
    for (i, w) in store_then_halt(MAP.kernel_config.start).iter().enumerate() {
        dev.write_u32(0, t, kernel + 4 * i as u32, *w)
            .expect("kernel word");
    }
    let s = dev.run().expect("runs");
    assert_eq!(s.hart(0, t, Risc::Brisc).unwrap().exit_code, Some(0x5a5a));
    // Past the kernel range, nothing is fetchable.
    let mut dev = device(Layout::TtMetal);
    let beyond = MAP.kernel_config.end() as u32;
    let mut fw = li(5, beyond).to_vec();
    fw.push(ttprof_emu::asm::jalr(1, 5, 0));
    dev.load_kernel(0, t, Risc::Brisc, &brisc_firmware_elf(&fw), "fw.elf")
        .expect("load");
    boot_brisc(&dev);
    let e = dev.run().expect_err("fetch outside code");
    let EmuError::Fault(f) = &e else {
        panic!("{e}")
    };
    assert!(matches!(f.kind, FaultKind::FetchOutsideCode), "{e}");
}

/// Blackhole's tt-metal map: the mailboxes from 0x60 take the firmware's stores, the
/// firmware slots (NCRISC's at 0x5CE0) refuse them.
#[test]
fn tt_metals_blackhole_layout_has_blackholes_slots() {
    let bh = tt_metal::l1_map(Arch::Blackhole);
    let run = |addr: u32| {
        let mut cfg = DeviceConfig::new(Arch::Blackhole, (1, 1));
        cfg.layout = Layout::TtMetal;
        let mut dev = Device::new(cfg).expect("device");
        let t = common::t0(Arch::Blackhole);
        let elf = brisc_firmware_elf_in(bh, &store_then_halt(addr));
        dev.load_kernel(0, t, Risc::Brisc, &elf, "fw.elf")
            .expect("load");
        boot_brisc_in(&dev, bh);
        let r = dev.run();
        (r, dev.read_u32(0, t, addr & !3).unwrap())
    };
    let (r, word) = run(bh.mailbox.start);
    assert_eq!(
        r.expect("runs")
            .hart(0, common::t0(Arch::Blackhole), Risc::Brisc)
            .unwrap()
            .exit_code,
        Some(0x5a5a)
    );
    assert_eq!(word, 0x5a5a);
    let ncrisc = bh.firmware(Risc::Ncrisc).start;
    assert_eq!(ncrisc, 0x5CE0);
    let e = run(ncrisc).0.expect_err("a store into NCRISC's firmware");
    let EmuError::Fault(f) = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(
            f.kind,
            FaultKind::StoreIntoCode {
                addr: 0x5CE0,
                owner: Risc::Ncrisc
            }
        ),
        "{e}"
    );
}
