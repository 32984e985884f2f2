//! `ttprof run --program PROGRAM.toml`: a tt-metal program as a file, run on the emulator
//! with tt-metal's pre-compiled firmware, ttprof acting as tt-metal's slow-dispatch host
//! ([`ttprof_emu::tt_metal::program`]). The schema is documented in
//! docs/design/tt-metal-program.md; every path is relative to the program file, or to the
//! tt-metal root when it starts with `tt-metal:`.

mod file;

pub use file::*;

use crate::error::{Error, Result};
use crate::tt_metal_build::{self, CbFormat, TtMetalBuild};
use crate::util::undo::Undo;
use riscv_linker::{Arch, Layout, NocCoord, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use ttprof_emu::tt_metal::program::{self as prog, CircularBuffer, ProgramKernel};
use ttprof_emu::tt_metal::{firmware_build, Firmware};

/// What an output check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The buffer.
    pub buffer: String,
    /// The expected file.
    pub expect: PathBuf,
    /// The first differing byte, and the bytes there (got, expected).
    pub offset: u64,
    /// The device's byte and the file's.
    pub got: u8,
    /// The expected byte.
    pub want: u8,
}

/// What a program file's run did.
pub struct ProgramOutcome {
    /// Its programs, in launch order (up to the one that faulted).
    pub programs: Vec<ProgramDone>,
    /// The buffers as placed.
    pub buffers: Vec<Placed>,
    /// The expected outputs that matched.
    pub matched: Vec<String>,
    /// The ones that did not.
    pub mismatches: Vec<Mismatch>,
    /// The kernel fault that ended the programs (the outputs were then not checked).
    pub fault: Option<Error>,
    /// The firmware build run.
    pub firmware: String,
    /// Per program, kernel and core, what its ring held of that program's records.
    pub rings: Vec<RingCounts>,
    /// Records dropped over the run, every ring (a full ring).
    pub dropped: u64,
    /// The profiling session's outputs (trace, summary, device CSV, ...).
    pub session: crate::session::FinishedSession,
}

/// One program as run.
#[derive(Clone, Debug)]
pub struct ProgramDone {
    /// Its name (the op's).
    pub name: String,
    /// Its run id (tt-metal's program id, unless 0 or an earlier program's).
    pub run_id: u32,
    /// Its cores, logical, in launch order.
    pub cores: Vec<(u8, u8)>,
    /// Cycles from its go messages to its last done (`None`: it faulted).
    pub kernel_cycles: Option<u64>,
}

/// What one kernel's ring on one core held after the run (read once, at the end).
#[derive(Clone, Debug)]
pub struct RingCounts {
    /// The program's name.
    pub program: String,
    /// The kernel's name.
    pub kernel: String,
    /// The core, logical.
    pub core: (u8, u8),
    /// The ring's HEAD: bytes the kernel wrote.
    pub bytes: u32,
    /// Zones (plain and value zones) by site name.
    pub zones: BTreeMap<String, u64>,
    /// Events, data and sums by site name.
    pub others: BTreeMap<String, u64>,
    /// Records dropped in the ring over the run (a full ring; every program's).
    pub dropped: u64,
}

/// One program of the file, built: its kernels' ELFs and resolved arguments.
struct Built {
    name: String,
    id: u32,
    cores: Vec<(u8, u8)>,
    noc: Vec<NocCoord>,
    /// Per kernel: RISC, name, ELF bytes, ELF path, runtime arguments per core, common ones.
    kernels: Vec<BuiltKernel>,
    cbs: Vec<CircularBuffer>,
    semaphores: Vec<u32>,
}

struct BuiltKernel {
    risc: Risc,
    name: String,
    bytes: Vec<u8>,
    path: PathBuf,
    args: Vec<Vec<u32>>,
    common_args: Vec<u32>,
}

