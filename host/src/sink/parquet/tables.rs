//! The three tables' Arrow schemas and the batches of one ring (see [`super`] for the
//! columns).

use crate::decode::NO_RUN;
use crate::oplog::OpLog;
use crate::ops::{At, Ops};
use crate::profile::Profile;
use crate::sink::exact;
use crate::sites::COUNTED_BANKS;
use crate::timeline::{Lane, OpSpan};
#[cfg(test)]
use crate::timeline::{Mark, MarkKind, Zone};
use arrow_array::types::UInt32Type;
#[cfg(test)]
use arrow_array::UInt64Array;
use arrow_array::{
    ArrayRef, DictionaryArray, Int64Array, RecordBatch, StringArray, UInt16Array, UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use riscv_linker::Risc;
use std::sync::Arc;

fn dict() -> DataType {
    DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8))
}

/// The columns every zone and mark row starts with (`chip` left out in a dataset).
fn place_fields(with_chip: bool) -> Vec<Field> {
    let mut f = Vec::new();
    if with_chip {
        f.push(Field::new("chip", DataType::UInt32, false));
    }
    f.extend([
        Field::new("tile_x", DataType::UInt16, false),
        Field::new("tile_y", DataType::UInt16, false),
        Field::new("risc", dict(), false),
        Field::new("run", DataType::UInt32, true),
        Field::new("op", dict(), true),
        Field::new("site", DataType::UInt32, false),
        Field::new("name", dict(), false),
        Field::new("file", dict(), false),
        Field::new("line", DataType::UInt32, false),
    ]);
    f
}

