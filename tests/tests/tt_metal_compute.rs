//! `ttprof build --tt-metal --core compute`: tt-metal's compute kernels from the pinned ttnn
//! wheel build unchanged for the three TRISCs with Debian's toolchain, each linked where
//! tt-metal's TRISC firmware calls it, with tt-llk's Tensix instructions as the words the ISA
//! documentation defines; a kernel that reaches SFPU code is refused naming the function;
//! and tt-metal's eltwise add runs on the emulator under tt-metal's firmware, bit exact. Without the cache the tests say why and pass, except
//! in CI (`CI=true`).

use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use ttprof_tests::{ttprof, workspace};

fn tt_metal_root() -> Option<PathBuf> {
    match ttprof::tt_metal_build::root() {
        Ok(root) => Some(root),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("CI needs tt-metal's device tree (scripts/fetch-tt-metal.sh): {e}"),
    }
}

const TRISCS: [&str; 3] = ["trisc0", "trisc1", "trisc2"];

/// `ttprof build --tt-metal --core compute ARGS.. SOURCE` into `dir`: the three ELFs, in
/// TRISC order, as printed.
fn build_compute(dir: &Path, source: &Path, args: &[&str]) -> Vec<PathBuf> {
    let mut all = vec![
        "build",
        "--tt-metal",
        "--core",
        "compute",
        "--target-dir",
        dir.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    all.push(source.to_str().unwrap());
    let out = ttprof(None, &all);
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

/// Where the firmware build's TRISC `t` ends its text: a kernel starts there.
fn firmware_text_end(root: &Path, arch: &str, t: &str) -> u64 {
    let hash = match arch {
        "blackhole" => ttprof::tt_metal_build::BLACKHOLE_FIRMWARE,
        _ => ttprof::tt_metal_build::WORMHOLE_B0_FIRMWARE,
    };
    let fw = root
        .join("tt_metal/pre-compiled")
        .join(hash)
        .join(t)
        .join(format!("{t}_weakened.elf"));
    symbol(&fw, "__fw_export_text_end")
}

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
                firmware_text_end(&root, arch, t),
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
    let source =
        root.join("ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp");
    let dir = tempfile::tempdir().unwrap();
    let out = ttprof(
        None,
        &[
            "build",
            "--tt-metal",
            "--core",
            "compute",
            "--target-dir",
            dir.path().to_str().unwrap(),
            "--compile-args",
            "1,1",
            "-D",
            "SFPU_OP_RELU_FAMILY_INCLUDE=1",
            "-D",
            "SFPU_OP_CHAIN_0=relu_tile_init();relu_tile(0);",
            source.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reaches SFPU code: void ckernel::sfpu::")
            && err.contains("ckernel_sfpu_relu.h:")
            && err.contains("Tenstorrent's SFPI compiler"),
        "{err}"
    );
    assert!(!err.contains("error: 'vFloat'"), "no cascade: {err}");
}

/// tt-metal's binary reader, eltwise add on the three TRISCs and the unary writer, all three
/// from the wheel and unchanged, as one program on Wormhole B0: the compute kernel's parts run
/// from the TRISCs' slots under tt-metal's firmware, and the output equals, bit for bit, the
/// host reference of the Matrix Unit's `ELWADD` into BF16 `Dst` (`example_abi::bf16::add`,
/// ttsim's rounding), which differs from a plain float sum on some elements; every core's
/// ring holds its firmware's and kernel's zones once, the compute API's CB waits as sums.
#[test]
fn tt_metals_eltwise_add_runs_on_the_three_triscs_bit_exact() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Two tiles each: values with every exponent in [-3, 3] and mixed signs.
    let value = |i: u32, salt: u32| -> u16 {
        let f = (((i * 37 + salt) % 193) as f32 - 96.0) / 13.0;
        (f.to_bits() >> 16) as u16
    };
    let a: Vec<u16> = (0..2048).map(|i| value(i, 0)).collect();
    let b: Vec<u16> = (0..2048).map(|i| value(i, 71)).collect();
    let want: Vec<u16> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| example_abi::bf16::add(x, y))
        .collect();
    let plain = |x: u16, y: u16| {
        let s = f32::from_bits((x as u32) << 16) + f32::from_bits((y as u32) << 16);
        (s.to_bits().wrapping_add(0x7fff + ((s.to_bits() >> 16) & 1)) >> 16) as u16
    };
    assert!(
        a.iter()
            .zip(&b)
            .zip(&want)
            .any(|((&x, &y), &w)| plain(x, y) != w),
        "the inputs exercise the Matrix Unit's own rounding"
    );
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    std::fs::write(d.path().join("a.bin"), bytes(&a)).unwrap();
    std::fs::write(d.path().join("b.bin"), bytes(&b)).unwrap();
    std::fs::write(d.path().join("want.bin"), bytes(&want)).unwrap();
    let program = d.path().join("add.toml");
    std::fs::write(
        &program,
        r#"arch = "wormhole_b0"
cores = ["0,0"]
id = 3

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"
risc = "ncrisc"
compile_args = [0, 2, 2048, 2, 2048]
args = ["@a", "@b", 2, 0, 0, 0, 0]

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp"
risc = "compute"
defines = ["ELTWISE_OP=add_tiles", "ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD"]
args = [2, 1]

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [2, 2, 2048]
args = ["@out", 2, 0]

[[cb]]
index = 0
page_size = 2048
pages = 2
format = "bfloat16"

[[cb]]
index = 1
page_size = 2048
pages = 2
format = "bfloat16"

[[cb]]
index = 2
page_size = 2048
pages = 2
format = "bfloat16"

[[buffer]]
name = "a"
dtype = "bfloat16"
shape = [1, 1, 32, 64]
input = "a.bin"

[[buffer]]
name = "b"
dtype = "bfloat16"
shape = [1, 1, 32, 64]
input = "b.bin"

[[buffer]]
name = "out"
dtype = "bfloat16"
shape = [1, 1, 32, 64]
output = "out.bin"
expect = "want.bin"
"#,
    )
    .unwrap();
    let out_dir = d.path().join("run");
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            program.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    let got = std::fs::read(d.path().join("out.bin")).unwrap();
    assert_eq!(got, bytes(&want), "out.bin is ELWADD's, bit for bit");
    for (ring, zones) in [
        (
            "reader_binary_interleaved_start_id-0",
            "NCRISC-FW x1, NCRISC-KERNEL x1",
        ),
        (
            "eltwise_binary_kernel-1-trisc0",
            "TRISC-FW x1, TRISC-KERNEL x1",
        ),
        (
            "eltwise_binary_kernel-1-trisc1",
            "TRISC-FW x1, TRISC-KERNEL x1",
        ),
        (
            "eltwise_binary_kernel-1-trisc2",
            "TRISC-FW x1, TRISC-KERNEL x1",
        ),
        (
            "writer_unary_interleaved_start_id-2",
            "BRISC-FW x1, BRISC-KERNEL x1",
        ),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("ring {ring} on 0,0:")))
            .unwrap_or_else(|| panic!("no ring {ring}:\n{stdout}"));
        assert!(
            line.contains(&format!(" 0 dropped; zones: {zones};")),
            "{line}"
        );
    }
    // tt-metal's compute API times its CB waits as sum zones (DeviceZoneScopedSumN).
    assert!(stdout.contains("CB-COMPUTE-WAIT-FRONT x1"), "{stdout}");
    // Math hands Dst to pack with a SEMPOST of semaphore 1 per tile: a signal each, recorded
    // at tt-llk's push with no change to the kernel.
    let math = stdout
        .lines()
        .find(|l| l.starts_with("ring eltwise_binary_kernel-1-trisc1 "))
        .unwrap();
    assert!(math.ends_with("sums: tensix-sem-post-1 x2"), "{math}");
    assert!(stdout.contains("CB-COMPUTE-RESERVE-BACK x1"), "{stdout}");
}

