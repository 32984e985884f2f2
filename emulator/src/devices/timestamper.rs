//! The tile's debug timestamper (`TIMESTAMP` .. `TIMESTAMP_BUF1_END`,
//! 0xFFB121FC..0xFFB12214): timestamp event streams written into L1, one per tile, its
//! counter the tile's wall clock at the access.
//!
//! Tenstorrent's ISA documentation gives the unit's complete functional model as
//! pseudo-code (tt-isa-documentation, `WormholeB0/TensixTile/DebugTimestamper.md`,
//! <https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/DebugTimestamper.md>).
//! This module is that model, with the page's names: [`Buf`] is `bufs[i]`, [`Accum`] is
//! `accum`, and the methods are `CmdWrite`, `CntlWrite`, `StatusRead`, `StatusWrite`,
//! `SetEventSize`, `AppendU32` and `FlushAccum`.
//!
//! How the model meets the tile (stores, units in L1, `EveryCycle`), the one reading of the
//! page that is ours, and what faults: [`Timestamper`]. A host reaches the registers too
//! ([`Timestamper::host_read`]).

use super::{Access, Ctx, TileDevice};
use crate::bus::L1;
use crate::error::FaultKind;
use riscv_linker::mmio::{self, timestamp as ts};
use riscv_linker::{Region, Risc};

/// One of the two buffers in L1 (`bufs[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Buf {
    pub valid: bool,
    /// Sticky: the last unit written filled the buffer.
    pub full: bool,
    /// Sticky: a unit found no valid buffer with space.
    pub overflow: bool,
    /// First unit (L1 address / 16). The page gives no reset value; 0 here.
    pub start: u32,
    /// Last unit, inclusive (L1 address / 16). The page gives no reset value; 0 here.
    pub end: u32,
    /// Units written since the buffer was last rewound.
    pub position: u32,
}

impl Default for Buf {
    fn default() -> Buf {
        Buf {
            valid: true,
            full: false,
            overflow: false,
            start: 0,
            end: 0,
            position: 0,
        }
    }
}

/// The write-accumulation unit (`accum`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Accum {
    pub data: [u32; 4],
    /// Words gathered (0..=3 between commands).
    pub position: u32,
    /// Size in bits of the events gathered, 0 when any size may come next.
    pub event_size: u32,
}

/// The debug timestamper of one tile.
///
/// * A 32-bit store to [`mmio::TIMESTAMP`] by any of the tile's five cores runs `CmdWrite`
///   with the tile's wall clock at the store's issue cycle as `counter` (one timestamper
///   per tile: the five cores share one stream, interleaved in cycle order, which the
///   tile's causal scheduling guarantees).
/// * Events gather in a 16-byte unit; a full or flushed unit goes to the first valid buffer
///   with space (`start + position <= end`, in 16-byte units) as one atomic 16-byte write
///   to L1 through the cores' own view of it ([`L1::store16`]), so a host mapping the image
///   sees it. With no such buffer the unit is dropped and every valid buffer marked
///   overflowed.
/// * `EveryCycle`'s counter is the wall clock itself ([`super::Devices::wall`]); its other half -
///   while `reset_streams` (bit 31 of the control register) is set, every cycle clears the
///   full and overflow bits and empties the unit being gathered - is applied lazily: before
///   any access at a later cycle than the last one seen, the reset is applied once (it is
///   idempotent) if the bit was set at the end of that last cycle. So a write that sets the
///   bit takes effect at the next cycle boundary, and a pulse (set, then clear at any later
///   cycle) resets the streams once.
///
/// One reading of the page is ours: its `FlushAccum` sets `event_size` to 0 even when the
/// flush happens part-way through a 96-bit event (the second and third of every four
/// straddle two units), which would make `StatusRead`'s `accum_pos_96b` read only 0 or 1
/// and let another size follow into the unit; the text says neither happens, so the size
/// is kept while words of a straddling event remain gathered (`cmd_write`).
///
/// Undefined behaviour in the page's model (`UndefinedBehaviour()`: a command whose low
/// three bits are 5 or 6; an event or flush of another size than the events already in the
/// unit) faults the storing core ([`FaultKind::Timestamper`]). So do things the page leaves
/// open and the emulator cannot carry out: a unit that would land outside L1 or inside a
/// code region, and a 1- or 2-byte store to a timestamper register (the page defines 32-bit
/// writes).
///
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Timestamper {
    pub bufs: [Buf; 2],
    pub accum: Accum,
    pub reset_streams: bool,
    pub cntl_raw: u32,
    /// The latest wall-clock cycle at which the timestamper was accessed (see the module
    /// docs on `reset_streams`).
    pub seen: u64,
}

