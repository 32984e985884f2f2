//! The program file: its schema (docs/design/tt-metal-program.md), reading it, placing its
//! buffers in the DRAM banks and resolving runtime arguments.

use crate::error::{Error, Result};
use crate::tt_metal_build;
use riscv_linker::Arch;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest program file, and the largest input or expected file, read.
const MAX_FILE: u64 = 16 << 20;
const MAX_BUFFER: u64 = 1 << 30;
/// Where buffers are placed when the file gives no address: from 1 MiB in every bank.
const FIRST_BANK_ADDRESS: u32 = 0x10_0000;

/// A program file as written: one program (`cores`, `[[kernel]]`, `[[cb]]`, ... at the
/// top), or several run in order (`[[program]]`, each with its own), over the same buffers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    /// `wormhole_b0` (the default) or `blackhole`.
    pub arch: Option<String>,
    /// Cores: `"X,Y"` or an inclusive range `"X0,Y0-X1,Y1"` of logical worker coordinates.
    pub cores: Option<Vec<String>>,
    /// The program's kernels.
    #[serde(rename = "kernel", default)]
    pub kernels: Vec<KernelSpec>,
    /// The circular buffers (the same on every core).
    #[serde(rename = "cb", default)]
    pub cbs: Vec<CbSpec>,
    /// The semaphores' initial values (`get_semaphore(i)`).
    #[serde(default)]
    pub semaphores: Vec<u32>,
    /// `host_assigned_id` of the launch (tt-metal's program id).
    #[serde(default)]
    pub id: u32,
    /// Several programs, run one after the other (instead of the fields above).
    #[serde(rename = "program", default)]
    pub programs: Vec<ProgramSpec>,
    /// Interleaved DRAM and L1 buffers, shared by every program.
    #[serde(rename = "buffer", default)]
    pub buffers: Vec<BufferSpec>,
}

/// One program of a file: its cores, kernels, circular buffers, semaphores and id.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    /// Its name: the op's in the op log and every output (default: the file's name, and
    /// `-N` after it for the N-th of several).
    pub name: Option<String>,
    /// Cores: `"X,Y"` or an inclusive range `"X0,Y0-X1,Y1"` of logical worker coordinates.
    pub cores: Vec<String>,
    /// Its kernels.
    #[serde(rename = "kernel")]
    pub kernels: Vec<KernelSpec>,
    /// Its circular buffers (the same on every core).
    #[serde(rename = "cb", default)]
    pub cbs: Vec<CbSpec>,
    /// Its semaphores' initial values (`get_semaphore(i)`).
    #[serde(default)]
    pub semaphores: Vec<u32>,
    /// `host_assigned_id` of its launch (tt-metal's program id).
    #[serde(default)]
    pub id: u32,
}

impl ProgramFile {
    /// The programs to run, in order, named after `stem` (the file's name) unless they
    /// have a name: the top-level one, or every `[[program]]`; a file with both, or
    /// neither, is refused.
    pub fn take_programs(&mut self, stem: &str) -> Result<Vec<ProgramSpec>> {
        let top = self.cores.is_some()
            || !self.kernels.is_empty()
            || !self.cbs.is_empty()
            || !self.semaphores.is_empty()
            || self.id != 0;
        match (top, self.programs.is_empty()) {
            (true, false) => Err(arg(
                "a file has one program at the top (cores, [[kernel]], ...) or [[program]]s, \
                 not both"
                    .into(),
            )),
            (false, true) => Err(arg(
                "no program: cores and [[kernel]], or [[program]]".into()
            )),
            (true, true) => Ok(vec![ProgramSpec {
                name: Some(stem.to_string()),
                cores: self
                    .cores
                    .take()
                    .ok_or_else(|| arg("the program has no cores".into()))?,
                kernels: std::mem::take(&mut self.kernels),
                cbs: std::mem::take(&mut self.cbs),
                semaphores: std::mem::take(&mut self.semaphores),
                id: self.id,
            }]),
            (false, false) => {
                let mut out = std::mem::take(&mut self.programs);
                for (i, p) in out.iter_mut().enumerate() {
                    p.name.get_or_insert_with(|| format!("{stem}-{i}"));
                }
                for (i, p) in out.iter().enumerate() {
                    if out[..i].iter().any(|o| o.name == p.name) {
                        return Err(arg(format!(
                            "two programs are named {:?}",
                            p.name.as_deref().unwrap_or_default()
                        )));
                    }
                }
                Ok(out)
            }
        }
    }
}

