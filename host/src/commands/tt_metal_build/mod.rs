//! Building tt-metal's dataflow kernels unchanged (`ttprof build --tt-metal`).
//!
//! The kernel source is compiled with Debian's `riscv64-unknown-elf-g++` the way tt-metal's
//! JIT compiles it: inside a generated wrapper that includes tt-metal's device API first
//! (`device-rt/include/tt-metal/ttprof_tt_metal.h`), then the kernel, then ttprof's entry
//! (`ttprof_tt_metal_entry.h`, which does what the firmware's `brisck.cc`/`ncrisck.cc` do
//! and runs the kernel inside ttprof's launch), with tt-metal's defines for the RISC, the
//! device and the program (`-D`, compile-time arguments, NoC). ttprof's
//! `api/debug/kernel_profiler.hpp` comes first on the include path, so the profiler macros
//! record into ttprof's ring, which lives in the RISC's part of the mailboxes'
//! `profiler_msg_t` area.
//!
//! The link places the kernel where tt-metal's linker script does (after the firmware's
//! text, `__fw_export_text_end`, and after its local data, `__fw_export_ldm_end`; Wormhole's
//! NCRISC in its instruction RAM) and resolves the firmware's globals from the pre-compiled
//! firmware's `*_weakened.elf` of the chosen build ([`firmware_build`]). The device's bank
//! counts are read from that firmware, so the kernel and the firmware agree. The tt-metal
//! tree is `TT_METAL_HOME` or the cache of `scripts/fetch-tt-metal.sh` ([`root`]). See
//! docs/design/tt-metal.md.

mod compute;

pub use compute::{per_trisc, ComputeConfig, TRISCS};

use super::kernels::{build_c_runtime, cache_root, ensure_gcc, include_dir, run_tool, GCC, GXX};
use crate::error::{Error, Result};
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `ttnn` wheel the cache holds (scripts/fetch-tt-metal.sh pins the same).
pub const TTNN_VERSION: &str = "0.81.1";

use riscv_linker::tt_metal::{default_firmware_build, firmware_build, FIRMWARE_BUILD_VAR};

/// The tt-metal tree (the directory holding `tt_metal/hw/inc`): `$TT_METAL_HOME`, else the
/// cache scripts/fetch-tt-metal.sh fills (`$TTPROF_CACHE`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/ttprof`, then `ttnn-VERSION/ttnn`).
pub fn root() -> Result<PathBuf> {
    let (dir, from) = match std::env::var_os("TT_METAL_HOME") {
        Some(d) if !d.is_empty() => (PathBuf::from(d), "TT_METAL_HOME"),
        _ => (
            default_cache_root(),
            "the cache of scripts/fetch-tt-metal.sh",
        ),
    };
    if dir
        .join("tt_metal/hw/inc/api/dataflow/dataflow_api.h")
        .is_file()
    {
        return Ok(dir);
    }
    Err(Error::Build {
        what: format!(
            "no tt-metal device tree at {} ({from}): run scripts/fetch-tt-metal.sh (it fetches \
             ttnn=={TTNN_VERSION} from PyPI into the cache) or set TT_METAL_HOME to a tt-metal checkout",
            dir.display()
        ),
    })
}

fn default_cache_root() -> PathBuf {
    cache_root()
        .join(format!("ttnn-{TTNN_VERSION}"))
        .join("ttnn")
}

/// A tt-metal kernel to build for one RISC: `ttprof build --tt-metal --core RISC FILE.cpp`
/// (a compute kernel is built once per TRISC: [`per_trisc`]).
#[derive(Clone, Debug)]
pub struct TtMetalBuild {
    /// The kernel's source, compiled unchanged.
    pub source: PathBuf,
    /// BRISC or NCRISC (a dataflow kernel), or a TRISC (its part of a compute kernel).
    pub risc: Risc,
    /// The chip architecture.
    pub arch: Arch,
    /// The program's defines, `NAME=VALUE` or `NAME` (tt-metal's `defines` of a kernel).
    pub defines: Vec<String>,
    /// The compile-time arguments (`get_compile_time_arg_val(i)`).
    pub compile_args: Vec<u32>,
    /// Named compile-time arguments (`get_named_compile_time_arg_val("name")`).
    pub named_args: Vec<(String, u32)>,
    /// The data format of each circular buffer the program configures (index, format); the
    /// others are bfloat16 (the JIT's `chlkc_descriptors.h`: tile sizes and shapes).
    pub cb_formats: Vec<(u8, CbFormat)>,
    /// The NoC the kernel uses (`NOC_INDEX`): 0 or 1. Dataflow kernels only.
    pub noc: u8,
    /// A compute kernel's configuration (TRISCs only).
    pub compute: ComputeConfig,
    /// Define `PROFILE_KERNEL`: the profiler macros record. Without it they are gone.
    pub profile: bool,
    /// More compiler flags, after ttprof's own.
    pub flags: Vec<String>,
    /// The ELF's name (default: the source's stem).
    pub name: String,
    /// Where the wrapper, objects, linker scripts and the ELF go.
    pub out_dir: PathBuf,
    /// The tt-metal tree (default: [`root`]).
    pub root: Option<PathBuf>,
    /// Link the text here instead of after the firmware's: where a host that does not
    /// relocate the kernel (tt-metal's does, from the kept relocations) writes it, e.g. a
    /// program's BRISC kernel in the kernel configuration buffer (`ttprof run --program`).
    pub text_base: Option<u32>,
}

