//! tt-metal's L1 layout on Wormhole B0 and Blackhole, for running tt-metal's pre-compiled
//! firmware ([`l1_map`]).
//!
//! The numbers are tt-metal's, written out in our own table: source
//! `tt_metal/hw/inc/internal/tt-1xx/<arch>/dev_mem_map.h` of the pinned `ttnn` wheel
//! (0.81.1, `scripts/fetch-tt-metal.sh`), except the kernel configuration buffer's size,
//! which tt-metal's host sets (69 KiB on both arches: `L1_KERNEL_CONFIG_SIZE` of its
//! `hostdevcommon/common_runtime_address_map.h` for Wormhole, `default_l1_kernel_config_size`
//! of `llrt/hal/tt-1xx/blackhole/bh_hal_tensix.cpp` for Blackhole, neither in the wheel). A
//! test checks every value against the headers when the cache is present.
//!
//! | range (Wormhole B0) | range (Blackhole) | what |
//! |---|---|---|
//! | `0x0000..0x0004` | same | BRISC's boot word: a jump to its firmware, written by the host |
//! | `0x0010..0x3410` | `0x0060..0x34E0` | mailboxes (`dev_msgs.h`: launch and go messages, sync, profiler area) |
//! | `0x3420..0x3620` | `0x34E0..0x36E0` | 512 zero bytes the firmware keeps (`MEM_ZEROS_BASE`) |
//! | `0x3A20..0x7240` | `0x3AE0..0x84E0` | firmware: BRISC, NCRISC, TRISC0, TRISC1, TRISC2 |
//! | `0x8960..0xD978` | `0xA080..0x138A0` | scratch the host fills before boot (local-RAM images, bank tables); reused after |
//! | `0x8960..0x19D60` | `0xA080..0x1B480` | the kernel configuration buffer (kernels, runtime arguments, CB configs) |
//!
//! Blackhole's first 0x60 bytes hold, besides the boot word, a scratch word for the ARC's
//! firmware and the staging of inline NoC writes, which Blackhole's NIU does as normal writes.

use crate::{mmio, Arch, MemoryMap, Region, Risc};

pub mod msgs;

/// The `ttnn` wheel the numbers were read from.
pub const SOURCE_VERSION: &str = "0.81.1";

/// The pre-compiled firmware build (`tt_metal/pre-compiled/<build>/`) ttprof runs and links
/// kernels against on `arch`, unless [`FIRMWARE_BUILD_VAR`] names another. Both are profiler
/// off, slow dispatch (no cores kept for dispatch) on an unharvested chip:
/// - Wormhole B0: 12 DRAM banks, 72 L1 banks (an n150's 8x9 workers); four of the wheel's
///   28 Wormhole builds have this configuration, with byte-identical code; this is the
///   first in sort order.
/// - Blackhole: 8 DRAM banks, 140 L1 banks (a p150's 14x10 workers); its byte-identical
///   twin is `7726429531406959028`.
pub const fn default_firmware_build(arch: Arch) -> &'static str {
    match arch {
        Arch::WormholeB0 => "1003041148146844629",
        Arch::Blackhole => "18372378255250710900",
    }
}

/// `NUM_CIRCULAR_BUFFERS` of tt-metal's `circular_buffer_constants.h` on `arch`: 32 on
/// Wormhole B0, 64 on Blackhole. The firmware sets up that many local circular buffers, the
/// compute descriptors (`chlkc_descriptors.h`) have that many entries, and as a launch's
/// `min_remote_cb_start_index` it means "no remote circular buffers".
pub const fn num_circular_buffers(arch: Arch) -> u8 {
    match arch {
        Arch::WormholeB0 => 32,
        Arch::Blackhole => 64,
    }
}

/// The environment variable that overrides [`default_firmware_build`].
pub const FIRMWARE_BUILD_VAR: &str = "TTPROF_TT_METAL_FIRMWARE";

