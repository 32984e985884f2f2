//! The tile's debug daisychain (tt-isa-documentation, `WormholeB0/TensixTile/DebugDaisychain.md`):
//! one 128-bit group of internal signals per tile at a time, read 32 bits at a time through
//! `DBG_RD_DATA`, written to L1 once per trigger, or sampled every `N` cycles into `c`
//! consecutive 16-byte slots of the low 1 MiB of L1.
//!
//! The registers, the signals the model presents and how samples follow the sampled
//! core's clock: [`Daisychain`]. The tile's side of sampling (what the devices and the
//! coprocessor show, the samples of a held or idle core) is
//! [`crate::chip::memory::TileMem::sample_span`].

use super::{Access, Ctx, TileDevice};
use crate::devices::timestamper::UnitSink;
use crate::error::FaultKind;
use crate::isa::lines::Marks;
use riscv_linker::mmio::{self, daisychain as dc};
use riscv_linker::Risc;

/// What the selected core is doing in one span of its cycles.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Span {
    /// The instruction's pc (0: the core runs no kernel).
    pub pc: u32,
    /// From this cycle on the instruction issues (bit 31 set).
    pub issue_from: u64,
    /// From this cycle and before `access_until` a load or store waits to emit `access`.
    pub access_from: u64,
    /// See `access_from`.
    pub access_until: u64,
    /// (address, write) of the load or store.
    pub access: Option<(u32, bool)>,
}

/// Group D's bits that come from the devices and the coprocessor, not from the core's span
/// (`DebugDaisychain.md`, "Group D").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupD {
    /// `PCBuf[i].FIFO.peek()` when not empty.
    pub pcbuf_head: Option<u32>,
    pub pcbuf_full: bool,
    /// The thread's frontend as [`crate::tensix`] presents it.
    pub tensix: crate::tensix::DebugState,
}

impl GroupD {
    /// The 128 bits, without the core's wait bits (30, 31).
    pub fn words(&self) -> [u32; 4] {
        let mut w = [0u32; 4];
        let t = &self.tensix;
        match self.pcbuf_head {
            Some(v) => w[0] |= v >> 9,
            None => w[0] |= dc::D_PCBUF_EMPTY,
        }
        w[0] |= if self.pcbuf_full { dc::D_PCBUF_FULL } else { 0 };
        w[0] |= if t.mop_busy { dc::D_MOP_BUSY } else { 0 };
        w[0] |= if t.in_flight {
            dc::D_COPROCESSOR_BUSY
        } else {
            0
        };
        w[2] |= match t.template {
            Some(0) => dc::D2_TEMPLATE0,
            Some(_) => dc::D2_TEMPLATE1,
            None => 0,
        };
        if let Some(m) = t.mop_word {
            let at = dc::D_MOP_WORD_BIT - 64;
            w[2] |= m << at;
            w[3] |= m >> (32 - at);
        }
        w[3] |= if t.fifo1_busy { dc::D3_FIFO_BUSY } else { 0 };
        w[3] |= if t.fifo1_full { dc::D3_FIFO_FULL } else { 0 };
        w
    }
}

/// Sampling in progress.
#[derive(Clone, Copy, Debug)]
struct Sampling {
    /// Cycle of the next sample; `None` until the next run starts.
    next_at: Option<u64>,
    interval: u64,
    left: u32,
    /// Armed by the host and no instruction of the sampled core seen since (see
    /// [`Daisychain::observe`]).
    fresh: bool,
}

