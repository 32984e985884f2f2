//! The Baby RISC-V pipeline as the ISA documentation times it: one definition of every
//! timing rule, shared by the interpreter (the `exec` module) and the JIT (`jit`).
//!
//! Source: Tenstorrent's ISA documentation, `WormholeB0/TensixTile/BabyRISCV/README.md`
//! ("Pipeline", "Integer Unit", "Load/Store Unit"), `MemoryOrdering.md` and
//! `InstructionCache.md` (<https://github.com/tenstorrent/tt-isa-documentation>).
//! docs/design/timing-model.md lists each rule beside its page and every number the
//! documentation leaves open, which is one named field of [`Timing`].
//!
//! ## The model
//!
//! `t` is the cycle the next instruction may enter the Integer Unit ("issue"). The state a
//! core carries (`Pipe`, inside the hart's `Core`) is the cycle each register's value is
//! ready, the four most recent non-local loads' slot-free cycles, the four most recent
//! stores' emit cycles (the store queue), the last store's emit cycle, and its L1 port's
//! next free cycle. An instruction:
//!
//! 1. is fetched: an instruction-cache miss on its 16-byte line delays it by
//!    [`Timing::icache_miss`];
//! 2. waits for its source registers (`need`);
//! 3. a load or store waits while the store queue holds 4 stores not yet emitted, a
//!    non-local load while 4 non-local loads are in flight;
//! 4. then costs, by kind: ALU, jumps and predicted branches 1 cycle (result usable by the
//!    next instruction); `mul*` [`Timing::mul_issue`] cycles, result after
//!    [`Timing::mul_latency`]; `div*`/`rem*` [`div_cycles`]; a mispredicted conditional branch
//!    1 + [`Timing::mispredict`]; a load 1 cycle, its result ready `N` cycles after it
//!    reaches memory (`N` by [`Region`]); an L1 load reaches memory when its L1 port is free;
//!    a store 1 cycle, emitted in order one per cycle at best, an L1 store only when the port
//!    is free, which it then holds [`Timing::l1_store_port`] cycles.
//!
//! Every step is a `max` or an addition on these times, written once below in terms of
//! plain functions the interpreter calls per instruction; the JIT emits the same steps as
//! machine code (`jit::compile`), and the tests run every program both ways.

use crate::chip::devices::LoadRegion;
use crate::isa::decode::Op;
use riscv_linker::{mmio, Arch, Risc};

/// Instruction-cache line, in bytes (the documentation: "L1 fetches are 128 bits").
pub const ICACHE_LINE: u32 = 16;
/// Non-local loads in flight at most (README.md, Load/Store Unit table).
pub const LOADS_IN_FLIGHT: usize = 4;
/// Store-queue entries (MemoryOrdering.md: "the store queue has a capacity of four").
pub const STORE_QUEUE: usize = 4;
/// Largest instruction cache (2 KiB) in lines: the tag array's size.
pub const ICACHE_MAX_LINES: usize = 2048 / ICACHE_LINE as usize;
/// Largest data cache the model allows (lines).
pub const DCACHE_MAX_LINES: usize = 64;

/// The timing rules of one arch: every documented number and every assumption, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Load latency from L1 (documented: at least 8).
    pub l1_load: u32,
    /// Load latency from core-local data RAM (documented: 2).
    pub local_load: u32,
    /// Load latency from mailboxes, PCBufs, TTSync, Tensix semaphores (documented: >= 3).
    pub fifo_load: u32,
    /// Load latency from Tensix GPRs and backend configuration (documented: >= 4).
    pub tensix_load: u32,
    /// Load latency from TDMA-RISC, tile control/debug/status (the wall clock), PIC, NoC
    /// registers, NoC overlay (documented: >= 7).
    pub mmio_load: u32,
    /// Cycles an L1 store holds the L1 port (documented for Wormhole: at most one L1 store
    /// every 5 cycles; Blackhole merges stores: assumption 1).
    pub l1_store_port: u32,
    /// Cycles `mul*` occupies the Integer Unit (Wormhole 2; Blackhole 1).
    pub mul_issue: u32,
    /// Cycles until a `mul*` result is usable (2 on both).
    pub mul_latency: u32,
    /// Fewest cycles of a `div*`/`rem*` whose divisor is not 0 or 1 (documented: 6).
    pub div_min: u32,
    /// Extra cycles of a mispredicted branch (documented: Wormhole 2, Blackhole 4).
    pub mispredict: u32,
    /// Cycles an instruction-cache miss delays the instruction (ASSUMPTION: not
    /// documented; the latency of an L1 load).
    pub icache_miss: u32,
    /// Data-cache lines in front of L1 loads (Blackhole only; ASSUMPTION: 64 lines of 16
    /// bytes, direct-mapped, write-through; 0 = no data cache, Wormhole).
    pub dcache_lines: u32,
    /// Load latency of a data-cache hit (documented for Blackhole: about 3).
    pub dcache_hit: u32,
    /// A CSR access waits for everything in flight (Blackhole: "serialises the frontend").
    pub csr_serialises: bool,
}

