//! Helpers shared by the integration tests: a host-side consumer for a simulated core, and
//! random nested zone workloads with their expected spans.
#![allow(dead_code)]

use riscv_linker::profiler::{self, ring, tile};
use riscv_linker::Risc;
use ttprof::decode::{RecordKind, Records};
use ttprof::readout::span::{Span, SpanDecoder, SpanStats};
use ttprof::testing::Rng;
use ttprof_rt::sim::Sim;

pub fn word(l1: &[u8], addr: u32) -> u32 {
    u32::from_le_bytes(l1[addr as usize..addr as usize + 4].try_into().unwrap())
}

pub fn set_word(l1: &mut [u8], addr: u32, v: u32) {
    l1[addr as usize..addr as usize + 4].copy_from_slice(&v.to_le_bytes());
}

/// The host side of one simulated ring: drains `[TAIL, HEAD)` with the readout's span
/// decoder and frees it.
pub struct Host {
    pub risc: Risc,
    pub span: SpanDecoder,
    pub records: Records,
    pub stats: SpanStats,
}

impl Host {
    pub fn new(risc: Risc) -> Host {
        Host {
            risc,
            span: SpanDecoder::default(),
            records: Records::new(),
            stats: SpanStats::default(),
        }
    }

    pub fn drain(&mut self, l1: &mut [u8]) {
        let blk = profiler::ring_block(self.risc);
        let (head, tail, cap) = (
            word(l1, blk + ring::HEAD),
            word(l1, blk + ring::TAIL),
            word(l1, blk + ring::CAPACITY),
        );
        let base = profiler::ring_data(self.risc).start as usize;
        let read = |off: u32, w: &mut [u32]| {
            for (i, x) in w.iter_mut().enumerate() {
                *x = word(l1, (base + off as usize + 4 * i) as u32);
            }
            Ok(())
        };
        self.span
            .decode(
                Span {
                    tail,
                    head,
                    capacity: cap,
                },
                read,
                &mut self.records,
                &mut self.stats,
            )
            .unwrap_or_else(|e| panic!("published bytes decode: {e}"));
        set_word(l1, blk + ring::TAIL, head);
    }

    /// Drains a thread's simulated core from outside the producer (a host poll).
    pub fn poll(&mut self, sim: &Sim) {
        let mut l1 = sim.l1();
        self.drain(&mut l1);
        let tail = profiler::ring_word(self.risc, ring::TAIL);
        sim.write_u32(tail, word(&l1, tail));
    }

    /// `(site, start, end)` of every zone decoded.
    pub fn zones(&self) -> Vec<(u16, u64, u64)> {
        let r = &self.records;
        (0..r.len())
            .filter(|&i| matches!(r.kind()[i], RecordKind::Zone | RecordKind::ValueZone))
            .map(|i| (r.site()[i], r.start_at(i), r.end_at(i)))
            .collect()
    }
}

/// Writes a valid tile block as a launcher does; `policy` is `tile::POLICY_*`.
pub fn launcher_init(sim: &Sim, policy: u32, consumer: bool) {
    sim.write_u32(profiler::TILE_BLOCK + tile::MAGIC, profiler::TILE_MAGIC);
    sim.write_u32(profiler::TILE_BLOCK + tile::VERSION, profiler::VERSION);
    sim.write_u32(profiler::TILE_BLOCK + tile::ARCH, sim.arch().id());
    sim.write_u32(
        profiler::TILE_BLOCK + tile::CONTROL,
        policy << tile::CONTROL_POLICY_SHIFT,
    );
    sim.write_u32(profiler::TILE_BLOCK + tile::CONSUMER, consumer as u32);
}

/// `(name, start, end)` of zones.
pub type Spans = Vec<(&'static str, u64, u64)>;
/// The same with owned names.
pub type NamedSpans = Vec<(String, u64, u64)>;

/// Shapes of random workloads.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Largest gap before a zone opens, as a power of two (gaps are log-uniform below it).
    pub gap_bits: u32,
    /// Largest extra length of a zone beyond its children, as a power of two.
    pub len_bits: u32,
    pub max_depth: u32,
    pub max_children: u64,
}

/// Runs a random tree of nested zones (three sites: `a`, `b`, `c`); returns each zone's
/// `(name, start, end)` in close order (the order the ring holds them).
pub fn random_zones(
    sim: &Sim,
    rng: &mut Rng,
    shape: Shape,
    depth: u32,
    out: &mut Vec<(&'static str, u64, u64)>,
) {
    let children = if depth >= shape.max_depth {
        0
    } else {
        rng.below(shape.max_children + 1)
    };
    for _ in 0..children.max(1) {
        let gap_bits = rng.below(shape.gap_bits as u64 + 1) as u32;
        sim.advance(rng.bits(gap_bits));
        let start = sim.clock();
        let (z, name) = match rng.below(3) {
            0 => (ttprof_rt::zone!("a"), "a"),
            1 => (ttprof_rt::zone!("b"), "b"),
            _ => (ttprof_rt::zone!("c"), "c"),
        };
        if children > 0 {
            random_zones(sim, rng, shape, depth + 1, out);
        }
        let len_bits = rng.below(shape.len_bits as u64 + 1) as u32;
        sim.advance(rng.bits(len_bits));
        let end = sim.clock();
        drop(z);
        out.push((name, start, end));
    }
}

/// The name of a site in the simulator's table.
pub fn site_name(sim: &Sim, id: u16) -> String {
    let meta = &sim.sites()[id as usize];
    ttprof::sites::SiteMeta::parse(meta).unwrap().name
}
