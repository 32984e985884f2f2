//! A capture tt-metal made on a card, as a [`Profile`]: `ttprof import`'s model.
//!
//! The device log ([`crate::tt_metal::device_log`], one row per marker) becomes the records
//! a ring readout would have given, per (chip, core, RISC) ring (`pairing`): `ZONE_START`
//! and `ZONE_END` pair into zones as tt-metal's own reader pairs them, `TS_DATA`,
//! `TS_EVENT` and `ZONE_TOTAL` become data, events and sum zones. Markers that do not pair
//! are left out and counted (errors: `ttprof import` exits 2 after writing the outputs);
//! rows of RISCs ttprof does not model are counted and left out (a warning).
//!
//! Ops are one per (chip, run), named by the op report when one is given (`--ops`), else
//! `run <id>`. The device log carries no host clock: times are cycles since reset over its
//! `CHIP_FREQ[MHz]`. [`stream`] reads the file twice, so memory is bounded by the rings:
//! the first pass keeps only each ring's facts (`crate::pass::RingPass`), from which the
//! [`Profile`] is built, and the second (`CsvRings`) hands each ring's records to the
//! outputs as its last row is read. [`import`] keeps every record (for `ttprof tracy`).

mod pairing;
mod rings;

pub(crate) use rings::CsvRings;

