//! Which registers outside L1 and local RAM a loop proved stuck ([`super::proof`]) may
//! read, and their values read without side effects.
//!
//! A proof runs only at a quiet look ([`super`]): no core stored or observed anything
//! since the last look, every chip's NoC is idle, every NIU settled and every coprocessor
//! idle. A register may be read when its device calls it timeless
//! ([`crate::devices::TileDevice::timeless`]: what it returns changes only through a store,
//! a NoC delivery or the coprocessor's work) and frozen now
//! ([`crate::devices::TileDevice::frozen`]: from such a state nothing but a store by a core
//! can change it); a store ends the quiet run, and the deadlock is only declared when every
//! running core is stuck, so none will store. NIU registers are frozen once the NIU is
//! settled, the Tensix semaphores, GPRs and configuration while the coprocessor is idle, the
//! mailbox status and plain storage always.
//!
//! Everything else is refused: clocks, the timestamper, the daisychain and the debug
//! registers (change with time or are not modelled as storage), FIFO pops, PCBufs and
//! TTSync (effects or waits), write-only windows.

use crate::chip::tile::Tile;
use crate::devices::{route, Access, Noc, Route};
use riscv_linker::{Arch, Risc};

/// What a load of `size` bytes at `addr` by `risc` on `t` at cycle `time` returns
/// (zero-extended, as the memory's load does), read without any effect on the tile, when
/// the register cannot change from now on but through a store (see the module's rules);
/// `None` when it can, or when reading it has an effect.
pub(crate) fn peek(t: &mut Tile, addr: u32, size: u32, risc: Risc, time: u64) -> Option<u32> {
    let Route::Device(e) = route(addr, risc) else {
        return None;
    };
    if !e.timeless(addr, risc) {
        return None;
    }
    let a = Access {
        addr,
        size,
        risc,
        time,
    };
    let m = &mut t.mem;
    let (l1, code_end) = (&m.l1, m.code_end);
    let noc = m.niu.as_deref_mut().map(|niu| Noc { niu, l1, code_end });
    let mut no_unit = |_: u32, _: [u32; 4]| Err("a proof's read wrote a unit (internal)".into());
    let word = m.regs.with(e, &a, noc, &mut no_unit, |d, cx| {
        d.frozen(&a, cx).then(|| d.peek(&a, cx))
    })?;
    let mask = if size == 4 {
        u32::MAX
    } else {
        (1u32 << (size * 8)) - 1
    };
    Some((word >> ((addr & 3) * 8)) & mask)
}

/// The name of the register at `addr` read by `risc`, for the deadlock report: the
/// device's name of it when it is timeless, else its region's.
pub(crate) fn name(t: &mut Tile, addr: u32, risc: Risc, arch: Arch) -> String {
    match route(addr, risc) {
        Route::Device(e) if e.timeless(addr, risc) => {
            e.device(&mut t.mem.regs).register(addr, risc, arch)
        }
        _ => crate::map::region_name(addr).to_string(),
    }
}
