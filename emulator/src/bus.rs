//! What a core sees of its tile: the one interface the interpreter ([`crate::isa`]) and the
//! JIT know. A core loads and stores by width through a [`TileBus`]; the bus says which
//! timing region an address is in (for the pipeline's latency), whether a read of it has
//! side effects or may change with time (for the deadlock detector), and lets the debug
//! daisychain watch the instructions it samples. The chip's tile memory implements it
//! ([`crate::chip::memory::TileMem`]); the interpreter's unit tests use a flat RAM.
//!
//! L1 itself is a raw view ([`L1`]) every layer above may hold: the JIT's generated code
//! reads and writes it through its base pointer, the NoC and the coprocessor move data in
//! it. Its accesses are atomic operations on the shared mapping (loads `Acquire`, stores
//! `Release`), so a core's stores reach another observer of the mapping (a thread, or a
//! second process that mapped the same file) in program order; on x86-64 they are plain
//! `mov`s. The five cores of a tile run on one host thread in a fixed interleaving, so the
//! order across cores is the simulated one.

use crate::config::Timing;
use crate::error::FaultKind;
use crate::map::Region;
use riscv_linker::mmio::LOCAL_RAM_BASE;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};

/// Loads `N` bytes at `addr` from a core's local RAM `local` (at `LOCAL_RAM_BASE`), if it
/// holds them.
#[inline(always)]
pub(crate) fn local_load<const N: u32>(local: &[u8], addr: u32) -> Option<u32> {
    let off = addr.wrapping_sub(LOCAL_RAM_BASE) as usize;
    (off < local.len()).then(|| {
        let mut b = [0u8; 4];
        b[..N as usize].copy_from_slice(&local[off..off + N as usize]);
        u32::from_le_bytes(b)
    })
}

/// Stores the low `N` bytes of `v` at `addr` in a core's local RAM `local`, if it holds them
/// (`false`: not local RAM).
#[inline(always)]
pub(crate) fn local_store<const N: u32>(local: &mut [u8], addr: u32, v: u32) -> bool {
    let off = addr.wrapping_sub(LOCAL_RAM_BASE) as usize;
    let here = off < local.len();
    if here {
        local[off..off + N as usize].copy_from_slice(&v.to_le_bytes()[..N as usize]);
    }
    here
}

/// The memory system of one tile as one of its cores sees it. Every access is naturally
/// aligned by the time it reaches the bus ([`TileBus::aligned`]); `local` is the accessing
/// core's private RAM and `time` its clock at the access's issue cycle.
pub(crate) trait TileBus {
    /// The tile's L1.
    fn l1(&self) -> &L1;
    /// The pipeline's cost table.
    fn timing(&self) -> &Timing;
    /// The address an access of `size` bytes at `addr` reaches: itself when aligned,
    /// rounded down or a fault otherwise.
    fn aligned(&self, addr: u32, size: u32, write: bool) -> Result<u32, FaultKind>;
    /// Loads `N` bytes (1, 2 or 4) at `addr`, zero-extended. An access that has to wait
    /// (an empty FIFO) returns [`FaultKind::Blocked`] with nothing done.
    fn load<const N: u32>(&mut self, local: &[u8], addr: u32, time: u64) -> Result<u32, FaultKind>;
    /// Stores the low `N` bytes of `v` at `addr` (a full FIFO: [`FaultKind::Blocked`]).
    fn store<const N: u32>(
        &mut self,
        local: &mut [u8],
        addr: u32,
        v: u32,
        time: u64,
    ) -> Result<(), FaultKind>;
    /// The timing region of `addr` for a core whose local RAM holds `local_len` bytes.
    fn region(&self, addr: u32, local_len: u32) -> Region;
    /// Whether a load of `addr` is *timeless*: no side effect, and what it returns changes
    /// only through a store, a NoC delivery or the coprocessor's work, never with time.
    fn read_is_timeless(&self, addr: u32) -> bool;
    /// The wall clock at core time `time` (the time CSRs read it).
    fn wall(&self, time: u64) -> u64;
    /// Whether the last store asked the tile to apply a soft reset before going on.
    fn reset_pending(&self) -> bool;
    /// Whether the debug daisychain samples this core now (it then runs instruction by
    /// instruction and reports each through [`TileBus::sample`]).
    fn sampled(&mut self) -> bool;
    /// The sampled core spent `from..to` on the instruction at `pc` (`marks`: its pipeline
    /// steps): takes the samples due.
    fn sample(&mut self, pc: u32, from: u64, to: u64, marks: &Marks) -> Result<(), FaultKind>;
}

/// Issue cycles the interpreter notes while it times one instruction (only in lines mode).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Marks {
    /// After the fetch (instruction-cache miss included).
    pub fetched: u64,
    /// After the operand waits.
    pub operands: u64,
    /// After the store-queue / load-slot waits (the issue cycle).
    pub issued: u64,
    /// Extra cycles of a mispredicted branch (0 otherwise).
    pub mispredict: u64,
    /// A load's or store's (address, write), for the debug daisychain's samples.
    pub access: Option<(u32, bool)>,
}

/// A raw view of one tile's L1 inside the shared mapping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct L1 {
    base: *mut u8,
    size: u32,
}

// SAFETY: L1 only performs atomic accesses through `base`, and the mapping it points into
// outlives every `L1` (both are owned by the `Device`, which drops tiles first).
unsafe impl Send for L1 {}
unsafe impl Sync for L1 {}

