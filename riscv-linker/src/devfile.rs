//! Layout of a device-memory image: the file the emulator maps and shares with the host,
//! the way a PCIe BAR exposes every tile's L1 through TLB windows.
//!
//! ```text
//! offset 0            header (HEADER_FIXED bytes of fields, then the tile table)
//! offset header_size  L1 of tile 0 of chip 0, then tile 1, ... each `tile_stride` bytes
//! ```
//!
//! All integers are little-endian. The tile table lists every tile's NoC0 coordinate in image
//! order (chip-major), 4 bytes each: `x, y, 0, 0`. `header_size` and `tile_stride` are
//! multiples of [`PAGE`], so every L1 image starts on a page boundary.

use crate::{Arch, NocCoord};
use core::fmt;

/// File magic.
pub const MAGIC: [u8; 8] = *b"TTDEVMEM";
/// Version of this layout.
pub const VERSION: u32 = 2;
/// Alignment of the header size and of each tile's image.
pub const PAGE: u32 = 4096;
/// Bytes of fixed header fields before the tile table.
pub const HEADER_FIXED: u32 = 1280;

/// Byte offsets of the fixed header fields.
pub mod field {
    /// [`MAGIC`](super::MAGIC): 8 bytes.
    pub const MAGIC: usize = 0;
    /// [`VERSION`](super::VERSION) of the layout, `u32`.
    pub const VERSION: usize = 8;
    /// [`Arch::id`](crate::Arch::id) of the chips, `u32`.
    pub const ARCH: usize = 12;
    /// Number of chips, `u32`.
    pub const CHIPS: usize = 16;
    /// Tensix tiles per chip (entries of each chip's tile table), `u32`.
    pub const TILES_PER_CHIP: usize = 20;
    /// Bytes of L1 per tile ([`Arch::l1_size`](crate::Arch::l1_size)), `u32`.
    pub const L1_SIZE: usize = 24;
    /// Offset of the first tile's L1 (header plus tile table, page-aligned), `u32`.
    pub const HEADER_SIZE: usize = 28;
    /// Bytes from one tile's L1 image to the next (L1 size, page-aligned), `u32`.
    pub const TILE_STRIDE: usize = 32;
    /// Written by the device side: bit 0 = running, bit 1 = finished, bit 2 = faulted.
    pub const STATUS: usize = 36;
    /// Written by the device side: bumped whenever a launch starts (lets a reader notice).
    pub const LAUNCHES: usize = 40;
    /// The clock-sync mailbox (64 bytes, see [`super::mailbox`]).
    pub const CLOCK_MAILBOX: usize = 64;
    /// The posted register writes ([`super::posted::SIZE`] bytes, see [`super::posted`]).
    pub const POSTED_WRITES: usize = 128;
}

