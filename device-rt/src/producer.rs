//! The ring producer: everything that is not the hot path.
//!
//! The producer owns `HEAD`, the consumer (host) owns `TAIL`; both are free-running byte
//! counters (see `riscv_linker::profiler`). The producer writes a record's bytes, then a
//! `fence w,w`, then `HEAD`: no read-modify-write on shared words. Short zones (the hot
//! path in [`crate::zone`]) are written without publishing: `HEAD` advances at the next
//! slow path, at the latest every 2^15 cycles of zone activity, and at kernel exit.
//!
//! A close the hot path could not prove exact comes here: the slow path writes the zone in
//! whatever form is exact and moves the *anchor* to the new `ref` (the time of the last
//! record), so the zones that open next close on the hot path again: one slow close per
//! 2^15 cycles of dense zones.
//!
//! See docs/design/ring-protocol.md for why this needs no atomics and what a full ring
//! does, and docs/design/ring-encoding.md for why the anchor makes short zones exact and how
//! the host flags launches of 2^32 cycles or more.

use crate::hw;
use crate::wire::{self, Encoded, Record, SiteId, HOT_ROOM, SHORT_LIMIT};
use riscv_linker::profiler::{self, ring, tile};

/// Runtime-private words of the ring control block (offsets from the block).
pub(crate) mod private {
    use riscv_linker::profiler::ring::PRIVATE;
    /// Write pointer just after the last record written by a slow path (or the wrap point).
    pub const SLOW_TP: u32 = PRIVATE;
    /// The decoder's `ref` after the record ending at `SLOW_TP`.
    pub const REF_LO: u32 = PRIVATE + 0x04;
    pub const REF_HI: u32 = PRIVATE + 0x08;
    /// The current anchor (kept while the hot word `ANCHOR` is 0 because recording is off).
    pub const ANCHOR_LO: u32 = PRIVATE + 0x0C;
    pub const ANCHOR_HI: u32 = PRIVATE + 0x10;
    /// The counter value (`HEAD` units) of the ring's first byte in the current lap.
    pub const LAP: u32 = riscv_linker::profiler::ring::LAP;
    /// Records dropped and not yet reported by a `Loss` record, with their time span.
    pub const LOSS_COUNT: u32 = PRIVATE + 0x18;
    pub const LOSS_FIRST_LO: u32 = PRIVATE + 0x1C;
    pub const LOSS_FIRST_HI: u32 = PRIVATE + 0x20;
    pub const LOSS_LAST_LO: u32 = PRIVATE + 0x24;
    pub const LOSS_LAST_HI: u32 = PRIVATE + 0x28;
    /// Effective full-ring policy of this launch: `tile::POLICY_BLOCK` or `POLICY_DROP`.
    pub const POLICY: u32 = PRIVATE + 0x2C;
    /// `PENDING_RUN` bit.
    pub const PENDING: u32 = PRIVATE + 0x30;
    /// Run id at the first loss counted in `LOSS_COUNT`.
    pub const LOSS_RUN: u32 = PRIVATE + 0x34;
    /// Time of this launch's `Run` record.
    pub const RUN_TIME_LO: u32 = PRIVATE + 0x38;
    pub const RUN_TIME_HI: u32 = PRIVATE + 0x3C;
}

/// `PENDING` bit 0: the `Run` record of this launch is still to be written.
const PENDING_RUN: u32 = 1 << 0;

/// A wait for the consumer gives up after this many cycles without progress.
pub const STALL_TIMEOUT_CYCLES: u64 = 1 << 30;

#[inline(always)]
fn rd(off: u32) -> u32 {
    hw::rd32(hw::ring_block() + off)
}

#[inline(always)]
fn wr(off: u32, v: u32) {
    hw::wr32(hw::ring_block() + off, v)
}

fn rd64(lo: u32, hi: u32) -> u64 {
    (rd(hi) as u64) << 32 | rd(lo) as u64
}

