//! tt-metal's L1 layout on Wormhole B0, for running tt-metal's pre-compiled firmware.
//!
//! The numbers are tt-metal's, written out in our own table: source
//! `tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h` of the pinned `ttnn` wheel
//! (0.81.1, `scripts/fetch-tt-metal.sh`), except the kernel configuration buffer's size,
//! which tt-metal's host sets (`L1_KERNEL_CONFIG_SIZE` in its
//! `hostdevcommon/common_runtime_address_map.h`, not in the wheel). A test checks every
//! value against the header when the cache is present. Blackhole's map is not written yet.
//!
//! | range | what |
//! |---|---|
//! | `0x0000..0x0004` | BRISC's boot word: a jump to its firmware, written by the host |
//! | `0x0010..0x3410` | mailboxes (`dev_msgs.h`: launch and go messages, sync, profiler area) |
//! | `0x3420..0x3620` | 512 zero bytes the firmware keeps (`MEM_ZEROS_BASE`) |
//! | `0x3A20..0x7240` | firmware: BRISC, NCRISC, TRISC0, TRISC1, TRISC2 |
//! | `0x8960..0xD978` | scratch the host fills before boot (local-RAM images, bank tables); reused after |
//! | `0x8960..0x19D60` | the kernel configuration buffer (kernels, runtime arguments, CB configs) |

use crate::{mmio, Arch, MemoryMap, Region, Risc};

pub mod msgs;

/// The `ttnn` wheel the numbers were read from.
pub const SOURCE_VERSION: &str = "0.81.1";
/// The header they were read from, under the tt-metal root.
pub const SOURCE_HEADER: &str = "tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h";

/// `MEM_L1_SIZE`.
pub const L1_SIZE: u32 = 1464 * 1024;
/// `MEM_BOOT_CODE_BASE`: BRISC's reset PC, where the host writes a jump to its firmware.
pub const BOOT_CODE_BASE: u32 = 0;
/// `MEM_NOC_ATOMIC_RET_VAL_ADDR`.
pub const NOC_ATOMIC_RET_VAL_ADDR: u32 = 4;
/// `MEM_L1_BARRIER`.
pub const L1_BARRIER: u32 = 12;
/// `MEM_MAILBOX_BASE`.
pub const MAILBOX_BASE: u32 = 16;
/// `MEM_MAILBOX_SIZE`.
pub const MAILBOX_SIZE: u32 = 13312;
/// `MEM_ZEROS_BASE`.
pub const ZEROS_BASE: u32 = 0x3420;
/// `MEM_ZEROS_SIZE`.
pub const ZEROS_SIZE: u32 = 512;
/// `MEM_LLK_DEBUG_BASE`.
pub const LLK_DEBUG_BASE: u32 = 0x3620;
/// `MEM_LLK_DEBUG_SIZE`.
pub const LLK_DEBUG_SIZE: u32 = 1024;
/// `MEM_BRISC_FIRMWARE_BASE` (the BRISC firmware ELF's entry).
pub const BRISC_FIRMWARE_BASE: u32 = 0x3A20;
/// `MEM_BRISC_FIRMWARE_SIZE`.
pub const BRISC_FIRMWARE_SIZE: u32 = 6 * 1024 + 1568;
/// `MEM_NCRISC_FIRMWARE_BASE`.
pub const NCRISC_FIRMWARE_BASE: u32 = 0x5840;
/// `MEM_NCRISC_FIRMWARE_SIZE`.
pub const NCRISC_FIRMWARE_SIZE: u32 = 2048;
/// `MEM_TRISC0_FIRMWARE_BASE`.
pub const TRISC0_FIRMWARE_BASE: u32 = 0x6040;
/// `MEM_TRISC1_FIRMWARE_BASE`.
pub const TRISC1_FIRMWARE_BASE: u32 = 0x6640;
/// `MEM_TRISC2_FIRMWARE_BASE`.
pub const TRISC2_FIRMWARE_BASE: u32 = 0x6C40;
/// `MEM_TRISC0_FIRMWARE_SIZE` (also TRISC1's and TRISC2's).
pub const TRISC_FIRMWARE_SIZE: u32 = 1536;
/// `MEM_NOC_COUNTER_BASE`: the end of the firmware slots.
pub const NOC_COUNTER_BASE: u32 = 0x7240;
/// `MEM_MAP_END`: the end of the reserved map (`L1_KERNEL_CONFIG_BASE` in tt-metal's host).
pub const MAP_END: u32 = 0x8960;
/// `MEM_NCRISC_INIT_IRAM_L1_BASE_SCRATCH`.
pub const NCRISC_INIT_IRAM_L1_BASE_SCRATCH: u32 = 0xC160;
/// `MEM_BANK_TO_NOC_SCRATCH`: the bank-to-NoC tables the host writes before boot.
pub const BANK_TO_NOC_SCRATCH: u32 = 0xD160;
/// `MEM_BANK_TO_NOC_SIZE`.
pub const BANK_TO_NOC_SIZE: u32 = 2048;
/// `MEM_LOGICAL_TO_VIRTUAL_SCRATCH`.
pub const LOGICAL_TO_VIRTUAL_SCRATCH: u32 = 0xD960;
/// `MEM_LOGICAL_TO_VIRTUAL_SIZE`.
pub const LOGICAL_TO_VIRTUAL_SIZE: u32 = 24;
/// `MEM_NCRISC_IRAM_BASE`: NCRISC's instruction RAM (its kernels run from there).
pub const NCRISC_IRAM_BASE: u32 = 0xFFC0_0000;
/// `MEM_NCRISC_IRAM_SIZE`.
pub const NCRISC_IRAM_SIZE: u32 = 16 * 1024;
/// tt-metal host's `L1_KERNEL_CONFIG_BASE` (= [`MAP_END`]).
pub const KERNEL_CONFIG_BASE: u32 = MAP_END;
/// tt-metal host's `L1_KERNEL_CONFIG_SIZE` (69 KiB): where kernels, runtime arguments,
/// CB configurations and semaphores of a launch go.
pub const KERNEL_CONFIG_SIZE: u32 = 69 * 1024;

