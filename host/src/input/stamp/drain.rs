//! The drain protocol: taking a tile's timestamper buffers through [`DeviceMemory`] while
//! kernels run, without losing a unit, although buffer 1's position cannot be read.
//!
//! The host owns the timestamper: [`init_tile`] sets buffer 0 and buffer 1
//! (`riscv_linker::profiler::stamp_buffers`), zeroes them, clears the sticky bits and
//! enables both. Units go to buffer 0 until it is full, then to buffer 1, then nowhere (the
//! overflow bits). Each `TileDrain::drain`:
//!
//! 1. reads `TIMESTAMP_STATUS`: buffer 0's position, its full bit, the overflow bits;
//! 2. reads buffer 0's units from where the last drain stopped up to its position;
//! 3. if buffer 0 is full: rewinds it (writes its full bit back), so new units go to buffer 0
//!    again and buffer 1 stops growing; then reads buffer 1 from its start up to the first
//!    two all-zero units (a unit holds at least one token, which is never 0: only a flush of
//!    an empty unit, which the runtime avoids, writes a zero unit), zeroes what it read and
//!    rewinds buffer 1. Buffer 1's units all precede buffer 0's new ones, so order is kept;
//! 4. if an overflow bit is set: at least one unit was dropped after buffer 1's last one;
//!    the bits are cleared, the drain is counted and the parser resynchronises.
//!
//! In the emulator the tiles are paused during a drain. On a card the device keeps writing:
//! steps 2 and 3 read only units the position (or a full buffer) says are written, but a
//! buffer 0 that fills again between step 3's rewind of buffer 0 and its rewind of buffer 1
//! would send units into buffer 1 that the rewind then discards; drains must come often
//! enough that buffer 0 (32 KiB, 2730 events) cannot fill in one drain's time.

use super::rebuild::{Event, Parser};
use crate::devmem::DeviceMemory;
use crate::error::Result;
use riscv_linker::mmio::{self, timestamp as ts};
use riscv_linker::{profiler, Arch, NocCoord, Region};

/// Bytes of a unit.
const UNIT: u32 = ts::UNIT_BYTES;
/// Units read at a time from buffer 1.
const CHUNK: u32 = 64;

/// A region's bounds as the registers take them: first and last unit.
fn bounds(r: Region) -> (u32, u32) {
    (r.start / UNIT, (r.start + r.size) / UNIT - 1)
}

/// Takes a tile's timestamper for the profiler (see the module docs); `enable` false leaves
/// recording off (both buffers disabled: events go nowhere).
pub fn init_tile(
    mem: &dyn DeviceMemory,
    chip: u32,
    tile: NocCoord,
    arch: Arch,
    enable: bool,
) -> Result<()> {
    mem.write_u32(chip, tile, mmio::TIMESTAMP_CNTL, 0)?;
    let [b0, b1] = profiler::stamp_buffers(arch);
    for b in [b0, b1] {
        for a in (b.start..b.start + b.size).step_by(4) {
            mem.write_u32(chip, tile, a, 0)?;
        }
    }
    let ((s0, e0), (s1, e1)) = (bounds(b0), bounds(b1));
    mem.write_u32(chip, tile, mmio::TIMESTAMP_BUF0_START, s0)?;
    mem.write_u32(chip, tile, mmio::TIMESTAMP_BUF0_END, e0)?;
    mem.write_u32(chip, tile, mmio::TIMESTAMP_BUF1_START, s1)?;
    mem.write_u32(chip, tile, mmio::TIMESTAMP_BUF1_END, e1)?;
    mem.write_u32(
        chip,
        tile,
        mmio::TIMESTAMP_STATUS,
        ts::STATUS_BUF0_FULL
            | ts::STATUS_BUF1_FULL
            | ts::STATUS_BUF0_OVERFLOW
            | ts::STATUS_BUF1_OVERFLOW,
    )?;
    let on = if enable {
        ts::CNTL_BUF0_VALID | ts::CNTL_BUF1_VALID
    } else {
        0
    };
    mem.write_u32(chip, tile, mmio::TIMESTAMP_CNTL, on)
}

