//! The launcher's side of the profiler protocol (`riscv_linker::profiler`): what whoever
//! starts programs on the device (a dispatcher, the emulator's driver) writes into each
//! tile before a launch.
//!
//! * [`init_tile`](crate::launch::init_tile) once per session: the tile control block's
//!   magic, version, arch, location, switches and consumer flag.
//! * [`set_run_id`](crate::launch::set_run_id) before every launch: the run id the runtime
//!   copies into its `Run` record.
//! * [`set_recording`](crate::launch::set_recording) at any time: the runtime switch. Off
//!   takes effect at the next zone; on takes effect at the next launch.

use crate::error::Result;
use riscv_linker::profiler::{self, ring, tile, RingMap};
use riscv_linker::{Arch, NocCoord, Risc};

/// Word access to one tile's L1, as device memory offers it.
pub trait TileWords {
    /// Reads the 32-bit little-endian word at L1 byte address `addr` of `tile` on `chip`.
    fn read_word(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32>;
    /// Writes `value` to the 32-bit word at L1 byte address `addr` of `tile` on `chip`.
    fn write_word(&self, chip: u32, tile: NocCoord, addr: u32, value: u32) -> Result<()>;
}

impl<T: crate::devmem::DeviceMemory + ?Sized> TileWords for T {
    fn read_word(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        self.read_u32(chip, tile, addr)
    }
    fn write_word(&self, chip: u32, tile: NocCoord, addr: u32, value: u32) -> Result<()> {
        self.write_u32(chip, tile, addr, value)
    }
}

/// What to do when a ring is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// Whatever the kernel was built with (Block unless built with `drop-when-full`).
    #[default]
    BuildDefault,
    /// Wait for the consumer (lossless); each wait is recorded as a `PROFILER-STALL` zone.
    Block,
    /// Count and report dropped records; never perturb the kernel's timing.
    Drop,
}

impl Policy {
    fn bits(self) -> u32 {
        let p = match self {
            Policy::BuildDefault => tile::POLICY_BUILD_DEFAULT,
            Policy::Block => tile::POLICY_BLOCK,
            Policy::Drop => tile::POLICY_DROP,
        };
        p << tile::CONTROL_POLICY_SHIFT
    }
}

/// The host's switches for one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Whether the runtime records zones (false sets the tile's `CONTROL_DISABLE` bit).
    pub recording: bool,
    /// What a core does when its ring is full.
    pub policy: Policy,
    /// Whether a consumer drains the rings while kernels run (Block waits only then).
    pub consumer: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            recording: true,
            policy: Policy::BuildDefault,
            consumer: false,
        }
    }
}

fn control_word(s: &Settings) -> u32 {
    s.policy.bits()
        | if s.recording {
            0
        } else {
            tile::CONTROL_DISABLE
        }
}

/// Writes a valid tile control block; the magic last, so a runtime never sees half of it.
pub fn init_tile(
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    arch: Arch,
    s: &Settings,
) -> Result<()> {
    init_tile_in(&RingMap::TTPROF, mem, chip, at, arch, s)
}

/// [`init_tile`] in the layout `map` (tt-metal's: the block in `profiler_msg_t`).
pub fn init_tile_in(
    map: &RingMap,
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    arch: Arch,
    s: &Settings,
) -> Result<()> {
    let t = map.tile_block;
    mem.write_word(chip, at, t + tile::MAGIC, 0)?;
    mem.write_word(chip, at, t + tile::VERSION, profiler::VERSION)?;
    mem.write_word(chip, at, t + tile::ARCH, arch.id())?;
    mem.write_word(
        chip,
        at,
        t + tile::LOCATION,
        at.x as u32 | (at.y as u32) << 8 | chip << 16,
    )?;
    mem.write_word(chip, at, t + tile::CONTROL, control_word(s))?;
    mem.write_word(chip, at, t + tile::CONSUMER, s.consumer as u32)?;
    mem.write_word(chip, at, t + tile::RUN_ID, 0)?;
    mem.write_word(chip, at, t + tile::MAGIC, profiler::TILE_MAGIC)
}

/// Sets the run id of the next launch on a tile.
pub fn set_run_id(mem: &dyn TileWords, chip: u32, at: NocCoord, run_id: u32) -> Result<()> {
    set_run_id_in(&RingMap::TTPROF, mem, chip, at, run_id)
}

/// [`set_run_id`] in the layout `map`.
pub fn set_run_id_in(
    map: &RingMap,
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    run_id: u32,
) -> Result<()> {
    mem.write_word(chip, at, map.tile_block + tile::RUN_ID, run_id)
}

