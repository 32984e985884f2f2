//! Zones and the other recording primitives, with the hot path.
//!
//! A short zone with recording on and room in the ring costs 16 instructions and 6 ring
//! bytes: at open, a load of this RISC's anchor from core-local RAM (0 = off) and of the
//! wall clock, no branch; at close, the guard's branch on the anchor, the end's clock read,
//! the site's id and a `jal` into the shared routine `__ttprof_zone_end`
//! (`records::zone_end`), which checks room (`tp < gp`: write pointer and limit, both
//! reserved registers), stores the id, checks that the end is within 2^15 cycles of the
//! anchor, stores the duration and the end, bumps `tp` and returns. That one check bounds
//! both times (the start was read after the anchor was loaded); anything else continues in
//! the routine of a long zone (`__ttprof_zone_close`: a 12-byte record for a zone of 2^15
//! cycles or more, else the slow path in `producer`). With recording off a zone costs the
//! two loads at open and the branch on the guard at close.
//!
//! The close's checks and stores are a call, not inline code, so that a zone site is small
//! (issue 39: at most 48 bytes of code; runtime-bench's `zone_site_code_bytes_<arch>`): the
//! kernel's instruction cache holds one copy of them, whatever the number of sites. Events,
//! data and value zones' closes call their shared routines in `records` too.
//!
//! See docs/design/ring-encoding.md for the instruction listing and why the times are exact,
//! and docs/design/zone-cost.md for the scheduling and what a zone costs.

// With the timestamper backend the ring's hot path and the times a zone keeps are unused.
#![cfg_attr(
    all(target_arch = "riscv32", feature = "timestamper"),
    allow(dead_code)
)]

use crate::producer;
use crate::wire::{Record, SiteId};
use core::cell::UnsafeCell;

/// A zone site: a one-byte static in `.ttprof_sites` whose address is the site's id.
/// Made by the runtime's macros; do not construct by hand.
/// On a core the metadata lives only in the ELF symbol table; the host simulator keeps it
/// to assign ids.
#[derive(Clone, Copy)]
pub struct Site {
    ptr: &'static u8,
    #[cfg(not(target_arch = "riscv32"))]
    meta: &'static str,
}

impl Site {
    #[doc(hidden)]
    #[cfg(target_arch = "riscv32")]
    pub const fn __new(ptr: &'static u8, _meta: &'static str) -> Site {
        Site { ptr }
    }

    #[doc(hidden)]
    #[cfg(not(target_arch = "riscv32"))]
    pub const fn __new(ptr: &'static u8, meta: &'static str) -> Site {
        Site { ptr, meta }
    }

    /// The full id word: the site's address (the wire keeps the low 16 bits, which are all
    /// of it: the linker script caps the section at 2^16 sites).
    #[inline(always)]
    fn word(self) -> u32 {
        #[cfg(target_arch = "riscv32")]
        return crate::hw::site_word(self.ptr);
        #[cfg(not(target_arch = "riscv32"))]
        return crate::sim::hw::site_word(self.ptr, self.meta);
    }

    /// The site's id on the wire.
    #[inline(always)]
    pub fn id(self) -> SiteId {
        self.word() as SiteId
    }

    /// The site's metadata (a JSON object, see `ttprof-rt-macros`). Host builds only.
    #[cfg(not(target_arch = "riscv32"))]
    pub fn meta(self) -> &'static str {
        self.meta
    }
}

/// A scoped zone: recorded from its creation to its drop. See [`crate::zone!`].
#[must_use = "a zone ends when this guard is dropped; bind it with `let _z = ...`"]
pub struct Zone {
    open: Open,
    site: Site,
}

/// What an open returns: the start time, and the anchor the open loaded, which the close
/// checks its end against; non-zero exactly when the zone is recorded.
#[derive(Clone, Copy)]
struct Open {
    start: u32,
    anchor: u32,
}

impl Zone {
    /// Opens a zone of `site`; it closes when dropped.
    #[inline(always)]
    pub fn open(site: Site) -> Zone {
        Zone {
            open: open_site(site),
            site,
        }
    }

