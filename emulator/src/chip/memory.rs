//! What one core's loads and stores reach, and what they cost.
//!
//! A core sees, in this order of lookup:
//!
//! 1. L1 at `0..l1_size`, shared by the tile's five cores and living in the device-memory
//!    image file. Loads may read anything; stores into any core's code region (or the
//!    BRISC boot word) fault, which is also what keeps the interpreter's pre-decoded code
//!    valid.
//! 2. The core's private local RAM at `LOCAL_RAM_BASE`.
//! 3. The MMIO windows ([`crate::devices`]); with the NoC model on, the two NIU windows are
//!    the tile's NIUs ([`crate::noc::niu`]): reading one first applies every NoC event due
//!    by the reading core's clock, writing `CMD_CTRL` issues a request. The other windows
//!    are the tile's devices ([`crate::devices`]), as the accessing core sees them; a store
//!    to the debug timestamper ([`crate::debug::timestamper`]) may write a 16-byte unit into L1.
//!
//! Anything else faults. A device access that has to wait (an empty mailbox, a full
//! PCBuf, ...) returns [`FaultKind::Blocked`] with nothing done. All accesses are naturally
//! aligned by the time they reach memory (misaligned ones fault or are rounded down, per
//! [`Misaligned`]).
//!
//! ## Visibility to another process
//!
//! L1 accesses are atomic operations on the shared mapping: loads are `Acquire`, stores
//! `Release`. A core's stores therefore become visible to any other observer of the
//! mapping (another thread or a second process that mapped the same file) in the order the
//! core executed them, and an observer that reads a published word with an acquire load
//! sees every byte stored before it. On x86-64 these are plain `mov`s (TSO already keeps
//! stores in order); the atomics also stop the compiler from merging or reordering them.
//! The five cores of a tile run on one host thread in a fixed interleaving, so the order
//! across cores is the simulated one.

use crate::config::Misaligned;
use crate::debug::timestamper::write_unit;
use crate::devices::{Access, Devices, Noc};
use crate::error::FaultKind;
use crate::isa::pipeline::Timing;
use crate::noc::niu::Niu;
use riscv_linker::{mmio::LOCAL_RAM_BASE, Region, Risc};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};

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
    /// as one unit, for the debug timestamper ([`crate::debug::timestamper`]): on x86-64 a single
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

/// The memory system of one tile, as its cores see it.
#[derive(Debug)]
pub(crate) struct TileMem {
    pub l1: L1,
    /// Every code region of the tile (and the boot word), with its owner.
    pub code: Vec<(Region, Risc)>,
    /// No code lies at or above this address.
    pub code_end: u32,
    pub regs: Devices,
    pub timing: Timing,
    pub misaligned: Misaligned,
    /// The tile's NIUs (`None`: the NoC model is off and the windows are plain storage).
    pub niu: Option<Box<Niu>>,
    /// The core making the accesses (set by [`crate::isa::hart::Hart::run`]): devices map
    /// differently per core ([`crate::devices`]).
    pub risc: Risc,
}

/// Result of a load: the zero-extended value.
pub(crate) type Loaded = Result<u32, FaultKind>;

impl TileMem {
    /// The address an access of `size` bytes at `addr` reaches: itself when aligned,
    /// rounded down or a fault otherwise (per [`Misaligned`]).
    #[inline(always)]
    pub fn aligned(&self, addr: u32, size: u32, write: bool) -> Result<u32, FaultKind> {
        if addr & (size - 1) == 0 {
            return Ok(addr);
        }
        match self.misaligned {
            Misaligned::Strict => Err(FaultKind::Misaligned { addr, size, write }),
            Misaligned::RoundDown => Ok(addr & !(size - 1)),
        }
    }

