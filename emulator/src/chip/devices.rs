//! The tile's devices as its RISC-V cores see them: what each address above local RAM
//! reaches, per core, and the FIFOs and synchronisation devices between the cores.
//!
//! The map and the behaviours follow Tenstorrent's public ISA documentation for Wormhole B0
//! (the [baby RISC-V memory map], [Mailboxes], [PCBufs], [TTSync], [Push Tensix
//! instruction], the Sync Unit's [semaphores], the Scalar Unit's [GPRs]); tt-metal's
//! Blackhole headers put these windows at the same addresses, so both arches use this map.
//!
//! ## What is modelled
//!
//! * **Mailboxes** (`TENSIX_MAILBOX0..3_BASE`, BRISC and the three TRISCs): sixteen FIFOs of
//!   32-bit values, one from each of those four cores to each. Window `i` names core `i`
//!   (BRISC, TRISC0, TRISC1, TRISC2): a store by core `c` pushes onto the mailbox from `c` to
//!   `i`, a load by `c` pops the mailbox from `i` to `c`, and a load at an address with bit 2
//!   set (`TENSIX_MAILBOX{i}_BASE + 4`) returns 1 if that mailbox holds a value, else 0,
//!   without popping. A mailbox holds at most four values, and the four mailboxes a core
//!   writes to hold at most four values between them: a store that would exceed either
//!   waits, and so does a pop of an empty mailbox ([`FaultKind::Blocked`]).
//! * **PCBufs** (BRISC to TRISC i, sixteen deep): BRISC pushes with a store anywhere in
//!   `PC_BUF_BASE` / `PC1_BUF_BASE` / `PC2_BUF_BASE` (waits while full); TRISC i pops with a
//!   load of `PC_BUF_BASE` (waits while empty, unless `OverrideEn` is set in
//!   `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`, which then returns `OverrideValue`); TRISC
//!   stores there are discarded. A BRISC load returns 0 once the FIFO is empty, TRISC i is
//!   waiting on a PCBuf load and Tensix thread i has nothing in flight (or at once with
//!   `OverrideEn` and `OverrideBusy`), and waits otherwise.
//! * **TTSync** (TRISCs, `PC_BUF_BASE + 4` and `+ 8`): a `CoprocessorDoneCheck` load waits
//!   until the TRISC's Tensix thread has nothing in flight, a `MOPExpanderDoneCheck` load
//!   until its MOP Expander has no `MOP` queued or expanding (both at once with `OverrideEn`
//!   and `OverrideBusy`), then returns 0 for the page's "undefined value"; stores to them are
//!   discarded.
//! * **The coprocessor's state** ([`crate::tensix`]): the Tensix semaphores (TRISCs,
//!   `PC_BUF_BASE + 0x20 + 4 * i`: a load returns `Value`; a store of an odd value acts like
//!   `SEMGET`, of an even value like `SEMPOST`), the GPRs (`REGFILE_BASE`: BRISC sees all
//!   three threads' 64 registers one after the other, TRISC i its own thread's at the base),
//!   the backend configuration (`TENSIX_CFG_BASE`: `Config[2][188]`, then `ThreadConfig`,
//!   which RISC stores do not change), the MOP Expander configuration, and the instruction
//!   pushes (stores to `INSTRN_BUF_BASE`, BRISC to `INSTRN1_BUF_BASE` / `INSTRN2_BUF_BASE`,
//!   `.ttinsn`, debug-bus pushes through `RISCV_DEBUG_REG_INSTRN_BUF_CTRL0`): a push into a
//!   full FIFO waits; an instruction the model does not execute stops the run with
//!   [`FaultKind::TensixPush`]. Loads of the push windows are [`FaultKind::WriteOnly`].
//!   Every such access first runs the coprocessor up to the accessing core's clock.
//! * **Per-core mapping**: a core accessing a window the map leaves unmapped for it (any of
//!   these from NCRISC; `PC1/PC2_BUF_BASE`, `INSTRN1/2_BUF_BASE` from a TRISC; MOP
//!   configuration from BRISC) stops with [`FaultKind::Unmapped`], naming the region and the
//!   core.
//!
//! ## Plain storage
//!
//! Reads return what was last written (0 at first), shared by every core of the tile: the
//! TDMA-RISC window (its command queue, mover and packer metadata are not modelled), the PIC
//! registers, the NoC overlay (no streams move data), the backend configuration window
//! past `ThreadConfig`, the rest of the GPR window past the
//! registers, the reserved words of the TTSync range (`+0xC..+0x1F`) and the TRISCs'
//! `PC_BUF_BASE` window past the semaphores. The MOP expander configuration is kept per TRISC
//! and is write-only (a load faults: the page calls it undefined). The debug block and the NoC
//! windows are [`crate::chip::mmio`]'s.
//!
//! ## Narrow accesses, waiting, lifetime
//!
//! A byte or halfword load from a device takes the whole word's effect (a mailbox pop pops
//! the word) and returns the addressed bytes; a narrow store to a device delivers the stored
//! bytes in their lanes and zeros elsewhere (storage merges them into the stored word). A
//! waiting access returns [`FaultKind::Blocked`] with nothing done: the tile retries it;
//! hardware would let the core run ahead a few instructions (the waits are in the memory
//! subsystem, and stores can sit in shared buffers), the emulator holds the core at the
//! access. Device state persists across runs, as on hardware.
//!
//! [baby RISC-V memory map]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/README.md#memory-map
//! [Mailboxes]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/Mailboxes.md
//! [PCBufs]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/PCBufs.md
//! [TTSync]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/TTSync.md
//! [Push Tensix instruction]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/BabyRISCV/PushTensixInstruction.md
//! [semaphores]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/TensixCoprocessor/SyncUnit.md#semaphores
//! [GPRs]: https://github.com/tenstorrent/tt-isa-documentation/blob/main/WormholeB0/TensixTile/TensixCoprocessor/ScalarUnit.md#gprs

