//! Zicsr: the control and status registers a core can read and write.
//!
//! | CSR | access | value |
//! |---|---|---|
//! | `cycle`/`mcycle` (+`h`) | read; `mcycle*` also write | cycles since the core left reset |
//! | `instret`/`minstret` (+`h`) | read; `minstret*` also write | instructions retired since reset |
//! | `time` (+`h`) | read | the tile's wall clock |
//! | `mscratch`, `mepc`, `mcause`, `mtval`, `mtvec`, `mstatus`, `mie`, `mip` | read/write | storage (no traps are taken) |
//! | `misa` | read (writes ignored) | RV32IM (`MXL=1`, `I`, `M`) |
//! | `mvendorid`, `marchid`, `mimpid`, `mhartid` | read | 0 (every Tensix core reads `mhartid` 0) |
//! | `0x7C0` | read/write | storage: Blackhole's custom configuration CSR (below) |
//!
//! `0x7C0` is not in the RISC-V specification nor in Tenstorrent's ISA documentation;
//! tt-metal's `risc_common.h` (`set_l1_data_cache`) sets its bit 3 to turn Blackhole's L1
//! data cache off and bit 24 (with bit 18 around it in the firmware's `configure_gathering`)
//! to stop the hardware's store gathering invalidating that cache. The emulator has no data
//! cache (every load sees L1), which is the behaviour with bit 3 set, as tt-metal's firmware
//! sets it; a kernel that turns the cache on is not modelled (its stale reads would be).
//!
//! Any other CSR, a write to a read-only one, or any CSR instruction on an arch without
//! Zicsr (Wormhole B0) is a fault. Counters written by software keep counting from the
//! written value.

use crate::error::FaultKind;

/// `misa` for RV32IM: MXL = 1 (32-bit), extensions I and M.
pub const MISA_RV32IM: u32 = (1 << 30) | (1 << 8) | (1 << 12);

/// The CSR state of one core.
#[derive(Clone, Debug, Default)]
pub(crate) struct Csrs {
    /// Added to the cycles since reset to give `mcycle` (changed by writes).
    pub cycle_adjust: u64,
    /// Added to the instructions retired since reset to give `minstret`.
    pub instret_adjust: u64,
    scratch: [u32; 9],
}

/// The counters a CSR read needs, sampled when the instruction issues.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counters {
    /// Cycles since the core left reset.
    pub cycles: u64,
    /// Instructions retired since the core left reset (not counting this one).
    pub instret: u64,
    /// The tile's wall clock.
    pub wall: u64,
}

/// How a CSR instruction combines the old value with its operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CsrOp {
    Write,
    Set,
    Clear,
}

fn scratch_index(csr: u32) -> Option<usize> {
    Some(match csr {
        0x300 => 0, // mstatus
        0x304 => 1, // mie
        0x305 => 2, // mtvec
        0x340 => 3, // mscratch
        0x341 => 4, // mepc
        0x342 => 5, // mcause
        0x343 => 6, // mtval
        0x344 => 7, // mip
        0x7C0 => 8, // Blackhole's custom configuration (module documentation)
        _ => return None,
    })
}

impl Csrs {
    fn read(&self, csr: u32, c: Counters) -> Option<u32> {
        let cycle = c.cycles.wrapping_add(self.cycle_adjust);
        let instret = c.instret.wrapping_add(self.instret_adjust);
        Some(match csr {
            0xC00 | 0xB00 => cycle as u32,
            0xC80 | 0xB80 => (cycle >> 32) as u32,
            0xC02 | 0xB02 => instret as u32,
            0xC82 | 0xB82 => (instret >> 32) as u32,
            0xC01 => c.wall as u32,
            0xC81 => (c.wall >> 32) as u32,
            0x301 => MISA_RV32IM,
            0xF11..=0xF14 => 0,
            _ => self.scratch[scratch_index(csr)?],
        })
    }

