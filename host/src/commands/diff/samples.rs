//! Each side of a comparison read into [`Samples`]: a `ttprof run` directory, a device log,
//! a snapshot or a device image (see the [module docs](super)).

use super::{DEVICE_CSV, EMULATOR_IMAGE, OPLOG, SNAPSHOT};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::oplog::OpLog;
use crate::profile::Profile;
use crate::timeline::MarkKind;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One zone's duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Device cycles.
    pub cycles: u64,
    /// Host ns.
    pub ns: f64,
}

/// The zones of one (op, zone name) a side keeps in full: past this many, a uniform sample
/// of this many (the count and totals still over every zone). Enough for the test and the
/// percentiles to be sharp, and memory that does not grow with the run (a 16 M-zone ring
/// held 256 MB of samples per side, more while they grew, and `diff` of two such runs ran
/// out of 1 GiB: issue 41).
pub const KEPT: usize = 1 << 16;

/// One (op, zone name)'s durations on one side: how many, their exact totals, and the
/// durations themselves, every one up to [`KEPT`], past that a uniform sample of [`KEPT`]
/// (reservoir sampling, its choices a fixed function of the zone's position: the same input
/// keeps the same sample, so an exact run compared with itself shows no change).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Durations {
    /// Zones.
    pub count: u64,
    /// Device cycles over every zone (128 bits: exact).
    pub total_cycles: u128,
    /// Host ns over every zone.
    pub total_ns: f64,
    /// The kept durations, in no particular order once sampled.
    kept: Vec<Sample>,
}

impl Durations {
    /// One more zone.
    pub fn push(&mut self, s: Sample) {
        self.count += 1;
        self.total_cycles += s.cycles as u128;
        self.total_ns += s.ns;
        if self.kept.len() < KEPT {
            self.kept.push(s);
            return;
        }
        // Algorithm R: the n-th zone replaces a kept one with probability KEPT / n.
        let j = ((crate::util::mix::mix(self.count) as u128 * self.count as u128) >> 64) as usize;
        if let Some(slot) = self.kept.get_mut(j) {
            *slot = s;
        }
    }

    /// The kept durations: every zone's unless [`Durations::is_sampled`].
    pub fn kept(&self) -> &[Sample] {
        &self.kept
    }

    /// Whether more zones were seen than kept.
    pub fn is_sampled(&self) -> bool {
        self.count > self.kept.len() as u64
    }
}

impl FromIterator<Sample> for Durations {
    fn from_iter<I: IntoIterator<Item = Sample>>(iter: I) -> Durations {
        let mut d = Durations::default();
        for s in iter {
            d.push(s);
        }
        d
    }
}

/// One sum zone record: a core's total over one launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SumSample {
    /// Device cycles over its measurements.
    pub total_cycles: u64,
    /// Measurements.
    pub count: u32,
    /// The total in host ns.
    pub ns: f64,
}

/// An op and a zone name: (op code, position among the ops of that code, from 1; zone).
pub type Key = (String, u32, String);

/// One side of a comparison: the zones' durations (every one, or a sample past [`KEPT`])
/// and every sum zone record per (op, zone name).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// What was read.
    pub source: String,
    /// Whether the run came from the deterministic emulator (see the module docs).
    pub exact: bool,
    /// Durations per (op, zone name).
    pub zones: BTreeMap<Key, Durations>,
    /// Sum zone records per (op, sum zone name).
    pub sums: BTreeMap<Key, Vec<SumSample>>,
    /// Problems found reading it (a zone end without its start, a record left out): each
    /// line names what and where.
    pub problems: Vec<String>,
}