use crate::error::FaultKind;
use crate::map::{region_name, span, Window};
use crate::tensix::{Tensix as Coprocessor, TtSync, CONFIG_VIEW_BYTES};
use riscv_linker::{mmio, Risc};
use std::collections::VecDeque;

/// Depth of one mailbox, and what the four mailboxes one core writes to hold together.
pub(crate) const MAILBOX_DEPTH: usize = 4;
/// Depth of one PCBuf.
pub(crate) const PC_BUF_DEPTH: usize = 16;

/// Whether a load of `addr` by `risc` is *timeless*: it has no side effect and what it
/// returns changes only through a store, a NoC delivery or the coprocessor's work, never by
/// time passing (NIU registers are, once every request has completed, which the deadlock
/// detector checks, `crate::debug::stall`). A clock, a FIFO pop, a PCBuf or TTSync, the debug
/// registers: not timeless.
pub(crate) fn read_is_timeless(addr: u32, risc: Risc) -> bool {
    if crate::noc::niu::in_window(addr) {
        return true;
    }
    match target(addr, risc) {
        Target::Storage => true,
        Target::Device(Device::Mailbox { .. }) => addr & mmio::MAILBOX_STATUS != 0,
        Target::Device(Device::Semaphore(_) | Device::Gpr { .. } | Device::Config { .. }) => true,
        _ => false,
    }
}

/// What an access by one core reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The debug block and the NoC windows ([`crate::chip::mmio::TileRegs`], the NIUs).
    Regs,
    /// Plain storage shared by the tile's cores.
    Storage,
    /// A device of this module.
    Device(Device),
    /// The window exists but not for this core.
    Unmapped(&'static str),
    /// No window.
    Outside,
}

impl Target {
    /// Whether a narrow store merges into the current word (read without side effects)
    /// rather than delivering only its bytes.
    pub fn merges(self) -> bool {
        matches!(
            self,
            Target::Regs | Target::Storage | Target::Device(Device::Gpr { .. })
        )
    }
}

/// A device and the instance the access names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Device {
    /// The mailbox window of peer `peer` (0 BRISC, 1..=3 TRISC0..2).
    Mailbox {
        peer: usize,
    },
    /// BRISC's side of PCBuf `i`.
    PcBufB(usize),
    /// TRISC i's side of PCBuf `i`.
    PcBufT(usize),
    /// TTSync `CoprocessorDoneCheck` or `MOPExpanderDoneCheck` of TRISC `thread`.
    TtSync {
        thread: usize,
        which: TtSync,
    },
    Semaphore(usize),
    Gpr {
        thread: usize,
        index: usize,
    },
    /// MOP expander configuration word `index` of TRISC `thread`'s Tensix thread.
    MopCfg {
        thread: usize,
        index: usize,
    },
    /// Pushes a Tensix instruction to Tensix thread `thread`.
    Push {
        thread: u8,
    },
    /// Backend configuration (`Config`, then `ThreadConfig`), byte offset `off`.
    Config {
        off: u32,
    },
}