/// The counters `--counters` armed for any op of `log`, in the order first armed: the
/// `counter` column's dictionary and, in that order, one column each after it.
pub(crate) fn counter_names(log: Option<&OpLog>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for rec in log.into_iter().flat_map(|l| l.ops()) {
        for group in COUNTED_BANKS {
            if let Some(n) = rec.armed_counter(group) {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
    }
    names
}

/// `ttprof_zones.parquet`'s schema, with a column per counter of `counters`
/// ([`counter_names`]).
pub(crate) fn zones_schema(with_chip: bool, counters: &[String]) -> SchemaRef {
    let mut f = place_fields(with_chip);
    f.extend([
        Field::new("depth", DataType::UInt16, false),
        Field::new("start_cycles", DataType::UInt64, false),
        Field::new("end_cycles", DataType::UInt64, false),
        Field::new("start_ns", DataType::Int64, false),
        Field::new("duration_ns", DataType::Int64, false),
        Field::new("value", DataType::UInt32, true),
        Field::new("counter", dict(), true),
    ]);
    f.extend(
        counters
            .iter()
            .map(|n| Field::new(n, DataType::UInt32, true)),
    );
    Arc::new(Schema::new(f))
}

/// `ttprof_marks.parquet`'s schema.
pub(crate) fn marks_schema(with_chip: bool) -> SchemaRef {
    let mut f = place_fields(with_chip);
    f.extend([
        Field::new("kind", dict(), false),
        Field::new("cycles", DataType::UInt64, false),
        Field::new("ns", DataType::Int64, false),
        Field::new("value", DataType::UInt64, true),
        Field::new("count", DataType::UInt32, true),
    ]);
    Arc::new(Schema::new(f))
}

/// `ttprof_ops.parquet`'s schema.
pub(crate) fn ops_schema(with_chip: bool) -> SchemaRef {
    let mut f = Vec::new();
    if with_chip {
        f.push(Field::new("chip", DataType::UInt32, false));
    }
    f.push(Field::new("run", DataType::UInt32, false));
    f.push(Field::new("op", DataType::Utf8, false));
    for c in [
        "host_start_ns",
        "host_end_ns",
        "kernel_start_ns",
        "kernel_end_ns",
        "fw_start_ns",
        "fw_end_ns",
    ] {
        f.push(Field::new(c, DataType::Int64, true));
    }
    Arc::new(Schema::new(f))
}

/// Host ns as whole ns, rounded half away from zero (NaN, which a record off the
/// timebase would have, becomes 0).
#[inline]
pub(crate) fn whole_ns(ns: f64) -> i64 {
    // `f64::round` is a library call on baseline x86-64; below 2^52 the same rounding is
    // a truncation and an exact subtraction (both within a factor 2: Sterbenz).
    if ns.abs() < (1u64 << 52) as f64 {
        let t = ns as i64;
        let frac = ns - t as f64;
        if frac >= 0.5 {
            t + 1
        } else if frac <= -0.5 {
            t - 1
        } else {
            t
        }
    } else if ns.is_finite() {
        ns.round() as i64
    } else {
        0
    }
}

/// The dictionaries every batch shares: RISC names, site labels, op names, mark kinds,
/// and the performance counters the op log says were armed.
pub(crate) struct Dictionaries {
    risc: ArrayRef,
    names: ArrayRef,
    files: ArrayRef,
    ops: ArrayRef,
    kinds: ArrayRef,
    lines: Vec<u32>,
    /// Counter names (`FPU_COUNTER`), the `counter` column's dictionary.
    counters: ArrayRef,
    /// Per op: the counter armed in each bank of [`COUNTED_BANKS`], as its key.
    armed: Vec<[Option<u32>; 5]>,
    /// Per label: the bank its counted zones count (an index of [`COUNTED_BANKS`]).
    banks: Vec<Option<usize>>,
}

impl Dictionaries {
    /// The mark kinds' names (`event`, `data`, `sum`).
    pub(crate) fn kinds(&self) -> &ArrayRef {
        &self.kinds
    }

    /// The dictionaries of profile `p`'s labels, ops and counters.
    pub(crate) fn new(p: &Profile) -> Dictionaries {
        let (labels, ops, log) = (p.labels(), p.ops(), p.oplog());
        let strings = |v: Vec<&str>| Arc::new(StringArray::from(v)) as ArrayRef;
        let names = counter_names(log);
        let armed = ops
            .iter()
            .map(|o| {
                let mut banks = [None; 5];
                let Some(rec) = p.op_record(o.chip, o.run) else {
                    return banks;
                };
                for (b, group) in COUNTED_BANKS.iter().enumerate() {
                    banks[b] = rec
                        .armed_counter(group)
                        .and_then(|n| names.iter().position(|x| x == n))
                        .map(|k| k as u32);
                }
                banks
            })
            .collect();
        Dictionaries {
            risc: strings(Risc::ALL.iter().map(|r| r.name()).collect()),
            names: strings(labels.iter().map(|l| l.name.as_str()).collect()),
            files: strings(labels.iter().map(|l| l.file.as_str()).collect()),
            ops: strings(ops.iter().map(|o| o.name.as_str()).collect()),
            kinds: strings(vec!["event", "data", "sum"]),
            lines: labels.iter().map(|l| l.line).collect(),
            counters: strings(names.iter().map(String::as_str).collect()),
            armed,
            banks: labels
                .iter()
                .map(|l| {
                    l.counter
                        .and_then(|c| COUNTED_BANKS.iter().position(|&b| b == c))
                })
                .collect(),
        }
    }

    /// The `counter` key and `value` of a zone of `label` in `op` that recorded `value`:
    /// a counted zone's value is kept only when its op armed a counter in its bank (else
    /// both are null: it measured nothing); other zones have no counter.
    pub(crate) fn counted(
        &self,
        op: Option<u32>,
        label: u32,
        value: Option<u32>,
    ) -> (Option<u32>, Option<u32>) {
        match self.banks.get(label as usize).copied().flatten() {
            None => (None, value),
            Some(b) => {
                let key = op
                    .and_then(|o| self.armed.get(o as usize))
                    .and_then(|a| a[b]);
                (key, key.and(value))
            }
        }
    }

    /// The `counter` column of `keys`, then one column per counter ([`counter_names`]):
    /// a row's `values` where its key names that counter, else null.
    pub(crate) fn counter_columns(
        &self,
        keys: Vec<Option<u32>>,
        values: &[Option<u32>],
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let mut c = Vec::with_capacity(1 + self.counters.len());
        for k in 0..self.counters.len() as u32 {
            let column: UInt32Array = keys
                .iter()
                .zip(values)
                .map(|(key, v)| v.filter(|_| *key == Some(k)))
                .collect();
            c.push(Arc::new(column) as ArrayRef);
        }
        c.insert(0, keyed(UInt32Array::from(keys), &self.counters)?);
        Ok(c)
    }
}

pub(crate) fn keyed(keys: UInt32Array, values: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(
        keys,
        values.clone(),
    )?))
}

