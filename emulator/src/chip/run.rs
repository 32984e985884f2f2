//! Running kernels: [`Device::run`] and [`Device::run_with_hook`].
//!
//! A run starts every loaded core of every tile at its reset PC, at the chip cycle that
//! matches the current (virtual) host time, and ends when every core has halted. Tiles are
//! independent, so they are spread over host threads; each runs its own deterministic
//! schedule ([`crate::chip::tile`]), so nothing depends on the thread count.
//!
//! With a hook, the run proceeds in segments: every tile runs until its clock is
//! `k * every_cycles` past the run's start, all tiles pause, the hook is called with the
//! device, and the next segment starts. Segment boundaries are simulated times, so the
//! hook sees the same state at the same points in every run.
//!
//! Register writes a host in another process posts through the image
//! (`riscv_linker::devfile::posted`) land as a run starts, at every step boundary and as
//! it ends; steps are therefore bounded (`POST_LOOK_STEP`, `POSTED_STEP` once a write came).
//! When such a write lands depends on when it arrived: a run nobody posts to is
//! deterministic, one sampled from another process is not (as on a card).

use crate::bus::L1;
use crate::chip::device::Device;
use crate::chip::holds::{HartHolds, HeldSpan};
use crate::chip::stall::Watch;
use crate::chip::tile::Tile;
use crate::devices::daisychain::Daisychain;
use crate::error::{EmuError, Fault};
use crate::isa::hart::HartState;
use crate::isa::lines::HartLines;
use riscv_linker::devfile::{STATUS_FAULTED, STATUS_FINISHED, STATUS_RUNNING};
use riscv_linker::{NocCoord, Risc};
use std::sync::atomic::AtomicUsize;

/// How far tiles run between two looks at the NIUs while no kernel uses the NoC: a kernel
/// whose code does not show it (the address comes from memory) turns the NoC on within
/// this many cycles (its first requests are then late by up to this much).
const QUIET_STEP: u64 = 1 << 18;

/// How far tiles run between two looks at the image's posted register writes before any
/// came, when nothing else bounds a step: a host's first write lands within this many
/// cycles (a barrier every step costs a grid of tiles a few per cent at 2^18).
const POST_LOOK_STEP: u64 = 1 << 20;

/// How far tiles run between two looks at the image's posted register writes
/// (`riscv_linker::devfile::posted`) once a host has posted one: a write lands at most this
/// many cycles after the device could first have seen it.
const POSTED_STEP: u64 = 4096;

/// Below this many cycles a step runs on one host thread (spawning costs more).
const PARALLEL_WORK: u64 = 2048;
use std::sync::Mutex;

/// What one core did in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HartSummary {
    /// The core's chip.
    pub chip: u32,
    /// The core's tile.
    pub tile: NocCoord,
    /// Which of the tile's cores.
    pub risc: Risc,
    /// `a0` at the `ecall` that halted the core; `None` if it ended the run held in reset.
    pub exit_code: Option<u32>,
    /// Instructions retired.
    pub instructions: u64,
    /// Cycles from leaving reset to halting.
    pub cycles: u64,
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// Every core that ran, in device tile order then [`Risc`] order.
    pub harts: Vec<HartSummary>,
    /// Per chip: the chip cycle the run started at and the one it ended at.
    pub chip_cycles: Vec<(u64, u64)>,
}

impl RunSummary {
    /// Instructions retired by all cores.
    pub fn instructions(&self) -> u64 {
        self.harts.iter().map(|h| h.instructions).sum()
    }

    /// The summary of one core, if it ran.
    pub fn hart(&self, chip: u32, tile: NocCoord, risc: Risc) -> Option<&HartSummary> {
        self.harts
            .iter()
            .find(|h| h.chip == chip && h.tile == tile && h.risc == risc)
    }
}