fn wr64(lo: u32, hi: u32, v: u64) {
    wr(lo, v as u32);
    wr(hi, (v >> 32) as u32);
}

fn tile_word(off: u32) -> u32 {
    hw::rd32(tile_block() + off)
}

/// The tile control block: `profiler::TILE_BLOCK` in ttprof's layout; under tt-metal
/// (feature `tt-metal`) the kernel's `__ttprof_tile_block` (ttprof_tt_metal_entry.h), since
/// tt-metal's mailboxes (its launch messages) are at `profiler::TILE_BLOCK`.
#[cfg(not(all(feature = "tt-metal", target_arch = "riscv32")))]
fn tile_block() -> u32 {
    profiler::TILE_BLOCK
}
#[cfg(all(feature = "tt-metal", target_arch = "riscv32"))]
fn tile_block() -> u32 {
    extern "C" {
        static mut __ttprof_tile_block: [u32; 16];
    }
    #[allow(unused_unsafe)]
    unsafe {
        core::ptr::addr_of_mut!(__ttprof_tile_block) as u32
    }
}

/// The 64-bit time of a clock low word read at most 2^31 cycles ago.
pub(crate) fn widen(lo: u32) -> u64 {
    let now = hw::clock64();
    now - (now as u32).wrapping_sub(lo) as u64
}

/// The anchor: the last one a slow path set (`a`), or the hot word if the record routines'
/// refreshes and long zones (`records`), which write only the hot word (and its L1 copy),
/// moved it past `a`. Both are at or before the decoder's `ref`, so the later is the
/// anchor. A refresh may leave the hot word one cycle behind `a` (`(t - 1) | 1`), and more
/// than 2^31 cycles past it only after long zones without any slow path: then `a`, the
/// earlier, is still a lower bound of `ref`.
fn anchor() -> u64 {
    let a = rd64(private::ANCHOR_LO, private::ANCHOR_HI);
    let ahead = hw::hot().wrapping_sub(a as u32) as i32;
    if hw::hot() == 0 || ahead <= 0 {
        return a;
    }
    a + ahead as u64
}

/// The record routines' anchor refresh (`__ttprof_refresh` in `records`), for the host
/// simulator: a record at `t`, 2^15 cycles or more after the anchor `a` its site loaded,
/// is still written in its 16-bit form if `t - a < 2^16` and recording is on (the hot word
/// is not 0 and the host has not set `CONTROL_DISABLE`); the hot word (and its L1 copy) moves to `(t - 1) | 1`, and what is written so far
/// is published. Returns whether it did.
#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn refresh(t: u32, a: u32) -> bool {
    let off = hw::hot() == 0 || tile_word(tile::CONTROL) & tile::CONTROL_DISABLE != 0;
    if t.wrapping_sub(a) >= 1 << 16 || off {
        return false;
    }
    let anchor = t.wrapping_sub(1) | 1;
    hw::set_hot(anchor);
    wr(ring::ANCHOR, anchor);
    publish();
    true
}

/// The hot word of anchor `a`: its low word, `u32::MAX` for 0 (0 means "off").
fn hot_word(a: u64) -> u32 {
    if a as u32 == 0 {
        u32::MAX
    } else {
        a as u32
    }
}

/// Makes `a` the anchor; the hot word gets it too unless recording is off.
fn set_anchor(a: u64, recording: bool) {
    // The hot word uses 0 for "off", so an anchor whose low word is 0 is published one
    // cycle early. The hot path then admits opens up to 2^15 cycles after `a - 1`; times
    // never run backwards, so every admitted open is still at or after `a`.
    wr64(private::ANCHOR_LO, private::ANCHOR_HI, a);
    let hot = if recording { hot_word(a) } else { 0 };
    wr(ring::ANCHOR, hot);
    hw::set_hot(hot);
}

