//! tt-metal's slow dispatch, as its host does it with `TT_METAL_SLOW_DISPATCH_MODE` (no
//! dispatch cores): boot the firmware, wait for its first done (`go_messages[0].signal` =
//! `RUN_MSG_DONE`), write the kernel where it is linked in the kernel configuration buffer,
//! then the launch message (`launch[0]`, `mode` = host) and last the go message; the
//! firmware calls the kernel and signals done again, then waits for the next go message.
//! BRISC kernels only, so far (one tile, one launch per run).

use super::firmware::{read_u8, write_u8s, Firmware};
use crate::{Device, EmuError, Risc, RunSummary};
use riscv_linker::tt_metal::{self, msgs};
use riscv_linker::NocCoord;

/// Cycles between two looks of the host at the mailboxes.
pub const HOST_POLL_CYCLES: u64 = 10_000;
/// Cycles the host waits for the firmware to boot, or to finish a kernel, before it gives up.
pub const HOST_TIMEOUT_CYCLES: u64 = 50_000_000;

/// A BRISC kernel: an RV32IM ELF linked inside tt-metal's kernel configuration buffer
/// ([`tt_metal::L1Map::kernel_config`]), entered at its ELF entry as `uint32_t kernel(void)` and
/// returning to the firmware.
#[derive(Clone, Copy, Debug)]
pub struct BriscKernel<'a> {
    /// The ELF's bytes.
    pub elf: &'a [u8],
    /// Its name, for messages.
    pub name: &'a str,
    /// `host_assigned_id` of the launch message (tt-metal's program/launch id).
    pub host_assigned_id: u32,
}

/// What one slow-dispatch launch did.
#[derive(Clone, Debug)]
pub struct Dispatched {
    /// Tile cycles from the run's start to the firmware's first done (booted, waiting).
    pub booted: u64,
    /// Tile cycles from the go message to the firmware's done for the kernel.
    pub kernel: u64,
    /// BRISC's pc when the firmware first waited for a go message, and at the end of the
    /// run (after done, waiting again).
    pub idle_pc: (u32, u32),
    /// The run (every core still running: the firmwares are waiting).
    pub summary: RunSummary,
}

