//! One tile's two NIUs as its cores see them: command buffer registers, `CMD_CTRL`,
//! `NODE_ID`, the status counters, and the queue of things the NoC will do to this tile.
//!
//! * Register writes are stored; writing 1 to a command buffer's `CMD_CTRL` issues the
//!   request the buffer describes (the registers persist, as on hardware, so a kernel may
//!   set `CTRL` and the return coordinates once and then only change addresses). The
//!   request is checked here (addresses inside L1 or a DRAM channel, a target that exists)
//!   and a bad one is a fault of the issuing core naming what is wrong. The write's source
//!   bytes are copied out of L1 at issue.
//! * `CMD_CTRL` reads 1 for [`crate::NocConfig::issue_cycles`] after an issue (the
//!   request is being accepted), then 0.
//! * The counters of [`riscv_linker::noc::counter`] change at the simulated time the
//!   documentation gives: `CMD_ACCEPTED` and the `*_REQ_SENT` of reads and atomics when the
//!   request is accepted, a write's `*_WR_REQ_SENT` when its last byte has left, the
//!   `*_RECEIVED` ones when the response or acknowledgement arrives. The per-transaction-id
//!   counters go up at issue and down when the request completes (8 bits, wrapping).
//! * Everything the NoC does to this tile (data landing from a read or another tile's
//!   write, atomics, counter changes) is an [`Event`] with a cycle; events are applied in
//!   cycle order at the start of each scheduling window and, exactly, whenever a core reads
//!   an NIU register, so a barrier sees a counter change at its cycle and the data is in
//!   L1 when the counter says so. A core that reads L1 before then sees the old bytes.

use crate::bus::L1;
use crate::error::FaultKind;
use crate::noc::NocConfig;
use riscv_linker::noc::{self as map, counter, ctrl, NiuMap};
use riscv_linker::{mmio, Arch, NocCoord};
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

/// `NOC_ID_LOGICAL`: the configuration word holding a tile's translated coordinates
/// (`noc_parameters.h`: word 0xE on Wormhole, 0x12 on Blackhole).
const fn noc_id_logical(arch: Arch) -> u32 {
    match arch {
        Arch::WormholeB0 => 0xE,
        Arch::Blackhole => 0x12,
    }
}

/// What a chip looks like to an NIU checking a request.
#[derive(Debug)]
pub(crate) struct Topology {
    pub arch: Arch,
    /// Emulated worker tiles of the chip, NoC0 coordinates -> index within the chip.
    pub tiles: HashMap<NocCoord, u32>,
    pub l1_size: u32,
    pub cfg: NocConfig,
    /// NoC coordinate translation is on (tt-metal's layout): a request on either NoC names
    /// its target by NoC 0 coordinates, and `NOC_ID_LOGICAL` reads the tile's NoC 0
    /// coordinates on both NIUs. tt-metal compiles its Wormhole device code with
    /// `COORDINATE_VIRTUALIZATION_ENABLED` (kernels pass the same "virtual" coordinates to
    /// both NoCs) and its host turns the NIUs' translation on; for an unharvested chip we
    /// take a worker's virtual coordinates = its NoC 0 ones. Blackhole's DRAM has
    /// translated coordinates of its own (`dram::untranslate`; docs/design/tt-metal-firmware.md).
    pub translation: bool,
}

impl Topology {
    pub fn describe_grid(&self) -> String {
        let mut v: Vec<_> = self.tiles.keys().copied().collect();
        v.sort();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) => format!("emulated workers {a}..{b}"),
            _ => "no emulated workers".into(),
        }
    }
}

/// A place a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// An emulated worker tile (NoC0 coordinates).
    Tile(NocCoord),
    /// A DRAM channel, reached at endpoint `at` (NoC0).
    Dram { channel: u32, at: NocCoord },
}

impl Endpoint {
    pub fn coord(self) -> NocCoord {
        match self {
            Endpoint::Tile(c) => c,
            Endpoint::Dram { at, .. } => at,
        }
    }
}

/// Bytes to write, with optional byte enables (bit `i` of `be` enables byte `i`).
#[derive(Clone, Debug)]
pub(crate) struct Payload {
    pub data: Arc<[u8]>,
    pub be: Option<u64>,
}