/// Index of a core among the mailbox peers (BRISC, TRISC0, TRISC1, TRISC2).
fn peer(risc: Risc) -> Option<usize> {
    match risc {
        Risc::Brisc => Some(0),
        Risc::Ncrisc => None,
        t => thread(t).map(|i| i + 1),
    }
}

/// The Tensix thread of a TRISC.
fn thread(risc: Risc) -> Option<usize> {
    match risc {
        Risc::Trisc0 => Some(0),
        Risc::Trisc1 => Some(1),
        Risc::Trisc2 => Some(2),
        _ => None,
    }
}

/// What an access at `addr` by `risc` reaches (above local RAM).
pub(crate) fn target(addr: u32, risc: Risc) -> Target {
    let Some(s) = span(addr) else {
        return Target::Outside;
    };
    let off = addr - s.base;
    let unmapped = Target::Unmapped(s.name);
    let dev = Target::Device;
    let gprs = mmio::GPRS_PER_THREAD_BYTES;
    match (s.window, risc, thread(risc)) {
        (Window::Debug | Window::Noc, ..) => Target::Regs,
        (Window::Tdma | Window::Pic | Window::Overlay, ..) => Target::Storage,
        (Window::MopCfg, _, Some(thread)) => dev(Device::MopCfg {
            thread,
            index: (off / 4) as usize,
        }),
        (Window::MopCfg, ..) => unmapped,
        (Window::Regfile, Risc::Ncrisc, _) => unmapped,
        (Window::Regfile, Risc::Brisc, _) if off < 3 * gprs => dev(Device::Gpr {
            thread: (off / gprs) as usize,
            index: (off % gprs / 4) as usize,
        }),
        (Window::Regfile, _, Some(thread)) if off < gprs => dev(Device::Gpr {
            thread,
            index: (off / 4) as usize,
        }),
        (Window::Regfile, ..) => Target::Storage,
        (Window::Instrn(0), Risc::Brisc, _) => dev(Device::Push { thread: 0 }),
        (Window::Instrn(0), _, Some(t)) => dev(Device::Push { thread: t as u8 }),
        (Window::Instrn(k), Risc::Brisc, _) => dev(Device::Push { thread: k }),
        (Window::Instrn(_), ..) => unmapped,
        (Window::PcBuf(k), Risc::Brisc, _) => dev(Device::PcBufB(k as usize)),
        (Window::PcBuf(0), _, Some(t)) => match off {
            0..=3 => dev(Device::PcBufT(t)),
            4..=7 => dev(Device::TtSync {
                thread: t,
                which: TtSync::CoprocessorDone,
            }),
            8..=0xB => dev(Device::TtSync {
                thread: t,
                which: TtSync::MopExpanderDone,
            }),
            0x20..=0x3F => dev(Device::Semaphore(((off - 0x20) / 4) as usize)),
            _ => Target::Storage,
        },
        (Window::PcBuf(_), ..) => unmapped,
        (Window::Mailbox, ..) if peer(risc).is_some() => dev(Device::Mailbox {
            peer: (off / mmio::MAILBOX_STRIDE) as usize,
        }),
        (Window::Mailbox, ..) => unmapped,
        (Window::TensixCfg, Risc::Ncrisc, _) => unmapped,
        (Window::TensixCfg, ..) if off < CONFIG_VIEW_BYTES => dev(Device::Config { off }),
        (Window::TensixCfg, ..) => Target::Storage,
    }
}

/// The Tensix thread a store by `risc` at `addr` pushes into through the FIFO from the RISC
/// (a TRISC's push; BRISC's pushes enter later in the frontend).
pub(crate) fn risc_push_thread(addr: u32, risc: Risc) -> Option<usize> {
    match target(addr, risc) {
        Target::Device(Device::Push { thread }) if risc != Risc::Brisc => Some(thread as usize),
        _ => None,
    }
}

