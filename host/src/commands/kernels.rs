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
//!
//! C and C++ kernels ([`build_c`](crate::kernels::build_c)) are compiled with `riscv64-unknown-elf-gcc`/`-g++`
//! (installed with apt-get when missing) against `device-rt/include` (`ttprof.h`, tt-metal's
//! `tools/profiler/kernel_profiler.hpp`) with tt-metal's defines for their core, and linked
//! with riscv-linker's script and the runtime's static library (`device-rt/c`, built here
//! with cargo, `build_c_runtime`). See docs/design/c-kernels.md.

use crate::error::{Error, Result};
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kernel target.
pub(crate) const TARGET: &str = "riscv32im-unknown-none-elf";

/// How the standard library for [`TARGET`] is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Toolchain {
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
        self.binaries
            .get(name)
            .map(PathBuf::as_path)
            .ok_or_else(|| Error::Build {
                what: format!(
                    "the kernel build produced no binary named {name:?} (it produced: {})",
                    self.binaries.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            })
    }
}

fn run_output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Finds out how to build for [`TARGET`], installing `rust-src` with rustup if needed.
pub(crate) fn ensure_toolchain() -> Result<Toolchain> {
    if let Some(list) = run_output(Command::new("rustup").args(["target", "list", "--installed"])) {
        if list.lines().any(|l| l.trim() == TARGET) {
            return Ok(Toolchain::Prebuilt);
        }
    }
    let sysroot =
        run_output(Command::new("rustc").args(["--print", "sysroot"])).ok_or_else(|| {
            Error::Build {
                what: "cannot run `rustc --print sysroot`: is Rust installed?".into(),
            }
        })?;
    let core_src = Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/core/Cargo.toml");
    if !core_src.exists() {
        eprintln!(
            "ttprof: installing the rust-src component (needed to build `core` for {TARGET})"
        );
        let status = Command::new("rustup")
            .args(["component", "add", "rust-src"])
            .status()
            .map_err(|e| Error::Build {
                what: format!("cannot run rustup to install rust-src: {e}"),
            })?;
        if !status.success() || !core_src.exists() {
            return Err(Error::Build { what: format!(
                "`rustup component add rust-src` failed ({status}); kernels for {TARGET} cannot be built"
            ) });
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
        return Err(Error::Build {
            what: format!("no kernel crate at {}", b.crate_dir.display()),
        });
    }
    // Cargo runs in the crate's directory: paths given relative to ours must not be read
    // relative to it.
    let here = std::env::current_dir()
        .map_err(|e| Error::io(Path::new("."), "read the current directory", e))?;
    let (manifest, target_dir) = (here.join(manifest), here.join(&b.target_dir));
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(&b.crate_dir)
        .args([
            "build",
            "--release",
            "--bins",
            "--message-format=json-render-diagnostics",
            "--target",
            TARGET,
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env("TTPROF_ARCH", b.arch.name())
        // Linker relaxation turns a site id's lui+addi into one li; see docs/design/zone-metadata.md.
        .env(
            "CARGO_TARGET_RISCV32IM_UNKNOWN_NONE_ELF_RUSTFLAGS",
            "-C target-feature=+relax",
        )
        // A host-side RUSTFLAGS (e.g. from a parent cargo) must not leak into the kernels.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        // The kernels' own profile keeps their DWARF (`debug = true`), which `--lines`
        // names lines with: a host-side `CARGO_PROFILE_RELEASE_DEBUG=0` must not strip it.
        .env_remove("CARGO_PROFILE_RELEASE_DEBUG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if b.no_default_features {
        cmd.arg("--no-default-features");
    }
    if !b.features.is_empty() {
        cmd.arg("--features").arg(b.features.join(","));
    }
    if toolchain == Toolchain::BuildStd {
        cmd.args(["-Z", "build-std=core"])
            .env("RUSTC_BOOTSTRAP", "1");
    }
    let out = cmd.output().map_err(|e| Error::Build {
        what: format!("cannot run cargo to build kernels: {e}"),
    })?;
    if !out.status.success() {
        return Err(Error::Build {
            what: format!(
                "building kernels in {} for {} failed:\n{}",
                b.crate_dir.display(),
                b.arch,
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    let mut built = BuiltKernels::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["target"]["kind"][0] != "bin" {
            continue;
        }
        if let (Some(name), Some(exe)) =
            (msg["target"]["name"].as_str(), msg["executable"].as_str())
        {
            built.binaries.insert(name.to_string(), PathBuf::from(exe));
        }
    }
    if built.binaries.is_empty() {
        return Err(Error::Build {
            what: format!(
                "building kernels in {} produced no binaries",
                b.crate_dir.display()
            ),
        });
    }
    Ok(built)
}

// ---------------------------------------------------------------------------------------
// C and C++ kernels.

/// The C compiler for kernels: Debian's `gcc-riscv64-unknown-elf` (freestanding RV32IM with
/// `-march=rv32im -mabi=ilp32`; its `-g++` builds C++).
pub(crate) const GCC: &str = "riscv64-unknown-elf-gcc";
/// The C++ compiler, from the same package as [`GCC`].
pub(crate) const GXX: &str = "riscv64-unknown-elf-g++";
/// The Debian package that provides [`GCC`] and [`GXX`].
pub(crate) const GCC_PACKAGE: &str = "gcc-riscv64-unknown-elf";

/// ttprof's cache directory: `$TTPROF_CACHE`, else `$XDG_CACHE_HOME/ttprof`, else
/// `$HOME/.cache/ttprof` (scripts/fetch-tt-metal.sh uses the same).
pub(crate) fn cache_root() -> PathBuf {
    match (
        std::env::var_os("TTPROF_CACHE"),
        std::env::var_os("XDG_CACHE_HOME"),
    ) {
        (Some(c), _) if !c.is_empty() => PathBuf::from(c),
        (_, Some(x)) if !x.is_empty() => PathBuf::from(x).join("ttprof"),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache")
            .join("ttprof"),
    }
}

/// The runtime's sources (`device-rt` and what it builds with), packed by `host/build.rs`
/// when this library was compiled.
const RUNTIME_ARCHIVE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runtime.tar.gz"));
/// Names [`RUNTIME_ARCHIVE`]'s contents (a hash of them): its directory in the cache.
const RUNTIME_HASH: &str = env!("TTPROF_RT_HASH");
/// Written last into an unpacked runtime: the directory is whole.
const RUNTIME_COMPLETE: &str = ".complete";

/// Where the runtime lives (its `include/` for the headers, `c/` for the static library):
/// `TTPROF_RT_DIR` (a ttprof checkout's `device-rt`), else the sources this binary carries,
/// unpacked once into [`cache_root`]`/runtime-HASH/device-rt`. Nothing of the checkout this
/// binary was built from is read or written: a binary installed or copied anywhere works.
pub(crate) fn runtime_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("TTPROF_RT_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(d);
        return Ok(dir.canonicalize().unwrap_or(dir));
    }
    let cache = cache_root();
    let dir = cache.join(format!("runtime-{RUNTIME_HASH}"));
    if dir.join(RUNTIME_COMPLETE).is_file() {
        return Ok(dir.join("device-rt"));
    }
    std::fs::create_dir_all(&cache)
        .map_err(|e| Error::io(&cache, "create ttprof's cache directory", e))?;
    // Unpacked beside, then renamed into place: a concurrent ttprof sees a whole runtime or none.
    let tmp = tempfile::Builder::new()
        .prefix(".runtime-")
        .tempdir_in(&cache)
        .map_err(|e| Error::io(&cache, "create a directory in ttprof's cache", e))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(RUNTIME_ARCHIVE));
    archive
        .unpack(tmp.path())
        .map_err(|e| Error::io(tmp.path(), "unpack the runtime's sources", e))?;
    let complete = tmp.path().join(RUNTIME_COMPLETE);
    std::fs::write(&complete, RUNTIME_HASH)
        .map_err(|e| Error::io(&complete, "write the runtime's completion mark", e))?;
    if let Err(e) = std::fs::rename(tmp.path(), &dir) {
        // Another ttprof unpacked it first (the temporary is removed when dropped).
        if !dir.join(RUNTIME_COMPLETE).is_file() {
            return Err(Error::io(&dir, "move the unpacked runtime into place", e));
        }
    }
    Ok(dir.join("device-rt"))
}

/// The include directory C and C++ kernels compile against: `ttprof.h` and tt-metal's
/// `tools/profiler/kernel_profiler.hpp`.
pub(crate) fn include_dir() -> Result<PathBuf> {
    Ok(runtime_dir()?.join("include"))
}

/// Whether `path` is a C or C++ source (by extension): `Some(true)` for C++.
pub fn c_source_kind(path: &Path) -> Option<bool> {
    match path.extension()?.to_str()? {
        "c" => Some(false),
        "cpp" | "cc" | "cxx" | "C" | "c++" => Some(true),
        _ => None,
    }
}

/// Finds the RISC-V compiler, installing its Debian package with apt-get when it is missing
/// (as the `rust-src` component is for Rust kernels); says how to install it otherwise.
pub(crate) fn ensure_gcc() -> Result<()> {
    let works = || {
        run_output(Command::new(GCC).arg("--version")).is_some()
            && run_output(Command::new(GXX).arg("--version")).is_some()
    };
    if works() {
        return Ok(());
    }
    let how =
        format!("install it (Debian/Ubuntu: `apt-get install {GCC_PACKAGE}`) or put {GCC} on PATH");
    let root = run_output(Command::new("id").arg("-u")).is_some_and(|u| u.trim() == "0");
    if !root || run_output(Command::new("apt-get").arg("--version")).is_none() {
        return Err(Error::Build {
            what: format!("{GCC} (C and C++ kernels) is not installed: {how}"),
        });
    }
    eprintln!("ttprof: installing {GCC_PACKAGE} (needed to build C and C++ kernels)");
    let status = Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends", GCC_PACKAGE])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| Error::Build {
            what: format!("cannot run apt-get to install {GCC_PACKAGE}: {e}"),
        })?;
    if !status.success() || !works() {
        return Err(Error::Build {
            what: format!("`apt-get install {GCC_PACKAGE}` failed ({status}): {how}"),
        });
    }
    Ok(())
}

/// Builds the runtime's static library (`device-rt/c`, `ttprof-rt` with its C ABI) for
/// [`TARGET`] into `target_dir` (default: `target/ttprof-rt-c` beside [`runtime_dir`]: in the
/// cache, or in the checkout `TTPROF_RT_DIR` names)
/// and returns its path. One library serves both arches and every core: what differs is
/// resolved by the linker script. Cargo's output is shown only when the build fails.
///
/// `tt_metal`: the library for tt-metal's firmware (`ttprof-rt-c`'s feature `tt-metal`: the
/// hot word is the kernel's `__ttprof_hot`), in its own default target directory.
pub(crate) fn build_c_runtime(target_dir: Option<&Path>, tt_metal: bool) -> Result<PathBuf> {
    let toolchain = ensure_toolchain()?;
    let runtime = runtime_dir()?;
    let dir = runtime.join("c");
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(Error::Build {
            what: format!(
            "no runtime library crate at {} (TTPROF_RT_DIR should name a ttprof checkout's device-rt)",
            dir.display()
        ),
        });
    }
    let here = std::env::current_dir()
        .map_err(|e| Error::io(Path::new("."), "read the current directory", e))?;
    let target_dir = match target_dir {
        Some(t) => here.join(t),
        None => runtime.join("..").join("target").join(if tt_metal {
            "ttprof-rt-c-tt-metal"
        } else {
            "ttprof-rt-c"
        }),
    };
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(&dir)
        .args(["build", "--release", "--lib", "--target", TARGET])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .args(if tt_metal {
            &["--features", "tt-metal"][..]
        } else {
            &[]
        })
        .env(
            "CARGO_TARGET_RISCV32IM_UNKNOWN_NONE_ELF_RUSTFLAGS",
            "-C target-feature=+relax",
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        // The kernels' own profile keeps their DWARF (`debug = true`), which `--lines`
        // names lines with: a host-side `CARGO_PROFILE_RELEASE_DEBUG=0` must not strip it.
        .env_remove("CARGO_PROFILE_RELEASE_DEBUG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if toolchain == Toolchain::BuildStd {
        // memcpy and friends for the C code come from compiler_builtins.
        cmd.args([
            "-Z",
            "build-std=core",
            "-Z",
            "build-std-features=compiler-builtins-mem",
        ])
        .env("RUSTC_BOOTSTRAP", "1");
    }
    let lib = target_dir
        .join(TARGET)
        .join("release")
        .join("libttprof_rt_c.a");
    if !lib.is_file() {
        eprintln!(
            "ttprof: building the runtime library for C and C++ kernels (once) into {}",
            target_dir.display()
        );
    }
    let out = cmd.output().map_err(|e| Error::Build {
        what: format!("cannot run cargo to build the runtime library: {e}"),
    })?;
    if !out.status.success() {
        return Err(Error::Build {
            what: format!(
                "building the runtime library {} failed:\n{}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    if !lib.is_file() {
        return Err(Error::Build {
            what: format!("the runtime build produced no {}", lib.display()),
        });
    }
    Ok(lib)
}

/// A C/C++ kernel to build: `ttprof build --core RISC FILE.c|FILE.cpp...`.
#[derive(Clone, Debug)]
pub struct CKernelBuild {
    /// The sources (`.c`, or `.cpp`/`.cc`/`.cxx` for C++), compiled separately and linked.
    pub sources: Vec<PathBuf>,
    /// The core the image is linked for (its linker script, its entry, its `COMPILE_FOR_*`).
    pub risc: Risc,
    /// The chip architecture.
    pub arch: Arch,
    /// Define `PROFILE_KERNEL` (tt-metal's switch): every macro records. Without it every
    /// macro is gone.
    pub profile: bool,
    /// More compiler flags, after ttprof's own (`-O3`, `-DN=4`, `-Iinc`, ...).
    pub flags: Vec<String>,
    /// The ELF's name (default: the first source's stem).
    pub name: String,
    /// Objects, the generated entry, the linker script and the ELF go here (default:
    /// `target/ttprof-kernels/<arch>/<risc>[-noprofile]` beside the first source).
    pub out_dir: PathBuf,
    /// Cargo's target directory for the runtime library (default: see [`build_c_runtime`]).
    pub(crate) runtime_target_dir: Option<PathBuf>,
}

impl CKernelBuild {
    /// `sources` for `risc` on `arch`, profiled, with the default name and directory.
    pub fn new(sources: Vec<PathBuf>, risc: Risc, arch: Arch) -> CKernelBuild {
        let first = sources.first().cloned().unwrap_or_default();
        let name = first
            .file_stem()
            .map_or("kernel".into(), |s| s.to_string_lossy().into_owned());
        let mut b = CKernelBuild {
            sources,
            risc,
            arch,
            profile: true,
            flags: Vec::new(),
            name,
            out_dir: PathBuf::new(),
            runtime_target_dir: None,
        };
        b.out_dir = b.default_out_dir();
        b
    }

    /// `target/ttprof-kernels/<arch>/<risc>[-noprofile]` beside the first source.
    pub fn default_out_dir(&self) -> PathBuf {
        let first = self.sources.first().cloned().unwrap_or_default();
        let dir = first.parent().map(Path::to_path_buf).unwrap_or_default();
        let leaf = format!(
            "{}{}",
            self.risc.ident(),
            if self.profile { "" } else { "-noprofile" }
        );
        dir.join("target")
            .join("ttprof-kernels")
            .join(self.arch.name())
            .join(leaf)
    }
}

/// tt-metal's names of the compute entry on a TRISC: `(NAMESPACE, MAIN's function, the
/// UCK_CHLKC_* and TRISC_* define suffix)`.
fn compute_entry(risc: Risc) -> Option<(&'static str, &'static str, &'static str)> {
    match risc {
        Risc::Trisc0 => Some(("chlkc_unpack", "unpack_main", "UNPACK")),
        Risc::Trisc1 => Some(("chlkc_math", "math_main", "MATH")),
        Risc::Trisc2 => Some(("chlkc_pack", "pack_main", "PACK")),
        _ => None,
    }
}

/// The defines a tt-metal kernel build gives a kernel for `risc` on `arch`, plus ttprof's.
pub(crate) fn c_defines(risc: Risc, arch: Arch, profile: bool, package: &str) -> Vec<String> {
    let mut d = vec![
        "-DKERNEL_BUILD".to_string(),
        format!("-DTTPROF_PACKAGE=\"{package}\""),
    ];
    if profile {
        d.push("-DPROFILE_KERNEL=1".into());
    }
    d.push(match arch {
        Arch::WormholeB0 => "-DARCH_WORMHOLE".into(),
        Arch::Blackhole => "-DARCH_BLACKHOLE".into(),
    });
    match risc {
        Risc::Brisc => d.push("-DCOMPILE_FOR_BRISC".into()),
        Risc::Ncrisc => d.push("-DCOMPILE_FOR_NCRISC".into()),
        _ => {
            let (ns, main, what) = compute_entry(risc).expect("a TRISC");
            d.push(format!(
                "-DCOMPILE_FOR_TRISC={}",
                risc.index() - Risc::Trisc0.index()
            ));
            d.push(format!("-DUCK_CHLKC_{what}"));
            d.push(format!("-DTRISC_{what}"));
            d.push(format!("-DNAMESPACE={ns}"));
            d.push(format!("-DMAIN={main}()"));
        }
    }
    d
}

/// The entry every C/C++ kernel image gets (compiled as C++): `TTPROF_KERNEL` around whichever
/// entry the sources define: tt-metal's compute form `namespace NAMESPACE { void MAIN { } }`
/// on a TRISC, `void kernel_main()` (C++), or `void kernel_main(void)` (C).
fn entry_source(risc: Risc) -> String {
    let mut s = String::from(
        "// Generated by ttprof build: the kernel's entry (see include/ttprof.h, TTPROF_KERNEL).\n\
         #include <ttprof.h>\n\
         void kernel_main() __attribute__((weak));\n\
         void ttprof_c_kernel_main() __asm__(\"kernel_main\") __attribute__((weak));\n",
    );
    let mut call = String::new();
    if let Some((ns, main, _)) = compute_entry(risc) {
        s.push_str(&format!(
            "namespace {ns} {{ void {main}() __attribute__((weak)); }}\n"
        ));
        call.push_str(&format!(
            "    if ({ns}::{main}) {{ {ns}::{main}(); return; }}\n"
        ));
    }
    s.push_str(&format!(
        "static void ttprof_entry() {{\n{call}    if (kernel_main) {{ kernel_main(); return; }}\n    ttprof_c_kernel_main();\n}}\n\
         extern \"C\" void __cxa_pure_virtual() __attribute__((weak));\n\
         extern \"C\" void __cxa_pure_virtual() {{ __builtin_trap(); }}\n\
         TTPROF_KERNEL({}, ttprof_entry)\n",
        risc.ident()
    ));
    s
}

/// The symbols of an entry: tt-metal's compute `MAIN` (TRISCs), C++ or C `kernel_main`.
fn entry_symbols(risc: Risc) -> Vec<String> {
    let mut v = Vec::new();
    if let Some((ns, main, _)) = compute_entry(risc) {
        v.push(format!("_ZN{}{ns}{}{main}Ev", ns.len(), main.len()));
    }
    v.push("_Z11kernel_mainv".into());
    v.push("kernel_main".into());
    v
}

/// Compiles and links a C/C++ kernel; returns the ELF's path. The compiler's own messages
/// are shown as they are (on stderr); a failed step is an error naming it.
pub fn build_c(b: &CKernelBuild) -> Result<PathBuf> {
    if b.sources.is_empty() {
        return Err(Error::Build {
            what: "no source to build: give FILE.c or FILE.cpp".into(),
        });
    }
    for s in &b.sources {
        if c_source_kind(s).is_none() {
            return Err(Error::BadFile {
                path: s.clone(),
                what: "not a C or C++ source (.c, .cpp, .cc, .cxx)".into(),
            });
        }
        if !s.is_file() {
            return Err(Error::BadFile {
                path: s.clone(),
                what: "no such source file".into(),
            });
        }
    }
    ensure_gcc()?;
    let lib = build_c_runtime(b.runtime_target_dir.as_deref(), false)?;
    let out = &b.out_dir;
    let objs = out.join(format!("{}.obj", b.name));
    std::fs::create_dir_all(&objs)
        .map_err(|e| Error::io(&objs, "create the build directory", e))?;
    let include = include_dir()?;
    let common: Vec<String> = [
        "-march=rv32im",
        "-mabi=ilp32",
        "-O2",
        "-g",
        "-ffreestanding",
        // The runtime's registers: the ring write pointer and its limit (see ttprof.h).
        "-ffixed-gp",
        "-ffixed-tp",
        "-ffunction-sections",
        "-fdata-sections",
        "-fno-asynchronous-unwind-tables",
    ]
    .into_iter()
    .map(String::from)
    .chain(["-I".to_string(), include.display().to_string()])
    // <cstdint> and <cstddef> where the compiler has no C++ library (Debian's has none).
    .chain([
        "-idirafter".to_string(),
        include.join("compat").display().to_string(),
    ])
    .chain(c_defines(b.risc, b.arch, b.profile, &b.name))
    .collect();
    let cxx_only = [
        "-fno-exceptions",
        "-fno-rtti",
        "-fno-threadsafe-statics",
        "-fno-use-cxa-atexit",
    ];
    let entry = objs.join("ttprof_entry.cpp");
    std::fs::write(&entry, entry_source(b.risc))
        .map_err(|e| Error::io(&entry, "write the kernel's entry", e))?;
    let mut objects = Vec::new();
    for (i, src) in b.sources.iter().chain([&entry]).enumerate() {
        let cxx = c_source_kind(src) == Some(true);
        let stem = src
            .file_stem()
            .map_or("src".into(), |s| s.to_string_lossy().into_owned());
        let obj = objs.join(format!("{i}-{stem}.o"));
        let mut cmd = Command::new(if cxx { GXX } else { GCC });
        cmd.args(&common);
        if cxx {
            cmd.args(cxx_only);
        }
        if src == &entry {
            // The generated entry takes code generation flags only (not -std=c99, -D, -W..).
            cmd.args(
                b.flags
                    .iter()
                    .filter(|f| ["-O", "-m", "-f", "-g"].iter().any(|p| f.starts_with(p))),
            );
        } else {
            cmd.args(&b.flags);
        }
        cmd.arg("-c").arg(src).arg("-o").arg(&obj);
        run_tool(&mut cmd, &format!("compiling {}", src.display()))?;
        objects.push(obj);
    }
    let script = objs.join(format!("link-{}-{}.x", b.arch.name(), b.risc.ident()));
    std::fs::write(&script, riscv_linker::script::linker_script(b.arch, b.risc))
        .map_err(|e| Error::io(&script, "write the linker script", e))?;
    let elf = out.join(format!("{}.elf", b.name));
    let mut cmd = Command::new(GCC);
    cmd.args([
        "-march=rv32im",
        "-mabi=ilp32",
        "-nostdlib",
        "-nostartfiles",
        "-static",
        "-Wl,--gc-sections",
        "-Wl,-u,_start",
    ])
    .arg(format!("-Wl,-T,{}", script.display()))
    .args(
        b.flags
            .iter()
            .filter(|f| f.starts_with("-Wl,") || f.starts_with("-L") || f.starts_with("-l")),
    )
    .arg("-o")
    .arg(&elf)
    .args(&objects)
    .arg(&lib)
    .arg("-lgcc");
    run_tool(&mut cmd, &format!("linking {}", elf.display()))?;
    check_entry(&elf, b.risc)?;
    Ok(elf)
}

/// Runs a compiler step with its output shown as it is.
pub(crate) fn run_tool(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Error::Build {
            what: format!("{what}: cannot run {:?}: {e}", cmd.get_program()),
        })?;
    if !status.success() {
        return Err(Error::Build {
            what: format!("{what} failed (the compiler's messages are above)"),
        });
    }
    Ok(())
}

/// A linked image must define one of the entries the generated entry calls.
fn check_entry(elf: &Path, risc: Risc) -> Result<()> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(elf).map_err(|e| Error::io(elf, "read the linked kernel", e))?;
    let file = object::File::parse(&*data).map_err(|e| Error::Elf {
        path: elf.into(),
        what: e.to_string(),
    })?;
    let want = entry_symbols(risc);
    if file
        .symbols()
        .any(|s| s.is_definition() && s.name().is_ok_and(|n| want.iter().any(|w| w == n)))
    {
        return Ok(());
    }
    let compute = compute_entry(risc)
        .map(|(ns, main, _)| format!(", or tt-metal's compute form `namespace NAMESPACE {{ void MAIN {{ .. }} }}` ({ns}::{main} here)"))
        .unwrap_or_default();
    let _ = std::fs::remove_file(elf);
    Err(Error::Elf {
        path: elf.into(),
        what: format!("the kernel defines no entry: define `void kernel_main()`{compute}"),
    })
}
