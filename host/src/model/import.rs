//! A capture tt-metal made on a card, as a [`Profile`]: `ttprof import`'s model.
//!
//! The device log ([`crate::tt_metal::device_log`], one row per marker) is streamed once.
//! Rows become the records a ring readout would have given, per (chip, core, RISC) ring:
//!
//! - `ZONE_START` opens a zone on its ring's stack; `ZONE_END` closes the innermost open zone
//!   of the same name and run (as tt-metal's own reader pairs them) and becomes one zone
//!   record, written at its close like the device writes it. A `ZONE_END` without its start,
//!   a start never closed, and an end earlier than its start are left out and counted
//!   (errors: the outputs are incomplete, `ttprof import` exits 2 after writing them).
//!   Meta data `{"value": N}` (ttprof's value zones) makes a value zone.
//! - `TS_DATA` is timestamped data (`data`), `TS_EVENT` an event, `ZONE_TOTAL` a sum zone
//!   (total cycles in `data`, `{"count": N}` in the meta data, else one measurement).
//! - `run host ID` is the run; the first row of a run on a ring also gives the ring a `Run`
//!   record. Rows of RISCs ttprof does not model (`ERISC`, dispatch cores) are counted and
//!   left out (a warning).
//!
//! Sites are the distinct (kind, zone name, source file, source line) of the file, one site
//! table for every ring (at most 2^16 sites). Ops: one per (chip, run), named by the op
//! report when one is given (`--ops`: op code, type, attributes, tensors per `DEVICE ID` and
//! `GLOBAL CALL COUNT`), else `run <id>`. The device log carries no host clock, so times are
//! cycles since reset over `CHIP_FREQ[MHz]` (one frequency for the file), and an op's host
//! times are its records' device span on that clock.
//!
//! Memory: the rows are streamed (one line at a time), but the model holds every record
//! (35 bytes a record in [`Records`]' columns) plus the open zones, like a readout does.

use crate::decode::{RecordKind, Records, NO_RUN};
use crate::error::{Error, Location, Result};
use crate::issue::Issue;
use crate::oplog::{OpLog, OpLogEntry, OpRecord};
use crate::profile::Profile;
use crate::readout::{Readout, RingId, RingReport};
use crate::resolve::{Resolution, RingSites};
use crate::sites::{SiteKind, SiteMeta, SiteTable};
use crate::timebase::{ChipTime, Timebase};
use crate::tt_metal::device_log::{DeviceLog, Row, RowType};
use crate::tt_metal::op_report::{self, ReportOp};
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, NocCoord, Risc};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// A device log turned into a [`Profile`], with what the import counted.
pub struct Imported {
    /// The model every output is written from.
    pub profile: Profile,
    /// Marker rows read.
    pub rows: u64,
    /// Zones built (matched `ZONE_START`/`ZONE_END` pairs).
    pub zones: u64,
    /// `ZONE_END` rows without their `ZONE_START`.
    pub unmatched_ends: u64,
    /// `ZONE_START` rows never closed.
    pub unclosed_starts: u64,
    /// Where the times come from.
    pub clock_note: String,
}

/// An open zone on a ring's stack.
struct Open {
    name: u32,
    site: u16,
    run: u32,
    start: u64,
    value: Option<u64>,
}

/// One ring being built.
struct RingBuild {
    id: RingId,
    records: Records,
    open: Vec<Open>,
    last_run: u32,
    runs: BTreeSet<u32>,
}

/// Distinct zone names and the sites (kind, file, line) under each: no allocation per row.
#[derive(Default)]
struct Sites {
    names: FxHashMap<String, u32>,
    by_name: Vec<Vec<(SiteKind, String, u32, u16)>>,
    table: SiteTable,
    count: u32,
}

impl Sites {
    fn name(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.names.get(name) {
            return n;
        }
        self.by_name.push(Vec::new());
        let n = self.by_name.len() as u32 - 1;
        self.names.insert(name.to_string(), n);
        n
    }

    /// The site of `row` as a `kind` (added on first use).
    fn site(&mut self, row: &Row, kind: SiteKind) -> std::result::Result<(u32, u16), String> {
        let n = self.name(row.name);
        let list = &mut self.by_name[n as usize];
        if let Some(s) = list
            .iter()
            .find(|s| s.0 == kind && s.2 == row.src_line && s.1 == row.src_file)
        {
            return Ok((n, s.3));
        }
        let id = u16::try_from(self.count).map_err(|_| {
            format!(
                "more than {} distinct (zone name, source file, line, type) sites: ttprof's site ids are 16-bit",
                u16::MAX as u32 + 1
            )
        })?;
        self.count += 1;
        list.push((kind, row.src_file.to_string(), row.src_line, id));
        let name = if row.name.is_empty() {
            format!("unnamed-{}:{}", row.src_file, row.src_line)
        } else {
            row.name.to_string()
        };
        self.table.insert(
            id,
            SiteMeta {
                kind,
                name,
                file: row.src_file.to_string(),
                line: row.src_line,
                column: 0,
                package: String::new(),
                wait: None,
                signal: None,
            },
        )?;
        Ok((n, id))
    }
}