/// `OverrideEn`, `OverrideBusy`, `OverrideValue` of PCBuf `i` in the override register.
fn override_bits(reg: u32, i: usize) -> (bool, bool, u32) {
    let f = reg >> (10 * i);
    (f & 1 != 0, f & 2 != 0, (f >> 2) & 0xFF)
}

/// The state of the tile's devices.
#[derive(Debug, Default)]
pub(crate) struct Devices {
    /// `mailboxes[from][to]`, cores numbered BRISC, TRISC0, TRISC1, TRISC2.
    mailboxes: [[VecDeque<u32>; 4]; 4],
    pc_bufs: [VecDeque<u32>; 3],
    /// TRISC i has a load of its PCBuf waiting on the empty FIFO.
    pc_buf_waiting: [bool; 3],
    /// The coprocessor: semaphores, GPRs, MOP configuration, backend configuration, and
    /// the instruction pushes.
    pub tensix: Coprocessor,
}

impl Devices {
    /// TRISC `i`'s PCBuf as the debug daisychain shows it: its head (`None`: empty) and
    /// whether it is full.
    pub fn pc_buf_state(&self, i: usize) -> (Option<u32>, bool) {
        let b = &self.pc_bufs[i];
        (b.front().copied(), b.len() >= PC_BUF_DEPTH)
    }

    /// A load of the word holding `addr` (`size` bytes asked) from `dev` by `risc` whose
    /// clock reads `time`; `pc_buf_override` is the current
    /// `RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`.
    pub fn read(
        &mut self,
        dev: Device,
        addr: u32,
        size: u32,
        risc: Risc,
        pc_buf_override: u32,
        time: u64,
    ) -> Result<u32, FaultKind> {
        let blocked = FaultKind::Blocked { addr, write: false };
        match dev {
            Device::Mailbox { peer: from } => {
                let me = peer(risc).expect("mailbox target of a mailbox peer");
                let mb = &mut self.mailboxes[from][me];
                if addr & mmio::MAILBOX_STATUS != 0 {
                    Ok(!mb.is_empty() as u32)
                } else {
                    mb.pop_front().ok_or(blocked)
                }
            }
            Device::PcBufB(i) => {
                let (en, busy, _) = override_bits(pc_buf_override, i);
                if (en && busy)
                    || (self.pc_bufs[i].is_empty()
                        && self.pc_buf_waiting[i]
                        && self.tensix.thread_done(i, time)?)
                {
                    Ok(0)
                } else {
                    Err(blocked)
                }
            }
            Device::PcBufT(i) => {
                let (en, _, value) = override_bits(pc_buf_override, i);
                match self.pc_bufs[i].pop_front() {
                    Some(v) => {
                        self.pc_buf_waiting[i] = false;
                        Ok(v)
                    }
                    None if en => {
                        self.pc_buf_waiting[i] = false;
                        Ok(value)
                    }
                    None => {
                        self.pc_buf_waiting[i] = true;
                        Err(blocked)
                    }
                }
            }
            // The value is undefined: 0.
            Device::TtSync { thread, which } => {
                let (en, busy, _) = override_bits(pc_buf_override, thread);
                if (en && busy) || self.tensix.ttsync(thread, which, time)? {
                    Ok(0)
                } else {
                    Err(blocked)
                }
            }
            Device::Semaphore(i) => {
                self.tensix.advance_to(time)?;
                Ok(self.tensix.sync.sems[i].value as u32)
            }
            Device::Gpr { thread, index } => {
                self.tensix.advance_to(time)?;
                Ok(self.tensix.gprs[thread][index])
            }
            Device::Config { off } => {
                self.tensix.advance_to(time)?;
                Ok(self.tensix.config.risc_read(off))
            }
            Device::MopCfg { .. } | Device::Push { .. } => Err(FaultKind::WriteOnly {
                addr,
                size,
                risc,
                region: region_name(addr),
            }),
        }
    }

