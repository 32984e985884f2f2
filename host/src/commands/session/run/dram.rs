//! `ttprof run`'s kernel inputs and outputs in DRAM (`--dram-in`, `--dram-out`, a manifest's
//! `dram_in`/`dram_out`): interleaved buffers as tt-metal lays them out (page `p` in bank
//! `p % banks`), loaded from files before each launch of an op and written to files after
//! it, with an optional expected file that the output must equal byte for byte.
//!
//! Syntax, one buffer per value: `ADDR=@FILE[,page=N][,tensor=ID]` for an input, and
//! `ADDR=@FILE[,bytes=N][,expect=FILE][,page=N][,tensor=ID]` for an output (its length is
//! `bytes`, else the expected file's). `ADDR` is the bank address; `page` the page size
//! (4096 by default: one 32x32 tile of 4-byte values); `tensor` the tensor's id in the op
//! log, so that an op whose input names another op's output id follows it in the op graph.
//! `ADDR,tensor=ID` without a file names a buffer that stays in DRAM between ops (an earlier
//! op's output read by a later op): nothing is loaded or written, the op graph gets its edge.
//!
//! A buffer may say what it holds, as tt-metal's tensors do, for the op report's columns:
//! `dtype=bfloat16|float32|uint32|uint16|int32`, `shape=AxBxCxD` (one to four dimensions)
//! and `layout=tile|row_major` (tile by default with a shape: the last two dimensions in
//! 32x32 tiles, multiples of 32). With a shape the file must hold exactly its bytes, and the
//! page is a tile's (a row's in row-major) unless `page=` says otherwise. A file whose
//! length is not a whole number of pages is refused, naming both.

use super::spec::{parse_u32, u32_problem};
use crate::error::{Error, Result};
use crate::oplog::TensorDesc;
use crate::session::Session;
use std::path::{Path, PathBuf};

/// Page size of a DRAM buffer unless `page=` says otherwise.
pub(crate) const DEFAULT_PAGE: u32 = 4096;
/// The largest file a DRAM input or output may be (a buffer bigger than this is not a test).
const MAX_BYTES: u64 = 1 << 30;

/// A DRAM buffer of an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Buffer {
    /// Bank address (the same offset in every bank).
    pub(crate) addr: u32,
    /// Page size in bytes.
    pub(crate) page: u32,
    /// The file it is loaded from (input) or written to (output); `None`: a tensor another op
    /// left in DRAM (an input) or leaves there (an output), named for the op graph only.
    pub(crate) file: Option<PathBuf>,
    /// Output: bytes to read back (`None`: the expected file's length).
    pub(crate) bytes: Option<u32>,
    /// Output: the file it must equal.
    pub(crate) expect: Option<PathBuf>,
    /// The tensor's id in the op log.
    pub(crate) tensor: Option<u64>,
    /// What it holds (`dtype=`, `shape=`, `layout=`), when given.
    pub(crate) kind: Option<TensorKind>,
}

/// A DRAM buffer's element type, shape and layout, as tt-metal's tensors have them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TensorKind {
    /// `bfloat16`, `float32`, `uint32`, `uint16` or `int32`.
    pub(crate) dtype: String,
    /// Four dimensions (leading ones added).
    pub(crate) shape: [u32; 4],
    /// Tiled 32x32 (`false`: row-major).
    pub(crate) tiled: bool,
}

impl TensorKind {
    /// Bytes of one element.
    fn element(&self) -> u32 {
        match self.dtype.as_str() {
            "bfloat16" | "uint16" => 2,
            _ => 4,
        }
    }

    /// Bytes of the whole tensor (saturating: four 32-bit dimensions can pass 2^64).
    pub(crate) fn bytes(&self) -> u64 {
        self.shape
            .iter()
            .fold(self.element() as u64, |n, &d| n.saturating_mul(d as u64))
    }

    /// The page tt-metal gives it: a 32x32 tile, or a row.
    fn page(&self) -> u32 {
        if self.tiled {
            32 * 32 * self.element()
        } else {
            self.shape[3].saturating_mul(self.element())
        }
    }
}

