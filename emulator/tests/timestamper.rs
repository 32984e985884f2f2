//! The tile's debug timestamper, driven by RV32IM programs: events of every size land in L1
//! as `DebugTimestamper.md` (tt-isa-documentation, WormholeB0/TensixTile) says, in 16-byte
//! units, buffer 0 then buffer 1 with the sticky full/overflow bits, the flush commands, two
//! cores sharing one stream in cycle order, and the faults for undefined behaviour.
//!
//! Expected streams are built by [`page_words`] from the page's table of event contents;
//! the counter of an event is the wall clock at the store's issue cycle. Each program reads
//! `WALL_CLOCK_L` and stores the event in the next instruction, in the same instruction-cache
//! line: a load costs the Integer Unit one cycle, so the store issues one cycle after the
//! read and its counter is the value read + 1.

mod common;

use common::*;
use riscv_linker::mmio::{self, timestamp as ts};
use riscv_linker::{Arch, Risc};
use ttprof_emu::asm::*;
use ttprof_emu::{Device, DeviceConfig, FaultKind, TileOffsets};

/// Offset of a debug register from the base held in x5.
const fn off(addr: u32) -> i32 {
    (addr - mmio::DEBUG_REGS_BASE) as i32
}
const WALL_L: i32 = off(mmio::WALL_CLOCK_L);
const WALL_H: i32 = off(mmio::WALL_CLOCK_H);
const TS: i32 = off(mmio::TIMESTAMP);
const CNTL: i32 = off(mmio::TIMESTAMP_CNTL);
const STATUS: i32 = off(mmio::TIMESTAMP_STATUS);
const B0S: i32 = off(mmio::TIMESTAMP_BUF0_START);
const B0E: i32 = off(mmio::TIMESTAMP_BUF0_END);
const B1S: i32 = off(mmio::TIMESTAMP_BUF1_START);
const B1E: i32 = off(mmio::TIMESTAMP_BUF1_END);

/// Where programs record their wall-clock reads (x9) and other values (x18), in local RAM.
const EVENTS: u32 = 0;
const VALUES: u32 = 0x600;

/// A program under construction. x5 = debug register base, x9 / x18 = record pointers.
struct Prog(Vec<u32>);

impl Prog {
    fn new() -> Prog {
        let mut p = Prog(Vec::new());
        p.li(5, mmio::DEBUG_REGS_BASE);
        p.li(9, mmio::LOCAL_RAM_BASE + EVENTS);
        p.li(18, mmio::LOCAL_RAM_BASE + VALUES);
        p
    }
    fn op(&mut self, w: u32) -> &mut Prog {
        self.0.push(w);
        self
    }
    fn li(&mut self, rd: u32, v: u32) -> &mut Prog {
        self.0.extend(li(rd, v));
        self
    }
    /// Stores `v` to the debug register at offset `reg`.
    fn set(&mut self, reg: i32, v: u32) -> &mut Prog {
        self.li(7, v).op(sw(7, 5, reg))
    }
    /// Buffer 0 = units `b0.0..=b0.1`, buffer 1 = `b1.0..=b1.1`.
    fn buffers(&mut self, b0: (u32, u32), b1: (u32, u32)) -> &mut Prog {
        self.set(B0S, b0.0)
            .set(B0E, b0.1)
            .set(B1S, b1.0)
            .set(B1E, b1.1)
    }
    /// An event with `header`, its wall-clock read (lo, latched hi) recorded at x9.
    fn event(&mut self, header: u32) -> &mut Prog {
        self.li(7, header);
        while !self.0.len().is_multiple_of(4) {
            self.op(addi(0, 0, 0));
        }
        self.op(lw(6, 5, WALL_L))
            .op(sw(7, 5, TS))
            .op(lw(28, 5, WALL_H));
        self.op(sw(6, 9, 0)).op(sw(28, 9, 4)).op(addi(9, 9, 8))
    }
    /// Records the word at debug register `reg` at x18.
    fn record(&mut self, reg: i32) -> &mut Prog {
        self.op(lw(11, 5, reg))
            .op(sw(11, 18, 0))
            .op(addi(18, 18, 4))
    }
    /// Records the L1 word at `addr` at x18.
    fn record_l1(&mut self, addr: u32) -> &mut Prog {
        self.li(12, addr)
            .op(lw(11, 12, 0))
            .op(sw(11, 18, 0))
            .op(addi(18, 18, 4))
    }
    /// About `n` iterations of a two-instruction loop.
    fn delay(&mut self, n: u32) -> &mut Prog {
        self.op(addi(10, 0, n as i32))
            .op(addi(10, 10, -1))
            .op(bne(10, 0, -4))
    }
    fn done(&mut self) -> Vec<u32> {
        self.op(ecall());
        self.0.clone()
    }
    /// Address of the next instruction on `risc`.
    fn pc(&self, arch: Arch, risc: Risc) -> u32 {
        riscv_linker::memory_map(arch, risc).code.start + 4 * self.0.len() as u32
    }
}