impl Default for Timestamper {
    fn default() -> Timestamper {
        Timestamper {
            bufs: [Buf::default(); 2],
            accum: Accum::default(),
            reset_streams: false,
            cntl_raw: 3,
            seen: 0,
        }
    }
}

/// Where a 16-byte unit goes; the sink says why it cannot be written, if it cannot.
pub(crate) type UnitSink<'a> = dyn FnMut(u32, [u32; 4]) -> Result<(), String> + 'a;

/// Writes a unit into `l1` for a tile whose code regions are `code`: the emulator's sink.
pub(crate) fn write_unit(
    l1: &L1,
    code: &[(Region, Risc)],
    addr: u32,
    data: [u32; 4],
) -> Result<(), String> {
    let unit_end = addr as u64 + ts::UNIT_BYTES as u64;
    if unit_end > l1.size() as u64 {
        return Err(format!(
            "outside L1 ({:#x} bytes; the page does not say what the hardware does with such an address)",
            l1.size()
        ));
    }
    if let Some((_, owner)) = code
        .iter()
        .find(|(r, _)| (r.start as u64) < unit_end && (addr as u64) < r.end())
    {
        return Err(format!(
            "inside the code region of {owner} (code is read-only while kernels run)"
        ));
    }
    l1.store16(addr, data);
    Ok(())
}

fn reg_name(addr: u32) -> &'static str {
    match addr {
        mmio::TIMESTAMP => "RISCV_DEBUG_REG_TIMESTAMP",
        mmio::TIMESTAMP_CNTL => "RISCV_DEBUG_REG_TIMESTAMP+4 (control)",
        mmio::TIMESTAMP_STATUS => "RISCV_DEBUG_REG_TIMESTAMP_STATUS",
        mmio::TIMESTAMP_BUF0_START => "RISCV_DEBUG_REG_TIMESTAMP+12 (buffer 0 start)",
        mmio::TIMESTAMP_BUF0_END => "RISCV_DEBUG_REG_TIMESTAMP+16 (buffer 0 end)",
        mmio::TIMESTAMP_BUF1_START => "RISCV_DEBUG_REG_TIMESTAMP+20 (buffer 1 start)",
        _ => "RISCV_DEBUG_REG_TIMESTAMP+24 (buffer 1 end)",
    }
}

impl Timestamper {
    /// Whether word address `addr` is one of the timestamper's registers
    /// ([`mmio::TIMESTAMP`] ..= [`mmio::TIMESTAMP_BUF1_END`]; the wall clock is
    /// [`super::wall_clock`]'s).
    pub fn owns(addr: u32) -> bool {
        (mmio::TIMESTAMP..=mmio::TIMESTAMP_BUF1_END).contains(&addr)
    }

    /// The fault for a narrow (`size`-byte) store to register `addr`.
    pub fn narrow_store(addr: u32, size: u32) -> FaultKind {
        FaultKind::Timestamper(format!(
            "{size}-byte store to {} ({addr:#010x}): the page defines 32-bit writes only",
            reg_name(addr)
        ))
    }

    /// Brings the state to wall-clock cycle `counter` (`EveryCycle`'s stream reset).
    fn advance(&mut self, counter: u64) {
        if counter > self.seen {
            if self.reset_streams {
                for b in &mut self.bufs {
                    b.full = false;
                    b.overflow = false;
                }
                self.accum.position = 0;
                self.accum.event_size = 0;
            }
            self.seen = counter;
        }
    }

    /// A read of register `addr` at wall-clock cycle `counter`.
    pub fn read(&mut self, addr: u32, counter: u64) -> u32 {
        self.advance(counter);
        match addr {
            mmio::TIMESTAMP_CNTL => self.cntl_raw,
            mmio::TIMESTAMP_STATUS => self.status_read(),
            mmio::TIMESTAMP_BUF0_START => self.bufs[0].start,
            mmio::TIMESTAMP_BUF0_END => self.bufs[0].end,
            mmio::TIMESTAMP_BUF1_START => self.bufs[1].start,
            mmio::TIMESTAMP_BUF1_END => self.bufs[1].end,
            _ => 0, // RISCV_DEBUG_REG_TIMESTAMP
        }
    }

    /// A 32-bit write of `value` to register `addr` at wall-clock cycle `counter`; units go
    /// to `sink` (L1 byte address, four words).
    pub fn write(
        &mut self,
        addr: u32,
        value: u32,
        counter: u64,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), FaultKind> {
        self.advance(counter);
        match addr {
            mmio::TIMESTAMP => self.cmd_write(value, counter, sink)?,
            mmio::TIMESTAMP_CNTL => {
                self.cntl_raw = value;
                self.cntl_write(value);
            }
            mmio::TIMESTAMP_STATUS => self.status_write(value),
            mmio::TIMESTAMP_BUF0_START => self.bufs[0].start = value,
            mmio::TIMESTAMP_BUF0_END => self.bufs[0].end = value,
            mmio::TIMESTAMP_BUF1_START => self.bufs[1].start = value,
            mmio::TIMESTAMP_BUF1_END => self.bufs[1].end = value,
            _ => unreachable!("not a timestamper register: {addr:#x}"),
        }
        Ok(())
    }

