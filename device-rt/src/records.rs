//! The hot paths of every record that is not a short zone: events (and signals), data,
//! value zones, and the close of a zone longer than 2^15 cycles.
//!
//! Each is one small hand-written routine shared by every site (Rust and C alike: the C
//! header calls the same symbols), so a record costs a few instructions at its site and
//! ~20 in the routine, and the kernel's instruction cache holds one copy of them. A routine
//! writes a fixed-size record straight into the ring with a 16-bit time, as the short zone
//! does, and only a full ring, a pending record or an anchor older than 2^15 cycles sends
//! it to the slow path (`producer`). The wire forms are [`crate::wire::Kind::EventShort`],
//! [`crate::wire::Kind::DataShort32`], [`crate::wire::Kind::DataShort`], [`crate::wire::Kind::ValueZoneShort`]
//! and, for a long zone, [`crate::wire::Kind::Zone32`].
//!
//! **Calling convention** (not the C ABI): `jal t0, __ttprof_rec_*`, arguments in `a0..a3`;
//! a routine returns with `jr t0` and clobbers `t0..t3` and `a0..a3` only. Its cold path
//! saves every other caller-saved register around its call into Rust, so a site never pays
//! for the slow path's registers.
//!
//! **Why the times are exact** (docs/design/ring-encoding.md): a point record loads the
//! anchor `A` (the hot word, 0 = recording off) before it reads the clock `t`, and writes
//! the 16-bit form only if `t - A < 2^15`; `A` is at or before the decoder's `ref`, so
//! `t - ref < 2^16`. A value zone checks its end against the anchor its open loaded, as a
//! zone does. A long zone (duration `>= 2^15`) is written in the 32-bit form, exact while
//! the launch is shorter than 2^32 cycles (the hot path's clock is 32 bits: the host flags
//! longer launches). `tp < gp` is a routine's only room check: the limit promises room for
//! every record a routine writes ([`crate::wire::HOT_ROOM`]), and it is at
//! or below `tp` whenever recording is off (`producer::update_limit`).
//!
//! **Stores.** On Wormhole every L1 store holds the port 5 cycles, so a record costs at
//! least 5 cycles per store. The routines write 32-bit words where the write pointer's
//! alignment allows it (records are halfword-aligned): an event is 2 stores, 32-bit data 3,
//! 64-bit data 4, a value zone or a long zone 3 or 4 (halfword stores would need 3, 5, 7,
//! 6 and 6).

// With the timestamper backend events, data and value zones go to the timestamper.
#![cfg_attr(
    all(target_arch = "riscv32", feature = "timestamper"),
    allow(dead_code)
)]

use crate::producer;
use crate::wire::{Kind, Record, SiteId, SHORT_LIMIT};

// The routines. Headers: EventShort 0x8D00, DataShort32 0x8E00, DataShort 0x8F00,
// ValueZoneShort 0x9000, Zone32 0x8100 (`wire::Kind::header`; checked by a test).
#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    r#"
    .pushsection .text.ttprof_records,"ax",@progbits
    .p2align 2

    # The clock into t2.
    .macro ttprof_clock
    lui  t2, %hi(__ttprof_wall_clock_l)
    lw   t2, %lo(__ttprof_wall_clock_l)(t2)
    .endm

    # The anchor into t1, the clock into t2 (two loads back to back; the anchor first).
    .macro ttprof_anchor_and_clock
    lui  t1, %hi(__ttprof_hot)
    lw   t1, %lo(__ttprof_hot)(t1)
    ttprof_clock
    .endm

    # The hot code comes first, every routine's cold stubs after it (`.Lx_*` labels), so
    # that the code a record runs in the common case is as few cache lines as it can be.
    #
    # Each routine checks the room first, stores what does not depend on the clock, then
    # checks the time: the clock's load latency runs under those stores. Bytes stored past
    # tp belong to nobody until tp moves, so a slow path after them writes over them. A
    # failed time check (t1 = t - A, 2^15 or more; t2 = t) goes to a stub that calls
    # __ttprof_refresh and goes on in the 16-bit form, or to the slow path.

    # a0 = site id.
    .globl __ttprof_rec_event
    .type __ttprof_rec_event, @function
