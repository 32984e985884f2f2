//! Kernel ELFs: which core an image was linked for and what its zone sites are.
//!
//! A kernel built with ttprof-rt and linked with riscv-linker's script is a 32-bit
//! little-endian RISC-V ELF with:
//! * the absolute symbols `__ttprof_arch_id` (`Arch::id`) and `__ttprof_risc_index`
//!   (`Risc::index`), defined by the linker script;
//! * the non-loaded section `.ttprof_sites` (at address 0), one byte per site, each byte
//!   named by a symbol whose name is the site's JSON metadata ([`crate::sites`]).

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::sites::{SiteMeta, SiteTable};
use object::{Architecture, Object, ObjectSection, ObjectSymbol, SymbolSection};
use riscv_linker::script::SITES_SECTION;
use riscv_linker::{Arch, Risc};

mod locate;
pub mod scopes;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A loaded kernel image: what it was linked for and its sites.
#[derive(Clone, Debug)]
pub struct KernelElf {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The chip architecture it was linked for (its `__ttprof_arch_id` symbol).
    pub arch: Arch,
    /// The Tensix core it was linked to run on (its `__ttprof_risc_index` symbol).
    pub risc: Risc,
    /// Its zone sites by id (shared: one table per ELF, however many rings use it).
    pub sites: Arc<SiteTable>,
}

/// The largest kernel ELF [`KernelElf::load`] reads. A kernel fits in a tile's L1 (1.5 MiB)
/// and its debug info is a few MiB; anything near this is not a kernel.
pub(crate) const MAX_ELF_BYTES: u64 = 256 << 20;

impl KernelElf {
    /// Reads and checks a kernel ELF. Only a regular file of at most `MAX_ELF_BYTES` is
    /// read: a FIFO, a device (`/dev/zero` never ends) or a huge file is refused before it
    /// is read. The file is noted in `inputs`.
    pub fn load(path: &Path, inputs: &Inputs) -> Result<KernelElf> {
        let data = crate::files::read_regular(
            path,
            "a kernel ELF",
            "read kernel ELF",
            MAX_ELF_BYTES,
            inputs,
        )
        .map_err(|e| match e {
            Error::BadFile { path, what } => Error::Elf { path, what },
            e => e,
        })?;
        Self::parse(path, &data)
    }

    /// Checks a kernel ELF already in memory (`path` is for messages).
    pub fn parse(path: &Path, data: &[u8]) -> Result<KernelElf> {
        let err = |what: String| Error::Elf {
            path: path.into(),
            what,
        };
        check_ident(data).map_err(err)?;
        let file = object::File::parse(data).map_err(|e| err(format!("cannot parse ELF: {e}")))?;
        match file.architecture() {
            Architecture::Riscv32 => {}
            other => {
                return Err(err(format!(
                    "machine is {other:?}, expected 32-bit RISC-V (riscv32im)"
                )))
            }
        }
        let section = file.section_by_name(SITES_SECTION).ok_or_else(|| {
            err(format!(
                "no {SITES_SECTION} section: not built with ttprof-rt, or built without its `profile` feature"
            ))
        })?;
        let (sec_index, sec_start, sec_size) = (section.index(), section.address(), section.size());
        let mut arch = None;
        let mut risc = None;
        let mut sites = SiteTable::default();
        let mut site_symbols = std::collections::HashMap::new();
        for sym in file.symbols() {
            match sym.section() {
                SymbolSection::Absolute => match sym.name() {
                    Ok("__ttprof_arch_id") => arch = Some(sym.address()),
                    Ok("__ttprof_risc_index") => risc = Some(sym.address()),
                    _ => {}
                },
                SymbolSection::Section(i) if i == sec_index => {
                    let name = sym.name().map_err(|e| {
                        err(format!("a symbol in {SITES_SECTION} has a bad name: {e}"))
                    })?;
                    // RISC-V mapping symbols (`$d`, `$x...`, psABI) mark data and code, not sites;
                    // a section symbol (GNU `strip --strip-debug` adds one) names the section.
                    if name.starts_with('$') || sym.kind() == object::SymbolKind::Section {
                        continue;
                    }
                    let addr = sym.address();
                    if addr < sec_start || addr >= sec_start + sec_size || addr > u16::MAX as u64 {
                        return Err(err(format!(
                            "site symbol at {addr:#x} lies outside {SITES_SECTION} ({sec_start:#x}..{:#x}) or above 0xffff",
                            sec_start + sec_size
                        )));
                    }
                    let meta = SiteMeta::parse(name)
                        .map_err(|e| err(format!("site {addr:#x} ({name:?}): {e}")))?;
                    sites.insert(addr as u16, meta).map_err(&err)?;
                    site_symbols.insert(sym.index(), addr as u16);
                }
                _ => {}
            }
        }
        check_sum_table(&file, &sites).map_err(err)?;
        locate::locate_library_sites(path, &file, &site_symbols, &mut sites);
        let linked = "not linked with riscv-linker's script";
        let arch_id =
            arch.ok_or_else(|| err(format!("no absolute symbol __ttprof_arch_id: {linked}")))?;
        let arch = u32::try_from(arch_id)
            .ok()
            .and_then(Arch::from_id)
            .ok_or_else(|| {
                err(format!(
                    "__ttprof_arch_id = {arch_id}, expected 1 (wormhole_b0) or 2 (blackhole)"
                ))
            })?;
        let risc_index =
            risc.ok_or_else(|| err(format!("no absolute symbol __ttprof_risc_index: {linked}")))?;
        let risc = Risc::from_index(risc_index as usize)
            .filter(|_| risc_index < Risc::COUNT as u64)
            .ok_or_else(|| {
                err(format!(
                    "__ttprof_risc_index = {risc_index}, expected 0..=4"
                ))
            })?;
        Ok(KernelElf {
            path: path.into(),
            arch,
            risc,
            sites: Arc::new(sites),
        })
    }
}

