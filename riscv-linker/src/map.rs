//! Per (arch, RISC) memory maps. L1 layout (both arches; each core's view, L1 starts at 0):
//!
//! | range               | what                                                           |
//! |---------------------|----------------------------------------------------------------|
//! | `0x00000..0x00004`  | BRISC boot word: a jump to BRISC's code (BRISC resets at 0)    |
//! | `0x00040..0x00800`  | profiler control blocks ([`crate::profiler`]), x0-addressable  |
//! | `0x00800..0x06000`  | BRISC code + read-only data                                    |
//! | `0x06000..0x0A000`  | TRISC0 code (reset PC 0x6000)                                  |
//! | `0x0A000..0x0E000`  | TRISC1 code (reset PC 0xA000)                                  |
//! | `0x0E000..0x12000`  | TRISC2 code (reset PC 0xE000)                                  |
//! | `0x12000..0x16000`  | NCRISC code (reset PC 0x12000)                                 |
//! | `0x16000..0x20000`  | per-RISC `.data`/`.bss`, 8 KiB each, in [`Risc`] order         |
//! | `0x20000..0x2A000`  | profiler rings ([`crate::profiler::RING_BASE`])                 |
//! | `0x2A000..0x2B400`  | runtime arguments, 1 KiB (256 words) per RISC: [`runtime_args`] |
//! | `0x30000..L1 end`   | free for kernels (circular buffers, tensors): [`USER_L1_BASE`]  |
//! | top 64 KiB          | with `--backend timestamper` only: the debug timestamper's two buffers ([`crate::profiler::stamp_buffers`]) |
//!
//! Reset PCs are Wormhole B0's (`tensix.md`); Blackhole's are programmable and use the same
//! values. Stacks grow down from the end of each core's local RAM; NCRISC runs from L1 on
//! both arches (Wormhole's NCRISC IRAM is unused). See docs/design/l1-layout.md.

use crate::{mmio, Arch, Risc};

/// First L1 byte not used by firmware, code, data or the profiler.
pub const USER_L1_BASE: u32 = 0x30000;

/// L1 address of BRISC's runtime arguments; each RISC's follow at [`RUNTIME_ARGS_BYTES`].
pub const RUNTIME_ARGS_BASE: u32 = 0x2A000;
/// Bytes of runtime arguments per RISC.
pub const RUNTIME_ARGS_BYTES: u32 = 0x400;
/// Runtime arguments per RISC (32-bit words): what tt-metal's `get_arg_val<uint32_t>(i)`
/// reads, written by the launcher (`ttprof run --arg RISC=v0,v1,..`) before each launch.
pub const MAX_RUNTIME_ARGS: u32 = RUNTIME_ARGS_BYTES / 4;

/// Where `risc`'s runtime arguments live in L1 (the same on every tile and arch).
pub const fn runtime_args(risc: Risc) -> Region {
    Region::new(
        RUNTIME_ARGS_BASE + risc.index() as u32 * RUNTIME_ARGS_BYTES,
        RUNTIME_ARGS_BYTES,
    )
}

const CODE_SLOT_SIZE: u32 = 0x4000;
const BRISC_CODE_START: u32 = 0x800;
const DATA_BASE: u32 = 0x16000;
const DATA_SLOT_SIZE: u32 = 0x2000;

/// A half-open address range `[start, start + size)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// First byte.
    pub start: u32,
    /// Length in bytes.
    pub size: u32,
}

impl Region {
    /// The region of `size` bytes from `start`.
    pub const fn new(start: u32, size: u32) -> Region {
        Region { start, size }
    }

    /// One past the last byte.
    pub const fn end(&self) -> u64 {
        self.start as u64 + self.size as u64
    }

    /// Whether `[addr, addr + len)` lies inside this region.
    pub const fn contains(&self, addr: u32, len: u32) -> bool {
        addr >= self.start && (addr as u64 + len as u64) <= self.end()
    }
}