/// Whether the host has switched recording off; if so the hot word is cleared (and the write
/// limit with it: recording off means `gp <= tp`, see [`update_limit`]).
/// Called after the anchor was written, so a host that writes `CONTROL` and then the hot
/// word cannot have its "off" overwritten (see docs/design/ring-encoding.md).
fn honour_disable() -> bool {
    if tile_word(tile::CONTROL) & tile::CONTROL_DISABLE != 0 {
        wr(ring::ANCHOR, 0);
        hw::set_hot(0);
        hw::set_gp(hw::tp());
        return true;
    }
    false
}

/// The decoder's `ref` after every record written so far, or a time at or before it: the
/// encoder needs no more (a time `t` carried in `b` bits is exact if `t - ref < 2^b`, which
/// `t - lower bound < 2^b` proves). Exact when the last record was a slow path's; after
/// hot-path records (short zones, events, data, value zones, long zones: their forms
/// differ) it is the anchor, which every hot-path record's time is at or after.
fn current_ref() -> u64 {
    if hw::tp() == rd(private::SLOW_TP) {
        return rd64(private::REF_LO, private::REF_HI);
    }
    anchor()
}

/// Counter value of the write pointer.
fn position(tp: u32) -> u32 {
    rd(private::LAP).wrapping_add(tp - hw::ring_base())
}

fn publish() {
    hw::publish_fence();
    wr(ring::HEAD, position(hw::tp()));
}

/// Bytes the consumer has freed ahead of the write pointer (0 if `TAIL` is impossible).
fn free_bytes(pos: u32) -> u32 {
    let used = pos.wrapping_sub(hw::rd32(hw::ring_block() + ring::TAIL));
    hw::ring_capacity().saturating_sub(used)
}

/// Recomputes `gp` so that `tp < gp` exactly when a record of [`HOT_ROOM`] bytes fits
/// without a wrap, nothing is pending and recording is on. The record routines rely on
/// both: `tp < gp` is their only room check, and a long zone's close writes the anchor
/// without re-reading the hot word, since `tp < gp` proves recording is on (every place
/// that clears the hot word lowers `gp` to `tp`).
fn update_limit() {
    let tp = hw::tp();
    let pending = rd(private::PENDING) != 0 || rd(private::LOSS_COUNT) != 0;
    let room = free_bytes(position(tp)).min(hw::ring_base() + hw::ring_capacity() - tp);
    let limit = if pending || room < HOT_ROOM || !recording() {
        tp
    } else {
        tp + room - HOT_ROOM + 1
    };
    hw::set_gp(limit);
}

/// The consumer's heartbeat, if one is attached that this producer has not given up on.
fn consumer_heartbeat() -> Option<u32> {
    let beat = tile_word(tile::CONSUMER);
    (beat != 0 && beat != rd(ring::CONSUMER_GONE)).then_some(beat)
}