    /// A store of `word` (the whole word holding `addr`) to `dev` by `risc` at `time`.
    pub fn write(
        &mut self,
        dev: Device,
        addr: u32,
        word: u32,
        risc: Risc,
        time: u64,
    ) -> Result<(), FaultKind> {
        let blocked = FaultKind::Blocked { addr, write: true };
        match dev {
            Device::Mailbox { peer: to } => {
                let me = peer(risc).expect("mailbox target of a mailbox peer");
                let held: usize = self.mailboxes[me].iter().map(VecDeque::len).sum();
                if self.mailboxes[me][to].len() >= MAILBOX_DEPTH || held >= MAILBOX_DEPTH {
                    return Err(blocked);
                }
                self.mailboxes[me][to].push_back(word);
            }
            Device::PcBufB(i) => {
                if self.pc_bufs[i].len() >= PC_BUF_DEPTH {
                    return Err(blocked);
                }
                self.pc_bufs[i].push_back(word);
            }
            Device::PcBufT(_) | Device::TtSync { .. } => {}
            Device::Push { thread } => self.tensix.push(thread, word, risc, addr, time)?,
            Device::Semaphore(_)
            | Device::Gpr { .. }
            | Device::MopCfg { .. }
            | Device::Config { .. } => {
                let x = &mut self.tensix;
                x.advance_to(time)?;
                x.touched();
                match dev {
                    Device::Semaphore(i) => x.sync.risc_write(i, word),
                    Device::Gpr { thread, index } => x.gprs[thread][index] = word,
                    Device::MopCfg { thread, index } => x.mop_cfg[thread][index] = word,
                    Device::Config { off } => x.config.risc_write(off, word),
                    _ => unreachable!("matched above"),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmio::{mailbox, MAILBOX_STATUS as STATUS};
    use Risc::*;

    fn dev(addr: u32, risc: Risc) -> Device {
        match target(addr, risc) {
            Target::Device(d) => d,
            t => panic!("{addr:#x} for {risc}: {t:?}"),
        }
    }

    fn load(d: &mut Devices, addr: u32, risc: Risc) -> Result<u32, FaultKind> {
        d.read(dev(addr, risc), addr, 4, risc, 0, 0)
    }

    fn store(d: &mut Devices, addr: u32, risc: Risc, v: u32) -> Result<(), FaultKind> {
        d.write(dev(addr, risc), addr, v, risc, 0)
    }

    #[test]
    fn mailbox_is_a_fifo_that_blocks_when_empty_or_full() {
        let mut d = Devices::default();
        // BRISC to itself: window 0 both ways.
        let b = mailbox(0);
        store(&mut d, b, Brisc, 1).unwrap();
        store(&mut d, b, Brisc, 2).unwrap();
        assert_eq!(
            load(&mut d, b + STATUS, Brisc),
            Ok(1),
            "status: something to pop"
        );
        assert_eq!(load(&mut d, b, Brisc), Ok(1));
        assert_eq!(load(&mut d, b, Brisc), Ok(2));
        assert_eq!(
            load(&mut d, b, Brisc),
            Err(FaultKind::Blocked {
                addr: b,
                write: false
            })
        );
        assert_eq!(
            load(&mut d, b + STATUS, Brisc),
            Ok(0),
            "status of an empty mailbox, no wait"
        );
        for v in 10..14 {
            store(&mut d, b + 0x10, Brisc, v).unwrap();
        }
        assert_eq!(
            store(&mut d, b, Brisc, 14),
            Err(FaultKind::Blocked {
                addr: b,
                write: true
            })
        );
        assert_eq!(
            load(&mut d, b + 0x20, Brisc),
            Ok(10),
            "any address of the window pops"
        );
        store(&mut d, b, Brisc, 14).unwrap();
        let got: Vec<u32> = (0..4).map(|_| load(&mut d, b, Brisc).unwrap()).collect();
        assert_eq!(got, [11, 12, 13, 14]);
    }

    #[test]
    fn mailbox_addresses_follow_the_per_core_table() {
        // (writer, window it writes, reader, window it reads) for every pair.
        let cores = [Brisc, Trisc0, Trisc1, Trisc2];
        for (from_i, &from) in cores.iter().enumerate() {
            for (to_i, &to) in cores.iter().enumerate() {
                let mut d = Devices::default();
                let v = 100 + 10 * from_i as u32 + to_i as u32;
                store(&mut d, mailbox(to_i as u32), from, v).unwrap();
                // Only the reader's window of the writer sees it.
                for w in 0..4 {
                    for &r in &cores {
                        let status = load(&mut d, mailbox(w as u32) + STATUS, r).unwrap();
                        assert_eq!(
                            status,
                            (w == from_i && r == to) as u32,
                            "{from}->{to}: {r} window {w}"
                        );
                    }
                }
                assert_eq!(load(&mut d, mailbox(from_i as u32), to), Ok(v));
            }
        }
    }

    #[test]
    fn mailboxes_of_different_pairs_are_independent() {
        let mut d = Devices::default();
        store(&mut d, mailbox(1), Brisc, 1).unwrap(); // BRISC -> TRISC0
        store(&mut d, mailbox(0), Trisc0, 9).unwrap(); // TRISC0 -> BRISC
        store(&mut d, mailbox(1), Trisc1, 5).unwrap(); // TRISC1 -> TRISC0
        assert_eq!(
            load(&mut d, mailbox(1), Brisc),
            Ok(9),
            "BRISC reads TRISC0's window: TRISC0 -> BRISC"
        );
        assert_eq!(load(&mut d, mailbox(2), Trisc0), Ok(5));
        assert_eq!(load(&mut d, mailbox(0), Trisc0), Ok(1));
        assert!(matches!(
            load(&mut d, mailbox(0), Trisc0),
            Err(FaultKind::Blocked { .. })
        ));
    }

    #[test]
    fn the_mailboxes_a_core_writes_hold_four_values_together() {
        let mut d = Devices::default();
        store(&mut d, mailbox(1), Brisc, 1).unwrap();
        store(&mut d, mailbox(1), Brisc, 2).unwrap();
        store(&mut d, mailbox(2), Brisc, 3).unwrap();
        store(&mut d, mailbox(3), Brisc, 4).unwrap();
        let to_self = mailbox(0);
        assert_eq!(
            store(&mut d, to_self, Brisc, 5),
            Err(FaultKind::Blocked {
                addr: to_self,
                write: true
            })
        );
        // Another writer is not affected.
        store(&mut d, mailbox(1), Trisc2, 6).unwrap();
        assert_eq!(load(&mut d, mailbox(0), Trisc1), Ok(3));
        store(&mut d, to_self, Brisc, 5).unwrap();
    }

    #[test]
    fn pc_bufs_carry_sixteen_values_from_brisc_to_each_trisc() {
        let mut d = Devices::default();
        for v in 0..16 {
            store(&mut d, mmio::PC1_BUF_BASE + 4 * v, Brisc, v).unwrap();
        }
        assert!(matches!(
            store(&mut d, mmio::PC1_BUF_BASE, Brisc, 16),
            Err(FaultKind::Blocked { write: true, .. })
        ));
        store(&mut d, mmio::PC_BUF_BASE + 0x100, Brisc, 77).unwrap();
        assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc0), Ok(77));
        assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc1), Ok(0));
        assert_eq!(load(&mut d, mmio::PC_BUF_BASE, Trisc1), Ok(1));
        assert!(matches!(
            load(&mut d, mmio::PC_BUF_BASE, Trisc2),
            Err(FaultKind::Blocked { write: false, .. })
        ));
        store(&mut d, mmio::PC_BUF_BASE, Trisc2, 5).unwrap(); // discarded
        assert!(matches!(
            load(&mut d, mmio::PC_BUF_BASE, Trisc2),
            Err(FaultKind::Blocked { .. })
        ));
    }