/// A runtime argument: a word, `"@NAME"`, the address of buffer NAME, or `"@x:X,Y"` /
/// `"@y:X,Y"`, the NoC coordinate of logical worker X,Y.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    /// A 32-bit word.
    Word(u32),
    /// `@NAME` (a buffer's bank address), `@x:X,Y` / `@y:X,Y` (a worker's NoC 0
    /// coordinate) or a number as a string (`"0x100"`).
    Text(String),
}

/// One kernel.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    /// Its source, built unchanged through `ttprof build --tt-metal`'s path.
    pub source: String,
    /// `brisc` or `ncrisc` (on Wormhole B0 NCRISC runs its kernel from its instruction RAM,
    /// on Blackhole from L1), or `compute`: a compute kernel, built for and run on the three
    /// TRISCs (Wormhole B0 only).
    pub risc: String,
    /// A compute kernel's math fidelity: 0 (LoFi), 2, 3 or 4 (HiFi4, the default).
    pub math_fidelity: Option<u8>,
    /// A compute kernel's `fp32_dest_acc_en`.
    #[serde(default)]
    pub fp32_dest_acc: bool,
    /// A compute kernel's `dst_full_sync_en`.
    #[serde(default)]
    pub dst_full_sync: bool,
    /// A compute kernel's `math_approx_mode`.
    #[serde(default)]
    pub math_approx: bool,
    /// The NoC it uses (0 or 1).
    #[serde(default)]
    pub noc: u8,
    /// Compile-time arguments.
    #[serde(default)]
    pub compile_args: Vec<u32>,
    /// Named compile-time arguments.
    #[serde(default)]
    pub named_compile_args: BTreeMap<String, u32>,
    /// Defines, `NAME` or `NAME=VALUE`.
    #[serde(default)]
    pub defines: Vec<String>,
    /// Runtime arguments on every core.
    #[serde(default)]
    pub args: Vec<Arg>,
    /// Runtime arguments of one core (`"X,Y" = [...]`), instead of `args` there.
    #[serde(default)]
    pub core_args: BTreeMap<String, Vec<Arg>>,
    /// Common runtime arguments.
    #[serde(default)]
    pub common_args: Vec<Arg>,
}

/// One circular buffer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbSpec {
    /// Its index.
    pub index: u8,
    /// Bytes per page.
    pub page_size: u32,
    /// Pages.
    pub pages: u32,
    /// Its data format (bfloat16 unless given).
    pub format: Option<String>,
}

/// One interleaved buffer, in DRAM or in the workers' L1.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// Its name (`@NAME` in runtime arguments).
    pub name: String,
    /// `dram` (the default) or `l1`: tt-metal's `BufferType`.
    pub buffer_type: Option<String>,
    /// Element type: bfloat16, float32, uint32, uint16, int32.
    pub dtype: String,
    /// Its shape; the last two dimensions are tiled 32x32 (`layout = "tile"`, the default)
    /// or rows (`"row_major"`, one page per row).
    pub shape: Vec<u32>,
    /// `tile` or `row_major`.
    pub layout: Option<String>,
    /// Bytes per page (default: a tile's, or a row's).
    pub page_size: Option<u32>,
    /// Bank address (default: DRAM from 1 MiB up, L1 from the top of L1 down).
    pub address: Option<u32>,
    /// A file loaded into it before the run (its size must be the buffer's).
    pub input: Option<String>,
    /// A file written with its contents after the run.
    pub output: Option<String>,
    /// A file it must equal after the run (a difference is a data problem, exit 2).
    pub expect: Option<String>,
}

/// A buffer as placed.
#[derive(Clone, Debug)]
pub struct Placed {
    /// Its name.
    pub name: String,
    /// In the workers' L1 (else in DRAM).
    pub l1: bool,
    /// Bank address.
    pub address: u32,
    /// Page size.
    pub page_size: u32,
    /// Bytes.
    pub bytes: u64,
}

pub(super) fn arg(what: String) -> Error {
    Error::Argument { what }
}

