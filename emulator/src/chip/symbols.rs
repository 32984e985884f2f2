//! Naming an address of a kernel: the nearest ELF symbol (demangled) and, when the ELF
//! carries DWARF line tables, the source file and line.
//!
//! Symbols are read when a kernel is loaded; line tables only when a fault needs them.

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::borrow::Cow;
use std::sync::Arc;

#[derive(Clone, Debug)]
struct Sym {
    addr: u32,
    size: u32,
    name: String,
}

/// The symbol table of one kernel ELF (and the ELF itself, for line lookups).
#[derive(Clone, Debug, Default)]
pub(crate) struct Symbols {
    /// Function symbols sorted by address.
    syms: Vec<Sym>,
    elf: Arc<[u8]>,
}

impl Symbols {
    pub fn read(file: &object::File<'_>, bytes: &[u8]) -> Symbols {
        let mut syms: Vec<Sym> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some(Sym {
                    addr: s.address() as u32,
                    size: s.size() as u32,
                    name: demangle(name),
                })
            })
            .collect();
        syms.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        Symbols {
            syms,
            elf: Arc::from(bytes),
        }
    }

    /// `name+0xoffset` of the function symbol at or below `addr`; a symbol whose known size
    /// ends before `addr` is still used when nothing better exists (hand-written assembly
    /// often has no sizes).
    pub fn describe(&self, addr: u32) -> Option<String> {
        let n = self.syms.partition_point(|s| s.addr <= addr);
        let s = self.syms[..n]
            .iter()
            .rev()
            .find(|s| s.size == 0 || addr < s.addr + s.size)
            .or_else(|| self.syms[..n].last())?;
        Some(if addr == s.addr {
            s.name.clone()
        } else {
            format!("{}+{:#x}", s.name, addr - s.addr)
        })
    }

    /// `file:line` of `addr` from the DWARF line tables, if the ELF has them.
    pub fn line(&self, addr: u32) -> Option<String> {
        line_of(&self.elf, addr as u64)
    }
}

/// A symbol's name as its source spells it: Rust's (legacy and v0 manglings, without the
/// hash) and C++'s (the Itanium ABI GCC uses) demangled; anything else as it is.
fn demangle(name: &str) -> String {
    if let Ok(rust) = rustc_demangle::try_demangle(name) {
        return format!("{rust:#}");
    }
    if name.starts_with("_Z") {
        if let Some(cxx) = cpp_demangle::Symbol::new(name)
            .ok()
            .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        {
            return cxx;
        }
    }
    name.to_string()
}

fn line_of(bytes: &[u8], addr: u64) -> Option<String> {
    let file = object::File::parse(bytes).ok()?;
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load).ok()?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, gimli::LittleEndian));
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut rows = program.rows();
        let mut prev: Option<(u64, u64, u64)> = None; // (address, file index, line)
        while let Ok(Some((lp, row))) = rows.next_row() {
            if let Some((start, file_index, line)) = prev {
                if start <= addr && addr < row.address() && line != 0 {
                    let entry = lp.file(file_index)?;
                    let name = dwarf.attr_string(&unit, entry.path_name()).ok()?;
                    let mut path = name.to_string_lossy().into_owned();
                    if !path.starts_with('/') {
                        if let Some(dir) = entry
                            .directory(lp)
                            .and_then(|d| dwarf.attr_string(&unit, d).ok())
                        {
                            path = format!("{}/{path}", dir.to_string_lossy());
                        }
                    }
                    return Some(format!("{path}:{line}"));
                }
            }
            prev = if row.end_sequence() {
                None
            } else {
                Some((
                    row.address(),
                    row.file_index(),
                    row.line().map_or(0, |l| l.get()),
                ))
            };
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn rust_and_cxx_symbols_are_demangled() {
        assert_eq!(super::demangle("_Z11kernel_mainv"), "kernel_main()");
        assert_eq!(
            super::demangle("_ZN7ckernel4sfpu8relu_minEj"),
            "ckernel::sfpu::relu_min(unsigned int)"
        );
        assert_eq!(
            super::demangle("_ZN4core9panicking5panic17h0123456789abcdefE"),
            "core::panicking::panic"
        );
        assert_eq!(super::demangle("__ttprof_zone_end"), "__ttprof_zone_end");
    }
}