    /// Loads `N` bytes at the aligned `addr` for a core with local RAM `local` whose clock
    /// reads `time`.
    #[inline(always)]
    pub fn load<const N: u32>(&mut self, local: &[u8], addr: u32, time: u64) -> Loaded {
        if addr < self.l1.size() {
            return Ok(self.l1.load::<N>(addr));
        }
        let off = addr.wrapping_sub(LOCAL_RAM_BASE) as usize;
        if off < local.len() {
            let mut b = [0u8; 4];
            b[..N as usize].copy_from_slice(&local[off..off + N as usize]);
            return Ok(u32::from_le_bytes(b));
        }
        self.load_mmio::<N>(addr, time)
    }

    #[cold]
    fn load_mmio<const N: u32>(&mut self, addr: u32, time: u64) -> Loaded {
        if !crate::map::in_map(addr) {
            return Err(FaultKind::Access {
                addr,
                size: N,
                write: false,
            });
        }
        let word = self.read_reg(addr, N, time, self.risc)?;
        let shift = (addr & 3) * 8;
        let mask = if N == 4 {
            u32::MAX
        } else {
            (1u32 << (N * 8)) - 1
        };
        Ok((word >> shift) & mask)
    }

    /// Stores the low `N` bytes of `v` at the aligned `addr`.
    #[inline(always)]
    pub fn store<const N: u32>(
        &mut self,
        local: &mut [u8],
        addr: u32,
        v: u32,
        time: u64,
    ) -> Result<(), FaultKind> {
        if addr < self.l1.size() {
            if addr < self.code_end {
                self.check_not_code(addr)?;
            }
            self.l1.store::<N>(addr, v);
            return Ok(());
        }
        let off = addr.wrapping_sub(LOCAL_RAM_BASE) as usize;
        if off < local.len() {
            local[off..off + N as usize].copy_from_slice(&v.to_le_bytes()[..N as usize]);
            return Ok(());
        }
        self.store_mmio::<N>(addr, v, time)
    }

    #[cold]
    fn check_not_code(&self, addr: u32) -> Result<(), FaultKind> {
        match self.code.iter().find(|(r, _)| r.contains(addr, 1)) {
            Some(&(_, owner)) => Err(FaultKind::StoreIntoCode { addr, owner }),
            None => Ok(()),
        }
    }

    #[cold]
    fn store_mmio<const N: u32>(&mut self, addr: u32, v: u32, time: u64) -> Result<(), FaultKind> {
        if !crate::map::in_map(addr) {
            return Err(FaultKind::Access {
                addr,
                size: N,
                write: true,
            });
        }
        let risc = self.risc;
        let a = Access {
            addr,
            size: N,
            risc,
            time,
        };
        let word = if N == 4 {
            v
        } else {
            // Narrow stores merge into the register's current contents; a device gets only
            // the stored bytes, in their lanes (`TileDevice::merges`).
            let shift = (addr & 3) * 8;
            let mask = ((1u32 << (N * 8)) - 1) << shift;
            let old = if self.regs.merges(&a)? {
                self.read_reg(addr, N, time, risc)?
            } else {
                0
            };
            (old & !mask) | ((v << shift) & mask)
        };
        let (l1, code, code_end) = (&self.l1, &self.code, self.code_end);
        let noc = self.niu.as_deref_mut().map(|niu| Noc { niu, l1, code_end });
        self.regs
            .write(&a, word, noc, &mut |u, d| write_unit(l1, code, u, d))
    }

    /// A read of the register word holding `addr` (a `size`-byte load, for messages) by
    /// core `risc`, whose clock reads `time`.
    fn read_reg(&mut self, addr: u32, size: u32, time: u64, risc: Risc) -> Result<u32, FaultKind> {
        let a = Access {
            addr,
            size,
            risc,
            time,
        };
        let (l1, code, code_end) = (&self.l1, &self.code, self.code_end);
        let noc = self.niu.as_deref_mut().map(|niu| Noc { niu, l1, code_end });
        self.regs
            .read(&a, noc, &mut |u, d| write_unit(l1, code, u, d))
    }

    /// Applies the NoC events due at or before `time` (a window start).
    pub fn apply_noc(&mut self, time: u64) {
        let code_end = self.code_end;
        if let Some(n) = self.niu.as_mut() {
            n.apply_until(&self.l1, time, code_end);
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