/// `"X,Y"` or `"X0,Y0-X1,Y1"`: logical worker coordinates, row by row.
pub fn parse_cores(specs: &[String]) -> Result<Vec<(u8, u8)>> {
    let xy = |s: &str, whole: &str| -> Result<(u8, u8)> {
        let (x, y) = s
            .split_once(',')
            .ok_or_else(|| arg(format!("cores {whole:?}: give X,Y or X0,Y0-X1,Y1")))?;
        let n = |v: &str| {
            v.trim()
                .parse::<u8>()
                .map_err(|_| arg(format!("cores {whole:?}: {v:?} is not a coordinate")))
        };
        Ok((n(x)?, n(y)?))
    };
    let mut out = Vec::new();
    for s in specs {
        let (a, b) = match s.split_once('-') {
            Some((a, b)) => (xy(a, s)?, xy(b, s)?),
            None => (xy(s, s)?, xy(s, s)?),
        };
        if a.0 > b.0 || a.1 > b.1 {
            return Err(arg(format!(
                "cores {s:?}: a range goes from its low corner to its high one"
            )));
        }
        for y in a.1..=b.1 {
            for x in a.0..=b.0 {
                if out.contains(&(x, y)) {
                    return Err(arg(format!("cores: core {x},{y} is given twice")));
                }
                out.push((x, y));
            }
        }
    }
    if out.is_empty() {
        return Err(arg("cores: the program runs on no core".into()));
    }
    Ok(out)
}

/// Bytes of one element of `dtype`.
fn dtype_bytes(dtype: &str, buffer: &str) -> Result<u32> {
    Ok(match dtype {
        "bfloat16" | "uint16" => 2,
        "float32" | "uint32" | "int32" => 4,
        _ => {
            return Err(arg(format!(
                "buffer {buffer}: dtype {dtype:?}: bfloat16, float32, uint32, uint16 or int32"
            )))
        }
    })
}

/// Reads and parses a program file.
pub fn read(path: &Path) -> Result<ProgramFile> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "read the program", e))?;
    if meta.len() > MAX_FILE {
        return Err(Error::BadFile {
            path: path.into(),
            what: format!("{} bytes: a program file is at most {MAX_FILE}", meta.len()),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the program", e))?;
    toml::from_str(&text).map_err(|e| Error::BadFile {
        path: path.into(),
        what: format!("not a program file: {e}"),
    })
}

/// Resolves a path of the program file: `tt-metal:REL` under the tt-metal root, else
/// relative to the file's directory.
pub(super) fn resolve(base: &Path, p: &str) -> Result<PathBuf> {
    match p.strip_prefix("tt-metal:") {
        Some(rel) => Ok(tt_metal_build::root()?.join(rel)),
        None => Ok(base.join(p)),
    }
}

pub(super) fn read_limited(path: &Path, what: &str) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "read a buffer file", e))?;
    if meta.len() > MAX_BUFFER {
        return Err(Error::BadFile {
            path: path.into(),
            what: format!("{what}: {} bytes, at most {MAX_BUFFER}", meta.len()),
        });
    }
    std::fs::read(path).map_err(|e| Error::io(path, "read a buffer file", e))
}

/// Where buffers are placed in L1 when the file gives no address: from the top of L1
/// down, 32-byte aligned, each bank alike.
const L1_ALIGN: u64 = 32;

