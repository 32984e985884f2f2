//! Issue 4: a kernel built without the `profile` feature is byte-for-byte the kernel
//! without instrumentation.
//!
//! The uninstrumented twin is made from the example kernels' own sources by deleting every
//! line that uses a recording macro, so the comparison covers every kernel and primitive.

use riscv_linker::Arch;
use std::path::Path;
use ttprof_tests::{build_kernels_into, text_bytes, workspace};

/// The recording macros, and a value zone's `.set(..)`, which goes with its `value_zone!`.
const MACROS: [&str; 6] = [
    "zone!(",
    "value_zone!(",
    "event!(",
    "data!(",
    "sum_zone!(",
    ".set(",
];

fn copy_stripped(from: &Path, to: &Path, stripped: &mut usize) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_stripped(&src, &dst, stripped);
            }
        } else if entry.file_name() == "Cargo.toml" {
            // Point the twin's path dependencies at the originals.
            let text = std::fs::read_to_string(&src).unwrap();
            let fixed: Vec<String> = text
                .lines()
                .map(|l| match l.split_once("path = \"") {
                    Some((head, rest)) => {
                        let (rel, tail) = rest.split_once('"').unwrap();
                        let abs = from.join(rel).canonicalize().unwrap();
                        format!("{head}path = \"{}\"{tail}", abs.display())
                    }
                    None => l.to_string(),
                })
                .collect();
            std::fs::write(&dst, fixed.join("\n") + "\n").unwrap();
        } else if src.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&src).unwrap();
            std::fs::write(&dst, strip(&text, stripped)).unwrap();
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The source without instrumentation: lines that use a recording macro become empty (so
/// every other line keeps its number, which a panic's location carries), except the block
/// form `zone!("name", {` (rustfmt's layout), which becomes a plain block `{`, its closing
/// `});` at the same indentation becoming `};`.
fn strip(text: &str, stripped: &mut usize) -> String {
    let mut out = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    for l in text.lines() {
        let indent = &l[..l.len() - l.trim_start().len()];
        if l.trim_start().starts_with("//") {
            out.push(l.to_string());
        } else if l.contains("zone!(") && l.trim_end().ends_with('{') {
            *stripped += 1;
            blocks.push(indent.to_string());
            out.push(format!("{indent}{{"));
        } else if l.trim() == "});" && blocks.last().is_some_and(|b| b == indent) {
            blocks.pop();
            out.push(format!("{indent}}};"));
        } else if MACROS.iter().any(|m| l.contains(m)) {
            *stripped += 1;
            out.push(String::new());
        } else {
            out.push(l.to_string());
        }
    }
    assert!(
        blocks.is_empty(),
        "a block-form zone without its closing `}});`"
    );
    out.join("\n") + "\n"
}

#[test]
fn disabled_profiling_compiles_to_the_uninstrumented_code() {
    let ws = workspace();
    let kernels = ws.join("examples/kernels");
    let twin = ws.join("target/plain-kernels");
    let _ = std::fs::remove_dir_all(&twin);
    let mut stripped = 0;
    copy_stripped(&kernels, &twin, &mut stripped);
    assert!(
        stripped >= 20,
        "only {stripped} instrumentation lines found: did the kernels change?"
    );

    let out = ws.join("target/plain-kernels-elf");
    let off = build_kernels_into(&kernels, Arch::WormholeB0, true, &[], &out.join("off"));
    let plain = build_kernels_into(&twin, Arch::WormholeB0, true, &[], &out.join("plain"));
    let on = build_kernels_into(&kernels, Arch::WormholeB0, false, &[], &out.join("on"));
    for (name, elf) in &off.binaries {
        let twin_text = text_bytes(plain.elf(name).unwrap());
        let off_text = text_bytes(elf);
        assert!(
            off_text == twin_text,
            "{name}: .text differs without `profile` ({} vs {} bytes)",
            off_text.len(),
            twin_text.len()
        );
        // And the instrumentation is really there when enabled.
        assert!(
            text_bytes(on.elf(name).unwrap()).len() > off_text.len(),
            "{name}: profiling adds no code?"
        );
    }
}

/// Issue 23: ttprof-dm's `zones` feature does not switch profiling back on in a kernel built
/// without `profile` (it used to enable ttprof-rt's default features, `profile` among them).
#[test]
fn ttprof_dm_zones_follow_the_kernel_s_profile_feature() {
    let tree = |features: &[&str]| {
        let out =
            std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args([
                    "tree",
                    "--offline",
                    "-e",
                    "features",
                    "-i",
                    "ttprof-rt",
                    "--manifest-path",
                ])
                .arg(workspace().join("examples/kernels/Cargo.toml"))
                .args(features)
                .output()
                .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let off = tree(&["--no-default-features", "--features", "ttprof-dm/zones"]);
    assert!(
        off.contains("ttprof-dm feature \"zones\"") && !off.contains("feature \"profile\""),
        "{off}"
    );
    let on = tree(&["--features", "ttprof-dm/zones"]);
    assert!(on.contains("ttprof-rt feature \"profile\""), "{on}");
}
