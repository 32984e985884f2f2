//! Real cards through Tenstorrent's kernel driver, tt-kmd (`/dev/tenstorrent/N`).
//!
//! * [`ioctl`]: request numbers and `#[repr(C)]` structs (sizes and offsets pinned by tests).
//! * [`driver`]: the narrow [`Driver`] trait over the system calls (open, driver and device
//!   info, allocate/configure/free TLB windows, map, volatile 32-bit access) and
//!   [`KmdDriver`], the real one (`nix` ioctls, `memmap2` mappings).
//! * `sigbus`: a SIGBUS in a mapped window (a card reset while mapped) becomes an error.
//! * [`TtKmd`] (`backend`): [`DeviceMemory`] + [`crate::devmem::DeviceClock`] of one card
//!   over any driver: a small LRU pool of windows, strict ordering, only consumer words
//!   written, 0xFFFFFFFF reads confirmed against `NOC_NODE_ID`.
//! * `clock`: wall-clock samples bracketed by `CLOCK_MONOTONIC_RAW`.
//! * [`cluster`]: harvesting from tt-metal's cluster descriptor.
//! * `fake` (tests, feature `testing`): a fake driver over any [`DeviceMemory`].
//!
//! A card is named by its device node `/dev/tenstorrent/N` or the short form `tt:N`, with
//! optional `,key=value` settings: `harvest=MASK` (NoC0-order mask, as in tt-metal's
//! cluster descriptor), `cluster=PATH` (read the mask from that descriptor), `chip=N`
//! (which chip of the descriptor), `translation=on|off` (coordinate translation, default
//! on: tt-metal's firmware turns it on), `windows=N` (TLB windows to use, default 4).
//! [`parse_spec`] parses it; `crate::devmem::open` opens cards and files alike.

mod backend;
mod clock;
pub mod cluster;
pub mod driver;
#[cfg(any(test, feature = "testing"))]
pub mod fake;
pub mod ioctl;
pub(super) mod sigbus;

pub use backend::{
    arch_of, window_size, CardIdentity, HarvestOrigin, PoolStats, TtKmd, DEFAULT_WINDOWS,
};
pub use clock::{monotonic_raw_ns, TRIES};
pub use driver::{Driver, DriverInfo, Fault, KmdDriver, PciInfo, TlbAlloc, OPEN_FLAGS};

use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::{Arch, NocCoord, TileMap};
use std::path::{Path, PathBuf};

/// Where the device nodes live.
pub(crate) const DEVICE_DIR: &str = "/dev/tenstorrent";

/// Where a card's harvesting comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HarvestSource {
    /// Not known: every worker is assumed present (a harvested card then shows tiles that
    /// do not exist; give the mask).
    #[default]
    Unknown,
    /// A NoC0-order mask (bit `i`: the `i`-th Tensix row on Wormhole, column on Blackhole).
    Mask(u32),
    /// A tt-metal cluster descriptor, and optionally which chip of it this card is.
    Descriptor {
        /// The descriptor YAML file.
        path: PathBuf,
        /// The card's chip id in it (`None`: found by PCI address or index).
        chip: Option<u32>,
    },
}

/// How to open a card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmdOptions {
    /// Where the harvest mask comes from.
    pub harvest: HarvestSource,
    /// Coordinate translation on the card; `None`: the descriptor's, else on.
    pub translation: Option<bool>,
    /// TLB windows the pool may hold.
    pub windows: usize,
    /// Only these NoC0 tiles (default: every unharvested worker).
    pub tiles: Option<Vec<NocCoord>>,
    /// Whether the consumer words may be written (a reader that consumes).
    pub writable: bool,
}

impl Default for KmdOptions {
    fn default() -> KmdOptions {
        KmdOptions {
            harvest: HarvestSource::Unknown,
            translation: None,
            windows: DEFAULT_WINDOWS,
            tiles: None,
            writable: true,
        }
    }
}

/// A `--device` argument: a file (device image or snapshot) or a card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// A device image or snapshot file.
    File(PathBuf),
    /// A card through tt-kmd.
    Card {
        /// Its device node.
        path: PathBuf,
        /// Its index (`tt:N`, `/dev/tenstorrent/N`), when the node is named so.
        index: Option<u32>,
        /// How to open it.
        options: KmdOptions,
    },
}

/// The device node of card `index`.
pub(crate) fn device_path(index: u32) -> PathBuf {
    Path::new(DEVICE_DIR).join(index.to_string())
}

