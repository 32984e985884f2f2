//! Streaming: a producer that keeps writing (the real runtime on `ttprof_rt::sim::Sim`,
//! Block policy) and a [`Drainer`] over a mapped device image that drains whenever the
//! producer waits and at random polls. Across hundreds of drains and ring wraps nothing is
//! lost or duplicated, and each ring's decoder state carries over between drains.

mod common;

use common::*;
use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::{Arch, NocCoord, Risc};
use std::cell::RefCell;
use std::rc::Rc;
use ttprof::decode::{RecordKind, Records};
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::readout::{DrainOptions, Drainer};
use ttprof::testing::{ImageBuilder, Rng};
use ttprof_rt::sim::Sim;

const RISC: Risc = Risc::Ncrisc;
const TILE: NocCoord = NocCoord::new(3, 2);

/// The host: the image standing in for the device, the drainer, and what it took so far.
struct Stream {
    mem: &'static MappedImage,
    drainer: Drainer<'static>,
    taken: Records,
    drains: u32,
}

impl Stream {
    /// Publishes the simulated core's profiler words to the image, drains, and hands the
    /// consumer position back to the core.
    fn sync_and_drain(&mut self, l1: &mut [u8]) {
        self.sync(l1);
        self.drainer.drain().unwrap();
        for (_, r) in self.drainer.take_records() {
            self.taken.append(&r);
        }
        self.drains += 1;
        let tail = profiler::ring_word(RISC, ring::TAIL);
        set_word(l1, tail, self.mem.read_u32(0, TILE, tail).unwrap());
    }

    /// Publishes the simulated core's profiler words (all but `TAIL`) to the image.
    fn sync(&self, l1: &[u8]) {
        let blocks = [
            (profiler::TILE_BLOCK, profiler::TILE_BLOCK_SIZE),
            (profiler::ring_block(RISC), profiler::RING_BLOCK_SIZE),
            (
                profiler::ring_data(RISC).start,
                profiler::ring_data(RISC).size,
            ),
        ];
        let tail = profiler::ring_word(RISC, ring::TAIL);
        for (start, size) in blocks {
            for a in (start..start + size).step_by(4).filter(|&a| a != tail) {
                self.mem.write_u32(0, TILE, a, word(l1, a)).unwrap();
            }
        }
    }
}

/// A device image with the tile, a simulated producer whose launcher initialised the tile
/// (Block, consumer expected) but whose kernel has not run yet (its ring is discovered by a
/// later drain), and a consuming drainer attached to the image.
fn attached(
    name: &str,
) -> (
    std::path::PathBuf,
    &'static MappedImage,
    Sim,
    Drainer<'static>,
) {
    let dir = ttprof::testing::temp_dir(name);
    let path = dir.join("dev.img");
    ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1), TILE])
        .write(&path)
        .unwrap();
    let mem: &'static MappedImage = Box::leak(Box::new(
        MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap(),
    ));
    let sim = Sim::install(Arch::WormholeB0, RISC, 50);
    sim.set_tick(0);
    launcher_init(&sim, tile::POLICY_BLOCK, true);
    for a in (profiler::TILE_BLOCK..profiler::TILE_BLOCK + profiler::TILE_BLOCK_SIZE).step_by(4) {
        mem.write_u32(0, TILE, a, sim.read_u32(a)).unwrap();
    }
    let drainer = Drainer::attach(
        mem,
        DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )
    .unwrap();
    (dir, mem, sim, drainer)
}

#[test]
fn a_drainer_streams_a_blocking_producer_without_loss_or_duplicates() {
    let (dir, mem, sim, drainer) = attached("stream");
    let stream = Rc::new(RefCell::new(Stream {
        mem,
        drainer,
        taken: Records::new(),
        drains: 0,
    }));
    let s2 = stream.clone();
    sim.set_consumer(move |l1| s2.borrow_mut().sync_and_drain(l1));

    let mut rng = Rng::new(42);
    let shape = Shape {
        gap_bits: 8,
        len_bits: 9,
        max_depth: 4,
        max_children: 3,
    };
    let mut expected = Vec::new();
    for run in 1..=4 {
        assert!(sim.begin_launch(run));
        for _ in 0..400 {
            random_zones(&sim, &mut rng, shape, 0, &mut expected);
            if rng.percent(3) {
                let mut l1 = sim.l1();
                stream.borrow_mut().sync_and_drain(&mut l1);
                let tail = profiler::ring_word(RISC, ring::TAIL);
                sim.write_u32(tail, word(&l1, tail));
            }
        }
        sim.end_launch();
    }
    let mut l1 = sim.l1();
    stream.borrow_mut().sync_and_drain(&mut l1);

    let sites: Vec<String> = sim
        .sites()
        .iter()
        .map(|m| ttprof::sites::SiteMeta::parse(m).unwrap().name)
        .collect();
    // A fresh core on this thread releases the old one's consumer (and its share of `stream`).
    let _ = Sim::install(Arch::WormholeB0, RISC, 0);
    let stream = Rc::try_unwrap(stream)
        .ok()
        .expect("the simulator released its consumer")
        .into_inner();
    let r = &stream.taken;
    let mut got = Vec::new();
    let mut stalls = 0u32;
    for i in 0..r.len() {
        if r.kind()[i] == RecordKind::Zone {
            match sites[r.site()[i] as usize].as_str() {
                "PROFILER-STALL" => stalls += 1,
                n => got.push((n.to_string(), r.start_at(i), r.end_at(i))),
            }
        }
    }
    let want: Vec<(String, u64, u64)> = expected
        .iter()
        .map(|(n, s, e)| (n.to_string(), *s, *e))
        .collect();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want, "every zone exactly once, in order");
    assert!(
        stream.drains > 50 && stalls > 0,
        "{} drains, {stalls} stalls",
        stream.drains
    );
    let readout = stream.drainer.finish().unwrap();
    assert_eq!(readout.rings().len(), 1);
    assert_eq!(readout.rings()[0].stalls, stalls);
    assert!(
        readout.rings()[0].payload_bytes > 20 * profiler::RING_CAPACITY as u64,
        "many wraps"
    );
    assert_eq!(
        mem.read_u32(0, TILE, profiler::TILE_BLOCK + tile::CONSUMER)
            .unwrap(),
        0,
        "detached"
    );
    assert!(readout.issues().is_empty(), "{:?}", readout.issues());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that starts after the consumer attached has its ring found by a drain while it
