//! Building kernel crates for the Tensix cores (`riscv32im-unknown-none-elf`).
//!
//! The prebuilt standard library for that target is not reliably downloadable, but the
//! `rust-src` component is. So a kernel build uses the prebuilt target when it is already
//! installed, and otherwise compiles `core` from source with `-Z build-std=core`, enabling
//! that on the stable compiler with `RUSTC_BOOTSTRAP=1` **for the kernel build's cargo
//! process only**. `rust-src` is installed with rustup when missing. Nothing else needs a
//! manual step.
//!
//! The kernel crate's `build.rs` calls `riscv_linker::build::kernels` to link each binary
//! for its core; the arch is passed in `TTPROF_ARCH`.

use crate::error::{Error, Result};
use riscv_linker::Arch;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kernel target.
pub const TARGET: &str = "riscv32im-unknown-none-elf";

/// How the standard library for [`TARGET`] is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toolchain {
    /// `rustup target add` was done before: use the prebuilt `core`.
    Prebuilt,
    /// Build `core` from the `rust-src` component.
    BuildStd,
}

/// What to build.
#[derive(Clone, Debug)]
pub struct KernelBuild {
    /// Directory of the kernel crate (with its own `[workspace]`).
    pub crate_dir: PathBuf,
    /// The chip architecture to build for (selects the memory map and linker script).
    pub arch: Arch,
    /// Where cargo puts its output.
    pub target_dir: PathBuf,
    /// Cargo features to enable.
    pub features: Vec<String>,
    /// Pass `--no-default-features`.
    pub no_default_features: bool,
}

impl KernelBuild {
    /// Every binary of the crate at `crate_dir`, for `arch`, with its default features, into
    /// the crate's own `target/ttprof-kernels/<arch>` directory.
    pub fn new(crate_dir: impl Into<PathBuf>, arch: Arch) -> KernelBuild {
        let crate_dir = crate_dir.into();
        let target_dir = crate_dir
            .join("target")
            .join("ttprof-kernels")
            .join(arch.name());
        KernelBuild {
            crate_dir,
            arch,
            target_dir,
            features: Vec::new(),
            no_default_features: false,
        }
    }
}

/// The binaries a build produced, by name.
#[derive(Clone, Debug, Default)]
pub struct BuiltKernels {
    /// Cargo binary name to the path of its ELF.
    pub binaries: BTreeMap<String, PathBuf>,
}

impl BuiltKernels {
    /// The ELF of binary `name`.
    pub fn elf(&self, name: &str) -> Result<&Path> {
        self.binaries.get(name).map(PathBuf::as_path).ok_or_else(|| {
            Error::Other(format!(
                "the kernel build produced no binary named {name:?} (it produced: {})",
                self.binaries.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

fn run_output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Finds out how to build for [`TARGET`], installing `rust-src` with rustup if needed.
pub fn ensure_toolchain() -> Result<Toolchain> {
    if let Some(list) = run_output(Command::new("rustup").args(["target", "list", "--installed"])) {
        if list.lines().any(|l| l.trim() == TARGET) {
            return Ok(Toolchain::Prebuilt);
        }
    }
    let sysroot = run_output(Command::new("rustc").args(["--print", "sysroot"]))
        .ok_or_else(|| Error::Other("cannot run `rustc --print sysroot`: is Rust installed?".into()))?;
    let core_src = Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core_src.exists() {
        eprintln!("ttprof: installing the rust-src component (needed to build `core` for {TARGET})");
        let status = Command::new("rustup")
            .args(["component", "add", "rust-src"])
            .status()
            .map_err(|e| Error::Other(format!("cannot run rustup to install rust-src: {e}")))?;
        if !status.success() || !core_src.exists() {
            return Err(Error::Other(format!(
                "`rustup component add rust-src` failed ({status}); kernels for {TARGET} cannot be built"
            )));
        }
    }
    Ok(Toolchain::BuildStd)
}

/// Builds every binary of a kernel crate in release mode and returns their ELF paths.
/// Cargo's output is shown only when the build fails.
pub fn build(b: &KernelBuild) -> Result<BuiltKernels> {
    let toolchain = ensure_toolchain()?;
    let manifest = b.crate_dir.join("Cargo.toml");
    if !manifest.exists() {
        return Err(Error::Other(format!("no kernel crate at {}", b.crate_dir.display())));
    }
    // Cargo runs in the crate's directory: paths given relative to ours must not be read
    // relative to it.
    let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read the current directory", e))?;
    let (manifest, target_dir) = (here.join(manifest), here.join(&b.target_dir));
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(&b.crate_dir)
        .args(["build", "--release", "--bins", "--message-format=json-render-diagnostics", "--target", TARGET])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env("TTPROF_ARCH", b.arch.name())
        // Linker relaxation turns a site id's lui+addi into one li; see DESIGN.md.
        .env("CARGO_TARGET_RISCV32IM_UNKNOWN_NONE_ELF_RUSTFLAGS", "-C target-feature=+relax")
        // A host-side RUSTFLAGS (e.g. from a parent cargo) must not leak into the kernels.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if b.no_default_features {
        cmd.arg("--no-default-features");
    }
    if !b.features.is_empty() {
        cmd.arg("--features").arg(b.features.join(","));
    }
    if toolchain == Toolchain::BuildStd {
        cmd.args(["-Z", "build-std=core"]).env("RUSTC_BOOTSTRAP", "1");
    }
    let out = cmd.output().map_err(|e| Error::Other(format!("cannot run cargo to build kernels: {e}")))?;
    if !out.status.success() {
        return Err(Error::Other(format!(
            "building kernels in {} for {} failed:\n{}",
            b.crate_dir.display(),
            b.arch,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let mut built = BuiltKernels::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if msg["reason"] != "compiler-artifact" || msg["target"]["kind"][0] != "bin" {
            continue;
        }
        if let (Some(name), Some(exe)) = (msg["target"]["name"].as_str(), msg["executable"].as_str()) {
            built.binaries.insert(name.to_string(), PathBuf::from(exe));
        }
    }
    if built.binaries.is_empty() {
        return Err(Error::Other(format!("building kernels in {} produced no binaries", b.crate_dir.display())));
    }
    Ok(built)
}
