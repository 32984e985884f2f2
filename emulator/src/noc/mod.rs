//! The network on chip: NIU registers, transfers between tiles and DRAM, and their timing.
//!
//! * [`niu`]: each tile's two NIUs as kernels program them (command buffers, `CMD_CTRL`,
//!   status counters) and the queue of events the NoC delivers to the tile.
//! * [`route`]: dimension-ordered routes on the torus (NoC0 east then south, NoC1 north
//!   then west) and the resources (links, NIU ports, DRAM channels) a transfer crosses.
//! * [`flow`]: the bandwidth model: every data transfer is a flow whose rate is the
//!   max-min fair share of the resources it crosses, recomputed as flows start and end.
//! * [`dram`]: the contents of each chip's DRAM channels.
//!
//! ## Time
//!
//! Tiles run on host threads independently of each other for an *epoch* of
//! [`NocConfig::epoch`] cycles; then the device collects the requests every tile issued,
//! and [`ChipNoc`] simulates the transfers up to the epoch's end and hands each tile the
//! events (data landing, counter changes) that happen to it, with their cycles. Nothing
//! issued later can change what happened before the epoch's end, because every transfer
//! starts after its issue; and the NoC work is done on one thread in (tile, issue) order,
//! so the result is the same on any number of host threads. An effect due less than an
//! epoch after its issue (a small write to a neighbour lands ~20 cycles after issue, a
//! write's "sent" counter moves a few cycles after issue) is delivered at the epoch's
//! end: it is late by at most one epoch. A read's data is taken from the remote L1 or
//! DRAM when the NoC processes the request (at the end of the epoch it was issued in);
//! a DRAM write lands in DRAM when its transfer completes.
//!
//! Epochs are used only while the NoC is in use: from the start of a run if a loaded
//! kernel's code names an NIU register page (a `lui` of `0xFFB2x`/`0xFFB3x`), or from the
//! end of the epoch in which a core first touched an NIU register. A run with no NoC
//! traffic runs exactly as before, at full speed.
//!
//! ## Latency and bandwidth
//!
//! A request's header crosses `niu_to_router + hops * router_hop + router_to_niu`
//! cycles. A read then waits `l1_read_cycles` (or `dram_read_cycles`) at the target before
//! its data flows back; a write's data flows at once and, if non-posted, is acknowledged
//! `write_ack_cycles` (DRAM: `dram_write_cycles`) after it landed. Data moves as a flow of
//! `len + packets * flit` bytes (one header flit per packet; requests longer than
//! [`NocConfig::max_packet_bytes`] are split by the NIU) at the max-min fair rate over
//! the source NIU's injection port, every link on the route, the destination's ejection
//! port and the DRAM channel if any. Single-flit requests (inline writes, atomics) only pay
//! latency. All parameters are in [`NocConfig`]; the defaults and where they come from are
//! in DESIGN.md ("The NoC model").

pub(crate) mod dram;
pub(crate) mod flow;
pub(crate) mod niu;
pub(crate) mod route;

use dram::Dram;
use flow::{FlowId, FlowSpec, Flows};
use niu::{Endpoint, EventKind, Op, Payload, Request};
use riscv_linker::noc::{self as map, counter};
use riscv_linker::{Arch, NocCoord};
use route::{Port, Resources};
use std::collections::HashMap;
use std::sync::Arc;

/// The NoC and DRAM timing model (cycles of the chip's AICLK, bytes per cycle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NocConfig {
    /// Model the NoC at all. Off: the NIU register windows are plain storage and nothing
    /// moves (the emulator's behaviour before the NoC existed).
    pub enabled: bool,
    /// Cycles the tiles run between two NoC exchanges while the NoC is in use (see the
    /// module docs: effects due sooner than this after their issue are late by up to it).
    pub epoch: u32,
    /// Bytes one flit carries (32 Wormhole, 64 Blackhole).
    pub flit_bytes: u32,
    /// Largest packet payload; longer requests are split into packets of this size.
    pub max_packet_bytes: u32,
    /// Bandwidth of one link direction.
    pub link_bytes_per_cycle: f64,
    /// Bandwidth of an NIU's injection port and of its ejection port.
    pub niu_bytes_per_cycle: f64,
    /// Bandwidth of one DRAM channel (reads and writes share it).
    pub dram_bytes_per_cycle: f64,
    /// Share of the unicast rate a multicast achieves (every destination must accept each
    /// flit before the next moves on).
    pub multicast_efficiency: f64,
    /// NIU to its router.
    pub niu_to_router: u32,
    /// Router to the next router.
    pub router_hop: u32,
    /// Router to its NIU.
    pub router_to_niu: u32,
    /// Cycles `CMD_CTRL` reads busy after an issue.
    pub issue_cycles: u32,
    /// A read request's arrival at a worker's NIU to its first response flit.
    pub l1_read_cycles: u32,
    /// Data landed in a worker's L1 to the acknowledgement leaving.
    pub write_ack_cycles: u32,
    /// An atomic's arrival to its response leaving.
    pub atomic_cycles: u32,
    /// A read request's arrival at a DRAM endpoint to its first response flit.
    pub dram_read_cycles: u32,
    /// Data landed in DRAM to the acknowledgement leaving.
    pub dram_write_cycles: u32,
}

