//! `ttprof-dm`: data movement for Tensix kernels, with tt-metal's semantics, over the NIU
//! registers of [`riscv_linker::noc`] (the arch comes from `TTPROF_ARCH` at build time).
//!
//! [`Noc::new`] seeds the software counts from the hardware status counters (tt-metal's
//! `noc_local_state_init`; they persist across kernels). [`Noc::async_read`] /
//! [`Noc::async_write`] split transfers longer than the largest packet;
//! [`Noc::async_read_barrier`] waits until `RD_RESP_RECEIVED` equals the reads issued,
//! [`Noc::async_write_barrier`] until `WR_ACK_RECEIVED` equals the acks expected (one per
//! destination of [`Noc::async_write_multicast`]), [`Noc::async_writes_flushed`] until
//! `NONPOSTED_WR_REQ_SENT` equals the writes issued. [`Noc::semaphore_inc`],
//! [`Noc::inline_write`] and [`semaphore_wait`] are tt-metal's semaphore calls;
//! [`InterleavedAddrGen`] gives page `p` of an interleaved DRAM buffer (bank `p % banks`).
//! Coordinates passed in are NoC0's; on NoC1 they are mirrored for you.
//!
//! With the `zones` feature transactions record data (`noc-read-bytes`/`noc-read-src`,
//! `noc-write-bytes`/`noc-write-dst`, packed by [`pack_dest`]), barrier waits are typed wait
//! zones (`noc-read-barrier`, `noc-write-barrier`, `noc-atomic-barrier`) ended by a signal
//! (`noc-read-done`, ...). Semaphores: signal with `ttprof_rt::signal::sem_inc(N)`/`sem_set(N)`
//! before [`Noc::semaphore_inc`]/[`semaphore_set`], wait with `ttprof_rt::wait!("..",
//! semaphore(N))` around [`semaphore_wait`]. See docs/design/critical-path.md.
#![no_std]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

mod arch {
    include!(concat!(env!("OUT_DIR"), "/arch.rs"));
}

pub use arch::ARCH;
use core::ptr::{read_volatile, write_volatile};
use riscv_linker::noc::{self as map, counter, ctrl, NiuMap};
pub use riscv_linker::NocCoord;

const M: NiuMap = map::niu_map(ARCH);
/// Largest request the NIU carries in one packet; longer transfers are split.
pub const MAX_BURST: u32 = map::max_packet_bytes(ARCH);

/// A NoC address: a tile (NoC0 coordinates) and a local address on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NocAddr {
    /// The tile, NoC0 coordinates.
    pub at: NocCoord,
    /// The local address on that tile.
    pub addr: u64,
}

/// `get_noc_addr(x, y, addr)`.
pub const fn noc_addr(x: u8, y: u8, addr: u64) -> NocAddr {
    NocAddr {
        at: NocCoord { x, y },
        addr,
    }
}

/// A multicast destination: every worker in the rectangle `start..=end` (NoC0), at `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McastAddr {
    /// One corner of the rectangle (NoC0).
    pub start: NocCoord,
    /// The opposite corner (NoC0).
    pub end: NocCoord,
    /// The local address on every destination tile.
    pub addr: u64,
}

/// Packs a destination for a data record: `addr | x << 40 | y << 48`.
pub const fn pack_dest(a: NocAddr) -> u64 {
    a.addr | (a.at.x as u64) << 40 | (a.at.y as u64) << 48
}

#[inline(always)]
fn reg(noc: u32, buf: u32, off: u32) -> *mut u32 {
    map::cmd_buf_reg(ARCH, noc, buf, off) as usize as *mut u32
}

#[inline(always)]
fn wr(noc: u32, buf: u32, off: u32, v: u32) {
    // SAFETY: an NIU register of this tile (MMIO, always mapped on a Tensix core).
    unsafe { write_volatile(reg(noc, buf, off), v) }
}

#[inline(always)]
fn rd(noc: u32, buf: u32, off: u32) -> u32 {
    // SAFETY: as in `wr`.
    unsafe { read_volatile(reg(noc, buf, off)) }
}

/// Status counter `index` of NIU `noc`.
#[inline(always)]
pub fn status(noc: u32, index: u32) -> u32 {
    // SAFETY: an NIU status register of this tile.
    unsafe { read_volatile(map::status_reg(ARCH, noc, index) as usize as *const u32) }
}