/// Parses a `--device` argument: `tt:N[,k=v...]` and `/dev/tenstorrent/N[,k=v...]` are
/// cards (see the module docs for the settings), anything else a file. A file really named
/// `tt:0` is reached as `./tt:0`.
pub fn parse_spec(arg: &Path) -> Result<DeviceSpec> {
    let Some(s) = arg.to_str() else {
        return Ok(DeviceSpec::File(arg.into()));
    };
    let (node, settings) = match s.split_once(',') {
        Some((n, rest)) => (n, Some(rest)),
        None => (s, None),
    };
    let (path, index) = if let Some(n) = node.strip_prefix("tt:") {
        let index: u32 = n.parse().map_err(|_| Error::Argument {
            what: format!("--device {s}: `tt:` takes a card number (tt:0 is {DEVICE_DIR}/0)"),
        })?;
        (device_path(index), Some(index))
    } else if let Some(n) = node
        .strip_prefix(DEVICE_DIR)
        .and_then(|r| r.strip_prefix('/'))
    {
        (PathBuf::from(node), n.parse().ok())
    } else {
        return Ok(DeviceSpec::File(arg.into()));
    };
    let mut options = KmdOptions::default();
    let bad = |what: String| Error::Argument {
        what: format!("--device {s}: {what}"),
    };
    let mut chip = None;
    let mut cluster = None;
    for kv in settings.into_iter().flat_map(|r| r.split(',')) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("`{kv}`: expected key=value")))?;
        match k {
            "harvest" => {
                options.harvest = HarvestSource::Mask(parse_int(v).ok_or_else(|| {
                    bad(format!("harvest={v}: expected a mask such as 0x21 or 33"))
                })?)
            }
            "cluster" => cluster = Some(PathBuf::from(v)),
            "chip" => {
                chip = Some(
                    parse_int(v).ok_or_else(|| bad(format!("chip={v}: expected a chip number")))?,
                )
            }
            "translation" => {
                options.translation = Some(match v {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(bad(format!("translation={v}: expected on or off"))),
                })
            }
            "windows" => {
                options.windows = parse_int(v)
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| bad(format!("windows={v}: expected 1 to 64 TLB windows")))?
                    as usize
            }
            _ => {
                return Err(bad(format!(
                    "unknown setting `{k}` (known: harvest, cluster, chip, translation, windows)"
                )))
            }
        }
    }
    match (cluster, &options.harvest) {
        (Some(_), HarvestSource::Mask(_)) => {
            return Err(bad("give harvest= or cluster=, not both".into()))
        }
        (Some(path), _) => options.harvest = HarvestSource::Descriptor { path, chip },
        (None, _) if chip.is_some() => {
            return Err(bad("chip= chooses a chip of a cluster= descriptor".into()))
        }
        _ => {}
    }
    Ok(DeviceSpec::Card {
        path,
        index,
        options,
    })
}

fn parse_int(v: &str) -> Option<u32> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Whether `arg` names a card rather than a file.
pub fn is_card(arg: &Path) -> bool {
    matches!(parse_spec(arg), Ok(DeviceSpec::Card { .. }) | Err(_))
}

/// The tile map of a card of `arch` as `options` describe it.
fn tile_map(
    arch: Arch,
    pci: &PciInfo,
    index: Option<u32>,
    path: &Path,
    options: &KmdOptions,
    inputs: &Inputs,
) -> Result<(TileMap, HarvestOrigin)> {
    let bad = |e: riscv_linker::HarvestError| Error::BadFile {
        path: path.to_path_buf(),
        what: e.to_string(),
    };
    let translation = options.translation.unwrap_or(true);
    match &options.harvest {
        HarvestSource::Unknown => Ok((
            TileMap::new(arch, 0, translation).map_err(bad)?,
            HarvestOrigin::Unknown,
        )),
        HarvestSource::Mask(m) => Ok((
            TileMap::new(arch, *m, translation).map_err(bad)?,
            HarvestOrigin::User,
        )),
        HarvestSource::Descriptor { path: d, chip } => {
            let address = pci.address();
            let key = cluster::CardKey {
                chip: *chip,
                pci_address: Some(&address),
                index,
                arch: Some(arch),
            };
            let h = cluster::harvest_for(d, &key, inputs)?;
            let t = options.translation.or(h.translation).unwrap_or(true);
            let map = TileMap::new(arch, h.mask, t).map_err(|e| Error::BadFile {
                path: d.clone(),
                what: format!("chip {}: {e}", h.chip),
            })?;
            Ok((map, HarvestOrigin::Descriptor(d.clone(), h.chip)))
        }
    }
}

