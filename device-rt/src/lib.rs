//! `ttprof-rt`: the kernel-side runtime of ttprof. Link it into a kernel and mark zones:
//!
//! ```ignore
//! #![no_std]
//! #![no_main]
//! use ttprof_rt::{kernel, zone};
//! fn main() {
//!     for tile in 0..8 {
//!         let _z = zone!("read-tile");   // recorded until `_z` is dropped
//!         read(tile);
//!     }
//! }
//! kernel!(brisc, main);
//! ```
//!
//! [`zone!`], [`value_zone!`], [`counted_zone!`], [`event!`], [`data!`], [`sum_zone!`], the typed waits
//! [`wait!`]/[`sum_wait!`], the [`signal!`]s that end them and [`#[instrument]`](instrument)
//! record into this core's ring; [`kernel!`] is the entry, with the wrapper zones and a `Run`
//! marker per launch. Only a site's id reaches the device ([`wire`]); without the default
//! `profile` feature every macro expands to nothing. The runtime reserves `gp` and `tp` (ring
//! limit and write pointer). See docs/design/life-of-a-zone.md.
#![no_std]

mod entry;
mod hw;
mod producer;
mod records;
pub mod signal;
#[cfg(not(target_arch = "riscv32"))]
pub mod sim;
pub mod stamp;
#[cfg(all(
    target_arch = "riscv32",
    any(feature = "timestamper", feature = "capi")
))]
mod stamper;
pub mod wire;
mod zone;

#[doc(hidden)]
pub use entry::__run;
#[cfg(target_arch = "riscv32")]
#[doc(hidden)]
pub use entry::link as __link;
pub use riscv_linker::{Arch, Risc};
#[doc(hidden)]
pub use ttprof_rt_macros::__site;
/// Makes a whole function a zone: `#[ttprof_rt::instrument]` or `#[instrument("name")]`.
pub use ttprof_rt_macros::instrument;
pub use zone::{data as __data, event as __event};
pub use zone::{CountedZone, RecordedZone, Site, SumGuard, SumZone, ValueZone, Zone};

/// What the recording macros return in a build without the `profile` feature.
#[derive(Clone, Copy, Debug, Default)]
pub struct Disabled;

impl Disabled {
    /// Does nothing (the disabled twin of [`ValueZone::set`]).
    #[inline(always)]
    pub fn set(&mut self, _value: u32) {}
}

/// A zone. Zones nest; names are string literals, interned at build time.
///
/// * `let _z = zone!("name");` records from here to the end of the scope. With recording
///   switched off at run time it costs the anchor load and its branch at open, and one more
///   branch at close (the guard must know whether its open recorded).
/// * `zone!("name", { ... })` makes the block the zone and evaluates to its value. With
///   recording off it costs exactly one load and one branch, and with recording on one
///   branch less than the guard form; the price is code size: the block is compiled twice
///   (once recorded, once not). For hot loops where the switch is often off.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! zone {
    ($name:literal) => {
        $crate::Zone::open($crate::__site!($crate, zone, $name))
    };
    ($name:literal, $body:block) => {
        match $crate::Zone::__open_if_recording($crate::__site!($crate, zone, $name)) {
            ::core::option::Option::Some(__ttprof_zone) => {
                let __ttprof_zone = __ttprof_zone;
                $body
            }
            ::core::option::Option::None => $body,
        }
    };
    ($($other:tt)*) => {
        $crate::__usage!("zone", "zone!(\"name\") or zone!(\"name\", { .. })", $($other)*)
    };
}

/// A scoped zone that carries a 32-bit value: `let _z = value_zone!("tiles", n);`.
/// The value can be changed before the zone ends with `.set(v)`.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! value_zone {
    ($name:literal, $value:expr) => {
        $crate::ValueZone::open($crate::__site!($crate, value_zone, $name), $value)
    };
    ($($other:tt)*) => {
        $crate::__usage!("value_zone", "value_zone!(\"name\", value)", $($other)*)
    };
}

/// A point event now: `event!("barrier");`.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! event {
    ($name:literal) => {
        $crate::__event($crate::__site!($crate, event, $name))
    };
    ($($other:tt)*) => {
        $crate::__usage!("event", "event!(\"name\")", $($other)*)
    };
}

/// A 64-bit value with the current time (tt-metal's `DeviceTimestampedData`):
/// `data!("bytes-read", n as u64);`.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! data {
    ($name:literal, $value:expr) => {
        $crate::__data($crate::__site!($crate, data, $name), $value)
    };
    ($($other:tt)*) => {
        $crate::__usage!("data", "data!(\"name\", value as u64)", $($other)*)
    };
}

