//! A tt-metal program on one or more cores by slow dispatch: what tt-metal's host writes
//! into each core's kernel configuration buffer (runtime arguments, semaphores, circular
//! buffer configurations, kernel text) and launch message, then the go messages, and the
//! wait for every core's done. BRISC and NCRISC kernels, and a compute kernel's three TRISC
//! parts: on Wormhole B0 an NCRISC kernel is linked in NCRISC's instruction RAM and written
//! into the buffer after BRISC's; the firmware copies it into the RAM with the mover and
//! BRISC restarts NCRISC there (the emulator's `devices/mover.rs`). Blackhole's NCRISC has
//! no instruction RAM: its kernel is linked in the buffer and runs there, as each TRISC's
//! part does. The kernels lie in the buffer packed by size, each linked at its place
//! ([`packed_text_bases`], `kernel_buffer.rs`).
//!
//! The layout of the buffer's first 4 KiB (arguments, semaphores, circular buffers) is
//! ours (the firmware only follows the offsets in the launch message): see
//! docs/design/tt-metal-program.md.

use super::firmware::{read_u8, write_u8s, Firmware};
pub use super::kernel_buffer::{
    brisc_text_base, ncrisc_text_base, packed_text_bases, text_base, trisc_text_base, BRISC_TEXT,
    NCRISC_TEXT, TRISC_SLOT, TRISC_TEXT,
};
use super::kernel_buffer::{image, place, Image};
use crate::{Device, EmuError, Risc};
use riscv_linker::noc::dram;
use riscv_linker::tt_metal::{self, msgs};
use riscv_linker::{Arch, NocCoord};

/// Offset of BRISC's runtime arguments in the kernel configuration buffer (NCRISC's and
/// the TRISCs' follow at [`ARGS_STRIDE`], in [`Risc::ALL`] order); each RISC's common
/// arguments at [`COMMON_ARGS`] after its own.
pub const ARGS: u32 = 0;
/// Bytes per RISC for its own and its common runtime arguments.
pub const ARGS_STRIDE: u32 = 0x200;
/// Offset of a RISC's common runtime arguments from its own.
pub const COMMON_ARGS: u32 = 0x100;
/// Most runtime arguments (own, or common) of one kernel: 64 words.
pub const MAX_ARGS: usize = (COMMON_ARGS / 4) as usize;
/// Offset of the semaphores (one per [`L1_ALIGNMENT`] bytes, `get_semaphore`), after the
/// five RISCs' arguments.
pub const SEMAPHORES: u32 = ARGS + 5 * ARGS_STRIDE;
/// Most semaphores of a program.
pub const MAX_SEMAPHORES: usize = 16;
/// Offset of the local circular buffers' configurations (four words each, by index; room
/// for Blackhole's 64).
pub const LOCAL_CBS: u32 = SEMAPHORES + L1_ALIGNMENT * MAX_SEMAPHORES as u32;
/// Offset of the (empty) remote circular buffer configurations: the launch's
/// `min_remote_cb_start_index` says there are none, so the firmware reads nothing here.
pub const REMOTE_CBS: u32 = LOCAL_CBS + 16 * tt_metal::num_circular_buffers(Arch::Blackhole) as u32;
/// Wormhole's `L1_ALIGNMENT` (`hostdevcommon/common_values.hpp`): the semaphores' stride.
pub const L1_ALIGNMENT: u32 = 16;
const _: () = assert!(REMOTE_CBS <= BRISC_TEXT);

/// A kernel of a program: its ELF and its runtime arguments.
#[derive(Clone, Debug)]
pub struct ProgramKernel<'a> {
    /// BRISC, NCRISC, or a TRISC (its part of a compute kernel).
    pub risc: Risc,
    /// The ELF's bytes (BRISC: linked at [`brisc_text_base`]; TRISC n at
    /// [`trisc_text_base`]).
    pub elf: &'a [u8],
    /// Its name, for messages.
    pub name: String,
    /// Runtime arguments per core, in the order of [`Program::cores`] (`get_arg_val`).
    pub args: Vec<Vec<u32>>,
    /// Common runtime arguments (`get_common_arg_val`).
    pub common_args: Vec<u32>,
}