/// `C = A @ B` in tiles (`a`: `mt x kt`, `b`: `kt x nt`, each tile 1,024 BF16 datums in face
/// order), as the Matrix Unit computes it into BF16 `Dst` with `phases` fidelity phases
/// (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4): per output tile, `Dst` starts at zero and takes, for
/// each `k` tile in order and in each phase in order, two `MVMUL`s per datum (K columns
/// 0-15, then 16-31), each rounded as `example_abi::bf16::mvmul_datum_phase` says (tt-llk's
/// matmul replays the tile's `MVMUL`s once per phase).
fn matmul_ref(a: &[u16], b: &[u16], (mt, kt, nt): (usize, usize, usize), phases: u32) -> Vec<u16> {
    use example_abi::bf16::{face_index, mvmul_datum_phase};
    let tile = 1024;
    let mut out = vec![0u16; mt * nt * tile];
    for m in 0..mt {
        for n in 0..nt {
            let o = &mut out[(m * nt + n) * tile..][..tile];
            for k in 0..kt {
                let x = &a[(m * kt + k) * tile..][..tile];
                let y = &b[(k * nt + n) * tile..][..tile];
                for r in 0..32 {
                    for c in 0..32 {
                        let mut dst = o[face_index(r, c)];
                        for phase in 0..phases {
                            for k0 in [0, 16] {
                                let row: [u16; 16] =
                                    std::array::from_fn(|i| x[face_index(r, k0 + i)]);
                                let col: [u16; 16] =
                                    std::array::from_fn(|i| y[face_index(k0 + i, c)]);
                                dst = mvmul_datum_phase(&row, &col, dst, phase);
                            }
                        }
                        o[face_index(r, c)] = dst;
                    }
                }
            }
        }
    }
    out
}

