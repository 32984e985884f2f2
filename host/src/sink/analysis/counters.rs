//! Performance counters per op (`ttprof run --counters`): what the op log holds per tile,
//! summed over the op's tiles, as `ttprof_analysis.json`'s `counters` and one line of the
//! summary. A counter's share is its value over the cycles its bank counted on the same
//! tiles (the launch, host-armed before and read after: docs/design/perf-counters.md).

use crate::oplog::OpRecord;
use crate::sink::summary::grouped_int;
use serde::Serialize;

/// One counter over one op, summed over the tiles that counted it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpCounter {
    /// Its bank (`FPU`, `INSTRN_THREAD`, `TDMA_UNPACK`, `TDMA_PACK`).
    pub bank: String,
    /// The counter as tt-llk's tables name it (`FPU_COUNTER`).
    pub name: String,
    /// Its value, summed over tiles.
    pub value: u64,
    /// Cycles its bank counted, summed over the same tiles.
    pub cycles: u64,
    /// `value` over `cycles`, % (instruction counts can pass 100).
    pub pct: f64,
    /// How many tiles counted it.
    pub tiles: u32,
}

/// The counters the op log's record `rec` of an op holds, in the order they were armed.
pub(crate) fn of(rec: Option<&OpRecord>) -> Vec<OpCounter> {
    rec.map_or_else(Vec::new, of_record)
}

/// The counters of op record `rec`, summed over its tiles, in the order they were armed.
pub(crate) fn of_record(rec: &OpRecord) -> Vec<OpCounter> {
    let mut out: Vec<OpCounter> = Vec::new();
    for tile in &rec.counters {
        for c in &tile.values {
            let i = match out
                .iter()
                .position(|o| o.bank == c.bank && o.name == c.name)
            {
                Some(i) => i,
                None => {
                    out.push(OpCounter {
                        bank: c.bank.clone(),
                        name: c.name.clone(),
                        value: 0,
                        cycles: 0,
                        pct: 0.0,
                        tiles: 0,
                    });
                    out.len() - 1
                }
            };
            let o = &mut out[i];
            o.value = o.value.saturating_add(c.value);
            o.cycles = o.cycles.saturating_add(tile.cycles);
            o.tiles += 1;
        }
    }
    for o in &mut out {
        o.pct = super::pct(o.value as f64, o.cycles as f64);
    }
    out
}

/// `counters over 1 tile(s): FPU_COUNTER 35 of 20,959 cycles (0.2%); ...`; empty
/// when it has none.
pub(crate) fn line(counters: &[OpCounter]) -> String {
    if counters.is_empty() {
        return String::new();
    }
    let tiles = counters.iter().map(|c| c.tiles).max().unwrap_or(0);
    let shown: Vec<String> = counters
        .iter()
        .map(|c| {
            format!(
                "{} {} of {} cycles ({:.1}%)",
                c.name,
                grouped_int(c.value.into()),
                grouped_int(c.cycles.into()),
                c.pct
            )
        })
        .collect();
    format!("counters over {tiles} tile(s): {}", shown.join("; "))
}

/// The counted zones (`counted_zone!`) of one name in one op: the change of their bank's
/// counter over them, summed over every such zone of the op.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CountedZone {
    /// The zone's name.
    pub zone: String,
    /// The bank it counts (`fpu`, `instrn`, `unpack`, `pack`, `l1`).
    pub bank: &'static str,
    /// The counter `--counters` armed in that bank for the op (`None`: none was armed, so
    /// the zones measured nothing and `value` is left out).
    pub counter: Option<String>,
    /// How many zones.
    pub zones: u64,
    /// The counter's change summed over them (`None` when no counter was armed).
    pub value: Option<u64>,
    /// Their cycles, summed.
    pub cycles: u64,
    /// `value` over `cycles`, %.
    pub pct: Option<f64>,
}

