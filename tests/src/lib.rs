//! Helpers shared by the end-to-end tests in `tests/tests/`.
#![warn(missing_docs)]

use riscv_linker::Arch;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof::kernels::{self, BuiltKernels, KernelBuild};
use ttprof::launch::Settings;
use ttprof::session::FinishedSession;
use ttprof_demo::ops;
use ttprof_demo::scenario::{self, Scenario};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// Where tests build kernels for `arch` (shared with the demo so `core` is compiled once).
pub fn kernel_target_dir(arch: Arch) -> PathBuf {
    workspace().join("target").join("kernels").join(arch.name())
}

/// Builds the example kernel crate (or a copy of it) for `arch` with the given features.
pub fn build_kernels(
    crate_dir: &Path,
    arch: Arch,
    no_default_features: bool,
    features: &[&str],
) -> BuiltKernels {
    let b = KernelBuild {
        crate_dir: crate_dir.to_path_buf(),
        arch,
        target_dir: kernel_target_dir(arch),
        features: features.iter().map(|s| s.to_string()).collect(),
        no_default_features,
    };
    kernels::build(&b).unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`build_kernels`], then copies the ELFs into `dest` (cargo reuses output paths, so
/// builds of the same crate with other features overwrite each other).
pub fn build_kernels_into(
    crate_dir: &Path,
    arch: Arch,
    no_default_features: bool,
    features: &[&str],
    dest: &Path,
) -> BuiltKernels {
    let built = build_kernels(crate_dir, arch, no_default_features, features);
    std::fs::create_dir_all(dest).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
    let mut copied = BuiltKernels::default();
    for (name, elf) in built.binaries {
        let to = dest.join(&name);
        std::fs::copy(&elf, &to)
            .unwrap_or_else(|e| panic!("copy {} to {}: {e}", elf.display(), to.display()));
        copied.binaries.insert(name, to);
    }
    copied
}

/// The bytes of an ELF's `.text` section.
pub fn text_bytes(elf: &Path) -> Vec<u8> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    let file = object::File::parse(&*data).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    let text = file
        .section_by_name(".text")
        .unwrap_or_else(|| panic!("{} has no .text", elf.display()));
    text.data().expect("text bytes").to_vec()
}

/// The workspace's `ttprof` binary, next to this test executable's directory (`cargo test
/// --workspace`, the project's test command, builds it).
pub fn ttprof_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let bin = profile_dir.join("ttprof");
    assert!(bin.exists(), "{} is missing: run the tests with `cargo test --workspace` (or `cargo build -p ttprof-cli` first)", bin.display());
    bin
}

