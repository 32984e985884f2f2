//! A long synthetic run for memory tests and benchmarks: rings recorded by the runtime's
//! real producer (`ttprof_rt::sim::Sim`: FW and KERNEL wrappers around a loop of three
//! nested zones, ten launches, an 8 KiB ring drained as it fills), drained as a capture
//! drains them, saved as `ttprof run` saves a run: `device.snap` (control blocks and what
//! the consumer took), a kernel ELF per RISC, `ops.jsonl` naming the ten ops. A longer run
//! has more rings (tiles), not longer ones.

use crate::devmem::Snapshot;
use crate::error::{Error, Result};
use crate::oplog::{KernelBinding, OpLogWriter, OpRecord};
use crate::readout::{DrainOptions, Drainer, Readout};
use crate::replay::{RecordedRing, Replay};
use crate::testing::{write_kernel_elf, ElfSpec, ImageBuilder, Rng};
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use ttprof_rt::sim::Sim;
use ttprof_rt::{data, value_zone, zone};

const ARCH: Arch = Arch::Blackhole;
const LAUNCHES: u32 = 10;

/// What [`write`] wrote.
pub struct LongRun {
    /// The snapshot (`device.snap`).
    pub snapshot: PathBuf,
    /// The op log (`ops.jsonl`).
    pub oplog: PathBuf,
    /// Zones recorded.
    pub zones: u64,
}

/// A C++ kernel of `get_arg_val(0)` zones of one site, for a long `ttprof run` (tt-metal's
/// macros; build it with `ttprof build --core RISC`).
pub const ZONES_KERNEL_CPP: &str = r#"#include <cstdint>
#include "tools/profiler/kernel_profiler.hpp"
void kernel_main() {
    uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; i++) {
        DeviceZoneScopedN("step");
    }
}
"#;

/// Records about `zones` zones, `ring_zones` per ring (whole tiles of five rings, at most
/// a Blackhole chip's 140 tiles), into `dir`.
pub fn write(dir: &Path, zones: u64, ring_zones: u64) -> Result<LongRun> {
    write_shaped(dir, zones, ring_zones, false)
}

/// [`write`], heavy in point records and values: each loop's `compute` zone is a value
/// zone (its value the iteration) and each loop records a `row` data point, so a Tracy
/// stream has about two messages for every three zones.
pub fn write_with_messages(dir: &Path, zones: u64, ring_zones: u64) -> Result<LongRun> {
    write_shaped(dir, zones, ring_zones, true)
}

fn write_shaped(dir: &Path, zones: u64, ring_zones: u64, messages: bool) -> Result<LongRun> {
    let tiles = grid(zones.div_ceil(ring_zones * 5) as usize)?;
    let mut image = ImageBuilder::new(ARCH, 1, tiles.clone());
    let replay = Replay::new(ARCH, tiles.clone());
    let mut drained = Vec::new();
    let mut sites: Vec<Option<Vec<String>>> = vec![None; Risc::COUNT];
    let mut made = 0;
    for (t, tile) in tiles.iter().enumerate() {
        let mut recorded = Vec::new();
        for risc in Risc::ALL {
            let (l1, rec, ring_sites, n) = produce(
                risc,
                t as u64 * 5 + risc.index() as u64,
                ring_zones,
                messages,
            );
            made += n;
            image.put_ring(0, *tile, risc, &l1);
            recorded.push((risc, rec));
            sites[risc.index()].get_or_insert(ring_sites);
        }
        // What a consumer drains of the rings, as `ttprof run` saves it in its snapshot.
        replay.load_tile(t, recorded);
        for (risc, bytes) in drain_tile(&replay)?.1 {
            drained.push((*tile, risc, bytes));
        }
    }
    let img = dir.join("device.img");
    image.write(&img)?;
    drop(image);
    let mem = crate::devmem::open(&img, false, &crate::inputs::Inputs::none())?;
    let snap = Snapshot::like(mem.as_ref())?;
    for region in [profiler::control_region(), profiler::rings_region()] {
        snap.capture_region(mem.as_ref(), region.start, region.size)?;
    }
    for (tile, risc, bytes) in &drained {
        snap.add_drained(0, *tile, *risc, bytes)?;
    }
    drop(drained);
    let snapshot = dir.join("device.snap");
    snap.save(&snapshot, &crate::inputs::Inputs::none())?;
    drop(mem);
    let _ = std::fs::remove_file(&img);
    let cores: Vec<[u8; 2]> = tiles.iter().map(|t| [t.x, t.y]).collect();
    let mut bindings = Vec::new();
    for risc in Risc::ALL {
        let elf = format!("k-{}.elf", risc.ident());
        let list = sites[risc.index()].clone().unwrap_or_default();
        write_kernel_elf(&dir.join(&elf), &ElfSpec::kernel(ARCH, risc, list))?;
        bindings.push(KernelBinding {
            risc: risc.name().into(),
            elf: elf.into(),
            cores: cores.clone(),
        });
    }
    let oplog = dir.join("ops.jsonl");
    let mut w = OpLogWriter::create(&oplog, &crate::inputs::Inputs::none())?;
    for run in 1..=LAUNCHES {
        w.op(&OpRecord {
            run_id: run,
            device: 0,
            op_code: format!("Op{run}"),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![],
            outputs: vec![],
            host_start_ns: 0,
            host_end_ns: 0,
            kernels: bindings.clone(),
            counters: Vec::new(),
        })?;
    }
    drop(w);
    Ok(LongRun {
        snapshot,
        oplog,
        zones: made,
    })
}