/// Parses `ADDR=@FILE[,key=value..]`; `output` allows `bytes` and `expect`. Paths are taken
/// relative to `base` (a manifest's directory).
pub(crate) fn parse(spec: &str, output: bool, base: &Path) -> Result<Buffer> {
    let flag = if output { "--dram-out" } else { "--dram-in" };
    let usage = if output {
        "ADDR=@FILE[,bytes=N][,expect=FILE][,page=N][,tensor=ID][,dtype=T,shape=AxBxCxD[,layout=tile|row_major]]"
    } else {
        "ADDR=@FILE[,page=N][,tensor=ID][,dtype=T,shape=AxBxCxD[,layout=tile|row_major]]"
    };
    let bad = |why: String| Error::Argument {
        what: format!("{flag} {spec:?}: {why} (expected {usage})"),
    };
    // `ADDR=@FILE,..`, or `ADDR,tensor=ID` for a buffer another op left in DRAM (no file).
    let (addr, file, rest) = match spec.split_once("=@") {
        Some((addr, rest)) => {
            let (file, rest) = rest.split_once(',').unwrap_or((rest, ""));
            (
                addr,
                Some(file)
                    .filter(|f| !f.is_empty())
                    .ok_or_else(|| bad("no file after '=@'".into()))?,
                rest,
            )
        }
        None => {
            let (addr, rest) = spec.split_once(',').unwrap_or((spec, ""));
            if !rest.contains("tensor=")
                || output && (rest.contains("bytes=") || rest.contains("expect="))
            {
                return Err(bad(
                    "no '=@FILE': only a tensor=ID of a buffer already in DRAM goes without a file"
                        .into(),
                ));
            }
            (addr, "", rest)
        }
    };
    let addr = parse_u32(addr)
        .ok_or_else(|| bad(format!("the address {addr:?} {}", u32_problem(addr))))?;
    let file = (!file.is_empty()).then(|| base.join(file));
    let parts = rest.split(',').filter(|p| !p.is_empty());
    let mut b = Buffer {
        addr,
        page: DEFAULT_PAGE,
        file,
        bytes: None,
        expect: None,
        tensor: None,
        kind: None,
    };
    let (mut page, mut dtype, mut shape, mut layout) = (None, None, None, None);
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("{part:?} is not KEY=VALUE")))?;
        let number = || {
            parse_u32(value).ok_or_else(|| bad(format!("{key}={value:?} {}", u32_problem(value))))
        };
        match key.trim() {
            "page" => page = Some(number()?),
            "dtype" => match value.trim() {
                d @ ("bfloat16" | "float32" | "uint32" | "uint16" | "int32") => {
                    dtype = Some(d.to_string())
                }
                d => {
                    return Err(bad(format!(
                        "dtype={d:?}: bfloat16, float32, uint32, uint16 or int32"
                    )))
                }
            },
            "shape" => {
                let dims: Option<Vec<u32>> = value
                    .split('x')
                    .map(|d| d.trim().parse::<u32>().ok().filter(|&d| d > 0))
                    .collect();
                match dims {
                    Some(d) if (1..=4).contains(&d.len()) => shape = Some(d),
                    _ => {
                        return Err(bad(format!(
                            "shape={value:?}: one to four positive dimensions, AxBxCxD"
                        )))
                    }
                }
            }
            "layout" => match value.trim() {
                "tile" => layout = Some(true),
                "row_major" => layout = Some(false),
                l => return Err(bad(format!("layout={l:?}: tile or row_major"))),
            },
            "tensor" => b.tensor = Some(number()? as u64),
            "bytes" if output => b.bytes = Some(number()?),
            "expect" if output => b.expect = Some(base.join(value)),
            other => return Err(bad(format!("unknown key {other:?}"))),
        }
    }
    match (dtype, shape) {
        (Some(dtype), Some(dims)) => {
            let mut s = [1u32; 4];
            s[4 - dims.len()..].copy_from_slice(&dims);
            let tiled = layout.unwrap_or(true);
            if tiled && (s[2] % 32 != 0 || s[3] % 32 != 0) {
                return Err(bad(format!(
                    "shape {}: a tiled tensor's last two dimensions are multiples of 32 \
                     (layout=row_major for another shape)",
                    dims.iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                )));
            }
            let kind = TensorKind {
                dtype,
                shape: s,
                tiled,
            };
            if kind.bytes() > MAX_BYTES {
                return Err(bad(format!(
                    "a tensor of {} bytes is over the cap of {MAX_BYTES} bytes (1 GiB)",
                    kind.bytes()
                )));
            }
            b.page = kind.page();
            b.kind = Some(kind);
        }
        (None, None) if layout.is_none() => {}
        _ => {
            return Err(bad(
                "dtype= and shape= go together (layout= with them)".into()
            ))
        }
    }
    if let Some(p) = page {
        b.page = p;
    }
    // Read back whole: the same cap as an input's file (checked here, so a manifest's
    // strings are held to it too).
    if let Some(n) = b.bytes.filter(|&n| n as u64 > MAX_BYTES) {
        return Err(bad(format!(
            "bytes={n} is over the cap of {MAX_BYTES} bytes (1 GiB) a DRAM output may be"
        )));
    }
    if b.page == 0 || !b.page.is_multiple_of(4) {
        return Err(bad(format!(
            "page={} must be a non-zero multiple of 4",
            b.page
        )));
    }
    if output && b.file.is_some() && b.bytes.is_none() && b.expect.is_none() {
        return Err(bad(
            "an output needs its length: bytes=N, or expect=FILE".into()
        ));
    }
    Ok(b)
}

