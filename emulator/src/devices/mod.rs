//! The tile's devices as its RISC-V cores see them: every window above local RAM is answered
//! by one device behind [`TileDevice`], and [`MAP`] says which device answers an address for
//! which core (a window the map has but not for the accessing core is
//! [`FaultKind::Unmapped`]; an address outside every window is [`FaultKind::Access`]).
//!
//! The map and the behaviours follow Tenstorrent's public ISA documentation for Wormhole B0
//! (the [baby RISC-V memory map]); tt-metal's Blackhole headers put these windows at the same
//! addresses, so both arches use this map. Each device's file describes what it models.
//!
//! A device acts on the 32-bit word holding the address: a byte or halfword load takes the
//! whole word's effect (a mailbox pop pops the word) and returns the addressed bytes; a
//! narrow store either merges into the word's current contents or delivers only its bytes,
//! zeros elsewhere ([`TileDevice::merges`]). An access that has to wait returns
//! [`FaultKind::Blocked`] with nothing done: the tile retries it ([`TileDevice::waits_on`]
//! says until when). Device state persists across runs, as on hardware.
//!
//! [baby RISC-V memory map]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/README.md#memory-map

pub(crate) mod daisychain;
mod gpr;
mod mailbox;
pub(crate) mod mover;
mod niu;
mod overlay_streams;
mod pcbuf;
pub(crate) mod perf_counters;
mod push;
mod semaphore;
mod soft_reset;
mod storage;
mod tensix_cfg;
pub(crate) mod timestamper;
mod ttsync;
mod wall_clock;

#[cfg(test)]
mod tests;

use crate::bus::L1;
use crate::error::FaultKind;
use crate::noc::niu::Niu;
use crate::tensix::{Hold, Tensix as Coprocessor, CONFIG_VIEW_BYTES};
use daisychain::Daisychain;
use overlay_streams::OverlayStreams;
use riscv_linker::{mmio, Arch, Risc};
use std::sync::Mutex;
use timestamper::{Timestamper, UnitSink};

/// One load or store at a device window, as a core makes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// The byte address; the device acts on the word holding it.
    pub addr: u32,
    /// Bytes asked (1, 2 or 4), for messages.
    pub size: u32,
    /// The accessing core: windows map differently per core.
    pub risc: Risc,
    /// The accessing core's clock.
    pub time: u64,
}

impl Access {
    /// The address of the word the access acts on.
    pub fn word(&self) -> u32 {
        self.addr & !3
    }

    /// The access waits, nothing done.
    pub fn blocked(&self, write: bool) -> FaultKind {
        FaultKind::Blocked {
            addr: self.addr,
            write,
        }
    }

    /// A load of a window that only takes stores.
    pub fn write_only(&self) -> FaultKind {
        FaultKind::WriteOnly {
            addr: self.addr,
            size: self.size,
            risc: self.risc,
            region: crate::map::region_name(self.addr),
        }
    }
}

/// The Tensix thread of a TRISC.
pub(crate) fn thread(risc: Risc) -> Option<usize> {
    match risc {
        Risc::Trisc0 => Some(0),
        Risc::Trisc1 => Some(1),
        Risc::Trisc2 => Some(2),
        _ => None,
    }
}

/// The NIUs and what they reach (the NoC model on), for the NIU windows.
pub(crate) struct Noc<'a> {
    pub niu: &'a mut Niu,
    pub l1: &'a L1,
    /// No code lies at or above this address (for deliveries into L1).
    pub code_end: u32,
}

