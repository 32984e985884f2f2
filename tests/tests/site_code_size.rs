//! Issue 39 item 3: the code of one zone site (what `zone!` or `TTPROF_ZONE` expands to
//! where it is written, open and close) is at most 48 bytes, from Rust and from C++, on both
//! arches; and a C++ kernel with hundreds of zone sites links for BRISC and records each
//! of them, named, on the emulator.
//!
//! The size is measured as runtime-bench measures it (`zone_site_code_bytes_<arch>`): the
//! `.text` growth from 16 to 48 sites in straight-line code, profile build minus plain
//! build, over the 32 added sites.

use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, Risc};
use std::path::{Path, PathBuf};
use ttprof::devmem::DeviceMemory;
use ttprof::kernels::{build_c, CKernelBuild};
use ttprof_rt::wire::{self, Decoded, Record};
use ttprof_tests::{text_bytes, workspace};

const LIMIT: f64 = 48.0;

/// A C++ kernel of `n` zone sites in straight-line code, `site-0`.. in order, each around
/// one volatile store of its position.
fn cxx_sites(n: u32) -> String {
    let mut s = String::from(
        "#include <stdint.h>\n#include <ttprof.h>\n\nvoid kernel_main() {\n    volatile uint32_t *p = (volatile uint32_t *)(0x30000 + 0x80);\n",
    );
    for i in 0..n {
        s.push_str(&format!("    {{ TTPROF_ZONE(\"site-{i}\"); *p = {i}; }}\n"));
    }
    s.push_str("}\n");
    s
}

/// Builds [`cxx_sites`]`(n)` for BRISC on `arch`, with or without `PROFILE_KERNEL`.
fn build_cxx(arch: Arch, n: u32, profile: bool) -> PathBuf {
    let dir = workspace()
        .join("target/site-code-size")
        .join(arch.name())
        .join(if profile { "profile" } else { "plain" });
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("sites_{n}.cpp"));
    std::fs::write(&src, cxx_sites(n)).unwrap();
    let mut b = CKernelBuild::new(vec![src], Risc::Brisc, arch);
    b.profile = profile;
    b.out_dir = dir;
    build_c(&b).unwrap_or_else(|e| panic!("{e}"))
}

/// Bytes of code per added site: `[profile small, profile large, plain small, plain large]`.
fn per_site(elfs: [&Path; 4], added: u32) -> f64 {
    let [a, b, pa, pb] = elfs.map(|e| text_bytes(e).len() as f64);
    ((b - a) - (pb - pa)) / added as f64
}

#[test]
fn a_cxx_zone_site_is_at_most_48_bytes_of_code_on_both_arches() {
    for arch in Arch::ALL {
        let on = (build_cxx(arch, 16, true), build_cxx(arch, 48, true));
        let off = (build_cxx(arch, 16, false), build_cxx(arch, 48, false));
        let bytes = per_site([&on.0, &on.1, &off.0, &off.1], 32);
        eprintln!("{arch}: {bytes} bytes of code per C++ zone site");
        assert!(
            bytes > 8.0 && bytes <= LIMIT,
            "{arch}: a C++ zone site is {bytes} bytes of code (at most {LIMIT})"
        );
    }
}

#[test]
fn a_rust_zone_site_is_at_most_48_bytes_of_code_on_both_arches() {
    for arch in Arch::ALL {
        let dir = workspace().join("target/site-code-size").join(arch.name());
        let names = ["sites_16", "sites_48"];
        let on = ttprof_demo::scenario::build_kernel_set(arch, true, &names, &dir.join("rust-on"))
            .unwrap_or_else(|e| panic!("{e}"));
        let off =
            ttprof_demo::scenario::build_kernel_set(arch, false, &names, &dir.join("rust-off"))
                .unwrap_or_else(|e| panic!("{e}"));
        let bytes = per_site(
            [
                &on["sites_16"],
                &on["sites_48"],
                &off["sites_16"],
                &off["sites_48"],
            ],
            32,
        );
        eprintln!("{arch}: {bytes} bytes of code per Rust zone site");
        assert!(
            bytes > 8.0 && bytes <= LIMIT,
            "{arch}: a Rust zone site is {bytes} bytes of code (at most {LIMIT})"
        );
    }
}

/// 300 sites: with the close inline (85 bytes per site) they did not fit BRISC's 22 KiB of
/// code; at most 48 bytes each they do. Each records one zone, under its own name.
#[test]
fn a_cxx_kernel_with_300_zone_sites_links_for_brisc_and_records_each() {
    let n = 300;
    let elf = build_cxx(Arch::WormholeB0, n, true);
    let (mut dev, mem, tile) = ttprof_tests::emulated_device("site-code-size/300", (1, 1));
    ttprof::launch::set_run_id(&mem, 0, tile, 1).unwrap();
    dev.load_kernel(0, tile, Risc::Brisc, &std::fs::read(&elf).unwrap(), "sites")
        .unwrap();
    dev.run().unwrap_or_else(|e| panic!("{e}"));
    let head = mem
        .read_u32(0, tile, profiler::ring_word(Risc::Brisc, ring::HEAD))
        .unwrap();
    let data = profiler::ring_data(Risc::Brisc);
    assert!(head < data.size, "the records fit the ring without a wrap");
    let halves: Vec<u16> = (0..head / 2)
        .map(|i| {
            let w = mem.read_u32(0, tile, data.start + 4 * (i / 2)).unwrap();
            (w >> (16 * (i % 2))) as u16
        })
        .collect();
    let sites = ttprof::elf::KernelElf::load(&elf, &ttprof::inputs::Inputs::none())
        .unwrap()
        .sites;
    let (mut at, mut reference, mut names) = (0, 0u64, Vec::new());
    while at < halves.len() {
        match wire::decode(&halves[at..], reference)
            .unwrap_or_else(|e| panic!("{e:?} at halfword {at}"))
        {
            Decoded::Record(r, len) => {
                reference = r.ref_time().unwrap_or(reference);
                if let Record::Zone { id, .. } = r {
                    let meta = sites
                        .get(id)
                        .unwrap_or_else(|| panic!("zone of unknown site {id}"));
                    names.push(meta.name.clone());
                }
                at += len;
            }
            Decoded::Pad => panic!("a pad in a ring that did not wrap"),
        }
    }
    // The kernel's zones in source order, then the runtime's wrapper zones (FW, KERNEL).
    let expected: Vec<String> = (0..n).map(|i| format!("site-{i}")).collect();
    let kernel_zones: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with("site-"))
        .cloned()
        .collect();
    assert_eq!(kernel_zones, expected);
}