/// Where one core's program lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryMap {
    /// The chip this map is for.
    pub arch: Arch,
    /// The core this map is for.
    pub risc: Risc,
    /// Where the core starts executing after reset.
    pub reset_pc: u32,
    /// The boot word at the reset PC when code does not start there (BRISC only).
    pub boot: Option<Region>,
    /// Code and read-only data, in L1. Stores here are faults.
    pub code: Region,
    /// `.data` and `.bss`, in L1.
    pub data: Region,
    /// The core's private local RAM (stack).
    pub local_ram: Region,
    /// Initial stack pointer (end of local RAM, 16-byte aligned).
    pub stack_top: u32,
    /// L1 the host writes kernels into for firmware to call (tt-metal's kernel
    /// configuration buffer, [`crate::tt_metal`]): fetchable, and writable by the cores
    /// (it also holds runtime arguments and semaphores). `None` under ttprof's layout.
    pub kernel: Option<Region>,
    /// Where the host writes the image of the core's local-RAM segment in L1, for the
    /// firmware to copy in at boot (tt-metal's `MEM_*_INIT_LOCAL_L1_BASE_SCRATCH`); `None`:
    /// the loader fills local RAM directly (ttprof's layout).
    pub local_init: Option<u32>,
}

/// Whose L1 layout a device follows: which code the cores may fetch, where the host
/// writes what, and which L1 stores are faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// ttprof's own (this module): ttprof's kernels, launched by the emulator's loader.
    #[default]
    Ttprof,
    /// tt-metal's ([`crate::tt_metal`]): tt-metal's pre-compiled firmware in its slots, its
    /// mailboxes, kernels in its kernel configuration buffer.
    TtMetal,
}

impl Layout {
    /// The layout's name as the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Ttprof => "ttprof",
            Layout::TtMetal => "tt-metal",
        }
    }

    /// The memory map of `risc` on `arch` under this layout.
    pub const fn memory_map(self, arch: Arch, risc: Risc) -> MemoryMap {
        match self {
            Layout::Ttprof => memory_map(arch, risc),
            Layout::TtMetal => crate::tt_metal::memory_map(arch, risc),
        }
    }
}

/// The memory map of `risc` on `arch`.
pub const fn memory_map(arch: Arch, risc: Risc) -> MemoryMap {
    let (reset_pc, boot, code) = match risc {
        Risc::Brisc => (
            0,
            Some(Region::new(0, 4)),
            Region::new(BRISC_CODE_START, 0x6000 - BRISC_CODE_START),
        ),
        Risc::Trisc0 => (0x6000, None, Region::new(0x6000, CODE_SLOT_SIZE)),
        Risc::Trisc1 => (0xA000, None, Region::new(0xA000, CODE_SLOT_SIZE)),
        Risc::Trisc2 => (0xE000, None, Region::new(0xE000, CODE_SLOT_SIZE)),
        Risc::Ncrisc => (0x12000, None, Region::new(0x12000, CODE_SLOT_SIZE)),
    };
    let data = Region::new(
        DATA_BASE + risc.index() as u32 * DATA_SLOT_SIZE,
        DATA_SLOT_SIZE,
    );
    let local_ram = Region::new(mmio::LOCAL_RAM_BASE, arch.local_ram_size(risc));
    MemoryMap {
        arch,
        risc,
        reset_pc,
        boot,
        code,
        data,
        local_ram,
        stack_top: mmio::LOCAL_RAM_BASE + arch.local_ram_size(risc),
        kernel: None,
        local_init: None,
    }
}

