//! What a tt-metal compute kernel's build adds to a dataflow kernel's, per TRISC (see
//! docs/design/tt-metal-compute.md).
//!
//! tt-metal's JIT compiles a compute kernel three times, once per TRISC: unpack (TRISC0), math
//! (TRISC1), pack (TRISC2). Each time the firmware's `trisck.cc` includes generated files:
//! `chlkc_{unpack,math,pack}.cpp` (`#define TRISC_*`, the program's defines, the kernel),
//! `defines_generated.h` (the program's defines: a compute kernel's are not `-D`s), and
//! `chlkc_descriptors.h` (per circular buffer its formats and tile shape; the math fidelity,
//! approximation mode, Dest accumulation and sync modes). ttprof generates the same files and
//! compiles its own `trisck.cc` in their place (`ttprof_tt_metal_entry.h`), with three things
//! Debian's toolchain needs: a force-included header that writes tt-llk's `.ttinsn` as the
//! word the ISA documentation defines, an empty `sfpi.h` and a small `lltt.h`
//! (`device-rt/include/tt-metal/no-sfpi`). A kernel that reaches SFPU code cannot be built by
//! Debian's GCC: [`sfpi_refusal`] names the function, unless `TT_SFPI_COMPILER` names
//! Tenstorrent's SFPI toolchain ([`sfpi_toolchain`]), which then compiles and links it.

use super::{CbFormat, TtMetalBuild};
use riscv_linker::{Arch, Risc};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One TRISC's part of a compute kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stage {
    /// `COMPILE_FOR_TRISC`: 0, 1 or 2.
    pub index: u8,
    /// `UNPACK`, `MATH` or `PACK` (`TRISC_*`, `UCK_CHLKC_*`).
    pub upper: &'static str,
    /// `unpack`, `math` or `pack` (`chlkc_*.cpp`, `NAMESPACE=chlkc_*`).
    pub lower: &'static str,
}

/// The stage a RISC runs; `None` for BRISC and NCRISC.
pub(super) fn stage(risc: Risc) -> Option<Stage> {
    let (index, upper, lower) = match risc {
        Risc::Trisc0 => (0, "UNPACK", "unpack"),
        Risc::Trisc1 => (1, "MATH", "math"),
        Risc::Trisc2 => (2, "PACK", "pack"),
        Risc::Brisc | Risc::Ncrisc => return None,
    };
    Some(Stage {
        index,
        upper,
        lower,
    })
}

/// A compute kernel's program settings that go into `chlkc_descriptors.h` (tt-metal's
/// `ComputeConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeConfig {
    /// `MathFidelity`: 0 (LoFi), 2 (HiFi2), 3 (HiFi3) or 4 (HiFi4, tt-metal's default).
    pub math_fidelity: u8,
    /// `APPROX`: the SFPU's approximation mode.
    pub approx: bool,
    /// `DST_ACCUM_MODE`: Dest holds 32-bit values (tt-metal's `fp32_dest_acc_en`).
    pub fp32_dest_acc: bool,
    /// `DST_SYNC_MODE`: `SyncFull` when set (tt-metal's `dst_full_sync_en`), else `SyncHalf`.
    pub dst_full_sync: bool,
}

impl Default for ComputeConfig {
    fn default() -> ComputeConfig {
        ComputeConfig {
            math_fidelity: 4,
            approx: false,
            fp32_dest_acc: false,
            dst_full_sync: false,
        }
    }
}

/// The defines of TRISC `s` (the JIT's per-TRISC ones; the device's are the dataflow build's).
pub(super) fn stage_defines(s: Stage) -> Vec<(String, Option<String>)> {
    vec![
        ("COMPILE_FOR_TRISC".into(), Some(s.index.to_string())),
        ("PROCESSOR_INDEX".into(), Some((s.index + 2).to_string())),
        (format!("UCK_CHLKC_{}", s.upper), None),
        ("NAMESPACE".into(), Some(format!("chlkc_{}", s.lower))),
    ]
}

