//! Shared code of the example kernels: their arguments, circular buffers in L1 and tile
//! arithmetic. The reader and writer move tiles between DRAM and the CBs with `ttprof-dm`.
//!
//! Ordering: a core's stores reach L1 in program order, so a producer writes a page and
//! then bumps `pushed`; a consumer reads `pushed`, then the page. The compiler fences keep
//! the compiler from reordering those accesses; the counters are volatile.
#![no_std]

use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{compiler_fence, Ordering};
pub use example_abi::{arg, sem, CbDesc, Op, ARGS, CB_IN0, CB_IN1, CB_OUT, TILE_BYTES, TILE_DIM, TILE_ELEMS};
use ttprof_dm::InterleavedAddrGen;

#[inline(always)]
pub fn rd(addr: u32) -> u32 {
    unsafe { read_volatile(addr as *const u32) }
}

#[inline(always)]
pub fn wr(addr: u32, v: u32) {
    unsafe { write_volatile(addr as *mut u32, v) }
}

/// One zone site per token, in straight-line code: each zone around one volatile store of
/// its position (runtime-bench's code size per zone site: `sites_16` and `sites_48` differ
/// only in their number of sites).
#[macro_export]
macro_rules! zone_sites {
    ($($site:tt)*) => {{
        let mut _position = 0u32;
        $(
            {
                let _z = ttprof_rt::zone!("site");
                let _ = stringify!($site);
                $crate::wr($crate::ARGS + 0x80, _position);
            }
            _position += 1;
        )*
    }};
}

/// `n` steps of a counted loop: the measured work of the benchmark and test kernels.
#[inline(always)]
pub fn steps(n: u32) {
    for i in 0..n {
        // One volatile store per step keeps the loop from being optimised away.
        wr(ARGS + 0x80, i);
    }
}

/// The pipeline's stages, as [`SLOW_STAGE`] names them.
pub mod stage {
    pub const READER: u32 = 1;
    pub const UNPACK: u32 = 2;
    pub const MATH: u32 = 3;
    pub const PACK: u32 = 4;
    pub const WRITER: u32 = 5;
}

/// A test knob (words in the argument block, zero unless a launcher writes them): the
/// [`stage`] that does [`SLOW_STEPS`] extra loop steps per tile, making it the pipeline's
/// bottleneck (`ttprof run --l1 0x30040=3 --l1 0x30044=4000`: math-bound).
pub const SLOW_STAGE: u32 = ARGS + 0x40;
/// Extra loop steps per tile of the [`SLOW_STAGE`].
pub const SLOW_STEPS: u32 = ARGS + 0x44;
/// Nonzero: each of the [`SLOW_STAGE`]'s extra steps is a `slow-step` zone, so that stage
/// records far more than its 8 KiB ring holds (tests of the profiler's own cost: with
/// rare drains it stalls on its full ring, with no consumer it drops records).
pub const SLOW_ZONES: u32 = ARGS + 0x48;

/// Busy work of `stage` when it is the [`SLOW_STAGE`] (one load and a branch otherwise).
#[inline(always)]
pub fn slow_stage(stage: u32) {
    if rd(SLOW_STAGE) == stage {
        if rd(SLOW_ZONES) != 0 {
            for i in 0..rd(SLOW_STEPS) {
                let _z = ttprof_rt::zone!("slow-step");
                wr(ARGS + 0x80, i);
            }
        } else if rd(EXTRA_RECORDS) != 0 {
            // Instrumented more: an event every 500 steps.
            let n = rd(SLOW_STEPS);
            let mut done = 0;
            while done < n {
                let k = (n - done).min(500);
                steps(k);
                done += k;
                ttprof_rt::event!("slow-progress");
            }
        } else {
            steps(rd(SLOW_STEPS));
        }
    }
}

/// A test knob (zero unless a launcher writes it): extra accumulating `ELWADD`s math pushes
/// per tile of an Add, each reading the `Dst` rows the one before wrote, leaving the `Src`
/// banks valid (the tile's own `ELWADD`s overwrite those rows, so the result is the same). Many make math slow on the coprocessor, not on its RISC: the
/// RISC is held on its full instruction FIFO while the Matrix Unit works; with a slow
/// unpacker, the first waits for `SrcA` data (issue 40: held is not busy).
pub const EXTRA_ELWADDS: u32 = ARGS + 0x50;

/// A test knob (zero unless a launcher writes it): nonzero instruments the chain kernels
/// more, as the README advises a user to (issue 39): per tile an event, a datum and a signal
/// nobody waits on ([`instrument`]), and an event every 500 of the [`SLOW_STAGE`]'s steps.
pub const EXTRA_RECORDS: u32 = ARGS + 0x4C;

/// The per-tile records of [`EXTRA_RECORDS`] (one load and a branch without it).
#[inline(always)]
pub fn instrument(tile: u32) {
    if rd(EXTRA_RECORDS) != 0 {
        ttprof_rt::event!("tile-begin");
        ttprof_rt::data!("tile-index", tile as u64);
        ttprof_rt::signal!("tile-sem", sem_inc(7));
    }
}