/// The clock-sync mailbox: 64 bytes at [`field::CLOCK_MAILBOX`] through which a host
/// process asks the emulator for a wall-clock sample (the emulator's stand-in for a host
/// reading `WALL_CLOCK_L/H` over PCIe). Offsets are relative to the mailbox; every field is
/// a little-endian `u32` accessed atomically, 64-bit values are two words (low first).
///
/// One request at a time, one client at a time:
///
/// 1. The device side writes [`mailbox::SERVER`] = [`mailbox::SERVING`] while it answers.
/// 2. The host waits until `REQ_SEQ == RESP_SEQ` (nothing pending), writes `REQ_CHIP`,
///    `REQ_TILE` (`x | y << 8`) and `REQ_DELAY` (ns of host time the host let pass since its
///    previous request, beyond that request's round trip), then `REQ_SEQ = RESP_SEQ + 1`
///    (skipping 0) with release order: the sequence word is written last.
/// 3. The device side sees `REQ_SEQ != RESP_SEQ` (acquire), takes the sample, writes
///    `RESP_STATUS`, `RESP_CHIP`, `RESP_TILE`, the three times, bumps `SERVED`, then
///    `RESP_SEQ = REQ_SEQ` (release), last.
/// 4. The host waits for `RESP_SEQ` to equal its sequence number (acquire), then reads the
///    response; it checks that the echoed chip and tile are its own (another client would
///    show up as a mismatch).
///
/// Times are the device's virtual host time in ns; the sample is (host before, device
/// cycles, host after), as `SyncSample` in the emulator and the host.
pub mod mailbox {
    /// Size of the mailbox in bytes.
    pub const SIZE: usize = 64;
    /// Written by the device side: [`SERVING`] while it answers requests, 0 otherwise.
    pub const SERVER: usize = 0;
    /// Written by the host: the sequence number of its request (never 0), written last.
    pub const REQ_SEQ: usize = 4;
    /// Written by the host: the chip to sample.
    pub const REQ_CHIP: usize = 8;
    /// Written by the host: the tile to sample ([`tile_word`]).
    pub const REQ_TILE: usize = 12;
    /// Written by the device side: the `REQ_SEQ` it answered, written last.
    pub const RESP_SEQ: usize = 16;
    /// Written by the device side: [`STATUS_OK`], [`STATUS_NO_CHIP`] or [`STATUS_NO_TILE`].
    pub const RESP_STATUS: usize = 20;
    /// Written by the device side: the chip it sampled (the request's, echoed).
    pub const RESP_CHIP: usize = 24;
    /// Written by the device side: the tile it sampled ([`tile_word`], echoed).
    pub const RESP_TILE: usize = 28;
    /// Host time before the read, ns (u64: low word, then high word).
    pub const HOST_BEFORE: usize = 32;
    /// The tile's wall clock, cycles (u64).
    pub const DEVICE_CYCLES: usize = 40;
    /// Host time after the read, ns (u64).
    pub const HOST_AFTER: usize = 48;
    /// Requests answered since the device side started (diagnostics).
    pub const SERVED: usize = 56;
    /// Written by the host: ns of host time that pass before this request's read starts (the
    /// host waiting between samples, e.g. to spread a sync window), u32.
    pub const REQ_DELAY: usize = 60;
    /// The value of [`SERVER`] while a responder runs: "CLK1".
    pub const SERVING: u32 = u32::from_le_bytes(*b"CLK1");
    /// `RESP_STATUS`: the sample is valid.
    pub const STATUS_OK: u32 = 0;
    /// `RESP_STATUS`: the device has no such chip.
    pub const STATUS_NO_CHIP: u32 = 1;
    /// `RESP_STATUS`: the chip has no worker tile at those coordinates.
    pub const STATUS_NO_TILE: u32 = 2;

    /// `REQ_TILE`/`RESP_TILE` encoding of a tile.
    pub const fn tile_word(t: crate::NocCoord) -> u32 {
        t.x as u32 | (t.y as u32) << 8
    }

    /// The tile named by a `REQ_TILE`/`RESP_TILE` word.
    pub const fn word_tile(w: u32) -> crate::NocCoord {
        crate::NocCoord::new(w as u8, (w >> 8) as u8)
    }
}

const _: () = assert!(field::CLOCK_MAILBOX + mailbox::SIZE <= field::POSTED_WRITES);