/// The daisychain of one tile.
///
/// # Registers (`riscv_linker::mmio::{DBG_BUS_CNTL, DBG_L1_MEM_REG0..2, DBG_RD_DATA}`)
///
/// * `DBG_BUS_CNTL`: `SignalSel`, `DaisySel`, `Read32Sel`, `Enabled`; reads back.
/// * `DBG_L1_MEM_REG0`/`REG1`: first slot (address / 16) and first slot + `c`; read back.
/// * `DBG_L1_MEM_REG2`: `WriteMode == 0xF` latches `REG0` as the next slot; a rising
///   `WriteTrigger` with `WriteMode` 0 or 1 writes the current 128 bits there (mode 1 then
///   moves to the next slot); `WriteMode == 4` with a rising `WriteTrigger` starts sampling:
///   `c = REG1 - REG0` samples every `N = SamplingInterval + 1` cycles. Slot numbers are
///   address bits 4-19, so every slot lies in the low 1 MiB. Leaving `WriteMode == 0xF`
///   takes `REG0` as the next slot.
/// * `DBG_RD_DATA`: the 32 bits of the last presented 128 that `Read32Sel` selects.
///
/// # Signals
///
/// With `DaisySel == 7`, group A of a core (`SignalSel` 10, 12, 14, 16, 24 for B, T0, T1,
/// T2, NC) and group D of a TRISC (19, 21, 23), and with any `DaisySel` the self-test
/// pattern (`SignalSel == 255`). Other groups read as zero. The model's group A: word 0 the
/// pc of the instruction the core is spending the cycle on (the one the exact line profile,
/// [`crate::isa::lines`], charges it to) with bit 31 set in its own issue cycles (not while it
/// waits for an operand, the store queue, a load slot, a FIFO or an instruction fetch);
/// word 1 the address a load or store is trying to emit while it waits for the store queue,
/// a load slot or a FIFO (bits 30/31: read/write); word 2 that pc again as the frontend's
/// fetch pc; word 3 zero (no "just fetched" instruction). Group D of TRISC i, from the
/// devices and the coprocessor model ([`GroupD`]): the PCBuf's head, empty and full bits
/// (0-24), bit 25 "a `MOP` queued or expanding", bit 26 "thread i has instructions in
/// flight" (TTSync's signals), bit 30 "waits on a TTSync read", bit 31 "waits on a read from
/// its PCBuf", bits 84/85 the template being expanded, 86-117 the `MOP` being expanded or
/// the head of the FIFO before the MOP Expander, 118 that FIFO or the expander busy, 125
/// that FIFO full. Not modelled (zero): bit 28 (RISCV B waiting on the PCBuf) and bits
/// 51-83 (the instruction leaving the MOP Expander this cycle). The coprocessor part is
/// its state at the latest cycle simulated, which is never later than the sample (the
/// model runs lazily up to the last access of any core). A core that is not running a
/// kernel (in reset, halted: the emulator has no firmware idle loop) shows pc 0, nothing
/// retiring.
///
/// # Time
///
/// Samples are taken at the sampled core's own clock, as it executes: the interpreter hands
/// every instruction's span of cycles to [`Daisychain::observe`] (so a sampled core runs on
/// the interpreter, never the JIT), the tile every span it holds the core on a FIFO, and the
/// tile's window ends the spans in which the core does not run. A sample is due every `N`
/// cycles from the arming; it is delayed by `N` while L1 is busy. Which L1 port the
/// daisychain writes through is not documented, and the page calls a delay rare ("extreme
/// contention"): the model counts L1 as busy for a sample when the port of the sampled core
/// is contended, an access of another core holding it while the sampled core waits to emit
/// its own (the sampled core's own stores alone do not delay a sample, or a store loop
/// would be under-sampled). Sampling armed while the tile is
/// idle (between runs: the emulator does not step idle time) starts with the next run.
/// When a run ends, the samples still due are taken at once, showing the idle core.
///
#[derive(Clone, Debug, Default)]
pub(crate) struct Daisychain {
    cntl: u32,
    reg0: u32,
    reg1: u32,
    reg2: u32,
    /// The slot the next write goes to (16-byte units).
    slot: u32,
    sampling: Option<Sampling>,
    /// The last 128 bits presented (what `DBG_RD_DATA` and a single write read).
    last: [u32; 4],
    /// Samples taken so far (for tests and messages).
    pub taken: u64,
    /// Samples delayed because L1 was busy.
    pub delayed: u64,
    /// L1 counts as busy for a sample before this cycle: another core's access holds the
    /// sampled core's L1 port (set by the tile before the sampled core runs).
    pub l1_busy_until: u64,
}

