//! The roofline line per op (`ttprof run --counters`): what the op achieved against the
//! arch's peaks, over the cycles its counters covered on its tiles.
//!
//! | rate | from | peak per cycle and tile |
//! | --- | --- | --- |
//! | `FPU`, `SFPU`, `FPU or SFPU` | the FPU bank's `FPU_COUNTER`, `SFPU_COUNTER`, `MATH_COUNTER` (one a cycle per instruction issued) | 1 instruction: the unit accepts one a cycle |
//! | `NoC read`, `NoC write` | the NIUs' `RD_DATA_WORD_RECEIVED`, `*_WR_DATA_WORD_SENT`, both NoCs | one NoC word (32 B on Wormhole B0, 64 on Blackhole): a link moves a flit a cycle; the tile's two NoCs can pass 100% |
//!
//! Each rate sums its amount and its cycles over the op's tiles (a tile's mean). The rate
//! nearest its peak names what the op presses on when it reaches half of it; when none
//! does, no counted throughput bounds the op: latency, hand-overs and the cores' own
//! instructions do (the verdict's stage says whose).

use crate::oplog::OpRecord;
use crate::sink::summary::grouped_int;
use riscv_linker::Arch;
use serde::Serialize;

/// From this share of its peak (%) a rate is named as what the op presses on.
const NEAR_PEAK_PCT: f64 = 50.0;

/// One achieved rate against its peak.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    /// What moved: `FPU`, `SFPU`, `FPU or SFPU`, `NoC read`, `NoC write`.
    pub what: &'static str,
    /// Its unit: `instructions` or `bytes`.
    pub unit: &'static str,
    /// How many, summed over tiles.
    pub amount: u64,
    /// Per cycle and tile.
    pub per_cycle: f64,
    /// The arch's peak per cycle and tile (module docs).
    pub peak_per_cycle: f64,
    /// `per_cycle` over `peak_per_cycle`, %.
    pub pct: f64,
}

/// An op's rates against the arch's peaks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Roofline {
    /// The cycles the rates are over: the counters' cycles, summed over tiles.
    pub cycles: u64,
    /// FPU first, then the NoC's.
    pub rates: Vec<Rate>,
    /// The rate nearest its peak, when it reaches half of it (`None`: none does).
    pub nearest: Option<&'static str>,
}

/// The issued-instruction counters of the FPU bank and what each counts.
fn fpu_rate(name: &str) -> Option<&'static str> {
    match name {
        "FPU_COUNTER" => Some("FPU"),
        "SFPU_COUNTER" => Some("SFPU"),
        "MATH_COUNTER" => Some("FPU or SFPU"),
        _ => None,
    }
}

/// The roofline of an op from its op log record's counters (`None`: none were read).
pub(crate) fn of(rec: Option<&OpRecord>, arch: Arch) -> Option<Roofline> {
    let rec = rec?;
    if rec.counters.is_empty() {
        return None;
    }
    let cycles = rec
        .counters
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.cycles));
    let rate = |what, unit, amount: u64, peak: f64| {
        let per_cycle = if cycles > 0 {
            amount as f64 / cycles as f64
        } else {
            0.0
        };
        Rate {
            what,
            unit,
            amount,
            per_cycle,
            peak_per_cycle: peak,
            pct: super::pct(per_cycle, peak),
        }
    };
    let mut rates: Vec<Rate> = super::counters::of_record(rec)
        .into_iter()
        .filter(|c| c.bank == "FPU")
        .filter_map(|c| Some(rate(fpu_rate(&c.name)?, "instructions", c.value, 1.0)))
        .collect();
    let word = riscv_linker::noc::flit_bytes(arch) as f64;
    let noc = |f: fn(&crate::oplog::TileCounters) -> Option<u64>| {
        rec.counters
            .iter()
            .map(f)
            .try_fold(0u64, |a, b| Some(a.saturating_add(b?)))
    };
    if let Some(read) = noc(|t| t.noc_read_bytes) {
        rates.push(rate("NoC read", "bytes", read, word));
    }
    if let Some(write) = noc(|t| t.noc_write_bytes) {
        rates.push(rate("NoC write", "bytes", write, word));
    }
    let nearest = rates
        .iter()
        .filter(|r| r.pct >= NEAR_PEAK_PCT)
        .max_by(|a, b| a.pct.total_cmp(&b.pct))
        .map(|r| r.what);
    Some(Roofline {
        cycles,
        rates,
        nearest,
    })
}

