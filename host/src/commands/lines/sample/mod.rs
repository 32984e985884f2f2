//! The line profile, sampled the way a card can take it (`ttprof run --sample N`): each
//! tile's debug daisychain writes the pc of one core every `N` cycles into L1, the host
//! rotates the sampled core between windows and names the pcs as `--lines` does.
//!
//! Per window (the session's hook, every `count * N` cycles, and the launch's end) and
//! tile, `Sampler` reads what the daisychain wrote (module `daisy`), charges every sample
//! to the kernel of the core it sampled (or to "outside the kernel" when its pc is not in
//! that core's code: an idle or halted core) and arms the next core of the op on that tile.
//! The tiles sample different cores in each window, in a pseudo-random (deterministic;
//! `SEED_VAR` picks another draw) rotation, at a prime interval near `N` that changes per
//! window (`pick_interval`), so no period of the kernels lines up with the sampling.
//!
//! A line's share of its kernel is `k` of the kernel's `n` samples, with a 95 % interval
//! ([`interval`]: the wider of the binomial one and the spread between windows); the report
//! adds up the launches of the same op and kernel. With `--lines` too, the report sets each
//! share beside the exact one (`Agreement`). Each sample is timed from its window's start
//! (the caller's [`SampleClock`]) and split by the innermost zone open at that time (module
//! `zones`, [`SampleProfile::split_by_zones`]). Files (module `report` and the `--lines` writers):
//! `ttprof_samples.txt`, `ttprof_samples.folded`, `ttprof_samples_flame.svg`,
//! `ttprof_samples.parquet` (the `--lines` table with a `samples` column).

pub(crate) mod daisy;
mod keep;
mod live;
mod report;
mod zones;

use super::{Flavour, KernelKey, LineProfile, CAUSES};
use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::util::mix::mix;
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use daisy::Buffer;
pub(crate) use keep::{Clusters, TimedKeep};
pub use live::{LiveCounts, LiveSampler};
pub(crate) use report::Agreement;

/// The report.
pub(crate) const SAMPLES_FILE: &str = "ttprof_samples.txt";
/// Folded stacks of the samples.
pub(crate) const SAMPLES_FOLDED_FILE: &str = "ttprof_samples.folded";
/// Their flame graph.
pub(crate) const SAMPLES_FLAME_FILE: &str = "ttprof_samples_flame.svg";
/// One row per pc and sampled cause.
pub(crate) const SAMPLES_PARQUET_FILE: &str = "ttprof_samples.parquet";

/// What a sample says the core was doing (group A's bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SampledCause {
    /// Bit 31: the instruction is retiring (`--lines`: issue, mispredict).
    Retiring,
    /// Not retiring, no memory request pending (`--lines`: load-use, icache-miss).
    Stalled,
    /// The load/store unit waits to emit a request to L1 (`--lines`: store-port).
    LsuWait,
    /// ... to a register or FIFO (`--lines`: fifo-wait, store-port on a register).
    FifoWait,
    /// A TRISC's store to its Tensix instruction FIFO waits (`--lines`: tensix-fifo).
    TensixFifo,
    /// A TRISC's TTSync read waits (`--lines`: ttsync).
    TtSync,
}

impl SampledCause {
    /// The index the cause is counted under (the `--lines` cause it stands for).
    pub(crate) const fn index(self) -> usize {
        match self {
            SampledCause::Retiring => ttprof_emu::Cause::Issue as usize,
            SampledCause::Stalled => ttprof_emu::Cause::LoadUse as usize,
            SampledCause::LsuWait => ttprof_emu::Cause::StorePort as usize,
            SampledCause::FifoWait => ttprof_emu::Cause::FifoWait as usize,
            SampledCause::TensixFifo => ttprof_emu::lines::BASE_CAUSES,
            SampledCause::TtSync => ttprof_emu::lines::BASE_CAUSES + 1,
        }
    }
}