__ttprof_rec_event:
    ttprof_anchor_and_clock
    beqz t1, 9f
    bgeu tp, gp, .Lx_event_slow
    andi a1, tp, 2
    lui  t3, 8
    bnez a1, 2f
    lui  a1, 0x8D000
    or   a1, a1, a0
    sw   a1, 0(tp)
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_event_even
.Lr_event_even:
    sh   t2, 4(tp)
    addi tp, tp, 6
    jr   t0
2:  sh   a0, 0(tp)
    lui  a1, 0x9
    addi a1, a1, -0x300
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_event_odd
.Lr_event_odd:
    slli t2, t2, 16
    or   t2, t2, a1
    sw   t2, 2(tp)
    addi tp, tp, 6
9:  jr   t0

    .size __ttprof_rec_event, . - __ttprof_rec_event

    # a0 = site id, a1 = data (32 bits).
    .globl __ttprof_rec_data32
    .type __ttprof_rec_data32, @function
__ttprof_rec_data32:
    ttprof_anchor_and_clock
    beqz t1, 9f
    bgeu tp, gp, .Lx_data32_slow
    andi a2, tp, 2
    lui  t3, 8
    bnez a2, 2f
    lui  a2, 0x8E000
    or   a2, a2, a0
    sw   a2, 0(tp)
    sw   a1, 4(tp)
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_data32_even
.Lr_data32_even:
    sh   t2, 8(tp)
    addi tp, tp, 10
    jr   t0
2:  sh   a0, 0(tp)
    sw   a1, 6(tp)
    lui  a2, 0x9
    addi a2, a2, 0x100
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_data32_odd
.Lr_data32_odd:
    slli t2, t2, 16
    or   t2, t2, a2
    sw   t2, 2(tp)
    addi tp, tp, 10
9:  jr   t0

    .size __ttprof_rec_data32, . - __ttprof_rec_data32

    # a0 = site id, a1 = data's low word, a2 = its high word.
    .globl __ttprof_rec_data64
    .type __ttprof_rec_data64, @function
__ttprof_rec_data64:
    ttprof_anchor_and_clock
    beqz t1, 9f
    bgeu tp, gp, .Lx_data64_slow
    andi a3, tp, 2
    lui  t3, 8
    bnez a3, 2f
    lui  a3, 0x8F000
    or   a3, a3, a0
    sw   a3, 0(tp)
    sw   a1, 4(tp)
    sw   a2, 8(tp)
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_data64_even
.Lr_data64_even:
    sh   t2, 12(tp)
    addi tp, tp, 14
    jr   t0
2:  sh   a0, 0(tp)
    sw   a1, 6(tp)
    sw   a2, 10(tp)
    lui  a3, 0x9
    addi a3, a3, 0x200
    sub  t1, t2, t1
    bgeu t1, t3, .Lx_data64_odd
.Lr_data64_odd:
    slli t2, t2, 16
    or   t2, t2, a3
    sw   t2, 2(tp)
    addi tp, tp, 14
9:  jr   t0

    .size __ttprof_rec_data64, . - __ttprof_rec_data64

    # A counted zone's close: a value zone's whose value is a3 - a4 (a3 = the counter read
    # at the close, a4 = its value at the open; a4 is read, not clobbered). The difference
    # is taken after the clock read and the checks, so that the counter's load latency (7
    # or more) runs under them instead of stalling the site.
    .globl __ttprof_rec_counted
    .type __ttprof_rec_counted, @function