/// tt-metal's matmul reader (NCRISC, NoC 1), `bmm.cpp` on the three TRISCs, and the unary
/// writer, all from the wheel: `C[2x2] = A[2x3] @ B[3x2]` tiles, each output tile
/// accumulated over three `matmul_tiles` in `Dst`, equals the Matrix Unit's `MVMUL`
/// reference bit for bit at LoFi and at HiFi4 (tt-metal's default).
#[test]
fn tt_metals_matmul_runs_on_the_three_triscs_bit_exact() {
    if tt_metal_root().is_none() {
        return;
    }
    for (fidelity, phases) in [(0, 1), (4, 4)] {
        matmul_case(fidelity, phases);
    }
}

fn matmul_case(fidelity: u32, phases: u32) {
    let d = tempfile::tempdir().unwrap();
    let (mt, kt, nt) = (2usize, 3usize, 2usize);
    let a: Vec<u16> = example_abi::bf16::normal_values(5)
        .take(mt * kt * 1024)
        .collect();
    let b: Vec<u16> = example_abi::bf16::normal_values(6)
        .take(kt * nt * 1024)
        .collect();
    let want = matmul_ref(&a, &b, (mt, kt, nt), phases);
    if phases > 1 {
        let lofi = matmul_ref(&a, &b, (mt, kt, nt), 1);
        let more = want.iter().zip(&lofi).filter(|(w, l)| w != l).count();
        assert!(
            more > want.len() / 4,
            "HiFi changes {more} datums: too few to tell"
        );
    }
    assert!(want.iter().filter(|&&w| w != 0).count() > want.len() / 2);
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    std::fs::write(d.path().join("a.bin"), bytes(&a)).unwrap();
    std::fs::write(d.path().join("b.bin"), bytes(&b)).unwrap();
    std::fs::write(d.path().join("want.bin"), bytes(&want)).unwrap();
    let program = d.path().join("mm.toml");
    std::fs::write(
        &program,
        r#"arch = "wormhole_b0"
cores = ["0,0"]
id = 4

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp"
risc = "ncrisc"
noc = 1
compile_args = [0, 0, 2, 2048, 2, 2048]
named_compile_args = { cb_in0 = 0, cb_in1 = 1 }
# src0, src1, Mt, Kt, Nt, MtKt, KtNt, batch, bcast_B, first output tile, tiles, MtNt
args = ["@a", "@b", 2, 3, 2, 6, 6, 1, 0, 0, 4, 4]

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/matmul/device/kernels/compute/bmm.cpp"
risc = "compute"
math_fidelity = FIDELITY
compile_args = [1, 2, 3, 2]
named_compile_args = { cb_in0 = 0, cb_in1 = 1, cb_out = 16 }

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [16, 2, 2048]
args = ["@out", 4, 0]

[[cb]]
index = 0
page_size = 2048
pages = 2
format = "bfloat16"

[[cb]]
index = 1
page_size = 2048
pages = 2
format = "bfloat16"

[[cb]]
index = 16
page_size = 2048
pages = 2
format = "bfloat16"

[[buffer]]
name = "a"
dtype = "bfloat16"
shape = [1, 1, 64, 96]
input = "a.bin"

[[buffer]]
name = "b"
dtype = "bfloat16"
shape = [1, 1, 96, 64]
input = "b.bin"

[[buffer]]
name = "out"
dtype = "bfloat16"
shape = [1, 1, 64, 64]
output = "out.bin"
"#
        .replace("FIDELITY", &fidelity.to_string()),
    )
    .unwrap();
    let out_dir = d.path().join("run");
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            program.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    let got = std::fs::read(d.path().join("out.bin")).unwrap();
    let got: Vec<u16> = got
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    let first = got.iter().zip(&want).position(|(g, w)| g != w);
    assert_eq!(
        differ,
        0,
        "fidelity {fidelity}: {differ} of {} datums differ from MVMUL's reference; first at {first:?}: {:04x?} vs {:04x?}",
        got.len(),
        first.map(|i| got[i]),
        first.map(|i| want[i])
    );
}