/// The name of sampled cause index `i` in the files.
pub(crate) fn sampled_cause_name(i: usize) -> &'static str {
    match i {
        0 => "retiring",
        1 => "stalled",
        2 => "lsu-wait",
        5 => "fifo-wait",
        6 => "tensix-fifo",
        7 => "ttsync",
        _ => "?",
    }
}

const SAMPLED: Flavour = Flavour {
    count: "samples",
    cause: sampled_cause_name,
    title: "ttprof --sample: debug daisychain samples",
};

/// Samples per window and tile by default: short windows (16 N cycles) give many
/// independent windows per kernel, which is what the shares' accuracy depends on
/// (docs/design/sampled-lines.md).
pub const DEFAULT_COUNT: u32 = 16;

/// How to sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleConfig {
    /// `N`: a sample every `N` cycles (2..=256), a prime near it per window.
    pub interval: u32,
    /// Each tile's buffer: where and how many samples per window.
    pub buffer: Buffer,
}

impl SampleConfig {
    /// Default: [`DEFAULT_COUNT`] slots per tile at 0xFF000 (the top 4 KiB below 1 MiB).
    pub fn new(interval: u32) -> SampleConfig {
        SampleConfig {
            interval,
            buffer: Buffer {
                addr: 0xF_F000,
                count: DEFAULT_COUNT,
            },
        }
    }

    /// Checks the interval and the buffer.
    pub fn check(&self) -> std::result::Result<(), String> {
        if !riscv_linker::mmio::daisychain::INTERVALS.contains(&self.interval) {
            return Err(format!(
                "--sample {}: the daisychain samples every 2..=256 cycles",
                self.interval
            ));
        }
        self.buffer.check(riscv_linker::USER_L1_BASE)
    }

    /// Cycles of one window: the buffer fills in about this long.
    pub(crate) fn window_cycles(&self) -> u64 {
        self.buffer.count as u64 * self.interval as u64
    }
}

/// What the samples of one kernel (in one op) say.
#[derive(Clone, Debug, Default)]
pub struct SampledKernel {
    /// Samples inside the kernel, per pc and sampled cause (index `SampledCause::index`).
    pub(crate) pcs: BTreeMap<u32, [u64; CAUSES]>,
    /// Samples inside the kernel.
    pub samples: u64,
    /// Samples whose pc was outside the kernel's code (the core idle or halted).
    pub outside: u64,
    /// Windows that sampled it.
    pub windows: u32,
    /// Sum of the intervals of its samples inside the kernel (estimated cycles).
    pub cycles: u64,
    /// Its samples inside the kernel by pc, per window or group of consecutive windows
    /// (for the between-window spread of a share, [`interval`]; bounded, module `keep`).
    pub(crate) clusters: Clusters,
    /// A TRISC kernel: the samples of its group D (the coprocessor thread's state).
    pub tensix: TensixSamples,
    /// The samples inside the kernel whose time is known, for the zone split: all of them,
    /// or a uniform subset once a profile has more than a million (module `keep`).
    pub timed: Vec<TimedSample>,
    /// The samples by innermost zone (its name, `NO_ZONE` outside every
    /// zone), pc and cause; empty until [`SampleProfile::split_by_zones`].
    pub zones: BTreeMap<String, BTreeMap<u32, [u64; CAUSES]>>,
    /// Per zone, its samples in each window (by window number), for its interval.
    pub zone_windows: BTreeMap<String, BTreeMap<u64, u64>>,
}

/// One sample with the time it was taken, for the split by zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedSample {
    /// Where: chip (the core is the kernel's).
    pub chip: u32,
    /// ... and tile.
    pub tile: NocCoord,
    /// The tile's wall clock (cycles) when the sample was due: the window's start plus
    /// (slot + 1) intervals. A sample the daisychain delayed because L1 was busy (rare) is
    /// taken a multiple of the interval later than this says.
    pub time: u64,
    /// The sampled pc.
    pub pc: u32,
    /// `SampledCause::index`.
    pub cause: usize,
    /// The window that took it (numbered per sampler).
    pub window: u64,
    /// Its number among the profile's timed samples (which are kept, module `keep`).
    pub seq: u64,
}