/// Runs the `ttprof` binary with `args`, in `dir` when given (else in the test's working
/// directory), and echoes the command line and what it printed to the test's stderr (shown
/// when the test fails).
pub fn ttprof<S: AsRef<OsStr>>(dir: Option<&Path>, args: &[S]) -> Output {
    let mut cmd = Command::new(ttprof_binary());
    cmd.args(args);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", ttprof_binary().display()));
    let line: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    eprintln!(
        "$ ttprof {}\n{}{}",
        line.join(" "),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// [`ttprof()`], which must exit 0 (the assertion names the arguments; what it printed is
/// on the test's stderr already).
pub fn ttprof_ok<S: AsRef<OsStr>>(dir: Option<&Path>, args: &[S]) -> Output {
    let o = ttprof(dir, args);
    let line: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    assert_eq!(o.status.code(), Some(0), "ttprof {}", line.join(" "));
    o
}

/// The folder `path` under the workspace (e.g. `target/test-lines/cxx`), emptied and
/// created for one test.
pub fn fresh_dir(path: &str) -> PathBuf {
    let dir = workspace().join(path);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The example kernel `name` (examples/kernels), built for Wormhole with profiling on.
pub fn example_elf(name: &str) -> PathBuf {
    build_kernels(
        &workspace().join("examples/kernels"),
        Arch::WormholeB0,
        false,
        &[],
    )
    .elf(name)
    .unwrap_or_else(|e| panic!("{e}"))
    .to_path_buf()
}

/// The first file in `dir` whose name starts with `prefix` (outputs named with a date).
pub fn file_starting(dir: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
        .path()
}

/// A device CSV's rows: (zone name, marker type) -> (data, meta data) of each row.
pub fn csv_rows(path: &Path) -> BTreeMap<(String, String), Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rows: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for line in text.lines().skip(2) {
        let f: Vec<&str> = line.splitn(15, ',').collect();
        rows.entry((f[10].to_string(), f[11].to_string()))
            .or_default()
            .push((f[6].to_string(), f[14].to_string()));
    }
    rows
}

/// The demo's scenario (the `ttprof-demo` defaults): four ops of 4 tiles on a 2x2 grid of
/// `arch`, two emulator threads, a consumer draining every 250k cycles, the realistic
/// clock; its files go into `out`. Tests that need another grid, clock or cadence change
/// those fields.
pub fn demo_scenario(arch: Arch, out: &Path) -> Scenario {
    Scenario {
        lines: false,
        backend: Default::default(),
        sample: None,
        arch,
        grid: (2, 2),
        ops: ops::sequence(4),
        out: out.to_path_buf(),
        threads: 2,
        drain_every_cycles: 250_000,
        settings: Settings {
            consumer: true,
            ..Settings::default()
        },
        clock: scenario::realistic_clock(arch),
    }
}

/// Runs [`demo_scenario`] on Wormhole in a fresh `out` (kernels built into `out/kernels`).
pub fn run_demo(out: &Path) -> FinishedSession {
    let arch = Arch::WormholeB0;
    let _ = std::fs::remove_dir_all(out);
    let elfs =
        scenario::build_kernels(arch, &out.join("kernels")).unwrap_or_else(|e| panic!("{e}"));
    scenario::run(&demo_scenario(arch, out), &elfs, |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh emulated device of `grid` Wormhole tiles whose image lives in
/// `target/<name>/device.img`, a read-write mapping of it, and its first tile, with every
/// tile's profiler control block written (default settings, no consumer).
pub fn emulated_device(
    name: &str,
    grid: (u8, u8),
) -> (
    ttprof_emu::Device,
    ttprof::devmem::MappedImage,
    riscv_linker::NocCoord,
) {
    let dir = workspace().join("target").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut cfg = ttprof_emu::DeviceConfig::new(Arch::WormholeB0, grid);
    cfg.image = Some(dir.join("device.img"));
    let dev = ttprof_emu::Device::new(cfg).unwrap_or_else(|e| panic!("{e}"));
    let mem = ttprof::devmem::MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none())
        .unwrap_or_else(|e| panic!("{e}"));
    for t in dev.tiles() {
        ttprof::launch::init_tile(&mem, 0, t, Arch::WormholeB0, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let tile = dev.tiles()[0];
    (dev, mem, tile)
}

/// Runs `ttprof run ARGS --lines --out OUT` in `dir` once on the JIT and once forced onto
/// the interpreter (`TTPROF_EMU_JIT=0`, into `OUT-interpreted`) and asserts that the line
/// tables (`ttprof_lines.parquet`: cycles per zone, pc and cause) are the same byte for
/// byte: the JIT's lines-mode counts are the interpreter's charges. `OUT` is relative to
/// `dir`.
pub fn assert_lines_on_jit_equal_interpreter(dir: &Path, args: &[&str], out: &str) {
    let table = |interpret: bool| {
        let out = if interpret {
            format!("{out}-interpreted")
        } else {
            out.to_string()
        };
        let mut c = Command::new(ttprof_binary());
        c.arg("run")
            .args(args)
            .args(["--lines", "--out", &out])
            .current_dir(dir);
        if interpret {
            c.env(ttprof_emu::JIT_VAR, "0");
        } else {
            c.env_remove(ttprof_emu::JIT_VAR);
        }
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "ttprof run {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(dir.join(&out).join("ttprof_lines.parquet")).unwrap()
    };
    assert!(
        table(false) == table(true),
        "ttprof_lines.parquet differs between the JIT and the interpreter: {} ({args:?})",
        dir.display()
    );
}

/// A symbol's value in the `_weakened.elf` of `risc` (`brisc`, `trisc0`, ...) in tt-metal's
/// pre-compiled firmware build for `arch` (`wormhole_b0`, `blackhole`) under the tt-metal
/// tree `root`: what kernels built by `ttprof build --tt-metal` link against.
pub fn firmware_symbol(root: &Path, arch: &str, risc: &str, name: &str) -> u64 {
    use object::{Object, ObjectSymbol};
    let hash = riscv_linker::tt_metal::default_firmware_build(match arch {
        "blackhole" => riscv_linker::Arch::Blackhole,
        _ => riscv_linker::Arch::WormholeB0,
    });
    let path = root
        .join("tt_metal/pre-compiled")
        .join(hash)
        .join(risc)
        .join(format!("{risc}_weakened.elf"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*bytes).unwrap();
    let s = file.symbols().find(|s| s.name() == Ok(name));
    s.unwrap_or_else(|| panic!("{}: no {name}", path.display()))
        .address()
}

/// tt-metal's device tree (`TT_METAL_HOME`, or the cache of scripts/fetch-tt-metal.sh), or
/// `None` outside CI, saying why on stderr (a test that needs it then passes). In CI
/// (`CI=true`) a missing tree fails the test.
pub fn tt_metal_root() -> Option<PathBuf> {
    match ttprof::tt_metal_build::root() {
        Ok(root) => Some(root),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("CI needs tt-metal's device tree (scripts/fetch-tt-metal.sh): {e}"),
    }
}

/// `ttprof run --program PROGRAM --out OUT`.
pub fn run_program(program: &Path, out: &Path) -> Output {
    run_program_with(program, out, &[])
}

/// `ttprof run --program PROGRAM EXTRA.. --out OUT`.
pub fn run_program_with(program: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec!["run".as_ref(), "--program".as_ref(), program.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    args.extend([OsStr::new("--out"), out.as_os_str()]);
    ttprof(None, &args)
}
