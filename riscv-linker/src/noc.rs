//! The NoC as a kernel sees it: the NIU (network interface unit) register map of each
//! arch, the command and status encodings, and where DRAM lives.
//!
//! Every Tensix tile has two NIUs, NoC0 at [`crate::mmio::NOC0_REGS_BASE`] and NoC1 at
//! [`crate::mmio::NOC1_REGS_BASE`]. Each has four identical command buffers ("request
//! initiators") `stride` bytes apart ([`NiuMap::cmd_buf_stride`]); the per-NIU
//! configuration registers and the status counters sit in buffer 0's span at `0x100` and
//! `0x200`. Offsets are those of tt-metal's `noc_parameters.h` for Wormhole B0 and
//! Blackhole (also `tt-isa-documentation`); docs/design/noc-model.md says which number
//! comes from where.
//!
//! Coordinates: a NoC address is a 36-bit local address plus the tile's `(x, y)` on that
//! NoC. NoC1 numbers tiles from the opposite corner: `x1 = width - 1 - x0`,
//! `y1 = height - 1 - y0` ([`noc1_coord`]). Wormhole packs the coordinates into the
//! `*_ADDR_MID` register above local bits 35:32; Blackhole has a separate `*_ADDR_HI`
//! ("coordinate") register ([`NiuMap::coord_field`]).

use crate::{Arch, NocCoord};

/// Register offsets of one NIU, relative to its window base (NoC0 or NoC1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NiuMap {
    /// Distance between the four command buffers (0x400 Wormhole, 0x800 Blackhole).
    pub cmd_buf_stride: u32,
    /// Target address, low 32 bits (the remote address of a read, the local source of a
    /// write, the destination of an inline write or atomic).
    pub targ_addr_lo: u32,
    /// Wormhole: local bits 35:32 and the target coordinates; Blackhole: bits 63:32 of
    /// the local address (only 35:32 are used).
    pub targ_addr_mid: u32,
    /// Blackhole only: target coordinates (`x | y << 6`, multicast rectangles wider).
    pub targ_addr_hi: Option<u32>,
    /// Return address: the local destination of a read, the remote destination of a write.
    pub ret_addr_lo: u32,
    /// Return address, middle word (laid out as `targ_addr_mid`).
    pub ret_addr_mid: u32,
    /// Blackhole only: return coordinates (laid out as `targ_addr_hi`).
    pub ret_addr_hi: Option<u32>,
    /// Bits 10-13: transaction id.
    pub packet_tag: u32,
    /// The command: [`ctrl`] bits.
    pub ctrl: u32,
    /// Length in bytes (reads, writes), byte enables (inline writes) or the atomic
    /// instruction ([`atomic`]).
    pub at_len_be: u32,
    /// Blackhole only: upper byte enables.
    pub at_len_be_1: Option<u32>,
    /// Data of an inline write or operand of an atomic.
    pub at_data: u32,
    /// Write 1 to issue; reads non-zero until the request has been accepted.
    pub cmd_ctrl: u32,
    /// This tile's coordinates on this NoC ([`node_id`]).
    pub node_id: u32,
    /// `NOC_ENDPOINT_ID`: a value distinct for every NIU of the chip, read-only.
    pub endpoint_id: u32,
    /// Write a mask of transaction ids to zero their outstanding-request counters.
    pub clear_outstanding: u32,
    /// `NOC_CFG(i)` = `cfg_base + 4 i` (`NIU_CFG_0`, translation tables, ...): plain storage.
    pub cfg_base: u32,
    /// `NOC_STATUS(i)` = `status_base + 4 i`: the counters of [`counter`].
    pub status_base: u32,
}