/// A tile's wall clock (cycles) as the sampler needs it, from the caller
/// (`Sampler::window`): sampling armed before a run starts with the run, sampling armed
/// now starts now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileTime {
    /// The current launch's start.
    pub run_start: u64,
    /// Now: when a daisychain armed by the next write starts sampling.
    pub now: u64,
}

/// The caller's clock: a tile's [`TileTime`], `None` when unknown (then the samples have
/// no time and no zone).
pub type SampleClock<'a> = &'a dyn Fn(u32, NocCoord) -> Option<TileTime>;

/// A clock that knows nothing: samples without zones.
pub fn no_clock(_: u32, _: NocCoord) -> Option<TileTime> {
    None
}

impl SampledKernel {
    /// Adds another launch's samples of the same kernel.
    pub fn add(&mut self, o: &SampledKernel) {
        for (pc, c) in &o.pcs {
            let row = self.pcs.entry(*pc).or_insert([0; CAUSES]);
            for (a, b) in row.iter_mut().zip(c) {
                *a += b;
            }
        }
        self.samples += o.samples;
        self.outside += o.outside;
        self.windows += o.windows;
        self.cycles += o.cycles;
        self.clusters.extend(&o.clusters);
        self.tensix.merge(&o.tensix);
        self.timed.extend(o.timed.iter().copied());
        for (zone, pcs) in &o.zones {
            let z = self.zones.entry(zone.clone()).or_default();
            for (pc, c) in pcs {
                let row = z.entry(*pc).or_insert([0; CAUSES]);
                for (a, b) in row.iter_mut().zip(c) {
                    *a += b;
                }
            }
        }
        for (zone, w) in &o.zone_windows {
            let z = self.zone_windows.entry(zone.clone()).or_default();
            for (id, n) in w {
                *z.entry(*id).or_default() += n;
            }
        }
    }
}

/// What group D samples of a TRISC say about its Tensix thread (`DebugDaisychain.md`): one
/// group is presented per tile at a time, so these come from their own windows
/// (`GROUP_D_EVERY`) and carry no pc: shares of the kernel's time, not of its lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TensixSamples {
    /// Group D samples taken while the kernel ran.
    pub samples: u64,
    /// Windows that took them.
    pub windows: u32,
    /// Bit 26: the thread had instructions queued or executing.
    pub(crate) in_flight: u64,
    /// Bit 125: the FIFO before the MOP Expander was full (a push from the RISC waits).
    pub(crate) fifo_full: u64,
    /// Bit 25: a `MOP` queued or expanding.
    pub(crate) mop_busy: u64,
    /// Bit 30: the TRISC waited on a TTSync read.
    pub(crate) ttsync_wait: u64,
    /// Bit 31: the TRISC waited on a read from its PCBuf.
    pub(crate) pcbuf_wait: u64,
}

impl TensixSamples {
    fn merge(&mut self, o: &TensixSamples) {
        self.samples += o.samples;
        self.windows += o.windows;
        self.in_flight += o.in_flight;
        self.fifo_full += o.fifo_full;
        self.mop_busy += o.mop_busy;
        self.ttsync_wait += o.ttsync_wait;
        self.pcbuf_wait += o.pcbuf_wait;
    }

    fn add(&mut self, w: [u32; 4]) {
        use riscv_linker::mmio::daisychain as dc;
        self.samples += 1;
        self.in_flight += (w[0] & dc::D_COPROCESSOR_BUSY != 0) as u64;
        self.fifo_full += (w[3] & dc::D3_FIFO_FULL != 0) as u64;
        self.mop_busy += (w[0] & dc::D_MOP_BUSY != 0) as u64;
        self.ttsync_wait += (w[0] & dc::D_TTSYNC_WAIT != 0) as u64;
        self.pcbuf_wait += (w[0] & dc::D_PCBUF_WAIT != 0) as u64;
    }
}