/// The place columns of `n` rows of `lane` with the given runs, ops and sites.
pub(crate) fn place_columns(
    d: &Dictionaries,
    lane: &Lane,
    with_chip: bool,
    rows: impl Iterator<Item = (u32, Option<u32>, u32)> + Clone,
    n: usize,
) -> Result<Vec<ArrayRef>, ArrowError> {
    let mut c: Vec<ArrayRef> = Vec::with_capacity(20);
    if with_chip {
        c.push(Arc::new(UInt32Array::from(vec![lane.chip; n])));
    }
    c.push(Arc::new(UInt16Array::from(vec![lane.tile.x as u16; n])));
    c.push(Arc::new(UInt16Array::from(vec![lane.tile.y as u16; n])));
    c.push(keyed(
        UInt32Array::from(vec![lane.risc.index() as u32; n]),
        &d.risc,
    )?);
    c.push(Arc::new(
        rows.clone()
            .map(|(run, _, _)| (run != NO_RUN).then_some(run))
            .collect::<UInt32Array>(),
    ));
    c.push(keyed(rows.clone().map(|(_, op, _)| op).collect(), &d.ops)?);
    let sites: UInt32Array = rows.map(|(_, _, s)| s).collect();
    c.push(Arc::new(sites.clone()));
    c.push(keyed(sites.clone(), &d.names)?);
    c.push(keyed(sites.clone(), &d.files)?);
    c.push(Arc::new(
        sites
            .values()
            .iter()
            .map(|&s| d.lines.get(s as usize).copied().unwrap_or(0))
            .collect::<UInt32Array>(),
    ));
    Ok(c)
}

/// One ring's zones as a batch of `schema` ([`zones_schema`]), from the model's zones: the
/// reference the sink's direct batches ([`super::direct`]) are tested against.
#[cfg(test)]
pub(crate) fn zones_batch(
    schema: &SchemaRef,
    d: &Dictionaries,
    lane: &Lane,
    zones: &[Zone],
    clock: Option<&crate::timebase::TileClock>,
    with_chip: bool,
) -> Result<RecordBatch, ArrowError> {
    let rows = zones.iter().map(|z| (z.run, z.op, z.site));
    let mut c = place_columns(d, lane, with_chip, rows, zones.len())?;
    let start_ns: Vec<i64> = zones.iter().map(|z| whole_ns(z.start_ns(clock))).collect();
    let end_ns: Vec<i64> = zones.iter().map(|z| whole_ns(z.end_ns(clock))).collect();
    let duration: Vec<i64> = start_ns.iter().zip(&end_ns).map(|(s, e)| e - s).collect();
    c.push(Arc::new(
        zones.iter().map(|z| z.depth).collect::<UInt16Array>(),
    ));
    c.push(Arc::new(
        zones
            .iter()
            .map(|z| z.start_cycles)
            .collect::<UInt64Array>(),
    ));
    c.push(Arc::new(
        zones.iter().map(|z| z.end_cycles).collect::<UInt64Array>(),
    ));
    c.push(Arc::new(Int64Array::from(start_ns)));
    c.push(Arc::new(Int64Array::from(duration)));
    let (counter, value): (Vec<Option<u32>>, Vec<Option<u32>>) = zones
        .iter()
        .map(|z| d.counted(z.op, z.site, z.value))
        .unzip();
    let counted = d.counter_columns(counter, &value)?;
    c.push(Arc::new(UInt32Array::from(value)));
    c.extend(counted);
    RecordBatch::try_new(schema.clone(), c)
}