/// The NIU register map of `arch`.
pub const fn niu_map(arch: Arch) -> NiuMap {
    match arch {
        Arch::WormholeB0 => NiuMap {
            cmd_buf_stride: 0x400,
            targ_addr_lo: 0x00,
            targ_addr_mid: 0x04,
            targ_addr_hi: None,
            ret_addr_lo: 0x0C,
            ret_addr_mid: 0x10,
            ret_addr_hi: None,
            packet_tag: 0x18,
            ctrl: 0x1C,
            at_len_be: 0x20,
            at_len_be_1: None,
            at_data: 0x24,
            cmd_ctrl: 0x28,
            node_id: 0x2C,
            endpoint_id: 0x30,
            clear_outstanding: 0x50,
            cfg_base: 0x100,
            status_base: 0x200,
        },
        Arch::Blackhole => NiuMap {
            cmd_buf_stride: 0x800,
            targ_addr_lo: 0x00,
            targ_addr_mid: 0x04,
            targ_addr_hi: Some(0x08),
            ret_addr_lo: 0x0C,
            ret_addr_mid: 0x10,
            ret_addr_hi: Some(0x14),
            packet_tag: 0x18,
            ctrl: 0x1C,
            at_len_be: 0x20,
            at_len_be_1: Some(0x24),
            at_data: 0x28,
            cmd_ctrl: 0x40,
            node_id: 0x44,
            endpoint_id: 0x48,
            clear_outstanding: 0x60,
            cfg_base: 0x100,
            status_base: 0x200,
        },
    }
}

/// Number of command buffers per NIU.
pub const CMD_BUFS: u32 = 4;

/// tt-metal's use of the command buffers: large writes.
pub const WR_CMD_BUF: u32 = 0;
/// tt-metal's use of the command buffers: reads.
pub const RD_CMD_BUF: u32 = 1;
/// tt-metal's use of the command buffers: small writes, semaphores, inline writes.
pub const WR_REG_CMD_BUF: u32 = 2;
/// tt-metal's use of the command buffers: atomics.
pub const AT_CMD_BUF: u32 = 3;

/// The base address of NIU `noc` (0 or 1) as a core sees it.
pub const fn niu_base(noc: u32) -> u32 {
    if noc == 0 {
        crate::mmio::NOC0_REGS_BASE
    } else {
        crate::mmio::NOC1_REGS_BASE
    }
}

/// The address of register `reg` (an offset from [`NiuMap`]) of command buffer `buf` of
/// NIU `noc`.
pub const fn cmd_buf_reg(arch: Arch, noc: u32, buf: u32, reg: u32) -> u32 {
    niu_base(noc) + buf * niu_map(arch).cmd_buf_stride + reg
}

/// The address of status counter `index` ([`counter`]) of NIU `noc`.
pub const fn status_reg(arch: Arch, noc: u32, index: u32) -> u32 {
    niu_base(noc) + niu_map(arch).status_base + 4 * index
}

/// Bits of the `CTRL` register (`NOC_CMD_*`).
pub mod ctrl {
    /// Bits 1:0 = 0: a read (`NOC_CMD_RD`).
    pub const READ: u32 = 0;
    /// Bit 0: an atomic (`NOC_CMD_AT`).
    pub const ATOMIC: u32 = 1 << 0;
    /// Bit 1: a write (`NOC_CMD_WR`).
    pub const WRITE: u32 = 1 << 1;
    /// Bit 2: byte-enable write: `AT_LEN_BE` holds a byte mask over one NoC word.
    pub const WR_BE: u32 = 1 << 2;
    /// Bit 3: inline write of `AT_DATA` under the byte enables of `AT_LEN_BE`.
    pub const WR_INLINE: u32 = 1 << 3;
    /// Bit 4: non-posted: the destination acknowledges (writes, atomics).
    pub const RESP_MARKED: u32 = 1 << 4;
    /// Bit 5: multicast to the rectangle in the destination coordinates.
    pub const BRCST: u32 = 1 << 5;
    /// Bit 6: not the last request of a multi-request transaction (keeps its virtual channel).
    pub const VC_LINKED: u32 = 1 << 6;
    /// Bit 7: software picks the virtual channel ([`static_vc`]) for every hop.
    pub const VC_STATIC: u32 = 1 << 7;
    /// Bit 8: a multicast reserves its whole path before any data leaves.
    pub const PATH_RESERVE: u32 = 1 << 8;
    /// Bits 15:13: the static virtual channel.
    pub const fn static_vc(vc: u32) -> u32 {
        (vc & 7) << 13
    }
    /// Bit 16: multicast X-major order.
    pub const BRCST_XY: u32 = 1 << 16;
    /// Bit 17: a multicast also delivers to its source tile if inside the rectangle.
    pub const BRCST_SRC_INCLUDE: u32 = 1 << 17;
}