__ttprof_rec_counted:
    ttprof_clock
    beqz a2, 9f
    bgeu tp, gp, .Lx_counted_slow
    sub  a3, a3, a4
    j    .Lr_value_roomy
9:  jr   t0
    .size __ttprof_rec_counted, . - __ttprof_rec_counted

    # A value zone's close: a0 = site id, a1 = start, a2 = the anchor its open loaded
    # (0: not recorded), a3 = value.
    .globl __ttprof_rec_value
    .type __ttprof_rec_value, @function
__ttprof_rec_value:
    ttprof_clock
    beqz a2, 9f
    bgeu tp, gp, .Lx_value_slow
.Lr_value_roomy:
    andi t1, tp, 2
    lui  t3, 8
    bnez t1, 2f
    lui  t1, 0x90000
    or   t1, t1, a0
    sw   t1, 0(tp)
    sw   a3, 4(tp)
    sub  t1, t2, a2
    bgeu t1, t3, .Lx_value_even
.Lr_value_even:
    sub  a1, t2, a1
    slli t1, t2, 16
    or   a1, a1, t1
    sw   a1, 8(tp)
    addi tp, tp, 12
    jr   t0
2:  sh   a0, 0(tp)
    sw   a3, 6(tp)
    sub  t1, t2, a2
    bgeu t1, t3, .Lx_value_odd
.Lr_value_odd:
    lui  t1, 0x9
    addi t1, t1, 0x300
    sub  a1, t2, a1
    slli a1, a1, 16
    or   a1, a1, t1
    sw   a1, 2(tp)
    sh   t2, 10(tp)
    addi tp, tp, 12
9:  jr   t0

    .size __ttprof_rec_value, . - __ttprof_rec_value

    # A recorded zone's close (the site's guard found the anchor non-zero, then read the
    # end): a0 = site id, a1 = start, a2 = the anchor its open loaded, a3 = end. The room
    # check and the id's store come first: they do not need the end, which the site read
    # just before its jal (the subtractions wait for it). A zone of 2^15 cycles or more is
    # written here in the 32-bit form (`id; h1; duration32; end32`, Zone32), which moves the
    # decoder's `ref` to its end: the anchor moves there too (the hot word only: see
    # `producer::anchor`), so that the records after a long wait keep their 16-bit forms.
    # `tp < gp` promised room for it and that recording is on, so the long form checks
    # neither again (nor re-reads the hot word, which a nested slow path may have cleared:
    # that lowers `gp` too).
    .globl __ttprof_zone_end
    .type __ttprof_zone_end, @function
__ttprof_zone_end:
    bgeu tp, gp, .Lx_zone_full
    sh   a0, 0(tp)
    lui  t3, 8
    sub  t1, a3, a2
    sub  a1, a3, a1
    bgeu t1, t3, 5f
.Lr_zone:
    sh   a1, 2(tp)
    sh   a3, 4(tp)
    addi tp, tp, 6
    jr   t0
5:  bltu a1, t3, .Lx_zone_old
    # The long form: `id` is stored; h1 = 0x8100 (t3 + 0x100); the new anchor (end - 1) | 1,
    # at or before the new `ref` and never 0.
    andi t2, tp, 2
    addi t3, t3, 0x100
    lui  t1, %hi(__ttprof_hot)
    bnez t2, 2f
    sh   t3, 2(tp)
    sw   a1, 4(tp)
    sw   a3, 8(tp)
    addi t2, a3, -1
    ori  t2, t2, 1
    sw   t2, %lo(__ttprof_hot)(t1)
    addi tp, tp, 12
    jr   t0
2:  slli t2, a1, 16
    or   t3, t3, t2
    sw   t3, 2(tp)
    srli a0, a1, 16
    slli t2, a3, 16
    or   a0, a0, t2
    sw   a0, 6(tp)
    srli t2, a3, 16
    sh   t2, 10(tp)
    addi t2, a3, -1
    ori  t2, t2, 1
    sw   t2, %lo(__ttprof_hot)(t1)
    addi tp, tp, 12
    jr   t0

    .size __ttprof_zone_end, . - __ttprof_zone_end

    # The cold stubs. A failed time check: refresh the anchor and go on, or the slow path.
    # (One symbol for them all, so that a profile of the kernel names them.)
    .type __ttprof_rec_stubs, @function
