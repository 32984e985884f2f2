//! What one core's loads and stores reach, and what they cost.
//!
//! A core sees, in this order of lookup:
//!
//! 1. L1 at `0..l1_size`, shared by the tile's five cores and living in the device-memory
//!    image file. Loads may read anything; stores into any core's code region (or the
//!    BRISC boot word) fault, which is also what keeps the interpreter's pre-decoded code
//!    valid.
//! 2. The core's private local RAM at `LOCAL_RAM_BASE`.
//! 3. The MMIO windows ([`crate::devices`]); with the NoC model on, the two NIU windows are
//!    the tile's NIUs ([`crate::noc::niu`]): reading one first applies every NoC event due
//!    by the reading core's clock, writing `CMD_CTRL` issues a request. The other windows
//!    are the tile's devices ([`crate::devices`]), as the accessing core sees them; a store
//!    to the debug timestamper ([`crate::devices::timestamper`]) may write a 16-byte unit into L1.
//!
//! Anything else faults. A device access that has to wait (an empty mailbox, a full
//! PCBuf, ...) returns [`FaultKind::Blocked`] with nothing done. All accesses are naturally
//! aligned by the time they reach memory (misaligned ones fault or are rounded down, per
//! [`Misaligned`]).

use crate::bus::{local_load, local_store, Marks, TileBus, L1};
use crate::config::{Misaligned, Timing};
use crate::devices::mover::{Mode as MoveMode, Move};
use crate::devices::timestamper::write_unit;
use crate::devices::{Access, Devices, Noc};
use crate::error::FaultKind;
use crate::noc::niu::Niu;
use riscv_linker::{Region, Risc};

/// The memory system of one tile, as its cores see it.
#[derive(Debug)]
pub(crate) struct TileMem {
    pub l1: L1,
    /// Every code region of the tile (and the boot word), with its owner.
    pub code: Vec<(Region, Risc)>,
    /// No code lies at or above this address.
    pub code_end: u32,
    pub regs: Devices,
    pub timing: Timing,
    pub misaligned: Misaligned,
    /// The tile's NIUs (`None`: the NoC model is off and the windows are plain storage).
    pub niu: Option<Box<Niu>>,
    /// The core making the accesses (set by [`crate::isa::hart::Hart::run`]): devices map
    /// differently per core ([`crate::devices`]).
    pub risc: Risc,
}

/// Result of a load: the zero-extended value.
pub(crate) type Loaded = Result<u32, FaultKind>;

impl TileBus for TileMem {
    #[inline(always)]
    fn l1(&self) -> &L1 {
        &self.l1
    }

    #[inline(always)]
    fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The address an access of `size` bytes at `addr` reaches: itself when aligned,
    /// rounded down or a fault otherwise (per [`Misaligned`]).
    #[inline(always)]
    fn aligned(&self, addr: u32, size: u32, write: bool) -> Result<u32, FaultKind> {
        if addr & (size - 1) == 0 {
            return Ok(addr);
        }
        match self.misaligned {
            Misaligned::Strict => Err(FaultKind::Misaligned { addr, size, write }),
            Misaligned::RoundDown => Ok(addr & !(size - 1)),
        }
    }

    /// Loads `N` bytes at the aligned `addr` for a core with local RAM `local` whose clock
    /// reads `time`.
    #[inline(always)]
    fn load<const N: u32>(&mut self, local: &[u8], addr: u32, time: u64) -> Loaded {
        if addr < self.l1.size() {
            return Ok(self.l1.load::<N>(addr));
        }
        if let Some(v) = local_load::<N>(local, addr) {
            return Ok(v);
        }
        self.load_mmio::<N>(addr, time)
    }

    /// Stores the low `N` bytes of `v` at the aligned `addr`.
    #[inline(always)]
    fn store<const N: u32>(
        &mut self,
        local: &mut [u8],
        addr: u32,
        v: u32,
        time: u64,
    ) -> Result<(), FaultKind> {
        if addr < self.l1.size() {
            if addr < self.code_end {
                self.check_not_code(addr)?;
            }
            self.l1.store::<N>(addr, v);
            return Ok(());
        }
        if local_store::<N>(local, addr, v) {
            return Ok(());
        }
        self.store_mmio::<N>(addr, v, time)
    }