/// The coordinate register values (`*_MID`, `*_HI`) for `c` on NoC `noc` and `addr`.
fn coords(noc: u32, c: NocCoord, addr: u64) -> (u32, u32) {
    let c = if noc == 0 {
        c
    } else {
        map::noc1_coord(ARCH, c)
    };
    let field = NiuMap::coord_field(ARCH, c, addr);
    match M.targ_addr_hi {
        None => (field, 0),
        Some(_) => ((addr >> 32) as u32 & 0xF, field),
    }
}

fn set_addr(noc: u32, buf: u32, lo: u32, a: NocAddr) {
    let (mid, hi) = coords(noc, a.at, a.addr);
    wr(noc, buf, lo, a.addr as u32);
    wr(noc, buf, lo + 4, mid);
    if M.targ_addr_hi.is_some() {
        wr(noc, buf, lo + 8, hi);
    }
}

fn set_local(noc: u32, buf: u32, lo: u32, addr: u32) {
    wr(noc, buf, lo, addr);
}

/// One NoC as a kernel uses it, with tt-metal's software counts.
#[derive(Debug)]
pub struct Noc {
    noc: u32,
    reads_issued: u32,
    writes_issued: u32,
    writes_acked: u32,
    atomics_acked: u32,
    posted_issued: u32,
}

impl Noc {
    /// NoC `noc` (0 or 1), counts seeded from the hardware counters.
    pub fn new(noc: u32) -> Noc {
        let noc = noc & 1;
        Noc {
            noc,
            reads_issued: status(noc, counter::RD_RESP_RECEIVED),
            writes_issued: status(noc, counter::NONPOSTED_WR_REQ_SENT),
            writes_acked: status(noc, counter::WR_ACK_RECEIVED),
            atomics_acked: status(noc, counter::ATOMIC_RESP_RECEIVED),
            posted_issued: status(noc, counter::POSTED_WR_REQ_SENT),
        }
    }

    /// This tile's NoC0 coordinates (from `NODE_ID`).
    pub fn my_coord(&self) -> NocCoord {
        let id = rd(self.noc, 0, M.node_id);
        let c = NocCoord {
            x: (id & 0x3F) as u8,
            y: ((id >> 6) & 0x3F) as u8,
        };
        if self.noc == 0 {
            c
        } else {
            map::noc1_coord(ARCH, c)
        }
    }

    fn wait_ready(&self, buf: u32) {
        while rd(self.noc, buf, M.cmd_ctrl) != 0 {}
    }