impl<D: Driver> TtKmd<D> {
    /// Opens the card behind `driver` (see [`KmdOptions`]): checks the driver API version
    /// (>= 2), reads the PCI identity (arch from the device id), resolves harvesting (a
    /// cluster descriptor it reads is noted in `inputs`).
    pub fn open_with(
        driver: D,
        index: Option<u32>,
        options: &KmdOptions,
        inputs: &Inputs,
    ) -> Result<TtKmd<D>> {
        let path = driver.path().to_path_buf();
        let pci = driver.device_info().ok();
        TtKmd::with_driver(
            driver,
            |arch| {
                let pci = pci.ok_or_else(|| Error::BadFile {
                    path: path.clone(),
                    what: "GET_DEVICE_INFO failed".into(),
                })?;
                tile_map(arch, &pci, index, &path, options, inputs)
            },
            options.windows,
            options.tiles.clone(),
            options.writable,
        )
    }
}

/// Opens the card at `path` (`/dev/tenstorrent/N`). A card that is not there is an error
/// naming the path and tt-kmd.
pub(crate) fn open_card(
    path: &Path,
    index: Option<u32>,
    options: &KmdOptions,
    inputs: &Inputs,
) -> Result<TtKmd<KmdDriver>> {
    let driver = KmdDriver::open(path).map_err(|e| open_error(path, e))?;
    TtKmd::open_with(driver, index, options, inputs)
}

fn open_error(path: &Path, e: std::io::Error) -> Error {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "no such card: is tt-kmd (Tenstorrent's kernel driver) installed and loaded, and is the card there? \
             `ls {DEVICE_DIR}/` lists the cards tt-kmd found"
        ),
        std::io::ErrorKind::PermissionDenied => {
            "permission denied: tt-kmd's udev rule gives the device node to its users' group; run as a member".into()
        }
        _ => "cannot open it through tt-kmd".into(),
    };
    Error::BadFile {
        path: path.into(),
        what: format!("{hint} ({e})"),
    }
}

/// One card as `ttprof devices` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardInfo {
    /// The card's index (`/dev/tenstorrent/<index>`).
    pub index: u32,
    /// Its device node.
    pub path: PathBuf,
    /// What the card is, or why it could not be asked.
    pub card: std::result::Result<CardIdentity, String>,
}

/// Every card under `DEVICE_DIR`, by index, opened with `options` (harvesting as given:
/// unknown by default). An absent directory is no card.
pub fn list_cards(options: &KmdOptions) -> Vec<CardInfo> {
    list_cards_in(Path::new(DEVICE_DIR), options, KmdDriver::open)
}

/// [`list_cards`] over the device nodes in `dir`, each opened by `open`.
pub fn list_cards_in<D: Driver>(
    dir: &Path,
    options: &KmdOptions,
    open: impl Fn(&Path) -> std::io::Result<D>,
) -> Vec<CardInfo> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut indices: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    indices.sort_unstable();
    indices
        .into_iter()
        .map(|index| {
            let path = dir.join(index.to_string());
            let card = open(&path)
                .map_err(|e| open_error(&path, e).to_string())
                .and_then(|d| {
                    TtKmd::open_with(d, Some(index), options, &Inputs::none())
                        .map(|t| t.card().clone())
                        .map_err(|e| e.to_string())
                });
            CardInfo { index, path, card }
        })
        .collect()
}

/// The text of `ttprof devices`: one line per card (index, device node, arch, PCI address,
/// driver, harvesting), or a plain sentence when there is none.
pub fn render_cards(cards: &[CardInfo]) -> String {
    if cards.is_empty() {
        return format!(
            "no Tenstorrent card found: {DEVICE_DIR}/ has no device node (is tt-kmd, Tenstorrent's kernel driver, \
             installed and loaded?)\n"
        );
    }
    let mut out = String::from("card  device               arch         PCI address   driver                   harvesting\n");
    for c in cards {
        let path = c.path.display().to_string();
        match &c.card {
            Ok(id) => out.push_str(&format!(
                "{:<5} {:<20} {:<12} {:<13} {:<24} {}\n",
                c.index,
                path,
                id.arch.name(),
                id.pci.address(),
                id.driver.to_string(),
                id.harvesting()
            )),
            Err(e) => out.push_str(&format!("{:<5} {:<20} error: {e}\n", c.index, path)),
        }
    }
    out
}

/// Opens a card spec as device memory (`writable`: may write the consumer words).
pub(crate) fn open_memory(
    path: &Path,
    index: Option<u32>,
    options: &KmdOptions,
    writable: bool,
    inputs: &Inputs,
) -> Result<Box<dyn DeviceMemory>> {
    let options = KmdOptions {
        writable,
        ..options.clone()
    };
    Ok(Box::new(open_card(path, index, &options, inputs)?))
}
