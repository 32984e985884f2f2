//! The helper a kernel crate's `build.rs` calls.
//!
//! ```no_run
//! // build.rs of a kernel crate with two binaries
//! use riscv_linker::Risc;
//! fn main() {
//!     riscv_linker::build::kernels(&[("reader", Risc::Brisc), ("writer", Risc::Ncrisc)]);
//! }
//! ```
//!
//! For each binary it writes `link-<bin>.x` into `OUT_DIR` and passes it to that binary only.
//! The arch comes from the `TTPROF_ARCH` environment variable (`wormhole_b0` by default).
//! On a non-RISC-V target it does nothing, so `cargo check` on the host still works.

use crate::{script, Arch, Risc};
use std::path::PathBuf;
use std::{env, fs, println};

/// Environment variable selecting the arch kernels are linked for.
pub const ARCH_ENV: &str = "TTPROF_ARCH";

/// The arch named by `TTPROF_ARCH`, or Wormhole B0 when unset.
pub fn arch_from_env() -> Result<Arch, std::string::String> {
    match env::var(ARCH_ENV) {
        Err(_) => Ok(Arch::WormholeB0),
        Ok(v) => Arch::from_name(&v).ok_or_else(|| {
            std::format!("{ARCH_ENV}={v:?} is not an arch (use wormhole_b0 or blackhole)")
        }),
    }
}

/// Emits linker arguments so that each `(bin, risc)` is linked for `risc`.
pub fn kernels(bins: &[(&str, Risc)]) {
    println!("cargo:rerun-if-env-changed={ARCH_ENV}");
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("riscv32") {
        return;
    }
    let arch = arch_from_env().unwrap_or_else(|e| panic!("{e}"));
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo for build scripts"));
    for (bin, risc) in bins {
        let path = out.join(std::format!("link-{bin}.x"));
        fs::write(&path, script::linker_script(arch, *risc))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("cargo:rustc-link-arg-bin={bin}=-T{}", path.display());
        // Keep the relocations: the host finds where each site's id is loaded, to locate a
        // site made inside a runtime helper at the kernel's line (docs/design/zone-metadata.md).
        println!("cargo:rustc-link-arg-bin={bin}=--emit-relocs");
    }
}
