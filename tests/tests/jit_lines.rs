//! Lines mode on the JIT: the blocks' counts give exactly what the interpreter charges,
//! per instruction and cause and per zone-split segment, on real kernels (the runtime
//! benchmark's kernel, zones and wall-clock polls included), and every core's table sums
//! to its cycles.

use riscv_linker::{Arch, Risc};
use ttprof_emu::lines::{HartLines, CAUSES};
use ttprof_emu::{Device, DeviceConfig};
use ttprof_tests::{build_kernels, workspace};

/// Runs the bench kernel (profile build) in `mode` on one BRISC, in lines mode, with or
/// without the JIT; returns its line profile.
fn bench_lines(arch: Arch, jit: bool, mode: u32, iterations: u32, work: u32) -> Vec<HartLines> {
    let elf = build_kernels(&workspace().join("examples/kernels"), arch, false, &[])
        .elf("bench")
        .unwrap_or_else(|e| panic!("{e}"))
        .to_path_buf();
    let dir = workspace().join("target/test-jit-lines").join(format!(
        "{}-{mode}-{}",
        arch.name(),
        if jit { "jit" } else { "interpreter" }
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.image = Some(dir.join("device.img"));
    cfg.jit = jit;
    cfg.lines = true;
    let mut dev = Device::new(cfg).unwrap();
    let mem = ttprof::devmem::MappedImage::open(dev.image_path(), &ttprof::inputs::Inputs::none())
        .unwrap();
    let tile = dev.tiles()[0];
    ttprof::launch::init_tile(&mem, 0, tile, arch, &Default::default()).unwrap();
    dev.load_kernel(0, tile, Risc::Brisc, &std::fs::read(&elf).unwrap(), "bench")
        .unwrap();
    let args = riscv_linker::USER_L1_BASE;
    for (i, v) in [mode, iterations, work].into_iter().enumerate() {
        dev.write_u32(0, tile, args + 4 * i as u32, v).unwrap();
    }
    let summary = dev.run().unwrap();
    assert_eq!(summary.harts.len(), 1);
    let profiles = dev.line_profiles();
    assert_eq!(profiles.len(), 1);
    assert_eq!(profiles[0].cycles, summary.harts[0].cycles);
    profiles
}

fn total(rows: &[(u32, [u64; CAUSES])]) -> u64 {
    rows.iter().flat_map(|r| r.1).sum()
}

#[test]
fn jit_and_interpreter_charge_the_bench_kernel_alike() {
    for arch in [Arch::WormholeB0, Arch::Blackhole] {
        // Dense zones (clock reads in the zone macros, ring stores), polls of the wall
        // clock (a segment per read), and plain loops between clock reads.
        for (mode, iterations, work) in [(1, 200, 20), (2, 20, 4), (4, 300, 50)] {
            let jit = bench_lines(arch, true, mode, iterations, work);
            let interpreted = bench_lines(arch, false, mode, iterations, work);
            let what = format!("{arch:?} mode {mode}");
            let h = &jit[0];
            assert_eq!(total(&h.rows), h.cycles, "{what}: charged vs cycles");
            let segments = h.segments.as_ref().expect("the zone split fits");
            assert!(segments.len() > iterations as usize, "{what}: clock reads");
            let split: u64 = segments.iter().map(|s| total(&s.rows)).sum();
            assert_eq!(split, h.cycles, "{what}: segments vs cycles");
            assert!(h.cycles > (iterations * work) as u64, "{what}");
            assert_eq!(jit, interpreted, "{what}: JIT vs interpreter");
        }
    }
}

/// A C++ kernel through `ttprof run --lines`: a multiply loop (load-use on `mul`), a store
/// loop (store-port), a division (left to the interpreter) and zones, on the three TRISCs
/// of two tiles.
#[test]
fn jit_and_interpreter_charge_a_cxx_kernel_alike() {
    let dir = workspace().join("target/test-jit-lines/cxx");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("k.cpp"),
        r#"
#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
static volatile uint32_t sink;
namespace NAMESPACE {
void MAIN {
    uint32_t acc = 1;
    for (uint32_t t = 0; t < 6; t++) {
        DeviceZoneScopedN("tile");
        {
            DeviceZoneScopedN("mul-loop");
            for (uint32_t i = 0; i < 40 + t; i++) {
                acc = acc * 3 + sink;
            }
        }
        for (uint32_t i = 0; i < 30; i++) {
            sink = acc / (i + 1);
        }
    }
    sink = acc;
}
}
"#,
    )
    .unwrap();
    ttprof_tests::assert_lines_on_jit_equal_interpreter(
        &dir,
        &["--grid", "2x1", "--kernel", "trisc=k.cpp"],
        "out",
    );
    let text = std::fs::read_to_string(dir.join("out/ttprof_lines.txt")).unwrap();
    for cause in ["load-use", "store-port", "issue"] {
        assert!(text.contains(cause), "{cause}: {text}");
    }
}