impl Device {
    /// Stops every later run once the host's wall clock reaches `deadline` (`None`: no
    /// limit), with a [`crate::FaultKind::Timeout`] fault listing every running core. It is
    /// checked between steps of at most a few hundred thousand simulated cycles.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
    }

    /// Runs every loaded kernel until all cores halt (see the module docs).
    ///
    /// On a fault the run stops with the first fault in tile order (the same whatever the
    /// thread count); the state of the other tiles is then unspecified, since each stops
    /// wherever it was when it noticed.
    pub fn run(&mut self) -> Result<RunSummary, EmuError> {
        self.run_segments(u64::MAX, &mut |_| false)
    }

    /// Like [`Device::run`], but pauses every tile each `every_cycles` simulated cycles
    /// (counted from the run's start on each tile) and calls `hook` while they are paused,
    /// e.g. to drain profiler rings through [`Device::read_u32`]/[`Device::write_u32`]. The
    /// hook is called at each boundary some core was still running at; it is not called
    /// after the last core halts.
    pub fn run_with_hook(
        &mut self,
        every_cycles: u64,
        hook: &mut dyn FnMut(&Device),
    ) -> Result<RunSummary, EmuError> {
        if every_cycles == 0 {
            return Err(EmuError::Config(
                "run_with_hook: every_cycles must be positive".into(),
            ));
        }
        self.run_segments(every_cycles, &mut |d| {
            hook(d);
            false
        })
    }

    /// Like [`Device::run_with_hook`], but `host` may end the run: it returns `true` to
    /// stop there, with cores that are still running (firmware waiting in its idle loop)
    /// left where they are; they are in the summary with no exit code. The next run starts
    /// every loaded core from reset again. This is how a host that talks to firmware
    /// through L1 ([`Device::write_u32`] while the tiles are paused) runs it.
    pub fn run_until(
        &mut self,
        every_cycles: u64,
        host: &mut dyn FnMut(&Device) -> bool,
    ) -> Result<RunSummary, EmuError> {
        if every_cycles == 0 {
            return Err(EmuError::Config(
                "run_until: every_cycles must be positive".into(),
            ));
        }
        self.run_segments(every_cycles, host)
    }

    fn run_segments(
        &mut self,
        every: u64,
        hook: &mut dyn FnMut(&Device) -> bool,
    ) -> Result<RunSummary, EmuError> {
        if !self.tiles.iter().any(Tile::loaded) {
            return Err(EmuError::Config(
                "nothing to run: no kernel is loaded on any core".into(),
            ));
        }
        self.catch_up_chips();
        let starts = self.chip_time.clone();
        for t in &mut self.tiles {
            t.start_run(starts[t.chip as usize]);
        }
        self.image.bump_launches();
        self.image.set_status(STATUS_RUNNING);
        // Writes a host posted between runs land as this one starts.
        self.apply_posted();
        self.noc_on = self.cfg.noc.enabled
            && (self.tiles.iter().any(Tile::uses_noc) || self.noc.iter().any(|n| !n.is_idle()));
        let mut reached = 0u64;
        let mut segment: u64 = 1;
        let mut watch = self.cfg.deadlock_detection.then(Watch::new);
        loop {
            let rel = every.saturating_mul(segment);
            if let Some(fault) = self.run_segment(&mut reached, rel, watch.as_mut()) {
                self.image.set_status(STATUS_FINISHED | STATUS_FAULTED);
                self.finish_clocks();
                return Err(EmuError::Fault(fault));
            }
            if !self.tiles.iter().any(Tile::any_running) {
                break;
            }
            self.publish_frontier(&starts, rel);
            if hook(self) {
                break;
            }
            segment += 1;
        }
        // The daisychains' samples still due show idle cores (crate::devices::daisychain).
        if let Some(fault) = self
            .tiles
            .iter_mut()
            .find_map(|t| t.sample_idle(u64::MAX).err())
        {
            self.image.set_status(STATUS_FINISHED | STATUS_FAULTED);
            self.finish_clocks();
            return Err(EmuError::Fault(fault));
        }
        self.drain_noc();
        self.apply_posted();
        self.image.set_status(STATUS_FINISHED);
        let ends = self.finish_clocks();
        Ok(self.summary(starts.into_iter().zip(ends).collect()))
    }

    /// Runs every tile to `rel` cycles past its run start, in NoC epochs while the NoC is
    /// in use ([`crate::noc`]); `reached` is how far the tiles have got. Returns the first
    /// fault in tile order, or the deadlock `watch` finds ([`crate::chip::stall`]).
    fn run_segment(
        &mut self,
        reached: &mut u64,
        rel: u64,
        mut watch: Option<&mut Watch>,
    ) -> Option<Box<Fault>> {
        loop {
            // Bounded always: a host in another process may post register writes.
            let step = if self.noc_on {
                self.cfg.noc.epoch.max(1) as u64
            } else if self.posted_seen {
                POSTED_STEP
            } else if self.cfg.noc.enabled || watch.is_some() || self.deadline.is_some() {
                QUIET_STEP
            } else {
                POST_LOOK_STEP
            };
            let to = rel.min(reached.saturating_add(step));
            let parallel = to.saturating_sub(*reached) >= PARALLEL_WORK;
            if let Some(f) = self.run_tiles(to, parallel) {
                return Some(f);
            }
            *reached = to;
            if self.cfg.noc.enabled {
                self.exchange(to);
            }
            self.apply_posted();
            if !self.tiles.iter().any(Tile::any_running) {
                return None;
            }
            if let Some(f) = watch.as_deref_mut().and_then(|w| w.look(self, to)) {
                return Some(f);
            }
            if self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                return Some(crate::chip::stall::timeout(self));
            }
            if to >= rel {
                return None;
            }
        }
    }

    /// Applies the register writes a host posted through the image
    /// (`riscv_linker::devfile::posted`) as [`Device::write_u32`] would, now: while a run is
    /// paused at a step boundary they land at each tile's current cycle.
    fn apply_posted(&mut self) {
        let dev = &*self;
        let n = dev.image.apply_posted(|chip, tile, addr, value| {
            Daisychain::owns(addr) && dev.write_u32(chip, tile, addr, value).is_ok()
        });
        if n > 0 {
            self.posted_seen = true;
        }
    }

    /// Collects the requests every tile issued, simulates each chip's NoC to `rel` cycles
    /// past the run start and hands the tiles what happens to them.
    fn exchange(&mut self, rel: u64) {
        let per_chip = self.coords.len();
        let mut touched = false;
        for chip in 0..self.cfg.chips as usize {
            let tiles = &mut self.tiles[chip * per_chip..(chip + 1) * per_chip];
            let at = tiles[0].run_start.saturating_add(rel);
            let mut requests = Vec::new();
            for t in tiles.iter_mut() {
                if let Some(n) = t.mem.niu.as_mut() {
                    touched |= std::mem::take(&mut n.touched);
                    requests.append(&mut n.outbox);
                }
            }
            let noc = &mut self.noc[chip];
            let mut out = Vec::new();
            if !requests.is_empty() {
                let l1s: Vec<L1> = tiles.iter().map(|t| t.mem.l1).collect();
                let read = |g: usize, addr: u32, len: u32| {
                    let mut v = vec![0u8; len as usize];
                    l1s[g - chip * per_chip].read_into(addr, &mut v);
                    v
                };
                for r in requests {
                    noc.submit(r, &read, &mut out);
                }
            }
            let horizon = if rel == u64::MAX {
                f64::INFINITY
            } else {
                (at + noc.cfg.niu_to_router as u64) as f64
            };
            if !noc.is_idle() {
                noc.advance(horizon, &mut out);
            }
            for (g, time, kind) in out {
                if let Some(n) = tiles[g - chip * per_chip].mem.niu.as_mut() {
                    n.push(time.max(at), kind);
                }
            }
            for t in tiles.iter_mut() {
                t.mem.apply_noc(at);
            }
        }
        if touched && !self.noc_on {
            self.noc_on = true;
        }
    }

    /// After the last core halted: completes every transfer still in flight and applies
    /// everything it does (counters reach their final values, data lands).
    fn drain_noc(&mut self) {
        if !self.cfg.noc.enabled {
            return;
        }
        self.exchange(u64::MAX);
        for t in &mut self.tiles {
            t.mem.apply_noc(u64::MAX);
        }
    }

    /// Runs every tile to `rel` cycles past its run start (on several host threads if
    /// `parallel`); returns the first fault in tile order.
    fn run_tiles(&mut self, rel: u64, parallel: bool) -> Option<Box<Fault>> {
        let abort = AtomicUsize::new(usize::MAX);
        let faults = Mutex::new(Vec::new());
        let work = |t: &mut Tile| {
            if let Err(f) = t.run_until(t.run_start.saturating_add(rel), &abort) {
                faults
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((t.global, f));
            }
        };
        let busy: Vec<&mut Tile> = self.tiles.iter_mut().filter(|t| t.any_running()).collect();
        // Asked once per device: the lookup reads cgroup files (costly at every NoC epoch).
        let threads = match self.cfg.threads {
            0 => *self
                .host_threads
                .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            n => n,
        }
        .min(busy.len());
        if threads <= 1 || !parallel {
            busy.into_iter().for_each(work);
        } else {
            let queue = Mutex::new(busy.into_iter());
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        match next {
                            Some(t) => work(t),
                            None => break,
                        }
                    });
                }
            });
        }
        let faults = faults.into_inner().unwrap_or_else(|e| e.into_inner());
        faults.into_iter().min_by_key(|(g, _)| *g).map(|(_, f)| f)
    }

    /// Tells the clock mailbox how far virtual host time has come: every chip has been
    /// simulated `rel` cycles past its run start (a simulated time, so deterministic).
    fn publish_frontier(&self, starts: &[u64], rel: u64) {
        let frontier = (0..self.cfg.chips)
            .map(|c| {
                self.truth_of(c, 0)
                    .host_ns_at_chip(starts[c as usize].saturating_add(rel) as f64)
            })
            .fold(f64::INFINITY, f64::min);
        self.published.advance(frontier);
    }

    /// Sets each chip's counter to where its slowest core stopped and moves host time
    /// along; returns the chips' end cycles.
    fn finish_clocks(&mut self) -> Vec<u64> {
        for t in &self.tiles {
            let end = t
                .harts
                .iter()
                .filter(|h| h.state != HartState::Empty)
                .map(|h| h.core.time)
                .max()
                .unwrap_or(0);
            let c = &mut self.chip_time[t.chip as usize];
            *c = (*c).max(end);
        }
        self.catch_up_host();
        self.chip_time.clone()
    }

    /// In lines mode ([`crate::DeviceConfig::lines`]), every core of the last run: its
    /// cycles per instruction and cause, which sum to its [`HartSummary::cycles`]. Empty
    /// otherwise.
    pub fn line_profiles(&self) -> Vec<HartLines> {
        let mut out = Vec::new();
        for t in &self.tiles {
            for (h, kernel) in t.harts.iter().zip(&t.kernels) {
                if !matches!(h.state, HartState::Exited(_) | HartState::Reset) {
                    continue;
                }
                let Some(table) = h.lines.as_deref() else {
                    continue;
                };
                out.push(HartLines {
                    chip: t.chip,
                    tile: t.coord,
                    risc: h.risc,
                    kernel: kernel.as_ref().map_or(String::new(), |p| p.name.clone()),
                    cycles: h.core.time - h.start_time,
                    rows: table.nonzero(),
                    segments: table.segments(h.start_time).map(|mut s| {
                        for seg in &mut s {
                            seg.start = t.mem.regs.wall(seg.start);
                        }
                        s
                    }),
                });
            }
        }
        out
    }

    /// Every core of the last run that the tile held at some point, or whose Tensix thread's
    /// gate held an instruction or executed a `SEMPOST`: when, how long and why (contiguous
    /// cycles of one cause joined), on its tile's wall clock.
    pub fn holds(&self) -> Vec<HartHolds> {
        let mut out = Vec::new();
        for t in &self.tiles {
            let wall = |s: &HeldSpan| HeldSpan {
                start: t.mem.regs.wall(s.start),
                ..*s
            };
            let walls = |v: &[(u64, u8)]| -> Vec<(u64, u8)> {
                v.iter().map(|&(c, s)| (t.mem.regs.wall(c), s)).collect()
            };
            for (h, log) in t.harts.iter().zip(&t.holds) {
                let thread = h
                    .risc
                    .index()
                    .checked_sub(Risc::Trisc0.index())
                    .and_then(|k| t.mem.regs.tensix.log.get(k));
                let quiet = |l: &crate::tensix::thread_log::ThreadLog| {
                    l.gate.spans.is_empty()
                        && l.gate.lost_cycles == 0
                        && l.posts.is_empty()
                        && l.gets.is_empty()
                        && l.lost_posts == 0
                };
                if log.spans.is_empty() && log.lost_cycles == 0 && thread.is_none_or(quiet) {
                    continue;
                }
                out.push(HartHolds {
                    chip: t.chip,
                    tile: t.coord,
                    risc: h.risc,
                    spans: log.spans.iter().map(wall).collect(),
                    lost_cycles: log.lost_cycles,
                    gate: thread.map_or_else(Vec::new, |l| l.gate.spans.iter().map(wall).collect()),
                    gate_lost_cycles: thread.map_or(0, |l| l.gate.lost_cycles),
                    posts: thread.map_or_else(Vec::new, |l| walls(&l.posts)),
                    gets: thread.map_or_else(Vec::new, |l| walls(&l.gets)),
                    lost_posts: thread.map_or(0, |l| l.lost_posts),
                });
            }
        }
        out
    }

    fn summary(&self, chip_cycles: Vec<(u64, u64)>) -> RunSummary {
        let mut harts = Vec::new();
        for t in &self.tiles {
            for h in &t.harts {
                let exit_code = match h.state {
                    HartState::Exited(c) => Some(c),
                    HartState::Reset | HartState::Running => None,
                    _ => continue,
                };
                harts.push(HartSummary {
                    chip: t.chip,
                    tile: t.coord,
                    risc: h.risc,
                    exit_code,
                    instructions: h.core.instret,
                    cycles: h.core.time - h.start_time,
                });
            }
        }
        RunSummary { harts, chip_cycles }
    }
}
