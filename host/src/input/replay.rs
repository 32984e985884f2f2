//! Replaying recorded ring traffic as device memory, for readouts larger than any device
//! could hold at once (the scale benchmark) and for tests.
//!
//! A ring's traffic is recorded as its byte stream indexed by the free-running counter (the
//! bytes the producer wrote at counter values `start..`, pads included: the byte at counter
//! `c` sat at ring offset `c % capacity`) and the `HEAD` values at which it published between drains.
//! [`Replay`] presents one tile at a time as a [`DeviceMemory`]: valid control blocks, a
//! `HEAD` that moves to the next recorded value at each [`Replay::step`], and ring bytes
//! that are exactly what L1 held then (every byte of `[TAIL, HEAD)` comes from the stream).
//! The consumer's `TAIL` and `CONSUMER` writes are kept. Other tiles read as never used.

use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use riscv_linker::devfile::Geometry;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One ring's recorded traffic.
#[derive(Clone, Debug, Default)]
pub struct RecordedRing {
    /// The counter value of `bytes[0]` (`TAIL` when the recording started).
    pub start: u32,
    /// Bytes the producer wrote, at counter values `start..start + bytes.len()`.
    pub bytes: Vec<u8>,
    /// `HEAD` after each publication the consumer saw, in order, the last =
    /// `start + bytes.len()`.
    pub heads: Vec<u32>,
    /// Final `STALLS` counter: times the producer waited for room (Block policy).
    pub stalls: u32,
    /// Final `DROPPED` counter: records the producer dropped (Drop policy).
    pub dropped: u32,
    /// The ring's last run id (`RUN_ID` word).
    pub run_id: u32,
}

struct Live {
    rec: RecordedRing,
    /// Index of the current head in `rec.heads` (`None` before the first step).
    step: Option<usize>,
    tail: u32,
}

impl Live {
    fn head(&self) -> u32 {
        self.step.map_or(self.rec.start, |s| self.rec.heads[s])
    }

    /// Copies the recorded bytes at counter values `c..` into `out` (0 where nothing was
    /// recorded, e.g. the bytes just before `start` that a word-rounded read takes in).
    fn bytes_at(&self, c: u32, out: &mut [u8]) {
        out.fill(0);
        let k = c.wrapping_sub(self.rec.start) as i32 as i64;
        let skip = (-k).clamp(0, out.len() as i64) as usize;
        let from = k.max(0) as usize;
        if let Some(src) = self.rec.bytes.get(from..) {
            let n = src.len().min(out.len() - skip);
            out[skip..skip + n].copy_from_slice(&src[..n]);
        }
    }
}

struct Active {
    index: usize,
    rings: Vec<(Risc, Live)>,
    consumer: u32,
}

/// Device memory replaying recorded rings, one tile at a time.
pub struct Replay {
    geometry: Geometry,
    tiles: Vec<NocCoord>,
    active: Mutex<Option<Active>>,
    bytes_read: AtomicU64,
}

impl Replay {
    /// One chip of `tiles` (NoC0 coordinates, image order) of `arch`.
    pub fn new(arch: Arch, tiles: Vec<NocCoord>) -> Replay {
        let geometry = Geometry {
            arch,
            chips: 1,
            tiles_per_chip: tiles.len() as u32,
            l1_size: arch.l1_size(),
        };
        Replay {
            geometry,
            tiles,
            active: Mutex::new(None),
            bytes_read: AtomicU64::new(0),
        }
    }

    /// Makes tile `index` (image order) the live one, with these rings (the previous one
    /// goes back to reading as unused).
    pub fn load_tile(&self, index: usize, rings: Vec<(Risc, RecordedRing)>) {
        let rings = rings
            .into_iter()
            .map(|(r, rec)| {
                (
                    r,
                    Live {
                        tail: rec.start,
                        rec,
                        step: None,
                    },
                )
            })
            .collect();
        *self.lock() = Some(Active {
            index,
            rings,
            consumer: 0,
        });
    }

