//! `ttprof build --tt-metal`: tt-metal's own dataflow kernels from the pinned ttnn wheel
//! (scripts/fetch-tt-metal.sh's cache, or TT_METAL_HOME) build unchanged, with the
//! compile-time arguments tt-metal's host would give them, and link where tt-metal's
//! firmware calls them: the entry at the start of the kernel's text, the text after the
//! firmware's (Wormhole's NCRISC: in its instruction RAM), the data after the firmware's local
//! data, the ring in the RISC's part of the mailboxes' `profiler_msg_t`, and the zone sites
//! named in the ELF. Without the cache the tests say why and pass, except in CI (`CI=true`),
//! where a missing cache fails them.

use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use ttprof_tests::{firmware_symbol, tt_metal_root, ttprof, workspace};

/// What a test reads of a built kernel.
struct Elf {
    entry: u64,
    text: u64,
    data: u64,
    symbols: BTreeMap<String, u64>,
    /// (kind, name) of every zone site.
    sites: Vec<(String, String)>,
}

fn read_elf(path: &Path) -> Elf {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*bytes).unwrap();
    let addr = |name: &str| {
        file.section_by_name(name)
            .unwrap_or_else(|| panic!("{}: no {name}", path.display()))
            .address()
    };
    let mut symbols = BTreeMap::new();
    let mut sites = Vec::new();
    for s in file.symbols() {
        let Ok(name) = s.name() else { continue };
        if name.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(name).unwrap();
            sites.push((
                v["k"].as_str().unwrap().into(),
                v["n"].as_str().unwrap().into(),
            ));
        } else {
            symbols.insert(name.to_string(), s.address());
        }
    }
    Elf {
        entry: file.entry(),
        text: addr(".text"),
        data: addr(".data"),
        symbols,
        sites,
    }
}

