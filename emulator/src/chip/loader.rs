//! Checking and placing a kernel ELF for one core.
//!
//! An ELF is accepted only if it is a 32-bit little-endian RISC-V executable whose every
//! non-empty `PT_LOAD` segment lies entirely inside one of the core's regions from
//! [`riscv_linker::memory_map`]: the boot word (BRISC), code, data, or local RAM. One of
//! them must cover the reset PC. Errors name the file, the segment and the regions.

use crate::chip::symbols::Symbols;
use crate::error::EmuError;
use object::{Architecture, Endianness, Object, ObjectSegment};
use riscv_linker::{MemoryMap, Region};
use std::fmt::Write;

/// Where a segment's bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Shared L1 (boot word, code or data region).
    L1,
    /// The core's private local RAM.
    LocalRam,
}

/// One loadable segment: `data` at `addr`, followed by `zeros` zero bytes (`.bss`).
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub addr: u32,
    pub data: Vec<u8>,
    pub zeros: u32,
    pub target: Target,
}

/// A checked kernel image: its segments and what is needed to explain a fault in it.
#[derive(Debug)]
pub struct Program {
    /// The name the ELF was loaded under (usually its path).
    pub name: String,
    pub(crate) segments: Vec<Segment>,
    pub(crate) symbols: Symbols,
}

impl Program {
    /// Checks `bytes` against `map` and extracts its segments and symbols.
    pub fn parse(bytes: &[u8], name: &str, map: &MemoryMap) -> Result<Program, EmuError> {
        let err = |reason: String| EmuError::Elf {
            file: name.to_string(),
            reason,
        };
        let file = object::File::parse(bytes)
            .map_err(|e| err(format!("not an ELF file the loader can read: {e}")))?;
        if file.architecture() != Architecture::Riscv32 || file.is_64() {
            return Err(err(format!(
                "wrong machine: {:?} ({}-bit), expected 32-bit RISC-V (riscv32im-unknown-none-elf)",
                file.architecture(),
                if file.is_64() { 64 } else { 32 }
            )));
        }
        if file.endianness() != Endianness::Little {
            return Err(err("big-endian ELF; Tensix cores are little-endian".into()));
        }
        let regions = regions(map);
        let mut segments = Vec::new();
        for (index, seg) in file.segments().enumerate() {
            let (addr, size) = (seg.address(), seg.size());
            if size == 0 {
                continue;
            }
            let data = seg
                .data()
                .map_err(|e| err(format!("segment {index}: cannot read its bytes: {e}")))?;
            let fits = |r: &Region| addr >= r.start as u64 && addr + size <= r.end();
            let Some(&(_, region)) = regions.iter().find(|(_, r)| fits(r)) else {
                return Err(err(format!(
                    "PT_LOAD segment {index} [{addr:#010x}, {:#010x}) lies outside every region of {} on {}: {}",
                    addr + size,
                    map.risc,
                    map.arch,
                    describe(&regions)
                )));
            };
            if data.len() as u64 > size {
                return Err(err(format!(
                    "segment {index}: file size exceeds memory size"
                )));
            }
            let target = if region == map.local_ram {
                Target::LocalRam
            } else {
                Target::L1
            };
            segments.push(Segment {
                addr: addr as u32,
                data: data.to_vec(),
                zeros: (size - data.len() as u64) as u32,
                target,
            });
        }
        let covers = |pc: u32| {
            segments.iter().any(|s| {
                s.target == Target::L1
                    && s.addr <= pc
                    && (pc as u64 + 4) <= s.addr as u64 + s.data.len() as u64
            })
        };
        // tt-metal's host writes BRISC's boot word itself: its firmware needs only its entry.
        let entry = file.entry() as u32;
        let firmware = map.local_init.is_some() && map.code.contains(entry, 4) && covers(entry);
        if !covers(map.reset_pc) && !firmware {
            return Err(err(format!(
                "no loaded code at {}'s reset PC {:#x} (was it linked with the {} linker script?)",
                map.risc,
                map.reset_pc,
                map.risc.ident()
            )));
        }
        Ok(Program {
            name: name.to_string(),
            segments,
            symbols: Symbols::read(&file, bytes),
        })
    }
}

impl Program {
    /// The symbols of a kernel another program placed in memory (tt-metal's firmware runs
    /// the kernels its host writes): nothing is loaded from it, it only names addresses.
    pub fn names_only(bytes: &[u8], name: &str) -> Result<Program, EmuError> {
        let file = object::File::parse(bytes).map_err(|e| EmuError::Elf {
            file: name.to_string(),
            reason: format!("not an ELF file the loader can read: {e}"),
        })?;
        Ok(Program {
            name: name.to_string(),
            segments: Vec::new(),
            symbols: Symbols::read(&file, bytes),
        })
    }

    /// `file:line` of `addr` from the ELF's DWARF line tables, if it has them.
    pub fn source_line(&self, addr: u32) -> Option<String> {
        self.symbols.line(addr)
    }
}

fn regions(map: &MemoryMap) -> Vec<(&'static str, Region)> {
    let mut v = Vec::new();
    if let Some(b) = map.boot {
        v.push(("boot word", b));
    }
    v.push(("code", map.code));
    if let Some(k) = map.kernel {
        v.push(("kernel", k));
    }
    v.push(("data", map.data));
    v.push(("local RAM", map.local_ram));
    v
}

fn describe(regions: &[(&str, Region)]) -> String {
    let mut s = String::new();
    for (i, (name, r)) in regions.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(s, "{sep}{name} [{:#010x}, {:#010x})", r.start, r.end());
    }
    s
}
