//! Line-level cycles (`ttprof run --lines`): every emulated cycle of every core, by source
//! line, function (with inlined frames), op and cause.
//!
//! The emulator's lines mode ([`ttprof_emu::lines`]) charges each cycle a core's clock
//! advances to the instruction that advanced it and a `Cause`; per core and launch the
//! charges sum exactly to the core's cycles. This module adds up the cores of each op by
//! (op, RISC, kernel ELF) and pc, checks that sum per core, names every pc through the
//! kernel's DWARF (module `symbolize`), and writes:
//!
//! * `ttprof_lines.txt` (module `text`): per op and kernel, the hottest lines with cycles, share
//!   and causes, and the source around them with cycles per line (like `perf annotate`);
//! * `ttprof_cycles.folded` and `ttprof_flame.svg` (module `flame`): folded stacks
//!   (op; RISC; zone; outer function; ...; inlined function; file:line; cause) and their flame
//!   graph (`inferno`);
//! * `ttprof_lines.parquet` (module `table`): one row per (op, RISC, kernel, zone, pc, cause).
//!
//! Every cycle is also split by the innermost zone its core had open (module `zones`: the
//! emulator cuts the cycles at every clock read, which is what zones are timed with).

mod flame;
mod perfetto;
pub mod sample;
mod symbolize;
mod table;
mod text;
mod zones;

use crate::error::{Error, Result};
use crate::inputs::Inputs;
use riscv_linker::Risc;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
pub(crate) use ttprof_emu::lines::CAUSES;
use ttprof_emu::HartLines;

pub(crate) use zones::{ZoneMatch, NO_ZONE, SPLIT_DROPPED};

/// The hottest lines and the annotated source.
pub(crate) const LINES_FILE: &str = "ttprof_lines.txt";
/// Folded stacks.
pub(crate) const FOLDED_FILE: &str = "ttprof_cycles.folded";
/// The flame graph.
pub(crate) const FLAME_FILE: &str = "ttprof_flame.svg";
/// One row per pc and cause.
pub(crate) const PARQUET_FILE: &str = "ttprof_lines.parquet";

/// How a profile's counts are named in its files: exact cycles or daisychain samples.
pub(crate) struct Flavour {
    /// The count's name (the Parquet column, the flame graph's unit).
    pub count: &'static str,
    /// The name of cause index `i`.
    pub cause: fn(usize) -> &'static str,
    /// The flame graph's title.
    pub(crate) title: &'static str,
}

/// The exact profile's flavour.
const EXACT: Flavour = Flavour {
    count: "cycles",
    cause: cause_name,
    title: "ttprof --lines: emulated cycles",
};

/// Cycles per cause, in [`Cause`] index order.
pub(crate) type Causes = [u64; CAUSES];

/// What one kernel did in one op, summed over the tiles it ran on.
#[derive(Clone, Debug, Default)]
pub struct KernelCycles {
    /// Cores (tiles) that ran it.
    pub cores: u32,
    /// The cores' cycles, summed (each from leaving reset to halting).
    pub cycles: u64,
    /// Cycles per pc and cause, summed over the cores.
    pub(crate) pcs: BTreeMap<u32, Causes>,
    /// The same cycles by innermost zone (its name, `NO_ZONE` outside every zone), then pc
    /// and cause; empty until `LineProfile::split_by_zones` (and for sampled profiles).
    pub zones: BTreeMap<String, BTreeMap<u32, Causes>>,
}

impl KernelCycles {
    /// The rows by zone: `(Some(zone), rows)` per zone once split, else `(None, pcs)`.
    pub(crate) fn by_zone(&self) -> Vec<(Option<&str>, &BTreeMap<u32, Causes>)> {
        if self.zones.is_empty() {
            vec![(None, &self.pcs)]
        } else {
            self.zones
                .iter()
                .map(|(z, rows)| (Some(z.as_str()), rows))
                .collect()
        }
    }
}

/// Which op ran which kernel where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelKey {
    /// Launch order (the run id), then the op's name.
    pub run_id: u32,
    /// The op's name.
    pub op: String,
    /// The core the kernel ran on.
    pub risc: Risc,
    /// The kernel ELF (its copy under the output folder's `kernels/`).
    pub elf: PathBuf,
}

