//! Tensix's performance counter registers (`RISCV_DEBUG_REG_PERF_CNT_*`, tt-metal's
//! `tensix.h`; what they count: `tt_metal/tt-llk/docs/performance_counters/
//! hardware_reference.md` in the `ttnn` wheel, summarised in docs/design/perf-counters.md).
//!
//! Five banks (INSTRN_THREAD, TDMA_UNPACK, FPU, L1, TDMA_PACK), each three registers: the
//! reference period, the mode (bits 0-7: 0 continuous, 1 stop after the period, 2
//! continuous without the reference count; bits 8 up: the counter select; bit 16: the
//! grant side), and start/stop (a rising edge of bit 0 clears and starts the bank, of bit 1
//! stops it). `PERF_CNT_ALL` starts and stops INSTRN_THREAD and FPU together. Each bank's
//! `OUT_L` reads the cycles counted, `OUT_H` the selected counter, both the low 32 bits.
//! TDMA_UNPACK and TDMA_PACK select from one readout (the unpack signals at selects 0-10,
//! the pack ones from 11), each over its own start and stop.
//!
//! Every counter reads a signal the coprocessor model keeps ([`crate::tensix::perf`]).
//! A counter the model cannot derive is refused by name when read ([`FaultKind::PerfCounter`]),
//! never read as zero: the L1 port counters (the model has no L1 ports or arbitration),
//! the unpackers' `SrcA`/`SrcB` write-port and thread-id counters, the packers' `Dst` read
//! requests and grants, per-packer busy (the model times the four packers as one), the
//! math pipeline's data-ready, hazard and scoreboard counters. So is a select that names
//! no counter on the arch (tt-llk's tables list the live ones), and a mode above 2.

use super::{Access, Ctx, TileDevice};
use crate::error::FaultKind;
use crate::tensix::perf::{self as sig, SIGNALS};
use crate::tensix::Tensix;
use riscv_linker::{mmio, Arch};

/// The five banks, in register order.
pub const BANKS: [&str; 5] = ["INSTRN_THREAD", "TDMA_UNPACK", "FPU", "L1", "TDMA_PACK"];
const INSTRN: usize = 0;
const UNPACK: usize = 1;
const FPU: usize = 2;
const L1: usize = 3;
const PACK: usize = 4;

/// The address of bank `b`'s first control register (reference period; mode and
/// start/stop follow).
pub(crate) const fn control(b: usize) -> u32 {
    mmio::DEBUG_REGS_BASE
        + match b {
            INSTRN => 0x000,
            UNPACK => 0x00C,
            FPU => 0x018,
            L1 => 0x030,
            _ => 0x0F0,
        }
}

/// The address of bank `b`'s `OUT_L` (`OUT_H` follows).
pub(crate) const fn output(b: usize) -> u32 {
    mmio::DEBUG_REGS_BASE
        + match b {
            INSTRN => 0x100,
            UNPACK => 0x108,
            PACK => 0x110,
            L1 => 0x118,
            _ => 0x120,
        }
}

/// `RISCV_DEBUG_REG_PERF_CNT_ALL`.
pub(crate) const ALL: u32 = mmio::DEBUG_REGS_BASE + 0x03C;
/// `RISCV_DEBUG_REG_PERF_CNT_MUX_CTRL` (the L1 bank's port group).
pub(crate) const MUX_CTRL: u32 = mmio::DEBUG_REGS_BASE + 0x218;

/// What a counter select reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A signal of [`crate::tensix::perf`].
    Signal(usize),
    /// A counter the model cannot derive: its name, and why.
    Refused(&'static str, &'static str),
    /// No counter at this select on the arch.
    Nothing,
}

const NO_PORTS: &str = "the emulator does not model L1's ports and their arbitration";
const NO_WRITE_PORT: &str = "the model does not time SrcA/SrcB write ports";
const ONE_PACKER: &str = "the model times the four packers as one unit";
const NO_DEST_PORT: &str = "the model does not time Dst's read and write ports";
const NO_MATH_PIPE: &str =
    "the model issues Matrix Unit instructions without a pipeline of operand checks";