/// One window in this many that samples a TRISC presents its group D instead of group A.
pub(crate) const GROUP_D_EVERY: u64 = 4;

/// Every kernel's samples.
#[derive(Clone, Debug, Default)]
pub struct SampleProfile {
    /// Per op and kernel (the keys of [`LineProfile`]).
    pub kernels: BTreeMap<KernelKey, SampledKernel>,
    /// Slots the daisychain had not written when read (a window cut short).
    pub unwritten: u64,
    /// Which timed samples are kept (all until a million).
    pub(crate) timed_keep: TimedKeep,
}

/// The launch being sampled.
struct Launch {
    run_id: u32,
    op: String,
    tiles: Vec<NocCoord>,
    /// The op's kernels: core, ELF (its copy).
    kernels: Vec<(Risc, PathBuf)>,
    /// Per tile: what its daisychain samples now.
    armed: Vec<Option<Armed>>,
}

/// What one tile's daisychain samples in the current window.
#[derive(Clone, Copy, Debug)]
struct Armed {
    /// Index into [`Launch::kernels`].
    kernel: usize,
    interval: u32,
    group_d: bool,
    /// The tile's wall clock when sampling started (`None`: armed before the run, so at
    /// its start).
    at: Option<u64>,
    /// The window's number.
    window: u64,
}

/// Drives the daisychains of a session's tiles (module docs).
pub(crate) struct Sampler {
    cfg: SampleConfig,
    arch: Arch,
    /// Windows so far (the rotation and the interval's variation).
    window: u64,
    /// [`SEED_VAR`].
    seed: u64,
    launch: Option<Launch>,
    profile: SampleProfile,
}

