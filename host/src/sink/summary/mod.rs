//! The per-op summary of zone durations (`ttprof_summary.txt`, and what every command prints).
//!
//! [`per_op`] / [`render`]: per op and per zone name, count, total, mean, p50, p99, min and
//! max in ns (on the host timeline, through the [`Timebase`], which the summary names) and
//! in device cycles; ops by their total device kernel time, zones within an op by total
//! time; zones whose mean is below a threshold hidden (and counted). Sum zones get their
//! own rows per op: measurements, total and mean, in ns and cycles. Value zones
//! (`value_zone!`) also get a row of their values per op and name: how many, the smallest,
//! mean and largest.

pub mod brief;
pub(crate) mod checkpoints;
pub mod durations;
mod sink;
pub use sink::SummarySink;

use crate::ops::Ops;
use crate::timebase::{NsPerCycle, Timebase};
use crate::timeline::{Lane, Mark, MarkKind, OpSpan, SiteLabel, Timeline};
use crate::zones::ZoneList;
use durations::{Durations, RowClock};
use std::collections::HashMap;
use std::fmt::Write;

/// Name of the summary file every command writes.
pub const FILE_NAME: &str = "ttprof_summary.txt";

/// Summary statistics of a set of durations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Sum of the values.
    pub total: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (nearest-rank percentile).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// The same figures rounded to whole units, exactly (the `f64`s are a unit or more off
    /// past 2^53): every cycle figure, and the ns figures of a row whose durations share one
    /// exact clock rate. `None`: print the `f64`s.
    pub(crate) whole: Option<Whole>,
}

/// [`Stats`] figures in whole units, rounded to nearest (ties to even, as `{:.0}` rounds
/// an `f64`); `None` for a percentile that is an estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Whole {
    pub(crate) total: u128,
    pub(crate) mean: u128,
    pub(crate) p50: Option<u128>,
    pub(crate) p99: Option<u128>,
    pub(crate) min: u128,
    pub(crate) max: u128,
}

impl Stats {
    /// Total, mean, p50, p99, min and max as the text tables print them: grouped whole
    /// numbers, exact where [`Stats::whole`] has them.
    pub(crate) fn shown(&self) -> [String; 6] {
        let w = self.whole;
        let pick = |exact: Option<u128>, x: f64| exact.map_or_else(|| grouped(x), grouped_int);
        [
            pick(w.map(|w| w.total), self.total),
            pick(w.map(|w| w.mean), self.mean),
            pick(w.and_then(|w| w.p50), self.p50),
            pick(w.and_then(|w| w.p99), self.p99),
            pick(w.map(|w| w.min), self.min),
            pick(w.map(|w| w.max), self.max),
        ]
    }

    /// Statistics of `values` (sorted in place); all zero when empty.
    pub fn of(values: &mut [f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |p: f64| values[((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1];
        let total: f64 = values.iter().sum();
        Stats {
            total,
            mean: total / n as f64,
            p50: rank(50.0),
            p99: rank(99.0),
            min: values[0],
            max: values[n - 1],
            whole: None,
        }
    }
}

/// One zone name within one op.
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneRow {
    /// The zone's name.
    pub zone: String,
    /// Zones of this name in this op (every core, every launch).
    pub count: u64,
    /// Their durations in host ns (on the timebase).
    pub ns: Stats,
    /// Their durations in device cycles.
    pub cycles: Stats,
}

/// One sum zone name within one op: its totals over every record (one per launch and core).
#[derive(Clone, Debug, PartialEq)]
pub struct SumRow {
    /// The sum zone's name.
    pub zone: String,
    /// Sum records (launches x cores that measured it).
    pub records: u64,
    /// Measurements summed.
    pub count: u64,
    /// Device cycles over every measurement (exact: summed in 128 bits, many records of up
    /// to 2^64 - 1 cycles each).
    pub total_cycles: u128,
    /// The same in host ns, at each chip's (mean) frequency.
    pub(crate) total_ns: f64,
    /// The exact rate of every record's chip, when they share one: the ns are then exact
    /// from the whole cycles.
    pub(crate) clock: RowClock,
}

impl SumRow {
    /// Total and mean ns as printed: exact when the records share one exact clock rate.
    pub(crate) fn shown_ns(&self) -> [String; 2] {
        let exact = |count: u128| {
            let rate: NsPerCycle = self.clock.rate()?;
            rate.whole_ns(self.total_cycles, count)
        };
        let mean = if self.count == 0 {
            None
        } else {
            exact(self.count as u128)
        };
        [
            exact(1).map_or_else(|| grouped(self.total_ns), grouped_int),
            mean.map_or_else(|| grouped(self.mean_ns()), grouped_int),
        ]
    }

    /// Cycles per measurement rounded to whole cycles (ties to even), exact.
    pub(crate) fn shown_mean_cycles(&self) -> String {
        let n = self.count as u128;
        if n == 0 {
            return grouped(0.0);
        }
        let mean =
            crate::timebase::round_half_even(self.total_cycles / n, self.total_cycles % n, n);
        mean.map_or_else(|| grouped(self.mean_cycles()), grouped_int)
    }

    /// Cycles per measurement (0 without measurements).
    pub(crate) fn mean_cycles(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_cycles as f64 / self.count as f64
        }
    }

    /// Host ns per measurement (0 without measurements).
    pub(crate) fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ns / self.count as f64
        }
    }
}