    /// `noc_async_read`: `len` bytes at `src` into local L1 at `dst`.
    pub fn async_read(&mut self, src: NocAddr, dst: u32, len: u32) {
        #[cfg(feature = "zones")]
        {
            ttprof_rt::data!("noc-read-bytes", len as u64);
            ttprof_rt::data!("noc-read-src", pack_dest(src));
        }
        let buf = map::RD_CMD_BUF;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(MAX_BURST);
            self.wait_ready(buf);
            wr(self.noc, buf, M.ctrl, ctrl::READ);
            set_local(self.noc, buf, M.ret_addr_lo, dst + off);
            set_addr(
                self.noc,
                buf,
                M.targ_addr_lo,
                NocAddr {
                    at: src.at,
                    addr: src.addr + off as u64,
                },
            );
            wr(self.noc, buf, M.at_len_be, n);
            wr(self.noc, buf, M.cmd_ctrl, 1);
            self.reads_issued = self.reads_issued.wrapping_add(1);
            off += n;
        }
    }

    /// `noc_async_read_barrier`.
    pub fn async_read_barrier(&self) {
        #[cfg(feature = "zones")]
        let _z = ttprof_rt::wait!("noc-read-barrier", noc_read);
        while status(self.noc, counter::RD_RESP_RECEIVED) != self.reads_issued {}
        // Inside the wait: the transactions that ended it.
        #[cfg(feature = "zones")]
        ttprof_rt::signal!("noc-read-done", noc_read_done);
    }

    fn write(&mut self, src: u32, dst_reg: (u32, u32), addr: u64, len: u32, extra: u32, acks: u32) {
        let buf = map::WR_CMD_BUF;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(MAX_BURST);
            self.wait_ready(buf);
            wr(
                self.noc,
                buf,
                M.ctrl,
                ctrl::WRITE | ctrl::RESP_MARKED | extra,
            );
            set_local(self.noc, buf, M.targ_addr_lo, src + off);
            wr(self.noc, buf, M.ret_addr_lo, (addr + off as u64) as u32);
            wr(self.noc, buf, M.ret_addr_mid, dst_reg.0);
            if let Some(hi) = M.ret_addr_hi {
                wr(self.noc, buf, hi, dst_reg.1);
            }
            wr(self.noc, buf, M.at_len_be, n);
            wr(self.noc, buf, M.cmd_ctrl, 1);
            self.writes_issued = self.writes_issued.wrapping_add(1);
            self.writes_acked = self.writes_acked.wrapping_add(acks);
            off += n;
        }
    }

    /// `noc_async_write` (non-posted): `len` bytes of local L1 at `src` to `dst`.
    pub fn async_write(&mut self, src: u32, dst: NocAddr, len: u32) {
        #[cfg(feature = "zones")]
        {
            ttprof_rt::data!("noc-write-bytes", len as u64);
            ttprof_rt::data!("noc-write-dst", pack_dest(dst));
        }
        let regs = coords(self.noc, dst.at, dst.addr);
        self.write(src, regs, dst.addr, len, 0, 1);
    }

    /// `noc_async_write_multicast`: to every worker of `dst`'s rectangle but this one;
    /// `num_dests` acknowledgements are expected per packet.
    pub fn async_write_multicast(&mut self, src: u32, dst: McastAddr, len: u32, num_dests: u32) {
        #[cfg(feature = "zones")]
        {
            ttprof_rt::data!("noc-mcast-bytes", len as u64);
            ttprof_rt::data!(
                "noc-mcast-dst",
                pack_dest(NocAddr {
                    at: dst.end,
                    addr: dst.addr
                })
            );
        }
        let (s, e) = if self.noc == 0 {
            (dst.start, dst.end)
        } else {
            (
                map::noc1_coord(ARCH, dst.start),
                map::noc1_coord(ARCH, dst.end),
            )
        };
        let field = NiuMap::mcast_field(ARCH, s, e, dst.addr);
        let regs = match M.ret_addr_hi {
            None => (field, 0),
            Some(_) => ((dst.addr >> 32) as u32 & 0xF, field),
        };
        self.write(src, regs, dst.addr, len, ctrl::BRCST, num_dests);
    }

    /// `noc_async_writes_flushed`: every write has left (its source may be reused).
    pub fn async_writes_flushed(&self) {
        while status(self.noc, counter::NONPOSTED_WR_REQ_SENT) != self.writes_issued {}
    }

    /// `noc_async_write_barrier`: every write has been acknowledged.
    pub fn async_write_barrier(&self) {
        #[cfg(feature = "zones")]
        let _z = ttprof_rt::wait!("noc-write-barrier", noc_write);
        while status(self.noc, counter::WR_ACK_RECEIVED) != self.writes_acked {}
        // Inside the wait: the transactions that ended it.
        #[cfg(feature = "zones")]
        ttprof_rt::signal!("noc-write-done", noc_write_done);
    }

    /// `noc_semaphore_inc`: atomically adds `incr` to the word at `addr` (non-posted).
    pub fn semaphore_inc(&mut self, addr: NocAddr, incr: u32) {
        let buf = map::AT_CMD_BUF;
        self.wait_ready(buf);
        wr(self.noc, buf, M.ctrl, ctrl::ATOMIC | ctrl::RESP_MARKED);
        set_addr(self.noc, buf, M.targ_addr_lo, addr);
        wr(
            self.noc,
            buf,
            M.at_len_be,
            map::atomic::incr(addr.addr as u32, 31),
        );
        wr(self.noc, buf, M.at_data, incr);
        wr(self.noc, buf, M.cmd_ctrl, 1);
        self.atomics_acked = self.atomics_acked.wrapping_add(1);
    }

    /// `noc_async_atomic_barrier`.
    pub fn atomic_barrier(&self) {
        #[cfg(feature = "zones")]
        let _z = ttprof_rt::wait!("noc-atomic-barrier", noc_atomic);
        while status(self.noc, counter::ATOMIC_RESP_RECEIVED) != self.atomics_acked {}
        // Inside the wait: the transactions that ended it.
        #[cfg(feature = "zones")]
        ttprof_rt::signal!("noc-atomic-done", noc_atomic_done);
    }

    /// `noc_inline_dw_write` (posted): the 32-bit `value` to `dst` (4-byte aligned).
    pub fn inline_write(&mut self, dst: NocAddr, value: u32) {
        let buf = map::WR_REG_CMD_BUF;
        let word = map::flit_bytes(ARCH) as u64;
        self.wait_ready(buf);
        wr(self.noc, buf, M.ctrl, ctrl::WRITE | ctrl::WR_INLINE);
        set_addr(self.noc, buf, M.targ_addr_lo, dst);
        wr(self.noc, buf, M.at_data, value);
        wr(self.noc, buf, M.at_len_be, 0xF << (dst.addr & (word - 1)));
        if let Some(be1) = M.at_len_be_1 {
            let shift = dst.addr & (word - 1);
            wr(
                self.noc,
                buf,
                be1,
                if shift >= 32 { 0xF << (shift - 32) } else { 0 },
            );
        }
        wr(self.noc, buf, M.cmd_ctrl, 1);
        self.posted_issued = self.posted_issued.wrapping_add(1);
    }

    /// Waits until every posted (inline) write has left.
    pub fn posted_writes_flushed(&self) {
        while status(self.noc, counter::POSTED_WR_REQ_SENT) != self.posted_issued {}
    }
}