/// Places the buffers, DRAM ones over the arch's DRAM banks, L1 ones over `l1_banks`
/// workers' L1: the given address, else the next free one (DRAM: up from 1 MiB, 4 KiB
/// aligned; L1: down from the top of L1). Overlaps in the banks are refused; so is an L1
/// buffer below `l1_floor` (the end of the kernel configuration buffer).
pub(super) fn place(
    f: &ProgramFile,
    arch: Arch,
    l1_banks: u32,
    l1_floor: u64,
) -> Result<Vec<Placed>> {
    let dram_banks = riscv_linker::noc::dram::banks(arch) as u64;
    let mut next = FIRST_BANK_ADDRESS as u64;
    let mut l1_next = arch.l1_size() as u64;
    let mut out: Vec<Placed> = Vec::new();
    // Each placed buffer's range in its banks.
    let mut ranges: Vec<(bool, u64, u64)> = Vec::new();
    for b in &f.buffers {
        if out.iter().any(|o| o.name == b.name) {
            return Err(arg(format!(
                "buffer {}: two buffers have that name",
                b.name
            )));
        }
        let l1 = match b.buffer_type.as_deref().unwrap_or("dram") {
            "dram" => false,
            "l1" => true,
            t => {
                return Err(arg(format!(
                    "buffer {}: buffer_type {t:?}: dram or l1",
                    b.name
                )))
            }
        };
        let elem = dtype_bytes(&b.dtype, &b.name)? as u64;
        if b.shape.is_empty() || b.shape.contains(&0) {
            return Err(arg(format!(
                "buffer {}: shape {:?}: positive dimensions",
                b.name, b.shape
            )));
        }
        let elems = b
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64));
        let bytes = elems
            .and_then(|n| n.checked_mul(elem))
            .filter(|&n| n <= MAX_BUFFER)
            .ok_or_else(|| arg(format!("buffer {}: more than {MAX_BUFFER} bytes", b.name)))?;
        let row = *b.shape.last().unwrap() as u64 * elem;
        let page = match b.layout.as_deref().unwrap_or("tile") {
            "tile" => {
                let h = if b.shape.len() >= 2 {
                    b.shape[b.shape.len() - 2]
                } else {
                    1
                };
                if h % 32 != 0 || b.shape.last().unwrap() % 32 != 0 {
                    return Err(arg(format!(
                        "buffer {}: a tiled shape's last two dimensions are multiples of 32",
                        b.name
                    )));
                }
                b.page_size.map_or(32 * 32 * elem, u64::from)
            }
            "row_major" => b.page_size.map_or(row, u64::from),
            l => {
                return Err(arg(format!(
                    "buffer {}: layout {l:?}: tile or row_major",
                    b.name
                )))
            }
        };
        if page == 0 || page > u32::MAX as u64 {
            return Err(arg(format!("buffer {}: page size {page}", b.name)));
        }
        let pages = bytes.div_ceil(page);
        let (address, end) = if l1 {
            // tt-metal's dataflow API strides a bank by the page rounded up to L1_ALIGNMENT.
            let per_bank = pages.div_ceil(l1_banks.max(1) as u64) * page.div_ceil(16) * 16;
            let address = match b.address {
                Some(a) => a as u64,
                None => l1_next.saturating_sub(per_bank) / L1_ALIGN * L1_ALIGN,
            };
            let end = address + per_bank;
            if address < l1_floor || end > arch.l1_size() as u64 {
                return Err(arg(format!(
                    "buffer {}: {per_bank} bytes per L1 bank at {address:#x} do not fit between \
                     the kernel configuration buffer's end {l1_floor:#x} and L1's end {:#x}",
                    b.name,
                    arch.l1_size()
                )));
            }
            l1_next = l1_next.min(address);
            (address, end)
        } else {
            let per_bank = pages.div_ceil(dram_banks) * page.div_ceil(32) * 32;
            let address = match b.address {
                Some(a) => a as u64,
                None => next.div_ceil(4096) * 4096,
            };
            let end = address + per_bank;
            // Bank 1 GiB: the buffer must stay in its bank.
            if end > 1 << 30 {
                return Err(arg(format!(
                    "buffer {}: {per_bank} bytes per bank at {address:#x} run past a 1 GiB bank",
                    b.name
                )));
            }
            next = next.max(end);
            (address, end)
        };
        if let Some(i) = ranges
            .iter()
            .position(|&(o_l1, a, e)| o_l1 == l1 && address < e && a < end)
        {
            return Err(arg(format!(
                "buffer {}: overlaps buffer {} in the banks",
                b.name, out[i].name
            )));
        }
        ranges.push((l1, address, end));
        out.push(Placed {
            name: b.name.clone(),
            l1,
            address: address as u32,
            page_size: page as u32,
            bytes,
        });
    }
    Ok(out)
}

pub(super) fn resolve_args(
    args: &[Arg],
    buffers: &[Placed],
    arch: Arch,
    what: &str,
) -> Result<Vec<u32>> {
    args.iter()
        .map(|a| match a {
            Arg::Word(w) => Ok(*w),
            Arg::Text(t) => match t.strip_prefix('@') {
                Some(core) if core.starts_with("x:") || core.starts_with("y:") => {
                    noc_coordinate(&core[..1], &core[2..], arch)
                        .map_err(|e| arg(format!("{what}: {t:?}: {e}")))
                }
                Some(name) => buffers
                    .iter()
                    .find(|b| b.name == name)
                    .map(|b| b.address)
                    .ok_or_else(|| arg(format!("{what}: {t:?}: no buffer named {name}"))),
                None => parse_word(t).ok_or_else(|| {
                    arg(format!(
                        "{what}: {t:?} is neither a word, @BUFFER, nor @x:X,Y / @y:X,Y"
                    ))
                }),
            },
        })
        .collect()
}