/// The firmware slot of `risc` (`MEM_<RISC>_FIRMWARE_BASE`, `_SIZE`).
pub const fn firmware(risc: Risc) -> Region {
    match risc {
        Risc::Brisc => Region::new(BRISC_FIRMWARE_BASE, BRISC_FIRMWARE_SIZE),
        Risc::Ncrisc => Region::new(NCRISC_FIRMWARE_BASE, NCRISC_FIRMWARE_SIZE),
        Risc::Trisc0 => Region::new(TRISC0_FIRMWARE_BASE, TRISC_FIRMWARE_SIZE),
        Risc::Trisc1 => Region::new(TRISC1_FIRMWARE_BASE, TRISC_FIRMWARE_SIZE),
        Risc::Trisc2 => Region::new(TRISC2_FIRMWARE_BASE, TRISC_FIRMWARE_SIZE),
    }
}

/// `MEM_<RISC>_INIT_LOCAL_L1_BASE_SCRATCH`: where the host writes `risc`'s local-RAM image
/// (`.data`) for the firmware to copy in (`do_crt1`). Consecutive from [`MAP_END`], each
/// the core's local RAM size, in the order BRISC, NCRISC, TRISC0, TRISC1, TRISC2.
pub const fn local_init_scratch(risc: Risc) -> u32 {
    const B: u32 = 4 * 1024;
    const T: u32 = 2 * 1024;
    match risc {
        Risc::Brisc => MAP_END,
        Risc::Ncrisc => MAP_END + B,
        Risc::Trisc0 => MAP_END + 2 * B,
        Risc::Trisc1 => MAP_END + 2 * B + T,
        Risc::Trisc2 => MAP_END + 2 * B + 2 * T,
    }
}

/// The kernel configuration buffer: the L1 a core fetches kernels from.
pub const fn kernel_config() -> Region {
    Region::new(KERNEL_CONFIG_BASE, KERNEL_CONFIG_SIZE)
}

/// The memory map of `risc` on `arch` under tt-metal's layout (`None`: not Wormhole B0).
///
/// Code is the firmware slot (read-only to the cores); kernels are fetched from the kernel
/// configuration buffer. BRISC starts at the boot word; the others keep the chip's default
/// reset PCs, which BRISC's firmware overrides with their firmware slots before it releases
/// them (`set_deassert_addresses` in `brisc.cc`; the emulator honours the override). `data`
/// is the local-RAM image's scratch in L1 (the firmware has no data in L1).
pub const fn memory_map(arch: Arch, risc: Risc) -> Option<MemoryMap> {
    if !matches!(arch, Arch::WormholeB0) {
        return None;
    }
    let fw = firmware(risc);
    // The others' reset PCs are the chip's defaults (ttprof's map uses them too); BRISC's
    // firmware overrides them through the backend configuration before it releases them.
    let (reset_pc, boot) = match risc {
        Risc::Brisc => (BOOT_CODE_BASE, Some(Region::new(BOOT_CODE_BASE, 4))),
        _ => (crate::memory_map(arch, risc).reset_pc, None),
    };
    let local = arch.local_ram_size(risc);
    Some(MemoryMap {
        arch,
        risc,
        reset_pc,
        boot,
        code: fw,
        data: Region::new(local_init_scratch(risc), local),
        local_ram: Region::new(mmio::LOCAL_RAM_BASE, local),
        stack_top: mmio::LOCAL_RAM_BASE + local,
        // NCRISC's kernels run from its instruction RAM, which is not modelled yet.
        kernel: match risc {
            Risc::Ncrisc => None,
            _ => Some(kernel_config()),
        },
        local_init: Some(local_init_scratch(risc)),
    })
}

#[cfg(test)]
mod tests;
