//! `ttprof run --program PROGRAM.toml`: a tt-metal program as a file, run on the emulator
//! with tt-metal's pre-compiled firmware, ttprof acting as tt-metal's slow-dispatch host
//! ([`ttprof_emu::tt_metal::program`]). The schema is documented in
//! docs/design/tt-metal-program.md; every path is relative to the program file, or to the
//! tt-metal root when it starts with `tt-metal:`.

mod file;

pub use file::*;

use crate::error::{Error, Result};
use crate::tt_metal_build::{self, CbFormat, TtMetalBuild};
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

/// What a program run did.
pub struct ProgramOutcome {
    /// The cores, in launch order.
    pub cores: Vec<(u8, u8)>,
    /// The buffers as placed.
    pub buffers: Vec<Placed>,
    /// The expected outputs that matched.
    pub matched: Vec<String>,
    /// The ones that did not.
    pub mismatches: Vec<Mismatch>,
    /// Cycles from the go messages to the last done (0 after a fault).
    pub kernel_cycles: u64,
    /// The kernel fault that ended the program (its outputs were then not checked).
    pub fault: Option<Error>,
    /// The firmware build run.
    pub firmware: String,
    /// Per kernel and core, what its ring held over the run.
    pub rings: Vec<RingCounts>,
    /// The profiling session's outputs (trace, summary, device CSV, ...).
    pub session: crate::session::FinishedSession,
}

/// What one kernel's ring on one core held after the run (read once, at the end).
#[derive(Clone, Debug)]
pub struct RingCounts {
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
    /// Records dropped (a full ring).
    pub dropped: u64,
}