impl Sampler {
    /// A sampler for a device of `arch`; errors if `cfg` does not fit.
    pub(crate) fn new(cfg: SampleConfig, arch: Arch) -> Result<Sampler> {
        cfg.check().map_err(|what| Error::Argument { what })?;
        Ok(Sampler {
            cfg,
            arch,
            window: 0,
            seed: std::env::var(SEED_VAR)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            launch: None,
            profile: SampleProfile::default(),
        })
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &SampleConfig {
        &self.cfg
    }

    /// A launch of `op` on `tiles` with `kernels` is about to start (or has just started:
    /// `clock` says when sampling starts): arms every tile.
    pub(crate) fn start_launch(
        &mut self,
        mem: &dyn DeviceMemory,
        clock: SampleClock<'_>,
        run_id: u32,
        op: &str,
        tiles: &[NocCoord],
        kernels: Vec<(Risc, PathBuf)>,
    ) -> Result<()> {
        self.launch = Some(Launch {
            run_id,
            op: op.to_string(),
            tiles: tiles.to_vec(),
            armed: vec![None; tiles.len()],
            kernels,
        });
        self.rearm(mem, clock)
    }

    /// A window ended while the kernels run: reads every tile's samples, arms the next core.
    /// `clock` times the samples (their zones).
    pub(crate) fn window(&mut self, mem: &dyn DeviceMemory, clock: SampleClock<'_>) -> Result<()> {
        self.collect(mem, clock)?;
        self.rearm(mem, clock)
    }

    /// The launch ended: reads the last samples and turns the daisychains off.
    pub(crate) fn end_launch(
        &mut self,
        mem: &dyn DeviceMemory,
        clock: SampleClock<'_>,
    ) -> Result<()> {
        self.collect(mem, clock)?;
        if let Some(l) = self.launch.take() {
            for t in &l.tiles {
                daisy::disarm(mem, 0, *t)?;
            }
        }
        Ok(())
    }

    /// What was sampled so far.
    pub(crate) fn profile(&self) -> &SampleProfile {
        &self.profile
    }

    /// What was sampled, to split by zone ([`SampleProfile::split_by_zones`]).
    pub(crate) fn profile_mut(&mut self) -> &mut SampleProfile {
        &mut self.profile
    }

    fn rearm(&mut self, mem: &dyn DeviceMemory, clock: SampleClock<'_>) -> Result<()> {
        let Some(l) = self.launch.as_mut() else {
            return Ok(());
        };
        if l.kernels.is_empty() {
            return Ok(());
        }
        let number = self.window;
        let draw = Draw::new(self.window, self.seed);
        self.window += 1;
        let riscs: Vec<Risc> = l.kernels.iter().map(|k| k.0).collect();
        for (k, t) in l.tiles.iter().enumerate() {
            let (kernel, interval, group_d) = draw.pick(k, &riscs, self.cfg.interval);
            let risc = riscs[kernel];
            daisy::arm(mem, 0, *t, risc, self.cfg.buffer, interval, group_d)?;
            l.armed[k] = Some(Armed {
                kernel,
                interval,
                group_d,
                at: clock(0, *t).map(|c| c.now),
                window: number,
            });
        }
        Ok(())
    }

    fn collect(&mut self, mem: &dyn DeviceMemory, clock: SampleClock<'_>) -> Result<()> {
        let Some(l) = self.launch.as_mut() else {
            return Ok(());
        };
        for (k, t) in l.tiles.iter().enumerate() {
            let Some(Armed {
                kernel,
                interval,
                group_d,
                at,
                window: number,
            }) = l.armed[k].take()
            else {
                continue;
            };
            let start = at.or_else(|| clock(0, *t).map(|c| c.run_start));
            let (risc, elf) = &l.kernels[kernel];
            let key = KernelKey {
                run_id: l.run_id,
                op: l.op.clone(),
                risc: *risc,
                elf: elf.clone(),
            };
            if group_d {
                let (words, unwritten) = daisy::read_words(mem, 0, *t, self.cfg.buffer)?;
                self.profile.unwritten += unwritten as u64;
                let s = &mut self.profile.kernels.entry(key).or_default().tensix;
                s.windows += 1;
                words.into_iter().for_each(|w| s.add(w));
                continue;
            }
            let (samples, unwritten) = daisy::read(mem, 0, *t, self.cfg.buffer)?;
            self.profile.unwritten += unwritten as u64;
            let code = riscv_linker::memory_map(self.arch, *risc).code;
            let s = self.profile.kernels.entry(key).or_default();
            let timing = start.map(|start| WindowTime {
                chip: 0,
                tile: *t,
                start,
                window: number,
            });
            s.charge(
                &samples,
                interval,
                code,
                timing.map(|w| (w, &mut self.profile.timed_keep)),
            );
            let p = &mut self.profile;
            p.timed_keep.thin(p.kernels.values_mut());
        }
        Ok(())
    }
}

/// When and where a window sampled, for timing its samples.
#[derive(Clone, Copy, Debug)]
struct WindowTime {
    chip: u32,
    tile: NocCoord,
    /// The tile's wall clock when sampling started.
    start: u64,
    window: u64,
}

impl SampledKernel {
    /// Charges one group A window of samples taken every `interval` cycles: those whose pc
    /// lies in the core's `code` are the kernel's, the others count as outside it (an idle
    /// or halted core). With `timing`, each is timed for the split by zone, those `keep`
    /// chooses kept.
    fn charge(
        &mut self,
        samples: &[daisy::DaisySample],
        interval: u32,
        code: riscv_linker::Region,
        mut timing: Option<(WindowTime, &mut TimedKeep)>,
    ) {
        self.windows += 1;
        let mut window: BTreeMap<u32, u64> = BTreeMap::new();
        for (slot, x) in samples.iter().enumerate() {
            if x.pc == 0 || !code.contains(x.pc, 4) {
                self.outside += 1;
                continue;
            }
            if let Some((w, keep)) = timing.as_mut() {
                if let Some(seq) = keep.next() {
                    self.timed.push(TimedSample {
                        chip: w.chip,
                        tile: w.tile,
                        time: w.start + (slot as u64 + 1) * interval as u64,
                        pc: x.pc,
                        cause: x.cause.index(),
                        window: w.window,
                        seq,
                    });
                }
            }
            self.pcs.entry(x.pc).or_insert([0; CAUSES])[x.cause.index()] += 1;
            *window.entry(x.pc).or_default() += 1;
            self.samples += 1;
            self.cycles += interval as u64;
        }
        if !window.is_empty() {
            self.clusters.push(window.into_iter().collect());
        }
    }
}

/// One window's draw of which core each tile samples, at which interval, and which group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Draw(u64);

impl Draw {
    /// The draw of window `window` under seed `seed` ([`SEED_VAR`]).
    pub(crate) fn new(window: u64, seed: u64) -> Draw {
        // Seed 0 is the plain window count; another seed moves to an unrelated stretch of
        // the sequence (an XOR of small seeds would only swap neighbouring windows).
        Draw(mix(
            window.wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        ))
    }

