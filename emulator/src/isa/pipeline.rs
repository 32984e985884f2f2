//! The Baby RISC-V pipeline as the ISA documentation times it: one definition of every
//! timing rule, shared by the interpreter (the `exec` module) and the JIT (`jit`), which
//! emits the same steps as machine code; the tests run every program both ways.
//!
//! `t` is the cycle the next instruction may enter the Integer Unit ("issue"); a core's
//! state is `Pipe`. An instruction:
//!
//! 1. is fetched: an instruction-cache miss delays it by [`Timing::icache_miss`];
//! 2. waits for its source registers (`need`);
//! 3. a load or store waits for the store queue, a non-local load for a load slot;
//! 4. then costs what its kind costs, every number a field of [`Timing`].
//!
//! Every step is a `max` or an addition on these times. Source: Tenstorrent's ISA
//! documentation (<https://github.com/tenstorrent/tt-isa-documentation>),
//! `WormholeB0/TensixTile/BabyRISCV/`. See docs/design/timing-model.md: each rule beside
//! its page, the assumptions, and the steps in full.

pub use crate::config::Timing;
use crate::isa::decode::Op;
pub use crate::map::Region;

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
    use riscv_linker::Arch;

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
}
