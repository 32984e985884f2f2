//! Binding decoded records to their site metadata.
//!
//! A record's site id means something only in the kernel image that wrote it. The chain is:
//! the record's run id (from the ring's latest `Run` record) -> the op with that run id on
//! that chip in the op log -> the kernel that op ran on this (tile, RISC) -> its ELF -> the
//! site table. Every break in the chain is an [`Issue`] with the number of records it
//! concerns; no record is dropped (the CSV shows unresolved ones as `unresolved-site-<id>`).
//! ELFs are loaded once per path.
//!
//! The work is linear in records and op-log entries: ops are found by (device, run id) in
//! an index built once, each ring's records are grouped by run in one pass, and a ring's
//! site tables are found by binary search (a ring drained over a long capture holds many
//! runs; a scan per run or per record over them was quadratic).

use crate::decode::{RecordKind, Records, NO_RUN};
use crate::elf::KernelElf;
use crate::issue::Issue;
use crate::oplog::{OpLog, OpRecord};
use crate::readout::{Readout, RingId, RingReport};
use crate::sites::{SiteKind, SiteMeta, SiteTable};
use riscv_linker::Arch;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// The site tables of one ring, per run id.
///
/// Held as spans of consecutive run ids that ran the same table (one `Arc`): a device log
/// names every op's run on every ring with the one table of its sites, and a ring held one
/// entry (16 bytes) per run, 5 KB an op of 64 tiles (issue 41). A span covers only the
/// run ids inserted, so a run the ring never ran still has no table.
#[derive(Clone, Debug, Default)]
pub struct RingSites {
    /// Sorted by run id, disjoint; two spans that touch hold different tables.
    spans: Vec<RunSpan>,
}

/// Run ids `first..=last` ran `table`.
#[derive(Clone, Debug)]
struct RunSpan {
    first: u32,
    last: u32,
    table: Arc<SiteTable>,
}

impl RingSites {
    /// The site table of every kernel this ring ran, in run order (a table that ran
    /// consecutive runs once).
    pub(crate) fn tables(&self) -> impl Iterator<Item = &Arc<SiteTable>> {
        self.spans.iter().map(|s| &s.table)
    }

    /// The site table of the kernel that ran `run` on this ring.
    #[inline]
    pub fn table(&self, run: u32) -> Option<&SiteTable> {
        let i = self.spans.partition_point(|s| s.last < run);
        let s = self.spans.get(i)?;
        (s.first <= run).then_some(&*s.table)
    }

    /// Sets the table of `run`. Room grows 1, 2, 4, ...: most rings run one kernel, where
    /// a `Vec`'s first insert makes room for four (48 bytes a ring held for nothing).
    pub(crate) fn insert(&mut self, run: u32, table: Arc<SiteTable>) {
        let mut i = self.spans.partition_point(|s| s.last < run);
        if let Some(s) = self.spans.get(i).filter(|s| s.first <= run) {
            if Arc::ptr_eq(&s.table, &table) {
                return;
            }
            // Split the span around `run`.
            let s = self.spans.remove(i);
            if s.first < run {
                self.put(i, s.first, run - 1, s.table.clone());
                i += 1;
            }
            if run < s.last {
                self.put(i, run + 1, s.last, s.table);
            }
        }
        self.put(i, run, run, table);
        // Join the neighbours that touch it and ran the same table.
        if i + 1 < self.spans.len() {
            let (a, b) = (&self.spans[i], &self.spans[i + 1]);
            if a.last + 1 == b.first && Arc::ptr_eq(&a.table, &b.table) {
                self.spans[i].last = self.spans.remove(i + 1).last;
            }
        }
        if i > 0 {
            let (a, b) = (&self.spans[i - 1], &self.spans[i]);
            if a.last + 1 == b.first && Arc::ptr_eq(&a.table, &b.table) {
                self.spans[i - 1].last = self.spans.remove(i).last;
            }
        }
    }

    /// Puts a span at `i`.
    fn put(&mut self, i: usize, first: u32, last: u32, table: Arc<SiteTable>) {
        crate::util::vec::room_for_one(&mut self.spans);
        self.spans.insert(i, RunSpan { first, last, table });
    }

    /// Metadata of site `id` in the kernel that ran `run` on this ring (`None`: unresolved).
    #[inline]
    pub fn site(&self, run: u32, id: u16) -> Option<&SiteMeta> {
        self.table(run)?.get(id)
    }
}