    /// Executes one CSR instruction. `write` is false for the forms that must not write
    /// (`csrrs`/`csrrc` with `rs1 = x0` or `uimm = 0`). Returns the old value for `rd`.
    pub fn access(
        &mut self,
        csr: u32,
        op: CsrOp,
        operand: u32,
        write: bool,
        c: Counters,
    ) -> Result<u32, FaultKind> {
        let unknown = FaultKind::Csr {
            csr,
            reason: "not implemented by this core",
        };
        let old = self.read(csr, c).ok_or(unknown)?;
        if !write {
            return Ok(old);
        }
        let new = match op {
            CsrOp::Write => operand,
            CsrOp::Set => old | operand,
            CsrOp::Clear => old & !operand,
        };
        let set_lo = |v: u64| (v & !0xFFFF_FFFF) | new as u64;
        let set_hi = |v: u64| (v & 0xFFFF_FFFF) | (new as u64) << 32;
        match csr {
            0xB00 | 0xB80 | 0xB02 | 0xB82 => {
                let (now, adjust) = if csr & 0xF == 0 {
                    (c.cycles, &mut self.cycle_adjust)
                } else {
                    (c.instret, &mut self.instret_adjust)
                };
                let current = now.wrapping_add(*adjust);
                let target = if csr & 0x80 == 0 {
                    set_lo(current)
                } else {
                    set_hi(current)
                };
                // The write takes effect after this instruction; minstret then counts it.
                let retire_fix = u64::from(csr & 0xF == 2);
                *adjust = target.wrapping_sub(now).wrapping_sub(retire_fix);
            }
            0x301 => {} // misa: WARL, writes ignored
            0xC00..=0xC1F | 0xC80..=0xC9F | 0xF11..=0xF14 => {
                return Err(FaultKind::Csr {
                    csr,
                    reason: "read-only CSR written",
                })
            }
            _ => {
                if let Some(i) = scratch_index(csr) {
                    self.scratch[i] = new;
                }
            }
        }
        Ok(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Counters = Counters {
        cycles: 100,
        instret: 40,
        wall: (3 << 32) | 9,
    };

    #[test]
    fn counters_read_their_sources() {
        let mut s = Csrs::default();
        assert_eq!(s.access(0xC00, CsrOp::Set, 0, false, C), Ok(100));
        assert_eq!(s.access(0xC02, CsrOp::Set, 0, false, C), Ok(40));
        assert_eq!(s.access(0xC01, CsrOp::Set, 0, false, C), Ok(9));
        assert_eq!(s.access(0xC81, CsrOp::Set, 0, false, C), Ok(3));
        assert_eq!(
            s.access(0xF14, CsrOp::Set, 0, false, C),
            Ok(0),
            "mhartid is 0 on every core"
        );
        assert_eq!(s.access(0x301, CsrOp::Set, 0, false, C), Ok(MISA_RV32IM));
    }

    #[test]
    fn scratch_csrs_store_and_counters_keep_counting_from_a_write() {
        let mut s = Csrs::default();
        assert_eq!(s.access(0x340, CsrOp::Write, 0xAB, true, C), Ok(0));
        assert_eq!(s.access(0x340, CsrOp::Set, 0x100, true, C), Ok(0xAB));
        assert_eq!(s.access(0x340, CsrOp::Clear, 0x1, true, C), Ok(0x1AB));
        assert_eq!(s.access(0x340, CsrOp::Set, 0, false, C), Ok(0x1AA));
        s.access(0xB00, CsrOp::Write, 1000, true, C).unwrap();
        let later = Counters { cycles: 150, ..C };
        assert_eq!(s.access(0xC00, CsrOp::Set, 0, false, later), Ok(1050));
    }

    #[test]
    fn read_only_and_unknown_csrs_fault() {
        let mut s = Csrs::default();
        assert!(matches!(
            s.access(0xC00, CsrOp::Write, 1, true, C),
            Err(FaultKind::Csr { csr: 0xC00, .. })
        ));
        assert!(matches!(
            s.access(0x7C1, CsrOp::Set, 0, false, C),
            Err(FaultKind::Csr { csr: 0x7C1, .. })
        ));
    }

    /// tt-metal's Blackhole firmware: `csrrs zero, 0x7c0, t1` with bit 3 (cache off), then
    /// bit 24 (gathering), read back.
    #[test]
    fn blackhole_configuration_csr_stores_its_bits() {
        let mut s = Csrs::default();
        assert_eq!(s.access(0x7C0, CsrOp::Set, 0x8, true, C), Ok(0));
        assert_eq!(s.access(0x7C0, CsrOp::Set, 1 << 24, true, C), Ok(0x8));
        assert_eq!(s.access(0x7C0, CsrOp::Clear, 0x8, true, C), Ok(0x100_0008));
        assert_eq!(s.access(0x7C0, CsrOp::Set, 0, false, C), Ok(1 << 24));
    }
}
