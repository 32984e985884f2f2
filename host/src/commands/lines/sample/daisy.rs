//! Programming a tile's debug daisychain and reading its samples, through
//! [`DeviceMemory`] only: the same code drives the emulator
//! ([`crate::devmem::EmuMemory`]) and a card through tt-kmd (whose backend lets these five
//! registers through). The register sequence is `DebugDaisychain.md`'s.

use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use riscv_linker::mmio::{self, daisychain as dc};
use riscv_linker::{NocCoord, Risc};

/// What an unwritten slot holds (written before arming).
pub(crate) const SENTINEL: u32 = 0xDEAD_BEEF;

/// Where the samples of one tile go and how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// L1 byte address of the first slot (16-byte aligned, low 1 MiB).
    pub addr: u32,
    /// Slots (samples per window).
    pub count: u32,
}

impl Buffer {
    /// Checks the buffer fits the daisychain: aligned, `1..=65535` slots, inside the low
    /// 1 MiB and at or above `floor` (where kernels' own data may start).
    pub fn check(&self, floor: u32) -> std::result::Result<(), String> {
        let end = self.addr as u64 + self.count as u64 * dc::SAMPLE_BYTES as u64;
        if !self.addr.is_multiple_of(dc::SAMPLE_BYTES)
            || self.count == 0
            || self.count > 0xFFFF
            || end > dc::L1_LIMIT as u64
            || self.addr < floor
        {
            return Err(format!(
                "a sample buffer of {} slot(s) at L1 {:#x} does not fit: it must be 16-byte aligned, hold 1..65535 \
                 16-byte slots and lie between {floor:#x} and the end of the low 1 MiB ({:#x})",
                self.count,
                self.addr,
                dc::L1_LIMIT
            ));
        }
        Ok(())
    }
}

/// Arms `tile`'s daisychain: fills the buffer with [`SENTINEL`], selects group A of
/// `risc` (group D with `group_d`, a TRISC's), then `DebugDaisychain.md`'s four writes for
/// "a series of regular samples": `count` samples every `interval` cycles.
pub(crate) fn arm(
    mem: &dyn DeviceMemory,
    chip: u32,
    tile: NocCoord,
    risc: Risc,
    buf: Buffer,
    interval: u32,
    group_d: bool,
) -> Result<()> {
    if !dc::INTERVALS.contains(&interval) {
        return Err(Error::Argument {
            what: format!(
                "sampling interval {interval}: the daisychain samples every 2..=256 cycles"
            ),
        });
    }
    for i in 0..buf.count * 4 {
        mem.write_u32(chip, tile, buf.addr + 4 * i, SENTINEL)?;
    }
    let first = buf.addr >> 4;
    let signal = match (group_d, dc::group_d(risc)) {
        (true, Some(d)) => d,
        (true, None) => {
            return Err(Error::Argument {
                what: format!("{risc} has no group D on the debug daisychain (TRISCs only)"),
            })
        }
        (false, _) => dc::group_a(risc),
    };
    let cntl = dc::ENABLED | dc::DAISY_RISCV << dc::DAISY_SEL_SHIFT | signal;
    mem.write_u32(chip, tile, mmio::DBG_BUS_CNTL, cntl)?;
    mem.write_u32(chip, tile, mmio::DBG_L1_MEM_REG2, dc::MODE_PREPARE)?;
    mem.write_u32(chip, tile, mmio::DBG_L1_MEM_REG0, first)?;
    mem.write_u32(chip, tile, mmio::DBG_L1_MEM_REG1, first + buf.count)?;
    mem.write_u32(
        chip,
        tile,
        mmio::DBG_L1_MEM_REG2,
        dc::MODE_SAMPLE | (interval - 1) << dc::INTERVAL_SHIFT | dc::TRIGGER,
    )
}

/// Stops sampling (back to "prepare") and turns the daisychain off to save power.
pub(crate) fn disarm(mem: &dyn DeviceMemory, chip: u32, tile: NocCoord) -> Result<()> {
    mem.write_u32(chip, tile, mmio::DBG_L1_MEM_REG2, dc::MODE_PREPARE)?;
    mem.write_u32(chip, tile, mmio::DBG_BUS_CNTL, 0)
}

/// One group A sample, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DaisySample {
    /// The pc of the instruction about to retire (low 31 bits).
    pub pc: u32,
    /// What the core was doing, as a sampled cause ([`super::SampledCause`]).
    pub cause: super::SampledCause,
}

/// Group A's address field: the low 30 bits.
const LOW30: u32 = 0x3FFF_FFFF;