/// `PACKET_TAG` bits 13:10: the transaction id.
pub const fn packet_tag_transaction_id(id: u32) -> u32 {
    (id & 0xF) << 10
}

/// Atomic instructions in `AT_LEN_BE`: `ins << 12 | wrap << 2 | index`, where `index`
/// picks the 32-bit word within the 16-byte NoC word at the target address.
pub mod atomic {
    /// `NOC_AT_INS_INCR`: add `AT_DATA`, wrapping at `2^(wrap + 1)`.
    pub const INCR: u32 = 1;
    /// The `AT_LEN_BE` value of an increment of the word at `addr` (tt-metal's
    /// `noc_semaphore_inc` uses `wrap = 31`).
    pub const fn incr(addr: u32, wrap: u32) -> u32 {
        (INCR << 12) | ((wrap & 31) << 2) | ((addr >> 2) & 3)
    }
}

/// Status counter indices (`NOC_STATUS(i)`). The `*_RECEIVED`/`*_SENT`/`ACCEPTED` ones are
/// monotonic 32-bit counts that persist across kernels; the per-transaction-id ones
/// count up when a request is issued and back down when it completes (8 bits).
pub mod counter {
    /// Responses received to this NIU's non-posted atomics.
    pub const ATOMIC_RESP_RECEIVED: u32 = 0x0;
    /// Acknowledgements received to this NIU's non-posted writes.
    pub const WR_ACK_RECEIVED: u32 = 0x1;
    /// Read responses received (one per read request).
    pub const RD_RESP_RECEIVED: u32 = 0x2;
    /// NoC words of read data received.
    pub const RD_DATA_WORD_RECEIVED: u32 = 0x3;
    /// Requests the NIU accepted from `CMD_CTRL`.
    pub const CMD_ACCEPTED: u32 = 0x4;
    /// Read requests sent.
    pub const RD_REQ_SENT: u32 = 0x5;
    /// Non-posted (response-marked) atomics sent.
    pub const NONPOSTED_ATOMIC_SENT: u32 = 0x6;
    /// Posted atomics sent.
    pub const POSTED_ATOMIC_SENT: u32 = 0x7;
    /// NoC words of non-posted write data sent.
    pub const NONPOSTED_WR_DATA_WORD_SENT: u32 = 0x8;
    /// NoC words of posted write data sent.
    pub const POSTED_WR_DATA_WORD_SENT: u32 = 0x9;
    /// Non-posted write requests sent.
    pub const NONPOSTED_WR_REQ_SENT: u32 = 0xA;
    /// Posted write requests sent.
    pub const POSTED_WR_REQ_SENT: u32 = 0xB;
    /// `REQS_OUTSTANDING_ID(id)` = `0x10 + id`: response-marked requests in flight.
    pub const fn reqs_outstanding_id(id: u32) -> u32 {
        0x10 + (id & 0xF)
    }
    /// `WRITE_REQS_OUTGOING_ID(id)` = `0x20 + id`: writes not yet sent out.
    pub const fn write_reqs_outgoing_id(id: u32) -> u32 {
        0x20 + (id & 0xF)
    }
    /// Number of counters modelled (indices `0..COUNT`).
    pub const COUNT: u32 = 0x40;
}

/// Bytes a NoC word (and a flit) carries (`NOC_WORD_BYTES`): 32 on Wormhole, 64 on
/// Blackhole. Inline and byte-enable writes address one such word, one enable bit a byte.
pub const fn flit_bytes(arch: Arch) -> u32 {
    match arch {
        Arch::WormholeB0 => 32,
        Arch::Blackhole => 64,
    }
}