/// Reads one side (see the module docs for what `path` may be), noting the files read in
/// `inputs`.
pub fn load(path: &Path, inputs: &Inputs) -> Result<Samples> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "read run to compare", e))?;
    if meta.is_dir() {
        let exact = path.join(EMULATOR_IMAGE).is_file();
        if path.join(SNAPSHOT).is_file() && path.join(OPLOG).is_file() {
            return from_file(&path.join(SNAPSHOT), Some(&path.join(OPLOG)), exact, inputs);
        }
        let csv = path.join(DEVICE_CSV);
        if !csv.is_file() {
            return Err(Error::BadFile {
                path: path.into(),
                what: format!(
                    "holds neither {SNAPSHOT} with {OPLOG} (a `ttprof run` output) nor {DEVICE_CSV} (a `ttprof report` \
                     or tt-metal output): nothing to compare"
                ),
            });
        }
        let names = match path.join(OPLOG) {
            p if p.is_file() => run_names(&OpLog::read(&p, inputs)?),
            _ => HashMap::new(),
        };
        let mut s = from_device_csv(&csv, &names, inputs)?;
        s.exact = exact;
        return Ok(s);
    }
    let oplog = path.parent().map(|d| d.join(OPLOG)).filter(|p| p.is_file());
    let beside_image = path
        .parent()
        .is_some_and(|d| d.join(EMULATOR_IMAGE).is_file());
    if crate::tt_metal::device_log::is_device_log(path) {
        let names = match &oplog {
            Some(p) => run_names(&OpLog::read(p, inputs)?),
            None => HashMap::new(),
        };
        let mut s = from_device_csv(path, &names, inputs)?;
        s.exact = beside_image;
        return Ok(s);
    }
    let exact =
        beside_image || crate::devmem::file_kind(path, inputs)? == crate::devmem::FileKind::Image;
    from_file(path, oplog.as_deref(), exact, inputs)
}

fn from_file(device: &Path, oplog: Option<&Path>, exact: bool, inputs: &Inputs) -> Result<Samples> {
    let log = oplog.map(|o| OpLog::read(o, inputs)).transpose()?;
    // Two readings: the model, then one ring's records at a time.
    let loaded = crate::pass::open(device, log, inputs)?;
    let mut rings = crate::pass::DeviceRings::new(&loaded.profile, loaded.memory.as_ref())?;
    let mut s = from_profile_rings(&loaded.profile, &mut rings)?;
    drop(rings);
    s.source = match oplog {
        Some(l) => format!("{} named by {}", loaded.memory.describe(), l.display()),
        None => format!("{} (no op log: sites unnamed)", loaded.memory.describe()),
    };
    s.exact = exact;
    Ok(s)
}

/// Each of `ops` ((chip, run id, op code), in program order) with its position among the
/// ops of its code, from 1.
pub(super) fn positions<'a>(
    ops: impl Iterator<Item = (u32, u32, &'a str)>,
) -> HashMap<(u32, u32), (String, u32)> {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut out = HashMap::new();
    for (chip, run, code) in ops {
        let k = seen.entry(code).or_default();
        *k += 1;
        out.entry((chip, run)).or_insert((code.to_string(), *k));
    }
    out
}

/// Op code and position per (device, run id), in the op log's order.
fn run_names(log: &OpLog) -> HashMap<(u32, u32), (String, u32)> {
    positions(log.ops().map(|o| (o.device, o.run_id, o.op_code.as_str())))
}

/// Every zone and sum zone record of `p` per (op, zone name); `exact` is left false (the
/// caller knows where the profile came from).
pub fn from_profile(p: &Profile) -> Samples {
    from_profile_rings(p, &mut crate::ring_source::Held(p))
        .expect("a profile's own rings are at hand")
}

/// [`from_profile`], each ring's records taken from `rings` (a profile built from passes;
/// a long ring comes in pieces where the source gives it so).
pub fn from_profile_rings(
    p: &Profile,
    rings: &mut dyn crate::ring_source::RingSource,
) -> Result<Samples> {
    let mut gather = Gather {
        samples: Samples {
            source: "profile".into(),
            ..Default::default()
        },
        ops: positions(p.ops.iter().map(|o| (o.chip, o.run, o.name.as_str()))),
    };
    crate::sink::drive_rings(p, rings, &mut [&mut gather])?;
    let mut s = gather.samples;
    s.problems = p
        .all_issues()
        .filter(|i| i.is_error())
        .map(|i| i.to_string())
        .collect();
    Ok(s)
}