    /// The block form of [`crate::zone!`]: a zone if recording is on (one load and one
    /// branch decide), `None` otherwise. With the timestamper backend always a zone: the
    /// host switches recording through the timestamper's buffer enables.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __open_if_recording(site: Site) -> Option<RecordedZone> {
        #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
        return Some(RecordedZone {
            open: open_site(site),
            site,
        });
        #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
        open_if_recording().map(|open| RecordedZone { open, site })
    }
}

/// A zone whose open found recording on (the block form of [`crate::zone!`]): its close
/// needs no guard.
#[must_use = "a zone ends when this guard is dropped"]
pub struct RecordedZone {
    open: Open,
    site: Site,
}

impl Drop for RecordedZone {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
        crate::stamper::close(self.site.word());
        #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
        close_fast(self.site.word(), self.open.start, self.open.anchor);
    }
}

impl Drop for Zone {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
        crate::stamper::close(self.site.word());
        #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
        close_guarded(self.site.word(), self.open.start, self.open.anchor);
    }
}

/// A zone's open: the ring's hot path, or with the timestamper backend one open token
/// (the zone then keeps no times: the hardware stamps both ends).
#[inline(always)]
fn open_site(_site: Site) -> Open {
    #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
    {
        crate::stamper::open(_site.word());
        Open {
            start: 0,
            anchor: 1,
        }
    }
    #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
    open_fast()
}

#[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
/// The guard's close: nothing when the open found recording off (anchor 0). On a core the
/// test is one forward `beqz` written in the hot path itself, so it is laid out not taken
/// (predicted) when recording is on whatever block order the compiler picks.
#[cfg(target_arch = "riscv32")]
#[cfg_attr(feature = "timestamper", allow(dead_code))]
#[inline(always)]
fn close_guarded(id: u32, start: u32, anchor: u32) {
    unsafe {
        core::arch::asm!(
            "beqz {a}, {off}",
            a = in(reg) anchor,
            off = label {
                return;
            },
            options(nomem, nostack, preserves_flags)
        )
    };
    close_fast(id, start, anchor);
}

#[cfg(not(target_arch = "riscv32"))]
fn close_guarded(id: u32, start: u32, anchor: u32) {
    if anchor != 0 {
        close_fast(id, start, anchor);
    }
}

#[cfg(target_arch = "riscv32")]
#[cfg_attr(feature = "timestamper", allow(dead_code))]
#[inline(always)]
fn open_fast() -> Open {
    // No branch at open: the clock is read whether or not recording is on (its latency is
    // hidden: nothing waits for it before the close), and the close's guard tests the anchor.
    let (anchor, start) = load_anchor_and_clock();
    Open { start, anchor }
}

/// This RISC's hot word (its anchor; 0: recording off) from core-local RAM, then the wall
/// clock's low word: two loads issued back to back, neither waiting for the other (the hot
/// word's latency is 2, the clock's 7), from base registers the compiler hoists out of
/// loops. The anchor is loaded first, so it is at or before the start (it is a time this
/// core wrote earlier). A compiler barrier, as [`crate::hw::zone_clock`].
#[cfg(target_arch = "riscv32")]
#[cfg_attr(feature = "timestamper", allow(dead_code))]
#[inline(always)]
fn load_anchor_and_clock() -> (u32, u32) {
    use crate::hw::{hot_base, HOT_OFFSET};
    use riscv_linker::mmio::WALL_CLOCK_L;
    let (anchor, start): (u32, u32);
    unsafe {
        core::arch::asm!(
            "lw {a}, {hoff}({hbase})",
            "lw {s}, {coff}({cbase})",
            a = out(reg) anchor,
            s = out(reg) start,
            hbase = in(reg) hot_base(),
            hoff = const HOT_OFFSET,
            cbase = in(reg) WALL_CLOCK_L & !0xFFF,
            coff = const WALL_CLOCK_L & 0xFFF,
            options(nostack, preserves_flags)
        )
    };
    (anchor, start)
}

/// The open of the block form: both loads, then one branch on the anchor.
#[cfg(target_arch = "riscv32")]
#[cfg_attr(feature = "timestamper", allow(dead_code))]
#[inline(always)]
fn open_if_recording() -> Option<Open> {
    let (anchor, start) = load_anchor_and_clock();
    if anchor == 0 {
        return None;
    }
    Some(Open { start, anchor })
}