/// A request as the NIU hands it to the NoC.
#[derive(Debug)]
pub(crate) enum Op {
    Read {
        from: Endpoint,
        addr: u64,
        len: u32,
        to: u32,
    },
    /// `dests`: every worker in the (multicast) destination, emulated or not (each acks);
    /// `inline`: a single-flit inline write (latency only).
    Write {
        dests: Vec<(NocCoord, Option<Endpoint>)>,
        addr: u64,
        payload: Payload,
        posted: bool,
        inline: bool,
        mcast: bool,
    },
    Atomic {
        to: Endpoint,
        addr: u64,
        incr: u32,
        wrap: u32,
        posted: bool,
    },
}

#[derive(Debug)]
pub(crate) struct Request {
    /// Issuing tile: global index and NoC0 coordinates.
    pub tile: usize,
    pub src: NocCoord,
    pub noc: u8,
    /// Cycle the request was accepted.
    pub accepted: u64,
    pub txn: u32,
    pub op: Op,
}

/// Something the NoC does to a tile at a cycle.
#[derive(Clone, Debug)]
pub(crate) enum EventKind {
    /// Add `delta` to counter `index` of NIU `noc` (per-id counters wrap at 8 bits).
    Counter { noc: u8, index: u8, delta: i32 },
    /// Data lands in L1.
    Write { addr: u32, payload: Payload },
    /// Atomic increment of the L1 word at `addr`.
    Atomic { addr: u32, incr: u32, wrap: u32 },
}

#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub time: u64,
    pub seq: u64,
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Register words of one command buffer (offsets `0..0x80`).
const BUF_WORDS: usize = 32;

/// One NIU.
#[derive(Debug)]
struct Unit {
    bufs: [[u32; BUF_WORDS]; map::CMD_BUFS as usize],
    busy_until: [u64; map::CMD_BUFS as usize],
    counters: [u32; counter::COUNT as usize],
    other: HashMap<u32, u32>,
}

impl Default for Unit {
    fn default() -> Unit {
        Unit {
            bufs: [[0; BUF_WORDS]; map::CMD_BUFS as usize],
            busy_until: [0; map::CMD_BUFS as usize],
            counters: [0; counter::COUNT as usize],
            other: HashMap::new(),
        }
    }
}

/// Both NIUs of a tile.
#[derive(Debug)]
pub(crate) struct Niu {
    pub topo: Arc<Topology>,
    pub global: usize,
    pub coord: NocCoord,
    units: [Unit; 2],
    events: BinaryHeap<Event>,
    seq: u64,
    /// Requests issued since the NoC last collected them.
    pub outbox: Vec<Request>,
    /// A core touched an NIU register since the device last looked.
    pub touched: bool,
    /// An event wrote into L1 below this address (where code lives): re-decode.
    pub code_written: bool,
}

fn is_noc_window(addr: u32) -> Option<(u8, u32)> {
    let off0 = addr.wrapping_sub(mmio::NOC0_REGS_BASE);
    if off0 < mmio::NOC_REGS_SIZE {
        return Some((0, off0));
    }
    let off1 = addr.wrapping_sub(mmio::NOC1_REGS_BASE);
    (off1 < mmio::NOC_REGS_SIZE).then_some((1, off1))
}

impl Niu {
    pub fn new(topo: Arc<Topology>, global: usize, coord: NocCoord) -> Niu {
        Niu {
            topo,
            global,
            coord,
            units: [Unit::default(), Unit::default()],
            events: BinaryHeap::new(),
            seq: 0,
            outbox: Vec::new(),
            touched: false,
            code_written: false,
        }
    }

    fn map(&self) -> NiuMap {
        map::niu_map(self.topo.arch)
    }

    /// Queues an event.
    pub fn push(&mut self, time: u64, kind: EventKind) {
        self.seq += 1;
        self.events.push(Event {
            time,
            seq: self.seq,
            kind,
        });
    }

    /// Applies every event due at or before `time` to L1 and the counters. `code_end`:
    /// no code lies at or above it.
    pub fn apply_until(&mut self, l1: &L1, time: u64, code_end: u32) {
        while self.events.peek().is_some_and(|e| e.time <= time) {
            let e = self.events.pop().expect("peeked");
            self.apply(l1, e.kind, code_end);
        }
    }

