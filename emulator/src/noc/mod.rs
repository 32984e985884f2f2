//! The network on chip: NIU registers, transfers between tiles and DRAM, and their timing.
//!
//! * [`niu`]: each tile's two NIUs as kernels program them (command buffers, `CMD_CTRL`,
//!   status counters) and the queue of events the NoC delivers to the tile.
//! * [`route`]: dimension-ordered routes on the torus (NoC0 east then south, NoC1 north
//!   then west) and the resources (links, NIU ports, DRAM channels) a transfer crosses.
//! * [`flow`]: the bandwidth model: every data transfer is a flow whose rate is its share
//!   of the resources it crosses, as the routers' round-robin arbiters split them.
//! * [`dram`]: the contents of each chip's DRAM channels.
//!
//! While the NoC is in use, tiles run independently for an *epoch* of [`NocConfig::epoch`]
//! cycles; then [`ChipNoc`], on one thread and in (tile, issue) order, takes the requests
//! every tile issued, simulates the transfers to the epoch's end and hands each tile the
//! events that happen to it, with their cycles. An effect due sooner than an epoch after
//! its issue is delivered at the epoch's end: late by at most one epoch. All parameters
//! are in [`NocConfig`]. See docs/design/noc-model.md for time, latency, bandwidth and
//! arbitration, and where each default comes from.

pub(crate) mod dram;
pub(crate) mod flow;
pub(crate) mod niu;
pub(crate) mod route;

use crate::config::NocConfig;
use dram::Dram;
use flow::{FlowId, FlowSpec, Flows, Hop, ROOT};
use niu::{Endpoint, EventKind, Op, Payload, Request};
use riscv_linker::noc::{self as map, counter};
use riscv_linker::{Arch, NocCoord};
use route::{Port, Resources};
use std::collections::HashMap;
use std::sync::Arc;

