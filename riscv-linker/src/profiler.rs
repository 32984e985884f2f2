//! The profiler's region of L1: one tile control block and one ring per RISC.
//!
//! Everything here is a contract between three parties: the kernel runtime (`ttprof-rt`)
//! that produces, the host tool (`ttprof`) that consumes, and whoever launches programs
//! (the emulator's launcher or a real dispatcher). Each word has exactly one writer,
//! named in its doc comment; the other parties only read it.
//!
//! The control blocks live below L1 address 0x800, reachable with a single `lw rd, imm(x0)`;
//! the zone hot path itself loads its anchor from core-local RAM ([`HOT_WORD`]).
//!
//! Positions in a ring (`head`, `tail`) are free-running byte counters that wrap at 2^32;
//! the byte offset in the ring is `counter % capacity`. Capacity is a power of two.

use crate::{Region, Risc};

/// Layout and wire-format version. Bump on any incompatible change to this module or to
/// the ring encoding in `ttprof-rt::wire`.
pub const VERSION: u32 = 1;

/// `"TTPF"` in little-endian byte order: marks a valid tile control block.
pub const TILE_MAGIC: u32 = u32::from_le_bytes(*b"TTPF");
/// `"TTPR"` in little-endian byte order: marks a valid ring control block.
pub const RING_MAGIC: u32 = u32::from_le_bytes(*b"TTPR");

/// Address of the tile control block.
pub const TILE_BLOCK: u32 = 0x40;
/// Size of the tile control block.
pub const TILE_BLOCK_SIZE: u32 = 0x40;

/// Word offsets inside the tile control block.
pub mod tile {
    /// [`super::TILE_MAGIC`]. Writer: launcher (session init).
    pub const MAGIC: u32 = 0x00;
    /// [`super::VERSION`]. Writer: launcher.
    pub const VERSION: u32 = 0x04;
    /// `Arch::id()`. Writer: launcher.
    pub const ARCH: u32 = 0x08;
    /// NoC0 `x | y << 8 | chip << 16`. Writer: launcher (informational).
    pub const LOCATION: u32 = 0x0C;
    /// Host switches, see [`CONTROL_DISABLE`] and [`CONTROL_POLICY_SHIFT`]. Writer: host.
    pub const CONTROL: u32 = 0x10;
    /// Run (program) id of the launch about to start. Writer: launcher, before release.
    pub const RUN_ID: u32 = 0x14;
    /// The consumer's lease: non-zero while a consumer drains the rings, and a heartbeat: the
    /// consumer writes a new non-zero value at every drain. Block policy waits only while it
    /// is non-zero, and gives up on a consumer whose heartbeat has not changed for
    /// [`CONSUMER_LEASE_CYCLES`] (one killed without detaching), see `ring::CONSUMER_GONE`.
    /// Writer: host.
    pub const CONSUMER: u32 = 0x18;
    /// Five words, one per RISC in `Risc` order: a hash of the kernel ELF loaded on that
    /// RISC for the launch in progress or last finished (`ttprof::provenance::kernel_hash`),
    /// so a readout can tell another run's op log; 0: unknown. Writer: launcher, before
    /// release.
    pub const KERNELS: u32 = 0x1C;
    /// Cycles a waiting producer gives a consumer's heartbeat to change before it stops
    /// waiting (2^27: 0.13 s at 1 GHz; a live consumer drains far more often).
    pub const CONSUMER_LEASE_CYCLES: u64 = 1 << 27;

    /// `CONTROL` bit 0: recording off. Zones cost one load and one branch while set.
    pub const CONTROL_DISABLE: u32 = 1 << 0;
    /// `CONTROL` bits 1..=2: full-ring policy override (0 = build default, 1 = block, 2 = drop).
    pub const CONTROL_POLICY_SHIFT: u32 = 1;
    /// The policy bits of `CONTROL`.
    pub const CONTROL_POLICY_MASK: u32 = 0b11 << CONTROL_POLICY_SHIFT;
    /// Policy 0: the runtime's build-time default (block, or drop with its `drop-when-full` feature).
    pub const POLICY_BUILD_DEFAULT: u32 = 0;
    /// Policy 1: a producer waits for room while a consumer drains.
    pub const POLICY_BLOCK: u32 = 1;
    /// Policy 2: a producer drops the record when the ring is full, and counts it.
    pub const POLICY_DROP: u32 = 2;
}

/// Core-local RAM address of the *hot word*: this RISC's copy of `ring::ANCHOR`, the word
/// the zone hot path loads (0: recording off). A load from core-local RAM takes 2 cycles
/// where an L1 load takes 8 or more and waits behind the L1 port's stores, but the host
/// cannot reach core-local RAM: the runtime writes the hot word with `ring::ANCHOR`
/// whenever it moves the anchor (at launch start and in slow paths), and re-reads the host's
/// switch (`tile::CONTROL_DISABLE`) at those points. Every core has its own local RAM at
/// this address; the stack stops [`HOT_RESERVED`] bytes above it.
pub const HOT_WORD: u32 = crate::mmio::LOCAL_RAM_BASE;
/// Bytes at the start of core-local RAM reserved for the runtime's hot word.
pub const HOT_RESERVED: u32 = 16;