/// Posted register writes: a queue of [`posted::ENTRIES`] writes at
/// [`field::POSTED_WRITES`] through which a host process writes a tile's registers (the
/// debug daisychain's, for sampling) the way a card takes a write through a TLB window: the
/// host does not wait for it, and the device applies the writes in order, each at the moment
/// the device next looks (the emulator: at its next step boundary, at most a few thousand
/// cycles while writes arrive, and at the start of a run for those posted between runs).
/// Offsets are relative to the queue; every field is a little-endian `u32` accessed
/// atomically.
///
/// One client at a time (the image's consumer, which holds its consumer lock):
///
/// 1. The host waits until `POSTED - APPLIED < ENTRIES` (room), writes the entry at index
///    `POSTED % ENTRIES` (chip, [`mailbox::tile_word`], address, value), then
///    `POSTED = POSTED + 1` with release order: the count is written last.
/// 2. The device reads `POSTED` (acquire), applies entries `APPLIED..POSTED` in order
///    (a write it cannot apply - no such chip or tile, not a register it takes - bumps
///    `REFUSED` and sets `LAST_REFUSED` to the entry's number, counted from 1), then writes
///    `APPLIED = POSTED` (release).
/// 3. A host that needs to know its writes took effect waits until `APPLIED` reaches its
///    count and reads `REFUSED`.
///
/// Counts wrap at 2^32 (compare them by wrapping difference).
pub mod posted {
    /// Entries in the queue.
    pub const ENTRIES: usize = 64;
    /// Bytes of one entry: chip, tile word, address, value.
    pub const ENTRY_BYTES: usize = 16;
    /// Written by the host: writes posted so far (written after the entry).
    pub const POSTED: usize = 0;
    /// Written by the device: writes applied so far (written after applying them).
    pub const APPLIED: usize = 4;
    /// Written by the device: writes it refused so far.
    pub const REFUSED: usize = 8;
    /// Written by the device: the number (1-based count) of the last write it refused.
    pub const LAST_REFUSED: usize = 12;
    /// The first entry.
    pub const FIRST_ENTRY: usize = 16;
    /// Offset of entry `n` (any count: taken modulo [`ENTRIES`]) in the queue.
    pub const fn entry(n: u32) -> usize {
        FIRST_ENTRY + (n as usize % ENTRIES) * ENTRY_BYTES
    }
    /// Field offsets inside an entry.
    pub const CHIP: usize = 0;
    /// The tile ([`super::mailbox::tile_word`]).
    pub const TILE: usize = 4;
    /// The register's address.
    pub const ADDR: usize = 8;
    /// The value to write.
    pub const VALUE: usize = 12;
    /// Size of the queue in bytes.
    pub const SIZE: usize = FIRST_ENTRY + ENTRIES * ENTRY_BYTES;
}

const _: () = assert!(field::POSTED_WRITES + posted::SIZE <= HEADER_FIXED as usize);

/// [`field::STATUS`] bit: the device side is running a launch.
pub const STATUS_RUNNING: u32 = 1 << 0;
/// [`field::STATUS`] bit: the last launch finished.
pub const STATUS_FINISHED: u32 = 1 << 1;
/// [`field::STATUS`] bit: a core stopped on a fault.
pub const STATUS_FAULTED: u32 = 1 << 2;

/// The geometry of a device-memory image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// The arch of every chip in the image.
    pub arch: Arch,
    /// Number of chips.
    pub chips: u32,
    /// Tensix tiles per chip.
    pub tiles_per_chip: u32,
    /// Bytes of L1 per tile.
    pub l1_size: u32,
}

impl Geometry {
    /// Most tiles one chip of `arch` can have: every tile of its NoC grid.
    pub const fn max_tiles(arch: Arch) -> u32 {
        let (x, y) = arch.noc_grid();
        x as u32 * y as u32
    }

    /// Refuses a geometry no chip of its arch has: no chip, no tiles or more tiles per chip
    /// than the arch's NoC grid holds, or an L1 size that is not the arch's. Every size
    /// computed from a checked geometry fits in a `u64` (see [`Geometry::checked_file_size`]).
    pub const fn check(&self) -> Result<(), DevFileError> {
        if self.l1_size != self.arch.l1_size() {
            return Err(DevFileError::L1Size {
                arch: self.arch,
                expected: self.arch.l1_size(),
                found: self.l1_size,
            });
        }
        if self.chips == 0
            || self.tiles_per_chip == 0
            || self.tiles_per_chip > Self::max_tiles(self.arch)
        {
            return Err(DevFileError::Geometry {
                arch: self.arch,
                chips: self.chips,
                tiles_per_chip: self.tiles_per_chip,
            });
        }
        Ok(())
    }