/// `@x:X,Y` / `@y:X,Y`: the NoC 0 coordinate of logical worker X,Y, what tt-metal's host
/// passes a kernel for another core (`worker_core_from_logical_core`; the dataflow API
/// mirrors it for NoC 1).
fn noc_coordinate(axis: &str, core: &str, arch: Arch) -> std::result::Result<u32, String> {
    let (x, y) = core
        .split_once(',')
        .and_then(|(x, y)| Some((x.trim().parse::<u8>().ok()?, y.trim().parse::<u8>().ok()?)))
        .ok_or_else(|| format!("{core:?} is not a core X,Y"))?;
    let noc = arch
        .worker_noc(x, y)
        .ok_or_else(|| format!("core {x},{y} is not a worker of {}", arch.name()))?;
    Ok(u32::from(if axis == "x" { noc.x } else { noc.y }))
}

/// A word in decimal or 0x hex (`_` separators allowed).
fn parse_word(s: &str) -> Option<u32> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ProgramFile {
        toml::from_str(text).expect("parses")
    }

    const KERNEL: &str = "source = \"k.cpp\"\nrisc = \"brisc\"\n";

    #[test]
    fn a_top_level_program_is_one_program_named_after_the_file() {
        let mut f = parse(&format!("cores = [\"0,0\"]\nid = 4\n[[kernel]]\n{KERNEL}"));
        let p = f.take_programs("copy").unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].name.as_deref(), Some("copy"));
        assert_eq!((p[0].id, p[0].kernels.len()), (4, 1));
    }

    #[test]
    fn programs_run_in_file_order_and_unnamed_ones_are_numbered() {
        let text = format!(
            "[[program]]\ncores = [\"0,0\"]\n[[program.kernel]]\n{KERNEL}\
             [[program]]\nname = \"b\"\ncores = [\"1,0\"]\n[[program.kernel]]\n{KERNEL}"
        );
        let p = parse(&text).take_programs("f").unwrap();
        let names: Vec<_> = p.iter().map(|p| p.name.clone().unwrap()).collect();
        assert_eq!(names, ["f-0", "b"]);
        assert_eq!(p[1].cores, ["1,0"]);
    }

    const L1_BUFFER: &str = "[[buffer]]\nname = \"m\"\nbuffer_type = \"l1\"\n\
                             dtype = \"uint32\"\nshape = [32, 32]\n";

    #[test]
    fn l1_buffers_go_down_from_the_top_of_l1_and_stay_above_the_kernel_configuration_buffer() {
        let arch = Arch::WormholeB0;
        let floor = riscv_linker::tt_metal::l1_map(arch).kernel_config.end();
        let two = format!("{L1_BUFFER}{}", L1_BUFFER.replace("\"m\"", "\"n\""));
        let placed = place(&parse(&two), arch, 72, floor).unwrap();
        // One 4096-byte page each, in bank 0 only: 4096 bytes per bank, stacked down.
        let top = arch.l1_size();
        assert_eq!(placed[0].address, top - 4096);
        assert_eq!(placed[1].address, top - 8192);
        assert!(placed.iter().all(|p| p.l1));
        let low = L1_BUFFER.replace("shape", "address = 0x100\nshape");
        let e = place(&parse(&low), arch, 72, floor)
            .unwrap_err()
            .to_string();
        assert!(e.contains("kernel configuration buffer"), "{e}");
        let overlap = format!(
            "{L1_BUFFER}{}",
            low.replace("0x100", &format!("{}", top - 6144))
                .replace("\"m\"", "\"n\"")
        );
        let e = place(&parse(&overlap), arch, 72, floor)
            .unwrap_err()
            .to_string();
        assert!(e.contains("overlaps buffer m"), "{e}");
        let e = place(&parse(&L1_BUFFER.replace("l1", "l2")), arch, 72, floor)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dram or l1"), "{e}");
    }

    #[test]
    fn both_forms_neither_or_two_names_alike_are_refused_naming_why() {
        let both = format!(
            "cores = [\"0,0\"]\n[[program]]\ncores = [\"0,0\"]\n[[program.kernel]]\n{KERNEL}"
        );
        let e = parse(&both).take_programs("f").unwrap_err().to_string();
        assert!(e.contains("not both"), "{e}");
        let e = parse("arch = \"wormhole_b0\"")
            .take_programs("f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no program"), "{e}");
        let twice = format!(
            "[[program]]\nname = \"a\"\ncores = [\"0,0\"]\n[[program.kernel]]\n{KERNEL}\
             [[program]]\nname = \"a\"\ncores = [\"0,0\"]\n[[program.kernel]]\n{KERNEL}"
        );
        let e = parse(&twice).take_programs("f").unwrap_err().to_string();
        assert!(e.contains("two programs are named \"a\""), "{e}");
    }
}
