//! What the example kernels and the host programs that launch them agree on: where the
//! arguments, circular buffers and tensors live in a tile's L1, and what the ops compute.
//!
//! Every op streams `tiles` 32x32 tiles of BF16 through a five-stage pipeline on one
//! Tensix tile, one stage per core, linked by single-producer single-consumer circular
//! buffers (CBs) in L1:
//!
//! ```text
//! DRAM in0/in1 --BRISC reader--> CB_IN0/CB_IN1 --TRISC0 unpack--> SrcA/SrcB --TRISC1 math-->
//!   Dst --TRISC2 pack--> CB_OUT --NCRISC writer--> DRAM out
//! ```
//!
//! The TRISCs drive the Tensix coprocessor, as a tt-metal compute kernel does, and hand
//! tiles over with its semaphores ([`sem`]). The tensors are tt-metal's interleaved DRAM
//! buffers, one page per tile ([`TILE_BYTES`]), page `p` in bank `p % banks`; each core
//! streams its own slice of pages, `first_page..first_page + tiles`, reading on NoC0 and
//! writing on NoC1. A CB's control block is two free-running page counts with one writer
//! each, `pushed` (producer) and `popped` (consumer), zeroed by the launcher before every
//! launch.
#![no_std]
#![warn(missing_docs)]

use riscv_linker::USER_L1_BASE;

pub mod bf16;
pub mod tf32;

/// Elements per tile side.
pub const TILE_DIM: usize = 32;
/// Elements per tile.
pub const TILE_ELEMS: usize = TILE_DIM * TILE_DIM;
/// Bytes per tile (BF16 datums).
pub const TILE_BYTES: u32 = (TILE_ELEMS * 2) as u32;
/// Most tiles one op may stream through a core.
pub const MAX_TILES: u32 = 16;

/// The argument block (words), written by the launcher before each launch.
pub const ARGS: u32 = USER_L1_BASE;
/// Byte offsets of the words of the argument block at [`crate::ARGS`].
pub mod arg {
    /// [`crate::Op`] as a number.
    pub const OP: u32 = 0;
    /// Tiles to process.
    pub const TILES: u32 = 4;
    /// The first page (tile index) of this core's slice of every tensor.
    pub const FIRST_PAGE: u32 = 8;
    /// Page size of the DRAM buffers in bytes: one tile per page, so at least
    /// [`crate::TILE_BYTES`] (the demo uses exactly that); 0 means [`crate::TILE_BYTES`]. A
    /// launcher that writes only `OP` and `TILES` (e.g. `ttprof run --l1`) gets every core
    /// reading pages `0..tiles` of buffers at bank address 0.
    pub const PAGE_BYTES: u32 = 12;
    /// Bank address of the interleaved input buffer `in0` (e.g. [`crate::DRAM_IN0`]).
    pub const IN0: u32 = 16;
    /// Bank address of `in1` (read by binary ops only).
    pub const IN1: u32 = 20;
    /// Bank address of the interleaved output buffer.
    pub const OUT: u32 = 24;
}

/// The ops the kernels implement, on tiles of BF16 on the Tensix coprocessor ([`bf16`] is
/// their host reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    /// `out = in0 + in1` (`ELWADD`).
    Add = 1,
    /// `out = in0 * in1` elementwise (`ELWMUL`, fidelity phase 0).
    Mul = 2,
    /// `out = in0 x in1` per tile (32x32 matrix product, `MVMUL`, fidelity phase 0).
    Matmul = 3,
    /// `out = max(in0, 0)` (the Vector Unit: every datum with the sign bit becomes +0).
    Relu = 4,
}

impl Op {
    /// The op numbered `v` (as stored at [`arg::OP`]); `None` for any other number.
    pub const fn from_u32(v: u32) -> Option<Op> {
        match v {
            1 => Some(Op::Add),
            2 => Some(Op::Mul),
            3 => Some(Op::Matmul),
            4 => Some(Op::Relu),
            _ => None,
        }
    }

    /// Whether the op reads `in1`.
    pub const fn is_binary(self) -> bool {
        !matches!(self, Op::Relu)
    }

