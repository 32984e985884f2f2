//! The device: chips of tiles, their shared device-memory image, and loading kernels.
//!
//! Running is in [`crate::chip::run`], host access to L1 in [`crate::chip::host`], the clock-sync
//! samples in [`crate::time::sync`].

use crate::bus::L1;
use crate::chip::executor::Executor;
use crate::chip::image::Image;
use crate::chip::loader::{Program, Target};
use crate::chip::memory::TileMem;
use crate::chip::tile::Tile;
use crate::config::DeviceConfig;
use crate::devices::Devices;
use crate::error::EmuError;
use crate::isa::hart::{Hart, HartState};
use crate::noc::niu::{Niu, Topology};
use crate::noc::ChipNoc;
use crate::tensix::dst::Dst;
use crate::time::clock::ClockTruth;
use crate::time::mailbox::{Context, Published, Responder};
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, Layout, MemoryMap, NocCoord, Region, Risc};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};

/// A chip model: `chips` chips of `grid` Tensix tiles with five cores each.
pub struct Device {
    pub(crate) cfg: DeviceConfig,
    /// Chip-major, then the order of [`Device::tiles`].
    pub(crate) tiles: Vec<Tile>,
    /// Tile coordinates of one chip, in image order.
    pub(crate) coords: Vec<NocCoord>,
    /// Each chip's counter: the chip cycle the next run starts at (at least).
    pub(crate) chip_time: Vec<u64>,
    /// Virtual host time in ns, consistent with the chips' counters.
    pub(crate) host: Mutex<crate::time::sync::HostClock>,
    pub(crate) bytes_read: AtomicU64,
    /// Each chip's NoC and DRAM.
    pub(crate) noc: Vec<ChipNoc>,
    /// The NoC is in use in the current run: tiles run in epochs (see [`crate::noc`]).
    pub(crate) noc_on: bool,
    /// A host has posted register writes through the image: runs look for more every
    /// few thousand cycles (`run.rs`, `POSTED_STEP`).
    pub(crate) posted_seen: bool,
    /// Host threads available (looked up on first use).
    pub(crate) host_threads: std::sync::OnceLock<usize>,
    programs: HashMap<(u64, usize, Risc, String), Arc<Program>>,
    /// Virtual host time as the clock mailbox responder sees it.
    pub(crate) published: Published,
    /// Answers the image's clock mailbox. Declared before `image` so that it is dropped
    /// (its thread stopped and joined) before the mapping it writes into goes away.
    _mailbox: Option<Responder>,
    pub(crate) image: Image,
    /// Wall-clock limit of every run ([`Device::set_deadline`]).
    pub(crate) deadline: Option<std::time::Instant>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("arch", &self.cfg.arch)
            .field("chips", &self.cfg.chips)
            .field("grid", &self.cfg.grid)
            .field("image", &self.image.path())
            .finish_non_exhaustive()
    }
}

