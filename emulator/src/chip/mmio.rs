//! A tile's memory-mapped registers: the wall clock, soft reset, the debug timestamper,
//! register storage for the rest of the debug block and the NoC windows, and the dispatch of
//! every other window to the tile's devices ([`crate::chip::devices`]: mailboxes, PCBufs, TTSync,
//! Tensix semaphores and GPRs, instruction pushes, per-core unmapped windows, plain storage).
//!
//! * `WALL_CLOCK_L` returns the low word of the tile's wall clock *at the reading core's
//!   own time* and latches the high word into `WALL_CLOCK_H` (one latch per tile, shared by
//!   its five cores); so does a write to it (`DebugTimestamper.md`'s memory map: "counter_high_at
//!   = counter >> 32, no other effect"). `WALL_CLOCK_H_LIVE` returns the live high word.
//!   Writes to the other two clock registers are ignored.
//! * `SOFT_RESET_0`: a write is applied by the tile after the storing instruction retires
//!   (see [`crate::chip::tile`]): setting a core's bit holds it in reset, clearing it releases
//!   the core at its reset PC if a kernel is loaded.
//! * `RISCV_DEBUG_REG_INSTRN_BUF_STATUS` reads the state of the FIFOs before the Replay
//!   Expanders ([`crate::tensix`]) and ignores writes. A write to
//!   `RISCV_DEBUG_REG_INSTRN_BUF_CTRL0` that raises a "push" bit (4-6) of a thread whose
//!   debug-control bit (0-2) is set pushes `INSTRN_BUF_CTRL1` to that Tensix thread.
//!   `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE` is storage that the PCBufs read.
//! * `TIMESTAMP` .. `TIMESTAMP_BUF1_END` (0xFFB121FC..0xFFB12214): the debug timestamper
//!   ([`crate::debug::timestamper`]), one per tile, its counter the wall clock at the access.
//! * `DBG_BUS_CNTL`, `DBG_L1_MEM_REG0..2`, `DBG_RD_DATA`: the debug daisychain
//!   ([`crate::debug::daisychain`]), one per tile.
//! * Any other address of the debug block and the NoC windows (with the NoC model off)
//!   reads back what was last written (0 at first). No NoC transaction is modelled here.
//!
//! Every access says which core makes it: the mailboxes, the PCBufs and the GPR window map
//! differently per core, and some windows do not exist for some cores.

use crate::chip::devices::{target, Devices, Target};
use crate::debug::daisychain::Daisychain;
use crate::debug::timestamper::{Timestamper, UnitSink};
use crate::error::FaultKind;
use riscv_linker::{mmio, Risc};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Whether `addr` lies in one of the windows above local RAM (for some core).
pub(crate) fn is_mmio(addr: u32) -> bool {
    crate::map::in_map(addr)
}

/// The registers and devices of one tile.
#[derive(Debug, Default)]
pub(crate) struct TileRegs {
    /// Added to a core's time to give the wall clock (the tile's clock offset).
    pub wall_offset: u64,
    /// The high word latched by the last `WALL_CLOCK_L` read.
    pub latched_hi: u32,
    /// `RISCV_DEBUG_REG_SOFT_RESET_0`.
    pub soft_reset: u32,
    /// A value stored to `SOFT_RESET_0` that the tile has not applied yet.
    pub pending_reset: Option<u32>,
    /// The debug timestamper, shared by the tile's five cores. Behind a lock only for the
    /// host's accesses ([`crate::Device::read_u32`] while the tiles are paused); a core
    /// reaches it through `&mut self` ([`Mutex::get_mut`]), so the lock costs it nothing.
    pub timestamper: Mutex<Timestamper>,
    /// The debug daisychain. Behind a lock only for the host's accesses while the tiles
    /// are paused; a core reaches it through `&mut self` (`Mutex::get_mut`).
    pub daisychain: Mutex<Daisychain>,
    /// Plain register storage, by word address.
    pub(crate) other: BTreeMap<u32, u32>,
    pub(crate) dev: Devices,
}