use crate::error::{Location, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::oplog::{OpLog, OpLogEntry, OpRecord};
use crate::pass::{Reading, RingPass};
use crate::profile::Profile;
use crate::readout::{Readout, Released, RingReport};
use crate::resolve::{Resolution, RingSites};
use crate::ring_source::RingSource;
use crate::timebase::{ChipTime, Timebase};
use crate::tt_metal::device_log::DeviceLog;
use crate::tt_metal::op_report::{self, ReportOp};
use pairing::{Made, Pairing};
use riscv_linker::devfile::Geometry;
use riscv_linker::{Arch, NocCoord};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// A device log turned into a [`Profile`], with what the import counted.
pub struct Imported {
    /// The model every output is written from ([`stream`]: its rings' records released,
    /// they come from `CsvRings`; [`import`]: every record held).
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

/// Reads the device log `csv` (and the op report `ops` that names its runs) into a
/// [`Profile`] holding every record (see the module docs). An unreadable row is an error
/// naming its line. The files read are noted in `inputs` (the command's input guard).
pub fn import(csv: &Path, ops: Option<&Path>, inputs: &Inputs) -> Result<Imported> {
    let (mut i, mut rings) = stream(csv, ops, inputs)?;
    for index in 0..i.profile.ring_count() {
        let ring = rings.ring(index)?.into_owned();
        i.profile.readout.rings[index] = ring;
    }
    Ok(i)
}

/// The first pass over the device log `csv` (see the module docs): the [`Profile`], whose
/// rings hold no records, and the second pass that reads them ring by ring, for
/// [`crate::outputs::write_all_rings`]. An unreadable row is an error naming its line,
/// before any output is written. The files read (both passes) are noted in `inputs`.
pub fn stream(csv: &Path, ops: Option<&Path>, inputs: &Inputs) -> Result<(Imported, CsvRings)> {
    let report = ops.map(|o| op_report::read(o, inputs)).transpose()?;
    let mut log = DeviceLog::open(csv, inputs)?;
    let mhz = log.mhz;
    let (arch, max_cores, arch_text) = (log.arch, log.max_cores, log.arch_text.clone());
    let chip_time = ChipTime {
        cycles_per_ns: mhz / 1000.0,
        ..ChipTime::nominal(1000)
    };
    let mut timebase = Timebase {
        chips: Default::default(),
    };
    let mut p = Pairing::new(log.path());
    let mut passes: Vec<RingPass> = Vec::new();
    // Per ring: zones, site-carrying records.
    let mut counts: Vec<(usize, u64)> = Vec::new();
    let mut made: Vec<Made> = Vec::new();
    // The ring whose rows are being read, and its reading (rows come grouped by ring: a
    // ring's reading settles when a row of another comes).
    let mut reading: Option<(usize, Reading)> = None;
    while let Some(row) = log.next_row()? {
        made.clear();
        p.row(&row, &mut made)?;
        while passes.len() < p.rings.len() {
            let id = p.rings[passes.len()].id;
            timebase
                .chips
                .entry(id.chip)
                .or_insert_with(|| chip_time.clone());
            passes.push(RingPass::new(id, &timebase));
            counts.push((0, 0));
        }
        for m in &made {
            let c = &mut counts[m.ring];
            c.0 += m.kind.is_zone() as usize;
            c.1 += crate::resolve::has_site(m.kind) as u64;
            let ring = &p.rings[m.ring];
            let table = &p.sites.table;
            if reading.as_ref().is_none_or(|(r, _)| *r != m.ring) {
                if let Some((r, left)) = reading.take() {
                    passes[r].settle(left);
                }
            }
            let (_, now) = reading.get_or_insert_with(|| (m.ring, Reading::default()));
            let (kind, run, site) = (m.kind, m.run, m.site);
            passes[m.ring].record(now, kind, run, site, (m.start, m.end), &timebase, || {
                ring.runs()
                    .binary_search(&m.run)
                    .is_ok()
                    .then(|| table.get(m.site).map(|s| s.name.as_str()))
                    .flatten()
            });
        }
    }
    if let Some((r, left)) = reading {
        passes[r].settle(left);
    }
    // The per-ring lists grew by doubling while the file was read: sized to the rings now,
    // before the rings' reports are made beside them (300,000 rings: 60 MB unused).
    passes.shrink_to_fit();
    counts.shrink_to_fit();
    p.rings.shrink_to_fit();
    let mut issues = Vec::new();
    let shown = csv.display();
    let (unmatched, first_unmatched) = p.unmatched;
    let (backwards, first_backwards) = p.backwards;
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
    for b in &p.rings {
        let open = b.open();
        if !open.is_empty() {
            unclosed += open.len() as u64;
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
                        open.len(),
                        p.sites.table.get(open[open.len() - 1].site).map_or("", |s| s.name.as_str())
                    ),
                )
                .with_count(open.len() as u64),
            );
        }
    }
    for (risc, n) in &p.other_riscs {
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
    // A count of chips for the geometry: one past the largest id (saturating: an id read
    // from the file may be u32::MAX); nothing below is sized by it.
    let chips = p
        .rings
        .iter()
        .map(|b| b.id.chip.saturating_add(1))
        .max()
        .unwrap_or(1);
    let tiles: BTreeSet<(u32, NocCoord)> = p.rings.iter().map(|b| (b.id.chip, b.id.tile)).collect();
    let table = Arc::new(std::mem::take(&mut p.sites.table));
    let mut resolution = Resolution {
        rings: Vec::with_capacity(p.rings.len()),
        ..Resolution::default()
    };
    let mut reports = Vec::with_capacity(p.rings.len());
    let mut expected = Vec::with_capacity(p.rings.len());
    for (b, (pass, (zones, resolved))) in p.rings.iter().zip(passes.iter().zip(&counts)) {
        let mut s = RingSites::default();
        for &run in b.runs() {
            s.insert(run, table.clone());
        }
        resolution.resolved += resolved;
        resolution.rings.push(s);
        let mut r = RingReport::new(b.id);
        r.released = Some(Released {
            records: pass.records as usize,
            zones: *zones,
        });
        reports.push(r);
        expected.push((b.rows, pass.records));
    }
    // The pairing's rings and the per-ring counts are read: gone before the profile is
    // built beside the rest (300,000 rings: 30 MB; issue 41).
    p.forget_rings();
    drop(counts);
    let mut tiles_of: BTreeMap<u32, u32> = BTreeMap::new();
    for (c, _) in &tiles {
        *tiles_of.entry(*c).or_default() += 1;
    }
    let per_chip = tiles_of.values().copied().max().unwrap_or(0);
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
    // Sparse by the chips present (chip 0 when none is): memory follows them, not the
    // largest id.
    let mut chip_ids: Vec<u32> = tiles_of.keys().copied().collect();
    if chip_ids.is_empty() {
        chip_ids.push(0);
    }
    let timebase = Timebase {
        chips: chip_ids.iter().map(|&c| (c, chip_time.clone())).collect(),
    };
    let mut oplog = op_log(csv, ops, report.map(|r| r.ops), &p.spans, &chip_time);
    oplog.0.inputs = inputs.clone();
    let mut profile = Profile::from_passes(readout, resolution, Some(oplog.0), timebase, passes);
    profile.readout.issues.extend(oplog.1);
    let imported = Imported {
        profile,
        rows: p.rows,
        zones: p.zones,
        unmatched_ends: unmatched,
        unclosed_starts: unclosed,
        clock_note: format!(
            "clock: CHIP_FREQ[MHz] {mhz} of the device log (cycles since reset over that frequency; no host clock fit)"
        ),
    };
    Ok((
        imported,
        CsvRings::new(csv.to_path_buf(), expected, inputs.clone()),
    ))
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
    clock: &ChipTime,
) -> (OpLog, Vec<Issue>) {
    let mut named: BTreeMap<(u32, u32), ReportOp> = BTreeMap::new();
    let given = report.is_some();
    for op in report.into_iter().flatten() {
        named.entry((op.device, op.run)).or_insert(op);
    }
    let mut entries = Vec::new();
    let mut unnamed = 0u64;
    for (&(chip, run), &(start, end)) in spans {
        // Exact (whole MHz: cycles * 1000 / MHz in integers), not through an f64 of ns,
        // which is a ns or more off from 2^53 ns on.
        let at = |c: u64| clock.host_time(NocCoord::new(0, 0), c);
        let whole = |t: Option<i128>| t.map_or(0, |t| t.clamp(0, u64::MAX as i128) as u64);
        let mut op = OpRecord {
            run_id: run,
            device: chip,
            op_code: format!("run {run}"),
            op_type: "tt_dnn_device".into(),
            attributes: Default::default(),
            inputs: vec![],
            outputs: vec![],
            host_start_ns: whole(at(start).floor()),
            host_end_ns: whole(at(end).ceil()),
            kernels: vec![],
            counters: Vec::new(),
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
            inputs: Inputs::none(),
        },
        issues,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;

    /// Writes the device CSV of `r` (a fixture readout, the fixture's sites) at `mhz` into
    /// a new temporary folder `name`: the folder and the CSV's path.
    fn fixture_csv(
        name: &str,
        r: &crate::readout::Readout,
        mhz: u32,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir = crate::testing::temp_dir(name);
        let csv = dir.join(crate::csv::FILE_NAME);
        let res = fixture::resolution(r);
        crate::csv::write_file(&csv, r, &res, mhz, &crate::inputs::Inputs::none()).unwrap();
        (dir, csv)
    }

    /// The fixture's device CSV, imported: every zone, value zone, event, datum and sum
    /// comes back with its name, times, value and count, ring by ring.
    #[test]
    fn ttprof_s_own_device_csv_round_trips() {
        let r = fixture::readout();
        let (dir, csv) = fixture_csv("import-round-trip", &r, 1000);
        let i = import(&csv, None, &crate::inputs::Inputs::none()).unwrap();
        assert_eq!((i.zones, i.unmatched_ends, i.unclosed_starts), (120, 0, 0));
        let p = &i.profile;
        assert!(
            p.all_issues().next().is_none(),
            "{:?}",
            p.all_issues().collect::<Vec<_>>()
        );
        let original = fixture::profile_of(r, fixture::ARCH, true);
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

    /// Issue 41 (Medium): a run's host times (the op report's `HOST START TS` / `HOST END
    /// TS`) were `cycles * 1000 / MHz` through an `f64`, hundreds of ns off at 2^62 cycles.
    #[test]
    fn run_host_times_stay_exact_at_large_cycle_counts() {
        let offset = (1u64 << 62) + 12_345;
        let (dir, csv) = fixture_csv("import-large-counts", &fixture::readout_at(offset), 1350);
        let i = import(&csv, None, &crate::inputs::Inputs::none()).unwrap();
        let ns = |c: u64| (c as u128 * 1000 / 1350, (c as u128 * 1000).div_ceil(1350));
        let hosts: Vec<(u32, u64, u64)> = i
            .profile
            .ops
            .iter()
            .filter_map(|o| o.host_ns.map(|(a, b)| (o.run, a, b)))
            .collect();
        let want: Vec<(u32, u64, u64)> = fixture::OPS
            .iter()
            .map(|&(run, _)| {
                let first = fixture::times(run, 0, riscv_linker::Risc::Brisc).fw.0 + offset;
                let last = fixture::times(run, 1, riscv_linker::Risc::Trisc2).fw.1 + offset;
                (run, ns(first).0 as u64, ns(last).1 as u64)
            })
            .collect();
        assert_eq!(hosts, want);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A device log whose rings' rows interleave (round robin): the second pass keeps one
    /// ring at a time (a window of one record) by reading the file again for each ring
    /// whose rows it passed over, and every ring comes out as the held import makes it.
    #[test]
    fn interleaved_rings_are_read_again_instead_of_held() {
        use crate::ring_source::RingSource;
        let (dir, csv) = fixture_csv("import-interleaved", &fixture::readout(), 1000);
        let interleaved = interleave(&dir, &csv);
        let held = import(&interleaved, None, &crate::inputs::Inputs::none()).unwrap();
        let (streamed, mut source) =
            stream(&interleaved, None, &crate::inputs::Inputs::none()).unwrap();
        source.window_records = 1;
        assert_eq!(streamed.profile.ring_count(), held.profile.ring_count());
        for i in 0..held.profile.ring_count() {
            let ring = source.ring(i).unwrap().into_owned();
            let want = &held.profile.readout.rings[i];
            assert_eq!(ring.id, want.id);
            assert_eq!(
                format!("{:?}", ring.records),
                format!("{:?}", want.records),
                "ring {i}"
            );
            let in_flight = source.records.len();
            assert!(in_flight <= 1, "{in_flight} rings held after ring {i}");
        }
        assert!(source.readings > 1, "{} readings", source.readings);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Issue 41: the first pass reads one ring at a time (its reading settles when a row of
    /// another ring comes), so a device log whose rings' rows interleave settles a ring's
    /// reading at every row, and its rings come back to runs already read: every output is
    /// still the one its rows grouped by ring give, byte for byte, but for the device CSV's
    /// `timer_id` column (the import numbers sites in the order rows first name them).
    #[test]
    fn interleaved_rows_model_what_grouped_rows_model() {
        use crate::outputs::WrittenBytes;
        use crate::ring_source::Held;
        let (dir, grouped) = fixture_csv("import-settle", &fixture::readout(), 1000);
        let interleaved = interleave(&dir, &grouped);
        let none = crate::inputs::Inputs::none;
        let written = |csv: &Path, name: &str| {
            let i = import(csv, None, &none()).unwrap();
            let mut w = WrittenBytes::of(&dir, name, &i.profile, &mut Held(&i.profile));
            let device_csv = Path::new(crate::csv::FILE_NAME);
            let rows = w.files.get_mut(device_csv).expect("a device CSV");
            let text = String::from_utf8(std::mem::take(rows)).unwrap();
            let without_timer_id = text.lines().map(|l| {
                let mut cells: Vec<&str> = l.split(',').collect();
                if cells.len() > 4 {
                    cells.remove(4);
                }
                cells.join(",") + "\n"
            });
            *rows = without_timer_id.collect::<String>().into_bytes();
            w
        };
        let want = written(&grouped, "grouped");
        assert!(want.files.len() >= 10, "{:?}", want.files.keys());
        written(&interleaved, "interleaved").assert_is(&want, "interleaved");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The fixture's device CSV with its rings' rows interleaved (round robin), beside it.
    fn interleave(dir: &Path, csv: &Path) -> std::path::PathBuf {
        let text = std::fs::read_to_string(csv).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.by_ref().take(2).collect();
        let mut rings: Vec<(String, Vec<&str>)> = Vec::new();
        for l in lines {
            let key = l.splitn(5, ',').take(4).collect::<Vec<_>>().join(",");
            match rings.iter_mut().find(|(k, _)| *k == key) {
                Some((_, rows)) => rows.push(l),
                None => rings.push((key, vec![l])),
            }
        }
        assert!(rings.len() >= 3, "{} rings", rings.len());
        let mut mixed: Vec<&str> = head;
        for i in 0..rings.iter().map(|r| r.1.len()).max().unwrap() {
            mixed.extend(rings.iter().filter_map(|(_, rows)| rows.get(i)));
        }
        let interleaved = dir.join("interleaved.csv");
        std::fs::write(&interleaved, mixed.join("\n") + "\n").unwrap();
        interleaved
    }

    /// Issue 41: a device log's long rings are given to the outputs in pieces (its rows
    /// read as they come, after the scout's reading for the long zones), and every output
    /// file, issue and brief is the one the held import writes, byte for byte: rows grouped
    /// by ring and interleaved, with windows that hold one ring or several, windows of long
    /// zones and pieces of a record and more.
    #[test]
    fn a_device_logs_rings_in_pieces_write_what_the_held_import_writes() {
        use crate::outputs::WrittenBytes;
        use crate::ring_pieces::Sizes;
        use crate::ring_source::{Held, RingSource};
        let (dir, grouped) = fixture_csv("import-pieces", &fixture::readout(), 1000);
        let interleaved = interleave(&dir, &grouped);
        let none = crate::inputs::Inputs::none;
        for (shape, csv) in [("grouped", &grouped), ("interleaved", &interleaved)] {
            let held = import(csv, None, &none()).unwrap();
            let whole = WrittenBytes::of(
                &dir,
                &format!("{shape}-whole"),
                &held.profile,
                &mut Held(&held.profile),
            );
            assert!(whole.files.len() >= 10, "{:?}", whole.files.keys());
            for (records, window, piece) in
                [(1, 1, 1), (1_000, 2, 3), (1, 64, 7), (1_000, 5, 1_000)]
            {
                let (streamed, mut source) = stream(csv, None, &none()).unwrap();
                source.window_records = records;
                source.sizes = Sizes {
                    long_ring: 1,
                    window,
                    cap: usize::MAX,
                    piece,
                };
                let long = (0..streamed.profile.ring_count())
                    .filter(|&i| source.long_zones(i).unwrap().is_some())
                    .count();
                assert_eq!(long, streamed.profile.ring_count(), "every ring is long");
                let name = format!("{shape}-{records}-{window}-{piece}");
                WrittenBytes::of(&dir, &name, &streamed.profile, &mut source)
                    .assert_is(&whole, &name);
            }
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Once the last ring is handed out, the second reading keeps no state of the file's
    /// rings (an entry per ring) while the outputs finish; a ring asked for again after that
    /// is read again and comes out the same.
    #[test]
    fn the_second_reading_frees_its_rings_after_the_last_and_can_read_again() {
        use crate::ring_source::RingSource;
        let (dir, csv) = fixture_csv("import-after-last", &fixture::readout(), 1000);
        let (streamed, mut source) = stream(&csv, None, &crate::inputs::Inputs::none()).unwrap();
        let n = streamed.profile.ring_count();
        assert!(n >= 2, "{n} rings");
        let first: Vec<String> = (0..n)
            .map(|i| format!("{:?}", source.ring(i).unwrap().records))
            .collect();
        assert!(source.pairing.rings.is_empty(), "rings kept after the last");
        assert!(source.records.is_empty());
        assert_eq!(source.readings, 1);
        for i in [0, n - 1] {
            let again = format!("{:?}", source.ring(i).unwrap().records);
            assert_eq!(again, first[i], "ring {i} read again");
        }
        assert!(source.readings >= 2, "{} readings", source.readings);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