    fn apply(&mut self, l1: &L1, kind: EventKind, code_end: u32) {
        match kind {
            EventKind::Counter { noc, index, delta } => {
                let c = &mut self.units[noc as usize].counters[index as usize];
                *c = if (0x10..0x30).contains(&index) {
                    (*c as i32).wrapping_add(delta) as u32 & 0xFF
                } else {
                    c.wrapping_add(delta as u32)
                };
            }
            EventKind::Write { addr, payload } => {
                if addr < code_end {
                    self.code_written = true;
                }
                write_l1(l1, addr, &payload);
            }
            EventKind::Atomic { addr, incr, wrap } => {
                let old = l1.load::<4>(addr);
                let mask = if wrap >= 31 {
                    u32::MAX
                } else {
                    (1u32 << (wrap + 1)) - 1
                };
                l1.store::<4>(addr, (old & !mask) | (old.wrapping_add(incr) & mask));
            }
        }
    }

    /// Whether nothing is left to happen here by time alone from cycle `time` on: no
    /// event queued, no request waiting for the NoC, no command buffer busy.
    pub fn settled(&self, time: u64) -> bool {
        self.events.is_empty()
            && self.outbox.is_empty()
            && self
                .units
                .iter()
                .all(|u| u.busy_until.iter().all(|&b| b <= time))
    }

    /// Counter `index` of NIU `noc` as it stands (events applied so far).
    pub fn counter(&self, noc: u8, index: u32) -> u32 {
        self.units[noc as usize].counters[index as usize]
    }

    /// A 32-bit read of NIU register `addr` by a core at cycle `time` (events up to `time`
    /// must already be applied).
    pub fn read(&mut self, addr: u32, time: u64) -> u32 {
        self.touched = true;
        let Some((noc, off)) = is_noc_window(addr) else {
            return 0;
        };
        let m = self.map();
        let u = &self.units[noc as usize];
        if off < map::CMD_BUFS * m.cmd_buf_stride {
            let (buf, reg) = (off / m.cmd_buf_stride, off % m.cmd_buf_stride);
            if reg == m.cmd_ctrl {
                return (time < u.busy_until[buf as usize]) as u32;
            }
            if reg == m.node_id || reg == m.endpoint_id {
                let c = map::to_noc0(self.topo.arch, noc as u32, self.coord);
                let id = map::node_id(self.topo.arch, c);
                return if reg == m.node_id { id } else { id & 0xFFF };
            }
            if self.topo.translation
                && buf == 0
                && reg == m.cfg_base + 4 * noc_id_logical(self.topo.arch)
            {
                return map::node_id(self.topo.arch, self.coord) & 0xFFF;
            }
            if buf == 0 && reg >= m.status_base && reg < m.status_base + 4 * counter::COUNT {
                return u.counters[((reg - m.status_base) / 4) as usize];
            }
            if (reg as usize) < 4 * BUF_WORDS {
                return u.bufs[buf as usize][(reg / 4) as usize];
            }
        }
        u.other.get(&off).copied().unwrap_or(0)
    }

    /// A 32-bit write of NIU register `addr` at cycle `time`; may issue a request.
    pub fn write(&mut self, l1: &L1, addr: u32, value: u32, time: u64) -> Result<(), FaultKind> {
        self.touched = true;
        let Some((noc, off)) = is_noc_window(addr) else {
            return Ok(());
        };
        let m = self.map();
        if off < map::CMD_BUFS * m.cmd_buf_stride {
            let (buf, reg) = (off / m.cmd_buf_stride, off % m.cmd_buf_stride);
            if reg == m.cmd_ctrl {
                if value & 1 != 0 {
                    return self.issue(l1, noc, buf, time);
                }
                return Ok(());
            }
            if buf == 0 && reg == m.clear_outstanding {
                for id in 0..16 {
                    if value & (1 << id) != 0 {
                        self.units[noc as usize].counters
                            [counter::reqs_outstanding_id(id) as usize] = 0;
                    }
                }
                return Ok(());
            }
            if buf == 0 && reg >= m.status_base && reg < m.status_base + 4 * counter::COUNT {
                return Ok(()); // counters are read-only
            }
            if (reg as usize) < 4 * BUF_WORDS {
                self.units[noc as usize].bufs[buf as usize][(reg / 4) as usize] = value;
                return Ok(());
            }
        }
        self.units[noc as usize].other.insert(off, value);
        Ok(())
    }

