//! Sampling a device this process does not run (`ttprof capture --sample N`): a card
//! through tt-kmd, or an emulator in another process through its device image (whose
//! posted register writes carry the daisychain's registers, `riscv_linker::devfile::posted`).
//!
//! The launches are not this process's, so what a window sampled is read from the device
//! itself: a tile is armed only while one of its cores runs a launch (its ring block's
//! `STATE`), on one of those cores, and the window is charged to that core's launch (its
//! ring's `RUN_ID`) on that tile. A window is taken once its last slot is written (the
//! daisychain stops by itself after its `count` samples); one whose core started another
//! launch meanwhile is dropped and counted (`straddled`): its samples may be either
//! launch's. The op log, read when the capture ends, names each (run, tile, core)'s op and
//! kernel ELF ([`LiveSampler::into_profile`]); the kernel hash the launcher wrote into the
//! tile block when the window was armed is checked against that ELF.
//!
//! What the in-process sampler (`ttprof run --sample`) has and this one has not: the time a
//! window started (a register write lands when the device next looks, not at a known
//! cycle), so these samples are not split by zone; and a rotation in step with the
//! launches: windows are as frequent as this process polls, each tile on its own.

use super::{daisy, Draw, SampleConfig, SampleProfile, SampledKernel, SEED_VAR};
use crate::devmem::DeviceMemory;
use crate::error::{Error, Result};
use crate::issue::Issue;
use crate::lines::KernelKey;
use crate::oplog::OpLog;
use riscv_linker::mmio::daisychain as dc;
use riscv_linker::profiler::{self, ring, ring_word, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Register writes that arm a tile (`daisy::arm`).
const ARM_WRITES: u32 = 5;

/// What one tile samples now.
#[derive(Clone, Copy, Debug)]
struct Armed {
    risc: Risc,
    interval: u32,
    group_d: bool,
    /// The core's launch when armed (its ring's `RUN_ID`).
    run_id: u32,
    /// The launcher's hash of the kernel on that core when armed (0: none written).
    hash: u32,
}

/// Where a window's samples belong until the op log names them: a launch's kernel on one
/// core kind, the tiles running the same ELF (the same hash) together; without a hash (a
/// launcher that writes none) each tile on its own, since tiles may run different kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    chip: u32,
    run_id: u32,
    risc: Risc,
    hash: u32,
    /// The tile, when `hash` is 0.
    tile: Option<NocCoord>,
}

/// The counts a capture reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LiveCounts {
    /// Windows taken (their samples kept).
    pub windows: u64,
    /// Windows dropped because their core started another launch before they filled.
    pub straddled: u64,
    /// Windows armed but not filled when the capture ended.
    pub unfinished: u64,
    /// Times a tile with a running core was left unarmed because the device's queue of
    /// posted register writes had no room (an emulator that is not applying them).
    pub queue_full: u64,
}

/// Drives the daisychains of every tile of a live device (module docs).
pub struct LiveSampler {
    cfg: SampleConfig,
    arch: Arch,
    seed: u64,
    /// Windows armed so far (the draw of each).
    draws: u64,
    tiles: Vec<(u32, NocCoord)>,
    armed: Vec<Option<Armed>>,
    /// The samples of each place, and a tile of it (to look its kernel up in the op log).
    kernels: BTreeMap<Place, (NocCoord, SampledKernel)>,
    counts: LiveCounts,
}

impl LiveSampler {
    /// A sampler of every tile `mem` has; errors if `cfg` does not fit.
    pub fn new(cfg: SampleConfig, mem: &dyn DeviceMemory) -> Result<LiveSampler> {
        cfg.check().map_err(|what| Error::Argument { what })?;
        let g = mem.geometry();
        let tiles: Vec<(u32, NocCoord)> = (0..g.chips)
            .flat_map(|chip| mem.tiles(chip).into_iter().map(move |t| (chip, t)))
            .collect();
        Ok(LiveSampler {
            cfg,
            arch: g.arch,
            seed: std::env::var(SEED_VAR)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            draws: 0,
            armed: vec![None; tiles.len()],
            tiles,
            kernels: BTreeMap::new(),
            counts: LiveCounts::default(),
        })
    }