/// What an access reaches beyond the device's own state: the tile's clock, reset lines and
/// coprocessor, L1 (units of the debug timestamper and daisychain) and the NIUs.
pub(crate) struct Ctx<'a> {
    /// The tile's wall clock at the access ([`Devices::wall`]).
    pub wall: u64,
    /// `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`, which the PCBufs and TTSync read.
    pub pc_buf_override: u32,
    /// The Tensix coprocessor, whose state the Tensix windows show.
    pub tensix: &'a mut Coprocessor,
    /// `SOFT_RESET_0` as the tile applied it ([`Devices::soft_reset`]).
    pub soft_reset: &'a mut u32,
    /// A store to `SOFT_RESET_0` the tile has not applied yet ([`Devices::pending_reset`]).
    pub pending_reset: &'a mut Option<u32>,
    /// Where a 16-byte unit for L1 goes (L1 address, four words).
    pub unit: &'a mut UnitSink<'a>,
    /// The NIUs (`None`: the NoC model is off and their windows are plain storage).
    pub noc: Option<Noc<'a>>,
}

/// What a blocked access waits on, for the scheduler ([`crate::chip::tile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Another core or the coprocessor's work (a mailbox, a PCBuf): the tile retries at the
    /// next cycle one of them can act at.
    Peers,
    /// Tensix thread `thread`, held as `hold` says (a push into its full instruction FIFO, a
    /// TTSync read); retried like [`Wait::Peers`] unless [`Wait::until`] knows better.
    Tensix { thread: usize, hold: Hold },
}

impl Wait {
    /// The earliest cycle the access can succeed, when the coprocessor knows it: a TRISC's
    /// push behind a MOP expansion cannot succeed before the expansion ends.
    pub fn until(self, cop: &Coprocessor) -> Option<u64> {
        match self {
            Wait::Tensix {
                thread,
                hold: Hold::Push { after_mop: false },
            } => cop.earliest_push(thread),
            _ => None,
        }
    }
}

/// One device of the tile: the windows [`MAP`] gives it, as every core sees them.
pub(crate) trait TileDevice {
    /// The device's name, for messages (the tests' map checks name devices by it).
    #[cfg_attr(not(test), allow(dead_code))]
    fn name(&self) -> &'static str;

    /// A load of the word holding `a.addr` (only words of this device's map entries, by
    /// cores the entries list): its value, or [`FaultKind::Blocked`] with nothing done.
    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind>;

    /// A store of `word`, the whole word holding `a.addr` (a narrow store merged into the
    /// current word or in its lanes, per [`TileDevice::merges`]).
    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind>;

    /// How a `size`-byte store at `addr` (1 or 2) reaches the word: `Ok(true)` merged into
    /// its current contents (read first, which must have no effect beyond what a read of a
    /// register does), `Ok(false)` only the stored bytes in their lanes, zeros elsewhere (the
    /// default: FIFOs, semaphores, pushes), or refused.
    fn merges(&self, _addr: u32, _size: u32) -> Result<bool, FaultKind> {
        Ok(false)
    }

    /// What a blocked access `a` (a store when `write`) waits on.
    fn waits_on(&self, _a: &Access, _write: bool) -> Wait {
        Wait::Peers
    }

    /// Whether a load of `addr` by `risc` is *timeless*: it has no side effect and what it
    /// returns changes only through a store, a NoC delivery or the coprocessor's work, never
    /// by time passing (for the deadlock detector, [`crate::chip::stall`]). Asked of the
    /// map without a device at hand ([`read_is_timeless`]).
    fn timeless(_addr: u32, _risc: Risc) -> bool
    where
        Self: Sized,
    {
        false
    }

    /// Whether a timeless register, read by `a` while the device is quiet (no core stores,
    /// the NoC idle), can now change only through a store: the deadlock proof may then read
    /// it ([`TileDevice::peek`]). The default: always (storage, mailbox status).
    fn frozen(&self, _a: &Access, _cx: &Ctx<'_>) -> bool {
        true
    }

    /// What a load of a frozen register returns, read without any effect on the tile.
    fn peek(&mut self, a: &Access, cx: &mut Ctx<'_>) -> u32 {
        self.read(a, cx).unwrap_or(0)
    }

    /// The name of the timeless register at `addr` read by `risc`, for the deadlock report.
    fn register(&self, addr: u32, _risc: Risc, _arch: Arch) -> String {
        crate::map::region_name(addr).to_string()
    }
}

