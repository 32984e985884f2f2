//! The control words of a tile and of its rings, read in one access each and checked
//! against `riscv_linker::profiler`.

use crate::error::Location;
use crate::issue::Issue;
use riscv_linker::devfile::Geometry;
use riscv_linker::profiler::{self, ring, tile, RingMap};
use riscv_linker::{NocCoord, Risc};

/// Words read from the tile control block (`MAGIC..=CONSUMER`).
pub(crate) const TILE_WORDS: usize = (tile::CONSUMER / 4 + 1) as usize;
/// Words read from a ring control block (`MAGIC..=STATE`).
pub(crate) const RING_WORDS: usize = (ring::STATE / 4 + 1) as usize;
/// First word of the per-drain read (`HEAD..=STATE`).
pub(crate) const DRAIN_FIRST: u32 = ring::HEAD;
/// Words of the per-drain read (`HEAD..=STATE`).
pub(crate) const DRAIN_WORDS: usize = ((ring::STATE - ring::HEAD) / 4 + 1) as usize;

/// A ring control block as read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingControl {
    /// `MAGIC`: `profiler::RING_MAGIC` ("TTPR") once the block is valid.
    pub magic: u32,
    /// `VERSION`: the profiler protocol version the block was written for.
    pub version: u32,
    /// `RISC`: the index (`Risc::index`) of the core that owns the ring.
    pub risc: u32,
    /// `BASE`: L1 byte address of the ring's bytes.
    pub base: u32,
    /// `CAPACITY`: ring size in bytes, a power of two.
    pub capacity: u32,
    /// `HEAD`: published write position, a free-running byte counter (runtime's word).
    pub head: u32,
    /// `TAIL`: consumed position, a free-running byte counter (host's word).
    pub tail: u32,
    /// `ANCHOR`: low word of the hot path's time anchor, 0 while recording is off.
    pub anchor: u32,
    /// `DROPPED`: records dropped because the ring was full (Drop policy).
    pub dropped: u32,
    /// `STALLS`: times the producer waited for the consumer (Block policy).
    pub stalls: u32,
    /// `RUN_ID`: run id of the launch in progress or last finished.
    pub run_id: u32,
    /// `STATE`: bits `ring::STATE_RUNNING`, `STATE_EXITED`, `STATE_PANICKED`, `STATE_STOPPED`.
    pub state: u32,
}

impl RingControl {
    /// The block from a `MAGIC..=STATE` read.
    pub(crate) fn from_words(w: &[u32; RING_WORDS]) -> RingControl {
        let at = |off: u32| w[(off / 4) as usize];
        let mut c = RingControl {
            magic: at(ring::MAGIC),
            version: at(ring::VERSION),
            risc: at(ring::RISC),
            base: at(ring::BASE),
            capacity: at(ring::CAPACITY),
            ..RingControl::default()
        };
        c.set_live(&w[(DRAIN_FIRST / 4) as usize..]);
        c
    }

    /// Updates the words that change while the ring runs from a `HEAD..=STATE` read.
    pub(crate) fn set_live(&mut self, w: &[u32]) {
        let at = |off: u32| {
            w.get(((off - DRAIN_FIRST) / 4) as usize)
                .copied()
                .unwrap_or(0)
        };
        self.head = at(ring::HEAD);
        self.tail = at(ring::TAIL);
        self.anchor = at(ring::ANCHOR);
        self.dropped = at(ring::DROPPED);
        self.stalls = at(ring::STALLS);
        self.run_id = at(ring::RUN_ID);
        self.state = at(ring::STATE);
    }

    /// Live bytes between the consumer and the producer.
    pub fn used(&self) -> u32 {
        self.head.wrapping_sub(self.tail)
    }
}

fn fourcc(v: u32) -> String {
    v.to_le_bytes()
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
        .collect()
}

/// Checks the identity words of a ring block; `Err` says what was expected.
pub fn check_ring(c: &RingControl, risc: Risc, map: &RingMap) -> Result<(), String> {
    if c.magic != profiler::RING_MAGIC {
        return Err(format!(
            "ring control block magic is {:#010x} (\"{}\"), expected {:#010x} (\"TTPR\") at L1 {:#x}",
            c.magic,
            fourcc(c.magic),
            profiler::RING_MAGIC,
            map.ring_block(risc)
        ));
    }
    if c.version != profiler::VERSION {
        return Err(format!(
            "ring format version {}, this build reads version {}",
            c.version,
            profiler::VERSION
        ));
    }
    if c.risc != risc.index() as u32 {
        return Err(format!(
            "ring block names RISC index {}, expected {} ({risc})",
            c.risc,
            risc.index()
        ));
    }
    let data = map.ring_data(risc);
    if c.base != data.start || c.capacity != data.size {
        return Err(format!(
            "ring at {:#x} with capacity {:#x} bytes, expected {:#x} with {:#x} ({} layout, \
             riscv_linker::profiler::RingMap)",
            c.base,
            c.capacity,
            data.start,
            data.size,
            map.name()
        ));
    }
    check_positions(c)
}

/// Checks `HEAD` and `TAIL` against each other and the capacity.
pub(crate) fn check_positions(c: &RingControl) -> Result<(), String> {
    if c.used() > c.capacity {
        return Err(format!(
            "HEAD {:#x} - TAIL {:#x} = {} bytes, beyond the ring's capacity of {} bytes",
            c.head,
            c.tail,
            c.used(),
            c.capacity
        ));
    }
    if !c.head.is_multiple_of(2) || !c.tail.is_multiple_of(2) {
        return Err(format!(
            "HEAD {:#x} / TAIL {:#x}: expected even positions (records are halfwords)",
            c.head, c.tail
        ));
    }
    Ok(())
}

/// Checks a tile control block whose magic is non-zero; `Err` is an error issue, `Ok` holds
/// warnings.
pub(crate) fn check_tile(
    w: &[u32; TILE_WORDS],
    g: &Geometry,
    map: &RingMap,
    at: Location,
) -> Result<Vec<Issue>, Issue> {
    let word = |off: u32| w[(off / 4) as usize];
    let magic = word(tile::MAGIC);
    if magic != profiler::TILE_MAGIC {
        return Err(Issue::error(
            Some(at),
            format!(
                "tile control block magic is {magic:#010x} (\"{}\"), expected {:#010x} (\"TTPF\") at L1 {:#x}",
                fourcc(magic),
                profiler::TILE_MAGIC,
                map.tile_block
            ),
        ));
    }
    let version = word(tile::VERSION);
    if version != profiler::VERSION {
        return Err(Issue::error(
            Some(at),
            format!(
                "tile format version {version}, this build reads version {}",
                profiler::VERSION
            ),
        ));
    }
    let arch = word(tile::ARCH);
    if arch != g.arch.id() {
        return Err(Issue::error(
            Some(at),
            format!(
                "tile control block says arch id {arch}, expected {} ({}, from the device)",
                g.arch.id(),
                g.arch
            ),
        ));
    }
    let mut issues = Vec::new();
    let loc = word(tile::LOCATION);
    let here = at.x as u32 | (at.y as u32) << 8 | at.chip << 16;
    if loc != 0 && loc != here {
        issues.push(Issue::warning(
            Some(at),
            format!(
                "tile control block's location word says chip {} tile ({},{}); read from here",
                loc >> 16,
                loc & 0xFF,
                (loc >> 8) & 0xFF
            ),
        ));
    }
    Ok(issues)
}

/// The location of a ring.
pub fn location(chip: u32, tile: NocCoord, risc: Option<Risc>) -> Location {
    Location {
        chip,
        x: tile.x,
        y: tile.y,
        risc,
    }
}