/// Builds every kernel of `spec` into `out_dir`, linked where the program's host writes it,
/// and resolves its runtime arguments against `buffers`.
fn build_program(
    spec: &ProgramSpec,
    base: &Path,
    out_dir: &Path,
    arch: Arch,
    buffers: &[Placed],
) -> Result<Built> {
    let cores = parse_cores(&spec.cores)?;
    // Before anything is built: a core that is not a worker is the file's mistake.
    let noc = cores
        .iter()
        .map(|&(x, y)| {
            arch.worker_noc(x, y).ok_or_else(|| Error::Address {
                what: format!("core {x},{y} is not a worker of {}", arch.name()),
            })
        })
        .collect::<Result<_>>()?;
    let mut formats = Vec::new();
    for cb in &spec.cbs {
        if let Some(fmt) = &cb.format {
            formats.push((cb.index, CbFormat::parse(fmt).map_err(arg)?));
        }
    }
    let mut kernels = Vec::new();
    let mut builds_of = Vec::new();
    for (i, k) in spec.kernels.iter().enumerate() {
        let compute = k.risc == "compute";
        if compute && arch != Arch::WormholeB0 {
            return Err(arg(format!(
                "kernel {}: compute kernels run on wormhole_b0 only: the coprocessor model \
                 follows Wormhole B0's configuration registers",
                k.source
            )));
        }
        let risc = if compute {
            Risc::Trisc0
        } else {
            crate::session::parse_risc(&k.risc)?
        };
        // A TRISC's part alone is compute code too: Blackhole's tt-llk writes configuration
        // words the model keeps at Wormhole B0's positions.
        if !compute && risc.is_trisc() && arch != Arch::WormholeB0 {
            return Err(arg(format!(
                "kernel {}: TRISC kernels run on wormhole_b0 only: the coprocessor model \
                 follows Wormhole B0's configuration registers",
                k.source
            )));
        }
        if !compute
            && (k.math_fidelity.is_some() || k.fp32_dest_acc || k.dst_full_sync || k.math_approx)
        {
            return Err(arg(format!(
                "kernel {}: math_fidelity, fp32_dest_acc, dst_full_sync and math_approx are a \
                 compute kernel's (risc = \"compute\")",
                k.source
            )));
        }
        let source = resolve(base, &k.source)?;
        for key in k.core_args.keys() {
            let c = parse_cores(std::slice::from_ref(key))?;
            if c.len() != 1 || !cores.contains(&c[0]) {
                return Err(arg(format!(
                    "kernel {}: core_args {key:?} is not one core of the program",
                    k.source
                )));
            }
        }
        let mut args = Vec::new();
        for &(x, y) in &cores {
            let own = k
                .core_args
                .iter()
                .find(|(key, _)| parse_cores(std::slice::from_ref(*key)).ok() == Some(vec![(x, y)]))
                .map_or(&k.args, |(_, v)| v);
            args.push(resolve_args(
                own,
                buffers,
                arch,
                &format!("kernel {} args", k.source),
            )?);
        }
        let common_args = resolve_args(&k.common_args, buffers, arch, "common_args")?;
        let mut b = TtMetalBuild::new(source, risc, arch);
        b.noc = k.noc;
        b.compile_args = k.compile_args.clone();
        b.named_args = k
            .named_compile_args
            .iter()
            .map(|(n, v)| (n.clone(), *v))
            .collect();
        b.defines = k.defines.clone();
        b.cb_formats = formats.clone();
        b.compute.math_fidelity = k.math_fidelity.unwrap_or(b.compute.math_fidelity);
        b.compute.fp32_dest_acc = k.fp32_dest_acc;
        b.compute.dst_full_sync = k.dst_full_sync;
        b.compute.approx = k.math_approx;
        b.name = format!("{}-{i}", b.name);
        b.out_dir = out_dir.join(&b.name);
        // A compute kernel is three: one per TRISC, each linked in its slot.
        let builds = if compute {
            tt_metal_build::per_trisc(&b)
        } else {
            vec![b]
        };
        for mut b in builds {
            // Wormhole's NCRISC kernel links in its instruction RAM (the build's default).
            b.text_base = match (b.risc, arch.ncrisc_iram()) {
                (Risc::Ncrisc, Some(_)) => None,
                (r, _) => Some(prog::text_base(arch, r)),
            };
            let path = tt_metal_build::build(&b)?;
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, "read the kernel", e))?;
            kernels.push(BuiltKernel {
                risc: b.risc,
                name: b.name.clone(),
                bytes,
                path,
                args: args.clone(),
                common_args: common_args.clone(),
            });
            builds_of.push(b);
        }
    }
    pack(arch, &mut kernels, &mut builds_of)?;
    Ok(Built {
        name: spec.name.clone().unwrap_or_default(),
        id: spec.id,
        cores,
        noc,
        kernels,
        cbs: spec
            .cbs
            .iter()
            .map(|c| CircularBuffer {
                index: c.index,
                page_size: c.page_size,
                pages: c.pages,
            })
            .collect(),
        semaphores: spec.semaphores.clone(),
    })
}

