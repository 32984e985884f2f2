//! C kernels for the integration tests: `riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32
//! -nostdlib` with the project's linker script and `device-rt/include` on the include path
//! (installed by `scripts/install-test-tools.sh`; without it the tests that build C fail
//! and say so).

use riscv_linker::{script::linker_script, Arch, Risc};
use std::path::PathBuf;
use std::process::Command;

/// The start code every C kernel gets: the stack, `main`, then `ecall` with its result.
pub const START: &str = r#"
__asm__(".section .ttprof.start,\"ax\"\n.globl _start\n_start:\n la sp, __stack_top\n call main\n ecall\n1: j 1b\n");
"#;

/// Compiles `c` for `risc` on `arch`; returns the ELF path.
pub fn build(name: &str, c: &str, arch: Arch, risc: Risc) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gcc-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.c"));
    let ld = dir.join(format!("{name}.x"));
    let elf = dir.join(format!("{name}.elf"));
    std::fs::write(&src, format!("{START}\n{c}")).unwrap();
    std::fs::write(&ld, linker_script(arch, risc)).unwrap();
    let out = Command::new("riscv64-unknown-elf-gcc")
        .args([
            "-march=rv32im",
            "-mabi=ilp32",
            "-nostdlib",
            "-nostartfiles",
            "-ffreestanding",
            "-O2",
            "-g",
        ])
        .arg(concat!(
            "-I",
            env!("CARGO_MANIFEST_DIR"),
            "/../device-rt/include"
        ))
        .args(["-fno-tree-loop-distribute-patterns", "-o"])
        .arg(&elf)
        .arg(&src)
        .arg(format!("-Wl,-T,{}", ld.display()))
        .output()
        .expect("riscv64-unknown-elf-gcc is needed: run scripts/install-test-tools.sh");
    assert!(
        out.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    elf
}
