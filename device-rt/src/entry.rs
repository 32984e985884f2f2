//! Kernel entry and exit: `_start`, the FW and KERNEL wrapper zones, sum-zone emission,
//! the halt, and the panic handler.
//!
//! `_start` (placed at the reset PC by the linker script) sets the stack pointer, zeroes
//! `gp`/`tp` (the runtime's reserved registers) and `.bss`, calls the `__ttprof_main`
//! function that [`crate::kernel!`] defines, and halts with `ecall` (`a0` = exit code).
//! BRISC resets at address 0, where the linker script puts a jump to `_start`.

use crate::producer;
use crate::wire::SiteId;
use crate::zone::{self, Site, SumZone};

#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    r#"
    .section .ttprof.boot, "ax"
    .globl __ttprof_boot
    .type __ttprof_boot, @function
__ttprof_boot:
    j _start
    .size __ttprof_boot, . - __ttprof_boot

    .section .ttprof.start, "ax"
    .globl _start
    .type _start, @function
_start:
    la sp, __stack_top
    li gp, 0
    li tp, 0
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  call __ttprof_main
    ecall
3:  j 3b
    .size _start, . - _start
"#
);

/// Runs one launch of a kernel: the wrapper zones around `main`, then the sum zones.
///
/// `main` is called through an opaque pointer, so the optimiser keeps it a function of its
/// own instead of inlining it into the entry: an inlined copy loses the DWARF scopes of its
/// blocks (a `wait!` guard's among them), which a deadlock report reads to name the wait a
/// stopped core is in. One indirect call per launch.
#[doc(hidden)]
pub fn __run(fw: Site, kernel: Site, main: fn()) -> u32 {
    run(fw.id(), kernel.id(), core::hint::black_box(main))
}

/// [`__run`] for any entry: a Rust `fn()` or, through the C ABI (`capi`), a C function.
#[inline(always)]
pub(crate) fn run(fw: SiteId, kernel: SiteId, main: impl FnOnce()) -> u32 {
    let t_fw = producer::now();
    let on = producer::begin_launch(t_fw);
    for_each_sum(SumZone::reset);
    let t_kernel = producer::now();
    main();
    // The timestamper backend: a unit still gathering this core's last events goes to L1.
    // The C library always checks (its header picks the backend, TTPROF_BACKEND_TIMESTAMPER):
    // one register read per launch, and nothing is stored when no event is gathering.
    #[cfg(all(
        target_arch = "riscv32",
        any(feature = "timestamper", feature = "capi")
    ))]
    crate::stamper::flush_at_exit();
    let e_kernel = producer::now();
    if on {
        zone::record_span(kernel, t_kernel, e_kernel);
        for_each_sum(SumZone::emit);
        zone::record_span(fw, t_fw, producer::now());
    }
    producer::end_launch();
    0
}

#[cfg(target_arch = "riscv32")]
fn for_each_sum(f: fn(&SumZone)) {
    extern "C" {
        static __ttprof_sums_start: u8;
        static __ttprof_sums_end: u8;
    }
    let mut p = unsafe { &__ttprof_sums_start as *const u8 as *const SumZone };
    let end = unsafe { &__ttprof_sums_end as *const u8 as *const SumZone };
    while p < end {
        f(unsafe { &*p });
        p = unsafe { p.add(1) };
    }
}

#[cfg(not(target_arch = "riscv32"))]
fn for_each_sum(_f: fn(&SumZone)) {}

#[cfg(all(target_arch = "riscv32", feature = "panic-handler"))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    #[cfg(feature = "profile")]
    producer::mark_panic();
    // Where and why, for the emulator's fault report (`riscv_linker::mmio::PANIC_MAGIC`).
    // Not in the C runtime library (`capi`): a C kernel does not panic in Rust, and its
    // code slot is tight.
    #[cfg(not(feature = "capi"))]
    {
        let (file, line) = info.location().map_or(("", 0), |l| (l.file(), l.line()));
        let message = info.message().as_str().unwrap_or("");
        loop {
            unsafe {
                core::arch::asm!(
                    "ebreak",
                    in("a0") file.as_ptr(),
                    in("a1") file.len(),
                    in("a2") line,
                    in("a3") message.as_ptr(),
                    in("a4") message.len(),
                    in("a5") riscv_linker::mmio::PANIC_MAGIC,
                )
            };
        }
    }
    #[cfg(feature = "capi")]
    {
        let _ = info;
        loop {
            unsafe { core::arch::asm!("ebreak") };
        }
    }
}

/// Link-time guards: the `kernel!` macro references the symbol that only the linker
/// script of the named RISC defines, so a kernel linked for the wrong core fails to link.
#[doc(hidden)]
#[cfg(target_arch = "riscv32")]
pub mod link {
    extern "C" {
        pub static __ttprof_risc_brisc: u8;
        pub static __ttprof_risc_ncrisc: u8;
        pub static __ttprof_risc_trisc0: u8;
        pub static __ttprof_risc_trisc1: u8;
        pub static __ttprof_risc_trisc2: u8;
    }
}
