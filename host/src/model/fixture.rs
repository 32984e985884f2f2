//! A small synthetic run for the model's and the outputs' unit tests: one Wormhole chip, two tiles,
//! all five RISCs, three ops and a signpost, with records whose times follow simple
//! formulas ([`times`]) so tests can compute every expected number by hand.

use crate::decode::{RecordKind, Records};
use crate::oplog::{KernelBinding, OpLog, OpLogEntry, OpRecord, Signpost, TensorDesc};
use crate::readout::{Readout, RingId, RingReport};
use crate::resolve::Resolution;
use crate::sites::SiteTable;
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, NocCoord, Risc};
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) const ARCH: Arch = Arch::WormholeB0;
pub(crate) const TILES: [NocCoord; 2] = [NocCoord::new(1, 1), NocCoord::new(2, 1)];
/// `(run id, op code)`.
pub(crate) const OPS: [(u32, &str); 3] = [(1, "EltwiseAdd"), (2, "Matmul"), (3, "Relu")];

/// Site ids of the table [`sites`] builds.
#[allow(dead_code)]
pub(crate) mod site {
    pub(crate) const BRISC_FW: u16 = 0;
    pub(crate) const BRISC_KERNEL: u16 = 1;
    pub(crate) const NCRISC_FW: u16 = 2;
    pub(crate) const NCRISC_KERNEL: u16 = 3;
    pub(crate) const TRISC_FW: u16 = 4;
    pub(crate) const TRISC_KERNEL: u16 = 5;
    pub(crate) const WORK: u16 = 6;
    pub(crate) const INNER: u16 = 7;
    pub(crate) const BARRIER: u16 = 8;
    pub(crate) const BYTES: u16 = 9;
    pub(crate) const WAIT: u16 = 10;
}

/// The site table every ring uses.
pub(crate) fn sites() -> SiteTable {
    let z = |kind: &str, name: &str, line: u32| crate::testing::site_json(kind, name, line);
    SiteTable::from_json_list(&[
        z("zone", "BRISC-FW", 1),
        z("zone", "BRISC-KERNEL", 2),
        z("zone", "NCRISC-FW", 3),
        z("zone", "NCRISC-KERNEL", 4),
        z("zone", "TRISC-FW", 5),
        z("zone", "TRISC-KERNEL", 6),
        z("zone", "work", 10),
        z("value_zone", "inner", 11),
        z("event", "barrier", 12),
        z("data", "bytes", 13),
        z("sum", "wait", 14),
    ])
    .expect("fixture sites")
}

fn fw_site(risc: Risc) -> u16 {
    match risc {
        Risc::Brisc => site::BRISC_FW,
        Risc::Ncrisc => site::NCRISC_FW,
        _ => site::TRISC_FW,
    }
}

/// Cycle times of one launch on one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Times {
    pub fw: (u64, u64),
    pub kernel: (u64, u64),
    pub work: (u64, u64),
    pub inner: (u64, u64),
}

/// The times of op `run` on tile index `t` and `risc`: tens of microseconds per op at the
/// nominal 1 GHz, never whole microseconds.
pub(crate) fn times(run: u32, t: usize, risc: Risc) -> Times {
    let i = risc.index() as u64;
    let t = t as u64;
    let fw_start = 1_000_000 * run as u64 + 1_000 * t + 7 * i;
    let kernel_start = fw_start + 2_000;
    let kernel_len = 50_123 + 10_000 * t + 1_000 * i + if run == 2 { 100_000 } else { 0 };
    let kernel_end = kernel_start + kernel_len;
    let work_start = kernel_start + 5;
    let work = (work_start, work_start + kernel_len / 2);
    Times {
        fw: (fw_start, kernel_end + 1_500),
        kernel: (kernel_start, kernel_end),
        work,
        inner: (work_start + 1, work_start + 11),
    }
}

/// The value of the `inner` value zone of op `run` on tile index `t` and `risc`.
pub(crate) fn inner_value(run: u32, t: usize, risc: Risc) -> u32 {
    100 * run + 10 * t as u32 + risc.index() as u32
}

/// The records one core writes for all ops, in ring order (zones at their close).
pub(crate) fn records(t: usize, risc: Risc) -> Records {
    let mut r = Records::new();
    for (run, _) in OPS {
        let x = times(run, t, risc);
        r.push(RecordKind::Run, 0, x.fw.0, x.fw.0, run as u64, 0, run);
        r.push(
            RecordKind::ValueZone,
            site::INNER,
            x.inner.0,
            x.inner.1,
            inner_value(run, t, risc) as u64,
            0,
            run,
        );
        r.push(RecordKind::Zone, site::WORK, x.work.0, x.work.1, 0, 0, run);
        r.push(
            RecordKind::Event,
            site::BARRIER,
            x.work.1,
            x.work.1,
            0,
            0,
            run,
        );
        r.push(
            RecordKind::Data,
            site::BYTES,
            x.work.1 + 1,
            x.work.1 + 1,
            4096,
            0,
            run,
        );
        r.push(
            RecordKind::Zone,
            fw_site(risc) + 1,
            x.kernel.0,
            x.kernel.1,
            0,
            0,
            run,
        );
        r.push(
            RecordKind::Sum,
            site::WAIT,
            x.kernel.1,
            x.kernel.1,
            30,
            3,
            run,
        );
        r.push(RecordKind::Zone, fw_site(risc), x.fw.0, x.fw.1, 0, 0, run);
    }
    r
}