/// The words `DebugTimestamper.md` appends for a store of `v` at `counter` (its table of
/// event contents), or `None` for the flush commands.
fn page_words(v: u32, counter: u64) -> Option<Vec<u32>> {
    let (lo, hi) = (counter as u32, (counter >> 32) as u32);
    match v & 7 {
        0 => Some(vec![v, lo, hi, 0]),
        4 => Some(vec![v, lo, hi]),
        1 => Some(vec![v, lo]),
        2 => Some(vec![(v & 0x0000_ffff) + ((lo & 0x001f_ffe0) << 11)]),
        3 | 7 => None,
        _ => unreachable!(),
    }
}

/// The 16-byte units a sequence of stores (value, counter) produces: words gathered in
/// fours, a flush padding with zeros.
fn page_units(stores: &[(u32, u64)]) -> Vec<[u32; 4]> {
    let mut words = Vec::new();
    for &(v, c) in stores {
        match page_words(v, c) {
            Some(w) => words.extend(w),
            None => words.resize(words.len().div_ceil(4) * 4, 0),
        }
    }
    words
        .chunks_exact(4)
        .map(|c| c.try_into().unwrap())
        .collect()
}

/// The 64-bit counters recorded by a core's `event`s: read + 1.
fn counters(local: &[u8], n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| {
            let at = EVENTS as usize + 8 * i;
            let lo = u32::from_le_bytes(local[at..at + 4].try_into().unwrap());
            let hi = u32::from_le_bytes(local[at + 4..at + 8].try_into().unwrap());
            (((hi as u64) << 32) | lo as u64) + 1
        })
        .collect()
}

fn values(local: &[u8], n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| u32::from_le_bytes(local[VALUES as usize + 4 * i..][..4].try_into().unwrap()))
        .collect()
}

fn units_at(dev: &Device, arch: Arch, addr: u32, n: usize) -> Vec<[u32; 4]> {
    let mut w = vec![0u32; 4 * n];
    dev.read_words(0, t0(arch), addr, &mut w).unwrap();
    w.chunks_exact(4).map(|c| c.try_into().unwrap()).collect()
}

fn device_with(arch: Arch, offset: u64, jit: bool) -> Device {
    let mut cfg = DeviceConfig::new(arch, (1, 1));
    cfg.clock.tile_offsets = TileOffsets::Explicit(vec![offset]);
    cfg.jit = jit;
    Device::new(cfg).unwrap()
}

const PATTERN: u32 = 0x5A5A_5A5A;

fn fill(dev: &Device, arch: Arch, addr: u32, words: u32) {
    for k in 0..words {
        dev.write_u32(0, t0(arch), addr + 4 * k, PATTERN).unwrap();
    }
}

