//! tt-metal compute kernels from the pinned ttnn wheel, unchanged, running on the emulator
//! under tt-metal's firmware as program files (`ttprof run --program`), each with the wheel's
//! own readers and writers: eltwise add and matmul bit exact against the Matrix Unit's host
//! reference (`example_abi::bf16`), also through `reconfig_data_format` inside the kernel,
//! tilize and untilize exact, Float32 with 32-bit `Dst` bit exact (`example_abi::tf32`), a compute kernel of ours with zones on every TRISC, and a benchmark
//! of cycles per tile. Without the cache the tests say why and pass, except in CI
//! (`CI=true`).

use std::path::{Path, PathBuf};
use ttprof_tests::{run_program, tt_metal_root, workspace};

const TRISCS: [&str; 3] = ["trisc0", "trisc1", "trisc2"];

/// The wheel's kernels the programs use, under `ttnn/cpp/ttnn/operations/`.
const BINARY_READER: &str =
    "eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp";
const UNARY_READER: &str =
    "eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp";
const UNARY_WRITER: &str =
    "eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp";
const MATMUL_READER: &str =
    "matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp";
const ELTWISE_BINARY: &str = "eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp";
const BMM: &str = "matmul/device/kernels/compute/bmm.cpp";

/// A `[[kernel]]` table (`[[program.kernel]]` with `program`): `source` (one of the wheel's
/// kernels above, or a file), `risc`, then `more` (TOML lines).
fn kernel(source: &str, risc: &str, more: &str) -> String {
    let source = if source.ends_with(".cpp") && !source.starts_with('/') {
        format!("tt-metal:ttnn/cpp/ttnn/operations/{source}")
    } else {
        source.to_string()
    };
    format!("[[kernel]]\nsource = \"{source}\"\nrisc = \"{risc}\"\n{more}\n")
}

/// `[[cb]]` tables of `pages` pages of `page` bytes each, in `format`.
fn cbs(indices: &[u8], page: u32, pages: u32, format: &str) -> String {
    indices
        .iter()
        .map(|i| {
            format!(
                "[[cb]]\nindex = {i}\npage_size = {page}\npages = {pages}\nformat = \"{format}\"\n"
            )
        })
        .collect()
}

/// A `[[buffer]]` table: `io` its `input = ..`/`output = ..`/`expect = ..` lines.
fn buffer(name: &str, dtype: &str, shape: &str, io: &str) -> String {
    format!("[[buffer]]\nname = \"{name}\"\ndtype = \"{dtype}\"\nshape = {shape}\n{io}\n")
}

/// Writes `text` as `dir/program.toml`, runs it, checks that it exits 0: its stdout.
fn run(dir: &Path, text: &str) -> String {
    let p = dir.join("program.toml");
    std::fs::write(&p, text).unwrap();
    let out = run_program(&p, &dir.join("run"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The line of ring `name` on core 0,0 in a run's output.
fn ring<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("ring {name} on 0,0:")))
        .unwrap_or_else(|| panic!("no ring {name}:\n{stdout}"))
}

fn bytes16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_le_bytes()).collect()
}

