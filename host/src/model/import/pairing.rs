//! Rows to records: the one loop both passes of an import run ([`super`]). Rows are
//! grouped into rings per (chip, core, RISC) in the order the file first lists them;
//! `ZONE_START` opens a zone on its ring's stack, `ZONE_END` closes the innermost open zone
//! of the same name and run into one zone record; the point rows are records of their own;
//! the first row of a run on a ring also gives the ring a `Run` record. Sites are interned
//! as rows show them. What a row makes is handed back ([`Pairing::row`]); the caller keeps
//! it (pass 2: the ring's records) or only its facts (pass 1).

use crate::decode::{RecordKind, NO_RUN};
use crate::error::{Error, Result};
use crate::readout::RingId;
use crate::sites::{SiteKind, SiteMeta, SiteTable};
use crate::tt_metal::device_log::{LogRow, RowType};
use riscv_linker::{NocCoord, Risc};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One record a row made, for ring [`Made::ring`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Made {
    pub ring: usize,
    pub kind: RecordKind,
    pub site: u16,
    pub start: u64,
    pub end: u64,
    pub value: u64,
    pub count: u32,
    pub run: u32,
}

/// An open zone on a ring's stack.
pub(super) struct Open {
    name: u32,
    pub site: u16,
    run: u32,
    start: u64,
    value: Option<u64>,
}

/// One ring: its identity, its rows so far, and while its rows are read its open zones and
/// runs (out of line: a ring handed out keeps 24 bytes, not 72; issue 41).
pub(super) struct RingState {
    pub id: RingId,
    /// Rows of the ring (modelled RISCs only).
    pub rows: u64,
    active: Option<Box<Active>>,
}

/// A ring's state while its rows are read.
struct Active {
    open: Vec<Open>,
    last_run: u32,
    /// Its runs, sorted (a `Vec`: most rings have one or a few, in order).
    runs: Vec<u32>,
}

impl RingState {
    /// Its open zones, innermost last.
    pub(super) fn open(&self) -> &[Open] {
        self.active.as_ref().map_or(&[], |a| &a.open)
    }

    /// Its runs, sorted.
    pub(super) fn runs(&self) -> &[u32] {
        self.active.as_ref().map_or(&[], |a| &a.runs)
    }

    fn active(&mut self) -> &mut Active {
        self.active.get_or_insert_with(|| {
            Box::new(Active {
                open: Vec::new(),
                last_run: NO_RUN,
                runs: Vec::new(),
            })
        })
    }
}

/// Distinct zone names and the sites (kind, file, line) under each: no allocation per row.
#[derive(Default)]
pub(super) struct Sites {
    names: FxHashMap<String, u32>,
    by_name: Vec<Vec<(SiteKind, String, u32, u16)>>,
    pub table: SiteTable,
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
    fn site(&mut self, row: &LogRow, kind: SiteKind) -> std::result::Result<(u32, u16), String> {
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
                counter: None,
            },
        )?;
        Ok((n, id))
    }
}

/// The pairing state of one pass over the device log, and what it counted.
pub(super) struct Pairing {
    path: PathBuf,
    pub sites: Sites,
    pub rings: Vec<RingState>,
    ring_of: FxHashMap<(u32, u8, u8, Risc), usize>,
    last_ring: Option<((u32, u8, u8, Risc), usize)>,
    /// First and last time of the rows per (chip, run).
    pub spans: BTreeMap<(u32, u32), (u64, u64)>,
    /// Rows of RISCs ttprof does not model, per RISC name.
    pub(crate) other_riscs: BTreeMap<String, u64>,
    /// Marker rows read.
    pub rows: u64,
    /// Zones made.
    pub zones: u64,
    /// `ZONE_END` rows without their start, and the first one's line.
    pub unmatched: (u64, usize),
    /// Zones ending before their start, and the first one's line.
    pub backwards: (u64, usize),
}

impl Pairing {
    /// Drops the rings' states (and the index finding them), once read: the counts and
    /// spans stay.
    pub(super) fn forget_rings(&mut self) {
        self.rings = Vec::new();
        self.ring_of = FxHashMap::default();
        self.last_ring = None;
    }

    /// Nothing read of the device log `path` yet.
    pub(super) fn new(path: &Path) -> Pairing {
        Pairing::with_rings(path, 0)
    }

    /// The same, with room for `rings` rings (a second reading knows how many the first
    /// found: no spare room from a growing vector's doubling, up to 16 MB for 300,000 rings).
    pub(super) fn with_rings(path: &Path, rings: usize) -> Pairing {
        Pairing {
            path: path.to_path_buf(),
            sites: Sites::default(),
            rings: Vec::with_capacity(rings),
            ring_of: FxHashMap::default(),
            last_ring: None,
            spans: BTreeMap::new(),
            other_riscs: BTreeMap::new(),
            rows: 0,
            zones: 0,
            unmatched: (0, 0),
            backwards: (0, 0),
        }
    }

    fn bad(&self, line: usize, what: String) -> Error {
        Error::BadFile {
            path: self.path.clone(),
            what: format!("line {line}: {what}"),
        }
    }

