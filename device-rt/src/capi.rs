//! The C ABI of the runtime: what C and C++ kernels call through `include/ttprof.h`.
//!
//! A C or C++ kernel links this crate as a static library (`device-rt/c`, built by `ttprof
//! build`): the header inlines only the hot path of a zone (the same instructions as
//! [`crate::zone`]'s, on the same reserved `gp`/`tp`), and every other record goes through
//! these functions into the same producer, encoder and entry code a Rust kernel runs. So
//! the wire format has one definition, [`crate::wire`], whatever language the kernel is in.
//!
//! Site ids are the addresses of the sites' bytes in `.ttprof_sites`, which the header's
//! assembler macro defines exactly as `ttprof-rt-macros` does for Rust (a one-byte object
//! whose symbol name is the site's JSON); the wire keeps their low 16 bits, which are all
//! of them (the linker script caps the section at 2^16 sites).

use crate::entry;
use crate::producer;
use crate::wire::SiteId;
use crate::zone;

/// The hot path's slow close (see [`crate::zone`]): the header's inline close branches here
/// when the zone is not short or the ring has no room.
#[no_mangle]
pub extern "C" fn ttprof_slow_close(id: u32, start: u32, end: u32) {
    producer::slow_close(id as SiteId, start, end)
}

/// Closes a value zone (always a slow path, as [`crate::ValueZone`]'s drop).
#[no_mangle]
pub extern "C" fn ttprof_close_value(id: u32, start: u32, end: u32, value: u32) {
    producer::close_value(id as SiteId, start, end, value)
}

/// A point event now ([`crate::event!`]).
#[no_mangle]
pub extern "C" fn ttprof_event(id: u32) {
    zone::event_id(id as SiteId)
}

/// A 64-bit value with the current time ([`crate::data!`]).
#[no_mangle]
pub extern "C" fn ttprof_data(id: u32, value: u64) {
    zone::data_id(id as SiteId, value)
}

/// Publishes the records written so far ([`crate::flush`]; tt-metal's `quick_push()`).
#[no_mangle]
pub extern "C" fn ttprof_flush() {
    producer::flush()
}

/// One launch of a C kernel, as [`crate::kernel!`] runs a Rust one: the `Run` record, the
/// `*-KERNEL` zone around `main`, the sum zones (every entry of `.ttprof_sums`, whatever
/// language defined it), the `*-FW` zone, and the final publication. `fw` and `kernel` are
/// the two wrapper zones' sites, defined by the header's `TTPROF_KERNEL`.
#[no_mangle]
pub extern "C" fn ttprof_run(fw: *const u8, kernel: *const u8, main: extern "C" fn()) -> u32 {
    entry::run(fw as u32 as SiteId, kernel as u32 as SiteId, || main())
}