impl TtMetalBuild {
    /// `source` for `risc` on `arch`, profiled, NoC 0, named after the source, built in
    /// `target/ttprof-kernels/tt-metal/<arch>/<risc>` of the current directory (a tt-metal
    /// tree may be read-only).
    pub fn new(source: PathBuf, risc: Risc, arch: Arch) -> TtMetalBuild {
        let name = source
            .file_stem()
            .map_or("kernel".into(), |s| s.to_string_lossy().into_owned());
        let out_dir = PathBuf::from("target/ttprof-kernels/tt-metal")
            .join(arch.name())
            .join(risc.ident());
        TtMetalBuild {
            source,
            risc,
            arch,
            defines: Vec::new(),
            compile_args: Vec::new(),
            named_args: Vec::new(),
            cb_formats: Vec::new(),
            noc: 0,
            compute: ComputeConfig::default(),
            profile: true,
            flags: Vec::new(),
            name,
            out_dir,
            root: None,
            text_base: None,
        }
    }
}

/// What the link needs from the pre-compiled firmware: its symbols and the bank counts.
struct Firmware {
    elf: PathBuf,
    /// Defined symbols and their values (`__global_pointer$` left out, see [`fw_script`]).
    symbols: BTreeMap<String, u64>,
    global_pointer: u64,
    /// Bank counts, from the sizes of its bank tables (`None`: it has none).
    dram_banks: Option<u64>,
    l1_banks: Option<u64>,
}

/// Reads `<root>/tt_metal/pre-compiled/<hash>/<risc>/<risc>_weakened.elf`.
fn firmware(root: &Path, arch: Arch, risc: Risc) -> Result<Firmware> {
    use object::{Object, ObjectSymbol};
    let hash = firmware_build(arch);
    let dir = root.join("tt_metal/pre-compiled").join(&hash);
    let elf = dir
        .join(risc.ident())
        .join(format!("{}_weakened.elf", risc.ident()));
    let data = std::fs::read(&elf).map_err(|e| Error::Build {
        what: format!(
            "tt-metal's pre-compiled {} firmware of build {hash} ({}): {e}; the build is chosen by \
             {FIRMWARE_BUILD_VAR} (default {} for {})",
            risc.name(),
            elf.display(),
            default_firmware_build(arch),
            arch.name()
        ),
    })?;
    let file = object::File::parse(&*data).map_err(|e| Error::Elf {
        path: elf.clone(),
        what: e.to_string(),
    })?;
    let mut symbols = BTreeMap::new();
    let (mut gp, mut sizes) = (None, BTreeMap::new());
    for s in file.symbols() {
        let Ok(name) = s.name() else { continue };
        if name.is_empty()
            || s.is_undefined()
            || (s.is_local() && name != "__global_pointer$")
            || s.kind() == object::SymbolKind::File
            || s.kind() == object::SymbolKind::Section
            || name.contains(['"', ' ', ';'])
        {
            continue;
        }
        match name {
            "__global_pointer$" => gp = Some(s.address()),
            "dram_bank_to_noc_xy" | "l1_bank_to_noc_xy" => {
                sizes.insert(name, s.size());
                symbols.insert(name.to_string(), s.address());
            }
            _ => {
                symbols.insert(name.to_string(), s.address());
            }
        }
    }
    let missing = |what: &str| Error::Elf {
        path: elf.clone(),
        what: format!("not a tt-metal firmware: no {what}"),
    };
    let global_pointer = gp.ok_or_else(|| missing("__global_pointer$"))?;
    for need in ["__fw_export_text_end", "__fw_export_ldm_end"] {
        if !symbols.contains_key(need) {
            return Err(missing(need));
        }
    }
    // Each table holds a 16-bit NoC x/y per bank for each of the two NoCs (BRISC's and
    // NCRISC's firmware have them, the TRISCs' not).
    let banks = |name: &str| -> Option<u64> {
        match sizes.get(name) {
            Some(&n) if n > 0 && n % 4 == 0 => Some(n / 4),
            _ => None,
        }
    };
    Ok(Firmware {
        dram_banks: banks("dram_bank_to_noc_xy"),
        l1_banks: banks("l1_bank_to_noc_xy"),
        elf,
        symbols,
        global_pointer,
    })
}