#[test]
fn every_event_size_lands_in_l1_as_the_page_says() {
    // Events and flushes; the wall clock starts just below 2^32, so the high word changes
    // during the program.
    let stores = [
        0x1234_5670, // 128-bit
        0xA000_0004,
        0xA000_000C,
        0xA000_0014,
        0xA000_001C, // 4 x 96-bit: 3 units
        0xB000_0001,
        0xB000_0009, // 2 x 64-bit: 1 unit
        0xB000_0011,
        ts::FLUSH_64B, // 64-bit + flush
        0xC0DE_FFF2,
        0xC0DE_000A,
        0x0000_0012,
        0xFFFF_801A, // 4 x 32-bit
        0xD000_0004,
        ts::FLUSH_96B | 0x100, // 96-bit + flush (other bits ignored)
        0xFFFF_FFF8,           // 128-bit, all 29 token bits set
    ];
    for arch in [Arch::WormholeB0, Arch::Blackhole] {
        let risc = Risc::Trisc0;
        let mut p = Prog::new();
        p.buffers((0x3000, 0x30FF), (0x3800, 0x38FF));
        for &v in &stores {
            if page_words(v, 0).is_some() {
                p.event(v);
            } else {
                p.set(TS, v);
            }
        }
        p.record(STATUS)
            .record(CNTL)
            .record(TS)
            .record(B0S)
            .record(B0E)
            .record(B1S)
            .record(B1E);
        let dev = {
            let mut dev = device_with(arch, 0xFFFF_FF00, true);
            fill(&dev, arch, 0x30000, 4 * 12);
            dev.load_kernel(0, t0(arch), risc, &elf_for(arch, risc, &p.done()), "ts.elf")
                .unwrap();
            dev.run().unwrap();
            dev
        };
        let local = dev.local_ram(0, t0(arch), risc).unwrap();
        let events = stores
            .iter()
            .filter(|&&v| page_words(v, 0).is_some())
            .count();
        let mut c = counters(&local, events).into_iter();
        let timed: Vec<(u32, u64)> = stores
            .iter()
            .map(|&v| {
                (
                    v,
                    if page_words(v, 0).is_some() {
                        c.next().unwrap()
                    } else {
                        0
                    },
                )
            })
            .collect();
        let his: Vec<u32> = timed.iter().map(|t| (t.1 >> 32) as u32).collect();
        assert!(
            his.contains(&0) && his.contains(&1),
            "{arch}: the high word moved during the program: {timed:x?}"
        );

        let want = page_units(&timed);
        assert_eq!(want.len(), 9);
        let got = units_at(&dev, arch, 0x30000, 12);
        assert_eq!(&got[..9], &want[..], "{arch}: units in buffer 0");
        assert_eq!(got[9], [PATTERN; 4], "{arch}: nothing past the last unit");
        // Status: position 9, nothing gathered, nothing sticky; the other registers.
        assert_eq!(
            values(&local, 7),
            [9 << 14, 3, 0, 0x3000, 0x30FF, 0x3800, 0x38FF],
            "{arch}"
        );
    }
}

#[test]
fn a_core_sees_a_unit_only_when_it_is_whole() {
    let arch = Arch::WormholeB0;
    let mut p = Prog::new();
    p.buffers((0x3000, 0x30FF), (0x3800, 0x38FF));
    p.event(0x0000_1001);
    for k in 0..4 {
        p.record_l1(0x30000 + 4 * k);
    }
    p.record(STATUS);
    p.event(0x0000_2001);
    for k in 0..4 {
        p.record_l1(0x30000 + 4 * k);
    }
    p.record(STATUS);
    let mut dev = device_with(arch, 0, true);
    fill(&dev, arch, 0x30000, 4);
    dev.load_kernel(
        0,
        t0(arch),
        Risc::Brisc,
        &elf_for(arch, Risc::Brisc, &p.done()),
        "ts.elf",
    )
    .unwrap();
    dev.run().unwrap();
    let local = dev.local_ram(0, t0(arch), Risc::Brisc).unwrap();
    let c = counters(&local, 2);
    let v = values(&local, 10);
    assert_eq!(
        v[..5],
        [PATTERN, PATTERN, PATTERN, PATTERN, 1 << 8],
        "half a unit: nothing in L1, accum_pos_64b = 1"
    );
    let unit = [0x1001, c[0] as u32, 0x2001, c[1] as u32];
    assert_eq!(v[5..9], unit, "the whole unit at once");
    assert_eq!(v[9], 1 << 14);
    assert_eq!(
        units_at(&dev, arch, 0x30000, 1),
        [unit],
        "and the host sees it in the image"
    );
}