impl Daisychain {
    /// Whether `addr` is one of the daisychain's registers.
    pub fn owns(addr: u32) -> bool {
        matches!(
            addr & !3,
            mmio::DBG_BUS_CNTL
                | mmio::DBG_L1_MEM_REG0
                | mmio::DBG_L1_MEM_REG1
                | mmio::DBG_L1_MEM_REG2
                | mmio::DBG_RD_DATA
        )
    }

    /// A register read (no side effects).
    pub fn read(&self, addr: u32) -> u32 {
        match addr & !3 {
            mmio::DBG_BUS_CNTL => self.cntl,
            mmio::DBG_L1_MEM_REG0 => self.reg0,
            mmio::DBG_L1_MEM_REG1 => self.reg1,
            mmio::DBG_L1_MEM_REG2 => self.reg2,
            _ => {
                let sel = (self.cntl >> dc::READ32_SEL_SHIFT) & 3;
                self.presented()
                    .map_or(self.last[sel as usize], |w| w[sel as usize])
            }
        }
    }

    /// A register write at tile cycle `at` (`None`: the tile is idle, between runs); a
    /// single write goes to `sink` (an L1 slot, 16-byte aligned), whose error is returned.
    pub fn write(
        &mut self,
        addr: u32,
        value: u32,
        at: Option<u64>,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), String> {
        match addr & !3 {
            mmio::DBG_BUS_CNTL => self.cntl = value,
            mmio::DBG_L1_MEM_REG0 => self.reg0 = value,
            mmio::DBG_L1_MEM_REG1 => self.reg1 = value,
            mmio::DBG_L1_MEM_REG2 => {
                let old = self.reg2;
                self.reg2 = value;
                let mode = value & 0xF;
                let rising = value & dc::TRIGGER != 0 && old & dc::TRIGGER == 0;
                if old & 0xF == dc::MODE_PREPARE {
                    // Leaving "prepare": REG0 (written meanwhile) is the next slot.
                    self.slot = self.reg0;
                }
                match mode {
                    dc::MODE_PREPARE => self.sampling = None,
                    dc::MODE_SAME | dc::MODE_NEXT if rising => {
                        let words = self.last;
                        self.store(sink, words)?;
                        if mode == dc::MODE_SAME {
                            self.slot = self.slot.wrapping_sub(1);
                        }
                    }
                    dc::MODE_SAMPLE if rising => {
                        let interval = ((value >> dc::INTERVAL_SHIFT) & 0xFF) as u64 + 1;
                        let left = self.reg1.wrapping_sub(self.reg0) & 0xFFFF;
                        self.slot = self.reg0;
                        self.sampling = (left > 0).then_some(Sampling {
                            next_at: at.map(|t| t + interval),
                            interval,
                            left,
                            fresh: true,
                        });
                    }
                    _ => {}
                }
            }
            _ => {} // DBG_RD_DATA: a write only orders the core's accesses
        }
        Ok(())
    }

    /// The core whose state sampling presents, if sampling is armed on one.
    pub fn sampled(&self) -> Option<Risc> {
        self.sampling?;
        self.selected()
    }

    fn selected(&self) -> Option<Risc> {
        if self.cntl & dc::ENABLED == 0 || (self.cntl >> dc::DAISY_SEL_SHIFT) & 0xFF != 7 {
            return None;
        }
        let sig = self.cntl & 0xFFFF;
        Risc::ALL
            .into_iter()
            .find(|&r| dc::group_a(r) == sig || dc::group_d(r) == Some(sig))
    }

    /// A run starts at `start`: sampling armed while the tile was idle starts now.
    pub fn run_start(&mut self, start: u64) {
        if let Some(s) = self.sampling.as_mut() {
            if s.next_at.is_none() {
                s.next_at = Some(start + s.interval);
            }
        }
    }

    /// The 128 bits presented while the selected core is in `span`, or `None` when the
    /// selection is not one the model computes from a span (self-test, other groups).
    fn presented(&self) -> Option<[u32; 4]> {
        if self.cntl & dc::ENABLED == 0 {
            return Some([0; 4]);
        }
        let sig = self.cntl & 0xFFFF;
        let daisy = (self.cntl >> dc::DAISY_SEL_SHIFT) & 0xFF;
        if sig == dc::SIGNAL_SELF_TEST {
            return Some([daisy, 0xA5A5_A5A5, 0x5A5A_5A5A, 0xA5A5_A5A5]);
        }
        self.selected().is_none().then_some([0; 4])
    }

