//! [`TtKmd`]: device memory and clocks of one card, over any [`Driver`].
//!
//! Reads go through a small pool of TLB windows (default [`DEFAULT_WINDOWS`]), each
//! allocated, mapped uncached and then pointed (strict ordering) at `(tile, address
//! aligned to the window size)`; the least recently used window is re-pointed when no
//! window already covers an access. A running tt-metal holds most windows (one static
//! window per worker and Ethernet core), so the pool grows only as far as the driver
//! allows: ENOMEM on the first window is an error saying so, ENOMEM later just caps the
//! pool.
//!
//! Only the consumer's words are ever written: each ring's `TAIL` and the tile's
//! `CONSUMER` lease (`riscv_linker::profiler`); any other write is refused.

use super::driver::{Driver, DriverInfo, Fault, PciInfo, TlbAlloc};
use super::ioctl::{self, NocTlbConfig};
use crate::devmem::{check_access, DeviceMemory, TileTable};
use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc, TileMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Windows the pool may hold at most, by default: a readout visits one tile at a time and
/// a tile's profiler words and rings fit in one window, so a few suffice; tt-metal keeps
/// the rest.
pub const DEFAULT_WINDOWS: usize = 4;

/// The window size used on `arch`: the most plentiful kind (Wormhole 156 x 1 MiB,
/// Blackhole 202 x 2 MiB).
pub const fn window_size(arch: Arch) -> u64 {
    match arch {
        Arch::WormholeB0 => 1 << 20,
        Arch::Blackhole => 2 << 20,
    }
}

/// The arch of a PCI device id, or an error naming it.
pub fn arch_of(pci: &PciInfo) -> std::result::Result<Arch, String> {
    match (pci.vendor_id, pci.device_id) {
        (ioctl::VENDOR_TENSTORRENT, ioctl::DEVICE_WORMHOLE) => Ok(Arch::WormholeB0),
        (ioctl::VENDOR_TENSTORRENT, ioctl::DEVICE_BLACKHOLE) => Ok(Arch::Blackhole),
        (v, d) => Err(format!(
            "PCI device {v:04x}:{d:04x} is neither a Wormhole ({:04x}:{:04x}) nor a Blackhole ({:04x}:{:04x}): \
             ttprof reads only those",
            ioctl::VENDOR_TENSTORRENT,
            ioctl::DEVICE_WORMHOLE,
            ioctl::VENDOR_TENSTORRENT,
            ioctl::DEVICE_BLACKHOLE
        )),
    }
}

/// Where the card's harvesting came from, for messages and `ttprof devices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HarvestOrigin {
    /// Not given: every worker assumed present.
    Unknown,
    /// Given as a mask.
    User,
    /// From a tt-metal cluster descriptor (path, chip).
    Descriptor(PathBuf, u32),
}

/// What a card is, as opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardIdentity {
    /// The device node.
    pub path: PathBuf,
    /// Wormhole B0 or Blackhole (from the PCI device id).
    pub arch: Arch,
    /// PCI identity and address.
    pub pci: PciInfo,
    /// The driver's API version and release.
    pub driver: DriverInfo,
    /// The card's tiles: harvesting and coordinates.
    pub map: TileMap,
    /// Where the harvest mask came from.
    pub(crate) harvest_origin: HarvestOrigin,
}

impl CardIdentity {
    /// `rows 4, 8 (user)`, `none (cluster descriptor c.yaml, chip 0)`, `unknown (assumed none)`.
    pub fn harvesting(&self) -> String {
        let lines: Vec<String> = self.map.harvested_lines().map(|l| l.to_string()).collect();
        let what = if lines.is_empty() {
            "none".to_string()
        } else {
            format!(
                "NoC0 {} {}",
                riscv_linker::tilemap::lines_name(self.map.arch()),
                lines.join(", ")
            )
        };
        match &self.harvest_origin {
            HarvestOrigin::Unknown => {
                "unknown (assumed none; give a mask or a tt-metal cluster descriptor)".into()
            }
            HarvestOrigin::User => format!("{what} (mask {:#x}, given)", self.map.mask()),
            HarvestOrigin::Descriptor(p, chip) => {
                format!(
                    "{what} (mask {:#x}, cluster descriptor {} chip {chip})",
                    self.map.mask(),
                    p.display()
                )
            }
        }
    }
}