/// A circular buffer, the same on every core of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircularBuffer {
    /// Its index (0..32).
    pub index: u8,
    /// Bytes per page.
    pub page_size: u32,
    /// Pages.
    pub pages: u32,
}

/// A tt-metal program for slow dispatch.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// The worker tiles it runs on.
    pub cores: Vec<NocCoord>,
    /// Its kernels, at most one per RISC.
    pub kernels: Vec<ProgramKernel<'a>>,
    /// Its circular buffers, placed in L1 from `l1_unreserved_start` in this order.
    pub cbs: Vec<CircularBuffer>,
    /// Its semaphores' initial values (`get_semaphore(i)`).
    pub semaphores: Vec<u32>,
    /// `host_assigned_id` of the launch messages.
    pub host_assigned_id: u32,
}

/// What a run of a program did.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    /// Tile cycles from the start to the last core's boot done (0: every core had booted).
    pub booted: u64,
    /// Tile cycles from the go messages to the last core's done.
    pub kernel: u64,
    /// Each circular buffer's L1 address, in the order of [`Program::cbs`].
    pub cb_addresses: Vec<u32>,
    /// The run (every core still running: the firmwares wait for the next go message).
    pub summary: crate::RunSummary,
}

/// The worker whose L1 is bank `bank` of interleaved L1 buffers: logical worker
/// `(bank % columns, bank / columns)` of `arch`'s worker grid, row by row, one bank per
/// worker at offset 0 (our assumption: tt-metal's allocator orders the banks of its compute
/// grid, which depends on the card's harvesting and dispatch cores); `None` past the grid.
pub fn l1_bank(arch: riscv_linker::Arch, bank: u32) -> Option<NocCoord> {
    let cols = u32::from(arch.worker_grid().0);
    arch.worker_noc(
        u8::try_from(bank % cols).ok()?,
        u8::try_from(bank / cols).ok()?,
    )
}

/// Where page `page` of an interleaved L1 buffer at bank address `base` lies, with
/// `banks` L1 banks (the firmware's `NUM_L1_BANKS`): its bank's worker and address, as
/// tt-metal's dataflow API computes it (`page % banks`, then `page / banks` pages of
/// `page_size` rounded up to [`L1_ALIGNMENT`] into the bank).
pub fn l1_page(
    arch: riscv_linker::Arch,
    banks: u32,
    base: u32,
    page_size: u32,
    page: u32,
) -> Option<(NocCoord, u64)> {
    let tile = l1_bank(arch, page % banks.max(1))?;
    let stride = u64::from(page_size.div_ceil(L1_ALIGNMENT) * L1_ALIGNMENT);
    Some((
        tile,
        u64::from(base) + u64::from(page / banks.max(1)) * stride,
    ))
}

/// Writes `data` as an interleaved L1 buffer at bank address `base` ([`l1_page`]).
pub fn write_l1_interleaved(
    dev: &mut Device,
    banks: u32,
    base: u32,
    page_size: u32,
    data: &[u8],
) -> Result<(), EmuError> {
    for (p, chunk) in data.chunks(page_size.max(1) as usize).enumerate() {
        let (tile, at) = l1_page_in(dev, banks, base, page_size, p)?;
        dev.write_l1(0, tile, at, chunk)?;
    }
    Ok(())
}

/// Reads `len` bytes of an interleaved L1 buffer ([`write_l1_interleaved`]).
pub fn read_l1_interleaved(
    dev: &Device,
    banks: u32,
    base: u32,
    page_size: u32,
    len: usize,
) -> Result<Vec<u8>, EmuError> {
    let mut out = vec![0; len];
    for (p, chunk) in out.chunks_mut(page_size.max(1) as usize).enumerate() {
        let (tile, at) = l1_page_in(dev, banks, base, page_size, p)?;
        dev.read_l1(0, tile, at, chunk)?;
    }
    Ok(out)
}