fn words16(b: &[u8]) -> Vec<u16> {
    b.chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Two BF16 tiles each of `a` and `b` (every exponent in [-3, 3], mixed signs) and `ELWADD`'s
/// result on them (`example_abi::bf16::add`), written to `dir` as `a.bin`, `b.bin` and
/// `want.bin`.
fn bf16_operands(dir: &Path) -> (Vec<u16>, Vec<u16>, Vec<u16>) {
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
    std::fs::write(dir.join("a.bin"), bytes16(&a)).unwrap();
    std::fs::write(dir.join("b.bin"), bytes16(&b)).unwrap();
    std::fs::write(dir.join("want.bin"), bytes16(&want)).unwrap();
    (a, b, want)
}

/// The program of tt-metal's binary reader, eltwise add (with `defines`, TOML strings after
/// the op's two) and unary writer over BF16 buffers `a`, `b` -> `out` (expected `want.bin`),
/// CBs 0-2 of two BF16 tiles, then `more` (TOML).
fn bf16_add_program(id: u32, defines: &str, more: &str) -> String {
    let shape = "[1, 1, 32, 64]";
    [
        format!("arch = \"wormhole_b0\"\ncores = [\"0,0\"]\nid = {id}\n"),
        kernel(
            BINARY_READER,
            "ncrisc",
            "compile_args = [0, 2, 2048, 2, 2048]\nargs = [\"@a\", \"@b\", 2, 0, 0, 0, 0]",
        ),
        kernel(
            ELTWISE_BINARY,
            "compute",
            &format!(
                "defines = [\"ELTWISE_OP=add_tiles\", \
                 \"ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD\"{defines}]\nargs = [2, 1]"
            ),
        ),
        kernel(
            UNARY_WRITER,
            "brisc",
            "compile_args = [2, 2, 2048]\nargs = [\"@out\", 2, 0]",
        ),
        cbs(&[0, 1, 2], 2048, 2, "bfloat16"),
        more.to_string(),
        buffer("a", "bfloat16", shape, "input = \"a.bin\""),
        buffer("b", "bfloat16", shape, "input = \"b.bin\""),
        buffer(
            "out",
            "bfloat16",
            shape,
            "output = \"out.bin\"\nexpect = \"want.bin\"",
        ),
    ]
    .concat()
}

/// tt-metal's binary reader, eltwise add on the three TRISCs and the unary writer, all three
/// from the wheel and unchanged, as one program on Wormhole B0: the compute kernel's parts run
/// from the TRISCs' slots under tt-metal's firmware, and the output equals, bit for bit, the
/// host reference of the Matrix Unit's `ELWADD` into BF16 `Dst` (`example_abi::bf16::add`,
/// ttsim's rounding), which differs from a plain float sum on some elements; every core's
/// ring holds its firmware's and kernel's zones once, the compute API's CB waits as sums, and
/// math's `SEMPOST`s to pack as signals.
#[test]
fn tt_metals_eltwise_add_runs_on_the_three_triscs_bit_exact() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (a, b, want) = bf16_operands(d.path());
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
    let text = bf16_add_program(3, "", "");
    let stdout = run(d.path(), &text);
    let got = std::fs::read(d.path().join("out.bin")).unwrap();
    assert_eq!(got, bytes16(&want), "out.bin is ELWADD's, bit for bit");
    for (name, zones) in [
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
        let line = ring(&stdout, name);
        assert!(
            line.contains(&format!(" 0 dropped; zones: {zones};")),
            "{line}"
        );
    }
    // tt-metal's compute API times its CB waits as sum zones (DeviceZoneScopedSumN).
    assert!(stdout.contains("CB-COMPUTE-WAIT-FRONT x1"), "{stdout}");
    assert!(stdout.contains("CB-COMPUTE-RESERVE-BACK x1"), "{stdout}");
    // Math hands Dst to pack with a SEMPOST of semaphore 1 per tile: a signal each, recorded
    // at tt-llk's push with no change to the kernel.
    let math = ring(&stdout, "eltwise_binary_kernel-1-trisc1");
    assert!(math.ends_with("sums: tensix-sem-post-1 x2"), "{math}");
}