/// Address of the first ring control block (one per RISC, [`RING_BLOCK_SIZE`] apart).
pub const RING_BLOCKS: u32 = 0x80;
/// Size of one ring control block.
pub const RING_BLOCK_SIZE: u32 = 0x80;

/// Word offsets inside a ring control block.
pub mod ring {
    /// [`super::RING_MAGIC`]. Writer: runtime (first launch) or launcher (session init).
    pub const MAGIC: u32 = 0x00;
    /// [`super::VERSION`]. Same writers as `MAGIC`.
    pub const VERSION: u32 = 0x04;
    /// `Risc::index()`. Same writers as `MAGIC`.
    pub const RISC: u32 = 0x08;
    /// L1 address of the ring's bytes. Same writers as `MAGIC`.
    pub const BASE: u32 = 0x0C;
    /// Ring size in bytes, a power of two. Same writers as `MAGIC`.
    pub const CAPACITY: u32 = 0x10;
    /// Published write position (free-running byte counter). Writer: runtime.
    /// Every byte before it is complete and may be read.
    pub const HEAD: u32 = 0x14;
    /// Consumed position (free-running byte counter). Writer: host.
    pub const TAIL: u32 = 0x18;
    /// Hot-path time anchor (low word), 0 while recording is off: the host-visible copy of
    /// the core-local [`super::HOT_WORD`] the hot path loads. Writer: runtime; the host may
    /// write 0 when it sets `tile::CONTROL_DISABLE` (the runtime honours that switch at its
    /// next slow path, at most 2^15 cycles of zone activity later, or at the next launch).
    pub const ANCHOR: u32 = 0x1C;
    /// Records (zones, events, data) dropped because the ring was full. Writer: runtime.
    pub const DROPPED: u32 = 0x20;
    /// Number of waits for the consumer (each recorded as a `PROFILER-STALL` zone). Writer: runtime.
    pub const STALLS: u32 = 0x24;
    /// Run id of the launch in progress or last finished. Writer: runtime.
    pub const RUN_ID: u32 = 0x28;
    /// Bit 0: a kernel is running on this RISC; bit 1: the last launch exited. Writer: runtime.
    pub const STATE: u32 = 0x2C;
    /// The consumer heartbeat (tile `CONSUMER` word) at which this producer stopped waiting
    /// for a consumer that had stopped draining: while `CONSUMER` still holds that value the
    /// producer does not wait again (it drops, and counts). 0: it waits. Writer: runtime.
    pub const CONSUMER_GONE: u32 = 0x30;

    /// Runtime-private state (time of the last slow record, anchor high word, ...).
    pub const PRIVATE: u32 = 0x40;

    /// `STATE` bit 0: a kernel is running on this RISC.
    pub const STATE_RUNNING: u32 = 1 << 0;
    /// `STATE` bit 1: the last launch exited.
    pub const STATE_EXITED: u32 = 1 << 1;
    /// The kernel panicked (its panic handler published and set this). Writer: runtime.
    pub const STATE_PANICKED: u32 = 1 << 2;
    /// The core was stopped by a fault and the host published the records it had written
    /// past its last `HEAD` (see [`LAP`]). Writer: the host that stopped it.
    pub const STATE_STOPPED: u32 = 1 << 3;

    /// Runtime-private word: the `HEAD` value of the ring's first byte in the current lap, so
    /// `HEAD = LAP + (write pointer - ring base)`. The host reads it only to publish what a
    /// core stopped by a fault wrote after its last publication (its write pointer is `tp`).
    pub const LAP: u32 = PRIVATE + 0x14;
}

/// L1 address of the first ring's bytes.
pub const RING_BASE: u32 = 0x20000;
/// Bytes per ring.
pub const RING_CAPACITY: u32 = 0x2000;

/// The region holding the tile and ring control blocks.
pub const fn control_region() -> Region {
    Region::new(
        TILE_BLOCK,
        RING_BLOCKS + RING_BLOCK_SIZE * Risc::COUNT as u32 - TILE_BLOCK,
    )
}

/// The region holding all rings.
pub const fn rings_region() -> Region {
    Region::new(RING_BASE, RING_CAPACITY * Risc::COUNT as u32)
}

/// Bytes of each of the two buffers of the timestamper backend (`--backend timestamper`).
pub const STAMP_BUFFER_BYTES: u32 = 0x8000;

/// The timestamper backend's two buffers in L1 (the debug timestamper writes its 16-byte
/// units there): the top 64 KiB of the tile's L1, buffer 0 then buffer 1. A kernel that
/// uses the top of L1 cannot run with that backend.
pub const fn stamp_buffers(arch: crate::Arch) -> [Region; 2] {
    let top = arch.l1_size() & !0xF;
    [
        Region::new(top - 2 * STAMP_BUFFER_BYTES, STAMP_BUFFER_BYTES),
        Region::new(top - STAMP_BUFFER_BYTES, STAMP_BUFFER_BYTES),
    ]
}