    /// For the `k`-th tile, choosing among cores `riscs` (not empty) around interval `n`:
    /// the index of the core, the interval, and whether to take group D.
    pub(crate) fn pick(&self, k: usize, riscs: &[Risc], n: u32) -> (usize, u32, bool) {
        let shift = self.0;
        // Tiles sample different cores; which one moves pseudo-randomly from window to
        // window, so no period of the kernels lines up with the rotation.
        let kernel = ((shift % riscs.len() as u64) as usize + k) % riscs.len();
        let interval = pick_interval(n, mix(shift ^ k as u64));
        // Some windows of a TRISC show its coprocessor thread (group D) instead.
        let group_d = riscv_linker::mmio::daisychain::group_d(riscs[kernel]).is_some()
            && mix(shift ^ (k as u64) ^ 0xD).is_multiple_of(GROUP_D_EVERY);
        (kernel, interval, group_d)
    }
}

/// The interval of one window: a prime within ±25 % of `n` (inside 2..=256), chosen by
/// `r`. A prime shares no factor with a loop's period shorter than it, so successive
/// samples walk through every phase of the loop instead of catching the same instruction
/// (a loop of 8 cycles sampled every 16 would show one instruction only). `n` itself when
/// no prime is in reach.
fn pick_interval(n: u32, r: u64) -> u32 {
    let lo = (n - n / 4).max(2);
    let hi = (n + n / 4).min(256);
    let primes: Vec<u32> = (lo..=hi)
        .filter(|&p| {
            (2..p)
                .take_while(|d| d * d <= p)
                .all(|d| !p.is_multiple_of(d))
        })
        .collect();
    if primes.is_empty() {
        n
    } else {
        primes[(r % primes.len() as u64) as usize]
    }
}

/// The environment variable that seeds the rotation and the intervals (default 0): the
/// same run with another seed is another draw of the same sampling, to see how much a
/// share moves between draws.
pub(crate) const SEED_VAR: &str = "TTPROF_SAMPLE_SEED";

/// The 95 % interval of a line's share from its count in each window, `(k_i, n_i)` (the
/// line's samples, all the kernel's samples): samples within a window are close in time and
/// alike, so the spread between windows (the ratio estimator's cluster variance,
/// `m/(m-1) * sum (k_i - p n_i)^2 / (sum n_i)^2`) bounds it as well as the binomial
/// (Wilson) interval; the wider of the two. Fractions, clamped to 0..=1.
pub fn interval(windows: &[(u64, u64)]) -> (f64, f64) {
    let (k, n) = windows
        .iter()
        .fold((0, 0), |(a, b), &(k, n)| (a + k, b + n));
    let (wl, wh) = wilson(k, n);
    let m = windows.iter().filter(|w| w.1 > 0).count();
    if m < 2 {
        return (wl, wh);
    }
    let p = k as f64 / n as f64;
    let ss: f64 = windows
        .iter()
        .map(|&(k, n)| (k as f64 - p * n as f64).powi(2))
        .sum();
    let se = (m as f64 / (m as f64 - 1.0) * ss).sqrt() / n as f64;
    let h = 1.959_964 * se;
    (wl.min((p - h).max(0.0)), wh.max((p + h).min(1.0)))
}

/// The 95 % Wilson score interval of a proportion `k / n`, as (low, high) fractions.
pub(crate) fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_964f64;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

impl SampleProfile {
    /// The samples as a [`LineProfile`] (counts in place of cycles), for the writers.
    fn as_lines(&self) -> LineProfile {
        let mut p = LineProfile::default();
        for (key, s) in &self.kernels {
            p.kernels.insert(
                key.clone(),
                super::KernelCycles {
                    cores: s.windows,
                    cycles: s.samples,
                    pcs: s.pcs.clone(),
                    zones: s.zones.clone(),
                },
            );
        }
        p
    }