#[test]
fn buffer_0_then_buffer_1_then_overflow_and_writing_status_back_rewinds() {
    let arch = Arch::WormholeB0;
    let mut p = Prog::new();
    p.buffers((0x3000, 0x3001), (0x3010, 0x3010)); // 2 units, then 1
    for i in 0..4 {
        p.set(TS, (i + 1) << 3); // 128-bit events, counters not checked here
        p.record(STATUS);
    }
    // Clear buffer 0's full and both overflow bits: buffer 0 rewinds, buffer 1 stays full.
    p.set(
        STATUS,
        ts::STATUS_BUF0_FULL | ts::STATUS_BUF0_OVERFLOW | ts::STATUS_BUF1_OVERFLOW,
    );
    p.record(STATUS);
    p.set(TS, 5 << 3);
    p.record(STATUS);
    // Clear buffer 1's full bit (its position cannot be read, but it rewinds too) and fill
    // buffer 0 again: the next unit goes to buffer 1's start.
    p.set(TS, 6 << 3);
    p.set(STATUS, ts::STATUS_BUF1_FULL);
    p.set(TS, 7 << 3);
    p.record(STATUS);
    let mut dev = device_with(arch, 0, true);
    fill(&dev, arch, 0x30000, 4 * 0x11);
    dev.load_kernel(
        0,
        t0(arch),
        Risc::Trisc0,
        &elf_for(arch, Risc::Trisc0, &p.done()),
        "ts.elf",
    )
    .unwrap();
    dev.run().unwrap();
    let local = dev.local_ram(0, t0(arch), Risc::Trisc0).unwrap();
    use ts::*;
    let (f0, f1, o0, o1) = (
        STATUS_BUF0_FULL,
        STATUS_BUF1_FULL,
        STATUS_BUF0_OVERFLOW,
        STATUS_BUF1_OVERFLOW,
    );
    assert_eq!(
        values(&local, 7),
        [
            1 << 14,
            f0 | 2 << 14,
            f0 | f1 | 2 << 14,
            f0 | f1 | o0 | o1 | 2 << 14,
            f1,
            f1 | 1 << 14,
            f0 | f1 | 2 << 14,
        ],
    );
    let header = |u: [u32; 4]| u[0];
    let units = units_at(&dev, arch, 0x30000, 0x11);
    assert_eq!(
        header(units[0]),
        5 << 3,
        "event 1 overwritten after the rewind"
    );
    assert_eq!(header(units[1]), 6 << 3);
    assert_eq!(
        header(units[0x10]),
        7 << 3,
        "event 3 overwritten after buffer 1's rewind; event 4 was dropped"
    );
    assert!(units[2..0x10].iter().all(|u| *u == [PATTERN; 4]));
}

/// One core's interleaving program: `n` 64-bit events tagged `tag`, `gap` loop iterations apart.
fn interleaver(tag: u32, n: u32, gap: u32) -> Prog {
    let mut p = Prog::new();
    p.buffers((0x3000, 0x30FF), (0x3800, 0x38FF));
    for i in 0..n {
        p.event(tag << 24 | i << 3 | ts::APPEND_64B);
        p.delay(gap + i % 3);
    }
    p
}

fn run_two(jit: bool) -> (Device, Vec<(Risc, u32)>) {
    let arch = Arch::WormholeB0;
    let mut dev = device_with(arch, 0, jit);
    let cores = [(Risc::Brisc, 0xB0, 4), (Risc::Trisc1, 0x71, 7)];
    for &(risc, tag, gap) in &cores {
        dev.load_kernel(
            0,
            t0(arch),
            risc,
            &elf_for(arch, risc, &interleaver(tag, 8, gap).done()),
            "ts.elf",
        )
        .unwrap();
    }
    dev.run().unwrap();
    (dev, cores.iter().map(|c| (c.0, c.1)).collect())
}