/// Builds, runs and checks the program in `path` in a profiling session of tt-metal's
/// layout whose outputs go into `out` (kernels built into `out/kernels`); `guard` is the
/// command's input guard.
pub fn run(path: &Path, out: &Path, guard: &crate::inputs::Inputs) -> Result<ProgramOutcome> {
    let out_dir = out.join("kernels");
    let f = read(path)?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let arch = match f.arch.as_deref() {
        None | Some("wormhole_b0") => Arch::WormholeB0,
        Some(a) => {
            return Err(arg(format!(
                "arch {a:?}: tt-metal's firmware runs on the emulator for wormhole_b0 only"
            )))
        }
    };
    let cores = parse_cores(&f.cores)?;
    let buffers = place(&f, arch)?;
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
    let mut formats = Vec::new();
    for cb in &f.cbs {
        if let Some(fmt) = &cb.format {
            formats.push((cb.index, CbFormat::parse(fmt).map_err(arg)?));
        }
    }
    // Build every kernel, linked where the program's host writes it.
    let mut elves = Vec::new();
    for (i, k) in f.kernels.iter().enumerate() {
        let risc = crate::session::parse_risc(&k.risc)?;
        let source = resolve(&base, &k.source)?;
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
        b.name = format!("{}-{i}", b.name);
        b.out_dir = out_dir.join(&b.name);
        if risc == Risc::Brisc {
            b.text_base = Some(prog::brisc_text_base());
        }
        let elf = tt_metal_build::build(&b)?;
        let bytes = std::fs::read(&elf).map_err(|e| Error::io(&elf, "read the kernel", e))?;
        elves.push((risc, b.name.clone(), bytes, elf));
    }
    let mut kernels = Vec::new();
    for (k, (risc, name, bytes, _)) in f.kernels.iter().zip(&elves) {
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
                &buffers,
                arch,
                &format!("kernel {} args", k.source),
            )?);
        }
        kernels.push(ProgramKernel {
            risc: *risc,
            elf: bytes,
            name: name.clone(),
            args,
            common_args: resolve_args(&k.common_args, &buffers, arch, "common_args")?,
        });
    }
    let (gx, gy) = cores.iter().fold((1, 1), |(a, b), &(x, y)| {
        (a.max(x.saturating_add(1)), b.max(y.saturating_add(1)))
    });
    let noc: Vec<NocCoord> = cores
        .iter()
        .map(|&(x, y)| {
            arch.worker_noc(x, y).ok_or_else(|| Error::Address {
                what: format!("core {x},{y} is not a worker of {}", arch.name()),
            })
        })
        .collect::<Result<_>>()?;
    let mut cfg = crate::session::Config::new(arch, (gx, gy), out);
    cfg.layout = Layout::TtMetal;
    cfg.inputs = guard.clone();
    // A ring under tt-metal holds 1,920 bytes: drained at every look of the host.
    cfg.drain_every_cycles = ttprof_emu::tt_metal::dispatch::HOST_POLL_CYCLES;
    let mut session = crate::session::Session::start(cfg)?;
    let emu = |e: ttprof_emu::EmuError| Error::Emulator(e.to_string());
    for (data, p) in inputs.iter().zip(&buffers) {
        if let Some(data) = data {
            session.write_dram_interleaved(p.address, p.page_size, data)?;
        }
    }
    let root = tt_metal_build::root()?;
    let build = firmware_build();
    let fw = Firmware::open(&root, &build, arch).map_err(emu)?;
    let program = prog::Program {
        cores: noc,
        kernels,
        cbs: f
            .cbs
            .iter()
            .map(|c| CircularBuffer {
                index: c.index,
                page_size: c.page_size,
                pages: c.pages,
            })
            .collect(),
        semaphores: f.semaphores.clone(),
        host_assigned_id: f.id,
    };
    let name = path
        .file_stem()
        .map_or("program".into(), |n| n.to_string_lossy().into_owned());
    let op = crate::session::ProgramOp {
        name,
        program,
        elves: elves.iter().map(|(_, _, _, path)| path.clone()).collect(),
        firmware: &fw,
    };
    // A kernel fault ends the program, not the session: what the cores published before it
    // is still read and written, and the outputs are not checked.
    let (kernel_cycles, fault) = match session.launch_program(&op) {
        Ok((_, r)) => (r.kernel, None),
        Err(e @ Error::Fault { .. }) => (0, Some(e)),
        Err(e) => return Err(e),
    };
    let (mut matched, mut mismatches) = (Vec::new(), Vec::new());
    for (b, p) in f.buffers.iter().zip(&buffers) {
        if fault.is_some() || b.output.is_none() && b.expect.is_none() {
            continue;
        }
        let got = session.read_dram_interleaved(p.address, p.page_size, p.bytes as usize)?;
        if let Some(out) = &b.output {
            let file = base.join(out);
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
    let tiles = op.program.cores.clone();
    drop(op);
    let finished = session.finish()?;
    let mut rings = Vec::new();
    for (risc, name, bytes, _) in &elves {
        let sites = crate::elf::KernelElf::parse(Path::new(name), bytes)?.sites;
        for (&core, &tile) in cores.iter().zip(&tiles) {
            let ring = finished
                .readout
                .rings
                .iter()
                .find(|r| r.id.tile == tile && r.id.risc == *risc && r.id.chip == 0);
            rings.push(ring_counts(name, core, &sites, ring));
        }
    }
    Ok(ProgramOutcome {
        rings,
        cores,
        buffers,
        matched,
        mismatches,
        kernel_cycles,
        fault,
        firmware: build,
        session: finished,
    })
}

/// What a kernel's ring on one core held over the run, by site name (`ring`: its readout,
/// `None` when the kernel published nothing there).
fn ring_counts(
    name: &str,
    core: (u8, u8),
    sites: &crate::sites::SiteTable,
    ring: Option<&crate::readout::RingReport>,
) -> RingCounts {
    use crate::decode::RecordKind;
    let (mut zones, mut others) = (BTreeMap::new(), BTreeMap::new());
    let Some(r) = ring else {
        return RingCounts {
            kernel: name.to_string(),
            core,
            bytes: 0,
            zones,
            others,
            dropped: 0,
        };
    };
    for (kind, site) in r.records.kind().iter().zip(r.records.site()) {
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
        kernel: name.to_string(),
        core,
        bytes: r.payload_bytes as u32,
        zones,
        others,
        dropped: u64::from(r.dropped),
    }
}