/// Counts of the window pool, for tests and `describe`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Windows held now.
    pub windows: usize,
    /// The most the pool may hold (lowered when the driver ran out).
    pub limit: usize,
    /// ALLOCATE_TLB calls that succeeded.
    pub allocations: u64,
    /// CONFIGURE_TLB calls (re-pointings).
    pub configures: u64,
}

struct Slot {
    tlb: TlbAlloc,
    /// NoC0 tile and window base it points at.
    target: Option<(NocCoord, u64)>,
    used: u64,
}

struct Pool {
    slots: Vec<Slot>,
    limit: usize,
    tick: u64,
    stats: PoolStats,
}

/// One Tenstorrent card (one chip: chip 0) through tt-kmd; see the module docs.
pub struct TtKmd<D: Driver> {
    driver: D,
    card: CardIdentity,
    geometry: Geometry,
    tiles: TileTable,
    window_size: u64,
    pool: Mutex<Pool>,
    bytes_read: AtomicU64,
    gone: AtomicBool,
    writable: bool,
    /// L1 ranges (start, end) the user lent for writing ([`DeviceMemory::allow_l1_writes`]).
    lent: Mutex<Vec<(u32, u32)>>,
}

impl<D: Driver> TtKmd<D> {
    /// Checks the driver and the card, and sets up (but does not yet allocate) the window
    /// pool. `tiles`: the tiles to present (default: every unharvested worker of `map`).
    pub(super) fn with_driver(
        driver: D,
        map_for: impl FnOnce(Arch) -> Result<(TileMap, HarvestOrigin)>,
        windows: usize,
        tiles: Option<Vec<NocCoord>>,
        writable: bool,
    ) -> Result<TtKmd<D>> {
        let path = driver.path().to_path_buf();
        let not_kmd = |what: &str, e: std::io::Error| Error::BadFile {
            path: path.clone(),
            what: format!("{what} failed ({e}): is this a Tenstorrent card's tt-kmd device node?"),
        };
        let info = driver
            .driver_info()
            .map_err(|e| not_kmd("GET_DRIVER_INFO", e))?;
        if info.api_version < ioctl::MIN_API_VERSION {
            return Err(Error::BadFile {
                path,
                what: format!(
                    "tt-kmd driver API version {} found, version {} or newer needed (ttkmd-2.0.0 or later: older \
                     drivers cannot allocate TLB windows safely); update tt-kmd",
                    info.api_version,
                    ioctl::MIN_API_VERSION
                ),
            });
        }
        let pci = driver
            .device_info()
            .map_err(|e| not_kmd("GET_DEVICE_INFO", e))?;
        let arch = arch_of(&pci).map_err(|what| Error::BadFile {
            path: path.clone(),
            what,
        })?;
        let (map, harvest_origin) = map_for(arch)?;
        let tiles = match tiles {
            None => map.workers(),
            Some(t) => {
                if let Some(bad) = t.iter().find(|c| !map.is_worker(**c)) {
                    return Err(Error::Address {
                        what: format!(
                            "{}: tile {bad} is not an unharvested Tensix worker of this {arch} card (harvesting: {:#x})",
                            path.display(),
                            map.mask()
                        ),
                    });
                }
                t
            }
        };
        let geometry = Geometry {
            arch,
            chips: 1,
            tiles_per_chip: tiles.len() as u32,
            l1_size: arch.l1_size(),
        };
        let tiles = TileTable::checked(&geometry, vec![tiles]).map_err(|what| Error::BadFile {
            path: path.clone(),
            what,
        })?;
        let card = CardIdentity {
            path,
            arch,
            pci,
            driver: info,
            map,
            harvest_origin,
        };
        Ok(TtKmd {
            driver,
            card,
            geometry,
            tiles,
            window_size: window_size(arch),
            pool: Mutex::new(Pool {
                slots: Vec::new(),
                limit: windows.max(1),
                tick: 0,
                stats: PoolStats::default(),
            }),
            bytes_read: AtomicU64::new(0),
            gone: AtomicBool::new(false),
            writable,
            lent: Mutex::new(Vec::new()),
        })
    }