/// tt-metal's `DataFormat::Invalid`: a circular buffer the program does not configure.
const INVALID: u32 = 255;

/// tt-metal's `DataFormat` codes the format rules below produce beyond [`CbFormat`]'s.
const TF32: u32 = 4;
const FLOAT16_B: u32 = 5;

/// What a circular buffer of format `f` is unpacked to (tt-metal's JIT, `data_format.cpp`'s
/// `get_unpack_dst_formats`, without unpack-to-Dest): Float32 becomes TF32 when Dest holds
/// 32 bits and every configured buffer is Float32 or of the B exponent family, else the
/// conditional format, Float16_b (tt-metal's default); the others stay as they are.
fn unpack_dst(f: CbFormat, tf32: bool) -> u32 {
    match f {
        CbFormat::Float32 if tf32 => TF32,
        CbFormat::Float32 => FLOAT16_B,
        f => f.code_and_tile_bytes().0,
    }
}

/// What the packer reads Dest as for a circular buffer of format `f` (the JIT's
/// `get_single_pack_src_format` with the buffer as both input and output): with 32-bit Dest
/// Float32 stays, a block float becomes Float16_b; without, Float32 packs from Float16_b.
fn pack_src(f: CbFormat, fp32_dest: bool) -> u32 {
    match f {
        CbFormat::Float32 if fp32_dest => f.code_and_tile_bytes().0,
        CbFormat::Float32 | CbFormat::Bfloat8B => FLOAT16_B,
        f => f.code_and_tile_bytes().0,
    }
}