/// Who owns a reserved piece of L1 (below [`USER_L1_BASE`]): what the host must not write
/// before a launch (the kernel's image and the launcher's words replace it, or the
/// profiler's protocol depends on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1Owner {
    /// BRISC's boot word (a jump to its code).
    BootWord,
    /// A word of the profiler's tile control block ([`crate::profiler::tile`]).
    TileWord(&'static str),
    /// A word of a RISC's profiler ring control block ([`crate::profiler::ring`]).
    RingWord(Risc, &'static str),
    /// The rest of the profiler's control blocks.
    ControlBlocks,
    /// A RISC's code and read-only data.
    Code(Risc),
    /// A RISC's `.data` and `.bss`.
    Data(Risc),
    /// A RISC's profiler ring.
    Ring(Risc),
    /// A RISC's runtime arguments ([`runtime_args`]).
    RuntimeArgs(Risc),
}

impl core::fmt::Display for L1Owner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            L1Owner::BootWord => f.write_str("BRISC's boot word"),
            L1Owner::TileWord(w) => {
                write!(f, "the profiler's tile control word {w}")?;
                match *w {
                    "CONTROL" => f.write_str(" (the recording switch and ring policy)"),
                    "CONSUMER" => f.write_str(" (the consumer's lease)"),
                    _ => Ok(()),
                }
            }
            L1Owner::RingWord(r, w) => write!(f, "{r}'s profiler ring control word {w}"),
            L1Owner::ControlBlocks => f.write_str("the profiler's control blocks"),
            L1Owner::Code(r) => write!(f, "{r}'s code (a kernel is loaded over it)"),
            L1Owner::Data(r) => write!(f, "{r}'s .data/.bss (a kernel is loaded over it)"),
            L1Owner::Ring(r) => write!(f, "{r}'s profiler ring"),
            L1Owner::RuntimeArgs(r) => {
                write!(f, "{r}'s runtime arguments (the launcher writes them)")
            }
        }
    }
}

const TILE_WORDS: [(&str, u32); 12] = {
    use crate::profiler::tile::*;
    [
        ("MAGIC", MAGIC),
        ("VERSION", VERSION),
        ("ARCH", ARCH),
        ("LOCATION", LOCATION),
        ("CONTROL", CONTROL),
        ("RUN_ID", RUN_ID),
        ("CONSUMER", CONSUMER),
        ("KERNELS[BRISC]", KERNELS),
        ("KERNELS[TRISC0]", KERNELS + 4),
        ("KERNELS[TRISC1]", KERNELS + 8),
        ("KERNELS[TRISC2]", KERNELS + 12),
        ("KERNELS[NCRISC]", KERNELS + 16),
    ]
};

const RING_WORDS: [(&str, u32); 13] = {
    use crate::profiler::ring::*;
    [
        ("MAGIC", MAGIC),
        ("VERSION", VERSION),
        ("RISC", RISC),
        ("BASE", BASE),
        ("CAPACITY", CAPACITY),
        ("HEAD", HEAD),
        ("TAIL", TAIL),
        ("ANCHOR", ANCHOR),
        ("DROPPED", DROPPED),
        ("STALLS", STALLS),
        ("RUN_ID", RUN_ID),
        ("STATE", STATE),
        ("CONSUMER_GONE", CONSUMER_GONE),
    ]
};

