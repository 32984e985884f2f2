//! Packs the device runtime's sources into the `ttprof` library, so a `ttprof` binary
//! installed or copied anywhere builds C and C++ kernels without the checkout it was built
//! from (`commands::kernels::runtime_dir` unpacks them into the user's cache).
//!
//! The archive (`$OUT_DIR/runtime.tar.gz`) holds a small workspace of its own: the root
//! manifest's `[workspace.package]` and `[workspace.dependencies]` (which the runtime's
//! manifests inherit from) with only the runtime's crates as members, `riscv-linker/`, and
//! `device-rt/` with its macros, headers and the C library crate (`device-rt/c`, its own
//! workspace, with its lock file). `TTPROF_RT_HASH` names the archive's contents.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The directories packed (relative to the checkout), whole.
const TREES: &[&str] = &[
    "riscv-linker/src",
    "device-rt/src",
    "device-rt/include",
    "device-rt/macros/src",
];
/// The single files packed.
const FILES: &[&str] = &[
    "riscv-linker/Cargo.toml",
    "device-rt/Cargo.toml",
    "device-rt/macros/Cargo.toml",
    "device-rt/c/Cargo.toml",
    "device-rt/c/Cargo.lock",
    "device-rt/c/lib.rs",
];
/// The workspace members of the packed root manifest.
const MEMBERS: &[&str] = &["riscv-linker", "device-rt", "device-rt/macros"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("..");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for tree in TREES {
        println!("cargo:rerun-if-changed=../{tree}");
        walk(&root, Path::new(tree), &mut files);
    }
    for file in FILES {
        println!("cargo:rerun-if-changed=../{file}");
        let bytes = fs::read(root.join(file)).unwrap_or_else(|e| panic!("read {file}: {e}"));
        files.push((file.to_string(), bytes));
    }
    println!("cargo:rerun-if-changed=../Cargo.toml");
    files.push(("Cargo.toml".into(), root_manifest(&root).into_bytes()));
    files.sort();

    let mut hash = Fnv::default();
    for (path, bytes) in &files {
        hash.eat(path.as_bytes());
        hash.eat(&(bytes.len() as u64).to_le_bytes());
        hash.eat(bytes);
    }

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let gz = flate2::write::GzEncoder::new(
        fs::File::create(out.join("runtime.tar.gz")).expect("create runtime.tar.gz"),
        flate2::Compression::best(),
    );
    let mut tar = tar::Builder::new(gz);
    for (path, bytes) in &files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, path, bytes.as_slice())
            .expect("append to runtime.tar.gz");
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .and_then(|mut f| f.flush())
        .expect("write runtime.tar.gz");
    println!("cargo:rustc-env=TTPROF_RT_HASH={:016x}", hash.0);
}

/// Every file under `dir` (relative to `root`), in a stable order.
fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
    let mut entries: Vec<_> = fs::read_dir(root.join(dir))
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = dir.join(path.file_name().expect("a name"));
        if path.is_dir() {
            walk(root, &rel, files);
        } else {
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", rel.display()));
            files.push((rel.to_string_lossy().replace('\\', "/"), bytes));
        }
    }
}

/// The checkout's root manifest with only the runtime's crates as members.
fn root_manifest(root: &Path) -> String {
    let text = fs::read_to_string(root.join("Cargo.toml")).expect("read the root Cargo.toml");
    let mut table: toml::Table = text.parse().expect("the root Cargo.toml parses");
    let workspace = table
        .get_mut("workspace")
        .and_then(|w| w.as_table_mut())
        .expect("the root Cargo.toml has [workspace]");
    workspace.insert(
        "members".into(),
        toml::Value::Array(MEMBERS.iter().map(|m| (*m).into()).collect()),
    );
    workspace.insert(
        "exclude".into(),
        toml::Value::Array(vec!["device-rt/c".into()]),
    );
    workspace.remove("default-members");
    // Path dependencies of crates not packed (the host's) would name missing directories.
    if let Some(deps) = workspace
        .get_mut("dependencies")
        .and_then(|d| d.as_table_mut())
    {
        deps.retain(|_, dep| match dep.get("path").and_then(|p| p.as_str()) {
            Some(path) => MEMBERS.contains(&path),
            None => true,
        });
    }
    format!(
        "# The runtime's crates, unpacked by ttprof to build C and C++ kernels (from its\n\
         # checkout's Cargo.toml; see host/build.rs there).\n{table}"
    )
}

/// FNV-1a, 64 bits: names the archive's contents (no cryptographic need).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
