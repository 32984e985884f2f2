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
//! longer launches). Records are at least 6 bytes, so `tp + n - 6 < gp` means `n` bytes fit.
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

#[cfg(target_arch = "riscv32")]
use crate::producer;
#[cfg(not(target_arch = "riscv32"))]
use crate::wire::{Kind, SHORT_LIMIT};
use crate::wire::{Record, SiteId};

// The routines. Headers: EventShort 0x8D00, DataShort32 0x8E00, DataShort 0x8F00,
// ValueZoneShort 0x9000, Zone32 0x8100 (`wire::Kind::header`; checked by a test).
#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    r#"
    .pushsection .text.ttprof_records,"ax",@progbits
    .p2align 2

    # The anchor into t1, the clock into t2 (two loads back to back; the anchor first).
    .macro ttprof_anchor_and_clock
    lui  t1, %hi(__ttprof_hot)
    lw   t1, %lo(__ttprof_hot)(t1)
    lui  t2, %hi(__ttprof_wall_clock_l)
    lw   t2, %lo(__ttprof_wall_clock_l)(t2)
    .endm

    # a0 = site id.
    .globl __ttprof_rec_event
__ttprof_rec_event:
    ttprof_anchor_and_clock
    beqz t1, 9f
    bgeu tp, gp, 8f
    andi a1, tp, 2
    lui  t3, 8
    sub  t1, t2, t1
    bgeu t1, t3, 8f
    bnez a1, 2f
    lui  t3, 0x8D000
    or   t3, t3, a0
    sw   t3, 0(tp)
    sh   t2, 4(tp)
    addi tp, tp, 6
    jr   t0
2:  sh   a0, 0(tp)
    lui  t3, 0x9
    addi t3, t3, -0x300
    slli t2, t2, 16
    or   t2, t2, t3
    sw   t2, 2(tp)
    addi tp, tp, 6
9:  jr   t0
8:  mv   a1, t2
    lui  t3, %hi(ttprof_rec_slow_event)
    addi t3, t3, %lo(ttprof_rec_slow_event)
    j    __ttprof_rec_cold

    # a0 = site id, a1 = data (32 bits).
    .globl __ttprof_rec_data32
__ttprof_rec_data32:
    ttprof_anchor_and_clock
    beqz t1, 9f
    addi a2, tp, 4
    bgeu a2, gp, 8f
    andi a2, tp, 2
    lui  t3, 8
    sub  t1, t2, t1
    bgeu t1, t3, 8f
    bnez a2, 2f
    lui  t3, 0x8E000
    or   t3, t3, a0
    sw   t3, 0(tp)
    sw   a1, 4(tp)
    sh   t2, 8(tp)
    addi tp, tp, 10
    jr   t0
2:  sh   a0, 0(tp)
    lui  t1, 0x9
    addi t1, t1, -0x200
    slli t3, a1, 16
    or   t3, t3, t1
    sw   t3, 2(tp)
    srli a1, a1, 16
    slli t2, t2, 16
    or   a1, a1, t2
    sw   a1, 6(tp)
    addi tp, tp, 10
9:  jr   t0
8:  li   a2, 0
    mv   a3, t2
    lui  t3, %hi(ttprof_rec_slow_data)
    addi t3, t3, %lo(ttprof_rec_slow_data)
    j    __ttprof_rec_cold

    # a0 = site id, a1 = data's low word, a2 = its high word.
    .globl __ttprof_rec_data64
__ttprof_rec_data64:
    ttprof_anchor_and_clock
    beqz t1, 9f
    addi a3, tp, 8
    bgeu a3, gp, 8f
    andi a3, tp, 2
    lui  t3, 8
    sub  t1, t2, t1
    bgeu t1, t3, 8f
    bnez a3, 2f
    lui  t3, 0x8F000
    or   t3, t3, a0
    sw   t3, 0(tp)
    sw   a1, 4(tp)
    sw   a2, 8(tp)
    sh   t2, 12(tp)
    addi tp, tp, 14
    jr   t0
2:  sh   a0, 0(tp)
    lui  t1, 0x9
    addi t1, t1, -0x100
    slli t3, a1, 16
    or   t3, t3, t1
    sw   t3, 2(tp)
    srli a1, a1, 16
    slli t3, a2, 16
    or   a1, a1, t3
    sw   a1, 6(tp)
    srli a2, a2, 16
    slli t2, t2, 16
    or   a2, a2, t2
    sw   a2, 10(tp)
    addi tp, tp, 14