/// `chlkc_descriptors.h` for a compute kernel on `arch`, in the JIT's layout: an entry per
/// circular buffer (`NUM_CIRCULAR_BUFFERS`: 32 on Wormhole B0, 64 on Blackhole); `formats`
/// are the configured ones (all are bfloat16 when none is given). The unpackers' destination
/// and the packers' source formats follow tt-metal's rules ([`unpack_dst`], [`pack_src`]).
pub(super) fn descriptors_source(
    arch: Arch,
    formats: &[(u8, CbFormat)],
    c: ComputeConfig,
) -> String {
    let n = usize::from(riscv_linker::tt_metal::num_circular_buffers(arch));
    let mut fmt: Vec<Option<CbFormat>> = vec![None; n];
    if formats.is_empty() {
        fmt = vec![Some(CbFormat::Bfloat16); n];
    }
    for &(i, f) in formats {
        if let Some(slot) = fmt.get_mut(usize::from(i)) {
            *slot = Some(f);
        }
    }
    let list = |f: &dyn Fn(Option<CbFormat>) -> u32| -> String {
        fmt.iter()
            .map(|&x| f(x).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let code = list(&|f| f.map_or(INVALID, |f| f.code_and_tile_bytes().0));
    let exp_b = |f: CbFormat| matches!(f, CbFormat::Bfloat16 | CbFormat::Bfloat8B);
    let tf32 = c.fp32_dest_acc
        && fmt
            .iter()
            .flatten()
            .all(|&f| f == CbFormat::Float32 || exp_b(f));
    let unpack_dst_code = list(&|f| f.map_or(INVALID, |f| unpack_dst(f, tf32)));
    let pack_src_code = list(&|f| f.map_or(INVALID, |f| pack_src(f, c.fp32_dest_acc)));
    let bytes = list(&|f| f.map_or(0, |f| f.code_and_tile_bytes().1));
    let same = |v: u32| vec![v.to_string(); n].join(",");
    let dims = |side: &str, s: &mut String| {
        for (ty, name, values) in [
            ("uint8_t", "tile_num_faces", same(4)),
            ("uint8_t", "partial_face", same(0)),
            ("uint8_t", "tile_face_r_dim", same(16)),
            ("uint8_t", "narrow_tile", same(0)),
            ("uint8_t", "tile_r_dim", same(32)),
            ("uint8_t", "tile_c_dim", same(32)),
            ("uint16_t", "tile_size", bytes.clone()),
            ("uint8_t", "num_faces_r_dim", same(2)),
            ("uint8_t", "num_faces_c_dim", same(2)),
        ] {
            let _ = writeln!(s, "constexpr {ty} {side}_{name}[{n}] = {{{values}}};");
        }
    };
    let mut s = String::from(
        "// Generated by `ttprof build --tt-metal`: the circular buffers' formats and tiles, and the\n\
         // compute configuration, as tt-metal's JIT writes them.\n#pragma once\n\n",
    );
    let _ = writeln!(
        s,
        "constexpr bool APPROX = {};\n\
         #if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK)\n#include \"llk_defs.h\"\n\
         constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>({});\n#endif\n",
        c.approx, c.math_fidelity
    );
    s.push_str("#if !defined(UCK_CHLKC_PACK)\n");
    let _ = writeln!(
        s,
        "constexpr std::int32_t unpack_src_format[{n}] = {{{code}}};"
    );
    let _ = writeln!(
        s,
        "constexpr std::int32_t unpack_dst_format[{n}] = {{{unpack_dst_code}}};"
    );
    dims("unpack", &mut s);
    s.push_str("#endif\n\n#if !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_UNPACK)\n");
    let _ = writeln!(
        s,
        "constexpr unsigned char pack_src_format[{n}] = {{{pack_src_code}}};"
    );
    let _ = writeln!(
        s,
        "constexpr unsigned char pack_dst_format[{n}] = {{{code}}};"
    );
    dims("pack", &mut s);
    let _ = writeln!(
        s,
        "#if defined(UCK_CHLKC_PACK)\nconstexpr std::int32_t unpack_src_format[{n}] = {{{code}}};\n#endif"
    );
    s.push_str("#endif\n\n");
    let _ = writeln!(
        s,
        "constexpr bool DST_ACCUM_MODE = {};\n#define DST_SYNC_MODE DstSync::{}",
        c.fp32_dest_acc,
        if c.dst_full_sync {
            "SyncFull"
        } else {
            "SyncHalf"
        }
    );
    s
}

/// `defines_generated.h`: one `#define` per program define.
pub(super) fn defines_generated(defines: &[String]) -> String {
    let mut s = String::from(
        "// Generated by `ttprof build --tt-metal`: the program's defines of a compute kernel.\n#pragma once\n",
    );
    for d in defines {
        match d.split_once('=') {
            Some((k, v)) => {
                let _ = writeln!(s, "#define {k} {v}");
            }
            None => {
                let _ = writeln!(s, "#define {d}");
            }
        }
    }
    s
}

/// `chlkc_<stage>.cpp`: the stage's define, the program's defines, the kernel as it is. A
/// kernel in the older spelling (`older_entry`: `namespace NAMESPACE { void MAIN }`, which
/// the compute API's `MAIN` makes `chlkc_<stage>::<stage>_main()`) gets the `kernel_main`
/// that `chlkc_list.h`'s `run_kernel` calls, calling it.
pub(super) fn chlkc_source(s: Stage, kernel: &Path, older_entry: bool) -> String {
    let mut text = format!(
        "// Generated by `ttprof build --tt-metal`.\n#define TRISC_{}\n#include \"defines_generated.h\"\n#include \"{}\"\n",
        s.upper,
        kernel.display()
    );
    if older_entry {
        text.push_str(
            "// The kernel's entry is spelled `namespace NAMESPACE { void MAIN }` (older tt-metal).\n\
             void kernel_main() { NAMESPACE::MAIN; }\n",
        );
    }
    text
}

/// Whether a compute kernel's source defines its entry in the older spelling, `void MAIN`
/// (in `namespace NAMESPACE`), rather than `void kernel_main()`: the tokens `void MAIN` on a
/// line outside a `//` comment.
pub(super) fn older_entry(source: &str) -> bool {
    source.lines().any(|line| {
        let code = line.split("//").next().unwrap_or("");
        let mut tokens = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|t| !t.is_empty());
        let mut before = None;
        tokens.any(|t| {
            let hit = before == Some("void") && t == "MAIN";
            before = Some(t);
            hit
        })
    })
}

/// The directory name, inside a build's directory, of [`older_headers`]' forwarders.
pub(super) const OLDER_HEADERS: &str = "compute_kernel_api_compat";

/// The older include spelling of the compute API, `compute_kernel_api/X.h` and
/// `compute_kernel_api.h`, for the pinned tree's `api/compute/X.h`: one forwarding header
/// each, written into `out`/[`OLDER_HEADERS`] from the tree's own list (searched after every
/// other directory, so the tree's headers win where both exist). Returns the directory.
pub(super) fn older_headers(root: &Path, out: &Path) -> crate::Result<PathBuf> {
    let api = root.join("tt_metal/hw/inc/api/compute");
    let dir = out.join(OLDER_HEADERS);
    let mut stack = vec![PathBuf::new()];
    let mut headers = vec![(
        PathBuf::from("compute_kernel_api.h"),
        "compute_kernel_api.h".into(),
    )];
    while let Some(rel) = stack.pop() {
        let here = api.join(&rel);
        let entries = std::fs::read_dir(&here)
            .map_err(|e| crate::Error::io(&here, "list the compute API's headers", e))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| crate::Error::io(&here, "list the compute API's headers", e))?;
            let name = rel.join(entry.file_name());
            let kind = entry
                .file_type()
                .map_err(|e| crate::Error::io(entry.path(), "read a header's type", e))?;
            if kind.is_dir() {
                stack.push(name);
            } else if name.extension().is_some_and(|e| e == "h" || e == "hpp") {
                let target = name.to_string_lossy().into_owned();
                headers.push((Path::new("compute_kernel_api").join(&name), target));
            }
        }
    }
    for (path, target) in headers {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| crate::Error::io(parent, "create a directory", e))?;
        }
        let text = format!(
            "// Generated by `ttprof build --tt-metal`: the older spelling of the compute API's header.\n\
             #pragma once\n#include \"api/compute/{target}\"\n"
        );
        std::fs::write(&path, text)
            .map_err(|e| crate::Error::io(&path, "write a generated file", e))?;
    }
    Ok(dir)
}