/// The include directories of tt-metal's JIT for a data-movement kernel of `arch`, in its
/// order, under `root`.
fn tt_metal_includes(root: &Path, arch: Arch) -> Vec<PathBuf> {
    let (family, llk) = match arch {
        Arch::WormholeB0 => ("wormhole", "wormhole_b0"),
        Arch::Blackhole => ("blackhole", "blackhole"),
    };
    let defines_dir = match arch {
        Arch::WormholeB0 => "wormhole_b0_defines",
        Arch::Blackhole => "blackhole_defines",
    };
    let inc = format!("tt_metal/hw/inc/internal/tt-1xx/{family}");
    [
        "".to_string(),
        "ttnn".into(),
        "ttnn/cpp".into(),
        "tt_metal".into(),
        "tt_metal/include".into(),
        "tt_metal/hw/inc".into(),
        "tt_metal/hostdevcommon/api".into(),
        "tt_metal/hw/inc/debug".into(),
        "tt_metal/api".into(),
        "tt_metal/hw/inc/internal/tt-1xx".into(),
        inc.clone(),
        format!("{inc}/{defines_dir}"),
        format!("{inc}/noc"),
        format!("tt_metal/tt-llk/tt_llk_{llk}/common/inc"),
        format!("tt_metal/tt-llk/tt_llk_{llk}/llk_lib"),
        "tt_metal/tt-llk/common".into(),
        "tt_metal/hw/firmware/src/tt-1xx".into(),
        format!("tt_metal/hw/ckernels/{llk}/metal/common"),
        format!("tt_metal/hw/ckernels/{llk}/metal/llk_io"),
    ]
    .into_iter()
    .map(|d| {
        if d.is_empty() {
            root.to_path_buf()
        } else {
            root.join(d)
        }
    })
    .collect()
}

/// The PCIe core's NoC coordinates tt-metal's host passes as `PCIE_NOC_X`/`PCIE_NOC_Y`
/// (tt-metal's soc descriptors; Blackhole's in translated coordinates).
fn pcie_core(arch: Arch) -> (u32, u32) {
    match arch {
        Arch::WormholeB0 => (0, 3),
        Arch::Blackhole => (19, 24),
    }
}

/// The defines tt-metal's JIT gives a kernel for `b.risc`, ttprof's own, then the program's
/// (a dataflow kernel's; a compute kernel's are in `defines_generated.h`). A program define
/// of a name ttprof sets replaces ttprof's.
pub(crate) fn tt_metal_defines(b: &TtMetalBuild, dram_banks: u64, l1_banks: u64) -> Vec<String> {
    let mut d: Vec<(String, Option<String>)> = Vec::new();
    let mut set = |k: &str, v: Option<String>| d.push((k.to_string(), v));
    set(
        match b.arch {
            Arch::WormholeB0 => "ARCH_WORMHOLE",
            Arch::Blackhole => "ARCH_BLACKHOLE",
        },
        None,
    );
    let stage = compute::stage(b.risc);
    match stage {
        Some(s) => {
            for (k, v) in compute::stage_defines(s) {
                set(&k, v);
            }
        }
        None if b.risc == Risc::Brisc => {
            set("COMPILE_FOR_BRISC", None);
            set("PROCESSOR_INDEX", Some("0".into()));
        }
        None => {
            set("COMPILE_FOR_NCRISC", None);
            set("PROCESSOR_INDEX", Some("1".into()));
        }
    }
    set("PROGRAMMABLE_CORE_TYPE", Some("0".into()));
    set("KERNEL_BUILD", None);
    set("TENSIX_FIRMWARE", None);
    set("LOCAL_MEM_EN", Some("0".into()));
    set("DISPATCH_MESSAGE_ADDR", Some("0".into()));
    if stage.is_none() {
        set("NOC_INDEX", Some(b.noc.to_string()));
        set("NOC_MODE", Some("0".into()));
    }
    set("NUM_DRAM_BANKS", Some(dram_banks.to_string()));
    set("NUM_L1_BANKS", Some(l1_banks.to_string()));
    for (what, n) in [("DRAM", dram_banks), ("L1", l1_banks)] {
        if n.is_power_of_two() {
            set(
                &format!("LOG_BASE_2_OF_NUM_{what}_BANKS"),
                Some(n.trailing_zeros().to_string()),
            );
        } else {
            set(&format!("IS_NOT_POW2_NUM_{what}_BANKS"), Some("1".into()));
        }
    }
    let (px, py) = pcie_core(b.arch);
    set("PCIE_NOC_X", Some(px.to_string()));
    set("PCIE_NOC_Y", Some(py.to_string()));
    if !b.compile_args.is_empty() {
        let args: Vec<String> = b.compile_args.iter().map(u32::to_string).collect();
        set("KERNEL_COMPILE_TIME_ARGS", Some(args.join(",")));
    }
    if !b.named_args.is_empty() {
        let map: Vec<String> = b
            .named_args
            .iter()
            .map(|(k, v)| format!("{{\"{k}\",{v}}}"))
            .collect();
        set("KERNEL_COMPILE_TIME_ARG_MAP", Some(map.join(",")));
    }
    if b.profile {
        set("PROFILE_KERNEL", Some("1".into()));
    }
    set("TTPROF_TT_METAL", None);
    set("TTPROF_NO_GET_ARG_VAL", None);
    set("TTPROF_PACKAGE", Some(format!("\"{}\"", b.name)));
    // A compute kernel's program defines are in its defines_generated.h, as tt-metal's JIT
    // writes them.
    let program = if stage.is_some() {
        &[][..]
    } else {
        &b.defines[..]
    };
    for def in program {
        let (k, v) = match def.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (def.clone(), None),
        };
        d.retain(|(name, _)| *name != k);
        d.push((k, v));
    }
    d.into_iter()
        .map(|(k, v)| match v {
            Some(v) => format!("-D{k}={v}"),
            None => format!("-D{k}"),
        })
        .collect()
}