/// Records which kernel ELF (its bytes) `risc` of a tile runs in the next launch (a hash,
/// `riscv_linker::profiler::tile::KERNELS`): a readout then tells an op log of another run,
/// and a sampling capture which tiles run the same kernel.
pub fn set_kernel(
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    risc: riscv_linker::Risc,
    elf: &[u8],
) -> Result<()> {
    set_kernel_in(&RingMap::TTPROF, mem, chip, at, risc, elf)
}

/// [`set_kernel`] in the layout `map`.
pub fn set_kernel_in(
    map: &RingMap,
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    risc: riscv_linker::Risc,
    elf: &[u8],
) -> Result<()> {
    mem.write_word(
        chip,
        at,
        map.tile_block + tile::KERNELS + 4 * risc.index() as u32,
        kernel_hash(elf),
    )
}

/// The launcher's hash of a kernel ELF's bytes: FNV-1a, 32 bits, never 0 (0 says "no
/// hash": a launcher that writes none, like tt-metal's).
pub(crate) fn kernel_hash(bytes: &[u8]) -> u32 {
    crate::util::fnv::fnv1a_32(bytes).max(1)
}

/// Marks whether a consumer is draining the tile's rings.
pub fn set_consumer(mem: &dyn TileWords, chip: u32, at: NocCoord, attached: bool) -> Result<()> {
    mem.write_word(
        chip,
        at,
        profiler::TILE_BLOCK + tile::CONSUMER,
        attached as u32,
    )
}

/// Switches recording on or off for a tile. Off: the `CONTROL` bit first, then every
/// ring's L1 anchor word (the runtime re-checks `CONTROL` after it moves an anchor, so the
/// two writes cannot be undone by a racing runtime); each core honours it at its next slow
/// path, where it also clears the core-local hot word its zones load. On: takes effect at
/// the next launch.
pub fn set_recording(mem: &dyn TileWords, chip: u32, at: NocCoord, on: bool) -> Result<()> {
    let addr = profiler::TILE_BLOCK + tile::CONTROL;
    let control = mem.read_word(chip, at, addr)?;
    let control = if on {
        control & !tile::CONTROL_DISABLE
    } else {
        control | tile::CONTROL_DISABLE
    };
    mem.write_word(chip, at, addr, control)?;
    if !on {
        for risc in Risc::ALL {
            mem.write_word(chip, at, profiler::ring_word(risc, ring::ANCHOR), 0)?;
        }
    }
    Ok(())
}

/// What [`publish_stopped`] did for one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PublishOutcome {
    /// No ttprof kernel was running on that core (nothing to publish).
    NotRunning,
    /// `bytes` of records written after the core's last publication are now published.
    Published {
        /// Bytes of ring records newly published (0 when the core had published everything).
        bytes: u32,
    },
}