/// Largest packet payload; the NIU splits longer requests into packets of this size.
pub const fn max_packet_bytes(arch: Arch) -> u32 {
    match arch {
        Arch::WormholeB0 => 8192,
        Arch::Blackhole => 16384,
    }
}

/// Alignment tt-metal requires for NoC transfers to or from L1 / DRAM.
pub const fn alignment(arch: Arch, dram: bool) -> u32 {
    match (arch, dram) {
        (_, false) => 16,
        (Arch::WormholeB0, true) => 32,
        (Arch::Blackhole, true) => 64,
    }
}

/// The coordinates of a NoC0 tile on NoC1.
pub const fn noc1_coord(arch: Arch, c: NocCoord) -> NocCoord {
    let (w, h) = arch.noc_grid();
    NocCoord {
        x: w - 1 - c.x,
        y: h - 1 - c.y,
    }
}

/// The tile at coordinates `c` of NoC `noc`, in NoC0 coordinates (NoC1 numbering is a
/// mirror, so the map is its own inverse).
pub const fn to_noc0(arch: Arch, noc: u32, c: NocCoord) -> NocCoord {
    if noc == 0 {
        c
    } else {
        noc1_coord(arch, c)
    }
}

/// The `NODE_ID` value of a tile at `c` (coordinates on that NoC): `x | y << 6 |
/// width << 12 | height << 18`.
pub const fn node_id(arch: Arch, c: NocCoord) -> u32 {
    let (w, h) = arch.noc_grid();
    c.x as u32 | (c.y as u32) << 6 | (w as u32) << 12 | (h as u32) << 18
}

/// Which register holds the coordinates of an address and where.
impl NiuMap {
    /// The value of the coordinate register (Wormhole: `*_MID`, with local bits 35:32 in
    /// its low 4 bits; Blackhole: `*_HI`) for a unicast to `c` with local address `addr`.
    pub const fn coord_field(arch: Arch, c: NocCoord, addr: u64) -> u32 {
        match arch {
            Arch::WormholeB0 => {
                ((addr >> 32) as u32 & 0xF) | (c.x as u32) << 4 | (c.y as u32) << 10
            }
            Arch::Blackhole => c.x as u32 | (c.y as u32) << 6,
        }
    }

    /// The coordinate register value of a multicast to the rectangle `start..=end`.
    pub const fn mcast_field(arch: Arch, start: NocCoord, end: NocCoord, addr: u64) -> u32 {
        match arch {
            Arch::WormholeB0 => {
                ((addr >> 32) as u32 & 0xF)
                    | (end.x as u32) << 4
                    | (end.y as u32) << 10
                    | (start.x as u32) << 16
                    | (start.y as u32) << 22
            }
            Arch::Blackhole => {
                end.x as u32 | (end.y as u32) << 6 | (start.x as u32) << 12 | (start.y as u32) << 18
            }
        }
    }

    /// Decodes a coordinate register (`mid` on Wormhole, `hi` on Blackhole) into
    /// `(end, start)` of a multicast, or `(c, c)` of a unicast (start is ignored then).
    pub const fn decode_coords(arch: Arch, field: u32) -> (NocCoord, NocCoord) {
        match arch {
            Arch::WormholeB0 => (
                NocCoord {
                    x: ((field >> 4) & 0x3F) as u8,
                    y: ((field >> 10) & 0x3F) as u8,
                },
                NocCoord {
                    x: ((field >> 16) & 0x3F) as u8,
                    y: ((field >> 22) & 0x3F) as u8,
                },
            ),
            Arch::Blackhole => (
                NocCoord {
                    x: (field & 0x3F) as u8,
                    y: ((field >> 6) & 0x3F) as u8,
                },
                NocCoord {
                    x: ((field >> 12) & 0x3F) as u8,
                    y: ((field >> 18) & 0x3F) as u8,
                },
            ),
        }
    }
}

/// DRAM: channels, their NoC endpoints, and tt-metal's interleaved banks.
pub mod dram {
    use crate::{Arch, NocCoord};