fn l1_page_in(
    dev: &Device,
    banks: u32,
    base: u32,
    page_size: u32,
    page: usize,
) -> Result<(NocCoord, u32), EmuError> {
    let arch = dev.arch();
    let at = u32::try_from(page)
        .ok()
        .and_then(|p| l1_page(arch, banks, base, page_size, p))
        .filter(|&(_, at)| at + u64::from(page_size) <= arch.l1_size() as u64);
    at.map(|(t, a)| (t, a as u32)).ok_or_else(|| {
        EmuError::Config(format!(
            "interleaved L1 buffer at {base:#x}: page {page} of {page_size} bytes lies outside              {arch}'s L1 banks"
        ))
    })
}

/// Writes the bank tables the firmware copies at boot, as tt-metal's host does
/// (`generate_device_bank_to_noc_tables`): for each NoC, each DRAM bank's endpoint as
/// `NOC_XY_ENCODING(x, y)`, then each L1 bank's worker ([`l1_bank`]) the same way, then each
/// DRAM bank's offset in its channel (`bank_to_dram_offset`), then each L1 bank's (0). The
/// table sizes are the firmware's. Coordinates are translated ones (tt-metal turns
/// translation on): on Wormhole a worker's and a DRAM port's are their NoC 0 coordinates,
/// the same for both NoCs, encoded `(y << 10) | (x << 4)`; on Blackhole DRAM has its own
/// (`dram::translated`, each NoC its own port of the channel), encoded `(y << 6) | x`.
fn write_bank_tables(
    dev: &Device,
    tile: NocCoord,
    dram_banks: u32,
    l1_banks: u32,
) -> Result<(), EmuError> {
    let arch = dev.arch();
    if dram_banks != dram::banks(arch) {
        return Err(EmuError::Config(format!(
            "tt-metal firmware built for {dram_banks} DRAM banks; {arch} has {}",
            dram::banks(arch)
        )));
    }
    // NOC_XY_ENCODING of the arch's noc_parameters.h.
    let encode = |c: NocCoord| -> [u8; 2] {
        let (x, y) = (u16::from(c.x), u16::from(c.y));
        match arch {
            Arch::WormholeB0 => (y << 10 | x << 4).to_le_bytes(),
            Arch::Blackhole => (y << 6 | x).to_le_bytes(),
        }
    };
    let mut xy = Vec::new();
    for noc in 0..2u32 {
        for bank in 0..dram_banks {
            let b = dram::bank(arch, bank);
            let at = match arch {
                Arch::WormholeB0 => b.endpoint,
                Arch::Blackhole => {
                    dram::translated(arch, b.channel, dram::blackhole_worker_port(b.channel, noc))
                }
            };
            xy.extend_from_slice(&encode(at));
        }
    }
    for _noc in 0..2u8 {
        for bank in 0..l1_banks {
            let e = l1_bank(arch, bank).ok_or_else(|| {
                EmuError::Config(format!(
                    "tt-metal firmware built for {l1_banks} L1 banks; {arch} has {} workers",
                    arch.worker_grid().0 as u32 * arch.worker_grid().1 as u32
                ))
            })?;
            xy.extend_from_slice(&encode(e));
        }
    }
    for bank in 0..dram_banks {
        xy.extend_from_slice(&(dram::bank(arch, bank).offset as u32).to_le_bytes());
    }
    xy.resize(xy.len() + 4 * l1_banks as usize, 0);
    let table = tt_metal::l1_map(arch).bank_to_noc;
    if xy.len() as u32 > table.size {
        return Err(EmuError::Config(format!(
            "tt-metal firmware's bank tables ({} bytes) exceed MEM_BANK_TO_NOC_SIZE ({})",
            xy.len(),
            table.size
        )));
    }
    write_u8s(dev, 0, tile, table.start, &xy)
}

/// The firmware's DRAM and L1 bank counts: the sizes of its `dram_bank_to_noc_xy` and
/// `l1_bank_to_noc_xy` tables (a 16-bit x/y per bank and NoC).
pub fn bank_counts(fw: &Firmware) -> Result<(u32, u32), EmuError> {
    use object::{Object, ObjectSymbol};
    let (_, path, bytes) = &fw.elves[Risc::Brisc.index()];
    let err = |m: String| EmuError::Config(format!("tt-metal firmware {}: {m}", path.display()));
    let file = object::File::parse(&bytes[..]).map_err(|e| err(e.to_string()))?;
    let size = |name: &str| {
        file.symbols()
            .find(|s| s.name().ok() == Some(name))
            .map(|s| (s.size() / 4) as u32)
            .filter(|&n| n > 0)
            .ok_or_else(|| err(format!("no {name} table")))
    };
    Ok((size("dram_bank_to_noc_xy")?, size("l1_bank_to_noc_xy")?))
}