/// The translation unit: trisck.cc's includes, then ttprof's entry in place of its `_start`.
pub(super) fn wrapper_source() -> String {
    "// Generated by `ttprof build --tt-metal`: tt-metal's trisck.cc includes (the kernel is in\n\
     // chlkc_list.h's chlkc_*.cpp), then ttprof's entry (device-rt/include/tt-metal).\n\
     #include \"defines_generated.h\"\n\
     #include \"internal/firmware_common.h\"\n\
     #include \"api/compile_time_args.h\"\n\
     #include \"chlkc_list.h\"\n\
     #include \"api/debug/kernel_profiler.hpp\"\n\
     #include \"internal/debug/stack_usage.h\"\n\
     #include \"ttprof_tt_metal_entry.h\"\n"
        .into()
}

/// The include directories a compute kernel needs beyond a dataflow kernel's, under `root`.
pub(super) fn includes(root: &Path, arch: Arch) -> Vec<PathBuf> {
    let llk = match arch {
        Arch::WormholeB0 => "wormhole_b0",
        Arch::Blackhole => "blackhole",
    };
    [
        "tt_metal/tt-llk/tools/include".to_string(),
        format!("tt_metal/hw/ckernels/{llk}/metal/llk_api"),
        format!("tt_metal/hw/ckernels/{llk}/metal/llk_api/llk_sfpu"),
    ]
    .into_iter()
    .map(|d| root.join(d))
    .collect()
}