/// A readout of every ring of the fixture.
pub(crate) fn readout() -> Readout {
    let mut rings = Vec::new();
    for (t, tile) in TILES.iter().enumerate() {
        for risc in Risc::ALL {
            let records = records(t, risc);
            rings.push(RingReport {
                id: RingId {
                    chip: 0,
                    tile: *tile,
                    risc,
                },
                payload_bytes: 12 * records.len() as u64,
                records,
                control: None,
                dropped: 0,
                stalls: 0,
                losses_in_band: 0,
                state: riscv_linker::profiler::ring::STATE_EXITED,
                skipped_bytes: 0,
                bus_bytes: 0,
                corrupt: None,
                released: None,
            });
        }
    }
    Readout {
        geometry: Geometry {
            arch: ARCH,
            chips: 1,
            tiles_per_chip: TILES.len() as u32,
            l1_size: ARCH.l1_size(),
        },
        rings,
        issues: vec![],
        bus_bytes: 0,
        tiles: TILES.len() as u32,
        unused_tiles: 0,
    }
}

/// [`readout`] with every record `offset` cycles later: a chip whose counter has run for
/// months (2^53 cycles is 104 days at 1 GHz), where an `f64` of cycles or ns is no longer
/// whole.
pub(crate) fn readout_at(offset: u64) -> Readout {
    let mut r = readout();
    for ring in &mut r.rings {
        ring.records = ring.records.shifted(offset);
    }
    r
}

/// The fixture's profile with every count `offset` cycles on ([`readout_at`]), on `arch`'s
/// nominal clock, with the fixture's op log when `logged` (else its runs are unnamed).
pub(crate) fn profile_at(offset: u64, arch: Arch, logged: bool) -> crate::profile::Profile {
    profile_of(readout_at(offset), arch, logged)
}

/// The profile of readout `r` (a fixture's, changed by a test) resolved with the fixture's
/// sites, on `arch`'s nominal clock, with the fixture's op log when `logged`.
pub(crate) fn profile_of(r: Readout, arch: Arch, logged: bool) -> crate::profile::Profile {
    let res = resolution(&r);
    let log = logged.then(oplog);
    crate::profile::Profile::resolved(r, res, log, crate::timebase::Timebase::nominal(arch, 1))
}

/// The nearest whole ns of `cycles` on `arch`'s nominal clock (halves up), in integers: what
/// an output exact at any count writes.
pub(crate) fn whole_ns(arch: Arch, cycles: u64) -> u128 {
    let mhz = arch.aiclk_mhz() as u128;
    (2000 * cycles as u128 + mhz) / (2 * mhz)
}

pub(crate) fn resolution(r: &Readout) -> Resolution {
    Resolution::uniform(r, Arc::new(sites()))
}

fn tensor(memory: &str) -> TensorDesc {
    TensorDesc {
        id: None,
        shape: [1, 1, 64, 32],
        layout: "TILE".into(),
        dtype: "BFLOAT16".into(),
        memory: memory.into(),
    }
}

/// The op for `run` as the host logged it: host times bracket the device times.
pub(crate) fn op(run: u32, code: &str) -> OpRecord {
    let mut attributes = serde_json::Map::new();
    attributes.insert("tiles_per_core".into(), 4.into());
    attributes.insert("note".into(), "a, b".into());
    if code == "Matmul" {
        attributes.insert("math_fidelity".into(), "HiFi2".into());
    }
    let inputs = if code == "Relu" {
        vec![tensor("DEV_0_L1_INTERLEAVED")]
    } else {
        vec![tensor("DEV_0_DRAM_INTERLEAVED"); 2]
    };
    OpRecord {
        run_id: run,
        device: 0,
        op_code: code.into(),
        op_type: "tt_dnn_device".into(),
        attributes,
        inputs,
        outputs: vec![tensor("DEV_0_L1_INTERLEAVED")],
        host_start_ns: 1_000_000 * run as u64 - 50_000,
        host_end_ns: 1_000_000 * run as u64 + 300_000,
        kernels: Risc::ALL
            .iter()
            .map(|r| KernelBinding {
                risc: r.name().into(),
                elf: format!("kernels/{}", r.ident()).into(),
                cores: TILES.iter().map(|t| [t.x, t.y]).collect(),
            })
            .collect(),
        counters: vec![],
    }
}

/// The op log: the three ops, with a signpost between the first and the second.
pub(crate) fn oplog() -> OpLog {
    let mut entries = Vec::new();
    for (run, code) in OPS {
        entries.push(OpLogEntry::Op(op(run, code)));
        if run == 1 {
            entries.push(OpLogEntry::Signpost(Signpost {
                name: "warmup-done".into(),
                device: 0,
                host_ns: 1_500_000,
            }));
        }
    }
    OpLog {
        path: PathBuf::from("/fixture/ops.jsonl"),
        entries,
        inputs: crate::inputs::Inputs::none(),
    }
}

/// The fixture's timeline at the nominal clock.
pub(crate) fn timeline() -> crate::timeline::Timeline {
    let r = readout();
    let res = resolution(&r);
    crate::timeline::Timeline::build(
        &r,
        &res,
        Some(&oplog()),
        &crate::timebase::Timebase::nominal(ARCH, 1),
    )
}
