//! Sites made inside a library function a kernel calls (a signal helper of ttprof-rt such
//! as `ttprof_rt::signal::tensix_sem_post(n)`, a barrier of ttprof-dm) are located at the
//! kernel's line that calls it, not at the library's line where the site's macro is
//! written (issue 40 item 4; docs/design/zone-metadata.md, "Where a site is").
//!
//! The site's static is the library's, one per helper (and index), whatever calls it; the
//! code that loads its id is inlined into the kernel. The kernel is linked with
//! `--emit-relocs`, so each instruction that loads a site's id keeps a relocation naming
//! the site's symbol: its pc, through the DWARF inlined frames (`addr2line`), gives the
//! chain of calls, and the site is located at the innermost frame outside the library and
//! Rust's `core`: the kernel's line. Without relocations or debug info the site keeps the
//! library's line.

use crate::sites::SiteTable;
use object::{Object, ObjectSection, RelocationTarget, SectionKind, SymbolIndex};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Packages whose sites are written inside functions kernels call: the runtime and its
/// data-movement library.
const LIBRARY_PACKAGES: [&str; 2] = ["ttprof-rt", "ttprof-dm"];

/// Locates `sites`' library sites at the kernel lines that call them. `symbols` maps each
/// site symbol to its id. A site reached from several kernel lines (one static, several
/// inlined copies) is located at the first of them in code order.
pub(super) fn locate_library_sites(
    path: &Path,
    file: &object::File,
    symbols: &HashMap<SymbolIndex, u16>,
    sites: &mut SiteTable,
) {
    let library: Vec<u16> = sites
        .iter()
        .filter(|(_, m)| LIBRARY_PACKAGES.contains(&m.package.as_str()))
        .map(|(id, _)| id)
        .collect();
    if library.is_empty() {
        return;
    }
    // The libraries' source directories: a frame there is inside the library.
    let mut library_dirs: Vec<String> = library
        .iter()
        .filter_map(|id| sites.get(*id))
        .filter_map(|m| Path::new(&m.file).parent())
        .map(|d| format!("{}/", d.display()))
        .collect();
    library_dirs.sort();
    library_dirs.dedup();
    let mut pcs: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
        for (offset, reloc) in section.relocations() {
            if let RelocationTarget::Symbol(index) = reloc.target() {
                if let Some(&id) = symbols.get(&index) {
                    pcs.entry(id).or_default().push(offset);
                }
            }
        }
    }
    if pcs.is_empty() {
        return;
    }
    let Ok(loader) = addr2line::Loader::new(path) else {
        return;
    };
    // The kernel's own sites' files, as the compiler named them (relative to the crate):
    // a located site takes the same spelling.
    let kernel_files: Vec<String> = sites
        .iter()
        .filter(|(_, m)| !LIBRARY_PACKAGES.contains(&m.package.as_str()))
        .map(|(_, m)| m.file.clone())
        .collect();
    let outside = |f: &str| {
        !library_dirs.iter().any(|d| f.starts_with(d.as_str()))
            && !["/library/core/", "/library/alloc/", "/library/std/"]
                .iter()
                .any(|t| f.contains(t))
    };
    for id in library {
        let Some(site_pcs) = pcs.get_mut(&id) else {
            continue;
        };
        site_pcs.sort_unstable();
        let found = site_pcs.iter().find_map(|&pc| {
            let mut frames = loader.find_frames(pc).ok()?;
            while let Ok(Some(frame)) = frames.next() {
                let loc = frame.location?;
                let (f, line) = (loc.file?, loc.line?);
                if outside(f) {
                    return Some((f.to_string(), line, loc.column.unwrap_or(0)));
                }
            }
            None
        });
        if let (Some((f, line, column)), Some(meta)) = (found, sites.get_mut(id)) {
            meta.file = kernel_files
                .iter()
                .find(|k| f.ends_with(&format!("/{k}")))
                .cloned()
                .unwrap_or(f);
            meta.line = line;
            meta.column = column;
        }
    }
}