    #[inline(always)]
    fn region(&self, addr: u32, local_len: u32) -> crate::map::Region {
        crate::map::timing_region(addr, self.l1.size(), local_len)
    }

    #[inline]
    fn read_is_timeless(&self, addr: u32) -> bool {
        crate::devices::read_is_timeless(addr, self.risc)
    }

    #[inline(always)]
    fn wall(&self, time: u64) -> u64 {
        self.regs.wall(time)
    }

    #[inline(always)]
    fn reset_pending(&self) -> bool {
        self.regs.pending_reset.is_some()
    }

    #[inline]
    fn sampled(&mut self) -> bool {
        self.samples(self.risc)
    }

    fn sample(&mut self, pc: u32, from: u64, to: u64, marks: &Marks) -> Result<(), FaultKind> {
        let span = crate::devices::daisychain::span_of(pc, from, to, marks);
        self.sample_span(&span, from, to)
    }
}

impl TileMem {
    #[cold]
    fn load_mmio<const N: u32>(&mut self, addr: u32, time: u64) -> Loaded {
        if !crate::map::in_map(addr) {
            return Err(FaultKind::Access {
                addr,
                size: N,
                write: false,
            });
        }
        let word = self.read_reg(addr, N, time, self.risc)?;
        let shift = (addr & 3) * 8;
        let mask = if N == 4 {
            u32::MAX
        } else {
            (1u32 << (N * 8)) - 1
        };
        Ok((word >> shift) & mask)
    }

    #[cold]
    fn check_not_code(&self, addr: u32) -> Result<(), FaultKind> {
        match self.code.iter().find(|(r, _)| r.contains(addr, 1)) {
            Some(&(_, owner)) => Err(FaultKind::StoreIntoCode { addr, owner }),
            None => Ok(()),
        }
    }

    #[cold]
    fn store_mmio<const N: u32>(&mut self, addr: u32, v: u32, time: u64) -> Result<(), FaultKind> {
        if !crate::map::in_map(addr) {
            return Err(FaultKind::Access {
                addr,
                size: N,
                write: true,
            });
        }
        let risc = self.risc;
        let a = Access {
            addr,
            size: N,
            risc,
            time,
        };
        let word = if N == 4 {
            v
        } else {
            // Narrow stores merge into the register's current contents; a device gets only
            // the stored bytes, in their lanes (`TileDevice::merges`).
            let shift = (addr & 3) * 8;
            let mask = ((1u32 << (N * 8)) - 1) << shift;
            let old = if self.regs.merges(&a)? {
                self.read_reg(addr, N, time, risc)?
            } else {
                0
            };
            (old & !mask) | ((v << shift) & mask)
        };
        let (l1, code, code_end) = (&self.l1, &self.code, self.code_end);
        let noc = self.niu.as_deref_mut().map(|niu| Noc { niu, l1, code_end });
        self.regs
            .write(&a, word, noc, &mut |u, d| write_unit(l1, code, u, d))?;
        match self.regs.tdma.take_move() {
            Some(m) => self.apply_move(m),
            None => Ok(()),
        }
    }

