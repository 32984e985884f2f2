//! What the CLI's integration tests share (each test file says `mod support;` and uses a
//! part): the `ttprof` under test, run plainly or with its address space limited; paths as
//! arguments and output as text; a scratch folder removed when its test passes; counting a
//! device CSV's zones; the FW/KERNEL wrapper sites of a simulated core's launch.
#![allow(dead_code)]

pub mod live;

use riscv_linker::{Arch, NocCoord, Risc};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ttprof::oplog::KernelBinding;
use ttprof::testing::{write_kernel_elf, ElfSpec, ImageBuilder};

/// The `ttprof` under test: this build's, or `TTPROF_BIN` (the build before a fix).
pub fn bin() -> PathBuf {
    std::env::var_os("TTPROF_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_ttprof")),
        PathBuf::from,
    )
}

/// Runs `ttprof args` to its end.
pub fn ttprof(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("run ttprof")
}

/// `ttprof args` in a child whose address space is `limit` bytes (`setrlimit(RLIMIT_AS)`
/// between fork and exec), not started yet.
pub fn limited(limit: u64, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

/// A path as a command-line argument.
pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A command's exit code, standard output and standard error, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `ZONE_END` rows of a device CSV: its zones.
pub fn zone_ends(csv: &Path) -> usize {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .filter(|l| l.contains(",ZONE_END,"))
        .count()
}

/// A test's folder, removed when it is dropped unless the test failed (kept to look at).
pub struct Scratch(pub PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The FW and KERNEL wrapper sites of `risc`'s launch, as `ttprof_rt::__run` records them.
pub fn wrapper_sites(risc: Risc) -> (ttprof_rt::Site, ttprof_rt::Site) {
    match risc {
        Risc::Brisc => (
            ttprof_rt::__site!(ttprof_rt, zone, "BRISC-FW"),
            ttprof_rt::__site!(ttprof_rt, zone, "BRISC-KERNEL"),
        ),
        Risc::Ncrisc => (
            ttprof_rt::__site!(ttprof_rt, zone, "NCRISC-FW"),
            ttprof_rt::__site!(ttprof_rt, zone, "NCRISC-KERNEL"),
        ),
        _ => (
            ttprof_rt::__site!(ttprof_rt, zone, "TRISC-FW"),
            ttprof_rt::__site!(ttprof_rt, zone, "TRISC-KERNEL"),
        ),
    }
}

/// One simulated core's launch put into a fixture: its ring (`l1`) into the image, its
/// sites into a kernel ELF in `dir` (`k-X-Y-risc.elf`); the op log's binding of that ELF.
pub fn put_core(
    builder: &mut ImageBuilder,
    dir: &Path,
    tile: NocCoord,
    risc: Risc,
    (l1, sites): (&[u8], Vec<String>),
) -> KernelBinding {
    builder.put_ring(0, tile, risc, l1);
    let elf = format!("k-{}-{}-{}.elf", tile.x, tile.y, risc.ident());
    let arch: Arch = builder.geometry.arch;
    write_kernel_elf(&dir.join(&elf), &ElfSpec::kernel(arch, risc, sites)).unwrap();
    KernelBinding {
        risc: risc.name().into(),
        elf: elf.into(),
        cores: vec![[tile.x, tile.y]],
    }
}
