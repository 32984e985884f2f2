//! A small builder of RV32IM test programs that push Tensix instructions and read back the
//! coprocessor's state, and a runner for several cores of one tile.

use super::{device, elf_for, t0};
use riscv_linker::{mmio, Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, EmuError, Fault, RunSummary};

/// `t0`: address register.
pub const P: u32 = 5;
/// `t1`: value register.
pub const V: u32 = 6;
/// `t2`: loop counter.
pub const C: u32 = 7;
/// `a0`..`a7`: results.
pub const A: [u32; 8] = [10, 11, 12, 13, 14, 15, 16, 17];

/// Words of one core's program.
#[derive(Default)]
pub struct Prog(pub Vec<u32>);

impl Prog {
    pub fn new() -> Prog {
        Prog::default()
    }

    /// `.ttinsn insn`: pushes a Tensix instruction to the core's own thread.
    pub fn tt(&mut self, insn: u32) -> &mut Self {
        self.0.push(ttinsn(insn));
        self
    }

    /// `sw value, 0(addr)` through `t0`/`t1`.
    pub fn store(&mut self, addr: u32, value: u32) -> &mut Self {
        self.0.extend(li(P, addr));
        self.0.extend(li(V, value));
        self.0.push(sw(V, P, 0));
        self
    }

    /// `lw rd, 0(addr)`.
    pub fn load(&mut self, rd: u32, addr: u32) -> &mut Self {
        self.0.extend(li(P, addr));
        self.0.push(lw(rd, P, 0));
        self
    }

    /// The wall clock's low word into `rd`.
    pub fn clock(&mut self, rd: u32) -> &mut Self {
        self.load(rd, mmio::WALL_CLOCK_L)
    }

    /// TTSync: wait until the core's Tensix thread has nothing in flight (the documented
    /// store, load, consume sequence).
    pub fn ttsync(&mut self) -> &mut Self {
        self.0.extend(li(P, mmio::TTSYNC_COPROCESSOR_DONE));
        self.0.extend([sw(0, P, 0), lw(V, P, 0), andi(V, V, 0)]);
        self
    }

    /// A loop of `n` iterations (two instructions each).
    pub fn spin(&mut self, n: u32) -> &mut Self {
        self.0.extend(li(C, n));
        self.0.extend([addi(C, C, -1), bne(C, 0, -4)]);
        self
    }

    /// `GPRs[thread][i]` as the core sees it (TRISC: its own; BRISC: `thread * 64 + i`).
    pub fn gpr(&mut self, rd: u32, i: u32) -> &mut Self {
        self.load(rd, mmio::REGFILE_BASE + 4 * i)
    }

    pub fn words(&self) -> Vec<u32> {
        self.0.clone()
    }
}

/// Loads `progs` (each followed by `ecall`) on one tile of a fresh Wormhole device and runs.
pub fn run_cores(progs: &[(Risc, &Prog)]) -> (Device, Result<RunSummary, EmuError>) {
    run_cores_on(device(Arch::WormholeB0), progs)
}

/// [`run_cores`] on a given (Wormhole, 1x1) device.
pub fn run_cores_on(
    mut dev: Device,
    progs: &[(Risc, &Prog)],
) -> (Device, Result<RunSummary, EmuError>) {
    let arch = Arch::WormholeB0;
    for (risc, p) in progs {
        let mut w = p.words();
        w.push(ecall());
        dev.load_kernel(0, t0(arch), *risc, &elf_for(arch, *risc, &w), "test.elf")
            .expect("load");
    }
    let r = dev.run();
    (dev, r)
}

/// Runs and returns each core's registers (panics on a fault).
pub fn run_ok(progs: &[(Risc, &Prog)]) -> Vec<[u32; 32]> {
    let (dev, r) = run_cores(progs);
    if let Err(e) = r {
        panic!("the program faulted: {e}");
    }
    progs
        .iter()
        .map(|(risc, _)| {
            dev.hart_registers(0, t0(Arch::WormholeB0), *risc)
                .unwrap()
                .1
        })
        .collect()
}

/// Runs and returns the fault and its message (panics if the run succeeds).
pub fn run_fault(progs: &[(Risc, &Prog)]) -> (Fault, String) {
    let (_, r) = run_cores(progs);
    let e = r.expect_err("the run must stop");
    (e.fault().expect("a core fault").clone(), e.to_string())
}