    /// Publishes the next recorded `HEAD` of every ring of the live tile whose consumer has
    /// caught up (`TAIL` = `HEAD`: the recording was made by a producer that waited for its
    /// consumer); false once every ring has published everything.
    pub fn step(&self) -> bool {
        let mut g = self.lock();
        let Some(a) = g.as_mut() else { return false };
        let mut more = false;
        for (_, l) in &mut a.rings {
            let next = l.step.map_or(0, |s| s + 1);
            if next < l.rec.heads.len() {
                if l.tail == l.head() {
                    l.step = Some(next);
                }
                more = true;
            }
        }
        more
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Active>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn word(&self, a: &Active, chip: u32, at: NocCoord, addr: u32) -> u32 {
        let t = profiler::TILE_BLOCK;
        if (t..t + profiler::TILE_BLOCK_SIZE).contains(&addr) {
            return match addr - t {
                tile::MAGIC => profiler::TILE_MAGIC,
                tile::VERSION => profiler::VERSION,
                tile::ARCH => self.geometry.arch.id(),
                tile::LOCATION => at.x as u32 | (at.y as u32) << 8 | chip << 16,
                tile::CONTROL => tile::POLICY_BLOCK << tile::CONTROL_POLICY_SHIFT,
                tile::CONSUMER => a.consumer,
                _ => 0,
            };
        }
        for (risc, l) in &a.rings {
            let b = profiler::ring_block(*risc);
            let data = profiler::ring_data(*risc);
            if (b..b + profiler::RING_BLOCK_SIZE).contains(&addr) {
                let done = l.step == Some(l.rec.heads.len().saturating_sub(1));
                return match addr - b {
                    ring::MAGIC => profiler::RING_MAGIC,
                    ring::VERSION => profiler::VERSION,
                    ring::RISC => risc.index() as u32,
                    ring::BASE => data.start,
                    ring::CAPACITY => data.size,
                    ring::HEAD => l.head(),
                    ring::TAIL => l.tail,
                    ring::DROPPED => l.rec.dropped,
                    ring::STALLS => l.rec.stalls,
                    ring::RUN_ID => l.rec.run_id,
                    ring::STATE => {
                        if done {
                            ring::STATE_EXITED
                        } else {
                            ring::STATE_RUNNING
                        }
                    }
                    _ => 0,
                };
            }
            if data.contains(addr, 4) {
                let mut b = [0u8; 4];
                l.bytes_at(counter_at(l.tail, addr - data.start, data.size), &mut b);
                return u32::from_le_bytes(b);
            }
        }
        0
    }
}

impl DeviceMemory for Replay {
    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn tiles(&self, chip: u32) -> Vec<NocCoord> {
        if chip == 0 {
            self.tiles.clone()
        } else {
            Vec::new()
        }
    }

    fn read_u32(&self, chip: u32, tile: NocCoord, addr: u32) -> Result<u32> {
        let mut w = [0u32];
        self.read_words(chip, tile, addr, &mut w)?;
        Ok(w[0])
    }

    fn write_u32(&self, chip: u32, at: NocCoord, addr: u32, v: u32) -> Result<()> {
        let index = self.index(chip, at, addr, 1)?;
        let mut g = self.lock();
        let Some(a) = g.as_mut().filter(|a| a.index == index) else {
            return Err(Error::Address {
                what: format!(
                    "chip {chip} tile {at}: write of {addr:#x} to a tile that is not live"
                ),
            });
        };
        if addr == profiler::TILE_BLOCK + tile::CONSUMER {
            a.consumer = v;
            return Ok(());
        }
        for (risc, l) in &mut a.rings {
            if addr == profiler::ring_word(*risc, ring::TAIL) {
                l.tail = v;
                return Ok(());
            }
        }
        Err(Error::Address { what: format!("chip {chip} tile {at}: the replay takes writes of TAIL and CONSUMER only, not {addr:#x}") })
    }