/// One ring's marks as a batch of `schema` ([`marks_schema`]), from the model's marks (the
/// reference, as [`zones_batch`]).
#[cfg(test)]
pub(crate) fn marks_batch(
    schema: &SchemaRef,
    d: &Dictionaries,
    lane: &Lane,
    marks: &[Mark],
    with_chip: bool,
) -> Result<RecordBatch, ArrowError> {
    let rows = marks.iter().map(|m| (m.run, m.op, m.site));
    let mut c = place_columns(d, lane, with_chip, rows, marks.len())?;
    let kind = |m: &Mark| match m.kind {
        MarkKind::Event => 0u32,
        MarkKind::Data(_) => 1,
        MarkKind::Sum { .. } => 2,
    };
    c.push(keyed(marks.iter().map(kind).collect(), &d.kinds)?);
    c.push(Arc::new(
        marks.iter().map(|m| m.cycles).collect::<UInt64Array>(),
    ));
    c.push(Arc::new(
        marks.iter().map(|m| whole_ns(m.ns)).collect::<Int64Array>(),
    ));
    let value = |m: &Mark| match m.kind {
        MarkKind::Event => None,
        MarkKind::Data(v) => Some(v),
        MarkKind::Sum { total_cycles, .. } => Some(total_cycles),
    };
    c.push(Arc::new(marks.iter().map(value).collect::<UInt64Array>()));
    let count = |m: &Mark| match m.kind {
        MarkKind::Sum { count, .. } => Some(count),
        _ => None,
    };
    c.push(Arc::new(marks.iter().map(count).collect::<UInt32Array>()));
    RecordBatch::try_new(schema.clone(), c)
}

/// The ops of `chip` (every op when `None`) as a batch of `schema` ([`ops_schema`]); their
/// device times whole ns exact at any count from `device` (the wrapper zones the spans come
/// from, [`crate::ops`]), else from the spans' `f64` ns.
pub(crate) fn ops_batch(
    schema: &SchemaRef,
    ops: &[OpSpan],
    device: &Ops,
    chip: Option<u32>,
) -> Result<RecordBatch, ArrowError> {
    let ops: Vec<&OpSpan> = ops
        .iter()
        .filter(|o| chip.is_none_or(|c| o.chip == c))
        .collect();
    let mut c: Vec<ArrayRef> = Vec::new();
    if chip.is_none() {
        c.push(Arc::new(
            ops.iter().map(|o| o.chip).collect::<UInt32Array>(),
        ));
    }
    c.push(Arc::new(ops.iter().map(|o| o.run).collect::<UInt32Array>()));
    c.push(Arc::new(StringArray::from(
        ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
    )));
    let ns = |f: &dyn Fn(&OpSpan) -> Option<i64>| -> ArrayRef {
        Arc::new(ops.iter().map(|o| f(o)).collect::<Int64Array>())
    };
    c.push(ns(&|o| o.host_ns.map(|h| h.0 as i64)));
    c.push(ns(&|o| o.host_ns.map(|h| h.1 as i64)));
    let span = |o: &OpSpan, fw: bool| -> Option<(i64, i64)> {
        let (a, b) = if fw { o.fw_ns } else { o.kernel_ns }?;
        let d = device.by_run.get(&(o.chip, o.run));
        let s = d.and_then(|d| if fw { d.fw } else { d.kernel });
        let whole = |at: &At, v: f64| match exact::whole_of(at) {
            Some(w) if at.ns == v => exact::to_i64(w),
            _ => whole_ns(v),
        };
        Some(match s {
            Some(s) => (whole(&s.start, a), whole(&s.end, b)),
            None => (whole_ns(a), whole_ns(b)),
        })
    };
    c.push(ns(&|o| span(o, false).map(|k| k.0)));
    c.push(ns(&|o| span(o, false).map(|k| k.1)));
    c.push(ns(&|o| span(o, true).map(|k| k.0)));
    c.push(ns(&|o| span(o, true).map(|k| k.1)));
    RecordBatch::try_new(schema.clone(), c)
}