/// Site tables for every ring of a readout (same order as `Readout::rings`).
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    /// One per ring, index for index with `Readout::rings`.
    pub rings: Vec<RingSites>,
    /// Breaks in the chain (records before any `Run` record, a run id not in the op log, no
    /// kernel for a core, an unusable or mismatched ELF, unknown site ids), each with the
    /// number of records it concerns.
    pub issues: Vec<Issue>,
    /// Site-carrying records (zones, events, data, sums) bound to metadata.
    pub resolved: u64,
    /// Site-carrying records left without metadata (shown as `unresolved-site-<id>`).
    pub unresolved: u64,
}

impl Resolution {
    /// Every ring and run uses `table` (an in-process consumer that knows its one kernel,
    /// e.g. the host simulator's `Sim::sites`).
    pub fn uniform(readout: &Readout, table: Arc<SiteTable>) -> Resolution {
        let mut res = Resolution::default();
        for ring in &readout.rings {
            let mut sites = RingSites::default();
            for (run, _) in runs(&ring.records) {
                sites.insert(run, table.clone());
            }
            let (ok, bad) = count_sites(&ring.records, &sites);
            res.resolved += ok;
            res.unresolved += bad;
            res.rings.push(sites);
        }
        res
    }

    /// No ring has site metadata (no op log): every site-carrying record is unresolved.
    pub fn unresolved(readout: &Readout) -> Resolution {
        let mut res = Resolution::default();
        for ring in &readout.rings {
            res.add_unresolved(ring);
        }
        res
    }

    /// The next ring of a readout read ring by ring, with no site metadata.
    pub(crate) fn add_unresolved(&mut self, ring: &RingReport) {
        self.begin_unresolved();
        self.add_unresolved_records(&ring.records);
    }

    /// The next ring of a readout read ring by ring, with no site metadata, its records to
    /// come a piece at a time ([`Resolution::add_unresolved_records`]).
    pub(crate) fn begin_unresolved(&mut self) {
        self.rings.push(RingSites::default());
    }

    /// Records of the last ring added without site metadata, `r` (a piece of it).
    pub(crate) fn add_unresolved_records(&mut self, r: &Records) {
        self.unresolved += r.kind().iter().filter(|&&k| has_site(k)).count() as u64;
    }

    /// The metadata of site `id` of run `run` on ring `ring`, when known.
    #[inline]
    pub fn site(&self, ring: usize, run: u32, id: u16) -> Option<&SiteMeta> {
        self.rings.get(ring)?.site(run, id)
    }
}

/// Whether a record kind carries a site id.
pub(crate) fn has_site(kind: RecordKind) -> bool {
    matches!(
        kind,
        RecordKind::Zone
            | RecordKind::ValueZone
            | RecordKind::Event
            | RecordKind::Data
            | RecordKind::Sum
    )
}

/// The site kind a record kind must have.
pub(crate) fn site_kind(kind: RecordKind) -> Option<SiteKind> {
    Some(match kind {
        RecordKind::Zone => SiteKind::Zone,
        RecordKind::ValueZone => SiteKind::ValueZone,
        RecordKind::Event => SiteKind::Event,
        RecordKind::Data => SiteKind::Data,
        RecordKind::Sum => SiteKind::Sum,
        _ => return None,
    })
}

/// Distinct run ids of a ring's records in order of appearance, each with the spans of
/// its records (index ranges, in order): one pass. A ring changes run at a launch, not
/// between records, so this holds a span per change (it held an index per record, 8 bytes
/// each: 134 MB of a 16 M-zone ring read by `tracy`, its peak, issue 41).
fn runs(r: &Records) -> Vec<(u32, Vec<Range<usize>>)> {
    let mut out: Vec<(u32, Vec<Range<usize>>)> = Vec::new();
    let mut position: HashMap<u32, usize> = HashMap::new();
    let mut last: Option<(u32, usize)> = None;
    for (i, run) in r.runs().enumerate() {
        match last {
            Some((l, k)) if l == run => {
                if let Some(span) = out[k].1.last_mut() {
                    span.end = i + 1;
                }
            }
            _ => {
                let k = *position.entry(run).or_insert_with(|| {
                    out.push((run, Vec::new()));
                    out.len() - 1
                });
                out[k].1.push(i..i + 1);
                last = Some((run, k));
            }
        }
    }
    work(r.len());
    out
}