    fn cmd_write(
        &mut self,
        new_val: u32,
        counter: u64,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), FaultKind> {
        self.cmd(new_val, counter, sink)?;
        // A 96-bit event that filled a unit part-way through (the 2nd and 3rd of every 4)
        // leaves words of itself in the next one, but the page's FlushAccum has set
        // event_size to 0 ("next event can be any size"). Taken literally, StatusRead's
        // accum_pos_96b, (4 - position) & 3, could then only ever read 0 or 1, and another
        // size could follow into the same unit without undefined behaviour, which the
        // page's text rules out ("it is possible to infer how many more events need to be
        // appended to trigger an automatic flush"; "different event sizes cannot be
        // mixed"). So the event's size is kept while words of it remain gathered.
        if self.accum.position != 0 && self.accum.event_size == 0 {
            self.accum.event_size = 96;
        }
        Ok(())
    }

    fn cmd(
        &mut self,
        new_val: u32,
        counter: u64,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), FaultKind> {
        let lo = counter as u32;
        let hi = (counter >> 32) as u32;
        match new_val & ts::CMD_MASK {
            ts::APPEND_32B => {
                self.set_event_size(32, new_val)?;
                self.append_u32((new_val & 0xffff) | (((counter & 0x001f_ffe0) << 11) as u32), sink)
            }
            ts::APPEND_64B => {
                self.set_event_size(64, new_val)?;
                self.append_u32(new_val, sink)?;
                self.append_u32(lo, sink)
            }
            ts::APPEND_96B => {
                self.set_event_size(96, new_val)?;
                self.append_u32(new_val, sink)?;
                self.append_u32(lo, sink)?;
                self.append_u32(hi, sink)
            }
            ts::APPEND_128B => {
                self.set_event_size(128, new_val)?;
                self.append_u32(new_val, sink)?;
                self.append_u32(lo, sink)?;
                self.append_u32(hi, sink)?;
                self.append_u32(0, sink)
            }
            ts::FLUSH_64B => {
                self.set_event_size(64, new_val)?;
                self.flush_accum(sink)
            }
            ts::FLUSH_96B => {
                self.set_event_size(96, new_val)?;
                self.flush_accum(sink)
            }
            low => Err(FaultKind::Timestamper(format!(
                "undefined behaviour (DebugTimestamper.md): {new_val:#010x} stored to RISCV_DEBUG_REG_TIMESTAMP \
                 has low three bits {low}, which name no event size or flush (0: 128-bit, 1: 64-bit, 2: 32-bit, \
                 4: 96-bit, 3: flush 64-bit, 7: flush 96-bit)"
            ))),
        }
    }

    fn cntl_write(&mut self, new_val: u32) {
        self.bufs[0].valid = new_val & ts::CNTL_BUF0_VALID != 0;
        self.bufs[1].valid = new_val & ts::CNTL_BUF1_VALID != 0;
        self.reset_streams = new_val >> 31 != 0;
    }

    fn status_read(&self) -> u32 {
        let a = &self.accum;
        let pos64 = if a.event_size == 64 {
            a.position / 2
        } else {
            0
        };
        let pos32 = if a.event_size == 32 { a.position } else { 0 };
        let pos96 = if a.event_size == 96 {
            4u32.wrapping_sub(a.position) & 3
        } else {
            0
        };
        let mut s = 0;
        s |= if self.bufs[0].full {
            ts::STATUS_BUF0_FULL
        } else {
            0
        };
        s |= if self.bufs[1].full {
            ts::STATUS_BUF1_FULL
        } else {
            0
        };
        s |= if self.bufs[0].overflow {
            ts::STATUS_BUF0_OVERFLOW
        } else {
            0
        };
        s |= if self.bufs[1].overflow {
            ts::STATUS_BUF1_OVERFLOW
        } else {
            0
        };
        s |= (pos64 & 1) << ts::STATUS_ACCUM_POS_64B_SHIFT;
        s |= (pos32 & 3) << ts::STATUS_ACCUM_POS_32B_SHIFT;
        s |= (pos96 & 3) << ts::STATUS_ACCUM_POS_96B_SHIFT;
        // NB: no way to query bufs[1].position.
        s | (self.bufs[0].position & ts::STATUS_BUF0_POSITION_MASK)
            << ts::STATUS_BUF0_POSITION_SHIFT
    }