/// The values of one value zone name (`value_zone!`) within one op.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueRow {
    /// The zone's name.
    pub zone: String,
    /// Value zones of this name in this op.
    pub count: u64,
    /// The smallest value.
    pub min: u32,
    /// The largest value.
    pub max: u32,
    /// The sum of the values (exact: a u32 per zone).
    pub sum: u128,
}

impl ValueRow {
    /// The mean value (0 without zones).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
}

/// One op: one launch (a chip's run), labelled by `op_labels`: its op code, with its
/// position among the ops of that code (`CODE #k`) when the code occurs more than once.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSection {
    /// Op code (and position); `run <id>` for a run the op log does not name, `(no op)` for
    /// records made before any launch.
    pub op: String,
    /// Runs (launches) in this section: 1 (0 for `(no op)`).
    pub runs: u64,
    /// Sum over its runs of the device kernel span (first KERNEL start to last KERNEL end).
    pub kernel_ns: f64,
    /// Its runs' (chip, run id), in program order.
    pub launches: Vec<(u32, u32)>,
    /// Shown zones, largest total first.
    pub zones: Vec<ZoneRow>,
    /// Sum zones, largest total first.
    pub sums: Vec<SumRow>,
    /// Value zones' values, by name.
    pub values: Vec<ValueRow>,
}

/// What [`per_op`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Largest total kernel time first.
    pub ops: Vec<OpSection>,
    /// Rows whose mean zone is shorter than this (ns) are hidden.
    pub threshold_ns: f64,
    /// Rows hidden by the threshold.
    pub hidden: u64,
    /// The zone time (host ns) the hidden rows hold.
    pub(crate) hidden_total_ns: f64,
    /// Rows whose p50 and p99 are estimates (more zones than the summary holds exactly:
    /// [`durations`]).
    pub estimated: u64,
    /// Where the ns come from: the clock fit (per chip frequency) or the nominal clock.
    pub clock: String,
}

/// One line naming the timebase: each chip's frequency and whether it was fitted.
pub(crate) fn clock_line(timebase: &Timebase) -> String {
    let chips: Vec<String> = timebase
        .chips
        .iter()
        .map(|(i, c)| match c.error_ns {
            Some(e) if c.segments.len() > 1 => format!(
                "chip {i} at {:.3} MHz cycle-weighted mean, {} frequency step(s) at {} s: {} MHz (clock fit, +-{e:.0} ns)",
                c.cycles_per_ns * 1000.0,
                c.segments.len() - 1,
                c.segments[1..].iter().map(|s| format!("{:.6}", s.start_ns / 1e9)).collect::<Vec<_>>().join(", "),
                c.segments.iter().map(|s| format!("{:.1}", s.cycles_per_ns * 1000.0)).collect::<Vec<_>>().join(" -> "),
            ),
            Some(e) => format!(
                "chip {i} at {:.3} MHz (clock fit, +-{e:.0} ns)",
                c.cycles_per_ns * 1000.0
            ),
            None => format!(
                "chip {i} at a nominal {:.0} MHz (not aligned)",
                c.cycles_per_ns * 1000.0
            ),
        })
        .collect();
    format!("ns on the host clock: {}", chips.join(", "))
}

/// Per op and zone name statistics of `t`'s zones; rows whose mean is below
/// `threshold_ns` are left out (and counted in [`Summary::hidden`]).
pub fn per_op(t: &Timeline, timebase: &Timebase, threshold_ns: f64) -> Summary {
    let mut b = Builder::default();
    for (li, lane) in t.lanes.iter().enumerate() {
        let zones = t.lane_zones(li as u32);
        let marks: Vec<Mark> = t
            .marks
            .iter()
            .filter(|m| m.lane as usize == li)
            .copied()
            .collect();
        b.add(*lane, zones, &marks, &t.sites, &t.ops, timebase);
    }
    b.finish(&t.ops, None, timebase, threshold_ns)
}

/// Each op's label, by index into `ops`: its op code, followed by ` #k` (its position among
/// the ops of that code on its chip, in program order, from 1) when the code occurs more
/// than once on a chip, so ttnn's add and multiply (both `BinaryNgDeviceOperation`) are two
/// sections, as `ttprof diff` tells them apart; and by ` chip N` when the ops ran on more
/// than one chip (a run on several chips logs each op once per chip).
pub(crate) fn op_labels(ops: &[OpSpan]) -> Vec<String> {
    let mut total: HashMap<(&str, u32), u32> = HashMap::new();
    for o in ops {
        *total.entry((o.name.as_str(), o.chip)).or_default() += 1;
    }
    let chips = ops.iter().any(|o| o.chip != ops[0].chip);
    let mut seen: HashMap<(&str, u32), u32> = HashMap::new();
    ops.iter()
        .map(|o| {
            let key = (o.name.as_str(), o.chip);
            let k = seen.entry(key).or_default();
            *k += 1;
            let mut label = o.name.clone();
            if total[&key] > 1 {
                label += &format!(" #{k}");
            }
            if chips {
                label += &format!(" chip {}", o.chip);
            }
            label
        })
        .collect()
}

/// The summary gathered ring by ring: per (op, zone name) the durations of its zones (16
/// bytes a zone for exact percentiles, up to [`durations::EXACT_ZONES`] over every row; past
/// that the largest rows become sketches), and the sum zones' totals.
#[derive(Default)]
pub(crate) struct Builder {
    /// (op label, site name) -> durations
    groups: HashMap<(String, String), Durations>,
    /// Durations held exactly, every row.
    held: usize,
    sums: HashMap<(String, String), SumRow>,
    values: HashMap<(String, String), ValueRow>,
    /// [`op_labels`] of the ops seen (computed once).
    labels: Vec<String>,
}

