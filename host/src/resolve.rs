//! Binding decoded records to their site metadata.
//!
//! A record's site id means something only in the kernel image that wrote it. The chain is:
//! the record's run id (from the ring's latest `Run` record) -> the op with that run id on
//! that chip in the op log -> the kernel that op ran on this (tile, RISC) -> its ELF -> the
//! site table. Every break in the chain is an [`Issue`] with the number of records it
//! concerns; no record is dropped (the CSV shows unresolved ones as `unresolved-site-<id>`).
//! ELFs are loaded once per path.

use crate::decode::{RecordKind, Records, NO_RUN};
use crate::elf::KernelElf;
use crate::issue::Issue;
use crate::oplog::OpLog;
use crate::readout::{Readout, RingId};
use crate::sites::{SiteKind, SiteMeta, SiteTable};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The site tables of one ring, per run id.
#[derive(Clone, Debug, Default)]
pub struct RingSites {
    by_run: Vec<(u32, Arc<SiteTable>)>,
}

impl RingSites {
    /// The site table of the kernel that ran `run` on this ring.
    #[inline]
    pub fn table(&self, run: u32) -> Option<&SiteTable> {
        self.by_run.iter().find(|(r, _)| *r == run).map(|(_, t)| &**t)
    }

    #[inline]
    pub fn site(&self, run: u32, id: u16) -> Option<&SiteMeta> {
        self.table(run)?.get(id)
    }
}

/// Site tables for every ring of a readout (same order as `Readout::rings`).
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    pub rings: Vec<RingSites>,
    pub issues: Vec<Issue>,
    /// Site-carrying records (zones, events, data, sums) bound to metadata, and not.
    pub resolved: u64,
    pub unresolved: u64,
}

impl Resolution {
    /// Every ring and run uses `table` (an in-process consumer that knows its one kernel,
    /// e.g. the host simulator's `Sim::sites`).
    pub fn uniform(readout: &Readout, table: Arc<SiteTable>) -> Resolution {
        let mut res = Resolution::default();
        for ring in &readout.rings {
            let mut sites = RingSites::default();
            for run in runs(&ring.records) {
                sites.by_run.push((run, table.clone()));
            }
            let (ok, bad) = count_sites(&ring.records, &sites);
            res.resolved += ok;
            res.unresolved += bad;
            res.rings.push(sites);
        }
        res
    }

    #[inline]
    pub fn site(&self, ring: usize, run: u32, id: u16) -> Option<&SiteMeta> {
        self.rings.get(ring)?.site(run, id)
    }
}

/// Whether a record kind carries a site id.
pub fn has_site(kind: RecordKind) -> bool {
    matches!(kind, RecordKind::Zone | RecordKind::ValueZone | RecordKind::Event | RecordKind::Data | RecordKind::Sum)
}

/// The site kind a record kind must have.
pub fn site_kind(kind: RecordKind) -> Option<SiteKind> {
    Some(match kind {
        RecordKind::Zone => SiteKind::Zone,
        RecordKind::ValueZone => SiteKind::ValueZone,
        RecordKind::Event => SiteKind::Event,
        RecordKind::Data => SiteKind::Data,
        RecordKind::Sum => SiteKind::Sum,
        _ => return None,
    })
}

/// Distinct run ids of a ring's records, in order of appearance.
fn runs(r: &Records) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for &run in &r.run {
        if out.last() != Some(&run) && !out.contains(&run) {
            out.push(run);
        }
    }
    out
}