/// `noc_semaphore_wait`: spins until the local L1 word at `addr` equals `value`.
pub fn semaphore_wait(addr: u32, value: u32) {
    #[cfg(feature = "zones")]
    let _z = ttprof_rt::zone!("semaphore-wait");
    // SAFETY: a word of this tile's L1 chosen by the kernel.
    while unsafe { read_volatile(addr as usize as *const u32) } != value {}
}

/// `noc_semaphore_set`: sets the local L1 word at `addr`.
pub fn semaphore_set(addr: u32, value: u32) {
    // SAFETY: as in `semaphore_wait`.
    unsafe { write_volatile(addr as usize as *mut u32, value) }
}

/// `InterleavedAddrGen<true>`: pages of `page_size` bytes spread over the DRAM banks from
/// bank address `base` (bank `p % banks`, tt-metal's layout).
#[derive(Clone, Copy, Debug)]
pub struct InterleavedAddrGen {
    /// The buffer's address inside each bank.
    pub base: u32,
    /// Bytes per page.
    pub page_size: u32,
}

impl InterleavedAddrGen {
    /// The NoC address of byte `offset` of page `page`.
    pub const fn page(&self, page: u32, offset: u32) -> NocAddr {
        let (at, addr) = map::dram::page_noc_local(ARCH, self.base, self.page_size, page);
        NocAddr {
            at,
            addr: addr + offset as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_pages_rotate_over_the_banks() {
        let g = InterleavedAddrGen {
            base: 0x1000,
            page_size: 2048,
        };
        let banks = map::dram::banks(ARCH);
        let first = g.page(0, 0);
        let again = g.page(banks, 16);
        assert_eq!(first.at, again.at);
        assert_eq!(again.addr - first.addr, 2048 + 16);
        assert_ne!(
            g.page(1, 0).addr & 0xFFFF,
            0,
            "a page lands at base within its bank"
        );
        assert_eq!(
            map::dram::channel_of(ARCH, g.page(3, 0).at),
            Some(map::dram::bank(ARCH, 3).channel)
        );
    }

    #[test]
    fn coordinate_registers_follow_the_arch() {
        let c = NocCoord::new(2, 3);
        let (mid, hi) = coords(0, c, 0x1_0000_0040);
        match ARCH {
            riscv_linker::Arch::WormholeB0 => assert_eq!((mid, hi), (1 | 2 << 4 | 3 << 10, 0)),
            riscv_linker::Arch::Blackhole => assert_eq!((mid, hi), (1, 2 | 3 << 6)),
        }
        assert_eq!(pack_dest(noc_addr(2, 3, 0x40)), 0x40 | 2 << 40 | 3 << 48);
    }
}
