//! Where device zones go in Tracy: GPU contexts, lanes and thread ids.
//!
//! Tracy draws each GPU context as one timeline group and, when the context's own thread is
//! 0, one row per thread id carried by its zones (`Worker::ProcessGpuZoneBeginImplCommon`,
//! `server/TracyWorker.cpp`). A context id is a `u8`, so there are at most 255 contexts.
//!
//! * **Lane** = one RISC of one tile of one chip = one row. Its thread id packs
//!   `1 << 31 | chip << 19 | x << 14 | y << 9 | risc << 6 | slot` (chip < 4096, NoC0
//!   x and y < 32), unique across the capture, and its thread name is `BRISC 0:(1,2)`
//!   (RISC, chip, NoC0 tile), so a row names itself wherever Tracy shows it (row label,
//!   zone info, find-zone).
//! * **Row order**: Tracy draws a context's rows in the order of its thread table, a
//!   robin-hood hash map (`GpuCtxData::threadData`, `server/tracy_robin_hood.h`), which
//!   iterates by hash bucket: with plain ids the RISCs of each tile came out in a different
//!   order. The 6-bit `slot` of each lane id is chosen ([`tile_threads`]) so that a tile's
//!   five ids fall in increasing buckets of the 8-bucket table a context of up to 6 threads
//!   has: every one-tile context shows BRISC, NCRISC, TRISC_0, TRISC_1, TRISC_2, top to
//!   bottom, whichever RISCs have zones. (Ids still sort numerically in that order, which
//!   is the order tt-metal's Tracy fork sorts rows in. Grouped contexts, below, have larger
//!   tables whose order this does not fix.)
//! * **Context** = the lanes of one tile while the run has at most 255 tiles with zones:
//!   `Device 0, core (1,2)`, up to 5 rows. Beyond that, each chip's tiles (in row-major
//!   NoC order) are grouped `k` to a context with the smallest `k` that keeps the count at
//!   most 255 (`Device 0, cores (1,1)..(8,1) [8 tiles]`, up to `5k` rows): one Wormhole or
//!   Blackhole (up to 140 worker tiles) always gets one context per tile; 8 chips x 140
//!   tiles give 8 x ceil(140 / 5) = 224 contexts of 5 tiles; 32 chips x 140 give 224
//!   contexts of 20 tiles. Contexts never mix chips, so at most 255 chips.
//! * **Host rows**: thread `1 << 30 | chip << 8 | row`, named `Ops: device 0` (a second row
//!   `Ops: device 0 #2` only where launches overlap), holds the op log's launches as CPU
//!   zones and its signposts as messages.

use riscv_linker::{NocCoord, Risc};
use std::collections::{BTreeMap, BTreeSet};

use super::protocol::MAX_GPU_CONTEXTS;
use crate::error::Error;

/// A Tracy limit the profile is over.
fn limit(what: String) -> Error {
    Error::Tracy { what }
}

/// Highest chip number a lane id can carry.
pub(crate) const MAX_CHIP: u32 = (1 << 12) - 1;
/// Highest NoC0 x or y a lane id can carry (every arch's NoC grid is smaller).
pub(crate) const MAX_NOC_COORD: u8 = (1 << 5) - 1;

/// Thread id of the lane of `risc` on `tile` of `chip` (see the module docs).
pub(crate) fn lane_thread(chip: u32, tile: NocCoord, risc: Risc) -> Result<u32, Error> {
    if chip > MAX_CHIP {
        return Err(limit(format!(
            "chip {chip}: Tracy lane ids carry chips 0..={MAX_CHIP}"
        )));
    }
    if tile.x > MAX_NOC_COORD || tile.y > MAX_NOC_COORD {
        return Err(limit(format!(
            "chip {chip} tile {tile}: Tracy lane ids carry NoC0 coordinates 0..={MAX_NOC_COORD}"
        )));
    }
    Ok(
        tile_threads(1 << 31 | chip << 19 | (tile.x as u32) << 14 | (tile.y as u32) << 9)
            [risc.index()],
    )
}