/// A circular buffer's data format, for the tile sizes of `chlkc_descriptors.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbFormat {
    /// bfloat16 (tt-metal's `Float16_b`): 2,048-byte tiles.
    Bfloat16,
    /// float32: 4,096-byte tiles.
    Float32,
    /// bfloat8_b (`Bfp8_b`): 1,024 mantissa bytes and 64 exponent bytes per tile.
    Bfloat8B,
    /// uint32: 4,096-byte tiles.
    Uint32,
    /// uint16: 2,048-byte tiles.
    Uint16,
    /// int32: 4,096-byte tiles.
    Int32,
}

impl CbFormat {
    /// The format named `s` (bfloat16, float32, bfloat8_b, uint32, uint16, int32).
    pub fn parse(s: &str) -> std::result::Result<CbFormat, String> {
        Ok(match s {
            "bfloat16" => CbFormat::Bfloat16,
            "float32" => CbFormat::Float32,
            "bfloat8_b" => CbFormat::Bfloat8B,
            "uint32" => CbFormat::Uint32,
            "uint16" => CbFormat::Uint16,
            "int32" => CbFormat::Int32,
            _ => {
                return Err(format!(
                "{s:?} is not a data format: bfloat16, float32, bfloat8_b, uint32, uint16 or int32"
            ))
            }
        })
    }

    /// tt-metal's `DataFormat` value (tensix_types.h) and a 32x32 tile's bytes.
    fn code_and_tile_bytes(self) -> (u32, u32) {
        match self {
            CbFormat::Float32 => (0, 4096),
            CbFormat::Bfloat16 => (5, 2048),
            CbFormat::Bfloat8B => (6, 1088),
            CbFormat::Int32 => (8, 4096),
            CbFormat::Uint16 => (9, 2048),
            CbFormat::Uint32 => (24, 4096),
        }
    }
}

/// The circular buffers a dataflow descriptor describes: the larger `NUM_CIRCULAR_BUFFERS`
/// ([`riscv_linker::tt_metal::num_circular_buffers`]: 32 on Wormhole B0, 64 on Blackhole),
/// for both arches (the unused entries cost nothing at -Os).
const DESCRIBED_CBS: usize = riscv_linker::tt_metal::num_circular_buffers(Arch::Blackhole) as usize;

/// `chlkc_descriptors.h` as tt-metal's JIT generates it for a kernel, with the arrays a
/// dataflow kernel reads: each circular buffer's data format, tile size in bytes and tile
/// shape (32x32 tiles of four 16x16 faces).
fn descriptors_source(formats: &[(u8, CbFormat)]) -> String {
    let mut fmt = [CbFormat::Bfloat16; DESCRIBED_CBS];
    for &(i, f) in formats {
        fmt[usize::from(i) % DESCRIBED_CBS] = f;
    }
    let list = |f: &dyn Fn(CbFormat) -> u32| -> String {
        fmt.iter()
            .map(|&x| f(x).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let code = list(&|f| f.code_and_tile_bytes().0);
    let bytes = list(&|f| f.code_and_tile_bytes().1);
    let mut s = String::from(
        "// Generated by `ttprof build --tt-metal`: the circular buffers' data formats and tiles.
#pragma once
#include <cstdint>
",
    );
    for side in ["unpack", "pack"] {
        let arrays: [(&str, &str); 12] = [
            ("src_format", &code),
            ("dst_format", &code),
            ("tile_size", &bytes),
            ("tile_r_dim", "32"),
            ("tile_c_dim", "32"),
            ("tile_num_faces", "4"),
            ("tile_face_r_dim", "16"),
            ("partial_face", "0"),
            ("narrow_tile", "0"),
            ("num_faces_r_dim", "2"),
            ("num_faces_c_dim", "2"),
            ("tile_hw", "1024"),
        ];
        for (name, values) in arrays {
            let values = if values.contains(',') {
                values.to_string()
            } else {
                vec![values; DESCRIBED_CBS].join(", ")
            };
            let _ = writeln!(
                s,
                "constexpr std::uint32_t {side}_{name}[{DESCRIBED_CBS}] = {{{values}}};"
            );
        }
    }
    s
}

/// Checks a `-D` argument: `NAME` or `NAME=VALUE`, NAME a C identifier.
pub fn check_define(def: &str) -> std::result::Result<(), String> {
    let name = def.split_once('=').map_or(def, |(k, _)| k);
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "-D {def:?}: give NAME or NAME=VALUE with NAME a C identifier"
        ))
    }
}