    /// Names every pc and writes the files (module docs) into `dir`; `exact` (`--lines`)
    /// is set beside. Call [`SampleProfile::split_by_zones`] first for the zones. Returns
    /// the paths and how sampled and exact agree. No file is written over one of `inputs`.
    pub fn write(
        &self,
        dir: &Path,
        exact: Option<&LineProfile>,
        inputs: &Inputs,
    ) -> Result<(Vec<PathBuf>, Option<Agreement>)> {
        let mut names = super::symbolize::Names::default();
        for (key, s) in &self.kernels {
            names.load(&key.elf, s.pcs.keys().copied())?;
        }
        if let Some(e) = exact {
            for (key, k) in &e.kernels {
                names.load(&key.elf, k.pcs.keys().copied())?;
            }
        }
        let (text, agreement) = report::render(self, exact, &names);
        let path = dir.join(SAMPLES_FILE);
        crate::atomic::write_atomic(&path, inputs, |w| w.write_all(text.as_bytes()))?;
        let mut written = vec![path];
        written.extend(self.as_lines().write_tables(
            dir,
            &names,
            [
                SAMPLES_FOLDED_FILE,
                SAMPLES_FLAME_FILE,
                SAMPLES_PARQUET_FILE,
            ],
            &SAMPLED,
            inputs,
        )?);
        Ok((written, agreement))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_holds_the_proportion_and_narrows_with_n() {
        let (lo, hi) = wilson(50, 100);
        assert!(lo < 0.5 && 0.5 < hi);
        assert!((hi - lo - 0.19).abs() < 0.01, "{lo} {hi}");
        let (lo2, hi2) = wilson(500, 1000);
        assert!(hi2 - lo2 < (hi - lo) / 3.0 + 0.01);
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (lo, hi) = wilson(0, 100);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.0 && hi < 0.05);
    }

    #[test]
    fn intervals_are_primes_near_n() {
        for r in 0..50 {
            let p = pick_interval(64, mix(r));
            assert!(
                (48..=80).contains(&p) && (2..p).all(|d| !p.is_multiple_of(d)),
                "{p}"
            );
        }
        assert_eq!(pick_interval(2, 7), 2);
        assert!(pick_interval(256, 3) <= 256);
    }

    #[test]
    fn windows_that_disagree_widen_the_interval() {
        // Same totals (50 of 100), alike windows vs windows all-or-nothing.
        let alike = interval(&[(10, 20), (10, 20), (15, 30), (15, 30)]);
        let apart = interval(&[(20, 20), (0, 20), (30, 30), (0, 30)]);
        assert_eq!(alike, wilson(50, 100), "no spread: the binomial interval");
        assert!(apart.1 - apart.0 > 2.0 * (alike.1 - alike.0), "{apart:?}");
        assert_eq!(interval(&[(5, 10)]), wilson(5, 10), "one window");
    }

    #[test]
    fn configs_outside_the_hardware_are_refused() {
        assert!(SampleConfig::new(64).check().is_ok());
        assert!(SampleConfig::new(1)
            .check()
            .unwrap_err()
            .contains("2..=256"));
        assert!(SampleConfig::new(257).check().is_err());
    }
}