impl Builder {
    /// Device kernel time of op `o`: its kernel span's, exact from `device` (the model's
    /// wrapper-zone times, [`crate::ops`]) when given: `o.kernel_ns` are two `f64`s, a ns or
    /// more off past 2^53 ns.
    fn kernel_ns(o: &OpSpan, device: Option<&Ops>) -> f64 {
        let Some((a, b)) = o.kernel_ns else {
            return 0.0;
        };
        let exact = device.and_then(|ops| {
            let d = ops.by_run.get(&(o.chip, o.run))?;
            Some(d.kernel?.duration_ns())
        });
        exact.unwrap_or(b - a)
    }

    /// Adds one lane's zones and marks (`labels` and `ops` are what their indices point into):
    /// a whole ring's, or one of its pieces' in turn. Each zone and sum zone is taken on its
    /// own, in the order given (a ring's pieces give them in the whole ring's order), and
    /// nothing is carried from one call to the next but the rows, so a ring in pieces adds
    /// exactly what the whole ring adds.
    pub(crate) fn add(
        &mut self,
        lane: Lane,
        zones: &(impl ZoneList + ?Sized),
        marks: &[Mark],
        labels: &[SiteLabel],
        ops: &[OpSpan],
        timebase: &Timebase,
    ) {
        if self.labels.len() != ops.len() {
            self.labels = op_labels(ops);
        }
        let chip = lane.chip;
        let chip_time = timebase.chips.get(&chip);
        // Durations from the tile's clock: exact differences of host times, not of the
        // zones' `f64` ns.
        let clock = chip_time.map(|c| c.tile_clock(lane.tile));
        let rate = chip_time.and_then(|c| c.ns_per_cycle());
        let labels_of_ops = &self.labels;
        let op_name = |z: Option<u32>| {
            z.map_or_else(
                || "(no op)".to_string(),
                |o| labels_of_ops[o as usize].clone(),
            )
        };
        for z in zones.iter() {
            let g = self
                .groups
                .entry((op_name(z.op), labels[z.site as usize].name.clone()))
                .or_default();
            self.held += usize::from(!g.sketched());
            let ns = clock.map_or(f64::NAN, |c| c.span_ns(z.start_cycles, z.end_cycles));
            g.push(ns, z.cycles(), rate);
            // Bounded inside a ring too: one ring of 16 M zones of one name held 268 MB of
            // exact durations until the ring's end.
            self.held = durations::bound(self.groups.values_mut(), self.held);
            if let Some(v) = z.value {
                let name = &labels[z.site as usize].name;
                let row = self
                    .values
                    .entry((op_name(z.op), name.clone()))
                    .or_insert_with(|| ValueRow {
                        zone: name.clone(),
                        count: 0,
                        min: u32::MAX,
                        max: 0,
                        sum: 0,
                    });
                row.count += 1;
                row.min = row.min.min(v);
                row.max = row.max.max(v);
                row.sum += v as u128;
            }
        }
        // Sum zones: one row per (op, name), totals over every record.
        for m in marks {
            let MarkKind::Sum {
                total_cycles,
                count,
            } = m.kind
            else {
                continue;
            };
            let name = labels[m.site as usize].name.clone();
            let ns_per_cycle = timebase
                .chips
                .get(&chip)
                .map_or(f64::NAN, |c| 1.0 / c.cycles_per_ns);
            let row = self
                .sums
                .entry((op_name(m.op), name.clone()))
                .or_insert(SumRow {
                    zone: name,
                    records: 0,
                    count: 0,
                    total_cycles: 0,
                    total_ns: 0.0,
                    clock: RowClock::default(),
                });
            row.clock.add(rate);
            row.records += 1;
            row.count += count as u64;
            row.total_cycles += total_cycles as u128;
            row.total_ns += total_cycles as f64 * ns_per_cycle;
        }
    }