/// Reads the device log `csv` (and the op report `ops` that names its runs) into a
/// [`Profile`] (see the module docs). An unreadable row is an error naming its line.
pub fn import(csv: &Path, ops: Option<&Path>) -> Result<Imported> {
    let report = ops.map(op_report::read).transpose()?;
    let mut log = DeviceLog::open(csv)?;
    let mhz = log.mhz;
    let (arch, max_cores, arch_text) = (log.arch, log.max_cores, log.arch_text.clone());
    let mut sites = Sites::default();
    let mut rings: Vec<RingBuild> = Vec::new();
    let mut ring_of: FxHashMap<(u32, u8, u8, Risc), usize> = FxHashMap::default();
    let mut last_ring: Option<((u32, u8, u8, Risc), usize)> = None;
    let mut seen_runs: FxHashSet<(usize, u32)> = FxHashSet::default();
    let mut spans: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    let mut other_riscs: BTreeMap<String, u64> = BTreeMap::new();
    let (mut rows, mut zones, mut unmatched, mut backwards) = (0u64, 0u64, 0u64, 0u64);
    let (mut first_unmatched, mut first_backwards) = (0usize, 0usize);
    let path = log.path().to_path_buf();
    let bad = |line: usize, what: String| Error::BadFile {
        path: path.clone(),
        what: format!("line {line}: {what}"),
    };
    while let Some(row) = log.next_row()? {
        rows += 1;
        let Some(risc) = Risc::from_name(row.risc) else {
            *other_riscs.entry(row.risc.to_string()).or_default() += 1;
            continue;
        };
        let key = (row.chip, row.x, row.y, risc);
        let ri = match last_ring {
            Some((k, i)) if k == key => i,
            _ => {
                let i = *ring_of.entry(key).or_insert_with(|| {
                    rings.push(RingBuild {
                        id: RingId {
                            chip: row.chip,
                            tile: NocCoord::new(row.x, row.y),
                            risc,
                        },
                        records: Records::new(),
                        open: Vec::new(),
                        last_run: NO_RUN,
                        runs: BTreeSet::new(),
                    });
                    rings.len() - 1
                });
                last_ring = Some((key, i));
                i
            }
        };
        let b = &mut rings[ri];
        let run = row.run.unwrap_or(NO_RUN);
        if run != NO_RUN {
            let s = spans.entry((row.chip, run)).or_insert((row.time, row.time));
            *s = (s.0.min(row.time), s.1.max(row.time));
        }
        if run != b.last_run {
            b.last_run = run;
            b.runs.insert(run);
            if run != NO_RUN && seen_runs.insert((ri, run)) {
                b.records
                    .push(RecordKind::Run, 0, row.time, row.time, run as u64, 0, run);
            }
        }
        let mut point = |kind: RecordKind, site: SiteKind, value: u64, count: u32| {
            let (_, id) = sites.site(&row, site).map_err(|e| bad(row.line, e))?;
            b.records
                .push(kind, id, row.time, row.time, value, count, run);
            Ok::<(), Error>(())
        };
        match row.kind {
            RowType::TsData => point(RecordKind::Data, SiteKind::Data, row.data, 0)?,
            RowType::TsEvent => point(RecordKind::Event, SiteKind::Event, 0, 0)?,
            RowType::ZoneTotal => {
                let count = row.meta_number("count").unwrap_or(1);
                let count = u32::try_from(count)
                    .map_err(|_| bad(row.line, format!("count {count} is above 2^32 - 1")))?;
                point(RecordKind::Sum, SiteKind::Sum, row.data, count)?
            }
            RowType::ZoneStart => {
                let value = row.meta_number("value");
                let kind = if value.is_some() {
                    SiteKind::ValueZone
                } else {
                    SiteKind::Zone
                };
                let (name, site) = sites.site(&row, kind).map_err(|e| bad(row.line, e))?;
                b.open.push(Open {
                    name,
                    site,
                    run,
                    start: row.time,
                    value,
                });
            }
            RowType::ZoneEnd => {
                let name = sites.names.get(row.name).copied();
                let at =
                    name.and_then(|n| b.open.iter().rposition(|o| o.name == n && o.run == run));
                let Some(at) = at else {
                    unmatched += 1;
                    if first_unmatched == 0 {
                        first_unmatched = row.line;
                    }
                    continue;
                };
                let o = b.open.remove(at);
                if row.time < o.start {
                    backwards += 1;
                    if first_backwards == 0 {
                        first_backwards = row.line;
                    }
                    continue;
                }
                let (kind, value) = match o.value.or(row.meta_number("value")) {
                    Some(v) => (RecordKind::ValueZone, v),
                    None => (RecordKind::Zone, 0),
                };
                b.records
                    .push(kind, o.site, o.start, row.time, value, 0, run);
                zones += 1;
            }
        }
    }

    let mut issues = Vec::new();
    let shown = csv.display();
    if unmatched > 0 {
        issues.push(
            Issue::error(
                None,
                format!(
                    "{shown}: {unmatched} ZONE_END row(s) without their ZONE_START (first at line {first_unmatched}) are left out"
                ),
            )
            .with_count(unmatched),
        );
    }
    if backwards > 0 {
        issues.push(
            Issue::error(
                None,
                format!(
                    "{shown}: {backwards} zone(s) whose ZONE_END is earlier than their ZONE_START (first at line \
                     {first_backwards}) are left out"
                ),
            )
            .with_count(backwards),
        );
    }
    let mut unclosed = 0u64;
    for b in &rings {
        if !b.open.is_empty() {
            unclosed += b.open.len() as u64;
            let id = b.id;
            issues.push(
                Issue::error(
                    Some(Location {
                        chip: id.chip,
                        x: id.tile.x,
                        y: id.tile.y,
                        risc: Some(id.risc),
                    }),
                    format!(
                        "{shown}: {} ZONE_START row(s) without their ZONE_END (the innermost: {:?}) are left out",
                        b.open.len(),
                        sites.table.get(b.open[b.open.len() - 1].site).map_or("", |s| s.name.as_str())
                    ),
                )
                .with_count(b.open.len() as u64),
            );
        }
    }
    for (risc, n) in &other_riscs {
        issues.push(
            Issue::warning(
                None,
                format!("{shown}: {n} row(s) of RISC {risc:?}, which ttprof does not model, are left out"),
            )
            .with_count(*n),
        );
    }
    let arch = arch.unwrap_or_else(|| {
        issues.push(Issue::warning(
            None,
            format!("{shown}: ARCH {arch_text:?} is not one ttprof models: read as wormhole_b0"),
        ));
        Arch::WormholeB0
    });

    // Rings stay in the order the file first lists them (tt-metal and ttprof group rows by
    // chip, core and RISC), so the device CSV written back lists them in the same order.
    let chips = rings.iter().map(|b| b.id.chip + 1).max().unwrap_or(1);
    let tiles: BTreeSet<(u32, NocCoord)> = rings.iter().map(|b| (b.id.chip, b.id.tile)).collect();
    let table = Arc::new(std::mem::take(&mut sites.table));
    let mut resolution = Resolution::default();
    let mut reports = Vec::with_capacity(rings.len());
    for b in rings {
        let mut s = RingSites::default();
        for &run in &b.runs {
            s.insert(run, table.clone());
        }
        resolution.resolved += (0..b.records.len())
            .filter(|&i| crate::resolve::has_site(b.records.kind[i]))
            .count() as u64;
        resolution.rings.push(s);
        let mut r = RingReport::new(b.id);
        r.records = b.records;
        reports.push(r);
    }
    let per_chip = (0..chips)
        .map(|c| tiles.iter().filter(|t| t.0 == c).count() as u32)
        .max()
        .unwrap_or(0);
    let readout = Readout {
        geometry: Geometry {
            arch,
            chips,
            tiles_per_chip: max_cores.unwrap_or(per_chip).max(per_chip),
            l1_size: arch.l1_size(),
        },
        rings: reports,
        issues,
        bus_bytes: 0,
        tiles: tiles.len() as u32,
        unused_tiles: 0,
    };
    let timebase = Timebase {
        chips: (0..chips)
            .map(|_| ChipTime {
                cycles_per_ns: mhz / 1000.0,
                ..ChipTime::nominal(1000)
            })
            .collect(),
    };
    let oplog = op_log(csv, ops, report.map(|r| r.ops), &spans, mhz);
    let mut profile = Profile::resolved(readout, resolution, Some(oplog.0), timebase);
    profile.readout.issues.extend(oplog.1);
    Ok(Imported {
        profile,
        rows,
        zones,
        unmatched_ends: unmatched,
        unclosed_starts: unclosed,
        clock_note: format!(
            "clock: CHIP_FREQ[MHz] {mhz} of the device log (cycles since reset over that frequency; no host clock fit)"
        ),
    })
}