/// The line profile of a session: every launch's cores in lines mode.
#[derive(Clone, Debug, Default)]
pub struct LineProfile {
    /// Per op and kernel, in launch order.
    pub kernels: BTreeMap<KernelKey, KernelCycles>,
    /// Every core's launch, kept for the zone split (module `zones`).
    pending: Vec<zones::PendingCore>,
    /// What the zone split found (`None` before it).
    pub(crate) zone_match: Option<ZoneMatch>,
    /// Every core's launch in windows, for the Perfetto trace (filled by the zone split).
    windows: Vec<zones::CoreWindows>,
}

impl LineProfile {
    /// Adds one launch's cores. Errors if a core's charges do not sum to its cycles (the
    /// emulator's invariant; never expected).
    pub(crate) fn add_launch(&mut self, run_id: u32, op: &str, harts: &[HartLines]) -> Result<()> {
        for h in harts {
            let charged: u64 = h.rows.iter().flat_map(|(_, c)| c.iter()).sum();
            if charged != h.cycles {
                return Err(Error::Internal(format!(
                    "--lines: op {op:?} chip {} tile {} {}: {charged} cycles charged to lines but the core ran {} \
                     (an emulator accounting bug)",
                    h.chip, h.tile, h.risc, h.cycles
                )));
            }
            let key = KernelKey {
                run_id,
                op: op.to_string(),
                risc: h.risc,
                elf: PathBuf::from(&h.kernel),
            };
            self.pending.push(zones::PendingCore {
                key: key.clone(),
                chip: h.chip,
                tile: h.tile,
                risc: h.risc,
                rows: if h.segments.is_none() {
                    h.rows.clone()
                } else {
                    Vec::new()
                },
                segments: h.segments.clone(),
            });
            let k = self.kernels.entry(key).or_default();
            k.cores += 1;
            k.cycles += h.cycles;
            for (pc, c) in &h.rows {
                let row = k.pcs.entry(*pc).or_insert([0; CAUSES]);
                for (a, b) in row.iter_mut().zip(c) {
                    *a += b;
                }
            }
        }
        Ok(())
    }

    /// Names every pc and writes the files (module docs) into `dir`, none over one of
    /// `inputs`. Returns their paths.
    pub fn write(&self, dir: &Path, inputs: &Inputs) -> Result<Vec<PathBuf>> {
        let mut names = symbolize::Names::default();
        for key in self.kernels.keys() {
            names.load(&key.elf, self.kernels[key].pcs.keys().copied())?;
        }
        let mut written = Vec::new();
        let path = dir.join(LINES_FILE);
        let text = text::render(self, &names);
        crate::atomic::write_atomic(&path, inputs, |w| w.write_all(text.as_bytes()))?;
        written.push(path);
        written.extend(self.write_tables(
            dir,
            &names,
            [FOLDED_FILE, FLAME_FILE, PARQUET_FILE],
            &EXACT,
            inputs,
        )?);
        let trace = dir.join(crate::sink::perfetto::FILE_NAME);
        if !self.windows.is_empty() && trace.exists() {
            perfetto::append(&self.windows, &names, &trace, inputs)?;
        }
        Ok(written)
    }

    /// The folded stacks, the flame graph and the Parquet table, named `files`.
    fn write_tables(
        &self,
        dir: &Path,
        names: &symbolize::Names,
        files: [&str; 3],
        flavour: &Flavour,
        inputs: &Inputs,
    ) -> Result<Vec<PathBuf>> {
        let folded = flame::folded(self, names, flavour);
        let path = dir.join(files[0]);
        crate::atomic::write_atomic(&path, inputs, |w| w.write_all(folded.as_bytes()))?;
        let mut written = vec![path];
        let path = dir.join(files[1]);
        let svg = flame::svg(&folded, flavour)?;
        crate::atomic::write_atomic(&path, inputs, |w| w.write_all(&svg))?;
        written.push(path);
        let path = dir.join(files[2]);
        table::write(self, names, &path, flavour, inputs)?;
        written.push(path);
        Ok(written)
    }
}

/// The name of cause index `i` in the files: a [`Cause`]'s, or a TRISC held on its
/// coprocessor, `tensix-fifo: <wait>` / `ttsync: <wait>` ([`ttprof_emu::lines::cause_name`]).
pub(crate) fn cause_name(i: usize) -> &'static str {
    ttprof_emu::lines::cause_name(i)
}