    fn bump(&mut self, noc: u8, index: u32, delta: i32) {
        let c = &mut self.units[noc as usize].counters[index as usize];
        *c = if (0x10..0x30).contains(&index) {
            (*c as i32).wrapping_add(delta) as u32 & 0xFF
        } else {
            c.wrapping_add(delta as u32)
        };
    }

    /// Decodes `(lo, mid, hi)` into a 36-bit local address and the coordinate field.
    fn address(&self, lo: u32, mid: u32, hi: u32) -> (u64, u32) {
        let local = lo as u64 | ((mid as u64 & 0xF) << 32);
        match self.topo.arch {
            Arch::WormholeB0 => (local, mid),
            Arch::Blackhole => (local, hi),
        }
    }

    /// The endpoint at NoC `noc` coordinates `c`, for a transfer of `len` bytes at `addr`.
    fn endpoint(
        &self,
        noc: u8,
        c: NocCoord,
        addr: u64,
        len: u64,
        what: &dyn Fn() -> String,
    ) -> Result<Endpoint, FaultKind> {
        let arch = self.topo.arch;
        let (w, h) = arch.noc_grid();
        // Translated coordinates (Blackhole's DRAM) lie outside the grid until translated;
        // others are checked before NoC 1's mirror.
        let inside = |c: NocCoord| c.x < w && c.y < h;
        let c0 = if self.topo.translation || inside(c) {
            self.to_noc0(noc, c)
        } else {
            c
        };
        if !inside(c0) {
            return Err(FaultKind::Noc(format!(
                "{}: NoC{noc} coordinates ({},{}) are outside {arch}'s {w}x{h} NoC grid",
                what(),
                c.x,
                c.y
            )));
        }
        if self.topo.tiles.contains_key(&c0) {
            if addr + len > self.topo.l1_size as u64 {
                return Err(FaultKind::Noc(format!(
                    "{}: {len} bytes at {addr:#x} on tile {c0} run past L1 ({:#x} bytes; other NIU targets are not modelled)", what(),
                    self.topo.l1_size
                )));
            }
            return Ok(Endpoint::Tile(c0));
        }
        if let Some(channel) = map::dram::channel_of(arch, c0) {
            let size = map::dram::channel_size(arch);
            if addr + len > size {
                return Err(FaultKind::Noc(format!(
                    "{}: {len} bytes at {addr:#x} run past DRAM channel {channel} ({size:#x} bytes)", what(),
                )));
            }
            return Ok(Endpoint::Dram { channel, at: c0 });
        }
        let kind = if arch.worker_logical(c0).is_some() {
            "a worker outside the emulated grid"
        } else {
            "not a worker or DRAM"
        };
        Err(FaultKind::Noc(format!(
            "{}: NoC{noc} ({},{}) = NoC0 {c0} is {kind} ({}); on hardware the request would never complete", what(),
            c.x,
            c.y,
            self.topo.describe_grid()
        )))
    }

    fn local_range(&self, addr: u32, len: u32, what: &dyn Fn() -> String) -> Result<(), FaultKind> {
        if addr as u64 + len as u64 > self.topo.l1_size as u64 {
            return Err(FaultKind::Noc(format!(
                "{}: local {len} bytes at {addr:#x} run past L1 ({:#x} bytes)",
                what(),
                self.topo.l1_size
            )));
        }
        Ok(())
    }