/// The firmware build to run and link against on `arch`: `$TTPROF_TT_METAL_FIRMWARE` when
/// set and not empty, else [`default_firmware_build`].
#[cfg(feature = "std")]
pub fn firmware_build(arch: Arch) -> std::string::String {
    match std::env::var(FIRMWARE_BUILD_VAR) {
        Ok(b) if !b.is_empty() => b,
        _ => default_firmware_build(arch).into(),
    }
}

/// The header the numbers of `arch` were read from, under the tt-metal root.
pub const fn source_header(arch: Arch) -> &'static str {
    match arch {
        Arch::WormholeB0 => "tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h",
        Arch::Blackhole => "tt_metal/hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h",
    }
}

/// tt-metal's L1 map of a worker tile on one arch. Field names are the header's, without
/// `MEM_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L1Map {
    /// The arch.
    pub arch: Arch,
    /// `MEM_L1_SIZE`.
    pub l1_size: u32,
    /// `MEM_BOOT_CODE_BASE`: BRISC's reset PC, where the host writes a jump to its firmware.
    pub boot_code_base: u32,
    /// `MEM_NOC_ATOMIC_RET_VAL_ADDR`.
    pub noc_atomic_ret_val_addr: u32,
    /// `MEM_L1_BARRIER`.
    pub l1_barrier: u32,
    /// `MEM_MAILBOX_BASE` and `MEM_MAILBOX_SIZE`.
    pub mailbox: Region,
    /// `MEM_ZEROS_BASE` and `MEM_ZEROS_SIZE`.
    pub zeros: Region,
    /// `MEM_LLK_DEBUG_BASE` and `MEM_LLK_DEBUG_SIZE`.
    pub llk_debug: Region,
    /// `MEM_<RISC>_FIRMWARE_BASE` and `_SIZE`, in [`Risc::ALL`] order; each ELF's entry is
    /// its slot's start.
    pub firmware: [Region; 5],
    /// `MEM_NOC_COUNTER_BASE`: the end of the firmware slots.
    pub noc_counter_base: u32,
    /// `MEM_MAP_END`: the end of the reserved map (`L1_KERNEL_CONFIG_BASE` in tt-metal's host).
    pub map_end: u32,
    /// `MEM_NCRISC_INIT_IRAM_L1_BASE_SCRATCH`.
    pub ncrisc_init_iram_l1_base_scratch: u32,
    /// `MEM_BANK_TO_NOC_SCRATCH` and `MEM_BANK_TO_NOC_SIZE`: the bank-to-NoC tables the host
    /// writes before boot.
    pub bank_to_noc: Region,
    /// `MEM_LOGICAL_TO_VIRTUAL_SCRATCH` and `_SIZE`.
    pub logical_to_virtual: Region,
    /// The kernel configuration buffer (`L1_KERNEL_CONFIG_BASE` = [`L1Map::map_end`], 69
    /// KiB): where kernels, runtime arguments, CB configurations and semaphores of a launch
    /// go, and the L1 a core fetches kernels from.
    pub kernel_config: Region,
}

/// The kernel configuration buffer's size on both arches (see the module's documentation).
pub const KERNEL_CONFIG_SIZE: u32 = 69 * 1024;

/// Wormhole B0's map.
pub const WORMHOLE_B0: L1Map = L1Map {
    arch: Arch::WormholeB0,
    l1_size: 1464 * 1024,
    boot_code_base: 0,
    noc_atomic_ret_val_addr: 4,
    l1_barrier: 12,
    mailbox: Region::new(16, 13312),
    zeros: Region::new(0x3420, 512),
    llk_debug: Region::new(0x3620, 1024),
    firmware: [
        Region::new(0x3A20, 6 * 1024 + 1568),
        Region::new(0x5840, 2048),
        Region::new(0x6040, 1536),
        Region::new(0x6640, 1536),
        Region::new(0x6C40, 1536),
    ],
    noc_counter_base: 0x7240,
    map_end: 0x8960,
    ncrisc_init_iram_l1_base_scratch: 0xC160,
    bank_to_noc: Region::new(0xD160, 2048),
    logical_to_virtual: Region::new(0xD960, 24),
    kernel_config: Region::new(0x8960, KERNEL_CONFIG_SIZE),
};