/// Cores of a map entry, by bit [`Risc::index`].
type Cores = u8;
const fn core(risc: Risc) -> Cores {
    1 << risc.index()
}
const B: Cores = core(Risc::Brisc);
const TRISCS: Cores = core(Risc::Trisc0) | core(Risc::Trisc1) | core(Risc::Trisc2);
const BT: Cores = B | TRISCS;
const ALL: Cores = BT | core(Risc::Ncrisc);

/// What a device's own borrow leaves of the tile's devices for its [`Ctx`].
pub(crate) struct Parts<'d> {
    tensix: &'d mut Coprocessor,
    soft_reset: &'d mut u32,
    pending_reset: &'d mut Option<u32>,
}

/// One window (or part of one) and the device that answers it for some cores.
pub(crate) struct Entry {
    base: u32,
    size: u32,
    cores: Cores,
    /// [`TileDevice::timeless`] of the device.
    timeless: fn(u32, Risc) -> bool,
    /// The device among the tile's, and the rest of them.
    device: for<'d> fn(&'d mut Devices) -> (&'d mut dyn TileDevice, Parts<'d>),
}

/// The entry of `field`, a device of type `ty` among [`Devices`]' fields (`locked`: behind
/// the lock the host's accesses take).
macro_rules! entry {
    ($base:expr, $size:expr, $cores:expr, $field:ident: $ty:ty) => {
        entry!(@ $base, $size, $cores, $ty, |d| &mut d.$field)
    };
    ($base:expr, $size:expr, $cores:expr, locked $field:ident: $ty:ty) => {
        entry!(@ $base, $size, $cores, $ty, |d| d
            .$field
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()))
    };
    (@ $base:expr, $size:expr, $cores:expr, $ty:ty, |$d:ident| $dev:expr) => {
        Entry {
            base: $base,
            size: $size,
            cores: $cores,
            timeless: <$ty as TileDevice>::timeless,
            device: |$d| {
                (
                    $dev as &mut dyn TileDevice,
                    Parts {
                        tensix: &mut $d.tensix,
                        soft_reset: &mut $d.soft_reset,
                        pending_reset: &mut $d.pending_reset,
                    },
                )
            },
        }
    };
}