    fn status_write(&mut self, new_val: u32) {
        if new_val & ts::STATUS_BUF0_FULL != 0 {
            self.bufs[0].full = false;
            self.bufs[0].position = 0;
        }
        if new_val & ts::STATUS_BUF1_FULL != 0 {
            self.bufs[1].full = false;
            self.bufs[1].position = 0;
        }
        if new_val & ts::STATUS_BUF0_OVERFLOW != 0 {
            self.bufs[0].overflow = false;
        }
        if new_val & ts::STATUS_BUF1_OVERFLOW != 0 {
            self.bufs[1].overflow = false;
        }
    }

    fn set_event_size(&mut self, new_event_size: u32, new_val: u32) -> Result<(), FaultKind> {
        if self.accum.event_size == 0 {
            self.accum.event_size = new_event_size;
        } else if self.accum.event_size != new_event_size {
            let what = match new_val & ts::CMD_MASK {
                ts::FLUSH_64B | ts::FLUSH_96B => {
                    format!("a {new_event_size}-bit flush ({new_val:#010x})")
                }
                _ => format!("a {new_event_size}-bit event ({new_val:#010x})"),
            };
            return Err(FaultKind::Timestamper(format!(
                "undefined behaviour (DebugTimestamper.md): {what} stored to RISCV_DEBUG_REG_TIMESTAMP while the \
                 write-accumulation buffer holds {} word(s) of {}-bit events; event sizes cannot be mixed: fill the \
                 16-byte unit or flush it first",
                self.accum.position, self.accum.event_size
            )));
        }
        Ok(())
    }

    fn append_u32(&mut self, value: u32, sink: &mut UnitSink<'_>) -> Result<(), FaultKind> {
        self.accum.data[self.accum.position as usize] = value;
        self.accum.position += 1;
        if self.accum.position >= 4 {
            self.flush_accum(sink)?;
        }
        Ok(())
    }

    fn flush_accum(&mut self, sink: &mut UnitSink<'_>) -> Result<(), FaultKind> {
        while self.accum.position < 4 {
            self.accum.data[self.accum.position as usize] = 0;
            self.accum.position += 1;
        }
        self.accum.position = 0;
        self.accum.event_size = 0; // Next event can be any size.
                                   // Find the first buffer with space, append 16 bytes to it (start, position and end
                                   // are in units of 16 bytes; the arithmetic is the page's 32-bit arithmetic).
        for (i, buf) in self.bufs.iter_mut().enumerate() {
            if buf.valid && buf.start.wrapping_add(buf.position) <= buf.end {
                let unit = buf.start.wrapping_add(buf.position);
                let addr = unit.wrapping_mul(ts::UNIT_BYTES);
                sink(addr, self.accum.data).map_err(|why| {
                    FaultKind::Timestamper(format!(
                        "buffer {i}'s next 16-byte unit ({:#x} + position {}) is at L1 address {addr:#010x}, {why}",
                        buf.start, buf.position
                    ))
                })?;
                buf.position = buf.position.wrapping_add(1);
                if buf.start.wrapping_add(buf.position) > buf.end {
                    buf.full = true;
                }
                return Ok(());
            }
        }
        // No buffer with space: mark every valid buffer as overflowed.
        for buf in &mut self.bufs {
            if buf.valid {
                buf.overflow = true;
            }
        }
        Ok(())
    }
}

/// The host's side of the timestamper registers, as a card exposes them over the NoC at the
/// same addresses the cores use (`0xFFB121FC..=0xFFB12214` of the tile): what a profiler
/// draining the buffers while kernels run needs. The emulator's host accesses come while
/// the tiles are paused ([`crate::Device::run_with_hook`]), so they see a consistent state;
/// they happen at the latest cycle a core touched the timestamper (`seen`), so they never
/// apply a pending `reset_streams` themselves.
///
/// * Reads: every register, as a core reads it (status with buffer 0's position, control,
///   the four buffer bounds; the command register reads 0).
/// * Writes: the control register, the status register (writing a full bit back rewinds
///   that buffer, an overflow bit back clears it) and the buffer bounds. A write to the
///   command register is refused: only the tile's cores append events (what a NoC write
///   there does on a card is not documented).
impl Timestamper {
    /// A host read of register `addr` (one of [`Timestamper::owns`]).
    pub fn host_read(&mut self, addr: u32) -> u32 {
        let at = self.seen;
        self.read(addr, at)
    }

    /// A host write of `value` to register `addr` (one of [`Timestamper::owns`]).
    pub fn host_write(&mut self, addr: u32, value: u32) -> Result<(), String> {
        if addr == mmio::TIMESTAMP {
            return Err(format!(
                "the host cannot append events: {value:#010x} written to RISCV_DEBUG_REG_TIMESTAMP ({addr:#010x}) from \
                 the host (only the tile's cores store commands there)"
            ));
        }
        let at = self.seen;
        self.write(addr, value, at, &mut |_, _| {
            Err("a host register write wrote a unit (internal)".into())
        })
        .map_err(|e| e.to_string())
    }
}