/// The compiler flags of a compute kernel: tt-metal's compute defaults (-O3, fast math)
/// on top of the dataflow ones; `-fbuiltin` again after `-ffreestanding`, since tt-llk
/// bit-casts with `memcpy`, which must be inlined. With SFPI's compiler (`sfpi_cpu`, from
/// [`Sfpi::cpu_flag`]) its `-mcpu` replaces Debian's `-march` and `-mabi` ([`with_cpu`]).
pub(super) fn compile_flags(sfpi_cpu: Option<&'static str>) -> Vec<&'static str> {
    let mut f: Vec<&str> = super::compile_flags()
        .into_iter()
        .filter(|f| *f != "-Os")
        .collect();
    f.extend(["-O3", "-ffast-math", "-fbuiltin"]);
    match sfpi_cpu {
        Some(cpu) => with_cpu(f, cpu),
        None => f,
    }
}

/// `flags` for SFPI's driver: Debian's `-march` and `-mabi` replaced by `cpu`
/// ([`Sfpi::cpu_flag`]), compiling and linking alike.
pub(super) fn with_cpu(flags: Vec<&'static str>, cpu: &'static str) -> Vec<&'static str> {
    let mut f: Vec<&str> = flags
        .into_iter()
        .filter(|f| !(f.starts_with("-march=") || f.starts_with("-mabi=")))
        .collect();
    f.push(cpu);
    f
}

/// The environment variable naming Tenstorrent's SFPI toolchain: when set, compute kernels
/// are compiled and linked with it, as tt-metal's JIT does, and SFPU code builds.
pub(super) const SFPI_VARIABLE: &str = "TT_SFPI_COMPILER";

/// The compiler driver's name inside SFPI's `compiler/bin` (tt-metal's JIT looks for it
/// under `runtime/sfpi` and `/opt/tenstorrent/sfpi`).
const SFPI_DRIVER: &str = "riscv-tt-elf-g++";

/// Tenstorrent's SFPI toolchain ([`SFPI_VARIABLE`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Sfpi {
    /// The C++ driver: compiles the TRISCs' parts and links them.
    pub driver: PathBuf,
    /// SFPI's headers (`sfpi.h`, `lltt.h`), in place of ttprof's FPU-only stand-ins.
    pub include: PathBuf,
}

impl Sfpi {
    /// The flags that replace Debian's `-march=rv32im -mabi=ilp32`: the Tensix core of
    /// `arch`, as tt-metal's JIT passes for a TRISC.
    pub(super) fn cpu_flag(arch: Arch) -> &'static str {
        match arch {
            Arch::WormholeB0 => "-mcpu=tt-wh-tensix",
            Arch::Blackhole => "-mcpu=tt-bh-tensix",
        }
    }
}

/// The SFPI toolchain [`SFPI_VARIABLE`] names, if it is set: SFPI's directory (the one
/// holding `compiler/bin/riscv-tt-elf-g++` and `include/`, e.g. `/opt/tenstorrent/sfpi`) or
/// the driver itself (its headers then at `../../include`). An error names what is missing.
pub(super) fn sfpi_toolchain() -> crate::Result<Option<Sfpi>> {
    let Some(given) = std::env::var_os(SFPI_VARIABLE).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    sfpi_at(Path::new(&given)).map(Some)
}

/// [`sfpi_toolchain`] for the path `given`.
fn sfpi_at(given: &Path) -> crate::Result<Sfpi> {
    let missing = |what: String| crate::Error::Build {
        what: format!(
            "{SFPI_VARIABLE}={}: {what}; set it to Tenstorrent's SFPI directory (holding \
             compiler/bin/{SFPI_DRIVER} and include/, e.g. /opt/tenstorrent/sfpi) or to that \
             driver, or unset it to build FPU-only compute kernels with Debian's GCC",
            given.display()
        ),
    };
    let (driver, root) = if given.is_dir() {
        let driver = given.join("compiler/bin").join(SFPI_DRIVER);
        if !driver.is_file() {
            return Err(missing(format!("no {} there", driver.display())));
        }
        (driver, given.to_path_buf())
    } else if given.is_file() {
        let root = given
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        (given.to_path_buf(), root)
    } else {
        return Err(missing("no such file or directory".into()));
    };
    let include = root.join("include");
    if !include.join("sfpi.h").is_file() {
        return Err(missing(format!(
            "no sfpi.h in {} (SFPI's headers)",
            include.display()
        )));
    }
    let driver = std::path::absolute(&driver).unwrap_or(driver);
    let include = std::path::absolute(&include).unwrap_or(include);
    Ok(Sfpi { driver, include })
}

