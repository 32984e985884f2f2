//! A host-side stand-in for one core, so that the runtime's real producer code runs in
//! ordinary unit tests and in the host crate's round-trip tests (host builds only).
//!
//! Each thread has its own simulated core: the profiler's part of L1 (control blocks and
//! rings), a wall clock that the test drives, and the `tp`/`gp` registers. Site ids are
//! handed out in first-use order, and [`Sim::sites`] returns each id's metadata JSON, the
//! same text the ELF symbol table carries on a real core.

extern crate std;

use riscv_linker::{profiler, Arch, Risc};
use std::boxed::Box;
use std::cell::RefCell;
use std::collections::HashMap;
use std::string::String;
use std::vec::Vec;

/// Bytes of simulated L1: everything up to the end of the rings.
pub const SIM_L1_BYTES: usize = riscv_linker::USER_L1_BASE as usize;

type Consumer = Box<dyn FnMut(&mut [u8])>;

struct Core {
    risc: Risc,
    arch: Arch,
    l1: Vec<u8>,
    clock: u64,
    tick: u64,
    tp: u32,
    gp: u32,
    /// The core-local hot word (`profiler::HOT_WORD`): the host cannot write it.
    hot: u32,
    sites: Vec<String>,
    ids: HashMap<usize, u16>,
    consumer: Option<Consumer>,
}

std::thread_local! {
    static CORE: RefCell<Option<Core>> = const { RefCell::new(None) };
}

fn with<R>(f: impl FnOnce(&mut Core) -> R) -> R {
    CORE.with(|c| {
        f(c.borrow_mut()
            .as_mut()
            .expect("no simulated core on this thread: call Sim::install first"))
    })
}

/// Handle to this thread's simulated core.
pub struct Sim {
    _not_send: core::marker::PhantomData<*const ()>,
}

impl Sim {
    /// Installs a fresh core (L1 zeroed, clock at `clock`) on this thread.
    pub fn install(arch: Arch, risc: Risc, clock: u64) -> Sim {
        CORE.with(|c| {
            *c.borrow_mut() = Some(Core {
                risc,
                arch,
                l1: std::vec![0; SIM_L1_BYTES],
                clock,
                tick: 1,
                tp: 0,
                gp: 0,
                hot: 0,
                sites: Vec::new(),
                ids: HashMap::new(),
                consumer: None,
            })
        });
        Sim {
            _not_send: core::marker::PhantomData,
        }
    }

    /// The RISC this simulated core is.
    pub fn risc(&self) -> Risc {
        with(|c| c.risc)
    }

    /// The simulated chip's architecture.
    pub fn arch(&self) -> Arch {
        with(|c| c.arch)
    }

    /// The wall clock.
    pub fn clock(&self) -> u64 {
        with(|c| c.clock)
    }

    /// Sets the wall clock to `t`.
    pub fn set_clock(&self, t: u64) {
        with(|c| c.clock = t)
    }

    /// Moves the wall clock forward.
    pub fn advance(&self, cycles: u64) {
        with(|c| c.clock += cycles)
    }

    /// Cycles the clock moves forward on every read (default 1).
    pub fn set_tick(&self, cycles: u64) {
        with(|c| c.tick = cycles)
    }

    /// A copy of the simulated L1.
    pub fn l1(&self) -> Vec<u8> {
        with(|c| c.l1.clone())
    }

    /// The simulated L1 word at `addr`.
    pub fn read_u32(&self, addr: u32) -> u32 {
        with(|c| rd32(&c.l1, addr))
    }

    /// Writes the simulated L1 word at `addr`.
    pub fn write_u32(&self, addr: u32, v: u32) {
        with(|c| wr32(&mut c.l1, addr, v))
    }

    /// The JSON metadata of every site used so far; index = site id.
    pub fn sites(&self) -> Vec<String> {
        with(|c| c.sites.clone())
    }

    /// Sets a function the producer calls on every iteration of a wait for the consumer,
    /// with the simulated L1: it plays the host, e.g. by advancing `TAIL`.
    pub fn set_consumer(&self, f: impl FnMut(&mut [u8]) + 'static) {
        with(|c| c.consumer = Some(Box::new(f)))
    }

    /// Starts a launch like the runtime's entry does; returns whether recording is on.
    pub fn begin_launch(&self, run_id: u32) -> bool {
        with(|c| {
            wr32(
                &mut c.l1,
                profiler::TILE_BLOCK + profiler::tile::RUN_ID,
                run_id,
            )
        });
        crate::producer::begin_launch(hw::clock64())
    }