/// Checks a program before anything is written.
fn validate(p: &Program<'_>, arch: Arch) -> Result<(), EmuError> {
    let cfg = |m: String| EmuError::Config(format!("tt-metal program: {m}"));
    if p.cores.is_empty() {
        return Err(cfg("no cores".into()));
    }
    for (i, c) in p.cores.iter().enumerate() {
        if p.cores[..i].contains(c) {
            return Err(cfg(format!("core {c} is listed twice")));
        }
    }
    if p.kernels.is_empty() {
        return Err(cfg("no kernels".into()));
    }
    for (i, k) in p.kernels.iter().enumerate() {
        if p.kernels[..i].iter().any(|o| o.risc == k.risc) {
            return Err(cfg(format!("two kernels on {}", k.risc)));
        }
        if k.args.len() != p.cores.len() {
            return Err(cfg(format!(
                "kernel {}: runtime arguments for {} cores, the program has {}",
                k.name,
                k.args.len(),
                p.cores.len()
            )));
        }
        for (c, a) in p.cores.iter().zip(&k.args) {
            if a.len() > MAX_ARGS {
                return Err(cfg(format!(
                    "kernel {} on {c}: {} runtime arguments, at most {MAX_ARGS}",
                    k.name,
                    a.len()
                )));
            }
        }
        if k.common_args.len() > MAX_ARGS {
            return Err(cfg(format!(
                "kernel {}: {} common runtime arguments, at most {MAX_ARGS}",
                k.name,
                k.common_args.len()
            )));
        }
    }
    if p.semaphores.len() > MAX_SEMAPHORES {
        return Err(cfg(format!(
            "{} semaphores, at most {MAX_SEMAPHORES}",
            p.semaphores.len()
        )));
    }
    let num_cbs = tt_metal::num_circular_buffers(arch);
    for (i, cb) in p.cbs.iter().enumerate() {
        if cb.index >= num_cbs {
            return Err(cfg(format!(
                "circular buffer {}: indices on {arch} are 0..{num_cbs}",
                cb.index
            )));
        }
        if p.cbs[..i].iter().any(|o| o.index == cb.index) {
            return Err(cfg(format!("circular buffer {} twice", cb.index)));
        }
        if cb.page_size == 0 || cb.page_size % L1_ALIGNMENT != 0 || cb.pages == 0 {
            return Err(cfg(format!(
                "circular buffer {}: page size {} (a positive multiple of {L1_ALIGNMENT}) and \
                 {} pages (positive)",
                cb.index, cb.page_size, cb.pages
            )));
        }
    }
    Ok(())
}

/// Whether [`run_program`] would take `p` on `arch`: its cores, kernels, arguments,
/// semaphores and circular buffers (each in L1), and every kernel linked where its RISC
/// runs, its image inside the kernel configuration buffer and apart from the others'
/// (Wormhole's NCRISC image too). Nothing is written: a program refused here is refused before it runs.
pub fn check(p: &Program<'_>, arch: Arch) -> Result<(), EmuError> {
    checked(p, arch).map(|_| ())
}

/// What [`run_program`] writes of a program it takes ([`checked`]).
struct Checked {
    /// The kernels' images, in the order of [`Program::kernels`].
    images: Vec<Image>,
    /// Where Wormhole NCRISC's image goes in the buffer ([`place`]).
    ncrisc_at: Option<u32>,
    /// Each circular buffer's L1 address ([`place_cbs`]).
    cb_addresses: Vec<u32>,
}

/// [`check`], with what the run writes.
fn checked(p: &Program<'_>, arch: Arch) -> Result<Checked, EmuError> {
    validate(p, arch)?;
    let images = p.kernels.iter().map(image).collect::<Result<Vec<_>, _>>()?;
    let ncrisc_at = place(&p.kernels, &images, arch)?;
    let cb_addresses = place_cbs(arch, &p.cbs)?;
    Ok(Checked {
        images,
        ncrisc_at,
        cb_addresses,
    })
}