/// Names the words of SFPI's C++ API in a compiler message.
const SFPI_WORDS: [&str; 8] = [
    "sfpi", "vFloat", "vInt", "vUInt", "dst_reg", "v_if", "v_endif", "lreg",
];

/// When the compiler's or the linker's messages show that the kernel reached SFPU code, what
/// to tell the user: the function and the place where it happened, and what the kernel needs.
/// SFPU code is an error that names SFPI's API, or sits in an SFPU header (tt-llk's and
/// tt-metal's: `.../sfpu/`, `.../llk_sfpu/`, `ckernel_sfpu*`, instantiated by the kernel), or an
/// undefined reference the link finds to ttprof's stand-in SFPI values (`sfpi.h` here names
/// SFPI's API without defining it: `device-rt/include/tt-metal/no-sfpi`).
pub(super) fn sfpi_refusal(kernel: &Path, stderr: &str) -> Option<String> {
    let quoted = |c: &str| -> Option<String> {
        let start = c.find(['\'', '‘', '`'])?;
        let rest = &c[start + c[start..].chars().next()?.len_utf8()..];
        let end = rest.find(['\'', '’'])?;
        Some(rest[..end].to_string())
    };
    let mut context = None;
    for line in stderr.lines() {
        if line.contains("In function")
            || line.contains("In instantiation of")
            || line.contains("in function `")
        {
            context = Some(line.trim());
        }
        let (place, sfpu) = if let Some((place, msg)) = line.split_once(": error: ") {
            let file = place.split(':').next().unwrap_or(place);
            let in_sfpu_header = file.contains("/sfpu/")
                || file.contains("/llk_sfpu/")
                || Path::new(file)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ckernel_sfpu"));
            (place, in_sfpu_header || names_sfpi(msg))
        } else if let Some((place, msg)) = line.split_once(": undefined reference to `") {
            (
                place,
                msg.starts_with("sfpi::") || msg.starts_with("__builtin_rvtt"),
            )
        } else {
            continue;
        };
        if !sfpu {
            continue;
        }
        let function = context
            .and_then(quoted)
            .unwrap_or_else(|| "a function".into());
        return Some(format!(
            "{} reaches SFPU code: {function} ({}) uses SFPI's C++ API, which needs \
             Tenstorrent's SFPI compiler (SFPI's values live in the SFPU's registers, which only \
             that compiler allocates); with Debian's GCC ttprof builds compute kernels that use \
             the FPU only (add_tiles, matmul_tiles, copy_tile, pack_tile, tilize, untilize, ...); \
             set {SFPI_VARIABLE} to an SFPI toolchain to build this one",
            kernel.display(),
            place.trim()
        ));
    }
    None
}