    /// Ends a launch: publishes everything written.
    pub fn end_launch(&self) {
        crate::producer::end_launch()
    }

    /// Records a zone with explicit 64-bit times (as the FW/KERNEL wrappers do).
    pub fn record_span(&self, site: crate::Site, start: u64, end: u64) {
        crate::zone::record_span(site.id(), start, end)
    }
}

fn rd32(l1: &[u8], addr: u32) -> u32 {
    let a = addr as usize;
    u32::from_le_bytes(l1[a..a + 4].try_into().expect("4 bytes"))
}

fn wr32(l1: &mut [u8], addr: u32, v: u32) {
    let a = addr as usize;
    l1[a..a + 4].copy_from_slice(&v.to_le_bytes());
}

/// The simulated versions of `crate::hw`'s operations.
pub(crate) mod hw {
    use super::*;
    use crate::wire::SHORT_LIMIT;

    pub fn clock_lo() -> u32 {
        clock64() as u32
    }

    pub fn clock64() -> u64 {
        with(|c| {
            let t = c.clock;
            c.clock += c.tick;
            t
        })
    }

    pub fn tp() -> u32 {
        with(|c| c.tp)
    }

    pub fn set_tp(v: u32) {
        with(|c| c.tp = v)
    }

    pub fn gp() -> u32 {
        with(|c| c.gp)
    }

    pub fn set_gp(v: u32) {
        with(|c| c.gp = v)
    }

    pub fn hot() -> u32 {
        with(|c| c.hot)
    }

    pub fn set_hot(v: u32) {
        with(|c| c.hot = v)
    }

    pub fn rd32(addr: u32) -> u32 {
        with(|c| super::rd32(&c.l1, addr))
    }

    pub fn wr32(addr: u32, v: u32) {
        with(|c| super::wr32(&mut c.l1, addr, v))
    }

    pub fn wr16(addr: u32, v: u16) {
        with(|c| c.l1[addr as usize..addr as usize + 2].copy_from_slice(&v.to_le_bytes()))
    }

    pub fn publish_fence() {}

    pub fn spin_hint() {
        // Run the test's consumer outside the borrow of the core.
        let consumer = with(|c| c.consumer.take());
        if let Some(mut f) = consumer {
            let mut l1 = with(|c| core::mem::take(&mut c.l1));
            f(&mut l1);
            with(|c| {
                c.l1 = l1;
                c.consumer = Some(f);
            });
        }
    }

    pub fn risc() -> Risc {
        with(|c| c.risc)
    }

    pub fn arch_id() -> u32 {
        with(|c| c.arch.id())
    }

    pub fn runtime_args() -> u32 {
        riscv_linker::runtime_args(risc()).start
    }

    pub fn ring_block() -> u32 {
        profiler::ring_block(risc())
    }

    pub fn ring_base() -> u32 {
        profiler::ring_data(risc()).start
    }

    pub fn ring_capacity() -> u32 {
        profiler::ring_data(risc()).size
    }

    /// Dense ids in first-use order (the ELF gives the same density on a core).
    pub fn site_word(site: &'static u8, meta: &'static str) -> u32 {
        with(|c| {
            let key = site as *const u8 as usize;
            if let Some(id) = c.ids.get(&key) {
                return *id as u32;
            }
            let id = c.sites.len() as u16;
            c.sites.push(meta.into());
            c.ids.insert(key, id);
            id as u32
        })
    }

    /// The hot path's open, step for step: `(start, anchor)`, the anchor 0 when recording
    /// is off.
    pub fn open_fast() -> (u32, u32) {
        let anchor = hot();
        if anchor == 0 {
            return (0, 0);
        }
        (clock_lo(), anchor)
    }

    /// The hot path's close, step for step.
    pub fn close_fast(id: u32, start: u32, anchor: u32) {
        let end = clock_lo();
        let d = end.wrapping_sub(start);
        let (tp, gp) = with(|c| (c.tp, c.gp));
        let old = end.wrapping_sub(anchor) >= SHORT_LIMIT;
        if tp >= gp || old && (d >= SHORT_LIMIT || !crate::producer::refresh(end, anchor)) {
            return crate::records::zone_close(id, d, end);
        }
        wr16(tp, id as u16);
        wr16(tp + 2, d as u16);
        wr16(tp + 4, end as u16);
        set_tp(tp + 6);
    }
}