/// The records of spans [`runs`] gave, in order.
#[cfg(test)]
fn records_in(spans: &[Range<usize>]) -> impl Iterator<Item = usize> + '_ {
    spans.iter().flat_map(Range::clone)
}

/// Counts records and op-log entries looked at, in tests: the work must stay linear.
#[cfg(test)]
fn work(n: usize) {
    tests::WORK.with(|w| w.set(w.get() + n as u64));
}

#[cfg(not(test))]
#[inline(always)]
fn work(_: usize) {}

fn count_sites(r: &Records, sites: &RingSites) -> (u64, u64) {
    work(r.len());
    let (mut ok, mut bad) = (0, 0);
    for i in 0..r.len() {
        if has_site(r.kind[i]) {
            if sites.site(r.run_at(i), r.site[i]).is_some() {
                ok += 1;
            } else {
                bad += 1;
            }
        }
    }
    (ok, bad)
}

/// Resolves readouts against an op log, caching loaded ELFs across calls.
pub struct Resolver<'a> {
    oplog: &'a OpLog,
    /// The op of each (device, run id): the first in the log, as [`OpLog::op`] finds it.
    ops: HashMap<(u32, u32), &'a OpRecord>,
    elfs: HashMap<PathBuf, Result<Arc<KernelElf>, String>>,
}