impl Buffer {
    /// The op report's description of it: its `dtype`, `shape` and `layout` when given,
    /// else 4-byte values in one row; in DRAM.
    pub(crate) fn tensor_desc(&self, bytes: u64) -> Option<TensorDesc> {
        let id = self.tensor?;
        let (shape, layout, dtype) = match &self.kind {
            Some(k) => (
                k.shape,
                if k.tiled { "TILE" } else { "ROW_MAJOR" },
                k.dtype.to_ascii_uppercase(),
            ),
            None => (
                [1, 1, 1, bytes.div_ceil(4) as u32],
                "ROW_MAJOR",
                "UINT32".into(),
            ),
        };
        Some(TensorDesc {
            id: Some(id),
            shape,
            layout: layout.into(),
            dtype,
            memory: "DEV_0_DRAM_INTERLEAVED".into(),
        })
    }

    /// Checks a file of `len` bytes against the buffer: whole pages, and the tensor's bytes
    /// when it has a shape.
    fn check_len(&self, file: &Path, len: u64) -> Result<()> {
        let what = if let Some(k) = self.kind.as_ref().filter(|k| k.bytes() != len) {
            format!(
                "{len} bytes, but the tensor ({} {:?}) at DRAM {:#x} holds {}",
                k.dtype,
                k.shape,
                self.addr,
                k.bytes()
            )
        } else if !len.is_multiple_of(self.page as u64) {
            format!(
                "{len} bytes: not a whole number of the buffer's {}-byte pages (DRAM {:#x}; \
                 page= sets the page size)",
                self.page, self.addr
            )
        } else {
            return Ok(());
        };
        Err(Error::BadFile {
            path: file.to_path_buf(),
            what,
        })
    }

    /// The bytes of an input's file, or that an output reads back (0 without a file).
    pub(crate) fn len(&self, output: bool) -> Result<u64> {
        let Some(file) = &self.file else { return Ok(0) };
        if !output {
            return std::fs::metadata(file)
                .map(|m| m.len())
                .map_err(|e| Error::io(file, "read a DRAM input", e));
        }
        match (self.bytes, &self.expect) {
            (Some(n), _) => Ok(n as u64),
            (None, Some(e)) => std::fs::metadata(e)
                .map(|m| m.len())
                .map_err(|err| Error::io(e, "read the expected output", err)),
            (None, None) => Err(Error::Argument {
                what: format!("DRAM output {:#x}: no length", self.addr),
            }),
        }
    }