/// Whether a compiler message names a word of SFPI's API ([`SFPI_WORDS`]) or ttprof's
/// stand-ins for it.
fn names_sfpi(msg: &str) -> bool {
    msg.contains("ttprof_no_sfpi")
        || SFPI_WORDS.iter().any(|w| {
            msg.match_indices(w).any(|(i, _)| {
                let before = msg[..i].chars().next_back();
                let after = msg[i + w.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            })
        })
}

/// The RISCs of a compute kernel, in order.
pub const TRISCS: [Risc; 3] = [Risc::Trisc0, Risc::Trisc1, Risc::Trisc2];

/// A compute build for each TRISC of `b`: the same settings, each in its own directory
/// (`<out>/<trisc>`) and named `<name>-<trisc>`.
pub fn per_trisc(b: &TtMetalBuild) -> Vec<TtMetalBuild> {
    TRISCS
        .into_iter()
        .map(|risc| {
            let mut t = b.clone();
            t.risc = risc;
            t.name = format!("{}-{}", b.name, risc.ident());
            t.out_dir = b.out_dir.join(risc.ident());
            t
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_entry_spelling_is_told_from_kernel_main() {
        assert!(older_entry("namespace NAMESPACE {\nvoid MAIN {\n}\n}"));
        assert!(older_entry("namespace NAMESPACE { void  MAIN { x(); } }"));
        assert!(!older_entry(
            "void kernel_main() {\n  // was: void MAIN {\n}"
        ));
        assert!(!older_entry("void MAINLOOP() {}\nvoid kernel_main() {}"));
        let s = stage(Risc::Trisc1).unwrap();
        let text = chlkc_source(s, Path::new("k.cpp"), true);
        assert!(
            text.ends_with("void kernel_main() { NAMESPACE::MAIN; }\n"),
            "{text}"
        );
        assert!(!chlkc_source(s, Path::new("k.cpp"), false).contains("kernel_main"));
    }

    #[test]
    fn an_undeclared_sfpi_name_is_refused_naming_the_function() {
        let stderr = "In file included from x.h:3:\n\
            ckernel_sfpu_relu.h: In function 'void ckernel::sfpu::relu_min(uint)':\n\
            ckernel_sfpu_relu.h:20:5: error: 'vFloat' was not declared in this scope\n";
        let why = sfpi_refusal(Path::new("k.cpp"), stderr).unwrap();
        assert!(why.contains("void ckernel::sfpu::relu_min(uint)"), "{why}");
        assert!(why.contains("ckernel_sfpu_relu.h:20:5"), "{why}");
        assert!(why.contains("SFPI compiler"), "{why}");
        // An error inside an SFPU header, and a link that finds SFPI's values undefined.
        let stderr = "ckernel_sfpu_fill.h: In function 'void ckernel::sfpu::_fill_(uint)':\n\
            ckernel_sfpu_fill.h:55:23: error: static assertion failed: mode\n";
        let why = sfpi_refusal(Path::new("k.cpp"), stderr).unwrap();
        assert!(
            why.contains("void ckernel::sfpu::_fill_(uint) (ckernel_sfpu_fill.h:55:23)"),
            "{why}"
        );
        let stderr = "/usr/bin/ld: k.o: in function `ckernel::sfpu::relu(unsigned int)':\n\
            k.cpp:(.text+0x10): undefined reference to `sfpi::ttprof_no_sfpi::vec<0>::vec()'\n";
        let why = sfpi_refusal(Path::new("k.cpp"), stderr).unwrap();
        assert!(
            why.contains("ckernel::sfpu::relu(unsigned int) (k.cpp:(.text+0x10))"),
            "{why}"
        );
        assert!(sfpi_refusal(
            Path::new("k.cpp"),
            "k.cpp:(.text): undefined reference to `memcpy'\n"
        )
        .is_none());
        // A kernel of the user's whose name says sfpu is not SFPU code.
        let stderr = "my_sfpu_test.cpp: In function 'void kernel_main()':\n\
            my_sfpu_test.cpp:3:5: error: 'foo' was not declared in this scope\n";
        assert!(sfpi_refusal(Path::new("my_sfpu_test.cpp"), stderr).is_none());
        // Other errors are the compiler's own; a word that merely contains one is not SFPI.
        assert_eq!(
            sfpi_refusal(
                Path::new("k.cpp"),
                "k.cpp:1:1: error: 'foo' was not declared\nk.cpp:2:1: error: 'lregs_total' undeclared\n"
            ),
            None
        );
    }

    #[test]
    fn descriptors_mark_unconfigured_buffers_invalid_and_carry_the_configuration() {
        let c = ComputeConfig {
            math_fidelity: 2,
            approx: true,
            fp32_dest_acc: true,
            dst_full_sync: true,
        };
        let s = descriptors_source(
            Arch::WormholeB0,
            &[(0, CbFormat::Bfloat16), (16, CbFormat::Float32)],
            c,
        );
        let line = |name: &str| s.lines().find(|l| l.contains(name)).unwrap().to_string();
        let src = line("unpack_src_format[32]");
        let values: Vec<&str> = src[src.find('{').unwrap() + 1..src.find('}').unwrap()]
            .split(',')
            .collect();
        assert_eq!(values.len(), 32);
        assert_eq!((values[0], values[16], values[1]), ("5", "0", "255"));
        assert!(line("unpack_tile_size").contains("{2048,0,"));
        assert!(s.contains("static_cast<ckernel::MathFidelity>(2)"));
        assert!(s.contains("APPROX = true"));
        assert!(s.contains("DST_ACCUM_MODE = true"));
        assert!(s.contains("DstSync::SyncFull"));
        // Float32 unpacks to TF32 with 32-bit Dest (every buffer Float32 or B-family) and
        // packs from Float32; without, both go through Float16_b.
        let f32s = [(0, CbFormat::Float32), (2, CbFormat::Float32)];
        let wide = descriptors_source(Arch::WormholeB0, &f32s, c);
        let d = |s: &str, name: &str| {
            let l = s.lines().find(|l| l.contains(name)).unwrap().to_string();
            l[l.find('{').unwrap() + 1..]
                .split(',')
                .next()
                .unwrap()
                .to_string()
        };
        let d = |s: &str, name: &str| {
            let ty = if name.starts_with("pack") {
                "char "
            } else {
                "int32_t "
            };
            d(s, &format!("{ty}{name}"))
        };
        assert_eq!(d(&wide, "unpack_src_format[32]"), "0");
        assert_eq!(d(&wide, "unpack_dst_format[32]"), "4");
        assert_eq!(d(&wide, "pack_src_format[32]"), "0");
        let narrow = descriptors_source(Arch::WormholeB0, &f32s, ComputeConfig::default());
        assert_eq!(d(&narrow, "unpack_dst_format[32]"), "5");
        assert_eq!(d(&narrow, "pack_src_format[32]"), "5");
        let every = descriptors_source(Arch::WormholeB0, &[], ComputeConfig::default());
        assert!(!every.contains("255"), "no buffer given: all bfloat16");
        assert!(every.contains("DstSync::SyncHalf") && every.contains("MathFidelity>(4)"));
        // Blackhole's NUM_CIRCULAR_BUFFERS is 64: tt-llk indexes the arrays that far.
        let bh = descriptors_source(Arch::Blackhole, &f32s, c);
        assert!(bh.contains("unpack_src_format[64] = {0,255,0,"), "{bh}");
    }

    #[test]
    fn each_trisc_gets_its_stage() {
        let d = stage_defines(stage(Risc::Trisc1).unwrap());
        assert!(d.contains(&("COMPILE_FOR_TRISC".into(), Some("1".into()))));
        assert!(d.contains(&("PROCESSOR_INDEX".into(), Some("3".into()))));
        assert!(d.contains(&("UCK_CHLKC_MATH".into(), None)));
        assert!(stage(Risc::Brisc).is_none());
        let s = chlkc_source(stage(Risc::Trisc2).unwrap(), Path::new("/k/add.cpp"), false);
        assert!(s.starts_with("// Generated") && s.contains("#define TRISC_PACK\n"));
        assert!(s.ends_with("#include \"/k/add.cpp\"\n"));
        assert_eq!(
            defines_generated(&["ELTWISE_OP=add_tiles".into(), "FLAG".into()]),
            "// Generated by `ttprof build --tt-metal`: the program's defines of a compute kernel.\n\
             #pragma once\n#define ELTWISE_OP add_tiles\n#define FLAG\n"
        );
    }
}