    /// The summary: one section per op name, rows below `threshold_ns` hidden; each op's
    /// kernel time exact from `device` when given ([`Builder::kernel_ns`]).
    pub(crate) fn finish(
        self,
        all_ops: &[OpSpan],
        device: Option<&Ops>,
        timebase: &Timebase,
        threshold_ns: f64,
    ) -> Summary {
        let mut ops: HashMap<String, OpSection> = HashMap::new();
        for (o, label) in all_ops.iter().zip(op_labels(all_ops)) {
            let s = ops
                .entry(label.clone())
                .or_insert_with(|| OpSection::new(&label));
            s.runs += 1;
            s.kernel_ns += Builder::kernel_ns(o, device);
            s.launches.push((o.chip, o.run));
        }
        let Builder {
            groups,
            sums,
            values,
            ..
        } = self;
        let (mut hidden, mut hidden_total_ns) = (0, 0.0);
        let mut estimated = 0;
        for ((op, zone), d) in groups {
            let (count, sketched) = (d.count(), d.sketched());
            let (ns, cycles) = d.stats();
            let row = ZoneRow {
                zone,
                count,
                ns,
                cycles,
            };
            estimated += u64::from(sketched);
            if row.ns.mean < threshold_ns {
                hidden += 1;
                hidden_total_ns += row.ns.total;
                continue;
            }
            ops.entry(op.clone())
                .or_insert_with(|| OpSection::new(&op))
                .zones
                .push(row);
        }
        for ((op, _), row) in sums {
            ops.entry(op.clone())
                .or_insert_with(|| OpSection::new(&op))
                .sums
                .push(row);
        }
        for ((op, _), row) in values {
            ops.entry(op.clone())
                .or_insert_with(|| OpSection::new(&op))
                .values
                .push(row);
        }
        let mut ops: Vec<OpSection> = ops
            .into_values()
            .filter(|o| !o.zones.is_empty() || !o.sums.is_empty())
            .collect();
        for o in &mut ops {
            o.zones.sort_by(|a, b| {
                b.ns.total
                    .total_cmp(&a.ns.total)
                    .then_with(|| a.zone.cmp(&b.zone))
            });
            o.sums.sort_by(|a, b| {
                b.total_cycles
                    .cmp(&a.total_cycles)
                    .then_with(|| a.zone.cmp(&b.zone))
            });
            o.values.sort_by(|a, b| a.zone.cmp(&b.zone));
        }
        ops.sort_by(|a, b| {
            let total = |o: &OpSection| {
                if o.kernel_ns > 0.0 {
                    o.kernel_ns
                } else {
                    o.zones.first().map_or(0.0, |z| z.ns.total)
                }
            };
            total(b).total_cmp(&total(a)).then_with(|| a.op.cmp(&b.op))
        });
        Summary {
            ops,
            threshold_ns,
            hidden,
            hidden_total_ns,
            estimated,
            clock: clock_line(timebase),
        }
    }
}

impl OpSection {
    fn new(op: &str) -> OpSection {
        OpSection {
            op: op.to_string(),
            runs: 0,
            kernel_ns: 0.0,
            launches: vec![],
            zones: vec![],
            sums: vec![],
            values: vec![],
        }
    }
}

/// `1234567.6` -> `1,234,568`.
fn grouped(x: f64) -> String {
    group_digits(&format!("{:.0}", x))
}

/// `1234567` -> `1,234,567`, exactly (an integer printed through an `f64` is off past 2^53:
/// 2^64 - 1 would show as `...616`).
pub(crate) fn grouped_int(x: u128) -> String {
    group_digits(&x.to_string())
}

/// A whole number's digits (after an optional `-`) in groups of three.
fn group_digits(s: &str) -> String {
    let (sign, digits) = s.strip_prefix('-').map_or(("", s), |d| ("-", d));
    let mut out = String::from(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The summary as a text table: one section per op, one line per zone name, durations in
/// ns then in cycles.
pub fn render(s: &Summary) -> String {
    crate::printable::printable(&render_raw(s)).into_owned()
}

/// [`render`] before names are made printable.
fn render_raw(s: &Summary) -> String {
    let stat_names = ["total", "mean", "p50", "p99", "min", "max"];
    let cells = |z: &ZoneRow| {
        let mut cells = vec![z.count.to_string()];
        cells.extend(z.ns.shown());
        cells.extend(z.cycles.shown());
        cells
    };
    let mut header = vec!["count".to_string()];
    header.extend(stat_names.iter().map(|n| format!("{n} ns")));
    header.extend(stat_names.iter().map(|n| format!("{n} cyc")));
    // The widths from a first walk over the rows, each row's cells made again as it is
    // written: every row's cells held at once were 40 MB for 43,000 ops, and finding an
    // op's rows among them by its name was quadratic in ops (44 s; issue 41).
    let zones = || s.ops.iter().flat_map(|o| &o.zones);
    let zone_w = name_width(zones().map(|z| z.zone.as_str()), "zone");
    let widths = column_widths(&header, zones().map(cells));
    let mut t = String::new();
    let _ = writeln!(t, "{}", s.clock);
    let row = |t: &mut String, name: &str, cells: &[String]| {
        write_row(t, "  ", (name, zone_w), cells, &widths);
    };
    row(&mut t, "zone", &header);
    for o in &s.ops {
        let kernel = if o.kernel_ns > 0.0 {
            format!(", device kernel time {} ns", grouped(o.kernel_ns))
        } else {
            String::new()
        };
        let _ = writeln!(
            t,
            "{} ({} run{}{kernel})",
            o.op,
            o.runs,
            if o.runs == 1 { "" } else { "s" }
        );
        for z in &o.zones {
            row(&mut t, &z.zone, &cells(z));
        }
        if !o.sums.is_empty() {
            render_sums(&mut t, &o.sums);
        }
        if !o.values.is_empty() {
            render_values(&mut t, &o.values);
        }
    }
    if s.estimated > 0 {
        let _ = writeln!(
            t,
            "({} zone row(s) have p50 and p99 estimated within {:.0} %: more than {} zones were summarised; \
             count, total, mean, min and max are exact)",
            s.estimated,
            durations::RELATIVE_ERROR * 100.0,
            grouped_int(durations::EXACT_ZONES as u128)
        );
    }
    if s.hidden > 0 {
        let _ = writeln!(
            t,
            "({} zone row(s) with a mean below {} ns hidden, {} ns in all)",
            s.hidden,
            grouped(s.threshold_ns),
            grouped(s.hidden_total_ns)
        );
    }
    t
}

/// The value zones of one op: their values per name (how many, smallest, mean, largest).
fn render_values(t: &mut String, rows: &[ValueRow]) {
    let header = ["zones", "min value", "mean value", "max value"].map(String::from);
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            [
                r.count.to_string(),
                r.min.to_string(),
                format!("{:.1}", r.mean()),
                r.max.to_string(),
            ]
        })
        .collect();
    let name_w = name_width(rows.iter().map(|r| r.zone.as_str()), "value zone");
    let widths = column_widths(&header, cells.iter());
    let mut line =
        |name: &str, cells: &[String]| write_row(t, "    ", (name, name_w), cells, &widths);
    line("value zone", &header);
    for (r, c) in rows.iter().zip(&cells) {
        line(&r.zone, c);
    }
}

