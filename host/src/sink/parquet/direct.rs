//! One ring's zones and marks as Arrow batches straight from its records, without the
//! model's per-zone structs ([`crate::timeline::Zone`], [`crate::timeline::Mark`]): what
//! [`super::ParquetSink`] writes. The rows are exactly those [`Profile::ring`] yields (the
//! test `direct_batches_equal_the_general_ones` compares them): zones in the order they
//! open, `(start, longest first, later in the ring first)`, each at the depth of the zones
//! still open when it opens; marks in the same order among themselves.

use super::tables::{place_columns, whole_ns, Dictionaries};
use crate::decode::{RecordKind, Records};
use crate::profile::{Profile, RingView};
use crate::sink::exact;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, UInt16Array, UInt32Array, UInt64Array};
use arrow_schema::{ArrowError, SchemaRef};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// Opening order of the records `rows` of `r` (in ring order, which is the order they
/// close): `(start, longest first, later first)`. Zones that nest take one pass
/// ([`nested_order`]); anything else (zones that overlap without nesting) a sort.
pub(super) fn opening_order(r: &Records, rows: impl Iterator<Item = usize>) -> Vec<u32> {
    let rows: Vec<u32> = rows.map(|i| i as u32).collect();
    nested_order(r, &rows).unwrap_or_else(|| sorted_order(r, &rows))
}

/// The key of row `i` in opening order.
#[inline]
fn key(r: &Records, i: u32) -> (u64, Reverse<u64>, Reverse<u32>) {
    (
        r.start_at(i as usize),
        Reverse(r.end_at(i as usize)),
        Reverse(i),
    )
}

/// `rows` sorted by [`key`].
pub(super) fn sorted_order(r: &Records, rows: &[u32]) -> Vec<u32> {
    let mut keys: Vec<_> = rows.iter().map(|&i| key(r, i)).collect();
    keys.sort_unstable();
    keys.into_iter().map(|(_, _, Reverse(i))| i).collect()
}

/// Opening order of `rows` (given in closing order) in one pass, as a pre-order of the
/// zones' nesting: a zone closes after every zone inside it, so when it comes, the
/// finished subtrees that start at or after its start are its children, in order; it
/// becomes their parent (a linked list: the zone, then their lists). `None` unless the
/// result is in [`key`] order (then it is exactly [`sorted_order`]'s, keys being distinct).
pub(super) fn nested_order(r: &Records, rows: &[u32]) -> Option<Vec<u32>> {
    const END: u32 = u32::MAX;
    // next[k]: the position in `rows` after position k in the order; END ends a list.
    let mut next = vec![END; rows.len()];
    // Subtrees without a parent yet: (first, last position); the first is the subtree's
    // zone, whose start is its key (8 bytes a root: in a ring of siblings every zone is one
    // until the end).
    let mut roots: Vec<(u32, u32)> = Vec::new();
    let start_at = |k: u32| r.start_at(rows[k as usize] as usize);
    for (k, &i) in rows.iter().enumerate() {
        let start = r.start_at(i as usize);
        let mut j = roots.len();
        while j > 0 && start_at(roots[j - 1].0) >= start {
            j -= 1;
        }
        let mut last = k as u32;
        for &(first, tail) in &roots[j..] {
            next[last as usize] = first;
            last = tail;
        }
        roots.truncate(j);
        roots.push((k as u32, last));
    }
    let mut order = Vec::with_capacity(rows.len());
    for &(first, _) in &roots {
        let mut at = first;
        while at != END {
            order.push(rows[at as usize]);
            at = next[at as usize];
        }
    }
    let sorted = order.windows(2).all(|w| key(r, w[0]) < key(r, w[1]));
    (sorted && order.len() == rows.len()).then_some(order)
}

/// Per row of a ring: the run, the op and the label (site index), looked up once per run
/// and site rather than per row.
struct Naming<'a> {
    p: &'a Profile,
    ring: usize,
    chip: u32,
    run: u32,
    op: Option<u32>,
    /// Label per site id of `run` (`u32::MAX`: not looked up yet).
    labels: Vec<u32>,
}