impl Timing {
    /// The documented pipeline of `arch`, with the assumptions docs/design/timing-model.md lists.
    pub const fn for_arch(arch: Arch) -> Timing {
        let wormhole = Timing {
            l1_load: 8,
            local_load: 2,
            fifo_load: 3,
            tensix_load: 4,
            mmio_load: 7,
            l1_store_port: 5,
            mul_issue: 2,
            mul_latency: 2,
            div_min: 6,
            mispredict: 2,
            icache_miss: 8,
            dcache_lines: 0,
            dcache_hit: 3,
            csr_serialises: false,
        };
        match arch {
            Arch::WormholeB0 => wormhole,
            Arch::Blackhole => Timing {
                l1_store_port: 1,
                mul_issue: 1,
                mispredict: 4,
                dcache_lines: 64,
                csr_serialises: true,
                ..wormhole
            },
        }
    }

    /// Instruction-cache size in bytes of `risc` (InstructionCache.md: 2 KiB on BRISC,
    /// TRISC0 and TRISC2, 512 bytes on TRISC1 and NCRISC).
    pub const fn icache_bytes(risc: Risc) -> u32 {
        match risc {
            Risc::Trisc1 | Risc::Ncrisc => 512,
            _ => 2048,
        }
    }

    /// Load latency of `region`.
    #[inline(always)]
    pub fn load_latency(&self, region: Region) -> u32 {
        match region {
            Region::L1 => self.l1_load,
            Region::Local => self.local_load,
            Region::Fifo => self.fifo_load,
            Region::Tensix => self.tensix_load,
            Region::Mmio => self.mmio_load,
        }
    }
}

/// Where a load or store goes, as far as its timing is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The tile's L1 (shared by its cores: one port).
    L1,
    /// The core's local data RAM.
    Local,
    /// Mailboxes, PCBufs, TTSync, Tensix semaphores.
    Fifo,
    /// Tensix GPRs and backend configuration.
    Tensix,
    /// Everything else mapped: TDMA-RISC, tile control/debug/status, PIC, NoC, overlay.
    Mmio,
}

/// The timing region of `addr` for a core whose local RAM holds `local_len` bytes.
#[inline(always)]
pub fn region(addr: u32, l1_size: u32, local_len: u32) -> Region {
    if addr < l1_size {
        return Region::L1;
    }
    if addr.wrapping_sub(mmio::LOCAL_RAM_BASE) < local_len {
        return Region::Local;
    }
    // The device map's classification (README.md's memory map); an unmapped access
    // faults before its timing matters.
    match crate::chip::devices::load_region(addr) {
        LoadRegion::Fifo => Region::Fifo,
        LoadRegion::Tensix => Region::Tensix,
        _ => Region::Mmio,
    }
}

/// The timing state of one core (inside `hart::Core`, `repr(C)` for the JIT).
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct Pipe {
    /// Cycle each register's value is ready (index 0 unused).
    pub ready: [u64; 32],
    /// Slot-free cycles of the last [`LOADS_IN_FLIGHT`] non-local loads (a ring).
    pub loads: [u64; LOADS_IN_FLIGHT],
    /// Emit cycles of the last [`STORE_QUEUE`] stores (a ring).
    pub stores: [u64; STORE_QUEUE],
    /// Next ring positions (always below the ring's length).
    pub load_at: u32,
    pub store_at: u32,
    /// Emit cycle of the last store.
    pub last_emit: u64,
    /// Next cycle this core's L1 port is free (shared by BRISC, NCRISC and TRISC0: the
    /// tile copies it in and out as the cores take turns).
    pub port: u64,
    /// Instruction-cache tags: line address + 1 per set (0: empty).
    pub icache: [u32; ICACHE_MAX_LINES],
    /// Data-cache tags (Blackhole), same encoding.
    pub dcache: [u32; DCACHE_MAX_LINES],
}

impl Default for Pipe {
    fn default() -> Pipe {
        Pipe {
            ready: [0; 32],
            loads: [0; LOADS_IN_FLIGHT],
            stores: [0; STORE_QUEUE],
            load_at: 0,
            store_at: 0,
            last_emit: 0,
            port: 0,
            icache: [0; ICACHE_MAX_LINES],
            dcache: [0; DCACHE_MAX_LINES],
        }
    }
}

impl Pipe {
    /// Resets the state for a core leaving reset at `time` (caches empty).
    pub fn reset(&mut self, time: u64) {
        *self = Pipe::default();
        self.ready = [time; 32];
        self.loads = [time; LOADS_IN_FLIGHT];
        self.stores = [time; STORE_QUEUE];
        self.last_emit = time;
    }