/// The verdict's evidence from the op's counters: `Tensix counters over the op:
/// FPU_COUNTER 0.2% of cycles, PACKER_BUSY 1.2%` (what the bounding stage's busy time was
/// spent on, in the units' own terms).
pub(crate) fn evidence(counters: &[OpCounter]) -> String {
    let shown: Vec<String> = counters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let of = if i == 0 { " of cycles" } else { "" };
            format!("{} {:.1}%{of}", c.name, c.pct)
        })
        .collect();
    format!("Tensix counters over the op: {}", shown.join(", "))
}

/// From this share of the op's cycles (%) a counted unit decides a compute verdict: the
/// unit was busy (or made the math thread wait) at least half the op.
pub(crate) const UNIT_BOUND_PCT: f64 = 50.0;

/// The coprocessor unit a counter speaks for, and how (`None`: it names no unit's
/// throughput, e.g. `THREAD_STALLS_1`).
fn unit_of(c: &OpCounter) -> Option<(&'static str, &'static str)> {
    let n = c.name.as_str();
    Some(match c.bank.as_str() {
        "FPU" => match n {
            "FPU_COUNTER" | "MATH_INSTRN_STARTED" => ("FPU", "issued"),
            "SFPU_COUNTER" => ("SFPU", "issued"),
            "MATH_COUNTER" => ("FPU or SFPU", "issued"),
            _ => return None,
        },
        "TDMA_UNPACK" if n.contains("BUSY") => ("unpacker", "busy"),
        "TDMA_PACK" if n.contains("BUSY") => ("packer", "busy"),
        // The math thread waiting for operands: the unpackers do not keep up; the unpacker
        // waiting for a source bank to clear: the math does not.
        "INSTRN_THREAD" if n.starts_with("WAITING_FOR_SRC") && n.ends_with("_VALID") => {
            ("unpacker", "starved the math thread")
        }
        "INSTRN_THREAD" if n.starts_with("WAITING_FOR_SRC") && n.ends_with("_CLEAR") => {
            ("FPU", "held the unpacker")
        }
        _ => return None,
    })
}

/// What the op's counters say of a verdict whose bounding stage is a TRISC: the unit
/// busiest by its counter when it reaches [`UNIT_BOUND_PCT`] (its name, and the evidence),
/// else (`None`, the evidence that no counted unit was near its peak: [`evidence`] has
/// listed their shares). `None` when no counter speaks for a unit.
pub(crate) fn decide(counters: &[OpCounter]) -> Option<(Option<&'static str>, String)> {
    let units: Vec<(&OpCounter, (&str, &str))> = counters
        .iter()
        .filter_map(|c| unit_of(c).map(|u| (c, u)))
        .collect();
    let &(top, (unit, how)) = units.iter().max_by(|a, b| a.0.pct.total_cmp(&b.0.pct))?;
    if top.pct >= UNIT_BOUND_PCT {
        return Some((
            Some(unit),
            format!(
                "the counters decide: the {unit} {how} {:.0}% of the op's cycles ({})",
                top.pct, top.name
            ),
        ));
    }
    Some((
        None,
        "no counted unit near its peak: the TRISCs' own instructions and hand-overs bound it, \
         not a counted unit's throughput"
            .to_string(),
    ))
}

/// What the op's FPU-bank issue counter says of its critical path: the TRISCs' busy
/// cycles on the path against the unit's instructions issued over the whole op (all its
/// tiles), which bound from above how many of those cycles were the unit's work. `None`
/// without such a counter or without compute busy time on the path.
pub(crate) fn path_note(path: &super::CriticalPath, counters: &[OpCounter]) -> Option<String> {
    let (c, (unit, _)) = counters
        .iter()
        .filter(|c| c.bank == "FPU")
        .find_map(|c| unit_of(c).map(|u| (c, u)))?;
    let busy: u64 = path
        .segments
        .iter()
        .filter(|s| s.kind == "busy" && s.core.risc.starts_with("TRISC"))
        .map(|s| s.cycles)
        .sum();
    if busy == 0 {
        return None;
    }
    Some(format!(
        "its compute stages are busy {} cycles on it and {} counted {} over the whole op: at most \
         {:.1}% of that busy time was {unit} work",
        grouped_int(busy.into()),
        c.name,
        grouped_int(c.value.into()),
        super::pct(c.value.min(busy) as f64, busy as f64)
    ))
}

