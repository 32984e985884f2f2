//! What is checked of an op before anything is created or run: its kernels (readable ELFs
//! linked for the RISC and arch they run on, one per RISC), its runtime arguments and its
//! L1 inputs (aligned, inside L1, and clear of what the memory map reserves: the
//! profiler's control words and rings, the code and data a kernel is loaded over, the
//! launcher's runtime arguments; [`riscv_linker::l1_reserved`]), and clear of the buffers
//! this run's profiling adds ([`run_buffers`]: the sample buffer, the timestamper's buffers).

use super::Op;
use crate::elf::KernelElf;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::lines::sample::SampleConfig;
use crate::stamp::Backend;
use riscv_linker::mmio::daisychain as dc;
use riscv_linker::{mmio, Arch, Region, Risc, USER_L1_BASE};

/// The L1 of every tile that a run's profiling writes beside the memory map's reserved
/// ranges: with `--sample`, the sample buffer the daisychain fills; with the timestamper
/// backend, its two buffers. Each with what it is, for messages.
pub fn run_buffers(
    arch: Arch,
    backend: Backend,
    sample: Option<&SampleConfig>,
) -> Vec<(Region, &'static str)> {
    let mut v = Vec::new();
    if let Some(s) = sample {
        let bytes = u64::from(s.buffer.count) * u64::from(dc::SAMPLE_BYTES);
        let size = u32::try_from(bytes).unwrap_or(u32::MAX);
        v.push((
            Region::new(s.buffer.addr, size),
            "the sample buffer (--sample-buffer, --sample-count)",
        ));
    }
    if backend == Backend::Timestamper {
        let [b0, b1] = riscv_linker::profiler::stamp_buffers(arch);
        v.push((b0, "the timestamper backend's buffer 0"));
        v.push((b1, "the timestamper backend's buffer 1"));
    }
    v
}

/// Checks `op` for a device of `arch` whose profiling also writes `buffers`
/// ([`run_buffers`]); returns each kernel's RISC and bytes, in the op's order. Reads the
/// kernel ELFs (noted in `inputs`), creates nothing.
pub fn check(
    op: &Op,
    arch: Arch,
    buffers: &[(Region, &'static str)],
    inputs: &Inputs,
) -> Result<Vec<(Risc, Vec<u8>)>> {
    if op.kernels.is_empty() {
        return Err(Error::Argument {
            what: format!("op {:?} has no kernel to run", op.name),
        });
    }
    let mut images = Vec::new();
    for (risc, elf) in &op.kernels {
        if op.kernels.iter().filter(|(r, _)| r == risc).count() > 1 {
            return Err(Error::Argument {
                what: format!("op {:?} names two kernels for {risc}", op.name),
            });
        }
        let bytes = crate::files::read_regular(
            elf,
            "a kernel ELF",
            "read kernel ELF",
            crate::elf::MAX_ELF_BYTES,
            inputs,
        )?;
        let k = KernelElf::parse(elf, &bytes)?;
        if k.risc != *risc || k.arch != arch {
            return Err(Error::Elf {
                path: elf.clone(),
                what: format!(
                    "was linked for {} {} (its build.rs), but op {:?} runs it on {} {}",
                    k.arch, k.risc, op.name, arch, risc
                ),
            });
        }
        images.push((*risc, bytes));
    }
    let every = op.args.iter().map(|(r, v)| (r, v));
    let per_tile = op.tile_args.iter().map(|(_, r, v)| (r, v));
    for (risc, values) in every.chain(per_tile) {
        if !op.kernels.iter().any(|(r, _)| r == risc) {
            return Err(Error::Argument {
                what: format!(
                    "op {:?} gives runtime arguments to {risc}, which runs no kernel",
                    op.name
                ),
            });
        }
        if values.len() > riscv_linker::MAX_RUNTIME_ARGS as usize {
            return Err(Error::Argument {
                what: format!(
                    "op {:?} gives {risc} {} runtime arguments: at most {} fit",
                    op.name,
                    values.len(),
                    riscv_linker::MAX_RUNTIME_ARGS
                ),
            });
        }
    }
    for input in &op.l1 {
        check_l1(op, input.addr, input.bytes.len(), arch, buffers)?;
    }
    Ok(images)
}

/// An L1 input of `len` bytes at `addr` (crate-visible for `session::run::fuzzing`).
pub(crate) fn check_l1(
    op: &Op,
    addr: u32,
    len: usize,
    arch: Arch,
    buffers: &[(Region, &'static str)],
) -> Result<()> {
    let bad = |what: String| Error::Address {
        what: format!(
            "op {:?}: L1 input at {addr:#x} ({len} bytes): {what}",
            op.name
        ),
    };
    let free = format!(
        "the host's L1 inputs go from {USER_L1_BASE:#x} (riscv_linker::USER_L1_BASE) to the end of L1"
    );
    if !addr.is_multiple_of(4) {
        return Err(bad("the address must be 4-byte aligned".into()));
    }
    let size = arch.l1_size();
    let end = addr as u64 + len as u64;
    if end > size as u64 {
        let local = addr.wrapping_sub(mmio::LOCAL_RAM_BASE) < 0x10_0000;
        return Err(bad(format!(
            "runs past the end of {arch}'s L1 ({size:#x}){}; {free}",
            if local {
                " (it is in a core's local RAM: the profiler's hot word, the stack)"
            } else {
                ""
            }
        )));
    }
    if let Some((r, owner)) = riscv_linker::l1_reserved(addr, len as u32) {
        return Err(bad(format!(
            "overlaps {owner} at {:#x}..{:#x}; {free}",
            r.start,
            r.end()
        )));
    }
    let end = addr as u64 + len as u64;
    for (r, what) in buffers {
        if len > 0 && (addr as u64) < r.end() && (r.start as u64) < end {
            return Err(bad(format!(
                "overlaps {what} at {:#x}..{:#x}, which the profiler writes while the kernels run \
                 (it would overwrite the input); choose another address",
                r.start,
                r.end()
            )));
        }
    }
    Ok(())
}
