//! Issue 40 item 4: signals and waits are located at the kernel's source line, from Rust
//! (also when made by a runtime helper the kernel calls, `ttprof_rt::signal::*`, whose site
//! macro is written in device-rt/src/signal.rs) and from C/C++ (also through a helper macro
//! of ttprof_tensix.h). Each kernel is built, run on the emulator, and every record it
//! wrote is named by a site whose file is the kernel's and whose line is the line of the
//! call, found in the kernel's source text.

use riscv_linker::profiler::{self, ring};
use riscv_linker::{Arch, Risc};
use std::path::{Path, PathBuf};
use ttprof::devmem::DeviceMemory;
use ttprof::kernels::{build_c, CKernelBuild};
use ttprof::sites::{Signal, SiteMeta};
use ttprof_rt::wire::{self, Decoded, Record};
use ttprof_tests::workspace;

/// The 1-based line of `source` holding `call` (exactly one line does).
fn line_of(source: &str, call: &str) -> u32 {
    let lines: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(call))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "{call:?} is on exactly one line: {lines:?}");
    lines[0] as u32
}

/// Runs `elf` on BRISC of one tile and returns the site of every zone and event it wrote.
fn recorded_sites(elf: &Path, name: &str) -> Vec<SiteMeta> {
    let (mut dev, mem, tile) =
        ttprof_tests::emulated_device(&format!("site-lines-run/{name}"), (1, 1));
    ttprof::launch::set_run_id(&mem, 0, tile, 1).unwrap();
    dev.load_kernel(0, tile, Risc::Brisc, &std::fs::read(elf).unwrap(), name)
        .unwrap();
    dev.run().unwrap_or_else(|e| panic!("{name}: {e}"));
    let head = mem
        .read_u32(0, tile, profiler::ring_word(Risc::Brisc, ring::HEAD))
        .unwrap();
    let data = profiler::ring_data(Risc::Brisc);
    assert!(head < data.size, "{name}: no wrap");
    let halves: Vec<u16> = (0..head / 2)
        .map(|i| {
            let w = mem.read_u32(0, tile, data.start + 4 * (i / 2)).unwrap();
            (w >> (16 * (i % 2))) as u16
        })
        .collect();
    let sites = ttprof::elf::KernelElf::load(elf, &ttprof::inputs::Inputs::none())
        .unwrap()
        .sites;
    let (mut at, mut reference, mut out) = (0, 0u64, Vec::new());
    while at < halves.len() {
        match wire::decode(&halves[at..], reference)
            .unwrap_or_else(|e| panic!("{name}: {e:?} at halfword {at}"))
        {
            Decoded::Record(r, len) => {
                reference = r.ref_time().unwrap_or(reference);
                if let Record::Zone { id, .. } | Record::Event { id, .. } = r {
                    out.push(
                        sites
                            .get(id)
                            .unwrap_or_else(|| panic!("{name}: unknown site {id}"))
                            .clone(),
                    );
                }
                at += len;
            }
            Decoded::Pad => panic!("{name}: a pad in a ring that did not wrap"),
        }
    }
    out
}

/// The recorded site named `name`, checked to be at `file`:`line`.
fn assert_at(sites: &[SiteMeta], name: &str, file_ends: &str, line: u32) {
    let site = sites
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no record of site {name:?}"));
    assert!(
        site.file.ends_with(file_ends) && site.line == line,
        "{name} is located at {}:{}, expected ...{file_ends}:{line}",
        site.file,
        site.line
    );
}

#[test]
fn rust_signals_made_by_runtime_helpers_are_located_at_the_kernels_line() {
    let dir = workspace().join("target/site-lines/rust");
    let elf =
        ttprof_demo::scenario::build_kernel_set(Arch::WormholeB0, true, &["signal_sites"], &dir)
            .unwrap_or_else(|e| panic!("{e}"))["signal_sites"]
            .clone();
    let file = "examples/kernels/src/bin/signal_sites.rs";
    let source = std::fs::read_to_string(workspace().join(file)).unwrap();
    let sites = recorded_sites(&elf, "rust");
    let at = |call| line_of(&source, call);
    assert_at(
        &sites,
        "wait-sem-1",
        "src/bin/signal_sites.rs",
        at("wait!(\"wait-sem-1\""),
    );
    assert_at(
        &sites,
        "sem-inc-1",
        "src/bin/signal_sites.rs",
        at("signal::sem_inc(1)"),
    );
    assert_at(
        &sites,
        "cb-push-3",
        "src/bin/signal_sites.rs",
        at("signal::cb_push(3)"),
    );
    assert_at(
        &sites,
        "tensix-sem-post-2",
        "src/bin/signal_sites.rs",
        at("signal::tensix_sem_post(2)"),
    );
    // The helper's resource is kept: the signal still releases its wait.
    let post = sites.iter().find(|s| s.name == "cb-push-3").unwrap();
    assert_eq!(post.signal, Some(Signal::parse("cb_push:3").unwrap()));
}

const CXX_KERNEL: &str = r#"#include <stdint.h>
#include <ttprof.h>
#include <ttprof_tensix.h>

static void push(uint32_t word) { *(volatile uint32_t *)(0x30000 + 0x80) = word; }

void kernel_main() {
    {
        TTPROF_WAIT("wait-sem-1", TTPROF_SEMAPHORE(1));
        *(volatile uint32_t *)(0x30000 + 0x84) = 1;
    }
    TTPROF_SIGNAL("sem-inc-1", TTPROF_SEM_INC(1));
    TTPROF_TENSIX_POST(2, push);
}
"#;

#[test]
fn cxx_signals_and_waits_are_located_at_the_kernels_line() {
    let dir: PathBuf = workspace().join("target/site-lines/cxx");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("signal_sites.cpp");
    std::fs::write(&src, CXX_KERNEL).unwrap();
    let mut b = CKernelBuild::new(vec![src], Risc::Brisc, Arch::WormholeB0);
    b.out_dir = dir.clone();
    let elf = build_c(&b).unwrap_or_else(|e| panic!("{e}"));
    let sites = recorded_sites(&elf, "cxx");
    let at = |call| line_of(CXX_KERNEL, call);
    assert_at(&sites, "wait-sem-1", "signal_sites.cpp", at("TTPROF_WAIT("));
    assert_at(
        &sites,
        "sem-inc-1",
        "signal_sites.cpp",
        at("TTPROF_SIGNAL("),
    );
    assert_at(
        &sites,
        "tensix-sem-post-2",
        "signal_sites.cpp",
        at("TTPROF_TENSIX_POST("),
    );
}