/// The counter at select `sel` (grant selects are 256 up) of bank `bank` on `arch`.
pub(crate) fn source(arch: Arch, bank: usize, sel: u32) -> Source {
    use Source::*;
    let bh = arch == Arch::Blackhole;
    match bank {
        FPU => match sel {
            0 => Signal(sig::FPU),
            1 => Signal(sig::SFPU),
            257 => Signal(sig::MATH),
            _ => Nothing,
        },
        INSTRN => instrn(bh, sel),
        UNPACK | PACK => tdma(bh, sel),
        _ => {
            if sel < 8 || (256..264).contains(&sel) {
                Refused("an L1 port counter", NO_PORTS)
            } else {
                Nothing
            }
        }
    }
}

fn instrn(bh: bool, sel: u32) -> Source {
    use Source::*;
    // Availability selects: CFG, SYNC, THCON, (XSEARCH: none), MOVE, MATH, UNPACK, PACK.
    const BASE: [u32; sig::CLASSES] = [0, 3, 6, 12, 15, 18, 21];
    if let Some(class) = BASE.iter().position(|&b| (b..b + 3).contains(&sel)) {
        return Signal(sig::available(class, (sel - BASE[class]) as usize));
    }
    // Wormhole repeats each shared wait on three selects, Blackhole has one.
    let (shared_per, waits_from) = if bh { (1, 31) } else { (3, 39) };
    match sel {
        24..=26 => Signal(sig::stall(sel as usize - 24)),
        256 => Signal(sig::issued(0)),
        264 => Signal(sig::issued(1)),
        272 => Signal(sig::issued(2)),
        283 => Signal(sig::ANY_STALL),
        s if s >= 27 && s < waits_from => Signal(sig::shared(((s - 27) / shared_per) as usize)),
        s if s >= waits_from && s < waits_from + 27 => {
            let i = (s - waits_from) as usize;
            Signal(sig::wait(i % sig::WAITS, i / sig::WAITS))
        }
        _ => Nothing,
    }
}

fn tdma(bh: bool, sel: u32) -> Source {
    use Source::*;
    let wh_only = |s: Source| if bh { Nothing } else { s };
    match sel {
        0 => Refused("MATH_SRC_DATA_READY", NO_MATH_PIPE),
        1 => Refused("MATH_NOT_D2S_STALLED", NO_MATH_PIPE),
        3 => Signal(sig::MATH_STARTED),
        4 => Signal(sig::MATH_AVAILABLE),
        5 => Refused("SRCB_WRITE_REQ", NO_WRITE_PORT),
        6 => Refused("SRCA_WRITE_REQ", NO_WRITE_PORT),
        7 => Signal(sig::unpack_busy(0, 0)),
        8 => Signal(sig::unpack_busy(1, 0)),
        9 => Signal(sig::unpack_busy(0, 1)),
        10 => Signal(sig::unpack_busy(1, 1)),
        11 => Refused("PACKER0_DEST_READ_REQ", NO_DEST_PORT),
        12..=14 => wh_only(Refused("PACKER_DEST_READ_1..3", NO_DEST_PORT)),
        15..=17 => wh_only(Refused("PACKER_BUSY_0..2", ONE_PACKER)),
        18 => Signal(sig::PACKER_BUSY),
        259..=262 => Refused("SRCA/SRCB_WRITE_NOT_BLOCKED_*", NO_WRITE_PORT),
        263..=266 => Refused("SRCA/SRCB_WRITE_TID_*", NO_WRITE_PORT),
        267 => Refused("DEST_READ_GRANTED_0", NO_DEST_PORT),
        268..=270 => wh_only(Refused("DEST_READ_GRANTED_1..3", NO_DEST_PORT)),
        271 => Refused("MATH_NOT_STALLED_DEST_WR_PORT", NO_DEST_PORT),
        272 => Refused("MATH_NOT_SCOREBOARD_STALLED", NO_MATH_PIPE),
        _ => Nothing,
    }
}