/// A zone whose durations are summed over all its measurements and recorded once, at kernel
/// exit (tt-metal's `DeviceZoneScopedSumN`): `let _m = sum_zone!("wait-cb");`.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! sum_zone {
    ($name:literal) => {{
        // `used`: the runtime walks `.ttprof_sums` through linker symbols at kernel exit, so
        // the compiler must keep each sum zone whole, at its Rust layout, with its site.
        // Without it LLVM sees an internal global whose address never escapes and splits it
        // (the site pointer dropped, the counters merged in another order).
        #[cfg_attr(target_arch = "riscv32", link_section = ".ttprof_sums")]
        #[used]
        static __TTPROF_SUM: $crate::SumZone = $crate::SumZone::__new($crate::__site!($crate, sum, $name));
        __TTPROF_SUM.measure()
    }};
    ($($other:tt)*) => {
        $crate::__usage!("sum_zone", "sum_zone!(\"name\")", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `zone!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! zone {
    ($name:literal) => {
        $crate::Disabled
    };
    ($name:literal, $body:block) => {
        $body
    };
    ($($other:tt)*) => {
        $crate::__usage!("zone", "zone!(\"name\") or zone!(\"name\", { .. })", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `value_zone!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! value_zone {
    ($name:literal, $value:expr) => {{
        let _ = $value;
        $crate::Disabled
    }};
    ($($other:tt)*) => {
        $crate::__usage!("value_zone", "value_zone!(\"name\", value)", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `event!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! event {
    ($name:literal) => {
        ()
    };
    ($($other:tt)*) => {
        $crate::__usage!("event", "event!(\"name\")", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `data!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! data {
    ($name:literal, $value:expr) => {{
        let _ = $value;
    }};
    ($($other:tt)*) => {
        $crate::__usage!("data", "data!(\"name\", value as u64)", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `sum_zone!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! sum_zone {
    ($name:literal) => {
        $crate::Disabled
    };
    ($($other:tt)*) => {
        $crate::__usage!("sum_zone", "sum_zone!(\"name\")", $($other)*)
    };
}

/// The error of a zone macro called with what it does not take: a name that is not a
/// string literal, or the wrong arguments.
#[doc(hidden)]
#[macro_export]
macro_rules! __usage {
    ($mac:literal, $usage:literal, $name:ident $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "ttprof: ",
            $mac,
            "!(",
            ::core::stringify!($name),
            " ..): a name is a string literal, interned into the \
             kernel ELF at build time; write ",
            $usage
        ));
    };
    ($mac:literal, $usage:literal, $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!("ttprof: ", $mac, "! takes ", $usage));
    };
}

/// Declares the kernel's entry: `kernel!(brisc, main);` where `main` is a `fn()`.
/// The first argument names the core the image is linked for (`brisc`, `ncrisc`, `trisc0`,
/// `trisc1`, `trisc2`); linking it with another core's script is a link error.
#[macro_export]
macro_rules! kernel {
    (brisc, $main:path) => {
        $crate::__kernel!(
            __ttprof_risc_brisc,
            "__ttprof_kernel_brisc",
            "BRISC-FW",
            "BRISC-KERNEL",
            $main
        );
    };
    (ncrisc, $main:path) => {
        $crate::__kernel!(
            __ttprof_risc_ncrisc,
            "__ttprof_kernel_ncrisc",
            "NCRISC-FW",
            "NCRISC-KERNEL",
            $main
        );
    };
    (trisc0, $main:path) => {
        $crate::__kernel!(
            __ttprof_risc_trisc0,
            "__ttprof_kernel_trisc0",
            "TRISC-FW",
            "TRISC-KERNEL",
            $main
        );
    };
    (trisc1, $main:path) => {
        $crate::__kernel!(
            __ttprof_risc_trisc1,
            "__ttprof_kernel_trisc1",
            "TRISC-FW",
            "TRISC-KERNEL",
            $main
        );
    };
    (trisc2, $main:path) => {
        $crate::__kernel!(
            __ttprof_risc_trisc2,
            "__ttprof_kernel_trisc2",
            "TRISC-FW",
            "TRISC-KERNEL",
            $main
        );
    };
    ($core:ident, $main:path) => {
        ::core::compile_error!(::core::concat!(
            "ttprof: kernel!(",
            ::core::stringify!($core),
            ", ..) names no core: write one of brisc, ncrisc, trisc0, \
             trisc1, trisc2 (the core build.rs links this binary for)"
        ));
    };
    ($($other:tt)*) => {
        ::core::compile_error!(
            "ttprof: kernel! takes the core and the entry function: kernel!(brisc, main)"
        );
    };
}

#[cfg(feature = "profile")]
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel {
    ($guard:ident, $core:literal, $fw:literal, $kernel:literal, $main:path) => {
        // Which core `kernel!` names: the linker script of any other core asserts it is absent.
        #[cfg(target_arch = "riscv32")]
        #[export_name = $core]
        #[used]
        static __TTPROF_KERNEL_CORE: u8 = 0;
        #[export_name = "__ttprof_main"]
        extern "C" fn __ttprof_main() -> u32 {
            $crate::__run(
                $crate::__site!($crate, zone, $fw),
                $crate::__site!($crate, zone, $kernel),
                $main,
            )
        }
        #[used]
        static __TTPROF_LINKED_FOR: &u8 = unsafe { &$crate::__link::$guard };
    };
}

#[cfg(not(feature = "profile"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel {
    ($guard:ident, $core:literal, $fw:literal, $kernel:literal, $main:path) => {
        #[cfg(target_arch = "riscv32")]
        #[export_name = $core]
        #[used]
        static __TTPROF_KERNEL_CORE: u8 = 0;
        #[export_name = "__ttprof_main"]
        extern "C" fn __ttprof_main() -> u32 {
            $main();
            0
        }
        #[used]
        static __TTPROF_LINKED_FOR: &u8 = unsafe { &$crate::__link::$guard };
    };
}

#[cfg(test)]
mod tests;

/// A zone typed as a wait on a resource, for the host's bottleneck analysis:
/// `let _w = wait!("wait-in0", cb_front(0));` then the blocking call. Resources:
/// `cb_front(N)` (a consumer waiting for data in circular buffer N), `cb_back(N)` (a
/// producer waiting for space), `noc_read`, `noc_write`, `noc_atomic` (a NoC barrier),
/// `semaphore(N)`, `sync(N)`, `tensix_sem(N)` (a TRISC reading the tile's Tensix semaphore
/// N), `ttsync` (a TRISC's TTSync read). The resource is interned in the site's metadata: on
/// the device this is exactly [`zone!`].
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! wait {
    ($name:literal, $($resource:tt)+) => {
        $crate::Zone::open($crate::__site!($crate, zone, $name, $($resource)+))
    };
    ($($other:tt)*) => {
        $crate::__usage!("wait", "wait!(\"name\", cb_front(16))", $($other)*)
    };
}

/// A sum zone typed as a wait on a resource (tt-metal's CB wait sums):
/// `let _w = sum_wait!("wait-out", cb_front(16));`. Resources as for [`wait!`]; on the
/// device this is exactly [`sum_zone!`].
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! sum_wait {
    ($name:literal, $($resource:tt)+) => {{
        // `used`: see `sum_zone!`.
        #[cfg_attr(target_arch = "riscv32", link_section = ".ttprof_sums")]
        #[used]
        static __TTPROF_SUM: $crate::SumZone = $crate::SumZone::__new($crate::__site!($crate, sum, $name, $($resource)+));
        __TTPROF_SUM.measure()
    }};
    ($($other:tt)*) => {
        $crate::__usage!("sum_wait", "sum_wait!(\"name\", cb_front(16))", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `wait!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! wait {
    ($name:literal, $($resource:tt)+) => {
        $crate::Disabled
    };
    ($($other:tt)*) => {
        $crate::__usage!("wait", "wait!(\"name\", cb_front(16))", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `sum_wait!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! sum_wait {
    ($name:literal, $($resource:tt)+) => {
        $crate::Disabled
    };
    ($($other:tt)*) => {
        $crate::__usage!("sum_wait", "sum_wait!(\"name\", cb_front(16))", $($other)*)
    };
}

/// A signal: the releasing side of a wait, recorded now (exactly an [`event!`] on the device:
/// 8 bytes, the resource lives in the ELF). `signal!("push-src", cb_push(2))` just before the
/// store that publishes a page of CB 2. Resources: `cb_push(N)` (data ready in CB N: ends a
/// `cb_front(N)` wait on the same tile), `cb_pop(N)` (space freed: ends `cb_back(N)`),
/// `sem_inc(N)`, `sem_set(N)` (semaphore N, locally or over the NoC: ends `semaphore(N)` on
/// any tile of the chip), `noc_read_done`, `noc_write_done`, `noc_atomic_done` (the NoC
/// transactions this core issued completed: ends its own barrier wait), `sync(N)` (tt-metal's
/// `SYNC_SIGNAL(name, N)`: ends `sync(N)`), `tensix_sem_post(N)` (a TRISC pushes `SEMPOST`
/// of Tensix semaphore N: ends `tensix_sem(N)` on the same tile; [`signal::tensix_sem_post`]
/// for an index that is a value). The host matches each wait to the signal that ended it
/// (docs/design/critical-path.md).
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! signal {
    ($name:literal, $($resource:tt)+) => {
        $crate::__event($crate::__site!($crate, event, $name, $($resource)+))
    };
    ($($other:tt)*) => {
        $crate::__usage!("signal", "signal!(\"name\", cb_push(16))", $($other)*)
    };
}

#[cfg(not(feature = "profile"))]
/// `signal!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! signal {
    ($name:literal, $($resource:tt)+) => {
        ()
    };
    ($($other:tt)*) => {
        $crate::__usage!("signal", "signal!(\"name\", cb_push(16))", $($other)*)
    };
}

/// Runtime argument `i` of this core: the `i`-th word the launcher wrote before this launch
/// (`ttprof run --arg RISC=v0,v1,..`, a manifest's `args`, `session::Op::args`); tt-metal's
/// `get_arg_val<uint32_t>(i)`. Each RISC has [`riscv_linker::MAX_RUNTIME_ARGS`] words at
/// [`riscv_linker::runtime_args`]; `i` past them reads another core's (or 0).
#[inline(always)]
pub fn arg(i: usize) -> u32 {
    hw::rd32(hw::runtime_args() + 4 * i as u32)
}

/// The L1 address of runtime argument `i` (tt-metal's `get_arg_addr(i)`).
#[inline(always)]
pub fn arg_addr(i: usize) -> u32 {
    hw::runtime_args() + 4 * i as u32
}

/// Publishes the records written so far, so the consumer can read them now instead of at
/// the next slow path (at the latest 2^15 cycles of zone activity later) or at kernel exit:
/// tt-metal's `kernel_profiler::quick_push()`. Nothing is lost without it; it only makes
/// records visible sooner, e.g. before a long wait. Without `profile` it does nothing.
#[inline(always)]
pub fn flush() {
    #[cfg(feature = "profile")]
    producer::flush();
}

/// The C ABI for C and C++ kernels (`include/ttprof.h`, `device-rt/c`).
#[cfg(all(target_arch = "riscv32", feature = "capi"))]
mod capi;

// Counted zones come last, after the macros whose lines the golden outputs name.

/// A zone that counts one of Tensix's performance counters over itself:
/// `let _z = counted_zone!("matmul");` (the FPU bank) or `counted_zone!("unpack", unpack)`
/// (banks `fpu`, `instrn`, `unpack`, `pack`, `l1`). It reads the bank's value register
/// (`PERF_CNT_OUT_H`) after it opens and before it closes, and records the difference as a
/// value zone; the host names it by the counter `ttprof run --counters` armed in that bank
/// (none armed: the zone's count is reported as not measured). Two register loads and a
/// subtraction more than a value zone; other zones pay nothing.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! counted_zone {
    ($name:literal) => {
        $crate::counted_zone!($name, fpu)
    };
    ($name:literal, fpu) => {
        $crate::CountedZone::open($crate::__site!($crate, counted_fpu, $name), 0)
    };
    ($name:literal, instrn) => {
        $crate::CountedZone::open($crate::__site!($crate, counted_instrn, $name), 1)
    };
    ($name:literal, unpack) => {
        $crate::CountedZone::open($crate::__site!($crate, counted_unpack, $name), 2)
    };
    ($name:literal, pack) => {
        $crate::CountedZone::open($crate::__site!($crate, counted_pack, $name), 3)
    };
    ($name:literal, l1) => {
        $crate::CountedZone::open($crate::__site!($crate, counted_l1, $name), 4)
    };
    ($($other:tt)*) => {
        $crate::__usage!(
            "counted_zone",
            "counted_zone!(\"name\") or counted_zone!(\"name\", BANK), BANK one of fpu, instrn, unpack, pack, l1",
            $($other)*
        )
    };
}

#[cfg(not(feature = "profile"))]
/// `counted_zone!` without the `profile` feature: the same arguments, and no code at all.
#[macro_export]
macro_rules! counted_zone {
    ($name:literal) => {
        $crate::Disabled
    };
    ($name:literal, fpu) => {
        $crate::Disabled
    };
    ($name:literal, instrn) => {
        $crate::Disabled
    };
    ($name:literal, unpack) => {
        $crate::Disabled
    };
    ($name:literal, pack) => {
        $crate::Disabled
    };
    ($name:literal, l1) => {
        $crate::Disabled
    };
    ($($other:tt)*) => {
        $crate::__usage!(
            "counted_zone",
            "counted_zone!(\"name\") or counted_zone!(\"name\", BANK), BANK one of fpu, instrn, unpack, pack, l1",
            $($other)*
        )
    };
}