/// Makes `n` contiguous bytes free at the write pointer, wrapping to the ring's start when
/// needed. Returns false when the ring is full and the policy (or a missing consumer)
/// says not to wait; on a successful wait, `stall` receives its start and end times.
fn reserve(n: u32, stall: &mut Option<(u64, u64)>) -> bool {
    let base = hw::ring_base();
    let end = base + hw::ring_capacity();
    let mut wait_start: Option<u64> = None;
    let mut last_beat = (0u32, 0u64);
    loop {
        let tp = hw::tp();
        let free = free_bytes(position(tp));
        let to_end = end - tp;
        // A record that would leave less than `HOT_ROOM` bytes before the ring's end goes
        // to its start instead when the rest of the lap and its own bytes there are free
        // (never dropping a record that fits where it is), so that the hot path hands
        // over to the slow path once a lap, not once per record of its last bytes.
        let wrap = if n > to_end {
            to_end <= free
        } else {
            n + HOT_ROOM > to_end && tp != base && to_end + n <= free
        };
        if n <= to_end && n <= free && !wrap {
            if let Some(start) = wait_start {
                *stall = Some((start, hw::clock64()));
            }
            return true;
        }
        if wrap {
            // Skip the rest of this lap: a PAD if there is room for one.
            let reference = current_ref();
            if to_end >= 4 {
                hw::wr16(tp, 0);
                hw::wr16(tp + 2, wire::PAD);
            }
            wr(
                private::LAP,
                rd(private::LAP).wrapping_add(hw::ring_capacity()),
            );
            hw::set_tp(base);
            wr(private::SLOW_TP, base);
            wr64(private::REF_LO, private::REF_HI, reference);
            publish();
            continue;
        }
        // Full.
        let beat = match consumer_heartbeat() {
            Some(b) if rd(private::POLICY) == tile::POLICY_BLOCK => b,
            _ => return false,
        };
        let now = hw::clock64();
        match wait_start {
            None => {
                publish();
                wr(ring::STALLS, rd(ring::STALLS).wrapping_add(1));
                wait_start = Some(now);
                last_beat = (beat, now);
            }
            Some(start) if now - start > STALL_TIMEOUT_CYCLES => return false,
            Some(_) if beat != last_beat.0 => last_beat = (beat, now),
            Some(_) if now - last_beat.1 > tile::CONSUMER_LEASE_CYCLES => {
                // The consumer stopped draining without detaching (killed): stop waiting
                // for it, now and in later launches, until its heartbeat changes.
                wr(ring::CONSUMER_GONE, beat);
                return false;
            }
            Some(_) => {}
        }
        hw::spin_hint();
    }
}

/// Writes an encoded record at the write pointer (space already reserved).
fn put(enc: &Encoded, new_ref: u64) {
    let tp = hw::tp();
    for (i, h) in enc.as_slice().iter().enumerate() {
        hw::wr16(tp + 2 * i as u32, *h);
    }
    let tp = tp + enc.bytes();
    hw::set_tp(tp);
    wr(private::SLOW_TP, tp);
    wr64(private::REF_LO, private::REF_HI, new_ref);
}

/// Counts one dropped record.
fn count_drop(now: u64) {
    let n = rd(private::LOSS_COUNT);
    if n == 0 {
        wr64(private::LOSS_FIRST_LO, private::LOSS_FIRST_HI, now);
        wr(private::LOSS_RUN, rd(ring::RUN_ID));
    }
    wr64(private::LOSS_LAST_LO, private::LOSS_LAST_HI, now);
    wr(private::LOSS_COUNT, n.wrapping_add(1));
    wr(ring::DROPPED, rd(ring::DROPPED).wrapping_add(1));
}

/// Writes one record, first any pending `Run` and `Loss` records. Returns whether `r` was
/// written; if not, it was counted as dropped. Internal records (`Time`) pass `counted:
/// false`: a failure to write them is reported to the caller, who decides what it costs.
fn emit(r: Option<&Record>, counted: bool) -> bool {
    let mut stall = None;
    let ok = emit_inner(r, counted, &mut stall);
    if let Some((start, end)) = stall {
        // The wait itself is a zone, after the record it delayed.
        let z = Record::Zone {
            id: crate::zone::stall_site(),
            end,
            duration: end - start,
            value: None,
        };
        let mut ignored = None;
        emit_inner(Some(&z), true, &mut ignored);
    }
    publish();
    update_limit();
    ok
}