/// `roofline over 20,959 cycles: FPU 35 instructions, 0.002 a cycle, 0.2% of its peak of
/// 1; NoC read 4,096 bytes, ...; no rate near its peak: latency and issue bound it`.
pub(crate) fn line(r: &Roofline) -> String {
    let shown: Vec<String> = r
        .rates
        .iter()
        .map(|x| {
            format!(
                "{} {} {}, {} a cycle, {:.1}% of its peak of {}",
                x.what,
                grouped_int(x.amount.into()),
                x.unit,
                per_cycle(x.per_cycle),
                x.pct,
                per_cycle(x.peak_per_cycle)
            )
        })
        .collect();
    let verdict = match r.nearest {
        Some(what) => format!("nearest its peak: {what}"),
        None if r.rates.is_empty() => "no rate counted (arm fpu for the FPU's)".to_string(),
        None => "no rate near its peak: latency, hand-overs and instruction issue bound it, \
                 not throughput"
            .to_string(),
    };
    format!(
        "roofline over {} cycles: {}; {verdict}",
        grouped_int(r.cycles.into()),
        shown.join("; ")
    )
}

/// A rate per cycle with the digits it needs: whole numbers whole, else two significant
/// digits below 1 (`0.70`, `0.032`) and two decimals above (`1.95`).
fn per_cycle(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        let decimals = (1 - v.log10().floor() as i32).clamp(1, 12) as usize;
        format!("{v:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::{CounterValue, OpRecord, TileCounters};

    fn log(tiles: Vec<TileCounters>) -> (tempfile::TempDir, crate::oplog::OpLog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.jsonl");
        let mut op = OpRecord::device_op(4, 0, "Matmul", (0, 1), vec![]);
        op.counters = tiles;
        let mut w =
            crate::oplog::OpLogWriter::create(&path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&op).unwrap();
        drop(w);
        let log = crate::oplog::OpLog::read(&path, &crate::inputs::Inputs::none()).unwrap();
        (dir, log)
    }

    fn tile(cycles: u64, fpu: u64, read: u64, write: u64) -> TileCounters {
        TileCounters {
            core: [1, 1],
            cycles,
            values: vec![
                CounterValue {
                    bank: "FPU".into(),
                    name: "FPU_COUNTER".into(),
                    value: fpu,
                },
                CounterValue {
                    bank: "TDMA_PACK".into(),
                    name: "PACKER_BUSY".into(),
                    value: 7,
                },
            ],
            noc_read_bytes: Some(read),
            noc_write_bytes: Some(write),
        }
    }

    #[test]
    fn rates_sum_over_tiles_against_the_arch_peaks() {
        let (_d, l) = log(vec![
            tile(1_000, 900, 16_000, 0),
            tile(1_000, 500, 8_000, 64),
        ]);
        let r = of(l.op(0, 4), Arch::WormholeB0).unwrap();
        assert_eq!(r.cycles, 2_000);
        let got: Vec<(&str, u64, f64, f64)> = r
            .rates
            .iter()
            .map(|x| (x.what, x.amount, x.peak_per_cycle, x.pct))
            .collect();
        assert_eq!(
            got,
            [
                ("FPU", 1_400, 1.0, 70.0),
                ("NoC read", 24_000, 32.0, 37.5),
                ("NoC write", 64, 32.0, 0.1)
            ]
        );
        assert_eq!(r.nearest, Some("FPU"));
        assert_eq!(
            line(&r),
            "roofline over 2,000 cycles: FPU 1,400 instructions, 0.70 a cycle, 70.0% of its peak of 1; \
             NoC read 24,000 bytes, 12 a cycle, 37.5% of its peak of 32; NoC write 64 bytes, 0.032 a \
             cycle, 0.1% of its peak of 32; nearest its peak: FPU"
        );
        // Blackhole's NoC word is 64 B.
        let bh = of(l.op(0, 4), Arch::Blackhole).unwrap();
        assert_eq!((bh.rates[1].peak_per_cycle, bh.rates[1].pct), (64.0, 18.75));
        // No counters read: no roofline; a log without NoC bytes has only the FPU's.
        assert!(of(l.op(0, 5), Arch::WormholeB0).is_none());
        let mut old = tile(1_000, 10, 0, 0);
        old.noc_read_bytes = None;
        old.noc_write_bytes = None;
        let (_d, l) = log(vec![old]);
        let r = of(l.op(0, 4), Arch::WormholeB0).unwrap();
        assert_eq!(r.rates.len(), 1);
        assert_eq!(r.nearest, None);
        assert!(line(&r).ends_with("no rate near its peak: latency, hand-overs and instruction issue bound it, not throughput"));
    }
}