/// The first `n` worker tiles of a Blackhole chip.
fn grid(n: usize) -> Result<Vec<NocCoord>> {
    let (cols, rows) = ARCH.worker_grid();
    let all: Vec<NocCoord> = (0..rows)
        .flat_map(|r| (0..cols).filter_map(move |c| ARCH.worker_noc(c, r)))
        .collect();
    if n > all.len() {
        return Err(Error::Argument {
            what: format!("{n} tiles: {ARCH} has {} worker tiles", all.len()),
        });
    }
    Ok(all[..n].to_vec())
}

/// Drains the replayed tile until its recorded streams end, as a capture does: the
/// readout and each RISC's decoded payload. A replay whose rings stop being consumed (the
/// drainer refused a ring's control words) is an error, not a hang.
pub fn drain_tile(replay: &Replay) -> Result<(Readout, BTreeMap<Risc, Vec<u8>>)> {
    let mut d = Drainer::attach(
        replay,
        DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )?;
    d.keep_payload();
    d.probe_every(Duration::from_secs(3600));
    let mut payload: BTreeMap<Risc, Vec<u8>> = BTreeMap::new();
    let mut collect = |d: &mut Drainer| {
        for (id, bytes) in d.take_payload() {
            payload
                .entry(id.risc)
                .or_default()
                .extend_from_slice(&bytes);
        }
        drop(d.take_zones());
    };
    let mut idle = 0;
    while replay.step() {
        let s = d.drain()?;
        collect(&mut d);
        idle = if s.payload_bytes == 0 { idle + 1 } else { 0 };
        if idle > 2 {
            return Err(Error::Internal(format!("replay stuck: {:?}", d.issues())));
        }
    }
    d.drain_final()?;
    collect(&mut d);
    Ok((d.finish()?, payload))
}

/// One ring of about `ring_zones` zones (see [`record_ring`]).
fn produce(
    risc: Risc,
    seed: u64,
    ring_zones: u64,
    messages: bool,
) -> (Vec<u8>, RecordedRing, Vec<String>, u64) {
    let per_launch = ring_zones / LAUNCHES as u64;
    record(risc, seed, (per_launch - 2) / 3, messages)
}

/// One ring recorded by the runtime's real producer (`ttprof_rt::sim::Sim`) with a consumer
/// draining it as it fills: ten launches of `[FW [KERNEL [tile-loop [wait-data] [compute]]
/// x iterations]]`, times drawn from `seed`. Returns the ring's final L1, what its consumer
/// saw, the kernel's sites (JSON, as the ELF holds them) and the zones recorded.
pub fn record_ring(
    risc: Risc,
    seed: u64,
    iterations: u64,
) -> (Vec<u8>, RecordedRing, Vec<String>, u64) {
    record(risc, seed, iterations, false)
}

