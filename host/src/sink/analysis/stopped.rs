//! An op a kernel fault stopped (a deadlock, a wall-clock timeout, a fault of one core) in
//! `ttprof_analysis.json`: the op with what its records say so far (its RISCs from the op
//! log, those whose KERNEL zone never closed marked `missing_kernel_zone`, the waits that
//! closed), and under `stopped` what each core was doing when it stopped: its line of the
//! fault report and the typed waits it held open, with the cycle each opened at.
//!
//! ```json
//! "stopped": {
//!   "fault": "deadlock: none of the 2 running core(s) can make progress (...)",
//!   "cores": [{
//!     "tile": "1-1", "risc": "BRISC", "stage": "reader", "pc": "0x00000860",
//!     "state": "chip 0 tile (1,1) BRISC at pc 0x00000860 in kernel_main+0x24 (reader.c:7): polls L1 0x00030000 (reads 0x0 at reader.c:7)",
//!     "stopped_cycles": 1234567,
//!     "open_waits": [{"zone": "stuck-wait", "resource": "CB 1 front (data)", "at": "reader.c:6",
//!                     "since_cycles": 1100000, "waited_cycles": 134567, "waited_ns": 134567.0}]
//!   }],
//!   "others": []
//! }
//! ```
//!
//! Only the run that stopped knows this (the session reads it off the stopped cores): `ttprof
//! report` of the run's snapshot has the op's records, not its stop.

use super::gather::LaterTiles;
use super::{stage_name, tile_name, Analyzer, OpAnalysis};
use crate::profile::Profile;
use riscv_linker::{NocCoord, Risc};
use serde::Serialize;

/// What stopped an op, and where each of its cores was.
#[derive(Clone, Debug, Serialize)]
pub struct Stopped {
    /// The op's chip.
    #[serde(skip)]
    pub(crate) chip: u32,
    /// Its run id.
    #[serde(skip)]
    pub(crate) run: u32,
    /// What stopped it, as the emulator names it (`deadlock: none of the 2 running core(s)
    /// can make progress (...)`, `stopped at the wall-clock deadline ...`, a fault).
    pub fault: String,
    /// Every core still running when it stopped (a deadlock or timeout lists them all), or
    /// the one that faulted.
    pub cores: Vec<StoppedCore>,
    /// The fault report's lines about what is not a core: each Tensix coprocessor thread
    /// that was waiting, and on what.
    pub others: Vec<String>,
}

/// One core of a stopped op.
#[derive(Clone, Debug, Serialize)]
pub struct StoppedCore {
    /// Its tile.
    #[serde(skip)]
    pub(crate) noc: NocCoord,
    /// The core.
    #[serde(skip)]
    pub(crate) core: Risc,
    /// NoC0 `x-y`.
    pub tile: String,
    /// `BRISC`, `TRISC_1`, ...
    pub risc: String,
    /// The kernel it ran (its ELF's stem) or its role.
    pub stage: String,
    /// Where it stopped.
    pub pc: String,
    /// Its line of the fault report: where it stopped (function, source line) and what it
    /// keeps reading (the L1 word or register it polls and the value there).
    pub state: String,
    /// Its tile's wall clock when it stopped, cycles (the device CSV's clock).
    pub stopped_cycles: Option<u64>,
    /// The typed waits (`wait!`, `TTPROF_WAIT`) open at its pc, outermost first (from the
    /// kernel's DWARF; empty where it lost the scope).
    pub open_waits: Vec<OpenWait>,
}

/// A typed wait a stopped core was inside.
#[derive(Clone, Debug, Serialize)]
pub struct OpenWait {
    /// The wait zone's name.
    pub zone: String,
    /// What it waits on (`CB 1 front (data)`, `semaphore 3`).
    pub resource: String,
    /// Its source line, `file:line`.
    pub at: String,
    /// When it opened, on its tile's wall clock (cycles; from the start its guard holds,
    /// `None` where the DWARF gives no location for the guard at the pc).
    pub since_cycles: Option<u64>,
    /// From its opening to the stop, cycles.
    pub waited_cycles: Option<u64>,
    /// The same in ns of its chip's clock.
    pub waited_ns: Option<f64>,
}