/// The generated wrapper: tt-metal's API, the kernel, ttprof's entry.
fn wrapper_source(kernel: &Path) -> String {
    format!(
        "// Generated by `ttprof build --tt-metal`: tt-metal's device API, the kernel as it is,\n\
         // ttprof's entry (device-rt/include/tt-metal).\n\
         #include \"ttprof_tt_metal.h\"\n\
         #include \"{}\"\n\
         #include \"ttprof_tt_metal_entry.h\"\n",
        kernel.display()
    )
}

/// The firmware's symbols for the kernel's link, as `PROVIDE`s (a kernel's own definition
/// wins, as against tt-metal's weakened firmware), without `__global_pointer$`: GNU ld
/// relaxes accesses near a defined global pointer to gp-relative ones, and during the
/// kernel `gp` is ttprof's ring limit. The firmware's value is kept as
/// `__ttprof_fw_global_pointer` for the entry that restores it (Wormhole's NCRISC).
fn fw_script(fw: &Firmware) -> String {
    let mut s = format!(
        "/* The symbols of {} (generated by ttprof build --tt-metal). */\n",
        fw.elf.display()
    );
    let _ = writeln!(s, "__ttprof_fw_global_pointer = {:#x};", fw.global_pointer);
    for (name, value) in &fw.symbols {
        if name.starts_with("__fw_export_") {
            let _ = writeln!(s, "{name} = {value:#x};");
        } else {
            let _ = writeln!(s, "PROVIDE({name} = {value:#x});");
        }
    }
    s
}