    /// Issues the request of command buffer `buf` of NIU `noc` at `time`.
    fn issue(&mut self, l1: &L1, noc: u8, buf: u32, time: u64) -> Result<(), FaultKind> {
        let m = self.map();
        let arch = self.topo.arch;
        let r = self.units[noc as usize].bufs[buf as usize];
        let reg = |off: u32| r[(off / 4) as usize];
        let opt = |off: Option<u32>| off.map_or(0, |o| r[(o / 4) as usize]);
        let c = reg(m.ctrl);
        let txn = (reg(m.packet_tag) >> 10) & 0xF;
        let (targ, targ_field) = self.address(
            reg(m.targ_addr_lo),
            reg(m.targ_addr_mid),
            opt(m.targ_addr_hi),
        );
        let (ret, ret_field) =
            self.address(reg(m.ret_addr_lo), reg(m.ret_addr_mid), opt(m.ret_addr_hi));
        let len_be = reg(m.at_len_be);
        let be_hi = opt(m.at_len_be_1);
        let at_data = reg(m.at_data);
        let posted = c & ctrl::RESP_MARKED == 0;
        let accepted = time + self.topo.cfg.issue_cycles as u64;
        self.units[noc as usize].busy_until[buf as usize] = accepted;
        let word = map::flit_bytes(arch);
        let what = |k: &str| format!("NoC{noc} command buffer {buf}: {k}");
        let op = match c & 3 {
            0 => {
                let (c_end, _) = NiuMap::decode_coords(arch, targ_field);
                let len = len_be;
                let from = self.endpoint(noc, c_end, targ, len as u64, &|| what("read source"))?;
                self.local_range(ret as u32, len, &|| what("read destination"))?;
                self.bump(noc, counter::RD_REQ_SENT, 1);
                self.bump(noc, counter::reqs_outstanding_id(txn), 1);
                Op::Read {
                    from,
                    addr: targ,
                    len,
                    to: ret as u32,
                }
            }
            2 => {
                let inline = c & ctrl::WR_INLINE != 0;
                let mcast = c & ctrl::BRCST != 0;
                // An inline write's destination is TARG; otherwise TARG is the local source
                // and RET the destination.
                let (dest, field) = if inline {
                    (targ, targ_field)
                } else {
                    (ret, ret_field)
                };
                let (payload, len) = if inline {
                    let be = (len_be as u64 | (be_hi as u64) << 32) & mask(word);
                    let data: Vec<u8> = (0..word)
                        .map(|i| at_data.to_le_bytes()[(i % 4) as usize])
                        .collect();
                    (
                        Payload {
                            data: data.into(),
                            be: Some(be),
                        },
                        word,
                    )
                } else if c & ctrl::WR_BE != 0 {
                    let src = targ as u32 & !(word - 1);
                    self.local_range(src, word, &|| what("byte-enable write source"))?;
                    let mut data = vec![0u8; word as usize];
                    l1.read_into(src, &mut data);
                    let be = (len_be as u64 | (be_hi as u64) << 32) & mask(word);
                    (
                        Payload {
                            data: data.into(),
                            be: Some(be),
                        },
                        word,
                    )
                } else {
                    self.local_range(targ as u32, len_be, &|| what("write source"))?;
                    let mut data = vec![0u8; len_be as usize];
                    l1.read_into(targ as u32, &mut data);
                    (
                        Payload {
                            data: data.into(),
                            be: None,
                        },
                        len_be,
                    )
                };
                let addr = if payload.be.is_some() {
                    dest & !(word as u64 - 1)
                } else {
                    dest
                };
                let dests = if mcast {
                    self.mcast_dests(
                        noc,
                        field,
                        addr,
                        len,
                        c & ctrl::BRCST_SRC_INCLUDE != 0,
                        &|| what("multicast write"),
                    )?
                } else {
                    let (c_end, _) = NiuMap::decode_coords(arch, field);
                    let e =
                        self.endpoint(noc, c_end, addr, len as u64, &|| what("write destination"))?;
                    vec![(e.coord(), Some(e))]
                };
                self.bump(noc, counter::write_reqs_outgoing_id(txn), 1);
                if !posted {
                    self.bump(noc, counter::reqs_outstanding_id(txn), 1);
                }
                Op::Write {
                    dests,
                    addr,
                    payload,
                    posted,
                    inline,
                    mcast,
                }
            }
            1 => {
                let ins = (len_be >> 12) & 0xF;
                if ins != map::atomic::INCR {
                    return Err(FaultKind::Noc(format!(
                        "{}: atomic instruction {ins} (AT_LEN_BE {len_be:#x}) is not modelled; only increment (1) is",
                        what("atomic")
                    )));
                }
                let addr = (targ & !0xF) + 4 * (len_be & 3) as u64;
                let (c_end, _) = NiuMap::decode_coords(arch, targ_field);
                let to = self.endpoint(noc, c_end, addr, 4, &|| what("atomic target"))?;
                if matches!(to, Endpoint::Dram { .. }) {
                    return Err(FaultKind::Noc(format!(
                        "{}: atomics on DRAM are not modelled",
                        what("atomic")
                    )));
                }
                self.bump(
                    noc,
                    if posted {
                        counter::POSTED_ATOMIC_SENT
                    } else {
                        counter::NONPOSTED_ATOMIC_SENT
                    },
                    1,
                );
                if !posted {
                    self.bump(noc, counter::reqs_outstanding_id(txn), 1);
                }
                Op::Atomic {
                    to,
                    addr,
                    incr: at_data,
                    wrap: (len_be >> 2) & 31,
                    posted,
                }
            }
            _ => {
                return Err(FaultKind::Noc(format!(
                    "{}: CTRL {c:#x} has command type 3 (none exists)",
                    what("issue")
                )))
            }
        };
        self.bump(noc, counter::CMD_ACCEPTED, 1);
        self.outbox.push(Request {
            tile: self.global,
            src: self.coord,
            noc,
            accepted,
            txn,
            op,
        });
        Ok(())
    }