/// Decodes group A's 128 bits (`None`: the slot still holds the sentinel).
pub(crate) fn decode(w: [u32; 4]) -> Option<DaisySample> {
    if w == [SENTINEL; 4] {
        return None;
    }
    let pc = w[0] & 0x7FFF_FFFF;
    let cause = if w[0] & dc::A_RETIRING != 0 {
        super::SampledCause::Retiring
    } else if w[1] & (dc::A_LSU_READ | dc::A_LSU_WRITE) != 0 {
        // The low 30 bits of the address: registers and FIFOs sit at 0xFFBx_xxxx and up.
        let addr = w[1] & LOW30;
        let within = |base: u32, size: u32| (base & LOW30..(base & LOW30) + size).contains(&addr);
        let write = w[1] & dc::A_LSU_WRITE != 0;
        let push = [
            mmio::INSTRN_BUF_BASE,
            mmio::INSTRN1_BUF_BASE,
            mmio::INSTRN2_BUF_BASE,
        ]
        .iter()
        .any(|&b| within(b, mmio::INSTRN_BUF_SIZE));
        if write && push {
            super::SampledCause::TensixFifo
        } else if !write && within(mmio::TTSYNC_COPROCESSOR_DONE, 8) {
            super::SampledCause::TtSync
        } else if addr >= mmio::LOCAL_RAM_BASE & LOW30 {
            super::SampledCause::FifoWait
        } else {
            super::SampledCause::LsuWait
        }
    } else {
        super::SampledCause::Stalled
    };
    Some(DaisySample { pc, cause })
}

/// Reads the buffer's slots as raw 128-bit samples (group D): those written, and how many
/// slots were not.
pub(crate) fn read_words(
    mem: &dyn DeviceMemory,
    chip: u32,
    tile: NocCoord,
    buf: Buffer,
) -> Result<(Vec<[u32; 4]>, u32)> {
    let mut words = vec![0u32; buf.count as usize * 4];
    mem.read_words(chip, tile, buf.addr, &mut words)?;
    let all: Vec<[u32; 4]> = words
        .chunks_exact(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .collect();
    let written: Vec<[u32; 4]> = all
        .iter()
        .copied()
        .filter(|w| *w != [SENTINEL; 4])
        .collect();
    let unwritten = (all.len() - written.len()) as u32;
    Ok((written, unwritten))
}

/// Reads the buffer's slots: the samples written, and how many slots were not.
pub(crate) fn read(
    mem: &dyn DeviceMemory,
    chip: u32,
    tile: NocCoord,
    buf: Buffer,
) -> Result<(Vec<DaisySample>, u32)> {
    let mut words = vec![0u32; buf.count as usize * 4];
    mem.read_words(chip, tile, buf.addr, &mut words)?;
    let mut out = Vec::with_capacity(buf.count as usize);
    let mut unwritten = 0;
    for w in words.chunks_exact(4) {
        match decode([w[0], w[1], w[2], w[3]]) {
            Some(s) => out.push(s),
            None => unwritten += 1,
        }
    }
    Ok((out, unwritten))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::sample::SampledCause;

    #[test]
    fn decodes_the_four_classes_and_the_sentinel() {
        let d = |w| decode(w).unwrap();
        assert_eq!(
            d([0x8000_6004, 0, 0x6004, 0]),
            DaisySample {
                pc: 0x6004,
                cause: SampledCause::Retiring
            }
        );
        assert_eq!(
            d([0x6004, 0x4003_1000, 0, 0]).cause,
            SampledCause::LsuWait,
            "a read of L1"
        );
        assert_eq!(
            d([0x6004, 0xBFEC_0000 | dc::A_LSU_READ, 0, 0]).cause,
            SampledCause::FifoWait,
            "a mailbox read (0xFFEC0000's low 30 bits)"
        );
        assert_eq!(d([0x6004, 0, 0, 0]).cause, SampledCause::Stalled);
        let push = mmio::INSTRN_BUF_BASE & LOW30 | dc::A_LSU_WRITE;
        assert_eq!(d([0x6004, push, 0, 0]).cause, SampledCause::TensixFifo);
        let ttsync = mmio::TTSYNC_COPROCESSOR_DONE & LOW30 | dc::A_LSU_READ;
        assert_eq!(d([0x6004, ttsync, 0, 0]).cause, SampledCause::TtSync);
        let pcbuf = mmio::PC_BUF_BASE & LOW30 | dc::A_LSU_READ;
        assert_eq!(d([0x6004, pcbuf, 0, 0]).cause, SampledCause::FifoWait);
        assert_eq!(decode([SENTINEL; 4]), None);
    }

    #[test]
    fn buffers_must_fit_the_low_mib() {
        let b = |addr, count| Buffer { addr, count }.check(0x30000);
        assert!(b(0xF0000, 4096).is_ok());
        assert!(b(0xF0000, 4097).unwrap_err().contains("low 1 MiB"));
        assert!(b(0xF0008, 1).is_err());
        assert!(b(0x20000, 1).is_err());
        assert!(b(0xF0000, 0).is_err());
    }
}