#[test]
fn two_cores_share_one_stream_in_cycle_order() {
    let arch = Arch::WormholeB0;
    let (dev, cores) = run_two(true);
    // The page's model fed with both cores' stores in cycle order (ties: BRISC first, the
    // tile's order), each event's counter its own wall-clock read + 1.
    let mut stores = Vec::new();
    for (k, &(risc, tag)) in cores.iter().enumerate() {
        let c = counters(&dev.local_ram(0, t0(arch), risc).unwrap(), 8);
        for (i, &ci) in c.iter().enumerate() {
            stores.push((ci, k, tag << 24 | (i as u32) << 3 | 1));
        }
    }
    stores.sort();
    let timed: Vec<(u32, u64)> = stores.iter().map(|s| (s.2, s.0)).collect();
    let want = page_units(&timed);
    assert_eq!(want.len(), 8);
    assert_eq!(units_at(&dev, arch, 0x30000, 8), want);
    let switches = stores.windows(2).filter(|w| w[0].1 != w[1].1).count();
    assert!(
        switches >= 4,
        "the two cores' events interleave: {stores:x?}"
    );
    // Units hold events of both cores.
    assert!(want.iter().any(|u| u[0] >> 24 != u[2] >> 24));

    let (dev2, _) = run_two(false);
    assert_eq!(
        units_at(&dev2, arch, 0x30000, 8),
        want,
        "the interpreter gives the same stream"
    );
}

fn fault_message(arch: Arch, kernels: &[(Risc, Vec<u32>)]) -> (ttprof_emu::Fault, String) {
    let mut dev = device_with(arch, 0, true);
    for (risc, words) in kernels {
        dev.load_kernel(0, t0(arch), *risc, &elf_for(arch, *risc, words), "ts.elf")
            .unwrap();
    }
    let e = dev.run().expect_err("must fault");
    (e.fault().expect("a core fault").clone(), e.to_string())
}

#[test]
fn mixing_event_sizes_is_a_fault_naming_core_pc_and_what() {
    let arch = Arch::WormholeB0;
    let mut p = Prog::new();
    p.buffers((0x3000, 0x30FF), (0x3800, 0x38FF));
    p.set(TS, 0x11); // 64-bit: half a unit
    p.li(7, 0x20);
    let pc = p.pc(arch, Risc::Trisc2);
    p.op(sw(7, 5, TS)); // 128-bit
    let (f, msg) = fault_message(arch, &[(Risc::Trisc2, p.done())]);
    assert_eq!((f.risc, f.pc), (Risc::Trisc2, pc));
    let FaultKind::Timestamper(what) = &f.kind else {
        panic!("{f:?}")
    };
    for part in [
        "undefined behaviour",
        "a 128-bit event (0x00000020)",
        "holds 2 word(s) of 64-bit events",
    ] {
        assert!(what.contains(part), "{part:?} missing from: {what}");
    }
    for part in [
        "TRISC_2",
        &format!("{pc:#010x}"),
        "debug timestamper: undefined behaviour",
        "sw t2, 508(t0)",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }

    // Low three bits 5 and 6 name no command.
    for bad in [0xFFFF_FFF5, 0x6] {
        let mut p = Prog::new();
        p.set(TS, bad);
        let (f, msg) = fault_message(arch, &[(Risc::Brisc, p.done())]);
        assert_eq!(f.risc, Risc::Brisc);
        assert!(
            msg.contains(&format!("low three bits {}", bad & 7)),
            "{msg}"
        );
    }

    // A byte store to a timestamper register: the page defines 32-bit writes.
    let mut p = Prog::new();
    p.li(7, 0x01).op(sb(7, 5, TS));
    let (f, msg) = fault_message(arch, &[(Risc::Ncrisc, p.done())]);
    assert_eq!(f.risc, Risc::Ncrisc);
    assert!(
        msg.contains("1-byte store to RISCV_DEBUG_REG_TIMESTAMP"),
        "{msg}"
    );

    // Buffers left at 0 (the page gives no reset value): the unit would overwrite BRISC's
    // boot word.
    let mut p = Prog::new();
    p.set(TS, 0x0);
    let (_, msg) = fault_message(arch, &[(Risc::Trisc0, p.done())]);
    let want =
        "buffer 0's next 16-byte unit (0x0 + position 0) is at L1 address 0x00000000, inside the code region of BRISC";
    assert!(msg.contains(want), "{msg}");
}