/// What select `sel` (256 up: the grant side) of bank `bank` (a name of [`BANKS`]) counts
/// in the emulator on `arch`: the counter's name as tt-llk spells it, or why the emulator
/// refuses it (the same words a kernel's read would stop with).
pub fn describe(arch: Arch, bank: &str, sel: u32) -> Result<String, String> {
    let b = BANKS
        .iter()
        .position(|&n| n == bank)
        .ok_or_else(|| format!("no counter bank {bank:?} (banks: {})", BANKS.join(", ")))?;
    match source(arch, b, sel) {
        Source::Signal(i) => Ok(sig::name(i)),
        Source::Refused(name, why) => Err(format!(
            "counter {name} (select {sel}) is not modelled: {why}"
        )),
        Source::Nothing => Err(format!("select {sel} names no counter on {arch}")),
    }
}

/// Bits of the mode register's select on `arch` (FPU 1, L1 3, TDMA 5, INSTRN_THREAD 7 on
/// Wormhole and 6 on Blackhole).
fn select_bits(arch: Arch, bank: usize) -> u32 {
    match bank {
        FPU => 1,
        L1 => 3,
        INSTRN if arch == Arch::Blackhole => 6,
        INSTRN => 7,
        _ => 5,
    }
}

/// One bank: its registers, and the signal totals and cycle at its start and stop.
#[derive(Clone, Debug, Default)]
struct Bank {
    period: u32,
    mode: u32,
    control: u32,
    start: Option<(u64, Box<[u64; SIGNALS]>)>,
    stop: Option<(u64, Box<[u64; SIGNALS]>)>,
}

/// The counter registers of one tile.
#[derive(Debug)]
pub(crate) struct PerfCounters {
    pub arch: Arch,
    /// Banks a host armed between runs, `(bank, select)`: started at the next run's start.
    pub pending: Vec<(usize, u32)>,
    /// Why starting them failed (the coprocessor faulted catching up to the run's start):
    /// the host's next read reports it.
    failed: Option<FaultKind>,
    banks: [Bank; 5],
    all: u32,
    mux: u32,
}

impl Default for PerfCounters {
    fn default() -> Self {
        PerfCounters {
            arch: Arch::WormholeB0,
            pending: Vec::new(),
            failed: None,
            banks: Default::default(),
            all: 0,
            mux: 0,
        }
    }
}

/// The register at `addr`: (bank, 0 period / 1 mode / 2 control / 3 OUT_L / 4 OUT_H).
fn register(addr: u32) -> Option<(usize, u32)> {
    (0..5).find_map(|b| {
        let c = addr.wrapping_sub(control(b)) / 4;
        let o = addr.wrapping_sub(output(b)) / 4;
        if addr >= control(b) && c < 3 {
            Some((b, c))
        } else if addr >= output(b) && o < 2 {
            Some((b, 3 + o))
        } else {
            None
        }
    })
}

impl PerfCounters {
    fn refuse(&self, b: usize, what: String) -> FaultKind {
        FaultKind::PerfCounter(format!("{} bank: {what}", BANKS[b]))
    }

    /// The rising edges `rising` (bit 0 start, bit 1 stop) of bank `b`'s start/stop at `time`.
    fn edges(
        &mut self,
        b: usize,
        rising: u32,
        time: u64,
        cop: &mut Tensix,
    ) -> Result<(), FaultKind> {
        if rising & 3 == 0 {
            return Ok(());
        }
        cop.advance_to(time)?;
        if rising & 1 != 0 {
            let mode = self.banks[b].mode & 0xFF;
            if mode > 2 {
                return Err(self.refuse(
                    b,
                    format!("mode {mode} (documented: 0 continuous, 1 until the period, 2 continuous without the reference count)"),
                ));
            }
            cop.perf.on = true;
            cop.perf.frozen[b] = None;
            cop.perf.freeze_at[b] = (mode == 1).then(|| time + self.banks[b].period as u64);
            self.banks[b].start = Some((time, Box::new(cop.perf.totals)));
            self.banks[b].stop = None;
        }
        if rising & 2 != 0 && self.banks[b].start.is_some() && self.banks[b].stop.is_none() {
            self.banks[b].stop = Some((time, Box::new(cop.perf.totals)));
        }
        Ok(())
    }