impl Device {
    /// Builds the device and creates its device-memory image file.
    pub fn new(cfg: DeviceConfig) -> Result<Device, EmuError> {
        let arch = cfg.arch;
        let (max_c, max_r) = arch.worker_grid();
        let (cols, rows) = cfg.grid;
        if cols == 0 || rows == 0 || cols > max_c || rows > max_r {
            return Err(EmuError::Config(format!(
                "grid {cols}x{rows} does not fit {arch}'s {max_c}x{max_r} worker grid (and must not be empty)"
            )));
        }
        if cfg.chips == 0 {
            return Err(EmuError::Config("a device needs at least one chip".into()));
        }
        let maps = layout_maps(cfg.layout, arch);
        if cfg.quantum == 0 || cfg.instruction_budget == 0 {
            return Err(EmuError::Config(
                "quantum and instruction_budget must be positive".into(),
            ));
        }
        let mut coords = Vec::new();
        for row in 0..rows {
            for col in 0..cols {
                coords.push(
                    arch.worker_noc(col, row)
                        .ok_or_else(|| EmuError::Config("grid outside the arch".into()))?,
                );
            }
        }
        let geometry = Geometry {
            arch,
            chips: cfg.chips,
            tiles_per_chip: coords.len() as u32,
            l1_size: arch.l1_size(),
        };
        let image = Image::create(cfg.image.as_deref(), geometry, &coords)?;
        let offsets = cfg.clock.offsets(cfg.chips as usize * coords.len());
        let code = code_regions(&maps);
        let code_end = code.iter().map(|(r, _)| r.end() as u32).max().unwrap_or(0);
        let mut tiles = Vec::with_capacity(offsets.len());
        let topo = Arc::new(Topology {
            arch,
            tiles: coords
                .iter()
                .enumerate()
                .map(|(i, &c)| (c, i as u32))
                .collect(),
            l1_size: arch.l1_size(),
            cfg: cfg.noc,
            translation: cfg.layout == riscv_linker::Layout::TtMetal,
        });
        let mut noc = Vec::new();
        for chip in 0..cfg.chips {
            let base = chip as usize * coords.len();
            let map = coords
                .iter()
                .enumerate()
                .map(|(i, &c)| (c, base + i))
                .collect();
            noc.push(ChipNoc::new(arch, cfg.noc, map));
        }
        for chip in 0..cfg.chips {
            for (i, &coord) in coords.iter().enumerate() {
                let global = tiles.len();
                let mut mem = TileMem {
                    l1: image.l1(chip, i as u32),
                    code: code.clone(),
                    code_end,
                    regs: Devices::new(offsets[global]),
                    timing: cfg.timing,
                    misaligned: cfg.misaligned,
                    niu: cfg
                        .noc
                        .enabled
                        .then(|| Box::new(Niu::new(topo.clone(), global, coord))),
                    risc: Risc::Brisc,
                };
                mem.regs.tensix.attach_l1(mem.l1);
                mem.regs.tensix.set_numerics(cfg.numerics);
                mem.regs.perf_counters.arch = arch;
                tiles.push(Tile {
                    chip,
                    coord,
                    global,
                    harts: maps.iter().map(|&m| Hart::new(m)).collect(),
                    executors: Risc::ALL.iter().map(|_| Executor::default()).collect(),
                    kernels: vec![None; Risc::ALL.len()],
                    launched: vec![None; Risc::ALL.len()],
                    mem,
                    zicsr: arch == Arch::Blackhole,
                    quantum: cfg.quantum as u64,
                    budget: cfg.instruction_budget,
                    now: 0,
                    run_start: 0,
                    code_dirty: AtomicBool::new(false),
                    ports: [0; 3],
                    brisc_boots: cfg.layout == Layout::TtMetal,
                    holds: vec![Default::default(); Risc::ALL.len()],
                });
            }
        }
        // Host time starts when the last chip came out of reset.
        let start_ns = (0..cfg.chips)
            .map(|c| cfg.clock.chip(c).reset_host_ns)
            .fold(0.0, f64::max);
        let host = Mutex::new(crate::time::sync::HostClock::new(
            cfg.clock.host_read.seed,
            start_ns,
        ));
        let published = Published::new(start_ns);
        let mailbox = if cfg.clock_mailbox {
            let ctx = Context {
                chips: (0..cfg.chips).map(|c| cfg.clock.chip(c)).collect(),
                dvfs: (0..cfg.chips)
                    .map(|c| cfg.clock.steps(c).to_vec())
                    .collect(),
                nominal_mhz: arch.aiclk_mhz() as f64,
                host_read: cfg.clock.host_read,
                coords: coords.clone(),
                offsets,
            };
            // SAFETY: the mailbox lies in the image's header mapping, which `image` keeps
            // alive; the responder is dropped before `image` (field order of `Device`).
            Some(unsafe { Responder::start(ctx, image.mailbox(), published.clone()) }?)
        } else {
            None
        };
        Ok(Device {
            chip_time: vec![0; cfg.chips as usize],
            cfg,
            tiles,
            coords,
            host,
            bytes_read: AtomicU64::new(0),
            noc,
            noc_on: false,
            posted_seen: false,
            host_threads: std::sync::OnceLock::new(),
            programs: HashMap::new(),
            published,
            _mailbox: mailbox,
            image,
            deadline: None,
        })
    }

