//! A fake tt-kmd card for tests: [`FakeDriver`] implements [`Driver`] over any
//! [`DeviceMemory`] (typically the emulator's [`crate::devmem::MappedImage`] of a running
//! emulator), so the real backend code above the trait runs against live rings.
//!
//! It holds the driver to the rules the real one keeps: window sizes and counts per arch
//! (ENOMEM when none of the size is free; EINVAL for a size the arch has not), windows
//! must be allocated before they are configured or mapped (EPERM), a configured address
//! must be aligned to the window size (EINVAL), FREE_TLB of a mapped window is EBUSY. Its
//! NoC routes what a window is pointed at like the card it models: with translation on,
//! the programmed coordinate is a translated one ([`TileMap::translated_to_noc0`]), and a
//! window pointed at a harvested or non-Tensix tile is counted as misdirected. Registers:
//! `NOC_NODE_ID`, and the wall clock (`WALL_CLOCK_L` latches `H`) from a clock model of host
//! time; the debug daisychain's registers are written through to the memory. Failure modes: [`FakeDriver::set_gone`] (every read returns 0xFFFFFFFF, as a card
//! that went away) and [`FakeDriver::set_bus_fault`] (every access faults, as the SIGBUS
//! guard reports a reset while mapped).

use super::driver::{Driver, DriverInfo, Fault, PciInfo, TlbAlloc};
use super::ioctl::{self, NocTlbConfig};
use crate::devmem::DeviceMemory;
use nix::libc;
use riscv_linker::{mmio, Arch, NocCoord, TileMap};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A wall-clock model: `(tile, host CLOCK_MONOTONIC_RAW ns) -> cycles`.
pub type ClockModel = Arc<dyn Fn(NocCoord, u64) -> u64 + Send + Sync>;

/// What the fake card is.
#[derive(Clone)]
pub struct FakeCard {
    /// The device node the card answers as.
    pub path: PathBuf,
    /// The ioctl API version it reports.
    pub api_version: u32,
    /// Its release (major, minor, patch), when it reports one.
    pub release: Option<(u8, u8, u8)>,
    /// Its PCI identity.
    pub pci: PciInfo,
    /// The card's real harvesting and translation (what its NoC does).
    pub map: TileMap,
    /// The L1 of its workers: chip `chip` of this memory; tiles it lacks read as zeros.
    pub memory: Arc<dyn DeviceMemory>,
    /// Which chip of the memory behind it is this card.
    pub chip: u32,
    /// Windows of ttprof's size not held by someone else (a running tt-metal holds most).
    pub free_windows: usize,
    /// Its wall clock (`None`: clock reads fail).
    pub clock: Option<ClockModel>,
    /// The consumer lock of the card, shared by every driver opened on it.
    pub(crate) consumer_lock: Arc<AtomicBool>,
}