    const fn c(x: u8, y: u8) -> NocCoord {
        NocCoord { x, y }
    }

    const WORMHOLE: [[NocCoord; 3]; 6] = [
        [c(0, 0), c(0, 1), c(0, 11)],
        [c(0, 5), c(0, 6), c(0, 7)],
        [c(5, 0), c(5, 1), c(5, 11)],
        [c(5, 2), c(5, 9), c(5, 10)],
        [c(5, 3), c(5, 4), c(5, 8)],
        [c(5, 5), c(5, 6), c(5, 7)],
    ];
    const BLACKHOLE: [[NocCoord; 3]; 8] = [
        [c(0, 0), c(0, 1), c(0, 11)],
        [c(0, 2), c(0, 10), c(0, 3)],
        [c(0, 9), c(0, 4), c(0, 8)],
        [c(0, 5), c(0, 7), c(0, 6)],
        [c(9, 0), c(9, 1), c(9, 11)],
        [c(9, 2), c(9, 10), c(9, 3)],
        [c(9, 9), c(9, 4), c(9, 8)],
        [c(9, 5), c(9, 7), c(9, 6)],
    ];

    /// The three NoC0 endpoints of each DRAM channel (any of them reaches the channel;
    /// tt-metal's soc descriptors `wormhole_b0_80_arch.yaml`, `blackhole_140_arch.yaml`).
    pub const fn channels(arch: Arch) -> &'static [[NocCoord; 3]] {
        match arch {
            Arch::WormholeB0 => &WORMHOLE,
            Arch::Blackhole => &BLACKHOLE,
        }
    }

    /// Bytes of one channel (Wormhole 2 GiB, Blackhole 4 GiB).
    pub const fn channel_size(arch: Arch) -> u64 {
        match arch {
            Arch::WormholeB0 => 2 << 30,
            Arch::Blackhole => 4 << 30,
        }
    }

    /// The channel a NoC0 coordinate belongs to, if it is a DRAM endpoint.
    pub fn channel_of(arch: Arch, at: NocCoord) -> Option<u32> {
        channels(arch)
            .iter()
            .position(|eps| eps.contains(&at))
            .map(|i| i as u32)
    }

    /// Banks tt-metal presents: 12 of 1 GiB on Wormhole (two per channel), 8 on Blackhole.
    pub const fn banks(arch: Arch) -> u32 {
        match arch {
            Arch::WormholeB0 => 12,
            Arch::Blackhole => 8,
        }
    }

    /// Where interleaved bank `bank` lives: its channel, the NoC0 endpoint kernels
    /// address it at, and the offset of its first byte inside the channel.
    pub const fn bank(arch: Arch, bank: u32) -> Bank {
        match arch {
            Arch::WormholeB0 => {
                let ch = bank / 2 % 6;
                let half = bank % 2;
                Bank {
                    channel: ch,
                    endpoint: channels(arch)[ch as usize][2 * half as usize],
                    offset: (half as u64) << 30,
                }
            }
            Arch::Blackhole => {
                let ch = bank % 8;
                Bank {
                    channel: ch,
                    endpoint: channels(arch)[ch as usize][blackhole_worker_port(ch, 0)],
                    offset: 0,
                }
            }
        }
    }

    /// Which of Blackhole channel `ch`'s three endpoints (`channels(Blackhole)[ch][port]`)
    /// a worker on NoC `noc` addresses it at: the `worker_endpoint` of tt-metal's soc
    /// descriptor (`blackhole_140_arch.yaml`: `[2, 1]` for channels 0 and 4-7, `[0, 1]` for
    /// 1-3). Wormhole's banks are halves of a channel at ports 0 and 2 instead ([`bank`]).
    pub const fn blackhole_worker_port(ch: u32, noc: u32) -> usize {
        match (noc, ch) {
            (1, _) => 1,
            (_, 1..=3) => 0,
            _ => 2,
        }
    }

    /// Blackhole's translated coordinates of DRAM (tt-metal turns coordinate translation on
    /// and addresses DRAM by them): channel `ch`'s port `p` is at `(17 + ch / 4, 12 + 3 *
    /// (ch % 4) + p)` (tt-umd's `BlackholeCoordinateManager`, translated DRAM from (17, 12),
    /// three ports per channel). Wormhole has none: its translated DRAM coordinates are
    /// its NoC 0 ones.
    pub const fn translated(arch: Arch, ch: u32, port: usize) -> NocCoord {
        match arch {
            Arch::WormholeB0 => channels(arch)[ch as usize][port],
            Arch::Blackhole => c(17 + (ch / 4) as u8, 12 + 3 * (ch % 4) as u8 + port as u8),
        }
    }

    /// The NoC 0 coordinates of a translated coordinate `t` ([`translated`]): a DRAM port's
    /// endpoint, or `t` itself (a worker's translated coordinates are its NoC 0 ones on an
    /// unharvested chip).
    pub const fn untranslate(arch: Arch, t: NocCoord) -> NocCoord {
        match arch {
            Arch::Blackhole if (t.x == 17 || t.x == 18) && t.y >= 12 && t.y < 24 => {
                let ch = (t.x - 17) * 4 + (t.y - 12) / 3;
                channels(arch)[ch as usize][((t.y - 12) % 3) as usize]
            }
            _ => t,
        }
    }

    /// One interleaved bank.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Bank {
        /// The DRAM channel holding the bank.
        pub channel: u32,
        /// The NoC0 endpoint kernels address the bank at.
        pub endpoint: NocCoord,
        /// Offset of the bank's first byte inside its channel.
        pub offset: u64,
    }

    /// Where page `page` of an interleaved buffer at bank address `base` with pages of
    /// `page_size` bytes lives, as tt-metal lays it out: bank `page % banks`, at
    /// `base + (page / banks) * align(page_size)` inside that bank.
    pub const fn interleaved_page(arch: Arch, base: u32, page_size: u32, page: u32) -> (Bank, u64) {
        let banks = banks(arch);
        let align = super::alignment(arch, true);
        // In u64: a page size near 2^32 rounded up to the alignment does not fit in u32.
        let stride = (page_size as u64).div_ceil(align as u64) * align as u64;
        let b = bank(arch, page % banks);
        (b, b.offset + base as u64 + (page / banks) as u64 * stride)
    }

    /// The NoC endpoint and local address a kernel puts in the NoC registers for that
    /// page (the local address already includes the bank's offset in its channel, as
    /// tt-metal's bank offset table does).
    pub const fn page_noc_local(
        arch: Arch,
        base: u32,
        page_size: u32,
        page: u32,
    ) -> (NocCoord, u64) {
        let (b, at) = interleaved_page(arch, base, page_size, page);
        (b.endpoint, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page size near 2^32 rounded up to the DRAM alignment overflowed u32 (found by the
    /// `run_spec` fuzz target: a tensor's page size is user input).
    #[test]
    fn a_page_size_near_u32_max_does_not_overflow() {
        for arch in [Arch::WormholeB0, Arch::Blackhole] {
            let align = u64::from(alignment(arch, true));
            let banks = dram::banks(arch);
            let (_, first) = dram::interleaved_page(arch, 0, u32::MAX, 0);
            let (_, next) = dram::interleaved_page(arch, 0, u32::MAX, banks);
            assert_eq!(next - first, u64::from(u32::MAX).div_ceil(align) * align);
        }
    }

    #[test]
    fn register_maps_match_tt_metal() {
        let wh = niu_map(Arch::WormholeB0);
        assert_eq!(
            (wh.at_data, wh.cmd_ctrl, wh.node_id, wh.cmd_buf_stride),
            (0x24, 0x28, 0x2C, 0x400)
        );
        let bh = niu_map(Arch::Blackhole);
        assert_eq!(
            (bh.at_data, bh.cmd_ctrl, bh.node_id, bh.cmd_buf_stride),
            (0x28, 0x40, 0x44, 0x800)
        );
        assert_eq!(cmd_buf_reg(Arch::Blackhole, 1, 1, bh.cmd_ctrl), 0xFFB3_0840);
        assert_eq!(
            status_reg(Arch::WormholeB0, 0, counter::RD_RESP_RECEIVED),
            0xFFB2_0208
        );
        assert_eq!(atomic::incr(0x1008, 31), 0x1000 | 31 << 2 | 2);
    }

    #[test]
    fn coordinates_round_trip() {
        for arch in Arch::ALL {
            let a = NocCoord::new(3, 4);
            let b = NocCoord::new(7, 9);
            let f = NiuMap::mcast_field(arch, a, b, 0x3_0000_0000);
            assert_eq!(NiuMap::decode_coords(arch, f), (b, a));
            assert_eq!(
                NiuMap::decode_coords(arch, NiuMap::coord_field(arch, a, 0)).0,
                a
            );
            assert_eq!(to_noc0(arch, 1, noc1_coord(arch, a)), a);
        }
        assert_eq!(
            NiuMap::coord_field(Arch::WormholeB0, NocCoord::new(1, 2), 0),
            (NocCoord::new(1, 2).noc_address(0) >> 32) as u32
        );
    }

    #[test]
    fn dram_banks_interleave_pages() {
        for arch in Arch::ALL {
            let n = dram::banks(arch);
            for b in 0..n {
                let bank = dram::bank(arch, b);
                assert_eq!(dram::channel_of(arch, bank.endpoint), Some(bank.channel));
                assert!(bank.offset < dram::channel_size(arch));
            }
            let (b0, a0) = dram::interleaved_page(arch, 0x1000, 2048, 0);
            let (bn, an) = dram::interleaved_page(arch, 0x1000, 2048, n);
            assert_eq!(b0, bn);
            assert_eq!(an - a0, 2048);
        }
        // Wormhole: banks 0 and 1 share channel 0, 1 GiB apart.
        let (b0, b1) = (
            dram::bank(Arch::WormholeB0, 0),
            dram::bank(Arch::WormholeB0, 1),
        );
        assert_eq!((b0.channel, b1.channel, b1.offset), (0, 0, 1 << 30));
    }

    /// Blackhole's DRAM banks as tt-metal's host hands them to the firmware: per bank, the
    /// translated coordinates of its worker port on each NoC (what
    /// `generate_device_bank_to_noc_tables` writes, `(y << 6) | x`), and back to NoC 0.
    #[test]
    fn blackhole_dram_is_addressed_by_translated_coordinates() {
        let bh = Arch::Blackhole;
        let words = |noc: u32| -> std::vec::Vec<u16> {
            (0..8)
                .map(|ch| {
                    let t = dram::translated(bh, ch, dram::blackhole_worker_port(ch, noc));
                    (t.y as u16) << 6 | t.x as u16
                })
                .collect()
        };
        assert_eq!(
            words(0),
            [0x0391, 0x03D1, 0x0491, 0x0551, 0x0392, 0x0452, 0x0512, 0x05D2]
        );
        assert_eq!(
            words(1),
            [0x0351, 0x0411, 0x04D1, 0x0591, 0x0352, 0x0412, 0x04D2, 0x0592]
        );
        for ch in 0..8 {
            for port in 0..3 {
                let t = dram::translated(bh, ch, port);
                assert_eq!(
                    dram::untranslate(bh, t),
                    dram::channels(bh)[ch as usize][port]
                );
            }
            assert_eq!(
                dram::bank(bh, ch).endpoint,
                dram::untranslate(
                    bh,
                    dram::translated(bh, ch, dram::blackhole_worker_port(ch, 0))
                )
            );
        }
        // Bank 7's NoC 0 port is (9, 6), the soc descriptor's subchannel 2.
        assert_eq!(dram::bank(bh, 7).endpoint, NocCoord::new(9, 6));
        let w = NocCoord::new(1, 2);
        assert_eq!(dram::untranslate(bh, w), w);
    }
}