9:  jr   t0
8:  mv   a3, t2
    lui  t3, %hi(ttprof_rec_slow_data)
    addi t3, t3, %lo(ttprof_rec_slow_data)
    j    __ttprof_rec_cold

    # A value zone's close: a0 = site id, a1 = start, a2 = the anchor its open loaded
    # (0: not recorded), a3 = value.
    .globl __ttprof_rec_value
__ttprof_rec_value:
    lui  t2, %hi(__ttprof_wall_clock_l)
    lw   t2, %lo(__ttprof_wall_clock_l)(t2)
    beqz a2, 9f
    addi t1, tp, 6
    bgeu t1, gp, 8f
    andi t1, tp, 2
    lui  t3, 8
    sub  a2, t2, a2
    bgeu a2, t3, 8f
    sub  a1, t2, a1
    bnez t1, 2f
    lui  t3, 0x90000
    or   t3, t3, a0
    sw   t3, 0(tp)
    sw   a3, 4(tp)
    slli t2, t2, 16
    or   a1, a1, t2
    sw   a1, 8(tp)
    addi tp, tp, 12
    jr   t0
2:  sh   a0, 0(tp)
    lui  t1, 0x9
    slli t3, a3, 16
    or   t3, t3, t1
    sw   t3, 2(tp)
    srli a3, a3, 16
    slli a1, a1, 16
    or   a3, a3, a1
    sw   a3, 6(tp)
    sh   t2, 10(tp)
    addi tp, tp, 12
9:  jr   t0
8:  mv   a2, t2
    lui  t3, %hi(ttprof_rec_slow_value)
    addi t3, t3, %lo(ttprof_rec_slow_value)
    j    __ttprof_rec_cold

    # A recorded zone's close (the site's guard found the anchor non-zero, then read the
    # end): a0 = site id, a1 = start, a2 = the anchor its open loaded, a3 = end. The room
    # check and the id's store come first: they do not need the end, which the site read
    # just before its jal (the subtractions wait for it). A zone of 2^15 cycles or more, an
    # end 2^15 cycles or more after the anchor, or a full ring continue at
    # __ttprof_zone_close.
    .globl __ttprof_zone_end
__ttprof_zone_end:
    bgeu tp, gp, 7f
    sh   a0, 0(tp)
    lui  t3, 8
    sub  t1, a3, a2
    sub  a1, a3, a1
    bgeu t1, t3, 8f
    sh   a1, 2(tp)
    sh   a3, 4(tp)
    addi tp, tp, 6
    jr   t0
7:  sub  a1, a3, a1
8:  mv   a2, a3
    j    __ttprof_zone_close

    # A zone's close that the inline hot path could not finish: a0 = site id, a1 = its
    # duration (end - start), a2 = end. A zone of 2^15 cycles or more is written in the
    # 32-bit form here; anything else (a short zone after an old anchor, a full ring) goes
    # to the slow close, with the start rebuilt as end - duration.
    .globl __ttprof_zone_close
__ttprof_zone_close:
    srli t1, a1, 15
    addi t2, tp, 6
    beqz t1, 8f
    bgeu t2, gp, 8f
    andi t2, tp, 2
    lui  t3, 0x81000
    bnez t2, 2f
    or   t3, t3, a0
    sw   t3, 0(tp)
    sw   a1, 4(tp)
    sw   a2, 8(tp)
    addi tp, tp, 12
    jr   t0
2:  sh   a0, 0(tp)
    srli t3, t3, 16
    slli t2, a1, 16
    or   t3, t3, t2
    sw   t3, 2(tp)
    srli a1, a1, 16
    slli t2, a2, 16
    or   a1, a1, t2
    sw   a1, 6(tp)
    srli a2, a2, 16
    sh   a2, 10(tp)
    addi tp, tp, 12
    jr   t0
8:  sub  a1, a2, a1
    lui  t3, %hi(ttprof_rec_slow_close)
    addi t3, t3, %lo(ttprof_rec_slow_close)
    j    __ttprof_rec_cold

    # The cold path: calls the C-ABI function at t3 with a0..a3, saving the caller-saved
    # registers the convention preserves; returns to t0.
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

    .purgem ttprof_anchor_and_clock
    .popsection
"#
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