/// Counted zones as the analysis gathers them: (op, zone name, bank) -> (zones, value
/// sum, cycles sum).
pub(crate) type Counted = std::collections::BTreeMap<(u32, String, &'static str), (u64, u64, u64)>;

/// The rows of op `run` on `chip` from `counted`'s entries for op index `op`, each named by
/// the counter the op log says was armed in its bank.
pub(crate) fn counted_zones(
    counted: &Counted,
    op: u32,
    rec: Option<&OpRecord>,
) -> Vec<CountedZone> {
    let armed = |bank: &str| rec?.armed_counter(bank).map(String::from);
    counted
        .range((op, String::new(), "")..)
        .take_while(|((o, ..), _)| *o == op)
        .map(|((_, zone, bank), &(zones, value, cycles))| {
            let counter = armed(bank);
            let value = counter.as_ref().map(|_| value);
            CountedZone {
                zone: zone.clone(),
                bank,
                counter,
                zones,
                value,
                cycles,
                pct: value.map(|v| super::pct(v as f64, cycles as f64)),
            }
        })
        .collect()
}

/// `counted zones: math-op FPU_COUNTER 35 over 1,842 cycles (1.9%); ...`; a zone whose bank
/// was not armed says so. Empty without counted zones.
pub(crate) fn zones_line(rows: &[CountedZone]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = rows
        .iter()
        .map(|r| match (&r.counter, r.value, r.pct) {
            (Some(c), Some(v), Some(pct)) => format!(
                "{} {c} {} over {} cycles ({pct:.1}%)",
                r.zone,
                grouped_int(v.into()),
                grouped_int(r.cycles.into())
            ),
            _ => format!(
                "{} not measured (no counter armed in bank {}: ttprof run --counters {})",
                r.zone, r.bank, r.bank
            ),
        })
        .collect();
    format!("counted zones: {}", shown.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oplog::{CounterValue, OpRecord, TileCounters};

    #[test]
    fn counters_sum_over_tiles_and_read_as_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.jsonl");
        let value = |name: &str, v: u64| CounterValue {
            bank: "FPU".into(),
            name: name.into(),
            value: v,
        };
        let mut op = OpRecord::device_op(4, 0, "Matmul", (0, 1), vec![]);
        op.counters = vec![
            TileCounters {
                core: [1, 1],
                cycles: 1_000_000,
                values: vec![value("FPU_COUNTER", 35)],
                noc_read_bytes: Some(65_536),
                noc_write_bytes: Some(0),
            },
            TileCounters {
                core: [2, 1],
                cycles: 500_000,
                values: vec![value("FPU_COUNTER", 1_465)],
                noc_read_bytes: Some(32_768),
                noc_write_bytes: Some(1_000),
            },
        ];
        let mut w =
            crate::oplog::OpLogWriter::create(&path, &crate::inputs::Inputs::none()).unwrap();
        w.op(&op).unwrap();
        drop(w);
        let log = crate::oplog::OpLog::read(&path, &crate::inputs::Inputs::none()).unwrap();
        let c = of(log.op(0, 4));
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].value, c[0].cycles, c[0].tiles), (1_500, 1_500_000, 2));
        assert_eq!(
            line(&c),
            "counters over 2 tile(s): FPU_COUNTER 1,500 of 1,500,000 cycles (0.1%)"
        );
        assert!(of(log.op(0, 5)).is_empty() && of(None).is_empty());
        assert_eq!(
            evidence(&c),
            "Tensix counters over the op: FPU_COUNTER 0.1% of cycles"
        );
        assert_eq!(line(&[]), "");
    }

    fn counter(bank: &str, name: &str, value: u64, cycles: u64) -> OpCounter {
        OpCounter {
            bank: bank.into(),
            name: name.into(),
            value,
            cycles,
            pct: super::super::pct(value as f64, cycles as f64),
            tiles: 1,
        }
    }

    #[test]
    fn the_busiest_counted_unit_decides_from_half_the_op() {
        let fpu = counter("FPU", "FPU_COUNTER", 920, 1_000);
        let pack = counter("TDMA_PACK", "PACKER_BUSY", 300, 1_000);
        let stalls = counter("INSTRN_THREAD", "THREAD_STALLS_1", 990, 1_000);
        let (unit, why) = decide(&[pack.clone(), stalls.clone(), fpu.clone()]).unwrap();
        assert_eq!(unit, Some("FPU"));
        assert_eq!(
            why,
            "the counters decide: the FPU issued 92% of the op's cycles (FPU_COUNTER)"
        );
        // The math thread waiting for SrcA data 60% of the op: the unpackers starve it.
        let srca = counter("INSTRN_THREAD", "WAITING_FOR_SRCA_VALID", 600, 1_000);
        let (unit, why) = decide(&[srca, pack.clone()]).unwrap();
        assert_eq!(unit, Some("unpacker"));
        assert!(
            why.contains("the unpacker starved the math thread 60%"),
            "{why}"
        );
        // Below half: no unit, and the evidence lists what was counted.
        let idle = counter("FPU", "FPU_COUNTER", 35, 20_959);
        let (unit, why) = decide(&[idle, pack]).unwrap();
        assert_eq!(unit, None);
        assert_eq!(
            why,
            "no counted unit near its peak: the TRISCs' own instructions and hand-overs bound it, \
             not a counted unit's throughput"
        );
        // A stall count speaks for no unit.
        assert_eq!(decide(&[stalls]), None);
        assert_eq!(decide(&[]), None);
    }

    #[test]
    fn the_path_note_bounds_the_compute_time_the_fpu_can_account_for() {
        use super::super::{CoreRef, CriticalPath, PathSegment};
        let seg = |risc: &str, kind: &'static str, cycles: u64| PathSegment {
            on: None,
            core: CoreRef {
                tile: "1-1".into(),
                risc: risc.into(),
                stage: "s".into(),
            },
            kind,
            resource: None,
            zone: None,
            signal: None,
            unmatched: None,
            start_cycles: 0,
            end_cycles: cycles,
            cycles,
            ns: cycles as f64,
        };
        let path = CriticalPath {
            start_cycles: 0,
            end_cycles: 3_000,
            cycles: 3_000,
            ns: 3_000.0,
            truncated: false,
            segments: vec![
                seg("TRISC_1", "busy", 1_200),
                seg("TRISC_2", "wait", 800),
                seg("TRISC_2", "busy", 800),
                seg("BRISC", "busy", 200),
            ],
            matched_waits: 0,
            unmatched_waits: vec![],
            unmatched_signals: vec![],
            left_out: 0,
            counters: None,
        };
        let fpu = counter("FPU", "FPU_COUNTER", 16, 9_888);
        assert_eq!(
            path_note(&path, &[counter("TDMA_PACK", "PACKER_BUSY", 5, 9), fpu]).unwrap(),
            "its compute stages are busy 2,000 cycles on it and FPU_COUNTER counted 16 over the \
             whole op: at most 0.8% of that busy time was FPU work"
        );
        // More issued than the path's busy time: at most all of it.
        let many = counter("FPU", "SFPU_COUNTER", 5_000, 9_888);
        assert!(path_note(&path, &[many])
            .unwrap()
            .ends_with("at most 100.0% of that busy time was SFPU work"));
        // No FPU-bank issue counter: nothing to say.
        assert_eq!(
            path_note(&path, &[counter("FPU", "FPU_STALLED", 1, 2)]),
            None
        );
    }
}