    /// Checks one chip's tile table: every coordinate a Tensix worker tile of the arch (so
    /// inside its NoC grid), none listed twice. Two entries for one tile would make its rows
    /// two tiles' rows.
    pub fn check_tiles(&self, chip: u32, tiles: &[NocCoord]) -> Result<(), DevFileError> {
        if tiles.len() as u64 != self.tiles_per_chip as u64 {
            let found = tiles.len().min(u32::MAX as usize) as u32;
            return Err(DevFileError::TileTable {
                expected: self.tiles_per_chip,
                found,
            });
        }
        // First entry index + 1 of each coordinate seen, by `x + 32 * y` (NoC grids are at
        // most 17 x 12, checked before indexing).
        let mut seen = [0u16; 32 * 16];
        let (cols, rows) = self.arch.noc_grid();
        for (index, &tile) in tiles.iter().enumerate() {
            let index = index as u32;
            if tile.x >= cols || tile.y >= rows || self.arch.worker_logical(tile).is_none() {
                return Err(DevFileError::NotWorker {
                    arch: self.arch,
                    chip,
                    index,
                    tile,
                });
            }
            let slot = &mut seen[tile.x as usize + 32 * tile.y as usize];
            if *slot != 0 {
                return Err(DevFileError::DuplicateTile {
                    chip,
                    tile,
                    first: *slot as u32 - 1,
                    second: index,
                });
            }
            *slot = index as u16 + 1;
        }
        Ok(())
    }

    /// Bytes of header including the tile table, rounded up to [`PAGE`]; `None` when that
    /// does not fit in a `u64` (never for a geometry that passes [`Geometry::check`]).
    pub const fn checked_header_size(&self) -> Option<u64> {
        let Some(table) = (4 * self.chips as u64).checked_mul(self.tiles_per_chip as u64) else {
            return None;
        };
        let Some(raw) = table.checked_add(HEADER_FIXED as u64) else {
            return None;
        };
        checked_round_up(raw, PAGE as u64)
    }

    /// Total file size; `None` when it does not fit in a `u64`.
    pub const fn checked_file_size(&self) -> Option<u64> {
        let Some(header) = self.checked_header_size() else {
            return None;
        };
        let Some(stride) = checked_round_up(self.l1_size as u64, PAGE as u64) else {
            return None;
        };
        let Some(tiles) = (self.chips as u64).checked_mul(self.tiles_per_chip as u64) else {
            return None;
        };
        let Some(l1) = stride.checked_mul(tiles) else {
            return None;
        };
        header.checked_add(l1)
    }

    /// Bytes of header including the tile table, rounded up to [`PAGE`] (`u64::MAX` if that
    /// overflows: no file has that size, so an absurd geometry never matches a real file).
    pub const fn header_size(&self) -> u64 {
        match self.checked_header_size() {
            Some(s) => s,
            None => u64::MAX,
        }
    }

    /// Bytes between consecutive tiles' images.
    pub const fn tile_stride(&self) -> u64 {
        round_up(self.l1_size as u64, PAGE as u64)
    }

    /// Total file size (`u64::MAX` if that overflows, as [`Geometry::header_size`]).
    pub const fn file_size(&self) -> u64 {
        match self.checked_file_size() {
            Some(s) => s,
            None => u64::MAX,
        }
    }

    /// File offset of tile `tile` (image order within the chip) of `chip`. Meaningful for a
    /// checked geometry and a tile inside it (then it lies inside [`Geometry::file_size`]).
    pub const fn tile_offset(&self, chip: u32, tile: u32) -> u64 {
        let index = chip as u64 * self.tiles_per_chip as u64 + tile as u64;
        self.header_size()
            .saturating_add(self.tile_stride().saturating_mul(index))
    }