__ttprof_rec_stubs:
.Lx_event_even:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_event_even
    j    .Lx_event_slow
.Lx_event_odd:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_event_odd
.Lx_event_slow:
    mv   a1, t2
    lui  t3, %hi(ttprof_rec_slow_event)
    addi t3, t3, %lo(ttprof_rec_slow_event)
    j    __ttprof_rec_cold
.Lx_data32_even:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_data32_even
    j    .Lx_data32_slow
.Lx_data32_odd:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_data32_odd
.Lx_data32_slow:
    li   a2, 0
    mv   a3, t2
    lui  t3, %hi(ttprof_rec_slow_data)
    addi t3, t3, %lo(ttprof_rec_slow_data)
    j    __ttprof_rec_cold
.Lx_data64_even:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_data64_even
    j    .Lx_data64_slow
.Lx_data64_odd:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_data64_odd
.Lx_data64_slow:
    mv   a3, t2
    lui  t3, %hi(ttprof_rec_slow_data)
    addi t3, t3, %lo(ttprof_rec_slow_data)
    j    __ttprof_rec_cold
.Lx_value_even:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_value_even
    j    .Lx_value_slow
.Lx_value_odd:
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_value_odd
.Lx_counted_slow:
    sub  a3, a3, a4
.Lx_value_slow:
    mv   a2, t2
    lui  t3, %hi(ttprof_rec_slow_value)
    addi t3, t3, %lo(ttprof_rec_slow_value)
    j    __ttprof_rec_cold
    # A zone shorter than 2^15 cycles after an old anchor: refresh, or the slow close.
.Lx_zone_old:
    mv   t2, a3
    jal  t3, __ttprof_refresh
    bnez t1, .Lr_zone
    j    .Lx_zone_slow
    # A zone's close that the routine could not finish (a full ring, something pending,
    # an anchor 2^16 cycles old or more, recording switched off): a0 = site id, a1 = its
    # duration (.Lx_zone_slow) or its start (.Lx_zone_full), a3 = end.
.Lx_zone_slow:
    sub  a1, a3, a1
.Lx_zone_full:
    mv   a2, a3
    lui  t3, %hi(ttprof_rec_slow_close)
    addi t3, t3, %lo(ttprof_rec_slow_close)
    j    __ttprof_rec_cold

    .size __ttprof_rec_stubs, . - __ttprof_rec_stubs

    # The anchor's refresh, every 2^15 cycles while records are written (the decoder's
    # `ref` is now the last record's time, at or after A): t1 = t - A, t2 = t; returns to
    # t3 with t1 = the new anchor (non-zero: (t - 1) | 1, at or before t) written to the hot
    # word and its L1 copy, and what is written so far published (HEAD = LAP + tp - base,
    # as a slow path does, so that a consumer keeps draining); or t1 = 0 when the slow path
    # must run: t - A is 2^16 or more, or recording is off (the hot word is 0, or the host
    # set `CONTROL` bit 0, which the slow path honours). Clobbers t1 only.
    .type __ttprof_refresh, @function