fn emit_inner(r: Option<&Record>, counted: bool, stall: &mut Option<(u64, u64)>) -> bool {
    // Losses first: they may belong to the previous launch, whose records come before its
    // successor's `Run` record.
    if rd(private::LOSS_COUNT) != 0 {
        let loss = Record::Loss {
            count: rd(private::LOSS_COUNT),
            first_run: rd(private::LOSS_RUN),
            last_run: rd(ring::RUN_ID),
            first: rd64(private::LOSS_FIRST_LO, private::LOSS_FIRST_HI),
            last: rd64(private::LOSS_LAST_LO, private::LOSS_LAST_HI),
        };
        if !write(&loss, stall) {
            return drop_record(r, counted);
        }
        wr(private::LOSS_COUNT, 0);
    }
    // Pending launch marker: the launch's records must follow it.
    if rd(private::PENDING) & PENDING_RUN != 0 {
        let run = Record::Run {
            run_id: rd(ring::RUN_ID),
            time: rd64(private::RUN_TIME_LO, private::RUN_TIME_HI),
        };
        if !write(&run, stall) {
            return drop_record(r, counted);
        }
        wr(private::PENDING, rd(private::PENDING) & !PENDING_RUN);
    }
    match r {
        None => true,
        Some(r) => write(r, stall) || drop_record(Some(r), counted),
    }
}

fn drop_record(r: Option<&Record>, counted: bool) -> bool {
    if r.is_some() && counted {
        count_drop(hw::clock64());
    }
    false
}

fn write(r: &Record, stall: &mut Option<(u64, u64)>) -> bool {
    let reference = current_ref();
    let Some(enc) = wire::encode(r, reference) else {
        // A time before the previous record cannot be encoded; it would be a runtime bug.
        return false;
    };
    if !reserve(enc.bytes(), stall) {
        return false;
    }
    // A wrap inside `reserve` does not change `ref`, so the encoding is still valid.
    put(&enc, r.ref_time().unwrap_or(reference));
    true
}

// ---------------------------------------------------------------------------------------
// Slow paths of the hot-path zone (called from `zone.rs`).

/// The hot path could not write a short zone: its end is 2^15 cycles or more after the
/// anchor it opened with (a long zone, the first zone after a long gap, or the first close
/// of a dense run after 2^15 cycles), or the ring limit was reached, or something is
/// pending. Writes the zone in whatever form is exact (a long gap followed by a long zone,
/// an op-level zone, costs one 12-byte record), then moves the anchor to the new `ref`.
#[cold]
#[inline(never)]
pub(crate) fn slow_close(id: SiteId, start: u32, end: u32) {
    let duration = end.wrapping_sub(start);
    let near = [id, duration as u16, end as u16];
    let far: [u16; 6] = halves32(id, wire::Kind::Zone32, [duration, end]);
    let near = (duration < SHORT_LIMIT).then_some([&near[..], &near[..]]);
    if short_record(near, &far, end) {
        return;
    }
    let e = widen(end);
    emit(
        Some(&Record::Zone {
            id,
            end: e,
            duration: duration as u64,
            value: None,
        }),
        true,
    );
    // Unless the host switched recording off meanwhile (then the hot word stays 0).
    if recording() {
        set_anchor(current_ref(), true);
    }
    honour_disable();
}

/// A record's halfwords in a form of whole 32-bit fields after `id; h1`.
pub(crate) fn halves32<const N: usize, const H: usize>(
    id: SiteId,
    kind: wire::Kind,
    words: [u32; N],
) -> [u16; H] {
    const { assert!(H == 2 + 2 * N) };
    let mut h = [0u16; H];
    h[0] = id;
    h[1] = kind.header();
    for (i, w) in words.iter().enumerate() {
        h[2 + 2 * i] = *w as u16;
        h[3 + 2 * i] = (*w >> 16) as u16;
    }
    h
}

