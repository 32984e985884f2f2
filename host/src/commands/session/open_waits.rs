//! What a stopped core was waiting in: for each core of a deadlock or timeout report, the
//! typed waits (`wait!`, `TTPROF_WAIT`) it held open at its pc, by name and resource.
//!
//! A wait's guard is a local declared on the wait's line, the line its site records; the
//! kernel's DWARF says which locals are in scope at the pc ([`crate::elf::scopes`]). A
//! kernel without DWARF, or whose scopes the optimiser merged, gets no note: never a guess.

use crate::sites::SiteTable;
use riscv_linker::{NocCoord, Risc};
use std::path::Path;

/// Appends to each report line of `fault` about a core of `tiles` running one of `kernels`
/// (RISC, ELF bytes) the waits it held open.
pub(super) fn annotate(
    fault: &mut ttprof_emu::Fault,
    tiles: &[NocCoord],
    kernels: &[(Risc, &[u8])],
) {
    let mut tables: Vec<(Risc, Option<std::sync::Arc<SiteTable>>)> = Vec::new();
    for other in &mut fault.others {
        let Some(core) = other.core else { continue };
        if !tiles.contains(&core.tile) {
            continue;
        }
        let Some(&(risc, elf)) = kernels.iter().find(|(r, _)| *r == core.risc) else {
            continue;
        };
        let sites = match tables.iter().find(|(r, _)| *r == risc) {
            Some((_, t)) => t.clone(),
            None => {
                let t = crate::elf::KernelElf::parse(Path::new(risc.name()), elf)
                    .ok()
                    .map(|k| k.sites);
                tables.push((risc, t.clone()));
                t
            }
        };
        let Some(sites) = sites else { continue };
        let waits = open_waits(&sites, elf, core.pc);
        if !waits.is_empty() {
            other
                .text
                .push_str(&format!("; in {}", waits.join(", in ")));
        }
    }
}

/// The typed waits open at `pc`: `wait "NAME" on RESOURCE (FILE:LINE)`, outermost first.
fn open_waits(sites: &SiteTable, elf: &[u8], pc: u32) -> Vec<String> {
    let locals = crate::elf::scopes::in_scope(elf, u64::from(pc));
    let mut out = Vec::new();
    for l in &locals {
        for (_, m) in sites.iter() {
            let Some(wait) = m.wait else { continue };
            if m.line == l.line && same_file(&m.file, &l.file) {
                let w = format!("wait {:?} on {wait} ({}:{})", m.name, m.file, m.line);
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Whether two spellings of a source path name the same file: equal, or one ends with the
/// other at a path separator (the site's file is as the compiler saw it, often relative; the
/// line table's has its directory).
fn same_file(a: &str, b: &str) -> bool {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    long == short
        || (!short.is_empty()
            && long.ends_with(short)
            && long[..long.len() - short.len()].ends_with('/'))
}

#[cfg(test)]
mod tests {
    use super::same_file;

    #[test]
    fn a_path_matches_its_relative_spelling_at_a_separator_only() {
        assert!(same_file("/k/src/main.rs", "src/main.rs"));
        assert!(same_file("src/main.rs", "/k/src/main.rs"));
        assert!(same_file("reader.c", "reader.c"));
        assert!(!same_file("/k/src/xmain.rs", "main.rs"));
        assert!(!same_file("/k/a.c", "b.c"));
    }
}