__ttprof_refresh:
    srli t1, t1, 16
    bnez t1, 1f
    addi sp, sp, -16
    sw   a0, 0(sp)
    sw   a1, 4(sp)
    lui  a0, %hi(__ttprof_hot)
    lw   a0, %lo(__ttprof_hot)(a0)
    beqz a0, 2f
    lui  a0, %hi(__ttprof_tile_block + {control})
    lw   a0, %lo(__ttprof_tile_block + {control})(a0)
    andi a0, a0, {disable}
    bnez a0, 2f
    addi t1, t2, -1
    ori  t1, t1, 1
    lui  a0, %hi(__ttprof_hot)
    sw   t1, %lo(__ttprof_hot)(a0)
    lui  a0, %hi(__ttprof_anchor)
    sw   t1, %lo(__ttprof_anchor)(a0)
    lui  a0, %hi(__ttprof_ring_block + {lap})
    lw   a0, %lo(__ttprof_ring_block + {lap})(a0)
    lui  a1, %hi(__ttprof_ring_base)
    addi a1, a1, %lo(__ttprof_ring_base)
    sub  a1, tp, a1
    add  a0, a0, a1
    fence w, w
    lui  a1, %hi(__ttprof_ring_block + {head})
    sw   a0, %lo(__ttprof_ring_block + {head})(a1)
2:  lw   a1, 4(sp)
    lw   a0, 0(sp)
    addi sp, sp, 16
    jr   t3
1:  li   t1, 0
    jr   t3

    .size __ttprof_refresh, . - __ttprof_refresh

    # The cold path: calls the C-ABI function at t3 with a0..a3, saving the caller-saved
    # registers the convention preserves; returns to t0.
    .type __ttprof_rec_cold, @function
__ttprof_rec_cold:
    addi sp, sp, -48
    sw   ra, 0(sp)
    sw   t0, 4(sp)
    sw   t4, 8(sp)
    sw   t5, 12(sp)
    sw   t6, 16(sp)
    sw   a4, 20(sp)
    sw   a5, 24(sp)
    sw   a6, 28(sp)
    sw   a7, 32(sp)
    jalr ra, t3, 0
    lw   ra, 0(sp)
    lw   t0, 4(sp)
    lw   t4, 8(sp)
    lw   t5, 12(sp)
    lw   t6, 16(sp)
    lw   a4, 20(sp)
    lw   a5, 24(sp)
    lw   a6, 28(sp)
    lw   a7, 32(sp)
    addi sp, sp, 48
    jr   t0

    .size __ttprof_rec_cold, . - __ttprof_rec_cold

    .purgem ttprof_anchor_and_clock
    .purgem ttprof_clock
    .popsection
"#,
    control = const riscv_linker::profiler::tile::CONTROL,
    disable = const riscv_linker::profiler::tile::CONTROL_DISABLE,
    lap = const riscv_linker::profiler::ring::LAP,
    head = const riscv_linker::profiler::ring::HEAD,
);

/// Calls one routine: `jal t0, NAME` with its arguments in `a0..` and the convention's
/// clobbers (an unused argument register is a clobber, not a zero the site must load). Not
/// `nomem`: a compiler barrier, as a zone's clock read.
#[cfg(target_arch = "riscv32")]
macro_rules! call {
    ($name:literal, $a0:expr) => {
        call!(@ $name, inout("a0") $a0 => _, out("a1") _, out("a2") _, out("a3") _)
    };
    ($name:literal, $a0:expr, $a1:expr) => {
        call!(@ $name, inout("a0") $a0 => _, inout("a1") $a1 => _, out("a2") _, out("a3") _)
    };
    ($name:literal, $a0:expr, $a1:expr, $a2:expr) => {
        call!(@ $name, inout("a0") $a0 => _, inout("a1") $a1 => _, inout("a2") $a2 => _, out("a3") _)
    };
    ($name:literal, $a0:expr, $a1:expr, $a2:expr, $a3:expr) => {
        call!(@ $name, inout("a0") $a0 => _, inout("a1") $a1 => _, inout("a2") $a2 => _, inout("a3") $a3 => _)
    };
    ($name:literal, $a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr) => {
        call!(@ $name, inout("a0") $a0 => _, inout("a1") $a1 => _, inout("a2") $a2 => _, inout("a3") $a3 => _, in("a4") $a4)
    };
    (@ $name:literal, $($regs:tt)*) => {
        unsafe {
            core::arch::asm!(
                concat!("jal t0, ", $name),
                $($regs)*,
                out("t0") _,
                out("t1") _,
                out("t2") _,
                out("t3") _,
            )
        }
    };
}