/// Which device answers which window for which cores, first match first. A window of
/// [`crate::map`] with no entry for the accessing core is unmapped for it. Adding a device:
/// its file, its field in [`Devices`], its entries here.
pub(crate) const MAP: &[Entry] = &[
    // The debug block.
    entry!(mmio::WALL_CLOCK_L, 3 * 4, ALL, wall_clock: wall_clock::WallClock),
    entry!(mmio::SOFT_RESET_0, 4, ALL, soft_reset_reg: soft_reset::SoftReset),
    entry!(mmio::TIMESTAMP, 7 * 4, ALL, locked timestamper: Timestamper),
    entry!(mmio::DBG_L1_MEM_REG0, 4 * 4, ALL, locked daisychain: Daisychain),
    entry!(mmio::DBG_RD_DATA, 4, ALL, locked daisychain: Daisychain),
    entry!(mmio::TRISC_PC_BUF_OVERRIDE, 4, ALL, pc_bufs: pcbuf::PcBufs),
    entry!(mmio::INSTRN_BUF_CTRL0, 3 * 4, ALL, debug_push: push::DebugPush),
    entry!(mmio::DEBUG_REGS_BASE, 9 * 4, ALL, perf_counters: perf_counters::PerfCounters),
    entry!(perf_counters::control(3), 4 * 4, ALL, perf_counters: perf_counters::PerfCounters),
    entry!(perf_counters::control(4), 3 * 4, ALL, perf_counters: perf_counters::PerfCounters),
    entry!(perf_counters::output(0), 10 * 4, ALL, perf_counters: perf_counters::PerfCounters),
    entry!(perf_counters::MUX_CTRL, 4, ALL, perf_counters: perf_counters::PerfCounters),
    entry!(mmio::DEBUG_REGS_BASE, mmio::DEBUG_REGS_SIZE, ALL, debug_regs: storage::DebugRegs),
    entry!(mmio::MAILBOX_BASE, mmio::MAILBOX_SIZE, BT, mailboxes: mailbox::Mailboxes),
    // PCBufs for BRISC (all three windows); for a TRISC, its PCBuf, TTSync, semaphores.
    entry!(mmio::PC_BUF_BASE, 3 * mmio::PC_BUF_SIZE, B, pc_bufs: pcbuf::PcBufs),
    entry!(mmio::PC_BUF_BASE, 4, TRISCS, pc_bufs: pcbuf::PcBufs),
    entry!(mmio::TTSYNC_COPROCESSOR_DONE, 8, TRISCS, ttsync: ttsync::TtSyncs),
    entry!(mmio::SEMAPHORE_BASE, 4 * mmio::SEMAPHORES, TRISCS, semaphores: semaphore::Semaphores),
    entry!(mmio::PC_BUF_BASE, mmio::PC_BUF_SIZE, TRISCS, storage: storage::Storage),
    // BRISC sees the three threads' GPRs one after the other, a TRISC its own.
    entry!(mmio::REGFILE_BASE, 3 * mmio::GPRS_PER_THREAD_BYTES, B, gprs: gpr::Gprs),
    entry!(mmio::REGFILE_BASE, mmio::GPRS_PER_THREAD_BYTES, TRISCS, gprs: gpr::Gprs),
    entry!(mmio::REGFILE_BASE, mmio::REGFILE_SIZE, BT, storage: storage::Storage),
    // BRISC pushes to any thread (INSTRN_BUF_BASE, INSTRN1/2_BUF_BASE), a TRISC to its own.
    entry!(mmio::INSTRN_BUF_BASE, 3 * mmio::INSTRN_BUF_SIZE, B, pushes: push::Pushes),
    entry!(mmio::INSTRN_BUF_BASE, mmio::INSTRN_BUF_SIZE, TRISCS, pushes: push::Pushes),
    entry!(mmio::MOP_CFG_BASE, mmio::MOP_CFG_SIZE, TRISCS, mop_cfg: tensix_cfg::MopCfg),
    entry!(mmio::TENSIX_CFG_BASE, CONFIG_VIEW_BYTES, BT, config: tensix_cfg::Config),
    entry!(mmio::TENSIX_CFG_BASE, mmio::TENSIX_CFG_SIZE, BT, storage: storage::Storage),
    entry!(mmio::NOC0_REGS_BASE, 2 * mmio::NOC_REGS_SIZE, ALL, nius: niu::NiuWindows),
    entry!(mmio::TDMA_REGS_BASE, mmio::TDMA_REGS_SIZE, ALL, tdma: mover::TdmaRisc),
    entry!(mmio::PIC_REGS_BASE, mmio::PIC_REGS_SIZE, ALL, storage: storage::Storage),
    entry!(mmio::NOC_OVERLAY_BASE, mmio::NOC_OVERLAY_SIZE, ALL, overlay: OverlayStreams),
];

impl Entry {
    /// [`TileDevice::timeless`] of the entry's device.
    pub fn timeless(&self, addr: u32, risc: Risc) -> bool {
        (self.timeless)(addr, risc)
    }

    /// The entry's device among the tile's.
    pub fn device<'d>(&self, devices: &'d mut Devices) -> &'d mut dyn TileDevice {
        (self.device)(devices).0
    }
}

