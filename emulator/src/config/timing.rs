//! The Baby RISC-V pipeline's cost table: every documented number and every assumption of
//! one arch, by name ([`Timing`]). One table for the interpreter's pipeline
//! ([`crate::isa::pipeline`]) and the JIT; docs/design's "Timing model" lists each rule
//! beside its page of Tenstorrent's ISA documentation.

use crate::map::Region;
use riscv_linker::{Arch, Risc};

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