    /// The counts so far.
    pub fn counts(&self) -> LiveCounts {
        self.counts
    }

    /// One look at every tile: takes the windows that filled, arms the tiles that are free
    /// and have a core running a launch.
    pub fn poll(&mut self, mem: &dyn DeviceMemory) -> Result<()> {
        for i in 0..self.tiles.len() {
            let (chip, at) = self.tiles[i];
            if let Some(a) = self.armed[i] {
                if !self.take(mem, chip, at, a)? {
                    continue;
                }
                self.armed[i] = None;
            }
            self.armed[i] = self.arm(mem, chip, at, i)?;
        }
        Ok(())
    }

    /// The capture ended: windows still armed are counted as unfinished.
    pub fn finish(&mut self) {
        self.counts.unfinished += self.armed.iter().filter(|a| a.is_some()).count() as u64;
        self.armed.iter_mut().for_each(|a| *a = None);
    }

    /// Takes tile `at`'s window if it filled (true: the tile is free again).
    fn take(&mut self, mem: &dyn DeviceMemory, chip: u32, at: NocCoord, a: Armed) -> Result<bool> {
        let buf = self.cfg.buffer;
        let mut last = [0u32; 4];
        let last_slot = buf.addr + (buf.count - 1) * dc::SAMPLE_BYTES;
        mem.read_words(chip, at, last_slot, &mut last)?;
        if last == [daisy::SENTINEL; 4] {
            return Ok(false);
        }
        if mem.read_u32(chip, at, ring_word(a.risc, ring::RUN_ID))? != a.run_id {
            self.counts.straddled += 1;
            return Ok(true);
        }
        self.counts.windows += 1;
        let place = Place {
            chip,
            run_id: a.run_id,
            risc: a.risc,
            hash: a.hash,
            tile: (a.hash == 0).then_some(at),
        };
        let (_, s) = self
            .kernels
            .entry(place)
            .or_insert_with(|| (at, SampledKernel::default()));
        if a.group_d {
            let (words, _) = daisy::read_words(mem, chip, at, buf)?;
            s.tensix.windows += 1;
            words.into_iter().for_each(|w| s.tensix.add(w));
        } else {
            let (samples, _) = daisy::read(mem, chip, at, buf)?;
            let code = riscv_linker::memory_map(self.arch, a.risc).code;
            s.charge(&samples, a.interval, code, None);
        }
        Ok(true)
    }

    /// Arms tile `at` (the `k`-th) on one of its running cores; `None` when none runs (or
    /// the tile has no profiler block).
    fn arm(
        &mut self,
        mem: &dyn DeviceMemory,
        chip: u32,
        at: NocCoord,
        k: usize,
    ) -> Result<Option<Armed>> {
        if mem.read_u32(chip, at, profiler::TILE_BLOCK + tile::MAGIC)? != profiler::TILE_MAGIC {
            return Ok(None);
        }
        let mut running = Vec::new();
        for risc in Risc::ALL {
            let magic = mem.read_u32(chip, at, ring_word(risc, ring::MAGIC))?;
            let state = mem.read_u32(chip, at, ring_word(risc, ring::STATE))?;
            if magic == profiler::RING_MAGIC && state & ring::STATE_RUNNING != 0 {
                running.push(risc);
            }
        }
        // Never wait for room in a queue of posted writes (the capture would stop draining):
        // a tile the queue cannot take now is armed at a later poll.
        if running.is_empty() {
            return Ok(None);
        }
        if mem.posted_room().is_some_and(|r| r < ARM_WRITES) {
            self.counts.queue_full += 1;
            return Ok(None);
        }
        let draw = Draw::new(self.draws, self.seed);
        self.draws += 1;
        let (pick, interval, group_d) = draw.pick(k, &running, self.cfg.interval);
        let risc = running[pick];
        let run_id = mem.read_u32(chip, at, ring_word(risc, ring::RUN_ID))?;
        let hash = mem.read_u32(
            chip,
            at,
            profiler::TILE_BLOCK + tile::KERNELS + 4 * risc.index() as u32,
        )?;
        daisy::arm(mem, chip, at, risc, self.cfg.buffer, interval, group_d)?;
        Ok(Some(Armed {
            risc,
            interval,
            group_d,
            run_id,
            hash,
        }))
    }