/// What an access by one core reaches.
pub(crate) enum Route {
    Device(&'static Entry),
    /// The window exists but not for this core (its name).
    Unmapped(&'static str),
    /// No window.
    Outside,
}

/// Per 64 KiB block of the top 16 MiB (address bits 16-23), the entries of [`MAP`] that
/// reach into it, as a mask of their indices: a lookup tries only those, in map order.
const BLOCKS: [u64; 256] = {
    assert!(MAP.len() <= 64);
    let mut blocks = [0u64; 256];
    let mut i = 0;
    while i < MAP.len() {
        let e = &MAP[i];
        assert!(e.base >> 24 == 0xFF && e.size > 0);
        let mut b = (e.base >> 16) & 0xFF;
        while b <= ((e.base + (e.size - 1)) >> 16) & 0xFF {
            blocks[b as usize] |= 1 << i;
            b += 1;
        }
        i += 1;
    }
    blocks
};

/// What an access at `addr` by `risc` reaches (above local RAM).
pub(crate) fn route(addr: u32, risc: Risc) -> Route {
    let me = core(risc);
    if addr >> 24 == 0xFF {
        let mut m = BLOCKS[((addr >> 16) & 0xFF) as usize];
        while m != 0 {
            let e = &MAP[m.trailing_zeros() as usize];
            if addr.wrapping_sub(e.base) < e.size && e.cores & me != 0 {
                return Route::Device(e);
            }
            m &= m - 1;
        }
    }
    match crate::map::span(addr) {
        Some(span) => Route::Unmapped(span.name),
        None => Route::Outside,
    }
}

/// Whether a load of `addr` by `risc` is timeless ([`TileDevice::timeless`]): a clock, a
/// FIFO pop, a PCBuf or TTSync, the debug registers are not; NIU registers are (once every
/// request has completed, which the deadlock detector checks).
pub(crate) fn read_is_timeless(addr: u32, risc: Risc) -> bool {
    match route(addr, risc) {
        Route::Device(e) => e.timeless(addr, risc),
        _ => false,
    }
}

/// The state of the tile's devices, and the tile's clock offset and reset lines they share
/// with the scheduler and the pipeline.
#[derive(Debug, Default)]
pub(crate) struct Devices {
    /// Added to a core's time to give the wall clock (the tile's clock offset).
    pub wall_offset: u64,
    /// `RISCV_DEBUG_REG_SOFT_RESET_0` as the tile applied it.
    pub soft_reset: u32,
    /// A value stored to `SOFT_RESET_0` that the tile has not applied yet (it does after the
    /// storing instruction, [`crate::chip::tile`]).
    pub pending_reset: Option<u32>,
    /// The coprocessor: semaphores, GPRs, MOP configuration, backend configuration, and
    /// the instruction pushes.
    pub tensix: Coprocessor,
    /// The debug timestamper, shared by the tile's five cores. Behind a lock only for the
    /// host's accesses ([`crate::Device::read_u32`] while the tiles are paused); a core
    /// reaches it through `&mut self` ([`Mutex::get_mut`]), so the lock costs it nothing.
    pub timestamper: Mutex<Timestamper>,
    /// The debug daisychain. Behind a lock only for the host's accesses while the tiles
    /// are paused; a core reaches it through `&mut self` (`Mutex::get_mut`).
    pub daisychain: Mutex<Daisychain>,
    /// TDMA-RISC, the mover and NCRISC's instruction RAM.
    pub tdma: mover::TdmaRisc,
    mailboxes: mailbox::Mailboxes,
    pc_bufs: pcbuf::PcBufs,
    ttsync: ttsync::TtSyncs,
    semaphores: semaphore::Semaphores,
    gprs: gpr::Gprs,
    pushes: push::Pushes,
    debug_push: push::DebugPush,
    mop_cfg: tensix_cfg::MopCfg,
    config: tensix_cfg::Config,
    soft_reset_reg: soft_reset::SoftReset,
    wall_clock: wall_clock::WallClock,
    nius: niu::NiuWindows,
    overlay: OverlayStreams,
    /// The plain storage windows.
    storage: storage::Storage,
    /// The performance counter registers (they count the coprocessor's signals).
    pub(crate) perf_counters: perf_counters::PerfCounters,
    /// The rest of the debug block.
    pub(crate) debug_regs: storage::DebugRegs,
}

impl Devices {
    /// TRISC `i`'s PCBuf as the debug daisychain shows it: its head (`None`: empty) and
    /// whether it is full.
    pub fn pc_buf_state(&self, i: usize) -> (Option<u32>, bool) {
        self.pc_bufs.state(i)
    }
}

impl Devices {
    /// The devices of a tile whose wall clock is its cores' time plus `wall_offset`.
    pub fn new(wall_offset: u64) -> Devices {
        Devices {
            wall_offset,
            ..Devices::default()
        }
    }

    /// The wall clock at core time `time`.
    pub fn wall(&self, time: u64) -> u64 {
        time.wrapping_add(self.wall_offset)
    }

    /// Runs `f` on the device of `e` with the context of access `a`.
    pub(crate) fn with<R>(
        &mut self,
        e: &Entry,
        a: &Access,
        noc: Option<Noc<'_>>,
        unit: &mut UnitSink<'_>,
        f: impl FnOnce(&mut dyn TileDevice, &mut Ctx<'_>) -> R,
    ) -> R {
        let wall = self.wall(a.time);
        let pc_buf_override = self.pc_bufs.override_reg;
        let (dev, p) = (e.device)(self);
        let mut cx = Ctx {
            wall,
            pc_buf_override,
            tensix: p.tensix,
            soft_reset: p.soft_reset,
            pending_reset: p.pending_reset,
            unit,
            noc,
        };
        f(dev, &mut cx)
    }

    /// A load of `a.size` bytes at `a.addr` (above local RAM): the 32-bit word holding it.
    pub fn read(
        &mut self,
        a: &Access,
        noc: Option<Noc<'_>>,
        unit: &mut UnitSink<'_>,
    ) -> Result<u32, FaultKind> {
        match route(a.addr, a.risc) {
            Route::Device(e) => self.with(e, a, noc, unit, |d, cx| d.read(a, cx)),
            Route::Unmapped(region) => Err(FaultKind::Unmapped {
                addr: a.addr,
                size: a.size,
                write: false,
                risc: a.risc,
                region,
            }),
            Route::Outside => Err(FaultKind::Access {
                addr: a.addr,
                size: a.size,
                write: false,
            }),
        }
    }

    /// A store of `word` (the whole 32-bit word holding `a.addr`, a narrow store already
    /// merged or in its lanes; `a.size` is the store's own size, for messages).
    pub fn write(
        &mut self,
        a: &Access,
        word: u32,
        noc: Option<Noc<'_>>,
        unit: &mut UnitSink<'_>,
    ) -> Result<(), FaultKind> {
        match route(a.addr, a.risc) {
            Route::Device(e) => self.with(e, a, noc, unit, |d, cx| d.write(a, word, cx)),
            Route::Unmapped(region) => Err(FaultKind::Unmapped {
                addr: a.addr,
                size: a.size,
                write: true,
                risc: a.risc,
                region,
            }),
            Route::Outside => Err(FaultKind::Access {
                addr: a.addr,
                size: a.size,
                write: true,
            }),
        }
    }

    /// Whether a narrow store `a` merges into the word's current contents
    /// ([`TileDevice::merges`]; an unmapped window: no).
    pub fn merges(&mut self, a: &Access) -> Result<bool, FaultKind> {
        match route(a.addr, a.risc) {
            Route::Device(e) => e.device(self).merges(a.addr, a.size),
            _ => Ok(false),
        }
    }

    /// What the blocked access at `addr` by `risc` (a store when `write`) waits on.
    pub fn waits_on(&mut self, addr: u32, risc: Risc, write: bool) -> Wait {
        let a = Access {
            addr,
            size: 4,
            risc,
            time: 0,
        };
        match route(addr, risc) {
            Route::Device(e) => e.device(self).waits_on(&a, write),
            _ => Wait::Peers,
        }
    }
}