/// Where [`run_program`] places the circular buffers `cbs` on `arch`: from
/// `l1_unreserved_start`, each 32-byte aligned. Their start addresses, and one past the last
/// one's end.
fn cb_layout(arch: Arch, cbs: &[CircularBuffer]) -> (Vec<u64>, u64) {
    let mut at = tt_metal::l1_map(arch).kernel_config.end();
    let mut starts = Vec::with_capacity(cbs.len());
    for cb in cbs {
        at = at.div_ceil(32) * 32;
        starts.push(at);
        at += cb.page_size as u64 * cb.pages as u64;
    }
    (starts, at)
}

/// One past the last byte of the circular buffers `cbs` as [`run_program`] places them on
/// `arch` (from `l1_unreserved_start`, 32-byte aligned): where L1 is free again above them.
pub fn cbs_end(arch: Arch, cbs: &[CircularBuffer]) -> u64 {
    cb_layout(arch, cbs).1
}

/// Places the circular buffers in L1 ([`cb_layout`]); each must fit in L1.
fn place_cbs(arch: Arch, cbs: &[CircularBuffer]) -> Result<Vec<u32>, EmuError> {
    let l1 = arch.l1_size() as u64;
    let (starts, _) = cb_layout(arch, cbs);
    starts
        .iter()
        .zip(cbs)
        .map(|(&at, cb)| {
            let size = cb.page_size as u64 * cb.pages as u64;
            if at + size > l1 {
                return Err(EmuError::Config(format!(
                    "tt-metal program: circular buffer {} ({size} bytes at {at:#x}) does not \
                     fit in L1 ({l1:#x} bytes)",
                    cb.index
                )));
            }
            Ok(at as u32)
        })
        .collect()
}

/// Boots the firmware on every core of `p` not booted yet (a core that ran an earlier
/// program keeps its firmware, waiting), dispatches `p` to them by slow dispatch, waits
/// for every core's done and for the firmwares to wait again. The caller wrote the DRAM
/// buffers before, and reads the outputs after.
pub fn run_program(
    dev: &mut Device,
    fw: &Firmware,
    p: &Program<'_>,
) -> Result<ProgramRun, EmuError> {
    run_program_with(dev, fw, p, &mut |_| Ok(()))
}