/// The op and tile count of this launch.
pub fn args() -> (Op, u32) {
    let op = Op::from_u32(rd(ARGS + arg::OP)).unwrap_or(Op::Add);
    (op, rd(ARGS + arg::TILES).min(example_abi::MAX_TILES))
}

/// Argument word `offset` (see [`arg`]).
pub fn arg_word(offset: u32) -> u32 {
    rd(ARGS + offset)
}

/// This core's slice of the interleaved DRAM buffer whose bank address is in argument word
/// `base_arg`: the address generator (page = tile) and the first page of the slice.
pub fn dram_slice(base_arg: u32) -> (InterleavedAddrGen, u32) {
    let page_size = match arg_word(arg::PAGE_BYTES) {
        0 => TILE_BYTES,
        n => n,
    };
    (InterleavedAddrGen { base: arg_word(base_arg), page_size }, arg_word(arg::FIRST_PAGE))
}

/// One end of a circular buffer.
#[derive(Clone, Copy)]
pub struct Cb(pub CbDesc);

impl Cb {
    fn pushed(self) -> u32 {
        rd(self.0.control)
    }
    fn popped(self) -> u32 {
        rd(self.0.control + 4)
    }

    /// Producer: waits for a free page and returns its address.
    pub fn reserve_back(self) -> u32 {
        while self.pushed().wrapping_sub(self.popped()) >= self.0.pages {}
        compiler_fence(Ordering::Acquire);
        self.page(self.pushed())
    }

    /// The CB's index (its control block's place).
    pub const fn index(self) -> u32 {
        (self.0.control - example_abi::CB_CONTROL) / 16
    }

    /// Producer: publishes the reserved page (with the signal that ends the consumer's
    /// `cb_front` wait).
    pub fn push_back(self) {
        ttprof_rt::signal::cb_push(self.index());
        compiler_fence(Ordering::Release);
        wr(self.0.control, self.pushed().wrapping_add(1));
    }

    /// Consumer: waits for a full page and returns its address.
    pub fn wait_front(self) -> u32 {
        while self.pushed() == self.popped() {}
        compiler_fence(Ordering::Acquire);
        self.page(self.popped())
    }

    /// Consumer: frees the page it waited for (with the signal that ends the producer's
    /// `cb_back` wait).
    pub fn pop_front(self) {
        ttprof_rt::signal::cb_pop(self.index());
        compiler_fence(Ordering::Release);
        wr(self.0.control + 4, self.popped().wrapping_add(1));
    }

    fn page(self, count: u32) -> u32 {
        self.0.data + (count % self.0.pages) * self.0.page_bytes
    }
}

/// The Tensix coprocessor as a TRISC drives it: instruction pushes (the encoders are
/// `riscv_linker::tensix`'s), the semaphores, TTSync and the backend configuration.
pub mod tensix {
    use super::{rd, wr};
    use riscv_linker::mmio;
    pub use riscv_linker::tensix::*;

    /// Data format codes of the configuration (`Float32`, `Float16_b`).
    pub const FMT_BF16: u32 = 5;

    /// Pushes `word` to this TRISC's Tensix thread (the core stalls while its FIFO is full).
    #[inline(always)]
    pub fn push(word: u32) {
        wr(mmio::INSTRN_BUF_BASE, word);
    }

    /// Pushes `SEMPOST` of semaphore `n` (a constant: one of [`crate::sem`]), recording just
    /// before it the signal that ends a `tensix_sem(n)` wait on this tile, so the critical
    /// path crosses from the TRISC that waited to this one.
    #[inline(always)]
    pub fn post(n: u32) {
        ttprof_rt::signal::tensix_sem_post(n);
        push(sempost(1 << n));
    }

    /// Waits until semaphore `n` is not zero, then takes one (`SEMGET` from the RISC side:
    /// a store of an odd value).
    #[inline(always)]
    pub fn sem_take(n: u32) {
        let at = mmio::SEMAPHORE_BASE + 4 * n;
        while rd(at) == 0 {}
        wr(at, 1);
    }

    /// Waits until this TRISC's Tensix thread has nothing queued or executing (TTSync's
    /// `CoprocessorDoneCheck`).
    #[inline(always)]
    pub fn ttsync() {
        wr(mmio::TTSYNC_COPROCESSOR_DONE, 0);
        rd(mmio::TTSYNC_COPROCESSOR_DONE);
    }

    /// Backend `Config` word `index`, written from the RISC (not ordered with the
    /// thread's queued instructions).
    #[inline(always)]
    pub fn cfg(index: u32, value: u32) {
        wr(mmio::TENSIX_CFG_BASE + 4 * index, value);
    }

    /// `Config` word `index` = `value` (16 bits) through GPR 4, in the thread's instruction
    /// order, so it cannot overtake an earlier `UNPACR`/`PACR` still in the FIFO. GPR 4's
    /// high half must be zero (`setdmareg(0, 9)` once).
    #[inline(always)]
    pub fn wrcfg16(index: u32, value: u32) {
        push(setdmareg(value, 8));
        push(wrcfg(4, false, index));
    }

    /// An L1 address as the unpackers' `Base_address` and the packer's `L1_Dest_addr`
    /// take it: in 16-byte units, less one for the (absent) tile header.
    pub const fn l1_units(addr: u32) -> u32 {
        addr / 16 - 1
    }
}