/// A point event (and a signal) of site `id`, now.
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn event(id: u32) {
    call!("__ttprof_rec_event", id);
}

/// A datum of site `id`, now: the 10-byte form when it fits 32 bits (a branch the compiler
/// removes for a constant or a widened `u32`), else the 14-byte form.
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn data(id: u32, value: u64) {
    let (lo, hi) = (value as u32, (value >> 32) as u32);
    if hi == 0 {
        call!("__ttprof_rec_data32", id, lo);
    } else {
        call!("__ttprof_rec_data64", id, lo, hi);
    }
}

/// A value zone's close: `anchor` is what its open loaded (0: not recorded).
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn value_close(id: u32, start: u32, anchor: u32, value: u32) {
    call!("__ttprof_rec_value", id, start, anchor, value);
}

/// A counted zone's close: a value zone's whose value is `now - at_open`, a counter's
/// change (the routine subtracts, after its clock read: the counter's load latency runs
/// under it).
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn counted_close(id: u32, start: u32, anchor: u32, now: u32, at_open: u32) {
    call!("__ttprof_rec_counted", id, start, anchor, now, at_open);
}

/// A recorded zone's close (the guard found `anchor` non-zero; `end` read by the site): the
/// 6-byte record, or the long-zone form or the slow close.
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn zone_end(id: u32, start: u32, anchor: u32, end: u32) {
    call!("__ttprof_zone_end", id, start, anchor, end);
}

// The records' fixed-size forms as halfwords, in ring order: at a write pointer 2 mod 4
// (`odd`) a datum or a value zone takes its time-first twin, as the routines write it. The
// slow paths and the host simulator write the same bytes.

fn event_halves(id: u32, t: u32, _odd: bool) -> [u16; 3] {
    [id as u16, Kind::EventShort.header(), t as u16]
}

fn data32_halves(id: u32, lo: u32, t: u32, odd: bool) -> [u16; 5] {
    let (id, t, l0, l1) = (id as u16, t as u16, lo as u16, (lo >> 16) as u16);
    if odd {
        [id, Kind::DataShort32TimeFirst.header(), t, l0, l1]
    } else {
        [id, Kind::DataShort32.header(), l0, l1, t]
    }
}

fn data64_halves(id: u32, lo: u32, hi: u32, t: u32, odd: bool) -> [u16; 7] {
    let (id, t) = (id as u16, t as u16);
    let (l0, l1, h0, h1) = (lo as u16, (lo >> 16) as u16, hi as u16, (hi >> 16) as u16);
    if odd {
        [id, Kind::DataShortTimeFirst.header(), t, l0, l1, h0, h1]
    } else {
        [id, Kind::DataShort.header(), l0, l1, h0, h1, t]
    }
}

fn value_halves(id: u32, start: u32, end: u32, value: u32, odd: bool) -> [u16; 6] {
    let (id, d, e) = (id as u16, end.wrapping_sub(start) as u16, end as u16);
    let (v0, v1) = (value as u16, (value >> 16) as u16);
    if odd {
        [id, Kind::ValueZoneShortDurationFirst.header(), d, v0, v1, e]
    } else {
        [id, Kind::ValueZoneShort.header(), v0, v1, d, e]
    }
}

// The slow paths (C ABI, cold; the routines' cold path calls them on the device): the
// record's 16-bit or 32-bit-time form when only the anchor was old
// ([`producer::short_record`]), else the general path.

