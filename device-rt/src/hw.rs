//! The few hardware operations the runtime needs, on a real core (RISC-V) or on the host
//! simulator ([`crate::sim`]) used by unit tests.
//!
//! On a core, the runtime owns two registers that compiled Rust code never touches:
//! `tp` holds the ring write pointer and `gp` the write limit (`tp < gp` means a short zone
//! fits). `_start` zeroes both before any Rust code runs.

#[cfg(not(target_arch = "riscv32"))]
pub(crate) use crate::sim::hw::*;
#[cfg(target_arch = "riscv32")]
pub(crate) use device::*;

#[cfg(target_arch = "riscv32")]
mod device {
    use core::arch::asm;
    use core::ptr::{read_volatile, write_volatile};
    use riscv_linker::{mmio, Risc};

    extern "C" {
        static __ttprof_risc_index: u8;
        static __ttprof_ring_block: u8;
        static __ttprof_ring_base: u8;
        static __ttprof_ring_capacity: u8;
        static __ttprof_arch_id: u8;
        static __ttprof_runtime_args: u8;
    }

    /// Low word of the wall clock (latches the high word for other readers too).
    #[inline(always)]
    pub fn clock_lo() -> u32 {
        unsafe { read_volatile(mmio::WALL_CLOCK_L as *const u32) }
    }

    /// The wall clock's low word, read as a compiler barrier: no memory access of the
    /// kernel moves across it, so a zone times exactly the code written inside it.
    #[inline(always)]
    pub fn zone_clock() -> u32 {
        let v: u32;
        unsafe {
            core::arch::asm!(
                "lw {v}, {off}({base})",
                v = out(reg) v,
                base = in(reg) mmio::WALL_CLOCK_L & !0xFFF,
                off = const mmio::WALL_CLOCK_L & 0xFFF,
                options(nostack, preserves_flags)
            )
        };
        v
    }

    /// The full 64-bit wall clock, safe against other cores reading it at the same time:
    /// live high, low, live high; retry if the high word moved.
    #[inline(never)]
    pub fn clock64() -> u64 {
        loop {
            let h1 = unsafe { read_volatile(mmio::WALL_CLOCK_H_LIVE as *const u32) };
            let lo = clock_lo();
            let h2 = unsafe { read_volatile(mmio::WALL_CLOCK_H_LIVE as *const u32) };
            if h1 == h2 {
                return (h1 as u64) << 32 | lo as u64;
            }
        }
    }

    #[inline(always)]
    pub fn tp() -> u32 {
        let v: u32;
        unsafe { asm!("mv {}, tp", out(reg) v, options(nomem, nostack, preserves_flags)) };
        v
    }

    #[inline(always)]
    pub fn set_tp(v: u32) {
        unsafe { asm!("mv tp, {}", in(reg) v, options(nomem, nostack, preserves_flags)) };
    }

    #[inline(always)]
    pub fn gp() -> u32 {
        let v: u32;
        unsafe { asm!("mv {}, gp", out(reg) v, options(nomem, nostack, preserves_flags)) };
        v
    }

    #[inline(always)]
    pub fn set_gp(v: u32) {
        unsafe { asm!("mv gp, {}", in(reg) v, options(nomem, nostack, preserves_flags)) };
    }

    /// The hot word in core-local RAM (`profiler::HOT_WORD`).
    #[inline(always)]
    pub fn hot() -> u32 {
        unsafe { read_volatile((hot_base() + HOT_OFFSET) as *const u32) }
    }

    #[inline(always)]
    pub fn set_hot(v: u32) {
        unsafe { write_volatile((hot_base() + HOT_OFFSET) as *mut u32, v) }
    }

    /// The hot word's address as a base register and an offset: `profiler::HOT_WORD` in
    /// ttprof's layout.
    #[cfg(not(all(feature = "tt-metal", target_arch = "riscv32")))]
    #[inline(always)]
    pub fn hot_base() -> u32 {
        riscv_linker::profiler::HOT_WORD & !0xFFF
    }
    #[cfg(not(all(feature = "tt-metal", target_arch = "riscv32")))]
    pub const HOT_OFFSET: u32 = riscv_linker::profiler::HOT_WORD & 0xFFF;

    /// Under tt-metal (feature `tt-metal`) the word is the kernel's `__ttprof_hot`
    /// (ttprof_tt_metal_entry.h): tt-metal's firmware keeps its own data at the start of
    /// local memory, where `profiler::HOT_WORD` is.
    #[cfg(all(feature = "tt-metal", target_arch = "riscv32"))]
    #[inline(always)]
    pub fn hot_base() -> u32 {
        extern "C" {
            static mut __ttprof_hot: u32;
        }
        #[allow(unused_unsafe)]
        unsafe {
            core::ptr::addr_of_mut!(__ttprof_hot) as u32
        }
    }
    #[cfg(all(feature = "tt-metal", target_arch = "riscv32"))]
    pub const HOT_OFFSET: u32 = 0;

    #[inline(always)]
    pub fn rd32(addr: u32) -> u32 {
        unsafe { read_volatile(addr as *const u32) }
    }

    #[inline(always)]
    pub fn wr32(addr: u32, v: u32) {
        unsafe { write_volatile(addr as *mut u32, v) }
    }

    #[inline(always)]
    pub fn wr16(addr: u32, v: u16) {
        unsafe { write_volatile(addr as *mut u16, v) }
    }

    /// Orders the ring's data stores before the store that publishes them. The cores retire
    /// stores to L1 in program order (Wormhole's `fence` is a no-op for that reason); the
    /// compiler must not reorder them either, and on Blackhole `fence` is real.
    #[inline(always)]
    pub fn publish_fence() {
        unsafe { asm!("fence w, w", options(nostack, preserves_flags)) };
    }

    /// Called in every iteration of a wait for the consumer.
    #[inline(always)]
    pub fn spin_hint() {}

    #[inline(always)]
    pub fn risc() -> Risc {
        let i = unsafe { &__ttprof_risc_index as *const u8 as usize };
        Risc::from_index(i).unwrap_or(Risc::Brisc)
    }

    #[inline(always)]
    pub fn arch_id() -> u32 {
        unsafe { &__ttprof_arch_id as *const u8 as u32 }
    }

    #[inline(always)]
    pub fn ring_block() -> u32 {
        unsafe { &__ttprof_ring_block as *const u8 as u32 }
    }

    #[inline(always)]
    pub fn ring_base() -> u32 {
        unsafe { &__ttprof_ring_base as *const u8 as u32 }
    }

    #[inline(always)]
    pub fn ring_capacity() -> u32 {
        unsafe { &__ttprof_ring_capacity as *const u8 as u32 }
    }

    /// L1 address of this core's runtime arguments (`riscv_linker::runtime_args`).
    #[inline(always)]
    pub fn runtime_args() -> u32 {
        unsafe { &__ttprof_runtime_args as *const u8 as u32 }
    }

    /// This core's index (`Risc` order), a link-time constant: the symbol's address.
    #[inline(always)]
    #[cfg_attr(not(feature = "timestamper"), allow(dead_code))]
    pub fn risc_index() -> u32 {
        unsafe { &__ttprof_risc_index as *const u8 as u32 }
    }

    /// A site's id word is its address in the INFO section.
    #[inline(always)]
    pub fn site_word(site: &'static u8) -> u32 {
        site as *const u8 as u32
    }
}
