//! The ttprof demo: build the example kernels, run a sequence of ops on the emulator with a
//! consumer draining the rings while the kernels run, check every op's output, then write
//! tt-metal's `profile_log_device.csv` and print a per-zone summary.

mod ops;
mod session;

use clap::Parser;
use riscv_linker::Arch;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the example kernels on the emulator and profile them.
#[derive(Parser, Debug)]
#[command(version)]
pub struct Args {
    /// Chip architecture: wormhole_b0 or blackhole.
    #[arg(long, default_value = "wormhole_b0", value_parser = parse_arch)]
    pub arch: Arch,
    /// Worker grid used, COLSxROWS.
    #[arg(long, default_value = "2x2", value_parser = parse_grid)]
    pub grid: (u8, u8),
    /// Tiles each core streams per op.
    #[arg(long, default_value_t = 4)]
    pub tiles: u32,
    /// Output directory (default: target/ttprof-demo in the workspace).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Host threads for the emulator (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    Arch::from_name(s).ok_or_else(|| format!("unknown arch {s:?}: use wormhole_b0 or blackhole"))
}

fn parse_grid(s: &str) -> Result<(u8, u8), String> {
    let (c, r) = s.split_once(['x', 'X']).ok_or_else(|| format!("grid {s:?} is not COLSxROWS"))?;
    let n = |v: &str| v.trim().parse::<u8>().map_err(|e| format!("grid {s:?}: {e}"));
    Ok((n(c)?, n(r)?))
}

/// The workspace root (the demo lives in examples/demo).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap_or_else(|_| PathBuf::from("."))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match session::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ttprof-demo: error: {e}");
            ExitCode::FAILURE
        }
    }
}