    /// The TRISC whose group D is selected, if one is.
    pub fn group_d_selected(&self) -> Option<Risc> {
        let r = self.selected()?;
        (dc::group_d(r) == Some(self.cntl & 0xFFFF)).then_some(r)
    }

    /// The 128 bits of the selected group at cycle `t` of `span` (`d`: group D's state,
    /// when group D is selected).
    fn sample_at(&self, span: &Span, t: u64, d: &GroupD) -> [u32; 4] {
        if let Some(w) = self.presented() {
            return w;
        }
        let sig = self.cntl & 0xFFFF;
        let waiting = span
            .access
            .filter(|_| (span.access_from..span.access_until).contains(&t));
        let issuing = span.pc != 0 && t >= span.issue_from;
        if Risc::ALL.iter().any(|&r| dc::group_a(r) == sig) {
            let mut w = [0u32; 4];
            w[0] = (span.pc & 0x7FFF_FFFF) | if issuing { dc::A_RETIRING } else { 0 };
            if let Some((addr, write)) = waiting {
                w[1] = (addr & 0x3FFF_FFFF)
                    | if write {
                        dc::A_LSU_WRITE
                    } else {
                        dc::A_LSU_READ
                    };
            }
            w[2] = span.pc & 0x3FFF_FFFF;
            return w;
        }
        // Group D of a TRISC: the state, and the core's wait bits from its span.
        let mut w = d.words();
        if let Some((addr, false)) = waiting {
            let word = addr & 0xFFFF;
            let pcbuf = matches!(addr & !0xFFFF, mmio::PC_BUF_BASE);
            if pcbuf && word == 0 {
                w[0] |= dc::D_PCBUF_WAIT;
            } else if pcbuf && word < 0x20 {
                w[0] |= dc::D_TTSYNC_WAIT;
            }
        }
        w
    }

    fn store(&mut self, sink: &mut UnitSink<'_>, words: [u32; 4]) -> Result<(), String> {
        let addr = (self.slot & 0xFFFF) * dc::SAMPLE_BYTES;
        self.slot = self.slot.wrapping_add(1);
        sink(addr, words)
    }

    /// The selected core spent cycles `from..to` in `span`: takes the samples due in them
    /// (after those due earlier, while it did not run, which show it idle).
    pub fn observe(
        &mut self,
        span: &Span,
        from: u64,
        to: u64,
        d: &GroupD,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), String> {
        if let Some(s) = self.sampling.as_mut().filter(|s| s.fresh) {
            s.fresh = false;
            // The host armed sampling at the tile's window end, but the core had already
            // run past it (cores stop at control transfers only): the cycles in between are
            // behind the model, so the samples start one interval after the core's clock
            // instead of showing those cycles idle (which lost a window's first samples of
            // straight-line code, about 7 cycles a window, and so over-weighted wait loops).
            if span.pc != 0 && s.next_at.is_some_and(|t| t <= from) {
                s.next_at = Some(from + s.interval);
            }
        }
        self.take(&Span::default(), from, d, sink)?;
        self.take(span, to, d, sink)
    }

    /// The selected core ran nothing until `to` (in reset, halted, or not observed).
    #[cfg(test)]
    pub fn idle_until(&mut self, to: u64, sink: &mut UnitSink<'_>) -> Result<(), String> {
        self.take(&Span::default(), to, &GroupD::default(), sink)
    }

    fn take(
        &mut self,
        span: &Span,
        to: u64,
        d: &GroupD,
        sink: &mut UnitSink<'_>,
    ) -> Result<(), String> {
        while let Some(s) = self.sampling {
            let Some(t) = s.next_at.filter(|&t| t < to) else {
                return Ok(());
            };
            let s = self.sampling.as_mut().expect("checked above");
            s.next_at = Some(t + s.interval);
            // Contention: another core holds the port while the sampled core waits for it.
            let waiting =
                span.access.is_some() && (span.access_from..span.access_until).contains(&t);
            if waiting && t < self.l1_busy_until {
                self.delayed += 1;
                continue;
            }
            s.left -= 1;
            if s.left == 0 {
                self.sampling = None;
            }
            let words = self.sample_at(span, t, d);
            self.last = words;
            self.store(sink, words)?;
            self.taken += 1;
        }
        Ok(())
    }
}