    /// What the device was built from.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// The chips' generation.
    pub fn arch(&self) -> Arch {
        self.cfg.arch
    }

    /// The NoC coordinates of one chip's tiles, in image order (row by row from logical
    /// (0,0)). Every chip has the same list.
    pub fn tiles(&self) -> Vec<NocCoord> {
        self.coords.clone()
    }

    /// The layout of the device-memory image.
    pub fn geometry(&self) -> Geometry {
        self.image.geometry()
    }

    /// Path of the device-memory image file (map it read-only to watch L1 live).
    pub fn image_path(&self) -> &Path {
        self.image.path()
    }

    /// Index in `self.tiles` of `tile` on `chip`.
    pub(crate) fn tile_index(&self, chip: u32, tile: NocCoord) -> Result<usize, EmuError> {
        if chip >= self.cfg.chips {
            return Err(EmuError::Config(format!(
                "chip {chip} does not exist (the device has {})",
                self.cfg.chips
            )));
        }
        let i = self.coords.iter().position(|&c| c == tile).ok_or_else(|| {
            EmuError::Config(format!(
                "tile {tile} is not a worker tile of this {}x{} grid",
                self.cfg.grid.0, self.cfg.grid.1
            ))
        })?;
        Ok(chip as usize * self.coords.len() + i)
    }

    /// Names the addresses `[start, end)` of `risc` on `tile` by the kernel ELF `elf_bytes`
    /// from now on (in faults, deadlock reports, line tables): a kernel the core's firmware
    /// runs from there, which its host wrote (tt-metal's dispatch). Nothing is loaded.
    pub fn name_launched_kernel(
        &mut self,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
        range: std::ops::Range<u32>,
        elf_bytes: &[u8],
        elf_name: &str,
    ) -> Result<(), EmuError> {
        let index = self.tile_index(chip, tile)?;
        let program = Program::names_only(elf_bytes, elf_name)?;
        self.tiles[index].launched[risc.index()] =
            Some((range.start, range.end, std::sync::Arc::new(program)));
        Ok(())
    }

    /// Checks `elf_bytes` for `risc` and writes its segments into `tile`'s L1 and the
    /// core's local RAM. The core stays in reset until [`Device::run`].
    pub fn load_kernel(
        &mut self,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
        elf_bytes: &[u8],
        elf_name: &str,
    ) -> Result<(), EmuError> {
        let index = self.tile_index(chip, tile)?;
        let program = self.program(risc, elf_bytes, elf_name)?;
        let t = &mut self.tiles[index];
        let l1 = t.mem.l1;
        let hart = t.hart_mut(risc);
        let mut local = vec![0u8; hart.map.local_ram.size as usize];
        for s in &program.segments {
            match s.target {
                Target::L1 => {
                    let bytes = s
                        .data
                        .iter()
                        .chain(std::iter::repeat_n(&0u8, s.zeros as usize));
                    for (a, &b) in (s.addr..).zip(bytes) {
                        l1.store::<1>(a, b as u32);
                    }
                }
                Target::LocalRam => {
                    let off = (s.addr - hart.map.local_ram.start) as usize;
                    local[off..off + s.data.len()].copy_from_slice(&s.data);
                    // tt-metal's firmware copies its `.data` in from L1 at boot.
                    if let Some(base) = hart.map.local_init {
                        for (a, &b) in (base + off as u32..).zip(&s.data) {
                            l1.store::<1>(a, b as u32);
                        }
                    }
                }
            }
        }
        hart.install(&l1);
        hart.local = local;
        let i = risc.index();
        t.kernels[i] = Some(program);
        if self.cfg.lines {
            t.executors[i].disable_jit();
            t.harts[i].enable_lines();
        }
        if self.cfg.jit {
            t.executors[i].enable_jit(&t.harts[i], &t.mem);
        }
        Ok(())
    }