/// Address of `risc`'s ring control block.
pub const fn ring_block(risc: Risc) -> u32 {
    RING_BLOCKS + risc.index() as u32 * RING_BLOCK_SIZE
}

/// Address of one word of `risc`'s ring control block (`offset` from [`ring`]).
pub const fn ring_word(risc: Risc, offset: u32) -> u32 {
    ring_block(risc) + offset
}

/// The bytes of `risc`'s ring.
pub const fn ring_data(risc: Risc) -> Region {
    Region::new(
        RING_BASE + risc.index() as u32 * RING_CAPACITY,
        RING_CAPACITY,
    )
}

const _: () = {
    assert!(RING_CAPACITY.is_power_of_two());
    // The runtime reaches its anchor with a 12-bit signed immediate from x0.
    assert!(ring_word(Risc::Trisc2, ring::ANCHOR) < 0x800);
    assert!(TILE_BLOCK + TILE_BLOCK_SIZE <= RING_BLOCKS);
};

/// Where a tile's profiler blocks and rings are in its L1: ttprof's own layout
/// ([`RingMap::TTPROF`]: the blocks below 0x800, the rings from [`RING_BASE`]) or
/// tt-metal's ([`RingMap::tt_metal`]: the `profiler_msg_t` area of the mailboxes, which
/// tt-metal reserves for its own profiler; docs/design/tt-metal.md). A host reading a tile
/// finds which by the tile block's magic (the readout tries ttprof's first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingMap {
    /// Address of the tile control block.
    pub tile_block: u32,
    /// BRISC's ring control block; each RISC's `block_stride` further.
    first_block: u32,
    block_stride: u32,
    /// BRISC's ring bytes; each RISC's `data_stride` further.
    first_data: u32,
    data_stride: u32,
    /// Bytes per ring (under tt-metal not a power of two: offsets are positions modulo it).
    capacity: u32,
}

impl RingMap {
    /// ttprof's own layout.
    pub const TTPROF: RingMap = RingMap {
        tile_block: TILE_BLOCK,
        first_block: RING_BLOCKS,
        block_stride: RING_BLOCK_SIZE,
        first_data: RING_BASE,
        data_stride: RING_CAPACITY,
        capacity: RING_CAPACITY,
    };

    /// tt-metal's layout on `arch` (ttnn 0.81.1's `dev_msgs.h`): the tile block is the first
    /// words of `profiler_msg_t::control_vector` (256 bytes), then one 2 KiB
    /// `profiler_msg_buffer_t` per RISC: ttprof's 128-byte ring block, then the ring.
    pub const fn tt_metal(arch: crate::Arch) -> RingMap {
        let area = crate::tt_metal::msgs::mailboxes(arch).profiler;
        let first_block = area + TT_METAL_CONTROL_VECTOR;
        RingMap {
            tile_block: area,
            first_block,
            block_stride: TT_METAL_BUFFER,
            first_data: first_block + RING_BLOCK_SIZE,
            data_stride: TT_METAL_BUFFER,
            capacity: TT_METAL_BUFFER - RING_BLOCK_SIZE,
        }
    }

    /// Address of `risc`'s ring control block.
    pub const fn ring_block(&self, risc: Risc) -> u32 {
        self.first_block + risc.index() as u32 * self.block_stride
    }

    /// The bytes of `risc`'s ring.
    pub const fn ring_data(&self, risc: Risc) -> Region {
        Region::new(
            self.first_data + risc.index() as u32 * self.data_stride,
            self.capacity,
        )
    }

    /// The L1 a readout of this layout reads, for a snapshot to record: ttprof's blocks and
    /// rings; under tt-metal its area, and ttprof's blocks too (a readout looks for ttprof's
    /// tile block first).
    pub const fn regions(&self) -> [Region; 2] {
        if self.tile_block == TILE_BLOCK {
            [control_region(), rings_region()]
        } else {
            let end = self.first_block + Risc::COUNT as u32 * self.block_stride;
            [
                control_region(),
                Region::new(self.tile_block, end - self.tile_block),
            ]
        }
    }

    /// The layout's name, for messages.
    pub const fn name(&self) -> &'static str {
        if self.tile_block == TILE_BLOCK {
            "ttprof's"
        } else {
            "tt-metal's"
        }
    }
}

/// Bytes of `profiler_msg_t::control_vector` (tt-metal's `PROFILER_L1_CONTROL_VECTOR_SIZE`
/// words of 4 bytes).
pub const TT_METAL_CONTROL_VECTOR: u32 = 0x100;
/// Bytes of one RISC's `profiler_msg_buffer_t` under tt-metal.
pub const TT_METAL_BUFFER: u32 = 0x800;

const _: () = {
    assert!(RingMap::TTPROF.ring_block(Risc::Ncrisc) == ring_block(Risc::Ncrisc));
    assert!(RingMap::tt_metal(crate::Arch::WormholeB0).ring_block(Risc::Brisc) == 0xC10);
    assert!(RingMap::tt_metal(crate::Arch::Blackhole).ring_block(Risc::Ncrisc) == 0x14E0);
};