    /// The latest cycle anything in flight completes (CSR serialisation).
    pub fn settled(&self, t: u64) -> u64 {
        let regs = self.ready.iter().copied().max().unwrap_or(0);
        let loads = self.loads.iter().copied().max().unwrap_or(0);
        t.max(regs).max(loads).max(self.last_emit)
    }
}

/// Step 1: the fetch of the instruction at `pc`. `sets` is the cache's line count (a
/// power of two). Returns the cycles the fetch adds.
#[inline(always)]
pub(crate) fn fetch(p: &mut Pipe, pc: u32, sets: u32, miss: u32) -> u64 {
    let line = pc / ICACHE_LINE;
    let tag = &mut p.icache[(line & (sets - 1)) as usize];
    if *tag == line.wrapping_add(1) {
        0
    } else {
        *tag = line.wrapping_add(1);
        miss as u64
    }
}

/// Step 2: the instruction waits for register `r`.
#[inline(always)]
pub(crate) fn need(p: &Pipe, t: u64, r: u8) -> u64 {
    t.max(p.ready[(r & 31) as usize])
}

/// The register a result goes to, if any (writes to `x0` go nowhere).
#[inline(always)]
fn set(p: &mut Pipe, rd: u8, at: u64) {
    if rd != 0 && rd < 32 {
        p.ready[rd as usize] = at;
    }
}

/// Step 3 for loads and stores: waits while the store queue is full.
#[inline(always)]
pub(crate) fn queue(p: &Pipe, t: u64) -> u64 {
    t.max(p.stores[p.store_at as usize])
}

/// Step 3 for non-local loads: waits for a free load slot.
#[inline(always)]
pub(crate) fn slot(p: &Pipe, t: u64) -> u64 {
    t.max(p.loads[p.load_at as usize])
}

/// An ALU instruction, jump or `lui`/`auipc` issued at `t`: returns the next issue cycle.
#[inline(always)]
pub(crate) fn alu(p: &mut Pipe, t: u64, rd: u8) -> u64 {
    set(p, rd, t + 1);
    t + 1
}

/// A `mul*` issued at `t`.
#[inline(always)]
pub(crate) fn mul(p: &mut Pipe, cfg: &Timing, t: u64, rd: u8) -> u64 {
    set(p, rd, t + cfg.mul_latency as u64);
    t + cfg.mul_issue as u64
}

/// Cycles of a division or remainder of `a` by `b` (README.md, Integer Unit): 2 when
/// dividing by 0 or 1 and for signed `INT_MIN / -1`; otherwise between
/// [`Timing::div_min`] and 33 by the dividend's magnitude. ASSUMPTION (the formula is not
/// documented): `max(div_min, 1 + bit length of |dividend|)`, so a dividend below 32 takes
/// 6 cycles and one of 2^31 or more takes 33.
pub fn div_cycles(cfg: &Timing, op: Op, a: u32, b: u32) -> u32 {
    let signed = matches!(op, Op::Div | Op::Rem);
    if b <= 1 || (signed && a == 0x8000_0000 && b == u32::MAX) {
        return 2;
    }
    let magnitude = if signed { (a as i32).unsigned_abs() } else { a };
    cfg.div_min.max(1 + (32 - magnitude.leading_zeros()))
}

/// A `div*`/`rem*` issued at `t` taking `cycles`.
#[inline(always)]
pub(crate) fn div(p: &mut Pipe, t: u64, rd: u8, cycles: u32) -> u64 {
    set(p, rd, t + cycles as u64);
    t + cycles as u64
}

/// Whether the static predictor gets a conditional branch wrong. ASSUMPTION (the
/// predictor is not documented): backward taken, forward not taken; `jal` and `jalr`
/// are always predicted right.
#[inline(always)]
pub const fn mispredicted(offset: i32, taken: bool) -> bool {
    taken != (offset < 0)
}

/// A conditional branch issued at `t`.
#[inline(always)]
pub(crate) fn branch(cfg: &Timing, t: u64, offset: i32, taken: bool) -> u64 {
    t + 1
        + if mispredicted(offset, taken) {
            cfg.mispredict as u64
        } else {
            0
        }
}

/// A load into `rd` from `region` that may issue at `t` (after [`need`], [`queue`] and,
/// for non-local regions, [`slot`]). `addr` picks the data-cache line on Blackhole.
/// Returns the next issue cycle.
#[inline(always)]
pub(crate) fn load(p: &mut Pipe, cfg: &Timing, t: u64, rd: u8, region: Region, addr: u32) -> u64 {
    let (access, latency) = match region {
        Region::L1 if cfg.dcache_lines != 0 && dcache_hit(p, cfg, addr) => (t, cfg.dcache_hit),
        Region::L1 => {
            let access = t.max(p.port);
            p.port = access + 1;
            (access, cfg.l1_load)
        }
        r => (t, cfg.load_latency(r)),
    };
    set(p, rd, access + latency as u64);
    if region != Region::Local {
        p.loads[p.load_at as usize] = access + latency as u64 - 1;
        p.load_at = (p.load_at + 1) % LOADS_IN_FLIGHT as u32;
    }
    t + 1
}