    /// Takes the kernel off a core: it stays in reset in the next runs until a kernel is
    /// loaded again (a launch that does not use every core must not rerun the last one's).
    pub fn unload_kernel(&mut self, chip: u32, tile: NocCoord, risc: Risc) -> Result<(), EmuError> {
        let index = self.tile_index(chip, tile)?;
        self.tiles[index].hart_mut(risc).state = HartState::Empty;
        Ok(())
    }

    /// Parses an ELF, reusing the result when the same bytes were loaded for the same core
    /// before (a grid usually runs one kernel on every tile).
    fn program(&mut self, risc: Risc, bytes: &[u8], name: &str) -> Result<Arc<Program>, EmuError> {
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        let key = (h.finish(), bytes.len(), risc, name.to_string());
        if let Some(p) = self.programs.get(&key) {
            return Ok(p.clone());
        }
        let p = Arc::new(Program::parse(bytes, name, &self.tiles[0].hart(risc).map)?);
        self.programs.insert(key, p.clone());
        Ok(p)
    }

    /// The state of one core.
    pub fn hart_state(&self, chip: u32, tile: NocCoord, risc: Risc) -> Result<HartState, EmuError> {
        Ok(self.tiles[self.tile_index(chip, tile)?].hart(risc).state)
    }

    /// The architectural state of one core after a run: `(pc, x0..x31)`.
    pub fn hart_registers(
        &self,
        chip: u32,
        tile: NocCoord,
        risc: Risc,
    ) -> Result<(u32, [u32; 32]), EmuError> {
        let h = self.tiles[self.tile_index(chip, tile)?].hart(risc);
        let mut regs = [0u32; 32];
        regs.copy_from_slice(&h.core.regs[..32]);
        Ok((h.core.pc, regs))
    }

    /// `tile`'s Tensix `Dst` register.
    fn dst(&self, chip: u32, tile: NocCoord) -> Result<&Dst, EmuError> {
        Ok(&self.tiles[self.tile_index(chip, tile)?].mem.regs.tensix.dst)
    }

    /// `tile`'s Tensix `Dst` register, to write (between runs).
    fn dst_mut(&mut self, chip: u32, tile: NocCoord) -> Result<&mut Dst, EmuError> {
        let i = self.tile_index(chip, tile)?;
        Ok(&mut self.tiles[i].mem.regs.tensix.dst)
    }

    /// `Dst16b[row][col]` of `tile`'s Tensix coprocessor (`row` modulo 1024, `col` below
    /// 16): the destination register as stored, for tests and tools that inspect it
    /// directly (floating-point data is kept with the mantissa before the exponent, see
    /// `Dst.md`).
    pub fn tensix_dst16(
        &self,
        chip: u32,
        tile: NocCoord,
        row: usize,
        col: usize,
    ) -> Result<u16, EmuError> {
        Ok(self.dst(chip, tile)?.read16(row, dst_col(col)?))
    }

    /// Writes `Dst16b[row][col]` of `tile`'s Tensix coprocessor (between runs), for tests
    /// and tools that fill the destination register without the unpackers.
    pub fn set_tensix_dst16(
        &mut self,
        chip: u32,
        tile: NocCoord,
        row: usize,
        col: usize,
        value: u16,
    ) -> Result<(), EmuError> {
        let col = dst_col(col)?;
        self.dst_mut(chip, tile)?.write16(row, col, value);
        Ok(())
    }

    /// `Dst32b[row][col]` of `tile`'s Tensix coprocessor: the 32-bit view of the same
    /// cells (each datum split over two rows eight apart, `Dst.md`).
    pub fn tensix_dst32(
        &self,
        chip: u32,
        tile: NocCoord,
        row: usize,
        col: usize,
    ) -> Result<u32, EmuError> {
        Ok(self.dst(chip, tile)?.read32(row, dst_col(col)?))
    }

