//! What a stopped core was waiting in: for each core of a deadlock or timeout report, the
//! typed waits (`wait!`, `TTPROF_WAIT`) it held open at its pc, by name and resource.
//!
//! A wait's guard is a local declared on the wait's line, the line its site records; the
//! kernel's DWARF says which locals are in scope at the pc ([`crate::elf::scopes`]). A
//! kernel without DWARF, or whose scopes the optimiser merged, gets no note: never a guess.

use crate::sites::{SiteTable, Wait};
use riscv_linker::{NocCoord, Risc};
use std::path::Path;

/// A typed wait a stopped core holds open: its site.
#[derive(Clone, Debug)]
pub(super) struct OpenWait {
    /// The wait zone's name.
    pub(super) name: String,
    /// What it waits on.
    pub(super) wait: Wait,
    /// Its source file, as its site records it.
    pub(super) file: String,
    /// Its line (where its guard is declared).
    pub(super) line: u32,
}

impl OpenWait {
    /// `wait "NAME" on RESOURCE (FILE:LINE)`, as the report's lines say it.
    fn text(&self) -> String {
        format!(
            "wait {:?} on {} ({}:{})",
            self.name, self.wait, self.file, self.line
        )
    }
}

/// One core a fault stopped, as its report line says, with the waits it held open.
#[derive(Clone, Debug)]
pub(super) struct StoppedCore {
    /// Its tile.
    pub(super) tile: NocCoord,
    /// The core.
    pub(super) risc: Risc,
    /// Where it stopped.
    pub(super) pc: u32,
    /// Its line of the report (without the open waits appended to it).
    pub(super) text: String,
    /// The typed waits open at its pc, outermost first.
    pub(super) waits: Vec<OpenWait>,
}

/// Appends to each report line of `fault` about a core of `tiles` running one of `kernels`
/// (RISC, ELF bytes) the waits it held open; returns every core the report names (for a
/// fault of one core without such lines, that core), each with its open waits, and the
/// report's lines about what is not a core (a Tensix thread and what it waits on).
pub(super) fn annotate(
    fault: &mut ttprof_emu::Fault,
    tiles: &[NocCoord],
    kernels: &[(Risc, &[u8])],
) -> (Vec<StoppedCore>, Vec<String>) {
    let mut tables: Vec<(Risc, Option<std::sync::Arc<SiteTable>>)> = Vec::new();
    let mut waits_at = |risc: Risc, pc: u32| -> Vec<OpenWait> {
        let Some(&(_, elf)) = kernels.iter().find(|(r, _)| *r == risc) else {
            return Vec::new();
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
        sites.map_or_else(Vec::new, |sites| open_waits(&sites, elf, pc))
    };
    let mut cores = Vec::new();
    if fault.others.is_empty() {
        let waits = if tiles.contains(&fault.tile) {
            waits_at(fault.risc, fault.pc)
        } else {
            Vec::new()
        };
        cores.push(StoppedCore {
            tile: fault.tile,
            risc: fault.risc,
            pc: fault.pc,
            text: fault.to_string(),
            waits,
        });
    }
    let mut others = Vec::new();
    for other in &mut fault.others {
        let Some(core) = other.core else {
            others.push(other.text.clone());
            continue;
        };
        let waits = if tiles.contains(&core.tile) {
            waits_at(core.risc, core.pc)
        } else {
            Vec::new()
        };
        cores.push(StoppedCore {
            tile: core.tile,
            risc: core.risc,
            pc: core.pc,
            text: other.text.clone(),
            waits: waits.clone(),
        });
        if !waits.is_empty() {
            let texts: Vec<String> = waits.iter().map(OpenWait::text).collect();
            other
                .text
                .push_str(&format!("; in {}", texts.join(", in ")));
        }
    }
    (cores, others)
}

/// The typed waits open at `pc`, outermost first.
fn open_waits(sites: &SiteTable, elf: &[u8], pc: u32) -> Vec<OpenWait> {
    let locals = crate::elf::scopes::in_scope(elf, u64::from(pc));
    let mut out: Vec<OpenWait> = Vec::new();
    for l in &locals {
        for (_, m) in sites.iter() {
            let Some(wait) = m.wait else { continue };
            if m.line == l.line && same_file(&m.file, &l.file) {
                let w = OpenWait {
                    name: m.name.clone(),
                    wait,
                    file: m.file.clone(),
                    line: m.line,
                };
                if !out.iter().any(|o| o.text() == w.text()) {
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
pub(super) fn same_file(a: &str, b: &str) -> bool {
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