#[cfg_attr(target_arch = "riscv32", no_mangle)]
#[cold]
extern "C" fn ttprof_rec_slow_event(id: u32, time: u32) {
    let h = |odd| event_halves(id, time, odd);
    let far: [u16; 4] = producer::halves32(id as SiteId, Kind::Event32, [time]);
    if !producer::short_record(Some([&h(false), &h(true)]), &far, time) {
        producer::slow_record(&Record::Event {
            id: id as SiteId,
            time: producer::widen(time),
        });
    }
}

#[cfg_attr(target_arch = "riscv32", no_mangle)]
#[cold]
extern "C" fn ttprof_rec_slow_data(id: u32, lo: u32, hi: u32, time: u32) {
    let far: [u16; 8] = producer::halves32(id as SiteId, Kind::Data32, [lo, hi, time]);
    let short = if hi == 0 {
        let h = |odd| data32_halves(id, lo, time, odd);
        producer::short_record(Some([&h(false), &h(true)]), &far, time)
    } else {
        let h = |odd| data64_halves(id, lo, hi, time, odd);
        producer::short_record(Some([&h(false), &h(true)]), &far, time)
    };
    if !short {
        producer::slow_record(&Record::Data {
            id: id as SiteId,
            time: producer::widen(time),
            data: (hi as u64) << 32 | lo as u64,
        });
    }
}

#[cfg_attr(target_arch = "riscv32", no_mangle)]
#[cold]
extern "C" fn ttprof_rec_slow_value(id: u32, start: u32, end: u32, value: u32) {
    let d = end.wrapping_sub(start);
    let h = |odd| value_halves(id, start, end, value, odd);
    let (even, odd) = (h(false), h(true));
    let near = (d < SHORT_LIMIT).then_some([&even[..], &odd[..]]);
    let far: [u16; 8] = producer::halves32(id as SiteId, Kind::ValueZone32, [value, d, end]);
    if !producer::short_record(near, &far, end) {
        producer::slow_value(id as SiteId, start, end, value);
    }
}

#[cfg(target_arch = "riscv32")]
#[no_mangle]
#[cold]
extern "C" fn ttprof_rec_slow_close(id: u32, start: u32, end: u32) {
    producer::slow_close(id as SiteId, start, end);
}

// The host simulator: the same decisions and the same bytes, in Rust.

#[cfg(not(target_arch = "riscv32"))]
use crate::sim::hw;

/// Writes a record at the write pointer if it fits (`tp < gp`, the routines' one check:
/// every record is at most [`crate::wire::HOT_ROOM`] bytes): `halves(odd)`, its halfwords
/// for a write pointer 2 mod 4 or not.
#[cfg(not(target_arch = "riscv32"))]
fn put<const N: usize>(halves: impl Fn(bool) -> [u16; N]) -> bool {
    let tp = hw::tp();
    let halves = halves(tp & 2 != 0);
    const { assert!(2 * N as u32 <= crate::wire::HOT_ROOM) };
    if tp >= hw::gp() {
        return false;
    }
    for (i, h) in halves.iter().enumerate() {
        hw::wr16(tp + 2 * i as u32, *h);
    }
    hw::set_tp(tp + 2 * N as u32);
    true
}

/// Whether a record at `t` may take its 16-bit form against the anchor `a` its site loaded:
/// it fits (`tp < gp`), and `t - a < 2^15` or the routines' refresh moved the anchor. The
/// room is checked first, as the routines do: a refresh promises the record is written.
#[cfg(not(target_arch = "riscv32"))]
fn fresh(t: u32, a: u32) -> bool {
    hw::tp() < hw::gp() && (t.wrapping_sub(a) < SHORT_LIMIT || crate::producer::refresh(t, a))
}