/// The sink [`from_profile_rings`] drives: each view's zones and sum zones into samples
/// (nothing carried between the pieces of a ring: a zone is a sample on its own, and the
/// pieces' zones in turn are the ring's in its order).
struct Gather {
    samples: Samples,
    /// Op name and position per (chip, run).
    ops: HashMap<(u32, u32), (String, u32)>,
}

impl Gather {
    /// The (op name, position) of op `op` (run `run` when it has none).
    fn op_of(&self, p: &Profile, op: Option<u32>, run: u32) -> (String, u32) {
        match op.and_then(|i| p.ops.get(i as usize)) {
            Some(o) => self
                .ops
                .get(&(o.chip, o.run))
                .cloned()
                .unwrap_or_else(|| (o.name.clone(), 1)),
            None => (format!("run {run}"), 1),
        }
    }
}

impl crate::sink::Sink for Gather {
    fn takes_pieces(&self) -> bool {
        true
    }

    fn ring(&mut self, p: &Profile, view: &crate::profile::RingView) -> Result<()> {
        let chip = view.lane.chip;
        // Durations as exact differences of host times, not of the zones' `f64` ns (a ns
        // or more off from 2^53 ns on).
        let clock = p.timebase.tile_clock(chip, view.lane.tile);
        for z in &view.zones {
            let (op, k) = self.op_of(p, z.op, z.run);
            let zone = p.labels[z.site as usize].name.clone();
            let cycles = z.end_cycles.saturating_sub(z.start_cycles);
            self.samples
                .zones
                .entry((op, k, zone))
                .or_default()
                .push(Sample {
                    cycles,
                    ns: clock.map_or(f64::NAN, |c| c.span_ns(z.start_cycles, z.end_cycles)),
                });
        }
        let cpn = p
            .timebase
            .chips
            .get(&chip)
            .map_or(f64::NAN, |c| c.cycles_per_ns);
        for m in &view.marks {
            let MarkKind::Sum {
                total_cycles,
                count,
            } = m.kind
            else {
                continue;
            };
            let (op, k) = self.op_of(p, m.op, m.run);
            let zone = p.labels[m.site as usize].name.clone();
            self.samples
                .sums
                .entry((op, k, zone))
                .or_default()
                .push(SumSample {
                    total_cycles,
                    count,
                    ns: total_cycles as f64 / cpn,
                });
        }
        Ok(())
    }

    fn finish(&mut self, _: &Profile) -> Result<crate::sink::Finished> {
        Ok(crate::sink::Finished::default())
    }
}

/// The zones and sum zones of a `profile_log_device.csv`, read by the one device-log reader
/// ([`crate::import`]: `ZONE_START`/`ZONE_END` rows paired per RISC, innermost open zone of
/// the same name and run; `ZONE_TOTAL` rows as sum zones) and compared like any profile
/// ([`from_profile`]); ops are named by `names` ((chip, run id) -> op code and position), or
/// `run <id>`. Streamed: memory is the records, not the file's text. The file is noted in
/// `inputs`.
pub fn from_device_csv(
    path: &Path,
    names: &HashMap<(u32, u32), (String, u32)>,
    inputs: &Inputs,
) -> Result<Samples> {
    let (imported, mut rings) = crate::import::stream(path, None, inputs)?;
    let mut p = imported.profile;
    for o in p.ops.iter_mut() {
        if let Some((code, _)) = names.get(&(o.chip, o.run)) {
            o.name = code.clone();
        }
    }
    let mut s = from_profile_rings(&p, &mut rings)?;
    s.source = format!("device log {}", path.display());
    Ok(s)
}
