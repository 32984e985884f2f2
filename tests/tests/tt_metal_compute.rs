//! `ttprof build --tt-metal --core compute`: tt-metal's compute kernels from the pinned ttnn
//! wheel build unchanged for the three TRISCs with Debian's toolchain, each linked where
//! tt-metal's TRISC firmware calls it, with tt-llk's Tensix instructions as the words the ISA
//! documentation defines; a kernel that reaches SFPU code is refused naming the function.
//! tests/tests/tt_metal_compute_run.rs runs them. Without the cache the tests say why and pass, except
//! in CI (`CI=true`).

use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof_tests::{firmware_symbol, tt_metal_root, ttprof_binary, workspace};

const TRISCS: [&str; 3] = ["trisc0", "trisc1", "trisc2"];

/// Runs `ttprof build --tt-metal --core compute ARGS.. SOURCE` into `dir`, with
/// `TT_SFPI_COMPILER` set to `sfpi` when given, and echoes what it printed (shown when the
/// test fails).
fn run_compute_build(dir: &Path, source: &Path, args: &[&str], sfpi: Option<&Path>) -> Output {
    let mut cmd = Command::new(ttprof_binary());
    cmd.args(["build", "--tt-metal", "--core", "compute", "--target-dir"])
        .arg(dir)
        .args(args)
        .arg(source);
    if let Some(sfpi) = sfpi {
        cmd.env("TT_SFPI_COMPILER", sfpi);
    }
    let out = cmd.output().unwrap();
    eprintln!(
        "$ {}ttprof build --tt-metal --core compute {} {}\n{}{}",
        sfpi.map_or(String::new(), |s| format!(
            "TT_SFPI_COMPILER={} ",
            s.display()
        )),
        args.join(" "),
        source.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`run_compute_build`] with Debian's GCC, which must succeed: the three ELFs, in TRISC
/// order, as printed.
fn build_compute(dir: &Path, source: &Path, args: &[&str]) -> Vec<PathBuf> {
    let out = run_compute_build(dir, source, args, None);
    assert!(
        out.status.success(),
        "{}: ttprof build failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let stem = source.file_stem().unwrap().to_str().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 3, "one ELF per TRISC:\n{printed}");
    TRISCS
        .iter()
        .zip(lines)
        .map(|(t, line)| {
            let elf = dir.join(t).join(format!("{stem}-{t}.elf"));
            assert_eq!(line, format!("{stem}-{t} {}", elf.display()));
            elf
        })
        .collect()
}

/// The opcodes of the Tensix instructions in `elf`'s text: every word that is not an RV32
/// instruction (low bits not 0b11) is a `.ttinsn` word, the instruction rotated left by two.
fn tensix_opcodes(elf: &Path) -> Vec<u8> {
    let bytes = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let text = file.section_by_name(".text").unwrap().data().unwrap();
    text.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .filter(|w| w & 3 != 3 && *w != 0)
        .map(|w| (w.rotate_right(2) >> 24) as u8)
        .collect()
}

/// A symbol's value in `elf`.
fn symbol(elf: &Path, name: &str) -> u64 {
    let bytes = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let s = file.symbols().find(|s| s.name() == Ok(name));
    s.unwrap_or_else(|| panic!("{}: no {name}", elf.display()))
        .address()
}

/// tt-metal's unary SFPU kernel from the wheel, and the defines and arguments that make it
/// relu (SFPU code).
const RELU: &str = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp";
const RELU_ARGS: [&str; 6] = [
    "--compile-args",
    "1,1",
    "-D",
    "SFPU_OP_RELU_FAMILY_INCLUDE=1",
    "-D",
    "SFPU_OP_CHAIN_0=relu_tile_init();relu_tile(0);",
];

// Tensix opcodes (tt-isa-documentation, WormholeB0/TensixTile/TensixCoprocessor).
const ZEROACC: u8 = 0x10;
const ZEROSRC: u8 = 0x11;
const SETRWC: u8 = 0x37;
const PACR: u8 = 0x41;
const SEMPOST: u8 = 0xA4;
const SEMWAIT: u8 = 0xA6;

/// Eltwise add, matmul, tilize and untilize of tt-metal's own ops, with the compile-time
/// arguments and defines their hosts give them, on Wormhole B0 (add and matmul on Blackhole
/// too): three ELFs each, `_start` first in each TRISC's text after its firmware's, and on
/// Wormhole the instructions each thread must push (math zeroes Dst and moves its counters, the unpacker
/// zeroes the source registers, the packer packs; math and pack hand Dst over with
/// semaphores).
#[test]
fn tt_metals_own_compute_kernels_build_unchanged_for_the_three_triscs() {
    let Some(root) = tt_metal_root() else { return };
    let ops = root.join("ttnn/cpp/ttnn/operations");
    let out = tempfile::tempdir().unwrap();
    let add = ops.join("eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp");
    let add_defines = [
        "-D",
        "ELTWISE_OP=add_tiles",
        "-D",
        "ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD",
    ];
    let bmm = ops.join("matmul/device/kernels/compute/bmm.cpp");
    let bmm_args = [
        "--compile-args",
        "1,2,3,2",
        "--named-compile-args",
        "cb_in0=0,cb_in1=1,cb_out=16",
    ];
    let cases: Vec<(&str, &str, PathBuf, Vec<&str>)> = vec![
        ("add", "wormhole_b0", add.clone(), add_defines.to_vec()),
        ("bmm", "wormhole_b0", bmm.clone(), bmm_args.to_vec()),
        (
            "tilize",
            "wormhole_b0",
            ops.join("data_movement/tilize/device/kernels/compute/tilize.cpp"),
            vec!["--compile-args", "0,16,1,1"],
        ),
        (
            "untilize",
            "wormhole_b0",
            ops.join("data_movement/untilize/device/kernels/compute/untilize.cpp"),
            vec!["--compile-args", "1,1,0,16"],
        ),
        ("add-bh", "blackhole", add, add_defines.to_vec()),
        ("bmm-bh", "blackhole", bmm, bmm_args.to_vec()),
    ];
    for (case, arch, source, mut args) in cases {
        args.extend(["--arch", arch]);
        let elves = build_compute(&out.path().join(case), &source, &args);
        let mut ops_of = Vec::new();
        for (t, elf) in TRISCS.iter().zip(&elves) {
            let start = symbol(elf, "_start");
            let bytes = std::fs::read(elf).unwrap();
            let file = object::File::parse(&*bytes).unwrap();
            assert_eq!(file.entry(), start, "{case} {t}: the entry is _start");
            assert_eq!(
                file.section_by_name(".text").unwrap().address(),
                start,
                "{case} {t}: _start begins the text"
            );
            assert_eq!(
                start,
                firmware_symbol(&root, arch, t, "__fw_export_text_end"),
                "{case} {t}: after the firmware's text"
            );
            let opcodes: BTreeSet<u8> = tensix_opcodes(elf).into_iter().collect();
            assert!(opcodes.len() >= 5, "{case} {t}: {opcodes:x?}");
            ops_of.push(opcodes);
        }
        if arch == "blackhole" {
            continue; // Blackhole's tt-llk pushes other words; the opcodes above are Wormhole's.
        }
        assert!(
            ops_of[1].contains(&ZEROACC) && ops_of[1].contains(&SETRWC),
            "{case}: math zeroes Dst and moves its counters: {:x?}",
            ops_of[1]
        );
        assert!(ops_of[0].contains(&ZEROSRC), "{case}: {:x?}", ops_of[0]);
        assert!(ops_of[2].contains(&PACR), "{case}: {:x?}", ops_of[2]);
        assert!(
            ops_of[1].contains(&SEMPOST) && ops_of[2].contains(&SEMWAIT),
            "{case}: math posts Dst to pack, which waits: {:x?} {:x?}",
            ops_of[1],
            ops_of[2]
        );
    }
}

/// tt-metal's profiler macros in a compute kernel of ours record into ttprof's rings: each
/// TRISC's ELF names its zone site and the firmware's wrapper zones.
#[test]
fn a_compute_kernels_zones_are_sites_on_every_trisc() {
    if tt_metal_root().is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let source = workspace().join("examples/tt-metal/copy_tiles_compute.cpp");
    for elf in build_compute(out.path(), &source, &[]) {
        let bytes = std::fs::read(&elf).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        // The runtime's own PROFILER-STALL zone (a wait for the consumer) aside.
        let zones: BTreeSet<String> = file
            .symbols()
            .filter_map(|s| {
                let v: serde_json::Value = serde_json::from_str(s.name().ok()?).ok()?;
                (v["k"] == "zone").then(|| v["n"].as_str().unwrap().to_string())
            })
            .filter(|n| n != "PROFILER-STALL")
            .collect();
        let want: BTreeSet<String> = ["TRISC-FW", "TRISC-KERNEL", "copy-tile"]
            .map(String::from)
            .into();
        assert_eq!(zones, want, "{}", elf.display());
    }
}

/// SFPU code cannot be built by Debian's GCC: the refusal names the function that needed
/// the SFPI compiler and where it is, once, without the compiler's error cascade.
#[test]
fn a_kernel_that_reaches_sfpu_code_is_refused_naming_the_function() {
    let Some(root) = tt_metal_root() else { return };
    let source = root.join(RELU);
    let dir = tempfile::tempdir().unwrap();
    let out = run_compute_build(dir.path(), &source, &RELU_ARGS, None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reaches SFPU code: void ckernel::sfpu::")
            && err.contains("/sfpu/ckernel_sfpu_")
            && err.contains("Tenstorrent's SFPI compiler"),
        "{err}"
    );
    assert!(!err.contains("error: 'vFloat'"), "no cascade: {err}");

    // SFPU code that compiles against ttprof's stand-in sfpi.h (declared, never defined) is
    // refused at the link, naming the function and the kernel's line the debug information gives
    // (the inlined code's, near the call).
    let copy =
        std::fs::read_to_string(workspace().join("examples/tt-metal/copy_tiles_compute.cpp"))
            .unwrap();
    let abs = copy
        .replace(
            "#include \"api/compute/pack.h\"",
            "#include \"api/compute/pack.h\"\n#include \"api/compute/compute_kernel_api.h\"",
        )
        .replace(
            "copy_tile(cb_in, 0, 0);",
            "copy_tile(cb_in, 0, 0);\n        abs_tile_init();\n        abs_tile(0);",
        );
    let source = dir.path().join("abs_tiles.cpp");
    std::fs::write(&source, abs).unwrap();
    let out = run_compute_build(&dir.path().join("abs"), &source, &[], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "reaches SFPU code: kernel_main() ({}:",
            source.display()
        )) && err.contains("Tenstorrent's SFPI compiler"),
        "{err}"
    );
}