/// The registers as the tile's cores reach them: a 1- or 2-byte store faults.
impl TileDevice for Timestamper {
    fn name(&self) -> &'static str {
        "debug timestamper"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(Timestamper::read(self, a.word(), cx.wall))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        Timestamper::write(self, a.word(), word, cx.wall, cx.unit)
    }

    fn merges(&self, addr: u32, size: u32) -> Result<bool, FaultKind> {
        Err(Timestamper::narrow_store(addr & !3, size))
    }
}

#[cfg(test)]
mod tests {
    //! Expected values are worked out by hand from the page's pseudo-code.
    use super::*;

    use ts::*;
    const CMD: u32 = mmio::TIMESTAMP;
    const STATUS: u32 = mmio::TIMESTAMP_STATUS;
    const CNTL: u32 = mmio::TIMESTAMP_CNTL;

    /// A timestamper and the units it wrote, in order.
    #[derive(Default)]
    struct Rig {
        t: Timestamper,
        units: Vec<(u32, [u32; 4])>,
    }

    impl Rig {
        /// Buffer 0 = units `b0`, buffer 1 = units `b1` (inclusive ranges).
        fn new(b0: (u32, u32), b1: (u32, u32)) -> Rig {
            let mut r = Rig::default();
            r.w(mmio::TIMESTAMP_BUF0_START, b0.0, 1);
            r.w(mmio::TIMESTAMP_BUF0_END, b0.1, 1);
            r.w(mmio::TIMESTAMP_BUF1_START, b1.0, 1);
            r.w(mmio::TIMESTAMP_BUF1_END, b1.1, 1);
            r
        }
        fn try_w(&mut self, addr: u32, v: u32, counter: u64) -> Result<(), FaultKind> {
            let units = &mut self.units;
            self.t.write(addr, v, counter, &mut |a, d| {
                units.push((a, d));
                Ok(())
            })
        }
        fn w(&mut self, addr: u32, v: u32, counter: u64) {
            self.try_w(addr, v, counter).unwrap();
        }
        fn r(&mut self, addr: u32, counter: u64) -> u32 {
            self.t.read(addr, counter)
        }
        fn take(&mut self) -> Vec<(u32, [u32; 4])> {
            std::mem::take(&mut self.units)
        }
    }

    #[test]
    fn reset_values_and_plain_registers() {
        let mut r = Rig::default();
        assert_eq!(r.r(CNTL, 0), 3, "cntl_raw = 3: both buffers valid");
        assert_eq!(r.r(STATUS, 0), 0);
        assert_eq!(r.r(CMD, 0), 0);
        for (a, v) in [
            (mmio::TIMESTAMP_BUF0_START, 0x11),
            (mmio::TIMESTAMP_BUF0_END, 0x22),
            (mmio::TIMESTAMP_BUF1_START, 0x33),
            (mmio::TIMESTAMP_BUF1_END, 0xFFFF_FFFF),
        ] {
            r.w(a, v, 1);
            assert_eq!(r.r(a, 1), v);
        }
        r.w(CMD, 0x1234_5678 & !7, 2);
        assert_eq!(r.r(CMD, 2), 0, "the command register reads 0");
        r.w(CNTL, 0x7000_0001, 3);
        assert_eq!(r.r(CNTL, 3), 0x7000_0001, "reads back the raw value");
        assert!(r.t.bufs[0].valid && !r.t.bufs[1].valid && !r.t.reset_streams);
    }