#[test]
fn two_cores_mixing_sizes_fault_on_the_second() {
    // The accumulation unit is the tile's, not the core's: BRISC leaves half a 64-bit unit,
    // TRISC1's 32-bit event later is undefined.
    let arch = Arch::Blackhole;
    let mut b = Prog::new();
    b.buffers((0x3000, 0x30FF), (0x3800, 0x38FF));
    b.set(TS, 0x0000_0001);
    let mut t = Prog::new();
    t.delay(100);
    t.li(7, 0x2);
    let pc = t.pc(arch, Risc::Trisc1);
    t.op(sw(7, 5, TS));
    let (f, msg) = fault_message(arch, &[(Risc::Brisc, b.done()), (Risc::Trisc1, t.done())]);
    assert_eq!((f.risc, f.pc), (Risc::Trisc1, pc), "{msg}");
    assert!(
        msg.contains("32-bit event") && msg.contains("2 word(s) of 64-bit events"),
        "{msg}"
    );
}

/// The host reaches the registers as a card's NoC window does: it sets the buffers and the
/// control register, reads the status (buffer 0's position) while the kernel runs, rewinds
/// buffer 0 by writing its full bit back, and cannot append events itself.
#[test]
fn the_host_reads_and_writes_the_registers_while_kernels_run() {
    let arch = Arch::WormholeB0;
    let t = t0(arch);
    let mut p = Prog::new();
    for i in 0..8 {
        p.set(TS, (i + 1) << 3); // 128-bit events: one unit each
        p.delay(200);
    }
    let mut dev = device_with(arch, 0, true);
    for (reg, v) in [
        (mmio::TIMESTAMP_BUF0_START, 0x3000),
        (mmio::TIMESTAMP_BUF0_END, 0x3001),
        (mmio::TIMESTAMP_BUF1_START, 0x3010),
        (mmio::TIMESTAMP_BUF1_END, 0x301F),
        (
            mmio::TIMESTAMP_CNTL,
            ts::CNTL_BUF0_VALID | ts::CNTL_BUF1_VALID,
        ),
    ] {
        dev.write_u32(0, t, reg, v).unwrap();
        assert_eq!(dev.read_u32(0, t, reg).unwrap(), v, "{reg:#x} reads back");
    }
    let e = dev
        .write_u32(0, t, mmio::TIMESTAMP, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot append events"), "{e}");
    dev.load_kernel(
        0,
        t,
        Risc::Brisc,
        &elf_for(arch, Risc::Brisc, &p.done()),
        "ts.elf",
    )
    .unwrap();
    // At every pause: take what buffer 0 holds, rewind it when full.
    let mut seen = Vec::new();
    let mut taken = 0u32;
    let mut drain = |dev: &Device| {
        let s = dev.read_u32(0, t, mmio::TIMESTAMP_STATUS).unwrap();
        let pos = (s >> ts::STATUS_BUF0_POSITION_SHIFT) & ts::STATUS_BUF0_POSITION_MASK;
        for u in taken..pos {
            seen.push(units_at(dev, arch, 0x30000 + 16 * u, 1)[0][0]);
        }
        taken = pos;
        if s & ts::STATUS_BUF0_FULL != 0 {
            dev.write_u32(0, t, mmio::TIMESTAMP_STATUS, ts::STATUS_BUF0_FULL)
                .unwrap();
            taken = 0;
        }
        assert_eq!(s & (ts::STATUS_BUF0_OVERFLOW | ts::STATUS_BUF1_OVERFLOW), 0);
    };
    dev.run_with_hook(300, &mut |d| drain(d)).unwrap();
    drain(&dev);
    assert_eq!(
        seen,
        (1..=8).map(|i| i << 3).collect::<Vec<_>>(),
        "every event, in order, none in buffer 1"
    );
}