/// One tile's drain state.
#[derive(Clone, Debug)]
pub(crate) struct TileDrain {
    /// The tile's chip.
    pub chip: u32,
    /// The tile (NoC0).
    pub tile: NocCoord,
    bufs: [Region; 2],
    /// Units of buffer 0 taken since its last rewind.
    taken0: u32,
    /// The tile's stream, parsed so far.
    pub parser: Parser,
    /// Drains that found an overflow bit set.
    pub(crate) overflows: u32,
    /// Units read (for the bus cost).
    pub units: u64,
    /// Status register reads.
    pub(crate) status_reads: u64,
}

impl TileDrain {
    /// Nothing taken yet (the buffers as [`init_tile`] left them).
    pub(crate) fn new(chip: u32, tile: NocCoord, arch: Arch) -> TileDrain {
        TileDrain {
            chip,
            tile,
            bufs: profiler::stamp_buffers(arch),
            taken0: 0,
            parser: Parser::default(),
            overflows: 0,
            units: 0,
            status_reads: 0,
        }
    }

    fn read_units(
        &mut self,
        mem: &dyn DeviceMemory,
        buf: usize,
        from: u32,
        to: u32,
        out: &mut Vec<Event>,
    ) -> Result<()> {
        if to <= from {
            return Ok(());
        }
        let mut words = vec![0u32; 4 * (to - from) as usize];
        let at = self.bufs[buf].start + from * UNIT;
        mem.read_words(self.chip, self.tile, at, &mut words)?;
        for u in words.chunks_exact(4) {
            self.parser.unit([u[0], u[1], u[2], u[3]], out);
        }
        self.units += (to - from) as u64;
        Ok(())
    }

    /// One drain (see the module docs); the events found go to `out`, in stream order.
    pub(crate) fn drain(&mut self, mem: &dyn DeviceMemory, out: &mut Vec<Event>) -> Result<()> {
        let (chip, tile) = (self.chip, self.tile);
        let s = mem.read_u32(chip, tile, mmio::TIMESTAMP_STATUS)?;
        self.status_reads += 1;
        let cap0 = self.bufs[0].size / UNIT;
        let pos0 = ts::buf0_position(s).min(cap0);
        if s & ts::STATUS_BUF0_FULL == 0 {
            self.read_units(mem, 0, self.taken0, pos0, out)?;
            self.taken0 = pos0.max(self.taken0);
        } else {
            self.read_units(mem, 0, self.taken0, cap0, out)?;
            mem.write_u32(chip, tile, mmio::TIMESTAMP_STATUS, ts::STATUS_BUF0_FULL)?;
            self.taken0 = 0;
            self.drain_buffer1(mem, out)?;
        }
        let over = s & (ts::STATUS_BUF0_OVERFLOW | ts::STATUS_BUF1_OVERFLOW);
        if over != 0 {
            mem.write_u32(chip, tile, mmio::TIMESTAMP_STATUS, over)?;
            self.overflows += 1;
            self.parser.lost_units();
        }
        Ok(())
    }