impl StoppedCore {
    /// Core `risc` of `tile`, stopped at `pc` (`state`: its line of the report), its tile's
    /// wall clock then `stopped_cycles`.
    pub(crate) fn new(
        tile: NocCoord,
        risc: Risc,
        pc: u32,
        state: String,
        stopped_cycles: Option<u64>,
        open_waits: Vec<OpenWait>,
    ) -> StoppedCore {
        StoppedCore {
            noc: tile,
            core: risc,
            tile: tile_name(tile),
            risc: risc.name().to_string(),
            stage: String::new(),
            pc: format!("{pc:#010x}"),
            state,
            stopped_cycles,
            open_waits,
        }
    }
}

impl OpenWait {
    /// Wait `zone` on `resource` at `at`, open since `since_cycles` on a core stopped at
    /// `stopped_cycles`.
    pub(crate) fn new(
        zone: String,
        resource: String,
        at: String,
        since_cycles: Option<u64>,
        stopped_cycles: Option<u64>,
    ) -> OpenWait {
        let waited_cycles = since_cycles
            .zip(stopped_cycles)
            .and_then(|(s, e)| e.checked_sub(s));
        OpenWait {
            zone,
            resource,
            at,
            since_cycles,
            waited_cycles,
            waited_ns: None,
        }
    }
}

/// Fills in each stopped core's stage and each open wait's ns (the profile names the
/// stages and gives the chip's clock).
pub(crate) fn prepare(p: &Profile, stopped: &mut [Stopped]) {
    for s in stopped.iter_mut() {
        let Some(op) = p.op_of(s.chip, s.run) else {
            continue;
        };
        let cpn = p
            .timebase
            .chips
            .get(&s.chip)
            .map(|c| c.cycles_per_ns)
            .filter(|c| *c > 0.0);
        for c in &mut s.cores {
            c.stage = stage_name(p, op, c.noc, c.core);
            for w in &mut c.open_waits {
                w.waited_ns = w.waited_cycles.zip(cpn).map(|(n, cpn)| n as f64 / cpn);
            }
        }
    }
}

/// `ops` (in op order) with each op of `stopped` they lack (an op whose cores recorded no
/// zone: a KERNEL zone that never closed leaves its cells empty) added in its place in op
/// order.
pub(crate) fn with_stopped<'p>(
    ops: impl Iterator<Item = (OpAnalysis, LaterTiles<'p>)> + 'p,
    p: &'p Profile,
    stopped: &[Stopped],
) -> impl Iterator<Item = (OpAnalysis, LaterTiles<'p>)> + 'p {
    let mut lacking: Vec<u32> = stopped
        .iter()
        .filter_map(|s| p.op_of(s.chip, s.run))
        .collect();
    lacking.sort_unstable();
    lacking.dedup();
    let mut lacking = lacking.into_iter().peekable();
    let mut ops = ops.peekable();
    std::iter::from_fn(move || loop {
        let Some(&stop) = lacking.peek() else {
            return ops.next();
        };
        let next = ops.peek().map(|(o, _)| p.op_of(o.chip, o.run));
        match next {
            // The op is there: nothing to add.
            Some(Some(i)) if i == stop => {
                lacking.next();
            }
            // An op before the stopped one (or one the profile does not index).
            Some(i) if i.is_none_or(|i| i < stop) => return ops.next(),
            // The stopped op's place: after every op before it.
            _ => {
                lacking.next();
                if let Some(op) = empty_op(p, stop) {
                    return Some((op, LaterTiles::none(p)));
                }
            }
        }
    })
}

/// Op `op` as the analysis makes it from no record: a tile per core the op log ran a
/// kernel on, each RISC without its KERNEL zone.
fn empty_op(p: &Profile, op: u32) -> Option<OpAnalysis> {
    let o = p.ops.get(op as usize)?;
    let mut analyzer = Analyzer::default();
    let kernels = p.op_record(o.chip, o.run);
    for k in kernels.iter().flat_map(|r| &r.kernels) {
        for c in &k.cores {
            analyzer.add_tile(op, o.chip, NocCoord::new(c[0], c[1]));
        }
    }
    let empty = || OpAnalysis {
        op: o.name.clone(),
        chip: o.chip,
        run: o.run,
        span_ns: 0.0,
        riscs: Vec::new(),
        verdict: None,
        disagreeing_tiles: Vec::new(),
        tiles: Vec::new(),
        tiles_left_out: 0,
        critical_path: None,
        counters: Vec::new(),
        counted_zones: Vec::new(),
        roofline: None,
    };
    Some(analyzer.finish(p).ops.pop().unwrap_or_else(empty))
}