impl<'a> Resolver<'a> {
    /// A resolver for `oplog`, with its (device, run id) index built and no ELF loaded yet.
    pub fn new(oplog: &'a OpLog) -> Resolver<'a> {
        let mut ops = HashMap::new();
        for op in oplog.ops() {
            ops.entry((op.device, op.run_id)).or_insert(op);
        }
        work(oplog.entries.len());
        Resolver {
            oplog,
            ops,
            elfs: HashMap::new(),
        }
    }

    fn load(&mut self, path: PathBuf) -> Result<Arc<KernelElf>, String> {
        self.elfs
            .entry(path.clone())
            .or_insert_with(|| {
                KernelElf::load(&path, &self.oplog.inputs)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Binds every ring's records of `readout` to site tables.
    pub fn resolve(&mut self, readout: &Readout) -> Resolution {
        let mut res = Resolution::default();
        for ring in &readout.rings {
            self.resolve_ring(ring, readout.geometry.arch, &mut res);
        }
        res
    }

    /// Binds the records of `ring`, the next ring of a readout of `arch` read ring by ring,
    /// into `res` (as [`Resolver::resolve`] does for each ring).
    pub(crate) fn resolve_ring(&mut self, ring: &RingReport, arch: Arch, res: &mut Resolution) {
        let mut r = self.begin_ring(ring.id, arch, res);
        self.add_records(&mut r, &ring.records, res);
        self.end_ring(r, res);
    }

    /// The next ring of a readout of `arch` read ring by ring, ring `id`, its records to
    /// come a piece at a time ([`Resolver::add_records`], then [`Resolver::end_ring`]): its
    /// site tables go into `res` as each run is first seen.
    pub(crate) fn begin_ring(
        &mut self,
        id: RingId,
        arch: Arch,
        res: &mut Resolution,
    ) -> RingResolve {
        res.rings.push(RingSites::default());
        RingResolve {
            id,
            arch,
            runs: Vec::new(),
            position: HashMap::new(),
            last: None,
        }
    }

    /// The ring's next records, `r`.
    pub(crate) fn add_records(
        &mut self,
        ring: &mut RingResolve,
        r: &Records,
        res: &mut Resolution,
    ) {
        work(r.len());
        for (i, run) in r.runs().enumerate() {
            let k = match ring.last {
                Some((last, k)) if last == run => k,
                _ => {
                    let k = match ring.position.get(&run) {
                        Some(&k) => k,
                        None => {
                            let fate = self.fate(ring.id, ring.arch, run);
                            if let (RunFate::Named(elf), Some(sites)) =
                                (&fate, res.rings.last_mut())
                            {
                                sites.insert(run, elf.sites.clone());
                            }
                            ring.runs.push((run, fate, RunCounts::default()));
                            ring.position.insert(run, ring.runs.len() - 1);
                            ring.runs.len() - 1
                        }
                    };
                    ring.last = Some((run, k));
                    k
                }
            };
            let Some(want) = site_kind(r.kind[i]) else {
                continue;
            };
            let (_, fate, counts) = &mut ring.runs[k];
            counts.sited += 1;
            let site = r.site[i];
            let RunFate::Named(elf) = fate else {
                res.unresolved += 1;
                continue;
            };
            // Ids missing from the ELF, or of the wrong kind: the ELF is not the one that ran.
            match elf.sites.get(site) {
                None => {
                    res.unresolved += 1;
                    counts.missing += 1;
                    counts.example.get_or_insert(site);
                }
                Some(m) => {
                    res.resolved += 1;
                    counts.wrong_kind += u64::from(m.kind != want);
                }
            }
        }
    }

    /// The ring's end: each run's problems, in the order the runs were first seen.
    pub(crate) fn end_ring(&mut self, ring: RingResolve, res: &mut Resolution) {
        let at = Some(ring.id.location());
        let id = ring.id;
        for (run, fate, c) in ring.runs {
            let n = c.sited;
            let what = match fate {
                RunFate::Before if n > 0 => {
                    format!("{n} record(s) before any Run record: their kernel is unknown")
                }
                RunFate::Before => continue,
                RunFate::NotInLog => format!(
                    "run id {run} is not in op log {} (device {}): {n} record(s) cannot be named",
                    self.oplog.path.display(),
                    id.chip
                ),
                RunFate::NoKernel { op } => format!(
                    "op {op} (run {run}) names no kernel for {} on tile {}: {n} record(s) cannot be named",
                    id.risc, id.tile
                ),
                RunFate::Unusable(e) => format!("run {run}: {e}; {n} record(s) cannot be named"),
                RunFate::Mismatch(elf) => format!(
                    "run {run}: kernel ELF {} was linked for {} {}, but these records came from {} {}",
                    elf.path.display(),
                    elf.arch,
                    elf.risc,
                    ring.arch,
                    id.risc
                ),
                RunFate::Named(elf) => {
                    site_issues(at, run, &elf, &c, &mut res.issues);
                    continue;
                }
            };
            res.issues.push(Issue::error(at, what).with_count(n));
        }
    }

    /// What names the records of `run` on ring `id` of a readout of `arch` (decided once a
    /// ring and run, when the run is first seen).
    fn fate(&mut self, id: RingId, arch: Arch, run: u32) -> RunFate {
        if run == NO_RUN {
            return RunFate::Before;
        }
        let Some(&op) = self.ops.get(&(id.chip, run)) else {
            return RunFate::NotInLog;
        };
        let Some(kernel) = op.kernel_for(id.tile, id.risc) else {
            return RunFate::NoKernel {
                op: op.op_code.clone(),
            };
        };
        let path = self.oplog.resolve_path(&kernel.elf);
        match self.load(path) {
            Err(e) => RunFate::Unusable(e),
            Ok(elf) if elf.risc != id.risc || elf.arch != arch => RunFate::Mismatch(elf),
            Ok(elf) => RunFate::Named(elf),
        }
    }
}

/// One ring being resolved a piece at a time ([`Resolver::begin_ring`]): each run's fate,
/// in the order the runs were first seen, and the counts its problems give at the end.
pub(crate) struct RingResolve {
    id: RingId,
    arch: Arch,
    runs: Vec<(u32, RunFate, RunCounts)>,
    position: HashMap<u32, usize>,
    /// The last record's run and its place in `runs`.
    last: Option<(u32, usize)>,
}

/// What names a run's records on a ring.
enum RunFate {
    /// Records before any `Run` record.
    Before,
    /// The run id is not in the op log.
    NotInLog,
    /// The run's op names no kernel for the ring's core.
    NoKernel { op: String },
    /// The kernel ELF could not be loaded.
    Unusable(String),
    /// The kernel ELF was linked for another core or arch.
    Mismatch(Arc<KernelElf>),
    /// The kernel ELF whose sites name the records.
    Named(Arc<KernelElf>),
}

/// A run's site-carrying records on a ring, and those its ELF lacks or has of another kind.
#[derive(Default)]
struct RunCounts {
    sited: u64,
    missing: u64,
    wrong_kind: u64,
    /// The first id the ELF lacks.
    example: Option<u16>,
}

/// Ids missing from the ELF, or of the wrong kind: the ELF is not the one that ran.
fn site_issues(
    at: Option<crate::Location>,
    run: u32,
    elf: &KernelElf,
    c: &RunCounts,
    issues: &mut Vec<Issue>,
) {
    if c.missing > 0 {
        issues.push(
            Issue::error(
                at,
                format!(
                    "run {run}: {} record(s) carry site ids that kernel ELF {} does not define (e.g. {:#x}): \
                     is it the image that ran?",
                    c.missing,
                    elf.path.display(),
                    c.example.unwrap_or(0)
                ),
            )
            .with_count(c.missing),
        );
    }
    if c.wrong_kind > 0 {
        // An error: those records would be written under the wrong name.
        issues.push(
            Issue::error(
                at,
                format!(
                    "run {run}: {} record(s) do not match the kind of their site in {} (e.g. an event \
                     recorded at a zone site), so their names would be wrong: is it the image that ran?",
                    c.wrong_kind,
                    elf.path.display()
                ),
            )
            .with_count(c.wrong_kind),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture;
    use crate::testing::{site_json, write_kernel_elf, ElfSpec};
    use riscv_linker::Risc;

    thread_local! {
        /// Records and op-log entries looked at by this thread's resolves (see `work`).
        pub(super) static WORK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// The fixture's sites with `wait` (a sum zone on the device) declared as `kind`: the
    /// op log, and the folder of its kernels (removed when dropped).
    fn kernels_with_wait_as(kind: &str) -> (tempfile::TempDir, OpLog) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut sites: Vec<String> = fixture::sites()
            .iter()
            .map(|(_, m)| site_json(m.kind.name(), &m.name, m.line))
            .collect();
        sites[fixture::site::WAIT as usize] = site_json(kind, "wait", 14);
        std::fs::create_dir_all(dir.join("kernels")).unwrap();
        for risc in Risc::ALL {
            write_kernel_elf(
                &dir.join("kernels").join(risc.ident()),
                &ElfSpec::kernel(fixture::ARCH, risc, sites.clone()),
            )
            .unwrap();
        }
        let log = OpLog {
            path: dir.join("ops.jsonl"),
            entries: fixture::oplog().entries,
            inputs: crate::inputs::Inputs::none(),
        };
        (tmp, log)
    }

    #[test]
    fn records_of_the_wrong_kind_for_their_site_are_an_error_with_a_count() {
        let r = fixture::readout();
        let (_sum, sum) = kernels_with_wait_as("sum");
        let good = Resolver::new(&sum).resolve(&r);
        assert!(good.issues.is_empty(), "{:?}", good.issues);
        let (_data, data) = kernels_with_wait_as("data");
        let bad = Resolver::new(&data).resolve(&r);
        let wrong: Vec<&Issue> = bad
            .issues
            .iter()
            .filter(|i| i.to_string().contains("do not match the kind"))
            .collect();
        // One sum record per ring and run: 2 tiles x 5 RISCs, each ring in each of its runs.
        assert_eq!(wrong.len(), r.rings.len() * 3, "{:?}", bad.issues);
        assert!(
            wrong.iter().all(|i| i.is_error() && i.count == 1),
            "{wrong:?}"
        );
    }

    /// A run's records are its spans, in order, each run once in order of appearance, a
    /// run that comes back gaining a span (fails when a span is extended past a change).
    #[test]
    fn runs_are_spans_of_records() {
        let mut records = crate::decode::Records::new();
        for (i, run) in [5, 5, 7, 7, 7, 5, NO_RUN, 5, 5].into_iter().enumerate() {
            let at = 10 * i as u64;
            records.push(RecordKind::Event, 1, at, at, 0, 0, run);
        }
        let spans = runs(&records);
        let ends: Vec<(u32, Vec<(usize, usize)>)> = spans
            .iter()
            .map(|(run, s)| (*run, s.iter().map(|s| (s.start, s.end)).collect()))
            .collect();
        assert_eq!(
            ends,
            [
                (5, vec![(0, 2), (5, 6), (7, 9)]),
                (7, vec![(2, 5)]),
                (NO_RUN, vec![(6, 7)])
            ]
        );
        let of_5: Vec<usize> = records_in(&spans[0].1).collect();
        assert_eq!(of_5, [0, 1, 5, 7, 8]);
    }

    #[test]
    fn many_runs_and_ops_are_resolved_with_linear_work() {
        // One ring drained over a long capture: 3,000 runs, each an op of the log, and
        // 100,000 more ops in the log that match nothing. Finding each run's op by a scan of
        // the log, and each run's records by a scan of the ring, was quadratic.
        let (_dir, log) = kernels_with_wait_as("sum");
        let runs = 3_000u32;
        let mut r = fixture::readout();
        let mut records = crate::decode::Records::new();
        for run in 1..=runs {
            let at = 1_000 * run as u64;
            records.push(RecordKind::Run, 0, at, at, run as u64, 0, run);
            records.push(
                RecordKind::ValueZone,
                fixture::site::INNER,
                at + 1,
                at + 5,
                7,
                0,
                run,
            );
            records.push(
                RecordKind::Sum,
                fixture::site::WAIT,
                at + 6,
                at + 6,
                30,
                3,
                run,
            );
        }
        r.rings[0].records = records;
        let mut entries: Vec<_> = (1..=runs)
            .map(|run| crate::oplog::OpLogEntry::Op(fixture::op(run, "Op")))
            .collect();
        let mut ghost = fixture::op(0, "Ghost");
        for k in 0..100_000 {
            ghost.run_id = 1_000_000 + k;
            entries.push(crate::oplog::OpLogEntry::Op(ghost.clone()));
        }
        let log = OpLog {
            path: log.path,
            entries,
            inputs: log.inputs,
        };
        WORK.with(|w| w.set(0));
        let res = Resolver::new(&log).resolve(&r);
        assert!(
            res.issues.is_empty(),
            "{:?}",
            &res.issues[..res.issues.len().min(3)]
        );
        let records: usize = r.rings.iter().map(|x| x.records.len()).sum();
        // The other nine rings: 7 site records in each of the fixture's 3 runs; this one 2 per run.
        assert_eq!(
            (res.resolved, res.unresolved),
            (9 * 7 * 3 + 2 * runs as u64, 0)
        );
        assert_eq!(
            res.rings[0].table(runs).map(|t| t.len()),
            Some(fixture::sites().len())
        );
        assert!(res.rings[0].table(runs + 1).is_none());
        // Every entry once to index the log; each record a few times (grouped by run,
        // counted, checked against its ELF, its site looked up).
        let work = WORK.with(|w| w.get());
        let bound = log.entries.len() as u64 + 4 * records as u64;
        assert!(
            work <= bound,
            "{work} records and entries looked at, expected at most {bound}"
        );
    }

    /// The spans give every inserted run its table, in any order of insertion, and no
    /// table to a run never inserted; consecutive runs of one table are one span.
    #[test]
    fn a_rings_runs_keep_their_tables_in_spans() {
        let (a, b) = (
            Arc::new(SiteTable::default()),
            Arc::new(SiteTable::default()),
        );
        let mut s = RingSites::default();
        let mut want: std::collections::BTreeMap<u32, &Arc<SiteTable>> = Default::default();
        // Runs 1..=40 and 50..=60 of table a in a scrambled order, then b over some of
        // them: the middle of a span, its ends, and runs beside it.
        let mut order: Vec<u32> = (1..=40).chain(50..=60).collect();
        order.sort_by_key(|&r| (r * 17) % 61);
        for r in order {
            s.insert(r, a.clone());
            want.insert(r, &a);
        }
        assert_eq!(
            s.spans.len(),
            2,
            "{:?}",
            s.spans
                .iter()
                .map(|x| (x.first, x.last))
                .collect::<Vec<_>>()
        );
        for r in [20, 1, 40, 41, 50, 21, 20] {
            s.insert(r, b.clone());
            want.insert(r, &b);
        }
        s.insert(20, a.clone());
        want.insert(20, &a);
        for r in 0..70 {
            let got = s.table(r).map(|t| t as *const SiteTable);
            let expect = want.get(&r).map(|t| Arc::as_ptr(t));
            assert_eq!(got, expect, "run {r}");
        }
        // Disjoint, sorted, and no two touching spans of one table.
        for w in s.spans.windows(2) {
            assert!(w[0].last < w[1].first);
            assert!(!(w[0].last + 1 == w[1].first && Arc::ptr_eq(&w[0].table, &w[1].table)));
        }
        // b 1, a 2..=20 (20 went back to a), b 21, a 22..=39, b 40..=41, b 50, a 51..=60.
        let spans: Vec<(u32, u32, bool)> = s
            .spans
            .iter()
            .map(|x| (x.first, x.last, Arc::ptr_eq(&x.table, &a)))
            .collect();
        assert_eq!(
            spans,
            [
                (1, 1, false),
                (2, 20, true),
                (21, 21, false),
                (22, 39, true),
                (40, 41, false),
                (50, 50, false),
                (51, 60, true)
            ]
        );
    }
}