    /// The NoC 0 coordinates of a target named `c` on NoC `noc`: mirrored on NoC 1, unless
    /// translation is on ([`Topology::translation`]).
    fn to_noc0(&self, noc: u8, c: NocCoord) -> NocCoord {
        if self.topo.translation {
            map::dram::untranslate(self.topo.arch, c)
        } else {
            map::to_noc0(self.topo.arch, noc as u32, c)
        }
    }

    /// Every worker tile in a multicast rectangle (NoC `noc` coordinates in `field`).
    fn mcast_dests(
        &self,
        noc: u8,
        field: u32,
        addr: u64,
        len: u32,
        include_src: bool,
        what: &dyn Fn() -> String,
    ) -> Result<Vec<(NocCoord, Option<Endpoint>)>, FaultKind> {
        let arch = self.topo.arch;
        let (end, start) = NiuMap::decode_coords(arch, field);
        let (a, b) = (self.to_noc0(noc, start), self.to_noc0(noc, end));
        let (x0, x1) = (a.x.min(b.x), a.x.max(b.x));
        let (y0, y1) = (a.y.min(b.y), a.y.max(b.y));
        let (w, h) = arch.noc_grid();
        if x1 >= w || y1 >= h {
            return Err(FaultKind::Noc(format!(
                "{}: rectangle {a}..{b} is outside the {w}x{h} NoC grid",
                what()
            )));
        }
        let mut v = Vec::new();
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = NocCoord::new(x, y);
                if arch.worker_logical(c).is_none() || (c == self.coord && !include_src) {
                    continue;
                }
                let e = if self.topo.tiles.contains_key(&c) {
                    Some(self.endpoint(0, c, addr, len as u64, what)?)
                } else {
                    None
                };
                v.push((c, e));
            }
        }
        if v.is_empty() {
            return Err(FaultKind::Noc(format!(
                "{}: rectangle {a}..{b} holds no worker tile",
                what()
            )));
        }
        Ok(v)
    }
}

fn mask(bytes: u32) -> u64 {
    if bytes >= 64 {
        u64::MAX
    } else {
        (1u64 << bytes) - 1
    }
}

/// Writes a payload into L1 at `addr` (only enabled bytes).
pub(crate) fn write_l1(l1: &L1, addr: u32, p: &Payload) {
    let n = p.data.len() as u32;
    match p.be {
        None if addr.is_multiple_of(4) && n.is_multiple_of(4) => {
            for (i, w) in p.data.chunks_exact(4).enumerate() {
                l1.store::<4>(
                    addr + 4 * i as u32,
                    u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
                );
            }
        }
        _ => {
            for i in 0..n {
                if p.be.is_none_or(|be| i < 64 && be & (1 << i) != 0) {
                    l1.store::<1>(addr + i, p.data[i as usize] as u32);
                }
            }
        }
    }
}