    /// Writes the fixed fields and the tile table into `header` (at least `header_size()` bytes).
    /// `tiles` gives each chip's tile coordinates in image order (the same list for every chip);
    /// a geometry or tile table a reader would refuse is refused here.
    pub fn write_header(&self, header: &mut [u8], tiles: &[NocCoord]) -> Result<(), DevFileError> {
        self.check()?;
        self.check_tiles(0, tiles)?;
        if (header.len() as u64) < self.header_size() {
            return Err(DevFileError::TooSmall {
                expected: self.header_size(),
                found: header.len() as u64,
            });
        }
        header[field::MAGIC..field::MAGIC + 8].copy_from_slice(&MAGIC);
        put(header, field::VERSION, VERSION);
        put(header, field::ARCH, self.arch.id());
        put(header, field::CHIPS, self.chips);
        put(header, field::TILES_PER_CHIP, self.tiles_per_chip);
        put(header, field::L1_SIZE, self.l1_size);
        put(header, field::HEADER_SIZE, self.header_size() as u32);
        put(header, field::TILE_STRIDE, self.tile_stride() as u32);
        for chip in 0..self.chips {
            for (i, t) in tiles.iter().enumerate() {
                let at = HEADER_FIXED as usize + 4 * (chip as usize * tiles.len() + i);
                header[at] = t.x;
                header[at + 1] = t.y;
            }
        }
        Ok(())
    }

    /// Reads and validates the fixed fields of a header; `file_len` is the whole file's size.
    /// Every size is computed with checked arithmetic and the geometry checked
    /// ([`Geometry::check`]) before it is compared with `file_len`, so an accepted header
    /// describes exactly the file's bytes. The tile table is checked by the caller, who
    /// reads it ([`Geometry::check_tiles`]).
    pub fn read_header(header: &[u8], file_len: u64) -> Result<Geometry, DevFileError> {
        if header.len() < HEADER_FIXED as usize {
            return Err(DevFileError::TooSmall {
                expected: HEADER_FIXED as u64,
                found: header.len() as u64,
            });
        }
        if header[..8] != MAGIC {
            let mut found = [0u8; 8];
            found.copy_from_slice(&header[..8]);
            return Err(DevFileError::Magic { found });
        }
        let version = get(header, field::VERSION);
        if version != VERSION {
            return Err(DevFileError::Version {
                expected: VERSION,
                found: version,
            });
        }
        let arch_id = get(header, field::ARCH);
        let arch = Arch::from_id(arch_id).ok_or(DevFileError::Arch { found: arch_id })?;
        let g = Geometry {
            arch,
            chips: get(header, field::CHIPS),
            tiles_per_chip: get(header, field::TILES_PER_CHIP),
            l1_size: get(header, field::L1_SIZE),
        };
        g.check()?;
        let (Some(header_size), Some(file_size)) = (g.checked_header_size(), g.checked_file_size())
        else {
            return Err(DevFileError::TooLarge {
                chips: g.chips,
                tiles_per_chip: g.tiles_per_chip,
            });
        };
        if get(header, field::HEADER_SIZE) as u64 != header_size
            || get(header, field::TILE_STRIDE) as u64 != g.tile_stride()
        {
            return Err(DevFileError::Inconsistent);
        }
        if file_len != file_size {
            return Err(DevFileError::FileSize {
                expected: file_size,
                found: file_len,
            });
        }
        Ok(g)
    }

    /// The NoC coordinate of tile `tile` of `chip` from a header's tile table.
    pub fn tile_coord(&self, header: &[u8], chip: u32, tile: u32) -> Option<NocCoord> {
        if chip >= self.chips || tile >= self.tiles_per_chip {
            return None;
        }
        let index = (chip as usize)
            .checked_mul(self.tiles_per_chip as usize)?
            .checked_add(tile as usize)?;
        let at = index.checked_mul(4)?.checked_add(HEADER_FIXED as usize)?;
        Some(NocCoord::new(
            *header.get(at)?,
            *header.get(at.checked_add(1)?)?,
        ))
    }
}

const fn checked_round_up(v: u64, to: u64) -> Option<u64> {
    v.div_ceil(to).checked_mul(to)
}

const fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to) * to
}

fn put(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// Why a device-memory image was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevFileError {
    /// The file is shorter than its header.
    TooSmall {
        /// Bytes the header needs.
        expected: u64,
        /// Bytes the file has.
        found: u64,
    },
    /// The file does not start with [`MAGIC`].
    Magic {
        /// The first 8 bytes of the file.
        found: [u8; 8],
    },
    /// The header's layout version is not [`VERSION`].
    Version {
        /// The version this build reads.
        expected: u32,
        /// The version in the header.
        found: u32,
    },
    /// The header's arch id is no [`Arch`].
    Arch {
        /// The arch id in the header.
        found: u32,
    },
    /// The header's L1 size is not the arch's.
    L1Size {
        /// The arch the header names.
        arch: Arch,
        /// That arch's L1 size in bytes.
        expected: u32,
        /// The L1 size in the header.
        found: u32,
    },
    /// The header's `HEADER_SIZE` or `TILE_STRIDE` disagrees with the geometry it describes.
    Inconsistent,
    /// The file's length is not the one its header describes (truncated or another file).
    FileSize {
        /// Bytes the header describes.
        expected: u64,
        /// Bytes the file has.
        found: u64,
    },
    /// A chip's tile table does not have one entry per tile.
    TileTable {
        /// Entries expected (tiles per chip).
        expected: u32,
        /// Entries given.
        found: u32,
    },
    /// No chip, no tiles, or more tiles per chip than the arch's NoC grid holds.
    Geometry {
        /// The arch the header names.
        arch: Arch,
        /// Chips in the header.
        chips: u32,
        /// Tiles per chip in the header.
        tiles_per_chip: u32,
    },
    /// Sizes that do not fit in 64 bits.
    TooLarge {
        /// Chips in the header.
        chips: u32,
        /// Tiles per chip in the header.
        tiles_per_chip: u32,
    },
    /// Entry `index` of chip `chip`'s tile table is not a Tensix worker tile of `arch`.
    NotWorker {
        /// The arch the header names.
        arch: Arch,
        /// The chip whose table it is.
        chip: u32,
        /// The entry's position in that table.
        index: u32,
        /// The coordinate the entry holds.
        tile: NocCoord,
    },
    /// Entries `first` and `second` of chip `chip`'s tile table are the same tile.
    DuplicateTile {
        /// The chip whose table it is.
        chip: u32,
        /// The coordinate listed twice.
        tile: NocCoord,
        /// Position of its first entry.
        first: u32,
        /// Position of its second entry.
        second: u32,
    },
}