    /// Names every window's launch and kernel from `log`: the profile, and an issue for
    /// samples it cannot place (a run the op log does not have, a kernel whose ELF is not
    /// the one that ran).
    pub fn into_profile(self, log: &OpLog) -> (SampleProfile, Vec<Issue>) {
        let mut profile = SampleProfile::default();
        let mut hashes: BTreeMap<PathBuf, Option<u32>> = BTreeMap::new();
        let (mut unknown, mut mismatched) = (0u64, 0u64);
        for (p, (tile, s)) in self.kernels {
            let n = s.samples + s.outside + s.tensix.samples;
            let Some((op, binding)) = log
                .op(p.chip, p.run_id)
                .and_then(|op| op.kernel_for(tile, p.risc).map(|b| (op, b)))
            else {
                unknown += n;
                continue;
            };
            let elf = log.resolve_path(&binding.elf);
            let hash = *hashes.entry(elf.clone()).or_insert_with(|| {
                std::fs::read(&elf)
                    .ok()
                    .map(|b| crate::launch::kernel_hash(&b))
            });
            if p.hash != 0 && hash.is_some_and(|h| h != p.hash) {
                mismatched += n;
                continue;
            }
            let key = KernelKey {
                run_id: p.run_id,
                op: op.op_code.clone(),
                risc: p.risc,
                elf,
            };
            profile.kernels.entry(key).or_default().add(&s);
        }
        let mut issues = Vec::new();
        if unknown > 0 {
            issues.push(
                Issue::error(
                    None,
                    format!(
                        "--sample: {unknown} sample(s) of launches or cores the op log {} does not name (another \
                         run's op log, or one not written yet): left out of the sampled profile",
                        log.path.display()
                    ),
                )
                .with_count(unknown),
            );
        }
        if mismatched > 0 {
            issues.push(
                Issue::error(
                    None,
                    format!(
                        "--sample: {mismatched} sample(s) of cores whose kernel is not the ELF the op log {} names \
                         (its hash differs from the one the launcher wrote): left out",
                        log.path.display()
                    ),
                )
                .with_count(mismatched),
            );
        }
        (profile, issues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::sample::daisy::DaisySample;
    use crate::lines::sample::SampledCause;
    use crate::oplog::{KernelBinding, OpLogWriter, OpRecord};

    /// A sampler holding one window of 4 samples at `pc` for each place.
    fn sampler(places: &[Place]) -> LiveSampler {
        let mut kernels = BTreeMap::new();
        for p in places {
            let mut k = SampledKernel::default();
            let code = riscv_linker::memory_map(Arch::WormholeB0, p.risc).code;
            let s = DaisySample {
                pc: code.start + 8,
                cause: SampledCause::Retiring,
            };
            k.charge(&[s; 4], 8, code, None);
            kernels.insert(*p, (NocCoord::new(1, 1), k));
        }
        LiveSampler {
            cfg: SampleConfig::new(8),
            arch: Arch::WormholeB0,
            seed: 0,
            draws: 0,
            tiles: Vec::new(),
            armed: Vec::new(),
            kernels,
            counts: LiveCounts::default(),
        }
    }

    #[test]
    fn samples_are_named_from_the_op_log_and_those_it_cannot_place_are_counted() {
        let dir = std::env::temp_dir().join(format!("ttprof-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let elf = dir.join("k.elf");
        std::fs::write(&elf, b"a kernel").unwrap();
        let hash = crate::launch::kernel_hash(b"a kernel");
        let log_path = dir.join("ops.jsonl");
        let mut w = OpLogWriter::create(&log_path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&OpRecord::device_op(
            1,
            0,
            "Add",
            (0, 1),
            vec![KernelBinding {
                risc: "BRISC".into(),
                elf: elf.clone(),
                cores: vec![[1, 1]],
            }],
        ))
        .unwrap();
        drop(w);
        let place = |run_id, hash, risc| Place {
            chip: 0,
            run_id,
            risc,
            hash,
            tile: None,
        };
        let s = sampler(&[
            place(1, hash, Risc::Brisc),     // named
            place(1, 0, Risc::Brisc),        // no hash written: named, not checked
            place(1, hash ^ 1, Risc::Brisc), // another ELF ran
            place(2, hash, Risc::Brisc),     // a run the op log lacks
            place(1, hash, Risc::Ncrisc),    // a core the op log gives no kernel
        ]);
        let (profile, issues) =
            s.into_profile(&OpLog::read(&log_path, &crate::inputs::Inputs::none()).unwrap());
        assert_eq!(profile.kernels.len(), 1);
        let (key, k) = profile.kernels.iter().next().unwrap();
        assert_eq!(
            (key.run_id, key.op.as_str(), key.risc),
            (1, "Add", Risc::Brisc)
        );
        assert_eq!((k.samples, k.windows), (8, 2), "the two named places");
        let text: Vec<String> = issues.iter().map(|i| format!("{i:?}")).collect();
        assert_eq!(issues.len(), 2, "{text:?}");
        assert!(
            text[0].contains("8 sample(s) of launches or cores"),
            "{text:?}"
        );
        assert!(
            text[1].contains("4 sample(s) of cores whose kernel is not the ELF"),
            "{text:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_full_queue_of_posted_writes_leaves_tiles_unarmed_instead_of_waiting() {
        use crate::devmem::MappedImage;
        use crate::testing::ImageBuilder;
        // Sixteen tiles whose BRISC says it runs a launch, and no emulator applying writes:
        // the queue (64 entries, 5 writes an arming) takes twelve tiles, then fills.
        let tiles: Vec<NocCoord> = (1..=4)
            .flat_map(|x| (1..=4).map(move |y| NocCoord::new(x, y)))
            .collect();
        let mut b = ImageBuilder::new(Arch::WormholeB0, 1, tiles.clone());
        for &t in &tiles {
            b.poke(
                0,
                t,
                profiler::TILE_BLOCK + tile::MAGIC,
                profiler::TILE_MAGIC,
            );
            b.poke(
                0,
                t,
                ring_word(Risc::Brisc, ring::MAGIC),
                profiler::RING_MAGIC,
            );
            b.poke(
                0,
                t,
                ring_word(Risc::Brisc, ring::STATE),
                ring::STATE_RUNNING,
            );
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        b.write(&dir.join("d.img")).unwrap();
        let mem = MappedImage::open(&dir.join("d.img"), &crate::inputs::Inputs::none()).unwrap();
        let mut s = LiveSampler::new(SampleConfig::new(8), &mem).unwrap();
        // Posting into a full queue would wait 10 s and then fail: these return at once.
        s.poll(&mem).unwrap();
        s.poll(&mem).unwrap();
        assert_eq!(mem.posted_room(), Some(4), "twelve armings posted");
        let armed = s.armed.iter().filter(|a| a.is_some()).count();
        assert_eq!(armed, 12);
        assert_eq!(
            s.counts().queue_full,
            4 + 4,
            "four tiles left out at each poll"
        );
    }
}