/// [`run_program`], calling `host` at every look of the host (every
/// [`super::dispatch::HOST_POLL_CYCLES`] cycles, the tiles paused), e.g. to drain the
/// profiler's rings; an error from it ends the run and is returned.
pub fn run_program_with(
    dev: &mut Device,
    fw: &Firmware,
    p: &Program<'_>,
    host: &mut dyn FnMut(&Device) -> Result<(), EmuError>,
) -> Result<ProgramRun, EmuError> {
    let arch = dev.arch();
    let mb = msgs::mailboxes(arch);
    let Checked {
        images,
        ncrisc_at,
        cb_addresses,
    } = checked(p, arch)?;
    let (dram_banks, l1_banks) = bank_counts(fw)?;
    // Faults and reports inside a kernel name the kernel's functions and lines, not the
    // firmware's.
    for &tile in &p.cores {
        for (k, img) in p.kernels.iter().zip(&images) {
            let range = img.entry..img.entry.wrapping_add(img.text_len());
            dev.name_launched_kernel(0, tile, k.risc, range, k.elf, &k.name)?;
        }
    }
    let mut booting = false;
    for &tile in &p.cores {
        if !waiting(dev, tile)? {
            fw.load(dev, 0, tile)?;
            write_bank_tables(dev, tile, dram_banks, l1_banks)?;
            booting = true;
        }
    }
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Phase {
        Booting,
        Running,
        Done,
    }
    let mut phases = vec![Phase::Booting; p.cores.len()];
    let (mut cycles, mut booted, mut go_at, mut done_at) = (0u64, 0u64, 0u64, 0u64);
    let mut settle = 3u32;
    let mut failure: Option<EmuError> = None;
    let summary = dev.run_until(super::dispatch::HOST_POLL_CYCLES, &mut |d| {
        cycles += super::dispatch::HOST_POLL_CYCLES;
        let mut step = || -> Result<bool, EmuError> {
            host(d)?;
            let mut signals = Vec::with_capacity(p.cores.len());
            for &tile in &p.cores {
                signals.push(read_u8(d, 0, tile, mb.go_signal(0))?);
            }
            let all_booted = phases.iter().all(|&ph| ph != Phase::Booting)
                || signals.iter().all(|&s| s == msgs::RUN_MSG_DONE);
            if phases[0] == Phase::Booting && all_booted {
                booted = if booting { cycles } else { 0 };
                for (i, &tile) in p.cores.iter().enumerate() {
                    write_core(d, tile, i, p, &images, ncrisc_at, &cb_addresses)?;
                }
                // The go messages last, as tt-metal's host writes them.
                for &tile in &p.cores {
                    write_u8s(d, 0, tile, mb.go_signal(0), &[msgs::RUN_MSG_GO])?;
                }
                go_at = cycles;
                phases.fill(Phase::Running);
                return Ok(false);
            }
            if phases[0] == Phase::Booting {
                if cycles > super::dispatch::HOST_TIMEOUT_CYCLES {
                    let i = signals.iter().position(|&s| s != msgs::RUN_MSG_DONE);
                    let tile = p.cores[i.unwrap_or(0)];
                    let pc = d.hart_registers(0, tile, Risc::Brisc)?.0;
                    return Err(EmuError::Config(format!(
                        "tt-metal firmware on {tile}: no done from boot after {} cycles \
                         (BRISC pc {pc:#x})",
                        super::dispatch::HOST_TIMEOUT_CYCLES
                    )));
                }
                return Ok(false);
            }
            for (i, &s) in signals.iter().enumerate() {
                if phases[i] == Phase::Running && s == msgs::RUN_MSG_DONE {
                    phases[i] = Phase::Done;
                }
            }
            if phases.iter().all(|&ph| ph == Phase::Done) {
                if done_at == 0 {
                    done_at = cycles;
                }
                // A few more looks: the firmwares are back in their wait for a go message.
                if settle == 0 {
                    return Ok(true);
                }
                settle -= 1;
            } else if cycles - go_at > super::dispatch::HOST_TIMEOUT_CYCLES {
                let i = phases.iter().position(|&ph| ph != Phase::Done).unwrap_or(0);
                let tile = p.cores[i];
                let mut pcs = String::new();
                for k in &p.kernels {
                    let pc = d.hart_registers(0, tile, k.risc)?.0;
                    pcs += &format!(", {} pc {pc:#x}", k.risc);
                }
                return Err(EmuError::Config(format!(
                    "tt-metal program on {tile}: no done after {} cycles (go signal {:#04x}{pcs})",
                    super::dispatch::HOST_TIMEOUT_CYCLES,
                    signals[i]
                )));
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
    if done_at == 0 {
        return Err(EmuError::Config(
            "tt-metal program: every core halted before done".into(),
        ));
    }
    Ok(ProgramRun {
        booted,
        kernel: done_at - go_at,
        cb_addresses,
        summary,
    })
}

/// Whether tt-metal's firmware on `tile` has booted and waits for a go message, as after an
/// earlier program: the host's magic in `core_info` and the go signal back at done. The
/// firmware then stays (tt-metal's host boots it once, at device start); a core whose go
/// signal is anything else after boot is still running a program, and refused.
fn waiting(dev: &Device, tile: NocCoord) -> Result<bool, EmuError> {
    let mb = msgs::mailboxes(dev.arch());
    let magic = dev.read_u32(0, tile, mb.core_info + msgs::core_info::CORE_MAGIC_NUMBER)?;
    if magic != msgs::WORKER_MAGIC {
        return Ok(false);
    }
    match read_u8(dev, 0, tile, mb.go_signal(0))? {
        msgs::RUN_MSG_DONE => Ok(true),
        s => Err(EmuError::Config(format!(
            "tt-metal program: core {tile} has not finished its last program (go signal {s:#04x})"
        ))),
    }
}

/// Writes core `i`'s kernel configuration buffer and launch message 0.
fn write_core(
    d: &Device,
    tile: NocCoord,
    i: usize,
    p: &Program<'_>,
    images: &[Image],
    ncrisc_at: Option<u32>,
    cb_addresses: &[u32],
) -> Result<(), EmuError> {
    let arch = d.arch();
    let base = super::kernel_buffer::config_base(arch);
    let words = |at: u32, v: &[u32]| -> Result<(), EmuError> {
        for (j, w) in v.iter().enumerate() {
            d.write_u32(0, tile, at + 4 * j as u32, *w)?;
        }
        Ok(())
    };
    let launch = msgs::mailboxes(arch).launch_msg(0);
    for off in (0..msgs::LAUNCH_MSG_SIZE).step_by(4) {
        d.write_u32(0, tile, launch + off, 0)?;
    }
    let lw = |off: u32, v: u32| d.write_u32(0, tile, launch + off, v);
    let lb = |off: u32, v: &[u8]| write_u8s(d, 0, tile, launch + off, v);
    let mut enables = 0u32;
    for (k, img) in p.kernels.iter().zip(images) {
        let proc = k.risc.index() as u32;
        let own = base + ARGS + ARGS_STRIDE * proc;
        words(own, &k.args[i])?;
        words(own + COMMON_ARGS, &k.common_args)?;
        let rta = (own - base) as u16;
        let crta = rta + COMMON_ARGS as u16;
        let mut both = rta.to_le_bytes().to_vec();
        both.extend_from_slice(&crta.to_le_bytes());
        lb(msgs::launch::RTA_OFFSET + 4 * proc, &both)?;
        // Where the image's load addresses land in L1: BRISC's where they are; NCRISC's
        // (linked in its instruction RAM) at its place in the buffer.
        let shift = match (k.risc, ncrisc_at) {
            (Risc::Ncrisc, Some(at)) => {
                let units = img.text_len().div_ceil(16) as u16;
                lb(msgs::launch::NCRISC_KERNEL_SIZE16, &units.to_le_bytes())?;
                at.wrapping_sub(img.entry)
            }
            _ => 0,
        };
        for (addr, data) in &img.segments {
            write_u8s(d, 0, tile, addr.wrapping_add(shift), data)?;
        }
        lw(
            msgs::launch::KERNEL_TEXT_OFFSET + 4 * proc,
            img.entry.wrapping_add(shift).wrapping_sub(base),
        )?;
        let size: usize = img.segments.iter().map(|(_, v)| v.len()).sum();
        lw(msgs::launch::KERNEL_TEXT_SIZE + 4 * proc, size as u32)?;
        enables |= 1 << proc;
    }
    for (j, v) in p.semaphores.iter().enumerate() {
        d.write_u32(0, tile, base + SEMAPHORES + L1_ALIGNMENT * j as u32, *v)?;
    }
    let mut mask = 0u64;
    for (cb, &addr) in p.cbs.iter().zip(cb_addresses) {
        let at = base + LOCAL_CBS + 16 * u32::from(cb.index);
        words(at, &[addr, cb.page_size * cb.pages, cb.pages, cb.page_size])?;
        mask |= 1 << cb.index;
    }
    lw(msgs::launch::KERNEL_CONFIG_BASE, base)?;
    lb(msgs::launch::SEM_OFFSET, &(SEMAPHORES as u16).to_le_bytes())?;
    lb(
        msgs::launch::LOCAL_CB_OFFSET,
        &(LOCAL_CBS as u16).to_le_bytes(),
    )?;
    lb(
        msgs::launch::REMOTE_CB_OFFSET,
        &(REMOTE_CBS as u16).to_le_bytes(),
    )?;
    lw(msgs::launch::LOCAL_CB_MASK, mask as u32)?;
    lw(msgs::launch::LOCAL_CB_MASK + 4, (mask >> 32) as u32)?;
    lw(msgs::launch::HOST_ASSIGNED_ID, p.host_assigned_id)?;
    lw(msgs::launch::ENABLES, enables)?;
    lb(msgs::launch::MODE, &[msgs::DISPATCH_MODE_HOST])?;
    lb(msgs::launch::BRISC_NOC_ID, &[0])?;
    lb(msgs::launch::BRISC_NOC_MODE, &[0])?;
    lb(
        msgs::launch::MIN_REMOTE_CB_START_INDEX,
        &[tt_metal::num_circular_buffers(arch)],
    )
}