    /// Ring `ring` is complete (the second pass handed it out): its stack and runs are
    /// freed (a row of it after this is a changed file, which the caller reports).
    pub(super) fn release(&mut self, ring: usize) {
        if let Some(b) = self.rings.get_mut(ring) {
            b.active = None;
        }
    }

    /// One row: the records it makes go into `out` (at most two: a ring's `Run` record,
    /// then the row's own). Returns the row's ring (`None`: a RISC ttprof does not model).
    pub(super) fn row(&mut self, row: &LogRow, out: &mut Vec<Made>) -> Result<Option<usize>> {
        self.rows += 1;
        let Some(risc) = Risc::from_name(row.risc) else {
            *self.other_riscs.entry(row.risc.to_string()).or_default() += 1;
            return Ok(None);
        };
        let key = (row.chip, row.x, row.y, risc);
        let ri = match self.last_ring {
            Some((k, i)) if k == key => i,
            _ => {
                // The rows move to another ring: the one they leave keeps no stack while no
                // zone is open on it (rings listed one after another then hold none; a
                // stack of four open zones is 160 bytes a ring).
                if let Some((_, last)) = self.last_ring {
                    if let Some(a) = self.rings[last].active.as_mut() {
                        if a.open.is_empty() {
                            a.open = Vec::new();
                        }
                    }
                }
                let rings = &mut self.rings;
                let i = *self.ring_of.entry(key).or_insert_with(|| {
                    rings.push(RingState {
                        id: RingId {
                            chip: row.chip,
                            tile: NocCoord::new(row.x, row.y),
                            risc,
                        },
                        rows: 0,
                        active: None,
                    });
                    rings.len() - 1
                });
                self.last_ring = Some((key, i));
                i
            }
        };
        let run = row.run.unwrap_or(NO_RUN);
        if run != NO_RUN {
            let s = self
                .spans
                .entry((row.chip, run))
                .or_insert((row.time, row.time));
            *s = (s.0.min(row.time), s.1.max(row.time));
        }
        let b = &mut self.rings[ri];
        b.rows += 1;
        let made = |kind, site, start, end, value, count| Made {
            ring: ri,
            kind,
            site,
            start,
            end,
            value,
            count,
            run,
        };
        let a = b.active();
        if run != a.last_run {
            a.last_run = run;
            let new = match a.runs.binary_search(&run) {
                Ok(_) => false,
                Err(at) => {
                    a.runs.insert(at, run);
                    true
                }
            };
            if run != NO_RUN && new {
                out.push(made(RecordKind::Run, 0, row.time, row.time, run as u64, 0));
            }
        }
        let point = |p: &mut Pairing, kind: RecordKind, site: SiteKind, value: u64, count: u32| {
            let (_, id) = p.sites.site(row, site).map_err(|e| p.bad(row.line, e))?;
            Ok::<Made, Error>(made(kind, id, row.time, row.time, value, count))
        };
        let m = match row.kind {
            RowType::TsData => point(self, RecordKind::Data, SiteKind::Data, row.data, 0)?,
            RowType::TsEvent => point(self, RecordKind::Event, SiteKind::Event, 0, 0)?,
            RowType::ZoneTotal => {
                let count = row.meta_number("count").unwrap_or(1);
                let count = u32::try_from(count)
                    .map_err(|_| self.bad(row.line, format!("count {count} is above 2^32 - 1")))?;
                point(self, RecordKind::Sum, SiteKind::Sum, row.data, count)?
            }
            RowType::ZoneStart => {
                let value = row.meta_number("value");
                let kind = if value.is_some() {
                    SiteKind::ValueZone
                } else {
                    SiteKind::Zone
                };
                let (name, site) = self
                    .sites
                    .site(row, kind)
                    .map_err(|e| self.bad(row.line, e))?;
                self.rings[ri].active().open.push(Open {
                    name,
                    site,
                    run,
                    start: row.time,
                    value,
                });
                return Ok(Some(ri));
            }
            RowType::ZoneEnd => {
                let name = self.sites.names.get(row.name).copied();
                let b = self.rings[ri].active();
                let at =
                    name.and_then(|n| b.open.iter().rposition(|o| o.name == n && o.run == run));
                let Some(at) = at else {
                    self.unmatched.0 += 1;
                    if self.unmatched.1 == 0 {
                        self.unmatched.1 = row.line;
                    }
                    return Ok(Some(ri));
                };
                let o = b.open.remove(at);
                if row.time < o.start {
                    self.backwards.0 += 1;
                    if self.backwards.1 == 0 {
                        self.backwards.1 = row.line;
                    }
                    return Ok(Some(ri));
                }
                let (kind, value) = match o.value.or(row.meta_number("value")) {
                    Some(v) => (RecordKind::ValueZone, v),
                    None => (RecordKind::Zone, 0),
                };
                self.zones += 1;
                made(kind, o.site, o.start, row.time, value, 0)
            }
        };
        out.push(m);
        Ok(Some(ri))
    }
}