    #[test]
    fn a_brisc_pc_buf_load_waits_for_the_trisc_to_drain_and_wait() {
        let mut d = Devices::default();
        let b = mmio::PC_BUF_BASE;
        store(&mut d, b, Brisc, 1).unwrap();
        assert!(
            matches!(load(&mut d, b, Brisc), Err(FaultKind::Blocked { .. })),
            "FIFO not empty"
        );
        assert_eq!(load(&mut d, b, Trisc0), Ok(1));
        assert!(
            matches!(load(&mut d, b, Brisc), Err(FaultKind::Blocked { .. })),
            "TRISC0 not waiting yet"
        );
        assert!(load(&mut d, b, Trisc0).is_err());
        assert_eq!(
            load(&mut d, b, Brisc),
            Ok(0),
            "drained, TRISC0 waiting, Tensix idle"
        );
        assert!(
            matches!(
                load(&mut d, mmio::PC1_BUF_BASE, Brisc),
                Err(FaultKind::Blocked { .. })
            ),
            "other PCBufs"
        );
        store(&mut d, b, Brisc, 2).unwrap();
        assert_eq!(load(&mut d, b, Trisc0), Ok(2));
        assert!(load(&mut d, b, Brisc).is_err(), "TRISC0 no longer waiting");
    }