/// [`record_ring`]; with `messages`, `compute` is a value zone and each loop records a
/// data point ([`write_with_messages`]).
fn record(
    risc: Risc,
    seed: u64,
    iterations: u64,
    messages: bool,
) -> (Vec<u8>, RecordedRing, Vec<String>, u64) {
    let sim = Sim::install(ARCH, risc, 1_000 + seed * 7);
    sim.set_tick(1);
    for (off, v) in [
        (tile::MAGIC, profiler::TILE_MAGIC),
        (tile::VERSION, profiler::VERSION),
        (tile::ARCH, ARCH.id()),
        (
            tile::CONTROL,
            tile::POLICY_BLOCK << tile::CONTROL_POLICY_SHIFT,
        ),
        (tile::CONSUMER, 1),
    ] {
        sim.write_u32(profiler::TILE_BLOCK + off, v);
    }
    let rec = std::rc::Rc::new(std::cell::RefCell::new(RecordedRing::default()));
    let r2 = rec.clone();
    sim.set_consumer(move |l1| drain(l1, risc, &mut r2.borrow_mut()));
    let mut rng = Rng::new(seed);
    let mut zones = 0;
    for run in 1..=LAUNCHES {
        sim.advance(1000 + rng.below(5000));
        sim.begin_launch(run);
        {
            let _fw = match risc {
                Risc::Brisc => zone!("BRISC-FW"),
                Risc::Ncrisc => zone!("NCRISC-FW"),
                _ => zone!("TRISC-FW"),
            };
            sim.advance(200);
            let _kernel = match risc {
                Risc::Brisc => zone!("BRISC-KERNEL"),
                Risc::Ncrisc => zone!("NCRISC-KERNEL"),
                _ => zone!("TRISC-KERNEL"),
            };
            for i in 0..iterations {
                let _tile = zone!("tile-loop");
                sim.advance(rng.below(8));
                {
                    let _w = zone!("wait-data");
                    sim.advance(rng.below(40));
                }
                if messages {
                    data!("row", i);
                    let _c = value_zone!("compute", i as u32);
                    sim.advance(rng.below(60));
                } else {
                    let _c = zone!("compute");
                    sim.advance(rng.below(60));
                }
            }
        }
        sim.end_launch();
        zones += 2 + 3 * iterations;
    }
    let mut l1 = sim.l1();
    drain(&mut l1, risc, &mut rec.borrow_mut());
    let mut out = std::mem::take(&mut *rec.borrow_mut());
    out.stalls = sim.read_u32(profiler::ring_word(risc, ring::STALLS));
    out.dropped = sim.read_u32(profiler::ring_word(risc, ring::DROPPED));
    out.run_id = LAUNCHES;
    let sites = sim.sites();
    let _ = Sim::install(ARCH, risc, 0); // releases the consumer's share of `rec`
    (l1, out, sites, zones)
}

/// The producer's consumer: appends `[TAIL, HEAD)` to the recording, notes `HEAD`, frees
/// the space.
fn drain(l1: &mut [u8], risc: Risc, rec: &mut RecordedRing) {
    let word = |l1: &[u8], a: u32| {
        u32::from_le_bytes(l1[a as usize..a as usize + 4].try_into().unwrap_or([0; 4]))
    };
    let (head, tail) = (
        word(l1, profiler::ring_word(risc, ring::HEAD)),
        word(l1, profiler::ring_word(risc, ring::TAIL)),
    );
    if head == tail {
        return;
    }
    let data = profiler::ring_data(risc);
    if rec.heads.is_empty() {
        rec.start = tail;
    }
    for c in tail..head {
        rec.bytes.push(l1[(data.start + c % data.size) as usize]);
    }
    rec.heads.push(head);
    let t = profiler::ring_word(risc, ring::TAIL) as usize;
    l1[t..t + 4].copy_from_slice(&head.to_le_bytes());
}