/// Bytes of one entry of the `.ttprof_sums` table (`ttprof_rt::SumZone`, `repr(C)`: site
/// address, count, total).
const SUM_ENTRY_BYTES: u64 = 16;

/// Every entry of the sum-zone table (`__ttprof_sums_start..__ttprof_sums_end`, walked by
/// the runtime at kernel exit) must name a sum site: otherwise the device writes its totals
/// under another site's id, and every output would name them wrongly.
fn check_sum_table(file: &object::File, sites: &SiteTable) -> Result<(), String> {
    let find = |name: &str| {
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .map(|s| s.address())
    };
    let (Some(start), Some(end)) = (find("__ttprof_sums_start"), find("__ttprof_sums_end")) else {
        return Ok(());
    };
    if end < start || (end - start) % SUM_ENTRY_BYTES != 0 {
        return Err(format!("sum-zone table {start:#x}..{end:#x} is not a whole number of {SUM_ENTRY_BYTES}-byte entries"));
    }
    if end == start {
        return Ok(());
    }
    let section = file
        .sections()
        .find(|s| s.address() <= start && end <= s.address() + s.size())
        .ok_or_else(|| format!("no section holds the sum-zone table {start:#x}..{end:#x}"))?;
    let data = section
        .data()
        .map_err(|e| format!("cannot read the sum-zone table: {e}"))?;
    let at = (start - section.address()) as usize;
    let bytes = data
        .get(at..at + (end - start) as usize)
        .ok_or("the sum-zone table lies outside its section's data")?;
    for (i, entry) in bytes.chunks_exact(SUM_ENTRY_BYTES as usize).enumerate() {
        let id = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let site = u16::try_from(id).ok().and_then(|id| sites.get(id));
        match site {
            Some(m) if m.kind == crate::sites::SiteKind::Sum => {}
            other => {
                let what = other.map_or("no site".to_string(), |m| {
                    format!("the {} site {:?}", m.kind, m.name)
                });
                return Err(format!(
                    "sum zone {i} of the table at {start:#x} names site {id:#x}, which is {what}: its totals would be \
                     written under the wrong name (rebuild the kernel with this ttprof-rt, whose sum zones are `#[used]`)"
                ));
            }
        }
    }
    Ok(())
}