/// The kernels of a program lie in each core's kernel configuration buffer packed by size,
/// BRISC's first, as tt-metal's host packs them: a BRISC writer of 33 KB (the wheel's unary
/// writer behind 7,800 `nop`s, past the 30 KiB a fixed slot gave it) runs in one program
/// with the eltwise add's three TRISC parts, which are linked after it, and the output is
/// still ELWADD's bit for bit.
#[test]
fn a_large_brisc_kernel_and_a_compute_kernel_share_the_buffer_packed_by_size() {
    let Some(root) = tt_metal_root() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (_, _, want) = bf16_operands(d.path());
    let writer = root.join("ttnn/cpp/ttnn/operations").join(UNARY_WRITER);
    std::fs::write(
        d.path().join("big_writer.cpp"),
        format!(
            "#define kernel_main wheel_kernel_main\n#include \"{}\"\n#undef kernel_main\n\
             void kernel_main() {{\n    asm volatile(\".rept 7800\\n nop\\n .endr\");\n    \
             wheel_kernel_main();\n}}\n",
            writer.display()
        ),
    )
    .unwrap();
    let text = bf16_add_program(3, "", "").replace(
        &format!("tt-metal:ttnn/cpp/ttnn/operations/{UNARY_WRITER}"),
        "big_writer.cpp",
    );
    assert!(text.contains("source = \"big_writer.cpp\""));
    let stdout = run(d.path(), &text);
    let got = std::fs::read(d.path().join("out.bin")).unwrap();
    assert_eq!(got, bytes16(&want), "out.bin is ELWADD's, bit for bit");
    let line = ring(&stdout, "big_writer-2");
    assert!(
        line.contains(" 0 dropped; zones: BRISC-FW x1, BRISC-KERNEL x1;"),
        "{line}"
    );
    // Where each ELF's text was linked: BRISC's at the buffer's 0x1000 and past 0x8800 (the
    // old slots' TRISC0), the TRISCs' parts one after the other behind it (and NCRISC's
    // image), inside the buffer's 69 KiB.
    let text = |dir: &str, name: &str| {
        use object::{Object, ObjectSection};
        let path = d.path().join(format!("run/kernels/{dir}/{name}.elf"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = object::File::parse(&bytes[..]).unwrap();
        let t = file.section_by_name(".text").unwrap();
        (t.address(), t.address() + t.size())
    };
    let base = 0x8960u64;
    let (brisc, mut after) = text("big_writer-2", "big_writer-2");
    assert_eq!(brisc, base + 0x1000);
    assert!(after > base + 0x8800, "{after:#x}");
    for t in TRISCS {
        let (start, end) = text(
            &format!("eltwise_binary_kernel-1/{t}"),
            &format!("eltwise_binary_kernel-1-{t}"),
        );
        assert!(start >= after, "{t} at {start:#x}, after {after:#x}");
        after = end;
    }
    assert!(after <= base + 69 * 1024, "{after:#x}");
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

/// The matmul program: the wheel's matmul reader (NCRISC, NoC 1), `bmm.cpp` with `fidelity`,
/// the unary writer; `C[mt x nt] = A[mt x kt] @ B[kt x nt]` tiles, one core, `pages` pages in
/// each input buffer.
fn matmul_program(fidelity: u32, (mt, kt, nt): (usize, usize, usize), pages: u32) -> String {
    [
        "arch = \"wormhole_b0\"\ncores = [\"0,0\"]\nid = 4\n".to_string(),
        // src0, src1, Mt, Kt, Nt, MtKt, KtNt, batch, bcast_B, first output tile, tiles, MtNt
        kernel(
            MATMUL_READER,
            "ncrisc",
            &format!(
                "noc = 1\ncompile_args = [0, 0, 2, 2048, 2, 2048]\n\
                 named_compile_args = {{ cb_in0 = 0, cb_in1 = 1 }}\n\
                 args = [\"@a\", \"@b\", {mt}, {kt}, {nt}, {}, {}, 1, 0, 0, {}, {}]",
                mt * kt,
                kt * nt,
                mt * nt,
                mt * nt
            ),
        ),
        kernel(
            BMM,
            "compute",
            &format!(
                "math_fidelity = {fidelity}\ncompile_args = [1, {mt}, {kt}, {nt}]\n\
                 named_compile_args = {{ cb_in0 = 0, cb_in1 = 1, cb_out = 16 }}"
            ),
        ),
        kernel(
            UNARY_WRITER,
            "brisc",
            &format!(
                "compile_args = [16, 2, 2048]\nargs = [\"@out\", {}, 0]",
                mt * nt
            ),
        ),
        cbs(&[0, 1], 2048, pages, "bfloat16"),
        cbs(&[16], 2048, 2, "bfloat16"),
        buffer(
            "a",
            "bfloat16",
            &format!("[1, 1, {}, {}]", 32 * mt, 32 * kt),
            "input = \"a.bin\"",
        ),
        buffer(
            "b",
            "bfloat16",
            &format!("[1, 1, {}, {}]", 32 * kt, 32 * nt),
            "input = \"b.bin\"",
        ),
        buffer(
            "out",
            "bfloat16",
            &format!("[1, 1, {}, {}]", 32 * mt, 32 * nt),
            "output = \"out.bin\"",
        ),
    ]
    .concat()
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
    let dims = (2usize, 3usize, 2usize);
    let (mt, kt, nt) = dims;
    let a: Vec<u16> = example_abi::bf16::normal_values(5)
        .take(mt * kt * 1024)
        .collect();
    let b: Vec<u16> = example_abi::bf16::normal_values(6)
        .take(kt * nt * 1024)
        .collect();
    let lofi = matmul_ref(&a, &b, dims, 1);
    assert!(lofi.iter().filter(|&&w| w != 0).count() > lofi.len() / 2);
    for (fidelity, phases) in [(0, 1), (4, 4)] {
        let want = matmul_ref(&a, &b, dims, phases);
        if phases > 1 {
            let more = want.iter().zip(&lofi).filter(|(w, l)| w != l).count();
            assert!(
                more > want.len() / 4,
                "HiFi changes {more} datums: too few to tell"
            );
        }
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.bin"), bytes16(&a)).unwrap();
        std::fs::write(d.path().join("b.bin"), bytes16(&b)).unwrap();
        run(d.path(), &matmul_program(fidelity, dims, 2));
        let got = words16(&std::fs::read(d.path().join("out.bin")).unwrap());
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
}

/// `--counters fpu` on tt-metal's `bmm.cpp` (issue 42): the FPU bank counts the Matrix Unit
/// instructions the kernel issued. Counted independently, from tt-llk's matmul MOP
/// (`llk_math_matmul.h`, Wormhole B0): a 32x32x32 tile product replays 16 `MVMUL`s (each an
/// 8x16 output block over an inner 16) once per fidelity phase, and at high fidelity ends
/// with one `SETRWC` that resets the phase; HiFi4 has 4 phases, LoFi 1. So the counts at
/// the two fidelities differ by exactly 3 x 16 + 1 per `matmul_tiles`, and LoFi's holds at
/// least its 16 each.
#[test]
fn the_fpu_counter_counts_tt_metals_matmul_instructions() {
    if tt_metal_root().is_none() {
        return;
    }
    let dims = (2usize, 3usize, 2usize);
    let (mt, kt, nt) = dims;
    let tiles = (mt * kt * nt) as u64;
    let a: Vec<u16> = example_abi::bf16::normal_values(5)
        .take(mt * kt * 1024)
        .collect();
    let b: Vec<u16> = example_abi::bf16::normal_values(6)
        .take(kt * nt * 1024)
        .collect();
    let mut fpu = Vec::new();
    for fidelity in [0, 4] {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.bin"), bytes16(&a)).unwrap();
        std::fs::write(d.path().join("b.bin"), bytes16(&b)).unwrap();
        let p = d.path().join("program.toml");
        std::fs::write(&p, matmul_program(fidelity, dims, 2)).unwrap();
        let out = d.path().join("run");
        let o = ttprof_tests::run_program_with(&p, &out, &["--counters", "fpu"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let log = std::fs::read_to_string(out.join("ops.jsonl")).unwrap();
        let op: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
        let v = &op["op"]["counters"][0]["values"][0];
        assert_eq!(v["name"], "FPU_COUNTER", "{op}");
        fpu.push(v["value"].as_u64().unwrap());
    }
    let (lofi, hifi4) = (fpu[0], fpu[1]);
    assert_eq!(
        hifi4 - lofi,
        (3 * 16 + 1) * tiles,
        "LoFi {lofi}, HiFi4 {hifi4}"
    );
    assert!(lofi >= 16 * tiles, "LoFi {lofi}");
    println!("FPU_COUNTER: LoFi {lofi}, HiFi4 {hifi4} for {tiles} tile products");
}

/// Our copy kernel (tt-metal's compute API: `copy_tile`, `pack_tile`, the `tile_regs_*`
/// hand-overs) between the wheel's unary reader and writer: the output is the input, and
/// each TRISC's ring holds its `copy-tile` zone once per tile. The same kernel in tt-metal's
/// older spelling (`compute_kernel_api/...` includes, `namespace NAMESPACE { void MAIN }`),
/// which the pinned tree no longer has, builds and runs the same, and so does the kernel
/// including `api/compute/compute_kernel_api.h`, whose SFPU functions it never calls.
#[test]
fn a_compute_kernel_with_zones_copies_tiles_and_records_on_every_trisc() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let input: Vec<u16> = example_abi::bf16::normal_values(9).take(3 * 1024).collect();
    std::fs::write(d.path().join("in.bin"), bytes16(&input)).unwrap();
    let current = workspace().join("examples/tt-metal/copy_tiles_compute.cpp");
    let text = std::fs::read_to_string(&current).unwrap();
    let older_text = text
        .replace("#include \"api/compute/", "#include \"compute_kernel_api/")
        .replace("void kernel_main() {", "namespace NAMESPACE {\nvoid MAIN {")
        + "}  // namespace NAMESPACE\n";
    assert!(
        older_text.contains("compute_kernel_api/tile_move_copy.h")
            && older_text.contains("void MAIN {")
    );
    let older = d.path().join("copy_tiles_compute_older.cpp");
    std::fs::write(&older, older_text).unwrap();
    // Including the compute API's umbrella header, which defines dozens of SFPU functions the
    // kernel never calls (tt-metal's eltwise_binary programming example does so).
    let with_sfpu_headers = d.path().join("copy_tiles_compute_all_api.cpp");
    std::fs::write(
        &with_sfpu_headers,
        text.replace(
            "#include \"api/compute/pack.h\"",
            "#include \"api/compute/pack.h\"\n#include \"api/compute/compute_kernel_api.h\"",
        ),
    )
    .unwrap();
    for source in [current, older, with_sfpu_headers] {
        let run_dir = d.path().join(source.file_stem().unwrap());
        std::fs::create_dir_all(&run_dir).unwrap();
        std::fs::copy(d.path().join("in.bin"), run_dir.join("in.bin")).unwrap();
        let shape = "[1, 1, 32, 96]";
        let text = [
            "arch = \"wormhole_b0\"\ncores = [\"0,0\"]\nid = 5\n".to_string(),
            kernel(
                UNARY_READER,
                "ncrisc",
                "noc = 1\ncompile_args = [2, 2048]\nargs = [\"@src\", 3, 0]",
            ),
            kernel(source.to_str().unwrap(), "compute", "args = [3]"),
            kernel(
                UNARY_WRITER,
                "brisc",
                "compile_args = [16, 2, 2048]\nargs = [\"@dst\", 3, 0]",
            ),
            cbs(&[0, 16], 2048, 2, "bfloat16"),
            buffer("src", "bfloat16", shape, "input = \"in.bin\""),
            buffer(
                "dst",
                "bfloat16",
                shape,
                "output = \"out.bin\"\nexpect = \"in.bin\"",
            ),
        ]
        .concat();
        let stdout = run(&run_dir, &text);
        assert_eq!(
            std::fs::read(run_dir.join("out.bin")).unwrap(),
            bytes16(&input)
        );
        let stem = source.file_stem().unwrap().to_str().unwrap();
        for t in TRISCS {
            let line = ring(&stdout, &format!("{stem}-1-{t}"));
            assert!(
                line.contains("0 dropped; zones: TRISC-FW x1, TRISC-KERNEL x1, copy-tile x3;"),
                "{line}"
            );
        }
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
    std::fs::write(d.path().join("rows.bin"), bytes16(&rows)).unwrap();
    std::fs::write(d.path().join("tiled.bin"), bytes16(&tiled)).unwrap();
    // tilize: cb_in, cb_out, blocks, tiles per block; untilize: blocks, tiles per block,
    // cb_in, cb_out.
    let program = |name: &str, id: u32, compute: &str, compile: &str, src: &str, dst: &str| {
        let tables = [
            kernel(
                UNARY_READER,
                "ncrisc",
                &format!("noc = 1\ncompile_args = [2, 2048]\nargs = [\"@{src}\", 2, 0]"),
            ),
            kernel(
                &format!("data_movement/{compute}"),
                "compute",
                &format!("compile_args = {compile}"),
            ),
            kernel(
                UNARY_WRITER,
                "brisc",
                &format!("compile_args = [16, 2, 2048]\nargs = [\"@{dst}\", 2, 0]"),
            ),
            cbs(&[0, 16], 2048, 2, "bfloat16"),
        ]
        .concat()
        .replace("[[kernel]]", "[[program.kernel]]")
        .replace("[[cb]]", "[[program.cb]]");
        format!("\n[[program]]\nname = \"{name}\"\ncores = [\"0,0\"]\nid = {id}\n{tables}")
    };
    let shape = "[1, 1, 32, 64]";
    let text = [
        "arch = \"wormhole_b0\"\n".to_string(),
        program(
            "tilize",
            6,
            "tilize/device/kernels/compute/tilize.cpp",
            "[0, 16, 2, 1]",
            "rows",
            "mid",
        ),
        program(
            "untilize",
            7,
            "untilize/device/kernels/compute/untilize.cpp",
            "[2, 1, 0, 16]",
            "mid",
            "back",
        ),
        buffer("rows", "bfloat16", shape, "input = \"rows.bin\""),
        buffer(
            "mid",
            "bfloat16",
            shape,
            "output = \"mid.bin\"\nexpect = \"tiled.bin\"",
        ),
        buffer(
            "back",
            "bfloat16",
            shape,
            "output = \"back.bin\"\nexpect = \"rows.bin\"",
        ),
    ]
    .concat();
    run(d.path(), &text);
    assert_eq!(
        std::fs::read(d.path().join("mid.bin")).unwrap(),
        bytes16(&tiled)
    );
    assert_eq!(
        std::fs::read(d.path().join("back.bin")).unwrap(),
        bytes16(&rows)
    );
}

/// tt-metal's eltwise add on Float32 tiles with 32-bit `Dst` (`fp32_dest_acc`), one tile per
/// block, so the math and pack threads alternate between `Dst`'s two halves: the unpackers
/// get TF32 (the JIT's format rule for Float32 buffers), and every datum of both tiles equals,
/// bit for bit, the host reference of `ELWADD` on TF32 operands into 32-bit `Dst`
/// (`example_abi::tf32::add`).
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
    let shape = "[1, 1, 32, 64]";
    let text = [
        "arch = \"wormhole_b0\"\ncores = [\"0,0\"]\nid = 8\n".to_string(),
        kernel(
            BINARY_READER,
            "ncrisc",
            "compile_args = [0, 2, 4096, 2, 4096]\nargs = [\"@a\", \"@b\", 2, 0, 0, 0, 0]",
        ),
        kernel(
            ELTWISE_BINARY,
            "compute",
            "fp32_dest_acc = true\n\
             defines = [\"ELTWISE_OP=add_tiles\", \"ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD\"]\n\
             args = [2, 1]",
        ),
        kernel(
            UNARY_WRITER,
            "brisc",
            "compile_args = [2, 2, 4096]\nargs = [\"@out\", 2, 0]",
        ),
        cbs(&[0, 1, 2], 4096, 2, "float32"),
        buffer("a", "float32", shape, "input = \"a.bin\""),
        buffer("b", "float32", shape, "input = \"b.bin\""),
        buffer("out", "float32", shape, "output = \"out.bin\""),
    ]
    .concat();
    run(d.path(), &text);
    let got: Vec<f32> = std::fs::read(d.path().join("out.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Bit for bit the host reference of ELWADD on TF32 operands into 32-bit Dst, which is
    // not the Float32 sum: the unpacker drops 13 mantissa bits first.
    let mut differs = 0;
    for (i, ((x, y), g)) in a.iter().zip(&b).zip(&got).enumerate() {
        let want = example_abi::tf32::add(x.to_bits(), y.to_bits());
        assert_eq!(
            g.to_bits(),
            want,
            "datum {i} (tile {}): {x} + {y} = {g}, not {}",
            i / 1024,
            f32::from_bits(want)
        );
        differs += usize::from(want != (x + y).to_bits());
    }
    assert!(differs > 100, "the inputs exercise TF32: {differs} datums");
}

/// The op's device kernel time in cycles (ns at the emulator's 1,000 MHz) of a run, as
/// `ttprof run` prints it.
fn kernel_cycles(dir: &Path, text: &str) -> u64 {
    let stdout = run(dir, text);
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
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let add = |tiles: usize| {
        let shape = format!("[1, 1, 32, {}]", 32 * tiles);
        [
            "arch = \"wormhole_b0\"\ncores = [\"0,0\"]\n".to_string(),
            kernel(
                BINARY_READER,
                "ncrisc",
                &format!(
                    "compile_args = [0, 2, 2048, 2, 2048]\nargs = [\"@a\", \"@b\", {tiles}, 0, 0, 0, 0]"
                ),
            ),
            kernel(
                ELTWISE_BINARY,
                "compute",
                &format!(
                    "defines = [\"ELTWISE_OP=add_tiles\", \"ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD\"]\nargs = [{tiles}, 1]"
                ),
            ),
            kernel(
                UNARY_WRITER,
                "brisc",
                &format!("compile_args = [2, 2, 2048]\nargs = [\"@out\", {tiles}, 0]"),
            ),
            cbs(&[0, 1, 2], 2048, 4, "bfloat16"),
            buffer("a", "bfloat16", &shape, "input = \"a.bin\""),
            buffer("b", "bfloat16", &shape, "input = \"a.bin\""),
            buffer("out", "bfloat16", &shape, "output = \"out.bin\""),
        ]
        .concat()
    };
    let mm = |tiles: usize| {
        matmul_program(0, (1, tiles, 1), 4).replace("input = \"b.bin\"", "input = \"a.bin\"")
    };
    let (small, large) = (8usize, 40usize);
    /// A program of `tiles` tiles.
    type Sized<'a> = &'a dyn Fn(usize) -> String;
    let programs: [(&str, Sized, f64); 2] = [
        ("eltwise add", &add, 8.0),
        ("matmul (LoFi, per K tile)", &mm, 16.0),
    ];
    for (name, program, peak) in programs {
        let mut cycles = [0u64; 2];
        for (k, tiles) in [small, large].into_iter().enumerate() {
            let dir: PathBuf = d.path().join(format!("{}-{tiles}", &name[..6]));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("a.bin"), bytes16(&vec![0x3f80u16; tiles * 1024])).unwrap();
            cycles[k] = kernel_cycles(&dir, &program(tiles));
        }
        let per = (cycles[1] - cycles[0]) as f64 / (large - small) as f64;
        println!(
            "tt-metal {name}, Wormhole B0: {per:.1} device cycles per tile ({small} tiles {} cycles, {large} tiles {}); Matrix Unit peak {peak}",
            cycles[0], cycles[1]
        );
        assert!(per > peak, "{name}: {per} cycles per tile, under the peak");
    }
}

/// tt-metal's eltwise add with inputs of two formats, BF16 and Float32, into BF16 (16-bit
/// `Dst`): each unpacker takes its own buffer's format (Float32 through Float16_b, the JIT's
/// rule), and every datum equals `ELWADD`'s on the BF16 input and the Float32 input's
/// Float16_b truncation, bit for bit.
#[test]
fn tt_metals_eltwise_add_takes_inputs_of_two_formats() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let a: Vec<u16> = example_abi::bf16::normal_values(21).take(2048).collect();
    let b: Vec<f32> = (0..2048)
        .map(|i| (((i * 37 + 71) % 193) as f32 - 96.0) / 7.0)
        .collect();
    std::fs::write(d.path().join("a.bin"), bytes16(&a)).unwrap();
    let b_bytes: Vec<u8> = b.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(d.path().join("b.bin"), b_bytes).unwrap();
    let shape = "[1, 1, 32, 64]";
    let text = [
        "arch = \"wormhole_b0\"\ncores = [\"0,0\"]\nid = 9\n".to_string(),
        kernel(
            BINARY_READER,
            "ncrisc",
            "compile_args = [0, 2, 2048, 2, 4096]\nargs = [\"@a\", \"@b\", 2, 0, 0, 0, 0]",
        ),
        kernel(
            ELTWISE_BINARY,
            "compute",
            "defines = [\"ELTWISE_OP=add_tiles\", \"ELTWISE_OP_TYPE=EltwiseBinaryType::ELWADD\"]\nargs = [2, 1]",
        ),
        kernel(
            UNARY_WRITER,
            "brisc",
            "compile_args = [2, 2, 2048]\nargs = [\"@out\", 2, 0]",
        ),
        cbs(&[0, 2], 2048, 2, "bfloat16"),
        cbs(&[1], 4096, 2, "float32"),
        buffer("a", "bfloat16", shape, "input = \"a.bin\""),
        buffer("b", "float32", shape, "input = \"b.bin\""),
        buffer("out", "bfloat16", shape, "output = \"out.bin\""),
    ]
    .concat();
    run(d.path(), &text);
    let got = words16(&std::fs::read(d.path().join("out.bin")).unwrap());
    // The unpacker turns Float32 into Float16_b by dropping its low 16 bits; then ELWADD
    // into BF16 Dst, bit for bit.
    for (i, ((&x, &y), &g)) in a.iter().zip(&b).zip(&got).enumerate() {
        let want = example_abi::bf16::add(x, (y.to_bits() >> 16) as u16);
        assert_eq!(
            g,
            want,
            "datum {i}: {} + {y} = {}, not {}",
            example_abi::bf16::value(x),
            example_abi::bf16::value(g),
            example_abi::bf16::value(want)
        );
    }
}

/// `reconfig_data_format` inside a kernel: the wheel's eltwise binary kernel, unchanged, with
/// the fused pre-activation on input 0 given as an empty operation (`SFPU_OP_INIT_PRE_IN0_0`
/// and `SFPU_OP_FUNC_PRE_IN0_0` defined empty: the identity, no SFPU code). Per block the
/// kernel copies input 0 through `Dst` into circular buffer 3 (Float32 here, the others
/// BF16), switching the unpacker's SrcA format and the packer's formats to buffer 3's and
/// back with `reconfig_data_format_srca` / `pack_reconfig_data_format`, then adds buffer 3
/// to input 1. BF16 widens to Float32 exactly and a Float32 buffer unpacks to Float16_b
/// with 16-bit `Dst`, so the output equals ELWADD's on the BF16 inputs, bit for bit; a
/// reconfiguration that did not take would unpack Float32 data as BF16 (or pack BF16 as
/// Float32) and fail that.
#[test]
fn tt_metals_eltwise_add_reconfigures_formats_within_the_kernel() {
    if tt_metal_root().is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (_, _, want) = bf16_operands(d.path());
    let text = bf16_add_program(
        4,
        ", \"SFPU_OP_INIT_PRE_IN0_0=\", \"SFPU_OP_FUNC_PRE_IN0_0=\"",
        &cbs(&[3], 4096, 2, "float32"),
    );
    let stdout = run(d.path(), &text);
    let got = std::fs::read(d.path().join("out.bin")).unwrap();
    assert_eq!(got, bytes16(&want), "out.bin is ELWADD's, bit for bit");
    // Math handed Dst to pack four times: two tiles copied, then two added.
    let math = ring(&stdout, "eltwise_binary_kernel-1-trisc1");
    assert!(math.ends_with("sums: tensix-sem-post-1 x4"), "{math}");
}

/// A compute kernel in a Blackhole program is refused before anything is built, whether as
/// `risc = "compute"` or one TRISC's part: the coprocessor model keeps Wormhole B0's
/// configuration words, where Blackhole's tt-llk writes others (a silent wrong answer
/// otherwise).
#[test]
fn tt_metal_compute_kernels_on_blackhole_are_refused() {
    if tt_metal_root().is_none() {
        return;
    }
    for risc in ["compute", "trisc1"] {
        let d = tempfile::tempdir().unwrap();
        bf16_operands(d.path());
        let text = bf16_add_program(7, "", "")
            .replace("arch = \"wormhole_b0\"", "arch = \"blackhole\"")
            .replace("risc = \"compute\"", &format!("risc = \"{risc}\""));
        let p = d.path().join("program.toml");
        std::fs::write(&p, text).unwrap();
        let out = run_program(&p, &d.path().join("run"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{risc}: {err}");
        assert!(
            err.contains("run on wormhole_b0 only")
                && err.contains("Wormhole B0's configuration registers"),
            "{risc}: {err}"
        );
        assert!(
            !d.path().join("run/kernels").exists(),
            "{risc}: nothing built"
        );
    }
}