/// Our copy kernel (tt-metal's compute API: `copy_tile`, `pack_tile`, the `tile_regs_*`
/// hand-overs) between the wheel's unary reader and writer: the output is the input, and
/// each TRISC's ring holds its `copy-tile` zone once per tile.
#[test]
fn a_compute_kernel_with_zones_copies_tiles_and_records_on_every_trisc() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let input: Vec<u8> = example_abi::bf16::normal_values(9)
        .take(3 * 1024)
        .flat_map(|h| h.to_le_bytes())
        .collect();
    std::fs::write(d.path().join("in.bin"), &input).unwrap();
    let kernel = workspace().join("examples/tt-metal/copy_tiles_compute.cpp");
    let program = d.path().join("copy.toml");
    std::fs::write(
        &program,
        format!(
            r#"arch = "wormhole_b0"
cores = ["0,0"]
id = 5

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp"
risc = "ncrisc"
noc = 1
compile_args = [2, 2048]
args = ["@src", 3, 0]

[[kernel]]
source = "{}"
risc = "compute"
args = [3]

[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [16, 2, 2048]
args = ["@dst", 3, 0]

[[cb]]
index = 0
page_size = 2048
pages = 2
format = "bfloat16"

[[cb]]
index = 16
page_size = 2048
pages = 2
format = "bfloat16"

[[buffer]]
name = "src"
dtype = "bfloat16"
shape = [1, 1, 32, 96]
input = "in.bin"

[[buffer]]
name = "dst"
dtype = "bfloat16"
shape = [1, 1, 32, 96]
output = "out.bin"
expect = "in.bin"
"#,
            kernel.display()
        ),
    )
    .unwrap();
    let out_dir = d.path().join("run");
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            program.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    assert_eq!(std::fs::read(d.path().join("out.bin")).unwrap(), input);
    for t in TRISCS {
        let ring = format!("ring copy_tiles_compute-1-{t} on 0,0:");
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&ring))
            .unwrap_or_else(|| panic!("no {ring}\n{stdout}"));
        assert!(
            line.contains("0 dropped; zones: TRISC-FW x1, TRISC-KERNEL x1, copy-tile x3;"),
            "{line}"
        );
    }
}