/// runs; when it ends before the next periodic drain, the last drain ([`Drainer::finish`])
/// must still read what it published since and its final `STATE`. Regression: the control
/// words read when the ring was found were taken as current ever after, so the end skipped
/// the ring: every record after that drain was lost (the FW/KERNEL wrapper zones among them)
/// and the readout said the kernel was still running (`ttprof run` of a pipeline with a slow
/// stage at the default `--drain-every-cycles 250000`, where one drain fell inside the kernels).
#[test]
fn a_ring_found_by_the_last_drain_before_its_kernel_ends_is_read_to_the_end() {
    let (dir, mem, sim, drainer) = attached("stream-found-late");
    let mut stream = Stream {
        mem,
        drainer,
        taken: Records::new(),
        drains: 0,
    };

    let mut rng = Rng::new(7);
    let shape = Shape {
        gap_bits: 6,
        len_bits: 8,
        max_depth: 2,
        max_children: 2,
    };
    let mut expected = Vec::new();
    assert!(sim.begin_launch(1));
    for _ in 0..10 {
        random_zones(&sim, &mut rng, shape, 0, &mut expected);
    }
    // The one drain while the kernel runs: it finds the ring (and reads the Run record).
    let mut l1 = sim.l1();
    stream.sync_and_drain(&mut l1);
    let tail = profiler::ring_word(RISC, ring::TAIL);
    sim.write_u32(tail, word(&l1, tail));
    assert!(
        !stream.taken.is_empty(),
        "the first drain read the Run record"
    );
    for _ in 0..10 {
        random_zones(&sim, &mut rng, shape, 0, &mut expected);
    }
    // The runtime's wrappers, written as the kernel exits.
    let kernel_end = sim.clock();
    sim.advance(30);
    sim.record_span(
        ttprof_rt::__site!(ttprof_rt, zone, "NCRISC-KERNEL"),
        0,
        kernel_end,
    );
    sim.record_span(
        ttprof_rt::__site!(ttprof_rt, zone, "NCRISC-FW"),
        0,
        sim.clock(),
    );
    sim.end_launch();
    // The kernel ended; nothing drains again before the end.
    stream.sync(&sim.l1());

    let sites: Vec<String> = sim
        .sites()
        .iter()
        .map(|m| ttprof::sites::SiteMeta::parse(m).unwrap().name)
        .collect();
    let readout = stream.drainer.finish().unwrap();
    assert_eq!(readout.rings().len(), 1);
    let ring = &readout.rings()[0];
    assert_eq!(
        ring.state & ring::STATE_RUNNING,
        0,
        "the final STATE is read: the kernel exited"
    );
    assert!(readout.issues().is_empty(), "{:?}", readout.issues());
    let mut all = stream.taken;
    all.append(&ring.records);
    let mut got = Vec::new();
    let mut wrappers = 0;
    for i in 0..all.len() {
        if all.kind()[i] == RecordKind::Zone {
            match sites[all.site()[i] as usize].as_str() {
                "NCRISC-KERNEL" | "NCRISC-FW" => wrappers += 1,
                n => got.push((n.to_string(), all.start_at(i), all.end_at(i))),
            }
        }
    }
    let want: Vec<(String, u64, u64)> = expected
        .iter()
        .map(|(n, s, e)| (n.to_string(), *s, *e))
        .collect();
    assert_eq!(
        got, want,
        "every zone exactly once, those after the drain included"
    );
    assert_eq!(
        wrappers, 2,
        "the wrapper zones written as the kernel exits are read"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