/// Links each of `kernels` (built from `builds`, in the same order) again where it lies with
/// the kernel configuration buffer packed by size (`program::packed_text_bases`), when that
/// is not where it was linked: BRISC's stays first, the others follow it. A kernel linked
/// again keeps its size (its calls reach as far either way); should one not, the places are
/// asked again, and what still does not fit is the emulator's check to refuse, by name.
fn pack(arch: Arch, kernels: &mut [BuiltKernel], builds: &mut [TtMetalBuild]) -> Result<()> {
    for _ in 0..3 {
        let program: Vec<ProgramKernel<'_>> = kernels
            .iter()
            .map(|k| ProgramKernel {
                risc: k.risc,
                elf: &k.bytes,
                name: k.name.clone(),
                args: Vec::new(),
                common_args: Vec::new(),
            })
            .collect();
        let bases =
            prog::packed_text_bases(arch, &program).map_err(|e| Error::Emulator(e.to_string()))?;
        let mut moved = false;
        for ((k, b), base) in kernels.iter_mut().zip(builds.iter_mut()).zip(bases) {
            let linked = match (k.risc, arch.ncrisc_iram()) {
                (Risc::Ncrisc, Some(_)) => continue,
                _ => b.text_base,
            };
            if linked != Some(base) {
                b.text_base = Some(base);
                k.path = tt_metal_build::relink(b)?;
                k.bytes =
                    std::fs::read(&k.path).map_err(|e| Error::io(&k.path, "read the kernel", e))?;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    Ok(())
}

/// Builds, runs and checks the programs in `path`, in order, in one profiling session of
/// tt-metal's layout whose outputs go into `out` (kernels built into `out/kernels`, under
/// each program's name when there are several); `guard` is the command's input guard.
///
/// An error before the session's outputs are written (a build that fails, an input or
/// output file that cannot be used, a launch the emulator refuses) removes what the run
/// created in `out` (the kernel builds, the op log, the device image, output files that
/// were not there) and leaves what was there (`util::undo`); a kernel fault is data,
/// not such an error.
pub fn run(
    path: &Path,
    out: &Path,
    guard: &crate::inputs::Inputs,
    counters: Option<&str>,
) -> Result<ProgramOutcome> {
    let mut undo = Undo::default();
    undo.note_tree(&out.join("kernels"));
    undo.note_file(&out.join(crate::session::OPLOG_FILE));
    undo.note_file(&out.join(crate::session::IMAGE_FILE));
    match launch(path, out, guard, counters, &mut undo) {
        Ok(staged) => finish(staged),
        Err(e) => Err(undo.undo(e)),
    }
}

/// A run whose programs have run (or stopped at a fault) and whose outputs were checked,
/// before its session's outputs are written.
struct Staged {
    session: crate::session::Session,
    built: Vec<Built>,
    programs: Vec<ProgramDone>,
    buffers: Vec<Placed>,
    matched: Vec<String>,
    mismatches: Vec<Mismatch>,
    fault: Option<Error>,
    build: String,
}

/// [`run`] up to the session's outputs; `undo` notes each output file before it is written.
fn launch(
    path: &Path,
    out: &Path,
    guard: &crate::inputs::Inputs,
    counters: Option<&str>,
    undo: &mut Undo,
) -> Result<Staged> {
    let out_dir = out.join("kernels");
    let mut f = read(path)?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let arch = match f.arch.as_deref() {
        None | Some("wormhole_b0") => Arch::WormholeB0,
        Some("blackhole") => Arch::Blackhole,
        Some(a) => {
            return Err(arg(format!(
                "arch {a:?}: tt-metal's firmware runs on wormhole_b0 and blackhole"
            )))
        }
    };
    // Checked before anything is built: a counter the emulator cannot count exits 1.
    let counters = counters
        .map(|spec| crate::session::counters::parse(spec, arch))
        .transpose()?
        .unwrap_or_default();
    let stem = path
        .file_stem()
        .map_or("program".into(), |n| n.to_string_lossy().into_owned());
    let specs = f.take_programs(&stem)?;
    // Every program's cores checked before anything is read or built.
    for s in &specs {
        parse_cores(&s.cores)?;
    }
    let root = tt_metal_build::root()?;
    let build = firmware_build(arch);
    let emu = |e: ttprof_emu::EmuError| Error::Emulator(e.to_string());
    let fw = Firmware::open(&root, &build, arch).map_err(emu)?;
    let (_, l1_banks) = prog::bank_counts(&fw).map_err(emu)?;
    let buffers = place(
        &f,
        arch,
        l1_banks,
        riscv_linker::tt_metal::l1_map(arch).kernel_config.end(),
    )?;
    // The inputs before any build: a wrong file costs no compile.
    let mut inputs = Vec::new();
    for (b, p) in f.buffers.iter().zip(&buffers) {
        let Some(input) = &b.input else {
            inputs.push(None);
            continue;
        };
        let file = resolve(&base, input)?;
        let data = read_limited(&file, &format!("input of buffer {}", b.name))?;
        if data.len() as u64 != p.bytes {
            return Err(Error::BadFile {
                path: file,
                what: format!(
                    "{} bytes, but buffer {} holds {} ({:?} of {})",
                    data.len(),
                    b.name,
                    p.bytes,
                    b.shape,
                    b.dtype
                ),
            });
        }
        inputs.push(Some(data));
    }
    // Every program built before any runs.
    let mut built = Vec::new();
    for s in &specs {
        let dir = match specs.len() {
            1 => out_dir.clone(),
            _ => out_dir.join(s.name.as_deref().unwrap_or_default()),
        };
        built.push(build_program(s, &base, &dir, arch, &buffers)?);
    }
    // The circular buffers lie below every L1 buffer, on every core.
    if let Some(low) = buffers.iter().filter(|p| p.l1).min_by_key(|p| p.address) {
        for b in &built {
            let end = prog::cbs_end(arch, &b.cbs);
            if end > low.address as u64 {
                return Err(arg(format!(
                    "program {}: its circular buffers end at {end:#x}, above L1 buffer {} at \
                     {:#x}",
                    b.name, low.name, low.address
                )));
            }
        }
    }
    // The grid: every program's cores, and the workers of the L1 banks the buffers use.
    let cols = arch.worker_grid().0;
    let l1_pages = buffers
        .iter()
        .filter(|p| p.l1)
        .map(|p| p.bytes.div_ceil(p.page_size as u64))
        .max()
        .unwrap_or(0)
        .min(l1_banks as u64) as u32;
    let l1_grid = (l1_pages > 0).then(|| {
        let cols = u32::from(cols);
        (l1_pages.min(cols) as u8, l1_pages.div_ceil(cols) as u8)
    });
    let (gx, gy) = built
        .iter()
        .flat_map(|b| b.cores.iter().copied())
        .chain(l1_grid.map(|(x, y)| (x - 1, y - 1)))
        .fold((1, 1), |(a, b), (x, y)| {
            (a.max(x.saturating_add(1)), b.max(y.saturating_add(1)))
        });
    let mut cfg = crate::session::Config::new(arch, (gx, gy), out);
    cfg.layout = Layout::TtMetal;
    cfg.inputs = guard.clone();
    cfg.counters = counters;
    // A ring under tt-metal holds 1,920 bytes: drained at every look of the host.
    cfg.drain_every_cycles = ttprof_emu::tt_metal::dispatch::HOST_POLL_CYCLES;
    let mut session = crate::session::Session::start(cfg)?;
    for (data, p) in inputs.iter().zip(&buffers) {
        match data {
            Some(data) if p.l1 => {
                session.write_l1_interleaved(l1_banks, p.address, p.page_size, data)?
            }
            Some(data) => session.write_dram_interleaved(p.address, p.page_size, data)?,
            None => {}
        }
    }
    // In order; a kernel fault ends the programs, not the session: what the cores published
    // before it is still read and written, and the outputs are not checked.
    let mut programs = Vec::new();
    let mut fault = None;
    for b in &built {
        let op = crate::session::ProgramOp {
            name: b.name.clone(),
            program: prog::Program {
                cores: b.noc.clone(),
                kernels: b
                    .kernels
                    .iter()
                    .map(|k| ProgramKernel {
                        risc: k.risc,
                        elf: &k.bytes,
                        name: k.name.clone(),
                        args: k.args.clone(),
                        common_args: k.common_args.clone(),
                    })
                    .collect(),
                cbs: b.cbs.clone(),
                semaphores: b.semaphores.clone(),
                host_assigned_id: b.id,
            },
            elves: b.kernels.iter().map(|k| k.path.clone()).collect(),
            firmware: &fw,
        };
        let mut done = ProgramDone {
            name: b.name.clone(),
            run_id: session.program_run_id(b.id),
            cores: b.cores.clone(),
            kernel_cycles: None,
        };
        match session.launch_program(&op) {
            Ok((_, r)) => {
                done.kernel_cycles = Some(r.kernel);
                programs.push(done);
            }
            Err(e @ Error::Fault { .. }) => {
                programs.push(done);
                fault = Some(e);
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let (mut matched, mut mismatches) = (Vec::new(), Vec::new());
    for (b, p) in f.buffers.iter().zip(&buffers) {
        if fault.is_some() || b.output.is_none() && b.expect.is_none() {
            continue;
        }
        let got = if p.l1 {
            session.read_l1_interleaved(l1_banks, p.address, p.page_size, p.bytes as usize)?
        } else {
            session.read_dram_interleaved(0, p.address, p.page_size, p.bytes as usize)?
        };
        if let Some(out) = &b.output {
            let file = base.join(out);
            undo.note_file(&file);
            crate::atomic::write_atomic(&file, guard, |w| std::io::Write::write_all(w, &got))?;
        }
        if let Some(expect) = &b.expect {
            let file = resolve(&base, expect)?;
            let want = read_limited(&file, &format!("expected output of buffer {}", b.name))?;
            let first = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .or_else(|| (got.len() != want.len()).then_some(got.len().min(want.len())));
            match first {
                None => matched.push(b.name.clone()),
                Some(at) => mismatches.push(Mismatch {
                    buffer: b.name.clone(),
                    expect: file,
                    offset: at as u64,
                    got: got.get(at).copied().unwrap_or(0),
                    want: want.get(at).copied().unwrap_or(0),
                }),
            }
        }
    }
    Ok(Staged {
        session,
        built,
        programs,
        buffers,
        matched,
        mismatches,
        fault,
        build,
    })
}

/// [`run`]'s end: the session's outputs, and what each ring held.
fn finish(staged: Staged) -> Result<ProgramOutcome> {
    let Staged {
        session,
        built,
        programs,
        buffers,
        matched,
        mismatches,
        fault,
        build,
    } = staged;
    let finished = session.finish()?;
    let mut rings = Vec::new();
    for (b, done) in built.iter().zip(&programs) {
        for k in &b.kernels {
            let sites = crate::elf::KernelElf::parse(Path::new(&k.name), &k.bytes)?.sites;
            for (&core, &tile) in b.cores.iter().zip(&b.noc) {
                let ring = finished
                    .readout
                    .rings
                    .iter()
                    .find(|r| r.id.tile == tile && r.id.risc == k.risc && r.id.chip == 0);
                rings.push(ring_counts(
                    &b.name,
                    &k.name,
                    core,
                    &sites,
                    ring,
                    done.run_id,
                ));
            }
        }
    }
    let dropped = finished
        .readout
        .rings
        .iter()
        .map(|r| u64::from(r.dropped))
        .sum();
    Ok(ProgramOutcome {
        rings,
        dropped,
        programs,
        buffers,
        matched,
        mismatches,
        fault,
        firmware: build,
        session: finished,
    })
}

/// What a kernel's ring on one core held over the run, by site name (`ring`: its readout,
/// `None` when the kernel published nothing there).
fn ring_counts(
    program: &str,
    name: &str,
    core: (u8, u8),
    sites: &crate::sites::SiteTable,
    ring: Option<&crate::readout::RingReport>,
    run_id: u32,
) -> RingCounts {
    use crate::decode::RecordKind;
    let (mut zones, mut others) = (BTreeMap::new(), BTreeMap::new());
    let Some(r) = ring else {
        return RingCounts {
            program: program.to_string(),
            kernel: name.to_string(),
            core,
            bytes: 0,
            zones,
            others,
            dropped: 0,
        };
    };
    let records = r
        .records
        .kind()
        .iter()
        .zip(r.records.site())
        .zip(r.records.runs());
    for ((kind, site), run) in records {
        // The program's own records: a core that ran several holds all of theirs.
        if run != run_id {
            continue;
        }
        let name = || {
            sites
                .get(*site)
                .map_or_else(|| format!("site {site}"), |m| m.name.clone())
        };
        match kind {
            RecordKind::Zone | RecordKind::ValueZone => *zones.entry(name()).or_insert(0) += 1,
            RecordKind::Event | RecordKind::Data | RecordKind::Sum => {
                *others.entry(name()).or_insert(0) += 1
            }
            _ => {}
        }
    }
    RingCounts {
        program: program.to_string(),
        kernel: name.to_string(),
        core,
        bytes: r.payload_bytes as u32,
        zones,
        others,
        dropped: u64::from(r.dropped),
    }
}