    fn read_words(&self, chip: u32, at: NocCoord, addr: u32, out: &mut [u32]) -> Result<()> {
        let index = self.index(chip, at, addr, out.len())?;
        let g = self.lock();
        match g.as_ref().filter(|a| a.index == index) {
            Some(a) => {
                if !ring_bytes(a, addr, out) {
                    for (i, w) in out.iter_mut().enumerate() {
                        *w = self.word(a, chip, at, addr + 4 * i as u32);
                    }
                }
            }
            None => out.fill(0),
        }
        self.bytes_read
            .fetch_add(4 * out.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn describe(&self) -> String {
        format!("replay of recorded rings ({} tiles)", self.tiles.len())
    }
}

/// The counter value that sits at ring offset `off`: the one in `[tail - 4, tail - 4 +
/// capacity)` (reads are rounded out to words, so they may start up to 3 bytes before
/// `TAIL`).
fn counter_at(tail: u32, off: u32, capacity: u32) -> u32 {
    let base = tail.wrapping_sub(4);
    base.wrapping_add(off.wrapping_sub(base % capacity) % capacity)
}

/// Reads a run of words inside one ring's bytes in one go; false if `addr` is not there.
fn ring_bytes(a: &Active, addr: u32, out: &mut [u32]) -> bool {
    for (risc, l) in &a.rings {
        let data = profiler::ring_data(*risc);
        if data.contains(addr, 4 * out.len() as u32) {
            let mut bytes = vec![0u8; 4 * out.len()];
            l.bytes_at(counter_at(l.tail, addr - data.start, data.size), &mut bytes);
            for (w, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            return true;
        }
    }
    false
}

impl Replay {
    fn index(&self, chip: u32, at: NocCoord, addr: u32, words: usize) -> Result<usize> {
        let i = self
            .tiles
            .iter()
            .position(|&t| t == at)
            .filter(|_| chip == 0)
            .ok_or_else(|| Error::Address {
                what: format!("chip {chip} tile {at}: no such tile in this replay"),
            })?;
        if !addr.is_multiple_of(4) || addr as u64 + 4 * words as u64 > self.geometry.l1_size as u64
        {
            return Err(Error::Address {
                what: format!("chip {chip} tile {at}: {words}-word access at {addr:#x} outside L1"),
            });
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Decoder, ZoneTable};
    use crate::readout::{DrainOptions, Drainer};
    use crate::testing::Rng;

    /// A ring recorded from random records written with the pads a producer leaves at the
    /// ring's end, published at random record boundaries (never more than a ring apart);
    /// and the payload (the records' bytes without pads).
    fn recorded(seed: u64, start: u32) -> (RecordedRing, Vec<u8>) {
        use ttprof_rt::wire::{encode, Record, PAD};
        let cap = profiler::RING_CAPACITY;
        let mut rng = Rng::new(seed);
        let (mut rec, mut payload) = (
            RecordedRing {
                start,
                ..RecordedRing::default()
            },
            Vec::new(),
        );
        let (mut pos, mut t, mut reference, mut last_head) = (start, 1_000u64, 0u64, start);
        for i in 0..3000u64 {
            t += rng.below(50);
            let r = match i % 500 {
                0 => Record::Run {
                    run_id: i as u32,
                    time: t,
                },
                _ => Record::Zone {
                    id: rng.below(9) as u16,
                    end: t,
                    duration: rng.below(30),
                    value: None,
                },
            };
            let e = encode(&r, reference).unwrap();
            reference = t;
            let to_end = cap - pos % cap;
            let pad = if e.bytes() > to_end { to_end } else { 0 };
            if pos.wrapping_sub(last_head) + pad + e.bytes() > cap || rng.percent(3) {
                rec.heads.push(pos);
                last_head = pos;
            }
            if pad > 0 {
                let mut pad = vec![0xEEu8; to_end as usize];
                if to_end >= 4 {
                    pad[2..4].copy_from_slice(&PAD.to_le_bytes());
                }
                rec.bytes.extend_from_slice(&pad);
                pos = pos.wrapping_add(to_end);
            }
            let bytes: Vec<u8> = e.as_slice().iter().flat_map(|h| h.to_le_bytes()).collect();
            rec.bytes.extend_from_slice(&bytes);
            payload.extend_from_slice(&bytes);
            pos = pos.wrapping_add(e.bytes());
        }
        rec.heads.push(pos);
        (rec, payload)
    }

    #[test]
    fn a_replayed_ring_drains_to_exactly_its_records() {
        for (seed, start) in [(1, 0), (2, 0x2000 * 3 + 100), (3, u32::MAX - 5001)] {
            let (rec, payload) = recorded(seed, start);
            let mut want = ZoneTable::new();
            Decoder::default()
                .decode_compact(&payload, &mut want)
                .unwrap();
            let tiles = vec![NocCoord::new(1, 2), NocCoord::new(2, 2)];
            let replay = Replay::new(Arch::Blackhole, tiles);
            replay.load_tile(1, vec![(Risc::Trisc1, rec)]);
            let mut d = Drainer::attach(
                &replay,
                DrainOptions {
                    consume: true,
                    attach_consumer: true,
                },
            )
            .unwrap();
            let mut got = ZoneTable::new();
            let mut steps = 0;
            while replay.step() {
                steps += 1;
                assert!(steps < 10_000, "the drainer keeps up with the replay");
                d.drain().unwrap();
                for (_, t) in d.take_zones() {
                    got.end.extend(t.end);
                    got.duration.extend(t.duration);
                    got.site.extend(t.site);
                }
            }
            let r = d.finish().unwrap();
            assert!(r.issues.iter().all(|i| !i.is_error()), "{:?}", r.issues);
            assert_eq!(
                (&got.end, &got.duration, &got.site),
                (&want.end, &want.duration, &want.site),
                "seed {seed}"
            );
            assert_eq!(r.rings[0].payload_bytes, payload.len() as u64);
        }
    }
}