/// A recorded zone's close: the end's clock read, then one call of the shared routine
/// `records::zone_end`, which checks room and the anchor and writes the 6-byte record (or
/// goes on to the long-zone form or the slow close). A zone site is the open's two loads,
/// the guard's branch, the end's load, the id and the `jal` (issue 39: at most 48 bytes of
/// code per site; the routine is one copy in the instruction cache).
#[cfg(target_arch = "riscv32")]
#[cfg_attr(feature = "timestamper", allow(dead_code))]
#[inline(always)]
fn close_fast(id: u32, start: u32, anchor: u32) {
    // The end first (a compiler barrier): its latency runs under the id's load and the jal.
    let end = crate::hw::zone_clock();
    crate::records::zone_end(id, start, anchor, end);
}

#[cfg(not(target_arch = "riscv32"))]
fn open_fast() -> Open {
    let (start, anchor) = crate::sim::hw::open_fast();
    Open { start, anchor }
}

#[cfg(not(target_arch = "riscv32"))]
fn open_if_recording() -> Option<Open> {
    let (start, anchor) = crate::sim::hw::open_fast();
    (anchor != 0).then_some(Open { start, anchor })
}

#[cfg(not(target_arch = "riscv32"))]
fn close_fast(id: u32, start: u32, anchor: u32) {
    crate::sim::hw::close_fast(id, start, anchor)
}

/// A zone that carries a 32-bit value, e.g. a tile count. See [`crate::value_zone!`].
#[must_use = "a zone ends when this guard is dropped; bind it with `let _z = ...`"]
pub struct ValueZone {
    open: Open,
    site: Site,
    value: u32,
}

impl ValueZone {
    /// Opens a zone of `site` carrying `value`; it closes when dropped.
    #[inline(always)]
    pub fn open(site: Site, value: u32) -> ValueZone {
        ValueZone {
            open: open_site(site),
            site,
            value,
        }
    }

    /// Replaces the value recorded when the zone ends.
    #[inline(always)]
    pub fn set(&mut self, value: u32) {
        self.value = value;
    }
}

impl Drop for ValueZone {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
        return crate::stamper::close_value(self.site.word(), self.value);
        #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
        crate::records::value_close(
            self.site.word(),
            self.open.start,
            self.open.anchor,
            self.value,
        );
    }
}

/// A zone that records the change of a performance counter bank's value over itself. See
/// [`crate::counted_zone!`].
#[must_use = "a zone ends when this guard is dropped; bind it with `let _z = ...`"]
pub struct CountedZone {
    open: Open,
    site: Site,
    /// The bank's `PERF_CNT_OUT_H` address.
    reg: u32,
    /// Its value after the zone opened.
    at_open: u32,
}

impl CountedZone {
    /// Opens a zone of `site` counting bank `bank` (the index in
    /// `riscv_linker::mmio::PERF_CNT_OUT_H`); it closes when dropped.
    #[inline(always)]
    pub fn open(site: Site, bank: usize) -> CountedZone {
        let open = open_site(site);
        let reg = riscv_linker::mmio::PERF_CNT_OUT_H[bank].1;
        CountedZone {
            open,
            site,
            reg,
            at_open: counter(reg),
        }
    }
}

impl Drop for CountedZone {
    #[inline(always)]
    fn drop(&mut self) {
        let now = counter(self.reg);
        #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
        return crate::stamper::close_value(self.site.word(), now.wrapping_sub(self.at_open));
        #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
        crate::records::counted_close(
            self.site.word(),
            self.open.start,
            self.open.anchor,
            now,
            self.at_open,
        );
    }
}

/// A performance counter bank's value register, read now (the host simulator has no
/// counters: 0).
#[inline(always)]
fn counter(reg: u32) -> u32 {
    #[cfg(target_arch = "riscv32")]
    // SAFETY: `reg` is one of the debug register block's OUT_H words, always mapped.
    return unsafe { core::ptr::read_volatile(reg as *const u32) };
    #[cfg(not(target_arch = "riscv32"))]
    {
        let _ = reg;
        0
    }
}

/// Records a point event now. See [`crate::event!`]. Inline: the site's id and a call of
/// the shared routine (`records`).
#[inline(always)]
pub fn event(site: Site) {
    event_word(site.word())
}