/// Blackhole's map.
pub const BLACKHOLE: L1Map = L1Map {
    arch: Arch::Blackhole,
    l1_size: 1536 * 1024,
    boot_code_base: 0,
    noc_atomic_ret_val_addr: 4,
    l1_barrier: 12,
    mailbox: Region::new(0x60, 13440),
    zeros: Region::new(0x34E0, 512),
    llk_debug: Region::new(0x36E0, 1024),
    firmware: [
        Region::new(0x3AE0, 6 * 1024 + 2560),
        Region::new(0x5CE0, 2560),
        Region::new(0x66E0, 2560),
        Region::new(0x70E0, 2560),
        Region::new(0x7AE0, 2560),
    ],
    noc_counter_base: 0x84E0,
    map_end: 0xA080,
    ncrisc_init_iram_l1_base_scratch: 0x11080,
    bank_to_noc: Region::new(0x13080, 2048),
    logical_to_virtual: Region::new(0x13880, 32),
    kernel_config: Region::new(0xA080, KERNEL_CONFIG_SIZE),
};

/// tt-metal's map on `arch`.
pub const fn l1_map(arch: Arch) -> &'static L1Map {
    match arch {
        Arch::WormholeB0 => &WORMHOLE_B0,
        Arch::Blackhole => &BLACKHOLE,
    }
}

impl L1Map {
    /// The firmware slot of `risc`.
    pub const fn firmware(&self, risc: Risc) -> Region {
        self.firmware[risc.index()]
    }

    /// `MEM_<RISC>_INIT_LOCAL_L1_BASE_SCRATCH`: where the host writes `risc`'s local-RAM
    /// image (`.data`) for the firmware to copy in (`do_crt1`). Consecutive from
    /// [`L1Map::map_end`], each the core's local RAM size, in [`Risc::ALL`] order.
    pub const fn local_init_scratch(&self, risc: Risc) -> u32 {
        let mut addr = self.map_end;
        let mut i = 0;
        while i < risc.index() {
            addr += self.arch.local_ram_size(Risc::ALL[i]);
            i += 1;
        }
        addr
    }

    /// The memory map of `risc` under tt-metal's layout.
    ///
    /// Code is the firmware slot (read-only to the cores); kernels are fetched from the
    /// kernel configuration buffer. BRISC starts at the boot word; the others keep the
    /// chip's default reset PCs, which BRISC's firmware overrides with their firmware slots
    /// before it releases them (`set_deassert_addresses` in `brisc.cc`; the emulator honours
    /// the override). `data` is the local-RAM image's scratch in L1.
    pub const fn memory_map(&self, risc: Risc) -> MemoryMap {
        let arch = self.arch;
        let (reset_pc, boot) = match risc {
            Risc::Brisc => (
                self.boot_code_base,
                Some(Region::new(self.boot_code_base, 4)),
            ),
            _ => (crate::memory_map(arch, risc).reset_pc, None),
        };
        let local = arch.local_ram_size(risc);
        let scratch = self.local_init_scratch(risc);
        MemoryMap {
            arch,
            risc,
            reset_pc,
            boot,
            code: self.firmware(risc),
            data: Region::new(scratch, local),
            local_ram: Region::new(mmio::LOCAL_RAM_BASE, local),
            stack_top: mmio::LOCAL_RAM_BASE + local,
            // Wormhole's NCRISC runs kernels from its instruction RAM (`MEM_NCRISC_IRAM_BASE`,
            // [`Arch::ncrisc_iram`]), which the mover fills; Blackhole's has none and runs
            // them from the buffer, like the other cores.
            kernel: match (risc, arch.ncrisc_iram()) {
                (Risc::Ncrisc, Some(_)) => None,
                _ => Some(self.kernel_config),
            },
            local_init: Some(scratch),
        }
    }
}

/// The memory map of `risc` on `arch` under tt-metal's layout ([`L1Map::memory_map`]).
pub const fn memory_map(arch: Arch, risc: Risc) -> MemoryMap {
    l1_map(arch).memory_map(risc)
}

#[cfg(test)]
mod tests;