impl FakeCard {
    /// An unharvested `arch` card without translation, API 2 (tt-kmd 2.10.0), every window
    /// free, over chip 0 of `memory`.
    pub fn new(arch: Arch, memory: Arc<dyn DeviceMemory>) -> FakeCard {
        let device_id = match arch {
            Arch::WormholeB0 => ioctl::DEVICE_WORMHOLE,
            Arch::Blackhole => ioctl::DEVICE_BLACKHOLE,
        };
        FakeCard {
            path: PathBuf::from("/dev/tenstorrent/0"),
            api_version: 2,
            release: Some((2, 10, 0)),
            pci: PciInfo {
                vendor_id: ioctl::VENDOR_TENSTORRENT,
                device_id,
                subsystem_vendor_id: ioctl::VENDOR_TENSTORRENT,
                subsystem_id: 0x14,
                domain: 0,
                bus_dev_fn: 0x41 << 8,
            },
            map: TileMap::full(arch),
            memory,
            chip: 0,
            free_windows: window_kinds(arch)[0].1,
            clock: None,
            consumer_lock: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// The window kinds of an arch: `(size, count)`, the kind ttprof uses first.
pub(crate) fn window_kinds(arch: Arch) -> &'static [(u64, usize)] {
    match arch {
        Arch::WormholeB0 => &[(1 << 20, 156), (2 << 20, 10), (16 << 20, 20)],
        Arch::Blackhole => &[(2 << 20, 202), (4 << 30, 8)],
    }
}

#[derive(Clone, Copy, Debug)]
struct Window {
    size: u64,
    mapped: bool,
    config: Option<NocTlbConfig>,
}

#[derive(Default)]
struct State {
    windows: BTreeMap<u32, Window>,
    next_id: u32,
    gone: bool,
    bus_fault: bool,
    configs: Vec<NocTlbConfig>,
    misdirected: u64,
    latched: HashMap<NocCoord, u32>,
    holds_consumer: bool,
}

/// The fake driver of one open of a [`FakeCard`].
pub struct FakeDriver {
    card: FakeCard,
    state: Mutex<State>,
}

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl FakeDriver {
    /// A driver for `card`.
    pub fn new(card: FakeCard) -> FakeDriver {
        FakeDriver {
            card,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The card went away: every read returns 0xFFFFFFFF from now on.
    pub fn set_gone(&self, gone: bool) {
        self.state().gone = gone;
    }

    /// Every access to a mapped window faults (a reset while mapped, after the SIGBUS guard).
    pub fn set_bus_fault(&self, fault: bool) {
        self.state().bus_fault = fault;
    }

    /// Every CONFIGURE_TLB so far, in order.
    pub fn configs(&self) -> Vec<NocTlbConfig> {
        self.state().configs.clone()
    }

    /// Accesses through windows pointed at no unharvested Tensix tile.
    pub fn misdirected(&self) -> u64 {
        self.state().misdirected
    }

    /// `(allocated, mapped)` windows of this open.
    pub fn windows(&self) -> (usize, usize) {
        let s = self.state();
        (
            s.windows.len(),
            s.windows.values().filter(|w| w.mapped).count(),
        )
    }

    /// The NoC0 tile a configured window reaches, if an unharvested worker.
    fn target(&self, c: &NocTlbConfig) -> Option<NocCoord> {
        let programmed = NocCoord::new(u8::try_from(c.x_end).ok()?, u8::try_from(c.y_end).ok()?);
        let noc0 = self.card.map.translated_to_noc0(programmed)?;
        self.card.map.is_worker(noc0).then_some(noc0)
    }

    fn access(&self, id: u32, offset: u64) -> Result<(NocCoord, u64), Fault> {
        let mut s = self.state();
        let w = *s.windows.get(&id).ok_or(Fault::Outside)?;
        if !w.mapped || !offset.is_multiple_of(4) || offset + 4 > w.size {
            return Err(Fault::Outside);
        }
        if s.bus_fault {
            return Err(Fault::Bus);
        }
        let Some(c) = w.config else {
            s.misdirected += 1;
            return Ok((NocCoord::new(0, 0), u64::MAX));
        };
        match self.target(&c) {
            Some(t) => Ok((t, c.addr + offset)),
            None => {
                s.misdirected += 1;
                Ok((NocCoord::new(0, 0), u64::MAX))
            }
        }
    }

    fn has_tile(&self, tile: NocCoord) -> bool {
        self.card.memory.tiles(self.card.chip).contains(&tile)
    }
}

impl Driver for FakeDriver {
    fn path(&self) -> &Path {
        &self.card.path
    }

    fn driver_info(&self) -> io::Result<DriverInfo> {
        Ok(DriverInfo {
            api_version: self.card.api_version,
            release: self.card.release,
        })
    }

    fn device_info(&self) -> io::Result<PciInfo> {
        Ok(self.card.pci)
    }

    fn allocate_tlb(&self, size: u64) -> io::Result<TlbAlloc> {
        let arch = self.card.map.arch();
        let kinds = window_kinds(arch);
        let Some(kind) = kinds.iter().position(|k| k.0 == size) else {
            return Err(err(libc::EINVAL));
        };
        let available = if kind == 0 {
            self.card.free_windows
        } else {
            kinds[kind].1
        };
        let mut s = self.state();
        if s.windows.values().filter(|w| w.size == size).count() >= available {
            return Err(err(libc::ENOMEM));
        }
        let id = s.next_id;
        s.next_id += 1;
        s.windows.insert(
            id,
            Window {
                size,
                mapped: false,
                config: None,
            },
        );
        Ok(TlbAlloc {
            id,
            size,
            mmap_offset_uc: (6 << 36) | ((id as u64) * size),
        })
    }

    fn free_tlb(&self, id: u32) -> io::Result<()> {
        let mut s = self.state();
        match s.windows.get(&id) {
            None => Err(err(libc::EPERM)),
            Some(w) if w.mapped => Err(err(libc::EBUSY)),
            Some(_) => {
                s.windows.remove(&id);
                Ok(())
            }
        }
    }

    fn configure_tlb(&self, id: u32, config: &NocTlbConfig) -> io::Result<()> {
        let mut s = self.state();
        let Some(w) = s.windows.get_mut(&id) else {
            return Err(err(libc::EPERM));
        };
        if !config.addr.is_multiple_of(w.size) {
            return Err(err(libc::EINVAL));
        }
        w.config = Some(*config);
        s.configs.push(*config);
        Ok(())
    }

    fn map_window(&self, tlb: &TlbAlloc) -> io::Result<()> {
        let mut s = self.state();
        match s.windows.get_mut(&tlb.id) {
            Some(w) if w.size == tlb.size => {
                w.mapped = true;
                Ok(())
            }
            _ => Err(err(libc::EINVAL)),
        }
    }

    fn unmap_window(&self, id: u32) -> io::Result<()> {
        let mut s = self.state();
        match s.windows.get_mut(&id) {
            Some(w) if w.mapped => {
                w.mapped = false;
                Ok(())
            }
            _ => Err(err(libc::EINVAL)),
        }
    }

    fn read_u32(&self, id: u32, offset: u64) -> Result<u32, Fault> {
        let (tile, addr) = self.access(id, offset)?;
        if self.state().gone || addr == u64::MAX {
            return Ok(u32::MAX);
        }
        let arch = self.card.map.arch();
        let now = || super::clock::monotonic_raw_ns();
        Ok(match addr {
            a if a < arch.l1_size() as u64 && self.has_tile(tile) => self
                .card
                .memory
                .read_u32(self.card.chip, tile, a as u32)
                .map_err(|_| Fault::Outside)?,
            a if a == mmio::noc_node_id(arch) as u64 => {
                let (w, h) = arch.noc_grid();
                tile.x as u32 | (tile.y as u32) << 6 | (w as u32) << 12 | (h as u32) << 18
            }
            a if a == mmio::WALL_CLOCK_L as u64 => {
                let cycles = self.card.clock.as_ref().map_or(0, |c| c(tile, now()));
                self.state().latched.insert(tile, (cycles >> 32) as u32);
                cycles as u32
            }
            a if a == mmio::WALL_CLOCK_H as u64 => {
                self.state().latched.get(&tile).copied().unwrap_or(0)
            }
            a if a == mmio::WALL_CLOCK_H_LIVE as u64 => {
                (self.card.clock.as_ref().map_or(0, |c| c(tile, now())) >> 32) as u32
            }
            _ => 0,
        })
    }

    fn write_u32(&self, id: u32, offset: u64, v: u32) -> Result<(), Fault> {
        let (tile, addr) = self.access(id, offset)?;
        if self.state().gone || addr == u64::MAX {
            return Ok(());
        }
        let register = u32::try_from(addr).is_ok_and(mmio::daisychain::is_register);
        if (addr < self.card.map.arch().l1_size() as u64 || register) && self.has_tile(tile) {
            // L1, and the debug daisychain's registers (the memory below takes them: an
            // emulator's image posts them to the emulator process).
            self.card
                .memory
                .write_u32(self.card.chip, tile, addr as u32, v)
                .map_err(|_| Fault::Outside)?;
        }
        Ok(())
    }

    /// The consumer lock is modelled (shared by every driver opened on the card); the other
    /// roles are granted.
    fn try_lock(&self, role: riscv_linker::lock::Role) -> io::Result<bool> {
        if role != riscv_linker::lock::Role::Consumer {
            return Ok(true);
        }
        let mut s = self.state();
        if s.holds_consumer {
            return Ok(true);
        }
        let got = self
            .card
            .consumer_lock
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        s.holds_consumer = got;
        Ok(got)
    }
}

impl Drop for FakeDriver {
    fn drop(&mut self) {
        if self.state().holds_consumer {
            self.card.consumer_lock.store(false, Ordering::Release);
        }
    }
}