    /// Bank `b`'s (cycles, totals) as of `time`: at its stop, its period's end, or now.
    fn window(
        &self,
        b: usize,
        time: u64,
        cop: &mut Tensix,
    ) -> Result<Option<(u64, [u64; SIGNALS])>, FaultKind> {
        let bank = &self.banks[b];
        let Some((t0, start)) = &bank.start else {
            return Ok(None);
        };
        cop.advance_to(time)?;
        let mode = bank.mode & 0xFF;
        let period_end = (mode == 1).then(|| t0 + bank.period as u64);
        let (t1, end) = match (&bank.stop, period_end) {
            (Some((s, _)), Some(p)) if p <= *s => (p, cop.perf.frozen[b].as_deref().copied()),
            (Some((s, totals)), _) => (*s, Some(**totals)),
            (None, Some(p)) if p <= time => (p, cop.perf.frozen[b].as_deref().copied()),
            (None, _) => (time, Some(cop.perf.totals)),
        };
        let end = end.unwrap_or(cop.perf.totals);
        let mut d = [0u64; SIGNALS];
        for i in 0..SIGNALS {
            d[i] = end[i].wrapping_sub(start[i]);
        }
        let cycles = if mode == 2 { 0 } else { t1.saturating_sub(*t0) };
        Ok(Some((cycles, d)))
    }

    /// The select bank `b`'s mode register names (256 up: the grant side).
    fn select(&self, b: usize) -> u32 {
        let mode = self.banks[b].mode;
        let bits = select_bits(self.arch, b);
        ((mode >> 8) & ((1 << bits) - 1)) | ((mode >> 16) & 1) << 8
    }

    /// Bank `b`'s cycles counted and selected counter at `time`, whole: (0, 0) for a bank
    /// never started (nothing measured); a counter the model cannot derive, in a started
    /// bank, is refused.
    fn value(&self, b: usize, time: u64, cop: &mut Tensix) -> Result<(u64, u64), FaultKind> {
        let Some((cycles, totals)) = self.window(b, time, cop)? else {
            return Ok((0, 0));
        };
        let sel = self.select(b);
        match source(self.arch, b, sel) {
            Source::Signal(i) => Ok((cycles, totals[i])),
            _ => Err(self.refuse(b, describe(self.arch, BANKS[b], sel).unwrap_err())),
        }
    }

    /// Sets bank `b` counting select `sel` (continuous mode) and starts it at `time`: what
    /// a host does before a launch (`ttprof run --counters`).
    pub fn arm(
        &mut self,
        b: usize,
        sel: u32,
        time: u64,
        cop: &mut Tensix,
    ) -> Result<(), FaultKind> {
        self.banks[b].mode = (sel & 0xFF) << 8 | (sel >> 8 & 1) << 16;
        self.banks[b].control = 1;
        self.edges(b, 1, time, cop)
    }

    /// Starts the banks a host armed ([`PerfCounters::pending`]) at `start`, the first
    /// cycle of a run: the host's stores land just before the launch.
    pub fn run_start(&mut self, start: u64, cop: &mut Tensix) {
        for (b, sel) in std::mem::take(&mut self.pending) {
            if let Err(k) = self.arm(b, sel, start, cop) {
                self.failed.get_or_insert(k);
            }
        }
    }

