//! Naming pcs: function, file and line with the inlined frames, from a kernel's DWARF
//! (`addr2line` over `gimli`), the ELF symbol table where a pc has no debug info.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One frame of a pc: a function and the source line in it (for an outer frame, the line
/// of the call the inner frame was inlined at).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Frame {
    /// Demangled function name (`?` when unknown).
    pub function: String,
    /// Source file (as the DWARF names it); empty when unknown.
    pub file: String,
    /// 0 when unknown.
    pub line: u32,
}

impl Frame {
    /// `file:line`, or `?` when unknown.
    pub(super) fn location(&self) -> String {
        if self.file.is_empty() {
            "?".into()
        } else {
            format!("{}:{}", short(&self.file), self.line)
        }
    }
}

/// The last two components of a path (enough to tell files apart in a listing).
pub(super) fn short(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// What a pc is: its frames, outermost first (the last is where the instruction is).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PcInfo {
    /// Outermost first.
    pub frames: Vec<Frame>,
}

impl PcInfo {
    /// The line a reader looks for: the innermost frame outside Rust's `core`, `alloc`
    /// and `std` (`core::ptr::read_volatile` inlined into `Cb::wait_front` is charged to the
    /// line of `wait_front` that called it), else the innermost frame.
    pub(super) fn source(&self) -> &Frame {
        self.frames
            .iter()
            .rev()
            .find(|f| !f.file.is_empty() && !in_toolchain(&f.file))
            .unwrap_or_else(|| self.leaf())
    }

    /// The innermost frame (the instruction's own function and line).
    pub(crate) fn leaf(&self) -> &Frame {
        static UNKNOWN: Frame = Frame {
            function: String::new(),
            file: String::new(),
            line: 0,
        };
        self.frames.last().unwrap_or(&UNKNOWN)
    }
}

/// Whether `file` is a source of Rust's `core`, `alloc` or `std` (small helpers such as
/// `read_volatile` or `wrapping_add`, seen through to their caller).
fn in_toolchain(file: &str) -> bool {
    ["/library/core/", "/library/alloc/", "/library/std/"]
        .iter()
        .any(|d| file.contains(d))
}

/// Names of the pcs of every kernel ELF.
#[derive(Default)]
pub(super) struct Names {
    by_elf: HashMap<PathBuf, HashMap<u32, PcInfo>>,
}

impl Names {
    /// Names `pcs` of `elf`.
    pub(super) fn load(&mut self, elf: &Path, pcs: impl Iterator<Item = u32>) -> Result<()> {
        if self.by_elf.contains_key(elf) {
            let have = &self.by_elf[elf];
            let missing: Vec<u32> = pcs.filter(|p| !have.contains_key(p)).collect();
            if missing.is_empty() {
                return Ok(());
            }
            return self.name(elf, missing.into_iter());
        }
        self.name(elf, pcs)
    }

    fn name(&mut self, elf: &Path, pcs: impl Iterator<Item = u32>) -> Result<()> {
        let loader = addr2line::Loader::new(elf).map_err(|e| Error::Elf {
            path: elf.to_path_buf(),
            what: format!("cannot read its debug info for --lines: {e}"),
        })?;
        let map = self.by_elf.entry(elf.to_path_buf()).or_default();
        for pc in pcs {
            map.insert(pc, describe(&loader, pc));
        }
        Ok(())
    }

    /// Names `pc` of `elf` as given (tests).
    #[cfg(test)]
    pub(super) fn insert(&mut self, elf: &Path, pc: u32, info: PcInfo) {
        self.by_elf
            .entry(elf.to_path_buf())
            .or_default()
            .insert(pc, info);
    }

    /// The name of `pc` in `elf` (after [`Names::load`]).
    pub(super) fn get(&self, elf: &Path, pc: u32) -> PcInfo {
        self.by_elf
            .get(elf)
            .and_then(|m| m.get(&pc))
            .cloned()
            .unwrap_or_default()
    }
}

fn describe(loader: &addr2line::Loader, pc: u32) -> PcInfo {
    let mut frames = Vec::new();
    if let Ok(mut it) = loader.find_frames(pc as u64) {
        while let Ok(Some(f)) = it.next() {
            let function = f
                .function
                .as_ref()
                .and_then(|n| n.demangle().ok().map(|s| s.into_owned()))
                .unwrap_or_default();
            let (file, line) = f.location.as_ref().map_or((String::new(), 0), |l| {
                (l.file.unwrap_or("").to_string(), l.line.unwrap_or(0))
            });
            frames.push(Frame {
                function: strip_hash(&function),
                file,
                line,
            });
        }
    }
    let symbol = loader
        .find_symbol(pc as u64)
        .map(|s| strip_hash(&addr2line::demangle_auto(s.into(), None)));
    if frames.is_empty() {
        frames.push(Frame {
            function: symbol.unwrap_or_else(|| format!("{pc:#x}")),
            file: String::new(),
            line: 0,
        });
    } else if let Some(s) = symbol {
        // The outermost frame without a DWARF name (hand-written assembly): the symbol.
        if let Some(last) = frames.last_mut() {
            if last.function.is_empty() {
                last.function = s;
            }
        }
    }
    for f in &mut frames {
        if f.function.is_empty() {
            f.function = "?".into();
        }
    }
    frames.reverse();
    PcInfo { frames }
}

/// Drops a Rust symbol's trailing `::h0123456789abcdef`.
fn strip_hash(name: &str) -> String {
    match name.rfind("::h") {
        Some(i) if name.len() - i == 19 && name[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            name[..i].to_string()
        }
        _ => name.to_string(),
    }
}
