//! Picks the arch the kernel is built for from `TTPROF_ARCH` (as `riscv_linker::build`
//! does for the linker script) and writes it as a constant.
fn main() {
    println!(
        "cargo:rerun-if-env-changed={}",
        riscv_linker::build::ARCH_ENV
    );
    let arch = riscv_linker::build::arch_from_env().unwrap_or_else(|e| panic!("{e}"));
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let variant = match arch {
        riscv_linker::Arch::WormholeB0 => "WormholeB0",
        riscv_linker::Arch::Blackhole => "Blackhole",
    };
    std::fs::write(
        out.join("arch.rs"),
        format!(
            "/// The arch this crate was built for (`TTPROF_ARCH`).\n\
             pub const ARCH: riscv_linker::Arch = riscv_linker::Arch::{variant};\n"
        ),
    )
    .expect("write arch.rs");
}