    /// What can be checked of the buffer before anything is created or run, so that no
    /// launch (and no output folder) is spent on a buffer its launch would refuse: an
    /// input's file is a regular file of at most the cap, of whole pages (the tensor's bytes
    /// with a shape); an output's expected file likewise; and every page of the buffer lies
    /// inside its DRAM channel on `arch`. [`Buffer::load`] and [`Buffer::store`] check again
    /// (the files may change meanwhile).
    pub(crate) fn check(&self, arch: riscv_linker::Arch, output: bool) -> Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let (named, kind, op) = match (output, &self.expect) {
            (false, _) => (file, "a DRAM input file", "read DRAM input"),
            (true, Some(expect)) => (expect, "an expected output file", "read expected output"),
            (true, None) => (file, "", ""),
        };
        let len = if kind.is_empty() {
            self.len(true)?
        } else {
            let meta = std::fs::metadata(named).map_err(|e| Error::io(named, op, e))?;
            crate::files::check_regular(named, kind, meta.clone())?;
            if meta.len() > MAX_BYTES {
                return Err(Error::BadFile {
                    path: named.clone(),
                    what: format!(
                        "is {} bytes: expected {kind} of at most {MAX_BYTES} bytes",
                        meta.len()
                    ),
                });
            }
            match self.bytes.filter(|_| output) {
                Some(n) => n as u64,
                None => meta.len(),
            }
        };
        self.check_len(named, len)?;
        self.check_fits(arch, len, output)
    }

    /// Every page of `len` bytes of the buffer inside its DRAM channel (pages go to the
    /// banks in turn, so each bank's last page is the one furthest into its channel).
    fn check_fits(&self, arch: riscv_linker::Arch, len: u64, output: bool) -> Result<()> {
        use riscv_linker::noc::dram as layout;
        let pages = len.div_ceil(self.page as u64);
        let banks = layout::banks(arch) as u64;
        let size = layout::channel_size(arch);
        for p in pages.saturating_sub(banks)..pages {
            let Ok(page) = u32::try_from(p) else {
                continue;
            };
            let bytes = (len - p * self.page as u64).min(self.page as u64);
            let (bank, at) = layout::interleaved_page(arch, self.addr, self.page, page);
            if at + bytes > size {
                return Err(Error::Address {
                    what: format!(
                        "DRAM {} at bank address {:#x} ({}, {len} bytes in {}-byte pages): page {p} lands at {at:#x} \
                         of DRAM channel {}, past its end ({size:#x} bytes on {arch}); choose a lower address",
                        if output { "output" } else { "input" },
                        self.addr,
                        self.file.as_deref().unwrap_or(Path::new("")).display(),
                        self.page,
                        bank.channel,
                    ),
                });
            }
        }
        Ok(())
    }

    /// Loads an input file into DRAM.
    pub(crate) fn load(&self, session: &mut Session) -> Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let data = crate::files::read_regular(
            file,
            "a DRAM input file",
            "read DRAM input",
            MAX_BYTES,
            &session.config().inputs,
        )?;
        self.check_len(file, data.len() as u64)?;
        session.write_dram_interleaved(self.addr, self.page, &data)
    }

    /// Reads an output back, writes its file (chip 0's) and checks every chip's against the
    /// expected file: a message for each chip whose output differs.
    pub(crate) fn store(&self, session: &Session, op: &str, run_id: u32) -> Result<Vec<String>> {
        let Some(file) = &self.file else {
            return Ok(Vec::new());
        };
        let len = self.len(true)?;
        self.check_len(self.expect.as_deref().unwrap_or(file), len)?;
        let got = session.read_dram_interleaved(0, self.addr, self.page, len as usize)?;
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(dir, "create the output's directory", e))?;
        }
        std::fs::write(file, &got).map_err(|e| Error::io(file, "write a DRAM output", e))?;
        let Some(expect) = &self.expect else {
            return Ok(Vec::new());
        };
        let want = crate::files::read_regular(
            expect,
            "an expected output file",
            "read expected output",
            MAX_BYTES,
            &session.config().inputs,
        )?;
        let chips = session.config().chips;
        let mut differ = Vec::new();
        for chip in 0..chips {
            let got = match chip {
                0 => got.clone(),
                _ => session.read_dram_interleaved(chip, self.addr, self.page, len as usize)?,
            };
            let Some(at) = first_difference(&got, &want) else {
                continue;
            };
            let byte = |v: &[u8]| {
                v.get(at)
                    .map_or("nothing".to_string(), |b| format!("{b:#04x}"))
            };
            let on = if chips > 1 {
                format!(" of chip {chip}")
            } else {
                String::new()
            };
            differ.push(format!(
                "op {op:?} (run {run_id}): DRAM output at {:#x}{on} ({}) differs from {} at byte offset {at} ({at:#x}): {} where {} was expected ({} of {} bytes, {} expected)",
                self.addr,
                file.display(),
                expect.display(),
                byte(&got),
                byte(&want),
                got.iter().zip(&want).filter(|(a, b)| a != b).count() + got.len().abs_diff(want.len()),
                got.len(),
                want.len()
            ));
        }
        Ok(differ)
    }
}