/// The lane ids of one tile, in RISC order: `tile_base | risc << 6 | slot`, each RISC's
/// `slot` (0..64) the lowest that puts its id in the lowest [`tracy_bucket`] above the
/// previous RISC's. (No real tile needs it, but should no slot be left for a RISC, it gets
/// slot 0: still a unique id.)
pub(crate) fn tile_threads(tile_base: u32) -> [u32; Risc::COUNT] {
    let mut ids = [0; Risc::COUNT];
    let mut above = None;
    for (r, id) in ids.iter_mut().enumerate() {
        let stem = tile_base | (r as u32) << 6;
        let free = (0..64)
            .map(|slot| stem | slot)
            .filter(|&t| above.is_none_or(|b| tracy_bucket(t) > b));
        *id = free.min_by_key(|&t| tracy_bucket(t)).unwrap_or(stem);
        above = Some(tracy_bucket(*id));
    }
    ids
}

/// The bucket of thread id `tid` in the thread table of a Tracy GPU context with at most 6
/// threads (8 buckets): robin_hood's `hash_int` of the id, then `keyToIdx` with the table's
/// initial hash multiplier (`server/tracy_robin_hood.h`, Tracy 0.14). The table iterates
/// bucket by bucket.
pub(crate) fn tracy_bucket(tid: u32) -> u64 {
    (tracy_hash(tid) >> 5) & 7
}

/// robin_hood's `hash_int` of a thread id followed by the table's hash mixing (Tracy 0.14).
pub(crate) fn tracy_hash(tid: u32) -> u64 {
    let mut x = tid as u64;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    let mut h = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// The lane's row name.
pub(crate) fn lane_name(chip: u32, tile: NocCoord, risc: Risc) -> String {
    format!("{} {chip}:{tile}", risc.name())
}

/// Thread id of host row `row` (0-based) of `chip`.
pub(crate) fn host_thread(chip: u32, row: u32) -> Result<u32, Error> {
    if chip >= 1 << 22 || row > 0xFF {
        return Err(limit(format!(
            "host row {row} of device {chip}: at most 256 overlapping launches per device"
        )));
    }
    Ok(1 << 30 | chip << 8 | row)
}

pub(crate) fn host_name(chip: u32, row: u32) -> String {
    if row == 0 {
        format!("Ops: device {chip}")
    } else {
        format!("Ops: device {chip} #{}", row + 1)
    }
}

/// One GPU context: its id, chip and tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Context {
    pub id: u8,
    pub chip: u32,
    /// Row-major NoC order.
    pub tiles: Vec<NocCoord>,
    pub name: String,
}

/// The context of every tile that has zones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    pub(crate) contexts: Vec<Context>,
    /// Tiles per context (the `k` of the module docs).
    pub(crate) tiles_per_context: usize,
    of_tile: BTreeMap<(u32, NocCoord), u8>,
}

impl Layout {
    /// Lays out `tiles` (chip, tile), duplicates ignored.
    pub(crate) fn new(tiles: impl IntoIterator<Item = (u32, NocCoord)>) -> Result<Layout, Error> {
        let mut by_chip: BTreeMap<u32, BTreeSet<(u8, u8)>> = BTreeMap::new();
        for (chip, t) in tiles {
            by_chip.entry(chip).or_default().insert((t.y, t.x));
        }
        if by_chip.is_empty() {
            return Ok(Layout::default());
        }
        if by_chip.len() > MAX_GPU_CONTEXTS {
            return Err(limit(format!(
                "{} chips have zones, but Tracy has at most {MAX_GPU_CONTEXTS} GPU contexts and ttprof does not \
                 mix chips in one context",
                by_chip.len()
            )));
        }
        let contexts_for = |k: usize| by_chip.values().map(|s| s.len().div_ceil(k)).sum::<usize>();
        let largest = by_chip.values().map(|s| s.len()).max().unwrap_or(1);
        let k = (1..=largest)
            .find(|&k| contexts_for(k) <= MAX_GPU_CONTEXTS)
            .unwrap_or(largest);
        let mut layout = Layout {
            tiles_per_context: k,
            ..Layout::default()
        };
        for (chip, tiles) in &by_chip {
            let tiles: Vec<NocCoord> = tiles.iter().map(|&(y, x)| NocCoord::new(x, y)).collect();
            for group in tiles.chunks(k) {
                let id = layout.contexts.len() as u8;
                for t in group {
                    layout.of_tile.insert((*chip, *t), id);
                }
                layout.contexts.push(Context {
                    id,
                    chip: *chip,
                    tiles: group.to_vec(),
                    name: context_name(*chip, group),
                });
            }
        }
        Ok(layout)
    }