/// A recorded zone's close (the guard found `anchor` non-zero; `end` read by the site): the
/// 6-byte record, or the long-zone form or the slow close.
#[cfg(target_arch = "riscv32")]
#[inline(always)]
pub(crate) fn zone_end(id: u32, start: u32, anchor: u32, end: u32) {
    call!("__ttprof_zone_end", id, start, anchor, end);
}

// The slow paths the routines call (C ABI, cold).

#[cfg(target_arch = "riscv32")]
#[no_mangle]
#[cold]
extern "C" fn ttprof_rec_slow_event(id: u32, time: u32) {
    producer::slow_record(&Record::Event {
        id: id as SiteId,
        time: producer::widen(time),
    });
}

#[cfg(target_arch = "riscv32")]
#[no_mangle]
#[cold]
extern "C" fn ttprof_rec_slow_data(id: u32, lo: u32, hi: u32, time: u32) {
    producer::slow_record(&Record::Data {
        id: id as SiteId,
        time: producer::widen(time),
        data: (hi as u64) << 32 | lo as u64,
    });
}

#[cfg(target_arch = "riscv32")]
#[no_mangle]
#[cold]
extern "C" fn ttprof_rec_slow_value(id: u32, start: u32, end: u32, value: u32) {
    producer::slow_value(id as SiteId, start, end, value);
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

/// Writes `halves` at the write pointer if they fit (`tp + n - 6 < gp`).
#[cfg(not(target_arch = "riscv32"))]
fn put(halves: &[u16]) -> bool {
    let (tp, n) = (hw::tp(), 2 * halves.len() as u32);
    if tp + n - crate::wire::SHORT_ZONE_BYTES >= hw::gp() {
        return false;
    }
    for (i, h) in halves.iter().enumerate() {
        hw::wr16(tp + 2 * i as u32, *h);
    }
    hw::set_tp(tp + n);
    true
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
    let h = [id as u16, Kind::EventShort.header(), t as u16];
    if t.wrapping_sub(anchor) >= SHORT_LIMIT || !put(&h) {
        crate::producer::slow_record(&Record::Event {
            id: id as SiteId,
            time: crate::producer::widen(t),
        });
    }
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn data(id: u32, value: u64) {
    let Some((anchor, t)) = anchor_and_clock() else {
        return;
    };
    let v = |i: u32| (value >> (16 * i)) as u16;
    let fits = if value >> 32 == 0 {
        t.wrapping_sub(anchor) < SHORT_LIMIT
            && put(&[id as u16, Kind::DataShort32.header(), v(0), v(1), t as u16])
    } else {
        t.wrapping_sub(anchor) < SHORT_LIMIT
            && put(&[
                id as u16,
                Kind::DataShort.header(),
                v(0),
                v(1),
                v(2),
                v(3),
                t as u16,
            ])
    };
    if !fits {
        crate::producer::slow_record(&Record::Data {
            id: id as SiteId,
            time: crate::producer::widen(t),
            data: value,
        });
    }
}

#[cfg(not(target_arch = "riscv32"))]
pub(crate) fn value_close(id: u32, start: u32, anchor: u32, value: u32) {
    if anchor == 0 {
        return;
    }
    let end = hw::clock_lo();
    let h = [
        id as u16,
        Kind::ValueZoneShort.header(),
        value as u16,
        (value >> 16) as u16,
        end.wrapping_sub(start) as u16,
        end as u16,
    ];
    if end.wrapping_sub(anchor) >= SHORT_LIMIT || !put(&h) {
        crate::producer::slow_value(id as SiteId, start, end, value);
    }
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
    if d < SHORT_LIMIT || !put(&h) {
        crate::producer::slow_close(id as SiteId, start, end);
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
            (Kind::Zone32, "0x81000"),
        ] {
            assert_eq!(format!("0x{:X}", (kind.header() as u32) << 4), hi);
            assert!(src.contains(&format!("lui  t3, {hi}")), "{kind:?}");
        }
        // The unaligned forms build the header as 0x9000 + offset.
        for (kind, off) in [
            (Kind::EventShort, "-0x300"),
            (Kind::DataShort32, "-0x200"),
            (Kind::DataShort, "-0x100"),
        ] {
            let off_value = i32::from_str_radix(&off[3..], 16).unwrap();
            assert_eq!(0x9000 - off_value, kind.header() as i32);
            assert!(src.contains(&format!(", {off}")), "{kind:?}");
        }
    }
}