fn count_sites(r: &Records, sites: &RingSites) -> (u64, u64) {
    let (mut ok, mut bad) = (0, 0);
    for i in 0..r.len() {
        if has_site(r.kind[i]) {
            if sites.site(r.run[i], r.site[i]).is_some() {
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
    elfs: HashMap<PathBuf, Result<Arc<KernelElf>, String>>,
}

impl<'a> Resolver<'a> {
    pub fn new(oplog: &'a OpLog) -> Resolver<'a> {
        Resolver { oplog, elfs: HashMap::new() }
    }

    fn load(&mut self, path: PathBuf) -> Result<Arc<KernelElf>, String> {
        self.elfs.entry(path.clone()).or_insert_with(|| KernelElf::load(&path).map(Arc::new).map_err(|e| e.to_string())).clone()
    }

    /// Binds every ring's records of `readout` to site tables.
    pub fn resolve(&mut self, readout: &Readout) -> Resolution {
        let mut res = Resolution::default();
        for ring in &readout.rings {
            let sites = self.ring(ring.id, &ring.records, readout, &mut res.issues);
            let (ok, bad) = count_sites(&ring.records, &sites);
            res.resolved += ok;
            res.unresolved += bad;
            res.rings.push(sites);
        }
        res
    }

    fn ring(&mut self, id: RingId, records: &Records, readout: &Readout, issues: &mut Vec<Issue>) -> RingSites {
        let at = Some(id.location());
        let mut sites = RingSites::default();
        for run in runs(records) {
            let n = (0..records.len()).filter(|&i| records.run[i] == run && has_site(records.kind[i])).count() as u64;
            if run == NO_RUN {
                if n > 0 {
                    issues.push(
                        Issue::error(at, format!("{n} record(s) before any Run record: their kernel is unknown"))
                            .with_count(n),
                    );
                }
                continue;
            }
            let Some(op) = self.oplog.op(id.chip, run) else {
                issues.push(
                    Issue::error(
                        at,
                        format!(
                            "run id {run} is not in op log {} (device {}): {n} record(s) cannot be named",
                            self.oplog.path.display(),
                            id.chip
                        ),
                    )
                    .with_count(n),
                );
                continue;
            };
            let Some(kernel) = op.kernel_for(id.tile, id.risc) else {
                issues.push(
                    Issue::error(
                        at,
                        format!(
                            "op {} (run {run}) names no kernel for {} on tile {}: {n} record(s) cannot be named",
                            op.op_code, id.risc, id.tile
                        ),
                    )
                    .with_count(n),
                );
                continue;
            };
            let path = self.oplog.resolve_path(&kernel.elf);
            let elf = match self.load(path) {
                Ok(e) => e,
                Err(e) => {
                    issues.push(Issue::error(at, format!("run {run}: {e}; {n} record(s) cannot be named")).with_count(n));
                    continue;
                }
            };
            if elf.risc != id.risc || elf.arch != readout.geometry.arch {
                issues.push(
                    Issue::error(
                        at,
                        format!(
                            "run {run}: kernel ELF {} was linked for {} {}, but these records came from {} {}",
                            elf.path.display(),
                            elf.arch,
                            elf.risc,
                            readout.geometry.arch,
                            id.risc
                        ),
                    )
                    .with_count(n),
                );
                continue;
            }
            sites.by_run.push((run, elf.sites.clone()));
            self.check_sites(at, run, &elf, records, issues);
        }
        sites
    }

    /// Ids missing from the ELF, or of the wrong kind: the ELF is not the one that ran.
    fn check_sites(&self, at: Option<crate::Location>, run: u32, elf: &KernelElf, r: &Records, issues: &mut Vec<Issue>) {
        let (mut missing, mut wrong_kind) = (0u64, 0u64);
        let mut example = None;
        for i in (0..r.len()).filter(|&i| r.run[i] == run) {
            let Some(want) = site_kind(r.kind[i]) else { continue };
            match elf.sites.get(r.site[i]) {
                None => {
                    missing += 1;
                    example.get_or_insert(r.site[i]);
                }
                Some(m) if m.kind != want => wrong_kind += 1,
                Some(_) => {}
            }
        }
        if missing > 0 {
            issues.push(
                Issue::error(
                    at,
                    format!(
                        "run {run}: {missing} record(s) carry site ids that kernel ELF {} does not define (e.g. {:#x}): \
                         is it the image that ran?",
                        elf.path.display(),
                        example.unwrap_or(0)
                    ),
                )
                .with_count(missing),
            );
        }
        if wrong_kind > 0 {
            // An error: those records would be written under the wrong name.
            issues.push(
                Issue::error(
                    at,
                    format!(
                        "run {run}: {wrong_kind} record(s) do not match the kind of their site in {} (e.g. an event \
                         recorded at a zone site), so their names would be wrong: is it the image that ran?",
                        elf.path.display()
                    ),
                )
                .with_count(wrong_kind),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;
    use crate::testing::{site_json, temp_dir, write_kernel_elf, ElfSpec};
    use riscv_linker::Risc;

    /// The fixture's sites with `wait` (a sum zone on the device) declared as `kind`.
    fn kernels_with_wait_as(kind: &str) -> OpLog {
        let dir = temp_dir("resolve-kinds");
        let mut sites: Vec<String> = fixture::sites().iter().map(|(_, m)| site_json(m.kind.name(), &m.name, m.line)).collect();
        sites[fixture::site::WAIT as usize] = site_json(kind, "wait", 14);
        std::fs::create_dir_all(dir.join("kernels")).unwrap();
        for risc in Risc::ALL {
            write_kernel_elf(&dir.join("kernels").join(risc.ident()), &ElfSpec::kernel(fixture::ARCH, risc, sites.clone())).unwrap();
        }
        OpLog { path: dir.join("ops.jsonl"), entries: fixture::oplog().entries }
    }

    #[test]
    fn records_of_the_wrong_kind_for_their_site_are_an_error_with_a_count() {
        let r = fixture::readout();
        let good = Resolver::new(&kernels_with_wait_as("sum")).resolve(&r);
        assert!(good.issues.is_empty(), "{:?}", good.issues);
        let bad = Resolver::new(&kernels_with_wait_as("data")).resolve(&r);
        let wrong: Vec<&Issue> = bad.issues.iter().filter(|i| i.to_string().contains("do not match the kind")).collect();
        // One sum record per ring and run: 2 tiles x 5 RISCs, each ring in each of its runs.
        assert_eq!(wrong.len(), r.rings.len() * 3, "{:?}", bad.issues);
        assert!(wrong.iter().all(|i| i.is_error() && i.count == 1), "{wrong:?}");
    }
}