/// The common slow path of every hot-path record (a zone's close, an event, a datum, a value
/// zone): only the anchor was too old, and the ring has room without a wrap with nothing
/// pending (`tp < gp`). Writes the record as the hot path would, in its 16-bit-time form
/// (`near`: at a write pointer 0 or 2 mod 4, the same length; `None` if the record does
/// not fit it) if its time `t` is within 2^16 cycles of the decoder's `ref`, else in its
/// 32-bit-time form `far` (after a long zone, a long wait or a long gap; exact while the
/// launch is shorter than 2^32 cycles, as the hot path's), then anchors at `t` and
/// publishes. This runs at least every 2^15 cycles while records are written: a few dozen
/// instructions and no encoder. Returns false if it cannot.
pub(crate) fn short_record(near: Option<[&[u16]; 2]>, far: &[u16], t: u32) -> bool {
    if !recording() {
        return false;
    }
    let tp = hw::tp();
    let reference = current_ref();
    let gap = t.wrapping_sub(reference as u32);
    let halves = match near {
        Some(forms) if gap < 1 << 16 => forms[(tp & 2 != 0) as usize],
        _ => far,
    };
    // Every record here is at most `HOT_ROOM` bytes, which `tp < gp` promises.
    let n = 2 * halves.len() as u32;
    if n > HOT_ROOM || tp >= hw::gp() {
        return false;
    }
    for (i, h) in halves.iter().enumerate() {
        hw::wr16(tp + 2 * i as u32, *h);
    }
    hw::set_tp(tp + n);
    set_anchor(reference + gap as u64, true);
    publish();
    update_limit();
    honour_disable();
    true
}

/// The slow path of an event or a datum (`records`): the ring is full or something is
/// pending, or the anchor is 2^15 cycles old or more. Writes the record in whatever form is
/// exact, then moves the anchor to it, as [`slow_close`] does.
#[cold]
#[inline(never)]
pub(crate) fn slow_record(r: &Record) {
    if !recording() {
        return;
    }
    emit(Some(r), true);
    if recording() {
        set_anchor(current_ref(), true);
    }
    honour_disable();
}

/// The slow path of a value zone's close (`records`): as [`slow_record`].
#[cold]
#[inline(never)]
#[cfg_attr(
    all(target_arch = "riscv32", feature = "timestamper"),
    allow(dead_code)
)]
pub(crate) fn slow_value(id: SiteId, start: u32, end: u32, value: u32) {
    if !recording() {
        return;
    }
    close_value(id, start, end, value);
    if recording() {
        set_anchor(current_ref(), true);
    }
    honour_disable();
}

/// Closes a zone that carries a value in whatever form is exact (also the C ABI's
/// `ttprof_close_value`).
#[inline(never)]
#[cfg_attr(
    all(target_arch = "riscv32", feature = "timestamper"),
    allow(dead_code)
)]
pub(crate) fn close_value(id: SiteId, start: u32, end: u32, value: u32) {
    let e = widen(end);
    let duration = end.wrapping_sub(start) as u64;
    emit(
        Some(&Record::Zone {
            id,
            end: e,
            duration,
            value: Some(value),
        }),
        true,
    );
}

/// Whether records may be written now.
#[inline(always)]
pub(crate) fn recording() -> bool {
    hw::hot() != 0
}

/// Writes a record if recording is on (events, data, sums, wrapper zones).
#[inline(never)]
pub(crate) fn record(r: &Record) {
    if recording() {
        emit(Some(r), true);
    }
}

/// Writes a record of a launch that started with recording on (the wrapper zones), even if
/// the host switched recording off since.
#[inline(never)]
pub(crate) fn record_always(r: &Record) {
    emit(Some(r), true);
}

/// Publishes every record written so far (`HEAD`), so a consumer can read them before the
/// next slow path: tt-metal's `kernel_profiler::quick_push()`.
#[cfg(feature = "profile")]
#[inline(never)]
pub(crate) fn flush() {
    if rd(ring::STATE) & ring::STATE_RUNNING != 0 {
        publish();
    }
}

/// The current 64-bit time.
pub(crate) fn now() -> u64 {
    hw::clock64()
}

// ---------------------------------------------------------------------------------------
// Launch and exit.

fn tile_valid() -> bool {
    tile_word(tile::MAGIC) == profiler::TILE_MAGIC && tile_word(tile::VERSION) == profiler::VERSION
}

