//! The tile's address map as its RISC-V cores see it: which window lies at an address, its
//! name for messages, and its load-latency class for the pipeline. Static data of the map,
//! below everything that uses it (the bus, the devices, errors); what an access does is the
//! devices' ([`crate::devices`]).

use riscv_linker::{mmio, Arch, Risc};

/// The load-latency class of an address, as the baby RISC-V pipeline page groups regions.
// For the pipeline model, which is not there yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LoadRegion {
    /// L1 (below the larger arch's L1 size): at least 8 cycles.
    L1,
    /// Core-local data RAM (`LOCAL_RAM_BASE` + the largest local RAM): 2 cycles.
    Local,
    /// Mailboxes, PCBufs, TTSync, Tensix semaphores: at least 3 cycles (more while waiting).
    Fifo,
    /// Tensix GPRs and backend configuration: at least 4 cycles.
    Tensix,
    /// TDMA-RISC, tile control/debug/status, PIC, NoC 0/1 registers, NoC overlay: at least 7.
    Mmio,
    /// Nothing a load can reach: gaps of the map, the NCRISC instruction RAM (not reachable
    /// by loads and stores), and the write-only windows (Tensix instruction pushes, MOP
    /// expander configuration), which the latency table does not list.
    Unmapped,
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

const fn max(a: u32, b: u32) -> u32 {
    if a > b {
        a
    } else {
        b
    }
}

/// L1 size of the larger arch: an address below it is L1 on some arch (whether this tile's
/// L1 reaches it is the access path's check).
const L1_MAX: u32 = max(Arch::WormholeB0.l1_size(), Arch::Blackhole.l1_size());
/// The largest core-local RAM (Blackhole BRISC/NCRISC, 8 KiB).
const LOCAL_MAX: u32 = max(
    max(
        Arch::WormholeB0.local_ram_size(Risc::Brisc),
        Arch::WormholeB0.local_ram_size(Risc::Trisc0),
    ),
    max(
        Arch::Blackhole.local_ram_size(Risc::Brisc),
        Arch::Blackhole.local_ram_size(Risc::Trisc0),
    ),
);

/// Classifies `addr` for the pipeline model, per the memory map and load-latency tables.
pub(crate) fn load_region(addr: u32) -> LoadRegion {
    if addr < L1_MAX {
        LoadRegion::L1
    } else if addr.wrapping_sub(mmio::LOCAL_RAM_BASE) < LOCAL_MAX {
        LoadRegion::Local
    } else {
        span(addr).map_or(LoadRegion::Unmapped, |s| s.load)
    }
}

/// The timing region of `addr` for a core whose local RAM holds `local_len` bytes.
#[inline(always)]
pub(crate) fn timing_region(addr: u32, l1_size: u32, local_len: u32) -> Region {
    if addr < l1_size {
        return Region::L1;
    }
    if addr.wrapping_sub(mmio::LOCAL_RAM_BASE) < local_len {
        return Region::Local;
    }
    // The device map's classification (README.md's memory map); an unmapped access
    // faults before its timing matters.
    match load_region(addr) {
        LoadRegion::Fifo => Region::Fifo,
        LoadRegion::Tensix => Region::Tensix,
        _ => Region::Mmio,
    }
}

pub(crate) struct Span {
    pub(crate) base: u32,
    pub(crate) size: u32,
    pub(crate) name: &'static str,
    pub(crate) load: LoadRegion,
}

const fn sp(base: u32, size: u32, name: &'static str, load: LoadRegion) -> Span {
    Span {
        base,
        size,
        name,
        load,
    }
}

use LoadRegion::{Fifo, Mmio, Tensix, Unmapped as NoLoad};