    /// Who the card is.
    pub fn card(&self) -> &CardIdentity {
        &self.card
    }

    /// The driver the backend speaks through.
    pub fn driver(&self) -> &D {
        &self.driver
    }

    /// The device node.
    pub fn path(&self) -> &Path {
        &self.card.path
    }

    /// The window pool's counts (allocations, reuses, reconfigurations).
    pub fn pool_stats(&self) -> PoolStats {
        let p = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        PoolStats {
            windows: p.slots.len(),
            limit: p.limit,
            ..p.stats
        }
    }

    /// The error of a card that went away or was reset; marks it gone for good.
    pub(super) fn went_away(&self, how: &str) -> Error {
        self.gone.store(true, Ordering::Release);
        Error::BadFile {
            path: self.card.path.clone(),
            what: format!(
                "card went away / reset ({how}): nothing more is read from it; reopen it once it is back (tt-smi -r \
                 resets a card; a running tt-metal may have reset it)"
            ),
        }
    }

    fn check_gone(&self) -> Result<()> {
        if self.gone.load(Ordering::Acquire) {
            return Err(self.went_away("an earlier access found it gone"));
        }
        Ok(())
    }

    fn window_error(&self, op: &str, e: std::io::Error) -> Error {
        let why = match e.raw_os_error() {
            Some(nix::libc::ENOMEM) => format!(
                ": no {} KiB TLB window is free; a running tt-metal may hold the windows (it keeps one per core): \
                 stop it or let ttprof share fewer",
                self.window_size >> 10
            ),
            Some(nix::libc::EBUSY) => {
                ": the window is still mapped (EBUSY); a running tt-metal may hold the windows, or a mapping leaked".into()
            }
            _ => String::new(),
        };
        Error::BadFile {
            path: self.card.path.clone(),
            what: format!("{op} failed: {e}{why}"),
        }
    }

    fn fault(&self, f: Fault, tile: NocCoord, addr: u64) -> Error {
        match f {
            Fault::Bus => self.went_away("SIGBUS on a mapped window"),
            Fault::Outside => Error::Address {
                what: format!(
                    "{}: tile {tile} address {addr:#x}: outside the mapped TLB window (a ttprof bug; please report it)",
                    self.card.path.display()
                ),
            },
        }
    }

    /// Runs `f(driver, window id, offset)` with a window pointing at `addr` of the NoC0
    /// `tile`, re-pointing the least recently used window if none does. The pool stays
    /// locked while `f` runs, so no other access re-points the window under it.
    pub(super) fn with_window<T>(
        &self,
        tile: NocCoord,
        addr: u64,
        f: impl FnOnce(&D, u32, u64) -> std::result::Result<T, Fault>,
    ) -> Result<T> {
        self.check_gone()?;
        let base = addr & !(self.window_size - 1);
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        pool.tick += 1;
        let tick = pool.tick;
        let i = match pool
            .slots
            .iter()
            .position(|s| s.target == Some((tile, base)))
        {
            Some(i) => i,
            None => {
                let i = self.free_slot(&mut pool)?;
                let slot = &mut pool.slots[i];
                slot.target = None;
                let Some(p) = self.card.map.noc0_to_programmed(tile) else {
                    return Err(Error::Address {
                        what: format!(
                            "{}: tile {tile} is not a Tensix tile of this card",
                            self.card.path.display()
                        ),
                    });
                };
                let config = NocTlbConfig {
                    addr: base,
                    x_end: p.x as u16,
                    y_end: p.y as u16,
                    ordering: ioctl::ORDERING_STRICT,
                    ..Default::default()
                };
                self.driver
                    .configure_tlb(slot.tlb.id, &config)
                    .map_err(|e| {
                        self.window_error(
                            &format!(
                                "CONFIGURE_TLB (window {} to tile {tile} at {base:#x})",
                                slot.tlb.id
                            ),
                            e,
                        )
                    })?;
                slot.target = Some((tile, base));
                pool.stats.configures += 1;
                i
            }
        };
        let slot = &mut pool.slots[i];
        slot.used = tick;
        f(&self.driver, slot.tlb.id, addr - base).map_err(|e| self.fault(e, tile, addr))
    }