fn ring_valid() -> bool {
    let lap = rd(private::LAP);
    let head = rd(ring::HEAD);
    rd(ring::MAGIC) == profiler::RING_MAGIC
        && rd(ring::VERSION) == profiler::VERSION
        && rd(ring::RISC) == hw::risc().index() as u32
        && rd(ring::BASE) == hw::ring_base()
        && rd(ring::CAPACITY) == hw::ring_capacity()
        && head.wrapping_sub(lap) <= hw::ring_capacity()
}

/// Initialises the tile block (if no launcher did) and this RISC's ring block (if invalid).
fn init_blocks() {
    if !tile_valid() {
        // Idempotent: all five cores may do this at once and write the same values.
        let t = tile_block();
        hw::wr32(t + tile::CONTROL, 0);
        hw::wr32(t + tile::CONSUMER, 0);
        hw::wr32(t + tile::ARCH, hw::arch_id());
        hw::wr32(t + tile::VERSION, profiler::VERSION);
        hw::wr32(t + tile::MAGIC, profiler::TILE_MAGIC);
    }
    if !ring_valid() {
        for off in (ring::HEAD..profiler::RING_BLOCK_SIZE).step_by(4) {
            wr(off, 0);
        }
        wr(ring::RISC, hw::risc().index() as u32);
        wr(ring::BASE, hw::ring_base());
        wr(ring::CAPACITY, hw::ring_capacity());
        wr(ring::VERSION, profiler::VERSION);
        wr(ring::MAGIC, profiler::RING_MAGIC);
        wr(private::SLOW_TP, hw::ring_base());
    }
}

/// Starts a launch at time `t`: validates the control blocks, restores the write pointer,
/// writes the `Run` record. Returns whether recording is on for this launch.
pub(crate) fn begin_launch(t: u64) -> bool {
    init_blocks();
    let run_id = tile_word(tile::RUN_ID);
    wr(ring::RUN_ID, run_id);
    wr(ring::STATE, ring::STATE_RUNNING);
    let tp = hw::ring_base() + rd(ring::HEAD).wrapping_sub(rd(private::LAP));
    hw::set_tp(tp);
    // Short zones of the last launch after its last slow record: fold them into REF.
    let reference = current_ref();
    wr(private::SLOW_TP, tp);
    wr64(private::REF_LO, private::REF_HI, reference);
    hw::set_gp(tp);
    let control = tile_word(tile::CONTROL);
    let policy = match (control & tile::CONTROL_POLICY_MASK) >> tile::CONTROL_POLICY_SHIFT {
        tile::POLICY_BLOCK => tile::POLICY_BLOCK,
        tile::POLICY_DROP => tile::POLICY_DROP,
        _ if cfg!(feature = "drop-when-full") => tile::POLICY_DROP,
        _ => tile::POLICY_BLOCK,
    };
    wr(private::POLICY, policy);
    if control & tile::CONTROL_DISABLE != 0 {
        set_anchor(t, false);
        return false;
    }
    // The Run record sets the decoder's ref to `t`; until it is written nothing else is.
    wr64(private::RUN_TIME_LO, private::RUN_TIME_HI, t);
    wr(private::PENDING, PENDING_RUN);
    // Anchor at the launch time: every record of this launch comes after the Run record.
    // Set first, so that the limit `emit` computes sees recording on (the Run record
    // itself is encoded against `REF`: `tp` is `SLOW_TP` here).
    set_anchor(t, true);
    emit(None, false);
    !honour_disable()
}

/// Ends a launch: publishes everything and marks the ring block.
pub(crate) fn end_launch() {
    publish();
    hw::set_gp(hw::tp());
    wr(ring::STATE, ring::STATE_EXITED);
}

/// Marks a panicking kernel's ring block (the host reports it).
#[cfg(target_arch = "riscv32")]
pub(crate) fn mark_panic() {
    publish();
    wr(ring::STATE, ring::STATE_EXITED | ring::STATE_PANICKED);
}