/// `program` (a file of this test's shape) with its placeholders substituted, run in
/// `dir`: the op's device kernel time in cycles (ns at the emulator's 1,000 MHz), as
/// `ttprof run` prints it.
fn run_sized(dir: &Path, program: &str, subst: &[(&str, String)]) -> u64 {
    let mut text = program.to_string();
    for (k, v) in subst {
        text = text.replace(k, v);
    }
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("program.toml");
    std::fs::write(&p, text).unwrap();
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            p.to_str().unwrap(),
            "--out",
            dir.join("run").to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains(": device kernel time "))
        .unwrap_or_else(|| panic!("no device kernel time:\n{stdout}"));
    let ns = line.rsplit("device kernel time ").next().unwrap();
    ns.trim_end_matches(" ns").replace(',', "").parse().unwrap()
}

/// Benchmark (README, "Benchmarks"): device cycles per tile of tt-metal's eltwise add and
/// matmul (LoFi, per K tile) programs on the emulator's Wormhole B0 model, the marginal cost
/// between two sizes of the same program (fixed costs cancel), beside the Matrix Unit's
/// documented peaks (`ELWADD` 8 cycles per 32x32 BF16 tile, `MVMUL` LoFi 16). The readers,
/// which wait for each DRAM page before the next (`noc_async_read_barrier`), bound both.
#[test]
#[ignore]
fn tt_metal_compute_cycles_per_tile() {
    let Some(_root) = tt_metal_root() else { return };
    let d = tempfile::tempdir().unwrap();
    let ones = |tiles: usize| vec![0x3f80u16; tiles * 1024];
    let write = |dir: &Path, name: &str, v: &[u16]| {
        std::fs::create_dir_all(dir).unwrap();
        let b: Vec<u8> = v.iter().flat_map(|h| h.to_le_bytes()).collect();
        std::fs::write(dir.join(name), b).unwrap();
    };
    let add = r#"arch = "wormhole_b0"
cores = ["0,0"]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"
risc = "ncrisc"
compile_args = [0, 2, 2048, 2, 2048]
args = ["@a", "@b", TILES, 0, 0, 0, 0]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp"
risc = "compute"
defines = ["ELTWISE_OP=add_tiles", "ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD"]
args = [TILES, 1]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [2, 2, 2048]
args = ["@out", TILES, 0]
[[cb]]
index = 0
page_size = 2048
pages = 4
[[cb]]
index = 1
page_size = 2048
pages = 4
[[cb]]
index = 2
page_size = 2048
pages = 4
[[buffer]]
name = "a"
dtype = "bfloat16"
shape = [1, 1, 32, WIDTH]
input = "a.bin"
[[buffer]]
name = "b"
dtype = "bfloat16"
shape = [1, 1, 32, WIDTH]
input = "a.bin"
[[buffer]]
name = "out"
dtype = "bfloat16"
shape = [1, 1, 32, WIDTH]
output = "out.bin"
"#;
    let mm = r#"arch = "wormhole_b0"
cores = ["0,0"]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp"
risc = "ncrisc"
noc = 1
compile_args = [0, 0, 2, 2048, 2, 2048]
named_compile_args = { cb_in0 = 0, cb_in1 = 1 }
args = ["@a", "@b", 1, TILES, 1, TILES, TILES, 1, 0, 0, 1, 1]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/matmul/device/kernels/compute/bmm.cpp"
risc = "compute"
math_fidelity = 0
compile_args = [1, 1, TILES, 1]
named_compile_args = { cb_in0 = 0, cb_in1 = 1, cb_out = 16 }
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [16, 2, 2048]
args = ["@out", 1, 0]
[[cb]]
index = 0
page_size = 2048
pages = 4
[[cb]]
index = 1
page_size = 2048
pages = 4
[[cb]]
index = 16
page_size = 2048
pages = 2
[[buffer]]
name = "a"
dtype = "bfloat16"
shape = [1, 1, 32, WIDTH]
input = "a.bin"
[[buffer]]
name = "b"
dtype = "bfloat16"
shape = [1, 1, WIDTH, 32]
input = "a.bin"
[[buffer]]
name = "out"
dtype = "bfloat16"
shape = [1, 1, 32, 32]
output = "out.bin"
"#;
    let (small, large) = (8usize, 40usize);
    for (name, program, peak) in [
        ("eltwise add", add, 8.0),
        ("matmul (LoFi, per K tile)", mm, 16.0),
    ] {
        let mut cycles = [0u64; 2];
        for (k, tiles) in [small, large].into_iter().enumerate() {
            let dir = d.path().join(format!("{}-{tiles}", &name[..6]));
            write(&dir, "a.bin", &ones(tiles));
            cycles[k] = run_sized(
                &dir,
                program,
                &[
                    ("TILES", tiles.to_string()),
                    ("WIDTH", (32 * tiles).to_string()),
                ],
            );
        }
        let per = (cycles[1] - cycles[0]) as f64 / (large - small) as f64;
        println!(
            "tt-metal {name}, Wormhole B0: {per:.1} device cycles per tile ({small} tiles {} cycles, {large} tiles {}); Matrix Unit peak {peak}",
            cycles[0], cycles[1]
        );
        assert!(per > peak, "{name}: {per} cycles per tile, under the peak");
    }
}