/// Looks up (and fills) the Blackhole data cache for an L1 load at `addr`.
#[inline(always)]
fn dcache_hit(p: &mut Pipe, cfg: &Timing, addr: u32) -> bool {
    let line = addr / ICACHE_LINE;
    let tag = &mut p.dcache[(line % cfg.dcache_lines) as usize];
    let hit = *tag == line.wrapping_add(1);
    *tag = line.wrapping_add(1);
    hit
}

/// A store to `region` that may issue at `t` (after [`need`] and [`queue`]). Returns the
/// next issue cycle.
#[inline(always)]
pub(crate) fn store(p: &mut Pipe, cfg: &Timing, t: u64, region: Region) -> u64 {
    let mut emit = (t + 1).max(p.last_emit + 1);
    if region == Region::L1 {
        emit = emit.max(p.port);
        p.port = emit + cfg.l1_store_port as u64;
    }
    p.last_emit = emit;
    p.stores[p.store_at as usize] = emit;
    p.store_at = (p.store_at + 1) % STORE_QUEUE as u32;
    t + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wh() -> Timing {
        Timing::for_arch(Arch::WormholeB0)
    }

    #[test]
    fn l1_loads_have_latency_8_and_four_in_flight() {
        let cfg = wh();
        let mut p = Pipe::default();
        // Independent loads: 4 per 7 cycles.
        let mut t = 0;
        for _ in 0..8 {
            t = queue(&p, slot(&p, t));
            t = load(&mut p, &cfg, t, 5, Region::L1, 0);
        }
        assert_eq!(t, 7 + 4, "loads 5..8 wait for the slots of loads 1..4");
        // A dependent use waits 8 after the load.
        let mut p = Pipe::default();
        let t = load(&mut p, &cfg, 0, 5, Region::L1, 0);
        assert_eq!(need(&p, t, 5), 8);
    }

    #[test]
    fn l1_stores_stream_at_one_per_five_cycles() {
        let cfg = wh();
        let mut p = Pipe::default();
        let mut t = 0;
        let mut at = Vec::new();
        for _ in 0..12 {
            t = queue(&p, t);
            at.push(t);
            t = store(&mut p, &cfg, t, Region::L1);
        }
        assert_eq!(at[11] - at[10], 5);
        // Stores elsewhere: one per cycle.
        let mut p = Pipe::default();
        let mut t = 0;
        for _ in 0..12 {
            t = queue(&p, t);
            t = store(&mut p, &cfg, t, Region::Mmio);
        }
        assert_eq!(t, 12);
    }

    #[test]
    fn division_cycles_follow_the_documented_bounds() {
        let cfg = wh();
        assert_eq!(div_cycles(&cfg, Op::Div, 100, 1), 2);
        assert_eq!(div_cycles(&cfg, Op::Divu, 100, 0), 2);
        assert_eq!(div_cycles(&cfg, Op::Div, 0x8000_0000, u32::MAX), 2);
        assert_eq!(div_cycles(&cfg, Op::Div, 7, 3), 6);
        assert_eq!(div_cycles(&cfg, Op::Divu, u32::MAX, 3), 33);
        assert_eq!(div_cycles(&cfg, Op::Div, -7i32 as u32, 3), 6);
    }

    #[test]
    fn the_predictor_takes_backward_branches() {
        let cfg = wh();
        assert_eq!(branch(&cfg, 0, -8, true), 1);
        assert_eq!(branch(&cfg, 0, 8, false), 1);
        assert_eq!(branch(&cfg, 0, 8, true), 3);
        assert_eq!(branch(&cfg, 0, -8, false), 3);
    }

    #[test]
    fn regions_by_address() {
        assert_eq!(region(0x100, 0x100000, 4096), Region::L1);
        assert_eq!(region(0xFFB0_0010, 0x100000, 4096), Region::Local);
        assert_eq!(region(0xFFB1_21F0, 0x100000, 4096), Region::Mmio);
        assert_eq!(region(0xFFEC_0000, 0x100000, 4096), Region::Fifo);
        assert_eq!(region(0xFFE0_0000, 0x100000, 4096), Region::Tensix);
        assert_eq!(
            region(0xFFE8_0020, 0x100000, 4096),
            Region::Fifo,
            "semaphores"
        );
        assert_eq!(region(0xFFB2_0000, 0x100000, 4096), Region::Mmio, "NoC 0");
    }
}