impl<'a> Naming<'a> {
    fn new(p: &'a Profile, v: &RingView) -> Naming<'a> {
        Naming {
            p,
            ring: v.index,
            chip: v.lane.chip,
            run: u32::MAX - 1,
            op: None,
            labels: Vec::new(),
        }
    }

    /// `(run, op, label)` of a record of `run` with site `site`.
    #[inline]
    fn of(&mut self, run: u32, site: u16) -> (u32, Option<u32>, u32) {
        if run != self.run {
            self.run = run;
            self.op = self.p.op_of(self.chip, run);
            self.labels.clear();
        }
        // Grown to the sites seen, not 2^16 slots per ring (a quarter of a mebibyte zeroed
        // for each of 150,000 two-zone rings).
        if site as usize >= self.labels.len() {
            let len = (site as usize + 1).next_power_of_two().max(64);
            self.labels.resize(len, u32::MAX);
        }
        let slot = &mut self.labels[site as usize];
        if *slot == u32::MAX {
            *slot = self.p.label_of(self.ring, run, site);
        }
        (run, self.op, *slot)
    }
}

/// Rows a ring's batches hold at most ([`ring_batches_by`]): a row group's (a long ring's
/// batch fills one), a multiple of arrow-rs's 1024-row mini-batches.
pub(super) const BATCH_ROWS: usize = super::ROW_GROUP_ROWS;

/// Ring `v`'s zones and marks as batches of `zs` ([`super::zones_schema`]) and `ms`
/// ([`super::marks_schema`]); both empty when the timebase does not know the ring's chip.
#[cfg(test)]
pub(crate) fn ring_batches(
    zs: &SchemaRef,
    ms: &SchemaRef,
    d: &Dictionaries,
    p: &Profile,
    v: &RingView,
    with_chip: bool,
) -> Result<(RecordBatch, RecordBatch), ArrowError> {
    let (mut zones, mut marks) = (None, None);
    ring_batches_by(
        zs,
        ms,
        d,
        p,
        v,
        with_chip,
        usize::MAX,
        &mut BinaryHeap::new(),
        &|e| e,
        &mut |is_zones, b| {
            *if is_zones { &mut zones } else { &mut marks } = Some(b);
            Ok::<(), ArrowError>(())
        },
    )?;
    let none = || ArrowError::ComputeError("no batch".into());
    Ok((zones.ok_or_else(none)?, marks.ok_or_else(none)?))
}

/// Ring `v`'s zones, then its marks, as batches of at most `rows` rows each (one, maybe
/// empty, when it has none), handed to `emit(zones, batch)`: what is held is one batch and
/// the ring's opening order (4 bytes a row when made here, about one when the view's),
/// not the ring's whole table.
///
/// `v` may be one of the ring's pieces ([`crate::profile::Part`]): its records are then
/// its openings already in opening order (zones and marks are taken in that order, not
/// sorted again: a sort by row in the piece would put openings with equal keys the wrong
/// way round), and `open` carries the ends of the zones still open from piece to piece (a
/// zone's depth counts them). `open` holds the ends of the zones open at the last zone's
/// start: as many as the nesting depth in a ring whose zones nest.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ring_batches_by<E>(
    zs: &SchemaRef,
    ms: &SchemaRef,
    d: &Dictionaries,
    p: &Profile,
    v: &RingView,
    with_chip: bool,
    rows: usize,
    open: &mut BinaryHeap<Reverse<u64>>,
    arrow: &dyn Fn(ArrowError) -> E,
    emit: &mut dyn FnMut(bool, RecordBatch) -> Result<(), E>,
) -> Result<(), E> {
    let r = &v.ring.records;
    let (chip, tile) = (v.lane.chip, v.lane.tile);
    let clock = p.timebase.tile_clock(chip, tile);
    // Whole ns exact at any count ([`exact`]): the `f64` conversion's below 2^36 ns.
    let ns = |c: u64| {
        let v = clock.map_or(f64::NAN, |k| k.host_ns(c));
        if v.abs() < exact::F64_BELOW {
            whole_ns(v)
        } else {
            exact::whole_at(clock.as_ref(), c, v).map_or(0, exact::to_i64)
        }
    };
    let is_mark =
        |k: RecordKind| matches!(k, RecordKind::Event | RecordKind::Data | RecordKind::Sum);
    let mut naming = Naming::new(p, v);
    let slices = |n: usize| -> Vec<(usize, usize)> {
        let step = rows.max(1);
        let mut v: Vec<(usize, usize)> = (0..n)
            .step_by(step)
            .map(|a| (a, (a + step).min(n)))
            .collect();
        if v.is_empty() {
            v.push((0, 0));
        }
        v
    };
    // The view's zones are in this order when the driver built them for another sink
    // (about a byte a zone, and the order's making, not held twice; the test
    // `direct_batches_equal_the_general_ones` holds the two orders equal): a batch's
    // records are unpacked from it as the batch is made.
    let piece = v.part != crate::profile::Part::WHOLE;
    let own = if !v.placed {
        Some(Vec::new())
    } else if !v.zones.is_empty() {
        None
    } else if piece {
        Some(
            (0..r.len() as u32)
                .filter(|&i| r.kind[i as usize].is_zone())
                .collect(),
        )
    } else {
        Some(opening_order(
            r,
            (0..r.len()).filter(|&i| r.kind[i].is_zone()),
        ))
    };
    let n = own.as_ref().map_or(v.zones.len(), Vec::len);
    // `open`: ends of the zones open so far, earliest first, carried from batch to batch
    // (and from piece to piece).
    for (a, b) in slices(n) {
        let order = match &own {
            Some(order) => Cow::Borrowed(&order[a..b]),
            None => Cow::Owned(v.zones.records_in_order(a, b)),
        };
        let batch =
            zones_batch(zs, d, v, r, &order, open, &mut naming, &ns, with_chip).map_err(arrow)?;
        emit(true, batch)?;
    }
    drop(own);
    let marks = if !v.placed {
        Vec::new()
    } else if piece {
        (0..r.len() as u32)
            .filter(|&i| is_mark(r.kind[i as usize]))
            .collect()
    } else {
        opening_order(r, (0..r.len()).filter(|&i| is_mark(r.kind[i])))
    };
    for (a, b) in slices(marks.len()) {
        let batch =
            marks_batch(ms, d, v, r, &marks[a..b], &mut naming, &ns, with_chip).map_err(arrow)?;
        emit(false, batch)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn zones_batch(
    schema: &SchemaRef,
    d: &Dictionaries,
    v: &RingView,
    r: &Records,
    order: &[u32],
    open: &mut BinaryHeap<Reverse<u64>>,
    naming: &mut Naming,
    ns: &dyn Fn(u64) -> i64,
    with_chip: bool,
) -> Result<RecordBatch, ArrowError> {
    let n = order.len();
    let mut place = Vec::with_capacity(n);
    let mut depth = Vec::with_capacity(n);
    let (mut start_c, mut end_c) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut start_ns, mut dur) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut value = Vec::with_capacity(n);
    let mut counter = Vec::with_capacity(n);
    // `open`: ends of the zones open so far, earliest first: a zone opens inside every one
    // that ends after its start.
    for &i in order {
        let i = i as usize;
        let (s, e) = (r.start_at(i), r.end_at(i));
        while open.peek().is_some_and(|&Reverse(end)| end <= s) {
            open.pop();
        }
        depth.push(open.len() as u16);
        open.push(Reverse(e));
        let at = naming.of(r.run_at(i), r.site[i]);
        place.push(at);
        start_c.push(s);
        end_c.push(e);
        let (a, b) = (ns(s), ns(e));
        start_ns.push(a);
        dur.push(b - a);
        let recorded = (r.kind[i] == RecordKind::ValueZone).then_some(r.value_at(i) as u32);
        let (key, v) = d.counted(at.1, at.2, recorded);
        counter.push(key);
        value.push(v);
    }
    let mut c = place_columns(d, &v.lane, with_chip, place.iter().copied(), n)?;
    c.push(Arc::new(UInt16Array::from(depth)) as ArrayRef);
    c.push(Arc::new(UInt64Array::from(start_c)));
    c.push(Arc::new(UInt64Array::from(end_c)));
    c.push(Arc::new(Int64Array::from(start_ns)));
    c.push(Arc::new(Int64Array::from(dur)));
    let counted = d.counter_columns(counter, &value)?;
    c.push(Arc::new(UInt32Array::from(value)));
    c.extend(counted);
    RecordBatch::try_new(schema.clone(), c)
}

#[allow(clippy::too_many_arguments)]
fn marks_batch(
    schema: &SchemaRef,
    d: &Dictionaries,
    v: &RingView,
    r: &Records,
    order: &[u32],
    naming: &mut Naming,
    ns: &dyn Fn(u64) -> i64,
    with_chip: bool,
) -> Result<RecordBatch, ArrowError> {
    let n = order.len();
    let place: Vec<_> = order
        .iter()
        .map(|&i| naming.of(r.run_at(i as usize), r.site[i as usize]))
        .collect();
    let mut c = place_columns(d, &v.lane, with_chip, place.iter().copied(), n)?;
    let kind = |i: usize| match r.kind[i] {
        RecordKind::Data => 1u32,
        RecordKind::Sum => 2,
        _ => 0,
    };
    let rows = || order.iter().map(|&i| i as usize);
    c.push(super::tables::keyed(rows().map(kind).collect(), d.kinds())?);
    c.push(Arc::new(
        rows().map(|i| r.end_at(i)).collect::<UInt64Array>(),
    ));
    c.push(Arc::new(
        rows().map(|i| ns(r.end_at(i))).collect::<Int64Array>(),
    ));
    c.push(Arc::new(
        rows()
            .map(|i| (kind(i) != 0).then_some(r.value_at(i)))
            .collect::<UInt64Array>(),
    ));
    c.push(Arc::new(
        rows()
            .map(|i| (kind(i) == 2).then_some(r.count_at(i)))
            .collect::<UInt32Array>(),
    ));
    RecordBatch::try_new(schema.clone(), c)
}