/// The span of one interpreted instruction of the sampled core, from the interpreter's
/// notes ([`Marks`], clamped as [`crate::isa::lines`] clamps them).
pub(crate) fn span_of(pc: u32, from: u64, to: u64, m: &Marks) -> Span {
    let fetched = m.fetched.clamp(from, to);
    let operands = m.operands.clamp(fetched, to);
    let issued = m.issued.clamp(operands, to);
    Span {
        pc,
        issue_from: issued,
        access_from: operands,
        access_until: issued,
        access: m.access,
    }
}

/// The registers as the tile's cores reach them.
impl TileDevice for Daisychain {
    fn name(&self) -> &'static str {
        "debug daisychain"
    }

    fn read(&mut self, a: &Access, _: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        Ok(Daisychain::read(self, a.word()))
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        Daisychain::write(self, a.word(), word, Some(a.time), cx.unit)
            .map_err(FaultKind::Daisychain)
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::L1;

    /// 1 MiB of L1 in `buf` and a sink into it.
    fn l1_of(buf: &mut [u128]) -> L1 {
        // SAFETY: `buf` outlives the test's uses and is 16-byte aligned.
        unsafe { L1::new(buf.as_mut_ptr() as *mut u8, (buf.len() * 16) as u32) }
    }

    fn sink(l1: &L1) -> impl FnMut(u32, [u32; 4]) -> Result<(), String> + '_ {
        |a, w| {
            l1.store16(a, w);
            Ok(())
        }
    }

    fn arm(d: &mut Daisychain, l1: &L1, risc: Risc, first: u32, c: u32, n: u32, at: Option<u64>) {
        let mut s = sink(l1);
        d.write(
            mmio::DBG_BUS_CNTL,
            dc::ENABLED | dc::DAISY_RISCV << dc::DAISY_SEL_SHIFT | dc::group_a(risc),
            at,
            &mut s,
        )
        .unwrap();
        d.write(mmio::DBG_L1_MEM_REG2, dc::MODE_PREPARE, at, &mut s)
            .unwrap();
        d.write(mmio::DBG_L1_MEM_REG0, first >> 4, at, &mut s)
            .unwrap();
        d.write(mmio::DBG_L1_MEM_REG1, (first >> 4) + c, at, &mut s)
            .unwrap();
        d.write(
            mmio::DBG_L1_MEM_REG2,
            dc::MODE_SAMPLE | (n - 1) << dc::INTERVAL_SHIFT | dc::TRIGGER,
            at,
            &mut s,
        )
        .unwrap();
    }

    fn words(l1: &L1, addr: u32) -> [u32; 4] {
        [0, 4, 8, 12].map(|o| l1.load::<4>(addr + o))
    }

    #[test]
    fn c_samples_every_n_cycles_into_consecutive_slots() {
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut d = Daisychain::default();
        arm(&mut d, &l1, Risc::Trisc1, 0x8000, 3, 10, Some(100));
        assert_eq!(d.sampled(), Some(Risc::Trisc1));
        let span = Span {
            pc: 0x6000,
            issue_from: 115,
            ..Span::default()
        };
        // Due at 110, 120, 130: 110 is a stall, 120 an issue cycle; 130 is past the span.
        d.observe(&span, 105, 125, &GroupD::default(), &mut sink(&l1))
            .unwrap();
        assert_eq!(d.taken, 2);
        assert_eq!(words(&l1, 0x8000), [0x6000, 0, 0x6000, 0]);
        assert_eq!(words(&l1, 0x8010)[0], 0x6000 | dc::A_RETIRING);
        d.idle_until(u64::MAX, &mut sink(&l1)).unwrap();
        assert_eq!(d.taken, 3, "c samples in all");
        assert_eq!(words(&l1, 0x8020), [0; 4], "the idle core after the run");
        assert_eq!(d.sampled(), None, "done after c");
        d.observe(&span, 200, 300, &GroupD::default(), &mut sink(&l1))
            .unwrap();
        assert_eq!(d.taken, 3);
        assert_eq!(words(&l1, 0x8030), [0; 4], "nothing past c");
    }

    #[test]
    fn a_busy_l1_delays_a_sample_by_n_and_c_still_holds() {
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut d = Daisychain::default();
        arm(&mut d, &l1, Risc::Brisc, 0x100, 2, 4, Some(0));
        let span = Span {
            pc: 0x800,
            access: Some((0x5000, true)),
            access_from: 0,
            access_until: 5,
            ..Span::default()
        };
        d.l1_busy_until = 6;
        d.observe(&span, 0, 10, &GroupD::default(), &mut sink(&l1))
            .unwrap(); // due at 4 (busy), 8 (taken)
        assert_eq!((d.taken, d.delayed), (1, 1));
        d.observe(&span, 10, 20, &GroupD::default(), &mut sink(&l1))
            .unwrap(); // due at 12
        assert_eq!((d.taken, d.delayed), (2, 1));
        assert_eq!(words(&l1, 0x110)[0], 0x800 | dc::A_RETIRING);
    }

    #[test]
    fn a_core_past_the_arming_is_sampled_from_its_own_clock() {
        // Armed at cycle 100 (the tile's window end), the core's next instruction starts at
        // 110: no sample shows it idle, the first is due at 110 + 4.
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut d = Daisychain::default();
        arm(&mut d, &l1, Risc::Brisc, 0x200, 3, 4, Some(100));
        let span = Span {
            pc: 0x6000,
            ..Span::default()
        };
        d.observe(&span, 110, 124, &GroupD::default(), &mut sink(&l1))
            .unwrap();
        assert_eq!(d.taken, 3);
        for slot in 0..3 {
            assert_eq!(words(&l1, 0x200 + 16 * slot)[0], 0x6000 | dc::A_RETIRING);
        }
    }

    #[test]
    fn armed_between_runs_starts_with_the_run_and_gaps_are_idle() {
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut d = Daisychain::default();
        arm(&mut d, &l1, Risc::Ncrisc, 0x200, 4, 2, None);
        let span = Span {
            pc: 0x12000,
            access: Some((0xFFEC_0000, false)),
            access_until: 1000,
            ..Span::default()
        };
        d.observe(&span, 0, 1000, &GroupD::default(), &mut sink(&l1))
            .unwrap();
        assert_eq!(d.taken, 0, "not started yet");
        d.run_start(1000);
        d.observe(&span, 1003, 1010, &GroupD::default(), &mut sink(&l1))
            .unwrap(); // due 1002 (idle), 1004, 1006, 1008
        assert_eq!(d.taken, 4);
        assert_eq!(words(&l1, 0x200), [0; 4]);
        let w = words(&l1, 0x210);
        assert_eq!(w[0], 0x12000 | dc::A_RETIRING);
        assert_eq!(w[1], 0, "the access is over");
    }

    #[test]
    fn single_writes_self_test_and_read_data() {
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut d = Daisychain::default();
        let cntl = dc::ENABLED | 7 << dc::DAISY_SEL_SHIFT | dc::SIGNAL_SELF_TEST;
        d.write(mmio::DBG_BUS_CNTL, cntl, None, &mut sink(&l1))
            .unwrap();
        assert_eq!(d.read(mmio::DBG_RD_DATA), 7);
        d.write(
            mmio::DBG_BUS_CNTL,
            cntl | 2 << dc::READ32_SEL_SHIFT,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        assert_eq!(d.read(mmio::DBG_RD_DATA), 0x5A5A_5A5A);
        assert_eq!(d.read(mmio::DBG_BUS_CNTL), cntl | 2 << dc::READ32_SEL_SHIFT);
        // Group D of T2 while waiting on its PCBuf.
        d.write(
            mmio::DBG_BUS_CNTL,
            dc::ENABLED | 7 << dc::DAISY_SEL_SHIFT | 23,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        let span = Span {
            pc: 0xE000,
            access: Some((mmio::PC_BUF_BASE, false)),
            access_until: 50,
            ..Span::default()
        };
        let waiting = dc::D_PCBUF_WAIT | dc::D_PCBUF_EMPTY;
        assert_eq!(d.sample_at(&span, 10, &GroupD::default())[0], waiting);
        assert_eq!(
            d.sample_at(&span, 60, &GroupD::default())[0],
            dc::D_PCBUF_EMPTY
        );
        d.last = d.sample_at(&span, 10, &GroupD::default());
        d.write(
            mmio::DBG_L1_MEM_REG2,
            dc::MODE_PREPARE,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        d.write(mmio::DBG_L1_MEM_REG0, 0x40, None, &mut sink(&l1))
            .unwrap();
        d.write(mmio::DBG_L1_MEM_REG2, dc::MODE_NEXT, None, &mut sink(&l1))
            .unwrap();
        d.write(
            mmio::DBG_L1_MEM_REG2,
            dc::MODE_NEXT | dc::TRIGGER,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        d.write(mmio::DBG_L1_MEM_REG2, dc::MODE_NEXT, None, &mut sink(&l1))
            .unwrap();
        d.write(
            mmio::DBG_L1_MEM_REG2,
            dc::MODE_NEXT | dc::TRIGGER,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        assert_eq!(words(&l1, 0x400)[0], waiting);
        assert_eq!(words(&l1, 0x410)[0], waiting, "mode 1: the next slot");
        // Disabled: zeros.
        d.write(mmio::DBG_BUS_CNTL, 0, None, &mut sink(&l1))
            .unwrap();
        assert_eq!(d.read(mmio::DBG_RD_DATA), 0);
    }

    #[test]
    fn group_d_presents_the_pcbuf_the_mop_expander_and_the_coprocessor() {
        let mop = 0x0180_0000; // MOP, template 1
        let d = GroupD {
            pcbuf_head: Some(0xABCD_E000),
            pcbuf_full: true,
            tensix: crate::tensix::DebugState {
                mop_busy: true,
                in_flight: true,
                template: Some(1),
                mop_word: Some(mop),
                fifo1_busy: true,
                fifo1_full: true,
                ..Default::default()
            },
        };
        let w = d.words();
        assert_eq!(
            w[0] & 0x7F_FFFF,
            0xABCD_E000 >> 9,
            "PCBuf head, high 23 bits"
        );
        assert_eq!(
            w[0] & !0x7F_FFFF,
            dc::D_PCBUF_FULL | dc::D_MOP_BUSY | dc::D_COPROCESSOR_BUSY
        );
        assert_eq!(w[1], 0);
        assert_eq!(
            w[2] & (dc::D2_TEMPLATE0 | dc::D2_TEMPLATE1),
            dc::D2_TEMPLATE1
        );
        // Bits 86..117 hold the MOP: reassemble them.
        let got = (w[2] >> 22) | (w[3] << 10);
        assert_eq!(got, mop);
        assert_eq!(
            w[3] & (dc::D3_FIFO_BUSY | dc::D3_FIFO_FULL),
            dc::D3_FIFO_BUSY | dc::D3_FIFO_FULL
        );
        let idle = GroupD::default().words();
        assert_eq!(idle, [dc::D_PCBUF_EMPTY, 0, 0, 0]);

        // Selected and sampled while the TRISC waits on TTSync: the state and bit 30.
        let mut buf = vec![0u128; 0x1_0000];
        let l1 = l1_of(&mut buf);
        let mut x = Daisychain::default();
        x.write(
            mmio::DBG_BUS_CNTL,
            dc::ENABLED | dc::DAISY_RISCV << dc::DAISY_SEL_SHIFT | 21,
            None,
            &mut sink(&l1),
        )
        .unwrap();
        assert_eq!(x.group_d_selected(), Some(Risc::Trisc1));
        let span = Span {
            pc: 0x7000,
            access: Some((mmio::PC_BUF_BASE + 4, false)),
            access_until: 50,
            ..Span::default()
        };
        let s = x.sample_at(&span, 10, &d);
        assert_eq!(s[0], w[0] | dc::D_TTSYNC_WAIT);
        assert_eq!(s[1..], w[1..]);
    }
}