/// What to do when a flow ends.
#[derive(Debug)]
enum Completion {
    Read {
        tile: usize,
        src: NocCoord,
        from: Endpoint,
        noc: u8,
        to: u32,
        data: Arc<[u8]>,
        txn: u32,
    },
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
        let res = Resources {
            width: w,
            height: h,
            dram_channels: channels,
        };
        let mut cap = vec![0.0; res.count()];
        for (i, c) in cap.iter_mut().enumerate() {
            let r = i as u32;
            *c = if res.is_dram(r) {
                cfg.dram_channel_bytes_per_cycle.unwrap_or(f64::INFINITY)
            } else if res.is_link(r) {
                cfg.link_bytes_per_cycle
            } else {
                cfg.niu_bytes_per_cycle
            };
        }
        // DRAM endpoints: their NIUs' own rates, per endpoint and NoC.
        for &at in map::dram::channels(arch).iter().flatten() {
            for noc in 0..2 {
                cap[res.port(noc, at, Port::Inject) as usize] = cfg.dram_source_bytes_per_cycle;
                cap[res.port(noc, at, Port::Eject) as usize] = cfg.dram_sink_bytes_per_cycle;
            }
        }
        ChipNoc {
            cfg,
            res,
            flows: Flows::new(cap, cfg.arbitration),
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
    pub fn submit(
        &mut self,
        r: Request,
        read_l1: &dyn Fn(usize, u32, u32) -> Vec<u8>,
        out: &mut Vec<Delivery>,
    ) {
        self.requests += 1;
        let (noc, src, tile, t0) = (r.noc, r.src, r.tile, r.accepted);
        let ctr = |index: u32, delta: i32| EventKind::Counter {
            noc,
            index: index as u8,
            delta,
        };
        match r.op {
            Op::Read {
                from,
                addr,
                len,
                to,
            } => {
                let data: Arc<[u8]> = match from {
                    Endpoint::Tile(c) => read_l1(self.tiles[&c], addr as u32, len).into(),
                    Endpoint::Dram { channel, .. } => {
                        let mut v = vec![0u8; len as usize];
                        self.dram.read(channel, addr, &mut v);
                        v.into()
                    }
                };
                let start = t0 + self.lat(noc, src, from.coord()) + self.access_cycles(from, true);
                // The request's way to the target (arbitration only), then the data's back.
                let target = from.coord();
                let mut path = Vec::new();
                let mut links = Vec::new();
                let mut at = hop(
                    &mut path,
                    self.res.port(noc, src, Port::Inject),
                    ROOT,
                    false,
                );
                self.res.route(noc, src, target, &mut links);
                for &l in &links {
                    at = hop(&mut path, l, at, false);
                }
                if let (Endpoint::Dram { channel, .. }, Some(_)) =
                    (from, self.cfg.dram_channel_bytes_per_cycle)
                {
                    at = hop(&mut path, self.res.dram(channel), at, true);
                }
                at = hop(
                    &mut path,
                    self.res.port(noc, target, Port::Inject),
                    at,
                    true,
                );
                links.clear();
                self.res.route(noc, target, src, &mut links);
                for &l in &links {
                    at = hop(&mut path, l, at, true);
                }
                hop(&mut path, self.res.port(noc, src, Port::Eject), at, true);
                let queue = queue_key(tile, noc, 0, from.coord());
                self.start_flow(
                    start,
                    len,
                    path,
                    1.0,
                    queue,
                    Completion::Read {
                        tile,
                        src,
                        from,
                        noc,
                        to,
                        data,
                        txn: r.txn,
                    },
                );
            }
            Op::Write {
                dests,
                addr,
                payload,
                posted,
                inline,
                mcast,
            } => {
                if inline {
                    let sent = t0 + self.cfg.niu_to_router as u64;
                    let words = 1;
                    self.sent_events(tile, noc, r.txn, posted, words, sent, out);
                    let mut last_ack = sent;
                    for &(c, e) in &dests {
                        let land = t0 + self.lat(noc, src, c) + 1;
                        self.land(e, addr, &payload, land, out);
                        if !posted {
                            let ack =
                                land + e.map_or(self.cfg.write_ack_cycles as u64, |e| {
                                    self.access_cycles(e, false)
                                }) + self.lat(noc, c, src);
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
                // A tree for a multicast: dimension-ordered routes from one source share
                // their common links.
                let mut path = vec![Hop {
                    res: self.res.port(noc, src, Port::Inject),
                    prev: ROOT,
                    carries: true,
                }];
                let mut links = Vec::new();
                for &(c, e) in &dests {
                    links.clear();
                    self.res.route(noc, src, c, &mut links);
                    let mut at = 0;
                    for &l in &links {
                        at = tree_hop(&mut path, l, at);
                    }
                    at = tree_hop(&mut path, self.res.port(noc, c, Port::Eject), at);
                    if let (Some(Endpoint::Dram { channel, .. }), Some(_)) =
                        (e, self.cfg.dram_channel_bytes_per_cycle)
                    {
                        tree_hop(&mut path, self.res.dram(channel), at);
                    }
                }
                let eff = if mcast {
                    self.cfg.multicast_efficiency
                } else {
                    1.0
                };
                let queue = queue_key(tile, noc, 1, dests[0].0);
                self.start_flow(
                    t0,
                    len,
                    path,
                    eff,
                    queue,
                    Completion::Write {
                        tile,
                        src,
                        noc,
                        txn: r.txn,
                        posted,
                        dests,
                        addr,
                        payload,
                    },
                );
            }
            Op::Atomic {
                to,
                addr,
                incr,
                wrap,
                posted,
            } => {
                let arrive = t0 + self.lat(noc, src, to.coord());
                if let Endpoint::Tile(c) = to {
                    out.push((
                        self.tiles[&c],
                        arrive,
                        EventKind::Atomic {
                            addr: addr as u32,
                            incr,
                            wrap,
                        },
                    ));
                }
                if !posted {
                    let resp =
                        arrive + self.cfg.atomic_cycles as u64 + self.lat(noc, to.coord(), src);
                    out.push((tile, resp, ctr(counter::ATOMIC_RESP_RECEIVED, 1)));
                    out.push((tile, resp, ctr(counter::reqs_outstanding_id(r.txn), -1)));
                }
            }
        }
    }

    fn start_flow(
        &mut self,
        start: u64,
        len: u32,
        path: Vec<Hop>,
        eff: f64,
        queue: u64,
        done: Completion,
    ) {
        self.next_id += 1;
        let id = self.next_id;
        self.bytes += len as u64;
        let cap = self
            .cfg
            .niu_bytes_per_cycle
            .min(self.cfg.link_bytes_per_cycle)
            * eff;
        self.flows.submit(
            id,
            FlowSpec {
                start: start as f64,
                bytes: self.cfg.wire_bytes(len),
                path,
                cap,
                queue,
            },
        );
        self.pending.insert(id, done);
    }

    /// Counter events of a write whose last byte left the source at `sent`.
    #[allow(clippy::too_many_arguments)]
    fn sent_events(
        &self,
        tile: usize,
        noc: u8,
        txn: u32,
        posted: bool,
        words: u32,
        sent: u64,
        out: &mut Vec<Delivery>,
    ) {
        let ctr = |index: u32, delta: i32| EventKind::Counter {
            noc,
            index: index as u8,
            delta,
        };
        let (req, data) = if posted {
            (
                counter::POSTED_WR_REQ_SENT,
                counter::POSTED_WR_DATA_WORD_SENT,
            )
        } else {
            (
                counter::NONPOSTED_WR_REQ_SENT,
                counter::NONPOSTED_WR_DATA_WORD_SENT,
            )
        };
        out.push((tile, sent, ctr(data, words as i32)));
        out.push((tile, sent, ctr(req, 1)));
        out.push((tile, sent, ctr(counter::write_reqs_outgoing_id(txn), -1)));
    }

    /// Data of a write reaching `e` at `at`.
    fn land(
        &mut self,
        e: Option<Endpoint>,
        addr: u64,
        p: &Payload,
        at: u64,
        out: &mut Vec<Delivery>,
    ) {
        match e {
            Some(Endpoint::Tile(c)) => out.push((
                self.tiles[&c],
                at,
                EventKind::Write {
                    addr: addr as u32,
                    payload: p.clone(),
                },
            )),
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
            let Some(c) = self.pending.remove(&id) else {
                continue;
            };
            let fe = at.ceil() as u64;
            match c {
                Completion::Read {
                    tile,
                    src,
                    from,
                    noc,
                    to,
                    data,
                    txn,
                } => {
                    let t = fe + self.lat(noc, from.coord(), src);
                    let words = (data.len() as u32).div_ceil(self.cfg.flit_bytes);
                    let ctr = |index: u32, delta: i32| EventKind::Counter {
                        noc,
                        index: index as u8,
                        delta,
                    };
                    out.push((
                        tile,
                        t,
                        EventKind::Write {
                            addr: to,
                            payload: Payload { data, be: None },
                        },
                    ));
                    out.push((tile, t, ctr(counter::RD_DATA_WORD_RECEIVED, words as i32)));
                    out.push((tile, t, ctr(counter::RD_RESP_RECEIVED, 1)));
                    out.push((tile, t, ctr(counter::reqs_outstanding_id(txn), -1)));
                }
                Completion::Write {
                    tile,
                    src,
                    noc,
                    txn,
                    posted,
                    dests,
                    addr,
                    payload,
                } => {
                    let words = (payload.data.len() as u32).div_ceil(self.cfg.flit_bytes);
                    self.sent_events(tile, noc, txn, posted, words, fe, out);
                    let mut last_ack = fe;
                    for &(c, e) in &dests {
                        let land = fe + self.lat(noc, src, c);
                        self.land(e, addr, &payload, land, out);
                        if !posted {
                            let turn = e.map_or(self.cfg.write_ack_cycles as u64, |e| {
                                self.access_cycles(e, false)
                            });
                            let ack = land + turn + self.lat(noc, c, src);
                            out.push((
                                tile,
                                ack,
                                EventKind::Counter {
                                    noc,
                                    index: counter::WR_ACK_RECEIVED as u8,
                                    delta: 1,
                                },
                            ));
                            last_ack = last_ack.max(ack);
                        }
                    }
                    if !posted {
                        let index = counter::reqs_outstanding_id(txn) as u8;
                        out.push((
                            tile,
                            last_ack,
                            EventKind::Counter {
                                noc,
                                index,
                                delta: -1,
                            },
                        ));
                    }
                }
            }
        }
    }
}

/// Appends a hop after hop `prev` of `path`; returns its index.
fn hop(path: &mut Vec<Hop>, res: u32, prev: u32, carries: bool) -> u32 {
    path.push(Hop { res, prev, carries });
    path.len() as u32 - 1
}

/// [`hop`] for a multicast tree: a resource already in it is not added again.
fn tree_hop(path: &mut Vec<Hop>, res: u32, prev: u32) -> u32 {
    match path.iter().position(|h| h.res == res) {
        Some(i) => i as u32,
        None => hop(path, res, prev, true),
    }
}

/// Flows from one initiator to one target on one NoC share a virtual channel (FIFO).
fn queue_key(tile: usize, noc: u8, kind: u8, target: NocCoord) -> u64 {
    (tile as u64) << 24
        | (noc as u64) << 20
        | (kind as u64) << 16
        | (target.x as u64) << 8
        | target.y as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arbitration;

    const COUNT: u32 = 16;

    /// Each of `readers` (on its own tile) issues `COUNT` reads of the largest packet from
    /// DRAM bank `bank` on NoC0, one every `issue_cycles` from cycle 0, as a kernel's
    /// back-to-back `noc_async_read` does. Returns the cycle each reader's last response
    /// landed, and the chip (for its config).
    fn dram_readers(arch: Arch, cfg: NocConfig, readers: &[(NocCoord, u32)]) -> Vec<u64> {
        let tiles: HashMap<NocCoord, usize> =
            readers.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
        let mut chip = ChipNoc::new(arch, cfg, tiles);
        let len = cfg.max_packet_bytes;
        let mut out = Vec::new();
        let no_l1 = |_: usize, _: u32, _: u32| -> Vec<u8> { unreachable!("DRAM reads only") };
        for k in 0..COUNT {
            for (i, &(src, bank)) in readers.iter().enumerate() {
                let b = map::dram::bank(arch, bank);
                let from = Endpoint::Dram {
                    channel: b.channel,
                    at: b.endpoint,
                };
                let op = Op::Read {
                    from,
                    addr: b.offset + (i as u64 * COUNT as u64 + k as u64) * len as u64,
                    len,
                    to: 0x40000,
                };
                let accepted = (k * cfg.issue_cycles) as u64;
                chip.submit(
                    Request {
                        tile: i,
                        src,
                        noc: 0,
                        accepted,
                        txn: 0,
                        op,
                    },
                    &no_l1,
                    &mut out,
                );
            }
        }
        chip.advance(f64::INFINITY, &mut out);
        assert!(chip.is_idle());
        let mut last = vec![0u64; readers.len()];
        let mut landed = vec![0u32; readers.len()];
        for (tile, at, e) in out {
            if let EventKind::Counter { index, .. } = e {
                if index as u32 == counter::RD_RESP_RECEIVED {
                    last[tile] = last[tile].max(at);
                    landed[tile] += 1;
                }
            }
        }
        assert!(landed.iter().all(|&n| n == COUNT), "{landed:?}");
        last
    }

    fn wh() -> NocConfig {
        NocConfig::for_arch(Arch::WormholeB0)
    }

    /// Worker `c` of row 0 (NoC0 (c+1, 1) on Wormhole).
    fn worker(c: u8) -> NocCoord {
        Arch::WormholeB0.worker_noc(c, 0).unwrap()
    }

    #[test]
    fn one_dram_reader_runs_at_the_endpoint_rate() {
        let cfg = wh();
        let (src, bank) = (worker(0), map::dram::bank(Arch::WormholeB0, 0));
        let done = dram_readers(Arch::WormholeB0, cfg, &[(src, 0)])[0];
        // The first response starts after the request's way and the access; the reads then
        // follow each other at the endpoint's rate; the last lands a path later.
        let res = Resources {
            width: 10,
            height: 12,
            dram_channels: 6,
        };
        let (there, back) = (
            cfg.path(res.hops(0, src, bank.endpoint)),
            cfg.path(res.hops(0, bank.endpoint, src)),
        );
        let start = there + cfg.dram_read_cycles as u64;
        let end = start as f64
            + COUNT as f64 * cfg.wire_bytes(cfg.max_packet_bytes) / cfg.dram_source_bytes_per_cycle;
        assert_eq!(done, end.ceil() as u64 + back);
        // Arbitration only matters between flows.
        let fair = NocConfig {
            arbitration: Arbitration::MaxMinFair,
            ..cfg
        };
        assert_eq!(dram_readers(Arch::WormholeB0, fair, &[(src, 0)])[0], done);
    }

    #[test]
    fn four_readers_of_one_bank_finish_in_the_order_the_routers_serve_them() {
        // Readers at x = 1..4 of row y = 1 read bank 0 at (0,0): their requests go east
        // along the row (wrapping) and merge one by one, x = 4 last, nearest the bank.
        let cfg = wh();
        let readers: Vec<(NocCoord, u32)> = (0..4).map(|c| (worker(c), 0)).collect();
        let done = dram_readers(Arch::WormholeB0, cfg, &readers);
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by_key(|&i| done[i]);
        assert_eq!(
            order[..2],
            [3, 2],
            "the last to merge finishes first, the one before it next: {done:?}"
        );
        let distinct: std::collections::BTreeSet<u64> = done.iter().copied().collect();
        assert_eq!(distinct.len(), 4, "{done:?}");
        // x = 1 and 2 get the same share (an eighth): they end together, apart by their
        // distances.
        assert!(done[0].abs_diff(done[1]) < 50, "{done:?}");
        // Round robin at the merges gives x = 4 half the bank, x = 3 a quarter, x = 1, 2 an
        // eighth each: x = 4 is done at half the last reader's time, x = 3 at three quarters.
        let single = dram_readers(Arch::WormholeB0, cfg, &readers[..1])[0] as f64;
        let last = *done.iter().max().unwrap() as f64;
        assert!((done[3] as f64 / last - 0.5).abs() < 0.03, "{done:?}");
        assert!((done[2] as f64 / last - 0.75).abs() < 0.03, "{done:?}");
        // The bank never idles: after the same latency as one reader, four readers' data
        // leaves it at its rate.
        let transfer =
            COUNT as f64 * cfg.wire_bytes(cfg.max_packet_bytes) / cfg.dram_source_bytes_per_cycle;
        let latency = single - transfer;
        let total = 4.0 * COUNT as f64 * cfg.wire_bytes(cfg.max_packet_bytes) / (last - latency);
        assert!(
            (total / cfg.dram_source_bytes_per_cycle - 1.0).abs() < 0.01,
            "{total} B/cycle from the bank"
        );
        // Max-min fair shares would end them together (up to their distance).
        let fair = dram_readers(
            Arch::WormholeB0,
            NocConfig {
                arbitration: Arbitration::MaxMinFair,
                ..cfg
            },
            &readers,
        );
        let (lo, hi) = (fair.iter().min().unwrap(), fair.iter().max().unwrap());
        assert!(*hi as f64 / *lo as f64 <= 1.01, "{fair:?}");
        assert!(
            (*hi as f64 / last - 1.0).abs() < 0.01,
            "same total either way: {fair:?} {done:?}"
        );
    }

    #[test]
    fn dram_bandwidth_is_per_endpoint_unless_the_channel_is_capped() {
        // Banks 0 and 1 are the two halves of Wormhole channel 0, at endpoints (0,0) and
        // (0,11): two readers, one per bank, on routes that share no link, each get a
        // whole endpoint.
        let cfg = wh();
        let (a, b) = (worker(0), Arch::WormholeB0.worker_noc(1, 1).unwrap());
        let alone = dram_readers(Arch::WormholeB0, cfg, &[(a, 0)])[0];
        let both = dram_readers(Arch::WormholeB0, cfg, &[(a, 0), (b, 1)]);
        assert_eq!(
            both[0], alone,
            "the other endpoint's reader takes nothing from this one"
        );
        let capped = NocConfig {
            dram_channel_bytes_per_cycle: Some(cfg.dram_source_bytes_per_cycle),
            ..cfg
        };
        let shared = dram_readers(Arch::WormholeB0, capped, &[(a, 0), (b, 1)]);
        assert!(
            shared[0] as f64 > 1.5 * alone as f64,
            "a channel cap is shared: {shared:?} vs {alone}"
        );
    }
}