/// After a run stopped on a fault, publishes what a stopped core wrote into its ring past
/// its last `HEAD`, as the core itself would have at its next slow path, given its write
/// pointer `tp` (the `tp` register of the stopped hart). Only for a core that will not run
/// again before a new launch: `HEAD` is the producer's word. Marks the ring
/// `STATE_STOPPED`. Positions that do not fit the ring are an error naming the core.
pub(crate) fn publish_stopped(
    map: &RingMap,
    mem: &dyn TileWords,
    chip: u32,
    at: NocCoord,
    risc: Risc,
    tp: u32,
) -> Result<PublishOutcome> {
    let word = |w: u32| mem.read_word(chip, at, map.ring_block(risc) + w);
    let state = word(ring::STATE)?;
    if word(ring::MAGIC)? != profiler::RING_MAGIC || state & ring::STATE_RUNNING == 0 {
        return Ok(PublishOutcome::NotRunning);
    }
    let (base, capacity) = (word(ring::BASE)?, word(ring::CAPACITY)?);
    let (head, tail, lap) = (word(ring::HEAD)?, word(ring::TAIL)?, word(ring::LAP)?);
    let bad = |what: String| crate::Error::Device {
        at: crate::Location {
            chip,
            x: at.x,
            y: at.y,
            risc: Some(risc),
        },
        what: format!("cannot publish the stopped core's last records: {what}"),
    };
    if tp < base || tp - base > capacity {
        return Err(bad(format!(
            "its write pointer {tp:#x} is outside its ring {base:#x}..{:#x}",
            base as u64 + capacity as u64
        )));
    }
    let position = lap.wrapping_add(tp - base);
    let new = position.wrapping_sub(head);
    if new > capacity || position.wrapping_sub(tail) > capacity {
        return Err(bad(format!("HEAD would move from {head:#x} to {position:#x} (TAIL {tail:#x}, capacity {capacity:#x})")));
    }
    mem.write_word(chip, at, map.ring_block(risc) + ring::HEAD, position)?;
    mem.write_word(
        chip,
        at,
        map.ring_block(risc) + ring::STATE,
        (state & !ring::STATE_RUNNING) | ring::STATE_STOPPED,
    )?;
    Ok(PublishOutcome::Published { bytes: new })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Words(RefCell<HashMap<u32, u32>>, RefCell<Vec<u32>>);

    impl TileWords for Words {
        fn read_word(&self, _c: u32, _t: NocCoord, addr: u32) -> Result<u32> {
            Ok(*self.0.borrow().get(&addr).unwrap_or(&0))
        }
        fn write_word(&self, _c: u32, _t: NocCoord, addr: u32, v: u32) -> Result<()> {
            self.0.borrow_mut().insert(addr, v);
            self.1.borrow_mut().push(addr);
            Ok(())
        }
    }

    #[test]
    fn init_writes_the_magic_last_and_switches_encode_the_protocol() {
        let w = Words::default();
        let t = NocCoord::new(1, 1);
        let s = Settings {
            recording: false,
            policy: Policy::Drop,
            consumer: true,
        };
        init_tile(&w, 0, t, Arch::Blackhole, &s).unwrap();
        assert_eq!(
            *w.1.borrow().last().unwrap(),
            profiler::TILE_BLOCK + tile::MAGIC
        );
        let control = w
            .read_word(0, t, profiler::TILE_BLOCK + tile::CONTROL)
            .unwrap();
        assert_eq!(
            control,
            tile::CONTROL_DISABLE | tile::POLICY_DROP << tile::CONTROL_POLICY_SHIFT
        );
        assert_eq!(
            w.read_word(0, t, profiler::TILE_BLOCK + tile::ARCH)
                .unwrap(),
            Arch::Blackhole.id()
        );
        set_recording(&w, 0, t, true).unwrap();
        let control = w
            .read_word(0, t, profiler::TILE_BLOCK + tile::CONTROL)
            .unwrap();
        assert_eq!(control & tile::CONTROL_DISABLE, 0);
        w.write_word(0, t, profiler::ring_word(Risc::Trisc1, ring::ANCHOR), 77)
            .unwrap();
        set_recording(&w, 0, t, false).unwrap();
        assert_eq!(
            w.read_word(0, t, profiler::ring_word(Risc::Trisc1, ring::ANCHOR))
                .unwrap(),
            0
        );
    }

    #[test]
    fn a_stopped_core_s_last_records_are_published_once_and_impossible_positions_refused() {
        let w = Words::default();
        let t = NocCoord::new(1, 1);
        let r = Risc::Ncrisc;
        let set = |off: u32, v: u32| w.write_word(0, t, profiler::ring_word(r, off), v).unwrap();
        let get = |off: u32| w.read_word(0, t, profiler::ring_word(r, off)).unwrap();
        let base = profiler::ring_data(r).start;
        assert_eq!(
            publish_stopped(&RingMap::TTPROF, &w, 0, t, r, base).unwrap(),
            PublishOutcome::NotRunning,
            "no ring yet"
        );
        for (off, v) in [
            (ring::MAGIC, profiler::RING_MAGIC),
            (ring::BASE, base),
            (ring::CAPACITY, 0x2000),
        ] {
            set(off, v);
        }
        // Second lap: the lap starts at counter 0x2000; HEAD published 0x2010, TAIL 0x2000.
        for (off, v) in [
            (ring::STATE, ring::STATE_RUNNING),
            (ring::LAP, 0x2000),
            (ring::HEAD, 0x2010),
            (ring::TAIL, 0x2000),
        ] {
            set(off, v);
        }
        assert!(
            publish_stopped(&RingMap::TTPROF, &w, 0, t, r, base + 0x2004)
                .unwrap_err()
                .to_string()
                .contains("outside its ring")
        );
        assert!(
            publish_stopped(&RingMap::TTPROF, &w, 0, t, r, base + 0x8)
                .unwrap_err()
                .to_string()
                .contains("HEAD would move"),
            "backwards"
        );
        assert_eq!(
            publish_stopped(&RingMap::TTPROF, &w, 0, t, r, base + 0x40).unwrap(),
            PublishOutcome::Published { bytes: 0x30 }
        );
        assert_eq!(
            (get(ring::HEAD), get(ring::STATE)),
            (0x2040, ring::STATE_STOPPED)
        );
        assert_eq!(
            publish_stopped(&RingMap::TTPROF, &w, 0, t, r, base + 0x40).unwrap(),
            PublishOutcome::NotRunning,
            "once"
        );
    }
}