/// The kernel's linker script: tt-metal's placement (see docs/design/tt-metal.md), the
/// runtime's symbols for the ring in the `profiler_msg_t` area, the zone sites.
fn link_script(b: &TtMetalBuild, fw_symbols: &Path) -> String {
    let iram = b.arch == Arch::WormholeB0 && b.risc == Risc::Ncrisc;
    let text = match b.text_base {
        Some(at) => format!("{at:#x}"),
        None if iram => "__ttprof_tt_text_base".into(),
        None => "__fw_export_text_end".into(),
    };
    let block = riscv_linker::profiler::RING_BLOCK_SIZE;
    let others: String = Risc::ALL
        .into_iter()
        .filter(|r| *r != b.risc)
        .map(|r| format!("PROVIDE(__ttprof_risc_{} = 0);\n", r.ident()))
        .collect();
    format!(
        "/* ttprof build --tt-metal: {name} for {risc} on {arch} (generated). */
OUTPUT_ARCH(riscv)
ENTRY(_start)
INCLUDE \"{fw}\"

__ttprof_risc_{ident} = 1;
{others}__ttprof_arch_{arch} = 1;
__ttprof_risc_index = {index};
__ttprof_arch_id = {arch_id};
/* The ring: this RISC's part of profiler_msg_t in the core's mailboxes. */
__ttprof_ring_block = __ttprof_tt_profiler_area;
__ttprof_anchor = __ttprof_ring_block + {anchor:#x};
__ttprof_ring_base = __ttprof_ring_block + {block:#x};
__ttprof_ring_capacity = __ttprof_tt_profiler_area_size - {block:#x};
__ttprof_tile_block = __ttprof_tt_control_vector;
__ttprof_wall_clock_l = {clock:#x};
/* Runtime arguments are tt-metal's (get_arg_val reads rta_l1_base). */
PROVIDE(__ttprof_runtime_args = 0);
/* Where a TRISC pushes Tensix instructions (tt-metal's main.ld: INSTRN_BUF_BASE). */
PROVIDE(__instrn_buffer = 0xFFE40000);

PHDRS {{ text PT_LOAD; data PT_LOAD; }}
SECTIONS
{{
  .text {text} : {{
    __kernel_text_start = ABSOLUTE(.);
    KEEP(*(.start))
    *(.text.unlikely .text.unlikely.*) *(.text.startup .text.startup.*) *(.text.hot .text.hot.*)
    *(.text .text.*)
    . = ALIGN(4);
  }} :text
  __kernel_data_lma = .;
  .data __fw_export_ldm_end : AT(__kernel_data_lma) {{
    __ldm_data_start = .;
    *(.rodata .rodata.* .srodata .srodata.* .sdata .sdata.* .data .data.*)
    . = ALIGN(8);
    __ttprof_sums_start = .;
    KEEP(*(.ttprof_sums .ttprof_sums.*))
    __ttprof_sums_end = .;
    . = ALIGN(4);
    __ldm_data_end = .;
  }} :data
  .bss (ADDR(.data) + SIZEOF(.data)) : ALIGN(4) {{
    __ldm_bss_start = .;
    *(.sbss .sbss.* .bss .bss.* COMMON)
    . = ALIGN(4);
    __ldm_bss_end = .;
  }} :data
  . = ALIGN(ABSOLUTE(.), 16);
  __stack_base = .;
  .ttprof_sites 0 (INFO) : {{ KEEP(*(.ttprof_sites .ttprof_sites.*)) }}
  /* The runtime library's own entry (ttprof's L1 layout) is not this kernel's. */
  /DISCARD/ : {{ *(.ttprof.start .ttprof.boot) *(.eh_frame .eh_frame_hdr .comment .note.GNU-stack) }}
}}
ASSERT(SIZEOF(.ttprof_sites) <= 65536, \"ttprof: more than 65536 zone sites in one kernel\");
ASSERT(__stack_base <= __ttprof_tt_local_end, \"ttprof: the kernel's local data does not fit beside the firmware's and the stack\");
ASSERT(_start == ADDR(.text), \"ttprof: _start is not at the start of the kernel's text\");
",
        name = b.name,
        risc = b.risc.name(),
        arch = b.arch.name(),
        fw = fw_symbols.display(),
        ident = b.risc.ident(),
        index = b.risc.index(),
        arch_id = b.arch.id(),
        anchor = riscv_linker::profiler::ring::ANCHOR,
        clock = riscv_linker::mmio::WALL_CLOCK_L,
    )
}

/// The runtime library for a tt-metal kernel: a copy of `libttprof_rt_c.a` whose own entry
/// (`_start`, the launch of ttprof's L1 layout) is renamed `__ttprof_rt_start`, since the
/// kernel's `_start` is the one tt-metal's firmware calls (ttprof_tt_metal_entry.h).
fn runtime_library(lib: &Path, out: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, "create the build directory", e))?;
    let copy = out.join(RUNTIME_LIBRARY);
    let mut cmd = Command::new(OBJCOPY);
    cmd.arg("--redefine-sym=_start=__ttprof_rt_start")
        .arg(lib)
        .arg(&copy);
    run_tool(
        &mut cmd,
        &format!(
            "renaming the runtime library's entry into {}",
            copy.display()
        ),
    )?;
    Ok(copy)
}

/// The runtime library's name in a build's directory ([`runtime_library`]).
const RUNTIME_LIBRARY: &str = "libttprof_rt_c-tt-metal.a";

/// The object copier of the compiler's binutils.
const OBJCOPY: &str = "riscv64-unknown-elf-objcopy";

/// Compiles and links a tt-metal kernel for one RISC; returns the ELF's path. The compiler's
/// own messages are shown as they are (on stderr); a failed step is an error naming it, and a
/// compute kernel that reaches SFPU code is refused naming the function.
pub fn build(b: &TtMetalBuild) -> Result<PathBuf> {
    let stage = compute::stage(b.risc);
    if b.noc > 1 {
        return Err(Error::Argument {
            what: format!("--noc {}: a Tensix core has NoC 0 and NoC 1", b.noc),
        });
    }
    if !b.source.is_file() {
        return Err(Error::BadFile {
            path: b.source.clone(),
            what: "no such kernel source".into(),
        });
    }
    for d in &b.defines {
        check_define(d).map_err(|what| Error::Argument { what })?;
    }
    if !matches!(b.compute.math_fidelity, 0 | 2 | 3 | 4) {
        return Err(Error::Argument {
            what: format!(
                "math fidelity {}: tt-metal's are 0 (LoFi), 2 (HiFi2), 3 (HiFi3) and 4 (HiFi4)",
                b.compute.math_fidelity
            ),
        });
    }
    let root = match &b.root {
        Some(r) => r.clone(),
        None => root()?,
    };
    let fw = firmware(&root, b.arch, b.risc)?;
    // The TRISCs' firmware has no bank tables: the build's BRISC firmware says the counts.
    let (dram_banks, l1_banks) = match (fw.dram_banks, fw.l1_banks) {
        (Some(d), Some(l)) => (d, l),
        _ => {
            let brisc = firmware(&root, b.arch, Risc::Brisc)?;
            let missing = |what| Error::Elf {
                path: brisc.elf.clone(),
                what: format!("not a tt-metal firmware: no {what} table with a size"),
            };
            (
                brisc
                    .dram_banks
                    .ok_or_else(|| missing("dram_bank_to_noc_xy"))?,
                brisc.l1_banks.ok_or_else(|| missing("l1_bank_to_noc_xy"))?,
            )
        }
    };
    ensure_gcc()?;
    // Absolute: the linker script INCLUDEs the firmware's symbols by path.
    let out = &build_dir(b);
    let lib = runtime_library(&build_c_runtime(None, true)?, out)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, "create the build directory", e))?;
    let source = std::path::absolute(&b.source).unwrap_or_else(|_| b.source.clone());
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(&path, "write a generated file", e))
    };
    let wrapper_name = format!("{}.ttprof.cpp", b.name);
    match stage {
        Some(s) => {
            write(
                "chlkc_descriptors.h",
                compute::descriptors_source(b.arch, &b.cb_formats, b.compute),
            )?;
            write(
                "defines_generated.h",
                compute::defines_generated(&b.defines),
            )?;
            let text = std::fs::read(&source)
                .map_err(|e| Error::io(&source, "read the kernel's source", e))?;
            write(
                &format!("chlkc_{}.cpp", s.lower),
                compute::chlkc_source(
                    s,
                    &source,
                    compute::older_entry(&String::from_utf8_lossy(&text)),
                ),
            )?;
            compute::older_headers(&root, out)?;
            write(&wrapper_name, compute::wrapper_source())?;
        }
        None => {
            write("chlkc_descriptors.h", descriptors_source(&b.cb_formats))?;
            write(&wrapper_name, wrapper_source(&source))?;
        }
    }
    let wrapper = out.join(&wrapper_name);
    let include = include_dir()?;
    // The kernel in its wrapper, and tt-metal's substitutes.cpp (the few library functions
    // the firmware's helpers call: wzerorange, l1_to_local_mem_copy, exit), as tt-metal's
    // JIT compiles them into every kernel.
    let substitutes = root.join("tt_metal/hw/toolchain/substitutes.cpp");
    let objects = objects(b, out);
    // A compute kernel with SFPI's toolchain, when TT_SFPI_COMPILER names one.
    let sfpi = sfpi_of(b)?;
    for (src, obj) in [&wrapper, &substitutes].into_iter().zip(&objects) {
        let mut cmd = match &sfpi {
            Some(s) => Command::new(&s.driver),
            None => Command::new(GXX),
        };
        match stage {
            Some(_) => cmd.args(compute::compile_flags(
                sfpi.as_ref().map(|_| compute::Sfpi::cpu_flag(b.arch)),
            )),
            None => cmd.args(compile_flags()),
        };
        cmd.arg("-I")
            .arg(out)
            .arg("-I")
            .arg(include.join("tt-metal"))
            .arg("-I")
            .arg(&include);
        for dir in tt_metal_includes(&root, b.arch) {
            cmd.arg("-I").arg(dir);
        }
        if stage.is_some() {
            for dir in compute::includes(&root, b.arch) {
                cmd.arg("-I").arg(dir);
            }
            match &sfpi {
                // SFPI's assembler knows `.ttinsn`, and its headers are the real ones.
                Some(s) => cmd.arg("-I").arg(&s.include),
                None => cmd
                    .arg("-I")
                    .arg(include.join("tt-metal/no-sfpi"))
                    .arg("-include")
                    .arg(include.join("tt-metal/ttprof_tensix_insn.h")),
            };
        }
        if stage.is_some() {
            cmd.arg("-idirafter").arg(out.join(compute::OLDER_HEADERS));
        }
        cmd.arg("-idirafter")
            .arg(include.join("compat"))
            .args(tt_metal_defines(b, dram_banks, l1_banks))
            .args(&b.flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(obj);
        let what = if src == &wrapper {
            b.source.display()
        } else {
            substitutes.display()
        };
        match stage {
            Some(_) => compile_compute(
                &mut cmd,
                &b.source,
                &format!("compiling {what} for {}", b.risc.ident()),
                sfpi.is_none(),
            )?,
            None => run_tool(&mut cmd, &format!("compiling {what}"))?,
        }
    }

    let fw_symbols = out.join(format!("firmware-{}.ld", b.risc.ident()));
    std::fs::write(&fw_symbols, fw_script(&fw))
        .map_err(|e| Error::io(&fw_symbols, "write the firmware's symbols", e))?;
    link(b, out, &objects, &lib)
}

/// Where `b` is built: its `out_dir`, absolute.
fn build_dir(b: &TtMetalBuild) -> PathBuf {
    std::path::absolute(&b.out_dir).unwrap_or_else(|_| b.out_dir.clone())
}

/// The objects a build of `b` compiled into `out` ([`build`]): the kernel in its wrapper,
/// tt-metal's substitutes.
fn objects(b: &TtMetalBuild, out: &Path) -> Vec<PathBuf> {
    vec![out.join(format!("{}.o", b.name)), out.join("substitutes.o")]
}

/// Links `objects` and the runtime library `lib` into `out/<name>.elf` at `b.text_base`,
/// with the firmware's symbols [`build`] wrote into `out`.
fn link(b: &TtMetalBuild, out: &Path, objects: &[PathBuf], lib: &Path) -> Result<PathBuf> {
    let fw_symbols = out.join(format!("firmware-{}.ld", b.risc.ident()));
    let script = out.join(format!("link-{}.ld", b.risc.ident()));
    std::fs::write(&script, link_script(b, &fw_symbols))
        .map_err(|e| Error::io(&script, "write the linker script", e))?;
    let elf = out.join(format!("{}.elf", b.name));
    let sfpi = sfpi_of(b)?;
    let mut cmd = match &sfpi {
        // SFPI's objects carry its `-mcpu`'s attributes: its own linker and libgcc take them.
        Some(s) => {
            let mut cmd = Command::new(&s.driver);
            cmd.args(compute::with_cpu(
                link_flags(),
                compute::Sfpi::cpu_flag(b.arch),
            ));
            cmd
        }
        None => {
            let mut cmd = Command::new(GCC);
            cmd.args(link_flags());
            cmd
        }
    };
    cmd.arg(format!("-Wl,-T,{}", script.display()))
        .arg("-o")
        .arg(&elf)
        .args(objects)
        .arg(lib)
        .arg("-lgcc");
    let what = format!("linking {}", elf.display());
    match compute::stage(b.risc) {
        // ttprof's stand-in sfpi.h declares SFPI's values only: SFPU code the kernel runs
        // is an undefined reference here, refused by name.
        Some(_) => compile_compute(&mut cmd, &b.source, &what, sfpi.is_none())?,
        None => run_tool(&mut cmd, &what)?,
    }
    Ok(elf)
}

/// Links a kernel [`build`] built from `b` again, at `b.text_base` (which the caller
/// changed), from the objects it compiled: a program's host packing its kernels in the
/// kernel configuration buffer (`ttprof_emu::tt_metal::program::packed_text_bases`). The
/// ELF's path, as [`build`] returned it.
pub fn relink(b: &TtMetalBuild) -> Result<PathBuf> {
    let out = &build_dir(b);
    let lib = out.join(RUNTIME_LIBRARY);
    link(b, out, &objects(b, out), &lib)
}

/// The SFPI toolchain `b` is built with: a compute kernel's part when TT_SFPI_COMPILER
/// names one ([`compute::sfpi_toolchain`]), else none (Debian's GCC).
fn sfpi_of(b: &TtMetalBuild) -> Result<Option<compute::Sfpi>> {
    match compute::stage(b.risc) {
        Some(_) => compute::sfpi_toolchain(),
        None => Ok(None),
    }
}

/// Runs a compute kernel's compile or link step: its messages are shown as they are, and
/// (with Debian's GCC, `refuse_sfpu`) a failure that comes from SFPU code is refused by name
/// ([`compute::sfpi_refusal`]).
fn compile_compute(cmd: &mut Command, kernel: &Path, what: &str, refuse_sfpu: bool) -> Result<()> {
    let output = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Error::Build {
            what: format!("{what}: cannot run {:?}: {e}", cmd.get_program()),
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        eprint!("{stderr}");
        return Ok(());
    }
    if let Some(why) = compute::sfpi_refusal(kernel, &stderr).filter(|_| refuse_sfpu) {
        return Err(Error::Build { what: why });
    }
    eprint!("{stderr}");
    Err(Error::Build {
        what: format!("{what} failed (the compiler's messages are above)"),
    })
}

/// The compiler flags of a tt-metal dataflow kernel (tt-metal's JIT: C++17, -Os, no
/// exceptions or RTTI, no memcpy for copy loops), plus ttprof's registers and sections.
pub fn compile_flags() -> Vec<&'static str> {
    vec![
        "-march=rv32im",
        "-mabi=ilp32",
        "-std=c++17",
        "-Os",
        "-g",
        "-ffreestanding",
        "-fno-exceptions",
        "-fno-rtti",
        "-fno-use-cxa-atexit",
        "-fno-threadsafe-statics",
        "-fno-tree-loop-distribute-patterns",
        "-fno-asynchronous-unwind-tables",
        "-ffixed-gp",
        "-ffixed-tp",
        "-ffunction-sections",
        "-fdata-sections",
        // tt-metal's compiler knows its pointer qualifiers (rvtt_l1_ptr, ...); GCC ignores them.
        "-Wno-attributes",
    ]
}

/// The link flags (tt-metal keeps relocations, so a host can move the kernel).
pub fn link_flags() -> Vec<&'static str> {
    vec![
        "-march=rv32im",
        "-mabi=ilp32",
        "-nostdlib",
        "-nostartfiles",
        "-static",
        "-Wl,--gc-sections",
        "-Wl,--emit-relocs",
        "-Wl,-z,max-page-size=16",
        "-Wl,-z,common-page-size=16",
        "-Wl,-u,_start",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_define_replaces_ttprofs_and_args_join_with_commas() {
        let mut b = TtMetalBuild::new("k.cpp".into(), Risc::Ncrisc, Arch::WormholeB0);
        b.defines = vec!["NOC_MODE=1".into(), "BACKWARDS".into()];
        b.compile_args = vec![2, 2048];
        b.noc = 1;
        let d = tt_metal_defines(&b, 12, 72);
        assert!(d.contains(&"-DCOMPILE_FOR_NCRISC".to_string()));
        assert!(d.contains(&"-DPROCESSOR_INDEX=1".to_string()));
        assert!(d.contains(&"-DNOC_INDEX=1".to_string()));
        assert!(d.contains(&"-DIS_NOT_POW2_NUM_DRAM_BANKS=1".to_string()));
        assert!(d.contains(&"-DKERNEL_COMPILE_TIME_ARGS=2,2048".to_string()));
        assert_eq!(d.iter().filter(|x| x.starts_with("-DNOC_MODE")).count(), 1);
        assert!(d.contains(&"-DNOC_MODE=1".to_string()));
        assert!(d.contains(&"-DBACKWARDS".to_string()));
        let d = tt_metal_defines(&b, 8, 64);
        assert!(d.contains(&"-DLOG_BASE_2_OF_NUM_DRAM_BANKS=3".to_string()));
        assert!(d.contains(&"-DLOG_BASE_2_OF_NUM_L1_BANKS=6".to_string()));
    }

    #[test]
    fn defines_must_name_an_identifier() {
        assert!(check_define("BACKWARDS").is_ok());
        assert!(check_define("N_TILES=4").is_ok());
        assert!(check_define("4X=1").is_err());
        assert!(check_define("A-B").is_err());
        assert!(check_define("").is_err());
    }
}