/// A stand-in for Tenstorrent's SFPI toolchain in `dir` (SFPI's layout: `compiler/bin/
/// riscv-tt-elf-g++`, `include/`): the driver logs its arguments to `compiler/bin/calls.log`,
/// then runs Debian's GCC with `-mcpu=tt-*` as `-march=rv32im -mabi=ilp32` and, compiling,
/// ttprof's `.ttinsn` header (what SFPI's assembler knows). No SFPI toolchain is available
/// here, so FPU code builds through it exactly as with Debian's GCC and SFPU code does not.
fn fake_sfpi(dir: &Path) -> PathBuf {
    let bin = dir.join("compiler/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    let headers = workspace().join("device-rt/include/tt-metal");
    for h in ["sfpi.h", "lltt.h"] {
        std::fs::copy(headers.join("no-sfpi").join(h), dir.join("include").join(h)).unwrap();
    }
    let driver = bin.join("riscv-tt-elf-g++");
    let script = format!(
        "#!/bin/bash\n\
         echo \"$@\" >> \"$(dirname \"$0\")/calls.log\"\n\
         out=(); compile=0\n\
         for a in \"$@\"; do case \"$a\" in\n\
           -mcpu=tt-*) out+=(-march=rv32im -mabi=ilp32) ;;\n\
           -c) compile=1; out+=(\"$a\") ;;\n\
           *) out+=(\"$a\") ;;\n\
         esac; done\n\
         [ $compile = 1 ] && out+=(-include {})\n\
         exec riscv64-unknown-elf-g++ \"${{out[@]}}\"\n",
        headers.join("ttprof_tensix_insn.h").display()
    );
    std::fs::write(&driver, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&driver, std::fs::Permissions::from_mode(0o755)).unwrap();
    driver
}

/// The `.text` bytes of `elf`.
fn text(elf: &Path) -> Vec<u8> {
    let bytes = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let data = file.section_by_name(".text").unwrap().data().unwrap();
    data.to_vec()
}

/// TT_SFPI_COMPILER: a compute kernel's three parts are compiled and linked by the SFPI
/// toolchain it names, as tt-metal's JIT does: its driver with `-mcpu=tt-wh-tensix` (not
/// Debian's `-march`), SFPI's headers in place of ttprof's FPU-only stand-ins, no `.ttinsn`
/// rewrite, and no refusal of SFPU code (the compiler's own messages instead). Checked with
/// a stand-in driver (no SFPI toolchain is available here): what ttprof asks of the
/// toolchain, and that the kernel's code is the same as Debian's build when the compilers
/// are the same. A name that is no SFPI toolchain is an error naming the variable.
#[test]
fn tt_sfpi_compiler_builds_and_links_compute_kernels_with_that_toolchain() {
    let Some(root) = tt_metal_root() else { return };
    let add = root.join(
        "ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp",
    );
    let defines = [
        "-D",
        "ELTWISE_OP=add_tiles",
        "-D",
        "ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD",
    ];
    let tmp = tempfile::tempdir().unwrap();
    let sfpi = tmp.path().join("sfpi");
    let driver = fake_sfpi(&sfpi);
    let out = run_compute_build(&tmp.path().join("sfpi-build"), &add, &defines, Some(&sfpi));
    assert!(out.status.success());
    let log = std::fs::read_to_string(driver.with_file_name("calls.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    // Per TRISC: the kernel and tt-metal's substitutes compiled, then the link.
    assert_eq!(calls.len(), 9, "{log}");
    let include = format!("-I {}", sfpi.join("include").display());
    for call in &calls {
        assert!(call.contains("-mcpu=tt-wh-tensix"), "{call}");
        assert!(!call.contains("-march="), "{call}");
        assert!(
            !call.contains("no-sfpi") && !call.contains("ttprof_tensix_insn.h"),
            "{call}"
        );
        assert_eq!(call.contains(" -c "), call.contains(&include), "{call}");
    }
    assert_eq!(calls.iter().filter(|c| c.contains(" -c ")).count(), 6);
    let debian = build_compute(&tmp.path().join("debian"), &add, &defines);
    for (t, elf) in TRISCS.iter().zip(&debian) {
        let stem = elf.file_name().unwrap();
        let with_sfpi = tmp.path().join("sfpi-build").join(t).join(stem);
        assert_eq!(text(&with_sfpi), text(elf), "{t}");
    }

    // The driver itself may be named; SFPU code gets the compiler's messages, not a refusal.
    let relu = root.join(RELU);
    let out = run_compute_build(&tmp.path().join("relu"), &relu, &RELU_ARGS, Some(&driver));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("reaches SFPU code"), "{err}");
    assert!(
        err.contains("failed (the compiler's messages are above)"),
        "{err}"
    );
    assert!(
        log.len()
            < std::fs::read_to_string(driver.with_file_name("calls.log"))
                .unwrap()
                .len()
    );

    let nowhere = tmp.path().join("no-sfpi-here");
    std::fs::create_dir_all(&nowhere).unwrap();
    let out = run_compute_build(&tmp.path().join("none"), &add, &defines, Some(&nowhere));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("TT_SFPI_COMPILER={}", nowhere.display()))
            && err.contains("compiler/bin/riscv-tt-elf-g++"),
        "{err}"
    );
}
