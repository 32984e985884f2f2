//! Shared code of the example kernels: their arguments, circular buffers in L1 and tile
//! arithmetic. The reader and writer move tiles between DRAM and the CBs with `ttprof-dm`.
//!
//! Ordering: a core's stores reach L1 in program order, so a producer writes a page and
//! then bumps `pushed`; a consumer reads `pushed`, then the page. The compiler fences keep
//! the compiler from reordering those accesses; the counters are volatile.
#![no_std]

use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::{compiler_fence, Ordering};
pub use example_abi::{arg, CbDesc, Op, ARGS, CB_DST, CB_IN0, CB_IN1, CB_OUT, CB_SRC, TILE_BYTES, TILE_DIM, TILE_ELEMS};
use ttprof_dm::InterleavedAddrGen;

#[inline(always)]
pub fn rd(addr: u32) -> u32 {
    unsafe { read_volatile(addr as *const u32) }
}

#[inline(always)]
pub fn wr(addr: u32, v: u32) {
    unsafe { write_volatile(addr as *mut u32, v) }
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
        } else {
            steps(rd(SLOW_STEPS));
        }
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

fn slice(addr: u32) -> &'static [u32] {
    unsafe { core::slice::from_raw_parts(addr as *const u32, TILE_ELEMS) }
}

#[allow(clippy::mut_from_ref)]
fn slice_mut(addr: u32) -> &'static mut [u32] {
    unsafe { core::slice::from_raw_parts_mut(addr as *mut u32, TILE_ELEMS) }
}

/// Copies one tile within L1 (the stand-in for an unpack/pack step).
pub fn copy_tile(from: u32, to: u32) {
    slice_mut(to).copy_from_slice(slice(from));
}

/// Rows of a tile, in blocks of `rows`: `f(first_row)` for each block.
pub fn row_blocks(rows: usize, mut f: impl FnMut(usize)) {
    let mut r = 0;
    while r < TILE_DIM {
        f(r);
        r += rows;
    }
}

/// Computes rows `first..first + rows` of `op(a, b)` into `out`.
pub fn compute_rows(op: Op, a: u32, b: u32, out: u32, first: usize, rows: usize) {
    let (a, b, out) = (slice(a), slice(b), slice_mut(out));
    let span = first * TILE_DIM..(first + rows) * TILE_DIM;
    match op {
        Op::Add => out[span.clone()].iter_mut().zip(&a[span.clone()]).zip(&b[span]).for_each(|((o, x), y)| *o = x.wrapping_add(*y)),
        Op::Mul => out[span.clone()].iter_mut().zip(&a[span.clone()]).zip(&b[span]).for_each(|((o, x), y)| *o = x.wrapping_mul(*y)),
        Op::Relu => out[span.clone()].iter_mut().zip(&a[span]).for_each(|(o, x)| *o = (*x as i32).max(0) as u32),
        Op::Matmul => {
            for r in first..first + rows {
                for c in 0..TILE_DIM {
                    let mut acc = 0u32;
                    for k in 0..TILE_DIM {
                        acc = acc.wrapping_add(a[r * TILE_DIM + k].wrapping_mul(b[k * TILE_DIM + c]));
                    }
                    out[r * TILE_DIM + c] = acc;
                }
            }
        }
    }
}