    /// Carries out a mover command's move at once ([`crate::devices::mover`]): from L1 or
    /// zeros, to NCRISC's instruction RAM or L1 (never into a code region).
    fn apply_move(&mut self, m: Move) -> Result<(), FaultKind> {
        let size = self.l1.size() as u64;
        let past = |at: u32| at as u64 + m.count as u64 > size;
        let mut data = vec![0u8; m.count as usize];
        if matches!(m.mode, MoveMode::L1ToL0 | MoveMode::L1ToL1) {
            if past(m.src) {
                return Err(FaultKind::Mover(format!(
                    "a copy of {} bytes from {:#x} reads past L1 ({size:#x} bytes)",
                    m.count, m.src
                )));
            }
            self.l1.read_into(m.src, &mut data);
        }
        match m.mode {
            MoveMode::L1ToL0 | MoveMode::ZeroL0 => {
                if let Some(off) = m.iram_offset().map_err(FaultKind::Mover)? {
                    let off = off as usize;
                    self.regs.tdma.iram_mut()[off..off + data.len()].copy_from_slice(&data);
                }
            }
            MoveMode::ZeroL1 | MoveMode::L1ToL1 => {
                if past(m.dst) {
                    return Err(FaultKind::Mover(format!(
                        "a move of {} bytes to {:#x} writes past L1 ({size:#x} bytes)",
                        m.count, m.dst
                    )));
                }
                for (i, unit) in data.chunks_exact(16).enumerate() {
                    let w = |j: usize| {
                        u32::from_le_bytes(unit[4 * j..4 * j + 4].try_into().unwrap_or_default())
                    };
                    write_unit(
                        &self.l1,
                        &self.code,
                        m.dst + 16 * i as u32,
                        [w(0), w(1), w(2), w(3)],
                    )
                    .map_err(|e| FaultKind::Mover(format!("a move to {:#x}: {e}", m.dst)))?;
                }
            }
        }
        Ok(())
    }

    /// A read of the register word holding `addr` (a `size`-byte load, for messages) by
    /// core `risc`, whose clock reads `time`.
    fn read_reg(&mut self, addr: u32, size: u32, time: u64, risc: Risc) -> Result<u32, FaultKind> {
        let a = Access {
            addr,
            size,
            risc,
            time,
        };
        let (l1, code, code_end) = (&self.l1, &self.code, self.code_end);
        let noc = self.niu.as_deref_mut().map(|niu| Noc { niu, l1, code_end });
        self.regs
            .read(&a, noc, &mut |u, d| write_unit(l1, code, u, d))
    }

    /// Applies the NoC events due at or before `time` (a window start).
    pub fn apply_noc(&mut self, time: u64) {
        let code_end = self.code_end;
        if let Some(n) = self.niu.as_mut() {
            n.apply_until(&self.l1, time, code_end);
        }
    }
}

/// The debug daisychain's side of the tile memory: what the devices and the coprocessor show
/// the samples of the core it watches.
impl TileMem {
    /// The debug daisychain, from a core's side (no locking: `&mut self`).
    pub(crate) fn daisychain(&mut self) -> &mut crate::devices::daisychain::Daisychain {
        self.regs
            .daisychain
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the daisychain samples `risc` (which must then be interpreted).
    #[inline]
    pub(crate) fn samples(&mut self, risc: Risc) -> bool {
        self.daisychain().sampled() == Some(risc)
    }

    /// The sampled core spent `from..to` in `span`: takes the samples due.
    pub(crate) fn sample_span(
        &mut self,
        span: &crate::devices::daisychain::Span,
        from: u64,
        to: u64,
    ) -> Result<(), crate::error::FaultKind> {
        use crate::devices::daisychain::GroupD;
        let state = match self.daisychain().group_d_selected() {
            Some(r) => {
                let i = r.index() - Risc::Trisc0.index();
                let (pcbuf_head, pcbuf_full) = self.regs.pc_buf_state(i);
                GroupD {
                    pcbuf_head,
                    pcbuf_full,
                    tensix: self.regs.tensix.debug_state(i),
                }
            }
            None => GroupD::default(),
        };
        let (l1, code) = (self.l1, &self.code);
        let d = self
            .regs
            .daisychain
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        d.observe(span, from, to, &state, &mut |a, w| {
            crate::devices::timestamper::write_unit(&l1, code, a, w)
        })
        .map_err(crate::error::FaultKind::Daisychain)
    }

    /// The sampled core does not run until `to` (the tile's window ended), or the run
    /// ended (`u64::MAX`): takes the samples due, showing it idle.
    pub(crate) fn sample_idle(&mut self, to: u64) -> Result<(), crate::error::FaultKind> {
        self.sample_span(&Default::default(), to, to)
    }
}