    #[test]
    fn pc_buf_override_bits() {
        let mut d = Devices::default();
        // PCBuf 1: OverrideEn with value 0x5A; PCBuf 2: OverrideEn + OverrideBusy.
        let reg = ((1 | (0x5A << 2)) << 10) | (3 << 20);
        let rd = |d: &mut Devices, addr, risc| d.read(dev(addr, risc), addr, 4, risc, reg, 0);
        assert_eq!(
            rd(&mut d, mmio::PC_BUF_BASE, Trisc1),
            Ok(0x5A),
            "empty FIFO: the override value"
        );
        store(&mut d, mmio::PC1_BUF_BASE, Brisc, 7).unwrap();
        assert_eq!(
            rd(&mut d, mmio::PC_BUF_BASE, Trisc1),
            Ok(7),
            "values in the FIFO come first"
        );
        assert_eq!(
            rd(&mut d, mmio::PC2_BUF_BASE, Brisc),
            Ok(0),
            "OverrideEn + OverrideBusy"
        );
        assert!(
            rd(&mut d, mmio::PC_BUF_BASE, Brisc).is_err(),
            "PCBuf 0 has no override"
        );
    }

    #[test]
    fn ttsync_and_semaphores() {
        let mut d = Devices::default();
        assert_eq!(
            target(mmio::TTSYNC_COPROCESSOR_DONE, Trisc1),
            Target::Device(Device::TtSync {
                thread: 1,
                which: TtSync::CoprocessorDone
            })
        );
        assert_eq!(
            target(mmio::TTSYNC_MOP_EXPANDER_DONE, Trisc2),
            Target::Device(Device::TtSync {
                thread: 2,
                which: TtSync::MopExpanderDone
            })
        );
        store(&mut d, mmio::TTSYNC_COPROCESSOR_DONE, Trisc0, 0).unwrap();
        assert_eq!(
            load(&mut d, mmio::TTSYNC_COPROCESSOR_DONE, Trisc0),
            Ok(0),
            "returns at once"
        );
        let s3 = mmio::SEMAPHORE_BASE + 12;
        assert_eq!(load(&mut d, s3, Trisc0), Ok(0));
        store(&mut d, s3, Trisc0, 0).unwrap(); // post
        store(&mut d, s3, Trisc1, 2).unwrap(); // post (even)
        assert_eq!(load(&mut d, s3, Trisc2), Ok(2), "shared by the TRISCs");
        store(&mut d, s3, Trisc2, 1).unwrap(); // get
        assert_eq!(load(&mut d, s3, Trisc0), Ok(1));
        for _ in 0..3 {
            store(&mut d, s3, Trisc0, 0xFFFF_FFFF).unwrap();
        }
        assert_eq!(load(&mut d, s3, Trisc0), Ok(0), "SEMGET stops at 0");
        for _ in 0..20 {
            store(&mut d, s3, Trisc0, 0).unwrap();
        }
        assert_eq!(load(&mut d, s3, Trisc0), Ok(15), "SEMPOST stops at 15");
        assert_eq!(
            load(&mut d, mmio::SEMAPHORE_BASE, Trisc0),
            Ok(0),
            "other semaphores untouched"
        );
        assert_eq!(target(mmio::SEMAPHORE_BASE + 0x20, Trisc0), Target::Storage);
        assert_eq!(target(mmio::PC_BUF_BASE + 0xC, Trisc0), Target::Storage);
        assert_eq!(
            target(mmio::SEMAPHORE_BASE, Brisc),
            Target::Device(Device::PcBufB(0))
        );
    }

    #[test]
    fn gprs_brisc_sees_all_threads_a_trisc_its_own() {
        let mut d = Devices::default();
        let r = mmio::REGFILE_BASE;
        store(&mut d, r + 0x100 + 8, Brisc, 42).unwrap(); // thread 1, GPR 2
        assert_eq!(load(&mut d, r + 8, Trisc1), Ok(42));
        assert_eq!(load(&mut d, r + 8, Trisc0), Ok(0));
        store(&mut d, r + 0xFC, Trisc2, 7).unwrap();
        assert_eq!(load(&mut d, r + 0x2FC, Brisc), Ok(7));
        assert_eq!(target(r + 0x300, Brisc), Target::Storage);
        assert_eq!(target(r + 0x100, Trisc0), Target::Storage);
    }