/// Builds `source` with `args` into `out/case` (`out` a temporary directory: a test writes
/// nothing into the checkout); returns the ELF.
fn build(out: &Path, case: &str, source: &Path, args: &[&str]) -> PathBuf {
    let dir = out.join(case);
    let mut all = vec!["build", "--tt-metal", "--target-dir", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push(source.to_str().unwrap());
    let out = ttprof(None, &all);
    assert!(
        out.status.success(),
        "{case}: ttprof build --tt-metal failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stem = source.file_stem().unwrap().to_str().unwrap();
    let elf = dir.join(format!("{stem}.elf"));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        printed.trim(),
        format!("{stem} {}", elf.display()),
        "{case}"
    );
    elf
}

/// The checks every built kernel passes: where tt-metal's firmware expects it.
fn check_layout(root: &Path, case: &str, elf: &Elf, arch: &str, risc: &str) {
    let start = elf.symbols["_start"];
    assert_eq!(elf.entry, start, "{case}: the entry is _start");
    assert_eq!(elf.text, start, "{case}: _start begins the text");
    let text = if arch == "wormhole_b0" && risc == "ncrisc" {
        0xFFC0_0000 // MEM_NCRISC_IRAM_BASE: Wormhole's NCRISC runs kernels from its IRAM
    } else {
        firmware_symbol(root, arch, risc, "__fw_export_text_end")
    };
    assert_eq!(
        elf.text, text,
        "{case}: the kernel's text follows the firmware's"
    );
    assert_eq!(
        elf.data,
        firmware_symbol(root, arch, risc, "__fw_export_ldm_end"),
        "{case}: the kernel's data follows the firmware's local data"
    );
    if arch == "wormhole_b0" && risc == "ncrisc" {
        assert!(
            elf.symbols.contains_key("kernel_launch"),
            "{case}: no kernel_launch"
        );
    }
    assert!(
        !elf.symbols.contains_key("__global_pointer$"),
        "{case}: gp is the ring limit during the kernel: no gp-relative code"
    );
    let kernel_zone = format!("{}-KERNEL", risc.to_uppercase());
    assert!(
        elf.sites.contains(&("zone".into(), kernel_zone.clone())),
        "{case}: no {kernel_zone} site in {:?}",
        elf.sites
    );
}

/// The kernels of tt-metal's own ops in the wheel, with the compile-time arguments tt-metal's
/// host gives them for interleaved DRAM tensors of bfloat16 tiles (TensorAccessorArgs: the
/// config word 2 = IsDram, then the 2048-byte page size).
#[test]
fn tt_metals_own_op_kernels_build_unchanged() {
    let Some(root) = tt_metal_root() else { return };
    let ops = root.join("ttnn/cpp/ttnn/operations");
    let dataflow = |op: &str, file: &str| ops.join(op).join("device/kernels/dataflow").join(file);
    let cases: Vec<(&str, PathBuf, &str, &str, Vec<&str>)> = vec![
        (
            "unary-reader",
            dataflow("eltwise/unary", "reader_unary_interleaved_start_id.cpp"),
            "wormhole_b0",
            "ncrisc",
            vec!["--compile-args", "2,2048"],
        ),
        (
            "unary-reader-backwards",
            dataflow("eltwise/unary", "reader_unary_interleaved_start_id.cpp"),
            "wormhole_b0",
            "brisc",
            vec!["--compile-args", "2,2048", "-D", "BACKWARDS", "--noc", "1"],
        ),
        (
            "unary-writer",
            dataflow("eltwise/unary", "writer_unary_interleaved_start_id.cpp"),
            "wormhole_b0",
            "brisc",
            vec!["--compile-args", "16,2,2048"],
        ),
        (
            "binary-reader",
            dataflow("eltwise/binary", "reader_binary_interleaved_start_id.cpp"),
            "wormhole_b0",
            "ncrisc",
            vec!["--compile-args", "0,2,2048,2,2048"],
        ),
        (
            "bmm-reader-8bank",
            dataflow("matmul", "reader_bmm_8bank_output_tiles_partitioned.cpp"),
            "wormhole_b0",
            "ncrisc",
            vec![
                "--compile-args",
                "32,32,2,2048,2,2048",
                "--named-compile-args",
                "cb_in0=0,cb_in1=1",
            ],
        ),
        (
            "bmm-reader-tile-layout",
            dataflow("matmul", "reader_bmm_tile_layout.cpp"),
            "wormhole_b0",
            "ncrisc",
            vec![
                "--compile-args",
                "2,2048,2,2048",
                "--named-compile-args",
                "cb_in0=0,cb_in1=1",
            ],
        ),
        (
            "unary-writer-blackhole",
            dataflow("eltwise/unary", "writer_unary_interleaved_start_id.cpp"),
            "blackhole",
            "brisc",
            vec!["--compile-args", "16,2,2048"],
        ),
        (
            "unary-reader-blackhole",
            dataflow("eltwise/unary", "reader_unary_interleaved_start_id.cpp"),
            "blackhole",
            "ncrisc",
            vec!["--compile-args", "2,2048"],
        ),
    ];
    let out = tempfile::tempdir().unwrap();
    for (case, source, arch, risc, args) in cases {
        let mut all = vec!["--core", risc, "--arch", arch];
        all.extend(args);
        let elf = read_elf(&build(out.path(), case, &source, &all));
        check_layout(&root, case, &elf, arch, risc);
        assert!(
            elf.symbols.contains_key("_Z11kernel_mainv"),
            "{case}: no kernel_main"
        );
    }
}

/// A kernel with tt-metal's profiler macros: each becomes a ttprof site of its kind, named in
/// the ELF, and the ring sits in this RISC's part of the mailboxes' profiler_msg_t, computed
/// from the pinned dev_msgs.h at build time (Wormhole B0: mailboxes at 16, the 256-byte
/// control vector at 0xB10, per-RISC buffers of 2 KiB from 0xC10; Blackhole: mailboxes at 96,
/// control vector at 0xBE0, buffers from 0xCE0 - docs/design/tt-metal.md's table).
#[test]
fn profiler_macros_record_into_rings_in_the_mailboxes() {
    let Some(root) = tt_metal_root() else { return };
    let source = workspace().join("examples/tt-metal/zones_reader.cpp");
    let out = tempfile::tempdir().unwrap();
    for (arch, risc, block, tile) in [
        ("wormhole_b0", "ncrisc", 0x1410, 0xB10),
        ("wormhole_b0", "brisc", 0xC10, 0xB10),
        ("blackhole", "ncrisc", 0x14E0, 0xBE0),
        ("blackhole", "brisc", 0xCE0, 0xBE0),
    ] {
        let case = format!("zones-{arch}-{risc}");
        let args = ["--core", risc, "--arch", arch, "--compile-args", "2,2048"];
        let elf = read_elf(&build(out.path(), &case, &source, &args));
        check_layout(&root, &case, &elf, arch, risc);
        for site in [
            ("zone", "read-tile"),
            ("sum", "cb-wait"),
            ("data", "last-page"),
            ("event", "reader-done"),
        ] {
            assert!(
                elf.sites.contains(&(site.0.into(), site.1.into())),
                "{case}: no {site:?} site in {:?}",
                elf.sites
            );
        }
        assert_eq!(elf.symbols["__ttprof_ring_block"], block, "{case}");
        assert_eq!(elf.symbols["__ttprof_ring_base"], block + 0x80, "{case}");
        assert_eq!(
            elf.symbols["__ttprof_ring_capacity"],
            0x800 - 0x80,
            "{case}"
        );
        assert_eq!(elf.symbols["__ttprof_tile_block"], tile, "{case}");
    }
    // Without PROFILE_KERNEL the macros are gone: only the launch's own sites remain.
    let elf = read_elf(&build(
        out.path(),
        "zones-noprofile",
        &source,
        &[
            "--core",
            "ncrisc",
            "--compile-args",
            "2,2048",
            "--no-profile",
        ],
    ));
    assert!(elf.sites.is_empty(), "{:?}", elf.sites);
}

/// Without `--target-dir` the build goes to `target/ttprof-kernels/tt-metal/ARCH/RISC` of
/// the current directory (run here in a temporary directory): the ELF, and beside it what
/// produced it - the generated wrapper, `chlkc_descriptors.h`, the firmware's symbols and the
/// linker script - as the README's "With tt-metal" section says.
#[test]
fn the_default_output_is_under_the_current_directory() {
    let Some(_root) = tt_metal_root() else { return };
    let source = workspace().join("examples/tt-metal/zones_reader.cpp");
    let cwd = tempfile::tempdir().unwrap();
    let args = [
        "build",
        "--tt-metal",
        "--core",
        "brisc",
        "--arch",
        "wormhole_b0",
        "--compile-args",
        "2,2048",
        source.to_str().unwrap(),
    ];
    let out = ttprof(Some(cwd.path()), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = cwd
        .path()
        .join("target/ttprof-kernels/tt-metal/wormhole_b0/brisc");
    let elf = dir.join("zones_reader.elf");
    let printed = String::from_utf8_lossy(&out.stdout);
    let (name, path) = printed.trim().split_once(' ').unwrap();
    assert_eq!(name, "zones_reader");
    assert_eq!(
        std::fs::canonicalize(path).unwrap(),
        std::fs::canonicalize(&elf).unwrap()
    );
    for file in [
        "zones_reader.ttprof.cpp",
        "chlkc_descriptors.h",
        "firmware-brisc.ld",
        "link-brisc.ld",
    ] {
        assert!(dir.join(file).is_file(), "no {file} in {}", dir.display());
    }
    let wrapper = std::fs::read_to_string(dir.join("zones_reader.ttprof.cpp")).unwrap();
    assert!(
        wrapper.contains(source.to_str().unwrap()),
        "the wrapper includes the kernel as it is:\n{wrapper}"
    );
}

/// Mistakes are exit 1 naming what is wrong: `--core compute` without `--tt-metal`, a compiler error (shown as the
/// compiler prints it), a missing tt-metal tree (pointing at scripts/fetch-tt-metal.sh). Run
/// in a temporary directory: a failed build leaves its directory there, not in the checkout.
#[test]
fn mistakes_say_what_is_wrong() {
    let Some(_root) = tt_metal_root() else { return };
    let source = workspace().join("examples/tt-metal/zones_reader.cpp");
    let s = source.to_str().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let here = Some(cwd.path());
    // A compute kernel's three TRISCs are a tt-metal build only.
    let out = ttprof(here, &["build", "--core", "compute", s]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --tt-metal"));

    // TensorAccessorArgs<0> reads two compile-time arguments: none is an error in the kernel.
    let out = ttprof(here, &["build", "--tt-metal", "--core", "ncrisc", s]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Index out of range") && err.contains("compiling"),
        "{err}"
    );

    let empty = cwd.path().join("no-tree");
    std::fs::create_dir_all(&empty).unwrap();
    let out = std::process::Command::new(ttprof_tests::ttprof_binary())
        .args(["build", "--tt-metal", "--core", "ncrisc", s])
        .current_dir(cwd.path())
        .env("TT_METAL_HOME", &empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("scripts/fetch-tt-metal.sh") && err.contains("TT_METAL_HOME"),
        "{err}"
    );
}
