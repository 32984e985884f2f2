//! The `timestamper` backend's device side: zones, events and data as 96-bit events of the
//! tile's debug timestamper, in the format of [`crate::stamp`].
//!
//! A zone is two stores to `RISCV_DEBUG_REG_TIMESTAMP`: no clock read, no L1 store by the
//! core, no branch. The tokens are link-time constants per site and core (the site's address
//! shifted, this core's index from the linker script), so in a loop the compiler hoists them
//! and a zone is exactly two `sw`. Each store is written as an `asm!` without `nomem`: a
//! compiler barrier, so a zone times exactly the code written inside it, as the ring's clock
//! reads do. Recording on and off is the host's business (the timestamper's buffer enables);
//! the core never tests a switch.

#![cfg_attr(not(feature = "timestamper"), allow(dead_code))]

use crate::stamp::{token, Kind, DATA_PAYLOADS, VALUE_PAYLOADS};
use riscv_linker::mmio::{self, timestamp as ts};

/// This core's index (a link-time constant: `__ttprof_risc_index`).
#[inline(always)]
fn risc() -> u32 {
    crate::hw::risc_index()
}

/// One event: `word` stored to `RISCV_DEBUG_REG_TIMESTAMP`.
#[inline(always)]
fn store(word: u32) {
    unsafe {
        core::arch::asm!(
            "sw {w}, {off}({base})",
            w = in(reg) word,
            base = in(reg) mmio::TIMESTAMP & !0xFFF,
            off = const mmio::TIMESTAMP & 0xFFF,
            options(nostack, preserves_flags)
        )
    }
}

/// A zone of site `id` opens.
#[inline(always)]
pub(crate) fn open(id: u32) {
    store(token(risc(), Kind::Open, 0, id & 0xFFFF));
}

/// A zone of site `id` closes.
#[inline(always)]
pub(crate) fn close(id: u32) {
    store(token(risc(), Kind::Close, 0, id & 0xFFFF));
}

/// A value zone of site `id` closes with `value` (two payloads follow the close).
#[inline(never)]
pub(crate) fn close_value(id: u32, value: u32) {
    store(token(risc(), Kind::Close, VALUE_PAYLOADS, id & 0xFFFF));
    payloads(value as u64, VALUE_PAYLOADS);
}

/// A point event of site `id`.
#[inline(never)]
pub(crate) fn event(id: u32) {
    store(token(risc(), Kind::Point, 0, id & 0xFFFF));
}

/// A data record of site `id` carrying `value` (four payloads).
#[inline(never)]
pub(crate) fn data(id: u32, value: u64) {
    store(token(risc(), Kind::Point, DATA_PAYLOADS, id & 0xFFFF));
    payloads(value, DATA_PAYLOADS);
}

fn payloads(value: u64, n: u32) {
    for i in 0..n {
        store(token(
            risc(),
            Kind::Payload,
            i,
            ((value >> (16 * i)) & 0xFFFF) as u32,
        ));
    }
}

/// At kernel exit: writes out a unit still gathering 96-bit events (the page's status says
/// how many more events would fill it; 0: nothing gathered). Another core may fill the unit
/// between the read and the flush; the flush then writes a unit of zeros, which the host
/// skips as padding.
pub(crate) fn flush_at_exit() {
    let status = unsafe { core::ptr::read_volatile(mmio::TIMESTAMP_STATUS as *const u32) };
    if (status >> ts::STATUS_ACCUM_POS_96B_SHIFT) & 3 != 0 {
        store(ts::FLUSH_96B);
    }
}