impl NocConfig {
    /// The defaults for `arch` (DESIGN.md, "The NoC model", says where each comes from).
    pub fn for_arch(arch: Arch) -> NocConfig {
        match arch {
            Arch::WormholeB0 => NocConfig {
                enabled: true,
                epoch: 32,
                flit_bytes: 32,
                max_packet_bytes: 8192,
                link_bytes_per_cycle: 30.0,
                niu_bytes_per_cycle: 30.0,
                dram_bytes_per_cycle: 23.5,
                multicast_efficiency: 0.52,
                niu_to_router: 5,
                router_hop: 9,
                router_to_niu: 5,
                issue_cycles: 20,
                l1_read_cycles: 79,
                write_ack_cycles: 40,
                atomic_cycles: 40,
                dram_read_cycles: 65,
                dram_write_cycles: 120,
            },
            Arch::Blackhole => NocConfig {
                enabled: true,
                epoch: 32,
                flit_bytes: 64,
                max_packet_bytes: 16384,
                link_bytes_per_cycle: 60.9,
                niu_bytes_per_cycle: 60.9,
                dram_bytes_per_cycle: 36.0,
                multicast_efficiency: 0.4,
                niu_to_router: 5,
                router_hop: 9,
                router_to_niu: 5,
                issue_cycles: 36,
                l1_read_cycles: 75,
                write_ack_cycles: 40,
                atomic_cycles: 40,
                dram_read_cycles: 77,
                dram_write_cycles: 120,
            },
        }
    }

    /// Header latency from `from` to `to` (`hops` router-to-router links).
    pub(crate) fn path(&self, hops: u32) -> u64 {
        (self.niu_to_router + hops * self.router_hop + self.router_to_niu) as u64
    }

    /// Bytes on the wire for a payload of `len` bytes: the payload plus a header flit for
    /// each packet the NIU splits it into.
    pub(crate) fn wire_bytes(&self, len: u32) -> f64 {
        let packets = len.div_ceil(self.max_packet_bytes.max(1)).max(1);
        len as f64 + (packets * self.flit_bytes) as f64
    }
}

/// What to do when a flow ends.
#[derive(Debug)]
enum Completion {
    Read { tile: usize, src: NocCoord, from: Endpoint, noc: u8, to: u32, data: Arc<[u8]>, txn: u32 },
    Write {
        tile: usize,
        src: NocCoord,
        noc: u8,
        txn: u32,
        posted: bool,
        dests: Vec<(NocCoord, Option<Endpoint>)>,
        addr: u64,
        payload: Payload,
    },
}

/// An event for a tile (global index).
pub(crate) type Delivery = (usize, u64, EventKind);

/// The NoC state of one chip: flows in flight and the DRAM.
#[derive(Debug)]
pub(crate) struct ChipNoc {
    pub cfg: NocConfig,
    res: Resources,
    flows: Flows,
    pub dram: Dram,
    next_id: FlowId,
    pending: HashMap<FlowId, Completion>,
    /// Global index of each emulated tile of the chip, by NoC0 coordinates.
    pub tiles: HashMap<NocCoord, usize>,
    /// Requests processed and bytes moved, for statistics.
    pub requests: u64,
    pub bytes: u64,
}