    /// A slot to re-point: a new window while the pool may grow and the driver has one,
    /// else the least recently used.
    fn free_slot(&self, pool: &mut Pool) -> Result<usize> {
        if pool.slots.len() < pool.limit {
            match self.driver.allocate_tlb(self.window_size) {
                Ok(tlb) => {
                    if let Err(e) = self.driver.map_window(&tlb) {
                        let _ = self.driver.free_tlb(tlb.id);
                        return Err(self.window_error("mapping a TLB window", e));
                    }
                    pool.stats.allocations += 1;
                    pool.slots.push(Slot {
                        tlb,
                        target: None,
                        used: 0,
                    });
                    return Ok(pool.slots.len() - 1);
                }
                Err(e) if e.raw_os_error() == Some(nix::libc::ENOMEM) && !pool.slots.is_empty() => {
                    // The driver has no more: live with what we have.
                    pool.limit = pool.slots.len();
                }
                Err(e) => return Err(self.window_error("ALLOCATE_TLB", e)),
            }
        }
        Ok(pool
            .slots
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.used)
            .map(|(i, _)| i)
            .expect("the pool has a window"))
    }

    /// Reads `out.len()` words at `addr` of the NoC0 `tile` (any local address: L1 or
    /// registers), split at window boundaries.
    pub(super) fn read_raw(&self, tile: NocCoord, addr: u64, out: &mut [u32]) -> Result<()> {
        let mut done = 0;
        while done < out.len() {
            let at = addr + 4 * done as u64;
            let room = ((self.window_size - (at & (self.window_size - 1))) / 4) as usize;
            let n = room.min(out.len() - done);
            let chunk = &mut out[done..done + n];
            self.with_window(tile, at, |d, id, off| {
                for (i, w) in chunk.iter_mut().enumerate() {
                    *w = d.read_u32(id, off + 4 * i as u64)?;
                }
                Ok(())
            })?;
            done += n;
        }
        Ok(())
    }

    /// A 0xFFFFFFFF word is what a card that went away returns for everything: confirm by
    /// reading the tile's `NOC_NODE_ID`, which a live tile never reads as all ones.
    pub(super) fn confirm_alive(&self, tile: NocCoord) -> Result<()> {
        let mut id = [0u32];
        self.read_raw(
            tile,
            riscv_linker::mmio::noc_node_id(self.card.arch) as u64,
            &mut id,
        )?;
        if id[0] == u32::MAX {
            return Err(self.went_away(&format!("tile {tile} reads 0xffffffff, NOC_NODE_ID too")));
        }
        Ok(())
    }

    /// Whether `addr` is one of the consumer's words (the only ones this backend writes),
    /// in ttprof's layout or tt-metal's on this card's arch.
    pub(crate) fn is_consumer_word(&self, addr: u32) -> bool {
        [
            profiler::RingMap::TTPROF,
            profiler::RingMap::tt_metal(self.card.arch),
        ]
        .iter()
        .any(|m| {
            addr == m.tile_block + tile::CONSUMER
                || Risc::ALL
                    .iter()
                    .any(|&r| addr == m.ring_block(r) + ring::TAIL)
        })
    }

    /// Whether the user lent the L1 word at `addr` for writing.
    fn is_lent(&self, addr: u32) -> bool {
        let lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
        lent.iter().any(|&(a, b)| (a..b).contains(&addr))
    }

    pub(super) fn tile_index(&self, chip: u32, tile: NocCoord) -> Result<u32> {
        self.tiles.index(chip, tile)
    }

    /// Takes the card's lock for `role` (one holder per role), or says what holds it:
    /// `held` completes "the card ...".
    fn claim(&self, role: riscv_linker::lock::Role, held: &str) -> Result<()> {
        let locked = self
            .driver
            .try_lock(role)
            .map_err(|e| Error::io(&self.card.path, "lock card", e))?;
        if locked {
            return Ok(());
        }
        Err(Error::BadFile {
            path: self.card.path.clone(),
            what: held.into(),
        })
    }
}

