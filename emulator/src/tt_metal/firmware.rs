//! tt-metal's pre-compiled firmware: which build, where it is, and what tt-metal's host
//! writes before it releases BRISC (the boot word, the core's identity, the first go
//! message). The device must follow tt-metal's layout ([`crate::Layout::TtMetal`]).

use crate::{Device, EmuError};
use riscv_linker::tt_metal::{self, msgs};
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::{Path, PathBuf};

pub use riscv_linker::tt_metal::{firmware_build, FIRMWARE_BUILD_VAR};

/// The `ttnn` wheel `scripts/fetch-tt-metal.sh` caches by default.
pub const TTNN_VERSION: &str = riscv_linker::tt_metal::SOURCE_VERSION;

/// The tt-metal root (the directory holding `tt_metal/`): `$TT_METAL_HOME`, else the
/// cache `scripts/fetch-tt-metal.sh` fills (`$TTPROF_CACHE`, `$XDG_CACHE_HOME/ttprof` or
/// `~/.cache/ttprof`, then `ttnn-<version>/ttnn`). Whether it exists is not checked.
pub fn tt_metal_root() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("TT_METAL_HOME") {
        return Some(PathBuf::from(home));
    }
    let env = |v: &str| std::env::var_os(v).map(PathBuf::from);
    let cache = env("TTPROF_CACHE")
        .or_else(|| env("XDG_CACHE_HOME").map(|c| c.join("ttprof")))
        .or_else(|| env("HOME").map(|h| h.join(".cache/ttprof")))?;
    Some(cache.join(format!("ttnn-{TTNN_VERSION}/ttnn")))
}

/// The five firmware ELFs of one build, checked for the arch.
#[derive(Clone, Debug)]
pub struct Firmware {
    /// The arch they were built for.
    pub arch: Arch,
    /// The build directory they were read from.
    pub dir: PathBuf,
    /// Per core, in [`Risc::ALL`] order: the file and its bytes.
    pub elves: Vec<(Risc, PathBuf, Vec<u8>)>,
}

impl Firmware {
    /// Reads build `build` under the tt-metal `root` and checks that it is `arch`'s: each
    /// ELF's entry must be its core's firmware slot in tt-metal's map for `arch`.
    pub fn open(root: &Path, build: &str, arch: Arch) -> Result<Firmware, EmuError> {
        let dir = root.join("tt_metal/pre-compiled").join(build);
        let cfg = |m: String| EmuError::Config(m);
        let mut elves = Vec::new();
        for risc in Risc::ALL {
            let name = risc.ident();
            let path = dir.join(name).join(format!("{name}.elf"));
            let bytes = std::fs::read(&path).map_err(|e| {
                cfg(format!(
                    "tt-metal firmware {}: {e} (build {build}; run scripts/fetch-tt-metal.sh, \
                     or set TT_METAL_HOME or {FIRMWARE_BUILD_VAR})",
                    path.display()
                ))
            })?;
            let entry = elf_entry(&bytes)
                .map_err(|why| cfg(format!("tt-metal firmware {}: {why}", path.display())))?;
            let slot = tt_metal::l1_map(arch).firmware(risc).start;
            if entry != slot {
                return Err(cfg(format!(
                    "tt-metal firmware {}: entry {entry:#x}, but {arch}'s {risc} firmware \
                     starts at {slot:#x} (dev_mem_map.h): a build for another arch",
                    path.display()
                )));
            }
            elves.push((risc, path, bytes));
        }
        Ok(Firmware { arch, dir, elves })
    }

    /// Loads the five firmwares on `tile` of `chip` and writes what tt-metal's host writes
    /// before releasing BRISC: the boot word (a jump to BRISC's firmware), the core's
    /// identity in `core_info`, go message 0 = `RUN_MSG_INIT`. The next run starts BRISC;
    /// BRISC's firmware releases the others.
    pub fn load(&self, dev: &mut Device, chip: u32, tile: NocCoord) -> Result<(), EmuError> {
        let arch = dev.arch();
        if arch != self.arch {
            return Err(EmuError::Config(format!(
                "tt-metal firmware {} is built for {}, the device is {arch}",
                self.dir.display(),
                self.arch
            )));
        }
        for (risc, path, bytes) in &self.elves {
            dev.load_kernel(chip, tile, *risc, bytes, &path.display().to_string())?;
        }
        let map = tt_metal::l1_map(arch);
        let mb = msgs::mailboxes(arch);
        let boot = map.boot_code_base;
        let jump = crate::asm::jal(0, (map.firmware(Risc::Brisc).start - boot) as i32);
        dev.write_u32(chip, tile, boot, jump)?;
        let (lx, ly) = arch
            .worker_logical(tile)
            .ok_or_else(|| EmuError::Config(format!("{tile} is not a worker tile of {arch}")))?;
        let (nx, ny) = arch.noc_grid();
        let (gx, gy) = dev.config().grid;
        let info = mb.core_info;
        write_u8s(
            dev,
            chip,
            tile,
            info + msgs::core_info::NOC_SIZE_X,
            &[nx, ny, gx, gy, lx, ly],
        )?;
        let unreserved = map.kernel_config.end() as u32;
        dev.write_u32(
            chip,
            tile,
            info + msgs::core_info::L1_UNRESERVED_START,
            unreserved,
        )?;
        dev.write_u32(
            chip,
            tile,
            info + msgs::core_info::CORE_MAGIC_NUMBER,
            msgs::WORKER_MAGIC,
        )?;
        dev.write_u32(chip, tile, mb.launch_msg_rd_ptr, 0)?;
        dev.write_u32(chip, tile, mb.go_message_index, 0)?;
        write_u8s(dev, chip, tile, mb.go_signal(0), &[msgs::RUN_MSG_INIT])
    }
}

/// An ELF's entry point.
fn elf_entry(bytes: &[u8]) -> Result<u32, String> {
    use object::Object;
    let file = object::File::parse(bytes).map_err(|e| format!("not an ELF file: {e}"))?;
    if file.architecture() != object::Architecture::Riscv32 {
        return Err(format!("not 32-bit RISC-V ({:?})", file.architecture()));
    }
    Ok(file.entry() as u32)
}

/// Writes bytes at any L1 address through word writes (read, merge, write).
pub(crate) fn write_u8s(
    dev: &Device,
    chip: u32,
    tile: NocCoord,
    addr: u32,
    bytes: &[u8],
) -> Result<(), EmuError> {
    for (i, &b) in bytes.iter().enumerate() {
        let a = addr + i as u32;
        let word = a & !3;
        let shift = (a & 3) * 8;
        let old = dev.read_u32(chip, tile, word)?;
        let new = (old & !(0xff << shift)) | (b as u32) << shift;
        dev.write_u32(chip, tile, word, new)?;
    }
    Ok(())
}

/// Reads the byte at any L1 address.
pub(crate) fn read_u8(dev: &Device, chip: u32, tile: NocCoord, addr: u32) -> Result<u8, EmuError> {
    Ok((dev.read_u32(chip, tile, addr & !3)? >> ((addr & 3) * 8)) as u8)
}