/// One op per (chip, run) of the device log, named by the op report's op of that
/// `DEVICE ID` and `GLOBAL CALL COUNT`, else `run <id>`; host times are the run's device
/// span. Also the warnings: report ops the device log has no rows of, runs the report does
/// not name.
fn op_log(
    csv: &Path,
    ops_path: Option<&Path>,
    report: Option<Vec<ReportOp>>,
    spans: &BTreeMap<(u32, u32), (u64, u64)>,
    mhz: f64,
) -> (OpLog, Vec<Issue>) {
    let mut named: BTreeMap<(u32, u32), ReportOp> = BTreeMap::new();
    let given = report.is_some();
    for op in report.into_iter().flatten() {
        named.entry((op.device, op.run)).or_insert(op);
    }
    let mut entries = Vec::new();
    let mut unnamed = 0u64;
    for (&(chip, run), &(start, end)) in spans {
        let ns = |c: u64| c as f64 * 1000.0 / mhz;
        let mut op = OpRecord {
            run_id: run,
            device: chip,
            op_code: format!("run {run}"),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![],
            outputs: vec![],
            host_start_ns: ns(start).floor() as u64,
            host_end_ns: ns(end).ceil() as u64,
            kernels: vec![],
        };
        match named.remove(&(chip, run)) {
            Some(r) => {
                op.op_code = r.op_code;
                op.op_type = r.op_type;
                op.attributes = r.attributes;
                op.inputs = r.inputs;
                op.outputs = r.outputs;
            }
            None => unnamed += 1,
        }
        entries.push(OpLogEntry::Op(op));
    }
    let mut issues = Vec::new();
    if let Some(p) = ops_path.filter(|_| given) {
        if unnamed > 0 {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{}: {unnamed} run(s) of the device log have no op (DEVICE ID, GLOBAL CALL COUNT) in it: named `run <id>`",
                        p.display()
                    ),
                )
                .with_count(unnamed),
            );
        }
        if !named.is_empty() {
            issues.push(
                Issue::warning(
                    None,
                    format!(
                        "{}: {} op(s) have no rows in the device log (e.g. run {} on device {}): left out",
                        p.display(),
                        named.len(),
                        named.keys().next().map_or(0, |k| k.1),
                        named.keys().next().map_or(0, |k| k.0)
                    ),
                )
                .with_count(named.len() as u64),
            );
        }
    }
    (
        OpLog {
            path: ops_path.unwrap_or(csv).to_path_buf(),
            entries,
        },
        issues,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    /// The fixture's device CSV, imported: every zone, value zone, event, datum and sum
    /// comes back with its name, times, value and count, ring by ring.
    #[test]
    fn ttprof_s_own_device_csv_round_trips() {
        let dir = crate::testing::temp_dir("import-round-trip");
        let csv = dir.join(crate::csv::FILE_NAME);
        let r = fixture::readout();
        let res = fixture::resolution(&r);
        crate::csv::write_file(&csv, &r, &res, 1000).unwrap();
        let i = import(&csv, None).unwrap();
        assert_eq!((i.zones, i.unmatched_ends, i.unclosed_starts), (120, 0, 0));
        let p = &i.profile;
        assert!(
            p.all_issues().next().is_none(),
            "{:?}",
            p.all_issues().collect::<Vec<_>>()
        );
        let original = Profile::resolved(
            r,
            res,
            Some(fixture::oplog()),
            Timebase::nominal(fixture::ARCH, 1),
        );
        assert_eq!(p.ring_count(), original.ring_count());
        let key = |p: &Profile| {
            let mut v = Vec::new();
            for view in p.rings() {
                for z in &view.zones {
                    let name = p.labels[z.site as usize].name.clone();
                    v.push((
                        view.ring.id,
                        name,
                        z.start_cycles,
                        z.end_cycles,
                        z.depth,
                        z.value,
                        z.run,
                    ));
                }
                for m in &view.marks {
                    let name = p.labels[m.site as usize].name.clone();
                    v.push((
                        view.ring.id,
                        format!("{name} {:?}", m.kind),
                        m.cycles,
                        m.cycles,
                        0,
                        None,
                        m.run,
                    ));
                }
            }
            v
        };
        assert_eq!(key(p), key(&original));
        let ops: Vec<(u32, &str)> = p.ops.iter().map(|o| (o.run, o.name.as_str())).collect();
        assert_eq!(ops, [(1, "run 1"), (2, "run 2"), (3, "run 3")]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