    /// tt-metal-style op code for reports.
    pub const fn name(self) -> &'static str {
        match self {
            Op::Add => "EltwiseAdd",
            Op::Mul => "EltwiseMul",
            Op::Matmul => "Matmul",
            Op::Relu => "Relu",
        }
    }

    /// One tile of the op, on the host (the reference the kernels are checked against).
    pub fn reference(self, a: &[u16], b: &[u16], out: &mut [u16]) {
        let each = |out: &mut [u16], f: fn(u16, u16) -> u16| {
            out.iter_mut()
                .zip(a.iter().zip(b))
                .for_each(|(o, (x, y))| *o = f(*x, *y))
        };
        match self {
            Op::Add => each(out, bf16::add),
            Op::Mul => each(out, bf16::mul),
            Op::Relu => out.iter_mut().zip(a).for_each(|(o, x)| *o = bf16::relu(*x)),
            Op::Matmul => bf16::matmul(a, b, out),
        }
    }
}

/// A circular buffer: control block address, data address, page size and page count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbDesc {
    /// L1 address of its control block (`pushed`, then `popped`).
    pub control: u32,
    /// L1 address of its first page.
    pub data: u32,
    /// Bytes per page.
    pub page_bytes: u32,
    /// Pages in the buffer.
    pub pages: u32,
}

/// The CBs' control blocks (pushed, popped counts), 16 bytes per CB index.
pub const CB_CONTROL: u32 = ARGS + 0x100;

const fn cb(i: u32, data: u32, page_bytes: u32) -> CbDesc {
    CbDesc {
        control: CB_CONTROL + 16 * i,
        data,
        page_bytes,
        pages: 2,
    }
}

/// Reader -> unpack: tiles of in0.
pub const CB_IN0: CbDesc = cb(0, ARGS + 0x1000, TILE_BYTES);
/// Reader -> unpack: tiles of in1.
pub const CB_IN1: CbDesc = cb(1, CB_IN0.data + 2 * TILE_BYTES, TILE_BYTES);
/// Pack -> writer: result tiles (CB 4: CBs 2 and 3 are the coprocessor's `Src` and `Dst`
/// registers now, handed over with [`sem`]).
pub const CB_OUT: CbDesc = cb(4, CB_IN1.data + 2 * TILE_BYTES, TILE_BYTES);
/// Every CB, for the launcher to reset.
pub const CBS: [CbDesc; 3] = [CB_IN0, CB_IN1, CB_OUT];

/// The Tensix semaphores the compute kernels hand tiles over with (tt-metal's compute
/// kernels use the same three roles).
pub mod sem {
    /// Tiles in `Dst` ready to pack (math posts, pack takes).
    pub const DST_READY: u32 = 0;
    /// Free halves of `Dst` (starts at 2; pack posts, math takes).
    pub const DST_FREE: u32 = 1;
    /// Free `SrcA`/`SrcB` banks (starts at 2; math posts, unpack takes).
    pub const SRC_FREE: u32 = 2;
}

/// Bank address of the first input tensor. The demo's interleaved DRAM buffers sit at bank
/// addresses (the same offset in every bank) 16 MiB apart, so each holds
/// [`DRAM_BUFFER_PAGES_PER_BANK`] pages per bank.
pub const DRAM_IN0: u32 = 0x0100_0000;
/// Bank address of the second input tensor.
pub const DRAM_IN1: u32 = 0x0200_0000;
/// Bank address of the output tensor.
pub const DRAM_OUT: u32 = 0x0300_0000;
/// Pages of [`TILE_BYTES`] one bank holds of one of the buffers above.
pub const DRAM_BUFFER_PAGES_PER_BANK: u32 = (DRAM_IN1 - DRAM_IN0) / TILE_BYTES;

const _: () = {
    assert!(CB_CONTROL + 16 * CBS.len() as u32 <= CB_IN0.data);
    assert!(CB_OUT.data + 2 * TILE_BYTES <= riscv_linker::Arch::WormholeB0.l1_size());
};