    #[test]
    fn per_core_mapping() {
        let unmapped = |addr, risc| matches!(target(addr, risc), Target::Unmapped(_));
        for addr in [
            mmio::MAILBOX_BASE,
            mmio::PC_BUF_BASE,
            mmio::SEMAPHORE_BASE,
            mmio::REGFILE_BASE,
            mmio::INSTRN_BUF_BASE,
            mmio::TENSIX_CFG_BASE,
        ] {
            assert!(unmapped(addr, Ncrisc), "{addr:#x}");
        }
        for risc in [Trisc0, Trisc1, Trisc2, Ncrisc] {
            assert!(unmapped(mmio::PC1_BUF_BASE, risc) && unmapped(mmio::PC2_BUF_BASE + 4, risc));
            assert!(
                unmapped(mmio::INSTRN1_BUF_BASE, risc) && unmapped(mmio::INSTRN2_BUF_BASE, risc)
            );
        }
        assert!(unmapped(mmio::MOP_CFG_BASE, Brisc) && unmapped(mmio::MOP_CFG_BASE, Ncrisc));
        assert_eq!(
            target(mmio::MOP_CFG_BASE + 0x20, Trisc2),
            Target::Device(Device::MopCfg {
                thread: 2,
                index: 8
            })
        );
        assert_eq!(target(mmio::MOP_CFG_BASE + 0x24, Trisc2), Target::Outside);
        assert_eq!(
            target(mmio::INSTRN_BUF_BASE, Brisc),
            Target::Device(Device::Push { thread: 0 })
        );
        assert_eq!(
            target(mmio::INSTRN_BUF_BASE + 0x40, Trisc2),
            Target::Device(Device::Push { thread: 2 })
        );
        assert_eq!(
            target(mmio::INSTRN2_BUF_BASE, Brisc),
            Target::Device(Device::Push { thread: 2 })
        );
        for risc in Risc::ALL {
            for addr in [
                mmio::TDMA_REGS_BASE,
                mmio::PIC_REGS_BASE + 0xFFC,
                mmio::NOC_OVERLAY_BASE + 0x3_FFFC,
            ] {
                assert_eq!(target(addr, risc), Target::Storage);
            }
            assert_eq!(target(mmio::SOFT_RESET_0, risc), Target::Regs);
            assert_eq!(target(0xFFE1_0000, risc), Target::Outside);
            assert_eq!(
                target(0xFFC0_0000, risc),
                Target::Outside,
                "NCRISC IRAM: not reachable by loads/stores"
            );
        }
        assert_eq!(
            target(mmio::TENSIX_CFG_BASE + 0xFFFC, Trisc1),
            Target::Storage
        );
    }

    #[test]
    fn pushes_queue_or_fault_and_are_write_only() {
        let mut d = Devices::default();
        store(&mut d, mmio::INSTRN1_BUF_BASE, Brisc, 0x0200_0000).unwrap(); // NOP: queued
        let dotpv = 0x2900_0000; // not modelled
        let e = store(&mut d, mmio::INSTRN1_BUF_BASE, Brisc, dotpv).unwrap_err();
        assert!(
            matches!(
                e,
                FaultKind::TensixPush {
                    word: 0x2900_0000,
                    addr: mmio::INSTRN1_BUF_BASE,
                    risc: Brisc,
                    thread: 1,
                    mnemonic: "DOTPV",
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        for part in ["BRISC", "DOTPV", "0x29000000", "thread T1", "not modelled"] {
            assert!(msg.contains(part), "{part:?} missing from {msg}");
        }
        assert!(matches!(
            load(&mut d, mmio::INSTRN_BUF_BASE, Trisc0),
            Err(FaultKind::WriteOnly { .. })
        ));
        store(&mut d, mmio::MOP_CFG_BASE + 4, Trisc0, 3).unwrap();
        assert!(matches!(
            load(&mut d, mmio::MOP_CFG_BASE + 4, Trisc0),
            Err(FaultKind::WriteOnly { .. })
        ));
        assert_eq!(d.tensix.mop_cfg[0][1], 3);
    }
}