/// [`event`] by site id (also the C ABI's `ttprof_event`).
#[inline(always)]
#[cfg_attr(not(all(target_arch = "riscv32", feature = "capi")), allow(dead_code))]
pub(crate) fn event_id(id: SiteId) {
    event_word(id as u32)
}

/// [`event`] by the site's id word (below 2^16).
#[inline(always)]
fn event_word(id: u32) {
    #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
    return crate::stamper::event(id);
    #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
    crate::records::event(id);
}

/// Records a 64-bit value with the current time. See [`crate::data!`]. Inline: the site's
/// id, the value and a call of the shared routine (`records`).
#[inline(always)]
pub fn data(site: Site, value: u64) {
    data_word(site.word(), value)
}

/// [`data`] by site id (also the C ABI's `ttprof_data`).
#[inline(always)]
#[cfg_attr(not(all(target_arch = "riscv32", feature = "capi")), allow(dead_code))]
pub(crate) fn data_id(id: SiteId, value: u64) {
    data_word(id as u32, value)
}

/// [`data`] by the site's id word (below 2^16).
#[inline(always)]
fn data_word(id: u32, value: u64) {
    #[cfg(all(target_arch = "riscv32", feature = "timestamper"))]
    return crate::stamper::data(id, value);
    #[cfg(not(all(target_arch = "riscv32", feature = "timestamper")))]
    crate::records::data(id, value);
}

/// Cycles summed over many measurements and recorded once (at kernel exit or on
/// [`SumZone::emit`]). See [`crate::sum_zone!`].
///
/// The layout is fixed (`repr(C)`: site address, count, total; 16 bytes) because the
/// runtime walks the `.ttprof_sums` section as an array of them, and the host checks every
/// entry's site in the ELF.
#[repr(C)]
pub struct SumZone {
    site: Site,
    count: UnsafeCell<u32>,
    total: UnsafeCell<u64>,
}

// A kernel image runs on exactly one core, and the host simulator gives every thread its
// own core; a sum zone is never touched by two cores.
unsafe impl Sync for SumZone {}

impl SumZone {
    #[doc(hidden)]
    pub const fn __new(site: Site) -> SumZone {
        SumZone {
            site,
            count: UnsafeCell::new(0),
            total: UnsafeCell::new(0),
        }
    }

    /// Starts one measurement; it ends when the guard is dropped.
    #[inline(always)]
    pub fn measure(&'static self) -> SumGuard {
        SumGuard {
            start: crate::hw::clock_lo(),
            sum: self,
        }
    }

    /// Records the total so far (if any) and starts a new one.
    pub fn emit(&self) {
        let (count, total) = unsafe { (*self.count.get(), *self.total.get()) };
        if count == 0 {
            return;
        }
        unsafe {
            *self.count.get() = 0;
            *self.total.get() = 0;
        }
        if producer::recording() {
            producer::record(&Record::Sum {
                id: self.site.id(),
                time: producer::now(),
                count,
                total,
            });
        }
    }

    pub(crate) fn reset(&self) {
        unsafe {
            *self.count.get() = 0;
            *self.total.get() = 0;
        }
    }
}

/// One measurement of a [`SumZone`].
#[must_use = "the measurement ends when this guard is dropped"]
pub struct SumGuard {
    start: u32,
    sum: &'static SumZone,
}

impl Drop for SumGuard {
    #[inline(always)]
    fn drop(&mut self) {
        let d = crate::hw::clock_lo().wrapping_sub(self.start);
        unsafe {
            *self.sum.count.get() += 1;
            *self.sum.total.get() += d as u64;
        }
    }
}

/// Writes a zone whose 64-bit times the caller measured (the FW and KERNEL wrappers).
pub(crate) fn record_span(id: SiteId, start: u64, end: u64) {
    producer::record_always(&Record::Zone {
        id,
        end,
        duration: end - start,
        value: None,
    });
}

/// The site of the `PROFILER-STALL` zone recorded around each wait for the consumer.
pub(crate) fn stall_site() -> SiteId {
    ttprof_rt_macros::__site!(crate, zone, "PROFILER-STALL").id()
}