impl fmt::Display for DevFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DevFileError::TooSmall { expected, found } => {
                write!(f, "device image header is {found} bytes, expected at least {expected}")
            }
            DevFileError::Magic { found } => {
                write!(f, "not a device-memory image: magic is {found:02x?}, expected \"TTDEVMEM\"")
            }
            DevFileError::Version { expected, found } => {
                write!(f, "device image layout version {found}, this build reads version {expected}")
            }
            DevFileError::Arch { found } => write!(f, "device image names unknown arch id {found}"),
            DevFileError::L1Size { arch, expected, found } => {
                write!(f, "device image has {found} bytes of L1 per tile, but {arch} has {expected}")
            }
            DevFileError::Inconsistent => write!(f, "device image header sizes disagree with its geometry"),
            DevFileError::FileSize { expected, found } => write!(
                f,
                "device image is {found} bytes but its header describes {expected} bytes (truncated or wrong file?)"
            ),
            DevFileError::TileTable { expected, found } => {
                write!(f, "tile table has {found} entries, expected {expected}")
            }
            DevFileError::Geometry { arch, chips, tiles_per_chip } => {
                let (x, y) = arch.noc_grid();
                write!(
                    f,
                    "{chips} chip(s) of {tiles_per_chip} tile(s): expected at least one chip and 1..={} tiles per chip \
                     ({arch}'s NoC grid is {x}x{y})",
                    Geometry::max_tiles(*arch)
                )
            }
            DevFileError::TooLarge { chips, tiles_per_chip } => {
                write!(f, "{chips} chip(s) of {tiles_per_chip} tile(s) is more bytes than a 64-bit size can hold")
            }
            DevFileError::NotWorker { arch, chip, index, tile } => {
                let (x, y) = arch.noc_grid();
                write!(
                    f,
                    "tile table entry {index} of chip {chip} is {tile}, which is not a Tensix worker tile of {arch} \
                     (expected a worker coordinate inside its {x}x{y} NoC grid)"
                )
            }
            DevFileError::DuplicateTile { chip, tile, first, second } => write!(
                f,
                "tile table of chip {chip} lists tile {tile} twice (entries {first} and {second}): expected every tile \
                 once, or two tiles' data would be read as one"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DevFileError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry() -> Geometry {
        Geometry {
            arch: Arch::WormholeB0,
            chips: 2,
            tiles_per_chip: 4,
            l1_size: Arch::WormholeB0.l1_size(),
        }
    }

    #[test]
    fn header_round_trips_and_tiles_are_page_aligned() {
        let g = geometry();
        let tiles = [
            NocCoord::new(1, 1),
            NocCoord::new(2, 1),
            NocCoord::new(1, 2),
            NocCoord::new(2, 2),
        ];
        let mut h = std::vec![0u8; g.header_size() as usize];
        g.write_header(&mut h, &tiles).unwrap();
        assert_eq!(Geometry::read_header(&h, g.file_size()).unwrap(), g);
        assert_eq!(g.tile_coord(&h, 1, 2), Some(NocCoord::new(1, 2)));
        assert_eq!(g.tile_offset(0, 1) % PAGE as u64, 0);
        assert_eq!(g.tile_offset(1, 0), g.header_size() + 4 * g.tile_stride());
    }

    fn tiles() -> [NocCoord; 4] {
        [
            NocCoord::new(1, 1),
            NocCoord::new(2, 1),
            NocCoord::new(1, 2),
            NocCoord::new(2, 2),
        ]
    }

    #[test]
    fn wrong_size_and_magic_are_named() {
        let g = geometry();
        let tiles = tiles();
        let mut h = std::vec![0u8; g.header_size() as usize];
        g.write_header(&mut h, &tiles).unwrap();
        let e = Geometry::read_header(&h, g.file_size() - 1).unwrap_err();
        assert!(matches!(e, DevFileError::FileSize { .. }));
        assert!(std::format!("{e}").contains("truncated"));
        h[0] = b'X';
        assert!(matches!(
            Geometry::read_header(&h, g.file_size()),
            Err(DevFileError::Magic { .. })
        ));
    }

    /// A header page whose fixed fields say `chips` x `tiles_per_chip` with the header size
    /// and stride fields set as a 64-bit wrap of the sizes would make them.
    fn forged(chips: u32, tiles_per_chip: u32, header_size: u32) -> [u8; PAGE as usize] {
        let arch = Arch::WormholeB0;
        let mut h = [0u8; PAGE as usize];
        h[..8].copy_from_slice(&MAGIC);
        for (at, v) in [
            (field::VERSION, VERSION),
            (field::ARCH, arch.id()),
            (field::CHIPS, chips),
            (field::TILES_PER_CHIP, tiles_per_chip),
            (field::L1_SIZE, arch.l1_size()),
            (field::HEADER_SIZE, header_size),
            (
                field::TILE_STRIDE,
                round_up(arch.l1_size() as u64, PAGE as u64) as u32,
            ),
        ] {
            put(&mut h, at, v);
        }
        h
    }

    #[test]
    fn sizes_that_overflow_64_bits_are_refused_not_wrapped() {
        // 2^31 chips x 2^31 tiles: 4 bytes of tile table each is 2^64 bytes, which wrapped
        // to 0, so the header claimed one page and the tiles' L1 wrapped to 0 bytes too: a
        // 4 KiB file passed.
        let h = forged(1 << 31, 1 << 31, PAGE);
        let g = Geometry {
            arch: Arch::WormholeB0,
            chips: 1 << 31,
            tiles_per_chip: 1 << 31,
            l1_size: Arch::WormholeB0.l1_size(),
        };
        assert_eq!(g.checked_header_size(), None);
        assert_eq!(g.checked_file_size(), None);
        assert_eq!(
            g.header_size(),
            u64::MAX,
            "saturates: no file has this size"
        );
        assert_eq!(g.file_size(), u64::MAX);
        let e = Geometry::read_header(&h, PAGE as u64).unwrap_err();
        assert!(matches!(e, DevFileError::Geometry { .. }), "{e:?}");
        let msg = std::format!("{e}");
        assert!(
            msg.contains("2147483648 chip(s) of 2147483648 tile(s)")
                && msg.contains("1..=120 tiles per chip"),
            "{msg}"
        );
        // No chip, and more tiles than the NoC grid, whatever the file's size.
        for (chips, tiles) in [(0, 4), (1, 0), (1, 121), (u32::MAX, u32::MAX)] {
            let e = Geometry::read_header(&forged(chips, tiles, PAGE), PAGE as u64).unwrap_err();
            assert!(
                matches!(e, DevFileError::Geometry { .. }),
                "{chips} x {tiles}: {e:?}"
            );
        }
        // The most chips a header can name still computes sizes without wrapping.
        let big = Geometry {
            chips: u32::MAX,
            tiles_per_chip: 120,
            ..geometry()
        };
        assert!(big.check().is_ok());
        assert!(big.checked_file_size().unwrap() > u32::MAX as u64 * 120 * big.tile_stride());
        let e = Geometry::read_header(&forged(u32::MAX, 120, PAGE), PAGE as u64).unwrap_err();
        assert!(
            matches!(
                e,
                DevFileError::Inconsistent | DevFileError::FileSize { .. }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn tile_tables_with_a_tile_twice_or_off_the_worker_grid_are_refused() {
        let g = geometry();
        assert_eq!(g.check_tiles(1, &tiles()), Ok(()));
        let mut twice = tiles();
        twice[3] = twice[1];
        let e = g.check_tiles(1, &twice).unwrap_err();
        assert_eq!(
            e,
            DevFileError::DuplicateTile {
                chip: 1,
                tile: NocCoord::new(2, 1),
                first: 1,
                second: 3
            }
        );
        assert!(
            std::format!("{e}")
                .contains("tile table of chip 1 lists tile (2,1) twice (entries 1 and 3)"),
            "{e}"
        );
        // Wormhole's NoC column 5 holds no Tensix tiles; (10,1) is outside its 10x12 grid.
        for bad in [
            NocCoord::new(5, 1),
            NocCoord::new(10, 1),
            NocCoord::new(0, 0),
            NocCoord::new(255, 255),
        ] {
            let mut t = tiles();
            t[2] = bad;
            let e = g.check_tiles(0, &t).unwrap_err();
            assert_eq!(
                e,
                DevFileError::NotWorker {
                    arch: g.arch,
                    chip: 0,
                    index: 2,
                    tile: bad
                }
            );
            assert!(
                std::format!("{e}").contains("not a Tensix worker tile of wormhole_b0"),
                "{e}"
            );
        }
        assert!(matches!(
            g.check_tiles(0, &tiles()[..3]),
            Err(DevFileError::TileTable {
                expected: 4,
                found: 3
            })
        ));
        // A writer refuses what a reader would.
        let mut h = std::vec![0u8; g.header_size() as usize];
        assert!(matches!(
            g.write_header(&mut h, &twice),
            Err(DevFileError::DuplicateTile { .. })
        ));
        let none = Geometry { chips: 0, ..g };
        assert!(matches!(
            none.write_header(&mut h, &tiles()),
            Err(DevFileError::Geometry { .. })
        ));
    }
}