impl<D: Driver> DeviceMemory for TtKmd<D> {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        self.tiles.tiles(chip)
    }

    fn allow_l1_writes(&self, addr: u32, bytes: u32) -> Result<()> {
        let end = addr as u64 + bytes as u64;
        if end > self.geometry.l1_size as u64 || !addr.is_multiple_of(4) {
            return Err(Error::Argument {
                what: format!(
                    "L1 range {addr:#x}..{end:#x} to write on {}: not word-aligned inside L1 ({:#x} bytes)",
                    self.card.path.display(),
                    self.geometry.l1_size
                ),
            });
        }
        self.lent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((addr, end as u32));
        Ok(())
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        let mut w = [0u32];
        self.read_words(chip, tile, addr, &mut w)?;
        Ok(w[0])
    }

    fn write_u32(&self, chip: u32, tile: NocCoord, addr: u32, v: u32) -> Result<()> {
        self.tiles.index(chip, tile)?;
        if riscv_linker::mmio::daisychain::is_register(addr) && self.writable {
            // The debug daisychain's registers (sampling, `ttprof run --sample`'s code).
            return self.with_window(tile, addr as u64, |d, id, off| d.write_u32(id, off, v));
        }
        check_access(&self.geometry, chip, tile, addr, 1)?;
        if !self.writable {
            return Err(Error::Address {
                what: format!(
                    "chip {chip} tile {tile}: cannot write {addr:#x}: {} is opened read-only",
                    self.card.path.display()
                ),
            });
        }
        if !self.is_consumer_word(addr) && !self.is_lent(addr) {
            return Err(Error::Address {
                what: format!(
                    "chip {chip} tile {tile}: refusing to write L1 {addr:#x} of {}: ttprof writes only the consumer's \
                     words of a real card (each ring's TAIL, the tile's CONSUMER lease) and a sample buffer named with \
                     --sample-buffer",
                    self.card.path.display()
                ),
            });
        }
        self.with_window(tile, addr as u64, |d, id, off| d.write_u32(id, off, v))
    }

    fn read_words(&self, chip: u32, tile: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        self.tiles.index(chip, tile)?;
        if out.len() == 1 && riscv_linker::mmio::daisychain::is_register(addr) {
            return self.read_raw(tile, addr as u64, out);
        }
        check_access(&self.geometry, chip, tile, addr, out.len())?;
        self.read_raw(tile, addr as u64, out)?;
        self.bytes_read
            .fetch_add(4 * out.len() as u64, Ordering::Relaxed);
        if out.contains(&u32::MAX) {
            self.confirm_alive(tile)?;
        }
        Ok(())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn describe(&self) -> String {
        let c = &self.card;
        format!(
            "{} card {} ({}, {}, harvesting: {})",
            c.arch,
            c.path.display(),
            c.pci.address(),
            c.driver,
            c.harvesting()
        )
    }

    fn claim_consumer(&self) -> Result<()> {
        self.claim(
            riscv_linker::lock::Role::Consumer,
            "already has a ttprof consumer draining it (another ttprof capture holds its consumer lock): one \
             consumer per card; read it without consuming or stop the other",
        )
    }

    fn claim_sampler(&self) -> Result<()> {
        self.claim(
            riscv_linker::lock::Role::Sampler,
            "already has a ttprof sampler driving its debug daisychains (another ttprof capture --sample holds \
             its sampler lock): one sampler per card, or each would arm and read the other's windows",
        )
    }

    /// The card is still there: not marked gone, and the first tile's `NOC_NODE_ID` does
    /// not read as all ones.
    fn check(&self) -> Result<()> {
        self.check_gone()?;
        match self.tiles.tiles(0).first() {
            Some(&t) => self.confirm_alive(t),
            None => Ok(()),
        }
    }
}

impl<D: Driver> Drop for TtKmd<D> {
    fn drop(&mut self) {
        let pool = self.pool.get_mut().unwrap_or_else(|p| p.into_inner());
        for s in pool.slots.drain(..) {
            // Unmap first: FREE_TLB refuses a mapped window (EBUSY).
            let _ = self.driver.unmap_window(s.tlb.id);
            let _ = self.driver.free_tlb(s.tlb.id);
        }
    }
}