/// The sum zones of one op: a small table of their own (their rows are totals, not zones).
fn render_sums(t: &mut String, sums: &[SumRow]) {
    let header = [
        "records",
        "measurements",
        "total ns",
        "mean ns",
        "total cyc",
        "mean cyc",
    ]
    .map(String::from);
    let cells: Vec<[String; 6]> = sums
        .iter()
        .map(|r| {
            let [total_ns, mean_ns] = r.shown_ns();
            [
                r.records.to_string(),
                r.count.to_string(),
                total_ns,
                mean_ns,
                r.total_cycles.to_string(),
                r.shown_mean_cycles(),
            ]
        })
        .collect();
    let name_w = name_width(sums.iter().map(|r| r.zone.as_str()), "sum zone");
    let widths = column_widths(&header, cells.iter());
    let mut line =
        |name: &str, cells: &[String]| write_row(t, "    ", (name, name_w), cells, &widths);
    line("sum zone", &header);
    for (r, c) in sums.iter().zip(&cells) {
        line(&r.zone, c);
    }
}

/// The most characters of a name a text table shows (a longer one ends in `…`): names
/// come from kernel ELFs and device logs, untrusted and of any length.
pub(crate) const NAME_SHOWN: usize = 120;

/// `name` as a text table shows it: at most [`NAME_SHOWN`] characters, the last `…` when
/// it was longer.
pub(crate) fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(NAME_SHOWN - 1) {
        Some((cut, _)) if name[cut..].chars().nth(1).is_some() => {
            format!("{}…", &name[..cut]).into()
        }
        _ => name.into(),
    }
}

/// Width of a table's name column: its longest name (in characters) or its header's.
fn name_width<'a>(names: impl Iterator<Item = &'a str>, header: &str) -> usize {
    names
        .map(|n| n.chars().count().min(NAME_SHOWN))
        .max()
        .unwrap_or(0)
        .max(header.chars().count())
}

/// Width of each of a table's value columns: its widest cell or its header, whichever is
/// wider (the cells are numbers: ASCII).
fn column_widths<R: AsRef<[String]>>(
    header: &[String],
    rows: impl Iterator<Item = R>,
) -> Vec<usize> {
    let mut widths: Vec<usize> = header.iter().map(String::len).collect();
    for cells in rows {
        for (w, c) in widths.iter_mut().zip(cells.as_ref()) {
            *w = (*w).max(c.len());
        }
    }
    widths
}