/// The ELF identification bytes, checked first so the common mistakes get plain messages.
fn check_ident(data: &[u8]) -> Result<(), String> {
    if data.len() < 20 || data[..4] != *b"\x7fELF" {
        return Err(
            "not an ELF file (expected a 32-bit RISC-V kernel ELF built with ttprof-rt)".into(),
        );
    }
    match data[4] {
        1 => {}
        2 => {
            return Err(
                "64-bit ELF, expected a 32-bit RISC-V kernel ELF (riscv32im-unknown-none-elf)"
                    .into(),
            )
        }
        c => return Err(format!("ELF class {c}, expected 1 (32-bit)")),
    }
    if data[5] != 1 {
        return Err("big-endian ELF, expected little-endian RISC-V".into());
    }
    let machine = u16::from_le_bytes([data[18], data[19]]);
    if machine != object::elf::EM_RISCV {
        return Err(format!(
            "ELF machine {machine}, expected {} (RISC-V)",
            object::elf::EM_RISCV
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{kernel_elf, site_json, ElfSpec};

    fn spec() -> ElfSpec {
        ElfSpec {
            arch_id: Some(Arch::Blackhole.id()),
            risc_index: Some(Risc::Trisc1.index() as u32),
            sites: Some(vec![
                site_json("zone", "outer", 10),
                site_json("value_zone", "tiles", 12),
            ]),
            machine: object::elf::EM_RISCV,
        }
    }

    fn load(spec: &ElfSpec) -> Result<KernelElf> {
        KernelElf::parse(Path::new("k/math.elf"), &kernel_elf(spec))
    }

    #[test]
    fn reads_arch_risc_and_sites() {
        let k = load(&spec()).unwrap();
        assert_eq!((k.arch, k.risc), (Arch::Blackhole, Risc::Trisc1));
        assert_eq!(k.sites.len(), 2);
        assert_eq!(k.sites.get(1).unwrap().name, "tiles");
        assert_eq!(k.sites.get(0).unwrap().line, 10);
    }

    #[test]
    fn each_wrong_input_names_the_file_and_what_was_expected() {
        let msg = |s: &ElfSpec| load(s).unwrap_err().to_string();
        let check =
            |m: String, want: &str| assert!(m.contains("k/math.elf") && m.contains(want), "{m}");
        check(
            msg(&ElfSpec {
                sites: None,
                ..spec()
            }),
            "no .ttprof_sites section",
        );
        check(
            msg(&ElfSpec {
                machine: object::elf::EM_X86_64,
                ..spec()
            }),
            "expected 243 (RISC-V)",
        );
        check(
            msg(&ElfSpec {
                arch_id: None,
                ..spec()
            }),
            "__ttprof_arch_id",
        );
        check(
            msg(&ElfSpec {
                arch_id: Some(9),
                ..spec()
            }),
            "expected 1 (wormhole_b0) or 2",
        );
        check(
            msg(&ElfSpec {
                risc_index: Some(5),
                ..spec()
            }),
            "expected 0..=4",
        );
        check(
            msg(&ElfSpec {
                sites: Some(vec!["not-json".into()]),
                ..spec()
            }),
            "expected JSON",
        );
        let e = KernelElf::parse(Path::new("k/math.elf"), b"#!/bin/sh\n echo hi")
            .unwrap_err()
            .to_string();
        check(e, "not an ELF file");
        let e = KernelElf::load(
            Path::new("/nonexistent/k.elf"),
            &crate::inputs::Inputs::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/nonexistent/k.elf") && e.contains("read kernel ELF"),
            "{e}"
        );
    }

    #[test]
    fn only_a_regular_file_of_a_kernel_s_size_is_read() {
        // /dev/zero as an op log's ELF path read zeros until memory ran out.
        let e = KernelElf::load(Path::new("/dev/zero"), &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kernel ELF /dev/zero: is not a regular file (a FIFO, socket or device?)"),
            "{e}"
        );
        let e = crate::files::with_fifo("elf-fifo", |p| {
            KernelElf::load(p, &crate::inputs::Inputs::none())
                .unwrap_err()
                .to_string()
        });
        if let Some(e) = e {
            assert!(e.contains("fifo: is not a regular file"), "{e}");
        }
        let dir = crate::testing::temp_dir("elf-size");
        let e = KernelElf::load(&dir, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory, not a kernel ELF"), "{e}");
        // Refused by its size, before a byte is read (the file is sparse).
        let big = dir.join("big.elf");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_ELF_BYTES + 1)
            .unwrap();
        let e = KernelElf::load(&big, &crate::inputs::Inputs::none())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "big.elf: is 268435457 bytes: expected a kernel ELF of at most 268435456 bytes"
            ),
            "{e}"
        );
        let ok = dir.join("k.elf");
        std::fs::write(&ok, kernel_elf(&spec())).unwrap();
        assert_eq!(
            KernelElf::load(&ok, &crate::inputs::Inputs::none())
                .unwrap()
                .risc,
            Risc::Trisc1
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