    fn drain_buffer1(&mut self, mem: &dyn DeviceMemory, out: &mut Vec<Event>) -> Result<()> {
        let (chip, tile, b1) = (self.chip, self.tile, self.bufs[1]);
        let cap = b1.size / UNIT;
        let mut units = Vec::new();
        // All-zero units seen since the last unit with data: the end of what was written
        // once there are two; taken only when data follows.
        let mut zeros = Vec::new();
        let mut at = 0;
        'read: while at < cap {
            let n = CHUNK.min(cap - at);
            let mut words = vec![0u32; 4 * n as usize];
            mem.read_words(chip, tile, b1.start + at * UNIT, &mut words)?;
            self.units += n as u64;
            for u in words.chunks_exact(4) {
                at += 1;
                let unit = [u[0], u[1], u[2], u[3]];
                if unit == [0; 4] {
                    zeros.push(unit);
                    if zeros.len() == 2 {
                        break 'read;
                    }
                } else {
                    units.append(&mut zeros);
                    units.push(unit);
                }
            }
        }
        for u in &units {
            self.parser.unit(*u, out);
        }
        for a in (b1.start..b1.start + at * UNIT).step_by(4) {
            mem.write_u32(chip, tile, a, 0)?;
        }
        mem.write_u32(chip, tile, mmio::TIMESTAMP_STATUS, ts::STATUS_BUF1_FULL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use riscv_linker::devfile::Geometry;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use ttprof_rt::stamp::{token, Kind};

    /// L1 words and a status register the test sets; writes back to the status rewind.
    struct Fake {
        words: Mutex<HashMap<u32, u32>>,
    }

    impl DeviceMemory for Fake {
        fn geometry(&self) -> Geometry {
            Geometry {
                arch: Arch::WormholeB0,
                chips: 1,
                tiles_per_chip: 1,
                l1_size: Arch::WormholeB0.l1_size(),
            }
        }
        fn tiles(&self, _: u32) -> Vec<NocCoord> {
            vec![NocCoord::new(1, 1)]
        }
        fn read_u32(&self, _: u32, _: NocCoord, addr: u32) -> Result<u32> {
            Ok(*self.words.lock().unwrap().get(&addr).unwrap_or(&0))
        }
        fn write_u32(&self, _: u32, _: NocCoord, addr: u32, v: u32) -> Result<()> {
            let mut w = self.words.lock().unwrap();
            if addr == mmio::TIMESTAMP_STATUS {
                let s = w.entry(addr).or_insert(0);
                if v & ts::STATUS_BUF0_FULL != 0 {
                    *s &= !(ts::STATUS_BUF0_FULL
                        | ts::STATUS_BUF0_POSITION_MASK << ts::STATUS_BUF0_POSITION_SHIFT);
                }
                return Ok(());
            }
            if !(0..1 << 21).contains(&addr) {
                return Err(Error::Address {
                    what: format!("{addr:#x}"),
                });
            }
            w.insert(addr, v);
            Ok(())
        }
        fn bytes_read(&self) -> u64 {
            0
        }
        fn describe(&self) -> String {
            "fake".into()
        }
    }

    #[test]
    fn an_event_straddling_into_the_rewound_buffer_0_keeps_its_words_when_buffer_1_is_empty() {
        let arch = Arch::WormholeB0;
        let [b0, _] = profiler::stamp_buffers(arch);
        let cap = b0.size / UNIT;
        let mem = Fake {
            words: Mutex::new(HashMap::new()),
        };
        let put = |unit: u32, w: [u32; 4]| {
            for (k, v) in w.into_iter().enumerate() {
                mem.write_u32(
                    0,
                    NocCoord::new(1, 1),
                    b0.start + unit * UNIT + 4 * k as u32,
                    v,
                )
                .unwrap();
            }
        };
        let (t1, t2) = (token(0, Kind::Open, 0, 1), token(0, Kind::Close, 0, 1));
        let t0 = token(0, Kind::Point, 0, 2);
        // Buffer 0 full, its last unit ending with the first word of an event; buffer 1 empty.
        put(cap - 1, [t0, 100, 0, t1]);
        mem.words.lock().unwrap().insert(
            mmio::TIMESTAMP_STATUS,
            ts::STATUS_BUF0_FULL | cap << ts::STATUS_BUF0_POSITION_SHIFT,
        );
        let mut d = TileDrain::new(0, NocCoord::new(1, 1), arch);
        d.taken0 = cap - 1;
        let mut out = Vec::new();
        d.drain(&mem, &mut out).unwrap();
        // The rest of that event and the next in the rewound buffer 0.
        // Unit 1: the last event's high word (0), then a flush's padding.
        put(0, [200, 0, t2, 300]);
        put(1, [0; 4]);
        mem.words
            .lock()
            .unwrap()
            .insert(mmio::TIMESTAMP_STATUS, 2 << ts::STATUS_BUF0_POSITION_SHIFT);
        d.drain(&mem, &mut out).unwrap();
        let got: Vec<(u32, u64)> = out.iter().map(|e| (e.token.word(), e.time)).collect();
        assert_eq!(got, [(t0, 100), (t1, 200), (t2, 300)]);
        assert_eq!(d.parser.skipped_words, 0);
    }
}