/// Boots `fw` on `tile` of chip 0, runs `kernel` on its BRISC by slow dispatch, waits for
/// done and for the firmware to wait again. `dev` must follow tt-metal's layout.
pub fn run_brisc_kernel(
    dev: &mut Device,
    fw: &Firmware,
    tile: NocCoord,
    kernel: &BriscKernel<'_>,
) -> Result<Dispatched, EmuError> {
    let arch = dev.arch();
    let mb = msgs::mailboxes(arch);
    let image = KernelImage::parse(kernel, arch)?;
    fw.load(dev, 0, tile)?;
    let mut phase = Phase::Booting;
    let (mut booted, mut go_at, mut done_at, mut idle_pc) = (0, 0, 0, (0, 0));
    let mut cycles = 0u64;
    let mut failure: Option<EmuError> = None;
    let summary =
        dev.run_until(HOST_POLL_CYCLES, &mut |d| {
            cycles += HOST_POLL_CYCLES;
            let mut step =
                || -> Result<bool, EmuError> {
                    let signal = read_u8(d, 0, tile, mb.go_signal(0))?;
                    match phase {
                        Phase::Booting if signal == msgs::RUN_MSG_DONE => {
                            booted = cycles;
                            idle_pc.0 = d.hart_registers(0, tile, Risc::Brisc)?.0;
                            image.write(d, tile)?;
                            write_launch(d, tile, &image, kernel.host_assigned_id)?;
                            write_u8s(d, 0, tile, mb.go_signal(0), &[msgs::RUN_MSG_GO])?;
                            go_at = cycles;
                            phase = Phase::Running;
                        }
                        Phase::Running if signal == msgs::RUN_MSG_DONE => {
                            done_at = cycles;
                            phase = Phase::Settling(3);
                        }
                        // A few more looks: the firmware is back in its wait for a go message.
                        Phase::Settling(0) => {
                            idle_pc.1 = d.hart_registers(0, tile, Risc::Brisc)?.0;
                            return Ok(true);
                        }
                        Phase::Settling(n) => phase = Phase::Settling(n - 1),
                        _ if cycles - go_at.max(booted) > HOST_TIMEOUT_CYCLES => {
                            let pc = d.hart_registers(0, tile, Risc::Brisc)?.0;
                            return Err(EmuError::Config(format!(
                        "tt-metal firmware on {tile}: no done {} after {HOST_TIMEOUT_CYCLES} \
                         cycles (go signal {signal:#04x}, BRISC pc {pc:#x})",
                        if phase == Phase::Booting { "from boot" } else { "for the kernel" }
                    )));
                        }
                        _ => {}
                    }
                    Ok(false)
                };
            step().unwrap_or_else(|e| {
                failure = Some(e);
                true
            })
        })?;
    if let Some(e) = failure {
        return Err(e);
    }
    if phase == Phase::Booting || phase == Phase::Running {
        return Err(EmuError::Config(format!(
            "tt-metal firmware on {tile}: every core halted before done"
        )));
    }
    Ok(Dispatched {
        booted,
        kernel: done_at - go_at,
        idle_pc,
        summary,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Booting,
    Running,
    Settling(u32),
}

/// A kernel's loadable bytes and entry, checked to lie in the kernel configuration buffer.
struct KernelImage {
    segments: Vec<(u32, Vec<u8>)>,
    entry: u32,
    size: u32,
}

impl KernelImage {
    fn parse(k: &BriscKernel<'_>, arch: riscv_linker::Arch) -> Result<KernelImage, EmuError> {
        use object::{Object, ObjectSegment};
        let err = |reason: String| EmuError::Elf {
            file: k.name.to_string(),
            reason,
        };
        let file = object::File::parse(k.elf).map_err(|e| err(format!("not an ELF file: {e}")))?;
        if file.architecture() != object::Architecture::Riscv32 {
            return Err(err("not a 32-bit RISC-V ELF".into()));
        }
        let buffer = tt_metal::l1_map(arch).kernel_config;
        let mut segments = Vec::new();
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for seg in file.segments() {
            let (addr, size) = (seg.address(), seg.size());
            if size == 0 {
                continue;
            }
            if addr < buffer.start as u64 || addr + size > buffer.end() {
                return Err(err(format!(
                    "segment [{addr:#x}, {:#x}) lies outside tt-metal's kernel configuration \
                     buffer [{:#x}, {:#x}): link the kernel there",
                    addr + size,
                    buffer.start,
                    buffer.end()
                )));
            }
            let mut data = seg
                .data()
                .map_err(|e| err(format!("segment: {e}")))?
                .to_vec();
            data.resize(size as usize, 0);
            lo = lo.min(addr);
            hi = hi.max(addr + size);
            segments.push((addr as u32, data));
        }
        let entry = file.entry() as u32;
        if segments.is_empty() || (entry as u64) < lo || entry as u64 >= hi {
            return Err(err(format!("entry {entry:#x} is not in a loaded segment")));
        }
        Ok(KernelImage {
            segments,
            entry,
            size: (hi - lo) as u32,
        })
    }

    fn write(&self, d: &Device, tile: NocCoord) -> Result<(), EmuError> {
        for (addr, data) in &self.segments {
            write_u8s(d, 0, tile, *addr, data)?;
        }
        Ok(())
    }
}

/// Launch message 0 for a BRISC-only kernel under slow dispatch (`dev_msgs.h`).
fn write_launch(d: &Device, tile: NocCoord, k: &KernelImage, id: u32) -> Result<(), EmuError> {
    use msgs::launch as l;
    let arch = d.arch();
    let base = msgs::mailboxes(arch).launch_msg(0);
    let config = tt_metal::l1_map(arch).kernel_config.start;
    for off in (0..msgs::LAUNCH_MSG_SIZE).step_by(4) {
        d.write_u32(0, tile, base + off, 0)?;
    }
    let w = |off: u32, v: u32| d.write_u32(0, tile, base + off, v);
    w(l::KERNEL_CONFIG_BASE, config)?;
    w(l::KERNEL_TEXT_OFFSET, k.entry - config)?;
    w(l::KERNEL_TEXT_SIZE, k.size)?;
    w(l::HOST_ASSIGNED_ID, id)?;
    w(l::ENABLES, msgs::ENABLE_BRISC)?;
    let b = |off: u32, v: u8| write_u8s(d, 0, tile, base + off, &[v]);
    b(l::MODE, msgs::DISPATCH_MODE_HOST)?;
    b(l::BRISC_NOC_ID, 0)?;
    b(l::BRISC_NOC_MODE, 0)?;
    b(
        l::MIN_REMOTE_CB_START_INDEX,
        tt_metal::num_circular_buffers(arch),
    )
}
