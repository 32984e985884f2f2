//! Issue 4: zone ids are collision-free by construction, with room for at least 2^16 sites
//! per kernel.
//!
//! A site is one byte of `.ttprof_sites` and its address is its id, so distinct sites get
//! distinct ids and the section's size bounds their number. Real kernels cannot hold that
//! many call sites in a 16-22 KiB code slot, so this checks the limit itself: an object with
//! 2^16 site bytes links with riscv-linker's script (the last site gets id 0xFFFF), and one
//! with 2^16 + 1 is refused by the script's assertion with a message that says why.
//! Assembled with riscv64-unknown-elf-gcc, linked with the toolchain's rust-lld.

use riscv_linker::{script, Arch, Risc};
use std::path::{Path, PathBuf};
use std::process::Command;
use ttprof_tests::workspace;

fn rust_lld() -> PathBuf {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let sysroot = String::from_utf8(out.stdout).unwrap();
    let host = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8(host.stdout).unwrap();
    let triple = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(triple)
        .join("bin/rust-lld")
}

/// Assembles a kernel image with `sites` one-byte sites and links it; returns the linker's
/// result and the ELF path.
fn link(dir: &Path, sites: u32) -> (std::process::Output, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let asm = dir.join("k.S");
    std::fs::write(
        &asm,
        format!(
            ".section .ttprof.start,\"ax\"\n.globl _start\n_start:\n  j _start\n\
             .section .ttprof_sites,\"aw\"\n.space {}\n.globl last_site\nlast_site:\n.byte 0\n",
            sites - 1
        ),
    )
    .unwrap();
    let obj = dir.join("k.o");
    let gcc = Command::new("riscv64-unknown-elf-gcc")
        .args(["-march=rv32im", "-mabi=ilp32", "-c"])
        .arg(&asm)
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("riscv64-unknown-elf-gcc is installed (scripts/install-test-tools.sh)");
    assert!(gcc.success());
    let ld_script = dir.join("link.x");
    std::fs::write(
        &ld_script,
        script::linker_script(Arch::WormholeB0, Risc::Trisc0),
    )
    .unwrap();
    let elf = dir.join("k.elf");
    let out = Command::new(rust_lld())
        .args(["-flavor", "gnu", "-T"])
        .arg(&ld_script)
        .arg(&obj)
        .arg("-o")
        .arg(&elf)
        .output()
        .expect("rust-lld runs");
    (out, elf)
}

fn symbol(elf: &Path, name: &str) -> u64 {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(elf).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("no symbol {name}"))
        .address()
}

#[test]
fn two_to_the_sixteen_sites_link_and_one_more_is_refused() {
    let dir = workspace().join("target/test-site-ids");
    let (ok, elf) = link(&dir.join("max"), 1 << 16);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(
        symbol(&elf, "last_site"),
        0xFFFF,
        "the 65536th site has id 0xffff"
    );

    let (refused, _) = link(&dir.join("over"), (1 << 16) + 1);
    assert!(!refused.status.success(), "65537 sites must not link");
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("more than 65536 zone sites in one kernel"),
        "{msg}"
    );
}
