//! `ttprof run`'s specs as the fuzz targets drive them (feature `testing`; the `run_spec`
//! target of `fuzz/`): `--l1`, `--dram-in`, `--dram-out` and a manifest, parsed and checked
//! as [`super::Run::launch`] does before it builds anything (`plan`, less the kernels).
//! No file is read but the one the caller gives: every `@FILE` and `expect=FILE` is read as
//! it (an L1 input's bytes; a DRAM buffer's length only), a manifest's other paths lie under
//! a directory that does not exist, and its kernels are not built (a `CRATE_DIR:BINARY` is
//! only looked at, as `plan` does, for its `Cargo.toml`).

use super::super::check::{check_l1, run_buffers};
use super::{dram, manifest, manifest_op, spec};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::session::{check_grid, parse_arch, parse_grid, Backend, L1Input, Op};
use riscv_linker::Arch;
use std::path::Path;

/// Where a manifest's relative paths lie: a directory that does not exist.
const BASE: &str = "/nonexistent/ttprof-fuzz";

/// `--l1 SPEC` (an `ADDR=@FILE` reads `file`), then checked as an op's L1 input on every
/// arch and backend; the input, or the first error.
pub fn l1(spec: &str, file: &Path) -> Result<L1Input> {
    let spec = match spec.split_once('=') {
        Some((addr, value)) if value.starts_with('@') => format!("{addr}=@{}", file.display()),
        _ => spec.to_string(),
    };
    let input = spec::parse_l1(&spec, &Inputs::none())?;
    check_l1_input(&input)?;
    Ok(input)
}

/// `--dram-in SPEC` (`output`: `--dram-out`), then checked as `plan` checks it, on every
/// arch, with its op-report description; the buffer as debug text, or the first error.
pub fn dram(spec: &str, output: bool, file: &Path) -> Result<String> {
    let mut b = dram::parse(spec, output, Path::new(BASE))?;
    redirect(&mut b, file);
    let mut first = None;
    for arch in Arch::ALL {
        if let Err(e) = check_buffer(&b, arch, output) {
            first.get_or_insert(e);
        }
    }
    first.map_or_else(|| Ok(format!("{b:?}")), Err)
}

/// A manifest's `text` (`json`: JSON, else TOML), then every op planned as `plan` plans it
/// before its builds: arch and grid, tiles, runtime arguments, L1 inputs (`@FILE` reads
/// `file`), launches, DRAM buffers. The number of ops, or the first error.
pub fn manifest(text: &[u8], json: bool, file: &Path) -> Result<usize> {
    let name = if json { "ops.json" } else { "ops.toml" };
    let m = manifest::parse(&Path::new(BASE).join(name), text.to_vec())?;
    let arg = |what| Error::Argument { what };
    let arch = m.arch.as_deref().map(parse_arch).transpose().map_err(arg)?;
    let arch = arch.unwrap_or(Arch::WormholeB0);
    let grid = m.grid.as_deref().map(parse_grid).transpose().map_err(arg)?;
    let grid = grid.unwrap_or((1, 1));
    check_grid(arch, grid)?;
    let ops = m.ops.len();
    for o in m.ops {
        let plan = manifest_op(o, Path::new(BASE))?;
        for t in &plan.tiles {
            spec::parse_tile(t, arch, grid)?;
        }
        for (_, tile, _) in &plan.args {
            if let Some(t) = tile {
                spec::parse_tile(t, arch, grid)?;
            }
        }
        for s in &plan.l1 {
            l1(s, file)?;
        }
        if plan.launches == 0 {
            return Err(arg(format!("op {:?}: launches = 0", plan.name)));
        }
        for (buffers, output) in [(plan.dram_in, false), (plan.dram_out, true)] {
            for mut b in buffers {
                redirect(&mut b, file);
                check_buffer(&b, arch, output)?;
            }
        }
    }
    Ok(ops)
}

/// Every file a buffer names read as `file`.
fn redirect(b: &mut dram::Buffer, file: &Path) {
    for f in [&mut b.file, &mut b.expect].into_iter().flatten() {
        *f = file.to_path_buf();
    }
}

/// What `plan` checks of a DRAM buffer, and its op-report description.
fn check_buffer(b: &dram::Buffer, arch: Arch, output: bool) -> Result<()> {
    b.check(arch, output)?;
    let _ = b.tensor_desc(b.len(output)?);
    Ok(())
}

/// An L1 input checked as an op's on every arch, with and without the timestamper's
/// buffers.
fn check_l1_input(input: &L1Input) -> Result<()> {
    let op = Op::new("fuzz");
    let mut first = None;
    for arch in Arch::ALL {
        for backend in [Backend::Ring, Backend::Timestamper] {
            let buffers = run_buffers(arch, backend, None);
            if let Err(e) = check_l1(&op, input.addr, input.bytes.len(), arch, &buffers) {
                first.get_or_insert(e);
            }
        }
    }
    first.map_or(Ok(()), Err)
}