    #[test]
    fn a_128_bit_event_is_one_unit() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        r.w(CMD, 0xABCD_EF08, 0x0000_0012_3456_789A);
        assert_eq!(
            r.take(),
            vec![(0x1000, [0xABCD_EF08, 0x3456_789A, 0x12, 0])]
        );
        r.w(CMD, 0xFFFF_FFF8, 0xFFFF_FFFF_0000_0001);
        assert_eq!(r.take(), vec![(0x1010, [0xFFFF_FFF8, 1, 0xFFFF_FFFF, 0])]);
        assert_eq!(
            r.r(STATUS, 0xFFFF_FFFF_0000_0001),
            2 << 14,
            "bufs0_position = 2, nothing else"
        );
    }

    #[test]
    fn two_64_bit_events_fill_a_unit() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        r.w(CMD, 0x0000_ABC1, 100);
        assert!(
            r.take().is_empty(),
            "half a unit stays in the accumulation buffer"
        );
        assert_eq!(r.r(STATUS, 101), 1 << 8, "accum_pos_64b = 2 / 2");
        r.w(CMD, 0xFFFF_DEF1, (7 << 32) | 105);
        assert_eq!(
            r.take(),
            vec![(0x1000, [0x0000_ABC1, 100, 0xFFFF_DEF1, 105])],
            "the high word is not recorded"
        );
        assert_eq!(r.r(STATUS, 106), 1 << 14);
    }

    #[test]
    fn four_96_bit_events_fill_three_units() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        let h = |i: u32| (i << 3) | 4;
        let c = |i: u64| ((i + 1) << 32) | (0x1000 + i);
        let mut status = Vec::new();
        for i in 0..4 {
            r.w(CMD, h(i), c(i as u64));
            status.push((r.r(STATUS, c(i as u64)) >> 11) & 3);
        }
        // accum.position after each event: 3, 2, 1, 0; accum_pos_96b = (4 - position) & 3.
        assert_eq!(status, [1, 2, 3, 0]);
        assert_eq!(
            r.take(),
            vec![
                (0x1000, [h(0), 0x1000, 1, h(1)]),
                (0x1010, [0x1001, 2, h(2), 0x1002]),
                (0x1020, [3, h(3), 0x1003, 4]),
            ]
        );
        // The words left over by a straddling event are still 96-bit events: another size
        // (or a 64-bit flush) must not join them; a 96-bit flush pads them.
        for next in [0x00, 0x01, 0x02, FLUSH_64B] {
            let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
            r.w(CMD, h(0), 1);
            r.w(CMD, h(1), 2);
            assert_eq!(r.take().len(), 1);
            let m = r.try_w(CMD, next, 3).unwrap_err().to_string();
            assert!(
                m.contains("undefined behaviour") && m.contains("holds 2 word(s) of 96-bit events"),
                "{m}"
            );
        }
        r.w(CMD, h(4), 5);
        r.w(CMD, h(5), 6);
        r.w(CMD, FLUSH_96B, 7);
        assert_eq!(
            r.take(),
            vec![(0x1030, [h(4), 5, 0, h(5)]), (0x1040, [6, 0, 0, 0])]
        );
        r.w(CMD, 0x01, 8);
        assert_eq!(
            r.r(STATUS, 8),
            1 << 8 | 5 << 14,
            "a new size after the flush"
        );
    }

    #[test]
    fn four_32_bit_events_fill_a_unit() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        // (header & 0xffff) | ((counter & 0x001fffe0) << 11): counter bits 5..21 in bits 16..32.
        let cases = [
            (0xFFFF_FFFAu32, 0x0000_0000_0000_001Fu64, 0x0000_FFFAu32),
            (0x1234_5672, 0x0000_0000_0000_0020, 0x0001_5672),
            (0x0000_0002, 0x0000_0001_0020_0000, 0x0000_0002),
            (0xABCD_000A, 0x0000_0000_0012_3456, 0x91A2_000A),
        ];
        let mut pos = Vec::new();
        for (h, c, _) in cases {
            r.w(CMD, h, c);
            pos.push((r.r(STATUS, c) >> 9) & 3);
        }
        assert_eq!(pos, [1, 2, 3, 0], "accum_pos_32b");
        assert_eq!(r.take(), vec![(0x1000, cases.map(|(_, _, w)| w))]);
    }

    #[test]
    fn the_flush_commands_pad_with_zeros() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        r.w(CMD, 0x51, 0x2_0000_0007);
        r.w(CMD, FLUSH_64B | 0xFFF0, 8);
        assert_eq!(
            r.take(),
            vec![(0x1000, [0x51, 7, 0, 0])],
            "the flush command's other bits go nowhere"
        );
        r.w(CMD, 0x54, 0x2_0000_0009);
        r.w(CMD, FLUSH_96B, 10);
        assert_eq!(r.take(), vec![(0x1010, [0x54, 9, 2, 0])]);
        r.w(CMD, 0x64, 0x3_0000_000B);
        r.w(CMD, 0x6C, 0x3_0000_000C);
        r.w(CMD, FLUSH_96B, 13);
        assert_eq!(
            r.take(),
            vec![(0x1020, [0x64, 0xB, 3, 0x6C]), (0x1030, [0xC, 3, 0, 0])]
        );
        assert_eq!(r.r(STATUS, 14), 4 << 14);
        // FlushAccum with nothing gathered still writes a unit: four zero words.
        r.w(CMD, FLUSH_64B, 15);
        assert_eq!(r.take(), vec![(0x1040, [0; 4])]);
        // A full unit needs no flush; a flush after it writes another zero unit.
        r.w(CMD, 0x71, 16);
        r.w(CMD, 0x79, 17);
        r.w(CMD, FLUSH_64B, 18);
        assert_eq!(
            r.take(),
            vec![(0x1050, [0x71, 16, 0x79, 17]), (0x1060, [0; 4])]
        );
    }

    #[test]
    fn sizes_may_change_at_unit_boundaries_only() {
        let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
        let pairs = [
            (0x01, 0x00),
            (0x02, 0x01),
            (0x04, 0x02),
            (0x01, FLUSH_96B),
            (0x02, FLUSH_64B),
            (0x04, FLUSH_64B),
        ];
        for (first, second) in pairs {
            let mut r = Rig::new((0x100, 0x1FF), (0x300, 0x3FF));
            r.w(CMD, first, 1);
            let e = r.try_w(CMD, second, 2).unwrap_err();
            let FaultKind::Timestamper(m) = &e else {
                panic!("{e:?}")
            };
            assert!(
                m.contains("undefined behaviour") && m.contains("cannot be mixed"),
                "{m}"
            );
            assert!(r.take().is_empty());
        }
        // After a full unit (or a flush) any size may follow.
        r.w(CMD, 0x01, 1);
        r.w(CMD, 0x01, 2);
        r.w(CMD, 0x02, 3);
        r.w(CMD, 0x02, 4);
        r.w(CMD, 0x02, 5);
        r.w(CMD, 0x02, 6);
        r.w(CMD, 0x04, 7);
        r.w(CMD, FLUSH_96B, 8);
        r.w(CMD, 0x00, 9);
        assert_eq!(r.take().len(), 4);
        let msg = |e: FaultKind| e.to_string();
        for bad in [5u32, 6, 0xFFFF_FFFD, 0x0000_00E6] {
            let m = msg(r.try_w(CMD, bad, 10).unwrap_err());
            assert!(
                m.contains("undefined behaviour")
                    && m.contains(&format!("low three bits {}", bad & 7)),
                "{m}"
            );
        }
        assert!(r.take().is_empty());
    }

    #[test]
    fn buffer_0_fills_then_buffer_1_then_both_overflow() {
        let mut r = Rig::new((0x10, 0x11), (0x20, 0x20));
        r.w(CMD, 0x08, 1);
        assert_eq!(r.r(STATUS, 1), 1 << 14);
        r.w(CMD, 0x10, 2);
        assert_eq!(
            r.r(STATUS, 2),
            STATUS_BUF0_FULL | 2 << 14,
            "start + position > end: full"
        );
        r.w(CMD, 0x18, 3);
        assert_eq!(
            r.r(STATUS, 3),
            STATUS_BUF0_FULL | STATUS_BUF1_FULL | 2 << 14
        );
        r.w(CMD, 0x20, 4);
        let all = STATUS_BUF0_FULL | STATUS_BUF1_FULL | STATUS_BUF0_OVERFLOW | STATUS_BUF1_OVERFLOW;
        assert_eq!(
            r.r(STATUS, 4),
            all | 2 << 14,
            "no buffer with space: both overflow, unit dropped"
        );
        let units: Vec<u32> = r.take().iter().map(|u| u.0).collect();
        assert_eq!(units, [0x100, 0x110, 0x200]);

        // Writing an overflow bit back clears it alone.
        r.w(STATUS, STATUS_BUF1_OVERFLOW, 5);
        assert_eq!(r.r(STATUS, 5), all & !STATUS_BUF1_OVERFLOW | 2 << 14);
        // Writing buffer 1's full bit back clears it and rewinds buffer 1 (whose position
        // cannot be read): the next unit goes to its start.
        r.w(STATUS, STATUS_BUF1_FULL, 6);
        r.w(CMD, 0x28, 7);
        assert_eq!(r.take(), vec![(0x200, [0x28, 7, 0, 0])]);
        assert_eq!(
            r.r(STATUS, 7),
            STATUS_BUF0_FULL | STATUS_BUF1_FULL | STATUS_BUF0_OVERFLOW | 2 << 14
        );
        // Buffer 0's full bit: cleared, position 0, and buffer 0 takes units again first.
        r.w(
            STATUS,
            STATUS_BUF0_FULL | STATUS_BUF0_OVERFLOW | 0xFFFF_FF00,
            8,
        );
        assert_eq!(
            r.r(STATUS, 8),
            STATUS_BUF1_FULL,
            "other bits written are ignored"
        );
        r.w(CMD, 0x30, 9);
        assert_eq!(r.take(), vec![(0x100, [0x30, 9, 0, 0])]);
        assert_eq!(r.r(STATUS, 9), STATUS_BUF1_FULL | 1 << 14);
    }

    #[test]
    fn invalid_buffers_are_skipped_and_never_overflow() {
        let mut r = Rig::new((0x10, 0x10), (0x20, 0x21));
        r.w(CNTL, CNTL_BUF1_VALID, 1);
        r.w(CMD, 0x08, 2);
        assert_eq!(
            r.take(),
            vec![(0x200, [0x08, 2, 0, 0])],
            "buffer 0 is not valid"
        );
        r.w(CNTL, 0, 3);
        r.w(CMD, 0x10, 4);
        assert!(r.take().is_empty());
        assert_eq!(r.r(STATUS, 4), 0, "no valid buffer: nothing marked");
        r.w(CNTL, CNTL_BUF0_VALID, 5);
        r.w(CMD, 0x18, 6);
        r.w(CMD, 0x20, 7);
        assert_eq!(r.take(), vec![(0x100, [0x18, 6, 0, 0])]);
        let want = STATUS_BUF0_FULL | STATUS_BUF0_OVERFLOW | 1 << 14;
        assert_eq!(r.r(STATUS, 7), want, "only the valid buffer overflows");
    }

    #[test]
    fn reset_streams_acts_every_cycle_while_set() {
        let mut r = Rig::new((0x10, 0x10), (0x20, 0x20));
        for c in 1..=3 {
            r.w(CMD, 0x08, c);
        }
        assert_eq!(r.take().len(), 2, "the third unit overflowed");
        r.w(CMD, 0x01, 4); // half a 64-bit unit gathered
        let all = STATUS_BUF0_FULL | STATUS_BUF1_FULL | STATUS_BUF0_OVERFLOW | STATUS_BUF1_OVERFLOW;
        assert_eq!(r.r(STATUS, 4), all | 1 << 8 | 1 << 14);
        r.w(CNTL, CNTL_RESET_STREAMS | 3, 10);
        assert_eq!(
            r.r(STATUS, 10),
            all | 1 << 8 | 1 << 14,
            "the reset happens at the end of the cycle"
        );
        assert_eq!(
            r.r(STATUS, 11),
            1 << 14,
            "sticky bits and the unit cleared; positions kept"
        );
        // While the bit is set, whatever is gathered is dropped at the next cycle.
        r.w(CMD, 0x02, 12);
        assert_eq!(r.r(STATUS, 12), 1 << 9 | 1 << 14);
        r.w(CMD, 0x01, 13); // a 64-bit event: the 32-bit word of cycle 12 is gone
        assert_eq!(r.r(STATUS, 13), 1 << 8 | 1 << 14);
        r.w(CNTL, 3, 14); // the bit was still set at the end of cycle 13: the event is gone too
        assert_eq!(r.r(STATUS, 14), 1 << 14);
        r.w(CMD, 0x08, 15);
        assert_eq!(
            r.take(),
            vec![],
            "positions were kept, so neither buffer has space"
        );
        let want = STATUS_BUF0_OVERFLOW | STATUS_BUF1_OVERFLOW | 1 << 14;
        assert_eq!(r.r(STATUS, 15), want, "full is set by a write only");
        // A pulse set and cleared within one cycle resets nothing.
        r.w(CNTL, CNTL_RESET_STREAMS | 3, 20);
        r.w(CNTL, 3, 20);
        assert_ne!(r.r(STATUS, 21) & all, 0);
    }

    #[test]
    fn a_unit_that_cannot_be_written_faults_with_the_reason() {
        let mut t = Timestamper::default();
        t.write(mmio::TIMESTAMP_BUF0_START, 0x10, 0, &mut |_, _| Ok(()))
            .unwrap();
        t.write(mmio::TIMESTAMP_BUF0_END, 0x10, 0, &mut |_, _| Ok(()))
            .unwrap();
        let e = t
            .write(CMD, 0x08, 1, &mut |_, _| Err("outside L1".into()))
            .unwrap_err();
        let want = "buffer 0's next 16-byte unit (0x10 + position 0) is at L1 address 0x00000100, outside L1";
        assert_eq!(e, FaultKind::Timestamper(want.into()));
    }

    #[test]
    fn the_l1_sink_refuses_code_and_addresses_past_l1() {
        let mut words = vec![0u32; 1024];
        // SAFETY: `words` outlives `l1` and is 4-byte aligned, 4096 bytes.
        let l1 = unsafe { L1::new(words.as_mut_ptr() as *mut u8, 4096) };
        let code = [(Region::new(0x800, 0x100), Risc::Brisc)];
        write_unit(&l1, &code, 0x900, [1, 2, 3, 4]).unwrap();
        assert_eq!(
            (0..4)
                .map(|k| l1.load::<4>(0x900 + 4 * k))
                .collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        assert!(write_unit(&l1, &code, 0x8F0, [0; 4])
            .unwrap_err()
            .contains("code region of BRISC"));
        assert!(
            write_unit(&l1, &code, 0x7F0, [0; 4]).is_ok(),
            "ends right where the code begins"
        );
        assert!(write_unit(&l1, &code, 0x1000, [0; 4])
            .unwrap_err()
            .contains("outside L1"));
        assert!(write_unit(&l1, &code, 0xFFFF_FFF0, [0; 4])
            .unwrap_err()
            .contains("outside L1"));
        drop(words);
    }
}