/// The first offset where `a` and `b` differ, a missing byte included.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of(r: Result<Buffer>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn buffers_parse_and_bad_ones_say_what_was_expected() {
        let base = Path::new("m");
        let b = parse("0x1000000=@a.bin,tensor=3", false, base).unwrap();
        assert_eq!(
            (b.addr, b.page, b.file.as_deref(), b.tensor),
            (0x100_0000, 4096, Some(Path::new("m/a.bin")), Some(3))
        );
        let left = parse("0x3000000,tensor=3", false, base).unwrap();
        assert_eq!((left.file, left.tensor), (None, Some(3)));
        assert!(err_of(parse("0x3000000", true, base)).contains("only a tensor=ID"));
        assert!(err_of(parse("0x3000000,tensor=3,expect=w.bin", true, base))
            .contains("only a tensor=ID"));
        let o = parse("4096=@out/o.bin,expect=w.bin,page=2048", true, base).unwrap();
        assert_eq!(
            (o.page, o.expect.as_deref(), o.bytes),
            (2048, Some(Path::new("m/w.bin")), None)
        );
        let err = |s: &str, out| parse(s, out, base).unwrap_err().to_string();
        assert!(err("0x10=@a.bin,bytes=4", false).contains("unknown key \"bytes\""));
        assert!(err("0x10=@o.bin", true).contains("bytes=N, or expect=FILE"));
        assert!(err("0x10=a.bin", false).contains("no '=@FILE'"));
        assert!(err("zz=@a.bin", false).contains("address \"zz\" is not a number"));
        // Too large for 32 bits: out of range, not "not a number" (issue 41).
        assert!(err("0x10=@o.bin,bytes=0x1_0000_0000", true)
            .contains("bytes=\"0x1_0000_0000\" is out of range"));
        assert!(err("0x10=@a.bin,page=3", false).contains("multiple of 4"));
        assert_eq!(first_difference(b"abc", b"abd"), Some(2));
        assert_eq!(first_difference(b"ab", b"abc"), Some(2));
        assert_eq!(first_difference(b"abc", b"abc"), None);
    }

    /// Issue 41 (High 5): `--dram-out ADDR=@F,bytes=N` allocated N bytes at once with no
    /// cap (an abort at 4 GiB) while `--dram-in` is capped at 1 GiB; a manifest takes the
    /// same strings. The cap is the same, the error names the option, the value and the cap.
    #[test]
    fn an_output_larger_than_the_cap_is_refused_when_parsed() {
        let base = Path::new("m");
        let e = parse("0x10=@o.bin,bytes=4294967295", true, base)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--dram-out"), "{e}");
        assert!(e.contains("bytes=4294967295"), "{e}");
        assert!(e.contains("1073741824"), "{e}");
        let ok = parse("0x10=@o.bin,bytes=1073741824", true, base).unwrap();
        assert_eq!(ok.bytes, Some(1 << 30));
    }

    /// Issue 40 item 5: a buffer says what it holds, so the op report's columns are right,
    /// and a file that is not whole pages (or not the tensor's bytes) is refused.
    #[test]
    fn a_typed_buffer_describes_its_tensor_and_refuses_a_file_of_another_size() {
        let base = Path::new("m");
        let b = parse(
            "0x100=@a.bin,tensor=7,dtype=bfloat16,shape=1x1x64x64",
            false,
            base,
        )
        .unwrap();
        assert_eq!(b.page, 2048, "a bfloat16 tile");
        let d = b.tensor_desc(8192).unwrap();
        assert_eq!(
            (d.shape, d.layout.as_str(), d.dtype.as_str()),
            ([1, 1, 64, 64], "TILE", "BFLOAT16")
        );
        let rm = parse(
            "0x100=@a.bin,tensor=1,dtype=uint32,shape=4x64,layout=row_major",
            false,
            base,
        )
        .unwrap();
        assert_eq!(rm.page, 256, "a row of 64 uint32");
        assert_eq!(rm.tensor_desc(1024).unwrap().layout, "ROW_MAJOR");
        assert!(b.check_len(Path::new("a.bin"), 8192).is_ok());
        let e = b
            .check_len(Path::new("a.bin"), 4096)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.bin") && e.contains("holds 8192"), "{e}");
        let plain = parse("0x100=@a.bin,page=2048", false, base).unwrap();
        let e = plain
            .check_len(Path::new("a.bin"), 3000)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a whole number of the buffer's 2048-byte pages"),
            "{e}"
        );
        let err = |s: &str| parse(s, false, base).unwrap_err().to_string();
        assert!(err("0x1=@a,dtype=fp8,shape=32x32").contains("bfloat16, float32"));
        assert!(err("0x1=@a,dtype=uint32").contains("go together"));
        assert!(err("0x1=@a,dtype=uint32,shape=3x5").contains("multiples of 32"));
        assert!(err("0x1=@a,dtype=uint32,shape=0x5").contains("positive dimensions"));
        // Four dimensions whose bytes pass 2^64 (once a multiply overflow: a panic with
        // overflow checks, else a wrapped size under the cap) are over the cap.
        let e = err("0x0=@a,dtype=float32,shape=65536x65536x65536x65536");
        assert!(e.contains("over the cap"), "{e}");
    }
}