/// The anchor and the clock (the anchor first); `None` when recording is off.
#[cfg(not(target_arch = "riscv32"))]
fn anchor_and_clock() -> Option<(u32, u32)> {
    let anchor = hw::hot();
    (anchor != 0).then(|| (anchor, hw::clock_lo()))
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn event(id: u32) {
    let Some((anchor, t)) = anchor_and_clock() else {
        return;
    };
    if !fresh(t, anchor) || !put(|odd| event_halves(id, t, odd)) {
        ttprof_rec_slow_event(id, t);
    }
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn data(id: u32, value: u64) {
    let Some((anchor, t)) = anchor_and_clock() else {
        return;
    };
    let (lo, hi) = (value as u32, (value >> 32) as u32);
    let fits = fresh(t, anchor)
        && if hi == 0 {
            put(|odd| data32_halves(id, lo, t, odd))
        } else {
            put(|odd| data64_halves(id, lo, hi, t, odd))
        };
    if !fits {
        ttprof_rec_slow_data(id, lo, hi, t);
    }
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn value_close(id: u32, start: u32, anchor: u32, value: u32) {
    if anchor == 0 {
        return;
    }
    let end = hw::clock_lo();
    if !fresh(end, anchor) || !put(|odd| value_halves(id, start, end, value, odd)) {
        ttprof_rec_slow_value(id, start, end, value);
    }
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn counted_close(id: u32, start: u32, anchor: u32, now: u32, at_open: u32) {
    value_close(id, start, anchor, now.wrapping_sub(at_open));
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn zone_close(id: u32, d: u32, end: u32) {
    let start = end.wrapping_sub(d);
    let h = [
        id as u16,
        Kind::Zone32.header(),
        d as u16,
        (d >> 16) as u16,
        end as u16,
        (end >> 16) as u16,
    ];
    if d < SHORT_LIMIT || !put(|_| h) {
        crate::producer::slow_close(id as SiteId, start, end);
    } else {
        // The decoder's `ref` is now `end`: the anchor follows (the hot word only). `tp < gp`
        // proved recording on: it is off only with `gp <= tp` (`producer::update_limit`).
        debug_assert!(hw::hot() != 0, "tp < gp while recording is off");
        hw::set_hot(end.wrapping_sub(1) | 1);
    }
}

#[cfg(all(test, not(target_arch = "riscv32")))]
mod tests {
    extern crate std;
    use crate::wire::Kind;
    use std::format;

    /// The routines' headers are the wire's (they are immediates in the assembly).
    #[test]
    fn the_routines_headers_are_the_wires() {
        let src = include_str!("records.rs");
        for (kind, hi) in [
            (Kind::EventShort, "0x8D000"),
            (Kind::DataShort32, "0x8E000"),
            (Kind::DataShort, "0x8F000"),
            (Kind::ValueZoneShort, "0x90000"),
        ] {
            assert_eq!(format!("0x{:X}", (kind.header() as u32) << 4), hi);
            let built = ["a1", "a2", "a3", "t1", "t3"]
                .iter()
                .any(|r| src.contains(&format!("lui  {r}, {hi}\n")));
            assert!(built, "{kind:?}");
        }
        // A long zone's close builds its h1 from the 0x8000 its short check compares with.
        assert_eq!(0x8000 + 0x100, Kind::Zone32.header());
        assert!(src.contains("lui  t3, 8\n") && src.contains("addi t3, t3, 0x100\n"));
        // The forms written at a write pointer 2 mod 4 build the header as 0x9000 + offset.
        for (kind, off) in [
            (Kind::EventShort, -0x300),
            (Kind::DataShort32TimeFirst, 0x100),
            (Kind::DataShortTimeFirst, 0x200),
            (Kind::ValueZoneShortDurationFirst, 0x300),
        ] {
            assert_eq!(0x9000 + off, kind.header() as i32);
            let imm = if off < 0 {
                format!("-0x{:x}", -off)
            } else {
                format!("0x{off:x}")
            };
            let built = ["a1", "a2", "a3", "t1"]
                .iter()
                .any(|r| src.contains(&format!("addi {r}, {r}, {imm}\n")));
            assert!(built, "{kind:?}");
        }
    }
}