impl ChipNoc {
    pub fn new(arch: Arch, cfg: NocConfig, tiles: HashMap<NocCoord, usize>) -> ChipNoc {
        let (w, h) = arch.noc_grid();
        let channels = map::dram::channels(arch).len() as u32;
        let res = Resources { width: w, height: h, dram_channels: channels };
        let mut cap = vec![0.0; res.count()];
        for (i, c) in cap.iter_mut().enumerate() {
            let r = i as u32;
            *c = if res.is_dram(r) {
                cfg.dram_bytes_per_cycle
            } else if res.is_link(r) {
                cfg.link_bytes_per_cycle
            } else {
                cfg.niu_bytes_per_cycle
            };
        }
        ChipNoc {
            cfg,
            res,
            flows: Flows::new(cap),
            dram: Dram::default(),
            next_id: 0,
            pending: HashMap::new(),
            tiles,
            requests: 0,
            bytes: 0,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.flows.is_idle()
    }

    fn lat(&self, noc: u8, from: NocCoord, to: NocCoord) -> u64 {
        self.cfg.path(self.res.hops(noc, from, to))
    }

    fn access_cycles(&self, e: Endpoint, read: bool) -> u64 {
        (match (e, read) {
            (Endpoint::Tile(_), true) => self.cfg.l1_read_cycles,
            (Endpoint::Tile(_), false) => self.cfg.write_ack_cycles,
            (Endpoint::Dram { .. }, true) => self.cfg.dram_read_cycles,
            (Endpoint::Dram { .. }, false) => self.cfg.dram_write_cycles,
        }) as u64
    }

    /// Takes one request issued on this chip. `read_l1(tile, addr, len)` reads another
    /// tile's L1 (tiles are paused). Latency-only effects go straight to `out`.
    pub fn submit(&mut self, r: Request, read_l1: &dyn Fn(usize, u32, u32) -> Vec<u8>, out: &mut Vec<Delivery>) {
        self.requests += 1;
        let (noc, src, tile, t0) = (r.noc, r.src, r.tile, r.accepted);
        let ctr = |index: u32, delta: i32| EventKind::Counter { noc, index: index as u8, delta };
        match r.op {
            Op::Read { from, addr, len, to } => {
                let data: Arc<[u8]> = match from {
                    Endpoint::Tile(c) => read_l1(self.tiles[&c], addr as u32, len).into(),
                    Endpoint::Dram { channel, .. } => {
                        let mut v = vec![0u8; len as usize];
                        self.dram.read(channel, addr, &mut v);
                        v.into()
                    }
                };
                let start = t0 + self.lat(noc, src, from.coord()) + self.access_cycles(from, true);
                let mut resources = vec![self.res.port(noc, from.coord(), Port::Inject)];
                self.res.route(noc, from.coord(), src, &mut resources);
                resources.push(self.res.port(noc, src, Port::Eject));
                if let Endpoint::Dram { channel, .. } = from {
                    resources.push(self.res.dram(channel));
                }
                let queue = queue_key(tile, noc, 0, from.coord());
                self.start_flow(start, len, resources, 1.0, queue, Completion::Read {
                    tile,
                    src,
                    from,
                    noc,
                    to,
                    data,
                    txn: r.txn,
                });
            }
            Op::Write { dests, addr, payload, posted, inline, mcast } => {
                if inline {
                    let sent = t0 + self.cfg.niu_to_router as u64;
                    let words = 1;
                    self.sent_events(tile, noc, r.txn, posted, words, sent, out);
                    let mut last_ack = sent;
                    for &(c, e) in &dests {
                        let land = t0 + self.lat(noc, src, c) + 1;
                        self.land(e, addr, &payload, land, out);
                        if !posted {
                            let ack = land + e.map_or(self.cfg.write_ack_cycles as u64, |e| self.access_cycles(e, false))
                                + self.lat(noc, c, src);
                            out.push((tile, ack, ctr(counter::WR_ACK_RECEIVED, 1)));
                            last_ack = last_ack.max(ack);
                        }
                    }
                    if !posted {
                        out.push((tile, last_ack, ctr(counter::reqs_outstanding_id(r.txn), -1)));
                    }
                    return;
                }
                let len = payload.data.len() as u32;
                let mut resources = vec![self.res.port(noc, src, Port::Inject)];
                for &(c, e) in &dests {
                    self.res.route(noc, src, c, &mut resources);
                    resources.push(self.res.port(noc, c, Port::Eject));
                    if let Some(Endpoint::Dram { channel, .. }) = e {
                        resources.push(self.res.dram(channel));
                    }
                }
                resources.sort_unstable();
                resources.dedup();
                let eff = if mcast { self.cfg.multicast_efficiency } else { 1.0 };
                let queue = queue_key(tile, noc, 1, dests[0].0);
                self.start_flow(t0, len, resources, eff, queue, Completion::Write {
                    tile,
                    src,
                    noc,
                    txn: r.txn,
                    posted,
                    dests,
                    addr,
                    payload,
                });
            }
            Op::Atomic { to, addr, incr, wrap, posted } => {
                let arrive = t0 + self.lat(noc, src, to.coord());
                if let Endpoint::Tile(c) = to {
                    out.push((self.tiles[&c], arrive, EventKind::Atomic { addr: addr as u32, incr, wrap }));
                }
                if !posted {
                    let resp = arrive + self.cfg.atomic_cycles as u64 + self.lat(noc, to.coord(), src);
                    out.push((tile, resp, ctr(counter::ATOMIC_RESP_RECEIVED, 1)));
                    out.push((tile, resp, ctr(counter::reqs_outstanding_id(r.txn), -1)));
                }
            }
        }
    }

    fn start_flow(&mut self, start: u64, len: u32, resources: Vec<u32>, eff: f64, queue: u64, done: Completion) {
        self.next_id += 1;
        let id = self.next_id;
        self.bytes += len as u64;
        let cap = self.cfg.niu_bytes_per_cycle.min(self.cfg.link_bytes_per_cycle) * eff;
        self.flows.submit(id, FlowSpec { start: start as f64, bytes: self.cfg.wire_bytes(len), resources, cap, queue });
        self.pending.insert(id, done);
    }

    /// Counter events of a write whose last byte left the source at `sent`.
    #[allow(clippy::too_many_arguments)]
    fn sent_events(&self, tile: usize, noc: u8, txn: u32, posted: bool, words: u32, sent: u64, out: &mut Vec<Delivery>) {
        let ctr = |index: u32, delta: i32| EventKind::Counter { noc, index: index as u8, delta };
        let (req, data) = if posted {
            (counter::POSTED_WR_REQ_SENT, counter::POSTED_WR_DATA_WORD_SENT)
        } else {
            (counter::NONPOSTED_WR_REQ_SENT, counter::NONPOSTED_WR_DATA_WORD_SENT)
        };
        out.push((tile, sent, ctr(data, words as i32)));
        out.push((tile, sent, ctr(req, 1)));
        out.push((tile, sent, ctr(counter::write_reqs_outgoing_id(txn), -1)));
    }

    /// Data of a write reaching `e` at `at`.
    fn land(&mut self, e: Option<Endpoint>, addr: u64, p: &Payload, at: u64, out: &mut Vec<Delivery>) {
        match e {
            Some(Endpoint::Tile(c)) => out.push((self.tiles[&c], at, EventKind::Write { addr: addr as u32, payload: p.clone() })),
            Some(Endpoint::Dram { channel, .. }) => {
                let be = p.be;
                let keep = move |i: usize| be.is_none_or(|b| i < 64 && b & (1 << i) != 0);
                self.dram.write(channel, addr, &p.data, Some(&keep));
            }
            None => {} // a worker outside the emulated grid: acknowledged, not stored
        }
    }

    /// Simulates the flows up to `until` and emits what their completions cause.
    pub fn advance(&mut self, until: f64, out: &mut Vec<Delivery>) {
        let mut done = Vec::new();
        self.flows.advance(until, &mut done);
        for (id, at) in done {
            let Some(c) = self.pending.remove(&id) else { continue };
            let fe = at.ceil() as u64;
            match c {
                Completion::Read { tile, src, from, noc, to, data, txn } => {
                    let t = fe + self.lat(noc, from.coord(), src);
                    let words = (data.len() as u32).div_ceil(self.cfg.flit_bytes);
                    let ctr = |index: u32, delta: i32| EventKind::Counter { noc, index: index as u8, delta };
                    out.push((tile, t, EventKind::Write { addr: to, payload: Payload { data, be: None } }));
                    out.push((tile, t, ctr(counter::RD_DATA_WORD_RECEIVED, words as i32)));
                    out.push((tile, t, ctr(counter::RD_RESP_RECEIVED, 1)));
                    out.push((tile, t, ctr(counter::reqs_outstanding_id(txn), -1)));
                }
                Completion::Write { tile, src, noc, txn, posted, dests, addr, payload } => {
                    let words = (payload.data.len() as u32).div_ceil(self.cfg.flit_bytes);
                    self.sent_events(tile, noc, txn, posted, words, fe, out);
                    let mut last_ack = fe;
                    for &(c, e) in &dests {
                        let land = fe + self.lat(noc, src, c);
                        self.land(e, addr, &payload, land, out);
                        if !posted {
                            let turn = e.map_or(self.cfg.write_ack_cycles as u64, |e| self.access_cycles(e, false));
                            let ack = land + turn + self.lat(noc, c, src);
                            out.push((tile, ack, EventKind::Counter { noc, index: counter::WR_ACK_RECEIVED as u8, delta: 1 }));
                            last_ack = last_ack.max(ack);
                        }
                    }
                    if !posted {
                        let index = counter::reqs_outstanding_id(txn) as u8;
                        out.push((tile, last_ack, EventKind::Counter { noc, index, delta: -1 }));
                    }
                }
            }
        }
    }
}

/// Flows from one initiator to one target on one NoC share a virtual channel (FIFO).
fn queue_key(tile: usize, noc: u8, kind: u8, target: NocCoord) -> u64 {
    (tile as u64) << 24 | (noc as u64) << 20 | (kind as u64) << 16 | (target.x as u64) << 8 | target.y as u64
}
