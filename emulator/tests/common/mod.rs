//! Helpers shared by the integration tests: build a one-core program from words and run it.
#![allow(dead_code)]

pub mod gcc;
pub mod image;
pub mod prog;

use riscv_linker::{memory_map, Arch, NocCoord, Risc};
use ttprof_emu::asm::{ecall, li, Elf};
use ttprof_emu::{Device, DeviceConfig, EmuError, RunSummary};

/// The first worker tile.
pub const T0: NocCoord = NocCoord { x: 1, y: 1 };

/// An ELF for `risc` on `arch` holding `words` at the start of its code region (and, for
/// BRISC, the boot word jumping there), with a `_start` symbol covering them.
pub fn elf_for(arch: Arch, risc: Risc, words: &[u32]) -> Vec<u8> {
    let m = memory_map(arch, risc);
    let mut elf = Elf::new(m.code.start).text(m.code.start, words);
    if let Some(b) = m.boot {
        elf = elf.text(
            b.start,
            &[ttprof_emu::asm::jal(0, (m.code.start - b.start) as i32)],
        );
    }
    elf.symbol("_start", m.code.start, 4 * words.len() as u32)
        .build()
}

/// A device with a 1x1 grid.
pub fn device(arch: Arch) -> Device {
    Device::new(DeviceConfig::new(arch, (1, 1))).expect("device")
}

/// The first worker tile of `arch`.
pub fn t0(arch: Arch) -> NocCoord {
    arch.worker_noc(0, 0).unwrap()
}

/// Runs `words` on TRISC0 of a fresh 1x1 Blackhole device; returns the device and result.
pub fn run(words: &[u32]) -> (Device, Result<RunSummary, EmuError>) {
    run_on(Arch::Blackhole, Risc::Trisc0, words)
}

pub fn run_on(arch: Arch, risc: Risc, words: &[u32]) -> (Device, Result<RunSummary, EmuError>) {
    let mut dev = device(arch);
    dev.load_kernel(0, t0(arch), risc, &elf_for(arch, risc, words), "test.elf")
        .expect("load");
    let r = dev.run();
    (dev, r)
}

/// Registers x0..x31 after running `words` followed by `ecall` (panics on a fault).
pub fn regs_after(words: &[u32]) -> [u32; 32] {
    let mut w = words.to_vec();
    w.push(ecall());
    let (dev, r) = run(&w);
    if let Err(e) = r {
        panic!("program faulted: {e}");
    }
    dev.hart_registers(0, t0(Arch::Blackhole), Risc::Trisc0)
        .unwrap()
        .1
}

/// `li` of several registers, flattened.
pub fn lis(pairs: &[(u32, u32)]) -> Vec<u32> {
    pairs.iter().flat_map(|&(r, v)| li(r, v)).collect()
}