    /// Writes `Dst32b[row][col]` of `tile`'s Tensix coprocessor (between runs).
    pub fn set_tensix_dst32(
        &mut self,
        chip: u32,
        tile: NocCoord,
        row: usize,
        col: usize,
        value: u32,
    ) -> Result<(), EmuError> {
        let col = dst_col(col)?;
        self.dst_mut(chip, tile)?.write32(row, col, value);
        Ok(())
    }

    /// `tile`'s L1, once `len` bytes from `addr` are checked to lie inside it.
    fn l1_span(&self, chip: u32, tile: NocCoord, addr: u32, len: usize) -> Result<L1, EmuError> {
        let l1 = self.tiles[self.tile_index(chip, tile)?].mem.l1;
        let end = addr as u64 + len as u64;
        if end > l1.size() as u64 {
            return Err(EmuError::Config(format!(
                "L1 bytes {addr:#x}..{end:#x} are past the end of L1 ({:#x} bytes)",
                l1.size()
            )));
        }
        Ok(l1)
    }

    /// Copies `out.len()` bytes of `tile`'s L1 at `addr` into `out` (between runs).
    pub fn read_l1(
        &self,
        chip: u32,
        tile: NocCoord,
        addr: u32,
        out: &mut [u8],
    ) -> Result<(), EmuError> {
        self.l1_span(chip, tile, addr, out.len())?
            .read_into(addr, out);
        Ok(())
    }

    /// Writes `bytes` into `tile`'s L1 at `addr` (between runs; input data for kernels).
    pub fn write_l1(
        &mut self,
        chip: u32,
        tile: NocCoord,
        addr: u32,
        bytes: &[u8],
    ) -> Result<(), EmuError> {
        let l1 = self.l1_span(chip, tile, addr, bytes.len())?;
        for (k, &b) in bytes.iter().enumerate() {
            l1.store::<1>(addr + k as u32, b as u32);
        }
        Ok(())
    }

    /// A copy of one core's local RAM (empty if no kernel is loaded).
    pub fn local_ram(&self, chip: u32, tile: NocCoord, risc: Risc) -> Result<Vec<u8>, EmuError> {
        Ok(self.tiles[self.tile_index(chip, tile)?]
            .hart(risc)
            .local
            .clone())
    }

    /// The wall clock of `tile` now (between runs): the chip counter plus the tile offset.
    pub fn wall_clock(&self, chip: u32, tile: NocCoord) -> Result<u64, EmuError> {
        let t = &self.tiles[self.tile_index(chip, tile)?];
        Ok(t.mem.regs.wall(self.chip_time[chip as usize]))
    }

    /// The exact clock relation of `tile`, for measuring alignment error in tests.
    pub fn clock_truth(&self, chip: u32, tile: NocCoord) -> Result<ClockTruth, EmuError> {
        let t = &self.tiles[self.tile_index(chip, tile)?];
        Ok(self.truth_of(chip, t.mem.regs.wall_offset))
    }

    pub(crate) fn truth_of(&self, chip: u32, offset: u64) -> ClockTruth {
        self.cfg
            .clock
            .truth(chip, self.cfg.arch.aiclk_mhz() as f64, offset)
    }
}

/// The memory maps of the five cores under `layout`, in [`Risc::ALL`] order.
fn layout_maps(layout: Layout, arch: Arch) -> Vec<MemoryMap> {
    Risc::ALL
        .iter()
        .map(|&r| layout.memory_map(arch, r))
        .collect()
}

/// Every code region of a tile (and the boot word), with its owner: what the cores may
/// not store into.
fn code_regions(maps: &[MemoryMap]) -> Vec<(Region, Risc)> {
    let mut v = Vec::new();
    for m in maps {
        let r = m.risc;
        v.push((m.code, r));
        if let Some(b) = m.boot {
            v.push((b, r));
        }
    }
    v
}

/// A `Dst` column index, checked.
fn dst_col(col: usize) -> Result<usize, EmuError> {
    if col < crate::tensix::dst::COLS {
        Ok(col)
    } else {
        Err(EmuError::Config(format!(
            "Dst column {col} does not exist (16 columns)"
        )))
    }
}