const SPANS: [Span; 16] = [
    sp(
        mmio::TDMA_REGS_BASE,
        mmio::TDMA_REGS_SIZE,
        "RISCV_TDMA_REGS (TDMA-RISC)",
        Mmio,
    ),
    sp(
        mmio::DEBUG_REGS_BASE,
        mmio::DEBUG_REGS_SIZE,
        "RISCV_DEBUG_REGS (tile control/debug/status)",
        Mmio,
    ),
    sp(
        mmio::PIC_REGS_BASE,
        mmio::PIC_REGS_SIZE,
        "PIC registers",
        Mmio,
    ),
    sp(mmio::NOC0_REGS_BASE, mmio::NOC_REGS_SIZE, "NOC0_REGS", Mmio),
    sp(mmio::NOC1_REGS_BASE, mmio::NOC_REGS_SIZE, "NOC1_REGS", Mmio),
    sp(
        mmio::NOC_OVERLAY_BASE,
        mmio::NOC_OVERLAY_SIZE,
        "NOC_OVERLAY (NoC overlay)",
        Mmio,
    ),
    sp(
        mmio::MOP_CFG_BASE,
        mmio::MOP_CFG_SIZE,
        "TENSIX_MOP_CFG_BASE (MOP expander configuration)",
        NoLoad,
    ),
    sp(
        mmio::REGFILE_BASE,
        mmio::REGFILE_SIZE,
        "REGFILE_BASE (Tensix GPRs)",
        Tensix,
    ),
    sp(
        mmio::INSTRN_BUF_BASE,
        mmio::INSTRN_BUF_SIZE,
        "INSTRN_BUF_BASE (push Tensix instruction)",
        NoLoad,
    ),
    sp(
        mmio::INSTRN1_BUF_BASE,
        mmio::INSTRN_BUF_SIZE,
        "INSTRN1_BUF_BASE (BRISC's push to Tensix thread T1)",
        NoLoad,
    ),
    sp(
        mmio::INSTRN2_BUF_BASE,
        mmio::INSTRN_BUF_SIZE,
        "INSTRN2_BUF_BASE (BRISC's push to Tensix thread T2)",
        NoLoad,
    ),
    sp(
        mmio::PC_BUF_BASE,
        mmio::PC_BUF_SIZE,
        "PC_BUF_BASE (PCBufs, TTSync, Tensix semaphores)",
        Fifo,
    ),
    sp(
        mmio::PC1_BUF_BASE,
        mmio::PC_BUF_SIZE,
        "PC1_BUF_BASE (PCBuf from BRISC to TRISC1)",
        Fifo,
    ),
    sp(
        mmio::PC2_BUF_BASE,
        mmio::PC_BUF_SIZE,
        "PC2_BUF_BASE (PCBuf from BRISC to TRISC2)",
        Fifo,
    ),
    sp(
        mmio::MAILBOX_BASE,
        mmio::MAILBOX_SIZE,
        "TENSIX_MAILBOX0..3_BASE (mailboxes)",
        Fifo,
    ),
    sp(
        mmio::TENSIX_CFG_BASE,
        mmio::TENSIX_CFG_SIZE,
        "TENSIX_CFG_BASE (Tensix backend configuration)",
        Tensix,
    ),
];

pub(crate) fn span(addr: u32) -> Option<&'static Span> {
    SPANS.iter().find(|s| addr.wrapping_sub(s.base) < s.size)
}

/// Whether `addr` lies in one of the windows above local RAM (whether the accessing core
/// has it is the devices' answer).
pub(crate) fn in_map(addr: u32) -> bool {
    span(addr).is_some()
}

/// The name of the region holding `addr`, for messages.
pub(crate) fn region_name(addr: u32) -> &'static str {
    match span(addr) {
        Some(s) => s.name,
        None if addr < L1_MAX => "L1",
        None if addr.wrapping_sub(mmio::LOCAL_RAM_BASE) < LOCAL_MAX => "local RAM",
        None => "no region",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_regions_follow_the_latency_table() {
        use LoadRegion as R;
        let cases = [
            (0, R::L1),
            (Arch::WormholeB0.l1_size() - 4, R::L1),
            (Arch::Blackhole.l1_size() - 4, R::L1),
            (Arch::Blackhole.l1_size(), R::Unmapped),
            (mmio::LOCAL_RAM_BASE, R::Local),
            (mmio::LOCAL_RAM_BASE + 0x1FFC, R::Local),
            (mmio::LOCAL_RAM_BASE + 0x2000, R::Unmapped),
            (mmio::TDMA_REGS_BASE, R::Mmio),
            (mmio::SOFT_RESET_0, R::Mmio),
            (mmio::PIC_REGS_BASE, R::Mmio),
            (mmio::NOC0_REGS_BASE, R::Mmio),
            (mmio::NOC1_REGS_BASE + 0xFFFC, R::Mmio),
            (mmio::NOC_OVERLAY_BASE + 0x2_0000, R::Mmio),
            (mmio::MOP_CFG_BASE, R::Unmapped),
            (0xFFC0_0000, R::Unmapped),
            (mmio::REGFILE_BASE, R::Tensix),
            (mmio::INSTRN_BUF_BASE, R::Unmapped),
            (mmio::PC_BUF_BASE, R::Fifo),
            (mmio::TTSYNC_COPROCESSOR_DONE, R::Fifo),
            (mmio::SEMAPHORE_BASE + 4, R::Fifo),
            (mmio::PC2_BUF_BASE, R::Fifo),
            (mmio::mailbox(3) + 4, R::Fifo),
            (mmio::MAILBOX_BASE + mmio::MAILBOX_SIZE, R::Unmapped),
            (mmio::TENSIX_CFG_BASE + 0x100, R::Tensix),
            (0xFFFF_FFFC, R::Unmapped),
        ];
        for (addr, want) in cases {
            assert_eq!(load_region(addr), want, "{addr:#010x}");
        }
    }

    #[test]
    fn regions_by_address() {
        assert_eq!(timing_region(0x100, 0x100000, 4096), Region::L1);
        assert_eq!(timing_region(0xFFB0_0010, 0x100000, 4096), Region::Local);
        assert_eq!(timing_region(0xFFB1_21F0, 0x100000, 4096), Region::Mmio);
        assert_eq!(timing_region(0xFFEC_0000, 0x100000, 4096), Region::Fifo);
        assert_eq!(timing_region(0xFFE0_0000, 0x100000, 4096), Region::Tensix);
        assert_eq!(
            timing_region(0xFFE8_0020, 0x100000, 4096),
            Region::Fifo,
            "semaphores"
        );
        assert_eq!(
            timing_region(0xFFB2_0000, 0x100000, 4096),
            Region::Mmio,
            "NoC 0"
        );
    }
}