impl TileRegs {
    /// The timestamper, from a core's side (no locking: `&mut self`).
    fn stamper(&mut self) -> &mut Timestamper {
        self.timestamper
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The wall clock at core time `time`.
    pub fn wall(&self, time: u64) -> u64 {
        time.wrapping_add(self.wall_offset)
    }

    fn stored(&self, addr: u32) -> u32 {
        self.other.get(&addr).copied().unwrap_or(0)
    }

    /// A load of `size` bytes at `addr` by `risc`, whose clock reads `time`: the 32-bit word
    /// holding `addr`.
    pub fn read(&mut self, addr: u32, size: u32, time: u64, risc: Risc) -> Result<u32, FaultKind> {
        let word = addr & !3;
        match target(addr, risc) {
            Target::Regs => Ok(match word {
                mmio::WALL_CLOCK_L => {
                    let w = self.wall(time);
                    self.latched_hi = (w >> 32) as u32;
                    w as u32
                }
                mmio::WALL_CLOCK_H_LIVE => (self.wall(time) >> 32) as u32,
                mmio::WALL_CLOCK_H => self.latched_hi,
                mmio::SOFT_RESET_0 => self.soft_reset,
                mmio::INSTRN_BUF_STATUS => self.dev.tensix.status(time)?,
                a if Daisychain::owns(a) => self
                    .daisychain
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .read(a),
                a if Timestamper::owns(a) => {
                    let counter = self.wall(time);
                    self.stamper().read(a, counter)
                }
                _ => self.stored(word),
            }),
            Target::Storage => Ok(self.stored(word)),
            Target::Device(d) => {
                let ov = self.stored(mmio::TRISC_PC_BUF_OVERRIDE);
                self.dev.read(d, addr, size, risc, ov, time)
            }
            Target::Unmapped(region) => Err(FaultKind::Unmapped {
                addr,
                size,
                write: false,
                risc,
                region,
            }),
            Target::Outside => Err(FaultKind::Access {
                addr,
                size,
                write: false,
            }),
        }
    }

    /// Whether a narrow store at `addr` by `risc` merges into the word's current contents
    /// (registers, storage, GPRs: a read of them has no effect beyond the clock latch) or
    /// delivers only its bytes, zeros elsewhere (devices: FIFOs, semaphores, pushes).
    pub fn merges(&self, addr: u32, risc: Risc) -> bool {
        target(addr, risc).merges()
    }

    /// A store of `word` (the whole 32-bit word holding `addr`, a narrow store already
    /// merged) by `risc`; `size` is the store's own size, for messages.
    /// A timestamper unit for L1 goes to `unit` (see [`crate::debug::timestamper`]); `time` is the
    /// storing core's clock.
    pub fn write(
        &mut self,
        addr: u32,
        size: u32,
        word: u32,
        risc: Risc,
        time: u64,
        unit: &mut UnitSink<'_>,
    ) -> Result<(), FaultKind> {
        let addr_w = addr & !3;
        match target(addr, risc) {
            Target::Regs => match addr_w {
                mmio::WALL_CLOCK_L => self.latched_hi = (self.wall(time) >> 32) as u32,
                mmio::WALL_CLOCK_H_LIVE | mmio::WALL_CLOCK_H | mmio::INSTRN_BUF_STATUS => {}
                a if Timestamper::owns(a) => {
                    let counter = self.wall(time);
                    self.stamper().write(a, word, counter, unit)?;
                }
                mmio::SOFT_RESET_0 => self.pending_reset = Some(word),
                a if Daisychain::owns(a) => self
                    .daisychain
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .write(a, word, Some(time), unit)
                    .map_err(FaultKind::Daisychain)?,
                mmio::INSTRN_BUF_CTRL0 => {
                    let raised = word & !self.stored(addr_w);
                    if let Some(thread) =
                        (0..3u8).find(|&t| word & (1 << t) != 0 && raised & (0x10 << t) != 0)
                    {
                        let push = self.stored(mmio::INSTRN_BUF_CTRL1);
                        self.dev.tensix.push(thread, push, risc, addr_w, time)?;
                    }
                    self.other.insert(addr_w, word);
                }
                _ => {
                    self.other.insert(addr_w, word);
                }
            },
            Target::Storage => {
                self.other.insert(addr_w, word);
            }
            Target::Device(d) => self.dev.write(d, addr, word, risc, time)?,
            Target::Unmapped(region) => {
                return Err(FaultKind::Unmapped {
                    addr,
                    size,
                    write: true,
                    risc,
                    region,
                })
            }
            Target::Outside => {
                return Err(FaultKind::Access {
                    addr,
                    size,
                    write: true,
                })
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Risc::*;

    fn rd(r: &mut TileRegs, addr: u32, time: u64) -> u32 {
        r.read(addr, 4, time, Brisc).unwrap()
    }

    fn wr(r: &mut TileRegs, addr: u32, v: u32) {
        r.write(addr, 4, v, Brisc, 0, &mut no_units).unwrap()
    }

    #[test]
    fn low_read_latches_high_word_and_live_high_moves() {
        let mut r = TileRegs {
            wall_offset: 5,
            ..TileRegs::default()
        };
        let t = (7u64 << 32) | 0xFFFF_FFF0;
        assert_eq!(rd(&mut r, mmio::WALL_CLOCK_L, t), 0xFFFF_FFF5);
        assert_eq!(
            rd(&mut r, mmio::WALL_CLOCK_H, t + 100),
            7,
            "latched, not live"
        );
        assert_eq!(
            rd(&mut r, mmio::WALL_CLOCK_H_LIVE, t + 100),
            8,
            "live high moved on"
        );
        r.write(mmio::WALL_CLOCK_H, 4, 0, Brisc, t, &mut no_units)
            .unwrap();
        r.write(mmio::WALL_CLOCK_H_LIVE, 4, 0, Brisc, t, &mut no_units)
            .unwrap();
        assert_eq!(
            rd(&mut r, mmio::WALL_CLOCK_H, t + 100),
            7,
            "writes to the high words are ignored"
        );
        // A write to the low word latches like a read (DebugTimestamper.md's memory map).
        r.write(mmio::WALL_CLOCK_L, 4, 0xDEAD, Brisc, t + 100, &mut no_units)
            .unwrap();
        assert_eq!(rd(&mut r, mmio::WALL_CLOCK_H, t), 8);
        assert_eq!(
            rd(&mut r, mmio::WALL_CLOCK_L, 0),
            5,
            "the clock itself is not written"
        );
    }

    fn no_units(_: u32, _: [u32; 4]) -> Result<(), String> {
        panic!("no unit expected")
    }

    #[test]
    fn timestamper_registers_use_the_wall_clock() {
        let mut r = TileRegs {
            wall_offset: 1 << 32,
            ..TileRegs::default()
        };
        let mut units = Vec::new();
        let mut sink = |a, d| {
            units.push((a, d));
            Ok(())
        };
        r.write(mmio::TIMESTAMP_BUF0_START, 4, 0x3000, Brisc, 0, &mut sink)
            .unwrap();
        r.write(mmio::TIMESTAMP_BUF0_END, 4, 0x3001, Brisc, 0, &mut sink)
            .unwrap();
        r.write(mmio::TIMESTAMP, 4, 0x40, Brisc, 0x10, &mut sink)
            .unwrap();
        assert_eq!(
            units,
            [(0x30000, [0x40, 0x10, 1, 0])],
            "counter = wall clock = time + offset"
        );
        assert_eq!(rd(&mut r, mmio::TIMESTAMP_STATUS, 0x11), 1 << 14);
        assert_eq!(rd(&mut r, mmio::TIMESTAMP_BUF0_END, 0x11), 0x3001);
        assert!(r.other.is_empty(), "not plain storage");
    }

    #[test]
    fn other_registers_read_back_and_soft_reset_is_deferred() {
        let mut r = TileRegs::default();
        wr(&mut r, mmio::NOC0_REGS_BASE + 8, 42);
        assert_eq!(rd(&mut r, mmio::NOC0_REGS_BASE + 8, 0), 42);
        wr(&mut r, mmio::SOFT_RESET_0, mmio::SOFT_RESET_ALL);
        assert_eq!(r.pending_reset, Some(mmio::SOFT_RESET_ALL));
        assert!(is_mmio(mmio::SOFT_RESET_0) && !is_mmio(mmio::LOCAL_RAM_BASE));
        assert!(is_mmio(mmio::TENSIX_CFG_BASE + 0xFFFC) && !is_mmio(mmio::TENSIX_CFG_BASE - 4));
    }

    #[test]
    fn storage_windows_read_back_for_every_core_that_has_them() {
        let mut r = TileRegs::default();
        for (addr, risc) in [
            (mmio::TDMA_REGS_BASE + 0x10, Ncrisc),
            (mmio::PIC_REGS_BASE + 4, Trisc1),
            (mmio::NOC_OVERLAY_BASE + 0x1_2344, Brisc),
            (mmio::TENSIX_CFG_BASE + 0x40, Trisc2),
        ] {
            r.write(addr, 4, addr ^ 0x5A5A, risc, 0, &mut no_units)
                .unwrap();
            assert_eq!(r.read(addr, 4, 0, Trisc0), Ok(addr ^ 0x5A5A), "{addr:#x}");
        }
    }

    #[test]
    fn mailbox_reads_pop_and_an_empty_one_waits() {
        let mut r = TileRegs::default();
        let b = mmio::MAILBOX_BASE;
        r.write(b, 4, 1, Brisc, 0, &mut no_units).unwrap();
        r.write(b, 4, 2, Brisc, 0, &mut no_units).unwrap();
        assert_eq!(r.read(b, 4, 0, Brisc), Ok(1));
        assert_eq!(r.read(b, 4, 0, Brisc), Ok(2));
        assert_eq!(
            r.read(b, 4, 0, Brisc),
            Err(FaultKind::Blocked {
                addr: b,
                write: false
            })
        );
    }

    #[test]
    fn unmapped_windows_name_region_and_core() {
        let mut r = TileRegs::default();
        let e = r.read(mmio::MAILBOX_BASE, 4, 0, Ncrisc).unwrap_err();
        assert!(
            matches!(
                e,
                FaultKind::Unmapped {
                    risc: Ncrisc,
                    write: false,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("TENSIX_MAILBOX") && msg.contains("NCRISC"),
            "{msg}"
        );
        let e = r
            .write(mmio::PC1_BUF_BASE, 1, 0, Trisc1, 0, &mut no_units)
            .unwrap_err();
        assert!(
            e.to_string().contains("PC1_BUF_BASE") && e.to_string().contains("TRISC_1"),
            "{e}"
        );
        let e = r
            .write(mmio::MOP_CFG_BASE + 0x40, 4, 0, Trisc1, 0, &mut no_units)
            .unwrap_err();
        assert_eq!(
            e,
            FaultKind::Access {
                addr: mmio::MOP_CFG_BASE + 0x40,
                size: 4,
                write: true
            }
        );
    }

    #[test]
    fn instruction_fifo_debug_registers() {
        let mut r = TileRegs::default();
        assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 0), 0x77);
        wr(&mut r, mmio::INSTRN_BUF_STATUS, 0);
        assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 0), 0x77, "read-only");
        wr(&mut r, mmio::INSTRN_BUF_CTRL1, 0x0200_0000);
        wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2); // the debug bus takes thread T1's FIFO
        wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2 | 0x10); // a push bit of a thread it does not hold
        r.write(
            mmio::INSTRN_BUF_CTRL0,
            4,
            0x2 | 0x10 | 0x20,
            Ncrisc,
            0,
            &mut no_units,
        )
        .unwrap();
        assert_eq!(
            rd(&mut r, mmio::INSTRN_BUF_STATUS, 0),
            0x57,
            "the NOP sits in T1's FIFO before the Replay Expander"
        );
        assert_eq!(rd(&mut r, mmio::INSTRN_BUF_STATUS, 3), 0x77, "then issues");
        wr(&mut r, mmio::INSTRN_BUF_CTRL1, 0x2900_0000); // DOTPV: not modelled
        wr(&mut r, mmio::INSTRN_BUF_CTRL0, 0x2);
        let e = r
            .write(mmio::INSTRN_BUF_CTRL0, 4, 0x22, Ncrisc, 3, &mut no_units)
            .unwrap_err();
        assert!(
            matches!(
                e,
                FaultKind::TensixPush {
                    word: 0x2900_0000,
                    addr: mmio::INSTRN_BUF_CTRL0,
                    risc: Ncrisc,
                    thread: 1,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("debug-bus push"), "{e}");
    }
}