/// The first reserved piece of L1 that `[addr, addr + len)` overlaps (a named word before
/// the block holding it), with its range; `None` when the bytes are free for the host to
/// write before a launch (from [`USER_L1_BASE`], and the unassigned gaps below it).
pub fn l1_reserved(addr: u32, len: u32) -> Option<(Region, L1Owner)> {
    use crate::profiler;
    let end = addr as u64 + len as u64;
    let hit = |r: Region| len > 0 && (addr as u64) < r.end() && (r.start as u64) < end;
    let word = |a: u32| Region::new(a, 4);
    let mut found = None;
    let mut check = |r: Region, o: L1Owner| {
        if found.is_none() && hit(r) {
            found = Some((r, o));
        }
    };
    check(Region::new(0, 4), L1Owner::BootWord);
    for (name, off) in TILE_WORDS {
        check(word(profiler::TILE_BLOCK + off), L1Owner::TileWord(name));
    }
    for risc in Risc::ALL {
        for (name, off) in RING_WORDS {
            check(
                word(profiler::ring_word(risc, off)),
                L1Owner::RingWord(risc, name),
            );
        }
    }
    check(
        Region::new(
            profiler::TILE_BLOCK,
            BRISC_CODE_START - profiler::TILE_BLOCK,
        ),
        L1Owner::ControlBlocks,
    );
    for risc in Risc::ALL {
        // The same on both arches.
        let m = memory_map(Arch::WormholeB0, risc);
        check(m.code, L1Owner::Code(risc));
        check(m.data, L1Owner::Data(risc));
        check(profiler::ring_data(risc), L1Owner::Ring(risc));
        check(runtime_args(risc), L1Owner::RuntimeArgs(risc));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler;

    fn overlaps(a: Region, b: Region) -> bool {
        (a.start as u64) < b.end() && (b.start as u64) < a.end()
    }

    #[test]
    fn reserved_l1_names_the_word_then_the_block() {
        use crate::profiler::{ring, ring_word, tile, TILE_BLOCK};
        assert_eq!(l1_reserved(USER_L1_BASE, 4), None);
        assert_eq!(
            l1_reserved(4, 0x3C),
            None,
            "between the boot word and the blocks"
        );
        assert_eq!(
            l1_reserved(TILE_BLOCK + tile::CONSUMER, 4),
            Some((Region::new(0x58, 4), L1Owner::TileWord("CONSUMER")))
        );
        assert_eq!(
            l1_reserved(ring_word(Risc::Ncrisc, ring::HEAD) + 2, 4).map(|o| o.1),
            Some(L1Owner::RingWord(Risc::Ncrisc, "HEAD"))
        );
        assert_eq!(
            l1_reserved(0x5FFC, 8).map(|o| o.1),
            Some(L1Owner::Code(Risc::Brisc))
        );
        assert_eq!(
            l1_reserved(USER_L1_BASE - 4, 8),
            None,
            "above the runtime arguments, below USER_L1_BASE: unassigned"
        );
        assert_eq!(
            l1_reserved(0x2A004, 4).map(|o| o.1),
            Some(L1Owner::RuntimeArgs(Risc::Brisc))
        );
    }

    #[test]
    fn reset_pcs_match_wormhole_reference() {
        let pcs: [(Risc, u32); 5] = [
            (Risc::Brisc, 0x0),
            (Risc::Trisc0, 0x6000),
            (Risc::Trisc1, 0xA000),
            (Risc::Trisc2, 0xE000),
            (Risc::Ncrisc, 0x12000),
        ];
        for (risc, pc) in pcs {
            assert_eq!(memory_map(Arch::WormholeB0, risc).reset_pc, pc);
        }
    }

    #[test]
    fn l1_regions_of_all_cores_and_the_profiler_are_disjoint() {
        for arch in Arch::ALL {
            let mut regions = std::vec::Vec::new();
            for risc in Risc::ALL {
                let m = memory_map(arch, risc);
                regions.push(m.code);
                regions.push(m.data);
                if let Some(b) = m.boot {
                    regions.push(b);
                }
                assert!(m.code.contains(m.reset_pc, 4) || m.boot.unwrap().contains(m.reset_pc, 4));
                assert_eq!(m.stack_top % 16, 0);
            }
            regions.push(profiler::control_region());
            regions.push(profiler::rings_region());
            regions.extend(Risc::ALL.map(runtime_args));
            for (i, a) in regions.iter().enumerate() {
                assert!(a.end() <= arch.l1_size() as u64);
                for b in &regions[i + 1..] {
                    assert!(!overlaps(*a, *b), "{a:?} overlaps {b:?}");
                }
                assert!(a.end() <= USER_L1_BASE as u64);
            }
        }
    }

    #[test]
    fn local_ram_sizes_follow_reference() {
        assert_eq!(
            memory_map(Arch::WormholeB0, Risc::Brisc).local_ram.size,
            4096
        );
        assert_eq!(
            memory_map(Arch::WormholeB0, Risc::Trisc1).local_ram.size,
            2048
        );
        assert_eq!(
            memory_map(Arch::Blackhole, Risc::Ncrisc).local_ram.size,
            8192
        );
        assert_eq!(
            memory_map(Arch::Blackhole, Risc::Trisc2).local_ram.size,
            4096
        );
    }
}