/// One table line: `indent`, the name left-aligned in its width, then each cell
/// right-aligned in its column's width, two spaces apart.
fn write_row(
    t: &mut String,
    indent: &str,
    (name, name_w): (&str, usize),
    cells: &[String],
    widths: &[usize],
) {
    let name = shown_name(name);
    let _ = write!(t, "{indent}{name:<name_w$}");
    for (c, w) in cells.iter().zip(widths) {
        let _ = write!(t, "  {c:>w$}");
    }
    t.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::{self, times};
    use crate::sink::SummarySink;
    use crate::timeline::Zone;
    use riscv_linker::Risc;

    use fixture::timeline;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        let s = Stats::of(&mut v);
        assert_eq!(
            (s.total, s.mean, s.p50, s.p99, s.min, s.max),
            (20100.0, 100.5, 100.0, 198.0, 1.0, 200.0)
        );
        assert_eq!(Stats::of(&mut [7.0]).p99, 7.0);
        assert_eq!(Stats::of(&mut []), Stats::default());
    }

    #[test]
    fn per_op_rows_have_ns_and_cycle_statistics_sorted_by_total() {
        let s = per_op(&timeline(), &Timebase::nominal(fixture::ARCH, 1), 0.0);
        let ops: Vec<(&str, u64)> = s.ops.iter().map(|o| (o.op.as_str(), o.runs)).collect();
        assert_eq!(ops[0], ("Matmul", 1), "the longest op first");
        let mm = &s.ops[0];
        let names: Vec<&str> = mm.zones.iter().map(|z| z.zone.as_str()).collect();
        assert_eq!(
            names,
            [
                "TRISC-FW",
                "TRISC-KERNEL",
                "work",
                "NCRISC-FW",
                "BRISC-FW",
                "NCRISC-KERNEL",
                "BRISC-KERNEL",
                "inner"
            ]
        );
        let work = mm.zones.iter().find(|z| z.zone == "work").unwrap();
        assert_eq!(work.count, 10, "2 tiles x 5 RISCs");
        let mut lens: Vec<u64> = (0..2)
            .flat_map(|t| Risc::ALL.map(|r| times(2, t, r)))
            .map(|x| x.work.1 - x.work.0)
            .collect();
        let want = durations::cycle_stats(&mut lens);
        assert_eq!(work.ns, want, "1 GHz: ns = cycles");
        assert_eq!(work.cycles, want);
        let mut floats: Vec<f64> = lens.iter().map(|&c| c as f64).collect();
        assert_eq!(
            Stats {
                whole: None,
                ..work.ns
            },
            Stats::of(&mut floats)
        );
        assert_eq!((work.ns.min, work.ns.max), (75_061.0, 82_061.0));
        // Sum zones: one record per core and run, totals over every measurement.
        let sums: Vec<(&str, u64, u64, u128)> = mm
            .sums
            .iter()
            .map(|r| (r.zone.as_str(), r.records, r.count, r.total_cycles))
            .collect();
        assert_eq!(sums, [("wait", 10, 30, 300)]);
        assert_eq!(
            (mm.sums[0].mean_cycles(), mm.sums[0].total_ns),
            (10.0, 300.0)
        );
        let text = render(&s);
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "ns on the host clock: chip 0 at a nominal 1000 MHz (not aligned)"
        );
        assert!(
            lines.next().unwrap().contains("total ns") && text.contains("p99 cyc"),
            "{text}"
        );
        assert!(
            text.contains("    sum zone  records  measurements"),
            "{text}"
        );
        assert!(
            text.contains("Matmul (1 run, device kernel time "),
            "{text}"
        );
        assert!(text.contains("82,061"), "{text}");
        // Value zones: their values per op and name (they once reached only the CSV).
        let inner: Vec<u32> = (0..2)
            .flat_map(|t| Risc::ALL.map(|r| fixture::inner_value(2, t, r)))
            .collect();
        let sum: u128 = inner.iter().map(|&v| v as u128).sum();
        let want = ValueRow {
            zone: "inner".into(),
            count: 10,
            min: *inner.iter().min().unwrap(),
            max: *inner.iter().max().unwrap(),
            sum,
        };
        assert_eq!(mm.values, std::slice::from_ref(&want));
        assert_eq!((want.min, want.max, want.mean()), (200, 214, 207.0));
        assert!(
            text.contains("    value zone  zones  min value  mean value  max value\n"),
            "{text}"
        );
        assert!(
            text.contains("    inner          10        200       207.0        214\n"),
            "{text}"
        );
    }

    #[test]
    fn short_zones_are_hidden_and_counted() {
        let all = per_op(&timeline(), &Timebase::nominal(fixture::ARCH, 1), 0.0);
        let s = per_op(&timeline(), &Timebase::nominal(fixture::ARCH, 1), 1_000.0);
        assert!(
            s.ops
                .iter()
                .all(|o| o.zones.iter().all(|z| z.zone != "inner")),
            "inner zones last 10 ns"
        );
        assert_eq!(s.hidden, 3, "one inner row per op");
        assert_eq!(s.hidden_total_ns, 3.0 * 10.0 * 10.0);
        assert_eq!(
            s.ops.iter().map(|o| o.zones.len()).sum::<usize>() + 3,
            all.ops.iter().map(|o| o.zones.len()).sum::<usize>()
        );
        assert!(
            render(&s).contains("(3 zone row(s) with a mean below 1,000 ns hidden, 300 ns in all)")
        );
    }

    /// Issue 25: ops that share an op code (the demo's add and mul are both
    /// `BinaryNgDeviceOperation`) were one section mixing two kernels' zones.
    #[test]
    fn ops_that_share_an_op_code_get_a_section_each_by_position() {
        let mut t = timeline();
        assert_eq!(t.ops.len(), 3);
        for o in &mut t.ops {
            o.name = "binary".into();
        }
        let s = per_op(&t, &Timebase::nominal(fixture::ARCH, 1), 0.0);
        let mut ops: Vec<(&str, u64)> = s.ops.iter().map(|o| (o.op.as_str(), o.runs)).collect();
        ops.sort();
        assert_eq!(ops, [("binary #1", 1), ("binary #2", 1), ("binary #3", 1)]);
        let text = render(&s);
        assert!(
            text.contains("binary #2 (1 run, device kernel time "),
            "{text}"
        );
        // A code that occurs once keeps its bare name.
        let names: Vec<String> = op_labels(&timeline().ops);
        assert!(names.iter().all(|n| !n.contains('#')), "{names:?}");
    }

    /// A run on two chips logs each op once per chip (the same run id): each gets its own
    /// section named by its chip, numbered among its chip's ops only.
    #[test]
    fn ops_of_several_chips_are_labelled_by_chip() {
        let mut t = timeline();
        assert_eq!(t.ops.len(), 3);
        for (i, o) in t.ops.iter_mut().enumerate() {
            o.name = "binary".into();
            o.chip = (i % 2) as u32;
        }
        assert_eq!(
            op_labels(&t.ops),
            ["binary #1 chip 0", "binary chip 1", "binary #2 chip 0"]
        );
    }

    /// Issue 41 (High 4): a zone name of 65,536 bytes or more (from a kernel ELF) panicked
    /// the text summary (a format width past u16::MAX). It is shortened with an ellipsis in
    /// the text only; the summary's rows keep the full name.
    #[test]
    fn huge_zone_names_are_shortened_in_the_text_not_panicked_on() {
        let mut s = per_op(&timeline(), &Timebase::nominal(fixture::ARCH, 1), 0.0);
        let long = "x".repeat(70_000);
        s.ops[0].zones[0].zone = long.clone();
        let text = render(&s);
        assert!(text.lines().all(|l| l.chars().count() < 400), "{text}");
        assert!(
            text.contains(&format!("{}…", "x".repeat(NAME_SHOWN - 1))),
            "{text}"
        );
        assert_eq!(s.ops[0].zones[0].zone, long);
    }

    /// Each op lists its own rows: two ops of one label listed each other's too (an op's
    /// rows were found by its label).
    #[test]
    fn each_op_lists_its_own_zone_rows() {
        let mut s = per_op(&timeline(), &Timebase::nominal(fixture::ARCH, 1), 0.0);
        let mut twin = s.ops[0].clone();
        twin.zones.truncate(1);
        twin.zones[0].zone = "only-in-the-twin".into();
        s.ops.push(twin);
        let text = render(&s);
        let rows = |zone: &str| {
            let name = |l: &&str| l.trim_start().split("  ").next() == Some(zone);
            text.lines().filter(name).count()
        };
        assert_eq!(rows("only-in-the-twin"), 1, "{text}");
        // Every zone row once: the lines indented by two, but the header.
        let zone_rows = text
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && !l.starts_with("  zone"))
            .count();
        let want: usize = s.ops.iter().map(|o| o.zones.len()).sum();
        assert_eq!(zone_rows, want, "{text}");
        assert_eq!(
            text.matches(&format!("{} (", s.ops[0].op)).count(),
            2,
            "{text}"
        );
    }

    /// Issue 25: sum zone totals were summed in 64 bits and wrapped.
    #[test]
    fn sum_zone_totals_do_not_wrap() {
        let t = timeline();
        let sum = |lane: u32| Mark {
            lane,
            site: 0,
            kind: MarkKind::Sum {
                total_cycles: u64::MAX,
                count: 3,
            },
            run: t.ops[0].run,
            op: Some(0),
            cycles: 10,
            ns: 10.0,
        };
        let mut b = Builder::default();
        let tb = Timebase::nominal(fixture::ARCH, 1);
        b.add(
            t.lanes[0],
            &[] as &[Zone],
            &[sum(0), sum(1)],
            &t.sites,
            &t.ops,
            &tb,
        );
        let s = b.finish(&t.ops, None, &tb, 0.0);
        let row = &s.ops.iter().find(|o| !o.sums.is_empty()).unwrap().sums[0];
        assert_eq!(row.total_cycles, 2 * u64::MAX as u128);
        assert_eq!((row.records, row.count), (2, 6));
        assert!(render(&s).contains(&(2 * u64::MAX as u128).to_string()));
    }
    /// The summary text of the fixture shifted `offset` cycles later, on `arch`'s nominal
    /// clock, as the sink writes it: the zone tables, and the checkpoint lines.
    fn sink_text(offset: u64, arch: riscv_linker::Arch) -> (String, String) {
        let p = fixture::profile_at(offset, arch, true);
        let mut s = SummarySink::printed(0.0);
        crate::sink::drive(&p, &mut [&mut s]).unwrap();
        let (summary, text) = s.summary.unwrap();
        let checkpoints: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("checkpoints"))
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(checkpoints.len() > 1, "{text}");
        (render(&summary), checkpoints.join("\n"))
    }

    /// Issue 41 (Medium): the ns of zone durations, sum zones, kernel times and checkpoint
    /// deltas came from differences of two `f64` host times (and an `f64` product), a ns or
    /// more off from 2^53 ns on: a chip whose counter has run for months printed wrong ns.
    /// Durations do not depend on when they happened: the text is the same at any offset.
    #[test]
    fn ns_figures_stay_exact_at_large_cycle_counts() {
        for arch in [
            riscv_linker::Arch::WormholeB0,
            riscv_linker::Arch::Blackhole,
        ] {
            let base = sink_text(0, arch);
            for offset in [(1 << 53) + 3, (1 << 60) + 1, u64::MAX - (1 << 30)] {
                let (table, checkpoints) = sink_text(offset, arch);
                assert_eq!(table, base.0, "{arch:?} at {offset}");
                assert_eq!(checkpoints, base.1, "{arch:?} at {offset}");
            }
        }
        // At 1350 MHz a work zone of 75,061 cycles is 55,600.74 ns.
        let (table, _) = sink_text(u64::MAX - (1 << 30), riscv_linker::Arch::Blackhole);
        assert!(table.contains("55,601"), "{table}");
    }

    /// Issue 41 (Low): cycle figures were printed through an `f64` (2^64 - 1 cycles showed as
    /// `18,446,744,073,709,551,616`); at 1 GHz so were the same figures in ns.
    #[test]
    fn cycle_figures_print_as_exact_integers() {
        let t = timeline();
        let max = u64::MAX;
        let zone = Zone {
            lane: 0,
            site: 0,
            depth: 0,
            run: t.ops[0].run,
            op: Some(0),
            start_cycles: 0,
            end_cycles: max,
            value: None,
        };
        let sum = Mark {
            lane: 0,
            site: 1,
            kind: MarkKind::Sum {
                total_cycles: max,
                count: 1,
            },
            run: t.ops[0].run,
            op: Some(0),
            cycles: 10,
            ns: 10.0,
        };
        let mut b = Builder::default();
        let tb = Timebase::nominal(fixture::ARCH, 1);
        b.add(t.lanes[0], &[zone][..], &[sum], &t.sites, &t.ops, &tb);
        let s = b.finish(&t.ops, None, &tb, 0.0);
        let text = render(&s);
        let exact = "18,446,744,073,709,551,615";
        // The zone row: total, mean, p50, p99, min and max in ns and in cycles.
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(&t.sites[0].name))
            .unwrap();
        assert_eq!(row.matches(exact).count(), 12, "{text}");
        assert!(!text.contains("551,616"), "{text}");
        // The sum zone row: total and mean ns, total and mean cycles.
        let sums = text
            .lines()
            .find(|l| l.trim_start().starts_with(&t.sites[1].name))
            .unwrap();
        assert_eq!(sums.matches(exact).count(), 3, "{text}");
        assert!(sums.contains(&max.to_string()), "{text}");
        // A mean is rounded exactly too: 2^64 - 1 over 2 is ...807.5, to even: ...808.
        let ns = NsPerCycle { num: 1, den: 1 };
        let row = SumRow {
            zone: "s".into(),
            records: 1,
            count: 2,
            total_cycles: max as u128,
            total_ns: max as f64,
            clock: RowClock::One(ns),
        };
        assert_eq!(row.shown_mean_cycles(), "9,223,372,036,854,775,808");
        assert_eq!(row.shown_ns()[1], "9,223,372,036,854,775,808");
    }

    /// The fixture with more events per launch on every ring, in ring order: one in the
    /// firmware before the KERNEL zone opens (it opens before the KERNEL zone: a ring in
    /// pieces gives it first), two inside the kernel (three steps a launch), and, last, an
    /// event of a run with no zone on the ring (no KERNEL zone: left out).
    fn readout_with_events() -> crate::readout::Readout {
        use crate::decode::{RecordKind, Records};
        let mut r = fixture::readout();
        for (k, ring) in r.rings.iter_mut().enumerate() {
            let (t, risc) = (k / Risc::ALL.len(), ring.id.risc);
            let old = std::mem::take(&mut ring.records);
            let mut new = Records::new();
            let event = |new: &mut Records, at: u64, run: u32| {
                new.push(RecordKind::Event, fixture::site::BARRIER, at, at, 0, 0, run)
            };
            let mut last = 0;
            for i in 0..old.len() {
                let row = old.row(i).unwrap();
                new.push_row(&row);
                last = last.max(row.end);
                let x = times(row.run, t, risc);
                match row.kind {
                    RecordKind::Run => event(&mut new, x.fw.0 + 1, row.run),
                    RecordKind::ValueZone => {
                        event(&mut new, x.kernel.0 + 100, row.run);
                        event(&mut new, x.kernel.0 + 250 + 10 * row.run as u64, row.run);
                    }
                    _ => {}
                }
            }
            event(&mut new, last + 10, 77);
            ring.payload_bytes = 12 * new.len() as u64;
            ring.records = new;
        }
        r
    }

    /// A summary sink of `p` fed through `rings`: its text (from [`SummarySink::printed`])
    /// and brief, and the file [`SummarySink::new`] writes.
    fn summary_through(
        p: &crate::profile::Profile,
        rings: &mut dyn crate::ring_source::RingSource,
        threshold_ns: f64,
    ) -> (String, String, Vec<u8>) {
        let mut printed = SummarySink::printed(threshold_ns);
        crate::sink::drive_rings(p, rings, &mut [&mut printed]).unwrap();
        let dir = crate::testing::temp_dir("summary-pieces");
        let path = dir.join(FILE_NAME);
        let inputs = crate::inputs::Inputs::none();
        let mut file = SummarySink::new(&path, threshold_ns, vec!["a note".into()], &inputs);
        crate::sink::drive_rings(p, rings, &mut [&mut file]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (printed.summary.unwrap().1, printed.brief, bytes)
    }

    /// Issue 41: a ring given in pieces (any window, any piece size, cut mid-zone) gives the
    /// summary text and file of the whole ring, byte for byte: zone rows, value and sum
    /// zones, and checkpoints whose launches' KERNEL start, step and last time are carried
    /// from piece to piece (an event before its KERNEL zone waits for it).
    #[test]
    fn rings_in_pieces_summarise_what_whole_rings_do() {
        use crate::ring_source::{Cut, Held};
        use crate::sink::Sink;
        let p = fixture::profile_of(readout_with_events(), fixture::ARCH, true);
        for threshold_ns in [-10_000.0, 120.0] {
            let whole = summary_through(&p, &mut Held(&p), threshold_ns);
            let checkpoints: Vec<&str> = whole
                .0
                .lines()
                .skip_while(|l| !l.starts_with("checkpoints"))
                .skip(1)
                .take_while(|l| !l.is_empty())
                .collect();
            // One line per (op, RISC), four steps each: the first (before the KERNEL zone
            // opened) 1,999 ns before it, shown under a threshold below that.
            assert_eq!(checkpoints.len(), 15, "{}", whole.0);
            for l in &checkpoints {
                let shown = if threshold_ns < 0.0 { 4 } else { 3 };
                assert_eq!(l.matches("barrier").count(), shown, "{l}");
                assert_eq!(l.contains("barrier +-1,999 @-1,999 ns;"), shown == 4, "{l}");
            }
            assert!(!whole.0.contains("run 77"), "{}", whole.0);
            for window in [1, 2, 5, 64] {
                for piece in [1, 3, 7, 1_000] {
                    let cut = summary_through(
                        &p,
                        &mut Cut {
                            profile: &p,
                            window,
                            piece,
                        },
                        threshold_ns,
                    );
                    let at = format!("threshold {threshold_ns}, window {window}, piece {piece}");
                    assert_eq!(cut.0, whole.0, "{at}: the text differs");
                    assert_eq!(cut.1, whole.1, "{at}: the brief differs");
                    assert!(cut.2 == whole.2, "{at}: the file differs");
                }
            }
        }
        // The sink takes pieces with its analysis (its bottleneck section).
        assert!(SummarySink::printed(0.0).takes_pieces());
    }
}
