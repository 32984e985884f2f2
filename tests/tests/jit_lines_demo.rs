//! The demo in lines mode (data-movement kernels on BRISC and NCRISC, Tensix kernels on the
//! TRISCs: mailboxes, coprocessor FIFOs, TTSync, zones) gives the same line table with the
//! JIT doing the accounting as forced onto the interpreter (`TTPROF_EMU_JIT=0`).
//!
//! Its own test binary: it sets the environment variable, which every device created
//! meanwhile in the process would read.

use riscv_linker::Arch;
use ttprof_demo::scenario;
use ttprof_tests::{demo_scenario, workspace};

fn demo_lines(out: &std::path::Path) -> Vec<u8> {
    let arch = Arch::WormholeB0;
    let _ = std::fs::remove_dir_all(out);
    let elfs =
        scenario::build_kernels(arch, &out.join("kernels")).unwrap_or_else(|e| panic!("{e}"));
    let mut cfg = demo_scenario(arch, out);
    cfg.lines = true;
    scenario::run(&cfg, &elfs, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(out.join("ttprof_lines.txt")).unwrap();
    for cause in [
        "tensix-fifo",
        "ttsync",
        "load-use",
        "store-port",
        "icache-miss",
    ] {
        assert!(text.contains(cause), "{cause}: {text}");
    }
    std::fs::read(out.join("ttprof_lines.parquet")).unwrap()
}

#[test]
fn the_demo_charges_the_same_lines_on_the_jit_and_the_interpreter() {
    let dir = workspace().join("target/test-jit-lines-demo");
    std::env::remove_var(ttprof_emu::JIT_VAR);
    let jit = demo_lines(&dir.join("jit"));
    std::env::set_var(ttprof_emu::JIT_VAR, "0");
    let interpreted = demo_lines(&dir.join("interpreter"));
    std::env::remove_var(ttprof_emu::JIT_VAR);
    assert!(
        jit == interpreted,
        "ttprof_lines.parquet differs: {}",
        dir.display()
    );
}
