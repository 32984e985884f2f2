//! Which run device memory holds, checked against an op log: `ttprof run`'s launcher writes
//! a hash of the kernel ELF it loads on each core into the tile control block
//! (`riscv_linker::profiler::tile::KERNELS`), so a readout can tell that an op log names
//! other kernels than the ones that ran, the sign of another run's op log (its zones would
//! be named from the wrong ELFs).

use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::launch::kernel_hash;
use crate::oplog::OpLog;
use riscv_linker::profiler::{ring, ring_word, tile, TILE_BLOCK};
use riscv_linker::Risc;

/// Refuses `log` when, for a core with a kernel hash, the op log names the run that core
/// ran last (its ring block's `RUN_ID`) with a kernel ELF of another
/// hash. ELFs that cannot be read are left to the readout to report.
pub fn check(mem: &dyn DeviceMemory, device: &std::path::Path, log: &OpLog) -> Result<()> {
    let chips = mem.geometry().chips;
    for chip in 0..chips {
        for at in mem.tiles(chip) {
            for risc in Risc::ALL {
                let hash = mem.read_u32(
                    chip,
                    at,
                    TILE_BLOCK + tile::KERNELS + 4 * risc.index() as u32,
                );
                let run = mem.read_u32(chip, at, ring_word(risc, ring::RUN_ID));
                let (Ok(hash), Ok(run)) = (hash, run) else {
                    continue;
                };
                if hash == 0 {
                    continue;
                }
                let Some(k) = log.op(chip, run).and_then(|op| op.kernel_for(at, risc)) else {
                    continue;
                };
                let path = log.resolve_path(&k.elf);
                let Ok(bytes) = crate::files::read_regular(
                    &path,
                    "a kernel ELF",
                    "read kernel ELF",
                    crate::elf::MAX_ELF_BYTES,
                    &log.inputs,
                ) else {
                    continue;
                };
                let named = kernel_hash(&bytes);
                if named != hash {
                    return Err(Error::BadFile {
                        path: log.path.clone(),
                        what: format!(
                            "is not the op log of {}: chip {chip} tile {at} {risc} last ran run {run} with a kernel \
                             ELF of hash {hash:#010x}, but this op log names {} (hash {named:#010x}) for it; give the \
                             op log written with that device memory (the same run folder)",
                            device.display(),
                            path.display()
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}