/// tt-metal's tilize and untilize ops' compute kernels from the wheel, as two programs over
/// the same buffers (the firmware booted once): row-major 32x32 blocks go through tilize
/// into face order (each datum where `example_abi::bf16::face_index` puts it) and back
/// through untilize, exactly.
#[test]
fn tt_metals_tilize_and_untilize_run_as_two_programs_exactly() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let rows: Vec<u16> = example_abi::bf16::normal_values(13)
        .take(2 * 1024)
        .collect();
    let mut tiled = vec![0u16; rows.len()];
    for t in 0..2 {
        for r in 0..32 {
            for c in 0..32 {
                tiled[t * 1024 + example_abi::bf16::face_index(r, c)] = rows[t * 1024 + r * 32 + c];
            }
        }
    }
    assert_ne!(tiled, rows);
    let bytes = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|h| h.to_le_bytes()).collect() };
    std::fs::write(d.path().join("rows.bin"), bytes(&rows)).unwrap();
    std::fs::write(d.path().join("tiled.bin"), bytes(&tiled)).unwrap();
    let program = |name: &str, id: u32, kernel: &str, compile: &str, src: &str, dst: &str| {
        format!(
            r#"
[[program]]
name = "{name}"
cores = ["0,0"]
id = {id}
[[program.kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp"
risc = "ncrisc"
noc = 1
compile_args = [2, 2048]
args = ["@{src}", 2, 0]
[[program.kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/data_movement/{kernel}"
risc = "compute"
compile_args = {compile}
[[program.kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [16, 2, 2048]
args = ["@{dst}", 2, 0]
[[program.cb]]
index = 0
page_size = 2048
pages = 2
format = "bfloat16"
[[program.cb]]
index = 16
page_size = 2048
pages = 2
format = "bfloat16"
"#
        )
    };
    let mut text = String::from("arch = \"wormhole_b0\"\n");
    // tilize: cb_in, cb_out, blocks, tiles per block; untilize: blocks, tiles per block,
    // cb_in, cb_out.
    text += &program(
        "tilize",
        6,
        "tilize/device/kernels/compute/tilize.cpp",
        "[0, 16, 2, 1]",
        "rows",
        "mid",
    );
    text += &program(
        "untilize",
        7,
        "untilize/device/kernels/compute/untilize.cpp",
        "[2, 1, 0, 16]",
        "mid",
        "back",
    );
    for (name, io) in [
        ("rows", "input = \"rows.bin\""),
        ("mid", "output = \"mid.bin\"\nexpect = \"tiled.bin\""),
        ("back", "output = \"back.bin\"\nexpect = \"rows.bin\""),
    ] {
        text += &format!(
            "\n[[buffer]]\nname = \"{name}\"\ndtype = \"bfloat16\"\nshape = [1, 1, 32, 64]\n{io}\n"
        );
    }
    let p = d.path().join("tilize.toml");
    std::fs::write(&p, text).unwrap();
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            p.to_str().unwrap(),
            "--out",
            d.path().join("run").to_str().unwrap(),
        ],
    );
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
    assert_eq!(
        std::fs::read(d.path().join("mid.bin")).unwrap(),
        bytes(&tiled)
    );
    assert_eq!(
        std::fs::read(d.path().join("back.bin")).unwrap(),
        bytes(&rows)
    );
}

/// tt-metal's eltwise add on Float32 tiles with 32-bit `Dst` (`fp32_dest_acc`), one tile per
/// block, so the math and pack threads alternate between `Dst`'s two halves: the unpackers
/// get TF32 (the JIT's format rule for Float32 buffers), and every datum of both tiles is
/// the sum within TF32's precision (2^-10 of the operands' magnitude). Not bit exact against
/// a reference: our host reference covers BF16 only.
#[test]
fn tt_metals_eltwise_add_on_float32_uses_both_halves_of_32_bit_dst() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let value = |i: u32, salt: u32, div: f32| (((i * 37 + salt) % 193) as f32 - 96.0) / div;
    let a: Vec<f32> = (0..2048).map(|i| value(i, 0, 13.0)).collect();
    let b: Vec<f32> = (0..2048).map(|i| value(i, 71, 7.0)).collect();
    let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    std::fs::write(d.path().join("a.bin"), bytes(&a)).unwrap();
    std::fs::write(d.path().join("b.bin"), bytes(&b)).unwrap();
    let mut text = String::from(
        r#"arch = "wormhole_b0"
cores = ["0,0"]
id = 8
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"
risc = "ncrisc"
compile_args = [0, 2, 4096, 2, 4096]
args = ["@a", "@b", 2, 0, 0, 0, 0]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp"
risc = "compute"
fp32_dest_acc = true
defines = ["ELTWISE_OP=add_tiles", "ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD"]
args = [2, 1]
[[kernel]]
source = "tt-metal:ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
risc = "brisc"
compile_args = [2, 2, 4096]
args = ["@out", 2, 0]
"#,
    );
    for cb in [0, 1, 2] {
        text +=
            &format!("[[cb]]\nindex = {cb}\npage_size = 4096\npages = 2\nformat = \"float32\"\n");
    }
    for (name, io) in [
        ("a", "input = \"a.bin\""),
        ("b", "input = \"b.bin\""),
        ("out", "output = \"out.bin\""),
    ] {
        text += &format!(
            "[[buffer]]\nname = \"{name}\"\ndtype = \"float32\"\nshape = [1, 1, 32, 64]\n{io}\n"
        );
    }
    let p = d.path().join("add32.toml");
    std::fs::write(&p, text).unwrap();
    let out = ttprof(
        None,
        &[
            "run",
            "--program",
            p.to_str().unwrap(),
            "--out",
            d.path().join("run").to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<f32> = std::fs::read(d.path().join("out.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for (i, ((x, y), g)) in a.iter().zip(&b).zip(&got).enumerate() {
        let bound = (x.abs() + y.abs()) / 1024.0 + 1e-6;
        assert!(
            (g - (x + y)).abs() <= bound,
            "datum {i} (tile {}): {x} + {y} = {g}",
            i / 1024
        );
    }
}
