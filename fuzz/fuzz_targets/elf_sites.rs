//! Kernel ELFs: `ttprof::elf::KernelElf::parse` of arbitrary bytes (the ELF, its
//! `.ttprof_sites` symbols and their JSON metadata, the sum-zone table) never panics and
//! never allocates more than the fuzz limit; the site table of an accepted ELF can be
//! looked up by id and by name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use ttprof::elf::KernelElf;

ttprof_fuzz::limit_allocations!();

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let elf = match KernelElf::parse(Path::new("fuzz/kernel.elf"), data) {
        Ok(elf) => elf,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let sites = &elf.sites;
    assert_eq!(sites.len(), sites.iter().count());
    for (id, meta) in sites.iter().take(256) {
        assert_eq!(sites.get(id).map(|m| &m.name), Some(&meta.name));
        assert!(sites.find(&meta.name).is_some(), "a site is found by its name");
    }
}));