    /// The context holding `tile` of `chip`, if it has zones.
    pub(crate) fn context_of(&self, chip: u32, tile: NocCoord) -> Option<u8> {
        self.of_tile.get(&(chip, tile)).copied()
    }
}

fn context_name(chip: u32, tiles: &[NocCoord]) -> String {
    match tiles {
        [one] => format!("Device {chip}, core {one}"),
        [first, .., last] => format!(
            "Device {chip}, cores {first}..{last} [{} tiles]",
            tiles.len()
        ),
        [] => format!("Device {chip}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(chips: u32, w: u8, h: u8) -> Vec<(u32, NocCoord)> {
        (0..chips)
            .flat_map(|c| {
                (0..h).flat_map(move |y| (0..w).map(move |x| (c, NocCoord::new(x + 1, y + 1))))
            })
            .collect()
    }

    #[test]
    fn one_context_per_tile_until_255_then_grouped_per_chip() {
        let one = Layout::new(grid(1, 14, 10)).unwrap();
        assert_eq!((one.contexts.len(), one.tiles_per_context), (140, 1));
        assert_eq!(one.contexts[0].name, "Device 0, core (1,1)");
        assert_eq!(one.context_of(0, NocCoord::new(2, 1)), Some(1), "row-major");
        let eight = Layout::new(grid(8, 14, 10)).unwrap();
        assert_eq!((eight.contexts.len(), eight.tiles_per_context), (224, 5));
        assert_eq!(
            eight.contexts[28].name,
            "Device 1, cores (1,1)..(5,1) [5 tiles]"
        );
        let galaxy = Layout::new(grid(32, 14, 10)).unwrap();
        assert_eq!((galaxy.contexts.len(), galaxy.tiles_per_context), (224, 20));
        assert!(galaxy.contexts.iter().all(|c| c.tiles.len() <= 20));
        assert!(Layout::new(grid(256, 1, 1))
            .unwrap_err()
            .to_string()
            .contains("256 chips"));
        assert_eq!(Layout::new(grid(255, 2, 2)).unwrap().contexts.len(), 255);
    }

    #[test]
    fn thread_ids_are_unique_and_named() {
        let mut seen = BTreeSet::new();
        for (chip, t) in grid(3, 14, 12) {
            for r in Risc::ALL {
                assert!(seen.insert(lane_thread(chip, t, r).unwrap()));
            }
        }
        for chip in 0..3 {
            for row in [0, 255] {
                assert!(seen.insert(host_thread(chip, row).unwrap()));
            }
        }
        assert!(lane_thread(MAX_CHIP + 1, NocCoord::new(0, 0), Risc::Brisc).is_err());
        assert!(
            lane_thread(0, NocCoord::new(MAX_NOC_COORD + 1, 1), Risc::Brisc)
                .unwrap_err()
                .to_string()
                .contains("0..=31")
        );
        assert!(host_thread(0, 256).is_err());
        assert_eq!(
            lane_name(0, NocCoord::new(1, 2), Risc::Trisc1),
            "TRISC_1 0:(1,2)"
        );
        assert_eq!(host_name(2, 1), "Ops: device 2 #2");
    }

    #[test]
    fn every_tile_of_every_chip_gets_its_risc_lanes_in_increasing_tracy_buckets() {
        // Every NoC coordinate of both arches' grids, every chip a lane id carries.
        let coords: BTreeSet<(u8, u8)> = riscv_linker::Arch::ALL
            .iter()
            .flat_map(|a| {
                let (w, h) = a.noc_grid();
                (0..w).flat_map(move |x| (0..h).map(move |y| (x, y)))
            })
            .collect();
        for chip in 0..=MAX_CHIP {
            for &(x, y) in &coords {
                let ids = tile_threads(1 << 31 | chip << 19 | (x as u32) << 14 | (y as u32) << 9);
                if chip < 4 {
                    let tile = NocCoord::new(x, y);
                    assert_eq!(Risc::ALL.map(|r| lane_thread(chip, tile, r).unwrap()), ids);
                }
                let buckets = ids.map(tracy_bucket);
                assert!(
                    buckets.windows(2).all(|w| w[0] < w[1]),
                    "chip {chip} ({x},{y}): buckets {buckets:?}"
                );
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "chip {chip} ({x},{y}): ids sort in RISC order"
                );
            }
        }
    }
}