    /// Bank `b`'s (cycles, selected counter) at `time`, as a host reads `OUT_L` and `OUT_H`
    /// after a launch, but whole (64 bits).
    pub fn read_bank(
        &self,
        b: usize,
        time: u64,
        cop: &mut Tensix,
    ) -> Result<(u64, u64), FaultKind> {
        self.value(b, time, cop)
    }
}

impl TileDevice for PerfCounters {
    fn name(&self) -> &'static str {
        "performance counters"
    }

    fn read(&mut self, a: &Access, cx: &mut Ctx<'_>) -> Result<u32, FaultKind> {
        let w = a.word();
        if w == ALL {
            return Ok(self.all);
        }
        if w == MUX_CTRL {
            return Ok(self.mux);
        }
        match register(w) {
            Some((b, 0)) => Ok(self.banks[b].period),
            Some((b, 1)) => Ok(self.banks[b].mode),
            Some((b, 2)) => Ok(self.banks[b].control),
            Some((b, 3)) => Ok(self.value(b, a.time, cx.tensix)?.0 as u32),
            Some((b, _)) => Ok(self.value(b, a.time, cx.tensix)?.1 as u32),
            None => Ok(0),
        }
    }

    fn write(&mut self, a: &Access, word: u32, cx: &mut Ctx<'_>) -> Result<(), FaultKind> {
        let w = a.word();
        if w == ALL {
            // Its edges reach INSTRN_THREAD and FPU as their own would.
            let rising = word & !self.all;
            self.all = word;
            for b in [INSTRN, FPU] {
                self.edges(b, rising, a.time, cx.tensix)?;
            }
            return Ok(());
        }
        if w == MUX_CTRL {
            self.mux = word;
            return Ok(());
        }
        match register(w) {
            Some((b, 0)) => self.banks[b].period = word,
            Some((b, 1)) => self.banks[b].mode = word,
            Some((b, 2)) => {
                let rising = word & !self.banks[b].control;
                self.banks[b].control = word;
                self.edges(b, rising, a.time, cx.tensix)?;
            }
            // The outputs take no stores.
            _ => {}
        }
        Ok(())
    }

    fn merges(&self, _: u32, _: u32) -> Result<bool, FaultKind> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_sit_where_tensix_h_puts_them() {
        assert_eq!(register(0xFFB1_2000), Some((INSTRN, 0)));
        assert_eq!(register(0xFFB1_2014), Some((UNPACK, 2)));
        assert_eq!(register(0xFFB1_201C), Some((FPU, 1)));
        assert_eq!(register(0xFFB1_2038), Some((L1, 2)));
        assert_eq!(register(0xFFB1_20F0), Some((PACK, 0)));
        assert_eq!(register(0xFFB1_2104), Some((INSTRN, 4)));
        assert_eq!(register(0xFFB1_2110), Some((PACK, 3)));
        assert_eq!(register(0xFFB1_211C), Some((L1, 4)));
        assert_eq!(register(0xFFB1_2124), Some((FPU, 4)));
        assert_eq!(register(0xFFB1_2024), None);
    }

    #[test]
    fn selects_follow_each_arch() {
        let wh = Arch::WormholeB0;
        let bh = Arch::Blackhole;
        assert_eq!(
            source(wh, INSTRN, 16),
            Source::Signal(sig::available(sig::CLASS_MATH, 1))
        );
        assert_eq!(source(wh, INSTRN, 9), Source::Nothing, "XSEARCH");
        assert_eq!(
            source(wh, INSTRN, 34),
            Source::Signal(sig::shared(sig::SHARED_SRCA_VALID))
        );
        assert_eq!(
            source(bh, INSTRN, 29),
            Source::Signal(sig::shared(sig::SHARED_SRCA_VALID))
        );
        assert_eq!(
            source(wh, INSTRN, 52),
            Source::Signal(sig::wait(sig::WAIT_NONZERO_SEM, 1))
        );
        assert_eq!(
            source(bh, INSTRN, 44),
            Source::Signal(sig::wait(sig::WAIT_NONZERO_SEM, 1))
        );
        assert_eq!(
            source(wh, INSTRN, 64),
            Source::Signal(sig::wait(sig::WAIT_CFG, 2))
        );
        assert_eq!(
            source(wh, INSTRN, 47),
            Source::Signal(sig::wait(sig::WAIT_SFPU, 0))
        );
        assert_eq!(source(bh, INSTRN, 58), Source::Nothing);
        assert_eq!(
            source(wh, PACK, 16),
            Source::Refused("PACKER_BUSY_0..2", ONE_PACKER)
        );
        assert_eq!(source(bh, PACK, 16), Source::Nothing);
        assert!(matches!(source(wh, L1, 3), Source::Refused(..)));
        assert_eq!(
            source(wh, INSTRN, 39),
            Source::Signal(sig::wait(sig::WAIT_THCON, 0))
        );
        assert_eq!(
            source(bh, INSTRN, 37),
            Source::Signal(sig::wait(sig::WAIT_MOVE, 0))
        );
    }

    /// Our select tables against tt-llk's (`tools/include/perf_counters/wormhole.h`,
    /// `blackhole.h` in the `ttnn` wheel, when cached; CI has it): every counter they
    /// list is one we count under the same name or refuse by name, and every select we
    /// count is one they list (Wormhole's repeated shared waits aside).
    #[test]
    fn selects_match_tt_llks_tables() {
        let Some(root) = crate::tt_metal::tt_metal_root() else {
            return;
        };
        let dir = root.join("tt_metal/tt-llk/tools/include/perf_counters");
        if !dir.is_dir() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{} is missing (CI=true)",
                dir.display()
            );
            return;
        }
        for (arch, file) in [
            (Arch::WormholeB0, "wormhole.h"),
            (Arch::Blackhole, "blackhole.h"),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let mut bank = None;
            let mut listed = std::collections::BTreeSet::new();
            for line in text.lines() {
                if let Some(i) = line.find("_counters = {") {
                    let table = line[..i].rsplit(' ').next().unwrap();
                    bank = match table {
                        "fpu" => Some(FPU),
                        "unpack" => Some(UNPACK),
                        "pack" => Some(PACK),
                        "instrn" => Some(INSTRN),
                        _ => Some(L1),
                    };
                }
                let Some(at) = line.find("PerfCounterType::") else {
                    continue;
                };
                let rest = &line[at + 17..];
                let (name, sel) = rest.split_once(',').unwrap();
                let sel: u32 = sel
                    .trim()
                    .trim_end_matches(['}', ',', ';'])
                    .trim()
                    .parse()
                    .unwrap();
                let b = bank.unwrap();
                listed.insert((b, sel));
                match source(arch, b, sel) {
                    Source::Signal(i) => {
                        assert_eq!(sig::name(i), name, "{arch} {} select {sel}", BANKS[b])
                    }
                    Source::Refused(..) => {}
                    Source::Nothing => panic!(
                        "{arch} {} select {sel} ({name}) is neither counted nor refused",
                        BANKS[b]
                    ),
                }
            }
            assert!(listed.len() > 100, "{arch}: {} counters read", listed.len());
            for b in [INSTRN, FPU, UNPACK, PACK] {
                for sel in 0..512 {
                    if let Source::Signal(i) = source(arch, b, sel) {
                        let repeat =
                            arch == Arch::WormholeB0 && b == INSTRN && (27..39).contains(&sel);
                        let shared_bank = b == UNPACK || b == PACK;
                        let listed_here = listed.contains(&(b, sel))
                            || (shared_bank
                                && (listed.contains(&(UNPACK, sel))
                                    || listed.contains(&(PACK, sel))));
                        assert!(
                            listed_here || repeat,
                            "{arch} {} select {sel} ({}) is not in tt-llk's table",
                            BANKS[b],
                            sig::name(i)
                        );
                    }
                }
            }
        }
    }
}