impl L1 {
    /// # Safety
    /// `base..base + size` must stay mapped and writable for the life of this value, `base`
    /// must be 4-byte aligned and `size` a multiple of 4.
    pub unsafe fn new(base: *mut u8, size: u32) -> L1 {
        L1 { base, size }
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    /// Host address of L1 byte 0 (for generated code).
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Reads `N` bytes (1, 2 or 4) at `addr`, zero-extended. `addr` must be `N`-aligned and
    /// `addr + N <= size`.
    #[inline(always)]
    pub fn load<const N: u32>(&self, addr: u32) -> u32 {
        debug_assert!(addr.is_multiple_of(N) && addr + N <= self.size);
        // SAFETY: in bounds and aligned (checked by callers, asserted above).
        unsafe {
            let p = self.base.add(addr as usize);
            match N {
                1 => AtomicU8::from_ptr(p).load(Ordering::Acquire) as u32,
                2 => {
                    u16::from_le(AtomicU16::from_ptr(p as *mut u16).load(Ordering::Acquire)) as u32
                }
                _ => u32::from_le(AtomicU32::from_ptr(p as *mut u32).load(Ordering::Acquire)),
            }
        }
    }

    /// Copies `out.len()` bytes at `addr` into `out` (the range must lie inside L1).
    pub fn read_into(&self, addr: u32, out: &mut [u8]) {
        debug_assert!(addr as u64 + out.len() as u64 <= self.size as u64);
        let mut i = 0usize;
        while i < out.len() {
            let a = addr + i as u32;
            if a.is_multiple_of(4) && out.len() - i >= 4 {
                out[i..i + 4].copy_from_slice(&self.load::<4>(a).to_le_bytes());
                i += 4;
            } else {
                out[i] = self.load::<1>(a) as u8;
                i += 1;
            }
        }
    }

    /// Writes the 16 bytes of `words` (little-endian words) at the 16-byte aligned `addr`
    /// as one unit, for the debug timestamper ([`crate::devices::timestamper`]): on x86-64 a single
    /// aligned SSE store (`movdqa`), which processors with AVX carry out atomically (Intel
    /// SDM vol. 3A, "Guaranteed Atomic Operations"), so no observer of the mapping sees
    /// part of a unit; elsewhere (or were the mapping not 16-byte aligned) four release
    /// stores in address order. Either way it is ordered after every earlier store of the
    /// tile.
    pub fn store16(&self, addr: u32, words: [u32; 4]) {
        assert!(addr.is_multiple_of(16) && addr as u64 + 16 <= self.size as u64);
        // SAFETY: in bounds and aligned (asserted).
        let p = unsafe { self.base.add(addr as usize) };
        #[cfg(target_arch = "x86_64")]
        if (p as usize).is_multiple_of(16) {
            use std::arch::x86_64::{__m128i, _mm_loadu_si128};
            let mut bytes = [0u8; 16];
            for (k, w) in words.iter().enumerate() {
                bytes[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
            }
            // SAFETY: SSE2 is part of x86-64; `p` is 16-byte aligned and the 16 bytes are
            // in L1 (asserted). The asm has no `nomem`, so the compiler keeps it in order
            // with the tile's other memory accesses; x86 keeps stores in order.
            unsafe {
                let v = _mm_loadu_si128(bytes.as_ptr() as *const __m128i);
                std::arch::asm!(
                    "movdqa xmmword ptr [{p}], {v}",
                    p = in(reg) p,
                    v = in(xmm_reg) v,
                    options(nostack, preserves_flags)
                );
            }
            return;
        }
        for (k, &w) in words.iter().enumerate() {
            self.store::<4>(addr + 4 * k as u32, w);
        }
    }

    /// Writes the low `N` bytes of `v` at `addr` (same requirements as [`L1::load`]).
    #[inline(always)]
    pub fn store<const N: u32>(&self, addr: u32, v: u32) {
        debug_assert!(addr.is_multiple_of(N) && addr + N <= self.size);
        // SAFETY: in bounds and aligned.
        unsafe {
            let p = self.base.add(addr as usize);
            match N {
                1 => AtomicU8::from_ptr(p).store(v as u8, Ordering::Release),
                2 => {
                    AtomicU16::from_ptr(p as *mut u16).store((v as u16).to_le(), Ordering::Release)
                }
                _ => AtomicU32::from_ptr(p as *mut u32).store(v.to_le(), Ordering::Release),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::L1;

    #[test]
    fn store16_writes_four_little_endian_words_aligned_or_not() {
        let mut mem = vec![0u128; 8];
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: `mem` (128 bytes, 16-byte aligned) outlives both views.
        let (aligned, unaligned) = unsafe { (L1::new(base, 64), L1::new(base.add(68), 48)) };
        aligned.store16(16, [0x0302_0100, 0x0706_0504, 0x0B0A_0908, 0x0F0E_0D0C]);
        unaligned.store16(32, [1, 2, 3, 4]); // host address not 16-byte aligned: word stores
        let mut bytes = [0u8; 16];
        aligned.read_into(16, &mut bytes);
        assert_eq!(bytes, std::array::from_fn::<u8, 16, _>(|i| i as u8));
        assert_eq!(
            (0..4)
                .map(|k| unaligned.load::<4>(32 + 4 * k))
                .collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        assert_eq!(aligned.load::<4>(12), 0);
        assert_eq!(aligned.load::<4>(32), 0);
        drop(mem);
    }
}
